/* Packed constant weights (gemv.h): the GEMV and the blocked M > 1 product of every ISA tier the
 * host has, in fp32, fp16 and bf16, against a double-precision reference on odd sizes and tails;
 * the SIMD tiers against their portable twin; Gemm and MatMul with weights_precision through the
 * op harness; fp16 overflow keeping float32; bad options.
 *
 * Tolerances. With the weights rounded to the storage precision (w16 = w (1 + d), |d| <= u, u =
 * 2^-11 for fp16 and 2^-8 for bf16, nearest even), a product sum_k x_k w_k differs from the
 * float32-weight product by at most u * S, S = sum_k |x_k w_k|, plus the float32 accumulation
 * error of both, at most 2 * K * 2^-24 * S (a standard bound, loose for the blocked sums). So:
 *   against the reference with ROUNDED weights: |y - ref| <= K * 2^-23 * S + 1e-30 (accumulation);
 *   against the reference with float32 weights: |y - ref| <= (u + K * 2^-23) * S.
 * The first catches layout bugs (any misplaced weight breaks it by ~|w|), the second is the
 * accuracy contract of the option. */
#include <stdint.h>

#include "flatrt.h"
#include "ops/dtype_util.h"
#include "ops/gemv.h"
#include "op_harness.h"
#include "test_util.h"

static const double U[3] = {0.0, 1.0 / 2048, 1.0 / 256};

static float round_w(frt_wprec p, float v) {
    if (p == FRT_WPREC_F16) return frt_half_to_float(frt_float_to_half(v));
    if (p == FRT_WPREC_BF16) return frt_bf16_to_float(frt_float_to_bf16(v));
    return v;
}

/* C[M,N] = alpha op(A) W + beta C (double); S[i,j] = sum |a w|; W [K,N] given as op(B). */
static void ref(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                int64_t lda, const float *B, frt_wprec rp, float beta, const float *C0,
                double *R, double *S) {
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0, a = 0;
            for (int64_t k = 0; k < K; k++) {
                double x = ta ? A[k * lda + i] : A[i * lda + k];
                double w = round_w(rp, tb ? B[j * K + k] : B[k * N + j]);
                s += x * w;
                a += fabs(x * w);
            }
            R[i * N + j] = alpha * s + (beta == 0.0f ? 0.0 : (double)beta * C0[i * N + j]);
            S[i * N + j] = fabs(alpha) * a + (beta == 0.0f ? 0.0 : fabs(beta * C0[i * N + j]));
        }
}

/* Max over outputs of |y - r| / bound; <= 1 passes. */
static double worst(const float *y, const double *r, const double *s, int64_t n, double rel) {
    double w = 0;
    for (int64_t i = 0; i < n; i++) {
        double q = fabs((double)y[i] - r[i]) / (rel * s[i] + 1e-30);
        if (q != q) return INFINITY;
        if (q > w) w = q;
    }
    return w;
}

/* One packed product at tier cap; compares with the rounded-weight and fp32-weight references
 * and returns the output (caller frees) for the portable-twin comparison. */
static float *run_one(frt_isa cap, frt_wprec prec, int ta, int tb, int64_t M, int64_t N, int64_t K,
                      float alpha, float beta) {
    int64_t lda = ta ? M : K;
    float *A = malloc((size_t)(M * K) * 4), *B = malloc((size_t)(K * N) * 4);
    float *C = malloc((size_t)(M * N) * 4), *C0 = malloc((size_t)(M * N) * 4);
    double *R = malloc((size_t)(M * N) * 8), *S = malloc((size_t)(M * N) * 8);
    double *R32 = malloc((size_t)(M * N) * 8);
    t_fill(A, (size_t)(M * K), (unsigned)(M * 31 + K));
    t_fill(B, (size_t)(K * N), (unsigned)(N * 17 + K));
    t_fill(C0, (size_t)(M * N), 5u);
    for (int64_t i = 0; i < M * N; i++) C[i] = beta == 0.0f ? NAN : C0[i]; /* NaN: never read */
    size_t nb = frt_wpack_bytes(prec, K, N);
    void *d = aligned_alloc(64, (nb + 63) / 64 * 64);
    CHECK(frt_wpack_fill(prec, tb, K, N, B, tb ? K : N, d));
    frt_wpack w = {prec, K, N, d};
    void *scratch = aligned_alloc(64, (frt_wpack_gemm_scratch(cap) + 63) / 64 * 64);
    frt_wpack_gemm(cap, &w, ta, M, alpha, A, lda, beta, C, N, scratch);
    ref(ta, tb, M, N, K, alpha, A, lda, B, prec, beta, C0, R, S);
    double acc = (double)K * 0x1p-23 + 0x1p-22;
    double e1 = worst(C, R, S, M * N, acc);
    ref(ta, tb, M, N, K, alpha, A, lda, B, FRT_WPREC_F32, beta, C0, R32, S);
    double e2 = worst(C, R32, S, M * N, U[prec] + acc);
    CHECK_MSG(e1 <= 1.0 && e2 <= 1.0,
              "tier %s prec %d ta=%d tb=%d M=%lld N=%lld K=%lld alpha=%g beta=%g: error/bound "
              "%.3g (rounded weights), %.3g (fp32 weights)",
              frt_isa_name(cap), (int)prec, ta, tb, (long long)M, (long long)N, (long long)K,
              alpha, beta, e1, e2);
    free(A), free(B), free(C0), free(R), free(S), free(R32), free(d), free(scratch);
    return C;
}

static void test_kernels(void) {
    static const int64_t Ks[] = {1, 2, 3, 17, 64, 257, 520};
    static const int64_t Ns[] = {1, 5, 16, 17, 48, 63, 64, 65, 130, 300};
    static const int64_t Ms[] = {1, 2, 7, 13, 150};
    frt_isa top = frt_cpu_tier();
    for (int prec = 0; prec < 3; prec++)
        for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++)
            for (size_t ni = 0; ni < sizeof Ns / sizeof *Ns; ni++)
                for (size_t mi = 0; mi < sizeof Ms / sizeof *Ms; mi++) {
                    int64_t K = Ks[ki], N = Ns[ni], M = Ms[mi];
                    if (M * N * K > 3000000) continue;
                    int ta = (int)((ki + mi) & 1), tb = (int)((ki + ni) & 1);
                    float alpha = mi == 2 ? 0.5f : 1.0f, beta = ni % 3 == 0 ? 0.0f : ni % 3 == 1 ? 1.0f : -0.25f;
                    float *yp = run_one(FRT_ISA_PORTABLE, (frt_wprec)prec, ta, tb, M, N, K, alpha, beta);
                    for (int t = FRT_ISA_AVX2; t <= (int)top; t++) {
                        float *y = run_one((frt_isa)t, (frt_wprec)prec, ta, tb, M, N, K, alpha, beta);
                        /* portable twin: same weights, float32 sums in another order */
                        CHECK_MSG(t_close(y, yp, (size_t)(M * N), 1e-5f, 4e-6f * (float)(K + 1)),
                                  "tier %s vs portable: prec %d M=%lld N=%lld K=%lld",
                                  frt_isa_name((frt_isa)t), prec, (long long)M, (long long)N,
                                  (long long)K);
                        free(y);
                    }
                    free(yp);
                }
}

/* Gemm / MatMul with weights_precision through the harness: kernel name and accuracy. */
static void test_ops(void) {
    for (int prec = 0; prec < 3; prec++) {
        /* Gemm, torch Linear layout, bias, relu, batch 1 and batch 9 */
        for (int64_t M = 1; M <= 9; M += 8) {
            int64_t K = 300, N = 70;
            int64_t ad[2] = {M, K}, bd[2] = {N, K}, cd[1] = {N};
            float *A = malloc((size_t)(M * K) * 4), *B = malloc((size_t)(N * K) * 4), *C = malloc((size_t)N * 4);
            t_fill(A, (size_t)(M * K), 3u);
            t_fill(B, (size_t)(N * K), 4u);
            t_fill(C, (size_t)N, 5u);
            frt_value in[3] = {frt_test_value(FRT_FLOAT32, 2, ad, A), frt_test_value(FRT_FLOAT32, 2, bd, B),
                               frt_test_value(FRT_FLOAT32, 1, cd, C)};
            frt_onnx_attr attrs[1] = {frt_test_attr_int("transB", 1)};
            frt_test_op op = {0};
            op.op_type = "Gemm";
            op.attrs = attrs;
            op.n_attrs = 1;
            op.inputs = in;
            op.n_in = 3;
            op.const_mask = 2 | 4;
            op.act = (frt_act){FRT_ACT_RELU, 0, INFINITY};
            op.n_out = 1;
            op.weights_precision = prec;
            frt_value out;
            const char *name = NULL;
            CHECK_OK(frt_test_run_op(&op, &out, &name));
            char want[64];
            snprintf(want, sizeof want, "%s_%sw_%s_bias_relu", M == 1 ? "gemv" : "gemm",
                     prec == 0 ? "f32" : prec == 1 ? "f16" : "bf16", frt_isa_name(frt_cpu_tier()));
            if (prec == 0 && M != 1) snprintf(want, sizeof want, "gemm_f32_");
            CHECK_MSG(name && strncmp(name, want, strlen(want)) == 0, "kernel %s, want %s",
                      name ? name : "(null)", want);
            double *R = malloc((size_t)(M * N) * 8), *S = malloc((size_t)(M * N) * 8);
            float *C0 = malloc((size_t)(M * N) * 4);
            for (int64_t i = 0; i < M * N; i++) C0[i] = C[i % N];
            ref(0, 1, M, N, K, 1.0f, A, K, B, FRT_WPREC_F32, 1.0f, C0, R, S);
            for (int64_t i = 0; i < M * N; i++) R[i] = R[i] < 0 ? 0 : R[i];
            CHECK_MSG(worst(out.data, R, S, M * N, U[prec] + (double)K * 0x1p-23 + 0x1p-22) <= 1.0,
                      "Gemm prec %d M=%lld", prec, (long long)M);
            free(out.data), free(A), free(B), free(C), free(R), free(S), free(C0);
        }
        /* MatMul [2,3,K] x [K,N] (M = 6 after folding) and [1,K] x [K,N] */
        for (int one = 0; one < 2; one++) {
            int64_t K = 33, N = 130, M = one ? 1 : 6;
            int64_t ad3[3] = {2, 3, K}, ad2[2] = {1, K}, bd[2] = {K, N};
            float *A = malloc((size_t)(M * K) * 4), *B = malloc((size_t)(K * N) * 4);
            t_fill(A, (size_t)(M * K), 6u);
            t_fill(B, (size_t)(K * N), 7u);
            frt_value in[2] = {one ? frt_test_value(FRT_FLOAT32, 2, ad2, A) : frt_test_value(FRT_FLOAT32, 3, ad3, A),
                               frt_test_value(FRT_FLOAT32, 2, bd, B)};
            frt_test_op op = {0};
            op.op_type = "MatMul";
            op.inputs = in;
            op.n_in = 2;
            op.const_mask = 2;
            op.n_out = 1;
            op.weights_precision = prec;
            frt_value out;
            const char *name = NULL;
            CHECK_OK(frt_test_run_op(&op, &out, &name));
            if (prec || one)
                CHECK_MSG(name && strstr(name, prec == 0 ? "f32w" : prec == 1 ? "f16w" : "bf16w"),
                          "MatMul kernel %s", name ? name : "(null)");
            double *R = malloc((size_t)(M * N) * 8), *S = malloc((size_t)(M * N) * 8);
            ref(0, 0, M, N, K, 1.0f, A, K, B, FRT_WPREC_F32, 0.0f, NULL, R, S);
            CHECK(out.numel == M * N);
            CHECK_MSG(worst(out.data, R, S, M * N, U[prec] + (double)K * 0x1p-23 + 0x1p-22) <= 1.0,
                      "MatMul prec %d M=%lld", prec, (long long)M);
            free(out.data), free(A), free(B), free(R), free(S);
        }
    }
}

/* flatrt::FusedMatMul (transformer.c) with half weights: Y = A W + bias + R. */
/* prec 0: float32 weights with N <= 16, which the tiers with a row kernel (frt_gemv_variant.rows)
 * run through frt_wpack_gemm (kernel named f32 either way). */
static void test_fused_matmul(void) {
    for (int prec = 0; prec < 3; prec++)
        for (int64_t M = 1; M <= 37; M += prec ? 36 : 4) {
            int64_t K = prec ? 70 : 75, N = prec ? 90 : 1 + M % 16;
            int64_t ad[2] = {M, K}, wd[2] = {K, N}, bd[1] = {N}, rd[2] = {M, N};
            float *A = malloc((size_t)(M * K) * 4), *W = malloc((size_t)(K * N) * 4);
            float *b = malloc((size_t)N * 4), *R0 = malloc((size_t)(M * N) * 4);
            t_fill(A, (size_t)(M * K), 11u);
            t_fill(W, (size_t)(K * N), 12u);
            t_fill(b, (size_t)N, 13u);
            t_fill(R0, (size_t)(M * N), 14u);
            frt_value in[4] = {frt_test_value(FRT_FLOAT32, 2, ad, A), frt_test_value(FRT_FLOAT32, 2, wd, W),
                               frt_test_value(FRT_FLOAT32, 1, bd, b), frt_test_value(FRT_FLOAT32, 2, rd, R0)};
            frt_onnx_attr act = frt_test_attr_int("activation", 0);
            frt_test_op op = {.op_type = "FusedMatMul", .opset = 1, .attrs = &act, .n_attrs = 1,
                              .inputs = in, .n_in = 4, .const_mask = 6u, .n_out = 1,
                              .weights_precision = prec};
            frt_value out;
            const char *name = NULL;
            CHECK_OK(frt_test_run_op(&op, &out, &name));
            CHECK_MSG(name && strstr(name, prec == 0 ? "_f32_" : prec == 1 ? "_f16w_" : "_bf16w_"),
                      "FusedMatMul kernel %s",
                      name ? name : "(null)");
            double *R = malloc((size_t)(M * N) * 8), *S = malloc((size_t)(M * N) * 8);
            float *C0 = malloc((size_t)(M * N) * 4);
            for (int64_t i = 0; i < M * N; i++) C0[i] = R0[i] + b[i % N];
            ref(0, 0, M, N, K, 1.0f, A, K, W, FRT_WPREC_F32, 1.0f, C0, R, S);
            for (int64_t i = 0; i < M * N; i++) S[i] += fabs(R0[i]) + fabs(b[i % N]);
            CHECK_MSG(worst(out.data, R, S, M * N, U[prec] + (double)K * 0x1p-23 + 0x1p-22) <= 1.0,
                      "FusedMatMul prec %d M=%lld", prec, (long long)M);
            free(out.data), free(A), free(W), free(b), free(R0), free(R), free(S), free(C0);
        }
}

/* fp16 cannot hold 1e5: the node keeps float32 weights (exact results, f32 kernel). */
static void test_f16_overflow(void) {
    int64_t K = 40, N = 20, ad[2] = {1, K}, bd[2] = {K, N};
    float A[40], B[800];
    t_fill(A, 40, 8u);
    t_fill(B, 800, 9u);
    B[77] = 1e5f;
    frt_value in[2] = {frt_test_value(FRT_FLOAT32, 2, ad, A), frt_test_value(FRT_FLOAT32, 2, bd, B)};
    frt_test_op op = {0};
    op.op_type = "MatMul";
    op.inputs = in;
    op.n_in = 2;
    op.const_mask = 2;
    op.n_out = 1;
    op.weights_precision = FRT_WEIGHTS_FP16;
    frt_value out;
    const char *name = NULL;
    CHECK_OK(frt_test_run_op(&op, &out, &name));
    CHECK_MSG(name && !strstr(name, "f16w"), "kernel %s", name ? name : "(null)");
    double R[20], S[20];
    ref(0, 0, 1, N, K, 1.0f, A, K, B, FRT_WPREC_F32, 0.0f, NULL, R, S);
    CHECK(worst(out.data, R, S, N, (double)K * 0x1p-23 + 0x1p-22) <= 1.0);
    free(out.data);
    /* and the packer reports it */
    void *d = aligned_alloc(64, (frt_wpack_bytes(FRT_WPREC_F16, K, N) + 63) / 64 * 64);
    CHECK(frt_wpack_fill(FRT_WPREC_F16, 0, K, N, B, N, d) == 0);
    CHECK(frt_wpack_fill(FRT_WPREC_BF16, 0, K, N, B, N, d) == 1);
    free(d);
}

/* Unknown weights_precision values are rejected before the model is read. */
static void test_bad_options(void) {
    frt_options opt;
    frt_options_init(&opt);
    CHECK(opt.weights_precision == FRT_WEIGHTS_FP32);
    static const int bad[] = {-1, 3, 16, 1000};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        opt.weights_precision = (frt_weights_precision)bad[i];
        frt_model *m = NULL;
        frt_status st = frt_model_load_buffer("x", 1, NULL, &opt, &m);
        CHECK_MSG(st == FRT_ERR_INVALID_ARGUMENT && m == NULL && err_has("weights_precision"),
                  "weights_precision %d: status %d, '%s'", bad[i], (int)st, frt_last_error());
    }
}

int main(void) {
    test_kernels();
    test_ops();
    test_fused_matmul();
    test_f16_overflow();
    test_bad_options();
    TEST_MAIN_END();
}
