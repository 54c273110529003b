/* Conv helpers shared by the select code (conv.c) and the run-time drivers (conv_gemm.c,
 * conv_depthwise.c): output geometry, weights and residual input of a step, reference
 * activation. Kept apart so the drivers never call back into conv.c. */
#include "conv.h"

#include <math.h>

int64_t frt_conv_out_dim(int64_t in, int64_t k, int64_t s, int64_t d, int auto_pad, int64_t pb,
                         int64_t pe, int64_t *pad_begin) {
    int64_t dk = (k - 1) * d + 1; /* k, d <= MAX_CONV_ATTR: no overflow */
    *pad_begin = 0;
    if (auto_pad == FRT_CONV_PAD_SAME_UPPER || auto_pad == FRT_CONV_PAD_SAME_LOWER) {
        int64_t out = in / s + (in % s != 0);
        int64_t total = ((out - 1) * s - in) + dk; /* (out - 1) * s < in */
        if (total < 0) total = 0;
        *pad_begin = auto_pad == FRT_CONV_PAD_SAME_UPPER ? total / 2 : total - total / 2;
        return out;
    }
    if (auto_pad == FRT_CONV_PAD_VALID) pb = pe = 0;
    *pad_begin = pb;
    int64_t num;
    if (__builtin_add_overflow(in - dk, pb + pe, &num)) return -1;
    return num < 0 ? 0 : num / s + 1;
}

void frt_conv_geometry(const frt_conv_params *p, const frt_value *x, frt_conv_geom *g) {
    g->N = x->dims[0];
    g->C = x->dims[1];
    if (p->nsp == 1) {
        g->H = 1;
        g->W = x->dims[2];
        g->OH = 1;
        g->pt = 0;
    } else {
        g->H = x->dims[2];
        g->W = x->dims[3];
        g->OH = frt_conv_out_dim(g->H, p->kh, p->sh, p->dh, p->auto_pad, p->pt, p->pb, &g->pt);
    }
    g->OW = frt_conv_out_dim(g->W, p->kw, p->sw, p->dw, p->auto_pad, p->pl, p->pr, &g->pl);
}

void frt_conv_act_ref(const frt_conv_params *p, float *y, int64_t n) {
    if (p->act) {
        float lo = p->lo, hi = p->hi;
        for (int64_t i = 0; i < n; i++) {
            float v = y[i];
            v = v < lo ? lo : v;
            y[i] = v > hi ? hi : v;
        }
    }
    frt_conv_post(p, y, n);
}

frt_status frt_conv_weights(const frt_step *s, const frt_exec *x, const float **w) {
    const frt_conv_params *p = s->k.params;
    if (p->w) {
        *w = p->w;
        return FRT_OK;
    }
    const frt_value *v = &x->values[s->in[1]];
    int64_t want[4] = {p->M, p->Cg, p->kh, p->kw};
    int rank = p->nsp + 2;
    int ok = v->rank == rank;
    for (int i = 0; ok && i < rank; i++)
        ok = v->dims[i] == (p->nsp == 1 && i == 2 ? p->kw : want[i]);
    if (!ok) {
        char buf[128];
        return frt_step_fail(s, FRT_ERR_SHAPE,
                             "W has shape %s at run time, not the shape seen at load",
                             frt_shape_str(v, buf, sizeof buf));
    }
    *w = v->data;
    return FRT_OK;
}

const float *frt_conv_sum(const frt_step *s, const frt_exec *x) {
    return s->n_in > 3 && s->in[3] >= 0 ? (const float *)x->values[s->in[3]].data : NULL;
}

void frt_conv_sum_act(const frt_conv_params *p, float *y, const float *z, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] += z[i];
    frt_conv_act_ref(p, y, n);
}
