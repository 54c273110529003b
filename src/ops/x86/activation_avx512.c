/* AVX-512 float32 activations: Relu, Clip, Sigmoid, Tanh, Softmax (rows and strided helpers).
 * Compiled with -mavx512f/bw/vl/dq; reached through the variant table in simd_elementwise.h.
 *
 * Same numerics as activation_avx2.c: exp by range reduction x = n*ln2 + r (Cody-Waite split of
 * ln2) and the same degree-6 polynomial; 2^n is applied with VSCALEFPS, which handles results
 * down to the float denormals directly. Inputs are clamped to [-104, 88]. Sigmoid and tanh are
 * within ~2e-7 relative of the exact values; NaN inputs give NaN, +-inf the limits. Relu and Clip
 * are exact and use the max/min operand orders of the portable code, NaN included. Tails use
 * masked loads and stores (masked-off lanes are neither read nor written).
 */
#include <immintrin.h>

#include "simd_elementwise.h"

static inline __mmask16 tail16(size_t r) { return (__mmask16)((1u << r) - 1u); }

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

/* Applies VFN to n floats; the tail is one masked block. */
#define UNARY_LOOP(VFN)                                                                          \
    size_t i = 0;                                                                                \
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, VFN(_mm512_loadu_ps(x + i)));           \
    if (i < n) {                                                                                 \
        __mmask16 m = tail16(n - i);                                                             \
        _mm512_mask_storeu_ps(y + i, m, VFN(_mm512_maskz_loadu_ps(m, x + i)));                   \
    }

void frt_sigmoid_f32_avx512(const float *x, float *y, size_t n) { UNARY_LOOP(sigmoid512) }
void frt_tanh_f32_avx512(const float *x, float *y, size_t n) { UNARY_LOOP(tanh512) }

void frt_relu_f32_avx512(const float *x, float *y, size_t n) {
    const __m512 z = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512 a0 = _mm512_max_ps(z, _mm512_loadu_ps(x + i));
        __m512 a1 = _mm512_max_ps(z, _mm512_loadu_ps(x + i + 16));
        __m512 a2 = _mm512_max_ps(z, _mm512_loadu_ps(x + i + 32));
        __m512 a3 = _mm512_max_ps(z, _mm512_loadu_ps(x + i + 48));
        _mm512_storeu_ps(y + i, a0);
        _mm512_storeu_ps(y + i + 16, a1);
        _mm512_storeu_ps(y + i + 32, a2);
        _mm512_storeu_ps(y + i + 48, a3);
    }
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_max_ps(z, _mm512_loadu_ps(x + i)));
    if (i < n) {
        __mmask16 m = tail16(n - i);
        _mm512_mask_storeu_ps(y + i, m, _mm512_max_ps(z, _mm512_maskz_loadu_ps(m, x + i)));
    }
}

void frt_clip_f32_avx512(const float *x, float *y, size_t n, float lo, float hi) {
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
#define CLIP512(v) _mm512_min_ps(vhi, _mm512_max_ps(vlo, (v)))
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512 a0 = CLIP512(_mm512_loadu_ps(x + i));
        __m512 a1 = CLIP512(_mm512_loadu_ps(x + i + 16));
        _mm512_storeu_ps(y + i, a0);
        _mm512_storeu_ps(y + i + 16, a1);
    }
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, CLIP512(_mm512_loadu_ps(x + i)));
    if (i < n) {
        __mmask16 m = tail16(n - i);
        _mm512_mask_storeu_ps(y + i, m, CLIP512(_mm512_maskz_loadu_ps(m, x + i)));
    }
#undef CLIP512
}

void frt_softmax_rows_f32_avx512(const float *x, float *y, size_t rows, size_t len) {
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * len;
        float *yr = y + r * len;
        /* max: masked-off tail lanes hold xr[0], which never changes the maximum */
        __m512 vm = _mm512_set1_ps(xr[0]);
        size_t i = 0;
        for (; i + 16 <= len; i += 16) vm = _mm512_max_ps(vm, _mm512_loadu_ps(xr + i));
        if (i < len) vm = _mm512_max_ps(vm, _mm512_mask_loadu_ps(vm, tail16(len - i), xr + i));
        vm = _mm512_set1_ps(_mm512_reduce_max_ps(vm));
        /* exp and sum: masked-off lanes add 0 */
        __m512 acc = _mm512_setzero_ps();
        for (i = 0; i + 16 <= len; i += 16) {
            __m512 e = exp512(_mm512_sub_ps(_mm512_loadu_ps(xr + i), vm));
            _mm512_storeu_ps(yr + i, e);
            acc = _mm512_add_ps(acc, e);
        }
        if (i < len) {
            __mmask16 m = tail16(len - i);
            __m512 e = exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, xr + i), vm));
            _mm512_mask_storeu_ps(yr + i, m, e);
            acc = _mm512_mask_add_ps(acc, m, acc, e);
        }
        /* scale */
        const __m512 vinv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(acc));
        for (i = 0; i + 16 <= len; i += 16)
            _mm512_storeu_ps(yr + i, _mm512_mul_ps(_mm512_loadu_ps(yr + i), vinv));
        if (i < len) {
            __mmask16 m = tail16(len - i);
            _mm512_mask_storeu_ps(yr + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, yr + i), vinv));
        }
    }
}

void frt_vmax_f32_avx512(float *m, const float *x, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(m + i, _mm512_max_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(m + i)));
    if (i < n) {
        __mmask16 k = tail16(n - i);
        __m512 v = _mm512_max_ps(_mm512_maskz_loadu_ps(k, x + i), _mm512_maskz_loadu_ps(k, m + i));
        _mm512_mask_storeu_ps(m + i, k, v);
    }
}

void frt_expsub_acc_f32_avx512(const float *x, const float *m, float *y, float *s, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 e = exp512(_mm512_sub_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(m + i)));
        _mm512_storeu_ps(y + i, e);
        _mm512_storeu_ps(s + i, _mm512_add_ps(_mm512_loadu_ps(s + i), e));
    }
    if (i < n) {
        __mmask16 k = tail16(n - i);
        __m512 e = exp512(
            _mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), _mm512_maskz_loadu_ps(k, m + i)));
        _mm512_mask_storeu_ps(y + i, k, e);
        _mm512_mask_storeu_ps(s + i, k, _mm512_add_ps(_mm512_maskz_loadu_ps(k, s + i), e));
    }
}

void frt_vmul_f32_avx512(float *y, const float *r, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), _mm512_loadu_ps(r + i)));
    if (i < n) {
        __mmask16 k = tail16(n - i);
        __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, y + i), _mm512_maskz_loadu_ps(k, r + i));
        _mm512_mask_storeu_ps(y + i, k, v);
    }
}
