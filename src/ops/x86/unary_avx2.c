/* AVX2/FMA float32 loops of the unary math ops (Abs Neg Exp Log Sqrt Erf Reciprocal Floor Ceil
 * Round) and of Pow by 2, 3, 0.5 and 1. Compiled with -mavx2 -mfma; reached through the variant
 * table in unary.c (simd_unary.h states the accuracy of each loop). Tails go through the same
 * vector code on a padded copy, so every element of an array gets the same result whatever its
 * position. */
#include <immintrin.h>
#include <string.h>

#include "simd_unary.h"
#include "unary_poly.h"

#define V __m256
#define SET1 _mm256_set1_ps

/* ---- vector kernels ---------------------------------------------------------------------- */

static inline V v_abs(V x) { return _mm256_andnot_ps(SET1(-0.0f), x); }
static inline V v_neg(V x) { return _mm256_xor_ps(SET1(-0.0f), x); }
static inline V v_sqrt(V x) { return _mm256_sqrt_ps(x); }
static inline V v_recip(V x) { return _mm256_div_ps(SET1(1.0f), x); }
static inline V v_floor(V x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
static inline V v_ceil(V x) { return _mm256_round_ps(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
static inline V v_round(V x) {
    return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline V v_square(V x) { return _mm256_mul_ps(x, x); }
static inline V v_cube(V x) { return _mm256_mul_ps(_mm256_mul_ps(x, x), x); }
static inline V v_identity(V x) { return x; }
/* pow(x, 0.5): sqrt, with -0 -> +0 (adding +0) and -inf -> +inf. */
static inline V v_pow_half(V x) {
    V r = _mm256_add_ps(_mm256_sqrt_ps(x), _mm256_setzero_ps());
    return _mm256_blendv_ps(r, SET1(__builtin_inff()),
                            _mm256_cmp_ps(x, SET1(-__builtin_inff()), _CMP_EQ_OQ));
}

/* e^x = 2^n * e^r, n = round(x / ln2), |r| <= ln2/2; 2^n applied as two factors so that results
 * down to the subnormal range are rounded once. x is clamped to [-104, 89] (0 and inf beyond);
 * NaN passes through the clamps (MINPS/MAXPS return their second operand on NaN). */
static inline V v_exp(V x) {
    x = _mm256_min_ps(SET1(89.0f), x);
    x = _mm256_max_ps(SET1(-104.0f), x);
    V n = _mm256_round_ps(_mm256_mul_ps(x, SET1(FRT_LOG2E_F)),
                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    V r = _mm256_fnmadd_ps(n, SET1(FRT_LN2_HI_F), x);
    r = _mm256_fnmadd_ps(n, SET1(FRT_LN2_LO_F), r);
    V p = SET1(FRT_EXP_P5);
    p = _mm256_fmadd_ps(p, r, SET1(FRT_EXP_P4));
    p = _mm256_fmadd_ps(p, r, SET1(FRT_EXP_P3));
    p = _mm256_fmadd_ps(p, r, SET1(FRT_EXP_P2));
    p = _mm256_fmadd_ps(p, r, SET1(FRT_EXP_P1));
    p = _mm256_fmadd_ps(p, r, SET1(FRT_EXP_P0));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r);
    p = _mm256_add_ps(p, SET1(1.0f));
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    V s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, _mm256_set1_epi32(127)), 23));
    V s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, _mm256_set1_epi32(127)), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

/* log x = e ln2 + log1p(f), x = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt(2)); subnormal x scaled
 * by 2^23 first. log1p(f) = f - f^2/2 + f^3 P(f). */
static inline V v_log(V x) {
    V sub = _mm256_cmp_ps(x, SET1(0x1p-126f), _CMP_LT_OQ);
    V xs = _mm256_blendv_ps(x, _mm256_mul_ps(x, SET1(0x1p23f)), sub);
    __m256i bits = _mm256_castps_si256(xs);
    __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127));
    V m = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)),
                                              _mm256_set1_epi32(0x3f800000)));
    V big = _mm256_cmp_ps(m, SET1(FRT_SQRT2_F), _CMP_GT_OQ);
    m = _mm256_blendv_ps(m, _mm256_mul_ps(m, SET1(0.5f)), big);
    V ef = _mm256_add_ps(_mm256_cvtepi32_ps(e), _mm256_and_ps(big, SET1(1.0f)));
    ef = _mm256_sub_ps(ef, _mm256_and_ps(sub, SET1(23.0f)));
    V f = _mm256_sub_ps(m, SET1(1.0f));
    V f2 = _mm256_mul_ps(f, f);
    V p = SET1(FRT_LOG_P8);
    p = _mm256_fmadd_ps(p, f, SET1(FRT_LOG_P7));
    p = _mm256_fmadd_ps(p, f, SET1(FRT_LOG_P6));
    p = _mm256_fmadd_ps(p, f, SET1(FRT_LOG_P5));
    p = _mm256_fmadd_ps(p, f, SET1(FRT_LOG_P4));
    p = _mm256_fmadd_ps(p, f, SET1(FRT_LOG_P3));
    p = _mm256_fmadd_ps(p, f, SET1(FRT_LOG_P2));
    p = _mm256_fmadd_ps(p, f, SET1(FRT_LOG_P1));
    p = _mm256_fmadd_ps(p, f, SET1(FRT_LOG_P0));
    V t = _mm256_fnmadd_ps(SET1(0.5f), f2, _mm256_mul_ps(_mm256_mul_ps(f2, f), p));
    t = _mm256_fmadd_ps(ef, SET1(FRT_LN2L_LO_F), t);
    t = _mm256_add_ps(t, f);
    V r = _mm256_fmadd_ps(ef, SET1(FRT_LN2L_HI_F), t);
    r = _mm256_blendv_ps(r, SET1(-__builtin_inff()), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ));
    r = _mm256_blendv_ps(r, SET1(__builtin_nanf("")), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NGE_UQ));
    return _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, SET1(__builtin_inff()), _CMP_EQ_OQ));
}

/* erf: |x| < 1: x P(x^2); 1 <= |x|: sign(x) (1 - exp(Q(|x|))), Q ~ log erfc on [1, 3.85]
 * (|x| clamped to 3.85, where erf rounds to 1). */
static inline V v_erf(V x) {
    V a = v_abs(x);
    V t = _mm256_mul_ps(x, x);
    V p = SET1(FRT_ERF_P7);
    p = _mm256_fmadd_ps(p, t, SET1(FRT_ERF_P6));
    p = _mm256_fmadd_ps(p, t, SET1(FRT_ERF_P5));
    p = _mm256_fmadd_ps(p, t, SET1(FRT_ERF_P4));
    p = _mm256_fmadd_ps(p, t, SET1(FRT_ERF_P3));
    p = _mm256_fmadd_ps(p, t, SET1(FRT_ERF_P2));
    p = _mm256_fmadd_ps(p, t, SET1(FRT_ERF_P1));
    p = _mm256_fmadd_ps(p, t, SET1(FRT_ERF_P0));
    V r1 = _mm256_mul_ps(x, p);
    V u = _mm256_sub_ps(_mm256_min_ps(a, SET1(FRT_ERF_AMAX)), SET1(FRT_ERFC_MID));
    V q = SET1(FRT_ERFC_Q10);
    q = _mm256_fmadd_ps(q, u, SET1(FRT_ERFC_Q9));
    q = _mm256_fmadd_ps(q, u, SET1(FRT_ERFC_Q8));
    q = _mm256_fmadd_ps(q, u, SET1(FRT_ERFC_Q7));
    q = _mm256_fmadd_ps(q, u, SET1(FRT_ERFC_Q6));
    q = _mm256_fmadd_ps(q, u, SET1(FRT_ERFC_Q5));
    q = _mm256_fmadd_ps(q, u, SET1(FRT_ERFC_Q4));
    q = _mm256_fmadd_ps(q, u, SET1(FRT_ERFC_Q3));
    q = _mm256_fmadd_ps(q, u, SET1(FRT_ERFC_Q2));
    q = _mm256_fmadd_ps(q, u, SET1(FRT_ERFC_Q1));
    q = _mm256_fmadd_ps(q, u, SET1(FRT_ERFC_Q0));
    V r2 = _mm256_sub_ps(SET1(1.0f), v_exp(q));
    r2 = _mm256_or_ps(r2, _mm256_and_ps(x, SET1(-0.0f)));
    return _mm256_blendv_ps(r1, r2, _mm256_cmp_ps(a, SET1(1.0f), _CMP_GE_OQ));
}

/* ---- loops ------------------------------------------------------------------------------- */

#define UN_LOOP(NAME, VF)                                                                        \
    static void NAME(const float *x, float *y, size_t n) {                                       \
        size_t i = 0;                                                                            \
        for (; i + 16 <= n; i += 16) {                                                           \
            V r0 = VF(_mm256_loadu_ps(x + i)), r1 = VF(_mm256_loadu_ps(x + i + 8));              \
            _mm256_storeu_ps(y + i, r0);                                                         \
            _mm256_storeu_ps(y + i + 8, r1);                                                     \
        }                                                                                        \
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, VF(_mm256_loadu_ps(x + i)));          \
        if (i < n) {                                                                             \
            float t[8] = {0};                                                                    \
            memcpy(t, x + i, (n - i) * sizeof(float));                                           \
            _mm256_storeu_ps(t, VF(_mm256_loadu_ps(t)));                                         \
            memcpy(y + i, t, (n - i) * sizeof(float));                                           \
        }                                                                                        \
    }

UN_LOOP(abs_avx2, v_abs)
UN_LOOP(neg_avx2, v_neg)
UN_LOOP(exp_avx2, v_exp)
UN_LOOP(log_avx2, v_log)
UN_LOOP(sqrt_avx2, v_sqrt)
UN_LOOP(erf_avx2, v_erf)
UN_LOOP(recip_avx2, v_recip)
UN_LOOP(floor_avx2, v_floor)
UN_LOOP(ceil_avx2, v_ceil)
UN_LOOP(round_avx2, v_round)
UN_LOOP(square_avx2, v_square)
UN_LOOP(cube_avx2, v_cube)
UN_LOOP(pow_half_avx2, v_pow_half)
UN_LOOP(identity_avx2, v_identity)

const frt_unary_fn frt_un_f32_avx2[FRT_UN_N] = {
    [FRT_UN_ABS] = abs_avx2,           [FRT_UN_NEG] = neg_avx2,
    [FRT_UN_EXP] = exp_avx2,           [FRT_UN_LOG] = log_avx2,
    [FRT_UN_SQRT] = sqrt_avx2,         [FRT_UN_ERF] = erf_avx2,
    [FRT_UN_RECIP] = recip_avx2,       [FRT_UN_FLOOR] = floor_avx2,
    [FRT_UN_CEIL] = ceil_avx2,         [FRT_UN_ROUND] = round_avx2,
    [FRT_UN_SQUARE] = square_avx2,     [FRT_UN_CUBE] = cube_avx2,
    [FRT_UN_POW_HALF] = pow_half_avx2, [FRT_UN_IDENTITY] = identity_avx2,
};
