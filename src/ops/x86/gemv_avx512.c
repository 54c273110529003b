/* AVX-512 kernels of the packed-weight GEMV (see gemv.h): one sequential stream per 64-column
 * panel, x[k] broadcast, 16 columns per zmm; fp16 through VCVTPH2PS, bf16 pairs split into rows
 * k and k+1 with a shift and a mask. Called only through the AVX-512 entry of the variant table. */
#include "ops/gemv.h"

#if FRT_HAVE_X86
#include <immintrin.h>

#define AI static inline __attribute__((always_inline))

/* nv (1..4) vectors of 16 columns; two accumulator sets (even / odd k) per vector. */
AI void f32_panel(int nv, int64_t K, const float *W, const float *x, float *out) {
    const int64_t w = 16 * nv;
    __m512 a[4], b[4];
    #pragma GCC unroll 4
    for (int v = 0; v < 4; v++) a[v] = b[v] = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + 2 <= K; k += 2, W += 2 * w) {
        __m512 x0 = _mm512_set1_ps(x[k]), x1 = _mm512_set1_ps(x[k + 1]);
        #pragma GCC unroll 4
        for (int v = 0; v < nv; v++) {
            a[v] = _mm512_fmadd_ps(_mm512_load_ps(W + 16 * v), x0, a[v]);
            b[v] = _mm512_fmadd_ps(_mm512_load_ps(W + w + 16 * v), x1, b[v]);
        }
    }
    if (k < K) {
        __m512 x0 = _mm512_set1_ps(x[k]);
        #pragma GCC unroll 4
        for (int v = 0; v < nv; v++) a[v] = _mm512_fmadd_ps(_mm512_load_ps(W + 16 * v), x0, a[v]);
    }
    #pragma GCC unroll 4
    for (int v = 0; v < nv; v++) _mm512_storeu_ps(out + 16 * v, _mm512_add_ps(a[v], b[v]));
}

AI __m512 ld_f16(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)p)); }

AI void f16_panel(int nv, int64_t K, const uint16_t *W, const float *x, float *out) {
    const int64_t w = 16 * nv;
    __m512 a[4], b[4];
    #pragma GCC unroll 4
    for (int v = 0; v < 4; v++) a[v] = b[v] = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + 2 <= K; k += 2, W += 2 * w) {
        __m512 x0 = _mm512_set1_ps(x[k]), x1 = _mm512_set1_ps(x[k + 1]);
        #pragma GCC unroll 4
        for (int v = 0; v < nv; v++) {
            a[v] = _mm512_fmadd_ps(ld_f16(W + 16 * v), x0, a[v]);
            b[v] = _mm512_fmadd_ps(ld_f16(W + w + 16 * v), x1, b[v]);
        }
    }
    if (k < K) {
        __m512 x0 = _mm512_set1_ps(x[k]);
        #pragma GCC unroll 4
        for (int v = 0; v < nv; v++) a[v] = _mm512_fmadd_ps(ld_f16(W + 16 * v), x0, a[v]);
    }
    #pragma GCC unroll 4
    for (int v = 0; v < nv; v++) _mm512_storeu_ps(out + 16 * v, _mm512_add_ps(a[v], b[v]));
}

/* bf16 pairs: 32-bit word = row k+1 (high half) : row k (low half). */
AI __m512 bf_lo(__m512i p) { return _mm512_castsi512_ps(_mm512_slli_epi32(p, 16)); }
AI __m512 bf_hi(__m512i p) {
    return _mm512_castsi512_ps(_mm512_and_si512(p, _mm512_set1_epi32((int)0xffff0000u)));
}

AI void bf16_panel(int nv, int64_t K, const uint16_t *W, const float *x, float *out) {
    const int64_t w = 16 * nv;
    __m512 a[4], b[4];
    #pragma GCC unroll 4
    for (int v = 0; v < 4; v++) a[v] = b[v] = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + 2 <= K; k += 2, W += 2 * w) {
        __m512 x0 = _mm512_set1_ps(x[k]), x1 = _mm512_set1_ps(x[k + 1]);
        #pragma GCC unroll 4
        for (int v = 0; v < nv; v++) {
            __m512i p = _mm512_load_si512((const void *)(W + 32 * v));
            a[v] = _mm512_fmadd_ps(bf_lo(p), x0, a[v]);
            b[v] = _mm512_fmadd_ps(bf_hi(p), x1, b[v]);
        }
    }
    if (k < K) { /* odd K: the padding row (high halves) is zero and x[K] is not read */
        __m512 x0 = _mm512_set1_ps(x[k]);
        #pragma GCC unroll 4
        for (int v = 0; v < nv; v++)
            a[v] = _mm512_fmadd_ps(bf_lo(_mm512_load_si512((const void *)(W + 32 * v))), x0, a[v]);
    }
    #pragma GCC unroll 4
    for (int v = 0; v < nv; v++) _mm512_storeu_ps(out + 16 * v, _mm512_add_ps(a[v], b[v]));
}

#define DISPATCH(fn, T)                                                                            \
    switch (w) {                                                                                   \
    case 64: fn(4, K, (const T *)W, x, out); break;                                                \
    case 48: fn(3, K, (const T *)W, x, out); break;                                                \
    case 32: fn(2, K, (const T *)W, x, out); break;                                                \
    default: fn(1, K, (const T *)W, x, out); break;                                                \
    }

void frt_gemv_panel_avx512(frt_wprec prec, int64_t K, const void *W, int64_t w, const float *x,
                           float *out) {
    if (prec == FRT_WPREC_F32) {
        DISPATCH(f32_panel, float)
    } else if (prec == FRT_WPREC_F16) {
        DISPATCH(f16_panel, uint16_t)
    } else {
        DISPATCH(bf16_panel, uint16_t)
    }
}

void frt_gemv_unpack_avx512(frt_wprec prec, const void *W, int64_t w, int64_t k0, int64_t kc,
                            int64_t nr, float *dst) {
    const int64_t wr = (w + nr - 1) / nr * nr;
    for (int64_t c = 0; c < wr; c += 16) {
        float *d = dst + (c / nr) * kc * nr + c % nr;
        if (c >= w) {
            for (int64_t k = 0; k < kc; k++) _mm512_storeu_ps(d + k * nr, _mm512_setzero_ps());
        } else if (prec == FRT_WPREC_F32) {
            const float *s = (const float *)W + k0 * w + c;
            for (int64_t k = 0; k < kc; k++) _mm512_storeu_ps(d + k * nr, _mm512_load_ps(s + k * w));
        } else if (prec == FRT_WPREC_F16) {
            const uint16_t *s = (const uint16_t *)W + k0 * w + c;
            for (int64_t k = 0; k < kc; k++) _mm512_storeu_ps(d + k * nr, ld_f16(s + k * w));
        } else {
            const uint16_t *s = (const uint16_t *)W + k0 * w + 2 * c; /* k0 even */
            int64_t k = 0;
            for (; k + 2 <= kc; k += 2) {
                __m512i p = _mm512_load_si512((const void *)(s + k * w));
                _mm512_storeu_ps(d + k * nr, bf_lo(p));
                _mm512_storeu_ps(d + (k + 1) * nr, bf_hi(p));
            }
            if (k < kc) _mm512_storeu_ps(d + k * nr, bf_lo(_mm512_load_si512((const void *)(s + k * w))));
        }
    }
}

#endif
