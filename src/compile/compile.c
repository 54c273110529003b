/* Compile: IR -> program. Shape inference, folding, fusion, kernel selection, step classes,
 * lifetimes. Runs once per model load. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

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
}

/* Collects every unsupported op type with the names of its nodes into one message. */
static frt_status check_supported(const frt_graph *g) {
    size_t bad = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!frt_op_find(g->nodes[i].domain, g->nodes[i].op_type)) bad++;
    if (!bad) return FRT_OK;
    char msg[3500];
    size_t o = 0;
    o += (size_t)snprintf(msg + o, sizeof msg - o, "unsupported operators:");
    bool *done = calloc(g->n_nodes, 1);
    if (!done) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    size_t types = 0;
    for (size_t i = 0; i < g->n_nodes && o < sizeof msg; i++) {
        const frt_node *n = &g->nodes[i];
        if (done[i] || frt_op_find(n->domain, n->op_type)) continue;
        size_t count = 0;
        for (size_t j = i; j < g->n_nodes; j++)
            if (!done[j] && strcmp(g->nodes[j].op_type, n->op_type) == 0 &&
                strcmp(g->nodes[j].domain, n->domain) == 0)
                count++;
        o += (size_t)snprintf(msg + o, sizeof msg - o, "%s %s%s%s (%zu node%s: ", types ? ";" : "",
                              n->domain[0] ? n->domain : "", n->domain[0] ? "::" : "", n->op_type,
                              count, count == 1 ? "" : "s");
        size_t listed = 0;
        for (size_t j = i; j < g->n_nodes && o < sizeof msg; j++) {
            if (done[j] || strcmp(g->nodes[j].op_type, n->op_type) != 0 ||
                strcmp(g->nodes[j].domain, n->domain) != 0)
                continue;
            done[j] = true;
            if (listed < 8)
                o += (size_t)snprintf(msg + o, sizeof msg - o, "%s%s", listed ? ", " : "",
                                      g->nodes[j].name);
            else if (listed == 8)
                o += (size_t)snprintf(msg + o, sizeof msg - o, ", ...");
            listed++;
        }
        if (o < sizeof msg) o += (size_t)snprintf(msg + o, sizeof msg - o, ")");
        types++;
    }
    free(done);
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

static frt_status select_all(frt_graph *g, frt_arena *arena, frt_program *p, int32_t *pending,
                             bool *copied);

frt_status frt_compile(frt_graph *g, const frt_options *opt, frt_arena *arena, frt_program *p,
                       frt_compile_stats *stats) {
    frt_status st = check_supported(g);
    if (st) return st;
    memset(p, 0, sizeof *p);
    memset(stats, 0, sizeof *stats);

    /* 1. Shape inference in topological order, folding constant nodes as they are met. */
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_node *n = &g->nodes[i];
        const frt_op_def *def = frt_op_find(n->domain, n->op_type);
        st = infer_node(g, n, def);
        if (st) return st;
        bool foldable = all_inputs_const(g, n) ||
                        (strcmp(n->op_type, "Shape") == 0 && inputs_shape_known(g, n));
        if (opt->fold_constants && foldable) {
            int r = frt_pass_fold_node(g, (int32_t)i, arena, &st);
            if (r < 0) return st;
            stats->num_folded += (size_t)r;
        }
    }
    frt_graph_count_uses(g);
    frt_pass_dce(g);

    /* 2. Fusion. */
    if (opt->fuse) {
        int r = frt_pass_fuse(g, arena, &stats->transformed_bytes, &st);
        if (r < 0) return st;
        stats->num_fused = (size_t)r;
        frt_graph_count_uses(g);
        frt_pass_dce(g);
    }

    /* 3. Kernel selection: one step per live node. */
    size_t n_live = 0;
    for (size_t i = 0; i < g->n_nodes; i++) n_live += !g->nodes[i].dead;
    p->steps = frt_arena_array(arena, n_live + 1, sizeof *p->steps);
    p->defs = frt_arena_array(arena, n_live + 1, sizeof *p->defs);
    p->cls = frt_arena_array(arena, n_live + 1, 1);
    p->compute = frt_arena_array(arena, n_live + 1, sizeof(int32_t));
    p->input_views = frt_arena_array(arena, n_live + 1, sizeof(int32_t));
    p->concat_axis = frt_arena_array(arena, n_live + 1, sizeof(int32_t));
    size_t nv = g->n_values;
    p->vclass = frt_arena_array(arena, nv + 1, 1);
    p->root = frt_arena_array(arena, nv + 1, sizeof(int32_t));
    p->def_pos = frt_arena_array(arena, nv + 1, sizeof(int32_t));
    p->last_pos = frt_arena_array(arena, nv + 1, sizeof(int32_t));
    if (!p->steps || !p->defs || !p->cls || !p->compute || !p->input_views || !p->concat_axis || !p->vclass ||
        !p->root || !p->def_pos || !p->last_pos)
        return frt_error(FRT_ERR_NO_MEMORY, "out of memory compiling the model");

    for (size_t v = 0; v < nv; v++) {
        p->root[v] = (int32_t)v;
        p->def_pos[v] = p->last_pos[v] = -1;
        p->vclass[v] = g->values[v].kind == FRT_VALUE_INPUT   ? FRT_VC_INPUT
                       : g->values[v].kind == FRT_VALUE_CONST ? FRT_VC_CONST
                                                              : FRT_VC_NONE;
    }

    /* Constants whose every reader copied them at select are released right after the last such
       select, so original and packed weights never all coexist (peak RSS). */
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
            for (int j = 0; j < g->nodes[i].n_in; j++)
                if (g->nodes[i].in[j] >= 0) pending[g->nodes[i].in[j]]++;
    st = select_all(g, arena, p, pending, copied);
    free(pending);
    free(copied);
    if (st) return st;
    /* Graph outputs keep their own storage: their producer (or the root of the view) is OWNED. */
    for (size_t i = 0; i < g->n_outputs; i++) {
        int32_t r = p->root[g->outputs[i]];
        if (p->vclass[r] == FRT_VC_MANAGED) p->vclass[r] = FRT_VC_OWNED;
    }
    return FRT_OK;
}

static frt_status select_all(frt_graph *g, frt_arena *arena, frt_program *p, int32_t *pending,
                             bool *copied) {
    frt_status st;
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_node *n = &g->nodes[i];
        if (n->dead) continue;
        const frt_op_def *def = frt_op_find(n->domain, n->op_type);
        frt_value *in[MAX_NODE_IO], *out[MAX_NODE_IO];
        frt_op_ctx c;
        node_ctx(g, n, in, out, &c);
        c.arena = arena;
        frt_kernel k = {0};
        st = def->select(&c, &k);
        if (st) return st;
        for (int j = 0; j < n->n_in; j++) {
            int32_t v = n->in[j];
            if (v < 0) continue;
            if (j >= 32 || !(k.const_copied & (1u << j))) copied[v] = false;
            if (--pending[v] == 0 && copied[v] && g->values[v].kind == FRT_VALUE_CONST &&
                !g->values[v].is_output)
                frt_graph_drop_const(g, v);
        }
        if (!(k.flags & FRT_K_VIEW) && !k.fn)
            return frt_error(FRT_ERR_INTERNAL, "node '%s' (%s): selected kernel has no function",
                             n->name, n->op_type);
        if ((k.flags & FRT_K_VIEW) && (n->n_in < 1 || n->in[0] < 0 || n->n_out < 1))
            return frt_error(FRT_ERR_INTERNAL, "node '%s' (%s): view without input", n->name,
                             n->op_type);
        size_t si = p->n_steps++;
        frt_step *s = &p->steps[si];
        s->k = k;
        s->in = n->in;
        s->out = n->out;
        s->n_in = n->n_in;
        s->n_out = n->n_out;
        s->node = (int32_t)i;
        s->ir = n;
        p->defs[si] = def;

        if (k.flags & FRT_K_VIEW) {
            p->cls[si] = FRT_STEP_VIEW;
            int32_t r = p->root[n->in[0]];
            p->root[n->out[0]] = r;
            p->vclass[n->out[0]] = FRT_VC_VIEW;
            if (p->vclass[r] == FRT_VC_INPUT) p->input_views[p->n_input_views++] = (int32_t)si;
            continue;
        }
        bool shape_class = (k.flags & FRT_K_SHAPE_ONLY) != 0;
        if (!shape_class) {
            shape_class = true;
            for (int j = 0; j < n->n_in; j++) {
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
        int32_t pos = (int32_t)p->n_compute;
        p->compute[p->n_compute++] = (int32_t)si;
        p->concat_axis[pos] = -1;
        if (strcmp(n->op_type, "Concat") == 0 && n->n_out == 1 && n->out[0] >= 0) {
            int r = g->values[n->out[0]].v.rank;
            int a = r > 0 ? frt_norm_axis(frt_attr_int(n, "axis", 0), r) : -1;
            p->concat_axis[pos] = a;
        }
        for (int j = 0; j < n->n_out; j++) {
            if (n->out[j] < 0) continue;
            p->vclass[n->out[j]] = FRT_VC_MANAGED;
            p->def_pos[n->out[j]] = pos;
            p->last_pos[n->out[j]] = pos;
        }
        for (int j = 0; j < n->n_in; j++) {
            if (n->in[j] < 0) continue;
            int32_t r = p->root[n->in[j]];
            if (p->vclass[r] == FRT_VC_MANAGED && p->last_pos[r] < pos) p->last_pos[r] = pos;
        }
    }
    return FRT_OK;
}
