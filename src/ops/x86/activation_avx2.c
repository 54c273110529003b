/* AVX2/FMA float32 activations: Relu, Clip, Sigmoid, Tanh, Softmax (rows and strided helpers).
 * Compiled with -mavx2 -mfma; reached through the variant table in simd_elementwise.h.
 *
 * exp: range reduction x = n*ln2 + r, |r| <= ln2/2 (Cody-Waite split of ln2), a degree-6
 * polynomial fitted for relative error (max ~1e-8 on the interval), and 2^n applied as two
 * factors so results down to the float denormals stay accurate. Inputs are clamped to
 * [-104, 88]: below, the result is 0 in float; above is never needed here.
 * Sigmoid and tanh are within ~2e-7 relative of the exact values (tested over a dense sweep).
 * NaN inputs give NaN; +-inf give the limits. Relu and Clip are exact and use max/min operand
 * orders that match the portable code, NaN included.
 */
#include <immintrin.h>

#include "simd_elementwise.h"

static inline __m256 exp256(__m256 x) {
    const __m256 log2e = _mm256_set1_ps(1.44269504088896341f);
    const __m256 ln2_hi = _mm256_set1_ps(0.693359375f);       /* 9 significant bits: n*hi exact */
    const __m256 ln2_lo = _mm256_set1_ps(-2.12194440e-4f);    /* ln2 - ln2_hi */
    x = _mm256_max_ps(_mm256_set1_ps(-104.0f), x);            /* NaN x stays NaN (2nd operand) */
    x = _mm256_min_ps(_mm256_set1_ps(88.0f), x);
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, log2e),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, ln2_hi, x);
    r = _mm256_fnmadd_ps(n, ln2_lo, r);
    /* exp(r) ~ 1 + r + r^2 (c2 + c3 r + c4 r^2 + c5 r^3 + c6 r^4) */
    __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(0.0013822003f), r, _mm256_set1_ps(0.008362863f));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.0416678f));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.16666579f));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.49999997f));
    __m256 p = _mm256_fmadd_ps(q, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    /* 2^n = 2^n1 * 2^n2 with n in [-150, 127]: both factors are normal floats */
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i n1 = _mm256_srai_epi32(ni, 1);
    __m256i n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

static inline __m256 sigmoid256(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 t = _mm256_or_ps(x, _mm256_set1_ps(-0.0f)); /* -|x| */
    __m256 e = exp256(t);                              /* in [0, 1] */
    __m256 d = _mm256_add_ps(one, e);
    __m256 pos = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ); /* false for NaN */
    /* x >= 0: 1 / (1 + e^-x); x < 0: e^x / (1 + e^x) (no cancellation either way) */
    return _mm256_div_ps(_mm256_blendv_ps(e, one, pos), d);
}

static inline __m256 tanh256(__m256 x) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 ax = _mm256_andnot_ps(sign, x);
    /* |x| < 0.625: x + x^3 P(x^2), P fitted for relative error (~1e-8) */
    __m256 x2 = _mm256_mul_ps(x, x);
    __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(-0.0057049845f), x2, _mm256_set1_ps(0.020639084f));
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-0.053739715f));
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(0.13331442f));
    q = _mm256_fmadd_ps(q, x2, _mm256_set1_ps(-0.3333328f));
    __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(q, x2), x, x);
    /* otherwise: (1 - e) / (1 + e) with e = exp(-2|x|) <= 0.29, sign of x restored */
    __m256 e = exp256(_mm256_mul_ps(ax, _mm256_set1_ps(-2.0f)));
    __m256 big = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
    big = _mm256_or_ps(big, _mm256_and_ps(x, sign));
    __m256 is_small = _mm256_cmp_ps(ax, _mm256_set1_ps(0.625f), _CMP_LT_OQ); /* false for NaN */
    return _mm256_blendv_ps(big, small, is_small);
}

/* Applies VFN to n floats; the tail goes through a padded 8-lane buffer. */
#define UNARY_LOOP(VFN)                                                                          \
    size_t i = 0;                                                                                \
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, VFN(_mm256_loadu_ps(x + i)));             \
    if (i < n) {                                                                                 \
        float t[8] = {0};                                                                        \
        for (size_t k = 0; k < n - i; k++) t[k] = x[i + k];                                      \
        _mm256_storeu_ps(t, VFN(_mm256_loadu_ps(t)));                                            \
        for (size_t k = 0; k < n - i; k++) y[i + k] = t[k];                                      \
    }

void frt_sigmoid_f32_avx2(const float *x, float *y, size_t n) { UNARY_LOOP(sigmoid256) }
void frt_tanh_f32_avx2(const float *x, float *y, size_t n) { UNARY_LOOP(tanh256) }

void frt_relu_f32_avx2(const float *x, float *y, size_t n) {
    const __m256 z = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 a0 = _mm256_max_ps(z, _mm256_loadu_ps(x + i));
        __m256 a1 = _mm256_max_ps(z, _mm256_loadu_ps(x + i + 8));
        __m256 a2 = _mm256_max_ps(z, _mm256_loadu_ps(x + i + 16));
        __m256 a3 = _mm256_max_ps(z, _mm256_loadu_ps(x + i + 24));
        _mm256_storeu_ps(y + i, a0);
        _mm256_storeu_ps(y + i + 8, a1);
        _mm256_storeu_ps(y + i + 16, a2);
        _mm256_storeu_ps(y + i + 24, a3);
    }
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_max_ps(z, _mm256_loadu_ps(x + i)));
    for (; i < n; i++) y[i] = 0.0f > x[i] ? 0.0f : x[i];
}

void frt_clip_f32_avx2(const float *x, float *y, size_t n, float lo, float hi) {
    const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 a0 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, _mm256_loadu_ps(x + i)));
        __m256 a1 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, _mm256_loadu_ps(x + i + 8)));
        _mm256_storeu_ps(y + i, a0);
        _mm256_storeu_ps(y + i + 8, a1);
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_min_ps(vhi, _mm256_max_ps(vlo, _mm256_loadu_ps(x + i))));
    for (; i < n; i++) {
        float v = x[i];
        v = lo > v ? lo : v;
        y[i] = hi < v ? hi : v;
    }
}

static inline float hmax256(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
}

static inline float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

void frt_softmax_rows_f32_avx2(const float *x, float *y, size_t rows, size_t len) {
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * len;
        float *yr = y + r * len;
        /* max */
        size_t i = 0;
        float m = xr[0];
        if (len >= 8) {
            __m256 vm = _mm256_loadu_ps(xr);
            for (i = 8; i + 8 <= len; i += 8) vm = _mm256_max_ps(vm, _mm256_loadu_ps(xr + i));
            m = hmax256(vm);
        }
        for (; i < len; i++) m = xr[i] > m ? xr[i] : m;
        /* exp and sum */
        const __m256 vm = _mm256_set1_ps(m);
        __m256 acc = _mm256_setzero_ps();
        for (i = 0; i + 8 <= len; i += 8) {
            __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(xr + i), vm));
            _mm256_storeu_ps(yr + i, e);
            acc = _mm256_add_ps(acc, e);
        }
        float sum = hsum256(acc);
        if (i < len) {
            float t[8] = {0};
            for (size_t k = 0; k < len - i; k++) t[k] = xr[i + k];
            _mm256_storeu_ps(t, exp256(_mm256_sub_ps(_mm256_loadu_ps(t), vm)));
            for (size_t k = 0; k < len - i; k++) {
                yr[i + k] = t[k];
                sum += t[k];
            }
        }
        /* scale */
        const float inv = 1.0f / sum;
        const __m256 vinv = _mm256_set1_ps(inv);
        for (i = 0; i + 8 <= len; i += 8)
            _mm256_storeu_ps(yr + i, _mm256_mul_ps(_mm256_loadu_ps(yr + i), vinv));
        for (; i < len; i++) yr[i] *= inv;
    }
}

void frt_vmax_f32_avx2(float *m, const float *x, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(m + i, _mm256_max_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(m + i)));
    for (; i < n; i++) m[i] = x[i] > m[i] ? x[i] : m[i];
}

void frt_expsub_acc_f32_avx2(const float *x, const float *m, float *y, float *s, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(m + i)));
        _mm256_storeu_ps(y + i, e);
        _mm256_storeu_ps(s + i, _mm256_add_ps(_mm256_loadu_ps(s + i), e));
    }
    if (i < n) {
        float t[8] = {0}, tm[8] = {0};
        for (size_t k = 0; k < n - i; k++) {
            t[k] = x[i + k];
            tm[k] = m[i + k];
        }
        _mm256_storeu_ps(t, exp256(_mm256_sub_ps(_mm256_loadu_ps(t), _mm256_loadu_ps(tm))));
        for (size_t k = 0; k < n - i; k++) {
            y[i + k] = t[k];
            s[i + k] += t[k];
        }
    }
}

void frt_vmul_f32_avx2(float *y, const float *r, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), _mm256_loadu_ps(r + i)));
    for (; i < n; i++) y[i] *= r[i];
}
