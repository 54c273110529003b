/* Pointwise convolution on 8-channel-blocked activations: packing, the portable loop and the
 * variant table (see blkpw.h). */
#include "blkpw.h"

#include <math.h>
#include <string.h>

void frt_blkpw_pack(const float *wt, const float *bias, int64_t C, int64_t M, float *w,
                    float *bias_out) {
    int64_t mb = (M + 7) / 8;
    memset(w, 0, (size_t)(mb * C * 8) * sizeof *w);
    memset(bias_out, 0, (size_t)(mb * 8) * sizeof *bias_out);
    for (int64_t m = 0; m < M; m++) {
        for (int64_t c = 0; c < C; c++) w[((m / 8) * C + c) * 8 + m % 8] = wt[m * C + c];
        if (bias) bias_out[m] = bias[m];
    }
}

static inline float act1(const frt_blkpw_geom *g, float v) {
    if (g->act == FRT_BLKPW_RELU) return 0.0f > v ? 0.0f : v;
    if (g->act == FRT_BLKPW_CLIP) {
        float t = g->lo > v ? g->lo : v;
        return g->hi < t ? g->hi : t;
    }
    if (g->act == FRT_BLKPW_SILU) return v == -INFINITY ? NAN : v / (1.0f + expf(-v));
    if (g->act == FRT_BLKPW_HARDSWISH) {
        float h = fmaf(v, 1.0f / 6.0f, 0.5f);
        h = 1.0f < h ? 1.0f : h;
        return v * (0.0f > h ? 0.0f : h); /* (NaN h: NaN, as v) */
    }
    return v;
}

void frt_blkpw_portable(const float *x, const float *w, const float *bias, const float *z,
                        float *y, const frt_blkpw_geom *g, int64_t s0, int64_t s1) {
    int64_t C = g->C, S = g->S, mb = (g->M + 7) / 8;
    for (int64_t m = 0; m < mb; m++)
        for (int64_t s = s0; s < s1; s++)
            for (int l = 0; l < 8; l++) {
                size_t at = (size_t)((m * S + s) * 8 + l);
                if (m * 8 + l >= g->M) {
                    y[at] = 0.0f;
                    continue;
                }
                float acc = bias[m * 8 + l];
                for (int64_t c = 0; c < C; c++)
                    acc = fmaf(x[((c / 8) * S + s) * 8 + c % 8], w[(m * C + c) * 8 + l], acc);
                if (z) acc += z[at];
                y[at] = act1(g, acc);
            }
}

static const frt_blkpw_variant g_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "_avx2", frt_blkpw_avx2},
#endif
#endif
    {FRT_ISA_PORTABLE, "", frt_blkpw_portable},
};

const frt_blkpw_variant *frt_blkpw_variant_get(frt_isa cap) {
    return FRT_PICK_VARIANT(g_variants, cap);
}
