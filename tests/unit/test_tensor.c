/* Concat Transpose Gather Slice Shape Constant against naive references. */
#include <limits.h>
#include <stdint.h>

#include "op_harness.h"
#include "test_util.h"

void frt_transpose2d_portable(void *dst, const void *src, int64_t A, int64_t B, int64_t dld,
                              int64_t sld, size_t esize);
/* src/ops/tensor.c: the 4-byte 2-D transpose of the best tier <= cap */
typedef void (*frt_transpose2d_u32_fn)(uint32_t *dst, const uint32_t *src, int64_t A, int64_t B,
                                       int64_t dld, int64_t sld);
frt_transpose2d_u32_fn frt_transpose2d_u32_get(frt_isa cap);

/* ---- helpers ---- */

static frt_status run(const char *op, int64_t opset, const frt_onnx_attr *attrs, size_t na,
                      frt_value *ins, int n_in, unsigned const_mask, int unknown, frt_value *out,
                      const char **kname) {
    frt_test_op t = {0};
    t.op_type = op;
    t.opset = opset;
    t.attrs = attrs;
    t.n_attrs = na;
    t.inputs = ins;
    t.n_in = n_in;
    t.const_mask = const_mask;
    t.unknown_dims = unknown;
    t.n_out = 1;
    return frt_test_run_op(&t, out, kname);
}

/* Load-time shape inference only, with the inputs exactly as given (dims may be -1, data NULL). */
static frt_status infer_only(const char *op, int64_t opset, const frt_onnx_attr *attrs, size_t na,
                             frt_value *ins, int n_in, frt_value *out) {
    const frt_op_def *def = frt_op_find("", op);
    if (!def) return FRT_ERR_INTERNAL;
    int32_t in_ids[8], out_ids[1] = {n_in};
    frt_value *in_p[8], *out_p[1] = {out};
    for (int i = 0; i < n_in; i++) {
        in_ids[i] = i;
        in_p[i] = &ins[i];
    }
    frt_node node = {0};
    node.name = "infer_node";
    node.op_type = op;
    node.domain = "";
    node.n_in = n_in;
    node.n_out = 1;
    node.in = in_ids;
    node.out = out_ids;
    node.attrs = attrs;
    node.n_attrs = na;
    node.opset = opset;
    memset(out, 0, sizeof *out);
    frt_op_ctx c = {&node, opset, n_in, 1, in_p, out_p, NULL, FRT_ISA_PORTABLE};
    return def->infer(&c);
}

static int shape_is(const frt_value *v, int rank, const int64_t *dims) {
    if (v->rank != rank) return 0;
    for (int i = 0; i < rank; i++)
        if (v->dims[i] != dims[i]) return 0;
    return 1;
}


static const int esizes[4] = {1, 2, 4, 8};
static const int32_t dtype_of_size[9] = {0, FRT_INT8, FRT_FLOAT16, 0, FRT_FLOAT32, 0, 0, 0,
                                         FRT_INT64};

/* ---- Concat ---- */

static void naive_concat(char *dst, frt_value *ins, int n, int axis, size_t es) {
    int r = ins[0].rank;
    int64_t outer = numel(ins[0].dims, axis), inner = numel(ins[0].dims + axis + 1, r - axis - 1);
    for (int64_t o = 0; o < outer; o++)
        for (int i = 0; i < n; i++)
            for (int64_t a = 0; a < ins[i].dims[axis]; a++)
                for (int64_t e = 0; e < inner; e++) {
                    int64_t src = (o * ins[i].dims[axis] + a) * inner + e;
                    memcpy(dst, (char *)ins[i].data + src * es, es);
                    dst += es;
                }
}

static void test_concat(void) {
    const int64_t base[4] = {3, 5, 2, 7};
    for (int ei = 0; ei < 4; ei++) {
        size_t es = (size_t)esizes[ei];
        int32_t dt = dtype_of_size[es];
        for (int axis = -4; axis < 4; axis++) {
            int ax = axis < 0 ? axis + 4 : axis;
            int64_t d[3][4];
            void *buf[3];
            frt_value ins[3];
            const int64_t extra[3] = {1, 4, 0}; /* a zero-size input in the middle is legal */
            for (int i = 0; i < 3; i++) {
                memcpy(d[i], base, sizeof base);
                d[i][ax] = extra[i] + (ax == 3 ? 2 : 0);
                size_t nb = (size_t)numel(d[i], 4) * es;
                buf[i] = malloc(nb ? nb : 1);
                fill_bytes(buf[i], nb, 100u + (unsigned)i);
                ins[i] = frt_test_value(dt, 4, d[i], buf[i]);
            }
            frt_onnx_attr at = frt_test_attr_int("axis", axis);
            frt_value out;
            CHECK_OK(run("Concat", 13, &at, 1, ins, 3, 0, 0, &out, NULL));
            int64_t od[4];
            memcpy(od, base, sizeof od);
            od[ax] = d[0][ax] + d[1][ax] + d[2][ax];
            CHECK(shape_is(&out, 4, od));
            size_t nb = (size_t)numel(od, 4) * es;
            char *ref = malloc(nb);
            naive_concat(ref, ins, 3, ax, es);
            CHECK_MSG(out.data && memcmp(out.data, ref, nb) == 0, "es %zu axis %d", es, axis);
            free(ref);
            free(out.data);
            for (int i = 0; i < 3; i++) free(buf[i]);
        }
    }
    /* int64 1-D concat, as shape subgraphs do, with unknown dims at load */
    {
        int64_t a[2] = {-1, 4}, b[1] = {7}, c0[3] = {1, 2, 3};
        int64_t da = 2, db = 1, dc = 3;
        frt_value ins[3] = {frt_test_value(FRT_INT64, 1, &da, a), frt_test_value(FRT_INT64, 1, &db, b),
                            frt_test_value(FRT_INT64, 1, &dc, c0)};
        frt_onnx_attr at = frt_test_attr_int("axis", 0);
        frt_value out;
        CHECK_OK(run("Concat", 11, &at, 1, ins, 3, 0, 1, &out, NULL));
        int64_t exp[6] = {-1, 4, 7, 1, 2, 3};
        int64_t six = 6;
        CHECK(shape_is(&out, 1, &six));
        CHECK(out.data && memcmp(out.data, exp, sizeof exp) == 0);
        free(out.data);
    }
    /* load-time inference with unknown dims */
    {
        int64_t d0[3] = {-1, 3, 4}, d1[3] = {2, -1, 5};
        frt_value ins[2] = {frt_test_value(FRT_FLOAT32, 3, d0, NULL),
                            frt_test_value(FRT_FLOAT32, 3, d1, NULL)};
        frt_onnx_attr at = frt_test_attr_int("axis", -1);
        frt_value out;
        CHECK_OK(infer_only("Concat", 13, &at, 1, ins, 2, &out));
        int64_t e[3] = {2, 3, 9};
        CHECK(shape_is(&out, 3, e));
        frt_onnx_attr a1 = frt_test_attr_int("axis", 1);
        CHECK(infer_only("Concat", 13, &a1, 1, ins, 2, &out) == FRT_ERR_SHAPE); /* 4 vs 5 */
        ins[1].dims[2] = 4;
        CHECK_OK(infer_only("Concat", 13, &a1, 1, ins, 2, &out));
        int64_t e1[3] = {2, -1, 4};
        CHECK_MSG(shape_is(&out, 3, e1), "got rank %d", out.rank);
        ins[1].rank = -1;
        CHECK_OK(infer_only("Concat", 13, &at, 1, ins, 2, &out));
        int64_t e2[3] = {-1, 3, -1};
        CHECK(shape_is(&out, 3, e2));
    }
    /* errors */
    {
        int64_t d0[2] = {2, 3}, d1[2] = {3, 3}, d2[3] = {2, 3, 1};
        float buf[18] = {0};
        frt_value ins[2] = {frt_test_value(FRT_FLOAT32, 2, d0, buf),
                            frt_test_value(FRT_FLOAT32, 2, d1, buf)};
        frt_onnx_attr at = frt_test_attr_int("axis", 1);
        frt_value out;
        CHECK(run("Concat", 13, &at, 1, ins, 2, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("test_node") && err_has("Concat") && err_has("[2,3]") && err_has("[3,3]"));
        frt_onnx_attr bad = frt_test_attr_int("axis", 2);
        ins[1] = frt_test_value(FRT_FLOAT32, 2, d0, buf);
        CHECK(run("Concat", 13, &bad, 1, ins, 2, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("axis 2 out of range"));
        CHECK(run("Concat", 13, NULL, 0, ins, 2, 0, 0, &out, NULL) == FRT_ERR_MALFORMED);
        CHECK(err_has("axis"));
        ins[1] = frt_test_value(FRT_FLOAT32, 3, d2, buf);
        CHECK(run("Concat", 13, &at, 1, ins, 2, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("rank"));
        ins[1] = frt_test_value(FRT_INT32, 2, d0, buf);
        CHECK(run("Concat", 13, &at, 1, ins, 2, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("dtype"));
    }
}

/* ---- Transpose ---- */

static void naive_transpose(char *dst, const char *src, const int64_t *dims, int r,
                            const int *perm, size_t es) {
    int64_t od[8], istr[8], n = numel(dims, r);
    int64_t acc = 1;
    for (int i = r - 1; i >= 0; i--) {
        istr[i] = acc;
        acc *= dims[i];
    }
    for (int k = 0; k < r; k++) od[k] = dims[perm[k]];
    for (int64_t o = 0; o < n; o++) {
        int64_t rem = o, si = 0;
        for (int k = r - 1; k >= 0; k--) {
            int64_t ik = rem % od[k];
            rem /= od[k];
            si += ik * istr[perm[k]];
        }
        memcpy(dst + o * (int64_t)es, src + si * (int64_t)es, es);
    }
}

/* Runs Transpose on random bytes and compares with the naive reference. perm NULL: default. */
static void check_transpose(const int64_t *dims, int r, const int *perm, size_t es,
                            const char *expect_kernel) {
    int32_t dt = dtype_of_size[es];
    int64_t n = numel(dims, r);
    char *src = malloc((size_t)(n ? n : 1) * es), *ref = malloc((size_t)(n ? n : 1) * es);
    fill_bytes(src, (size_t)n * es, (unsigned)(n + r));
    int p[8];
    int64_t pa[8];
    for (int i = 0; i < r; i++) {
        p[i] = perm ? perm[i] : r - 1 - i;
        pa[i] = p[i];
    }
    frt_onnx_attr at = frt_test_attr_ints("perm", pa, (size_t)r);
    frt_value in = frt_test_value(dt, r, dims, src), out;
    const char *kn = NULL;
    CHECK_OK(run("Transpose", 13, &at, perm ? 1 : 0, &in, 1, 0, 0, &out, &kn));
    naive_transpose(ref, src, dims, r, p, es);
    int64_t od[8];
    for (int k = 0; k < r; k++) od[k] = dims[p[k]];
    CHECK(shape_is(&out, r, od));
    CHECK_MSG(out.data && memcmp(out.data, ref, (size_t)n * es) == 0, "rank %d es %zu", r, es);
    if (expect_kernel)
        CHECK_MSG(kn && strncmp(kn, expect_kernel, strlen(expect_kernel)) == 0, "kernel %s", kn);
    free(out.data);
    free(src);
    free(ref);
}

static void test_transpose(void) {
    /* 2-D with odd sizes (vector tails) for every element size */
    const int p2[2] = {1, 0};
    const int64_t sizes2[][2] = {{1, 1}, {7, 9}, {8, 8}, {37, 53}, {64, 33}, {3, 1000}, {129, 17}};
    for (int ei = 0; ei < 4; ei++)
        for (size_t s = 0; s < sizeof sizes2 / sizeof sizes2[0]; s++)
            check_transpose(sizes2[s], 2, p2, (size_t)esizes[ei],
                            sizes2[s][0] > 1 && sizes2[s][1] > 1 ? "transpose_2d" : NULL);
    /* NCHW <-> NHWC, odd sizes */
    const int to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
    const int64_t nchw[4] = {2, 13, 7, 11}, nhwc[4] = {2, 7, 11, 13}, img[4] = {1, 224, 224, 3};
    for (int ei = 0; ei < 4; ei++) {
        check_transpose(nchw, 4, to_nhwc, (size_t)esizes[ei], "transpose_2d");
        check_transpose(nhwc, 4, to_nchw, (size_t)esizes[ei], "transpose_2d");
    }
    check_transpose(img, 4, to_nchw, 4, "transpose_2d");
    /* identity (also with size-1 dims moved around), default reverse, block copies */
    const int id3[3] = {0, 1, 2}, sw[4] = {0, 2, 1, 3}, ones[4] = {1, 0, 2, 3};
    const int64_t d3[3] = {4, 5, 6}, d4[4] = {2, 3, 5, 7}, d1[4] = {1, 6, 1, 5};
    check_transpose(d3, 3, id3, 4, "transpose_copy");
    check_transpose(d1, 4, ones, 2, "transpose_copy");
    check_transpose(d3, 3, NULL, 8, "transpose_2d");
    check_transpose(d4, 4, sw, 4, "transpose_blocks"); /* channel shuffle / attention heads */
    check_transpose(d4, 4, sw, 1, "transpose_blocks");
    /* rank 0 and 1 */
    const int64_t one[1] = {9};
    check_transpose(one, 1, NULL, 4, "transpose_copy");
    check_transpose(NULL, 0, NULL, 4, "transpose_copy");
    /* zero-size */
    const int64_t dz[3] = {3, 0, 2};
    check_transpose(dz, 3, NULL, 4, NULL);
    /* every permutation of a rank-5 odd shape, for 4- and 2-byte elements */
    const int64_t d5[5] = {3, 2, 5, 4, 3};
    int perm[5];
    int count = 0;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            for (int c = 0; c < 5; c++)
                for (int d = 0; d < 5; d++)
                    for (int e = 0; e < 5; e++) {
                        if ((1 << a | 1 << b | 1 << c | 1 << d | 1 << e) != 31) continue;
                        perm[0] = a, perm[1] = b, perm[2] = c, perm[3] = d, perm[4] = e;
                        check_transpose(d5, 5, perm, 4, NULL);
                        if (count++ % 7 == 0) check_transpose(d5, 5, perm, 2, NULL);
                    }
    CHECK(count == 120);
    /* rank 8 */
    const int64_t d8[8] = {2, 1, 3, 2, 1, 2, 3, 2};
    const int p8[8] = {7, 2, 5, 0, 6, 1, 3, 4};
    check_transpose(d8, 8, p8, 8, NULL);

    /* the 2-D kernels directly with leading dims larger than the extents */
    for (int64_t A = 1; A < 40; A += 3)
        for (int64_t B = 1; B < 40; B += 5) {
            int64_t sld = A + 3, dld = B + 2;
            uint32_t *src = malloc((size_t)(B * sld) * 4), *d1p = calloc((size_t)(A * dld), 4),
                     *d2p = calloc((size_t)(A * dld), 4);
            fill_bytes(src, (size_t)(B * sld) * 4, (unsigned)(A * 100 + B));
            frt_transpose2d_portable(d1p, src, A, B, dld, sld, 4);
            int ok = 1;
            for (int64_t a = 0; a < A; a++)
                for (int64_t b = 0; b < B; b++)
                    if (d1p[a * dld + b] != src[b * sld + a]) ok = 0;
            CHECK_MSG(ok, "portable %lldx%lld", (long long)A, (long long)B);
            /* the variant of the tier this process runs (FRT_ISA; portable tier: the same) */
            frt_transpose2d_u32_get(frt_cpu_tier())(d2p, src, A, B, dld, sld);
            CHECK_MSG(memcmp(d1p, d2p, (size_t)(A * dld) * 4) == 0, "%s %lldx%lld",
                      frt_isa_name(frt_cpu_tier()), (long long)A, (long long)B);
            free(src);
            free(d1p);
            free(d2p);
        }

    /* load-time inference: unknown rank with perm, unknown dims */
    {
        int64_t d[3] = {-1, 3, 4};
        frt_value in = frt_test_value(FRT_FLOAT32, 3, d, NULL), out;
        int64_t pa[3] = {2, 0, 1};
        frt_onnx_attr at = frt_test_attr_ints("perm", pa, 3);
        CHECK_OK(infer_only("Transpose", 13, &at, 1, &in, 1, &out));
        int64_t e[3] = {4, -1, 3};
        CHECK(shape_is(&out, 3, e));
        in.rank = -1;
        CHECK_OK(infer_only("Transpose", 13, &at, 1, &in, 1, &out));
        int64_t e2[3] = {-1, -1, -1};
        CHECK(shape_is(&out, 3, e2));
        CHECK_OK(infer_only("Transpose", 13, NULL, 0, &in, 1, &out));
        CHECK(out.rank == -1);
        /* runs with unknown dims at select */
        float buf[24];
        t_fill(buf, 24, 5);
        int64_t dd[3] = {2, 3, 4};
        frt_value rin = frt_test_value(FRT_FLOAT32, 3, dd, buf);
        CHECK_OK(run("Transpose", 13, &at, 1, &rin, 1, 0, 1, &out, NULL));
        float ref[24];
        const int pp[3] = {2, 0, 1};
        naive_transpose((char *)ref, (char *)buf, dd, 3, pp, 4);
        CHECK(out.data && memcmp(out.data, ref, sizeof ref) == 0);
        free(out.data);
    }
    /* errors */
    {
        int64_t d[3] = {2, 3, 4};
        float buf[24] = {0};
        frt_value in = frt_test_value(FRT_FLOAT32, 3, d, buf), out;
        int64_t bad1[3] = {0, 1, 1}, bad2[2] = {1, 0}, bad3[3] = {0, 3, 1};
        frt_onnx_attr a1 = frt_test_attr_ints("perm", bad1, 3);
        CHECK(run("Transpose", 13, &a1, 1, &in, 1, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("test_node") && err_has("perm"));
        frt_onnx_attr a2 = frt_test_attr_ints("perm", bad2, 2);
        CHECK(run("Transpose", 13, &a2, 1, &in, 1, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("rank 3"));
        frt_onnx_attr a3 = frt_test_attr_ints("perm", bad3, 3);
        CHECK(run("Transpose", 13, &a3, 1, &in, 1, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
        frt_value sin = frt_test_value(FRT_STRING, 3, d, buf);
        CHECK(run("Transpose", 13, NULL, 0, &sin, 1, 0, 0, &out, NULL) == FRT_ERR_UNSUPPORTED);
        CHECK(err_has("string"));
    }
}

/* ---- Gather ---- */

static void naive_gather(char *dst, const char *src, const int64_t *dims, int r, int axis,
                         const int64_t *idx, int64_t ni, size_t es) {
    int64_t outer = numel(dims, axis), inner = numel(dims + axis + 1, r - axis - 1);
    int64_t n = dims[axis];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < ni; j++) {
            int64_t v = idx[j] < 0 ? idx[j] + n : idx[j];
            for (int64_t e = 0; e < inner; e++) {
                memcpy(dst, src + ((o * n + v) * inner + e) * (int64_t)es, es);
                dst += es;
            }
        }
}

static void test_gather(void) {
    const int64_t dims[3] = {5, 6, 7};
    const int64_t idx[6] = {0, -1, 3, 2, -5, 1};
    const int64_t ishape[2] = {2, 3};
    for (int ei = 0; ei < 4; ei++) {
        size_t es = (size_t)esizes[ei];
        int32_t dt = dtype_of_size[es];
        char *src = malloc(210 * es), *ref = malloc(210 * 6 * es);
        fill_bytes(src, 210 * es, (unsigned)es);
        for (int axis = -3; axis < 3; axis++) {
            int ax = axis < 0 ? axis + 3 : axis;
            for (int itype = 0; itype < 2; itype++) {
                for (int irank = 0; irank <= 2; irank++) { /* scalar, 1-D, 2-D indices */
                    int64_t ni = irank == 0 ? 1 : irank == 1 ? 6 : 6;
                    int64_t i1 = 6;
                    const int64_t *ish = irank == 1 ? &i1 : ishape;
                    int32_t i32[6];
                    for (int j = 0; j < 6; j++) i32[j] = (int32_t)idx[j];
                    /* scalar index: use idx[1] (negative) */
                    int64_t sidx64 = idx[1];
                    int32_t sidx32 = (int32_t)sidx64;
                    void *ip = irank == 0 ? (itype ? (void *)&sidx64 : (void *)&sidx32)
                                          : (itype ? (void *)idx : (void *)i32);
                    frt_value ins[2] = {frt_test_value(dt, 3, dims, src),
                                        frt_test_value(itype ? FRT_INT64 : FRT_INT32, irank,
                                                       ish, ip)};
                    frt_onnx_attr at = frt_test_attr_int("axis", axis);
                    frt_value out;
                    CHECK_OK(run("Gather", 13, &at, 1, ins, 2, 2, 0, &out, NULL));
                    int64_t od[4];
                    int o = 0;
                    for (int d = 0; d < ax; d++) od[o++] = dims[d];
                    for (int d = 0; d < irank; d++) od[o++] = ish[d];
                    for (int d = ax + 1; d < 3; d++) od[o++] = dims[d];
                    CHECK(shape_is(&out, o, od));
                    const int64_t *ri = irank == 0 ? &sidx64 : idx;
                    naive_gather(ref, src, dims, 3, ax, ri, ni, es);
                    size_t nb = (size_t)numel(od, o) * es;
                    CHECK_MSG(out.data && memcmp(out.data, ref, nb) == 0,
                              "es %zu axis %d itype %d irank %d", es, axis, itype, irank);
                    free(out.data);
                }
            }
        }
        free(src);
        free(ref);
    }
    /* shape-subgraph style: int64 data, scalar index, unknown dims at select */
    {
        int64_t shp[4] = {8, 3, 224, 224}, four = 4, i0 = 0;
        frt_value ins[2] = {frt_test_value(FRT_INT64, 1, &four, shp),
                            frt_test_value(FRT_INT64, 0, NULL, &i0)};
        frt_onnx_attr at = frt_test_attr_int("axis", 0);
        frt_value out;
        CHECK_OK(run("Gather", 11, &at, 1, ins, 2, 0, 1, &out, NULL));
        CHECK(out.rank == 0 && out.dtype == FRT_INT64 && out.data && *(int64_t *)out.data == 8);
        free(out.data);
    }
    /* empty indices */
    {
        float src[6] = {1, 2, 3, 4, 5, 6};
        int64_t d[2] = {2, 3}, z = 0, idx0[1] = {0};
        frt_value ins[2] = {frt_test_value(FRT_FLOAT32, 2, d, src),
                            frt_test_value(FRT_INT64, 1, &z, idx0)};
        frt_onnx_attr at = frt_test_attr_int("axis", 1);
        frt_value out;
        CHECK_OK(run("Gather", 13, &at, 1, ins, 2, 0, 0, &out, NULL));
        int64_t e[2] = {2, 0};
        CHECK(shape_is(&out, 2, e));
        free(out.data);
    }
    /* out of range indices fail at run time naming the index */
    {
        float src[6] = {1, 2, 3, 4, 5, 6};
        int64_t d[2] = {2, 3}, three = 3;
        int64_t bad[3] = {0, 3, 1};
        int32_t badn[3] = {0, 1, -4};
        frt_value ins[2] = {frt_test_value(FRT_FLOAT32, 2, d, src),
                            frt_test_value(FRT_INT64, 1, &three, bad)};
        frt_onnx_attr at = frt_test_attr_int("axis", 1);
        frt_value out;
        CHECK(run("Gather", 13, &at, 1, ins, 2, 0, 0, &out, NULL) == FRT_ERR_RUNTIME);
        CHECK(err_has("test_node") && err_has("index 3") && err_has("size 3"));
        ins[1] = frt_test_value(FRT_INT32, 1, &three, badn);
        CHECK(run("Gather", 13, &at, 1, ins, 2, 2, 0, &out, NULL) == FRT_ERR_RUNTIME);
        CHECK(err_has("index -4"));
        frt_onnx_attr a5 = frt_test_attr_int("axis", 2);
        CHECK(run("Gather", 13, &a5, 1, ins, 2, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("axis 2"));
        float fidx[3] = {0, 1, 2};
        ins[1] = frt_test_value(FRT_FLOAT32, 1, &three, fidx);
        CHECK(run("Gather", 13, &at, 1, ins, 2, 0, 0, &out, NULL) == FRT_ERR_UNSUPPORTED);
        CHECK(err_has("indices"));
    }
}

/* ---- Slice ---- */

/* Python's slice.indices, written the CPython way (independent of the kernel's clamping):
 * returns the number of elements and sets *first. */
static int64_t py_slice(int64_t n, int64_t start, int64_t stop, int64_t step, int64_t *first) {
    if (start < 0) {
        start += n;
        if (start < 0) start = step < 0 ? -1 : 0;
    } else if (start >= n) {
        start = step < 0 ? n - 1 : n;
    }
    if (stop < 0) {
        stop += n;
        if (stop < 0) stop = step < 0 ? -1 : 0;
    } else if (stop >= n) {
        stop = step < 0 ? n - 1 : n;
    }
    *first = start;
    int64_t cnt = 0;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        cnt++;
        if ((step > 0 && i > INT64_MAX - step) || (step < 0 && i < INT64_MIN - step)) break;
    }
    return cnt;
}

/* Naive N-d slice through per-dim index lists. */
static void naive_slice(char *dst, const char *src, const int64_t *dims, int r,
                        const int64_t *first, const int64_t *step, const int64_t *cnt, size_t es) {
    int64_t istr[8], acc = 1, total = numel(cnt, r);
    for (int i = r - 1; i >= 0; i--) {
        istr[i] = acc;
        acc *= dims[i];
    }
    for (int64_t o = 0; o < total; o++) {
        int64_t rem = o, si = 0;
        for (int k = r - 1; k >= 0; k--) {
            int64_t ik = rem % cnt[k];
            rem /= cnt[k];
            si += (first[k] + ik * step[k]) * istr[k];
        }
        memcpy(dst + o * (int64_t)es, src + si * (int64_t)es, es);
    }
}

typedef struct slice_case {
    int m;
    int64_t starts[3], ends[3], axes[3], steps[3];
    int has_axes, has_steps;
} slice_case;

/* Checks one Slice in the opset-13 input form (and the opset-9 attribute form when steps are 1),
 * constant or runtime parameters. */
static void check_slice(const int64_t *dims, int r, const slice_case *sc, size_t es,
                        unsigned const_mask, int unknown, int use_i32) {
    int32_t dt = dtype_of_size[es];
    int64_t n = numel(dims, r);
    char *src = malloc((size_t)n * es);
    fill_bytes(src, (size_t)n * es, 77);
    int64_t first[8], step[8], cnt[8];
    for (int d = 0; d < r; d++) {
        first[d] = 0;
        step[d] = 1;
        cnt[d] = dims[d];
    }
    for (int i = 0; i < sc->m; i++) {
        int64_t a = sc->has_axes ? sc->axes[i] : i;
        int d = (int)(a < 0 ? a + r : a);
        int64_t k = sc->has_steps ? sc->steps[i] : 1;
        step[d] = k;
        cnt[d] = py_slice(dims[d], sc->starts[i], sc->ends[i], k, &first[d]);
    }
    int64_t on = numel(cnt, r);
    char *ref = malloc((size_t)(on ? on : 1) * es);
    naive_slice(ref, src, dims, r, first, step, cnt, es);

    int64_t m = sc->m;
    int32_t s32[3], e32[3], a32[3], k32[3];
    for (int i = 0; i < 3; i++) {
        s32[i] = (int32_t)(sc->starts[i] > INT32_MAX ? INT32_MAX : sc->starts[i] < INT32_MIN ? INT32_MIN : sc->starts[i]);
        e32[i] = (int32_t)(sc->ends[i] > INT32_MAX ? INT32_MAX : sc->ends[i] < INT32_MIN ? INT32_MIN : sc->ends[i]);
        a32[i] = (int32_t)sc->axes[i];
        k32[i] = (int32_t)(sc->steps[i] > INT32_MAX ? INT32_MAX : sc->steps[i] < INT32_MIN ? INT32_MIN : sc->steps[i]);
    }
    int32_t it = use_i32 ? FRT_INT32 : FRT_INT64;
    frt_value ins[5] = {
        frt_test_value(dt, r, dims, src),
        frt_test_value(it, 1, &m, use_i32 ? (void *)s32 : (void *)sc->starts),
        frt_test_value(it, 1, &m, use_i32 ? (void *)e32 : (void *)sc->ends),
        frt_test_value(it, 1, &m, use_i32 ? (void *)a32 : (void *)sc->axes),
        frt_test_value(it, 1, &m, use_i32 ? (void *)k32 : (void *)sc->steps)};
    frt_test_op t = {0};
    t.op_type = "Slice";
    t.opset = 13;
    t.inputs = ins;
    t.n_in = 5;
    t.absent_mask = (sc->has_axes ? 0 : 8u) | (sc->has_steps ? 0 : 16u);
    t.const_mask = const_mask;
    t.unknown_dims = unknown;
    t.n_out = 1;
    frt_value out;
    CHECK_OK(frt_test_run_op(&t, &out, NULL));
    CHECK(shape_is(&out, r, cnt));
    CHECK_MSG(out.data && memcmp(out.data, ref, (size_t)on * es) == 0, "slice es %zu", es);
    free(out.data);

    int all_pos = 1;
    for (int i = 0; i < sc->m; i++)
        if (sc->has_steps && sc->steps[i] != 1) all_pos = 0;
    if (all_pos) { /* opset 9 attribute form */
        frt_onnx_attr at[3] = {frt_test_attr_ints("starts", sc->starts, (size_t)m),
                               frt_test_attr_ints("ends", sc->ends, (size_t)m),
                               frt_test_attr_ints("axes", sc->axes, (size_t)m)};
        CHECK_OK(run("Slice", 9, at, sc->has_axes ? 3 : 2, ins, 1, 0, unknown, &out, NULL));
        CHECK(shape_is(&out, r, cnt));
        CHECK_MSG(out.data && memcmp(out.data, ref, (size_t)on * es) == 0, "slice v1 es %zu", es);
        free(out.data);
    }
    free(src);
    free(ref);
}

static void test_slice(void) {
    const int64_t d3[3] = {6, 7, 9};
    const int64_t BIG = INT64_MAX, SMALL = INT64_MIN;
    const slice_case cases[] = {
        {1, {1}, {4}, {0}, {1}, 0, 0},                                /* simple */
        {2, {2, -3}, {100, -1}, {-1, 1}, {1, 1}, 1, 0},               /* negative axes/ends */
        {1, {-1}, {SMALL}, {2}, {-1}, 1, 1},                          /* reverse last dim */
        {1, {BIG}, {SMALL}, {0}, {-2}, 1, 1},                         /* sentinels, step -2 */
        {3, {8, 0, -100}, {1, BIG, 100}, {2, 0, 1}, {-3, 2, 3}, 1, 1}, /* mixed */
        {1, {5}, {2}, {1}, {1}, 1, 1},                                /* empty */
        {1, {2}, {5}, {1}, {-1}, 1, 1},                               /* empty, negative step */
        {1, {-100}, {100}, {1}, {BIG}, 1, 1},                         /* huge step: 1 element */
        {1, {100}, {-100}, {1}, {SMALL}, 1, 1},                       /* INT64_MIN step */
        {2, {0, 0}, {BIG, BIG}, {0, 1}, {1, 1}, 1, 1},                /* whole: one copy */
        {1, {1}, {5}, {-1}, {1}, 1, 0},                               /* partial last dim */
        {1, {1}, {3}, {1}, {1}, 1, 0},                                /* middle dim run */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int ei = 0; ei < 4; ei++) {
            check_slice(d3, 3, &cases[i], (size_t)esizes[ei], 0x1e, 0, 0);
            check_slice(d3, 3, &cases[i], (size_t)esizes[ei], 0x1e, 0, 1); /* int32 params */
        }
    /* parameters not constant at load (computed by a shape subgraph), unknown dims at select */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_slice(d3, 3, &cases[i], 4, 0x0, 1, 0);
        check_slice(d3, 3, &cases[i], 8, 0x18, 0, 0);
    }
    /* int64 shape slicing (shape subgraph): shape[-2:] */
    {
        int64_t shp[4] = {8, 3, 224, 225}, four = 4, one = 1, st = -2, en = BIG;
        frt_value ins[3] = {frt_test_value(FRT_INT64, 1, &four, shp),
                            frt_test_value(FRT_INT64, 1, &one, &st),
                            frt_test_value(FRT_INT64, 1, &one, &en)};
        frt_value out;
        CHECK_OK(run("Slice", 11, NULL, 0, ins, 3, 6, 1, &out, NULL));
        CHECK(out.rank == 1 && out.dims[0] == 2 && out.data && ((int64_t *)out.data)[0] == 224 &&
              ((int64_t *)out.data)[1] == 225);
        free(out.data);
    }
    /* load-time inference */
    {
        int64_t dx[3] = {-1, 10, 12}, one = 1, two = 2;
        int64_t st[2] = {2, 1}, en[2] = {8, -1}, ax[2] = {1, -1};
        frt_value ins[4] = {frt_test_value(FRT_FLOAT32, 3, dx, NULL),
                            frt_test_value(FRT_INT64, 1, &two, st),
                            frt_test_value(FRT_INT64, 1, &two, en),
                            frt_test_value(FRT_INT64, 1, &two, ax)};
        frt_value out;
        CHECK_OK(infer_only("Slice", 13, NULL, 0, ins, 4, &out));
        int64_t e[3] = {-1, 6, 10};
        CHECK(shape_is(&out, 3, e));
        ins[1].data = NULL; /* starts unknown: only the sliced axes become unknown */
        CHECK_OK(infer_only("Slice", 13, NULL, 0, ins, 4, &out));
        int64_t e2[3] = {-1, -1, -1};
        CHECK(shape_is(&out, 3, e2));
        ins[1].data = st;
        ins[1].dims[0] = ins[2].dims[0] = ins[3].dims[0] = 1;
        ins[1].numel = ins[2].numel = ins[3].numel = 1;
        ins[3].data = NULL; /* axes unknown: every dim unknown */
        CHECK_OK(infer_only("Slice", 13, NULL, 0, ins, 4, &out));
        CHECK(shape_is(&out, 3, e2));
        ins[3].data = ax;
        ins[1].data = NULL;
        CHECK_OK(infer_only("Slice", 13, NULL, 0, ins, 4, &out));
        int64_t e3[3] = {-1, -1, 12};
        CHECK(shape_is(&out, 3, e3));
        (void)one;
    }
    /* errors */
    {
        float buf[12] = {0};
        int64_t d[2] = {3, 4}, one = 1, two = 2, z = 0, st[2] = {0, 0}, ax2[2] = {1, -1},
                ax5 = 5;
        frt_value ins[5] = {frt_test_value(FRT_FLOAT32, 2, d, buf),
                            frt_test_value(FRT_INT64, 1, &one, st),
                            frt_test_value(FRT_INT64, 1, &one, st),
                            frt_test_value(FRT_INT64, 1, &one, &ax5),
                            frt_test_value(FRT_INT64, 1, &one, &z)};
        frt_value out;
        CHECK(run("Slice", 13, NULL, 0, ins, 4, 14, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("test_node") && err_has("axis 5"));
        ins[3].data = &z;
        CHECK(run("Slice", 13, NULL, 0, ins, 5, 30, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("step"));
        ins[1] = frt_test_value(FRT_INT64, 1, &two, st);
        ins[2] = frt_test_value(FRT_INT64, 1, &two, st);
        ins[3] = frt_test_value(FRT_INT64, 1, &two, ax2);
        CHECK(run("Slice", 13, NULL, 0, ins, 4, 14, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("twice"));
        ins[2] = frt_test_value(FRT_INT64, 1, &one, st);
        CHECK(run("Slice", 13, NULL, 0, ins, 3, 6, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("different lengths"));
        float fs[1] = {0};
        ins[1] = frt_test_value(FRT_FLOAT32, 1, &one, fs);
        CHECK(run("Slice", 13, NULL, 0, ins, 3, 6, 0, &out, NULL) == FRT_ERR_UNSUPPORTED);
        CHECK(run("Slice", 9, NULL, 0, ins, 1, 0, 0, &out, NULL) == FRT_ERR_MALFORMED);
        CHECK(err_has("starts"));
    }
}

/* ---- Shape ---- */

static void test_shape(void) {
    int64_t d[4] = {2, 3, 5, 7};
    float buf[210] = {0};
    frt_value in = frt_test_value(FRT_FLOAT32, 4, d, buf), out;
    const char *kn;
    CHECK_OK(run("Shape", 13, NULL, 0, &in, 1, 0, 1, &out, &kn));
    CHECK(out.dtype == FRT_INT64 && out.rank == 1 && out.dims[0] == 4);
    CHECK(out.data && memcmp(out.data, d, sizeof d) == 0);
    free(out.data);
    struct {
        int has_s, has_e;
        int64_t s, e, lo, hi;
    } cs[] = {{1, 0, 1, 0, 1, 4},   {0, 1, 0, -1, 0, 3},  {1, 1, -3, -1, 1, 3}, {1, 1, -10, 10, 0, 4},
              {1, 1, 3, 1, 3, 3},   {1, 1, 4, 4, 4, 4},   {1, 0, 5, 0, 4, 4}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        frt_onnx_attr at[2];
        size_t na = 0;
        if (cs[i].has_s) at[na++] = frt_test_attr_int("start", cs[i].s);
        if (cs[i].has_e) at[na++] = frt_test_attr_int("end", cs[i].e);
        CHECK_OK(run("Shape", 15, at, na, &in, 1, 0, 0, &out, NULL));
        int64_t n = cs[i].hi - cs[i].lo;
        CHECK_MSG(out.rank == 1 && out.dims[0] == n, "case %zu: got %lld", i,
                  (long long)out.dims[0]);
        CHECK(out.data && (n == 0 || memcmp(out.data, d + cs[i].lo, (size_t)n * 8) == 0));
        free(out.data);
        /* before opset 15 the attributes do not exist */
        CHECK_OK(run("Shape", 13, at, na, &in, 1, 0, 0, &out, NULL));
        CHECK(out.dims[0] == 4);
        free(out.data);
    }
    /* rank 0 */
    frt_value sc = frt_test_value(FRT_FLOAT32, 0, NULL, buf);
    CHECK_OK(run("Shape", 13, NULL, 0, &sc, 1, 0, 0, &out, NULL));
    CHECK(out.rank == 1 && out.dims[0] == 0);
    free(out.data);
    /* infer: unknown rank, unknown dims */
    in.rank = -1;
    CHECK_OK(infer_only("Shape", 13, NULL, 0, &in, 1, &out));
    CHECK(out.rank == 1 && out.dims[0] == -1 && out.dtype == FRT_INT64);
    in = frt_test_value(FRT_FLOAT32, 4, d, NULL);
    in.dims[0] = -1;
    CHECK_OK(infer_only("Shape", 13, NULL, 0, &in, 1, &out));
    CHECK(out.rank == 1 && out.dims[0] == 4);
    /* the kernel is shape-only */
    {
        const frt_op_def *def = frt_op_find("", "Shape");
        int32_t ii = 0, oo = 1;
        frt_node node = {0};
        node.name = "s";
        node.op_type = "Shape";
        node.domain = "";
        node.n_in = node.n_out = 1;
        node.in = &ii;
        node.out = &oo;
        node.opset = 13;
        frt_value *ip = &in, *op = &out;
        frt_arena arena;
        frt_arena_init(&arena);
        frt_op_ctx c = {&node, 13, 1, 1, &ip, &op, &arena, frt_cpu_tier()};
        frt_kernel k = {0};
        CHECK_OK(def->select(&c, &k));
        CHECK(k.flags == FRT_K_SHAPE_ONLY && k.fn);
        frt_arena_free(&arena);
    }
}

/* ---- Constant ---- */

static void test_constant(void) {
    float vals[6] = {1.5f, -2, 3, 4, 5, 6.25f};
    frt_onnx_tensor t = {0};
    t.name = "";
    t.dtype = FRT_FLOAT32;
    t.rank = 2;
    t.dims[0] = 2;
    t.dims[1] = 3;
    t.numel = 6;
    t.data = vals;
    t.nbytes = sizeof vals;
    frt_onnx_attr at = {0};
    at.name = "value";
    at.type = FRT_ATTR_TENSOR;
    at.t = &t;
    frt_value out;
    const char *kn;
    CHECK_OK(run("Constant", 13, &at, 1, NULL, 0, 0, 0, &out, &kn));
    int64_t e[2] = {2, 3};
    CHECK(shape_is(&out, 2, e) && out.dtype == FRT_FLOAT32);
    CHECK(out.data && memcmp(out.data, vals, sizeof vals) == 0);
    free(out.data);
    /* int64 scalar tensor */
    int64_t sv = -42;
    frt_onnx_tensor t2 = t;
    t2.dtype = FRT_INT64;
    t2.rank = 0;
    t2.numel = 1;
    t2.data = &sv;
    t2.nbytes = 8;
    at.t = &t2;
    CHECK_OK(run("Constant", 9, &at, 1, NULL, 0, 0, 0, &out, NULL));
    CHECK(out.rank == 0 && out.dtype == FRT_INT64 && out.data && *(int64_t *)out.data == -42);
    free(out.data);
    /* empty tensor */
    frt_onnx_tensor t3 = t;
    t3.dims[0] = 0;
    t3.numel = 0;
    t3.data = NULL;
    t3.nbytes = 0;
    at.t = &t3;
    CHECK_OK(run("Constant", 13, &at, 1, NULL, 0, 0, 0, &out, NULL));
    CHECK(out.rank == 2 && out.dims[0] == 0 && out.dims[1] == 3);
    free(out.data);
    /* value_float / value_floats / value_int / value_ints */
    frt_onnx_attr a = frt_test_attr_float("value_float", 0.75f);
    CHECK_OK(run("Constant", 13, &a, 1, NULL, 0, 0, 0, &out, NULL));
    CHECK(out.rank == 0 && out.dtype == FRT_FLOAT32 && out.data && *(float *)out.data == 0.75f);
    free(out.data);
    a = frt_test_attr_floats("value_floats", vals, 5);
    CHECK_OK(run("Constant", 13, &a, 1, NULL, 0, 0, 0, &out, NULL));
    CHECK(out.rank == 1 && out.dims[0] == 5 && out.dtype == FRT_FLOAT32);
    CHECK(out.data && memcmp(out.data, vals, 20) == 0);
    free(out.data);
    a = frt_test_attr_int("value_int", 1234567890123LL);
    CHECK_OK(run("Constant", 13, &a, 1, NULL, 0, 0, 0, &out, NULL));
    CHECK(out.rank == 0 && out.dtype == FRT_INT64 && out.data &&
          *(int64_t *)out.data == 1234567890123LL);
    free(out.data);
    int64_t iv[3] = {1, -1, 0};
    a = frt_test_attr_ints("value_ints", iv, 3);
    CHECK_OK(run("Constant", 13, &a, 1, NULL, 0, 0, 0, &out, NULL));
    CHECK(out.rank == 1 && out.dims[0] == 3 && out.dtype == FRT_INT64);
    CHECK(out.data && memcmp(out.data, iv, sizeof iv) == 0);
    free(out.data);
    /* errors */
    frt_onnx_attr sp = {0};
    sp.name = "sparse_value";
    sp.type = FRT_ATTR_TENSOR;
    CHECK(run("Constant", 13, &sp, 1, NULL, 0, 0, 0, &out, NULL) == FRT_ERR_UNSUPPORTED);
    CHECK(err_has("test_node") && err_has("sparse_value"));
    a = frt_test_attr_string("value_string", "hello");
    CHECK(run("Constant", 13, &a, 1, NULL, 0, 0, 0, &out, NULL) == FRT_ERR_UNSUPPORTED);
    CHECK(err_has("unsupported: dtype string"));
    /* a bfloat16 tensor */
    uint16_t bf[2] = {0x3f80, 0xc000};
    frt_onnx_tensor t5 = t;
    t5.dtype = FRT_BFLOAT16;
    t5.rank = 1;
    t5.dims[0] = 2;
    t5.numel = 2;
    t5.data = bf;
    t5.nbytes = 4;
    at.t = &t5;
    CHECK_OK(run("Constant", 13, &at, 1, NULL, 0, 0, 0, &out, NULL));
    CHECK(out.dtype == FRT_BFLOAT16 && out.numel == 2 && out.data && memcmp(out.data, bf, 4) == 0);
    free(out.data);
    CHECK(run("Constant", 13, NULL, 0, NULL, 0, 0, 0, &out, NULL) == FRT_ERR_MALFORMED);
    frt_onnx_attr two[2] = {frt_test_attr_int("value_int", 1), frt_test_attr_float("value_float", 1)};
    CHECK(run("Constant", 13, two, 2, NULL, 0, 0, 0, &out, NULL) == FRT_ERR_MALFORMED);
    frt_onnx_tensor t4 = t;
    t4.nbytes = 20; /* does not match 6 floats */
    at.t = &t4;
    CHECK(run("Constant", 13, &at, 1, NULL, 0, 0, 0, &out, NULL) == FRT_ERR_MALFORMED);
    t4 = t;
    t4.dtype = FRT_STRING;
    CHECK(run("Constant", 13, &at, 1, NULL, 0, 0, 0, &out, NULL) == FRT_ERR_UNSUPPORTED);
    a = frt_test_attr_float("value", 1); /* wrong attribute type */
    CHECK(run("Constant", 13, &a, 1, NULL, 0, 0, 0, &out, NULL) == FRT_ERR_MALFORMED);
}

/* Size: int64 scalar element count, any dtype, also with unknown dims at select */
static void test_size(void) {
    static const int32_t dts[] = {FRT_FLOAT32, FRT_BOOL, FRT_BFLOAT16, FRT_UINT64, FRT_INT8};
    int64_t shapes[][3] = {{3, 4, 5}, {7, 1, 1}, {2, 0, 9}};
    char buf[3 * 4 * 5 * 8] = {0};
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++)
        for (int si = 0; si < 3; si++)
            for (int r = 0; r <= 3; r++) {
                frt_value in = frt_test_value(dts[di], r, shapes[si], buf), out;
                const char *kn = "";
                CHECK_OK(run("Size", 13, NULL, 0, &in, 1, 0, si & 1, &out, &kn));
                CHECK(out.dtype == FRT_INT64 && out.rank == 0 && strcmp(kn, "size") == 0);
                CHECK(out.data && *(int64_t *)out.data == numel(shapes[si], r));
                free(out.data);
            }
    frt_value none[2], out;
    CHECK(run("Size", 13, NULL, 0, none, 0, 0, 0, &out, NULL) == FRT_ERR_MALFORMED);
}

int main(void) {
    test_size();
    test_concat();
    test_transpose();
    test_gather();
    test_slice();
    test_shape();
    test_constant();
    TEST_MAIN_END();
}
