#!/bin/bash
# run_unseen.sh — the CUDA backend on graphs of real models it was not developed on: every GPU
# graph of tests/fixtures/unseen/logs.tgz (saved as FX text by tests/tools/export_log_graphs.sh
# into build-cudadev/unseen-graphs), through `cudabench graphs` in N shards at once: passes for
# cuda, CUDA code, nvcc, run on the GPU, compared with the reference interpreter on random inputs.
#
#   here:    bench/cuda/build.sh && tests/tools/export_log_graphs.sh DIR build-cudadev/unseen-graphs --cuda
#   device:  bench/cuda/run_unseen.sh      (carry build-cudadev/{cudabench,lib,unseen-graphs})
#
# Writes $OUT/unseen.log (machine, one line per graph, totals). Exit 1 when a graph failed.
OUT=${OUT:-/tmp/cudaout}
N=${N:-8}
G=${G:-build-cudadev/unseen-graphs}
B=${B:-build-cudadev/cudabench}
mkdir -p "$OUT"
[ -x "$B" ] && [ -d "$G" ] || { echo "run_unseen.sh: need $B and $G (see the header)" >&2; exit 2; }
export LD_LIBRARY_PATH=$PWD/build-cudadev/lib:$LD_LIBRARY_PATH MINDUCTOR_CACHE=${MINDUCTOR_CACHE:-/tmp/mi-cuda-cache}
export MINDUCTOR_NVCC_FLAGS=${MINDUCTOR_NVCC_FLAGS:--arch=sm_90}
[ -f bench/cuda/find_cublas.sh ] && . bench/cuda/find_cublas.sh
LOG=$OUT/unseen.log
{ date -u; git rev-parse --short HEAD 2>/dev/null; nvidia-smi --query-gpu=name --format=csv,noheader 2>&1; nvcc --version 2>&1 | tail -1; } > "$LOG"
for k in $(seq 0 $((N - 1))); do "$B" graphs "$G" --shard "$k/$N" > "$OUT/shard$k.txt" 2>&1 & done
wait
cat "$OUT"/shard*.txt | grep -E '^cuda_[^ ]+ +(ok|FAIL|skip) ' | sort >> "$LOG"
grep -h -A60 '^---- ' "$OUT"/shard*.txt > "$OUT/unseen-failures.txt" 2>/dev/null
ok=$(grep -c ' ok ' "$LOG"); bad=$(grep -c ' FAIL ' "$LOG"); skip=$(grep -c ' skip ' "$LOG")
echo "unseen graphs on the GPU: $ok ok, $bad failed, $skip skipped" | tee -a "$LOG"
rm -f "$OUT"/shard*.txt
[ "$bad" = 0 ]
