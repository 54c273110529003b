/* The stem convolution loop (few plain input channels -> blocked, see ../blkstem.h), written once
 * over the vector vocabulary of x86/vec_avx2.h (VW = 8 lanes, nChw8c) / x86/vec_avx512.h (VW =
 * 16, nChw16c), which the including file (blkstem_{avx2,avx512}.c) includes first; it then
 * defines BLKSTEM_NAME (the function) and BLKSTEM_T (most outputs of a row per register tile,
 * <= 8). The block b of the layout is VW.
 * Register tile: NB = 2 output channel blocks (2 VW channels) x T <= BLKSTEM_T consecutive
 * outputs of one row = 2 T accumulators, plus the 2 weight vectors of a tap and the broadcast
 * input. Per tap (c, i, j) the two weight vectors are loaded once and each of the T input values
 * x[c][ih][(ow0 + t) S - pl + j] is broadcast once and feeds both blocks: 2 T FMAs for T + 2
 * loads. An odd last block runs alone (NB = 1). Kernel rows above / below the image read a row
 * of zeros (the contract's zero taps); the columns whose taps all lie inside the row run in
 * tiles, the few at the left / right edges read a zero-padded copy of their columns. Per output
 * the same chain as the portable loop (c, then i, then j, zero taps included), so the same
 * bits. */
#include <immintrin.h>

#include <stdbool.h>

#include "ops/blkstem.h"

#define ST_INLINE static inline __attribute__((always_inline))

enum { ST_TMAX = BLKSTEM_T };

/* a row of zeros for kernel rows outside the image: a tile reads (T - 1) S + K <= 21 floats */
static const float g_zero[32] __attribute__((aligned(64)));

ST_INLINE V st_act(V v, int act, const float *lohi) {
    const V zero = vset(0.0f);
    switch (act) {
    case FRT_BLKSTEM_RELU: return vmax(zero, v);
    case FRT_BLKSTEM_CLIP: return vmin(vset(lohi[1]), vmax(vset(lohi[0]), v));
    case FRT_BLKSTEM_SILU: return vsilu(v);
    case FRT_BLKSTEM_HARDSWISH: {
        V t = vfma(v, vset(1.0f / 6.0f), vset(0.5f));
        t = vmin(vset(1.0f), vmax(zero, t));
        return vmul(v, t);
    }
    }
    return v;
}

#define ST_ROW_TAPS(i)                                                                      \
    do {                                                                                    \
        const float *r = rb[c * K + i] + off;                                               \
        const float *wi = wb + (c * K + i) * K * VW;                                        \
        _Pragma("GCC unroll 7") for (int j = 0; j < K; j++) {                               \
            const V w0 = vload(wi + j * VW);                                                \
            const V w1 = NB == 2 ? vload(wi + ws + j * VW) : w0;                            \
            /* an opaque pointer per tap: at stride 2 taps j and j + 2 read the same input  \
               columns, and a compiler keeping those broadcasts for the next taps runs out  \
               of registers (it spilled 10 of them: 65 instead of 90 GFLOP/s) */            \
            const float *rj = r + j;                                                        \
            __asm__("" : "+r"(rj));                                                         \
            _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) {                           \
                const V xv = vset(rj[t * S]);                                               \
                a0[t] = vfma(xv, w0, a0[t]);                                                \
                if (NB == 2) a1[t] = vfma(xv, w1, a1[t]);                                   \
            }                                                                               \
        }                                                                                   \
    } while (0)

/* T outputs of NB blocks at one row. rb[c K + i] + off: the tile's first input column (in the
   image, a zero-padded copy or a row of zeros) of channel c and kernel row i; wb: the
   first block's weights [C][K][K][8], the second block's at wb + ws; y: the first block's first
   output, the second's at y + ys. */
ST_INLINE void st_tile(const float *const *rb, int64_t off, int64_t C, const float *wb,
                       int64_t ws, const float *bias, float *y, int64_t ys, int act, const float *lohi,
                       const int K, const int S, const int NB, const int T) {
    V a0[ST_TMAX], a1[ST_TMAX];
    const V b0 = vload(bias), b1 = NB == 2 ? vload(bias + VW) : b0;
    _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) {
        a0[t] = b0;
        a1[t] = b1;
    }
    /* kernel rows unrolled for K = 3 only (7 x 7 unrolled made the code 2.5x larger and was
       no faster) */
    for (int64_t c = 0; c < C; c++) {
        if (K == 3) {
            ST_ROW_TAPS(0);
            ST_ROW_TAPS(1);
            ST_ROW_TAPS(2);
        } else {
            for (int i = 0; i < K; i++) ST_ROW_TAPS(i);
        }
    }
    _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) {
        vstore(y + t * VW, st_act(a0[t], act, lohi));
        if (NB == 2) vstore(y + ys + t * VW, st_act(a1[t], act, lohi));
    }
}

#define ST_CASE(TT)                                                                             \
    case TT:                                                                                    \
        if (NB2) st_tile(rp, off, C, wb, ws, bb, yt, ys, act, lohi, K, S, 2, TT);              \
        else st_tile(rp, off, C, wb, ws, bb, yt, ys, act, lohi, K, S, 1, TT);                  \
        break;

/* the input columns a tile of T outputs reads: (T - 1) S + K <= ST_SPAN */
enum { ST_SPAN = (ST_TMAX - 1) * 2 + 7, ST_ROWS = FRT_BLKSTEM_CMAX * 7 };

/* A tile whose taps reach past the left or right edge of the image: its input columns
   [c0, c0 + span) of every row rb[r] (NULL: outside the image) copied into buf with zeros
   outside the image, and the row pointers rp into it. */
static void st_edge(const float *const *rb, int64_t rows, int64_t c0, int64_t span, int64_t W,
                    float *buf, const float **rp) {
    for (int64_t r = 0; r < rows; r++) {
        float *d = buf + r * span;
        for (int64_t q = 0; q < span; q++) {
            int64_t iw = c0 + q;
            d[q] = rb[r] && iw >= 0 && iw < W ? rb[r][iw] : 0.0f;
        }
        rp[r] = d;
    }
}

/* Rows [r0, r1) with kernel size K and stride S constants. Each output row is split into
   near-equal tiles of at most ST_TMAX outputs (112 as 20 x 5 + 3 x 4); a tile whose taps all lie
   inside the row reads the input rows in place, one reaching past an edge reads a zero-padded
   copy (the first and the last tile's built once per output row, any other per block pair: only
   in images a few tiles wide). Kernel rows outside the image read a row of zeros. */
ST_INLINE void st_rows(const float *x, const float *w, const float *bias, float *y,
                       const frt_blkstem_geom *g, int64_t r0, int64_t r1, const int K,
                       const int S, const int CC) {
    const int64_t C = CC ? CC : g->C, H = g->H, W = g->W, OH = g->OH, OW = g->OW, pl = g->pl;
    const int64_t mbn = (g->M + VW - 1) / VW, ws = C * K * K * VW, ys = OH * OW * VW;
    const int64_t rows = C * K;
    const int act = g->act;
    const float lohi[2] = {g->lo, g->hi};
    int64_t nt = (OW + ST_TMAX - 1) / ST_TMAX, base = OW / nt, rem = OW % nt;
    const float *rb[ST_ROWS], *rz[ST_ROWS], *re[3][ST_ROWS];
    float ebuf[3][ST_ROWS * ST_SPAN];
    for (int64_t oh = r0; oh < r1; oh++) {
        bool row_in = true;
        for (int64_t c = 0; c < C; c++)
            for (int i = 0; i < K; i++) {
                int64_t ih = oh * S - g->pt + i;
                rb[c * K + i] = ih >= 0 && ih < H ? x + (c * H + ih) * W : NULL;
                row_in = row_in && rb[c * K + i];
            }
        /* the first and the last tile, when they reach past an edge */
        int64_t tl = base + (0 < rem), ll = nt - 1, tr = base + (ll < rem);
        int64_t orl = OW - tr, spl = (tl - 1) * S + K, spr = (tr - 1) * S + K;
        bool el = pl > 0 || spl - pl > W;
        bool er = ll > 0 && (orl * S - pl < 0 || orl * S - pl + spr > W);
        if (el) st_edge(rb, rows, -pl, spl, W, ebuf[0], re[0]);
        if (er) st_edge(rb, rows, orl * S - pl, spr, W, ebuf[1], re[1]);
        for (int64_t mb = 0; mb < mbn; mb += 2) {
            const int NB2 = mb + 1 < mbn;
            const float *wb = w + mb * ws, *bb = bias + mb * VW;
            float *yr = y + (mb * OH + oh) * OW * VW;
            int64_t ow0 = 0;
            for (int64_t k = 0; k < nt; k++) {
                int T = (int)(base + (k < rem));
                int64_t off = ow0 * S - pl;
                const float *const *rp = rb;
                if (k == 0 && el) rp = re[0], off = 0;
                else if (k == ll && er) rp = re[1], off = 0;
                else if (off < 0 || off + (T - 1) * S + K > W) {
                    st_edge(rb, rows, off, (T - 1) * S + K, W, ebuf[2], re[2]);
                    rp = re[2], off = 0;
                } else if (!row_in) {
                    /* rows outside the image: a zero row instead of NULL */
                    for (int64_t r = 0; r < rows; r++) rz[r] = rb[r] ? rb[r] + off : g_zero;
                    rp = rz, off = 0;
                }
                float *yt = yr + ow0 * VW;
                switch (T) {
                    ST_CASE(1)
                    ST_CASE(2)
                    ST_CASE(3)
                    ST_CASE(4)
                    ST_CASE(5)
#if BLKSTEM_T > 5
                    ST_CASE(6)
                    ST_CASE(7)
                    ST_CASE(8)
#endif
                }
                ow0 += T;
            }
        }
    }
}

#define ST_ROWS(NAME, KK, SS)                                                                   \
    static void NAME(const float *x, const float *w, const float *bias, float *y,               \
                     const frt_blkstem_geom *g, int64_t r0, int64_t r1) {                       \
        st_rows(x, w, bias, y, g, r0, r1, KK, SS, 0);                                           \
    }
ST_ROWS(st_k3s1, 3, 1)
ST_ROWS(st_k3s2, 3, 2)
ST_ROWS(st_k5s1, 5, 1)
ST_ROWS(st_k5s2, 5, 2)
ST_ROWS(st_k7s1, 7, 1)
ST_ROWS(st_k7s2, 7, 2)

void BLKSTEM_NAME(const float *x, const float *w, const float *bias, float *y,
                  const frt_blkstem_geom *g, int64_t r0, int64_t r1) {
    /* frt_blkstem_get never picks it then */
    if (!frt_blkstem_simd_covers(g) || g->B != VW) return;
    frt_blkstem_fn f = g->KH == 3 ? (g->S == 1 ? st_k3s1 : st_k3s2)
                       : g->KH == 5 ? (g->S == 1 ? st_k5s1 : st_k5s2)
                                    : (g->S == 1 ? st_k7s1 : st_k7s2);
    f(x, w, bias, y, g, r0, r1);
}
