/* Loops over channel-blocked activations (the provider layouts nChw16c / nChw8c, src/ir/layout.c:
 * [N, ceil(C/b), S, b], the last block's lanes past C padding) that the oneDNN provider runs
 * between its primitives. A variant per ISA tier (x86/blocked_avx512.c for b = 16,
 * x86/blocked_avx2.c for b = 8, both with the pooling loops of x86/blocked_pool_impl.h;
 * portable C for any b), picked with FRT_PICK_VARIANT and then the first variant of that tier
 * or below whose block is b (the portable one takes any b).
 * Thread-safe, never fail. */
#ifndef FRT_OPS_BLOCKED_H
#define FRT_OPS_BLOCKED_H

#include <stdint.h>

#include "cpu.h"

/* One image: y[k][s][l] = x[k][s][l] * g[k][l] for k < ceil(C/b), s < S, l < b, where g is the
 * [ceil(C/b), b] blocked per-channel factor; padding lanes (k*b + l >= C) of y are written as 0
 * whatever x and g hold there. y may be x. 1 <= b <= 64. */
typedef void (*frt_blk_chanmul_fn)(const float *x, const float *g, float *y, int64_t C, int64_t S,
                                   int64_t b);

/* 2-D pooling geometry of one image (1-D pooling: H = OH = kh = sh = dh = 1, ph = 0). Output
 * (oh, ow) pools the input positions ih = oh*sh - ph + i*dh (i < kh), iw = ow*sw - pw + j*dw
 * (j < kw) that lie inside [0, H) x [0, W); positions outside are padding and never read.
 * max: the largest of them (-FLT_MAX for a window without any; the selection is
 * v > acc ? v : acc, from acc = -FLT_MAX, rows then columns in order). avg: their sum (0 + the
 * values in that order) times 1 / cnt, where cnt counts the window positions inside the count
 * region [ch0, ch1) x [cw0, cw1) (exclude-pad: [0, H) x [0, W); count_include_pad: the input with
 * its explicit pads); 0 where cnt is 0. All sizes >= 1 except the pads (>= 0). */
typedef struct frt_blk_pool_geom {
    int64_t C, H, W, OH, OW;
    int64_t kh, kw, sh, sw, dh, dw, ph, pw;
    int64_t ch0, ch1, cw0, cw1;
    int max;                      /* 1: max pooling, 0: average */
} frt_blk_pool_geom;

/* Pools channel blocks [k0, k1) of one image: x blocked [ceil(C/b), H, W, b], y blocked
 * [ceil(C/b), OH, OW, b] (the same blocks of y written, nothing else); padding lanes of y are
 * written as 0 whatever x holds there. b is the variant's block, or for the AVX2 loops any
 * multiple of 8 (run as 8-lane parts); the portable loops take 1 <= b <= 64. y does not overlap
 * x. The result is the same bits in every variant. */
typedef void (*frt_blk_pool_fn)(const frt_blk_pool_geom *g, const float *x, float *y, int64_t k0,
                                int64_t k1, int64_t b);

/* Per-channel affine map (inference BatchNormalization with its statistics folded into a and c,
 * optionally followed by Relu) of channel blocks [k0, k1) of one image x, y blocked [ceil(C/b), S,
 * b]: y[k][s][l] = x[k][s][l] * a[k][l] + c[k][l], a product and then a sum (never a fused
 * multiply-add), then for relu v > 0 ? v : 0; a and c are blocked [ceil(C/b), b]. Padding lanes
 * (k*b + l >= C) of y are written as 0 whatever x, a and c hold there; nothing outside blocks
 * [k0, k1) is written. y may be x. b is the variant's block, or for the AVX2 loops any multiple of
 * 8; the portable loops take 1 <= b <= 64. The result is the same bits in every variant. */
typedef void (*frt_blk_affine_fn)(const float *x, const float *a, const float *c, float *y,
                                  int64_t C, int64_t S, int64_t b, int64_t k0, int64_t k1,
                                  int relu);

/* Channel gather on blocked data (a channel permutation, concatenation and split in one pass:
 * flatrt::ChannelShuffle, src/ops/shuffle.c). The output images are cut into chunks of 8 lanes
 * (lanes sub*8 .. sub*8+7 of block blk); each chunk takes each of its lanes from one lane of one
 * source chunk of an input image, or writes 0 there (padding lanes). b is a multiple of 8 (both
 * provider blocks); every image of the call has S spatial positions. */
typedef struct frt_blk_gsrc {
    int32_t in;                   /* input image */
    int32_t blk, sub;             /* source chunk: lanes sub*8 .. sub*8+7 of block blk */
    uint32_t mask;                /* bit l: output lane l comes from this chunk */
    int32_t lane[8];              /* source lane (0..7) of each output lane in mask; 0 elsewhere */
} frt_blk_gsrc;
typedef struct frt_blk_gchunk {
    int32_t out;                  /* output image */
    int32_t blk, sub;             /* the chunk: lanes sub*8 .. sub*8+7 of block blk */
    int32_t first, n;             /* its sources: src[first .. first + n), masks disjoint */
} frt_blk_gchunk;
/* Chunks [q0, q1) of ch: for every position s < S and lane l < 8,
 *   y[o][(blk*S + s)*b + sub*8 + l] = x[i][(src.blk*S + s)*b + src.sub*8 + src.lane[l]]
 * for the source whose mask has bit l, else +0. A pure copy: the same bits in every variant. No
 * output overlaps an input. */
typedef void (*frt_blk_gather_fn)(const float *const *x, float *const *y,
                                  const frt_blk_gchunk *ch, const frt_blk_gsrc *src, int64_t q0,
                                  int64_t q1, int64_t S, int64_t b);

typedef struct frt_blk_variant {
    frt_isa isa;
    const char *suffix;           /* "" portable, "_avx2", "_avx512" */
    int64_t block;                /* the b its loops take; 0: any */
    frt_blk_chanmul_fn chanmul;
    frt_blk_pool_fn pool;
    const char *pool_suffix;      /* the suffix of the pool loops' tier */
    frt_blk_affine_fn affine;     /* the AVX-512 entry has the AVX2 loops (16c as two halves) */
    frt_blk_gather_fn gather;     /* the AVX-512 entry has the AVX2 loop, as for affine */
} frt_blk_variant;

/* The loops for block size b on tier cap or below. */
const frt_blk_variant *frt_blk_variant_get(frt_isa cap, int64_t b);

void frt_blk_chanmul_portable(const float *x, const float *g, float *y, int64_t C, int64_t S,
                              int64_t b);
void frt_blk_chanmul_avx2(const float *x, const float *g, float *y, int64_t C, int64_t S,
                          int64_t b);
void frt_blk_chanmul_avx512(const float *x, const float *g, float *y, int64_t C, int64_t S,
                            int64_t b);

void frt_blk_affine_portable(const float *x, const float *a, const float *c, float *y,
                             int64_t C, int64_t S, int64_t b, int64_t k0, int64_t k1, int relu);
void frt_blk_affine_avx2(const float *x, const float *a, const float *c, float *y, int64_t C,
                         int64_t S, int64_t b, int64_t k0, int64_t k1, int relu);

void frt_blk_pool_portable(const frt_blk_pool_geom *g, const float *x, float *y, int64_t k0,
                           int64_t k1, int64_t b);
void frt_blk_pool_avx2(const frt_blk_pool_geom *g, const float *x, float *y, int64_t k0,
                       int64_t k1, int64_t b);
void frt_blk_pool_avx512(const frt_blk_pool_geom *g, const float *x, float *y, int64_t k0,
                         int64_t k1, int64_t b);

void frt_blk_gather_portable(const float *const *x, float *const *y, const frt_blk_gchunk *ch,
                             const frt_blk_gsrc *src, int64_t q0, int64_t q1, int64_t S,
                             int64_t b);
void frt_blk_gather_avx2(const float *const *x, float *const *y, const frt_blk_gchunk *ch,
                         const frt_blk_gsrc *src, int64_t q0, int64_t q1, int64_t S, int64_t b);

/* Whether g pools the whole image into one output without padding (kernel H x W, OH = OW = 1).
 * Those pools accumulate position s into partial result s % 4 and combine them as
 * (r0 op r1) op (r2 op r3), op the max selection (FRT_BLK_MAX) or the sum; the average is that
 * sum times 1 / (H W). */
static inline int frt_blk_pool_is_global(const frt_blk_pool_geom *g) {
    return g->OH == 1 && g->OW == 1 && g->kh == g->H && g->kw == g->W && g->ph == 0 &&
           g->pw == 0 && g->dh == 1 && g->dw == 1 && g->ch0 == 0 && g->ch1 == g->H &&
           g->cw0 == 0 && g->cw1 == g->W;
}
#define FRT_BLK_MAX(v, acc) ((v) > (acc) ? (v) : (acc))

/* Window rows (or columns) of output o along one axis (size n, kernel k, stride s, dilation d,
 * begin pad p): the i in [*lo, *hi) with o*s - p + i*d inside [a, e). */
static inline void frt_blk_pool_range(int64_t o, int64_t s, int64_t p, int64_t k, int64_t d,
                                      int64_t a, int64_t e, int64_t *lo, int64_t *hi) {
    int64_t st = o * s - p;
    int64_t l = st >= a ? 0 : (a - st + d - 1) / d;
    int64_t h = st >= e ? 0 : (e - st + d - 1) / d;
    if (h > k) h = k;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
}

#endif
