/* Conv with reduced-precision weights (frt_options.weights_precision fp16 / bf16, conv_gemm.c):
 * the packed-GEMM conv of the SIMD tiers keeps W in half precision and widens each K block to
 * float32; every tier the host has (FRT_TEST_ISA) against a double-precision reference on odd
 * sizes (channels not a multiple of the tile, K over several blocks, groups, stride, padding,
 * dilation, 1x1 pointwise and 1x1 on a 1x1 input, bias, fused Relu and FusedConv's sum input);
 * fp16 overflow keeping float32; the tiers where the option does not apply (portable im2col,
 * depthwise) keep float32 and say so in the kernel name.
 *
 * Tolerances (as test_gemv.c): with w16 = w (1 + d), |d| <= u (2^-11 fp16, 2^-8 bf16),
 *   against the reference with ROUNDED weights: |y - ref| <= K * 2^-23 * S (float32 sums only;
 *   a misplaced weight breaks it by ~|w|), S = sum |x w| + |bias| (+ |z|);
 *   against the reference with float32 weights: |y - ref| <= (u + K * 2^-23) * S. */
#include <stdint.h>

#include "ops/dtype_util.h"
#include "op_harness.h"
#include "test_util.h"

static const double U[3] = {0.0, 1.0 / 2048, 1.0 / 256};

static float round_w(int p, float v) {
    if (p == 1) return frt_half_to_float(frt_float_to_half(v));
    if (p == 2) return frt_bf16_to_float(frt_float_to_bf16(v));
    return v;
}

typedef struct cshape {
    int64_t N, C, H, W, M, kh, kw, stride, pad, dil, group;
    int bias, relu, sum;
} cshape;

/* R/S: reference output and sum of magnitudes, W rounded to precision rp. */
static void ref_conv(const cshape *s, int64_t OH, int64_t OW, const float *X, const float *Wt,
                     const float *B, const float *Z, int rp, double *R, double *S) {
    const int64_t Cg = s->C / s->group, Mg = s->M / s->group;
    for (int64_t n = 0; n < s->N; n++)
        for (int64_t m = 0; m < s->M; m++)
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++) {
                    double acc = s->bias ? B[m] : 0.0, mag = s->bias ? fabs(B[m]) : 0.0;
                    int64_t g = m / Mg;
                    for (int64_t c = 0; c < Cg; c++)
                        for (int64_t ky = 0; ky < s->kh; ky++)
                            for (int64_t kx = 0; kx < s->kw; kx++) {
                                int64_t iy = oy * s->stride - s->pad + ky * s->dil;
                                int64_t ix = ox * s->stride - s->pad + kx * s->dil;
                                if (iy < 0 || iy >= s->H || ix < 0 || ix >= s->W) continue;
                                double x = X[((n * s->C + g * Cg + c) * s->H + iy) * s->W + ix];
                                double w = round_w(rp, Wt[((m * Cg + c) * s->kh + ky) * s->kw + kx]);
                                acc += x * w;
                                mag += fabs(x * w);
                            }
                    size_t o = (size_t)(((n * s->M + m) * OH + oy) * OW + ox);
                    if (s->sum) {
                        acc += Z[o];
                        mag += fabs(Z[o]);
                    }
                    if (s->relu && acc < 0) acc = 0;
                    R[o] = acc;
                    S[o] = mag;
                }
}

static double worst(const float *y, const double *r, const double *s, size_t n, double rel) {
    double w = 0;
    for (size_t i = 0; i < n; i++) {
        double q = fabs((double)y[i] - r[i]) / (rel * s[i] + 1e-30);
        if (q != q) return INFINITY;
        if (q > w) w = q;
    }
    return w;
}

/* Runs s at tier `tier` with precision prec; checks kernel name and both bounds. */
static void check(const cshape *s, int prec, frt_isa tier, int threads) {
    const int64_t Cg = s->C / s->group, K = Cg * s->kh * s->kw;
    const int64_t OH = (s->H + 2 * s->pad - s->dil * (s->kh - 1) - 1) / s->stride + 1;
    const int64_t OW = (s->W + 2 * s->pad - s->dil * (s->kw - 1) - 1) / s->stride + 1;
    const size_t nx = (size_t)(s->N * s->C * s->H * s->W), nw = (size_t)(s->M * K);
    const size_t ny = (size_t)(s->N * s->M * OH * OW);
    float *X = malloc(nx * 4), *Wt = malloc(nw * 4), *B = malloc((size_t)s->M * 4);
    float *Z = malloc(ny * 4);
    t_fill(X, nx, 21u);
    t_fill(Wt, nw, 22u);
    t_fill(B, (size_t)s->M, 23u);
    t_fill(Z, ny, 24u);
    int64_t xd[4] = {s->N, s->C, s->H, s->W}, wd[4] = {s->M, Cg, s->kh, s->kw}, bd[1] = {s->M};
    int64_t yd[4] = {s->N, s->M, OH, OW};
    int64_t st[2] = {s->stride, s->stride}, pads[4] = {s->pad, s->pad, s->pad, s->pad};
    int64_t dl[2] = {s->dil, s->dil};
    frt_value in[4] = {frt_test_value(FRT_FLOAT32, 4, xd, X), frt_test_value(FRT_FLOAT32, 4, wd, Wt),
                       frt_test_value(FRT_FLOAT32, 1, bd, B), frt_test_value(FRT_FLOAT32, 4, yd, Z)};
    frt_onnx_attr at[4] = {frt_test_attr_ints("strides", st, 2), frt_test_attr_ints("pads", pads, 4),
                           frt_test_attr_ints("dilations", dl, 2), frt_test_attr_int("group", s->group)};
    frt_test_op op = {0};
    op.op_type = s->sum ? "FusedConv" : "Conv";
    op.opset = s->sum ? 1 : 0;
    op.attrs = at;
    op.n_attrs = 4;
    op.inputs = in;
    op.n_in = s->sum ? 4 : 3;
    op.absent_mask = s->bias ? 0u : 4u;
    op.const_mask = 2u | (s->bias ? 4u : 0u);
    if (s->relu) op.act = (frt_act){FRT_ACT_RELU, 0, INFINITY};
    op.n_out = 1;
    op.n_threads = threads;
    op.isa = FRT_TEST_ISA(tier);
    op.weights_precision = prec;
    frt_value out;
    const char *name = NULL;
    frt_status stt = frt_test_run_op(&op, &out, &name);
    CHECK_MSG(stt == FRT_OK, "conv prec %d tier %s: status %d", prec, frt_isa_name(tier), (int)stt);
    if (stt != FRT_OK) goto done;
    /* half weights on the packed-GEMM conv (SIMD tiers), float32 elsewhere, named either way */
    int half = prec && tier >= FRT_ISA_AVX2 && !(Cg == 1 && s->group > 1);
    const char *suffix = prec == 1 ? "_f16w" : "_bf16w";
    CHECK_MSG(name && (strstr(name, suffix) != NULL) == half, "prec %d tier %s: kernel %s", prec,
              frt_isa_name(tier), name ? name : "(null)");
    CHECK(out.numel == (int64_t)ny);
    double *R = malloc(ny * 8), *S = malloc(ny * 8);
    ref_conv(s, OH, OW, X, Wt, B, Z, half ? prec : 0, R, S);
    CHECK_MSG(worst(out.data, R, S, ny, (double)K * 0x1p-23 + 0x1p-22) <= 1.0,
              "conv prec %d tier %s M=%lld K=%lld vs rounded-weight reference", prec,
              frt_isa_name(tier), (long long)s->M, (long long)K);
    ref_conv(s, OH, OW, X, Wt, B, Z, 0, R, S);
    CHECK_MSG(worst(out.data, R, S, ny, U[prec] + (double)K * 0x1p-23 + 0x1p-22) <= 1.0,
              "conv prec %d tier %s M=%lld K=%lld vs float32 reference", prec, frt_isa_name(tier),
              (long long)s->M, (long long)K);
    free(R);
    free(S);
    free(out.data);
done:
    free(X);
    free(Wt);
    free(B);
    free(Z);
}

static void test_shapes(void) {
    static const cshape shapes[] = {
        /* N  C   H   W   M  kh kw st pad dil grp bias relu sum */
        {1, 3, 11, 13, 19, 3, 3, 1, 1, 1, 1, 1, 0, 0},   /* tiny K, M tail */
        {2, 40, 9, 7, 37, 3, 3, 2, 1, 1, 1, 1, 1, 0},    /* K = 360: two K blocks, stride 2 */
        {1, 70, 6, 6, 33, 1, 1, 1, 0, 1, 1, 0, 0, 0},    /* 1x1 pointwise, no bias */
        {1, 300, 1, 1, 21, 1, 1, 1, 0, 1, 1, 1, 0, 0},   /* 1x1 on a 1x1 input (SE FC) */
        {1, 24, 8, 9, 18, 3, 3, 1, 2, 2, 2, 1, 1, 0},    /* grouped, dilated */
        {1, 17, 10, 10, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1},  /* FusedConv: + sum, relu */
        {1, 5, 12, 12, 5, 3, 3, 1, 1, 1, 5, 1, 0, 0},    /* depthwise: float32 weights */
    };
    const frt_isa top = frt_cpu_tier();
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        for (int prec = 0; prec < 3; prec++)
            for (int t = FRT_ISA_PORTABLE; t <= (int)top; t++)
                check(&shapes[i], prec, (frt_isa)t, i == 1 ? 2 : 1);
}

/* fp16 cannot hold 1e5: the conv keeps float32 weights (f32 kernel name, exact-weight bound). */
static void test_f16_overflow(void) {
    int64_t xd[4] = {1, 4, 5, 5}, wd[4] = {6, 4, 3, 3};
    float X[100], Wt[216];
    t_fill(X, 100, 31u);
    t_fill(Wt, 216, 32u);
    Wt[7] = 1e5f;
    frt_value in[2] = {frt_test_value(FRT_FLOAT32, 4, xd, X), frt_test_value(FRT_FLOAT32, 4, wd, Wt)};
    frt_test_op op = {.op_type = "Conv", .inputs = in, .n_in = 2, .const_mask = 2u, .n_out = 1,
                      .weights_precision = 1};
    frt_value out;
    const char *name = NULL;
    CHECK_OK(frt_test_run_op(&op, &out, &name));
    CHECK_MSG(name && !strstr(name, "f16w"), "kernel %s", name ? name : "(null)");
    /* output (0, 0, 0) with the weight of 1e5 at index 7 (c 0, ky 2, kx 1): exact float32 */
    double acc = 0;
    for (int c = 0; c < 4; c++)
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++)
                acc += (double)X[(c * 5 + ky) * 5 + kx] * Wt[(c * 3 + ky) * 3 + kx];
    CHECK_MSG(fabs(((float *)out.data)[0] - acc) <= 1e-6 * (1e5 + 10), "got %g want %g",
              (double)((float *)out.data)[0], acc);
    free(out.data);
}

int main(void) {
    test_shapes();
    test_f16_overflow();
    TEST_MAIN_END();
}
