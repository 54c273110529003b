/* AVX2 inner loop of the integer products in src/ops/quant.c (contract there: frt_qgemm_fn).
 *   C[M, N] (int32, ldc) = A[M, 2*K2] (int16, lda) x B, B packed in pairs of rows:
 *   Bp[(k2*N + j)*2 + h] = B[2*k2 + h][j].
 * A pair (A[i][2k], A[i][2k+1]) broadcast as one int32 times 8 packed column pairs is one
 * VPMADDWD: 8 int32 sums of two products. Operands are zero-point-adjusted 8-bit values (|v| <=
 * 255), so a pair sum never overflows; the accumulation wraps in 32 bits like the portable loop.
 * Register tile: 4 rows x 16 columns. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

void frt_qgemm_i16_avx2(int64_t M, int64_t N, int64_t K2, const int16_t *A, int64_t lda,
                        const int16_t *Bp, int32_t *C, int64_t ldc);

static inline __m256i bcast_pair(const int16_t *a) {
    int32_t v;
    memcpy(&v, a, 4);
    return _mm256_set1_epi32(v);
}

/* Column j of C for rows a[0..R) (scalar tail). */
static void col_tail(int R, const int16_t *const *a, int64_t N, int64_t K2, const int16_t *Bp,
                     int64_t j, int32_t *const *c) {
    for (int r = 0; r < R; r++) {
        uint32_t s = 0;
        for (int64_t k = 0; k < K2; k++) {
            const int16_t *b = Bp + (k * N + j) * 2;
            s += (uint32_t)(a[r][2 * k] * (int32_t)b[0] + a[r][2 * k + 1] * (int32_t)b[1]);
        }
        c[r][j] = (int32_t)s;
    }
}

/* Rows a[0..R) (R <= 4) x all columns. */
static void rows(int R, const int16_t *const *a, int64_t N, int64_t K2, const int16_t *Bp,
                 int32_t *const *c) {
    const int64_t ldb = 2 * N;
    int64_t j = 0;
    if (R == 4) {
        for (; j + 16 <= N; j += 16) {
            __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00;
            __m256i c20 = c00, c21 = c00, c30 = c00, c31 = c00;
            const int16_t *b = Bp + 2 * j;
            for (int64_t k = 0; k < K2; k++, b += ldb) {
                __m256i b0 = _mm256_loadu_si256((const __m256i *)b);
                __m256i b1 = _mm256_loadu_si256((const __m256i *)(b + 16));
                __m256i p = bcast_pair(a[0] + 2 * k);
                c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(p, b0));
                c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(p, b1));
                p = bcast_pair(a[1] + 2 * k);
                c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(p, b0));
                c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(p, b1));
                p = bcast_pair(a[2] + 2 * k);
                c20 = _mm256_add_epi32(c20, _mm256_madd_epi16(p, b0));
                c21 = _mm256_add_epi32(c21, _mm256_madd_epi16(p, b1));
                p = bcast_pair(a[3] + 2 * k);
                c30 = _mm256_add_epi32(c30, _mm256_madd_epi16(p, b0));
                c31 = _mm256_add_epi32(c31, _mm256_madd_epi16(p, b1));
            }
            _mm256_storeu_si256((__m256i *)(c[0] + j), c00);
            _mm256_storeu_si256((__m256i *)(c[0] + j + 8), c01);
            _mm256_storeu_si256((__m256i *)(c[1] + j), c10);
            _mm256_storeu_si256((__m256i *)(c[1] + j + 8), c11);
            _mm256_storeu_si256((__m256i *)(c[2] + j), c20);
            _mm256_storeu_si256((__m256i *)(c[2] + j + 8), c21);
            _mm256_storeu_si256((__m256i *)(c[3] + j), c30);
            _mm256_storeu_si256((__m256i *)(c[3] + j + 8), c31);
        }
    }
    for (; j + 8 <= N; j += 8) {
        __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                          _mm256_setzero_si256()};
        const int16_t *b = Bp + 2 * j;
        for (int64_t k = 0; k < K2; k++, b += ldb) {
            __m256i b0 = _mm256_loadu_si256((const __m256i *)b);
            for (int r = 0; r < R; r++)
                acc[r] = _mm256_add_epi32(acc[r], _mm256_madd_epi16(bcast_pair(a[r] + 2 * k), b0));
        }
        for (int r = 0; r < R; r++) _mm256_storeu_si256((__m256i *)(c[r] + j), acc[r]);
    }
    for (; j < N; j++) col_tail(R, a, N, K2, Bp, j, c);
}

void frt_qgemm_i16_avx2(int64_t M, int64_t N, int64_t K2, const int16_t *A, int64_t lda,
                        const int16_t *Bp, int32_t *C, int64_t ldc) {
    for (int64_t i = 0; i < M; i += 4) {
        int R = M - i < 4 ? (int)(M - i) : 4;
        const int16_t *a[4];
        int32_t *c[4];
        for (int r = 0; r < 4; r++) {
            int64_t ii = i + (r < R ? r : 0);
            a[r] = A + ii * lda;
            c[r] = C + ii * ldc;
        }
        rows(R, a, N, K2, Bp, c);
    }
}
