/* The avx2 vector vocabulary of activation_param_impl.h (V, M, VW, vset, vload, ... : listed there),
 * shared by the x86 files whose loops are written over it (activation_param_avx2.c, norm_avx2.c).
 * Include only from files compiled for this tier. */
#ifndef FRT_OPS_X86_VEC_AVX2_H
#define FRT_OPS_X86_VEC_AVX2_H

#include <immintrin.h>

#define VW 8
typedef __m256 V;
typedef __m256 M;

static inline V vset(float a) { return _mm256_set1_ps(a); }
static inline V vload(const float *p) { return _mm256_loadu_ps(p); }
static inline void vstore(float *p, V v) { _mm256_storeu_ps(p, v); }
static inline V vadd(V a, V b) { return _mm256_add_ps(a, b); }
static inline V vsub(V a, V b) { return _mm256_sub_ps(a, b); }
static inline V vmul(V a, V b) { return _mm256_mul_ps(a, b); }
static inline V vdiv(V a, V b) { return _mm256_div_ps(a, b); }
static inline V vmax(V a, V b) { return _mm256_max_ps(a, b); }
static inline V vmin(V a, V b) { return _mm256_min_ps(a, b); }
static inline V vabs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
static inline V vfma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
static inline V vfnma(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
static inline M vlt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline M vle(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
static inline M vgt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
static inline M veq(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
static inline V vsel(M m, V t, V f) { return _mm256_blendv_ps(f, t, m); }
static inline V vround(V x) {
    return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
/* p 2^n as two normal factors 2^n1 2^n2 (n1 = n >> 1). NaN n gives a NaN-free garbage factor,
 * but p is then NaN too (n comes from the same lane). */
static inline V vscale(V p, V n) {
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i n1 = _mm256_srai_epi32(ni, 1);
    __m256i n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    V s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    V s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}
/* p 2^n for integral n in [-126, 127] (2^n a normal float: one factor). */
static inline V vscale_n(V p, V n) {
    __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(e, 23)));
}
static inline V vfrexp(V x, V *k) {
    __m256i b = _mm256_castps_si256(x);
    __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(b, 23), _mm256_set1_epi32(127));
    V m = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi32(0x007fffff)),
                                              _mm256_set1_epi32(0x3f800000))); /* [1, 2) */
    V ef = _mm256_cvtepi32_ps(e);
    M big = _mm256_cmp_ps(m, _mm256_set1_ps(1.41421356f), _CMP_GT_OQ);
    *k = vsel(big, vadd(ef, vset(1.0f)), ef);
    return vsel(big, vmul(m, vset(0.5f)), m);
}
static inline float vhmax(V v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
}
static inline float vhsum(V v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

/* x sigmoid(x) = x / (1 + e^-x); -inf gives NaN (-inf * 0, as the unfused pair). The loop that
 * runs after every SiLU convolution of EfficientNet-style models: e^t with t = -x clamped to [-87,
 * 89], so that 2^n is one factor (n = round(t log2 e) in [-126, 128], read from the bits of a
 * rounding add instead of a round and a conversion; n = 128 gives exactly +inf, so x = -inf gives
 * -inf / inf = NaN and other x below -88.7 give -0, the true value being below 1e-36) and r = t -
 * n ln2 with one constant (|n| ln2's rounding error 1.9e-9 |n| <= 2.4e-7 stays far below the
 * tolerance where it matters); then one division, which runs beside the FMA pipes (Zen 3: 8.6
 * cycles per vector, against 9.9 with the reciprocal estimate and a Newton step and 15 with the
 * two-factor scale). 0.61 -> 0.34 ns/element; a degree-5 e^r (one FMA less) 0.35 -> 0.31
 * (best of 300 over 16 K elements in L1, Zen 3), within 4.2e-6 relative of x / (1 + e^-x) over
 * [-90, 90] (4.0e-6 with degree 6: the rest is the one-constant ln2). NaN passes
 * through the clamps (second operands). Used by the SiLU loop (activation_param_impl.h) and the
 * blocked depthwise epilogue (blkdw_impl.h). */
static inline V vsilu(V x) {
    V t = vmin(vset(89.0f), vmax(vset(-87.0f), vsub(vset(0.0f), x)));
    const V magic = vset(12582912.0f); /* 1.5 2^23: magic + n holds n in its low mantissa bits */
    V nm = vfma(t, vset(1.44269504088896341f), magic);
    V n = vsub(nm, magic);
    V r = vfnma(n, vset(0.693147182f), t);
    /* e^r = 1 + r + r^2 q(r), q of degree 3 fitted for the least maximum relative error on
       |r| <= ln2 / 2 (2.0e-7; the Taylor degree-6 form before took one FMA more) */
    V q = vfma(vset(0.00832738f), r, vset(0.04187908f));
    q = vfma(q, r, vset(0.1666691f));
    q = vfma(q, r, vset(0.49999297f));
    V p = vfma(q, vmul(r, r), vadd(r, vset(1.0f))); /* e^r */
    __m256i e = _mm256_slli_epi32(
        _mm256_add_epi32(_mm256_castps_si256(nm), _mm256_set1_epi32(127 - 0x4B400000)), 23);
    return vdiv(x, vfma(p, _mm256_castsi256_ps(e), vset(1.0f))); /* 1 + e^t in [1, inf] */
}

#endif
