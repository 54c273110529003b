/* AVX-512 float32 exp, sigmoid and tanh on one zmm vector, shared by the activation loops
 * (activation_avx512.c) and the fused recurrent steps (rnn_avx512.c), so both give the same
 * values. Numerics: see activation_avx512.c. Include only from files compiled for this tier. */
#ifndef FRT_OPS_X86_ACT_MATH_AVX512_H
#define FRT_OPS_X86_ACT_MATH_AVX512_H

#include <immintrin.h>

static inline __m512 exp512(__m512 x) {
    const __m512 log2e = _mm512_set1_ps(1.44269504088896341f);
    const __m512 ln2_hi = _mm512_set1_ps(0.693359375f);    /* 9 significant bits: n*hi exact */
    const __m512 ln2_lo = _mm512_set1_ps(-2.12194440e-4f); /* ln2 - ln2_hi */
    x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);         /* NaN x stays NaN (2nd operand) */
    x = _mm512_min_ps(_mm512_set1_ps(88.0f), x);
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, log2e),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, ln2_hi, x);
    r = _mm512_fnmadd_ps(n, ln2_lo, r);
    /* exp(r) ~ 1 + r + r^2 (c2 + c3 r + c4 r^2 + c5 r^3 + c6 r^4) */
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(0.0013822003f), r, _mm512_set1_ps(0.008362863f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.0416678f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.16666579f));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.49999997f));
    __m512 p = _mm512_fmadd_ps(q, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_scalef_ps(p, n); /* p * 2^n, n integral in [-150, 127] */
}

static inline __m512 sigmoid512(__m512 x) {
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 t = _mm512_or_ps(x, _mm512_set1_ps(-0.0f)); /* -|x| */
    __m512 e = exp512(t);                              /* in [0, 1] */
    __m512 d = _mm512_add_ps(one, e);
    __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ); /* false for NaN */
    /* x >= 0: 1 / (1 + e^-x); x < 0: e^x / (1 + e^x) (no cancellation either way) */
    return _mm512_div_ps(_mm512_mask_blend_ps(pos, e, one), d);
}

static inline __m512 tanh512(__m512 x) {
    const __m512 sign = _mm512_set1_ps(-0.0f);
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 ax = _mm512_andnot_ps(sign, x);
    /* |x| < 0.625: x + x^3 P(x^2), P fitted for relative error (~1e-8) */
    __m512 x2 = _mm512_mul_ps(x, x);
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(-0.0057049845f), x2, _mm512_set1_ps(0.020639084f));
    q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(-0.053739715f));
    q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(0.13331442f));
    q = _mm512_fmadd_ps(q, x2, _mm512_set1_ps(-0.3333328f));
    __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(q, x2), x, x);
    /* otherwise: (1 - e) / (1 + e) with e = exp(-2|x|) <= 0.29, sign of x restored */
    __m512 e = exp512(_mm512_mul_ps(ax, _mm512_set1_ps(-2.0f)));
    __m512 big = _mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e));
    big = _mm512_or_ps(big, _mm512_and_ps(x, sign));
    __mmask16 is_small = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.625f), _CMP_LT_OQ); /* no NaN */
    return _mm512_mask_blend_ps(is_small, big, small);
}

#endif
