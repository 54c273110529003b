/* BatchNormalization (inference) against the formula, on ranks 2..5. */
#include <stdint.h>

#include "op_harness.h"
#include "test_util.h"

static int run_bn(int rank, const int64_t *xd, unsigned const_mask, float eps, int unknown,
                  frt_act act, int threads, const char **kname) {
    int64_t C = xd[1], n = 1, S = 1;
    for (int i = 0; i < rank; i++) n *= xd[i];
    for (int i = 2; i < rank; i++) S *= xd[i];
    float *X = malloc((size_t)n * 4 + 4), *R = malloc((size_t)n * 4 + 4);
    float *P[4];
    for (int i = 0; i < 4; i++) {
        P[i] = malloc((size_t)C * 4 + 4);
        t_fill(P[i], (size_t)C, 31u * (unsigned)(i + 1));
    }
    for (int64_t c = 0; c < C; c++) P[3][c] = fabsf(P[3][c]) + 0.01f; /* var > 0 */
    t_fill(X, (size_t)n, 5u + (unsigned)n);
    for (int64_t i = 0; i < n; i++) {
        int64_t c = (i / S) % C;
        double y = (double)P[0][c] * ((double)X[i] - P[2][c]) / sqrt((double)P[3][c] + eps) +
                   P[1][c];
        if (act.kind == FRT_ACT_RELU) y = y > 0 ? y : 0;
        if (act.kind == FRT_ACT_CLIP) y = y < act.lo ? act.lo : y > act.hi ? act.hi : y;
        R[i] = (float)y;
    }
    int64_t cd[1] = {C};
    frt_value in[5] = {frt_test_value(FRT_FLOAT32, rank, xd, X)};
    for (int i = 0; i < 4; i++) in[1 + i] = frt_test_value(FRT_FLOAT32, 1, cd, P[i]);
    frt_onnx_attr attrs[1] = {frt_test_attr_float("epsilon", eps)};
    frt_test_op t = {0};
    t.op_type = "BatchNormalization";
    t.opset = 15;
    t.attrs = attrs;
    t.n_attrs = 1;
    t.inputs = in;
    t.n_in = 5;
    t.n_out = 1;
    t.const_mask = const_mask;
    t.unknown_dims = unknown;
    t.act = act;
    t.n_threads = threads;
    frt_value out;
    frt_status st = frt_test_run_op(&t, &out, kname);
    int ok = 0;
    if (st) {
        fprintf(stderr, "  BN failed: %s\n", frt_last_error());
    } else {
        ok = out.rank == rank;
        for (int i = 0; ok && i < rank; i++) ok = out.dims[i] == xd[i];
        ok = ok && t_close(out.data, R, (size_t)n, 1e-5f, 1e-5f);
        free(out.data);
    }
    if (!ok) fprintf(stderr, "  BN rank %d C=%lld const=%u\n", rank, (long long)C, const_mask);
    free(X);
    free(R);
    for (int i = 0; i < 4; i++) free(P[i]);
    return ok;
}

static void test_bn(void) {
    static const int64_t shapes[][5] = {{3, 7}, {2, 5, 9}, {2, 3, 5, 7}, {1, 4, 3, 2, 5},
                                        {1, 1, 1, 1}, {2, 17, 33}, {0, 3, 4}};
    static const int ranks[] = {2, 3, 4, 5, 4, 3, 3};
    frt_act none = {FRT_ACT_NONE, 0, 0};
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++)
        for (unsigned cm = 0; cm < 4; cm++) {
            /* cm: 0 none constant, 1 all params constant, 2 some constant, 3 all + unknown X */
            unsigned mask = cm == 0 ? 0 : cm == 2 ? (2 | 8) : 0x1e;
            const char *name = NULL;
            CHECK(run_bn(ranks[i], shapes[i], mask, 1e-5f, cm == 3, none, 0, &name));
            if (cm == 1 || cm == 3) CHECK(name && strcmp(name, "batchnorm_f32_folded") == 0);
            if (cm == 0) CHECK(name && strcmp(name, "batchnorm_f32") == 0);
        }
    int64_t big[4] = {2, 32, 40, 41};
    CHECK(run_bn(4, big, 0x1e, 1e-3f, 0, none, 2, NULL));
    CHECK(run_bn(4, big, 0, 1e-3f, 0, (frt_act){FRT_ACT_RELU, 0, INFINITY}, 2, NULL));
    int64_t s3[3] = {3, 6, 11};
    CHECK(run_bn(3, s3, 0x1e, 0.5f, 0, (frt_act){FRT_ACT_CLIP, -0.2f, 0.3f}, 0, NULL));
}

static frt_status run_raw(frt_value *in, int n_in, const frt_onnx_attr *attrs, size_t na, int n_out,
                          int64_t opset) {
    frt_test_op t = {0};
    t.op_type = "BatchNormalization";
    t.opset = opset;
    t.attrs = attrs;
    t.n_attrs = na;
    t.inputs = in;
    t.n_in = n_in;
    t.n_out = n_out;
    t.const_mask = 0x1e;
    frt_value out[5];
    frt_status st = frt_test_run_op(&t, out, NULL);
    if (st == FRT_OK)
        for (int i = 0; i < n_out; i++) free(out[i].data);
    return st;
}

/* training_mode = 1: batch statistics against a double reference, running stats outputs. */
static void test_bn_training(void) {
    int64_t xd[4] = {2, 3, 5, 3}, c3 = 3;
    float x[90], sc[3] = {0.5f, 2.0f, -1.0f}, b[3] = {0.1f, -0.2f, 0.3f};
    float mean[3] = {0.4f, -0.1f, 2.0f}, var[3] = {1.0f, 0.5f, 2.0f};
    t_fill(x, 90, 12);
    frt_value in[5] = {frt_test_value(FRT_FLOAT32, 4, xd, x), frt_test_value(FRT_FLOAT32, 1, &c3, sc),
                       frt_test_value(FRT_FLOAT32, 1, &c3, b), frt_test_value(FRT_FLOAT32, 1, &c3, mean),
                       frt_test_value(FRT_FLOAT32, 1, &c3, var)}, out[3];
    frt_onnx_attr at[3] = {frt_test_attr_int("training_mode", 1), frt_test_attr_float("momentum", 0.8f),
                           frt_test_attr_float("epsilon", 0.01f)};
    frt_test_op t = {.op_type = "BatchNormalization", .opset = 15, .attrs = at, .n_attrs = 3,
                     .inputs = in, .n_in = 5, .n_out = 3};
    CHECK_OK(frt_test_run_op(&t, out, NULL));
    if (!out[0].data) return;
    int bad = 0;
    for (int c = 0; c < 3; c++) {
        double m = 0, v = 0;
        for (int n = 0; n < 2; n++)
            for (int i = 0; i < 15; i++) m += x[(n * 3 + c) * 15 + i];
        m /= 30;
        for (int n = 0; n < 2; n++)
            for (int i = 0; i < 15; i++) v += (x[(n * 3 + c) * 15 + i] - m) * (x[(n * 3 + c) * 15 + i] - m);
        v /= 30;
        for (int n = 0; n < 2; n++)
            for (int i = 0; i < 15; i++) {
                int at_ = (n * 3 + c) * 15 + i;
                double r = sc[c] * (x[at_] - m) / sqrt(v + (double)0.01f) + b[c];
                if (fabs(((float *)out[0].data)[at_] - r) > 1e-5 * fabs(r) + 1e-6) bad++;
            }
        double rm = mean[c] * (double)0.8f + m * (1 - (double)0.8f);
        double rv = var[c] * (double)0.8f + v * (1 - (double)0.8f);
        if (fabs(((float *)out[1].data)[c] - rm) > 1e-6) bad++;
        if (fabs(((float *)out[2].data)[c] - rv) > 1e-6) bad++;
    }
    CHECK_MSG(!bad, "batchnorm training: %d bad", bad);
    for (int i = 0; i < 3; i++) free(out[i].data);
}

static void test_bn_errors(void) {
    float buf[64];
    for (int i = 0; i < 64; i++) buf[i] = 1.0f;
    int64_t xd[4] = {1, 3, 2, 2}, c3[1] = {3}, c4[1] = {4};
    frt_value in[5] = {frt_test_value(FRT_FLOAT32, 4, xd, buf)};
    for (int i = 1; i < 5; i++) in[i] = frt_test_value(FRT_FLOAT32, 1, c3, buf);
    CHECK(run_raw(in, 5, NULL, 0, 1, 15) == FRT_OK);
    frt_onnx_attr tm = frt_test_attr_int("training_mode", 1);
    CHECK(run_raw(in, 5, &tm, 1, 1, 15) == FRT_OK);
    CHECK(run_raw(in, 5, &tm, 1, 3, 15) == FRT_OK);
    CHECK(run_raw(in, 5, &tm, 1, 1, 9) == FRT_ERR_UNSUPPORTED); /* no training_mode before 14 */
    CHECK(strstr(frt_last_error(), "training_mode") != NULL);
    CHECK(run_raw(in, 5, NULL, 0, 3, 15) == FRT_ERR_UNSUPPORTED);
    frt_onnx_attr sp = frt_test_attr_int("spatial", 0);
    CHECK(run_raw(in, 5, &sp, 1, 1, 7) == FRT_ERR_UNSUPPORTED);
    /* wrong parameter size */
    in[3] = frt_test_value(FRT_FLOAT32, 1, c4, buf);
    CHECK(run_raw(in, 5, NULL, 0, 1, 15) == FRT_ERR_SHAPE);
    CHECK(strstr(frt_last_error(), "mean") != NULL);
    in[3] = frt_test_value(FRT_FLOAT32, 1, c3, buf);
    /* rank 1 X */
    in[0] = frt_test_value(FRT_FLOAT32, 1, c3, buf);
    CHECK(run_raw(in, 5, NULL, 0, 1, 15) == FRT_ERR_SHAPE);
    /* int X */
    int32_t ib[64] = {0};
    in[0] = frt_test_value(FRT_INT32, 4, xd, ib);
    CHECK(run_raw(in, 5, NULL, 0, 1, 15) == FRT_ERR_UNSUPPORTED);
    /* missing inputs */
    in[0] = frt_test_value(FRT_FLOAT32, 4, xd, buf);
    CHECK(run_raw(in, 3, NULL, 0, 1, 15) != FRT_OK);
}

int main(void) {
    test_bn();
    test_bn_errors();
    test_bn_training();
    TEST_MAIN_END();
}
