/* LayerNormalization InstanceNormalization MeanVarianceNormalization LpNormalization LRN.
 *
 * Dtypes: float32 (typed loops; LayerNormalization and InstanceNormalization rows vectorized,
 * AVX2/AVX-512 variants picked at select from the frt_norm_variant table, kernel names end in
 * the tier), float64 and float16 (computed in double, stored rounded). Y has X's shape and dtype.
 *
 * LayerNormalization (17): X, Scale, B (optional); axis (default -1, [-r, r)), epsilon (1e-5),
 *   stash_type (1: statistics in float32; float64 input with stash_type 1 still computes in
 *   double). Rows are X viewed as [prod(d[0..axis)), prod(d[axis..])]: mean, variance (two
 *   passes), Y = (X - mean) / sqrt(var + eps) * Scale + B. Scale and B have one value or the
 *   normalized shape's element count (broadcast along the rows). Optional outputs Mean and
 *   InvStdDev: shape d[0..axis) followed by 1s (rank r), dtype float32 when stash_type is 1,
 *   else X's.
 * InstanceNormalization: X [N, C, S...], scale [C], B [C], epsilon: each (n, c) plane
 *   standardized with its own mean and variance, then * scale[c] + B[c].
 * MeanVarianceNormalization (9, 13): axes (default [0, 2, 3]): (X - mean) / (sqrt(var) + 1e-9)
 *   with mean and population variance over the axes (the ONNX reference's formula).
 * LpNormalization: axis (default -1), p (1 or 2): X / ||X||_p along the axis; a zero norm gives 0.
 * GroupNormalization (18): X [N, C, ...], scale, bias, num_groups (required, divides C), epsilon:
 *   each (n, group of C / num_groups channels) standardized, then * scale + bias per channel:
 *   scale/bias [num_groups] (one value per group) before opset 21, [C] from 21.
 * LRN: X [N, C, ...], size (required, odd or even), alpha (1e-4), beta (0.75), bias (1):
 *   Y = X / (bias + alpha / size * sum of squares over channels
 *        [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta.
 * Bad attributes (axis out of range, p not 1/2, size < 1) fail at load; shapes that changed at
 * run time are checked again by the kernels.
 */
#include <math.h>
#include <string.h>

#include "dtype_util.h"
#include "op.h"
#include "x86/simd_elementwise.h"
#include "x86/simd_norm.h"

/* ---- portable row and variants ------------------------------------------------------------- */

static void norm_row_f32_c(const float *x, float *y, size_t len, const float *scale,
                           const float *bias, size_t st, float eps, float *stat) {
    float sum = 0.0f;
    for (size_t i = 0; i < len; i++) sum += x[i];
    const float mean = sum / (float)len;
    float ss = 0.0f;
    for (size_t i = 0; i < len; i++) ss += (x[i] - mean) * (x[i] - mean);
    const float inv = 1.0f / sqrtf(ss / (float)len + eps);
    stat[0] = mean;
    stat[1] = inv;
    for (size_t i = 0; i < len; i++)
        y[i] = (x[i] - mean) * inv * scale[i * st] + (bias ? bias[i * st] : 0.0f);
}

static const frt_norm_variant norm_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512, "_avx512", frt_norm_row_f32_avx512},
#endif
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "_avx2", frt_norm_row_f32_avx2},
#endif
#endif
    {FRT_ISA_PORTABLE, "", norm_row_f32_c},
};

const frt_norm_variant *frt_norm_variant_get(frt_isa cap) {
    return FRT_PICK_VARIANT(norm_variants, cap);
}

/* The same in double for float64/float16 (any dtype through frt_ld_f64/frt_st_f64); scale and
 * bias read at index i * st (bias may be NULL). */
static void norm_row_generic(int32_t dt, const void *x, void *y, int64_t base, int64_t len,
                             const void *scale, const void *bias, int64_t soff, int64_t st,
                             double eps, double *stat) {
    double sum = 0, ss = 0;
    for (int64_t i = 0; i < len; i++) sum += frt_ld_f64(dt, x, base + i);
    const double mean = sum / (double)len;
    for (int64_t i = 0; i < len; i++) {
        double d = frt_ld_f64(dt, x, base + i) - mean;
        ss += d * d;
    }
    const double inv = 1.0 / sqrt(ss / (double)len + eps);
    stat[0] = mean;
    stat[1] = inv;
    for (int64_t i = 0; i < len; i++) {
        double v = (frt_ld_f64(dt, x, base + i) - mean) * inv * frt_ld_f64(dt, scale, soff + i * st);
        if (bias) v += frt_ld_f64(dt, bias, soff + i * st);
        frt_st_f64(dt, y, base + i, v);
    }
}

static bool float_dt(int32_t dt) { return frt_dtype_is_float(dt); }

/* ---- LayerNormalization -------------------------------------------------------------------- */

typedef struct ln_params {
    int64_t axis;
    float eps;
    frt_norm_row_fn row;
} ln_params;

static frt_status ln_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 3, 1, 3);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (!st) st = frt_op_check_input(c, 1, 0);
    if (st) return st;
    const frt_value *x = c->in[0];
    if (!float_dt(x->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (float32, float64, "
                           "float16)", frt_dtype_name(x->dtype));
    for (int i = 1; i < c->n_in; i++)
        if (c->in[i] && c->in[i]->dtype != x->dtype)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "input %d has dtype %s, X has %s", i,
                               frt_dtype_name(c->in[i]->dtype), frt_dtype_name(x->dtype));
    int64_t axis = frt_attr_int(c->node, "axis", -1), stash = frt_attr_int(c->node, "stash_type", 1);
    frt_op_set_shape(c->out[0], x->dtype, x->rank, x->dims);
    if (x->rank < 0) {
        for (int i = 1; i < c->n_out; i++)
            if (c->out[i]) frt_op_set_shape(c->out[i], stash == 1 ? FRT_FLOAT32 : x->dtype, -1, NULL);
        return FRT_OK;
    }
    int ax = frt_norm_axis(axis, x->rank);
    if (ax < 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d",
                           (long long)axis, x->rank);
    int64_t L = 1;
    for (int i = ax; i < x->rank; i++) L = (L < 0 || x->dims[i] < 0) ? -1 : L * x->dims[i];
    for (int i = 1; i < c->n_in; i++) {
        const frt_value *p = c->in[i];
        if (!p || p->numel < 0 || L < 0) continue;
        if (p->numel != 1 && p->numel != L)
            return frt_op_fail(c, FRT_ERR_SHAPE, "%s has %lld elements, expected 1 or %lld (the "
                               "normalized dims)", i == 1 ? "Scale" : "B", (long long)p->numel,
                               (long long)L);
    }
    int64_t sd[FRT_MAX_RANK];
    for (int i = 0; i < x->rank; i++) sd[i] = i < ax ? x->dims[i] : 1;
    for (int i = 1; i < c->n_out; i++)
        if (c->out[i]) frt_op_set_shape(c->out[i], stash == 1 ? FRT_FLOAT32 : x->dtype, x->rank, sd);
    return FRT_OK;
}

typedef struct ln_job {
    const ln_params *p;
    const float *x, *scale, *bias;
    float *y, *mean, *inv;
    size_t len, st;
} ln_job;

static void ln_range(void *ctx, size_t lo, size_t hi) {
    const ln_job *j = ctx;
    float stat[2];
    for (size_t r = lo; r < hi; r++) {
        j->p->row(j->x + r * j->len, j->y + r * j->len, j->len, j->scale, j->bias, j->st,
                  j->p->eps, stat);
        if (j->mean) j->mean[r] = stat[0];
        if (j->inv) j->inv[r] = stat[1];
    }
}

/* Room to expand Scale and B to the row length when only one of them is broadcast. */
static size_t ln_scratch(const frt_step *s, const frt_value *values) {
    const ln_params *p = s->k.params;
    const frt_value *x = &values[s->in[0]];
    int ax = frt_norm_axis(p->axis, x->rank);
    int64_t L = 1;
    for (int i = ax < 0 ? x->rank : ax; i < x->rank; i++) L *= x->dims[i];
    return (size_t)(L > 0 ? L : 1) * 2 * sizeof(float) + 64;
}

/* Output j of s (1: Mean, 2: InvStdDev) when present, else NULL. */
static frt_value *opt_out(const frt_step *s, frt_exec *x, int j) {
    return s->n_out > j && s->out[j] >= 0 ? &x->values[s->out[j]] : NULL;
}

static frt_status k_layernorm(const frt_step *s, frt_exec *x) {
    const ln_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *sv = &x->values[s->in[1]];
    const frt_value *bv = s->n_in > 2 && s->in[2] >= 0 ? &x->values[s->in[2]] : NULL;
    frt_value *yv = &x->values[s->out[0]], *mv = opt_out(s, x, 1), *iv = opt_out(s, x, 2);
    int ax = frt_norm_axis(p->axis, xv->rank);
    if (ax < 0) return frt_step_fail(s, FRT_ERR_SHAPE, "axis out of range");
    int64_t L = 1;
    for (int i = ax; i < xv->rank; i++) L *= xv->dims[i];
    if (xv->numel == 0) return FRT_OK;
    const int64_t rows = xv->numel / L;
    if ((sv->numel != 1 && sv->numel != L) || (bv && bv->numel != 1 && bv->numel != L))
        return frt_step_fail(s, FRT_ERR_SHAPE, "Scale/B do not match the %lld normalized elements",
                             (long long)L);
    const int32_t dt = xv->dtype;
    if (dt == FRT_FLOAT32) {
        ln_job j = {p, xv->data, sv->data, bv ? bv->data : NULL, yv->data,
                    mv && mv->dtype == FRT_FLOAT32 ? mv->data : NULL,
                    iv && iv->dtype == FRT_FLOAT32 ? iv->data : NULL, (size_t)L, 1};
        const bool sone = sv->numel == 1, bone = !bv || bv->numel == 1;
        if (sone && bone) {
            j.st = 0;
        } else if (sone || bone) { /* one of them broadcast: expand both into scratch */
            float *sc = x->scratch, *bi = sc + L;
            for (int64_t i = 0; i < L; i++) {
                sc[i] = ((const float *)sv->data)[sone ? 0 : i];
                bi[i] = bv ? ((const float *)bv->data)[bone ? 0 : i] : 0.0f;
            }
            j.scale = sc;
            j.bias = bi;
        }
        frt_ew_parallel(x->tp, (size_t)rows, (size_t)L, ln_range, &j);
        return FRT_OK;
    }
    for (int64_t r = 0; r < rows; r++) {
        double stat[2];
        const int64_t st = sv->numel == 1 ? 0 : 1;
        if (bv && (bv->numel == 1) != (st == 0)) { /* mixed: element by element */
            norm_row_generic(dt, xv->data, yv->data, r * L, L, sv->data, NULL, 0, st, p->eps, stat);
            for (int64_t i = 0; i < L; i++)
                frt_st_f64(dt, yv->data, r * L + i,
                           frt_ld_f64(dt, yv->data, r * L + i) +
                               frt_ld_f64(dt, bv->data, bv->numel == 1 ? 0 : i));
        } else {
            norm_row_generic(dt, xv->data, yv->data, r * L, L, sv->data, bv ? bv->data : NULL, 0,
                             st, p->eps, stat);
        }
        if (mv) frt_st_f64(mv->dtype, mv->data, r, stat[0]);
        if (iv) frt_st_f64(iv->dtype, iv->data, r, stat[1]);
    }
    return FRT_OK;
}

static frt_status ln_select(frt_op_ctx *c, frt_kernel *k) {
    ln_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->axis = frt_attr_int(c->node, "axis", -1);
    p->eps = frt_attr_float(c->node, "epsilon", 1e-5f);
    if (!(p->eps >= 0.0f)) return frt_op_fail(c, FRT_ERR_SHAPE, "epsilon %g must be >= 0", p->eps);
    int64_t stash = frt_attr_int(c->node, "stash_type", 1);
    if (c->in[0]->dtype == FRT_FLOAT32 && stash != 1)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "stash_type %lld with float32 input",
                           (long long)stash);
    k->params = p;
    k->fn = k_layernorm;
    k->scratch = ln_scratch;
    if (c->in[0]->dtype == FRT_FLOAT32) {
        static const char *const names[3] = {"layernorm_f32", "layernorm_f32_avx2",
                                             "layernorm_f32_avx512"};
        const frt_norm_variant *v = frt_norm_variant_get(c->isa);
        p->row = v->row;
        k->name = names[v->isa];
    } else {
        k->name = "layernorm_generic";
    }
    return FRT_OK;
}

/* ---- InstanceNormalization ----------------------------------------------------------------- */

static frt_status in_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 3, 3, 1, 1);
    for (int i = 0; !st && i < 3; i++) st = frt_op_check_input(c, i, 0);
    if (st) return st;
    const frt_value *x = c->in[0];
    if (!float_dt(x->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (float32, float64, "
                           "float16)", frt_dtype_name(x->dtype));
    if (x->rank >= 0 && x->rank < 3)
        return frt_op_fail(c, FRT_ERR_SHAPE, "input must have rank >= 3 ([N, C, D...]), has %d",
                           x->rank);
    int64_t C = x->rank >= 2 ? x->dims[1] : -1;
    for (int i = 1; i < 3; i++) {
        const frt_value *p = c->in[i];
        if (p->dtype != x->dtype)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "input %d has dtype %s, X has %s", i,
                               frt_dtype_name(p->dtype), frt_dtype_name(x->dtype));
        if (p->rank >= 0 && (p->rank != 1 || (C >= 0 && p->dims[0] >= 0 && p->dims[0] != C)))
            return frt_op_fail(c, FRT_ERR_SHAPE, "%s must have shape [C] = [%lld]",
                               i == 1 ? "scale" : "B", (long long)C);
    }
    frt_op_set_shape(c->out[0], x->dtype, x->rank, x->dims);
    return FRT_OK;
}

typedef struct in_job {
    const ln_params *p;
    const float *x, *scale, *bias;
    float *y;
    size_t len, C;
} in_job;

static void in_range(void *ctx, size_t lo, size_t hi) {
    const in_job *j = ctx;
    float stat[2];
    for (size_t r = lo; r < hi; r++) {
        size_t ch = r % j->C;
        j->p->row(j->x + r * j->len, j->y + r * j->len, j->len, j->scale + ch, j->bias + ch, 0,
                  j->p->eps, stat);
    }
}

static frt_status k_instnorm(const frt_step *s, frt_exec *x) {
    const ln_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *sv = &x->values[s->in[1]],
                    *bv = &x->values[s->in[2]];
    frt_value *yv = &x->values[s->out[0]];
    if (xv->rank < 3) return frt_step_fail(s, FRT_ERR_SHAPE, "input rank < 3");
    const int64_t C = xv->dims[1];
    if (sv->numel != C || bv->numel != C)
        return frt_step_fail(s, FRT_ERR_SHAPE, "scale/B have %lld/%lld values for %lld channels",
                             (long long)sv->numel, (long long)bv->numel, (long long)C);
    if (xv->numel == 0) return FRT_OK;
    const int64_t planes = xv->dims[0] * C, S = xv->numel / planes;
    if (xv->dtype == FRT_FLOAT32) {
        in_job j = {p, xv->data, sv->data, bv->data, yv->data, (size_t)S, (size_t)C};
        frt_ew_parallel(x->tp, (size_t)planes, (size_t)S, in_range, &j);
        return FRT_OK;
    }
    for (int64_t r = 0; r < planes; r++) {
        double stat[2];
        norm_row_generic(xv->dtype, xv->data, yv->data, r * S, S, sv->data, bv->data, r % C, 0,
                         p->eps, stat);
    }
    return FRT_OK;
}

static frt_status in_select(frt_op_ctx *c, frt_kernel *k) {
    ln_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->eps = frt_attr_float(c->node, "epsilon", 1e-5f);
    if (!(p->eps >= 0.0f)) return frt_op_fail(c, FRT_ERR_SHAPE, "epsilon %g must be >= 0", p->eps);
    k->params = p;
    k->fn = k_instnorm;
    if (c->in[0]->dtype == FRT_FLOAT32) {
        static const char *const names[3] = {"instancenorm_f32", "instancenorm_f32_avx2",
                                             "instancenorm_f32_avx512"};
        const frt_norm_variant *v = frt_norm_variant_get(c->isa);
        p->row = v->row;
        k->name = names[v->isa];
    } else {
        k->name = "instancenorm_generic";
    }
    return FRT_OK;
}

/* ---- MeanVarianceNormalization ------------------------------------------------------------- */

typedef struct mvn_params {
    uint32_t axes; /* bit i: reduce over dim i */
} mvn_params;

static frt_status mvn_axes(frt_op_ctx *c, int rank, uint32_t *mask) {
    size_t n = 0;
    const int64_t *ax = frt_attr_ints(c->node, "axes", &n);
    static const int64_t dflt[3] = {0, 2, 3};
    if (!ax) {
        ax = dflt;
        n = 3;
    }
    *mask = 0;
    for (size_t i = 0; i < n; i++) {
        int a = frt_norm_axis(ax[i], rank);
        if (a < 0)
            return frt_op_fail(c, FRT_ERR_SHAPE, "axes[%zu] = %lld out of range for rank %d", i,
                               (long long)ax[i], rank);
        *mask |= 1u << a;
    }
    return FRT_OK;
}

static frt_status mvn_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    const frt_value *x = c->in[0];
    if (!float_dt(x->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (float32, float64, "
                           "float16)", frt_dtype_name(x->dtype));
    uint32_t m;
    if (x->rank >= 0 && (st = mvn_axes(c, x->rank, &m))) return st;
    frt_op_set_shape(c->out[0], x->dtype, x->rank, x->dims);
    return FRT_OK;
}

/* Index of element i's group (its coordinates on the kept dims, row-major). */
static int64_t mvn_group(const frt_value *v, uint32_t axes, int64_t i) {
    int64_t g = 0, mul = 1;
    for (int d = v->rank - 1; d >= 0; d--) {
        int64_t c = i % v->dims[d];
        i /= v->dims[d];
        if (!(axes >> d & 1)) {
            g += c * mul;
            mul *= v->dims[d];
        }
    }
    return g;
}

static size_t mvn_scratch(const frt_step *s, const frt_value *values) {
    const mvn_params *p = s->k.params;
    const frt_value *x = &values[s->in[0]];
    int64_t k = 1;
    for (int d = 0; d < x->rank; d++)
        if (!(p->axes >> d & 1)) k *= x->dims[d];
    return (size_t)(k > 0 ? k : 1) * 3 * sizeof(double) + 64;
}

static frt_status k_mvn(const frt_step *s, frt_exec *x) {
    const mvn_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]];
    frt_value *yv = &x->values[s->out[0]];
    if (p->axes >> xv->rank) return frt_step_fail(s, FRT_ERR_SHAPE, "axes out of range for rank");
    int64_t K = 1;
    for (int d = 0; d < xv->rank; d++)
        if (!(p->axes >> d & 1)) K *= xv->dims[d];
    if (xv->numel == 0) return FRT_OK;
    const int64_t cnt = xv->numel / K;
    double *mean = x->scratch, *var = mean + K;
    memset(mean, 0, (size_t)K * 2 * sizeof(double));
    const int32_t dt = xv->dtype;
    for (int64_t i = 0; i < xv->numel; i++) mean[mvn_group(xv, p->axes, i)] += frt_ld_f64(dt, xv->data, i);
    for (int64_t g = 0; g < K; g++) mean[g] /= (double)cnt;
    for (int64_t i = 0; i < xv->numel; i++) {
        int64_t g = mvn_group(xv, p->axes, i);
        double d = frt_ld_f64(dt, xv->data, i) - mean[g];
        var[g] += d * d;
    }
    for (int64_t g = 0; g < K; g++) var[g] = sqrt(var[g] / (double)cnt) + 1e-9;
    for (int64_t i = 0; i < xv->numel; i++) {
        int64_t g = mvn_group(xv, p->axes, i);
        frt_st_f64(dt, yv->data, i, (frt_ld_f64(dt, xv->data, i) - mean[g]) / var[g]);
    }
    return FRT_OK;
}

static frt_status mvn_select(frt_op_ctx *c, frt_kernel *k) {
    mvn_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    /* axes are resolved against the run-time rank: keep the select-time mask when known */
    int rank = c->in[0]->rank >= 0 ? c->in[0]->rank : FRT_MAX_RANK;
    frt_status st = mvn_axes(c, rank, &p->axes);
    if (st) return st;
    if (c->in[0]->rank < 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "input rank unknown at load");
    k->params = p;
    k->fn = k_mvn;
    k->scratch = mvn_scratch;
    k->name = "mvn_generic";
    return FRT_OK;
}

/* ---- LpNormalization ----------------------------------------------------------------------- */

typedef struct lp_params {
    int64_t axis;
    int p;
} lp_params;

static frt_status lp_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    const frt_value *x = c->in[0];
    if (!float_dt(x->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (float32, float64, "
                           "float16)", frt_dtype_name(x->dtype));
    int64_t axis = frt_attr_int(c->node, "axis", -1), pp = frt_attr_int(c->node, "p", 2);
    if (pp != 1 && pp != 2)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "p = %lld (1 or 2)", (long long)pp);
    if (x->rank >= 0 && frt_norm_axis(axis, x->rank) < 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d",
                           (long long)axis, x->rank);
    frt_op_set_shape(c->out[0], x->dtype, x->rank, x->dims);
    return FRT_OK;
}

static frt_status k_lpnorm(const frt_step *s, frt_exec *x) {
    const lp_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]];
    frt_value *yv = &x->values[s->out[0]];
    int ax = frt_norm_axis(p->axis, xv->rank);
    if (ax < 0) return frt_step_fail(s, FRT_ERR_SHAPE, "axis out of range");
    int64_t outer = 1, A = xv->dims[ax], inner = 1;
    for (int i = 0; i < ax; i++) outer *= xv->dims[i];
    for (int i = ax + 1; i < xv->rank; i++) inner *= xv->dims[i];
    const int32_t dt = xv->dtype;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const int64_t b = o * A * inner + i;
            double n = 0;
            for (int64_t k = 0; k < A; k++) {
                double v = frt_ld_f64(dt, xv->data, b + k * inner);
                n += p->p == 1 ? fabs(v) : v * v;
            }
            if (p->p == 2) n = sqrt(n);
            for (int64_t k = 0; k < A; k++)
                frt_st_f64(dt, yv->data, b + k * inner,
                           n == 0 ? 0.0 : frt_ld_f64(dt, xv->data, b + k * inner) / n);
        }
    return FRT_OK;
}

static frt_status lp_select(frt_op_ctx *c, frt_kernel *k) {
    lp_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->axis = frt_attr_int(c->node, "axis", -1);
    p->p = (int)frt_attr_int(c->node, "p", 2);
    k->params = p;
    k->fn = k_lpnorm;
    k->name = "lpnorm_generic";
    return FRT_OK;
}

/* ---- LRN ----------------------------------------------------------------------------------- */

typedef struct lrn_params {
    int64_t size;
    float alpha, beta, bias;
} lrn_params;

static frt_status lrn_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    const frt_value *x = c->in[0];
    if (!float_dt(x->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (float32, float64, "
                           "float16)", frt_dtype_name(x->dtype));
    if (x->rank >= 0 && x->rank < 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "input must have rank >= 2 ([N, C, ...])");
    if (frt_attr_int(c->node, "size", 0) < 1)
        return frt_op_fail(c, FRT_ERR_SHAPE, "attribute size must be >= 1");
    frt_op_set_shape(c->out[0], x->dtype, x->rank, x->dims);
    return FRT_OK;
}

static frt_status k_lrn(const frt_step *s, frt_exec *x) {
    const lrn_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]];
    frt_value *yv = &x->values[s->out[0]];
    if (xv->rank < 2) return frt_step_fail(s, FRT_ERR_SHAPE, "input rank < 2");
    if (xv->numel == 0) return FRT_OK;
    const int64_t N = xv->dims[0], C = xv->dims[1], S = xv->numel / (N * C);
    const int64_t lo = (p->size - 1) / 2, hi = p->size - 1 - lo;
    const double k = (double)p->alpha / (double)p->size;
    const int32_t dt = xv->dtype;
    for (int64_t n = 0; n < N; n++)
        for (int64_t ch = 0; ch < C; ch++)
            for (int64_t i = 0; i < S; i++) {
                double sq = 0;
                int64_t c0 = ch - lo < 0 ? 0 : ch - lo, c1 = ch + hi >= C ? C - 1 : ch + hi;
                for (int64_t cc = c0; cc <= c1; cc++) {
                    double v = frt_ld_f64(dt, xv->data, (n * C + cc) * S + i);
                    sq += v * v;
                }
                const int64_t at = (n * C + ch) * S + i;
                frt_st_f64(dt, yv->data, at,
                           frt_ld_f64(dt, xv->data, at) / pow(p->bias + k * sq, p->beta));
            }
    return FRT_OK;
}

static frt_status lrn_select(frt_op_ctx *c, frt_kernel *k) {
    lrn_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->size = frt_attr_int(c->node, "size", 0);
    p->alpha = frt_attr_float(c->node, "alpha", 1e-4f);
    p->beta = frt_attr_float(c->node, "beta", 0.75f);
    p->bias = frt_attr_float(c->node, "bias", 1.0f);
    k->params = p;
    k->fn = k_lrn;
    k->name = "lrn_generic";
    return FRT_OK;
}

/* ---- GroupNormalization ------------------------------------------------------------------- */

typedef struct gn_params {
    float eps;
    int64_t groups;
    bool per_channel; /* opset >= 21: scale/bias [C]; before: [num_groups] */
    frt_norm_row_fn row;
} gn_params;

static frt_status gn_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 3, 3, 1, 1);
    for (int i = 0; !st && i < 3; i++) st = frt_op_check_input(c, i, 0);
    if (st) return st;
    const frt_value *x = c->in[0];
    if (!float_dt(x->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (float32, float64, "
                           "float16)", frt_dtype_name(x->dtype));
    int64_t G = frt_attr_int(c->node, "num_groups", 0);
    if (G < 1) return frt_op_fail(c, FRT_ERR_SHAPE, "num_groups must be given and >= 1");
    if (x->rank >= 0 && x->rank < 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "input must have rank >= 2 ([N, C, ...])");
    int64_t C = x->rank >= 2 ? x->dims[1] : -1;
    if (C >= 0 && C % G != 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "num_groups %lld does not divide %lld channels",
                           (long long)G, (long long)C);
    const int64_t want = c->opset >= 21 ? C : G;
    for (int i = 1; i < 3; i++) {
        const frt_value *p = c->in[i];
        if (p->dtype != x->dtype)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "input %d has dtype %s, X has %s", i,
                               frt_dtype_name(p->dtype), frt_dtype_name(x->dtype));
        if (p->rank >= 0 && (p->rank != 1 || (want >= 0 && p->dims[0] >= 0 && p->dims[0] != want)))
            return frt_op_fail(c, FRT_ERR_SHAPE, "%s must have shape [%lld] (%s)",
                               i == 1 ? "scale" : "bias", (long long)want,
                               c->opset >= 21 ? "channels" : "num_groups");
    }
    frt_op_set_shape(c->out[0], x->dtype, x->rank, x->dims);
    return FRT_OK;
}

static frt_status k_groupnorm(const frt_step *s, frt_exec *x) {
    const gn_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *sv = &x->values[s->in[1]],
                    *bv = &x->values[s->in[2]];
    frt_value *yv = &x->values[s->out[0]];
    if (xv->rank < 2) return frt_step_fail(s, FRT_ERR_SHAPE, "input rank < 2");
    const int64_t N = xv->dims[0], C = xv->dims[1], G = p->groups;
    if (C % G) return frt_step_fail(s, FRT_ERR_SHAPE, "num_groups does not divide the channels");
    const int64_t want = p->per_channel ? C : G;
    if (sv->numel != want || bv->numel != want)
        return frt_step_fail(s, FRT_ERR_SHAPE, "scale/bias have %lld/%lld values, expected %lld",
                             (long long)sv->numel, (long long)bv->numel, (long long)want);
    if (xv->numel == 0) return FRT_OK;
    const int64_t S = xv->numel / (N * C), cpg = C / G, len = cpg * S;
    const int32_t dt = xv->dtype;
    static const float one = 1.0f;
    for (int64_t n = 0; n < N; n++)
        for (int64_t g = 0; g < G; g++) {
            const int64_t base = (n * G + g) * len;
            double mean, inv;
            if (dt == FRT_FLOAT32) { /* standardize the group, then the affine per channel */
                float stat[2];
                p->row((const float *)xv->data + base, (float *)yv->data + base, (size_t)len, &one,
                       NULL, 0, p->eps, stat);
                for (int64_t k = 0; k < cpg; k++) {
                    const int64_t ch = g * cpg + k, pi = p->per_channel ? ch : g;
                    const float a = ((const float *)sv->data)[pi], b = ((const float *)bv->data)[pi];
                    float *y = (float *)yv->data + base + k * S;
                    for (int64_t i = 0; i < S; i++) y[i] = y[i] * a + b;
                }
                continue;
            }
            double sum = 0, ss = 0;
            for (int64_t i = 0; i < len; i++) sum += frt_ld_f64(dt, xv->data, base + i);
            mean = sum / (double)len;
            for (int64_t i = 0; i < len; i++) {
                double d = frt_ld_f64(dt, xv->data, base + i) - mean;
                ss += d * d;
            }
            inv = 1.0 / sqrt(ss / (double)len + p->eps);
            for (int64_t k = 0; k < cpg; k++) {
                const int64_t pi = p->per_channel ? g * cpg + k : g;
                const double a = frt_ld_f64(dt, sv->data, pi), b = frt_ld_f64(dt, bv->data, pi);
                for (int64_t i = 0; i < S; i++) {
                    const int64_t at = base + k * S + i;
                    frt_st_f64(dt, yv->data, at, (frt_ld_f64(dt, xv->data, at) - mean) * inv * a + b);
                }
            }
        }
    return FRT_OK;
}

static frt_status gn_select(frt_op_ctx *c, frt_kernel *k) {
    gn_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->eps = frt_attr_float(c->node, "epsilon", 1e-5f);
    p->groups = frt_attr_int(c->node, "num_groups", 0);
    p->per_channel = c->opset >= 21;
    if (!(p->eps >= 0.0f)) return frt_op_fail(c, FRT_ERR_SHAPE, "epsilon %g must be >= 0", p->eps);
    k->params = p;
    k->fn = k_groupnorm;
    if (c->in[0]->dtype == FRT_FLOAT32) {
        static const char *const names[3] = {"groupnorm_f32", "groupnorm_f32_avx2",
                                             "groupnorm_f32_avx512"};
        const frt_norm_variant *v = frt_norm_variant_get(c->isa);
        p->row = v->row;
        k->name = names[v->isa];
    } else {
        k->name = "groupnorm_generic";
    }
    return FRT_OK;
}

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(normalization, GroupNormalization, gn_infer, gn_select);
FRT_OP_IMPL(normalization, InstanceNormalization, in_infer, in_select);
FRT_OP_IMPL(normalization, LayerNormalization, ln_infer, ln_select);
FRT_OP_IMPL(normalization, LpNormalization, lp_infer, lp_select);
FRT_OP_IMPL(normalization, LRN, lrn_infer, lrn_select);
FRT_OP_IMPL(normalization, MeanVarianceNormalization, mvn_infer, mvn_select);
