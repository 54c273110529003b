/* Parametric pointwise activations: LeakyRelu Elu Selu Celu HardSigmoid HardSwish Softplus
 * Softsign Gelu Mish ThresholdedRelu Shrink, flatrt::Silu (x sigmoid(x), made by the fusion pass
 * from Sigmoid + Mul), and PRelu (slope broadcast to X).
 *
 * Formulas, attribute defaults and NaN rules: simd_act.h (FRT_ACTP_*). Every op: out = X's shape
 * and dtype. Dtypes: float32 (typed loops; AVX2/AVX-512 variants picked at select from the
 * frt_actp_variant table, kernel names end in the tier), float64 and float16 (computed in double,
 * stored back rounded to nearest even); Shrink also takes every integer dtype (result rounded
 * toward zero as C casts, like the reference's astype). Bad attributes (Celu alpha 0, Gelu
 * approximate other than none/tanh) fail at load.
 *
 * PRelu: slope is broadcast to X (numpy rules; the broadcast shape must be X's shape), same
 * dtype. Float32 runs per row of X's last dim: a LeakyRelu row with one slope when the slope's
 * last dim is 1, an elementwise row otherwise; the row's slope offset comes from strides.
 *
 * This file also owns the variant table of simd_act.h (LogSoftmax rows, used by activation.c).
 * Float kernels may run in place (FRT_K_INPLACE); float32 pointwise kernels split tensors of
 * >= 32K elements over the thread pool.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dtype_util.h"
#include "op.h"
#include "x86/simd_act.h"
#include "x86/simd_elementwise.h"

/* ---- portable loops ------------------------------------------------------------------------ */

/* The double version of every kind: the float64/float16 path and the reference of the float32
 * loops (same branch structure). */
static double actp_d(int kind, double x, const float *prm) {
    const double a = prm[0], b = prm[1];
    switch (kind) {
    case FRT_ACTP_LEAKY: return x < 0 ? a * x : x;
    case FRT_ACTP_ELU: return x < 0 ? a * expm1(x) : x;
    case FRT_ACTP_SELU: return x <= 0 ? b * a * expm1(x) : b * x;
    case FRT_ACTP_CELU: return x < 0 ? a * expm1(x / a) : x;
    case FRT_ACTP_HARDSIGMOID: {
        double v = a * x + b;
        v = v > 1 ? 1 : v;
        return v < 0 ? 0 : v;
    }
    case FRT_ACTP_HARDSWISH: {
        double v = x / 6.0 + 0.5;
        v = v > 1 ? 1 : v;
        return x * (v < 0 ? 0 : v);
    }
    case FRT_ACTP_SOFTPLUS: return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
    case FRT_ACTP_SOFTSIGN: return x / (1 + fabs(x));
    case FRT_ACTP_GELU: return 0.5 * x * erfc(-x * 0.70710678118654752440);
    case FRT_ACTP_GELU_TANH: {
        double u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
        return x / (1 + exp(-2 * u));
    }
    case FRT_ACTP_MISH: return x * tanh(log1p(exp(x)));
    case FRT_ACTP_THRESHOLDED: return x <= a ? 0 : x;
    case FRT_ACTP_SHRINK: return x < -a ? x + b : x > a ? x - b : 0;
    case FRT_ACTP_SILU: return x / (1 + exp(-x));
    }
    return x;
}

static void actp_f32_c(int kind, const float *x, float *y, size_t n, const float *prm) {
    const float a = prm[0], b = prm[1];
    switch (kind) {
    case FRT_ACTP_LEAKY:
        for (size_t i = 0; i < n; i++) y[i] = x[i] < 0.0f ? a * x[i] : x[i];
        return;
    case FRT_ACTP_ELU:
        for (size_t i = 0; i < n; i++) y[i] = x[i] < 0.0f ? a * expm1f(x[i]) : x[i];
        return;
    case FRT_ACTP_SELU:
        for (size_t i = 0; i < n; i++) y[i] = x[i] <= 0.0f ? b * a * expm1f(x[i]) : b * x[i];
        return;
    case FRT_ACTP_CELU:
        for (size_t i = 0; i < n; i++) y[i] = x[i] < 0.0f ? a * expm1f(x[i] / a) : x[i];
        return;
    case FRT_ACTP_HARDSIGMOID:
    case FRT_ACTP_HARDSWISH: {
        const bool sw = kind == FRT_ACTP_HARDSWISH;
        const float sa = sw ? 1.0f / 6.0f : a, sb = sw ? 0.5f : b;
        for (size_t i = 0; i < n; i++) {
            float v = sa * x[i] + sb;
            v = v > 1.0f ? 1.0f : v;
            v = v < 0.0f ? 0.0f : v;
            y[i] = sw ? x[i] * v : v;
        }
        return;
    }
    case FRT_ACTP_SOFTPLUS:
        for (size_t i = 0; i < n; i++)
            y[i] = x[i] > 0.0f ? x[i] + log1pf(expf(-x[i])) : log1pf(expf(x[i]));
        return;
    case FRT_ACTP_SOFTSIGN:
        for (size_t i = 0; i < n; i++) y[i] = x[i] / (1.0f + fabsf(x[i]));
        return;
    case FRT_ACTP_GELU:
        for (size_t i = 0; i < n; i++) y[i] = 0.5f * x[i] * erfcf(-x[i] * 0.70710678f);
        return;
    case FRT_ACTP_GELU_TANH:
        for (size_t i = 0; i < n; i++) {
            float u = 0.7978845608f * (x[i] + 0.044715f * x[i] * x[i] * x[i]);
            y[i] = x[i] / (1.0f + expf(-2.0f * u));
        }
        return;
    case FRT_ACTP_MISH:
        for (size_t i = 0; i < n; i++) y[i] = x[i] * tanhf(log1pf(expf(x[i])));
        return;
    case FRT_ACTP_THRESHOLDED:
        for (size_t i = 0; i < n; i++) y[i] = x[i] <= a ? 0.0f : x[i];
        return;
    case FRT_ACTP_SHRINK:
        for (size_t i = 0; i < n; i++)
            y[i] = x[i] < -a ? x[i] + b : x[i] > a ? x[i] - b : 0.0f;
        return;
    case FRT_ACTP_SILU:
        for (size_t i = 0; i < n; i++) y[i] = x[i] / (1.0f + expf(-x[i]));
        return;
    }
}

static void logsoftmax_rows_f32_c(const float *x, float *y, size_t rows, size_t len) {
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * len;
        float *yr = y + r * len;
        float m = xr[0], sum = 0.0f;
        for (size_t i = 1; i < len; i++) m = xr[i] > m ? xr[i] : m;
        for (size_t i = 0; i < len; i++) sum += expf(xr[i] - m);
        const float ls = logf(sum);
        for (size_t i = 0; i < len; i++) yr[i] = (xr[i] - m) - ls;
    }
}

static void actp_rows_f32_c(int kind, float *y, size_t ldy, size_t m, size_t n, const float *bias,
                            const float *res, size_t ldr, const float *prm) {
    for (size_t r = 0; r < m; r++) {
        float *yr = y + r * ldy;
        if (bias)
            for (size_t i = 0; i < n; i++) yr[i] += bias[i];
        if (kind != FRT_ACTP_COUNT) actp_f32_c(kind, yr, yr, n, prm);
        if (res)
            for (size_t i = 0; i < n; i++) yr[i] += res[r * ldr + i];
    }
}

/* A selective build keeps the LogSoftmax rows only with the softmax family (activation.c) and
 * the bias rows only with transformer.c's FusedMatMul / Attention (the slot is NULL otherwise). */
#if FRT_OP_BUILT(Softmax) || FRT_OP_BUILT(LogSoftmax) || FRT_OP_BUILT(Hardmax) || \
    FRT_OP_BUILT(Attention)
#define LSM(f) f
#else
#define LSM(f) NULL
#endif
#if FRT_OP_BUILT(FusedMatMul) || FRT_OP_BUILT(Attention)
#define BROWS(f) f
#else
#define BROWS(f) NULL
#endif
static const frt_actp_variant actp_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512, "_avx512", frt_actp_f32_avx512, LSM(frt_logsoftmax_rows_f32_avx512),
     BROWS(frt_actp_rows_f32_avx512)},
#endif
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "_avx2", frt_actp_f32_avx2, LSM(frt_logsoftmax_rows_f32_avx2),
     BROWS(frt_actp_rows_f32_avx2)},
#endif
#endif
    {FRT_ISA_PORTABLE, "", actp_f32_c, LSM(logsoftmax_rows_f32_c), BROWS(actp_rows_f32_c)},
};

const frt_actp_variant *frt_actp_variant_get(frt_isa cap) {
    return FRT_PICK_VARIANT(actp_variants, cap);
}

/* ---- kernels ------------------------------------------------------------------------------- */

typedef struct actp_params {
    int kind;
    float prm[4];
    frt_actp_fn f;
    int64_t ndims;      /* PRelu: rank of X at select (strides are recomputed per run) */
} actp_params;

typedef struct actp_job {
    const actp_params *p;
    const float *x;
    float *y;
} actp_job;

static void actp_range(void *ctx, size_t lo, size_t hi) {
    const actp_job *j = ctx;
    j->p->f(j->p->kind, j->x + lo, j->y + lo, hi - lo, j->p->prm);
}

static frt_status k_actp_f32(const frt_step *s, frt_exec *x) {
    const actp_params *p = s->k.params;
    const frt_value *in = &x->values[s->in[0]];
    frt_value *out = &x->values[s->out[0]];
    actp_job j = {p, in->data, out->data};
    frt_ew_parallel(x->tp, (size_t)out->numel, 1, actp_range, &j);
    return FRT_OK;
}

/* float64 / float16 / integers (Shrink): element by element in double. */
static frt_status k_actp_generic(const frt_step *s, frt_exec *x) {
    const actp_params *p = s->k.params;
    const frt_value *in = &x->values[s->in[0]];
    frt_value *out = &x->values[s->out[0]];
    const int32_t dt = in->dtype;
    for (int64_t i = 0; i < out->numel; i++) {
        double v = actp_d(p->kind, frt_ld_f64(dt, in->data, i), p->prm);
        if (frt_dtype_is_int(dt)) v = trunc(v);
        frt_st_f64(dt, out->data, i, v);
    }
    return FRT_OK;
}

/* ---- infer / select ------------------------------------------------------------------------ */

static bool float_dtype(int32_t dt) { return frt_dtype_is_float(dt); }

static frt_status actp_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    const frt_value *a = c->in[0];
    const bool ints = strcmp(c->node->op_type, "Shrink") == 0;
    if (!float_dtype(a->dtype) && !(ints && frt_dtype_is_int(a->dtype)))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (%s)",
                           frt_dtype_name(a->dtype),
                           ints ? "float32, float64, float16, integers"
                                : "float32, float64, float16");
    frt_op_set_shape(c->out[0], a->dtype, a->rank, a->dims);
    return FRT_OK;
}

static const char *const kind_names[FRT_ACTP_COUNT] = {
    "leakyrelu", "elu",      "selu", "celu",      "hardsigmoid", "hardswish", "softplus",
    "softsign",  "gelu",     "gelu_tanh", "mish", "thresholdedrelu", "shrink",      "silu"};

static frt_status actp_select_kind(frt_op_ctx *c, frt_kernel *k, int kind, const float *prm) {
    actp_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    char *name = frt_arena_alloc(c->arena, 48, 1);
    if (!name) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->kind = kind;
    memcpy(p->prm, prm, sizeof p->prm);
    k->params = p;
    k->flags = FRT_K_INPLACE;
    k->name = name;
    if (c->in[0]->dtype == FRT_FLOAT32) {
        const frt_actp_variant *v = frt_actp_variant_get(c->isa);
        p->f = v->pointwise;
        snprintf(name, 48, "%s_f32%s", kind_names[kind], v->suffix);
        k->fn = k_actp_f32;
    } else {
        snprintf(name, 48, "%s_%s", kind_names[kind], frt_dtype_name(c->in[0]->dtype));
        k->fn = k_actp_generic;
    }
    return FRT_OK;
}

#define ACTP_SELECT(NAME, KIND, A, B)                                                           \
    static frt_status NAME(frt_op_ctx *c, frt_kernel *k) {                                      \
        const float prm[4] = {A, B, 0, 0};                                                      \
        return actp_select_kind(c, k, KIND, prm);                                               \
    }

ACTP_SELECT(leaky_select, FRT_ACTP_LEAKY, frt_attr_float(c->node, "alpha", 0.01f), 0)
ACTP_SELECT(elu_select, FRT_ACTP_ELU, frt_attr_float(c->node, "alpha", 1.0f), 0)
ACTP_SELECT(selu_select, FRT_ACTP_SELU, frt_attr_float(c->node, "alpha", 1.67326319217681884765625f),
            frt_attr_float(c->node, "gamma", 1.05070102214813232421875f))
ACTP_SELECT(hardsigmoid_select, FRT_ACTP_HARDSIGMOID, frt_attr_float(c->node, "alpha", 0.2f),
            frt_attr_float(c->node, "beta", 0.5f))
ACTP_SELECT(hardswish_select, FRT_ACTP_HARDSWISH, 0, 0)
ACTP_SELECT(softplus_select, FRT_ACTP_SOFTPLUS, 0, 0)
ACTP_SELECT(softsign_select, FRT_ACTP_SOFTSIGN, 0, 0)
ACTP_SELECT(mish_select, FRT_ACTP_MISH, 0, 0)
ACTP_SELECT(thresholded_select, FRT_ACTP_THRESHOLDED, frt_attr_float(c->node, "alpha", 1.0f), 0)
ACTP_SELECT(silu_select, FRT_ACTP_SILU, 0, 0)
ACTP_SELECT(shrink_select, FRT_ACTP_SHRINK, frt_attr_float(c->node, "lambd", 0.5f),
            frt_attr_float(c->node, "bias", 0.0f))

static frt_status celu_select(frt_op_ctx *c, frt_kernel *k) {
    const float prm[4] = {frt_attr_float(c->node, "alpha", 1.0f), 0, 0, 0};
    if (!(prm[0] != 0.0f) || !isfinite(prm[0]))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "alpha %g must be finite and nonzero",
                           (double)prm[0]);
    return actp_select_kind(c, k, FRT_ACTP_CELU, prm);
}

static frt_status gelu_select(frt_op_ctx *c, frt_kernel *k) {
    const char *ap = frt_attr_string(c->node, "approximate", "none");
    int kind;
    if (strcmp(ap, "none") == 0) kind = FRT_ACTP_GELU;
    else if (strcmp(ap, "tanh") == 0) kind = FRT_ACTP_GELU_TANH;
    else
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "approximate='%s' (expected none or tanh)", ap);
    const float prm[4] = {0};
    return actp_select_kind(c, k, kind, prm);
}

/* ---- PRelu --------------------------------------------------------------------------------- */

static frt_status prelu_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 2, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (!st) st = frt_op_check_input(c, 1, 0);
    if (st) return st;
    const frt_value *a = c->in[0], *s = c->in[1];
    if (!float_dtype(a->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (float32, float64, "
                           "float16)", frt_dtype_name(a->dtype));
    if (s->dtype != a->dtype)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "slope has dtype %s, X has %s",
                           frt_dtype_name(s->dtype), frt_dtype_name(a->dtype));
    if (a->rank >= 0 && s->rank >= 0) {
        if (s->rank > a->rank)
            return frt_op_fail(c, FRT_ERR_SHAPE, "slope has rank %d > X's rank %d", s->rank,
                               a->rank);
        for (int i = 0; i < s->rank; i++) {
            int64_t ds = s->dims[i], dx = a->dims[a->rank - s->rank + i];
            if (ds >= 0 && dx >= 0 && ds != 1 && ds != dx)
                return frt_op_fail(c, FRT_ERR_SHAPE,
                                   "slope dim %d (%lld) does not broadcast to X's (%lld)", i,
                                   (long long)ds, (long long)dx);
        }
    }
    frt_op_set_shape(c->out[0], a->dtype, a->rank, a->dims);
    return FRT_OK;
}

static frt_status k_prelu(const frt_step *s, frt_exec *x) {
    const frt_value *a = &x->values[s->in[0]], *sl = &x->values[s->in[1]];
    frt_value *out = &x->values[s->out[0]];
    const int r = a->rank;
    if (sl->rank > r)
        return frt_step_fail(s, FRT_ERR_SHAPE, "slope rank %d > X rank %d", sl->rank, r);
    int64_t sst[FRT_MAX_RANK], st = 1; /* slope strides aligned to X's dims, 0 where broadcast */
    for (int i = r - 1; i >= 0; i--) {
        int si = i - (r - sl->rank);
        int64_t d = si >= 0 ? sl->dims[si] : 1;
        if (d != 1 && d != a->dims[i])
            return frt_step_fail(s, FRT_ERR_SHAPE, "slope does not broadcast to X");
        sst[i] = d == 1 ? 0 : st;
        st *= d;
    }
    if (out->numel == 0) return FRT_OK;
    const int64_t len = r > 0 ? a->dims[r - 1] : 1, rows = out->numel / len;
    const bool vec = r > 0 && sst[r - 1] != 0;
    const int32_t dt = a->dtype;
    for (int64_t row = 0; row < rows; row++) {
        int64_t off = 0, rem = row;
        for (int i = r - 2; i >= 0; i--) {
            off += (rem % a->dims[i]) * sst[i];
            rem /= a->dims[i];
        }
        const int64_t base = row * len;
        if (dt == FRT_FLOAT32) {
            const float *xs = (const float *)a->data + base, *ss = (const float *)sl->data + off;
            float *ys = (float *)out->data + base;
            if (vec) {
                for (int64_t i = 0; i < len; i++) ys[i] = xs[i] < 0.0f ? ss[i] * xs[i] : xs[i];
            } else {
                const float prm[4] = {ss[0], 0, 0, 0};
                actp_f32_c(FRT_ACTP_LEAKY, xs, ys, (size_t)len, prm);
            }
        } else {
            for (int64_t i = 0; i < len; i++) {
                double v = frt_ld_f64(dt, a->data, base + i);
                double k = frt_ld_f64(dt, sl->data, off + (vec ? i : 0));
                frt_st_f64(dt, out->data, base + i, v < 0 ? k * v : v);
            }
        }
    }
    return FRT_OK;
}

static frt_status prelu_select(frt_op_ctx *c, frt_kernel *k) {
    k->fn = k_prelu;
    k->name = c->in[0]->dtype == FRT_FLOAT32 ? "prelu_f32" : "prelu_generic";
    k->flags = FRT_K_INPLACE;
    return FRT_OK;
}

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(activation_param, Celu, actp_infer, celu_select);
FRT_OP_IMPL(activation_param, Elu, actp_infer, elu_select);
FRT_OP_IMPL(activation_param, Gelu, actp_infer, gelu_select);
FRT_OP_IMPL(activation_param, HardSigmoid, actp_infer, hardsigmoid_select);
FRT_OP_IMPL(activation_param, HardSwish, actp_infer, hardswish_select);
FRT_OP_IMPL(activation_param, LeakyRelu, actp_infer, leaky_select);
FRT_OP_IMPL(activation_param, Mish, actp_infer, mish_select);
FRT_OP_IMPL(activation_param, PRelu, prelu_infer, prelu_select);
FRT_OP_IMPL(activation_param, Selu, actp_infer, selu_select);
FRT_OP_IMPL(activation_param, Shrink, actp_infer, shrink_select);
FRT_OP_IMPL(activation_param, Silu, actp_infer, silu_select);
FRT_OP_IMPL(activation_param, Softplus, actp_infer, softplus_select);
FRT_OP_IMPL(activation_param, Softsign, actp_infer, softsign_select);
FRT_OP_IMPL(activation_param, ThresholdedRelu, actp_infer, thresholded_select);
