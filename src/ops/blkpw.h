/* Pointwise (1x1, stride 1, unpadded, ungrouped) convolution on 8-channel-blocked activations
 * (the provider layout nChw8c, src/ir/layout.c: [ceil(C/8), S, 8] per image, S = H W pixels, the
 * last block's lanes past C padding), over a range of pixels, with the bias, an optional residual
 * input and a pointwise activation applied as the outputs are stored. The oneDNN provider runs it
 * in place of oneDNN's 1x1 primitive for layers with few output channel blocks, where a split of
 * the output channels cannot give two threads even halves (src/ops/onednn/pwconv.c): a pixel range
 * is one contiguous range of every channel block, so parts of pixels need no copies. A variant per
 * ISA tier (x86/blkpw_avx2.c; the AVX-512 tier takes the AVX2 loop), portable C for the rest.
 * Thread-safe, never fail. */
#ifndef FRT_OPS_BLKPW_H
#define FRT_OPS_BLKPW_H

#include <stdint.h>

#include "cpu.h"

enum { FRT_BLKPW_NONE = 0, FRT_BLKPW_RELU, FRT_BLKPW_CLIP, FRT_BLKPW_SILU, FRT_BLKPW_HARDSWISH };

/* Output pixels [s0, s1) of one image:
 *   y[m][s] = act(acc + z[m][s]) (z: NULL for none), acc = fma(x[C-1][s], w[m][C-1], ...
 *             fma(x[1][s], w[m][1], fma(x[0][s], w[m][0], bias[m]))),
 * a chain of fused multiply-adds over the input channels in order (every variant gives the same
 * bits, whatever the pixel range and however the pixels are split; SILU alone differs between
 * variants: within 5e-6 relative of each other). Blocked shapes (floats):
 *   x [ceil(C/8)][S][8] (padding lanes ignored: they may hold anything, NaN included),
 *   y, z [ceil(M/8)][S][8] (padding lanes of y written as 0; of z ignored), z may be y,
 *   w [ceil(M/8)][C][8] and bias [ceil(M/8) 8] (frt_blkpw_pack; zero in padding lanes).
 * Activations (NaN in gives NaN out): NONE v; RELU 0 > v ? 0 : v; CLIP t = lo > v ? lo : v,
 * then hi < t ? hi : t; SILU v / (1 + e^-v) (-inf gives NaN, as the unfused Sigmoid + Mul; the
 * AVX2 loop: vsilu of x86/vec_avx2.h, the tier's SiLU loop's math, the portable one expf);
 * HARDSWISH v min(1, max(0, fma(v, 1/6, 1/2))) (the same bits in every variant).
 * y must not overlap x. 0 <= s0 <= s1 <= S.
 * kc > 0 (a multiple of 8; 0 for none): the AVX2 loop runs the input channels in slices of kc
 * over the pixel range, the partial sums kept in y between slices (the same chain, the same bits;
 * not when z is y), so that a tile group's weights stay in L1 on layers of many input channels.
 * The portable loop ignores it. */
typedef struct frt_blkpw_geom {
    int64_t C, M, S;
    int act;
    float lo, hi;
    int64_t kc;
} frt_blkpw_geom;

typedef void (*frt_blkpw_fn)(const float *x, const float *w, const float *bias, const float *z,
                             float *y, const frt_blkpw_geom *g, int64_t s0, int64_t s1);

typedef struct frt_blkpw_variant {
    frt_isa isa;
    const char *suffix;           /* "" portable, "_avx2" */
    frt_blkpw_fn run;
} frt_blkpw_variant;

/* The variant of tier cap or below (AVX-512 hosts take the AVX2 one). */
const frt_blkpw_variant *frt_blkpw_variant_get(frt_isa cap);

/* Packs plain weights wt[M][C][1][1] and bias (NULL: zero) into w and bias_out of
 * frt_blkpw_geom (ceil(M/8) C 8 and ceil(M/8) 8 floats). */
void frt_blkpw_pack(const float *wt, const float *bias, int64_t C, int64_t M, float *w,
                    float *bias_out);

void frt_blkpw_portable(const float *x, const float *w, const float *bias, const float *z,
                        float *y, const frt_blkpw_geom *g, int64_t s0, int64_t s1);
void frt_blkpw_avx2(const float *x, const float *w, const float *bias, const float *z, float *y,
                    const frt_blkpw_geom *g, int64_t s0, int64_t s1);

#endif
