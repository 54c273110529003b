/* Inner loops of the conv packed-weight GEMM path with AVX-512 (driver: conv_gemm.c).
 *
 * Register tile: 16 output channels x 16 positions, one zmm accumulator per channel (16 of the
 * 32 zmm registers); each K step loads one 16-position col row and broadcasts the 16 weights of
 * the panel row (embedded broadcasts). Accumulators start from the bias on the first K block (or
 * from Y on later ones), take the sum input z and the clamp on the last, and are stored once per
 * K block. Channel tails use the same kernel with fewer rows (ROWS is a compile-time constant);
 * position tails use masked loads and stores (the col panel is zero past ncur).
 * The col block is packed by frt_conv_pack_block_avx2 (16-wide panels, the same layout).
 */
#include <immintrin.h>

#include "ops/conv.h"

#define MR 16
#define NR 16
/* Software prefetch distance (floats) in the packed weight stream: 32 K steps. */
#define PF_DIST 512

static inline __attribute__((always_inline)) void tile(int64_t kc, const float *a,
                                                        const float *b, float *c, int64_t ldc,
                                                        const int ROWS, __mmask16 cm, int flags,
                                                        const float *bias, const float *z,
                                                        int act, float lo, float hi) {
    __m512 acc[MR];
#pragma GCC unroll 16
    for (int r = 0; r < ROWS; r++) {
        if (flags & FRT_CONV_UK_FIRST)
            acc[r] = bias ? _mm512_set1_ps(bias[r]) : _mm512_setzero_ps();
        else
            acc[r] = _mm512_maskz_loadu_ps(cm, c + r * ldc);
    }
    if ((flags & FRT_CONV_UK_LAST) && z) {
        /* the sum tile is read after the K loop; it is often out of cache */
#pragma GCC unroll 16
        for (int r = 0; r < ROWS; r++) _mm_prefetch((const char *)(z + r * ldc), _MM_HINT_T0);
    }
    for (int64_t k = 0; k < kc; k++) {
        _mm_prefetch((const char *)(a + PF_DIST), _MM_HINT_T0);
        __m512 b0 = _mm512_load_ps(b);
#pragma GCC unroll 16
        for (int r = 0; r < ROWS; r++) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[r]), b0, acc[r]);
        a += MR;
        b += NR;
    }
    if ((flags & FRT_CONV_UK_LAST) && z) {
#pragma GCC unroll 16
        for (int r = 0; r < ROWS; r++)
            acc[r] = _mm512_add_ps(acc[r], _mm512_maskz_loadu_ps(cm, z + r * ldc));
    }
    if ((flags & FRT_CONV_UK_LAST) && act) {
        /* max(lo, x) / min(hi, x) return x when x is NaN: NaN propagates */
        __m512 vl = _mm512_set1_ps(lo), vh = _mm512_set1_ps(hi);
#pragma GCC unroll 16
        for (int r = 0; r < ROWS; r++) acc[r] = _mm512_min_ps(vh, _mm512_max_ps(vl, acc[r]));
    }
#pragma GCC unroll 16
    for (int r = 0; r < ROWS; r++) _mm512_mask_storeu_ps(c + r * ldc, cm, acc[r]);
}

#define TILE_CASE(n)                                                                         \
    case n: tile(kc, a, b, c, ldc, n, cm, flags, bias, z, act, lo, hi); break;

/* rows x cols tile, rows in [1, 16], cols in [1, 16]. A selective build (FRT_SELECTIVE) keeps
 * five row counts instead of sixteen (about 9 KB less code): rows below 16 run as sub-tiles of
 * 8, 4, 2 and 1 rows. Each output row accumulates the same products in the same order either
 * way, so the results are bit-identical; only channel tails reload the col panel per sub-tile. */
#ifdef FRT_SELECTIVE
static void tile_any(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                     int64_t rows, int64_t cols, int flags, const float *bias, const float *z,
                     int act, float lo, float hi) {
    __mmask16 cm = (__mmask16)(cols >= NR ? 0xffffu : (1u << cols) - 1u);
    if (rows >= MR) {
        tile(kc, a, b, c, ldc, MR, cm, flags, bias, z, act, lo, hi);
        return;
    }
    for (int64_t r0 = 0; r0 < rows;) {
        const float *br = bias ? bias + r0 : NULL, *zr = z ? z + r0 * ldc : NULL;
        int64_t left = rows - r0;
        if (left >= 8) tile(kc, a + r0, b, c + r0 * ldc, ldc, 8, cm, flags, br, zr, act, lo, hi);
        else if (left >= 4) tile(kc, a + r0, b, c + r0 * ldc, ldc, 4, cm, flags, br, zr, act, lo, hi);
        else if (left >= 2) tile(kc, a + r0, b, c + r0 * ldc, ldc, 2, cm, flags, br, zr, act, lo, hi);
        else tile(kc, a + r0, b, c + r0 * ldc, ldc, 1, cm, flags, br, zr, act, lo, hi);
        r0 += left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
    }
}
#else
/* rows x cols tile, rows in [1, 16], cols in [1, 16]. */
static void tile_any(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                     int64_t rows, int64_t cols, int flags, const float *bias, const float *z,
                     int act, float lo, float hi) {
    __mmask16 cm = (__mmask16)(cols >= NR ? 0xffffu : (1u << cols) - 1u);
    switch (rows) {
        TILE_CASE(1) TILE_CASE(2) TILE_CASE(3) TILE_CASE(4) TILE_CASE(5) TILE_CASE(6)
        TILE_CASE(7) TILE_CASE(8) TILE_CASE(9) TILE_CASE(10) TILE_CASE(11) TILE_CASE(12)
        TILE_CASE(13) TILE_CASE(14) TILE_CASE(15)
    default: tile(kc, a, b, c, ldc, 16, cm, flags, bias, z, act, lo, hi); break;
    }
}
#endif

/* One MR x NR tile: weight panel mp times col panel j of the packed block. */
static inline void compute_tile(const frt_conv_gemm_ctx *t, int64_t mp, int64_t j) {
    const frt_conv_params *p = t->p;
    const float *a = t->wk + mp * t->kcur * MR;
    const float *b = t->blk + j * t->kcur * NR;
    int64_t rows = p->Mg - mp * MR < MR ? p->Mg - mp * MR : MR;
    int64_t cols = t->ncur - j * NR < NR ? t->ncur - j * NR : NR;
    int64_t off = mp * MR * t->npos + t->n0 + j * NR;
    const float *bias = t->bias && (t->flags & FRT_CONV_UK_FIRST) ? t->bias + mp * MR : NULL;
    if (rows == MR && cols == NR)
        tile(t->kcur, a, b, t->yg + off, t->npos, MR, 0xffff, t->flags, bias,
             t->zg ? t->zg + off : NULL, p->act, p->lo, p->hi);
    else
        tile_any(t->kcur, a, b, t->yg + off, t->npos, rows, cols, t->flags, bias,
                 t->zg ? t->zg + off : NULL, p->act, p->lo, p->hi);
}

/* Weight panels [mp0, mp1) against every col panel of the packed block: weights outer (a weight
 * panel stays in L1 while the col block streams from L2), or col panels outer when all the
 * weights of the K block fit in L1 (jouter). */
void frt_conv_compute_avx512(const frt_conv_gemm_ctx *t, int64_t mp0, int64_t mp1) {
    if (t->jouter) {
        for (int64_t j = 0; j < t->npan; j++)
            for (int64_t mp = mp0; mp < mp1; mp++) compute_tile(t, mp, j);
    } else {
        for (int64_t mp = mp0; mp < mp1; mp++)
            for (int64_t j = 0; j < t->npan; j++) compute_tile(t, mp, j);
    }
}

/* One output position (1x1 conv on a 1x1 input: the squeeze-and-excitation FCs of mobile
 * networks): y[m] = bias[m] + sum_k W[m][k] x[k] (+ z[m]), clamp when p->act, for the Mg channels
 * of one group, streaming the packed panels (16 channels x K) once: each K step is one 16-wide
 * weight row times a broadcast input, four accumulators for the FMA latency. */
void frt_conv_gemv_avx512(const frt_conv_params *p, const float *wg, const float *x,
                          const float *bias, const float *z, float *y) {
    const int64_t Kg = p->Kg, kc = p->kc, mp = p->mpanels;
    for (int64_t pi = 0; pi < mp; pi++) {
        const int64_t m0 = pi * MR, nm = p->Mg - m0 < MR ? p->Mg - m0 : MR;
        const __mmask16 mk = (__mmask16)(nm == MR ? 0xFFFFu : (1u << nm) - 1u);
        __m512 a0 = bias ? _mm512_maskz_loadu_ps(mk, bias + m0) : _mm512_setzero_ps();
        __m512 a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
        for (int64_t k0 = 0; k0 < Kg; k0 += kc) {
            const int64_t kcur = Kg - k0 < kc ? Kg - k0 : kc;
            const float *w = wg + (k0 * mp + pi * kcur) * MR;
            const float *xk = x + k0;
            int64_t k = 0;
            for (; k + 4 <= kcur; k += 4) {
                a0 = _mm512_fmadd_ps(_mm512_loadu_ps(w + k * MR), _mm512_set1_ps(xk[k]), a0);
                a1 = _mm512_fmadd_ps(_mm512_loadu_ps(w + (k + 1) * MR), _mm512_set1_ps(xk[k + 1]),
                                     a1);
                a2 = _mm512_fmadd_ps(_mm512_loadu_ps(w + (k + 2) * MR), _mm512_set1_ps(xk[k + 2]),
                                     a2);
                a3 = _mm512_fmadd_ps(_mm512_loadu_ps(w + (k + 3) * MR), _mm512_set1_ps(xk[k + 3]),
                                     a3);
            }
            for (; k < kcur; k++)
                a0 = _mm512_fmadd_ps(_mm512_loadu_ps(w + k * MR), _mm512_set1_ps(xk[k]), a0);
        }
        __m512 acc = _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
        if (z) acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps(mk, z + m0));
        if (p->act)
            acc = _mm512_min_ps(_mm512_set1_ps(p->hi), _mm512_max_ps(_mm512_set1_ps(p->lo), acc));
        _mm512_mask_storeu_ps(y + m0, mk, acc);
    }
}
