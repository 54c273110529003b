/* Cast: converts between float32, float64, int64, int32, int8, uint8, bool and float16.
 *
 * Attribute `to` (required) is the target dtype; out has the input's shape.
 * Semantics, per element:
 *   float -> int     truncation toward zero. Out of range: saturated to the int64 range (NaN -> 0)
 *                    and then wrapped to the target width like an int -> int cast, so e.g.
 *                    300.0 -> uint8 gives 44 and -1.0 -> uint8 gives 255 (as numpy on x86).
 *   int -> int       two's-complement wrap-around (numpy astype).
 *   -> bool          x != 0 (NaN -> true); bool -> number: 0 or 1 (any nonzero byte reads as 1).
 *   -> float16       round to nearest even, overflow to inf, NaN stays NaN. float16 <-> float32
 *                    use the frt_f16_variant of the select tier (F16C / AVX-512 / portable, all
 *                    bit-identical; names end in the tier). float64 -> float16 rounds via float32.
 *   int64 -> float32 rounds once (directly, not via float64).
 * Same dtype: a view (no copy). Kernels may run in place when both element sizes are equal: element
 * access goes through memcpy so the differently typed pointers may alias.
 */
#include <math.h>
#include <string.h>

#include "dtype_util.h"
#include "op.h"
#include "x86/simd_elementwise.h"

/* ---- element loads (to double or int64) and stores (from double or int64) ------------------ */

typedef unsigned char uc;
static inline double ld_f32(const uc *p) { float v; memcpy(&v, p, 4); return v; }
static inline double ld_f64(const uc *p) { double v; memcpy(&v, p, 8); return v; }
static inline double ld_f16(const uc *p) { uint16_t v; memcpy(&v, p, 2); return frt_half_to_float(v); }
static inline int64_t ld_i64(const uc *p) { int64_t v; memcpy(&v, p, 8); return v; }
static inline int64_t ld_i32(const uc *p) { int32_t v; memcpy(&v, p, 4); return v; }
static inline int64_t ld_i8(const uc *p) { return (int8_t)*p; }
static inline int64_t ld_u8(const uc *p) { return *p; }
static inline int64_t ld_b8(const uc *p) { return *p != 0; }

/* Truncation toward zero, saturated to the int64 range; NaN -> 0. */
static inline int64_t f2i(double d) {
    if (!(d == d)) return 0;
    if (d >= 0x1p63) return INT64_MAX;
    if (d < -0x1p63) return INT64_MIN;
    return (int64_t)d;
}

#define ST_PAIR(D, T, FROM_F, FROM_I)                                                            \
    static inline void st_##D##_f(uc *p, double d) {                                            \
        T v = FROM_F;                                                                            \
        memcpy(p, &v, sizeof v);                                                                 \
    }                                                                                            \
    static inline void st_##D##_i(uc *p, int64_t i) {                                            \
        T v = FROM_I;                                                                            \
        memcpy(p, &v, sizeof v);                                                                 \
    }
ST_PAIR(f32, float, (float)d, (float)i)
ST_PAIR(f64, double, d, (double)i)
ST_PAIR(f16, uint16_t, frt_float_to_half((float)d), frt_float_to_half((float)i))
ST_PAIR(i64, int64_t, f2i(d), i)
ST_PAIR(i32, int32_t, (int32_t)(uint32_t)(uint64_t)f2i(d), (int32_t)(uint32_t)(uint64_t)i)
ST_PAIR(i8, int8_t, (int8_t)(uint8_t)(uint64_t)f2i(d), (int8_t)(uint8_t)(uint64_t)i)
ST_PAIR(u8, uint8_t, (uint8_t)(uint64_t)f2i(d), (uint8_t)(uint64_t)i)
ST_PAIR(b8, uint8_t, (uint8_t)(d != 0), (uint8_t)(i != 0))

#define SZ_f32 4
#define SZ_f64 8
#define SZ_f16 2
#define SZ_i64 8
#define SZ_i32 4
#define SZ_i8 1
#define SZ_u8 1
#define SZ_b8 1

#define STORE(D, p, v) _Generic((v), double: st_##D##_f, default: st_##D##_i)(p, v)

typedef void (*cast_fn)(const void *src, void *dst, size_t n);

#define CAST_FN(S, D)                                                                            \
    static void cast_##S##_##D(const void *src, void *dst, size_t n) {                           \
        const uc *sp = src;                                                                      \
        uc *dp = dst;                                                                            \
        for (size_t i = 0; i < n; i++) STORE(D, dp + i * SZ_##D, ld_##S(sp + i * SZ_##S));       \
    }
#define CAST_ROW(S)                                                                              \
    CAST_FN(S, f32) CAST_FN(S, f64) CAST_FN(S, i64) CAST_FN(S, i32) CAST_FN(S, i8)               \
    CAST_FN(S, u8) CAST_FN(S, b8) CAST_FN(S, f16)
CAST_ROW(f32)
CAST_ROW(f64)
CAST_ROW(i64)
CAST_ROW(i32)
CAST_ROW(i8)
CAST_ROW(u8)
CAST_ROW(b8)
CAST_ROW(f16)

/* Indexed by type index (below) of source, then destination. */
#define CAST_TAB(S)                                                                              \
    {cast_##S##_f32, cast_##S##_f64, cast_##S##_i64, cast_##S##_i32,                             \
     cast_##S##_i8,  cast_##S##_u8,  cast_##S##_b8, cast_##S##_f16}
static const cast_fn cast_table[8][8] = {CAST_TAB(f32), CAST_TAB(f64), CAST_TAB(i64),
                                         CAST_TAB(i32), CAST_TAB(i8),  CAST_TAB(u8),
                                         CAST_TAB(b8), CAST_TAB(f16)};

static const int32_t type_dtypes[8] = {FRT_FLOAT32, FRT_FLOAT64, FRT_INT64, FRT_INT32,
                                       FRT_INT8,    FRT_UINT8,   FRT_BOOL,  FRT_FLOAT16};
/* Kernel names (static: they outlive any arena), [source][destination]. */
#define CAST_NAMES(S)                                                                            \
    {"cast_" S "_to_f32", "cast_" S "_to_f64", "cast_" S "_to_i64", "cast_" S "_to_i32",         \
     "cast_" S "_to_i8",  "cast_" S "_to_u8",  "cast_" S "_to_bool", "cast_" S "_to_f16"}
static const char *const cast_names[8][8] = {CAST_NAMES("f32"), CAST_NAMES("f64"),
                                             CAST_NAMES("i64"), CAST_NAMES("i32"),
                                             CAST_NAMES("i8"),  CAST_NAMES("u8"),
                                             CAST_NAMES("bool"), CAST_NAMES("f16")};

static int type_index(int32_t dt) {
    for (int i = 0; i < 8; i++)
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
    {FRT_ISA_AVX512, "_avx512", frt_f16_to_f32_avx512, frt_f32_to_f16_avx512},
    {FRT_ISA_AVX2, "_avx2", frt_f16_to_f32_avx2, frt_f32_to_f16_avx2},
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

static frt_status cast_target(const frt_op_ctx *c, int32_t *to) {
    const frt_onnx_attr *a = frt_attr_find(c->node, "to");
    if (!a || a->type != FRT_ATTR_INT)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute 'to' (int) is required");
    if (a->i < 0 || a->i > 64 || type_index((int32_t)a->i) < 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "cast to %s (%lld) not supported",
                           frt_dtype_name((frt_dtype)(a->i >= 0 && a->i <= 64 ? a->i : 0)),
                           (long long)a->i);
    *to = (int32_t)a->i;
    return FRT_OK;
}

static frt_status cast_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    int32_t to;
    if ((st = cast_target(c, &to))) return st;
    if (type_index(c->in[0]->dtype) < 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "cast from %s not supported",
                           frt_dtype_name(c->in[0]->dtype));
    frt_op_set_shape(c->out[0], to, c->in[0]->rank, c->in[0]->dims);
    return FRT_OK;
}

static frt_status cast_select(frt_op_ctx *c, frt_kernel *k) {
    int32_t to;
    frt_status st = cast_target(c, &to);
    if (st) return st;
    int si = type_index(c->in[0]->dtype), di = type_index(to);
    if (si < 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "cast from %s not supported",
                           frt_dtype_name(c->in[0]->dtype));
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
    p->isz = frt_dtype_size(type_dtypes[si]);
    p->osz = frt_dtype_size(type_dtypes[di]);
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

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(cast, Cast, cast_infer, cast_select);
