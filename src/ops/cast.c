/* Cast, CastLike: convert between every pair of float32, float64, float16, bfloat16, int8..int64,
 * uint8..uint64 and bool.
 *
 * Cast's attribute `to` (required) is the target dtype; CastLike(input, target_type) takes the
 * dtype of its second input (whose data is never read). out has the input's shape.
 * Semantics, per element:
 *   float -> int     truncation toward zero. Out of range: saturated to the int64 range (NaN -> 0)
 *                    and then wrapped to the target width like an int -> int cast, so e.g.
 *                    300.0 -> uint8 gives 44 and -1.0 -> uint8 gives 255 (as numpy on x86).
 *                    To uint64, values in [2^63, 2^64) convert exactly and larger ones saturate.
 *   int -> int       two's-complement wrap-around (numpy astype).
 *   int -> float     rounds once (int64/uint64 -> float32 directly, not via float64).
 *   -> bool          x != 0 (NaN -> true); bool -> number: 0 or 1 (any nonzero byte reads as 1).
 *   -> float16       round to nearest even, overflow to inf, NaN stays NaN. float16 <-> float32
 *                    use the frt_f16_variant of the select tier (F16C / AVX-512 / portable, all
 *                    bit-identical; names end in the tier). float64 -> float16 rounds via float32.
 *   -> bfloat16      round to nearest even (as ONNX's reference implementation), overflow to
 *                    inf, NaN stays a quiet NaN; float64 rounds via float32.
 *   string           not supported ("unsupported: dtype string").
 * Same dtype: a view (no copy). Kernels may run in place when both element sizes are equal: element
 * access goes through memcpy so the differently typed pointers may alias.
 */
#include <math.h>
#include <string.h>

#include "dtype_util.h"
#include "op.h"
#include "x86/simd_elementwise.h"

/* ---- element loads (to double, int64 or uint64) and stores --------------------------------- */

typedef unsigned char uc;
#define LD(NAME, T, R, EXPR)                                                                     \
    static inline R ld_##NAME(const uc *p) {                                                     \
        T v;                                                                                     \
        memcpy(&v, p, sizeof v);                                                                 \
        return EXPR;                                                                             \
    }
LD(f32, float, double, v)
LD(f64, double, double, v)
LD(f16, uint16_t, double, frt_half_to_float(v))
LD(bf16, uint16_t, double, frt_bf16_to_float(v))
LD(i8, int8_t, int64_t, v)
LD(i16, int16_t, int64_t, v)
LD(i32, int32_t, int64_t, v)
LD(i64, int64_t, int64_t, v)
LD(u8, uint8_t, int64_t, v)
LD(u16, uint16_t, int64_t, v)
LD(u32, uint32_t, int64_t, v)
LD(u64, uint64_t, uint64_t, v)
LD(b8, uint8_t, int64_t, v != 0)

/* Truncation toward zero, saturated to the int64 range; NaN -> 0. */
static inline int64_t f2i(double d) {
    if (!(d == d)) return 0;
    if (d >= 0x1p63) return INT64_MAX;
    if (d < -0x1p63) return INT64_MIN;
    return (int64_t)d;
}
/* The same to uint64: [2^63, 2^64) exact, beyond saturated; below 2^63 as f2i, wrapped. */
static inline uint64_t f2u(double d) {
    if (d >= 0x1p64) return UINT64_MAX;
    if (d >= 0x1p63) return (uint64_t)d;
    return (uint64_t)f2i(d);
}

/* st_D_f (from double), st_D_i (from int64), st_D_u (from uint64). */
#define ST_SET(D, T, FROM_F, FROM_I, FROM_U)                                                     \
    static inline void st_##D##_f(uc *p, double d) {                                            \
        T v = FROM_F;                                                                            \
        memcpy(p, &v, sizeof v);                                                                 \
    }                                                                                            \
    static inline void st_##D##_i(uc *p, int64_t i) {                                           \
        T v = FROM_I;                                                                            \
        memcpy(p, &v, sizeof v);                                                                 \
    }                                                                                            \
    static inline void st_##D##_u(uc *p, uint64_t u) {                                          \
        T v = FROM_U;                                                                            \
        memcpy(p, &v, sizeof v);                                                                 \
    }
#define WRAP(T, UT) (T)(UT)(uint64_t)
ST_SET(f32, float, (float)d, (float)i, (float)u)
ST_SET(f64, double, d, (double)i, (double)u)
ST_SET(f16, uint16_t, frt_float_to_half((float)d), frt_float_to_half((float)i),
       frt_float_to_half((float)u))
ST_SET(bf16, uint16_t, frt_float_to_bf16((float)d), frt_float_to_bf16((float)i),
       frt_float_to_bf16((float)u))
ST_SET(i8, int8_t, WRAP(int8_t, uint8_t) f2i(d), WRAP(int8_t, uint8_t) i, WRAP(int8_t, uint8_t) u)
ST_SET(i16, int16_t, WRAP(int16_t, uint16_t) f2i(d), WRAP(int16_t, uint16_t) i,
       WRAP(int16_t, uint16_t) u)
ST_SET(i32, int32_t, WRAP(int32_t, uint32_t) f2i(d), WRAP(int32_t, uint32_t) i,
       WRAP(int32_t, uint32_t) u)
ST_SET(i64, int64_t, f2i(d), i, (int64_t)u)
ST_SET(u8, uint8_t, (uint8_t)(uint64_t)f2i(d), (uint8_t)(uint64_t)i, (uint8_t)u)
ST_SET(u16, uint16_t, (uint16_t)(uint64_t)f2i(d), (uint16_t)(uint64_t)i, (uint16_t)u)
ST_SET(u32, uint32_t, (uint32_t)(uint64_t)f2i(d), (uint32_t)(uint64_t)i, (uint32_t)u)
ST_SET(u64, uint64_t, f2u(d), (uint64_t)i, u)
ST_SET(b8, uint8_t, (uint8_t)(d != 0), (uint8_t)(i != 0), (uint8_t)(u != 0))

#define SZ_f32 4
#define SZ_f64 8
#define SZ_f16 2
#define SZ_bf16 2
#define SZ_i8 1
#define SZ_i16 2
#define SZ_i32 4
#define SZ_i64 8
#define SZ_u8 1
#define SZ_u16 2
#define SZ_u32 4
#define SZ_u64 8
#define SZ_b8 1

#define STORE(D, p, v)                                                                           \
    _Generic((v), double: st_##D##_f, uint64_t: st_##D##_u, default: st_##D##_i)(p, v)

typedef void (*cast_fn)(const void *src, void *dst, size_t n);

#define CAST_FN(S, D)                                                                            \
    static void cast_##S##_##D(const void *src, void *dst, size_t n) {                           \
        const uc *sp = src;                                                                      \
        uc *dp = dst;                                                                            \
        for (size_t i = 0; i < n; i++) STORE(D, dp + i * SZ_##D, ld_##S(sp + i * SZ_##S));       \
    }
/* Destinations in type-index order. */
#define CAST_ROW(S)                                                                              \
    CAST_FN(S, f32) CAST_FN(S, f64) CAST_FN(S, f16) CAST_FN(S, bf16) CAST_FN(S, i8)              \
    CAST_FN(S, i16) CAST_FN(S, i32) CAST_FN(S, i64) CAST_FN(S, u8) CAST_FN(S, u16)               \
    CAST_FN(S, u32) CAST_FN(S, u64) CAST_FN(S, b8)
CAST_ROW(f32)
CAST_ROW(f64)
CAST_ROW(f16)
CAST_ROW(bf16)
CAST_ROW(i8)
CAST_ROW(i16)
CAST_ROW(i32)
CAST_ROW(i64)
CAST_ROW(u8)
CAST_ROW(u16)
CAST_ROW(u32)
CAST_ROW(u64)
CAST_ROW(b8)

enum { NT = 13 }; /* types */
#define CAST_TAB(S)                                                                              \
    {cast_##S##_f32, cast_##S##_f64, cast_##S##_f16, cast_##S##_bf16, cast_##S##_i8,            \
     cast_##S##_i16, cast_##S##_i32, cast_##S##_i64, cast_##S##_u8,   cast_##S##_u16,           \
     cast_##S##_u32, cast_##S##_u64, cast_##S##_b8}
/* Indexed by type index (below) of source, then destination. */
static const cast_fn cast_table[NT][NT] = {
    CAST_TAB(f32), CAST_TAB(f64), CAST_TAB(f16), CAST_TAB(bf16), CAST_TAB(i8),
    CAST_TAB(i16), CAST_TAB(i32), CAST_TAB(i64), CAST_TAB(u8),   CAST_TAB(u16),
    CAST_TAB(u32), CAST_TAB(u64), CAST_TAB(b8)};

static const int32_t type_dtypes[NT] = {FRT_FLOAT32, FRT_FLOAT64, FRT_FLOAT16, FRT_BFLOAT16,
                                        FRT_INT8,    FRT_INT16,   FRT_INT32,   FRT_INT64,
                                        FRT_UINT8,   FRT_UINT16,  FRT_UINT32,  FRT_UINT64,
                                        FRT_BOOL};
/* Kernel names (static: they outlive any arena), [source][destination]. */
#define CAST_NAMES(S)                                                                            \
    {"cast_" S "_to_f32",  "cast_" S "_to_f64",  "cast_" S "_to_f16",  "cast_" S "_to_bf16",   \
     "cast_" S "_to_i8",   "cast_" S "_to_i16",  "cast_" S "_to_i32",  "cast_" S "_to_i64",    \
     "cast_" S "_to_u8",   "cast_" S "_to_u16",  "cast_" S "_to_u32",  "cast_" S "_to_u64",    \
     "cast_" S "_to_bool"}
static const char *const cast_names[NT][NT] = {
    CAST_NAMES("f32"), CAST_NAMES("f64"), CAST_NAMES("f16"), CAST_NAMES("bf16"),
    CAST_NAMES("i8"),  CAST_NAMES("i16"), CAST_NAMES("i32"), CAST_NAMES("i64"),
    CAST_NAMES("u8"),  CAST_NAMES("u16"), CAST_NAMES("u32"), CAST_NAMES("u64"),
    CAST_NAMES("bool")};

static int type_index(int32_t dt) {
    for (int i = 0; i < NT; i++)
        if (type_dtypes[i] == dt) return i;
    return -1;
}

/* half <-> float variants, best tier first; bit-identical to each other. */
static void f16_to_f32_c(const uint16_t *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = frt_half_to_float(x[i]);
}
static void f32_to_f16_c(const float *x, uint16_t *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = frt_float_to_half(x[i]);
}
static const frt_f16_variant f16_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512, "_avx512", frt_f16_to_f32_avx512, frt_f32_to_f16_avx512},
#endif
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "_avx2", frt_f16_to_f32_avx2, frt_f32_to_f16_avx2},
#endif
#endif
    {FRT_ISA_PORTABLE, "", f16_to_f32_c, f32_to_f16_c},
};

const frt_f16_variant *frt_f16_variant_get(frt_isa cap) {
    return FRT_PICK_VARIANT(f16_variants, cap);
}

/* ---- kernel -------------------------------------------------------------------------------- */

typedef struct cast_params {
    cast_fn fn;    /* used unless one of the half <-> float loops below is set */
    void (*f16_to_f32)(const uint16_t *x, float *y, size_t n);
    void (*f32_to_f16)(const float *x, uint16_t *y, size_t n);
    size_t isz, osz;
} cast_params;

static void cast_run(const cast_params *p, const void *src, void *dst, size_t n) {
    if (p->f16_to_f32) p->f16_to_f32(src, dst, n);
    else if (p->f32_to_f16) p->f32_to_f16(src, dst, n);
    else p->fn(src, dst, n);
}

typedef struct cast_job {
    const cast_params *p;
    const uc *src;
    uc *dst;
} cast_job;

static void cast_range(void *ctx, size_t lo, size_t hi) {
    const cast_job *j = ctx;
    cast_run(j->p, j->src + lo * j->p->isz, j->dst + lo * j->p->osz, hi - lo);
}

static frt_status k_cast(const frt_step *s, frt_exec *x) {
    const cast_params *p = s->k.params;
    const frt_value *in = &x->values[s->in[0]];
    frt_value *out = &x->values[s->out[0]];
    size_t n = (size_t)out->numel;
    if (!x->tp || n < 2 * FRT_EW_CHUNK) {
        if (n) cast_run(p, in->data, out->data, n);
        return FRT_OK;
    }
    cast_job j = {p, in->data, out->data};
    frt_ew_parallel(x->tp, n, 1, cast_range, &j);
    return FRT_OK;
}

/* Target dtype: Cast's `to` attribute, or CastLike's second input's dtype. */
static frt_status cast_target(const frt_op_ctx *c, bool like, int32_t *to) {
    if (like) {
        frt_status st = frt_op_check_input(c, 1, 0);
        if (st) return st;
        *to = c->in[1]->dtype;
    } else {
        const frt_onnx_attr *a = frt_attr_find(c->node, "to");
        if (!a || a->type != FRT_ATTR_INT)
            return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute 'to' (int) is required");
        if (a->i < 0 || a->i > 64)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unsupported: cast to dtype %lld",
                               (long long)a->i);
        *to = (int32_t)a->i;
    }
    if (type_index(*to) < 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unsupported: cast to dtype %s (%d)",
                           frt_dtype_name((frt_dtype)*to), (int)*to);
    if (type_index(c->in[0]->dtype) < 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unsupported: cast from dtype %s (%d)",
                           frt_dtype_name((frt_dtype)c->in[0]->dtype), (int)c->in[0]->dtype);
    return FRT_OK;
}

static frt_status cast_infer_any(frt_op_ctx *c, bool like) {
    frt_status st = frt_op_check_arity(c, like ? 2 : 1, like ? 2 : 1, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    int32_t to;
    if ((st = cast_target(c, like, &to))) return st;
    frt_op_set_shape(c->out[0], to, c->in[0]->rank, c->in[0]->dims);
    return FRT_OK;
}

static frt_status cast_select_any(frt_op_ctx *c, frt_kernel *k, bool like) {
    int32_t to;
    frt_status st = cast_target(c, like, &to);
    if (st) return st;
    int si = type_index(c->in[0]->dtype), di = type_index(to);
    if (si == di) { /* same bytes, same shape */
        k->name = "cast_view";
        k->fn = NULL;
        k->flags = FRT_K_VIEW;
        return FRT_OK;
    }
    cast_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->fn = cast_table[si][di];
    p->f16_to_f32 = NULL;
    p->f32_to_f16 = NULL;
    p->isz = frt_dtype_size((frt_dtype)type_dtypes[si]);
    p->osz = frt_dtype_size((frt_dtype)to);
    k->name = cast_names[si][di];
    static const char *const f16_names[2][3] = {
        {"cast_f16_to_f32", "cast_f16_to_f32_avx2", "cast_f16_to_f32_avx512"},
        {"cast_f32_to_f16", "cast_f32_to_f16_avx2", "cast_f32_to_f16_avx512"}};
    const frt_f16_variant *v = frt_f16_variant_get(c->isa);
    if (type_dtypes[si] == FRT_FLOAT16 && to == FRT_FLOAT32) {
        p->f16_to_f32 = v->to_f32;
        k->name = f16_names[0][v->isa];
    } else if (type_dtypes[si] == FRT_FLOAT32 && to == FRT_FLOAT16) {
        p->f32_to_f16 = v->from_f32;
        k->name = f16_names[1][v->isa];
    }
    k->fn = k_cast;
    k->params = p;
    k->flags = p->isz == p->osz ? FRT_K_INPLACE : 0;
    return FRT_OK;
}

static frt_status cast_infer(frt_op_ctx *c) { return cast_infer_any(c, false); }
static frt_status cast_select(frt_op_ctx *c, frt_kernel *k) { return cast_select_any(c, k, false); }
static frt_status castlike_infer(frt_op_ctx *c) { return cast_infer_any(c, true); }
static frt_status castlike_select(frt_op_ctx *c, frt_kernel *k) {
    return cast_select_any(c, k, true);
}

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(cast, Cast, cast_infer, cast_select);
FRT_OP_IMPL(cast, CastLike, castlike_infer, castlike_select);
