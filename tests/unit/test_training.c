/* Adagrad Adam Momentum (ai.onnx.preview.training) through infer -> select -> kernel against
 * naive references of their update rules: two tensors of odd sizes, float32 and float64, T = 0
 * and T > 0, both Momentum modes, and malformed arities / dtypes / attributes. */
#include <math.h>
#include <stdint.h>

#include "op_harness.h"
#include "test_util.h"

#define N1 7
#define N2 33

static frt_status run(const char *op, const frt_onnx_attr *at, size_t na, frt_value *in, int n_in,
                      int n_out, frt_value *out) {
    const frt_op_def *def = frt_op_find(FRT_DOMAIN_TRAINING, op);
    if (!def) return frt_error(FRT_ERR_UNSUPPORTED, "no %s", op);
    frt_test_op t = {0};
    t.op_type = op;
    t.opset = 1;
    t.attrs = at;
    t.n_attrs = na;
    t.inputs = in;
    t.n_in = n_in;
    t.n_out = n_out;
    return frt_test_run_op(&t, out, NULL);
}

static double ld(int32_t dt, const void *p, int i) {
    return dt == FRT_FLOAT32 ? ((const float *)p)[i] : ((const double *)p)[i];
}

/* data[k][i]: group k (X, G, state...) of tensor i, filled deterministically */
static void fill(int32_t dt, void *p, int n, int seed) {
    for (int e = 0; e < n; e++) {
        double v = sin(seed * 1.3 + e * 0.7) * 2.0 + (seed >= 2 ? 2.5 : 0); /* states > 0 */
        if (dt == FRT_FLOAT32) ((float *)p)[e] = (float)v;
        else ((double *)p)[e] = v;
    }
}

static void check_op(int kind, int32_t dt, int64_t t, int nesterov) {
    static const char *const ops[] = {"Adagrad", "Adam", "Momentum"};
    int groups = kind == 1 ? 4 : 3, nouts = kind == 1 ? 3 : 2;
    int64_t sz[2] = {N1, N2};
    double bufs[4][2][N2];
    double r = 0.05;
    float rf = 0.05f;
    frt_value in[2 + 4 * 2];
    in[0] = frt_test_value(dt, 0, NULL, dt == FRT_FLOAT32 ? (void *)&rf : (void *)&r);
    in[1] = frt_test_value(FRT_INT64, 0, NULL, &t);
    for (int k = 0; k < groups; k++)
        for (int i = 0; i < 2; i++) {
            fill(dt, bufs[k][i], (int)sz[i], k * 2 + i);
            in[2 + k * 2 + i] = frt_test_value(dt, 1, &sz[i], bufs[k][i]);
        }
    frt_onnx_attr at[5];
    size_t na = 0;
    double norm = 0.01, eps = 1e-3, decay = 0.2, alpha = 0.8, beta = 0.7, post = 0.05;
    at[na++] = frt_test_attr_float("norm_coefficient", (float)norm);
    if (kind == 0) {
        at[na++] = frt_test_attr_float("epsilon", (float)eps);
        at[na++] = frt_test_attr_float("decay_factor", (float)decay);
    } else if (kind == 1) {
        at[na++] = frt_test_attr_float("epsilon", (float)eps);
        at[na++] = frt_test_attr_float("alpha", (float)alpha);
        at[na++] = frt_test_attr_float("beta", (float)beta);
        at[na++] = frt_test_attr_float("norm_coefficient_post", (float)post);
    } else {
        at[na++] = frt_test_attr_float("alpha", (float)alpha);
        at[na++] = frt_test_attr_float("beta", (float)beta);
        at[na++] = frt_test_attr_string("mode", nesterov ? "nesterov" : "standard");
    }
    /* the attributes as the kernel sees them (float attributes) */
    norm = (float)norm, eps = (float)eps, decay = (float)decay, alpha = (float)alpha;
    beta = (float)beta, post = (float)post;
    double rr = dt == FRT_FLOAT32 ? (double)rf : r;
    frt_value out[6];
    frt_status st = run(ops[kind], at, na, in, 2 + 2 * groups, 2 * nouts, out);
    CHECK_MSG(st == FRT_OK, "%s: %s", ops[kind], frt_last_error());
    if (st) return;
    double tol = dt == FRT_FLOAT32 ? 1e-5 : 1e-12;
    for (int i = 0; i < 2; i++)
        for (int e = 0; e < sz[i]; e++) {
            double x = ld(dt, bufs[0][i], e), g = ld(dt, bufs[1][i], e) + norm * x;
            double s1 = ld(dt, bufs[2][i], e), want[3];
            if (kind == 0) {
                double rate = rr / (1 + (double)t * decay), h = s1 + g * g;
                want[0] = x - rate * g / (sqrt(h) + eps);
                want[1] = h;
            } else if (kind == 1) {
                double s2 = ld(dt, bufs[3][i], e);
                double v = alpha * s1 + (1 - alpha) * g, h = beta * s2 + (1 - beta) * g * g;
                double rate = t > 0 ? rr * sqrt(1 - pow(beta, (double)t)) / (1 - pow(alpha, (double)t))
                                    : rr;
                want[0] = (1 - post) * (x - rate * v / (sqrt(h) + eps));
                want[1] = v;
                want[2] = h;
            } else {
                double v = alpha * s1 + (t > 0 ? beta : 1) * g;
                want[0] = nesterov ? x - rr * (g + alpha * v) : x - rr * v;
                want[1] = v;
            }
            for (int k = 0; k < nouts; k++) {
                const frt_value *o = &out[k * 2 + i];
                double got = ld(dt, o->data, e);
                CHECK_MSG(o->dtype == dt && o->numel == sz[i] &&
                              fabs(got - want[k]) <= tol * (1 + fabs(want[k])),
                          "%s %s t=%lld out %d[%d] = %.9g, want %.9g", ops[kind],
                          frt_dtype_name(dt), (long long)t, k, e, got, want[k]);
            }
        }
    for (int k = 0; k < 2 * nouts; k++) free(out[k].data);
}

static void test_errors(void) {
    float r = 0.1f, x[3] = {0};
    int64_t t = 0, n3 = 3, n2 = 2;
    frt_value in[5] = {frt_test_value(FRT_FLOAT32, 0, NULL, &r),
                       frt_test_value(FRT_INT64, 0, NULL, &t),
                       frt_test_value(FRT_FLOAT32, 1, &n3, x),
                       frt_test_value(FRT_FLOAT32, 1, &n3, x),
                       frt_test_value(FRT_FLOAT32, 1, &n3, x)};
    frt_value out[4];
    CHECK(run("Adagrad", NULL, 0, in, 4, 2, out) == FRT_ERR_MALFORMED); /* 2 + 3n inputs */
    CHECK(run("Adagrad", NULL, 0, in, 5, 3, out) == FRT_ERR_MALFORMED); /* 2n outputs */
    in[4] = frt_test_value(FRT_FLOAT32, 1, &n2, x);
    CHECK(run("Adagrad", NULL, 0, in, 5, 2, out) == FRT_ERR_SHAPE && err_has("differs"));
    in[4] = frt_test_value(FRT_FLOAT32, 1, &n3, x);
    in[1] = frt_test_value(FRT_FLOAT32, 0, NULL, &r);
    CHECK(run("Adagrad", NULL, 0, in, 5, 2, out) == FRT_ERR_SHAPE && err_has("int64"));
    in[1] = frt_test_value(FRT_INT64, 0, NULL, &t);
    CHECK(run("Momentum", NULL, 0, in, 5, 2, out) == FRT_ERR_MALFORMED && err_has("required"));
    frt_onnx_attr m[4] = {frt_test_attr_float("alpha", 1), frt_test_attr_float("beta", 1),
                          frt_test_attr_float("norm_coefficient", 0),
                          frt_test_attr_string("mode", "heavy")};
    CHECK(run("Momentum", m, 4, in, 5, 2, out) == FRT_ERR_UNSUPPORTED && err_has("heavy"));
    int64_t xi[3] = {0};
    in[2] = frt_test_value(FRT_INT64, 1, &n3, xi);
    in[3] = frt_test_value(FRT_INT64, 1, &n3, xi);
    in[4] = frt_test_value(FRT_INT64, 1, &n3, xi);
    CHECK(run("Adagrad", NULL, 0, in, 5, 2, out) == FRT_ERR_UNSUPPORTED);
}

int main(void) {
    static const int32_t dts[2] = {FRT_FLOAT32, FRT_FLOAT64};
    for (int d = 0; d < 2; d++)
        for (int64_t t = 0; t <= 3; t += 3) {
            check_op(0, dts[d], t, 0);
            check_op(1, dts[d], t, 0);
            check_op(2, dts[d], t, 0);
            check_op(2, dts[d], t, 1);
        }
    test_errors();
    TEST_MAIN_END();
}
