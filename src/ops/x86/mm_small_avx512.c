/* AVX-512 direct small matrix product (mm_small.h): register tiles of mr rows x nv vectors of 16
 * columns, B rows loaded (masked for the last columns), A elements broadcast, one FMA chain per
 * accumulator over k in order. Called only through the AVX-512 entry of the variant table. */
#include "ops/mm_small.h"

#if FRT_HAVE_X86
#include <immintrin.h>

#define AI static inline __attribute__((always_inline))

/* Y[0..mr, 0..16*(nv-1)+|ml|) = A[0..mr, :] * B[:, same columns]; the last vector masked by ml. */
AI void tile(int mr, int nv, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
             float *Y, int64_t ldy, __mmask16 ml) {
    __m512 acc[12][2];
    #pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
        acc[r][0] = _mm512_setzero_ps();
        acc[r][1] = _mm512_setzero_ps();
    }
    for (int64_t k = 0; k < K; k++) {
        const float *b = B + k * ldb;
        __m512 b0, b1 = _mm512_setzero_ps();
        if (nv == 1) {
            b0 = _mm512_maskz_loadu_ps(ml, b);
        } else {
            b0 = _mm512_loadu_ps(b);
            b1 = _mm512_maskz_loadu_ps(ml, b + 16);
        }
        #pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            __m512 a = _mm512_set1_ps(A[r * lda + k]);
            acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
            if (nv == 2) acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
        }
    }
    #pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
        if (nv == 1) {
            _mm512_mask_storeu_ps(Y + r * ldy, ml, acc[r][0]);
        } else {
            _mm512_storeu_ps(Y + r * ldy, acc[r][0]);
            _mm512_mask_storeu_ps(Y + r * ldy + 16, ml, acc[r][1]);
        }
    }
}

#define T1(m) case m: tile(m, 1, K, A, lda, B, ldb, Y, ldy, ml); break
#define T2(m) case m: tile(m, 2, K, A, lda, B, ldb, Y, ldy, ml); break

static void tile1(int mr, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                  float *Y, int64_t ldy, __mmask16 ml) {
    switch (mr) {
        T1(1); T1(2); T1(3); T1(4); T1(5); T1(6); T1(7); T1(8); T1(9); T1(10); T1(11);
        default: tile(12, 1, K, A, lda, B, ldb, Y, ldy, ml); break;
    }
}

static void tile2(int mr, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                  float *Y, int64_t ldy, __mmask16 ml) {
    switch (mr) {
        T2(1); T2(2); T2(3); T2(4); T2(5);
        default: tile(6, 2, K, A, lda, B, ldb, Y, ldy, ml); break;
    }
}

void frt_mm_small_avx512(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                         const float *B, int64_t ldb, float *Y, int64_t ldy) {
    for (int64_t j = 0; j < N; j += 32) {
        const int64_t w = N - j < 32 ? N - j : 32;
        const int nv = w > 16 ? 2 : 1;
        const int64_t last = w - 16 * (nv - 1);
        const __mmask16 ml = (__mmask16)(last >= 16 ? 0xffffu : (1u << last) - 1u);
        /* rows in tiles of at most mrx, balanced (9 rows: one tile, 13: 7 + 6) */
        const int64_t mrx = nv == 1 ? 12 : 6, nt = (M + mrx - 1) / mrx;
        for (int64_t t = 0, i = 0; t < nt; t++) {
            const int64_t mr = (M - i) / (nt - t) + ((M - i) % (nt - t) != 0);
            if (nv == 1) tile1((int)mr, K, A + i * lda, lda, B + j, ldb, Y + i * ldy + j, ldy, ml);
            else tile2((int)mr, K, A + i * lda, lda, B + j, ldb, Y + i * ldy + j, ldy, ml);
            i += mr;
        }
    }
}
#endif
