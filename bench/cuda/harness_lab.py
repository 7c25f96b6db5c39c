#!/usr/bin/env python3
"""harness_lab.py — Triton (torch.compile), minductor's generated CUDA modules and hand-written
variants of seed_example and reductions timed by one function in one process (vs_triton.py's
time_cuda: torch zero_ of a 256 MB buffer before each call, CUDA events, median of REPS),
interleaved over ROUNDS rounds, each output checked against eager PyTorch (issue 18, perf10).

The shared libraries come from LAB_DIR (default build-perf10), built on the development machine
by bench/cuda/harness_lab.sh: s*_gen.so / RGLOB (r_*.so) are generated modules with their static
mi_launch exported as lab_launch (harness_lab.sh wrap), seedk.so = seed_lab_kernels.cu,
red_lab.so = reduction_mix.cu. Environment: SEEDK, HAND,
MIX (names of the exported lab_<name> lanes), MFLUSH=1 (also cudaMemsetAsync-flushed lanes).

    LAB_DIR=build-perf10 SEEDK="t256u1 copy4" HAND=s16_w8 RGLOB="g3_*.so" python3 bench/cuda/harness_lab.py"""
import ctypes, os, statistics, sys, glob
import torch
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.environ.get("LAB_DIR", "build-perf10")
from vs_torch import make_workload  # noqa
REPS, ROUNDS = 50, int(os.environ.get("ROUNDS", "3"))
FL = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
seedk = ctypes.CDLL(os.path.join(HERE, "seedk.so"))
def zflush(): FL.zero_()
def mflush(): seedk.lab_memset(ctypes.c_void_p(FL.data_ptr()), ctypes.c_size_t(FL.numel()), None)
def time_cuda(fn, flush=zflush, reps=REPS):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        flush(); a.record(); fn(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
    return statistics.median(ts)
def module(path, inputs, outs):
    lib = ctypes.CDLL(path)
    pin = (ctypes.c_void_p * len(inputs))(*[t.data_ptr() for t in inputs])
    pout = (ctypes.c_void_p * len(outs))(*[t.data_ptr() for t in outs])
    syms = (ctypes.c_int64 * 1)(0)
    def run():
        rc = lib.lab_launch(pin, pout, syms, None)
        if rc: raise RuntimeError(f"{path}: rc {rc}")
    return run
print(torch.cuda.get_device_name(0), torch.__version__, flush=True)
for w in ("seed_example", "reductions"):
    f, inputs = make_workload(w)
    inputs = tuple(t.cuda() for t in inputs)
    ref = f(*inputs)
    cf = torch.compile(f)
    cf(*inputs)
    nbytes = sum(t.numel() * t.element_size() for t in inputs) + ref.numel() * ref.element_size()
    cx = torch.rand(nbytes // 8, device="cuda"); cy = torch.empty_like(cx)
    lanes = [("triton", lambda: cf(*inputs), zflush), ("copy_ same bytes", lambda: cy.copy_(cx), zflush)]
    outs = {}
    sos = sorted(glob.glob(os.path.join(HERE, "s*_gen.so"))) if w == "seed_example" else sorted(glob.glob(os.path.join(HERE, os.environ.get("RGLOB", "r_*.so"))))
    for so in sos:
        o = torch.empty(ref.numel() + 4, device="cuda")
        name = os.path.basename(so)[:-3]
        outs[name] = o
        lanes.append((name, module(so, inputs, [o]), zflush))
    if w == "seed_example":
        if os.environ.get("MFLUSH"):
            lanes.append(("s_gen memset-flush", module(sos[0], inputs, [outs["s_gen"]]), mflush))
            lanes.append(("triton memset-flush", lambda: cf(*inputs), mflush))
        for k in os.environ.get("SEEDK", "t256u1 t256u1el t128u2 t128u2el t512u1 t1024u1 t256u2el copy4").split():
            o = torch.empty(ref.numel() + 4, device="cuda")
            outs[k] = o
            fn = getattr(seedk, "lab_" + k)
            lanes.append((k, (lambda fn=fn, o=o: fn(ctypes.c_void_p(inputs[0].data_ptr()), ctypes.c_void_p(o.data_ptr()), None)), zflush))
    if w == "reductions":
        hand = ctypes.CDLL(os.path.join(HERE, "red_lab.so"))
        for k in os.environ.get("HAND", "v64_w8 s16_w8 v64_b128").split():
            o = torch.empty(ref.numel() + 4, device="cuda")
            outs[k] = o
            fn = getattr(hand, "lab_" + k)
            lanes.append(("hand " + k, (lambda fn=fn, o=o: fn(ctypes.c_void_p(inputs[0].data_ptr()), ctypes.c_void_p(o.data_ptr()), None)), zflush))
            outs["hand " + k] = outs.pop(k)
    if w == "reductions" and os.environ.get("MIX"):
        mix = ctypes.CDLL(os.path.join(HERE, "red_lab.so"))
        for k in os.environ["MIX"].split():
            o = torch.empty(ref.numel() + 4, device="cuda")
            outs["mix " + k] = o
            fn = getattr(mix, "lab_" + k)
            lanes.append(("mix " + k, (lambda fn=fn, o=o: fn(ctypes.c_void_p(inputs[0].data_ptr()), ctypes.c_void_p(o.data_ptr()), None)), zflush))
    res = {n: [] for n, _, _ in lanes}
    for r in range(ROUNDS):
        for n, fn, fl in lanes:
            res[n].append(time_cuda(fn, fl))
    torch.cuda.synchronize()
    print(f"== {w}: {nbytes / 1e6:.1f} MB (inputs + output); us per round, then the median of the rounds", flush=True)
    tri = statistics.median(res["triton"])
    for n, _, _ in lanes:
        chk = ""
        if n in outs and n != "copy4":
            got = outs[n][:ref.numel()].as_strided(ref.shape, ref.stride())
            chk = "ok" if torch.allclose(got, ref, rtol=1e-4, atol=1e-4) else f"MISMATCH {(got - ref).abs().max().item():.3g}"
        m = statistics.median(res[n])
        print(f"  {n:22s} " + " ".join(f"{t:7.2f}" for t in res[n]) + f"   med {m:7.2f}  /triton {m / tri:5.3f}  {chk}", flush=True)
