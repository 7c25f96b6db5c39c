#!/bin/bash
# run_device.sh — everything the CUDA backend needs the GPU machine for, in one call (device tool):
#   1. every graph of tests/fixtures/torch-cases/cuda (copies of ../shared/torch-cases/cuda) built
#      with nvcc, run, compared with PyTorch's recorded outputs;
#   2. the bench/graphs workloads: check against the interpreter, kernel time (CUDA events);
#   3. torch.compile (Triton) on the same workloads and GPU, plus the copy bandwidth.
# Needs build-cudadev (bench/cuda/build.sh) carried along. Results go to $OUT.
OUT=${OUT:-/tmp/cudaout}
mkdir -p $OUT
export LD_LIBRARY_PATH=$PWD/build-cudadev/lib:$LD_LIBRARY_PATH MINDUCTOR_CACHE=/tmp/mi-cuda-cache
export MINDUCTOR_NVCC_FLAGS=${MINDUCTOR_NVCC_FLAGS:--arch=sm_90}
. bench/cuda/find_cublas.sh
{
    date -u; uname -m; nproc
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv
    nvcc --version | tail -2
    python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} 2>&1 | tee $OUT/machine.txt
B=build-cudadev/cudabench
MODE=${1:-all}
if [ "$MODE" = all ] || [ "$MODE" = cases ]; then
    $B cases tests/fixtures/torch-cases/cuda --json $OUT/cases.jsonl 2>&1 | tee $OUT/cases.txt
fi
if [ "$MODE" = all ] || [ "$MODE" = bench ]; then
    $B bench bench/graphs --reps ${REPS:-50} --json $OUT/ours.jsonl 2>&1 | tee $OUT/ours.txt
    PYTHONUNBUFFERED=1 python3 bench/cuda/vs_triton.py --ours $OUT/ours.jsonl --out $OUT --reps ${REPS:-50} 2>&1 | tee $OUT/vs_triton.txt
fi
if [ -n "$NCU" ]; then   # profile one launch of the first fused kernel of workload $NCU
    timeout 120 ncu --kernel-name regex:cuda_fused --launch-count 1 --section SpeedOfLight --section Occupancy \
        --section LaunchStats --section MemoryWorkloadAnalysis $B bench bench/graphs --only $NCU --reps 1 --no-check 2>&1 | tee $OUT/ncu.txt
fi
