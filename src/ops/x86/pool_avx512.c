/* AVX-512 row helpers for pooling (see pool.c; called only through its AVX-512 variant entry).
 * Same results as the portable loops: max keeps src[i] > dst[i] ? src[i] : dst[i]. */
#include <stdint.h>

#if FRT_HAVE_X86
#include <immintrin.h>

void frt_pool_vmax_avx512(float *dst, const float *src, int64_t n);
void frt_pool_vadd_avx512(float *dst, const float *src, int64_t n);
float frt_pool_sum_avx512(const float *src, int64_t n);

static inline __mmask16 tail(int64_t n) { return (__mmask16)((1u << n) - 1u); } /* n < 16 */

void frt_pool_vmax_avx512(float *dst, const float *src, int64_t n) {
    int64_t i = 0;
    /* max_ps(a, b) returns b unless a > b: max_ps(src, dst) == (src > dst ? src : dst) */
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_max_ps(_mm512_loadu_ps(src + i), _mm512_loadu_ps(dst + i)));
    if (i < n) {
        __mmask16 m = tail(n - i);
        _mm512_mask_storeu_ps(dst + i, m, _mm512_max_ps(_mm512_maskz_loadu_ps(m, src + i),
                                                        _mm512_maskz_loadu_ps(m, dst + i)));
    }
}

void frt_pool_vadd_avx512(float *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_add_ps(_mm512_loadu_ps(dst + i), _mm512_loadu_ps(src + i)));
    if (i < n) {
        __mmask16 m = tail(n - i);
        _mm512_mask_storeu_ps(dst + i, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, dst + i),
                                                        _mm512_maskz_loadu_ps(m, src + i)));
    }
}

float frt_pool_sum_avx512(const float *src, int64_t n) {
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        s0 = _mm512_add_ps(s0, _mm512_loadu_ps(src + i));
        s1 = _mm512_add_ps(s1, _mm512_loadu_ps(src + i + 16));
        s2 = _mm512_add_ps(s2, _mm512_loadu_ps(src + i + 32));
        s3 = _mm512_add_ps(s3, _mm512_loadu_ps(src + i + 48));
    }
    for (; i + 16 <= n; i += 16) s0 = _mm512_add_ps(s0, _mm512_loadu_ps(src + i));
    if (i < n) s1 = _mm512_add_ps(s1, _mm512_maskz_loadu_ps(tail(n - i), src + i));
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

#endif
