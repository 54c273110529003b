/* ONNX ModelProto -> frt_onnx_* structs, straight from the protobuf wire format.
 *
 * Every message is read in two passes over its own bytes:
 *   1. scan_msg(): validates every field's framing and the wire type of every known field, counts
 *      the elements of repeated fields (packed and unpacked encodings alike) and remembers the last
 *      value of each singular field. Nested messages are only skipped over here.
 *   2. the message's decoder allocates arrays of exactly the counted size and walks the fields
 *      again to fill them, recursing into nested messages.
 * Counts come from bytes actually present, so allocations are bounded by a small multiple of the
 * buffer size whatever sizes the model declares: a dims product is checked against the payload
 * before anything of that size is allocated, and the worst case for structs (2-byte empty
 * ValueInfoProto entries, 152 bytes each) is under 80 bytes of arena per input byte.
 *
 * Errors: the first failure records status, byte offset and message in the decoder and returns
 * immediately WITHOUT popping the field-path stack, so frt_onnx_decode() can render where it
 * happened: "malformed ONNX: graph.node[3] (Conv 'conv1').attribute[1] (kernel_shape): ...".
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"
#include "onnx/pb.h"
#include "util/error.h"
#include "util/features.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the ONNX decoder reads raw_data and packed fixed-width fields as little-endian"
#endif

/* Subgraph nesting (graph attributes inside graphs) deeper than this is refused. */
#define MAX_GRAPH_DEPTH 32
#define MAX_PATH 256

typedef struct path_elem {
    const char *field;
    int64_t index;             /* -1 for a singular field */
    const char *const *label;  /* shown as " (label)" when set and non-empty */
    const char *const *label2; /* nodes: op_type, shown before the name */
} path_elem;

typedef struct dec {
    frt_arena *arena;
    const uint8_t *base;
    int depth; /* path length; elements past MAX_PATH are counted but not stored */
    int graph_depth;
    frt_status err;
    size_t err_off;
    char err_msg[512];
    path_elem path[MAX_PATH];
    bool lazy_align; /* decoding initializers: leave misaligned raw_data in place (see onnx.h) */
} dec;

static void push(dec *d, const char *field, int64_t index, const char *const *label,
                 const char *const *label2) {
    if (d->depth < MAX_PATH) d->path[d->depth] = (path_elem){field, index, label, label2};
    d->depth++;
}

static void pop(dec *d) { d->depth--; }

static frt_status fail(dec *d, frt_status st, size_t off, const char *fmt, ...) FRT_PRINTF(4, 5);
static frt_status fail(dec *d, frt_status st, size_t off, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err_msg, sizeof d->err_msg, fmt, ap);
    va_end(ap);
    d->err = st;
    d->err_off = off;
    return st;
}

static size_t render_elem(char *buf, size_t cap, const path_elem *e, bool first) {
    const char *l1 = e->label2 && *e->label2 && **e->label2 ? *e->label2 : NULL;
    const char *l2 = e->label && *e->label && **e->label ? *e->label : NULL;
    int n;
    char idx[32] = "";
    if (e->index >= 0) snprintf(idx, sizeof idx, "[%" PRId64 "]", e->index);
    if (l1 && l2)
        n = snprintf(buf, cap, "%s%s%s (%s '%s')", first ? "" : ".", e->field, idx, l1, l2);
    else if (l1 || l2)
        n = snprintf(buf, cap, "%s%s%s (%s)", first ? "" : ".", e->field, idx, l1 ? l1 : l2);
    else
        n = snprintf(buf, cap, "%s%s%s", first ? "" : ".", e->field, idx);
    return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}

/* Renders the path stack; long paths keep the first 4 and last 8 elements. */
static void render_path(const dec *d, char *buf, size_t cap) {
    int n = d->depth < MAX_PATH ? d->depth : MAX_PATH;
    size_t o = 0;
    buf[0] = 0;
    if (n == 0) {
        snprintf(buf, cap, "model");
        return;
    }
    for (int i = 0; i < n && o + 1 < cap; i++) {
        if (n > 12 && i == 4) {
            o += (size_t)snprintf(buf + o, cap - o, ".(...)");
            i = n - 8;
        }
        if (o + 1 >= cap) break;
        o += render_elem(buf + o, cap - o, &d->path[i], i == 0);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Pass 1: generic field scan                                                                      */
/* ---------------------------------------------------------------------------------------------- */

enum {
    K_NONE = 0, /* unknown to us: skipped */
    K_VARINT,   /* singular varint */
    K_I32,      /* singular fixed32 */
    K_LEN,      /* string, bytes or message (singular or repeated: count = occurrences) */
    K_RVARINT,  /* repeated varint, packed or not: count = elements */
    K_RI32,     /* repeated fixed32, packed or not */
    K_RI64      /* repeated fixed64, packed or not */
};

#define SCAN_MAX 24 /* field numbers >= this are unknown in every message we decode */

typedef struct msg_spec {
    const char *name;
    uint8_t kind[SCAN_MAX];
    const char *fields; /* the field names for messages: "<number>=<name>\0" entries, then "\0" */
} msg_spec;

/* The name of field `num` of spec (messages only). */
static const char *field_name(const msg_spec *spec, unsigned num) {
    for (const char *e = spec->fields; *e; e += strlen(e) + 1) {
        char *eq;
        if (strtoul(e, &eq, 10) == num && *eq == '=') return eq + 1;
    }
    return "?";
}

typedef struct scan {
    uint32_t present;        /* bit n: field n occurred at least once */
    size_t count[SCAN_MAX];  /* occurrences, or elements for repeated scalar fields */
    uint64_t val[SCAN_MAX];  /* last value of a varint/fixed field */
    const uint8_t *ptr[SCAN_MAX]; /* last payload of a LEN field */
    size_t len[SCAN_MAX];
    size_t off[SCAN_MAX];    /* absolute offset of the last occurrence's tag */
} scan;

static const char *kind_wire_name(int kind) {
    switch (kind) {
    case K_VARINT: return "varint";
    case K_I32: return "fixed32";
    case K_LEN: return "length-delimited";
    case K_RVARINT: return "varint or packed (length-delimited)";
    case K_RI32: return "fixed32 or packed (length-delimited)";
    case K_RI64: return "fixed64 or packed (length-delimited)";
    }
    return "?";
}

static frt_status scan_msg(dec *d, const msg_spec *spec, const uint8_t *data, size_t len,
                           scan *s) {
    frt_pb_reader r;
    frt_pb_field f;
    frt_pb_error e;
    int rc;
    s->present = 0;
    memset(s->count, 0, sizeof s->count);
    memset(s->val, 0, sizeof s->val);
    memset(s->ptr, 0, sizeof s->ptr);
    memset(s->len, 0, sizeof s->len);
    memset(s->off, 0, sizeof s->off);
    frt_pb_init(&r, d->base, data, len);
    while ((rc = frt_pb_next(&r, &f, &e)) > 0) {
        if (f.num >= SCAN_MAX || spec->kind[f.num] == K_NONE) continue;
        int k = spec->kind[f.num];
        size_t n = 1;
        bool ok;
        switch (k) {
        case K_VARINT: ok = f.wire == FRT_PB_VARINT; break;
        case K_I32: ok = f.wire == FRT_PB_I32; break;
        case K_LEN: ok = f.wire == FRT_PB_LEN; break;
        case K_RVARINT:
            ok = f.wire == FRT_PB_VARINT || f.wire == FRT_PB_LEN;
            if (ok && f.wire == FRT_PB_LEN &&
                !frt_pb_count_packed_varints(d->base, f.data, f.len, &n, &e))
                return fail(d, FRT_ERR_MALFORMED, e.offset, "%s.%s: %s", spec->name,
                            field_name(spec, f.num), e.what);
            break;
        case K_RI32:
        case K_RI64: {
            size_t w = k == K_RI32 ? 4 : 8;
            ok = f.wire == (k == K_RI32 ? FRT_PB_I32 : FRT_PB_I64) || f.wire == FRT_PB_LEN;
            if (ok && f.wire == FRT_PB_LEN) {
                if (f.len % w)
                    return fail(d, FRT_ERR_MALFORMED, f.offset,
                                "%s.%s: packed array of %zu bytes is not a multiple of %zu",
                                spec->name, field_name(spec, f.num), f.len, w);
                n = f.len / w;
            }
            break;
        }
        default: ok = false;
        }
        if (!ok)
            return fail(d, FRT_ERR_MALFORMED, f.offset,
                        "%s.%s (field %u) has wire type %s, expected %s", spec->name,
                        field_name(spec, f.num), f.num, frt_pb_wire_name(f.wire), kind_wire_name(k));
        s->present |= 1u << f.num;
        s->count[f.num] += n;
        s->val[f.num] = f.u;
        s->ptr[f.num] = f.data;
        s->len[f.num] = f.len;
        s->off[f.num] = f.offset;
    }
    if (rc < 0) return fail(d, FRT_ERR_MALFORMED, e.offset, "%s", e.what);
    return FRT_OK;
}

static bool has(const scan *s, int field) { return (s->present >> field) & 1u; }

/* Iterates the fields again in pass 2 (framing was validated by scan_msg). */
#define FOR_FIELDS(d, data, len, f)                                                          \
    frt_pb_reader r_;                                                                        \
    frt_pb_error e_;                                                                         \
    frt_pb_init(&r_, (d)->base, (data), (len));                                              \
    while (frt_pb_next(&r_, &(f), &e_) > 0)

/* ---------------------------------------------------------------------------------------------- */
/* Helpers                                                                                         */
/* ---------------------------------------------------------------------------------------------- */

static void *alloc_array(dec *d, size_t n, size_t size, size_t align, size_t off) {
    if (n == 0) return NULL;
    if (n > FRT_ARENA_MAX_ALLOC / size) {
        fail(d, FRT_ERR_NO_MEMORY, off, "array of %zu elements is too large", n);
        return NULL;
    }
    void *p = frt_arena_alloc(d->arena, n * size, align);
    if (!p) fail(d, FRT_ERR_NO_MEMORY, off, "out of memory allocating %zu bytes", n * size);
    return p;
}

#define ALLOC_ARRAY(d, n, type, off) ((type *)alloc_array((d), (n), sizeof(type), _Alignof(type), (off)))

/* Copies a string field into the arena. Identifiers (names, op types, domains) must not contain
 * NUL bytes, since they are used as C strings. */
static frt_status get_str(dec *d, const uint8_t *p, size_t len, size_t off, const char *what,
                          bool identifier, const char **out) {
    if (identifier && len && memchr(p, 0, len))
        return fail(d, FRT_ERR_MALFORMED, off, "%s contains a NUL byte", what);
    char *s = frt_arena_strndup(d->arena, (const char *)p, len);
    if (!s) return fail(d, FRT_ERR_NO_MEMORY, off, "out of memory copying %s", what);
    *out = s;
    return FRT_OK;
}

/* Singular string field `fn` of a scanned message, "" if absent. */
static frt_status scan_str(dec *d, const scan *s, int fn, const char *what, bool identifier,
                           const char **out) {
    if (!has(s, fn) || s->len[fn] == 0) {
        *out = "";
        return FRT_OK;
    }
    return get_str(d, s->ptr[fn], s->len[fn], s->off[fn], what, identifier, out);
}

/* Best-effort copy of a string field for labelling an error path; never fails the decode. */
static void label_str(dec *d, const scan *s, int fn, const char **out) {
    if (!has(s, fn) || s->len[fn] == 0 || memchr(s->ptr[fn], 0, s->len[fn])) return;
    char *c = frt_arena_strndup(d->arena, (const char *)s->ptr[fn], s->len[fn]);
    if (c) *out = c;
}

static const char *normalize_domain(const char *dom) {
    return strcmp(dom, "ai.onnx") == 0 ? "" : dom;
}

/* An int32 proto field (sent as a sign-extended varint). */
static frt_status get_int32(dec *d, uint64_t u, size_t off, const char *what, int32_t *out) {
    int64_t v = (int64_t)u;
    if (v < INT32_MIN || v > INT32_MAX)
        return fail(d, FRT_ERR_MALFORMED, off, "%s %" PRId64 " does not fit int32", what, v);
    *out = (int32_t)v;
    return FRT_OK;
}

static frt_status check_single(dec *d, const scan *s, int fn, const char *what) {
    if (s->count[fn] > 1)
        return fail(d, FRT_ERR_MALFORMED, s->off[fn], "%s given %zu times", what, s->count[fn]);
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Message specs (field numbers from onnx.proto)                                                   */
/* ---------------------------------------------------------------------------------------------- */

static const msg_spec MODEL_SPEC = {
    "ModelProto",
    {[1] = K_VARINT, [2] = K_LEN, [3] = K_LEN, [4] = K_LEN, [5] = K_VARINT, [6] = K_LEN,
     [7] = K_LEN, [8] = K_LEN, [14] = K_LEN, [20] = K_LEN},
    "1=ir_version\0" "2=producer_name\0" "3=producer_version\0" "4=domain\0" "5=model_version\0"
    "6=doc_string\0" "7=graph\0" "8=opset_import\0" "14=metadata_props\0" "20=training_info\0"};

static const msg_spec OPSET_SPEC = {"OperatorSetIdProto",
                                    {[1] = K_LEN, [2] = K_VARINT},
                                    "1=domain\0" "2=version\0"};

static const msg_spec GRAPH_SPEC = {
    "GraphProto",
    {[1] = K_LEN, [2] = K_LEN, [5] = K_LEN, [10] = K_LEN, [11] = K_LEN, [12] = K_LEN,
     [13] = K_LEN, [14] = K_LEN, [15] = K_LEN},
    "1=node\0" "2=name\0" "5=initializer\0" "10=doc_string\0" "11=input\0" "12=output\0"
    "13=value_info\0" "14=quantization_annotation\0" "15=sparse_initializer\0"};

static const msg_spec NODE_SPEC = {
    "NodeProto",
    {[1] = K_LEN, [2] = K_LEN, [3] = K_LEN, [4] = K_LEN, [5] = K_LEN, [6] = K_LEN, [7] = K_LEN},
    "1=input\0" "2=output\0" "3=name\0" "4=op_type\0" "5=attribute\0" "6=doc_string\0"
    "7=domain\0"};

static const msg_spec ATTR_SPEC = {
    "AttributeProto",
    {[1] = K_LEN, [2] = K_I32, [3] = K_VARINT, [4] = K_LEN, [5] = K_LEN, [6] = K_LEN,
     [7] = K_RI32, [8] = K_RVARINT, [9] = K_LEN, [10] = K_LEN, [11] = K_LEN, [13] = K_LEN,
     [14] = K_LEN, [15] = K_LEN, [20] = K_VARINT, [21] = K_LEN, [22] = K_LEN, [23] = K_LEN},
    "1=name\0" "2=f\0" "3=i\0" "4=s\0" "5=t\0" "6=g\0" "7=floats\0" "8=ints\0" "9=strings\0"
    "10=tensors\0" "11=graphs\0" "13=doc_string\0" "14=tp\0" "15=type_protos\0" "20=type\0"
    "21=ref_attr_name\0" "22=sparse_tensor\0" "23=sparse_tensors\0"};

static const msg_spec TENSOR_SPEC = {
    "TensorProto",
    {[1] = K_RVARINT, [2] = K_VARINT, [3] = K_LEN, [4] = K_RI32, [5] = K_RVARINT, [6] = K_LEN,
     [7] = K_RVARINT, [8] = K_LEN, [9] = K_LEN, [10] = K_RI64, [11] = K_RVARINT, [12] = K_LEN,
     [13] = K_LEN, [14] = K_VARINT},
    "1=dims\0" "2=data_type\0" "3=segment\0" "4=float_data\0" "5=int32_data\0" "6=string_data\0"
    "7=int64_data\0" "8=name\0" "9=raw_data\0" "10=double_data\0" "11=uint64_data\0"
    "12=doc_string\0" "13=external_data\0" "14=data_location\0"};

static const msg_spec ENTRY_SPEC = {"StringStringEntryProto",
                                    {[1] = K_LEN, [2] = K_LEN},
                                    "1=key\0" "2=value\0"};

static const msg_spec VALUE_INFO_SPEC = {"ValueInfoProto",
                                         {[1] = K_LEN, [2] = K_LEN, [3] = K_LEN},
                                         "1=name\0" "2=type\0" "3=doc_string\0"};

static const msg_spec TYPE_SPEC = {
    "TypeProto",
    {[1] = K_LEN, [4] = K_LEN, [5] = K_LEN, [6] = K_LEN, [8] = K_LEN, [9] = K_LEN},
    "1=tensor_type\0" "4=sequence_type\0" "5=map_type\0" "6=denotation\0"
    "8=sparse_tensor_type\0" "9=optional_type\0"};

static const msg_spec TENSOR_TYPE_SPEC = {"TypeProto.Tensor",
                                          {[1] = K_VARINT, [2] = K_LEN},
                                          "1=elem_type\0" "2=shape\0"};

static const msg_spec SHAPE_SPEC = {"TensorShapeProto", {[1] = K_LEN}, "1=dim\0"};

static const msg_spec DIM_SPEC = {"TensorShapeProto.Dimension",
                                  {[1] = K_VARINT, [2] = K_LEN, [3] = K_LEN},
                                  "1=dim_value\0" "2=dim_param\0" "3=denotation\0"};

/* ---------------------------------------------------------------------------------------------- */
/* TensorProto                                                                                     */
/* ---------------------------------------------------------------------------------------------- */

static const char *onnx_type_name(int64_t dt) {
    static const char *const names[] = {
        "undefined", "float32", "uint8", "int8", "uint16", "int16", "int32", "int64",
        "string", "bool", "float16", "float64", "uint32", "uint64", "complex64", "complex128",
        "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4",
        "int4", "float4e2m1"};
    return dt >= 0 && dt < (int64_t)(sizeof names / sizeof names[0]) ? names[dt] : "unknown";
}

/* Element size of a tensor data type flatrt handles; fails for others. */
static frt_status check_dtype(dec *d, int64_t dt, size_t off, size_t *esize) {
    if (dt == FRT_STRING || (dt >= 14 && dt <= 23 && dt != FRT_BFLOAT16))
        return fail(d, FRT_ERR_UNSUPPORTED, off, "tensors of data type %s (%" PRId64
                    ") are not supported", onnx_type_name(dt), dt);
    size_t sz = (dt >= 1 && dt <= 13) || dt == FRT_BFLOAT16 ? frt_dtype_size((frt_dtype)dt) : 0;
    if (sz == 0)
        return fail(d, FRT_ERR_MALFORMED, off, "unknown tensor data type %" PRId64, dt);
    *esize = sz;
    return FRT_OK;
}

/* Strict non-negative decimal (external_data offset/length). */
static bool parse_dec(const uint8_t *p, size_t len, int64_t *out) {
    if (len == 0 || len > 19) return false;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9') return false;
        int dgt = p[i] - '0';
        if (v > (INT64_MAX - dgt) / 10) return false;
        v = v * 10 + dgt;
    }
    *out = v;
    return true;
}

static frt_status decode_external(dec *d, const uint8_t *data, size_t len, frt_onnx_tensor *t) {
    frt_pb_field f;
    size_t i = 0;
    FOR_FIELDS(d, data, len, f) {
        if (f.num != 13) continue;
        scan s;
        frt_status st;
        push(d, "external_data", (int64_t)i, NULL, NULL);
        if ((st = scan_msg(d, &ENTRY_SPEC, f.data, f.len, &s))) return st;
        const uint8_t *k = s.ptr[1], *v = s.ptr[2];
        size_t kl = s.len[1], vl = s.len[2];
        if (kl == 8 && memcmp(k, "location", 8) == 0) {
            if (vl == 0) return fail(d, FRT_ERR_MALFORMED, f.offset, "empty location");
            if ((st = get_str(d, v, vl, s.off[2], "location", true, &t->ext_location))) return st;
        } else if (kl == 6 && memcmp(k, "offset", 6) == 0) {
            if (!parse_dec(v, vl, &t->ext_offset))
                return fail(d, FRT_ERR_MALFORMED, f.offset, "offset '%.*s' is not a decimal",
                            (int)(vl > 40 ? 40 : vl), (const char *)v);
        } else if (kl == 6 && memcmp(k, "length", 6) == 0) {
            if (!parse_dec(v, vl, &t->ext_length))
                return fail(d, FRT_ERR_MALFORMED, f.offset, "length '%.*s' is not a decimal",
                            (int)(vl > 40 ? 40 : vl), (const char *)v);
        } /* other keys (checksum, ...) are ignored */
        pop(d);
        i++;
    }
    return FRT_OK;
}

static void store_int(void *dst, size_t i, int32_t dtype, uint64_t v) {
    switch (dtype) {
    case FRT_INT32: ((uint32_t *)dst)[i] = (uint32_t)v; break;
    case FRT_INT16: case FRT_UINT16: case FRT_FLOAT16: case FRT_BFLOAT16:
        ((uint16_t *)dst)[i] = (uint16_t)v;
        break;
    case FRT_INT8: case FRT_UINT8: ((uint8_t *)dst)[i] = (uint8_t)v; break;
    case FRT_BOOL: ((uint8_t *)dst)[i] = (uint32_t)v != 0; break;
    case FRT_INT64: case FRT_UINT64: ((uint64_t *)dst)[i] = v; break;
    case FRT_UINT32: ((uint32_t *)dst)[i] = (uint32_t)v; break;
    default: break;
    }
}

/* Fills dst (numel elements of t->dtype) from the typed repeated field `fn`. */
static void fill_typed(dec *d, const uint8_t *data, size_t len, int fn, frt_onnx_tensor *t,
                       void *dst) {
    size_t esz = fn == 4 ? 4 : fn == 10 ? 8 : 0; /* fixed-width fields copy as bytes */
    size_t i = 0, n = (size_t)t->numel;
    frt_pb_field f;
    FOR_FIELDS(d, data, len, f) {
        if ((int)f.num != fn) continue;
        if (f.wire == FRT_PB_LEN) {
            if (esz) {
                size_t m = f.len / esz;
                if (m > n - i) m = n - i; /* cannot happen: counted in pass 1 */
                memcpy((uint8_t *)dst + i * esz, f.data, m * esz);
                i += m;
            } else {
                const uint8_t *p = f.data, *end = f.data + f.len;
                uint64_t v;
                while (p < end && i < n && frt_pb_varint(&p, end, &v)) store_int(dst, i++, t->dtype, v);
            }
        } else if (i < n) {
            if (esz == 4) {
                uint32_t w = (uint32_t)f.u;
                memcpy((uint8_t *)dst + i * 4, &w, 4);
                i++;
            } else if (esz == 8) {
                memcpy((uint8_t *)dst + i * 8, &f.u, 8);
                i++;
            } else {
                store_int(dst, i++, t->dtype, f.u);
            }
        }
    }
}

/* Which typed field may hold a dtype's values. */
static int typed_field_for(int32_t dt) {
    switch (dt) {
    case FRT_FLOAT32: return 4;
    case FRT_INT32: case FRT_INT16: case FRT_INT8: case FRT_UINT16: case FRT_UINT8:
    case FRT_BOOL: case FRT_FLOAT16: case FRT_BFLOAT16: return 5;
    case FRT_INT64: return 7;
    case FRT_FLOAT64: return 10;
    case FRT_UINT32: case FRT_UINT64: return 11;
    default: return 0;
    }
}

static frt_status decode_tensor(dec *d, const uint8_t *data, size_t len, size_t off,
                                frt_onnx_tensor *t) {
    scan s;
    frt_status st;
    t->name = "";
    t->ext_offset = 0;
    t->ext_length = -1;
    st = scan_msg(d, &TENSOR_SPEC, data, len, &s);
    label_str(d, &s, 8, &t->name);
    if (st) return st;
    if ((st = scan_str(d, &s, 8, "name", true, &t->name))) return st;
    if (has(&s, 3))
        return fail(d, FRT_ERR_UNSUPPORTED, s.off[3], "segmented tensors are not supported");
    if (!has(&s, 2)) return fail(d, FRT_ERR_MALFORMED, off, "tensor has no data_type");
    if ((st = get_int32(d, s.val[2], s.off[2], "data_type", &t->dtype))) return st;
    size_t esize = 0;
    if ((st = check_dtype(d, t->dtype, s.off[2], &esize))) return st;
    if (s.count[1] > FRT_MAX_RANK)
        return fail(d, FRT_ERR_UNSUPPORTED, s.off[1], "tensor rank %zu exceeds FRT_MAX_RANK (%d)",
                    s.count[1], FRT_MAX_RANK);
    t->rank = (int32_t)s.count[1];
    if (t->rank) { /* dims, packed or not */
        int32_t k = 0;
        frt_pb_field f;
        FOR_FIELDS(d, data, len, f) {
            if (f.num != 1) continue;
            if (f.wire == FRT_PB_VARINT) {
                if (k < FRT_MAX_RANK) t->dims[k++] = (int64_t)f.u;
            } else {
                const uint8_t *p = f.data, *end = f.data + f.len;
                uint64_t v;
                while (p < end && k < FRT_MAX_RANK && frt_pb_varint(&p, end, &v))
                    t->dims[k++] = (int64_t)v;
            }
        }
    }
    int64_t numel = 1;
    bool zero = false;
    for (int32_t i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0)
            return fail(d, FRT_ERR_MALFORMED, s.off[1], "negative dimension dims[%d] = %" PRId64,
                        (int)i, t->dims[i]);
        zero |= t->dims[i] == 0;
    }
    for (int32_t i = 0; i < t->rank && !zero; i++) {
        if (numel > INT64_MAX / t->dims[i])
            return fail(d, FRT_ERR_MALFORMED, s.off[1], "product of dims overflows int64");
        numel *= t->dims[i];
    }
    if (zero) numel = 0;
    t->numel = numel;
    if ((uint64_t)numel > SIZE_MAX / esize)
        return fail(d, FRT_ERR_MALFORMED, s.off[1], "tensor byte size overflows");
    t->nbytes = (size_t)numel * esize;

    if (has(&s, 6))
        return fail(d, FRT_ERR_UNSUPPORTED, s.off[6], "string_data is not supported");
    uint64_t loc = has(&s, 14) ? s.val[14] : 0;
    if (loc > 1)
        return fail(d, FRT_ERR_MALFORMED, s.off[14],
                    "data_location %" PRIu64 " is neither DEFAULT (0) nor EXTERNAL (1)", loc);
    static const int typed[] = {4, 5, 7, 10, 11};
    int typed_fn = 0, n_typed = 0;
    for (size_t i = 0; i < sizeof typed / sizeof typed[0]; i++)
        if (has(&s, typed[i])) {
            typed_fn = typed[i];
            n_typed++;
        }

    if (loc == 1) {
        if (has(&s, 9) || n_typed)
            return fail(d, FRT_ERR_MALFORMED, off, "external tensor also has inline data");
        t->external = true;
        if ((st = decode_external(d, data, len, t))) return st;
        if (!t->ext_location)
            return fail(d, FRT_ERR_MALFORMED, off, "external tensor has no location");
        if (t->ext_length >= 0 && (uint64_t)t->ext_length != (uint64_t)t->nbytes)
            return fail(d, FRT_ERR_MALFORMED, off,
                        "external data length %" PRId64 " does not match the tensor size %zu",
                        t->ext_length, t->nbytes);
        return FRT_OK;
    }
    if (has(&s, 9)) {
        if (n_typed)
            return fail(d, FRT_ERR_MALFORMED, off, "tensor has both raw_data and %s",
                        field_name(&TENSOR_SPEC, (unsigned)typed_fn));
        if (s.len[9] != t->nbytes)
            return fail(d, FRT_ERR_MALFORMED, s.off[9],
                        "raw_data has %zu bytes, expected %zu (%" PRId64 " elements of %s)",
                        s.len[9], t->nbytes, numel, onnx_type_name(t->dtype));
        if (t->nbytes == 0) return FRT_OK;
        const uint8_t *p = s.ptr[9];
        if ((uintptr_t)p % esize == 0) {
            t->data = p;
            t->in_place = true;
        } else if (d->lazy_align) {
            t->data = p;
            t->in_place = true;
            t->misaligned = true;
        } else {
            void *c = frt_arena_alloc(d->arena, t->nbytes, 64);
            if (!c)
                return fail(d, FRT_ERR_NO_MEMORY, s.off[9], "out of memory copying %zu bytes",
                            t->nbytes);
            memcpy(c, p, t->nbytes);
            t->data = c;
        }
        return FRT_OK;
    }
    if (n_typed) {
        if (n_typed > 1)
            return fail(d, FRT_ERR_MALFORMED, off, "tensor has several typed data fields");
        if (typed_fn != typed_field_for(t->dtype))
            return fail(d, FRT_ERR_MALFORMED, s.off[typed_fn], "%s given for a %s tensor",
                        field_name(&TENSOR_SPEC, (unsigned)typed_fn), onnx_type_name(t->dtype));
        if (s.count[typed_fn] != (uint64_t)numel)
            return fail(d, FRT_ERR_MALFORMED, s.off[typed_fn],
                        "%s has %zu elements, expected %" PRId64, field_name(&TENSOR_SPEC, (unsigned)typed_fn),
                        s.count[typed_fn], numel);
        if (numel == 0) return FRT_OK;
        void *dst = frt_arena_alloc(d->arena, t->nbytes, 64);
        if (!dst)
            return fail(d, FRT_ERR_NO_MEMORY, off, "out of memory allocating %zu bytes",
                        t->nbytes);
        fill_typed(d, data, len, typed_fn, t, dst);
        t->data = dst;
        return FRT_OK;
    }
    if (numel != 0)
        return fail(d, FRT_ERR_MALFORMED, off, "tensor has no data (expected %" PRId64
                    " elements)", numel);
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* ValueInfoProto                                                                                  */
/* ---------------------------------------------------------------------------------------------- */

/* hint: value_info entries, whose over-rank shapes are dropped instead of refused. */
static frt_status decode_shape(dec *d, const uint8_t *data, size_t len, size_t off,
                               frt_onnx_value_info *vi, bool hint) {
    scan s;
    frt_status st;
    if ((st = scan_msg(d, &SHAPE_SPEC, data, len, &s))) return st;
    if (s.count[1] > FRT_MAX_RANK) {
        if (hint) return FRT_OK; /* has_shape stays false */
        return fail(d, FRT_ERR_UNSUPPORTED, off, "rank %zu exceeds FRT_MAX_RANK (%d)", s.count[1],
                    FRT_MAX_RANK);
    }
    int32_t k = 0;
    frt_pb_field f;
    FOR_FIELDS(d, data, len, f) {
        if (f.num != 1) continue;
        scan ds;
        push(d, "dim", k, NULL, NULL);
        if ((st = scan_msg(d, &DIM_SPEC, f.data, f.len, &ds))) return st;
        frt_onnx_dim *dim = &vi->dims[k];
        dim->value = -1;
        dim->param = NULL;
        /* oneof: the later of dim_value / dim_param wins */
        bool use_value = has(&ds, 1) && (!has(&ds, 2) || ds.off[1] > ds.off[2]);
        if (use_value) {
            int64_t v = (int64_t)ds.val[1];
            dim->value = v >= 0 ? v : -1; /* some exporters write -1 for "unknown" */
        } else if (has(&ds, 2) && ds.len[2]) {
            if ((st = get_str(d, ds.ptr[2], ds.len[2], ds.off[2], "dim_param", true,
                              &dim->param)))
                return st;
        }
        pop(d);
        k++;
    }
    vi->rank = k;
    vi->has_shape = true;
    return FRT_OK;
}

/* TypeProto.Sequence and TypeProto.Optional: field 1 is the element's TypeProto. */
static const msg_spec ELEM_TYPE_SPEC = {"TypeProto.Sequence/Optional",
                                        {[1] = K_LEN},
                                        "1=elem_type\0"};

/* Decodes a TypeProto into vi: type_kind is the kind at this level; has_type is set for the kinds
 * flatrt holds (a tensor; a sequence of tensors; an optional tensor or sequence of tensors), with
 * elem_type and the shape of the (innermost) tensor type, and inner_kind for an optional. */
static frt_status decode_type(dec *d, const uint8_t *data, size_t len, frt_onnx_value_info *vi,
                              bool hint, int depth) {
    scan ts;
    frt_status st;
    if (depth > 4) return FRT_OK; /* nested deeper than flatrt holds: has_type stays false */
    if ((st = scan_msg(d, &TYPE_SPEC, data, len, &ts))) return st;
    /* oneof value: the kind that came last */
    static const int kinds[] = {1, 4, 5, 8, 9};
    int kind = 0;
    size_t koff = 0;
    for (size_t i = 0; i < 5; i++)
        if (has(&ts, kinds[i]) && (!kind || ts.off[kinds[i]] > koff)) {
            kind = kinds[i];
            koff = ts.off[kinds[i]];
        }
    vi->type_kind = kind;
    if (kind == FRT_ONNX_TYPE_TENSOR) {
        scan tt;
        if ((st = check_single(d, &ts, 1, "tensor_type"))) return st;
        push(d, "tensor_type", -1, NULL, NULL);
        if ((st = scan_msg(d, &TENSOR_TYPE_SPEC, ts.ptr[1], ts.len[1], &tt))) return st;
        vi->has_type = true;
        if (has(&tt, 1) && (st = get_int32(d, tt.val[1], tt.off[1], "elem_type", &vi->elem_type)))
            return st;
        if ((st = check_single(d, &tt, 2, "shape"))) return st;
        if (has(&tt, 2)) {
            push(d, "shape", -1, NULL, NULL);
            if ((st = decode_shape(d, tt.ptr[2], tt.len[2], tt.off[2], vi, hint))) return st;
            pop(d);
        }
        pop(d);
    } else if (!FRT_SEQUENCES &&
               (kind == FRT_ONNX_TYPE_SEQUENCE || kind == FRT_ONNX_TYPE_OPTIONAL)) {
        /* a selective build without sequence values (util/features.h): refused, not misread */
        return fail(d, FRT_ERR_UNSUPPORTED, koff,
                    "%s: feature 'sequences' not in this build's selection (%s); trace a model "
                    "with sequence or optional values to keep it",
                    kind == FRT_ONNX_TYPE_SEQUENCE ? "sequence_type" : "optional_type",
                    frt_selection_file());
    } else if (kind == FRT_ONNX_TYPE_SEQUENCE || kind == FRT_ONNX_TYPE_OPTIONAL) {
        const char *field = kind == FRT_ONNX_TYPE_SEQUENCE ? "sequence_type" : "optional_type";
        scan es;
        if ((st = check_single(d, &ts, kind, field))) return st;
        push(d, field, -1, NULL, NULL);
        if ((st = scan_msg(d, &ELEM_TYPE_SPEC, ts.ptr[kind], ts.len[kind], &es))) return st;
        if ((st = check_single(d, &es, 1, "elem_type"))) return st;
        frt_onnx_value_info in;
        memset(&in, 0, sizeof in);
        in.rank = -1;
        if (has(&es, 1)) {
            push(d, "elem_type", -1, NULL, NULL);
            if ((st = decode_type(d, es.ptr[1], es.len[1], &in, hint, depth + 1))) return st;
            pop(d);
        }
        pop(d);
        bool tensor_elem = in.has_type && in.type_kind == FRT_ONNX_TYPE_TENSOR;
        bool ok = kind == FRT_ONNX_TYPE_SEQUENCE
                      ? tensor_elem
                      : tensor_elem || (in.has_type && in.type_kind == FRT_ONNX_TYPE_SEQUENCE);
        if (ok) {
            vi->has_type = true;
            vi->inner_kind = in.type_kind;
            vi->elem_type = in.elem_type;
            vi->has_shape = in.has_shape;
            vi->rank = in.rank;
            memcpy(vi->dims, in.dims, sizeof vi->dims);
        }
    }
    return FRT_OK;
}

static frt_status decode_value_info(dec *d, const uint8_t *data, size_t len, size_t off,
                                    frt_onnx_value_info *vi, bool hint) {
    scan s;
    frt_status st;
    (void)off;
    vi->name = "";
    vi->rank = -1;
    vi->type_kind = FRT_ONNX_TYPE_NONE;
    st = scan_msg(d, &VALUE_INFO_SPEC, data, len, &s);
    label_str(d, &s, 1, &vi->name);
    if (st) return st;
    if ((st = scan_str(d, &s, 1, "name", true, &vi->name))) return st;
    if ((st = check_single(d, &s, 2, "type"))) return st;
    if (!has(&s, 2)) return FRT_OK;
    push(d, "type", -1, NULL, NULL);
    if ((st = decode_type(d, s.ptr[2], s.len[2], vi, hint, 0))) return st;
    pop(d);
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* AttributeProto, NodeProto, GraphProto                                                           */
/* ---------------------------------------------------------------------------------------------- */

static frt_status decode_graph(dec *d, const uint8_t *data, size_t len, size_t off,
                               frt_onnx_graph *g);

static const char *attr_type_name(int64_t t) {
    static const char *const names[] = {"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR",
                                        "GRAPH", "FLOATS", "INTS", "STRINGS", "TENSORS",
                                        "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS",
                                        "TYPE_PROTO", "TYPE_PROTOS"};
    return t >= 0 && t <= 14 ? names[t] : "unknown";
}

static frt_status decode_attr(dec *d, const uint8_t *data, size_t len, size_t off,
                              frt_onnx_attr *a) {
    scan s;
    frt_status st;
    st = scan_msg(d, &ATTR_SPEC, data, len, &s);
    label_str(d, &s, 1, &a->name);
    if (st) return st;
    if (!has(&s, 1) || s.len[1] == 0)
        return fail(d, FRT_ERR_MALFORMED, off, "attribute has no name");
    if ((st = scan_str(d, &s, 1, "name", true, &a->name))) return st;

    int64_t type = has(&s, 20) ? (int64_t)s.val[20] : 0;
    if (type < 0 || type > 14)
        return fail(d, FRT_ERR_MALFORMED, s.off[20], "unknown attribute type %" PRId64, type);
    if (type == 0) { /* old exporters: infer from the one value field present */
        static const struct { uint8_t field, type; } kinds[] = {
            {2, 1}, {3, 2}, {4, 3}, {5, 4}, {6, 5}, {7, 6}, {8, 7}, {9, 8}, {10, 9}, {11, 10},
            {22, 11}, {23, 12}, {14, 13}, {15, 14}};
        int found = 0;
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
            if (has(&s, kinds[i].field)) {
                if (found++)
                    return fail(d, FRT_ERR_MALFORMED, off,
                                "attribute has no type and several value fields");
                type = kinds[i].type;
            }
    }
    if (type > 10 && type != FRT_ATTR_TYPE_PROTO)
        return fail(d, FRT_ERR_UNSUPPORTED, off, "attributes of type %s are not supported",
                    attr_type_name(type));
    a->type = (frt_onnx_attr_type)type;
    if (!FRT_SUBGRAPHS && (a->type == FRT_ATTR_GRAPH || a->type == FRT_ATTR_GRAPHS))
        /* a selective build without subgraphs (util/features.h): refused, not misread */
        return fail(d, FRT_ERR_UNSUPPORTED, off,
                    "attribute '%s' is a subgraph: feature 'subgraphs' not in this build's "
                    "selection (%s); trace a model with subgraphs (If, Loop, Scan) to keep it",
                    a->name, frt_selection_file());

    switch (a->type) {
    case FRT_ATTR_UNDEFINED: break;
    case FRT_ATTR_FLOAT: {
        uint32_t w = (uint32_t)s.val[2];
        memcpy(&a->f, &w, 4);
        break;
    }
    case FRT_ATTR_INT: a->i = (int64_t)s.val[3]; break;
    case FRT_ATTR_STRING: {
        const char *str = "";
        if ((st = get_str(d, has(&s, 4) ? s.ptr[4] : (const uint8_t *)"", s.len[4], s.off[4], "s",
                          false, &str)))
            return st;
        a->s = str;
        a->s_len = s.len[4];
        break;
    }
    case FRT_ATTR_TENSOR:
        if (!has(&s, 5)) return fail(d, FRT_ERR_MALFORMED, off, "TENSOR attribute without t");
        if ((st = check_single(d, &s, 5, "t"))) return st;
        if (!(a->t = ALLOC_ARRAY(d, 1, frt_onnx_tensor, off))) return d->err;
        push(d, "t", -1, &a->t->name, NULL);
        if ((st = decode_tensor(d, s.ptr[5], s.len[5], s.off[5], a->t))) return st;
        pop(d);
        break;
    case FRT_ATTR_TYPE_PROTO:
        if (!has(&s, 14)) return fail(d, FRT_ERR_MALFORMED, off, "TYPE_PROTO attribute without tp");
        if ((st = check_single(d, &s, 14, "tp"))) return st;
        if (!(a->tp = ALLOC_ARRAY(d, 1, frt_onnx_value_info, off))) return d->err;
        a->tp->name = "";
        a->tp->rank = -1;
        push(d, "tp", -1, NULL, NULL);
        if ((st = decode_type(d, s.ptr[14], s.len[14], a->tp, true, 0))) return st;
        pop(d);
        break;
    case FRT_ATTR_GRAPH:
        if (!has(&s, 6)) return fail(d, FRT_ERR_MALFORMED, off, "GRAPH attribute without g");
        if ((st = check_single(d, &s, 6, "g"))) return st;
        if (!(a->g = ALLOC_ARRAY(d, 1, frt_onnx_graph, off))) return d->err;
        push(d, "g", -1, NULL, NULL);
        if ((st = decode_graph(d, s.ptr[6], s.len[6], s.off[6], a->g))) return st;
        pop(d);
        break;
    case FRT_ATTR_FLOATS:
    case FRT_ATTR_INTS:
    case FRT_ATTR_STRINGS:
    case FRT_ATTR_TENSORS:
    case FRT_ATTR_GRAPHS: {
        int fn = (int)a->type + 1; /* FLOATS=6 -> field 7, ..., GRAPHS=10 -> field 11 */
        size_t n = s.count[fn], i = 0;
        a->n = n;
        if (n == 0) break;
        switch (a->type) {
        case FRT_ATTR_FLOATS: a->floats = ALLOC_ARRAY(d, n, float, off); break;
        case FRT_ATTR_INTS: a->ints = ALLOC_ARRAY(d, n, int64_t, off); break;
        case FRT_ATTR_STRINGS: a->strings = ALLOC_ARRAY(d, n, const char *, off); break;
        case FRT_ATTR_TENSORS: a->tensors = ALLOC_ARRAY(d, n, frt_onnx_tensor, off); break;
        default: a->graphs = ALLOC_ARRAY(d, n, frt_onnx_graph, off); break;
        }
        if (d->err) return d->err;
        frt_pb_field f;
        FOR_FIELDS(d, data, len, f) {
            if ((int)f.num != fn || i >= n) continue;
            switch (a->type) {
            case FRT_ATTR_FLOATS:
                if (f.wire == FRT_PB_LEN) {
                    size_t m = f.len / 4;
                    if (m > n - i) m = n - i;
                    memcpy(a->floats + i, f.data, m * 4);
                    i += m;
                } else {
                    uint32_t w = (uint32_t)f.u;
                    memcpy(&a->floats[i++], &w, 4);
                }
                break;
            case FRT_ATTR_INTS:
                if (f.wire == FRT_PB_LEN) {
                    const uint8_t *p = f.data, *end = f.data + f.len;
                    uint64_t v;
                    while (p < end && i < n && frt_pb_varint(&p, end, &v)) a->ints[i++] = (int64_t)v;
                } else {
                    a->ints[i++] = (int64_t)f.u;
                }
                break;
            case FRT_ATTR_STRINGS:
                if ((st = get_str(d, f.data, f.len, f.offset, "strings", false, &a->strings[i])))
                    return st;
                i++;
                break;
            case FRT_ATTR_TENSORS:
                push(d, "tensors", (int64_t)i, &a->tensors[i].name, NULL);
                if ((st = decode_tensor(d, f.data, f.len, f.offset, &a->tensors[i]))) return st;
                pop(d);
                i++;
                break;
            default:
                push(d, "graphs", (int64_t)i, NULL, NULL);
                if ((st = decode_graph(d, f.data, f.len, f.offset, &a->graphs[i]))) return st;
                pop(d);
                i++;
                break;
            }
        }
        break;
    }
    }
    return FRT_OK;
}

static frt_status decode_node(dec *d, const uint8_t *data, size_t len, size_t off,
                              frt_onnx_node *n) {
    scan s;
    frt_status st;
    n->name = "";
    st = scan_msg(d, &NODE_SPEC, data, len, &s);
    label_str(d, &s, 3, &n->name);
    label_str(d, &s, 4, &n->op_type);
    if (st) return st;
    if ((st = scan_str(d, &s, 3, "name", true, &n->name))) return st;
    if ((st = scan_str(d, &s, 4, "op_type", true, &n->op_type))) return st;
    if (!*n->op_type) return fail(d, FRT_ERR_MALFORMED, off, "node has no op_type");
    if ((st = scan_str(d, &s, 7, "domain", true, &n->domain))) return st;
    n->domain = normalize_domain(n->domain);
    n->n_inputs = s.count[1];
    n->n_outputs = s.count[2];
    n->n_attrs = s.count[5];
    n->inputs = ALLOC_ARRAY(d, n->n_inputs, const char *, off);
    n->outputs = ALLOC_ARRAY(d, n->n_outputs, const char *, off);
    n->attrs = ALLOC_ARRAY(d, n->n_attrs, frt_onnx_attr, off);
    if (d->err) return d->err;
    size_t ni = 0, no = 0, na = 0;
    frt_pb_field f;
    FOR_FIELDS(d, data, len, f) {
        switch (f.num) {
        case 1:
            if (ni < n->n_inputs &&
                (st = get_str(d, f.data, f.len, f.offset, "input name", true, &n->inputs[ni++])))
                return st;
            break;
        case 2:
            if (no < n->n_outputs &&
                (st = get_str(d, f.data, f.len, f.offset, "output name", true, &n->outputs[no++])))
                return st;
            break;
        case 5:
            if (na >= n->n_attrs) break;
            push(d, "attribute", (int64_t)na, &n->attrs[na].name, NULL);
            if ((st = decode_attr(d, f.data, f.len, f.offset, &n->attrs[na]))) return st;
            pop(d);
            na++;
            break;
        default: break;
        }
    }
    return FRT_OK;
}

static frt_status decode_graph(dec *d, const uint8_t *data, size_t len, size_t off,
                               frt_onnx_graph *g) {
    scan s;
    frt_status st;
    if (d->graph_depth >= MAX_GRAPH_DEPTH)
        return fail(d, FRT_ERR_UNSUPPORTED, off, "subgraphs nested deeper than %d levels",
                    MAX_GRAPH_DEPTH);
    d->graph_depth++;
    g->name = "";
    if ((st = scan_msg(d, &GRAPH_SPEC, data, len, &s))) return st;
    if ((st = scan_str(d, &s, 2, "name", true, &g->name))) return st;
    if (has(&s, 15))
        return fail(d, FRT_ERR_UNSUPPORTED, s.off[15], "sparse_initializer is not supported");
    g->n_nodes = s.count[1];
    g->n_initializers = s.count[5];
    g->n_inputs = s.count[11];
    g->n_outputs = s.count[12];
    g->n_value_info = s.count[13];
    g->nodes = ALLOC_ARRAY(d, g->n_nodes, frt_onnx_node, off);
    g->initializers = ALLOC_ARRAY(d, g->n_initializers, frt_onnx_tensor, off);
    g->inputs = ALLOC_ARRAY(d, g->n_inputs, frt_onnx_value_info, off);
    g->outputs = ALLOC_ARRAY(d, g->n_outputs, frt_onnx_value_info, off);
    g->value_info = ALLOC_ARRAY(d, g->n_value_info, frt_onnx_value_info, off);
    if (d->err) return d->err;
    size_t nn = 0, nt = 0, ni = 0, no = 0, nv = 0;
    frt_pb_field f;
    FOR_FIELDS(d, data, len, f) {
        switch (f.num) {
        case 1:
            if (nn >= g->n_nodes) break;
            push(d, "node", (int64_t)nn, &g->nodes[nn].name, &g->nodes[nn].op_type);
            if ((st = decode_node(d, f.data, f.len, f.offset, &g->nodes[nn]))) return st;
            pop(d);
            nn++;
            break;
        case 5:
            if (nt >= g->n_initializers) break;
            push(d, "initializer", (int64_t)nt, &g->initializers[nt].name, NULL);
            d->lazy_align = true;
            st = decode_tensor(d, f.data, f.len, f.offset, &g->initializers[nt]);
            d->lazy_align = false;
            if (st) return st;
            pop(d);
            nt++;
            break;
        case 11:
            if (ni >= g->n_inputs) break;
            push(d, "input", (int64_t)ni, &g->inputs[ni].name, NULL);
            if ((st = decode_value_info(d, f.data, f.len, f.offset, &g->inputs[ni], false)))
                return st;
            pop(d);
            ni++;
            break;
        case 12:
            if (no >= g->n_outputs) break;
            push(d, "output", (int64_t)no, &g->outputs[no].name, NULL);
            if ((st = decode_value_info(d, f.data, f.len, f.offset, &g->outputs[no], false)))
                return st;
            pop(d);
            no++;
            break;
        case 13:
            if (nv >= g->n_value_info) break;
            push(d, "value_info", (int64_t)nv, &g->value_info[nv].name, NULL);
            if ((st = decode_value_info(d, f.data, f.len, f.offset, &g->value_info[nv], true)))
                return st;
            pop(d);
            nv++;
            break;
        default: break;
        }
    }
    d->graph_depth--;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* ModelProto                                                                                      */
/* ---------------------------------------------------------------------------------------------- */

static frt_status decode_model(dec *d, const uint8_t *data, size_t len, frt_onnx_model *m) {
    scan s;
    frt_status st;
    if ((st = scan_msg(d, &MODEL_SPEC, data, len, &s))) return st;
    m->ir_version = (int64_t)s.val[1];
    if ((st = scan_str(d, &s, 2, "producer_name", false, &m->producer_name))) return st;
    if ((st = scan_str(d, &s, 3, "producer_version", false, &m->producer_version))) return st;
    if (!has(&s, 7)) return fail(d, FRT_ERR_MALFORMED, len, "model has no graph");
    if ((st = check_single(d, &s, 7, "graph"))) return st;

    m->n_opsets = s.count[8];
    m->opsets = ALLOC_ARRAY(d, m->n_opsets, frt_onnx_opset, 0);
    if (d->err) return d->err;
    size_t k = 0;
    frt_pb_field f;
    FOR_FIELDS(d, data, len, f) {
        if (f.num != 8 || k >= m->n_opsets) continue;
        scan os;
        push(d, "opset_import", (int64_t)k, NULL, NULL);
        if ((st = scan_msg(d, &OPSET_SPEC, f.data, f.len, &os))) return st;
        frt_onnx_opset *o = &m->opsets[k++];
        if ((st = scan_str(d, &os, 1, "domain", true, &o->domain))) return st;
        o->domain = normalize_domain(o->domain);
        o->version = (int64_t)os.val[2];
        pop(d);
    }

    if (!(m->graph = ALLOC_ARRAY(d, 1, frt_onnx_graph, s.off[7]))) return d->err;
    push(d, "graph", -1, NULL, NULL);
    if ((st = decode_graph(d, s.ptr[7], s.len[7], s.off[7], m->graph))) return st;
    pop(d);
    return FRT_OK;
}

frt_status frt_onnx_decode(const void *buf, size_t len, frt_onnx_model **out) {
    static const uint8_t empty[1];
    if (!out) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_onnx_decode: out is NULL");
    *out = NULL;
    if (!buf && len) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_onnx_decode: buffer is NULL");
    frt_onnx_model *m = calloc(1, sizeof *m);
    dec *d = calloc(1, sizeof *d); /* every field starts zeroed: lazy_align, depth, ... */
    if (!m || !d) {
        free(m);
        free(d);
        return frt_error(FRT_ERR_NO_MEMORY, "out of memory decoding ONNX");
    }
    frt_arena_init(&m->arena);
    d->arena = &m->arena;
    d->base = buf ? (const uint8_t *)buf : empty;
    frt_status st = decode_model(d, d->base, len, m);
    if (st != FRT_OK) {
        char path[1024];
        render_path(d, path, sizeof path);
        const char *kind = st == FRT_ERR_MALFORMED     ? "malformed ONNX"
                           : st == FRT_ERR_UNSUPPORTED ? "unsupported ONNX"
                           : st == FRT_ERR_NO_MEMORY   ? "out of memory decoding ONNX"
                                                       : "ONNX decode failed";
        frt_error(st, "%s: %s: %s at byte %zu", kind, path, d->err_msg, d->err_off);
        free(d);
        frt_onnx_model_free(m);
        return st;
    }
    free(d);
    *out = m;
    return FRT_OK;
}
