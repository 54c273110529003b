#include "op_harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/threadpool.h"

frt_onnx_attr frt_test_attr_int(const char *name, int64_t v) {
    frt_onnx_attr a = {0};
    a.name = name; a.type = FRT_ATTR_INT; a.i = v;
    return a;
}
frt_onnx_attr frt_test_attr_float(const char *name, float v) {
    frt_onnx_attr a = {0};
    a.name = name; a.type = FRT_ATTR_FLOAT; a.f = v;
    return a;
}
frt_onnx_attr frt_test_attr_ints(const char *name, const int64_t *v, size_t n) {
    frt_onnx_attr a = {0};
    a.name = name; a.type = FRT_ATTR_INTS; a.ints = (int64_t *)v; a.n = n;
    return a;
}
frt_onnx_attr frt_test_attr_floats(const char *name, const float *v, size_t n) {
    frt_onnx_attr a = {0};
    a.name = name; a.type = FRT_ATTR_FLOATS; a.floats = (float *)v; a.n = n;
    return a;
}
frt_onnx_attr frt_test_attr_string(const char *name, const char *s) {
    frt_onnx_attr a = {0};
    a.name = name; a.type = FRT_ATTR_STRING; a.s = s; a.s_len = strlen(s);
    return a;
}

frt_value frt_test_value(int32_t dtype, int rank, const int64_t *dims, void *data) {
    frt_value v = {0};
    frt_op_set_shape(&v, dtype, rank, dims);
    v.data = data;
    return v;
}

#define MAXIO 16

frt_status frt_test_run_op(const frt_test_op *op, frt_value *outputs, const char **kernel_name) {
    const frt_op_def *def = frt_op_find("", op->op_type);
    if (!def) def = frt_op_find("flatrt", op->op_type); /* internal ops made by passes */
    if (!def) def = frt_op_find(FRT_DOMAIN_TRAINING, op->op_type);
    if (!def) return frt_error(FRT_ERR_UNSUPPORTED, "no op %s", op->op_type);
    if (op->n_in > MAXIO || op->n_out > MAXIO) return frt_error(FRT_ERR_INTERNAL, "too many io");

    int32_t in_ids[MAXIO], out_ids[MAXIO];
    for (int i = 0; i < op->n_in; i++) in_ids[i] = (op->absent_mask >> i) & 1 ? -1 : i;
    for (int i = 0; i < op->n_out; i++) out_ids[i] = op->n_in + i;
    frt_node node = {0};
    node.name = "test_node";
    node.op_type = op->op_type;
    node.domain = def->domain;
    node.n_in = op->n_in;
    node.n_out = op->n_out;
    node.in = in_ids;
    node.out = out_ids;
    node.attrs = op->attrs;
    node.n_attrs = op->n_attrs;
    node.wprec = (int8_t)op->weights_precision;
    node.opset = op->opset ? op->opset : 17;
    node.act = op->act;

    /* load time: constants carry data, others only shapes */
    frt_value load_vals[2 * MAXIO];
    frt_value *in_p[MAXIO], *out_p[MAXIO];
    for (int i = 0; i < op->n_in; i++) {
        load_vals[i] = op->inputs[i];
        if (!((op->const_mask >> i) & 1)) {
            load_vals[i].data = NULL;
            if (op->unknown_dims) {
                for (int d = 0; d < load_vals[i].rank; d++) load_vals[i].dims[d] = -1;
                load_vals[i].numel = -1;
            }
        }
        in_p[i] = in_ids[i] < 0 ? NULL : &load_vals[i];
    }
    for (int i = 0; i < op->n_out; i++) {
        memset(&load_vals[op->n_in + i], 0, sizeof(frt_value));
        out_p[i] = &load_vals[op->n_in + i];
    }
    frt_op_ctx c = {&node, node.opset, op->n_in, op->n_out, in_p, out_p, NULL, FRT_ISA_PORTABLE};
    frt_status st = def->infer(&c);
    if (st) return st;

    frt_arena arena;
    frt_arena_init(&arena);
    c.arena = &arena;
    c.isa = frt_cpu_tier();
    if (op->isa > 0 && (frt_isa)(op->isa - 1) < c.isa) c.isa = (frt_isa)(op->isa - 1);
    frt_kernel k = {0};
    st = def->select(&c, &k);
    if (st) goto done;
    if (kernel_name) { /* the name may live in the arena freed below: keep a copy */
        static char name_copy[128];
        snprintf(name_copy, sizeof name_copy, "%s", k.name ? k.name : "");
        *kernel_name = name_copy;
    }

    /* run time: every value concrete */
    frt_value vals[2 * MAXIO];
    for (int i = 0; i < op->n_in; i++) {
        vals[i] = op->inputs[i];
        in_p[i] = in_ids[i] < 0 ? NULL : &vals[i];
    }
    for (int i = 0; i < op->n_out; i++) {
        memset(&vals[op->n_in + i], 0, sizeof(frt_value));
        out_p[i] = &vals[op->n_in + i];
    }
    c.arena = NULL;
    st = def->infer(&c);
    if (st) goto done;
    for (int i = 0; i < op->n_out; i++) {
        size_t nb = frt_value_nbytes(&vals[op->n_in + i]);
        vals[op->n_in + i].data = malloc(nb ? nb : 1);
        /* poison: a kernel that leaves an element unwritten shows up as NaN / garbage instead of
           a stale correct value from a previous run's freed block */
        if (vals[op->n_in + i].data) memset(vals[op->n_in + i].data, 0xff, nb ? nb : 1);
    }
    frt_step step = {0};
    step.k = k;
    step.in = in_ids;
    step.out = out_ids;
    step.n_in = op->n_in;
    step.n_out = op->n_out;
    step.ir = &node;
    void *scratch = NULL;
    if (k.scratch) {
        size_t sb = k.scratch(&step, vals);
        scratch = aligned_alloc(64, ((sb ? sb : 1) + 63) & ~(size_t)63);
    }
    frt_threadpool *tp = frt_threadpool_create(op->n_threads, NULL);
    if (k.flags & FRT_K_VIEW) {
        memcpy(vals[op->n_in].data, vals[0].data, frt_value_nbytes(&vals[op->n_in]));
    } else {
        frt_exec x = {.values = vals, .scratch = scratch, .tp = tp};
        st = k.fn(&step, &x);
    }
    frt_threadpool_free(tp);
    free(scratch);
    for (int i = 0; i < op->n_out; i++) {
        if (st) {
            free(vals[op->n_in + i].data);
            vals[op->n_in + i].data = NULL;
        }
        outputs[i] = vals[op->n_in + i];
    }
done:
    if (k.destroy) k.destroy((void *)k.params);
    frt_arena_free(&arena);
    return st;
}
