/* The blocked pooling loop (blocked.h, frt_blk_pool_fn), written once over the vector vocabulary
 * of x86/vec_avx2.h (VW = 8 lanes) / x86/vec_avx512.h (VW = 16), which the including file
 * (blocked_{avx2,avx512}.c) includes first; it then defines BLK_POOL_NAME (the function).
 *
 * One VW-lane part (lanes l0 .. l0+VW-1 of a block of b, b a multiple of VW) at a time: a vector
 * per spatial position, at stride b floats. Interior outputs (every window column inside
 * [0, W)) go four at a time; edge outputs one at a time. The operations and their order are the
 * portable loop's, so every variant gives the portable bits: max is v > acc ? v : acc from
 * acc = -FLT_MAX (vmax(v, acc): the second operand where either is NaN), avg is 0 + the values in
 * order, then times 1 / cnt. Padding lanes (channels >= C) are written as +0. */
#include <float.h>
#include <stdint.h>

#include "ops/blocked.h"

#define BLK_POOL_INLINE static inline __attribute__((always_inline))

/* The lanes of channels c0 .. c0+VW-1 that exist (< C) */
#if VW == 16
typedef __mmask16 pool_keep_t;
BLK_POOL_INLINE pool_keep_t pool_real_lanes(int64_t C, int64_t c0) {
    int64_t valid = C - c0;
    if (valid > 16) valid = 16;
    if (valid < 0) valid = 0;
    return (pool_keep_t)((1u << valid) - 1u);
}
/* v on the lanes in keep, +0 on the others */
BLK_POOL_INLINE V pool_keep(V v, pool_keep_t keep) { return _mm512_maskz_mov_ps(keep, v); }
#else
typedef __m256 pool_keep_t;
BLK_POOL_INLINE pool_keep_t pool_real_lanes(int64_t C, int64_t c0) {
    int64_t valid = C - c0;
    if (valid > 8) valid = 8;
    if (valid < 0) valid = 0;
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)valid),
                                                  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
}
BLK_POOL_INLINE V pool_keep(V v, pool_keep_t keep) { return _mm256_and_ps(v, keep); }
#endif

/* one output: window rows [ilo, ihi), columns [jlo, jhi) */
BLK_POOL_INLINE V pool1(const frt_blk_pool_geom *g, const float *xb, int64_t b, int64_t ih0,
                        int64_t ilo, int64_t ihi, int64_t iw0, int64_t jlo, int64_t jhi) {
    V acc = g->max ? vset(-FLT_MAX) : vset(0.0f);
    for (int64_t i = ilo; i < ihi; i++) {
        const float *row = xb + (ih0 + i * g->dh) * g->W * b;
        for (int64_t j = jlo; j < jhi; j++) {
            V v = vload(row + (iw0 + j * g->dw) * b);
            acc = g->max ? vmax(v, acc) : vadd(acc, v);
        }
    }
    return acc;
}

/* K x K pooling (K = 2 or 3; max, or for avg the sum then times inv), dilation 1, window rows
 * [ilo, ilo + nr) inside the image: n groups of four interior outputs from yr on, the window of
 * the first at p (its first row inside, first column), rows rs floats apart, outputs S b floats
 * apart in the input and b in the output, then rem more interior outputs one at a time. The taps
 * in the general loop's order (rows, then columns), the columns unrolled with K, b, the stride S
 * and the kind as constants (pool2x2_s2 / pool3x3_s1 ...), so every tap of a row is a load at an
 * immediate offset: the general loop, with its offsets in registers spilled to the stack, took
 * about twice as long (squeezenet1_1's 64 ch at 111x111 -> 55x55: 104 -> 55 us per image, best of
 * 200, Zen 3, AVX2; inception_v3's nine 3x3 stride-1 average pools 1.60 -> 0.84 ms of thread
 * time). */
BLK_POOL_INLINE void poolk_groups(const float *p, int64_t rs, int64_t nr, const int64_t K,
                                  const int64_t S, const int64_t b, float *yr, int64_t n,
                                  int64_t rem, pool_keep_t keep, const int max, V inv) {
    const V lo = max ? vset(-FLT_MAX) : vset(0.0f);
    const int64_t sb = S * b;
#define POOL_OP(v, a) (max ? vmax((v), (a)) : vadd((a), (v)))
#define POOL_FIN(a) (max ? (a) : vmul((a), inv))
#define POOL_TAP4(t)                                                                            \
    a0 = POOL_OP(vload(t), a0), a1 = POOL_OP(vload((t) + sb), a1),                              \
    a2 = POOL_OP(vload((t) + 2 * sb), a2), a3 = POOL_OP(vload((t) + 3 * sb), a3)
    for (int64_t q = 0; q < n; q++, p += 4 * sb, yr += 4 * b) {
        V a0 = lo, a1 = lo, a2 = lo, a3 = lo;
        const float *r = p;
        for (int64_t i = 0; i < nr; i++, r += rs) {
            POOL_TAP4(r);
            POOL_TAP4(r + b);
            if (K == 3) POOL_TAP4(r + 2 * b);
        }
        vstore(yr, pool_keep(POOL_FIN(a0), keep));
        vstore(yr + b, pool_keep(POOL_FIN(a1), keep));
        vstore(yr + 2 * b, pool_keep(POOL_FIN(a2), keep));
        vstore(yr + 3 * b, pool_keep(POOL_FIN(a3), keep));
    }
#undef POOL_TAP4
    for (int64_t q = 0; q < rem; q++, p += sb, yr += b) { /* interior outputs left: one each */
        V a = lo;
        const float *r = p;
        for (int64_t i = 0; i < nr; i++, r += rs) {
            a = POOL_OP(vload(r), a), a = POOL_OP(vload(r + b), a);
            if (K == 3) a = POOL_OP(vload(r + 2 * b), a);
        }
        vstore(yr, pool_keep(POOL_FIN(a), keep));
    }
#undef POOL_FIN
#undef POOL_OP
}

typedef void (*poolk_fn)(const float *p, int64_t rs, int64_t nr, float *yr, int64_t n, int64_t rem,
                         pool_keep_t keep, V inv);
#define POOLK_INSTANCE(name, K, S, max)                                                         \
    static void name(const float *p, int64_t rs, int64_t nr, float *yr, int64_t n, int64_t rem, \
                     pool_keep_t keep, V inv) {                                                 \
        poolk_groups(p, rs, nr, K, S, VW, yr, n, rem, keep, max, inv);                          \
    }
POOLK_INSTANCE(max3x3_s1, 3, 1, 1)
POOLK_INSTANCE(max3x3_s2, 3, 2, 1)
POOLK_INSTANCE(avg3x3_s1, 3, 1, 0)
POOLK_INSTANCE(avg3x3_s2, 3, 2, 0)
POOLK_INSTANCE(max2x2_s2, 2, 2, 1)
POOLK_INSTANCE(avg2x2_s2, 2, 2, 0)
#undef POOLK_INSTANCE

/* The unrolled loop for g's geometry at block b, or NULL (the general loop). */
static poolk_fn poolk_pick(const frt_blk_pool_geom *g, int64_t b) {
    if (b != VW || g->dh != 1 || g->dw != 1 || g->kh != g->kw) return NULL;
    if (g->kw == 3 && g->sw == 1) return g->max ? max3x3_s1 : avg3x3_s1;
    if (g->kw == 3 && g->sw == 2) return g->max ? max3x3_s2 : avg3x3_s2;
    if (g->kw == 2 && g->sw == 2) return g->max ? max2x2_s2 : avg2x2_s2;
    return NULL;
}

/* an edge output (some window column outside [0, W)) at column ow of row oh's window rows
   [ilo, ihi), count rows [clo, chi) */
BLK_POOL_INLINE void pool_edge(const frt_blk_pool_geom *g, const float *xb, float *yr, int64_t b,
                               pool_keep_t keep, int64_t ow, int64_t ih0, int64_t ilo,
                               int64_t ihi, int64_t clo, int64_t chi) {
    int64_t jlo, jhi, dlo, dhi;
    frt_blk_pool_range(ow, g->sw, g->pw, g->kw, g->dw, 0, g->W, &jlo, &jhi);
    V a = pool1(g, xb, b, ih0, ilo, ihi, ow * g->sw - g->pw, jlo, jhi);
    if (!g->max) {
        frt_blk_pool_range(ow, g->sw, g->pw, g->kw, g->dw, g->cw0, g->cw1, &dlo, &dhi);
        int64_t cnt = (chi - clo) * (dhi - dlo);
        a = vmul(a, vset(cnt > 0 ? 1.0f / (float)cnt : 0.0f));
    }
    vstore(yr + ow * b, pool_keep(a, keep));
}

static void pool_part(const frt_blk_pool_geom *g, const float *xb, float *yb, int64_t b,
                      pool_keep_t keep) {
    const int64_t OW = g->OW, sw = g->sw, dw = g->dw, kw = g->kw, W = g->W;
    /* interior columns: ow*sw - pw >= 0 and ow*sw - pw + (kw-1)*dw <= W-1 */
    int64_t owa = (g->pw + sw - 1) / sw, owb = 0;
    int64_t last = W - 1 - (kw - 1) * dw + g->pw;
    if (last >= 0) owb = last / sw + 1;
    if (owb > OW) owb = OW;
    if (owa > owb) owa = owb;
    const V lo = vset(-FLT_MAX);
    const poolk_fn fast = poolk_pick(g, b);
    for (int64_t oh = 0; oh < g->OH; oh++) {
        int64_t ilo, ihi, clo, chi;
        frt_blk_pool_range(oh, g->sh, g->ph, g->kh, g->dh, 0, g->H, &ilo, &ihi);
        frt_blk_pool_range(oh, g->sh, g->ph, g->kh, g->dh, g->ch0, g->ch1, &clo, &chi);
        int64_t ih0 = oh * g->sh - g->ph;
        float *yr = yb + oh * OW * b;
        int64_t ow = 0;
        if (fast && ihi > ilo && owa < owb) {
            for (; ow < owa; ow++) pool_edge(g, xb, yr, b, keep, ow, ih0, ilo, ihi, clo, chi);
            int64_t n = (owb - owa) / 4, rem = (owb - owa) % 4;
            /* interior columns lie inside the count region, which holds [0, W) */
            int64_t cnt = (chi - clo) * kw;
            V inv = vset(cnt > 0 ? 1.0f / (float)cnt : 0.0f);
            fast(xb + ((ih0 + ilo) * W + ow * sw - g->pw) * b, W * b, ihi - ilo, yr + ow * b, n,
                 rem, keep, inv);
            ow = owb; /* the right edge as below */
        }
        for (; ow < OW;) {
            if (ow >= owa && ow + 4 <= owb) {
                V a0, a1, a2, a3;
                a0 = a1 = a2 = a3 = g->max ? lo : vset(0.0f);
                const int64_t sb = sw * b;
                for (int64_t i = ilo; i < ihi; i++) {
                    const float *p = xb + ((ih0 + i * g->dh) * W + ow * sw - g->pw) * b;
                    for (int64_t j = 0; j < kw; j++, p += dw * b) {
                        V v0 = vload(p), v1 = vload(p + sb);
                        V v2 = vload(p + 2 * sb), v3 = vload(p + 3 * sb);
                        if (g->max) {
                            a0 = vmax(v0, a0), a1 = vmax(v1, a1);
                            a2 = vmax(v2, a2), a3 = vmax(v3, a3);
                        } else {
                            a0 = vadd(a0, v0), a1 = vadd(a1, v1);
                            a2 = vadd(a2, v2), a3 = vadd(a3, v3);
                        }
                    }
                }
                if (!g->max) {
                    /* interior columns lie inside the count region, which holds [0, W) */
                    int64_t cnt = (chi - clo) * kw;
                    V inv = vset(cnt > 0 ? 1.0f / (float)cnt : 0.0f);
                    a0 = vmul(a0, inv), a1 = vmul(a1, inv);
                    a2 = vmul(a2, inv), a3 = vmul(a3, inv);
                }
                float *o = yr + ow * b;
                vstore(o, pool_keep(a0, keep));
                vstore(o + b, pool_keep(a1, keep));
                vstore(o + 2 * b, pool_keep(a2, keep));
                vstore(o + 3 * b, pool_keep(a3, keep));
                ow += 4;
                continue;
            }
            pool_edge(g, xb, yr, b, keep, ow, ih0, ilo, ihi, clo, chi);
            ow++;
        }
    }
}

void BLK_POOL_NAME(const frt_blk_pool_geom *g, const float *x, float *y, int64_t k0, int64_t k1,
                   int64_t b) {
    const int64_t in_blk = g->H * g->W * b, out_blk = g->OH * g->OW * b;
    if (frt_blk_pool_is_global(g)) {
        const int64_t S = g->H * g->W;
        const V inv = vset(1.0f / (float)S);
        for (int64_t k = k0; k < k1; k++)
            for (int64_t l0 = 0; l0 < b; l0 += VW) {
                const pool_keep_t keep = pool_real_lanes(g->C, k * b + l0);
                const float *p = x + k * in_blk + l0;
                V a[4];
                for (int q = 0; q < 4; q++) a[q] = g->max ? vset(-FLT_MAX) : vset(0.0f);
                int64_t s = 0;
                if (g->max) {
                    for (; s + 4 <= S; s += 4)
                        for (int q = 0; q < 4; q++) a[q] = vmax(vload(p + (s + q) * b), a[q]);
                    for (; s < S; s++) a[s & 3] = vmax(vload(p + s * b), a[s & 3]);
                    a[0] = vmax(vmax(a[0], a[1]), vmax(a[2], a[3]));
                } else {
                    for (; s + 4 <= S; s += 4)
                        for (int q = 0; q < 4; q++) a[q] = vadd(a[q], vload(p + (s + q) * b));
                    for (; s < S; s++) a[s & 3] = vadd(a[s & 3], vload(p + s * b));
                    a[0] = vmul(vadd(vadd(a[0], a[1]), vadd(a[2], a[3])), inv);
                }
                vstore(y + k * b + l0, pool_keep(a[0], keep));
            }
        return;
    }
    for (int64_t k = k0; k < k1; k++)
        for (int64_t l0 = 0; l0 < b; l0 += VW)
            pool_part(g, x + k * in_blk + l0, y + k * out_blk + l0, b,
                      pool_real_lanes(g->C, k * b + l0));
}

#undef BLK_POOL_INLINE
