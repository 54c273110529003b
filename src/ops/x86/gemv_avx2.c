/* AVX2/FMA/F16C kernels of the packed-weight GEMV (see gemv.h): as gemv_avx512.c with 8 columns
 * per ymm (a 64-column panel is 8 accumulators, one set). Called only through the AVX2 entry of
 * the variant table. */
#include "ops/gemv.h"

#if FRT_HAVE_X86
#include <immintrin.h>

#define AI static inline __attribute__((always_inline))

AI __m256 ld_f16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_load_si128((const __m128i *)p)); }
AI __m256 bf_lo(__m256i p) { return _mm256_castsi256_ps(_mm256_slli_epi32(p, 16)); }
AI __m256 bf_hi(__m256i p) {
    return _mm256_castsi256_ps(_mm256_and_si256(p, _mm256_set1_epi32((int)0xffff0000u)));
}

/* nv (2..8) vectors of 8 columns. */
AI void f32_panel(int nv, int64_t K, const float *W, const float *x, float *out) {
    const int64_t w = 8 * nv;
    __m256 a[8];
    #pragma GCC unroll 8
    for (int v = 0; v < 8; v++) a[v] = _mm256_setzero_ps();
    for (int64_t k = 0; k < K; k++, W += w) {
        __m256 x0 = _mm256_broadcast_ss(x + k);
        #pragma GCC unroll 8
        for (int v = 0; v < nv; v++) a[v] = _mm256_fmadd_ps(_mm256_load_ps(W + 8 * v), x0, a[v]);
    }
    #pragma GCC unroll 8
    for (int v = 0; v < nv; v++) _mm256_storeu_ps(out + 8 * v, a[v]);
}

AI void f16_panel(int nv, int64_t K, const uint16_t *W, const float *x, float *out) {
    const int64_t w = 8 * nv;
    __m256 a[8];
    #pragma GCC unroll 8
    for (int v = 0; v < 8; v++) a[v] = _mm256_setzero_ps();
    for (int64_t k = 0; k < K; k++, W += w) {
        __m256 x0 = _mm256_broadcast_ss(x + k);
        #pragma GCC unroll 8
        for (int v = 0; v < nv; v++) a[v] = _mm256_fmadd_ps(ld_f16(W + 8 * v), x0, a[v]);
    }
    #pragma GCC unroll 8
    for (int v = 0; v < nv; v++) _mm256_storeu_ps(out + 8 * v, a[v]);
}

AI void bf16_panel(int nv, int64_t K, const uint16_t *W, const float *x, float *out) {
    const int64_t w = 8 * nv;
    __m256 a[8];
    #pragma GCC unroll 8
    for (int v = 0; v < 8; v++) a[v] = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 2 <= K; k += 2, W += 2 * w) {
        __m256 x0 = _mm256_broadcast_ss(x + k), x1 = _mm256_broadcast_ss(x + k + 1);
        #pragma GCC unroll 8
        for (int v = 0; v < nv; v++) {
            __m256i p = _mm256_load_si256((const __m256i *)(W + 16 * v));
            a[v] = _mm256_fmadd_ps(bf_hi(p), x1, _mm256_fmadd_ps(bf_lo(p), x0, a[v]));
        }
    }
    if (k < K) { /* odd K: the padding row is zero and x[K] is not read */
        __m256 x0 = _mm256_broadcast_ss(x + k);
        #pragma GCC unroll 8
        for (int v = 0; v < nv; v++)
            a[v] = _mm256_fmadd_ps(bf_lo(_mm256_load_si256((const __m256i *)(W + 16 * v))), x0, a[v]);
    }
    #pragma GCC unroll 8
    for (int v = 0; v < nv; v++) _mm256_storeu_ps(out + 8 * v, a[v]);
}

#define DISPATCH(fn, T)                                                                            \
    switch (w) {                                                                                   \
    case 64: fn(8, K, (const T *)W, x, out); break;                                                \
    case 48: fn(6, K, (const T *)W, x, out); break;                                                \
    case 32: fn(4, K, (const T *)W, x, out); break;                                                \
    default: fn(2, K, (const T *)W, x, out); break;                                                \
    }

void frt_gemv_panel_avx2(frt_wprec prec, int64_t K, const void *W, int64_t w, const float *x,
                         float *out) {
    if (prec == FRT_WPREC_F32 || !FRT_HALF_WEIGHTS) {
        DISPATCH(f32_panel, float)
    } else if (prec == FRT_WPREC_F16) {
        DISPATCH(f16_panel, uint16_t)
    } else {
        DISPATCH(bf16_panel, uint16_t)
    }
}

void frt_gemv_unpack_avx2(frt_wprec prec, const void *W, int64_t w, int64_t k0, int64_t kc,
                          int64_t nr, float *dst) {
    const int64_t wr = (w + nr - 1) / nr * nr;
    for (int64_t c = 0; c < wr; c += 8) {
        float *d = dst + (c / nr) * kc * nr + c % nr;
        if (c >= w) {
            for (int64_t k = 0; k < kc; k++) _mm256_storeu_ps(d + k * nr, _mm256_setzero_ps());
        } else if (prec == FRT_WPREC_F32 || !FRT_HALF_WEIGHTS) {
            const float *s = (const float *)W + k0 * w + c;
            for (int64_t k = 0; k < kc; k++) _mm256_storeu_ps(d + k * nr, _mm256_load_ps(s + k * w));
        } else if (prec == FRT_WPREC_F16) {
            const uint16_t *s = (const uint16_t *)W + k0 * w + c;
            for (int64_t k = 0; k < kc; k++) _mm256_storeu_ps(d + k * nr, ld_f16(s + k * w));
        } else {
            const uint16_t *s = (const uint16_t *)W + k0 * w + 2 * c; /* k0 even */
            int64_t k = 0;
            for (; k + 2 <= kc; k += 2) {
                __m256i p = _mm256_load_si256((const __m256i *)(s + k * w));
                _mm256_storeu_ps(d + k * nr, bf_lo(p));
                _mm256_storeu_ps(d + (k + 1) * nr, bf_hi(p));
            }
            if (k < kc) _mm256_storeu_ps(d + k * nr, bf_lo(_mm256_load_si256((const __m256i *)(s + k * w))));
        }
    }
}

#endif
