/* Quantized ops (src/ops/quant.c) against naive references written from the ONNX spec:
 * QuantizeLinear / DequantizeLinear (per tensor and per axis, uint8 / int8, ties to even,
 * saturation, opset 10 vs 13 forms), DynamicQuantizeLinear, MatMulInteger and QLinearMatMul (zero
 * points and scales per tensor / per row / per column, broadcast batches, 1-D operands),
 * ConvInteger and QLinearConv (1-D, 2-D and 3-D, pads, strides, dilations, groups, per-channel
 * weight parameters, bias); bad input (dtypes, parameter lengths). */
#include <math.h>
#include <stdint.h>

#include "op_harness.h"
#include "test_util.h"

static unsigned g_seed = 777;
static int64_t rnd(int64_t n) {
    g_seed = g_seed * 1664525u + 1013904223u;
    return (int64_t)((g_seed >> 8) % (uint64_t)n);
}

/* ISA tier select may use in run_n: 0 = the host's (capped by FRT_ISA), else FRT_TEST_ISA(t). */
static int g_isa;
static char g_kname[64]; /* the last kernel's name (the harness frees its arena copy) */

static frt_status run_n(const char *op, int64_t opset, const frt_onnx_attr *attrs, size_t na,
                        frt_value *ins, int n_in, unsigned absent, frt_value *out, int n_out) {
    frt_test_op t = {0};
    t.isa = g_isa;
    t.op_type = op;
    t.opset = opset;
    t.attrs = attrs;
    t.n_attrs = na;
    t.inputs = ins;
    t.n_in = n_in;
    t.absent_mask = absent;
    t.n_out = n_out;
    const char *kn = NULL;
    frt_status st = frt_test_run_op(&t, out, &kn);
    snprintf(g_kname, sizeof g_kname, "%s", kn ? kn : "");
    return st;
}

/* Round half to even, written out (not nearbyint) so the reference does not share the kernel's
 * rounding call. */
static double rne(double v) {
    double f = floor(v), d = v - f;
    if (d > 0.5) return f + 1;
    if (d < 0.5) return f;
    return fmod(f, 2.0) == 0 ? f : f + 1;
}
static int64_t sat(double v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : (int64_t)v; }

static int64_t q8_get(int32_t dt, const void *p, int64_t i) {
    return dt == FRT_UINT8 ? ((const uint8_t *)p)[i] : ((const int8_t *)p)[i];
}
static void q8_fill(int32_t dt, void *p, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (dt == FRT_UINT8) ((uint8_t *)p)[i] = (uint8_t)rnd(256);
        else ((int8_t *)p)[i] = (int8_t)(rnd(256) - 128);
    }
}

/* ---- QuantizeLinear / DequantizeLinear ---- */

static void test_quantize_ties(void) {
    /* x / 2: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0, -1.5 -> -2, -2.5 -> -2, then + zp 10 */
    float x[8] = {1, 3, 5, -1, -3, -5, 1000, -1000}, s = 2;
    uint8_t zp = 10;
    uint8_t want[8] = {10, 12, 12, 10, 8, 8, 255, 0};
    int64_t d[1] = {8};
    frt_value ins[3] = {frt_test_value(FRT_FLOAT32, 1, d, x), frt_test_value(FRT_FLOAT32, 0, NULL, &s),
                        frt_test_value(FRT_UINT8, 0, NULL, &zp)};
    frt_value out;
    CHECK_OK(run_n("QuantizeLinear", 13, NULL, 0, ins, 3, 0, &out, 1));
    CHECK(out.dtype == FRT_UINT8 && out.data && memcmp(out.data, want, 8) == 0);
    free(out.data);
    /* no zero point: uint8 with zp 0 */
    CHECK_OK(run_n("QuantizeLinear", 10, NULL, 0, ins, 3, 4, &out, 1));
    uint8_t want0[8] = {0, 2, 2, 0, 0, 0, 255, 0};
    CHECK(out.dtype == FRT_UINT8 && out.data && memcmp(out.data, want0, 8) == 0);
    free(out.data);
    int8_t zq = -3;
    ins[2] = frt_test_value(FRT_INT8, 0, NULL, &zq);
    int8_t wanti[8] = {-3, -1, -1, -3, -5, -5, 127, -128};
    CHECK_OK(run_n("QuantizeLinear", 13, NULL, 0, ins, 3, 0, &out, 1));
    CHECK(out.dtype == FRT_INT8 && out.data && memcmp(out.data, wanti, 8) == 0);
    free(out.data);
}

static void test_qdq_axis(void) {
    const int64_t dims[4] = {2, 3, 5, 7};
    for (int dti = 0; dti < 2; dti++) {
        int32_t qt = dti ? FRT_INT8 : FRT_UINT8;
        int64_t lo = dti ? -128 : 0, hi = dti ? 127 : 255;
        for (int axis = -4; axis <= 4; axis++) {
            bool per_tensor = axis == 4;
            int ax = per_tensor ? 0 : axis < 0 ? axis + 4 : axis;
            int64_t C = per_tensor ? 1 : dims[ax], n = numel(dims, 4);
            int64_t inner = numel(dims + ax + 1, 3 - ax);
            float *x = malloc((size_t)n * 4), sc[7];
            uint8_t zp[7];
            for (int64_t i = 0; i < n; i++) x[i] = (float)(rnd(2001) - 1000) * 0.37f;
            for (int64_t c = 0; c < C; c++) {
                sc[c] = 0.5f + (float)rnd(40) * 0.25f;
                zp[c] = dti ? (uint8_t)(int8_t)(rnd(41) - 20) : (uint8_t)rnd(256);
            }
            int64_t cd[1] = {C};
            frt_value ins[3] = {frt_test_value(FRT_FLOAT32, 4, dims, x),
                                frt_test_value(FRT_FLOAT32, per_tensor ? 0 : 1, cd, sc),
                                frt_test_value(qt, per_tensor ? 0 : 1, cd, zp)};
            frt_onnx_attr at = frt_test_attr_int("axis", axis);
            frt_value q, dq;
            CHECK_OK(run_n("QuantizeLinear", 13, &at, per_tensor ? 0 : 1, ins, 3, 0, &q, 1));
            int bad = 0;
            for (int64_t i = 0; q.data && i < n; i++) {
                int64_t c = per_tensor ? 0 : (i / inner) % C;
                int64_t z = q8_get(qt, zp, c);
                int64_t want = sat(rne((double)(x[i] / sc[c])) + (double)z, lo, hi);
                bad += q8_get(qt, q.data, i) != want;
            }
            CHECK_MSG(q.data && !bad, "quantize %s axis %d: %d wrong", dti ? "int8" : "uint8", axis,
                      bad);
            /* and back */
            frt_value dins[3] = {frt_test_value(qt, 4, dims, q.data), ins[1], ins[2]};
            CHECK_OK(run_n("DequantizeLinear", 13, &at, per_tensor ? 0 : 1, dins, 3, 0, &dq, 1));
            bad = 0;
            for (int64_t i = 0; dq.data && q.data && i < n; i++) {
                int64_t c = per_tensor ? 0 : (i / inner) % C;
                float want = (float)(q8_get(qt, q.data, i) - q8_get(qt, zp, c)) * sc[c];
                bad += ((float *)dq.data)[i] != want;
            }
            CHECK_MSG(dq.data && !bad, "dequantize axis %d: %d wrong", axis, bad);
            free(q.data);
            free(dq.data);
            free(x);
        }
    }
    /* DequantizeLinear of int32 (zero point absent) */
    int32_t xi[4] = {-7, 0, 100000, -2147483647};
    float s = 0.5f, want[4] = {-3.5f, 0, 50000, -1073741823.5f};
    int64_t d4[1] = {4};
    frt_value ins[2] = {frt_test_value(FRT_INT32, 1, d4, xi), frt_test_value(FRT_FLOAT32, 0, NULL, &s)};
    frt_value out;
    CHECK_OK(run_n("DequantizeLinear", 13, NULL, 0, ins, 2, 0, &out, 1));
    CHECK(out.data && t_close(out.data, want, 4, 0, 1e-7f));
    free(out.data);
}

static void test_qdq_bad(void) {
    float x[6] = {0}, sc[3] = {1, 2, 3};
    uint8_t zp[3] = {0};
    int64_t xd[2] = {2, 3}, c3[1] = {3}, c2[1] = {2};
    frt_value out;
    /* opset 10: per tensor only */
    frt_value ins[3] = {frt_test_value(FRT_FLOAT32, 2, xd, x), frt_test_value(FRT_FLOAT32, 1, c3, sc),
                        frt_test_value(FRT_UINT8, 1, c3, zp)};
    CHECK(run_n("QuantizeLinear", 10, NULL, 0, ins, 3, 0, &out, 1) == FRT_ERR_SHAPE);
    CHECK(run_n("DequantizeLinear", 10, NULL, 0, ins, 3, 0, &out, 1) != FRT_OK);
    /* opset 13, axis 1 (size 3) fits; axis 0 (size 2) does not */
    CHECK_OK(run_n("QuantizeLinear", 13, NULL, 0, ins, 3, 0, &out, 1));
    free(out.data);
    frt_onnx_attr a0 = frt_test_attr_int("axis", 0);
    CHECK(run_n("QuantizeLinear", 13, &a0, 1, ins, 3, 0, &out, 1) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("3 elements") && err_has("2"), "%s", frt_last_error());
    frt_value i2[3] = {ins[0], ins[1], frt_test_value(FRT_UINT8, 1, c2, zp)};
    CHECK(run_n("QuantizeLinear", 13, NULL, 0, i2, 3, 0, &out, 1) == FRT_ERR_SHAPE);
    /* dtypes: int64 scale, float64 x, float zero point for dequantize */
    int64_t isc = 1;
    frt_value bi[2] = {ins[0], frt_test_value(FRT_INT64, 0, NULL, &isc)};
    CHECK(run_n("QuantizeLinear", 13, NULL, 0, bi, 2, 0, &out, 1) == FRT_ERR_UNSUPPORTED);
    double xd64[6] = {0};
    frt_value bx[2] = {frt_test_value(FRT_FLOAT64, 2, xd, xd64), ins[1]};
    CHECK(run_n("QuantizeLinear", 13, NULL, 0, bx, 2, 0, &out, 1) == FRT_ERR_UNSUPPORTED);
    frt_value bd[2] = {frt_test_value(FRT_FLOAT32, 2, xd, x), ins[1]};
    CHECK(run_n("DequantizeLinear", 13, NULL, 0, bd, 2, 0, &out, 1) == FRT_ERR_UNSUPPORTED);
    frt_onnx_attr bs = frt_test_attr_int("block_size", 2);
    CHECK(run_n("QuantizeLinear", 21, &bs, 1, ins, 3, 0, &out, 1) == FRT_ERR_UNSUPPORTED);
}

static void test_dynamic_quantize(void) {
    for (int t = 0; t < 4; t++) {
        float x[37];
        int64_t d[1] = {37};
        for (int i = 0; i < 37; i++)
            x[i] = t == 0 ? (float)(rnd(1000) - 300) * 0.013f
                 : t == 1 ? -(float)rnd(1000) * 0.01f - 0.5f
                 : t == 2 ? (float)rnd(1000) * 0.007f + 0.1f
                          : 0.0f;
        frt_value in = frt_test_value(FRT_FLOAT32, 1, d, x), out[3];
        CHECK_OK(run_n("DynamicQuantizeLinear", 11, NULL, 0, &in, 1, 0, out, 3));
        float lo = 0, hi = 0;
        for (int i = 0; i < 37; i++) {
            lo = fminf(lo, x[i]);
            hi = fmaxf(hi, x[i]);
        }
        float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
        int64_t zp = sat(rne((double)((0 - lo) / scale)), 0, 255);
        CHECK(out[1].data && *(float *)out[1].data == scale);
        CHECK_MSG(out[2].data && *(uint8_t *)out[2].data == zp, "case %d zp %d want %lld", t,
                  out[2].data ? *(uint8_t *)out[2].data : -1, (long long)zp);
        int bad = 0;
        for (int i = 0; out[0].data && i < 37; i++)
            bad += ((uint8_t *)out[0].data)[i] != sat(rne((double)(x[i] / scale)) + (double)zp, 0, 255);
        CHECK_MSG(out[0].data && !bad, "case %d: %d wrong", t, bad);
        for (int o = 0; o < 3; o++) free(out[o].data);
    }
    int32_t xi[2] = {1, 2};
    int64_t d2[1] = {2};
    frt_value in = frt_test_value(FRT_INT32, 1, d2, xi), out[3];
    CHECK(run_n("DynamicQuantizeLinear", 11, NULL, 0, &in, 1, 0, out, 3) != FRT_OK);
}

/* ---- MatMulInteger / QLinearMatMul ---- */

typedef struct mm_case {
    int ra, rb;
    int64_t ad[4], bd[4];
} mm_case;

/* Reference over the broadcast batch: acc[t][i][j] = sum_k (a - azp_i)(b - bzp_j). */
static void ref_mm(const mm_case *mc, int32_t adt, const void *a, int32_t bdt, const void *b,
                   const int64_t *azp, int64_t naz, const int64_t *bzp, int64_t nbz,
                   int64_t *acc, int64_t *nbatch, int64_t *M_, int64_t *N_) {
    int64_t M = mc->ra == 1 ? 1 : mc->ad[mc->ra - 2], K = mc->ad[mc->ra - 1];
    int64_t N = mc->rb == 1 ? 1 : mc->bd[mc->rb - 1];
    int bra = mc->ra > 2 ? mc->ra - 2 : 0, brb = mc->rb > 2 ? mc->rb - 2 : 0;
    int br = bra > brb ? bra : brb;
    int64_t bat[4], ab[4], bb[4], nb = 1;
    for (int i = 0; i < br; i++) {
        ab[i] = i - (br - bra) >= 0 ? mc->ad[i - (br - bra)] : 1;
        bb[i] = i - (br - brb) >= 0 ? mc->bd[i - (br - brb)] : 1;
        bat[i] = ab[i] > bb[i] ? ab[i] : bb[i];
        nb *= bat[i];
    }
    for (int64_t t = 0; t < nb; t++) {
        int64_t co[4], rem = t, ao = 0, bo = 0;
        for (int i = br - 1; i >= 0; i--) {
            co[i] = rem % bat[i];
            rem /= bat[i];
        }
        for (int i = 0; i < br; i++) {
            ao = ao * ab[i] + (ab[i] == 1 ? 0 : co[i]);
            bo = bo * bb[i] + (bb[i] == 1 ? 0 : co[i]);
        }
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                int64_t s = 0;
                for (int64_t k = 0; k < K; k++)
                    s += (q8_get(adt, a, (ao * M + i) * K + k) - azp[naz == 1 ? 0 : i]) *
                         (q8_get(bdt, b, (bo * K + k) * N + j) - bzp[nbz == 1 ? 0 : j]);
                acc[(t * M + i) * N + j] = s;
            }
    }
    *nbatch = nb;
    *M_ = M;
    *N_ = N;
}

static void test_matmul_integer(void) {
    const mm_case cases[] = {
        {2, 2, {4, 3}, {3, 2}},
        {2, 2, {7, 19}, {19, 13}},
        {4, 3, {2, 1, 5, 9}, {3, 9, 6}},
        {1, 2, {11}, {11, 5}},
        {3, 1, {2, 3, 8}, {8}},
        {2, 4, {3, 4}, {2, 2, 4, 3}},
        /* the SIMD tiles: 4 rows x 16 columns, 8-column and single-column tails, odd K */
        {2, 2, {9, 33}, {33, 37}},
        {3, 2, {2, 5, 21}, {21, 24}},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int variant = 0; variant < 4; variant++) {
            const mm_case *mc = &cases[ci];
            int32_t adt = variant & 1 ? FRT_INT8 : FRT_UINT8, bdt = variant & 2 ? FRT_INT8 : FRT_UINT8;
            int64_t na = numel(mc->ad, mc->ra), nb = numel(mc->bd, mc->rb);
            uint8_t a[1400], b[1400];
            q8_fill(adt, a, na);
            q8_fill(bdt, b, nb);
            int64_t M = mc->ra == 1 ? 1 : mc->ad[mc->ra - 2], N = mc->rb == 1 ? 1 : mc->bd[mc->rb - 1];
            /* zero points: variant 0 absent, 1 per tensor, 2 per row / column, 3 mixed */
            uint8_t azp8[64], bzp8[64];
            int64_t azp[64], bzp[64];
            int64_t naz = variant == 2 && mc->ra > 1 ? M : 1, nbz = variant >= 2 && mc->rb > 1 ? N : 1;
            q8_fill(adt, azp8, naz);
            q8_fill(bdt, bzp8, nbz);
            for (int64_t i = 0; i < naz; i++) azp[i] = variant ? q8_get(adt, azp8, i) : 0;
            for (int64_t i = 0; i < nbz; i++) bzp[i] = variant ? q8_get(bdt, bzp8, i) : 0;
            int64_t zad[1] = {naz}, zbd[1] = {nbz};
            frt_value ins[4] = {frt_test_value(adt, mc->ra, mc->ad, a), frt_test_value(bdt, mc->rb, mc->bd, b),
                                frt_test_value(adt, naz == 1 && variant == 1 ? 0 : 1, zad, azp8),
                                frt_test_value(bdt, 1, zbd, bzp8)};
            frt_value out;
            CHECK_OK(run_n("MatMulInteger", 10, NULL, 0, ins, 4, variant ? 0 : 12, &out, 1));
            int64_t acc[1400], nbat, m_, n_;
            ref_mm(mc, adt, a, bdt, b, azp, naz, bzp, nbz, acc, &nbat, &m_, &n_);
            CHECK(out.dtype == FRT_INT32 && out.numel == nbat * m_ * n_);
            int bad = 0;
            for (int64_t i = 0; out.data && i < out.numel; i++) bad += ((int32_t *)out.data)[i] != acc[i];
            CHECK_MSG(out.data && !bad, "case %zu variant %d: %d wrong", ci, variant, bad);
            free(out.data);

            /* QLinearMatMul on the same operands: a per row, b per column scales */
            float as[64], bs[64], ys = 0.75f;
            for (int64_t i = 0; i < naz; i++) as[i] = 0.01f + (float)rnd(10) * 0.003f;
            for (int64_t i = 0; i < nbz; i++) bs[i] = 0.02f + (float)rnd(10) * 0.001f;
            int32_t yt = variant & 1 ? FRT_INT8 : FRT_UINT8;
            uint8_t yzp8 = yt == FRT_UINT8 ? 128 : (uint8_t)(int8_t)-5;
            frt_value ql[8] = {ins[0], frt_test_value(FRT_FLOAT32, 1, zad, as), ins[2],
                               ins[1], frt_test_value(FRT_FLOAT32, 1, zbd, bs), ins[3],
                               frt_test_value(FRT_FLOAT32, 0, NULL, &ys),
                               frt_test_value(yt, 0, NULL, &yzp8)};
            if (!variant) { /* zero points are required here: use zeros */
                memset(azp8, 0, sizeof azp8);
                memset(bzp8, 0, sizeof bzp8);
            }
            CHECK_OK(run_n("QLinearMatMul", 10, NULL, 0, ql, 8, 0, &out, 1));
            int64_t lo = yt == FRT_UINT8 ? 0 : -128, hi = yt == FRT_UINT8 ? 255 : 127;
            bad = 0;
            for (int64_t t = 0; out.data && t < nbat; t++)
                for (int64_t i = 0; i < m_; i++)
                    for (int64_t j = 0; j < n_; j++) {
                        int64_t o = (t * m_ + i) * n_ + j;
                        float mult = as[naz == 1 ? 0 : i] * bs[nbz == 1 ? 0 : j] / ys;
                        int64_t want = sat(rne((double)((float)acc[o] * mult)) +
                                               (double)q8_get(yt, &yzp8, 0), lo, hi);
                        bad += q8_get(yt, out.data, o) != want;
                    }
            CHECK_MSG(out.data && !bad, "qlinear case %zu variant %d: %d wrong", ci, variant, bad);
            free(out.data);
        }
}

static void test_matmul_bad(void) {
    uint8_t a[6] = {0}, b[6] = {0}, zp[3] = {0};
    int64_t ad[2] = {2, 3}, bd[2] = {3, 2}, z3[1] = {3};
    frt_value out;
    float fa[6] = {0};
    frt_value f[2] = {frt_test_value(FRT_FLOAT32, 2, ad, fa), frt_test_value(FRT_UINT8, 2, bd, b)};
    CHECK(run_n("MatMulInteger", 10, NULL, 0, f, 2, 0, &out, 1) == FRT_ERR_UNSUPPORTED);
    CHECK_MSG(err_has("uint8 or int8"), "%s", frt_last_error());
    /* a_zero_point with 3 entries for 2 rows */
    frt_value z[3] = {frt_test_value(FRT_UINT8, 2, ad, a), frt_test_value(FRT_UINT8, 2, bd, b),
                      frt_test_value(FRT_UINT8, 1, z3, zp)};
    CHECK(run_n("MatMulInteger", 10, NULL, 0, z, 3, 0, &out, 1) == FRT_ERR_SHAPE);
    /* a zero point of another dtype than A */
    int8_t zi = 0;
    frt_value zt[3] = {z[0], z[1], frt_test_value(FRT_INT8, 0, NULL, &zi)};
    CHECK(run_n("MatMulInteger", 10, NULL, 0, zt, 3, 0, &out, 1) == FRT_ERR_SHAPE);
    /* K mismatch */
    int64_t bd2[2] = {2, 3};
    frt_value k[2] = {z[0], frt_test_value(FRT_UINT8, 2, bd2, b)};
    CHECK(run_n("MatMulInteger", 10, NULL, 0, k, 2, 0, &out, 1) == FRT_ERR_SHAPE);
}

/* ---- ConvInteger / QLinearConv ---- */

typedef struct conv_case {
    int nsp;
    int64_t N, C, M, group;
    int64_t in[3], k[3], st[3], dil[3], pb[3], pe[3];
    const char *auto_pad;
} conv_case;

static void test_conv_integer(void) {
    const conv_case cases[] = {
        {2, 1, 1, 1, 1, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, NULL},
        {2, 2, 4, 6, 2, {7, 6}, {3, 2}, {2, 1}, {1, 2}, {1, 0}, {2, 1}, NULL},
        {1, 1, 3, 5, 1, {11}, {3}, {2}, {2}, {1}, {2}, NULL},
        {3, 1, 2, 3, 1, {4, 5, 3}, {2, 3, 1}, {1, 2, 1}, {1, 1, 1}, {0, 1, 0}, {1, 1, 0}, NULL},
        {2, 1, 3, 3, 3, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, "SAME_UPPER"},
        {2, 1, 2, 4, 1, {6, 5}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, "SAME_LOWER"},
        /* 8 output channels x 63 positions, odd Kg = 27: every SIMD tile and tail */
        {2, 2, 3, 8, 1, {9, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, NULL},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int variant = 0; variant < 3; variant++) {
            const conv_case *cc = &cases[ci];
            int n = cc->nsp;
            int32_t xt = variant == 1 ? FRT_INT8 : FRT_UINT8, wt = variant == 2 ? FRT_INT8 : FRT_UINT8;
            int64_t xd[5] = {cc->N, cc->C}, wd[5] = {cc->M, cc->C / cc->group};
            for (int i = 0; i < n; i++) {
                xd[2 + i] = cc->in[i];
                wd[2 + i] = cc->k[i];
            }
            int64_t nx = numel(xd, n + 2), nw = numel(wd, n + 2);
            uint8_t *x = malloc((size_t)nx), *w = malloc((size_t)nw);
            q8_fill(xt, x, nx);
            q8_fill(wt, w, nw);
            uint8_t xzp, wzp[8];
            q8_fill(xt, &xzp, 1);
            int64_t nwz = variant ? cc->M : 1;
            q8_fill(wt, wzp, nwz);
            /* output geometry, pads resolved as the spec says */
            int64_t od[5] = {cc->N, cc->M}, pad[3];
            for (int i = 0; i < n; i++) {
                int64_t dk = (cc->k[i] - 1) * cc->dil[i] + 1;
                if (cc->auto_pad) {
                    int64_t o = (cc->in[i] + cc->st[i] - 1) / cc->st[i];
                    int64_t tot = (o - 1) * cc->st[i] + dk - cc->in[i];
                    if (tot < 0) tot = 0;
                    pad[i] = cc->auto_pad[5] == 'U' ? tot / 2 : tot - tot / 2;
                    od[2 + i] = o;
                } else {
                    pad[i] = cc->pb[i];
                    od[2 + i] = (cc->in[i] + cc->pb[i] + cc->pe[i] - dk) / cc->st[i] + 1;
                }
            }
            int64_t ny = numel(od, n + 2);
            int64_t *acc = malloc((size_t)ny * 8);
            int32_t *bias = malloc((size_t)cc->M * 4);
            for (int64_t m = 0; m < cc->M; m++) bias[m] = (int32_t)(rnd(2001) - 1000);
            int64_t Cg = cc->C / cc->group, Mg = cc->M / cc->group, P = ny / (cc->N * cc->M);
            int64_t kvol = numel(cc->k, n);
            for (int64_t b = 0; b < cc->N; b++)
                for (int64_t m = 0; m < cc->M; m++)
                    for (int64_t p = 0; p < P; p++) {
                        int64_t oc[3], rem = p, s = 0;
                        for (int i = n - 1; i >= 0; i--) {
                            oc[i] = rem % od[2 + i];
                            rem /= od[2 + i];
                        }
                        int64_t gr = m / Mg;
                        for (int64_t c = 0; c < Cg; c++)
                            for (int64_t kk = 0; kk < kvol; kk++) {
                                int64_t kc[3], r2 = kk, off = 0, inside = 1;
                                for (int i = n - 1; i >= 0; i--) {
                                    kc[i] = r2 % cc->k[i];
                                    r2 /= cc->k[i];
                                }
                                for (int i = 0; i < n; i++) {
                                    int64_t pos = oc[i] * cc->st[i] - pad[i] + kc[i] * cc->dil[i];
                                    if (pos < 0 || pos >= cc->in[i]) inside = 0;
                                    off = off * cc->in[i] + pos;
                                }
                                if (!inside) continue; /* the padding is the zero point */
                                int64_t xv = q8_get(xt, x, (b * cc->C + gr * Cg + c) * numel(cc->in, n) + off);
                                int64_t wv = q8_get(wt, w, (m * Cg + c) * kvol + kk);
                                s += (xv - q8_get(xt, &xzp, 0)) * (wv - q8_get(wt, wzp, nwz == 1 ? 0 : m));
                            }
                        acc[(b * cc->M + m) * P + p] = s;
                    }
            frt_onnx_attr at[6];
            size_t na = 0;
            at[na++] = frt_test_attr_ints("kernel_shape", cc->k, (size_t)n);
            at[na++] = frt_test_attr_ints("strides", cc->st, (size_t)n);
            at[na++] = frt_test_attr_ints("dilations", cc->dil, (size_t)n);
            at[na++] = frt_test_attr_int("group", cc->group);
            int64_t pads[6];
            for (int i = 0; i < n; i++) {
                pads[i] = cc->pb[i];
                pads[n + i] = cc->pe[i];
            }
            if (cc->auto_pad) at[na++] = frt_test_attr_string("auto_pad", cc->auto_pad);
            else at[na++] = frt_test_attr_ints("pads", pads, 2 * (size_t)n);
            int64_t zw[1] = {nwz};
            frt_value ins[4] = {frt_test_value(xt, n + 2, xd, x), frt_test_value(wt, n + 2, wd, w),
                                frt_test_value(xt, 0, NULL, &xzp),
                                frt_test_value(wt, variant ? 1 : 0, zw, wzp)};
            frt_value out;
            CHECK_OK(run_n("ConvInteger", 10, at, na, ins, 4, 0, &out, 1));
            int bad = out.rank == n + 2 ? 0 : 1;
            for (int i = 0; !bad && i < n + 2; i++) bad = out.dims[i] != od[i];
            for (int64_t i = 0; out.data && !bad && i < ny; i++) bad += ((int32_t *)out.data)[i] != acc[i];
            CHECK_MSG(out.data && !bad, "conv case %zu variant %d: %d wrong", ci, variant, bad);
            free(out.data);

            /* QLinearConv: per-channel w_scale (variant > 0), bias */
            float xs = 0.05f, ws[8], ys = 0.9f;
            for (int64_t m = 0; m < nwz; m++) ws[m] = 0.01f + (float)rnd(20) * 0.002f;
            uint8_t yzp = 100;
            frt_value ql[9] = {ins[0], frt_test_value(FRT_FLOAT32, 0, NULL, &xs), ins[2],
                               ins[1], frt_test_value(FRT_FLOAT32, variant ? 1 : 0, zw, ws), ins[3],
                               frt_test_value(FRT_FLOAT32, 0, NULL, &ys),
                               frt_test_value(FRT_UINT8, 0, NULL, &yzp),
                               frt_test_value(FRT_INT32, 1, &cc->M, bias)};
            CHECK_OK(run_n("QLinearConv", 10, at, na, ql, 9, 0, &out, 1));
            bad = 0;
            for (int64_t i = 0; out.data && i < ny; i++) {
                int64_t m = (i / P) % cc->M;
                float mult = xs * ws[nwz == 1 ? 0 : m] / ys;
                int64_t want = sat(rne((double)((float)(int32_t)(acc[i] + bias[m]) * mult)) + 100, 0, 255);
                bad += ((uint8_t *)out.data)[i] != want;
            }
            CHECK_MSG(out.data && !bad, "qlinear conv case %zu variant %d: %d wrong", ci, variant, bad);
            free(out.data);
            free(x);
            free(w);
            free(acc);
            free(bias);
        }
}

static void test_conv_bad(void) {
    uint8_t x[2 * 9] = {0}, w[4 * 4] = {0}, zp[3] = {0};
    int64_t xd[4] = {1, 2, 3, 3}, wd[4] = {1, 2, 2, 2}, z3[1] = {3};
    frt_value out;
    frt_value ins[4] = {frt_test_value(FRT_UINT8, 4, xd, x), frt_test_value(FRT_UINT8, 4, wd, w),
                        frt_test_value(FRT_UINT8, 0, NULL, zp), frt_test_value(FRT_UINT8, 1, z3, zp)};
    /* w_zero_point has 3 entries for 1 output channel */
    CHECK(run_n("ConvInteger", 10, NULL, 0, ins, 4, 0, &out, 1) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("w_zero_point"), "%s", frt_last_error());
    /* channels that do not match W */
    int64_t wd3[4] = {1, 3, 2, 2};
    frt_value bc[2] = {ins[0], frt_test_value(FRT_UINT8, 4, wd3, w)};
    CHECK(run_n("ConvInteger", 10, NULL, 0, bc, 2, 0, &out, 1) == FRT_ERR_SHAPE);
    /* a kernel larger than the input */
    int64_t wdb[4] = {1, 2, 4, 4};
    frt_value bk[2] = {ins[0], frt_test_value(FRT_UINT8, 4, wdb, w)};
    CHECK(run_n("ConvInteger", 10, NULL, 0, bk, 2, 0, &out, 1) == FRT_ERR_SHAPE);
    /* bad attributes */
    int64_t st0[2] = {0, 1};
    frt_onnx_attr a = frt_test_attr_ints("strides", st0, 2);
    CHECK(run_n("ConvInteger", 10, &a, 1, ins, 2, 0, &out, 1) == FRT_ERR_MALFORMED);
    frt_onnx_attr ap = frt_test_attr_string("auto_pad", "SAME");
    CHECK(run_n("ConvInteger", 10, &ap, 1, ins, 2, 0, &out, 1) == FRT_ERR_MALFORMED);
    /* float x */
    float fx[18] = {0};
    frt_value fl[2] = {frt_test_value(FRT_FLOAT32, 4, xd, fx), ins[1]};
    CHECK(run_n("ConvInteger", 10, NULL, 0, fl, 2, 0, &out, 1) == FRT_ERR_UNSUPPORTED);
}

int main(void) {
    test_quantize_ties();
    test_qdq_axis();
    test_qdq_bad();
    test_dynamic_quantize();
    /* the integer products at the portable tier and at the host's (SIMD) tier */
    for (int tier = 0; tier < 2; tier++) {
        g_isa = tier ? 0 : FRT_TEST_ISA(FRT_ISA_PORTABLE);
        test_matmul_integer();
        test_conv_integer();
        if (tier == 0) CHECK_MSG(g_kname[0] && !strstr(g_kname, "avx"), "%s", g_kname);
        if (tier == 1 && frt_cpu_tier() >= FRT_ISA_AVX2)
            CHECK_MSG(strstr(g_kname, "_avx2"), "%s", g_kname);
    }
    g_isa = 0;
    test_matmul_bad();
    test_conv_bad();
    TEST_MAIN_END();
}
