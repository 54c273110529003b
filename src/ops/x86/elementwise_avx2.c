/* AVX2 float32 loops for Add/Sub/Mul/Div/Min/Max, and F16C half <-> float conversion for Cast.
 * Compiled with -mavx2 -mfma -mf16c; reached through the variant tables in simd_elementwise.h.
 * Results are bit-identical to the portable loops: each lane does the same IEEE operation. */
#include <immintrin.h>

#include "simd_elementwise.h"

/* VOP(x, y) on __m256 vectors and SOP(x, y) on floats compute the same operation. Loads of a
 * block happen before its stores, so o may equal a or b. */
#define AVX_LOOPS(NAME, VOP, SOP)                                                                \
    static int NAME##_vv(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const float *a = a_, *b = b_;                                                            \
        float *o = o_;                                                                           \
        size_t i = 0;                                                                            \
        for (; i + 32 <= n; i += 32) {                                                           \
            __m256 r0 = VOP(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));                    \
            __m256 r1 = VOP(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));             \
            __m256 r2 = VOP(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16));           \
            __m256 r3 = VOP(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24));           \
            _mm256_storeu_ps(o + i, r0);                                                         \
            _mm256_storeu_ps(o + i + 8, r1);                                                     \
            _mm256_storeu_ps(o + i + 16, r2);                                                    \
            _mm256_storeu_ps(o + i + 24, r3);                                                    \
        }                                                                                        \
        for (; i + 8 <= n; i += 8)                                                               \
            _mm256_storeu_ps(o + i, VOP(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));        \
        for (; i < n; i++) o[i] = SOP(a[i], b[i]);                                               \
        return 0;                                                                                \
    }                                                                                            \
    static int NAME##_vs(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const float *a = a_;                                                                     \
        const float y = *(const float *)b_;                                                      \
        const __m256 vy = _mm256_set1_ps(y);                                                     \
        float *o = o_;                                                                           \
        size_t i = 0;                                                                            \
        for (; i + 32 <= n; i += 32) {                                                           \
            __m256 r0 = VOP(_mm256_loadu_ps(a + i), vy);                                         \
            __m256 r1 = VOP(_mm256_loadu_ps(a + i + 8), vy);                                     \
            __m256 r2 = VOP(_mm256_loadu_ps(a + i + 16), vy);                                    \
            __m256 r3 = VOP(_mm256_loadu_ps(a + i + 24), vy);                                    \
            _mm256_storeu_ps(o + i, r0);                                                         \
            _mm256_storeu_ps(o + i + 8, r1);                                                     \
            _mm256_storeu_ps(o + i + 16, r2);                                                    \
            _mm256_storeu_ps(o + i + 24, r3);                                                    \
        }                                                                                        \
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(o + i, VOP(_mm256_loadu_ps(a + i), vy));     \
        for (; i < n; i++) o[i] = SOP(a[i], y);                                                  \
        return 0;                                                                                \
    }                                                                                            \
    static int NAME##_sv(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const float x = *(const float *)a_;                                                      \
        const __m256 vx = _mm256_set1_ps(x);                                                     \
        const float *b = b_;                                                                     \
        float *o = o_;                                                                           \
        size_t i = 0;                                                                            \
        for (; i + 32 <= n; i += 32) {                                                           \
            __m256 r0 = VOP(vx, _mm256_loadu_ps(b + i));                                         \
            __m256 r1 = VOP(vx, _mm256_loadu_ps(b + i + 8));                                     \
            __m256 r2 = VOP(vx, _mm256_loadu_ps(b + i + 16));                                    \
            __m256 r3 = VOP(vx, _mm256_loadu_ps(b + i + 24));                                    \
            _mm256_storeu_ps(o + i, r0);                                                         \
            _mm256_storeu_ps(o + i + 8, r1);                                                     \
            _mm256_storeu_ps(o + i + 16, r2);                                                    \
            _mm256_storeu_ps(o + i + 24, r3);                                                    \
        }                                                                                        \
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(o + i, VOP(vx, _mm256_loadu_ps(b + i)));     \
        for (; i < n; i++) o[i] = SOP(x, b[i]);                                                  \
        return 0;                                                                                \
    }

#define S_ADD(x, y) ((x) + (y))
#define S_SUB(x, y) ((x) - (y))
#define S_MUL(x, y) ((x) * (y))
#define S_DIV(x, y) ((x) / (y))


/* NaN-propagating min/max: MINPS/MAXPS return the second operand when either is NaN, so a NaN
 * in x is put back with a blend. */
static inline __m256 vmin_nan(__m256 x, __m256 y) {
    return _mm256_blendv_ps(_mm256_min_ps(x, y), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
static inline __m256 vmax_nan(__m256 x, __m256 y) {
    return _mm256_blendv_ps(_mm256_max_ps(x, y), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
#define S_MIN(x, y) ((x) != (x) ? (x) : (x) < (y) ? (x) : (y))
#define S_MAX(x, y) ((x) != (x) ? (x) : (x) > (y) ? (x) : (y))

AVX_LOOPS(add_avx2, _mm256_add_ps, S_ADD)
AVX_LOOPS(sub_avx2, _mm256_sub_ps, S_SUB)
AVX_LOOPS(mul_avx2, _mm256_mul_ps, S_MUL)
AVX_LOOPS(div_avx2, _mm256_div_ps, S_DIV)
AVX_LOOPS(min_avx2, vmin_nan, S_MIN)
AVX_LOOPS(max_avx2, vmax_nan, S_MAX)

const frt_bin_loops frt_ew_f32_avx2[FRT_EW_N] = {
    [FRT_EW_ADD] = FRT_EW_L3(FRT_EW_ON_ADD, add_avx2),
    [FRT_EW_SUB] = FRT_EW_L3(FRT_EW_ON_SUB, sub_avx2),
    [FRT_EW_MUL] = FRT_EW_L3(FRT_EW_ON_MUL, mul_avx2),
    [FRT_EW_DIV] = FRT_EW_L3(FRT_EW_ON_DIV, div_avx2),
    [FRT_EW_MIN] = FRT_EW_L3(FRT_EW_ON_MIN, min_avx2),
    [FRT_EW_MAX] = FRT_EW_L3(FRT_EW_ON_MAX, max_avx2),
};

/* ---- F16C conversions (round to nearest even, like the portable ones in cast.c) ----------- */

void frt_f16_to_f32_avx2(const uint16_t *x, float *y, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))));
    if (i < n) {
        uint16_t tx[8] = {0};
        float ty[8];
        for (size_t k = 0; k < n - i; k++) tx[k] = x[i + k];
        _mm256_storeu_ps(ty, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)tx)));
        for (size_t k = 0; k < n - i; k++) y[i + k] = ty[k];
    }
}

void frt_f32_to_f16_avx2(const float *x, uint16_t *y, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(y + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    if (i < n) {
        float tx[8] = {0};
        uint16_t ty[8];
        for (size_t k = 0; k < n - i; k++) tx[k] = x[i + k];
        _mm_storeu_si128((__m128i *)ty,
                         _mm256_cvtps_ph(_mm256_loadu_ps(tx), _MM_FROUND_TO_NEAREST_INT));
        for (size_t k = 0; k < n - i; k++) y[i + k] = ty[k];
    }
}
