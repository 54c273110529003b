/* The stem convolution (few plain input channels -> nChw8c / nChw16c): packing, the portable
 * loop and the variant table (see blkstem.h). */
#include "blkstem.h"

#include <math.h>
#include <string.h>

void frt_blkstem_pack(const float *wt, const float *bias, int64_t M, int64_t C, int64_t KH,
                      int64_t KW, int64_t b, float *w, float *bias_out) {
    int64_t mb = (M + b - 1) / b, kk = KH * KW;
    memset(w, 0, (size_t)(mb * b * C * kk) * sizeof *w);
    memset(bias_out, 0, (size_t)(mb * b) * sizeof *bias_out);
    /* w[m / b][c][i][j][m % b] = wt[m][c][i][j] */
    for (int64_t m = 0; m < M; m++) {
        for (int64_t c = 0; c < C; c++)
            for (int64_t t = 0; t < kk; t++)
                w[(((m / b) * C + c) * kk + t) * b + m % b] = wt[(m * C + c) * kk + t];
        if (bias) bias_out[m] = bias[m];
    }
}

/* x86/vec_avx2.h vsilu, one lane: the same operations in the same order (max_ps(a, b) is
   a > b ? a : b, min_ps(a, b) a < b ? a : b; fnmadd(a, b, c) is fma(-a, b, c)) */
static float silu1(float x) {
    float u = 0.0f - x;
    u = -87.0f > u ? -87.0f : u;
    float t = 89.0f < u ? 89.0f : u;
    const float magic = 12582912.0f;
    float nm = fmaf(t, 1.44269504088896341f, magic);
    float n = nm - magic;
    float r = fmaf(-n, 0.693147182f, t);
    float q = fmaf(0.00832738f, r, 0.04187908f);
    q = fmaf(q, r, 0.1666691f);
    q = fmaf(q, r, 0.49999297f);
    float p = fmaf(q, r * r, r + 1.0f);
    uint32_t b;
    memcpy(&b, &nm, 4);
    b = (b + (uint32_t)(127 - 0x4B400000)) << 23;
    float e;
    memcpy(&e, &b, 4);
    return x / fmaf(p, e, 1.0f);
}

static inline float act1(const frt_blkstem_geom *g, float v) {
    switch (g->act) {
    case FRT_BLKSTEM_RELU: return 0.0f > v ? 0.0f : v;
    case FRT_BLKSTEM_CLIP: {
        float t = g->lo > v ? g->lo : v;
        return g->hi < t ? g->hi : t;
    }
    case FRT_BLKSTEM_SILU: return silu1(v);
    case FRT_BLKSTEM_HARDSWISH: {
        float t = fmaf(v, 1.0f / 6.0f, 0.5f);
        t = 0.0f > t ? 0.0f : t;
        t = 1.0f < t ? 1.0f : t;
        return v * t;
    }
    }
    return v;
}

void frt_blkstem_portable(const float *x, const float *w, const float *bias, float *y,
                          const frt_blkstem_geom *g, int64_t r0, int64_t r1) {
    int64_t C = g->C, H = g->H, W = g->W, OH = g->OH, OW = g->OW, KH = g->KH, KW = g->KW;
    int64_t S = g->S, b = g->B, mbn = (g->M + b - 1) / b;
    for (int64_t oh = r0; oh < r1; oh++)
        for (int64_t mb = 0; mb < mbn; mb++) {
            const float *wm = w + mb * b * C * KH * KW;
            float *yr = y + (mb * OH + oh) * OW * b;
            for (int64_t ow = 0; ow < OW; ow++)
                for (int64_t l = 0; l < b; l++) {
                    float acc = bias[mb * b + l];
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t i = 0; i < KH; i++) {
                            int64_t ih = oh * S - g->pt + i;
                            for (int64_t j = 0; j < KW; j++) {
                                int64_t iw = ow * S - g->pl + j;
                                float xv = ih >= 0 && ih < H && iw >= 0 && iw < W
                                               ? x[(c * H + ih) * W + iw]
                                               : 0.0f;
                                acc = fmaf(xv, wm[((c * KH + i) * KW + j) * b + l], acc);
                            }
                        }
                    yr[ow * b + l] = act1(g, acc);
                }
        }
}

/* best first */
static const frt_blkstem_variant g_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512, "_avx512", 16, frt_blkstem_avx512},
#endif
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "_avx2", 8, frt_blkstem_avx2},
#endif
#endif
    {FRT_ISA_PORTABLE, "", 0, frt_blkstem_portable},
};

const frt_blkstem_variant *frt_blkstem_variant_get(frt_isa cap, int64_t b) {
    size_t n = sizeof g_variants / sizeof *g_variants;
    for (size_t i = 0; i + 1 < n; i++)
        if (g_variants[i].isa <= cap && g_variants[i].block == b) return &g_variants[i];
    return &g_variants[n - 1];
}

frt_blkstem_fn frt_blkstem_get(frt_isa cap, const frt_blkstem_geom *g) {
    const frt_blkstem_variant *v = frt_blkstem_variant_get(cap, g->B);
    return v->isa == FRT_ISA_PORTABLE || frt_blkstem_simd_covers(g) ? v->run
                                                                    : frt_blkstem_portable;
}
