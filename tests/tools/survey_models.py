# survey_models.py — run on the GPU machine (torch 2.11): torch.compile small models the project was
# not developed on under TORCH_TRACE, one process per model (OUT/logs/NAME/*.log); the logs of
# tests/fixtures/unseen/logs.tgz. Run: OUT=/path python3 tests/tools/survey_models.py
import os, sys, subprocess
OUT = os.environ.get("OUT", "/tmp/survey")
MODELS = ["gru", "lstm", "unet_block", "vit_patch", "groupnorm_upsample", "embed_ln_train", "moe_repeat",
          "gpt_block_train", "pixel_shuffle", "sort_cumsum", "conv1d_gelu", "bn_train_bf16", "label_smooth_ce_train",
          "rmsnorm_rope_bf16", "swiglu_f16", "deformable_grid", "topk_gather", "attention_mask_train"]
if len(sys.argv) == 1:
    os.makedirs(f"{OUT}/logs", exist_ok=True)
    for m in MODELS:
        env = dict(os.environ, TORCH_TRACE=f"{OUT}/logs/{m}")
        r = subprocess.run([sys.executable, __file__, m], env=env, capture_output=True, text=True, timeout=300)
        print(m, "rc", r.returncode, (r.stdout + r.stderr).strip().splitlines()[-1:] if r.returncode else "")
    sys.exit(0)
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
dev = "cuda"
name = sys.argv[1]
def run(m, *xs, train=False, dtype=None):
    m = m.to(dev)
    if dtype: m = m.to(dtype)
    cm = torch.compile(m)
    y = cm(*xs)
    if train:
        (y.float().sum() if isinstance(y, torch.Tensor) else sum(t.float().sum() for t in y)).backward()
    torch.cuda.synchronize()
    print("ok")
x4 = lambda *s, dt=torch.float32: torch.randn(*s, device=dev, dtype=dt)
if name == "gru":
    run(nn.GRU(32, 64, batch_first=True), x4(4, 10, 32))
elif name == "lstm":
    run(nn.LSTM(32, 64, num_layers=2, batch_first=True), x4(4, 10, 32), train=False)
elif name == "unet_block":
    class U(nn.Module):
        def __init__(s):
            super().__init__(); s.c1 = nn.Conv2d(8, 16, 3, padding=1); s.up = nn.ConvTranspose2d(16, 8, 2, stride=2); s.n = nn.GroupNorm(4, 8)
        def forward(s, x): return F.silu(s.n(s.up(F.max_pool2d(F.relu(s.c1(x)), 2)))) + x
    run(U(), x4(2, 8, 16, 16), train=True)
elif name == "vit_patch":
    class V(nn.Module):
        def __init__(s):
            super().__init__(); s.p = nn.Conv2d(3, 64, 4, stride=4); s.ln = nn.LayerNorm(64); s.fc = nn.Linear(64, 64)
            s.cls = nn.Parameter(torch.zeros(1, 1, 64)); s.pos = nn.Parameter(torch.randn(1, 17, 64))
        def forward(s, x):
            t = s.p(x).flatten(2).transpose(1, 2)
            t = torch.cat([s.cls.expand(x.shape[0], -1, -1), t], 1) + s.pos
            return F.gelu(s.fc(s.ln(t)), approximate="tanh")
    run(V(), x4(2, 3, 16, 16), train=True)
elif name == "groupnorm_upsample":
    class G(nn.Module):
        def __init__(s): super().__init__(); s.n = nn.GroupNorm(2, 8); s.c = nn.Conv2d(8, 8, 1)
        def forward(s, x): return s.c(F.interpolate(s.n(x), scale_factor=2, mode="bilinear", align_corners=False))
    run(G(), x4(2, 8, 8, 8))
elif name == "embed_ln_train":
    class E(nn.Module):
        def __init__(s): super().__init__(); s.e = nn.Embedding(100, 32); s.ln = nn.LayerNorm(32); s.o = nn.Linear(32, 100)
        def forward(s, i): return F.cross_entropy(s.o(s.ln(s.e(i))).view(-1, 100), i.view(-1))
    run(E(), torch.randint(0, 100, (4, 12), device=dev), train=True)
elif name == "moe_repeat":
    class M(nn.Module):
        def __init__(s): super().__init__(); s.g = nn.Linear(16, 4); s.w = nn.Parameter(torch.randn(4, 16, 16))
        def forward(s, x):
            p = F.softmax(s.g(x), -1); v, i = p.topk(2, -1)
            xr = x.repeat_interleave(2, dim=0)
            return torch.bmm(xr.unsqueeze(1), s.w[i.view(-1)]).squeeze(1).view(-1, 2, 16).mul(v.unsqueeze(-1)).sum(1)
    run(M(), x4(8, 16))
elif name == "gpt_block_train":
    class B(nn.Module):
        def __init__(s):
            super().__init__(); s.ln1 = nn.LayerNorm(64); s.qkv = nn.Linear(64, 192); s.proj = nn.Linear(64, 64)
            s.ln2 = nn.LayerNorm(64); s.fc = nn.Linear(64, 256); s.fc2 = nn.Linear(256, 64); s.dp = nn.Dropout(0.1)
        def forward(s, x):
            B_, T, C = x.shape
            q, k, v = s.qkv(s.ln1(x)).split(64, 2)
            q, k, v = (t.view(B_, T, 4, 16).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.1).transpose(1, 2).reshape(B_, T, C)
            x = x + s.dp(s.proj(y))
            return x + s.dp(s.fc2(F.gelu(s.fc(s.ln2(x)))))
    run(B().train(), x4(2, 16, 64), train=True)
elif name == "pixel_shuffle":
    class P(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(4, 16, 3, padding=1)
        def forward(s, x): return torch.tanh(F.pixel_shuffle(s.c(x), 2))
    run(P(), x4(2, 4, 8, 8))
elif name == "sort_cumsum":
    class S(nn.Module):
        def forward(s, x):
            v, i = torch.sort(x, dim=-1, descending=True)
            p = torch.cumsum(F.softmax(v, -1), -1)
            return torch.where(p < 0.9, v, torch.full_like(v, -1e4)).gather(-1, i.argsort(-1))
    run(S(), x4(4, 50))
elif name == "conv1d_gelu":
    run(nn.Sequential(nn.Conv1d(8, 16, 5, padding=2), nn.GELU(), nn.Conv1d(16, 8, 1), nn.Dropout(0.0)), x4(2, 8, 32), train=True)
elif name == "bn_train_bf16":
    run(nn.Sequential(nn.Conv2d(4, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 3)),
        x4(4, 4, 10, 10, dt=torch.bfloat16), train=True, dtype=torch.bfloat16)
elif name == "label_smooth_ce_train":
    class L(nn.Module):
        def __init__(s): super().__init__(); s.fc = nn.Linear(20, 10)
        def forward(s, x, t): return F.cross_entropy(s.fc(x), t, label_smoothing=0.1)
    run(L(), x4(16, 20), torch.randint(0, 10, (16,), device=dev), train=True)
elif name == "rmsnorm_rope_bf16":
    class R(nn.Module):
        def __init__(s): super().__init__(); s.w = nn.Parameter(torch.ones(32))
        def forward(s, x, cos, sin):
            x = x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * s.w
            x1, x2 = x.chunk(2, -1)
            return x * cos + torch.cat([-x2, x1], -1) * sin
    run(R(), x4(2, 8, 32, dt=torch.bfloat16), x4(8, 32, dt=torch.bfloat16), x4(8, 32, dt=torch.bfloat16), train=True, dtype=torch.bfloat16)
elif name == "swiglu_f16":
    class W(nn.Module):
        def __init__(s): super().__init__(); s.a = nn.Linear(32, 64, bias=False); s.b = nn.Linear(32, 64, bias=False); s.c = nn.Linear(64, 32, bias=False)
        def forward(s, x): return s.c(F.silu(s.a(x)) * s.b(x))
    run(W(), x4(4, 32, dt=torch.float16), dtype=torch.float16)
elif name == "deformable_grid":
    class D(nn.Module):
        def forward(s, x, g): return F.grid_sample(x, g, align_corners=False)
    run(D(), x4(2, 3, 8, 8), x4(2, 4, 4, 2).clamp(-1, 1))
elif name == "topk_gather":
    class T(nn.Module):
        def forward(s, x): v, i = x.topk(5, -1); return torch.gather(x, -1, i) * v.softmax(-1) + x.amax(-1, keepdim=True)
    run(T(), x4(6, 40))
elif name == "attention_mask_train":
    class A(nn.Module):
        def __init__(s): super().__init__(); s.q = nn.Linear(32, 32)
        def forward(s, x, m):
            q = s.q(x).view(2, 10, 4, 8).transpose(1, 2)
            return F.scaled_dot_product_attention(q, q, q, attn_mask=m).sum()
    run(A(), x4(2, 10, 32), torch.rand(10, 10, device=dev) > 0.3, train=True)
