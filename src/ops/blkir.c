/* The inverted-residual block on nChw8c in row strips: the strip loop and the variant table (see
 * blkir.h). */
#include "blkir.h"

#include <string.h>

/* Rows of the expanded map the buffer holds: a strip of R output rows reaches (R - 1) S + 3 input
 * rows. */
static int64_t buf_rows(const frt_blkir_geom *g) { return (g->R - 1) * g->S + 3; }

size_t frt_blkir_scratch_floats(const frt_blkir_geom *g) {
    int64_t eb = (g->E + 7) / 8;
    return (size_t)(eb * 8 * (buf_rows(g) * g->W + g->R * g->OW));
}

void frt_blkir_rows(const frt_blkir_variant *v, const float *x, const frt_blkir_weights *w,
                    const float *z, float *y, const frt_blkir_geom *g, int64_t r0, int64_t r1,
                    float *scratch) {
    const int64_t W = g->W, OW = g->OW, S = g->S, RB = buf_rows(g), eb = (g->E + 7) / 8;
    float *ebuf = scratch, *dbuf = scratch + eb * 8 * RB * W;
    /* expand: input rows -> buffer rows, x blocks one image apart, buffer blocks RB rows apart */
    frt_blkpw_geom ge = {.C = g->C, .M = g->E, .S = 0, .act = g->act_e, .lo = g->lo_e,
                         .hi = g->hi_e, .xs = g->H * W, .ys = RB * W};
    /* project: depthwise buffer (R rows per block) -> output rows */
    frt_blkpw_geom gp = {.C = g->E, .M = g->M, .S = 0, .act = FRT_BLKPW_NONE, .lo = 0.0f,
                         .hi = 0.0f, .xs = g->R * OW, .ys = g->OH * OW};
    int64_t ha = 0, hb = 0; /* input rows [ha, hb) in the buffer, from its row 0 */
    for (int64_t q0 = r0; q0 < r1; q0 += g->R) {
        int64_t q1 = q0 + g->R < r1 ? q0 + g->R : r1;
        int64_t top = q0 * S - g->pt, a = top > 0 ? top : 0;
        int64_t b = (q1 - 1) * S - g->pt + 3;
        if (b > g->H) b = g->H;
        int64_t u = a; /* first row to expand */
        if (q0 > r0 && a >= ha && a < hb) {
            /* the rows this strip shares with the last one move to the buffer's top */
            if (a > ha)
                for (int64_t k = 0; k < eb; k++)
                    memmove(ebuf + k * RB * W * 8, ebuf + (k * RB + (a - ha)) * W * 8,
                            (size_t)((hb - a) * W * 8) * sizeof *ebuf);
            u = hb;
        }
        if (b > u)
            v->pw(x + u * W * 8, w->we, w->be, NULL, ebuf + (u - a) * W * 8, &ge, 0,
                  (b - u) * W);
        ha = a;
        hb = b > a ? b : a;
        frt_blkdw_geom gd = {.C = g->E, .H = hb - ha, .W = W, .OH = q1 - q0, .OW = OW, .K = 3,
                             .S = S, .pt = a - top, .pl = g->pl, .act = g->act_d,
                             .lo = g->lo_d, .hi = g->hi_d, .xbs = RB * W * 8,
                             .ybs = g->R * OW * 8};
        v->dw(ebuf, w->wd, w->bd, dbuf, &gd, 8);
        v->pw(dbuf, w->wp, w->bp, z ? z + q0 * OW * 8 : NULL, y + q0 * OW * 8, &gp, 0,
              (q1 - q0) * OW);
    }
}

static const frt_blkir_variant g_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "_avx2", frt_blkpw_avx2, frt_blkdw_avx2},
#endif
#endif
    {FRT_ISA_PORTABLE, "", frt_blkpw_portable, frt_blkdw_portable},
};

const frt_blkir_variant *frt_blkir_variant_get(frt_isa cap) {
    return FRT_PICK_VARIANT(g_variants, cap);
}
