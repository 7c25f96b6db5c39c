# survey_models4.py — the fourth batch of real graphs the project has never seen: blocks of
# well-known architectures (ConvNeXt, MobileNetV2, EfficientNet SE, Swin, ShuffleNet, T5, GPT-NeoX,
# ALiBi, CLIP, VAE, DLRM, wav2vec, Perceiver) and losses / tensor ops models use, cpu and cuda.
# Run on the GPU machine:  OUT=/path python3 tests/tools/survey_models4.py   (4 models at a time)
# then here:               tests/tools/survey_logs.sh /path/logs
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from survey_driver import child
MODELS = ["cuda_convnext_block_train", "cpu_mobilenet_v2_block_train", "cuda_efficientnet_se_train", "cuda_swin_window_attn",
          "cpu_shufflenet_shuffle", "cpu_t5_relative_bias", "cuda_neox_rotate_half_train", "cuda_alibi_attention",
          "cuda_clip_loss_train", "cpu_vae_reparam_train", "cpu_dlrm_interaction", "cuda_wav2vec_feature_train",
          "cuda_perceiver_cross_attn_train", "cpu_metric_losses_train", "cuda_focal_dice_train", "cpu_cdist_cosine",
          "cuda_fold_unfold", "cpu_roll_flip_rot90", "cuda_tril_mask_diag", "cpu_special_fns",
          "cuda_trilinear_pool3d", "cpu_max_unpool", "cuda_bf16_adamw_foreach", "cpu_nan_to_num_logit",
          "cuda_gru_cell_train", "cpu_lgamma_digamma", "cuda_spectral_norm_eval", "cpu_layernorm_noaffine_train"]
name, dev, run, X = child(__file__, MODELS, "/tmp/survey4")

import math
import torch, torch.nn as nn, torch.nn.functional as F

def attn(q, k, v, bias=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if bias is not None: s = s + bias
    return s.softmax(-1) @ v

if name == "cuda_convnext_block_train":
    class C(nn.Module):
        def __init__(s):
            super().__init__(); s.dw = nn.Conv2d(16, 16, 7, padding=3, groups=16); s.n = nn.LayerNorm(16)
            s.a = nn.Linear(16, 64); s.b = nn.Linear(64, 16); s.g = nn.Parameter(torch.full((16,), 1e-6))
        def forward(s, x):
            h = s.dw(x).permute(0, 2, 3, 1)
            h = s.g * s.b(F.gelu(s.a(s.n(h))))
            return x + h.permute(0, 3, 1, 2)
    run(C(), X(2, 16, 8, 8), train=True)
elif name == "cpu_mobilenet_v2_block_train":
    class M(nn.Module):
        def __init__(s):
            super().__init__()
            s.e = nn.Sequential(nn.Conv2d(8, 48, 1, bias=False), nn.BatchNorm2d(48), nn.ReLU6())
            s.d = nn.Sequential(nn.Conv2d(48, 48, 3, padding=1, groups=48, bias=False), nn.BatchNorm2d(48), nn.ReLU6())
            s.p = nn.Sequential(nn.Conv2d(48, 8, 1, bias=False), nn.BatchNorm2d(8))
        def forward(s, x): return x + s.p(s.d(s.e(x)))
    run(M(), X(2, 8, 10, 10), train=True)
elif name == "cuda_efficientnet_se_train":
    class S(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(16, 16, 3, padding=1); s.r = nn.Conv2d(16, 4, 1); s.e = nn.Conv2d(4, 16, 1)
        def forward(s, x):
            h = F.silu(s.c(x))
            w = torch.sigmoid(s.e(F.silu(s.r(F.adaptive_avg_pool2d(h, 1)))))
            return h * w
    run(S(), X(2, 16, 8, 8), train=True)
elif name == "cuda_swin_window_attn":
    class W(nn.Module):
        def __init__(s):
            super().__init__(); s.qkv = nn.Linear(16, 48); s.t = nn.Parameter(torch.randn(9, 2) * 0.02)
            c = torch.stack(torch.meshgrid(torch.arange(2), torch.arange(2), indexing="ij")).flatten(1)
            r = (c[:, :, None] - c[:, None, :]).permute(1, 2, 0) + 1
            s.register_buffer("idx", r[..., 0] * 3 + r[..., 1])
        def forward(s, x):
            B, H, Wd, C = x.shape
            x = torch.roll(x, (-1, -1), (1, 2))
            w = x.view(B, H // 2, 2, Wd // 2, 2, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, 4, C)
            q, k, v = s.qkv(w).reshape(-1, 4, 3, 2, 8).permute(2, 0, 3, 1, 4)
            bias = s.t[s.idx.view(-1)].view(4, 4, 2).permute(2, 0, 1)
            o = attn(q, k, v, bias).transpose(1, 2).reshape(-1, 4, C)
            o = o.view(B, H // 2, Wd // 2, 2, 2, C).permute(0, 1, 3, 2, 4, 5).reshape(B, H, Wd, C)
            return torch.roll(o, (1, 1), (1, 2))
    with torch.no_grad():
        run(W(), X(2, 4, 4, 16))
elif name == "cpu_shufflenet_shuffle":
    class S(nn.Module):
        def forward(s, x):
            b, c, h, w = x.shape
            y = x.view(b, 2, c // 2, h, w).transpose(1, 2).contiguous().view(b, c, h, w)
            return F.relu(y).chunk(2, 1)[0] * torch.cat([y[:, : c // 2], y[:, c // 2:]], 1)[:, 1::2]
    run(S(), X(2, 8, 5, 5))
elif name == "cpu_t5_relative_bias":
    class T(nn.Module):
        def __init__(s): super().__init__(); s.e = nn.Embedding(32, 4)
        def forward(s, q):
            L = q.shape[-2]
            rel = torch.arange(L)[None, :] - torch.arange(L)[:, None]
            nb, me = 16, 8
            ret = (rel > 0).long() * nb
            n = rel.abs()
            large = me + (torch.log(n.float() / me + 1e-6) / math.log(128 / me) * (nb - me)).long()
            large = torch.min(large, torch.full_like(large, nb - 1))
            bucket = ret + torch.where(n < me, n, large)
            return (q @ q.transpose(-1, -2)) + s.e(bucket).permute(2, 0, 1)[None]
    run(T(), X(2, 4, 12, 8))
elif name == "cuda_neox_rotate_half_train":
    class R(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(32, 32)
        def forward(s, x, cos, sin):
            q = s.l(x).view(2, 6, 4, 8).transpose(1, 2)
            x1, x2 = q.chunk(2, -1)
            rot = torch.cat([-x2, x1], -1)
            return q * cos + rot * sin
    t = torch.arange(6, device=dev)[:, None] * torch.arange(8, device=dev)[None] * 0.1
    run(R(), X(2, 6, 32), t.cos(), t.sin(), train=True)
elif name == "cuda_alibi_attention":
    class A(nn.Module):
        def forward(s, q, k, v):
            H, L = q.shape[1], q.shape[2]
            slopes = torch.pow(2.0, -8.0 * torch.arange(1, H + 1, device=q.device) / H)
            pos = torch.arange(L, device=q.device)
            bias = slopes[:, None, None] * (pos[None, :] - pos[:, None])[None].float()
            mask = torch.triu(torch.ones(L, L, dtype=torch.bool, device=q.device), 1)
            return F.scaled_dot_product_attention(q, k, v, attn_mask=bias.masked_fill(mask, float("-inf")))
    with torch.no_grad():
        run(A(), X(2, 4, 10, 8), X(2, 4, 10, 8), X(2, 4, 10, 8))
elif name == "cuda_clip_loss_train":
    class C(nn.Module):
        def __init__(s): super().__init__(); s.i = nn.Linear(16, 8); s.t = nn.Linear(12, 8); s.ls = nn.Parameter(torch.tensor(math.log(1 / 0.07)))
        def forward(s, a, b):
            ia, tb = F.normalize(s.i(a), dim=-1), F.normalize(s.t(b), dim=-1)
            lg = s.ls.exp() * ia @ tb.t()
            lab = torch.arange(a.shape[0], device=a.device)
            return (F.cross_entropy(lg, lab) + F.cross_entropy(lg.t(), lab)) / 2
    run(C(), X(6, 16), X(6, 12), train=True)
elif name == "cpu_vae_reparam_train":
    class V(nn.Module):
        def __init__(s): super().__init__(); s.e = nn.Linear(10, 8); s.d = nn.Linear(4, 10)
        def forward(s, x):
            mu, logvar = s.e(x).chunk(2, -1)
            z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
            rec = F.binary_cross_entropy(torch.sigmoid(s.d(z)), x.sigmoid(), reduction="sum")
            return rec - 0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    run(V(), X(5, 10), train=True)
elif name == "cpu_dlrm_interaction":
    class D(nn.Module):
        def __init__(s): super().__init__(); s.b = nn.Linear(4, 8); s.e = nn.ModuleList([nn.EmbeddingBag(20, 8, mode="sum") for _ in range(3)])
        def forward(s, dense, idx, off):
            x = F.relu(s.b(dense))
            T = torch.stack([x] + [e(idx[i], off) for i, e in enumerate(s.e)], 1)
            Z = torch.bmm(T, T.transpose(1, 2))
            li, lj = torch.tril_indices(4, 4, -1)
            return torch.cat([x, Z[:, li, lj]], 1)
    run(D(), X(3, 4), torch.randint(0, 20, (3, 6), device=dev), torch.tensor([0, 2, 4], device=dev))
elif name == "cuda_wav2vec_feature_train":
    run(nn.Sequential(nn.Conv1d(1, 16, 10, stride=5, bias=False), nn.GroupNorm(16, 16), nn.GELU(), nn.Conv1d(16, 16, 3, stride=2, bias=False), nn.GELU()), X(2, 1, 200), train=True)
elif name == "cuda_perceiver_cross_attn_train":
    class P(nn.Module):
        def __init__(s):
            super().__init__(); s.lat = nn.Parameter(torch.randn(4, 16)); s.q = nn.Linear(16, 16); s.kv = nn.Linear(24, 32); s.n = nn.LayerNorm(24)
        def forward(s, x):
            q = s.q(s.lat).expand(x.shape[0], -1, -1)
            k, v = s.kv(s.n(x)).chunk(2, -1)
            return F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None]).squeeze(1)
    run(P(), X(2, 20, 24), train=True)
elif name == "cpu_metric_losses_train":
    class L(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 8)
        def forward(s, a, p, n, y):
            ea, ep, en = s.l(a), s.l(p), s.l(n)
            return (F.triplet_margin_loss(ea, ep, en, margin=0.5) + F.cosine_embedding_loss(ea, ep, y)
                    + F.margin_ranking_loss(ea.sum(-1), en.sum(-1), y) + F.hinge_embedding_loss(ea, y[:, None].expand_as(ea))
                    + F.soft_margin_loss(ea, y[:, None].expand_as(ea)) + F.multilabel_soft_margin_loss(ea, (y[:, None] > 0).float().expand_as(ea)))
    run(L(), X(6, 8), X(6, 8), X(6, 8), torch.tensor([1., -1, 1, 1, -1, -1], device=dev), train=True)
elif name == "cuda_focal_dice_train":
    class F_(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(3, 2, 3, padding=1)
        def forward(s, x, t):
            lg = s.c(x)
            p = lg.sigmoid()
            ce = F.binary_cross_entropy_with_logits(lg, t, reduction="none")
            pt = p * t + (1 - p) * (1 - t)
            focal = (0.25 * (1 - pt) ** 2 * ce).mean()
            dice = 1 - (2 * (p * t).sum((2, 3)) + 1) / (p.sum((2, 3)) + t.sum((2, 3)) + 1)
            return focal + dice.mean()
    run(F_(), X(2, 3, 8, 8), (torch.rand(2, 2, 8, 8, device=dev) > 0.5).float(), train=True)
elif name == "cpu_cdist_cosine":
    class D(nn.Module):
        def forward(s, a, b): return torch.cdist(a, b) + F.cosine_similarity(a[:, :1], b[None, :5], dim=-1) + F.pairwise_distance(a, b[:6], p=1)[:, None]
    run(D(), X(6, 4), X(5, 4))
elif name == "cuda_fold_unfold":
    class U(nn.Module):
        def forward(s, x):
            p = F.unfold(x, 3, padding=1, stride=2)
            return F.fold(p * 0.5, (6, 6), 3, padding=1, stride=2) + F.pixel_unshuffle(x, 2).sum(1, keepdim=True).repeat_interleave(4, -1).repeat_interleave(4, -2)[..., :6, :6]
    run(U(), X(1, 2, 6, 6))
elif name == "cpu_roll_flip_rot90":
    class R(nn.Module):
        def forward(s, x): return torch.roll(x, 2, 1) + torch.flip(x, (0, 1)) + torch.rot90(x, 1, (0, 1)) + x.diagonal().sum() + torch.diag_embed(x[0])[:4, :4]
    run(R(), X(4, 4))
elif name == "cuda_tril_mask_diag":
    class T(nn.Module):
        def forward(s, x):
            m = torch.tril(torch.ones_like(x)).bool()
            return torch.where(m, x, x.new_zeros(())).cumsum(-1) + torch.triu(x, 1).exp() + torch.diagonal(x, 0, -2, -1).unsqueeze(-1) + torch.eye(x.shape[-1], device=x.device)
    run(T(), X(3, 5, 5))
elif name == "cpu_special_fns":
    class S(nn.Module):
        def forward(s, x):
            return (torch.special.erfinv(x.tanh() * 0.9) + torch.special.i0(x) + torch.special.xlog1py(x.abs(), x.exp()) + torch.special.ndtr(x)
                    + torch.special.log_ndtr(x) + torch.special.sinc(x) + torch.special.entr(x.sigmoid()) + torch.special.i1e(x) + torch.special.ndtri(x.sigmoid()))
    run(S(), X(8, 8))
elif name == "cuda_trilinear_pool3d":
    class T(nn.Module):
        def forward(s, x): return F.interpolate(x, scale_factor=2, mode="trilinear", align_corners=False).mean() + F.adaptive_avg_pool3d(x, (2, 2, 2)).sum() + F.max_pool3d(x, 2).amax()
    run(T(), X(1, 2, 4, 4, 4))
elif name == "cpu_max_unpool":
    class U(nn.Module):
        def forward(s, x):
            y, i = F.max_pool2d(x, 2, return_indices=True)
            return F.max_unpool2d(y, i, 2, output_size=x.shape[-2:])
    run(U(), X(1, 2, 6, 6))
elif name == "cuda_bf16_adamw_foreach":
    ps = [torch.randn(8, 8, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3)]
    for p in ps: p.grad = torch.randn_like(p)
    opt = torch.optim.AdamW(ps, lr=1e-3, foreach=True)
    def step(): opt.step()
    run(step)
elif name == "cpu_nan_to_num_logit":
    class N(nn.Module):
        def forward(s, x): return torch.nan_to_num(torch.logit(x.sigmoid(), eps=1e-6) / x, nan=0.0, posinf=1e4) + x.clamp_min(0).sqrt() + torch.frac(x) + torch.sign(x) * x.abs().log1p()
    run(N(), X(6, 6))
elif name == "cuda_gru_cell_train":
    class G(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.GRUCell(8, 16)
        def forward(s, x, h): return s.c(x, h)
    run(G(), X(4, 8), X(4, 16), train=True)
elif name == "cpu_lgamma_digamma":
    class L(nn.Module):
        def forward(s, a, b):
            a, b = F.softplus(a) + 0.5, F.softplus(b) + 0.5
            return torch.lgamma(a) + torch.lgamma(b) - torch.lgamma(a + b) + torch.digamma(a) * torch.polygamma(1, b)
    run(L(), X(5, 5), X(5, 5), train=False)
elif name == "cuda_spectral_norm_eval":
    with torch.no_grad():
        run(nn.Sequential(nn.utils.parametrizations.spectral_norm(nn.Linear(12, 12)), nn.LeakyReLU(0.2)).eval(), X(3, 12))
elif name == "cpu_layernorm_noaffine_train":
    class L(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(12, 12)
        def forward(s, x): return F.layer_norm(s.l(x), (12,)) * F.rms_norm(x, (12,), eps=1e-5)
    run(L(), X(4, 3, 12), train=True)
