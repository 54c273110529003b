/* Depthwise convolution on channel-blocked activations: the portable loop, the weight packing
 * and the variant table (see blkdw.h). */
#include <math.h>
#include <string.h>

#include "blkdw.h"

void frt_blkdw_pack(const float *wt, const float *bias, int64_t C, int64_t K, int64_t b,
                    float *w, float *bias_out) {
    int64_t cb = (C + b - 1) / b;
    memset(w, 0, (size_t)(cb * K * K * b) * sizeof *w);
    memset(bias_out, 0, (size_t)(cb * b) * sizeof *bias_out);
    for (int64_t c = 0; c < C; c++) {
        int64_t k = c / b, l = c % b;
        for (int64_t t = 0; t < K * K; t++) w[(k * K * K + t) * b + l] = wt[c * K * K + t];
        if (bias) bias_out[c] = bias[c];
    }
}

static float act1(const frt_blkdw_geom *g, float v) {
    switch (g->act) {
    case FRT_BLKDW_RELU: return v < 0.0f ? 0.0f : v;
    case FRT_BLKDW_CLIP: return v < g->lo ? g->lo : v > g->hi ? g->hi : v;
    case FRT_BLKDW_SILU: return v == -INFINITY ? NAN : v / (1.0f + expf(-v));
    case FRT_BLKDW_HARDSWISH: {
        float h = v / 6.0f + 0.5f;
        return v * (h < 0.0f ? 0.0f : h > 1.0f ? 1.0f : h);
    }
    }
    return v;
}

void frt_blkdw_portable(const float *x, const float *w, const float *bias, float *y,
                        const frt_blkdw_geom *g, int64_t b) {
    int64_t cb = (g->C + b - 1) / b, K = g->K, S = g->S;
    for (int64_t k = 0; k < cb; k++) {
        const float *xk = x + k * g->H * g->W * b, *wk = w + k * K * K * b;
        float *yk = y + k * g->OH * g->OW * b;
        int64_t valid = g->C - k * b < b ? g->C - k * b : b;
        for (int64_t oh = 0; oh < g->OH; oh++)
            for (int64_t ow = 0; ow < g->OW; ow++) {
                float *yo = yk + (oh * g->OW + ow) * b;
                for (int64_t l = 0; l < b; l++) {
                    if (l >= valid) {
                        yo[l] = 0.0f;
                        continue;
                    }
                    float acc = bias[k * b + l];
                    for (int64_t i = 0; i < K; i++) {
                        int64_t ih = oh * S - g->pt + i;
                        if (ih < 0 || ih >= g->H) continue;
                        for (int64_t j = 0; j < K; j++) {
                            int64_t iw = ow * S - g->pl + j;
                            if (iw < 0 || iw >= g->W) continue;
                            acc += wk[(i * K + j) * b + l] * xk[(ih * g->W + iw) * b + l];
                        }
                    }
                    yo[l] = act1(g, acc);
                }
            }
    }
}

static const frt_blkdw_variant blkdw_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512, "_avx512", 16, frt_blkdw_avx512},
#endif
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "_avx2", 8, frt_blkdw_avx2},
#endif
#endif
    {FRT_ISA_PORTABLE, "", 0, frt_blkdw_portable},
};

const frt_blkdw_variant *frt_blkdw_variant_get(frt_isa cap, int64_t b) {
    const frt_blkdw_variant *v = FRT_PICK_VARIANT(blkdw_variants, cap);
    while (v->block && v->block != b) v++; /* the table ends with the portable loop (any b) */
    return v;
}

frt_blkdw_fn frt_blkdw_get(frt_isa cap, int64_t b, int64_t K, int64_t S) {
    const frt_blkdw_variant *v = frt_blkdw_variant_get(cap, b);
    if (v->isa != FRT_ISA_PORTABLE && ((K != 3 && K != 5) || (S != 1 && S != 2)))
        return frt_blkdw_portable;
    return v->run;
}
