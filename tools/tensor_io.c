/* tensor_io: .npy and ONNX TensorProto (.pb) readers, .npy writer. Contracts in tensor_io.h. */
#include "tensor_io.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tensor_io assumes a little-endian host (raw_data and '<' npy payloads are copied as is)"
#endif

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Prefixes err with "path: " (keeps the message when it does not fit). */
static int fail_in(const char *path, char *err, size_t errlen) {
    if (!path || !err || !errlen) return -1;
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", err);
    snprintf(err, errlen, "%s: %s", path, tmp);
    return -1;
}

void tio_tensor_free(frt_tensor *t) {
    if (!t) return;
    free(t->data);
    memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------------------------------------- */
/* Element types                                                                                   */
/* ---------------------------------------------------------------------------------------------- */

typedef struct npy_type {
    const char *code; /* descr without the byte-order character */
    frt_dtype dtype;
    size_t size;
} npy_type;

static const npy_type k_npy_types[] = {
    {"f4", FRT_FLOAT32, 4}, {"f8", FRT_FLOAT64, 8}, {"f2", FRT_FLOAT16, 2}, {"i1", FRT_INT8, 1},
    {"u1", FRT_UINT8, 1},   {"b1", FRT_BOOL, 1},    {"?", FRT_BOOL, 1},     {"i2", FRT_INT16, 2},
    {"u2", FRT_UINT16, 2},  {"i4", FRT_INT32, 4},   {"u4", FRT_UINT32, 4},  {"i8", FRT_INT64, 8},
    {"u8", FRT_UINT64, 8},
};

const char *tio_npy_descr(frt_dtype dtype) {
    switch (dtype) {
    case FRT_FLOAT32: return "<f4";
    case FRT_FLOAT64: return "<f8";
    case FRT_FLOAT16: return "<f2";
    case FRT_INT8: return "|i1";
    case FRT_UINT8: return "|u1";
    case FRT_BOOL: return "|b1";
    case FRT_INT16: return "<i2";
    case FRT_UINT16: return "<u2";
    case FRT_INT32: return "<i4";
    case FRT_UINT32: return "<u4";
    case FRT_INT64: return "<i8";
    case FRT_UINT64: return "<u8";
    default: return NULL;
    }
}

/* Element size of the dtypes this file handles (0 otherwise); independent of the library. */
static size_t elem_size(frt_dtype t) {
    switch (t) {
    case FRT_FLOAT32: case FRT_INT32: case FRT_UINT32: return 4;
    case FRT_FLOAT64: case FRT_INT64: case FRT_UINT64: return 8;
    case FRT_FLOAT16: case FRT_INT16: case FRT_UINT16: case FRT_BFLOAT16: return 2;
    case FRT_INT8: case FRT_UINT8: case FRT_BOOL: return 1;
    default: return 0;
    }
}

static const char *dtype_str(int t) {
    switch (t) {
    case FRT_FLOAT32: return "float32";
    case FRT_UINT8: return "uint8";
    case FRT_INT8: return "int8";
    case FRT_UINT16: return "uint16";
    case FRT_INT16: return "int16";
    case FRT_INT32: return "int32";
    case FRT_INT64: return "int64";
    case FRT_STRING: return "string";
    case FRT_BOOL: return "bool";
    case FRT_FLOAT16: return "float16";
    case FRT_FLOAT64: return "float64";
    case FRT_UINT32: return "uint32";
    case FRT_UINT64: return "uint64";
    case 14: return "complex64";
    case 15: return "complex128";
    case 16: return "bfloat16";
    default: return "unknown";
    }
}

/* numel of dims[0..rank) into *numel and numel * esize into *nbytes; -1 on a negative dim or
 * overflow (message in err). */
static int count_bytes(const int64_t *dims, int rank, size_t esize, int64_t *numel,
                       size_t *nbytes, char *err, size_t errlen) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) return fail(err, errlen, "negative dimension %lld", (long long)dims[i]);
        if (__builtin_mul_overflow(n, dims[i], &n))
            return fail(err, errlen, "element count overflows");
    }
    size_t b;
    if ((uint64_t)n > SIZE_MAX || __builtin_mul_overflow((size_t)n, esize, &b) ||
        b > TIO_MAX_FILE_BYTES)
        return fail(err, errlen, "tensor size is absurd (%lld elements)", (long long)n);
    *numel = n;
    *nbytes = b;
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* .npy                                                                                            */
/* ---------------------------------------------------------------------------------------------- */

static const unsigned char k_npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* Cursor over the header text [p, end). */
typedef struct hcur {
    const char *p, *end;
} hcur;

static void h_ws(hcur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int h_peek(const hcur *c) { return c->p < c->end ? (unsigned char)*c->p : -1; }

/* A Python string literal in single or double quotes, without escapes, into out[0..outlen). */
static int h_string(hcur *c, char *out, size_t outlen, char *err, size_t errlen) {
    int q = h_peek(c);
    if (q != '\'' && q != '"') return fail(err, errlen, "expected a quoted string in the header");
    c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\') return fail(err, errlen, "escape sequences in header strings are not supported");
        if (n + 1 >= outlen) return fail(err, errlen, "header string too long");
        out[n++] = *c->p++;
    }
    if (c->p >= c->end) return fail(err, errlen, "unterminated string in the header");
    c->p++;
    out[n] = 0;
    return 0;
}

static int h_word(hcur *c, const char *w) {
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0) return 0;
    c->p += n;
    return 1;
}

/* A non-negative decimal integer (optionally with Python 2's 'L' suffix). */
static int h_int(hcur *c, int64_t *v, char *err, size_t errlen) {
    int digits = 0;
    int64_t x = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, *c->p - '0', &x))
            return fail(err, errlen, "shape entry too large");
        c->p++;
        digits++;
    }
    if (!digits) return fail(err, errlen, "bad shape entry (expected a non-negative integer)");
    if (c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++;
    *v = x;
    return 0;
}

/* A shape tuple "(d0, d1, ...)" with an optional trailing comma. */
static int h_shape(hcur *c, int64_t *dims, int *rank, char *err, size_t errlen) {
    if (h_peek(c) != '(') return fail(err, errlen, "'shape' is not a tuple");
    c->p++;
    *rank = 0;
    h_ws(c);
    while (h_peek(c) != ')') {
        if (*rank >= FRT_MAX_RANK)
            return fail(err, errlen, "rank above %d is not supported", FRT_MAX_RANK);
        if (h_int(c, &dims[*rank], err, errlen)) return -1;
        (*rank)++;
        h_ws(c);
        if (h_peek(c) == ',') {
            c->p++;
            h_ws(c);
        } else if (h_peek(c) != ')') {
            return fail(err, errlen, "bad shape tuple (expected ',' or ')')");
        }
    }
    c->p++;
    return 0;
}

/* Maps a descr string to a type; *swap set when the payload is big-endian. */
static int npy_descr_type(const char *descr, const npy_type **type, int *swap, char *err,
                          size_t errlen) {
    const char *code = descr;
    char order = '=';
    if (*code == '<' || *code == '>' || *code == '|' || *code == '=') order = *code++;
    for (size_t i = 0; i < sizeof k_npy_types / sizeof k_npy_types[0]; i++) {
        if (strcmp(code, k_npy_types[i].code) == 0) {
            *type = &k_npy_types[i];
            *swap = order == '>' && k_npy_types[i].size > 1;
            return 0;
        }
    }
    return fail(err, errlen,
                "unsupported dtype '%s' (supported: float16/32/64, int8/16/32/64, uint8/16/32/64, "
                "bool)",
                descr);
}

static void byteswap(unsigned char *p, size_t n, size_t esize) {
    for (size_t i = 0; i + esize <= n; i += esize)
        for (size_t a = 0, b = esize - 1; a < b; a++, b--) {
            unsigned char t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

int tio_npy_parse(const void *buf, size_t size, frt_tensor *out, char *err, size_t errlen) {
    const unsigned char *b = buf;
    memset(out, 0, sizeof *out);
    if (!b || size < 10 || memcmp(b, k_npy_magic, 6) != 0)
        return fail(err, errlen, "not a .npy file (missing \\x93NUMPY magic)");
    unsigned major = b[6];
    size_t hstart, hlen;
    if (major == 1) {
        hstart = 10;
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
    } else if (major == 2 || major == 3) {
        if (size < 12) return fail(err, errlen, "truncated .npy preamble");
        hstart = 12;
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    } else {
        return fail(err, errlen, "unsupported .npy format version %u.%u", major, (unsigned)b[7]);
    }
    if (hlen > size - hstart)
        return fail(err, errlen, "truncated .npy header (%zu bytes declared, %zu present)", hlen,
                    size - hstart);

    hcur c = {(const char *)b + hstart, (const char *)b + hstart + hlen};
    char descr[64] = {0};
    int have_descr = 0, have_fortran = 0, have_shape = 0, fortran = 0, rank = 0;
    int64_t dims[FRT_MAX_RANK] = {0};

    h_ws(&c);
    if (h_peek(&c) != '{') return fail(err, errlen, "header is not a dict");
    c.p++;
    for (;;) {
        h_ws(&c);
        if (h_peek(&c) == '}') {
            c.p++;
            break;
        }
        char key[64];
        if (h_string(&c, key, sizeof key, err, errlen)) return -1;
        h_ws(&c);
        if (h_peek(&c) != ':') return fail(err, errlen, "expected ':' after '%s' in the header", key);
        c.p++;
        h_ws(&c);
        if (strcmp(key, "descr") == 0) {
            if (have_descr++) return fail(err, errlen, "duplicate 'descr' in the header");
            if (h_peek(&c) == '[')
                return fail(err, errlen, "structured (record) dtypes are not supported");
            if (h_string(&c, descr, sizeof descr, err, errlen)) return -1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (have_fortran++) return fail(err, errlen, "duplicate 'fortran_order' in the header");
            if (h_word(&c, "False")) fortran = 0;
            else if (h_word(&c, "True")) fortran = 1;
            else return fail(err, errlen, "'fortran_order' is neither True nor False");
        } else if (strcmp(key, "shape") == 0) {
            if (have_shape++) return fail(err, errlen, "duplicate 'shape' in the header");
            if (h_shape(&c, dims, &rank, err, errlen)) return -1;
        } else {
            return fail(err, errlen, "unexpected key '%s' in the header", key);
        }
        h_ws(&c);
        if (h_peek(&c) == ',') c.p++;
        else if (h_peek(&c) != '}') return fail(err, errlen, "expected ',' or '}' in the header");
    }
    h_ws(&c);
    if (c.p != c.end) return fail(err, errlen, "unexpected text after the header dict");
    if (!have_descr || !have_fortran || !have_shape)
        return fail(err, errlen, "header lacks '%s'",
                    !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
    if (fortran)
        return fail(err, errlen,
                    "Fortran-ordered arrays are not supported (save np.ascontiguousarray(a))");

    const npy_type *type = NULL;
    int swap = 0;
    if (npy_descr_type(descr, &type, &swap, err, errlen)) return -1;
    int64_t numel;
    size_t nbytes;
    if (count_bytes(dims, rank, type->size, &numel, &nbytes, err, errlen)) return -1;
    size_t avail = size - hstart - hlen;
    if (avail < nbytes)
        return fail(err, errlen, "truncated data: shape needs %zu bytes, file holds %zu", nbytes,
                    avail);
    if (avail > nbytes)
        return fail(err, errlen, "%zu unexpected bytes after the data (shape needs %zu)",
                    avail - nbytes, nbytes);

    void *data = malloc(nbytes ? nbytes : 1);
    if (!data) return fail(err, errlen, "out of memory (%zu bytes)", nbytes);
    if (nbytes) memcpy(data, b + hstart + hlen, nbytes);
    if (swap) byteswap(data, nbytes, type->size);
    out->dtype = type->dtype;
    out->rank = rank;
    for (int i = 0; i < rank; i++) out->shape[i] = dims[i];
    out->data = data;
    out->nbytes = nbytes;
    out->_owner = NULL;
    return 0;
}

int tio_npy_encode(const frt_tensor *t, void **buf, size_t *size, char *err, size_t errlen) {
    *buf = NULL;
    *size = 0;
    const char *descr = tio_npy_descr(t->dtype);
    if (!descr) return fail(err, errlen, "cannot store a %s tensor in .npy", dtype_str(t->dtype));
    if (t->rank < 0 || t->rank > FRT_MAX_RANK) return fail(err, errlen, "bad rank %d", t->rank);
    int64_t numel;
    size_t nbytes;
    if (count_bytes(t->shape, t->rank, elem_size(t->dtype), &numel, &nbytes, err, errlen))
        return -1;
    if (t->nbytes != nbytes)
        return fail(err, errlen, "tensor holds %zu bytes but its shape needs %zu", t->nbytes,
                    nbytes);
    if (nbytes && !t->data) return fail(err, errlen, "tensor has no data");

    char hdr[512];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < t->rank; i++)
        n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%lld%s", (long long)t->shape[i],
                      t->rank == 1 ? "," : i + 1 < t->rank ? ", " : "");
    n += snprintf(hdr + n, sizeof hdr - (size_t)n, "), }");
    /* Worst case: 8 dims of 20 digits plus the fixed text stays far below sizeof hdr. */
    size_t text = (size_t)n + 1; /* + '\n' */
    size_t pre = text + 10 <= 65535 + 10 ? 10 : 12;
    size_t hlen = (text + pre + 63) / 64 * 64 - pre;
    size_t total = pre + hlen + nbytes;
    unsigned char *o = malloc(total);
    if (!o) return fail(err, errlen, "out of memory (%zu bytes)", total);
    memcpy(o, k_npy_magic, 6);
    o[6] = pre == 10 ? 1 : 2;
    o[7] = 0;
    if (pre == 10) {
        o[8] = (unsigned char)(hlen & 0xff);
        o[9] = (unsigned char)(hlen >> 8);
    } else {
        for (int i = 0; i < 4; i++) o[8 + i] = (unsigned char)(hlen >> (8 * i));
    }
    memcpy(o + pre, hdr, (size_t)n);
    memset(o + pre + n, ' ', hlen - (size_t)n - 1);
    o[pre + hlen - 1] = '\n';
    if (nbytes) memcpy(o + pre + hlen, t->data, nbytes);
    *buf = o;
    *size = total;
    return 0;
}

int tio_npy_save(const char *path, const frt_tensor *t, char *err, size_t errlen) {
    void *buf;
    size_t size;
    if (tio_npy_encode(t, &buf, &size, err, errlen)) return fail_in(path, err, errlen);
    FILE *f = fopen(path, "wb");
    if (!f) {
        int e = errno;
        free(buf);
        return fail(err, errlen, "cannot write %s: %s", path, strerror(e));
    }
    size_t w = fwrite(buf, 1, size, f);
    int e = errno;
    int close_failed = fclose(f) != 0;
    free(buf);
    if (w != size || close_failed)
        return fail(err, errlen, "cannot write %s: %s", path, strerror(w != size ? e : errno));
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* TensorProto (.pb)                                                                               */
/* ---------------------------------------------------------------------------------------------- */

/* A growable array of fixed-size elements. */
typedef struct vec {
    unsigned char *data;
    size_t n, cap, esize;
} vec;

static int vec_reserve(vec *v, size_t more) {
    if (more <= v->cap - v->n) return 0;
    size_t want = v->n + more, cap = v->cap ? v->cap : 16;
    if (want > TIO_MAX_FILE_BYTES / v->esize) return -1;
    while (cap < want) cap *= 2;
    void *p = realloc(v->data, cap * v->esize);
    if (!p) return -1;
    v->data = p;
    v->cap = cap;
    return 0;
}

static int vec_push(vec *v, const void *x) {
    if (vec_reserve(v, 1)) return -1;
    memcpy(v->data + v->n * v->esize, x, v->esize);
    v->n++;
    return 0;
}

static int pb_varint(const unsigned char **p, const unsigned char *end, uint64_t *v) {
    uint64_t x = 0;
    for (int i = 0; i < 10; i++) {
        if (*p >= end) return -1;
        unsigned char byte = *(*p)++;
        if (i == 9 && byte > 1) return -1; /* more than 64 bits */
        x |= (uint64_t)(byte & 0x7f) << (7 * i);
        if (!(byte & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* Kinds of value a repeated field holds. */
enum { PB_VARINT, PB_FIXED32, PB_FIXED64 };

/* Appends one (wire type 0/1/5) or a packed run (wire type 2) of values of the given kind to v
 * (8-byte slots for varints and fixed64, 4-byte for fixed32). Returns -1 with a message. */
static int pb_repeated(int kind, int wt, const unsigned char **p, const unsigned char *end, vec *v,
                       int field, char *err, size_t errlen) {
    int want_wt = kind == PB_VARINT ? 0 : kind == PB_FIXED32 ? 5 : 1;
    size_t width = kind == PB_FIXED32 ? 4 : 8;
    if (wt == want_wt) {
        if (kind == PB_VARINT) {
            uint64_t x;
            if (pb_varint(p, end, &x)) return fail(err, errlen, "truncated varint in field %d", field);
            if (vec_push(v, &x)) return fail(err, errlen, "out of memory");
        } else {
            if ((size_t)(end - *p) < width) return fail(err, errlen, "truncated field %d", field);
            if (vec_push(v, *p)) return fail(err, errlen, "out of memory");
            *p += width;
        }
        return 0;
    }
    if (wt != 2) return fail(err, errlen, "field %d has unexpected wire type %d", field, wt);
    uint64_t len;
    if (pb_varint(p, end, &len) || len > (uint64_t)(end - *p))
        return fail(err, errlen, "truncated packed field %d", field);
    const unsigned char *q = *p, *qend = *p + len;
    *p = qend;
    if (kind == PB_VARINT) {
        while (q < qend) {
            uint64_t x;
            if (pb_varint(&q, qend, &x))
                return fail(err, errlen, "bad varint in packed field %d", field);
            if (vec_push(v, &x)) return fail(err, errlen, "out of memory");
        }
        return 0;
    }
    if (len % width)
        return fail(err, errlen, "packed field %d: %llu bytes is not a multiple of %zu", field,
                    (unsigned long long)len, width);
    if (!len) return 0;
    if (vec_reserve(v, len / width)) return fail(err, errlen, "out of memory");
    memcpy(v->data + v->n * width, q, len);
    v->n += len / width;
    return 0;
}

/* Skips a field of wire type wt. */
static int pb_skip(int wt, const unsigned char **p, const unsigned char *end) {
    uint64_t x;
    switch (wt) {
    case 0: return pb_varint(p, end, &x);
    case 1:
        if (end - *p < 8) return -1;
        *p += 8;
        return 0;
    case 5:
        if (end - *p < 4) return -1;
        *p += 4;
        return 0;
    case 2:
        if (pb_varint(p, end, &x) || x > (uint64_t)(end - *p)) return -1;
        *p += x;
        return 0;
    default: return -1; /* groups (3, 4) and invalid types */
    }
}

typedef struct pb_tensor {
    vec dims, f32, i32, i64, f64, u64; /* i32/i64/u64 hold raw varints (uint64) */
    const unsigned char *raw;
    size_t raw_len;
    int has_raw, has_strings;
    uint64_t data_type;
    const unsigned char *name;
    size_t name_len;
} pb_tensor;

static void pb_tensor_free(pb_tensor *t) {
    free(t->dims.data);
    free(t->f32.data);
    free(t->i32.data);
    free(t->i64.data);
    free(t->f64.data);
    free(t->u64.data);
}

static int pb_decode(const unsigned char *p, const unsigned char *end, pb_tensor *t, char *err,
                     size_t errlen) {
    while (p < end) {
        uint64_t key;
        if (pb_varint(&p, end, &key)) return fail(err, errlen, "truncated field key");
        int wt = (int)(key & 7);
        uint64_t field = key >> 3;
        if (field == 0) return fail(err, errlen, "invalid field number 0");
        switch (field) {
        case 1:
            if (pb_repeated(PB_VARINT, wt, &p, end, &t->dims, 1, err, errlen)) return -1;
            break;
        case 2:
            if (wt != 0) return fail(err, errlen, "data_type has wire type %d", wt);
            if (pb_varint(&p, end, &t->data_type)) return fail(err, errlen, "truncated data_type");
            break;
        case 3: return fail(err, errlen, "segmented tensors are not supported");
        case 4:
            if (pb_repeated(PB_FIXED32, wt, &p, end, &t->f32, 4, err, errlen)) return -1;
            break;
        case 5:
            if (pb_repeated(PB_VARINT, wt, &p, end, &t->i32, 5, err, errlen)) return -1;
            break;
        case 7:
            if (pb_repeated(PB_VARINT, wt, &p, end, &t->i64, 7, err, errlen)) return -1;
            break;
        case 10:
            if (pb_repeated(PB_FIXED64, wt, &p, end, &t->f64, 10, err, errlen)) return -1;
            break;
        case 11:
            if (pb_repeated(PB_VARINT, wt, &p, end, &t->u64, 11, err, errlen)) return -1;
            break;
        case 6: case 8: case 9: {
            if (wt != 2) return fail(err, errlen, "field %d has wire type %d", (int)field, wt);
            uint64_t len;
            if (pb_varint(&p, end, &len) || len > (uint64_t)(end - p))
                return fail(err, errlen, "truncated field %d", (int)field);
            if (field == 6) t->has_strings = 1;
            if (field == 8) {
                t->name = p;
                t->name_len = (size_t)len;
            }
            if (field == 9) {
                t->raw = p;
                t->raw_len = (size_t)len;
                t->has_raw = 1;
            }
            p += len;
            break;
        }
        case 13: return fail(err, errlen, "tensors with external data are not supported");
        case 14: {
            uint64_t loc;
            if (wt != 0 || pb_varint(&p, end, &loc)) return fail(err, errlen, "bad data_location");
            if (loc == 1) return fail(err, errlen, "tensors with external data are not supported");
            break;
        }
        default:
            if (pb_skip(wt, &p, end))
                return fail(err, errlen, "malformed field %llu (wire type %d)",
                            (unsigned long long)field, wt);
        }
    }
    return 0;
}

/* Converts the typed field vector v (count must be numel) into out bytes of dtype. */
static int pb_convert(const pb_tensor *pt, frt_dtype dtype, int64_t numel, unsigned char *out,
                      char *err, size_t errlen) {
    const vec *src;
    const char *fname;
    switch (dtype) {
    case FRT_FLOAT32: src = &pt->f32, fname = "float_data"; break;
    case FRT_FLOAT64: src = &pt->f64, fname = "double_data"; break;
    case FRT_INT64: src = &pt->i64, fname = "int64_data"; break;
    case FRT_UINT32: case FRT_UINT64: src = &pt->u64, fname = "uint64_data"; break;
    default: src = &pt->i32, fname = "int32_data"; break;
    }
    const vec *all[] = {&pt->f32, &pt->f64, &pt->i64, &pt->u64, &pt->i32};
    const char *names[] = {"float_data", "double_data", "int64_data", "uint64_data", "int32_data"};
    for (int k = 0; k < 5; k++)
        if (all[k] != src && all[k]->n)
            return fail(err, errlen, "%s tensor has %s (expected raw_data or %s)",
                        dtype_str(dtype), names[k], fname);
    if (src->n != (uint64_t)numel)
        return fail(err, errlen, "%s holds %zu values but dims need %lld", fname, src->n,
                    (long long)numel);
    for (size_t i = 0; i < src->n; i++) {
        if (dtype == FRT_FLOAT32) {
            memcpy(out + 4 * i, src->data + 4 * i, 4);
            continue;
        }
        uint64_t u;
        memcpy(&u, src->data + 8 * i, 8);
        int64_t s = (int64_t)(int32_t)(uint32_t)u; /* int32 fields: low 32 bits, as protobuf */
        int ok = 1;
        switch (dtype) {
        case FRT_FLOAT64: case FRT_INT64: case FRT_UINT64: memcpy(out + 8 * i, &u, 8); break;
        case FRT_UINT32: {
            ok = u <= UINT32_MAX;
            uint32_t v = (uint32_t)u;
            memcpy(out + 4 * i, &v, 4);
            break;
        }
        case FRT_INT32: {
            int32_t v = (int32_t)s;
            memcpy(out + 4 * i, &v, 4);
            break;
        }
        case FRT_INT16: {
            ok = s >= INT16_MIN && s <= INT16_MAX;
            int16_t v = (int16_t)s;
            memcpy(out + 2 * i, &v, 2);
            break;
        }
        case FRT_UINT16: case FRT_FLOAT16: case FRT_BFLOAT16: {
            ok = s >= 0 && s <= UINT16_MAX;
            uint16_t v = (uint16_t)s;
            memcpy(out + 2 * i, &v, 2);
            break;
        }
        case FRT_INT8:
            ok = s >= INT8_MIN && s <= INT8_MAX;
            out[i] = (unsigned char)(int8_t)s;
            break;
        case FRT_UINT8:
            ok = s >= 0 && s <= UINT8_MAX;
            out[i] = (unsigned char)s;
            break;
        case FRT_BOOL:
            ok = s == 0 || s == 1;
            out[i] = (unsigned char)s;
            break;
        default: return fail(err, errlen, "unsupported data type %s", dtype_str(dtype));
        }
        if (!ok)
            return fail(err, errlen, "%s value %lld at index %zu is out of range for %s", fname,
                        (long long)s, i, dtype_str(dtype));
    }
    return 0;
}

int tio_pb_parse(const void *buf, size_t size, frt_tensor *out, char **name_out, char *err,
                 size_t errlen) {
    memset(out, 0, sizeof *out);
    if (name_out) *name_out = NULL;
    pb_tensor pt;
    memset(&pt, 0, sizeof pt);
    pt.dims.esize = pt.i32.esize = pt.i64.esize = pt.f64.esize = pt.u64.esize = 8;
    pt.f32.esize = 4;
    const unsigned char *p = buf;
    int rc = -1;
    void *data = NULL;
    if (!p && size) goto done;
    if (pb_decode(p, p + size, &pt, err, errlen)) goto done;

    frt_dtype dtype = (frt_dtype)pt.data_type;
    if (pt.data_type == 0) {
        fail(err, errlen, "TensorProto has no data_type (is this a TensorProto file?)");
        goto done;
    }
    if (pt.data_type == FRT_STRING || pt.has_strings) {
        fail(err, errlen, "string tensors are not supported");
        goto done;
    }
    size_t esize = pt.data_type <= FRT_UINT64 || pt.data_type == FRT_BFLOAT16 ? elem_size(dtype) : 0;
    if (!esize) {
        fail(err, errlen, "unsupported data_type %llu (%s)", (unsigned long long)pt.data_type,
             dtype_str((int)pt.data_type));
        goto done;
    }
    if (pt.dims.n > FRT_MAX_RANK) {
        fail(err, errlen, "rank %zu above the supported %d", pt.dims.n, FRT_MAX_RANK);
        goto done;
    }
    int64_t dims[FRT_MAX_RANK];
    for (size_t i = 0; i < pt.dims.n; i++) memcpy(&dims[i], pt.dims.data + 8 * i, 8);
    int64_t numel;
    size_t nbytes;
    if (count_bytes(dims, (int)pt.dims.n, esize, &numel, &nbytes, err, errlen)) goto done;
    data = malloc(nbytes ? nbytes : 1);
    if (!data) {
        fail(err, errlen, "out of memory (%zu bytes)", nbytes);
        goto done;
    }
    if (pt.has_raw) {
        if (pt.f32.n || pt.i32.n || pt.i64.n || pt.f64.n || pt.u64.n) {
            fail(err, errlen, "TensorProto has both raw_data and typed data fields");
            goto done;
        }
        if (pt.raw_len != nbytes) {
            fail(err, errlen, "raw_data holds %zu bytes but dims need %zu", pt.raw_len, nbytes);
            goto done;
        }
        if (nbytes) memcpy(data, pt.raw, nbytes);
    } else if (pb_convert(&pt, dtype, numel, data, err, errlen)) {
        goto done;
    }
    if (name_out) {
        *name_out = malloc(pt.name_len + 1);
        if (!*name_out) {
            fail(err, errlen, "out of memory");
            goto done;
        }
        if (pt.name_len) memcpy(*name_out, pt.name, pt.name_len);
        (*name_out)[pt.name_len] = 0;
    }
    out->dtype = dtype;
    out->rank = (int32_t)pt.dims.n;
    for (size_t i = 0; i < pt.dims.n; i++) out->shape[i] = dims[i];
    out->data = data;
    out->nbytes = nbytes;
    data = NULL;
    rc = 0;
done:
    free(data);
    pb_tensor_free(&pt);
    return rc;
}

/* ---------------------------------------------------------------------------------------------- */
/* Files                                                                                           */
/* ---------------------------------------------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

tio_format tio_sniff(const char *path, const void *buf, size_t size) {
    if (buf && size >= 6 && memcmp(buf, k_npy_magic, 6) == 0) return TIO_FORMAT_NPY;
    if (path && ends_with(path, ".pb")) return TIO_FORMAT_PB;
    frt_tensor t;
    char err[8];
    if (tio_pb_parse(buf, size, &t, NULL, err, sizeof err) == 0) {
        tio_tensor_free(&t);
        return TIO_FORMAT_PB;
    }
    return TIO_FORMAT_UNKNOWN;
}

int tio_read_file(const char *path, void **buf, size_t *size, char *err, size_t errlen) {
    *buf = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, errlen, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return fail(err, errlen, "cannot read %s: it is a directory", path);
    }
    size_t cap = 0, n = 0;
    unsigned char *data = NULL;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0) {
        if ((uint64_t)st.st_size > TIO_MAX_FILE_BYTES) {
            fclose(f);
            return fail(err, errlen, "%s is too large (%lld bytes)", path, (long long)st.st_size);
        }
        cap = (size_t)st.st_size + 1; /* +1 so end of file is seen without growing */
    }
    if (cap < 4096) cap = 4096;
    data = malloc(cap);
    if (!data) {
        fclose(f);
        return fail(err, errlen, "out of memory reading %s", path);
    }
    for (;;) {
        if (n == cap) {
            if (cap > TIO_MAX_FILE_BYTES) {
                free(data);
                fclose(f);
                return fail(err, errlen, "%s is too large", path);
            }
            void *p = realloc(data, cap * 2);
            if (!p) {
                free(data);
                fclose(f);
                return fail(err, errlen, "out of memory reading %s", path);
            }
            data = p;
            cap *= 2;
        }
        size_t r = fread(data + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    if (ferror(f)) {
        int e = errno;
        free(data);
        fclose(f);
        return fail(err, errlen, "cannot read %s: %s", path, strerror(e));
    }
    fclose(f);
    *buf = data;
    *size = n;
    return 0;
}

int tio_load(const char *path, frt_tensor *out, char **name_out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (name_out) *name_out = NULL;
    void *buf;
    size_t size;
    if (tio_read_file(path, &buf, &size, err, errlen)) return -1;
    int rc;
    int is_npy = size >= 6 && memcmp(buf, k_npy_magic, 6) == 0;
    if (is_npy || ends_with(path, ".npy")) {
        rc = tio_npy_parse(buf, size, out, err, errlen);
        if (rc == 0 && name_out && !(*name_out = calloc(1, 1))) {
            tio_tensor_free(out);
            rc = fail(err, errlen, "out of memory");
        }
    } else {
        rc = tio_pb_parse(buf, size, out, name_out, err, errlen);
        if (rc && !ends_with(path, ".pb")) {
            char tmp[512];
            snprintf(tmp, sizeof tmp, "%s", err);
            fail(err, errlen, "neither a .npy file nor a TensorProto (%s)", tmp);
        }
    }
    free(buf);
    if (rc) return fail_in(path, err, errlen);
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* SequenceProto and OptionalProto                                                                 */
/* ---------------------------------------------------------------------------------------------- */

void tio_value_free(frt_io_value *v) {
    if (!v) return;
    for (size_t i = 0; v->tensors && i < v->n; i++) tio_tensor_free(&v->tensors[i]);
    free(v->tensors);
    memset(v, 0, sizeof *v);
}

/* Appends the TensorProto at buf to v->tensors. */
static int value_push(frt_io_value *v, const unsigned char *buf, size_t len, char *err,
                      size_t errlen) {
    frt_tensor *t = realloc(v->tensors, (v->n + 1) * sizeof *t);
    if (!t) return fail(err, errlen, "out of memory");
    v->tensors = t;
    if (tio_pb_parse(buf, len, &t[v->n], NULL, err, errlen)) return -1;
    v->n++;
    return 0;
}

/* One field of a message: varint value or length-delimited bytes (other wire types skipped). */
typedef struct pb_field {
    int num, wt;
    uint64_t u;              /* varint value */
    const unsigned char *data;
    size_t len;
} pb_field;

static int pb_next(const unsigned char **p, const unsigned char *end, pb_field *f, char *err,
                   size_t errlen) {
    uint64_t key;
    if (pb_varint(p, end, &key)) return fail(err, errlen, "truncated field key");
    f->num = (int)(key >> 3);
    f->wt = (int)(key & 7);
    f->data = NULL;
    f->len = 0;
    if (f->wt == 0) {
        if (pb_varint(p, end, &f->u)) return fail(err, errlen, "truncated varint");
    } else if (f->wt == 2) {
        uint64_t len;
        if (pb_varint(p, end, &len) || len > (uint64_t)(end - *p))
            return fail(err, errlen, "truncated field %d", f->num);
        f->data = *p;
        f->len = (size_t)len;
        *p += len;
    } else if (pb_skip(f->wt, p, end)) {
        return fail(err, errlen, "bad field %d", f->num);
    }
    return 0;
}

/* SequenceProto: name (1), elem_type (2: 1 = tensor), tensor_values (3). Other element kinds are
 * refused. */
static int parse_sequence(const unsigned char *p, const unsigned char *end, frt_io_value *v,
                          char *err, size_t errlen) {
    v->kind = FRT_KIND_SEQUENCE;
    while (p < end) {
        pb_field f;
        if (pb_next(&p, end, &f, err, errlen)) return -1;
        if (f.num == 2 && f.wt == 0 && f.u != 0 && f.u != 1)
            return fail(err, errlen, "sequence of elem_type %llu is not supported (tensors only)",
                        (unsigned long long)f.u);
        if (f.num >= 4 && f.num <= 7)
            return fail(err, errlen, "sequence of non-tensor values (field %d) is not supported",
                        f.num);
        if (f.num == 3 && f.wt == 2 && value_push(v, f.data, f.len, err, errlen)) return -1;
    }
    return 0;
}

/* OptionalProto: name (1), elem_type (2), tensor_value (3), sequence_value (5). elem_kind comes
 * from the model (an empty optional file may not say). */
static int parse_optional(const unsigned char *p, const unsigned char *end, frt_kind elem_kind,
                          frt_io_value *v, char *err, size_t errlen) {
    v->kind = FRT_KIND_OPTIONAL;
    v->elem_kind = elem_kind;
    while (p < end) {
        pb_field f;
        if (pb_next(&p, end, &f, err, errlen)) return -1;
        if (f.num == 4 || f.num >= 6)
            return fail(err, errlen, "optional of a sparse tensor, map or optional (field %d) is "
                        "not supported", f.num);
        if (f.num == 3 && f.wt == 2) {
            if (elem_kind != FRT_KIND_TENSOR)
                return fail(err, errlen, "optional holds a tensor, the model expects a sequence");
            if (value_push(v, f.data, f.len, err, errlen)) return -1;
            v->has_value = 1;
        } else if (f.num == 5 && f.wt == 2) {
            if (elem_kind != FRT_KIND_SEQUENCE)
                return fail(err, errlen, "optional holds a sequence, the model expects a tensor");
            frt_io_value inner;
            memset(&inner, 0, sizeof inner);
            if (parse_sequence(f.data, f.data + f.len, &inner, err, errlen)) {
                tio_value_free(&inner);
                return -1;
            }
            tio_value_free(v);
            v->kind = FRT_KIND_OPTIONAL;
            v->elem_kind = elem_kind;
            v->tensors = inner.tensors;
            v->n = inner.n;
            v->has_value = 1;
        }
    }
    return 0;
}

int tio_load_value(const char *path, frt_kind kind, frt_kind elem_kind, frt_io_value *out,
                   char **name_out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (name_out) *name_out = NULL;
    if (kind == FRT_KIND_TENSOR) {
        frt_tensor *t = calloc(1, sizeof *t);
        if (!t) return fail(err, errlen, "out of memory");
        if (tio_load(path, t, name_out, err, errlen)) {
            free(t);
            return -1;
        }
        out->kind = FRT_KIND_TENSOR;
        out->tensors = t;
        out->n = 1;
        out->elem_dtype = t->dtype;
        return 0;
    }
    void *buf;
    size_t size;
    if (tio_read_file(path, &buf, &size, err, errlen)) return -1;
    const unsigned char *p = buf;
    int rc = kind == FRT_KIND_SEQUENCE ? parse_sequence(p, p + size, out, err, errlen)
                                       : parse_optional(p, p + size, elem_kind, out, err, errlen);
    free(buf);
    if (!rc && out->n) out->elem_dtype = out->tensors[0].dtype;
    if (!rc && name_out && !(*name_out = calloc(1, 1))) rc = fail(err, errlen, "out of memory");
    if (rc) {
        tio_value_free(out);
        return fail_in(path, err, errlen);
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* Values and names                                                                                */
/* ---------------------------------------------------------------------------------------------- */

float tio_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
    if (e == 0) {
        if (m == 0) {
            bits = sign;
        } else { /* subnormal: normalize */
            uint32_t ee = 113;
            while (!(m & 0x400u)) {
                m <<= 1;
                ee--;
            }
            bits = sign | ee << 23 | (m & 0x3ffu) << 13;
        }
    } else if (e == 31) {
        bits = sign | 0x7f800000u | m << 13;
    } else {
        bits = sign | (e + 112) << 23 | m << 13;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t tio_float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) /* inf or NaN (NaN stays a quiet NaN) */
        return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to infinity */
    if (ax < 0x38800000u) {                                      /* below 2^-14: subnormal */
        uint32_t e = ax >> 23;
        if (e < 102) return (uint16_t)sign;
        uint32_t m = (ax & 0x7fffffu) | 0x800000u, shift = 126 - e;
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = (ax >> 13) - (112u << 10), rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1))) r++;
    return (uint16_t)(sign | r);
}

double tio_element_as_double(const frt_tensor *t, size_t i) {
    const unsigned char *p = t->data;
    size_t es = elem_size(t->dtype);
    if (!p || !es || i >= t->nbytes / es) return 0;
    p += i * es;
    switch (t->dtype) {
    case FRT_FLOAT32: { float v; memcpy(&v, p, 4); return v; }
    case FRT_FLOAT64: { double v; memcpy(&v, p, 8); return v; }
    case FRT_FLOAT16: { uint16_t v; memcpy(&v, p, 2); return tio_half_to_float(v); }
    case FRT_BFLOAT16: { /* the upper half of a float32 */
        uint16_t v;
        memcpy(&v, p, 2);
        uint32_t bits = (uint32_t)v << 16;
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    case FRT_INT8: return (int8_t)p[0];
    case FRT_UINT8: return p[0];
    case FRT_BOOL: return p[0] != 0;
    case FRT_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case FRT_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case FRT_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case FRT_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case FRT_INT64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case FRT_UINT64: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
    default: return 0;
    }
}

void tio_sanitize_name(const char *name, char *out, size_t outlen) {
    if (!outlen) return;
    size_t n = 0;
    for (; name && name[n] && n + 1 < outlen; n++) {
        char c = name[n];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        out[n] = ok ? c : '_';
    }
    out[n] = 0;
}
