/* ops_eval.c — the scaffold every op kernel's eval runs in (the interpreter calls OpDef.eval,
 * core/ops/interp.c). An eval reads its arguments through a ShapeArgs made from the call, sizes
 * its results with the op's own shape function (so the interpreter and infer_meta agree), fills
 * fresh tensors and hands them back in an IValue. Those opening and closing steps live here once;
 * a kernel is the part in between: a body (ev_call) or a fill of ready results (ev_run,
 * ev_run_n). */
#include "ops/ops_impl.h"

#include <string.h>

/* The ShapeArgs of a runtime call: arguments read from its IValues, metas built in a scratch
 * arena of its own (freed by ev_end), sizes evaluated with the call's symbol bindings. */
void sa_from_call(ShapeArgs *sa, const OpCall *c) {
    memset(sa, 0, sizeof *sa);
    sa->ctx = c->ctx;
    sa->sym = c->ctx->sym;
    arena_init(&sa->own);
    sa->arena = &sa->own;
    sa->node = c->node;
    sa->graph = c->graph;
    sa->op = c->op;
    sa->args = c->args; sa->nargs = c->nargs;
    sa->kwargs = c->kwargs; sa->nkwargs = c->nkwargs;
    sa->argv = c->argv; sa->kwargv = c->kwargv;
    sa->syms = c->syms; sa->nsyms = c->nsyms;
    sa->call = c;
    sa->eval = true;
}

/* The end of an eval: the scratch arena of sa_from_call freed (the results live on, in tensors). */
void ev_end(ShapeArgs *sa) { arena_free(&sa->own); }

/* ev_call: run body(sa, out) in an eval's frame: sa made from the call (sa_from_call), its
 * scratch arena freed afterwards (ev_end) whatever the body returned. The trick: the frame owns
 * the ShapeArgs, so a body returns -1 right after sa_err and unwinds only what it made itself.
 * Example: sym_size_eval is ev_call(c, out, sym_size_body), which reads self and sets out to an
 * IV_INT. */
int ev_call(const OpCall *c, IValue *out, EvBody body) {
    ShapeArgs sa;
    sa_from_call(&sa, c);
    int rc = body(&sa, out);
    ev_end(&sa);
    return rc;
}

/* The results of an op sized by its shape function and allocated fresh (ev_new), `want` of
 * them (the shape function's count when want <= 0), then filled by one (a single result) or
 * many; on success out holds them (one tensor, or a tuple when there are several) and owns
 * them, else they are freed. An in-place op's one result is self itself. The trick: the
 * caller's fill never frees a result. */
static int ev_results(const OpCall *c, IValue *out, int want, EvFill one, EvFillN many) {
    ShapeArgs sa;
    TensorMeta m[OP_MAX_OUTS];
    Tensor *res[OP_MAX_OUTS] = {0};
    int n = 0, made = 0, rc = -1;
    sa_from_call(&sa, c);
    if (ev_shape(&sa, m, &n)) goto done;
    if (want > 0 && n > want) n = want;
    if (one && (c->op->flags & OPF_INPLACE)) {   /* aten.foo_ writes self and returns it */
        if (!(res[0] = tensor_ref(ev_tensor(sa_arg(&sa, 0, "self"))))) { sa_err(&sa, "argument 'self' is not a tensor"); goto done; }
        made = n = 1;
    }
    for (; made < n; made++)
        if (!(res[made] = ev_new(&sa, &m[made]))) goto done;
    if (one ? one(&sa, res[0]) : many(&sa, res, n)) goto done;
    if (n == 1) ev_out_tensor(out, res[0]);
    else ev_out_tuple(out, res, n);
    made = 0;
    rc = 0;
done:
    for (int k = 0; k < made; k++) tensor_unref(res[k]);
    ev_end(&sa);
    return rc;
}

/* ev_run: the eval of an op with one tensor result: its meta from the op's shape function, a
 * fresh tensor of that layout (ev_new: f64 in a float64 reference run), fill(sa, o) writes it,
 * and out returns it. For an in-place op (OPF_INPLACE, aten.foo_) o is self itself, as ATen's
 * in-place ops return self: a fill that starts from a copy of self tests o != self. The trick:
 * fill sees only a ready result and returns -1 after sa_err; freeing it on failure is done
 * here. Example: gather_eval is ev_run(c, out, gather_fill), and gather_fill copies x's
 * elements picked by index into o. */
int ev_run(const OpCall *c, IValue *out, EvFill fill) { return ev_results(c, out, 1, fill, NULL); }

/* ev_run_n: as ev_run for an op whose shape function gives n results: all n allocated, filled
 * by fill(sa, res, n), returned as a tuple (a lone tensor when n is 1). Example: frexp_eval is
 * ev_run_n(c, out, frexp_fill), which writes the mantissas to res[0] and exponents to res[1]. */
int ev_run_n(const OpCall *c, IValue *out, EvFillN fill) { return ev_results(c, out, 0, NULL, fill); }
