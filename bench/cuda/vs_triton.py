#!/usr/bin/env python3
"""vs_triton.py — the CUDA backend against torch.compile (Inductor -> Triton) on the same GPU.

For each workload of bench/graphs/ (shapes of bench/vs_torch.py's make_workload, float32) it times
eager PyTorch and torch.compile on the GPU (CUDA events around each call, median of --reps after
warm-up), reads minductor's kernel times from cudabench's JSON lines (--ours), and measures the
GPU's copy bandwidth in the same run (torch copy_ of 1 GiB, bytes read + written; the "STREAM"
figure) and, per workload, a copy_ moving the workload's own byte count timed the same way
(copy@size: the ceiling at that size, launch and ramp included). Prints a table and writes
cuda_vs_triton.json under --out.

    python3 bench/cuda/vs_triton.py --ours OUT/ours.jsonl --out OUT [--reps 50]
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from vs_torch import WORKLOADS, make_workload  # noqa: E402


_FLUSH = None


def time_cuda(fn, args, warmup, reps, flush=True):
    """Median / min ms; before each call a 256 MB memset evicts L2 (as triton.testing.do_bench
    and cudabench's mi_cuda_time do), which also hides the host's launch overhead."""
    global _FLUSH
    if flush and _FLUSH is None:
        _FLUSH = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for _ in range(warmup):
        fn(*args)
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if flush:
            _FLUSH.zero_()
        a.record()
        fn(*args)
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts), min(ts)


def bandwidth(reps):
    n = 256 * 1024 * 1024          # 1 GiB of float32
    x = torch.rand(n, device="cuda")
    y = torch.empty_like(x)
    med, best = time_cuda(lambda: y.copy_(x), (), 3, reps, flush=False)
    z = torch.empty_like(x)
    med3, best3 = time_cuda(lambda: torch.add(x, y, out=z), (), 3, reps, flush=False)
    return {"copy_gbs": 2 * 4 * n / (med * 1e-3) / 1e9, "add_gbs": 3 * 4 * n / (med3 * 1e-3) / 1e9}


def copy_at_size(nbytes, reps):
    """ms of a copy_ moving nbytes (half read, half written), timed as the workloads are (L2
    evicted before each call): what a kernel of that traffic can reach at best on this GPU."""
    n = max(1, int(nbytes // 8))
    x = torch.rand(n, device="cuda")
    y = torch.empty_like(x)
    med, _ = time_cuda(lambda: y.copy_(x), (), 3, reps)
    return med


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True)
    ap.add_argument("--out", default=".")
    ap.add_argument("--reps", type=int, default=50)
    a = ap.parse_args()
    ours = {}
    with open(a.ours) as f:
        for line in f:
            line = line.strip()
            if line:
                r = json.loads(line)
                if "workload" in r:
                    ours[r["workload"]] = r
    dev = torch.cuda.get_device_properties(0)
    bw = bandwidth(a.reps)
    peak = max(bw.values())
    print(f"device: {dev.name}, {dev.multi_processor_count} SMs, torch {torch.__version__}")
    print(f"copy bandwidth (torch copy_, 1 GiB, read+write): {bw['copy_gbs']:.0f} GB/s; add (2 reads + 1 write): {bw['add_gbs']:.0f} GB/s")
    rows = []
    print(f"{'workload':18s} {'eager ms':>9s} {'triton ms':>9s} {'ours ms':>9s} {'ours/triton':>11s} {'ours GB/s':>9s} {'% peak':>6s} "
          f"{'copy@size ms':>12s} {'% of it':>7s}  check")
    for w in WORKLOADS:
        f, inputs = make_workload(w)
        inputs = tuple(t.cuda() for t in inputs)
        eager, _ = time_cuda(f, inputs, 3, a.reps)
        torch._dynamo.reset()
        cf = torch.compile(f)
        triton, _ = time_cuda(cf, inputs, 3, a.reps)
        o = ours.get(w, {})
        ms = o.get("median_ms")
        cs = copy_at_size(o["bytes"], a.reps) if o.get("bytes") else None
        row = {"workload": w, "eager_ms": eager, "triton_ms": triton, "ours_ms": ms, "copy_at_size_ms": cs,
               "pct_copy_at_size": (100.0 * cs / ms) if ms and cs else None,
               "ratio": (ms / triton) if ms else None, "ours_gbs": o.get("gbs"),
               "pct_peak": (100.0 * o["gbs"] / peak) if ms else None, "check": o.get("check", o.get("error", "missing")),
               "kernels": o.get("kernels")}
        rows.append(row)
        def fmt(v, spec):
            return format(v, spec) if v is not None else "n/a"
        print(f"{w:18s} {eager:9.4f} {triton:9.4f} {fmt(ms, '9.4f')} {fmt(row['ratio'], '11.2f')} "
              f"{fmt(row['ours_gbs'], '9.0f')} {fmt(row['pct_peak'], '6.0f')} {fmt(cs, '12.4f')} {fmt(row['pct_copy_at_size'], '7.0f')}  {row['check']}")
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "host": platform.node(),
           "device": dev.name, "sms": dev.multi_processor_count, "torch": torch.__version__,
           "bandwidth": bw, "rows": rows, "reps": a.reps}
    with open(os.path.join(a.out, "cuda_vs_triton.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
