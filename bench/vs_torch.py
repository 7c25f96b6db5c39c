#!/usr/bin/env python3
"""vs_torch.py — figure 5: minductor's compiled kernels against real PyTorch on the same machine.

For each workload of bench/graphs/ (same shapes, float32, CPU) it times eager PyTorch,
torch.compile (Inductor's C++/OpenMP backend) and minductor (bench/build/minibench --only
kernels --no-interp), at each thread count, median of repeats after warm-up, and prints the
ratio minductor / inductor (< 1 means minductor is faster).

    python3 bench/vs_torch.py [--threads 16,2] [--reps 10] [--minibench bench/build/minibench]
                              [--out bench/results]

Run from the repository root on a machine with torch (the GPU machine lent by the device
tool: see bench/README.md for the command that carries our libraries there).
"""
import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

WORKLOADS = ["pointwise_chain", "softmax", "ln_gelu", "reductions", "seed_example", "mlp",
             "transformer_block", "llama_block", "cnn"]


def make_workload(name):
    """(function, inputs) with the shapes of bench/graphs/<name>.py."""
    g = torch.Generator().manual_seed(0)

    def r(*shape):
        return torch.rand(*shape, generator=g) * 2 - 1

    if name == "pointwise_chain":
        def f(x, y):
            return torch.relu(x * 2 + y).sigmoid() - torch.tanh(y) * 0.5
        return f, (r(4096, 4096), r(4096, 4096))
    if name == "softmax":
        return (lambda x: torch.softmax(x, dim=-1)), (r(4096, 4096),)
    if name == "ln_gelu":
        def f(x, w, b):
            return F.gelu(F.layer_norm(x, (1024,), w, b, 1e-5))
        return f, (r(8192, 1024), r(1024), r(1024))
    if name == "reductions":
        def f(x):
            m, v = torch.var_mean(x, dim=1, keepdim=True)
            return (x - v) / torch.sqrt(m + 1e-5) + x.amax(dim=1, keepdim=True) + x.sum(dim=0)
        return f, (r(4096, 1024),)
    if name == "seed_example":
        return (lambda x: x.permute(1, 0) + x[2, :]), (r(4096, 4096),)
    if name == "mlp":
        def f(x, w1, b1, w2, b2):
            return F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2)
        return f, (r(4096, 64), r(128, 64), r(128), r(10, 128), r(10))
    if name == "transformer_block":
        B, T, C, H = 8, 256, 128, 512

        def f(x, ln1w, ln1b, wq, bq, wk, bk, wv, bv, wo, bo, ln2w, ln2b, w1, b1, w2, b2):
            h = F.layer_norm(x, (C,), ln1w, ln1b, 1e-5)
            q, k, v = F.linear(h, wq, bq), F.linear(h, wk, bk), F.linear(h, wv, bv)
            a = torch.softmax(torch.bmm(q, k.transpose(1, 2)) * (1.0 / math.sqrt(C)), dim=-1)
            h = x + F.linear(torch.bmm(a, v), wo, bo)
            return h + F.linear(F.gelu(F.linear(F.layer_norm(h, (C,), ln2w, ln2b, 1e-5), w1, b1)), w2, b2)
        return f, (r(B, T, C), r(C), r(C), r(C, C), r(C), r(C, C), r(C), r(C, C), r(C), r(C, C), r(C),
                   r(C), r(C), r(H, C), r(H), r(C, H), r(C))
    if name == "llama_block":
        # ../shared/torch-cases/cpu/llama_block's model (RMSNorm, RoPE, causal SDPA, SwiGLU) at
        # batch 8 x 256 tokens, as bench/graphs/llama_block.py
        B, T, C, NH, HD, HID = 8, 256, 128, 4, 32, 344

        def rms(x, w):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

        def rope(x, cos, sin):
            x1, x2 = x.chunk(2, dim=-1)
            return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)

        def f(x, n1w, wq, wk, wv, wo, n2w, w1, w3, w2):
            hx = rms(x, n1w)
            pos = torch.arange(T, device=x.device, dtype=torch.float32)
            inv = 1.0 / (10000 ** (torch.arange(0, HD // 2, device=x.device, dtype=torch.float32) / (HD // 2)))
            ang = pos[:, None] * inv[None, :]
            cos, sin = ang.cos(), ang.sin()
            q = rope(F.linear(hx, wq).view(B, T, NH, HD).transpose(1, 2), cos, sin)
            k = rope(F.linear(hx, wk).view(B, T, NH, HD).transpose(1, 2), cos, sin)
            v = F.linear(hx, wv).view(B, T, NH, HD).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + F.linear(y.transpose(1, 2).reshape(B, T, C), wo)
            hx = rms(x, n2w)
            return x + F.linear(F.silu(F.linear(hx, w1)) * F.linear(hx, w3), w2)
        return f, (r(B, T, C), r(C), r(C, C), r(C, C), r(C, C), r(C, C), r(C), r(HID, C), r(HID, C), r(C, HID))
    if name == "cnn":
        # ../shared/torch-cases/cpu/cnn's model (conv-bn-relu, max pool, strided conv-bn-relu,
        # global average pool, linear; batch norm in eval) at batch 64, as bench/graphs/cnn.py
        def f(x, c1w, c1b, m1, v1, g1, b1, c2w, c2b, m2, v2, g2, b2, fw, fb):
            x = F.relu(F.batch_norm(F.conv2d(x, c1w, c1b, padding=1), m1, v1, g1, b1, False, 0.1, 1e-5))
            x = F.max_pool2d(x, 2)
            x = F.relu(F.batch_norm(F.conv2d(x, c2w, c2b, stride=2, padding=1), m2, v2, g2, b2, False, 0.1, 1e-5))
            return F.linear(F.adaptive_avg_pool2d(x, 1).flatten(1), fw, fb)
        return f, (r(64, 3, 32, 32), r(16, 3, 3, 3), r(16), r(16), r(16).abs() + 0.5, r(16), r(16),
                   r(32, 16, 3, 3), r(32), r(32), r(32).abs() + 0.5, r(32), r(32), r(10, 32), r(10))
    raise ValueError(name)


def time_fn(fn, args, reps, warmup):
    with torch.no_grad():
        for _ in range(warmup):
            fn(*args)
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn(*args)
            ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def minductor_times(minibench, threads, reps, warmup, fresh_outputs=False, env_extra=None):
    """{workload: seconds} from one minibench run (figure 1 rows). fresh_outputs: allocate the
    outputs inside every timed call, as torch.compile's wrapper does (like-for-like). env_extra:
    more environment (MINDUCTOR_HUGEPAGES=0: fresh outputs in 4 KiB pages)."""
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as tf:
        path = tf.name
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), **(env_extra or {}))
    cmd = [minibench, "--only", "kernels", "--no-interp", "--threads", str(threads), "--reps", str(reps),
           "--warmup", str(warmup), "--json", path] + (["--fresh-outputs"] if fresh_outputs else [])
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    out = {}
    try:
        with open(path) as f:
            for line in f:
                rec = json.loads(line)
                if rec.get("figure") == 1:
                    for row in rec["rows"]:
                        out[row["workload"]] = (row.get("time_s"), row.get("note", ""))
    finally:
        os.unlink(path)
    return out


def fmt_ms(s):
    return "n/a" if s is None or (isinstance(s, float) and math.isnan(s)) else f"{s * 1e3:.3f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="16,2")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--minibench", default="bench/build/minibench")
    ap.add_argument("--out", default="bench/results")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--small-pages", action="store_true",
                    help="also time minductor's fresh outputs with huge pages off (MINDUCTOR_HUGEPAGES=0)")
    a = ap.parse_args()
    import torch._inductor.config as inductor_config
    inductor_config.fx_graph_cache = False   # one compile per thread count
    names = a.workloads.split(",")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    machine = f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus, {platform.processor() or ''}".strip()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    machine += " " + line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    lines = [f"# minductor vs PyTorch {torch.__version__} (CPU), {date}", "", f"machine: {machine}", "",
             "Median of %d calls after %d warm-up calls; ratio = minductor / torch.compile (< 1: minductor faster)." %
             (a.reps, a.warmup), "",
             "torch.compile's wrapper allocates its outputs on every call (empty_strided; a large buffer is a",
             "fresh mmap whose pages fault on first touch). 'minductor ms' allocates its outputs inside every",
             "timed call too (minibench --fresh-outputs) and the ratio uses it: from the session's cache of",
             "freed blocks (core/base/mem.h; a block freed by the call before, pages already mapped, as",
             "PyTorch's caching allocators do; c10's CPU allocator leaves that to glibc, which maps blocks of",
             "32 MiB and more afresh every time); 'prealloc ms' is minductor writing into outputs allocated",
             "once. Inductor's FX graph cache is off so each thread",
             "count compiles its own kernels (Inductor bakes the thread count into them). minductor's outputs",
             "of 32 MiB and more are mappings of 2 MiB pages (core/base/mem.h); '4K pages ms' (--small-pages) is",
             "the fresh-output time with that off (MINDUCTOR_HUGEPAGES=0). torch's allocator does the same only",
             "under THP_MEM_ALLOC_ENABLE=1 (off by default; this run: %s)." %
             (os.environ.get("THP_MEM_ALLOC_ENABLE") or "unset"), ""]
    records = []
    for threads in [int(t) for t in a.threads.split(",")]:
        torch.set_num_threads(threads)
        have = os.path.exists(a.minibench)
        mi = minductor_times(a.minibench, threads, a.reps, a.warmup, fresh_outputs=True) if have else {}
        mp = minductor_times(a.minibench, threads, a.reps, a.warmup) if have else {}
        ms = minductor_times(a.minibench, threads, a.reps, a.warmup, fresh_outputs=True,
                             env_extra={"MINDUCTOR_HUGEPAGES": "0"}) if have and a.small_pages else {}
        lines += [f"## {threads} threads", "",
                  "| workload | eager ms | torch.compile ms | minductor ms | minductor / inductor | prealloc ms | 4K pages ms | note |",
                  "|---|---:|---:|---:|---:|---:|---:|---|"]
        for name in names:
            fn, args = make_workload(name)
            eager = time_fn(fn, args, a.reps, a.warmup)
            torch._dynamo.reset()
            compiled = torch.compile(fn)
            t0 = time.perf_counter()
            with torch.no_grad():
                compiled(*args)
            compile_s = time.perf_counter() - t0
            ind = time_fn(compiled, args, a.reps, a.warmup)
            m, note = mi.get(name, (None, "minibench missing" if not mi else "no row"))
            mpre = mp.get(name, (None, ""))[0]
            msmall = ms.get(name, (None, ""))[0]
            ratio = (m / ind) if m else None
            lines.append(f"| {name} | {fmt_ms(eager)} | {fmt_ms(ind)} | {fmt_ms(m)} | "
                         f"{'n/a' if ratio is None else f'{ratio:.2f}'} | {fmt_ms(mpre)} | {fmt_ms(msmall)} | {note} |")
            records.append({"figure": 5, "date": date, "machine": machine, "threads": threads, "workload": name,
                            "eager_s": eager, "inductor_s": ind, "inductor_compile_s": compile_s,
                            "minductor_s": m, "minductor_prealloc_s": mpre, "minductor_small_pages_s": msmall,
                            "thp_mem_alloc_enable": os.environ.get("THP_MEM_ALLOC_ENABLE"),
                            "ratio_minductor_inductor": ratio,
                            "note": note})
            print(lines[-1], flush=True)
        lines.append("")
    text = "\n".join(lines)
    print(text)
    os.makedirs(a.out, exist_ok=True)
    stamp = date[:10] + "T" + date[11:13] + date[14:16]   # two runs on one day do not overwrite
    with open(os.path.join(a.out, f"vs_torch-{stamp}.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(a.out, f"vs_torch-{stamp}.jsonl"), "w") as f:
        for rec in records:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
