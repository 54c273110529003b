/* AVX2 loops over nChw8c-blocked activations (blocked.h). */
#include <immintrin.h>

#include "ops/blocked.h"

void frt_blk_chanmul_avx2(const float *x, const float *g, float *y, int64_t C, int64_t S,
                          int64_t b) {
    (void)b; /* 8: the variant table gives this loop only that block */
    int64_t cb = (C + 7) / 8;
    for (int64_t k = 0; k < cb; k++) {
        int64_t valid = C - k * 8 < 8 ? C - k * 8 : 8;
        __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)valid),
                                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256 f = _mm256_maskload_ps(g + k * 8, m);
        const float *xr = x + k * S * 8;
        float *yr = y + k * S * 8;
        int64_t s = 0;
        for (; s + 4 <= S; s += 4) {
            __m256 a0 = _mm256_maskload_ps(xr + s * 8, m);
            __m256 a1 = _mm256_maskload_ps(xr + s * 8 + 8, m);
            __m256 a2 = _mm256_maskload_ps(xr + s * 8 + 16, m);
            __m256 a3 = _mm256_maskload_ps(xr + s * 8 + 24, m);
            _mm256_storeu_ps(yr + s * 8, _mm256_mul_ps(a0, f));
            _mm256_storeu_ps(yr + s * 8 + 8, _mm256_mul_ps(a1, f));
            _mm256_storeu_ps(yr + s * 8 + 16, _mm256_mul_ps(a2, f));
            _mm256_storeu_ps(yr + s * 8 + 24, _mm256_mul_ps(a3, f));
        }
        for (; s < S; s++)
            _mm256_storeu_ps(yr + s * 8, _mm256_mul_ps(_mm256_maskload_ps(xr + s * 8, m), f));
    }
}
