#!/bin/sh
# bench/device_bundle.sh — build-perf/: what figure 5 (bench/vs_torch.py) needs on the device
# machine beside the working tree, small enough for the device tool's carry (the tree and the
# build directories together are over its 64 MiB):
#   build-perf/minibench-portable   generic x86-64-v2 minibench (make -C bench portable), linked
#                                   against a library built with Sleef and oneDNN but without
#                                   LAPACKE / FFTW / GSL (the device lacks them; no workload uses them)
#   build-perf/lib/                 libcjson, libmd, libsleef (+ sleef.h, both xz-compressed) that machine may lack, and
#                                   oneDNN's libdnnl.so.2 xz-compressed (40 MB -> a few)
#   build-perf/dnnl/oneapi/         oneDNN's headers, for the modules compiled there
# Run from the repository root:  sh bench/device_bundle.sh
# The device tool sends the checkout the session was started in, not a helper's worktree: a
# helper copies build-perf/ there (it is ignored, /build*/). Then, device tool, carry
# ["build-perf"] (the command bench/README.md "Latest results" records):
#   sh bench/device_run.sh      -> $OUT/vs_torch-<date>.{md,jsonl} and $OUT/vs_torch.log
set -e
make BUILD=build-port NUM_CFLAGS="-DHAVE_SLEEF -DHAVE_DNNL" NUM_LIBS= -j2 build-port/libminductor.a build-port/libtestsupport.a
make -C bench BUILD=build-port NUM_LIBS= portable
rm -rf build-perf
mkdir -p build-perf/lib build-perf/dnnl
cp bench/build/minibench-portable build-perf/
cp bench/build/lib/* build-perf/lib/
inc=/usr/include/oneapi
[ -d "$inc" ] || { echo "device_bundle: no oneDNN headers in /usr/include/oneapi" >&2; exit 1; }
cp -r "$inc" build-perf/dnnl/
lib=$(ldconfig -p | awk '/libdnnl\.so\.[0-9]+ / {print $NF; exit}')
[ -n "$lib" ] || { echo "device_bundle: no libdnnl.so.N found by ldconfig" >&2; exit 1; }
xz -T2 -c "$(readlink -f "$lib")" > "build-perf/lib/$(basename "$lib").xz"
# Sleef and its header compressed too (bench/device_env.sh unpacks every lib/*.xz): the tracked tree
# is 54 MB of the device tool's 64 MiB
for f in build-perf/lib/libsleef.so.3 build-perf/lib/sleef.h; do [ -e "$f" ] && xz -9 -f "$f"; done
rm -f build-perf/lib/libsleef.so
du -sh build-perf
