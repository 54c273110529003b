/* Adagrad Adam Momentum: the optimizer update rules of domain ai.onnx.preview.training (opset 1).
 *
 * Inputs R (learning rate, float32/float64 scalar), T (update count, int64 scalar), then n tensors
 * per group: X (weights), G (gradients) and the optimizer state; outputs the updated tensors group
 * by group. Every tensor of one index i has X_i's shape and dtype (float32 or float64); each
 * element is computed in double and rounded once.
 *
 *   Adagrad(R, T, X.., G.., H..) -> X_new.., H_new..
 *       attrs decay_factor, epsilon, norm_coefficient (default 0)
 *       r = R / (1 + T * decay_factor); g = norm_coefficient * x + g
 *       h' = h + g^2;  x' = x - r * g / (sqrt(h') + epsilon)
 *   Adam(R, T, X.., G.., V.., H..) -> X_new.., V_new.., H_new..
 *       attrs alpha (0.9), beta (0.999), epsilon (0), norm_coefficient (0),
 *       norm_coefficient_post (0)
 *       g = norm_coefficient * x + g;  v' = alpha v + (1 - alpha) g;  h' = beta h + (1 - beta) g^2
 *       r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R
 *       x' = (1 - norm_coefficient_post) * (x - r * v' / (sqrt(h') + epsilon))
 *   Momentum(R, T, X.., G.., V..) -> X_new.., V_new..
 *       attrs alpha, beta, norm_coefficient (required), mode "standard" | "nesterov"
 *       g = norm_coefficient * x + g;  b = T > 0 ? beta : 1;  v' = alpha v + b g
 *       standard: x' = x - R v';  nesterov: x' = x - R (g + alpha v')
 */
#include <math.h>
#include <string.h>

#include "dtype_util.h"
#include "op.h"

enum { ADAGRAD, ADAM, MOMENTUM };
static const int n_groups[3] = {3, 4, 3};  /* input tensors per index (X, G, state...) */
static const int n_outs[3] = {2, 3, 2};    /* output tensors per index */

typedef struct train_params {
    int kind;
    int n;                /* number of tensors updated */
    double decay, eps, norm, norm_post, alpha, beta;
    bool nesterov;
} train_params;

static frt_status train_attrs(const frt_op_ctx *c, int kind, train_params *p) {
    memset(p, 0, sizeof *p);
    p->kind = kind;
    const frt_node *n = c->node;
    p->eps = frt_attr_float(n, "epsilon", 0.0f);
    p->norm = frt_attr_float(n, "norm_coefficient", 0.0f);
    if (kind == ADAGRAD) {
        p->decay = frt_attr_float(n, "decay_factor", 0.0f);
    } else if (kind == ADAM) {
        p->alpha = frt_attr_float(n, "alpha", 0.9f);
        p->beta = frt_attr_float(n, "beta", 0.999f);
        p->norm_post = frt_attr_float(n, "norm_coefficient_post", 0.0f);
    } else {
        static const char *const req[] = {"alpha", "beta", "norm_coefficient", "mode"};
        for (int i = 0; i < 4; i++)
            if (!frt_attr_find(n, req[i]))
                return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute '%s' is required", req[i]);
        p->alpha = frt_attr_float(n, "alpha", 0.0f);
        p->beta = frt_attr_float(n, "beta", 0.0f);
        const char *mode = frt_attr_string(n, "mode", "");
        if (strcmp(mode, "nesterov") == 0) p->nesterov = true;
        else if (strcmp(mode, "standard") != 0)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED,
                               "mode '%s' (expected 'standard' or 'nesterov')", mode);
    }
    return FRT_OK;
}

static frt_status train_infer(frt_op_ctx *c, int kind) {
    int g = n_groups[kind], no = n_outs[kind];
    if (c->n_in < 2 + g || (c->n_in - 2) % g != 0)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "expects 2 + %d*n inputs, has %d", g, c->n_in);
    int n = (c->n_in - 2) / g;
    if (c->n_out != no * n)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "expects %d outputs for %d inputs, has %d",
                           no * n, c->n_in, c->n_out);
    frt_status st;
    for (int i = 0; i < c->n_in; i++)
        if ((st = frt_op_check_input(c, i, 0))) return st;
    const frt_value *r = c->in[0], *t = c->in[1];
    if (r->dtype != FRT_FLOAT32 && r->dtype != FRT_FLOAT64)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unsupported: dtype %s for R",
                           frt_dtype_name(r->dtype));
    if (t->dtype != FRT_INT64)
        return frt_op_fail(c, FRT_ERR_SHAPE, "T has dtype %s, expected int64",
                           frt_dtype_name(t->dtype));
    if ((r->numel >= 0 && r->numel != 1) || (t->numel >= 0 && t->numel != 1))
        return frt_op_fail(c, FRT_ERR_SHAPE, "R and T must be scalars");
    train_params p;
    if ((st = train_attrs(c, kind, &p))) return st;
    for (int i = 0; i < n; i++) {
        const frt_value *x = c->in[2 + i];
        if (x->dtype != FRT_FLOAT32 && x->dtype != FRT_FLOAT64)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unsupported: dtype %s for X%d",
                               frt_dtype_name(x->dtype), i + 1);
        for (int k = 1; k < g; k++) {
            const frt_value *v = c->in[2 + k * n + i];
            bool same = v->dtype == x->dtype && v->rank == x->rank;
            for (int d = 0; same && d < x->rank; d++)
                same = v->dims[d] == x->dims[d] || v->dims[d] < 0 || x->dims[d] < 0;
            if (!same) {
                char a[128], b[128];
                return frt_op_fail(c, FRT_ERR_SHAPE, "input %d (%s %s) differs from X%d (%s %s)",
                                   2 + k * n + i, frt_dtype_name(v->dtype),
                                   frt_shape_str(v, a, sizeof a), i + 1,
                                   frt_dtype_name(x->dtype), frt_shape_str(x, b, sizeof b));
            }
        }
        for (int k = 0; k < no; k++) frt_op_set_shape(c->out[k * n + i], x->dtype, x->rank, x->dims);
    }
    return FRT_OK;
}

static frt_status k_train(const frt_step *s, frt_exec *x) {
    const train_params *p = s->k.params;
    int n = p->n;
    const frt_value *R = &x->values[s->in[0]], *T = &x->values[s->in[1]];
    double r = frt_ld_f64(R->dtype, R->data, 0);
    int64_t t = frt_ld_i64(T->dtype, T->data, 0);
    double scale = r;
    if (p->kind == ADAGRAD) scale = r / (1.0 + (double)t * p->decay);
    else if (p->kind == ADAM && t > 0)
        scale = r * sqrt(1.0 - pow(p->beta, (double)t)) / (1.0 - pow(p->alpha, (double)t));
    double beta_adj = p->kind == MOMENTUM && t <= 0 ? 1.0 : p->beta;
    for (int i = 0; i < n; i++) {
        const frt_value *X = &x->values[s->in[2 + i]], *G = &x->values[s->in[2 + n + i]];
        const frt_value *S1 = &x->values[s->in[2 + 2 * n + i]];
        const frt_value *S2 = p->kind == ADAM ? &x->values[s->in[2 + 3 * n + i]] : NULL;
        frt_value *XO = &x->values[s->out[i]], *O1 = &x->values[s->out[n + i]];
        frt_value *O2 = p->kind == ADAM ? &x->values[s->out[2 * n + i]] : NULL;
        int32_t dt = X->dtype;
        if (G->numel != X->numel || S1->numel != X->numel || XO->numel != X->numel ||
            (S2 && S2->numel != X->numel))
            return frt_step_fail(s, FRT_ERR_SHAPE, "tensors of index %d differ in size", i + 1);
        for (int64_t e = 0; e < X->numel; e++) {
            double xv = frt_ld_f64(dt, X->data, e), gv = frt_ld_f64(dt, G->data, e);
            double s1 = frt_ld_f64(dt, S1->data, e);
            double g = p->norm * xv + gv, xn, o1, o2 = 0;
            if (p->kind == ADAGRAD) {
                o1 = s1 + g * g;
                xn = xv - scale * g / (sqrt(o1) + p->eps);
            } else if (p->kind == ADAM) {
                double s2 = frt_ld_f64(dt, S2->data, e);
                o1 = p->alpha * s1 + (1.0 - p->alpha) * g;
                o2 = p->beta * s2 + (1.0 - p->beta) * g * g;
                xn = (1.0 - p->norm_post) * (xv - scale * o1 / (sqrt(o2) + p->eps));
            } else {
                o1 = p->alpha * s1 + beta_adj * g;
                xn = p->nesterov ? xv - r * (g + p->alpha * o1) : xv - r * o1;
            }
            /* outputs written after every input element e is read: in place is safe */
            frt_st_f64(dt, XO->data, e, xn);
            frt_st_f64(dt, O1->data, e, o1);
            if (O2) frt_st_f64(dt, O2->data, e, o2);
        }
    }
    return FRT_OK;
}

static frt_status train_select(frt_op_ctx *c, frt_kernel *k, int kind) {
    frt_status st = train_infer(c, kind);
    if (st) return st;
    train_params *p = frt_arena_alloc(c->arena, sizeof *p, 16);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    if ((st = train_attrs(c, kind, p))) return st;
    p->n = (c->n_in - 2) / n_groups[kind];
    static const char *const names[3] = {"adagrad", "adam", "momentum"};
    k->name = kind == MOMENTUM && p->nesterov ? "momentum_nesterov" : names[kind];
    k->fn = k_train;
    k->params = p;
    return FRT_OK;
}

#define TRAIN_OP(Name, KIND)                                                                     \
    static frt_status Name##_infer(frt_op_ctx *c) { return train_infer(c, KIND); }              \
    static frt_status Name##_select(frt_op_ctx *c, frt_kernel *k) {                              \
        return train_select(c, k, KIND);                                                         \
    }
TRAIN_OP(adagrad, ADAGRAD)
TRAIN_OP(adam, ADAM)
TRAIN_OP(momentum, MOMENTUM)

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(training, Adagrad, adagrad_infer, adagrad_select);
FRT_OP_IMPL(training, Adam, adam_infer, adam_select);
FRT_OP_IMPL(training, Momentum, momentum_infer, momentum_select);
