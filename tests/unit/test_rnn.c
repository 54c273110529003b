/* RNN, GRU and LSTM through the op harness against a naive double-precision reference written from
 * the ONNX equations: every direction, both layouts, sequence lengths (incl. 0 and T), initial
 * states, biases, peepholes, linear_before_reset, clip, input_forget, non-default activations,
 * constant and run-time weights, the portable loops and the host tier's; plus bad input. */
#include <stdint.h>

#include "op_harness.h"
#include "ops/cpu.h"
#include "ops/x86/rnn_simd.h"
#include "test_util.h"

enum { RNN = 0, GRU = 1, LSTM = 2 };
static const char *const op_names[] = {"RNN", "GRU", "LSTM"};

typedef struct acfg {
    const char *name;
    float alpha, beta;
} acfg;

typedef struct rcase {
    int op;
    int64_t T, B, I, H;
    int dir;           /* 0 forward, 1 reverse, 2 bidirectional */
    int layout;
    int has_b, has_lens, has_h0, has_c0, has_p;
    int lbr, input_forget;
    float clip;        /* 0: none */
    const char *acts[6]; /* NULL: defaults; else one per activation and direction */
    float alphas[6], betas[6];
    int n_alpha, n_beta;
    unsigned const_mask;
    int isa;           /* FRT_TEST_ISA(...) or 0 */
} rcase;

static double ref_act(const char *name, double x, double al, double be) {
    if (!strcmp(name, "Sigmoid")) return 1.0 / (1.0 + exp(-x));
    if (!strcmp(name, "Tanh")) return tanh(x);
    if (!strcmp(name, "Relu")) return x > 0 ? x : 0;
    if (!strcmp(name, "LeakyRelu")) return x >= 0 ? x : al * x;
    if (!strcmp(name, "HardSigmoid")) {
        double y = al * x + be;
        return y < 0 ? 0 : y > 1 ? 1 : y;
    }
    if (!strcmp(name, "Affine")) return al * x + be;
    if (!strcmp(name, "ScaledTanh")) return al * tanh(be * x);
    if (!strcmp(name, "Elu")) return x >= 0 ? x : al * (exp(x) - 1);
    if (!strcmp(name, "Softsign")) return x / (1 + fabs(x));
    if (!strcmp(name, "Softplus")) return log(1 + exp(x));
    if (!strcmp(name, "ThresholdedRelu")) return x > al ? x : 0;
    return NAN;
}

static int uses_alpha(const char *n) {
    return !strcmp(n, "LeakyRelu") || !strcmp(n, "HardSigmoid") || !strcmp(n, "Affine") ||
           !strcmp(n, "ScaledTanh") || !strcmp(n, "Elu") || !strcmp(n, "ThresholdedRelu");
}
static int uses_beta(const char *n) {
    return !strcmp(n, "HardSigmoid") || !strcmp(n, "Affine") || !strcmp(n, "ScaledTanh");
}

typedef struct racts {
    const char *name[2][3];
    double al[2][3], be[2][3];
} racts;

static void ref_acts(const rcase *c, racts *a) {
    static const char *const dflt[3][3] = {
        {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    int na = c->op + 1, D = c->dir == 2 ? 2 : 1, ia = 0, ib = 0;
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < na; k++) {
            const char *n = c->acts[0] ? c->acts[d * na + k] : dflt[c->op][k];
            if (c->acts[0] && D == 1 && d == 1) n = c->acts[k];
            a->name[d][k] = n;
            a->al[d][k] = !strcmp(n, "LeakyRelu") ? 0.01 : !strcmp(n, "HardSigmoid") ? 0.2 : 1.0;
            a->be[d][k] = !strcmp(n, "HardSigmoid") ? 0.5 : !strcmp(n, "Affine") ? 0.0 : 1.0;
            if (d < D && c->acts[0]) {
                if (uses_alpha(n) && ia < c->n_alpha) a->al[d][k] = c->alphas[ia++];
                if (uses_beta(n) && ib < c->n_beta) a->be[d][k] = c->betas[ib++];
            }
        }
}

static double clipd(const rcase *c, double v) {
    if (c->clip <= 0) return v;
    return v < -c->clip ? -c->clip : v > c->clip ? c->clip : v;
}

/* Reference. X, W, R, Bb, lens, h0, c0, P as the op's inputs (absent ones NULL). */
static void reference(const rcase *c, const float *X, const float *W, const float *R,
                      const float *Bb, const int32_t *lens, const float *h0, const float *c0,
                      const float *P, float *Y, float *Yh, float *Yc) {
    const int64_t T = c->T, B = c->B, I = c->I, H = c->H, G = c->op == LSTM ? 4 : c->op == GRU ? 3 : 1;
    const int D = c->dir == 2 ? 2 : 1;
    racts a;
    ref_acts(c, &a);
    double *h = calloc((size_t)H, sizeof(double)), *cc = calloc((size_t)H, sizeof(double));
    double *g = calloc((size_t)(G * H), sizeof(double)), *hn = calloc((size_t)H, sizeof(double));
    memset(Y, 0, (size_t)(T * D * B * H) * sizeof(float));
    for (int d = 0; d < D; d++) {
        int rev = c->dir == 1 || d == 1;
        const float *Wd = W + d * G * H * I, *Rd = R + d * G * H * H;
        for (int64_t b = 0; b < B; b++) {
            int64_t so = (c->layout ? b * D + d : d * B + b) * H;
            for (int64_t j = 0; j < H; j++) {
                h[j] = h0 ? h0[so + j] : 0;
                cc[j] = c0 ? c0[so + j] : 0;
            }
            int64_t L = lens ? lens[b] : T;
            for (int64_t s = 0; s < L; s++) {
                int64_t t = rev ? L - 1 - s : s;
                const float *xt = X + (c->layout ? b * T + t : t * B + b) * I;
                /* wx + wb for every gate row, and rh = R h + rb */
                for (int64_t r = 0; r < G * H; r++) {
                    double sx = 0, sh = 0;
                    for (int64_t k = 0; k < I; k++) sx += (double)Wd[r * I + k] * xt[k];
                    for (int64_t k = 0; k < H; k++) sh += (double)Rd[r * H + k] * h[k];
                    if (Bb) {
                        sx += Bb[d * 2 * G * H + r];
                        sh += Bb[d * 2 * G * H + G * H + r];
                    }
                    if (c->op == GRU && r >= 2 * H) {
                        /* lbr: hn = W x + Wbh, g = R h + Rbh; else g = W x + Wbh (R part below) */
                        if (c->lbr) {
                            hn[r - 2 * H] = sx;
                            g[r] = sh;
                        } else {
                            g[r] = sx;
                        }
                    } else {
                        g[r] = sx + sh;
                    }
                }
                const char *const *an = a.name[d];
                if (c->op == RNN) {
                    for (int64_t j = 0; j < H; j++)
                        h[j] = ref_act(an[0], clipd(c, g[j]), a.al[d][0], a.be[d][0]);
                } else if (c->op == GRU) {
                    double z[512], rr[512];
                    for (int64_t j = 0; j < H; j++) {
                        z[j] = ref_act(an[0], clipd(c, g[j]), a.al[d][0], a.be[d][0]);
                        rr[j] = ref_act(an[0], clipd(c, g[H + j]), a.al[d][0], a.be[d][0]);
                    }
                    double cand[512];
                    for (int64_t j = 0; j < H; j++) {
                        double v;
                        if (c->lbr) {
                            v = hn[j] + rr[j] * g[2 * H + j];
                        } else {
                            const int64_t r = 2 * H + j;
                            double sh = 0;
                            for (int64_t k = 0; k < H; k++) sh += (double)Rd[r * H + k] * rr[k] * h[k];
                            if (Bb) sh += Bb[d * 2 * G * H + G * H + r];
                            v = g[r] + sh;
                        }
                        cand[j] = ref_act(an[1], clipd(c, v), a.al[d][1], a.be[d][1]);
                    }
                    for (int64_t j = 0; j < H; j++) h[j] = (1 - z[j]) * cand[j] + z[j] * h[j];
                } else {
                    const float *Pd = P ? P + d * 3 * H : NULL;
                    for (int64_t j = 0; j < H; j++) {
                        double gi = g[j], go = g[H + j], gf = g[2 * H + j], gc = g[3 * H + j];
                        if (Pd) {
                            gi += Pd[j] * cc[j];
                            gf += Pd[2 * H + j] * cc[j];
                        }
                        double i_ = ref_act(an[0], clipd(c, gi), a.al[d][0], a.be[d][0]);
                        double f_ = ref_act(an[0], clipd(c, gf), a.al[d][0], a.be[d][0]);
                        if (c->input_forget) f_ = 1 - i_;
                        double c_ = ref_act(an[1], clipd(c, gc), a.al[d][1], a.be[d][1]);
                        cc[j] = f_ * cc[j] + i_ * c_;
                        if (Pd) go += Pd[H + j] * cc[j];
                        double o_ = ref_act(an[0], clipd(c, go), a.al[d][0], a.be[d][0]);
                        hn[j] = o_ * ref_act(an[2], cc[j], a.al[d][2], a.be[d][2]);
                    }
                    for (int64_t j = 0; j < H; j++) h[j] = hn[j];
                }
                float *yr = Y + (c->layout ? (b * T + t) * D + d : (t * D + d) * B + b) * H;
                for (int64_t j = 0; j < H; j++) yr[j] = (float)h[j];
            }
            for (int64_t j = 0; j < H; j++) {
                Yh[so + j] = (float)h[j];
                if (Yc) Yc[so + j] = (float)cc[j];
            }
        }
    }
    free(h); free(cc); free(g); free(hn);
}

static char last_kernel[64]; /* kernel name of the last run_case */

static int run_case(const rcase *c) {
    const int64_t T = c->T, B = c->B, I = c->I, H = c->H, G = c->op == LSTM ? 4 : c->op == GRU ? 3 : 1;
    const int D = c->dir == 2 ? 2 : 1;
    int64_t xd[3] = {c->layout ? B : T, c->layout ? T : B, I};
    int64_t wd[3] = {D, G * H, I}, rd[3] = {D, G * H, H}, bd[2] = {D, 2 * G * H}, ld[1] = {B};
    int64_t hd[3] = {c->layout ? B : D, c->layout ? D : B, H}, pd[2] = {D, 3 * H};
    float *X = malloc((size_t)(T * B * I + 1) * 4), *W = malloc((size_t)(D * G * H * I + 1) * 4);
    float *R = malloc((size_t)(D * G * H * H + 1) * 4), *Bb = malloc((size_t)(D * 2 * G * H) * 4);
    float *h0 = malloc((size_t)(D * B * H) * 4), *c0 = malloc((size_t)(D * B * H) * 4);
    float *P = malloc((size_t)(D * 3 * H) * 4);
    int32_t *lens = malloc((size_t)(B + 1) * 4);
    unsigned seed = (unsigned)(c->op * 7 + T * 13 + B * 17 + I * 19 + H * 23 + c->dir);
    t_fill(X, (size_t)(T * B * I), seed);
    t_fill(W, (size_t)(D * G * H * I), seed + 1);
    t_fill(R, (size_t)(D * G * H * H), seed + 2);
    t_fill(Bb, (size_t)(D * 2 * G * H), seed + 3);
    t_fill(h0, (size_t)(D * B * H), seed + 4);
    t_fill(c0, (size_t)(D * B * H), seed + 5);
    t_fill(P, (size_t)(D * 3 * H), seed + 6);
    for (int64_t i = 0; i < D * G * H * H; i++) R[i] *= 0.6f; /* keep states in range */
    for (int64_t b = 0; b < B; b++) lens[b] = (int32_t)((b * 3 + 1) % (T + 1)); /* 0..T */
    if (B > 0) lens[0] = (int32_t)T;
    size_t ny = (size_t)(T * D * B * H), nh = (size_t)(D * B * H);
    float *Y = malloc(ny * 4 + 4), *Yh = malloc(nh * 4 + 4), *Yc = malloc(nh * 4 + 4);
    reference(c, X, W, R, c->has_b ? Bb : NULL, c->has_lens ? lens : NULL, c->has_h0 ? h0 : NULL,
              c->has_c0 ? c0 : NULL, c->has_p ? P : NULL, Y, Yh, c->op == LSTM ? Yc : NULL);

    frt_value in[8] = {frt_test_value(FRT_FLOAT32, 3, xd, X), frt_test_value(FRT_FLOAT32, 3, wd, W),
                       frt_test_value(FRT_FLOAT32, 3, rd, R), frt_test_value(FRT_FLOAT32, 2, bd, Bb),
                       frt_test_value(FRT_INT32, 1, ld, lens), frt_test_value(FRT_FLOAT32, 3, hd, h0),
                       frt_test_value(FRT_FLOAT32, 3, hd, c0), frt_test_value(FRT_FLOAT32, 2, pd, P)};
    static const char *const dirs[] = {"forward", "reverse", "bidirectional"};
    frt_onnx_attr attrs[10];
    int na = 0;
    attrs[na++] = frt_test_attr_int("hidden_size", H);
    attrs[na++] = frt_test_attr_string("direction", dirs[c->dir]);
    if (c->layout) attrs[na++] = frt_test_attr_int("layout", 1);
    if (c->op == GRU && c->lbr) attrs[na++] = frt_test_attr_int("linear_before_reset", 1);
    if (c->op == LSTM && c->input_forget) attrs[na++] = frt_test_attr_int("input_forget", 1);
    if (c->clip > 0) attrs[na++] = frt_test_attr_float("clip", c->clip);
    frt_onnx_attr acts_attr = {0};
    if (c->acts[0]) {
        acts_attr.name = "activations";
        acts_attr.type = FRT_ATTR_STRINGS;
        acts_attr.n = (size_t)((c->op + 1) * D);
        acts_attr.strings = (const char **)c->acts;
        attrs[na++] = acts_attr;
        if (c->n_alpha)
            attrs[na++] = frt_test_attr_floats("activation_alpha", c->alphas, (size_t)c->n_alpha);
        if (c->n_beta)
            attrs[na++] = frt_test_attr_floats("activation_beta", c->betas, (size_t)c->n_beta);
    }
    frt_test_op op = {0};
    op.op_type = op_names[c->op];
    op.opset = c->layout ? 14 : 13;
    op.attrs = attrs;
    op.n_attrs = (size_t)na;
    op.inputs = in;
    op.n_in = c->op == LSTM ? 8 : 6;
    op.absent_mask = (c->has_b ? 0u : 8u) | (c->has_lens ? 0u : 16u) | (c->has_h0 ? 0u : 32u) |
                     (c->op == LSTM && !c->has_c0 ? 64u : 0u) |
                     (c->op == LSTM && !c->has_p ? 128u : 0u);
    op.const_mask = c->const_mask;
    op.n_out = c->op == LSTM ? 3 : 2;
    op.isa = c->isa;
    frt_value out[3];
    const char *kname = NULL;
    int ok = 0;
    frt_status st = frt_test_run_op(&op, out, &kname);
    snprintf(last_kernel, sizeof last_kernel, "%s", kname ? kname : "");
    if (st != FRT_OK) {
        fprintf(stderr, "  %s failed: %s\n", op_names[c->op], frt_last_error());
    } else {
        ok = out[0].rank == 4 && out[1].rank == 3 && out[0].numel == (int64_t)ny &&
             out[1].numel == (int64_t)nh;
        ok = ok && t_close(out[0].data, Y, ny, 2e-5f, 2e-5f) && t_close(out[1].data, Yh, nh, 2e-5f, 2e-5f);
        if (c->op == LSTM) ok = ok && t_close(out[2].data, Yc, nh, 2e-5f, 2e-5f);
        for (int j = 0; j < op.n_out; j++) free(out[j].data);
    }
    if (!ok)
        fprintf(stderr, "  %s(%s) T=%lld B=%lld I=%lld H=%lld dir=%d layout=%d b=%d lens=%d h0=%d "
                        "c0=%d p=%d lbr=%d if=%d clip=%g acts=%s const=%u isa=%d\n",
                op_names[c->op], kname ? kname : "?", (long long)T, (long long)B, (long long)I,
                (long long)H, c->dir, c->layout, c->has_b, c->has_lens, c->has_h0, c->has_c0,
                c->has_p, c->lbr, c->input_forget, c->clip, c->acts[0] ? c->acts[0] : "default",
                c->const_mask, c->isa);
    free(X); free(W); free(R); free(Bb); free(h0); free(c0); free(P); free(lens);
    free(Y); free(Yh); free(Yc);
    return ok;
}

static void test_matrix(void) {
    static const int64_t sizes[][4] = {{5, 3, 7, 9}, {1, 1, 1, 1}, {4, 2, 5, 33}, {7, 1, 16, 17},
                                       {3, 6, 24, 40}, {0, 2, 3, 4}};
    int n = 0;
    for (int op = 0; op < 3; op++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int dir = 0; dir < 3; dir++)
                for (int v = 0; v < 4; v++) {
                    rcase c = {0};
                    c.op = op;
                    c.T = sizes[s][0];
                    c.B = sizes[s][1];
                    c.I = sizes[s][2];
                    c.H = sizes[s][3];
                    c.dir = dir;
                    c.layout = v & 1;
                    c.has_b = v != 0;
                    c.has_lens = v >= 2 && c.T > 0;
                    c.has_h0 = v != 1;
                    c.has_c0 = v == 3;
                    c.has_p = op == LSTM && (v == 2 || v == 3);
                    c.lbr = op == GRU && (v & 2);
                    c.const_mask = (unsigned)((n % 3) == 0 ? 0 : (n % 3) == 1 ? 6 : 0xfe);
                    for (int isa = 0; isa < 2; isa++) {
                        c.isa = isa ? 0 : FRT_TEST_ISA(FRT_ISA_PORTABLE);
                        CHECK(run_case(&c));
                    }
                    n++;
                }
}

/* clip, input_forget, activations with alpha/beta (one set per direction, or one set shared) */
static void test_options(void) {
    for (int isa = 0; isa < 2; isa++) {
        int ti = isa ? 0 : FRT_TEST_ISA(FRT_ISA_PORTABLE);
        rcase c = {LSTM, 6, 3, 5, 11, 2, 0, 1, 1, 1, 1, 1, 0, 1, 0.7f, {NULL}, {0}, {0}, 0, 0, 6, ti};
        CHECK(run_case(&c));
        c.input_forget = 0;
        c.clip = 0;
        const char *la[6] = {"HardSigmoid", "LeakyRelu", "Softsign", "Sigmoid", "ScaledTanh", "Elu"};
        memcpy(c.acts, la, sizeof la);
        c.alphas[0] = 0.3f; c.alphas[1] = 0.05f; c.alphas[2] = 0.9f; c.alphas[3] = 1.3f;
        c.betas[0] = 0.4f; c.betas[1] = 0.8f;
        c.n_alpha = 4;
        c.n_beta = 2;
        CHECK(run_case(&c));
        rcase g = {GRU, 5, 2, 4, 9, 2, 1, 1, 1, 1, 0, 0, 1, 0, 0.5f, {"Relu", "Affine", "Sigmoid", "Softplus"},
                   {0.5f}, {0.25f}, 1, 1, 6, ti};
        CHECK(run_case(&g));
        g.lbr = 0;
        g.clip = 0;
        CHECK(run_case(&g));
        rcase r = {RNN, 5, 3, 4, 10, 2, 0, 1, 1, 1, 0, 0, 0, 0, 0.9f, {"Relu", "ThresholdedRelu"},
                   {0.1f}, {0}, 1, 0, 0, ti};
        CHECK(run_case(&r));
        r.clip = 0;
        r.dir = 0;
        r.acts[0] = "Relu";
        r.acts[1] = NULL;
        CHECK(run_case(&r));
    }
}

/* Wrong dtype, bad attributes, mismatched shapes, out-of-range sequence length. */
static void test_bad_input(void) {
    int64_t xd[3] = {2, 1, 3}, wd[3] = {1, 4, 3}, rd[3] = {1, 4, 4}, ld[1] = {1};
    float X[6] = {0}, W[12] = {0}, R[16] = {0};
    int32_t lens[1] = {3};
    int32_t Xi[6] = {0};
    frt_value in[6] = {frt_test_value(FRT_FLOAT32, 3, xd, X), frt_test_value(FRT_FLOAT32, 3, wd, W),
                       frt_test_value(FRT_FLOAT32, 3, rd, R), frt_test_value(FRT_FLOAT32, 0, NULL, NULL),
                       frt_test_value(FRT_INT32, 1, ld, lens), frt_test_value(FRT_FLOAT32, 0, NULL, NULL)};
    frt_onnx_attr attrs[2] = {frt_test_attr_int("hidden_size", 4),
                              frt_test_attr_string("direction", "forward")};
    frt_test_op op = {0};
    op.op_type = "RNN";
    op.attrs = attrs;
    op.n_attrs = 2;
    op.inputs = in;
    op.n_in = 5;
    op.absent_mask = 8;
    op.n_out = 2;
    frt_value out[2];
    /* sequence length 3 > T = 2 */
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_RUNTIME && err_has("sequence_lens[0] = 3"));
    lens[0] = -1;
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_RUNTIME && err_has("sequence_lens"));
    lens[0] = 2;
    CHECK_OK(frt_test_run_op(&op, out, NULL));
    free(out[0].data);
    free(out[1].data);
    /* bad direction */
    attrs[1] = frt_test_attr_string("direction", "sideways");
    CHECK(frt_test_run_op(&op, out, NULL) != FRT_OK && err_has("sideways"));
    attrs[1] = frt_test_attr_string("direction", "forward");
    /* bidirectional but W has one direction */
    attrs[1] = frt_test_attr_string("direction", "bidirectional");
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_SHAPE && err_has("W has shape"));
    attrs[1] = frt_test_attr_string("direction", "forward");
    /* layout 1 before opset 14 */
    frt_onnx_attr la[3] = {attrs[0], attrs[1], frt_test_attr_int("layout", 1)};
    op.attrs = la;
    op.n_attrs = 3;
    op.opset = 13;
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_UNSUPPORTED && err_has("layout"));
    /* unknown activation */
    frt_onnx_attr aa = {0};
    const char *names[1] = {"Swish"};
    aa.name = "activations";
    aa.type = FRT_ATTR_STRINGS;
    aa.n = 1;
    aa.strings = names;
    la[2] = aa;
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_UNSUPPORTED && err_has("Swish"));
    op.attrs = attrs;
    op.n_attrs = 2;
    op.opset = 0;
    /* R with the wrong hidden size */
    int64_t rbad[3] = {1, 4, 5};
    in[2] = frt_test_value(FRT_FLOAT32, 3, rbad, R);
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_SHAPE && err_has("R has shape"));
    in[2] = frt_test_value(FRT_FLOAT32, 3, rd, R);
    /* int32 X */
    in[0] = frt_test_value(FRT_INT32, 3, xd, Xi);
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_UNSUPPORTED && err_has("dtype"));
    in[0] = frt_test_value(FRT_FLOAT32, 3, xd, X);
    /* float sequence_lens */
    in[4] = frt_test_value(FRT_FLOAT32, 1, ld, X);
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_UNSUPPORTED && err_has("input 4"));
}

/* The recurrent GEMM of every tier this host runs against a double reference (and so against the
 * portable twin): M across the 1..4-row blocks and beyond, N with partial panels and panel-group
 * tails, K odd; C's padding columns (ldc > N) must stay untouched. */
static void test_mm_variants(void) {
    static const int64_t Ms[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 14}, Ns[] = {1, 7, 8, 16, 17, 33, 130, 257},
                         Ks[] = {0, 1, 5, 31, 64};
    for (int tier = 0; tier <= (int)frt_cpu_tier(); tier++) {
        const frt_rnn_mm_variant *v = frt_rnn_mm_variant_get((frt_isa)tier);
        for (int gv = 2; gv <= 8; gv *= 2)
        for (size_t a = 0; a < sizeof Ms / sizeof Ms[0]; a++)
            for (size_t b = 0; b < sizeof Ns / sizeof Ns[0]; b++)
                for (size_t c = 0; c < sizeof Ks / sizeof Ks[0]; c++) {
                    int64_t M = Ms[a], N = Ns[b], K = Ks[c], lda = K + 3, ldc = N + 5;
                    float *A = malloc((size_t)(M * lda + 1) * 4), *R = malloc((size_t)(N * K + 1) * 4);
                    float *Bq = malloc(frt_rnn_pack_size(v->vl, gv, N, K) * 4 + 4);
                    float *C = malloc((size_t)(M * ldc) * 4), *ref = malloc((size_t)(M * ldc) * 4);
                    t_fill(A, (size_t)(M * lda), (unsigned)(M * 31 + K));
                    t_fill(R, (size_t)(N * K), (unsigned)(N * 7 + K));
                    for (int64_t i = 0; i < M * ldc; i++) C[i] = ref[i] = 7.0f;
                    for (int64_t i = 0; i < M; i++)
                        for (int64_t j = 0; j < N; j++) {
                            double s = 0;
                            for (int64_t k = 0; k < K; k++) s += (double)A[i * lda + k] * R[j * K + k];
                            ref[i * ldc + j] = (float)s;
                        }
                    frt_rnn_pack(v->vl, gv, N, K, R, K, Bq);
                    v->mm(M, N, K, A, lda, Bq, gv, C, ldc);
                    int ok = t_close(C, ref, (size_t)(M * ldc), 1e-5f, 1e-6f * (float)(K + 1));
                    CHECK_MSG(ok, "rnn mm%s gv=%d M=%lld N=%lld K=%lld", v->suffix, gv, (long long)M,
                              (long long)N, (long long)K);
                    free(A); free(R); free(Bq); free(C); free(ref);
                }
    }
}

/* The fused steps (LSTM; GRU with linear_before_reset): selected for their configurations on the
 * tiers that have them, against the double reference over batch sizes across the 1..4-row blocks
 * and beyond, hidden sizes with and without a partial 16-unit group, sequence lengths (rows that
 * stop early), every direction and both layouts. */
static void test_fused(void) {
    static const int64_t Bs[] = {1, 2, 3, 4, 5, 9}, Hs[] = {16, 20, 35};
    for (int t = 0; t <= (int)frt_cpu_tier(); t++) {
        const int has = frt_rnn_step_variant_get((frt_isa)t) != NULL;
        for (int op = GRU; op <= LSTM; op++)
            for (size_t bi = 0; bi < sizeof Bs / sizeof Bs[0]; bi++)
                for (size_t hi = 0; hi < sizeof Hs / sizeof Hs[0]; hi++)
                    for (int dir = 0; dir < 3; dir++) {
                        rcase c = {0};
                        c.op = op;
                        c.T = 4;
                        c.B = Bs[bi];
                        c.I = 7;
                        c.H = Hs[hi];
                        c.dir = dir;
                        c.layout = (int)(bi + hi) & 1;
                        c.has_b = dir != 1;
                        c.has_lens = (bi + (size_t)dir) % 2;
                        c.has_h0 = 1;
                        c.has_c0 = op == LSTM;
                        c.lbr = 1;
                        c.const_mask = 6;
                        c.isa = FRT_TEST_ISA(t);
                        CHECK(run_case(&c));
                        CHECK_MSG(!has == !strstr(last_kernel, "fused"), "tier %d: kernel %s", t,
                                  last_kernel);
                        /* R only known at run time: the unfused path */
                        c.const_mask = 2;
                        CHECK(run_case(&c) && !strstr(last_kernel, "fused"));
                    }
    }
}

/* Each tier's fused steps against the portable twin on the same packed weights and inputs.
 * Hidden sizes up to 5 groups of 16 units (several blocks per step). */
static void test_step_variants(void) {
    const frt_rnn_step_variant *ref = frt_rnn_step_variant_get(FRT_ISA_PORTABLE);
    CHECK(ref != NULL);
    for (int t = 1; ref && t <= (int)frt_cpu_tier(); t++) {
        const frt_rnn_step_variant *v = frt_rnn_step_variant_get((frt_isa)t);
        if (!v) continue;
        for (int G = 3; G <= 4; G++)
            for (int64_t B = 1; B <= 6; B++)
                for (int64_t H = 1; H <= 79; H += 13)
                    for (int z = 0; z < 2; z++) { /* z: zero h_prev, skipped by the tier only */
                    size_t nR = (size_t)(G * H * H);
                    size_t nq[2] = {frt_rnn_gates_size(G, H, frt_rnn_step_gw(ref, G), ref->vl),
                                    frt_rnn_gates_size(G, H, frt_rnn_step_gw(v, G), v->vl)};
                    float *R = malloc(nR * 4), *Rq[2] = {malloc(nq[0] * 4), malloc(nq[1] * 4)};
                    float *hp = malloc((size_t)(B * H) * 4);
                    float *xw = malloc((size_t)(B * G * H) * 4), *bias = malloc((size_t)(G * H) * 4);
                    float *rbh = malloc((size_t)H * 4), *out[2][3];
                    t_fill(R, nR, (unsigned)(G * 5 + H));
                    for (size_t i = 0; i < nR; i++) R[i] *= 0.5f;
                    t_fill(hp, (size_t)(B * H), 3);
                    if (z) memset(hp, 0, (size_t)(B * H) * 4);
                    t_fill(xw, (size_t)(B * G * H), 4);
                    t_fill(bias, (size_t)(G * H), 5);
                    t_fill(rbh, (size_t)H, 6);
                    /* each variant's own packing */
                    frt_rnn_pack_gates(G, H, frt_rnn_step_gw(ref, G), ref->vl, frt_rnn_step_gp(ref, G), R,
                                       Rq[0]);
                    frt_rnn_pack_gates(G, H, frt_rnn_step_gw(v, G), v->vl, frt_rnn_step_gp(v, G), R, Rq[1]);
                    for (int w = 0; w < 2; w++) {
                        for (int k = 0; k < 3; k++) out[w][k] = malloc((size_t)(B * H) * 4);
                        t_fill(out[w][2], (size_t)(B * H), 7); /* c */
                        const float *xr[8];
                        float *yr[8];
                        for (int64_t b = 0; b < B; b++) {
                            xr[b] = b == 2 ? NULL : xw + b * G * H; /* row 2 stopped */
                            yr[b] = b == 1 ? NULL : out[w][1] + b * H;
                        }
                        for (int64_t i = 0; i < B * H; i++) out[w][1][i] = 9.0f;
                        frt_rnn_step_args a = {B, H, hp, out[w][0], out[w][2], Rq[w], xr, yr, bias,
                                               rbh, (int)(H & 1), z && w};
                        (G == 4 ? (w ? v->lstm : ref->lstm) : (w ? v->gru : ref->gru))(&a);
                    }
                    for (int k = 0; k < 3; k++)
                        CHECK_MSG(t_close(out[1][k], out[0][k], (size_t)(B * H), 1e-5f, 1e-5f),
                                  "tier %d G %d B %lld H %lld zero h %d output %d", t, G,
                                  (long long)B, (long long)H, z, k);
                    free(R); free(Rq[0]); free(Rq[1]); free(hp); free(xw); free(bias); free(rbh);
                    for (int w = 0; w < 2; w++)
                        for (int k = 0; k < 3; k++) free(out[w][k]);
                }
    }
}

int main(void) {
    test_fused();
    test_step_variants();
    test_mm_variants();
    test_matrix();
    test_options();
    test_bad_input();
    TEST_MAIN_END();
}
