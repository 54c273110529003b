/* Einsum and Det through infer -> select -> kernel against naive references: matmul-like
 * equations on the GEMM path (plain, transposed operands, batch, permuted output, multi-letter
 * M/N/K), the generic loop (diagonals, sums, outer products, ellipsis with broadcasting, three
 * operands, float64 and int64), implicit outputs; Det on batches of random and singular matrices;
 * and bad input (malformed equations, rank mismatches, dtype mismatch, non-square Det). */
#include <stdint.h>

#include "op_harness.h"
#include "ops/dtype_util.h"
#include "test_util.h"

/* Naive einsum over explicit single-letter terms (no ellipsis), float64 accumulation. */
static void ref_einsum(const char *const terms[], int n_in, const char *out, const double *const *x,
                       const int64_t *const *dims, double *y, int64_t *y_numel) {
    int64_t size[128] = {0};
    for (int i = 0; i < n_in; i++)
        for (int d = 0; terms[i][d]; d++) {
            int64_t s = dims[i][d];
            if (size[(int)terms[i][d]] < s) size[(int)terms[i][d]] = s;
        }
    char all[64];
    int na = 0;
    for (int c = 'A'; c <= 'z'; c++)
        if (size[c]) all[na++] = (char)c;
    int64_t idx[128] = {0}, total = 1, ny = 1;
    for (int i = 0; i < na; i++) total *= size[(int)all[i]];
    for (int d = 0; out[d]; d++) ny *= size[(int)out[d]];
    for (int64_t o = 0; o < ny; o++) y[o] = 0;
    *y_numel = ny;
    for (int64_t e = 0; e < total; e++) {
        int64_t rem = e;
        for (int i = na - 1; i >= 0; i--) {
            idx[(int)all[i]] = rem % size[(int)all[i]];
            rem /= size[(int)all[i]];
        }
        double p = 1;
        for (int i = 0; i < n_in; i++) {
            int64_t off = 0;
            for (int d = 0; terms[i][d]; d++) {
                int64_t dd = dims[i][d];
                off = off * dd + (dd == 1 ? 0 : idx[(int)terms[i][d]]);
            }
            p *= x[i][off];
        }
        int64_t oo = 0;
        for (int d = 0; out[d]; d++) oo = oo * size[(int)out[d]] + idx[(int)out[d]];
        y[oo] += p;
    }
}

typedef struct ecase {
    const char *eq;        /* as given to the op */
    const char *terms[3];  /* for the reference */
    const char *out;
    int n_in;
    int64_t dims[3][4];
    int rank[3];
    const char *kernel;    /* expected kernel for float32 */
} ecase;

static const ecase CASES[] = {
    {"ij,jk->ik", {"ij", "jk"}, "ik", 2, {{5, 7}, {7, 3}}, {2, 2}, "einsum_gemm"},
    {"ij,kj->ik", {"ij", "kj"}, "ik", 2, {{5, 7}, {3, 7}}, {2, 2}, "einsum_gemm"},
    {"ji,jk->ik", {"ji", "jk"}, "ik", 2, {{7, 5}, {7, 3}}, {2, 2}, "einsum_gemm"},
    {"ij,jk->ki", {"ij", "jk"}, "ki", 2, {{5, 7}, {7, 3}}, {2, 2}, "einsum_gemm"},
    {"bij, bjk -> bik", {"bij", "bjk"}, "bik", 2, {{4, 2, 3}, {4, 3, 5}}, {3, 3}, "einsum_gemm"},
    {"ibj,kbj->bki", {"ibj", "kbj"}, "bki", 2, {{3, 2, 6}, {4, 2, 6}}, {3, 3}, "einsum_gemm"},
    {"abc,cd->abd", {"abc", "cd"}, "abd", 2, {{2, 3, 4}, {4, 5}}, {3, 2}, "einsum_gemm"},
    {"abcd,cde->abe", {"abcd", "cde"}, "abe", 2, {{2, 3, 4, 2}, {4, 2, 3}}, {4, 3}, "einsum_gemm"},
    {"i,i", {"i", "i"}, "", 2, {{9}, {9}}, {1, 1}, "einsum_gemm"},
    {"i,j->ij", {"i", "j"}, "ij", 2, {{4}, {6}}, {1, 1}, "einsum_gemm"},
    {"ij->ji", {"ij"}, "ji", 1, {{3, 4}}, {2}, "einsum"},
    {"ij->i", {"ij"}, "i", 1, {{3, 4}}, {2}, "einsum"},
    {"ii->i", {"ii"}, "i", 1, {{5, 5}}, {2}, "einsum"},
    {"ii", {"ii"}, "", 1, {{5, 5}}, {2}, "einsum"},
    {"ij,jk", {"ij", "jk"}, "ik", 2, {{2, 3}, {3, 4}}, {2, 2}, "einsum_gemm"},
    {"ba,ca", {"ba", "ca"}, "bc", 2, {{2, 3}, {4, 3}}, {2, 2}, "einsum_gemm"},
    {"ij,jk,kl->il", {"ij", "jk", "kl"}, "il", 3, {{2, 3}, {3, 4}, {4, 2}}, {2, 2, 2}, "einsum"},
    {"ij,ij->ij", {"ij", "ij"}, "ij", 2, {{3, 5}, {3, 5}}, {2, 2}, "einsum_gemm"},
    {"ij,jk->k", {"ij", "jk"}, "k", 2, {{3, 5}, {5, 2}}, {2, 2}, "einsum"},
    {"...ij,...jk->...ik", {"bij", "bjk"}, "bik", 2, {{3, 2, 4}, {1, 4, 5}}, {3, 3}, "einsum_gemm"},
    {"...ii->...i", {"bii"}, "bi", 1, {{3, 4, 4}}, {3}, "einsum"},
    {"i...->...", {"ib"}, "b", 1, {{3, 4}}, {2}, "einsum"},
};

static void test_einsum(void) {
    for (size_t ci = 0; ci < sizeof CASES / sizeof CASES[0]; ci++) {
        const ecase *c = &CASES[ci];
        double xs[3][128];
        float xf[3][128];
        int64_t xi[3][128];
        frt_value in[3];
        const double *xp[3];
        const int64_t *dp[3];
        for (int i = 0; i < c->n_in; i++) {
            int64_t n = numel(c->dims[i], c->rank[i]);
            unsigned seed = (unsigned)(ci * 7 + (size_t)i + 1);
            for (int64_t e = 0; e < n; e++) {
                xf[i][e] = t_rand(&seed);
                xs[i][e] = xf[i][e];
                xi[i][e] = (int64_t)(xf[i][e] * 10);
            }
            xp[i] = xs[i];
            dp[i] = c->dims[i];
        }
        double ref[1024];
        int64_t ny;
        ref_einsum(c->terms, c->n_in, c->out, xp, dp, ref, &ny);
        for (int dv = 0; dv < 3; dv++) {
            int32_t dt = dv == 0 ? FRT_FLOAT32 : dv == 1 ? FRT_FLOAT64 : FRT_INT64;
            double iref[1024];
            if (dt == FRT_INT64) {
                const double *ip[3];
                double tmp[3][128];
                for (int i = 0; i < c->n_in; i++) {
                    for (int64_t e = 0; e < numel(c->dims[i], c->rank[i]); e++) tmp[i][e] = (double)xi[i][e];
                    ip[i] = tmp[i];
                }
                ref_einsum(c->terms, c->n_in, c->out, ip, dp, iref, &ny);
            }
            for (int i = 0; i < c->n_in; i++)
                in[i] = frt_test_value(dt, c->rank[i], c->dims[i],
                                       dt == FRT_FLOAT32 ? (void *)xf[i] : dt == FRT_FLOAT64 ? (void *)xs[i] : (void *)xi[i]);
            frt_onnx_attr at = frt_test_attr_string("equation", c->eq);
            for (int unk = 0; unk < 2; unk++) {
                frt_test_op t = {.op_type = "Einsum", .opset = 12, .attrs = &at, .n_attrs = 1,
                                 .inputs = in, .n_in = c->n_in, .n_out = 1, .unknown_dims = unk};
                frt_value out;
                const char *kn = "";
                frt_status st = frt_test_run_op(&t, &out, &kn);
                CHECK_MSG(st == FRT_OK, "%s: %s", c->eq, frt_last_error());
                if (st) continue;
                CHECK_MSG(out.numel == ny, "%s numel", c->eq);
                if (dt == FRT_FLOAT32)
                    CHECK_MSG(strcmp(kn, c->kernel) == 0, "%s kernel %s", c->eq, kn);
                int ok = 1;
                for (int64_t e = 0; e < ny && out.numel == ny; e++) {
                    double y = frt_ld_f64(dt, out.data, e);
                    double r = dt == FRT_INT64 ? iref[e] : ref[e];
                    if (fabs(y - r) > (dt == FRT_FLOAT32 ? 1e-5 : 1e-12) * (1 + fabs(r))) ok = 0;
                }
                CHECK_MSG(ok, "einsum %s %s", c->eq, frt_dtype_name(dt));
                free(out.data);
            }
        }
    }
    /* a larger float32 batch matmul through the GEMM */
    {
        int64_t da[3] = {3, 37, 29}, db[3] = {3, 29, 41};
        float *a = malloc(3 * 37 * 29 * 4), *b = malloc(3 * 29 * 41 * 4);
        t_fill(a, 3 * 37 * 29, 1);
        t_fill(b, 3 * 29 * 41, 2);
        frt_value in[2] = {frt_test_value(FRT_FLOAT32, 3, da, a), frt_test_value(FRT_FLOAT32, 3, db, b)};
        frt_onnx_attr at = frt_test_attr_string("equation", "bmk,bkn->bmn");
        frt_test_op t = {.op_type = "Einsum", .opset = 12, .attrs = &at, .n_attrs = 1, .inputs = in,
                         .n_in = 2, .n_out = 1};
        frt_value out;
        CHECK_OK(frt_test_run_op(&t, &out, NULL));
        if (out.data) {
            int ok = 1;
            for (int bb = 0; bb < 3; bb++)
                for (int m = 0; m < 37; m++)
                    for (int n = 0; n < 41; n++) {
                        double s = 0;
                        for (int k = 0; k < 29; k++)
                            s += (double)a[(bb * 37 + m) * 29 + k] * b[(bb * 29 + k) * 41 + n];
                        if (fabs(((float *)out.data)[(bb * 37 + m) * 41 + n] - s) > 1e-4) ok = 0;
                    }
            CHECK(ok);
            free(out.data);
        }
        free(a);
        free(b);
    }
    /* an empty contraction gives zeros */
    {
        float one[1] = {1};
        int64_t da[2] = {3, 0}, db[2] = {0, 4};
        frt_value in[2] = {frt_test_value(FRT_FLOAT32, 2, da, one), frt_test_value(FRT_FLOAT32, 2, db, one)};
        frt_onnx_attr at = frt_test_attr_string("equation", "ij,jk->ik");
        frt_test_op t = {.op_type = "Einsum", .opset = 12, .attrs = &at, .n_attrs = 1, .inputs = in,
                         .n_in = 2, .n_out = 1};
        frt_value out;
        CHECK_OK(frt_test_run_op(&t, &out, NULL));
        if (out.data) {
            int ok = out.numel == 12;
            for (int i = 0; i < 12 && ok; i++) ok = ((float *)out.data)[i] == 0.0f;
            CHECK(ok);
            free(out.data);
        }
    }
    /* bad input */
    float x[12] = {0};
    int64_t d34[2] = {3, 4}, d3[1] = {3};
    frt_value in[2] = {frt_test_value(FRT_FLOAT32, 2, d34, x), frt_test_value(FRT_FLOAT32, 1, d3, x)};
    static const char *bad_eq[] = {"ij->k", "ij,j", "i$j", "ij->ii", "ij,jk->ik", "i.j"};
    static const int bad_n[] = {1, 1, 1, 1, 2, 1};
    for (size_t i = 0; i < sizeof bad_eq / sizeof bad_eq[0]; i++) {
        frt_onnx_attr at = frt_test_attr_string("equation", bad_eq[i]);
        frt_test_op t = {.op_type = "Einsum", .opset = 12, .attrs = &at, .n_attrs = 1, .inputs = in,
                         .n_in = bad_n[i], .n_out = 1};
        frt_value out;
        frt_status st = frt_test_run_op(&t, &out, NULL);
        CHECK_MSG(st == FRT_ERR_SHAPE || st == FRT_ERR_MALFORMED, "'%s' gave %d", bad_eq[i], st);
    }
    frt_onnx_attr at = frt_test_attr_string("equation", "ij,j->i");
    in[1].dtype = FRT_FLOAT64;
    frt_test_op t = {.op_type = "Einsum", .opset = 12, .attrs = &at, .n_attrs = 1, .inputs = in,
                     .n_in = 2, .n_out = 1};
    frt_value out;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    in[1].dtype = FRT_FLOAT32;
    t.n_attrs = 0; /* no equation */
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_MALFORMED);
}

static double det_ref(const double *a, int n) { /* cofactor expansion */
    if (n == 0) return 1;
    if (n == 1) return a[0];
    double s = 0, sub[49];
    for (int c = 0; c < n; c++) {
        int k = 0;
        for (int i = 1; i < n; i++)
            for (int j = 0; j < n; j++)
                if (j != c) sub[k++] = a[i * n + j];
        s += (c & 1 ? -1 : 1) * a[c] * det_ref(sub, n - 1);
    }
    return s;
}

static void test_det(void) {
    for (int m = 0; m <= 6; m++) {
        int64_t dims[3] = {4, m, m};
        double x[4 * 36];
        float xf[4 * 36];
        unsigned seed = (unsigned)m + 5;
        for (int i = 0; i < 4 * m * m; i++) xf[i] = t_rand(&seed), x[i] = xf[i];
        if (m >= 2) /* batch 2: singular (two equal rows) */
            for (int j = 0; j < m; j++) x[2 * m * m + m + j] = x[2 * m * m + j], xf[2 * m * m + m + j] = xf[2 * m * m + j];
        for (int f = 0; f < 2; f++) {
            frt_value in = frt_test_value(f ? FRT_FLOAT32 : FRT_FLOAT64, 3, dims, f ? (void *)xf : (void *)x), out;
            frt_test_op t = {.op_type = "Det", .opset = 11, .inputs = &in, .n_in = 1, .n_out = 1};
            CHECK_OK(frt_test_run_op(&t, &out, NULL));
            if (!out.data) continue;
            CHECK(out.rank == 1 && out.dims[0] == 4);
            int ok = 1;
            for (int b = 0; b < 4; b++) {
                double r = det_ref(x + b * m * m, m), y = frt_ld_f64(in.dtype, out.data, b);
                if (fabs(y - r) > (f ? 1e-5 : 1e-12) * (1 + fabs(r))) ok = 0;
            }
            CHECK_MSG(ok, "det m=%d %s", m, f ? "f32" : "f64");
            free(out.data);
        }
    }
    /* 2-D input gives a scalar; non-square and integer inputs fail */
    float a[4] = {1, 2, 3, 4};
    int64_t d22[2] = {2, 2}, d23[2] = {2, 3};
    frt_value in = frt_test_value(FRT_FLOAT32, 2, d22, a), out;
    frt_test_op t = {.op_type = "Det", .opset = 11, .inputs = &in, .n_in = 1, .n_out = 1};
    CHECK_OK(frt_test_run_op(&t, &out, NULL));
    if (out.data) {
        CHECK(out.rank == 0 && fabsf(((float *)out.data)[0] + 2.0f) < 1e-6f);
        free(out.data);
    }
    in = frt_test_value(FRT_FLOAT32, 2, d23, a);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    in = frt_test_value(FRT_INT32, 2, d22, a);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED);
}

int main(void) {
    test_einsum();
    test_det();
    TEST_MAIN_END();
}
