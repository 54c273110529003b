/* A small ONNX (protobuf wire format) writer for tests that build models in memory: graphs with
 * nodes, attributes (ints, graphs), initializers and typed inputs/outputs. Allocation failures
 * abort (tests only). */
#ifndef FRT_TEST_ONNX_BUILD_H
#define FRT_TEST_ONNX_BUILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct ob_buf {
    uint8_t *p;
    size_t n, cap;
} ob_buf;

#if defined(__GNUC__)
#define OB_UNUSED __attribute__((unused))
#else
#define OB_UNUSED
#endif

static void ob_raw(ob_buf *b, const void *d, size_t n) {
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap * 2 : 64;
        while (c < b->n + n) c *= 2;
        b->p = realloc(b->p, c);
        if (!b->p) abort();
        b->cap = c;
    }
    if (n) memcpy(b->p + b->n, d, n);
    b->n += n;
}
static void ob_varint(ob_buf *b, uint64_t v) {
    uint8_t c;
    while (v >= 0x80) {
        c = (uint8_t)(v | 0x80);
        ob_raw(b, &c, 1);
        v >>= 7;
    }
    c = (uint8_t)v;
    ob_raw(b, &c, 1);
}
static void ob_tag(ob_buf *b, uint32_t field, unsigned wire) { ob_varint(b, (uint64_t)field << 3 | wire); }
static void ob_int(ob_buf *b, uint32_t field, int64_t v) {
    ob_tag(b, field, 0);
    ob_varint(b, (uint64_t)v);
}
static void ob_bytes(ob_buf *b, uint32_t field, const void *d, size_t n) {
    ob_tag(b, field, 2);
    ob_varint(b, n);
    ob_raw(b, d, n);
}
static void ob_str(ob_buf *b, uint32_t field, const char *s) { ob_bytes(b, field, s, strlen(s)); }
/* Appends sub as a nested message and frees it. */
static void ob_msg(ob_buf *b, uint32_t field, ob_buf *sub) {
    ob_bytes(b, field, sub->p, sub->n);
    free(sub->p);
    *sub = (ob_buf){0};
}

/* TensorProto of float32 data (raw_data). */
OB_UNUSED static ob_buf ob_tensor_f32(const char *name, const int64_t *dims, int rank, const float *data) {
    ob_buf t = {0};
    size_t n = 1;
    for (int i = 0; i < rank; i++) {
        ob_int(&t, 1, dims[i]);
        n *= (size_t)dims[i];
    }
    ob_int(&t, 2, 1);
    ob_str(&t, 8, name);
    ob_bytes(&t, 9, data, n * sizeof(float));
    return t;
}

/* TensorProto of a rank-1 int64 tensor of n values (raw_data). */
OB_UNUSED static ob_buf ob_tensor_i64(const char *name, int64_t n, const int64_t *data) {
    ob_buf t = {0};
    ob_int(&t, 1, n);
    ob_int(&t, 2, 7);
    ob_str(&t, 8, name);
    ob_bytes(&t, 9, data, (size_t)n * sizeof(int64_t));
    return t;
}

/* ValueInfoProto of a tensor; rank < 0: no shape; a dim < 0 is left unknown. */
OB_UNUSED static ob_buf ob_vinfo(const char *name, int elem, int rank, const int64_t *dims) {
    ob_buf vi = {0}, type = {0}, tt = {0};
    ob_str(&vi, 1, name);
    ob_int(&tt, 1, elem);
    if (rank >= 0) {
        ob_buf shape = {0};
        for (int i = 0; i < rank; i++) {
            ob_buf dim = {0};
            if (dims[i] >= 0) ob_int(&dim, 1, dims[i]);
            ob_msg(&shape, 1, &dim);
        }
        ob_msg(&tt, 2, &shape);
    }
    ob_msg(&type, 1, &tt);
    ob_msg(&vi, 2, &type);
    return vi;
}

/* NodeProto; ins/outs are NULL-terminated name lists; domain may be NULL. */
OB_UNUSED static ob_buf ob_node(const char *op, const char *domain, const char *name, const char *const *ins,
                      const char *const *outs) {
    ob_buf n = {0};
    for (; ins && *ins; ins++) ob_str(&n, 1, *ins);
    for (; outs && *outs; outs++) ob_str(&n, 2, *outs);
    ob_str(&n, 3, name);
    ob_str(&n, 4, op);
    if (domain) ob_str(&n, 7, domain);
    return n;
}

OB_UNUSED static void ob_attr_int(ob_buf *node, const char *name, int64_t v) {
    ob_buf a = {0};
    ob_str(&a, 1, name);
    ob_int(&a, 3, v);
    ob_int(&a, 20, 2);
    ob_msg(node, 5, &a);
}

/* INTS attribute of n values. */
OB_UNUSED static void ob_attr_ints(ob_buf *node, const char *name, const int64_t *v, size_t n) {
    ob_buf a = {0};
    ob_str(&a, 1, name);
    for (size_t i = 0; i < n; i++) ob_int(&a, 8, v[i]);
    ob_int(&a, 20, 7);
    ob_msg(node, 5, &a);
}

/* GRAPH attribute; frees g. */
OB_UNUSED static void ob_attr_graph(ob_buf *node, const char *name, ob_buf *g) {
    ob_buf a = {0};
    ob_str(&a, 1, name);
    ob_msg(&a, 6, g);
    ob_int(&a, 20, 5);
    ob_msg(node, 5, &a);
}

/* GraphProto parts: add nodes (field 1), initializers (5), inputs (11), outputs (12). */
enum { OB_NODE = 1, OB_INIT = 5, OB_INPUT = 11, OB_OUTPUT = 12 };

/* ModelProto (ir_version 8, ai.onnx opset 13, domain "test" version 1); frees g. */
OB_UNUSED static ob_buf ob_model(ob_buf *g) {
    ob_buf m = {0}, o = {0}, t = {0};
    ob_int(&m, 1, 8);
    ob_int(&o, 2, 13);
    ob_msg(&m, 8, &o);
    ob_str(&t, 1, "test");
    ob_int(&t, 2, 1);
    ob_msg(&m, 8, &t);
    ob_str(g, 2, "g");
    ob_msg(&m, 7, g);
    return m;
}

#endif
