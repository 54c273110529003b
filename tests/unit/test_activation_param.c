/* LeakyRelu Elu Selu Celu HardSigmoid HardSwish Softplus Softsign Gelu Mish ThresholdedRelu
 * Shrink PRelu through infer -> select -> kernel, against naive double references: odd sizes,
 * NaN/inf, every ISA tier's loops vs the portable twins, threads, float64/float16 paths, PRelu
 * slope broadcasts, and error paths (dtype, attributes, broadcast). */
#include <float.h>
#include <stdint.h>

#include "onnx_build.h"
#include "op_harness.h"
#include "runtime/model.h"
#include "ops/dtype_util.h"
#include "ops/x86/simd_act.h"
#include "test_util.h"

static const double T_PI = 3.14159265358979323846;

typedef struct kcase {
    const char *op;
    int64_t opset;
    int kind;
    const char *a_name, *b_name;
    float a, b;      /* attribute values given; the reference uses them */
    float rtol, atol;
} kcase;

static const kcase CASES[] = {
    {"LeakyRelu", 16, FRT_ACTP_LEAKY, "alpha", NULL, 0.1f, 0, 1e-6f, 0},
    {"LeakyRelu", 6, FRT_ACTP_LEAKY, NULL, NULL, 0.01f, 0, 1e-6f, 0},
    {"Elu", 6, FRT_ACTP_ELU, "alpha", NULL, 2.0f, 0, 4e-6f, 1e-30f},
    {"Selu", 6, FRT_ACTP_SELU, "alpha", "gamma", 2.0f, 3.0f, 4e-6f, 1e-30f},
    {"Selu", 6, FRT_ACTP_SELU, NULL, NULL, 1.67326319217681884765625f,
     1.05070102214813232421875f, 4e-6f, 1e-30f},
    {"Celu", 12, FRT_ACTP_CELU, "alpha", NULL, 2.0f, 0, 4e-6f, 1e-30f},
    {"Celu", 12, FRT_ACTP_CELU, "alpha", NULL, -0.5f, 0, 4e-6f, 1e-30f},
    {"HardSigmoid", 6, FRT_ACTP_HARDSIGMOID, "alpha", "beta", 0.5f, 0.6f, 1e-6f, 2e-7f},
    {"HardSwish", 14, FRT_ACTP_HARDSWISH, NULL, NULL, 0, 0, 1e-6f, 2e-7f},
    {"Softplus", 1, FRT_ACTP_SOFTPLUS, NULL, NULL, 0, 0, 4e-6f, 1e-30f},
    {"Softsign", 1, FRT_ACTP_SOFTSIGN, NULL, NULL, 0, 0, 1e-6f, 0},
    {"Gelu", 20, FRT_ACTP_GELU, NULL, NULL, 0, 0, 3e-5f, 1e-30f},
    /* e^(-2u) for |u| up to ~60: float rounding of the argument alone is ~4e-6 relative */
    {"Gelu", 20, FRT_ACTP_GELU_TANH, NULL, NULL, 0, 0, 2e-5f, 1e-30f},
    {"Mish", 18, FRT_ACTP_MISH, NULL, NULL, 0, 0, 4e-6f, 1e-30f},
    {"ThresholdedRelu", 10, FRT_ACTP_THRESHOLDED, "alpha", NULL, 0.75f, 0, 0, 0},
    {"ThresholdedRelu", 10, FRT_ACTP_THRESHOLDED, NULL, NULL, 1.0f, 0, 0, 0},
    {"Shrink", 9, FRT_ACTP_SHRINK, "lambd", "bias", 1.5f, 1.25f, 1e-6f, 0},
    {"Shrink", 9, FRT_ACTP_SHRINK, NULL, NULL, 0.5f, 0.0f, 1e-6f, 0},
    {"Silu", 1, FRT_ACTP_SILU, NULL, NULL, 0, 0, 2e-6f, 1e-30f},
};
#define NCASES (sizeof CASES / sizeof CASES[0])

/* Naive double reference, written from the ONNX formulas (not the kernels' rearrangements). */
static double ref(int kind, double x, double a, double b) {
    switch (kind) {
    case FRT_ACTP_LEAKY: return x >= 0 || isnan(x) ? x : a * x;
    case FRT_ACTP_ELU: return x >= 0 || isnan(x) ? x : a * (exp(x) - 1);
    case FRT_ACTP_SELU: return x > 0 || isnan(x) ? b * x : b * (a * exp(x) - a);
    case FRT_ACTP_CELU: return isnan(x) ? x : fmax(0, x) + fmin(0, a * (exp(x / a) - 1));
    case FRT_ACTP_HARDSIGMOID: return isnan(x) ? x : fmax(0, fmin(1, a * x + b));
    case FRT_ACTP_HARDSWISH: return isnan(x) ? x : x * fmax(0, fmin(1, x / 6 + 0.5));
    case FRT_ACTP_SOFTPLUS: return x > 30 ? x : log1p(exp(x));
    case FRT_ACTP_SOFTSIGN: return x / (1 + fabs(x));
    case FRT_ACTP_GELU: return 0.5 * x * erfc(-x / sqrt(2.0)); /* 1 + erf(x/sqrt2), stably */
    case FRT_ACTP_GELU_TANH:
        /* 0.5 x (1 + tanh(u)) without the cancellation of 1 + tanh(u) for u << 0 */
        return x / (1 + exp(-2 * sqrt(2 / T_PI) * (x + 0.044715 * x * x * x)));
    case FRT_ACTP_MISH: return x * tanh(x > 30 ? x : log1p(exp(x)));
    case FRT_ACTP_THRESHOLDED: return x > a || isnan(x) ? x : 0;
    case FRT_ACTP_SHRINK: return x < -a ? x + b : x > a ? x - b : 0;
    case FRT_ACTP_SILU: return x * (1 / (1 + exp(-x)));
    }
    return 0;
}

static int close_elem(float y, double r, float rtol, float atol) {
    if (isnan(r)) return isnan(y);
    if (isinf((float)r)) return y == (float)r; /* beyond the float range: +-inf */
    return fabs((double)y - r) <= rtol * fabs(r) + atol + 1e-45;
}

static frt_status run1(const kcase *k, frt_value *in, int n_in, frt_value *out, const char **kn,
                       int isa, int threads, int unknown) {
    frt_onnx_attr at[2];
    size_t na = 0;
    if (k->a_name) at[na++] = frt_test_attr_float(k->a_name, k->a);
    if (k->b_name) at[na++] = frt_test_attr_float(k->b_name, k->b);
    if (k->kind == FRT_ACTP_GELU_TANH) at[na++] = frt_test_attr_string("approximate", "tanh");
    frt_test_op t = {0};
    t.op_type = k->op;
    t.opset = k->opset;
    t.attrs = at;
    t.n_attrs = na;
    t.inputs = in;
    t.n_in = n_in;
    t.n_out = 1;
    t.n_threads = threads;
    t.unknown_dims = unknown;
    t.isa = isa;
    return frt_test_run_op(&t, out, kn);
}

static float *make_data(int64_t n, unsigned seed) {
    float *x = malloc((size_t)n * 4);
    t_fill(x, (size_t)n, seed);
    for (int64_t i = 0; i < n; i++) x[i] *= 12.0f;
    const float sp[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-40f, -1e-40f, 1e-5f, -1e-5f,
                        -25.0f, 25.0f, 90.0f, -90.0f, 1.5f, -1.5f, 0.75f, 1.0f};
    for (int64_t i = 0; i < n && i < (int64_t)(sizeof sp / sizeof sp[0]); i++)
        x[(i * 37) % n] = sp[i];
    return x;
}

static void test_float32(void) {
    static const int64_t sizes[] = {1, 7, 8, 9, 17, 33, 1001, 70001};
    for (size_t ci = 0; ci < NCASES; ci++) {
        const kcase *k = &CASES[ci];
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            int64_t n = sizes[si];
            float *x = make_data(n, (unsigned)(n * 31 + ci));
            for (int tier = 0; tier <= FRT_ISA_AVX512; tier++) {
                frt_value in = frt_test_value(FRT_FLOAT32, 1, &n, x), out;
                const char *kn = "";
                frt_status st = run1(k, &in, 1, &out, &kn, FRT_TEST_ISA(tier), 2, tier & 1);
                CHECK_MSG(st == FRT_OK, "%s: %s", k->op, frt_last_error());
                if (st) continue;
                const float *y = out.data;
                int bad = 0;
                for (int64_t i = 0; i < n && bad < 3; i++) {
                    double r = ref(k->kind, x[i], k->a, k->b);
                    if (!close_elem(y[i], r, k->rtol, k->atol)) {
                        bad++;
                        fprintf(stderr, "  %s (%s) x=%.9g y=%.9g ref=%.9g\n", k->op, kn, x[i],
                                y[i], r);
                    }
                }
                CHECK_MSG(!bad, "%s kind %d n=%lld kernel %s", k->op, k->kind, (long long)n, kn);
                free(out.data);
            }
            free(x);
        }
    }
}

/* Every tier's vector loop against the portable twin, on a dense sweep with in-place calls. */
static void test_twins(void) {
    const frt_actp_variant *p = frt_actp_variant_get(FRT_ISA_PORTABLE);
    size_t n = 20011;
    float *x = malloc(n * 4), *a = malloc(n * 4), *b = malloc(n * 4);
    for (size_t i = 0; i < n; i++) x[i] = -40.0f + 80.0f * (float)i / (float)n;
    for (int tier = FRT_ISA_AVX2; tier <= (int)frt_cpu_tier(); tier++) {
        const frt_actp_variant *v = frt_actp_variant_get((frt_isa)tier);
        CHECK(v->isa == (frt_isa)tier);
        for (size_t ci = 0; ci < NCASES; ci++) {
            const kcase *k = &CASES[ci];
            const float prm[4] = {k->a, k->b, 0, 0};
            p->pointwise(k->kind, x, a, n, prm);
            memcpy(b, x, n * 4);
            v->pointwise(k->kind, b, b, n, prm); /* in place */
            int bad = 0;
            for (size_t i = 0; i < n; i++)
                if (!close_elem(b[i], a[i], k->rtol, k->atol)) {
                    if (bad++ < 3)
                        fprintf(stderr, "  twin %s%s x=%.9g %.9g vs %.9g\n", k->op, v->suffix,
                                x[i], b[i], a[i]);
                }
            CHECK_MSG(!bad, "%s kind %d tier %s", k->op, k->kind, v->suffix);
        }
        /* logsoftmax rows */
        for (size_t len = 1; len < 40; len += 3) {
            size_t rows = n / len;
            p->logsoftmax_rows(x, a, rows, len);
            v->logsoftmax_rows(x, b, rows, len);
            CHECK_MSG(t_close(b, a, rows * len, 2e-5f, 1e-6f), "logsoftmax len %zu", len);
        }
    }
    free(x);
    free(a);
    free(b);
}

static void test_other_dtypes(void) {
    int64_t n = 9;
    double xd[9] = {-3, -1, -0.25, 0, 0.25, 1, 3, NAN, -INFINITY};
    for (size_t ci = 0; ci < NCASES; ci++) {
        const kcase *k = &CASES[ci];
        frt_value in = frt_test_value(FRT_FLOAT64, 1, &n, xd), out;
        frt_status st = run1(k, &in, 1, &out, NULL, 0, 0, 0);
        CHECK_MSG(st == FRT_OK, "%s f64: %s", k->op, frt_last_error());
        if (st) continue;
        for (int i = 0; i < 9; i++) {
            double r = ref(k->kind, xd[i], k->a, k->b), y = ((double *)out.data)[i];
            CHECK_MSG((isnan(r) && isnan(y)) || r == y || fabs(y - r) <= 1e-12 * fabs(r) + 1e-300,
                      "%s f64 x=%g y=%.17g ref=%.17g", k->op, xd[i], y, r);
        }
        free(out.data);
        /* float16: rounded double result */
        uint16_t xh[9], *yh;
        for (int i = 0; i < 9; i++) xh[i] = frt_float_to_half((float)xd[i]);
        in = frt_test_value(FRT_FLOAT16, 1, &n, xh);
        st = run1(k, &in, 1, &out, NULL, 0, 0, 0);
        CHECK_MSG(st == FRT_OK, "%s f16: %s", k->op, frt_last_error());
        if (st) continue;
        yh = out.data;
        for (int i = 0; i < 9; i++) {
            double r = ref(k->kind, frt_half_to_float(xh[i]), k->a, k->b);
            float y = frt_half_to_float(yh[i]);
            CHECK_MSG((isnan(r) && isnan(y)) || y == r || fabs(y - r) <= 1e-3 * fabs(r) + 1e-7,
                      "%s f16 x=%g y=%g ref=%g", k->op, xd[i], y, r);
        }
        free(out.data);
    }
    /* Shrink on int32: x +- bias, rounded toward zero */
    int32_t xi[5] = {-5, -1, 0, 1, 5}, want[5] = {-3, 0, 0, 0, 3};
    kcase sk = {"Shrink", 9, FRT_ACTP_SHRINK, "lambd", "bias", 1.5f, 2.0f, 0, 0};
    n = 5;
    frt_value in = frt_test_value(FRT_INT32, 1, &n, xi), out;
    CHECK_OK(run1(&sk, &in, 1, &out, NULL, 0, 0, 0));
    if (out.data) {
        CHECK(memcmp(out.data, want, sizeof want) == 0);
        free(out.data);
    }
}

static void test_errors(void) {
    int64_t n = 3;
    int32_t xi[3] = {0};
    float xf[3] = {0};
    kcase lk = CASES[0];
    frt_value in = frt_test_value(FRT_INT32, 1, &n, xi), out;
    CHECK(run1(&lk, &in, 1, &out, NULL, 0, 0, 0) == FRT_ERR_UNSUPPORTED);
    CHECK(err_has("int32"));
    kcase ck = {"Celu", 12, FRT_ACTP_CELU, "alpha", NULL, 0.0f, 0, 0, 0};
    in = frt_test_value(FRT_FLOAT32, 1, &n, xf);
    CHECK(run1(&ck, &in, 1, &out, NULL, 0, 0, 0) == FRT_ERR_UNSUPPORTED);
    CHECK(err_has("alpha"));
    frt_onnx_attr at = frt_test_attr_string("approximate", "erf");
    frt_test_op t = {.op_type = "Gelu", .opset = 20, .attrs = &at, .n_attrs = 1, .inputs = &in,
                     .n_in = 1, .n_out = 1};
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED);
    CHECK(err_has("approximate"));
}

static void test_prelu(void) {
    static const int64_t xd[4] = {2, 3, 5, 7};
    static const struct { int r; int64_t d[4]; } slopes[] = {
        {1, {1}}, {1, {7}}, {3, {3, 1, 1}}, {4, {2, 3, 5, 7}}, {2, {5, 1}}, {0, {0}}, {2, {5, 7}},
        {4, {1, 3, 1, 7}}};
    const int64_t nx = numel(xd, 4);
    float *x = malloc((size_t)nx * 4);
    t_fill(x, (size_t)nx, 5);
    for (size_t si = 0; si < sizeof slopes / sizeof slopes[0]; si++) {
        int sr = slopes[si].r;
        const int64_t *sd = slopes[si].d;
        int64_t ns = numel(sd, sr);
        float *s = malloc((size_t)ns * 4);
        t_fill(s, (size_t)ns, 9 + (unsigned)si);
        for (unsigned cm = 0; cm < 4; cm += 2) {
            frt_value in[2] = {frt_test_value(FRT_FLOAT32, 4, xd, x),
                               frt_test_value(FRT_FLOAT32, sr, sd, s)}, out;
            frt_test_op t = {.op_type = "PRelu", .opset = 16, .inputs = in, .n_in = 2, .n_out = 1,
                             .const_mask = cm};
            CHECK_OK(frt_test_run_op(&t, &out, NULL));
            if (!out.data) continue;
            int bad = 0;
            for (int64_t i = 0; i < nx; i++) {
                int64_t idx[4], rem = i, so = 0, st = 1;
                for (int d = 3; d >= 0; d--) {
                    idx[d] = rem % xd[d];
                    rem /= xd[d];
                }
                for (int d = sr - 1; d >= 0; d--) {
                    int xdim = 4 - sr + d;
                    so += (sd[d] == 1 ? 0 : idx[xdim]) * st;
                    st *= sd[d];
                }
                float r = x[i] < 0 ? s[so] * x[i] : x[i];
                if (((float *)out.data)[i] != r) bad++;
            }
            CHECK_MSG(!bad, "prelu slope case %zu", si);
            free(out.data);
        }
        free(s);
    }
    /* bad broadcast, dtype mismatch */
    float s3[3] = {0};
    int64_t d3 = 4;
    frt_value in[2] = {frt_test_value(FRT_FLOAT32, 4, xd, x), frt_test_value(FRT_FLOAT32, 1, &d3, s3)},
              out;
    frt_test_op t = {.op_type = "PRelu", .opset = 16, .inputs = in, .n_in = 2, .n_out = 1};
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    double sd[1] = {0};
    in[1] = frt_test_value(FRT_FLOAT64, 1, &(int64_t){1}, sd);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED);
    /* float64 with a [C,1,1] slope */
    double xdd[2 * 3 * 2] = {-1, 2, -3, 4, -5, 6, -7, 8, -9, 10, -11, 12}, sdd[3] = {0.5, 2, -1};
    int64_t dx3[3] = {2, 3, 2}, ds3[2] = {3, 1};
    in[0] = frt_test_value(FRT_FLOAT64, 3, dx3, xdd);
    in[1] = frt_test_value(FRT_FLOAT64, 2, ds3, sdd);
    CHECK_OK(frt_test_run_op(&t, &out, NULL));
    if (out.data) {
        const double want[12] = {-0.5, 2, -6, 4, 5, 6, -3.5, 8, -18, 10, 11, 12};
        CHECK(memcmp(out.data, want, sizeof want) == 0);
        free(out.data);
    }
    free(x);
}

/* The fusion pass turns S = Sigmoid(X), Y = Mul(X, S) (either operand order) into one
 * flatrt::Silu step, not when S has another reader; results match x sigmoid(x). */
static void check_silu_model(int swap, int extra_use) {
    ob_buf g = {0};
    int64_t xd[2] = {-1, 37};
    ob_buf vi = ob_vinfo("X", 1, 2, xd);
    ob_msg(&g, OB_INPUT, &vi);
    const char *si[] = {"X", NULL}, *so[] = {"S", NULL}, *mo[] = {"Y", NULL};
    const char *mi[] = {swap ? "S" : "X", swap ? "X" : "S", NULL};
    ob_buf n1 = ob_node("Sigmoid", NULL, "sig", si, so), n2 = ob_node("Mul", NULL, "mul", mi, mo);
    ob_msg(&g, OB_NODE, &n1);
    ob_msg(&g, OB_NODE, &n2);
    ob_buf yo = ob_vinfo("Y", 1, -1, NULL);
    ob_msg(&g, OB_OUTPUT, &yo);
    if (extra_use) {
        ob_buf s2 = ob_vinfo("S", 1, -1, NULL);
        ob_msg(&g, OB_OUTPUT, &s2);
    }
    ob_buf mb = ob_model(&g);
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer(mb.p, mb.n, NULL, NULL, &m));
    free(mb.p);
    if (!m) return;
    const frt_program *p = m->blocks[0].prog;
    int silu = 0;
    for (size_t i = 0; i < p->n_steps; i++)
        if (strncmp(p->steps[i].k.name, "silu_f32", 8) == 0) silu++;
    CHECK_MSG(p->n_steps == (extra_use ? 2u : 1u) && silu == !extra_use,
              "swap %d extra %d: %zu steps, %d silu", swap, extra_use, p->n_steps, silu);
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    float x[3 * 37];
    t_fill(x, 3 * 37, 99);
    for (int i = 0; i < 3 * 37; i++) x[i] *= 20.0f;
    frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 2, .shape = {3, 37}, .data = x,
                     .nbytes = sizeof x};
    const char *names[] = {"X"};
    frt_tensor out[2];
    if (rt) {
        CHECK_OK(frt_run(rt, names, &in, 1, out, extra_use ? 2 : 1, FRT_OUTPUTS_ALLOC));
        if (out[0].data) {
            int bad = 0;
            for (int i = 0; i < 3 * 37; i++) {
                double r = x[i] / (1 + exp(-(double)x[i]));
                if (!close_elem(((float *)out[0].data)[i], r, 2e-6f, 1e-30f)) bad++;
            }
            CHECK_MSG(!bad, "silu model values swap %d extra %d", swap, extra_use);
            frt_tensor_release(&out[0]);
            if (extra_use) frt_tensor_release(&out[1]);
        }
        frt_runtime_free(rt);
    }
    frt_model_free(m);
}

static void test_silu_fusion(void) {
    for (int swap = 0; swap < 2; swap++)
        for (int extra = 0; extra < 2; extra++) check_silu_model(swap, extra);
}

/* bias_rows (the GEMM epilogue: act(y + bias) + res over a strided block) of every tier against
 * a naive double reference and against the portable twin: odd widths (vector tails), no bias, no
 * residual, no activation, and a kind outside the specialized loops. */
static void test_bias_rows(void) {
    static const int kinds[] = {FRT_ACTP_COUNT, FRT_ACTP_GELU, FRT_ACTP_GELU_TANH, FRT_ACTP_SILU,
                                FRT_ACTP_ELU};
    const size_t m = 5, ldy = 45, ldr = 47;
    float y0[5 * 45], y[5 * 45], yp[5 * 45], bias[45], res[5 * 47];
    for (size_t i = 0; i < m * ldy; i++) y0[i] = -6.0f + 12.0f * (float)((i * 37) % 101) / 101.0f;
    for (size_t i = 0; i < 45; i++) bias[i] = 0.25f * (float)(i % 7) - 0.75f;
    for (size_t i = 0; i < m * ldr; i++) res[i] = 0.5f * (float)(i % 5) - 1.0f;
    const float prm[4] = {1.5f, 0, 0, 0};
    const frt_actp_variant *p = frt_actp_variant_get(FRT_ISA_PORTABLE);
    for (int tier = FRT_ISA_PORTABLE; tier <= (int)frt_cpu_tier(); tier++) {
        const frt_actp_variant *v = frt_actp_variant_get((frt_isa)tier);
        for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++)
            for (size_t n = 1; n <= 40; n += (n < 18 ? 1 : 7))
                for (int opt = 0; opt < 4; opt++) {
                    const int kind = kinds[ki];
                    const float *b = opt & 1 ? NULL : bias, *r = opt & 2 ? NULL : res;
                    memcpy(y, y0, sizeof y);
                    memcpy(yp, y0, sizeof y);
                    v->bias_rows(kind, y, ldy, m, n, b, r, ldr, prm);
                    p->bias_rows(kind, yp, ldy, m, n, b, r, ldr, prm);
                    int bad = 0;
                    for (size_t i = 0; i < m; i++)
                        for (size_t t = 0; t < ldy; t++) {
                            size_t o = i * ldy + t;
                            if (t >= n) { /* outside the block: untouched */
                                bad += y[o] != y0[o];
                                continue;
                            }
                            double x = (double)y0[o] + (b ? b[t] : 0.0);
                            double e = kind == FRT_ACTP_COUNT ? x : ref(kind, x, prm[0], 0);
                            e += r ? r[i * ldr + t] : 0.0;
                            /* the residual adds up to 1 in magnitude: absolute slack for it */
                            if (!close_elem(y[o], e, 3e-5f, 1e-6f) ||
                                !close_elem(y[o], yp[o], 3e-5f, 1e-6f)) {
                                if (bad++ < 3)
                                    fprintf(stderr, "  bias_rows%s kind %d n %zu opt %d: %.9g "
                                            "(portable %.9g, ref %.9g)\n", v->suffix, kind, n,
                                            opt, y[o], yp[o], e);
                            }
                        }
                    CHECK_MSG(!bad, "bias_rows%s kind %d n %zu opt %d", v->suffix, kind, n, opt);
                }
    }
}

/* SiLU over its whole clamped range: every tier's loop against the double reference on a dense
 * sweep of [-95, 95] (the clamps of e^-x at x = -89 / 87 and the overflow to +inf just below
 * x = -88.7 inside it) and the special values, in place. */
static void test_silu_range(void) {
    size_t n = 190001;
    float *x = malloc((n + 8) * 4), *y = malloc((n + 8) * 4);
    for (size_t i = 0; i < n; i++) x[i] = -95.0f + 190.0f * (float)i / (float)(n - 1);
    const float sp[8] = {-INFINITY, INFINITY, NAN, -88.72f, -88.7f, -87.0f, 87.0f, 89.0f};
    memcpy(x + n, sp, sizeof sp);
    for (int tier = FRT_ISA_PORTABLE; tier <= (int)frt_cpu_tier(); tier++) {
        const frt_actp_variant *v = frt_actp_variant_get((frt_isa)tier);
        const float prm[4] = {0};
        memcpy(y, x, (n + 8) * 4);
        v->pointwise(FRT_ACTP_SILU, y, y, n + 8, prm);
        int bad = 0;
        for (size_t i = 0; i < n + 8; i++)
            if (!close_elem(y[i], ref(FRT_ACTP_SILU, x[i], 0, 0), 2e-6f, 1e-30f) && bad++ < 3)
                fprintf(stderr, "  silu%s x=%.9g y=%.9g\n", v->suffix, x[i], y[i]);
        CHECK_MSG(!bad, "Silu over [-95, 95], tier %s: %d bad", v->suffix, bad);
    }
    free(x);
    free(y);
}

int main(void) {
    test_silu_fusion();
    test_float32();
    test_twins();
    test_silu_range();
    test_bias_rows();
    test_other_dtypes();
    test_errors();
    test_prelu();
    TEST_MAIN_END();
}
