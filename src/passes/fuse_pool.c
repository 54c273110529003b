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
 * shapes known. */
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
