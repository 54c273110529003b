/* DFT STFT Hann/Hamming/BlackmanWindow MelWeightMatrix through infer -> select -> kernel against
 * naive references: real and complex signals, every axis, dft_length padding and truncation
 * (constant and run-time), onesided, inverse round trips, windows of odd and even sizes, the mel
 * matrix of the ONNX example, and error paths (axis, sizes, dtypes, attributes). */
#include <stdint.h>

#include "op_harness.h"
#include "ops/dtype_util.h"
#include "test_util.h"

static const double T_PI = 3.14159265358979323846;

static frt_status run(const char *op, const frt_onnx_attr *at, size_t na, frt_value *in, int n_in,
                      unsigned absent, unsigned cmask, frt_value *out) {
    frt_test_op t = {0};
    t.op_type = op;
    t.opset = 17;
    t.attrs = at;
    t.n_attrs = na;
    t.inputs = in;
    t.n_in = n_in;
    t.absent_mask = absent;
    t.const_mask = cmask;
    t.n_out = 1;
    return frt_test_run_op(&t, out, NULL);
}

/* Naive DFT of n points of a complex sequence (re, im at stride st), len points available. */
static void naive_dft(const double *re, const double *im, int64_t st, int64_t len, int64_t n,
                      int inverse, double *ore, double *oim) {
    for (int64_t k = 0; k < n; k++) {
        double a = 0, b = 0;
        for (int64_t t = 0; t < n && t < len; t++) {
            double ang = (inverse ? 2 : -2) * T_PI * (double)k * (double)t / (double)n;
            a += re[t * st] * cos(ang) - im[t * st] * sin(ang);
            b += re[t * st] * sin(ang) + im[t * st] * cos(ang);
        }
        ore[k] = inverse ? a / (double)n : a;
        oim[k] = inverse ? b / (double)n : b;
    }
}

static void check_dft(int cplx, int axis, int64_t dft_len, int onesided, int inverse,
                      unsigned cmask) {
    int64_t d[4] = {2, 7, 6, cplx ? 2 : 1};
    int64_t nx = numel(d, 4);
    float x[2 * 7 * 6 * 2];
    t_fill(x, (size_t)nx, 40u + (unsigned)axis);
    int64_t len = d[axis], n = dft_len > 0 ? dft_len : len, nb = onesided ? n / 2 + 1 : n;
    frt_onnx_attr at[3] = {frt_test_attr_int("axis", axis), frt_test_attr_int("onesided", onesided),
                           frt_test_attr_int("inverse", inverse)};
    int64_t dl = dft_len, d0 = 0;
    frt_value in[2] = {frt_test_value(FRT_FLOAT32, 4, d, x), frt_test_value(FRT_INT64, 0, &d0, &dl)},
              out;
    frt_status st = run("DFT", at, 3, in, dft_len > 0 ? 2 : 1, 0, cmask, &out);
    CHECK_MSG(st == FRT_OK, "dft: %s", frt_last_error());
    if (st) return;
    CHECK(out.rank == 4 && out.dims[axis] == nb && out.dims[3] == 2);
    int64_t outer = axis == 1 ? 2 : 14, inner = axis == 1 ? 6 : 1;
    double re[16], im[16], ore[16], oim[16];
    int bad = 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t t = 0; t < len; t++) {
                int64_t at_ = ((o * len + t) * inner + i) * (cplx ? 2 : 1);
                re[t] = x[at_];
                im[t] = cplx ? x[at_ + 1] : 0;
            }
            naive_dft(re, im, 1, len, n, inverse, ore, oim);
            for (int64_t k = 0; k < nb; k++) {
                const float *y = (const float *)out.data + ((o * nb + k) * inner + i) * 2;
                if (fabs(y[0] - ore[k]) > 1e-5 + 1e-5 * fabs(ore[k]) ||
                    fabs(y[1] - oim[k]) > 1e-5 + 1e-5 * fabs(oim[k]))
                    bad++;
            }
        }
    CHECK_MSG(!bad, "dft cplx %d axis %d len %lld onesided %d inverse %d: %d bad", cplx, axis,
              (long long)dft_len, onesided, inverse, bad);
    free(out.data);
}

static void test_dft(void) {
    for (int cplx = 0; cplx < 2; cplx++)
        for (int axis = 1; axis <= 2; axis++)
            for (int inv = 0; inv < 2; inv++) {
                check_dft(cplx, axis, 0, 0, inv, 0);
                check_dft(cplx, axis, 9, 0, inv, 2);  /* zero-padded, constant dft_length */
                check_dft(cplx, axis, 5, 0, inv, 0);  /* truncated, run-time dft_length */
                if (!inv) check_dft(cplx, axis, 0, 1, 0, 0);
                if (!inv) check_dft(cplx, axis, 9, 1, 0, 2);
            }
    /* round trip: inverse(DFT(x)) == x, float64 */
    {
        int64_t d[3] = {1, 11, 2};
        double x[22], *y;
        for (int i = 0; i < 22; i++) x[i] = sin(i * 0.7) + i * 0.1;
        frt_value in = frt_test_value(FRT_FLOAT64, 3, d, x), out, back;
        CHECK_OK(run("DFT", NULL, 0, &in, 1, 0, 0, &out));
        frt_onnx_attr inv = frt_test_attr_int("inverse", 1);
        CHECK_OK(run("DFT", &inv, 1, &out, 1, 0, 0, &back));
        if (back.data) {
            y = back.data;
            int bad = 0;
            for (int i = 0; i < 22; i++)
                if (fabs(y[i] - x[i]) > 1e-12) bad++;
            CHECK_MSG(!bad, "dft round trip");
            free(back.data);
        }
        free(out.data);
    }
    /* errors */
    float x[12] = {0};
    int64_t d[3] = {1, 6, 2}, d0 = 0, zero = 0;
    frt_value in[2] = {frt_test_value(FRT_FLOAT32, 3, d, x), frt_test_value(FRT_INT64, 0, &d0, &zero)},
              out;
    frt_onnx_attr at = frt_test_attr_int("axis", 2);
    CHECK(run("DFT", &at, 1, in, 1, 0, 0, &out) == FRT_ERR_SHAPE); /* the complex dim */
    CHECK(run("DFT", NULL, 0, in, 2, 0, 2, &out) == FRT_ERR_SHAPE); /* dft_length 0 */
    frt_onnx_attr oi[2] = {frt_test_attr_int("onesided", 1), frt_test_attr_int("inverse", 1)};
    CHECK(run("DFT", oi, 2, in, 1, 0, 0, &out) == FRT_ERR_UNSUPPORTED);
    int64_t d3[3] = {1, 6, 3};
    in[0] = frt_test_value(FRT_FLOAT32, 3, d3, x);
    CHECK(run("DFT", NULL, 0, in, 1, 0, 0, &out) == FRT_ERR_SHAPE); /* last dim 3 */
    int32_t xi[12] = {0};
    in[0] = frt_test_value(FRT_INT32, 3, d, xi);
    CHECK(run("DFT", NULL, 0, in, 1, 0, 0, &out) == FRT_ERR_UNSUPPORTED);
}

static double win_ref(int kind, int64_t k, int64_t size, int periodic) {
    double N = (double)(periodic ? size : size - 1), t = N > 0 ? 2 * T_PI * (double)k / N : 0;
    return kind == 0 ? 0.5 - 0.5 * cos(t)
           : kind == 1 ? 0.54347826086956519 - 0.45652173913043481 * cos(t)
                       : 0.42 - 0.5 * cos(t) + 0.08 * cos(2 * t);
}

static void test_windows(void) {
    static const char *const ops[3] = {"HannWindow", "HammingWindow", "BlackmanWindow"};
    for (int kind = 0; kind < 3; kind++)
        for (int64_t size = 1; size <= 11; size += 3)
            for (int periodic = 0; periodic < 2; periodic++)
                for (unsigned cm = 0; cm < 2; cm++) {
                    int32_t sz = (int32_t)size;
                    int64_t d0 = 0;
                    frt_value in = frt_test_value(FRT_INT32, 0, &d0, &sz), out;
                    frt_onnx_attr at[2] = {frt_test_attr_int("periodic", periodic),
                                           frt_test_attr_int("output_datatype", FRT_FLOAT64)};
                    CHECK_OK(run(ops[kind], at, 2, &in, 1, 0, cm, &out));
                    if (!out.data) continue;
                    CHECK(out.dtype == FRT_FLOAT64 && out.rank == 1 && out.dims[0] == size);
                    int bad = 0;
                    for (int64_t k = 0; k < size; k++)
                        if (fabs(((double *)out.data)[k] - win_ref(kind, k, size, periodic)) > 1e-15)
                            bad++;
                    CHECK_MSG(!bad, "%s size %lld periodic %d", ops[kind], (long long)size, periodic);
                    free(out.data);
                }
    /* Hann, periodic, size 4: 0, 0.5, 1, 0.5 (float32 default) */
    int64_t four = 4, d0 = 0;
    frt_value in = frt_test_value(FRT_INT64, 0, &d0, &four), out;
    CHECK_OK(run("HannWindow", NULL, 0, &in, 1, 0, 1, &out));
    if (out.data) {
        const float *y = out.data;
        CHECK(out.dtype == FRT_FLOAT32 && fabsf(y[0]) < 1e-7f && fabsf(y[1] - 0.5f) < 1e-7f &&
              fabsf(y[2] - 1) < 1e-7f && fabsf(y[3] - 0.5f) < 1e-7f);
        free(out.data);
    }
    frt_onnx_attr bad_dt = frt_test_attr_int("output_datatype", FRT_INT32);
    CHECK(run("HannWindow", &bad_dt, 1, &in, 1, 0, 1, &out) == FRT_ERR_UNSUPPORTED);
    int64_t neg = -2;
    in = frt_test_value(FRT_INT64, 0, &d0, &neg);
    CHECK(run("HannWindow", NULL, 0, &in, 1, 0, 1, &out) == FRT_ERR_SHAPE);
    float f = 3;
    in = frt_test_value(FRT_FLOAT32, 0, &d0, &f);
    CHECK(run("HannWindow", NULL, 0, &in, 1, 0, 1, &out) == FRT_ERR_SHAPE);
}

static void check_stft(int with_window, int with_len, int onesided, int cplx, unsigned cmask) {
    int64_t d[3] = {2, 50, cplx ? 2 : 1}, d0 = 0, dw = 9, step = 7, flen = 9;
    float x[200], w[9];
    t_fill(x, (size_t)numel(d, 3), 77);
    for (int i = 0; i < 9; i++) w[i] = 0.5f + 0.5f * cosf((float)i);
    frt_onnx_attr at = frt_test_attr_int("onesided", onesided);
    frt_value in[4] = {frt_test_value(FRT_FLOAT32, 3, d, x), frt_test_value(FRT_INT64, 0, &d0, &step),
                       frt_test_value(FRT_FLOAT32, 1, &dw, w), frt_test_value(FRT_INT64, 0, &d0, &flen)},
              out;
    unsigned absent = (with_window ? 0 : 4) | (with_len ? 0 : 8);
    frt_status st = run("STFT", &at, 1, in, with_len ? 4 : 3, absent, cmask, &out);
    CHECK_MSG(st == FRT_OK, "stft: %s", frt_last_error());
    if (st) return;
    const int64_t F = (50 - 9) / 7 + 1, nb = onesided ? 5 : 9;
    CHECK(out.rank == 4 && out.dims[0] == 2 && out.dims[1] == F && out.dims[2] == nb);
    int bad = 0;
    for (int64_t b = 0; b < 2; b++)
        for (int64_t f = 0; f < F; f++) {
            double re[9], im[9], ore[9], oim[9];
            for (int t = 0; t < 9; t++) {
                int64_t at_ = (b * 50 + f * 7 + t) * (cplx ? 2 : 1);
                double wt = with_window ? w[t] : 1;
                re[t] = x[at_] * wt;
                im[t] = cplx ? x[at_ + 1] * wt : 0;
            }
            naive_dft(re, im, 1, 9, 9, 0, ore, oim);
            for (int64_t k = 0; k < nb; k++) {
                const float *y = (const float *)out.data + ((b * F + f) * nb + k) * 2;
                if (fabs(y[0] - ore[k]) > 1e-5 || fabs(y[1] - oim[k]) > 1e-5) bad++;
            }
        }
    CHECK_MSG(!bad, "stft window %d len %d onesided %d cplx %d: %d bad", with_window, with_len,
              onesided, cplx, bad);
    free(out.data);
}

static void test_stft(void) {
    for (int cplx = 0; cplx < 2; cplx++)
        for (int os = 0; os < 2; os++) {
            check_stft(1, 0, os, cplx, 0);
            check_stft(1, 1, os, cplx, 10);
            check_stft(0, 1, os, cplx, 0);
            check_stft(0, 1, os, cplx, 10);
        }
    /* window size != frame_length; frame longer than the signal; no window and no length */
    int64_t d[3] = {1, 8, 1}, d0 = 0, dw = 4, step = 2, flen = 5, big = 9;
    float x[8] = {0}, w[4] = {1, 1, 1, 1};
    frt_value in[4] = {frt_test_value(FRT_FLOAT32, 3, d, x), frt_test_value(FRT_INT64, 0, &d0, &step),
                       frt_test_value(FRT_FLOAT32, 1, &dw, w), frt_test_value(FRT_INT64, 0, &d0, &flen)},
              out;
    CHECK(run("STFT", NULL, 0, in, 4, 0, 10, &out) == FRT_ERR_SHAPE);
    in[3] = frt_test_value(FRT_INT64, 0, &d0, &big);
    CHECK(run("STFT", NULL, 0, in, 4, 4, 10, &out) == FRT_ERR_SHAPE);
    CHECK(run("STFT", NULL, 0, in, 2, 0, 2, &out) == FRT_ERR_SHAPE);
}

static void test_mel(void) {
    int32_t bins = 8, len = 16, rate = 8192;
    float lo = 0, hi = 4096;
    int64_t d0 = 0;
    for (unsigned cm = 0; cm < 32; cm += 31) {
        frt_value in[5] = {frt_test_value(FRT_INT32, 0, &d0, &bins), frt_test_value(FRT_INT32, 0, &d0, &len),
                           frt_test_value(FRT_INT32, 0, &d0, &rate), frt_test_value(FRT_FLOAT32, 0, &d0, &lo),
                           frt_test_value(FRT_FLOAT32, 0, &d0, &hi)}, out;
        CHECK_OK(run("MelWeightMatrix", NULL, 0, in, 5, 0, cm, &out));
        if (!out.data) continue;
        CHECK(out.rank == 2 && out.dims[0] == 9 && out.dims[1] == 8);
        /* the ONNX example's matrix: ones at (0,0) (0,1) (1,2) (1,3) (2,4) (3,5) (4,6) (5,7) */
        static const int ones[8][2] = {{0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}};
        float want[72] = {0};
        for (int i = 0; i < 8; i++) want[ones[i][0] * 8 + ones[i][1]] = 1;
        CHECK(memcmp(out.data, want, sizeof want) == 0);
        free(out.data);
    }
    /* a wider band: rows of each filter rise to 1 and fall back */
    int32_t b2 = 4, l2 = 64, r2 = 16000;
    float lo2 = 20, hi2 = 8000;
    frt_value in[5] = {frt_test_value(FRT_INT32, 0, &d0, &b2), frt_test_value(FRT_INT32, 0, &d0, &l2),
                       frt_test_value(FRT_INT32, 0, &d0, &r2), frt_test_value(FRT_FLOAT32, 0, &d0, &lo2),
                       frt_test_value(FRT_FLOAT32, 0, &d0, &hi2)}, out;
    CHECK_OK(run("MelWeightMatrix", NULL, 0, in, 5, 0, 31, &out));
    if (out.data) {
        const float *y = out.data;
        for (int m = 0; m < 4; m++) {
            float mx = 0;
            for (int j = 0; j < 33; j++) mx = fmaxf(mx, y[j * 4 + m]);
            CHECK_MSG(mx == 1.0f, "mel filter %d peak %g", m, mx);
        }
        free(out.data);
    }
    int32_t zero = 0;
    in[0] = frt_test_value(FRT_INT32, 0, &d0, &zero);
    CHECK(run("MelWeightMatrix", NULL, 0, in, 5, 0, 31, &out) == FRT_ERR_SHAPE);
}

int main(void) {
    test_dft();
    test_windows();
    test_stft();
    test_mel();
    TEST_MAIN_END();
}
