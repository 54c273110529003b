/* Constant folding and dead-code elimination.
 *
 * A node whose inputs are all constants (or whose op reads only shapes, FRT_OP_SHAPE_ONLY, when
 * they are fully known) is evaluated once at load with its builtin kernel; its outputs become
 * constants in the model arena and the node is removed. */
#include <stdlib.h>
#include <string.h>

#include "ops/op.h"
#include "passes/passes.h"
#include "util/seltrace.h"

#define MAXIO 64

/* Runs the selected kernel k of node ni over vals (inputs, then outputs) into arena memory. */
static frt_status fold_run(frt_graph *g, int32_t ni, const frt_kernel *k, frt_value *vals,
                          frt_value **in, const int32_t *in_ids, const int32_t *out_ids,
                          frt_arena *arena);

int frt_pass_fold_node(frt_graph *g, int32_t ni, const frt_op_def *def, frt_arena *arena,
                       frt_status *st) {
    frt_node *n = &g->nodes[ni];
    if (n->n_in > MAXIO || n->n_out > MAXIO) return 0;
    for (int i = 0; i < n->n_out; i++) {
        if (n->out[i] < 0) continue;
        const frt_value *v = &g->values[n->out[i]].v;
        if (!frt_shape_known(v) || frt_dtype_size(v->dtype) == 0) return 0; /* cannot fold */
    }
    /* Local value array: inputs 0..n_in-1, outputs n_in.. */
    frt_value vals[2 * MAXIO];
    frt_value *in[MAXIO], *out[MAXIO];
    int32_t in_ids[MAXIO], out_ids[MAXIO];
    for (int i = 0; i < n->n_in; i++) {
        in_ids[i] = n->in[i] < 0 ? -1 : i;
        if (n->in[i] >= 0) vals[i] = g->values[n->in[i]].v;
        in[i] = n->in[i] < 0 ? NULL : &vals[i];
    }
    for (int i = 0; i < n->n_out; i++) {
        out_ids[i] = n->n_in + i;
        frt_value *o = &vals[n->n_in + i];
        memset(o, 0, sizeof *o);
        if (n->out[i] >= 0) *o = g->values[n->out[i]].v;
        out[i] = o;
    }
    frt_op_ctx c = {n, n->opset, n->n_in, n->n_out, in, out, arena, frt_cpu_tier()};
    frt_kernel k = {0};
    *st = def->select(&c, &k);
    if (*st) return -1;
    if (FRT_SELTRACE_ON) frt_seltrace_kernel(def, &c, &k, "builtin");
    *st = fold_run(g, ni, &k, vals, in, in_ids, out_ids, arena);
    if (k.destroy) k.destroy((void *)k.params); /* the kernel is not kept */
    if (*st) return -1;
    for (int i = 0; i < n->n_out; i++) {
        if (n->out[i] < 0) continue;
        frt_ir_value *v = &g->values[n->out[i]];
        v->v = vals[n->n_in + i];
        v->kind = FRT_VALUE_CONST;
        v->producer = -1;
        v->in_place = false;
    }
    n->dead = true;
    return 1;
}

static frt_status fold_run(frt_graph *g, int32_t ni, const frt_kernel *kp, frt_value *vals,
                          frt_value **in, const int32_t *in_ids, const int32_t *out_ids,
                          frt_arena *arena) {
    frt_node *n = &g->nodes[ni];
    frt_kernel k = *kp;
    for (int i = 0; i < n->n_out; i++) {
        frt_value *o = &vals[n->n_in + i];
        size_t nb = frt_value_nbytes(o);
        if (k.flags & FRT_K_VIEW) {
            o->data = i == 0 ? in[0]->data : NULL;
            continue;
        }
        o->data = frt_arena_alloc(arena, nb ? nb : 1, 64);
        if (!o->data) {
            return frt_error(FRT_ERR_NO_MEMORY,
                             "node '%s' (%s): out of memory folding a %zu-byte constant", n->name,
                             n->op_type, nb);
        }
    }
    if (!(k.flags & FRT_K_VIEW)) {
        void *scratch = NULL;
        frt_step s = {0};
        s.k = k;
        s.in = in_ids;
        s.out = out_ids;
        s.n_in = n->n_in;
        s.n_out = n->n_out;
        s.node = ni;
        s.ir = n;
        if (k.scratch) {
            size_t sb = k.scratch(&s, vals);
            scratch = frt_arena_alloc(arena, sb ? sb : 1, 64);
            if (!scratch) {
                return frt_error(FRT_ERR_NO_MEMORY,
                                 "node '%s' (%s): out of memory for folding scratch", n->name,
                                 n->op_type);
            }
        }
        frt_exec x = {.values = vals, .scratch = scratch};
        return k.fn(&s, &x);
    }
    return FRT_OK;
}

void frt_graph_count_uses(frt_graph *g) {
    for (size_t v = 0; v < g->n_values; v++) g->values[v].n_uses = g->values[v].is_output ? 1 : 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const frt_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < frt_node_n_reads(n); k++)
            if (n->in[k] >= 0) g->values[n->in[k]].n_uses++;
    }
}

void frt_pass_dce(frt_graph *g) {
    for (size_t i = g->n_nodes; i-- > 0;) {
        frt_node *n = &g->nodes[i];
        if (n->dead) continue;
        bool used = false;
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0 && g->values[n->out[k]].n_uses > 0) used = true;
        if (used) continue;
        n->dead = true;
        for (int k = 0; k < frt_node_n_reads(n); k++)
            if (n->in[k] >= 0) g->values[n->in[k]].n_uses--;
    }
}
