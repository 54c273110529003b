/* Average pooling moved in front of a 1x1 convolution (called by frt_pass_fuse for every Conv):
 *
 *   Y = Conv(X, W[, B]) 1x1, stride 1, no pads, no fused activation
 *   [P = Pad(Y) with all pads zero]                 (torch's export of nn.AvgPool2d)
 *   Z = AveragePool(Y or P) without pads, ceil_mode 0, dilations 1
 *     ->  Q = AveragePool(X); Z = Conv(Q, W[, B])
 *
 * Both are linear per pixel and the pool's window weights sum to one, so pool(W x + B) =
 * W pool(x) + B exactly in real arithmetic (float rounding differs in the last bits). The conv then
 * runs on the pooled image: a 2x2 stride-2 pool (DenseNet's transition layers) cuts its work by 4.
 * Taken only when the pool makes the image smaller. The two nodes swap their places in the node
 * array (the pool takes the conv's, the conv the pool's), so the order stays topological; the
 * Pad dies. Y and P must be read only by the pattern and not be graph outputs; float32, rank 4,
 * shapes known.
 *
 * Zero padding folded into the average pool that reads it (frt_pass_pad_into_avgpool, called for
 * every Pad):
 *
 *   P = Pad(X) constant 0, spatial pads only (torch's export of avg_pool2d(padding=p) with
 *       count_include_pad: Inception v3's branch_pool)
 *   Z = AveragePool(P) without pads, ceil_mode 0, dilations 1
 *     ->  Z = AveragePool(X) with the Pad's pads and count_include_pad = 1
 *
 * The same windows and the same divisor (every window of the padded image lies inside it, so
 * count_include_pad divides by the kernel size either way); the zeros the Pad wrote add nothing
 * to a sum (sums may be ordered differently by another kernel: last bits). The Pad dies, and with
 * it a copy of X, and the pool may run on the blocked layout of X's producer and consumers
 * (inception_v3: a reorder to plain before each Pad and one back after each pool were planned).
 * P must be read only by the pool and not be a graph output; float32, rank 4, shapes known. */
#include <string.h>

#include "ops/op.h"
#include "passes/passes.h"

/* The single live reader of value v (read once), or NULL; NULL for a graph output. */
static frt_node *only_reader(frt_graph *g, int32_t v) {
    if (v < 0 || g->values[v].is_output || g->values[v].n_uses != 1) return NULL;
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->n_in + n->n_cap; k++)
            if (n->in[k] == v) return n;
    }
    return NULL;
}

static bool is_default_op(const frt_node *n, const char *op) {
    return !n->domain[0] && !strcmp(n->op_type, op);
}

/* Attribute ints all equal to v (absent: true). */
static bool ints_all(const frt_node *n, const char *name, int64_t v) {
    size_t cnt = 0;
    const int64_t *p = frt_attr_ints(n, name, &cnt);
    for (size_t i = 0; p && i < cnt; i++)
        if (p[i] != v) return false;
    return true;
}

static bool no_auto_pad(const frt_node *n) {
    const char *ap = frt_attr_string(n, "auto_pad", "NOTSET");
    return !strcmp(ap, "NOTSET") || !strcmp(ap, "VALID");
}

/* Pad whose pads are all zero (an identity, whatever its mode and value). */
static bool zero_pad(const frt_graph *g, const frt_node *p) {
    if (!is_default_op(p, "Pad") || p->n_out != 1 || p->n_in < 1) return false;
    if (p->opset < 11) {
        size_t cnt = 0;
        return frt_attr_ints(p, "pads", &cnt) && ints_all(p, "pads", 0);
    }
    if (p->n_in < 2 || p->in[1] < 0) return false;
    const frt_ir_value *pv = &g->values[p->in[1]];
    if (pv->kind != FRT_VALUE_CONST || pv->v.dtype != FRT_INT64 || !pv->v.data) return false;
    const int64_t *d = pv->v.data;
    for (int64_t i = 0; i < pv->v.numel; i++)
        if (d[i] != 0) return false;
    return true;
}

static bool image4(const frt_value *v) {
    return v->dtype == FRT_FLOAT32 && v->rank == 4 && frt_shape_known(v);
}

int frt_pass_pool_before_conv(frt_graph *g, frt_node *conv, bool *swapped) {
    *swapped = false;
    if (!is_default_op(conv, "Conv") || conv->n_out != 1 || conv->n_in < 2 ||
        conv->act.kind != FRT_ACT_NONE || conv->n_cap)
        return 0;
    const frt_ir_value *w = &g->values[conv->in[1]];
    if (w->v.rank != 4 || w->v.dims[2] != 1 || w->v.dims[3] != 1) return 0;
    if (!ints_all(conv, "strides", 1) || !ints_all(conv, "pads", 0) || !no_auto_pad(conv) ||
        !ints_all(conv, "kernel_shape", 1))
        return 0;
    int32_t x = conv->in[0], y = conv->out[0];
    if (x < 0 || y < 0) return 0;
    frt_node *pad = NULL, *pool = only_reader(g, y);
    if (pool && zero_pad(g, pool) && pool->in[0] == y) {
        pad = pool;
        pool = only_reader(g, pad->out[0]);
    }
    if (!pool || !is_default_op(pool, "AveragePool") || pool->n_in != 1 || pool->n_out != 1 ||
        pool->n_cap || pool->in[0] != (pad ? pad->out[0] : y))
        return 0;
    if (!ints_all(pool, "pads", 0) || !no_auto_pad(pool) || frt_attr_int(pool, "ceil_mode", 0) ||
        !ints_all(pool, "dilations", 1))
        return 0;
    int32_t z = pool->out[0];
    const frt_value *xv = &g->values[x].v, *yv = &g->values[y].v, *zv = &g->values[z].v;
    if (!image4(xv) || !image4(yv) || !image4(zv) || (pad && !image4(&g->values[pad->out[0]].v)))
        return 0;
    /* the pool must shrink the image, and the conv keep its size */
    if (yv->dims[2] != xv->dims[2] || yv->dims[3] != xv->dims[3] ||
        zv->dims[2] * zv->dims[3] >= yv->dims[2] * yv->dims[3] || zv->dims[0] != xv->dims[0])
        return 0;
    ptrdiff_t ci = conv - g->nodes, pi = pool - g->nodes;
    if (pi <= ci) return 0;

    /* Q = AveragePool(X): [N, C_in, OH, OW] */
    int32_t q = frt_graph_add_value(g, "pooled_before_conv", FRT_VALUE_NODE);
    if (q < 0) return 0;
    int64_t qd[4] = {g->values[x].v.dims[0], g->values[x].v.dims[1], g->values[z].v.dims[2],
                     g->values[z].v.dims[3]};
    frt_value_set_shape(&g->values[q].v, FRT_FLOAT32, 4, qd);

    pool->in[0] = x;
    pool->out[0] = q;
    conv->in[0] = q;
    conv->out[0] = z;
    frt_node t = *conv;
    *conv = *pool;
    *pool = t;
    /* conv (the pointer) now holds the pool at index ci, pool the conv at index pi */
    g->values[q].producer = (int32_t)ci;
    g->values[q].n_uses = 1;
    g->values[z].producer = (int32_t)pi;
    g->values[y].producer = -1;
    g->values[y].n_uses = 0;
    *swapped = true;
    if (pad) {
        g->values[pad->out[0]].producer = -1;
        g->values[pad->out[0]].n_uses = 0;
        pad->dead = true;
        return 1;
    }
    return 0;
}

/* The Pad's pads (2 x rank: begins, then ends) when they are constant, else NULL. */
static const int64_t *pad_pads(const frt_graph *g, const frt_node *p, size_t *cnt) {
    if (p->opset < 11) return frt_attr_ints(p, "pads", cnt);
    if (p->n_in < 2 || p->in[1] < 0) return NULL;
    const frt_ir_value *pv = &g->values[p->in[1]];
    if (pv->kind != FRT_VALUE_CONST || pv->v.dtype != FRT_INT64 || !pv->v.data) return NULL;
    *cnt = (size_t)pv->v.numel;
    return pv->v.data;
}

/* Whether Pad p pads with zeros: mode constant, value 0 (absent, or a constant scalar 0). */
static bool pads_zeros(const frt_graph *g, const frt_node *p) {
    if (strcmp(frt_attr_string(p, "mode", "constant"), "constant") != 0) return false;
    if (p->opset < 11) return frt_attr_float(p, "value", 0.f) == 0.f;
    if (p->n_in > 3 && p->in[3] >= 0) return false; /* opset 18 axes: not handled */
    if (p->n_in < 3 || p->in[2] < 0) return true;
    const frt_ir_value *cv = &g->values[p->in[2]];
    if (cv->kind != FRT_VALUE_CONST || cv->v.dtype != FRT_FLOAT32 || cv->v.numel != 1 ||
        !cv->v.data)
        return false;
    float v;
    memcpy(&v, cv->v.data, sizeof v);
    return v == 0.f;
}

int frt_pass_pad_into_avgpool(frt_graph *g, frt_arena *arena, frt_node *pad) {
    if (!is_default_op(pad, "Pad") || pad->n_out != 1 || pad->n_in < 1 || pad->n_cap ||
        pad->in[0] < 0 || pad->out[0] < 0 || !pads_zeros(g, pad))
        return 0;
    int32_t x = pad->in[0], pv = pad->out[0];
    size_t cnt = 0;
    const int64_t *pads = pad_pads(g, pad, &cnt);
    if (!pads || cnt != 8) return 0;
    for (int d = 0; d < 8; d++)
        if (pads[d] < 0 || ((d % 4) < 2 && pads[d] != 0)) return 0; /* N and C unpadded */
    frt_node *pool = only_reader(g, pv);
    if (!pool || !is_default_op(pool, "AveragePool") || pool->n_in != 1 || pool->n_out != 1 ||
        pool->n_cap || pool->in[0] != pv || pool->out[0] < 0)
        return 0;
    if (!ints_all(pool, "pads", 0) || !no_auto_pad(pool) || frt_attr_int(pool, "ceil_mode", 0) ||
        !ints_all(pool, "dilations", 1))
        return 0;
    if (!image4(&g->values[x].v) || !image4(&g->values[pv].v) ||
        !image4(&g->values[pool->out[0]].v))
        return 0;
    /* the pool's attributes without pads, auto_pad and count_include_pad, then those two */
    frt_onnx_attr *na = frt_arena_array(arena, (size_t)pool->n_attrs + 2, sizeof *na);
    int64_t *np = frt_arena_array(arena, 4, sizeof *np);
    if (!na || !np) return 0; /* not fused: the model runs as exported */
    size_t k = 0;
    for (size_t i = 0; i < pool->n_attrs; i++) {
        const char *nm = pool->attrs[i].name;
        if (strcmp(nm, "pads") && strcmp(nm, "auto_pad") && strcmp(nm, "count_include_pad"))
            na[k++] = pool->attrs[i];
    }
    np[0] = pads[2], np[1] = pads[3], np[2] = pads[6], np[3] = pads[7]; /* [hb, wb, he, we] */
    na[k++] = (frt_onnx_attr){.name = "pads", .type = FRT_ATTR_INTS, .n = 4, .ints = np};
    na[k++] = (frt_onnx_attr){.name = "count_include_pad", .type = FRT_ATTR_INT, .i = 1};
    pool->attrs = na;
    pool->n_attrs = k;
    pool->in[0] = x; /* x keeps its count of uses: the pool reads it instead of the Pad */
    g->values[pv].producer = -1;
    g->values[pv].n_uses = 0;
    pad->dead = true;
    return 1;
}
