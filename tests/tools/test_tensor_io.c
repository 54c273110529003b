/* Tests for tools/tensor_io.c: .npy and TensorProto readers against files made by numpy and onnx,
 * the .npy writer (byte-identical to numpy for the same array), every error path, and truncated or
 * mutated inputs (must fail cleanly, never crash; run under ASan/UBSan to check bounds). */
#include <stdint.h>
#include <unistd.h>

#include "golden_tensors.h"
#include "tensor_io.h"
#include "test_util.h"

static char g_err[1024];

/* Parses an npy image; returns 0 on success. */
static int npy(const void *buf, size_t n, frt_tensor *t) {
    g_err[0] = 0;
    return tio_npy_parse(buf, n, t, g_err, sizeof g_err);
}

static int has(const char *needle) {
    if (strstr(g_err, needle)) return 1;
    fprintf(stderr, "  message '%s' lacks '%s'\n", g_err, needle);
    return 0;
}

/* Builds a v1 npy image from header text (padded like numpy) and payload into buf. */
static size_t make_npy(unsigned char *buf, size_t cap, const char *header, const void *payload,
                       size_t plen) {
    size_t text = strlen(header) + 1, hlen = (text + 10 + 63) / 64 * 64 - 10;
    if (10 + hlen + plen > cap) return 0;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    memcpy(buf + 10, header, text - 1);
    memset(buf + 10 + text - 1, ' ', hlen - text);
    buf[10 + hlen - 1] = '\n';
    if (plen) memcpy(buf + 10 + hlen, payload, plen);
    return 10 + hlen + plen;
}

static void test_npy_golden(void) {
    frt_tensor t;
    CHECK(npy(k_np_f32_2x3, K_NP_F32_2X3_LEN, &t) == 0);
    CHECK(t.dtype == FRT_FLOAT32 && t.rank == 2 && t.shape[0] == 2 && t.shape[1] == 3);
    CHECK(t.nbytes == 24 && t._owner == NULL);
    for (int i = 0; i < 6; i++) CHECK(((float *)t.data)[i] == (float)i - 2.5f);
    /* The writer reproduces numpy's bytes exactly. */
    void *enc;
    size_t n;
    CHECK(tio_npy_encode(&t, &enc, &n, g_err, sizeof g_err) == 0);
    CHECK(n == K_NP_F32_2X3_LEN && memcmp(enc, k_np_f32_2x3, n) == 0);
    free(enc);
    tio_tensor_free(&t);
    CHECK(t.data == NULL && t.rank == 0);

    CHECK(npy(k_np_bool_3, K_NP_BOOL_3_LEN, &t) == 0);
    CHECK(t.dtype == FRT_BOOL && t.rank == 1 && t.shape[0] == 3 && t.nbytes == 3);
    CHECK(((uint8_t *)t.data)[0] == 1 && ((uint8_t *)t.data)[1] == 0 && ((uint8_t *)t.data)[2] == 1);
    CHECK(tio_npy_encode(&t, &enc, &n, g_err, sizeof g_err) == 0);
    CHECK(n == K_NP_BOOL_3_LEN && memcmp(enc, k_np_bool_3, n) == 0);
    free(enc);
    tio_tensor_free(&t);

    CHECK(npy(k_np_i64_scalar, K_NP_I64_SCALAR_LEN, &t) == 0);
    CHECK(t.dtype == FRT_INT64 && t.rank == 0 && t.nbytes == 8 && *(int64_t *)t.data == -7);
    CHECK(tio_npy_encode(&t, &enc, &n, g_err, sizeof g_err) == 0);
    CHECK(n == K_NP_I64_SCALAR_LEN && memcmp(enc, k_np_i64_scalar, n) == 0);
    free(enc);
    tio_tensor_free(&t);

    CHECK(npy(k_np_u8_v2, K_NP_U8_V2_LEN, &t) == 0);
    CHECK(t.dtype == FRT_UINT8 && t.rank == 2 && t.shape[0] == 2 && t.shape[1] == 2);
    CHECK(((uint8_t *)t.data)[3] == 250);
    tio_tensor_free(&t);

    CHECK(npy(k_np_i32_v3, K_NP_I32_V3_LEN, &t) == 0);
    CHECK(t.dtype == FRT_INT32 && t.rank == 1 && t.shape[0] == 3);
    CHECK(((int32_t *)t.data)[0] == -1 && ((int32_t *)t.data)[2] == 3);
    tio_tensor_free(&t);

    CHECK(npy(k_np_f8_be, K_NP_F8_BE_LEN, &t) == 0); /* big-endian payload is swapped */
    CHECK(t.dtype == FRT_FLOAT64 && t.shape[0] == 2);
    CHECK(((double *)t.data)[0] == 1.5 && ((double *)t.data)[1] == -2.0);
    tio_tensor_free(&t);

    CHECK(npy(k_np_f2, K_NP_F2_LEN, &t) == 0);
    CHECK(t.dtype == FRT_FLOAT16 && t.nbytes == 6);
    CHECK(tio_element_as_double(&t, 0) == 1.0 && tio_element_as_double(&t, 1) == -0.5);
    CHECK(tio_element_as_double(&t, 2) == 65504.0);
    CHECK(tio_element_as_double(&t, 3) == 0); /* out of range index */
    tio_tensor_free(&t);

    CHECK(npy(k_np_empty, K_NP_EMPTY_LEN, &t) == 0);
    CHECK(t.rank == 2 && t.shape[0] == 0 && t.shape[1] == 4 && t.nbytes == 0 && t.data != NULL);
    tio_tensor_free(&t);

    CHECK(npy(k_np_f4_fortran, K_NP_F4_FORTRAN_LEN, &t) != 0);
    CHECK(has("Fortran"));
    CHECK(t.data == NULL);
}

/* Hand-written headers: spacing, quotes and key order numpy itself accepts. */
static void test_npy_header_variants(void) {
    unsigned char buf[512];
    float v[2] = {1, 2};
    frt_tensor t;
    size_t n = make_npy(buf, sizeof buf,
                        "{ \"shape\" : ( 2L , ) ,\"fortran_order\":False,'descr':'<f4'}", v, 8);
    CHECK(npy(buf, n, &t) == 0);
    CHECK(t.dtype == FRT_FLOAT32 && t.rank == 1 && t.shape[0] == 2);
    tio_tensor_free(&t);
    n = make_npy(buf, sizeof buf, "{'descr': 'f4', 'fortran_order': False, 'shape': (1, 2)}", v, 8);
    CHECK(npy(buf, n, &t) == 0 && t.rank == 2);
    tio_tensor_free(&t);
    uint8_t b[3] = {1, 0, 1};
    n = make_npy(buf, sizeof buf, "{'descr': '?', 'fortran_order': False, 'shape': (3,), }", b, 3);
    CHECK(npy(buf, n, &t) == 0 && t.dtype == FRT_BOOL);
    tio_tensor_free(&t);
    int64_t eight[8] = {1, 1, 1, 1, 1, 1, 1, 2};
    n = make_npy(buf, sizeof buf,
                 "{'descr': '<i8', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,2), }", eight,
                 16);
    CHECK(npy(buf, n, &t) == 0 && t.rank == 8 && t.shape[7] == 2);
    tio_tensor_free(&t);

    /* every supported descr */
    static const struct { const char *d; frt_dtype t; size_t size; } types[] = {
        {"<f4", FRT_FLOAT32, 4}, {"<f8", FRT_FLOAT64, 8}, {"<f2", FRT_FLOAT16, 2},
        {"|i1", FRT_INT8, 1},    {"|u1", FRT_UINT8, 1},   {"|b1", FRT_BOOL, 1},
        {"<i2", FRT_INT16, 2},   {"<u2", FRT_UINT16, 2},  {"<i4", FRT_INT32, 4},
        {"<u4", FRT_UINT32, 4},  {"<i8", FRT_INT64, 8},   {"<u8", FRT_UINT64, 8},
        {"=i4", FRT_INT32, 4},   {">i2", FRT_INT16, 2},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        char h[128];
        unsigned char payload[24] = {0};
        payload[0] = 1; /* element 0 = 1 little-endian; for '>' it is 256 after swapping */
        snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }",
                 types[i].d);
        n = make_npy(buf, sizeof buf, h, payload, 3 * types[i].size);
        CHECK_MSG(npy(buf, n, &t) == 0 && t.dtype == types[i].t && t.nbytes == 3 * types[i].size,
                  "descr %s: %s", types[i].d, g_err);
        double want = types[i].d[0] == '>' ? 256.0 : types[i].t == FRT_FLOAT32 ? 1.4e-45
                      : types[i].t == FRT_FLOAT64 ? 4.9e-324 : types[i].t == FRT_FLOAT16 ? 5.96e-8
                      : 1.0;
        double got = tio_element_as_double(&t, 0);
        CHECK_MSG(fabs(got - want) <= 0.01 * fabs(want), "descr %s: element 0 = %g", types[i].d,
                  got);
        tio_tensor_free(&t);
    }
}

static void test_npy_errors(void) {
    unsigned char buf[1024];
    float v[4] = {0};
    frt_tensor t;
    static const struct { const char *header; size_t plen; const char *msg; } cases[] = {
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (4,), }", 16, "Fortran"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'x': 1}", 16, "unexpected key 'x'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,)}", 16, "duplicate"},
        {"{'descr': '<f4', 'shape': (4,)}", 16, "fortran_order"},
        {"{'fortran_order': False, 'shape': (4,)}", 16, "descr"},
        {"{'descr': '<f4', 'fortran_order': False}", 16, "shape"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,)}", 16, "structured"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,)}", 16, "unsupported dtype '<c8'"},
        {"{'descr': '<U3', 'fortran_order': False, 'shape': (1,)}", 12, "unsupported dtype"},
        {"{'descr': '>M8', 'fortran_order': False, 'shape': (2,)}", 16, "unsupported dtype"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (5,)}", 16, "truncated data"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 16, "unexpected bytes"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-4,)}", 16, "shape entry"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': 4}", 16, "not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4 4)}", 16, "shape tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,4)}", 16, "rank"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 16,
         "too large"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", 16,
         "overflow"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967)}", 16, "absurd"},
        {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (4,)}", 16, "neither True nor False"},
        {"{'descr': '<f4, 'fortran_order': False, 'shape': (4,)}", 16, "expected ',' or '}'"},
        {"{'descr' '<f4', 'fortran_order': False, 'shape': (4,)}", 16, "expected ':'"},
        {"{'descr': '<f4' 'fortran_order': False, 'shape': (4,)}", 16, "expected ','"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,)} x", 16, "after the header"},
        {"['descr', '<f4']", 16, "not a dict"},
        {"{'de\\x73cr': '<f4'}", 16, "escape"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,)", 16, "expected"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = make_npy(buf, sizeof buf, cases[i].header, v, cases[i].plen);
        CHECK_MSG(npy(buf, n, &t) != 0, "header %s was accepted", cases[i].header);
        CHECK_MSG(strstr(g_err, cases[i].msg) != NULL, "header %s: message '%s' lacks '%s'",
                  cases[i].header, g_err, cases[i].msg);
        CHECK(t.data == NULL);
    }
    /* preamble problems */
    CHECK(npy("\x93NUMPY", 6, &t) != 0 && has("magic"));
    CHECK(npy("PK\x03\x04 not numpy at all", 20, &t) != 0 && has("not a .npy file"));
    CHECK(npy(NULL, 0, &t) != 0);
    unsigned char pre[16];
    memcpy(pre, k_np_f32_2x3, 16);
    pre[6] = 4;
    CHECK(npy(pre, 16, &t) != 0 && has("version 4"));
    pre[6] = 2;
    CHECK(npy(pre, 11, &t) != 0 && has("truncated"));
    CHECK(npy(k_np_f32_2x3, 20, &t) != 0 && has("truncated .npy header"));
    unsigned char big[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xff, 0xff, 0xff, 0xff};
    CHECK(npy(big, sizeof big, &t) != 0 && has("truncated .npy header"));
}

/* Every prefix and many single-byte mutations of valid files parse or fail cleanly. */
static void test_npy_fuzz(void) {
    const char *files[] = {k_np_f32_2x3, k_np_bool_3, k_np_u8_v2, k_np_i32_v3, k_np_f8_be};
    size_t lens[] = {K_NP_F32_2X3_LEN, K_NP_BOOL_3_LEN, K_NP_U8_V2_LEN, K_NP_I32_V3_LEN,
                     K_NP_F8_BE_LEN};
    unsigned seed = 12345;
    int accepted = 0, rejected = 0;
    for (int f = 0; f < 5; f++) {
        for (size_t n = 0; n < lens[f]; n++) { /* heap copy so ASan sees the exact end */
            unsigned char *b = malloc(n ? n : 1);
            memcpy(b, files[f], n);
            frt_tensor t;
            CHECK(npy(b, n, &t) != 0);
            CHECK(g_err[0] != 0);
            free(b);
        }
        unsigned char *b = malloc(lens[f]);
        for (int iter = 0; iter < 3000; iter++) {
            memcpy(b, files[f], lens[f]);
            for (int k = 0; k < 1 + iter % 3; k++) {
                seed = seed * 1664525u + 1013904223u;
                size_t pos = (seed >> 8) % lens[f];
                seed = seed * 1664525u + 1013904223u;
                b[pos] = (unsigned char)(seed >> 24);
            }
            frt_tensor t;
            if (npy(b, lens[f], &t) == 0) {
                accepted++;
                CHECK(t.nbytes <= lens[f]);
                tio_tensor_free(&t);
            } else {
                rejected++;
                CHECK(g_err[0] != 0);
            }
        }
        free(b);
    }
    CHECK(accepted > 0 && rejected > 0);
}

static void test_npy_roundtrip(void) {
    static const frt_dtype types[] = {FRT_FLOAT32, FRT_FLOAT64, FRT_FLOAT16, FRT_INT8,
                                      FRT_UINT8,   FRT_BOOL,    FRT_INT16,   FRT_UINT16,
                                      FRT_INT32,   FRT_UINT32,  FRT_INT64,   FRT_UINT64};
    unsigned char payload[7 * 5 * 3 * 8];
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (unsigned char)(i * 37 + 11);
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        for (int rank = 0; rank <= 3; rank++) {
            frt_tensor t = {.dtype = types[k], .rank = rank, .data = payload};
            int64_t dims[3] = {7, 5, 3};
            size_t numel = 1;
            for (int d = 0; d < rank; d++) numel *= (size_t)(t.shape[d] = dims[d]);
            t.nbytes = numel * frt_dtype_size(types[k]);
            if (types[k] == FRT_BOOL)
                for (size_t i = 0; i < numel; i++) payload[i] &= 1;
            void *enc;
            size_t n;
            CHECK(tio_npy_encode(&t, &enc, &n, g_err, sizeof g_err) == 0);
            CHECK((n - t.nbytes) % 64 == 0); /* header padded to 64 bytes */
            frt_tensor back;
            CHECK_MSG(npy(enc, n, &back) == 0, "%s rank %d: %s", frt_dtype_name(types[k]), rank,
                      g_err);
            CHECK(back.dtype == t.dtype && back.rank == t.rank && back.nbytes == t.nbytes);
            for (int d = 0; d < rank; d++) CHECK(back.shape[d] == t.shape[d]);
            CHECK(memcmp(back.data, payload, t.nbytes) == 0);
            tio_tensor_free(&back);
            free(enc);
        }
    }
    /* zero-size and error cases of the writer */
    frt_tensor z = {.dtype = FRT_INT32, .rank = 2, .shape = {3, 0}, .data = NULL, .nbytes = 0};
    void *enc;
    size_t n;
    CHECK(tio_npy_encode(&z, &enc, &n, g_err, sizeof g_err) == 0);
    frt_tensor back;
    CHECK(npy(enc, n, &back) == 0 && back.shape[0] == 3 && back.shape[1] == 0);
    tio_tensor_free(&back);
    free(enc);
    frt_tensor s = {.dtype = FRT_STRING, .rank = 1, .shape = {1}, .data = payload, .nbytes = 8};
    CHECK(tio_npy_encode(&s, &enc, &n, g_err, sizeof g_err) != 0 && has("string"));
    frt_tensor bad = {.dtype = FRT_FLOAT32, .rank = 1, .shape = {3}, .data = payload, .nbytes = 8};
    CHECK(tio_npy_encode(&bad, &enc, &n, g_err, sizeof g_err) != 0 && has("needs 12"));
    bad.rank = 9;
    CHECK(tio_npy_encode(&bad, &enc, &n, g_err, sizeof g_err) != 0 && has("rank"));
    bad.rank = 1;
    bad.shape[0] = -1;
    CHECK(tio_npy_encode(&bad, &enc, &n, g_err, sizeof g_err) != 0 && has("negative"));
    bad.shape[0] = 3;
    bad.nbytes = 12;
    bad.data = NULL;
    CHECK(tio_npy_encode(&bad, &enc, &n, g_err, sizeof g_err) != 0 && has("no data"));
}

/* ---- TensorProto ---- */

static int pb(const void *buf, size_t n, frt_tensor *t, char **name) {
    g_err[0] = 0;
    return tio_pb_parse(buf, n, t, name, g_err, sizeof g_err);
}

static void test_pb_golden(void) {
    frt_tensor t;
    char *name;
    CHECK(pb(k_pb_i64_raw, K_PB_I64_RAW_LEN, &t, &name) == 0);
    CHECK(strcmp(name, "ids:0") == 0);
    CHECK(t.dtype == FRT_INT64 && t.rank == 2 && t.shape[0] == 1 && t.shape[1] == 3);
    CHECK(((int64_t *)t.data)[1] == -2 && ((int64_t *)t.data)[2] == 3);
    free(name);
    tio_tensor_free(&t);

    CHECK(pb(k_pb_f32_typed, K_PB_F32_TYPED_LEN, &t, &name) == 0);
    CHECK(strcmp(name, "x") == 0 && t.dtype == FRT_FLOAT32 && t.rank == 2 && t.nbytes == 16);
    CHECK(((float *)t.data)[2] == -3.0f && ((float *)t.data)[3] == 0.25f);
    free(name);
    tio_tensor_free(&t);

    CHECK(pb(k_pb_i8_typed, K_PB_I8_TYPED_LEN, &t, NULL) == 0);
    CHECK(t.dtype == FRT_INT8 && t.nbytes == 3);
    CHECK(((int8_t *)t.data)[0] == -128 && ((int8_t *)t.data)[2] == 127);
    tio_tensor_free(&t);

    CHECK(pb(k_pb_f64_typed, K_PB_F64_TYPED_LEN, &t, NULL) == 0);
    CHECK(t.dtype == FRT_FLOAT64 && ((double *)t.data)[1] == -1e300);
    tio_tensor_free(&t);

    CHECK(pb(k_pb_f16_typed, K_PB_F16_TYPED_LEN, &t, NULL) == 0);
    CHECK(t.dtype == FRT_FLOAT16 && tio_element_as_double(&t, 1) == -2.0);
    tio_tensor_free(&t);

    CHECK(pb(k_pb_u64_typed, K_PB_U64_TYPED_LEN, &t, NULL) == 0);
    CHECK(t.dtype == FRT_UINT64 && ((uint64_t *)t.data)[1] == (1ull << 63) + 5);
    tio_tensor_free(&t);

    CHECK(pb(k_pb_bool_raw, K_PB_BOOL_RAW_LEN, &t, &name) == 0);
    CHECK(t.dtype == FRT_BOOL && t.nbytes == 2 && ((uint8_t *)t.data)[0] == 1);
    free(name);
    tio_tensor_free(&t);
}

/* Hand-encoded protos: unpacked repeated fields, unknown fields, and the error paths. */
static void test_pb_handmade(void) {
    frt_tensor t;
    char *name;
    /* dims unpacked (1,3), data_type int32, int32_data unpacked -1, 5, 7, unknown field 12
     * (doc_string) and unknown field 20 (fixed64) skipped */
    static const unsigned char a[] = {0x08, 0x01, 0x08, 0x03, 0x10, 0x06, 0x28, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x28, 0x05, 0x28,
                                      0x07, 0x62, 0x02, 'h', 'i', 0xa1, 0x01, 1, 2, 3, 4, 5, 6, 7,
                                      8};
    CHECK(pb(a, sizeof a, &t, &name) == 0);
    CHECK(t.dtype == FRT_INT32 && t.rank == 2 && t.shape[1] == 3 && strcmp(name, "") == 0);
    CHECK(((int32_t *)t.data)[0] == -1 && ((int32_t *)t.data)[2] == 7);
    free(name);
    tio_tensor_free(&t);
    /* float_data unpacked (wire type 5), dims [2] */
    static const unsigned char b[] = {0x08, 0x02, 0x10, 0x01, 0x25, 0, 0, 0x80, 0x3f,
                                      0x25, 0, 0, 0, 0x40};
    CHECK(pb(b, sizeof b, &t, NULL) == 0 && ((float *)t.data)[1] == 2.0f);
    tio_tensor_free(&t);
    /* scalar: no dims, one int64 */
    static const unsigned char c[] = {0x10, 0x07, 0x38, 0x2a};
    CHECK(pb(c, sizeof c, &t, NULL) == 0 && t.rank == 0 && *(int64_t *)t.data == 42);
    tio_tensor_free(&t);
    /* empty tensor: dims [0], no data */
    static const unsigned char d[] = {0x08, 0x00, 0x10, 0x01};
    CHECK(pb(d, sizeof d, &t, NULL) == 0 && t.nbytes == 0 && t.data != NULL);
    tio_tensor_free(&t);
    /* uint32 from uint64_data */
    static const unsigned char e[] = {0x08, 0x01, 0x10, 0x0c, 0x58, 0xff, 0xff, 0xff, 0xff, 0x0f};
    CHECK(pb(e, sizeof e, &t, NULL) == 0 && ((uint32_t *)t.data)[0] == UINT32_MAX);
    tio_tensor_free(&t);

    static const struct { unsigned char bytes[24]; size_t n; const char *msg; } bad[] = {
        {{0x08, 0x02}, 2, "no data_type"},
        {{0x08, 0x02, 0x10, 0x01, 0x4a, 0x04, 0, 0, 0, 0}, 10, "raw_data holds 4 bytes"},
        {{0x08, 0x02, 0x10, 0x01, 0x25, 0, 0, 0, 0}, 9, "holds 1 values"},
        {{0x08, 0x01, 0x10, 0x07, 0x25, 0, 0, 0, 0}, 9, "has float_data"},
        {{0x08, 0x01, 0x10, 0x01}, 4, "holds 0 values"},
        {{0x08, 0x01, 0x10, 0x08}, 4, "string"},
        {{0x08, 0x01, 0x10, 0x0e}, 4, "complex64"},
        {{0x08, 0x01, 0x10, 0x11}, 4, "unsupported data_type 17"},
        {{0x08, 0x01, 0x10, 0x63}, 4, "unsupported data_type 99"},
        {{0x08, 0x01, 0x10, 0x01, 0x6a, 0x00}, 6, "external data"},
        {{0x08, 0x01, 0x10, 0x01, 0x70, 0x01}, 6, "external data"},
        {{0x08, 0x01, 0x10, 0x01, 0x1a, 0x00}, 6, "segment"},
        {{0x08, 0x01, 0x10, 0x03, 0x28, 0x80, 0x01}, 7, "out of range for int8"},
        {{0x08, 0x01, 0x10, 0x09, 0x28, 0x02}, 6, "out of range for bool"},
        {{0x08, 0x01, 0x10, 0x02, 0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
          0x01}, 15, "out of range for uint8"},
        {{0x08, 0x01, 0x10, 0x0c, 0x58, 0x80, 0x80, 0x80, 0x80, 0x10}, 10, "out of range"},
        {{0x08, 0x01, 0x10, 0x01, 0x4a, 0x04, 0, 0, 0x80, 0x3f, 0x25, 0, 0, 0, 0}, 15, "both"},
        {{0x08, 0xff}, 2, "truncated"},
        {{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 11, "truncated"},
        {{0x0a, 0x05, 0x01}, 3, "truncated"},
        {{0x0d, 0, 0, 0, 0}, 5, "wire type"},
        {{0x11, 1, 2, 3, 4, 5, 6, 7, 8}, 9, "data_type has wire type 1"},
        {{0x22, 0x03, 1, 2, 3}, 5, "not a multiple of 4"},
        {{0x42, 0x0a, 'a'}, 3, "truncated field 8"},
        {{0x03}, 1, "invalid field number 0"},
        {{0x0b, 0x0c}, 2, "wire type 3"},
        {{0x63, 0x0c}, 2, "malformed field 12"},
        {{0xfb, 0x01}, 2, "malformed field 31"},
        {{0x08, 0x7f, 0x10, 0x01}, 4, "holds 0 values but dims need 127"},
        {{0x08, 0x7f, 0x08, 0x7f, 0x08, 0x7f, 0x08, 0x7f, 0x08, 0x7f, 0x08, 0x7f, 0x08, 0x7f,
          0x08, 0x7f, 0x08, 0x7f, 0x10, 0x01}, 20, "rank 9"},
        {{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x10, 0x01}, 13,
         "negative dimension"},
        {{0x08, 0xff, 0xff, 0xff, 0xff, 0x07, 0x08, 0xff, 0xff, 0xff, 0xff, 0x07, 0x10, 0x01}, 14,
         "absurd"},
        {{0x08, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x08, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x10, 0x01}, 14,
         "overflows"},
    };
    { /* bfloat16 in int32_data (low 16 bits): [2] = {1.0, -2.0} */
        static const unsigned char bf[] = {0x08, 0x02, 0x10, 0x10, 0x2a, 0x05,
                                           0x80, 0x7f, 0x80, 0x80, 0x03};
        CHECK(pb(bf, sizeof bf, &t, &name) == 0);
        CHECK(t.dtype == FRT_BFLOAT16 && t.rank == 1 && t.shape[0] == 2 && t.nbytes == 4);
        if (t.data) {
            CHECK(tio_element_as_double(&t, 0) == 1.0 && tio_element_as_double(&t, 1) == -2.0);
        }
        tio_tensor_free(&t);
        free(name);
        name = NULL;
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = pb(bad[i].bytes, bad[i].n, &t, &name);
        CHECK_MSG(rc != 0, "case %zu accepted", i);
        CHECK_MSG(strstr(g_err, bad[i].msg) != NULL, "case %zu: message '%s' lacks '%s'", i,
                  g_err, bad[i].msg);
        CHECK(t.data == NULL && name == NULL);
    }
}

static void test_pb_fuzz(void) {
    const char *files[] = {k_pb_i64_raw, k_pb_f32_typed, k_pb_i8_typed, k_pb_u64_typed};
    size_t lens[] = {K_PB_I64_RAW_LEN, K_PB_F32_TYPED_LEN, K_PB_I8_TYPED_LEN, K_PB_U64_TYPED_LEN};
    unsigned seed = 777;
    for (int f = 0; f < 4; f++) {
        for (size_t n = 0; n <= lens[f]; n++) {
            unsigned char *b = malloc(n ? n : 1);
            memcpy(b, files[f], n);
            frt_tensor t;
            char *name;
            if (pb(b, n, &t, &name) == 0) {
                free(name);
                tio_tensor_free(&t);
            } else {
                CHECK(g_err[0] != 0);
            }
            free(b);
        }
        unsigned char *b = malloc(lens[f]);
        for (int iter = 0; iter < 5000; iter++) {
            memcpy(b, files[f], lens[f]);
            for (int k = 0; k < 1 + iter % 4; k++) {
                seed = seed * 1664525u + 1013904223u;
                size_t pos = (seed >> 8) % lens[f];
                seed = seed * 1664525u + 1013904223u;
                b[pos] = (unsigned char)(seed >> 24);
            }
            frt_tensor t;
            char *name;
            if (pb(b, lens[f], &t, &name) == 0) {
                CHECK(name != NULL);
                free(name);
                tio_tensor_free(&t);
            } else {
                CHECK(g_err[0] != 0);
            }
        }
        free(b);
    }
}

/* ---- files, sniffing, helpers ---- */

static void write_bytes(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(p, 1, n, f) == n);
    fclose(f);
}

static void test_files(void) {
    char dir[] = "/tmp/frt_tio_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char p_npy[128], p_pb[128], p_bin[128], p_bin2[128], p_junk[128], p_out[128], p_fakenpy[128];
    snprintf(p_npy, sizeof p_npy, "%s/a.npy", dir);
    snprintf(p_pb, sizeof p_pb, "%s/b.pb", dir);
    snprintf(p_bin, sizeof p_bin, "%s/c.bin", dir);
    snprintf(p_bin2, sizeof p_bin2, "%s/d.dat", dir);
    snprintf(p_junk, sizeof p_junk, "%s/e.raw", dir);
    snprintf(p_out, sizeof p_out, "%s/out.npy", dir);
    snprintf(p_fakenpy, sizeof p_fakenpy, "%s/f.npy", dir);
    write_bytes(p_npy, k_np_f32_2x3, K_NP_F32_2X3_LEN);
    write_bytes(p_pb, k_pb_i64_raw, K_PB_I64_RAW_LEN);
    write_bytes(p_bin, k_np_bool_3, K_NP_BOOL_3_LEN);    /* npy content, odd extension */
    write_bytes(p_bin2, k_pb_f32_typed, K_PB_F32_TYPED_LEN); /* pb content, odd extension */
    write_bytes(p_junk, "\x07\x07\x07", 3);
    write_bytes(p_fakenpy, k_pb_f32_typed, K_PB_F32_TYPED_LEN);

    frt_tensor t;
    char *name;
    CHECK(tio_load(p_npy, &t, &name, g_err, sizeof g_err) == 0);
    CHECK(t.dtype == FRT_FLOAT32 && t.rank == 2 && name && name[0] == 0);
    CHECK(tio_npy_save(p_out, &t, g_err, sizeof g_err) == 0);
    free(name);
    tio_tensor_free(&t);
    void *buf;
    size_t n;
    CHECK(tio_read_file(p_out, &buf, &n, g_err, sizeof g_err) == 0);
    CHECK(n == K_NP_F32_2X3_LEN && memcmp(buf, k_np_f32_2x3, n) == 0);
    CHECK(tio_sniff(p_out, buf, n) == TIO_FORMAT_NPY);
    free(buf);

    CHECK(tio_load(p_pb, &t, &name, g_err, sizeof g_err) == 0);
    CHECK(t.dtype == FRT_INT64 && strcmp(name, "ids:0") == 0);
    free(name);
    tio_tensor_free(&t);
    CHECK(tio_load(p_bin, &t, NULL, g_err, sizeof g_err) == 0 && t.dtype == FRT_BOOL);
    tio_tensor_free(&t);
    CHECK(tio_load(p_bin2, &t, NULL, g_err, sizeof g_err) == 0 && t.dtype == FRT_FLOAT32);
    tio_tensor_free(&t);

    CHECK(tio_load(p_junk, &t, &name, g_err, sizeof g_err) != 0 && has("neither a .npy"));
    CHECK(has(p_junk) && name == NULL && t.data == NULL);
    CHECK(tio_load(p_fakenpy, &t, NULL, g_err, sizeof g_err) != 0 && has("not a .npy file"));
    CHECK(tio_load("/nonexistent/x.npy", &t, NULL, g_err, sizeof g_err) != 0);
    CHECK(has("cannot open /nonexistent/x.npy") && has("No such file"));
    CHECK(tio_load(dir, &t, NULL, g_err, sizeof g_err) != 0 && has("directory"));
    CHECK(tio_npy_save("/nonexistent/dir/o.npy", &(frt_tensor){.dtype = FRT_FLOAT32, .rank = 0,
                                                               .data = &(float){1}, .nbytes = 4},
                       g_err, sizeof g_err) != 0);
    CHECK(has("cannot write /nonexistent/dir/o.npy"));

    CHECK(tio_sniff(NULL, k_pb_i64_raw, K_PB_I64_RAW_LEN) == TIO_FORMAT_PB);
    CHECK(tio_sniff("x.pb", "junk", 4) == TIO_FORMAT_PB);
    CHECK(tio_sniff("x.bin", "\x07\x07", 2) == TIO_FORMAT_UNKNOWN);
    CHECK(tio_sniff("x.pb", k_np_bool_3, K_NP_BOOL_3_LEN) == TIO_FORMAT_NPY);

    /* small error buffers truncate without overflow */
    char tiny[8];
    CHECK(tio_load("/nonexistent/x.npy", &t, NULL, tiny, sizeof tiny) != 0);
    CHECK(strlen(tiny) == 7);

    unlink(p_npy);
    unlink(p_pb);
    unlink(p_bin);
    unlink(p_bin2);
    unlink(p_junk);
    unlink(p_out);
    unlink(p_fakenpy);
    rmdir(dir);
}

static void test_half(void) {
    /* every finite half survives half -> float -> half; NaNs stay NaN */
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = tio_half_to_float((uint16_t)h);
        uint16_t back = tio_float_to_half(f);
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) {
            if (!isnan(f) || (back & 0x7c00) != 0x7c00 || !(back & 0x3ff)) bad++;
        } else if (back != h) {
            bad++;
        }
    }
    CHECK(bad == 0);
    CHECK(tio_half_to_float(0x3c00) == 1.0f && tio_half_to_float(0xc000) == -2.0f);
    CHECK(tio_half_to_float(0x0001) == ldexpf(1, -24) && tio_half_to_float(0x7bff) == 65504.0f);
    CHECK(isinf(tio_half_to_float(0x7c00)));
    CHECK(tio_float_to_half(65519.0f) == 0x7bff && tio_float_to_half(65520.0f) == 0x7c00);
    CHECK(tio_float_to_half(1e-9f) == 0 && tio_float_to_half(-1e-9f) == 0x8000);
    CHECK(tio_float_to_half(ldexpf(1, -25)) == 0);                     /* tie to even: 0 */
    CHECK(tio_float_to_half(ldexpf(3, -26)) == 0x0001);                /* 0.75 ulp -> 1 */
    CHECK(tio_float_to_half(1.0f + ldexpf(1, -11)) == 0x3c00);         /* tie to even */
    CHECK(tio_float_to_half(1.0f + 3 * ldexpf(1, -11)) == 0x3c02);     /* tie to even, up */
    CHECK(tio_float_to_half(ldexpf(1, -14) - ldexpf(1, -26)) == 0x0400); /* rounds to normal */
}

static void test_sanitize(void) {
    char out[64];
    tio_sanitize_name("input:0/x y", out, sizeof out);
    CHECK(strcmp(out, "input_0_x_y") == 0);
    tio_sanitize_name("Keep.me_1-2", out, sizeof out);
    CHECK(strcmp(out, "Keep.me_1-2") == 0);
    tio_sanitize_name("caf\xc3\xa9", out, sizeof out);
    CHECK(strcmp(out, "caf__") == 0);
    tio_sanitize_name("abcdef", out, 4);
    CHECK(strcmp(out, "abc") == 0);
    tio_sanitize_name("", out, sizeof out);
    CHECK(out[0] == 0);
    CHECK(strcmp(tio_npy_descr(FRT_FLOAT32), "<f4") == 0 && tio_npy_descr(FRT_STRING) == NULL);
    frt_tensor t = {.dtype = FRT_INT64, .rank = 1, .shape = {1}, .data = &(int64_t){-5},
                    .nbytes = 8};
    CHECK(tio_element_as_double(&t, 0) == -5.0);
    t.dtype = FRT_STRING;
    CHECK(tio_element_as_double(&t, 0) == 0);
}

/* SequenceProto / OptionalProto files (tio_load_value), built by hand: a sequence of two int64
 * tensors, an empty sequence, an optional tensor with and without a value, an optional sequence,
 * kinds the model does not expect, non-tensor elements, and every truncation. */
static int load_v(const char *p, frt_kind kind, frt_kind elem, frt_io_value *v, char **name) {
    return tio_load_value(p, kind, elem, v, name, g_err, sizeof g_err);
}

static void test_values(void) {
    char dir[] = "/tmp/frt_tiov_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char p[160];
    snprintf(p, sizeof p, "%s/v.pb", dir);
    /* TensorProto: dims [2], int64, int64_data 5, 6 (packed) / scalar 9 */
    static const unsigned char t1[] = {0x08, 0x02, 0x10, 0x07, 0x3a, 0x02, 0x05, 0x06};
    static const unsigned char t2[] = {0x10, 0x07, 0x38, 0x09};
    unsigned char seq[64];
    size_t n = 0;
    seq[n++] = 0x0a, seq[n++] = 1, seq[n++] = 's';            /* name "s" */
    seq[n++] = 0x10, seq[n++] = 1;                            /* elem_type TENSOR */
    seq[n++] = 0x1a, seq[n++] = sizeof t1;                    /* tensor_values */
    memcpy(seq + n, t1, sizeof t1), n += sizeof t1;
    seq[n++] = 0x1a, seq[n++] = sizeof t2;
    memcpy(seq + n, t2, sizeof t2), n += sizeof t2;
    frt_io_value v;
    write_bytes(p, seq, n);
    CHECK(load_v(p, FRT_KIND_SEQUENCE, FRT_KIND_TENSOR, &v, NULL) == 0);
    CHECK(v.kind == FRT_KIND_SEQUENCE && v.n == 2 && v.elem_dtype == FRT_INT64);
    if (v.n == 2)
        CHECK(v.tensors[0].rank == 1 && ((int64_t *)v.tensors[0].data)[1] == 6 &&
              v.tensors[1].rank == 0 && *(int64_t *)v.tensors[1].data == 9);
    tio_value_free(&v);
    CHECK(v.tensors == NULL && v.n == 0);
    /* every truncation fails cleanly or reads a shorter sequence */
    for (size_t k = 0; k < n; k++) {
        write_bytes(p, seq, k);
        if (load_v(p, FRT_KIND_SEQUENCE, FRT_KIND_TENSOR, &v, NULL) == 0)
            CHECK(v.n <= 2);
        tio_value_free(&v);
    }
    /* empty sequence: only elem_type */
    static const unsigned char empty[] = {0x10, 0x01};
    write_bytes(p, empty, sizeof empty);
    CHECK(load_v(p, FRT_KIND_SEQUENCE, FRT_KIND_TENSOR, &v, NULL) == 0 &&
          v.n == 0 && v.kind == FRT_KIND_SEQUENCE);
    tio_value_free(&v);
    /* a sequence of maps: refused */
    static const unsigned char maps[] = {0x10, 0x04, 0x32, 0x00};
    write_bytes(p, maps, sizeof maps);
    CHECK(load_v(p, FRT_KIND_SEQUENCE, FRT_KIND_TENSOR, &v, NULL) != 0 &&
          has("not supported"));
    /* OptionalProto holding a tensor (field 3), then one holding nothing */
    unsigned char opt[32];
    n = 0;
    opt[n++] = 0x10, opt[n++] = 1;
    opt[n++] = 0x1a, opt[n++] = sizeof t1;
    memcpy(opt + n, t1, sizeof t1), n += sizeof t1;
    write_bytes(p, opt, n);
    CHECK(load_v(p, FRT_KIND_OPTIONAL, FRT_KIND_TENSOR, &v, NULL) == 0);
    CHECK(v.kind == FRT_KIND_OPTIONAL && v.has_value && v.n == 1 && v.tensors[0].shape[0] == 2);
    tio_value_free(&v);
    CHECK(load_v(p, FRT_KIND_OPTIONAL, FRT_KIND_SEQUENCE, &v, NULL) != 0 &&
          has("expects a sequence"));
    write_bytes(p, opt, 2);
    CHECK(load_v(p, FRT_KIND_OPTIONAL, FRT_KIND_TENSOR, &v, NULL) == 0 &&
          !v.has_value && v.n == 0);
    tio_value_free(&v);
    /* OptionalProto holding a sequence (field 5) */
    n = 0;
    opt[n++] = 0x10, opt[n++] = 3;
    opt[n++] = 0x2a, opt[n++] = 2 + sizeof t2;
    opt[n++] = 0x1a, opt[n++] = sizeof t2;
    memcpy(opt + n, t2, sizeof t2), n += sizeof t2;
    write_bytes(p, opt, n);
    CHECK(load_v(p, FRT_KIND_OPTIONAL, FRT_KIND_SEQUENCE, &v, NULL) == 0);
    CHECK(v.has_value && v.elem_kind == FRT_KIND_SEQUENCE && v.n == 1 &&
          *(int64_t *)v.tensors[0].data == 9);
    tio_value_free(&v);
    /* a plain tensor file read as a tensor value */
    write_bytes(p, t1, sizeof t1);
    char *name = NULL;
    CHECK(load_v(p, FRT_KIND_TENSOR, FRT_KIND_TENSOR, &v, &name) == 0 &&
          v.n == 1 && v.kind == FRT_KIND_TENSOR && name && strcmp(name, "") == 0);
    free(name);
    tio_value_free(&v);
    unlink(p);
    rmdir(dir);
}

int main(void) {
    test_npy_golden();
    test_npy_header_variants();
    test_npy_errors();
    test_npy_fuzz();
    test_npy_roundtrip();
    test_pb_golden();
    test_pb_handmade();
    test_pb_fuzz();
    test_files();
    test_half();
    test_sanitize();
    test_values();
    TEST_MAIN_END();
}
