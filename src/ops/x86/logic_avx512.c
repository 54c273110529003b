/* AVX-512 float32 comparison loops and the 4-byte Where loop of the logic operators.
 * Compiled with AVX-512 F/BW/VL/DQ; reached through frt_logic_variant_get (logic.c). Results are
 * identical to the portable loops. Tails use masked loads and stores. */
#include <immintrin.h>

#include "simd_logic.h"

static inline __mmask16 tail_mask(size_t r) { return (__mmask16)((1u << r) - 1u); }

#define AVX512_CMP(NAME, PRED)                                                                   \
    static void NAME(const void *a_, const void *b_, uint8_t *o, size_t n, size_t sa,             \
                     size_t sb) {                                                                \
        const float *a = a_, *b = b_;                                                            \
        __m512 as = _mm512_set1_ps(a[0]), bs = _mm512_set1_ps(b[0]);                             \
        const __m128i one = _mm_set1_epi8(1);                                                    \
        size_t i = 0;                                                                            \
        for (; i + 16 <= n; i += 16) {                                                           \
            __m512 x = sa ? _mm512_loadu_ps(a + i) : as, y = sb ? _mm512_loadu_ps(b + i) : bs;   \
            _mm_storeu_si128((__m128i *)(o + i),                                                 \
                             _mm_maskz_mov_epi8(_mm512_cmp_ps_mask(x, y, PRED), one));           \
        }                                                                                        \
        if (i < n) {                                                                             \
            __mmask16 t = tail_mask(n - i);                                                      \
            __m512 x = sa ? _mm512_maskz_loadu_ps(t, a + i) : as;                                \
            __m512 y = sb ? _mm512_maskz_loadu_ps(t, b + i) : bs;                                \
            _mm_mask_storeu_epi8(o + i, t,                                                       \
                                 _mm_maskz_mov_epi8(_mm512_cmp_ps_mask(x, y, PRED), one));       \
        }                                                                                        \
    }

AVX512_CMP(eq_f32, _CMP_EQ_OQ)
AVX512_CMP(lt_f32, _CMP_LT_OQ)
AVX512_CMP(gt_f32, _CMP_GT_OQ)
AVX512_CMP(le_f32, _CMP_LE_OQ)
AVX512_CMP(ge_f32, _CMP_GE_OQ)

const frt_cmp_fn frt_cmp_f32_avx512[FRT_CMP_N] = {eq_f32, lt_f32, gt_f32, le_f32, ge_f32};

void frt_where32_avx512(const uint8_t *c, const void *x_, const void *y_, void *o_, size_t n,
                        size_t sc, size_t sx, size_t sy) {
    const float *x = x_, *y = y_;
    float *o = o_;
    if (!sc) { /* one condition for the whole row */
        const float *src = c[0] ? x : y;
        size_t ss = c[0] ? sx : sy;
        for (size_t i = 0; i < n; i++) o[i] = src[i * ss];
        return;
    }
    __m512 xs = _mm512_set1_ps(x[0]), ys = _mm512_set1_ps(y[0]);
    for (size_t i = 0; i < n; i += 16) {
        __mmask16 t = n - i >= 16 ? (__mmask16)0xffff : tail_mask(n - i);
        __m128i cv = _mm_maskz_loadu_epi8(t, c + i);
        __mmask16 m = _mm_test_epi8_mask(cv, cv);
        __m512 xv = sx ? _mm512_maskz_loadu_ps(t, x + i) : xs;
        __m512 yv = sy ? _mm512_maskz_loadu_ps(t, y + i) : ys;
        _mm512_mask_storeu_ps(o + i, t, _mm512_mask_blend_ps(m, yv, xv));
    }
}
