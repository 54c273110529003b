/* Gemm and MatMul through the op harness against naive references; the direct small-product
 * kernels (mm_small.h) of every tier up to this process's against a double reference and their
 * portable twin. */
#include <stdint.h>

#include "op_harness.h"
#include "ops/mm_small.h"
#include "ops/sgemm.h"
#include "ops/cpu.h"
#include "test_util.h"

/* ---------------------------------------------------------------------------------------- */
/* Gemm                                                                                     */
/* ---------------------------------------------------------------------------------------- */

enum { C_NONE, C_SCALAR, C_N, C_1N, C_M1, C_MN, C_11, N_CFORMS };
static const char *cform_name[] = {"none", "scalar", "[N]", "[1,N]", "[M,1]", "[M,N]", "[1,1]"};

static int c_shape(int form, int64_t M, int64_t N, int64_t *dims) {
    switch (form) {
    case C_SCALAR: return 0;
    case C_N: dims[0] = N; return 1;
    case C_1N: dims[0] = 1; dims[1] = N; return 2;
    case C_M1: dims[0] = M; dims[1] = 1; return 2;
    case C_MN: dims[0] = M; dims[1] = N; return 2;
    case C_11: dims[0] = 1; dims[1] = 1; return 2;
    default: return -1;
    }
}

static float act_apply(const frt_act *a, float v) {
    if (a->kind == FRT_ACT_RELU) return v > 0 ? v : 0;
    if (a->kind == FRT_ACT_CLIP) return v < a->lo ? a->lo : v > a->hi ? a->hi : v;
    return v;
}

typedef struct gemm_case {
    int ta, tb;
    int64_t M, N, K;
    float alpha, beta;
    int cform;
    unsigned const_mask;
    int unknown_dims;
    frt_act act;
    int threads;
} gemm_case;

/* Runs a Gemm case and compares; returns 1 on match. kname receives the kernel name. */
static int run_gemm(const gemm_case *g, const char **kname) {
    int64_t M = g->M, N = g->N, K = g->K;
    int64_t ad[2] = {g->ta ? K : M, g->ta ? M : K}, bd[2] = {g->tb ? N : K, g->tb ? K : N};
    int64_t cd[2];
    int cr = c_shape(g->cform, M, N, cd);
    size_t na = (size_t)(M * K), nb = (size_t)(K * N), nc = 1;
    for (int i = 0; i < cr; i++) nc *= (size_t)cd[i];
    float *A = malloc(na * 4 + 4), *B = malloc(nb * 4 + 4), *C = malloc(nc * 4 + 4);
    float *R = malloc((size_t)(M * N) * 4 + 4);
    t_fill(A, na, (unsigned)(M + 3 * K));
    t_fill(B, nb, (unsigned)(N + 5 * K));
    t_fill(C, nc, 17u);
    int64_t cm = cr == 2 ? cd[0] : 1, cn = cr >= 1 ? cd[cr - 1] : 1;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += (double)(g->ta ? A[k * M + i] : A[i * K + k]) *
                     (double)(g->tb ? B[j * K + k] : B[k * N + j]);
            s *= g->alpha;
            if (g->cform != C_NONE)
                s += (double)g->beta * C[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
            R[i * N + j] = act_apply(&g->act, (float)s);
        }
    frt_value in[3] = {frt_test_value(FRT_FLOAT32, 2, ad, A), frt_test_value(FRT_FLOAT32, 2, bd, B),
                       frt_test_value(FRT_FLOAT32, cr, cd, C)};
    frt_onnx_attr attrs[4] = {frt_test_attr_int("transA", g->ta), frt_test_attr_int("transB", g->tb),
                              frt_test_attr_float("alpha", g->alpha),
                              frt_test_attr_float("beta", g->beta)};
    frt_test_op op = {0};
    op.op_type = "Gemm";
    op.attrs = attrs;
    op.n_attrs = 4;
    op.inputs = in;
    op.n_in = g->cform == C_NONE ? 2 : 3;
    op.const_mask = g->const_mask;
    op.unknown_dims = g->unknown_dims;
    op.act = g->act;
    op.n_out = 1;
    op.n_threads = g->threads;
    frt_value out;
    int ok = 0;
    frt_status st = frt_test_run_op(&op, &out, kname);
    if (st != FRT_OK) {
        fprintf(stderr, "  Gemm failed: %s\n", frt_last_error());
    } else {
        ok = out.rank == 2 && out.dims[0] == M && out.dims[1] == N &&
             t_close(out.data, R, (size_t)(M * N), 1e-4f, 2e-5f * (float)(K + 1));
        free(out.data);
    }
    if (!ok)
        fprintf(stderr, "  Gemm ta=%d tb=%d M=%lld N=%lld K=%lld alpha=%g beta=%g C=%s const=%u "
                        "unknown=%d act=%d threads=%d\n",
                g->ta, g->tb, (long long)M, (long long)N, (long long)K, g->alpha, g->beta,
                cform_name[g->cform], g->const_mask, g->unknown_dims, (int)g->act.kind,
                g->threads);
    free(A); free(B); free(C); free(R);
    return ok;
}

static void test_gemm_matrix(void) {
    static const int64_t sizes[][3] = {{3, 2, 2},   {5, 7, 9},    {1, 33, 300}, {1, 5, 3},
                                       {37, 19, 70}, {2, 130, 17}, {64, 1, 100}, {17, 65, 129}};
    static const float ab[][2] = {{1, 1}, {0.5f, -1.5f}, {2, 0}};
    int n = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (int cf = 0; cf < N_CFORMS; cf++)
                    for (unsigned cm = 0; cm < 8; cm += 2) { /* B and C constant or not */
                        gemm_case g = {ta, tb, sizes[s][0], sizes[s][1], sizes[s][2], 1, 1, cf, cm,
                                       0, {FRT_ACT_NONE, 0, 0}, 0};
                        g.alpha = ab[n % 3][0];
                        g.beta = ab[n % 3][1];
                        g.unknown_dims = (n % 5) == 0;
                        if (n % 7 == 1) g.act = (frt_act){FRT_ACT_RELU, 0, INFINITY};
                        if (n % 7 == 3) g.act = (frt_act){FRT_ACT_CLIP, -0.25f, 0.5f};
                        n++;
                        CHECK(run_gemm(&g, NULL));
                    }
}

static void test_gemm_kernels(void) {
    const char *name = NULL;
    /* batch 1 with constant weights: gemv, torch Linear layout (transB=1) and bias */
    gemm_case g = {0, 1, 1, 300, 257, 1, 1, C_N, 2 | 4, 0, {FRT_ACT_RELU, 0, INFINITY}, 0};
    CHECK(run_gemm(&g, &name));
    CHECK_MSG(name && strncmp(name, "gemv_f32w", 9) == 0 && strstr(name, "_bias") &&
                  strstr(name, "_relu"),
              "kernel %s", name ? name : "(null)");
    /* flatrt's packed-weight GEMV of the tier (gemv.h), with or without a BLAS */
    char want[64];
    snprintf(want, sizeof want, "gemv_f32w_%s_bias_relu", frt_isa_name(frt_cpu_tier()));
    CHECK_MSG(name && strcmp(name, want) == 0, "kernel %s, expected %s", name ? name : "(null)",
              want);
    /* dynamic batch with constant weights: gemm kernel, packed when flatrt's kernel runs it */
    gemm_case g2 = {0, 1, 20, 70, 90, 1, 1, C_N, 2 | 4, 1, {FRT_ACT_NONE, 0, 0}, 0};
    CHECK(run_gemm(&g2, &name));
    CHECK_MSG(name && strncmp(name, "gemm_f32_", 9) == 0, "kernel %s", name ? name : "(null)");
    if (!frt_sgemm_pb_uses_blas())
        CHECK_MSG(name && strstr(name, "packed") && strstr(name, frt_isa_name(frt_cpu_tier())),
                  "kernel %s", name ? name : "(null)");
    /* ... and the same kernel run at batch 1 */
    g2.M = 1;
    CHECK(run_gemm(&g2, NULL));
    g2.tb = 0;
    CHECK(run_gemm(&g2, NULL));
    /* small product with constant weights and rows known (a Linear layer in a Loop body: 4 rows
       of 16 by a 16x16 weight): the tier's direct small kernel, alpha folded into the weights,
       bias row and activation after; B's original may be released */
    for (int tb = 0; tb < 2; tb++) {
        gemm_case g7 = {0, tb, 4, 16, 16, 0.75f, 1, C_N, 2 | 4, 0, {FRT_ACT_RELU, 0, INFINITY}, 0};
        CHECK(run_gemm(&g7, &name));
        snprintf(want, sizeof want, "gemm_f32_small_%s_bias_relu",
                 frt_isa_name(frt_mm_small_pick(frt_cpu_tier())->isa));
        CHECK_MSG(name && strcmp(name, want) == 0, "kernel %s, expected %s",
                  name ? name : "(null)", want);
        gemm_case g8 = {0, tb, 3, 7, 33, 1, 0, C_NONE, 2, 0, {FRT_ACT_NONE, 0, 0}, 0};
        CHECK(run_gemm(&g8, &name));
        CHECK_MSG(name && strncmp(name, "gemm_f32_small_", 15) == 0, "kernel %s",
                  name ? name : "(null)");
    }
    /* threaded: big enough to split */
    gemm_case g3 = {0, 1, 130, 300, 200, 1, 0.5f, C_M1, 2, 0, {FRT_ACT_CLIP, 0, 6}, 2};
    CHECK(run_gemm(&g3, NULL));
    gemm_case g4 = {1, 0, 1, 1000, 400, 1, 1, C_1N, 2 | 4, 0, {FRT_ACT_NONE, 0, 0}, 2};
    CHECK(run_gemm(&g4, NULL));
    gemm_case g5 = {0, 0, 300, 9, 300, 1, 1, C_MN, 2, 0, {FRT_ACT_NONE, 0, 0}, 2};
    CHECK(run_gemm(&g5, NULL));
    /* one output column (DLRM's last layer: [32,256] x [1,256]^T + bias), constant B: a GEMV,
       also with A transposed */
    gemm_case g6 = {0, 1, 32, 1, 256, 1, 1, C_N, 2 | 4, 0, {FRT_ACT_NONE, 0, 0}, 2};
    CHECK(run_gemm(&g6, NULL));
    g6.ta = 1;
    g6.M = 300;
    CHECK(run_gemm(&g6, NULL));
}

static frt_status run_simple(const char *op_type, frt_value *in, int n_in, const frt_onnx_attr *attrs,
                             size_t n_attrs, frt_value *out) {
    frt_test_op op = {0};
    op.op_type = op_type;
    op.inputs = in;
    op.n_in = n_in;
    op.attrs = attrs;
    op.n_attrs = n_attrs;
    op.n_out = 1;
    frt_status st = frt_test_run_op(&op, out, NULL);
    if (st == FRT_OK) free(out->data);
    return st;
}

static void test_gemm_errors(void) {
    float buf[64] = {0};
    frt_value out;
    int64_t a[2] = {3, 4}, b[2] = {5, 6}, c3[1] = {4}, b3[3] = {1, 4, 6};
    frt_value in[3] = {frt_test_value(FRT_FLOAT32, 2, a, buf), frt_test_value(FRT_FLOAT32, 2, b, buf),
                       frt_test_value(FRT_FLOAT32, 1, c3, buf)};
    CHECK(run_simple("Gemm", in, 2, NULL, 0, &out) == FRT_ERR_SHAPE);
    CHECK_MSG(strstr(frt_last_error(), "test_node") && strstr(frt_last_error(), "K="), "msg: %s",
              frt_last_error());
    /* transB fixes K: A [3,4] x B^T where B is [6,4] */
    int64_t bt[2] = {6, 4};
    in[1] = frt_test_value(FRT_FLOAT32, 2, bt, buf);
    frt_onnx_attr tb = frt_test_attr_int("transB", 1);
    CHECK(run_simple("Gemm", in, 2, &tb, 1, &out) == FRT_OK);
    /* C [4] does not broadcast to [3,6] */
    CHECK(run_simple("Gemm", in, 3, &tb, 1, &out) == FRT_ERR_SHAPE);
    CHECK(strstr(frt_last_error(), "broadcast") != NULL);
    /* rank 3 A */
    in[0] = frt_test_value(FRT_FLOAT32, 3, b3, buf);
    CHECK(run_simple("Gemm", in, 2, &tb, 1, &out) == FRT_ERR_SHAPE);
    /* wrong dtype */
    int32_t ibuf[64] = {0};
    in[0] = frt_test_value(FRT_INT32, 2, a, ibuf);
    CHECK(run_simple("Gemm", in, 2, &tb, 1, &out) == FRT_ERR_UNSUPPORTED);
    CHECK(strstr(frt_last_error(), "dtype") != NULL);
    /* missing B */
    CHECK(run_simple("Gemm", in, 1, NULL, 0, &out) != FRT_OK);
}

/* ---------------------------------------------------------------------------------------- */
/* MatMul                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* numpy matmul reference; returns output rank and fills odims, or -1 on mismatch. */
static int ref_matmul(int ra, const int64_t *ad, const float *A, int rb, const int64_t *bd,
                      const float *B, int64_t *od, float *Y) {
    int64_t a2[FRT_MAX_RANK + 1], b2[FRT_MAX_RANK + 1];
    int ra2 = ra, rb2 = rb;
    if (ra == 1) { a2[0] = 1; a2[1] = ad[0]; ra2 = 2; } else memcpy(a2, ad, (size_t)ra * 8);
    if (rb == 1) { b2[0] = bd[0]; b2[1] = 1; rb2 = 2; } else memcpy(b2, bd, (size_t)rb * 8);
    int64_t M = a2[ra2 - 2], K = a2[ra2 - 1], N = b2[rb2 - 1];
    if (b2[rb2 - 2] != K) return -1;
    int br = (ra2 > rb2 ? ra2 : rb2) - 2;
    int64_t bat[FRT_MAX_RANK], ab[FRT_MAX_RANK], bb[FRT_MAX_RANK];
    for (int i = 0; i < br; i++) {
        int ia = i - (br - (ra2 - 2)), ib = i - (br - (rb2 - 2));
        ab[i] = ia >= 0 ? a2[ia] : 1;
        bb[i] = ib >= 0 ? b2[ib] : 1;
        if (ab[i] != bb[i] && ab[i] != 1 && bb[i] != 1) return -1;
        bat[i] = ab[i] > bb[i] ? ab[i] : bb[i];
    }
    int64_t nbat = 1;
    for (int i = 0; i < br; i++) nbat *= bat[i];
    for (int64_t t = 0; t < nbat; t++) {
        int64_t rem = t, ao = 0, bo = 0, as = 1, bs = 1;
        for (int d = br - 1; d >= 0; d--) {
            int64_t idx = rem % bat[d];
            rem /= bat[d];
            ao += (ab[d] == 1 ? 0 : idx) * as;
            bo += (bb[d] == 1 ? 0 : idx) * bs;
            as *= ab[d];
            bs *= bb[d];
        }
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++)
                    s += (double)A[ao * M * K + i * K + k] * B[bo * K * N + k * N + j];
                Y[t * M * N + i * N + j] = (float)s;
            }
    }
    int r = 0;
    for (int i = 0; i < br; i++) od[r++] = bat[i];
    if (ra != 1) od[r++] = M;
    if (rb != 1) od[r++] = N;
    return r;
}

static int64_t numel_of(int r, const int64_t *d) {
    int64_t n = 1;
    for (int i = 0; i < r; i++) n *= d[i];
    return n;
}

static int run_matmul(int ra, const int64_t *ad, int rb, const int64_t *bd, unsigned const_mask,
                      int unknown, frt_act act, int threads) {
    int64_t na = numel_of(ra, ad), nb = numel_of(rb, bd);
    float *A = malloc((size_t)na * 4 + 4), *B = malloc((size_t)nb * 4 + 4);
    t_fill(A, (size_t)na, 3u + (unsigned)na);
    t_fill(B, (size_t)nb, 5u + (unsigned)nb);
    int64_t od[FRT_MAX_RANK];
    /* output size bound: batch product * M * N */
    float *R = malloc(((size_t)(na + 1) * (size_t)(nb + 1) + 4096) * 4);
    int orank = ref_matmul(ra, ad, A, rb, bd, B, od, R);
    int64_t no = numel_of(orank, od);
    for (int64_t i = 0; i < no; i++) R[i] = act_apply(&act, R[i]);
    frt_value in[2] = {frt_test_value(FRT_FLOAT32, ra, ad, A), frt_test_value(FRT_FLOAT32, rb, bd, B)};
    frt_test_op op = {0};
    op.op_type = "MatMul";
    op.inputs = in;
    op.n_in = 2;
    op.const_mask = const_mask;
    op.unknown_dims = unknown;
    op.act = act;
    op.n_out = 1;
    op.n_threads = threads;
    frt_value out;
    int ok = 0;
    frt_status st = frt_test_run_op(&op, &out, NULL);
    if (st != FRT_OK) {
        fprintf(stderr, "  MatMul failed: %s\n", frt_last_error());
    } else {
        ok = out.rank == orank;
        for (int i = 0; ok && i < orank; i++) ok = out.dims[i] == od[i];
        ok = ok && t_close(out.data, R, (size_t)no, 1e-4f, 1e-4f);
        free(out.data);
    }
    if (!ok) {
        fprintf(stderr, "  MatMul A rank %d [", ra);
        for (int i = 0; i < ra; i++) fprintf(stderr, "%lld,", (long long)ad[i]);
        fprintf(stderr, "] B rank %d [", rb);
        for (int i = 0; i < rb; i++) fprintf(stderr, "%lld,", (long long)bd[i]);
        fprintf(stderr, "] const=%u unknown=%d threads=%d\n", const_mask, unknown, threads);
    }
    free(A); free(B); free(R);
    return ok;
}

static void test_matmul(void) {
    struct { int ra; int64_t ad[5]; int rb; int64_t bd[5]; } cases[] = {
        {1, {7}, 1, {7}},                       /* dot -> scalar */
        {1, {300}, 1, {300}},
        {1, {9}, 2, {9, 5}},                    /* [K]x[K,N] -> [N] */
        {1, {70}, 2, {70, 130}},
        {2, {5, 9}, 1, {9}},                    /* [M,K]x[K] -> [M] */
        {2, {70, 130}, 1, {130}},
        {2, {5, 9}, 2, {9, 3}},
        {2, {37, 65}, 2, {65, 33}},
        {3, {2, 1, 32}, 3, {2, 32, 1}},         /* DeepAndWide bmm */
        {3, {1, 1, 32}, 3, {1, 32, 1}},
        {4, {2, 1, 5, 7}, 3, {3, 7, 4}},        /* batch broadcast */
        {4, {2, 1, 40, 70}, 3, {3, 70, 50}},
        {2, {5, 7}, 3, {3, 7, 4}},              /* A broadcast over B's batch */
        {3, {3, 20, 70}, 2, {70, 61}},          /* fold A's batch into M */
        {3, {4, 17, 9}, 1, {9}},                /* [b,M,K]x[K] -> [b,M] */
        {1, {9}, 3, {4, 9, 6}},                 /* [K]x[b,K,N] -> [b,N] */
        {1, {90}, 3, {4, 90, 60}},
        {3, {1, 1, 100}, 2, {100, 200}},        /* folded M == 1 */
        {5, {2, 1, 3, 4, 5}, 4, {3, 1, 5, 2}},
        {3, {5, 9, 64}, 3, {5, 64, 9}},         /* direct small kernel (dlrm interaction) */
        {3, {3, 13, 17}, 3, {3, 17, 33}},
        {4, {2, 3, 11, 20}, 4, {2, 3, 20, 19}},
        {2, {7, 31}, 2, {31, 40}},              /* 2-D small product */
        {3, {3, 10, 12}, 2, {12, 47}},          /* folded M = 30, small */
        {3, {2, 0, 5}, 2, {5, 3}},              /* empty M */
        {2, {3, 0}, 2, {0, 4}},                 /* K == 0 -> zeros */
    };
    frt_act none = {FRT_ACT_NONE, 0, 0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (unsigned cm = 0; cm < 3; cm++)
            for (int unk = 0; unk < 2; unk++)
                CHECK(run_matmul(cases[i].ra, cases[i].ad, cases[i].rb, cases[i].bd, cm, unk, none,
                                 0));
    /* fused activations and threads on larger problems */
    int64_t a1[3] = {3, 100, 90}, b1[2] = {90, 120}, b2[3] = {3, 90, 120};
    CHECK(run_matmul(3, a1, 2, b1, 2, 0, (frt_act){FRT_ACT_RELU, 0, INFINITY}, 2));
    CHECK(run_matmul(3, a1, 3, b2, 0, 0, (frt_act){FRT_ACT_CLIP, -0.5f, 0.5f}, 2));
    CHECK(run_matmul(3, a1, 3, b2, 0, 0, (frt_act){FRT_ACT_NONE, 0, 0}, 0));
    int64_t a4[3] = {32, 9, 64}, b5[3] = {32, 64, 9};
    CHECK(run_matmul(3, a4, 3, b5, 0, 0, none, 2));
    CHECK(run_matmul(3, a4, 3, b5, 0, 0, (frt_act){FRT_ACT_RELU, 0, INFINITY}, 0));
    int64_t a2[2] = {1, 600}, b3[2] = {600, 700};
    CHECK(run_matmul(2, a2, 2, b3, 2, 0, none, 2));
    int64_t a3[2] = {400, 300}, b4[1] = {300};
    CHECK(run_matmul(2, a3, 1, b4, 0, 0, none, 2));
}

/* The direct small kernel of each tier up to frt_cpu_tier() on odd sizes with padded leading
 * dimensions: against a double reference, against the portable twin, and nothing written
 * outside Y's M x N elements (the padding keeps a sentinel). */
static void test_mm_small_variants(void) {
    static const int64_t Ms[] = {1, 2, 3, 5, 7, 9, 11, 12, 13, 17, 25};
    static const int64_t Ns[] = {1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47, 65};
    static const int64_t Ks[] = {1, 2, 3, 9, 64, 67};
    const frt_mm_small_variant *pv = frt_mm_small_pick(FRT_ISA_PORTABLE);
    CHECK(pv->isa == FRT_ISA_PORTABLE);
    for (int isa = FRT_ISA_PORTABLE; isa <= (int)frt_cpu_tier(); isa++) {
        const frt_mm_small_variant *v = frt_mm_small_pick((frt_isa)isa);
        if ((int)v->isa != isa) continue;
        int bad = 0;
        for (size_t mi = 0; mi < sizeof Ms / sizeof Ms[0]; mi++)
            for (size_t ni = 0; ni < sizeof Ns / sizeof Ns[0]; ni++)
                for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0] && !bad; ki++) {
                    int64_t M = Ms[mi], N = Ns[ni], K = Ks[ki];
                    int64_t lda = K + 3, ldb = N + 5, ldy = N + 2;
                    size_t ny = (size_t)(M * ldy);
                    float *A = malloc((size_t)(M * lda) * 4), *B = malloc((size_t)(K * ldb) * 4);
                    float *Y = malloc((ny + 16) * 4), *P = malloc(ny * 4), *R = malloc(ny * 4);
                    t_fill(A, (size_t)(M * lda), 11u + (unsigned)(M * 31 + K));
                    t_fill(B, (size_t)(K * ldb), 17u + (unsigned)(N * 7 + K));
                    for (size_t i = 0; i < ny + 16; i++) Y[i] = 12345.0f;
                    v->fn(M, N, K, A, lda, B, ldb, Y, ldy);
                    pv->fn(M, N, K, A, lda, B, ldb, P, ldy);
                    float *yc = malloc(ny * 4), *pc = malloc(ny * 4);
                    size_t n = 0;
                    for (int64_t i = 0; i < M; i++)
                        for (int64_t j = 0; j < N; j++, n++) {
                            double sum = 0;
                            for (int64_t k = 0; k < K; k++)
                                sum += (double)A[i * lda + k] * B[k * ldb + j];
                            R[n] = (float)sum;
                            yc[n] = Y[i * ldy + j];
                            pc[n] = P[i * ldy + j];
                        }
                    int ok = t_close(yc, R, n, 1e-5f, 1e-5f) && t_close(yc, pc, n, 1e-5f, 1e-5f);
                    for (int64_t i = 0; i < M; i++)
                        for (int64_t j = N; j < ldy; j++) ok = ok && Y[i * ldy + j] == 12345.0f;
                    for (size_t i = ny; i < ny + 16; i++) ok = ok && Y[i] == 12345.0f;
                    if (!ok) {
                        fprintf(stderr, "  mm_small %s M=%lld N=%lld K=%lld\n", v->name,
                                (long long)M, (long long)N, (long long)K);
                        bad = 1;
                    }
                    CHECK(ok);
                    free(A); free(B); free(Y); free(P); free(R); free(yc); free(pc);
                }
    }
}

static void test_matmul_errors(void) {
    float buf[64] = {0};
    frt_value out;
    int64_t a[2] = {3, 4}, b[2] = {5, 6};
    frt_value in[2] = {frt_test_value(FRT_FLOAT32, 2, a, buf), frt_test_value(FRT_FLOAT32, 2, b, buf)};
    CHECK(run_simple("MatMul", in, 2, NULL, 0, &out) == FRT_ERR_SHAPE);
    CHECK_MSG(strstr(frt_last_error(), "inner") && strstr(frt_last_error(), "MatMul"), "msg: %s",
              frt_last_error());
    int64_t a3[3] = {2, 3, 4}, b3[3] = {3, 4, 5};
    in[0] = frt_test_value(FRT_FLOAT32, 3, a3, buf);
    in[1] = frt_test_value(FRT_FLOAT32, 3, b3, buf);
    CHECK(run_simple("MatMul", in, 2, NULL, 0, &out) == FRT_ERR_SHAPE);
    CHECK(strstr(frt_last_error(), "broadcast") != NULL);
    in[1] = frt_test_value(FRT_FLOAT32, 0, b3, buf);
    CHECK(run_simple("MatMul", in, 2, NULL, 0, &out) == FRT_ERR_SHAPE);
    int64_t b4[2] = {4, 5};
    in[1] = frt_test_value(FRT_FLOAT16, 2, b4, buf);
    CHECK(run_simple("MatMul", in, 2, NULL, 0, &out) == FRT_ERR_UNSUPPORTED);
}

int main(void) {
    /* the kernels of the ISA tier (frt_cpu_tier(), capped by FRT_ISA: run the binary under
     * FRT_ISA=portable|avx2|avx512 to cover each tier; BLAS builds use OpenBLAS below AVX-512) */
    printf("tier %s\n", frt_isa_name(frt_cpu_tier()));
    test_gemm_matrix();
    test_gemm_kernels();
    test_gemm_errors();
    test_matmul();
    test_mm_small_variants();
    test_matmul_errors();
    TEST_MAIN_END();
}
