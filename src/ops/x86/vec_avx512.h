/* The avx512 vector vocabulary of activation_param_impl.h (V, M, VW, vset, vload, ... : listed there),
 * shared by the x86 files whose loops are written over it (activation_param_avx512.c, norm_avx512.c).
 * Include only from files compiled for this tier. */
#ifndef FRT_OPS_X86_VEC_AVX512_H
#define FRT_OPS_X86_VEC_AVX512_H

#include <immintrin.h>

#define VW 16
typedef __m512 V;
typedef __mmask16 M;

static inline V vset(float a) { return _mm512_set1_ps(a); }
static inline V vload(const float *p) { return _mm512_loadu_ps(p); }
static inline void vstore(float *p, V v) { _mm512_storeu_ps(p, v); }
static inline V vadd(V a, V b) { return _mm512_add_ps(a, b); }
static inline V vsub(V a, V b) { return _mm512_sub_ps(a, b); }
static inline V vmul(V a, V b) { return _mm512_mul_ps(a, b); }
static inline V vdiv(V a, V b) { return _mm512_div_ps(a, b); }
static inline V vmax(V a, V b) { return _mm512_max_ps(a, b); }
static inline V vmin(V a, V b) { return _mm512_min_ps(a, b); }
static inline V vabs(V a) { return _mm512_andnot_ps(_mm512_set1_ps(-0.0f), a); }
static inline V vfma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
static inline V vfnma(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
static inline M vlt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
static inline M vle(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
static inline M vgt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
static inline M veq(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
static inline V vsel(M m, V t, V f) { return _mm512_mask_blend_ps(m, f, t); }
static inline V vround(V x) {
    return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline V vscale(V p, V n) { return _mm512_scalef_ps(p, n); }
/* p 2^n for integral n in [-126, 127] */
static inline V vscale_n(V p, V n) { return _mm512_scalef_ps(p, n); }
static inline V vfrexp(V x, V *k) {
    V m = _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_src); /* [1, 2) */
    V e = _mm512_getexp_ps(x);
    M big = _mm512_cmp_ps_mask(m, _mm512_set1_ps(1.41421356f), _CMP_GT_OQ);
    *k = vsel(big, vadd(e, vset(1.0f)), e);
    return vsel(big, vmul(m, vset(0.5f)), m);
}
static inline float vhmax(V v) { return _mm512_reduce_max_ps(v); }
static inline float vhsum(V v) { return _mm512_reduce_add_ps(v); }

/* x / (1 + e^-x): vec_avx2.h's vsilu, the same operations in the same order on 16 lanes (so the
 * same bits per element); used by the stem loop (blkstem_impl.h). */
static inline V vsilu(V x) {
    V t = vmin(vset(89.0f), vmax(vset(-87.0f), vsub(vset(0.0f), x)));
    const V magic = vset(12582912.0f);
    V nm = vfma(t, vset(1.44269504088896341f), magic);
    V n = vsub(nm, magic);
    V r = vfnma(n, vset(0.693147182f), t);
    V q = vfma(vset(0.00832738f), r, vset(0.04187908f));
    q = vfma(q, r, vset(0.1666691f));
    q = vfma(q, r, vset(0.49999297f));
    V p = vfma(q, vmul(r, r), vadd(r, vset(1.0f)));
    __m512i e = _mm512_slli_epi32(
        _mm512_add_epi32(_mm512_castps_si512(nm), _mm512_set1_epi32(127 - 0x4B400000)), 23);
    return vdiv(x, vfma(p, _mm512_castsi512_ps(e), vset(1.0f)));
}

#endif
