/* Replaces the Loop that torch exports for nn.EmbeddingBag (opset 13, no per_sample_weights) by
 * one flatrt::EmbeddingBag node (src/ops/embedding_bag.c). Runs on the IR as built, before
 * inference, over the model's graph and every subgraph.
 *
 * The Loop has a trip count M, a constant-true condition, no carried value and one scan output;
 * its body (iter, cond) -> (cond', bag) is
 *   s    = Unsqueeze(Gather(Starts, iter), [0])         Starts, Ends, Idx, W: outer values
 *   e    = Unsqueeze(Gather(Ends, iter), [0])
 *   rows = Slice(Idx, s, e, axes [0] (or none), steps [1] (or none))
 *   bag  = ReduceSum(Gather(W, rows), [0], keepdims 0)  (or ReduceMean / ReduceMax)
 *   cond' = the condition input, or a constant true (possibly through Cast / Identity)
 * and becomes EmbeddingBag(W, Idx, Starts, Ends, M) with attribute mode (0 sum, 1 mean, 2 max).
 * The table must be float32 as declared (an initializer or a graph input). Constants of the
 * pattern (axes, steps, true) are read from initializers and Constant nodes, in the body or in
 * an enclosing graph. The body is detached from the node; its temporary constants are freed. */
#include <string.h>

#include "ops/op.h"
#include "passes/passes.h"

/* The value of an enclosing graph that outer value v of g reads, or -1 with *pg unchanged. */
static int32_t outer_source(const frt_graph *g, int32_t v, const frt_graph **pg) {
    if (!g->parent || g->owner < 0) return -1;
    const frt_node *own = &g->parent->nodes[g->owner];
    int32_t slot = g->values[v].outer;
    if (slot < 0 || slot >= own->n_cap) return -1;
    *pg = g->parent;
    return own->in[own->n_in + slot];
}

/* Follows outer values up to the graph that defines v. */
static int32_t defining(const frt_graph **g, int32_t v) {
    for (int hops = 0; v >= 0 && (*g)->values[v].kind == FRT_VALUE_OUTER && hops < 64; hops++) {
        const frt_graph *pg = *g;
        v = outer_source(*g, v, &pg);
        *g = pg;
    }
    return v;
}

static const frt_node *live_producer(const frt_graph *g, int32_t v) {
    int32_t p = frt_graph_producer(g, v);
    return p >= 0 && !g->nodes[p].dead ? &g->nodes[p] : NULL;
}

static bool is_op(const frt_node *n, const char *op) {
    return n && n->domain[0] == 0 && strcmp(n->op_type, op) == 0;
}

/* Up to max integers of the constant v (graph initializer or Constant node output, in g or an
 * enclosing graph). Returns the count, or -1 when v is not such a constant. */
static int const_ints(const frt_graph *g, int32_t v, int64_t *out, int max) {
    if (v < 0) return -1;
    v = defining(&g, v);
    if (v < 0) return -1;
    const frt_ir_value *x = &g->values[v];
    const void *data = NULL;
    int32_t dtype = 0;
    int64_t n = 0;
    if (x->kind == FRT_VALUE_CONST) {
        data = x->v.data;
        dtype = x->v.dtype;
        n = x->v.numel;
    } else {
        const frt_node *c = live_producer(g, v);
        if (!is_op(c, "Constant") || c->n_attrs != 1) return -1;
        const frt_onnx_attr *a = &c->attrs[0];
        if (a->type == FRT_ATTR_INT && strcmp(a->name, "value_int") == 0) {
            if (max < 1) return -1;
            out[0] = a->i;
            return 1;
        }
        if (a->type == FRT_ATTR_INTS && strcmp(a->name, "value_ints") == 0) {
            if (a->n > (size_t)max) return -1;
            memcpy(out, a->ints, a->n * sizeof *out);
            return (int)a->n;
        }
        if (a->type != FRT_ATTR_TENSOR || strcmp(a->name, "value") != 0 || !a->t) return -1;
        data = a->t->data;
        dtype = a->t->dtype;
        n = a->t->numel;
    }
    if (n < 0 || n > max || (n > 0 && !data)) return -1;
    for (int64_t i = 0; i < n; i++) {
        if (dtype == FRT_INT64) memcpy(&out[i], (const char *)data + i * 8, 8);
        else if (dtype == FRT_INT32 || dtype == FRT_BOOL) {
            int32_t w = 0;
            if (dtype == FRT_BOOL) w = ((const uint8_t *)data)[i];
            else memcpy(&w, (const char *)data + i * 4, 4);
            out[i] = w;
        } else {
            return -1;
        }
    }
    return (int)n;
}

static bool const_is(const frt_graph *g, int32_t v, int64_t want) {
    int64_t x[2];
    return const_ints(g, v, x, 1) == 1 && x[0] == want;
}

/* A constant true, possibly through Cast and Identity nodes. */
static bool const_true(const frt_graph *g, int32_t v) {
    for (int hops = 0; hops < 8; hops++) {
        int64_t x;
        if (const_ints(g, v, &x, 1) == 1) return x != 0;
        const frt_graph *dg = g;
        int32_t d = defining(&dg, v);
        const frt_node *p = d >= 0 ? live_producer(dg, d) : NULL;
        if (!p || p->n_in != 1 || !(is_op(p, "Cast") || is_op(p, "Identity"))) return false;
        g = dg;
        v = p->in[0];
    }
    return false;
}

/* Axes given as an attribute (before opset `since`) or as input 1. */
static bool axes_are_zero(const frt_graph *g, const frt_node *n, int64_t since) {
    int64_t a[2];
    if (n->opset < since) {
        size_t cnt;
        const int64_t *v = frt_attr_ints(n, "axes", &cnt);
        return v && cnt == 1 && v[0] == 0;
    }
    return n->n_in >= 2 && const_ints(g, n->in[1], a, 2) == 1 && a[0] == 0;
}

/* The outer value read by Unsqueeze(Gather(src, iter), [0]) at v, or -1. */
static int32_t offset_source(const frt_graph *b, int32_t v, int32_t iter) {
    const frt_node *u = live_producer(b, v);
    if (!is_op(u, "Unsqueeze") || u->n_in < 1 || !axes_are_zero(b, u, 13)) return -1;
    const frt_node *gt = live_producer(b, u->in[0]);
    if (!is_op(gt, "Gather") || gt->n_in != 2 || gt->in[1] != iter ||
        frt_attr_int(gt, "axis", 0) != 0)
        return -1;
    int32_t src = gt->in[0];
    return src >= 0 && b->values[src].kind == FRT_VALUE_OUTER ? src : -1;
}

typedef struct eb_match {
    int mode;
    int32_t w, idx, starts, ends; /* outer values of the body */
} eb_match;

static bool match(const frt_graph *g, const frt_node *n, eb_match *m) {
    if (!is_op(n, "Loop") || n->n_sub != 1 || n->n_in != 2 || n->n_out != 1 || n->in[0] < 0 ||
        n->out[0] < 0)
        return false;
    if (n->in[1] >= 0 && !const_true(g, n->in[1])) return false;
    const frt_graph *b = n->sub[0];
    if (b->n_inputs != 2 || b->n_outputs != 2) return false;
    int32_t iter = b->inputs[0], cond_in = b->inputs[1];
    if (b->outputs[0] != cond_in && !const_true(b, b->outputs[0])) return false;
    const frt_node *red = live_producer(b, b->outputs[1]);
    if (!red || red->n_in < 1 || frt_attr_int(red, "keepdims", 1) != 0) return false;
    if (is_op(red, "ReduceSum") && axes_are_zero(b, red, 13)) m->mode = 0;
    else if (is_op(red, "ReduceMean") && axes_are_zero(b, red, 18)) m->mode = 1;
    else if (is_op(red, "ReduceMax") && axes_are_zero(b, red, 18)) m->mode = 2;
    else return false;
    const frt_node *gw = live_producer(b, red->in[0]);
    if (!is_op(gw, "Gather") || gw->n_in != 2 || frt_attr_int(gw, "axis", 0) != 0) return false;
    m->w = gw->in[0];
    if (m->w < 0 || b->values[m->w].kind != FRT_VALUE_OUTER) return false;
    const frt_node *sl = live_producer(b, gw->in[1]);
    if (!is_op(sl, "Slice") || sl->opset < 10 || sl->n_in < 3) return false;
    if (sl->n_in > 3 && sl->in[3] >= 0 && !const_is(b, sl->in[3], 0)) return false;
    if (sl->n_in > 4 && sl->in[4] >= 0 && !const_is(b, sl->in[4], 1)) return false;
    m->idx = sl->in[0];
    if (m->idx < 0 || b->values[m->idx].kind != FRT_VALUE_OUTER) return false;
    m->starts = offset_source(b, sl->in[1], iter);
    m->ends = offset_source(b, sl->in[2], iter);
    if (m->starts < 0 || m->ends < 0) return false;
    /* the table's dtype as declared where it is defined */
    const frt_graph *dg = b;
    int32_t wd = defining(&dg, m->w);
    return wd >= 0 && dg->values[wd].v.dtype == FRT_FLOAT32 &&
           (dg->values[wd].kind == FRT_VALUE_CONST || dg->values[wd].kind == FRT_VALUE_INPUT);
}

static const frt_onnx_attr *mode_attr(frt_arena *arena, int mode) {
    frt_onnx_attr *a = frt_arena_alloc(arena, sizeof *a, 8);
    if (!a) return NULL;
    memset(a, 0, sizeof *a);
    a->name = "mode";
    a->type = FRT_ATTR_INT;
    a->i = mode;
    return a;
}

/* Rewrites Loop node n of g (matched as m) into EmbeddingBag. */
static frt_status rewrite(frt_graph *g, frt_node *n, const eb_match *m) {
    frt_graph *b = n->sub[0];
    int32_t *in = frt_arena_array(g->arena, 5, sizeof *in);
    const frt_onnx_attr *attr = mode_attr(g->arena, m->mode);
    if (!in || !attr) return frt_error(FRT_ERR_NO_MEMORY, "out of memory fusing an EmbeddingBag");
    const int32_t outer[4] = {m->w, m->idx, m->starts, m->ends};
    for (int i = 0; i < 4; i++) in[i] = n->in[n->n_in + b->values[outer[i]].outer];
    in[4] = n->in[0];
    for (int j = 0; j < frt_node_n_reads(n); j++)
        if (n->in[j] >= 0) g->values[n->in[j]].n_uses--;
    for (int j = 0; j < 5; j++) g->values[in[j]].n_uses++;
    frt_graph_free_temps(b);
    n->in = in;
    n->n_in = 5;
    n->n_cap = 0;
    n->n_sub = 0;
    n->sub = NULL;
    n->attrs = attr;
    n->n_attrs = 1;
    n->domain = FRT_DOMAIN_INTERNAL;
    n->op_type = "EmbeddingBag";
    frt_op_created(n->domain, n->op_type, n->opset);
    return FRT_OK;
}

int frt_pass_embedding_bag(frt_graph *g, frt_status *st) {
    int count = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (int32_t k = 0; k < n->n_sub; k++) {
            int r = frt_pass_embedding_bag(n->sub[k], st);
            if (r < 0) return r;
            count += r;
        }
        eb_match m;
        if (!FRT_OP_BUILT(EmbeddingBag) ||
            !frt_op_probe(FRT_DOMAIN_INTERNAL, "EmbeddingBag", n->opset) || !match(g, n, &m))
            continue;
        *st = rewrite(g, n, &m);
        if (*st) return -1;
        count++;
    }
    return count;
}
