# survey_models10.py — the tenth batch of real graphs the project has never seen: a ResNeXt grouped
# bottleneck, a SqueezeNet fire module, a GhostNet module, Swin patch merging, a ViT with a class token
# and learned position embedding, GPT-J interleaved rotary embedding, a GPT-2 attention with a causal
# buffer, a whisper-style conv front end, nn.TransformerDecoderLayer (norm_first), nn.RNNCell, StyleGAN
# pixel norm and AdaIN, spatial softmax keypoints, optical-flow warping with grid_sample (nearest,
# reflection), 3-d padding modes, conv padding='same' with an even kernel, conv_transpose3d, max_pool3d
# with indices and max_unpool3d, avg_pool2d divisor_override, adaptive pools in 3-d, 1-d upsampling,
# cdist with p=1 / inf, cosine-embedding / multilabel / multi-margin / BCE pos_weight / NLL 2-d
# weighted losses, nan reductions (nanmean / nansum / nanmedian), logaddexp / xlogy, remainder / fmod
# / floor_divide on negatives, tensor clamp bounds, stable descending sort in training, diag_embed /
# trace / diagonal, block_diag, split_with_sizes / unbind, index_put with accumulate, slice and select
# scatter by assignment, int64 hashing of ids, rfft2 / irfft2, searchsorted with a sorter, Lion and
# SGD-nesterov optimizer steps, fp16 softmax on the CPU, float64 var_mean on the GPU, int32 embedding
# ids, dynamic sequence lengths; cpu and cuda.
# Run on the GPU machine:  OUT=/path JOBS=10 python3 tests/tools/survey_models10.py
# then here:               tests/tools/survey_logs.sh /path/logs
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from survey_driver import child
MODELS = ["cuda_resnext_grouped_train", "cpu_squeezenet_fire_eval", "cuda_ghost_module_train", "cpu_swin_patch_merging_train",
          "cuda_vit_cls_posemb_train", "cpu_gptj_rotary_interleaved", "cuda_gpt2_causal_buffer_train", "cpu_whisper_frontend",
          "cuda_transformer_decoder_normfirst_train", "cpu_rnn_cell_train", "cuda_pixelnorm_adain_train", "cpu_spatial_softmax_keypoints",
          "cuda_flow_warp_grid_sample_train", "cpu_pad3d_modes_train", "cuda_conv_same_even_kernel_train", "cpu_conv_transpose3d_train",
          "cuda_maxpool3d_unpool3d", "cpu_avgpool_divisor_override_train", "cuda_adaptive_pool3d_train", "cpu_upsample1d_train",
          "cuda_cdist_p1_pinf_train", "cpu_embedding_losses_train", "cuda_bce_posweight_nll2d_train", "cpu_nan_reductions",
          "cuda_logaddexp_xlogy_train", "cpu_remainder_fmod_floordiv", "cuda_clamp_tensor_bounds_train", "cpu_sort_desc_stable_train",
          "cuda_diag_embed_trace_train", "cpu_block_diag_split_unbind_train", "cuda_index_put_accumulate_train", "cpu_slice_select_assign_train",
          "cuda_int64_id_hashing", "cpu_rfft2_irfft2_train", "cuda_searchsorted_sorter", "cpu_lion_sgd_nesterov_step",
          "cpu_fp16_softmax_cpu", "cuda_float64_var_mean", "cpu_embedding_int32_ids_train", "cuda_dynamic_seq_ln_gelu"]
name, dev, run, X = child(__file__, MODELS, "/tmp/survey10")

import math
import torch, torch.nn as nn, torch.nn.functional as F

if name == "cuda_resnext_grouped_train":
    class B(nn.Module):
        def __init__(s):
            super().__init__()
            s.c1 = nn.Conv2d(16, 16, 1, bias=False); s.b1 = nn.BatchNorm2d(16)
            s.c2 = nn.Conv2d(16, 16, 3, padding=1, groups=4, bias=False); s.b2 = nn.BatchNorm2d(16)
            s.c3 = nn.Conv2d(16, 16, 1, bias=False); s.b3 = nn.BatchNorm2d(16)
        def forward(s, x):
            h = F.relu(s.b1(s.c1(x))); h = F.relu(s.b2(s.c2(h)))
            return F.relu(x + s.b3(s.c3(h)))
    run(B(), X(2, 16, 6, 6), train=True)
elif name == "cpu_squeezenet_fire_eval":
    class Fire(nn.Module):
        def __init__(s):
            super().__init__()
            s.sq = nn.Conv2d(8, 4, 1); s.e1 = nn.Conv2d(4, 6, 1); s.e3 = nn.Conv2d(4, 6, 3, padding=1)
        def forward(s, x):
            x = F.max_pool2d(x, 3, stride=2, ceil_mode=True)
            h = F.relu(s.sq(x))
            return torch.cat([F.relu(s.e1(h)), F.relu(s.e3(h))], 1)
    with torch.no_grad():
        run(Fire().eval(), X(2, 8, 10, 10))
elif name == "cuda_ghost_module_train":
    class G(nn.Module):
        def __init__(s):
            super().__init__()
            s.p = nn.Sequential(nn.Conv2d(8, 6, 1, bias=False), nn.BatchNorm2d(6), nn.ReLU())
            s.c = nn.Sequential(nn.Conv2d(6, 6, 3, padding=1, groups=6, bias=False), nn.BatchNorm2d(6), nn.ReLU())
        def forward(s, x):
            a = s.p(x); b = s.c(a)
            return torch.cat([a, b], 1)[:, :10]
    run(G(), X(2, 8, 7, 7), train=True)
elif name == "cpu_swin_patch_merging_train":
    class PM(nn.Module):
        def __init__(s):
            super().__init__()
            s.norm = nn.LayerNorm(16); s.red = nn.Linear(16, 8, bias=False)
        def forward(s, x):
            B, H, W, C = x.shape
            x0 = x[:, 0::2, 0::2]; x1 = x[:, 1::2, 0::2]; x2 = x[:, 0::2, 1::2]; x3 = x[:, 1::2, 1::2]
            x = torch.cat([x0, x1, x2, x3], -1).view(B, -1, 4 * C)
            return s.red(s.norm(x))
    run(PM(), X(2, 6, 6, 4), train=True)
elif name == "cuda_vit_cls_posemb_train":
    class V(nn.Module):
        def __init__(s):
            super().__init__()
            s.proj = nn.Conv2d(3, 16, 4, stride=4); s.cls = nn.Parameter(torch.zeros(1, 1, 16))
            s.pos = nn.Parameter(torch.randn(1, 5, 16) * 0.02); s.ln = nn.LayerNorm(16); s.head = nn.Linear(16, 10)
        def forward(s, x):
            t = s.proj(x).flatten(2).transpose(1, 2)
            t = torch.cat([s.cls.expand(x.shape[0], -1, -1), t], 1) + s.pos
            return s.head(s.ln(t)[:, 0])
    run(V(), X(2, 3, 8, 8), train=True)
elif name == "cpu_gptj_rotary_interleaved":
    def f(q, pos):
        inv = 1.0 / (10000 ** (torch.arange(0, 8, 2, dtype=torch.float32) / 8))
        ang = torch.einsum("i,j->ij", pos.float(), inv)
        sin = torch.repeat_interleave(ang.sin(), 2, dim=-1); cos = torch.repeat_interleave(ang.cos(), 2, dim=-1)
        x1 = q[..., ::2]; x2 = q[..., 1::2]
        rot = torch.stack((-x2, x1), dim=-1).flatten(-2)
        return q * cos + rot * sin
    run(f, X(2, 6, 8), torch.arange(6))
elif name == "cuda_gpt2_causal_buffer_train":
    class A(nn.Module):
        def __init__(s):
            super().__init__()
            s.c_attn = nn.Linear(16, 48); s.c_proj = nn.Linear(16, 16)
            s.register_buffer("bias", torch.tril(torch.ones(8, 8)).view(1, 1, 8, 8))
        def forward(s, x):
            B, T, C = x.shape
            q, k, v = s.c_attn(x).split(16, dim=2)
            q = q.view(B, T, 2, 8).transpose(1, 2); k = k.view(B, T, 2, 8).transpose(1, 2); v = v.view(B, T, 2, 8).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(8))
            att = att.masked_fill(s.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.dropout(F.softmax(att, dim=-1), 0.1, training=True)
            return s.c_proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))
    run(A(), X(2, 7, 16), train=True)
elif name == "cpu_whisper_frontend":
    class W(nn.Module):
        def __init__(s):
            super().__init__()
            s.c1 = nn.Conv1d(8, 16, 3, padding=1); s.c2 = nn.Conv1d(16, 16, 3, stride=2, padding=1)
            half = 8; t = torch.exp(-math.log(10000) / (half - 1) * torch.arange(half))
            ang = torch.arange(10)[:, None] * t[None, :]
            s.register_buffer("pos", torch.cat([ang.sin(), ang.cos()], 1))
        def forward(s, x):
            h = F.gelu(s.c2(F.gelu(s.c1(x)))).permute(0, 2, 1)
            return h + s.pos[: h.shape[1]]
    with torch.no_grad():
        run(W().eval(), X(2, 8, 20))
elif name == "cuda_transformer_decoder_normfirst_train":
    m = nn.TransformerDecoderLayer(16, 2, 32, dropout=0.0, batch_first=True, norm_first=True, activation="gelu")
    mask = nn.Transformer.generate_square_subsequent_mask(5, device=dev)
    class D(nn.Module):
        def __init__(s):
            super().__init__(); s.m = m
        def forward(s, t, mem):
            return s.m(t, mem, tgt_mask=mask, tgt_is_causal=True)
    run(D(), X(2, 5, 16), X(2, 7, 16), train=True)
elif name == "cpu_rnn_cell_train":
    class R(nn.Module):
        def __init__(s):
            super().__init__(); s.c = nn.RNNCell(6, 8, nonlinearity="tanh"); s.r = nn.RNNCell(8, 8, nonlinearity="relu")
        def forward(s, xs):
            h = torch.zeros(xs.shape[1], 8); g = torch.zeros(xs.shape[1], 8)
            for t in range(xs.shape[0]):
                h = s.c(xs[t], h); g = s.r(h, g)
            return g
    run(R(), X(4, 3, 6), train=True)
elif name == "cuda_pixelnorm_adain_train":
    class P(nn.Module):
        def __init__(s):
            super().__init__(); s.style = nn.Linear(8, 12)
        def forward(s, x, w):
            x = x * torch.rsqrt(x.pow(2).mean(dim=1, keepdim=True) + 1e-8)
            m = x.mean(dim=(2, 3), keepdim=True); sd = x.std(dim=(2, 3), keepdim=True) + 1e-5
            ys, yb = s.style(w).chunk(2, 1)
            return F.leaky_relu((x - m) / sd * ys[:, :, None, None] + yb[:, :, None, None], 0.2) * math.sqrt(2)
    run(P(), X(2, 6, 5, 5), X(2, 8), train=True)
elif name == "cpu_spatial_softmax_keypoints":
    def f(feat):
        B, C, H, W = feat.shape
        p = F.softmax(feat.view(B, C, H * W) / 0.5, -1).view(B, C, H, W)
        ys = torch.linspace(-1, 1, H); xs = torch.linspace(-1, 1, W)
        gy, gx = torch.meshgrid(ys, xs, indexing="ij")
        return torch.stack([(p * gx).sum((2, 3)), (p * gy).sum((2, 3))], -1)
    run(f, X(2, 4, 6, 7))
elif name == "cuda_flow_warp_grid_sample_train":
    class Wp(nn.Module):
        def __init__(s):
            super().__init__(); s.flow = nn.Conv2d(3, 2, 3, padding=1)
        def forward(s, img):
            B, C, H, W = img.shape
            gy, gx = torch.meshgrid(torch.arange(H, device=img.device), torch.arange(W, device=img.device), indexing="ij")
            base = torch.stack([gx, gy], 0).float()[None]
            co = base + s.flow(img)
            co = torch.stack([2 * co[:, 0] / (W - 1) - 1, 2 * co[:, 1] / (H - 1) - 1], -1)
            a = F.grid_sample(img, co, mode="bilinear", padding_mode="reflection", align_corners=True)
            b = F.grid_sample(img, co, mode="nearest", padding_mode="border", align_corners=False)
            return a + b
    run(Wp(), X(2, 3, 6, 7), train=True)
elif name == "cpu_pad3d_modes_train":
    class P(nn.Module):
        def __init__(s):
            super().__init__(); s.c = nn.Conv3d(2, 2, 3)
        def forward(s, x):
            a = s.c(F.pad(x, (1, 1, 1, 1, 1, 1), mode="circular"))
            b = s.c(F.pad(x, (1, 1, 1, 1, 1, 1), mode="reflect"))
            c = s.c(F.pad(x, (1, 1, 1, 1, 1, 1), mode="replicate"))
            return a + b * c
    run(P(), X(1, 2, 4, 5, 4), train=True)
elif name == "cuda_conv_same_even_kernel_train":
    class C(nn.Module):
        def __init__(s):
            super().__init__()
            s.a = nn.Conv2d(4, 4, 4, padding="same"); s.b = nn.Conv1d(4, 4, 2, padding="same", dilation=3)
        def forward(s, x):
            h = F.silu(s.a(x))
            return s.b(h.flatten(2))
    run(C(), X(2, 4, 5, 6), train=True)
elif name == "cpu_conv_transpose3d_train":
    class T(nn.Module):
        def __init__(s):
            super().__init__(); s.t = nn.ConvTranspose3d(3, 2, 3, stride=2, padding=1, output_padding=1); s.bn = nn.BatchNorm3d(2)
        def forward(s, x):
            return F.relu(s.bn(s.t(x)))
    run(T(), X(2, 3, 3, 4, 3), train=True)
elif name == "cuda_maxpool3d_unpool3d":
    def f(x):
        y, i = F.max_pool3d(x, 2, stride=2, return_indices=True)
        return F.max_unpool3d(y * 2, i, 2, stride=2), y.sum()
    run(f, X(2, 3, 4, 6, 4))
elif name == "cpu_avgpool_divisor_override_train":
    class A(nn.Module):
        def __init__(s):
            super().__init__(); s.c = nn.Conv2d(3, 3, 1)
        def forward(s, x):
            h = s.c(x)
            return F.avg_pool2d(h, 3, stride=2, padding=1, divisor_override=4) + F.avg_pool2d(h, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
    run(A(), X(2, 3, 7, 8), train=True)
elif name == "cuda_adaptive_pool3d_train":
    class A(nn.Module):
        def __init__(s):
            super().__init__(); s.c = nn.Conv3d(2, 4, 1)
        def forward(s, x):
            h = s.c(x)
            return F.adaptive_avg_pool3d(h, (2, 3, 2)).sum() + F.adaptive_max_pool3d(h, (3, 2, 2)).pow(2).sum()
    run(A(), X(2, 2, 5, 7, 4), train=True)
elif name == "cpu_upsample1d_train":
    class U(nn.Module):
        def __init__(s):
            super().__init__(); s.c = nn.Conv1d(3, 3, 3, padding=1)
        def forward(s, x):
            h = s.c(x)
            return F.interpolate(h, scale_factor=2, mode="nearest") + F.interpolate(h, size=2 * x.shape[-1], mode="linear", align_corners=False)
    run(U(), X(2, 3, 9), train=True)
elif name == "cuda_cdist_p1_pinf_train":
    class D(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(5, 5)
        def forward(s, a, b):
            h = s.l(a)
            return torch.cdist(h, b, p=1).sum() + torch.cdist(h, b, p=float("inf")).sum() + torch.cdist(h, b, p=3).sum()
    run(D(), X(2, 6, 5), X(2, 4, 5), train=True)
elif name == "cpu_embedding_losses_train":
    class L(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(6, 5)
        def forward(s, a, b, y, t, cls):
            ha = s.l(a); hb = s.l(b)
            return (F.cosine_embedding_loss(ha, hb, y, margin=0.2) + F.multilabel_soft_margin_loss(ha, t)
                    + F.multi_margin_loss(ha, cls, p=1, margin=0.5) + F.multilabel_margin_loss(ha, torch.tensor([[3, 0, -1, 1, 2]] * 4)))
    run(L(), X(4, 6), X(4, 6), torch.tensor([1, -1, 1, -1]), (torch.rand(4, 5) > 0.5).float(), torch.tensor([0, 4, 2, 1]), train=True)
elif name == "cuda_bce_posweight_nll2d_train":
    class L(nn.Module):
        def __init__(s):
            super().__init__(); s.c = nn.Conv2d(3, 4, 1)
        def forward(s, x, y, t):
            h = s.c(x)
            w = torch.tensor([1.0, 2.0, 0.5, 1.5], device=x.device)
            a = F.nll_loss(F.log_softmax(h, 1), y, weight=w, ignore_index=2)
            b = F.binary_cross_entropy_with_logits(h, t, pos_weight=torch.tensor([3.0, 1.0, 1.0, 2.0], device=x.device)[:, None, None])
            return a + b
    run(L(), X(2, 3, 5, 6), torch.randint(0, 4, (2, 5, 6), device=dev), torch.rand(2, 4, 5, 6, device=dev), train=True)
elif name == "cpu_nan_reductions":
    def f(x):
        x = torch.where(x > 1.0, torch.full_like(x, float("nan")), x)
        return torch.nanmean(x, 1), torch.nansum(x, 0), torch.nanmedian(x, 1).values, x.nan_to_num().amax()
    run(f, X(6, 9))
elif name == "cuda_logaddexp_xlogy_train":
    class L(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(6, 6)
        def forward(s, x, p):
            h = s.l(x)
            return torch.logaddexp(h, -h).sum() + torch.logaddexp2(h, x).sum() + torch.xlogy(p, torch.sigmoid(h)).sum() + torch.special.xlog1py(p, h.exp()).sum()
    run(L(), X(4, 6), torch.rand(4, 6, device=dev) * (torch.rand(4, 6, device=dev) > 0.3), train=True)
elif name == "cpu_remainder_fmod_floordiv":
    def f(a, b, x):
        return (torch.remainder(a, b), torch.fmod(a, b), torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"),
                torch.remainder(x, -1.5), torch.fmod(x, 1.5), torch.floor_divide(x, 0.7), a // 3, a % -4)
    run(f, torch.randint(-20, 20, (5, 6)), torch.tensor([3, -3, 7, -7, 5, 2]), X(5, 6) * 4)
elif name == "cuda_clamp_tensor_bounds_train":
    class C(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(6, 6)
        def forward(s, x, lo, hi):
            h = s.l(x)
            return torch.clamp(h, lo, hi).sum() + torch.minimum(h, hi).sum() + torch.fmax(h, lo).sum() + torch.clamp(h, min=lo).sum()
    run(C(), X(4, 6), X(6) - 0.5, X(1, 6) + 0.5, train=True)
elif name == "cpu_sort_desc_stable_train":
    class S(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(8, 8)
        def forward(s, x):
            v, i = torch.sort(s.l(x).round(decimals=1), dim=-1, descending=True, stable=True)
            return (v[:, :3] * torch.arange(3, 0, -1)).sum() + i[:, 0].float().sum()
    run(S(), X(5, 8), train=True)
elif name == "cuda_diag_embed_trace_train":
    class D(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(5, 5)
        def forward(s, x):
            h = s.l(x)
            m = torch.diag_embed(h, offset=1)
            return torch.diagonal(m @ m.transpose(-1, -2), dim1=-2, dim2=-1).sum() + torch.trace(h[0:5]) + torch.diag(h[0]).sum()
    run(D(), X(5, 5), train=True)
elif name == "cpu_block_diag_split_unbind_train":
    class B(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(6, 6)
        def forward(s, x):
            a, b, c = torch.split(s.l(x), [1, 2, 3], dim=1)
            r = torch.unbind(b, 1)
            return torch.block_diag(a, c, r[0][:, None] * r[1][:, None]).pow(2).sum()
    run(B(), X(4, 6), train=True)
elif name == "cuda_index_put_accumulate_train":
    class I(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(4, 4)
        def forward(s, x, idx, mask):
            h = s.l(x)
            z = torch.zeros(6, 4, device=x.device).index_put((idx,), h, accumulate=True)
            z2 = h.index_put((mask,), torch.tensor(0.5, device=x.device))
            return z.pow(2).sum() + z2.sum()
    run(I(), X(8, 4), torch.tensor([0, 2, 2, 5, 0, 1, 5, 5], device=dev), torch.rand(8, 4, device=dev) > 0.5, train=True)
elif name == "cpu_slice_select_assign_train":
    class S(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(6, 6)
        def forward(s, x):
            h = s.l(x)
            y = torch.zeros(5, 8)
            y[:, 1:7] = h; y[2] = h[0, 0]; y[:, ::3] *= 2
            return y.tanh().sum()
    run(S(), X(5, 6), train=True)
elif name == "cuda_int64_id_hashing":
    def f(ids, table):
        h = (ids * 2654435761 + 40503) ^ (ids >> 3)
        b = torch.remainder(h, 97)
        return table[b].sum(1), b.max(), (h & 0xFFFF).to(torch.int32)
    run(f, torch.randint(0, 1 << 40, (4, 6), device=dev), X(97, 8))
elif name == "cpu_rfft2_irfft2_train":
    class Fs(nn.Module):
        def __init__(s):
            super().__init__(); s.w = nn.Parameter(torch.randn(3, 8, 5, dtype=torch.cfloat) * 0.1)
        def forward(s, x):
            X_ = torch.fft.rfft2(x, norm="ortho")
            return torch.fft.irfft2(X_ * s.w, s=x.shape[-2:], norm="ortho")
    run(Fs(), X(2, 3, 8, 8), train=True)
elif name == "cuda_searchsorted_sorter":
    def f(seq, v):
        sorter = torch.argsort(seq, -1)
        return torch.searchsorted(seq, v, sorter=sorter, right=True), torch.searchsorted(seq.sort(-1).values, v, side="left")
    run(f, X(3, 10), X(3, 4))
elif name == "cpu_lion_sgd_nesterov_step":
    ps = [torch.randn(6, 5, requires_grad=True), torch.randn(7, requires_grad=True)]
    for p in ps:
        p.grad = torch.randn_like(p)
    sgd = torch.optim.SGD(ps[:1], lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-2)
    ms = [torch.zeros_like(p) for p in ps]
    @torch.compile
    def step():
        sgd.step()
        with torch.no_grad():
            for p, m in zip(ps[1:], ms[1:]):
                u = (0.9 * m + 0.1 * p.grad).sign()
                p.mul_(1 - 1e-3 * 0.1).add_(u, alpha=-1e-3)
                m.lerp_(p.grad, 0.01)
    step(); step()
    print("ok")
elif name == "cpu_fp16_softmax_cpu":
    def f(x, m):
        return F.softmax(x.masked_fill(m, float("-inf")), -1).to(torch.float16), F.log_softmax(x, 0)
    run(f, X(4, 9, dt=torch.float16), torch.rand(4, 9) > 0.8)
elif name == "cuda_float64_var_mean":
    class N(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(7, 7).double()
        def forward(s, x):
            v, m = torch.var_mean(s.l(x), 0, correction=0)
            return (s.l(x) - m) * torch.rsqrt(v + 1e-12)
    run(N(), X(6, 7, dt=torch.float64), train=True)
elif name == "cpu_embedding_int32_ids_train":
    class E(nn.Module):
        def __init__(s):
            super().__init__(); s.e = nn.Embedding(20, 6); s.l = nn.Linear(6, 3)
        def forward(s, ids):
            return s.l(s.e(ids).mean(1))
    run(E(), torch.randint(0, 20, (4, 5), dtype=torch.int32), train=True)
elif name == "cuda_dynamic_seq_ln_gelu":
    class D(nn.Module):
        def __init__(s):
            super().__init__(); s.ln = nn.LayerNorm(16); s.l = nn.Linear(16, 16)
        def forward(s, x):
            return F.gelu(s.l(s.ln(x)), approximate="tanh") + x.cumsum(1) / torch.arange(1, x.shape[1] + 1, device=x.device)[:, None]
    m = D().to(dev); cm = torch.compile(m)
    x = X(2, 5, 16); torch._dynamo.mark_dynamic(x, 1)
    cm(x).sum().backward()
    y = X(2, 9, 16); torch._dynamo.mark_dynamic(y, 1)
    cm(y)
    print("ok")
