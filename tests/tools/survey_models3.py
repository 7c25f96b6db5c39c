# survey_models3.py — the third batch of real graphs the project has never seen (cpu and cuda): small
# models written for the survey, each compiled once with TORCH_TRACE on; training ones run a backward.
# Run on the GPU machine:  OUT=/path python3 tests/tools/survey_models3.py   (4 models at a time)
# then here:               tests/tools/survey_logs.sh /path/logs
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from survey_driver import main, make_run
MODELS = ["cpu_convtranspose_train", "cuda_resblock_groupnorm_train", "cuda_swiglu_rmsnorm_bf16_train",
          "cpu_losses_train", "cuda_label_smoothing_ce_train", "cuda_vit_patch_train", "cpu_pixel_shuffle",
          "cuda_rope_complex", "cpu_topk_gather_scatter", "cuda_argmax_onehot", "cpu_droppath_train",
          "cuda_weight_norm_train", "cpu_instance_norm_train", "cuda_clip_grad_norm", "cpu_sgd_momentum_step",
          "cuda_autocast_fp16_train", "cpu_bucketize_searchsorted", "cuda_top_p_sampling", "cpu_dynamic_sdpa",
          "cuda_conv1d_glu_train", "cuda_scatter_reduce_amax", "cpu_lstm_cell_manual_train",
          "cpu_adaptive_pool1d_eval", "cuda_bicubic_align", "cuda_embedding_padding_train", "cpu_baddbmm_addbmm",
          "cuda_layernorm_residual_fp16", "cpu_gelu_tanh_bf16"]
name = main(__file__, MODELS, "/tmp/survey3")
if name is None:
    sys.exit(0)

import math
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
dev = "cpu" if name.startswith("cpu") else "cuda"
run = make_run(dev)
X = lambda *s, dt=torch.float32, g=False: torch.randn(*s, device=dev, dtype=dt, requires_grad=g)

if name == "cpu_convtranspose_train":
    run(nn.Sequential(nn.ConvTranspose2d(4, 3, 4, stride=2, padding=1), nn.BatchNorm2d(3), nn.LeakyReLU(0.1)), X(2, 4, 5, 5), train=True)
elif name == "cuda_resblock_groupnorm_train":
    class R(nn.Module):
        def __init__(s):
            super().__init__(); s.n1 = nn.GroupNorm(4, 16); s.c1 = nn.Conv2d(16, 16, 3, padding=1)
            s.n2 = nn.GroupNorm(4, 16); s.c2 = nn.Conv2d(16, 16, 3, padding=1); s.t = nn.Linear(8, 16)
        def forward(s, x, t):
            h = s.c1(F.silu(s.n1(x))) + s.t(F.silu(t))[:, :, None, None]
            return x + s.c2(F.silu(s.n2(h)))
    run(R(), X(2, 16, 8, 8), X(2, 8), train=True)
elif name == "cuda_swiglu_rmsnorm_bf16_train":
    class S(nn.Module):
        def __init__(s):
            super().__init__(); s.w = nn.Parameter(torch.ones(64)); s.g = nn.Linear(64, 128, bias=False)
            s.u = nn.Linear(64, 128, bias=False); s.d = nn.Linear(128, 64, bias=False)
        def forward(s, x):
            h = x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * s.w
            return x + s.d(F.silu(s.g(h)) * s.u(h))
    run(S(), X(2, 8, 64, dt=torch.bfloat16), train=True, dtype=torch.bfloat16)
elif name == "cpu_losses_train":
    class L(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 8)
        def forward(s, x, y):
            p = s.l(x)
            return (F.mse_loss(p, y) + F.smooth_l1_loss(p, y, beta=0.5) + F.huber_loss(p, y, delta=2.0)
                    + F.kl_div(F.log_softmax(p, -1), F.softmax(y, -1), reduction="batchmean")
                    + F.binary_cross_entropy_with_logits(p, y.sigmoid(), pos_weight=torch.full((8,), 2.0)))
    run(L(), X(16, 8), X(16, 8), train=True)
elif name == "cuda_label_smoothing_ce_train":
    class C(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(16, 10)
        def forward(s, x, t): return F.cross_entropy(s.l(x), t, label_smoothing=0.1, ignore_index=3)
    run(C(), X(32, 16), torch.randint(0, 10, (32,), device=dev), train=True)
elif name == "cuda_vit_patch_train":
    class V(nn.Module):
        def __init__(s):
            super().__init__(); s.p = nn.Conv2d(3, 32, 4, stride=4); s.cls = nn.Parameter(torch.zeros(1, 1, 32))
            s.pos = nn.Parameter(torch.randn(1, 17, 32) * 0.02); s.n = nn.LayerNorm(32); s.h = nn.Linear(32, 5)
        def forward(s, x):
            t = s.p(x).flatten(2).transpose(1, 2)
            t = torch.cat([s.cls.expand(x.shape[0], -1, -1), t], 1) + s.pos
            return s.h(s.n(t)[:, 0])
    run(V(), X(2, 3, 16, 16), train=True)
elif name == "cpu_pixel_shuffle":
    class P(nn.Module):
        def forward(s, x): return F.interpolate(F.pixel_shuffle(x, 2), scale_factor=1.5, mode="bilinear", align_corners=True) + F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2).mean()
    run(P(), X(1, 8, 6, 6))
elif name == "cuda_rope_complex":
    class R(nn.Module):
        def forward(s, x, f):
            xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
            return torch.view_as_real(xc * f).flatten(3).type_as(x)
    fr = torch.polar(torch.ones(8, 4, device=dev), torch.randn(8, 4, device=dev))[None, :, None, :]
    run(R(), X(2, 8, 2, 8), fr)
elif name == "cpu_topk_gather_scatter":
    class T(nn.Module):
        def forward(s, x, y):
            v, i = x.topk(3, dim=-1)
            return torch.zeros_like(x).scatter(-1, i, v.softmax(-1)) + y.gather(-1, i).sum(-1, keepdim=True)
    run(T(), X(6, 10), X(6, 10))
elif name == "cuda_argmax_onehot":
    class A(nn.Module):
        def __init__(s): super().__init__(); s.e = nn.Embedding(12, 6)
        def forward(s, x):
            a = x.argmax(-1)
            return F.one_hot(a, 12).float() @ s.e.weight + s.e(a) * x.amax(-1, keepdim=True)
    run(A(), X(5, 12))
elif name == "cpu_droppath_train":
    class D(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(16, 16); s.g = nn.Parameter(torch.full((16,), 1e-2))
        def forward(s, x):
            keep = x.new_empty(x.shape[0], 1).bernoulli_(0.8) / 0.8
            return x + s.g * s.l(x) * keep
    run(D().train(), X(8, 16), train=True)
elif name == "cuda_weight_norm_train":
    run(nn.Sequential(nn.utils.parametrizations.weight_norm(nn.Linear(16, 16)), nn.Tanh()), X(4, 16), train=True)
elif name == "cpu_instance_norm_train":
    run(nn.Sequential(nn.Conv2d(3, 4, 3), nn.InstanceNorm2d(4, affine=True), nn.ReLU()), X(2, 3, 8, 8), train=True)
elif name == "cuda_clip_grad_norm":
    ps = [torch.randn(5, 5, device=dev) for _ in range(3)]
    for p in ps: p.grad = torch.randn_like(p)
    def clip(): return torch.nn.utils.clip_grad_norm_(ps, 1.0, foreach=True)
    run(clip)
elif name == "cpu_sgd_momentum_step":
    ps = [torch.randn(4, 4, device=dev, requires_grad=True) for _ in range(3)]
    for p in ps: p.grad = torch.randn_like(p)
    opt = torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=1e-4, foreach=True)
    opt.step()
    def step(): opt.step()
    run(step)
elif name == "cuda_autocast_fp16_train":
    class M(nn.Module):
        def __init__(s): super().__init__(); s.a = nn.Linear(32, 64); s.b = nn.Linear(64, 8)
        def forward(s, x):
            with torch.autocast("cuda", dtype=torch.float16):
                return s.b(F.gelu(s.a(x))).float().log_softmax(-1)
    run(M(), X(16, 32), train=True)
elif name == "cpu_bucketize_searchsorted":
    class B(nn.Module):
        def forward(s, x, edges):
            return torch.bucketize(x, edges).float() + torch.searchsorted(edges, x, right=True).float() * x
    run(B(), X(7, 9), torch.linspace(-2, 2, 9, device=dev))
elif name == "cuda_top_p_sampling":
    class T(nn.Module):
        def forward(s, logits):
            p, i = logits.softmax(-1).sort(-1, descending=True)
            c = p.cumsum(-1)
            p = p.masked_fill(c - p > 0.9, 0.0)
            return torch.zeros_like(p).scatter(-1, i, p / p.sum(-1, keepdim=True))
    run(T(), X(4, 50))
elif name == "cpu_dynamic_sdpa":
    class A(nn.Module):
        def __init__(s): super().__init__(); s.qkv = nn.Linear(16, 48)
        def forward(s, x):
            q, k, v = s.qkv(x).view(x.shape[0], x.shape[1], 3, 2, 8).permute(2, 0, 3, 1, 4)
            return F.scaled_dot_product_attention(q, k, v).transpose(1, 2).flatten(2)
    run(A(), X(2, 6, 16), dynamic=True)
elif name == "cuda_conv1d_glu_train":
    run(nn.Sequential(nn.Conv1d(8, 16, 5, padding=2), nn.GLU(1), nn.Conv1d(8, 8, 3, padding=1, groups=8), nn.BatchNorm1d(8), nn.SiLU()), X(2, 8, 20), train=True)
elif name == "cuda_scatter_reduce_amax":
    class G(nn.Module):
        def forward(s, x, idx):
            out = torch.full((6, x.shape[1]), -1e9, device=x.device)
            return out.scatter_reduce(0, idx[:, None].expand_as(x), x, reduce="amax", include_self=False) + torch.zeros(6, x.shape[1], device=x.device).index_reduce(0, idx, x, "mean", include_self=False)
    run(G(), X(20, 4), torch.randint(0, 6, (20,), device=dev))
elif name == "cpu_lstm_cell_manual_train":
    class C(nn.Module):
        def __init__(s): super().__init__(); s.x = nn.Linear(8, 64); s.h = nn.Linear(16, 64, bias=False)
        def forward(s, x, h, c):
            i, f, g, o = (s.x(x) + s.h(h)).chunk(4, -1)
            c = f.sigmoid() * c + i.sigmoid() * g.tanh()
            return o.sigmoid() * c.tanh(), c
    run(C(), X(4, 8), X(4, 16), X(4, 16), train=True)
elif name == "cpu_adaptive_pool1d_eval":
    with torch.no_grad():
        run(nn.Sequential(nn.Conv1d(4, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool1d(5), nn.AdaptiveMaxPool1d(2), nn.Flatten(), nn.Linear(16, 3)).eval(), X(3, 4, 17))
elif name == "cuda_bicubic_align":
    class B(nn.Module):
        def forward(s, x): return F.interpolate(x, size=(7, 9), mode="bicubic", align_corners=False) + F.interpolate(x, size=(7, 9), mode="nearest-exact")
    run(B(), X(1, 2, 5, 6))
elif name == "cuda_embedding_padding_train":
    class E(nn.Module):
        def __init__(s): super().__init__(); s.e = nn.Embedding(20, 8, padding_idx=0); s.l = nn.Linear(8, 1)
        def forward(s, i): return s.l(s.e(i).mean(1))
    run(E(), torch.randint(0, 20, (4, 7), device=dev), train=True)
elif name == "cpu_baddbmm_addbmm":
    class B(nn.Module):
        def forward(s, c, a, b): return torch.baddbmm(c, a, b, beta=0.5, alpha=2.0).relu().sum(0) + torch.addbmm(c[0], a, b, alpha=0.1)
    run(B(), X(3, 4, 5), X(3, 4, 6), X(3, 6, 5))
elif name == "cuda_layernorm_residual_fp16":
    class L(nn.Module):
        def __init__(s): super().__init__(); s.n = nn.LayerNorm(32); s.l = nn.Linear(32, 32)
        def forward(s, x): return x + s.l(s.n(x)).relu()
    with torch.no_grad():
        run(L(), X(4, 10, 32, dt=torch.float16), dtype=torch.float16)
elif name == "cpu_gelu_tanh_bf16":
    class G(nn.Module):
        def forward(s, x, w): return F.gelu(x @ w, approximate="tanh").to(torch.float32).softmax(-1)
    run(G(), X(8, 16, dt=torch.bfloat16), X(16, 12, dt=torch.bfloat16))
