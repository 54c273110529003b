/* The generic pooling paths against naive references: MaxPool with Indices (row- and column-major
 * storage_order, 1-3 spatial dims, pads/strides/dilations), MaxPool on float64/float16/int8/uint8
 * (same result as float32 on representable data), LpPool (p = 1, 2, 3), GlobalMaxPool, MaxUnpool
 * (inverse of MaxPool's indices, with and without output_shape, out-of-range index rejected). */
#include <stdint.h>

#include "op_harness.h"
#include "ops/dtype_util.h"
#include "test_util.h"

static uint32_t rng = 777;
static int irand(int n) {
    rng = rng * 1664525u + 1013904223u;
    return (int)((rng >> 8) % (uint32_t)n);
}

typedef struct cfg {
    int nsp;
    int64_t in[3], k[3], s[3], d[3], pads[6];
} cfg;

static int64_t out_dim(const cfg *c, int i) {
    int64_t ek = (c->k[i] - 1) * c->d[i] + 1;
    int64_t num = c->in[i] + c->pads[i] + c->pads[c->nsp + i] - ek;
    return num < 0 ? -1 : num / c->s[i] + 1;
}

/* Reference max (with argmax, row-major or column-major) or Lp over one plane set. */
static void ref_pool(const cfg *c, int64_t planes, const float *X, float *Y, int64_t *I, int lp,
                     int colmajor) {
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1},
            d[3] = {1, 1, 1}, pb[3] = {0, 0, 0};
    int off = 3 - c->nsp;
    for (int i = 0; i < c->nsp; i++) {
        in[off + i] = c->in[i];
        out[off + i] = out_dim(c, i);
        k[off + i] = c->k[i];
        s[off + i] = c->s[i];
        d[off + i] = c->d[i];
        pb[off + i] = c->pads[i];
    }
    int64_t IP = in[0] * in[1] * in[2], OP = out[0] * out[1] * out[2];
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t a = 0; a < out[0]; a++)
            for (int64_t b = 0; b < out[1]; b++)
                for (int64_t e = 0; e < out[2]; e++) {
                    double best = -INFINITY, acc = 0;
                    int64_t bi = -1;
                    for (int64_t ka = 0; ka < k[0]; ka++)
                        for (int64_t kb = 0; kb < k[1]; kb++)
                            for (int64_t ke = 0; ke < k[2]; ke++) {
                                int64_t ia = a * s[0] - pb[0] + ka * d[0];
                                int64_t ib = b * s[1] - pb[1] + kb * d[1];
                                int64_t ie = e * s[2] - pb[2] + ke * d[2];
                                if (ia < 0 || ia >= in[0] || ib < 0 || ib >= in[1] || ie < 0 ||
                                    ie >= in[2])
                                    continue;
                                double v = X[pl * IP + (ia * in[1] + ib) * in[2] + ie];
                                acc += pow(fabs(v), lp);
                                if (bi < 0 || v > best) {
                                    best = v;
                                    int64_t idx[3] = {ia, ib, ie}, o = 0, m = 1;
                                    if (colmajor) {
                                        for (int q = off; q < 3; q++) {
                                            o += idx[q] * m;
                                            m *= in[q];
                                        }
                                    } else {
                                        o = (ia * in[1] + ib) * in[2] + ie;
                                    }
                                    bi = pl * IP + o;
                                }
                            }
                    int64_t at = pl * OP + (a * out[1] + b) * out[2] + e;
                    Y[at] = lp ? (float)pow(acc, 1.0 / lp) : (float)best;
                    if (I) I[at] = bi;
                }
}

static frt_status run(const char *op, const cfg *c, frt_value *in, int n_in, int n_out,
                      frt_value *out, int64_t extra_int, const char *extra_name) {
    frt_onnx_attr at[6];
    size_t na = 0;
    at[na++] = frt_test_attr_ints("kernel_shape", c->k, (size_t)c->nsp);
    at[na++] = frt_test_attr_ints("strides", c->s, (size_t)c->nsp);
    at[na++] = frt_test_attr_ints("pads", c->pads, 2 * (size_t)c->nsp);
    if (strcmp(op, "MaxUnpool")) at[na++] = frt_test_attr_ints("dilations", c->d, (size_t)c->nsp);
    if (extra_name) at[na++] = frt_test_attr_int(extra_name, extra_int);
    frt_test_op t = {0};
    t.op_type = op;
    t.attrs = at;
    t.n_attrs = na;
    t.inputs = in;
    t.n_in = n_in;
    t.n_out = n_out;
    t.const_mask = n_in > 2 ? 4u : 0u;
    return frt_test_run_op(&t, out, NULL);
}

static void random_cfg(cfg *c, int it) {
    memset(c, 0, sizeof *c);
    c->nsp = 1 + it % 3;
    for (int i = 0; i < c->nsp; i++) {
        c->k[i] = 1 + irand(3);
        c->s[i] = 1 + irand(2);
        c->d[i] = 1 + irand(2);
        c->in[i] = (c->k[i] - 1) * c->d[i] + 1 + irand(5);
        c->pads[i] = irand((int)c->k[i]);
        c->pads[c->nsp + i] = irand((int)c->k[i]);
    }
}

static void test_indices_and_lp(void) {
    for (int it = 0; it < 60; it++) {
        cfg c;
        random_cfg(&c, it);
        int64_t N = 1 + irand(2), C = 1 + irand(3), S = 1, OS = 1;
        int64_t xd[5] = {N, C}, od[5] = {N, C};
        for (int i = 0; i < c.nsp; i++) {
            xd[2 + i] = c.in[i];
            od[2 + i] = out_dim(&c, i);
            S *= c.in[i];
            OS *= od[2 + i];
        }
        size_t nx = (size_t)(N * C * S), ny = (size_t)(N * C * OS);
        float *X = malloc(nx * 4), *R = malloc(ny * 4);
        int64_t *RI = malloc(ny * 8);
        /* distinct values: the argmax is unique */
        for (size_t i = 0; i < nx; i++) X[i] = (float)((int)((i * 7919) % nx) - (int)nx / 2) * 0.25f;
        int colmajor = it % 2;
        frt_value in = frt_test_value(FRT_FLOAT32, 2 + c.nsp, xd, X), out[2];
        ref_pool(&c, N * C, X, R, RI, 0, colmajor);
        frt_status st = run("MaxPool", &c, &in, 1, 2, out, colmajor, "storage_order");
        CHECK_MSG(st == FRT_OK, "MaxPool+Indices: %s", frt_last_error());
        if (!st) {
            CHECK(out[0].rank == 2 + c.nsp && out[1].dtype == FRT_INT64);
            CHECK(t_close(out[0].data, R, ny, 0, 0));
            CHECK_MSG(memcmp(out[1].data, RI, ny * 8) == 0, "indices it %d colmajor %d", it, colmajor);
            /* MaxUnpool of (Y, I) puts every max back at its place (row-major indices only) */
            if (!colmajor && c.d[0] == 1 && c.d[c.nsp - 1] == 1) {
                frt_value uin[2] = {frt_test_value(FRT_FLOAT32, 2 + c.nsp, od, out[0].data),
                                    frt_test_value(FRT_INT64, 2 + c.nsp, od, out[1].data)};
                int64_t want[5] = {N, C};
                int ok = 1;
                for (int i = 0; i < c.nsp; i++) {
                    want[2 + i] = (od[2 + i] - 1) * c.s[i] + c.k[i] - c.pads[i] - c.pads[c.nsp + i];
                    ok &= want[2 + i] >= 1;
                }
                int64_t wn = N * C;
                for (int i = 0; i < c.nsp; i++) wn *= want[2 + i];
                /* indices must fall inside the unpooled shape for a valid round trip */
                for (size_t i = 0; ok && i < ny; i++) ok &= RI[i] < wn;
                if (ok && wn == (int64_t)nx) {
                    frt_value u;
                    st = run("MaxUnpool", &c, uin, 2, 1, &u, 0, NULL);
                    CHECK_MSG(st == FRT_OK, "MaxUnpool: %s", frt_last_error());
                    if (!st) {
                        const float *U = u.data;
                        for (size_t i = 0; i < nx; i++) {
                            int hit = 0;
                            for (size_t j = 0; j < ny; j++) hit |= RI[j] == (int64_t)i;
                            CHECK(U[i] == (hit ? X[i] : 0.0f));
                        }
                        free(u.data);
                    }
                }
            }
            free(out[0].data);
            free(out[1].data);
        }
        for (int p = 1; p <= 3; p++) {
            ref_pool(&c, N * C, X, R, NULL, p, 0);
            st = run("LpPool", &c, &in, 1, 1, out, p, "p");
            CHECK_MSG(st == FRT_OK, "LpPool: %s", frt_last_error());
            if (!st) {
                CHECK_MSG(t_close(out[0].data, R, ny, 1e-5f, 1e-5f), "LpPool p=%d it %d", p, it);
                free(out[0].data);
            }
        }
        free(X);
        free(R);
        free(RI);
    }
}

static void test_dtypes(void) {
    cfg c = {.nsp = 2, .in = {5, 6}, .k = {2, 3}, .s = {2, 1}, .d = {1, 1}, .pads = {1, 0, 0, 1}};
    int64_t xd[4] = {1, 2, 5, 6}, S = 60;
    float X[60], R[60];
    for (int i = 0; i < S; i++) X[i] = (float)(irand(200) - 100);
    int64_t ny = 2 * out_dim(&c, 0) * out_dim(&c, 1);
    ref_pool(&c, 2, X, R, NULL, 0, 0);
    const int32_t dts[] = {FRT_FLOAT64, FRT_FLOAT16, FRT_INT8, FRT_UINT8};
    for (size_t t = 0; t < 4; t++) {
        int32_t dt = dts[t];
        double buf[60];
        for (int i = 0; i < S; i++) frt_st_f64(dt, buf, i, dt == FRT_UINT8 ? X[i] + 100 : X[i]);
        frt_value in = frt_test_value(dt, 4, xd, buf), out;
        frt_status st = run("MaxPool", &c, &in, 1, 1, &out, 0, NULL);
        CHECK_MSG(st == FRT_OK, "MaxPool %s: %s", frt_dtype_name(dt), frt_last_error());
        if (st) continue;
        CHECK(out.dtype == dt);
        for (int64_t i = 0; i < ny; i++)
            CHECK(frt_ld_f64(dt, out.data, i) == (dt == FRT_UINT8 ? R[i] + 100 : R[i]));
        free(out.data);
    }
    int64_t bd[4] = {1, 2, 5, 6};
    frt_value bad = frt_test_value(FRT_INT32, 4, bd, X), out;
    CHECK(run("MaxPool", &c, &bad, 1, 1, &out, 0, NULL) == FRT_ERR_UNSUPPORTED);
}

static void test_global_max(void) {
    int64_t xd[4] = {2, 3, 5, 7};
    float X[210];
    for (int i = 0; i < 210; i++) X[i] = (float)irand(1000) - 500.0f;
    frt_value in = frt_test_value(FRT_FLOAT32, 4, xd, X), out;
    frt_test_op t = {.op_type = "GlobalMaxPool", .inputs = &in, .n_in = 1, .n_out = 1};
    frt_status st = frt_test_run_op(&t, &out, NULL);
    CHECK_MSG(st == FRT_OK, "GlobalMaxPool: %s", frt_last_error());
    if (st) return;
    CHECK(out.rank == 4 && out.dims[0] == 2 && out.dims[1] == 3 && out.dims[2] == 1 &&
          out.dims[3] == 1);
    for (int p = 0; p < 6; p++) {
        float m = -INFINITY;
        for (int i = 0; i < 35; i++) m = X[p * 35 + i] > m ? X[p * 35 + i] : m;
        CHECK(((float *)out.data)[p] == m);
    }
    free(out.data);
}

static void test_unpool_shape_and_range(void) {
    /* the ONNX example: indices into the 4x4 unpooled shape land at the same (h, w) of a 5x5 */
    cfg c = {.nsp = 2, .k = {2, 2}, .s = {2, 2}, .d = {1, 1}};
    int64_t xd[4] = {1, 1, 2, 2}, sd[1] = {4};
    float X[4] = {5, 6, 7, 8};
    int64_t I[4] = {5, 7, 13, 15}, shape[4] = {1, 1, 5, 5};
    frt_value in[3] = {frt_test_value(FRT_FLOAT32, 4, xd, X), frt_test_value(FRT_INT64, 4, xd, I),
                       frt_test_value(FRT_INT64, 1, sd, shape)};
    frt_value out;
    frt_status st = run("MaxUnpool", &c, in, 3, 1, &out, 0, NULL);
    CHECK_MSG(st == FRT_OK, "MaxUnpool: %s", frt_last_error());
    if (!st) {
        const float *Y = out.data;
        CHECK(out.dims[2] == 5 && out.dims[3] == 5);
        for (int i = 0; i < 25; i++)
            CHECK(Y[i] == (i == 6 ? 5 : i == 8 ? 6 : i == 16 ? 7 : i == 18 ? 8 : 0));
        free(out.data);
    }
    I[2] = 16; /* outside the 4x4 unpooled shape */
    st = run("MaxUnpool", &c, in, 2, 1, &out, 0, NULL);
    CHECK(st == FRT_ERR_RUNTIME && strstr(frt_last_error(), "I[2] = 16"));
    if (!st) free(out.data);
}

int main(void) {
    test_indices_and_lp();
    test_dtypes();
    test_global_max();
    test_unpool_shape_and_range();
    TEST_MAIN_END();
}
