/* AVX-512 float32 reduction loops (see simd_reduce.h for the contract). Compiled with AVX-512
 * F/BW/VL/DQ; reached only through reduce.c's variant table. Tails use masked loads. */
#include <immintrin.h>
#include <math.h>

#include "simd_reduce.h"

static inline __mmask16 tail(size_t n) { return (__mmask16)((1u << n) - 1u); } /* n < 16 */

static inline __m512 vabs(__m512 v) { return _mm512_abs_ps(v); }

#define V_ADD(s, a) _mm512_add_ps(s, a)
#define V_ADDSQ(s, a) _mm512_fmadd_ps(a, a, s)
#define V_ADDABS(s, a) _mm512_add_ps(s, vabs(a))

/* Sum of f(x[i]) with four vector accumulators; the masked tail loads zeros, f(0) = 0. */
#define ROW_SUM(NAME, VF)                                                                        \
    float NAME(const float *x, size_t n) {                                                       \
        __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;                              \
        size_t i = 0;                                                                            \
        for (; i + 64 <= n; i += 64) {                                                           \
            s0 = VF(s0, _mm512_loadu_ps(x + i));                                                 \
            s1 = VF(s1, _mm512_loadu_ps(x + i + 16));                                            \
            s2 = VF(s2, _mm512_loadu_ps(x + i + 32));                                            \
            s3 = VF(s3, _mm512_loadu_ps(x + i + 48));                                            \
        }                                                                                        \
        for (; i + 16 <= n; i += 16) s0 = VF(s0, _mm512_loadu_ps(x + i));                        \
        if (i < n) s1 = VF(s1, _mm512_maskz_loadu_ps(tail(n - i), x + i));                       \
        return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3))); \
    }

ROW_SUM(frt_reduce_row_sum_avx512, V_ADD)
ROW_SUM(frt_reduce_row_sumsq_avx512, V_ADDSQ)
ROW_SUM(frt_reduce_row_sumabs_avx512, V_ADDABS)

/* NaNs are counted in a mask; the tail loads INIT in the masked-off lanes. */
#define ROW_EXT(NAME, VOP, RED, INIT)                                                            \
    float NAME(const float *x, size_t n) {                                                       \
        const __m512 init = _mm512_set1_ps(INIT);                                                \
        __m512 m0 = init, m1 = init;                                                             \
        __mmask16 nan = 0;                                                                       \
        size_t i = 0;                                                                            \
        for (; i + 32 <= n; i += 32) {                                                           \
            __m512 a0 = _mm512_loadu_ps(x + i), a1 = _mm512_loadu_ps(x + i + 16);                \
            nan |= _mm512_cmp_ps_mask(a0, a1, _CMP_UNORD_Q);                                     \
            m0 = VOP(a0, m0);                                                                    \
            m1 = VOP(a1, m1);                                                                    \
        }                                                                                        \
        for (; i + 16 <= n; i += 16) {                                                           \
            __m512 a0 = _mm512_loadu_ps(x + i);                                                  \
            nan |= _mm512_cmp_ps_mask(a0, a0, _CMP_UNORD_Q);                                     \
            m0 = VOP(a0, m0);                                                                    \
        }                                                                                        \
        if (i < n) {                                                                             \
            __m512 a0 = _mm512_mask_loadu_ps(init, tail(n - i), x + i);                          \
            nan |= _mm512_cmp_ps_mask(a0, a0, _CMP_UNORD_Q);                                     \
            m1 = VOP(a0, m1);                                                                    \
        }                                                                                        \
        if (nan) return NAN;                                                                     \
        return RED(VOP(m1, m0));                                                                 \
    }

ROW_EXT(frt_reduce_row_max_avx512, _mm512_max_ps, _mm512_reduce_max_ps, -INFINITY)
ROW_EXT(frt_reduce_row_min_avx512, _mm512_min_ps, _mm512_reduce_min_ps, INFINITY)

/* max / min keeping NaN from either side (max_ps(x, m) keeps m's NaN; x's NaN is merged in). */
static inline __m512 v_max(__m512 m, __m512 x) {
    return _mm512_mask_mov_ps(_mm512_max_ps(x, m), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}
static inline __m512 v_min(__m512 m, __m512 x) {
    return _mm512_mask_mov_ps(_mm512_min_ps(x, m), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

#define COL(NAME, VF)                                                                            \
    void NAME(float *acc, const float *x, size_t n) {                                            \
        size_t i = 0;                                                                            \
        for (; i + 32 <= n; i += 32) {                                                           \
            __m512 s0 = _mm512_loadu_ps(acc + i), s1 = _mm512_loadu_ps(acc + i + 16);            \
            s0 = VF(s0, _mm512_loadu_ps(x + i));                                                 \
            s1 = VF(s1, _mm512_loadu_ps(x + i + 16));                                            \
            _mm512_storeu_ps(acc + i, s0);                                                       \
            _mm512_storeu_ps(acc + i + 16, s1);                                                  \
        }                                                                                        \
        for (; i + 16 <= n; i += 16)                                                             \
            _mm512_storeu_ps(acc + i, VF(_mm512_loadu_ps(acc + i), _mm512_loadu_ps(x + i)));     \
        if (i < n) {                                                                             \
            __mmask16 m = tail(n - i);                                                           \
            _mm512_mask_storeu_ps(acc + i, m, VF(_mm512_maskz_loadu_ps(m, acc + i),              \
                                                 _mm512_maskz_loadu_ps(m, x + i)));              \
        }                                                                                        \
    }

COL(frt_reduce_col_sum_avx512, V_ADD)
COL(frt_reduce_col_sumsq_avx512, V_ADDSQ)
COL(frt_reduce_col_sumabs_avx512, V_ADDABS)
COL(frt_reduce_col_max_avx512, v_max)
COL(frt_reduce_col_min_avx512, v_min)
