/* AVX2/FMA float32 normalization rows (LayerNormalization, InstanceNormalization): the loop of
 * norm_impl.h over the vector vocabulary of vec_avx2.h; reached through the variant table in
 * simd_norm.h. */
#include <math.h>

#include "simd_norm.h"
#include "vec_avx2.h"

#include "norm_impl.h"

void frt_norm_row_f32_avx2(const float *x, float *y, size_t len, const float *scale,
                         const float *bias, size_t st, float eps, float *stat) {
    norm_row_f32(x, y, len, scale, bias, st, eps, stat);
}
