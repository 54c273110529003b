/* LayerNormalization InstanceNormalization GroupNormalization MeanVarianceNormalization
 * LpNormalization LRN through infer -> select -> kernel against naive double references: odd
 * sizes, every axis, broadcast Scale/B, optional outputs, every ISA tier vs the portable row
 * (twins), threads, float64, and
 * error paths (dtype, axis, attribute, parameter shapes). */
#include <stdint.h>

#include "op_harness.h"
#include "ops/dtype_util.h"
#include "ops/x86/simd_norm.h"
#include "test_util.h"

static frt_status run(const char *op, int64_t opset, const frt_onnx_attr *at, size_t na,
                      frt_value *in, int n_in, unsigned absent, frt_value *out, int n_out,
                      int isa, int threads) {
    frt_test_op t = {0};
    t.op_type = op;
    t.opset = opset;
    t.attrs = at;
    t.n_attrs = na;
    t.inputs = in;
    t.n_in = n_in;
    t.absent_mask = absent;
    t.n_out = n_out;
    t.isa = isa;
    t.n_threads = threads;
    return frt_test_run_op(&t, out, NULL);
}

static int close_d(double y, double r, double rtol, double atol) {
    return fabs(y - r) <= rtol * fabs(r) + atol;
}

/* LayerNorm reference: rows of L, scale/bias with ns/nb elements (1 or L; nb 0 = none). */
static void ln_ref(const float *x, int64_t rows, int64_t L, const float *sc, int64_t ns,
                   const float *b, int64_t nb, double eps, double *y, double *mean, double *inv) {
    for (int64_t r = 0; r < rows; r++) {
        double m = 0, v = 0;
        for (int64_t i = 0; i < L; i++) m += x[r * L + i];
        m /= (double)L;
        for (int64_t i = 0; i < L; i++) v += (x[r * L + i] - m) * (x[r * L + i] - m);
        double iv = 1 / sqrt(v / (double)L + eps);
        mean[r] = m;
        inv[r] = iv;
        for (int64_t i = 0; i < L; i++)
            y[r * L + i] = (x[r * L + i] - m) * iv * sc[ns == 1 ? 0 : i] +
                           (nb ? b[nb == 1 ? 0 : i] : 0);
    }
}

static void check_layernorm(int rank, const int64_t *dims, int64_t axis, int64_t ns, int64_t nb) {
    int ax = (int)(axis < 0 ? axis + rank : axis);
    int64_t n = numel(dims, rank), L = numel(dims + ax, rank - ax), rows = n / L;
    float *x = malloc((size_t)n * 4), *sc = malloc((size_t)L * 4), *b = malloc((size_t)L * 4);
    t_fill(x, (size_t)n, 3u + (unsigned)n);
    for (int64_t i = 0; i < n; i++) x[i] = x[i] * 4 + 1.5f;
    t_fill(sc, (size_t)L, 7);
    t_fill(b, (size_t)L, 8);
    double *y = malloc((size_t)n * 8), *m = malloc((size_t)rows * 8), *iv = malloc((size_t)rows * 8);
    ln_ref(x, rows, L, sc, ns, b, nb, 1e-3, y, m, iv);
    int64_t sdim = ns, bdim = nb ? nb : 1;
    frt_onnx_attr at[2] = {frt_test_attr_int("axis", axis), frt_test_attr_float("epsilon", 1e-3f)};
    for (int v = 0; v < 6; v++) {
        frt_value in[3] = {frt_test_value(FRT_FLOAT32, rank, dims, x),
                           frt_test_value(FRT_FLOAT32, 1, &sdim, sc),
                           frt_test_value(FRT_FLOAT32, 1, &bdim, b)}, out[3];
        int isa = v < 2 ? FRT_TEST_ISA(FRT_ISA_PORTABLE) : v < 4 ? FRT_TEST_ISA(FRT_ISA_AVX2) : 0;
        int nout = v & 1 ? 3 : 1;
        frt_status st = run("LayerNormalization", 17, at, 2, in, nb ? 3 : 2, 0, out, nout, isa,
                            v & 1 ? 2 : 1);
        CHECK_MSG(st == FRT_OK, "layernorm: %s", frt_last_error());
        if (st) continue;
        int bad = 0;
        for (int64_t i = 0; i < n; i++)
            if (!close_d(((float *)out[0].data)[i], y[i], 1e-5, 2e-6)) bad++;
        if (nout == 3) {
            CHECK(out[1].rank == rank && out[1].numel == rows && out[1].dims[rank - 1] == 1);
            for (int64_t r = 0; r < rows; r++) {
                if (!close_d(((float *)out[1].data)[r], m[r], 1e-5, 2e-6)) bad++;
                if (!close_d(((float *)out[2].data)[r], iv[r], 1e-5, 0)) bad++;
            }
            free(out[1].data);
            free(out[2].data);
        }
        CHECK_MSG(!bad, "layernorm rank %d axis %lld ns %lld nb %lld variant %d: %d bad", rank,
                  (long long)axis, (long long)ns, (long long)nb, v, bad);
        free(out[0].data);
    }
    /* float64 */
    double *xd = malloc((size_t)n * 8), *sd = malloc((size_t)L * 8), *bd = malloc((size_t)L * 8);
    for (int64_t i = 0; i < n; i++) xd[i] = x[i];
    for (int64_t i = 0; i < L; i++) sd[i] = sc[i], bd[i] = b[i];
    frt_value in[3] = {frt_test_value(FRT_FLOAT64, rank, dims, xd),
                       frt_test_value(FRT_FLOAT64, 1, &sdim, sd),
                       frt_test_value(FRT_FLOAT64, 1, &bdim, bd)}, out[3];
    frt_onnx_attr at0[3] = {at[0], frt_test_attr_float("epsilon", 1e-3f),
                            frt_test_attr_int("stash_type", 11)};
    ln_ref(x, rows, L, sc, ns, b, nb, (double)1e-3f, y, m, iv);
    CHECK_OK(run("LayerNormalization", 17, at0, 3, in, nb ? 3 : 2, 0, out, 3, 0, 0));
    if (out[0].data) {
        int bad = 0;
        for (int64_t i = 0; i < n; i++)
            if (!close_d(((double *)out[0].data)[i], y[i], 1e-12, 1e-12)) bad++;
        CHECK(out[1].dtype == FRT_FLOAT64);
        for (int64_t r = 0; r < rows; r++)
            if (!close_d(((double *)out[1].data)[r], m[r], 1e-12, 1e-12)) bad++;
        CHECK_MSG(!bad, "layernorm f64");
        for (int i = 0; i < 3; i++) free(out[i].data);
    }
    free(xd);
    free(sd);
    free(bd);
    free(x);
    free(sc);
    free(b);
    free(y);
    free(m);
    free(iv);
}

static void test_layernorm(void) {
    int64_t d2[2] = {3, 1001}, d4[4] = {2, 3, 5, 7}, d1[2] = {5, 1};
    check_layernorm(2, d2, -1, 1001, 1001);
    check_layernorm(2, d2, 1, 1001, 0);
    check_layernorm(2, d2, 0, 3003, 3003);
    check_layernorm(2, d2, -1, 1, 1001);
    check_layernorm(2, d2, -1, 1001, 1);
    check_layernorm(2, d2, -1, 1, 1);
    for (int64_t ax = -4; ax < 4; ax++) check_layernorm(4, d4, ax, numel(d4 + (ax + 4) % 4, 4 - (int)((ax + 4) % 4)), 1);
    check_layernorm(2, d1, -1, 1, 1);
    int64_t big[2] = {300, 768};
    check_layernorm(2, big, -1, 768, 768);
    /* errors */
    float x[6] = {0}, s2[2] = {1, 1};
    int64_t dx[2] = {2, 3}, d2s = 2;
    frt_value in[2] = {frt_test_value(FRT_FLOAT32, 2, dx, x), frt_test_value(FRT_FLOAT32, 1, &d2s, s2)},
              out[3];
    CHECK(run("LayerNormalization", 17, NULL, 0, in, 2, 0, out, 1, 0, 0) == FRT_ERR_SHAPE);
    CHECK(err_has("Scale"));
    frt_onnx_attr at = frt_test_attr_int("axis", 2);
    in[1] = frt_test_value(FRT_FLOAT32, 1, &(int64_t){1}, s2);
    CHECK(run("LayerNormalization", 17, &at, 1, in, 2, 0, out, 1, 0, 0) == FRT_ERR_SHAPE);
    CHECK(err_has("axis"));
    int32_t xi[6] = {0};
    in[0] = frt_test_value(FRT_INT32, 2, dx, xi);
    CHECK(run("LayerNormalization", 17, NULL, 0, in, 2, 0, out, 1, 0, 0) == FRT_ERR_UNSUPPORTED);
}

/* Every tier's row against the portable twin. */
static void test_twins(void) {
    const frt_norm_variant *p = frt_norm_variant_get(FRT_ISA_PORTABLE);
    float x[1200], sc[1200], b[1200], ya[1200], yb[1200];
    t_fill(x, 1200, 1);
    t_fill(sc, 1200, 2);
    t_fill(b, 1200, 3);
    for (int tier = FRT_ISA_AVX2; tier <= (int)frt_cpu_tier(); tier++) {
        const frt_norm_variant *v = frt_norm_variant_get((frt_isa)tier);
        for (size_t len = 1; len < 1200; len += 37)
            for (int mode = 0; mode < 3; mode++) {
                float sa[2], sb[2];
                size_t st = mode == 2 ? 0 : 1;
                const float *bias = mode == 1 ? NULL : b;
                p->row(x, ya, len, sc, bias, st, 1e-5f, sa);
                memcpy(yb, x, len * 4);
                v->row(yb, yb, len, sc, bias, st, 1e-5f, sb); /* in place */
                CHECK_MSG(t_close(yb, ya, len, 1e-6f, 2e-6f) && close_d(sb[0], sa[0], 1e-5, 1e-6) &&
                              close_d(sb[1], sa[1], 1e-5, 0),
                          "norm row tier %d len %zu mode %d", tier, len, mode);
            }
    }
}

static void test_instancenorm(void) {
    int64_t d[4] = {2, 3, 5, 7}, c3 = 3;
    int64_t n = numel(d, 4), S = 35;
    float x[210], sc[3] = {0.5f, -1.0f, 2.0f}, b[3] = {0.1f, 0.2f, -0.3f};
    t_fill(x, 210, 4);
    for (int v = 0; v < 3; v++) {
        frt_value in[3] = {frt_test_value(FRT_FLOAT32, 4, d, x), frt_test_value(FRT_FLOAT32, 1, &c3, sc),
                           frt_test_value(FRT_FLOAT32, 1, &c3, b)}, out;
        frt_onnx_attr at = frt_test_attr_float("epsilon", 0.01f);
        CHECK_OK(run("InstanceNormalization", 6, &at, 1, in, 3, 0, &out, 1,
                     v == 0 ? FRT_TEST_ISA(FRT_ISA_PORTABLE) : v == 1 ? FRT_TEST_ISA(FRT_ISA_AVX2) : 0,
                     2));
        if (!out.data) continue;
        int bad = 0;
        for (int64_t pl = 0; pl < 6; pl++) {
            double m = 0, var = 0;
            for (int64_t i = 0; i < S; i++) m += x[pl * S + i];
            m /= S;
            for (int64_t i = 0; i < S; i++) var += (x[pl * S + i] - m) * (x[pl * S + i] - m);
            var /= S;
            for (int64_t i = 0; i < S; i++) {
                double r = (x[pl * S + i] - m) / sqrt(var + (double)0.01f) * sc[pl % 3] + b[pl % 3];
                if (!close_d(((float *)out.data)[pl * S + i], r, 1e-5, 1e-6)) bad++;
            }
        }
        CHECK_MSG(!bad, "instancenorm variant %d", v);
        free(out.data);
    }
    (void)n;
    /* scale of the wrong size */
    int64_t c2 = 2;
    frt_value in[3] = {frt_test_value(FRT_FLOAT32, 4, d, x), frt_test_value(FRT_FLOAT32, 1, &c2, sc),
                       frt_test_value(FRT_FLOAT32, 1, &c3, b)}, out;
    CHECK(run("InstanceNormalization", 6, NULL, 0, in, 3, 0, &out, 1, 0, 0) == FRT_ERR_SHAPE);
}

static void test_mvn(void) {
    int64_t d[4] = {3, 3, 3, 2};
    float x[54];
    t_fill(x, 54, 5);
    static const int64_t axes_sets[3][3] = {{0, 2, 3}, {1, 0, 0}, {-1, 0, 0}};
    static const size_t nax[3] = {3, 1, 1};
    for (int a = 0; a < 3; a++) {
        frt_onnx_attr at = frt_test_attr_ints("axes", axes_sets[a], nax[a]);
        frt_value in = frt_test_value(FRT_FLOAT32, 4, d, x), out;
        CHECK_OK(run("MeanVarianceNormalization", 13, &at, a == 0 ? 0 : 1, &in, 1, 0, &out, 1, 0, 0));
        if (!out.data) continue;
        uint32_t mask = 0;
        for (size_t i = 0; i < nax[a]; i++) mask |= 1u << ((axes_sets[a][i] + 4) % 4);
        int bad = 0;
        for (int64_t i = 0; i < 54; i++) {
            /* group of i: elements agreeing with i on the kept dims */
            int64_t ci[4], r = i;
            for (int k = 3; k >= 0; k--) ci[k] = r % d[k], r /= d[k];
            double m = 0, v = 0, cnt = 0;
            for (int64_t j = 0; j < 54; j++) {
                int64_t cj[4], q = j, same = 1;
                for (int k = 3; k >= 0; k--) cj[k] = q % d[k], q /= d[k];
                for (int k = 0; k < 4; k++)
                    if (!(mask >> k & 1) && cj[k] != ci[k]) same = 0;
                if (same) m += x[j], v += (double)x[j] * x[j], cnt++;
            }
            m /= cnt;
            double sd = sqrt(v / cnt - m * m);
            if (!close_d(((float *)out.data)[i], (x[i] - m) / (sd + 1e-9), 1e-4, 1e-6)) bad++;
        }
        CHECK_MSG(!bad, "mvn axes set %d", a);
        free(out.data);
    }
    int64_t bad_ax[1] = {4};
    frt_onnx_attr at = frt_test_attr_ints("axes", bad_ax, 1);
    frt_value in = frt_test_value(FRT_FLOAT32, 4, d, x), out;
    CHECK(run("MeanVarianceNormalization", 13, &at, 1, &in, 1, 0, &out, 1, 0, 0) == FRT_ERR_SHAPE);
}

static void test_lpnorm(void) {
    int64_t d[3] = {2, 5, 3};
    float x[30];
    t_fill(x, 30, 6);
    x[0] = x[3] = x[6] = x[9] = x[12] = 0; /* a zero column along axis 1 */
    for (int p = 1; p <= 2; p++)
        for (int64_t axis = -3; axis < 3; axis++) {
            frt_onnx_attr at[2] = {frt_test_attr_int("axis", axis), frt_test_attr_int("p", p)};
            frt_value in = frt_test_value(FRT_FLOAT32, 3, d, x), out;
            CHECK_OK(run("LpNormalization", 1, at, 2, &in, 1, 0, &out, 1, 0, 0));
            if (!out.data) continue;
            int ax = (int)((axis + 3) % 3), bad = 0;
            int64_t st = ax == 2 ? 1 : ax == 1 ? 3 : 15;
            for (int64_t i = 0; i < 30; i++) {
                int64_t c = (i / st) % d[ax], base = i - c * st;
                double nrm = 0;
                for (int64_t k = 0; k < d[ax]; k++) {
                    double v = x[base + k * st];
                    nrm += p == 1 ? fabs(v) : v * v;
                }
                if (p == 2) nrm = sqrt(nrm);
                double r = nrm == 0 ? 0 : x[i] / nrm;
                if (!close_d(((float *)out.data)[i], r, 1e-6, 1e-7)) bad++;
            }
            CHECK_MSG(!bad, "lpnorm p %d axis %lld", p, (long long)axis);
            free(out.data);
        }
    frt_onnx_attr at = frt_test_attr_int("p", 3);
    frt_value in = frt_test_value(FRT_FLOAT32, 3, d, x), out;
    CHECK(run("LpNormalization", 1, &at, 1, &in, 1, 0, &out, 1, 0, 0) == FRT_ERR_UNSUPPORTED);
}

static void test_lrn(void) {
    int64_t d[4] = {2, 7, 3, 2};
    float x[84];
    t_fill(x, 84, 7);
    for (int64_t size = 1; size <= 5; size++) {
        frt_onnx_attr at[4] = {frt_test_attr_int("size", size), frt_test_attr_float("alpha", 0.3f),
                               frt_test_attr_float("beta", 0.6f), frt_test_attr_float("bias", 1.5f)};
        frt_value in = frt_test_value(FRT_FLOAT32, 4, d, x), out;
        CHECK_OK(run("LRN", 13, at, 4, &in, 1, 0, &out, 1, 0, 0));
        if (!out.data) continue;
        int bad = 0;
        for (int64_t n = 0; n < 2; n++)
            for (int64_t c = 0; c < 7; c++)
                for (int64_t i = 0; i < 6; i++) {
                    double sq = 0;
                    for (int64_t cc = c - (size - 1) / 2; cc <= c + size / 2; cc++)
                        if (cc >= 0 && cc < 7) sq += (double)x[(n * 7 + cc) * 6 + i] * x[(n * 7 + cc) * 6 + i];
                    double xv = x[(n * 7 + c) * 6 + i];
                    double r = xv / pow(1.5 + 0.3 / (double)size * sq, (double)0.6f);
                    if (!close_d(((float *)out.data)[(n * 7 + c) * 6 + i], r, 1e-5, 1e-7)) bad++;
                }
        CHECK_MSG(!bad, "lrn size %lld", (long long)size);
        free(out.data);
    }
    frt_onnx_attr at = frt_test_attr_int("size", 0);
    frt_value in = frt_test_value(FRT_FLOAT32, 4, d, x), out;
    CHECK(run("LRN", 13, &at, 1, &in, 1, 0, &out, 1, 0, 0) == FRT_ERR_SHAPE);
}

static void test_groupnorm(void) {
    int64_t d[4] = {2, 6, 3, 5}, S = 15, C = 6;
    float x[180], sc[6] = {0.5f, -1, 2, 1.5f, 0.25f, 3}, b[6] = {0.1f, 0.2f, -0.3f, 0, 1, -1};
    t_fill(x, 180, 21);
    for (int64_t G = 1; G <= 6; G++) {
        if (C % G) continue;
        for (int opset = 18; opset <= 21; opset += 3)
            for (int v = 0; v < 3; v++) {
                int64_t np = opset >= 21 ? C : G;
                frt_value in[3] = {frt_test_value(FRT_FLOAT32, 4, d, x),
                                   frt_test_value(FRT_FLOAT32, 1, &np, sc),
                                   frt_test_value(FRT_FLOAT32, 1, &np, b)}, out;
                frt_onnx_attr at[2] = {frt_test_attr_int("num_groups", G),
                                       frt_test_attr_float("epsilon", 0.01f)};
                CHECK_OK(run("GroupNormalization", opset, at, 2, in, 3, 0, &out, 1,
                             v == 0 ? FRT_TEST_ISA(FRT_ISA_PORTABLE) : v == 1 ? FRT_TEST_ISA(FRT_ISA_AVX2) : 0,
                             1));
                if (!out.data) continue;
                int bad = 0;
                const int64_t cpg = C / G, len = cpg * S;
                for (int64_t n = 0; n < 2; n++)
                    for (int64_t g = 0; g < G; g++) {
                        const float *xg = x + (n * G + g) * len;
                        double m = 0, var = 0;
                        for (int64_t i = 0; i < len; i++) m += xg[i];
                        m /= (double)len;
                        for (int64_t i = 0; i < len; i++) var += (xg[i] - m) * (xg[i] - m);
                        var /= (double)len;
                        for (int64_t i = 0; i < len; i++) {
                            int64_t ch = g * cpg + i / S, pi = opset >= 21 ? ch : g;
                            double r = (xg[i] - m) / sqrt(var + (double)0.01f) * sc[pi] + b[pi];
                            if (!close_d(((float *)out.data)[(n * G + g) * len + i], r, 1e-5, 1e-6))
                                bad++;
                        }
                    }
                CHECK_MSG(!bad, "groupnorm G %lld opset %d variant %d", (long long)G, opset, v);
                free(out.data);
            }
    }
    /* float64; errors: groups not dividing C, scale of the wrong size, missing num_groups */
    double xd[180], sd[2] = {1, 2}, bd[2] = {0, 1};
    for (int i = 0; i < 180; i++) xd[i] = x[i];
    int64_t two = 2, four = 4;
    frt_value in[3] = {frt_test_value(FRT_FLOAT64, 4, d, xd), frt_test_value(FRT_FLOAT64, 1, &two, sd),
                       frt_test_value(FRT_FLOAT64, 1, &two, bd)}, out;
    frt_onnx_attr at = frt_test_attr_int("num_groups", 2);
    CHECK_OK(run("GroupNormalization", 18, &at, 1, in, 3, 0, &out, 1, 0, 0));
    if (out.data) {
        double m = 0, var = 0;
        for (int i = 0; i < 45; i++) m += xd[i];
        m /= 45;
        for (int i = 0; i < 45; i++) var += (xd[i] - m) * (xd[i] - m);
        var /= 45;
        CHECK(close_d(((double *)out.data)[7], (xd[7] - m) / sqrt(var + (double)1e-5f), 1e-12, 1e-12));
        free(out.data);
    }
    frt_onnx_attr a4 = frt_test_attr_int("num_groups", 4);
    in[1] = frt_test_value(FRT_FLOAT64, 1, &four, sd);
    CHECK(run("GroupNormalization", 18, &a4, 1, in, 3, 0, &out, 1, 0, 0) == FRT_ERR_SHAPE);
    in[1] = frt_test_value(FRT_FLOAT64, 1, &four, sd);
    CHECK(run("GroupNormalization", 18, &at, 1, in, 3, 0, &out, 1, 0, 0) == FRT_ERR_SHAPE);
    CHECK(run("GroupNormalization", 18, NULL, 0, in, 3, 0, &out, 1, 0, 0) == FRT_ERR_SHAPE);
}

int main(void) {
    test_groupnorm();
    test_layernorm();
    test_twins();
    test_instancenorm();
    test_mvn();
    test_lpnorm();
    test_lrn();
    TEST_MAIN_END();
}
