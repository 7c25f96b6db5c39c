# survey_models12.py — the twelfth batch of real graphs the project has never seen: DeBERTa's
# disentangled attention (c2p / p2c gathers of clamped relative positions), Reformer's LSH bucketing
# (argmax of random rotations, argsort, gather and its undo), DropBlock, the Lovasz hinge loss (sort,
# cumsum, Jaccard gradient), HF generation logits processors (repetition penalty, top-k filter, a
# banned token), torch.unique with counts and repeat_interleave without output_size (unbacked sizes
# under capture_dynamic_output_shape_ops), automatic dynamic shapes on a recompile, torch.cond with a
# backward, input saliency (gradients of the input only), forward hooks, a bf16 model training on the
# CPU, complex angle / conj / view_as_real, explicit diagonal / select / slice scatters in training,
# NAdam / RAdam / Adamax steps, nn.TransformerEncoder with a key padding mask (eval), MAE patchify
# with the normalized-pixel loss, YOLOv5's Focus slicing, Swin V2's log-spaced continuous position
# bias, cpp_wrapper; DETR's sine position embedding with learned queries, RetNet retention, CBAM,
# ArcFace, a beam search step, an explicit graph break in training, pure fp16 and float64 training on
# the GPU, cov / corrcoef, as_strided / unflatten / movedim / tensor_split, PixelCNN's masked convs,
# spatial pyramid pooling, FM + DCN cross layers, a BYOL target branch under no_grad, boolean-mask
# assignment, CLIP's attention pool, xLSTM's parallel mLSTM, coordinate-descent tuning through
# compile options, StyleGAN's minibatch std; cpu and cuda.
# Run on the GPU machine:  OUT=/path JOBS=10 python3 tests/tools/survey_models12.py
# then here:               tests/tools/survey_logs.sh /path/logs
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from survey_driver import child, compile_call
MODELS = ["cpu_deberta_disentangled_attn", "cpu_lsh_bucket_sort", "cpu_dropblock_train", "cpu_lovasz_hinge_train",
          "cpu_hf_logits_processors", "cpu_unique_counts_dynamic", "cpu_repeat_interleave_unbacked", "cpu_automatic_dynamic_recompile",
          "cpu_cond_train", "cpu_input_saliency_train", "cpu_forward_hooks", "cpu_bf16_embedding_ce_train",
          "cpu_complex_angle_ops", "cpu_scatter_ops_train", "cpu_nadam_radam_step", "cpu_transformer_encoder_padmask_eval",
          "cpu_mae_patchify_normpix_train", "cpu_yolo_focus_eval", "cpu_swinv2_log_cpb_train", "cpu_cpp_wrapper_block",
          "cuda_detr_sine_posemb_queries_train", "cuda_retnet_retention_train", "cuda_cbam_attention", "cuda_arcface_margin_train",
          "cuda_beam_search_step", "cuda_graph_break_train", "cuda_fp16_groupnorm_conv_train", "cuda_float64_conv_bn_train",
          "cuda_cov_corrcoef", "cuda_as_strided_unflatten_movedim", "cuda_adamax_step", "cuda_pixelcnn_masked_conv",
          "cuda_spp_pyramid_pool", "cuda_fm_dcn_crossnet", "cuda_byol_no_grad_target_train", "cuda_bool_mask_assign_train",
          "cuda_clip_attnpool2d", "cuda_mlstm_parallel_train", "cuda_coordinate_descent_rmsnorm", "cuda_stylegan_minibatch_std"]
name, dev, run, X = child(__file__, MODELS, "/tmp/survey12")

import math
import torch, torch.nn as nn, torch.nn.functional as F


if name == "cpu_deberta_disentangled_attn":
    class D(nn.Module):
        def __init__(s, d=16, h=2, span=4):
            super().__init__(); s.h = h; s.span = span
            s.qkv = nn.Linear(d, 3 * d); s.rel = nn.Embedding(2 * span, d); s.pk = nn.Linear(d, d); s.pq = nn.Linear(d, d)
        def forward(s, x):
            B, T, D = x.shape; h = s.h; dh = D // h; S = s.span
            q, k, v = s.qkv(x).view(B, T, 3, h, dh).permute(2, 0, 3, 1, 4)
            pos = torch.arange(T, device=x.device)
            idx = (pos[:, None] - pos[None, :] + S).clamp(0, 2 * S - 1).expand(B, h, T, T)
            pk = s.pk(s.rel.weight).view(2 * S, h, dh).transpose(0, 1)
            pq = s.pq(s.rel.weight).view(2 * S, h, dh).transpose(0, 1)
            c2p = torch.gather(torch.einsum("bhtd,hrd->bhtr", q, pk), -1, idx)
            p2c = torch.gather(torch.einsum("bhtd,hrd->bhtr", k, pq), -1, 2 * S - 1 - idx).transpose(-1, -2)
            scores = (q @ k.transpose(-1, -2) + c2p + p2c) / math.sqrt(3 * dh)
            return (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D)
    run(D(), X(2, 6, 16))
elif name == "cpu_lsh_bucket_sort":
    def f(x, rot):
        B, T, D = x.shape
        r = x @ rot
        buckets = torch.cat([r, -r], -1).argmax(-1)
        key = buckets * T + torch.arange(T, device=x.device)
        order = key.argsort(-1)
        undo = order.argsort(-1)
        sx = torch.gather(x, 1, order[..., None].expand_as(x))
        ch = sx.view(B, -1, 4, D)
        att = ((ch @ ch.transpose(-1, -2)) / math.sqrt(D)).softmax(-1) @ ch
        return torch.gather(att.reshape(B, T, D), 1, undo[..., None].expand_as(x)), buckets
    run(f, X(2, 12, 8), X(8, 3))
elif name == "cpu_dropblock_train":
    class DB(nn.Module):
        def __init__(s):
            super().__init__(); s.c = nn.Conv2d(3, 6, 3, padding=1)
        def forward(s, x):
            h = F.relu(s.c(x)); bs = 3; p = 0.1; W = h.shape[-1]
            gamma = p / bs ** 2 * W ** 2 / (W - bs + 1) ** 2
            m = (torch.rand_like(h[:, :1]) < gamma).float()
            block = 1 - F.max_pool2d(m, bs, 1, bs // 2)
            return (h * block * block.numel() / block.sum()).mean(1)
    run(DB(), X(2, 3, 8, 8), train=True)
elif name == "cpu_lovasz_hinge_train":
    class L(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(4, 1)
        def forward(s, x, labels):
            logits = s.l(x).squeeze(-1)
            errors = 1 - logits * (2 * labels - 1)
            errs, perm = torch.sort(errors, descending=True)
            gt = labels[perm]
            gts = gt.sum()
            jac = 1 - (gts - gt.cumsum(0)) / (gts + (1 - gt).cumsum(0))
            grad = torch.cat([jac[:1], jac[1:] - jac[:-1]])
            return torch.dot(F.relu(errs), grad)
    run(L(), X(16, 4), (torch.rand(16) > 0.5).float(), train=True)
elif name == "cpu_hf_logits_processors":
    def f(logits, input_ids):
        score = torch.gather(logits, 1, input_ids)
        score = torch.where(score < 0, score * 1.3, score / 1.3)
        logits = logits.scatter(1, input_ids, score) / 0.7
        kth = torch.topk(logits, 5)[0][..., -1, None]
        logits = logits.masked_fill(logits < kth, -float("inf"))
        logits[:, 0] = -float("inf")
        return F.log_softmax(logits, -1), logits.argmax(-1)
    run(f, X(3, 30), torch.randint(0, 30, (3, 6)))
elif name == "cpu_unique_counts_dynamic":
    import torch._dynamo.config as dc
    dc.capture_dynamic_output_shape_ops = True
    def f(ids, w):
        u, inv, cnt = torch.unique(ids, sorted=True, return_inverse=True, return_counts=True)
        return w * cnt[inv].float()[:, None], u.float().mean()
    run(f, torch.randint(0, 5, (12,)), X(12, 3))
elif name == "cpu_repeat_interleave_unbacked":
    import torch._dynamo.config as dc
    dc.capture_dynamic_output_shape_ops = True
    def f(x, counts):
        y = torch.repeat_interleave(x, counts, dim=0)
        return y.relu() * 2, y.sum(0)
    run(f, X(5, 3), torch.tensor([1, 0, 3, 2, 1]))
elif name == "cpu_automatic_dynamic_recompile":
    m = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.GELU())
    cm = torch.compile(m)
    with torch.no_grad():
        cm(X(4, 8)); cm(X(7, 8)); cm(X(9, 8))
    print("ok")
elif name == "cpu_cond_train":
    class C(nn.Module):
        def __init__(s):
            super().__init__(); s.a = nn.Linear(5, 5); s.b = nn.Linear(5, 5)
        def forward(s, x):
            return torch.cond(x.sum() > 0, lambda t: s.a(t).relu(), lambda t: s.b(t).sigmoid(), (x,)) * 2
    run(C(), X(4, 5), train=True)
elif name == "cpu_input_saliency_train":
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(64, 5), nn.LogSoftmax(-1))
    m.requires_grad_(False)
    x = X(2, 3, 6, 6).requires_grad_()
    run(m, x, train=True)
elif name == "cpu_forward_hooks":
    m = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4))
    m[0].register_forward_pre_hook(lambda mod, i: (i[0].clamp(-1, 1),))
    m[1].register_forward_hook(lambda mod, i, o: o * 0.5 + i[0].sigmoid())
    run(m, X(5, 6))
elif name == "cpu_bf16_embedding_ce_train":
    class E(nn.Module):
        def __init__(s):
            super().__init__(); s.emb = nn.Embedding(40, 16); s.ln = nn.LayerNorm(16); s.head = nn.Linear(16, 40)
        def forward(s, ids, tgt):
            return F.cross_entropy(s.head(F.gelu(s.ln(s.emb(ids)))).view(-1, 40), tgt.view(-1), label_smoothing=0.1)
    run(E(), torch.randint(0, 40, (3, 7)), torch.randint(0, 40, (3, 7)), train=True, dtype=torch.bfloat16)
elif name == "cpu_complex_angle_ops":
    def f(re, im):
        z = torch.complex(re, im)
        w = z * (1 + 2j)
        return z.angle(), (z * z.conj()).real, torch.view_as_real(w - 1), z.abs(), re.angle()
    run(f, X(4, 5), X(4, 5))
elif name == "cpu_scatter_ops_train":
    class S(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(5, 5)
        def forward(s, x):
            h = s.l(x)
            a = torch.diagonal_scatter(h, h.diagonal().exp())
            b = torch.select_scatter(a, a[1] * 2, 0, 3)
            c = torch.slice_scatter(b, b[:, :2].sigmoid(), 1, 3, 5)
            return c.sum(0)
    run(S(), X(5, 5), train=True)
elif name == "cpu_nadam_radam_step":
    ps = [torch.randn(6, 5, requires_grad=True), torch.randn(5, requires_grad=True), torch.randn(4, 3, requires_grad=True)]
    for p in ps:
        p.grad = torch.randn_like(p)
    nadam = torch.optim.NAdam(ps[:2], lr=1e-2, weight_decay=1e-2, decoupled_weight_decay=True)
    radam = torch.optim.RAdam(ps[2:], lr=1e-2)
    @torch.compile
    def step():
        nadam.step(); radam.step()
    step(); step()
    print("ok")
elif name == "cpu_transformer_encoder_padmask_eval":
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    def f(x, pm):
        return enc(x, src_key_padding_mask=pm)
    pm = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
    with torch.no_grad():
        run(f, X(2, 6, 16), pm)
elif name == "cpu_mae_patchify_normpix_train":
    class M(nn.Module):
        def __init__(s):
            super().__init__(); s.dec = nn.Linear(12, 12)
        def forward(s, imgs, mask):
            p = 2; B, C, H, W = imgs.shape; h = H // p; w = W // p
            x = torch.einsum("nchpwq->nhwpqc", imgs.reshape(B, C, h, p, w, p)).reshape(B, h * w, p * p * C)
            pred = s.dec(x.flip(1))
            tgt = (x - x.mean(-1, keepdim=True)) / (x.var(-1, keepdim=True) + 1e-6) ** 0.5
            loss = ((pred - tgt) ** 2).mean(-1)
            return (loss * mask).sum() / mask.sum()
    run(M(), X(2, 3, 8, 8), (torch.rand(2, 16) > 0.25).float(), train=True)
elif name == "cpu_yolo_focus_eval":
    class Focus(nn.Module):
        def __init__(s):
            super().__init__(); s.c = nn.Conv2d(12, 8, 3, padding=1, bias=False); s.bn = nn.BatchNorm2d(8)
        def forward(s, x):
            x = torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)
            return F.silu(s.bn(s.c(x)))
    with torch.no_grad():
        run(Focus().eval(), X(2, 3, 8, 10))
elif name == "cpu_swinv2_log_cpb_train":
    class P(nn.Module):
        def __init__(s, ws=4, heads=2, d=8):
            super().__init__(); s.h = heads
            s.mlp = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, heads, bias=False))
            s.logit_scale = nn.Parameter(torch.log(10 * torch.ones(heads, 1, 1)))
            rh = torch.arange(-(ws - 1), ws, dtype=torch.float32)
            table = torch.stack(torch.meshgrid(rh, rh, indexing="ij")).permute(1, 2, 0).unsqueeze(0) / (ws - 1) * 8
            s.register_buffer("table", torch.sign(table) * torch.log2(table.abs() + 1.0) / math.log2(8))
            coords = torch.stack(torch.meshgrid(torch.arange(ws), torch.arange(ws), indexing="ij")).flatten(1)
            rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (ws - 1)
            s.register_buffer("index", rel[..., 0] * (2 * ws - 1) + rel[..., 1])
            s.qkv = nn.Linear(d, 3 * d)
        def forward(s, x):
            B, N, C = x.shape
            q, k, v = s.qkv(x).view(B, N, 3, s.h, C // s.h).permute(2, 0, 3, 1, 4)
            attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
            attn = attn * torch.clamp(s.logit_scale, max=math.log(100.0)).exp()
            bias = s.mlp(s.table).view(-1, s.h)[s.index.view(-1)].view(N, N, -1).permute(2, 0, 1)
            attn = attn + 16 * torch.sigmoid(bias)
            return (attn.softmax(-1) @ v).transpose(1, 2).reshape(B, N, C)
    run(P(), X(3, 16, 8), train=True)
elif name == "cpu_cpp_wrapper_block":
    import torch._inductor.config as ic
    ic.cpp_wrapper = True
    m = nn.Sequential(nn.Linear(8, 16), nn.SiLU(), nn.LayerNorm(16))
    with torch.no_grad():
        run(m, X(4, 8))
elif name == "cuda_detr_sine_posemb_queries_train":
    class DT(nn.Module):
        def __init__(s, d=16, nq=5, ncls=4):
            super().__init__(); s.d = d
            s.proj = nn.Conv2d(8, d, 1); s.q = nn.Embedding(nq, d); s.attn = nn.MultiheadAttention(d, 2, batch_first=True)
            s.ln = nn.LayerNorm(d); s.cls = nn.Linear(d, ncls + 1); s.box = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4))
        def pos(s, mask, T=10000):
            # DETR's PositionEmbeddingSine(num_pos_feats=d/2, normalize=True)
            nm = ~mask; npf = s.d // 2
            y = nm.cumsum(1, dtype=torch.float32); x = nm.cumsum(2, dtype=torch.float32)
            y = y / (y[:, -1:, :] + 1e-6) * 2 * math.pi; x = x / (x[:, :, -1:] + 1e-6) * 2 * math.pi
            dt = torch.arange(npf, dtype=torch.float32, device=mask.device)
            dt = T ** (2 * (dt // 2) / npf)
            px = x[..., None] / dt; py = y[..., None] / dt
            px = torch.stack((px[..., 0::2].sin(), px[..., 1::2].cos()), 4).flatten(3)
            py = torch.stack((py[..., 0::2].sin(), py[..., 1::2].cos()), 4).flatten(3)
            return torch.cat((py, px), 3).permute(0, 3, 1, 2)
        def forward(s, feat, mask):
            src = s.proj(feat)
            mem = (src + s.pos(mask)).flatten(2).transpose(1, 2)
            q = s.q.weight[None].expand(feat.shape[0], -1, -1)
            h = s.ln(q + s.attn(q, mem, src.flatten(2).transpose(1, 2), key_padding_mask=mask.flatten(1))[0])
            return s.cls(h).log_softmax(-1).sum() + s.box(h).sigmoid().sum()
    mask = torch.zeros(2, 4, 5, dtype=torch.bool, device=dev); mask[1, :, 3:] = True
    run(DT(), X(2, 8, 4, 5), mask, train=True)
elif name == "cuda_retnet_retention_train":
    class R(nn.Module):
        def __init__(s, d=16, h=2):
            super().__init__(); s.h = h
            s.qkv = nn.Linear(d, 3 * d, bias=False); s.g = nn.Linear(d, d); s.o = nn.Linear(d, d); s.gn = nn.GroupNorm(h, d)
            s.register_buffer("gamma", 1 - 2.0 ** (-5 - torch.arange(h, dtype=torch.float32)))
        def forward(s, x):
            B, T, D = x.shape; dh = D // s.h
            q, k, v = s.qkv(x).view(B, T, 3, s.h, dh).permute(2, 0, 3, 1, 4)
            n = torch.arange(T, device=x.device)
            diff = (n[:, None] - n[None, :]).float()
            decay = torch.where(diff >= 0, s.gamma.log()[:, None, None] * diff, -float("inf")).exp()
            decay = decay / decay.sum(-1, keepdim=True).sqrt()
            r = (q @ k.transpose(-1, -2) / math.sqrt(dh)) * decay
            r = r / r.abs().sum(-1, keepdim=True).clamp(min=1)
            o = s.gn((r @ v).transpose(1, 2).reshape(B * T, D)).view(B, T, D)
            return s.o(F.silu(s.g(x)) * o)
    run(R(), X(2, 8, 16), train=True)
elif name == "cuda_cbam_attention":
    class CB(nn.Module):
        def __init__(s, c=16, r=4):
            super().__init__()
            s.c = nn.Conv2d(3, c, 3, padding=1)
            s.mlp = nn.Sequential(nn.Conv2d(c, c // r, 1, bias=False), nn.ReLU(), nn.Conv2d(c // r, c, 1, bias=False))
            s.sp = nn.Conv2d(2, 1, 7, padding=3, bias=False)
        def forward(s, x):
            x = s.c(x)
            x = x * torch.sigmoid(s.mlp(F.adaptive_avg_pool2d(x, 1)) + s.mlp(F.adaptive_max_pool2d(x, 1)))
            return x * torch.sigmoid(s.sp(torch.cat([x.mean(1, keepdim=True), x.amax(1, keepdim=True)], 1)))
    with torch.no_grad():
        run(CB(), X(2, 3, 10, 10))
elif name == "cuda_arcface_margin_train":
    class A(nn.Module):
        def __init__(s, d=8, n=6, scale=30.0, m=0.5):
            super().__init__(); s.W = nn.Parameter(torch.randn(n, d)); s.f = nn.Linear(10, d); s.s = scale; s.m = m
        def forward(s, x, y):
            cos = F.linear(F.normalize(s.f(x)), F.normalize(s.W)).clamp(-1 + 1e-7, 1 - 1e-7)
            phi = torch.cos(torch.acos(cos) + s.m)
            phi = torch.where(cos > math.cos(math.pi - s.m), phi, cos - math.sin(math.pi - s.m) * s.m)
            onehot = torch.zeros_like(cos).scatter_(1, y[:, None], 1.0)
            return F.cross_entropy(s.s * (onehot * phi + (1 - onehot) * cos), y)
    run(A(), X(5, 10), torch.randint(0, 6, (5,), device=dev), train=True)
elif name == "cuda_beam_search_step":
    def f(logits, beam_scores, cache):
        BN, V = logits.shape; nb = 3; B = BN // nb
        scores = (logits.log_softmax(-1) + beam_scores[:, None]).view(B, nb * V)
        top, idx = torch.topk(scores, 2 * nb, dim=1)
        beam = torch.div(idx, V, rounding_mode="floor"); tok = idx % V
        sel = (beam[:, :nb] + torch.arange(B, device=logits.device)[:, None] * nb).view(-1)
        return top[:, :nb].reshape(-1), tok[:, :nb].reshape(-1), cache.index_select(0, sel)
    run(f, X(6, 20), X(6), X(6, 4, 8))
elif name == "cuda_graph_break_train":
    class G(nn.Module):
        def __init__(s):
            super().__init__(); s.l1 = nn.Linear(8, 8); s.l2 = nn.Linear(8, 4)
        def forward(s, x):
            h = F.gelu(s.l1(x))
            torch._dynamo.graph_break()
            return s.l2(h * 2).tanh()
    run(G(), X(4, 8), train=True)
elif name == "cuda_fp16_groupnorm_conv_train":
    m = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.GroupNorm(2, 8), nn.SiLU(), nn.Conv2d(8, 4, 1))
    run(m, X(2, 4, 6, 6, dt=torch.float16), train=True, dtype=torch.float16)
elif name == "cuda_float64_conv_bn_train":
    m = nn.Sequential(nn.Conv2d(3, 6, 3), nn.BatchNorm2d(6), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 2))
    run(m, X(4, 3, 8, 8, dt=torch.float64), train=True, dtype=torch.float64)
elif name == "cuda_cov_corrcoef":
    def f(x, w):
        return torch.cov(x), torch.cov(x, correction=0, aweights=w), torch.corrcoef(x)
    run(f, X(4, 10), torch.rand(10, device=dev) + 0.1)
elif name == "cuda_as_strided_unflatten_movedim":
    def f(x):
        a = x.as_strided((3, 4), (2, 1), 1)
        b = x.view(4, 6).unflatten(1, (2, 3)).movedim(1, 0)
        c = torch.tensor_split(x, [5, 11])
        return a * 2, b.sum(0), c[1].exp(), c[2].flip(0)
    run(f, X(24))
elif name == "cuda_adamax_step":
    ps = [torch.randn(6, 5, device=dev, requires_grad=True), torch.randn(5, device=dev, requires_grad=True)]
    for p in ps:
        p.grad = torch.randn_like(p)
    opt = torch.optim.Adamax(ps, lr=2e-3, weight_decay=1e-2)
    @torch.compile
    def step():
        opt.step()
    step(); step()
    print("ok")
elif name == "cuda_pixelcnn_masked_conv":
    class MC(nn.Conv2d):
        def __init__(s, typ, *a, **k):
            super().__init__(*a, **k)
            m = torch.ones_like(s.weight); kh, kw = s.weight.shape[-2:]
            m[:, :, kh // 2, kw // 2 + (typ == "B"):] = 0; m[:, :, kh // 2 + 1:] = 0
            s.register_buffer("mask", m)
        def forward(s, x):
            return F.conv2d(x, s.weight * s.mask, s.bias, s.stride, s.padding)
    net = nn.Sequential(MC("A", 1, 8, 5, padding=2), nn.ReLU(), MC("B", 8, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 1), nn.LogSoftmax(1))
    with torch.no_grad():
        run(net, X(2, 1, 8, 8))
elif name == "cuda_spp_pyramid_pool":
    def f(x):
        B = x.shape[0]
        return torch.cat([F.adaptive_max_pool2d(x, s).reshape(B, -1) for s in (1, 2, 4)] + [F.adaptive_avg_pool2d(x, 3).reshape(B, -1)], 1)
    run(f, X(2, 4, 7, 9))
elif name == "cuda_fm_dcn_crossnet":
    class R(nn.Module):
        def __init__(s, nf=5, d=4, V=30):
            super().__init__(); s.emb = nn.Embedding(V, d); s.lin = nn.Embedding(V, 1)
            s.cross = nn.ModuleList([nn.Linear(nf * d, nf * d) for _ in range(2)]); s.out = nn.Linear(nf * d, 1)
        def forward(s, ids):
            e = s.emb(ids)
            fm = 0.5 * (e.sum(1).pow(2) - e.pow(2).sum(1)).sum(1, keepdim=True)
            x0 = e.flatten(1); x = x0
            for c in s.cross:
                x = x0 * c(x) + x
            return torch.sigmoid(s.out(x) + fm + s.lin(ids).sum(1))
    with torch.no_grad():
        run(R(), torch.randint(0, 30, (6, 5), device=dev))
elif name == "cuda_byol_no_grad_target_train":
    class T(nn.Module):
        def __init__(s):
            super().__init__(); s.online = nn.Linear(8, 8); s.target = nn.Linear(8, 8); s.pred = nn.Linear(8, 8)
        def forward(s, x1, x2):
            p = s.pred(F.relu(s.online(x1)))
            with torch.no_grad():
                z = F.relu(s.target(x2))
            return 2 - 2 * F.cosine_similarity(p, z.detach(), dim=-1).mean()
    run(T(), X(4, 8), X(4, 8), train=True)
elif name == "cuda_bool_mask_assign_train":
    class B(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(6, 6)
        def forward(s, x, m):
            h = s.l(x)
            h[h < -0.5] = 0.0
            h.masked_fill_(m, -1.0)
            return h.pow(2).sum(1)
    run(B(), X(5, 6), torch.rand(5, 6, device=dev) > 0.7, train=True)
elif name == "cuda_clip_attnpool2d":
    class AP(nn.Module):
        def __init__(s, sp=4, d=16, h=2, out=8):
            super().__init__(); s.h = h
            s.pos = nn.Parameter(torch.randn(sp * sp + 1, d) / d ** 0.5)
            s.k = nn.Linear(d, d); s.q = nn.Linear(d, d); s.v = nn.Linear(d, d); s.c = nn.Linear(d, out)
        def forward(s, x):
            x = x.flatten(2).permute(2, 0, 1)
            x = torch.cat([x.mean(0, keepdim=True), x], 0) + s.pos[:, None, :]
            out, _ = F.multi_head_attention_forward(
                query=x[:1], key=x, value=x, embed_dim_to_check=x.shape[-1], num_heads=s.h,
                q_proj_weight=s.q.weight, k_proj_weight=s.k.weight, v_proj_weight=s.v.weight, in_proj_weight=None,
                in_proj_bias=torch.cat([s.q.bias, s.k.bias, s.v.bias]), bias_k=None, bias_v=None, add_zero_attn=False,
                dropout_p=0.0, out_proj_weight=s.c.weight, out_proj_bias=s.c.bias, use_separate_proj_weight=True,
                training=s.training, need_weights=False)
            return out.squeeze(0)
    with torch.no_grad():
        run(AP().eval(), X(2, 16, 4, 4))
elif name == "cuda_mlstm_parallel_train":
    class ML(nn.Module):
        def __init__(s, d=16, h=2):
            super().__init__(); s.h = h
            s.qkv = nn.Linear(d, 3 * d); s.ig = nn.Linear(d, h); s.fg = nn.Linear(d, h); s.o = nn.Linear(d, d)
        def forward(s, x):
            B, T, D = x.shape; dh = D // s.h
            q, k, v = s.qkv(x).view(B, T, 3, s.h, dh).permute(2, 0, 3, 1, 4)
            i = s.ig(x).transpose(1, 2)
            cf = F.logsigmoid(s.fg(x)).transpose(1, 2).cumsum(-1)
            mask = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device))
            logD = torch.where(mask, cf[..., :, None] - cf[..., None, :] + i[..., None, :], -float("inf"))
            m = logD.amax(-1, keepdim=True)
            C = (q @ k.transpose(-1, -2)) / math.sqrt(dh) * (logD - m).exp()
            n = torch.maximum(C.sum(-1, keepdim=True).abs(), (-m).exp())
            return s.o(((C / (n + 1e-6)) @ v).transpose(1, 2).reshape(B, T, D))
    run(ML(), X(2, 8, 16), train=True)
elif name == "cuda_coordinate_descent_rmsnorm":
    class RN(nn.Module):
        def __init__(s):
            super().__init__(); s.w = nn.Parameter(torch.ones(32) + 0.1 * torch.randn(32))
        def forward(s, x):
            x32 = x.float()
            return (s.w * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-6))).to(x.dtype)
    with torch.no_grad():
        compile_call(RN().to(dev), X(64, 32, dt=torch.bfloat16), options={"coordinate_descent_tuning": True})
elif name == "cuda_stylegan_minibatch_std":
    def f(x):
        G = 2; N, C, H, W = x.shape
        y = x.reshape(G, -1, 1, C, H, W)
        y = (y - y.mean(0)).square().mean(0)
        y = (y + 1e-8).sqrt().mean([2, 3, 4]).reshape(-1, 1, 1, 1).repeat(G, 1, H, W)
        return torch.cat([x, y], 1)
    run(f, X(4, 3, 5, 5))
