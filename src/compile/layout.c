/* Layout pass: reorder steps between producers and readers that disagree on a value's layout.
 *
 * After selection every kernel has declared the layout of each output it writes and of each input
 * it reads (frt_kernel.out_layouts / in_layouts; plain by default). Walking the steps in order:
 *   - a produced value takes its producer's output layout;
 *   - a read of value v in layout L != layout(v) is redirected to a converted value v@L, made by a
 *     "flatrt::Reorder" step inserted before the first reader that needs it (later readers of v in
 *     L reuse it);
 *   - a graph output is always plain: when its producer writes another layout, the producer writes
 *     a new value instead and a reorder right after it fills the graph output (readers wanting
 *     the producer's layout read the new value, readers wanting plain read the graph output).
 * Graph inputs, constants and outer values are plain. Captured reads (subgraphs) need plain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_internal.h"
#include "ops/reorder.h"

typedef struct conv {
    int32_t src, dst;            /* value ids */
    const frt_layout *layout;    /* layout of dst */
    int32_t node;                /* the reorder's IR node */
    int32_t after;               /* emit after this old step index (graph outputs), or -1 */
    bool emitted;
} conv;

typedef struct lctx {
    frt_graph *g;
    frt_arena *arena;
    conv *c;
    size_t n, cap;
} lctx;

static const frt_layout *in_layout(const frt_kernel *k, int j, int n_in) {
    return j < n_in && k->in_layouts ? k->in_layouts[j] : FRT_LAYOUT_PLAIN;
}

static frt_status nomem(void) { return frt_error(FRT_ERR_NO_MEMORY, "out of memory compiling the model"); }

/* Appends an IR node "flatrt::Reorder" reading src and writing dst; returns its id or -1. */
static int32_t add_reorder_node(frt_graph *g, int32_t src, int32_t dst) {
    if (g->n_nodes == g->cap_nodes) {
        size_t cap = g->cap_nodes ? 2 * g->cap_nodes : 8;
        frt_node *nn = frt_arena_array(g->arena, cap, sizeof *nn);
        if (!nn) return -1;
        if (g->n_nodes) memcpy(nn, g->nodes, g->n_nodes * sizeof *nn);
        g->nodes = nn;
        g->cap_nodes = cap;
    }
    int32_t *in = frt_arena_array(g->arena, 1, sizeof *in);
    int32_t *out = frt_arena_array(g->arena, 1, sizeof *out);
    if (!in || !out) return -1;
    in[0] = src;
    out[0] = dst;
    frt_node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->name = g->values[dst].name;
    n->op_type = "Reorder";
    n->domain = "flatrt";
    n->n_in = n->n_out = 1;
    n->in = in;
    n->out = out;
    n->opset = g->opset;
    g->values[dst].producer = (int32_t)g->n_nodes;
    return (int32_t)g->n_nodes++;
}

/* The conversion of src into layout l, made on first use. */
static frt_status get_conv(lctx *x, int32_t src, const frt_layout *l, int32_t *idx) {
    for (size_t i = 0; i < x->n; i++)
        if (x->c[i].src == src && x->c[i].layout == l) {
            *idx = (int32_t)i;
            return FRT_OK;
        }
    frt_graph *g = x->g;
    const frt_ir_value *sv = &g->values[src];
    if (l && sv->v.rank >= 0 && !l->fits(&sv->v)) {
        char b[128];
        return frt_error(FRT_ERR_INTERNAL, "value '%s' %s cannot be held in layout %s", sv->name,
                         frt_shape_str(&sv->v, b, sizeof b), l->name);
    }
    if (x->n == x->cap) {
        size_t c = x->cap ? 2 * x->cap : 8;
        conv *nc = realloc(x->c, c * sizeof *nc);
        if (!nc) return nomem();
        x->c = nc;
        x->cap = c;
    }
    char name[256];
    snprintf(name, sizeof name, "%s@%s", sv->name, frt_layout_name(l));
    int32_t dst = frt_graph_add_value(g, name, FRT_VALUE_NODE);
    if (dst < 0) return nomem();
    g->values[dst].v = g->values[src].v;
    g->values[dst].v.data = NULL;
    g->values[dst].v.layout = l;
    int32_t node = add_reorder_node(g, src, dst);
    if (node < 0) return nomem();
    x->c[x->n] = (conv){src, dst, l, node, -1, false};
    *idx = (int32_t)x->n++;
    return FRT_OK;
}

static void emit(frt_step *steps, const frt_op_def **defs, size_t *n, const frt_graph *g,
                 conv *c) {
    frt_step *s = &steps[*n];
    memset(s, 0, sizeof *s);
    s->k = frt_reorder_kernel();
    s->node = c->node;
    s->in = g->nodes[c->node].in;
    s->out = g->nodes[c->node].out;
    s->n_in = s->n_out = 1;
    defs[(*n)++] = &frt_op_reorder;
    c->emitted = true;
}

frt_status frt_layout_pass(frt_graph *g, frt_arena *arena, frt_step **steps_io,
                           const frt_op_def ***defs_io, size_t *n_io, size_t *n_reorders) {
    frt_step *steps = *steps_io;
    size_t ns = *n_io;
    bool any = false;
    for (size_t si = 0; si < ns && !any; si++)
        any = steps[si].k.out_layouts || steps[si].k.in_layouts;
    *n_reorders = 0;
    if (!any) return FRT_OK; /* everything plain: nothing to do */

    lctx x = {g, arena, NULL, 0, 0};
    frt_status st = FRT_OK;
    /* 1. layouts of produced values; non-plain graph outputs get a plain copy after the producer */
    for (size_t si = 0; si < ns && !st; si++) {
        frt_step *s = &steps[si];
        frt_node *n = &g->nodes[s->node];
        for (int j = 0; j < n->n_out && !st; j++) {
            int32_t v = n->out[j];
            if (v < 0) continue;
            const frt_layout *l = s->k.out_layouts ? s->k.out_layouts[j] : FRT_LAYOUT_PLAIN;
            g->values[v].v.layout = l;
            if (!l || !g->values[v].is_output) continue;
            if (s->k.flags & (FRT_K_VIEW | FRT_K_DYNAMIC_OUT)) {
                st = frt_error(FRT_ERR_INTERNAL, "node '%s' (%s): views and run-time-sized "
                               "outputs are plain", n->name, n->op_type);
                break;
            }
            /* the producer writes v2 (layout l); v becomes the reorder's plain result */
            char name[256];
            snprintf(name, sizeof name, "%s@%s", g->values[v].name, l->name);
            int32_t v2 = frt_graph_add_value(g, name, FRT_VALUE_NODE);
            if (v2 < 0) {
                st = nomem();
                break;
            }
            n = &g->nodes[s->node];
            g->values[v2].v = g->values[v].v;
            g->values[v2].producer = s->node;
            g->values[v].v.layout = FRT_LAYOUT_PLAIN;
            n->out[j] = v2;
            for (size_t i = 0; i < g->n_nodes; i++) {
                frt_node *r = &g->nodes[i];
                if (r->dead) continue;
                for (int k = 0; k < frt_node_n_reads(r); k++)
                    if (r->in[k] == v) r->in[k] = v2;
            }
            if (x.n == x.cap) {
                size_t c = x.cap ? 2 * x.cap : 8;
                conv *nc = realloc(x.c, c * sizeof *nc);
                if (!nc) {
                    st = nomem();
                    break;
                }
                x.c = nc;
                x.cap = c;
            }
            int32_t node = add_reorder_node(g, v2, v);
            if (node < 0) {
                st = nomem();
                break;
            }
            x.c[x.n++] = (conv){v2, v, FRT_LAYOUT_PLAIN, node, (int32_t)si, false};
        }
    }
    /* 2. reads in another layout than the value has */
    for (size_t si = 0; si < ns && !st; si++) {
        const frt_step *s = &steps[si];
        frt_node *n = &g->nodes[s->node];
        for (int j = 0; j < frt_node_n_reads(n) && !st; j++) {
            int32_t v = n->in[j];
            if (v < 0) continue;
            const frt_layout *want = in_layout(&s->k, j, n->n_in);
            if (g->values[v].v.layout == want) continue;
            int32_t ci = -1;
            st = get_conv(&x, v, want, &ci);
            if (st) break;
            n = &g->nodes[s->node];
            n->in[j] = x.c[ci].dst;
        }
    }
    if (st) {
        free(x.c);
        return st;
    }
    /* 3. the new step list: conversions before their first reader, output copies after their
       producer */
    size_t total = ns + x.n;
    frt_step *ns_steps = frt_arena_array(arena, total + 1, sizeof *ns_steps);
    const frt_op_def **ndefs = frt_arena_array(arena, total + 1, sizeof *ndefs);
    if (!ns_steps || !ndefs) {
        free(x.c);
        return nomem();
    }
    size_t k = 0;
    for (size_t si = 0; si < ns; si++) {
        const frt_node *n = &g->nodes[steps[si].node];
        for (int j = 0; j < frt_node_n_reads(n); j++)
            for (size_t i = 0; i < x.n; i++)
                if (!x.c[i].emitted && x.c[i].after < 0 && x.c[i].dst == n->in[j])
                    emit(ns_steps, ndefs, &k, g, &x.c[i]);
        ns_steps[k] = steps[si];
        ndefs[k++] = (*defs_io)[si];
        for (size_t i = 0; i < x.n; i++)
            if (!x.c[i].emitted && x.c[i].after == (int32_t)si) emit(ns_steps, ndefs, &k, g, &x.c[i]);
    }
    /* IR node pointers: reorder nodes may have moved the node array */
    for (size_t i = 0; i < k; i++) {
        ns_steps[i].ir = &g->nodes[ns_steps[i].node];
        ns_steps[i].in = ns_steps[i].ir->in;
        ns_steps[i].out = ns_steps[i].ir->out;
    }
    *n_reorders = x.n;
    free(x.c);
    if (k != total) return frt_error(FRT_ERR_INTERNAL, "layout pass lost a reorder step");
    *steps_io = ns_steps;
    *defs_io = ndefs;
    *n_io = k;
    return FRT_OK;
}
