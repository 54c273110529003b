/* Depthwise convolution, portable: W [M, 1, kh, kw], group == C, output channel m reads input
 * channel m / (M / C) (channel multiplier M / C). Any kernel size, stride, dilation and padding.
 * Work is split over (batch, output channel) planes. */
#include "conv.h"

#include "runtime/threadpool.h"

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

typedef struct dw_task {
    const frt_conv_params *p;  /* activation off when there is a sum input */
    const frt_conv_params *pa; /* the node's parameters (activation after the sum) */
    const frt_conv_geom *g;
    const float *x, *w, *bias, *z;
    float *y;
} dw_task;

static void dw_plane_task(void *ctx, size_t i) {
    const dw_task *t = ctx;
    const frt_conv_params *p = t->p;
    const frt_conv_geom *g = t->g;
    int64_t n = (int64_t)i / p->M, m = (int64_t)i % p->M;
    int64_t c = m / p->Mg; /* input channel */
    int64_t OHW = g->OH * g->OW;
    frt_conv_dw_plane_ref(p, g, t->x + (n * g->C + c) * g->H * g->W, t->w + m * p->kh * p->kw,
                          t->bias ? t->bias[m] : 0.0f, t->y + (int64_t)i * OHW, 0, g->OH);
    if (t->z) frt_conv_sum_act(t->pa, t->y + (int64_t)i * OHW, t->z + (int64_t)i * OHW, OHW);
}

frt_status frt_conv_depthwise_ref(const frt_step *s, frt_exec *x) {
    const frt_conv_params *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    frt_conv_geom g;
    frt_conv_geometry(p, X, &g);
    const float *w;
    frt_status st = frt_conv_weights(s, x, &w);
    if (st) return st;
    frt_conv_params q = *p; /* with a sum input the activation comes after the sum */
    const float *z = frt_conv_sum(s, x);
    if (z) q.act = 0;
    dw_task t = {&q, p, &g, X->data, w,
                 s->n_in > 2 && s->in[2] >= 0 ? (const float *)x->values[s->in[2]].data : NULL,
                 z, x->values[s->out[0]].data};
    frt_parallel_for(x->tp, (size_t)(g.N * p->M), dw_plane_task, &t);
    return FRT_OK;
}
