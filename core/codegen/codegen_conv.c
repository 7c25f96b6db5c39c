/* codegen_conv.c — extern_kernels.convolution in the generated C (see codegen_conv.h): the
 * oneDNN helper every module with a convolution carries, and the call per extern buffer. The
 * helper (mi_conv) describes the tensors as they lie (dims and strides), lets oneDNN choose its
 * own formats (format_tag_any, as ATen's mkldnn path does) and reorders into and out of them;
 * the primitive and its buffers are kept per call site and rebuilt only when a shape changes.
 * Transposed convolution is oneDNN's deconvolution; output_padding past the padding (which
 * oneDNN cannot express) leaves the last rows to the bias. */
#include "codegen/codegen_conv.h"

#include <stdio.h>

#ifdef HAVE_DNNL
const char cg_conv_src[] =
    "#define MI_CONV_FAILED 4000   /* call() returns this when oneDNN fails; mi_conv_status says why */\n"
    "int mi_conv_status;\n"
    "#include <oneapi/dnnl/dnnl.h>\n"
    "typedef struct MiConvSite {\n"
    "    int ready;\n"
    "    int64_t key[64]; int nkey;            /* what the primitive was made for */\n"
    "    dnnl_primitive_t prim, rx, rw, ry;    /* conv; reorders (NULL: none needed) */\n"
    "    dnnl_memory_desc_t xmd, wmd, ymd, bmd, pxmd, pwmd, pymd;\n"
    "    void *px, *pw, *py, *scratch;         /* buffers in the primitive's formats */\n"
    "    dnnl_memory_desc_t smd;\n"
    "    int crop; int64_t cov[8];             /* transposed: y rows past cov[] are bias only */\n"
    "    struct MiConvSite *next;              /* every site used, freed when the module unloads */\n"
    "    int registered;\n"
    "} MiConvSite;\n"
    "static MiConvSite *mi_conv_sites;\n"
    "static dnnl_engine_t mi_dnnl_eng;\n"
    "static dnnl_stream_t mi_dnnl_st;\n"
    "#define MI_DNNL(x) do { dnnl_status_t st_ = (x); if (st_ != dnnl_success) return (int)st_ + 1; } while (0)\n"
    "static int mi_dnnl_init(void) {\n"
    "    if (mi_dnnl_eng) return 0;\n"
    "    MI_DNNL(dnnl_engine_create(&mi_dnnl_eng, dnnl_cpu, 0));\n"
    "    MI_DNNL(dnnl_stream_create(&mi_dnnl_st, mi_dnnl_eng, dnnl_stream_default_flags));\n"
    "    return 0;\n"
    "}\n"
    "static void mi_conv_site_free(MiConvSite *c) {\n"
    "    dnnl_primitive_t p[4] = {c->prim, c->rx, c->rw, c->ry};\n"
    "    for (int i = 0; i < 4; i++) if (p[i]) dnnl_primitive_destroy(p[i]);\n"
    "    free(c->px); free(c->pw); free(c->py); free(c->scratch);\n"
    "    MiConvSite *next = c->next;\n"
    "    int reg = c->registered;\n"
    "    memset(c, 0, sizeof *c);\n"
    "    c->next = next;\n"
    "    c->registered = reg;\n"
    "}\n"
    "/* the module is unloaded (dlclose): primitives, buffers, stream and engine go */\n"
    "__attribute__((destructor)) static void mi_conv_fini(void) {\n"
    "    for (MiConvSite *c = mi_conv_sites; c; c = c->next) mi_conv_site_free(c);\n"
    "    if (mi_dnnl_st) dnnl_stream_destroy(mi_dnnl_st);\n"
    "    if (mi_dnnl_eng) dnnl_engine_destroy(mi_dnnl_eng);\n"
    "    mi_dnnl_st = NULL; mi_dnnl_eng = NULL;\n"
    "}\n"
    "/* a size-1 dim's stride says nothing (views give it 0): the extent of the rest, as a\n"
    "   contiguous tensor would have it */\n"
    "static void mi_unit_strides(int n, const dnnl_dims_t d, dnnl_dims_t s) {\n"
    "    int64_t ext = 1;\n"
    "    for (int i = 0; i < n; i++) if (d[i] != 1 && s[i] * d[i] > ext) ext = s[i] * d[i];\n"
    "    for (int i = n - 1; i >= 0; i--) if (d[i] == 1) s[i] = ext;\n"
    "}\n"
    "/* y = conv(x, w) + b over nd spatial dims (transposed: deconvolution), every tensor plain strided\n"
    "   (dims and strides as given); returns 0, or 1 + the dnnl status */\n"
    "static int mi_conv(MiConvSite *c, int nd, int transposed, int64_t G,\n"
    "                   const float *x, const int64_t *xd, const int64_t *xs,\n"
    "                   const float *w, const int64_t *wd, const int64_t *ws, const float *b,\n"
    "                   float *y, const int64_t *yd, const int64_t *ys,\n"
    "                   const int64_t *stride, const int64_t *pad, const int64_t *opad, const int64_t *dil) {\n"
    "    if (mi_dnnl_init()) return 1;\n"
    "    int n = nd + 2;\n"
    "    int64_t key[64]; int nk = 0;\n"
    "    key[nk++] = nd; key[nk++] = transposed; key[nk++] = G; key[nk++] = b != NULL;\n"
    "    for (int i = 0; i < n; i++) { key[nk++] = xd[i]; key[nk++] = xs[i]; key[nk++] = wd[i]; key[nk++] = ws[i]; key[nk++] = yd[i]; key[nk++] = ys[i]; }\n"
    "    for (int i = 0; i < nd; i++) { key[nk++] = stride[i]; key[nk++] = pad[i]; key[nk++] = opad[i]; key[nk++] = dil[i]; }\n"
    "    if (!c->ready || c->nkey != nk || memcmp(c->key, key, sizeof(int64_t) * nk)) {\n"
    "        /* (re)build: the user's plain layouts, the primitive's chosen ones, reorders between */\n"
    "        if (!c->registered) { c->next = mi_conv_sites; mi_conv_sites = c; c->registered = 1; }\n"
    "        mi_conv_site_free(c);   /* what an earlier (or a failed) build left */\n"
    "        dnnl_dims_t dx, sx, dw, sw, dy, sy, st, dl, pl, pr;\n"
    "        int wn = G > 1 ? n + 1 : n;\n"
    "        for (int i = 0; i < n; i++) { dx[i] = xd[i]; sx[i] = xs[i]; dy[i] = yd[i]; sy[i] = ys[i]; }\n"
    "        mi_unit_strides(n, dx, sx); mi_unit_strides(n, dy, sy);   /* oneDNN wants no 0 stride */\n"
    "        c->crop = 0;\n"
    "        /* weights: [G,] O/G, I/G, k...; PyTorch's are [O, I/G, k...] (transposed: [I, O/G, k...]) */\n"
    "        int64_t oc = transposed ? wd[1] * G : wd[0], ic = transposed ? wd[0] : wd[1] * G;\n"
    "        int64_t so = transposed ? ws[1] : ws[0], si = transposed ? ws[0] : ws[1];\n"
    "        int k = 0;\n"
    "        if (G > 1) { dw[k] = G; sw[k++] = transposed ? (ic / G) * ws[0] : (oc / G) * ws[0]; }\n"
    "        dw[k] = oc / G; sw[k++] = so;\n"
    "        dw[k] = ic / G; sw[k++] = si;\n"
    "        for (int i = 0; i < nd; i++) { dw[k] = wd[2 + i]; sw[k++] = ws[2 + i]; }\n"
    "        mi_unit_strides(wn, dw, sw);\n"
    "        for (int i = 0; i < nd; i++) {\n"
    "            st[i] = stride[i]; dl[i] = dil[i] - 1; pl[i] = pad[i];\n"
    "            pr[i] = transposed ? pad[i] - opad[i] : (yd[2 + i] - 1) * stride[i] + (wd[2 + i] - 1) * dil[i] + 1 - xd[2 + i] - pad[i];\n"
    "            /* output_padding past the padding: the last -pr rows get no input (bias only); the\n"
    "               primitive writes the rows before them (a view of y), the rest is filled after */\n"
    "            if (pr[i] < 0 && transposed) { dy[2 + i] += pr[i]; pr[i] = 0; c->crop = 1; }\n"
    "            /* stride not dividing the extent: the last input rows are unused (a right padding\n"
    "               anywhere in [pr, pr + stride - 1] describes the same output) */\n"
    "            if (pr[i] < 0) pr[i] = 0;\n"
    "            c->cov[i] = dy[2 + i];\n"
    "        }\n"
    "        MI_DNNL(dnnl_memory_desc_init_by_strides(&c->xmd, n, dx, dnnl_f32, sx));\n"
    "        MI_DNNL(dnnl_memory_desc_init_by_strides(&c->wmd, wn, dw, dnnl_f32, sw));\n"
    "        MI_DNNL(dnnl_memory_desc_init_by_strides(&c->ymd, n, dy, dnnl_f32, sy));\n"
    "        dnnl_dims_t db = {oc};\n"
    "        MI_DNNL(dnnl_memory_desc_init_by_tag(&c->bmd, 1, db, dnnl_f32, dnnl_a));\n"
    "        dnnl_memory_desc_t ax, aw, ay;\n"
    "        MI_DNNL(dnnl_memory_desc_init_by_tag(&ax, n, dx, dnnl_f32, dnnl_format_tag_any));\n"
    "        MI_DNNL(dnnl_memory_desc_init_by_tag(&aw, wn, dw, dnnl_f32, dnnl_format_tag_any));\n"
    "        MI_DNNL(dnnl_memory_desc_init_by_tag(&ay, n, dy, dnnl_f32, dnnl_format_tag_any));\n"
    "        dnnl_primitive_desc_t pd;\n"
    "        dnnl_primitive_attr_t attr;\n"
    "        MI_DNNL(dnnl_primitive_attr_create(&attr));\n"
    "        MI_DNNL(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user));\n"
    "        if (transposed) {\n"
    "            dnnl_deconvolution_desc_t d;\n"
    "            MI_DNNL(dnnl_dilated_deconvolution_forward_desc_init(&d, dnnl_forward_inference, dnnl_deconvolution_direct, &ax, &aw, b ? &c->bmd : NULL, &ay, st, dl, pl, pr));\n"
    "            MI_DNNL(dnnl_primitive_desc_create(&pd, &d, attr, mi_dnnl_eng, NULL));\n"
    "        } else {\n"
    "            dnnl_convolution_desc_t d;\n"
    "            MI_DNNL(dnnl_dilated_convolution_forward_desc_init(&d, dnnl_forward_inference, dnnl_convolution_auto, &ax, &aw, b ? &c->bmd : NULL, &ay, st, dl, pl, pr));\n"
    "            MI_DNNL(dnnl_primitive_desc_create(&pd, &d, attr, mi_dnnl_eng, NULL));\n"
    "        }\n"
    "        dnnl_primitive_attr_destroy(attr);\n"
    "        c->pxmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);\n"
    "        c->pwmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);\n"
    "        c->pymd = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);\n"
    "        c->smd = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);\n"
    "        MI_DNNL(dnnl_primitive_create(&c->prim, pd));\n"
    "        dnnl_primitive_desc_destroy(pd);\n"
    "        struct { const dnnl_memory_desc_t *from, *to; dnnl_primitive_t *r; void **buf; } ro[3] = {\n"
    "            {&c->xmd, &c->pxmd, &c->rx, &c->px}, {&c->wmd, &c->pwmd, &c->rw, &c->pw}, {&c->pymd, &c->ymd, &c->ry, &c->py}};\n"
    "        for (int i = 0; i < 3; i++) {\n"
    "            if (dnnl_memory_desc_equal(ro[i].from, ro[i].to)) continue;\n"
    "            dnnl_primitive_desc_t rpd;\n"
    "            MI_DNNL(dnnl_reorder_primitive_desc_create(&rpd, ro[i].from, mi_dnnl_eng, ro[i].to, mi_dnnl_eng, NULL));\n"
    "            MI_DNNL(dnnl_primitive_create(ro[i].r, rpd));\n"
    "            dnnl_primitive_desc_destroy(rpd);\n"
    "            *ro[i].buf = malloc(dnnl_memory_desc_get_size(i == 2 ? ro[i].from : ro[i].to) + 64);\n"
    "            if (!*ro[i].buf) return 1;\n"
    "        }\n"
    "        size_t ss = dnnl_memory_desc_get_size(&c->smd);\n"
    "        c->scratch = ss ? malloc(ss) : NULL;\n"
    "        memcpy(c->key, key, sizeof(int64_t) * nk);\n"
    "        c->nkey = nk;\n"
    "        c->ready = 1;\n"
    "    }\n"
    "    dnnl_memory_t mx, mw, my, mb = NULL, mpx = NULL, mpw = NULL, mpy = NULL, ms = NULL;\n"
    "    MI_DNNL(dnnl_memory_create(&mx, &c->xmd, mi_dnnl_eng, (void *)x));\n"
    "    MI_DNNL(dnnl_memory_create(&mw, &c->wmd, mi_dnnl_eng, (void *)w));\n"
    "    MI_DNNL(dnnl_memory_create(&my, &c->ymd, mi_dnnl_eng, y));\n"
    "    if (b) MI_DNNL(dnnl_memory_create(&mb, &c->bmd, mi_dnnl_eng, (void *)b));\n"
    "    if (c->rx) { MI_DNNL(dnnl_memory_create(&mpx, &c->pxmd, mi_dnnl_eng, c->px)); dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, mx}, {DNNL_ARG_TO, mpx}}; MI_DNNL(dnnl_primitive_execute(c->rx, mi_dnnl_st, 2, a)); }\n"
    "    if (c->rw) { MI_DNNL(dnnl_memory_create(&mpw, &c->pwmd, mi_dnnl_eng, c->pw)); dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, mw}, {DNNL_ARG_TO, mpw}}; MI_DNNL(dnnl_primitive_execute(c->rw, mi_dnnl_st, 2, a)); }\n"
    "    if (c->ry) MI_DNNL(dnnl_memory_create(&mpy, &c->pymd, mi_dnnl_eng, c->py));\n"
    "    if (c->scratch) MI_DNNL(dnnl_memory_create(&ms, &c->smd, mi_dnnl_eng, c->scratch));\n"
    "    dnnl_exec_arg_t a[5] = {{DNNL_ARG_SRC, mpx ? mpx : mx}, {DNNL_ARG_WEIGHTS, mpw ? mpw : mw}, {DNNL_ARG_DST, mpy ? mpy : my}};\n"
    "    int na = 3;\n"
    "    if (mb) a[na++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, mb};\n"
    "    if (ms) a[na++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, ms};\n"
    "    MI_DNNL(dnnl_primitive_execute(c->prim, mi_dnnl_st, na, a));\n"
    "    if (c->ry) { dnnl_exec_arg_t r[2] = {{DNNL_ARG_FROM, mpy}, {DNNL_ARG_TO, my}}; MI_DNNL(dnnl_primitive_execute(c->ry, mi_dnnl_st, 2, r)); }\n"
    "    MI_DNNL(dnnl_stream_wait(mi_dnnl_st));\n"
    "    if (c->crop) {   /* the rows no input reaches: bias (or 0) */\n"
    "        int64_t tot = 1;\n"
    "        for (int i = 0; i < n; i++) tot *= yd[i];\n"
    "        for (int64_t e = 0; e < tot; e++) {\n"
    "            int64_t r = e, off = 0, past = 0, o = 0;\n"
    "            for (int i = n - 1; i >= 0; i--) {\n"
    "                int64_t q = r % yd[i];\n"
    "                r /= yd[i];\n"
    "                off += q * ys[i];\n"
    "                if (i >= 2 && q >= c->cov[i - 2]) past = 1;\n"
    "                if (i == 1) o = q;\n"
    "            }\n"
    "            if (past) y[off] = b ? b[o] : 0.0f;\n"
    "        }\n"
    "    }\n"
    "    dnnl_memory_t all[8] = {mx, mw, my, mb, mpx, mpw, mpy, ms};\n"
    "    for (int i = 0; i < 8; i++) if (all[i]) dnnl_memory_destroy(all[i]);\n"
    "    return 0;\n"
    "}\n"
    "\n"
    "\n";
#else
const char cg_conv_src[] = "";
#endif

bool cg_conv_uses_dnnl(const Buffer *b) {
#ifdef HAVE_DNNL
    if (b->kind != BUF_EXTERN || b->ext != EXT_CONV || !b->conv || b->layout.dtype != DT_F32) return false;
    if (b->neargs < 2 || b->neargs > 3) return false;
    for (int i = 0; i < b->neargs; i++)
        if (b->eargs[i].buf->layout.dtype != DT_F32 || b->eargs[i].view.ndim != (i < 2 ? b->conv->nd + 2 : 1)) return false;
    if (b->neargs > 2) {   /* oneDNN takes the bias dense */
        int64_t one;
        const Layout *v = &b->eargs[2].view;
        if (!(sym_is_int(v->stride[0], &one) && one == 1) && !(sym_is_int(v->size[0], &one) && one == 1)) return false;
    }
    return b->layout.ndim == b->conv->nd + 2;
#else
    (void)b;
    return false;
#endif
}

/* "{a, b, c}" of n expressions */
static void ex_list(StrBuf *sb, Expr *const *e, int n) {
    sb_putc(sb, '{');
    for (int i = 0; i < n; i++) { if (i) sb_put(sb, ", "); sym_c_sb(e[i], sb); }
    sb_putc(sb, '}');
}
static void int_list(StrBuf *sb, const int64_t *v, int n) {
    sb_putc(sb, '{');
    for (int i = 0; i < n; i++) sb_printf(sb, "%s%lldLL", i ? ", " : "", (long long)v[i]);
    sb_putc(sb, '}');
}

void cg_emit_conv_call(StrBuf *sb, const Buffer *b, const char *cleanup) {
    const IrConv *c = b->conv;
    const ExternArg *x = &b->eargs[0], *w = &b->eargs[1], *bias = b->neargs > 2 ? &b->eargs[2] : NULL;
    int n = c->nd + 2;
    sb_printf(sb, "    {   /* extern_kernels.convolution (oneDNN)%s */\n", c->transposed ? ", transposed" : "");
    sb_put(sb, "        static MiConvSite site;\n        const int64_t xd[] = ");
    ex_list(sb, x->view.size, n);
    sb_put(sb, ", xs[] = ");
    ex_list(sb, x->view.stride, n);
    sb_put(sb, ";\n        const int64_t wd[] = ");
    ex_list(sb, w->view.size, n);
    sb_put(sb, ", ws[] = ");
    ex_list(sb, w->view.stride, n);
    sb_put(sb, ";\n        const int64_t yd[] = ");
    ex_list(sb, b->layout.size, n);
    sb_put(sb, ", ys[] = ");
    ex_list(sb, b->layout.stride, n);
    sb_put(sb, ";\n        const int64_t st[] = ");
    int_list(sb, c->stride, c->nd);
    sb_put(sb, ", pd[] = ");
    int_list(sb, c->padding, c->nd);
    sb_put(sb, ", op[] = ");
    int_list(sb, c->output_padding, c->nd);
    sb_put(sb, ", dl[] = ");
    int_list(sb, c->dilation, c->nd);
    sb_printf(sb, ";\n        int rc = mi_conv(&site, %d, %d, %lldLL, %s + ", c->nd, c->transposed, (long long)c->groups, x->buf->name);
    sym_c_sb(x->view.offset, sb);
    sb_printf(sb, ", xd, xs, %s + ", w->buf->name);
    sym_c_sb(w->view.offset, sb);
    sb_put(sb, ", wd, ws, ");
    if (bias) {
        sb_printf(sb, "%s + ", bias->buf->name);   /* a strided bias: oneDNN takes it dense */
        sym_c_sb(bias->view.offset, sb);
    } else sb_put(sb, "NULL");
    sb_printf(sb, ", %s, yd, ys, st, pd, op, dl);\n", b->name);
    sb_printf(sb, "        if (rc) { mi_conv_status = rc - 1;%s return MI_CONV_FAILED; }\n    }\n", cleanup);
}
