#!/bin/sh
# survey_kernels.sh — kernel parity with Inductor (issue #21) on any TORCH_TRACE logs, the way
# survey_logs.sh surveys the passes: for each compiled graph, the number of kernels Inductor
# generated (definitions of cpp_fused_* / triton_* in the log's inductor_output_code, with cpp_wrapper
# the extern "C" cpp_fused_* functions of its C++ source; extern calls
# excluded, a kernel defined once and called twice counts once) against the kernels `sched` here
# defines (extern and fallback calls, nop nodes (a CPU ConcatKernel) and kernels marked "[same source as kernel N" left out;
# a cond's branch kernels, listed under "  subgraph", count too: Inductor defines them in the same output code). One line per graph ("same" or "differs: ours N, Inductor M"), then the count.
#   tests/tools/survey_kernels.sh DIR [MINDUCTOR]
dir=${1:?usage: survey_kernels.sh DIR [MINDUCTOR]}
bin=${2:-./minductor}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0; same=0
for log in $(find "$dir" -name '*.log' | sort); do
    b=$(basename "$log" .log)
    case $b in dedicated_log_torch_trace_*) b=$(basename "$(dirname "$log")") ;; esac
    rm -rf "$tmp/tl"
    "$bin" tlparse "$log" -p -o "$tmp/tl" --no-browser >/dev/null 2>&1
    for cid in $("$bin" -q -c "load $log" 2>&1 | awk '$1 ~ /^[0-9]+\/[0-9]+(_[0-9]+)?$/ && /has a graph/ {print $1}'); do
        d=$(printf '%s' "$cid" | sed 's|/|_|g')
        codes=$(ls "$tmp"/tl/-_"$d"_0/inductor_output_code_*.txt 2>/dev/null | awk -F_ '{print $NF"\t"$0}' | sort -n | cut -f2)
        # forward and backward of a compile are on one device: ask once
        dev=""; "$bin" -q -c "load $log $cid" 2>&1 | grep -q '^  on cuda:' && dev="set device cuda; "
        k=0
        for code in $codes; do
            k=$((k + 1))
            part=""; [ $k = 2 ] && part=" backward"
            # with cpp_wrapper (CppWrapperCpu) the C++ source holds the kernels: each cpp_fused_*
            # declared, then defined, as extern "C" void NAME(; a name counts once
            theirs=$(( $(grep -c '^cpp_fused_[A-Za-z0-9_]* = async_compile\|^triton_[A-Za-z0-9_]* = async_compile' "$code") +
                       $(grep -o '^extern "C" *void *cpp_fused_[A-Za-z0-9_]*(' "$code" | sort -u | wc -l) ))
            ours=$("$bin" -q -c "${dev}load $log $cid$part; run; lower; sched" 2>/dev/null |
                   awk '/^  subgraph / {insub = 1; on = 0; next} insub && /^      [a-z]/ && $1 !~ /(^|_)(extern|fallback|nop)_/ && !/\[same source as kernel/ {c++; next} insub && !/^      / {insub = 0} /kernels? \(fusion/ {on = 1; next} on && /^  [a-z]/ && $1 !~ /^(extern|fallback|nop)_/ && !/\[same source as kernel/ {c++} on && !/^  / {on = 0} END {print c + 0}')
            n=$((n + 1))
            if [ "$ours" = "$theirs" ]; then same=$((same + 1)); echo "same     $b $cid$part ($ours)"
            else echo "differs  $b $cid$part: ours $ours, Inductor $theirs"; fi
        done
    done
done
echo "$same of $n graphs: as many kernels as Inductor generated"
