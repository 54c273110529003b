/* AVX2 float32 comparison loops and the 4-byte Where loop of the logic operators.
 * Compiled with -mavx2; reached through frt_logic_variant_get (logic.c). Results are identical to
 * the portable loops: ordered, non-signalling compares (NaN compares false) and a bitwise select. */
#include <immintrin.h>
#include <string.h>

#include "simd_logic.h"

/* 32 comparison results (four vectors of 0 / -1 lanes) -> 32 bytes of 0 / 1 in order. */
static inline void store_mask32(uint8_t *o, __m256 c0, __m256 c1, __m256 c2, __m256 c3) {
    __m256i p01 = _mm256_packs_epi32(_mm256_castps_si256(c0), _mm256_castps_si256(c1));
    __m256i p23 = _mm256_packs_epi32(_mm256_castps_si256(c2), _mm256_castps_si256(c3));
    __m256i b = _mm256_packs_epi16(p01, p23);
    b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *)o, _mm256_and_si256(b, _mm256_set1_epi8(1)));
}

/* PRED is a _CMP_* predicate; SOP the same comparison on floats. sa / sb 0 broadcasts a[0] /
 * b[0]. */
#define AVX_CMP(NAME, PRED, SOP)                                                                 \
    static void NAME(const void *a_, const void *b_, uint8_t *o, size_t n, size_t sa,             \
                     size_t sb) {                                                                \
        const float *a = a_, *b = b_;                                                            \
        __m256 as = _mm256_set1_ps(a[0]), bs = _mm256_set1_ps(b[0]);                             \
        size_t i = 0;                                                                            \
        for (; i + 32 <= n; i += 32) {                                                           \
            __m256 c[4];                                                                         \
            for (int k = 0; k < 4; k++) {                                                        \
                __m256 x = sa ? _mm256_loadu_ps(a + i + 8 * k) : as;                             \
                __m256 y = sb ? _mm256_loadu_ps(b + i + 8 * k) : bs;                             \
                c[k] = _mm256_cmp_ps(x, y, PRED);                                                \
            }                                                                                    \
            store_mask32(o + i, c[0], c[1], c[2], c[3]);                                         \
        }                                                                                        \
        for (; i < n; i++) {                                                                     \
            float x = a[i * sa], y = b[i * sb];                                                  \
            o[i] = (uint8_t)(SOP);                                                               \
        }                                                                                        \
    }

AVX_CMP(eq_f32, _CMP_EQ_OQ, x == y)
AVX_CMP(lt_f32, _CMP_LT_OQ, x < y)
AVX_CMP(gt_f32, _CMP_GT_OQ, x > y)
AVX_CMP(le_f32, _CMP_LE_OQ, x <= y)
AVX_CMP(ge_f32, _CMP_GE_OQ, x >= y)

const frt_cmp_fn frt_cmp_f32_avx2[FRT_CMP_N] = {eq_f32, lt_f32, gt_f32, le_f32, ge_f32};

void frt_where32_avx2(const uint8_t *c, const void *x_, const void *y_, void *o_, size_t n,
                      size_t sc, size_t sx, size_t sy) {
    const float *x = x_, *y = y_;
    float *o = o_;
    size_t i = 0;
    if (sc) {
        __m256 xs = _mm256_set1_ps(x[0]), ys = _mm256_set1_ps(y[0]);
        for (; i + 8 <= n; i += 8) {
            int64_t cb;
            memcpy(&cb, c + i, 8);
            __m256i ci = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(cb));
            __m256 m = _mm256_castsi256_ps(_mm256_cmpgt_epi32(ci, _mm256_setzero_si256()));
            __m256 xv = sx ? _mm256_loadu_ps(x + i) : xs, yv = sy ? _mm256_loadu_ps(y + i) : ys;
            _mm256_storeu_ps(o + i, _mm256_blendv_ps(yv, xv, m));
        }
    }
    for (; i < n; i++) {
        const float *src = c[i * sc] ? x + i * sx : y + i * sy;
        memcpy(o + i, src, 4); /* bits as they are (NaN payloads, int32 data) */
    }
}
