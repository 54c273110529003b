/* frt_sgemm and friends: BLAS (when built), the blocked kernel of every ISA tier the host has
 * (frt_sgemm_tier / frt_sgemv_tier with an explicit cap), packed operands and the multi-threaded
 * splitters against a double-precision naive reference on odd sizes and tails. */
#include <stdint.h>

#include "ops/sgemm.h"
#include "util/threadpool.h"
#include "test_util.h"

/* Reference: C = alpha op(A) op(B) + beta C (beta == 0: C ignored). */
static void ref_gemm(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                     int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += (double)(ta ? A[k * lda + i] : A[i * lda + k]) *
                     (double)(tb ? B[j * ldb + k] : B[k * ldb + j]);
            double c = beta == 0.0f ? 0.0 : (double)beta * C[i * ldc + j];
            C[i * ldc + j] = (float)(alpha * s + c);
        }
}

enum { IMPL_AUTO, IMPL_PORTABLE, IMPL_AVX2, IMPL_AVX512, IMPL_PACK_A, IMPL_PACK_B, IMPL_MT,
       IMPL_PA_MT, IMPL_PB_MT, N_IMPL };
static const char *impl_name[] = {"frt_sgemm", "tier-portable", "tier-avx2", "tier-avx512",
                                  "pack_a", "pack_b", "mt", "pa_mt", "pb_mt"};
/* The explicit tier of IMPL_PORTABLE..IMPL_AVX512 (a cap above the host's tier is skipped). */
static frt_isa impl_tier(int impl) { return (frt_isa)(impl - IMPL_PORTABLE); }
static int impl_runs(int impl) {
    return impl < IMPL_PORTABLE || impl > IMPL_AVX512 || impl_tier(impl) <= frt_cpu_get()->host;
}

static frt_threadpool *g_tp;

/* Runs one case through implementation `impl`; returns 1 when it matches the reference. */
static int run_case(int impl, int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha,
                    float beta, int pad) {
    int64_t arows = ta ? K : M, acols = ta ? M : K, brows = tb ? N : K, bcols = tb ? K : N;
    int64_t lda = acols + pad, ldb = bcols + pad, ldc = N + pad;
    size_t na = (size_t)(arows * lda) + 1, nb = (size_t)(brows * ldb) + 1,
           nc = (size_t)(M * ldc) + 1;
    float *A = malloc(na * 4), *B = malloc(nb * 4), *C = malloc(nc * 4), *R = malloc(nc * 4);
    t_fill(A, na, (unsigned)(M * 7 + K));
    t_fill(B, nb, (unsigned)(N * 13 + K));
    t_fill(C, nc, 99u);
    if (beta == 0.0f)
        for (size_t i = 0; i < nc; i++) C[i] = NAN; /* must not be read */
    memcpy(R, C, nc * 4);
    ref_gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, R, ldc);
    float *pk = NULL;
    switch (impl) {
    case IMPL_AUTO:
        frt_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        break;
    case IMPL_PORTABLE:
    case IMPL_AVX2:
    case IMPL_AVX512:
        frt_sgemm_tier(impl_tier(impl), ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        break;
    case IMPL_PACK_A:
    case IMPL_PA_MT:
        pk = aligned_alloc(64, (frt_sgemm_pack_a_size(M, K) * 4 + 64) / 64 * 64);
        frt_sgemm_pack_a(ta, M, K, A, lda, pk);
        if (impl == IMPL_PACK_A) frt_sgemm_pa(M, N, K, alpha, pk, tb, B, ldb, beta, C, ldc);
        else frt_sgemm_pa_mt(g_tp, M, N, K, alpha, pk, tb, B, ldb, beta, C, ldc);
        break;
    case IMPL_PACK_B:
    case IMPL_PB_MT:
        pk = aligned_alloc(64, (frt_sgemm_pack_b_size(K, N) * 4 + 64) / 64 * 64);
        frt_sgemm_pack_b(tb, K, N, B, ldb, pk);
        if (impl == IMPL_PACK_B) frt_sgemm_pb(ta, M, N, K, alpha, A, lda, pk, beta, C, ldc);
        else frt_sgemm_pb_mt(g_tp, ta, M, N, K, alpha, A, lda, pk, beta, C, ldc);
        break;
    case IMPL_MT:
        frt_sgemm_mt(g_tp, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        break;
    }
    /* compare the M x N block and check that padding columns are untouched */
    int ok = 1;
    float *cc = malloc((size_t)(M * N + 1) * 4), *rr = malloc((size_t)(M * N + 1) * 4);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            cc[i * N + j] = C[i * ldc + j];
            rr[i * N + j] = R[i * ldc + j];
        }
    if (!t_close(cc, rr, (size_t)(M * N), 1e-4f, 1e-4f * (float)(K + 1))) ok = 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = N; j < ldc; j++)
            if (memcmp(&C[i * ldc + j], &R[i * ldc + j], 4) != 0) ok = 0;
    if (!ok)
        fprintf(stderr, "  %s ta=%d tb=%d M=%lld N=%lld K=%lld alpha=%g beta=%g pad=%d\n",
                impl_name[impl], ta, tb, (long long)M, (long long)N, (long long)K, alpha, beta,
                pad);
    free(A); free(B); free(C); free(R); free(cc); free(rr); free(pk);
    return ok;
}

static void test_sizes(void) {
    static const int64_t sizes[][3] = {
        {1, 1, 1},   {1, 17, 5},  {7, 1, 9},     {1, 33, 300}, {5, 1, 300},   {6, 16, 8},
        {7, 17, 3},  {13, 31, 29}, {23, 9, 257}, {2, 50, 513}, {150, 37, 70}, {37, 1030, 19},
        {145, 20, 260}, {12, 2, 1}, {64, 64, 64}, {300, 70, 33}, {12, 32, 17}, {24, 64, 256},
        {49, 97, 513}, {11, 31, 7},
        /* last panels of 3, 4 and 5 rows over several K blocks; N above the column block */
        {9, 48, 300}, {28, 33, 520}, {17, 1100, 40},
        /* a last panel of 2 rows (M = 128 on the 6-row tile), odd and even K */
        {14, 48, 301}, {128, 64, 64}};
    static const float ab[][2] = {{1, 0}, {1, 1}, {0.5f, -2}, {-1.5f, 0}};
    for (int impl = 0; impl < N_IMPL; impl++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0] && impl_runs(impl); s++)
            for (int ta = 0; ta < 2; ta++)
                for (int tb = 0; tb < 2; tb++)
                    for (size_t c = 0; c < 4; c++) {
                        int pad = (int)((s + c) % 3);
                        CHECK(run_case(impl, ta, tb, sizes[s][0], sizes[s][1], sizes[s][2],
                                       ab[c][0], ab[c][1], pad));
                    }
}

/* Big enough to be split across threads by the _mt variants. */
static void test_mt_split(void) {
    for (int impl = IMPL_MT; impl <= IMPL_PB_MT; impl++) {
        CHECK(run_case(impl, 0, 1, 67, 700, 130, 1, 0, 1));   /* split N */
        CHECK(run_case(impl, 1, 0, 900, 40, 120, 1, 1, 0));   /* split M */
        CHECK(run_case(impl, 0, 0, 301, 301, 50, 2, 0.5f, 2));
    }
}

static void test_k_zero(void) {
    float C[6] = {1, 2, 3, 4, 5, 6};
    float A[1] = {0}, B[1] = {0};
    frt_sgemm(0, 0, 2, 3, 0, 1.0f, A, 1, B, 3, 2.0f, C, 3);
    CHECK(C[0] == 2 && C[5] == 12);
    for (int t = FRT_ISA_PORTABLE; t <= (int)frt_cpu_get()->host; t++) {
        for (int i = 0; i < 6; i++) C[i] = NAN;
        frt_sgemm_tier((frt_isa)t, 0, 0, 2, 3, 0, 1.0f, A, 1, B, 3, 0.0f, C, 3);
        CHECK(C[0] == 0 && C[5] == 0);
    }
}

static void ref_gemv(int ta, int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
                     const float *x, float beta, float *y) {
    int64_t ny = ta ? N : M, nx = ta ? M : N;
    for (int64_t o = 0; o < ny; o++) {
        double s = 0;
        for (int64_t i = 0; i < nx; i++)
            s += (double)(ta ? A[i * lda + o] : A[o * lda + i]) * x[i];
        y[o] = (float)(alpha * s + (beta == 0.0f ? 0.0 : (double)beta * y[o]));
    }
}

static void test_gemv(void) {
    static const int64_t sizes[][2] = {{1, 1}, {3, 7}, {5, 8}, {9, 33}, {31, 65}, {130, 1},
                                       {1, 130}, {257, 300}, {700, 600}, {17, 100}, {64, 129},
                                       {3, 200}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int ta = 0; ta < 2; ta++)
            for (int impl = 0; impl < 5; impl++) {
                /* 0 frt_sgemv, 1..3 frt_sgemv_tier(portable, avx2, avx512), 4 frt_sgemv_mt */
                if (impl >= 1 && impl <= 3 && (frt_isa)(impl - 1) > frt_cpu_get()->host) continue;
                int64_t M = sizes[s][0], N = sizes[s][1], lda = N + (int64_t)(s % 2);
                int64_t nx = ta ? M : N, ny = ta ? N : M;
                float *A = malloc((size_t)(M * lda) * 4), *x = malloc((size_t)nx * 4);
                float *y = malloc((size_t)ny * 4), *r = malloc((size_t)ny * 4);
                t_fill(A, (size_t)(M * lda), 5u + (unsigned)s);
                t_fill(x, (size_t)nx, 7u);
                float beta = (impl + (int)s) % 2 ? 0.0f : 0.75f;
                if (beta == 0.0f) for (int64_t i = 0; i < ny; i++) y[i] = NAN;
                else t_fill(y, (size_t)ny, 11u);
                memcpy(r, y, (size_t)ny * 4);
                ref_gemv(ta, M, N, 1.25f, A, lda, x, beta, r);
                if (impl == 0) frt_sgemv(ta, M, N, 1.25f, A, lda, x, beta, y);
                else if (impl <= 3)
                    frt_sgemv_tier((frt_isa)(impl - 1), ta, M, N, 1.25f, A, lda, x, beta, y);
                else frt_sgemv_mt(g_tp, ta, M, N, 1.25f, A, lda, x, beta, y);
                CHECK_MSG(t_close(y, r, (size_t)ny, 1e-4f, 1e-4f * (float)(nx + 1)),
                          "gemv impl %d ta=%d M=%lld N=%lld", impl, ta, (long long)M,
                          (long long)N);
                free(A); free(x); free(y); free(r);
            }
}

/* frt_sgemm_pb_n: the first n columns of a B packed for N (transposed and not), against the
 * reference on those columns; the columns past n of C stay untouched. */
static void test_pb_n(void) {
    static const int64_t cases[][4] = {{12, 64, 12, 64}, {5, 64, 37, 64}, {64, 70, 33, 29},
                                       {13, 40, 40, 257}, {1, 33, 1, 17}, {30, 100, 64, 9}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int tb = 0; tb < 2; tb++) {
            const int64_t M = cases[c][0], N = cases[c][1], n = cases[c][2], K = cases[c][3];
            const int64_t ldb = tb ? K : N;
            float *A = malloc((size_t)(M * K) * 4), *B = malloc((size_t)(K * N) * 4);
            float *C = malloc((size_t)(M * N) * 4), *R = malloc((size_t)(M * N) * 4);
            float *Bp = aligned_alloc(64, (frt_sgemm_pack_b_size(K, N) * 4 + 64) / 64 * 64);
            t_fill(A, (size_t)(M * K), 3u);
            t_fill(B, (size_t)(K * N), 5u);
            t_fill(C, (size_t)(M * N), 7u);
            memcpy(R, C, (size_t)(M * N) * 4);
            frt_sgemm_pack_b(tb, K, N, B, ldb, Bp);
            frt_sgemm_pb_n(0, M, N, n, K, 0.5f, A, K, Bp, 0.0f, C, N);
            ref_gemm(0, tb, M, n, K, 0.5f, A, K, B, ldb, 0.0f, R, N);
            CHECK_MSG(t_close(C, R, (size_t)(M * N), 1e-4f, 1e-4f * (float)(K + 1)),
                      "pb_n M=%lld N=%lld n=%lld K=%lld tb=%d", (long long)M, (long long)N,
                      (long long)n, (long long)K, tb);
            free(A); free(B); free(C); free(R); free(Bp);
        }
}

/* The SIMD panel packers (variant pack_a) of every tier the host runs, against the portable
 * layout d[k][r] = A[r][k], bit for bit, over group tails of the column count and padded lda; the
 * floats after the panel stay untouched. */
static void test_pack_a_variants(void) {
    static const int64_t kcs[] = {1, 5, 7, 8, 9, 15, 16, 17, 31, 64, 255, 256};
    for (int t = FRT_ISA_PORTABLE; t <= (int)frt_cpu_get()->host; t++) {
        const frt_sgemm_variant *v = frt_sgemm_pick((frt_isa)t);
        if (!v->pack_a || v->isa != (frt_isa)t) continue;
        for (size_t c = 0; c < sizeof kcs / sizeof kcs[0]; c++) {
            const int64_t kc = kcs[c], lda = kc + (int64_t)(c % 3), mr = v->mr;
            float *A = malloc((size_t)(mr * lda) * 4);
            float *d = malloc((size_t)(mr * kc + 16) * 4);
            t_fill(A, (size_t)(mr * lda), 17u + (unsigned)c);
            for (int64_t i = 0; i < mr * kc + 16; i++) d[i] = -7.0f;
            v->pack_a(kc, A, lda, d);
            int ok = 1;
            for (int64_t k = 0; k < kc; k++)
                for (int64_t r = 0; r < mr; r++)
                    if (memcmp(&d[k * mr + r], &A[r * lda + k], 4) != 0) ok = 0;
            for (int64_t i = mr * kc; i < mr * kc + 16; i++)
                if (d[i] != -7.0f) ok = 0;
            CHECK_MSG(ok, "pack_a %s kc=%lld lda=%lld", v->name, (long long)kc, (long long)lda);
            free(A);
            free(d);
        }
    }
}

int main(void) {
    frt_blas_init();
    frt_blas_init();
    printf("blas=%d tier=%s host=%s\n", frt_sgemm_have_blas(), frt_isa_name(frt_cpu_tier()),
           frt_isa_name(frt_cpu_get()->host));
    g_tp = frt_threadpool_create(3, NULL);
    test_sizes();
    test_mt_split();
    test_k_zero();
    test_gemv();
    test_pb_n();
    test_pack_a_variants();
    frt_threadpool_free(g_tp);
    TEST_MAIN_END();
}
