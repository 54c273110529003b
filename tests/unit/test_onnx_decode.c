/* ONNX decoder tests: a tiny protobuf encoder builds ModelProtos in memory; every field kind is
 * checked after decoding, then malformed inputs (truncation and byte flips at every offset, hostile
 * sizes, wrong wire types, bad varints, deep nesting) must fail cleanly with a message. External
 * data mapping is tested on files in a temporary directory, and a model written by the real onnx
 * Python package is decoded when /usr/bin/python3 with onnx is available. */
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "onnx/onnx.h"
#include "test_util.h"

/* Every malloc in this test returns memory filled with 0xa5, so a decoder field read before it is
 * written shows up as a wrong result (sanitizer builds own malloc; CI runs them with ASAN_OPTIONS
 * that fill allocations the same way). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define T_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define T_SANITIZED 1
#endif
#ifndef T_SANITIZED
extern void *__libc_malloc(size_t);
void *malloc(size_t n) {
    void *p = __libc_malloc(n);
    if (p) memset(p, 0xa5, n);
    return p;
}
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Protobuf encoder                                                                                */
/* ---------------------------------------------------------------------------------------------- */

typedef struct pbuf {
    uint8_t *p;
    size_t n, cap;
} pbuf;

static void pb_raw(pbuf *b, const void *d, size_t n) {
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
static void pb_byte(pbuf *b, uint8_t v) { pb_raw(b, &v, 1); }
static void pb_varint(pbuf *b, uint64_t v) {
    while (v >= 0x80) {
        pb_byte(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    pb_byte(b, (uint8_t)v);
}
static void pb_tag(pbuf *b, uint32_t field, unsigned wire) { pb_varint(b, (uint64_t)field << 3 | wire); }
static void f_varint(pbuf *b, uint32_t field, uint64_t v) {
    pb_tag(b, field, 0);
    pb_varint(b, v);
}
static void f_i32(pbuf *b, uint32_t field, uint32_t v) {
    pb_tag(b, field, 5);
    for (int i = 0; i < 4; i++) pb_byte(b, (uint8_t)(v >> (8 * i)));
}
static void f_i64(pbuf *b, uint32_t field, uint64_t v) {
    pb_tag(b, field, 1);
    for (int i = 0; i < 8; i++) pb_byte(b, (uint8_t)(v >> (8 * i)));
}
static void f_float(pbuf *b, uint32_t field, float f) {
    uint32_t w;
    memcpy(&w, &f, 4);
    f_i32(b, field, w);
}
static void f_double(pbuf *b, uint32_t field, double f) {
    uint64_t w;
    memcpy(&w, &f, 8);
    f_i64(b, field, w);
}
static void f_bytes(pbuf *b, uint32_t field, const void *d, size_t n) {
    pb_tag(b, field, 2);
    pb_varint(b, n);
    pb_raw(b, d, n);
}
static void f_str(pbuf *b, uint32_t field, const char *s) { f_bytes(b, field, s, strlen(s)); }
/* Appends sub as a nested message and frees it. */
static void f_msg(pbuf *b, uint32_t field, pbuf *sub) {
    f_bytes(b, field, sub->p, sub->n);
    free(sub->p);
    *sub = (pbuf){0};
}
static void f_packed_varints(pbuf *b, uint32_t field, const int64_t *v, size_t n) {
    pbuf t = {0};
    for (size_t i = 0; i < n; i++) pb_varint(&t, (uint64_t)v[i]);
    f_msg(b, field, &t);
}
static void f_packed_floats(pbuf *b, uint32_t field, const float *v, size_t n) {
    f_bytes(b, field, v, n * 4);
}
/* Unknown fields of every wire type (must be skipped). */
static void f_unknowns(pbuf *b) {
    f_varint(b, 1000, 12345);
    f_i64(b, 1001, 0x0123456789abcdefULL);
    f_i32(b, 1002, 0xdeadbeef);
    f_str(b, 1003, "ignored payload");
}

/* ---------------------------------------------------------------------------------------------- */
/* Message builders                                                                                */
/* ---------------------------------------------------------------------------------------------- */

static pbuf tensor_hdr(const char *name, int dtype, const int64_t *dims, int rank) {
    pbuf t = {0};
    for (int i = 0; i < rank; i++) f_varint(&t, 1, (uint64_t)dims[i]);
    f_varint(&t, 2, (uint64_t)(int64_t)dtype);
    if (name) f_str(&t, 8, name);
    return t;
}

static pbuf tensor_raw(const char *name, int dtype, const int64_t *dims, int rank, const void *data,
                       size_t n) {
    pbuf t = tensor_hdr(name, dtype, dims, rank);
    f_bytes(&t, 9, data, n);
    return t;
}

static pbuf ext_entry(const char *k, const char *v) {
    pbuf e = {0};
    f_str(&e, 1, k);
    f_str(&e, 2, v);
    return e;
}

static pbuf tensor_ext(const char *name, int dtype, const int64_t *dims, int rank,
                       const char *loc, const char *off, const char *len) {
    pbuf t = tensor_hdr(name, dtype, dims, rank);
    pbuf e;
    if (loc) { e = ext_entry("location", loc); f_msg(&t, 13, &e); }
    if (off) { e = ext_entry("offset", off); f_msg(&t, 13, &e); }
    if (len) { e = ext_entry("length", len); f_msg(&t, 13, &e); }
    e = ext_entry("checksum", "abc");
    f_msg(&t, 13, &e);
    f_varint(&t, 14, 1);
    return t;
}

/* A tensor ValueInfoProto; rank < 0: no shape. For dim i: params[i] != NULL -> dim_param, else
 * vals[i] >= 0 -> dim_value, else an empty Dimension. */
static pbuf value_info(const char *name, int elem, int rank, const char *const *params,
                       const int64_t *vals) {
    pbuf vi = {0}, type = {0}, tt = {0};
    f_str(&vi, 1, name);
    f_varint(&tt, 1, (uint64_t)elem);
    if (rank >= 0) {
        pbuf shape = {0};
        for (int i = 0; i < rank; i++) {
            pbuf dim = {0};
            if (params && params[i]) f_str(&dim, 2, params[i]);
            else if (vals && vals[i] != INT64_MIN) f_varint(&dim, 1, (uint64_t)vals[i]);
            f_msg(&shape, 1, &dim);
        }
        f_msg(&tt, 2, &shape);
    }
    f_msg(&type, 1, &tt);
    f_msg(&vi, 2, &type);
    return vi;
}

static pbuf node(const char *op, const char *name, const char *in, const char *out) {
    pbuf n = {0};
    if (in) f_str(&n, 1, in);
    if (out) f_str(&n, 2, out);
    if (name) f_str(&n, 3, name);
    if (op) f_str(&n, 4, op);
    return n;
}

static pbuf attr_hdr(const char *name, int type) {
    pbuf a = {0};
    f_str(&a, 1, name);
    if (type >= 0) f_varint(&a, 20, (uint64_t)type);
    return a;
}

/* Wraps a graph into a ModelProto with ir_version 8 and opset 13; frees g. */
static pbuf model_of(pbuf *g) {
    pbuf m = {0}, o = {0};
    f_varint(&m, 1, 8);
    f_varint(&o, 2, 13);
    f_msg(&m, 8, &o);
    f_msg(&m, 7, g);
    return m;
}

/* A minimal valid graph with one node and one initializer. */
static pbuf simple_graph(void) {
    pbuf g = {0}, n = node("Relu", "r", "x", "y"), t;
    float v[2] = {1, 2};
    int64_t dims[1] = {2};
    f_msg(&g, 1, &n);
    f_str(&g, 2, "g");
    t = tensor_raw("w", 1, dims, 1, v, sizeof v);
    f_msg(&g, 5, &t);
    return g;
}

/* ---------------------------------------------------------------------------------------------- */
/* Helpers                                                                                         */
/* ---------------------------------------------------------------------------------------------- */

/* Decodes from an exact-size heap copy (so any over-read hits ASan's redzone), walks every
 * decoded byte when it succeeds, and frees everything: only the status is returned. */
static void touch_model(const frt_onnx_model *m);
static frt_status decode_copy(const void *p, size_t n) {
    uint8_t *c = malloc(n ? n : 1);
    if (n) memcpy(c, p, n);
    frt_onnx_model *m = NULL;
    frt_status st = frt_onnx_decode(c, n, &m);
    if (st == FRT_OK) {
        touch_model(m);
        frt_onnx_model_free(m);
    }
    free(c);
    return st;
}

static frt_status decode_status(const pbuf *b) { return decode_copy(b->p, b->n); }

static volatile uint64_t g_sink;

static void touch_graph(const frt_onnx_graph *g);
static void touch_tensor(const frt_onnx_tensor *t) {
    uint64_t s = strlen(t->name);
    if (t->data)
        for (size_t i = 0; i < t->nbytes; i++) s += ((const uint8_t *)t->data)[i];
    for (int i = 0; i < t->rank; i++) s += (uint64_t)t->dims[i];
    if (t->ext_location) s += strlen(t->ext_location);
    g_sink += s;
}
static void touch_vi(const frt_onnx_value_info *v) {
    g_sink += strlen(v->name);
    if (v->has_shape)
        for (int i = 0; i < v->rank; i++) g_sink += v->dims[i].param ? strlen(v->dims[i].param) : 1;
}
static void touch_graph(const frt_onnx_graph *g) {
    g_sink += strlen(g->name);
    for (size_t i = 0; i < g->n_nodes; i++) {
        const frt_onnx_node *n = &g->nodes[i];
        g_sink += strlen(n->name) + strlen(n->op_type) + strlen(n->domain);
        for (size_t j = 0; j < n->n_inputs; j++) g_sink += strlen(n->inputs[j]);
        for (size_t j = 0; j < n->n_outputs; j++) g_sink += strlen(n->outputs[j]);
        for (size_t j = 0; j < n->n_attrs; j++) {
            const frt_onnx_attr *a = &n->attrs[j];
            g_sink += strlen(a->name);
            switch (a->type) {
            case FRT_ATTR_STRING: g_sink += a->s_len + (uint8_t)a->s[a->s_len]; break;
            case FRT_ATTR_TENSOR: touch_tensor(a->t); break;
            case FRT_ATTR_GRAPH: touch_graph(a->g); break;
            case FRT_ATTR_FLOATS: for (size_t k = 0; k < a->n; k++) g_sink += (uint64_t)a->floats[k]; break;
            case FRT_ATTR_INTS: for (size_t k = 0; k < a->n; k++) g_sink += (uint64_t)a->ints[k]; break;
            case FRT_ATTR_STRINGS: for (size_t k = 0; k < a->n; k++) g_sink += strlen(a->strings[k]); break;
            case FRT_ATTR_TENSORS: for (size_t k = 0; k < a->n; k++) touch_tensor(&a->tensors[k]); break;
            case FRT_ATTR_GRAPHS: for (size_t k = 0; k < a->n; k++) touch_graph(&a->graphs[k]); break;
            default: break;
            }
        }
    }
    for (size_t i = 0; i < g->n_initializers; i++) touch_tensor(&g->initializers[i]);
    for (size_t i = 0; i < g->n_inputs; i++) touch_vi(&g->inputs[i]);
    for (size_t i = 0; i < g->n_outputs; i++) touch_vi(&g->outputs[i]);
    for (size_t i = 0; i < g->n_value_info; i++) touch_vi(&g->value_info[i]);
}
static void touch_model(const frt_onnx_model *m) {
    g_sink += strlen(m->producer_name) + strlen(m->producer_version);
    for (size_t i = 0; i < m->n_opsets; i++) g_sink += strlen(m->opsets[i].domain);
    touch_graph(m->graph);
}

static const frt_onnx_tensor *find_init(const frt_onnx_graph *g, const char *name) {
    for (size_t i = 0; i < g->n_initializers; i++)
        if (strcmp(g->initializers[i].name, name) == 0) return &g->initializers[i];
    return NULL;
}
static const frt_onnx_attr *find_attr(const frt_onnx_node *n, const char *name) {
    for (size_t i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}
static const frt_onnx_value_info *find_vi(const frt_onnx_value_info *v, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0) return &v[i];
    return NULL;
}

/* Decodes b and checks the status and (for failures, when substr is not NULL) the message. */
static void check_status(int line, const pbuf *b, frt_status want, const char *substr) {
    frt_status st = decode_status(b);
    t_checks++;
    if (st != want || (st != FRT_OK && substr && !strstr(frt_last_error(), substr))) {
        t_failures++;
        fprintf(stderr, "%s:%d: got %s, want %s with '%s': %s\n", __FILE__, line,
                frt_status_string(st), frt_status_string(want), substr ? substr : "",
                st ? frt_last_error() : "");
    }
}
#define CHECK_STATUS(b, want, substr) check_status(__LINE__, (b), (want), (substr))

/* ---------------------------------------------------------------------------------------------- */
/* The full model                                                                                  */
/* ---------------------------------------------------------------------------------------------- */

static const float W_RAW[6] = {1.25f, -2.5f, 3.75f, 1e-3f, -7.0f, 123456.0f};

static pbuf build_full_model(void) {
    pbuf m = {0}, g = {0}, n, a, t, sub, o;
    f_varint(&m, 1, 8);
    f_str(&m, 2, "flatrt-test");
    f_str(&m, 3, "1.0");
    f_str(&m, 4, "org.test");
    f_varint(&m, 5, 3);
    f_str(&m, 6, "doc");
    f_unknowns(&m);
    o = (pbuf){0};
    f_varint(&o, 2, 13); /* domain absent */
    f_msg(&m, 8, &o);
    f_str(&o, 1, "ai.onnx.ml");
    f_varint(&o, 2, 3);
    f_msg(&m, 8, &o);

    /* node 0: Conv with attributes of every kind */
    n = (pbuf){0};
    f_str(&n, 1, "X");
    f_str(&n, 1, "");
    f_str(&n, 1, "W");
    f_str(&n, 2, "Y");
    f_str(&n, 3, "conv1");
    f_str(&n, 4, "Conv");
    f_str(&n, 7, "ai.onnx");
    f_str(&n, 6, "node doc");
    f_unknowns(&n);

    a = attr_hdr("alpha", 1);
    f_float(&a, 2, 0.5f);
    f_unknowns(&a);
    f_msg(&n, 5, &a);
    a = attr_hdr("axis", 2);
    f_varint(&a, 3, (uint64_t)(int64_t)-3);
    f_msg(&n, 5, &a);
    a = attr_hdr("mode", 3);
    f_bytes(&a, 4, "ab\0c", 4);
    f_msg(&n, 5, &a);
    a = attr_hdr("kernel_shape", 7);
    { int64_t v[3] = {3, 300, -1}; f_packed_varints(&a, 8, v, 3); }
    f_msg(&n, 5, &a);
    a = attr_hdr("pads", 7);
    for (int i = 1; i <= 4; i++) f_varint(&a, 8, (uint64_t)i);
    f_msg(&n, 5, &a);
    a = attr_hdr("strides", 7);
    f_varint(&a, 8, 5);
    { int64_t v[2] = {6, 7}; f_packed_varints(&a, 8, v, 2); }
    f_msg(&n, 5, &a);
    a = attr_hdr("scales", 6);
    { float v[2] = {1.5f, -2.25f}; f_packed_floats(&a, 7, v, 2); }
    f_msg(&n, 5, &a);
    a = attr_hdr("weights", 6);
    f_float(&a, 7, 0.25f);
    f_float(&a, 7, 4.0f);
    f_msg(&n, 5, &a);
    a = attr_hdr("names", 8);
    f_str(&a, 9, "x");
    f_str(&a, 9, "");
    f_str(&a, 9, "yz");
    f_msg(&n, 5, &a);
    a = attr_hdr("value", 4);
    t = tensor_hdr("cval", 7, NULL, 0);
    f_varint(&t, 7, (uint64_t)(int64_t)-7);
    f_msg(&a, 5, &t);
    f_msg(&n, 5, &a);
    a = attr_hdr("tl", 9);
    { int64_t d[1] = {2}; float v[2] = {9, 10}; t = tensor_raw("t0", 1, d, 1, v, 8); }
    f_msg(&a, 10, &t);
    { int64_t d[1] = {1}; t = tensor_hdr("t1", 6, d, 1); f_varint(&t, 5, 77); }
    f_msg(&a, 10, &t);
    f_msg(&n, 5, &a);
    /* GRAPH: a subgraph with an initializer given as unpacked float_data */
    a = attr_hdr("body", 5);
    sub = (pbuf){0};
    f_str(&sub, 2, "sub");
    { pbuf sn = node("Add", "add", "a", "b"); f_msg(&sub, 1, &sn); }
    { int64_t d[1] = {2}; t = tensor_hdr("sw", 1, d, 1); f_float(&t, 4, 0.5f); f_float(&t, 4, 1.5f); }
    f_msg(&sub, 5, &t);
    { int64_t v[1] = {2}; pbuf vi = value_info("a", 1, 1, NULL, v); f_msg(&sub, 11, &vi); }
    { pbuf vi = value_info("b", 1, -1, NULL, NULL); f_msg(&sub, 12, &vi); }
    f_msg(&a, 6, &sub);
    f_msg(&n, 5, &a);
    /* GRAPHS: two branches, the second holding a nested GRAPH attribute */
    a = attr_hdr("branches", 10);
    sub = (pbuf){0};
    f_str(&sub, 2, "b0");
    f_msg(&a, 11, &sub);
    sub = (pbuf){0};
    f_str(&sub, 2, "b1");
    {
        pbuf inner = {0}, nn = node("If", "if", "c", "z"), at = attr_hdr("then_branch", 5);
        f_str(&inner, 2, "deep");
        pbuf leaf = node("Identity", NULL, "c", "z");
        f_msg(&inner, 1, &leaf);
        f_msg(&at, 6, &inner);
        f_msg(&nn, 5, &at);
        f_msg(&sub, 1, &nn);
    }
    f_msg(&a, 11, &sub);
    f_msg(&n, 5, &a);
    a = attr_hdr("legacy_i", -1); /* no type: inferred */
    f_varint(&a, 3, 42);
    f_msg(&n, 5, &a);
    a = attr_hdr("legacy_floats", -1);
    { float v[1] = {8}; f_packed_floats(&a, 7, v, 1); }
    f_msg(&n, 5, &a);
    a = attr_hdr("empty_ints", 7);
    f_msg(&n, 5, &a);
    f_msg(&g, 1, &n);

    n = node("Relu", NULL, "Y", "Z");
    f_str(&n, 7, "com.microsoft");
    f_msg(&g, 1, &n);
    f_str(&g, 2, "main");
    f_str(&g, 10, "graph doc");
    f_unknowns(&g);

    /* initializers */
    { int64_t d[2] = {2, 3}; t = tensor_raw("w_raw", 1, d, 2, W_RAW, sizeof W_RAW); }
    f_unknowns(&t);
    f_msg(&g, 5, &t);
    { int64_t d[1] = {3}; float v[3] = {0.5f, 1.5f, -3}; t = tensor_hdr("w_fpacked", 1, d, 1); f_packed_floats(&t, 4, v, 3); }
    f_msg(&g, 5, &t);
    { int64_t d[1] = {2}; t = tensor_hdr("w_funpacked", 1, d, 1); f_float(&t, 4, -1); f_float(&t, 4, 2); }
    f_msg(&g, 5, &t);
    { int64_t d[1] = {4}, v[4] = {-1, 2, -128, 127}; t = tensor_hdr("i8", 3, d, 1); f_packed_varints(&t, 5, v, 4); }
    f_msg(&g, 5, &t);
    { int64_t d[1] = {2}, v[2] = {65535, 7}; t = tensor_hdr("u16", 4, d, 1); f_packed_varints(&t, 5, v, 2); }
    f_msg(&g, 5, &t);
    { int64_t d[1] = {3}, v[3] = {1, 0, 1}; t = tensor_hdr("b", 9, d, 1); f_packed_varints(&t, 5, v, 3); }
    f_msg(&g, 5, &t);
    { int64_t d[1] = {2}, v[2] = {0x3c00, 0xc000}; t = tensor_hdr("h", 10, d, 1); f_packed_varints(&t, 5, v, 2); }
    f_msg(&g, 5, &t);
    { int64_t d[1] = {2}; t = tensor_hdr("i32", 6, d, 1); f_varint(&t, 5, (uint64_t)(int64_t)-5); f_varint(&t, 5, 5); }
    f_msg(&g, 5, &t);
    { int64_t d[1] = {3}, v[3] = {-1, (int64_t)1 << 40, 0}; t = tensor_hdr("i64", 7, d, 1); f_packed_varints(&t, 7, v, 3); }
    f_msg(&g, 5, &t);
    { int64_t d[1] = {2}; double v[2] = {1.5, -2}; t = tensor_hdr("d", 11, d, 1); f_bytes(&t, 10, v, 16); }
    f_msg(&g, 5, &t);
    { int64_t d[1] = {1}; t = tensor_hdr("d2", 11, d, 1); f_double(&t, 10, 0.125); }
    f_msg(&g, 5, &t);
    { int64_t d[1] = {2}, v[2] = {4000000000LL, 1}; t = tensor_hdr("u32", 12, d, 1); f_packed_varints(&t, 11, v, 2); }
    f_msg(&g, 5, &t);
    { int64_t d[1] = {1}; t = tensor_hdr("u64", 13, d, 1); f_varint(&t, 11, UINT64_MAX); }
    f_msg(&g, 5, &t);
    { int64_t v = -99; t = tensor_raw("scalar", 7, NULL, 0, &v, 8); }
    f_msg(&g, 5, &t);
    { int64_t d[2] = {0, 5}; t = tensor_hdr("empty", 1, d, 2); }
    f_msg(&g, 5, &t);
    { int64_t d[1] = {4}; t = tensor_ext("ext", 1, d, 1, "w.bin", "16", "16"); }
    f_msg(&g, 5, &t);
    { int64_t d[1] = {2}; t = tensor_ext("ext2", 7, d, 1, "sub/w.bin", NULL, NULL); }
    f_msg(&g, 5, &t);
    { int64_t d[1] = {3}; uint8_t v[3] = {7, 8, 9}; t = tensor_raw("u8raw", 2, d, 1, v, 3); }
    f_msg(&g, 5, &t);
    { int64_t d[2] = {1, 2}; float v[2] = {5, 6}; t = (pbuf){0}; f_packed_varints(&t, 1, d, 2);
      f_varint(&t, 2, 1); f_str(&t, 8, "dimspacked"); f_bytes(&t, 9, v, 8); }
    f_msg(&g, 5, &t);

    /* inputs / outputs / value_info */
    {
        const char *params[4] = {"N", NULL, NULL, NULL};
        int64_t vals[4] = {0, 3, INT64_MIN, 5};
        pbuf vi = value_info("X", 1, 4, params, vals);
        f_msg(&g, 11, &vi);
        /* dim 3 of X: dim_value 5 then dim_param "P" appended to the same Dimension? Tested
         * separately below (oneof ordering). */
    }
    { pbuf vi = value_info("W", 1, -1, NULL, NULL); f_msg(&g, 11, &vi); }
    {
        pbuf vi = {0}, type = {0}, seq = {0};
        f_str(&vi, 1, "S");
        f_msg(&type, 4, &seq);
        f_msg(&vi, 2, &type);
        f_msg(&g, 11, &vi);
    }
    { pbuf vi = {0}; f_str(&vi, 1, "U"); f_msg(&g, 11, &vi); }
    { pbuf vi = value_info("Z", 1, 0, NULL, NULL); f_msg(&g, 12, &vi); }
    {
        int64_t v[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
        pbuf vi = value_info("Y", 1, 9, NULL, v);
        f_msg(&g, 13, &vi);
    }
    {
        /* dim_value -1 (unknown) and a Dimension with dim_value then dim_param (oneof: last wins) */
        pbuf vi = {0}, type = {0}, tt = {0}, shape = {0}, dim = {0};
        f_str(&vi, 1, "V");
        f_varint(&tt, 1, 7);
        f_varint(&dim, 1, (uint64_t)(int64_t)-1);
        f_msg(&shape, 1, &dim);
        f_varint(&dim, 1, 5);
        f_str(&dim, 2, "P");
        f_str(&dim, 3, "denotation");
        f_msg(&shape, 1, &dim);
        f_str(&dim, 2, "Q");
        f_varint(&dim, 1, 6);
        f_msg(&shape, 1, &dim);
        f_msg(&tt, 2, &shape);
        f_msg(&type, 1, &tt);
        f_str(&type, 6, "denot");
        f_msg(&vi, 2, &type);
        f_str(&vi, 3, "doc");
        f_msg(&g, 13, &vi);
    }
    f_msg(&m, 7, &g);
    /* fields after the graph */
    o = (pbuf){0};
    f_str(&o, 1, "ai.onnx");
    f_varint(&o, 2, 14);
    f_msg(&m, 8, &o);
    {
        pbuf md = ext_entry("key", "value");
        f_msg(&m, 14, &md);
    }
    return m;
}

static void check_full_model(const frt_onnx_model *m) {
    CHECK(m->ir_version == 8);
    CHECK(strcmp(m->producer_name, "flatrt-test") == 0);
    CHECK(strcmp(m->producer_version, "1.0") == 0);
    CHECK(m->n_opsets == 3);
    if (m->n_opsets == 3) {
        CHECK(strcmp(m->opsets[0].domain, "") == 0 && m->opsets[0].version == 13);
        CHECK(strcmp(m->opsets[1].domain, "ai.onnx.ml") == 0 && m->opsets[1].version == 3);
        CHECK(strcmp(m->opsets[2].domain, "") == 0 && m->opsets[2].version == 14);
    }
    CHECK(frt_onnx_default_opset(m) == 13);
    const frt_onnx_graph *g = m->graph;
    CHECK(g && strcmp(g->name, "main") == 0);
    if (!g) return;
    CHECK(g->n_nodes == 2);
    CHECK(g->n_initializers == 19);
    CHECK(g->n_inputs == 4 && g->n_outputs == 1 && g->n_value_info == 2);
    if (g->n_nodes != 2) return;

    const frt_onnx_node *n = &g->nodes[0];
    CHECK(strcmp(n->name, "conv1") == 0 && strcmp(n->op_type, "Conv") == 0);
    CHECK(strcmp(n->domain, "") == 0);
    CHECK(n->n_inputs == 3 && n->n_outputs == 1);
    if (n->n_inputs == 3) {
        CHECK(strcmp(n->inputs[0], "X") == 0 && strcmp(n->inputs[1], "") == 0 &&
              strcmp(n->inputs[2], "W") == 0);
    }
    CHECK(n->n_outputs == 1 && strcmp(n->outputs[0], "Y") == 0);
    CHECK(n->n_attrs == 16);
    const frt_onnx_attr *a;
    a = find_attr(n, "alpha");
    CHECK(a && a->type == FRT_ATTR_FLOAT && a->f == 0.5f);
    a = find_attr(n, "axis");
    CHECK(a && a->type == FRT_ATTR_INT && a->i == -3);
    a = find_attr(n, "mode");
    CHECK(a && a->type == FRT_ATTR_STRING && a->s_len == 4 && memcmp(a->s, "ab\0c", 5) == 0);
    a = find_attr(n, "kernel_shape");
    CHECK(a && a->type == FRT_ATTR_INTS && a->n == 3);
    if (a && a->n == 3) CHECK(a->ints[0] == 3 && a->ints[1] == 300 && a->ints[2] == -1);
    a = find_attr(n, "pads");
    CHECK(a && a->type == FRT_ATTR_INTS && a->n == 4);
    if (a && a->n == 4) CHECK(a->ints[0] == 1 && a->ints[1] == 2 && a->ints[2] == 3 && a->ints[3] == 4);
    a = find_attr(n, "strides");
    CHECK(a && a->n == 3);
    if (a && a->n == 3) CHECK(a->ints[0] == 5 && a->ints[1] == 6 && a->ints[2] == 7);
    a = find_attr(n, "scales");
    CHECK(a && a->type == FRT_ATTR_FLOATS && a->n == 2);
    if (a && a->n == 2) CHECK(a->floats[0] == 1.5f && a->floats[1] == -2.25f);
    a = find_attr(n, "weights");
    CHECK(a && a->type == FRT_ATTR_FLOATS && a->n == 2);
    if (a && a->n == 2) CHECK(a->floats[0] == 0.25f && a->floats[1] == 4.0f);
    a = find_attr(n, "names");
    CHECK(a && a->type == FRT_ATTR_STRINGS && a->n == 3);
    if (a && a->n == 3)
        CHECK(strcmp(a->strings[0], "x") == 0 && strcmp(a->strings[1], "") == 0 &&
              strcmp(a->strings[2], "yz") == 0);
    a = find_attr(n, "value");
    CHECK(a && a->type == FRT_ATTR_TENSOR && a->t);
    if (a && a->t) {
        CHECK(strcmp(a->t->name, "cval") == 0 && a->t->dtype == FRT_INT64 && a->t->rank == 0);
        CHECK(a->t->numel == 1 && a->t->nbytes == 8 && !a->t->in_place);
        CHECK(a->t->data && *(const int64_t *)a->t->data == -7);
    }
    a = find_attr(n, "tl");
    CHECK(a && a->type == FRT_ATTR_TENSORS && a->n == 2);
    if (a && a->n == 2) {
        CHECK(strcmp(a->tensors[0].name, "t0") == 0 && a->tensors[0].numel == 2);
        CHECK(a->tensors[0].data && ((const float *)a->tensors[0].data)[1] == 10.0f);
        CHECK(a->tensors[1].dtype == FRT_INT32 && a->tensors[1].data &&
              *(const int32_t *)a->tensors[1].data == 77);
    }
    a = find_attr(n, "body");
    CHECK(a && a->type == FRT_ATTR_GRAPH && a->g);
    if (a && a->g) {
        const frt_onnx_graph *s = a->g;
        CHECK(strcmp(s->name, "sub") == 0 && s->n_nodes == 1 && s->n_initializers == 1);
        CHECK(s->n_nodes == 1 && strcmp(s->nodes[0].op_type, "Add") == 0);
        if (s->n_initializers == 1) {
            const float *v = s->initializers[0].data;
            CHECK(v && v[0] == 0.5f && v[1] == 1.5f && !s->initializers[0].in_place);
        }
        CHECK(s->n_inputs == 1 && s->inputs[0].has_shape && s->inputs[0].rank == 1 &&
              s->inputs[0].dims[0].value == 2);
        CHECK(s->n_outputs == 1 && s->outputs[0].has_type && !s->outputs[0].has_shape);
    }
    a = find_attr(n, "branches");
    CHECK(a && a->type == FRT_ATTR_GRAPHS && a->n == 2);
    if (a && a->n == 2) {
        CHECK(strcmp(a->graphs[0].name, "b0") == 0 && a->graphs[0].n_nodes == 0);
        CHECK(strcmp(a->graphs[1].name, "b1") == 0 && a->graphs[1].n_nodes == 1);
        if (a->graphs[1].n_nodes == 1) {
            const frt_onnx_attr *tb = find_attr(&a->graphs[1].nodes[0], "then_branch");
            CHECK(tb && tb->type == FRT_ATTR_GRAPH && tb->g && strcmp(tb->g->name, "deep") == 0);
            if (tb && tb->g) CHECK(tb->g->n_nodes == 1 && strcmp(tb->g->nodes[0].op_type, "Identity") == 0);
        }
    }
    a = find_attr(n, "legacy_i");
    CHECK(a && a->type == FRT_ATTR_INT && a->i == 42);
    a = find_attr(n, "legacy_floats");
    CHECK(a && a->type == FRT_ATTR_FLOATS && a->n == 1 && a->floats[0] == 8.0f);
    a = find_attr(n, "empty_ints");
    CHECK(a && a->type == FRT_ATTR_INTS && a->n == 0);

    n = &g->nodes[1];
    CHECK(strcmp(n->name, "") == 0 && strcmp(n->op_type, "Relu") == 0 &&
          strcmp(n->domain, "com.microsoft") == 0 && n->n_attrs == 0);

    const frt_onnx_tensor *t;
    t = find_init(g, "w_raw");
    CHECK(t && t->dtype == FRT_FLOAT32 && t->rank == 2 && t->dims[0] == 2 && t->dims[1] == 3);
    if (t) CHECK(t->numel == 6 && t->nbytes == 24 && t->data && memcmp(t->data, W_RAW, 24) == 0);
    if (t) CHECK(((uintptr_t)t->data % 4) == 0 || t->misaligned);
    t = find_init(g, "w_fpacked");
    CHECK(t && t->data && ((const float *)t->data)[2] == -3.0f && !t->in_place);
    t = find_init(g, "w_funpacked");
    CHECK(t && t->data && ((const float *)t->data)[0] == -1.0f && ((const float *)t->data)[1] == 2.0f);
    t = find_init(g, "i8");
    CHECK(t && t->data);
    if (t && t->data) {
        const int8_t *v = t->data;
        CHECK(t->nbytes == 4 && v[0] == -1 && v[1] == 2 && v[2] == -128 && v[3] == 127);
    }
    t = find_init(g, "u16");
    CHECK(t && t->data);
    if (t && t->data) {
        const uint16_t *v = t->data;
        CHECK(t->nbytes == 4 && v[0] == 65535 && v[1] == 7);
    }
    t = find_init(g, "b");
    CHECK(t && t->data);
    if (t && t->data) {
        const uint8_t *v = t->data;
        CHECK(t->nbytes == 3 && v[0] == 1 && v[1] == 0 && v[2] == 1);
    }
    t = find_init(g, "h");
    CHECK(t && t->data);
    if (t && t->data) {
        const uint16_t *v = t->data;
        CHECK(t->dtype == FRT_FLOAT16 && v[0] == 0x3c00 && v[1] == 0xc000);
    }
    t = find_init(g, "i32");
    CHECK(t && t->data);
    if (t && t->data) {
        const int32_t *v = t->data;
        CHECK(v[0] == -5 && v[1] == 5);
    }
    t = find_init(g, "i64");
    CHECK(t && t->data);
    if (t && t->data) {
        const int64_t *v = t->data;
        CHECK(v[0] == -1 && v[1] == (int64_t)1 << 40 && v[2] == 0);
    }
    t = find_init(g, "d");
    CHECK(t && t->data);
    if (t && t->data) {
        const double *v = t->data;
        CHECK(v[0] == 1.5 && v[1] == -2.0);
    }
    t = find_init(g, "d2");
    CHECK(t && t->data && *(const double *)t->data == 0.125);
    t = find_init(g, "u32");
    CHECK(t && t->data);
    if (t && t->data) {
        const uint32_t *v = t->data;
        CHECK(v[0] == 4000000000u && v[1] == 1);
    }
    t = find_init(g, "u64");
    uint64_t u64 = 0;
    if (t && t->data) memcpy(&u64, t->data, sizeof u64);
    CHECK(t && t->data && u64 == UINT64_MAX);
    t = find_init(g, "scalar");
    int64_t scalar = 0;
    if (t && t->data) memcpy(&scalar, t->data, sizeof scalar); /* may be misaligned (onnx.h) */
    CHECK(t && t->rank == 0 && t->numel == 1 && t->data && scalar == -99);
    t = find_init(g, "empty");
    CHECK(t && t->rank == 2 && t->numel == 0 && t->nbytes == 0 && t->data == NULL);
    t = find_init(g, "ext");
    CHECK(t && t->external && t->data == NULL && t->nbytes == 16);
    if (t) CHECK(t->ext_location && strcmp(t->ext_location, "w.bin") == 0 && t->ext_offset == 16 &&
                 t->ext_length == 16);
    t = find_init(g, "ext2");
    CHECK(t && t->external && t->ext_offset == 0 && t->ext_length == -1 && t->nbytes == 16);
    if (t) CHECK(t->ext_location && strcmp(t->ext_location, "sub/w.bin") == 0);
    t = find_init(g, "u8raw");
    CHECK(t && t->in_place && t->data && ((const uint8_t *)t->data)[2] == 9);
    t = find_init(g, "dimspacked");
    float dp[2] = {0, 0};
    if (t && t->data && t->nbytes == sizeof dp) memcpy(dp, t->data, sizeof dp); /* may be misaligned */
    CHECK(t && t->rank == 2 && t->dims[0] == 1 && t->dims[1] == 2 && t->data && dp[1] == 6.0f);

    const frt_onnx_value_info *v;
    v = find_vi(g->inputs, g->n_inputs, "X");
    CHECK(v && v->has_type && v->elem_type == 1 && v->has_shape && v->rank == 4);
    if (v && v->rank == 4) {
        CHECK(v->dims[0].value == -1 && v->dims[0].param && strcmp(v->dims[0].param, "N") == 0);
        CHECK(v->dims[1].value == 3 && v->dims[1].param == NULL);
        CHECK(v->dims[2].value == -1 && v->dims[2].param == NULL);
        CHECK(v->dims[3].value == 5);
    }
    v = find_vi(g->inputs, g->n_inputs, "W");
    CHECK(v && v->has_type && !v->has_shape && v->rank == -1);
    v = find_vi(g->inputs, g->n_inputs, "S");
    CHECK(v && !v->has_type && !v->has_shape);
    v = find_vi(g->inputs, g->n_inputs, "U");
    CHECK(v && !v->has_type);
    CHECK(g->n_outputs == 1 && strcmp(g->outputs[0].name, "Z") == 0 && g->outputs[0].has_shape &&
          g->outputs[0].rank == 0);
    v = find_vi(g->value_info, g->n_value_info, "Y");
    CHECK(v && v->has_type && !v->has_shape); /* rank 9 hint dropped */
    v = find_vi(g->value_info, g->n_value_info, "V");
    CHECK(v && v->elem_type == 7 && v->has_shape && v->rank == 3);
    if (v && v->rank == 3) {
        CHECK(v->dims[0].value == -1 && v->dims[0].param == NULL);
        CHECK(v->dims[1].value == -1 && v->dims[1].param && strcmp(v->dims[1].param, "P") == 0);
        CHECK(v->dims[2].value == 6 && v->dims[2].param == NULL);
    }
}

static void test_full_model(void) {
    pbuf b = build_full_model();
    /* Locate w_raw's payload to predict whether it is used in place at each buffer shift. */
    const uint8_t *pos = memmem(b.p, b.n, W_RAW, sizeof W_RAW);
    CHECK(pos != NULL);
    size_t raw_off = pos ? (size_t)(pos - b.p) : 0;
    uint8_t *buf = aligned_alloc(64, (b.n + 64 + 63) & ~(size_t)63);
    int in_place_seen = 0, copied_seen = 0;
    for (size_t shift = 0; shift < 8; shift++) {
        memcpy(buf + shift, b.p, b.n);
        frt_onnx_model *m = NULL;
        frt_status st = frt_onnx_decode(buf + shift, b.n, &m);
        CHECK_MSG(st == FRT_OK, "shift %zu: %s", shift, frt_last_error());
        if (st != FRT_OK) continue;
        check_full_model(m);
        touch_model(m);
        const frt_onnx_tensor *t = find_init(m->graph, "w_raw");
        const uint8_t *src = buf + shift + raw_off;
        bool aligned = (uintptr_t)src % 4 == 0;
        /* initializers stay in place either way; misaligned ones are flagged for the graph
           builder to copy (see onnx.h) */
        CHECK(t && t->in_place && t->misaligned == !aligned);
        if (t) CHECK(t->data == src);
        in_place_seen += aligned;
        copied_seen += !aligned;
        frt_onnx_model_free(m);
    }
    CHECK(in_place_seen == 2 && copied_seen == 6);
    free(buf);
    free(b.p);
}

/* ---------------------------------------------------------------------------------------------- */
/* Corruption sweeps                                                                               */
/* ---------------------------------------------------------------------------------------------- */

static void test_truncation(void) {
    pbuf b = build_full_model();
    size_t ok = 0, failed = 0;
    for (size_t len = 0; len < b.n; len++) {
        uint8_t *c = malloc(len ? len : 1);
        memcpy(c, b.p, len);
        frt_onnx_model *m = NULL;
        frt_status st = frt_onnx_decode(c, len, &m);
        if (st == FRT_OK) {
            ok++;
            CHECK(m != NULL);
            touch_model(m);
            frt_onnx_model_free(m);
        } else {
            failed++;
            CHECK(m == NULL);
            CHECK_MSG(st == FRT_ERR_MALFORMED, "len %zu: %s", len, frt_last_error());
            CHECK(strstr(frt_last_error(), "malformed ONNX: ") == frt_last_error());
            CHECK(strstr(frt_last_error(), " at byte ") != NULL);
        }
        free(c);
    }
    /* Only prefixes ending after the graph (the trailing opset and metadata fields) are valid. */
    CHECK(ok >= 1 && ok <= 3);
    CHECK(failed == b.n - ok);
    printf("truncation: %zu prefixes, %zu accepted\n", b.n, ok);
    free(b.p);
}

static void test_byte_flips(void) {
    pbuf b = build_full_model();
    static const uint8_t masks[] = {0xff, 0x01, 0x80, 0x7f, 0x40};
    size_t counts[9] = {0};
    for (size_t mi = 0; mi < sizeof masks; mi++) {
        for (size_t i = 0; i < b.n; i++) {
            uint8_t *c = malloc(b.n);
            memcpy(c, b.p, b.n);
            c[i] ^= masks[mi];
            frt_onnx_model *m = NULL;
            frt_status st = frt_onnx_decode(c, b.n, &m);
            if (st == FRT_OK) {
                touch_model(m);
                frt_onnx_model_free(m);
            } else {
                CHECK(m == NULL);
                CHECK_MSG(st == FRT_ERR_MALFORMED || st == FRT_ERR_UNSUPPORTED,
                          "flip %zu^%02x: %s", i, masks[mi], frt_last_error());
                CHECK(strlen(frt_last_error()) > 20);
                CHECK(strstr(frt_last_error(), " ONNX: ") != NULL);
            }
            counts[st < 9 ? st : 8]++;
            free(c);
        }
    }
    printf("byte flips: ok %zu, malformed %zu, unsupported %zu\n", counts[0],
           counts[FRT_ERR_MALFORMED], counts[FRT_ERR_UNSUPPORTED]);
    CHECK(counts[FRT_ERR_MALFORMED] > 0);
    free(b.p);
}

/* ---------------------------------------------------------------------------------------------- */
/* Targeted malformed inputs                                                                       */
/* ---------------------------------------------------------------------------------------------- */

/* A model whose graph holds one initializer built from t (freed). */
static pbuf model_with_init(pbuf *t) {
    pbuf g = {0};
    f_msg(&g, 5, t);
    return model_of(&g);
}
static pbuf model_with_attr(pbuf *a) {
    pbuf g = {0}, n = node("Foo", "n0", "x", "y");
    f_msg(&n, 5, a);
    f_msg(&g, 1, &n);
    return model_of(&g);
}

static void test_tensor_errors(void) {
    pbuf t, m;
    float four[1] = {1};
    /* huge dims with a tiny payload: no huge allocation, a size mismatch */
    { int64_t d[2] = {(int64_t)1 << 62, 1}; t = tensor_raw("big", 1, d, 2, four, 4); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "(big): tensor byte size overflows");
    free(m.p);
    { int64_t d[1] = {(int64_t)1 << 62}; t = tensor_hdr("big", 3, d, 1); f_varint(&t, 5, 1); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "int32_data has 1 elements, expected 4611686018427387904");
    free(m.p);
    { int64_t d[2] = {(int64_t)1 << 40, 3}; t = tensor_raw("big", 1, d, 2, four, 4); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "raw_data has 4 bytes, expected 13194139533312");
    free(m.p);
    { int64_t d[1] = {(int64_t)1 << 40}; t = tensor_hdr("big", 1, d, 1); f_float(&t, 4, 1); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "float_data has 1 elements, expected 1099511627776");
    free(m.p);
    { int64_t d[1] = {(int64_t)1 << 40}; t = tensor_hdr("big", 1, d, 1); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "has no data");
    free(m.p);
    { int64_t d[2] = {(int64_t)1 << 32, (int64_t)1 << 32}; t = tensor_raw("ovf", 1, d, 2, four, 4); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "overflows");
    free(m.p);
    { int64_t d[3] = {(int64_t)1 << 40, (int64_t)1 << 40, 0}; t = tensor_hdr("zero", 1, d, 3); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_OK, NULL); /* a zero dim: no overflow, numel 0 */
    free(m.p);
    { int64_t d[2] = {2, -1}; t = tensor_raw("neg", 1, d, 2, four, 4); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "negative dimension");
    free(m.p);
    { int64_t d[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}; t = tensor_raw("r9", 1, d, 9, four, 4); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_UNSUPPORTED, "rank 9 exceeds");
    free(m.p);
    { int64_t d[8] = {1, 1, 1, 1, 1, 1, 1, 1}; t = tensor_raw("r8", 1, d, 8, four, 4); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_OK, NULL);
    free(m.p);
    /* data types */
    static const struct { int dt; frt_status want; const char *msg; } dts[] = {
        {0, FRT_ERR_MALFORMED, "unknown tensor data type 0"},
        {99, FRT_ERR_MALFORMED, "unknown tensor data type 99"},
        {-1, FRT_ERR_MALFORMED, "unknown tensor data type -1"},
        {8, FRT_ERR_UNSUPPORTED, "string"},
        {17, FRT_ERR_UNSUPPORTED, "float8e4m3fn"},
        {14, FRT_ERR_UNSUPPORTED, "complex64"}};
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
        int64_t d[1] = {1};
        t = tensor_raw("dt", dts[i].dt, d, 1, four, 4);
        m = model_with_init(&t);
        CHECK_STATUS(&m, dts[i].want, dts[i].msg);
        free(m.p);
    }
    { t = (pbuf){0}; f_str(&t, 8, "nodt"); f_bytes(&t, 9, four, 4); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "no data_type");
    free(m.p);
    { t = (pbuf){0}; f_varint(&t, 2, (uint64_t)1 << 40); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "does not fit int32");
    free(m.p);
    /* payload size and typed-field mismatches */
    { int64_t d[1] = {2}; t = tensor_raw("short", 1, d, 1, four, 4); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "raw_data has 4 bytes, expected 8");
    free(m.p);
    { int64_t d[1] = {2}; t = tensor_hdr("cnt", 7, d, 1); f_varint(&t, 7, 1); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "int64_data has 1 elements, expected 2");
    free(m.p);
    { int64_t d[1] = {1}; t = tensor_raw("both", 1, d, 1, four, 4); f_float(&t, 4, 1); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "both raw_data and float_data");
    free(m.p);
    { int64_t d[1] = {1}; t = tensor_hdr("wrongfield", 7, d, 1); f_float(&t, 4, 1); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "float_data given for a int64 tensor");
    free(m.p);
    { int64_t d[1] = {1}; t = tensor_hdr("two", 1, d, 1); f_float(&t, 4, 1); f_varint(&t, 5, 1); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "several typed");
    free(m.p);
    { int64_t d[1] = {1}; t = tensor_hdr("str", 1, d, 1); f_str(&t, 6, "s"); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_UNSUPPORTED, "string_data");
    free(m.p);
    { int64_t d[1] = {1}; t = tensor_raw("seg", 1, d, 1, four, 4); pbuf sg = {0}; f_varint(&sg, 1, 0); f_msg(&t, 3, &sg); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_UNSUPPORTED, "segmented");
    free(m.p);
    { int64_t d[1] = {3}; t = tensor_hdr("pk", 1, d, 1); f_bytes(&t, 4, "\0\0\0\0\0\0\0\0\0\0", 10); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "not a multiple of 4");
    free(m.p);
    { int64_t d[1] = {2}; t = tensor_hdr("pkv", 7, d, 1); f_bytes(&t, 7, "\x01\x81", 2); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "truncated varint in packed array");
    free(m.p);
    /* external data fields */
    { int64_t d[1] = {1}; t = tensor_ext("noloc", 1, d, 1, NULL, "0", "4"); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "no location");
    free(m.p);
    { int64_t d[1] = {1}; t = tensor_ext("extraw", 1, d, 1, "w.bin", NULL, NULL); f_bytes(&t, 9, four, 4); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "also has inline data");
    free(m.p);
    { int64_t d[1] = {1}; t = tensor_ext("badoff", 1, d, 1, "w.bin", "12a", NULL); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "offset '12a' is not a decimal");
    free(m.p);
    { int64_t d[1] = {1}; t = tensor_ext("negoff", 1, d, 1, "w.bin", "-4", NULL); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "not a decimal");
    free(m.p);
    { int64_t d[1] = {1}; t = tensor_ext("bigoff", 1, d, 1, "w.bin", "99999999999999999999", NULL); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "not a decimal");
    free(m.p);
    { int64_t d[1] = {2}; t = tensor_ext("badlen", 1, d, 1, "w.bin", "0", "4"); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "length 4 does not match the tensor size 8");
    free(m.p);
    { int64_t d[1] = {1}; t = tensor_raw("loc2", 1, d, 1, four, 4); f_varint(&t, 14, 2); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "data_location 2");
    free(m.p);
    /* error path names the initializer */
    { int64_t d[1] = {2}; t = tensor_raw("named_w", 1, d, 1, four, 4); }
    m = model_with_init(&t);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "graph.initializer[0] (named_w): ");
    free(m.p);
}

static void test_structure_errors(void) {
    pbuf m, g, n, a;
    frt_onnx_model *mm = (frt_onnx_model *)1;
    CHECK(frt_onnx_decode(NULL, 0, &mm) == FRT_ERR_MALFORMED && mm == NULL);
    CHECK(strstr(frt_last_error(), "model has no graph") != NULL);
    CHECK(frt_onnx_decode(NULL, 5, &mm) == FRT_ERR_INVALID_ARGUMENT);
    CHECK(frt_onnx_decode("", 0, NULL) == FRT_ERR_INVALID_ARGUMENT);
    frt_onnx_model_free(NULL);
    CHECK(frt_onnx_default_opset(NULL) == 0);

    /* minimal valid model */
    g = simple_graph();
    m = model_of(&g);
    CHECK_STATUS(&m, FRT_OK, NULL);
    /* the same followed by a second graph field: duplicate */
    {
        pbuf m2 = {0};
        pb_raw(&m2, m.p, m.n);
        g = simple_graph();
        f_msg(&m2, 7, &g);
        CHECK_STATUS(&m2, FRT_ERR_MALFORMED, "graph given 2 times");
        free(m2.p);
    }
    free(m.p);

    /* wrong wire types for known fields */
    m = (pbuf){0};
    f_varint(&m, 7, 5);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "ModelProto.graph (field 7) has wire type varint, expected length-delimited");
    free(m.p);
    m = (pbuf){0};
    f_str(&m, 1, "8");
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "ModelProto.ir_version (field 1) has wire type length-delimited");
    free(m.p);
    g = (pbuf){0};
    n = (pbuf){0};
    f_varint(&n, 3, 1);
    f_msg(&g, 1, &n);
    m = model_of(&g);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "graph.node[0]: NodeProto.name (field 3) has wire type varint");
    free(m.p);
    a = attr_hdr("f", 1);
    f_varint(&a, 2, 1);
    m = model_with_attr(&a);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "AttributeProto.f (field 2) has wire type varint, expected fixed32");
    free(m.p);
    a = attr_hdr("ints", 7);
    f_i32(&a, 8, 1);
    m = model_with_attr(&a);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "AttributeProto.ints (field 8) has wire type fixed32");
    free(m.p);
    {
        pbuf t = tensor_hdr("w", 1, NULL, 0);
        f_i32(&t, 1, 3);
        m = model_with_init(&t);
        CHECK_STATUS(&m, FRT_ERR_MALFORMED, "TensorProto.dims (field 1) has wire type fixed32");
        free(m.p);
    }
    {
        pbuf t = tensor_hdr("w", 11, NULL, 0);
        f_i32(&t, 10, 3);
        m = model_with_init(&t);
        CHECK_STATUS(&m, FRT_ERR_MALFORMED, "TensorProto.double_data (field 10) has wire type fixed32");
        free(m.p);
    }
    {
        pbuf vi = {0};
        f_str(&vi, 1, "x");
        f_i64(&vi, 2, 0);
        g = (pbuf){0};
        f_msg(&g, 11, &vi);
        m = model_of(&g);
        CHECK_STATUS(&m, FRT_ERR_MALFORMED, "graph.input[0] (x): ValueInfoProto.type (field 2) has wire type fixed64");
        free(m.p);
    }

    /* varints */
    m = (pbuf){0};
    pb_tag(&m, 1, 0);
    for (int i = 0; i < 10; i++) pb_byte(&m, 0x80);
    pb_byte(&m, 0x00); /* 11 bytes */
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "varint longer than 10 bytes");
    free(m.p);
    m = (pbuf){0};
    pb_tag(&m, 1, 0);
    for (int i = 0; i < 9; i++) pb_byte(&m, 0xff);
    pb_byte(&m, 0x02); /* bit 64 */
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "over 64 bits");
    free(m.p);
    m = (pbuf){0};
    pb_tag(&m, 1, 0);
    for (int i = 0; i < 9; i++) pb_byte(&m, 0xff);
    pb_byte(&m, 0x01); /* UINT64_MAX: legal */
    g = simple_graph();
    f_msg(&m, 7, &g);
    CHECK_STATUS(&m, FRT_OK, NULL);
    free(m.p);
    m = (pbuf){0};
    pb_tag(&m, 1, 0);
    pb_byte(&m, 0x80); /* non-minimal encoding of 0, accepted like protobuf does */
    pb_byte(&m, 0x00);
    g = simple_graph();
    f_msg(&m, 7, &g);
    CHECK_STATUS(&m, FRT_OK, NULL);
    free(m.p);
    m = (pbuf){0};
    pb_byte(&m, 0x88); /* truncated tag */
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "model: truncated varint at byte 0");
    free(m.p);
    m = (pbuf){0};
    pb_varint(&m, (uint64_t)1 << 35 | 0); /* tag over 32 bits */
    pb_byte(&m, 0);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "does not fit 32 bits");
    free(m.p);
    m = (pbuf){0};
    f_varint(&m, 0, 1); /* field 0 */
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "field number 0");
    free(m.p);
    for (unsigned w = 3; w <= 7; w++) {
        if (w == 5) continue;
        m = (pbuf){0};
        f_varint(&m, 1, 8);
        pb_tag(&m, 50, w);
        pb_byte(&m, 0);
        CHECK_STATUS(&m, FRT_ERR_MALFORMED, w <= 4 ? "group wire type" : "invalid wire type");
        CHECK(strstr(frt_last_error(), "at byte 2") != NULL);
        free(m.p);
    }
    /* truncated fixed-width values */
    m = (pbuf){0};
    pb_tag(&m, 50, 1);
    pb_raw(&m, "1234567", 7);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "truncated fixed64");
    free(m.p);
    m = (pbuf){0};
    pb_tag(&m, 50, 5);
    pb_raw(&m, "123", 3);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "truncated fixed32");
    free(m.p);
    /* lengths beyond the buffer (including one near 2^64) */
    m = (pbuf){0};
    pb_tag(&m, 7, 2);
    pb_varint(&m, 1000);
    pb_raw(&m, "0123456789", 10);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "extends past the end");
    free(m.p);
    m = (pbuf){0};
    pb_tag(&m, 7, 2);
    pb_varint(&m, UINT64_MAX - 2);
    pb_raw(&m, "0123456789", 10);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "extends past the end");
    free(m.p);
    /* a nested length that is fine for the outer buffer but exceeds its own message */
    {
        g = (pbuf){0};
        pb_tag(&g, 1, 2);
        pb_varint(&g, 50); /* node claims 50 bytes, graph has 3 left */
        pb_raw(&g, "abc", 3);
        m = model_of(&g);
        f_str(&m, 6, "a doc string long enough to cover fifty bytes of the claimed node.....");
        CHECK_STATUS(&m, FRT_ERR_MALFORMED, "graph: length-delimited field extends past the end");
        free(m.p);
    }

    /* node / attribute semantics */
    g = (pbuf){0};
    n = node(NULL, "nop", "x", "y");
    f_msg(&g, 1, &n);
    m = model_of(&g);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "graph.node[0] (nop): node has no op_type");
    free(m.p);
    g = (pbuf){0};
    n = node("Relu", NULL, NULL, NULL);
    f_bytes(&n, 3, "a\0b", 3);
    f_msg(&g, 1, &n);
    m = model_of(&g);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "name contains a NUL byte");
    free(m.p);
    a = (pbuf){0};
    f_varint(&a, 20, 2);
    f_varint(&a, 3, 2);
    m = model_with_attr(&a);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "attribute has no name");
    free(m.p);
    a = attr_hdr("two", -1);
    f_varint(&a, 3, 2);
    f_float(&a, 2, 1);
    m = model_with_attr(&a);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "no type and several value fields");
    free(m.p);
    a = attr_hdr("typed", 2); /* type given: the matching field wins, others ignored */
    f_varint(&a, 3, 2);
    f_float(&a, 2, 1);
    m = model_with_attr(&a);
    CHECK_STATUS(&m, FRT_OK, NULL);
    free(m.p);
    a = attr_hdr("t99", 99);
    m = model_with_attr(&a);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "unknown attribute type 99");
    free(m.p);
    a = attr_hdr("sp", 11);
    m = model_with_attr(&a);
    CHECK_STATUS(&m, FRT_ERR_UNSUPPORTED, "SPARSE_TENSOR");
    free(m.p);
    a = attr_hdr("sp", -1);
    { pbuf sp = {0}; f_msg(&a, 22, &sp); }
    m = model_with_attr(&a);
    CHECK_STATUS(&m, FRT_ERR_UNSUPPORTED, "SPARSE_TENSOR");
    free(m.p);
    a = attr_hdr("not", 4);
    m = model_with_attr(&a);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "TENSOR attribute without t");
    free(m.p);
    a = attr_hdr("nog", 5);
    m = model_with_attr(&a);
    CHECK_STATUS(&m, FRT_ERR_MALFORMED, "GRAPH attribute without g");
    free(m.p);
    g = simple_graph();
    { pbuf sp = {0}; f_msg(&g, 15, &sp); }
    m = model_of(&g);
    CHECK_STATUS(&m, FRT_ERR_UNSUPPORTED, "sparse_initializer is not supported");
    free(m.p);
    /* input rank over the limit: unsupported (value_info hints are merely dropped) */
    {
        int64_t v[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
        pbuf vi = value_info("big", 1, 9, NULL, v);
        g = (pbuf){0};
        f_msg(&g, 11, &vi);
        m = model_of(&g);
        CHECK_STATUS(&m, FRT_ERR_UNSUPPORTED, "graph.input[0] (big).type.tensor_type.shape: rank 9");
        free(m.p);
    }

    /* the error path and byte offset of a truncated varint deep inside */
    {
        g = (pbuf){0};
        n = node("Relu", "r0", "x", "y");
        f_msg(&g, 1, &n);
        n = node("Conv", "c1", "y", "z");
        a = attr_hdr("kernel_shape", 7);
        pb_tag(&a, 8, 2);
        pb_varint(&a, 2);
        pb_byte(&a, 0x03);
        pb_byte(&a, 0x83); /* continuation bit on the last byte */
        f_msg(&n, 5, &a);
        f_msg(&g, 1, &n);
        m = model_of(&g);
        const uint8_t *p = memmem(m.p, m.n, "\x03\x83", 2);
        size_t off = p ? (size_t)(p - m.p) + 1 : 0;
        char want[256];
        snprintf(want, sizeof want,
                 "malformed ONNX: graph.node[1] (Conv 'c1').attribute[0] (kernel_shape): "
                 "AttributeProto.ints: truncated varint in packed array at byte %zu", off);
        CHECK_STATUS(&m, FRT_ERR_MALFORMED, want);
        free(m.p);
    }
}

/* A graph nested `levels` deep through GRAPH attributes. */
static pbuf nested_graph(int levels) {
    pbuf g = {0}, leaf = node("Identity", "leaf", "a", "b");
    f_msg(&g, 1, &leaf);
    for (int i = 0; i < levels; i++) {
        pbuf outer = {0}, n = node("If", NULL, "c", "d"), a = attr_hdr("then_branch", 5);
        f_msg(&a, 6, &g);
        f_msg(&n, 5, &a);
        f_msg(&outer, 1, &n);
        g = outer;
    }
    return g;
}

static void test_nesting(void) {
    pbuf g = nested_graph(31), m = model_of(&g); /* 32 graphs: the limit */
    frt_onnx_model *mm = NULL;
    CHECK_OK(frt_onnx_decode(m.p, m.n, &mm));
    if (mm) {
        const frt_onnx_graph *x = mm->graph;
        int depth = 1;
        while (x->n_nodes && x->nodes[0].n_attrs) {
            x = x->nodes[0].attrs[0].g;
            depth++;
        }
        CHECK(depth == 32 && strcmp(x->nodes[0].name, "leaf") == 0);
        frt_onnx_model_free(mm);
    }
    free(m.p);
    g = nested_graph(32);
    m = model_of(&g);
    CHECK_STATUS(&m, FRT_ERR_UNSUPPORTED, "nested deeper than 32");
    CHECK(strstr(frt_last_error(), "(...)") != NULL); /* long path elided */
    free(m.p);
    g = nested_graph(2000);
    m = model_of(&g);
    CHECK_STATUS(&m, FRT_ERR_UNSUPPORTED, "nested deeper");
    free(m.p);
}

/* Many elements: counts come from the bytes, so this allocates proportionally to the input. */
static void test_large_counts(void) {
    pbuf a = attr_hdr("many", 7), m;
    pbuf packed = {0};
    for (int i = 0; i < 100000; i++) pb_varint(&packed, (uint64_t)i * 1000);
    f_msg(&a, 8, &packed);
    for (int i = 0; i < 1000; i++) f_varint(&a, 8, 7);
    m = model_with_attr(&a);
    frt_onnx_model *mm = NULL;
    CHECK_OK(frt_onnx_decode(m.p, m.n, &mm));
    if (mm) {
        const frt_onnx_attr *at = &mm->graph->nodes[0].attrs[0];
        CHECK(at->n == 101000 && at->ints[99999] == 99999000 && at->ints[100999] == 7);
        frt_onnx_model_free(mm);
    }
    free(m.p);
}

/* ---------------------------------------------------------------------------------------------- */
/* External data                                                                                   */
/* ---------------------------------------------------------------------------------------------- */

static void write_file(const char *path, const void *d, size_t n) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(d, 1, n, f) == n);
    fclose(f);
}

static frt_status map_status(pbuf *m, const char *dir) {
    frt_onnx_model *mm = NULL;
    frt_status st = frt_onnx_decode(m->p, m->n, &mm);
    if (st) return st;
    st = frt_onnx_map_external(mm, dir);
    frt_onnx_model_free(mm);
    return st;
}

static void test_external(void) {
    char dir[] = "/tmp/frt_onnx_ext_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(!"mkdtemp");
        return;
    }
    char path[512], sub[512];
    float data[16];
    for (int i = 0; i < 16; i++) data[i] = (float)i + 0.5f;
    snprintf(path, sizeof path, "%s/w.bin", dir);
    write_file(path, data, sizeof data);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    CHECK(mkdir(sub, 0700) == 0);
    char subf[600];
    snprintf(subf, sizeof subf, "%s/sub/w.bin", dir);
    int64_t i64[2] = {-5, 1LL << 50};
    write_file(subf, i64, sizeof i64);

    pbuf g = {0}, t, m;
    int64_t d4[1] = {4}, d2[1] = {2}, d1[1] = {1};
    t = tensor_ext("aligned", 1, d4, 1, "w.bin", "16", "16");
    f_msg(&g, 5, &t);
    t = tensor_ext("misaligned", 1, d2, 1, "./w.bin", "2", NULL);
    f_msg(&g, 5, &t);
    t = tensor_ext("rest", 1, d1, 1, "w.bin", "60", "4");
    f_msg(&g, 5, &t);
    {
        /* a Constant attribute and a subgraph tensor, both external */
        pbuf n = node("Constant", "k", NULL, "kout"), a = attr_hdr("value", 4);
        t = tensor_ext("cval", 1, d1, 1, "w.bin", "4", NULL);
        f_msg(&a, 5, &t);
        f_msg(&n, 5, &a);
        f_msg(&g, 1, &n);
        pbuf body = {0}, ln = node("Loop", "loop", NULL, NULL), la = attr_hdr("body", 5);
        t = tensor_ext("sub_i64", 7, d2, 1, "sub/w.bin", NULL, "16");
        f_msg(&body, 5, &t);
        f_msg(&la, 6, &body);
        f_msg(&ln, 5, &la);
        f_msg(&g, 1, &ln);
    }
    m = model_of(&g);
    frt_onnx_model *mm = NULL;
    CHECK_OK(frt_onnx_decode(m.p, m.n, &mm));
    if (mm) {
        CHECK(frt_onnx_map_external(mm, NULL) == FRT_ERR_INVALID_ARGUMENT);
        CHECK(strstr(frt_last_error(), "no base directory") != NULL);
        CHECK_OK(frt_onnx_map_external(mm, dir));
        const frt_onnx_graph *gr = mm->graph;
        const frt_onnx_tensor *x = find_init(gr, "aligned");
        CHECK(x && x->data && x->in_place && memcmp(x->data, data + 4, 16) == 0);
        x = find_init(gr, "misaligned");
        CHECK(x && x->data && !x->in_place && ((uintptr_t)x->data % 4) == 0);
        if (x && x->data) CHECK(memcmp(x->data, (const uint8_t *)data + 2, 8) == 0);
        x = find_init(gr, "rest");
        CHECK(x && x->data && ((const float *)x->data)[0] == 15.5f);
        const frt_onnx_tensor *c = gr->nodes[0].attrs[0].t;
        CHECK(c && c->data && ((const float *)c->data)[0] == 1.5f);
        const frt_onnx_tensor *s = &gr->nodes[1].attrs[0].g->initializers[0];
        CHECK(s->data && ((const int64_t *)s->data)[0] == -5 && ((const int64_t *)s->data)[1] == 1LL << 50);
        /* w.bin and ./w.bin are different strings: at most 3 maps; sub/w.bin is one */
        CHECK(mm->n_maps >= 2 && mm->n_maps <= 3);
        size_t maps = mm->n_maps;
        CHECK_OK(frt_onnx_map_external(mm, dir)); /* idempotent */
        CHECK(mm->n_maps == maps);
        frt_onnx_model_free(mm);
    }
    free(m.p);

    /* dedup: two tensors of one file map it once; trailing '/' on base_dir is fine */
    g = (pbuf){0};
    t = tensor_ext("a", 1, d1, 1, "w.bin", "0", NULL);
    f_msg(&g, 5, &t);
    t = tensor_ext("b", 1, d1, 1, "w.bin", "8", NULL);
    f_msg(&g, 5, &t);
    m = model_of(&g);
    mm = NULL;
    CHECK_OK(frt_onnx_decode(m.p, m.n, &mm));
    if (mm) {
        char slash[600];
        snprintf(slash, sizeof slash, "%s/", dir);
        CHECK_OK(frt_onnx_map_external(mm, slash));
        CHECK(mm->n_maps == 1);
        frt_onnx_model_free(mm);
    }
    free(m.p);

    static const struct { const char *loc, *off, *len; int64_t n; frt_status want; const char *msg; } bad[] = {
        {"../w.bin", NULL, NULL, 1, FRT_ERR_MALFORMED, "escapes"},
        {"sub/../../w.bin", NULL, NULL, 1, FRT_ERR_MALFORMED, "escapes"},
        {"sub\\..\\w.bin", NULL, NULL, 1, FRT_ERR_MALFORMED, "escapes"},
        {"/etc/passwd", NULL, NULL, 1, FRT_ERR_MALFORMED, "absolute path"},
        {"missing.bin", NULL, NULL, 1, FRT_ERR_IO, "cannot open"},
        {"sub", NULL, NULL, 1, FRT_ERR_IO, "not a regular file"},
        {"w.bin", "64", NULL, 1, FRT_ERR_MALFORMED, "lies outside"},
        {"w.bin", "9223372036854775807", NULL, 1, FRT_ERR_MALFORMED, "lies outside"},
        {"w.bin", "60", NULL, 2, FRT_ERR_MALFORMED, "lies outside"},
        {"w.bin", NULL, NULL, 17, FRT_ERR_MALFORMED, "lies outside"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        g = (pbuf){0};
        int64_t dn[1] = {bad[i].n};
        t = tensor_ext("bad", 1, dn, 1, bad[i].loc, bad[i].off, bad[i].len);
        f_msg(&g, 5, &t);
        m = model_of(&g);
        frt_status st = map_status(&m, dir);
        CHECK_MSG(st == bad[i].want, "case %zu (%s): %s: %s", i, bad[i].loc, frt_status_string(st),
                  frt_last_error());
        CHECK_MSG(strstr(frt_last_error(), bad[i].msg) != NULL, "case %zu: '%s' lacks '%s'", i,
                  frt_last_error(), bad[i].msg);
        free(m.p);
    }
    unlink(subf);
    rmdir(sub);
    unlink(path);
    rmdir(dir);
}

/* ---------------------------------------------------------------------------------------------- */
/* Models written by the onnx Python package                                                      */
/* ---------------------------------------------------------------------------------------------- */

static const char *PY_SCRIPT =
    "import sys, numpy as np, onnx\n"
    "from onnx import helper, TensorProto, numpy_helper\n"
    "d = sys.argv[1]\n"
    "W = numpy_helper.from_array((np.arange(24, dtype=np.float32) * 0.5).reshape(2, 3, 2, 2), 'W')\n"
    "B = helper.make_tensor('B', TensorProto.FLOAT, [2], [0.25, -0.75], raw=False)\n"
    "S = numpy_helper.from_array(np.array([1, -2, 3], dtype=np.int64), 'S')\n"
    "conv = helper.make_node('Conv', ['X', 'W', 'B'], ['C'], name='conv0', kernel_shape=[2, 2],\n"
    "                        pads=[0, 0, 1, 1], strides=[1, 1], dilations=[1, 1])\n"
    "k = helper.make_node('Constant', [], ['K'], value=helper.make_tensor('kv', TensorProto.INT64, [2], [4, -5]))\n"
    "then_g = helper.make_graph([helper.make_node('Identity', ['C'], ['T'])], 'then',\n"
    "    [], [helper.make_tensor_value_info('T', TensorProto.FLOAT, None)])\n"
    "else_g = helper.make_graph([helper.make_node('Neg', ['C'], ['E'])], 'else',\n"
    "    [], [helper.make_tensor_value_info('E', TensorProto.FLOAT, None)])\n"
    "iff = helper.make_node('If', ['cond'], ['Y'], then_branch=then_g, else_branch=else_g)\n"
    "g = helper.make_graph([conv, k, iff], 'tiny',\n"
    "    [helper.make_tensor_value_info('X', TensorProto.FLOAT, ['N', 3, 4, 4]),\n"
    "     helper.make_tensor_value_info('cond', TensorProto.BOOL, [])],\n"
    "    [helper.make_tensor_value_info('Y', TensorProto.FLOAT, ['N', 2, 4, 4])], [W, B, S])\n"
    "m = helper.make_model(g, producer_name='make_tiny', opset_imports=[helper.make_opsetid('', 13)])\n"
    "onnx.checker.check_model(m)\n"
    "onnx.save_model(m, d + '/tiny.onnx')\n"
    "onnx.save_model(m, d + '/tiny_ext.onnx', save_as_external_data=True,\n"
    "    all_tensors_to_one_file=True, location='tiny.data', size_threshold=0)\n";

static uint8_t *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(sz > 0 ? (size_t)sz : 1);
    *n = fread(p, 1, (size_t)sz, f);
    fclose(f);
    return p;
}

static void check_tiny(const frt_onnx_model *m) {
    CHECK(strcmp(m->producer_name, "make_tiny") == 0);
    CHECK(frt_onnx_default_opset(m) == 13);
    const frt_onnx_graph *g = m->graph;
    CHECK(strcmp(g->name, "tiny") == 0 && g->n_nodes == 3 && g->n_initializers == 3);
    const frt_onnx_tensor *w = find_init(g, "W");
    CHECK(w && w->dtype == FRT_FLOAT32 && w->rank == 4 && w->numel == 24 && w->data);
    /* initializer payloads may be misaligned (onnx.h): read them with memcpy */
    if (w && w->data) {
        float v[24];
        memcpy(v, w->data, sizeof v);
        bool ok = true;
        for (int i = 0; i < 24; i++) ok &= v[i] == (float)i * 0.5f;
        CHECK(ok);
    }
    const frt_onnx_tensor *b = find_init(g, "B");
    float bv[2] = {0, 0};
    if (b && b->data && b->nbytes >= sizeof bv) memcpy(bv, b->data, sizeof bv);
    CHECK(b && b->data && bv[1] == -0.75f);
    const frt_onnx_tensor *s = find_init(g, "S");
    int64_t sv[2] = {0, 0};
    if (s && s->data && s->nbytes >= sizeof sv) memcpy(sv, s->data, sizeof sv);
    CHECK(s && s->data && sv[1] == -2);
    if (g->n_nodes == 3) {
        const frt_onnx_node *c = &g->nodes[0];
        const frt_onnx_attr *ks = find_attr(c, "kernel_shape"), *pads = find_attr(c, "pads");
        CHECK(ks && ks->type == FRT_ATTR_INTS && ks->n == 2 && ks->ints[1] == 2);
        CHECK(pads && pads->n == 4 && pads->ints[2] == 1);
        const frt_onnx_attr *kv = find_attr(&g->nodes[1], "value");
        CHECK(kv && kv->t && kv->t->data && ((const int64_t *)kv->t->data)[1] == -5);
        const frt_onnx_attr *el = find_attr(&g->nodes[2], "else_branch");
        CHECK(el && el->g && el->g->n_nodes == 1 && strcmp(el->g->nodes[0].op_type, "Neg") == 0);
    }
    const frt_onnx_value_info *x = find_vi(g->inputs, g->n_inputs, "X");
    CHECK(x && x->rank == 4 && x->dims[0].param && strcmp(x->dims[0].param, "N") == 0 &&
          x->dims[3].value == 4);
    const frt_onnx_value_info *cond = find_vi(g->inputs, g->n_inputs, "cond");
    CHECK(cond && cond->elem_type == FRT_BOOL && cond->has_shape && cond->rank == 0);
}

static void test_python_models(void) {
    if (access("/usr/bin/python3", X_OK) != 0) {
        printf("python models: skipped (no /usr/bin/python3)\n");
        return;
    }
    char dir[] = "/tmp/frt_onnx_py_XXXXXX";
    if (!mkdtemp(dir)) return;
    char script[600], cmd[1400], p1[600], p2[600], p3[600];
    snprintf(script, sizeof script, "%s/make_tiny.py", dir);
    write_file(script, PY_SCRIPT, strlen(PY_SCRIPT));
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s 2>/dev/null", script, dir);
    snprintf(p1, sizeof p1, "%s/tiny.onnx", dir);
    snprintf(p2, sizeof p2, "%s/tiny_ext.onnx", dir);
    snprintf(p3, sizeof p3, "%s/tiny.data", dir);
    if (system(cmd) != 0) {
        printf("python models: skipped (onnx package not usable)\n");
    } else {
        size_t n = 0;
        uint8_t *buf = read_all(p1, &n);
        frt_onnx_model *m = NULL;
        CHECK(buf != NULL);
        if (buf) {
            CHECK_OK(frt_onnx_decode(buf, n, &m));
            if (m) {
                check_tiny(m);
                CHECK_OK(frt_onnx_map_external(m, NULL)); /* nothing external */
                frt_onnx_model_free(m);
            }
            free(buf);
        }
        buf = read_all(p2, &n);
        CHECK(buf != NULL);
        if (buf) {
            m = NULL;
            CHECK_OK(frt_onnx_decode(buf, n, &m));
            if (m) {
                const frt_onnx_tensor *w = find_init(m->graph, "W");
                CHECK(w && w->external && w->data == NULL && strcmp(w->ext_location, "tiny.data") == 0);
                CHECK_OK(frt_onnx_map_external(m, dir));
                CHECK(m->n_maps == 1);
                check_tiny(m);
                frt_onnx_model_free(m);
            }
            free(buf);
        }
        printf("python models: decoded\n");
    }
    unlink(p1);
    unlink(p2);
    unlink(p3);
    unlink(script);
    rmdir(dir);
}

/* ---------------------------------------------------------------------------------------------- */
/* Speed: big raw tensors are not copied when aligned                                              */
/* ---------------------------------------------------------------------------------------------- */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_speed(void) {
    /* 100 initializers of 256 KiB each plus 2000 small nodes */
    pbuf g = {0};
    size_t nfl = 65536;
    float *w = calloc(nfl, sizeof *w);
    for (int i = 0; i < 2000; i++) {
        pbuf n = node("Conv", "conv", "x", "y"), a = attr_hdr("kernel_shape", 7);
        int64_t ks[2] = {3, 3};
        f_packed_varints(&a, 8, ks, 2);
        f_msg(&n, 5, &a);
        f_msg(&g, 1, &n);
    }
    w[0] = 12345.678f; /* marks the first payload */
    for (int i = 0; i < 100; i++) {
        int64_t d[1] = {(int64_t)nfl};
        pbuf t = tensor_hdr("w", 1, d, 1);
        /* Pad with an unknown 3-byte field until the whole initializer field (1-byte tag, 3-byte
         * length, message) is a multiple of 4 bytes: then all payloads share one alignment. */
        while ((1 + 3 + t.n + 4 + nfl * 4) % 4) f_varint(&t, 20, 0);
        f_bytes(&t, 9, w, nfl * 4);
        f_msg(&g, 5, &t);
    }
    pbuf m = model_of(&g);
    const uint8_t *first = memmem(m.p, m.n, w, 4);
    size_t shift = first ? (4 - (size_t)(first - m.p) % 4) % 4 : 0;
    uint8_t *base = aligned_alloc(64, (m.n + 64 + 63) & ~(size_t)63), *buf = base + shift;
    memcpy(buf, m.p, m.n);
    frt_onnx_model *mm = NULL;
    double t0 = now_ms();
    frt_status st = frt_onnx_decode(buf, m.n, &mm);
    double t1 = now_ms();
    CHECK_OK(st);
    if (mm) {
        size_t inplace = 0;
        for (size_t i = 0; i < mm->graph->n_initializers; i++) inplace += mm->graph->initializers[i].in_place;
        printf("speed: %.1f MB decoded in %.2f ms (%zu of 100 big tensors in place)\n", m.n / 1e6,
               t1 - t0, inplace);
        CHECK(inplace == 100);
        frt_onnx_model_free(mm);
    }
    free(base);
    free(m.p);
    free(w);
}

/* A Constant node's tensor with misaligned raw_data is copied to aligned memory (only graph
 * initializers may stay misaligned in place): the decoder's per-tensor state must start cleared. */
static void test_constant_misaligned(void) {
    for (size_t pad = 0; pad < 8; pad++) {
        pbuf g = {0}, n = node("Constant", "c", NULL, "y"), a = attr_hdr("value", 4), t;
        int64_t dims[1] = {3};
        int64_t v[3] = {11, -12, 13};
        t = tensor_hdr("cv", 7, dims, 1);
        for (size_t i = 0; i < pad; i++) f_varint(&t, 20, 0); /* unknown field shifts the payload */
        f_bytes(&t, 9, v, sizeof v);
        f_msg(&a, 5, &t);
        f_msg(&n, 5, &a);
        f_msg(&g, 1, &n);
        f_str(&g, 2, "g");
        pbuf m = model_of(&g);
        frt_onnx_model *mm = NULL;
        CHECK_OK(frt_onnx_decode(m.p, m.n, &mm));
        const frt_onnx_attr *at = mm ? find_attr(&mm->graph->nodes[0], "value") : NULL;
        CHECK(at && at->t && at->t->data);
        if (at && at->t && at->t->data) {
            CHECK_MSG(!at->t->misaligned && (uintptr_t)at->t->data % 8 == 0,
                      "pad %zu: Constant tensor left misaligned", pad);
            int64_t got[3];
            memcpy(got, at->t->data, sizeof got);
            CHECK(got[0] == 11 && got[1] == -12 && got[2] == 13);
        }
        frt_onnx_model_free(mm);
        free(m.p);
    }
}

int main(void) {
    test_constant_misaligned();
    test_full_model();
    test_truncation();
    test_byte_flips();
    test_tensor_errors();
    test_structure_errors();
    test_nesting();
    test_large_counts();
    test_external();
    test_python_models();
    test_speed();
    TEST_MAIN_END();
}
