/* AVX2 loop of the blocked per-channel mean (see ../blkmean.h): b = 8 or 16 lanes as one or two
 * ymm vectors, four accumulators each (pixels s mod 4), the same order as the portable loop. */
#include <immintrin.h>

#include "ops/blkmean.h"

static inline __attribute__((always_inline)) void mean_b(const float *y, int64_t S, float inv,
                                                         float *out, const int NV) {
    __m256 a[4][2];
    _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++)
        _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) a[r][v] = _mm256_setzero_ps();
    const int64_t b = 8 * NV;
    int64_t s = 0;
    for (; s + 4 <= S; s += 4)
        _Pragma("GCC unroll 4") for (int r = 0; r < 4; r++)
            _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++)
                a[r][v] = _mm256_add_ps(a[r][v], _mm256_loadu_ps(y + (s + r) * b + 8 * v));
    /* the last S mod 4 pixels (into a[0..2]: an unrolled chain, so the accumulators stay in
       registers) */
    int64_t t = S - s;
    _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) {
        if (t > 0) a[0][v] = _mm256_add_ps(a[0][v], _mm256_loadu_ps(y + s * b + 8 * v));
        if (t > 1) a[1][v] = _mm256_add_ps(a[1][v], _mm256_loadu_ps(y + (s + 1) * b + 8 * v));
        if (t > 2) a[2][v] = _mm256_add_ps(a[2][v], _mm256_loadu_ps(y + (s + 2) * b + 8 * v));
    }
    _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++)
        _mm256_storeu_ps(out + 8 * v,
                         _mm256_mul_ps(_mm256_add_ps(_mm256_add_ps(a[0][v], a[1][v]),
                                                     _mm256_add_ps(a[2][v], a[3][v])),
                                       _mm256_set1_ps(inv)));
}

void frt_blkmean_avx2(const float *y, int64_t S, int64_t b, float inv, float *out) {
    if (b == 8) mean_b(y, S, inv, out, 1);
    else if (b == 16) mean_b(y, S, inv, out, 2);
    else /* (the portable loop's order; not called from here: the layers have no call cycles) */
        for (int64_t l = 0; l < b; l++) {
            float a[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            for (int64_t s = 0; s < S; s++) a[s % 4] += y[s * b + l];
            out[l] = ((a[0] + a[1]) + (a[2] + a[3])) * inv;
        }
}
