/* Private interface between the unary math operators (src/ops/unary.c, and Pow in
 * elementwise.c) and their AVX2/FMA and AVX-512 float32 loops (src/ops/x86/unary_{avx2,avx512}.c).
 *
 * Every loop computes y[i] = f(x[i]) for n floats; y may equal x (each element is read before it
 * is written and no other index is touched afterwards).
 * Exact across tiers (bit-identical to the portable loops, NaN matches any NaN): abs, neg, sqrt,
 * reciprocal (a true division), floor, ceil, round (half to even), square (x*x), cube (x*x*x,
 * left to right), identity, pow_half (sqrt except pow's special cases: pow(-0, .5) = +0,
 * pow(-inf, .5) = +inf).
 * Approximations (the portable loops call libm): exp and log within 2 ulp of the exact result
 * over the whole float range (subnormal results of exp: in units of the subnormal spacing), erf
 * within 4 ulp for |x| >= 1e-30; tests/unit/test_unary.c asserts these bounds against libm in
 * double precision (measured: exp 0.95, log 0.84, erf 2.4 ulp).
 * Special values follow libm: exp(-inf) = 0, exp(+inf) = inf, log(0) = -inf, log(x < 0) = NaN,
 * log(inf) = inf, erf(+-inf) = +-1; NaN in gives NaN out.
 */
#ifndef FRT_OPS_X86_SIMD_UNARY_H
#define FRT_OPS_X86_SIMD_UNARY_H

#include <stddef.h>

#include "ops/cpu.h"
#include "ops/x86/simd_elementwise.h"

enum {
    FRT_UN_ABS,
    FRT_UN_NEG,
    FRT_UN_EXP,
    FRT_UN_LOG,
    FRT_UN_SQRT,
    FRT_UN_ERF,
    FRT_UN_RECIP,
    FRT_UN_FLOOR,
    FRT_UN_CEIL,
    FRT_UN_ROUND,
    FRT_UN_SQUARE,
    FRT_UN_CUBE,
    FRT_UN_POW_HALF,
    FRT_UN_IDENTITY,
    FRT_UN_N
};

/* Float32 unary loops of one tier, indexed by FRT_UN_*. */
typedef struct frt_un_variant {
    frt_isa isa;
    const char *suffix; /* "", "_avx2", "_avx512" */
    const frt_unary_fn *f; /* [FRT_UN_N] */
} frt_un_variant;

/* Best variant whose tier is <= cap (unary.c). */
const frt_un_variant *frt_un_variant_get(frt_isa cap);

#if FRT_HAVE_X86
extern const frt_unary_fn frt_un_f32_avx2[FRT_UN_N], frt_un_f32_avx512[FRT_UN_N];
#endif

#endif
