/* Binary and variadic elementwise arithmetic with ONNX multidirectional (numpy) broadcasting:
 * Add Sub Mul Div Pow Mod BitShift (two inputs) and Min Max Sum Mean (one or more inputs).
 *
 * Dtypes: every numeric dtype (int8..int64, uint8..uint64, float16, float32, float64) for Add Sub
 * Mul Div Min Max Mod; float16/32/64 for Sum and Mean; uint8..uint64 for BitShift; Pow takes a
 * base of float16/32/64, int32 or int64 and an exponent of any numeric dtype (out = base dtype).
 * Except for Pow's exponent, all inputs have the same dtype and out has it too. float16 is
 * computed in float32 and rounded once (round to nearest even) per operation.
 *
 * Semantics:
 *   integers  Add/Sub/Mul wrap (two's complement); Div truncates toward zero (INT_MIN / -1 wraps);
 *             Mod with fmod=0 takes the sign of the divisor (Python/numpy), with fmod=1 the sign
 *             of the dividend (C); a zero divisor in Div or Mod makes the kernel fail with
 *             FRT_ERR_RUNTIME. Pow with an integer exponent is exact (wrapping) exponentiation;
 *             a negative exponent gives 1/x^n truncated (0 unless |x| == 1) and 0^-n fails.
 *             An integer base with a float exponent is pow() in double, converted back
 *             (truncated, saturating). BitShift: a shift by >= the bit width gives 0.
 *   floats    IEEE; Mod requires fmod=1 (C fmod); Pow is pow() in double rounded to the dtype;
 *             Min/Max propagate NaN (numpy.minimum/maximum).
 *   Mean      the sum of the inputs divided by their count.
 * Opsets below 7 (Add Sub Mul Div Pow): with broadcast=1 the second input is aligned with the
 * first from `axis` (default: its trailing dims) and broadcast over the rest; without it shapes
 * are broadcast the numpy way (a superset of the old "same shape" rule). consumed_inputs is
 * ignored. Sum/Min/Max/Mean before opset 8 broadcast the numpy way too.
 * A fused activation (node->act, set by passes) is applied to float32 outputs.
 *
 * Kernels are specialized at select from what is known at load (dtypes, possibly partial shapes,
 * constant inputs), named "<op>_<dtype>_<pattern>[_relu|_clip][_avx2|_avx512]":
 *   same          a, b and out have the same number of elements (same layout)
 *   scalar_const  one input is a constant with one element; its value is copied into the params
 *                 at select and the kernel never reads that input
 *   scalar        one input has one element (read at run time)
 *   chan          the smaller input's non-1 dims form one block that is not last, e.g.
 *                 [N,C,H,W] op [C,1,1] or [1,C,1,1] or [N,C,1,1]: out = [outer,mid,inner]
 *   row           the same with the block last: [...,K] op [K]
 *   bcast_nd      general broadcasting; strides are computed per run from the dims
 *   pow_f32_{sq,cube,sqrt,one}  Pow of float32 by a constant scalar exponent 2, 3, 0.5, 1
 *   <op>_<dtype>_variadic       Min Max Sum Mean (each pair through the patterns above)
 * Float32 loops of Add Sub Mul Div Min Max come from the tier's variant (frt_ew_variant_get);
 * other dtypes are portable. Every specialized kernel re-checks its precondition against the
 * run-time dims and otherwise falls back to a run-time dispatch over the same patterns.
 */
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cpu.h"
#include "dtype_util.h"
#include "op.h"
#include "x86/simd_elementwise.h"
#include "x86/simd_unary.h"

/* ---- portable loops ------------------------------------------------------------------------ */

/* EXPR computes the result from x (element of a) and y (element of b), types TA/TB -> TO.
 * No restrict: o may be a. BAD (an expression of x and y) flags an invalid pair. */
#define EW_LOOPS3(NAME, TA, TB, TO, EXPR, BAD)                                                   \
    static int NAME##_vv(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const TA *a = a_;                                                                        \
        const TB *b = b_;                                                                        \
        TO *o = o_;                                                                              \
        int bad = 0;                                                                             \
        for (size_t i = 0; i < n; i++) {                                                         \
            TA x = a[i];                                                                         \
            TB y = b[i];                                                                         \
            bad |= (BAD);                                                                        \
            o[i] = (EXPR);                                                                       \
        }                                                                                        \
        return bad;                                                                              \
    }                                                                                            \
    static int NAME##_vs(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const TA *a = a_;                                                                        \
        const TB y = *(const TB *)b_;                                                            \
        TO *o = o_;                                                                              \
        int bad = 0;                                                                             \
        for (size_t i = 0; i < n; i++) {                                                         \
            TA x = a[i];                                                                         \
            bad |= (BAD);                                                                        \
            o[i] = (EXPR);                                                                       \
        }                                                                                        \
        return bad;                                                                              \
    }                                                                                            \
    static int NAME##_sv(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const TA x = *(const TA *)a_;                                                            \
        const TB *b = b_;                                                                        \
        TO *o = o_;                                                                              \
        int bad = 0;                                                                             \
        for (size_t i = 0; i < n; i++) {                                                         \
            TB y = b[i];                                                                         \
            bad |= (BAD);                                                                        \
            o[i] = (EXPR);                                                                       \
        }                                                                                        \
        return bad;                                                                              \
    }
#define EW_LOOPS(NAME, T, EXPR) EW_LOOPS3(NAME, T, T, T, EXPR, 0)
#define EW_LOOPS_BAD(NAME, T, EXPR, BAD) EW_LOOPS3(NAME, T, T, T, EXPR, BAD)

/* Wrapping integer arithmetic through uint64 (no signed overflow). */
#define W_ADD(T) (T)((uint64_t)x + (uint64_t)y)
#define W_SUB(T) (T)((uint64_t)x - (uint64_t)y)
#define W_MUL(T) (T)((uint64_t)x * (uint64_t)y)
#define E_MIN (x < y ? x : y)
#define E_MAX (x > y ? x : y)
/* signed: y == 0 flags (result 0), y == -1 negates with wrap (INT_MIN / -1, INT_MIN % -1). */
#define S_DIV(T) (T)(y == 0 ? 0 : y == -1 ? (T)(0 - (uint64_t)x) : x / y)
#define S_FMOD(T) (T)(y == 0 || y == -1 ? 0 : x % y)
#define S_MOD(T) (T)(y == 0 || y == -1 ? 0 : (x % y != 0 && ((x % y < 0) != (y < 0))) ? x % y + y : x % y)
#define U_DIV(T) (T)(y == 0 ? 0 : x / y)
#define U_MOD(T) (T)(y == 0 ? 0 : x % y)
#define U_SHL(T) (T)(y >= 8 * sizeof(T) ? 0 : (uint64_t)x << y)
#define U_SHR(T) (T)(y >= 8 * sizeof(T) ? 0 : x >> y)

/* Integer power by squaring, wrapping; e < 0: 1/x^-e truncated; *bad for 0^negative. */
static inline int64_t ipow64(int64_t x, int64_t e, int *bad) {
    if (e < 0) {
        if (x == 1) return 1;
        if (x == -1) return (e & 1) ? -1 : 1;
        if (x == 0) *bad = 1;
        return 0;
    }
    uint64_t r = 1, b = (uint64_t)x;
    while (e) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return (int64_t)r;
}

/* Float NaN-propagating min/max (numpy.minimum/maximum); of +0 and -0 the second operand (as
 * MINPS/MAXPS, so that every tier gives the same bits). */
#define F_MIN (x != x ? x : x < y ? x : y)
#define F_MAX (x != x ? x : x > y ? x : y)

#define INT_SIGNED_LOOPS(S, T)                                                                   \
    EW_LOOPS(add_##S, T, W_ADD(T))                                                               \
    EW_LOOPS(sub_##S, T, W_SUB(T))                                                               \
    EW_LOOPS(mul_##S, T, W_MUL(T))                                                               \
    EW_LOOPS_BAD(div_##S, T, S_DIV(T), y == 0)                                                   \
    EW_LOOPS(min_##S, T, E_MIN)                                                                  \
    EW_LOOPS(max_##S, T, E_MAX)                                                                  \
    EW_LOOPS_BAD(mod_##S, T, S_MOD(T), y == 0)                                                   \
    EW_LOOPS_BAD(fmod_##S, T, S_FMOD(T), y == 0)
#define INT_UNSIGNED_LOOPS(S, T)                                                                 \
    EW_LOOPS(add_##S, T, W_ADD(T))                                                               \
    EW_LOOPS(sub_##S, T, W_SUB(T))                                                               \
    EW_LOOPS(mul_##S, T, W_MUL(T))                                                               \
    EW_LOOPS_BAD(div_##S, T, U_DIV(T), y == 0)                                                   \
    EW_LOOPS(min_##S, T, E_MIN)                                                                  \
    EW_LOOPS(max_##S, T, E_MAX)                                                                  \
    EW_LOOPS_BAD(mod_##S, T, U_MOD(T), y == 0)                                                   \
    EW_LOOPS_BAD(fmod_##S, T, U_MOD(T), y == 0)                                                  \
    EW_LOOPS(shl_##S, T, U_SHL(T))                                                               \
    EW_LOOPS(shr_##S, T, U_SHR(T))

INT_SIGNED_LOOPS(i8, int8_t)
INT_SIGNED_LOOPS(i16, int16_t)
INT_SIGNED_LOOPS(i32, int32_t)
INT_SIGNED_LOOPS(i64, int64_t)
INT_UNSIGNED_LOOPS(u8, uint8_t)
INT_UNSIGNED_LOOPS(u16, uint16_t)
INT_UNSIGNED_LOOPS(u32, uint32_t)
INT_UNSIGNED_LOOPS(u64, uint64_t)

EW_LOOPS(add_f32, float, x + y)
EW_LOOPS(sub_f32, float, x - y)
EW_LOOPS(mul_f32, float, x * y)
EW_LOOPS(div_f32, float, x / y)
EW_LOOPS(min_f32, float, F_MIN)
EW_LOOPS(max_f32, float, F_MAX)
EW_LOOPS(fmod_f32, float, fmodf(x, y))
EW_LOOPS(add_f64, double, x + y)
EW_LOOPS(sub_f64, double, x - y)
EW_LOOPS(mul_f64, double, x * y)
EW_LOOPS(div_f64, double, x / y)
EW_LOOPS(min_f64, double, F_MIN)
EW_LOOPS(max_f64, double, F_MAX)
EW_LOOPS(fmod_f64, double, fmod(x, y))

/* float16: blocks converted to float32, computed by the float32 loop F, rounded back. */
#define F16_BLK 128
#define F16_LOOPS(NAME, F)                                                                       \
    static int NAME##_vv(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const uint16_t *a = a_, *b = b_;                                                         \
        uint16_t *o = o_;                                                                        \
        float fa[F16_BLK], fb[F16_BLK];                                                          \
        for (size_t i = 0; i < n; i += F16_BLK) {                                                \
            size_t m = n - i < F16_BLK ? n - i : F16_BLK;                                        \
            for (size_t k = 0; k < m; k++) {                                                     \
                fa[k] = frt_half_to_float(a[i + k]);                                             \
                fb[k] = frt_half_to_float(b[i + k]);                                             \
            }                                                                                    \
            F##_vv(fa, fb, fa, m);                                                               \
            for (size_t k = 0; k < m; k++) o[i + k] = frt_float_to_half(fa[k]);                  \
        }                                                                                        \
        return 0;                                                                                \
    }                                                                                            \
    static int NAME##_vs(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const uint16_t *a = a_;                                                                  \
        float y = frt_half_to_float(*(const uint16_t *)b_);                                      \
        uint16_t *o = o_;                                                                        \
        float fa[F16_BLK];                                                                       \
        for (size_t i = 0; i < n; i += F16_BLK) {                                                \
            size_t m = n - i < F16_BLK ? n - i : F16_BLK;                                        \
            for (size_t k = 0; k < m; k++) fa[k] = frt_half_to_float(a[i + k]);                  \
            F##_vs(fa, &y, fa, m);                                                               \
            for (size_t k = 0; k < m; k++) o[i + k] = frt_float_to_half(fa[k]);                  \
        }                                                                                        \
        return 0;                                                                                \
    }                                                                                            \
    static int NAME##_sv(const void *a_, const void *b_, void *o_, size_t n) {                   \
        float x = frt_half_to_float(*(const uint16_t *)a_);                                      \
        const uint16_t *b = b_;                                                                  \
        uint16_t *o = o_;                                                                        \
        float fb[F16_BLK];                                                                       \
        for (size_t i = 0; i < n; i += F16_BLK) {                                                \
            size_t m = n - i < F16_BLK ? n - i : F16_BLK;                                        \
            for (size_t k = 0; k < m; k++) fb[k] = frt_half_to_float(b[i + k]);                  \
            F##_sv(&x, fb, fb, m);                                                               \
            for (size_t k = 0; k < m; k++) o[i + k] = frt_float_to_half(fb[k]);                  \
        }                                                                                        \
        return 0;                                                                                \
    }
F16_LOOPS(add_f16, add_f32)
F16_LOOPS(sub_f16, sub_f32)
F16_LOOPS(mul_f16, mul_f32)
F16_LOOPS(div_f16, div_f32)
F16_LOOPS(min_f16, min_f32)
F16_LOOPS(max_f16, max_f32)
F16_LOOPS(fmod_f16, fmod_f32)

/* Pow: base dtype BD (float16/32/64, int32, int64), exponent dtype ED (any numeric). */
static inline int64_t exp_i64(int32_t ed, const void *p, size_t i) {
    if (ed == FRT_UINT64) {
        uint64_t u = ((const uint64_t *)p)[i];
        return u > (uint64_t)INT64_MAX ? INT64_MAX - (int64_t)(~u & 1) : (int64_t)u;
    }
    return frt_ld_i64(ed, p, (int64_t)i);
}
static inline int pow_one(int32_t bd, int32_t ed, const void *a, size_t ia, const void *b,
                          size_t ib, void *o, size_t io) {
    if (frt_dtype_is_float(bd) || frt_dtype_is_float(ed)) {
        frt_st_f64(bd, o, (int64_t)io,
                   pow(frt_ld_f64(bd, a, (int64_t)ia), frt_ld_f64(ed, b, (int64_t)ib)));
        return 0;
    }
    int bad = 0;
    frt_st_i64(bd, o, (int64_t)io, ipow64(frt_ld_i64(bd, a, (int64_t)ia), exp_i64(ed, b, ib), &bad));
    return bad;
}
#define POW_LOOPS(NAME, BD, ED)                                                                  \
    static int NAME##_vv(const void *a, const void *b, void *o, size_t n) {                      \
        int bad = 0;                                                                             \
        for (size_t i = 0; i < n; i++) bad |= pow_one(BD, ED, a, i, b, i, o, i);                 \
        return bad;                                                                              \
    }                                                                                            \
    static int NAME##_vs(const void *a, const void *b, void *o, size_t n) {                      \
        int bad = 0;                                                                             \
        for (size_t i = 0; i < n; i++) bad |= pow_one(BD, ED, a, i, b, 0, o, i);                 \
        return bad;                                                                              \
    }                                                                                            \
    static int NAME##_sv(const void *a, const void *b, void *o, size_t n) {                      \
        int bad = 0;                                                                             \
        for (size_t i = 0; i < n; i++) bad |= pow_one(BD, ED, a, 0, b, i, o, i);                 \
        return bad;                                                                              \
    }
#define POW_ROW(BS, BD)                                                                          \
    POW_LOOPS(pow_##BS##_i8, BD, FRT_INT8)                                                       \
    POW_LOOPS(pow_##BS##_i16, BD, FRT_INT16)                                                     \
    POW_LOOPS(pow_##BS##_i32, BD, FRT_INT32)                                                     \
    POW_LOOPS(pow_##BS##_i64, BD, FRT_INT64)                                                     \
    POW_LOOPS(pow_##BS##_u8, BD, FRT_UINT8)                                                      \
    POW_LOOPS(pow_##BS##_u16, BD, FRT_UINT16)                                                    \
    POW_LOOPS(pow_##BS##_u32, BD, FRT_UINT32)                                                    \
    POW_LOOPS(pow_##BS##_u64, BD, FRT_UINT64)                                                    \
    POW_LOOPS(pow_##BS##_f16, BD, FRT_FLOAT16)                                                   \
    POW_LOOPS(pow_##BS##_f32, BD, FRT_FLOAT32)                                                   \
    POW_LOOPS(pow_##BS##_f64, BD, FRT_FLOAT64)
POW_ROW(f16, FRT_FLOAT16)
POW_ROW(f32, FRT_FLOAT32)
POW_ROW(f64, FRT_FLOAT64)
POW_ROW(i32, FRT_INT32)
POW_ROW(i64, FRT_INT64)

/* o = b (a is not read): broadcasts one input into the output (variadic ops). */
#define COPY_LOOPS(NAME, T)                                                                      \
    static int NAME##_vv(const void *a, const void *b, void *o, size_t n) {                      \
        (void)a;                                                                                 \
        if (o != b) memmove(o, b, n * sizeof(T));                                                \
        return 0;                                                                                \
    }                                                                                            \
    static int NAME##_vs(const void *a, const void *b, void *o, size_t n) {                      \
        (void)a;                                                                                 \
        T y;                                                                                     \
        memcpy(&y, b, sizeof y);                                                                 \
        for (size_t i = 0; i < n; i++) ((T *)o)[i] = y;                                          \
        return 0;                                                                                \
    }
COPY_LOOPS(copy1, uint8_t)
COPY_LOOPS(copy2, uint16_t)
COPY_LOOPS(copy4, uint32_t)
COPY_LOOPS(copy8, uint64_t)

/* ---- loop tables ---------------------------------------------------------------------------- */

/* Operations of the loop tables. The first FRT_EW_N (add..max) are those of frt_ew_variant. */
enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MIN, OP_MAX, OP_MOD, OP_FMOD, OP_SHL, OP_SHR, OP_N };
static const char *const op_names[OP_N] = {"add", "sub", "mul", "div", "min",
                                           "max", "mod", "fmod", "shl", "shr"};

#define L3(NAME) {NAME##_vv, NAME##_vs, NAME##_sv}
#define L0 {NULL, NULL, NULL}
/* EW(OP, loops): the loops if a selective build keeps operation OP (simd_elementwise.h) */
#define EW(OP, NAME) FRT_EW_L3(FRT_EW_ON_##OP, NAME)
#define INT_ROW_S(S) \
    {EW(ADD, add_##S), EW(SUB, sub_##S), EW(MUL, mul_##S), EW(DIV, div_##S), EW(MIN, min_##S), \
     EW(MAX, max_##S), EW(MOD, mod_##S), EW(MOD, fmod_##S), L0, L0}
#define INT_ROW_U(S) \
    {EW(ADD, add_##S), EW(SUB, sub_##S), EW(MUL, mul_##S), EW(DIV, div_##S), EW(MIN, min_##S), \
     EW(MAX, max_##S), EW(MOD, mod_##S), EW(MOD, fmod_##S), EW(SHIFT, shl_##S), \
     EW(SHIFT, shr_##S)}
#define FLT_ROW(S) \
    {EW(ADD, add_##S), EW(SUB, sub_##S), EW(MUL, mul_##S), EW(DIV, div_##S), EW(MIN, min_##S), \
     EW(MAX, max_##S), L0, EW(MOD, fmod_##S), L0, L0}

/* One row per dtype, indexed by dtype enum (FRT_FLOAT32 = 1 .. FRT_UINT64 = 13) through
 * loops_by_dt; string and bool have none. A selective build keeps the rows of the dtypes its trace
 * saw (FRT_IF_DT, op.h); rows are separate arrays so that left-out dtypes take no table space. */
FRT_IF_DT(float32, static const frt_bin_loops row_f32[OP_N] = FLT_ROW(f32);)
FRT_IF_DT(uint8, static const frt_bin_loops row_u8[OP_N] = INT_ROW_U(u8);)
FRT_IF_DT(int8, static const frt_bin_loops row_i8[OP_N] = INT_ROW_S(i8);)
FRT_IF_DT(uint16, static const frt_bin_loops row_u16[OP_N] = INT_ROW_U(u16);)
FRT_IF_DT(int16, static const frt_bin_loops row_i16[OP_N] = INT_ROW_S(i16);)
FRT_IF_DT(int32, static const frt_bin_loops row_i32[OP_N] = INT_ROW_S(i32);)
FRT_IF_DT(int64, static const frt_bin_loops row_i64[OP_N] = INT_ROW_S(i64);)
FRT_IF_DT(float16, static const frt_bin_loops row_f16[OP_N] = FLT_ROW(f16);)
FRT_IF_DT(float64, static const frt_bin_loops row_f64[OP_N] = FLT_ROW(f64);)
FRT_IF_DT(uint32, static const frt_bin_loops row_u32[OP_N] = INT_ROW_U(u32);)
FRT_IF_DT(uint64, static const frt_bin_loops row_u64[OP_N] = INT_ROW_U(u64);)
static const frt_bin_loops *const loops_by_dt[14] = {
    FRT_IF_DT(float32, [FRT_FLOAT32] = row_f32,) FRT_IF_DT(uint8, [FRT_UINT8] = row_u8,)
    FRT_IF_DT(int8, [FRT_INT8] = row_i8,) FRT_IF_DT(uint16, [FRT_UINT16] = row_u16,)
    FRT_IF_DT(int16, [FRT_INT16] = row_i16,) FRT_IF_DT(int32, [FRT_INT32] = row_i32,)
    FRT_IF_DT(int64, [FRT_INT64] = row_i64,) FRT_IF_DT(float16, [FRT_FLOAT16] = row_f16,)
    FRT_IF_DT(float64, [FRT_FLOAT64] = row_f64,) FRT_IF_DT(uint32, [FRT_UINT32] = row_u32,)
    FRT_IF_DT(uint64, [FRT_UINT64] = row_u64,)
};

#define POW_ROW_T(BS)                                                                            \
    {FRT_IF_DT(int8, [FRT_INT8] = L3(pow_##BS##_i8),)                                            \
     FRT_IF_DT(int16, [FRT_INT16] = L3(pow_##BS##_i16),)                                         \
     FRT_IF_DT(int32, [FRT_INT32] = L3(pow_##BS##_i32),)                                         \
     FRT_IF_DT(int64, [FRT_INT64] = L3(pow_##BS##_i64),)                                         \
     FRT_IF_DT(uint8, [FRT_UINT8] = L3(pow_##BS##_u8),)                                          \
     FRT_IF_DT(uint16, [FRT_UINT16] = L3(pow_##BS##_u16),)                                       \
     FRT_IF_DT(uint32, [FRT_UINT32] = L3(pow_##BS##_u32),)                                       \
     FRT_IF_DT(uint64, [FRT_UINT64] = L3(pow_##BS##_u64),)                                       \
     FRT_IF_DT(float16, [FRT_FLOAT16] = L3(pow_##BS##_f16),)                                     \
     FRT_IF_DT(float32, [FRT_FLOAT32] = L3(pow_##BS##_f32),)                                     \
     FRT_IF_DT(float64, [FRT_FLOAT64] = L3(pow_##BS##_f64),)}
/* [base dtype][exponent dtype] */
static const frt_bin_loops pow_loops[14][14] = {
    FRT_IF_DT(float16, [FRT_FLOAT16] = POW_ROW_T(f16),)
    FRT_IF_DT(float32, [FRT_FLOAT32] = POW_ROW_T(f32),)
    FRT_IF_DT(float64, [FRT_FLOAT64] = POW_ROW_T(f64),)
    FRT_IF_DT(int32, [FRT_INT32] = POW_ROW_T(i32),) FRT_IF_DT(int64, [FRT_INT64] = POW_ROW_T(i64),)
};

static const frt_bin_loops loops_f32_portable[FRT_EW_N] = {
    EW(ADD, add_f32), EW(SUB, sub_f32), EW(MUL, mul_f32), EW(DIV, div_f32), EW(MIN, min_f32),
    EW(MAX, max_f32)};

/* Float32 loop variants, best tier first. */
static const frt_ew_variant ew_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512, "_avx512", frt_ew_f32_avx512},
#endif
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "_avx2", frt_ew_f32_avx2},
#endif
#endif
    {FRT_ISA_PORTABLE, "", loops_f32_portable},
};

const frt_ew_variant *frt_ew_variant_get(frt_isa cap) { return FRT_PICK_VARIANT(ew_variants, cap); }

static const char *dt_short(int32_t dt) {
    switch (dt) {
    case FRT_FLOAT32: return "f32";
    case FRT_FLOAT64: return "f64";
    case FRT_FLOAT16: return "f16";
    case FRT_INT8: return "i8";
    case FRT_INT16: return "i16";
    case FRT_INT32: return "i32";
    case FRT_INT64: return "i64";
    case FRT_UINT8: return "u8";
    case FRT_UINT16: return "u16";
    case FRT_UINT32: return "u32";
    case FRT_UINT64: return "u64";
    default: return "?";
    }
}

static bool dt_numeric(int32_t dt) { return frt_dtype_is_float(dt) || frt_dtype_is_int(dt); }

/* ---- params and shared run-time pieces ---------------------------------------------------- */

typedef struct ew_params {
    frt_bin_loops L;
    frt_clip_fn act; /* fused activation on the float32 output, or NULL */
    float lo, hi;
    size_t ea, eb, eo; /* element sizes of a, b and out */
    int side;  /* scalar / scalar_const / chan / row: which input is the small one (0 or 1) */
    int bpad;  /* opset < 7 broadcast=1: 1-dims appended to b's dims to align it at axis */
    const char *bad_msg; /* failure message of an invalid element pair (zero divisor) */
    union {
        double f64;
        int64_t i64;
        unsigned char bytes[8];
    } sc; /* scalar_const: the constant's value */
} ew_params;

static frt_status bad_pair(const frt_step *s, const ew_params *p) {
    return frt_step_fail(s, FRT_ERR_RUNTIME, "%s", p->bad_msg ? p->bad_msg : "invalid operands");
}

/* Flat job: o[i] = a[i*as] op b[i*bs] (byte steps: element size or 0). */
typedef struct flat_job {
    const ew_params *p;
    frt_bin_fn f;
    const char *a, *b;
    char *o;
    size_t as, bs;
    atomic_int bad;
} flat_job;

static void flat_range(void *ctx, size_t lo, size_t hi) {
    flat_job *j = ctx;
    char *o = j->o + lo * j->p->eo;
    if (j->f(j->a + lo * j->as, j->b + lo * j->bs, o, hi - lo))
        atomic_store_explicit(&j->bad, 1, memory_order_relaxed);
    if (j->p->act) j->p->act((float *)o, (float *)o, hi - lo, j->p->lo, j->p->hi);
}

static frt_status run_flat(const frt_step *s, frt_exec *x, const ew_params *p, frt_bin_fn f,
                           const void *a, size_t as, const void *b, size_t bs, void *o,
                           size_t n) {
    if (!x->tp || n < 2 * FRT_EW_CHUNK) { /* the common small case: no job, one call */
        int bad = f(a, b, o, n);
        if (p->act) p->act(o, o, n, p->lo, p->hi);
        return bad ? bad_pair(s, p) : FRT_OK;
    }
    flat_job j = {p, f, a, b, o, as, bs, 0};
    frt_ew_parallel(x->tp, n, 1, flat_range, &j);
    return atomic_load(&j.bad) ? bad_pair(s, p) : FRT_OK;
}

/* Block job: out viewed as [outer, mid, inner]; the small input has mid elements and is constant
 * along outer and inner; the big input has the out layout. */
typedef struct block_job {
    const ew_params *p;
    int side; /* which input is the small one */
    const char *big, *small;
    char *o;
    size_t mid, inner, ebig, esm;
    atomic_int bad;
} block_job;

/* inner == 1 ("row"): units are the outer rows of mid elements. */
static void row_range(void *ctx, size_t lo, size_t hi) {
    block_job *j = ctx;
    const ew_params *p = j->p;
    int bad = 0;
    for (size_t r = lo; r < hi; r++) {
        const char *br = j->big + r * j->mid * j->ebig;
        char *o = j->o + r * j->mid * p->eo;
        bad |= j->side ? p->L.vv(br, j->small, o, j->mid) : p->L.vv(j->small, br, o, j->mid);
        if (p->act) p->act((float *)o, (float *)o, j->mid, p->lo, p->hi);
    }
    if (bad) atomic_store_explicit(&j->bad, 1, memory_order_relaxed);
}

/* inner > 1 ("chan"): units are the outer*mid rows of inner elements; row r uses small[r % mid]. */
static void chan_range(void *ctx, size_t lo, size_t hi) {
    block_job *j = ctx;
    const ew_params *p = j->p;
    size_t c = lo % j->mid; /* once per range; then a wrapping counter */
    int bad = 0;
    for (size_t r = lo; r < hi; r++) {
        const char *br = j->big + r * j->inner * j->ebig, *sc = j->small + c * j->esm;
        char *o = j->o + r * j->inner * p->eo;
        bad |= j->side ? p->L.vs(br, sc, o, j->inner) : p->L.sv(sc, br, o, j->inner);
        if (p->act) p->act((float *)o, (float *)o, j->inner, p->lo, p->hi);
        if (++c == j->mid) c = 0;
    }
    if (bad) atomic_store_explicit(&j->bad, 1, memory_order_relaxed);
}

/* Right-aligns sm against out. Succeeds when sm's dims other than 1 form one block [first,last]
 * equal to out's dims there, and sm has more than one element; sets inner = product of out dims
 * after the block. */
static bool block_shape(const frt_value *sm, const frt_value *o, size_t *inner) {
    int off = o->rank - sm->rank;
    if (off < 0 || sm->numel <= 1) return false;
    int first = -1, last = -1;
    for (int i = 0; i < sm->rank; i++)
        if (sm->dims[i] != 1) {
            if (first < 0) first = i;
            last = i;
        }
    for (int i = first; i <= last; i++)
        if (sm->dims[i] != o->dims[i + off]) return false;
    size_t in = 1;
    for (int i = last + 1 + off; i < o->rank; i++) in *= (size_t)o->dims[i];
    *inner = in;
    return true;
}

static frt_status run_block(const frt_step *s, frt_exec *x, const ew_params *p,
                            const frt_value *A, const frt_value *B, frt_value *O, int side,
                            size_t inner) {
    const frt_value *sm = side ? B : A, *bg = side ? A : B;
    block_job j = {p, side, bg->data, sm->data, O->data, (size_t)sm->numel, inner,
                   side ? p->ea : p->eb, side ? p->eb : p->ea, 0};
    size_t units = (size_t)O->numel / (j.mid * inner);
    if (inner == 1)
        frt_ew_parallel(x->tp, units, j.mid, row_range, &j);
    else
        frt_ew_parallel(x->tp, units * j.mid, inner, chan_range, &j);
    return atomic_load(&j.bad) ? bad_pair(s, p) : FRT_OK;
}

/* General broadcasting: out dims coalesced (dims of 1 dropped, neighbours with the same
 * broadcast pattern merged), element strides per input (0 where broadcast). */
typedef struct nd_job {
    const ew_params *p;
    frt_bin_fn f; /* inner loop: vv, vs or sv by the inner strides */
    const char *a, *b;
    char *o;
    int nd;       /* coalesced rank >= 1; the last dim is the inner loop */
    size_t dims[FRT_MAX_RANK], sa[FRT_MAX_RANK], sb[FRT_MAX_RANK];
    atomic_int bad;
} nd_job;

static void nd_range(void *ctx, size_t lo, size_t hi) {
    nd_job *j = ctx;
    const ew_params *p = j->p;
    size_t L = j->dims[j->nd - 1];
    int no = j->nd - 1; /* outer dims */
    size_t idx[FRT_MAX_RANK], oa = 0, ob = 0, rem = lo;
    for (int k = no - 1; k >= 0; k--) { /* once per range */
        idx[k] = rem % j->dims[k];
        rem /= j->dims[k];
        oa += idx[k] * j->sa[k];
        ob += idx[k] * j->sb[k];
    }
    int bad = 0;
    for (size_t r = lo; r < hi; r++) {
        char *o = j->o + r * L * p->eo;
        bad |= j->f(j->a + oa * p->ea, j->b + ob * p->eb, o, L);
        if (p->act) p->act((float *)o, (float *)o, L, p->lo, p->hi);
        for (int k = no - 1; k >= 0; k--) {
            oa += j->sa[k];
            ob += j->sb[k];
            if (++idx[k] < j->dims[k]) break;
            oa -= j->sa[k] * j->dims[k];
            ob -= j->sb[k] * j->dims[k];
            idx[k] = 0;
        }
    }
    if (bad) atomic_store_explicit(&j->bad, 1, memory_order_relaxed);
}

static frt_status run_nd(const frt_step *s, frt_exec *x, const ew_params *p, const frt_value *A,
                         const frt_value *B, frt_value *O) {
    int r = O->rank, fa[FRT_MAX_RANK], fb[FRT_MAX_RANK];
    if (A->rank > r || B->rank > r)
        return frt_step_fail(s, FRT_ERR_INTERNAL, "input rank exceeds output rank");
    nd_job j;
    j.p = p;
    j.a = A->data;
    j.b = B->data;
    j.o = O->data;
    atomic_init(&j.bad, 0);
    int nd = 0;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - A->rank), ib = i - (r - B->rank);
        int64_t od = O->dims[i], ad = ia >= 0 ? A->dims[ia] : 1, bd = ib >= 0 ? B->dims[ib] : 1;
        if ((ad != od && ad != 1) || (bd != od && bd != 1))
            return frt_step_fail(s, FRT_ERR_SHAPE, "input dims do not broadcast to the output");
        if (od == 1) continue;
        int ba = ad == 1, bb = bd == 1;
        if (nd > 0 && fa[nd - 1] == ba && fb[nd - 1] == bb) {
            j.dims[nd - 1] *= (size_t)od;
        } else {
            j.dims[nd] = (size_t)od;
            fa[nd] = ba;
            fb[nd] = bb;
            nd++;
        }
    }
    if (nd == 0) { /* a single element */
        j.dims[0] = 1;
        fa[0] = fb[0] = 0;
        nd = 1;
    }
    size_t acc_a = 1, acc_b = 1;
    for (int k = nd - 1; k >= 0; k--) {
        j.sa[k] = fa[k] ? 0 : acc_a;
        j.sb[k] = fb[k] ? 0 : acc_b;
        if (!fa[k]) acc_a *= j.dims[k];
        if (!fb[k]) acc_b *= j.dims[k];
    }
    j.nd = nd;
    j.f = fa[nd - 1] ? p->L.sv : fb[nd - 1] ? p->L.vs : p->L.vv;
    size_t L = j.dims[nd - 1];
    frt_ew_parallel(x->tp, (size_t)O->numel / L, L, nd_range, &j);
    return atomic_load(&j.bad) ? bad_pair(s, p) : FRT_OK;
}

/* Run-time dispatch over the patterns. */
static frt_status run_any(const frt_step *s, frt_exec *x, const ew_params *p, const frt_value *A,
                          const frt_value *B, frt_value *O) {
    size_t n = (size_t)O->numel, inner;
    if (n == 0) return FRT_OK;
    if (A->numel == O->numel && B->numel == O->numel)
        return run_flat(s, x, p, p->L.vv, A->data, p->ea, B->data, p->eb, O->data, n);
    if (B->numel == 1 && A->numel == O->numel)
        return run_flat(s, x, p, p->L.vs, A->data, p->ea, B->data, 0, O->data, n);
    if (A->numel == 1 && B->numel == O->numel)
        return run_flat(s, x, p, p->L.sv, A->data, 0, B->data, p->eb, O->data, n);
    if (A->numel == O->numel && block_shape(B, O, &inner))
        return run_block(s, x, p, A, B, O, 1, inner);
    if (B->numel == O->numel && block_shape(A, O, &inner))
        return run_block(s, x, p, A, B, O, 0, inner);
    return run_nd(s, x, p, A, B, O);
}

/* ---- binary kernels ------------------------------------------------------------------------ */

/* A, B, O of a binary step; B padded with 1-dims (legacy axis broadcast) into *tmp if needed. */
static void bin_values(const frt_step *s, frt_exec *x, const ew_params *p, const frt_value **A,
                       const frt_value **B, frt_value **O, frt_value *tmp) {
    *A = &x->values[s->in[0]];
    *B = &x->values[s->in[1]];
    *O = &x->values[s->out[0]];
    if (p->bpad > 0 && (*B)->rank + p->bpad <= FRT_MAX_RANK) {
        *tmp = **B;
        for (int i = 0; i < p->bpad; i++) tmp->dims[tmp->rank++] = 1;
        *B = tmp;
    }
}

#define BIN_VALUES(s, x, p)                                                                      \
    const frt_value *A, *B;                                                                      \
    frt_value *O, Btmp_;                                                                         \
    bin_values(s, x, p, &A, &B, &O, &Btmp_)

static frt_status k_same(const frt_step *s, frt_exec *x) {
    const ew_params *p = s->k.params;
    BIN_VALUES(s, x, p);
    if (A->numel != O->numel || B->numel != O->numel) return run_any(s, x, p, A, B, O);
    if (O->numel == 0) return FRT_OK;
    return run_flat(s, x, p, p->L.vv, A->data, p->ea, B->data, p->eb, O->data, (size_t)O->numel);
}

static frt_status k_scalar(const frt_step *s, frt_exec *x) {
    const ew_params *p = s->k.params;
    BIN_VALUES(s, x, p);
    const frt_value *sv = p->side ? B : A, *vv = p->side ? A : B;
    if (sv->numel != 1 || vv->numel != O->numel) return run_any(s, x, p, A, B, O);
    if (O->numel == 0) return FRT_OK;
    if (p->side)
        return run_flat(s, x, p, p->L.vs, A->data, p->ea, B->data, 0, O->data, (size_t)O->numel);
    return run_flat(s, x, p, p->L.sv, A->data, 0, B->data, p->eb, O->data, (size_t)O->numel);
}

/* The constant has one element, so out has the other input's layout whatever its shape. */
static frt_status k_scalar_const(const frt_step *s, frt_exec *x) {
    const ew_params *p = s->k.params;
    BIN_VALUES(s, x, p);
    const frt_value *vv = p->side ? A : B;
    if (vv->numel != O->numel) return run_any(s, x, p, A, B, O); /* cannot happen after infer */
    if (O->numel == 0) return FRT_OK;
    if (p->side)
        return run_flat(s, x, p, p->L.vs, vv->data, p->ea, p->sc.bytes, 0, O->data,
                        (size_t)O->numel);
    return run_flat(s, x, p, p->L.sv, p->sc.bytes, 0, vv->data, p->eb, O->data, (size_t)O->numel);
}

static frt_status k_block(const frt_step *s, frt_exec *x) {
    const ew_params *p = s->k.params;
    BIN_VALUES(s, x, p);
    const frt_value *sm = p->side ? B : A, *bg = p->side ? A : B;
    size_t inner;
    if (O->numel == 0) return FRT_OK;
    if (bg->numel != O->numel || !block_shape(sm, O, &inner)) return run_any(s, x, p, A, B, O);
    return run_block(s, x, p, A, B, O, p->side, inner);
}

static frt_status k_nd(const frt_step *s, frt_exec *x) {
    const ew_params *p = s->k.params;
    BIN_VALUES(s, x, p);
    if (O->numel == 0) return FRT_OK;
    return run_nd(s, x, p, A, B, O);
}

/* Pow of float32 by a constant scalar exponent: a unary loop over the base. */
typedef struct upow_params {
    frt_unary_fn f;
} upow_params;

typedef struct upow_job {
    frt_unary_fn f;
    const float *a;
    float *o;
} upow_job;

static void upow_range(void *ctx, size_t lo, size_t hi) {
    upow_job *j = ctx;
    j->f(j->a + lo, j->o + lo, hi - lo);
}

static frt_status k_pow_unary(const frt_step *s, frt_exec *x) {
    const upow_params *p = s->k.params;
    const frt_value *A = &x->values[s->in[0]];
    frt_value *O = &x->values[s->out[0]];
    size_t n = (size_t)O->numel;
    if ((size_t)A->numel != n)
        return frt_step_fail(s, FRT_ERR_SHAPE, "base and output sizes differ");
    upow_job j = {p->f, A->data, O->data};
    frt_ew_parallel(x->tp, n, 1, upow_range, &j);
    return FRT_OK;
}

/* ---- infer / select of the binary ops -------------------------------------------------------- */

enum { BIN_ARITH, BIN_POW, BIN_MOD, BIN_SHIFT };

/* Legacy (opset < 7) broadcast=1: number of 1-dims to append to b so that numpy broadcasting
 * aligns it at axis; -1 when b does not fit. 0 when not in legacy broadcast mode. */
static int legacy_pad(const frt_op_ctx *c, const frt_value *a, const frt_value *b) {
    if (c->opset >= 7 || !frt_attr_int(c->node, "broadcast", 0)) return 0;
    if (a->rank < 0 || b->rank < 0) return -1;
    int64_t axis = frt_attr_int(c->node, "axis", a->rank - b->rank);
    if (axis < 0) axis += a->rank;
    if (axis < 0 || axis + b->rank > a->rank) return -1;
    for (int i = 0; i < b->rank; i++)
        if (b->dims[i] != 1 && b->dims[i] >= 0 && a->dims[axis + i] >= 0 &&
            b->dims[i] != a->dims[axis + i])
            return -1;
    return (int)(a->rank - axis - b->rank);
}

static frt_status check_dtypes(frt_op_ctx *c, int kind) {
    const frt_value *a = c->in[0], *b = c->in[1];
    int32_t dt = a->dtype;
    if (kind == BIN_POW) {
        if (dt != FRT_FLOAT32 && dt != FRT_FLOAT64 && dt != FRT_FLOAT16 && dt != FRT_INT32 &&
            dt != FRT_INT64)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED,
                               "base dtype %s not supported (float16/32/64, int32, int64)",
                               frt_dtype_name(dt));
        if (!dt_numeric(b->dtype))
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "exponent dtype %s not supported",
                               frt_dtype_name(b->dtype));
        return FRT_OK;
    }
    if (a->dtype != b->dtype)
        return frt_op_fail(c, FRT_ERR_SHAPE, "inputs have different dtypes %s and %s",
                           frt_dtype_name(a->dtype), frt_dtype_name(b->dtype));
    if (kind == BIN_SHIFT) {
        if (dt != FRT_UINT8 && dt != FRT_UINT16 && dt != FRT_UINT32 && dt != FRT_UINT64)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED,
                               "dtype %s not supported (uint8, uint16, uint32, uint64)",
                               frt_dtype_name(dt));
        return FRT_OK;
    }
    if (!dt_numeric(dt))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (numeric dtypes)",
                           frt_dtype_name(dt));
    if (kind == BIN_MOD && frt_dtype_is_float(dt) && frt_attr_int(c->node, "fmod", 0) != 1)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "Mod of %s needs fmod=1", frt_dtype_name(dt));
    return FRT_OK;
}

static frt_status bin_infer(frt_op_ctx *c, int kind) {
    frt_status st = frt_op_check_arity(c, 2, 2, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (!st) st = frt_op_check_input(c, 1, 0);
    if (!st) st = check_dtypes(c, kind);
    if (st) return st;
    const frt_value *a = c->in[0], *b = c->in[1];
    int pad = legacy_pad(c, a, b);
    if (pad < 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "input 1 does not fit input 0 at the broadcast axis");
    frt_value bt;
    if (pad > 0) {
        bt = *b;
        for (int i = 0; i < pad; i++) bt.dims[bt.rank++] = 1;
        b = &bt;
    }
    int32_t rank;
    int64_t dims[FRT_MAX_RANK];
    st = frt_broadcast_shape(c, a, b, &rank, dims);
    if (st) return st;
    frt_op_set_shape(c->out[0], a->dtype, rank, dims);
    return FRT_OK;
}

static frt_status arith_infer(frt_op_ctx *c) { return bin_infer(c, BIN_ARITH); }
static frt_status pow_infer(frt_op_ctx *c) { return bin_infer(c, BIN_POW); }
static frt_status mod_infer(frt_op_ctx *c) { return bin_infer(c, BIN_MOD); }
static frt_status shift_infer(frt_op_ctx *c) {
    const char *dir = frt_attr_string(c->node, "direction", NULL);
    if (!dir || (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0))
        return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute direction must be LEFT or RIGHT");
    return bin_infer(c, BIN_SHIFT);
}

enum { PAT_SAME, PAT_SCALAR_CONST, PAT_SCALAR, PAT_CHAN, PAT_ROW, PAT_ND };
static const char *const pat_names[] = {"same", "scalar_const", "scalar", "chan", "row",
                                        "bcast_nd"};
static const frt_kernel_fn pat_fns[] = {k_same, k_scalar_const, k_scalar, k_block, k_block, k_nd};

/* Guesses the pattern from load-time shapes (dims may be -1); kernels verify at run time. */
static int guess_pattern(const frt_value *a, const frt_value *b, int *side) {
    *side = 1;
    if (b->numel == 1 && b->data) return PAT_SCALAR_CONST;
    if (a->numel == 1 && a->data) {
        *side = 0;
        return PAT_SCALAR_CONST;
    }
    if (b->numel == 1) return PAT_SCALAR;
    if (a->numel == 1) {
        *side = 0;
        return PAT_SCALAR;
    }
    if (a->rank < 0 || b->rank < 0) return PAT_SAME;
    int r = a->rank > b->rank ? a->rank : b->rank;
    int64_t ad[FRT_MAX_RANK], bd[FRT_MAX_RANK];
    bool a_bc = false, b_bc = false;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        ad[i] = ia >= 0 ? a->dims[ia] : 1;
        bd[i] = ib >= 0 ? b->dims[ib] : 1;
        if (ad[i] == 1 && bd[i] != 1) a_bc = true;
        if (bd[i] == 1 && ad[i] != 1) b_bc = true;
    }
    if (!a_bc && !b_bc) return PAT_SAME;
    if (a_bc && b_bc) return PAT_ND;
    *side = b_bc ? 1 : 0;
    const int64_t *sm = b_bc ? bd : ad, *bg = b_bc ? ad : bd;
    int first = -1, last = -1;
    for (int i = 0; i < r; i++)
        if (sm[i] != 1) {
            if (first < 0) first = i;
            last = i;
        }
    if (first < 0) return PAT_ND; /* unreachable: numel would be 1 */
    for (int i = first; i <= last; i++)
        if (sm[i] == 1 && bg[i] != 1) return PAT_ND; /* a broadcast dim inside the block */
    return last == r - 1 ? PAT_ROW : PAT_CHAN;
}

/* Kernel name in the model arena: "<op>_<dtype>_<pattern><act><isa suffix>". */
static const char *kname(frt_op_ctx *c, const char *op, const char *dt, const char *pat,
                         const char *act, const char *isa) {
    char buf[96];
    snprintf(buf, sizeof buf, "%s_%s_%s%s%s", op, dt, pat, act, isa);
    return frt_arena_strdup(c->arena, buf);
}

/* Fills loops, element sizes and activation of p for operation op on dtype dt; *isa_sfx gets the
 * tier suffix of float32 loops. */
static frt_status fill_params(frt_op_ctx *c, ew_params *p, int op, int32_t dt,
                              const char **isa_sfx) {
    *isa_sfx = "";
    if (dt <= 0 || dt >= 14 || !loops_by_dt[dt] || !loops_by_dt[dt][op].vv)
        return frt_op_dtype_missing(c, dt);
    if (dt == FRT_FLOAT32 && op < FRT_EW_N) {
        const frt_ew_variant *v = frt_ew_variant_get(c->isa);
        p->L = v->f32[op];
        *isa_sfx = v->suffix;
    } else {
        p->L = loops_by_dt[dt][op];
    }
    p->ea = p->eb = p->eo = frt_dtype_size(dt);
    if (op == OP_DIV) p->bad_msg = "integer division by zero";
    if (op == OP_MOD || op == OP_FMOD) p->bad_msg = "integer modulo by zero";
    const frt_act *act = &c->node->act;
    if (act->kind != FRT_ACT_NONE) {
        if (dt != FRT_FLOAT32)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "fused activation on a %s output",
                               frt_dtype_name(dt));
        p->act = frt_act_variant_get(c->isa)->clip;
        p->lo = act->kind == FRT_ACT_RELU ? 0.0f : act->lo;
        p->hi = act->kind == FRT_ACT_RELU ? __builtin_inff() : act->hi;
    }
    return FRT_OK;
}

static const char *act_suffix(const frt_op_ctx *c) {
    return c->node->act.kind == FRT_ACT_RELU ? "_relu" : c->node->act.kind == FRT_ACT_CLIP ? "_clip" : "";
}

static frt_status bin_select_loops(frt_op_ctx *c, frt_kernel *k, ew_params *p, const char *opname,
                                   const char *dtname, const char *isa) {
    const frt_value *a = c->in[0], *b = c->in[1];
    int pad = legacy_pad(c, a, b);
    if (pad < 0) return frt_op_fail(c, FRT_ERR_SHAPE, "input 1 does not fit the broadcast axis");
    p->bpad = pad;
    frt_value bt;
    if (pad > 0) {
        bt = *b;
        for (int i = 0; i < pad; i++) bt.dims[bt.rank++] = 1;
        b = &bt;
    }
    int side;
    int pat = guess_pattern(a, b, &side);
    p->side = side;
    if (pat == PAT_SCALAR_CONST) memcpy(p->sc.bytes, (side ? b : a)->data, side ? p->eb : p->ea);
    k->name = kname(c, opname, dtname, pat_names[pat], act_suffix(c), isa);
    if (!k->name) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    k->fn = pat_fns[pat];
    k->params = p;
    k->scratch = NULL;
    k->flags = FRT_K_INPLACE;
    return FRT_OK;
}

static ew_params *new_params(frt_op_ctx *c, size_t n) {
    ew_params *p = frt_arena_alloc(c->arena, n * sizeof *p, 64);
    if (!p) frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    else memset(p, 0, n * sizeof *p);
    return p;
}

static frt_status arith_select(frt_op_ctx *c, frt_kernel *k, int op) {
    int32_t dt = c->in[0]->dtype;
    ew_params *p = new_params(c, 1);
    if (!p) return FRT_ERR_NO_MEMORY;
    const char *isa;
    frt_status st = fill_params(c, p, op, dt, &isa);
    if (st) return st;
    return bin_select_loops(c, k, p, op_names[op], dt_short(dt), isa);
}

static frt_status add_select(frt_op_ctx *c, frt_kernel *k) { return arith_select(c, k, OP_ADD); }
static frt_status sub_select(frt_op_ctx *c, frt_kernel *k) { return arith_select(c, k, OP_SUB); }
static frt_status mul_select(frt_op_ctx *c, frt_kernel *k) { return arith_select(c, k, OP_MUL); }
static frt_status div_select(frt_op_ctx *c, frt_kernel *k) { return arith_select(c, k, OP_DIV); }

static frt_status mod_select(frt_op_ctx *c, frt_kernel *k) {
    int64_t fm = frt_attr_int(c->node, "fmod", 0);
    if (fm != 0 && fm != 1) return frt_op_fail(c, FRT_ERR_MALFORMED, "fmod must be 0 or 1");
    return arith_select(c, k, fm ? OP_FMOD : OP_MOD);
}

static frt_status shift_select(frt_op_ctx *c, frt_kernel *k) {
    const char *dir = frt_attr_string(c->node, "direction", "");
    return arith_select(c, k, strcmp(dir, "LEFT") == 0 ? OP_SHL : OP_SHR);
}

static frt_status pow_select(frt_op_ctx *c, frt_kernel *k) {
    const frt_value *a = c->in[0], *b = c->in[1];
    int32_t bd = a->dtype, ed = b->dtype;
    /* float32 ^ constant scalar 2, 3, 0.5 or 1: a unary loop (the tier's). */
    if (bd == FRT_FLOAT32 && b->data && b->numel == 1 && frt_dtype_is_float(ed) &&
        c->node->act.kind == FRT_ACT_NONE && c->opset >= 7) {
        double e = frt_ld_f64(ed, b->data, 0);
        int which = e == 2.0 ? FRT_UN_SQUARE : e == 3.0 ? FRT_UN_CUBE
                    : e == 0.5 ? FRT_UN_POW_HALF : e == 1.0 ? FRT_UN_IDENTITY : -1;
        if (which >= 0) {
            static const char *const nm[] = {[FRT_UN_SQUARE] = "sq", [FRT_UN_CUBE] = "cube",
                                             [FRT_UN_POW_HALF] = "sqrt", [FRT_UN_IDENTITY] = "one"};
            upow_params *up = frt_arena_alloc(c->arena, sizeof *up, 64);
            if (!up) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
            const frt_un_variant *v = frt_un_variant_get(c->isa);
            up->f = v->f[which];
            char buf[64];
            snprintf(buf, sizeof buf, "pow_f32_%s%s", nm[which], v->suffix);
            k->name = frt_arena_strdup(c->arena, buf);
            if (!k->name) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
            k->fn = k_pow_unary;
            k->params = up;
            k->flags = FRT_K_INPLACE;
            return FRT_OK;
        }
    }
    ew_params *p = new_params(c, 1);
    if (!p) return FRT_ERR_NO_MEMORY;
    if (bd <= 0 || bd >= 14 || ed <= 0 || ed >= 14 || !pow_loops[bd][ed].vv)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "Pow of %s by %s not supported",
                           frt_dtype_name(bd), frt_dtype_name(ed));
    p->L = pow_loops[bd][ed];
    p->ea = p->eo = frt_dtype_size(bd);
    p->eb = frt_dtype_size(ed);
    p->bad_msg = "integer zero raised to a negative power";
    if (c->node->act.kind != FRT_ACT_NONE) {
        if (bd != FRT_FLOAT32)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "fused activation on a %s output",
                               frt_dtype_name(bd));
        p->act = frt_act_variant_get(c->isa)->clip;
        p->lo = c->node->act.kind == FRT_ACT_RELU ? 0.0f : c->node->act.lo;
        p->hi = c->node->act.kind == FRT_ACT_RELU ? __builtin_inff() : c->node->act.hi;
    }
    char dn[16];
    snprintf(dn, sizeof dn, "%s_%s", dt_short(bd), dt_short(ed));
    return bin_select_loops(c, k, p, "pow", dn, "");
}

/* ---- variadic: Min Max Sum Mean ---------------------------------------------------------------- */

enum { VAR_MIN, VAR_MAX, VAR_SUM, VAR_MEAN };

/* p[0]: the pairwise operation; p[1]: broadcast copy (o = b); p[2]: Mean's division. */
typedef struct var_params {
    ew_params op, copy, scale;
    bool mean;
} var_params;

static frt_status k_variadic(const frt_step *s, frt_exec *x) {
    const var_params *vp = s->k.params;
    frt_value *O = &x->values[s->out[0]];
    int n = s->n_in;
    if (O->numel == 0) return FRT_OK;
    const frt_value *I0 = &x->values[s->in[0]];
    frt_status st;
    int next = 1;
    if (n == 1) {
        st = run_any(s, x, &vp->copy, O, I0, O);
    } else {
        const frt_value *I1 = &x->values[s->in[1]];
        /* in0 op in1 straight into out when their broadcast fills it, else copy in0 first */
        int64_t m = 1;
        int r = I0->rank > I1->rank ? I0->rank : I1->rank;
        for (int i = 0; i < r; i++) {
            int i0 = i - (r - I0->rank), i1 = i - (r - I1->rank);
            int64_t d0 = i0 >= 0 ? I0->dims[i0] : 1, d1 = i1 >= 0 ? I1->dims[i1] : 1;
            m *= d0 == 1 ? d1 : d0;
        }
        if (m == O->numel && r == O->rank) {
            st = run_any(s, x, &vp->op, I0, I1, O);
            next = 2;
        } else {
            st = run_any(s, x, &vp->copy, O, I0, O);
        }
    }
    for (int i = next; i < n && !st; i++) st = run_any(s, x, &vp->op, O, &x->values[s->in[i]], O);
    if (!st && vp->mean) {
        frt_value one = {0};
        one.rank = 0;
        one.numel = 1;
        one.data = (void *)vp->scale.sc.bytes;
        st = run_any(s, x, &vp->scale, O, &one, O);
    }
    return st;
}

static frt_status var_infer(frt_op_ctx *c, int kind) {
    frt_status st = frt_op_check_arity(c, 1, 1 << 20, 1, 1);
    if (st) return st;
    for (int i = 0; i < c->n_in && !st; i++) st = frt_op_check_input(c, i, 0);
    if (st) return st;
    int32_t dt = c->in[0]->dtype;
    for (int i = 1; i < c->n_in; i++)
        if (c->in[i]->dtype != dt)
            return frt_op_fail(c, FRT_ERR_SHAPE, "inputs have different dtypes %s and %s",
                               frt_dtype_name(dt), frt_dtype_name(c->in[i]->dtype));
    if (kind == VAR_SUM || kind == VAR_MEAN ? !frt_dtype_is_float(dt) : !dt_numeric(dt))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (%s)",
                           frt_dtype_name(dt),
                           kind >= VAR_SUM ? "float16, float32, float64" : "numeric dtypes");
    frt_value acc = *c->in[0];
    for (int i = 1; i < c->n_in; i++) {
        int32_t rank;
        int64_t dims[FRT_MAX_RANK];
        st = frt_broadcast_shape(c, &acc, c->in[i], &rank, dims);
        if (st) return st;
        frt_value_set_shape(&acc, dt, rank, dims);
        if (rank < 0) break;
    }
    frt_op_set_shape(c->out[0], dt, acc.rank, acc.dims);
    return FRT_OK;
}

static frt_status var_select(frt_op_ctx *c, frt_kernel *k, int kind) {
    int32_t dt = c->in[0]->dtype;
    var_params *vp = frt_arena_alloc(c->arena, sizeof *vp, 64);
    if (!vp) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    memset(vp, 0, sizeof *vp);
    static const int ops[] = {OP_MIN, OP_MAX, OP_ADD, OP_ADD};
    static const char *const names[] = {"min", "max", "sum", "mean"};
    const char *isa;
    if (c->node->act.kind != FRT_ACT_NONE)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "fused activation not supported");
    frt_status st = fill_params(c, &vp->op, ops[kind], dt, &isa);
    if (st) return st;
    size_t es = frt_dtype_size(dt);
    vp->copy.ea = vp->copy.eb = vp->copy.eo = es;
    vp->copy.L.vv = vp->copy.L.sv = es == 1 ? copy1_vv : es == 2 ? copy2_vv : es == 4 ? copy4_vv
                                                                                   : copy8_vv;
    vp->copy.L.vs = es == 1 ? copy1_vs : es == 2 ? copy2_vs : es == 4 ? copy4_vs : copy8_vs;
    if (kind == VAR_MEAN) {
        const char *isa2;
        st = fill_params(c, &vp->scale, OP_DIV, dt, &isa2);
        if (st) return st;
        vp->mean = true;
        double cnt = c->n_in;
        if (dt == FRT_FLOAT32) {
            float f = (float)cnt;
            memcpy(vp->scale.sc.bytes, &f, 4);
        } else if (dt == FRT_FLOAT16) {
            uint16_t h = frt_float_to_half((float)cnt);
            memcpy(vp->scale.sc.bytes, &h, 2);
        } else {
            vp->scale.sc.f64 = cnt;
        }
    }
    k->name = kname(c, names[kind], dt_short(dt), "variadic", "", isa);
    if (!k->name) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    k->fn = k_variadic;
    k->params = vp;
    k->flags = FRT_K_INPLACE;
    return FRT_OK;
}

static frt_status min_infer(frt_op_ctx *c) { return var_infer(c, VAR_MIN); }
static frt_status max_infer(frt_op_ctx *c) { return var_infer(c, VAR_MAX); }
static frt_status sum_infer(frt_op_ctx *c) { return var_infer(c, VAR_SUM); }
static frt_status mean_infer(frt_op_ctx *c) { return var_infer(c, VAR_MEAN); }
static frt_status min_select(frt_op_ctx *c, frt_kernel *k) { return var_select(c, k, VAR_MIN); }
static frt_status max_select(frt_op_ctx *c, frt_kernel *k) { return var_select(c, k, VAR_MAX); }
static frt_status sum_select(frt_op_ctx *c, frt_kernel *k) { return var_select(c, k, VAR_SUM); }
static frt_status mean_select(frt_op_ctx *c, frt_kernel *k) { return var_select(c, k, VAR_MEAN); }

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(elementwise, Add, arith_infer, add_select);
FRT_OP_IMPL(elementwise, Sub, arith_infer, sub_select);
FRT_OP_IMPL(elementwise, Mul, arith_infer, mul_select);
FRT_OP_IMPL(elementwise, Div, arith_infer, div_select);
FRT_OP_IMPL(elementwise, Pow, pow_infer, pow_select);
FRT_OP_IMPL(elementwise, Mod, mod_infer, mod_select);
FRT_OP_IMPL(elementwise, BitShift, shift_infer, shift_select);
FRT_OP_IMPL(elementwise, Min, min_infer, min_select);
FRT_OP_IMPL(elementwise, Max, max_infer, max_select);
FRT_OP_IMPL(elementwise, Sum, sum_infer, sum_select);
FRT_OP_IMPL(elementwise, Mean, mean_infer, mean_select);

/* ---- ahead-of-time programs (src/ops/aot.h) ------------------------------------------------ */

#include "aot.h"

#if FRT_AOT_SAVE
/* Add, Sub, Mul, Div (arith_select): the pattern kernel (index in pat_fns), the operation and
 * dtype, the tier of the float32 loops (-1: loops_by_dt), the fused activation's clip tier (-1:
 * none) and bounds, side, bpad and the scalar constant's bytes. */
frt_status frt_aot_save_arith(const frt_step *s, frt_aot_w *w) {
    const ew_params *p = s->k.params;
    int pat = -1;
    for (int i = 0; i < (int)(sizeof pat_fns / sizeof *pat_fns); i++)
        if (s->k.fn == pat_fns[i]) pat = i;
    if (pat < 0 || !p) return frt_aot_unsupported(s, "not an elementwise pattern kernel");
    int op = -1, dt = -1, tier = -1;
    for (size_t i = 0; i < sizeof ew_variants / sizeof *ew_variants && op < 0; i++)
        for (int o = 0; o < FRT_EW_N && op < 0; o++)
            if (!memcmp(&ew_variants[i].f32[o], &p->L, sizeof p->L)) {
                op = o;
                dt = FRT_FLOAT32;
                tier = (int)ew_variants[i].isa;
            }
    for (int d = 1; d < 14 && op < 0; d++)
        for (int o = 0; loops_by_dt[d] && o < OP_N && op < 0; o++)
            if (!memcmp(&loops_by_dt[d][o], &p->L, sizeof p->L)) {
                op = o;
                dt = d;
            }
    if (op < 0 || !p->L.vv) return frt_aot_unsupported(s, "loops not in the elementwise tables");
    int act = -1;
    for (int t = FRT_ISA_PORTABLE; p->act && t <= FRT_ISA_AVX512 && act < 0; t++) {
        const frt_act_variant *av = frt_act_variant_get((frt_isa)t);
        if (av->clip == p->act) act = (int)av->isa;
    }
    if (p->act && act < 0) return frt_aot_unsupported(s, "fused activation not in the table");
    if (p->ea != frt_dtype_size(dt) || p->eb != p->ea || p->eo != p->ea)
        return frt_aot_unsupported(s, "mixed element sizes");
    frt_aot_put_i32(w, pat);
    frt_aot_put_i32(w, op);
    frt_aot_put_i32(w, dt);
    frt_aot_put_i32(w, tier);
    frt_aot_put_i32(w, act);
    frt_aot_put_f32(w, p->lo);
    frt_aot_put_f32(w, p->hi);
    frt_aot_put_i32(w, p->side);
    frt_aot_put_i32(w, p->bpad);
    frt_aot_put(w, p->sc.bytes, sizeof p->sc.bytes);
    return FRT_OK;
}
#endif

#if FRT_AOT_LOAD
/* o is the broadcast of a and b (b with pad 1-dims appended), all dims known. */
static bool aot_bcast_ok(const frt_value *a, const frt_value *b0, int pad, const frt_value *o) {
    frt_value b = *b0;
    if (b.rank + pad > FRT_MAX_RANK) return false;
    for (int i = 0; i < pad; i++) b.dims[b.rank++] = 1;
    int r = a->rank > b.rank ? a->rank : b.rank;
    if (o->rank != r) return false;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b.rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b.dims[ib] : 1;
        int64_t d = da == db ? da : da == 1 ? db : db == 1 ? da : -1;
        if (d < 0 || o->dims[i] != d) return false;
    }
    return true;
}

frt_status frt_aot_load_arith(frt_aot_r *r, frt_isa isa, const frt_step *s,
                              const frt_value *values, frt_kernel *k) {
    int pat = frt_aot_int_in(r, 0, (int)(sizeof pat_fns / sizeof *pat_fns) - 1);
    int op = frt_aot_int_in(r, 0, OP_N - 1);
    int dt = frt_aot_int_in(r, 1, 13);
    int tier = frt_aot_int_in(r, -1, (int32_t)isa); /* tiers never above the program's */
    int act = frt_aot_int_in(r, -1, (int32_t)isa);
    ew_params *p = frt_aot_params(r, sizeof *p);
    if (!p) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    p->lo = frt_aot_f32(r);
    p->hi = frt_aot_f32(r);
    p->side = frt_aot_int_in(r, 0, 1);
    p->bpad = frt_aot_int_in(r, 0, FRT_MAX_RANK);
    frt_aot_get(r, p->sc.bytes, sizeof p->sc.bytes);
    if (r->bad) return FRT_ERR_MALFORMED;
    if (s->n_in != 2 || s->n_out != 1 || s->in[0] < 0 || s->in[1] < 0 ||
        values[s->in[0]].dtype != dt || values[s->in[1]].dtype != dt ||
        (tier >= 0) != (dt == FRT_FLOAT32 && op < FRT_EW_N))
        return frt_error(FRT_ERR_MALFORMED, "elementwise step does not fit its kernel");
    if (values[s->out[0]].dtype != dt ||
        !aot_bcast_ok(&values[s->in[0]], &values[s->in[1]], p->bpad, &values[s->out[0]]))
        return frt_error(FRT_ERR_MALFORMED, "elementwise step does not fit its values");
    if (tier >= 0) {
        const frt_ew_variant *v = frt_ew_variant_get((frt_isa)tier);
        if ((int)v->isa != tier)
            return frt_error(FRT_ERR_UNSUPPORTED, "elementwise loops of tier %s not in this build",
                             frt_isa_name((frt_isa)tier));
        p->L = v->f32[op];
    } else if (loops_by_dt[dt]) {
        p->L = loops_by_dt[dt][op];
    }
    if (!p->L.vv)
        return frt_error(FRT_ERR_UNSUPPORTED, "elementwise %s on %s not in this build",
                         op_names[op], frt_dtype_name(dt));
    if (act >= 0) {
        const frt_act_variant *v = frt_act_variant_get((frt_isa)act);
        if ((int)v->isa != act)
            return frt_error(FRT_ERR_UNSUPPORTED, "activation loops of tier %s not in this build",
                             frt_isa_name((frt_isa)act));
        p->act = v->clip;
    }
    p->ea = p->eb = p->eo = frt_dtype_size(dt);
    if (op == OP_DIV) p->bad_msg = "integer division by zero";
    if (op == OP_MOD || op == OP_FMOD) p->bad_msg = "integer modulo by zero";
    k->fn = pat_fns[pat];
    k->params = p;
    k->flags = FRT_K_INPLACE;
    return FRT_OK;
}
#endif
