# survey_models6.py — the sixth batch of real graphs the project has never seen: sliding-window
# attention, RWKV's token shift, VQ-VAE quantization, a spatial transformer (affine_grid +
# grid_sample), FNO's spectral convolution (rfft2 / irfft2, complex), float8 casts, int8 dynamic
# quantization, margin/ranking/triplet losses, CTC loss, nn.Bilinear, Stable Diffusion's
# GroupNorm + SiLU under fp16 autocast, an EMA update, NMS-style IoU matrices, more pointwise math
# (atan2, hypot, fmod, remainder, copysign, heaviside, xlogy, logaddexp), renorm / vector norms,
# embedding max_norm, histc, PReLU / RReLU / CELU / SELU training, cpu and cuda.
# Run on the GPU machine:  OUT=/path python3 tests/tools/survey_models6.py   (4 models at a time)
# then here:               tests/tools/survey_logs.sh /path/logs
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from survey_driver import child
MODELS = ["cuda_sliding_window_attn", "cpu_rwkv_time_mix_train", "cuda_vq_vae_quantize_train", "cpu_spatial_transformer_train",
          "cpu_fno_spectral_conv", "cuda_fp8_scaled_cast", "cpu_int8_dynamic_quant", "cuda_margin_losses_train",
          "cpu_ctc_loss_train", "cuda_bilinear_layer_train", "cuda_sd_groupnorm_silu_fp16", "cuda_ema_lerp_update",
          "cpu_box_iou_nms", "cuda_pointwise_math2", "cpu_pointwise_math3", "cuda_renorm_vector_norm",
          "cpu_embedding_max_norm", "cuda_histc_bincount", "cpu_act_params_train", "cuda_take_along_dim_train",
          "cpu_var_aminmax_dims", "cuda_conv_transpose1d_train", "cpu_conv3d_train", "cuda_decoder_layer_eval",
          "cpu_dynamic_conv_norm", "cuda_cosine_pairwise_train", "cuda_layernorm_bf16_dynamic", "cpu_logcumsumexp_cummax"]
name, dev, run, X = child(__file__, MODELS, "/tmp/survey6")

import math
import torch, torch.nn as nn, torch.nn.functional as F

if name == "cuda_sliding_window_attn":
    class W(nn.Module):
        def __init__(s): super().__init__(); s.qkv = nn.Linear(32, 96); s.o = nn.Linear(32, 32)
        def forward(s, x):
            B, L, _ = x.shape
            q, k, v = s.qkv(x).view(B, L, 3, 4, 8).permute(2, 0, 3, 1, 4)
            i = torch.arange(L, device=x.device)
            m = (i[None, :] <= i[:, None]) & (i[:, None] - i[None, :] < 4)
            a = (q @ k.transpose(-1, -2) / math.sqrt(8)).masked_fill(~m, float("-inf")).softmax(-1)
            return s.o((a @ v).transpose(1, 2).reshape(B, L, 32))
    with torch.no_grad():
        run(W(), X(2, 12, 32))
elif name == "cpu_rwkv_time_mix_train":
    class R(nn.Module):
        def __init__(s):
            super().__init__(); s.mk = nn.Parameter(torch.rand(16)); s.mv = nn.Parameter(torch.rand(16))
            s.k = nn.Linear(16, 16, bias=False); s.v = nn.Linear(16, 16, bias=False); s.r = nn.Linear(16, 16, bias=False)
        def forward(s, x):
            xx = F.pad(x, (0, 0, 1, -1))
            k = s.k(x * s.mk + xx * (1 - s.mk)); v = s.v(x * s.mv + xx * (1 - s.mv))
            w = torch.exp(k.clamp(max=30))
            return torch.sigmoid(s.r(x)) * (w * v).cumsum(1) / w.cumsum(1)
    run(R(), X(2, 10, 16), train=True)
elif name == "cuda_vq_vae_quantize_train":
    class V(nn.Module):
        def __init__(s): super().__init__(); s.e = nn.Conv2d(3, 8, 3, padding=1); s.cb = nn.Embedding(32, 8)
        def forward(s, x):
            z = s.e(x).permute(0, 2, 3, 1)
            flat = z.reshape(-1, 8)
            d = flat.pow(2).sum(1, keepdim=True) - 2 * flat @ s.cb.weight.t() + s.cb.weight.pow(2).sum(1)
            zq = s.cb(d.argmin(1)).view_as(z)
            loss = F.mse_loss(zq, z.detach()) + 0.25 * F.mse_loss(z, zq.detach())
            return (z + (zq - z).detach()).permute(0, 3, 1, 2), loss
    run(V(), X(2, 3, 8, 8), train=True)
elif name == "cpu_spatial_transformer_train":
    class S(nn.Module):
        def __init__(s): super().__init__(); s.loc = nn.Linear(64, 6)
        def forward(s, x):
            theta = s.loc(x.flatten(1)).view(-1, 2, 3) * 0.1 + torch.tensor([[1., 0, 0], [0, 1, 0]])
            g = F.affine_grid(theta, x.shape, align_corners=False)
            return F.grid_sample(x, g, mode="bilinear", padding_mode="border", align_corners=False)
    run(S(), X(2, 1, 8, 8), train=True)
elif name == "cpu_fno_spectral_conv":
    class Fo(nn.Module):
        def __init__(s): super().__init__(); s.w = nn.Parameter(torch.randn(4, 4, 3, 3, dtype=torch.cfloat) * 0.1)
        def forward(s, x):
            xf = torch.fft.rfft2(x)
            out = torch.zeros(x.shape[0], 4, x.shape[-2], x.shape[-1] // 2 + 1, dtype=torch.cfloat)
            out[:, :, :3, :3] = torch.einsum("bixy,ioxy->boxy", xf[:, :, :3, :3], s.w)
            return torch.fft.irfft2(out, s=x.shape[-2:]) + x
    with torch.no_grad():
        run(Fo(), X(2, 4, 8, 8))
elif name == "cuda_fp8_scaled_cast":
    def f(x, w):
        sx = x.abs().amax() / 448.0; sw = w.abs().amax() / 448.0
        xq = (x / sx).to(torch.float8_e4m3fn); wq = (w / sw).to(torch.float8_e4m3fn)
        return (xq.to(torch.float32) @ wq.to(torch.float32).t()) * (sx * sw)
    with torch.no_grad():
        run(f, X(16, 32), X(8, 32))
elif name == "cpu_int8_dynamic_quant":
    class Q(nn.Module):
        def __init__(s): super().__init__(); s.w = nn.Parameter(torch.randn(8, 16))
        def forward(s, x):
            sc = x.abs().amax(1, keepdim=True).clamp(min=1e-8) / 127
            xq = torch.round(x / sc).clamp(-128, 127).to(torch.int8)
            ws = s.w.abs().amax(1, keepdim=True) / 127
            wq = torch.round(s.w / ws).clamp(-128, 127).to(torch.int8)
            return (xq.float() @ wq.float().t()) * sc * ws.t()
    with torch.no_grad():
        run(Q(), X(4, 16))
elif name == "cuda_margin_losses_train":
    class M(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 8)
        def forward(s, a, p, n, y):
            ea, ep, en = s.l(a), s.l(p), s.l(n)
            return (F.triplet_margin_loss(ea, ep, en, margin=0.5) + F.margin_ranking_loss(ea.sum(1), en.sum(1), y)
                    + F.cosine_embedding_loss(ea, ep, y) + F.multilabel_soft_margin_loss(ea, (y[:, None] > 0).expand(-1, 8).float())
                    + F.soft_margin_loss(ea, ep.sign().detach()) + F.hinge_embedding_loss(ea, y[:, None].expand(-1, 8)))
    run(M(), X(6, 8), X(6, 8), X(6, 8), torch.tensor([1., -1, 1, 1, -1, 1], device=dev), train=True)
elif name == "cpu_ctc_loss_train":
    class C(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 6)
        def forward(s, x, tg, il, tl):
            return F.ctc_loss(s.l(x).log_softmax(-1), tg, il, tl, blank=0, zero_infinity=True)
    run(C(), X(12, 2, 8), torch.randint(1, 6, (2, 4)), torch.tensor([12, 10]), torch.tensor([4, 3]), train=True)
elif name == "cuda_bilinear_layer_train":
    class B(nn.Module):
        def __init__(s): super().__init__(); s.b = nn.Bilinear(6, 5, 4)
        def forward(s, x, y): return torch.tanh(s.b(x, y))
    run(B(), X(7, 6), X(7, 5), train=True)
elif name == "cuda_sd_groupnorm_silu_fp16":
    class G(nn.Module):
        def __init__(s): super().__init__(); s.g = nn.GroupNorm(4, 16); s.c = nn.Conv2d(16, 16, 3, padding=1); s.t = nn.Linear(8, 16)
        def forward(s, x, t):
            with torch.autocast("cuda", dtype=torch.float16):
                h = s.c(F.silu(s.g(x))) + s.t(F.silu(t))[:, :, None, None]
                return x + h
    with torch.no_grad():
        run(G(), X(2, 16, 8, 8), X(2, 8))
elif name == "cuda_ema_lerp_update":
    ema = [torch.randn(16, 8, device=dev), torch.randn(8, device=dev)]
    cur = [torch.randn(16, 8, device=dev), torch.randn(8, device=dev)]
    def step(decay):
        torch._foreach_lerp_(ema, cur, 1 - decay)
        for e, c in zip(ema, cur): e.mul_(1.0).add_(c, alpha=0.0)
        return ema[0].sum()
    with torch.no_grad():
        run(step, 0.99)
elif name == "cpu_box_iou_nms":
    def iou(b, s):
        area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
        lt = torch.max(b[:, None, :2], b[None, :, :2]); rb = torch.min(b[:, None, 2:], b[None, :, 2:])
        wh = (rb - lt).clamp(min=0); inter = wh[..., 0] * wh[..., 1]
        m = inter / (area[:, None] + area[None, :] - inter)
        order = s.argsort(descending=True)
        m = m[order][:, order].triu(1)
        return (m.max(0).values < 0.5) & (s[order] > 0.1)
    xy = torch.rand(10, 2) * 10
    with torch.no_grad():
        run(iou, torch.cat([xy, xy + torch.rand(10, 2) * 4 + 1], 1), torch.rand(10))
elif name == "cuda_pointwise_math2":
    def f(x, y):
        return (torch.atan2(x, y) + torch.hypot(x, y) + torch.fmod(x * 3, 1.3) + torch.remainder(x * 3, -1.3)
                + torch.copysign(y, x) + torch.frac(x * 2) + torch.trunc(y * 3) + torch.sign(x) * torch.sgn(y))
    with torch.no_grad():
        run(f, X(8, 16), X(8, 16))
elif name == "cpu_pointwise_math3":
    def f(x, y):
        return (torch.heaviside(x, y) + torch.xlogy(x.abs(), y.abs()) + torch.logaddexp(x, y) + torch.logaddexp2(x, y)
                + torch.nextafter(x, y) + torch.float_power(x.abs(), 1.5).float() + torch.ldexp(x, torch.ones_like(x, dtype=torch.int32))
                + torch.special.xlog1py(x.abs(), y.abs()) + torch.special.sinc(x) + torch.deg2rad(y) + torch.exp2(x).log10())
    with torch.no_grad():
        run(f, X(8, 16), X(8, 16))
elif name == "cuda_renorm_vector_norm":
    def f(x):
        return (torch.renorm(x, 2, 0, 1.0) + F.normalize(x, p=3, dim=1) + torch.linalg.vector_norm(x, ord=float("inf"), dim=1, keepdim=True)
                + torch.linalg.vector_norm(x, ord=0, dim=0) + torch.linalg.vector_norm(x, ord=-float("inf")) + x.norm(p=1.5, dim=1, keepdim=True))
    with torch.no_grad():
        run(f, X(6, 10))
elif name == "cpu_embedding_max_norm":
    class E(nn.Module):
        def __init__(s): super().__init__(); s.e = nn.Embedding(20, 8, max_norm=1.0); s.l = nn.Linear(8, 4)
        def forward(s, i): return s.l(s.e(i)).sum(1)
    with torch.no_grad():
        run(E(), torch.randint(0, 20, (3, 5)))
elif name == "cuda_histc_bincount":
    def f(x, i):
        return torch.histc(x, bins=10, min=-2, max=2).sum() + torch.bincount(i, minlength=8).float().max()
    with torch.no_grad():
        run(f, X(64), torch.randint(0, 8, (32,), device=dev))
elif name == "cpu_act_params_train":
    class A(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 8); s.p = nn.PReLU(8); s.r = nn.RReLU(); s.c = nn.CELU(0.7); s.s = nn.SELU()
        def forward(s, x):
            h = s.l(x)
            return s.p(h) + s.c(h) + s.s(h) + F.relu6(h) + F.hardtanh(h, -0.5, 0.5) + F.softshrink(h, 0.3) + F.tanhshrink(h) + F.logsigmoid(h) + F.threshold(h, 0.1, -1.0)
    run(A().eval(), X(5, 8), train=True)
elif name == "cuda_take_along_dim_train":
    class T(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 8)
        def forward(s, x, i):
            h = s.l(x)
            return torch.take_along_dim(h, i, dim=1).sum() + h.index_select(0, i[:, 0]).mean() + torch.take(h, i.flatten()).sum()
    run(T(), X(4, 8), torch.randint(0, 4, (4, 3), device=dev), train=True)
elif name == "cpu_var_aminmax_dims":
    def f(x):
        mn, mx = torch.aminmax(x, dim=1, keepdim=True)
        return (torch.var(x, dim=(0, 2), correction=0, keepdim=True) + torch.std(x, dim=(1, 2), unbiased=True)[:, None, None]
                + (x - mn) / (mx - mn) + torch.var_mean(x, 2, keepdim=True)[0] + x.nansum(1, keepdim=True) + x.logsumexp((1, 2), keepdim=True))
    with torch.no_grad():
        run(f, X(3, 4, 5))
elif name == "cuda_conv_transpose1d_train":
    class C(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.ConvTranspose1d(4, 6, 4, stride=2, padding=1); s.n = nn.BatchNorm1d(6)
        def forward(s, x): return F.leaky_relu(s.n(s.c(x)), 0.2)
    run(C(), X(2, 4, 10), train=True)
elif name == "cpu_conv3d_train":
    class C(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv3d(2, 4, 3, padding=1); s.n = nn.InstanceNorm3d(4, affine=True)
        def forward(s, x): return F.gelu(s.n(s.c(x))).mean((2, 3, 4))
    run(C(), X(2, 2, 4, 4, 4), train=True)
elif name == "cuda_decoder_layer_eval":
    m = nn.TransformerDecoderLayer(16, 2, 32, dropout=0.0, batch_first=True, norm_first=True).eval()
    with torch.no_grad():
        run(m, X(2, 6, 16), X(2, 5, 16))
elif name == "cpu_dynamic_conv_norm":
    class D(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv1d(4, 8, 3, padding=1); s.n = nn.LayerNorm(8)
        def forward(s, x): return s.n(F.gelu(s.c(x)).transpose(1, 2)).amax(1)
    with torch.no_grad():
        run(D(), X(2, 4, 10), dynamic=True)
elif name == "cuda_cosine_pairwise_train":
    class P(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 8)
        def forward(s, x, y):
            a, b = s.l(x), s.l(y)
            return (F.cosine_similarity(a, b, dim=1) + F.pairwise_distance(a, b, p=1.5)).mean() + torch.cdist(a, b, p=1.0).mean()
    run(P(), X(6, 8), X(6, 8), train=True)
elif name == "cuda_layernorm_bf16_dynamic":
    class L(nn.Module):
        def __init__(s): super().__init__(); s.n = nn.LayerNorm(32); s.l = nn.Linear(32, 32)
        def forward(s, x): return F.gelu(s.l(s.n(x)), approximate="tanh")
    with torch.no_grad():
        run(L().to(torch.bfloat16), X(4, 7, 32, dt=torch.bfloat16), dynamic=True)
elif name == "cpu_logcumsumexp_cummax":
    def f(x):
        v, i = torch.cummax(x, 1)
        w, j = torch.cummin(x, 0)
        return torch.logcumsumexp(x, 1) + v + w + i.float() + j.float() + torch.cumprod(x.tanh(), 1)
    with torch.no_grad():
        run(f, X(5, 9))
