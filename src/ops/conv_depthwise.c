/* Depthwise convolution: W [M, 1, kh, kw], group == C, output channel m reads input channel
 * m / (M / C) (channel multiplier M / C). Any kernel size, stride, dilation and padding through
 * the portable plane kernel; through the tier's fast paths (frt_conv_dw_pick) where they apply:
 *   channel-blocked (multiplier 1, 3x3 or 5x5, dilation 1, stride 1 or 2 in both axes): blocks of
 *     var->lanes channels (16 with AVX-512, 8 with AVX2), x86/conv_dw_impl.h;
 *   otherwise 3x3 dilation-1 stride 1/2 (AVX2): single planes, or blocks of 8 channels for narrow
 *     planes.
 * Work is split over units (channel blocks, then single planes) of every image. */
#include "conv.h"

#include <stdint.h>

#include "util/threadpool.h"

void frt_conv_dw_plane_ref(const frt_conv_params *p, const frt_conv_geom *g,
                           const float *restrict x, const float *restrict w, float b,
                           float *restrict y, int64_t oh0, int64_t oh1) {
    const int64_t OW = g->OW, sw = p->sw;
    for (int64_t oh = oh0; oh < oh1; oh++) {
        float *restrict yr = y + oh * OW;
        for (int64_t ow = 0; ow < OW; ow++) yr[ow] = b;
        for (int64_t ky = 0; ky < p->kh; ky++) {
            int64_t ih = oh * p->sh - g->pt + ky * p->dh;
            if (ih < 0 || ih >= g->H) continue;
            const float *restrict xr = x + ih * g->W;
            for (int64_t kx = 0; kx < p->kw; kx++) {
                const float wv = w[ky * p->kw + kx];
                /* output columns whose input column ow*sw + off lies in [0, W) */
                int64_t off = kx * p->dw - g->pl;
                int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
                int64_t hi = g->W - 1 - off < 0 ? 0 : (g->W - 1 - off) / sw + 1;
                if (hi > OW) hi = OW;
                const float *restrict xs = xr + off;
                if (sw == 1)
                    for (int64_t ow = lo; ow < hi; ow++) yr[ow] += wv * xs[ow];
                else
                    for (int64_t ow = lo; ow < hi; ow++) yr[ow] += wv * xs[ow * sw];
            }
        }
        frt_conv_act_ref(p, yr, OW);
    }
}

/* Best first; the portable tier has no fast path. */
static const frt_dw_variant dw_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512, "conv_depthwise_avx512", frt_dw3x3_plan_avx2, frt_dw3x3_plane_avx2,
     frt_dw3x3_block8_avx2, 16, frt_dwb_band_avx512, frt_dwb_run_avx512},
#endif
#if FRT_TIER_AVX2
    /* With 8 lanes the channel-blocked path only runs 5x5 kernels (3x3 is never `narrow` below),
     * so a selective build without kernel class DW5 (5x5 nodes refused at load, conv.c) leaves
     * it out of this entry: the same nodes take the same row kernels as in the full build. */
    {FRT_ISA_AVX2, "conv_depthwise_avx2", frt_dw3x3_plan_avx2, frt_dw3x3_plane_avx2,
     frt_dw3x3_block8_avx2, 8,
#if FRT_KERNEL_BUILT(Conv, DW5) || FRT_KERNEL_BUILT(FusedConv, DW5)
     frt_dwb_band_avx2, frt_dwb_run_avx2},
#else
     NULL, NULL},
#endif
#endif
#endif
    {FRT_ISA_PORTABLE, "conv_depthwise", NULL, NULL, NULL, 0, NULL, NULL},
};

const frt_dw_variant *frt_conv_dw_pick(frt_isa cap) {
    const frt_dw_variant *v = FRT_PICK_VARIANT(dw_variants, cap);
    return v->plane ? v : NULL;
}

typedef struct dw_task {
    const frt_conv_params *p;  /* activation off when there is a sum input */
    const frt_conv_params *pa; /* the node's parameters (activation after the sum) */
    const frt_conv_geom *g;
    const frt_dw_variant *var;
    const void *plan;
    const float *x, *w, *bias, *z;
    float *y;
    int fast;      /* 0: portable planes; 1 or 2: 3x3 stride of the fast path */
    int blk_k;     /* kernel size of the channel-blocked path (all units), 0 when not used */
    int64_t nblk;  /* blocks of 8 channels per image (block8), 0 when not used */
    int64_t units; /* work units per image: nblk blocks, then the remaining single planes */
    int64_t chunk; /* units per task */
    int64_t band;  /* output rows per band of block8 */
} dw_task;

static void dw_unit(const dw_task *t, int64_t n, int64_t u) {
    const frt_conv_params *p = t->p;
    const frt_conv_geom *g = t->g;
    int64_t HW = g->H * g->W, OHW = g->OH * g->OW;
    if (t->blk_k) {
        int64_t c0 = t->var->lanes * u;
        int64_t nc = p->M - c0 < t->var->lanes ? p->M - c0 : t->var->lanes;
        t->var->blk_run(p, g, t->x + (n * g->C + c0) * HW, t->w + c0 * t->blk_k * t->blk_k,
                        t->bias ? t->bias + c0 : NULL, t->y + (n * p->M + c0) * OHW, nc,
                        t->band, t->blk_k, (int)p->sw);
        if (t->z)
            frt_conv_sum_act(t->pa, t->y + (n * p->M + c0) * OHW, t->z + (n * p->M + c0) * OHW,
                             nc * OHW);
        return;
    }
    if (u < t->nblk) {
        int64_t c0 = 8 * u;
        t->var->block8(t->plan, p, g, t->x + (n * g->C + c0) * HW, t->w + c0 * 9,
                       t->bias ? t->bias + c0 : NULL, t->y + (n * p->M + c0) * OHW, t->fast,
                       t->band);
        if (t->z)
            frt_conv_sum_act(t->pa, t->y + (n * p->M + c0) * OHW, t->z + (n * p->M + c0) * OHW,
                             8 * OHW);
        else
            frt_conv_post(p, t->y + (n * p->M + c0) * OHW, 8 * OHW); /* block8: clamp only */
        return;
    }
    int64_t m = 8 * t->nblk + (u - t->nblk);
    const float *xp = t->x + (n * g->C + m / p->Mg) * HW;
    const float *wp = t->w + m * p->kh * p->kw;
    float b = t->bias ? t->bias[m] : 0.0f;
    float *yp = t->y + (n * p->M + m) * OHW;
    if (t->fast) {
        t->var->plane(t->plan, p, g, xp, wp, b, yp, t->fast); /* clamp only */
        if (!t->z) frt_conv_post(p, yp, OHW);
    } else {
        frt_conv_dw_plane_ref(p, g, xp, wp, b, yp, 0, g->OH);
    }
    if (t->z) frt_conv_sum_act(t->pa, yp, t->z + (n * p->M + m) * OHW, OHW);
}

static void dw_task_fn(void *ctx, size_t i) {
    const dw_task *t = ctx;
    int64_t total = t->g->N * t->units;
    int64_t i0 = (int64_t)i * t->chunk, i1 = i0 + t->chunk < total ? i0 + t->chunk : total;
    for (int64_t k = i0; k < i1; k++) dw_unit(t, k / t->units, k % t->units);
}

frt_status frt_conv_depthwise_run(const frt_step *s, frt_exec *x) {
    const frt_conv_params *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    frt_conv_geom g;
    frt_conv_geometry(p, X, &g);
    _Alignas(64) unsigned char plan[FRT_DW_PLAN_BYTES];
    dw_task t;
    frt_conv_params q = *p; /* with a sum input the activation comes after the sum */
    t.z = frt_conv_sum(s, x);
    if (t.z) {
        q.act = 0;
        q.post = FRT_CONV_POST_NONE;
    }
    t.p = &q;
    t.pa = p;
    t.g = &g;
    t.var = p->dwvar;
    t.plan = plan;
    t.x = X->data;
    frt_status st = frt_conv_weights(s, x, &t.w);
    if (st) return st;
    t.bias = s->n_in > 2 && s->in[2] >= 0 ? (const float *)x->values[s->in[2]].data : NULL;
    t.y = x->values[s->out[0]].data;
    t.fast = 0;
    t.blk_k = 0;
    t.nblk = 0;
    t.band = 0;
    /* channel-blocked path; the bounds keep its buffer arithmetic far from overflow */
    if (t.var && t.var->blk_run && p->Mg == 1 && p->kh == p->kw && (p->kh == 3 || p->kh == 5) &&
        p->dh == 1 && p->dw == 1 && p->sh == p->sw && (p->sw == 1 || p->sw == 2) &&
        g.W < ((int64_t)1 << 28) && g.pl < ((int64_t)1 << 28) && g.OW < ((int64_t)1 << 28)) {
        /* 3x3: the row kernels below are faster on wide planes (the transposes of the blocked
         * path cost more than 9 FMAs per output) and as fast with 8 lanes */
        int narrow = g.OW * p->sw <= FRT_DW_BLOCK_MAXW && t.var->lanes > 8;
        if (p->kh == 5 || narrow) {
            t.band = t.var->blk_band(&g, (int)p->kh, (int)p->sw);
            if (t.band > 0) t.blk_k = (int)p->kh;
        }
    }
    /* column indices go through 32-bit lanes in the fast paths' masked loads */
    if (!t.blk_k && t.var && p->kh == 3 && p->kw == 3 && p->dh == 1 && p->dw == 1 && p->sh == p->sw &&
        (p->sw == 1 || p->sw == 2) && g.W < INT32_MAX / 4 && g.pl < INT32_MAX / 4)
        t.fast = (int)p->sw;
    if (t.fast) {
        t.band = t.var->plan(plan, &g, t.fast);
        if (p->Mg == 1 && t.band > 0) t.nblk = p->M / 8;
    }
    t.units = t.blk_k ? (p->M + t.var->lanes - 1) / t.var->lanes : t.nblk + (p->M - 8 * t.nblk);
    int64_t total = g.N * t.units;
    double flops = (double)(g.N * p->M * g.OH * g.OW) * (double)(2 * p->kh * p->kw);
    int nth = frt_par_threads(x->tp, flops * FRT_PAR_NS_PER_FLOP);
    t.chunk = nth > 1 ? (total + 4 * nth - 1) / (4 * nth) : total;
    if (t.chunk < 1) t.chunk = 1;
    frt_parallel_for(nth > 1 ? x->tp : NULL, (size_t)((total + t.chunk - 1) / t.chunk), dw_task_fn,
                     &t);
    return FRT_OK;
}
