/* AVX2/FMA small-M GEMM of the recurrent step (see rnn_simd.h): panels of 8 columns (one ymm);
 * blocks of up to 4 rows x NV panels, NV = 8, 4, 3, 3 for 1..4 rows (at most 12 accumulators). */
#include "rnn_simd.h"

#if FRT_HAVE_X86
#include <immintrin.h>

#define VL 8

/* C[MR, cols) = A[MR, K] * NV panels starting at B; the last panel may be partial (n valid
 * columns in the block). */
static inline __attribute__((always_inline)) void blk(const int MR, const int NV, int64_t K,
                                                      const float *A, int64_t lda, const float *B,
                                                      float *C, int64_t ldc, int64_t n) {
    __m256 acc[4][8];
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) acc[r][v] = _mm256_setzero_ps();
    const int64_t ps = K * VL;
    for (int64_t k = 0; k < K; k++) {
        __m256 b[8];
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) b[v] = _mm256_loadu_ps(B + v * ps + k * VL);
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++) {
            __m256 a = _mm256_set1_ps(A[r * lda + k]);
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++) acc[r][v] = _mm256_fmadd_ps(a, b[v], acc[r][v]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) {
            int64_t c0 = (int64_t)v * VL;
            if (c0 + VL <= n) _mm256_storeu_ps(C + r * ldc + c0, acc[r][v]);
            else if (c0 < n)
                _mm256_maskstore_ps(C + r * ldc + c0,
                                    _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - c0)),
                                                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)),
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
ROWS(3, 3)
ROWS(4, 3)

void frt_rnn_mm_avx2(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
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
