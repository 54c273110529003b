/* If Loop Scan: control flow over the nested blocks of a node (node->sub, run with
 * frt_exec_block; see docs/architecture.md "Blocks" and "Control flow").
 *
 * Storage of the outputs. When every output shape is known at load from the subgraphs' output
 * types (a static body: If branches agree, Loop-carried values keep their shape, Scan bodies have
 * static outputs), the kernel is a plain one and its outputs are planned like any other step's.
 * Otherwise the kernel is FRT_K_DYNAMIC_OUT and takes its outputs from frt_exec_alloc_output when
 * their sizes are known (Loop scan outputs always: their length is the trip count).
 *
 * Loop-carried values and Scan states: a block's outputs live in its own memory, valid until it
 * runs again, so each iteration's carried outputs are copied into one of two per-value buffers
 * (ping-pong in the step's scratch) and bound from there as the next iteration's inputs; a
 * carried value the body passes through unchanged is not copied. Scan outputs (Loop's and Scan's)
 * are written straight into their final buffer, at their iteration's slice. Outer values are read
 * in place by the block (captured reads). Nothing is allocated per iteration: the body's plan is
 * made once for its input shapes; a Loop scan output whose trip count is unknown (condition only)
 * grows by doubling in run-time-sized memory.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "dtype_util.h"
#include "ir/seq.h"
#include "op.h"

#define CTL_MAX_IO 64 /* inputs / outputs of a control-flow node and of its bodies */
#define CTL_ALIGN(n) (((n) + 63) & ~(size_t)63)

typedef struct ctl_params {
    bool dynamic;        /* FRT_K_DYNAMIC_OUT: outputs from frt_exec_alloc_output */
    int32_t sub_then, sub_else; /* If: indices into s->blocks */
    int32_t n_state;     /* Loop: carried values; Scan: states */
    int32_t n_scan_in;   /* Scan */
    int32_t n_scan_out;  /* Loop and Scan: body scan outputs */
    int32_t first_state; /* input index of the first carried value / state */
    bool batch;          /* Scan opset 8: axis 0 of every input and output is a batch */
    int64_t in_axis[CTL_MAX_IO], in_rev[CTL_MAX_IO];
    int64_t out_axis[CTL_MAX_IO], out_rev[CTL_MAX_IO];
} ctl_params;

/* Index in node->sub of the GRAPH attribute `name`, or -1. */
static int sub_index(const frt_node *n, const char *name) {
    int k = 0;
    for (size_t a = 0; a < n->n_attrs; a++) {
        const frt_onnx_attr *at = &n->attrs[a];
        if (at->type == FRT_ATTR_GRAPH && at->g) {
            if (strcmp(at->name, name) == 0) return k < n->n_sub ? k : -1;
            k++;
        } else if (at->type == FRT_ATTR_GRAPHS) {
            k += (int)at->n;
        }
    }
    return -1;
}

static const frt_value *g_out(const frt_graph *g, int j) { return &g->values[g->outputs[j]].v; }
static const frt_value *g_in(const frt_graph *g, int j) { return &g->values[g->inputs[j]].v; }

static bool same_shape(const frt_value *a, const frt_value *b) {
    if (a->rank != b->rank) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

static bool shapes_known(const frt_op_ctx *c) {
    for (int j = 0; j < c->n_out; j++)
        if (c->node->out[j] >= 0 && !frt_shape_known(c->out[j])) return false;
    return true;
}

/* A block output type flatrt can hold: a tensor with a dtype. */
static frt_status check_tensor_out(const frt_op_ctx *c, const frt_graph *g, int j) {
    if (frt_dtype_size((frt_dtype)g_out(g, j)->dtype) == 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "subgraph %s output %d ('%s') is not a tensor "
                           "(sequence and optional values are not supported here)",
                           g->path, j, g->values[g->outputs[j]].name);
    return FRT_OK;
}

/* Storage for output j with the given shape: the planned buffer (checked) or run-time-sized. */
static void *out_storage(const frt_step *s, frt_exec *x, const ctl_params *p, int j,
                         int32_t dtype, int32_t rank, const int64_t *dims) {
    if (p->dynamic) return frt_exec_alloc_output(x, s, j, dtype, rank, dims);
    frt_value *o = &x->values[s->out[j]];
    frt_value want = {0};
    frt_value_set_shape(&want, dtype, rank, dims);
    if (o->dtype != dtype || !same_shape(o, &want)) {
        char a[128], b[128];
        frt_step_fail(s, FRT_ERR_SHAPE, "output %d is %s, the subgraph gave %s", j,
                      frt_shape_str(o, a, sizeof a), frt_shape_str(&want, b, sizeof b));
        return NULL;
    }
    return o->data;
}

static bool read_bool(const frt_value *v, bool *out) {
    if (v->numel < 1 || !v->data) return false;
    if (v->dtype == FRT_BOOL || v->dtype == FRT_UINT8 || v->dtype == FRT_INT8)
        *out = ((const uint8_t *)v->data)[0] != 0;
    else if (frt_dtype_is_float(v->dtype) || frt_dtype_is_int(v->dtype))
        *out = frt_ld_f64(v->dtype, v->data, 0) != 0;
    else
        return false;
    return true;
}

/* A scalar input of a body, shaped as the body declares it (rank 0, or all dims 1). */
static frt_value body_scalar(const frt_graph *g, int j, int32_t dtype, void *data) {
    frt_value v;
    memset(&v, 0, sizeof v);
    const frt_value *d = g_in(g, j);
    v.rank = d->rank > 0 ? d->rank : 0;
    for (int k = 0; k < v.rank; k++) v.dims[k] = 1;
    v.numel = 1;
    v.dtype = dtype;
    v.data = data;
    return v;
}

/* ---------------------------------------------------------------------------------------------- */
/* If                                                                                              */
/* ---------------------------------------------------------------------------------------------- */

static frt_status if_infer(frt_op_ctx *c) {
    int ti = sub_index(c->node, "then_branch"), ei = sub_index(c->node, "else_branch");
    if (ti < 0 || ei < 0) return frt_op_fail(c, FRT_ERR_MALFORMED, "needs then_branch and else_branch");
    if (c->n_in != 1 || !c->in[0]) return frt_op_fail(c, FRT_ERR_MALFORMED, "needs one input (cond)");
    const frt_graph *gt = c->node->sub[ti], *ge = c->node->sub[ei];
    if ((size_t)c->n_out > gt->n_outputs || (size_t)c->n_out > ge->n_outputs)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "%d outputs, the branches have %zu and %zu",
                           c->n_out, gt->n_outputs, ge->n_outputs);
    for (int j = 0; j < c->n_out; j++) {
        frt_status st = check_tensor_out(c, gt, j);
        if (!st) st = check_tensor_out(c, ge, j);
        if (st) return st;
        const frt_value *a = g_out(gt, j), *b = g_out(ge, j);
        if (a->dtype != b->dtype)
            return frt_op_fail(c, FRT_ERR_MALFORMED, "output %d: then branch gives %s, else %s",
                               j, frt_dtype_name((frt_dtype)a->dtype), frt_dtype_name((frt_dtype)b->dtype));
        if (a->vtype != b->vtype)
            return frt_op_fail(c, FRT_ERR_MALFORMED, "output %d: then branch gives a %s, else a %s",
                               j, frt_vtype_name(a->vtype), frt_vtype_name(b->vtype));
        if (a->vtype) { /* a sequence / optional: copied from the branch's frt_seq */
            frt_value_set_container(c->out[j], a->vtype, a->dtype);
            continue;
        }
        int64_t dims[FRT_MAX_RANK];
        int rank = a->rank == b->rank ? a->rank : -1;
        for (int d = 0; d < rank; d++) dims[d] = a->dims[d] == b->dims[d] ? a->dims[d] : -1;
        frt_op_set_shape(c->out[j], a->dtype, rank, dims);
    }
    return FRT_OK;
}

/* Output j of s is a sequence / optional: copies the block's value v into it. */
static frt_status seq_out(const frt_step *s, frt_exec *x, int j, const frt_value *v) {
    frt_seq *dst = frt_seq_of(&x->values[s->out[j]]), *src = frt_seq_of(v);
    if (!dst || !src) return frt_step_fail(s, FRT_ERR_INTERNAL, "output %d: sequence expected", j);
    return frt_seq_copy(dst, src);
}

static frt_status if_run(const frt_step *s, frt_exec *x) {
    const ctl_params *p = s->k.params;
    bool cond;
    if (!read_bool(&x->values[s->in[0]], &cond))
        return frt_step_fail(s, FRT_ERR_RUNTIME, "cond is empty or not a number");
    frt_value outs[CTL_MAX_IO];
    frt_status st = frt_exec_block(x, s->blocks[cond ? p->sub_then : p->sub_else], NULL, 0, outs,
                                   (size_t)s->n_out);
    if (st) return st;
    for (int j = 0; j < s->n_out; j++) {
        if (s->out[j] < 0) continue;
        if (x->values[s->out[j]].vtype) {
            st = seq_out(s, x, j, &outs[j]);
            if (st) return st;
            continue;
        }
        void *d = out_storage(s, x, p, j, outs[j].dtype, outs[j].rank, outs[j].dims);
        if (!d) return FRT_ERR_SHAPE;
        size_t nb = frt_value_nbytes(&outs[j]);
        if (nb && d != outs[j].data) memcpy(d, outs[j].data, nb);
    }
    return FRT_OK;
}

static frt_status if_select(frt_op_ctx *c, frt_kernel *k) {
    if (c->n_out > CTL_MAX_IO) return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "too many outputs");
    ctl_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    memset(p, 0, sizeof *p);
    p->sub_then = sub_index(c->node, "then_branch");
    p->sub_else = sub_index(c->node, "else_branch");
    p->dynamic = !shapes_known(c);
    k->name = p->dynamic ? "if_dynamic" : "if";
    k->fn = if_run;
    k->params = p;
    k->flags = p->dynamic ? FRT_K_DYNAMIC_OUT : 0;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Loop                                                                                            */
/* ---------------------------------------------------------------------------------------------- */

/* Body: (iter, cond, v_1..v_N) -> (cond, v_1..v_N, scan_1..scan_K).
 * Outputs: (v_1..v_N final, scan_1..scan_K stacked on a new axis 0). */
static frt_status loop_infer(frt_op_ctx *c) {
    const frt_graph *b = c->node->n_sub > 0 ? c->node->sub[0] : NULL;
    if (!b || c->n_in < 2) return frt_op_fail(c, FRT_ERR_MALFORMED, "needs a body and inputs (M, cond, ...)");
    int n = c->n_in - 2;
    if (b->n_inputs != (size_t)n + 2 || b->n_outputs < (size_t)n + 1)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "body has %zu inputs and %zu outputs for %d "
                           "loop-carried values", b->n_inputs, b->n_outputs, n);
    int k = (int)b->n_outputs - 1 - n;
    if (c->n_out > n + k) return frt_op_fail(c, FRT_ERR_MALFORMED, "too many outputs");
    for (int j = 0; j < n; j++)
        if (!c->in[2 + j]) return frt_op_fail(c, FRT_ERR_MALFORMED, "loop-carried input %d is missing", j);
    for (int j = 0; j < (int)b->n_outputs; j++) {
        frt_status st = check_tensor_out(c, b, j);
        if (st) return st;
    }
    for (int j = 0; j < c->n_out; j++) {
        const frt_value *bo = g_out(b, 1 + j);
        int64_t dims[FRT_MAX_RANK];
        if (j < n) {
            const frt_value *iv = c->in[2 + j];
            /* an optional sequence may be carried on as the sequence the body makes of it */
            bool unwrap = iv->vtype == FRT_VT_OPT_SEQUENCE && bo->vtype == FRT_VT_SEQUENCE;
            if (bo->dtype != iv->dtype || (bo->vtype != iv->vtype && !unwrap))
                return frt_op_fail(c, FRT_ERR_MALFORMED, "loop-carried value %d: input %s %s, "
                                   "body output %s %s", j, frt_vtype_name(iv->vtype),
                                   frt_dtype_name((frt_dtype)iv->dtype), frt_vtype_name(bo->vtype),
                                   frt_dtype_name((frt_dtype)bo->dtype));
            if (iv->vtype) { /* carried in the Loop's output frt_seq */
                frt_value_set_container(c->out[j], bo->vtype, iv->dtype);
                continue;
            }
            /* known only when the body keeps the shape it was given */
            if (same_shape(bo, iv) && frt_shape_known(bo)) {
                frt_op_set_shape(c->out[j], iv->dtype, iv->rank, iv->dims);
            } else {
                int rank = bo->rank == iv->rank ? bo->rank : -1;
                for (int d = 0; d < FRT_MAX_RANK; d++) dims[d] = -1;
                frt_op_set_shape(c->out[j], iv->dtype, rank, dims);
            }
        } else {
            if (bo->vtype)
                return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "scan output %d is a %s", j - n,
                                   frt_vtype_name(bo->vtype));
            if (bo->rank >= FRT_MAX_RANK)
                return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "scan output rank %d too large", bo->rank + 1);
            int rank = bo->rank < 0 ? -1 : bo->rank + 1;
            dims[0] = -1;
            for (int d = 0; d < bo->rank; d++) dims[d + 1] = bo->dims[d];
            frt_op_set_shape(c->out[j], bo->dtype, rank, dims);
        }
    }
    return FRT_OK;
}

static size_t state_scratch(const frt_step *s, const frt_value *v, int first, int n, int64_t div) {
    size_t total = 0;
    for (int j = 0; j < n; j++) total += 2 * CTL_ALIGN(frt_value_nbytes(&v[s->in[first + j]]) / (size_t)div);
    return total;
}

static size_t loop_scratch(const frt_step *s, const frt_value *v) {
    const ctl_params *p = s->k.params;
    return state_scratch(s, v, 2, p->n_state, 1);
}

/* Ping-pong storage of one carried value / state. */
typedef struct pingpong {
    char *buf[2];
    size_t cap[2];
} pingpong;

/* Makes v (the body's output for a carried value, cur the value it was given) the next input:
 * copied into the buffer of pp that cur does not use. Growing (a Loop-carried value whose size
 * changes) takes run-time-sized memory of output j (dynamic kernels only). */
static frt_status carry(const frt_step *s, frt_exec *x, const ctl_params *p, int j, pingpong *pp,
                        frt_value *cur, const frt_value *v) {
    size_t nb = frt_value_nbytes(v);
    if (v->data == cur->data && same_shape(v, cur) && v->dtype == cur->dtype) return FRT_OK;
    int w = cur->data == pp->buf[0] ? 1 : 0;
    if (nb > pp->cap[w]) {
        if (!p->dynamic)
            return frt_step_fail(s, FRT_ERR_SHAPE, "loop-carried value %d changed its size "
                                 "(%zu bytes, %zu planned)", j, nb, pp->cap[w]);
        int64_t n = (int64_t)(nb > 2 * pp->cap[w] ? nb : 2 * pp->cap[w]);
        void *d = frt_exec_alloc_output(x, s, j, FRT_UINT8, 1, &n);
        if (!d) return FRT_ERR_NO_MEMORY;
        pp->buf[w] = d;
        pp->cap[w] = (size_t)n;
    }
    if (nb) memcpy(pp->buf[w], v->data, nb);
    *cur = *v;
    cur->data = pp->buf[w];
    return FRT_OK;
}

static void pingpong_init(pingpong *pp, char **scratch, size_t nb) {
    size_t a = CTL_ALIGN(nb);
    pp->buf[0] = *scratch;
    pp->buf[1] = *scratch + a;
    pp->cap[0] = pp->cap[1] = nb;
    *scratch += 2 * a;
}

/* Scan output k of a Loop: one slice per iteration, in a buffer grown by doubling. */
typedef struct loop_scan {
    char *data;
    int64_t cap;     /* iterations the buffer holds */
    size_t stride;   /* bytes per iteration */
    frt_value first; /* shape of iteration 0's slice */
} loop_scan;

static frt_status loop_run(const frt_step *s, frt_exec *x) {
    const ctl_params *p = s->k.params;
    const frt_graph *body = s->ir->sub[0];
    int n = p->n_state, k = p->n_scan_out;
    int64_t max_trip = INT64_MAX;
    if (s->in[0] >= 0) {
        const frt_value *m = &x->values[s->in[0]];
        if (m->numel < 1 || !frt_dtype_is_int(m->dtype))
            return frt_step_fail(s, FRT_ERR_RUNTIME, "trip count M is empty or not an integer");
        max_trip = frt_ld_i64(m->dtype, m->data, 0);
    }
    bool cond = true;
    if (s->in[1] >= 0 && !read_bool(&x->values[s->in[1]], &cond))
        return frt_step_fail(s, FRT_ERR_RUNTIME, "cond is empty or not a number");
    int64_t iter = 0;
    uint8_t cond_in = 1;
    frt_value bin[CTL_MAX_IO], bout[CTL_MAX_IO];
    pingpong pp[CTL_MAX_IO];
    loop_scan sc[CTL_MAX_IO];
    bin[0] = body_scalar(body, 0, FRT_INT64, &iter);
    bin[1] = body_scalar(body, 1, FRT_BOOL, &cond_in);
    char *scratch = x->scratch;
    for (int j = 0; j < n; j++) {
        bin[2 + j] = x->values[s->in[2 + j]];
        pingpong_init(&pp[j], &scratch, frt_value_nbytes(&bin[2 + j]));
    }
    memset(sc, 0, (size_t)k * sizeof sc[0]);
    for (int j = 0; j < n; j++)
        if (bin[2 + j].vtype && (j >= s->n_out || s->out[j] < 0))
            return frt_step_fail(s, FRT_ERR_UNSUPPORTED, "loop-carried %s %d has no output",
                                 frt_vtype_name(bin[2 + j].vtype), j);
    frt_status st_seq;
    int32_t block = s->blocks[0];
    for (; iter < max_trip && cond; iter++) {
        cond_in = cond;
        frt_status st = frt_exec_block(x, block, bin, (size_t)n + 2, bout, (size_t)(1 + n + k));
        if (st) return st;
        if (!read_bool(&bout[0], &cond))
            return frt_step_fail(s, FRT_ERR_RUNTIME, "the body's cond output is empty");
        for (int q = 0; q < k; q++) {
            int j = n + q;
            if (j >= s->n_out || s->out[j] < 0) continue;
            const frt_value *v = &bout[1 + j];
            loop_scan *c = &sc[q];
            if (iter == 0) {
                c->first = *v;
                c->stride = frt_value_nbytes(v);
            } else if (!same_shape(v, &c->first) || v->dtype != c->first.dtype) {
                char a[128], b[128];
                return frt_step_fail(s, FRT_ERR_SHAPE, "scan output %d is %s at iteration %lld, "
                                     "%s at iteration 0", q, frt_shape_str(v, a, sizeof a),
                                     (long long)iter, frt_shape_str(&c->first, b, sizeof b));
            }
            if (iter >= c->cap) {
                int64_t cap = c->cap ? 2 * c->cap : 16;
                if (iter == 0 && max_trip != INT64_MAX && c->stride &&
                    (uint64_t)max_trip <= ((uint64_t)1 << 36) / c->stride)
                    cap = max_trip; /* the trip count bounds it: one buffer, final size */
                int64_t dims[FRT_MAX_RANK];
                dims[0] = cap;
                for (int d = 0; d < v->rank; d++) dims[d + 1] = v->dims[d];
                char *nd = frt_exec_alloc_output(x, s, j, v->dtype, v->rank + 1, dims);
                if (!nd) return FRT_ERR_NO_MEMORY;
                if (iter) memcpy(nd, c->data, (size_t)iter * c->stride);
                c->data = nd;
                c->cap = cap;
            }
            if (c->stride) memcpy(c->data + (size_t)iter * c->stride, v->data, c->stride);
        }
        for (int j = 0; j < n; j++) {
            if (bin[2 + j].vtype) { /* the next iteration reads the Loop's output frt_seq, as
                                       the kind the body declares (a sequence as an optional) */
                int32_t vt = bin[2 + j].vtype;
                st = seq_out(s, x, j, &bout[1 + j]);
                bin[2 + j] = x->values[s->out[j]];
                bin[2 + j].vtype = vt;
            } else {
                st = carry(s, x, p, j, &pp[j], &bin[2 + j], &bout[1 + j]);
            }
            if (st) return st;
        }
    }
    for (int j = 0; j < n && j < s->n_out; j++) {
        if (s->out[j] < 0) continue;
        const frt_value *v = &bin[2 + j];
        if (v->vtype) { /* no iteration ran: the initial value */
            if (x->values[s->out[j]].vtype == FRT_VT_SEQUENCE && !frt_seq_of(v)->present)
                return frt_step_fail(s, FRT_ERR_RUNTIME, "no iteration ran and loop-carried value "
                                     "%d is an optional without a value: the sequence output has "
                                     "none", j);
            st_seq = seq_out(s, x, j, v);
            if (st_seq) return st_seq;
            continue;
        }
        void *d = out_storage(s, x, p, j, v->dtype, v->rank, v->dims);
        if (!d) return FRT_ERR_SHAPE;
        size_t nb = frt_value_nbytes(v);
        if (nb) memcpy(d, v->data, nb);
    }
    for (int q = 0; q < k; q++) {
        int j = n + q;
        if (j >= s->n_out || s->out[j] < 0) continue;
        frt_value *o = &x->values[s->out[j]];
        if (iter == 0) { /* no iteration: an empty stack of the body's declared slice shape */
            const frt_value *bo = g_out(body, 1 + j);
            int64_t dims[FRT_MAX_RANK];
            dims[0] = 0;
            int rank = bo->rank < 0 ? 1 : bo->rank + 1;
            for (int d = 0; d < bo->rank; d++) dims[d + 1] = bo->dims[d] < 0 ? 0 : bo->dims[d];
            if (!frt_exec_alloc_output(x, s, j, bo->dtype, rank, dims)) return FRT_ERR_NO_MEMORY;
            continue;
        }
        /* the stack holds `iter` slices: the buffer may be larger (doubling); shrink dim 0 */
        o->data = sc[q].data;
        o->dims[0] = iter;
        o->numel = frt_shape_numel(o->dims, o->rank);
    }
    return FRT_OK;
}

static frt_status loop_select(frt_op_ctx *c, frt_kernel *k) {
    const frt_graph *b = c->node->sub[0];
    int n = c->n_in - 2;
    if (c->n_in > CTL_MAX_IO || (int)b->n_outputs > CTL_MAX_IO)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "too many loop values");
    if (c->in[0] && c->in[0]->dtype != FRT_INT64)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "trip count M must be int64");
    if (c->in[1] && c->in[1]->dtype != FRT_BOOL)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "cond must be bool");
    ctl_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    memset(p, 0, sizeof *p);
    p->n_state = n;
    p->n_scan_out = (int32_t)b->n_outputs - 1 - n;
    p->first_state = 2;
    p->dynamic = !shapes_known(c) || p->n_scan_out > 0;
    k->name = p->dynamic ? "loop_dynamic" : "loop";
    k->fn = loop_run;
    k->scratch = loop_scratch;
    k->params = p;
    k->flags = p->dynamic ? FRT_K_DYNAMIC_OUT : 0;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Scan                                                                                            */
/* ---------------------------------------------------------------------------------------------- */

/* Opset 8: inputs (sequence_lens?, states N, scan inputs M), axis 0 a batch, scan axis 1,
 * attribute directions. Opset 9+: inputs (states N, scan inputs M); scan_input_axes,
 * scan_input_directions, scan_output_axes, scan_output_directions (axes may be negative).
 * Body: (states N, one slice of each scan input) -> (states N, scan output slices K).
 * Outputs: (final states N, scan outputs K with the sequence axis inserted at their axis). */

typedef struct scan_cfg {
    int n, m, kout, first;  /* states, scan inputs, scan outputs, first state input */
    bool batch;
} scan_cfg;

static frt_status scan_cfg_of(const frt_op_ctx *c, const frt_graph *b, scan_cfg *g) {
    g->batch = c->opset < 9;
    g->first = g->batch ? 1 : 0;
    int64_t m = frt_attr_int(c->node, "num_scan_inputs", -1);
    int avail = c->n_in - g->first;
    if (m < 1 || m > avail) return frt_op_fail(c, FRT_ERR_MALFORMED, "num_scan_inputs %lld invalid for %d inputs", (long long)m, c->n_in);
    g->m = (int)m;
    g->n = avail - g->m;
    if (b->n_inputs != (size_t)(g->n + g->m) || b->n_outputs < (size_t)g->n)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "body has %zu inputs, %zu outputs for %d states "
                           "and %d scan inputs", b->n_inputs, b->n_outputs, g->n, g->m);
    g->kout = (int)b->n_outputs - g->n;
    if (c->n_out > g->n + g->kout) return frt_op_fail(c, FRT_ERR_MALFORMED, "too many outputs");
    if (g->n + g->m > CTL_MAX_IO || g->n + g->kout > CTL_MAX_IO)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "too many scan values");
    return FRT_OK;
}

/* Axis and direction attributes, normalized (axes against rank r_in[i] / r_out[i]; -1 rank:
 * unknown, left unnormalized when negative). */
static frt_status scan_axes(const frt_op_ctx *c, const scan_cfg *g, int64_t *in_axis,
                            int64_t *in_rev, int64_t *out_axis, int64_t *out_rev) {
    const frt_node *nd = c->node;
    size_t cnt;
    const int64_t *a;
    for (int i = 0; i < g->m; i++) in_axis[i] = g->batch ? 1 : 0, in_rev[i] = 0;
    for (int i = 0; i < g->kout; i++) out_axis[i] = g->batch ? 1 : 0, out_rev[i] = 0;
    if (g->batch) {
        if ((a = frt_attr_ints(nd, "directions", &cnt))) {
            if (cnt != (size_t)g->m) return frt_op_fail(c, FRT_ERR_MALFORMED, "directions has %zu entries for %d scan inputs", cnt, g->m);
            for (int i = 0; i < g->m; i++) in_rev[i] = a[i];
        }
        return FRT_OK;
    }
    if ((a = frt_attr_ints(nd, "scan_input_axes", &cnt))) {
        if (cnt != (size_t)g->m) return frt_op_fail(c, FRT_ERR_MALFORMED, "scan_input_axes has %zu entries for %d scan inputs", cnt, g->m);
        for (int i = 0; i < g->m; i++) in_axis[i] = a[i];
    }
    if ((a = frt_attr_ints(nd, "scan_input_directions", &cnt))) {
        if (cnt != (size_t)g->m) return frt_op_fail(c, FRT_ERR_MALFORMED, "scan_input_directions has %zu entries", cnt);
        for (int i = 0; i < g->m; i++) in_rev[i] = a[i];
    }
    if ((a = frt_attr_ints(nd, "scan_output_axes", &cnt))) {
        if (cnt != (size_t)g->kout) return frt_op_fail(c, FRT_ERR_MALFORMED, "scan_output_axes has %zu entries for %d scan outputs", cnt, g->kout);
        for (int i = 0; i < g->kout; i++) out_axis[i] = a[i];
    }
    if ((a = frt_attr_ints(nd, "scan_output_directions", &cnt))) {
        if (cnt != (size_t)g->kout) return frt_op_fail(c, FRT_ERR_MALFORMED, "scan_output_directions has %zu entries", cnt);
        for (int i = 0; i < g->kout; i++) out_rev[i] = a[i];
    }
    for (int i = 0; i < g->m; i++)
        if (in_rev[i] != 0 && in_rev[i] != 1) return frt_op_fail(c, FRT_ERR_MALFORMED, "scan direction must be 0 or 1");
    for (int i = 0; i < g->kout; i++)
        if (out_rev[i] != 0 && out_rev[i] != 1) return frt_op_fail(c, FRT_ERR_MALFORMED, "scan direction must be 0 or 1");
    return FRT_OK;
}

static frt_status scan_infer(frt_op_ctx *c) {
    if (c->node->n_sub < 1) return frt_op_fail(c, FRT_ERR_MALFORMED, "needs a body");
    const frt_graph *b = c->node->sub[0];
    scan_cfg g;
    frt_status st = scan_cfg_of(c, b, &g);
    if (st) return st;
    int64_t in_axis[CTL_MAX_IO], in_rev[CTL_MAX_IO], out_axis[CTL_MAX_IO], out_rev[CTL_MAX_IO];
    st = scan_axes(c, &g, in_axis, in_rev, out_axis, out_rev);
    if (st) return st;
    /* sequence length (and batch) from the first scan input */
    int64_t T = -1, B = -1;
    for (int i = 0; i < g.m; i++) {
        const frt_value *v = c->in[g.first + g.n + i];
        if (!v) return frt_op_fail(c, FRT_ERR_MALFORMED, "scan input %d is missing", i);
        if (v->rank < 0) continue;
        int ax = frt_norm_axis(in_axis[i], v->rank);
        if (ax < 0 || (g.batch && v->rank < 2))
            return frt_op_fail(c, FRT_ERR_MALFORMED, "scan input %d: axis %lld out of range for rank %d", i, (long long)in_axis[i], v->rank);
        if (v->dims[ax] >= 0) {
            if (T >= 0 && T != v->dims[ax])
                return frt_op_fail(c, FRT_ERR_SHAPE, "scan inputs have sequence lengths %lld and %lld", (long long)T, (long long)v->dims[ax]);
            T = v->dims[ax];
        }
        if (g.batch && v->dims[0] >= 0) B = v->dims[0];
    }
    for (int j = 0; j < g.n + g.kout; j++) {
        st = check_tensor_out(c, b, j);
        if (st) return st;
    }
    for (int j = 0; j < c->n_out; j++) {
        const frt_value *bo = g_out(b, j);
        int64_t dims[FRT_MAX_RANK];
        if (j < g.n) {
            const frt_value *iv = c->in[g.first + j];
            if (!iv) return frt_op_fail(c, FRT_ERR_MALFORMED, "initial state %d is missing", j);
            if (iv->dtype != bo->dtype)
                return frt_op_fail(c, FRT_ERR_MALFORMED, "state %d: input %s, body output %s", j, frt_dtype_name((frt_dtype)iv->dtype), frt_dtype_name((frt_dtype)bo->dtype));
            frt_op_set_shape(c->out[j], iv->dtype, iv->rank, iv->dims);
            continue;
        }
        int q = j - g.n, extra = g.batch ? 2 : 1;
        if (bo->rank < 0) {
            frt_op_set_shape(c->out[j], bo->dtype, -1, NULL);
            continue;
        }
        int rank = bo->rank + extra;
        if (rank > FRT_MAX_RANK) return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "scan output rank %d too large", rank);
        if (g.batch) {
            dims[0] = B;
            dims[1] = T;
            for (int d = 0; d < bo->rank; d++) dims[d + 2] = bo->dims[d];
        } else {
            int ax = frt_norm_axis(out_axis[q], rank);
            if (ax < 0) return frt_op_fail(c, FRT_ERR_MALFORMED, "scan output %d: axis %lld out of range", q, (long long)out_axis[q]);
            for (int d = 0, e = 0; d < rank; d++) dims[d] = d == ax ? T : bo->dims[e++];
        }
        frt_op_set_shape(c->out[j], bo->dtype, rank, dims);
    }
    return FRT_OK;
}

/* Bytes of one element slice along axis ax: outer blocks (dims before ax) of `inner` bytes. */
static void split_axis(const frt_value *v, int ax, int from, int64_t *outer, size_t *inner) {
    int64_t o = 1, in = 1;
    for (int d = from; d < ax; d++) o *= v->dims[d];
    for (int d = ax + 1; d < v->rank; d++) in *= v->dims[d];
    *outer = o;
    *inner = (size_t)in * frt_dtype_size((frt_dtype)v->dtype);
}

static size_t scan_scratch(const frt_step *s, const frt_value *v) {
    const ctl_params *p = s->k.params;
    int64_t B = 1;
    const frt_value *x0 = &v[s->in[p->first_state + p->n_state]];
    if (p->batch) B = x0->dims[0] > 0 ? x0->dims[0] : 1;
    size_t total = state_scratch(s, v, p->first_state, p->n_state, B);
    for (int i = 0; i < p->n_scan_in; i++) {
        const frt_value *x = &v[s->in[p->first_state + p->n_state + i]];
        int ax = frt_norm_axis(p->in_axis[i], x->rank);
        if (ax < 0) continue;
        int64_t outer;
        size_t inner;
        split_axis(x, ax, p->batch ? 1 : 0, &outer, &inner);
        if (outer > 1) total += CTL_ALIGN((size_t)outer * inner);
    }
    return total;
}

static frt_status scan_run(const frt_step *s, frt_exec *x) {
    const ctl_params *p = s->k.params;
    const frt_graph *body = s->ir->sub[0];
    int n = p->n_state, m = p->n_scan_in, kout = p->n_scan_out, f = p->first_state;
    const frt_value *x0 = &x->values[s->in[f + n]];
    int ax0 = frt_norm_axis(p->in_axis[0], x0->rank);
    if (ax0 < 0) return frt_step_fail(s, FRT_ERR_SHAPE, "scan input 0: axis out of range");
    int64_t T = x0->dims[ax0], B = p->batch ? x0->dims[0] : 1;
    const frt_value *lens = p->batch && s->in[0] >= 0 ? &x->values[s->in[0]] : NULL;
    if (lens && lens->numel != B)
        return frt_step_fail(s, FRT_ERR_SHAPE, "sequence_lens has %lld entries for batch %lld",
                             (long long)lens->numel, (long long)B);
    frt_value bin[CTL_MAX_IO], bout[CTL_MAX_IO];
    pingpong pp[CTL_MAX_IO];
    char *scratch = x->scratch;
    char *inbuf[CTL_MAX_IO];
    int64_t in_outer[CTL_MAX_IO];
    size_t in_inner[CTL_MAX_IO];
    int in_ax[CTL_MAX_IO];
    for (int j = 0; j < n; j++) {
        const frt_value *iv = &x->values[s->in[f + j]];
        pingpong_init(&pp[j], &scratch, frt_value_nbytes(iv) / (size_t)(B > 0 ? B : 1));
    }
    for (int i = 0; i < m; i++) {
        const frt_value *xv = &x->values[s->in[f + n + i]];
        in_ax[i] = frt_norm_axis(p->in_axis[i], xv->rank);
        if (in_ax[i] < 0 || xv->dims[in_ax[i]] != T || (p->batch && xv->dims[0] != B))
            return frt_step_fail(s, FRT_ERR_SHAPE, "scan input %d: its sequence axis does not have "
                                 "length %lld", i, (long long)T);
        split_axis(xv, in_ax[i], p->batch ? 1 : 0, &in_outer[i], &in_inner[i]);
        inbuf[i] = NULL;
        if (in_outer[i] > 1) {
            inbuf[i] = scratch;
            scratch += CTL_ALIGN((size_t)in_outer[i] * in_inner[i]);
        }
        /* the body's slice: the input without its sequence (and batch) axis */
        frt_value *b = &bin[n + i];
        memset(b, 0, sizeof *b);
        b->dtype = xv->dtype;
        int from = p->batch ? 1 : 0;
        for (int d = from; d < xv->rank; d++)
            if (d != in_ax[i]) b->dims[b->rank++] = xv->dims[d];
        b->numel = frt_shape_numel(b->dims, b->rank);
    }
    char *outp[CTL_MAX_IO];
    int64_t out_outer[CTL_MAX_IO];
    size_t out_inner[CTL_MAX_IO], out_bstride[CTL_MAX_IO];
    int out_ax[CTL_MAX_IO];
    bool have_out = false;
    for (int b = 0; b < B; b++) {
        int64_t len = T;
        if (lens) {
            len = frt_ld_i64(lens->dtype, lens->data, b);
            if (len < 0 || len > T)
                return frt_step_fail(s, FRT_ERR_RUNTIME, "sequence_lens[%d] = %lld is outside [0, %lld]", b, (long long)len, (long long)T);
        }
        for (int j = 0; j < n; j++) {
            const frt_value *iv = &x->values[s->in[f + j]];
            bin[j] = *iv;
            if (p->batch) {
                bin[j].rank = iv->rank - 1;
                for (int d = 0; d < bin[j].rank; d++) bin[j].dims[d] = iv->dims[d + 1];
                bin[j].numel = frt_shape_numel(bin[j].dims, bin[j].rank);
                bin[j].data = (char *)iv->data + (size_t)b * frt_value_nbytes(&bin[j]);
            }
        }
        for (int64_t t = 0; t < len; t++) {
            for (int i = 0; i < m; i++) {
                const frt_value *xv = &x->values[s->in[f + n + i]];
                int64_t ti = p->in_rev[i] ? len - 1 - t : t;
                size_t bstride = (size_t)in_outer[i] * (size_t)T * in_inner[i];
                const char *base = (const char *)xv->data + (size_t)b * bstride;
                if (!inbuf[i]) {
                    bin[n + i].data = (char *)base + (size_t)ti * in_inner[i];
                } else {
                    for (int64_t o = 0; o < in_outer[i]; o++)
                        memcpy(inbuf[i] + (size_t)o * in_inner[i],
                               base + ((size_t)o * (size_t)T + (size_t)ti) * in_inner[i], in_inner[i]);
                    bin[n + i].data = inbuf[i];
                }
            }
            frt_status st = frt_exec_block(x, s->blocks[0], bin, (size_t)(n + m), bout, (size_t)(n + kout));
            if (st) return st;
            if (!have_out) { /* the outputs' shapes are known from the first slices */
                for (int q = 0; q < kout; q++) {
                    int j = n + q;
                    outp[q] = NULL;
                    if (j >= s->n_out || s->out[j] < 0) continue;
                    const frt_value *v = &bout[j];
                    int extra = p->batch ? 2 : 1, rank = v->rank + extra;
                    if (rank > FRT_MAX_RANK) return frt_step_fail(s, FRT_ERR_UNSUPPORTED, "scan output rank too large");
                    int64_t dims[FRT_MAX_RANK];
                    int ax;
                    if (p->batch) {
                        dims[0] = B;
                        dims[1] = T;
                        for (int d = 0; d < v->rank; d++) dims[d + 2] = v->dims[d];
                        ax = 1;
                    } else {
                        ax = frt_norm_axis(p->out_axis[q], rank);
                        if (ax < 0) return frt_step_fail(s, FRT_ERR_SHAPE, "scan output %d: axis out of range", q);
                        for (int d = 0, e = 0; d < rank; d++) dims[d] = d == ax ? T : v->dims[e++];
                    }
                    outp[q] = out_storage(s, x, p, j, v->dtype, rank, dims);
                    if (!outp[q]) return FRT_ERR_SHAPE;
                    frt_value ov = {0};
                    frt_value_set_shape(&ov, v->dtype, rank, dims);
                    out_ax[q] = ax;
                    split_axis(&ov, ax, p->batch ? 1 : 0, &out_outer[q], &out_inner[q]);
                    out_bstride[q] = (size_t)out_outer[q] * (size_t)T * out_inner[q];
                    if (lens) memset(outp[q], 0, frt_value_nbytes(&ov)); /* past each length */
                }
                have_out = true;
            }
            for (int q = 0; q < kout; q++) {
                if (!outp[q]) continue;
                const frt_value *v = &bout[n + q];
                if ((size_t)out_outer[q] * out_inner[q] != frt_value_nbytes(v))
                    return frt_step_fail(s, FRT_ERR_SHAPE, "scan output %d changed its shape", q);
                int64_t to = p->out_rev[q] ? len - 1 - t : t;
                char *base = outp[q] + (size_t)b * out_bstride[q];
                for (int64_t o = 0; o < out_outer[q]; o++)
                    memcpy(base + ((size_t)o * (size_t)T + (size_t)to) * out_inner[q],
                           (const char *)v->data + (size_t)o * out_inner[q], out_inner[q]);
            }
            (void)out_ax;
            for (int j = 0; j < n; j++) {
                if (!same_shape(&bout[j], &bin[j]))
                    return frt_step_fail(s, FRT_ERR_SHAPE, "state %d changed its shape", j);
                st = carry(s, x, p, j, &pp[j], &bin[j], &bout[j]);
                if (st) return st;
            }
        }
        for (int j = 0; j < n && j < s->n_out; j++) {
            if (s->out[j] < 0) continue;
            const frt_value *iv = &x->values[s->in[f + j]];
            void *d = b == 0 ? out_storage(s, x, p, j, iv->dtype, iv->rank, iv->dims)
                             : x->values[s->out[j]].data;
            if (!d) return FRT_ERR_SHAPE;
            size_t nb = frt_value_nbytes(&bin[j]);
            if (nb) memcpy((char *)d + (size_t)b * nb, bin[j].data, nb);
        }
    }
    if (B == 0) /* no batch: the final states are the (empty) initial ones */
        for (int j = 0; j < n && j < s->n_out; j++) {
            const frt_value *iv = &x->values[s->in[f + j]];
            if (s->out[j] >= 0 && !out_storage(s, x, p, j, iv->dtype, iv->rank, iv->dims))
                return FRT_ERR_SHAPE;
        }
    if (!have_out) /* no iteration ran: empty scan outputs of the declared slice shapes */
        for (int q = 0; q < kout; q++) {
            int j = n + q;
            if (j >= s->n_out || s->out[j] < 0) continue;
            const frt_value *bo = g_out(body, j);
            int extra = p->batch ? 2 : 1, rank = bo->rank < 0 ? extra : bo->rank + extra;
            int64_t dims[FRT_MAX_RANK];
            if (p->batch) {
                dims[0] = B;
                dims[1] = T;
                for (int d = 0; d < rank - 2; d++) dims[d + 2] = bo->dims[d] < 0 ? 0 : bo->dims[d];
            } else {
                int ax = frt_norm_axis(p->out_axis[q], rank);
                for (int d = 0, e = 0; d < rank; d++)
                    dims[d] = d == ax ? T : (bo->dims[e] < 0 ? 0 : bo->dims[e]), e += d != ax;
            }
            frt_value ov = {0};
            frt_value_set_shape(&ov, bo->dtype, rank, dims);
            void *d = out_storage(s, x, p, j, bo->dtype, rank, dims);
            if (!d) return FRT_ERR_SHAPE;
            if (frt_value_nbytes(&ov)) memset(d, 0, frt_value_nbytes(&ov));
        }
    return FRT_OK;
}

static frt_status scan_select(frt_op_ctx *c, frt_kernel *k) {
    const frt_graph *b = c->node->sub[0];
    scan_cfg g;
    frt_status st = scan_cfg_of(c, b, &g);
    if (st) return st;
    ctl_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    memset(p, 0, sizeof *p);
    st = scan_axes(c, &g, p->in_axis, p->in_rev, p->out_axis, p->out_rev);
    if (st) return st;
    p->n_state = g.n;
    p->n_scan_in = g.m;
    p->n_scan_out = g.kout;
    p->first_state = g.first;
    p->batch = g.batch;
    /* static when the body's outputs have known shapes (the sequence length comes from inputs) */
    p->dynamic = false;
    for (int j = 0; j < g.n + g.kout; j++)
        if (!frt_shape_known(g_out(b, j))) p->dynamic = true;
    k->name = p->dynamic ? "scan_dynamic" : "scan";
    k->fn = scan_run;
    k->scratch = scan_scratch;
    k->params = p;
    k->flags = p->dynamic ? FRT_K_DYNAMIC_OUT : 0;
    return FRT_OK;
}

FRT_OP_IMPL(control, If, if_infer, if_select);
FRT_OP_IMPL(control, Loop, loop_infer, loop_select);
FRT_OP_IMPL(control, Scan, scan_infer, scan_select);
