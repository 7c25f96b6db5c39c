#!/bin/sh
# bench/device_run.sh — figure 5 on the device machine (its CPU, torch there), from the
# repository root with build-perf/ carried (bench/device_bundle.sh made it here): unpacks oneDNN,
# points the runtime at the carried Sleef, oneDNN and the OpenBLAS core cpuid names, and runs
# bench/vs_torch.py at 16 and 2 threads; results and the whole log go to $OUT (else
# bench/results). Every module is compiled there (cc -march=native).
set -e
out=${OUT:-bench/results}
b=$PWD/build-perf
for z in "$b"/lib/*.xz; do [ -e "$z" ] && xz -d -f "$z"; done
for l in "$b"/lib/libdnnl.so.[0-9]*; do [ -e "$l" ] && ln -sf "$(basename "$l")" "$b/lib/libdnnl.so"; done
export LD_LIBRARY_PATH="$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MINDUCTOR_SLEEF_DIR="$b/lib" MINDUCTOR_BLAS_CORETYPE=cpuid
export MINDUCTOR_CFLAGS="-I$b/dnnl -L$b/lib"
python3 bench/vs_torch.py --threads "${THREADS:-16,2}" --minibench "$b/minibench-portable" --out "$out" 2>&1 | tee "$out/vs_torch.log"
