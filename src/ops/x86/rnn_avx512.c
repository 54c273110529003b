/* AVX-512 small-M GEMM of the recurrent step (see rnn_simd.h): zmm vectors, blocks of up to
 * 4 rows x min(gv, 8 / 4 / 4 / 4 for 1 / 2 / 3 / 4 rows) vectors (at most 16 accumulators). */
#include "rnn_simd.h"

#if FRT_HAVE_X86
#include <immintrin.h>

#define VL 16

/* C[MR, NV*VL) = A[MR, K] * NV vectors at B (row stride gw floats); only the first n columns are
 * stored. */
static inline __attribute__((always_inline)) void blk(const int MR, const int NV, int64_t K,
                                                      const float *A, int64_t lda, const float *B,
                                                      int64_t gw, float *C, int64_t ldc,
                                                      int64_t n) {
    __m512 acc[4][8];
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();
    for (int64_t k = 0; k < K; k++) {
        __m512 b[8];
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) b[v] = _mm512_loadu_ps(B + k * gw + v * VL);
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

/* MR rows of every group, NV vectors per block (NV divides gv). */
#define ROWS(MR, NV)                                                                             \
    static void rows##MR##_##NV(int64_t N, int64_t K, const float *A, int64_t lda,               \
                                const float *Bq, int gv, float *C, int64_t ldc) {                \
        const int64_t gw = (int64_t)gv * VL;                                                     \
        for (int64_t c0 = 0; c0 < N; c0 += gw, Bq += K * gw)                                     \
            for (int64_t o = 0; o < gw && c0 + o < N; o += NV * VL)                              \
                blk(MR, NV, K, A, lda, Bq + o, gw, C + c0 + o, ldc, N - c0 - o);                 \
    }
ROWS(1, 8)
ROWS(1, 4)
ROWS(1, 2)
ROWS(2, 4)
ROWS(2, 2)
ROWS(3, 4)
ROWS(3, 2)
ROWS(4, 4)
ROWS(4, 2)

void frt_rnn_mm_avx512(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bq,
                       int gv, float *C, int64_t ldc) {
    for (int64_t i = 0; i < M; i += 4) {
        const float *a = A + i * lda;
        float *c = C + i * ldc;
        const int64_t m = M - i >= 4 ? 4 : M - i;
        if (m == 4) {
            if (gv >= 4) rows4_4(N, K, a, lda, Bq, gv, c, ldc);
            else rows4_2(N, K, a, lda, Bq, gv, c, ldc);
        } else if (m == 3) {
            if (gv >= 4) rows3_4(N, K, a, lda, Bq, gv, c, ldc);
            else rows3_2(N, K, a, lda, Bq, gv, c, ldc);
        } else if (m == 2) {
            if (gv >= 4) rows2_4(N, K, a, lda, Bq, gv, c, ldc);
            else rows2_2(N, K, a, lda, Bq, gv, c, ldc);
        } else {
            if (gv >= 8) rows1_8(N, K, a, lda, Bq, gv, c, ldc);
            else if (gv >= 4) rows1_4(N, K, a, lda, Bq, gv, c, ldc);
            else rows1_2(N, K, a, lda, Bq, gv, c, ldc);
        }
    }
}
#endif
