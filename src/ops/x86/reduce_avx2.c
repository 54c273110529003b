/* AVX2/FMA float32 reduction loops (see simd_reduce.h for the contract). Compiled with
 * -mavx2 -mfma; reached only through reduce.c's variant table. */
#include <immintrin.h>
#include <math.h>

#include "simd_reduce.h"

static inline float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline __m256 vabs(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

/* Sum of F(x[i]) with four vector accumulators. */
#define ROW_SUM(NAME, VF, SF)                                                                    \
    float NAME(const float *x, size_t n) {                                                       \
        __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;                              \
        size_t i = 0;                                                                            \
        for (; i + 32 <= n; i += 32) {                                                           \
            __m256 a0 = _mm256_loadu_ps(x + i), a1 = _mm256_loadu_ps(x + i + 8);                 \
            __m256 a2 = _mm256_loadu_ps(x + i + 16), a3 = _mm256_loadu_ps(x + i + 24);           \
            s0 = VF(s0, a0);                                                                     \
            s1 = VF(s1, a1);                                                                     \
            s2 = VF(s2, a2);                                                                     \
            s3 = VF(s3, a3);                                                                     \
        }                                                                                        \
        for (; i + 8 <= n; i += 8) s0 = VF(s0, _mm256_loadu_ps(x + i));                          \
        float r = hsum8(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));           \
        for (; i < n; i++) r += SF(x[i]);                                                        \
        return r;                                                                                \
    }

#define V_ADD(s, a) _mm256_add_ps(s, a)
#define V_ADDSQ(s, a) _mm256_fmadd_ps(a, a, s)
#define V_ADDABS(s, a) _mm256_add_ps(s, vabs(a))
#define S_ID(v) (v)
#define S_SQ(v) ((v) * (v))
#define S_ABS(v) fabsf(v)

ROW_SUM(frt_reduce_row_sum_avx2, V_ADD, S_ID)
ROW_SUM(frt_reduce_row_sumsq_avx2, V_ADDSQ, S_SQ)
ROW_SUM(frt_reduce_row_sumabs_avx2, V_ADDABS, S_ABS)

/* max_ps(x, m) returns m when either is NaN, so a NaN already in m stays; NaNs of x are collected
 * separately in a mask. */
#define ROW_EXT(NAME, VOP, SCMP, INIT)                                                           \
    float NAME(const float *x, size_t n) {                                                       \
        __m256 m0 = _mm256_set1_ps(INIT), m1 = m0, nan = _mm256_setzero_ps();                    \
        size_t i = 0;                                                                            \
        for (; i + 16 <= n; i += 16) {                                                           \
            __m256 a0 = _mm256_loadu_ps(x + i), a1 = _mm256_loadu_ps(x + i + 8);                 \
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(a0, a1, _CMP_UNORD_Q));                        \
            m0 = VOP(a0, m0);                                                                    \
            m1 = VOP(a1, m1);                                                                    \
        }                                                                                        \
        for (; i + 8 <= n; i += 8) {                                                             \
            __m256 a0 = _mm256_loadu_ps(x + i);                                                  \
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(a0, a0, _CMP_UNORD_Q));                        \
            m0 = VOP(a0, m0);                                                                    \
        }                                                                                        \
        m0 = VOP(m1, m0);                                                                        \
        if (_mm256_movemask_ps(nan)) return NAN;                                                 \
        float buf[8], r = INIT;                                                                  \
        _mm256_storeu_ps(buf, m0);                                                               \
        for (int k = 0; k < 8; k++) r = buf[k] SCMP r ? buf[k] : r;                              \
        for (; i < n; i++) {                                                                     \
            if (x[i] != x[i]) return NAN;                                                        \
            r = x[i] SCMP r ? x[i] : r;                                                          \
        }                                                                                        \
        return r;                                                                                \
    }

ROW_EXT(frt_reduce_row_max_avx2, _mm256_max_ps, >, -INFINITY)
ROW_EXT(frt_reduce_row_min_avx2, _mm256_min_ps, <, INFINITY)

/* acc[j] = acc[j] op f(x[j]) */
#define COL(NAME, VF, SF)                                                                        \
    void NAME(float *acc, const float *x, size_t n) {                                            \
        size_t i = 0;                                                                            \
        for (; i + 16 <= n; i += 16) {                                                           \
            __m256 s0 = _mm256_loadu_ps(acc + i), s1 = _mm256_loadu_ps(acc + i + 8);             \
            s0 = VF(s0, _mm256_loadu_ps(x + i));                                                 \
            s1 = VF(s1, _mm256_loadu_ps(x + i + 8));                                             \
            _mm256_storeu_ps(acc + i, s0);                                                       \
            _mm256_storeu_ps(acc + i + 8, s1);                                                   \
        }                                                                                        \
        for (; i + 8 <= n; i += 8)                                                               \
            _mm256_storeu_ps(acc + i, VF(_mm256_loadu_ps(acc + i), _mm256_loadu_ps(x + i)));     \
        for (; i < n; i++) acc[i] = SF(acc[i], x[i]);                                            \
    }

/* max keeping NaN from either side: max_ps(x, m) keeps m's NaN; blend takes x's NaN. */
static inline __m256 v_max(__m256 m, __m256 x) {
    return _mm256_blendv_ps(_mm256_max_ps(x, m), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
static inline __m256 v_min(__m256 m, __m256 x) {
    return _mm256_blendv_ps(_mm256_min_ps(x, m), x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
#define S_ADD(s, v) ((s) + (v))
#define S_ADDSQ(s, v) ((s) + (v) * (v))
#define S_ADDABS(s, v) ((s) + fabsf(v))
#define S_MAX(m, v) ((v) > (m) || (v) != (v) ? (v) : (m))
#define S_MIN(m, v) ((v) < (m) || (v) != (v) ? (v) : (m))

COL(frt_reduce_col_sum_avx2, V_ADD, S_ADD)
COL(frt_reduce_col_sumsq_avx2, V_ADDSQ, S_ADDSQ)
COL(frt_reduce_col_sumabs_avx2, V_ADDABS, S_ADDABS)
COL(frt_reduce_col_max_avx2, v_max, S_MAX)
COL(frt_reduce_col_min_avx2, v_min, S_MIN)
