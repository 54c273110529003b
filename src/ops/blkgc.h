/* Grouped convolution with narrow groups on 8-channel-blocked activations (the provider layout
 * nChw8c, src/ir/layout.c: [C/8, H, W, 8] per image), with the bias and a pointwise activation
 * applied as the outputs are stored. The oneDNN provider runs it in place of oneDNN's direct
 * grouped primitive (src/ops/onednn/gconv.c): RegNet's groups of 8, 16, 24 ... channels. A
 * variant per ISA tier (x86/blkgc_avx2.c; the AVX-512 tier takes the AVX2 loop), portable C for
 * the rest. (ResNeXt's groups of 4 and 8 .. 32 fit too.) Thread-safe, never fail.
 *
 * Groups: C input = C output channels (C a multiple of 8: no padding lanes) in C / G groups of G
 * channels each, G a multiple of 8 or G in {2, 4}. G >= 8: every channel block lies in one group;
 * output block m (channels 8m .. 8m + 7) reads the G / 8 input blocks of its group, starting at
 * block (8m / G) (G / 8). G < 8: block m holds 8 / G whole groups and reads input block m only. */
#ifndef FRT_OPS_BLKGC_H
#define FRT_OPS_BLKGC_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu.h"

enum { FRT_BLKGC_NONE = 0, FRT_BLKGC_RELU, FRT_BLKGC_CLIP };

/* Output blocks [m0, m1) of one image:
 *   y[m][oh][ow] = act(acc), acc the chain of fused multiply-adds
 *     acc = bias[m]; for i in [0, K) (input row ih = oh S - pt + i inside [0, H)), for c in
 *     [0, G) (input channel g G + c, g = m / G the group), for j in [0, K) (input column iw =
 *     ow S - pl + j inside [0, W)): acc = fma(x[g G + c][ih][iw], w[m][c][i][j], acc)
 * (every variant gives the same bits). Blocked shapes (floats):
 *   x [C/8][H][W][8], y [C/8][OH][OW][8] (y must not overlap x),
 *   w [C/8][K][G][K][8] and bias [C] (frt_blkgc_pack).
 * Activations (NaN in gives NaN out): NONE v; RELU 0 > v ? 0 : v; CLIP t = lo > v ? lo : v,
 * then hi < t ? hi : t. G in {2, 4} or G % 8 == 0; C % 8 == 0, C % G == 0; K, S >= 1;
 * 0 <= pt, pl < K; OH, OW
 * >= 1. The AVX2 loop takes K == 3, S in {1, 2}, pl <= 1 (frt_blkgc_get gives the portable one
 * for the others). 0 <= m0 <= m1 <= C / 8. */
typedef struct frt_blkgc_geom {
    int64_t C, G, H, W, OH, OW;
    int64_t K, S, pt, pl;
    int act;
    float lo, hi;
} frt_blkgc_geom;

typedef void (*frt_blkgc_fn)(const float *x, const float *w, const float *bias, float *y,
                             const frt_blkgc_geom *g, int64_t m0, int64_t m1);

typedef struct frt_blkgc_variant {
    frt_isa isa;
    const char *suffix;           /* "" portable, "_avx2" */
    frt_blkgc_fn run;
} frt_blkgc_variant;

/* The variant of tier cap or below (AVX-512 hosts take the AVX2 one). */
const frt_blkgc_variant *frt_blkgc_variant_get(frt_isa cap);

/* Whether the SIMD loop of a tier runs geometry g (else the portable loop does). */
static inline bool frt_blkgc_simd_covers(const frt_blkgc_geom *g) {
    return g->K == 3 && (g->S == 1 || g->S == 2) && g->pl <= 1 &&
           (g->G % 8 == 0 || g->G == 4 || g->G == 2);
}

/* The loop to run geometry g on tier cap or below. */
frt_blkgc_fn frt_blkgc_get(frt_isa cap, const frt_blkgc_geom *g);

/* Packs plain grouped weights wt[C][G][K][K] and bias (NULL: zero) into w and bias_out of
 * frt_blkgc_geom (C K G K and C floats). */
void frt_blkgc_pack(const float *wt, const float *bias, int64_t C, int64_t G, int64_t K,
                    float *w, float *bias_out);

void frt_blkgc_portable(const float *x, const float *w, const float *bias, float *y,
                        const frt_blkgc_geom *g, int64_t m0, int64_t m1);
void frt_blkgc_avx2(const float *x, const float *w, const float *bias, float *y,
                    const frt_blkgc_geom *g, int64_t m0, int64_t m1);

#endif
