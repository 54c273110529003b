/* Index ops (src/ops/index.c) against naive references: GatherElements, ScatterElements (every
 * reduction), Scatter (opset 10), GatherND (batch_dims), ScatterND, on every element size, odd
 * shapes, negative axes and indices; bad input (index out of range -> FRT_ERR_RUNTIME naming it,
 * wrong dtypes, bad attributes). NonZero, Compress and Unique run through models built in memory
 * (run-time-sized outputs feeding further ops: NonZero -> Transpose -> GatherND, Unique ->
 * Gather) and, for NonZero and Compress, through the op harness (infer sizes them from data). */
#include <stdint.h>

#include "flatrt.h"
#include "runtime/model.h"
#include "onnx_build.h"
#include "op_harness.h"
#include "test_util.h"

static const int32_t dt_of_size[9] = {0, FRT_UINT8, FRT_FLOAT16, 0, FRT_INT32, 0, 0, 0, FRT_INT64};

static frt_status run_op(const char *op, int64_t opset, const frt_onnx_attr *attrs, size_t na,
                         frt_value *ins, int n_in, frt_value *out) {
    frt_test_op t = {0};
    t.op_type = op;
    t.opset = opset;
    t.attrs = attrs;
    t.n_attrs = na;
    t.inputs = ins;
    t.n_in = n_in;
    t.n_out = 1;
    return frt_test_run_op(&t, out, NULL);
}

static unsigned g_seed = 12345;
static int64_t rnd(int64_t n) {
    g_seed = g_seed * 1664525u + 1013904223u;
    return (int64_t)((g_seed >> 8) % (uint64_t)n);
}

/* Random indices in [-n, n) (negative half the time) of dtype dt. */
static void fill_indices(void *p, int32_t dt, int64_t count, int64_t n) {
    for (int64_t i = 0; i < count; i++) {
        int64_t v = rnd(n);
        if (rnd(2)) v -= n;
        if (dt == FRT_INT64) ((int64_t *)p)[i] = v;
        else ((int32_t *)p)[i] = (int32_t)v;
    }
}
static int64_t get_idx(const void *p, int32_t dt, int64_t i, int64_t n) {
    int64_t v = dt == FRT_INT64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
    return v < 0 ? v + n : v;
}

/* Coordinates of linear index i in dims. */
static void unravel(int64_t i, const int64_t *dims, int r, int64_t *co) {
    for (int d = r - 1; d >= 0; d--) {
        co[d] = i % dims[d];
        i /= dims[d];
    }
}
static int64_t ravel(const int64_t *co, const int64_t *dims, int r) {
    int64_t o = 0;
    for (int d = 0; d < r; d++) o = o * dims[d] + co[d];
    return o;
}

/* ---- GatherElements / ScatterElements / Scatter ---- */

static void test_gather_elements(void) {
    const int64_t ddims[3] = {3, 5, 4};
    for (int ei = 0; ei < 4; ei++) {
        size_t es = (size_t)1 << ei;
        int32_t dt = dt_of_size[es];
        for (int axis = -3; axis < 3; axis++) {
            int ax = axis < 0 ? axis + 3 : axis;
            int32_t idt = (axis & 1) ? FRT_INT32 : FRT_INT64;
            /* indices smaller than data off the axis, longer than data on it */
            int64_t idims[3] = {2, 4, 3};
            idims[ax] = 7;
            int64_t nd = numel(ddims, 3), ni = numel(idims, 3);
            char *data = malloc((size_t)nd * es), *ix = malloc((size_t)ni * 8);
            fill_bytes(data, (size_t)nd * es, 7u + (unsigned)ei);
            fill_indices(ix, idt, ni, ddims[ax]);
            frt_value ins[2] = {frt_test_value(dt, 3, ddims, data), frt_test_value(idt, 3, idims, ix)};
            frt_onnx_attr at = frt_test_attr_int("axis", axis);
            frt_value out;
            CHECK_OK(run_op("GatherElements", 13, &at, 1, ins, 2, &out));
            char *ref = malloc((size_t)ni * es);
            for (int64_t i = 0; i < ni; i++) {
                int64_t co[3];
                unravel(i, idims, 3, co);
                co[ax] = get_idx(ix, idt, i, ddims[ax]);
                memcpy(ref + (size_t)i * es, data + (size_t)ravel(co, ddims, 3) * es, es);
            }
            CHECK(out.rank == 3 && out.dims[0] == idims[0] && out.dims[1] == idims[1] &&
                  out.dims[2] == idims[2]);
            CHECK_MSG(out.data && memcmp(out.data, ref, (size_t)ni * es) == 0, "es %zu axis %d", es,
                      axis);
            free(out.data);
            free(ref);
            free(data);
            free(ix);
        }
    }
}

/* Naive ScatterElements over float64-representable values (float32 / int32 data). */
static double red_apply(double a, double b, const char *red) {
    if (!strcmp(red, "add")) return a + b;
    if (!strcmp(red, "mul")) return a * b;
    if (!strcmp(red, "max")) return a > b ? a : b;
    if (!strcmp(red, "min")) return a < b ? a : b;
    return b;
}

static void test_scatter_elements(void) {
    const char *reds[5] = {"none", "add", "mul", "max", "min"};
    const int64_t ddims[3] = {4, 3, 5};
    for (int ri = 0; ri < 5; ri++)
        for (int dti = 0; dti < 2; dti++) {
            int32_t dt = dti ? FRT_INT32 : FRT_FLOAT32;
            for (int axis = -1; axis < 3; axis++) {
                int ax = axis < 0 ? axis + 3 : axis;
                int64_t idims[3] = {3, 2, 4};
                idims[ax] = 6; /* more than the data's dim: duplicates */
                int64_t nd = numel(ddims, 3), ni = numel(idims, 3);
                float *fd = malloc((size_t)nd * 4), *fu = malloc((size_t)ni * 4);
                int32_t *id = (int32_t *)fd, *iu = (int32_t *)fu;
                for (int64_t i = 0; i < nd; i++) {
                    if (dt == FRT_FLOAT32) fd[i] = (float)(rnd(9) - 4) * 0.5f;
                    else id[i] = (int32_t)(rnd(9) - 4);
                }
                for (int64_t i = 0; i < ni; i++) {
                    if (dt == FRT_FLOAT32) fu[i] = (float)(rnd(7) - 3) * 0.25f;
                    else iu[i] = (int32_t)(rnd(7) - 3);
                }
                int64_t *ix = malloc((size_t)ni * 8);
                fill_indices(ix, FRT_INT64, ni, ddims[ax]);
                frt_value ins[3] = {frt_test_value(dt, 3, ddims, fd),
                                    frt_test_value(FRT_INT64, 3, idims, ix),
                                    frt_test_value(dt, 3, idims, fu)};
                frt_onnx_attr at[2] = {frt_test_attr_int("axis", axis),
                                       frt_test_attr_string("reduction", reds[ri])};
                frt_value out;
                CHECK_OK(run_op("ScatterElements", 18, at, 2, ins, 3, &out));
                double *ref = malloc((size_t)nd * sizeof(double));
                for (int64_t i = 0; i < nd; i++) ref[i] = dt == FRT_FLOAT32 ? fd[i] : id[i];
                for (int64_t i = 0; i < ni; i++) {
                    int64_t co[3];
                    unravel(i, idims, 3, co);
                    co[ax] = get_idx(ix, FRT_INT64, i, ddims[ax]);
                    int64_t o = ravel(co, ddims, 3);
                    ref[o] = red_apply(ref[o], dt == FRT_FLOAT32 ? fu[i] : iu[i], reds[ri]);
                }
                int bad = 0;
                for (int64_t i = 0; out.data && i < nd; i++) {
                    double got = dt == FRT_FLOAT32 ? ((float *)out.data)[i] : ((int32_t *)out.data)[i];
                    bad += got != (dt == FRT_FLOAT32 ? (double)(float)ref[i] : ref[i]);
                }
                CHECK_MSG(out.data && !bad, "reduction %s dtype %d axis %d: %d wrong", reds[ri], dt,
                          axis, bad);
                free(out.data);
                free(ref);
                free(fd);
                free(fu);
                free(ix);
            }
        }
    /* every element size, reduction none, opset 10 Scatter and 11 ScatterElements */
    for (int ei = 0; ei < 4; ei++) {
        size_t es = (size_t)1 << ei;
        int32_t dt = dt_of_size[es];
        int64_t ddims[2] = {5, 6}, idims[2] = {3, 6};
        char data[30 * 8], upd[18 * 8], ref[30 * 8];
        int32_t ix[18];
        fill_bytes(data, sizeof data, 3);
        fill_bytes(upd, sizeof upd, 4);
        /* distinct rows per column: no duplicates, so the result is order-independent */
        for (int i = 0; i < 18; i++) ix[i] = (int32_t)((i / 6 * 2 + i % 6) % 5) - (i % 2 ? 5 : 0);
        memcpy(ref, data, 30 * es);
        for (int i = 0; i < 18; i++) {
            int64_t r = get_idx(ix, FRT_INT32, i, 5);
            memcpy(ref + (size_t)(r * 6 + i % 6) * es, upd + (size_t)i * es, es);
        }
        for (int v = 0; v < 2; v++) {
            frt_value ins[3] = {frt_test_value(dt, 2, ddims, data),
                                frt_test_value(FRT_INT32, 2, idims, ix),
                                frt_test_value(dt, 2, idims, upd)};
            frt_value out;
            CHECK_OK(run_op(v ? "Scatter" : "ScatterElements", v ? 10 : 11, NULL, 0, ins, 3, &out));
            CHECK_MSG(out.data && memcmp(out.data, ref, 30 * es) == 0, "es %zu %s", es,
                      v ? "Scatter" : "ScatterElements");
            free(out.data);
        }
    }
}

/* ---- GatherND / ScatterND ---- */

static void test_gather_nd(void) {
    const int64_t ddims[4] = {2, 3, 4, 5};
    for (int ei = 0; ei < 4; ei++) {
        size_t es = (size_t)1 << ei;
        int32_t dt = dt_of_size[es];
        for (int b = 0; b <= 2; b++)
            for (int64_t k = 1; k <= 4 - b; k++) {
                /* indices [d0..d_{b-1}, 3, 2, k] */
                int64_t idims[5];
                int q = 0;
                for (int d = 0; d < b; d++) idims[q++] = ddims[d];
                idims[q++] = 3;
                idims[q++] = 2;
                idims[q++] = k;
                int64_t nd = numel(ddims, 4), ni = numel(idims, q);
                char *data = malloc((size_t)nd * es);
                int64_t *ix = malloc((size_t)ni * 8);
                fill_bytes(data, (size_t)nd * es, 11u);
                int64_t tuples = ni / k;
                for (int64_t t = 0; t < tuples; t++)
                    for (int64_t j = 0; j < k; j++) {
                        int64_t n = ddims[b + j];
                        ix[t * k + j] = rnd(n) - (rnd(2) ? n : 0);
                    }
                frt_value ins[2] = {frt_test_value(dt, 4, ddims, data),
                                    frt_test_value(FRT_INT64, q, idims, ix)};
                frt_onnx_attr at = frt_test_attr_int("batch_dims", b);
                frt_value out;
                CHECK_OK(run_op("GatherND", 13, &at, 1, ins, 2, &out));
                int64_t slice = numel(ddims + b + k, 4 - b - (int)k);
                int64_t per_batch = tuples / numel(ddims, b);
                size_t nb = (size_t)(tuples * slice) * es;
                char *ref = malloc(nb ? nb : 1);
                for (int64_t t = 0; t < tuples; t++) {
                    int64_t co[4] = {0};
                    unravel(t / per_batch, ddims, b, co);
                    for (int64_t j = 0; j < k; j++) co[b + j] = get_idx(ix, FRT_INT64, t * k + j, ddims[b + j]);
                    int64_t off = ravel(co, ddims, 4);
                    memcpy(ref + (size_t)(t * slice) * es, data + (size_t)off * es, (size_t)slice * es);
                }
                CHECK(out.rank == q - 1 + 4 - b - (int)k);
                CHECK_MSG(out.data && memcmp(out.data, ref, nb) == 0, "es %zu b %d k %lld", es, b,
                          (long long)k);
                free(out.data);
                free(ref);
                free(data);
                free(ix);
            }
    }
}

static void test_scatter_nd(void) {
    const char *reds[5] = {"none", "add", "mul", "max", "min"};
    const int64_t ddims[3] = {4, 3, 5};
    for (int ri = 0; ri < 5; ri++)
        for (int64_t k = 1; k <= 3; k++) {
            int64_t idims[3] = {2, 3, k}; /* 6 tuples into at most 4 * ... slots: duplicates */
            int64_t udims[4] = {2, 3, 0, 0};
            int ur = 2;
            for (int d = (int)k; d < 3; d++) udims[ur++] = ddims[d];
            int64_t nd = numel(ddims, 3), tuples = 6, slice = numel(ddims + k, 3 - (int)k);
            float *data = malloc((size_t)nd * 4), *upd = malloc((size_t)(tuples * slice) * 4);
            int64_t *ix = malloc((size_t)(tuples * k) * 8);
            for (int64_t i = 0; i < nd; i++) data[i] = (float)(rnd(9) - 4);
            for (int64_t i = 0; i < tuples * slice; i++) upd[i] = (float)(rnd(5) - 2) * 0.5f;
            for (int64_t t = 0; t < tuples; t++)
                for (int64_t j = 0; j < k; j++) ix[t * k + j] = rnd(ddims[j]) - (t % 2 ? ddims[j] : 0);
            frt_value ins[3] = {frt_test_value(FRT_FLOAT32, 3, ddims, data),
                                frt_test_value(FRT_INT64, 3, idims, ix),
                                frt_test_value(FRT_FLOAT32, ur, udims, upd)};
            frt_onnx_attr at = frt_test_attr_string("reduction", reds[ri]);
            frt_value out;
            CHECK_OK(run_op("ScatterND", 18, &at, 1, ins, 3, &out));
            float *ref = malloc((size_t)nd * 4);
            memcpy(ref, data, (size_t)nd * 4);
            for (int64_t t = 0; t < tuples; t++) {
                int64_t co[3] = {0};
                for (int64_t j = 0; j < k; j++) co[j] = get_idx(ix, FRT_INT64, t * k + j, ddims[j]);
                int64_t off = ravel(co, ddims, 3);
                for (int64_t e = 0; e < slice; e++)
                    ref[off + e] = (float)red_apply(ref[off + e], upd[t * slice + e], reds[ri]);
            }
            CHECK_MSG(out.data && memcmp(out.data, ref, (size_t)nd * 4) == 0, "reduction %s k %lld",
                      reds[ri], (long long)k);
            free(out.data);
            free(ref);
            free(data);
            free(upd);
            free(ix);
        }
}

/* ---- bad input ---- */

static void test_bad_input(void) {
    float data[6] = {1, 2, 3, 4, 5, 6}, upd[2] = {9, 9};
    int64_t ddims[2] = {2, 3}, idims[2] = {1, 2};
    int64_t ix[2] = {0, 3}; /* 3 is out of range for axis 1 (size 3) */
    frt_value out;
    frt_onnx_attr ax1 = frt_test_attr_int("axis", 1);
    frt_value g[2] = {frt_test_value(FRT_FLOAT32, 2, ddims, data),
                      frt_test_value(FRT_INT64, 2, idims, ix)};
    CHECK(run_op("GatherElements", 13, &ax1, 1, g, 2, &out) == FRT_ERR_RUNTIME);
    CHECK_MSG(err_has("index 3") && err_has("position 1") && err_has("[-3, 3)"), "%s",
              frt_last_error());
    ix[1] = -4;
    frt_value sc[3] = {g[0], g[1], frt_test_value(FRT_FLOAT32, 2, idims, upd)};
    CHECK(run_op("ScatterElements", 13, &ax1, 1, sc, 3, &out) == FRT_ERR_RUNTIME);
    CHECK_MSG(err_has("index -4"), "%s", frt_last_error());
    /* GatherND: tuple (1, 5) on [2, 3] */
    int64_t nd_ix[2] = {1, 5}, nd_dims[1] = {2};
    frt_value gn[2] = {g[0], frt_test_value(FRT_INT64, 1, nd_dims, nd_ix)};
    CHECK(run_op("GatherND", 13, NULL, 0, gn, 2, &out) == FRT_ERR_RUNTIME);
    CHECK_MSG(err_has("index 5") && err_has("axis 1"), "%s", frt_last_error());
    int64_t und[1] = {1};
    frt_value sn[3] = {g[0], gn[1], frt_test_value(FRT_FLOAT32, 0, und, upd)};
    CHECK(run_op("ScatterND", 13, NULL, 0, sn, 3, &out) == FRT_ERR_RUNTIME);
    /* float indices */
    float fix[2] = {0, 1};
    frt_value gf[2] = {g[0], frt_test_value(FRT_FLOAT32, 2, idims, fix)};
    CHECK(run_op("GatherElements", 13, NULL, 0, gf, 2, &out) == FRT_ERR_UNSUPPORTED);
    CHECK_MSG(err_has("int32 or int64"), "%s", frt_last_error());
    /* rank mismatch, bad axis, unknown or too-new reduction */
    ix[1] = 0;
    int64_t i1[1] = {2};
    frt_value gr[2] = {g[0], frt_test_value(FRT_INT64, 1, i1, ix)};
    CHECK(run_op("GatherElements", 13, NULL, 0, gr, 2, &out) == FRT_ERR_SHAPE);
    frt_onnx_attr ax5 = frt_test_attr_int("axis", 5);
    CHECK(run_op("GatherElements", 13, &ax5, 1, g, 2, &out) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("axis 5"), "%s", frt_last_error());
    frt_onnx_attr rmax = frt_test_attr_string("reduction", "max");
    CHECK(run_op("ScatterElements", 16, &rmax, 1, sc, 3, &out) == FRT_ERR_UNSUPPORTED);
    CHECK_MSG(err_has("'max'") && err_has("opset 16"), "%s", frt_last_error());
    frt_onnx_attr rbad = frt_test_attr_string("reduction", "avg");
    CHECK(run_op("ScatterND", 18, &rbad, 1, sn, 3, &out) == FRT_ERR_UNSUPPORTED);
    /* updates of the wrong shape */
    int64_t ud2[2] = {1, 1};
    frt_value su[3] = {g[0], g[1], frt_test_value(FRT_FLOAT32, 2, ud2, upd)};
    CHECK(run_op("ScatterElements", 13, NULL, 0, su, 3, &out) == FRT_ERR_SHAPE);
    /* GatherND: k larger than the data rank, batch dims that differ */
    int64_t k3[1] = {3};
    int64_t ix3[3] = {0, 0, 0};
    frt_value gk[2] = {g[0], frt_test_value(FRT_INT64, 1, k3, ix3)};
    CHECK(run_op("GatherND", 13, NULL, 0, gk, 2, &out) == FRT_ERR_SHAPE);
    int64_t bd[2] = {3, 1};
    frt_value gb[2] = {g[0], frt_test_value(FRT_INT64, 2, bd, ix3)};
    frt_onnx_attr b1 = frt_test_attr_int("batch_dims", 1);
    CHECK(run_op("GatherND", 13, &b1, 1, gb, 2, &out) == FRT_ERR_SHAPE);
    /* rank-0 indices */
    int64_t one = 0;
    frt_value g0[2] = {g[0], frt_test_value(FRT_INT64, 0, NULL, &one)};
    CHECK(run_op("GatherND", 13, NULL, 0, g0, 2, &out) == FRT_ERR_SHAPE);
    frt_value s0[3] = {g[0], g0[1], frt_test_value(FRT_FLOAT32, 0, NULL, upd)};
    CHECK(run_op("ScatterND", 13, NULL, 0, s0, 3, &out) == FRT_ERR_SHAPE);
    /* Compress: condition longer than the axis, not bool */
    uint8_t cond[4] = {1, 0, 1, 1};
    int64_t c4[1] = {4};
    frt_onnx_attr ax0 = frt_test_attr_int("axis", 0);
    frt_value cp[2] = {g[0], frt_test_value(FRT_BOOL, 1, c4, cond)};
    CHECK(run_op("Compress", 13, &ax0, 1, cp, 2, &out) == FRT_ERR_SHAPE);
    frt_value cpi[2] = {g[0], frt_test_value(FRT_UINT8, 1, c4, cond)};
    CHECK(run_op("Compress", 13, &ax0, 1, cpi, 2, &out) != FRT_OK);
}

/* ---- NonZero / Compress through the harness (sized by infer from the data) ---- */

static void test_nonzero_compress_harness(void) {
    /* every element size; floats: -0 is zero, NaN is not */
    float f[7] = {0.0f, -0.0f, 1.5f, NAN, 0.0f, -2.0f, 0.0f};
    int64_t dims[2] = {1, 7};
    frt_value in = frt_test_value(FRT_FLOAT32, 2, dims, f), out;
    CHECK_OK(run_op("NonZero", 13, NULL, 0, &in, 1, &out));
    int64_t want[2][3] = {{0, 0, 0}, {2, 3, 5}};
    CHECK(out.dtype == FRT_INT64 && out.rank == 2 && out.dims[0] == 2 && out.dims[1] == 3);
    CHECK(out.data && memcmp(out.data, want, sizeof want) == 0);
    free(out.data);
    for (int ei = 0; ei < 4; ei++) {
        size_t es = (size_t)1 << ei;
        int64_t d3[3] = {3, 1, 5};
        char buf[15 * 8] = {0};
        int64_t ref[3 * 15], nnz = 0;
        int nz[15];
        for (int i = 0; i < 15; i++) {
            nz[i] = rnd(3) == 0;
            if (nz[i]) buf[(size_t)i * es + es - 1] = 1; /* only the top byte: still nonzero */
        }
        for (int i = 0; i < 15; i++) nnz += nz[i];
        int64_t k = 0;
        for (int i = 0; i < 15; i++)
            if (nz[i]) {
                ref[0 * nnz + k] = i / 5;
                ref[1 * nnz + k] = 0;
                ref[2 * nnz + k] = i % 5;
                k++;
            }
        int32_t dt = es == 2 ? FRT_INT16 : es == 4 ? FRT_UINT32 : dt_of_size[es];
        frt_value v = frt_test_value(dt, 3, d3, buf);
        CHECK_OK(run_op("NonZero", 13, NULL, 0, &v, 1, &out));
        CHECK(out.rank == 2 && out.dims[0] == 3 && out.dims[1] == nnz);
        CHECK_MSG(out.data && memcmp(out.data, ref, (size_t)(3 * nnz) * 8) == 0, "es %zu", es);
        free(out.data);
    }
    /* Compress with and without axis, condition shorter than the dim */
    float x[12];
    for (int i = 0; i < 12; i++) x[i] = (float)i;
    int64_t xd[2] = {3, 4};
    uint8_t cond[3] = {0, 1, 1};
    int64_t cd[1] = {3};
    frt_value ins[2] = {frt_test_value(FRT_FLOAT32, 2, xd, x), frt_test_value(FRT_BOOL, 1, cd, cond)};
    frt_onnx_attr axm1 = frt_test_attr_int("axis", -1);
    CHECK_OK(run_op("Compress", 11, &axm1, 1, ins, 2, &out));
    float w1[6] = {1, 2, 5, 6, 9, 10};
    CHECK(out.rank == 2 && out.dims[0] == 3 && out.dims[1] == 2);
    CHECK(out.data && memcmp(out.data, w1, sizeof w1) == 0);
    free(out.data);
    CHECK_OK(run_op("Compress", 11, NULL, 0, ins, 2, &out));
    float w2[2] = {1, 2};
    CHECK(out.rank == 1 && out.dims[0] == 2 && out.data && memcmp(out.data, w2, sizeof w2) == 0);
    free(out.data);
    /* negative axis needs opset 11 */
    CHECK(run_op("Compress", 9, &axm1, 1, ins, 2, &out) == FRT_ERR_SHAPE);
}

/* ---- run-time-sized values in models ---- */

static ob_buf node_io(const char *op, const char *name, const char *const *ins,
                      const char *const *outs) {
    return ob_node(op, NULL, name, ins, outs);
}
static void g_add(ob_buf *g, ob_buf n) { ob_msg(g, OB_NODE, &n); }
static void g_in(ob_buf *g, const char *name, int elem, int rank, const int64_t *dims) {
    ob_buf v = ob_vinfo(name, elem, rank, dims);
    ob_msg(g, OB_INPUT, &v);
}
static void g_out(ob_buf *g, const char *name, int elem) {
    ob_buf v = ob_vinfo(name, elem, -1, NULL);
    ob_msg(g, OB_OUTPUT, &v);
}

/*   NZ = NonZero(X)  [2, n]        T = Transpose(NZ) [n, 2]       V = GatherND(X, T) [n]
 *   C  = Compress(X, M, axis 1) [3, m]                            S = Shape(C)
 * X [3, 4] float, M [4] bool: graph inputs, so every size is known only at run time. */
static void test_model_nonzero_compress(void) {
    ob_buf g = {0};
    int64_t xd[2] = {3, 4}, md[1] = {4};
    g_in(&g, "X", FRT_FLOAT32, 2, xd);
    g_in(&g, "M", FRT_BOOL, 1, md);
    const char *i1[] = {"X", NULL}, *o1[] = {"NZ", NULL};
    g_add(&g, node_io("NonZero", "nz", i1, o1));
    const char *i2[] = {"NZ", NULL}, *o2[] = {"T", NULL};
    g_add(&g, node_io("Transpose", "tr", i2, o2));
    const char *i3[] = {"X", "T", NULL}, *o3[] = {"V", NULL};
    g_add(&g, node_io("GatherND", "gnd", i3, o3));
    const char *i4[] = {"X", "M", NULL}, *o4[] = {"C", NULL};
    ob_buf cn = node_io("Compress", "cmp", i4, o4);
    ob_attr_int(&cn, "axis", 1);
    g_add(&g, cn);
    const char *i5[] = {"C", NULL}, *o5[] = {"S", NULL};
    g_add(&g, node_io("Shape", "shp", i5, o5));
    g_out(&g, "V", FRT_FLOAT32);
    g_out(&g, "T", FRT_INT64);
    g_out(&g, "C", FRT_FLOAT32);
    g_out(&g, "S", FRT_INT64);
    ob_buf mb = ob_model(&g);
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer(mb.p, mb.n, NULL, NULL, &m));
    free(mb.p);
    frt_runtime *rt = NULL;
    if (m) CHECK_OK(frt_runtime_create(m, &rt));
    for (int r = 0; r < 4 && rt; r++) {
        float x[12];
        uint8_t mask[4];
        int n = 0, mcount = 0;
        for (int i = 0; i < 12; i++) {
            x[i] = (i * (r + 3)) % 5 == 0 ? 0.0f : (float)(i + 1) + 0.5f * (float)r;
            n += x[i] != 0;
        }
        for (int i = 0; i < 4; i++) mcount += mask[i] = (uint8_t)((i + r) % 3 == 0);
        frt_tensor in[2] = {{.dtype = FRT_FLOAT32, .rank = 2, .shape = {3, 4}, .data = x, .nbytes = 48},
                            {.dtype = FRT_BOOL, .rank = 1, .shape = {4}, .data = mask, .nbytes = 4}};
        const char *names[] = {"X", "M"};
        frt_tensor out[4];
        CHECK_OK(frt_run(rt, names, in, 2, out, 4, FRT_OUTPUTS_ALLOC));
        CHECK(out[0].rank == 1 && out[0].shape[0] == n);
        CHECK(out[1].rank == 2 && out[1].shape[0] == n && out[1].shape[1] == 2);
        int k = 0, ok = out[0].shape[0] == n;
        for (int i = 0; ok && i < 12; i++)
            if (x[i] != 0) {
                ok = ((float *)out[0].data)[k] == x[i] && ((int64_t *)out[1].data)[2 * k] == i / 4 &&
                     ((int64_t *)out[1].data)[2 * k + 1] == i % 4;
                k++;
            }
        CHECK_MSG(ok, "run %d: NonZero -> Transpose -> GatherND", r);
        CHECK(out[2].rank == 2 && out[2].shape[0] == 3 && out[2].shape[1] == mcount);
        k = 0;
        ok = out[2].shape[1] == mcount;
        for (int row = 0; ok && row < 3; row++)
            for (int j = 0; j < 4; j++)
                if (mask[j]) ok = ((float *)out[2].data)[k++] == x[row * 4 + j];
        CHECK_MSG(ok, "run %d: Compress", r);
        CHECK(out[3].shape[0] == 2 && ((int64_t *)out[3].data)[1] == mcount);
        for (int o = 0; o < 4; o++) frt_tensor_release(&out[o]);
    }
    frt_runtime_free(rt);
    frt_model_free(m);
}

/* Naive Unique over n slices (len elements each, slice i at x + i*len when axis is 0 or none). */
static int cmp_f(const float *a, const float *b, int64_t len) {
    for (int64_t e = 0; e < len; e++)
        if (a[e] != b[e]) return a[e] < b[e] ? -1 : 1;
    return 0;
}

/*   Y, I, INV, CNT = Unique(X, sorted, axis 0)    G = Gather(Y, INV)  (== X)
 * X [n, 3] int-valued floats, graph input. */
static void test_model_unique(void) {
    for (int sorted = 0; sorted <= 1; sorted++)
        for (int with_axis = 0; with_axis <= 1; with_axis++) {
            ob_buf g = {0};
            int64_t xd[2] = {-1, 3};
            g_in(&g, "X", FRT_FLOAT32, 2, xd);
            const char *ins[] = {"X", NULL}, *outs[] = {"Y", "I", "INV", "CNT", NULL};
            ob_buf un = node_io("Unique", "uq", ins, outs);
            ob_attr_int(&un, "sorted", sorted);
            if (with_axis) ob_attr_int(&un, "axis", -2);
            g_add(&g, un);
            const char *gi[] = {"Y", "INV", NULL}, *go[] = {"G", NULL};
            ob_buf ga = node_io("Gather", "ga", gi, go);
            g_add(&g, ga);
            g_out(&g, "Y", FRT_FLOAT32);
            g_out(&g, "I", FRT_INT64);
            g_out(&g, "INV", FRT_INT64);
            g_out(&g, "CNT", FRT_INT64);
            g_out(&g, "G", FRT_FLOAT32);
            ob_buf mb = ob_model(&g);
            frt_model *m = NULL;
            CHECK_OK(frt_model_load_buffer(mb.p, mb.n, NULL, NULL, &m));
            free(mb.p);
            frt_runtime *rt = NULL;
            if (m) CHECK_OK(frt_runtime_create(m, &rt));
            const int rows_of[3] = {7, 1, 12};
            for (int r = 0; r < 3 && rt; r++) {
                int rows = rows_of[r];
                float x[36];
                for (int i = 0; i < rows * 3; i++) x[i] = (float)(rnd(with_axis ? 2 : 4) - 1);
                frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 2, .shape = {rows, 3}, .data = x,
                                 .nbytes = (size_t)rows * 12};
                const char *names[] = {"X"};
                frt_tensor out[5];
                CHECK_OK(frt_run(rt, names, &in, 1, out, 5, FRT_OUTPUTS_ALLOC));
                /* reference: n items of len floats */
                int64_t n = with_axis ? rows : rows * 3, len = with_axis ? 3 : 1;
                int64_t first[36], cnt[36], inv[36], u = 0;
                for (int64_t i = 0; i < n; i++) {
                    int64_t j = 0;
                    while (j < u && cmp_f(x + first[j] * len, x + i * len, len) != 0) j++;
                    if (j == u) {
                        first[u] = i;
                        cnt[u++] = 0;
                    }
                    cnt[j]++;
                    inv[i] = j;
                }
                int64_t pos[36]; /* group j's place in Y */
                for (int64_t j = 0; j < u; j++) {
                    pos[j] = j;
                    if (sorted) {
                        pos[j] = 0;
                        for (int64_t k = 0; k < u; k++)
                            pos[j] += cmp_f(x + first[k] * len, x + first[j] * len, len) < 0;
                    }
                }
                int ok = out[0].shape[0] == u && out[1].shape[0] == u && out[2].shape[0] == n &&
                         out[3].shape[0] == u;
                ok = ok && (with_axis ? out[0].rank == 2 && out[0].shape[1] == 3 : out[0].rank == 1);
                for (int64_t j = 0; ok && j < u; j++) {
                    ok = cmp_f((float *)out[0].data + pos[j] * len, x + first[j] * len, len) == 0 &&
                         ((int64_t *)out[1].data)[pos[j]] == first[j] &&
                         ((int64_t *)out[3].data)[pos[j]] == cnt[j];
                }
                for (int64_t i = 0; ok && i < n; i++) ok = ((int64_t *)out[2].data)[i] == pos[inv[i]];
                CHECK_MSG(ok, "sorted %d axis %d rows %d: %lld unique", sorted, with_axis, rows,
                          (long long)u);
                /* Gather(Y, inverse) rebuilds X */
                CHECK(out[4].nbytes == (size_t)rows * 12 && memcmp(out[4].data, x, out[4].nbytes) == 0);
                for (int o = 0; o < 5; o++) frt_tensor_release(&out[o]);
            }
            frt_runtime_free(rt);
            frt_model_free(m);
        }
}

/* An index out of range in a model: the run fails with the node and the index named. */
static void test_model_bad_index(void) {
    ob_buf g = {0};
    int64_t xd[2] = {2, 3}, idd[2] = {2, 1};
    g_in(&g, "X", FRT_FLOAT32, 2, xd);
    g_in(&g, "I", FRT_INT64, 2, idd);
    const char *ins[] = {"X", "I", NULL}, *outs[] = {"Y", NULL};
    ob_buf n = node_io("GatherElements", "ge", ins, outs);
    ob_attr_int(&n, "axis", 1);
    g_add(&g, n);
    g_out(&g, "Y", FRT_FLOAT32);
    ob_buf mb = ob_model(&g);
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer(mb.p, mb.n, NULL, NULL, &m));
    free(mb.p);
    frt_runtime *rt = NULL;
    if (m) CHECK_OK(frt_runtime_create(m, &rt));
    if (rt) {
        float x[6] = {0};
        int64_t idx[2] = {2, -7};
        frt_tensor in[2] = {{.dtype = FRT_FLOAT32, .rank = 2, .shape = {2, 3}, .data = x, .nbytes = 24},
                            {.dtype = FRT_INT64, .rank = 2, .shape = {2, 1}, .data = idx, .nbytes = 16}};
        const char *names[] = {"X", "I"};
        frt_tensor out;
        CHECK(frt_run(rt, names, in, 2, &out, 1, FRT_OUTPUTS_ALLOC) == FRT_ERR_RUNTIME);
        CHECK_MSG(err_has("'ge'") && err_has("index -7") && err_has("position 1"), "%s",
                  frt_last_error());
        idx[1] = -3;
        CHECK_OK(frt_run(rt, names, in, 2, &out, 1, FRT_OUTPUTS_ALLOC));
        frt_tensor_release(&out);
    }
    frt_runtime_free(rt);
    frt_model_free(m);
}

/* NonZero and Compress of constants fold at load (infer sizes them from the data): the model
 * has no step left and the outputs are right. */
static void test_model_folded(void) {
    ob_buf g = {0};
    int64_t cd[2] = {2, 3};
    float c[6] = {0, 1, 0, 2, 3, 0};
    ob_buf t = ob_tensor_f32("K", cd, 2, c);
    ob_msg(&g, OB_INIT, &t);
    const char *i1[] = {"K", NULL}, *o1[] = {"NZ", NULL};
    g_add(&g, node_io("NonZero", "nz", i1, o1));
    g_out(&g, "NZ", FRT_INT64);
    ob_buf mb = ob_model(&g);
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer(mb.p, mb.n, NULL, NULL, &m));
    free(mb.p);
    frt_runtime *rt = NULL;
    if (m) CHECK(m->blocks[0].prog->n_compute == 0);
    if (m) CHECK_OK(frt_runtime_create(m, &rt));
    if (rt) {
        frt_tensor out;
        CHECK_OK(frt_run(rt, NULL, NULL, 0, &out, 1, FRT_OUTPUTS_ALLOC));
        int64_t want[2][3] = {{0, 1, 1}, {1, 0, 1}};
        CHECK(out.rank == 2 && out.shape[0] == 2 && out.shape[1] == 3 &&
              memcmp(out.data, want, sizeof want) == 0);
        frt_tensor_release(&out);
    }
    frt_runtime_free(rt);
    frt_model_free(m);
}

int main(void) {
    test_gather_elements();
    test_scatter_elements();
    test_gather_nd();
    test_scatter_nd();
    test_bad_input();
    test_nonzero_compress_harness();
    test_model_nonzero_compress();
    test_model_unique();
    test_model_bad_index();
    test_model_folded();
    TEST_MAIN_END();
}
