#!/bin/bash
# run_ab.sh — one device call comparing a baseline build of cudabench with the current one on
# the same GPU (issue 18's CUDA reductions): every bench/graphs workload with the baseline, the
# current code (PDL on), the current code with MINDUCTOR_CUDA_PDL=0, both again; the recorded
# cuda cases (correctness vs PyTorch); the reduction labs of both trees (--quick unless LAB_ARGS
# says otherwise); then vs_triton.py on the current code (VS_TRITON=0: not). Run from the
# repository root on the device; P names the carried folder holding cudabench, lib/,
# base/cudabench (the baseline), labs.tar.xz (lab_old, lab_new: bench/cuda/reduction_lab.cu built
# on each tree's generated code) and cache.tar.xz (a MINDUCTOR_CACHE filled here with
# MINDUCTOR_NVCC=/usr/local/cuda/bin/nvcc MINDUCTOR_NVCC_FLAGS=-arch=sm_90: nvcc runs there only
# for what is missing).
P=${P:-build-cudared}
OUT=${OUT:-/tmp/about}
mkdir -p $OUT /tmp/mi-cache
export LD_LIBRARY_PATH=$PWD/$P/lib:$LD_LIBRARY_PATH MINDUCTOR_NVCC_FLAGS=-arch=sm_90
export MINDUCTOR_NVCC=/usr/local/cuda/bin/nvcc MINDUCTOR_CACHE=/tmp/mi-cache
[ -x $MINDUCTOR_NVCC ] || { mkdir -p /usr/local/cuda/bin && ln -sf "$(command -v nvcc)" $MINDUCTOR_NVCC; }
[ -f $P/cache.tar.xz ] && tar xJf $P/cache.tar.xz -C /tmp/mi-cache --strip-components=1
[ -f $P/labs.tar.xz ] && tar xJf $P/labs.tar.xz -C $P
. bench/cuda/find_cublas.sh
{
    date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
    echo "== baseline"; $P/base/cudabench bench bench/graphs --reps 50 --json $OUT/base.jsonl
    echo "== current (PDL on)"; $P/cudabench bench bench/graphs --reps 50 --json $OUT/ours.jsonl
    echo "== current, MINDUCTOR_CUDA_PDL=0"; MINDUCTOR_CUDA_PDL=0 $P/cudabench bench bench/graphs --reps 50 --no-check
    echo "== baseline again"; $P/base/cudabench bench bench/graphs --reps 50 --no-check
    echo "== current again"; $P/cudabench bench bench/graphs --reps 50 --no-check
} > $OUT/bench.log 2>&1
{
    $P/cudabench cases tests/fixtures/torch-cases/cuda
    $P/cudabench cases tests/fixtures/torch-cases-b2/cuda
} > $OUT/cases.log 2>&1
{
    echo "== lab on the baseline's generated code"; $P/lab_old ${LAB_ARGS:---quick}
    echo "== lab on the current generated code"; $P/lab_new ${LAB_ARGS:---quick}
} > $OUT/lab.log 2>&1
[ "${VS_TRITON:-1}" = 0 ] || PYTHONUNBUFFERED=1 python3 bench/cuda/vs_triton.py --ours $OUT/ours.jsonl --out $OUT --reps 50 > $OUT/vs_triton.log 2>&1
grep -h "^reductions\|cases:\|^==" $OUT/bench.log $OUT/cases.log
cat $OUT/lab.log $OUT/vs_triton.log 2>/dev/null
