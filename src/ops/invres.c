/* flatrt::InvertedResidual: MobileNetV2's inverted-residual block as one node, made by
 * frt_pass_fuse_invres (passes/fuse_cnn.c) from
 *
 *   E = act(Conv 1x1 (X, We, Be))                   C -> E channels
 *   D = act(Conv 3x3 depthwise (E, Wd, Bd))         group E, stride 1 or 2, the node's attributes
 *   Y = Conv 1x1 (D, Wp, Bp) [+ Z]                  E -> M channels (Z: the residual input)
 *
 * Inputs X, We, Be, Wd, Bd, Wp, Bp[, Z] (biases may be omitted), one output Y; attributes those of
 * the depthwise Conv (kernel_shape, strides, pads, dilations 1, group E); act (node->act) NONE,
 * RELU or CLIP, the same for both convolutions that have one. The oneDNN provider runs it on
 * nChw8c in row strips so E and D never leave the cache (onednn/irconv.c, blkir.h); this builtin
 * kernel is the plain-layout reference (whole E and D images in step scratch): the pass makes the
 * node only where the provider takes it (and only with FRT_FUSE_IR=1), so the builtin runs only
 * if a selection declines. */
#include <string.h>

#include "op.h"

typedef struct ir_params {
    int64_t S, pt, pl;
    int act;
    float lo, hi;
} ir_params;

static float ir_act(const ir_params *p, float v) {
    if (p->act == FRT_ACT_RELU) return v < 0.0f ? 0.0f : v;
    if (p->act == FRT_ACT_CLIP) return v < p->lo ? p->lo : v > p->hi ? p->hi : v;
    return v;
}

static frt_status ir_attrs(const frt_op_ctx *c, int64_t *S, int64_t pads[4]) {
    size_t n = 0;
    const int64_t *st = frt_attr_ints(c->node, "strides", &n);
    *S = st && n == 2 ? st[0] : 1;
    if (st && (n != 2 || st[0] != st[1] || (st[0] != 1 && st[0] != 2)))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "strides must be [1, 1] or [2, 2]");
    const int64_t *pd = frt_attr_ints(c->node, "pads", &n);
    for (int i = 0; i < 4; i++) pads[i] = pd && n == 4 ? pd[i] : 0;
    if (pd && n != 4) return frt_op_fail(c, FRT_ERR_MALFORMED, "pads must have 4 values");
    for (int i = 0; i < 4; i++)
        if (pads[i] < 0 || pads[i] > 2)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "pads must be in [0, 2]");
    return FRT_OK;
}

static frt_status ir_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 7, 8, 1, 1);
    if (st) return st;
    static const int req[] = {0, 1, 3, 5};
    for (int i = 0; i < 4; i++)
        if ((st = frt_op_check_input(c, req[i], FRT_FLOAT32))) return st;
    for (int i = 2; i < c->n_in; i += 2)
        if (i != 3 && i != 5 && c->in[i] && (st = frt_op_check_input(c, i, FRT_FLOAT32)))
            return st;
    const frt_value *x = c->in[0], *we = c->in[1], *wd = c->in[3], *wp = c->in[5];
    if (x->rank != 4 || we->rank != 4 || wd->rank != 4 || wp->rank != 4)
        return frt_op_fail(c, FRT_ERR_SHAPE, "X and the three weights must have rank 4");
    int64_t S, pads[4];
    if ((st = ir_attrs(c, &S, pads))) return st;
    if (wd->dims[2] != 3 || wd->dims[3] != 3 || wd->dims[1] != 1 || we->dims[2] != 1 ||
        we->dims[3] != 1 || wp->dims[2] != 1 || wp->dims[3] != 1 ||
        (x->dims[1] >= 0 && we->dims[1] != x->dims[1]) || wd->dims[0] != we->dims[0] ||
        wp->dims[1] != we->dims[0])
        return frt_op_fail(c, FRT_ERR_SHAPE, "weights do not chain X -> 1x1 -> 3x3 depthwise -> 1x1");
    int64_t d[4] = {x->dims[0], wp->dims[0], -1, -1};
    for (int i = 0; i < 2; i++) {
        int64_t in = x->dims[2 + i];
        if (in >= 0) {
            int64_t span = in + pads[i] + pads[2 + i] - 3;
            if (span < 0) return frt_op_fail(c, FRT_ERR_SHAPE, "image smaller than the kernel");
            d[2 + i] = span / S + 1;
        }
    }
    frt_op_set_shape(c->out[0], FRT_FLOAT32, 4, d);
    const frt_value *z = c->n_in > 7 ? c->in[7] : NULL;
    if (z) {
        if ((st = frt_op_check_input(c, 7, FRT_FLOAT32))) return st;
        for (int i = 0; i < 4 && z->rank == 4; i++)
            if (z->dims[i] >= 0 && d[i] >= 0 && z->dims[i] != d[i])
                return frt_op_fail(c, FRT_ERR_SHAPE, "the residual input differs from the output");
        if (z->rank != 4) return frt_op_fail(c, FRT_ERR_SHAPE, "the residual input must have rank 4");
    }
    return FRT_OK;
}

static size_t ir_scratch(const frt_step *s, const frt_value *values) {
    const frt_value *X = &values[s->in[0]], *Y = &values[s->out[0]], *We = &values[s->in[1]];
    int64_t E = We->dims[0];
    return (size_t)(E * (X->dims[2] * X->dims[3] + Y->dims[2] * Y->dims[3])) * sizeof(float);
}

static frt_status ir_run(const frt_step *s, frt_exec *x) {
    const ir_params *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]], *Y = &x->values[s->out[0]];
    const float *we = x->values[s->in[1]].data, *wd = x->values[s->in[3]].data,
                *wp = x->values[s->in[5]].data;
    const float *be = s->in[2] >= 0 ? x->values[s->in[2]].data : NULL;
    const float *bd = s->in[4] >= 0 ? x->values[s->in[4]].data : NULL;
    const float *bp = s->in[6] >= 0 ? x->values[s->in[6]].data : NULL;
    const float *zp = s->n_in > 7 && s->in[7] >= 0 ? x->values[s->in[7]].data : NULL;
    int64_t N = X->dims[0], C = X->dims[1], H = X->dims[2], W = X->dims[3];
    int64_t E = x->values[s->in[1]].dims[0], M = Y->dims[1], OH = Y->dims[2], OW = Y->dims[3];
    float *e = x->scratch, *d = e + E * H * W;
    for (int64_t n = 0; n < N; n++) {
        const float *xn = (const float *)X->data + n * C * H * W;
        for (int64_t k = 0; k < E; k++)
            for (int64_t q = 0; q < H * W; q++) {
                float acc = be ? be[k] : 0.0f;
                for (int64_t c = 0; c < C; c++) acc += we[k * C + c] * xn[c * H * W + q];
                e[k * H * W + q] = ir_act(p, acc);
            }
        for (int64_t k = 0; k < E; k++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    float acc = bd ? bd[k] : 0.0f;
                    for (int64_t i = 0; i < 3; i++) {
                        int64_t ih = oh * p->S - p->pt + i;
                        if (ih < 0 || ih >= H) continue;
                        for (int64_t j = 0; j < 3; j++) {
                            int64_t iw = ow * p->S - p->pl + j;
                            if (iw >= 0 && iw < W)
                                acc += wd[k * 9 + i * 3 + j] * e[(k * H + ih) * W + iw];
                        }
                    }
                    d[(k * OH + oh) * OW + ow] = ir_act(p, acc);
                }
        float *yn = (float *)Y->data + n * M * OH * OW;
        const float *zn = zp ? zp + n * M * OH * OW : NULL;
        for (int64_t m = 0; m < M; m++)
            for (int64_t q = 0; q < OH * OW; q++) {
                float acc = bp ? bp[m] : 0.0f;
                for (int64_t k = 0; k < E; k++) acc += wp[m * E + k] * d[k * OH * OW + q];
                yn[m * OH * OW + q] = zn ? acc + zn[m * OH * OW + q] : acc;
            }
    }
    return FRT_OK;
}

static frt_status ir_select(frt_op_ctx *c, frt_kernel *k) {
    int64_t S, pads[4];
    frt_status st = ir_attrs(c, &S, pads);
    if (st) return st;
    int a = c->node->act.kind;
    if (a != FRT_ACT_NONE && a != FRT_ACT_RELU && a != FRT_ACT_CLIP)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "activation must be none, Relu or Clip");
    ir_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for kernel parameters");
    *p = (ir_params){.S = S, .pt = pads[0], .pl = pads[1], .act = a, .lo = c->node->act.lo,
                     .hi = c->node->act.hi};
    k->params = p;
    k->fn = ir_run;
    k->scratch = ir_scratch;
    k->name = "invres_ref";
    return FRT_OK;
}

FRT_OP_IMPL(invres, InvertedResidual, ir_infer, ir_select);
