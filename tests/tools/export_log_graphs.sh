#!/bin/sh
# export_log_graphs.sh — every graph Inductor compiled in the TORCH_TRACE logs under DIR, saved as
# FX text (the graph as `load` gives it, before the post-grad passes) into OUTDIR, one file per
# graph: OUTDIR/LOGNAME_CID[_backward].py. With --cuda only the logs of GPU runs (cuda_* names).
# For the device machine: `cudabench graphs OUTDIR` then runs each on the GPU against the
# interpreter (bench/cuda/run_unseen.sh).
#   tests/tools/export_log_graphs.sh DIR OUTDIR [--cuda] [MINDUCTOR]
dir=${1:?usage: export_log_graphs.sh DIR OUTDIR [--cuda] [MINDUCTOR]}
out=${2:?usage: export_log_graphs.sh DIR OUTDIR [--cuda] [MINDUCTOR]}
only=""; [ "$3" = "--cuda" ] && { only=cuda; shift; }
bin=${3:-./minductor}
mkdir -p "$out"
n=0
for log in $(find "$dir" -name '*.log' | sort); do
    b=$(basename "$log" .log)
    case $b in dedicated_log_torch_trace_*) b=$(basename "$(dirname "$log")") ;; esac
    case "$only:$b" in cuda:cuda_*|:*) ;; *) continue ;; esac
    for cid in $("$bin" -q -c "load $log" 2>&1 | awk '$1 ~ /^[0-9]+\/[0-9]+(_[0-9]+)?$/ && /has a graph/ {print $1}'); do
        for part in "" " backward"; do
            "$bin" -q -c "load $log $cid$part" 2>&1 | grep -q '^loaded' || continue
            if [ -n "$part" ] && "$bin" -q -c "load $log $cid" 2>&1 | grep -q "(inference)"; then continue; fi
            f="$out/${b}_$(echo "$cid" | tr '/' '_')${part:+_backward}.py"
            "$bin" -q -c "load $log $cid$part; save graph $f" >/dev/null 2>&1 && [ -s "$f" ] && n=$((n + 1))
        done
    done
done
echo "$n graphs saved in $out"
