# survey_models5.py — the fifth batch of real graphs the project has never seen: Conformer, BERT
# embeddings, GQA attention, a KV-cache decode step, Transformer-XL's relative shift, ResNet and
# UNet blocks, SegFormer's reduced attention, Mamba's selective scan, DETR's box losses, fake
# quantization, Adam with amsgrad, distillation, Gumbel-softmax, mixup, channels-last training,
# dynamic shapes, integer and boolean tensor math, cpu and cuda.
# Run on the GPU machine:  OUT=/path python3 tests/tools/survey_models5.py   (4 models at a time)
# then here:               tests/tools/survey_logs.sh /path/logs
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from survey_driver import child
MODELS = ["cuda_conformer_conv_train", "cuda_bert_embeddings_train", "cuda_gqa_attention", "cpu_kv_cache_decode",
          "cuda_relative_shift_xl", "cpu_resnet_basic_block_train", "cuda_unet_up_concat_train", "cuda_segformer_attn",
          "cuda_selective_scan", "cuda_giou_loss_train", "cpu_fake_quant_train", "cuda_adam_amsgrad_step",
          "cuda_distill_kl_train", "cuda_gumbel_softmax", "cpu_mixup_ce_train", "cuda_channels_last_bn_train",
          "cpu_dynamic_attention", "cuda_int_index_math", "cpu_bool_logic", "cuda_mish_hardswish_train",
          "cuda_std_logsumexp", "cpu_pixel_unshuffle_bilinear", "cuda_layer_scale_droppath_train", "cpu_avgpool3d_lrn",
          "cuda_bf16_mlp_gelu_train", "cuda_cross_attn_kv_cache", "cpu_group_conv_eval", "cuda_huber_smoothl1_train"]
name, dev, run, X = child(__file__, MODELS, "/tmp/survey5")

import math
import torch, torch.nn as nn, torch.nn.functional as F

if name == "cuda_conformer_conv_train":
    class C(nn.Module):
        def __init__(s):
            super().__init__(); s.n = nn.LayerNorm(16); s.pw1 = nn.Conv1d(16, 32, 1)
            s.dw = nn.Conv1d(16, 16, 5, padding=2, groups=16); s.bn = nn.BatchNorm1d(16); s.pw2 = nn.Conv1d(16, 16, 1)
        def forward(s, x):
            h = s.n(x).transpose(1, 2)
            h = F.glu(s.pw1(h), dim=1)
            h = F.silu(s.bn(s.dw(h)))
            return x + s.pw2(h).transpose(1, 2)
    run(C(), X(2, 12, 16), train=True)
elif name == "cuda_bert_embeddings_train":
    class B(nn.Module):
        def __init__(s):
            super().__init__(); s.w = nn.Embedding(50, 16); s.p = nn.Embedding(20, 16); s.t = nn.Embedding(2, 16)
            s.n = nn.LayerNorm(16, eps=1e-12); s.d = nn.Dropout(0.1)
        def forward(s, ids, tt):
            pos = torch.arange(ids.shape[1], device=ids.device)[None]
            return s.d(s.n(s.w(ids) + s.p(pos) + s.t(tt)))
    run(B(), torch.randint(0, 50, (3, 10), device=dev), torch.randint(0, 2, (3, 10), device=dev), train=True)
elif name == "cuda_gqa_attention":
    class G(nn.Module):
        def __init__(s): super().__init__(); s.q = nn.Linear(32, 32); s.kv = nn.Linear(32, 16)
        def forward(s, x):
            B, L, _ = x.shape
            q = s.q(x).view(B, L, 4, 8).transpose(1, 2)
            k, v = s.kv(x).view(B, L, 2, 2, 4).permute(2, 0, 3, 1, 4).reshape(2, B, 2, L, 4).repeat(1, 1, 1, 1, 2).unbind(0)
            k, v = k.repeat_interleave(2, 1), v.repeat_interleave(2, 1)
            return F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, L, 32)
    with torch.no_grad():
        run(G(), X(2, 8, 32))
elif name == "cpu_kv_cache_decode":
    class K(nn.Module):
        def __init__(s):
            super().__init__(); s.qkv = nn.Linear(16, 48)
            s.register_buffer("kc", torch.zeros(1, 2, 12, 8)); s.register_buffer("vc", torch.zeros(1, 2, 12, 8))
        def forward(s, x, pos):
            q, k, v = s.qkv(x).view(1, 1, 3, 2, 8).permute(2, 0, 3, 1, 4)
            s.kc.index_copy_(2, pos, k); s.vc.index_copy_(2, pos, v)
            mask = torch.arange(12) <= pos
            return F.scaled_dot_product_attention(q, s.kc, s.vc, attn_mask=mask[None, None, None])
    with torch.no_grad():
        run(K(), X(1, 1, 16), torch.tensor([3]))
elif name == "cuda_relative_shift_xl":
    class R(nn.Module):
        def forward(s, q, r):
            bd = q @ r.transpose(-1, -2)
            b, h, L, M = bd.shape
            bd = F.pad(bd, (1, 0)).view(b, h, M + 1, L)[:, :, 1:].view(b, h, L, M)
            return bd.softmax(-1)
    with torch.no_grad():
        run(R(), X(2, 2, 6, 8), X(2, 2, 6, 8))
elif name == "cpu_resnet_basic_block_train":
    class Bk(nn.Module):
        def __init__(s):
            super().__init__(); s.c1 = nn.Conv2d(8, 8, 3, padding=1, bias=False); s.b1 = nn.BatchNorm2d(8)
            s.c2 = nn.Conv2d(8, 8, 3, padding=1, bias=False); s.b2 = nn.BatchNorm2d(8)
        def forward(s, x): return F.relu(x + s.b2(s.c2(F.relu(s.b1(s.c1(x))))))
    run(Bk(), X(2, 8, 8, 8), train=True)
elif name == "cuda_unet_up_concat_train":
    class U(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(12, 4, 3, padding=1); s.g = nn.GroupNorm(2, 4)
        def forward(s, x, skip):
            u = F.interpolate(x, scale_factor=2, mode="nearest")
            return F.silu(s.g(s.c(torch.cat([u, skip], 1))))
    run(U(), X(2, 8, 4, 4), X(2, 4, 8, 8), train=True)
elif name == "cuda_segformer_attn":
    class S(nn.Module):
        def __init__(s):
            super().__init__(); s.q = nn.Linear(16, 16); s.kv = nn.Linear(16, 32); s.sr = nn.Conv2d(16, 16, 2, 2); s.n = nn.LayerNorm(16)
        def forward(s, x):
            B, N, C = x.shape
            q = s.q(x).view(B, N, 2, 8).transpose(1, 2)
            r = s.sr(x.transpose(1, 2).reshape(B, C, 8, 8)).flatten(2).transpose(1, 2)
            k, v = s.kv(s.n(r)).view(B, -1, 2, 2, 8).permute(2, 0, 3, 1, 4)
            return ((q @ k.transpose(-1, -2)) * 8 ** -0.5).softmax(-1).matmul(v).transpose(1, 2).reshape(B, N, C)
    with torch.no_grad():
        run(S(), X(2, 64, 16))
elif name == "cuda_selective_scan":
    def scan(u, delta, A, Bm, Cm):
        dA = torch.exp(delta[..., None] * A)
        dBu = delta[..., None] * Bm[:, :, None] * u[..., None]
        h = torch.zeros(u.shape[0], u.shape[2], A.shape[1], device=u.device)
        ys = []
        for t in range(u.shape[1]):
            h = dA[:, t] * h + dBu[:, t]
            ys.append((h * Cm[:, t, None]).sum(-1))
        return torch.stack(ys, 1)
    with torch.no_grad():
        run(scan, X(2, 6, 8), F.softplus(X(2, 6, 8)), -torch.rand(8, 4, device=dev), X(2, 6, 4), X(2, 6, 4))
elif name == "cuda_giou_loss_train":
    class G(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 4)
        def forward(s, f, t):
            p = s.l(f).sigmoid()
            p = torch.cat([p[:, :2], p[:, :2] + p[:, 2:]], 1)
            lt, rb = torch.max(p[:, :2], t[:, :2]), torch.min(p[:, 2:], t[:, 2:])
            inter = (rb - lt).clamp(min=0).prod(1)
            area = lambda b: (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
            union = area(p) + area(t) - inter
            clt, crb = torch.min(p[:, :2], t[:, :2]), torch.max(p[:, 2:], t[:, 2:])
            c = (crb - clt).clamp(min=0).prod(1)
            giou = inter / union - (c - union) / c
            return (1 - giou).mean() + F.l1_loss(p, t)
    t = torch.rand(6, 2, device=dev) * 0.5
    run(G(), X(6, 8), torch.cat([t, t + 0.3], 1), train=True)
elif name == "cpu_fake_quant_train":
    class Q(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 8)
        def forward(s, x):
            w = torch.fake_quantize_per_channel_affine(s.l.weight, torch.full((8,), 0.02), torch.zeros(8, dtype=torch.int32), 0, -128, 127)
            a = torch.fake_quantize_per_tensor_affine(x, 0.05, 0, -128, 127)
            return F.linear(a, w, s.l.bias).relu()
    run(Q(), X(4, 8), train=True)
elif name == "cuda_adam_amsgrad_step":
    ps = [torch.randn(16, 8, device=dev, requires_grad=True), torch.randn(8, device=dev, requires_grad=True)]
    for p in ps: p.grad = torch.randn_like(p)
    opt = torch.optim.Adam(ps, lr=1e-3, amsgrad=True, weight_decay=0.01, foreach=True)
    @torch.compile
    def step(): opt.step()
    step(); step(); print("ok")
elif name == "cuda_distill_kl_train":
    class D(nn.Module):
        def __init__(s): super().__init__(); s.s = nn.Linear(8, 10)
        def forward(s, x, tl, y):
            sl = s.s(x); T = 2.0
            kd = F.kl_div(F.log_softmax(sl / T, -1), F.softmax(tl / T, -1), reduction="batchmean") * T * T
            return kd + F.cross_entropy(sl, y)
    run(D(), X(6, 8), X(6, 10), torch.randint(0, 10, (6,), device=dev), train=True)
elif name == "cuda_gumbel_softmax":
    with torch.no_grad():
        run(lambda lg: F.gumbel_softmax(lg, tau=0.5, hard=True), X(4, 7))
elif name == "cpu_mixup_ce_train":
    class M(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 5)
        def forward(s, x, y, perm, lam):
            xm = torch.lerp(x[perm], x, lam)
            o = s.l(xm)
            return lam * F.cross_entropy(o, y) + (1 - lam) * F.cross_entropy(o, y[perm], label_smoothing=0.1)
    run(M(), X(6, 8), torch.randint(0, 5, (6,)), torch.randperm(6), torch.tensor(0.7), train=True)
elif name == "cuda_channels_last_bn_train":
    class CL(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(8, 16, 3, padding=1); s.b = nn.BatchNorm2d(16)
        def forward(s, x): return F.hardtanh(s.b(s.c(x)), 0, 6)
    run(CL().to(memory_format=torch.channels_last), X(2, 8, 6, 6).to(memory_format=torch.channels_last), train=True)
elif name == "cpu_dynamic_attention":
    class A(nn.Module):
        def __init__(s): super().__init__(); s.qkv = nn.Linear(16, 48); s.o = nn.Linear(16, 16)
        def forward(s, x):
            B, L, C = x.shape
            q, k, v = s.qkv(x).view(B, L, 3, 2, 8).permute(2, 0, 3, 1, 4)
            a = (q @ k.transpose(-1, -2) / math.sqrt(8)).softmax(-1) @ v
            return s.o(a.transpose(1, 2).reshape(B, L, C))
    with torch.no_grad():
        run(A(), X(2, 5, 16), dynamic=True)
elif name == "cuda_int_index_math":
    def f(a, b, x):
        i = torch.div(a, 3, rounding_mode="floor") + torch.remainder(b, 5) * 2
        j = (a * 7 + b).fmod(11).abs().clamp(max=9)
        return x[i.clamp(0, 9)] + x[j] * (a > b).to(x.dtype)[:, None], i.bitwise_and(6) ^ j
    with torch.no_grad():
        run(f, torch.randint(-20, 20, (12,), device=dev), torch.randint(-20, 20, (12,), device=dev), X(10, 3))
elif name == "cpu_bool_logic":
    def f(x, y):
        m = torch.logical_xor(x > 0, y < 0) | torch.isnan(x / y)
        n = (~m).sum(1, dtype=torch.int64)
        return torch.where(m, x, y.abs()).masked_fill(torch.isinf(y), 0.0), n, m.all(0), m.any(1)
    with torch.no_grad():
        run(f, X(5, 6), X(5, 6))
elif name == "cuda_mish_hardswish_train":
    class A(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 24)
        def forward(s, x):
            a, b, c = s.l(x).chunk(3, -1)
            return F.mish(a) + F.hardswish(b) + F.softplus(c, beta=2, threshold=5) + F.selu(a * b) + F.celu(c, 0.5)
    run(A(), X(5, 8), train=True)
elif name == "cuda_std_logsumexp":
    def f(x):
        z = (x - x.mean(-1, keepdim=True)) / x.std(-1, keepdim=True)
        return torch.logsumexp(z, -1), x.var(0, correction=0), x.amax(-1) - x.amin(-1), x.argmin(0)
    with torch.no_grad():
        run(f, X(7, 33))
elif name == "cpu_pixel_unshuffle_bilinear":
    def f(x):
        y = F.pixel_unshuffle(x, 2)
        return F.interpolate(y, size=(5, 7), mode="bilinear", align_corners=False) + F.avg_pool2d(y, 2, ceil_mode=True, count_include_pad=False).mean()
    with torch.no_grad():
        run(f, X(2, 3, 8, 10))
elif name == "cuda_layer_scale_droppath_train":
    class L(nn.Module):
        def __init__(s): super().__init__(); s.f = nn.Linear(16, 16); s.g = nn.Parameter(torch.full((16,), 0.1)); s.n = nn.LayerNorm(16)
        def forward(s, x):
            keep = (torch.rand(x.shape[0], 1, 1, device=x.device) > 0.2).to(x.dtype) / 0.8
            return x + keep * s.g * F.gelu(s.f(s.n(x)), approximate="tanh")
    run(L(), X(4, 6, 16), train=True)
elif name == "cpu_avgpool3d_lrn":
    class P(nn.Module):
        def __init__(s): super().__init__(); s.lrn = nn.LocalResponseNorm(3)
        def forward(s, x): return s.lrn(F.avg_pool3d(x, (1, 2, 2)).flatten(2, 3))
    with torch.no_grad():
        run(P(), X(2, 6, 3, 8, 8))
elif name == "cuda_bf16_mlp_gelu_train":
    class M(nn.Module):
        def __init__(s): super().__init__(); s.a = nn.Linear(32, 64); s.b = nn.Linear(64, 32); s.n = nn.LayerNorm(32)
        def forward(s, x): return s.n(x + s.b(F.gelu(s.a(x))))
    run(M(), X(4, 8, 32, dt=torch.bfloat16), train=True, dtype=torch.bfloat16)
elif name == "cuda_cross_attn_kv_cache":
    class X2(nn.Module):
        def __init__(s): super().__init__(); s.q = nn.Linear(16, 16); s.o = nn.Linear(16, 16)
        def forward(s, x, k, v):
            q = s.q(x).view(x.shape[0], -1, 2, 8).transpose(1, 2)
            a = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)
            return s.o(a.transpose(1, 2).flatten(2)) + x
    with torch.no_grad():
        run(X2(), X(2, 3, 16), X(2, 2, 9, 8), X(2, 2, 9, 8))
elif name == "cpu_group_conv_eval":
    m = nn.Sequential(nn.Conv2d(8, 16, 3, groups=4, padding=1), nn.BatchNorm2d(16), nn.PReLU(16),
                      nn.Conv2d(16, 8, 1, groups=2), nn.Hardsigmoid()).eval()
    with torch.no_grad():
        run(m, X(2, 8, 7, 7))
elif name == "cuda_huber_smoothl1_train":
    class H(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(6, 3)
        def forward(s, x, t):
            p = s.l(x)
            return F.huber_loss(p, t, delta=0.5) + F.smooth_l1_loss(p, t, beta=0.3) + F.soft_margin_loss(p, t.sign()) + F.poisson_nll_loss(p, t.abs())
    run(H(), X(5, 6), X(5, 3), train=True)
