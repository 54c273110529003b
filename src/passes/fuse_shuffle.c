/* Channel shuffle (ShuffleNet) -> flatrt::ChannelShuffle (src/ops/shuffle.c), called by
 * frt_pass_fuse after the other fusions:
 *
 *   [Z = Concat(X_0 .. X_{k-1}, axis 1)]       absorbed when Z is read by the Reshape only
 *   R = Reshape(Z, [N, A, B, rest...])          Z: [N, C, spatial...], C = A B,
 *                                               prod(rest) = prod(spatial)
 *   T = Transpose(R, perm [0, 2, 1, 3, ..])     R read by T only
 *   Y = Reshape(T, [N, C, spatial...])          T read by Y only; Y has Z's dims
 *   [Slice(Y, start, end, axis 1, step 1) | Split(Y, axis 1) ...]
 *                                               every Slice / Split reading Y becomes an output
 *                                               (its channel range); Y itself stays an output
 *                                               when something else reads it or it is a graph
 *                                               output
 *
 * becomes one node ChannelShuffle(X_0 .. X_{k-1}; group A, starts, ends) at the position of the
 * Concat (or of the first Reshape): one copy of the channels instead of a concat, a transpose and
 * slice copies (and, on blocked data, no reorders to plain and back around them). Dims must be
 * known at load; Slice bounds and Split sizes must be constants (they are once shapes are folded);
 * at most 16 inputs and outputs. Any dtype. */
#include <string.h>

#include "ops/op.h"
#include "passes/passes.h"
#include "util/error.h"

enum { MAX_IO = 16 };

static bool is_op(const frt_node *n, const char *op) {
    return !n->dead && n->domain[0] == 0 && strcmp(n->op_type, op) == 0;
}

/* How many inputs of node n read v. */
static int reads(const frt_node *n, int32_t v) {
    int c = 0;
    for (int k = 0; k < n->n_in + n->n_cap; k++) c += n->in[k] == v;
    return c;
}

/* The single element of constant integer value v (int64 or int32). */
static bool const_int1(const frt_graph *g, int32_t v, int64_t *out) {
    if (v < 0) return false;
    const frt_ir_value *x = &g->values[v];
    if (x->kind != FRT_VALUE_CONST || !x->v.data || x->v.numel != 1) return false;
    if (x->v.dtype == FRT_INT64) memcpy(out, x->v.data, sizeof *out);
    else if (x->v.dtype == FRT_INT32) {
        int32_t t;
        memcpy(&t, x->v.data, sizeof t);
        *out = t;
    } else
        return false;
    return true;
}

/* ONNX Slice clamping of an index on a dim of size C (positive step). */
static int64_t clamp_index(int64_t i, int64_t C) {
    if (i < 0) i = i < -C ? 0 : i + C;
    return i > C ? C : i;
}

/* Slice of channels (axis 1 of rank r, step 1) with constant bounds: sets [*s, *e). */
static bool slice_range(const frt_graph *g, const frt_node *n, int r, int64_t C, int64_t *s,
                        int64_t *e) {
    if (n->n_out != 1) return false;
    int64_t st, en, ax, step = 1;
    if (n->opset >= 10) {
        if (n->n_in < 3 || !const_int1(g, n->in[1], &st) || !const_int1(g, n->in[2], &en))
            return false;
        if (n->n_in < 4 || n->in[3] < 0 || !const_int1(g, n->in[3], &ax)) return false;
        if (n->n_in > 4 && n->in[4] >= 0 && !const_int1(g, n->in[4], &step)) return false;
    } else {
        size_t a = 0, b = 0, c = 0;
        const int64_t *pa = frt_attr_ints(n, "starts", &a), *pb = frt_attr_ints(n, "ends", &b),
                      *pc = frt_attr_ints(n, "axes", &c);
        if (!pa || !pb || !pc || a != 1 || b != 1 || c != 1) return false;
        st = pa[0];
        en = pb[0];
        ax = pc[0];
    }
    if (frt_norm_axis(ax, r) != 1 || step != 1) return false;
    *s = clamp_index(st, C);
    *e = clamp_index(en, C);
    return *e > *s;
}

/* Split of channels (axis 1 of rank r): the ranges of its outputs into s[], e[] (n_out). */
static bool split_ranges(const frt_graph *g, const frt_node *n, int r, int64_t C, int64_t *s,
                         int64_t *e) {
    if (frt_norm_axis(frt_attr_int(n, "axis", 0), r) != 1 || n->n_out < 1) return false;
    int64_t sz[MAX_IO];
    const int64_t *sp = NULL;
    size_t ns = 0;
    if (n->opset >= 13) {
        if (n->n_in > 1 && n->in[1] >= 0) {
            const frt_ir_value *x = &g->values[n->in[1]];
            if (x->kind != FRT_VALUE_CONST || !x->v.data || x->v.dtype != FRT_INT64) return false;
            sp = x->v.data;
            ns = (size_t)x->v.numel;
        }
    } else {
        sp = frt_attr_ints(n, "split", &ns);
    }
    if (sp) {
        if (ns != (size_t)n->n_out) return false;
        for (int i = 0; i < n->n_out; i++) sz[i] = sp[i];
    } else { /* equal parts; opset 18 num_outputs: the last one smaller */
        int64_t q = (C + n->n_out - 1) / n->n_out;
        for (int i = 0; i < n->n_out; i++) sz[i] = C - i * q < q ? C - i * q : q;
    }
    int64_t at = 0;
    for (int i = 0; i < n->n_out; i++) {
        if (sz[i] <= 0) return false;
        s[i] = at;
        e[i] = at += sz[i];
    }
    return at == C;
}

static bool dims_equal(const frt_value *a, const frt_value *b) {
    if (a->rank != b->rank) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

/* Tries the pattern at Reshape r1; returns the number of nodes removed, -1 on error. */
static int fuse_at(frt_graph *g, frt_arena *arena, frt_node *r1, frt_status *st) {
    if (!is_op(r1, "Reshape") || r1->n_in < 1 || r1->n_out != 1) return 0;
    int32_t X = r1->in[0], Y1 = r1->out[0];
    if (X < 0 || Y1 < 0) return 0;
    const frt_value *xv = &g->values[X].v, *y1 = &g->values[Y1].v;
    int r = xv->rank;
    if (r < 3 || !frt_shape_known(xv) || !frt_shape_known(y1) || y1->rank < 3) return 0;
    int64_t N = xv->dims[0], C = xv->dims[1], A = y1->dims[1], B = y1->dims[2];
    int64_t sp = frt_shape_numel(xv->dims + 2, r - 2);
    int64_t rest = frt_shape_numel(y1->dims + 3, y1->rank - 3);
    if (y1->dims[0] != N || A * B != C || A < 1 || B < 1 || sp != rest) return 0;
    frt_node *t, *r2;
    if (frt_graph_readers(g, Y1, &t, 1) != 1 || !is_op(t, "Transpose") || t->n_out != 1 ||
        t->in[0] != Y1)
        return 0;
    size_t np = 0;
    const int64_t *perm = frt_attr_ints(t, "perm", &np);
    if (!perm || np != (size_t)y1->rank || perm[0] != 0 || perm[1] != 2 || perm[2] != 1) return 0;
    for (size_t d = 3; d < np; d++)
        if (perm[d] != (int64_t)d) return 0;
    int32_t Y2 = t->out[0];
    if (frt_graph_readers(g, Y2, &r2, 1) != 1 || !is_op(r2, "Reshape") || r2->n_out != 1 ||
        r2->in[0] != Y2)
        return 0;
    int32_t Y = r2->out[0];
    if (Y < 0 || !dims_equal(&g->values[Y].v, xv)) return 0;

    /* inputs: the Concat's, when it feeds only this shuffle */
    frt_node *cat = NULL;
    int32_t pid = g->values[X].producer;
    if (pid >= 0) {
        frt_node *p = &g->nodes[pid], *only;
        if (is_op(p, "Concat") && p->n_out == 1 && p->n_in <= MAX_IO &&
            frt_norm_axis(frt_attr_int(p, "axis", 0), r) == 1 &&
            frt_graph_readers(g, X, &only, 1) == 1) {
            cat = p;
            for (int i = 0; i < p->n_in; i++)
                if (p->in[i] < 0) cat = NULL;
        }
    }

    /* outputs: the channel Slices / Splits reading Y, and Y when anything else reads it */
    frt_node *rd[MAX_IO];
    int nr = frt_graph_readers(g, Y, rd, MAX_IO);
    int32_t outs[MAX_IO];
    int64_t s0[MAX_IO], e0[MAX_IO];
    frt_node *gone[MAX_IO];
    int no = 0, ng = 0;
    bool full = nr < 0 || nr > MAX_IO; /* Y stays an output */
    for (int i = 0; nr > 0 && nr <= MAX_IO && i < nr; i++) {
        frt_node *n = rd[i];
        int64_t s[MAX_IO], e[MAX_IO];
        bool ok = reads(n, Y) == 1 && n->in[0] == Y;
        if (ok && is_op(n, "Slice")) ok = slice_range(g, n, r, C, s, e);
        else if (ok && is_op(n, "Split")) ok = n->n_out <= MAX_IO && split_ranges(g, n, r, C, s, e);
        else ok = false;
        if (!ok || no + n->n_out > MAX_IO - 1) { /* one place left for Y */
            full = true;
            continue;
        }
        for (int k = 0; k < n->n_out; k++) {
            if (n->out[k] < 0) continue;
            outs[no] = n->out[k];
            s0[no] = s[k];
            e0[no++] = e[k];
        }
        gone[ng++] = n;
    }
    if (full || no == 0) {
        outs[no] = Y;
        s0[no] = 0;
        e0[no++] = C;
    }

    frt_node *host = cat ? cat : r1;
    int32_t hid = (int32_t)(host - g->nodes);
    int n_in = cat ? cat->n_in : 1;
    int32_t *in = frt_arena_array(arena, (size_t)n_in, sizeof *in);
    int32_t *out = frt_arena_array(arena, (size_t)no, sizeof *out);
    int64_t *as = frt_arena_array(arena, (size_t)no, sizeof *as);
    int64_t *ae = frt_arena_array(arena, (size_t)no, sizeof *ae);
    frt_onnx_attr *at = frt_arena_array(arena, 3, sizeof *at);
    if (!in || !out || !as || !ae || !at) {
        *st = frt_error(FRT_ERR_NO_MEMORY, "out of memory fusing a channel shuffle");
        return -1;
    }
    if (cat) memcpy(in, cat->in, (size_t)n_in * sizeof *in);
    else in[0] = X;
    memcpy(out, outs, (size_t)no * sizeof *out);
    memcpy(as, s0, (size_t)no * sizeof *as);
    memcpy(ae, e0, (size_t)no * sizeof *ae);
    at[0] = (frt_onnx_attr){.name = "group", .type = FRT_ATTR_INT, .i = A};
    at[1] = (frt_onnx_attr){.name = "starts", .type = FRT_ATTR_INTS, .n = (size_t)no, .ints = as};
    at[2] = (frt_onnx_attr){.name = "ends", .type = FRT_ATTR_INTS, .n = (size_t)no, .ints = ae};

    int removed = 0;
    for (int i = 0; i < ng; i++, removed++) frt_graph_kill_node(g, gone[i]);
    frt_graph_kill_node(g, r2);
    frt_graph_kill_node(g, t);
    removed += 2;
    if (cat) {
        frt_graph_kill_node(g, r1);
        removed++;
    }
    frt_graph_kill_node(g, host);
    host->dead = false;
    host->in = in;
    host->n_in = n_in;
    host->n_cap = 0;
    host->out = out;
    host->n_out = no;
    host->domain = FRT_DOMAIN_INTERNAL;
    host->op_type = "ChannelShuffle";
    host->opset = 1;
    host->attrs = at;
    host->n_attrs = 3;
    frt_op_created(FRT_DOMAIN_INTERNAL, "ChannelShuffle", 1);
    for (int k = 0; k < no; k++) g->values[out[k]].producer = hid;
    return removed;
}

int frt_pass_fuse_shuffle(frt_graph *g, frt_arena *arena, frt_status *st) {
    if (!FRT_OP_BUILT(ChannelShuffle) || !frt_op_probe(FRT_DOMAIN_INTERNAL, "ChannelShuffle", 1))
        return 0;
    int removed = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        int r = fuse_at(g, arena, &g->nodes[i], st);
        if (r < 0) return -1;
        removed += r;
    }
    return removed;
}
