#!/bin/sh
# build.sh — build build-cudadev/cudabench (bench/cuda/cudabench.c linked with the library) and
# copy beside it, in build-cudadev/lib, the shared libraries a bare device machine may lack.
# Run from the repository root here; carry build-cudadev to the device (bench/cuda/run_device.sh).
set -e
# Built without BLAS (the GPU runs the matmuls; the CPU reference has its own loops): OpenBLAS
# alone is 36 MB, over half of what a device call may carry. Likewise without LAPACKE, FFTW
# and GSL (ops that need them refuse, naming the library).
B=${BUILD:-build-cudadev}
make BUILD=$B BLAS_CFLAGS= BLAS_LIBS= NUM_CFLAGS= NUM_LIBS= -j2 $B/libminductor.a $B/libtestsupport.a >/dev/null
cfg() { sed -n "s/^$1 = //p" config.mk; }
cc -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -I. -Icore \
   $(cfg CJSON_CFLAGS) -fopenmp -o $B/cudabench bench/cuda/cudabench.c \
   $B/libtestsupport.a $B/libminductor.a $(cfg GV_LIBS) $(cfg CJSON_LIBS) $(cfg MD_LIBS) -fopenmp -ldl -lm -lpthread
rm -rf $B/lib; mkdir -p $B/lib
for l in $(ldd $B/cudabench | awk '/=>/ {print $3}'); do
    case $(basename $l) in libc.so*|libm.so*|libdl.so*|libpthread.so*|ld-linux*) ;; *) cp -L $l $B/lib/ ;; esac
done
ls $B/lib
