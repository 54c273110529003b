/* Inner loops of the conv packed-weight GEMM path with AVX2/FMA (driver: conv_gemm.c).
 *
 *   micro-kernel: 6 x 16 tile of Y (6 output channels x 16 positions) in 12 ymm accumulators,
 *        initialized with the bias on the first K block, clamped (fused Relu/Clip) on the last,
 *        stored once per K block. M tails use the same kernel with fewer rows; position tails of
 *        1-3 use a one-column kernel, longer ones a 6 x 16 buffer.
 *   pack_block: the col block [npan][kcur][16] straight from X (implicit im2col). The AVX-512
 *        variant shares this packing (its tile is also 16 positions wide).
 */
#include <immintrin.h>
#include <string.h>

#include "ops/conv.h"

#define MR 6
#define NR 16

/* Software prefetch distance (floats) in the packed weight stream. */
#define PF_DIST 384
/* Input prefetch distance of the packing, in K rows (rounded up to whole channels). */
#define PF_CHAN_ROWS 16
/* Tails of at most this many positions use the one-column kernel. */
#define COL_TAIL 3
/* Tail shapes compiled (all in the full build; the traced ones in a selective build, conv.h). */
#define TAIL_BUILT(t) ((FRT_CONV_AVX2_TAILS_BUILT & (t)) != 0)

/* ---------------------------------------------------------------------------------------------- */
/* Micro-kernel                                                                                   */
/* ---------------------------------------------------------------------------------------------- */

enum { UK_FIRST = FRT_CONV_UK_FIRST, UK_LAST = FRT_CONV_UK_LAST };

/* C[ROWS][8*NV] (row stride ldc) = (FIRST ? bias : C) + A[kc][6] * B[kc][16] (first ROWS rows of
 * the A panel, first 8*NV columns of the B panel); when LAST, plus the sum tile z (same layout as
 * C, may be NULL), then clamped to [lo, hi] when act. bias: 6 floats or NULL. ROWS and NV are
 * compile-time constants at every call site. */
static inline __attribute__((always_inline)) void ukr(int64_t kc, const float *a, const float *b,
                                                       float *c, int64_t ldc, const int ROWS,
                                                       const int NV, int flags,
                                                       const float *bias, const float *z,
                                                       int act, float lo, float hi) {
    __m256 c0a, c0b, c1a, c1b, c2a, c2b, c3a, c3b, c4a, c4b, c5a, c5b;
    c0a = c0b = c1a = c1b = c2a = c2b = _mm256_setzero_ps();
    c3a = c3b = c4a = c4b = c5a = c5b = _mm256_setzero_ps();
    if (flags & UK_FIRST) {
        if (bias) {
#define BI(r) \
    if (ROWS > r) c##r##a = c##r##b = _mm256_broadcast_ss(bias + r);
            BI(0) BI(1) BI(2) BI(3) BI(4) BI(5)
#undef BI
        }
    } else {
#define LD(r)                                                            \
    if (ROWS > r) {                                                      \
        c##r##a = _mm256_loadu_ps(c + r * ldc);                          \
        if (NV == 2) c##r##b = _mm256_loadu_ps(c + r * ldc + 8);         \
    }
        LD(0) LD(1) LD(2) LD(3) LD(4) LD(5)
#undef LD
    }
    if ((flags & UK_LAST) && z) {
        /* the sum tile is read after the K loop; it is often out of cache (written layers ago) */
#define PZ(r)                                                            \
    if (ROWS > r) {                                                      \
        _mm_prefetch((const char *)(z + r * ldc), _MM_HINT_T0);          \
        _mm_prefetch((const char *)(z + r * ldc + 8 * NV - 1), _MM_HINT_T0); \
    }
        PZ(0) PZ(1) PZ(2) PZ(3) PZ(4) PZ(5)
#undef PZ
    }
    for (int64_t k = 0; k < kc; k++) {
        /* weights stream from L3 for large layers; the hardware prefetcher alone lags */
        _mm_prefetch((const char *)(a + PF_DIST), _MM_HINT_T0);
        __m256 b0 = _mm256_load_ps(b), b1 = NV == 2 ? _mm256_load_ps(b + 8) : b0, t;
#define FM(r)                                                            \
    if (ROWS > r) {                                                      \
        t = _mm256_broadcast_ss(a + r);                                  \
        c##r##a = _mm256_fmadd_ps(t, b0, c##r##a);                       \
        if (NV == 2) c##r##b = _mm256_fmadd_ps(t, b1, c##r##b);          \
    }
        FM(0) FM(1) FM(2) FM(3) FM(4) FM(5)
#undef FM
        a += MR;
        b += NR;
    }
    if ((flags & UK_LAST) && z) {
#define SU(r)                                                            \
    if (ROWS > r) {                                                      \
        c##r##a = _mm256_add_ps(c##r##a, _mm256_loadu_ps(z + r * ldc));  \
        if (NV == 2)                                                     \
            c##r##b = _mm256_add_ps(c##r##b, _mm256_loadu_ps(z + r * ldc + 8)); \
    }
        SU(0) SU(1) SU(2) SU(3) SU(4) SU(5)
#undef SU
    }
    if ((flags & UK_LAST) && act) {
        /* max(lo, x) / min(hi, x) return x when x is NaN: NaN propagates */
        __m256 vl = _mm256_set1_ps(lo), vh = _mm256_set1_ps(hi);
#define CL(r)                                                            \
    c##r##a = _mm256_min_ps(vh, _mm256_max_ps(vl, c##r##a));             \
    c##r##b = _mm256_min_ps(vh, _mm256_max_ps(vl, c##r##b));
        CL(0) CL(1) CL(2) CL(3) CL(4) CL(5)
#undef CL
    }
#define ST(r)                                                            \
    if (ROWS > r) {                                                      \
        _mm256_storeu_ps(c + r * ldc, c##r##a);                          \
        if (NV == 2) _mm256_storeu_ps(c + r * ldc + 8, c##r##b);         \
    }
    ST(0) ST(1) ST(2) ST(3) ST(4) ST(5)
#undef ST
}

/* rows x 16 tile, rows in [1, 6], stored straight into C. A selective build (FRT_SELECTIVE)
 * keeps three row counts for the tails instead of five: rows below 6 run as sub-tiles of 4, 2
 * and 1 rows (row r of a sub-tile starting at r0 reads lane r0 + r of the 6-wide weight panel,
 * bias[r0 + r] and writes C row r0 + r). Each output row accumulates the same products in the
 * same order either way, so the results are bit-identical (ctest selective.tile_rows_avx2). */
#ifdef FRT_SELECTIVE
static void ukr_rows(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                     int64_t rows, int flags, const float *bias, const float *z, int act, float lo,
                     float hi) {
    if (rows >= MR) {
        ukr(kc, a, b, c, ldc, 6, 2, flags, bias, z, act, lo, hi);
        return;
    }
    for (int64_t r0 = 0; r0 < rows;) {
        const float *br = bias ? bias + r0 : NULL, *zr = z ? z + r0 * ldc : NULL;
        int64_t left = rows - r0, n = left >= 4 ? 4 : left >= 2 ? 2 : 1;
        /* only the sub-tiles the trace saw are compiled (FRT_CONV_T_*, conv.h); the driver
           refuses a run needing another (conv_gemm.c) */
        if (n == 4) {
            if (TAIL_BUILT(FRT_CONV_T_R4))
                ukr(kc, a + r0, b, c + r0 * ldc, ldc, 4, 2, flags, br, zr, act, lo, hi);
        } else if (n == 2) {
            if (TAIL_BUILT(FRT_CONV_T_R2))
                ukr(kc, a + r0, b, c + r0 * ldc, ldc, 2, 2, flags, br, zr, act, lo, hi);
        } else if (TAIL_BUILT(FRT_CONV_T_R1)) {
            ukr(kc, a + r0, b, c + r0 * ldc, ldc, 1, 2, flags, br, zr, act, lo, hi);
        }
        r0 += n;
    }
}
#else
static void ukr_rows(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                     int64_t rows, int flags, const float *bias, const float *z, int act, float lo,
                     float hi) {
    switch (rows) {
    case 6: ukr(kc, a, b, c, ldc, 6, 2, flags, bias, z, act, lo, hi); break;
    case 5: ukr(kc, a, b, c, ldc, 5, 2, flags, bias, z, act, lo, hi); break;
    case 4: ukr(kc, a, b, c, ldc, 4, 2, flags, bias, z, act, lo, hi); break;
    case 3: ukr(kc, a, b, c, ldc, 3, 2, flags, bias, z, act, lo, hi); break;
    case 2: ukr(kc, a, b, c, ldc, 2, 2, flags, bias, z, act, lo, hi); break;
    default: ukr(kc, a, b, c, ldc, 1, 2, flags, bias, z, act, lo, hi); break;
    }
}
#endif

/* A tile of rows x cols (rows <= 6, cols < 16) through a 6 x 16 buffer. */
static void ukr_edge(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                     int64_t rows, int64_t cols, int flags, const float *bias, const float *z,
                     int act, float lo, float hi) {
    _Alignas(32) float t[MR * NR] = {0}, tz[MR * NR] = {0};
    if (!(flags & UK_FIRST))
        for (int64_t r = 0; r < rows; r++)
            for (int64_t j = 0; j < cols; j++) t[r * NR + j] = c[r * ldc + j];
    if (z && (flags & UK_LAST))
        for (int64_t r = 0; r < rows; r++)
            for (int64_t j = 0; j < cols; j++) tz[r * NR + j] = z[r * ldc + j];
    const float *zt = z ? tz : NULL;
    if (cols <= 8) {
        if (TAIL_BUILT(FRT_CONV_T_E8)) ukr(kc, a, b, t, NR, 6, 1, flags, bias, zt, act, lo, hi);
    } else if (TAIL_BUILT(FRT_CONV_T_E16)) {
        ukr(kc, a, b, t, NR, 6, 2, flags, bias, zt, act, lo, hi);
    }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < cols; j++) c[r * ldc + j] = t[r * NR + j];
}

/* One column of a tile: c[r * ldc] for r < rows, from the B panel column at b (stride 16 per
 * step). The weights of step k are lanes 0-5 of a vector load at a + 6k (lanes 6-7 belong to the
 * next step and are ignored; the packed weights carry 8 floats of slack for the last load). */
static void ukr_col(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                    int64_t rows, int flags, const float *bias, const float *z, int act, float lo,
                    float hi) {
    _Alignas(32) float t[8] = {0};
    if (flags & UK_FIRST) {
        if (bias)
            for (int64_t r = 0; r < rows; r++) t[r] = bias[r];
    } else {
        for (int64_t r = 0; r < rows; r++) t[r] = c[r * ldc];
    }
    __m256 s0 = _mm256_load_ps(t), s1 = _mm256_setzero_ps(), s2 = s1, s3 = s1;
    int64_t k = 0;
    for (; k + 4 <= kc; k += 4) {
        const float *ak = a + 6 * k, *bk = b + 16 * k;
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(ak), _mm256_broadcast_ss(bk), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(ak + 6), _mm256_broadcast_ss(bk + 16), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(ak + 12), _mm256_broadcast_ss(bk + 32), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(ak + 18), _mm256_broadcast_ss(bk + 48), s3);
    }
    for (; k < kc; k++)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + 6 * k), _mm256_broadcast_ss(b + 16 * k), s0);
    s0 = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    if ((flags & UK_LAST) && z) {
        _Alignas(32) float tz[8] = {0};
        for (int64_t r = 0; r < rows; r++) tz[r] = z[r * ldc];
        s0 = _mm256_add_ps(s0, _mm256_load_ps(tz));
    }
    if ((flags & UK_LAST) && act)
        s0 = _mm256_min_ps(_mm256_set1_ps(hi), _mm256_max_ps(_mm256_set1_ps(lo), s0));
    _mm256_store_ps(t, s0);
    for (int64_t r = 0; r < rows; r++) c[r * ldc] = t[r];
}

/* ---------------------------------------------------------------------------------------------- */
/* Packing the col block                                                                          */
/* ---------------------------------------------------------------------------------------------- */

/* Panel layout of one K row: position q of the block lives at bk[(q / NR) * ps + q % NR], where
 * bk = block + kk*NR and ps = kc*NR (the panel stride). */

static inline void put_zero(float *bk, int64_t ps, int64_t q, int64_t len) {
    while (len > 0) {
        int64_t off = q & (NR - 1), n = NR - off < len ? NR - off : len;
        float *d = bk + (q / NR) * ps + off;
        if (n == NR) {
            _mm256_store_ps(d, _mm256_setzero_ps());
            _mm256_store_ps(d + 8, _mm256_setzero_ps());
        } else {
            memset(d, 0, (size_t)n * sizeof(float));
        }
        q += n;
        len -= n;
    }
}

static inline __m256 evens(__m256 v0, __m256 v1) { /* v0[0,2,4,6], v1[0,2,4,6] */
    __m256 e = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* Lanes l of [0, 8) with lo <= base + l < hi. */
static inline __m256i lanes_in(int64_t base, int64_t lo, int64_t hi) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i v = _mm256_add_epi32(lane, _mm256_set1_epi32((int32_t)base));
    return _mm256_and_si256(_mm256_cmpgt_epi32(v, _mm256_set1_epi32((int32_t)lo - 1)),
                            _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)hi), v));
}

/* row + c with integer arithmetic: the address may lie outside the row (c < 0 or past its end);
 * only lanes a mask keeps are accessed. */
static inline __m256 mload(const float *row, int64_t c, __m256i m) {
    const float *a = (const float *)((uintptr_t)row + (uintptr_t)(c * (int64_t)sizeof(float)));
    return _mm256_maskload_ps(a, m);
}

/* Positions [q, q+len) of one K row (one output row segment of the block) take
 * xr[c0 + i*s], i in [0, len): zero where the column leaves [0, W) and everywhere when xr is
 * NULL (the input row is padding). Full in-bounds chunks of 16 are plain loads and aligned
 * stores; partial chunks blend into the chunk under a lane mask. Columns go through 32-bit lanes:
 * the caller guarantees |c0| + len*s and W fit (FRT_CONV_COL_LIMIT, see frt_conv_gemm_run). */
static inline void seg_write(float *bk, int64_t ps, int64_t q, int64_t len, const float *xr,
                             int64_t c0, int64_t W, int64_t s) {
    while (len > 0) {
        int64_t off = q & (NR - 1), n = NR - off < len ? NR - off : len;
        float *d = bk + (q / NR) * ps; /* the chunk: 16 aligned floats */
        int64_t cb = c0 - off * s;     /* column of chunk lane 0 */
        /* the fast path loads columns [cb, cb + 16*s): 16 (s = 1) or 32 (s = 2) */
        if (n == NR && xr && s <= 2 && cb >= 0 && cb + 16 * s <= W) {
            if (s == 1) {
                _mm256_store_ps(d, _mm256_loadu_ps(xr + cb));
                _mm256_store_ps(d + 8, _mm256_loadu_ps(xr + cb + 8));
            } else {
                _mm256_store_ps(d, evens(_mm256_loadu_ps(xr + cb), _mm256_loadu_ps(xr + cb + 8)));
                _mm256_store_ps(d + 8, evens(_mm256_loadu_ps(xr + cb + 16),
                                             _mm256_loadu_ps(xr + cb + 24)));
            }
        } else if (s <= 2) {
            for (int64_t l0 = 0; l0 < NR; l0 += 8) {
                if (l0 + 8 <= off || l0 >= off + n) continue;
                __m256i run = lanes_in(l0, off, off + n);
                __m256 v = _mm256_setzero_ps();
                if (xr && s == 1) {
                    int64_t c = cb + l0;
                    v = mload(xr, c, _mm256_and_si256(run, lanes_in(c, 0, W)));
                } else if (xr) {
                    int64_t c = cb + 2 * l0;
                    v = evens(mload(xr, c, lanes_in(c, 0, W)),
                              mload(xr, c + 8, lanes_in(c + 8, 0, W)));
                }
                float *dw = d + l0;
                _mm256_store_ps(dw,
                                _mm256_blendv_ps(_mm256_load_ps(dw), v, _mm256_castsi256_ps(run)));
            }
        } else {
            for (int64_t i = 0; i < n; i++) {
                int64_t c = c0 + i * s;
                d[off + i] = xr && c >= 0 && c < W ? xr[c] : 0.0f;
            }
        }
        q += n;
        len -= n;
        c0 += n * s;
    }
}


/* Packs the K block [k0, k0 + kcur) x positions [n0, n0 + ncur) into t->blk. */
void frt_conv_pack_block_avx2(const frt_conv_gemm_ctx *t) {
    const frt_conv_params *p = t->p;
    const frt_conv_geom *g = &t->g;
    int64_t ps = t->kcur * NR, HW = g->H * g->W, khw = p->kh * p->kw;
    int64_t oh_first = t->n0 / g->OW, ow_first = t->n0 % g->OW;
    /* The block reads, in every input channel, elements [pf_lo, pf_hi) of the channel plane
     * (from its first needed element to its last, row-major). At the first K row of channel ci
     * the span of channel ci + pf_ahead is prefetched: the input is often out of L2 (written by
     * an earlier layer) and the short row runs here defeat the hardware prefetcher. */
    int64_t last = t->n0 + t->ncur - 1, oh_last = last / g->OW, ow_last = last % g->OW;
    int64_t pf_lo = (oh_first * p->sh - g->pt) * g->W + ow_first * p->sw - g->pl;
    int64_t pf_hi = (oh_last * p->sh - g->pt + (p->kh - 1) * p->dh) * g->W + ow_last * p->sw -
                    g->pl + (p->kw - 1) * p->dw + 1;
    if (pf_lo < 0) pf_lo = 0;
    if (pf_hi > HW) pf_hi = HW;
    int64_t pf_ahead = (PF_CHAN_ROWS + khw - 1) / khw;
    for (int64_t ci = t->k0 / khw; ci < t->k0 / khw + pf_ahead && ci < p->Cg; ci++) {
        const char *pc = (const char *)(t->xg + ci * t->cs); /* the first channels of the block */
        for (int64_t e = pf_lo; e < pf_hi; e += 16) _mm_prefetch(pc + e * 4, _MM_HINT_T0);
    }
    for (int64_t kk = 0; kk < t->kcur; kk++) {
        int64_t k = t->k0 + kk;
        int64_t ci = k / khw, ky = (k % khw) / p->kw, kx = k % p->kw;
        float *bk = t->blk + kk * NR;
        const float *xc = t->xg + ci * t->cs;
        if (k % khw == 0 && ci + pf_ahead < p->Cg) {
            const char *pc = (const char *)(xc + pf_ahead * t->cs);
            for (int64_t e = pf_lo; e < pf_hi; e += 16) _mm_prefetch(pc + e * 4, _MM_HINT_T0);
        }
        int64_t oh = oh_first, ow = ow_first, q = 0;
        while (q < t->ncur) {
            int64_t len = g->OW - ow < t->ncur - q ? g->OW - ow : t->ncur - q;
            int64_t ih = oh * p->sh - g->pt + ky * p->dh;
            const float *xr = ih >= 0 && ih < g->H ? xc + ih * g->W : NULL;
            seg_write(bk, ps, q, len, xr, ow * p->sw - g->pl + kx * p->dw, g->W, p->sw);
            q += len;
            ow = 0;
            oh++;
        }
        if (t->npan * NR > t->ncur) put_zero(bk, ps, t->ncur, t->npan * NR - t->ncur);
    }
}

/* One MR x NR tile: weight panel mp times col panel j of the packed block. */
static inline void compute_tile(const frt_conv_gemm_ctx *t, int64_t mp, int64_t j) {
    const frt_conv_params *p = t->p;
    const float *a = t->wk + mp * t->kcur * MR;
    const float *b = t->blk + j * t->kcur * NR;
    int64_t rows = p->Mg - mp * MR < MR ? p->Mg - mp * MR : MR;
    int64_t cols = t->ncur - j * NR < NR ? t->ncur - j * NR : NR;
    int64_t off = mp * MR * t->npos + t->n0 + j * NR;
    float *c = t->yg + off;
    const float *z = t->zg ? t->zg + off : NULL;
    _Alignas(32) float bias6[MR] = {0};
    const float *bias = NULL;
    if (t->bias && (t->flags & UK_FIRST)) {
        for (int64_t r = 0; r < rows; r++) bias6[r] = t->bias[mp * MR + r];
        bias = bias6;
    }
    if (rows == MR && cols == NR)
        ukr(t->kcur, a, b, c, t->npos, 6, 2, t->flags, bias, z, p->act, p->lo, p->hi);
    else if (cols == NR)
        ukr_rows(t->kcur, a, b, c, t->npos, rows, t->flags, bias, z, p->act, p->lo, p->hi);
    else if (cols <= COL_TAIL && TAIL_BUILT(FRT_CONV_T_COL))
        for (int64_t i = 0; i < cols; i++)
            ukr_col(t->kcur, a, b + i, c + i, t->npos, rows, t->flags, bias, z ? z + i : NULL,
                    p->act, p->lo, p->hi);
    else if (cols > COL_TAIL && TAIL_BUILT(FRT_CONV_T_E8 | FRT_CONV_T_E16))
        ukr_edge(t->kcur, a, b, c, t->npos, rows, cols, t->flags, bias, z, p->act, p->lo, p->hi);
}

/* Weight panels [mp0, mp1) against every col panel of the packed block: weights outer (each
 * weight micro-panel stays in L1 while the col block streams from L2), or, when all the weights
 * of the K block fit in L1 (jouter), col panels outer. */
void frt_conv_compute_avx2(const frt_conv_gemm_ctx *t, int64_t mp0, int64_t mp1) {
    if (t->jouter) {
        for (int64_t j = 0; j < t->npan; j++)
            for (int64_t mp = mp0; mp < mp1; mp++) compute_tile(t, mp, j);
    } else {
        for (int64_t mp = mp0; mp < mp1; mp++)
            for (int64_t j = 0; j < t->npan; j++) compute_tile(t, mp, j);
    }
}
