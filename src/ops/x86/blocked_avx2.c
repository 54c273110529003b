/* AVX2 loops over nChw8c-blocked activations (blocked.h). */
#include <immintrin.h>
#include <stdbool.h>

#include "ops/blocked.h"

void frt_blk_chanmul_avx2(const float *x, const float *g, float *y, int64_t C, int64_t S,
                          int64_t b) {
    (void)b; /* 8: the variant table gives this loop only that block */
    int64_t cb = (C + 7) / 8;
    for (int64_t k = 0; k < cb; k++) {
        int64_t valid = C - k * 8 < 8 ? C - k * 8 : 8;
        __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)valid),
                                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        __m256 f = _mm256_maskload_ps(g + k * 8, m);
        const float *xr = x + k * S * 8;
        float *yr = y + k * S * 8;
        int64_t s = 0;
        for (; s + 4 <= S; s += 4) {
            __m256 a0 = _mm256_maskload_ps(xr + s * 8, m);
            __m256 a1 = _mm256_maskload_ps(xr + s * 8 + 8, m);
            __m256 a2 = _mm256_maskload_ps(xr + s * 8 + 16, m);
            __m256 a3 = _mm256_maskload_ps(xr + s * 8 + 24, m);
            _mm256_storeu_ps(yr + s * 8, _mm256_mul_ps(a0, f));
            _mm256_storeu_ps(yr + s * 8 + 8, _mm256_mul_ps(a1, f));
            _mm256_storeu_ps(yr + s * 8 + 16, _mm256_mul_ps(a2, f));
            _mm256_storeu_ps(yr + s * 8 + 24, _mm256_mul_ps(a3, f));
        }
        for (; s < S; s++)
            _mm256_storeu_ps(yr + s * 8, _mm256_mul_ps(_mm256_maskload_ps(xr + s * 8, m), f));
    }
}

/* ---- per-channel affine map: one 8-lane part of a block at a time, the portable loop's
 * operations (product, then sum, then v > 0 ? v : 0 as max(v, 0), which gives 0 for NaN as the
 * portable comparison does) ---- */

void frt_blk_affine_avx2(const float *x, const float *a, const float *c, float *y, int64_t C,
                         int64_t S, int64_t b, int64_t k0, int64_t k1, int relu) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 zero = _mm256_setzero_ps();
    for (int64_t k = k0; k < k1; k++)
        for (int64_t l0 = 0; l0 < b; l0 += 8) {
            int64_t valid = C - k * b - l0;
            valid = valid < 0 ? 0 : valid > 8 ? 8 : valid;
            __m256 keep = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)valid), lane));
            __m256 va = _mm256_loadu_ps(a + k * b + l0), vc = _mm256_loadu_ps(c + k * b + l0);
            const float *xr = x + k * S * b + l0;
            float *yr = y + k * S * b + l0;
            for (int64_t s = 0; s < S; s++) {
                __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(xr + s * b), va), vc);
                if (relu) v = _mm256_max_ps(v, zero);
                _mm256_storeu_ps(yr + s * b, _mm256_and_ps(v, keep));
            }
        }
}

/* ---- pooling ---------------------------------------------------------------------------------
 * One 8-lane part (lanes l0 .. l0+7 of a block of b) at a time: a vector per spatial position,
 * at stride b floats. Interior outputs (every window column inside [0, W)) go four at a time;
 * edge outputs one at a time. The operations and their order are the portable loop's. */

#include <float.h>

/* one output: window rows [ilo, ihi), columns [jlo, jhi) */
static inline __m256 pool1(const frt_blk_pool_geom *g, const float *xb, int64_t b, int64_t ih0,
                           int64_t ilo, int64_t ihi, int64_t iw0, int64_t jlo, int64_t jhi) {
    __m256 acc = g->max ? _mm256_set1_ps(-FLT_MAX) : _mm256_setzero_ps();
    for (int64_t i = ilo; i < ihi; i++) {
        const float *row = xb + (ih0 + i * g->dh) * g->W * b;
        for (int64_t j = jlo; j < jhi; j++) {
            __m256 v = _mm256_loadu_ps(row + (iw0 + j * g->dw) * b);
            acc = g->max ? _mm256_max_ps(v, acc) : _mm256_add_ps(acc, v);
        }
    }
    return acc;
}

/* 3x3 pooling (max, or for avg the sum then times inv), dilation 1, all three window rows inside
 * the image: n groups of four interior outputs from yr on, the window of the first at p (row 0,
 * first column), rows rs floats apart, outputs S b floats apart in the input and b in the output,
 * then rem more interior outputs one at a time. The taps in the general loop's order (rows, then
 * columns; max(v, acc) from -FLT_MAX, or acc + v from 0), fully unrolled with b, the stride S and
 * the kind as constants (pool3x3_8s2 / _8s1 / avg...), so every tap is a load at an immediate
 * offset: the general loop, with its offsets in registers spilled to the stack, took about
 * twice as long (squeezenet1_1's 64 ch at 111x111 -> 55x55: 104 -> 55 us per image, best of
 * 200, Zen 3; inception_v3's nine 3x3 stride-1 average pools 1.60 -> 0.84 ms of thread time). */
static inline __attribute__((always_inline)) void pool3x3_groups(const float *p, int64_t rs,
                                                                 const int64_t S, const int64_t b,
                                                                 float *yr, int64_t n,
                                                                 int64_t rem, __m256 keep,
                                                                 const int max, __m256 inv) {
    const __m256 lo = max ? _mm256_set1_ps(-FLT_MAX) : _mm256_setzero_ps();
    const int64_t sb = S * b;
#define POOL_OP(v, a) (max ? _mm256_max_ps((v), (a)) : _mm256_add_ps((a), (v)))
#define POOL_FIN(a) (max ? (a) : _mm256_mul_ps((a), inv))
    for (int64_t q = 0; q < n; q++, p += 4 * sb, yr += 4 * b) {
        __m256 a0 = lo, a1 = lo, a2 = lo, a3 = lo;
        const float *r0 = p, *r1 = p + rs, *r2 = p + 2 * rs;
#define POOL3_TAP(t)                                                                            \
    a0 = POOL_OP(_mm256_loadu_ps(t), a0), a1 = POOL_OP(_mm256_loadu_ps((t) + sb), a1),          \
    a2 = POOL_OP(_mm256_loadu_ps((t) + 2 * sb), a2),                                            \
    a3 = POOL_OP(_mm256_loadu_ps((t) + 3 * sb), a3)
#define POOL3_ROW(r) POOL3_TAP(r), POOL3_TAP((r) + b), POOL3_TAP((r) + 2 * b)
        POOL3_ROW(r0);
        POOL3_ROW(r1);
        POOL3_ROW(r2);
#undef POOL3_ROW
#undef POOL3_TAP
        _mm256_storeu_ps(yr, _mm256_and_ps(POOL_FIN(a0), keep));
        _mm256_storeu_ps(yr + b, _mm256_and_ps(POOL_FIN(a1), keep));
        _mm256_storeu_ps(yr + 2 * b, _mm256_and_ps(POOL_FIN(a2), keep));
        _mm256_storeu_ps(yr + 3 * b, _mm256_and_ps(POOL_FIN(a3), keep));
    }
    for (int64_t q = 0; q < rem; q++, p += sb, yr += b) { /* interior outputs left: one each */
        __m256 a = lo;
        for (int i = 0; i < 3; i++)
            a = POOL_OP(_mm256_loadu_ps(p + i * rs), a),
            a = POOL_OP(_mm256_loadu_ps(p + i * rs + b), a),
            a = POOL_OP(_mm256_loadu_ps(p + i * rs + 2 * b), a);
        _mm256_storeu_ps(yr, _mm256_and_ps(POOL_FIN(a), keep));
    }
#undef POOL_FIN
#undef POOL_OP
}

static void max3x3_8s2(const float *p, int64_t rs, float *yr, int64_t n, int64_t rem,
                       __m256 keep, __m256 inv) {
    pool3x3_groups(p, rs, 2, 8, yr, n, rem, keep, 1, inv);
}

static void max3x3_8s1(const float *p, int64_t rs, float *yr, int64_t n, int64_t rem,
                       __m256 keep, __m256 inv) {
    pool3x3_groups(p, rs, 1, 8, yr, n, rem, keep, 1, inv);
}

static void avg3x3_8s2(const float *p, int64_t rs, float *yr, int64_t n, int64_t rem,
                       __m256 keep, __m256 inv) {
    pool3x3_groups(p, rs, 2, 8, yr, n, rem, keep, 0, inv);
}

static void avg3x3_8s1(const float *p, int64_t rs, float *yr, int64_t n, int64_t rem,
                       __m256 keep, __m256 inv) {
    pool3x3_groups(p, rs, 1, 8, yr, n, rem, keep, 0, inv);
}

static void pool_part(const frt_blk_pool_geom *g, const float *xb, float *yb, int64_t b,
                      __m256 keep) {
    const int64_t OW = g->OW, sw = g->sw, dw = g->dw, kw = g->kw, W = g->W;
    /* interior columns: ow*sw - pw >= 0 and ow*sw - pw + (kw-1)*dw <= W-1 */
    int64_t owa = (g->pw + sw - 1) / sw, owb = 0;
    int64_t last = W - 1 - (kw - 1) * dw + g->pw;
    if (last >= 0) owb = last / sw + 1;
    if (owb > OW) owb = OW;
    if (owa > owb) owa = owb;
    const __m256 lo = _mm256_set1_ps(-FLT_MAX);
    for (int64_t oh = 0; oh < g->OH; oh++) {
        int64_t ilo, ihi, clo, chi;
        frt_blk_pool_range(oh, g->sh, g->ph, g->kh, g->dh, 0, g->H, &ilo, &ihi);
        frt_blk_pool_range(oh, g->sh, g->ph, g->kh, g->dh, g->ch0, g->ch1, &clo, &chi);
        int64_t ih0 = oh * g->sh - g->ph;
        float *yr = yb + oh * OW * b;
        int64_t ow = 0;
        if (b == 8 && (sw == 1 || sw == 2) && g->kh == 3 && kw == 3 && g->dh == 1 &&
            dw == 1 && ilo == 0 && ihi == 3 && owa + 4 <= owb) {
            for (; ow < owa; ow++) { /* left edge */
                int64_t jlo, jhi, dlo, dhi;
                frt_blk_pool_range(ow, sw, g->pw, kw, dw, 0, W, &jlo, &jhi);
                __m256 a = pool1(g, xb, b, ih0, ilo, ihi, ow * sw - g->pw, jlo, jhi);
                if (!g->max) {
                    frt_blk_pool_range(ow, sw, g->pw, kw, dw, g->cw0, g->cw1, &dlo, &dhi);
                    int64_t cnt = (chi - clo) * (dhi - dlo);
                    a = _mm256_mul_ps(a, _mm256_set1_ps(cnt > 0 ? 1.0f / (float)cnt : 0.0f));
                }
                _mm256_storeu_ps(yr + ow * b, _mm256_and_ps(a, keep));
            }
            int64_t n = (owb - owa) / 4, rem = (owb - owa) % 4;
            /* interior columns lie inside the count region, which holds [0, W) */
            int64_t cnt = (chi - clo) * kw;
            __m256 inv = _mm256_set1_ps(cnt > 0 ? 1.0f / (float)cnt : 0.0f);
            (g->max ? sw == 2 ? max3x3_8s2 : max3x3_8s1
                    : sw == 2 ? avg3x3_8s2 : avg3x3_8s1)(xb + (ih0 * W + ow * sw - g->pw) * b,
                                                         W * b, yr + ow * b, n, rem, keep, inv);
            ow = owb; /* the right edge as below */
        }
        for (; ow < OW;) {
            if (ow >= owa && ow + 4 <= owb) {
                __m256 a0, a1, a2, a3;
                a0 = a1 = a2 = a3 = g->max ? lo : _mm256_setzero_ps();
                const int64_t sb = sw * b;
                for (int64_t i = ilo; i < ihi; i++) {
                    const float *p = xb + ((ih0 + i * g->dh) * W + ow * sw - g->pw) * b;
                    for (int64_t j = 0; j < kw; j++, p += dw * b) {
                        __m256 v0 = _mm256_loadu_ps(p), v1 = _mm256_loadu_ps(p + sb);
                        __m256 v2 = _mm256_loadu_ps(p + 2 * sb), v3 = _mm256_loadu_ps(p + 3 * sb);
                        if (g->max) {
                            a0 = _mm256_max_ps(v0, a0), a1 = _mm256_max_ps(v1, a1);
                            a2 = _mm256_max_ps(v2, a2), a3 = _mm256_max_ps(v3, a3);
                        } else {
                            a0 = _mm256_add_ps(a0, v0), a1 = _mm256_add_ps(a1, v1);
                            a2 = _mm256_add_ps(a2, v2), a3 = _mm256_add_ps(a3, v3);
                        }
                    }
                }
                if (!g->max) {
                    /* interior columns lie inside the count region, which holds [0, W) */
                    int64_t cnt = (chi - clo) * kw;
                    __m256 inv = _mm256_set1_ps(cnt > 0 ? 1.0f / (float)cnt : 0.0f);
                    a0 = _mm256_mul_ps(a0, inv), a1 = _mm256_mul_ps(a1, inv);
                    a2 = _mm256_mul_ps(a2, inv), a3 = _mm256_mul_ps(a3, inv);
                }
                float *o = yr + ow * b;
                _mm256_storeu_ps(o, _mm256_and_ps(a0, keep));
                _mm256_storeu_ps(o + b, _mm256_and_ps(a1, keep));
                _mm256_storeu_ps(o + 2 * b, _mm256_and_ps(a2, keep));
                _mm256_storeu_ps(o + 3 * b, _mm256_and_ps(a3, keep));
                ow += 4;
                continue;
            }
            int64_t jlo, jhi, dlo, dhi;
            frt_blk_pool_range(ow, sw, g->pw, kw, dw, 0, W, &jlo, &jhi);
            __m256 a = pool1(g, xb, b, ih0, ilo, ihi, ow * sw - g->pw, jlo, jhi);
            if (!g->max) {
                frt_blk_pool_range(ow, sw, g->pw, kw, dw, g->cw0, g->cw1, &dlo, &dhi);
                int64_t cnt = (chi - clo) * (dhi - dlo);
                a = _mm256_mul_ps(a, _mm256_set1_ps(cnt > 0 ? 1.0f / (float)cnt : 0.0f));
            }
            _mm256_storeu_ps(yr + ow * b, _mm256_and_ps(a, keep));
            ow++;
        }
    }
}

/* All-ones lanes for the channels c0 .. c0+7 that exist (< C), zero lanes for the block's
 * padding channels (outputs written there are 0). */
static inline __m256 real_lanes(int64_t C, int64_t c0) {
    int64_t valid = C - c0;
    if (valid > 8) valid = 8;
    if (valid < 0) valid = 0;
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)valid),
                                                  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
}

void frt_blk_pool_avx2(const frt_blk_pool_geom *g, const float *x, float *y, int64_t k0,
                       int64_t k1, int64_t b) {
    const int64_t in_blk = g->H * g->W * b, out_blk = g->OH * g->OW * b;
    if (frt_blk_pool_is_global(g)) {
        const int64_t S = g->H * g->W;
        const __m256 inv = _mm256_set1_ps(1.0f / (float)S);
        for (int64_t k = k0; k < k1; k++)
            for (int64_t l0 = 0; l0 < b; l0 += 8) {
                const __m256 keep = real_lanes(g->C, k * b + l0);
                const float *p = x + k * in_blk + l0;
                __m256 a[4];
                for (int q = 0; q < 4; q++)
                    a[q] = g->max ? _mm256_set1_ps(-FLT_MAX) : _mm256_setzero_ps();
                int64_t s = 0;
                if (g->max) {
                    for (; s + 4 <= S; s += 4)
                        for (int q = 0; q < 4; q++)
                            a[q] = _mm256_max_ps(_mm256_loadu_ps(p + (s + q) * b), a[q]);
                    for (; s < S; s++) a[s & 3] = _mm256_max_ps(_mm256_loadu_ps(p + s * b), a[s & 3]);
                    a[0] = _mm256_max_ps(_mm256_max_ps(a[0], a[1]), _mm256_max_ps(a[2], a[3]));
                } else {
                    for (; s + 4 <= S; s += 4)
                        for (int q = 0; q < 4; q++)
                            a[q] = _mm256_add_ps(a[q], _mm256_loadu_ps(p + (s + q) * b));
                    for (; s < S; s++) a[s & 3] = _mm256_add_ps(a[s & 3], _mm256_loadu_ps(p + s * b));
                    a[0] = _mm256_mul_ps(
                        _mm256_add_ps(_mm256_add_ps(a[0], a[1]), _mm256_add_ps(a[2], a[3])), inv);
                }
                _mm256_storeu_ps(y + k * b + l0, _mm256_and_ps(a[0], keep));
            }
        return;
    }
    for (int64_t k = k0; k < k1; k++)
        for (int64_t l0 = 0; l0 < b; l0 += 8) {
            const __m256 keep = real_lanes(g->C, k * b + l0);
            pool_part(g, x + k * in_blk + l0, y + k * out_blk + l0, b, keep);
        }
}

/* ---- channel gather (blocked.h): per chunk, each source chunk's vector at position s is
 * permuted into output lane order (vpermps); the first is masked to its lanes (and with
 * all-ones or zero: lanes of no source +0), the others blended in on their masks (bit copies).
 * One source taking lanes in order (a chunk copied whole) is a plain copy. ---- */

static __m256 gather_mask(uint32_t m) {
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    __m256i v = _mm256_and_si256(_mm256_set1_epi32((int)m), bit);
    return _mm256_castsi256_ps(_mm256_cmpeq_epi32(v, bit));
}

/* Chunk of n sources (n a constant after inlining, so the source loop unrolls): lanes of each
 * source permuted into place, the first masked (lanes of no source +0), the others blended in. */
static inline __attribute__((always_inline)) void gather_n(const float *const *p,
                                                           const __m256i *idx, const __m256 *msk,
                                                           float *yc, int64_t S, int64_t b,
                                                           int n) {
    for (int64_t s = 0; s < S; s++) {
        __m256 v = _mm256_and_ps(_mm256_permutevar8x32_ps(_mm256_loadu_ps(p[0] + s * b), idx[0]),
                                 msk[0]);
        for (int j = 1; j < n; j++)
            v = _mm256_blendv_ps(v, _mm256_permutevar8x32_ps(_mm256_loadu_ps(p[j] + s * b), idx[j]),
                                 msk[j]);
        _mm256_storeu_ps(yc + s * b, v);
    }
}

/* Chunk whose sources each use lanes of one 128-bit half of their chunk: the halves packed in
 * pairs into nv vectors (a 128-bit load and an insert from memory), each permuted once into output
 * lane order, the first masked, the others blended in. nv a constant after inlining. */
static inline __attribute__((always_inline)) void gather_halves(
    const float *const *pa, const float *const *pb, const __m256i *idx, const __m256 *msk,
    float *yc, int64_t S, int64_t b, int nv) {
    for (int64_t s = 0; s < S; s++) {
        __m256 v = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(pa[0] + s * b)),
                                        _mm_loadu_ps(pb[0] + s * b), 1);
        v = _mm256_and_ps(_mm256_permutevar8x32_ps(v, idx[0]), msk[0]);
        for (int j = 1; j < nv; j++) {
            __m256 t = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(pa[j] + s * b)),
                                            _mm_loadu_ps(pb[j] + s * b), 1);
            v = _mm256_blendv_ps(v, _mm256_permutevar8x32_ps(t, idx[j]), msk[j]);
        }
        _mm256_storeu_ps(yc + s * b, v);
    }
}

/* Packs the sources of chunk c (n <= 8) as halves (gather_halves); returns the number of vectors,
 * or 0 when a source uses lanes of both halves. */
static int pack_halves(const float *const *x, const frt_blk_gchunk *c, const frt_blk_gsrc *src,
                       int64_t S, int64_t b, const float **pa, const float **pb, __m256i *idx,
                       __m256 *msk) {
    int nv = 0;
    int32_t li[8][8];
    uint32_t mk[8];
    for (int j = 0; j < c->n; j++) {
        const frt_blk_gsrc *g = &src[c->first + j];
        int lo = 0, hi = 0;
        for (int l = 0; l < 8; l++)
            if (g->mask >> l & 1) {
                lo |= g->lane[l] < 4;
                hi |= g->lane[l] >= 4;
            }
        if (lo && hi) return 0;
        const float *p = x[g->in] + g->blk * S * b + g->sub * 8 + (hi ? 4 : 0);
        int k = j / 2, up = j % 2; /* pairs of sources in one vector: low half, high half */
        if (!up) {
            pa[k] = pb[k] = p;
            mk[k] = 0;
            for (int l = 0; l < 8; l++) li[k][l] = 0;
            nv++;
        } else {
            pb[k] = p;
        }
        for (int l = 0; l < 8; l++)
            if (g->mask >> l & 1) li[k][l] = g->lane[l] % 4 + 4 * up;
        mk[k] |= g->mask;
    }
    for (int k = 0; k < nv; k++) {
        idx[k] = _mm256_loadu_si256((const __m256i *)li[k]);
        msk[k] = gather_mask(mk[k]);
    }
    return nv;
}

void frt_blk_gather_avx2(const float *const *x, float *const *y, const frt_blk_gchunk *ch,
                         const frt_blk_gsrc *src, int64_t q0, int64_t q1, int64_t S, int64_t b) {
    enum { MAXS = 8 };
    for (int64_t q = q0; q < q1; q++) {
        const frt_blk_gchunk *c = &ch[q];
        float *yc = y[c->out] + c->blk * S * b + c->sub * 8;
        int n = c->n < MAXS ? c->n : MAXS; /* at most 8 sources: one per lane */
        const float *p[MAXS];
        __m256i idx[MAXS];
        __m256 msk[MAXS];
        for (int j = 0; j < n; j++) {
            const frt_blk_gsrc *g = &src[c->first + j];
            p[j] = x[g->in] + g->blk * S * b + g->sub * 8;
            idx[j] = _mm256_loadu_si256((const __m256i *)g->lane);
            msk[j] = gather_mask(g->mask);
        }
        bool copy = n == 1 && src[c->first].mask == 0xffu;
        for (int l = 0; copy && l < 8; l++) copy = src[c->first].lane[l] == l;
        if (n == 0) {
            for (int64_t s = 0; s < S; s++) _mm256_storeu_ps(yc + s * b, _mm256_setzero_ps());
        } else if (copy) {
            for (int64_t s = 0; s < S; s++)
                _mm256_storeu_ps(yc + s * b, _mm256_loadu_ps(p[0] + s * b));
        } else {
            const float *pa[4], *pb[4];
            int nv = n <= 8 ? pack_halves(x, c, src, S, b, pa, pb, idx, msk) : 0;
            switch (nv) {
            case 1: gather_halves(pa, pb, idx, msk, yc, S, b, 1); continue;
            case 2: gather_halves(pa, pb, idx, msk, yc, S, b, 2); continue;
            case 3: gather_halves(pa, pb, idx, msk, yc, S, b, 3); continue;
            case 4: gather_halves(pa, pb, idx, msk, yc, S, b, 4); continue;
            default: break;
            }
            for (int j = 0; j < n; j++) { /* pack_halves may have overwritten them */
                const frt_blk_gsrc *g = &src[c->first + j];
                idx[j] = _mm256_loadu_si256((const __m256i *)g->lane);
                msk[j] = gather_mask(g->mask);
            }
            switch (n) {
            case 1: gather_n(p, idx, msk, yc, S, b, 1); break;
            case 2: gather_n(p, idx, msk, yc, S, b, 2); break;
            case 3: gather_n(p, idx, msk, yc, S, b, 3); break;
            case 4: gather_n(p, idx, msk, yc, S, b, 4); break;
            default: gather_n(p, idx, msk, yc, S, b, n); break;
            }
        }
    }
}
