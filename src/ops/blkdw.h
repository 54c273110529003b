/* Depthwise convolution on channel-blocked activations (the provider layouts nChw16c / nChw8c,
 * src/ir/layout.c: [ceil(C/b), H, W, b] per image, the last block's lanes past C padding), with
 * the bias and a pointwise activation applied as the outputs are stored. The oneDNN provider runs
 * it in place of oneDNN's depthwise primitive (src/ops/onednn/dwconv.c). A variant per ISA tier
 * (x86/blkdw_avx512.c for b = 16, x86/blkdw_avx2.c for b = 8, portable C for any b), picked with
 * FRT_PICK_VARIANT and then the first variant of that tier or below whose block is b (the
 * portable one takes any b). Thread-safe, never fail. */
#ifndef FRT_OPS_BLKDW_H
#define FRT_OPS_BLKDW_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu.h"

/* Activations applied to conv + bias (NaN in gives NaN out for all of them):
 *   NONE x;  RELU max(0, x);  CLIP min(hi, max(lo, x));  SILU x / (1 + e^-x) (-inf gives NaN, as
 *   the unfused Sigmoid + Mul);  HARDSWISH x max(0, min(1, x / 6 + 1/2)). */
enum { FRT_BLKDW_NONE = 0, FRT_BLKDW_RELU, FRT_BLKDW_CLIP, FRT_BLKDW_SILU, FRT_BLKDW_HARDSWISH };

/* One image: y[c][oh][ow] = act(bias[c] + sum_{i,j < K} w[c][i][j] x[c][oh S - pt + i][ow S - pl + j])
 * where input positions outside [0, H) x [0, W) are zero. Channel-blocked (block b):
 *   x  [ceil(C/b)][H][W][b] (padding lanes ignored), y [ceil(C/b)][OH][OW][b] (padding lanes
 *      written as 0),
 *   w  [ceil(C/b)][K][K][b] (frt_blkdw_pack), bias [ceil(C/b) b], both zero in padding lanes.
 * K >= 1, S >= 1, 0 <= pt, pl; OH, OW >= 1 (the SIMD variants take only K in {3, 5} with S in
 * {1, 2}: frt_blkdw_get picks the portable loop for the others). y must not overlap x. */
typedef struct frt_blkdw_geom {
    int64_t C, H, W, OH, OW;
    int64_t K, S, pt, pl;
    int act;
    float lo, hi;               /* CLIP bounds */
} frt_blkdw_geom;

typedef void (*frt_blkdw_fn)(const float *x, const float *w, const float *bias, float *y,
                             const frt_blkdw_geom *g, int64_t b);

typedef struct frt_blkdw_variant {
    frt_isa isa;
    const char *suffix;           /* "" portable, "_avx2", "_avx512" */
    int64_t block;                /* the b its loop takes; 0: any */
    frt_blkdw_fn run;
} frt_blkdw_variant;

/* The variant for block size b on tier cap or below. */
const frt_blkdw_variant *frt_blkdw_variant_get(frt_isa cap, int64_t b);

/* The loop to run for block size b, kernel K and stride S on tier cap or below: the variant's, or
 * the portable one for a geometry the variant does not take. */
frt_blkdw_fn frt_blkdw_get(frt_isa cap, int64_t b, int64_t K, int64_t S);

/* Whether the AVX2 loop (b = 8) runs geometry g in its row tiles of 7 outputs (x86/blkdw_impl.h
 * bd_tile7): left pad K / 2, OW a multiple of 7, the last output's taps past the right edge by
 * at most K / 2 columns. There an activation applied at the store costs less than a pass over
 * the output after it (SiLU: onednn/dwconv.c). (Inline: the loop files call nothing of blkdw.c.) */
static inline bool frt_blkdw_row_tiles(const frt_blkdw_geom *g) {
    int64_t over = (g->OW - 1) * g->S + g->K - 1 - g->pl - (g->W - 1);
    return (g->K == 3 || g->K == 5) && (g->S == 1 || g->S == 2) && g->pl == g->K / 2 &&
           g->OW % 7 == 0 && over <= g->K / 2 && g->W >= g->K;
}

/* Packs plain depthwise weights wt[C][1][K][K] and bias (NULL: zero) into the blocked w and
 * bias_out of frt_blkdw_geom (ceil(C/b) K K b and ceil(C/b) b floats). */
void frt_blkdw_pack(const float *wt, const float *bias, int64_t C, int64_t K, int64_t b,
                    float *w, float *bias_out);

void frt_blkdw_portable(const float *x, const float *w, const float *bias, float *y,
                        const frt_blkdw_geom *g, int64_t b);
void frt_blkdw_avx2(const float *x, const float *w, const float *bias, float *y,
                    const frt_blkdw_geom *g, int64_t b);
void frt_blkdw_avx512(const float *x, const float *w, const float *bias, float *y,
                      const frt_blkdw_geom *g, int64_t b);

#endif
