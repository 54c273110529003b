/* Relu Clip Sigmoid Tanh Softmax through infer -> select -> kernel, against naive references:
 * odd sizes, NaN/inf, the host tier's SIMD loops vs portable, threads, unknown dims at select, Clip in both opset forms
 * (attributes; constant / run-time / absent bound inputs), Softmax in both opset semantics and
 * every axis, and error paths. Sigmoid/Tanh accuracy is measured over a dense sweep. */
#include <float.h>
#include <stdint.h>

#include "op_harness.h"
#include "ops/dtype_util.h"
#include "ops/x86/simd_elementwise.h"
#include "test_util.h"

typedef struct cfg {
    int64_t opset;
    const frt_onnx_attr *attrs;
    size_t n_attrs;
    unsigned absent, cmask;
    int unknown, threads, portable;
} cfg;

static frt_status run_op(const char *op, cfg c, frt_value *in, int n_in, frt_value *out,
                         const char **kn) {
    frt_test_op t = {0};
    t.op_type = op;
    t.opset = c.opset;
    t.attrs = c.attrs;
    t.n_attrs = c.n_attrs;
    t.inputs = in;
    t.n_in = n_in;
    t.absent_mask = c.absent;
    t.const_mask = c.cmask;
    t.unknown_dims = c.unknown;
    t.n_threads = c.threads;
    t.n_out = 1;
    if (c.portable) t.isa = FRT_TEST_ISA(FRT_ISA_PORTABLE);
    return frt_test_run_op(&t, out, kn);
}

/* Runs a 1-input float op on x[n] (shape [n]) and returns malloc'ed output or NULL. */
static float *run_unary(const char *op, cfg c, const float *x, int64_t n, const char **kn) {
    frt_value in = frt_test_value(FRT_FLOAT32, 1, &n, (void *)x), out;
    frt_status st = run_op(op, c, &in, 1, &out, kn);
    CHECK_MSG(st == FRT_OK, "%s: %s", op, frt_last_error());
    return st ? NULL : out.data;
}

static const int64_t SIZES[] = {1, 7, 8, 9, 33, 1001, 70001};
#define NSIZES (sizeof SIZES / sizeof SIZES[0])

static float *special_data(int64_t n, unsigned seed) {
    float *x = malloc((size_t)n * 4);
    t_fill(x, (size_t)n, seed);
    for (int64_t i = 0; i < n; i++) x[i] *= 6.0f;
    const float sp[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-40f, -1e-40f, FLT_MAX};
    for (int64_t i = 0; i < n && i < 8; i++) x[(i * 37) % n] = sp[i];
    return x;
}

/* bitwise equality (NaN payloads included) */
static int same_bits(const float *a, const float *b, int64_t n) {
    return memcmp(a, b, (size_t)n * 4) == 0;
}

static void test_relu(void) {
    for (size_t si = 0; si < NSIZES; si++) {
        int64_t n = SIZES[si];
        float *x = special_data(n, (unsigned)n), *ref = malloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++) ref[i] = x[i] < 0 ? 0.0f : x[i]; /* NaN stays */
        for (int v = 0; v < 4; v++) {
            cfg c = {.unknown = v & 1, .threads = 2, .portable = v >> 1};
            const char *kn = "";
            float *y = run_unary("Relu", c, x, n, &kn);
            if (y) CHECK_MSG(same_bits(y, ref, n), "relu n=%lld %s", (long long)n, kn);
            free(y);
        }
        free(x);
        free(ref);
    }
    /* integer Relu */
    int64_t a[5] = {-3, 0, 5, INT64_MIN, INT64_MAX}, want[5] = {0, 0, 5, 0, INT64_MAX}, n = 5;
    frt_value in = frt_test_value(FRT_INT64, 1, &n, a), out;
    cfg c = {0};
    CHECK_OK(run_op("Relu", c, &in, 1, &out, NULL));
    if (out.data) {
        CHECK(memcmp(out.data, want, sizeof want) == 0);
        free(out.data);
    }
    int32_t a32[3] = {-3, 4, INT32_MIN}, w32[3] = {0, 4, 0};
    in = frt_test_value(FRT_INT32, 1, &(int64_t){3}, a32);
    CHECK_OK(run_op("Relu", c, &in, 1, &out, NULL));
    if (out.data) {
        CHECK(memcmp(out.data, w32, sizeof w32) == 0);
        free(out.data);
    }
    /* the other dtypes: int8, int16, float64, float16 */
    int8_t a8[4] = {-128, -1, 0, 127}, w8[4] = {0, 0, 0, 127};
    in = frt_test_value(FRT_INT8, 1, &(int64_t){4}, a8);
    CHECK_OK(run_op("Relu", c, &in, 1, &out, NULL));
    if (out.data) {
        CHECK(memcmp(out.data, w8, sizeof w8) == 0);
        free(out.data);
    }
    int16_t a16[3] = {-300, 5, INT16_MIN}, w16[3] = {0, 5, 0};
    in = frt_test_value(FRT_INT16, 1, &(int64_t){3}, a16);
    CHECK_OK(run_op("Relu", c, &in, 1, &out, NULL));
    if (out.data) {
        CHECK(memcmp(out.data, w16, sizeof w16) == 0);
        free(out.data);
    }
    double d[3] = {-2.5, 1e300, NAN};
    in = frt_test_value(FRT_FLOAT64, 1, &(int64_t){3}, d);
    CHECK_OK(run_op("Relu", c, &in, 1, &out, NULL));
    if (out.data) {
        double *y = out.data;
        CHECK(y[0] == 0 && y[1] == 1e300 && isnan(y[2]));
        free(out.data);
    }
    uint16_t h[2] = {0xc000 /* -2 */, 0x3c00 /* 1 */};
    in = frt_test_value(FRT_FLOAT16, 1, &(int64_t){2}, h);
    CHECK_OK(run_op("Relu", c, &in, 1, &out, NULL));
    if (out.data) {
        uint16_t *y = out.data;
        CHECK(y[0] == 0 && y[1] == 0x3c00);
        free(out.data);
    }
    /* unsupported dtype */
    uint8_t b[2] = {0};
    in = frt_test_value(FRT_BOOL, 1, &(int64_t){2}, b);
    CHECK(run_op("Relu", c, &in, 1, &out, NULL) == FRT_ERR_UNSUPPORTED);
}

static float clipf(float v, float lo, float hi) {
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

static void check_clip_f32(const char *what, cfg c, frt_value *in, int n_in, const float *x,
                           int64_t n, float lo, float hi) {
    frt_value out;
    const char *kn = "";
    frt_status st = run_op("Clip", c, in, n_in, &out, &kn);
    CHECK_MSG(st == FRT_OK, "%s: %s", what, frt_last_error());
    if (st) return;
    int ok = 1;
    for (int64_t i = 0; i < n; i++) {
        float r = clipf(x[i], lo, hi), y = ((float *)out.data)[i];
        if (!(r == y || (isnan(r) && isnan(y)))) ok = 0;
    }
    CHECK_MSG(ok, "clip %s n=%lld kernel %s", what, (long long)n, kn);
    free(out.data);
}

static void test_clip(void) {
    for (size_t si = 0; si < NSIZES; si++) {
        int64_t n = SIZES[si];
        float *x = special_data(n, 11u + (unsigned)n);
        for (int v = 0; v < 4; v++) {
            int unknown = v & 1, portable = v >> 1;
            frt_value in[3];
            /* opset 6: attributes */
            frt_onnx_attr at[2] = {frt_test_attr_float("min", -1.5f), frt_test_attr_float("max", 2.0f)};
            in[0] = frt_test_value(FRT_FLOAT32, 1, &n, x);
            cfg c = {.opset = 6, .attrs = at, .n_attrs = 2, .unknown = unknown, .threads = 2,
                     .portable = portable};
            check_clip_f32("attr both", c, in, 1, x, n, -1.5f, 2.0f);
            c.attrs = at + 1;
            c.n_attrs = 1;
            check_clip_f32("attr max", c, in, 1, x, n, -INFINITY, 2.0f);
            c.attrs = at;
            check_clip_f32("attr min", c, in, 1, x, n, -1.5f, INFINITY);
            c.n_attrs = 0;
            check_clip_f32("attr none", c, in, 1, x, n, -INFINITY, INFINITY);
            /* opset 13: inputs, constant / run time / absent */
            float lo = -0.75f, hi = 0.5f, zero = 0.0f;
            int64_t d0 = 0;
            in[1] = frt_test_value(FRT_FLOAT32, 0, &d0, &lo);
            in[2] = frt_test_value(FRT_FLOAT32, 0, &d0, &hi);
            for (unsigned cm = 0; cm < 8; cm += 2) {
                cfg c13 = {.opset = 13, .cmask = cm, .unknown = unknown, .threads = 2,
                           .portable = portable};
                check_clip_f32("inputs both", c13, in, 3, x, n, lo, hi);
                c13.absent = 2;
                check_clip_f32("inputs max", c13, in, 3, x, n, -INFINITY, hi);
                c13.absent = 4;
                check_clip_f32("inputs min", c13, in, 3, x, n, lo, INFINITY);
                check_clip_f32("inputs min only (2 inputs)", c13, in, 2, x, n, lo, INFINITY);
                c13.absent = 6;
                check_clip_f32("inputs none", c13, in, 3, x, n, -INFINITY, INFINITY);
                check_clip_f32("one input", c13, in, 1, x, n, -INFINITY, INFINITY);
                /* min > max: everything is max */
                c13.absent = 0;
                frt_value sw[3] = {in[0], in[2], in[1]};
                check_clip_f32("min > max", c13, sw, 3, x, n, hi, lo);
                /* Clip(0, none) is Relu */
                frt_value rz[3] = {in[0], frt_test_value(FRT_FLOAT32, 0, &d0, &zero), in[2]};
                c13.absent = 4;
                check_clip_f32("relu-like", c13, rz, 3, x, n, 0.0f, INFINITY);
            }
        }
        free(x);
    }
    /* kernel names */
    {
        float x[3] = {1, 2, 3}, zero = 0;
        int64_t n = 3, d0 = 0;
        frt_value in[3] = {frt_test_value(FRT_FLOAT32, 1, &n, x),
                           frt_test_value(FRT_FLOAT32, 0, &d0, &zero),
                           frt_test_value(FRT_FLOAT32, 0, &d0, &zero)};
        frt_value out;
        const char *kn = "";
        cfg c = {.opset = 13, .cmask = 2, .absent = 4, .portable = 1};
        CHECK_OK(run_op("Clip", c, in, 3, &out, &kn));
        CHECK_MSG(strcmp(kn, "clip_f32_relu") == 0, "%s", kn);
        free(out.data);
        c.absent = 0;
        CHECK_OK(run_op("Clip", c, in, 3, &out, &kn));
        CHECK_MSG(strcmp(kn, "clip_f32") == 0, "%s", kn);
        free(out.data);
    }
    /* integer Clip, constant and run-time bounds */
    {
        int64_t x[6] = {-10, -2, 0, 3, 9, INT64_MIN}, lo = -2, hi = 5, n = 6, d0 = 0;
        int64_t want[6] = {-2, -2, 0, 3, 5, -2};
        frt_value in[3] = {frt_test_value(FRT_INT64, 1, &n, x), frt_test_value(FRT_INT64, 0, &d0, &lo),
                           frt_test_value(FRT_INT64, 0, &d0, &hi)};
        for (unsigned cm = 0; cm < 8; cm += 2) {
            cfg c = {.opset = 13, .cmask = cm};
            frt_value out;
            CHECK_OK(run_op("Clip", c, in, 3, &out, NULL));
            if (out.data) {
                CHECK(memcmp(out.data, want, sizeof want) == 0);
                free(out.data);
            }
        }
        int32_t x32[4] = {-100, 0, 7, 100}, lo32 = -5, w32[4] = {-5, 0, 7, 100};
        frt_value in32[2] = {frt_test_value(FRT_INT32, 1, &(int64_t){4}, x32),
                             frt_test_value(FRT_INT32, 0, &d0, &lo32)};
        cfg c = {.opset = 12};
        frt_value out;
        CHECK_OK(run_op("Clip", c, in32, 2, &out, NULL));
        if (out.data) {
            CHECK(memcmp(out.data, w32, sizeof w32) == 0);
            free(out.data);
        }
    }
    /* int8 / uint8 / uint64 / float64 Clip: constant, run-time and absent bounds */
    for (unsigned cm = 0; cm < 8; cm += 2) {
        int8_t x8[6] = {-128, -5, 0, 3, 9, 127}, lo8 = -4, hi8 = 5, w8[6] = {-4, -4, 0, 3, 5, 5};
        int8_t w8min[6] = {-4, -4, 0, 3, 9, 127};
        int64_t n = 6, d0 = 0;
        frt_value in[3] = {frt_test_value(FRT_INT8, 1, &n, x8), frt_test_value(FRT_INT8, 0, &d0, &lo8),
                           frt_test_value(FRT_INT8, 0, &d0, &hi8)}, out;
        cfg c = {.opset = 13, .cmask = cm};
        CHECK_OK(run_op("Clip", c, in, 3, &out, NULL));
        if (out.data) {
            CHECK(memcmp(out.data, w8, sizeof w8) == 0);
            free(out.data);
        }
        c.absent = 4;
        CHECK_OK(run_op("Clip", c, in, 3, &out, NULL));
        if (out.data) {
            CHECK(memcmp(out.data, w8min, sizeof w8min) == 0);
            free(out.data);
        }
        uint64_t xu[3] = {1, 10, UINT64_MAX}, lou = 2, hiu = 7, wu[3] = {2, 7, 7};
        frt_value inu[3] = {frt_test_value(FRT_UINT64, 1, &(int64_t){3}, xu),
                            frt_test_value(FRT_UINT64, 0, &d0, &lou),
                            frt_test_value(FRT_UINT64, 0, &d0, &hiu)};
        c.absent = 0;
        CHECK_OK(run_op("Clip", c, inu, 3, &out, NULL));
        if (out.data) {
            CHECK(memcmp(out.data, wu, sizeof wu) == 0);
            free(out.data);
        }
        double xd[4] = {-1e300, 0.5, 7, NAN}, lod = -1, hid = 2;
        frt_value ind[3] = {frt_test_value(FRT_FLOAT64, 1, &(int64_t){4}, xd),
                            frt_test_value(FRT_FLOAT64, 0, &d0, &lod),
                            frt_test_value(FRT_FLOAT64, 0, &d0, &hid)};
        CHECK_OK(run_op("Clip", c, ind, 3, &out, NULL));
        if (out.data) {
            double *y = out.data;
            CHECK(y[0] == -1 && y[1] == 0.5 && y[2] == 2 && isnan(y[3]));
            free(out.data);
        }
    }
    /* errors */
    {
        float x[3] = {1, 2, 3}, b2[2] = {0, 1};
        int64_t n = 3, d0 = 0, d2 = 2, ib = 0;
        frt_value out;
        cfg c = {.opset = 13, .cmask = 2};
        frt_value bad_dt[2] = {frt_test_value(FRT_FLOAT32, 1, &n, x),
                               frt_test_value(FRT_INT64, 0, &d0, &ib)};
        CHECK(run_op("Clip", c, bad_dt, 2, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(strstr(frt_last_error(), "dtype") != NULL);
        frt_value bad_n[2] = {frt_test_value(FRT_FLOAT32, 1, &n, x),
                              frt_test_value(FRT_FLOAT32, 1, &d2, b2)};
        CHECK(run_op("Clip", c, bad_n, 2, &out, NULL) == FRT_ERR_SHAPE);
        c.cmask = 0;
        c.unknown = 1; /* bound's size unknown at load: rejected at run-time infer */
        CHECK(run_op("Clip", c, bad_n, 2, &out, NULL) == FRT_ERR_SHAPE);
        cfg c6 = {.opset = 6};
        frt_value i64in[1] = {frt_test_value(FRT_INT64, 1, &n, &ib)};
        CHECK(run_op("Clip", c6, i64in, 1, &out, NULL) == FRT_ERR_UNSUPPORTED);
        double xd6[3] = {-5, 0.5, 9};
        frt_onnx_attr mm[2] = {frt_test_attr_float("min", -1.0f), frt_test_attr_float("max", 2.0f)};
        cfg c6a = {.opset = 6, .attrs = mm, .n_attrs = 2};
        frt_value d6[1] = {frt_test_value(FRT_FLOAT64, 1, &n, xd6)};
        CHECK_OK(run_op("Clip", c6a, d6, 1, &out, NULL)); /* float64 with attributes */
        if (out.data) {
            const double *y = out.data;
            CHECK(y[0] == -1 && y[1] == 0.5 && y[2] == 2);
            free(out.data);
        }
        CHECK(run_op("Clip", c6, bad_n, 2, &out, NULL) != FRT_OK); /* inputs before opset 11 */
    }
}

/* Max relative error (with a tiny absolute floor for denormal results) of op over a sweep. */
static void check_transcendental(const char *op, double (*ref)(double), int portable) {
    int64_t n = 0;
    const int64_t cap = 700000;
    float *x = malloc((size_t)cap * 4);
    for (double v = -110.0; v <= 110.0 && n < cap - 64; v += 0.00037) x[n++] = (float)v;
    for (float v = 1e-30f; v < 1.0f && n < cap - 64; v *= 1.7f) {
        x[n++] = v;
        x[n++] = -v;
    }
    const float sp[] = {0.0f, -0.0f, 1e-40f, -1e-40f, FLT_MAX, -FLT_MAX, 0.625f, -0.625f,
                        0.62499994f, 9.0f, 10.0f, -88.0f, -103.9f, -104.0f, 88.0f, 20.0f};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) x[n++] = sp[i];
    cfg c = {.portable = portable, .threads = 2};
    const char *kn = "";
    float *y = run_unary(op, c, x, n, &kn);
    if (!y) {
        free(x);
        return;
    }
    double worst = 0;
    int64_t wi = 0;
    for (int64_t i = 0; i < n; i++) {
        double r = ref((double)x[i]);
        double err = fabs((double)y[i] - r) / (fabs(r) + 1e-37);
        if (fabs((double)y[i] - r) <= 3e-45) err = 0; /* denormal results: 2 ulp absolute */
        if (!(err <= worst)) {
            worst = err;
            wi = i;
        }
    }
    printf("  %s (%s): max rel error %.3g at x=%.9g over %lld points\n", op, kn, worst,
           (double)x[wi], (long long)n);
    CHECK_MSG(worst < 1e-6, "%s %s: rel error %g at x=%.9g (got %.9g)", op, kn, worst,
              (double)x[wi], (double)y[wi]);
    free(y);
    /* NaN and infinities */
    float s[5] = {NAN, INFINITY, -INFINITY, -NAN, 0.0f};
    float *z = run_unary(op, c, s, 5, &kn);
    if (z) {
        CHECK(isnan(z[0]) && isnan(z[3]));
        CHECK((float)ref(INFINITY) == z[1] && (float)ref(-INFINITY) == z[2]);
        CHECK((float)ref(0.0) == z[4]);
        free(z);
    }
    free(x);
}

static double sigmoid_ref(double x) { return 1.0 / (1.0 + exp(-x)); }

static void test_sigmoid_tanh(void) {
    check_transcendental("Sigmoid", sigmoid_ref, 0);
    check_transcendental("Sigmoid", sigmoid_ref, 1);
    check_transcendental("Tanh", tanh, 0);
    check_transcendental("Tanh", tanh, 1);
    /* odd sizes, in both versions, through select with unknown dims; AVX2 close to portable */
    for (size_t si = 0; si < NSIZES; si++) {
        int64_t n = SIZES[si];
        float *x = malloc((size_t)n * 4);
        t_fill(x, (size_t)n, 3u + (unsigned)n);
        for (int64_t i = 0; i < n; i++) x[i] *= 12.0f;
        for (int op = 0; op < 2; op++) {
            const char *name = op ? "Tanh" : "Sigmoid";
            cfg a = {.unknown = 1, .threads = 2}, p = {.portable = 1};
            float *ya = run_unary(name, a, x, n, NULL), *yp = run_unary(name, p, x, n, NULL);
            if (ya && yp) CHECK_MSG(t_close(ya, yp, (size_t)n, 0, 5e-7f), "%s n=%lld", name,
                                    (long long)n);
            free(ya);
            free(yp);
        }
        free(x);
    }
    float d = 0;
    frt_value out, in = frt_test_value(FRT_INT32, 1, &(int64_t){1}, &d);
    cfg c = {0};
    CHECK(run_op("Sigmoid", c, &in, 1, &out, NULL) == FRT_ERR_UNSUPPORTED);
    CHECK(run_op("Tanh", c, &in, 1, &out, NULL) == FRT_ERR_UNSUPPORTED);
}

static int sm_mode; /* 0 Softmax, 1 LogSoftmax, 2 Hardmax */

/* Softmax (LogSoftmax, Hardmax) reference in double over [outer, A, inner]. */
static void softmax_ref(const float *x, float *y, int64_t outer, int64_t a, int64_t inner) {
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < inner; j++) {
            const float *xb = x + o * a * inner + j;
            float *yb = y + o * a * inner + j;
            double m = -INFINITY, s = 0;
            for (int64_t k = 0; k < a; k++) m = fmax(m, xb[k * inner]);
            for (int64_t k = 0; k < a; k++) s += exp(xb[k * inner] - m);
            for (int64_t k = 0; k < a; k++) {
                double d = xb[k * inner] - m;
                yb[k * inner] = (float)(sm_mode == 1 ? d - log(s) : exp(d) / s);
            }
            if (sm_mode == 2) { /* Hardmax: 1 at the first maximum */
                int64_t arg = 0;
                for (int64_t k = 1; k < a; k++)
                    if (xb[k * inner] > xb[arg * inner]) arg = k;
                for (int64_t k = 0; k < a; k++) yb[k * inner] = k == arg ? 1.0f : 0.0f;
            }
        }
}

static const char *const SM_OPS[3] = {"Softmax", "LogSoftmax", "Hardmax"};

static void check_softmax(int64_t opset, int rank, const int64_t *dims, int has_axis, int64_t axis,
                          float scale) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    float *x = malloc((size_t)n * 4 + 4), *ref = malloc((size_t)n * 4 + 4);
    t_fill(x, (size_t)n, 17u + (unsigned)n);
    for (int64_t i = 0; i < n; i++) x[i] = x[i] * scale + (scale > 100 ? 1000.0f : 0.0f);
    bool legacy = opset < 13;
    int64_t ax = has_axis ? axis : legacy ? 1 : -1;
    if (ax < 0) ax += rank;
    int64_t outer = 1, a = 1, inner = 1;
    for (int i = 0; i < ax; i++) outer *= dims[i];
    if (legacy) {
        for (int i = (int)ax; i < rank; i++) a *= dims[i];
    } else {
        a = dims[ax];
        for (int i = (int)ax + 1; i < rank; i++) inner *= dims[i];
    }
    softmax_ref(x, ref, outer, a, inner);
    frt_onnx_attr at = frt_test_attr_int("axis", axis);
    float *first = NULL;
    for (int v = 0; v < 6; v++) {
        cfg c = {.opset = opset, .attrs = &at, .n_attrs = has_axis ? 1 : 0, .unknown = v & 1,
                 .portable = (v >> 1) & 1, .threads = v >= 4 ? 2 : 1};
        frt_value in = frt_test_value(FRT_FLOAT32, rank, dims, x), out;
        const char *kn = "";
        frt_status st = run_op(SM_OPS[sm_mode], c, &in, 1, &out, &kn);
        CHECK_MSG(st == FRT_OK, "softmax: %s", frt_last_error());
        if (st) continue;
        CHECK_MSG(t_close(out.data, ref, (size_t)n, 2e-7f, 2e-6f),
                  "%s opset %lld axis %lld rank %d n %lld kernel %s", SM_OPS[sm_mode], (long long)opset,
                  (long long)axis, rank, (long long)n, kn);
        (void)SM_OPS;
        if (v == 0) first = out.data;
        else {
            if (first) CHECK(t_close(out.data, first, (size_t)n, 1e-7f, 1e-6f));
            free(out.data);
        }
    }
    free(first);
    free(x);
    free(ref);
}

static void test_softmax(void) {
    int64_t d4[4] = {2, 3, 4, 5}, d2[2] = {3, 1001}, d1[1] = {33}, dw[3] = {2, 3, 300};
    int64_t big[2] = {64, 2003}, bigs[3] = {4, 50, 403}, one[3] = {5, 1, 7};
    for (sm_mode = 0; sm_mode < 3; sm_mode++) {
    /* legacy: flatten at axis */
    for (int64_t ax = -4; ax <= 4; ax++) check_softmax(11, 4, d4, 1, ax, 3.0f);
    check_softmax(11, 4, d4, 0, 0, 3.0f); /* default axis 1 */
    check_softmax(1, 2, d2, 0, 0, 3.0f);
    check_softmax(11, 1, d1, 1, 0, 3.0f);
    check_softmax(11, 1, d1, 0, 0, 3.0f); /* default axis 1 on rank 1: rows of one element */
    /* opset 13: one axis */
    for (int64_t ax = -4; ax <= 3; ax++) check_softmax(13, 4, d4, 1, ax, 3.0f);
    check_softmax(13, 4, d4, 0, 0, 3.0f);
    check_softmax(13, 1, d1, 0, 0, 3.0f);
    check_softmax(13, 2, d2, 1, 1, 3.0f);
    check_softmax(13, 3, dw, 1, 1, 3.0f);  /* inner 300: two lane blocks */
    check_softmax(13, 3, dw, 1, 0, 3.0f);
    check_softmax(13, 3, one, 1, 0, 3.0f); /* trailing 1s after axis... */
    check_softmax(13, 3, one, 1, 1, 3.0f); /* axis of size 1 */
    check_softmax(13, 2, big, 1, -1, 3.0f); /* threaded rows */
    check_softmax(13, 3, bigs, 1, 1, 3.0f); /* threaded strided */
    check_softmax(13, 2, d2, 1, 1, 500.0f); /* large logits: stable */
    check_softmax(11, 2, d2, 1, 1, 500.0f);
    }
    sm_mode = 0;
    /* float64 / float16 through the double path */
    for (int mode = 0; mode < 3; mode++) {
        double xd[6] = {1, 2, 3, -1, 700, 699}, want[6];
        for (int r = 0; r < 2; r++) {
            double m = fmax(xd[3 * r], fmax(xd[3 * r + 1], xd[3 * r + 2])), s = 0;
            for (int k = 0; k < 3; k++) s += exp(xd[3 * r + k] - m);
            for (int k = 0; k < 3; k++) {
                double d = xd[3 * r + k] - m;
                want[3 * r + k] = mode == 0 ? exp(d) / s : mode == 1 ? d - log(s) : d == 0;
            }
        }
        int64_t d2x3[2] = {2, 3};
        frt_value in = frt_test_value(FRT_FLOAT64, 2, d2x3, xd), out;
        cfg c = {.opset = 13};
        CHECK_OK(run_op(SM_OPS[mode], c, &in, 1, &out, NULL));
        if (!out.data) continue;
        for (int i = 0; i < 6; i++)
            CHECK_MSG(fabs(((double *)out.data)[i] - want[i]) <= 1e-15 * (1 + fabs(want[i])),
                      "%s f64 %d: %g vs %g", SM_OPS[mode], i, ((double *)out.data)[i], want[i]);
        free(out.data);
        uint16_t xh[6];
        for (int i = 0; i < 6; i++) xh[i] = frt_float_to_half((float)xd[i] * 0.01f);
        in = frt_test_value(FRT_FLOAT16, 2, d2x3, xh);
        CHECK_OK(run_op(SM_OPS[mode], c, &in, 1, &out, NULL));
        if (out.data) free(out.data);
    }
    /* Hardmax: the first of equal maxima; Hardmax opset 11 coerces to 2-D */
    {
        float x[6] = {3, 1, 3, 2, 5, 5};
        int64_t d[2] = {2, 3};
        frt_value in = frt_test_value(FRT_FLOAT32, 2, d, x), out;
        cfg c = {.opset = 13};
        CHECK_OK(run_op("Hardmax", c, &in, 1, &out, NULL));
        if (out.data) {
            const float w[6] = {1, 0, 0, 0, 1, 0};
            CHECK(memcmp(out.data, w, sizeof w) == 0);
            free(out.data);
        }
        frt_onnx_attr at = frt_test_attr_int("axis", 0);
        cfg c11 = {.opset = 11, .attrs = &at, .n_attrs = 1};
        CHECK_OK(run_op("Hardmax", c11, &in, 1, &out, NULL));
        if (out.data) {
            const float w[6] = {0, 0, 0, 0, 1, 0};
            CHECK(memcmp(out.data, w, sizeof w) == 0);
            free(out.data);
        }
    }

    /* kernel names */
    {
        float x[120] = {0};
        frt_value in = frt_test_value(FRT_FLOAT32, 4, d4, x), out;
        const char *kn = "";
        frt_onnx_attr at = frt_test_attr_int("axis", 1);
        cfg c = {.opset = 13, .attrs = &at, .n_attrs = 1, .portable = 1};
        CHECK_OK(run_op("Softmax", c, &in, 1, &out, &kn));
        CHECK_MSG(strcmp(kn, "softmax_f32_strided") == 0, "%s", kn);
        free(out.data);
        c.n_attrs = 0;
        CHECK_OK(run_op("Softmax", c, &in, 1, &out, &kn));
        CHECK_MSG(strcmp(kn, "softmax_f32_rows") == 0, "%s", kn);
        free(out.data);
        c.opset = 12;
        CHECK_OK(run_op("Softmax", c, &in, 1, &out, &kn));
        CHECK_MSG(strcmp(kn, "softmax_f32_2d") == 0, "%s", kn);
        free(out.data);
    }
    /* NaN in a row gives NaN in that row only; -inf entries give 0 */
    {
        float x[8] = {1, NAN, 2, 3, 1, -INFINITY, 2, 3};
        int64_t d[2] = {2, 4};
        for (int p = 0; p < 2; p++) {
            frt_value in = frt_test_value(FRT_FLOAT32, 2, d, x), out;
            cfg c = {.opset = 13, .portable = p};
            CHECK_OK(run_op("Softmax", c, &in, 1, &out, NULL));
            if (!out.data) continue;
            float *y = out.data;
            CHECK(isnan(y[0]) && isnan(y[1]) && isnan(y[3]));
            CHECK(y[5] == 0.0f && fabsf(y[4] + y[6] + y[7] - 1.0f) < 1e-6f);
            free(y);
        }
    }
    /* errors */
    {
        float x[120] = {0};
        int32_t xi[4] = {0};
        frt_value in = frt_test_value(FRT_FLOAT32, 4, d4, x), out;
        frt_onnx_attr at = frt_test_attr_int("axis", 4);
        cfg c = {.opset = 13, .attrs = &at, .n_attrs = 1};
        CHECK(run_op("Softmax", c, &in, 1, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(strstr(frt_last_error(), "axis") != NULL);
        at = frt_test_attr_int("axis", -5);
        CHECK(run_op("Softmax", c, &in, 1, &out, NULL) == FRT_ERR_SHAPE);
        c.opset = 11;
        CHECK(run_op("Softmax", c, &in, 1, &out, NULL) == FRT_ERR_SHAPE);
        frt_value ii = frt_test_value(FRT_INT32, 1, &(int64_t){4}, xi);
        cfg c2 = {0};
        CHECK(run_op("Softmax", c2, &ii, 1, &out, NULL) == FRT_ERR_UNSUPPORTED);
    }
}

/* Every float kernel declares FRT_K_INPLACE and gives the same result when out aliases in[0]. */
static void test_inplace(void) {
    const char *ops[] = {"Relu", "Sigmoid", "Tanh", "Softmax", "Clip"};
    for (size_t oi = 0; oi < 5; oi++)
        for (int portable = 0; portable < 2; portable++) {
            int64_t d[2] = {3, 37};
            float x[111], ref[111];
            t_fill(x, 111, 9);
            frt_value in = frt_test_value(FRT_FLOAT32, 2, d, x), out;
            frt_onnx_attr at[2] = {frt_test_attr_float("min", -0.5f), frt_test_attr_float("max", 0.5f)};
            cfg c = {.opset = 13, .portable = portable};
            if (oi == 4) {
                c.opset = 6;
                c.attrs = at;
                c.n_attrs = 2;
            }
            CHECK_OK(run_op(ops[oi], c, &in, 1, &out, NULL));
            if (!out.data) continue;
            memcpy(ref, out.data, sizeof ref);
            free(out.data);
            const frt_op_def *def = frt_op_find("", ops[oi]);
            int32_t ids_in[1] = {0}, ids_out[1] = {0};
            frt_node node = {.name = "n", .op_type = ops[oi], .domain = "", .n_in = 1, .n_out = 1,
                             .in = ids_in, .out = ids_out, .opset = c.opset, .attrs = c.attrs,
                             .n_attrs = c.n_attrs};
            frt_value vals[1] = {in}, outv = {0};
            frt_value *ip[1] = {&vals[0]}, *op[1] = {&outv};
            frt_op_ctx ctx = {&node, c.opset, 1, 1, ip, op, NULL, FRT_ISA_PORTABLE};
            CHECK_OK(def->infer(&ctx));
            frt_arena ar;
            frt_arena_init(&ar);
            ctx.arena = &ar;
            frt_kernel k = {0};
            ctx.isa = portable ? FRT_ISA_PORTABLE : frt_cpu_tier();
            CHECK_OK(def->select(&ctx, &k));
            CHECK(k.flags & FRT_K_INPLACE);
            frt_step s = {.k = k, .in = ids_in, .out = ids_out, .n_in = 1, .n_out = 1, .ir = &node};
            frt_exec ex = {.values = vals};
            CHECK_OK(k.fn(&s, &ex));
            CHECK_MSG(memcmp(x, ref, sizeof ref) == 0, "in place %s", ops[oi]);
            frt_arena_free(&ar);
        }
}

static void test_neg(void) {
    float xf[37], yf[37];
    t_fill(xf, 37, 9);
    int64_t xi[5] = {0, 1, -7, INT64_MAX, INT64_MIN};
    int64_t d37[1] = {37}, d5[1] = {5};
    frt_value in = frt_test_value(FRT_FLOAT32, 1, d37, xf), out;
    frt_test_op op = {.op_type = "Neg", .inputs = &in, .n_in = 1, .n_out = 1};
    CHECK_OK(frt_test_run_op(&op, &out, NULL));
    for (int i = 0; i < 37; i++) yf[i] = -xf[i];
    CHECK(out.data && memcmp(out.data, yf, sizeof yf) == 0);
    free(out.data);
    in = frt_test_value(FRT_INT64, 1, d5, xi);
    CHECK_OK(frt_test_run_op(&op, &out, NULL));
    const int64_t *o = out.data;
    CHECK(o && o[0] == 0 && o[1] == -1 && o[2] == 7 && o[3] == -INT64_MAX && o[4] == INT64_MIN);
    free(out.data);
}

int main(void) {
    test_neg();
    test_relu();
    test_clip();
    test_sigmoid_tanh();
    test_softmax();
    test_inplace();
    TEST_MAIN_END();
}
