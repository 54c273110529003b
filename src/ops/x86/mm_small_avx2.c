/* AVX2/FMA direct small matrix product (mm_small.h): register tiles of mr rows x nv vectors of 8
 * columns, B rows loaded (VMASKMOV for the last columns), A elements broadcast, one FMA chain per
 * accumulator over k in order. Called only through the AVX2 entry of the variant table. */
#include "ops/mm_small.h"

#if FRT_HAVE_X86
#include <immintrin.h>

#define AI static inline __attribute__((always_inline))

/* Y[0..mr, columns of nv vectors] = A[0..mr, :] * B[:, same columns]; the last vector's lanes
 * limited by ml (all-ones lanes are kept). */
AI void tile(int mr, int nv, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
             float *Y, int64_t ldy, __m256i ml) {
    __m256 acc[12][2];
    #pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
        acc[r][0] = _mm256_setzero_ps();
        acc[r][1] = _mm256_setzero_ps();
    }
    for (int64_t k = 0; k < K; k++) {
        const float *b = B + k * ldb;
        __m256 b0, b1 = _mm256_setzero_ps();
        if (nv == 1) {
            b0 = _mm256_maskload_ps(b, ml);
        } else {
            b0 = _mm256_loadu_ps(b);
            b1 = _mm256_maskload_ps(b + 8, ml);
        }
        #pragma GCC unroll 12
        for (int r = 0; r < mr; r++) {
            __m256 a = _mm256_broadcast_ss(A + r * lda + k);
            acc[r][0] = _mm256_fmadd_ps(a, b0, acc[r][0]);
            if (nv == 2) acc[r][1] = _mm256_fmadd_ps(a, b1, acc[r][1]);
        }
    }
    #pragma GCC unroll 12
    for (int r = 0; r < mr; r++) {
        if (nv == 1) {
            _mm256_maskstore_ps(Y + r * ldy, ml, acc[r][0]);
        } else {
            _mm256_storeu_ps(Y + r * ldy, acc[r][0]);
            _mm256_maskstore_ps(Y + r * ldy + 8, ml, acc[r][1]);
        }
    }
}

#define T1(m) case m: tile(m, 1, K, A, lda, B, ldb, Y, ldy, ml); break
#define T2(m) case m: tile(m, 2, K, A, lda, B, ldb, Y, ldy, ml); break

static void tile1(int mr, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                  float *Y, int64_t ldy, __m256i ml) {
    switch (mr) {
        T1(1); T1(2); T1(3); T1(4); T1(5); T1(6); T1(7); T1(8); T1(9); T1(10); T1(11);
        default: tile(12, 1, K, A, lda, B, ldb, Y, ldy, ml); break;
    }
}

static void tile2(int mr, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                  float *Y, int64_t ldy, __m256i ml) {
    switch (mr) {
        T2(1); T2(2); T2(3); T2(4); T2(5);
        default: tile(6, 2, K, A, lda, B, ldb, Y, ldy, ml); break;
    }
}

void frt_mm_small_avx2(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                       const float *B, int64_t ldb, float *Y, int64_t ldy) {
    for (int64_t j = 0; j < N; j += 16) {
        const int64_t w = N - j < 16 ? N - j : 16;
        const int nv = w > 8 ? 2 : 1;
        const int64_t last = w - 8 * (nv - 1);
        /* lane l is kept when l < last (the sign bit of the mask lane set) */
        const __m256i ml = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)last),
                                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
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
