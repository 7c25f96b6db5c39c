#!/bin/sh
# survey_exec.sh — every recorded torch-case graph through the CPU pipeline: for each graph
# directory of ../shared/torch-cases (or $1), `load pre_post_grad.py; run; inputs DIR; exec 1`
# (passes, lower, schedule, generate C, compile, run on the recorded inputs, compare with the
# reference interpreter). Prints one line per graph (ok, or the error's last line) and the count.
#   tests/tools/survey_exec.sh [CASES_DIR] [MINDUCTOR]
root=${1:-../shared/torch-cases}
bin=${2:-./minductor}
n=0; okc=0
for d in "$root"/*/*/graph*; do
    [ -f "$d/pre_post_grad.py" ] || continue
    n=$((n + 1))
    out=$(timeout 300 "$bin" -c "load $d/pre_post_grad.py; run; inputs $d; exec 1" 2>&1 | tail -1)
    case "$out" in
        "exec: ok") okc=$((okc + 1)); echo "ok    ${d#$root/}" ;;
        *) echo "FAIL  ${d#$root/}: $out" ;;
    esac
done
echo "$okc of $n graphs exec on the CPU and agree with the interpreter"
