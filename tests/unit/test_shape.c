/* Expand Tile Split Range ConstantOfShape OneHot Trilu EyeLike DepthToSpace SpaceToDepth
 * ReverseSequence against naive per-element references, on odd sizes, every element size, with the
 * shape inputs constant at select and not (then infer reads them at run time), and bad inputs. */
#include <stdint.h>

#include "op_harness.h"
#include "ops/dtype_util.h"
#include "test_util.h"

static const int32_t dtypes[] = {FRT_UINT8, FRT_FLOAT16, FRT_FLOAT32, FRT_INT64};

static frt_status run1(const char *op, int64_t opset, const frt_onnx_attr *attrs, size_t na,
                       frt_value *ins, int n_in, unsigned cmask, unsigned absent, frt_value *out,
                       int n_out) {
    frt_test_op t = {0};
    t.op_type = op;
    t.opset = opset;
    t.attrs = attrs;
    t.n_attrs = na;
    t.inputs = ins;
    t.n_in = n_in;
    t.const_mask = cmask;
    t.absent_mask = absent;
    t.n_out = n_out;
    return frt_test_run_op(&t, out, NULL);
}

/* Decomposes linear index lin of dims (rank r) into idx. */
static void unravel(int64_t lin, const int64_t *dims, int r, int64_t *idx) {
    for (int d = r - 1; d >= 0; d--) {
        idx[d] = dims[d] ? lin % dims[d] : 0;
        lin = dims[d] ? lin / dims[d] : 0;
    }
}
static int64_t ravel(const int64_t *idx, const int64_t *dims, int r) {
    int64_t lin = 0;
    for (int d = 0; d < r; d++) lin = lin * dims[d] + idx[d];
    return lin;
}

static bool shape_is(const frt_value *v, int r, const int64_t *d) {
    if (v->rank != r) return false;
    for (int i = 0; i < r; i++)
        if (v->dims[i] != d[i]) return false;
    return true;
}

/* ---- Expand ---- */

static void test_expand(void) {
    static const struct {
        int xr, sr;
        int64_t xd[5], sd[5], od[5];
    } cases[] = {
        {3, 3, {3, 1, 5}, {3, 4, 5}, {3, 4, 5}},
        {2, 4, {1, 7}, {2, 3, 5, 1}, {2, 3, 5, 7}},
        {4, 2, {1, 3, 1, 5}, {4, 1}, {1, 3, 4, 5}},
        {1, 3, {1}, {3, 1, 9}, {3, 1, 9}},
        {3, 3, {2, 1, 3}, {1, 6, 1}, {2, 6, 3}},
        {2, 2, {1, 3}, {0, 1}, {0, 3}}, /* an empty output */
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (size_t ti = 0; ti < 4; ti++)
            for (int cm = 0; cm < 2; cm++) {
                int32_t dt = dtypes[ti];
                size_t es = frt_dtype_size((frt_dtype)dt);
                int xr = cases[ci].xr, sr = cases[ci].sr, R = xr > sr ? xr : sr;
                int64_t xn = numel(cases[ci].xd, xr), on = numel(cases[ci].od, R);
                unsigned char x[1024], ref[8192];
                fill_bytes(x, (size_t)xn * es, 7 + (unsigned)ci);
                int64_t shp[5];
                memcpy(shp, cases[ci].sd, sizeof shp);
                int64_t sl[1] = {sr};
                frt_value ins[2] = {frt_test_value(dt, xr, cases[ci].xd, x),
                                    frt_test_value(FRT_INT64, 1, sl, shp)};
                frt_value out;
                CHECK_OK(run1("Expand", 13, NULL, 0, ins, 2, cm ? 2u : 0u, 0, &out, 1));
                CHECK(shape_is(&out, R, cases[ci].od));
                for (int64_t o = 0; o < on; o++) {
                    int64_t idx[8], xi[8];
                    unravel(o, cases[ci].od, R, idx);
                    for (int d = 0; d < xr; d++) {
                        int od = d + R - xr;
                        xi[d] = cases[ci].xd[d] == 1 ? 0 : idx[od];
                    }
                    memcpy(ref + o * (int64_t)es, x + ravel(xi, cases[ci].xd, xr) * (int64_t)es,
                           es);
                }
                CHECK_MSG(on == 0 || (out.data && memcmp(out.data, ref, (size_t)on * es) == 0),
                          "expand case %zu dtype %d", ci, dt);
                free(out.data);
            }
    /* incompatible shape */
    float x[15] = {0};
    int64_t xd[2] = {5, 3}, sl[1] = {2}, bad[2] = {4, 3};
    frt_value ins[2] = {frt_test_value(FRT_FLOAT32, 2, xd, x), frt_test_value(FRT_INT64, 1, sl, bad)};
    frt_value out;
    CHECK(run1("Expand", 13, NULL, 0, ins, 2, 2, 0, &out, 1) == FRT_ERR_SHAPE);
    CHECK(err_has("cannot be expanded"));
    int64_t neg[2] = {-2, 3};
    ins[1].data = neg;
    CHECK(run1("Expand", 13, NULL, 0, ins, 2, 2, 0, &out, 1) == FRT_ERR_SHAPE);
    float fs[2] = {5, 3};
    ins[1] = frt_test_value(FRT_FLOAT32, 1, sl, fs);
    CHECK(run1("Expand", 13, NULL, 0, ins, 2, 2, 0, &out, 1) == FRT_ERR_SHAPE);
}

/* ---- Tile ---- */

static void test_tile(void) {
    static const struct {
        int r;
        int64_t xd[4], rep[4];
    } cases[] = {
        {2, {3, 5}, {2, 3}}, {3, {2, 1, 7}, {1, 4, 1}}, {1, {9}, {3}}, {4, {2, 3, 1, 5}, {2, 1, 3, 2}},
        {3, {3, 4, 5}, {1, 1, 1}}, {2, {3, 4}, {0, 2}}, {3, {1, 3, 2}, {5, 1, 1}},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (size_t ti = 0; ti < 4; ti++) {
            int32_t dt = dtypes[ti];
            size_t es = frt_dtype_size((frt_dtype)dt);
            int r = cases[ci].r;
            int64_t od[4];
            for (int d = 0; d < r; d++) od[d] = cases[ci].xd[d] * cases[ci].rep[d];
            int64_t xn = numel(cases[ci].xd, r), on = numel(od, r);
            unsigned char x[1024], ref[8192];
            fill_bytes(x, (size_t)xn * es, 3 + (unsigned)ci);
            int64_t rep[4];
            memcpy(rep, cases[ci].rep, sizeof rep);
            int64_t rl[1] = {r};
            frt_value ins[2] = {frt_test_value(dt, r, cases[ci].xd, x),
                                frt_test_value(FRT_INT64, 1, rl, rep)};
            frt_value out;
            CHECK_OK(run1("Tile", 13, NULL, 0, ins, 2, ti & 1 ? 2u : 0u, 0, &out, 1));
            CHECK(shape_is(&out, r, od));
            for (int64_t o = 0; o < on; o++) {
                int64_t idx[4];
                unravel(o, od, r, idx);
                for (int d = 0; d < r; d++) idx[d] %= cases[ci].xd[d];
                memcpy(ref + o * (int64_t)es, x + ravel(idx, cases[ci].xd, r) * (int64_t)es, es);
            }
            CHECK_MSG(on == 0 || (out.data && memcmp(out.data, ref, (size_t)on * es) == 0),
                      "tile case %zu", ci);
            free(out.data);
        }
    float x[6] = {0};
    int64_t xd[2] = {2, 3}, rl[1] = {3}, rep[3] = {1, 2, 3};
    frt_value ins[2] = {frt_test_value(FRT_FLOAT32, 2, xd, x), frt_test_value(FRT_INT64, 1, rl, rep)};
    frt_value out;
    CHECK(run1("Tile", 13, NULL, 0, ins, 2, 2, 0, &out, 1) == FRT_ERR_SHAPE);
    int64_t rl2[1] = {2}, negrep[2] = {1, -1};
    ins[1] = frt_test_value(FRT_INT64, 1, rl2, negrep);
    CHECK(run1("Tile", 13, NULL, 0, ins, 2, 2, 0, &out, 1) == FRT_ERR_SHAPE);
}

/* ---- Split ---- */

static void check_split(int32_t dt, int r, const int64_t *xd, int axis, int n, const int64_t *sz,
                        frt_value *outs, const unsigned char *x) {
    size_t es = frt_dtype_size((frt_dtype)dt);
    int64_t off = 0;
    for (int j = 0; j < n; j++) {
        int64_t od[4];
        memcpy(od, xd, (size_t)r * sizeof *od);
        od[axis] = sz[j];
        CHECK_MSG(shape_is(&outs[j], r, od), "split output %d", j);
        int64_t on = numel(od, r);
        bool ok = true;
        for (int64_t o = 0; o < on && ok; o++) {
            int64_t idx[4];
            unravel(o, od, r, idx);
            idx[axis] += off;
            ok = memcmp((char *)outs[j].data + o * (int64_t)es,
                        x + ravel(idx, xd, r) * (int64_t)es, es) == 0;
        }
        CHECK_MSG(ok, "split output %d values", j);
        off += sz[j];
        free(outs[j].data);
    }
}

static void test_split(void) {
    int64_t xd[3] = {3, 10, 5};
    unsigned char x[3 * 10 * 5 * 8];
    for (size_t ti = 0; ti < 4; ti++) {
        int32_t dt = dtypes[ti];
        fill_bytes(x, sizeof x, 11 + (unsigned)ti);
        frt_value outs[4];
        /* input form, opset 13, axis 1: 3 + 0 + 7 */
        int64_t sz[3] = {3, 0, 7}, sl[1] = {3};
        frt_onnx_attr ax = frt_test_attr_int("axis", 1);
        frt_value ins[2] = {frt_test_value(dt, 3, xd, x), frt_test_value(FRT_INT64, 1, sl, sz)};
        for (int cm = 0; cm < 2; cm++) {
            CHECK_OK(run1("Split", 13, &ax, 1, ins, 2, cm ? 2u : 0u, 0, outs, 3));
            check_split(dt, 3, xd, 1, 3, sz, outs, x);
        }
        /* attribute form, opset 11, axis -1: 2 + 3 */
        int64_t sz2[2] = {2, 3};
        frt_onnx_attr at[2] = {frt_test_attr_int("axis", -1), frt_test_attr_ints("split", sz2, 2)};
        CHECK_OK(run1("Split", 11, at, 2, ins, 1, 0, 0, outs, 2));
        check_split(dt, 3, xd, 2, 2, sz2, outs, x);
        /* equal parts, axis 0 */
        int64_t eq[3] = {1, 1, 1};
        CHECK_OK(run1("Split", 13, NULL, 0, ins, 1, 0, 0, outs, 3));
        check_split(dt, 3, xd, 0, 3, eq, outs, x);
        /* opset 18 num_outputs: 10 into 4 -> 3 3 3 1 */
        int64_t un[4] = {3, 3, 3, 1};
        frt_onnx_attr at18[2] = {frt_test_attr_int("axis", 1), frt_test_attr_int("num_outputs", 4)};
        CHECK_OK(run1("Split", 18, at18, 2, ins, 1, 0, 0, outs, 4));
        check_split(dt, 3, xd, 1, 4, un, outs, x);
    }
    frt_value outs[4];
    int64_t bad[2] = {4, 7}, sl[1] = {2};
    frt_onnx_attr ax = frt_test_attr_int("axis", 1);
    frt_value ins[2] = {frt_test_value(FRT_FLOAT32, 3, xd, x), frt_test_value(FRT_INT64, 1, sl, bad)};
    CHECK(run1("Split", 13, &ax, 1, ins, 2, 2, 0, outs, 2) == FRT_ERR_SHAPE);
    CHECK(err_has("add up"));
    /* 10 does not split into 3 equal parts before opset 18 */
    CHECK(run1("Split", 13, &ax, 1, ins, 1, 0, 0, outs, 3) == FRT_ERR_SHAPE);
    frt_onnx_attr bad_axis = frt_test_attr_int("axis", 3);
    CHECK(run1("Split", 13, &bad_axis, 1, ins, 1, 0, 0, outs, 2) == FRT_ERR_SHAPE);
}

/* ---- Range ---- */

static void test_range(void) {
    int64_t none[1] = {0};
    {
        int32_t s = 10, l = 3, d = -3;
        frt_value ins[3] = {frt_test_value(FRT_INT32, 0, none, &s),
                            frt_test_value(FRT_INT32, 0, none, &l),
                            frt_test_value(FRT_INT32, 0, none, &d)};
        frt_value out;
        for (int cm = 0; cm < 2; cm++) {
            CHECK_OK(run1("Range", 11, NULL, 0, ins, 3, cm ? 7u : 0u, 0, &out, 1));
            int64_t want[1] = {3};
            CHECK(shape_is(&out, 1, want) && out.dtype == FRT_INT32);
            const int32_t *o = out.data;
            CHECK(o && o[0] == 10 && o[1] == 7 && o[2] == 4);
            free(out.data);
        }
        d = 0;
        CHECK(run1("Range", 11, NULL, 0, ins, 3, 7, 0, &out, 1) == FRT_ERR_SHAPE);
        d = 1; /* empty: limit < start with a positive delta */
        CHECK_OK(run1("Range", 11, NULL, 0, ins, 3, 7, 0, &out, 1));
        CHECK(out.rank == 1 && out.dims[0] == 0);
        free(out.data);
    }
    {
        float s = 1.5f, l = 7.25f, d = 0.5f;
        frt_value ins[3] = {frt_test_value(FRT_FLOAT32, 0, none, &s),
                            frt_test_value(FRT_FLOAT32, 0, none, &l),
                            frt_test_value(FRT_FLOAT32, 0, none, &d)};
        frt_value out;
        CHECK_OK(run1("Range", 11, NULL, 0, ins, 3, 0, 0, &out, 1));
        CHECK(out.rank == 1 && out.dims[0] == 12); /* ceil(5.75 / 0.5) */
        bool ok = out.data != NULL;
        for (int i = 0; ok && i < 12; i++) ok = ((float *)out.data)[i] == 1.5f + 0.5f * (float)i;
        CHECK(ok);
        free(out.data);
        double ds = 0, dl = 1, dd = 0.25;
        frt_value mix[3] = {frt_test_value(FRT_FLOAT64, 0, none, &ds),
                            frt_test_value(FRT_FLOAT64, 0, none, &dl),
                            frt_test_value(FRT_FLOAT32, 0, none, &d)};
        (void)dd;
        CHECK(run1("Range", 11, NULL, 0, mix, 3, 7, 0, &out, 1) == FRT_ERR_SHAPE);
    }
    {
        int64_t s = -5, l = 6, d = 4;
        frt_value ins[3] = {frt_test_value(FRT_INT64, 0, none, &s),
                            frt_test_value(FRT_INT64, 0, none, &l),
                            frt_test_value(FRT_INT64, 0, none, &d)};
        frt_value out;
        CHECK_OK(run1("Range", 11, NULL, 0, ins, 3, 0, 0, &out, 1));
        const int64_t *o = out.data;
        CHECK(out.dims[0] == 3 && o && o[0] == -5 && o[1] == -1 && o[2] == 3);
        free(out.data);
    }
}

/* ---- ConstantOfShape ---- */

static void test_constant_of_shape(void) {
    int64_t shp[3] = {2, 3, 5}, sl[1] = {3};
    frt_value ins[1] = {frt_test_value(FRT_INT64, 1, sl, shp)};
    frt_value out;
    for (int cm = 0; cm < 2; cm++) { /* default: float32 zeros */
        CHECK_OK(run1("ConstantOfShape", 9, NULL, 0, ins, 1, (unsigned)cm, 0, &out, 1));
        CHECK(shape_is(&out, 3, shp) && out.dtype == FRT_FLOAT32);
        bool ok = out.data != NULL;
        for (int i = 0; ok && i < 30; i++) ok = ((float *)out.data)[i] == 0.0f;
        CHECK(ok);
        free(out.data);
    }
    static const int32_t vdt[] = {FRT_INT32, FRT_FLOAT16, FRT_INT8, FRT_FLOAT64, FRT_BOOL};
    for (size_t k = 0; k < sizeof vdt / sizeof vdt[0]; k++) {
        unsigned char val[8];
        size_t es = frt_dtype_size((frt_dtype)vdt[k]);
        frt_st_f64(vdt[k], val, 0, 1.0);
        frt_onnx_tensor t = {0};
        t.dtype = vdt[k];
        t.rank = 1;
        t.dims[0] = 1;
        t.numel = 1;
        t.data = val;
        t.nbytes = es;
        frt_onnx_attr a = {0};
        a.name = "value";
        a.type = FRT_ATTR_TENSOR;
        a.t = &t;
        CHECK_OK(run1("ConstantOfShape", 9, &a, 1, ins, 1, 0, 0, &out, 1));
        CHECK(out.dtype == vdt[k] && shape_is(&out, 3, shp));
        bool ok = out.data != NULL;
        for (int i = 0; ok && i < 30; i++) ok = memcmp((char *)out.data + i * (int)es, val, es) == 0;
        CHECK_MSG(ok, "ConstantOfShape dtype %d", vdt[k]);
        free(out.data);
    }
    int64_t zero[1] = {0}; /* empty shape: a scalar */
    int64_t z0[1] = {0};
    ins[0] = frt_test_value(FRT_INT64, 1, zero, z0);
    CHECK_OK(run1("ConstantOfShape", 9, NULL, 0, ins, 1, 1, 0, &out, 1));
    CHECK(out.rank == 0 && out.numel == 1);
    free(out.data);
    int64_t negs[2] = {2, -1}, nl[1] = {2};
    ins[0] = frt_test_value(FRT_INT64, 1, nl, negs);
    CHECK(run1("ConstantOfShape", 9, NULL, 0, ins, 1, 1, 0, &out, 1) == FRT_ERR_SHAPE);
}

/* ---- OneHot ---- */

static void test_onehot(void) {
    int64_t id[2] = {3, 4};
    int64_t idx[12] = {0, 1, 9, -1, -10, 10, 5, -11, 3, 3, 2, 7};
    float fidx[12];
    for (int i = 0; i < 12; i++) fidx[i] = (float)idx[i];
    int64_t none[1] = {0}, vl[1] = {2};
    for (int axis = -3; axis <= 2; axis++)
        for (int fi = 0; fi < 2; fi++) {
            float depth = 10;
            int32_t vals[2] = {-4, 9};
            frt_value ins[3] = {fi ? frt_test_value(FRT_FLOAT32, 2, id, fidx)
                                   : frt_test_value(FRT_INT64, 2, id, idx),
                                frt_test_value(FRT_FLOAT32, 0, none, &depth),
                                frt_test_value(FRT_INT32, 1, vl, vals)};
            frt_onnx_attr a = frt_test_attr_int("axis", axis);
            frt_value out;
            CHECK_OK(run1("OneHot", 11, &a, 1, ins, 3, fi ? 2u : 0u, 0, &out, 1));
            int ax = axis < 0 ? axis + 3 : axis;
            int64_t od[3];
            for (int i = 0, j = 0; i < 3; i++) od[i] = i == ax ? 10 : id[j++];
            CHECK(shape_is(&out, 3, od) && out.dtype == FRT_INT32);
            bool ok = out.data != NULL;
            for (int64_t o = 0; ok && o < 120; o++) {
                int64_t c[3], ic[2];
                unravel(o, od, 3, c);
                for (int i = 0, j = 0; i < 3; i++)
                    if (i != ax) ic[j++] = c[i];
                int64_t v = idx[ravel(ic, id, 2)];
                if (v < 0) v += 10;
                int32_t want = v == c[ax] ? 9 : -4;
                ok = ((int32_t *)out.data)[o] == want;
            }
            CHECK_MSG(ok, "onehot axis %d", axis);
            free(out.data);
        }
    float depth = 0;
    float vals[2] = {0, 1};
    frt_value ins[3] = {frt_test_value(FRT_INT64, 2, id, idx),
                        frt_test_value(FRT_FLOAT32, 0, none, &depth),
                        frt_test_value(FRT_FLOAT32, 1, vl, vals)};
    frt_value out;
    CHECK(run1("OneHot", 11, NULL, 0, ins, 3, 2, 0, &out, 1) == FRT_ERR_SHAPE);
    depth = 3;
    frt_onnx_attr a = frt_test_attr_int("axis", 3);
    CHECK(run1("OneHot", 11, &a, 1, ins, 3, 2, 0, &out, 1) == FRT_ERR_SHAPE);
}

/* ---- Trilu ---- */

static void test_trilu(void) {
    int64_t xd[3] = {2, 5, 7};
    unsigned char x[2 * 5 * 7 * 8];
    static const int64_t ks[] = {0, 1, -1, 3, -4, 6, -5, 100, -100, INT64_MAX, INT64_MIN};
    for (size_t ti = 0; ti < 4; ti++) {
        int32_t dt = dtypes[ti];
        size_t es = frt_dtype_size((frt_dtype)dt);
        fill_bytes(x, sizeof x, 5 + (unsigned)ti);
        for (int upper = 0; upper < 2; upper++)
            for (size_t ki = 0; ki <= sizeof ks / sizeof ks[0]; ki++) {
                int64_t k = ki < sizeof ks / sizeof ks[0] ? ks[ki] : 0;
                int64_t none[1] = {0};
                frt_value ins[2] = {frt_test_value(dt, 3, xd, x),
                                    frt_test_value(FRT_INT64, 0, none, &k)};
                frt_onnx_attr a = frt_test_attr_int("upper", upper);
                frt_value out;
                bool with_k = ki < sizeof ks / sizeof ks[0];
                CHECK_OK(run1("Trilu", 14, &a, 1, ins, with_k ? 2 : 1, 0, 0, &out, 1));
                bool ok = out.data != NULL;
                for (int64_t o = 0; ok && o < 70; o++) {
                    int64_t c[3];
                    unravel(o, xd, 3, c);
                    __int128 diff = (__int128)c[2] - c[1];
                    bool keep = upper ? diff >= k : diff <= k;
                    unsigned char zero[8] = {0};
                    ok = memcmp((char *)out.data + o * (int64_t)es,
                                keep ? x + o * (int64_t)es : zero, es) == 0;
                }
                CHECK_MSG(ok, "trilu upper %d k %lld", upper, (long long)k);
                free(out.data);
            }
    }
    int64_t d1[1] = {5};
    frt_value ins[1] = {frt_test_value(FRT_FLOAT32, 1, d1, x)};
    frt_value out;
    CHECK(run1("Trilu", 14, NULL, 0, ins, 1, 0, 0, &out, 1) == FRT_ERR_SHAPE);
}

/* ---- EyeLike ---- */

static void test_eyelike(void) {
    int64_t xd[2] = {4, 6};
    int32_t x[24] = {0};
    for (int k = -5; k <= 7; k++)
        for (int withdt = 0; withdt < 2; withdt++) {
            frt_onnx_attr a[2] = {frt_test_attr_int("k", k), frt_test_attr_int("dtype", FRT_FLOAT64)};
            frt_value ins[1] = {frt_test_value(FRT_INT32, 2, xd, x)};
            frt_value out;
            CHECK_OK(run1("EyeLike", 9, a, withdt ? 2 : 1, ins, 1, 0, 0, &out, 1));
            CHECK(out.dtype == (withdt ? FRT_FLOAT64 : FRT_INT32) && shape_is(&out, 2, xd));
            bool ok = out.data != NULL;
            for (int i = 0; ok && i < 4; i++)
                for (int j = 0; ok && j < 6; j++) {
                    double v = frt_ld_f64(out.dtype, out.data, i * 6 + j);
                    ok = v == (j - i == k ? 1.0 : 0.0);
                }
            CHECK_MSG(ok, "eyelike k %d", k);
            free(out.data);
        }
    int64_t d3[3] = {2, 2, 2};
    frt_value ins[1] = {frt_test_value(FRT_INT32, 3, d3, x)};
    frt_value out;
    CHECK(run1("EyeLike", 9, NULL, 0, ins, 1, 0, 0, &out, 1) == FRT_ERR_SHAPE);
}

/* ---- DepthToSpace / SpaceToDepth ---- */

static void test_depth_space(void) {
    for (int64_t b = 1; b <= 3; b++)
        for (size_t ti = 0; ti < 4; ti++)
            for (int mode = 0; mode < 2; mode++) {
                int32_t dt = dtypes[ti];
                size_t es = frt_dtype_size((frt_dtype)dt);
                int64_t Cp = 3, N = 2, H = 3, W = 5, C = Cp * b * b;
                int64_t xd[4] = {N, C, H, W}, od[4] = {N, Cp, H * b, W * b};
                int64_t n = N * C * H * W;
                unsigned char x[2 * 27 * 15 * 8];
                fill_bytes(x, (size_t)n * es, (unsigned)(b * 10 + (int64_t)ti));
                frt_onnx_attr a[2] = {frt_test_attr_int("blocksize", b),
                                      frt_test_attr_string("mode", mode ? "CRD" : "DCR")};
                frt_value ins[1] = {frt_test_value(dt, 4, xd, x)};
                frt_value out;
                CHECK_OK(run1("DepthToSpace", 13, a, 2, ins, 1, 0, 0, &out, 1));
                CHECK(shape_is(&out, 4, od));
                bool ok = out.data != NULL;
                for (int64_t o = 0; ok && o < n; o++) {
                    int64_t c[4];
                    unravel(o, od, 4, c);
                    int64_t i = c[2] % b, j = c[3] % b;
                    int64_t ch = mode ? c[1] * b * b + i * b + j : (i * b + j) * Cp + c[1];
                    int64_t src[4] = {c[0], ch, c[2] / b, c[3] / b};
                    ok = memcmp((char *)out.data + o * (int64_t)es,
                                x + ravel(src, xd, 4) * (int64_t)es, es) == 0;
                }
                CHECK_MSG(ok, "depth_to_space b %lld mode %d", (long long)b, mode);
                /* SpaceToDepth of the result gives back x (the DCR order) */
                if (mode == 0) {
                    frt_value back;
                    frt_value in2[1] = {frt_test_value(dt, 4, od, out.data)};
                    CHECK_OK(run1("SpaceToDepth", 13, a, 1, in2, 1, 0, 0, &back, 1));
                    CHECK(shape_is(&back, 4, xd) && back.data &&
                          memcmp(back.data, x, (size_t)n * es) == 0);
                    free(back.data);
                }
                free(out.data);
            }
    float x[2 * 5 * 4 * 4] = {0};
    int64_t xd[4] = {2, 5, 4, 4};
    frt_onnx_attr a = frt_test_attr_int("blocksize", 2);
    frt_value ins[1] = {frt_test_value(FRT_FLOAT32, 4, xd, x)};
    frt_value out;
    CHECK(run1("DepthToSpace", 13, &a, 1, ins, 1, 0, 0, &out, 1) == FRT_ERR_SHAPE);
    int64_t xd2[4] = {2, 5, 4, 3};
    ins[0] = frt_test_value(FRT_FLOAT32, 4, xd2, x);
    CHECK(run1("SpaceToDepth", 13, &a, 1, ins, 1, 0, 0, &out, 1) == FRT_ERR_SHAPE);
    CHECK(run1("SpaceToDepth", 13, NULL, 0, ins, 1, 0, 0, &out, 1) == FRT_ERR_MALFORMED);
}

/* ---- ReverseSequence ---- */

static void test_reverse_sequence(void) {
    for (int ta = 0; ta < 2; ta++)
        for (size_t ti = 0; ti < 4; ti++) {
            int32_t dt = dtypes[ti];
            size_t es = frt_dtype_size((frt_dtype)dt);
            int64_t T = 5, B = 4, F = 3;
            int64_t xd[3] = {ta == 0 ? T : B, ta == 0 ? B : T, F};
            unsigned char x[5 * 4 * 3 * 8];
            fill_bytes(x, sizeof x, 9 + (unsigned)ti);
            int64_t lens[4] = {5, 0, 3, 1}, ld[1] = {4};
            frt_value ins[2] = {frt_test_value(dt, 3, xd, x), frt_test_value(FRT_INT64, 1, ld, lens)};
            frt_onnx_attr a[2] = {frt_test_attr_int("time_axis", ta),
                                  frt_test_attr_int("batch_axis", 1 - ta)};
            frt_value out;
            CHECK_OK(run1("ReverseSequence", 10, a, 2, ins, 2, 0, 0, &out, 1));
            bool ok = out.data != NULL;
            for (int64_t o = 0; ok && o < T * B * F; o++) {
                int64_t c[3];
                unravel(o, xd, 3, c);
                int64_t t = c[ta], b = c[1 - ta];
                int64_t src[3] = {c[0], c[1], c[2]};
                if (t < lens[b]) src[ta] = lens[b] - 1 - t;
                ok = memcmp((char *)out.data + o * (int64_t)es,
                            x + ravel(src, xd, 3) * (int64_t)es, es) == 0;
            }
            CHECK_MSG(ok, "reverse_sequence time_axis %d", ta);
            free(out.data);
            lens[2] = 6; /* longer than T */
            CHECK(run1("ReverseSequence", 10, a, 2, ins, 2, 0, 0, &out, 1) == FRT_ERR_RUNTIME);
            CHECK(err_has("out of range"));
        }
    float x[8] = {0};
    int64_t xd[2] = {2, 4}, lens[4] = {1, 1, 1, 1}, ld[1] = {4};
    frt_value ins[2] = {frt_test_value(FRT_FLOAT32, 2, xd, x), frt_test_value(FRT_INT64, 1, ld, lens)};
    frt_onnx_attr a[2] = {frt_test_attr_int("time_axis", 0), frt_test_attr_int("batch_axis", 0)};
    frt_value out;
    CHECK(run1("ReverseSequence", 10, a, 2, ins, 2, 0, 0, &out, 1) == FRT_ERR_SHAPE);
    ld[0] = 3; /* sequence_lens must have one entry per batch */
    ins[1] = frt_test_value(FRT_INT64, 1, ld, lens);
    CHECK(run1("ReverseSequence", 10, NULL, 0, ins, 2, 0, 0, &out, 1) == FRT_ERR_SHAPE);
}

int main(void) {
    test_expand();
    test_tile();
    test_split();
    test_range();
    test_constant_of_shape();
    test_onehot();
    test_trilu();
    test_eyelike();
    test_depth_space();
    test_reverse_sequence();
    TEST_MAIN_END();
}
