/* Channel-blocked depthwise convolution, written once over the vector vocabulary of
 * vec_avx2.h / vec_avx512.h (V, VW lanes) and included by conv_depthwise_{avx2,avx512}.c.
 *
 * Shape handled: multiplier 1 (one input channel per output channel), dilation 1, square kernel
 * K x K with K in {3, 5}, the same stride S in {1, 2} in both axes, any padding. A call computes
 * nc <= VW channels of one image:
 *   1. a band of input rows of the nc channel planes is transposed into a zero-padded,
 *      channel-interleaved buffer P[rows][Wp][VW] (lane = channel, Wp = (OW-1)*S + K columns,
 *      padding columns and rows outside the plane are zeros; lanes past nc are zeros);
 *   2. every output is K*K FMAs on full vectors with no edge cases: NB outputs of a row at a time,
 *      each loaded input column feeding every output of the block it belongs to (stride 1 loads
 *      NB+K-1 columns per kernel row for NB*K FMAs), bias first, then the clamp (p->act);
 *   3. the channel-interleaved outputs O[nb*OW][VW] of the band get the nonlinear epilogue
 *      (p->post, on the contiguous buffer while it is in L1) and are transposed back into the nc
 *      output planes (8x8 transposes of 256-bit halves; masked stores for short chunks).
 * With a FusedConv sum input the driver passes parameters without activation and adds the sum
 * and the activation afterwards. */
#ifndef FRT_OPS_X86_CONV_DW_IMPL_H
#define FRT_OPS_X86_CONV_DW_IMPL_H

#include <immintrin.h>
#include <stdint.h>

#include "ops/conv.h"

#define DWB_PBUF 12288 /* floats of P (48 KiB on the stack) */
#define DWB_OBUF 6144  /* floats of O (24 KiB) */
#define DWB_NB 8       /* outputs of a row per register block */

/* r[j] lane i <- r[i] lane j (8x8 floats) */
static inline void dwb_tr8(__m256 *r) {
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

static inline __m256i dwb_lanes(int64_t n) { /* lanes [0, n), 0 <= n <= 8 */
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)n), lane);
}

/* Output rows per band (0: one band of K input rows does not fit P, or a row does not fit O). */
static int64_t dwb_band(const frt_conv_geom *g, int k, int s) {
    int64_t Wp = (g->OW - 1) * s + k;
    int64_t rows = DWB_PBUF / (Wp * VW);
    if (rows < k || g->OW * VW > DWB_OBUF) return 0;
    int64_t b = (rows - k) / s + 1, bo = DWB_OBUF / (g->OW * VW);
    if (bo < b) b = bo;
    return b < g->OH ? b : g->OH;
}

static inline void dwb_zero(float *d, int64_t cols) {
    for (int64_t i = 0; i < cols * VW; i += 8) _mm256_store_ps(d + i, _mm256_setzero_ps());
}

/* P rows [0, rows) <- input rows ihs + r of channels x + c*HW, c < nc (see the file comment).
 * Stores of a chunk's columns past the valid ones write zeros, possibly into the start of the
 * next row (written after) or into P's slack. */
static void dwb_fill(float *P, const float *x, const frt_conv_geom *g, int64_t nc, int64_t ihs,
                     int64_t rows, int64_t Wp) {
    const int64_t H = g->H, W = g->W, HW = H * W, pl = g->pl;
    const int64_t lpad = pl < Wp ? pl : Wp;
    const int64_t rbeg = pl + W < Wp ? pl + W : Wp;
    for (int64_t r = 0; r < rows; r++) {
        float *prow = P + r * Wp * VW;
        int64_t ih = ihs + r;
        if (ih < 0 || ih >= H) {
            dwb_zero(prow, Wp);
            continue;
        }
        dwb_zero(prow, lpad);
        if (rbeg < Wp) dwb_zero(prow + rbeg * VW, Wp - rbeg);
        for (int half = 0; half < VW / 8; half++) {
            const float *src0 = x + (int64_t)half * 8 * HW + ih * W;
            for (int64_t iw0 = 0; iw0 < W && iw0 + pl < Wp; iw0 += 8) {
                int64_t n = W - iw0 < 8 ? W - iw0 : 8;
                if (n > Wp - pl - iw0) n = Wp - pl - iw0;
                __m256 v[8];
                const __m256i m = dwb_lanes(n);
                for (int c = 0; c < 8; c++) {
                    if (half * 8 + c >= nc) v[c] = _mm256_setzero_ps();
                    else if (n == 8) v[c] = _mm256_loadu_ps(src0 + c * HW + iw0);
                    else v[c] = _mm256_maskload_ps(src0 + c * HW + iw0, m);
                }
                dwb_tr8(v);
                float *d = prow + (iw0 + pl) * VW + half * 8;
                for (int j = 0; j < 8; j++) _mm256_store_ps(d + j * VW, v[j]);
            }
        }
    }
}

/* Output rows [0, nb) of a band: O[oh][ow][VW] from P (row oh*S + ky, column ow*S + kx). */
static inline __attribute__((always_inline)) void dwb_rows(const float *P, int64_t Wp, float *O,
                                                           int64_t nb, int64_t OW, const V *wv,
                                                           V vb, int act, V vlo, V vhi,
                                                           const int K, const int S) {
    const int64_t rs = Wp * VW;
    for (int64_t oh = 0; oh < nb; oh++) {
        const float *base = P + oh * S * rs;
        float *o = O + oh * OW * VW;
        int64_t ow = 0;
        for (; ow + DWB_NB <= OW; ow += DWB_NB) {
            V acc[DWB_NB];
#pragma GCC unroll 8
            for (int j = 0; j < DWB_NB; j++) acc[j] = vb;
#pragma GCC unroll 5
            for (int ky = 0; ky < K; ky++) {
                const float *q = base + ky * rs + ow * S * VW;
#pragma GCC unroll 32
                for (int c = 0; c < (DWB_NB - 1) * S + K; c++) {
                    V xv = vload(q + c * VW);
#pragma GCC unroll 5
                    for (int kx = 0; kx < K; kx++) {
                        int d = c - kx;
                        if (d >= 0 && d % S == 0 && d / S < DWB_NB)
                            acc[d / S] = vfma(wv[ky * K + kx], xv, acc[d / S]);
                    }
                }
            }
#pragma GCC unroll 8
            for (int j = 0; j < DWB_NB; j++) {
                V a = acc[j];
                if (act) a = vmin(vhi, vmax(vlo, a));
                vstore(o + (ow + j) * VW, a);
            }
        }
        for (; ow < OW; ow++) {
            const float *q = base + ow * S * VW;
            V a = vb, b = vset(0.0f);
#pragma GCC unroll 5
            for (int ky = 0; ky < K; ky++)
#pragma GCC unroll 5
                for (int kx = 0; kx < K; kx++) {
                    if (ky & 1) b = vfma(wv[ky * K + kx], vload(q + ky * rs + kx * VW), b);
                    else a = vfma(wv[ky * K + kx], vload(q + ky * rs + kx * VW), a);
                }
            a = vadd(a, b);
            if (act) a = vmin(vhi, vmax(vlo, a));
            vstore(o + ow * VW, a);
        }
    }
}

/* O[pos][VW], positions [p0, pe) of the plane -> planes y + c*OHW, c < nc. */
static void dwb_store(const float *O, int64_t p0, int64_t pe, int64_t nc, int64_t OHW, float *y) {
    for (int half = 0; half < VW / 8 && half * 8 < nc; half++) {
        const int64_t hc = nc - half * 8 < 8 ? nc - half * 8 : 8;
        float *yh = y + (int64_t)half * 8 * OHW;
        for (int64_t q0 = p0; q0 < pe; q0 += 8) {
            int64_t n = pe - q0 < 8 ? pe - q0 : 8;
            const float *ob = O + (q0 - p0) * VW + half * 8;
            __m256 v[8];
            for (int j = 0; j < 8; j++) v[j] = j < n ? _mm256_load_ps(ob + j * VW) : _mm256_setzero_ps();
            dwb_tr8(v);
            if (n == 8) {
                for (int c = 0; c < hc; c++) _mm256_storeu_ps(yh + c * OHW + q0, v[c]);
            } else {
                const __m256i m = dwb_lanes(n);
                for (int c = 0; c < hc; c++) _mm256_maskstore_ps(yh + c * OHW + q0, m, v[c]);
            }
        }
    }
}

static inline __attribute__((always_inline)) void dwb_run_ks(
    const frt_conv_params *p, const frt_conv_geom *g, const float *x, const float *w,
    const float *b, float *y, int64_t nc, int64_t band, const int K, const int S) {
    _Alignas(64) float P[DWB_PBUF + 8 * VW];
    _Alignas(64) float O[DWB_OBUF];
    const int64_t OH = g->OH, OW = g->OW, OHW = OH * OW, Wp = (OW - 1) * S + K;
    V wv[K * K];
    for (int k = 0; k < K * K; k++) {
        _Alignas(64) float t[VW];
        for (int c = 0; c < VW; c++) t[c] = c < nc ? w[c * K * K + k] : 0.0f;
        wv[k] = vload(t);
    }
    _Alignas(64) float tb[VW];
    for (int c = 0; c < VW; c++) tb[c] = b && c < nc ? b[c] : 0.0f;
    const V vb = vload(tb);
    const V vlo = vset(p->lo), vhi = vset(p->hi);
    for (int64_t oh0 = 0; oh0 < OH; oh0 += band) {
        const int64_t nb = OH - oh0 < band ? OH - oh0 : band;
        dwb_fill(P, x, g, nc, oh0 * S - g->pt, (nb - 1) * S + K, Wp);
        dwb_rows(P, Wp, O, nb, OW, wv, vb, p->act, vlo, vhi, K, S);
        frt_conv_post(p, O, nb * OW * VW);
        dwb_store(O, oh0 * OW, (oh0 + nb) * OW, nc, OHW, y);
    }
}

/* Dispatch on (k, s); the caller checked k in {3, 5}, s in {1, 2}. A selective build whose trace
 * saw no 5x5 depthwise conv (kernel class DW5, conv.c) compiles the 5x5 cases out; its Conv
 * select refuses 5x5 depthwise nodes at load. */
static void dwb_run(const frt_conv_params *p, const frt_conv_geom *g, const float *x,
                    const float *w, const float *b, float *y, int64_t nc, int64_t band, int k,
                    int s) {
    if (k == 3 && s == 1) dwb_run_ks(p, g, x, w, b, y, nc, band, 3, 1);
    else if (k == 3) dwb_run_ks(p, g, x, w, b, y, nc, band, 3, 2);
#if FRT_KERNEL_BUILT(Conv, DW5) || FRT_KERNEL_BUILT(FusedConv, DW5)
    else if (s == 1) dwb_run_ks(p, g, x, w, b, y, nc, band, 5, 1);
    else dwb_run_ks(p, g, x, w, b, y, nc, band, 5, 2);
#endif
}

#endif
