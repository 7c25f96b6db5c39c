#!/bin/bash
# run_ab.sh — one device call comparing a baseline build of cudabench with the current one on
# the same GPU (issue 18's CUDA items): every bench/graphs workload with the baseline, the
# current code, the current code under each of VARIANTS (';'-separated environment settings,
# e.g. "MINDUCTOR_CUDA_PDL=0": read at
# launch), baseline and current again; the recorded cuda cases (correctness vs PyTorch); the
# reduction labs of both trees when carried (--quick unless LAB_ARGS says otherwise); then
# vs_triton.py on the current code (VS_TRITON=0: not). Run from the repository root on the
# device; P names the carried folder holding cudabench, lib/, base/cudabench (the baseline),
# optionally labs.tar.xz (lab_old, lab_new: bench/cuda/reduction_lab.cu built on each tree's
# generated code) and cache.tar.xz (a MINDUCTOR_CACHE filled here with
# MINDUCTOR_NVCC=/usr/local/cuda/bin/nvcc MINDUCTOR_NVCC_FLAGS=-arch=sm_90 by running the same
# cudabench commands, which stop at "no CUDA GPU" after nvcc: nvcc runs there only for what is
# missing).
P=${P:-build-cudared}
OUT=${OUT:-/tmp/about}
mkdir -p $OUT /tmp/mi-cache
export LD_LIBRARY_PATH=$PWD/$P/lib:$LD_LIBRARY_PATH MINDUCTOR_NVCC_FLAGS=-arch=sm_90
export MINDUCTOR_NVCC=/usr/local/cuda/bin/nvcc MINDUCTOR_CACHE=/tmp/mi-cache
[ -x $MINDUCTOR_NVCC ] || { mkdir -p /usr/local/cuda/bin && ln -sf "$(command -v nvcc)" $MINDUCTOR_NVCC; }
[ -f $P/cache.tar.xz ] && tar xJf $P/cache.tar.xz -C /tmp/mi-cache --strip-components=1
[ -f $P/labs.tar.xz ] && tar xJf $P/labs.tar.xz -C $P
. bench/cuda/find_cublas.sh
B="bench bench/graphs --reps ${REPS:-50}"
{
    date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
    echo "== baseline"; $P/base/cudabench $B --json $OUT/base.jsonl
    echo "== current"; $P/cudabench $B --json $OUT/ours.jsonl
    IFS=';' read -ra VS <<< "${VARIANTS:-}"
    for v in "${VS[@]}"; do echo "== current, $v"; env $v $P/cudabench $B --no-check; done
    echo "== baseline again"; $P/base/cudabench $B --no-check
    echo "== current again"; $P/cudabench $B --no-check
} > $OUT/bench.log 2>&1
{
    $P/cudabench cases tests/fixtures/torch-cases/cuda
    $P/cudabench cases tests/fixtures/torch-cases-b2/cuda
} > $OUT/cases.log 2>&1
if [ -x $P/lab_old ]; then
    echo "== lab on the baseline's generated code"; $P/lab_old ${LAB_ARGS:---quick}
    echo "== lab on the current generated code"; $P/lab_new ${LAB_ARGS:---quick}
fi > $OUT/lab.log 2>&1
[ "${VS_TRITON:-1}" = 0 ] || PYTHONUNBUFFERED=1 python3 bench/cuda/vs_triton.py --ours $OUT/ours.jsonl --out $OUT --reps 50 > $OUT/vs_triton.log 2>&1
grep -h "^ln_gelu\|^seed_example\|^reductions\|^softmax\|cases:\|^==" $OUT/bench.log $OUT/cases.log
cat $OUT/lab.log $OUT/vs_triton.log 2>/dev/null
