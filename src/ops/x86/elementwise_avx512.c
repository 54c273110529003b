/* AVX-512 float32 loops for Add/Sub/Mul/Div/Min/Max, and half <-> float conversion for Cast.
 * Compiled with -mavx512f/bw/vl/dq; reached through the variant tables in simd_elementwise.h.
 * Results are bit-identical to the portable loops: each lane does the same IEEE operation, and
 * tails use masked loads/stores (masked-off lanes are neither read nor written). */
#include <immintrin.h>

#include "simd_elementwise.h"

/* Mask of the first r < 16 lanes. */
static inline __mmask16 tail16(size_t r) { return (__mmask16)((1u << r) - 1u); }

/* VOP(x, y) on __m512 vectors. Loads of a block happen before its stores, so o may equal a or
 * b. Blocks of 64 elements, then 16, then one masked block. */
#define AVX512_LOOPS(NAME, VOP)                                                                  \
    static int NAME##_vv(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const float *a = a_, *b = b_;                                                            \
        float *o = o_;                                                                           \
        size_t i = 0;                                                                            \
        for (; i + 64 <= n; i += 64) {                                                           \
            __m512 r0 = VOP(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i));                     \
            __m512 r1 = VOP(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16));           \
            __m512 r2 = VOP(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32));           \
            __m512 r3 = VOP(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48));           \
            _mm512_storeu_ps(o + i, r0);                                                         \
            _mm512_storeu_ps(o + i + 16, r1);                                                    \
            _mm512_storeu_ps(o + i + 32, r2);                                                    \
            _mm512_storeu_ps(o + i + 48, r3);                                                    \
        }                                                                                        \
        for (; i + 16 <= n; i += 16)                                                             \
            _mm512_storeu_ps(o + i, VOP(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));        \
        if (i < n) {                                                                             \
            __mmask16 m = tail16(n - i);                                                         \
            __m512 r = VOP(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i));    \
            _mm512_mask_storeu_ps(o + i, m, r);                                                  \
        }                                                                                        \
        return 0;                                                                                \
    }                                                                                            \
    static int NAME##_vs(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const float *a = a_;                                                                     \
        const __m512 vy = _mm512_set1_ps(*(const float *)b_);                                    \
        float *o = o_;                                                                           \
        size_t i = 0;                                                                            \
        for (; i + 64 <= n; i += 64) {                                                           \
            __m512 r0 = VOP(_mm512_loadu_ps(a + i), vy);                                         \
            __m512 r1 = VOP(_mm512_loadu_ps(a + i + 16), vy);                                    \
            __m512 r2 = VOP(_mm512_loadu_ps(a + i + 32), vy);                                    \
            __m512 r3 = VOP(_mm512_loadu_ps(a + i + 48), vy);                                    \
            _mm512_storeu_ps(o + i, r0);                                                         \
            _mm512_storeu_ps(o + i + 16, r1);                                                    \
            _mm512_storeu_ps(o + i + 32, r2);                                                    \
            _mm512_storeu_ps(o + i + 48, r3);                                                    \
        }                                                                                        \
        for (; i + 16 <= n; i += 16) _mm512_storeu_ps(o + i, VOP(_mm512_loadu_ps(a + i), vy));   \
        if (i < n) {                                                                             \
            __mmask16 m = tail16(n - i);                                                         \
            _mm512_mask_storeu_ps(o + i, m, VOP(_mm512_maskz_loadu_ps(m, a + i), vy));           \
        }                                                                                        \
        return 0;                                                                                \
    }                                                                                            \
    static int NAME##_sv(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const __m512 vx = _mm512_set1_ps(*(const float *)a_);                                    \
        const float *b = b_;                                                                     \
        float *o = o_;                                                                           \
        size_t i = 0;                                                                            \
        for (; i + 64 <= n; i += 64) {                                                           \
            __m512 r0 = VOP(vx, _mm512_loadu_ps(b + i));                                         \
            __m512 r1 = VOP(vx, _mm512_loadu_ps(b + i + 16));                                    \
            __m512 r2 = VOP(vx, _mm512_loadu_ps(b + i + 32));                                    \
            __m512 r3 = VOP(vx, _mm512_loadu_ps(b + i + 48));                                    \
            _mm512_storeu_ps(o + i, r0);                                                         \
            _mm512_storeu_ps(o + i + 16, r1);                                                    \
            _mm512_storeu_ps(o + i + 32, r2);                                                    \
            _mm512_storeu_ps(o + i + 48, r3);                                                    \
        }                                                                                        \
        for (; i + 16 <= n; i += 16) _mm512_storeu_ps(o + i, VOP(vx, _mm512_loadu_ps(b + i)));   \
        if (i < n) {                                                                             \
            __mmask16 m = tail16(n - i);                                                         \
            _mm512_mask_storeu_ps(o + i, m, VOP(vx, _mm512_maskz_loadu_ps(m, b + i)));           \
        }                                                                                        \
        return 0;                                                                                \
    }


/* NaN-propagating min/max: VMINPS/VMAXPS return the second operand when either is NaN, so a NaN
 * in x is put back with a masked move. */
static inline __m512 vmin_nan(__m512 x, __m512 y) {
    return _mm512_mask_mov_ps(_mm512_min_ps(x, y), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}
static inline __m512 vmax_nan(__m512 x, __m512 y) {
    return _mm512_mask_mov_ps(_mm512_max_ps(x, y), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

AVX512_LOOPS(add_avx512, _mm512_add_ps)
AVX512_LOOPS(sub_avx512, _mm512_sub_ps)
AVX512_LOOPS(mul_avx512, _mm512_mul_ps)
AVX512_LOOPS(div_avx512, _mm512_div_ps)
AVX512_LOOPS(min_avx512, vmin_nan)
AVX512_LOOPS(max_avx512, vmax_nan)

const frt_bin_loops frt_ew_f32_avx512[FRT_EW_N] = {
    [FRT_EW_ADD] = FRT_EW_L3(FRT_EW_ON_ADD, add_avx512),
    [FRT_EW_SUB] = FRT_EW_L3(FRT_EW_ON_SUB, sub_avx512),
    [FRT_EW_MUL] = FRT_EW_L3(FRT_EW_ON_MUL, mul_avx512),
    [FRT_EW_DIV] = FRT_EW_L3(FRT_EW_ON_DIV, div_avx512),
    [FRT_EW_MIN] = FRT_EW_L3(FRT_EW_ON_MIN, min_avx512),
    [FRT_EW_MAX] = FRT_EW_L3(FRT_EW_ON_MAX, max_avx512),
};

/* ---- half <-> float (round to nearest even, like the portable ones in cast.c) ---------------- */

void frt_f16_to_f32_avx512(const uint16_t *x, float *y, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(x + i))));
    if (i < n) {
        __mmask16 m = tail16(n - i);
        _mm512_mask_storeu_ps(y + i, m, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, x + i)));
    }
}

void frt_f32_to_f16_avx512(const float *x, uint16_t *y, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(y + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    if (i < n) {
        __mmask16 m = tail16(n - i);
        __m256i h = _mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, x + i), _MM_FROUND_TO_NEAREST_INT);
        _mm256_mask_storeu_epi16(y + i, m, h);
    }
}
