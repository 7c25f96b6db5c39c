# survey_models14.py — the fourteenth batch of real graphs the project has never seen: Gemma-2's logit
# soft-capping and scaled embeddings, Phi's partial rotary embedding, Falcon's parallel attention + MLP
# with multi-query attention, MPT's QK-LayerNorm with clipped QKV, xPos rotary scaling, a Qwen2-MoE
# layer with a sigmoid-gated shared expert, segment_reduce over lengths, SchNet's continuous-filter
# convolution, an E(n)-equivariant GNN layer, RealNVP affine coupling, a rational-quadratic spline flow,
# CenterNet heatmap decoding, torchvision's RGB <-> HSV colour jitter, JPEG-style 8x8 DCT quantization,
# a Haar wavelet round trip, RAFT's correlation pyramid lookup, a stereo cost volume with soft-argmin,
# an RNN-T joint network, QRNN fo-pooling, the LAMB and Adafactor optimizer steps, the Barlow Twins and
# VICReg losses, a complex-valued Linear Recurrent Unit, an S4D Vandermonde kernel with FFT convolution,
# FastSpeech's length regulator, YOLOv8's distribution-focal-loss box decoding, a HiFi-GAN residual
# block with weight-norm parametrizations, a causal TCN, a Set Transformer (ISAB + PMA), DIN attention,
# NeuMF, a MoCo queue update, a BiFPN fast-normalized fusion node, SuperPoint descriptor sampling, a
# homography warp, PointNet++ farthest point sampling and grouping, entmax-1.5 and Instant-NGP's hash
# encoding; cpu and cuda.
# Run on the GPU machine:  OUT=/path JOBS=10 python3 tests/tools/survey_models14.py
# then here:               tests/tools/survey_logs.sh /path/logs
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from survey_driver import child
MODELS = ["cpu_gemma_softcap_attn", "cpu_phi_partial_rotary_train", "cpu_segment_reduce_lengths", "cpu_schnet_cfconv_train",
          "cpu_egnn_layer_train", "cpu_realnvp_coupling_train", "cpu_rq_spline_flow_train", "cpu_centernet_decode",
          "cpu_rgb_to_hsv_jitter", "cpu_dct8x8_jpeg_quant", "cpu_haar_dwt_idwt_train", "cpu_raft_corr_pyramid",
          "cpu_stereo_cost_volume_train", "cpu_rnnt_joint_train", "cpu_qrnn_fo_pool_train", "cpu_lamb_step",
          "cpu_adafactor_step", "cpu_barlow_twins_loss_train", "cpu_lru_complex_scan_train", "cpu_fastspeech_length_regulator",
          "cuda_gemma_softcap_attn_bf16", "cuda_falcon_parallel_mqa_train", "cuda_yolov8_dfl_decode", "cuda_vicreg_loss_train",
          "cuda_hifigan_resblock_train", "cuda_tcn_causal_conv_train", "cuda_set_transformer_isab_train", "cuda_din_attention_ctr_train",
          "cuda_ncf_neumf_train", "cuda_moco_queue_enqueue_train", "cuda_bifpn_fusion_train", "cuda_superpoint_desc_sample",
          "cuda_perspective_warp_homography", "cuda_s4d_vandermonde_kernel_train", "cuda_rope_xpos_scale", "cuda_mpt_qk_layernorm_clip_train",
          "cuda_pointnet2_fps_group", "cuda_qwen2_moe_shared_expert_train", "cuda_entmax15_train", "cuda_instant_ngp_hash_encode_train",
          "cuda_rnnt_joint_fp16_train"]
name, dev, run, X = child(__file__, MODELS, "/tmp/survey14")

import math
import torch, torch.nn as nn, torch.nn.functional as F

base = name.split("_", 1)[1]


def softcap(x, c):
    return torch.tanh(x / c) * c


class GemmaBlock(nn.Module):
    """Gemma-2: embeddings times sqrt(d), RMSNorm with (1 + w), soft-capped attention logits and
    final logits, GeGLU with the tanh gelu, tied LM head."""
    def __init__(s, v=50, d=32, h=4):
        super().__init__()
        s.emb = nn.Embedding(v, d); s.h = h
        s.n1 = nn.Parameter(torch.zeros(d)); s.n2 = nn.Parameter(torch.zeros(d))
        s.qkv = nn.Linear(d, 3 * d, bias=False); s.o = nn.Linear(d, d, bias=False)
        s.gate = nn.Linear(d, 2 * d, bias=False); s.up = nn.Linear(d, 2 * d, bias=False); s.down = nn.Linear(2 * d, d, bias=False)
    def rms(s, x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * (1.0 + w.float())).type_as(x)
    def forward(s, ids):
        x = s.emb(ids)
        B, T, D = x.shape
        x = x * torch.tensor(D ** 0.5, dtype=x.dtype)
        q, k, v = s.qkv(s.rms(x, s.n1)).view(B, T, 3, s.h, D // s.h).permute(2, 0, 3, 1, 4)
        att = softcap((q @ k.transpose(-1, -2)) * (D // s.h) ** -0.5, 50.0)
        mask = torch.ones(T, T, dtype=torch.bool, device=ids.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(-1, dtype=torch.float32).to(q.dtype)
        x = x + s.o((att @ v).transpose(1, 2).reshape(B, T, D))
        hn = s.rms(x, s.n2)
        x = x + s.down(F.gelu(s.gate(hn), approximate="tanh") * s.up(hn))
        return softcap((x @ s.emb.weight.t()).float(), 30.0)


class PhiBlock(nn.Module):
    """Phi: one LayerNorm feeding attention and MLP in parallel, rotary on the first `rot` dims only."""
    def __init__(s, d=32, h=4, rot=4):
        super().__init__(); s.h = h; s.rot = rot
        s.ln = nn.LayerNorm(d); s.qkv = nn.Linear(d, 3 * d); s.dense = nn.Linear(d, d); s.fc1 = nn.Linear(d, 4 * d); s.fc2 = nn.Linear(4 * d, d)
    def forward(s, x):
        B, T, D = x.shape
        h = s.ln(x)
        q, k, v = s.qkv(h).view(B, T, 3, s.h, D // s.h).permute(2, 0, 3, 1, 4)
        inv = 1.0 / (10000 ** (torch.arange(0, s.rot, 2, device=x.device).float() / s.rot))
        fr = torch.outer(torch.arange(T, device=x.device).float(), inv)
        emb = torch.cat([fr, fr], -1); cos, sin = emb.cos(), emb.sin()
        def rope(u):
            ur, up = u[..., :s.rot], u[..., s.rot:]
            u1, u2 = ur[..., :s.rot // 2], ur[..., s.rot // 2:]
            return torch.cat([ur * cos + torch.cat([-u2, u1], -1) * sin, up], -1)
        a = F.scaled_dot_product_attention(rope(q), rope(k), v, is_causal=True)
        return x + s.dense(a.transpose(1, 2).reshape(B, T, D)) + s.fc2(F.gelu(s.fc1(h), approximate="tanh"))


class FalconBlock(nn.Module):
    """Falcon: parallel attention and MLP from one LayerNorm, multi-query attention (one k/v head)."""
    def __init__(s, d=32, h=4):
        super().__init__(); s.h = h; s.hd = d // h
        s.ln = nn.LayerNorm(d); s.qkv = nn.Linear(d, d + 2 * s.hd, bias=False); s.o = nn.Linear(d, d, bias=False)
        s.up = nn.Linear(d, 4 * d, bias=False); s.down = nn.Linear(4 * d, d, bias=False)
    def forward(s, x):
        B, T, D = x.shape
        h = s.ln(x); qkv = s.qkv(h)
        q = qkv[..., :D].view(B, T, s.h, s.hd).transpose(1, 2)
        k = qkv[..., D:D + s.hd].view(B, T, 1, s.hd).transpose(1, 2).expand(B, s.h, T, s.hd)
        v = qkv[..., D + s.hd:].view(B, T, 1, s.hd).transpose(1, 2).expand(B, s.h, T, s.hd)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, D)
        return x + s.o(a) + s.down(F.gelu(s.up(h)))


class MPTAttn(nn.Module):
    """MPT: clipped fused QKV, LayerNorm on q and k, causal SDPA."""
    def __init__(s, d=32, h=4):
        super().__init__(); s.h = h
        s.Wqkv = nn.Linear(d, 3 * d); s.q_ln = nn.LayerNorm(d); s.k_ln = nn.LayerNorm(d); s.o = nn.Linear(d, d)
    def forward(s, x):
        B, T, D = x.shape
        q, k, v = s.Wqkv(x).clamp(min=-8.0, max=8.0).chunk(3, -1)
        q, k = s.q_ln(q), s.k_ln(k)
        sh = lambda t: t.reshape(B, T, s.h, D // s.h).transpose(1, 2)
        a = F.scaled_dot_product_attention(sh(q), sh(k), sh(v), is_causal=True)
        return s.o(a.transpose(1, 2).reshape(B, T, D))


def xpos_attention(q, k, scale_base=32.0):
    B, H, T, D = q.shape
    inv = 1.0 / (10000 ** (torch.arange(0, D // 2, device=q.device).float() / (D // 2)))
    pos = torch.arange(T, device=q.device).float()
    sinus = pos[:, None] * inv[None]
    sin, cos = sinus.sin(), sinus.cos()
    scale = (torch.arange(0, D, 2, device=q.device) + 0.4 * D) / (1.4 * D)
    sc = scale[None, :] ** ((pos - T // 2)[:, None] / scale_base)
    def rot(x, s_):
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack([x1 * cos * s_ - x2 * sin * s_, x2 * cos * s_ + x1 * sin * s_], -1).flatten(-2)
    return F.scaled_dot_product_attention(rot(q, sc), rot(k, 1 / sc), k)


class QwenMoE(nn.Module):
    """Qwen2-MoE: softmax router, top-k renormalized, experts computed densely, a shared expert gated by a sigmoid."""
    def __init__(s, d=16, e=4, k=2):
        super().__init__(); s.k = k; s.gate = nn.Linear(d, e, bias=False)
        s.w1 = nn.Parameter(torch.randn(e, d, 2 * d) * 0.1); s.w2 = nn.Parameter(torch.randn(e, 2 * d, d) * 0.1)
        s.shared = nn.Sequential(nn.Linear(d, 2 * d), nn.SiLU(), nn.Linear(2 * d, d)); s.shared_gate = nn.Linear(d, 1, bias=False)
    def forward(s, x):
        B, T, D = x.shape; x2 = x.reshape(-1, D)
        probs = s.gate(x2).softmax(-1, dtype=torch.float)
        w, sel = probs.topk(s.k, -1)
        w = (w / w.sum(-1, keepdim=True)).to(x.dtype)
        dense = torch.zeros_like(probs).scatter(1, sel, w)
        y = torch.einsum("nef,efd->ned", F.silu(torch.einsum("nd,edf->nef", x2, s.w1)), s.w2)
        out = (y * dense[..., None]).sum(1) + torch.sigmoid(s.shared_gate(x2)) * s.shared(x2)
        return out.view(B, T, D), probs.mean(0)


class CFConv(nn.Module):
    """SchNet's interaction: radial basis expansion of distances, cosine cutoff, filter network, scatter-sum."""
    def __init__(s, d=16, nrbf=10, cutoff=5.0):
        super().__init__(); s.cutoff = cutoff
        s.filt = nn.Sequential(nn.Linear(nrbf, d), nn.Softplus(), nn.Linear(d, d))
        s.lin1 = nn.Linear(d, d, bias=False); s.lin2 = nn.Linear(d, d)
        s.register_buffer("mu", torch.linspace(0, cutoff, nrbf))
    def forward(s, h, pos, src, dst):
        d = (pos[src] - pos[dst]).norm(dim=-1)
        rbf = torch.exp(-10.0 * (d[:, None] - s.mu) ** 2)
        C = 0.5 * (torch.cos(d * math.pi / s.cutoff) + 1.0) * (d < s.cutoff)
        m = s.lin1(h)[src] * (s.filt(rbf) * C[:, None])
        agg = torch.zeros_like(h).index_add_(0, dst, m)
        return h + s.lin2(F.softplus(agg) - math.log(2.0))


class EGNN(nn.Module):
    """E(n)-equivariant GNN layer: edge MLP on (h_i, h_j, |x_i - x_j|^2), mean coordinate update, node MLP."""
    def __init__(s, d=8):
        super().__init__()
        s.edge = nn.Sequential(nn.Linear(2 * d + 1, d), nn.SiLU(), nn.Linear(d, d), nn.SiLU())
        s.coord = nn.Sequential(nn.Linear(d, d), nn.SiLU(), nn.Linear(d, 1, bias=False))
        s.node = nn.Sequential(nn.Linear(2 * d, d), nn.SiLU(), nn.Linear(d, d))
    def forward(s, h, x, row, col):
        diff = x[row] - x[col]
        radial = (diff ** 2).sum(-1, keepdim=True)
        m = s.edge(torch.cat([h[row], h[col], radial], -1))
        cnt = torch.zeros(x.shape[0], 1, device=x.device).index_add_(0, row, torch.ones_like(radial))
        x = x + torch.zeros_like(x).index_add_(0, row, diff * s.coord(m)) / cnt.clamp(min=1)
        return h + s.node(torch.cat([h, torch.zeros_like(h).index_add_(0, row, m)], -1)), x


class Coupling(nn.Module):
    """RealNVP affine coupling with a checkerboard mask and tanh-bounded scales; returns the NLL."""
    def __init__(s, d=6):
        super().__init__(); s.register_buffer("mask", (torch.arange(d) % 2).float())
        s.net = nn.Sequential(nn.Linear(d, 16), nn.ReLU(), nn.Linear(16, 2 * d)); s.scale = nn.Parameter(torch.ones(d))
    def forward(s, x):
        xm = x * s.mask
        sc, t = s.net(xm).chunk(2, -1)
        sc = s.scale * torch.tanh(sc) * (1 - s.mask); t = t * (1 - s.mask)
        y = xm + (1 - s.mask) * (x * torch.exp(sc) + t)
        logp = -0.5 * (y ** 2).sum(-1) - 0.5 * y.shape[-1] * math.log(2 * math.pi)
        return -(logp + sc.sum(-1)).mean()


def rq_spline(x, w, h, d, B=3.0):
    """Neural spline flows' rational-quadratic spline on [-B, B] (identity outside), with its log-determinant."""
    K = w.shape[-1]
    widths = F.softmax(w, -1) * 2 * B; heights = F.softmax(h, -1) * 2 * B
    derivs = F.pad(F.softplus(d), (1, 1), value=1.0)
    cw = F.pad(torch.cumsum(widths, -1), (1, 0)) - B
    ch = F.pad(torch.cumsum(heights, -1), (1, 0)) - B
    inside = (x > -B) & (x < B)
    xc = x.clamp(-B + 1e-6, B - 1e-6)
    idx = torch.searchsorted(cw[..., 1:-1].contiguous(), xc[..., None].contiguous()).clamp(0, K - 1)
    g = lambda t: t.gather(-1, idx)[..., 0]
    xk, wk, yk, hk, dk = g(cw), g(widths), g(ch), g(heights), g(derivs)
    dk1 = derivs.gather(-1, idx + 1)[..., 0]
    sk = hk / wk; xi = (xc - xk) / wk
    den = sk + (dk1 + dk - 2 * sk) * xi * (1 - xi)
    y = yk + hk * (sk * xi ** 2 + dk * xi * (1 - xi)) / den
    logdet = torch.log(sk ** 2 * (dk1 * xi ** 2 + 2 * sk * xi * (1 - xi) + dk * (1 - xi) ** 2)) - 2 * torch.log(den)
    return torch.where(inside, y, x), torch.where(inside, logdet, torch.zeros_like(x))


class RQS(nn.Module):
    def __init__(s, K=5):
        super().__init__(); s.K = K; s.net = nn.Linear(4, 3 * K - 1)
    def forward(s, x, c):
        p = s.net(c)
        y, ld = rq_spline(x, p[:, :s.K], p[:, s.K:2 * s.K], p[:, 2 * s.K:])
        return y.pow(2).sum() - ld.sum()


def centernet_decode(hm, wh, off, K=6):
    hm = hm.sigmoid()
    hm = hm * (F.max_pool2d(hm, 3, 1, 1) == hm).float()
    B, C, H, W = hm.shape
    scores, inds = hm.view(B, -1).topk(K)
    cls = inds // (H * W); pix = inds % (H * W)
    ys = (pix // W).float(); xs = (pix % W).float()
    wh_ = wh.view(B, 2, -1).gather(2, pix[:, None, :].expand(B, 2, K))
    off_ = off.view(B, 2, -1).gather(2, pix[:, None, :].expand(B, 2, K))
    cx = xs + off_[:, 0]; cy = ys + off_[:, 1]
    boxes = torch.stack([cx - wh_[:, 0] / 2, cy - wh_[:, 1] / 2, cx + wh_[:, 0] / 2, cy + wh_[:, 1] / 2], -1)
    return boxes, scores, cls


def rgb2hsv(img):
    """torchvision.transforms.functional_tensor._rgb2hsv."""
    r, g, b = img.unbind(-3)
    maxc = torch.max(img, dim=-3).values; minc = torch.min(img, dim=-3).values
    eqc = maxc == minc
    cr = maxc - minc
    ones = torch.ones_like(maxc)
    s = cr / torch.where(eqc, ones, maxc)
    crd = torch.where(eqc, ones, cr)
    rc = (maxc - r) / crd; gc = (maxc - g) / crd; bc = (maxc - b) / crd
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = torch.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return torch.stack((h, s, maxc), dim=-3)


def hsv2rgb(img):
    """torchvision.transforms.functional_tensor._hsv2rgb."""
    h, s, v = img.unbind(dim=-3)
    i = torch.floor(h * 6.0); f = (h * 6.0) - i; i = i.to(dtype=torch.int32)
    p = torch.clamp(v * (1.0 - s), 0.0, 1.0); q = torch.clamp(v * (1.0 - s * f), 0.0, 1.0)
    t = torch.clamp(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    i = i % 6
    mask = i.unsqueeze(dim=-3) == torch.arange(6, device=i.device).view(-1, 1, 1)
    a1 = torch.stack((v, q, p, p, t, v), dim=-3); a2 = torch.stack((t, v, v, q, p, p), dim=-3); a3 = torch.stack((p, p, t, v, v, q), dim=-3)
    return torch.einsum("...ijk, ...xijk -> ...xjk", mask.to(dtype=img.dtype), torch.stack((a1, a2, a3), dim=-4))


def color_jitter(img, hue):
    h, s, v = rgb2hsv(img).unbind(-3)
    return hsv2rgb(torch.stack(((h + hue) % 1.0, (s * 1.2).clamp(0, 1), v), -3)).clamp(0, 1)


def dct_jpeg(img, q):
    n = 8
    k = torch.arange(n, dtype=img.dtype, device=img.device)
    D = torch.cos((2 * k[None, :] + 1) * k[:, None] * math.pi / (2 * n)) * math.sqrt(2 / n)
    D = torch.cat([D[:1] / math.sqrt(2), D[1:]], 0)
    B, H, W = img.shape
    blocks = img.view(B, H // 8, 8, W // 8, 8).permute(0, 1, 3, 2, 4)
    qc = torch.round((D @ blocks @ D.t()) / q) * q
    rec = D.t() @ qc @ D
    return rec.permute(0, 1, 3, 2, 4).reshape(B, H, W), (qc == 0).float().mean()


class Haar(nn.Module):
    """One level of the Haar wavelet transform by strided slices, a conv on the sub-bands, the inverse by strided assignment."""
    def __init__(s):
        super().__init__(); s.c = nn.Conv2d(12, 12, 3, padding=1)
    def forward(s, x):
        a, b, c, d = x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]
        y = s.c(torch.cat([(a + b + c + d) / 2, (-a - b + c + d) / 2, (-a + b - c + d) / 2, (a - b - c + d) / 2], 1))
        ll, lh, hl, hh = y.chunk(4, 1)
        B, C, h, w = ll.shape
        out = x.new_zeros(B, C, 2 * h, 2 * w)
        out[..., ::2, ::2] = (ll - lh - hl + hh) / 2
        out[..., 1::2, ::2] = (ll - lh + hl - hh) / 2
        out[..., ::2, 1::2] = (ll + lh - hl - hh) / 2
        out[..., 1::2, 1::2] = (ll + lh + hl + hh) / 2
        return out


def raft_corr(f1, f2, coords):
    """RAFT: all-pairs correlation, a two-level pyramid, a (2r+1)^2 window looked up by grid_sample."""
    B, D, H, W = f1.shape
    corr = (f1.view(B, D, H * W).transpose(1, 2) @ f2.view(B, D, H * W)) / math.sqrt(D)
    corr = corr.view(B * H * W, 1, H, W)
    dx = torch.linspace(-1, 1, 3, device=f1.device)
    delta = torch.stack(torch.meshgrid(dx, dx, indexing="ij"), -1).view(1, 3, 3, 2)
    c = coords.permute(0, 2, 3, 1).reshape(B * H * W, 1, 1, 2)
    out = []
    for i, cv in enumerate([corr, F.avg_pool2d(corr, 2, 2)]):
        pts = c / 2 ** i + delta
        h, w = cv.shape[-2:]
        g = torch.stack([2 * pts[..., 0] / (w - 1) - 1, 2 * pts[..., 1] / (h - 1) - 1], -1)
        out.append(F.grid_sample(cv, g, align_corners=True).view(B, H, W, -1))
    return torch.cat(out, -1).permute(0, 3, 1, 2)


class Stereo(nn.Module):
    """A correlation cost volume over disparities (shifted slices), 3-D aggregation, soft-argmin."""
    def __init__(s, maxd=4):
        super().__init__(); s.f = nn.Conv2d(3, 8, 3, padding=1); s.agg = nn.Conv3d(1, 1, 3, padding=1); s.maxd = maxd
    def forward(s, L, R):
        fl, fr = s.f(L), s.f(R)
        B, C, H, W = fl.shape
        cost = fl.new_zeros(B, s.maxd, H, W)
        for d in range(s.maxd):
            if d == 0:
                cost[:, 0] = (fl * fr).mean(1)
            else:
                cost[:, d, :, d:] = (fl[..., d:] * fr[..., :-d]).mean(1)
        prob = F.softmax(-s.agg(cost[:, None])[:, 0], 1)
        return (prob * torch.arange(s.maxd, device=L.device, dtype=L.dtype).view(1, -1, 1, 1)).sum(1)


class Joint(nn.Module):
    """RNN-T joint network: encoder (B,T,1,H) + predictor (B,1,U,H), tanh, vocabulary log-softmax."""
    def __init__(s, d=16, v=12):
        super().__init__(); s.enc = nn.Linear(d, d); s.pred = nn.Linear(d, d); s.out = nn.Linear(d, v)
    def forward(s, e, p):
        return s.out(torch.tanh(s.enc(e)[:, :, None, :] + s.pred(p)[:, None, :, :])).log_softmax(-1)


class QRNN(nn.Module):
    """QRNN: a causal conv gives z, f, o; fo-pooling runs the recurrence over time (unrolled)."""
    def __init__(s, d=8, h=8):
        super().__init__(); s.conv = nn.Conv1d(d, 3 * h, 2)
    def forward(s, x):
        z, f, o = s.conv(F.pad(x, (1, 0))).chunk(3, 1)
        z, f, o = z.tanh(), f.sigmoid(), o.sigmoid()
        c = torch.zeros_like(z[..., 0]); hs = []
        for t in range(z.shape[-1]):
            c = f[..., t] * c + (1 - f[..., t]) * z[..., t]
            hs.append(o[..., t] * c)
        return torch.stack(hs, -1)


def lamb_step(params, grads, ms, vs, step):
    b1, b2, lr, wd, eps = 0.9, 0.999, 1e-3, 0.01, 1e-6
    for p, g, m, v in zip(params, grads, ms, vs):
        m.mul_(b1).add_(g, alpha=1 - b1); v.mul_(b2).addcmul_(g, g, value=1 - b2)
        upd = (m / (1 - b1 ** step)) / ((v / (1 - b2 ** step)).sqrt() + eps) + wd * p
        wn, un = p.norm(), upd.norm()
        trust = torch.where((wn > 0) & (un > 0), wn / un, torch.ones_like(wn))
        p.sub_(lr * trust * upd)


def adafactor_step(p, g, vr, vc, step):
    beta2 = 1 - step ** -0.8
    g2 = g * g + 1e-30
    vr.mul_(beta2).add_(g2.mean(1), alpha=1 - beta2)
    vc.mul_(beta2).add_(g2.mean(0), alpha=1 - beta2)
    u = g * (torch.outer(vr, vc) / vr.mean()).rsqrt()
    u = u / (u.pow(2).mean().sqrt() / 1.0).clamp(min=1.0)
    alpha = torch.clamp(p.pow(2).mean().sqrt(), min=1e-3) * min(1e-2, 1 / math.sqrt(step))
    p.sub_(alpha * u)


class BarlowTwins(nn.Module):
    def __init__(s):
        super().__init__()
        s.proj = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 12)); s.bn = nn.BatchNorm1d(12, affine=False)
    def forward(s, a, b):
        c = s.bn(s.proj(a)).t() @ s.bn(s.proj(b)) / a.shape[0]
        n = c.shape[0]
        off = c.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()
        return (torch.diagonal(c) - 1).pow(2).sum() + 0.005 * off.pow(2).sum()


class VICReg(nn.Module):
    def __init__(s):
        super().__init__(); s.proj = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 10))
    def forward(s, a, b):
        x, y = s.proj(a), s.proj(b)
        inv = F.mse_loss(x, y)
        x = x - x.mean(0); y = y - y.mean(0)
        std = F.relu(1 - torch.sqrt(x.var(0) + 1e-4)).mean() / 2 + F.relu(1 - torch.sqrt(y.var(0) + 1e-4)).mean() / 2
        n, d = x.shape
        off = lambda c: c - torch.diag(torch.diagonal(c))
        cov = off(x.t() @ x / (n - 1)).pow(2).sum() / d + off(y.t() @ y / (n - 1)).pow(2).sum() / d
        return 25 * inv + 25 * std + cov


class LRU(nn.Module):
    """Linear Recurrent Unit: complex diagonal recurrence with exponential parametrization, unrolled over time."""
    def __init__(s, d=8, n=6):
        super().__init__()
        s.nu_log = nn.Parameter(torch.log(-0.5 * torch.log(torch.rand(n) * 0.5 + 0.4)))
        s.theta_log = nn.Parameter(torch.log(torch.rand(n) * 6.28))
        s.B_re = nn.Parameter(torch.randn(n, d) / math.sqrt(2 * d)); s.B_im = nn.Parameter(torch.randn(n, d) / math.sqrt(2 * d))
        s.C_re = nn.Parameter(torch.randn(d, n) / math.sqrt(n)); s.C_im = nn.Parameter(torch.randn(d, n) / math.sqrt(n))
    def forward(s, x):
        lam = torch.exp(torch.complex(-torch.exp(s.nu_log), torch.exp(s.theta_log)))
        gamma = torch.sqrt(1 - torch.abs(lam) ** 2)
        Bn = torch.complex(s.B_re, s.B_im) * gamma[:, None]
        C = torch.complex(s.C_re, s.C_im)
        h = torch.zeros(lam.shape[0], dtype=torch.complex64, device=x.device); ys = []
        for t in range(x.shape[0]):
            h = lam * h + Bn @ x[t].to(torch.complex64)
            ys.append((C @ h).real)
        return torch.stack(ys)


class S4D(nn.Module):
    """S4D: the SSM kernel from a Vandermonde product of complex exponentials, FFT convolution."""
    def __init__(s, h=4, n=8):
        super().__init__()
        s.log_dt = nn.Parameter(torch.rand(h) * (math.log(0.1) - math.log(0.001)) + math.log(0.001))
        s.C = nn.Parameter(torch.view_as_real(torch.randn(h, n // 2, dtype=torch.cfloat)))
        s.log_A_real = nn.Parameter(torch.log(0.5 * torch.ones(h, n // 2)))
        s.A_imag = nn.Parameter(math.pi * torch.arange(n // 2).float().repeat(h, 1))
        s.D = nn.Parameter(torch.randn(h))
    def forward(s, u):
        L = u.shape[-1]
        dt = torch.exp(s.log_dt)
        A = torch.complex(-torch.exp(s.log_A_real), s.A_imag)
        dtA = A * dt[:, None]
        C = torch.view_as_complex(s.C) * (torch.exp(dtA) - 1.) / A
        k = 2 * torch.einsum("hn,hnl->hl", C, torch.exp(dtA[..., None] * torch.arange(L, device=u.device))).real
        y = torch.fft.irfft(torch.fft.rfft(u, n=2 * L) * torch.fft.rfft(k, n=2 * L), n=2 * L)[..., :L]
        return F.gelu(y + u * s.D[:, None])


def length_regulator(h, dur, max_len=20):
    """FastSpeech: each phoneme's hidden state repeated for its duration, padded to max_len frames."""
    cum = dur.cumsum(1)
    frames = torch.arange(max_len, device=h.device)[None, :].expand(h.shape[0], -1).contiguous()
    idx = torch.searchsorted(cum, frames, right=True).clamp(max=h.shape[1] - 1)
    out = torch.gather(h, 1, idx[..., None].expand(-1, -1, h.shape[2]))
    mask = frames < cum[:, -1:]
    return out * mask[..., None], mask.sum(1)


def dfl_decode(pred, anchors, stride):
    """YOLOv8: distribution focal loss bins -> distances (softmax expectation) -> boxes (cx, cy, w, h)."""
    B, _, N = pred.shape
    p = pred.view(B, 4, 16, N).softmax(2)
    dist = (p * torch.arange(16, dtype=p.dtype, device=p.device).view(1, 1, 16, 1)).sum(2)
    lt, rb = dist.chunk(2, 1)
    x1y1, x2y2 = anchors - lt, anchors + rb
    return torch.cat([(x1y1 + x2y2) / 2, x2y2 - x1y1], 1) * stride


class HiFiGANRes(nn.Module):
    def __init__(s, c=8):
        super().__init__()
        from torch.nn.utils.parametrizations import weight_norm
        s.c1 = nn.ModuleList([weight_norm(nn.Conv1d(c, c, 3, dilation=d, padding=d)) for d in (1, 3, 5)])
        s.c2 = nn.ModuleList([weight_norm(nn.Conv1d(c, c, 3, padding=1)) for _ in range(3)])
    def forward(s, x):
        for a, b in zip(s.c1, s.c2):
            x = x + b(F.leaky_relu(a(F.leaky_relu(x, 0.1)), 0.1))
        return x


class TCN(nn.Module):
    def __init__(s, c=6):
        super().__init__(); s.convs = nn.ModuleList([nn.Conv1d(c, c, 3, dilation=d) for d in (1, 2, 4)])
    def forward(s, x):
        for cv in s.convs:
            x = F.relu(x + F.relu(cv(F.pad(x, (2 * cv.dilation[0], 0)))))
        return x[..., -1]


class MAB(nn.Module):
    def __init__(s, d=16, h=2):
        super().__init__()
        s.att = nn.MultiheadAttention(d, h, batch_first=True); s.ln1 = nn.LayerNorm(d); s.ln2 = nn.LayerNorm(d); s.ff = nn.Linear(d, d)
    def forward(s, q, k):
        h = s.ln1(q + s.att(q, k, k, need_weights=False)[0])
        return s.ln2(h + F.relu(s.ff(h)))


class ISAB(nn.Module):
    """Set Transformer: induced set attention block, then pooling by multihead attention."""
    def __init__(s, d=16, m=4):
        super().__init__()
        s.I = nn.Parameter(torch.randn(1, m, d)); s.S = nn.Parameter(torch.randn(1, 1, d)); s.m1, s.m2, s.m3 = MAB(d), MAB(d), MAB(d)
    def forward(s, x):
        y = s.m2(x, s.m1(s.I.expand(x.shape[0], -1, -1), x))
        return s.m3(s.S.expand(x.shape[0], -1, -1), y).squeeze(1)


class DIN(nn.Module):
    """Deep Interest Network: an attention MLP on [q, k, q-k, q*k] weights the behaviour history (no softmax)."""
    def __init__(s, n=50, d=8):
        super().__init__(); s.emb = nn.Embedding(n, d, padding_idx=0)
        s.att = nn.Sequential(nn.Linear(4 * d, 16), nn.PReLU(), nn.Linear(16, 1))
        s.mlp = nn.Sequential(nn.Linear(2 * d, 16), nn.PReLU(), nn.Linear(16, 1))
    def forward(s, hist, target, lengths):
        k = s.emb(hist); q = s.emb(target)[:, None, :].expand_as(k)
        w = s.att(torch.cat([q, k, q - k, q * k], -1)).squeeze(-1)
        w = w.masked_fill(~(torch.arange(hist.shape[1], device=hist.device)[None] < lengths[:, None]), 0.0)
        return torch.sigmoid(s.mlp(torch.cat([(w[..., None] * k).sum(1), q[:, 0]], -1))).squeeze(-1)


class NeuMF(nn.Module):
    def __init__(s, nu=20, ni=30, d=8):
        super().__init__()
        s.ug, s.ig, s.um, s.im = nn.Embedding(nu, d), nn.Embedding(ni, d), nn.Embedding(nu, d), nn.Embedding(ni, d)
        s.mlp = nn.Sequential(nn.Linear(2 * d, 16), nn.ReLU(), nn.Linear(16, 8), nn.ReLU()); s.out = nn.Linear(d + 8, 1)
    def forward(s, u, i, y):
        g = s.ug(u) * s.ig(i); m = s.mlp(torch.cat([s.um(u), s.im(i)], -1))
        return F.binary_cross_entropy_with_logits(s.out(torch.cat([g, m], -1)).squeeze(-1), y)


class MoCo(nn.Module):
    """MoCo v2: momentum key encoder, logits against a queue buffer, the queue and its pointer updated in place."""
    def __init__(s, d=8, K=16):
        super().__init__(); s.q = nn.Linear(6, d); s.k = nn.Linear(6, d)
        s.register_buffer("queue", F.normalize(torch.randn(d, K), dim=0)); s.register_buffer("ptr", torch.zeros(1, dtype=torch.long))
    def forward(s, xq, xk):
        q = F.normalize(s.q(xq), dim=1)
        with torch.no_grad():
            for pk, pq in zip(s.k.parameters(), s.q.parameters()):
                pk.mul_(0.999).add_(pq.detach(), alpha=0.001)
            k = F.normalize(s.k(xk), dim=1)
        logits = torch.cat([(q * k).sum(1, keepdim=True), q @ s.queue.clone().detach()], 1) / 0.07
        loss = F.cross_entropy(logits, torch.zeros(q.shape[0], dtype=torch.long, device=q.device))
        with torch.no_grad():
            idx = (s.ptr + torch.arange(k.shape[0], device=k.device)) % s.queue.shape[1]
            s.queue.index_copy_(1, idx, k.t())
            s.ptr.copy_((s.ptr + k.shape[0]) % s.queue.shape[1])
        return loss


class BiFPNNode(nn.Module):
    """EfficientDet's fast normalized fusion (relu weights / their sum), swish, separable conv, BN."""
    def __init__(s, c=8):
        super().__init__()
        s.w = nn.Parameter(torch.ones(3)); s.dw = nn.Conv2d(c, c, 3, padding=1, groups=c, bias=False); s.pw = nn.Conv2d(c, c, 1); s.bn = nn.BatchNorm2d(c)
    def forward(s, p_in, p_td, p_up):
        w = F.relu(s.w); w = w / (w.sum() + 1e-4)
        x = w[0] * p_in + w[1] * p_td + w[2] * F.interpolate(p_up, scale_factor=2, mode="nearest")
        return s.bn(s.pw(s.dw(x * torch.sigmoid(x))))


class SPDesc(nn.Module):
    """SuperPoint: dense descriptors, L2-normalized, sampled at keypoints by bilinear grid_sample."""
    def __init__(s):
        super().__init__(); s.c = nn.Conv2d(4, 16, 3, padding=1); s.d = nn.Conv2d(16, 8, 1)
    def forward(s, img, kpts):
        desc = F.normalize(s.d(F.relu(s.c(img))), p=2, dim=1)
        B, C, H, W = desc.shape
        k = (kpts - 8 / 2 + 0.5) / torch.tensor([W * 8 - 8 / 2 - 0.5, H * 8 - 8 / 2 - 0.5], device=kpts.device) * 2 - 1
        d = F.grid_sample(desc, k.view(B, 1, -1, 2), mode="bilinear", align_corners=True)
        return F.normalize(d.reshape(B, C, -1), p=2, dim=1)


def homography_warp(img, Hm):
    B, C, H, W = img.shape
    ys, xs = torch.meshgrid(torch.linspace(-1, 1, H, device=img.device), torch.linspace(-1, 1, W, device=img.device), indexing="ij")
    w = torch.stack([xs, ys, torch.ones_like(xs)], -1).view(1, -1, 3) @ Hm.transpose(1, 2)
    g = w[..., :2] / w[..., 2:].clamp(min=1e-6)
    return F.grid_sample(img, g.view(B, H, W, 2), align_corners=True, padding_mode="zeros")


def fps_group(xyz, feats, npoint=4, k=3):
    """PointNet++: farthest point sampling (argmax of running min distances), kNN grouping, max-pooled relative features."""
    B, N, _ = xyz.shape
    dist = torch.full((B, N), 1e10, device=xyz.device)
    far = torch.zeros(B, dtype=torch.long, device=xyz.device)
    idxs = []
    for _ in range(npoint):
        idxs.append(far)
        c = xyz[torch.arange(B, device=xyz.device), far][:, None, :]
        dist = torch.minimum(dist, ((xyz - c) ** 2).sum(-1))
        far = dist.argmax(-1)
    centers = torch.gather(xyz, 1, torch.stack(idxs, 1)[..., None].expand(-1, -1, 3))
    nn_idx = torch.cdist(centers, xyz).topk(k, largest=False).indices
    grouped = torch.gather(feats[:, None].expand(-1, npoint, -1, -1), 2, nn_idx[..., None].expand(-1, -1, -1, feats.shape[-1]))
    return centers, (grouped - grouped.mean(2, keepdim=True)).amax(2)


def entmax15(x):
    """entmax-1.5 by sorting (Peters et al. 2019, entmax's _entmax_threshold_and_support), last dim."""
    x = x / 2
    x = x - x.amax(-1, keepdim=True)
    xs, _ = torch.sort(x, dim=-1, descending=True)
    rho = torch.arange(1, x.shape[-1] + 1, device=x.device, dtype=x.dtype)
    mean = xs.cumsum(-1) / rho
    ss = rho * ((xs ** 2).cumsum(-1) / rho - mean ** 2)
    tau = mean - torch.sqrt(torch.clamp((1 - ss) / rho, 0))
    support = (tau <= xs).sum(-1, keepdim=True)
    return torch.clamp(x - tau.gather(-1, support - 1), min=0) ** 2


class Entmax(nn.Module):
    def __init__(s):
        super().__init__(); s.l = nn.Linear(8, 6)
    def forward(s, x):
        return entmax15(s.l(x))


class HashEnc(nn.Module):
    """Instant-NGP: per level, the 8 corners' int64 spatial hashes (xor of coordinate * prime) index a
    learned table; trilinear weights blend them; a linear head."""
    def __init__(s, L=3, T=64, Fd=2):
        super().__init__(); s.L = L; s.T = T
        s.tables = nn.Parameter(torch.rand(L, T, Fd) * 2e-4 - 1e-4)
        s.register_buffer("res", torch.tensor([4.0, 8.0, 16.0]))
        s.register_buffer("primes", torch.tensor([1, 2654435761, 805459861]))
        s.mlp = nn.Linear(L * Fd, 4)
    def forward(s, x):
        outs = []
        for l in range(s.L):
            p = x * s.res[l]; p0 = torch.floor(p); w = p - p0; p0 = p0.long()
            acc = 0
            for c in range(8):
                off = torch.tensor([c & 1, (c >> 1) & 1, (c >> 2) & 1], device=x.device)
                h = (p0 + off) * s.primes
                idx = (h[:, 0] ^ h[:, 1] ^ h[:, 2]) % s.T
                acc = acc + torch.where(off.bool(), w, 1 - w).prod(-1, keepdim=True) * s.tables[l][idx]
            outs.append(acc)
        return s.mlp(torch.cat(outs, -1))


if base in ("gemma_softcap_attn", "gemma_softcap_attn_bf16"):
    ids = torch.randint(0, 50, (2, 7), device=dev)
    run(GemmaBlock(), ids, dtype=torch.bfloat16 if base.endswith("bf16") else None)
elif base == "phi_partial_rotary_train":
    run(PhiBlock(), X(2, 6, 32), train=True)
elif base == "falcon_parallel_mqa_train":
    run(FalconBlock(), X(2, 8, 32), train=True)
elif base == "mpt_qk_layernorm_clip_train":
    run(MPTAttn(), X(2, 8, 32) * 4, train=True)
elif base == "rope_xpos_scale":
    run(xpos_attention, X(2, 2, 8, 16), X(2, 2, 8, 16))
elif base == "qwen2_moe_shared_expert_train":
    run(QwenMoE(), X(2, 5, 16), train=True)
elif base == "segment_reduce_lengths":
    def f(data, lengths):
        return (torch.segment_reduce(data, "sum", lengths=lengths), torch.segment_reduce(data, "max", lengths=lengths),
                torch.segment_reduce(data, "mean", lengths=lengths, initial=0.0) * 2)
    run(f, X(10, 3), torch.tensor([3, 0, 5, 2]))
elif base == "schnet_cfconv_train":
    run(CFConv(), X(8, 16), X(8, 3) * 2, torch.randint(0, 8, (20,), device=dev), torch.randint(0, 8, (20,), device=dev), train=True)
elif base == "egnn_layer_train":
    run(EGNN(), X(7, 8), X(7, 3), torch.randint(0, 7, (18,), device=dev), torch.randint(0, 7, (18,), device=dev), train=True)
elif base == "realnvp_coupling_train":
    run(Coupling(), X(9, 6), train=True)
elif base == "rq_spline_flow_train":
    run(RQS(), X(12) * 2, X(12, 4), train=True)
elif base == "centernet_decode":
    run(centernet_decode, X(2, 3, 8, 8), X(2, 2, 8, 8).abs(), X(2, 2, 8, 8).sigmoid())
elif base == "rgb_to_hsv_jitter":
    run(color_jitter, torch.rand(2, 3, 6, 6, device=dev), 0.1)
elif base == "dct8x8_jpeg_quant":
    run(dct_jpeg, X(2, 16, 24) * 50, torch.rand(8, 8, device=dev) * 10 + 1)
elif base == "haar_dwt_idwt_train":
    run(Haar(), X(2, 3, 8, 10), train=True)
elif base == "raft_corr_pyramid":
    base_xy = torch.stack(torch.meshgrid(torch.arange(6.0, device=dev), torch.arange(6.0, device=dev), indexing="xy"), 0)[None]
    run(raft_corr, X(1, 8, 6, 6), X(1, 8, 6, 6), base_xy + 0.3 * X(1, 2, 6, 6))
elif base == "stereo_cost_volume_train":
    run(Stereo(), X(1, 3, 6, 10), X(1, 3, 6, 10), train=True)
elif base == "rnnt_joint_train":
    run(Joint(), X(2, 7, 16), X(2, 4, 16), train=True)
elif base == "rnnt_joint_fp16_train":
    run(Joint(), X(2, 7, 16, dt=torch.float16), X(2, 4, 16, dt=torch.float16), train=True, dtype=torch.float16)
elif base == "qrnn_fo_pool_train":
    run(QRNN(), X(2, 8, 6), train=True)
elif base == "lamb_step":
    ps = [X(4, 5), X(5)]
    run(lamb_step, ps, [X(4, 5), X(5)], [torch.zeros_like(p) for p in ps], [torch.zeros_like(p) for p in ps], 3)
elif base == "adafactor_step":
    run(adafactor_step, X(6, 5), X(6, 5), torch.zeros(6, device=dev), torch.zeros(5, device=dev), 4)
elif base == "barlow_twins_loss_train":
    run(BarlowTwins(), X(10, 8), X(10, 8), train=True)
elif base == "vicreg_loss_train":
    run(VICReg(), X(12, 8), X(12, 8), train=True)
elif base == "lru_complex_scan_train":
    run(LRU(), X(5, 8), train=True)
elif base == "s4d_vandermonde_kernel_train":
    run(S4D(), X(2, 4, 16), train=True)
elif base == "fastspeech_length_regulator":
    run(length_regulator, X(2, 5, 4), torch.randint(1, 4, (2, 5), device=dev))
elif base == "yolov8_dfl_decode":
    run(dfl_decode, X(2, 64, 30), torch.rand(1, 2, 30, device=dev) * 8, torch.full((1, 1, 30), 8.0, device=dev))
elif base == "hifigan_resblock_train":
    run(HiFiGANRes(), X(2, 8, 20), train=True)
elif base == "tcn_causal_conv_train":
    run(TCN(), X(3, 6, 16), train=True)
elif base == "set_transformer_isab_train":
    run(ISAB(), X(3, 10, 16), train=True)
elif base == "din_attention_ctr_train":
    run(DIN(), torch.randint(1, 50, (4, 7), device=dev), torch.randint(1, 50, (4,), device=dev),
        torch.tensor([7, 3, 5, 1], device=dev), train=True)
elif base == "ncf_neumf_train":
    run(NeuMF(), torch.randint(0, 20, (9,), device=dev), torch.randint(0, 30, (9,), device=dev),
        (torch.rand(9, device=dev) > 0.5).float(), train=True)
elif base == "moco_queue_enqueue_train":
    run(MoCo(), X(4, 6), X(4, 6), train=True)
elif base == "bifpn_fusion_train":
    run(BiFPNNode(), X(2, 8, 8, 8), X(2, 8, 8, 8), X(2, 8, 4, 4), train=True)
elif base == "superpoint_desc_sample":
    run(SPDesc(), X(1, 4, 6, 8), torch.rand(1, 5, 2, device=dev) * 40)
elif base == "perspective_warp_homography":
    run(homography_warp, X(2, 3, 7, 9), torch.eye(3, device=dev).repeat(2, 1, 1) + 0.05 * X(2, 3, 3))
elif base == "pointnet2_fps_group":
    run(fps_group, X(2, 12, 3), X(2, 12, 5))
elif base == "entmax15_train":
    run(Entmax(), X(5, 8) * 2, train=True)
elif base == "instant_ngp_hash_encode_train":
    run(HashEnc(), torch.rand(16, 3, device=dev), train=True)
else:
    raise SystemExit(f"unknown model {name}")
