/* Private interface between the normalization ops (src/ops/normalization.c) and their AVX2/FMA
 * and AVX-512 loops (src/ops/x86/norm_{avx2,avx512}.c, sharing norm_impl.h). The x86 functions
 * exist only when FRT_HAVE_X86 is 1 and are reached only through the variant table below.
 */
#ifndef FRT_OPS_X86_SIMD_NORM_H
#define FRT_OPS_X86_SIMD_NORM_H

#include <stddef.h>

#include "ops/cpu.h"

/* Standardizes one row of len >= 1 floats (two passes: mean, then variance of x - mean):
 *   y[i] = (x[i] - mean) * inv * scale[i * st] + bias[i * st],  inv = 1 / sqrt(var + eps)
 * with st (0 or 1) the stride of scale and bias (0: one value for the row); bias may be NULL
 * (no bias). stat[0] = mean, stat[1] = inv. y may equal x. The SIMD loops sum in a different
 * order than the portable one: results agree to float rounding (~1e-6 relative). */
typedef void (*frt_norm_row_fn)(const float *x, float *y, size_t len, const float *scale,
                                const float *bias, size_t st, float eps, float *stat);

typedef struct frt_norm_variant {
    frt_isa isa;
    const char *suffix;
    frt_norm_row_fn row;
} frt_norm_variant;
/* Best variant whose tier is <= cap (normalization.c). */
const frt_norm_variant *frt_norm_variant_get(frt_isa cap);

#if FRT_HAVE_X86
void frt_norm_row_f32_avx2(const float *x, float *y, size_t len, const float *scale,
                           const float *bias, size_t st, float eps, float *stat);
void frt_norm_row_f32_avx512(const float *x, float *y, size_t len, const float *scale,
                             const float *bias, size_t st, float eps, float *stat);
#endif

#endif
