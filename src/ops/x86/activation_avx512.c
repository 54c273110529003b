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

#include "act_math_avx512.h"
#include "simd_elementwise.h"

static inline __mmask16 tail16(size_t r) { return (__mmask16)((1u << r) - 1u); }

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
