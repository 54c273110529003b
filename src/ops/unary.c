/* Unary math: Abs Neg Sign (numeric dtypes), Exp Log Sqrt Erf Reciprocal Floor Ceil Round Sin Cos
 * Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh (float16, float32, float64).
 *
 * out has the input's dtype and shape. Floats follow libm (IEEE special values: Log of a negative
 * number is NaN, Sqrt(-1) NaN, Reciprocal(0) inf, ...); Round is half to even; Sign is -1, 0 or
 * 1 (NaN stays NaN). Integers: Abs and Neg wrap (Abs(INT_MIN) = INT_MIN, as numpy); Neg is
 * defined on signed dtypes only; Sign of an unsigned value is 0 or 1. float16 is computed in
 * float32 (the float32 loops) and rounded back. Opsets 1-5 carry consumed_inputs, which is
 * ignored.
 *
 * Float32 Abs Neg Exp Log Sqrt Erf Reciprocal Floor Ceil Round use the tier's loops from the
 * frt_un_variant table (x86/simd_unary.h states their accuracy); kernels are named
 * "<op>_<dtype>[_avx2|_avx512]". Every kernel may run in place (FRT_K_INPLACE) and splits large
 * tensors over the thread pool.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dtype_util.h"
#include "op.h"
#include "x86/simd_unary.h"

/* ---- portable float32 loops (the reference twins of the SIMD loops) ------------------------- */

#define UN_F32(NAME, EXPR)                                                                       \
    static void NAME##_f32_c(const float *x, float *y, size_t n) {                               \
        for (size_t i = 0; i < n; i++) {                                                         \
            float v = x[i];                                                                      \
            y[i] = (EXPR);                                                                       \
        }                                                                                        \
    }
#define UN_F64(NAME, EXPR)                                                                       \
    static void NAME##_f64(const void *x_, void *y_, size_t n) {                                 \
        const double *x = x_;                                                                    \
        double *y = y_;                                                                          \
        for (size_t i = 0; i < n; i++) {                                                         \
            double v = x[i];                                                                     \
            y[i] = (EXPR);                                                                       \
        }                                                                                        \
    }
#define SIGN_OF(v) ((v) > 0 ? 1 : (v) < 0 ? -1 : (v))

/* X(Op, sym, dtypes, SIMD index or -1, float32 expr, float64 expr) */
enum { DT_FLOAT, DT_SIGNED, DT_ALL };
#define UNARY_OPS(X)                                                                             \
    X(Abs, abs, DT_ALL, FRT_UN_ABS, fabsf(v), fabs(v))                                          \
    X(Neg, neg, DT_SIGNED, FRT_UN_NEG, -v, -v)                                                   \
    X(Sign, sign, DT_ALL, -1, SIGN_OF(v), SIGN_OF(v))                                            \
    X(Exp, exp, DT_FLOAT, FRT_UN_EXP, expf(v), exp(v))                                           \
    X(Log, log, DT_FLOAT, FRT_UN_LOG, logf(v), log(v))                                           \
    X(Sqrt, sqrt, DT_FLOAT, FRT_UN_SQRT, sqrtf(v), sqrt(v))                                      \
    X(Erf, erf, DT_FLOAT, FRT_UN_ERF, erff(v), erf(v))                                           \
    X(Reciprocal, reciprocal, DT_FLOAT, FRT_UN_RECIP, 1.0f / v, 1.0 / v)                         \
    X(Floor, floor, DT_FLOAT, FRT_UN_FLOOR, floorf(v), floor(v))                                 \
    X(Ceil, ceil, DT_FLOAT, FRT_UN_CEIL, ceilf(v), ceil(v))                                      \
    X(Round, round, DT_FLOAT, FRT_UN_ROUND, nearbyintf(v), nearbyint(v))                         \
    X(Sin, sin, DT_FLOAT, -1, sinf(v), sin(v))                                                   \
    X(Cos, cos, DT_FLOAT, -1, cosf(v), cos(v))                                                   \
    X(Tan, tan, DT_FLOAT, -1, tanf(v), tan(v))                                                   \
    X(Asin, asin, DT_FLOAT, -1, asinf(v), asin(v))                                               \
    X(Acos, acos, DT_FLOAT, -1, acosf(v), acos(v))                                               \
    X(Atan, atan, DT_FLOAT, -1, atanf(v), atan(v))                                               \
    X(Sinh, sinh, DT_FLOAT, -1, sinhf(v), sinh(v))                                               \
    X(Cosh, cosh, DT_FLOAT, -1, coshf(v), cosh(v))                                               \
    X(Asinh, asinh, DT_FLOAT, -1, asinhf(v), asinh(v))                                           \
    X(Acosh, acosh, DT_FLOAT, -1, acoshf(v), acosh(v))                                           \
    X(Atanh, atanh, DT_FLOAT, -1, atanhf(v), atanh(v))

#define X_LOOPS(Op, sym, dts, simd, e32, e64) UN_F32(sym, e32) UN_F64(sym, e64)
UNARY_OPS(X_LOOPS)

/* Pow helpers (used by Pow in elementwise.c through the variant table). */
UN_F32(square, v * v)
UN_F32(cube, v * v * v)
UN_F32(pow_half, v == -INFINITY ? INFINITY : sqrtf(v) + 0.0f)
UN_F32(identity, v)

/* ---- integer loops --------------------------------------------------------------------------- */

#define INT_LOOP(NAME, T, EXPR)                                                                  \
    static void NAME(const void *x_, void *y_, size_t n) {                                       \
        const T *x = x_;                                                                         \
        T *y = y_;                                                                               \
        for (size_t i = 0; i < n; i++) {                                                         \
            T v = x[i];                                                                          \
            y[i] = (T)(EXPR);                                                                    \
        }                                                                                        \
    }
#define INT_SIGNED(S, T)                                                                         \
    INT_LOOP(abs_##S, T, v < 0 ? 0 - (uint64_t)v : (uint64_t)v)                                  \
    INT_LOOP(neg_##S, T, 0 - (uint64_t)v)                                                        \
    INT_LOOP(sign_##S, T, v > 0 ? 1 : v < 0 ? -1 : 0)
#define INT_UNSIGNED(S, T)                                                                       \
    INT_LOOP(abs_##S, T, v)                                                                      \
    INT_LOOP(sign_##S, T, v > 0)
INT_SIGNED(i8, int8_t)
INT_SIGNED(i16, int16_t)
INT_SIGNED(i32, int32_t)
INT_SIGNED(i64, int64_t)
INT_UNSIGNED(u8, uint8_t)
INT_UNSIGNED(u16, uint16_t)
INT_UNSIGNED(u32, uint32_t)
INT_UNSIGNED(u64, uint64_t)

typedef void (*gen_fn)(const void *x, void *y, size_t n);

/* [op: 0 abs, 1 neg, 2 sign][dtype] */
static const gen_fn int_loops[3][14] = {
    {[FRT_INT8] = abs_i8, [FRT_INT16] = abs_i16, [FRT_INT32] = abs_i32, [FRT_INT64] = abs_i64,
     [FRT_UINT8] = abs_u8, [FRT_UINT16] = abs_u16, [FRT_UINT32] = abs_u32, [FRT_UINT64] = abs_u64},
    {[FRT_INT8] = neg_i8, [FRT_INT16] = neg_i16, [FRT_INT32] = neg_i32, [FRT_INT64] = neg_i64},
    {[FRT_INT8] = sign_i8, [FRT_INT16] = sign_i16, [FRT_INT32] = sign_i32,
     [FRT_INT64] = sign_i64, [FRT_UINT8] = sign_u8, [FRT_UINT16] = sign_u16,
     [FRT_UINT32] = sign_u32, [FRT_UINT64] = sign_u64},
};

/* ---- variant table --------------------------------------------------------------------------- */

static const frt_unary_fn un_f32_portable[FRT_UN_N] = {
    [FRT_UN_ABS] = abs_f32_c,        [FRT_UN_NEG] = neg_f32_c,
    [FRT_UN_EXP] = exp_f32_c,        [FRT_UN_LOG] = log_f32_c,
    [FRT_UN_SQRT] = sqrt_f32_c,      [FRT_UN_ERF] = erf_f32_c,
    [FRT_UN_RECIP] = reciprocal_f32_c, [FRT_UN_FLOOR] = floor_f32_c,
    [FRT_UN_CEIL] = ceil_f32_c,      [FRT_UN_ROUND] = round_f32_c,
    [FRT_UN_SQUARE] = square_f32_c,  [FRT_UN_CUBE] = cube_f32_c,
    [FRT_UN_POW_HALF] = pow_half_f32_c, [FRT_UN_IDENTITY] = identity_f32_c,
};

static const frt_un_variant un_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512, "_avx512", frt_un_f32_avx512},
#endif
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "_avx2", frt_un_f32_avx2},
#endif
#endif
    {FRT_ISA_PORTABLE, "", un_f32_portable},
};

const frt_un_variant *frt_un_variant_get(frt_isa cap) { return FRT_PICK_VARIANT(un_variants, cap); }

/* ---- kernel ---------------------------------------------------------------------------------- */

enum { K_F32, K_F16, K_BF16, K_GEN };

typedef struct un_params {
    int kind;
    frt_unary_fn f32; /* K_F32, K_F16, K_BF16 */
    gen_fn gen;       /* K_GEN: float64 and integer loops */
    size_t es;        /* element size */
} un_params;

typedef struct un_job {
    const un_params *p;
    const char *x;
    char *y;
} un_job;

/* Half-precision data through the float32 loop f, 256 elements at a time (bf: bfloat16). */
static void half_apply(frt_unary_fn f, const uint16_t *x, uint16_t *y, size_t n, bool bf) {
    float t[256];
    for (size_t i = 0; i < n; i += 256) {
        size_t m = n - i < 256 ? n - i : 256;
        for (size_t k = 0; k < m; k++) t[k] = bf ? frt_bf16_to_float(x[i + k]) : frt_half_to_float(x[i + k]);
        f(t, t, m);
        for (size_t k = 0; k < m; k++) y[i + k] = bf ? frt_float_to_bf16(t[k]) : frt_float_to_half(t[k]);
    }
}

static void un_range(void *ctx, size_t lo, size_t hi) {
    const un_job *j = ctx;
    const un_params *p = j->p;
    const char *x = j->x + lo * p->es;
    char *y = j->y + lo * p->es;
    switch (p->kind) {
    case K_F32: p->f32((const float *)x, (float *)y, hi - lo); break;
    case K_F16:
    case K_BF16: half_apply(p->f32, (const uint16_t *)x, (uint16_t *)y, hi - lo, p->kind == K_BF16); break;
    default: p->gen(x, y, hi - lo); break;
    }
}

static frt_status k_unary(const frt_step *s, frt_exec *x) {
    const un_params *p = s->k.params;
    const frt_value *in = &x->values[s->in[0]];
    frt_value *out = &x->values[s->out[0]];
    if (in->numel != out->numel)
        return frt_step_fail(s, FRT_ERR_SHAPE, "input and output sizes differ");
    un_job j = {p, in->data, out->data};
    frt_ew_parallel(x->tp, (size_t)out->numel, 1, un_range, &j);
    return FRT_OK;
}

/* ---- infer / select -------------------------------------------------------------------------- */

static bool dt_allowed(int32_t dt, int dts) {
    if (frt_dtype_is_float(dt)) return true;
    if (dts == DT_FLOAT) return false;
    if (dts == DT_SIGNED) return frt_dtype_is_int(dt) && frt_dtype_is_signed(dt);
    return frt_dtype_is_int(dt);
}

static const char *dts_text(int dts) {
    return dts == DT_FLOAT    ? "float16, float32, float64"
           : dts == DT_SIGNED ? "signed integers, float16, float32, float64"
                              : "numeric dtypes";
}

static frt_status un_infer(frt_op_ctx *c, int dts) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    const frt_value *a = c->in[0];
    if (!dt_allowed(a->dtype, dts))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (%s)",
                           frt_dtype_name(a->dtype), dts_text(dts));
    frt_op_set_shape(c->out[0], a->dtype, a->rank, a->dims);
    return FRT_OK;
}

static frt_status un_select(frt_op_ctx *c, frt_kernel *k, const char *sym, int dts, int simd,
                            frt_unary_fn f32c, gen_fn f64, int int_op) {
    int32_t dt = c->in[0]->dtype;
    if (!dt_allowed(dt, dts))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported", frt_dtype_name(dt));
    if (c->node->act.kind != FRT_ACT_NONE)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "fused activation not supported");
    un_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    memset(p, 0, sizeof *p);
    p->es = frt_dtype_size(dt);
    const char *sfx = "", *dn;
    if (dt == FRT_FLOAT32 || dt == FRT_FLOAT16 || dt == FRT_BFLOAT16) {
        p->kind = dt == FRT_FLOAT32 ? K_F32 : dt == FRT_FLOAT16 ? K_F16 : K_BF16;
        p->f32 = f32c;
        if (simd >= 0) {
            const frt_un_variant *v = frt_un_variant_get(c->isa);
            p->f32 = v->f[simd];
            sfx = v->suffix;
        }
        dn = dt == FRT_FLOAT32 ? "f32" : dt == FRT_FLOAT16 ? "f16" : "bf16";
    } else if (dt == FRT_FLOAT64) {
        p->kind = K_GEN;
        p->gen = f64;
        dn = "f64";
    } else {
        p->kind = K_GEN;
        p->gen = int_op >= 0 && dt > 0 && dt < 14 ? int_loops[int_op][dt] : NULL;
        if (!p->gen)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported",
                               frt_dtype_name(dt));
        dn = frt_dtype_is_signed(dt) ? "int" : "uint";
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%s_%s%s", sym, dn, sfx);
    k->name = frt_arena_strdup(c->arena, buf);
    if (!k->name) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    k->fn = k_unary;
    k->params = p;
    k->flags = FRT_K_INPLACE;
    return FRT_OK;
}

#define INT_OP_abs 0
#define INT_OP_neg 1
#define INT_OP_sign 2
#define X_IMPL(Op, sym, dts, simd, e32, e64)                                                     \
    static frt_status sym##_infer(frt_op_ctx *c) { return un_infer(c, dts); }                    \
    static frt_status sym##_select(frt_op_ctx *c, frt_kernel *k) {                               \
        return un_select(c, k, #sym, dts, simd, sym##_f32_c, sym##_f64,                          \
                         dts == DT_FLOAT ? -1 : INT_OP_##sym);                                   \
    }                                                                                            \
    FRT_OP_IMPL(unary, Op, sym##_infer, sym##_select);
#define INT_OP_exp -1
#define INT_OP_log -1
#define INT_OP_sqrt -1
#define INT_OP_erf -1
#define INT_OP_reciprocal -1
#define INT_OP_floor -1
#define INT_OP_ceil -1
#define INT_OP_round -1
#define INT_OP_sin -1
#define INT_OP_cos -1
#define INT_OP_tan -1
#define INT_OP_asin -1
#define INT_OP_acos -1
#define INT_OP_atan -1
#define INT_OP_sinh -1
#define INT_OP_cosh -1
#define INT_OP_asinh -1
#define INT_OP_acosh -1
#define INT_OP_atanh -1

/* Implementations referred to by src/ops/ops.def. */
UNARY_OPS(X_IMPL)
