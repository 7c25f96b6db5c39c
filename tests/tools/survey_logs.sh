#!/bin/sh
# survey_logs.sh — every graph of every TORCH_TRACE log under DIR through the workbench, as a user
# with a log from their own model would: for each compile with a graph, the forward (or inference)
# and, when logged, the backward: load; inputs random; run (the post-grad passes); the result's
# text against the log's inductor_post_grad_graph (#1 forward / inference, #2 backward); check
# (passes keep the numerics); exec 1 (compiled C agrees with the interpreter). One line per graph.
#   tests/tools/survey_logs.sh DIR [MINDUCTOR]
dir=${1:?usage: survey_logs.sh DIR [MINDUCTOR]}
bin=${2:-./minductor}
n=0; okc=0; same=0
for log in $(find "$dir" -name '*.log' | sort); do
    # a compile Dynamo restarted (e.g. TensorifyScalarRestartAnalysis) never reached Inductor: its
    # retry (the _1 id) is the graph Inductor compiled
    for cid in $("$bin" -q -c "load $log" 2>&1 | awk '$1 ~ /^[0-9]+\/[0-9]+(_[0-9]+)?$/ && /has a graph/ && $2 != "restarted:" {print $1}'); do
        k=0
        for part in "" " backward"; do
            k=$((k + 1))
            loaded=$("$bin" -q -c "load $log $cid$part" 2>&1)
            has=$(printf '%s\n' "$loaded" | grep -c '^loaded')
            b=$(basename "$log" .log)
            case $b in dedicated_log_torch_trace_*) b=$(basename "$(dirname "$log")") ;; esac   # TORCH_TRACE's own name
            name="$b $cid${part:+ backward}"
            # the listing said the compile has a graph: a forward that does not load is a failure
            # (a compile without a backward has nothing to load for " backward")
            if [ "$has" != 1 ] && [ -z "$part" ]; then
                n=$((n + 1))
                echo "FAIL  $name (does not load): $(printf '%s\n' "$loaded" | grep -m1 'error' | cut -c1-300)"
                continue
            fi
            [ "$has" = 1 ] || continue
            if [ -n "$part" ] && "$bin" -q -c "load $log $cid" 2>&1 | grep -q "(inference)"; then continue; fi
            theirs=$("$bin" -q -c "load $log $cid inductor_post_grad_graph#$k; graph" 2>/dev/null | sed -n '/^class /,$p')
            [ -n "$theirs" ] || [ $k = 2 ] || theirs=$("$bin" -q -c "load $log $cid inductor_post_grad_graph; graph" 2>/dev/null | sed -n '/^class /,$p')
            [ -n "$theirs" ] || [ $k = 1 ] || continue   # a backward Inductor never compiled (no backward call)
            n=$((n + 1))
            out=$(timeout 300 "$bin" -q -c "load $log $cid$part; inputs random; run; check; exec 1" 2>&1)
            ours=$("$bin" -q -c "load $log $cid$part; run; graph" 2>/dev/null | sed -n '/^class /,$p')
            text="post-grad differs"; [ "$ours" = "$theirs" ] && { text="post-grad exact"; same=$((same + 1)); }
            case "$out" in
                *"exec: ok"*) okc=$((okc + 1)); echo "ok    $name ($text)" ;;
                *) echo "FAIL  $name ($text): $(printf '%s\n' "$out" | grep -m1 'error' | cut -c1-300)" ;;
            esac
        done
    done
done
echo "$okc of $n graphs check and exec; $same of $n give PyTorch's post-grad text exactly"
