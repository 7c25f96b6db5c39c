#!/bin/bash
# run_cases.sh — every recorded cuda graph on the GPU, compared with PyTorch's recorded outputs:
# tests/fixtures/torch-cases/cuda and tests/fixtures/torch-cases-b2/cuda (copies of
# ../shared/torch-cases/cuda), each graphN/post_post_grad.py lowered, scheduled, generated as
# CUDA, built with nvcc, run on inK.npy and checked against outK.npy / inK_after.npy by the
# numerics verdict (core/ops/numerics.h: allclose rtol 1e-4 atol 1e-5, else RMSE against a
# float64 run; random ops statistically). Ops without a GPU kernel run as host round trips.
#
#   here:    bench/cuda/build.sh                      (build-cudadev/cudabench and its libraries)
#   device:  bench/cuda/run_cases.sh                  (carry build-cudadev; the GPU machine)
#
# Writes $OUT/cases.log (machine, one line per graph, totals) and $OUT/cases.jsonl. Exit 1 when a
# graph failed. MI_DUMP_FAILED=1 also prints the CUDA source of a failing graph.
OUT=${OUT:-/tmp/cudaout}
mkdir -p "$OUT"
B=${B:-build-cudadev/cudabench}
[ -x "$B" ] || { echo "run_cases.sh: $B not found: run bench/cuda/build.sh first and carry build-cudadev" >&2; exit 2; }
export LD_LIBRARY_PATH=$PWD/build-cudadev/lib:$LD_LIBRARY_PATH MINDUCTOR_CACHE=${MINDUCTOR_CACHE:-/tmp/mi-cuda-cache}
export MINDUCTOR_NVCC_FLAGS=${MINDUCTOR_NVCC_FLAGS:--arch=sm_90}
. bench/cuda/find_cublas.sh
LOG=$OUT/cases.log
rm -f "$OUT/cases.jsonl"
{
    date -u; git rev-parse --short HEAD 2>/dev/null; uname -m; nproc
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1
    nvcc --version 2>&1 | tail -2
} > "$LOG"
rc=0
for root in tests/fixtures/torch-cases/cuda tests/fixtures/torch-cases-b2/cuda; do
    echo "== $root" | tee -a "$LOG"
    "$B" cases "$root" --json "$OUT/cases.jsonl" 2>&1 | tee -a "$LOG"
    [ "${PIPESTATUS[0]}" = 0 ] || rc=1
done
exit $rc
