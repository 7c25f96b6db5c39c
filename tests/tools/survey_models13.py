# survey_models13.py — the thirteenth batch of real graphs the project has never seen: ConvNeXt V2's
# global response normalization, NeRF volume rendering (exclusive cumprod of transmittance), BatchNorm
# with momentum=None (cumulative average, num_batches_tracked), a Gaussian blur whose kernel is built
# in the graph, Sobel edges with non-maximum suppression, int8 weight-only linear layers, a k-means
# step (cdist, argmin, index_add of the means, bincount), ConvNeXt / SAM's channels-first LayerNorm2d,
# SAM's decomposed relative positions (interpolated tables, einsum), a median filter (unfold +
# median), shrink / threshold activations, variance with too few degrees of freedom, sums with a dtype
# argument, torch.gradient with spacing, grid_sample nearest with border / reflection padding, einsum
# diagonals and outer products, lerp / addcmul / addcdiv with tensor weights, logsumexp over rows of
# -inf, clamp and maximum gradients at ties, cumsum of bools and ints, negative and mixed bool / int
# advanced indexing, a column softmax, large full reductions (split reductions), a wide LayerNorm
# (Welford split), a 1x1-conv FPN top-down path, Mixture-of-Depths token routing, a Hopfield update,
# a DINO centering loss with a teacher EMA, PolyLoss, a SimCLR NT-Xent loss; cpu and cuda.
# Run on the GPU machine:  OUT=/path JOBS=10 python3 tests/tools/survey_models13.py
# then here:               tests/tools/survey_logs.sh /path/logs
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from survey_driver import child
MODELS = ["cpu_convnextv2_grn_train", "cpu_nerf_volume_render_train", "cpu_bn_momentum_none_train", "cpu_gaussian_blur_builtin_kernel",
          "cpu_sobel_nms_edges", "cpu_int8_weight_only_linear", "cpu_kmeans_step", "cpu_layernorm2d_channels_first_train",
          "cpu_sam_decomposed_relpos", "cpu_median_filter_unfold", "cpu_shrink_threshold_train", "cpu_var_correction_edge",
          "cpu_sum_dtype_arg", "cpu_torch_gradient_spacing", "cpu_grid_sample_nearest_border_train", "cpu_einsum_diag_outer",
          "cpu_lerp_addcmul_addcdiv_train", "cpu_logsumexp_neginf_rows", "cpu_clamp_max_ties_train", "cpu_cumsum_bool_int",
          "cuda_convnextv2_grn_train", "cuda_nerf_volume_render_train", "cuda_bn_momentum_none_train", "cuda_index_neg_mixed_bool",
          "cuda_column_softmax", "cuda_large_full_reductions", "cuda_wide_layernorm_train", "cuda_fpn_topdown",
          "cuda_mixture_of_depths_route", "cuda_hopfield_update", "cuda_dino_center_loss_train", "cuda_polyloss_train",
          "cuda_ntxent_loss_train", "cuda_int8_weight_only_linear_bf16", "cuda_kmeans_step", "cuda_sam_decomposed_relpos",
          "cuda_median_filter_unfold", "cuda_grid_sample_reflection_train", "cuda_torch_gradient_spacing", "cuda_sum_dtype_arg_bf16"]
name, dev, run, X = child(__file__, MODELS, "/tmp/survey13")

import math
import torch, torch.nn as nn, torch.nn.functional as F

base = name.split("_", 1)[1]


class GRN(nn.Module):
    """ConvNeXt V2's global response normalization on channels-last activations."""
    def __init__(s, c):
        super().__init__()
        s.gamma = nn.Parameter(torch.randn(1, 1, 1, c) * 0.1); s.beta = nn.Parameter(torch.zeros(1, 1, 1, c))
    def forward(s, x):
        gx = torch.norm(x, p=2, dim=(1, 2), keepdim=True)
        nx = gx / (gx.mean(dim=-1, keepdim=True) + 1e-6)
        return s.gamma * (x * nx) + s.beta + x


class ConvNeXtV2Block(nn.Module):
    def __init__(s, c=8):
        super().__init__()
        s.dw = nn.Conv2d(c, c, 7, padding=3, groups=c); s.ln = nn.LayerNorm(c)
        s.pw1 = nn.Linear(c, 4 * c); s.grn = GRN(4 * c); s.pw2 = nn.Linear(4 * c, c)
    def forward(s, x):
        h = s.dw(x).permute(0, 2, 3, 1)
        h = s.pw2(s.grn(F.gelu(s.pw1(s.ln(h)))))
        return x + h.permute(0, 3, 1, 2)


class NeRFRender(nn.Module):
    """Volume rendering of a tiny radiance MLP along rays: alpha, exclusive cumprod, weights."""
    def __init__(s):
        super().__init__(); s.mlp = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 4))
    def forward(s, pts, deltas):
        out = s.mlp(pts)                                  # (R, S, 4)
        sigma = F.relu(out[..., 0]); rgb = torch.sigmoid(out[..., 1:])
        alpha = 1 - torch.exp(-sigma * deltas)
        trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha + 1e-10], -1), -1)[:, :-1]
        w = alpha * trans
        return (w[..., None] * rgb).sum(-2), w.sum(-1)


def kmeans_step(x, c):
    d = torch.cdist(x, c)
    a = d.argmin(1)
    sums = torch.zeros_like(c).index_add_(0, a, x)
    cnt = torch.bincount(a, minlength=c.shape[0]).clamp(min=1)
    return sums / cnt[:, None].to(x.dtype), d.min(1).values.mean()


def sam_relpos(q, rel_h, rel_w):
    """SAM's add_decomposed_rel_pos: tables resized by linear interpolation, then einsums."""
    B, H, W, C = q.shape
    def get(rel, size):
        r = F.interpolate(rel.t()[None], size=2 * size - 1, mode="linear").reshape(-1, 2 * size - 1).t()
        coords = torch.arange(size, device=q.device)[:, None] - torch.arange(size, device=q.device)[None, :] + size - 1
        return r[coords.long()]
    Rh, Rw = get(rel_h, H), get(rel_w, W)
    attn_h = torch.einsum("bhwc,hkc->bhwk", q, Rh)
    attn_w = torch.einsum("bhwc,wkc->bhwk", q, Rw)
    return (attn_h[:, :, :, :, None] + attn_w[:, :, :, None, :]).reshape(B, H * W, H * W).softmax(-1)


def median_filter(x):
    B, C, H, W = x.shape
    u = F.unfold(F.pad(x, (1, 1, 1, 1), mode="reflect"), 3).view(B, C, 9, H * W)
    return u.median(2).values.view(B, C, H, W)


def gradient_spacing(x):
    gy, gx = torch.gradient(x, spacing=(0.5, 2.0), dim=(0, 1))
    return torch.hypot(gx, gy), torch.gradient(x[0], edge_order=2)[0]


def sum_dtypes(x, m):
    return (x.sum(1, dtype=torch.float64), x.mean(0, dtype=torch.float32), m.sum(dtype=torch.int32),
            torch.cumsum(x, 0, dtype=torch.float64).to(x.dtype), x.prod(1, dtype=torch.float32))


def int8_weight_only(x, wq, scale, bias):
    return F.linear(x, wq.to(x.dtype)) * scale + bias


if base == "convnextv2_grn_train":
    xs = X(2, 8, 8, 8)
    run(ConvNeXtV2Block(), xs.to(memory_format=torch.channels_last) if dev == "cuda" else xs, train=True)
elif base == "nerf_volume_render_train":
    run(NeRFRender(), X(6, 10, 3), torch.rand(6, 10, device=dev) * 0.2 + 0.01, train=True)
elif base == "bn_momentum_none_train":
    m = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4, momentum=None), nn.ReLU(), nn.BatchNorm2d(4, affine=False, momentum=None))
    run(m, X(3, 3, 6, 6), train=True)
elif name == "cpu_gaussian_blur_builtin_kernel":
    def f(img, sigma):
        k = torch.arange(7, dtype=img.dtype) - 3
        g = torch.exp(-(k ** 2) / (2 * sigma ** 2)); g = g / g.sum()
        k2 = (g[:, None] * g[None, :]).expand(img.shape[1], 1, 7, 7)
        return F.conv2d(F.pad(img, (3, 3, 3, 3), mode="reflect"), k2, groups=img.shape[1])
    run(f, X(2, 3, 12, 12), torch.tensor(1.5))
elif name == "cpu_sobel_nms_edges":
    def f(img):
        gray = (img * torch.tensor([0.299, 0.587, 0.114]).view(1, 3, 1, 1)).sum(1, keepdim=True)
        kx = torch.tensor([[-1., 0., 1.], [-2., 0., 2.], [-1., 0., 1.]]).view(1, 1, 3, 3)
        gx = F.conv2d(gray, kx, padding=1); gy = F.conv2d(gray, kx.transpose(-1, -2), padding=1)
        mag = torch.hypot(gx, gy); ang = torch.atan2(gy, gx)
        keep = mag == F.max_pool2d(mag, 3, 1, 1)
        return torch.where(keep & (mag > 0.5), mag, torch.zeros_like(mag)), ang
    run(f, X(2, 3, 10, 10))
elif base == "int8_weight_only_linear":
    lin = lambda x, wq, s, b: F.gelu(int8_weight_only(x, wq, s, b))
    run(lin, X(4, 16), torch.randint(-128, 127, (8, 16), dtype=torch.int8), torch.rand(8) * 0.01, X(8))
elif name == "cuda_int8_weight_only_linear_bf16":
    lin = lambda x, wq, s, b: F.silu(int8_weight_only(x, wq, s, b))
    run(lin, X(4, 32, dt=torch.bfloat16), torch.randint(-128, 127, (16, 32), dtype=torch.int8, device=dev),
        (torch.rand(16, device=dev) * 0.01).bfloat16(), X(16, dt=torch.bfloat16))
elif base == "kmeans_step":
    run(kmeans_step, X(40, 3), X(5, 3))
elif name == "cpu_layernorm2d_channels_first_train":
    class LN2d(nn.Module):
        def __init__(s, c):
            super().__init__(); s.w = nn.Parameter(torch.ones(c)); s.b = nn.Parameter(torch.zeros(c)); s.c = nn.Conv2d(c, c, 1)
        def forward(s, x):
            u = x.mean(1, keepdim=True); v = (x - u).pow(2).mean(1, keepdim=True)
            x = (x - u) / torch.sqrt(v + 1e-6)
            return s.c(s.w[:, None, None] * x + s.b[:, None, None])
    run(LN2d(6), X(2, 6, 5, 5), train=True)
elif base == "sam_decomposed_relpos":
    run(sam_relpos, X(2, 4, 5, 8), X(5, 8), X(7, 8))
elif base == "median_filter_unfold":
    run(median_filter, X(2, 3, 8, 8))
elif name == "cpu_shrink_threshold_train":
    class S(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(6, 6)
        def forward(s, x):
            h = s.l(x)
            return (F.softshrink(h, 0.3) + F.hardshrink(h, 0.4) + F.tanhshrink(h) + F.threshold(h, 0.1, -1.0)
                    + F.hardtanh(h, -0.5, 0.5) + F.relu6(h * 4))
    run(S(), X(5, 6), train=True)
elif name == "cpu_var_correction_edge":
    def f(x):
        return (torch.var(x, dim=1, correction=3), torch.std(x[:, :1], dim=1), torch.var_mean(x, dim=0, correction=0),
                torch.std(x, dim=1, correction=2, keepdim=True))
    run(f, X(4, 3))
elif name == "cpu_sum_dtype_arg":
    run(sum_dtypes, X(5, 6), torch.randint(0, 3, (5, 6), dtype=torch.int8))
elif name == "cuda_sum_dtype_arg_bf16":
    run(sum_dtypes, X(5, 6, dt=torch.bfloat16), torch.randint(0, 3, (5, 6), dtype=torch.int8, device=dev))
elif base == "torch_gradient_spacing":
    run(gradient_spacing, X(6, 7))
elif name == "cpu_grid_sample_nearest_border_train":
    class G(nn.Module):
        def __init__(s):
            super().__init__(); s.theta = nn.Parameter(torch.tensor([[1.1, 0.1, 0.2], [-0.1, 0.9, -0.3]]))
        def forward(s, x):
            grid = F.affine_grid(s.theta.expand(x.shape[0], 2, 3), list(x.shape), align_corners=False)
            return (F.grid_sample(x, grid, mode="nearest", padding_mode="border", align_corners=False)
                    + F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=True))
    run(G(), X(2, 3, 6, 7), train=True)
elif name == "cuda_grid_sample_reflection_train":
    class G(nn.Module):
        def __init__(s):
            super().__init__(); s.c = nn.Conv2d(2, 2, 3, padding=1)
        def forward(s, x, grid):
            return F.grid_sample(s.c(x), grid * 1.5, mode="bilinear", padding_mode="reflection", align_corners=False)
    run(G(), X(2, 2, 6, 6), torch.rand(2, 5, 4, 2, device=dev) * 2 - 1, train=True)
elif name == "cpu_einsum_diag_outer":
    def f(a, b, v):
        return (torch.einsum("ii->i", a), torch.einsum("bii->b", b), torch.einsum("i,j->ij", v, v),
                torch.einsum("bij,bjk->bik", b, b), torch.einsum("ij,ij->", a, a))
    run(f, X(5, 5), X(3, 5, 5), X(4))
elif name == "cpu_lerp_addcmul_addcdiv_train":
    class L(nn.Module):
        def __init__(s):
            super().__init__(); s.w = nn.Parameter(torch.rand(6)); s.l = nn.Linear(6, 6)
        def forward(s, x, y):
            h = s.l(x)
            return torch.lerp(h, y, s.w) + torch.addcmul(h, y, s.w, value=0.5) + torch.addcdiv(h, y, s.w.abs() + 1, value=-2)
    run(L(), X(4, 6), X(4, 6), train=True)
elif name == "cpu_logsumexp_neginf_rows":
    def f(x):
        x = x.masked_fill(torch.arange(4)[:, None] == 2, float("-inf"))
        return torch.logsumexp(x, 1), torch.log_softmax(x.clamp(min=-1e4), 1), x.amax(1)
    run(f, X(4, 5))
elif name == "cpu_clamp_max_ties_train":
    class C(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(4, 4)
        def forward(s, x):
            h = s.l(x).round()
            return (torch.maximum(h, h.flip(1)) + torch.minimum(h, torch.zeros_like(h)) + h.clamp(-1, 1)
                    + torch.clamp(h, min=h.mean(0)) + h.amax(1, keepdim=True))
    run(C(), X(6, 4) * 3, train=True)
elif name == "cpu_cumsum_bool_int":
    def f(m, i):
        return m.cumsum(0), i.cumsum(1), torch.cumsum(m.int(), 1, dtype=torch.int16), (m.long().cumsum(0) * i).sum(), i.cumprod(0)
    run(f, torch.rand(5, 4) > 0.5, torch.randint(-3, 4, (5, 4), dtype=torch.int32))
elif name == "cuda_index_neg_mixed_bool":
    def f(x, m, idx):
        a = x[idx]                      # negative indices
        b = x[m][:, [-1, 0]]            # bool then int
        c = x[[0, -1], -2:]             # int list with a negative index, then a slice
        x2 = x.clone(); x2[idx, -1] = 0.5
        return a * 2, b.sum(), c, x2
    run(f, X(6, 5), torch.tensor([True, False, True, True, False, True], device=dev), torch.tensor([-1, 2, -6], device=dev))
elif name == "cuda_column_softmax":
    def f(x):
        return x.softmax(0), (x * 2).log_softmax(0).amax(1)
    run(f, X(4096, 64))
elif name == "cuda_large_full_reductions":
    def f(x, y):
        return x.sum(), (x * y).mean(), x.abs().amax(), (x - y).pow(2).sum().sqrt(), x.var(), x.argmax()
    run(f, X(1 << 20), X(1 << 20))
elif name == "cuda_wide_layernorm_train":
    m = nn.Sequential(nn.LayerNorm(16384), nn.GELU())
    run(m, X(4, 16384), train=True)
elif name == "cuda_fpn_topdown":
    class FPN(nn.Module):
        def __init__(s):
            super().__init__()
            s.lat = nn.ModuleList([nn.Conv2d(c, 8, 1) for c in (4, 8, 16)]); s.out = nn.Conv2d(8, 8, 3, padding=1)
        def forward(s, c3, c4, c5):
            p5 = s.lat[2](c5)
            p4 = s.lat[1](c4) + F.interpolate(p5, scale_factor=2, mode="nearest")
            p3 = s.lat[0](c3) + F.interpolate(p4, scale_factor=2, mode="nearest")
            return s.out(p3), s.out(p4), F.max_pool2d(p5, 1, 2)
    run(FPN(), X(1, 4, 16, 16), X(1, 8, 8, 8), X(1, 16, 4, 4))
elif name == "cuda_mixture_of_depths_route":
    class MoD(nn.Module):
        def __init__(s, d=16, cap=4):
            super().__init__(); s.router = nn.Linear(d, 1); s.block = nn.Sequential(nn.Linear(d, d), nn.GELU()); s.cap = cap
        def forward(s, x):
            w = s.router(x).squeeze(-1)
            top = torch.topk(w, s.cap, dim=1, sorted=False).indices
            top, _ = top.sort(1)
            sel = torch.gather(x, 1, top[..., None].expand(-1, -1, x.shape[-1]))
            upd = s.block(sel) * torch.gather(w, 1, top).sigmoid()[..., None]
            return x.scatter_add(1, top[..., None].expand_as(upd), upd)
    run(MoD(), X(2, 10, 16))
elif name == "cuda_hopfield_update":
    def f(xi, patterns, beta):
        for _ in range(3):
            xi = (beta * xi @ patterns.t()).softmax(-1) @ patterns
        return xi, torch.logsumexp(beta * xi @ patterns.t(), -1) / beta
    run(f, X(4, 16), X(12, 16), 2.0)
elif name == "cuda_dino_center_loss_train":
    class Dino(nn.Module):
        def __init__(s):
            super().__init__()
            s.student = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 10))
            s.teacher = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 10))
            s.register_buffer("center", torch.zeros(1, 10))
        def forward(s, x1, x2):
            with torch.no_grad():
                t = s.teacher(x2)
                for pt, ps in zip(s.teacher.parameters(), s.student.parameters()):
                    pt.mul_(0.99).add_(ps.detach(), alpha=0.01)
                tp = ((t - s.center) / 0.04).softmax(-1)
                s.center.mul_(0.9).add_(t.mean(0, keepdim=True), alpha=0.1)
            sp = (s.student(x1) / 0.1).log_softmax(-1)
            return -(tp * sp).sum(-1).mean()
    run(Dino(), X(6, 8), X(6, 8), train=True)
elif name == "cuda_polyloss_train":
    class P(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(8, 5)
        def forward(s, x, y):
            logits = s.l(x)
            ce = F.cross_entropy(logits, y, reduction="none", label_smoothing=0.1)
            pt = (F.one_hot(y, 5) * logits.softmax(-1)).sum(-1)
            return (ce + 2.0 * (1 - pt)).mean()
    run(P(), X(7, 8), torch.randint(0, 5, (7,), device=dev), train=True)
elif name == "cuda_ntxent_loss_train":
    class NT(nn.Module):
        def __init__(s):
            super().__init__(); s.proj = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
        def forward(s, a, b):
            z = F.normalize(s.proj(torch.cat([a, b])), dim=1)
            sim = z @ z.t() / 0.5
            n = a.shape[0]
            sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool, device=sim.device), float("-inf"))
            tgt = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(sim.device)
            return F.cross_entropy(sim, tgt)
    run(NT(), X(5, 8), X(5, 8), train=True)
else:
    raise SystemExit(f"unknown model {name}")
