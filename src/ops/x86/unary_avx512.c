/* AVX-512 float32 loops of the unary math ops (Abs Neg Exp Log Sqrt Erf Reciprocal Floor Ceil
 * Round) and of Pow by 2, 3, 0.5 and 1: the algorithms of unary_avx2.c on 16 lanes. Compiled
 * with -mavx512f/bw/vl/dq; tails use masked loads and stores (masked-off lanes are neither read
 * nor written). */
#include <immintrin.h>

#include "simd_unary.h"
#include "unary_poly.h"

#define V __m512
#define SET1 _mm512_set1_ps
#define RND(x, m) _mm512_roundscale_ps((x), (m) | _MM_FROUND_NO_EXC)

static inline V v_abs(V x) { return _mm512_andnot_ps(SET1(-0.0f), x); }
static inline V v_neg(V x) { return _mm512_xor_ps(SET1(-0.0f), x); }
static inline V v_sqrt(V x) { return _mm512_sqrt_ps(x); }
static inline V v_recip(V x) { return _mm512_div_ps(SET1(1.0f), x); }
static inline V v_floor(V x) { return RND(x, _MM_FROUND_TO_NEG_INF); }
static inline V v_ceil(V x) { return RND(x, _MM_FROUND_TO_POS_INF); }
static inline V v_round(V x) { return RND(x, _MM_FROUND_TO_NEAREST_INT); }
static inline V v_square(V x) { return _mm512_mul_ps(x, x); }
static inline V v_cube(V x) { return _mm512_mul_ps(_mm512_mul_ps(x, x), x); }
static inline V v_identity(V x) { return x; }
static inline V v_pow_half(V x) {
    V r = _mm512_add_ps(_mm512_sqrt_ps(x), _mm512_setzero_ps());
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, SET1(-__builtin_inff()), _CMP_EQ_OQ),
                              SET1(__builtin_inff()));
}

static inline V v_exp(V x) {
    x = _mm512_min_ps(SET1(89.0f), x);
    x = _mm512_max_ps(SET1(-104.0f), x);
    V n = RND(_mm512_mul_ps(x, SET1(FRT_LOG2E_F)), _MM_FROUND_TO_NEAREST_INT);
    V r = _mm512_fnmadd_ps(n, SET1(FRT_LN2_HI_F), x);
    r = _mm512_fnmadd_ps(n, SET1(FRT_LN2_LO_F), r);
    V p = SET1(FRT_EXP_P5);
    p = _mm512_fmadd_ps(p, r, SET1(FRT_EXP_P4));
    p = _mm512_fmadd_ps(p, r, SET1(FRT_EXP_P3));
    p = _mm512_fmadd_ps(p, r, SET1(FRT_EXP_P2));
    p = _mm512_fmadd_ps(p, r, SET1(FRT_EXP_P1));
    p = _mm512_fmadd_ps(p, r, SET1(FRT_EXP_P0));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);
    p = _mm512_add_ps(p, SET1(1.0f));
    __m512i ni = _mm512_cvtps_epi32(n);
    __m512i n1 = _mm512_srai_epi32(ni, 1), n2 = _mm512_sub_epi32(ni, n1);
    V s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, _mm512_set1_epi32(127)), 23));
    V s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, _mm512_set1_epi32(127)), 23));
    return _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
}

static inline V v_log(V x) {
    __mmask16 sub = _mm512_cmp_ps_mask(x, SET1(0x1p-126f), _CMP_LT_OQ);
    V xs = _mm512_mask_mul_ps(x, sub, x, SET1(0x1p23f));
    __m512i bits = _mm512_castps_si512(xs);
    __m512i e = _mm512_sub_epi32(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(127));
    V m = _mm512_castsi512_ps(_mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32(0x007fffff)),
                                              _mm512_set1_epi32(0x3f800000)));
    __mmask16 big = _mm512_cmp_ps_mask(m, SET1(FRT_SQRT2_F), _CMP_GT_OQ);
    m = _mm512_mask_mul_ps(m, big, m, SET1(0.5f));
    V ef = _mm512_add_ps(_mm512_cvtepi32_ps(e), _mm512_maskz_mov_ps(big, SET1(1.0f)));
    ef = _mm512_sub_ps(ef, _mm512_maskz_mov_ps(sub, SET1(23.0f)));
    V f = _mm512_sub_ps(m, SET1(1.0f));
    V f2 = _mm512_mul_ps(f, f);
    V p = SET1(FRT_LOG_P8);
    p = _mm512_fmadd_ps(p, f, SET1(FRT_LOG_P7));
    p = _mm512_fmadd_ps(p, f, SET1(FRT_LOG_P6));
    p = _mm512_fmadd_ps(p, f, SET1(FRT_LOG_P5));
    p = _mm512_fmadd_ps(p, f, SET1(FRT_LOG_P4));
    p = _mm512_fmadd_ps(p, f, SET1(FRT_LOG_P3));
    p = _mm512_fmadd_ps(p, f, SET1(FRT_LOG_P2));
    p = _mm512_fmadd_ps(p, f, SET1(FRT_LOG_P1));
    p = _mm512_fmadd_ps(p, f, SET1(FRT_LOG_P0));
    V t = _mm512_fnmadd_ps(SET1(0.5f), f2, _mm512_mul_ps(_mm512_mul_ps(f2, f), p));
    t = _mm512_fmadd_ps(ef, SET1(FRT_LN2L_LO_F), t);
    t = _mm512_add_ps(t, f);
    V r = _mm512_fmadd_ps(ef, SET1(FRT_LN2L_HI_F), t);
    r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_EQ_OQ),
                           SET1(-__builtin_inff()));
    r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NGE_UQ),
                           SET1(__builtin_nanf("")));
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, SET1(__builtin_inff()), _CMP_EQ_OQ), x);
}

static inline V v_erf(V x) {
    V a = v_abs(x);
    V t = _mm512_mul_ps(x, x);
    V p = SET1(FRT_ERF_P7);
    p = _mm512_fmadd_ps(p, t, SET1(FRT_ERF_P6));
    p = _mm512_fmadd_ps(p, t, SET1(FRT_ERF_P5));
    p = _mm512_fmadd_ps(p, t, SET1(FRT_ERF_P4));
    p = _mm512_fmadd_ps(p, t, SET1(FRT_ERF_P3));
    p = _mm512_fmadd_ps(p, t, SET1(FRT_ERF_P2));
    p = _mm512_fmadd_ps(p, t, SET1(FRT_ERF_P1));
    p = _mm512_fmadd_ps(p, t, SET1(FRT_ERF_P0));
    V r1 = _mm512_mul_ps(x, p);
    V u = _mm512_sub_ps(_mm512_min_ps(a, SET1(FRT_ERF_AMAX)), SET1(FRT_ERFC_MID));
    V q = SET1(FRT_ERFC_Q10);
    q = _mm512_fmadd_ps(q, u, SET1(FRT_ERFC_Q9));
    q = _mm512_fmadd_ps(q, u, SET1(FRT_ERFC_Q8));
    q = _mm512_fmadd_ps(q, u, SET1(FRT_ERFC_Q7));
    q = _mm512_fmadd_ps(q, u, SET1(FRT_ERFC_Q6));
    q = _mm512_fmadd_ps(q, u, SET1(FRT_ERFC_Q5));
    q = _mm512_fmadd_ps(q, u, SET1(FRT_ERFC_Q4));
    q = _mm512_fmadd_ps(q, u, SET1(FRT_ERFC_Q3));
    q = _mm512_fmadd_ps(q, u, SET1(FRT_ERFC_Q2));
    q = _mm512_fmadd_ps(q, u, SET1(FRT_ERFC_Q1));
    q = _mm512_fmadd_ps(q, u, SET1(FRT_ERFC_Q0));
    V r2 = _mm512_sub_ps(SET1(1.0f), v_exp(q));
    r2 = _mm512_or_ps(r2, _mm512_and_ps(x, SET1(-0.0f)));
    return _mm512_mask_mov_ps(r1, _mm512_cmp_ps_mask(a, SET1(1.0f), _CMP_GE_OQ), r2);
}

#define UN_LOOP(NAME, VF)                                                                        \
    static void NAME(const float *x, float *y, size_t n) {                                       \
        size_t i = 0;                                                                            \
        for (; i + 32 <= n; i += 32) {                                                           \
            V r0 = VF(_mm512_loadu_ps(x + i)), r1 = VF(_mm512_loadu_ps(x + i + 16));             \
            _mm512_storeu_ps(y + i, r0);                                                         \
            _mm512_storeu_ps(y + i + 16, r1);                                                    \
        }                                                                                        \
        for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, VF(_mm512_loadu_ps(x + i)));        \
        if (i < n) {                                                                             \
            __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);                                     \
            _mm512_mask_storeu_ps(y + i, m, VF(_mm512_maskz_loadu_ps(m, x + i)));                \
        }                                                                                        \
    }

UN_LOOP(abs_avx512, v_abs)
UN_LOOP(neg_avx512, v_neg)
UN_LOOP(exp_avx512, v_exp)
UN_LOOP(log_avx512, v_log)
UN_LOOP(sqrt_avx512, v_sqrt)
UN_LOOP(erf_avx512, v_erf)
UN_LOOP(recip_avx512, v_recip)
UN_LOOP(floor_avx512, v_floor)
UN_LOOP(ceil_avx512, v_ceil)
UN_LOOP(round_avx512, v_round)
UN_LOOP(square_avx512, v_square)
UN_LOOP(cube_avx512, v_cube)
UN_LOOP(pow_half_avx512, v_pow_half)
UN_LOOP(identity_avx512, v_identity)

const frt_unary_fn frt_un_f32_avx512[FRT_UN_N] = {
    [FRT_UN_ABS] = abs_avx512,           [FRT_UN_NEG] = neg_avx512,
    [FRT_UN_EXP] = exp_avx512,           [FRT_UN_LOG] = log_avx512,
    [FRT_UN_SQRT] = sqrt_avx512,         [FRT_UN_ERF] = erf_avx512,
    [FRT_UN_RECIP] = recip_avx512,       [FRT_UN_FLOOR] = floor_avx512,
    [FRT_UN_CEIL] = ceil_avx512,         [FRT_UN_ROUND] = round_avx512,
    [FRT_UN_SQUARE] = square_avx512,     [FRT_UN_CUBE] = cube_avx512,
    [FRT_UN_POW_HALF] = pow_half_avx512, [FRT_UN_IDENTITY] = identity_avx512,
};
