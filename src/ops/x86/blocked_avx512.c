/* AVX-512 loops over nChw16c-blocked activations (blocked.h). */
#include <immintrin.h>

#include "ops/blocked.h"
#include "vec_avx512.h"

/* pooling: blocked_pool_impl.h over 16-lane vectors (b = 16) */
#define BLK_POOL_NAME frt_blk_pool_avx512
#include "blocked_pool_impl.h"
#undef BLK_POOL_NAME

void frt_blk_chanmul_avx512(const float *x, const float *g, float *y, int64_t C, int64_t S,
                            int64_t b) {
    (void)b; /* 16: the variant table gives this loop only that block */
    int64_t cb = (C + 15) / 16;
    for (int64_t k = 0; k < cb; k++) {
        int64_t valid = C - k * 16 < 16 ? C - k * 16 : 16;
        __mmask16 m = (__mmask16)((1u << valid) - 1u);
        __m512 f = _mm512_maskz_loadu_ps(m, g + k * 16);
        const float *xr = x + k * S * 16;
        float *yr = y + k * S * 16;
        int64_t s = 0;
        for (; s + 4 <= S; s += 4) {
            __m512 a0 = _mm512_maskz_loadu_ps(m, xr + s * 16);
            __m512 a1 = _mm512_maskz_loadu_ps(m, xr + s * 16 + 16);
            __m512 a2 = _mm512_maskz_loadu_ps(m, xr + s * 16 + 32);
            __m512 a3 = _mm512_maskz_loadu_ps(m, xr + s * 16 + 48);
            _mm512_storeu_ps(yr + s * 16, _mm512_mul_ps(a0, f));
            _mm512_storeu_ps(yr + s * 16 + 16, _mm512_mul_ps(a1, f));
            _mm512_storeu_ps(yr + s * 16 + 32, _mm512_mul_ps(a2, f));
            _mm512_storeu_ps(yr + s * 16 + 48, _mm512_mul_ps(a3, f));
        }
        for (; s < S; s++)
            _mm512_storeu_ps(yr + s * 16, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, xr + s * 16), f));
    }
}
