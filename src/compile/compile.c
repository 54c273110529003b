/* Compile: IR -> program, per block. Shape inference, folding, fusion, kernel selection, layout
 * reorders (layout.c), step classes, lifetimes. Runs once per model load. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_internal.h"
#include "passes/passes.h"
#include "ops/cpu.h"
#include "util/seltrace.h"

#define MAX_NODE_IO 1024

/* Fills pointer arrays for a node over the IR values. */
static void node_ctx(frt_graph *g, frt_node *n, frt_value **in, frt_value **out, frt_op_ctx *c) {
    for (int i = 0; i < n->n_in; i++) in[i] = n->in[i] < 0 ? NULL : &g->values[n->in[i]].v;
    for (int i = 0; i < n->n_out; i++) out[i] = n->out[i] < 0 ? NULL : &g->values[n->out[i]].v;
    c->node = n;
    c->opset = n->opset;
    c->n_in = n->n_in;
    c->n_out = n->n_out;
    c->in = in;
    c->out = out;
    c->arena = NULL;
    c->isa = FRT_ISA_PORTABLE;
}

const frt_op_def *frt_compile_find(const frt_compile_ctx *cx, const frt_node *n) {
    if (cx->src && cx->src->find) {
        const frt_op_def *d = cx->src->find(cx->src->user, n->domain, n->op_type);
        if (d) return d;
    }
    const frt_op_def *d = frt_op_lookup(n->domain, n->op_type, n->opset);
    if (d && FRT_SELTRACE_ON) frt_seltrace_op(n->domain, n->op_type, n->opset);
    return d;
}

/* A node of some block without a definition. */
typedef struct bad_node {
    const frt_graph *g;
    const frt_node *n;
} bad_node;

static bool collect_bad(const frt_compile_ctx *cx, const frt_graph *g, bad_node **list, size_t *n,
                        size_t *cap) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const frt_node *nd = &g->nodes[i];
        if (!nd->dead && !frt_compile_find(cx, nd)) {
            if (*n == *cap) {
                size_t c = *cap ? 2 * *cap : 16;
                bad_node *l = realloc(*list, c * sizeof *l);
                if (!l) return false;
                *list = l;
                *cap = c;
            }
            (*list)[(*n)++] = (bad_node){g, nd};
        }
        for (int32_t k = 0; FRT_SUBGRAPHS && k < nd->n_sub; k++)
            if (!collect_bad(cx, nd->sub[k], list, n, cap)) return false;
    }
    return true;
}

static bool same_op(const frt_node *a, const frt_node *b) {
    return strcmp(a->op_type, b->op_type) == 0 && strcmp(a->domain, b->domain) == 0;
}

/* A selective build: one message naming the op types of bad[] that its selection left out, or
 * FRT_OK when there are none (then the ops are missing from flatrt itself). */
static frt_status left_out(const bad_node *bad, size_t n_bad) {
    const char *file = frt_selection_file();
    if (!file) return FRT_OK;
    char list[1024];
    size_t o = 0, k = 0;
    list[0] = 0;
    for (size_t i = 0; i < n_bad && o < sizeof list; i++) {
        const frt_node *n = bad[i].n;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) seen = same_op(bad[j].n, n);
        if (seen || !frt_op_left_out(n->domain, n->op_type)) continue;
        o += (size_t)snprintf(list + o, sizeof list - o, "%s'%s' (%s)", k ? ", " : "", n->op_type,
                              n->domain[0] ? n->domain : "ai.onnx");
        k++;
    }
    if (!k) return FRT_OK;
    return frt_error(FRT_ERR_UNSUPPORTED, "%s %s not in this build's selection (%s)",
                     k == 1 ? "op" : "ops", list, file);
}

/* Collects every unsupported op type of g and its subgraphs with the names of its nodes (a node
 * of a subgraph as "<subgraph path>/<node>") into one message, and why (no such op, or the opset
 * the node's domain imports is outside the implemented ranges). */
static frt_status check_supported(const frt_compile_ctx *cx, const frt_graph *g) {
    bad_node *bad = NULL;
    size_t n_bad = 0, cap = 0;
    if (!collect_bad(cx, g, &bad, &n_bad, &cap)) {
        free(bad);
        return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    }
    if (!n_bad) return FRT_OK;
    frt_status sel = left_out(bad, n_bad);
    if (sel) {
        free(bad);
        return sel;
    }
    char msg[3500];
    size_t o = 0;
    o += (size_t)snprintf(msg + o, sizeof msg - o, "unsupported operators:");
    bool *done = calloc(n_bad, 1);
    if (!done) {
        free(bad);
        return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    }
    size_t types = 0;
    for (size_t i = 0; i < n_bad && o < sizeof msg; i++) {
        const frt_node *n = bad[i].n;
        if (done[i]) continue;
        size_t count = 0;
        for (size_t j = i; j < n_bad; j++) count += !done[j] && same_op(bad[j].n, n);
        /* an op flatrt has, but not for this opset: say so with the domain and opset */
        char why[256] = "";
        if (frt_op_find(n->domain, n->op_type)) {
            char r[200];
            frt_op_table_find(frt_op_registry(), n->domain, n->op_type, n->opset, r, sizeof r);
            snprintf(why, sizeof why, " [domain %s, %s]", n->domain[0] ? n->domain : "ai.onnx", r);
        }
        o += (size_t)snprintf(msg + o, sizeof msg - o, "%s %s%s%s%s (%zu node%s: ",
                              types ? ";" : "", n->domain[0] ? n->domain : "",
                              n->domain[0] ? "::" : "", n->op_type, why, count,
                              count == 1 ? "" : "s");
        size_t listed = 0;
        for (size_t j = i; j < n_bad && o < sizeof msg; j++) {
            if (done[j] || !same_op(bad[j].n, n)) continue;
            done[j] = true;
            const char *path = bad[j].g->path ? bad[j].g->path : ""; /* NULL: built by hand */
            if (listed < 8)
                o += (size_t)snprintf(msg + o, sizeof msg - o, "%s%s%s%s", listed ? ", " : "",
                                      path, path[0] ? "/" : "", bad[j].n->name);
            else if (listed == 8)
                o += (size_t)snprintf(msg + o, sizeof msg - o, ", ...");
            listed++;
        }
        if (o < sizeof msg) o += (size_t)snprintf(msg + o, sizeof msg - o, ")");
        types++;
    }
    free(done);
    free(bad);
    return frt_error(FRT_ERR_UNSUPPORTED, "%s", msg);
}

static bool all_inputs_const(const frt_graph *g, const frt_node *n) {
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] >= 0 && g->values[n->in[i]].kind != FRT_VALUE_CONST) return false;
    return true;
}

static bool inputs_shape_known(const frt_graph *g, const frt_node *n) {
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] >= 0 && !frt_shape_known(&g->values[n->in[i]].v)) return false;
    return true;
}

static frt_status infer_node(frt_graph *g, frt_node *n, const frt_op_def *def) {
    frt_value *in[MAX_NODE_IO], *out[MAX_NODE_IO];
    frt_value dummy[4];
    frt_op_ctx c;
    if (n->n_in > MAX_NODE_IO || n->n_out > MAX_NODE_IO)
        return frt_error(FRT_ERR_UNSUPPORTED, "node '%s' has too many inputs", n->name);
    node_ctx(g, n, in, out, &c);
    /* sequence and optional values go only to the ops that take them */
    for (int i = 0; i < n->n_in && !(def->flags & FRT_OP_SEQ_VALUES); i++)
        if (in[i] && in[i]->vtype)
            return frt_error(FRT_ERR_UNSUPPORTED, "node '%s' (%s): input %d is a %s; the op takes "
                             "tensors", n->name, n->op_type, i, frt_vtype_name(in[i]->vtype));
    /* omitted optional outputs still get somewhere to write their inferred shape */
    for (int i = 0; i < n->n_out; i++)
        if (!out[i]) {
            memset(&dummy[i & 3], 0, sizeof dummy[0]);
            out[i] = &dummy[i & 3];
        }
    frt_status st = def->infer(&c);
    if (st) return st;
    for (int i = 0; i < n->n_out; i++) {
        if (n->out[i] < 0) continue;
        const frt_value *v = &g->values[n->out[i]].v;
        if (v->rank > FRT_MAX_RANK)
            return frt_error(FRT_ERR_UNSUPPORTED, "node '%s' (%s): output rank %d > %d",
                             n->name, n->op_type, v->rank, FRT_MAX_RANK);
    }
    return FRT_OK;
}

static frt_status compile_block(frt_compile_ctx *cx, frt_graph *g, int32_t parent,
                                int32_t *id);
static frt_status select_steps(frt_compile_ctx *cx, frt_graph *g, const frt_op_def **defs,
                               frt_program *p, int32_t **node_blocks);

/* Looks up the definition of every live node of g once (defs[i] for node i). The whole tree was
 * checked first (check_supported), so a node without one is an internal error. */
static frt_status resolve_defs(const frt_compile_ctx *cx, const frt_graph *g,
                               const frt_op_def **defs) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const frt_node *n = &g->nodes[i];
        defs[i] = n->dead ? NULL : frt_compile_find(cx, n);
        if (!n->dead && !defs[i])
            return frt_error(FRT_ERR_INTERNAL, "node '%s' (%s): no definition after fusion",
                             n->name, n->op_type);
    }
    return FRT_OK;
}
static frt_status classify(frt_compile_ctx *cx, frt_graph *g, frt_program *p);

/* Load-time types of a subgraph's outer values, from the enclosing graph. An outer constant with
 * data becomes a constant of the subgraph sharing that data (the enclosing graph keeps it: the
 * owner node's captured read counts as a reader that never copied it). */
static void bind_outer(frt_graph *g) {
    const frt_graph *pg = g->parent;
    const frt_node *on = &pg->nodes[g->owner];
    for (size_t v = 0; v < g->n_values; v++) {
        frt_ir_value *x = &g->values[v];
        if (x->kind != FRT_VALUE_OUTER) continue;
        const frt_ir_value *pv = &pg->values[on->in[on->n_in + x->outer]];
        x->v = pv->v;
        x->v.layout = FRT_LAYOUT_PLAIN;
        if (pv->kind == FRT_VALUE_CONST && pv->v.data) x->kind = FRT_VALUE_CONST;
        else x->v.data = NULL;
    }
}

/* A subgraph input declared without a type (allowed by ONNX; the expanded function bodies of the
 * node suite have them) gets the dtype of the owner's input in the same position counted from the
 * end: Loop (M, cond, v...) -> (iter, cond, v...), Scan (states, scan inputs) -> (states, slices).
 * Its shape stays unknown. */
static frt_status type_sub_inputs(const frt_graph *g, const frt_node *n, frt_graph *sub) {
    for (size_t i = 0; i < sub->n_inputs; i++) {
        frt_ir_value *v = &sub->values[sub->inputs[i]];
        if (v->v.dtype) continue;
        int64_t j = (int64_t)n->n_in - (int64_t)sub->n_inputs + (int64_t)i;
        if (j < 0 || n->in[j] < 0 || !g->values[n->in[j]].v.dtype)
            return frt_error(FRT_ERR_UNSUPPORTED, "subgraph %s: input '%s' has no type",
                             sub->path, v->name);
        v->v.dtype = g->values[n->in[j]].v.dtype;
        v->v.vtype = g->values[n->in[j]].v.vtype;
        if (v->v.vtype) frt_value_set_container(&v->v, v->v.vtype, v->v.dtype);
    }
    return FRT_OK;
}

/* Inference (with folding), fusion, selection, layouts and classes for block bid; defs and
 * node_blocks have an entry per node of its graph. */
static frt_status compile_graph(frt_compile_ctx *cx, int32_t bid, const frt_op_def **defs,
                                int32_t **node_blocks) {
    frt_graph *g = cx->blocks[bid].g;
    const frt_options *opt = cx->opt;
    frt_compile_stats *stats = cx->stats;
    frt_status st;
    if (FRT_SUBGRAPHS && g->parent) bind_outer(g);
    st = resolve_defs(cx, g, defs);
    if (st) return st;

    /* 1. Shape inference in topological order, folding constant nodes as they are met. A node's
       subgraphs are compiled first: its infer may read their output types. */
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_node *n = &g->nodes[i];
        const frt_op_def *def = defs[i];
        if (n->dead) continue;
        if (FRT_SUBGRAPHS && n->n_sub) {
            int32_t *ids = frt_arena_array(cx->arena, (size_t)n->n_sub, sizeof *ids);
            if (!ids) return frt_error(FRT_ERR_NO_MEMORY, "out of memory compiling the model");
            for (int32_t k = 0; k < n->n_sub; k++) {
                st = type_sub_inputs(g, n, n->sub[k]);
                if (st) return st;
                st = compile_block(cx, n->sub[k], bid, &ids[k]);
                if (st) return st;
            }
            node_blocks[i] = ids;
        }
        st = infer_node(g, n, def);
        if (st) return st;
        bool foldable = all_inputs_const(g, n) ||
                        ((def->flags & FRT_OP_SHAPE_ONLY) && inputs_shape_known(g, n));
        /* only registry ops fold (they run without a runtime); never a node with subgraphs */
        foldable = foldable && !n->n_sub && !(def->flags & FRT_OP_NO_FOLD) &&
                   frt_op_lookup(n->domain, n->op_type, n->opset) == def;
        if (opt->fold_constants && foldable) {
            int r = frt_pass_fold_node(g, (int32_t)i, def, cx->arena, &st);
            if (r < 0) return st;
            stats->num_folded += (size_t)r;
        }
    }
    frt_graph_count_uses(g);
    frt_pass_dce(g);

    /* 2. Fusion. Fused nodes may have become internal ops: their definitions are looked up again. */
    if (opt->fuse) {
        int r = frt_pass_fuse(g, cx->arena, &stats->transformed_bytes, &st);
        if (r < 0) return st;
        stats->num_fused += (size_t)r;
        frt_graph_count_uses(g);
        frt_pass_dce(g);
        /* nodes may also have moved (fuse_pool.c) */
        if ((st = resolve_defs(cx, g, defs))) return st;
    }

    /* 3. Kernel selection: one step per live node; 4. layouts: reorder steps; 5. classes. */
    frt_program *p = cx->blocks[bid].prog;
    st = select_steps(cx, g, defs, p, node_blocks);
    if (st) return st;
#if defined(FRT_SELECTIVE) && !FRT_HAVE_DNNL
    /* only the oneDNN provider's kernels declare non-plain layouts: nothing to reorder, and a
     * selective build without it leaves layout.c and the Reorder op out */
    p->n_reorders = 0;
#else
    st = frt_layout_pass(g, cx->arena, &p->steps, &p->defs, &p->n_steps, &p->n_reorders);
    if (st) return st;
#endif
    return classify(cx, g, p);
}

/* Adds block g (child of block parent, or the model's graph when parent < 0) and compiles it. */
static frt_status compile_block(frt_compile_ctx *cx, frt_graph *g, int32_t parent, int32_t *id) {
    if (cx->n_blocks == cx->cap_blocks) {
        size_t c = cx->cap_blocks ? 2 * cx->cap_blocks : 4;
        frt_block *b = realloc(cx->blocks, c * sizeof *b);
        if (!b) return frt_error(FRT_ERR_NO_MEMORY, "out of memory compiling the model");
        cx->blocks = b;
        cx->cap_blocks = c;
    }
    frt_program *p = frt_arena_alloc(cx->arena, sizeof *p, 8);
    if (!p) return frt_error(FRT_ERR_NO_MEMORY, "out of memory compiling the model");
    memset(p, 0, sizeof *p);
    int32_t bid = (int32_t)cx->n_blocks++; /* every counted block is initialized (release) */
    cx->blocks[bid] = (frt_block){g, p, NULL, parent, parent < 0 ? -1 : g->owner};
    *id = bid;
    int32_t **node_blocks = calloc(g->n_nodes + 1, sizeof *node_blocks);
    const frt_op_def **defs = calloc(g->n_nodes + 1, sizeof *defs);
    frt_status st = FRT_ERR_NO_MEMORY;
    if (!node_blocks || !defs) frt_error(st, "out of memory compiling the model");
    else st = compile_graph(cx, bid, defs, node_blocks);
    free(node_blocks);
    free(defs);
    if (st && g->parent && !cx->context_added) {
        frt_error_context(st, "subgraph %s", g->path);
        cx->context_added = true;
    }
    return st;
}

/* A node the hoisting pass may move out of a loop body: one with a definition, not random. */
static bool hoistable(void *user, const frt_node *n) {
    const frt_op_def *d = frt_compile_find(user, n);
    return d && !(d->flags & FRT_OP_NO_FOLD);
}

/* Passes over loop bodies on the IR before any block is compiled (the body shapes they rewrite
 * are matched before folding): EmbeddingBag Loops (with fusion on), then loop-invariant nodes
 * moved out of Loop and Scan bodies (with constant folding on). */
static frt_status loop_passes(frt_compile_ctx *cx, frt_graph *g) {
    frt_status st = FRT_OK;
    if (cx->opt->fuse && FRT_OP_BUILT(EmbeddingBag)) {
        int r = frt_pass_embedding_bag(g, &st);
        if (r < 0) return st;
        cx->stats->num_fused += (size_t)r;
    }
    /* hoisting moves nodes out of Loop and Scan bodies only */
    if (cx->opt->fold_constants && (FRT_OP_BUILT(Loop) || FRT_OP_BUILT(Scan)) &&
        frt_pass_hoist(g, hoistable, cx, &st) < 0)
        return st;
    return FRT_OK;
}

frt_status frt_compile_blocks(frt_graph *g, const frt_options *opt,
                              const frt_provider *const *providers, size_t n_providers,
                              const frt_op_source *src, frt_arena *arena, frt_block **blocks,
                              size_t *n_blocks, frt_compile_stats *stats) {
    memset(stats, 0, sizeof *stats);
    *blocks = NULL;
    *n_blocks = 0;
    frt_compile_ctx cx = {opt, providers, n_providers, src, arena, stats, NULL, 0, 0, false};
    frt_status st = check_supported(&cx, g);
    if (st) return st;
    for (size_t i = 0; !FRT_SEQUENCES && i < g->n_values; i++)
        if (g->values[i].v.vtype)
            return frt_error(FRT_ERR_UNSUPPORTED, "value '%s' is a %s: feature 'sequences' not in "
                             "this build's selection (%s); trace a model with sequence or "
                             "optional values to keep it", g->values[i].name,
                             frt_vtype_name(g->values[i].v.vtype), frt_selection_file());
    st = loop_passes(&cx, g);
    if (st) return st;
    int32_t id;
    st = compile_block(&cx, g, -1, &id);
    if (!st) {
        *blocks = frt_arena_array(arena, cx.n_blocks, sizeof **blocks);
        if (!*blocks) st = frt_error(FRT_ERR_NO_MEMORY, "out of memory compiling the model");
        else memcpy(*blocks, cx.blocks, cx.n_blocks * sizeof **blocks);
        *n_blocks = cx.n_blocks;
    }
    if (st) frt_blocks_release(cx.blocks, cx.n_blocks); /* kernels selected before the failure */
    free(cx.blocks);
    return st;
}

frt_status frt_compile(frt_graph *g, const frt_options *opt, frt_arena *arena, frt_program *p,
                       frt_compile_stats *stats) {
    size_t n;
    const frt_provider *const *list = frt_default_providers(&n);
    return frt_compile_with(g, opt, list, n, arena, p, stats);
}

frt_status frt_compile_with(frt_graph *g, const frt_options *opt,
                            const frt_provider *const *list, size_t n_providers, frt_arena *arena,
                            frt_program *p, frt_compile_stats *stats) {
    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].n_sub) {
            memset(stats, 0, sizeof *stats);
            return frt_error(FRT_ERR_UNSUPPORTED, "node '%s' (%s) has subgraphs: compile the "
                             "graph into blocks", g->nodes[i].name, g->nodes[i].op_type);
        }
    frt_block *blocks;
    size_t n_blocks;
    frt_status st =
        frt_compile_blocks(g, opt, list, n_providers, NULL, arena, &blocks, &n_blocks, stats);
    if (!st) *p = *blocks[0].prog;
    return st;
}

void frt_program_release(frt_program *p) {
    for (size_t i = 0; p->steps && i < p->n_steps; i++) {
        frt_kernel *k = &p->steps[i].k;
        if (k->destroy) k->destroy((void *)k->params);
        k->destroy = NULL;
    }
}

void frt_blocks_release(frt_block *blocks, size_t n_blocks) {
    for (size_t b = 0; blocks && b < n_blocks; b++)
        if (blocks[b].prog) frt_program_release(blocks[b].prog);
}

static frt_status select_all(frt_compile_ctx *cx, frt_graph *g, const frt_op_def **defs,
                             frt_program *p, int32_t **node_blocks, int32_t *pending,
                             bool *copied);

static frt_status select_steps(frt_compile_ctx *cx, frt_graph *g, const frt_op_def **defs,
                               frt_program *p, int32_t **node_blocks) {
    size_t n_live = 0;
    for (size_t i = 0; i < g->n_nodes; i++) n_live += !g->nodes[i].dead;
    p->steps = frt_arena_array(cx->arena, n_live + 1, sizeof *p->steps);
    p->defs = frt_arena_array(cx->arena, n_live + 1, sizeof *p->defs);
    if (!p->steps || !p->defs) return frt_error(FRT_ERR_NO_MEMORY, "out of memory compiling the model");
    /* Constants whose every reader copied them at select are released right after the last such
       select, so original and packed weights never all coexist (peak RSS). A captured read
       (subgraph) never copies. */
    size_t nv = g->n_values;
    int32_t *pending = calloc(nv + 1, sizeof *pending);
    bool *copied = malloc(nv + 1);
    if (!pending || !copied) {
        free(pending);
        free(copied);
        return frt_error(FRT_ERR_NO_MEMORY, "out of memory compiling the model");
    }
    memset(copied, 1, nv + 1);
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead)
            for (int j = 0; j < frt_node_n_reads(&g->nodes[i]); j++)
                if (g->nodes[i].in[j] >= 0) pending[g->nodes[i].in[j]]++;
    frt_status st = select_all(cx, g, defs, p, node_blocks, pending, copied);
    free(pending);
    free(copied);
    return st;
}

/* FRT_K_* flags a kernel of an op with capabilities def->flags may set. */
static uint32_t allowed_kernel_flags(const frt_op_def *def) {
    uint32_t f = def->flags, k = 0;
    if (f & FRT_OP_MAY_ALIAS) k |= FRT_K_VIEW;
    if (f & FRT_OP_SHAPE_ONLY) k |= FRT_K_SHAPE_ONLY;
    if (f & FRT_OP_INPLACE) k |= FRT_K_INPLACE;
    if (f & FRT_OP_CONCAT_INPLACE) k |= FRT_K_CONCAT;
    if (f & FRT_OP_DATA_SHAPE) k |= FRT_K_DYNAMIC_OUT;
    return k;
}

/* Checks a kernel against its op's contract; non-builtin kernels get "<provider>:" names. */
static frt_status accept_kernel(const frt_provider *pr, const frt_op_def *def, const frt_node *n,
                                frt_arena *arena, frt_kernel *k) {
    if (k->flags & ~allowed_kernel_flags(def))
        return frt_error(FRT_ERR_INTERNAL, "node '%s' (%s): %s kernel '%s' has flags 0x%x beyond "
                         "the op's capabilities", n->name, n->op_type, pr->name,
                         k->name ? k->name : "?", (unsigned)k->flags);
    if (!(k->flags & FRT_K_VIEW) && !k->fn)
        return frt_error(FRT_ERR_INTERNAL, "node '%s' (%s): selected kernel has no function",
                         n->name, n->op_type);
    if ((k->flags & FRT_K_VIEW) && (n->n_in < 1 || n->in[0] < 0 || n->n_out < 1))
        return frt_error(FRT_ERR_INTERNAL, "node '%s' (%s): view without input", n->name,
                         n->op_type);
    if ((k->flags & FRT_K_INPLACE) && (k->inplace_in < 0 || k->inplace_in >= n->n_in))
        return frt_error(FRT_ERR_INTERNAL, "node '%s' (%s): in place over input %d of %d",
                         n->name, n->op_type, (int)k->inplace_in, (int)n->n_in);
    if ((k->flags & FRT_K_CONCAT) && !k->params)
        return frt_error(FRT_ERR_INTERNAL, "node '%s' (%s): concat kernel without an axis",
                         n->name, n->op_type);
    if (pr != &frt_provider_builtin) {
        const char *kn = k->name ? k->name : "kernel";
        size_t len = strlen(pr->name) + strlen(kn) + 2;
        char *name = frt_arena_alloc(arena, len, 1);
        if (!name) return frt_error(FRT_ERR_NO_MEMORY, "out of memory compiling the model");
        snprintf(name, len, "%s:%s", pr->name, kn);
        k->name = name;
    }
    return FRT_OK;
}

/* Tries the providers in order. A provider declines with FRT_DECLINE or FRT_ERR_UNSUPPORTED; any
 * other error fails the load. When all decline, the message lists what each one said (a single
 * provider's own message is passed on unchanged). */
static frt_status select_node(const frt_compile_ctx *cx, const frt_op_def *def, frt_op_ctx *c,
                              frt_kernel *k) {
    char said[2048];
    size_t o = 0;
    said[0] = 0;
    frt_status last = FRT_ERR_UNSUPPORTED;
    for (size_t i = 0; i < cx->n_providers; i++) {
        const frt_provider *pr = cx->providers[i];
        memset(k, 0, sizeof *k);
        frt_error_clear();
        frt_status st = pr->select(pr, def, c, k);
        if (st == FRT_OK) {
            st = accept_kernel(pr, def, c->node, c->arena, k);
            if (st && k->destroy) k->destroy((void *)k->params);
            if (!st && FRT_SELTRACE_ON) frt_seltrace_kernel(def, c, k, pr->name);
            return st;
        }
        /* a provider that fails or declines after making params with a destructor */
        if (k->destroy) k->destroy((void *)k->params);
        k->destroy = NULL;
        if (st != FRT_DECLINE && st != FRT_ERR_UNSUPPORTED) return st;
        last = st;
        if (o < sizeof said)
            o += (size_t)snprintf(said + o, sizeof said - o, "%s%s: %s", i ? "; " : "", pr->name,
                                  frt_last_error()[0] ? frt_last_error() : "declined");
    }
    memset(k, 0, sizeof *k);
    if (cx->n_providers == 1 && last == FRT_ERR_UNSUPPORTED) return last; /* its message stands */
    return frt_error(FRT_ERR_UNSUPPORTED, "node '%s' (%s): no provider accepts it: %s",
                     c->node->name, c->node->op_type, said);
}

static frt_status select_all(frt_compile_ctx *cx, frt_graph *g, const frt_op_def **defs,
                             frt_program *p, int32_t **node_blocks, int32_t *pending,
                             bool *copied) {
    frt_status st;
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_node *n = &g->nodes[i];
        if (n->dead) continue;
        const frt_op_def *def = defs[i];
        frt_value *in[MAX_NODE_IO], *out[MAX_NODE_IO];
        frt_op_ctx c;
        node_ctx(g, n, in, out, &c);
        c.arena = cx->arena;
        c.isa = frt_cpu_tier();
        n->wprec = cx->opt ? (int8_t)cx->opt->weights_precision : 0;
        frt_kernel k;
        st = select_node(cx, def, &c, &k);
        if (st) return st;
        /* later selections see the layout this kernel writes (a provider may follow it) */
        for (int j = 0; j < n->n_out && k.out_layouts; j++)
            if (n->out[j] >= 0) g->values[n->out[j]].v.layout = k.out_layouts[j];
        for (int j = 0; j < frt_node_n_reads(n); j++) {
            int32_t v = n->in[j];
            if (v < 0) continue;
            if (j >= n->n_in || j >= 32 || !(k.const_copied & (1u << j))) copied[v] = false;
            if (--pending[v] == 0 && copied[v] && g->values[v].kind == FRT_VALUE_CONST &&
                !g->values[v].is_output)
                frt_graph_drop_const(g, v);
        }
        size_t si = p->n_steps++;
        frt_step *s = &p->steps[si];
        s->k = k;
        s->in = n->in;
        s->out = n->out;
        s->n_in = n->n_in;
        s->n_out = n->n_out;
        s->node = (int32_t)i;
        s->ir = n;
        s->blocks = node_blocks[i];
        p->defs[si] = def;
    }
    return FRT_OK;
}

/* Step classes, value classes and lifetimes over the final step list. */
static frt_status classify(frt_compile_ctx *cx, frt_graph *g, frt_program *p) {
    frt_arena *arena = cx->arena;
    size_t ns = p->n_steps;
    p->cls = frt_arena_array(arena, ns + 1, 1);
    p->deferred = frt_arena_array(arena, ns + 1, 1);
    p->compute = frt_arena_array(arena, ns + 1, sizeof(int32_t));
    p->input_views = frt_arena_array(arena, ns + 1, sizeof(int32_t));
    p->concat_axis = frt_arena_array(arena, ns + 1, sizeof(int32_t));
    size_t nv = g->n_values;
    p->vclass = frt_arena_array(arena, nv + 1, 1);
    p->root = frt_arena_array(arena, nv + 1, sizeof(int32_t));
    p->def_pos = frt_arena_array(arena, nv + 1, sizeof(int32_t));
    p->last_pos = frt_arena_array(arena, nv + 1, sizeof(int32_t));
    if (!p->cls || !p->deferred || !p->compute || !p->input_views || !p->concat_axis ||
        !p->vclass || !p->root || !p->def_pos || !p->last_pos)
        return frt_error(FRT_ERR_NO_MEMORY, "out of memory compiling the model");

    for (size_t v = 0; v < nv; v++) {
        p->root[v] = (int32_t)v;
        p->def_pos[v] = p->last_pos[v] = -1;
        frt_value_kind kd = g->values[v].kind;
        p->vclass[v] = kd == FRT_VALUE_INPUT || kd == FRT_VALUE_OUTER ? FRT_VC_INPUT
                       : kd == FRT_VALUE_CONST                       ? FRT_VC_CONST
                                                                     : FRT_VC_NONE;
    }
    for (size_t si = 0; si < ns; si++) {
        frt_step *s = &p->steps[si];
        const frt_node *n = s->ir;
        const frt_kernel k = s->k;
        int32_t n_reads = frt_node_n_reads(n);
        bool reads_dynamic = false;
        for (int j = 0; j < n_reads; j++)
            if (n->in[j] >= 0 && p->vclass[p->root[n->in[j]]] == FRT_VC_DYNAMIC) reads_dynamic = true;
        /* an input whose data decides the output shapes and that is known only while running */
        uint32_t shape_in = (p->defs[si]->flags & FRT_OP_SHAPE_IN_MASK) >> 8;
        for (int j = 0; j < n->n_in && j < 8; j++) {
            if (!(shape_in >> j & 1) || n->in[j] < 0) continue;
            int vc = p->vclass[p->root[n->in[j]]];
            if (vc != FRT_VC_CONST && vc != FRT_VC_SHAPE) reads_dynamic = true;
        }
        p->deferred[si] = (k.flags & FRT_K_DYNAMIC_OUT) ? FRT_DEFER_KERNEL
                          : reads_dynamic               ? FRT_DEFER_INFER
                                                        : FRT_DEFER_NONE;
        if (!FRT_DYNAMIC_STEPS && p->deferred[si]) /* no op of this selection makes one */
            return frt_error(FRT_ERR_INTERNAL, "node '%s' (%s) is shaped while running, which "
                             "this selective build (%s) does not support", n->name, n->op_type,
                             frt_selection_file());
        if ((k.flags & FRT_K_VIEW) && !p->deferred[si]) {
            p->cls[si] = FRT_STEP_VIEW;
            int32_t r = p->root[n->in[0]];
            p->root[n->out[0]] = r;
            p->vclass[n->out[0]] = FRT_VC_VIEW;
            if (p->vclass[r] == FRT_VC_INPUT) p->input_views[p->n_input_views++] = (int32_t)si;
            continue;
        }
        bool shape_class = !p->deferred[si] && (k.flags & FRT_K_SHAPE_ONLY) != 0;
        bool seq_values = false; /* sequences and optionals exist only while running */
        for (int j = 0; j < n_reads; j++)
            if (n->in[j] >= 0 && g->values[n->in[j]].v.vtype) seq_values = true;
        for (int j = 0; j < n->n_out; j++)
            if (n->out[j] >= 0 && g->values[n->out[j]].v.vtype) seq_values = true;
        if (seq_values) shape_class = false;
        if (!shape_class && !p->deferred[si] && !n->n_sub && !seq_values) {
            shape_class = true;
            for (int j = 0; j < n_reads; j++) {
                if (n->in[j] < 0) continue;
                int vc = p->vclass[p->root[n->in[j]]];
                if (vc != FRT_VC_CONST && vc != FRT_VC_SHAPE) shape_class = false;
            }
        }
        if (shape_class) {
            p->cls[si] = FRT_STEP_SHAPE;
            for (int j = 0; j < n->n_out; j++)
                if (n->out[j] >= 0) p->vclass[n->out[j]] = FRT_VC_SHAPE;
            continue;
        }
        p->cls[si] = FRT_STEP_COMPUTE;
        p->has_dynamic |= p->deferred[si] != FRT_DEFER_NONE;
        int32_t pos = (int32_t)p->n_compute;
        p->compute[p->n_compute++] = (int32_t)si;
        p->concat_axis[pos] = -1;
        if (!p->deferred[si] && (k.flags & FRT_K_CONCAT) && n->n_out == 1 && n->out[0] >= 0) {
            int r = g->values[n->out[0]].v.rank;
            const frt_concat_params *cp = k.params;
            p->concat_axis[pos] = r > 0 ? frt_norm_axis(cp->axis, r) : -1;
        }
        for (int j = 0; j < n->n_out; j++) {
            if (n->out[j] < 0) continue;
            p->vclass[n->out[j]] = g->values[n->out[j]].v.vtype ? FRT_VC_SEQ
                                   : p->deferred[si]            ? FRT_VC_DYNAMIC
                                                                : FRT_VC_MANAGED;
            p->def_pos[n->out[j]] = pos;
            p->last_pos[n->out[j]] = pos;
        }
        for (int j = 0; j < n_reads; j++) {
            if (n->in[j] < 0) continue;
            int32_t r = p->root[n->in[j]];
            if (p->vclass[r] == FRT_VC_MANAGED && p->last_pos[r] < pos) p->last_pos[r] = pos;
        }
    }
    /* Graph outputs keep their own storage: their producer (or the root of the view) is OWNED. */
    for (size_t i = 0; i < g->n_outputs; i++) {
        int32_t r = p->root[g->outputs[i]];
        if (p->vclass[r] == FRT_VC_MANAGED) p->vclass[r] = FRT_VC_OWNED;
    }
    return FRT_OK;
}
