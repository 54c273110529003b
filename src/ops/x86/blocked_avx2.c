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

/* ---- pooling (blocked_pool_impl.h over 8-lane vectors; b any multiple of 8) ---- */

#include "vec_avx2.h"
#define BLK_POOL_NAME frt_blk_pool_avx2
#include "blocked_pool_impl.h"
#undef BLK_POOL_NAME

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
