# survey_models9.py — the ninth batch of real graphs the project has never seen: a ResNet
# bottleneck with a strided downsample, a DenseNet block, a MobileNetV3 block (hardswish, SE with
# hardsigmoid), Inception branches (avg pool without padding counted), torch.quantile and lerp,
# stft / istft, scatter_reduce mean / prod, index_copy / index_fill / masked_scatter, Tensor.unfold
# windows, take / put, data-dependent sizes (masked_select with captured output shapes, .item()
# with captured scalars), torch.cond, activation checkpointing, flex_attention, compiled RMSprop /
# Adagrad steps, a tied LM head, bf16 group norm on the CPU, integer shifts and bitwise ops, a
# uint8 image pipeline, nearest-exact interpolation, adaptive pooling to sizes that do not
# divide, embedding with scale_grad_by_freq, discounted returns and a PPO loss, softplus with
# beta / logsigmoid, atan2 / hypot / polar, more special functions, ranks by argsort, soft-target
# cross entropy, type promotion of mixed dtypes, a 2-d sin-cos position embedding, dynamic length
# masks in training, dynamic reshapes, bf16 autocast on the GPU, 1-d pools, norm variants
# (no affine, no running stats), and Inductor's freezing for CPU inference; cpu and cuda.
# Run on the GPU machine:  OUT=/path JOBS=10 python3 tests/tools/survey_models9.py
# then here:               tests/tools/survey_logs.sh /path/logs
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from survey_driver import child
MODELS = ["cuda_resnet_bottleneck_train", "cpu_densenet_block_train", "cuda_mobilenetv3_block_train", "cpu_inception_branches_eval",
          "cpu_quantile_lerp_train", "cpu_stft_istft", "cuda_scatter_reduce_mean_prod_train", "cpu_index_copy_fill_masked_scatter_train",
          "cpu_tensor_unfold_windows_train", "cuda_take_put_flat", "cuda_masked_select_unbacked", "cpu_item_capture_scalar",
          "cpu_torch_cond", "cuda_checkpoint_train", "cuda_flex_attention_causal", "cuda_rmsprop_adagrad_step",
          "cpu_tied_lm_head_train", "cpu_groupnorm_bf16_train", "cpu_int_bitwise_shift", "cuda_uint8_image_normalize",
          "cuda_interp_nearest_exact_train", "cpu_adaptive_avgpool_nondivisible_train", "cuda_embedding_scale_grad_freq_train", "cuda_rl_discounted_returns",
          "cpu_ppo_loss_train", "cuda_logsigmoid_softplus_train", "cpu_atan2_hypot_polar", "cuda_special_fns2",
          "cpu_argsort_rank", "cuda_soft_target_ce_train", "cpu_type_promotion_mix", "cuda_meshgrid_posemb_2d",
          "cuda_dynamic_length_mask_train", "cpu_dynamic_reshape_chain", "cuda_autocast_bf16_train", "cpu_pool1d_train",
          "cpu_norm_variants_train", "cpu_freezing_conv_bn_eval"]
name, dev, run, X = child(__file__, MODELS, "/tmp/survey9")

import math
import torch, torch.nn as nn, torch.nn.functional as F

if name == "cuda_resnet_bottleneck_train":
    class B(nn.Module):
        def __init__(s):
            super().__init__()
            s.c1 = nn.Conv2d(8, 4, 1, bias=False); s.b1 = nn.BatchNorm2d(4)
            s.c2 = nn.Conv2d(4, 4, 3, stride=2, padding=1, bias=False); s.b2 = nn.BatchNorm2d(4)
            s.c3 = nn.Conv2d(4, 16, 1, bias=False); s.b3 = nn.BatchNorm2d(16)
            s.down = nn.Sequential(nn.Conv2d(8, 16, 1, stride=2, bias=False), nn.BatchNorm2d(16))
        def forward(s, x):
            h = F.relu(s.b1(s.c1(x))); h = F.relu(s.b2(s.c2(h))); h = s.b3(s.c3(h))
            return F.relu(h + s.down(x))
    run(B(), X(2, 8, 8, 8), train=True)
elif name == "cpu_densenet_block_train":
    class D(nn.Module):
        def __init__(s):
            super().__init__()
            s.layers = nn.ModuleList([nn.Sequential(nn.BatchNorm2d(6 + 4 * i), nn.ReLU(), nn.Conv2d(6 + 4 * i, 4, 3, padding=1, bias=False))
                                      for i in range(3)])
        def forward(s, x):
            feats = [x]
            for l in s.layers:
                feats.append(l(torch.cat(feats, 1)))
            return torch.cat(feats, 1)
    run(D(), X(2, 6, 6, 6), train=True)
elif name == "cuda_mobilenetv3_block_train":
    class M(nn.Module):
        def __init__(s):
            super().__init__()
            s.e = nn.Conv2d(8, 24, 1, bias=False); s.be = nn.BatchNorm2d(24)
            s.d = nn.Conv2d(24, 24, 5, padding=2, groups=24, bias=False); s.bd = nn.BatchNorm2d(24)
            s.s1 = nn.Conv2d(24, 8, 1); s.s2 = nn.Conv2d(8, 24, 1)
            s.p = nn.Conv2d(24, 8, 1, bias=False); s.bp = nn.BatchNorm2d(8)
        def forward(s, x):
            h = F.hardswish(s.be(s.e(x))); h = F.hardswish(s.bd(s.d(h)))
            se = F.hardsigmoid(s.s2(F.relu(s.s1(F.adaptive_avg_pool2d(h, 1)))))
            return x + s.bp(s.p(h * se))
    run(M(), X(2, 8, 7, 7), train=True)
elif name == "cpu_inception_branches_eval":
    class I(nn.Module):
        def __init__(s):
            super().__init__()
            s.b1 = nn.Conv2d(6, 4, 1); s.b2 = nn.Sequential(nn.Conv2d(6, 3, 1), nn.ReLU(), nn.Conv2d(3, 4, (1, 3), padding=(0, 1)), nn.Conv2d(4, 4, (3, 1), padding=(1, 0)))
            s.b4 = nn.Conv2d(6, 4, 1)
        def forward(s, x):
            a = F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False)
            m = F.max_pool2d(x, 3, stride=1, padding=1)
            return F.relu(torch.cat([s.b1(x), s.b2(x), s.b4(a), m[:, :4]], 1))
    with torch.no_grad():
        run(I().eval(), X(2, 6, 9, 9))
elif name == "cpu_quantile_lerp_train":
    class Q(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(10, 10)
        def forward(s, x):
            h = s.l(x)
            q = torch.quantile(h, torch.tensor([0.1, 0.5, 0.9]), dim=1, keepdim=True)
            lo, hi = q[0], q[2]
            return torch.lerp(h.clamp(lo, hi), x, 0.3) + torch.nanquantile(h, 0.25, dim=0), torch.lerp(x, h, torch.sigmoid(h)).median(1).values
    run(Q(), X(6, 10), train=True)
elif name == "cpu_stft_istft":
    def f(x):
        w = torch.hann_window(16)
        s = torch.stft(x, 16, hop_length=4, window=w, return_complex=True)
        s = s * torch.exp(-s.abs() * 0.1)
        return torch.istft(s, 16, hop_length=4, window=w, length=x.shape[-1]), s.abs().pow(2).mean(-1)
    run(f, X(2, 64))
elif name == "cuda_scatter_reduce_mean_prod_train":
    class S(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(6, 6)
        def forward(s, x, idx):
            h = s.l(x)
            base = torch.ones(4, 6, device=x.device)
            m = base.scatter_reduce(0, idx, h, "mean", include_self=False)
            p = base.scatter_reduce(0, idx, torch.sigmoid(h), "prod", include_self=True)
            return m * 2 + p, torch.zeros(4, 6, device=x.device).scatter_reduce(0, idx, h, "amin", include_self=False)
    run(S(), X(10, 6), torch.randint(0, 4, (10, 6), device=dev), train=True)
elif name == "cpu_index_copy_fill_masked_scatter_train":
    class C(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(5, 5)
        def forward(s, x, idx, mask):
            h = s.l(x)
            a = torch.zeros(8, 5).index_copy(0, idx, h[:3])
            b = h.index_fill(1, torch.tensor([0, 3]), -1.0)
            c = x.masked_scatter(mask, h * 3)
            return a.sum(0) + b.mean(0), c
    mask = torch.rand(6, 5) > 0.5
    run(C(), X(6, 5), torch.tensor([5, 1, 7]), mask, train=True)
elif name == "cpu_tensor_unfold_windows_train":
    class U(nn.Module):
        def __init__(s): super().__init__(); s.w = nn.Parameter(torch.randn(5))
        def forward(s, x):
            win = x.unfold(-1, 5, 2)
            y = (win * s.w).sum(-1)
            p = x.unfold(1, 3, 3).unfold(2, 2, 2)
            return y, p.amax((-1, -2))
    run(U(), X(3, 9, 16), train=True)
elif name == "cuda_take_put_flat":
    def f(x, idx, v):
        t = torch.take(x, idx)
        y = x.clone()
        y.put_(idx[:4], v, accumulate=True)
        z = x.flatten().index_put((idx,), t * 2)
        return t.exp(), y, z.view_as(x)
    run(f, X(4, 6), torch.tensor([0, 5, 11, 23, 7, 5], device=dev), X(4))
elif name == "cuda_masked_select_unbacked":
    import torch._dynamo
    torch._dynamo.config.capture_dynamic_output_shape_ops = True
    def f(x, y):
        sel = torch.masked_select(x, x > 0)
        nz = torch.nonzero(y > 0.5)
        return sel.sum() + sel.numel(), nz.float().mean(0), (sel * 2).sigmoid().max()
    run(f, X(8, 8), torch.rand(6, 3, device=dev))
elif name == "cpu_item_capture_scalar":
    import torch._dynamo
    torch._dynamo.config.capture_scalar_outputs = True
    def f(x, n):
        s = x.abs().max().item()
        k = n.item()
        torch._check(k >= 1); torch._check(k <= 8)
        return x / s, torch.ones(k) * s, x[:, :k].sum()
    run(f, X(4, 8), torch.tensor(3))
elif name == "cpu_torch_cond":
    class C(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(6, 6)
        def forward(s, x):
            h = s.l(x)
            return torch.cond(h.sum() > 0, lambda t: t.sin() * 2, lambda t: t.cos() - 1, (h,)) + h
    with torch.no_grad():
        run(C(), X(4, 6))
elif name == "cuda_checkpoint_train":
    from torch.utils.checkpoint import checkpoint
    class K(nn.Module):
        def __init__(s): super().__init__(); s.a = nn.Linear(16, 32); s.b = nn.Linear(32, 16); s.n = nn.LayerNorm(16)
        def block(s, x): return x + s.b(F.gelu(s.a(s.n(x))))
        def forward(s, x):
            return checkpoint(s.block, checkpoint(s.block, x, use_reentrant=False), use_reentrant=False)
    run(K(), X(4, 8, 16), train=True)
elif name == "cuda_flex_attention_causal":
    from torch.nn.attention.flex_attention import flex_attention
    def causal(score, b, h, q, kv): return torch.where(q >= kv, score, -float("inf"))
    def f(q, k, v):
        return flex_attention(q, k, v, score_mod=causal)
    run(f, X(1, 2, 128, 16), X(1, 2, 128, 16), X(1, 2, 128, 16))
elif name == "cuda_rmsprop_adagrad_step":
    ps = [nn.Parameter(torch.randn(8, 4, device=dev)), nn.Parameter(torch.randn(4, device=dev))]
    qs = [nn.Parameter(torch.randn(6, device=dev)), nn.Parameter(torch.randn(3, 3, device=dev))]
    for p in ps + qs: p.grad = torch.randn_like(p)
    o1 = torch.optim.RMSprop(ps, lr=0.01, momentum=0.9, centered=True, foreach=True)
    o2 = torch.optim.Adagrad(qs, lr=0.1, weight_decay=0.01, foreach=True)
    @torch.compile
    def step(): o1.step(); o2.step()
    step(); step(); print("ok")
elif name == "cpu_tied_lm_head_train":
    class LM(nn.Module):
        def __init__(s): super().__init__(); s.e = nn.Embedding(50, 16); s.n = nn.LayerNorm(16); s.h = nn.Linear(16, 50, bias=False); s.h.weight = s.e.weight
        def forward(s, ids, tgt):
            logits = s.h(s.n(s.e(ids) * 4.0))
            return F.nll_loss(F.log_softmax(logits, -1).view(-1, 50), tgt.view(-1), ignore_index=-100)
    tgt = torch.randint(0, 50, (2, 7)); tgt[:, -2:] = -100
    run(LM(), torch.randint(0, 50, (2, 7)), tgt, train=True)
elif name == "cpu_groupnorm_bf16_train":
    class G(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(8, 8, 3, padding=1); s.g = nn.GroupNorm(4, 8)
        def forward(s, x): return F.silu(s.g(s.c(x))) + x
    run(G(), X(2, 8, 6, 6, dt=torch.bfloat16), train=True, dtype=torch.bfloat16)
elif name == "cpu_int_bitwise_shift":
    def f(a, b):
        return ((a << 2) ^ (b >> 1), torch.bitwise_and(a, 0xF0) | torch.bitwise_not(b), torch.remainder(a, -7), torch.fmod(a, 5),
                torch.floor_divide(a, 3), a // b.clamp(min=1), (a.to(torch.int32) * 3).to(torch.int16), torch.bitwise_left_shift(b, a % 4))
    run(f, torch.randint(-100, 100, (5, 6), device=dev), torch.randint(0, 64, (5, 6), device=dev))
elif name == "cuda_uint8_image_normalize":
    def f(img, mean, std):
        x = img.permute(0, 3, 1, 2).float().div(255)
        x = (x - mean[:, None, None]) / std[:, None, None]
        back = (x * std[:, None, None] + mean[:, None, None]).mul(255).round().clamp(0, 255).to(torch.uint8)
        return x, back.permute(0, 2, 3, 1), img.to(torch.int32).sum((1, 2))
    run(f, torch.randint(0, 256, (2, 5, 6, 3), dtype=torch.uint8, device=dev), torch.tensor([0.485, 0.456, 0.406], device=dev),
        torch.tensor([0.229, 0.224, 0.225], device=dev))
elif name == "cuda_interp_nearest_exact_train":
    class N(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(3, 4, 3, padding=1)
        def forward(s, x):
            h = s.c(x)
            return F.interpolate(h, scale_factor=1.7, mode="nearest-exact").mean((2, 3)) + \
                F.interpolate(h, size=(4, 3), mode="nearest").sum((2, 3)) + F.interpolate(h[:, :, 0], scale_factor=2.5, mode="linear").mean(-1)
    run(N(), X(2, 3, 7, 6), train=True)
elif name == "cpu_adaptive_avgpool_nondivisible_train":
    class A(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv2d(3, 6, 3)
        def forward(s, x):
            h = s.c(x)
            return F.adaptive_avg_pool2d(h, (3, 4)).flatten(1), F.adaptive_max_pool2d(h, (2, 3))[0].sum()
    run(A(), X(2, 3, 9, 11), train=True)
elif name == "cuda_embedding_scale_grad_freq_train":
    class E(nn.Module):
        def __init__(s): super().__init__(); s.e = nn.Embedding(20, 8, scale_grad_by_freq=True, padding_idx=0)
        def forward(s, ids): return torch.tanh(s.e(ids)).sum(1)
    ids = torch.tensor([[1, 2, 2, 0, 5], [2, 7, 7, 7, 0]], device=dev)
    run(E(), ids, train=True)
elif name == "cuda_rl_discounted_returns":
    def f(r, done, v):
        g = 0.99
        n = r.shape[-1]
        pw = g ** torch.arange(n, device=r.device, dtype=r.dtype)
        disc = torch.flip(torch.cumsum(torch.flip(r * pw, [-1]), -1), [-1]) / pw
        mask = 1 - done.float()
        adv = disc - v
        return disc * mask, (adv - adv.mean()) / (adv.std() + 1e-8)
    run(f, X(4, 10), torch.rand(4, 10, device=dev) > 0.9, X(4, 10))
elif name == "cpu_ppo_loss_train":
    class P(nn.Module):
        def __init__(s): super().__init__(); s.pi = nn.Linear(8, 4); s.v = nn.Linear(8, 1)
        def forward(s, obs, act, old_logp, adv, ret):
            logits = s.pi(obs)
            logp_all = F.log_softmax(logits, -1)
            logp = logp_all.gather(1, act[:, None]).squeeze(1)
            ratio = torch.exp(logp - old_logp)
            pg = -torch.min(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv).mean()
            ent = -(logp_all.exp() * logp_all).sum(-1).mean()
            vl = F.mse_loss(s.v(obs).squeeze(1), ret)
            return pg + 0.5 * vl - 0.01 * ent
    run(P(), X(16, 8), torch.randint(0, 4, (16,)), X(16) - 1.5, X(16), X(16), train=True)
elif name == "cuda_logsigmoid_softplus_train":
    class L(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(12, 12)
        def forward(s, x):
            h = s.l(x) * 8
            return F.softplus(h, beta=2.0, threshold=5.0) + F.logsigmoid(h) + F.softshrink(h, 0.5) + F.hardshrink(h, 1.0) + F.tanhshrink(h / 8)
    run(L(), X(6, 12), train=True)
elif name == "cpu_atan2_hypot_polar":
    def f(x, y):
        r = torch.hypot(x, y)
        th = torch.atan2(y, x)
        z = torch.polar(r, th)
        return torch.view_as_real(z) - torch.stack([x, y], -1), torch.rad2deg(th), torch.deg2rad(r).sinc(), torch.logaddexp2(x, y)
    run(f, X(5, 7), X(5, 7))
elif name == "cuda_special_fns2":
    def f(x, p):
        sp = torch.special
        return (torch.erfinv(p * 1.8 - 0.9), sp.i0(x), sp.i1e(x), sp.ndtri(p), sp.log_ndtr(x), sp.xlog1py(x.abs(), x),
                sp.erfcx(x), sp.i0e(x), sp.entr(p), torch.logit(p, eps=1e-3), sp.bessel_j0(x), sp.expit(x) * sp.exp2(x))
    run(f, X(6, 6), torch.rand(6, 6, device=dev).clamp(0.01, 0.99))
elif name == "cpu_argsort_rank":
    def f(x):
        order = torch.argsort(x, dim=1, stable=True)
        rank = torch.argsort(order, dim=1)
        srt, ix = torch.sort(x, 0, descending=True, stable=True)
        return rank.float() / x.shape[1], srt[:3], ix, torch.msort(x)[-1]
    run(f, X(5, 9))
elif name == "cuda_soft_target_ce_train":
    class S(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(10, 6)
        def forward(s, x, soft):
            logits = s.l(x)
            return F.cross_entropy(logits, soft, label_smoothing=0.1), F.kl_div(F.log_softmax(logits, -1), soft, reduction="batchmean")
    run(S(), X(8, 10), torch.softmax(X(8, 6), -1), train=True)
elif name == "cpu_type_promotion_mix":
    def f(i, h, b, d):
        return (i * 1.5, i / 4, i + h, b + i, (h * b).sum(), d * h, torch.where(b, i, 2.5), torch.clamp(i, h.min(), h.max()),
                torch.true_divide(i, i.clamp(min=1)), (i > h).to(torch.int8) + b, h.float().mean() + i.double().var())
    run(f, torch.randint(-5, 9, (4, 5)), X(4, 5, dt=torch.float16), torch.rand(4, 5) > 0.5, X(4, 5, dt=torch.float64))
elif name == "cuda_meshgrid_posemb_2d":
    class P(nn.Module):
        def __init__(s): super().__init__(); s.proj = nn.Linear(16, 16)
        def forward(s, x):
            b, h, w, c = x.shape
            gy, gx = torch.meshgrid(torch.arange(h, device=x.device, dtype=torch.float32), torch.arange(w, device=x.device, dtype=torch.float32), indexing="ij")
            omega = 1.0 / (10000 ** (torch.arange(c // 4, device=x.device, dtype=torch.float32) / (c // 4)))
            oy = gy.flatten()[:, None] * omega[None]; ox = gx.flatten()[:, None] * omega[None]
            pe = torch.cat([ox.sin(), ox.cos(), oy.sin(), oy.cos()], 1).view(h, w, c)
            return s.proj(x + pe)
    run(P(), X(2, 4, 6, 16))
elif name == "cuda_dynamic_length_mask_train":
    class D(nn.Module):
        def __init__(s): super().__init__(); s.l = nn.Linear(8, 8)
        def forward(s, x, lengths):
            t = x.shape[1]
            mask = torch.arange(t, device=x.device)[None, :] < lengths[:, None]
            h = torch.tanh(s.l(x)) * mask[..., None]
            return h.sum(1) / lengths[:, None].float()
    torch._dynamo.config.automatic_dynamic_shapes = True
    m = D().to(dev); cm = torch.compile(m, dynamic=True)
    for t in (5, 9):
        y = cm(X(3, t, 8), torch.tensor([t, t - 2, 1], device=dev)); y.sum().backward()
    print("ok")
elif name == "cpu_dynamic_reshape_chain":
    def f(x):
        b, t, c = x.shape
        h = x.reshape(b * t, c).softmax(-1).view(b, t, 2, c // 2).transpose(1, 2).contiguous()
        return h.flatten(0, 1).sum(-1), x.new_zeros(b, t).fill_(t) + x.mean(-1)
    run(f, X(2, 5, 6), dynamic=True)
elif name == "cuda_autocast_bf16_train":
    class A(nn.Module):
        def __init__(s): super().__init__(); s.a = nn.Linear(16, 32); s.n = nn.LayerNorm(32); s.b = nn.Linear(32, 4)
        def forward(s, x, t):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = s.b(F.gelu(s.n(s.a(x))))
                return F.cross_entropy(logits, t) + logits.float().pow(2).mean() * 1e-3
    run(A(), X(8, 16), torch.randint(0, 4, (8,), device=dev), train=True)
elif name == "cpu_pool1d_train":
    class P(nn.Module):
        def __init__(s): super().__init__(); s.c = nn.Conv1d(4, 6, 3)
        def forward(s, x):
            h = s.c(x)
            m, i = F.max_pool1d(h, 3, stride=2, padding=1, return_indices=True)
            return m.sum(-1) + F.avg_pool1d(h, 4, stride=3, ceil_mode=True).sum(-1) + F.adaptive_max_pool1d(h, 5).mean(-1), i
    run(P(), X(2, 4, 17), train=True)
elif name == "cpu_norm_variants_train":
    class N(nn.Module):
        def __init__(s):
            super().__init__()
            s.b1 = nn.BatchNorm1d(6, affine=False); s.b2 = nn.BatchNorm1d(6, track_running_stats=False)
            s.i = nn.InstanceNorm1d(6, affine=True, track_running_stats=True); s.l = nn.Linear(5, 5)
        def forward(s, x):
            h = s.l(x)
            return s.b1(h) + s.b2(h * 2) + s.i(h.tanh())
    run(N().train(), X(4, 6, 5), train=True)
elif name == "cpu_freezing_conv_bn_eval":
    import torch._inductor.config as icfg
    icfg.freezing = True
    class F2(nn.Module):
        def __init__(s):
            super().__init__(); s.c = nn.Conv2d(3, 8, 3, padding=1); s.b = nn.BatchNorm2d(8); s.l = nn.Linear(8, 5)
        def forward(s, x): return s.l(F.relu(s.b(s.c(x))).mean((2, 3)))
    m = F2().eval()
    with torch.no_grad():
        m.b.running_mean.uniform_(-0.5, 0.5); m.b.running_var.uniform_(0.5, 2)
        run(m, X(2, 3, 8, 8))
else:
    raise SystemExit(f"unknown model {name}")
