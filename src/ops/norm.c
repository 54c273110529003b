/* BatchNormalization, inference mode (float32).
 *
 * X [N, C, S...] (rank >= 2), scale/B/mean/var [C]:
 *   Y = scale * (X - mean) / sqrt(var + epsilon) + B  ==  a[c] * X + b[c]
 * with a = scale / sqrt(var + eps), b = B - mean * a, precomputed at select (in double) when the
 * four parameters are constants (as they are after export), else computed per run in scratch.
 * training_mode = 1 (opset >= 14): batch statistics (bn_train_kernel), outputs Y and the optional
 * running_mean / running_var (momentum, default 0.9); not in place. spatial = 0 (opset < 9) and
 * the statistics outputs of inference mode or of opsets < 14 are FRT_ERR_UNSUPPORTED. A fused
 * activation (node->act) is applied to Y. In inference mode Y may alias X (in place).
 */
#include <math.h>
#include <string.h>

#include "op.h"
#include "util/threadpool.h"

typedef struct bn_params {
    float eps;
    float momentum; /* training mode */
    const float *ab; /* [2*C]: a then b, or NULL when computed per run */
    int64_t C;
    frt_act act;
} bn_params;

static frt_status bn_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 5, 5, 1, 5);
    if (st) return st;
    for (int i = 0; i < 5; i++)
        if ((st = frt_op_check_input(c, i, FRT_FLOAT32))) return st;
    const frt_value *x = c->in[0];
    char sx[128], sp[128];
    if (x->rank >= 0 && x->rank < 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "input %s must have rank >= 2 ([N, C, ...])",
                           frt_shape_str(x, sx, sizeof sx));
    int64_t C = x->rank >= 2 ? x->dims[1] : -1;
    static const char *pname[5] = {"X", "scale", "B", "mean", "var"};
    for (int i = 1; i < 5; i++) {
        const frt_value *p = c->in[i];
        if (p->rank < 0) continue;
        if (p->rank != 1 || (C >= 0 && p->dims[0] >= 0 && p->dims[0] != C))
            return frt_op_fail(c, FRT_ERR_SHAPE, "%s has shape %s, expected [%lld] (C of input %s)",
                               pname[i], frt_shape_str(p, sp, sizeof sp), (long long)C,
                               frt_shape_str(x, sx, sizeof sx));
    }
    frt_op_set_shape(c->out[0], FRT_FLOAT32, x->rank, x->dims);
    /* statistics outputs (training only): shaped [C] so inference can proceed to select */
    for (int i = 1; i < c->n_out; i++)
        if (c->out[i]) frt_op_set_shape(c->out[i], FRT_FLOAT32, 1, &C);
    return FRT_OK;
}

/* a[c] = scale / sqrt(var + eps), b[c] = B - mean * a */
static void bn_coeffs(int64_t C, float eps, const float *scale, const float *bias,
                      const float *mean, const float *var, float *ab) {
    for (int64_t i = 0; i < C; i++) {
        double a = (double)scale[i] / sqrt((double)var[i] + (double)eps);
        ab[i] = (float)a;
        ab[C + i] = (float)((double)bias[i] - (double)mean[i] * a);
    }
}

typedef struct bn_run {
    const float *X, *ab;
    float *Y;
    int64_t C, S, planes;
    frt_act act;
} bn_run;

static void bn_task(void *ctx, int64_t p0, int64_t p1) {
    const bn_run *r = ctx;
    const int64_t S = r->S;
    const int kind = r->act.kind;
    const float lo = kind == FRT_ACT_CLIP ? r->act.lo : 0.0f;
    const float hi = kind == FRT_ACT_CLIP ? r->act.hi : INFINITY;
    for (int64_t pl = p0; pl < p1; pl++) {
        int64_t ch = pl % r->C;
        const float a = r->ab[ch], b = r->ab[r->C + ch];
        const float *x = r->X + pl * S;
        float *y = r->Y + pl * S;
        int64_t i = 0;
        /* unrolled so the compiler's SLP vectorizer packs it */
        for (; i + 4 <= S; i += 4) {
            y[i] = a * x[i] + b;
            y[i + 1] = a * x[i + 1] + b;
            y[i + 2] = a * x[i + 2] + b;
            y[i + 3] = a * x[i + 3] + b;
        }
        for (; i < S; i++) y[i] = a * x[i] + b;
        if (kind != FRT_ACT_NONE)
            for (i = 0; i < S; i++) {
                float v = y[i];
                v = v < lo ? lo : v;
                y[i] = v > hi ? hi : v;
            }
    }
}

static size_t bn_scratch(const frt_step *s, const frt_value *values) {
    const bn_params *p = s->k.params;
    if (p->ab) return 0;
    const frt_value *x = &values[s->in[0]];
    return (size_t)(x->rank >= 2 ? x->dims[1] : 0) * 2 * sizeof(float) + 64;
}

static frt_status bn_kernel(const frt_step *s, frt_exec *x) {
    const bn_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]];
    const frt_value *yv = &x->values[s->out[0]];
    if (xv->rank < 2) return frt_step_fail(s, FRT_ERR_SHAPE, "input rank changed after inference");
    bn_run r;
    r.C = xv->dims[1];
    r.S = 1;
    for (int i = 2; i < xv->rank; i++) r.S *= xv->dims[i];
    r.planes = xv->dims[0] * r.C;
    r.X = xv->data;
    r.Y = yv->data;
    r.act = p->act;
    if (p->ab) {
        if (p->C != r.C)
            return frt_step_fail(s, FRT_ERR_SHAPE, "input has %lld channels, parameters have %lld",
                                 (long long)r.C, (long long)p->C);
        r.ab = p->ab;
    } else {
        for (int i = 1; i < 5; i++) {
            const frt_value *pv = &x->values[s->in[i]];
            if (pv->numel != r.C)
                return frt_step_fail(s, FRT_ERR_SHAPE,
                                     "parameter %d has %lld values for %lld channels", i,
                                     (long long)pv->numel, (long long)r.C);
        }
        float *ab = x->scratch;
        bn_coeffs(r.C, p->eps, x->values[s->in[1]].data, x->values[s->in[2]].data,
                  x->values[s->in[3]].data, x->values[s->in[4]].data, ab);
        r.ab = ab;
    }
    if (r.planes == 0 || r.S == 0) return FRT_OK;
    frt_parallel_ranges(x->tp, r.planes, (double)r.S * 8 * FRT_PAR_NS_PER_BYTE, bn_task, &r);
    return FRT_OK;
}

/* training_mode = 1: statistics of this batch. mean[c], var[c] (population) over N and S;
 * Y = scale * (X - mean) / sqrt(var + eps) + B; running_mean = input_mean * momentum +
 * mean * (1 - momentum), running_var likewise (outputs 1 and 2 when present). */
static frt_status bn_train_kernel(const frt_step *s, frt_exec *x) {
    const bn_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]];
    const frt_value *yv = &x->values[s->out[0]];
    if (xv->rank < 2) return frt_step_fail(s, FRT_ERR_SHAPE, "input rank changed after inference");
    const int64_t N = xv->dims[0], C = xv->dims[1];
    int64_t S = 1;
    for (int i = 2; i < xv->rank; i++) S *= xv->dims[i];
    for (int i = 1; i < 5; i++)
        if (x->values[s->in[i]].numel != C)
            return frt_step_fail(s, FRT_ERR_SHAPE, "parameter %d has %lld values for %lld channels",
                                 i, (long long)x->values[s->in[i]].numel, (long long)C);
    const float *X = xv->data, *sc = x->values[s->in[1]].data, *B = x->values[s->in[2]].data;
    const float *im = x->values[s->in[3]].data, *ivar = x->values[s->in[4]].data;
    float *Y = yv->data;
    float *rm = s->n_out > 1 && s->out[1] >= 0 ? x->values[s->out[1]].data : NULL;
    float *rv = s->n_out > 2 && s->out[2] >= 0 ? x->values[s->out[2]].data : NULL;
    const double cnt = (double)(N * S);
    for (int64_t ch = 0; ch < C; ch++) {
        double m = 0, v = 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < S; i++) m += X[(n * C + ch) * S + i];
        m = cnt > 0 ? m / cnt : 0;
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < S; i++) {
                double d = X[(n * C + ch) * S + i] - m;
                v += d * d;
            }
        v = cnt > 0 ? v / cnt : 0;
        const double a = (double)sc[ch] / sqrt(v + (double)p->eps), b = (double)B[ch] - m * a;
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < S; i++) {
                const int64_t at = (n * C + ch) * S + i;
                Y[at] = (float)(a * X[at] + b);
            }
        /* written after Y: outputs are distinct values, inputs 3/4 are read above */
        const double mo = p->momentum;
        const double nm = (double)im[ch] * mo + m * (1 - mo), nv = (double)ivar[ch] * mo + v * (1 - mo);
        if (rm) rm[ch] = (float)nm;
        if (rv) rv[ch] = (float)nv;
    }
    return FRT_OK;
}

static frt_status bn_select(frt_op_ctx *c, frt_kernel *k) {
    const frt_node *n = c->node;
    if (frt_attr_int(n, "training_mode", 0) != 0) {
        if (c->opset < 14)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "training_mode before opset 14");
        if (c->n_out > 3)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "more than 3 outputs in training mode");
        if (n->act.kind != FRT_ACT_NONE)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "fused activation in training mode");
        bn_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
        if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
        p->eps = frt_attr_float(n, "epsilon", 1e-5f);
        p->momentum = frt_attr_float(n, "momentum", 0.9f);
        if (!(p->eps >= 0.0f))
            return frt_op_fail(c, FRT_ERR_SHAPE, "epsilon %g must be >= 0", p->eps);
        k->params = p;
        k->fn = bn_train_kernel;
        k->name = "batchnorm_f32_training";
        return FRT_OK;
    }
    if (c->opset < 9 && frt_attr_int(n, "spatial", 1) == 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "spatial=0 is not supported");
    for (int i = 1; i < c->n_out; i++)
        if (n->out[i] >= 0)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED,
                               "output %d (training statistics) is not supported", i);
    const frt_act *act = &n->act;
    if (act->kind != FRT_ACT_NONE && act->kind != FRT_ACT_RELU && act->kind != FRT_ACT_CLIP)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unknown fused activation %d", (int)act->kind);
    float eps = frt_attr_float(n, "epsilon", 1e-5f);
    if (!(eps >= 0.0f))
        return frt_op_fail(c, FRT_ERR_SHAPE, "epsilon %g must be >= 0", eps);
    bn_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->eps = eps;
    p->act = *act;
    if (act->kind == FRT_ACT_RELU) {
        p->act.lo = 0.0f;
        p->act.hi = INFINITY;
    }
    int all_const = 1;
    for (int i = 1; i < 5; i++)
        if (!c->in[i]->data || c->in[i]->rank != 1) all_const = 0;
    int64_t C = c->in[1]->rank == 1 ? c->in[1]->dims[0] : -1;
    for (int i = 2; all_const && i < 5; i++)
        if (c->in[i]->dims[0] != C) all_const = 0;
    if (all_const && C >= 0) {
        float *ab = frt_arena_array(c->arena, (size_t)(2 * C + 1), sizeof(float));
        if (!ab) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
        bn_coeffs(C, eps, c->in[1]->data, c->in[2]->data, c->in[3]->data, c->in[4]->data, ab);
        p->ab = ab;
        p->C = C;
        k->name = "batchnorm_f32_folded";
    } else {
        k->name = "batchnorm_f32";
        k->scratch = bn_scratch;
    }
    k->fn = bn_kernel;
    k->params = p;
    k->flags = FRT_K_INPLACE;
    return FRT_OK;
}

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(norm, BatchNormalization, bn_infer, bn_select);
