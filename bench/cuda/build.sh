#!/bin/sh
# build.sh — build build-cudadev/cudabench (bench/cuda/cudabench.c linked with the library) and
# copy beside it, in build-cudadev/lib, the shared libraries a bare device machine may lack.
# Run from the repository root here; carry build-cudadev to the device (bench/cuda/run_device.sh).
set -e
# Built without BLAS (the GPU runs the matmuls; the CPU reference has its own loops): OpenBLAS
# alone is 36 MB, over half of what a device call may carry. Likewise without LAPACKE and GSL
# (ops that need them refuse, naming the library). FFTW stays (2.2 MB): the FFTs of real models
# (Hyena, FNO, mel spectrograms) run as host round trips through it, on the GPU as in a user's build.
B=${BUILD:-build-cudadev}
FFT_CFLAGS=; FFT_LIBS=
grep -q -- '-DHAVE_FFTW' config.mk 2>/dev/null && { FFT_CFLAGS=-DHAVE_FFTW; FFT_LIBS=-lfftw3; }
# ops_fft.o must be rebuilt when the flag changes (make does not track flags)
[ -f $B/.fft_flags ] && [ "$(cat $B/.fft_flags)" = "$FFT_CFLAGS" ] || rm -f $B/core/ops/ops_fft.o
mkdir -p $B; echo "$FFT_CFLAGS" > $B/.fft_flags
make BUILD=$B BLAS_CFLAGS= BLAS_LIBS= NUM_CFLAGS="$FFT_CFLAGS" NUM_LIBS="$FFT_LIBS" -j2 $B/libminductor.a $B/libtestsupport.a >/dev/null
cfg() { sed -n "s/^$1 = //p" config.mk; }
cc -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -I. -Icore \
   $(cfg CJSON_CFLAGS) -fopenmp -o $B/cudabench bench/cuda/cudabench.c \
   $B/libtestsupport.a $B/libminductor.a $(cfg GV_LIBS) $(cfg CJSON_LIBS) $(cfg MD_LIBS) $FFT_LIBS -fopenmp -ldl -lm -lpthread
rm -rf $B/lib; mkdir -p $B/lib
for l in $(ldd $B/cudabench | awk '/=>/ {print $3}'); do
    case $(basename $l) in libc.so*|libm.so*|libdl.so*|libpthread.so*|ld-linux*) ;; *) cp -L $l $B/lib/ ;; esac
done
ls $B/lib
