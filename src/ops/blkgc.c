/* Grouped convolution with narrow groups on 8-channel-blocked activations: packing, the portable
 * loop and the variant table (see blkgc.h). */
#include "blkgc.h"

#include <math.h>
#include <string.h>

void frt_blkgc_pack(const float *wt, const float *bias, int64_t C, int64_t G, int64_t K,
                    float *w, float *bias_out) {
    /* w[m / 8][i][c][j][m % 8] = wt[m][c][i][j] */
    for (int64_t m = 0; m < C; m++) {
        for (int64_t i = 0; i < K; i++)
            for (int64_t c = 0; c < G; c++)
                for (int64_t j = 0; j < K; j++)
                    w[((((m / 8) * K + i) * G + c) * K + j) * 8 + m % 8] =
                        wt[((m * G + c) * K + i) * K + j];
        bias_out[m] = bias ? bias[m] : 0.0f;
    }
}

static inline float act1(const frt_blkgc_geom *g, float v) {
    if (g->act == FRT_BLKGC_RELU) return 0.0f > v ? 0.0f : v;
    if (g->act == FRT_BLKGC_CLIP) {
        float t = g->lo > v ? g->lo : v;
        return g->hi < t ? g->hi : t;
    }
    return v;
}

void frt_blkgc_portable(const float *x, const float *w, const float *bias, float *y,
                        const frt_blkgc_geom *g, int64_t m0, int64_t m1) {
    int64_t G = g->G, K = g->K, S = g->S, H = g->H, W = g->W, OH = g->OH, OW = g->OW;
    for (int64_t m = m0; m < m1; m++) {
        const float *wm = w + m * K * G * K * 8;
        float *ym = y + m * OH * OW * 8;
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++)
                for (int l = 0; l < 8; l++) {
                    int64_t c0 = (m * 8 + l) / G * G; /* the group's first input channel */
                    float acc = bias[m * 8 + l];
                    for (int64_t i = 0; i < K; i++) {
                        int64_t ih = oh * S - g->pt + i;
                        if (ih < 0 || ih >= H) continue;
                        for (int64_t c = 0; c < G; c++)
                            for (int64_t j = 0; j < K; j++) {
                                int64_t iw = ow * S - g->pl + j;
                                if (iw < 0 || iw >= W) continue;
                                int64_t ci = c0 + c;
                                acc = fmaf(x[(((ci / 8) * H + ih) * W + iw) * 8 + ci % 8],
                                           wm[((i * G + c) * K + j) * 8 + l], acc);
                            }
                    }
                    ym[(oh * OW + ow) * 8 + l] = act1(g, acc);
                }
    }
}

static const frt_blkgc_variant g_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "_avx2", frt_blkgc_avx2},
#endif
#endif
    {FRT_ISA_PORTABLE, "", frt_blkgc_portable},
};

const frt_blkgc_variant *frt_blkgc_variant_get(frt_isa cap) {
    return FRT_PICK_VARIANT(g_variants, cap);
}

frt_blkgc_fn frt_blkgc_get(frt_isa cap, const frt_blkgc_geom *g) {
    const frt_blkgc_variant *v = frt_blkgc_variant_get(cap);
    return v->isa == FRT_ISA_PORTABLE || frt_blkgc_simd_covers(g) ? v->run : frt_blkgc_portable;
}
