/* Fusion passes over the IR.
 *
 *   Conv -> BatchNormalization       BN folded into new Conv weights and bias (model-owned copy)
 *   Conv|Gemm|BatchNormalization -> Relu | Clip
 *                                    activation applied by the producer's kernel (node->act;
 *                                    BatchNormalization in inference mode only)
 *   Conv -> Add(., Z) [-> Relu|Clip] flatrt::FusedConv: act(conv(X) + B + Z), Z of the output's
 *                                    shape (residual connections), written in the conv's tiles
 *   Conv -> SiLU | HardSwish | HardSigmoid  in the conv epilogue (fuse_cnn.c)
 *   grouped Conv -> GlobalAveragePool (and other readers)
 *                                    flatrt::ConvMean: the pool as the conv's second output
 *                                    (squeeze-and-excitation; fuse_cnn.c)
 *   Conv 1x1 -> [zero Pad ->] AveragePool  the pool moved in front of the conv (fuse_pool.c)
 *   Pad (zeros) -> AveragePool       the pads folded into the pool, count_include_pad (fuse_pool.c)
 *   S = Sigmoid(X), Mul(X, S)        flatrt::Silu(X) = X sigmoid(X) in one pass (SiLU / Swish of
 *                                    EfficientNet and friends), float32, S read by the Mul only
 *   LayerNorm, GELU, MatMul+bias     transformer patterns: fuse_xf.c (frt_pass_fuse_xf)
 *   [Concat ->] Reshape -> Transpose -> Reshape [-> Slice | Split]
 *                                    channel shuffle -> flatrt::ChannelShuffle, one copy
 *                                    (fuse_shuffle.c, frt_pass_fuse_shuffle)
 *   Mul(F, X), F broadcast over X    inputs swapped to Mul(X, F) (after the fusions above), so the
 *                                    planner may write the product over X in place (a squeeze-
 *                                    and-excitation scale: torchvision's `scale * input`)
 *
 * A producer is fused only when its output feeds nothing else and is not a graph output. The
 * consumer is removed and the producer writes the consumer's output value instead. */
#include <math.h>
#include <string.h>

#include "ops/op.h"
#include "passes/passes.h"

/* The single live consumer of value v, or NULL. */
static frt_node *sole_consumer(frt_graph *g, int32_t v) {
    if (v < 0 || g->values[v].is_output || g->values[v].n_uses != 1) return NULL;
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] == v) return n;
    }
    return NULL;
}

static const float *const_f32(const frt_graph *g, int32_t v, int64_t numel) {
    if (v < 0) return NULL;
    const frt_ir_value *x = &g->values[v];
    if (x->kind != FRT_VALUE_CONST || x->v.dtype != FRT_FLOAT32 || !x->v.data) return NULL;
    if (numel >= 0 && x->v.numel != numel) return NULL;
    return x->v.data;
}

/* Makes `consumer` disappear: the producer now defines the consumer's output 0. */
static void bypass(frt_graph *g, frt_node *producer, frt_node *consumer) {
    int32_t out = consumer->out[0];
    int32_t pid = g->values[producer->out[0]].producer;
    g->values[producer->out[0]].producer = -1;
    g->values[producer->out[0]].n_uses = 0;
    producer->out[0] = out;
    g->values[out].producer = pid;
    consumer->dead = true;
}

static int32_t new_const(frt_graph *g, const char *name, int32_t rank, const int64_t *dims,
                         float *data) {
    int32_t id = frt_graph_add_value(g, name, FRT_VALUE_CONST);
    if (id < 0) return -1;
    frt_value_set_shape(&g->values[id].v, FRT_FLOAT32, rank, dims);
    g->values[id].v.data = data;
    return id;
}

static int fuse_conv_bn(frt_graph *g, frt_arena *arena, frt_node *conv, size_t *bytes,
                        frt_status *st) {
    if (conv->n_out != 1 || conv->n_in < 2) return 0;
    frt_node *bn = sole_consumer(g, conv->out[0]);
    if (!bn || strcmp(bn->op_type, "BatchNormalization") != 0 || bn->n_in != 5 || bn->in[0] != conv->out[0])
        return 0;
    if (bn->n_out > 1) {
        for (int k = 1; k < bn->n_out; k++)
            if (bn->out[k] >= 0 && g->values[bn->out[k]].n_uses > 0) return 0;
    }
    if (frt_attr_int(bn, "training_mode", 0) != 0) return 0;
    const frt_ir_value *w = &g->values[conv->in[1]];
    if (w->v.rank < 3 || !const_f32(g, conv->in[1], -1)) return 0;
    int64_t m = w->v.dims[0];
    const float *scale = const_f32(g, bn->in[1], m), *beta = const_f32(g, bn->in[2], m);
    const float *mean = const_f32(g, bn->in[3], m), *var = const_f32(g, bn->in[4], m);
    if (!scale || !beta || !mean || !var) return 0;
    const float *b = NULL;
    if (conv->n_in >= 3 && conv->in[2] >= 0) {
        b = const_f32(g, conv->in[2], m);
        if (!b) return 0;
    }
    float eps = frt_attr_float(bn, "epsilon", 1e-5f);
    int64_t per = w->v.numel / m;
    int64_t bdim = m;
    int32_t wid = new_const(g, "fused_bn_weight", w->v.rank, w->v.dims, NULL);
    int32_t bid = new_const(g, "fused_bn_bias", 1, &bdim, NULL);
    w = &g->values[conv->in[1]]; /* new_const may move the value array */
    float *nw = wid < 0 ? NULL : frt_graph_temp_const(g, wid, (size_t)w->v.numel * sizeof(float));
    float *nb = bid < 0 ? NULL : frt_graph_temp_const(g, bid, (size_t)m * sizeof(float));
    int32_t *nin = frt_arena_array(arena, 3, sizeof(int32_t));
    if (!nw || !nb || !nin) {
        *st = frt_error(FRT_ERR_NO_MEMORY, "out of memory folding BatchNormalization");
        return -1;
    }
    g->values[wid].v.data = nw;
    g->values[bid].v.data = nb;
    const float *ow = w->v.data;
    for (int64_t o = 0; o < m; o++) {
        double s = (double)scale[o] / sqrt((double)var[o] + (double)eps);
        for (int64_t j = 0; j < per; j++) nw[o * per + j] = (float)(ow[o * per + j] * s);
        nb[o] = (float)(((b ? (double)b[o] : 0.0) - mean[o]) * s + beta[o]);
    }
    int32_t old_w = conv->in[1];
    nin[0] = conv->in[0];
    nin[1] = wid;
    nin[2] = bid;
    /* the unfolded weights are dead unless something else reads them */
    if (g->values[old_w].n_uses == 1 && !g->values[old_w].is_output) {
        g->values[old_w].n_uses = 0;
        frt_graph_drop_const(g, old_w);
    }
    conv->in = nin;
    conv->n_in = 3;
    bypass(g, conv, bn);
    *bytes += (size_t)w->v.numel * 4 + (size_t)m * 4;
    return 1;
}

/* Reads a Clip bound (opset >= 11: optional scalar constant input). */
static bool clip_bound(const frt_graph *g, const frt_node *clip, int idx, const char *attr,
                       float dflt, float *out) {
    if (clip->opset < 11) {
        *out = frt_attr_float(clip, attr, dflt);
        return true;
    }
    if (clip->n_in <= idx || clip->in[idx] < 0) {
        *out = dflt;
        return true;
    }
    const float *p = const_f32(g, clip->in[idx], 1);
    if (!p) return false;
    *out = *p;
    return true;
}

static int fuse_activation(frt_graph *g, frt_node *prod) {
    if (prod->n_out != 1 || prod->act.kind != FRT_ACT_NONE) return 0;
    frt_node *a = sole_consumer(g, prod->out[0]);
    if (!a || a->in[0] != prod->out[0] || a->n_out < 1) return 0;
    if (g->values[prod->out[0]].v.dtype != FRT_FLOAT32) return 0;
    if (FRT_OP_BUILT(Relu) && strcmp(a->op_type, "Relu") == 0) {
        prod->act.kind = FRT_ACT_RELU;
        prod->act.lo = 0.0f;
        prod->act.hi = INFINITY;
    } else if (FRT_OP_BUILT(Clip) && strcmp(a->op_type, "Clip") == 0) {
        float lo, hi;
        if (!clip_bound(g, a, 1, "min", -INFINITY, &lo) || !clip_bound(g, a, 2, "max", INFINITY, &hi))
            return 0;
        prod->act.kind = FRT_ACT_CLIP;
        prod->act.lo = lo;
        prod->act.hi = hi;
    } else {
        return 0;
    }
    bypass(g, prod, a);
    return 1;
}

static bool same_known_shape(const frt_value *a, const frt_value *b) {
    if (a->rank < 0 || a->rank != b->rank) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] < 0 || a->dims[d] != b->dims[d]) return false;
    return true;
}

/* Conv (no activation yet) whose only reader is Add(conv, Z) with Z of the same static shape. */
static int fuse_residual(frt_graph *g, frt_arena *arena, frt_node *conv, frt_status *st) {
    if (conv->n_out != 1 || conv->act.kind != FRT_ACT_NONE || conv->n_in < 2) return 0;
    frt_node *add = sole_consumer(g, conv->out[0]);
    if (!add || strcmp(add->op_type, "Add") != 0 || add->n_in != 2 || add->n_out != 1) return 0;
    if (!FRT_OP_BUILT(FusedConv) || !frt_op_probe(FRT_DOMAIN_INTERNAL, "FusedConv", conv->opset))
        return 0; /* not built */
    int zi = add->in[0] == conv->out[0] ? 1 : 0;
    int32_t z = add->in[zi];
    if (z < 0 || z == conv->out[0] || add->in[1 - zi] != conv->out[0]) return 0;
    /* the conv takes the Add's place no earlier than its own: Z must exist by then */
    int32_t zp = g->values[z].producer;
    if (zp >= 0 && &g->nodes[zp] >= conv) return 0;
    const frt_value *cv = &g->values[conv->out[0]].v, *zv = &g->values[z].v;
    if (cv->dtype != FRT_FLOAT32 || zv->dtype != FRT_FLOAT32 || !same_known_shape(cv, zv) ||
        !same_known_shape(cv, &g->values[add->out[0]].v))
        return 0;
    int32_t *nin = frt_arena_array(arena, 4, sizeof(int32_t));
    if (!nin) {
        *st = frt_error(FRT_ERR_NO_MEMORY, "out of memory fusing a residual Add");
        return -1;
    }
    nin[0] = conv->in[0];
    nin[1] = conv->in[1];
    nin[2] = conv->n_in >= 3 ? conv->in[2] : -1;
    nin[3] = z;
    conv->in = nin;
    conv->n_in = 4;
    conv->domain = "flatrt";
    conv->op_type = "FusedConv";
    frt_op_created(conv->domain, conv->op_type, conv->opset);
    bypass(g, conv, add); /* Z keeps one use: the Add's becomes the conv's */
    return 1;
}

/* Sigmoid whose only reader is Mul(X, S) or Mul(S, X) with X the Sigmoid's own input. */
static int fuse_silu(frt_graph *g, frt_node *sig) {
    if (sig->n_in != 1 || sig->n_out != 1 || sig->in[0] < 0) return 0;
    if (!FRT_OP_BUILT(Silu) || !frt_op_probe(FRT_DOMAIN_INTERNAL, "Silu", sig->opset))
        return 0; /* not built */
    int32_t x = sig->in[0], s = sig->out[0];
    frt_node *mul = sole_consumer(g, s);
    if (!mul || strcmp(mul->op_type, "Mul") != 0 || mul->n_in != 2 || mul->n_out != 1) return 0;
    if (!((mul->in[0] == x && mul->in[1] == s) || (mul->in[0] == s && mul->in[1] == x))) return 0;
    if (g->values[x].v.dtype != FRT_FLOAT32) return 0; /* Mul(X, S): X's shape, no broadcast */
    sig->domain = "flatrt";
    sig->op_type = "Silu";
    frt_op_created(sig->domain, sig->op_type, sig->opset);
    bypass(g, sig, mul);
    g->values[x].n_uses--; /* the Mul's read of X is gone */
    return 1;
}

/* Mul(F, X) with X of the output's shape and F of fewer elements (broadcast over X), float32:
 * swapped to Mul(X, F). The product is the same (x f == f x in IEEE arithmetic); the planner
 * writes an output over input 0 only (FRT_K_INPLACE), so this lets a per-channel scale run in
 * place. */
static void mul_big_first(frt_graph *g, frt_node *m) {
    if (m->dead || m->domain[0] || strcmp(m->op_type, "Mul") != 0 || m->n_in != 2 ||
        m->n_out != 1 || m->in[0] < 0 || m->in[1] < 0 || m->out[0] < 0)
        return;
    const frt_value *f = &g->values[m->in[0]].v, *x = &g->values[m->in[1]].v,
                    *y = &g->values[m->out[0]].v;
    if (f->dtype != FRT_FLOAT32 || x->dtype != FRT_FLOAT32 || !frt_shape_known(f) ||
        !frt_shape_known(x) || !frt_shape_known(y) || x->rank != y->rank)
        return;
    for (int d = 0; d < x->rank; d++)
        if (x->dims[d] != y->dims[d]) return;
    if (frt_shape_numel(f->dims, f->rank) >= frt_shape_numel(x->dims, x->rank)) return;
    int32_t t = m->in[0];
    m->in[0] = m->in[1];
    m->in[1] = t;
}

int frt_pass_fuse(frt_graph *g, frt_arena *arena, size_t *transformed_bytes, frt_status *st) {
    int removed = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_node *n = &g->nodes[i];
        if (n->dead || n->domain[0]) continue; /* (FusedConv is made below, from Conv) */
        /* A selective build (FRT_OP_BUILT, op.h) compiles only the patterns whose ops it has:
         * a model with an op outside the selection was refused before fusion. */
        bool conv = FRT_OP_BUILT(Conv) && strcmp(n->op_type, "Conv") == 0;
        bool gemm = FRT_OP_BUILT(Gemm) && strcmp(n->op_type, "Gemm") == 0;
        bool bn = FRT_OP_BUILT(BatchNormalization) &&
                  strcmp(n->op_type, "BatchNormalization") == 0 && n->n_out == 1 &&
                  frt_attr_int(n, "training_mode", 0) == 0;
        if (FRT_OP_BUILT(AveragePool) && strcmp(n->op_type, "Pad") == 0) {
            removed += frt_pass_pad_into_avgpool(g, arena, n); /* fuse_pool.c */
            continue;
        }
        if (conv && FRT_OP_BUILT(AveragePool)) {
            bool swapped;
            removed += frt_pass_pool_before_conv(g, n, &swapped); /* fuse_pool.c */
            if (swapped) continue; /* n is the pool now; the conv comes later in the loop */
        }
        if (conv && FRT_OP_BUILT(BatchNormalization)) {
            int r = fuse_conv_bn(g, arena, n, transformed_bytes, st);
            if (r < 0) return -1;
            removed += r;
        }
        if (conv) {
            int r = fuse_residual(g, arena, n, st);
            if (r < 0) return -1;
            removed += r;
        }
        if ((conv || gemm || bn) && (FRT_OP_BUILT(Relu) || FRT_OP_BUILT(Clip)))
            removed += fuse_activation(g, n);
        if (conv && (FRT_OP_BUILT(Sigmoid) || FRT_OP_BUILT(HardSigmoid) ||
                     FRT_OP_BUILT(HardSwish) || FRT_OP_BUILT(Silu)))
            removed += frt_pass_fuse_conv_act(g, n); /* fuse_cnn.c */
        if (conv && FRT_OP_BUILT(GlobalAveragePool) && FRT_OP_BUILT(ConvMean)) {
            int r = frt_pass_fuse_conv_mean(g, arena, n, st); /* fuse_cnn.c */
            if (r < 0) return -1;
            removed += r;
        }
        if (FRT_OP_BUILT(Sigmoid) && strcmp(n->op_type, "Sigmoid") == 0) removed += fuse_silu(g, n);
    }
    int r = frt_pass_fuse_xf(g, arena, st);
    if (r < 0) return -1;
    int rs = frt_pass_fuse_shuffle(g, arena, st); /* fuse_shuffle.c */
    if (rs < 0) return -1;
    r += rs;
    if (FRT_OP_BUILT(Mul))
        for (size_t i = 0; i < g->n_nodes; i++) mul_big_first(g, &g->nodes[i]);
    return removed + r;
}
