/* codegen_conv.c — convolutions in the generated C (see codegen_conv.h): the oneDNN helpers a
 * module with a convolution carries and the call per extern buffer.
 *   mi_conv      extern_kernels.convolution: the tensors described as they lie (dims and
 *                strides), oneDNN choosing its own formats (format_tag_any, as ATen's mkldnn
 *                path does) with reorders into and out of them; transposed convolution is
 *                oneDNN's deconvolution, output_padding past the padding (which oneDNN cannot
 *                express) leaves the last rows to the bias.
 *   mi_conv_bwd  the FallbackKernel aten.convolution_backward (Inductor falls back to ATen, whose
 *                CPU kernel is oneDNN's): backward data and backward weights primitives on the
 *                tensors as they lie, grad_bias summed directly.
 * Primitives and their buffers are kept per call site and rebuilt only when a shape changes;
 * module unload frees them. When oneDNN refuses a configuration the call returns nonzero and
 * the module runs the node's reference through the fallback callback instead. */
#include "codegen/codegen_conv.h"

#include <stdio.h>
#include <string.h>

#ifdef HAVE_DNNL
const char cg_conv_src[] =
    "static int mi_conv_status;   /* the last oneDNN status (1 + dnnl_status_t) of a refused call */\n"
    "/* convolution through oneDNN (the module prelude text) */\n"
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
    "/* dims d with strides s dense in channels-last order (N, spatial..., C: nhwc / ndhwc / nwc) */\n"
    "static int mi_conv_nspc(int n, const dnnl_dims_t d, const dnnl_dims_t s) {\n"
    "    if (s[1] != 1 && d[1] != 1) return 0;\n"
    "    int64_t ext = d[1];\n"
    "    for (int i = n - 1; i >= 2; i--) { if (d[i] != 1 && s[i] != ext) return 0; ext *= d[i]; }\n"
    "    return d[0] == 1 || s[0] == ext;\n"
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
    "        /* channels-last input and output (Inductor's layout optimization): the primitive runs on\n"
    "           them as they lie, as ATen's mkldnn convolution does for channels_last tensors (ideep\n"
    "           keeps nhwc activations; only the weights go to the primitive's format): no reorder of\n"
    "           x in and y out on every call */\n"
    "        if (mi_conv_nspc(n, dx, sx) && mi_conv_nspc(n, dy, sy)) { ax = c->xmd; ay = c->ymd; }\n"
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
    "\n";
const char cg_conv_bwd_src[] =
    "/* convolution_backward through oneDNN: plain (strided) layouts, no reorders */\n"
    "typedef struct MiConvBwdSite {\n"
    "    int ready, registered;\n"
    "    int64_t key[96]; int nkey;\n"
    "    dnnl_primitive_t data, weights;        /* backward data (dy, w -> dx), backward weights (x, dy -> dw) */\n"
    "    dnnl_memory_desc_t xmd, dxmd, dymd, wmd, dwmd, sdmd, swmd;\n"
    "    void *sd, *sw;                          /* scratchpads */\n"
    "    struct MiConvBwdSite *next;\n"
    "} MiConvBwdSite;\n"
    "static MiConvBwdSite *mi_convb_sites;\n"
    "static void mi_convb_site_free(MiConvBwdSite *c) {\n"
    "    if (c->data) dnnl_primitive_destroy(c->data);\n"
    "    if (c->weights) dnnl_primitive_destroy(c->weights);\n"
    "    free(c->sd); free(c->sw);\n"
    "    MiConvBwdSite *next = c->next;\n"
    "    int reg = c->registered;\n"
    "    memset(c, 0, sizeof *c);\n"
    "    c->next = next;\n"
    "    c->registered = reg;\n"
    "}\n"
    "__attribute__((destructor)) static void mi_convb_fini(void) {\n"
    "    for (MiConvBwdSite *c = mi_convb_sites; c; c = c->next) mi_convb_site_free(c);\n"
    "}\n"
    "/* a primitive from its descriptor (a backward one: `hint` is the forward's), its scratchpad */\n"
    "static dnnl_status_t mi_dnnl_make(dnnl_primitive_t *p, dnnl_memory_desc_t *smd, const void *desc,\n"
    "                                  const_dnnl_primitive_attr_t attr, const_dnnl_primitive_desc_t hint) {\n"
    "    dnnl_primitive_desc_t pd;\n"
    "    dnnl_status_t st = dnnl_primitive_desc_create(&pd, desc, attr, mi_dnnl_eng, hint);\n"
    "    if (st != dnnl_success) return st;\n"
    "    *smd = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);\n"
    "    st = dnnl_primitive_create(p, pd);\n"
    "    dnnl_primitive_desc_destroy(pd);\n"
    "    return st;\n"
    "}\n"
    "/* (grad_input, grad_weight, grad_bias) of y = conv(x, w) (+ b) given dy, as mask asks for them;\n"
    "   returns 0, or 1 + the dnnl status (the caller then runs the reference) */\n"
    "static int mi_conv_bwd(MiConvBwdSite *c, int nd, int transposed, int64_t G, const int *mask,\n"
    "                       const float *dy, const int64_t *yd, const int64_t *ys, const float *x, const int64_t *xd, const int64_t *xs,\n"
    "                       const float *w, const int64_t *wd, const int64_t *ws, float *dx, const int64_t *dxs,\n"
    "                       float *dw, const int64_t *dws, float *db,\n"
    "                       const int64_t *stride, const int64_t *pad, const int64_t *opad, const int64_t *dil) {\n"
    "    if (mi_dnnl_init()) return 1;\n"
    "    int n = nd + 2;\n"
    "    int64_t key[96]; int nk = 0;\n"
    "    key[nk++] = nd; key[nk++] = transposed; key[nk++] = G; key[nk++] = mask[0]; key[nk++] = mask[1];\n"
    "    for (int i = 0; i < n; i++) { key[nk++] = xd[i]; key[nk++] = xs[i]; key[nk++] = wd[i]; key[nk++] = ws[i]; key[nk++] = yd[i]; key[nk++] = ys[i];\n"
    "                                  key[nk++] = mask[0] ? dxs[i] : 0; key[nk++] = mask[1] ? dws[i] : 0; }\n"
    "    for (int i = 0; i < nd; i++) { key[nk++] = stride[i]; key[nk++] = pad[i]; key[nk++] = opad[i]; key[nk++] = dil[i]; }\n"
    "    if ((mask[0] || mask[1]) && (!c->ready || c->nkey != nk || memcmp(c->key, key, sizeof(int64_t) * nk))) {\n"
    "        if (!c->registered) { c->next = mi_convb_sites; mi_convb_sites = c; c->registered = 1; }\n"
    "        mi_convb_site_free(c);\n"
    "        dnnl_dims_t dx_, sx, sdx, dy_, sy, dw_, sw, sdw, st, dl, pl, pr;\n"
    "        int wn = G > 1 ? n + 1 : n;\n"
    "        for (int i = 0; i < n; i++) { dx_[i] = xd[i]; sx[i] = xs[i]; sdx[i] = mask[0] ? dxs[i] : xs[i]; dy_[i] = yd[i]; sy[i] = ys[i]; }\n"
    "        mi_unit_strides(n, dx_, sx); mi_unit_strides(n, dx_, sdx); mi_unit_strides(n, dy_, sy);\n"
    "        int64_t oc = transposed ? wd[1] * G : wd[0], ic = transposed ? wd[0] : wd[1] * G;\n"
    "        int k = 0;\n"
    "        const int64_t *wss[2] = {ws, mask[1] ? dws : ws};\n"
    "        for (int t = 0; t < 2; t++) {\n"
    "            dnnl_dims_t *dd = &dw_, *ss = t ? &sdw : &sw;\n"
    "            const int64_t *s = wss[t];\n"
    "            k = 0;\n"
    "            if (G > 1) { (*dd)[k] = G; (*ss)[k++] = transposed ? (ic / G) * s[0] : (oc / G) * s[0]; }\n"
    "            (*dd)[k] = oc / G; (*ss)[k++] = transposed ? s[1] : s[0];\n"
    "            (*dd)[k] = ic / G; (*ss)[k++] = transposed ? s[0] : s[1];\n"
    "            for (int i = 0; i < nd; i++) { (*dd)[k] = wd[2 + i]; (*ss)[k++] = s[2 + i]; }\n"
    "            mi_unit_strides(wn, *dd, *ss);\n"
    "        }\n"
    "        for (int i = 0; i < nd; i++) {\n"
    "            st[i] = stride[i]; dl[i] = dil[i] - 1; pl[i] = pad[i];\n"
    "            pr[i] = transposed ? pad[i] - opad[i] : (yd[2 + i] - 1) * stride[i] + (wd[2 + i] - 1) * dil[i] + 1 - xd[2 + i] - pad[i];\n"
    "            if (pr[i] < 0 && transposed) { dy_[2 + i] += pr[i]; pr[i] = 0; }   /* rows no input reaches: db only */\n"
    "            if (pr[i] < 0) pr[i] = 0;\n"
    "        }\n"
    "        MI_DNNL(dnnl_memory_desc_init_by_strides(&c->xmd, n, dx_, dnnl_f32, sx));\n"
    "        MI_DNNL(dnnl_memory_desc_init_by_strides(&c->dxmd, n, dx_, dnnl_f32, sdx));\n"
    "        MI_DNNL(dnnl_memory_desc_init_by_strides(&c->dymd, n, dy_, dnnl_f32, sy));\n"
    "        MI_DNNL(dnnl_memory_desc_init_by_strides(&c->wmd, wn, dw_, dnnl_f32, sw));\n"
    "        MI_DNNL(dnnl_memory_desc_init_by_strides(&c->dwmd, wn, dw_, dnnl_f32, sdw));\n"
    "        dnnl_primitive_attr_t attr;\n"
    "        MI_DNNL(dnnl_primitive_attr_create(&attr));\n"
    "        MI_DNNL(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user));\n"
    "        /* deconvolution descriptors are convolution ones (dnnl_deconvolution_desc_t) */\n"
    "        dnnl_convolution_desc_t f, bd, bw;\n"
    "        dnnl_primitive_desc_t hint;\n"
    "        if (transposed) {\n"
    "            MI_DNNL(dnnl_dilated_deconvolution_forward_desc_init(&f, dnnl_forward_training, dnnl_deconvolution_direct, &c->xmd, &c->wmd, NULL, &c->dymd, st, dl, pl, pr));\n"
    "            MI_DNNL(dnnl_dilated_deconvolution_backward_data_desc_init(&bd, dnnl_deconvolution_direct, &c->dxmd, &c->wmd, &c->dymd, st, dl, pl, pr));\n"
    "            MI_DNNL(dnnl_dilated_deconvolution_backward_weights_desc_init(&bw, dnnl_deconvolution_direct, &c->xmd, &c->dwmd, NULL, &c->dymd, st, dl, pl, pr));\n"
    "        } else {\n"
    "            MI_DNNL(dnnl_dilated_convolution_forward_desc_init(&f, dnnl_forward_training, dnnl_convolution_direct, &c->xmd, &c->wmd, NULL, &c->dymd, st, dl, pl, pr));\n"
    "            MI_DNNL(dnnl_dilated_convolution_backward_data_desc_init(&bd, dnnl_convolution_direct, &c->dxmd, &c->wmd, &c->dymd, st, dl, pl, pr));\n"
    "            MI_DNNL(dnnl_dilated_convolution_backward_weights_desc_init(&bw, dnnl_convolution_direct, &c->xmd, &c->dwmd, NULL, &c->dymd, st, dl, pl, pr));\n"
    "        }\n"
    "        MI_DNNL(dnnl_primitive_desc_create(&hint, &f, attr, mi_dnnl_eng, NULL));\n"
    "        if (mask[0]) MI_DNNL(mi_dnnl_make(&c->data, &c->sdmd, &bd, attr, hint));\n"
    "        if (mask[1]) MI_DNNL(mi_dnnl_make(&c->weights, &c->swmd, &bw, attr, hint));\n"
    "        dnnl_primitive_desc_destroy(hint);\n"
    "        dnnl_primitive_attr_destroy(attr);\n"
    "        size_t a = dnnl_memory_desc_get_size(&c->sdmd), b2 = dnnl_memory_desc_get_size(&c->swmd);\n"
    "        c->sd = a ? malloc(a) : NULL;\n"
    "        c->sw = b2 ? malloc(b2) : NULL;\n"
    "        memcpy(c->key, key, sizeof(int64_t) * nk);\n"
    "        c->nkey = nk;\n"
    "        c->ready = 1;\n"
    "    }\n"
    "    dnnl_memory_t m[7] = {0};\n"
    "    if (mask[0]) {\n"
    "        MI_DNNL(dnnl_memory_create(&m[0], &c->dymd, mi_dnnl_eng, (void *)dy));\n"
    "        MI_DNNL(dnnl_memory_create(&m[1], &c->wmd, mi_dnnl_eng, (void *)w));\n"
    "        MI_DNNL(dnnl_memory_create(&m[2], &c->dxmd, mi_dnnl_eng, dx));\n"
    "        dnnl_exec_arg_t a[4] = {{DNNL_ARG_DIFF_DST, m[0]}, {DNNL_ARG_WEIGHTS, m[1]}, {DNNL_ARG_DIFF_SRC, m[2]}};\n"
    "        int na = 3;\n"
    "        if (c->sd) { MI_DNNL(dnnl_memory_create(&m[5], &c->sdmd, mi_dnnl_eng, c->sd)); a[na++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, m[5]}; }\n"
    "        MI_DNNL(dnnl_primitive_execute(c->data, mi_dnnl_st, na, a));\n"
    "    }\n"
    "    if (mask[1]) {\n"
    "        if (!m[0]) MI_DNNL(dnnl_memory_create(&m[0], &c->dymd, mi_dnnl_eng, (void *)dy));\n"
    "        MI_DNNL(dnnl_memory_create(&m[3], &c->xmd, mi_dnnl_eng, (void *)x));\n"
    "        MI_DNNL(dnnl_memory_create(&m[4], &c->dwmd, mi_dnnl_eng, dw));\n"
    "        dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, m[3]}, {DNNL_ARG_DIFF_DST, m[0]}, {DNNL_ARG_DIFF_WEIGHTS, m[4]}};\n"
    "        int na = 3;\n"
    "        if (c->sw) { MI_DNNL(dnnl_memory_create(&m[6], &c->swmd, mi_dnnl_eng, c->sw)); a[na++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, m[6]}; }\n"
    "        MI_DNNL(dnnl_primitive_execute(c->weights, mi_dnnl_st, na, a));\n"
    "    }\n"
    "    MI_DNNL(dnnl_stream_wait(mi_dnnl_st));\n"
    "    for (int i = 0; i < 7; i++) if (m[i]) dnnl_memory_destroy(m[i]);\n"
    "    if (mask[2]) {   /* grad_bias: dy summed over the batch and the spatial dims (all of dy) */\n"
    "        int64_t O = yd[1], per = 1;\n"
    "        for (int i = 2; i < n; i++) per *= yd[i];\n"
    "        for (int64_t o = 0; o < O; o++) {\n"
    "            double s = 0;\n"
    "            for (int64_t b = 0; b < yd[0]; b++)\n"
    "                for (int64_t e = 0; e < per; e++) {\n"
    "                    int64_t r = e, off = b * ys[0] + o * ys[1];\n"
    "                    for (int i = n - 1; i >= 2; i--) { off += (r % yd[i]) * ys[i]; r /= yd[i]; }\n"
    "                    s += dy[off];\n"
    "                }\n"
    "            db[o] = (float)s;\n"
    "        }\n"
    "    }\n"
    "    return 0;\n"
    "}\n"
    "\n";
#else
const char cg_conv_src[] = "";
const char cg_conv_bwd_src[] = "";
#endif

/* every tensor argument and result f32 (oneDNN path) */
static bool all_f32(const Buffer *b, const Buffer *const *outs, int nouts) {
    for (int i = 0; i < b->neargs; i++)
        if (b->eargs[i].buf->layout.dtype != DT_F32) return false;
    for (int k = 0; k < nouts; k++)
        if (outs[k] && outs[k]->layout.dtype != DT_F32) return false;
    return true;
}

bool cg_conv_uses_dnnl(const Buffer *b) {
#ifdef HAVE_DNNL
    if (b->kind != BUF_EXTERN || b->ext != EXT_CONV || !b->conv || b->neargs < 2 || b->neargs > 3) return false;
    const Buffer *o = b;
    if (!all_f32(b, &o, 1)) return false;
    for (int i = 0; i < b->neargs; i++)
        if (b->eargs[i].view.ndim != (i < 2 ? b->conv->nd + 2 : 1)) return false;
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
static void params(StrBuf *sb, const IrConv *c) {
    sb_put(sb, "        const int64_t st[] = ");
    int_list(sb, c->stride, c->nd);
    sb_put(sb, ", pd[] = ");
    int_list(sb, c->padding, c->nd);
    sb_put(sb, ", op[] = ");
    int_list(sb, c->output_padding, c->nd);
    sb_put(sb, ", dl[] = ");
    int_list(sb, c->dilation, c->nd);
    sb_put(sb, ";\n");
}
static void dims(StrBuf *sb, const char *d, const char *s, const Layout *l) {
    sb_printf(sb, "        const int64_t %s[] = ", d);
    ex_list(sb, l->size, l->ndim);
    sb_printf(sb, ", %s[] = ", s);
    ex_list(sb, l->stride, l->ndim);
    sb_put(sb, ";\n");
}
static void ptr(StrBuf *sb, const char *name, const Expr *off) {
    sb_printf(sb, "%s + ", name);
    sym_c_sb(off, sb);
}

void cg_emit_conv_call(StrBuf *sb, const Buffer *b) {
    const IrConv *c = b->conv;
    const ExternArg *x = &b->eargs[0], *w = &b->eargs[1], *bias = b->neargs > 2 ? &b->eargs[2] : NULL;
    sb_printf(sb, "    {   /* extern_kernels.convolution (oneDNN)%s */\n        static MiConvSite site;\n", c->transposed ? ", transposed" : "");
    dims(sb, "xd", "xs", &x->view);
    dims(sb, "wd", "ws", &w->view);
    dims(sb, "yd", "ys", &b->layout);
    params(sb, c);
    sb_printf(sb, "        mi_conv_status = mi_conv(&site, %d, %d, %lldLL, ", c->nd, c->transposed, (long long)c->groups);
    ptr(sb, x->buf->name, x->view.offset);
    sb_put(sb, ", xd, xs, ");
    ptr(sb, w->buf->name, w->view.offset);
    sb_put(sb, ", wd, ws, ");
    if (bias) ptr(sb, bias->buf->name, bias->view.offset);
    else sb_put(sb, "NULL");
    sb_printf(sb, ", %s, yd, ys, st, pd, op, dl);\n    }\n", b->name);
}

/* convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
 * transposed, output_padding, groups, output_mask): the convolution's parameters, read from
 * the node (plain ints only) */
static bool bwd_params(const Node *n, IrConv *c, int *mask) {
    if (n->nargs < 11) return false;
    int64_t v[8];
    const Value *a = n->args;
    const Value *w = &a[2];
    (void)w;
    struct { int pos; int64_t *out; } lists[4] = {{4, c->stride}, {5, c->padding}, {6, c->dilation}, {8, c->output_padding}};
    for (int k = 0; k < 4; k++) {
        const Value *l = &a[lists[k].pos];
        int cnt = 0;
        if (value_as_int(l, &v[0])) cnt = 1;
        else if (l->kind == V_LIST || l->kind == V_TUPLE) {
            if (l->list.n > 3) return false;
            for (int i = 0; i < l->list.n; i++)
                if (!value_as_int(&l->list.items[i], &v[cnt++])) return false;
        } else return false;
        if (cnt != c->nd && cnt != 1) return false;
        for (int i = 0; i < c->nd; i++) lists[k].out[i] = v[cnt == 1 ? 0 : i];
    }
    if (a[7].kind != V_BOOL || !value_as_int(&a[9], &c->groups) || c->groups < 1) return false;
    c->transposed = a[7].b;
    const Value *m = &a[10];
    if ((m->kind != V_LIST && m->kind != V_TUPLE) || m->list.n != 3) return false;
    for (int k = 0; k < 3; k++) {
        if (m->list.items[k].kind != V_BOOL) return false;
        mask[k] = m->list.items[k].b;
    }
    return true;
}

bool cg_conv_bwd_uses_dnnl(const Buffer *b) {
#ifdef HAVE_DNNL
    if (b->kind != BUF_EXTERN || b->ext != EXT_FALLBACK || !b->fb || b->extern_owner ||
        strcmp(b->fb->kernel, "aten.convolution_backward.default") != 0 || b->neargs != 3 || b->fb->nouts != 3) return false;
    IrConv c = {.nd = b->eargs[2].view.ndim - 2};
    int mask[3];
    if (c.nd < 1 || c.nd > 3 || !bwd_params(b->fb->node, &c, mask)) return false;
    if (!all_f32(b, (const Buffer *const *)b->fb->outs, 3)) return false;
    const Buffer *db = b->fb->outs[2];
    int64_t one;
    if (db && !(sym_is_int(db->layout.stride[0], &one) && one == 1)) return false;
    return true;
#else
    (void)b;
    return false;
#endif
}

void cg_emit_conv_bwd_call(StrBuf *sb, const Buffer *b) {
    IrConv c = {.nd = b->eargs[2].view.ndim - 2};
    int mask[3];
    bwd_params(b->fb->node, &c, mask);
    Buffer *const *o = b->fb->outs;
    for (int k = 0; k < 3; k++) mask[k] &= o[k] != NULL;   /* a result nobody reads is not computed */
    const ExternArg *dy = &b->eargs[0], *x = &b->eargs[1], *w = &b->eargs[2];
    sb_printf(sb, "    {   /* aten.convolution_backward (oneDNN)%s */\n        static MiConvBwdSite site;\n", c.transposed ? ", transposed" : "");
    dims(sb, "yd", "ys", &dy->view);
    dims(sb, "xd", "xs", &x->view);
    dims(sb, "wd", "ws", &w->view);
    dims(sb, "dxd", "dxs", o[0] ? &o[0]->layout : &x->view);
    dims(sb, "dwd", "dws", o[1] ? &o[1]->layout : &w->view);
    params(sb, &c);
    sb_printf(sb, "        const int mask[3] = {%d, %d, %d};\n", mask[0], mask[1], mask[2]);
    sb_printf(sb, "        mi_conv_status = mi_conv_bwd(&site, %d, %d, %lldLL, mask, ", c.nd, c.transposed, (long long)c.groups);
    ptr(sb, dy->buf->name, dy->view.offset);
    sb_put(sb, ", yd, ys, ");
    ptr(sb, x->buf->name, x->view.offset);
    sb_put(sb, ", xd, xs, ");
    ptr(sb, w->buf->name, w->view.offset);
    sb_put(sb, ", wd, ws, ");
    for (int k = 0; k < 3; k++) {
        if (o[k]) ptr(sb, o[k]->name, o[k]->layout.offset);
        else sb_put(sb, "NULL");
        sb_put(sb, k == 0 ? ", dxs, " : k == 1 ? ", dws, " : ", ");
    }
    sb_put(sb, "st, pd, op, dl);\n        (void)dxd; (void)dwd;\n    }\n");
}
