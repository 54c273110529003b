/* The inverted-residual block of MobileNetV2 on 8-channel-blocked activations (nChw8c, see
 * blkpw.h) as one pass over row strips of the output:
 *
 *   E = act_e(1x1 conv(X; we, be))            C -> E channels, H x W
 *   D = act_d(3x3 depthwise conv(E; wd, bd))  stride S (1 or 2), pads pt (top), pl (left)
 *   Y = 1x1 conv(D; wp, bp) [+ Z]             E -> M channels, OH x OW
 *
 * For output rows [r0, r1) a strip expands only the input rows its depthwise taps reach into a
 * scratch buffer of a few rows (kept across strips: the rows two strips share are moved, not
 * recomputed), runs the depthwise conv on them into a second buffer of the strip's rows and
 * projects that into Y. The expanded and depthwise maps (6x the block's channels) stay in L1/L2
 * instead of going to memory and back twice. Every output element is computed by the same
 * kernels (blkpw.h, blkdw.h) with the same chain of operations as the three unfused steps, so the
 * result is the same bits as running them one after another with the same variant.
 * A variant per ISA tier (the AVX2 kernels; AVX-512 hosts take them too), portable C for the rest.
 * Thread-safe (separate scratch per caller), never fail. */
#ifndef FRT_OPS_BLKIR_H
#define FRT_OPS_BLKIR_H

#include <stddef.h>
#include <stdint.h>

#include "blkdw.h"
#include "blkpw.h"
#include "cpu.h"

/* Shapes: x [ceil(C/8)][H][W][8], y and z [ceil(M/8)][OH][OW][8] (one image; padding lanes of x
 * and z ignored, of y written as 0); weights packed by frt_blkpw_pack (we: C -> E, wp: E -> M)
 * and frt_blkdw_pack (wd: E channels, K = 3, b = 8). act_e is a FRT_BLKPW_* activation with
 * bounds lo_e, hi_e; act_d a FRT_BLKDW_* one (NONE, RELU or CLIP) with lo_d, hi_d. 0 <= pt, pl
 * < 3, OH = (H + pt + pb - 3) / S + 1 for some bottom pad pb (likewise OW): the rows and columns
 * the taps reach outside the image are zero. R >= 1: output rows per strip. */
typedef struct frt_blkir_geom {
    int64_t C, E, M;
    int64_t H, W, OH, OW;
    int64_t S, pt, pl;
    int act_e, act_d;
    float lo_e, hi_e, lo_d, hi_d;
    int64_t R;
} frt_blkir_geom;

typedef struct frt_blkir_weights {
    const float *we, *be, *wd, *bd, *wp, *bp;
} frt_blkir_weights;

typedef struct frt_blkir_variant {
    frt_isa isa;
    const char *suffix;           /* "" portable, "_avx2" */
    frt_blkpw_fn pw;
    frt_blkdw_fn dw;
} frt_blkir_variant;

/* The variant of tier cap or below (AVX-512 hosts take the AVX2 one). */
const frt_blkir_variant *frt_blkir_variant_get(frt_isa cap);

/* Floats of scratch one call of frt_blkir_rows needs (64-byte alignment is enough). */
size_t frt_blkir_scratch_floats(const frt_blkir_geom *g);

/* Output rows [r0, r1) (0 <= r0 <= r1 <= OH) of one image, in strips of g->R rows, with the
 * loops of variant v; z may be NULL (no residual). y must not overlap x, z or scratch. */
void frt_blkir_rows(const frt_blkir_variant *v, const float *x, const frt_blkir_weights *w,
                    const float *z, float *y, const frt_blkir_geom *g, int64_t r0, int64_t r1,
                    float *scratch);

#endif
