/* The blocked depthwise loop (blkdw.h), written once over the vector vocabulary of
 * x86/vec_avx2.h (8 lanes) / x86/vec_avx512.h (16 lanes), which the including file
 * (blkdw_{avx2,avx512}.c) includes first, and then defines BLKDW_NAME (the function) and
 * BLKDW_T (outputs of a row per register block).
 *
 * The block size b is VW: one vector holds one pixel of one channel block, so every tap is one
 * FMA on full vectors. Per channel block and output row, the columns whose K taps all lie inside
 * the row ([ow_lo, ow_hi)) run in register blocks of BLKDW_T outputs (K, S, T compile-time
 * constants: each input vector is loaded once per kernel row and feeds every output it touches),
 * the columns at the left/right edges one output at a time with bounds checks. Kernel rows
 * outside [0, H) are skipped. K in {3, 5} with S in {1, 2} only (frt_blkdw_get). */
#include <math.h>
#include <stdbool.h>

#include "ops/blkdw.h"

#define BLKDW_INLINE static inline __attribute__((always_inline))


/* e^x for x <= 88 (clamped below at -104): Cody-Waite split of ln2 and a degree-6 polynomial;
 * NaN stays NaN. */
BLKDW_INLINE V bd_exp(V x) {
    x = vmax(vset(-104.0f), x);
    x = vmin(vset(88.0f), x);
    V n = vround(vmul(x, vset(1.44269504088896341f)));
    V r = vfnma(n, vset(0.693359375f), x);
    r = vfnma(n, vset(-2.12194440e-4f), r);
    V q = vfma(vset(0.0013822003f), r, vset(0.008362863f));
    q = vfma(q, r, vset(0.0416678f));
    q = vfma(q, r, vset(0.16666579f));
    q = vfma(q, r, vset(0.49999997f));
    V p = vfma(q, vmul(r, r), vadd(r, vset(1.0f)));
    return vscale(p, n);
}

/* 1 / d estimate: 14 bits (AVX-512) / 12 bits (AVX2) */
#if VW == 16
BLKDW_INLINE V bd_rcp(V d) { return _mm512_rcp14_ps(d); }
#else
BLKDW_INLINE V bd_rcp(V d) { return _mm256_rcp_ps(d); }
#endif

BLKDW_INLINE V bd_act(V v, int act, V lo, V hi) {
    const V zero = vset(0.0f);
    switch (act) {
    case FRT_BLKDW_RELU: return vmax(zero, v);
    case FRT_BLKDW_CLIP: return vmin(hi, vmax(lo, v));
    case FRT_BLKDW_SILU: {
#if VW == 8
        return vsilu(v); /* vec_avx2.h */
#else
        /* v / d with d = 1 + e^-v in [1, 1.7e38]: the reciprocal estimate and one Newton step */
        V d = vadd(vset(1.0f), bd_exp(vsub(zero, v)));
        V r = bd_rcp(d);
        r = vfma(r, vfnma(d, r, vset(1.0f)), r);
        V y = vmul(v, r);
        return vsel(veq(v, vset(-INFINITY)), vset(NAN), y);
#endif
    }
    case FRT_BLKDW_HARDSWISH:
        return vmul(v, vmax(zero, vmin(vset(1.0f), vfma(v, vset(1.0f / 6.0f), vset(0.5f)))));
    }
    return v;
}

/* T outputs of row oh at columns ow.. (all taps inside the row): xr points at column
 * ow S - pl of input row ih0 + i0 (ih0 = oh S - pt); kernel rows [i0, i1) are inside the image.
 * wv: the K K weight vectors. */
BLKDW_INLINE void bd_tile(const float *xr, int64_t rs, int64_t i0, int64_t i1, const V *wv,
                          V bv, float *y, const int K, const int S, const int T, int act, V lo,
                          V hi) {
    V acc[16];
#pragma GCC unroll 16
    for (int t = 0; t < T; t++) acc[t] = bv;
    for (int64_t i = i0; i < i1; i++) {
        const float *xi = xr + (i - i0) * rs;
#pragma GCC unroll 7
        for (int j = 0; j < K; j++) {
            V w = wv[i * K + j];
#pragma GCC unroll 16
            for (int t = 0; t < T; t++) acc[t] = vfma(vload(xi + (t * S + j) * VW), w, acc[t]);
        }
    }
#pragma GCC unroll 16
    for (int t = 0; t < T; t++) vstore(y + t * VW, bd_act(acc[t], act, lo, hi));
}

/* The same with all K kernel rows inside the image (the rows unrolled too). */
BLKDW_INLINE void bd_tile_full(const float *xr, int64_t rs, const V *wv, V bv, float *y,
                               const int K, const int S, const int T, int act, V lo, V hi) {
    V acc[16];
#pragma GCC unroll 16
    for (int t = 0; t < T; t++) acc[t] = bv;
#pragma GCC unroll 7
    for (int i = 0; i < K; i++) {
        const float *xi = xr + i * rs;
#pragma GCC unroll 7
        for (int j = 0; j < K; j++) {
#pragma GCC unroll 16
            for (int t = 0; t < T; t++)
                acc[t] = vfma(vload(xi + (t * S + j) * VW), wv[i * K + j], acc[t]);
        }
    }
#pragma GCC unroll 16
    for (int t = 0; t < T; t++) vstore(y + t * VW, bd_act(acc[t], act, lo, hi));
}

#if VW == 8
/* AVX2, K x K (3 or 5) with left pad K / 2: T outputs of a row, kernel rows [i0, i1) inside the
 * image; xr: input row ih0 + i0 at column c0 = ow S (ow the tile's first output), rows rs floats
 * apart. Input column c0 - K / 2 + c feeds output t through tap j = c - t S; the first lskip
 * columns (left of the image: the row's first tile) and the last rskip (past its right edge: the
 * last tile) are left out. Per kernel row its K weights are loaded into registers and every
 * input vector once, feeding the outputs it touches: T accumulators + K weights + the input fit
 * the 16 ymm registers and every address is the row pointer plus a constant. (The generic tiles
 * made GCC keep all the weights live, spill accumulators through the stack and load per-column
 * offsets, and the edge columns took a bounds-checked loop each.) Per output the same chain of
 * FMAs as the generic loop (rows, then columns, in order, the taps outside the image left out),
 * so the same bits. */
BLKDW_INLINE void bd_tile7(const float *xr, int64_t rs, int64_t i0, int64_t i1, const V *wv,
                           V bv, float *y, int lskip, int rskip, const int K, const int S,
                           const int T, int act, V lo, V hi) {
    const int NC = (T - 1) * S + K; /* input columns of the tile */
    V acc[8];
#pragma GCC unroll 8
    for (int t = 0; t < T; t++) acc[t] = bv;
    for (int64_t i = i0; i < i1; i++) {
        const float *xi = xr + (i - i0) * rs - (K / 2) * VW; /* column c0 - K / 2 */
        V w[5];
#pragma GCC unroll 5
        for (int j = 0; j < K; j++) w[j] = wv[i * K + j];
#pragma GCC unroll 40
        for (int c = 0; c < NC; c++) {
            if (c < lskip || c >= NC - rskip) continue;
            V xv = vload(xi + c * VW);
#pragma GCC unroll 8
            for (int t = 0; t < T; t++) {
                int j = c - t * S;
                if (j >= 0 && j < K) acc[t] = vfma(xv, w[j], acc[t]);
            }
        }
    }
#pragma GCC unroll 8
    for (int t = 0; t < T; t++) vstore(y + t * VW, bd_act(acc[t], act, lo, hi));
}
#endif

/* one output at column ow with column bounds checks; xr as for bd_tile at column 0 of the row
 * (c0 = ow S - pl may be outside [0, W)) */
BLKDW_INLINE void bd_edge(const float *xr, int64_t rs, int64_t c0, int64_t W, int64_t i0,
                          int64_t i1, const V *wv, V bv, float *y, const int K, int act, V lo,
                          V hi) {
    V acc = bv;
    for (int64_t i = i0; i < i1; i++) {
        const float *xi = xr + (i - i0) * rs;
#pragma GCC unroll 7
        for (int j = 0; j < K; j++)
            if (c0 + j >= 0 && c0 + j < W) acc = vfma(vload(xi + (c0 + j) * VW), wv[i * K + j], acc);
    }
    vstore(y, bd_act(acc, act, lo, hi));
}

/* n < BLKDW_T interior outputs in one register block */
#define BD_REM(N)                                                                               \
    case N:                                                                                     \
        if (full) bd_tile_full(xc, rs, wv, bv, yc, K, S, N, act, lo, hi);                       \
        else bd_tile(xc, rs, i0, i1, wv, bv, yc, K, S, N, act, lo, hi);                         \
        break;

BLKDW_INLINE void bd_block(const float *xk, const float *wk, V bv, float *yk,
                           const frt_blkdw_geom *g, const int K, const int S) {
    const V lo = vset(g->lo), hi = vset(g->hi);
    const int act = g->act;
    V wv[49];
#pragma GCC unroll 49
    for (int t = 0; t < K * K; t++) wv[t] = vload(wk + t * VW);
    int64_t H = g->H, W = g->W, OW = g->OW, rs = W * VW;
    /* columns whose taps all lie in [0, W) */
    int64_t ow_lo = (g->pl + S - 1) / S, ow_hi = W - K + g->pl >= 0 ? (W - K + g->pl) / S + 1 : 0;
    if (ow_lo > OW) ow_lo = OW;
    if (ow_hi > OW) ow_hi = OW;
    if (ow_hi < ow_lo) ow_hi = ow_lo;
#if VW == 8
    /* left pad K / 2 and OW a multiple of 7 (mobilenet / efficientnet widths 7 << k): rows in
       tiles of 7 with the edges inside the first and the last; the last output's taps pass the
       image's right edge by `over` <= K / 2 columns */
    int64_t over = (OW - 1) * S + K - 1 - g->pl - (W - 1);
    bool rows7 = frt_blkdw_row_tiles(g);
#endif
    for (int64_t oh = 0; oh < g->OH; oh++) {
        int64_t ih0 = oh * S - g->pt;
        int64_t i0 = ih0 < 0 ? -ih0 : 0, i1 = H - ih0 < K ? H - ih0 : K;
        if (i1 < i0) i1 = i0;
        bool full = i0 == 0 && i1 == K;
        float *yr = yk + oh * OW * VW;
        /* input row ih0 + i0 (inside the image when i1 > i0) */
        const float *xr = i1 > i0 ? xk + (ih0 + i0) * rs : xk;
#if VW == 8
        if (rows7 && i1 > i0) {
            /* the first tile leaves out the K / 2 columns left of the image, the last the rk
               (0..K / 2) past its right edge; every skip count is a compile-time constant in
               its instance (a runtime count cost a test per column: 3x3 stride 2 ran at
               40-45 GFLOP/s with it), the tiles between take the instance without skips */
            int rk = over > 0 ? (int)over : 0;
#define BD_T7(OW0, LS, RS)                                                                     \
    bd_tile7(xr + (OW0) * S * VW, rs, i0, i1, wv, bv, yr + (OW0) * VW, LS, RS, K, S, 7, act, lo, hi)
#define BD_T7_RK(OW0, LS)                                                                      \
    do {                                                                                        \
        if (rk == 0) BD_T7(OW0, LS, 0);                                                         \
        else if (rk == 1 || K < 5) BD_T7(OW0, LS, 1);                                           \
        else BD_T7(OW0, LS, 2);                                                                 \
    } while (0)
            if (OW == 7) {
                BD_T7_RK(0, K / 2);
            } else {
                BD_T7(0, K / 2, 0);
                int64_t ow = 7;
                for (; ow + 7 < OW; ow += 7) BD_T7(ow, 0, 0);
                BD_T7_RK(ow, 0);
            }
#undef BD_T7_RK
#undef BD_T7
            continue;
        }
#endif
        int64_t ow = 0;
        for (; ow < ow_lo; ow++)
            bd_edge(xr, rs, ow * S - g->pl, W, i0, i1, wv, bv, yr + ow * VW, K, act, lo, hi);
        if (full)
            for (; ow + BLKDW_T <= ow_hi; ow += BLKDW_T)
                bd_tile_full(xr + (ow * S - g->pl) * VW, rs, wv, bv, yr + ow * VW, K, S,
                             BLKDW_T, act, lo, hi);
        else
            for (; ow + BLKDW_T <= ow_hi; ow += BLKDW_T)
                bd_tile(xr + (ow * S - g->pl) * VW, rs, i0, i1, wv, bv, yr + ow * VW, K, S,
                        BLKDW_T, act, lo, hi);
        if (ow < ow_hi) {
            const float *xc = xr + (ow * S - g->pl) * VW;
            float *yc = yr + ow * VW;
            switch (ow_hi - ow) {
                BD_REM(1)
                BD_REM(2)
                BD_REM(3)
#if BLKDW_T > 4
                BD_REM(4)
                BD_REM(5)
                BD_REM(6)
                BD_REM(7)
#endif
            }
            ow = ow_hi;
        }
        for (; ow < OW; ow++)
            bd_edge(xr, rs, ow * S - g->pl, W, i0, i1, wv, bv, yr + ow * VW, K, act, lo, hi);
    }
}

#define BLKDW_CASE(KK, SS)                                                                      \
    static void bd_run_##KK##_##SS(const float *xk, const float *wk, V bv, float *yk,           \
                                   const frt_blkdw_geom *g) {                                   \
        bd_block(xk, wk, bv, yk, g, KK, SS);                                                    \
    }
BLKDW_CASE(3, 1)
BLKDW_CASE(3, 2)
BLKDW_CASE(5, 1)
BLKDW_CASE(5, 2)

void BLKDW_NAME(const float *x, const float *w, const float *bias, float *y,
                const frt_blkdw_geom *g, int64_t b) {
    void (*run)(const float *, const float *, V, float *, const frt_blkdw_geom *) =
        g->K == 3 && g->S == 1   ? bd_run_3_1
        : g->K == 3 && g->S == 2 ? bd_run_3_2
        : g->K == 5 && g->S == 1 ? bd_run_5_1
        : g->K == 5 && g->S == 2 ? bd_run_5_2
                                 : NULL;
    if (!run || b != VW) return; /* not a geometry of this loop: frt_blkdw_get never picks it */
    int64_t cb = (g->C + VW - 1) / VW, osz = g->OH * g->OW * VW;
    for (int64_t k = 0; k < cb; k++) {
        float *yk = y + k * osz;
        run(x + k * g->H * g->W * VW, w + k * g->K * g->K * VW, vload(bias + k * VW), yk, g);
        int64_t valid = g->C - k * VW;
        /* padding lanes: zero weights and bias, but the input's padding lanes may hold anything */
        if (valid < VW)
            for (int64_t s = 0; s < g->OH * g->OW; s++)
                for (int64_t l = valid; l < VW; l++) yk[s * VW + l] = 0.0f;
    }
}
