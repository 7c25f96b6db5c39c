# survey_models2.py — the second batch of tests/fixtures/unseen/logs.tgz (cpu and cuda, dynamic shapes);
# run on the GPU machine as survey_models.py: OUT=/path python3 tests/tools/survey_models2.py
import os, sys, subprocess
OUT = os.environ.get("OUT", "/tmp/survey2")
MODELS = ["cpu_mlp_ln_train", "cpu_embedding_bag", "cpu_encoder_layer", "cpu_attention_infer", "cpu_conv_bn_eval",
          "cuda_mha_train", "cuda_activations", "cuda_pools", "cuda_conv3d", "cuda_unet_skip", "cuda_masked_softmax",
          "cuda_scans", "cuda_einsum", "cuda_index_add_gnn", "cuda_dropout2d_train", "cuda_dynamic_mlp", "cpu_dynamic_norm",
          "cuda_layernorm_nobias_bf16", "cuda_where_clamp_int"]
if len(sys.argv) == 1:
    os.makedirs(f"{OUT}/logs", exist_ok=True)
    for m in MODELS:
        env = dict(os.environ, TORCH_TRACE=f"{OUT}/logs/{m}")
        r = subprocess.run([sys.executable, __file__, m], env=env, capture_output=True, text=True, timeout=300)
        print(m, "rc", r.returncode, (r.stdout + r.stderr).strip().splitlines()[-1:] if r.returncode else "")
    sys.exit(0)
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
name = sys.argv[1]
dev = "cpu" if name.startswith("cpu") else "cuda"
def run(m, *xs, train=False, dtype=None, dynamic=None):
    m = m.to(dev)
    if dtype: m = m.to(dtype)
    cm = torch.compile(m, dynamic=dynamic)
    y = cm(*xs)
    if train:
        (y.float().sum() if isinstance(y, torch.Tensor) else sum(t.float().sum() for t in y)).backward()
    if dynamic:
        xs2 = [torch.cat([x, x], 0) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in xs]
        cm(*xs2)
    print("ok")
X = lambda *s, dt=torch.float32: torch.randn(*s, device=dev, dtype=dt)
if name == "cpu_mlp_ln_train":
    run(nn.Sequential(nn.Linear(32, 64), nn.LayerNorm(64), nn.GELU(approximate="tanh"), nn.Linear(64, 8)), X(16, 32), train=True)
elif name == "cpu_embedding_bag":
    class E(nn.Module):
        def __init__(s): super().__init__(); s.e = nn.EmbeddingBag(50, 16, mode="sum"); s.fc = nn.Linear(16, 4)
        def forward(s, i, o): return s.fc(s.e(i, o))
    run(E(), torch.randint(0, 50, (20,), device=dev), torch.tensor([0, 5, 12], device=dev))
elif name == "cpu_encoder_layer":
    run(nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True), X(2, 10, 32), train=True)
elif name == "cpu_attention_infer":
    class A(nn.Module):
        def forward(s, q, k, v): return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    with torch.no_grad():
        run(A(), X(2, 4, 16, 8), X(2, 4, 16, 8), X(2, 4, 16, 8))
elif name == "cpu_conv_bn_eval":
    with torch.no_grad():
        run(nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU6(), nn.Conv2d(8, 8, 3, groups=8), nn.Hardswish()).eval(), X(2, 3, 12, 12))
elif name == "cuda_mha_train":
    class M(nn.Module):
        def __init__(s): super().__init__(); s.a = nn.MultiheadAttention(32, 4, batch_first=True)
        def forward(s, x): return s.a(x, x, x, need_weights=False)[0]
    run(M(), X(2, 8, 32), train=True)
elif name == "cuda_activations":
    class A(nn.Module):
        def forward(s, x): return F.mish(x) + F.hardswish(x) + F.elu(x) + F.selu(x) + F.softplus(x, beta=2) + F.leaky_relu(x, 0.2) + F.hardsigmoid(x) + F.logsigmoid(x)
    run(A(), X(64, 64), train=True)
elif name == "cuda_pools":
    class P(nn.Module):
        def forward(s, x): return F.avg_pool2d(x, 3, 2, 1) .sum() + F.adaptive_max_pool2d(x, 3).sum() + F.max_pool2d(x, 2).mean()
    run(P(), X(2, 4, 9, 9), train=True)
elif name == "cuda_conv3d":
    run(nn.Sequential(nn.Conv3d(2, 4, 3, padding=1), nn.ReLU(), nn.AvgPool3d(2)), X(1, 2, 6, 6, 6), train=True)
elif name == "cuda_unet_skip":
    class U(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(8, 4, 1)
        def forward(s, x, skip): return s.c(torch.cat([F.interpolate(x, scale_factor=2, mode="nearest"), skip], 1))
    run(U(), X(2, 4, 4, 4), X(2, 4, 8, 8), train=True)
elif name == "cuda_masked_softmax":
    class S(nn.Module):
        def forward(s, x, m): return x.masked_fill(m, float("-inf")).softmax(-1)
    run(S(), X(4, 16, 16), torch.rand(4, 16, 16, device=dev) > 0.8)
elif name == "cuda_scans":
    class C(nn.Module):
        def forward(s, x): return torch.cumprod(x.sigmoid(), 1) + torch.logcumsumexp(x, 1) + torch.cummax(x, 1)[0]
    run(C(), X(4, 32))
elif name == "cuda_einsum":
    class E(nn.Module):
        def forward(s, a, b): return torch.einsum("bij,bjk->bik", a, b).relu() + torch.einsum("bii->b", a).view(-1, 1, 1)
    run(E(), X(3, 8, 8), X(3, 8, 5))
elif name == "cuda_index_add_gnn":
    class G(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(16, 16)
        def forward(s, x, src, dst):
            msg = s.l(x)[src]
            return torch.zeros_like(x).index_add(0, dst, msg).relu()
    run(G(), X(10, 16), torch.randint(0, 10, (30,), device=dev), torch.randint(0, 10, (30,), device=dev), train=True)
elif name == "cuda_dropout2d_train":
    run(nn.Sequential(nn.Conv2d(3, 6, 3), nn.Dropout2d(0.3), nn.ReLU()).train(), X(2, 3, 8, 8), train=True)
elif name == "cuda_dynamic_mlp":
    run(nn.Sequential(nn.Linear(16, 32), nn.SiLU(), nn.Linear(32, 4)), X(8, 16), dynamic=True)
elif name == "cpu_dynamic_norm":
    class N(nn.Module):
        def forward(s, x): return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5)
    run(N(), X(6, 10), dynamic=True)
elif name == "cuda_layernorm_nobias_bf16":
    run(nn.Sequential(nn.LayerNorm(64, bias=False), nn.Linear(64, 64, bias=False)), X(8, 64, dt=torch.bfloat16), train=True, dtype=torch.bfloat16)
elif name == "cuda_where_clamp_int":
    class W(nn.Module):
        def forward(s, x, i): return torch.where(i > 2, x.clamp(-0.5, 0.5), x * i.float()) + (i // 2).float().sum()
    run(W(), X(16, 8), torch.randint(0, 6, (16, 8), device=dev))
