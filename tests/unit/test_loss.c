/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss through infer -> select -> kernel against
 * a naive reference: ranks 2 to 4, with and without weights, ignore_index (inside and outside
 * [0, C), negative), every reduction, the log_prob output, float32 and float64, int32 and int64
 * targets; and bad input (target out of range at run time, bad reduction, shape mismatches). */
#include <stdint.h>

#include "op_harness.h"
#include "ops/dtype_util.h"
#include "test_util.h"

/* Reference: x [N, C, D] (already log-probabilities for NLL), t [N, D]. red 0 none 1 sum 2 mean.
 * y: N*D values (none) or 1. */
static void ref_loss(const double *x, const int64_t *t, const double *w, int64_t N, int64_t C,
                     int64_t D, int has_ii, int64_t ii, int red, double *y) {
    double tot = 0, ws = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t d = 0; d < D; d++) {
            int64_t c = t[n * D + d];
            double l = 0, wt = 0;
            if (!(has_ii && c == ii)) {
                wt = w ? w[c] : 1;
                l = -x[(n * C + c) * D + d] * wt;
            }
            if (red == 0) y[n * D + d] = l;
            tot += l;
            ws += wt;
        }
    if (red == 1) y[0] = tot;
    if (red == 2) y[0] = tot / ws;
}

static void log_softmax_ref(const double *x, double *lp, int64_t N, int64_t C, int64_t D) {
    for (int64_t n = 0; n < N; n++)
        for (int64_t d = 0; d < D; d++) {
            double m = -INFINITY, s = 0;
            for (int64_t c = 0; c < C; c++) m = fmax(m, x[(n * C + c) * D + d]);
            for (int64_t c = 0; c < C; c++) s += exp(x[(n * C + c) * D + d] - m);
            for (int64_t c = 0; c < C; c++) lp[(n * C + c) * D + d] = x[(n * C + c) * D + d] - m - log(s);
        }
}

static const char *const RED[3] = {"none", "sum", "mean"};

static void test_losses(void) {
    static const int64_t shapes[][4] = {{3, 5}, {2, 4, 3}, {2, 3, 2, 5}};
    static const int ranks[] = {2, 3, 4};
    for (int si = 0; si < 3; si++) {
        int rank = ranks[si];
        const int64_t *dims = shapes[si];
        int64_t N = dims[0], C = dims[1], D = 1;
        for (int i = 2; i < rank; i++) D *= dims[i];
        int64_t nx = N * C * D, nt = N * D;
        double x[200], w[8], lp[200], yref[64];
        float xf[200], wf[8];
        int64_t t64[64];
        int32_t t32[64];
        unsigned seed = (unsigned)si + 11;
        for (int64_t i = 0; i < nx; i++) xf[i] = 2 * t_rand(&seed), x[i] = xf[i];
        for (int64_t i = 0; i < C; i++) wf[i] = 0.5f + 0.1f * (float)i, w[i] = wf[i];
        for (int64_t i = 0; i < nt; i++) t64[i] = (i * 7 + si) % C, t32[i] = (int32_t)t64[i];
        log_softmax_ref(x, lp, N, C, D);
        int64_t tdims[4] = {N};
        for (int i = 2; i < rank; i++) tdims[i - 1] = dims[i];
        for (int sce = 0; sce < 2; sce++)
            for (int red = 0; red < 3; red++)
                for (int v = 0; v < 16; v++) {
                    int use_w = v & 1, ii_mode = (v >> 1) & 3, f64 = v >> 3;
                    int has_ii = ii_mode != 0;
                    int64_t ii = ii_mode == 1 ? 1 : ii_mode == 2 ? -1 : 10;
                    if (ii_mode == 2) t64[0] = -1, t32[0] = -1; /* an ignored negative target */
                    frt_onnx_attr at[2] = {frt_test_attr_string("reduction", RED[red]),
                                           frt_test_attr_int("ignore_index", ii)};
                    int32_t dt = f64 ? FRT_FLOAT64 : FRT_FLOAT32;
                    int64_t cd[1] = {C};
                    frt_value in[3] = {frt_test_value(dt, rank, dims, f64 ? (void *)x : (void *)xf),
                                       frt_test_value(v & 4 ? FRT_INT32 : FRT_INT64, rank - 1, tdims,
                                                      v & 4 ? (void *)t32 : (void *)t64),
                                       frt_test_value(dt, 1, cd, f64 ? (void *)w : (void *)wf)};
                    frt_value out[2];
                    frt_test_op t = {.op_type = sce ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss",
                                     .opset = 13, .attrs = at, .n_attrs = has_ii ? 2 : 1, .inputs = in,
                                     .n_in = use_w ? 3 : 2, .n_out = sce ? 2 : 1};
                    frt_status st = frt_test_run_op(&t, out, NULL);
                    CHECK_MSG(st == FRT_OK, "%s: %s", t.op_type, frt_last_error());
                    if (ii_mode == 2) t64[0] = 0, t32[0] = 0;
                    if (st) continue;
                    int64_t tt[64];
                    for (int64_t i = 0; i < nt; i++) tt[i] = t64[i];
                    if (ii_mode == 2) tt[0] = -1;
                    ref_loss(sce ? lp : x, tt, use_w ? w : NULL, N, C, D, has_ii, ii, red, yref);
                    int64_t ny = red == 0 ? nt : 1;
                    CHECK(out[0].numel == ny && out[0].rank == (red == 0 ? rank - 1 : 0));
                    int ok = 1;
                    for (int64_t i = 0; i < ny; i++) {
                        double y = frt_ld_f64(dt, out[0].data, i);
                        if (!(fabs(y - yref[i]) <= (f64 ? 1e-12 : 1e-5) * (1 + fabs(yref[i])))) ok = 0;
                    }
                    if (sce)
                        for (int64_t i = 0; i < nx; i++)
                            if (fabs(frt_ld_f64(dt, out[1].data, i) - lp[i]) > (f64 ? 1e-12 : 1e-5)) ok = 0;
                    CHECK_MSG(ok, "%s rank %d red %s w %d ii %d f64 %d", t.op_type, rank, RED[red],
                              use_w, ii_mode, f64);
                    free(out[0].data);
                    if (sce) free(out[1].data);
                }
    }
    /* SCE without the log_prob output */
    {
        float x[6] = {1, 2, 3, -1, 0, 4};
        int64_t t[2] = {2, 0}, d[2] = {2, 3}, n2 = 2;
        frt_value in[2] = {frt_test_value(FRT_FLOAT32, 2, d, x), frt_test_value(FRT_INT64, 1, &n2, t)};
        frt_value out;
        frt_test_op op = {.op_type = "SoftmaxCrossEntropyLoss", .opset = 13, .inputs = in, .n_in = 2,
                          .n_out = 1};
        CHECK_OK(frt_test_run_op(&op, &out, NULL));
        if (out.data) {
            double l0 = -(3 - log(exp(1) + exp(2) + exp(3))), l1 = -(-1 - log(exp(-1) + 1 + exp(4)));
            CHECK(fabs(((float *)out.data)[0] - (l0 + l1) / 2) < 1e-5);
            free(out.data);
        }
    }
}

static void test_bad(void) {
    float x[6] = {0};
    int64_t d[2] = {2, 3}, n2 = 2, t[2] = {0, 3}, d3[1] = {3};
    frt_value in[3] = {frt_test_value(FRT_FLOAT32, 2, d, x), frt_test_value(FRT_INT64, 1, &n2, t),
                       frt_test_value(FRT_FLOAT32, 1, d3, x)};
    frt_value out;
    frt_test_op op = {.op_type = "NegativeLogLikelihoodLoss", .opset = 13, .inputs = in, .n_in = 2,
                      .n_out = 1};
    CHECK(frt_test_run_op(&op, &out, NULL) == FRT_ERR_RUNTIME); /* target 3 with C = 3 */
    CHECK(err_has("target 3"));
    t[1] = -2;
    CHECK(frt_test_run_op(&op, &out, NULL) == FRT_ERR_RUNTIME);
    frt_onnx_attr ii = frt_test_attr_int("ignore_index", -2);
    op.attrs = &ii;
    op.n_attrs = 1;
    CHECK_OK(frt_test_run_op(&op, &out, NULL)); /* ignored now */
    free(out.data);
    frt_onnx_attr bad = frt_test_attr_string("reduction", "max");
    op.attrs = &bad;
    CHECK(frt_test_run_op(&op, &out, NULL) == FRT_ERR_UNSUPPORTED);
    op.n_attrs = 0;
    int64_t n3 = 3;
    in[1] = frt_test_value(FRT_INT64, 1, &n3, t); /* N mismatch */
    CHECK(frt_test_run_op(&op, &out, NULL) == FRT_ERR_SHAPE);
    in[1] = frt_test_value(FRT_INT64, 1, &n2, t);
    int64_t d4[1] = {4};
    in[2] = frt_test_value(FRT_FLOAT32, 1, d4, x); /* weight not [C] */
    op.n_in = 3;
    CHECK(frt_test_run_op(&op, &out, NULL) == FRT_ERR_SHAPE);
    in[1] = frt_test_value(FRT_FLOAT32, 1, &n2, x); /* float target */
    op.n_in = 2;
    CHECK(frt_test_run_op(&op, &out, NULL) == FRT_ERR_UNSUPPORTED);
}

int main(void) {
    test_losses();
    test_bad();
    TEST_MAIN_END();
}
