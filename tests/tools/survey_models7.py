# survey_models7.py — the seventh batch of real graphs the project has never seen: Mamba-2's chunked
# SSD scan (segsum), a Hyena FFT long convolution, an MLP-Mixer block, deformable attention
# (grid_sample, training on the GPU), capsule routing, sparsemax, linear attention, InfoNCE,
# probabilistic losses, bicubic / linear / trilinear upsampling backwards, adaptive max pooling and
# replication padding backwards, EmbeddingBag training, ragged repeat_interleave(output_size=),
# MAE random masking + BERT-style randint replacement, int4 weight unpacking (bit shifts),
# nn.RMSNorm (cpu train, cuda bf16), nn.MultiheadAttention with a key padding mask, area /
# nearest-exact / antialiased interpolation, StyleGAN2's modulated conv, DGCNN's kNN edge conv, a
# GAT layer (scatter softmax), DDPM timestep embedding + noising, median / kthvalue / quantile /
# mode, GLU variants and more activations, a mel spectrogram (stft), HF position ids from the
# attention mask, reflect / circular / replicate conv padding, bf16 autocast on the CPU, Gaussian
# process regression (cholesky), Glow's invertible 1x1 conv (slogdet), Sinkhorn iterations, a 2-d
# LayerNorm with dynamic shapes, fractional max pooling, token merging (ToMe), cpu and cuda.
# Run on the GPU machine:  OUT=/path JOBS=8 python3 tests/tools/survey_models7.py
# then here:               tests/tools/survey_logs.sh /path/logs
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from survey_driver import child
MODELS = ["cuda_mamba2_ssd_chunk_train", "cuda_hyena_fft_conv_train", "cpu_mlp_mixer_train", "cuda_deformable_attn_train",
          "cpu_capsule_routing", "cuda_sparsemax", "cpu_linear_attention_train", "cpu_infonce_train",
          "cuda_prob_losses_train", "cuda_upsample_bicubic_linear_train", "cpu_adaptive_maxpool_replpad_train", "cpu_embedding_bag_train",
          "cuda_ragged_repeat_interleave", "cuda_random_masking_randint_train", "cuda_int4_dequant_matmul", "cpu_rmsnorm_module_train",
          "cuda_rmsnorm_module_bf16", "cpu_mha_key_padding_mask", "cpu_interp_area_nearest_aa", "cuda_modulated_conv_train",
          "cuda_dgcnn_knn_edgeconv_train", "cpu_gat_scatter_softmax_train", "cuda_diffusion_timestep_ddpm", "cpu_median_kthvalue_mode",
          "cpu_glu_activations_train", "cuda_mel_spectrogram", "cpu_hf_position_ids", "cpu_conv_padding_modes_train",
          "cpu_autocast_bf16_train", "cpu_gp_cholesky_solve", "cpu_glow_invconv_slogdet_train", "cuda_sinkhorn",
          "cuda_layernorm_2d_dynamic_train", "cuda_fractional_maxpool_train", "cuda_token_merging"]
name, dev, run, X = child(__file__, MODELS, "/tmp/survey7")

import math
import torch, torch.nn as nn, torch.nn.functional as F

if name == "cuda_mamba2_ssd_chunk_train":
    def segsum(x):
        T = x.size(-1)
        xc = x[..., None].expand(*x.shape, T)
        xc = xc.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device), -1), 0)
        xs = torch.cumsum(xc, dim=-2)
        return xs.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device), 0), -torch.inf)
    class M(nn.Module):
        def __init__(s): super().__init__(); s.A = nn.Parameter(-torch.rand(4))
        def forward(s, x, B, C):
            b, l, h, p = x.shape; c = 4; L = l // c
            X_ = x.view(b, c, L, h, p)
            A = (s.A * torch.ones(b, l, h, device=x.device)).view(b, c, L, h).permute(0, 3, 1, 2)
            Bc = B.view(b, c, L, h, -1); Cc = C.view(b, c, L, h, -1)
            A_cumsum = torch.cumsum(A, dim=-1)
            Lm = torch.exp(segsum(A))
            Y = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", Cc, Bc, Lm, X_)
            decay = torch.exp(A_cumsum[:, :, :, -1:] - A_cumsum)
            states = torch.einsum("bclhn,bhcl,bclhp->bchpn", Bc, decay, X_)
            return Y.reshape(b, l, h, p), states
    run(M(), X(2, 16, 4, 8), X(2, 16, 4, 6), X(2, 16, 4, 6), train=True)
elif name == "cuda_hyena_fft_conv_train":
    class H(nn.Module):
        def __init__(s): super().__init__(); s.k = nn.Parameter(torch.randn(8, 16) * 0.1); s.l = nn.Linear(8, 8)
        def forward(s, x):
            u = s.l(x).transpose(1, 2)
            n = 2 * u.shape[-1]
            y = torch.fft.irfft(torch.fft.rfft(u, n=n) * torch.fft.rfft(s.k, n=n), n=n)[..., :u.shape[-1]]
            return (y + u).transpose(1, 2) * torch.sigmoid(x)
    run(H(), X(2, 16, 8), train=True)
elif name == "cpu_mlp_mixer_train":
    class Mx(nn.Module):
        def __init__(s):
            super().__init__(); s.n1 = nn.LayerNorm(16); s.n2 = nn.LayerNorm(16)
            s.t = nn.Sequential(nn.Linear(9, 18), nn.GELU(), nn.Linear(18, 9)); s.c = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))
        def forward(s, x):
            x = x + s.t(s.n1(x).transpose(1, 2)).transpose(1, 2)
            return x + s.c(s.n2(x))
    run(Mx(), X(2, 9, 16), train=True)
elif name == "cuda_deformable_attn_train":
    class D(nn.Module):
        def __init__(s): super().__init__(); s.off = nn.Linear(8, 8); s.w = nn.Linear(8, 4); s.v = nn.Conv2d(8, 8, 1)
        def forward(s, q, ref, feat):
            b, nq, _ = q.shape
            loc = ref[:, :, None, :] + s.off(q).view(b, nq, 4, 2).tanh() * 0.1
            samp = F.grid_sample(s.v(feat), loc, mode="bilinear", padding_mode="zeros", align_corners=False)
            a = s.w(q).softmax(-1)
            return (samp * a[:, None]).sum(-1).transpose(1, 2)
    run(D(), X(2, 5, 8), torch.rand(2, 5, 2, device=dev) * 2 - 1, X(2, 8, 6, 6), train=True)
elif name == "cpu_capsule_routing":
    def squash(s):
        n2 = (s ** 2).sum(-1, keepdim=True)
        return n2 / (1 + n2) * s / torch.sqrt(n2 + 1e-8)
    def routing(u_hat):
        b_ij = torch.zeros(u_hat.shape[:3], device=u_hat.device)
        for _ in range(3):
            c = b_ij.softmax(2)
            v = squash((c[..., None] * u_hat).sum(1))
            b_ij = b_ij + (u_hat * v[:, None]).sum(-1)
        return v
    with torch.no_grad():
        run(routing, X(2, 12, 4, 8))
elif name == "cuda_sparsemax":
    def sparsemax(z):
        zs, _ = torch.sort(z, dim=-1, descending=True)
        k = torch.arange(1, z.shape[-1] + 1, device=z.device, dtype=z.dtype)
        cs = zs.cumsum(-1)
        kz = (1 + k * zs > cs).sum(-1, keepdim=True)
        tau = (cs.gather(-1, kz - 1) - 1) / kz.to(z.dtype)
        return torch.clamp(z - tau, min=0)
    with torch.no_grad():
        run(sparsemax, X(4, 10))
elif name == "cpu_linear_attention_train":
    class LA(nn.Module):
        def __init__(s): super().__init__(); s.qkv = nn.Linear(16, 48)
        def forward(s, x):
            q, k, v = s.qkv(x).chunk(3, -1)
            q, k = F.elu(q) + 1, F.elu(k) + 1
            kv = torch.einsum("bld,ble->blde", k, v).cumsum(1)
            z = 1 / (torch.einsum("bld,bld->bl", q, k.cumsum(1)) + 1e-6)
            return torch.einsum("bld,blde,bl->ble", q, kv, z)
    run(LA(), X(2, 8, 16), train=True)
elif name == "cpu_infonce_train":
    class N(nn.Module):
        def __init__(s): super().__init__(); s.p = nn.Linear(16, 8); s.t = nn.Parameter(torch.tensor(0.07).log())
        def forward(s, a, b):
            za, zb = F.normalize(s.p(a), dim=-1), F.normalize(s.p(b), dim=-1)
            logits = za @ zb.t() / s.t.exp()
            lab = torch.arange(a.shape[0])
            return F.cross_entropy(logits, lab) + (torch.logsumexp(logits, 0) - logits.diag()).mean()
    run(N(), X(6, 16), X(6, 16), train=True)
elif name == "cuda_prob_losses_train":
    class P(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 8)
        def forward(s, x, t, var, y01):
            h = s.l(x)
            return (F.poisson_nll_loss(h, t.abs(), log_input=True) + F.gaussian_nll_loss(h, t, var.abs() + 0.1)
                    + F.binary_cross_entropy_with_logits(h, y01, pos_weight=torch.full((8,), 2.0, device=x.device))
                    + F.kl_div(h.log_softmax(-1), t.softmax(-1), reduction="batchmean") + F.l1_loss(h, t, reduction="sum") * 0.01
                    + F.nll_loss(h.log_softmax(-1), y01.argmax(-1), weight=torch.linspace(0.5, 1.5, 8, device=x.device)))
    run(P(), X(5, 8), X(5, 8), X(5, 8), (torch.rand(5, 8, device=dev) > 0.5).float(), train=True)
elif name == "cuda_upsample_bicubic_linear_train":
    class U(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(3, 4, 3, padding=1)
        def forward(s, x):
            h = s.c(x)
            return (F.interpolate(h, scale_factor=2, mode="bicubic", align_corners=False).tanh().mean((2, 3))
                    + F.interpolate(h[:, :, 0], scale_factor=1.5, mode="linear").sum(-1)
                    + F.interpolate(h[:, :, None], size=(2, 10, 10), mode="trilinear").mean((2, 3, 4)))
    run(U(), X(2, 3, 6, 6), train=True)
elif name == "cpu_adaptive_maxpool_replpad_train":
    class A(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(2, 4, 3); s.p = nn.ReplicationPad2d((1, 2, 1, 0))
        def forward(s, x):
            h = s.c(s.p(x))
            return (F.adaptive_max_pool2d(h, (3, 2)).flatten(1).sum(1) + F.pad(h[:, :, 0], (2, 2), mode="replicate").mean((1, 2))
                    + F.adaptive_max_pool1d(h.flatten(2), 5).mean((1, 2)))
    run(A(), X(2, 2, 7, 7), train=True)
elif name == "cpu_embedding_bag_train":
    class E(nn.Module):
        def __init__(s):
            super().__init__(); s.e = nn.EmbeddingBag(30, 8, mode="mean"); s.m = nn.EmbeddingBag(30, 8, mode="sum"); s.l = nn.Linear(8, 2)
        def forward(s, i, off, w): return s.l(s.e(i, off) + s.m(i, off, per_sample_weights=w))
    run(E(), torch.randint(0, 30, (12,)), torch.tensor([0, 3, 7]), torch.rand(12), train=True)
elif name == "cuda_ragged_repeat_interleave":
    def f(x, lens):
        idx = torch.repeat_interleave(torch.arange(lens.shape[0], device=x.device), lens, output_size=x.shape[0])
        seg = torch.zeros(lens.shape[0], x.shape[1], device=x.device).index_add_(0, idx, x)
        mean = seg / lens[:, None].float()
        return mean, x - mean[idx], x.repeat_interleave(2, dim=0).sum(0)
    with torch.no_grad():
        run(f, X(10, 6), torch.tensor([3, 1, 4, 2], device=dev))
elif name == "cuda_random_masking_randint_train":
    class R(nn.Module):
        def __init__(s): super().__init__(); s.e = nn.Embedding(50, 8); s.l = nn.Linear(8, 8)
        def forward(s, tok, x):
            b, n, d = x.shape
            keep = torch.rand(b, n, device=x.device).argsort(1)[:, : n // 2]
            xk = torch.gather(x, 1, keep[..., None].expand(-1, -1, d))
            m = torch.rand(tok.shape, device=tok.device) < 0.15
            tok2 = torch.where(m, torch.randint(0, 50, tok.shape, device=tok.device), tok)
            return s.l(xk).sum() + s.e(tok2).sum()
    run(R(), torch.randint(0, 50, (2, 10), device=dev), X(2, 10, 8), train=True)
elif name == "cuda_int4_dequant_matmul":
    def f(x, packed, scale, zero):
        lo = (packed & 0xF).to(torch.float16); hi = (packed >> 4).to(torch.float16)
        w = (torch.stack([lo, hi], -1).flatten(-2) - zero) * scale
        return x @ w.t(), (packed.to(torch.int32) << 2).sum(), torch.bitwise_right_shift(packed.to(torch.int64) * 7, 3)
    with torch.no_grad():
        run(f, X(4, 32, dt=torch.float16), torch.randint(0, 256, (8, 16), dtype=torch.uint8, device=dev),
            torch.rand(8, 1, device=dev, dtype=torch.float16) * 0.1, torch.full((8, 1), 8.0, device=dev, dtype=torch.float16))
elif name == "cpu_rmsnorm_module_train":
    class Rm(nn.Module):
        def __init__(s): super().__init__(); s.n = nn.RMSNorm(16, eps=1e-6); s.l = nn.Linear(16, 16); s.n2 = nn.RMSNorm([4, 16])
        def forward(s, x): return s.n2(F.silu(s.l(s.n(x))))
    run(Rm(), X(3, 4, 16), train=True)
elif name == "cuda_rmsnorm_module_bf16":
    class Rm(nn.Module):
        def __init__(s): super().__init__(); s.n = nn.RMSNorm(32); s.l = nn.Linear(32, 64, bias=False)
        def forward(s, x): a, g = s.l(s.n(x)).chunk(2, -1); return a * F.silu(g)
    with torch.no_grad():
        run(Rm(), X(2, 5, 32, dt=torch.bfloat16), dtype=torch.bfloat16)
elif name == "cpu_mha_key_padding_mask":
    class K(nn.Module):
        def __init__(s): super().__init__(); s.m = nn.MultiheadAttention(16, 4, batch_first=True)
        def forward(s, x, kpm): return s.m(x, x, x, key_padding_mask=kpm, need_weights=True)
    with torch.no_grad():
        run(K().eval(), X(2, 6, 16), torch.tensor([[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0]], dtype=torch.bool))
elif name == "cpu_interp_area_nearest_aa":
    def f(x):
        return (F.interpolate(x, size=(5, 3), mode="area").sum() + F.interpolate(x, scale_factor=1.7, mode="nearest-exact").mean()
                + F.interpolate(x, size=(4, 9), mode="bilinear", antialias=True).sum())
    with torch.no_grad():
        run(f, X(2, 3, 8, 7))
elif name == "cuda_modulated_conv_train":
    class Mod(nn.Module):
        def __init__(s): super().__init__(); s.w = nn.Parameter(torch.randn(8, 4, 3, 3)); s.a = nn.Linear(6, 4)
        def forward(s, x, style):
            b, c, h, w = x.shape
            wt = s.w[None] * (s.a(style)[:, None, :, None, None] + 1)
            wt = wt * torch.rsqrt(wt.pow(2).sum([2, 3, 4]) + 1e-8)[:, :, None, None, None]
            out = F.conv2d(x.reshape(1, b * c, h, w), wt.reshape(b * 8, c, 3, 3), padding=1, groups=b)
            return F.leaky_relu(out.view(b, 8, h, w), 0.2) * math.sqrt(2)
    run(Mod(), X(2, 4, 8, 8), X(2, 6), train=True)
elif name == "cuda_dgcnn_knn_edgeconv_train":
    class Dg(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(6, 8)
        def forward(s, x):
            idx = torch.cdist(x, x).topk(4, dim=-1, largest=False).indices
            b, n, k = idx.shape
            nb = torch.gather(x[:, None].expand(b, n, n, 3), 2, idx[..., None].expand(b, n, k, 3))
            e = torch.cat([x[:, :, None].expand(-1, -1, k, -1), nb - x[:, :, None]], -1)
            return F.leaky_relu(s.l(e), 0.2).amax(2)
    run(Dg(), X(2, 10, 3), train=True)
elif name == "cpu_gat_scatter_softmax_train":
    class Gat(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 8, bias=False); s.a = nn.Parameter(torch.randn(16) * 0.1)
        def forward(s, x, src, dst):
            h = s.l(x)
            e = F.leaky_relu(torch.cat([h[src], h[dst]], -1) @ s.a, 0.2)
            emax = torch.full((x.shape[0],), -1e9).scatter_reduce(0, dst, e, reduce="amax", include_self=True)
            ex = (e - emax[dst]).exp()
            alpha = ex / torch.zeros(x.shape[0]).index_add(0, dst, ex)[dst]
            return torch.zeros_like(h).index_add(0, dst, alpha[:, None] * h[src]).relu()
    run(Gat(), X(7, 8), torch.randint(0, 7, (20,)), torch.randint(0, 7, (20,)), train=True)
elif name == "cuda_diffusion_timestep_ddpm":
    class T(nn.Module):
        def __init__(s):
            super().__init__(); s.register_buffer("ab", torch.cumprod(1 - torch.linspace(1e-4, 0.02, 100), 0)); s.l = nn.Linear(16, 16)
        def forward(s, x0, t, noise):
            fr = torch.exp(-math.log(10000) * torch.arange(8, device=x0.device) / 8)
            emb = t[:, None].float() * fr[None]
            emb = torch.cat([emb.sin(), emb.cos()], -1)
            a = s.ab[t].view(-1, 1, 1, 1)
            return a.sqrt() * x0 + (1 - a).sqrt() * noise + s.l(F.silu(emb))[:, :4, None, None]
    with torch.no_grad():
        run(T(), X(3, 4, 5, 5), torch.randint(0, 100, (3,), device=dev), X(3, 4, 5, 5))
elif name == "cpu_median_kthvalue_mode":
    def f(x):
        return (x.median(1).values + x.kthvalue(3, 1).values + torch.quantile(x, 0.3, dim=1) + x.nanmedian(1).values
                + x.round().mode(1).values + x.msort()[:, 0] + x.median())
    with torch.no_grad():
        run(f, X(5, 9))
elif name == "cpu_glu_activations_train":
    class A(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 16)
        def forward(s, x):
            a, g = s.l(x).chunk(2, -1)
            return (a * F.gelu(g) + a * F.relu(g) + F.softplus(a, beta=2, threshold=5) + F.hardsigmoid(g) + F.hardshrink(a, 0.2)
                    + F.elu(g, alpha=0.5) + F.softmin(a, 0) + F.softsign(g) + F.log_softmax(a, 0) + F.glu(torch.cat([a, g], -1), -1))
    run(A(), X(5, 8), train=True)
elif name == "cuda_mel_spectrogram":
    class Mel(nn.Module):
        def __init__(s): super().__init__(); s.register_buffer("win", torch.hann_window(32)); s.register_buffer("fb", torch.rand(17, 8))
        def forward(s, wav):
            p = torch.stft(wav, 32, hop_length=8, window=s.win, return_complex=True).abs().pow(2)
            return torch.log(torch.clamp(p.transpose(1, 2) @ s.fb, min=1e-10))
    with torch.no_grad():
        run(Mel(), X(2, 256))
elif name == "cpu_hf_position_ids":
    class Pi(nn.Module):
        def __init__(s): super().__init__(); s.p = nn.Embedding(40, 8, padding_idx=1); s.t = nn.Embedding(30, 8)
        def forward(s, ids, mask):
            pos = mask.long().cumsum(-1) * mask + 1
            ext = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
            return s.t(ids) + s.p(pos), ext
    with torch.no_grad():
        run(Pi(), torch.randint(0, 30, (2, 9)), torch.tensor([[1] * 9, [1] * 6 + [0] * 3]))
elif name == "cpu_conv_padding_modes_train":
    class Cr(nn.Module):
        def __init__(s):
            super().__init__(); s.a = nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect"); s.b = nn.Conv2d(4, 4, 3, padding=1, padding_mode="circular")
            s.c = nn.Conv1d(4, 4, 3, padding=2, padding_mode="replicate")
        def forward(s, x):
            h = F.relu(s.b(s.a(x)))
            return s.c(h.mean(2)).sum() + h.sum()
    run(Cr(), X(2, 3, 6, 6), train=True)
elif name == "cpu_autocast_bf16_train":
    class Ab(nn.Module):
        def __init__(s): super().__init__(); s.l1 = nn.Linear(16, 32); s.l2 = nn.Linear(32, 8); s.n = nn.LayerNorm(32)
        def forward(s, x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return s.l2(F.gelu(s.n(s.l1(x)))).float().softmax(-1)
    run(Ab(), X(4, 16), train=True)
elif name == "cpu_gp_cholesky_solve":
    def f(x, y):
        K = torch.exp(-0.5 * torch.cdist(x, x) ** 2) + 0.1 * torch.eye(x.shape[0])
        L = torch.linalg.cholesky(K)
        return torch.cholesky_solve(y[:, None], L).squeeze(1), 2 * torch.log(torch.diagonal(L)).sum()
    with torch.no_grad():
        run(f, X(8, 3), X(8))
elif name == "cpu_glow_invconv_slogdet_train":
    class G(nn.Module):
        def __init__(s): super().__init__(); s.w = nn.Parameter(torch.linalg.qr(torch.randn(4, 4))[0])
        def forward(s, x): return F.conv2d(x, s.w[:, :, None, None]), torch.slogdet(s.w)[1] * x.shape[2] * x.shape[3]
    run(G(), X(2, 4, 5, 5), train=True)
elif name == "cuda_sinkhorn":
    def sinkhorn(C):
        logK = -C / 0.1
        u = torch.zeros(C.shape[0], device=C.device); v = torch.zeros(C.shape[1], device=C.device)
        for _ in range(5):
            u = -torch.logsumexp(logK + v[None], 1)
            v = -torch.logsumexp(logK + u[:, None], 0)
        return torch.exp(logK + u[:, None] + v[None])
    with torch.no_grad():
        run(sinkhorn, X(12, 10).abs())
elif name == "cuda_layernorm_2d_dynamic_train":
    class Ln(nn.Module):
        def __init__(s): super().__init__(); s.n = nn.LayerNorm([4, 8]); s.l = nn.Linear(8, 8)
        def forward(s, x): return s.n(s.l(x)).relu().sum(1)
    run(Ln(), X(3, 4, 8), train=True, dynamic=True)
elif name == "cuda_fractional_maxpool_train":
    class Fm(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(2, 4, 3, padding=1); s.p = nn.FractionalMaxPool2d(2, output_size=(5, 5))
        def forward(s, x): return s.p(s.c(x)).sum((2, 3))
    run(Fm(), X(2, 2, 9, 9), train=True)
elif name == "cuda_token_merging":
    def tome(x, r=3):
        a, b = x[:, ::2], x[:, 1::2]
        scores = F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).transpose(-1, -2)
        node_max, node_idx = scores.max(-1)
        edge_idx = node_max.argsort(-1, descending=True)[..., None]
        unm_idx, src_idx = edge_idx[:, r:], edge_idx[:, :r]
        dst_idx = node_idx[..., None].gather(1, src_idx)
        c = x.shape[-1]
        unm = a.gather(1, unm_idx.expand(-1, -1, c)); src = a.gather(1, src_idx.expand(-1, -1, c))
        b = b.scatter_reduce(1, dst_idx.expand(-1, -1, c), src, reduce="mean")
        return torch.cat([unm, b], 1)
    with torch.no_grad():
        run(tome, X(2, 10, 8))
