/* The "stem" convolution of a CNN: few input channels (1 <= C <= 4) in the plain layout
 * [C][H][W] of one image, writing a channel-blocked layout of b = 8 or 16 channels per block
 * (nChw8c / nChw16c: [ceil(M/b)][OH][OW][b], src/ir/layout.c, the padding lanes past M written
 * as 0) with the bias and a pointwise activation applied as the outputs are stored. The oneDNN
 * provider runs it in place of oneDNN's direct convolution for the first layer of the
 * torchvision CNNs (src/ops/onednn/stemconv.c): resnet/densenet/googlenet's 7x7 stride 2 3->64,
 * the 3x3 stride 2 3->16 .. 64 of the mobile nets. SIMD variants (x86/blkstem_impl.h): AVX2 for
 * b = 8, AVX-512 for b = 16; portable C for both. Thread-safe, never fail.
 *
 * The chain per output (every variant gives the same bits, the activations included):
 *   acc = bias[m]; for c in [0, C), i in [0, KH), j in [0, KW):
 *     acc = fma(xz(c, oh S - pt + i, ow S - pl + j), w[m][c][i][j], acc)
 *   with xz the input inside [0, H) x [0, W) and +0 outside (zero padding is a tap of value 0,
 *   not a skipped one: the same result unless acc is -0 or a weight is infinite),
 *   y[m][oh][ow] = act(acc).
 * Activations (NaN in gives NaN out):
 *   NONE v;  RELU 0 > v ? 0 : v;  CLIP t = lo > v ? lo : v, then hi < t ? hi : t;
 *   SILU v / (1 + e^-v), e^ by the polynomial of x86/vec_avx2.h vsilu written out the same way
 *        in every variant (within 4.2e-6 relative of the exact value; -inf gives NaN);
 *   HARDSWISH v t with t = fma(v, 1/6, 1/2) clamped to [0, 1] (0 > t ? 0 : t, then 1 < t ? 1 : t).
 * Shapes (floats, b = the geometry's B): x [C][H][W]; y [ceil(M/b)][OH][OW][b] (must not overlap
 * x); w [ceil(M/b)][C][KH][KW][b] and bias [ceil(M/b) b] (frt_blkstem_pack; zero in padding
 * lanes). 1 <= C <= FRT_BLKSTEM_CMAX, KH, KW, S >= 1, 0 <= pt, pl; OH, OW >= 1; no dilation,
 * group 1. A call computes output rows [r0, r1) of every channel block (0 <= r0 <= r1 <= OH): a
 * split over rows gives the same bits. The SIMD loops take KH = KW in {3, 5, 7}, S in {1, 2},
 * each its own block size (frt_blkstem_get gives the portable loop for the others). */
#ifndef FRT_OPS_BLKSTEM_H
#define FRT_OPS_BLKSTEM_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu.h"

enum { FRT_BLKSTEM_CMAX = 4 };
enum {
    FRT_BLKSTEM_NONE = 0,
    FRT_BLKSTEM_RELU,
    FRT_BLKSTEM_CLIP,
    FRT_BLKSTEM_SILU,
    FRT_BLKSTEM_HARDSWISH
};

typedef struct frt_blkstem_geom {
    int64_t B;                    /* channels per output block: 8 or 16 */
    int64_t C, M, H, W, OH, OW;
    int64_t KH, KW, S, pt, pl;
    int act;
    float lo, hi;                 /* CLIP bounds */
} frt_blkstem_geom;

typedef void (*frt_blkstem_fn)(const float *x, const float *w, const float *bias, float *y,
                               const frt_blkstem_geom *g, int64_t r0, int64_t r1);

typedef struct frt_blkstem_variant {
    frt_isa isa;
    const char *suffix;           /* "" portable, "_avx2", "_avx512" */
    int64_t block;                /* the block size it writes (0: any, the portable loop) */
    frt_blkstem_fn run;
} frt_blkstem_variant;

/* The best variant of tier cap or below for blocks of b channels (the portable one when no SIMD
 * variant writes b). */
const frt_blkstem_variant *frt_blkstem_variant_get(frt_isa cap, int64_t b);

/* Whether the SIMD loop of a tier runs geometry g (else the portable loop does). */
static inline bool frt_blkstem_simd_covers(const frt_blkstem_geom *g) {
    return g->KH == g->KW && (g->KH == 3 || g->KH == 5 || g->KH == 7) &&
           (g->S == 1 || g->S == 2) && g->C >= 1 && g->C <= FRT_BLKSTEM_CMAX &&
           (g->B == 8 || g->B == 16);
}

/* The loop to run geometry g on tier cap or below. */
frt_blkstem_fn frt_blkstem_get(frt_isa cap, const frt_blkstem_geom *g);

/* Packs plain weights wt[M][C][KH][KW] and bias (NULL: zero) into w and bias_out of
 * frt_blkstem_geom with blocks of b (ceil(M/b) b C KH KW and ceil(M/b) b floats, padding lanes
 * 0). */
void frt_blkstem_pack(const float *wt, const float *bias, int64_t M, int64_t C, int64_t KH,
                      int64_t KW, int64_t b, float *w, float *bias_out);

void frt_blkstem_portable(const float *x, const float *w, const float *bias, float *y,
                          const frt_blkstem_geom *g, int64_t r0, int64_t r1);
void frt_blkstem_avx2(const float *x, const float *w, const float *bias, float *y,
                      const frt_blkstem_geom *g, int64_t r0, int64_t r1);
void frt_blkstem_avx512(const float *x, const float *w, const float *bias, float *y,
                        const frt_blkstem_geom *g, int64_t r0, int64_t r1);

#endif
