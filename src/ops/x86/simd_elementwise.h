/* Private interface between the elementwise, activation and cast operators (src/ops/elementwise.c,
 * activation.c, cast.c) and their AVX2/FMA/F16C and AVX-512 variants
 * (src/ops/x86/{elementwise,activation}_{avx2,avx512}.c), plus a small chunked parallel-for
 * they all use.
 *
 * The x86 functions exist only when FRT_HAVE_X86 is 1; they are reached only through the variant
 * tables below, whose entries select picks by ISA tier.
 *
 * Aliasing: every loop below reads element i before writing element i and never touches other
 * indices after writing, so an output may alias an input of the same element size (in place).
 */
#ifndef FRT_OPS_X86_SIMD_ELEMENTWISE_H
#define FRT_OPS_X86_SIMD_ELEMENTWISE_H

#include <stddef.h>
#include <stdint.h>

#include "ops/cpu.h"
#include "util/threadpool.h"

/* Binary loop over n elements of one dtype. a and b point at n elements, or at one element for
 * the scalar side of the vs (b scalar) / sv (a scalar) forms. Returns 0, or nonzero when an
 * integer division met a zero divisor (the output is then unspecified). */
typedef int (*frt_bin_fn)(const void *a, const void *b, void *o, size_t n);
typedef struct frt_bin_loops {
    frt_bin_fn vv, vs, sv;
} frt_bin_loops;

enum { FRT_EW_ADD = 0, FRT_EW_SUB = 1, FRT_EW_MUL = 2, FRT_EW_DIV = 3, FRT_EW_MIN = 4,
       FRT_EW_MAX = 5, FRT_EW_N = 6 };

/* Which operations' loops the tables hold: a selective build (FRT_OPS_SELECTION) keeps those of
 * the ops that reach them (add: Add, Sum, Mean; div: Div, Mean; min / max: Min / Max, also
 * variadic; mod and fmod: Mod; shl and shr: BitShift); the others' entries are {NULL, NULL, NULL}
 * and their loops are not linked. FRT_EW_L3(FRT_EW_ON_ADD, add_f32) is {add_f32_vv, add_f32_vs,
 * add_f32_sv} or the empty entry. */
#ifdef FRT_OPS_SELECTION
#include "ops/op.h"
#define FRT_EW_ON_(x) FRT_EW_ON__(x)
#define FRT_EW_ON__(x) x
#if FRT_OP_BUILT(Add) || FRT_OP_BUILT(Sum) || FRT_OP_BUILT(Mean)
#define FRT_EW_ON_ADD 1
#else
#define FRT_EW_ON_ADD 0
#endif
#define FRT_EW_ON_SUB FRT_OP_BUILT(Sub)
#define FRT_EW_ON_MUL FRT_OP_BUILT(Mul)
#if FRT_OP_BUILT(Div) || FRT_OP_BUILT(Mean)
#define FRT_EW_ON_DIV 1
#else
#define FRT_EW_ON_DIV 0
#endif
#define FRT_EW_ON_MIN FRT_OP_BUILT(Min)
#define FRT_EW_ON_MAX FRT_OP_BUILT(Max)
#define FRT_EW_ON_MOD FRT_OP_BUILT(Mod)
#define FRT_EW_ON_SHIFT FRT_OP_BUILT(BitShift)
#else
#define FRT_EW_ON_ADD 1
#define FRT_EW_ON_SUB 1
#define FRT_EW_ON_MUL 1
#define FRT_EW_ON_DIV 1
#define FRT_EW_ON_MIN 1
#define FRT_EW_ON_MAX 1
#define FRT_EW_ON_MOD 1
#define FRT_EW_ON_SHIFT 1
#endif
#define FRT_EW_L3(on, NAME) FRT_EW_L3_(on, NAME)
#define FRT_EW_L3_(on, NAME) FRT_EW_L3_##on(NAME)
#define FRT_EW_L3_1(NAME) {NAME##_vv, NAME##_vs, NAME##_sv}
#define FRT_EW_L3_0(NAME) {NULL, NULL, NULL}

/* y[i] = min(max(x[i], lo), hi), NaN propagating (a NaN x gives NaN). y may equal x. */
typedef void (*frt_clip_fn)(const float *x, float *y, size_t n, float lo, float hi);
/* y[i] = f(x[i]) for a unary float function. y may equal x. */
typedef void (*frt_unary_fn)(const float *x, float *y, size_t n);

/* Softmax of `rows` contiguous rows of len elements each (len >= 1). y may equal x. */
typedef void (*frt_softmax_rows_fn)(const float *x, float *y, size_t rows, size_t len);

/* ---- kernel variants: one table per family, best tier first (see ops/cpu.h) ---------------
 * Each getter returns the best variant whose tier is <= cap (FRT_PICK_VARIANT). Select passes
 * the op context's tier (ctx->isa); tests pass FRT_ISA_PORTABLE to get the reference loops and
 * frt_cpu_tier() to get the loops this host runs, and compare the two. `suffix` is appended to
 * kernel names ("" portable, "_avx2", "_avx512") so profiles show the tier. */

/* Float32 Add/Sub/Mul/Div/Min/Max loops, indexed by FRT_EW_ADD.. (elementwise.c). Bit-identical
 * across tiers: each lane does the same IEEE operation; Min/Max propagate NaN (any NaN operand
 * gives a NaN). */
typedef struct frt_ew_variant {
    frt_isa isa;
    const char *suffix;
    const frt_bin_loops *f32; /* [FRT_EW_N] */
} frt_ew_variant;
const frt_ew_variant *frt_ew_variant_get(frt_isa cap);

/* Float32 activation loops (activation.c; elementwise.c uses clip for fused activations).
 * Relu, Clip, vmax, vmul are exact; exp-based loops are within ~2e-7 relative of the portable
 * (libm) ones. The strided softmax helpers over n lanes: m[j] = max(m[j], x[j]);
 * y[j] = exp(x[j] - m[j]) and s[j] += y[j]; y[j] *= r[j]. */
typedef struct frt_act_variant {
    frt_isa isa;
    const char *suffix;
    frt_unary_fn relu, sigmoid, tanh;
    frt_clip_fn clip;
    frt_softmax_rows_fn softmax_rows;
    void (*vmax)(float *m, const float *x, size_t n);
    void (*expsub_acc)(const float *x, const float *m, float *y, float *s, size_t n);
    void (*vmul)(float *y, const float *r, size_t n);
} frt_act_variant;
const frt_act_variant *frt_act_variant_get(frt_isa cap);

/* IEEE half <-> float conversion (cast.c), round to nearest even, bit-identical across tiers. */
typedef struct frt_f16_variant {
    frt_isa isa;
    const char *suffix;
    void (*to_f32)(const uint16_t *x, float *y, size_t n);
    void (*from_f32)(const float *x, uint16_t *y, size_t n);
} frt_f16_variant;
const frt_f16_variant *frt_f16_variant_get(frt_isa cap);

/* Elements per parallel task (threadpool.h's cost model decides whether a tensor is split). */
#define FRT_EW_CHUNK ((size_t)16384)

typedef void (*frt_ew_range_fn)(void *ctx, size_t lo, size_t hi);
typedef struct frt_ew_par {
    frt_ew_range_fn fn;
    void *ctx;
    size_t n, chunk;
} frt_ew_par;

static inline void frt_ew_par_task(void *p_, size_t i) {
    const frt_ew_par *p = p_;
    size_t lo = i * p->chunk, hi = lo + p->chunk;
    p->fn(p->ctx, lo, hi < p->n ? hi : p->n);
}

/* Calls fn(ctx, lo, hi) over disjoint ranges covering [0, n) in units of `unit` items, where a
 * unit costs about `unit_elems` elements of work (one float32 read and one written each). Runs
 * inline (one call) when tp is NULL or frt_par_threads says the work is too small to split. */
static inline void frt_ew_parallel(frt_threadpool *tp, size_t n, size_t unit_elems,
                                   frt_ew_range_fn fn, void *ctx) {
    if (n == 0) return;
    if (unit_elems == 0) unit_elems = 1;
    double ns = (double)n * (double)unit_elems * 8 * FRT_PAR_NS_PER_BYTE;
    if (n < 2 || frt_par_threads(tp, ns) < 2) {
        fn(ctx, 0, n);
        return;
    }
    size_t chunk = FRT_EW_CHUNK / unit_elems;
    if (chunk == 0) chunk = 1;
    frt_ew_par p = {fn, ctx, n, chunk};
    frt_parallel_for(tp, (n + chunk - 1) / chunk, frt_ew_par_task, &p);
}

#if FRT_HAVE_X86
/* elementwise_avx2.c, elementwise_avx512.c: float32 loops indexed by FRT_EW_ADD.. */
extern const frt_bin_loops frt_ew_f32_avx2[FRT_EW_N], frt_ew_f32_avx512[FRT_EW_N];
void frt_f16_to_f32_avx2(const uint16_t *x, float *y, size_t n);
void frt_f32_to_f16_avx2(const float *x, uint16_t *y, size_t n);
void frt_f16_to_f32_avx512(const uint16_t *x, float *y, size_t n);
void frt_f32_to_f16_avx512(const float *x, uint16_t *y, size_t n);

/* activation_avx2.c, activation_avx512.c: the frt_act_variant members of each tier. */
#define FRT_ACT_DECLARE(T)                                                                      \
    void frt_clip_f32_##T(const float *x, float *y, size_t n, float lo, float hi);             \
    void frt_relu_f32_##T(const float *x, float *y, size_t n);                                 \
    void frt_sigmoid_f32_##T(const float *x, float *y, size_t n);                              \
    void frt_tanh_f32_##T(const float *x, float *y, size_t n);                                 \
    void frt_softmax_rows_f32_##T(const float *x, float *y, size_t rows, size_t len);          \
    void frt_vmax_f32_##T(float *m, const float *x, size_t n);                                 \
    void frt_expsub_acc_f32_##T(const float *x, const float *m, float *y, float *s, size_t n); \
    void frt_vmul_f32_##T(float *y, const float *r, size_t n);
FRT_ACT_DECLARE(avx2)
FRT_ACT_DECLARE(avx512)
#undef FRT_ACT_DECLARE
#endif

#endif
