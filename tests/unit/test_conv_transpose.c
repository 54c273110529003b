/* ConvTranspose against a naive scatter reference written from the ONNX spec: 1-3 spatial dims,
 * groups, strides, dilations, pads, output_padding, output_shape, auto_pad, bias, constant and
 * run-time weights, 1 and 2 threads; plus bad attributes and mismatched channels. */
#include <stdint.h>

#include "op_harness.h"
#include "test_util.h"

typedef struct ct_cfg {
    int nsp;
    int64_t N, C, M, group;
    int64_t in[3], k[3], s[3], d[3], pads[6], opad[3], oshape[3];
    int has_oshape, bias, auto_pad; /* 0 NOTSET 1 SAME_UPPER 2 SAME_LOWER */
} ct_cfg;

static uint32_t rng = 12345;
static float frand(void) {
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* Output dims and begin pads by the spec (opset >= 11 rules). */
static void ref_dims(const ct_cfg *c, int64_t *od, int64_t *pb) {
    for (int i = 0; i < c->nsp; i++) {
        int64_t ek = (c->k[i] - 1) * c->d[i] + 1;
        int64_t full = c->s[i] * (c->in[i] - 1) + c->opad[i] + ek;
        if (c->has_oshape || c->auto_pad) {
            od[i] = c->has_oshape ? c->oshape[i] : c->in[i] * c->s[i];
            int64_t tot = full - od[i] > 0 ? full - od[i] : 0;
            pb[i] = c->auto_pad == 1 ? tot / 2 : tot - tot / 2;
        } else {
            od[i] = full - c->pads[i] - c->pads[c->nsp + i];
            pb[i] = c->pads[i];
        }
    }
}

static void ref_ct(const ct_cfg *c, const float *X, const float *W, const float *B, float *Y,
                   const int64_t *od, const int64_t *pb) {
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1},
            d[3] = {1, 1, 1}, p[3] = {0, 0, 0};
    int off = 3 - c->nsp;
    for (int i = 0; i < c->nsp; i++) {
        in[off + i] = c->in[i];
        out[off + i] = od[i];
        k[off + i] = c->k[i];
        s[off + i] = c->s[i];
        d[off + i] = c->d[i];
        p[off + i] = pb[i];
    }
    int64_t S = in[0] * in[1] * in[2], OS = out[0] * out[1] * out[2], K = k[0] * k[1] * k[2];
    int64_t Cg = c->C / c->group, Mg = c->M / c->group;
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t m = 0; m < c->M; m++)
            for (int64_t o = 0; o < OS; o++) Y[(n * c->M + m) * OS + o] = B ? B[m] : 0.0f;
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t ci = 0; ci < c->C; ci++) {
            int64_t g = ci / Cg;
            for (int64_t mg = 0; mg < Mg; mg++) {
                int64_t m = g * Mg + mg;
                for (int64_t a = 0; a < in[0]; a++)
                    for (int64_t b = 0; b < in[1]; b++)
                        for (int64_t e = 0; e < in[2]; e++)
                            for (int64_t ka = 0; ka < k[0]; ka++)
                                for (int64_t kb = 0; kb < k[1]; kb++)
                                    for (int64_t ke = 0; ke < k[2]; ke++) {
                                        int64_t oa = a * s[0] - p[0] + ka * d[0];
                                        int64_t ob = b * s[1] - p[1] + kb * d[1];
                                        int64_t oe = e * s[2] - p[2] + ke * d[2];
                                        if (oa < 0 || oa >= out[0] || ob < 0 || ob >= out[1] ||
                                            oe < 0 || oe >= out[2])
                                            continue;
                                        float xv = X[(n * c->C + ci) * S + (a * in[1] + b) * in[2] + e];
                                        float wv = W[((ci * Mg + mg) * K) + (ka * k[1] + kb) * k[2] + ke];
                                        Y[(n * c->M + m) * OS + (oa * out[1] + ob) * out[2] + oe] +=
                                            xv * wv;
                                    }
            }
        }
}

static void run_case(const ct_cfg *c, int weights_const, int threads) {
    int64_t S = 1, K = 1;
    for (int i = 0; i < c->nsp; i++) {
        S *= c->in[i];
        K *= c->k[i];
    }
    int64_t Mg = c->M / c->group;
    size_t nx = (size_t)(c->N * c->C * S), nw = (size_t)(c->C * Mg * K);
    float *X = malloc(nx * sizeof(float)), *W = malloc(nw * sizeof(float)), B[64];
    for (size_t i = 0; i < nx; i++) X[i] = frand();
    for (size_t i = 0; i < nw; i++) W[i] = frand();
    for (int i = 0; i < 64; i++) B[i] = frand();
    int64_t od[3], pb[3];
    ref_dims(c, od, pb);
    int64_t OS = 1;
    for (int i = 0; i < c->nsp; i++) OS *= od[i];
    float *R = malloc((size_t)(c->N * c->M * OS) * sizeof(float));
    ref_ct(c, X, W, c->bias ? B : NULL, R, od, pb);

    int64_t xd[5] = {c->N, c->C}, wd[5] = {c->C, Mg}, bd[1] = {c->M};
    for (int i = 0; i < c->nsp; i++) {
        xd[2 + i] = c->in[i];
        wd[2 + i] = c->k[i];
    }
    frt_value in[3] = {frt_test_value(FRT_FLOAT32, 2 + c->nsp, xd, X),
                       frt_test_value(FRT_FLOAT32, 2 + c->nsp, wd, W),
                       frt_test_value(FRT_FLOAT32, 1, bd, B)};
    frt_onnx_attr at[8];
    size_t na = 0;
    at[na++] = frt_test_attr_ints("strides", c->s, (size_t)c->nsp);
    at[na++] = frt_test_attr_ints("dilations", c->d, (size_t)c->nsp);
    at[na++] = frt_test_attr_int("group", c->group);
    if (c->has_oshape) at[na++] = frt_test_attr_ints("output_shape", c->oshape, (size_t)c->nsp);
    else if (!c->auto_pad) at[na++] = frt_test_attr_ints("pads", c->pads, 2 * (size_t)c->nsp);
    at[na++] = frt_test_attr_ints("output_padding", c->opad, (size_t)c->nsp);
    if (c->auto_pad)
        at[na++] = frt_test_attr_string("auto_pad", c->auto_pad == 1 ? "SAME_UPPER" : "SAME_LOWER");
    frt_test_op t = {0};
    t.op_type = "ConvTranspose";
    t.attrs = at;
    t.n_attrs = na;
    t.inputs = in;
    t.n_in = c->bias ? 3 : 2;
    t.const_mask = weights_const ? 6u : 0u;
    t.n_out = 1;
    t.n_threads = threads;
    frt_value out;
    const char *kn = NULL;
    frt_status st = frt_test_run_op(&t, &out, &kn);
    CHECK_MSG(st == FRT_OK, "ConvTranspose: %s", frt_last_error());
    if (st == FRT_OK) {
        int ok = out.rank == 2 + c->nsp && out.dims[0] == c->N && out.dims[1] == c->M;
        for (int i = 0; ok && i < c->nsp; i++) ok = out.dims[2 + i] == od[i];
        ok = ok && t_close(out.data, R, (size_t)(c->N * c->M * OS), 1e-4f, 1e-4f);
        CHECK_MSG(ok, "nsp %d N %lld C %lld M %lld g %lld s %lld d %lld const %d kernel %s", c->nsp,
                  (long long)c->N, (long long)c->C, (long long)c->M, (long long)c->group,
                  (long long)c->s[0], (long long)c->d[0], weights_const, kn ? kn : "?");
        CHECK(kn && strstr(kn, weights_const ? "packed" : "gemm_f32"));
        free(out.data);
    }
    free(X);
    free(W);
    free(R);
}

static void test_random(void) {
    for (int it = 0; it < 60; it++) {
        ct_cfg c;
        memset(&c, 0, sizeof c);
        c.nsp = 1 + it % 3;
        c.group = 1 + (it % 4 == 3) + (it % 7 == 6);
        c.N = 1 + it % 2;
        c.C = c.group * (1 + (it * 5) % 4);
        c.M = c.group * (1 + (it * 3) % 5);
        for (int i = 0; i < c.nsp; i++) {
            c.in[i] = 1 + (it * 7 + i * 3) % (c.nsp == 3 ? 4 : 7);
            c.k[i] = 1 + (it + i) % 3;
            c.s[i] = 1 + (it / 3 + i) % 3;
            c.d[i] = 1 + (it / 5 + i) % 2;
            c.opad[i] = (it % 5 == 4 && c.s[i] > 1) ? c.s[i] - 1 : 0;
            c.pads[i] = (it / 2 + i) % 2;
            c.pads[c.nsp + i] = (it / 4 + i) % 2;
        }
        c.bias = it % 2;
        if (it % 6 == 5) c.auto_pad = 1 + (it / 6) % 2;
        if (it % 9 == 8) {
            c.has_oshape = 1;
            for (int i = 0; i < c.nsp; i++)
                c.oshape[i] = c.s[i] * (c.in[i] - 1) + (c.k[i] - 1) * c.d[i] + 1 + (i % 2);
        }
        int64_t od[3], pb[3];
        ref_dims(&c, od, pb);
        int ok = 1;
        for (int i = 0; i < c.nsp; i++) ok &= od[i] >= 1;
        if (!ok) continue;
        run_case(&c, it % 3 != 0, 1 + (it % 4 == 1));
    }
}

static frt_status run_bad(const int64_t *xd, const int64_t *wd, int rank, const frt_onnx_attr *at,
                          size_t na) {
    float buf[256] = {0};
    frt_value in[2] = {frt_test_value(FRT_FLOAT32, rank, xd, buf),
                       frt_test_value(FRT_FLOAT32, rank, wd, buf)};
    frt_test_op t = {0};
    t.op_type = "ConvTranspose";
    t.attrs = at;
    t.n_attrs = na;
    t.inputs = in;
    t.n_in = 2;
    t.n_out = 1;
    frt_value out;
    frt_status st = frt_test_run_op(&t, &out, NULL);
    if (st == FRT_OK) free(out.data);
    return st;
}

static void test_bad(void) {
    int64_t xd[4] = {1, 2, 3, 3}, wd[4] = {3, 1, 2, 2}, wd_ok[4] = {2, 1, 2, 2};
    CHECK(run_bad(xd, wd, 4, NULL, 0) == FRT_ERR_SHAPE); /* 2 channels vs W's 3 */
    int64_t zero[2] = {0, 1};
    frt_onnx_attr a = frt_test_attr_ints("strides", zero, 2);
    CHECK(run_bad(xd, wd_ok, 4, &a, 1) == FRT_ERR_SHAPE);
    int64_t three[3] = {1, 1, 1};
    a = frt_test_attr_ints("strides", three, 3);
    CHECK(run_bad(xd, wd_ok, 4, &a, 1) == FRT_ERR_SHAPE);
    a = frt_test_attr_int("group", 3);
    CHECK(run_bad(xd, wd_ok, 4, &a, 1) == FRT_ERR_SHAPE);
    a = frt_test_attr_string("auto_pad", "SAME");
    CHECK(run_bad(xd, wd_ok, 4, &a, 1) == FRT_ERR_UNSUPPORTED);
    int64_t big[4] = {1, 1, 1, 1};
    a = frt_test_attr_ints("pads", big, 4); /* output 3*1 - 2 ... still >= 1: fine */
    CHECK(run_bad(xd, wd_ok, 4, &a, 1) == FRT_OK);
    int64_t huge[4] = {3, 3, 3, 3};
    a = frt_test_attr_ints("pads", huge, 4); /* output 4 - 6 < 1 */
    CHECK(run_bad(xd, wd_ok, 4, &a, 1) == FRT_ERR_SHAPE);
}

int main(void) {
    test_random();
    test_bad();
    TEST_MAIN_END();
}
