/* RandomUniform RandomNormal RandomUniformLike RandomNormalLike Bernoulli through infer -> select
 * -> kernel: shapes and dtypes, ranges, moments of large seeded samples (deterministic, so the
 * bounds cannot flake), seeded runs reproducible and independent of the thread count, unseeded
 * runs different, Bernoulli's extremes, and bad attributes / dtypes. */
#include <math.h>
#include <stdint.h>

#include "op_harness.h"
#include "ops/dtype_util.h"
#include "test_util.h"

static frt_status run(const char *op, const frt_onnx_attr *at, size_t na, frt_value *in, int n_in,
                      int threads, frt_value *out) {
    frt_test_op t = {0};
    t.op_type = op;
    t.opset = 15;
    t.attrs = at;
    t.n_attrs = na;
    t.inputs = in;
    t.n_in = n_in;
    t.n_out = 1;
    t.n_threads = threads;
    return frt_test_run_op(&t, out, NULL);
}

static void moments(const frt_value *v, double *mean, double *sd, double *lo, double *hi) {
    double s = 0, s2 = 0;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int64_t i = 0; i < v->numel; i++) {
        double x = frt_ld_f64(v->dtype, v->data, i);
        s += x;
        s2 += x * x;
        if (x < *lo) *lo = x;
        if (x > *hi) *hi = x;
    }
    *mean = s / (double)v->numel;
    *sd = sqrt(s2 / (double)v->numel - *mean * *mean);
}

static void test_uniform_normal(void) {
    int64_t shape[2] = {317, 311}; /* 98587 elements */
    static const int32_t dts[] = {FRT_FLOAT32, FRT_FLOAT64, FRT_FLOAT16};
    for (int d = 0; d < 3; d++) {
        frt_onnx_attr at[5] = {frt_test_attr_ints("shape", shape, 2),
                               frt_test_attr_int("dtype", dts[d]),
                               frt_test_attr_float("low", -2.0f), frt_test_attr_float("high", 3.0f),
                               frt_test_attr_float("seed", 7.0f)};
        frt_value a, b, c;
        CHECK_OK(run("RandomUniform", at, 5, NULL, 0, 1, &a));
        CHECK_OK(run("RandomUniform", at, 5, NULL, 0, 2, &b));
        CHECK(a.dtype == dts[d] && a.rank == 2 && a.dims[0] == 317 && a.dims[1] == 311);
        size_t nb = (size_t)a.numel * frt_dtype_size((frt_dtype)dts[d]);
        CHECK(a.data && b.data && memcmp(a.data, b.data, nb) == 0); /* seeded, any threads */
        double mean, sd, lo, hi;
        moments(&a, &mean, &sd, &lo, &hi);
        CHECK_MSG(lo >= -2.0 && hi <= 3.0 && (dts[d] == FRT_FLOAT16 || hi < 3.0),
                  "uniform range [%g, %g]", lo, hi);
        CHECK_MSG(fabs(mean - 0.5) < 0.03 && fabs(sd - 5.0 / sqrt(12.0)) < 0.03,
                  "uniform %s mean %g sd %g", frt_dtype_name(dts[d]), mean, sd);
        at[4] = frt_test_attr_float("seed", 8.0f); /* another seed: other values */
        CHECK_OK(run("RandomUniform", at, 5, NULL, 0, 1, &c));
        CHECK(c.data && memcmp(a.data, c.data, nb) != 0);
        free(a.data), free(b.data), free(c.data);
        /* unseeded: two runs differ */
        CHECK_OK(run("RandomUniform", at, 4, NULL, 0, 1, &a));
        CHECK_OK(run("RandomUniform", at, 4, NULL, 0, 1, &b));
        CHECK(a.data && b.data && memcmp(a.data, b.data, nb) != 0);
        free(a.data), free(b.data);

        frt_onnx_attr an[5] = {frt_test_attr_ints("shape", shape, 2),
                               frt_test_attr_int("dtype", dts[d]),
                               frt_test_attr_float("mean", 1.5f), frt_test_attr_float("scale", 2.0f),
                               frt_test_attr_float("seed", 3.0f)};
        CHECK_OK(run("RandomNormal", an, 5, NULL, 0, 2, &a));
        moments(&a, &mean, &sd, &lo, &hi);
        CHECK_MSG(fabs(mean - 1.5) < 0.05 && fabs(sd - 2.0) < 0.05 && isfinite(lo) && isfinite(hi),
                  "normal %s mean %g sd %g", frt_dtype_name(dts[d]), mean, sd);
        /* about 68.3% within one sd */
        int64_t in1 = 0;
        for (int64_t i = 0; i < a.numel; i++)
            in1 += fabs(frt_ld_f64(a.dtype, a.data, i) - 1.5) < 2.0;
        CHECK_MSG(fabs((double)in1 / (double)a.numel - 0.6827) < 0.01, "normal within 1 sd: %g",
                  (double)in1 / (double)a.numel);
        free(a.data);
    }
    /* Like: the input's shape, and its dtype unless the attribute says otherwise */
    int64_t d3[3] = {3, 1, 5};
    double x[15] = {0};
    frt_value in = frt_test_value(FRT_FLOAT64, 3, d3, x), out;
    frt_onnx_attr s = frt_test_attr_float("seed", 1.0f);
    CHECK_OK(run("RandomUniformLike", &s, 1, &in, 1, 1, &out));
    CHECK(out.dtype == FRT_FLOAT64 && out.rank == 3 && out.dims[2] == 5);
    free(out.data);
    frt_onnx_attr s2[2] = {s, frt_test_attr_int("dtype", FRT_FLOAT16)};
    CHECK_OK(run("RandomNormalLike", s2, 2, &in, 1, 1, &out));
    CHECK(out.dtype == FRT_FLOAT16 && out.numel == 15);
    free(out.data);
}

static void test_bernoulli(void) {
    int64_t n = 50001;
    float *p = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) p[i] = i % 3 == 0 ? 0.0f : i % 3 == 1 ? 1.0f : 0.3f;
    static const int32_t outs[] = {0, FRT_BOOL, FRT_INT32, FRT_FLOAT64, FRT_UINT8};
    for (int k = 0; k < 5; k++) {
        frt_onnx_attr at[2] = {frt_test_attr_float("seed", 5.0f),
                               frt_test_attr_int("dtype", outs[k])};
        frt_value in = frt_test_value(FRT_FLOAT32, 1, &n, p), out;
        CHECK_OK(run("Bernoulli", at, outs[k] ? 2 : 1, &in, 1, 2, &out));
        CHECK(out.dtype == (outs[k] ? outs[k] : FRT_FLOAT32) && out.numel == n);
        if (!out.data) continue;
        int64_t ones = 0, third = 0, bad = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = frt_ld_f64(out.dtype, out.data, i);
            if (v != 0 && v != 1) bad++;
            if (i % 3 == 0 && v != 0) bad++;
            if (i % 3 == 1 && v != 1) bad++;
            if (i % 3 == 2) {
                third++;
                ones += v == 1;
            }
        }
        CHECK_MSG(bad == 0, "bernoulli %d: %lld bad values", k, (long long)bad);
        CHECK_MSG(fabs((double)ones / (double)third - 0.3) < 0.015, "bernoulli rate %g",
                  (double)ones / (double)third);
        free(out.data);
    }
    free(p);
}

static void test_errors(void) {
    int64_t shape[2] = {2, 3}, neg[1] = {-1};
    frt_value out;
    CHECK(run("RandomUniform", NULL, 0, NULL, 0, 1, &out) == FRT_ERR_MALFORMED); /* no shape */
    frt_onnx_attr at[2] = {frt_test_attr_ints("shape", shape, 2),
                           frt_test_attr_int("dtype", FRT_INT32)};
    CHECK(run("RandomUniform", at, 2, NULL, 0, 1, &out) == FRT_ERR_UNSUPPORTED &&
          err_has("dtype"));
    at[1] = frt_test_attr_int("dtype", FRT_STRING);
    CHECK(run("RandomNormal", at, 2, NULL, 0, 1, &out) == FRT_ERR_UNSUPPORTED);
    at[0] = frt_test_attr_ints("shape", neg, 1);
    CHECK(run("RandomNormal", at, 1, NULL, 0, 1, &out) == FRT_ERR_SHAPE);
    frt_onnx_attr lh[3] = {frt_test_attr_ints("shape", shape, 2), frt_test_attr_float("low", 2),
                           frt_test_attr_float("high", 1)};
    CHECK(run("RandomUniform", lh, 3, NULL, 0, 1, &out) != FRT_OK && err_has("above high"));
    int64_t n = 3, xi[3] = {0};
    frt_value in = frt_test_value(FRT_INT64, 1, &n, xi);
    CHECK(run("Bernoulli", NULL, 0, &in, 1, 1, &out) == FRT_ERR_UNSUPPORTED);
    CHECK(run("RandomUniformLike", NULL, 0, &in, 1, 1, &out) == FRT_ERR_UNSUPPORTED);
    frt_onnx_attr st = frt_test_attr_int("dtype", FRT_STRING);
    float xf[3] = {0};
    in = frt_test_value(FRT_FLOAT32, 1, &n, xf);
    CHECK(run("Bernoulli", &st, 1, &in, 1, 1, &out) == FRT_ERR_UNSUPPORTED);
}

int main(void) {
    test_uniform_normal();
    test_bernoulli();
    test_errors();
    TEST_MAIN_END();
}
