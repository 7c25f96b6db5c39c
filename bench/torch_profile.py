#!/usr/bin/env python3
"""torch_profile.py — where torch.compile's time goes, per op, for one workload of bench/vs_torch.py:
the other side of minibench's per-kernel table (`minibench --only kernels --workload W`).

    python3 bench/torch_profile.py --workload llama_block --threads 16 [--reps 50]

Prints torch.profiler's table (self CPU time per op: Inductor's fused kernels as
`cpp_fused_*` / graph_*, extern calls as aten::mm / aten::bmm / aten::_scaled_dot_product_*),
sorted by self CPU time, and the median time of one call. Run on the machine that has torch.
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_torch import make_workload  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", default="llama_block")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--reps", type=int, default=50)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    fn, args = make_workload(a.workload)
    compiled = torch.compile(fn)
    with torch.no_grad():
        for _ in range(5):
            compiled(*args)
        ts = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            compiled(*args)
            ts.append(time.perf_counter() - t0)
        print(f"{a.workload} at {a.threads} threads: torch.compile median {statistics.median(ts) * 1e3:.3f} ms "
              f"(min {min(ts) * 1e3:.3f})")
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            for _ in range(a.reps):
                compiled(*args)
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))


if __name__ == "__main__":
    main()
