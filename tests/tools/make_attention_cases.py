# make_attention_cases.py — run on the GPU machine (torch 2.11, H100): the fixtures of
# tests/fixtures/attention_cuda and tests/fixtures/logs/cuda_cudnn_attention_train.log.
#  - make_fx graphs (print_readable) of the CUDA flash attention forward + backward in bf16 and f16,
#    with inputs (q, k, v, grad_out) and eager outputs (out, logsumexp, dq, dk, dv) as .npy,
#  - the meta functions' source (meta_flash.py: the shapes and strides PyTorch gives),
#  - a TORCH_TRACE log of torch.compile on a bf16 causal attention layer trained one step (on the
#    H100 it picks _scaled_dot_product_cudnn_attention); trim it with ../fixtures/logs/trim_cache_dumps.py.
#   OUT=/path python3 tests/tools/make_attention_cases.py
import os, sys, inspect, subprocess
OUT = os.environ.get("OUT", "/tmp/flash_out")
if len(sys.argv) > 1 and sys.argv[1] == "compile":
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    B, L, H, E = 2, 64, 4, 32
    class Attn(torch.nn.Module):
        def __init__(s):
            super().__init__()
            s.qkv = torch.nn.Linear(H * E, 3 * H * E)
            s.o = torch.nn.Linear(H * E, H * E)
        def forward(s, x):
            q, k, v = s.qkv(x).view(B, L, 3, H, E).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return s.o(a.transpose(1, 2).reshape(B, L, H * E))
    m = Attn().cuda().to(torch.bfloat16)
    x = torch.randn(B, L, H * E, device="cuda", dtype=torch.bfloat16)
    cm = torch.compile(m)
    y = cm(x)
    y.float().sum().backward()
    torch.cuda.synchronize()
    print("compiled ok", y.shape, y.dtype)
    sys.exit(0)
import numpy as np, torch
from torch.fx.experimental.proxy_tensor import make_fx
import torch._meta_registrations as mr
os.makedirs(OUT, exist_ok=True)
with open(f"{OUT}/meta_flash.py", "w") as f:
    for name in sorted(dir(mr)):
        if name.startswith("meta_") and "flash_attention" in name:
            f.write(inspect.getsource(getattr(mr, name)) + "\n")
print("torch", torch.__version__)
def save(d, name, t):
    os.makedirs(d, exist_ok=True)
    t = t.detach()
    if t.dtype == torch.bfloat16: t = t.float()
    np.save(f"{d}/{name}.npy", t.cpu().numpy())
B, H, L, E = 2, 4, 64, 32
for dt, tag in ((torch.bfloat16, "bf16"), (torch.float16, "f16")):
    torch.manual_seed(1)
    q, k, v = (torch.randn(B, H, L, E, device="cuda", dtype=dt) for _ in range(3))
    go = torch.randn(B, H, L, E, device="cuda", dtype=dt)
    def fwd_bwd(q, k, v, go):
        r = torch.ops.aten._scaled_dot_product_flash_attention.default(q, k, v, 0.0, True)
        out, lse = r[0], r[1]
        g = torch.ops.aten._scaled_dot_product_flash_attention_backward.default(
            go, q, k, v, out, lse, r[2], r[3], r[4], r[5], 0.0, True, r[6], r[7])
        return out, lse, g[0], g[1], g[2]
    gm = make_fx(fwd_bwd)(q, k, v, go)
    d = f"{OUT}/flash_{tag}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/graph.py", "w") as f:
        f.write(gm.print_readable(print_output=False))
    outs = fwd_bwd(q, k, v, go)
    for i, t in enumerate((q, k, v, go)): save(d, f"in{i}", t)
    for i, t in enumerate(outs): save(d, f"out{i}", t)
    with open(f"{d}/strides.txt", "w") as f:
        for i, t in enumerate(outs): f.write(f"out{i} {t.dtype} {tuple(t.shape)} {t.stride()}\n")
        r = torch.ops.aten._scaled_dot_product_flash_attention.default(q, k, v, 0.0, True)
        for i, t in enumerate(r): f.write(f"fwd[{i}] {type(t).__name__} {getattr(t, 'dtype', '')} {tuple(t.shape) if hasattr(t, 'shape') else t} {t.stride() if hasattr(t, 'stride') else ''} {getattr(t, 'device', '')}\n")
    print(tag, "ok")
env = dict(os.environ, TORCH_TRACE=f"{OUT}/trace")
r = subprocess.run([sys.executable, __file__, "compile"], env=env, capture_output=True, text=True)
print(r.stdout[-2000:], r.stderr[-3000:])
