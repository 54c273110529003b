/* Sequence and optional values: SequenceEmpty SequenceConstruct SequenceAt SequenceInsert
 * SequenceErase SequenceLength ConcatFromSequence SplitToSequence SequenceMap Optional
 * OptionalHasElement OptionalGetElement.
 *
 * A sequence or optional value (frt_value.vtype != FRT_VT_TENSOR) has at load only its kind and
 * element dtype; while running its data is the frt_seq the runtime keeps for it (src/ir/seq.h).
 * Kernels that produce one fill the output's frt_seq (its buffers are reused run after run).
 * Kernels that take a tensor out of a sequence (SequenceAt, ConcatFromSequence,
 * OptionalGetElement of a tensor) do not know its shape before running: they are
 * FRT_K_DYNAMIC_OUT and copy into frt_exec_alloc_output storage. Positions are checked at run
 * time (FRT_ERR_RUNTIME naming the position and the length).
 */
#include <stdio.h>
#include <string.h>

#include "ir/seq.h"
#include "op.h"

#define SEQ_MAX_IO 64 /* SequenceMap inputs and outputs */

typedef struct seq_params {
    int32_t dtype; /* SequenceEmpty, Optional without input: element dtype */
    int64_t axis;  /* ConcatFromSequence, SplitToSequence: as given */
    bool new_axis; /* ConcatFromSequence */
    bool keepdims; /* SplitToSequence without split */
} seq_params;

static seq_params *new_params(frt_op_ctx *c) {
    seq_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (p)
        memset(p, 0, sizeof *p);
    else
        frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    return p;
}

/* Input i is present and a value of kind vtype (a tensor when vtype is FRT_VT_TENSOR). */
static frt_status need(const frt_op_ctx *c, int i, int32_t vtype, const char *what) {
    if (i >= c->n_in || !c->in[i])
        return frt_op_fail(c, FRT_ERR_MALFORMED, "missing input %s", what);
    if (c->in[i]->vtype != vtype)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "input %s is a %s, expected a %s", what,
                           frt_vtype_name(c->in[i]->vtype), frt_vtype_name(vtype));
    return FRT_OK;
}

/* An int32/int64 scalar (or one-element) position input. */
static frt_status need_pos(const frt_op_ctx *c, int i) {
    frt_status st = need(c, i, FRT_VT_TENSOR, "position");
    if (st) return st;
    const frt_value *p = c->in[i];
    if (p->dtype != FRT_INT32 && p->dtype != FRT_INT64)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "position must be int32 or int64, not %s",
                           frt_dtype_name((frt_dtype)p->dtype));
    if (p->numel > 1) return frt_op_fail(c, FRT_ERR_SHAPE, "position must be a scalar");
    return FRT_OK;
}

/* Reads position input i against a sequence of length n: in [-n, n - 1] (at == false) or
 * [-n, n] (insert: at == true). Absent: dflt (already in range). */
static frt_status read_pos(const frt_step *s, frt_exec *x, int i, int64_t n, bool insert,
                           int64_t dflt, int64_t *out) {
    if (i >= s->n_in || s->in[i] < 0) {
        *out = dflt;
        return FRT_OK;
    }
    const frt_value *p = &x->values[s->in[i]];
    if (p->numel != 1) return frt_step_fail(s, FRT_ERR_RUNTIME, "position must hold one value");
    int64_t v = frt_value_get_int(p, 0);
    int64_t hi = insert ? n : n - 1;
    if (v < -n || v > hi)
        return frt_step_fail(s, FRT_ERR_RUNTIME,
                             "position %lld is out of range [%lld, %lld] for a "
                             "sequence of length %lld",
                             (long long)v, (long long)-n, (long long)hi, (long long)n);
    *out = v < 0 ? v + n : v;
    return FRT_OK;
}

static frt_seq *in_seq(const frt_step *s, frt_exec *x, int i) {
    return frt_seq_of(&x->values[s->in[i]]);
}
static frt_seq *out_seq(const frt_step *s, frt_exec *x, int j) {
    return frt_seq_of(&x->values[s->out[j]]);
}

/* Tensor t into run-time-sized output j. */
static frt_status tensor_out(const frt_step *s, frt_exec *x, int j, const frt_value *t) {
    void *d = frt_exec_alloc_output(x, s, j, t->dtype, t->rank, t->dims);
    if (!d) return FRT_ERR_RUNTIME;
    size_t nb = frt_value_nbytes(t);
    if (nb) memcpy(d, t->data, nb);
    return FRT_OK;
}

static frt_status check_elem(const frt_step *s, const frt_seq *q, const frt_value *t) {
    if (t->dtype != q->dtype)
        return frt_step_fail(s, FRT_ERR_RUNTIME, "tensor of dtype %s for a sequence of %s",
                             frt_dtype_name((frt_dtype)t->dtype),
                             frt_dtype_name((frt_dtype)q->dtype));
    return FRT_OK;
}

static frt_status simple_kernel(frt_kernel *k, const char *name, frt_kernel_fn fn, uint32_t flags) {
    k->name = name;
    k->fn = fn;
    k->flags = flags;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* SequenceEmpty, SequenceConstruct, SequenceLength */
/* ---------------------------------------------------------------------------------------------- */

static frt_status empty_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 0, 0, 1, 1);
    if (st) return st;
    int64_t dt = frt_attr_int(c->node, "dtype", FRT_FLOAT32);
    if (dt <= 0 || dt > 64 || frt_dtype_size((frt_dtype)dt) == 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %lld is not supported", (long long)dt);
    frt_value_set_container(c->out[0], FRT_VT_SEQUENCE, (int32_t)dt);
    return FRT_OK;
}

static frt_status empty_run(const frt_step *s, frt_exec *x) {
    frt_seq *o = out_seq(s, x, 0);
    frt_seq_reset(o, x->values[s->out[0]].dtype, true);
    return FRT_OK;
}

static frt_status empty_select(frt_op_ctx *c, frt_kernel *k) {
    return simple_kernel(k, "sequence_empty", empty_run, 0);
}

static frt_status construct_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1024, 1, 1);
    if (st) return st;
    for (int i = 0; i < c->n_in; i++) {
        if ((st = need(c, i, FRT_VT_TENSOR, "tensor"))) return st;
        if (c->in[i]->dtype != c->in[0]->dtype)
            return frt_op_fail(c, FRT_ERR_MALFORMED, "input %d is %s, input 0 %s", i,
                               frt_dtype_name((frt_dtype)c->in[i]->dtype),
                               frt_dtype_name((frt_dtype)c->in[0]->dtype));
    }
    frt_value_set_container(c->out[0], FRT_VT_SEQUENCE, c->in[0]->dtype);
    return FRT_OK;
}

static frt_status construct_run(const frt_step *s, frt_exec *x) {
    frt_seq *o = out_seq(s, x, 0);
    frt_seq_reset(o, x->values[s->out[0]].dtype, true);
    for (int i = 0; i < s->n_in; i++) {
        frt_status st = frt_seq_push_copy(o, &x->values[s->in[i]]);
        if (st) return st;
    }
    return FRT_OK;
}

static frt_status construct_select(frt_op_ctx *c, frt_kernel *k) {
    return simple_kernel(k, "sequence_construct", construct_run, 0);
}

static frt_status length_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (st || (st = need(c, 0, FRT_VT_SEQUENCE, "sequence"))) return st;
    frt_op_set_shape(c->out[0], FRT_INT64, 0, NULL);
    return FRT_OK;
}

static frt_status length_run(const frt_step *s, frt_exec *x) {
    *(int64_t *)x->values[s->out[0]].data = (int64_t)in_seq(s, x, 0)->n;
    return FRT_OK;
}

static frt_status length_select(frt_op_ctx *c, frt_kernel *k) {
    return simple_kernel(k, "sequence_length", length_run, 0);
}

/* ---------------------------------------------------------------------------------------------- */
/* SequenceAt, SequenceInsert, SequenceErase */
/* ---------------------------------------------------------------------------------------------- */

static frt_status at_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 2, 1, 1);
    if (st || (st = need(c, 0, FRT_VT_SEQUENCE, "sequence")) || (st = need_pos(c, 1))) return st;
    frt_op_set_shape(c->out[0], c->in[0]->dtype, -1, NULL); /* known when it runs */
    return FRT_OK;
}

static frt_status at_run(const frt_step *s, frt_exec *x) {
    const frt_seq *q = in_seq(s, x, 0);
    int64_t i;
    frt_status st = read_pos(s, x, 1, (int64_t)q->n, false, 0, &i);
    if (st) return st;
    return tensor_out(s, x, 0, &q->items[i]);
}

static frt_status at_select(frt_op_ctx *c, frt_kernel *k) {
    return simple_kernel(k, "sequence_at", at_run, FRT_K_DYNAMIC_OUT);
}

static frt_status insert_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 3, 1, 1);
    if (st || (st = need(c, 0, FRT_VT_SEQUENCE, "sequence")) ||
        (st = need(c, 1, FRT_VT_TENSOR, "tensor")))
        return st;
    if (c->n_in > 2 && c->in[2] && (st = need_pos(c, 2))) return st;
    if (c->in[1]->dtype != c->in[0]->dtype)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "tensor of dtype %s for a sequence of %s",
                           frt_dtype_name((frt_dtype)c->in[1]->dtype),
                           frt_dtype_name((frt_dtype)c->in[0]->dtype));
    frt_value_set_container(c->out[0], FRT_VT_SEQUENCE, c->in[0]->dtype);
    return FRT_OK;
}

static frt_status insert_run(const frt_step *s, frt_exec *x) {
    const frt_seq *q = in_seq(s, x, 0);
    const frt_value *t = &x->values[s->in[1]];
    frt_seq *o = out_seq(s, x, 0);
    int64_t n = (int64_t)q->n, pos;
    frt_status st = check_elem(s, q, t);
    if (!st) st = read_pos(s, x, 2, n, true, n, &pos);
    if (!st) st = frt_seq_copy(o, q);
    if (!st) st = frt_seq_push_copy(o, t);
    if (st) return st;
    o->present = true;
    frt_seq_move(o, (size_t)n, (size_t)pos);
    return FRT_OK;
}

static frt_status insert_select(frt_op_ctx *c, frt_kernel *k) {
    return simple_kernel(k, "sequence_insert", insert_run, 0);
}

static frt_status erase_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 2, 1, 1);
    if (st || (st = need(c, 0, FRT_VT_SEQUENCE, "sequence"))) return st;
    if (c->n_in > 1 && c->in[1] && (st = need_pos(c, 1))) return st;
    frt_value_set_container(c->out[0], FRT_VT_SEQUENCE, c->in[0]->dtype);
    return FRT_OK;
}

static frt_status erase_run(const frt_step *s, frt_exec *x) {
    const frt_seq *q = in_seq(s, x, 0);
    frt_seq *o = out_seq(s, x, 0);
    int64_t n = (int64_t)q->n, pos;
    if (n == 0) return frt_step_fail(s, FRT_ERR_RUNTIME, "erase from an empty sequence");
    frt_status st = read_pos(s, x, 1, n, false, n - 1, &pos);
    if (!st) st = frt_seq_copy(o, q);
    if (st) return st;
    frt_seq_erase(o, (size_t)pos);
    return FRT_OK;
}

static frt_status erase_select(frt_op_ctx *c, frt_kernel *k) {
    return simple_kernel(k, "sequence_erase", erase_run, 0);
}

/* ---------------------------------------------------------------------------------------------- */
/* ConcatFromSequence, SplitToSequence */
/* ---------------------------------------------------------------------------------------------- */

static frt_status concat_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (st || (st = need(c, 0, FRT_VT_SEQUENCE, "sequence"))) return st;
    if (!frt_attr_find(c->node, "axis")) return frt_op_fail(c, FRT_ERR_MALFORMED, "needs axis");
    int64_t na = frt_attr_int(c->node, "new_axis", 0);
    if (na != 0 && na != 1)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "new_axis must be 0 or 1, not %lld",
                           (long long)na);
    frt_op_set_shape(c->out[0], c->in[0]->dtype, -1, NULL);
    return FRT_OK;
}

static frt_status concat_run(const frt_step *s, frt_exec *x) {
    const seq_params *p = s->k.params;
    const frt_seq *q = in_seq(s, x, 0);
    if (q->n == 0) return frt_step_fail(s, FRT_ERR_RUNTIME, "concatenation of an empty sequence");
    const frt_value *a = &q->items[0];
    int r = a->rank, ro = p->new_axis ? r + 1 : r;
    if (ro > FRT_MAX_RANK) return frt_step_fail(s, FRT_ERR_RUNTIME, "rank %d too large", ro);
    int ax = frt_norm_axis(p->axis, ro);
    if (ax < 0 || (!p->new_axis && r == 0))
        return frt_step_fail(s, FRT_ERR_RUNTIME, "axis %lld is out of range for rank %d elements%s",
                             (long long)p->axis, r, p->new_axis ? " (new_axis)" : "");
    int64_t dims[FRT_MAX_RANK];
    for (int d = 0; d < r; d++)
        dims[d] = a->dims[d];
    int64_t total = 0;
    for (size_t i = 0; i < q->n; i++) {
        const frt_value *e = &q->items[i];
        bool ok = e->rank == r && e->dtype == a->dtype;
        for (int d = 0; ok && d < r; d++)
            ok = e->dims[d] == a->dims[d] || (!p->new_axis && d == ax);
        if (!ok) {
            char sa[128], sb[128];
            return frt_step_fail(s, FRT_ERR_RUNTIME, "element %zu is %s, element 0 %s", i,
                                 frt_shape_str(e, sa, sizeof sa), frt_shape_str(a, sb, sizeof sb));
        }
        total += p->new_axis ? 1 : e->dims[ax];
    }
    if (p->new_axis) {
        for (int d = r; d > ax; d--)
            dims[d] = dims[d - 1];
        dims[ax] = total;
    } else {
        dims[ax] = total;
    }
    char *y = frt_exec_alloc_output(x, s, 0, a->dtype, ro, dims);
    if (!y) return FRT_ERR_RUNTIME;
    size_t es = frt_dtype_size((frt_dtype)a->dtype);
    int64_t outer = 1;
    for (int d = 0; d < ax; d++)
        outer *= a->dims[d];
    for (int64_t o = 0; o < outer; o++)
        for (size_t i = 0; i < q->n; i++) {
            const frt_value *e = &q->items[i];
            size_t chunk = (size_t)(outer ? e->numel / outer : 0) * es;
            memcpy(y, (const char *)e->data + (size_t)o * chunk, chunk);
            y += chunk;
        }
    return FRT_OK;
}

static frt_status concat_select(frt_op_ctx *c, frt_kernel *k) {
    seq_params *p = new_params(c);
    if (!p) return FRT_ERR_NO_MEMORY;
    p->axis = frt_attr_int(c->node, "axis", 0);
    p->new_axis = frt_attr_int(c->node, "new_axis", 0) == 1;
    k->params = p;
    return simple_kernel(k, "concat_from_sequence", concat_run, FRT_K_DYNAMIC_OUT);
}

static frt_status split_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 2, 1, 1);
    if (st || (st = need(c, 0, FRT_VT_TENSOR, "input"))) return st;
    if (c->n_in > 1 && c->in[1]) {
        if ((st = need(c, 1, FRT_VT_TENSOR, "split"))) return st;
        const frt_value *sp = c->in[1];
        if (sp->dtype != FRT_INT32 && sp->dtype != FRT_INT64)
            return frt_op_fail(c, FRT_ERR_MALFORMED, "split must be int32 or int64");
        if (sp->rank > 1) return frt_op_fail(c, FRT_ERR_SHAPE, "split must be a scalar or 1-D");
    }
    int r = c->in[0]->rank;
    int64_t axis = frt_attr_int(c->node, "axis", 0);
    if (r >= 0 && frt_norm_axis(axis, r) < 0)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "axis %lld is out of range for rank %d",
                           (long long)axis, r);
    frt_value_set_container(c->out[0], FRT_VT_SEQUENCE, c->in[0]->dtype);
    return FRT_OK;
}

static frt_status split_run(const frt_step *s, frt_exec *x) {
    const seq_params *p = s->k.params;
    const frt_value *v = &x->values[s->in[0]];
    frt_seq *o = out_seq(s, x, 0);
    int r = v->rank, ax = frt_norm_axis(p->axis, r);
    if (ax < 0)
        return frt_step_fail(s, FRT_ERR_RUNTIME, "axis %lld is out of range for rank %d",
                             (long long)p->axis, r);
    int64_t dim = v->dims[ax];
    const frt_value *sp = s->n_in > 1 && s->in[1] >= 0 ? &x->values[s->in[1]] : NULL;
    int64_t n, chunk = 1;
    if (!sp) {
        n = dim;
    } else if (sp->rank == 0) {
        chunk = frt_value_get_int(sp, 0);
        if (chunk <= 0)
            return frt_step_fail(s, FRT_ERR_RUNTIME, "split %lld must be positive",
                                 (long long)chunk);
        n = (dim + chunk - 1) / chunk;
    } else {
        n = sp->numel;
        int64_t sum = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t l = frt_value_get_int(sp, i);
            if (l < 0 || l > dim)
                return frt_step_fail(s, FRT_ERR_RUNTIME,
                                     "split length %lld is out of range [0, %lld]", (long long)l,
                                     (long long)dim);
            sum += l;
        }
        if (sum != dim)
            return frt_step_fail(s, FRT_ERR_RUNTIME, "split lengths sum to %lld, axis %d has %lld",
                                 (long long)sum, ax, (long long)dim);
    }
    bool squeeze = !sp && !p->keepdims;
    size_t es = frt_dtype_size((frt_dtype)v->dtype);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < ax; d++)
        outer *= v->dims[d];
    for (int d = ax + 1; d < r; d++)
        inner *= v->dims[d];
    frt_seq_reset(o, v->dtype, true);
    int64_t off = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t len = !sp             ? 1
                      : sp->rank == 0 ? (dim - off < chunk ? dim - off : chunk)
                                      : frt_value_get_int(sp, i);
        int64_t dims[FRT_MAX_RANK];
        int k = 0;
        for (int d = 0; d < r; d++) {
            if (d == ax && squeeze) continue;
            dims[k++] = d == ax ? len : v->dims[d];
        }
        void *dst;
        frt_status st = frt_seq_push(o, v->dtype, k, dims, &dst);
        if (st) return st;
        size_t row = (size_t)(len * inner) * es;
        for (int64_t q = 0; q < outer; q++)
            memcpy((char *)dst + (size_t)q * row,
                   (const char *)v->data + ((size_t)(q * dim + off) * (size_t)inner) * es, row);
        off += len;
    }
    return FRT_OK;
}

static frt_status split_select(frt_op_ctx *c, frt_kernel *k) {
    seq_params *p = new_params(c);
    if (!p) return FRT_ERR_NO_MEMORY;
    p->axis = frt_attr_int(c->node, "axis", 0);
    p->keepdims = frt_attr_int(c->node, "keepdims", 1) != 0;
    k->params = p;
    return simple_kernel(k, "split_to_sequence", split_run, 0);
}

/* ---------------------------------------------------------------------------------------------- */
/* SequenceMap */
/* ---------------------------------------------------------------------------------------------- */

/* (input_sequence, additional inputs: sequences or tensors) -> sequences; the body runs once per
 * element of input_sequence with element i of each sequence input and each tensor input whole. */
static frt_status map_infer(frt_op_ctx *c) {
    const frt_graph *b = c->node->n_sub > 0 ? c->node->sub[0] : NULL;
    if (!b) return frt_op_fail(c, FRT_ERR_MALFORMED, "needs a body");
    frt_status st = frt_op_check_arity(c, 1, SEQ_MAX_IO, 1, SEQ_MAX_IO);
    if (st || (st = need(c, 0, FRT_VT_SEQUENCE, "input_sequence"))) return st;
    if (b->n_inputs != (size_t)c->n_in || b->n_outputs != (size_t)c->n_out)
        return frt_op_fail(c, FRT_ERR_MALFORMED,
                           "body has %zu inputs and %zu outputs for %d and %d", b->n_inputs,
                           b->n_outputs, c->n_in, c->n_out);
    for (int i = 0; i < c->n_in; i++) {
        if (!c->in[i] || (c->in[i]->vtype != FRT_VT_TENSOR && c->in[i]->vtype != FRT_VT_SEQUENCE))
            return frt_op_fail(c, FRT_ERR_MALFORMED, "input %d must be a tensor or sequence", i);
        const frt_value *bi = &b->values[b->inputs[i]].v;
        if (bi->vtype || bi->dtype != c->in[i]->dtype)
            return frt_op_fail(c, FRT_ERR_MALFORMED, "body input %d is a %s of %s for %s", i,
                               frt_vtype_name(bi->vtype), frt_dtype_name((frt_dtype)bi->dtype),
                               frt_dtype_name((frt_dtype)c->in[i]->dtype));
    }
    for (int j = 0; j < c->n_out; j++) {
        const frt_value *bo = &b->values[b->outputs[j]].v;
        if (bo->vtype || frt_dtype_size((frt_dtype)bo->dtype) == 0)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "body output %d must be a tensor", j);
        frt_value_set_container(c->out[j], FRT_VT_SEQUENCE, bo->dtype);
    }
    return FRT_OK;
}

static frt_status map_run(const frt_step *s, frt_exec *x) {
    const frt_seq *q0 = in_seq(s, x, 0);
    size_t n = q0->n;
    frt_value bin[SEQ_MAX_IO], bout[SEQ_MAX_IO];
    for (int i = 0; i < s->n_in; i++) {
        const frt_value *v = &x->values[s->in[i]];
        const frt_seq *q = frt_seq_of(v);
        if (q && q->n != n)
            return frt_step_fail(s, FRT_ERR_RUNTIME, "input %d has %zu elements, input 0 has %zu",
                                 i, q->n, n);
        if (!q) bin[i] = *v;
    }
    for (int j = 0; j < s->n_out; j++)
        if (s->out[j] >= 0) frt_seq_reset(out_seq(s, x, j), x->values[s->out[j]].dtype, true);
    for (size_t e = 0; e < n; e++) {
        for (int i = 0; i < s->n_in; i++) {
            const frt_seq *q = frt_seq_of(&x->values[s->in[i]]);
            if (q) bin[i] = q->items[e];
        }
        frt_status st =
            frt_exec_block(x, s->blocks[0], bin, (size_t)s->n_in, bout, (size_t)s->n_out);
        if (st) return st;
        for (int j = 0; j < s->n_out; j++) {
            if (s->out[j] < 0) continue;
            frt_seq *o = out_seq(s, x, j);
            if ((st = check_elem(s, o, &bout[j])) || (st = frt_seq_push_copy(o, &bout[j])))
                return st;
        }
    }
    return FRT_OK;
}

static frt_status map_select(frt_op_ctx *c, frt_kernel *k) {
    return simple_kernel(k, "sequence_map", map_run, 0);
}

/* ---------------------------------------------------------------------------------------------- */
/* Optional, OptionalHasElement, OptionalGetElement */
/* ---------------------------------------------------------------------------------------------- */

/* Optional(input?) with attribute type (a TypeProto) when the input is absent. */
static frt_status optional_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 0, 1, 1, 1);
    if (st) return st;
    if (c->n_in == 1 && c->in[0]) {
        const frt_value *v = c->in[0];
        if (v->vtype != FRT_VT_TENSOR && v->vtype != FRT_VT_SEQUENCE)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "optional of a %s",
                               frt_vtype_name(v->vtype));
        frt_value_set_container(c->out[0], v->vtype ? FRT_VT_OPT_SEQUENCE : FRT_VT_OPT_TENSOR,
                                v->dtype);
        return FRT_OK;
    }
    const frt_onnx_attr *a = frt_attr_find(c->node, "type");
    if (!a || a->type != FRT_ATTR_TYPE_PROTO || !a->tp)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "without an input it needs the type attribute");
    const frt_onnx_value_info *tp = a->tp;
    if (!tp->has_type ||
        (tp->type_kind != FRT_ONNX_TYPE_TENSOR && tp->type_kind != FRT_ONNX_TYPE_SEQUENCE) ||
        frt_dtype_size((frt_dtype)tp->elem_type) == 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED,
                           "type must be a tensor or a sequence of tensors "
                           "of a numeric dtype");
    frt_value_set_container(c->out[0],
                            tp->type_kind == FRT_ONNX_TYPE_SEQUENCE ? FRT_VT_OPT_SEQUENCE
                                                                    : FRT_VT_OPT_TENSOR,
                            tp->elem_type);
    return FRT_OK;
}

static frt_status optional_run(const frt_step *s, frt_exec *x) {
    frt_seq *o = out_seq(s, x, 0);
    int32_t dt = x->values[s->out[0]].dtype;
    if (s->n_in < 1 || s->in[0] < 0) {
        frt_seq_reset(o, dt, false);
        return FRT_OK;
    }
    const frt_value *v = &x->values[s->in[0]];
    frt_status st;
    if (v->vtype) {
        st = frt_seq_copy(o, frt_seq_of(v));
    } else {
        frt_seq_reset(o, dt, true);
        st = frt_seq_push_copy(o, v);
    }
    o->present = true;
    return st;
}

static frt_status optional_select(frt_op_ctx *c, frt_kernel *k) {
    return simple_kernel(k, "optional", optional_run, 0);
}

/* Opset 15: an optional input. Opset 18: an optional, tensor or sequence input, or none. */
static frt_status has_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, c->opset >= 18 ? 0 : 1, 1, 1, 1);
    if (st) return st;
    const frt_value *v = c->n_in ? c->in[0] : NULL;
    if (c->opset < 18 && (!v || (v->vtype != FRT_VT_OPT_TENSOR && v->vtype != FRT_VT_OPT_SEQUENCE)))
        return frt_op_fail(c, FRT_ERR_MALFORMED, "input must be an optional (opset %lld)",
                           (long long)c->opset);
    frt_op_set_shape(c->out[0], FRT_BOOL, 0, NULL);
    return FRT_OK;
}

static frt_status has_run(const frt_step *s, frt_exec *x) {
    bool has = false;
    if (s->n_in > 0 && s->in[0] >= 0) {
        const frt_value *v = &x->values[s->in[0]];
        has = v->vtype == FRT_VT_OPT_TENSOR || v->vtype == FRT_VT_OPT_SEQUENCE
                  ? frt_seq_of(v)->present
                  : true;
    }
    *(uint8_t *)x->values[s->out[0]].data = has;
    return FRT_OK;
}

static frt_status has_select(frt_op_ctx *c, frt_kernel *k) {
    return simple_kernel(k, "optional_has_element", has_run, 0);
}

/* Opset 15: an optional input; opset 18: also a tensor or sequence (passed through). An optional
 * with no value is a run-time error. */
static frt_status get_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (st) return st;
    const frt_value *v = c->in[0];
    if (!v) return frt_op_fail(c, FRT_ERR_MALFORMED, "missing input");
    bool opt = v->vtype == FRT_VT_OPT_TENSOR || v->vtype == FRT_VT_OPT_SEQUENCE;
    if (!opt && c->opset < 18)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "input must be an optional (opset %lld)",
                           (long long)c->opset);
    if (v->vtype == FRT_VT_OPT_SEQUENCE || v->vtype == FRT_VT_SEQUENCE)
        frt_value_set_container(c->out[0], FRT_VT_SEQUENCE, v->dtype);
    else if (v->vtype == FRT_VT_OPT_TENSOR)
        frt_op_set_shape(c->out[0], v->dtype, -1, NULL);
    else
        frt_op_set_shape(c->out[0], v->dtype, v->rank, v->dims);
    return FRT_OK;
}

static frt_status get_run(const frt_step *s, frt_exec *x) {
    const frt_value *v = &x->values[s->in[0]];
    if (!v->vtype) return tensor_out(s, x, 0, v);
    const frt_seq *q = frt_seq_of(v);
    if (!q->present) return frt_step_fail(s, FRT_ERR_RUNTIME, "the optional input has no value");
    if (x->values[s->out[0]].vtype) {
        frt_status st = frt_seq_copy(out_seq(s, x, 0), q);
        out_seq(s, x, 0)->present = true;
        return st;
    }
    if (q->n != 1) return frt_step_fail(s, FRT_ERR_INTERNAL, "optional tensor holds %zu", q->n);
    return tensor_out(s, x, 0, &q->items[0]);
}

static frt_status get_select(frt_op_ctx *c, frt_kernel *k) {
    bool seq = c->out[0]->vtype != 0;
    return simple_kernel(k, seq ? "optional_get_sequence" : "optional_get_tensor", get_run,
                         seq ? 0 : FRT_K_DYNAMIC_OUT);
}

FRT_OP_IMPL(sequence, ConcatFromSequence, concat_infer, concat_select);
FRT_OP_IMPL(sequence, Optional, optional_infer, optional_select);
FRT_OP_IMPL(sequence, OptionalGetElement, get_infer, get_select);
FRT_OP_IMPL(sequence, OptionalHasElement, has_infer, has_select);
FRT_OP_IMPL(sequence, SequenceAt, at_infer, at_select);
FRT_OP_IMPL(sequence, SequenceConstruct, construct_infer, construct_select);
FRT_OP_IMPL(sequence, SequenceEmpty, empty_infer, empty_select);
FRT_OP_IMPL(sequence, SequenceErase, erase_infer, erase_select);
FRT_OP_IMPL(sequence, SequenceInsert, insert_infer, insert_select);
FRT_OP_IMPL(sequence, SequenceLength, length_infer, length_select);
FRT_OP_IMPL(sequence, SequenceMap, map_infer, map_select);
FRT_OP_IMPL(sequence, SplitToSequence, split_infer, split_select);
