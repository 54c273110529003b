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
    if (prec == FRT_WPREC_F32 || !FRT_HALF_WEIGHTS) {
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
        } else if (prec == FRT_WPREC_F32 || !FRT_HALF_WEIGHTS) {
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

/* ---- f32 rows: C[M, n] = A[M, K] (lda) * one f32 panel [K][w] (w = 16 * NV, n <= w columns
 * stored): MR rows x NV vectors of accumulators, W row k loaded once per MR rows, A[r][k]
 * broadcast. Each block shape is its own small function (compile time under sanitizers). */
AI void f32_rows_blk(const int MR, const int NV, int64_t K, const float *A, int64_t lda,
                     const float *W, float *C, int64_t ldc, int64_t n) {
    const int64_t w = 16 * NV;
    __m512 acc[12][4];
    #pragma GCC unroll 12
    for (int r = 0; r < MR; r++)
        #pragma GCC unroll 4
        for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();
    for (int64_t k = 0; k < K; k++, W += w) {
        __m512 b[4];
        #pragma GCC unroll 4
        for (int v = 0; v < NV; v++) b[v] = _mm512_load_ps(W + 16 * v);
        #pragma GCC unroll 12
        for (int r = 0; r < MR; r++) {
            __m512 a = _mm512_set1_ps(A[r * lda + k]);
            #pragma GCC unroll 4
            for (int v = 0; v < NV; v++) acc[r][v] = _mm512_fmadd_ps(a, b[v], acc[r][v]);
        }
    }
    #pragma GCC unroll 4
    for (int v = 0; v < NV; v++) {
        const int64_t c0 = 16 * (int64_t)v;
        if (c0 >= n) break;
        const __mmask16 m = c0 + 16 <= n ? (__mmask16)0xffff : (__mmask16)((1u << (n - c0)) - 1u);
        #pragma GCC unroll 12
        for (int r = 0; r < MR; r++) _mm512_mask_storeu_ps(C + r * ldc + c0, m, acc[r][v]);
    }
}

#define ROWS_FN(MR, NV)                                                                            \
    static __attribute__((noinline)) void rows_##MR##_##NV(int64_t K, const float *A,             \
                                                           int64_t lda, const float *W, float *C, \
                                                           int64_t ldc, int64_t n) {              \
        f32_rows_blk(MR, NV, K, A, lda, W, C, ldc, n);                                             \
    }
ROWS_FN(12, 1)
ROWS_FN(8, 1)
ROWS_FN(4, 1)
ROWS_FN(6, 2)
ROWS_FN(4, 2)
ROWS_FN(4, 3)
ROWS_FN(3, 4)
ROWS_FN(2, 1)
ROWS_FN(2, 2)
ROWS_FN(2, 3)
ROWS_FN(2, 4)
ROWS_FN(1, 1)
ROWS_FN(1, 2)
ROWS_FN(1, 3)
ROWS_FN(1, 4)

typedef void (*rows_fn)(int64_t K, const float *A, int64_t lda, const float *W, float *C,
                        int64_t ldc, int64_t n);

void frt_gemv_rows_avx512(int64_t M, int64_t K, const float *A, int64_t lda, const float *W,
                          int64_t w, float *C, int64_t ldc, int64_t n) {
    /* per NV: block functions from the most rows down, and their row counts */
    static const rows_fn fns[4][4] = {{rows_12_1, rows_8_1, rows_4_1, rows_2_1},
                                      {rows_6_2, rows_4_2, rows_2_2, rows_1_2},
                                      {rows_4_3, rows_2_3, rows_1_3, rows_1_3},
                                      {rows_3_4, rows_2_4, rows_1_4, rows_1_4}};
    static const int mrs[4][4] = {{12, 8, 4, 2}, {6, 4, 2, 1}, {4, 2, 1, 1}, {3, 2, 1, 1}};
    const int nv = (int)(w / 16) - 1;
    int64_t i = 0;
    for (int f = 0; f < 4; f++)
        for (; M - i >= mrs[nv][f]; i += mrs[nv][f])
            fns[nv][f](K, A + i * lda, lda, W, C + i * ldc, ldc, n);
    for (; i < M; i++) { /* NV = 1: the last odd row */
        static const rows_fn one[4] = {rows_1_1, rows_1_2, rows_1_3, rows_1_4};
        one[nv](K, A + i * lda, lda, W, C + i * ldc, ldc, n);
    }
}

#endif
