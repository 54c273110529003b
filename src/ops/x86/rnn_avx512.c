/* AVX-512 small-M GEMM of the recurrent step (see rnn_simd.h): panels of 16 columns (one zmm);
 * blocks of up to 4 rows x NV panels, NV = 8 for one row, else 4 (at most 16 accumulators). */
#include "rnn_simd.h"

#if FRT_HAVE_X86
#include <immintrin.h>

#define VL 16

/* C[MR, cols) = A[MR, K] * NV panels starting at B; the last panel may be partial (n valid
 * columns in the block). */
static inline __attribute__((always_inline)) void blk(const int MR, const int NV, int64_t K,
                                                      const float *A, int64_t lda, const float *B,
                                                      float *C, int64_t ldc, int64_t n) {
    __m512 acc[4][8];
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();
    const int64_t ps = K * VL;
    for (int64_t k = 0; k < K; k++) {
        __m512 b[8];
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) b[v] = _mm512_loadu_ps(B + v * ps + k * VL);
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++) {
            __m512 a = _mm512_set1_ps(A[r * lda + k]);
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++) acc[r][v] = _mm512_fmadd_ps(a, b[v], acc[r][v]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) {
            int64_t c0 = (int64_t)v * VL;
            if (c0 + VL <= n) _mm512_storeu_ps(C + r * ldc + c0, acc[r][v]);
            else if (c0 < n)
                _mm512_mask_storeu_ps(C + r * ldc + c0, (__mmask16)((1u << (n - c0)) - 1u),
                                      acc[r][v]);
        }
}

#define ROWS(MR, NV)                                                                             \
    static void rows##MR(int64_t N, int64_t K, const float *A, int64_t lda, const float *Bq,     \
                         float *C, int64_t ldc) {                                                \
        const int64_t np = (N + VL - 1) / VL;                                                    \
        int64_t p = 0;                                                                           \
        for (; p + NV <= np; p += NV) {                                                          \
            int64_t n = N - p * VL;                                                              \
            blk(MR, NV, K, A, lda, Bq + p * K * VL, C + p * VL, ldc, n);                         \
        }                                                                                        \
        for (; p < np; p++) blk(MR, 1, K, A, lda, Bq + p * K * VL, C + p * VL, ldc, N - p * VL); \
    }
ROWS(1, 8)
ROWS(2, 4)
ROWS(3, 4)
ROWS(4, 4)

void frt_rnn_mm_avx512(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                       const float *Bq, float *C, int64_t ldc) {
    for (int64_t i = 0; i < M; i += 4) {
        const float *a = A + i * lda;
        float *c = C + i * ldc;
        switch (M - i >= 4 ? 4 : M - i) {
        case 4: rows4(N, K, a, lda, Bq, c, ldc); break;
        case 3: rows3(N, K, a, lda, Bq, c, ldc); break;
        case 2: rows2(N, K, a, lda, Bq, c, ldc); break;
        default: rows1(N, K, a, lda, Bq, c, ldc); break;
        }
    }
}
#endif
