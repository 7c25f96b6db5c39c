# survey_models8.py — the eighth batch of real graphs the project has never seen: 2-d cross entropy
# with ignore_index and class weights (nll_loss2d), linalg inv / det / solve training, QR / eigh /
# svdvals on the GPU, 3-d grid sampling, RReLU and alpha dropout in training, sampling ops
# (multinomial, bernoulli, normal), an SSIM loss, a Gram-matrix style loss, PointNet, SDPA with
# dropout (GPU) and SDPA training on the CPU, cumprod / diff / trapezoid backwards, advanced
# indexing, in-place mutation of views (the *_scatter ops), input and buffer mutation, dynamic
# sizes with arange, AMP's unscale / update-scale, dilated depthwise and grouped transposed convs,
# dilated ceil-mode max pooling, avg pooling with divisor_override, LP pooling, a float64 MLP,
# torch._int_mm, fp8 torch._scaled_mm, kron / tensordot / cross / block_diag, nan-aware
# reductions, count_nonzero / any / all / argmin, frexp / ldexp / copysign, matrix_power, pdist,
# Switch-style MoE capacity routing, NeRF positional encoding, YOLO box decoding, a WaveNet gated
# block and a channels-last conv on the CPU; cpu and cuda.
# Run on the GPU machine:  OUT=/path JOBS=9 python3 tests/tools/survey_models8.py
# then here:               tests/tools/survey_logs.sh /path/logs
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from survey_driver import child
MODELS = ["cuda_segmentation_ce2d_train", "cpu_linalg_inv_det_solve_train", "cuda_linalg_qr_eigh_svdvals", "cuda_grid_sample_3d_train",
          "cuda_rrelu_celu_selu_train", "cpu_alpha_dropout_train", "cuda_sampling_ops", "cpu_ssim_loss_train",
          "cuda_gram_style_loss_train", "cpu_pointnet_train", "cuda_sdpa_dropout_causal_train", "cpu_sdpa_train",
          "cpu_cumprod_diff_trapz_train", "cuda_adv_indexing_train", "cpu_inplace_view_mutation", "cuda_input_buffer_mutation",
          "cpu_dynamic_arange_view", "cuda_amp_unscale_update", "cuda_dilated_depthwise_conv_train", "cpu_convtranspose_groups_dilation_train",
          "cuda_maxpool_dilation_ceil_train", "cpu_avgpool_ceil_divisor_train", "cuda_lp_pool_train", "cpu_float64_mlp_train",
          "cuda_int_mm_dequant", "cuda_scaled_mm_fp8", "cpu_kron_tensordot_cross", "cuda_nan_reductions",
          "cpu_count_any_all_argmin", "cpu_frexp_ldexp_copysign", "cuda_matrix_power_triu", "cpu_pdist_train",
          "cuda_moe_switch_capacity_train", "cuda_nerf_posenc_mlp_train", "cpu_yolo_decode", "cuda_wavenet_gated_train",
          "cpu_channels_last_conv_train"]
name, dev, run, X = child(__file__, MODELS, "/tmp/survey8")

import math
import torch, torch.nn as nn, torch.nn.functional as F

if name == "cuda_segmentation_ce2d_train":
    class Seg(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(3, 5, 3, padding=1); s.register_buffer("w", torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0]))
        def forward(s, x, t):
            return F.cross_entropy(s.c(x), t, weight=s.w, ignore_index=255)
    t = torch.randint(0, 5, (2, 6, 6), device=dev); t[0, 0, :3] = 255
    run(Seg(), X(2, 3, 6, 6), t, train=True)
elif name == "cpu_linalg_inv_det_solve_train":
    class L(nn.Module):
        def __init__(s): super().__init__(); s.a = nn.Parameter(torch.eye(4) * 2 + torch.randn(4, 4) * 0.1)
        def forward(s, b):
            a = s.a.expand(3, 4, 4) + 0.01 * b[..., :4, :4]
            return torch.linalg.inv(a).sum(), torch.linalg.det(a), torch.linalg.solve(a, b[..., :4, :])
    run(L(), X(3, 4, 5), train=True)
elif name == "cuda_linalg_qr_eigh_svdvals":
    def f(a):
        q, r = torch.linalg.qr(a)
        s = a @ a.mT + torch.eye(5, device=a.device)
        w, v = torch.linalg.eigh(s)
        return q.abs() + 1, r.diagonal(dim1=-2, dim2=-1).abs(), w, torch.linalg.svdvals(a)
    run(f, X(2, 5, 5))
elif name == "cuda_grid_sample_3d_train":
    class G(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv3d(2, 3, 1)
        def forward(s, v, g):
            return F.grid_sample(s.c(v), g, mode="bilinear", padding_mode="border", align_corners=True) * 2 + \
                F.grid_sample(v, g, mode="nearest", padding_mode="zeros", align_corners=False).sum(1, keepdim=True)
    run(G(), X(2, 2, 4, 5, 6), torch.rand(2, 3, 3, 3, 3, device=dev) * 2.2 - 1.1, train=True)
elif name == "cuda_rrelu_celu_selu_train":
    class R(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(16, 16); s.r = nn.RReLU(0.1, 0.3)
        def forward(s, x):
            h = s.l(x)
            return s.r(h) + F.celu(h, alpha=0.7) + F.selu(h) + F.softsign(h)
    run(R().train(), X(8, 16), train=True)
elif name == "cpu_alpha_dropout_train":
    class A(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(12, 12); s.a = nn.AlphaDropout(0.2); s.f = nn.FeatureAlphaDropout(0.3)
        def forward(s, x):
            h = F.selu(s.l(x))
            return s.a(h) + s.f(h.view(4, 3, 4, 3)).view(4, 3, 12).sum(1).unsqueeze(1).expand(4, 3, 12).reshape(12, 12)
    run(A().train(), X(12, 12), train=True)
elif name == "cuda_sampling_ops":
    def f(logits, p):
        probs = logits.softmax(-1)
        idx = torch.multinomial(probs, 3, replacement=True)
        b = torch.bernoulli(p)
        n = torch.normal(p, 0.5)
        e = torch.empty_like(p).exponential_(2.0)
        return idx, b * n + e, torch.rand_like(p).argsort(-1)
    run(f, X(4, 10), torch.rand(4, 10, device=dev))
elif name == "cpu_ssim_loss_train":
    def gauss(n, sigma):
        g = torch.exp(-((torch.arange(n, dtype=torch.float32) - n // 2) ** 2) / (2 * sigma ** 2))
        g = g / g.sum()
        return (g[:, None] * g[None, :]).expand(3, 1, n, n).contiguous()
    class S(nn.Module):
        def __init__(s): super().__init__(); s.register_buffer("w", gauss(5, 1.5)); s.c = nn.Conv2d(3, 3, 3, padding=1)
        def forward(s, x, y):
            x = s.c(x)
            mu_x = F.conv2d(x, s.w, padding=2, groups=3); mu_y = F.conv2d(y, s.w, padding=2, groups=3)
            sxx = F.conv2d(x * x, s.w, padding=2, groups=3) - mu_x ** 2
            syy = F.conv2d(y * y, s.w, padding=2, groups=3) - mu_y ** 2
            sxy = F.conv2d(x * y, s.w, padding=2, groups=3) - mu_x * mu_y
            c1, c2 = 0.01 ** 2, 0.03 ** 2
            ssim = ((2 * mu_x * mu_y + c1) * (2 * sxy + c2)) / ((mu_x ** 2 + mu_y ** 2 + c1) * (sxx + syy + c2))
            return 1 - ssim.mean()
    run(S(), X(2, 3, 10, 10), X(2, 3, 10, 10), train=True)
elif name == "cuda_gram_style_loss_train":
    class G(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(3, 8, 3, padding=1)
        def forward(s, x, target_gram):
            f = F.relu(s.c(x)); b, c, h, w = f.shape
            fm = f.view(b, c, h * w)
            gram = torch.bmm(fm, fm.transpose(1, 2)) / (c * h * w)
            return F.mse_loss(gram, target_gram) + 1e-3 * (f[..., 1:, :] - f[..., :-1, :]).abs().mean()
    run(G(), X(2, 3, 8, 8), X(2, 8, 8), train=True)
elif name == "cpu_pointnet_train":
    class P(nn.Module):
        def __init__(s):
            super().__init__(); s.t = nn.Conv1d(3, 9, 1); s.c1 = nn.Conv1d(3, 16, 1); s.b1 = nn.BatchNorm1d(16)
            s.c2 = nn.Conv1d(16, 32, 1); s.b2 = nn.BatchNorm1d(32); s.h = nn.Linear(32, 4)
        def forward(s, pts):
            T = s.t(pts).max(-1).values.view(-1, 3, 3) + torch.eye(3)
            x = torch.bmm(T, pts)
            x = F.relu(s.b1(s.c1(x))); x = F.relu(s.b2(s.c2(x)))
            return F.log_softmax(s.h(x.max(-1).values), -1)
    run(P().train(), X(4, 3, 20), train=True)
elif name == "cuda_sdpa_dropout_causal_train":
    class A(nn.Module):
        def __init__(s): super().__init__(); s.qkv = nn.Linear(32, 96); s.o = nn.Linear(32, 32)
        def forward(s, x):
            b, t, _ = x.shape
            q, k, v = s.qkv(x).view(b, t, 3, 4, 8).permute(2, 0, 3, 1, 4)
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=0.1, is_causal=True)
            return s.o(y.transpose(1, 2).reshape(b, t, 32))
    run(A().half(), X(2, 16, 32, dt=torch.float16), train=True)
elif name == "cpu_sdpa_train":
    class A(nn.Module):
        def __init__(s): super().__init__(); s.qkv = nn.Linear(16, 48)
        def forward(s, x, mask):
            b, t, _ = x.shape
            q, k, v = s.qkv(x).view(b, t, 3, 2, 8).permute(2, 0, 3, 1, 4)
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask).transpose(1, 2).reshape(b, t, 16)
    run(A(), X(2, 6, 16), torch.randn(6, 6), train=True)
elif name == "cpu_cumprod_diff_trapz_train":
    class C(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 8)
        def forward(s, x):
            h = torch.sigmoid(s.l(x)) + 0.5
            return torch.cumprod(h, 1), torch.diff(h, dim=1, prepend=h[:, :1]), torch.trapezoid(h, dx=0.5, dim=1), torch.cumulative_trapezoid(h, dim=0)
    run(C(), X(5, 8), train=True)
elif name == "cuda_adv_indexing_train":
    class I(nn.Module):
        def __init__(s): super().__init__(); s.w = nn.Parameter(torch.randn(4, 6, 5))
        def forward(s, i, j):
            a = s.w[:, i, j]            # adjacent advanced indices
            b = s.w[i % 4, :, j]        # separated: the indexed dims go first
            y = s.w.clone()
            y[1, i, 2] = 0.0
            y[:, :, 0] += s.w[:, :, 1]
            return a.sum(0) + b.sum(1), y
    run(I(), torch.tensor([0, 2, 5, 1], device=dev), torch.tensor([1, 4, 0, 3], device=dev), train=True)
elif name == "cpu_inplace_view_mutation":
    def f(x):
        y = x.clone()
        y[:, 1:3] += 1
        y.diagonal().mul_(2)
        y.t()[0].zero_()
        z = y.view(-1)
        z[::5] = -1
        y.narrow(1, 2, 2).copy_(x[:, :2] * 3)
        return y, y.sum(0)
    run(f, X(6, 6))
elif name == "cuda_input_buffer_mutation":
    class M(nn.Module):
        def __init__(s):
            super().__init__(); s.register_buffer("count", torch.zeros((), dtype=torch.long)); s.register_buffer("ema", torch.zeros(8))
        def forward(s, x, acc):
            s.count += 1
            s.ema.mul_(0.9).add_(x.mean(0), alpha=0.1)
            acc.add_(x.sum(0))
            x.clamp_(min=-1)
            return x * s.ema + s.count
    run(M(), X(4, 8), torch.zeros(8, device=dev))
elif name == "cpu_dynamic_arange_view":
    def f(x, y):
        n = x.size(0)
        pos = torch.arange(n, dtype=torch.float32) / n
        h = x.view(n * 2, -1) + pos.repeat_interleave(2)[:, None]
        return h.reshape(n, -1).sum(1) + y[:n].mean(), torch.ones(n, n).tril().cumsum(0) @ x.view(n, -1)
    run(f, X(6, 4), X(20), dynamic=True)
elif name == "cuda_amp_unscale_update":
    def f(g1, g2, scale, growth, inv):
        found = torch.zeros(1, device=g1.device)
        torch._amp_foreach_non_finite_check_and_unscale_([g1, g2], found, inv)
        torch._amp_update_scale_(scale, growth, found, 2.0, 0.5, 3)
        return g1 * 2, g2.sum(), found
    g2 = X(8); g2[3] = float("inf")
    run(f, X(4, 8), g2, torch.full((1,), 1024.0, device=dev), torch.zeros(1, dtype=torch.int32, device=dev),
        torch.full((1,), 1 / 1024.0, device=dev))
elif name == "cuda_dilated_depthwise_conv_train":
    class D(nn.Module):
        def __init__(s): super().__init__(); s.d = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=8, bias=False); s.p = nn.Conv2d(8, 16, 1, stride=2)
        def forward(s, x): return s.p(F.gelu(s.d(x)))
    run(D(), X(2, 8, 9, 9), train=True)
elif name == "cpu_convtranspose_groups_dilation_train":
    class T(nn.Module):
        def __init__(s): super().__init__(); s.t = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=2)
        def forward(s, x): return torch.tanh(s.t(x))
    run(T(), X(2, 4, 5, 5), train=True)
elif name == "cuda_maxpool_dilation_ceil_train":
    class Mp(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(3, 4, 1)
        def forward(s, x):
            y, i = F.max_pool2d(s.c(x), 3, stride=2, padding=1, dilation=2, ceil_mode=True, return_indices=True)
            return y * 2, i, F.max_pool2d(x, 2, ceil_mode=True)
    run(Mp(), X(2, 3, 11, 11), train=True)
elif name == "cpu_avgpool_ceil_divisor_train":
    class Ap(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(3, 3, 1)
        def forward(s, x):
            h = s.c(x)
            return F.avg_pool2d(h, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False) + \
                F.avg_pool2d(h, 3, stride=2, padding=1, divisor_override=4), F.avg_pool1d(h.flatten(2), 4, 3, ceil_mode=True)
    run(Ap(), X(2, 3, 8, 8), train=True)
elif name == "cuda_lp_pool_train":
    class Lp(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(2, 4, 3)
        def forward(s, x): return F.lp_pool2d(s.c(x), 2.0, 2) + F.lp_pool2d(s.c(x).abs() + 0.1, 3.0, (2, 2), stride=2)
    run(Lp(), X(2, 2, 10, 10), train=True)
elif name == "cpu_float64_mlp_train":
    class M(nn.Module):
        def __init__(s): super().__init__(); s.l1 = nn.Linear(6, 12); s.n = nn.LayerNorm(12); s.l2 = nn.Linear(12, 3)
        def forward(s, x): return F.softplus(s.l2(torch.tanh(s.n(s.l1(x))))).log1p()
    run(M(), X(5, 6, dt=torch.float64), train=True, dtype=torch.float64)
elif name == "cuda_int_mm_dequant":
    def f(a, b, sa, sb):
        return (torch._int_mm(a, b).float() * sa * sb).relu()
    run(f, torch.randint(-8, 8, (32, 64), dtype=torch.int8, device=dev), torch.randint(-8, 8, (64, 32), dtype=torch.int8, device=dev),
        torch.rand(32, 1, device=dev) * 0.1, torch.rand(1, 32, device=dev) * 0.1)
elif name == "cuda_scaled_mm_fp8":
    def f(a, b, amax_a, amax_b):
        fmax = torch.finfo(torch.float8_e4m3fn).max
        sa = (fmax / amax_a.clamp(min=1e-12)).float(); sb = (fmax / amax_b.clamp(min=1e-12)).float()
        a8 = (a * sa).clamp(-fmax, fmax).to(torch.float8_e4m3fn); b8 = (b * sb).clamp(-fmax, fmax).to(torch.float8_e4m3fn)
        return torch._scaled_mm(a8, b8.t(), scale_a=sa.reciprocal(), scale_b=sb.reciprocal(), out_dtype=torch.bfloat16)
    a, b = X(32, 64), X(48, 64)
    run(f, a, b, a.abs().max(), b.abs().max())
elif name == "cpu_kron_tensordot_cross":
    def f(a, b, c, v, w):
        return torch.kron(a, b), torch.tensordot(c, a, dims=([2], [0])), torch.linalg.cross(v, w), \
            torch.block_diag(a, b), torch.outer(v[0], w[1]), torch.cartesian_prod(v[0], w[0]).sum(1)
    run(f, X(3, 3), X(2, 2), X(2, 4, 3), X(4, 3), X(4, 3))
elif name == "cuda_nan_reductions":
    def f(x):
        y = torch.where(x > 1.0, torch.nan, x)
        return torch.nansum(y, 1), torch.nanmean(y, 0), torch.nanmedian(y, 1).values, torch.logsumexp(torch.where(x < -1, -torch.inf, x), 1), \
            torch.nan_to_num(y.cumsum(1), nan=0.0)
    run(f, X(6, 9))
elif name == "cpu_count_any_all_argmin":
    def f(x, m):
        return torch.count_nonzero(x > 0, dim=1), (x > 1).any(1), m.all(0), x.argmin(1), torch.argmin(x), (x.abs() > 2).sum(), \
            torch.logical_xor(m, x > 0).float().mean()
    run(f, X(5, 7), torch.rand(5, 7) > 0.2)
elif name == "cpu_frexp_ldexp_copysign":
    def f(x, e):
        m, ex = torch.frexp(x)
        return torch.ldexp(m, ex + e), torch.copysign(x.abs() + 1, -x), torch.nextafter(x, torch.zeros_like(x)), ex.float() * 0.5
    run(f, X(4, 6) * 100, torch.randint(-3, 3, (4, 6), dtype=torch.int32))
elif name == "cuda_matrix_power_triu":
    def f(a, v):
        i = torch.triu_indices(5, 5, offset=1, device=a.device)
        p = torch.linalg.matrix_power(a * 0.3, 3)
        return p[..., i[0], i[1]], torch.matrix_exp(a * 0.1), torch.linalg.vector_norm(v, ord=3, dim=-1), torch.linalg.matrix_norm(a)
    run(f, X(2, 5, 5), X(2, 7))
elif name == "cpu_pdist_train":
    class Pd(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(4, 4)
        def forward(s, x): h = s.l(x); return torch.pdist(h), F.pdist(h, p=1).sum(), torch.cdist(h, x, p=2.0)
    run(Pd(), X(7, 4), train=True)
elif name == "cuda_moe_switch_capacity_train":
    class Sw(nn.Module):
        def __init__(s): super().__init__(); s.g = nn.Linear(8, 4); s.e = nn.Parameter(torch.randn(4, 8, 8) * 0.2)
        def forward(s, x):
            logits = s.g(x); probs = logits.softmax(-1)
            top = probs.argmax(-1); oh = F.one_hot(top, 4)
            pos = torch.cumsum(oh, 0) * oh
            keep = (pos <= 3) & (oh > 0)
            gate = (probs * keep).sum(-1, keepdim=True)
            y = torch.einsum("te,tn,enm->tm", keep.float(), x, s.e) * gate
            aux = (oh.float().mean(0) * probs.mean(0)).sum() * 4
            return y, aux
    run(Sw(), X(12, 8), train=True)
elif name == "cuda_nerf_posenc_mlp_train":
    class N(nn.Module):
        def __init__(s): super().__init__(); s.register_buffer("f", 2.0 ** torch.arange(6) * math.pi); s.m = nn.Sequential(nn.Linear(39, 32), nn.ReLU(), nn.Linear(32, 4))
        def forward(s, p):
            a = p[..., None] * s.f
            enc = torch.cat([p, a.sin().flatten(-2), a.cos().flatten(-2)], -1)
            o = s.m(enc)
            return torch.sigmoid(o[..., :3]), F.softplus(o[..., 3])
    run(N(), X(64, 3), train=True)
elif name == "cpu_yolo_decode":
    def f(p, anchors):
        b, na, h, w, _ = p.shape
        gy, gx = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
        grid = torch.stack((gx, gy), -1).view(1, 1, h, w, 2).float()
        xy = (p[..., :2].sigmoid() * 2 - 0.5 + grid) * 8
        wh = (p[..., 2:4].sigmoid() * 2) ** 2 * anchors.view(1, na, 1, 1, 2)
        return torch.cat((xy, wh, p[..., 4:].sigmoid()), -1).view(b, -1, 7)
    run(f, X(2, 3, 4, 5, 7), torch.tensor([[10.0, 13.0], [16.0, 30.0], [33.0, 23.0]]))
elif name == "cuda_wavenet_gated_train":
    class W(nn.Module):
        def __init__(s): super().__init__(); s.f = nn.Conv1d(8, 16, 2, dilation=4); s.r = nn.Conv1d(8, 8, 1); s.s = nn.Conv1d(8, 8, 1)
        def forward(s, x):
            h = s.f(F.pad(x, (4, 0)))
            z = torch.tanh(h[:, :8]) * torch.sigmoid(h[:, 8:])
            return x + s.r(z), s.s(z)
    run(W(), X(2, 8, 20), train=True)
elif name == "cpu_channels_last_conv_train":
    class C(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(4, 8, 3, padding=1); s.b = nn.BatchNorm2d(8); s.c2 = nn.Conv2d(8, 8, 3, stride=2)
        def forward(s, x): return F.silu(s.c2(F.relu(s.b(s.c(x))))).mean((2, 3))
    run(C().to(memory_format=torch.channels_last), X(2, 4, 9, 9).to(memory_format=torch.channels_last), train=True)
