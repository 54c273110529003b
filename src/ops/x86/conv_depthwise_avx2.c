/* Depthwise convolution with AVX2/FMA: fast paths for 3x3, dilation 1, stride 1 or 2 (same in
 * both axes); every other shape goes through the portable plane kernel.
 *
 * Two layouts of the same arithmetic, chosen per call by plane width:
 *
 * Direct (wide rows): each output row is computed 8 outputs per vector straight from the (up to)
 * three input rows it needs, two output rows at a time where all their input rows exist. Vectors
 * whose window crosses the left or right edge of the input use masked loads (zeros outside the
 * row; the masks are computed once per call); input rows outside the plane are skipped.
 *   stride 1: out[ow..ow+7] = sum_ky,kx w[ky][kx] * x[ih+ky][ow - pl + kx + (0..7)]
 *   stride 2: the 16 inputs under 8 outputs are split into even and odd columns:
 *             kx = 0 -> evens of x[c..c+15], kx = 1 -> odds, kx = 2 -> evens of x[c+2..c+17],
 *             c = 2*ow - pl.
 *   When OW is not a multiple of 8 the last vector of a row overlaps the previous one
 *   (recomputing the same values); rows narrower than 8 store a full vector whose extra lanes
 *   the next row overwrites, and the plane's last row uses a masked store.
 *
 * Blocked (narrow rows, OW*stride <= 28, multiplier 1): eight channels at a time are transposed
 * into a zero-padded channel-interleaved buffer, each output is 9 FMAs on full vectors, and the
 * result is transposed back (see dw3x3_block8). Leftover channels (M % 8) use the direct path.
 *
 * Channel-blocked path for 3x3 and 5x5 kernels, 8 channels per call: conv_dw_impl.h.
 *
 * Only inner loops live here; the driver (threads, the FusedConv sum, other shapes) is
 * conv_depthwise.c.
 */
#include <immintrin.h>
#include <stdint.h>

#include "ops/conv.h"
#include "vec_avx2.h"

#include "conv_dw_impl.h"

static inline __m256 evens(__m256 v0, __m256 v1) {
    __m256 e = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
}
static inline __m256 odds(__m256 v0, __m256 v1) {
    __m256 o = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(3, 1, 3, 1));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* Masks of the loads of one vector position (see load_cols): stride 1 loads columns c, c+1,
 * c+2; stride 2 loads c, c+8, c+2, c+10. */
typedef struct dw_masks {
    __m256i m[4];
} dw_masks;

static inline __m256i cols_mask(int64_t c, int64_t W) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i idx = _mm256_add_epi32(lane, _mm256_set1_epi32((int32_t)c));
    return _mm256_and_si256(_mm256_cmpgt_epi32(idx, _mm256_set1_epi32(-1)),
                            _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)W), idx));
}

static void masks_for(dw_masks *mk, int64_t ow, int64_t pl, int64_t W, int s) {
    if (s == 1) {
        for (int k = 0; k < 3; k++) mk->m[k] = cols_mask(ow - pl + k, W);
        mk->m[3] = _mm256_setzero_si256();
    } else {
        static const int off[4] = {0, 8, 2, 10};
        for (int k = 0; k < 4; k++) mk->m[k] = cols_mask(2 * ow - pl + off[k], W);
    }
}

/* row + c with integer arithmetic: the address may lie outside the row when c < 0, and only
 * the lanes a mask keeps are accessed. */
static inline __m256 mload(const float *row, int64_t c, __m256i m) {
    const float *base = (const float *)((uintptr_t)row + (uintptr_t)(c * (int64_t)sizeof(float)));
    return _mm256_maskload_ps(base, m);
}

/* acc + sum_kx k_kx * (input row under the 8 outputs starting at ow); mk: masked loads. */
static inline __attribute__((always_inline)) __m256 row3(__m256 acc, const float *r, int64_t ow,
                                                          int64_t pl, int s, const dw_masks *mk,
                                                          __m256 k0, __m256 k1, __m256 k2) {
    if (s == 1) {
        int64_t c = ow - pl;
        if (!mk) {
            acc = _mm256_fmadd_ps(k0, _mm256_loadu_ps(r + c), acc);
            acc = _mm256_fmadd_ps(k1, _mm256_loadu_ps(r + c + 1), acc);
            return _mm256_fmadd_ps(k2, _mm256_loadu_ps(r + c + 2), acc);
        }
        acc = _mm256_fmadd_ps(k0, mload(r, c, mk->m[0]), acc);
        acc = _mm256_fmadd_ps(k1, mload(r, c + 1, mk->m[1]), acc);
        return _mm256_fmadd_ps(k2, mload(r, c + 2, mk->m[2]), acc);
    }
    int64_t c = 2 * ow - pl;
    __m256 v0, v1, v2, v3;
    if (!mk) {
        v0 = _mm256_loadu_ps(r + c);
        v1 = _mm256_loadu_ps(r + c + 8);
        v2 = _mm256_loadu_ps(r + c + 2);
        v3 = _mm256_loadu_ps(r + c + 10);
    } else {
        v0 = mload(r, c, mk->m[0]);
        v1 = mload(r, c + 8, mk->m[1]);
        v2 = mload(r, c + 2, mk->m[2]);
        v3 = mload(r, c + 10, mk->m[3]);
    }
    acc = _mm256_fmadd_ps(k0, evens(v0, v1), acc);
    acc = _mm256_fmadd_ps(k1, odds(v0, v1), acc);
    return _mm256_fmadd_ps(k2, evens(v2, v3), acc);
}

#define DW_MAXV 32 /* vector positions per row with precomputed masks (OW <= 256) */

/* Vector positions of an output row: ow = min(8v, max(OW, 8) - 8) for v < nv; edge[v] when the
 * window of that vector leaves [0, W) (masked loads with masks[v]). */
typedef struct dw_rowplan {
    int64_t nv;
    int64_t pl, W;
    int planned; /* edge and masks filled (nv <= DW_MAXV) */
    unsigned char edge[DW_MAXV];
    dw_masks masks[DW_MAXV];
} dw_rowplan;

static int64_t vec_ow(int64_t v, int64_t OW) {
    int64_t last = (OW < 8 ? 8 : OW) - 8;
    return 8 * v < last ? 8 * v : last;
}

static inline void store_row(float *yr, __m256 v, int64_t ow, int64_t OW, int last_row) {
    if (OW >= 8) {
        _mm256_storeu_ps(yr + ow, v);
    } else if (!last_row) {
        _mm256_storeu_ps(yr, v); /* lanes past OW are rewritten by the next row */
    } else {
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        _mm256_maskstore_ps(yr, _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)OW), lane), v);
    }
}

/* Vectors starting at ow with ow*s - pl >= 0 and ow*s - pl + span <= W read inside the row. */
static int is_edge(int64_t ow, int64_t pl, int64_t W, int s) {
    int64_t c = ow * s - pl, span = s == 1 ? 10 : 18;
    return c < 0 || c + span > W;
}

/* Returns 0 when OW is too wide to plan (masks are then computed per vector). */
static int dw_plan_rows(dw_rowplan *rp, int64_t OW, int64_t W, int64_t pl, int s) {
    rp->nv = (OW + 7) / 8;
    rp->pl = pl;
    rp->W = W;
    rp->planned = rp->nv <= DW_MAXV;
    if (!rp->planned) return 0;
    for (int64_t v = 0; v < rp->nv; v++) {
        int64_t ow = vec_ow(v, OW);
        rp->edge[v] = (unsigned char)is_edge(ow, pl, W, s);
        if (rp->edge[v]) masks_for(&rp->masks[v], ow, pl, W, s);
    }
    return 1;
}

/* One output row from input rows r0, r1, r2 (NULL: outside the plane, contributes nothing). */
static inline __attribute__((always_inline)) void dw3x3_row(
    const float *r0, const float *r1, const float *r2, float *yr, int64_t OW,
    const dw_rowplan *rp, int s, const __m256 *wv, __m256 vb, int act, __m256 vlo, __m256 vhi,
    int last_row) {
    const int64_t pl = rp->pl;
    for (int64_t v = 0; v < rp->nv; v++) {
        int64_t ow = vec_ow(v, OW);
        const dw_masks *mk = NULL;
        dw_masks tmp;
        if (rp->planned) {
            if (rp->edge[v]) mk = &rp->masks[v];
        } else if (is_edge(ow, pl, rp->W, s)) {
            masks_for(&tmp, ow, pl, rp->W, s);
            mk = &tmp;
        }
        __m256 a = vb, b = _mm256_setzero_ps(), c = _mm256_setzero_ps();
        if (mk) {
            if (r0) a = row3(a, r0, ow, pl, s, mk, wv[0], wv[1], wv[2]);
            if (r1) b = row3(b, r1, ow, pl, s, mk, wv[3], wv[4], wv[5]);
            if (r2) c = row3(c, r2, ow, pl, s, mk, wv[6], wv[7], wv[8]);
        } else {
            if (r0) a = row3(a, r0, ow, pl, s, NULL, wv[0], wv[1], wv[2]);
            if (r1) b = row3(b, r1, ow, pl, s, NULL, wv[3], wv[4], wv[5]);
            if (r2) c = row3(c, r2, ow, pl, s, NULL, wv[6], wv[7], wv[8]);
        }
        a = _mm256_add_ps(a, _mm256_add_ps(b, c));
        if (act) a = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a));
        store_row(yr, a, ow, OW, last_row);
    }
}

/* Output rows oh and oh+1 (y0, y1) from input rows r, r+W, ... (4 rows for stride 1, 5 for
 * stride 2), all inside the plane: the shared input rows are loaded once and the two rows give
 * independent dependency chains. */
static inline __attribute__((always_inline)) void dw3x3_row2(
    const float *r, int64_t W, float *y0, float *y1, int64_t OW, const dw_rowplan *rp, int s,
    const __m256 *wv, __m256 vb, int act, __m256 vlo, __m256 vhi, int last_row) {
    const int64_t pl = rp->pl;
    const float *r0 = r, *r1 = r + W, *r2 = r + 2 * W, *r3 = r + 3 * W, *r4 = r + 4 * W;
    const float *q0 = s == 1 ? r1 : r2, *q1 = s == 1 ? r2 : r3, *q2 = s == 1 ? r3 : r4;
    for (int64_t v = 0; v < rp->nv; v++) {
        int64_t ow = vec_ow(v, OW);
        const dw_masks *mk = NULL;
        dw_masks tmp;
        if (rp->planned) {
            if (rp->edge[v]) mk = &rp->masks[v];
        } else if (is_edge(ow, pl, rp->W, s)) {
            masks_for(&tmp, ow, pl, rp->W, s);
            mk = &tmp;
        }
        __m256 a0, b0, c0, a1, b1, c1;
        const __m256 z = _mm256_setzero_ps();
        if (mk) {
            a0 = row3(vb, r0, ow, pl, s, mk, wv[0], wv[1], wv[2]);
            b0 = row3(z, r1, ow, pl, s, mk, wv[3], wv[4], wv[5]);
            c0 = row3(z, r2, ow, pl, s, mk, wv[6], wv[7], wv[8]);
            a1 = row3(vb, q0, ow, pl, s, mk, wv[0], wv[1], wv[2]);
            b1 = row3(z, q1, ow, pl, s, mk, wv[3], wv[4], wv[5]);
            c1 = row3(z, q2, ow, pl, s, mk, wv[6], wv[7], wv[8]);
        } else {
            a0 = row3(vb, r0, ow, pl, s, NULL, wv[0], wv[1], wv[2]);
            b0 = row3(z, r1, ow, pl, s, NULL, wv[3], wv[4], wv[5]);
            c0 = row3(z, r2, ow, pl, s, NULL, wv[6], wv[7], wv[8]);
            a1 = row3(vb, q0, ow, pl, s, NULL, wv[0], wv[1], wv[2]);
            b1 = row3(z, q1, ow, pl, s, NULL, wv[3], wv[4], wv[5]);
            c1 = row3(z, q2, ow, pl, s, NULL, wv[6], wv[7], wv[8]);
        }
        a0 = _mm256_add_ps(a0, _mm256_add_ps(b0, c0));
        a1 = _mm256_add_ps(a1, _mm256_add_ps(b1, c1));
        if (act) {
            a0 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a0));
            a1 = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a1));
        }
        store_row(y0, a0, ow, OW, 0);
        store_row(y1, a1, ow, OW, last_row);
    }
}

/* One plane of a 3x3 dilation-1 depthwise conv with stride s (1 or 2). */
static void dw3x3_plane(const frt_conv_params *p, const frt_conv_geom *g, const dw_rowplan *rp,
                        const float *x, const float *w, float bias, float *y, int s) {
    __m256 wv[9];
    for (int i = 0; i < 9; i++) wv[i] = _mm256_set1_ps(w[i]);
    const __m256 vb = _mm256_set1_ps(bias);
    const __m256 vlo = _mm256_set1_ps(p->lo), vhi = _mm256_set1_ps(p->hi);
    const int64_t H = g->H, W = g->W, OW = g->OW, OH = g->OH;
    for (int64_t oh = 0; oh < OH;) {
        int64_t ih = oh * s - g->pt;
        float *yr = y + oh * OW;
        if (oh + 1 < OH && ih >= 0 && ih + 2 + s < H) {
            /* two rows, every input row inside the plane */
            int last = oh + 2 == OH;
            if (s == 1)
                dw3x3_row2(x + ih * W, W, yr, yr + OW, OW, rp, 1, wv, vb, p->act, vlo, vhi, last);
            else
                dw3x3_row2(x + ih * W, W, yr, yr + OW, OW, rp, 2, wv, vb, p->act, vlo, vhi, last);
            oh += 2;
            continue;
        }
        int last = oh + 1 == OH;
        const float *r[3];
        for (int k = 0; k < 3; k++) r[k] = ih + k >= 0 && ih + k < H ? x + (ih + k) * W : NULL;
        dw3x3_row(r[0], r[1], r[2], yr, OW, rp, s, wv, vb, p->act, vlo, vhi, last);
        oh++;
    }
}

/* ---- small planes: eight channels at a time, channel-interleaved ----
 * For planes of a few dozen to a few hundred outputs the per-row work above is mostly overhead.
 * Instead, eight channels (multiplier 1) are transposed into a zero-padded buffer
 * P[Hp][Wp][8] (lane = channel), every output is 9 FMAs on full vectors with no edges, and the
 * channel-interleaved result O[OH*OW][8] is transposed back into the eight output planes. */

#define DW_PBUF 6144 /* floats of P (24 KiB on the stack) */
#define DW_OBUF 4096 /* floats of O (16 KiB) */

/* r[j] lane i <- r[i] lane j */
static inline void transpose8(__m256 *r) {
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

static inline __m256i first_lanes(int64_t n) { /* lanes [0, n), 0 <= n <= 8 */
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)n), lane);
}

/* Output rows per band of dw3x3_block8 (0: the rows do not fit the buffers). */
static int64_t dw_block_band(const frt_conv_geom *g, int s) {
    int64_t Wp = (g->OW - 1) * s + 3;
    int64_t b = (DW_PBUF / (Wp * 8) - 3) / s + 1; /* (b-1)*s + 3 input rows fit P */
    if (DW_PBUF / (Wp * 8) < 3) return 0;
    int64_t bo = DW_OBUF / (g->OW * 8);
    if (bo < b) b = bo;
    return b < g->OH ? b : g->OH;
}

/* Channels c0..c0+7 of one image: input planes x8 + c*H*W, weights w8 + c*9, bias b8[c] (b8 may
 * be NULL), output planes y8 + c*OH*OW. Bands of `band` output rows. */
static void dw3x3_block8(const frt_conv_params *p, const frt_conv_geom *g, const float *x8,
                         const float *w8, const float *b8, float *y8, int s, int64_t band) {
    _Alignas(32) float P[DW_PBUF + 64];
    _Alignas(32) float O[DW_OBUF];
    const int64_t H = g->H, W = g->W, OH = g->OH, OW = g->OW, HW = H * W, OHW = OH * OW;
    const int64_t Wp = (OW - 1) * s + 3, pt = g->pt, pl = g->pl;
    const __m256 z = _mm256_setzero_ps();
    __m256 wv[9];
    for (int k = 0; k < 9; k++) {
        _Alignas(32) float t[8];
        for (int c = 0; c < 8; c++) t[c] = w8[c * 9 + k];
        wv[k] = _mm256_load_ps(t);
    }
    const __m256 vb = b8 ? _mm256_loadu_ps(b8) : z;
    const __m256 vlo = _mm256_set1_ps(p->lo), vhi = _mm256_set1_ps(p->hi);
    const int64_t r1 = Wp * 8, r2 = 2 * Wp * 8;
    for (int64_t oh0 = 0; oh0 < OH; oh0 += band) {
        const int64_t nb = OH - oh0 < band ? OH - oh0 : band;
        const int64_t rows = (nb - 1) * s + 3, ihs = oh0 * s - pt;
        for (int64_t i = 0; i < rows * Wp * 8; i += 8) _mm256_store_ps(P + i, z);
        /* P[r][iw + pl] = x[ihs + r][iw] for the columns the outputs reach */
        for (int64_t r = 0; r < rows; r++) {
            int64_t ih = ihs + r;
            if (ih < 0 || ih >= H) continue;
            float *prow = P + r * Wp * 8;
            for (int64_t iw0 = 0; iw0 < W && iw0 + pl < Wp; iw0 += 8) {
                int64_t n = W - iw0 < 8 ? W - iw0 : 8;
                if (n > Wp - pl - iw0) n = Wp - pl - iw0;
                __m256 v[8];
                const float *src = x8 + ih * W + iw0;
                if (n == 8) {
                    for (int c = 0; c < 8; c++) v[c] = _mm256_loadu_ps(src + c * HW);
                } else {
                    __m256i m = first_lanes(n);
                    for (int c = 0; c < 8; c++) v[c] = _mm256_maskload_ps(src + c * HW, m);
                }
                transpose8(v);
                /* all 8 columns: those past n are zeros (masked-off lanes) and land on padding
                 * or on the next row before it is written (P has 8 columns of slack) */
                float *d = prow + (iw0 + pl) * 8;
                _mm256_store_ps(d, v[0]);
                _mm256_store_ps(d + 8, v[1]);
                _mm256_store_ps(d + 16, v[2]);
                _mm256_store_ps(d + 24, v[3]);
                _mm256_store_ps(d + 32, v[4]);
                _mm256_store_ps(d + 40, v[5]);
                _mm256_store_ps(d + 48, v[6]);
                _mm256_store_ps(d + 56, v[7]);
            }
        }
        for (int64_t oh = 0; oh < nb; oh++) {
            const float *base = P + oh * s * Wp * 8;
            float *o = O + oh * OW * 8;
            for (int64_t ow = 0; ow < OW; ow++) {
                const float *q = base + ow * s * 8;
                __m256 a = _mm256_fmadd_ps(wv[0], _mm256_load_ps(q), vb);
                __m256 b = _mm256_mul_ps(wv[3], _mm256_load_ps(q + r1));
                __m256 c = _mm256_mul_ps(wv[6], _mm256_load_ps(q + r2));
                a = _mm256_fmadd_ps(wv[1], _mm256_load_ps(q + 8), a);
                b = _mm256_fmadd_ps(wv[4], _mm256_load_ps(q + r1 + 8), b);
                c = _mm256_fmadd_ps(wv[7], _mm256_load_ps(q + r2 + 8), c);
                a = _mm256_fmadd_ps(wv[2], _mm256_load_ps(q + 16), a);
                b = _mm256_fmadd_ps(wv[5], _mm256_load_ps(q + r1 + 16), b);
                c = _mm256_fmadd_ps(wv[8], _mm256_load_ps(q + r2 + 16), c);
                a = _mm256_add_ps(a, _mm256_add_ps(b, c));
                if (p->act) a = _mm256_min_ps(vhi, _mm256_max_ps(vlo, a));
                _mm256_store_ps(o + ow * 8, a);
            }
        }
        /* O[pos][c] -> y[c][pos] over the band's flattened output positions */
        const int64_t pe = (oh0 + nb) * OW;
        for (int64_t p0 = oh0 * OW; p0 < pe; p0 += 8) {
            int64_t n = pe - p0 < 8 ? pe - p0 : 8;
            const float *ob = O + (p0 - oh0 * OW) * 8;
            __m256 v[8];
            for (int j = 0; j < 8; j++) v[j] = j < n ? _mm256_load_ps(ob + j * 8) : z;
            transpose8(v);
            if (n == 8 || pe < OHW) { /* a short chunk's extra lanes: next band's positions */
                for (int c = 0; c < 8; c++) _mm256_storeu_ps(y8 + c * OHW + p0, v[c]);
            } else {
                __m256i m = first_lanes(n);
                for (int c = 0; c < 8; c++) _mm256_maskstore_ps(y8 + c * OHW + p0, m, v[c]);
            }
        }
    }
}

/* Plan of one run (in the driver's FRT_DW_PLAN_BYTES). */
typedef struct dw_plan {
    dw_rowplan rp;
} dw_plan;
_Static_assert(sizeof(dw_plan) <= FRT_DW_PLAN_BYTES, "FRT_DW_PLAN_BYTES too small");

int64_t frt_dw3x3_plan_avx2(void *plan, const frt_conv_geom *g, int s) {
    dw_plan *pl = plan;
    dw_plan_rows(&pl->rp, g->OW, g->W, g->pl, s);
    int64_t band = dw_block_band(g, s);
    return band > 0 && g->OW * s <= FRT_DW_BLOCK_MAXW ? band : 0;
}

void frt_dw3x3_plane_avx2(const void *plan, const frt_conv_params *p, const frt_conv_geom *g,
                          const float *x, const float *w, float b, float *y, int s) {
    const dw_plan *pl = plan;
    if (s == 1) dw3x3_plane(p, g, &pl->rp, x, w, b, y, 1);
    else dw3x3_plane(p, g, &pl->rp, x, w, b, y, 2);
}

void frt_dw3x3_block8_avx2(const void *plan, const frt_conv_params *p, const frt_conv_geom *g,
                           const float *x8, const float *w8, const float *b8, float *y8, int s,
                           int64_t band) {
    (void)plan;
    dw3x3_block8(p, g, x8, w8, b8, y8, s, band);
}

int64_t frt_dwb_band_avx2(const frt_conv_geom *g, int k, int s) { return dwb_band(g, k, s); }

void frt_dwb_run_avx2(const frt_conv_params *p, const frt_conv_geom *g, const float *x,
                      const float *w, const float *b, float *y, int64_t nc, int64_t band, int k,
                      int s) {
    dwb_run(p, g, x, w, b, y, nc, band, k, s);
}
