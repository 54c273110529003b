/* Losses: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss (opset 12+).
 *
 * NegativeLogLikelihoodLoss(input [N, C, d1..dk] float, target [N, d1..dk] int32/int64,
 *   weight [C] optional) -> loss. SoftmaxCrossEntropyLoss(scores [N, C, d1..dk], labels
 *   [N, d1..dk], weights [C] optional) -> loss, log_prob [N, C, d1..dk] optional: the same loss on
 *   log_prob = log(softmax(scores, axis 1)).
 *   Per element: l[n, d] = -input[n, target[n, d], d] * w[target[n, d]] (w = 1 without weights),
 *   and 0 with weight 0 where target == ignore_index (when the attribute is given).
 *   reduction: "none" -> loss shaped like target; "sum" -> scalar sum; "mean" (default) -> scalar
 *   sum(l) / sum(w) over the elements not ignored (NaN when that weight sum is 0).
 *   A target that is not ignored must be in [0, C): FRT_ERR_RUNTIME naming the value otherwise.
 *   Dtypes float32, float64, float16 (loss, weight and log_prob have the input's dtype); computed
 *   in double.
 */
#include <math.h>
#include <string.h>

#include "dtype_util.h"
#include "op.h"

enum { RED_NONE, RED_SUM, RED_MEAN };

typedef struct loss_params {
    int reduction;
    int has_ii;
    int64_t ii;
    int softmax; /* SoftmaxCrossEntropyLoss */
} loss_params;

static int parse_reduction(const frt_node *n) {
    const char *r = frt_attr_string(n, "reduction", "mean");
    if (strcmp(r, "none") == 0) return RED_NONE;
    if (strcmp(r, "sum") == 0) return RED_SUM;
    if (strcmp(r, "mean") == 0) return RED_MEAN;
    return -1;
}

static frt_status loss_infer(frt_op_ctx *c, int softmax) {
    frt_status st = frt_op_check_arity(c, 2, 3, 1, softmax ? 2 : 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (!st) st = frt_op_check_input(c, 1, 0);
    if (st) return st;
    const frt_value *x = c->in[0], *t = c->in[1], *w = c->n_in > 2 ? c->in[2] : NULL;
    int32_t dt = x->dtype;
    if (!frt_dtype_is_float(dt))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (float32, float64, "
                           "float16)", frt_dtype_name(dt));
    if (t->dtype != FRT_INT64 && t->dtype != FRT_INT32)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "target has dtype %s, expected int32 or int64",
                           frt_dtype_name(t->dtype));
    if (w && w->dtype != dt)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "weight has dtype %s, input has %s",
                           frt_dtype_name(w->dtype), frt_dtype_name(dt));
    int red = parse_reduction(c->node);
    if (red < 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "reduction '%s' (none, sum, mean)",
                           frt_attr_string(c->node, "reduction", ""));
    char sx[128], stt[128];
    if (x->rank >= 0 && x->rank < 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "input %s must have rank >= 2 ([N, C, ...])",
                           frt_shape_str(x, sx, sizeof sx));
    if (x->rank >= 0 && t->rank >= 0) {
        bool ok = t->rank == x->rank - 1;
        for (int i = 0; ok && i < t->rank; i++) {
            int64_t a = t->dims[i], b = x->dims[i == 0 ? 0 : i + 1];
            if (a >= 0 && b >= 0 && a != b) ok = false;
        }
        if (!ok)
            return frt_op_fail(c, FRT_ERR_SHAPE, "target %s does not match input %s ([N, d1..] of "
                               "[N, C, d1..])", frt_shape_str(t, stt, sizeof stt),
                               frt_shape_str(x, sx, sizeof sx));
    }
    if (w && w->rank >= 0 && x->rank >= 2 &&
        (w->rank != 1 || (w->dims[0] >= 0 && x->dims[1] >= 0 && w->dims[0] != x->dims[1])))
        return frt_op_fail(c, FRT_ERR_SHAPE, "weight %s must be [C] for input %s",
                           frt_shape_str(w, stt, sizeof stt), frt_shape_str(x, sx, sizeof sx));
    if (red == RED_NONE) frt_op_set_shape(c->out[0], dt, t->rank, t->dims);
    else frt_op_set_shape(c->out[0], dt, 0, NULL);
    if (softmax && c->n_out > 1 && c->out[1]) frt_op_set_shape(c->out[1], dt, x->rank, x->dims);
    return FRT_OK;
}

static frt_status loss_kernel(const frt_step *s, frt_exec *x) {
    const loss_params *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]], *T = &x->values[s->in[1]];
    const frt_value *W = s->n_in > 2 && s->in[2] >= 0 ? &x->values[s->in[2]] : NULL;
    frt_value *L = &x->values[s->out[0]];
    frt_value *LP = p->softmax && s->n_out > 1 && s->out[1] >= 0 ? &x->values[s->out[1]] : NULL;
    int32_t dt = X->dtype;
    if (X->rank < 2) return frt_step_fail(s, FRT_ERR_SHAPE, "input rank < 2");
    int64_t N = X->dims[0], C = X->dims[1], D = 1;
    for (int i = 2; i < X->rank; i++) D *= X->dims[i];
    if (T->numel != N * D) return frt_step_fail(s, FRT_ERR_SHAPE, "target size mismatch");
    if (W && W->numel != C) return frt_step_fail(s, FRT_ERR_SHAPE, "weight size mismatch");
    const void *xd = X->data;
    /* log_prob first (it is also the loss's input) */
    if (p->softmax)
        for (int64_t n = 0; n < N; n++)
            for (int64_t d = 0; d < D; d++) {
                int64_t base = n * C * D + d;
                double m = -INFINITY, sum = 0;
                for (int64_t ci = 0; ci < C; ci++) {
                    double v = frt_ld_f64(dt, xd, base + ci * D);
                    m = v > m || v != v ? v : m;
                }
                for (int64_t ci = 0; ci < C; ci++) sum += exp(frt_ld_f64(dt, xd, base + ci * D) - m);
                double lse = m + log(sum);
                if (LP)
                    for (int64_t ci = 0; ci < C; ci++)
                        frt_st_f64(dt, LP->data, base + ci * D,
                                   frt_ld_f64(dt, xd, base + ci * D) - lse);
            }
    double total = 0, wsum = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t d = 0; d < D; d++) {
            int64_t t = frt_value_get_int(T, n * D + d), o = n * D + d;
            double l = 0, w = 0;
            if (!(p->has_ii && t == p->ii)) {
                if (t < 0 || t >= C)
                    return frt_step_fail(s, FRT_ERR_RUNTIME,
                                         "target %lld at position %lld is not in [0, %lld)",
                                         (long long)t, (long long)o, (long long)C);
                w = W ? frt_ld_f64(dt, W->data, t) : 1.0;
                int64_t e = n * C * D + t * D + d;
                double lp;
                if (!p->softmax) lp = frt_ld_f64(dt, xd, e);
                else if (LP) lp = frt_ld_f64(dt, LP->data, e);
                else { /* log_softmax of element e without storing it */
                    int64_t base = n * C * D + d;
                    double m = -INFINITY, sum = 0;
                    for (int64_t ci = 0; ci < C; ci++) {
                        double v = frt_ld_f64(dt, xd, base + ci * D);
                        m = v > m || v != v ? v : m;
                    }
                    for (int64_t ci = 0; ci < C; ci++)
                        sum += exp(frt_ld_f64(dt, xd, base + ci * D) - m);
                    lp = frt_ld_f64(dt, xd, e) - m - log(sum);
                }
                l = -lp * w;
            }
            if (p->reduction == RED_NONE) frt_st_f64(dt, L->data, o, l);
            total += l;
            wsum += w;
        }
    if (p->reduction == RED_SUM) frt_st_f64(dt, L->data, 0, total);
    else if (p->reduction == RED_MEAN) frt_st_f64(dt, L->data, 0, total / wsum);
    return FRT_OK;
}

static frt_status loss_select(frt_op_ctx *c, frt_kernel *k, int softmax) {
    loss_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->reduction = parse_reduction(c->node);
    if (p->reduction < 0) return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unknown reduction");
    const frt_onnx_attr *ii = frt_attr_find(c->node, "ignore_index");
    p->has_ii = ii && ii->type == FRT_ATTR_INT;
    p->ii = p->has_ii ? ii->i : 0;
    p->softmax = softmax;
    k->name = softmax ? "softmax_cross_entropy_loss" : "nll_loss";
    k->fn = loss_kernel;
    k->params = p;
    return FRT_OK;
}

static frt_status nll_infer(frt_op_ctx *c) { return loss_infer(c, 0); }
static frt_status sce_infer(frt_op_ctx *c) { return loss_infer(c, 1); }
static frt_status nll_select(frt_op_ctx *c, frt_kernel *k) { return loss_select(c, k, 0); }
static frt_status sce_select(frt_op_ctx *c, frt_kernel *k) { return loss_select(c, k, 1); }
FRT_OP_IMPL(loss, NegativeLogLikelihoodLoss, nll_infer, nll_select);
FRT_OP_IMPL(loss, SoftmaxCrossEntropyLoss, sce_infer, sce_select);
