#!/bin/sh
# bench/device_env.sh — sourced (`. bench/device_env.sh`) on the device machine from the
# repository root with build-perf/ carried (bench/device_bundle.sh made it): unpacks oneDNN and
# points the runtime at the carried Sleef, oneDNN and the OpenBLAS core cpuid names, so that
# build-perf/minibench-portable, bench/vs_torch.py (bench/device_run.sh) and any other command
# after it run as figure 5 does. Every module is compiled there (cc -march=native).
b=$PWD/build-perf
for z in "$b"/lib/*.xz; do [ -e "$z" ] && xz -d -f "$z"; done
for l in "$b"/lib/libdnnl.so.[0-9]*; do [ -e "$l" ] && ln -sf "$(basename "$l")" "$b/lib/libdnnl.so"; done
[ -e "$b/lib/libsleef.so.3" ] && ln -sf libsleef.so.3 "$b/lib/libsleef.so"
export LD_LIBRARY_PATH="$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MINDUCTOR_SLEEF_DIR="$b/lib" MINDUCTOR_BLAS_CORETYPE=cpuid
export MINDUCTOR_CFLAGS="-I$b/dnnl -L$b/lib"
