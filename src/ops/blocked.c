/* Loops over channel-blocked activations: the portable variants and the variant table
 * (see blocked.h). */
#include "blocked.h"

#include <float.h>

void frt_blk_chanmul_portable(const float *x, const float *g, float *y, int64_t C, int64_t S,
                              int64_t b) {
    int64_t cb = (C + b - 1) / b;
    for (int64_t k = 0; k < cb; k++) {
        float f[64];
        int64_t valid = C - k * b < b ? C - k * b : b;
        for (int64_t l = 0; l < b; l++) f[l] = l < valid ? g[k * b + l] : 0.0f;
        const float *xr = x + k * S * b;
        float *yr = y + k * S * b;
        for (int64_t s = 0; s < S; s++)
            for (int64_t l = 0; l < b; l++)
                yr[s * b + l] = l < valid ? xr[s * b + l] * f[l] : 0.0f;
    }
}

void frt_blk_affine_portable(const float *x, const float *a, const float *c, float *y,
                             int64_t C, int64_t S, int64_t b, int64_t k0, int64_t k1, int relu) {
    for (int64_t k = k0; k < k1; k++) {
        int64_t valid = C - k * b < b ? C - k * b : b;
        const float *xr = x + k * S * b;
        float *yr = y + k * S * b;
        for (int64_t s = 0; s < S; s++)
            for (int64_t l = 0; l < b; l++) {
                float p = xr[s * b + l] * a[k * b + l]; /* separate statements: no contraction */
                float v = p + c[k * b + l];
                if (relu) v = v > 0.0f ? v : 0.0f;
                yr[s * b + l] = l < valid ? v : 0.0f;
            }
    }
}

void frt_blk_pool_portable(const frt_blk_pool_geom *g, const float *x, float *y, int64_t k0,
                           int64_t k1, int64_t b) {
    const int64_t H = g->H, W = g->W, OH = g->OH, OW = g->OW;
    if (frt_blk_pool_is_global(g)) {
        const int64_t S = H * W;
        float inv = 1.0f / (float)S;
        for (int64_t k = k0; k < k1; k++) {
            int64_t valid = g->C - k * b < b ? g->C - k * b : b;
            const float *xb = x + k * S * b;
            for (int64_t l = 0; l < b; l++) {
                float a[4];
                for (int q = 0; q < 4; q++) a[q] = g->max ? -FLT_MAX : 0.0f;
                for (int64_t s = 0; s < S; s++) {
                    float v = xb[s * b + l];
                    if (g->max) a[s & 3] = v > a[s & 3] ? v : a[s & 3];
                    else a[s & 3] += v;
                }
                float r = g->max ? FRT_BLK_MAX(FRT_BLK_MAX(a[0], a[1]), FRT_BLK_MAX(a[2], a[3]))
                                 : ((a[0] + a[1]) + (a[2] + a[3])) * inv;
                y[k * b + l] = l < valid ? r : 0.0f;
            }
        }
        return;
    }
    for (int64_t k = k0; k < k1; k++) {
        int64_t valid = g->C - k * b < b ? g->C - k * b : b;
        const float *xb = x + k * H * W * b;
        float *yb = y + k * OH * OW * b;
        for (int64_t oh = 0; oh < OH; oh++) {
            int64_t ilo, ihi, clo, chi;
            frt_blk_pool_range(oh, g->sh, g->ph, g->kh, g->dh, 0, H, &ilo, &ihi);
            frt_blk_pool_range(oh, g->sh, g->ph, g->kh, g->dh, g->ch0, g->ch1, &clo, &chi);
            for (int64_t ow = 0; ow < OW; ow++) {
                int64_t jlo, jhi, dlo, dhi;
                frt_blk_pool_range(ow, g->sw, g->pw, g->kw, g->dw, 0, W, &jlo, &jhi);
                frt_blk_pool_range(ow, g->sw, g->pw, g->kw, g->dw, g->cw0, g->cw1, &dlo, &dhi);
                float acc[64];
                for (int64_t l = 0; l < b; l++) acc[l] = g->max ? -FLT_MAX : 0.0f;
                for (int64_t i = ilo; i < ihi; i++) {
                    const float *row = xb + (oh * g->sh - g->ph + i * g->dh) * W * b;
                    for (int64_t j = jlo; j < jhi; j++) {
                        const float *v = row + (ow * g->sw - g->pw + j * g->dw) * b;
                        if (g->max)
                            for (int64_t l = 0; l < b; l++) acc[l] = v[l] > acc[l] ? v[l] : acc[l];
                        else
                            for (int64_t l = 0; l < b; l++) acc[l] += v[l];
                    }
                }
                int64_t cnt = (chi - clo) * (dhi - dlo);
                float inv = cnt > 0 ? 1.0f / (float)cnt : 0.0f;
                float *o = yb + (oh * OW + ow) * b;
                for (int64_t l = 0; l < b; l++)
                    o[l] = l >= valid ? 0.0f : g->max ? acc[l] : acc[l] * inv;
            }
        }
    }
}

void frt_blk_gather_portable(const float *const *x, float *const *y, const frt_blk_gchunk *ch,
                             const frt_blk_gsrc *src, int64_t q0, int64_t q1, int64_t S,
                             int64_t b) {
    for (int64_t q = q0; q < q1; q++) {
        const frt_blk_gchunk *c = &ch[q];
        float *yc = y[c->out] + c->blk * S * b + c->sub * 8;
        for (int64_t s = 0; s < S; s++)
            for (int l = 0; l < 8; l++) yc[s * b + l] = 0.0f;
        for (int32_t j = c->first; j < c->first + c->n; j++) {
            const frt_blk_gsrc *g = &src[j];
            const float *xc = x[g->in] + g->blk * S * b + g->sub * 8;
            for (int64_t s = 0; s < S; s++)
                for (int l = 0; l < 8; l++)
                    if (g->mask >> l & 1) yc[s * b + l] = xc[s * b + g->lane[l]];
        }
    }
}

static const frt_blk_variant blk_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512, "_avx512", 16, frt_blk_chanmul_avx512, frt_blk_pool_avx512, "_avx512",
     frt_blk_affine_avx2, frt_blk_gather_avx2},
#endif
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "_avx2", 8, frt_blk_chanmul_avx2, frt_blk_pool_avx2, "_avx2",
     frt_blk_affine_avx2, frt_blk_gather_avx2},
#endif
#endif
    {FRT_ISA_PORTABLE, "", 0, frt_blk_chanmul_portable, frt_blk_pool_portable, "",
     frt_blk_affine_portable, frt_blk_gather_portable},
};

const frt_blk_variant *frt_blk_variant_get(frt_isa cap, int64_t b) {
    const frt_blk_variant *v = FRT_PICK_VARIANT(blk_variants, cap);
    while (v->block && v->block != b) v++; /* the table ends with the portable loops (any b) */
    return v;
}
