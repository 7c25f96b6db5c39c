#!/bin/sh
# bench/device_run.sh — figure 5 on the device machine (its CPU, torch there), from the
# repository root with build-perf/ carried (bench/device_bundle.sh made it here): sets up the
# carried libraries (bench/device_env.sh) and runs bench/vs_torch.py at 16 and 2 threads
# ($THREADS), with $VS_TORCH_ARGS added (e.g. --small-pages, --workloads a,b); results and the
# whole log go to $OUT (else bench/results).
set -e
out=${OUT:-bench/results}
. bench/device_env.sh
python3 bench/vs_torch.py --threads "${THREADS:-16,2}" --minibench "$b/minibench-portable" --out "$out" $VS_TORCH_ARGS 2>&1 | tee "$out/vs_torch.log"
