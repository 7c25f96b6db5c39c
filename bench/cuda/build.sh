#!/bin/sh
# build.sh — build build-cudadev/cudabench (bench/cuda/cudabench.c linked with the library) and
# copy beside it, in build-cudadev/lib, the shared libraries a bare device machine may lack.
# Run from the repository root here; carry build-cudadev to the device (bench/cuda/run_device.sh).
set -e
# Built without BLAS (the GPU runs the matmuls; the CPU reference has its own loops): OpenBLAS
# alone is 36 MB, over half of what a device call may carry. LAPACKE comes with the reference
# LAPACK and BLAS (Debian's liblapack3 / libblas3 under lapack/ and blas/, 7.8 MB with gfortran's
# runtime) instead of OpenBLAS's, so QR / eigh / svd graphs run on the GPU machine too; GSL
# (3 MB) and FFTW (2.2 MB) stay: the FFTs of real models (Hyena, FNO, mel spectrograms) run as host
# round trips through FFTW, on the GPU as in a user's build. A library configure did not find is
# left out (ops that need it refuse, naming the library).
B=${BUILD:-build-cudadev}
ML=/usr/lib/x86_64-linux-gnu
NUM_F=; NUM_L=; REF_PATH=
has() { grep -q -- "-DHAVE_$1" config.mk 2>/dev/null; }
if has LAPACKE && [ -e $ML/lapack/liblapack.so.3 ] && [ -e $ML/blas/libblas.so.3 ]; then
    NUM_F="$NUM_F -DHAVE_LAPACKE -I/usr/include/x86_64-linux-gnu"
    NUM_L="$NUM_L $ML/liblapacke.a -L$ML/lapack -L$ML/blas -llapack -lblas"
    REF_PATH=$ML/lapack:$ML/blas
fi
has FFTW && { NUM_F="$NUM_F -DHAVE_FFTW"; NUM_L="$NUM_L -lfftw3"; }
has GSL && { NUM_F="$NUM_F -DHAVE_GSL"; NUM_L="$NUM_L -lgsl -lgslcblas"; }
# the objects that test these flags must be rebuilt when they change (make does not track flags)
[ -f $B/.num_flags ] && [ "$(cat $B/.num_flags)" = "$NUM_F" ] || rm -rf $B/core/ops
mkdir -p $B; echo "$NUM_F" > $B/.num_flags
make BUILD=$B BLAS_CFLAGS= BLAS_LIBS= NUM_CFLAGS="$NUM_F" NUM_LIBS="$NUM_L" -j2 $B/libminductor.a $B/libtestsupport.a >/dev/null
cfg() { sed -n "s/^$1 = //p" config.mk; }
cc -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -I. -Icore \
   $(cfg CJSON_CFLAGS) -fopenmp -o $B/cudabench bench/cuda/cudabench.c \
   $B/libtestsupport.a $B/libminductor.a $(cfg GV_LIBS) $(cfg CJSON_LIBS) $(cfg MD_LIBS) $NUM_L -lm -fopenmp -ldl -lm -lpthread
rm -rf $B/lib; mkdir -p $B/lib
# ldd through the reference LAPACK / BLAS, not the alternatives' OpenBLAS ones
for l in $(LD_LIBRARY_PATH=$REF_PATH ldd $B/cudabench | awk '/=>/ {print $3}'); do
    case $(basename $l) in libc.so*|libm.so*|libdl.so*|libpthread.so*|ld-linux*) ;; *) cp -L $l $B/lib/ ;; esac
done
# the libraries xz-compressed for the device tool's carry (the tracked tree is 54 MB of its 64 MiB):
# carry $B/lib.tar.xz, and on the device `tar xJf $B/lib.tar.xz -C $B` before using $B/lib
tar cJf $B/lib.tar.xz -C $B lib
ls $B/lib; du -h $B/lib.tar.xz
