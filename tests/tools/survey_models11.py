# survey_models11.py — the eleventh batch of real graphs the project has never seen: inputs with
# unusual layouts (transposed, sliced with a storage offset, expanded with stride 0, channels-last
# 3-d), compile modes and Inductor settings users set (max-autotune-no-cudagraphs, reduce-overhead,
# epilogue fusion off, max_fusion_size), a user's torch.library custom op, torch.autograd.Function,
# torch.func (vmap, grad, jacrev), torch.distributions (Normal, Categorical), while_loop and
# associative_scan, HF-style Llama causal masks with cache positions, prod / cumprod backward
# through zeros, max over a dim with ties in training, special polynomials and Bessel functions,
# igamma / zeta / mvlgamma / entr / sinc, nextafter / signbit / float_power / gcd / lcm / isin,
# vander / cartesian_prod / combinations / cumulative_trapezoid / diff with prepend, linalg
# (matrix_norm fro / nuc, pinv, cholesky_inverse, solve_triangular, logdet, lu_factor), pad_sequence,
# scatter reduce multiply, antialiased bicubic downsampling, unfold with dilation, vector_norm ord 0
# / inf, topk smallest unsorted, a tiny multi-layer GPT, a tiny ResNet, and SDPA with enable_gqa;
# cpu and cuda.
# Run on the GPU machine:  OUT=/path JOBS=10 python3 tests/tools/survey_models11.py
# then here:               tests/tools/survey_logs.sh /path/logs
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from survey_driver import child, compile_call
MODELS = ["cpu_transposed_input_mlp_train", "cuda_sliced_offset_input", "cpu_expanded_stride0_input_train", "cuda_channels_last_3d_conv_train",
          "cuda_max_autotune_mlp", "cuda_reduce_overhead_block", "cpu_epilogue_fusion_off", "cuda_max_fusion_size_small",
          "cpu_custom_op_library", "cuda_autograd_function_train", "cpu_func_vmap_grad", "cuda_func_jacrev",
          "cpu_distributions_logprob_train", "cuda_while_loop", "cpu_associative_scan", "cuda_hf_llama_causal_mask",
          "cpu_prod_cumprod_zeros_train", "cuda_max_dim_ties_train", "cpu_special_polynomials", "cuda_bessel_fns",
          "cpu_igamma_zeta_mvlgamma", "cuda_nextafter_signbit_float_power", "cpu_gcd_lcm_isin", "cpu_vander_cartesian_combinations",
          "cuda_cumtrapz_diff_prepend_train", "cpu_linalg_norms_pinv_train", "cpu_cholesky_inverse_triangular_train", "cuda_logdet_lu_factor",
          "cpu_pad_sequence_mask", "cuda_scatter_multiply", "cpu_antialias_bicubic_down", "cuda_unfold_dilation_train",
          "cpu_vector_norm_ord0_inf", "cuda_topk_smallest_unsorted_train", "cpu_tiny_gpt_2layer_train", "cuda_tiny_resnet_train",
          "cuda_sdpa_enable_gqa_train", "cpu_bf16_reductions_cpu", "cuda_bool_int8_ops", "cpu_dynamic_true_train"]
name, dev, run, X = child(__file__, MODELS, "/tmp/survey11")

import math
import torch, torch.nn as nn, torch.nn.functional as F


if name == "cpu_transposed_input_mlp_train":
    m = nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.Linear(8, 3))
    x = X(6, 10).t()                 # (10, 6), strides (1, 10)
    run(m, x, train=True)
elif name == "cuda_sliced_offset_input":
    def f(x, y):
        return torch.softmax(x * 2 + y, -1), (x - y).abs().amax(0)
    base = X(8, 12)
    run(f, base[2:6, 3:10], X(7))       # storage offset 27, strides (12, 1)
elif name == "cpu_expanded_stride0_input_train":
    class E(nn.Module):
        def __init__(s):
            super().__init__(); s.ln = nn.LayerNorm(5)
        def forward(s, x, b):
            return s.ln(x + b).relu()
    run(E(), X(3, 4, 5), X(5).expand(3, 4, 5), train=True)
elif name == "cuda_channels_last_3d_conv_train":
    class C(nn.Module):
        def __init__(s):
            super().__init__(); s.c = nn.Conv3d(4, 6, 3, padding=1); s.bn = nn.BatchNorm3d(6)
        def forward(s, x):
            return F.silu(s.bn(s.c(x)))
    m = C().to(dev).to(memory_format=torch.channels_last_3d)
    run(m, X(2, 4, 4, 5, 6).to(memory_format=torch.channels_last_3d), train=True)
elif name == "cuda_max_autotune_mlp":
    m = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 32)).to(dev)
    with torch.no_grad():
        compile_call(m, X(32, 64), mode="max-autotune-no-cudagraphs")
elif name == "cuda_reduce_overhead_block":
    m = nn.Sequential(nn.LayerNorm(16), nn.Linear(16, 16), nn.Tanh()).to(dev)
    cm = torch.compile(m, mode="reduce-overhead")
    x = X(4, 16)
    with torch.no_grad():
        for _ in range(3):
            cm(x)
    print("ok")
elif name == "cpu_epilogue_fusion_off":
    import torch._inductor.config as ic
    ic.epilogue_fusion = False
    ic.aggressive_fusion = False
    def f(x, w):
        h = (x @ w).sigmoid()
        return h * h.sum(-1, keepdim=True), (x.exp() + 1).log().mean()
    run(f, X(8, 6), X(6, 5))
elif name == "cuda_max_fusion_size_small":
    import torch._inductor.config as ic
    ic.max_fusion_size = 3
    def f(x):
        for k in range(6):
            x = torch.sin(x) * (k + 1) + x.cos()
        return x, x.sum(1)
    run(f, X(16, 32))
elif name == "cpu_custom_op_library":
    @torch.library.custom_op("survey::scaled_tanh", mutates_args=())
    def scaled_tanh(x: torch.Tensor, s: float) -> torch.Tensor:
        return torch.tanh(x) * s
    @scaled_tanh.register_fake
    def _(x, s):
        return torch.empty_like(x)
    def bw(ctx, g):
        x, = ctx.saved_tensors
        return g * (1 - torch.tanh(x) ** 2) * ctx.s, None
    def setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0]); ctx.s = inputs[1]
    scaled_tanh.register_autograd(bw, setup_context=setup)
    class M(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(5, 5)
        def forward(s, x):
            return scaled_tanh(s.l(x), 2.0).relu() + 1
    run(M(), X(4, 5), train=True)
elif name == "cuda_autograd_function_train":
    class ClampGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(-1, 1) ** 3
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * x.clamp(-1, 1) ** 2 * (x.abs() < 1)
    class M(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(6, 6)
        def forward(s, x):
            return ClampGrad.apply(s.l(x)).sum(-1)
    run(M(), X(5, 6), train=True)
elif name == "cpu_func_vmap_grad":
    from torch.func import vmap, grad
    def loss(w, x, y):
        return ((x @ w).tanh() - y).pow(2).mean()
    def f(w, xs, ys):
        return vmap(grad(loss), in_dims=(None, 0, 0))(w, xs, ys)
    run(f, X(4, 3), X(5, 6, 4), X(5, 6, 3))
elif name == "cuda_func_jacrev":
    from torch.func import jacrev
    def g(x):
        return torch.sin(x) * x.sum()
    def f(x):
        return jacrev(g)(x)
    run(f, X(6))
elif name == "cpu_distributions_logprob_train":
    from torch.distributions import Normal, Categorical
    class D(nn.Module):
        def __init__(s):
            super().__init__(); s.mu = nn.Linear(4, 3); s.sd = nn.Linear(4, 3); s.lg = nn.Linear(4, 5)
        def forward(s, x, a, c):
            n = Normal(s.mu(x), F.softplus(s.sd(x)) + 1e-3)
            cat = Categorical(logits=s.lg(x))
            return -(n.log_prob(a).sum(-1) + cat.log_prob(c)).mean() - 0.01 * (n.entropy().sum(-1) + cat.entropy()).mean()
    run(D(), X(6, 4), X(6, 3), torch.randint(0, 5, (6,)), train=True)
elif name == "cuda_while_loop":
    from torch._higher_order_ops.while_loop import while_loop
    def f(x, n):
        def cond(i, v):
            return i < n
        def body(i, v):
            return i + 1, v * 0.5 + v.sin()
        return while_loop(cond, body, (torch.zeros((), dtype=torch.int64, device=x.device), x))
    run(f, X(4, 5), torch.tensor(3, device=dev))
elif name == "cpu_associative_scan":
    from torch._higher_order_ops.associative_scan import associative_scan
    def f(x):
        return associative_scan(lambda a, b: a * b + b, x, dim=1, combine_mode="generic")
    run(f, X(3, 8))
elif name == "cuda_hf_llama_causal_mask":
    def f(scores, attn_mask, cache_position):
        T, S = scores.shape[-2], scores.shape[-1]
        minv = torch.finfo(scores.dtype).min
        causal = torch.full((T, S), minv, device=scores.device, dtype=scores.dtype)
        causal = torch.triu(causal, diagonal=1)
        causal = causal * (torch.arange(S, device=scores.device) > cache_position.reshape(-1, 1))
        causal = causal[None, None].expand(scores.shape[0], 1, -1, -1).clone()
        pad = causal[..., :S] + attn_mask[:, None, None, :]
        causal[..., :S] = causal[..., :S].masked_fill(pad == 0, minv)
        return torch.softmax(scores + causal, -1, dtype=torch.float32).to(scores.dtype)
    run(f, X(2, 2, 5, 5, dt=torch.float16), torch.tensor([[1, 1, 1, 1, 1], [0, 0, 1, 1, 1]], device=dev), torch.arange(5, device=dev))
elif name == "cpu_prod_cumprod_zeros_train":
    class P(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(5, 5)
        def forward(s, x, m):
            h = s.l(x) * m
            return h.prod(1).sum() + h.cumprod(1).sum() + h.prod()
    run(P(), X(4, 5), (torch.rand(4, 5) > 0.3).float(), train=True)
elif name == "cuda_max_dim_ties_train":
    class M(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(6, 6)
        def forward(s, x):
            h = s.l(x).round()
            v, i = h.max(1)
            return v.sum() + h.amax(0).sum() + h.amin().sum() + i.float().mean() + h.median()
    run(M(), X(5, 6) * 3, train=True)
elif name == "cpu_special_polynomials":
    def f(x, n):
        sp = torch.special
        return (sp.chebyshev_polynomial_t(x, n), sp.chebyshev_polynomial_u(x, 3), sp.hermite_polynomial_h(x, n),
                sp.hermite_polynomial_he(x, 4), sp.laguerre_polynomial_l(x, n), sp.legendre_polynomial_p(x, 5),
                sp.shifted_chebyshev_polynomial_t(x.abs(), 3))
    run(f, X(4, 5), torch.tensor([0, 1, 2, 3, 6]))
elif name == "cuda_bessel_fns":
    def f(x):
        sp = torch.special; a = x.abs() + 0.1
        return (sp.bessel_j0(x), sp.bessel_j1(x), sp.bessel_y0(a), sp.bessel_y1(a), sp.modified_bessel_i0(x), sp.modified_bessel_i1(x),
                sp.modified_bessel_k0(a), sp.modified_bessel_k1(a), sp.scaled_modified_bessel_k0(a), sp.scaled_modified_bessel_k1(a),
                sp.spherical_bessel_j0(x), sp.airy_ai(x))
    run(f, X(6, 7) * 3)
elif name == "cpu_igamma_zeta_mvlgamma":
    def f(a, x):
        a = a.abs() + 0.5; x = x.abs() + 0.1
        return (torch.igamma(a, x), torch.igammac(a, x), torch.special.zeta(a + 1, x), torch.mvlgamma(a + 2, 3),
                torch.special.entr(x - 0.3), torch.sinc(x * 3 - 1), torch.special.gammaincc(a, x), torch.special.multigammaln(a + 1, 2))
    run(f, X(4, 6), X(4, 6))
elif name == "cuda_nextafter_signbit_float_power":
    def f(x, y, n):
        return torch.nextafter(x, y), torch.signbit(x - 0.0), torch.float_power(x.abs(), 1.5), torch.float_power(n, 2), torch.copysign(x, -y).sign()
    run(f, X(5, 6), X(5, 6), torch.randint(-3, 4, (5, 6), device=dev))
elif name == "cpu_gcd_lcm_isin":
    def f(a, b, c):
        return torch.gcd(a, b), torch.lcm(a, b), torch.isin(a, c), torch.isin(a, c, invert=True), torch.bitwise_not(a) & b
    run(f, torch.randint(-30, 30, (4, 7)), torch.randint(1, 40, (4, 7)), torch.tensor([2, 3, 5, 7, 11, 13]))
elif name == "cpu_vander_cartesian_combinations":
    def f(x, y):
        return torch.vander(x, 4, increasing=True), torch.cartesian_prod(x, y), torch.combinations(x, 2), torch.combinations(y, 2, with_replacement=True)
    run(f, X(5), X(3))
elif name == "cuda_cumtrapz_diff_prepend_train":
    class C(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(8, 8)
        def forward(s, x):
            h = s.l(x)
            return (torch.cumulative_trapezoid(h, dx=0.5, dim=1).sum() + torch.diff(h, n=2, dim=1, prepend=h[:, :1], append=h[:, -1:]).pow(2).sum()
                    + torch.trapezoid(h, x=torch.linspace(0, 1, 8, device=x.device)).sum())
    run(C(), X(4, 8), train=True)
elif name == "cpu_linalg_norms_pinv_train":
    class L(nn.Module):
        def __init__(s):
            super().__init__(); s.w = nn.Parameter(torch.randn(5, 4))
        def forward(s, x):
            h = x @ s.w
            return (torch.linalg.matrix_norm(h, "fro") + torch.linalg.matrix_norm(h, "nuc") + torch.linalg.matrix_norm(h, 2)
                    + torch.linalg.pinv(h).sum() + torch.linalg.cond(h[:4]).sum())
    run(L(), X(6, 5), train=True)
elif name == "cpu_cholesky_inverse_triangular_train":
    class C(nn.Module):
        def __init__(s):
            super().__init__(); s.a = nn.Parameter(torch.randn(4, 4))
        def forward(s, b):
            spd = s.a @ s.a.T + 4 * torch.eye(4)
            L = torch.linalg.cholesky(spd)
            return torch.cholesky_inverse(L).sum() + torch.linalg.solve_triangular(L, b, upper=False).sum() + torch.linalg.solve_triangular(L.T, b, upper=True, left=True).pow(2).sum()
    run(C(), X(4, 3), train=True)
elif name == "cuda_logdet_lu_factor":
    def f(a, b):
        spd = a @ a.transpose(-1, -2) + 3 * torch.eye(4, device=a.device)
        LU, piv = torch.linalg.lu_factor(spd)
        return torch.logdet(spd), torch.linalg.lu_solve(LU, piv, b), torch.linalg.slogdet(a)[1]
    run(f, X(2, 4, 4), X(2, 4, 2))
elif name == "cpu_pad_sequence_mask":
    from torch.nn.utils.rnn import pad_sequence
    def f(a, b, c):
        p = pad_sequence([a, b, c], batch_first=True, padding_value=-1.0)
        lens = torch.tensor([a.shape[0], b.shape[0], c.shape[0]])
        mask = torch.arange(p.shape[1])[None] < lens[:, None]
        return (p * mask[..., None]).sum(1) / lens[:, None], mask
    run(f, X(5, 3), X(2, 3), X(4, 3))
elif name == "cuda_scatter_multiply":
    def f(x, idx, src):
        return x.scatter(1, idx, src, reduce="multiply"), x.scatter(1, idx, 2.0, reduce="add"), torch.zeros_like(x).scatter_(0, idx[:1], 1.0)
    run(f, X(4, 6), torch.randint(0, 6, (4, 3), device=dev), X(4, 3))
elif name == "cpu_antialias_bicubic_down":
    def f(x):
        return (F.interpolate(x, size=(5, 7), mode="bicubic", antialias=True, align_corners=False),
                F.interpolate(x, scale_factor=0.5, mode="bilinear", antialias=True))
    run(f, X(2, 3, 16, 20))
elif name == "cuda_unfold_dilation_train":
    class U(nn.Module):
        def __init__(s):
            super().__init__(); s.w = nn.Parameter(torch.randn(5, 3 * 4))
        def forward(s, x):
            cols = F.unfold(x, (2, 2), dilation=2, padding=1, stride=(1, 2))
            y = s.w @ cols
            return F.fold(cols, (7, 8), (2, 2), dilation=2, padding=1, stride=(1, 2)).sum() + y.sum()
    run(U(), X(2, 3, 7, 8), train=True)
elif name == "cpu_vector_norm_ord0_inf":
    def f(x):
        la = torch.linalg
        return la.vector_norm(x, 0, dim=1), la.vector_norm(x, float("inf"), dim=0), la.vector_norm(x, -float("inf")), la.vector_norm(x, 3.5, dim=1, keepdim=True), la.norm(x, "fro")
    run(f, X(5, 6) * (torch.rand(5, 6) > 0.4))
elif name == "cuda_topk_smallest_unsorted_train":
    class T(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(10, 10)
        def forward(s, x):
            v, i = torch.topk(s.l(x), 3, dim=1, largest=False, sorted=False)
            v2, _ = torch.topk(s.l(x), 4, dim=0)
            return v.sort(1).values.sum() + v2.sum() + i.sum()
    run(T(), X(6, 10), train=True)
elif name == "cpu_tiny_gpt_2layer_train":
    class Blk(nn.Module):
        def __init__(s):
            super().__init__()
            s.ln1 = nn.LayerNorm(16); s.attn = nn.MultiheadAttention(16, 4, batch_first=True); s.ln2 = nn.LayerNorm(16)
            s.mlp = nn.Sequential(nn.Linear(16, 64), nn.GELU(approximate="tanh"), nn.Linear(64, 16))
        def forward(s, x, mask):
            h = s.ln1(x); x = x + s.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
            return x + s.mlp(s.ln2(x))
    class G(nn.Module):
        def __init__(s):
            super().__init__(); s.te = nn.Embedding(50, 16); s.pe = nn.Embedding(8, 16); s.b = nn.ModuleList([Blk(), Blk()]); s.ln = nn.LayerNorm(16)
        def forward(s, ids, tgt):
            T = ids.shape[1]; mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
            x = s.te(ids) + s.pe(torch.arange(T))
            for b in s.b:
                x = b(x, mask)
            logits = s.ln(x) @ s.te.weight.T
            return F.cross_entropy(logits.view(-1, 50), tgt.view(-1))
    run(G(), torch.randint(0, 50, (2, 8)), torch.randint(0, 50, (2, 8)), train=True)
elif name == "cuda_tiny_resnet_train":
    class Basic(nn.Module):
        def __init__(s, cin, cout, stride):
            super().__init__()
            s.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False); s.b1 = nn.BatchNorm2d(cout)
            s.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False); s.b2 = nn.BatchNorm2d(cout)
            s.sc = nn.Sequential() if stride == 1 and cin == cout else nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
        def forward(s, x):
            return F.relu(s.b2(s.c2(F.relu(s.b1(s.c1(x))))) + s.sc(x))
    class R(nn.Module):
        def __init__(s):
            super().__init__()
            s.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
            s.l1 = Basic(8, 8, 1); s.l2 = Basic(8, 16, 2); s.fc = nn.Linear(16, 10)
        def forward(s, x, y):
            h = s.l2(s.l1(s.stem(x)))
            return F.cross_entropy(s.fc(torch.flatten(F.adaptive_avg_pool2d(h, 1), 1)), y)
    run(R(), X(4, 3, 16, 16), torch.randint(0, 10, (4,), device=dev), train=True)
elif name == "cuda_sdpa_enable_gqa_train":
    class A(nn.Module):
        def __init__(s):
            super().__init__(); s.q = nn.Linear(16, 16); s.kv = nn.Linear(16, 8)
        def forward(s, x):
            B, T, _ = x.shape
            q = s.q(x).view(B, T, 4, 4).transpose(1, 2)
            k = s.kv(x).view(B, T, 2, 4).transpose(1, 2)
            return F.scaled_dot_product_attention(q, k, k * 0.5, is_causal=True, enable_gqa=True).sum()
    run(A(), X(2, 6, 16), train=True)
elif name == "cpu_bf16_reductions_cpu":
    def f(x, y):
        return (x.sum(1), x.mean(0), x.var(1), x.amax(1), torch.logsumexp(x, 1), x.cumsum(1), (x * y).sum(), x.norm(dim=1), x.argmax(1), x.softmax(0))
    run(f, X(7, 33, dt=torch.bfloat16), X(7, 33, dt=torch.bfloat16))
elif name == "cuda_bool_int8_ops":
    def f(a, b, m):
        s = (a.to(torch.int16) * b).to(torch.int8)
        return s, (a > b) ^ m, a.clamp(-5, 5).abs(), torch.where(m, a, b).sum(dtype=torch.int32), (a.float() / 127).round().to(torch.int8), m.any(1), m.all(0), (~m).sum()
    run(f, torch.randint(-128, 128, (6, 9), dtype=torch.int8, device=dev), torch.randint(-128, 128, (6, 9), dtype=torch.int8, device=dev), torch.rand(6, 9, device=dev) > 0.5)
elif name == "cpu_dynamic_true_train":
    class D(nn.Module):
        def __init__(s):
            super().__init__(); s.l = nn.Linear(8, 8); s.bn = nn.BatchNorm1d(8)
        def forward(s, x):
            h = s.bn(s.l(x).transpose(1, 2)).transpose(1, 2)
            return F.softmax(h, 1) * x.shape[1]
    run(D(), X(3, 5, 8), train=True, dynamic=True)
