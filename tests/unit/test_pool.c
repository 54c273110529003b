/* MaxPool / AveragePool / GlobalAveragePool against naive references written from the ONNX spec,
 * plus a few outputs taken from the ONNX backend test cases. */
#include <float.h>
#include <stdint.h>

#include "op_harness.h"
#include "ops/sgemm.h"
#include "ops/cpu.h"
#include "test_util.h"

#if FRT_HAVE_X86
void frt_pool_vmax_avx2(float *dst, const float *src, int64_t n);
void frt_pool_vadd_avx2(float *dst, const float *src, int64_t n);
float frt_pool_sum_avx2(const float *src, int64_t n);
void frt_pool_vmax_avx512(float *dst, const float *src, int64_t n);
void frt_pool_vadd_avx512(float *dst, const float *src, int64_t n);
float frt_pool_sum_avx512(const float *src, int64_t n);
int64_t frt_pool_hrow_avx2(int is_max, const float *row, int64_t len, float *out, int64_t n,
                           int64_t s, int64_t K, int64_t d);
#endif

enum { MAXP = 0, AVGP = 1 };
enum { AP_NOTSET, AP_SAME_UPPER, AP_SAME_LOWER, AP_VALID };
static const char *ap_names[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};

typedef struct pool_cfg {
    int kind, nsp;
    int64_t in[3], k[3], s[3], d[3], pads[6];
    int has_s, has_d, has_pads;
    int ceil_mode, include_pad, auto_pad;
} pool_cfg;

/* Spec output size of one dim and effective begin/end pads; -1 if the window does not fit. */
static int64_t ref_out_dim(const pool_cfg *c, int i, int64_t *pb, int64_t *pe) {
    int64_t in = c->in[i], k = c->k[i], s = c->s[i], d = c->d[i];
    int64_t ek = (k - 1) * d + 1;
    *pb = c->pads[i];
    *pe = c->pads[c->nsp + i];
    if (c->auto_pad == AP_VALID) {
        *pb = *pe = 0;
        if (in < ek) return -1;
        return (int64_t)ceil((double)(in - ek + 1) / (double)s);
    }
    if (c->auto_pad == AP_SAME_UPPER || c->auto_pad == AP_SAME_LOWER) {
        int64_t o = (int64_t)ceil((double)in / (double)s);
        int64_t tot = (o - 1) * s + ek - in;
        if (tot < 0) tot = 0;
        *pb = c->auto_pad == AP_SAME_UPPER ? tot / 2 : tot - tot / 2;
        *pe = tot - *pb;
        return o;
    }
    double v = (double)(in + *pb + *pe - ek) / (double)s + 1.0;
    if (in + *pb + *pe < ek) return -1;
    int64_t o = c->ceil_mode ? (int64_t)ceil(v) : (int64_t)floor(v);
    /* ceil_mode: the last window must start inside the input or the left padding */
    if (c->ceil_mode && (o - 1) * s >= in + *pb) o--;
    return o;
}

/* Naive pooling over planes; returns the number of outputs per plane (0 if invalid). */
static int64_t ref_pool(const pool_cfg *c, int64_t planes, const float *X, float *Y,
                        int64_t *odims) {
    int64_t pb[3], pe[3], in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1},
                              s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, b3[3] = {0, 0, 0},
                              e3[3] = {0, 0, 0};
    for (int i = 0; i < c->nsp; i++) {
        int j = 3 - c->nsp + i;
        odims[i] = out[j] = ref_out_dim(c, i, &pb[i], &pe[i]);
        if (out[j] <= 0) return 0;
        in[j] = c->in[i];
        k[j] = c->k[i];
        s[j] = c->s[i];
        d[j] = c->d[i];
        b3[j] = pb[i];
        e3[j] = pe[i];
    }
    int64_t ip = in[0] * in[1] * in[2], op = out[0] * out[1] * out[2];
    for (int64_t p = 0; p < planes; p++)
        for (int64_t o0 = 0; o0 < out[0]; o0++)
            for (int64_t o1 = 0; o1 < out[1]; o1++)
                for (int64_t o2 = 0; o2 < out[2]; o2++) {
                    double acc = c->kind == MAXP ? -FLT_MAX : 0.0;
                    int64_t n_valid = 0, n_pad = 0;
                    for (int64_t k0 = 0; k0 < k[0]; k0++)
                        for (int64_t k1 = 0; k1 < k[1]; k1++)
                            for (int64_t k2 = 0; k2 < k[2]; k2++) {
                                int64_t pos[3] = {o0 * s[0] - b3[0] + k0 * d[0],
                                                  o1 * s[1] - b3[1] + k1 * d[1],
                                                  o2 * s[2] - b3[2] + k2 * d[2]};
                                int inside = 1, inpad = 1;
                                for (int q = 0; q < 3; q++) {
                                    if (pos[q] < 0 || pos[q] >= in[q]) inside = 0;
                                    if (pos[q] >= in[q] + e3[q]) inpad = 0;
                                }
                                n_pad += inpad;
                                if (!inside) continue;
                                n_valid++;
                                float v = X[p * ip + (pos[0] * in[1] + pos[1]) * in[2] + pos[2]];
                                if (c->kind == MAXP) acc = v > acc ? v : acc;
                                else acc += v;
                            }
                    if (c->kind == AVGP) {
                        int64_t div = c->include_pad ? n_pad : n_valid;
                        acc = div ? acc / (double)div : 0.0;
                    }
                    Y[p * op + (o0 * out[1] + o1) * out[2] + o2] = (float)acc;
                }
    return op;
}

/* Runs the op; returns 1 when it matches the reference. */
static int run_pool(const pool_cfg *c, int64_t N, int64_t C, int threads, const char **kname) {
    int64_t xd[5] = {N, C}, planes = N * C, ip = 1;
    for (int i = 0; i < c->nsp; i++) {
        xd[2 + i] = c->in[i];
        ip *= c->in[i];
    }
    float *X = malloc((size_t)(planes * ip + 1) * 4);
    t_fill(X, (size_t)(planes * ip), (unsigned)(ip + 7));
    int64_t od[3];
    float *R = malloc((size_t)(planes * ip * 9 + 64) * 4); /* outputs <= (in+pads) per dim */
    int64_t op = ref_pool(c, planes, X, R, od);
    frt_onnx_attr attrs[8];
    size_t na = 0;
    attrs[na++] = frt_test_attr_ints("kernel_shape", c->k, (size_t)c->nsp);
    if (c->has_s) attrs[na++] = frt_test_attr_ints("strides", c->s, (size_t)c->nsp);
    if (c->has_d) attrs[na++] = frt_test_attr_ints("dilations", c->d, (size_t)c->nsp);
    if (c->has_pads) attrs[na++] = frt_test_attr_ints("pads", c->pads, 2 * (size_t)c->nsp);
    if (c->ceil_mode) attrs[na++] = frt_test_attr_int("ceil_mode", 1);
    if (c->kind == AVGP) attrs[na++] = frt_test_attr_int("count_include_pad", c->include_pad);
    if (c->auto_pad != AP_NOTSET) attrs[na++] = frt_test_attr_string("auto_pad", ap_names[c->auto_pad]);
    frt_value in = frt_test_value(FRT_FLOAT32, 2 + c->nsp, xd, X);
    frt_test_op t = {0};
    t.op_type = c->kind == MAXP ? "MaxPool" : "AveragePool";
    t.opset = 19;
    t.attrs = attrs;
    t.n_attrs = na;
    t.inputs = &in;
    t.n_in = 1;
    t.n_out = 1;
    t.n_threads = threads;
    frt_value out;
    frt_status st = frt_test_run_op(&t, &out, kname);
    int ok;
    if (op == 0) {
        ok = st == FRT_ERR_SHAPE; /* window larger than the padded input */
        if (st == FRT_OK) free(out.data);
    } else if (st != FRT_OK) {
        fprintf(stderr, "  pool failed: %s\n", frt_last_error());
        ok = 0;
    } else {
        ok = out.rank == 2 + c->nsp && out.dims[0] == N && out.dims[1] == C;
        for (int i = 0; ok && i < c->nsp; i++) ok = out.dims[2 + i] == od[i];
        ok = ok && t_close(out.data, R, (size_t)(planes * op), 1e-5f, 1e-5f);
        free(out.data);
    }
    if (!ok) {
        fprintf(stderr, "  %s nsp=%d in=", t.op_type, c->nsp);
        for (int i = 0; i < c->nsp; i++) fprintf(stderr, "%lld ", (long long)c->in[i]);
        fprintf(stderr, "k=");
        for (int i = 0; i < c->nsp; i++) fprintf(stderr, "%lld ", (long long)c->k[i]);
        fprintf(stderr, "s=");
        for (int i = 0; i < c->nsp; i++) fprintf(stderr, "%lld ", (long long)c->s[i]);
        fprintf(stderr, "d=");
        for (int i = 0; i < c->nsp; i++) fprintf(stderr, "%lld ", (long long)c->d[i]);
        fprintf(stderr, "pads=");
        for (int i = 0; i < 2 * c->nsp; i++) fprintf(stderr, "%lld ", (long long)c->pads[i]);
        fprintf(stderr, "ceil=%d incl=%d auto=%s st=%d\n", c->ceil_mode, c->include_pad,
                ap_names[c->auto_pad], (int)st);
    }
    free(X);
    free(R);
    return ok;
}

static void test_pool_2d_matrix(void) {
    static const int64_t sizes[][2] = {{7, 9}, {5, 5}, {2, 3}, {8, 6}};
    static const int64_t ks[][2] = {{1, 1}, {2, 2}, {3, 3}, {2, 3}};
    static const int64_t ss[][2] = {{1, 1}, {2, 2}, {1, 3}};
    static const int64_t ps[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {0, 1, 1, 0}, {1, 2, 0, 1}};
    static const int64_t ds[][2] = {{1, 1}, {2, 1}};
    int n = 0;
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 4; b++)
            for (size_t cS = 0; cS < 3; cS++)
                for (size_t p = 0; p < 4; p++)
                    for (size_t dd = 0; dd < 2; dd++)
                        for (int ceil_mode = 0; ceil_mode < 2; ceil_mode++)
                            for (int kind = 0; kind < 2; kind++)
                                for (int incl = 0; incl < 1 + kind; incl++) {
                                    pool_cfg c = {0};
                                    c.kind = kind;
                                    c.nsp = 2;
                                    for (int i = 0; i < 2; i++) {
                                        c.in[i] = sizes[a][i];
                                        c.k[i] = ks[b][i];
                                        c.s[i] = ss[cS][i];
                                        c.d[i] = ds[dd][i];
                                    }
                                    memcpy(c.pads, ps[p], sizeof ps[p]);
                                    c.has_s = cS != 0 || (n & 1);
                                    c.has_d = dd != 0 || (n & 2);
                                    c.has_pads = p != 0 || (n & 4);
                                    c.ceil_mode = ceil_mode;
                                    c.include_pad = incl;
                                    n++;
                                    CHECK(run_pool(&c, 2, 3, 0, NULL));
                                }
}

static void test_pool_auto_pad(void) {
    static const int64_t sizes[][2] = {{7, 9}, {6, 6}, {1, 4}};
    static const int64_t ks[][2] = {{2, 2}, {3, 3}, {3, 2}, {1, 4}};
    static const int64_t ss[][2] = {{1, 1}, {2, 2}, {3, 1}};
    for (int ap = AP_SAME_UPPER; ap <= AP_VALID; ap++)
        for (size_t a = 0; a < 3; a++)
            for (size_t b = 0; b < 4; b++)
                for (size_t cS = 0; cS < 3; cS++)
                    for (int dil = 1; dil <= 2; dil++)
                        for (int kind = 0; kind < 2; kind++)
                            for (int incl = 0; incl < 1 + kind; incl++) {
                                pool_cfg c = {0};
                                c.kind = kind;
                                c.nsp = 2;
                                c.auto_pad = ap;
                                c.has_s = c.has_d = 1;
                                for (int i = 0; i < 2; i++) {
                                    c.in[i] = sizes[a][i];
                                    c.k[i] = ks[b][i];
                                    c.s[i] = ss[cS][i];
                                    c.d[i] = dil;
                                }
                                c.include_pad = incl;
                                CHECK(run_pool(&c, 1, 2, 0, NULL));
                            }
}

static void test_pool_1d_3d(void) {
    for (int kind = 0; kind < 2; kind++)
        for (int64_t in = 1; in <= 11; in += 2)
            for (int64_t k = 1; k <= 4; k++)
                for (int64_t s = 1; s <= 3; s++)
                    for (int64_t pb = 0; pb <= 2; pb++)
                        for (int cm = 0; cm < 2; cm++) {
                            pool_cfg c = {0};
                            c.kind = kind;
                            c.nsp = 1;
                            c.in[0] = in;
                            c.k[0] = k;
                            c.s[0] = s;
                            c.d[0] = 1 + (pb == 1 && k > 1);
                            c.pads[0] = pb;
                            c.pads[1] = (pb + cm) % 3;
                            c.has_s = c.has_d = c.has_pads = 1;
                            c.ceil_mode = cm;
                            c.include_pad = kind == AVGP && (in % 4 == 1);
                            CHECK(run_pool(&c, 2, 3, 0, NULL));
                        }
    static const int64_t ks3[][3] = {{2, 2, 2}, {3, 1, 2}, {1, 3, 3}};
    for (int kind = 0; kind < 2; kind++)
        for (size_t b = 0; b < 3; b++)
            for (int variant = 0; variant < 4; variant++) {
                pool_cfg c = {0};
                c.kind = kind;
                c.nsp = 3;
                int64_t in3[3] = {5, 6, 7};
                for (int i = 0; i < 3; i++) {
                    c.in[i] = in3[i];
                    c.k[i] = ks3[b][i];
                    c.s[i] = 1 + (variant & 1) + (i == 2);
                    c.d[i] = 1 + (variant == 3 && i == 0);
                    c.pads[i] = variant >= 2 ? (int64_t)(i % 2) : 0;
                    c.pads[3 + i] = variant >= 2 ? 1 : 0;
                }
                c.has_s = c.has_d = c.has_pads = 1;
                c.ceil_mode = variant & 1;
                c.include_pad = kind == AVGP && variant == 2;
                c.auto_pad = variant == 1 ? AP_SAME_LOWER : AP_NOTSET;
                if (c.auto_pad != AP_NOTSET) c.has_pads = 0, memset(c.pads, 0, sizeof c.pads);
                CHECK(run_pool(&c, 1, 3, 0, NULL));
            }
}

static void test_pool_big(void) {
    /* threads, wide rows (direct path past the temporary row), common CNN configs */
    pool_cfg c = {0};
    c.nsp = 2;
    c.has_s = c.has_pads = 1;
    int64_t cfg[][6] = {/* H W k s pad ceil */
                        {56, 56, 3, 2, 1, 0}, {112, 111, 3, 2, 1, 1}, {28, 28, 2, 2, 0, 0},
                        {27, 27, 3, 2, 0, 1}, {3, 2100, 2, 2, 0, 1},  {4, 2200, 3, 1, 1, 0}};
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++)
        for (int kind = 0; kind < 2; kind++) {
            c.kind = kind;
            c.in[0] = cfg[i][0];
            c.in[1] = cfg[i][1];
            c.k[0] = c.k[1] = cfg[i][2];
            c.s[0] = c.s[1] = cfg[i][3];
            c.d[0] = c.d[1] = 1;
            for (int j = 0; j < 4; j++) c.pads[j] = cfg[i][4];
            c.ceil_mode = (int)cfg[i][5];
            c.include_pad = kind == AVGP && (i & 1);
            CHECK(run_pool(&c, 2, 5, 2, NULL));
            CHECK(run_pool(&c, 1, 3, 0, NULL));
        }
    /* wide rows with dilation, both vectorized strides, asymmetric pads */
    for (int kind = 0; kind < 2; kind++)
        for (int64_t st = 1; st <= 3; st++)
            for (int64_t dil = 1; dil <= 3; dil++)
                for (int64_t k = 1; k <= 4; k++) {
                    pool_cfg w = {0};
                    w.kind = kind;
                    w.nsp = 2;
                    w.in[0] = 5;
                    w.in[1] = 45 + st;
                    w.k[0] = 2;
                    w.k[1] = k;
                    w.s[0] = 1;
                    w.s[1] = st;
                    w.d[0] = 1;
                    w.d[1] = dil;
                    w.pads[1] = dil % 2;
                    w.pads[3] = k - 1;
                    w.has_s = w.has_d = w.has_pads = 1;
                    w.ceil_mode = (int)(k & 1);
                    w.include_pad = kind == AVGP && (dil & 1);
                    CHECK(run_pool(&w, 1, 2, 0, NULL));
                }
    const char *name = NULL;
    c.kind = MAXP;
    run_pool(&c, 1, 1, 0, &name);
    CHECK(name && strncmp(name, "maxpool2d_f32", 13) == 0);
}

/* Outputs from the ONNX backend tests (input 1..16 as 4x4 or 1..25 as 5x5). */
static void test_pool_onnx_examples(void) {
    float x16[16], x25[25], x36[36];
    for (int i = 0; i < 36; i++) {
        if (i < 16) x16[i] = (float)(i + 1);
        if (i < 25) x25[i] = (float)(i + 1);
        x36[i] = (float)(i + 1);
    }
    int64_t d4[4] = {1, 1, 4, 4}, d5[4] = {1, 1, 5, 5}, d6[4] = {1, 1, 6, 6}, k3[2] = {3, 3}, s2[2] = {2, 2};
    struct {
        const char *op;
        float *x;
        int64_t *xd;
        const char *auto_pad;
        int ceil;
        int64_t pads[4];
        int incl;
        int64_t oh, ow;
        float y[16];
    } ex[] = {
        {"MaxPool", x16, d4, NULL, 1, {0, 0, 0, 0}, 0, 2, 2, {11, 12, 15, 16}},
        {"AveragePool", x16, d4, NULL, 1, {0, 0, 0, 0}, 0, 2, 2, {6, 7.5f, 12, 13.5f}},
        {"MaxPool", x25, d5, "SAME_UPPER", 0, {0, 0, 0, 0}, 0, 3, 3, {7, 9, 10, 17, 19, 20, 22, 24, 25}},
        {"AveragePool", x25, d5, "SAME_UPPER", 0, {0, 0, 0, 0}, 0, 3, 3,
         {4, 5.5f, 7, 11.5f, 13, 14.5f, 19, 20.5f, 22}},
        {"AveragePool", x25, d5, NULL, 0, {1, 1, 1, 1}, 1, 3, 3,
         {16.0f / 9, 33.0f / 9, 28.0f / 9, 69.0f / 9, 117.0f / 9, 87.0f / 9, 76.0f / 9,
          123.0f / 9, 88.0f / 9}},
        /* ceil_mode + count_include_pad: overhang past the end padding is not counted
         * (values from torch.nn.functional.avg_pool2d) */
        {"AveragePool", x25, d5, NULL, 1, {1, 1, 1, 1}, 1, 3, 3,
         {16.0f / 9, 33.0f / 9, 28.0f / 9, 69.0f / 9, 117.0f / 9, 87.0f / 9, 76.0f / 9,
          123.0f / 9, 88.0f / 9}},
        {"AveragePool", x36, d6, NULL, 1, {1, 1, 1, 1}, 1, 4, 4,
         {2, 4, 16.0f / 3, 3, 9, 15, 17, 9, 17, 27, 29, 15, 10.5f, 16.5f, 17.5f, 9}},
    };
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        frt_onnx_attr attrs[6];
        size_t na = 0;
        attrs[na++] = frt_test_attr_ints("kernel_shape", k3, 2);
        attrs[na++] = frt_test_attr_ints("strides", s2, 2);
        if (ex[i].auto_pad) attrs[na++] = frt_test_attr_string("auto_pad", ex[i].auto_pad);
        else attrs[na++] = frt_test_attr_ints("pads", ex[i].pads, 4);
        attrs[na++] = frt_test_attr_int("ceil_mode", ex[i].ceil);
        if (ex[i].incl) attrs[na++] = frt_test_attr_int("count_include_pad", 1);
        frt_value in = frt_test_value(FRT_FLOAT32, 4, ex[i].xd, ex[i].x);
        frt_test_op t = {0};
        t.op_type = ex[i].op;
        t.attrs = attrs;
        t.n_attrs = na;
        t.inputs = &in;
        t.n_in = 1;
        t.n_out = 1;
        frt_value out;
        frt_status st = frt_test_run_op(&t, &out, NULL);
        CHECK_MSG(st == FRT_OK, "example %zu: %s", i, frt_last_error());
        if (st) continue;
        CHECK_MSG(out.dims[2] == ex[i].oh && out.dims[3] == ex[i].ow, "example %zu", i);
        CHECK_MSG(t_close(out.data, ex[i].y, (size_t)(ex[i].oh * ex[i].ow), 1e-5f, 1e-6f),
                  "example %zu", i);
        free(out.data);
    }
}

static frt_status run_attrs(const char *op, frt_value *in, const frt_onnx_attr *attrs, size_t na,
                            int n_out) {
    frt_test_op t = {0};
    t.op_type = op;
    t.attrs = attrs;
    t.n_attrs = na;
    t.inputs = in;
    t.n_in = 1;
    t.n_out = n_out;
    frt_value out[2];
    frt_status st = frt_test_run_op(&t, out, NULL);
    if (st == FRT_OK)
        for (int i = 0; i < n_out; i++) free(out[i].data);
    return st;
}

static void test_pool_errors(void) {
    float buf[64] = {0};
    int64_t xd[4] = {1, 1, 4, 4}, k2[2] = {2, 2}, k3[3] = {2, 2, 2}, k5[2] = {5, 5}, s0[2] = {0, 1};
    frt_value in = frt_test_value(FRT_FLOAT32, 4, xd, buf);
    frt_onnx_attr a[3];
    /* the Indices output runs (values checked in test_pool_generic.c) */
    a[0] = frt_test_attr_ints("kernel_shape", k2, 2);
    CHECK(run_attrs("MaxPool", &in, a, 1, 2) == FRT_OK);
    CHECK(run_attrs("MaxPool", &in, a, 1, 1) == FRT_OK);
    /* missing kernel_shape */
    CHECK(run_attrs("MaxPool", &in, a, 0, 1) == FRT_ERR_MALFORMED);
    CHECK(strstr(frt_last_error(), "kernel_shape") != NULL);
    /* wrong kernel_shape length */
    a[0] = frt_test_attr_ints("kernel_shape", k3, 3);
    CHECK(run_attrs("AveragePool", &in, a, 1, 1) == FRT_ERR_SHAPE);
    /* kernel larger than input */
    a[0] = frt_test_attr_ints("kernel_shape", k5, 2);
    CHECK(run_attrs("AveragePool", &in, a, 1, 1) == FRT_ERR_SHAPE);
    CHECK(strstr(frt_last_error(), "too small") != NULL);
    /* zero stride */
    a[0] = frt_test_attr_ints("kernel_shape", k2, 2);
    a[1] = frt_test_attr_ints("strides", s0, 2);
    CHECK(run_attrs("MaxPool", &in, a, 2, 1) == FRT_ERR_SHAPE);
    /* bad auto_pad */
    a[1] = frt_test_attr_string("auto_pad", "SAME_MIDDLE");
    CHECK(run_attrs("MaxPool", &in, a, 2, 1) == FRT_ERR_UNSUPPORTED);
    /* rank 2 input */
    frt_value in2 = frt_test_value(FRT_FLOAT32, 2, xd, buf);
    CHECK(run_attrs("MaxPool", &in2, a, 1, 1) == FRT_ERR_UNSUPPORTED);
    /* int input */
    int32_t ib[64] = {0};
    frt_value in3 = frt_test_value(FRT_INT32, 4, xd, ib);
    CHECK(run_attrs("MaxPool", &in3, a, 1, 1) == FRT_ERR_UNSUPPORTED);
    CHECK(run_attrs("GlobalAveragePool", &in3, NULL, 0, 1) == FRT_ERR_UNSUPPORTED);
    int64_t d1[1] = {4};
    frt_value in4 = frt_test_value(FRT_FLOAT32, 1, d1, buf);
    CHECK(run_attrs("GlobalAveragePool", &in4, NULL, 0, 1) == FRT_ERR_SHAPE);
}

static void test_gap(void) {
    static const int64_t shapes[][5] = {{2, 3, 0, 0, 0}, {2, 3, 7, 0, 0}, {1, 5, 7, 9, 0},
                                        {2, 3, 4, 5, 3}, {3, 64, 13, 13, 0}, {1, 1, 1, 1, 0}};
    static const int ranks[] = {2, 3, 4, 5, 4, 4};
    for (size_t i = 0; i < 6; i++)
        for (int threads = 0; threads <= 2; threads += 2) {
            int r = ranks[i];
            int64_t n = 1, S = 1;
            for (int j = 0; j < r; j++) {
                n *= shapes[i][j];
                if (j >= 2) S *= shapes[i][j];
            }
            float *X = malloc((size_t)n * 4), *R = malloc((size_t)n * 4);
            t_fill(X, (size_t)n, (unsigned)n);
            int64_t planes = shapes[i][0] * shapes[i][1];
            for (int64_t p = 0; p < planes; p++) {
                double s = 0;
                for (int64_t j = 0; j < S; j++) s += X[p * S + j];
                R[p] = (float)(s / (double)S);
            }
            frt_value in = frt_test_value(FRT_FLOAT32, r, shapes[i], X);
            frt_test_op t = {0};
            t.op_type = "GlobalAveragePool";
            t.inputs = &in;
            t.n_in = 1;
            t.n_out = 1;
            t.n_threads = threads;
            t.unknown_dims = threads != 0;
            frt_value out;
            frt_status st = frt_test_run_op(&t, &out, NULL);
            CHECK_MSG(st == FRT_OK, "%s", frt_last_error());
            if (st == FRT_OK) {
                CHECK(out.rank == r && out.dims[0] == shapes[i][0] && out.dims[1] == shapes[i][1]);
                for (int j = 2; j < r; j++) CHECK(out.dims[j] == 1);
                CHECK(t_close(out.data, R, (size_t)planes, 1e-5f, 1e-5f));
                free(out.data);
            }
            free(X);
            free(R);
        }
}

static void test_simd_rows(void) {
#if FRT_HAVE_X86
    if (frt_cpu_tier() < FRT_ISA_AVX2) return; /* the host (or FRT_ISA) has no AVX2 tier */
    /* the row loops of every SIMD tier the process may use */
    static const struct {
        frt_isa isa;
        void (*vmax)(float *, const float *, int64_t);
        void (*vadd)(float *, const float *, int64_t);
        float (*sum)(const float *, int64_t);
    } loops[] = {{FRT_ISA_AVX2, frt_pool_vmax_avx2, frt_pool_vadd_avx2, frt_pool_sum_avx2},
                 {FRT_ISA_AVX512, frt_pool_vmax_avx512, frt_pool_vadd_avx512,
                  frt_pool_sum_avx512}};
    for (size_t l = 0; l < sizeof loops / sizeof loops[0]; l++) {
        if (loops[l].isa > frt_cpu_tier()) continue;
        for (int64_t n = 0; n < 70; n += (n < 20 ? 1 : 7)) {
            float a[80], b[80], r[80];
            t_fill(a, 80, (unsigned)n + 1);
            t_fill(b, 80, (unsigned)n + 2);
            if (n > 3) b[n / 2] = NAN; /* src NaN: dst kept, as in the portable loop */
            memcpy(r, a, sizeof a);
            loops[l].vmax(a, b, n);
            for (int64_t i = 0; i < 80; i++) {
                float e = i < n ? (b[i] > r[i] ? b[i] : r[i]) : r[i];
                CHECK_MSG(a[i] == e, "vmax %s n=%lld i=%lld", frt_isa_name(loops[l].isa),
                          (long long)n, (long long)i);
            }
            if (n > 3) b[n / 2] = 0.5f;
            memcpy(a, r, sizeof a);
            loops[l].vadd(a, b, n);
            for (int64_t i = 0; i < 80; i++) CHECK(a[i] == (i < n ? r[i] + b[i] : r[i]));
            double s = 0;
            for (int64_t i = 0; i < n; i++) s += b[i];
            CHECK_MSG(fabs(loops[l].sum(b, n) - s) < 1e-4, "sum %s n=%lld",
                      frt_isa_name(loops[l].isa), (long long)n);
        }
    }
    /* interior horizontal pooling vs scalar, including the no-overread guarantee (the row is
     * heap-allocated with exactly len floats so ASan catches an overread) */
    for (int is_max = 0; is_max < 2; is_max++)
        for (int64_t s = 1; s <= 2; s++)
            for (int64_t K = 1; K <= 4; K++)
                for (int64_t d = 1; d <= 3; d++)
                    for (int64_t len = 1; len < 60; len += 3) {
                        int64_t span = (K - 1) * d;
                        if (len <= span) continue;
                        int64_t n = (len - 1 - span) / s + 1;
                        float *row = malloc((size_t)len * 4), out[64], ref[64];
                        t_fill(row, (size_t)len, (unsigned)(len * 3 + K));
                        for (int64_t j = 0; j < n; j++) {
                            float acc = row[j * s];
                            for (int64_t k = 1; k < K; k++) {
                                float v = row[j * s + k * d];
                                acc = is_max ? (v > acc ? v : acc) : acc + v;
                            }
                            ref[j] = acc;
                        }
                        int64_t done = frt_pool_hrow_avx2(is_max, row, len, out, n, s, K, d);
                        CHECK(done >= 0 && done <= n && done % 8 == 0);
                        CHECK(len < 40 || done > 0);
                        for (int64_t j = 0; j < done; j++) CHECK(fabsf(out[j] - ref[j]) < 1e-5f);
                        free(row);
                    }
#endif
}

int main(void) {
    /* the op tests run the kernels of the ISA tier (frt_cpu_tier(), capped by FRT_ISA: run the
     * binary under FRT_ISA=portable|avx2|avx512 to cover each tier) */
    printf("tier %s\n", frt_isa_name(frt_cpu_tier()));
    test_pool_2d_matrix();
    test_pool_auto_pad();
    test_pool_1d_3d();
    test_pool_big();
    test_pool_onnx_examples();
    test_pool_errors();
    test_gap();
    test_simd_rows();
    TEST_MAIN_END();
}
