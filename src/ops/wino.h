/* Winograd F(4x4, 3x3) convolution on channel-blocked activations (the provider layouts nChw8c /
 * nChw16c, src/ir/layout.c: [ceil(C/b), H, W, b] per image, the last block's lanes past C
 * padding), for 3x3, stride-1, undilated, ungrouped convolutions. The oneDNN provider runs it in
 * place of oneDNN's direct convolution on the AVX2 tier (src/ops/onednn/winoconv.c).
 *
 * Algorithm (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks"): the output is cut
 * into 4x4 tiles, each read from a 6x6 input patch (pads outside the image are zero). With
 *   B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
 *   G   = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
 *   A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
 * a tile is Y = A^T [ sum_c (G w[m][c] G^T) .* (B^T x_c B^T^T) ] A, i.e. 36 independent GEMMs
 * (one per position xi of the 6x6 transformed tile) of [tiles x C] by [C x M]: 36 multiplies per
 * 16 outputs instead of 144. The weights are transformed once (frt_wino_pack, in double).
 *
 * A run works on blocks of up to T tiles (row-major tile order over the image) so that the
 * transformed tiles of a block stay in L2: input transform of the block into V, the 36 GEMMs
 * into O, output transform with bias, residual and activation into y. The three pieces are a
 * variant per ISA tier (x86/wino_avx2.c, portable C here); the driver is shared.
 *
 * F(2x2, 3x3) (g->m = 2; for small images, where F(4x4)'s 6x6 tiles overhang the image and its U,
 * 36 C M floats, is read for few tiles: 7x7 takes 16 tiles of 2x2 instead of 4 of 4x4): 2x2 tiles
 * from 4x4 patches, 16 GEMMs (36 multiplies per 4 outputs),
 *   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1],
 *   A^T = [1 1 1 0; 0 1 -1 -1];
 * below, 36 stands for P = (m + 2)^2 and 4 for m.
 *
 * Stride 2 (g->s = 2, m = 2): the 3x3 stride-2 convolution by its polyphase form. In one
 * dimension, outputs y0, y1 of a tile read input samples d0..d4 (d4 of y1 is d2 of the next
 * tile): y0 = w0 d0 + w1 d1 + w2 d2, y1 = w0 d2 + w1 d3 + w2 d4, i.e. the 2-tap filter (w0, w2)
 * over the even samples d0, d2, d4 (Winograd F(2, 2): 3 multiplies for 2 outputs) plus the 1-tap
 * w1 over the odd samples d1, d3:
 *   B^T = [1 0 -1 0 0; 0 0 1 0 0; 0 0 -1 0 1; 0 1 0 0 0; 0 0 0 1 0],
 *   G   = [1 0 0; 1 0 1; 0 0 1; 0 1 0; 0 1 0],   A^T = [1 1 0 1 0; 0 1 1 0 1];
 * nested in two dimensions: 5x5 patches, 25 GEMMs (25 multiplies per 2x2 outputs instead of 36;
 * all coefficients 0 or +-1, so no more rounding than a direct sum), tile t's patch at input row
 * 4 (t / tw) - pt, column 4 (t % tw) - pl. P = 25 below; OH, OW are the stride-2 output's.
 * Callers size and fill U with frt_wino_u_floats_geom / frt_wino_pack_geom. G's rows 3 and 4
 * are equal, so U holds the 4x4 distinct positions only, [16][Mp/16][Cp][16]: position xi of
 * the 5x5 tile reads U position frt_wino_upos(g, xi).
 *
 * One-dimensional form (g->r > 0): a 1 x r (g->axis 0, along the rows) or r x 1 (axis 1, down the
 * columns) stride-1 kernel by Winograd / Toom-Cook F(m, r): tiles of m outputs along the axis
 * read P = m + r - 1 input samples, Y = A^T [(G w) .* (B^T d)], P GEMMs, P multiplies per m
 * outputs instead of m r (F(4, 7): 10 per 4 instead of 28; F(4, 3): 6 per 4 instead of 12). The
 * matrices are built from the points 0, 1, -1, 2, -2, 1/2, -1/2, 3, -3 (the first P - 1) and
 * infinity (frt_wino_geom_init, in double; B^T's rows scaled to a largest entry of 1, G's rows by
 * the inverse): g->bt [P][P] and g->at [m][P] are applied as dense matrices (P <= FRT_WINO1_PMAX,
 * m <= FRT_WINO1_MMAX). A kernel of kd > 1 taps across the axis (kd x r for axis 0, e.g.
 * 5x5 as kd 5, r 5) is kd such convolutions of shifted lines summed: input line oy + i - pt
 * (axis 0; column ox + i - pl for axis 1) of tap i is transformed into V groups i Cg .. + Cg - 1,
 * and the GEMMs run over all kd Cg groups (Kg; U [P][Mp/16][8 Kg][16], row i 8 Cg + c the
 * transformed kernel line i of channel c): kd P multiplies per m outputs instead of kd m r.
 * Pads: along the axis (pl for axis 0, pt for axis 1) up to r - 1, across it up to kd - 1.
 * Tile t covers output row t / tw and columns m (t % tw) .. + m - 1 (axis 0), or rows
 * m (t / tw) .. and column t % tw (axis 1).
 *
 * Shapes (floats): 8-lane channel groups are the unit: Cg = ceil(C/8), Cp = 8 Cg,
 * Mp = ceil(M/16) 16 (M padded to whole 16-wide GEMM panels):
 *   U  [36][Mp/16][Cp][16]   transformed weights, zero past C and M (frt_wino_pack)
 *   V  [Cg][T][36][8]        transformed input tiles of one block (scratch; groups gs floats
 *                            apart, gs >= T 36 8 (frt_wino_geom); a tile's 36
 *                            positions contiguous, so the transforms stream through whole lines)
 *   O  [Mp/8][T][36][8]      GEMM results of one block (scratch; groups gs floats apart, the
 *                            GEMM rows 36 8 floats apart)
 *   bias [Mp] (zero past M; never NULL), z (residual, may be NULL) and y in the blocked layout of
 *   the output: y = act(conv + bias + z); padding lanes of y are written as 0, padding lanes of
 *   x and z are ignored (they may hold anything, NaN included). z may be y (read before written);
 *   x must not overlap y. */
#ifndef FRT_OPS_WINO_H
#define FRT_OPS_WINO_H

#include <stddef.h>
#include <stdint.h>

#include "cpu.h"

enum { FRT_WINO_NONE = 0, FRT_WINO_RELU, FRT_WINO_CLIP };
enum { FRT_WINO1_PMAX = 10, FRT_WINO1_MMAX = 4 }; /* the one-dimensional form's limits (F(6, 3) in
                                                     float rounds beyond test_wino's bound) */

typedef struct frt_wino_geom {
    int64_t C, M, H, W;          /* input channels / output channels, input image */
    int64_t OH, OW;              /* output image: OH <= H + pt + 2 - 2 (stride 2: OH <=
                                    (H + pt + 2 - 3) / 2 + 1), any bottom/right pad */
    int64_t pt, pl;              /* top / left pads, 0 <= pt, pl <= 2 */
    int64_t b;                   /* channel block of x, z and y: 8 or 16 */
    int64_t m;                   /* output tile side: 4 = F(4x4, 3x3) (also when 0), 2 = F(2x2,
                                    3x3) (see below) */
    int64_t s;                   /* stride: 1 (also when 0) or 2 (the polyphase form above;
                                    m is then 2) */
    int act;                     /* FRT_WINO_*: RELU max(0, v); CLIP min(hi, max(lo, v)) */
    float lo, hi;
    int64_t r;                   /* > 0: the one-dimensional form F(m, r) (see above; s 1, m
                                    2..FRT_WINO1_MMAX, m + r - 1 <= FRT_WINO1_PMAX); 0: 3x3 */
    int64_t axis;                /* one-dimensional form: 0 = a kd x r kernel, 1 = r x kd */
    int64_t kd;                  /* one-dimensional form: kernel taps across the axis (1 also
                                    when 0), summed directly (see above) */
    /* derived by frt_wino_geom_init */
    int64_t Cg, Mg, Mp;          /* ceil(C/8), ceil(M/8), M padded to 16 */
    int64_t Kg;                  /* 8-channel groups of V, the GEMMs' depth: kd Cg (Cg but for
                                    the one-dimensional form with kd > 1) */
    int64_t P;                   /* positions of a transformed tile: (m + 2)^2, 36 or 16 */
    int64_t th, tw, ntiles;      /* tile rows / columns (ceil(OH/m), ceil(OW/m)), th tw */
    int64_t T;                   /* tiles per block */
    int64_t gs;                  /* floats between the 8-channel groups of V and O: T P 8, or
                                    16 more where that is a multiple of 512 (cache sets) */
    float bt[FRT_WINO1_PMAX * FRT_WINO1_PMAX]; /* one-dimensional form: B^T [P][P] */
    float at[FRT_WINO1_MMAX * FRT_WINO1_PMAX]; /* and A^T [m][P] */
} frt_wino_geom;

/* Positions U holds (P but for the stride-2 form's 16, see above). */
static inline int64_t frt_wino_u_positions(const frt_wino_geom *g) {
    return g->s == 2 ? 16 : g->P;
}

/* The U position of tile position xi (xi itself but for the stride-2 form, see above). */
static inline int64_t frt_wino_upos(const frt_wino_geom *g, int64_t xi) {
    if (g->s != 2) return xi;
    int64_t i = xi / 5, j = xi % 5;
    return (i < 4 ? i : 3) * 4 + (j < 4 ? j : 3);
}

/* Fills the derived fields of g (T: tiles per block, 0 = the default for the shape). */
void frt_wino_geom_init(frt_wino_geom *g, int64_t T);

/* Floats of U for C input and M output channels (F(4x4, 3x3); _m: tile side m, 4 or 2); of V + O
 * for one block of g. */
size_t frt_wino_u_floats(int64_t C, int64_t M);
size_t frt_wino_u_floats_m(int64_t C, int64_t M, int64_t m);
size_t frt_wino_u_floats_geom(const frt_wino_geom *g); /* any m and s (g initialized) */
size_t frt_wino_scratch_floats(const frt_wino_geom *g);

/* The one-dimensional form's G [P][r] of an initialized g (double, as the weights are packed). */
void frt_wino1_gmat(const frt_wino_geom *g, double *G);

/* Transforms plain weights w[M][C][3][3] into U (frt_wino_u_floats floats; _m: for tile side m,
 * frt_wino_u_floats_m floats). */
void frt_wino_pack(const float *w, int64_t C, int64_t M, float *U);
void frt_wino_pack_m(const float *w, int64_t C, int64_t M, int64_t m, float *U);
/* The same for any m and s of an initialized g (frt_wino_u_floats_geom floats); for the
 * one-dimensional form w is [M][C][kd][r] (axis 0) or [M][C][r][kd] (axis 1). */
void frt_wino_pack_geom(const float *w, const frt_wino_geom *g, float *U);

/* The three pieces of one tile block: tiles [t0, t0 + nt) of the image (nt <= g->T).
 *   itrans: V from x (all Cg groups);
 *   gemm:   O groups [2 p0, 2 p1) from V and U (16-wide panels p0..p1);
 *   otrans: y groups [g0, g1) (8-channel groups, g1 <= Mg) from O, bias and z. */
typedef void (*frt_wino_itrans_fn)(const float *x, const frt_wino_geom *g, int64_t t0,
                                   int64_t nt, float *V);
typedef void (*frt_wino_gemm_fn)(const float *V, const float *U, float *O,
                                 const frt_wino_geom *g, int64_t nt, int64_t p0, int64_t p1);
typedef void (*frt_wino_otrans_fn)(const float *O, const float *bias, const float *z, float *y,
                                   const frt_wino_geom *g, int64_t t0, int64_t nt, int64_t g0,
                                   int64_t g1);

typedef struct frt_wino_variant {
    frt_isa isa;
    const char *suffix;          /* "" portable, "_avx2" */
    frt_wino_itrans_fn itrans;
    frt_wino_gemm_fn gemm;
    frt_wino_otrans_fn otrans;
} frt_wino_variant;

/* The variant of tier cap or below (AVX-512 hosts take the AVX2 one). */
const frt_wino_variant *frt_wino_variant_get(frt_isa cap);

/* One image, or the part of it that work items [i0, i1) of frt_wino_items cover: x, z, y point
 * at the image; scratch holds frt_wino_scratch_floats(g) floats (64-byte aligned). Work items are
 * (tile block, panel range) pairs: nsplit panel ranges per block, item i = block i / nsplit,
 * panels range i % nsplit. Each output element is written by exactly one item, and the result
 * does not depend on how the items are split. */
int64_t frt_wino_items(const frt_wino_geom *g, int64_t nsplit);

/* Lowers g->T (g initialized) to the fewest tiles per block that keep the number of blocks,
 * ceil(ntiles / blocks), so that a last block of a few tiles does not stream all of U through
 * the GEMMs for them (49 tiles in blocks of 48 -> 25 + 24) and parts that take whole blocks cost
 * alike. Results do not change: a tile's outputs do not depend on its block. */
void frt_wino_even_blocks(frt_wino_geom *g);

/* Plans one image of g as up to `parts` parts (the caller's thread split) of contiguous work
 * items: sets *nsplit, the fewest panel ranges per block that give every part a cost (tiles times
 * panels) within 5% of an even share (each further range streams its block's transformed tiles
 * through the GEMMs once more; a part also repeats the input transform of a block it shares),
 * or as many as there are panels, and bound[0..n] (n + 1 entries, bound[0] = 0, bound[n] =
 * items): part i runs items [bound[i], bound[i+1]). Returns n = min(parts, items). bound must
 * hold parts + 1 entries. */
int64_t frt_wino_plan_parts(const frt_wino_geom *g, int64_t parts, int64_t *nsplit,
                            int64_t *bound);
void frt_wino_run(const frt_wino_variant *v, const float *x, const float *U, const float *bias,
                  const float *z, float *y, const frt_wino_geom *g, int64_t nsplit, int64_t i0,
                  int64_t i1, float *scratch);

void frt_wino_itrans_portable(const float *x, const frt_wino_geom *g, int64_t t0, int64_t nt,
                              float *V);
void frt_wino_gemm_portable(const float *V, const float *U, float *O, const frt_wino_geom *g,
                            int64_t nt, int64_t p0, int64_t p1);
void frt_wino_otrans_portable(const float *O, const float *bias, const float *z, float *y,
                              const frt_wino_geom *g, int64_t t0, int64_t nt, int64_t g0,
                              int64_t g1);
void frt_wino_itrans_avx2(const float *x, const frt_wino_geom *g, int64_t t0, int64_t nt,
                          float *V);
void frt_wino_gemm_avx2(const float *V, const float *U, float *O, const frt_wino_geom *g,
                        int64_t nt, int64_t p0, int64_t p1);
void frt_wino_otrans_avx2(const float *O, const float *bias, const float *z, float *y,
                          const frt_wino_geom *g, int64_t t0, int64_t nt, int64_t g0,
                          int64_t g1);

#endif
