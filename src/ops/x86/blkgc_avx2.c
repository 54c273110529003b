/* AVX2/FMA loop of the grouped convolution with narrow groups on nChw8c (see ../blkgc.h): one
 * output block (8 channels of one group, or 8 / G whole groups of 2 or 4) is one ymm vector per
 * pixel. An output row runs in register tiles of T <= GC_TMAX consecutive outputs (the row split
 * into near-equal tiles: 56 as 12 + 4 x 11, 28 as 10 + 9 + 9, 14 as 7 + 7). Per
 * kernel row i and input channel c of the group: the K = 3 weight vectors w[c][i][0..2] are
 * loaded once, and every input column the tile touches is broadcast once and feeds each output
 * it reaches (stride 1: up to 3 outputs, stride 2: 1 or 2), so a tile of T outputs costs 3 T
 * FMAs for T + 2 (stride 1) or 2 T + 1 (stride 2) broadcasts and 3 weight loads. Columns left of
 * the image (the first tile, left pad 1) and past its right edge (the last tile, up to 2) are
 * left out, kernel rows outside the image skipped. Per output the same chain of fused
 * multiply-adds as the portable loop (rows, then channels, then columns, in order). */
#include <immintrin.h>

#include "ops/blkgc.h"

#define GC_INLINE static inline __attribute__((always_inline))

/* 12 accumulators + 3 weights + the broadcast input: the 16 ymm registers */
enum { GC_TMAX = 12 };

/* T outputs of one row. xr: the group's first input block at input row ih0 + i0 (ih0 = oh S - pt)
 * and column ow0 S - pl (may be -1: that column is then skipped, lskip = 1); rs = W 8, bs = H W 8
 * floats; kernel rows [i0, i1) lie inside the image; the last rskip (<= 2) of the tile's
 * (T - 1) S + 3 input columns lie past the right edge. wm: the output block's weights
 * [3][G][3][8]. */
GC_INLINE void gc_tile(const float *xr, int64_t rs, int64_t bs, int64_t i0, int64_t i1,
                       const float *wm, int64_t G, __m256 bv, float *y, int lskip, int rskip,
                       int act, float lo, float hi, const int S, const int T) {
    const int NC = (T - 1) * S + 3;
    __m256 acc[GC_TMAX];
    _Pragma("GCC unroll 12") for (int t = 0; t < T; t++) acc[t] = bv;
    for (int64_t i = i0; i < i1; i++) {
        const float *xi = xr + (i - i0) * rs, *wi = wm + i * G * 24;
        for (int64_t c = 0; c < G; c++) {
            const float *xc = xi + (c >> 3) * bs + (c & 7), *wc = wi + c * 24;
            const __m256 w0 = _mm256_loadu_ps(wc), w1 = _mm256_loadu_ps(wc + 8),
                         w2 = _mm256_loadu_ps(wc + 16);
            _Pragma("GCC unroll 32") for (int col = 0; col < NC; col++) {
                if (col < 1 && col < lskip) continue;
                if (col >= NC - 2 && col >= NC - rskip) continue;
                const __m256 xv = _mm256_broadcast_ss(xc + col * 8);
                _Pragma("GCC unroll 12") for (int t = 0; t < T; t++) {
                    const int j = col - t * S;
                    if (j == 0) acc[t] = _mm256_fmadd_ps(xv, w0, acc[t]);
                    else if (j == 1) acc[t] = _mm256_fmadd_ps(xv, w1, acc[t]);
                    else if (j == 2) acc[t] = _mm256_fmadd_ps(xv, w2, acc[t]);
                }
            }
        }
    }
    const __m256 zero = _mm256_setzero_ps(), vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    _Pragma("GCC unroll 12") for (int t = 0; t < T; t++) {
        __m256 v = acc[t];
        if (act == FRT_BLKGC_RELU) v = _mm256_max_ps(zero, v);
        else if (act == FRT_BLKGC_CLIP) v = _mm256_min_ps(vhi, _mm256_max_ps(vlo, v));
        _mm256_storeu_ps(y + t * 8, v);
    }
}

/* The same for groups of GN = 2 or 4 channels (8 / GN groups in the output block, which reads
 * its own input block only): per channel c of the groups, each input column is loaded as a whole
 * vector and permuted within its 128-bit halves so that lane l holds channel (l / GN) GN + c of
 * the block; the columns loop inside the channels, as the chain's order wants. */
GC_INLINE __m256i gc_narrow_idx(int gn, int c) {
    /* in-lane index (p / gn) gn + c for p = l % 4 */
    return gn == 4 ? _mm256_set1_epi32(c) : _mm256_setr_epi32(c, c, 2 + c, 2 + c, c, c, 2 + c, 2 + c);
}

GC_INLINE void gc_tile_narrow(const float *xr, int64_t rs, int64_t i0, int64_t i1,
                              const float *wm, const int GN, __m256 bv, float *y, int lskip,
                              int rskip, int act, float lo, float hi, const int S, const int T) {
    const int NC = (T - 1) * S + 3;
    __m256 acc[GC_TMAX];
    _Pragma("GCC unroll 12") for (int t = 0; t < T; t++) acc[t] = bv;
    for (int64_t i = i0; i < i1; i++) {
        const float *xi = xr + (i - i0) * rs, *wi = wm + i * GN * 24;
        _Pragma("GCC unroll 1") for (int c = 0; c < GN; c++) { /* (unrolled: 4x the code) */
            const __m256i idx = gc_narrow_idx(GN, c);
            const float *wc = wi + c * 24;
            const __m256 w0 = _mm256_loadu_ps(wc), w1 = _mm256_loadu_ps(wc + 8),
                         w2 = _mm256_loadu_ps(wc + 16);
            _Pragma("GCC unroll 32") for (int col = 0; col < NC; col++) {
                if (col < 1 && col < lskip) continue;
                if (col >= NC - 2 && col >= NC - rskip) continue;
                const __m256 xv = _mm256_permutevar_ps(_mm256_loadu_ps(xi + col * 8), idx);
                _Pragma("GCC unroll 12") for (int t = 0; t < T; t++) {
                    const int j = col - t * S;
                    if (j == 0) acc[t] = _mm256_fmadd_ps(xv, w0, acc[t]);
                    else if (j == 1) acc[t] = _mm256_fmadd_ps(xv, w1, acc[t]);
                    else if (j == 2) acc[t] = _mm256_fmadd_ps(xv, w2, acc[t]);
                }
            }
        }
    }
    const __m256 zero = _mm256_setzero_ps(), vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    _Pragma("GCC unroll 12") for (int t = 0; t < T; t++) {
        __m256 v = acc[t];
        if (act == FRT_BLKGC_RELU) v = _mm256_max_ps(zero, v);
        else if (act == FRT_BLKGC_CLIP) v = _mm256_min_ps(vhi, _mm256_max_ps(vlo, v));
        _mm256_storeu_ps(y + t * 8, v);
    }
}

/* One output at column ow (any position of its taps): the same chain with bounds checks. */
static void gc_one(const float *xr, int64_t rs, int64_t bs, int64_t i0, int64_t i1,
                   const float *wm, const frt_blkgc_geom *g, __m256 bv, float *y, int64_t ow) {
    __m256 acc = bv;
    int64_t c0 = ow * g->S - g->pl;
    for (int64_t i = i0; i < i1; i++)
        for (int64_t c = 0; c < g->G; c++)
            for (int64_t j = 0; j < 3; j++) {
                if (c0 + j < 0 || c0 + j >= g->W) continue;
                const float *xp = xr + (i - i0) * rs + (c0 + j) * 8;
                __m256 xv = g->G >= 8 ? _mm256_broadcast_ss(xp + (c >> 3) * bs + (c & 7))
                                      : _mm256_permutevar_ps(_mm256_loadu_ps(xp),
                                                             gc_narrow_idx((int)g->G, (int)c));
                acc = _mm256_fmadd_ps(xv, _mm256_loadu_ps(wm + ((i * g->G + c) * 3 + j) * 8),
                                      acc);
            }
    if (g->act == FRT_BLKGC_RELU) acc = _mm256_max_ps(_mm256_setzero_ps(), acc);
    else if (g->act == FRT_BLKGC_CLIP)
        acc = _mm256_min_ps(_mm256_set1_ps(g->hi), _mm256_max_ps(_mm256_set1_ps(g->lo), acc));
    _mm256_storeu_ps(y, acc);
}

#define GC_CASE(TT)                                                                             \
    case TT:                                                                                    \
        if (GN) gc_tile_narrow(xt, rs, i0, i1, wm, GN, bv, yt, lskip, rskip, act, lo, hi, S, TT); \
        else gc_tile(xt, rs, bs, i0, i1, wm, G, bv, yt, lskip, rskip, act, lo, hi, S, TT);      \
        break;

/* Output block m, stride S and narrow group width GN (2, 4; 0: G a multiple of 8) constants in
   each instance. */
GC_INLINE void gc_block(const float *x, const float *w, const float *bias, float *y,
                        const frt_blkgc_geom *g, int64_t m, const int S, const int GN) {
    const int64_t G = g->G, H = g->H, W = g->W, OH = g->OH, OW = g->OW;
    const int64_t rs = W * 8, bs = H * W * 8;
    /* the group's first input block (G >= 8), or the block's own (G < 8) */
    const float *xg = x + (GN ? m : (m * 8 / G) * (G / 8)) * bs, *wm = w + m * 9 * G * 8;
    float *ym = y + m * OH * OW * 8;
    const __m256 bv = _mm256_loadu_ps(bias + m * 8);
    const int act = g->act;
    const float lo = g->lo, hi = g->hi;
    int64_t nt = (OW + GC_TMAX - 1) / GC_TMAX, base = OW / nt, rem = OW % nt;
    for (int64_t oh = 0; oh < OH; oh++) {
        int64_t ih0 = oh * S - g->pt;
        int64_t i0 = ih0 < 0 ? -ih0 : 0, i1 = H - ih0 < 3 ? H - ih0 : 3;
        if (i1 < i0) i1 = i0;
        const float *xr = xg + (i1 > i0 ? (ih0 + i0) * rs : 0);
        float *yr = ym + oh * OW * 8;
        int64_t ow0 = 0;
        for (int64_t k = 0; k < nt; k++) {
            int T = (int)(base + (k < rem));
            int64_t cl = ow0 * S - g->pl, cr = (ow0 + T - 1) * S - g->pl + 2;
            int lskip = cl < 0 ? (int)-cl : 0;
            int64_t over = cr - (W - 1);
            int rskip = over > 0 ? (over > 3 ? 3 : (int)over) : 0;
            if (lskip > 1 || rskip > 2 || (T - 1) * S + 3 - lskip - rskip < 1) {
                for (int t = 0; t < T; t++)
                    gc_one(xr, rs, bs, i0, i1, wm, g, bv, yr + (ow0 + t) * 8, ow0 + t);
            } else {
                const float *xt = xr + cl * 8;
                float *yt = yr + ow0 * 8;
                switch (T) {
                    GC_CASE(1)
                    GC_CASE(2)
                    GC_CASE(3)
                    GC_CASE(4)
                    GC_CASE(5)
                    GC_CASE(6)
                    GC_CASE(7)
                    GC_CASE(8)
                    GC_CASE(9)
                    GC_CASE(10)
                    GC_CASE(11)
                    GC_CASE(12)
                }
            }
            ow0 += T;
        }
    }
}

#define GC_BLOCKS(NAME, SS, GG)                                                                 \
    static void NAME(const float *x, const float *w, const float *bias, float *y,               \
                     const frt_blkgc_geom *g, int64_t m0, int64_t m1) {                         \
        for (int64_t m = m0; m < m1; m++) gc_block(x, w, bias, y, g, m, SS, GG);                \
    }
GC_BLOCKS(gc_blocks_s1, 1, 0)
GC_BLOCKS(gc_blocks_s2, 2, 0)
GC_BLOCKS(gc_blocks_s1_g4, 1, 4)
GC_BLOCKS(gc_blocks_s2_g4, 2, 4)
GC_BLOCKS(gc_blocks_s1_g2, 1, 2)
GC_BLOCKS(gc_blocks_s2_g2, 2, 2)

void frt_blkgc_avx2(const float *x, const float *w, const float *bias, float *y,
                    const frt_blkgc_geom *g, int64_t m0, int64_t m1) {
    if (!frt_blkgc_simd_covers(g)) return; /* frt_blkgc_get never picks it then */
    if (g->G == 4) (g->S == 1 ? gc_blocks_s1_g4 : gc_blocks_s2_g4)(x, w, bias, y, g, m0, m1);
    else if (g->G == 2) (g->S == 1 ? gc_blocks_s1_g2 : gc_blocks_s2_g2)(x, w, bias, y, g, m0, m1);
    else (g->S == 1 ? gc_blocks_s1 : gc_blocks_s2)(x, w, bias, y, g, m0, m1);
}
