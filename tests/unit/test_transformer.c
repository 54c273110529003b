/* Transformer fusions (src/passes/fuse_xf.c) and flatrt::FusedMatMul (src/ops/transformer.c):
 * small graphs loaded with and without fusion must give the same results (and match a naive
 * reference), the fused program must have the expected kernels, patterns with an extra reader of
 * an intermediate must stay unfused, and the op must reject bad input with a status. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flatrt.h"
#include "onnx_build.h"
#include "op_harness.h"
#include "runtime/model.h"
#include "test_util.h"

/* A scalar float32 initializer. */
static void add_scalar(ob_buf *g, const char *name, float v) {
    ob_buf t = ob_tensor_f32(name, NULL, 0, &v);
    ob_msg(g, OB_INIT, &t);
}

static void add_init(ob_buf *g, const char *name, const int64_t *dims, int rank, const float *d) {
    ob_buf t = ob_tensor_f32(name, dims, rank, d);
    ob_msg(g, OB_INIT, &t);
}

static void add_node(ob_buf *g, const char *op, const char *name, const char *const *ins,
                     const char *const *outs) {
    ob_buf n = ob_node(op, NULL, name, ins, outs);
    ob_msg(g, OB_NODE, &n);
}
#define NODE(g, op, name, outname, ...)                                                            \
    do {                                                                                           \
        const char *ins_[] = {__VA_ARGS__, NULL}, *outs_[] = {outname, NULL};                      \
        add_node(g, op, name, ins_, outs_);                                                        \
    } while (0)

static void add_input(ob_buf *g, const char *name, int rank, const int64_t *dims) {
    ob_buf vi = ob_vinfo(name, 1, rank, dims);
    ob_msg(g, OB_INPUT, &vi);
}
static void add_output(ob_buf *g, const char *name) {
    ob_buf vi = ob_vinfo(name, 1, -1, NULL);
    ob_msg(g, OB_OUTPUT, &vi);
}

/* Kernels of the model's top program whose names start with prefix. */
static int count_kernels(const frt_model *m, const char *prefix) {
    const frt_program *p = m->blocks[0].prog;
    int n = 0;
    for (size_t i = 0; i < p->n_steps; i++)
        if (strncmp(p->steps[i].k.name, prefix, strlen(prefix)) == 0) n++;
    return n;
}
static size_t n_steps(const frt_model *m) { return m->blocks[0].prog->n_steps; }

/* Loads model bytes with fusion on (fuse = 1) or off, with `threads` intra-op threads. */
static frt_model *load(const ob_buf *mb, int fuse, int threads) {
    frt_options o;
    frt_options_init(&o);
    o.fuse = fuse;
    o.num_threads = threads;
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer(mb->p, mb->n, NULL, &o, &m));
    return m;
}

/* Runs m on inputs and returns output `which` (malloc'ed copy of n floats), or NULL. */
static float *run(frt_model *m, const char *const *names, const frt_tensor *in, int n_in,
                  int n_out, size_t n) {
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    if (!rt) return NULL;
    frt_tensor out[4];
    float *res = NULL;
    if (frt_run(rt, names, in, (size_t)n_in, out, (size_t)n_out, FRT_OUTPUTS_ALLOC) == FRT_OK) {
        CHECK(out[0].dtype == FRT_FLOAT32 && (size_t)frt_tensor_numel(&out[0]) == n);
        if ((size_t)frt_tensor_numel(&out[0]) == n) {
            res = malloc(n * sizeof(float));
            memcpy(res, out[0].data, n * sizeof(float));
        }
        for (int i = 0; i < n_out; i++) frt_tensor_release(&out[i]);
    } else {
        CHECK_MSG(0, "run failed: %s", frt_last_error());
    }
    frt_runtime_free(rt);
    return res;
}

static int max_bad(const float *a, const double *ref, size_t n, double atol, double rtol) {
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        if (!(fabs((double)a[i] - ref[i]) <= atol + rtol * fabs(ref[i]))) {
            if (bad < 3) fprintf(stderr, "  [%zu] got %.9g want %.9g diff %.9g\n", i, (double)a[i], ref[i], (double)a[i] - ref[i]);
            bad++;
        }
    return bad;
}

/* ---- LayerNorm ------------------------------------------------------------------------------ */

/* X [2, 5, D] -> decomposed LayerNorm; swap: Mul/Add operands swapped; no_beta: no final Add;
 * extra: the centered value d is also a graph output (no fusion). */
static void check_layernorm(int D, int swap, int no_beta, int extra) {
    ob_buf g = {0};
    int64_t xd[3] = {2, 5, D}, pd[1] = {D};
    add_input(&g, "X", 3, xd);
    float *gm = malloc((size_t)D * 4), *bt = malloc((size_t)D * 4);
    t_fill(gm, (size_t)D, 5);
    t_fill(bt, (size_t)D, 6);
    add_init(&g, "gamma", pd, 1, gm);
    add_init(&g, "beta", pd, 1, bt);
    add_scalar(&g, "two", 2.0f);
    add_scalar(&g, "eps", 1e-5f);
    const int64_t ax[1] = {-1};
    const char *i0[] = {"X", NULL}, *o0[] = {"m", NULL};
    ob_buf rm = ob_node("ReduceMean", NULL, "rm1", i0, o0);
    ob_attr_ints(&rm, "axes", ax, 1);
    ob_msg(&g, OB_NODE, &rm);
    NODE(&g, "Sub", "sub", "d", "X", "m");
    NODE(&g, "Pow", "pow", "p", "d", "two");
    const char *i1[] = {"p", NULL}, *o1[] = {"v", NULL};
    ob_buf rm2 = ob_node("ReduceMean", NULL, "rm2", i1, o1);
    ob_attr_ints(&rm2, "axes", ax, 1);
    ob_msg(&g, OB_NODE, &rm2);
    NODE(&g, "Add", "adde", "ve", swap ? "eps" : "v", swap ? "v" : "eps");
    NODE(&g, "Sqrt", "sqrt", "s", "ve");
    NODE(&g, "Div", "div", "n", "d", "s");
    NODE(&g, "Mul", "mul", no_beta ? "Y" : "y1", swap ? "gamma" : "n", swap ? "n" : "gamma");
    if (!no_beta) NODE(&g, "Add", "addb", "Y", swap ? "beta" : "y1", swap ? "y1" : "beta");
    add_output(&g, "Y");
    if (extra) add_output(&g, "d");
    ob_buf mb = ob_model(&g);
    frt_model *mf = load(&mb, 1, 1), *mu = load(&mb, 0, 1); /* mb lives until they are freed */
    if (mf && mu) {
        int ln = count_kernels(mf, "layernorm_f32");
        CHECK_MSG(ln == !extra && (extra || n_steps(mf) == 1), "D %d swap %d nb %d extra %d: %d ln, %zu steps",
                  D, swap, no_beta, extra, ln, n_steps(mf));
        size_t n = (size_t)10 * (size_t)D;
        float *x = malloc(n * 4);
        t_fill(x, n, 7);
        for (size_t i = 0; i < n; i++) x[i] = x[i] * 3.0f + 1.0f;
        frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 3, .shape = {2, 5, D}, .data = x,
                         .nbytes = n * 4};
        const char *names[] = {"X"};
        float *yf = run(mf, names, &in, 1, extra ? 2 : 1, n), *yu = run(mu, names, &in, 1, extra ? 2 : 1, n);
        double *ref = malloc(n * sizeof(double));
        for (size_t r = 0; r < 10; r++) {
            const float *xr = x + r * (size_t)D;
            double mean = 0, var = 0;
            for (int i = 0; i < D; i++) mean += xr[i];
            mean /= D;
            for (int i = 0; i < D; i++) var += (xr[i] - mean) * (xr[i] - mean);
            var /= D;
            for (int i = 0; i < D; i++)
                ref[r * (size_t)D + (size_t)i] =
                    (xr[i] - mean) / sqrt(var + 1e-5) * gm[i] + (no_beta ? 0.0 : bt[i]);
        }
        if (yf && yu) {
            CHECK_MSG(!max_bad(yf, ref, n, 1e-5, 1e-5), "layernorm fused D %d", D);
            CHECK_MSG(!max_bad(yu, ref, n, 1e-5, 1e-5), "layernorm unfused D %d", D);
        }
        free(yf);
        free(yu);
        free(ref);
        free(x);
    }
    frt_model_free(mf);
    frt_model_free(mu);
    free(mb.p);
    free(gm);
    free(bt);
}

static void test_layernorm(void) {
    check_layernorm(37, 0, 0, 0);
    check_layernorm(64, 1, 0, 0);
    check_layernorm(5, 0, 1, 0);
    check_layernorm(37, 0, 0, 1);
}

/* ---- GELU ----------------------------------------------------------------------------------- */

/* form: 0 erf via Div (x a) 0.5; 1 erf via Mul(x, 1/sqrt2), (x 0.5) a; 2 erf, x (a 0.5);
 * 3 tanh with x*x*x Muls, (x a) 0.5; 4 tanh with Pow(x, 3), 0.5 (x a) operands swapped.
 * extra: the (1 + ...) sum is also a graph output. */
static void check_gelu(int form, int extra) {
    ob_buf g = {0};
    int64_t xd[2] = {3, 41};
    add_input(&g, "X", 2, xd);
    add_scalar(&g, "one", 1.0f);
    add_scalar(&g, "half", 0.5f);
    int tanh_form = form >= 3;
    if (!tanh_form) {
        if (form == 0) {
            add_scalar(&g, "sq2", 1.41421356f);
            NODE(&g, "Div", "scale", "u", "X", "sq2");
        } else {
            add_scalar(&g, "isq2", 0.70710678f);
            NODE(&g, "Mul", "scale", "u", "X", "isq2");
        }
        NODE(&g, "Erf", "erf", "f", "u");
    } else {
        add_scalar(&g, "k", 0.044715f);
        add_scalar(&g, "c1", 0.7978845608f);
        if (form == 3) {
            NODE(&g, "Mul", "x2", "x2", "X", "X");
            NODE(&g, "Mul", "x3", "x3", "X", "x2");
        } else {
            add_scalar(&g, "three", 3.0f);
            NODE(&g, "Pow", "x3", "x3", "X", "three");
        }
        NODE(&g, "Mul", "kx3", "kx3", "k", "x3");
        NODE(&g, "Add", "inner", "in", "X", "kx3");
        NODE(&g, "Mul", "c1m", "u", "c1", "in");
        NODE(&g, "Tanh", "tanh", "f", "u");
    }
    NODE(&g, "Add", "plus1", "a", form == 4 ? "one" : "f", form == 4 ? "f" : "one");
    if (form == 1) {
        NODE(&g, "Mul", "xh", "xh", "X", "half");
        NODE(&g, "Mul", "prod", "Y", "xh", "a");
    } else if (form == 2) {
        NODE(&g, "Mul", "ah", "ah", "a", "half");
        NODE(&g, "Mul", "prod", "Y", "X", "ah");
    } else {
        NODE(&g, "Mul", "xa", "xa", "X", "a");
        NODE(&g, "Mul", "prod", "Y", form == 4 ? "half" : "xa", form == 4 ? "xa" : "half");
    }
    add_output(&g, "Y");
    if (extra) add_output(&g, "a");
    ob_buf mb = ob_model(&g);
    frt_model *mf = load(&mb, 1, 1), *mu = load(&mb, 0, 1); /* mb lives until they are freed */
    if (mf && mu) {
        int ge = count_kernels(mf, tanh_form ? "gelu_tanh_f32" : "gelu_f32");
        CHECK_MSG(ge == !extra && (extra || n_steps(mf) == 1), "form %d extra %d: %d gelu, %zu steps",
                  form, extra, ge, n_steps(mf));
        float x[3 * 41];
        t_fill(x, 3 * 41, 11);
        for (int i = 0; i < 3 * 41; i++) x[i] *= 8.0f;
        frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 2, .shape = {3, 41}, .data = x,
                         .nbytes = sizeof x};
        const char *names[] = {"X"};
        float *yf = run(mf, names, &in, 1, extra ? 2 : 1, 3 * 41);
        float *yu = run(mu, names, &in, 1, extra ? 2 : 1, 3 * 41);
        double ref[3 * 41];
        for (int i = 0; i < 3 * 41; i++) {
            double v = x[i];
            ref[i] = tanh_form ? 0.5 * v * (1 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)))
                               : 0.5 * v * (1 + erf(v / sqrt(2.0)));
        }
        if (yf && yu) {
            CHECK_MSG(!max_bad(yf, ref, 3 * 41, 1e-6, 2e-6), "gelu fused form %d", form);
            CHECK_MSG(!max_bad(yu, ref, 3 * 41, 1e-6, 2e-6), "gelu unfused form %d", form);
        }
        free(yf);
        free(yu);
    }
    frt_model_free(mf);
    frt_model_free(mu);
    free(mb.p);
}

static void test_gelu(void) {
    for (int form = 0; form < 5; form++)
        for (int extra = 0; extra < 2; extra++) check_gelu(form, extra);
}

/* ---- MatMul + bias [+ GELU] [+ residual] ----------------------------------------------------- */

/* A [B, S, K] x W [K, N] + bias [-> GELU erf] [+ R] with `threads` threads. bias_first: Add(bias,
 * mm) order. extra: the MatMul output is also a graph output (no fusion). */
static void check_fmm(int B, int S, int K, int N, int gelu, int res, int bias_first, int threads,
                      int extra) {
    ob_buf g = {0};
    int64_t ad[3] = {B, S, K}, wd[2] = {K, N}, bd[1] = {N}, rd[3] = {B, S, N};
    add_input(&g, "A", 3, ad);
    if (res) add_input(&g, "R", 3, rd);
    size_t na = (size_t)(B * S * K), nw = (size_t)(K * N), ny = (size_t)(B * S * N);
    float *w = malloc(nw * 4), *bias = malloc((size_t)N * 4), *a = malloc(na * 4), *r = malloc(ny * 4);
    t_fill(w, nw, 21);
    t_fill(bias, (size_t)N, 22);
    t_fill(a, na, 23);
    t_fill(r, ny, 24);
    add_init(&g, "W", wd, 2, w);
    add_init(&g, "bias", bd, 1, bias);
    if (gelu) {
        add_scalar(&g, "one", 1.0f);
        add_scalar(&g, "half", 0.5f);
        add_scalar(&g, "sq2", 1.41421356f);
    }
    NODE(&g, "MatMul", "mm", "P", "A", "W");
    NODE(&g, "Add", "addb", "Q", bias_first ? "bias" : "P", bias_first ? "P" : "bias");
    const char *cur = "Q";
    if (gelu) {
        NODE(&g, "Div", "gdiv", "g1", "Q", "sq2");
        NODE(&g, "Erf", "gerf", "g2", "g1");
        NODE(&g, "Add", "gadd", "g3", "g2", "one");
        NODE(&g, "Mul", "gmul", "g4", "Q", "g3");
        NODE(&g, "Mul", "gmul2", "G", "g4", "half");
        cur = "G";
    }
    if (res) {
        NODE(&g, "Add", "addr", "Y", "R", cur);
    } else {
        NODE(&g, "Identity", "id", "Y", cur);
    }
    add_output(&g, "Y");
    if (extra) add_output(&g, "P");
    ob_buf mb = ob_model(&g);
    frt_model *mf = load(&mb, 1, threads), *mu = load(&mb, 0, 1); /* mb lives until they are freed */
    if (mf && mu) {
        int f = count_kernels(mf, "fused_matmul_f32");
        CHECK_MSG(f == !extra, "fmm %dx%dx%d gelu %d res %d extra %d: %d fused, %zu steps", B * S, K,
                  N, gelu, res, extra, f, n_steps(mf));
        frt_tensor in[2] = {{.dtype = FRT_FLOAT32, .rank = 3, .shape = {B, S, K}, .data = a,
                             .nbytes = na * 4},
                            {.dtype = FRT_FLOAT32, .rank = 3, .shape = {B, S, N}, .data = r,
                             .nbytes = ny * 4}};
        const char *names[] = {"A", "R"};
        float *r0 = malloc(ny * 4);
        memcpy(r0, r, ny * 4);
        float *yf = run(mf, names, in, res ? 2 : 1, extra ? 2 : 1, ny);
        CHECK_MSG(memcmp(r0, r, ny * 4) == 0, "fused run wrote its input R");
        float *yu = run(mu, names, in, res ? 2 : 1, extra ? 2 : 1, ny);
        CHECK_MSG(memcmp(r0, r, ny * 4) == 0, "unfused run wrote its input R");
        free(r0);
        double *ref = malloc(ny * sizeof(double));
        for (int i = 0; i < B * S; i++)
            for (int j = 0; j < N; j++) {
                double s = bias[j];
                for (int k = 0; k < K; k++) s += (double)a[i * K + k] * w[k * N + j];
                if (gelu) s = 0.5 * s * (1 + erf(s / sqrt(2.0)));
                if (res) s += r[i * N + j];
                ref[i * N + j] = s;
            }
        if (yf && yu) {
            CHECK_MSG(!max_bad(yf, ref, ny, 1e-5, 1e-4), "fmm fused %dx%dx%d", B * S, K, N);
            CHECK_MSG(!max_bad(yu, ref, ny, 1e-5, 1e-4), "fmm unfused %dx%dx%d", B * S, K, N);
        }
        free(yf);
        free(yu);
        free(ref);
    }
    frt_model_free(mf);
    frt_model_free(mu);
    free(mb.p);
    free(w);
    free(bias);
    free(a);
    free(r);
}

static void test_fused_matmul(void) {
    check_fmm(1, 7, 37, 45, 0, 0, 0, 1, 0);
    check_fmm(2, 7, 37, 45, 1, 0, 1, 1, 0);
    check_fmm(2, 13, 19, 70, 0, 1, 0, 1, 0);
    check_fmm(1, 1, 64, 33, 1, 1, 1, 1, 0); /* one row */
    check_fmm(1, 24, 40, 64, 1, 1, 0, 1, 1); /* MatMul output also read: not fused */
    check_fmm(1, 26, 33, 1100, 1, 1, 0, 1, 0); /* N above the SGEMM's column block */
    /* K over several of the SGEMM's K blocks (the epilogue runs after the last one only), rows
     * leaving 3, 4 and 5 in the last panel of the AVX2 kernel, partial column panels */
    check_fmm(1, 33, 520, 50, 1, 1, 0, 1, 0);
    check_fmm(2, 17, 300, 130, 0, 1, 1, 1, 0);
    check_fmm(1, 23, 260, 1040, 1, 0, 0, 1, 0);
    /* large enough to be split over 2 threads: rows (M > N) and columns */
    check_fmm(1, 300, 64, 120, 1, 1, 0, 2, 0);
    check_fmm(1, 40, 96, 600, 1, 1, 1, 2, 0);
}

/* ---- attention ------------------------------------------------------------------------------ */

static void add_init_raw(ob_buf *g, const char *name, const int64_t *dims, int rank, int elem,
                         const void *d, size_t nbytes) {
    ob_buf t = {0};
    for (int i = 0; i < rank; i++) ob_int(&t, 1, dims[i]);
    ob_int(&t, 2, elem);
    ob_str(&t, 8, name);
    ob_bytes(&t, 9, d, nbytes);
    ob_msg(g, OB_INIT, &t);
}

/* Multi-head attention over Q [B,Sq,H*dk], K [B,Sk,H*dk], V [B,Sk,H*dv] as exporters write it;
 * mode 0 no mask, 1 additive mask input [B,1,1,Sk], 2 Where(causal bool constant [1,1,Sq,Sk],
 * -inf, .), 3 the same with fill -0.5 (the masked scores count in the softmax), 4 Where(a
 * constant bool that is not causal, -inf, .); mul: scale as Mul(., 1/sqrt(dk)) instead of Div;
 * extra: the softmax output is also a graph output (no fusion). Modes 2 and 3 must take the
 * causal kernel, 4 must not. With g_qkv (Sq == Sk, dk == dv), Q, K and V are the three parts of a
 * Split of one input QKV [B, S, 3*H*dk] on its last axis, which the fusion absorbs (one step). */
static int g_qkv;
static void check_attention(int B, int Sq, int Sk, int H, int dk, int dv, int mode, int mul,
                            int extra, int threads) {
    ob_buf g = {0};
    int64_t qd[3] = {B, Sq, H * dk}, kd[3] = {B, Sk, H * dk}, vd[3] = {B, Sk, H * dv};
    int64_t md[4] = {B, 1, 1, Sk}, cd[4] = {1, 1, Sq, Sk}, four[1] = {4}, three[1] = {3};
    const int64_t qkvd[3] = {B, Sq, 3 * H * dk}, sz3[1] = {3}, ss[3] = {H * dk, H * dk, H * dk};
    if (g_qkv) {
        add_input(&g, "QKV", 3, qkvd);
        add_init_raw(&g, "ss", sz3, 1, 7, ss, sizeof ss);
        const char *si[] = {"QKV", "ss", NULL}, *so[] = {"Q", "K", "V", NULL};
        ob_buf sp = ob_node("Split", NULL, "split", si, so);
        ob_attr_int(&sp, "axis", -1);
        ob_msg(&g, OB_NODE, &sp);
    } else {
        add_input(&g, "Q", 3, qd);
        add_input(&g, "K", 3, kd);
        add_input(&g, "V", 3, vd);
    }
    if (mode == 1) add_input(&g, "M", 4, md);
    int64_t qs[4] = {B, Sq, H, dk}, ks[4] = {B, Sk, H, dk}, vs[4] = {B, Sk, H, dv},
            os[3] = {B, Sq, H * dv};
    add_init_raw(&g, "qs", four, 1, 7, qs, sizeof qs);
    add_init_raw(&g, "ks", four, 1, 7, ks, sizeof ks);
    add_init_raw(&g, "vs", four, 1, 7, vs, sizeof vs);
    add_init_raw(&g, "os", three, 1, 7, os, sizeof os);
    uint8_t *cond = calloc((size_t)(Sq * Sk), 1);
    for (int i = 0; i < Sq; i++)
        for (int j = 0; j < Sk; j++)
            cond[i * Sk + j] = mode == 4 ? j > 0 && (i + 2 * j) % 5 == 1 /* not causal */
                                         : j > i + (Sk - Sq);            /* causal */
    const float fillv = mode == 3 ? -0.5f : -INFINITY;
    const int where = mode >= 2;
    if (where) {
        add_init_raw(&g, "C", cd, 4, 9, cond, (size_t)(Sq * Sk));
        add_scalar(&g, "fill", fillv);
    }
    float c = sqrtf((float)dk);
    add_scalar(&g, "c", mul ? 1.0f / c : c);
    static const int64_t p0213[4] = {0, 2, 1, 3}, p0231[4] = {0, 2, 3, 1};
    NODE(&g, "Reshape", "rq", "q4", "Q", "qs");
    NODE(&g, "Reshape", "rk", "k4", "K", "ks");
    NODE(&g, "Reshape", "rv", "v4", "V", "vs");
    const char *tq[] = {"q4", NULL}, *tqo[] = {"qt", NULL}, *tk[] = {"k4", NULL},
               *tko[] = {"kt", NULL}, *tv[] = {"v4", NULL}, *tvo[] = {"vt", NULL},
               *to[] = {"o4", NULL}, *too[] = {"ot", NULL};
    ob_buf n1 = ob_node("Transpose", NULL, "tq", tq, tqo);
    ob_attr_ints(&n1, "perm", p0213, 4);
    ob_msg(&g, OB_NODE, &n1);
    ob_buf n2 = ob_node("Transpose", NULL, "tk", tk, tko);
    ob_attr_ints(&n2, "perm", p0231, 4);
    ob_msg(&g, OB_NODE, &n2);
    ob_buf n3 = ob_node("Transpose", NULL, "tv", tv, tvo);
    ob_attr_ints(&n3, "perm", p0213, 4);
    ob_msg(&g, OB_NODE, &n3);
    NODE(&g, "MatMul", "mm1", "s", "qt", "kt");
    NODE(&g, mul ? "Mul" : "Div", "scale", "s2", "s", "c");
    const char *sin = "s2";
    if (mode == 1) {
        NODE(&g, "Add", "madd", "s3", "s2", "M");
        sin = "s3";
    } else if (where) {
        NODE(&g, "Where", "mwhere", "s3", "C", "fill", "s2");
        sin = "s3";
    }
    const char *smi[] = {sin, NULL}, *smo[] = {"p", NULL};
    ob_buf sm = ob_node("Softmax", NULL, "sm", smi, smo);
    ob_attr_int(&sm, "axis", -1);
    ob_msg(&g, OB_NODE, &sm);
    NODE(&g, "MatMul", "mm2", "o4", "p", "vt");
    ob_buf n4 = ob_node("Transpose", NULL, "to", to, too);
    ob_attr_ints(&n4, "perm", p0213, 4);
    ob_msg(&g, OB_NODE, &n4);
    NODE(&g, "Reshape", "ro", "Y", "ot", "os");
    add_output(&g, "Y");
    if (extra) add_output(&g, "p");
    ob_buf mb = ob_model(&g);
    frt_model *mf = load(&mb, 1, threads), *mu = load(&mb, 0, 1);
    size_t nq = (size_t)(B * Sq * H * dk), nk = (size_t)(B * Sk * H * dk),
           nv = (size_t)(B * Sk * H * dv), ny = (size_t)(B * Sq * H * dv);
    float *q = malloc(nq * 4), *k = malloc(nk * 4), *v = malloc(nv * 4), *m = malloc((size_t)(B * Sk) * 4);
    t_fill(q, nq, 31);
    t_fill(k, nk, 32);
    t_fill(v, nv, 33);
    for (int i = 0; i < B * Sk; i++) m[i] = (i % 3 == 1) ? -10000.0f : 0.0f;
    if (mf && mu) {
        int f = count_kernels(mf, "attention_f32");
        CHECK_MSG(f == !extra && (extra || n_steps(mf) == 1), "attention mode %d extra %d: %d fused, %zu steps",
                  mode, extra, f, n_steps(mf));
        int fc = count_kernels(mf, "attention_f32_causal");
        CHECK_MSG(fc == (!extra && (mode == 2 || mode == 3)), "attention mode %d: %d causal kernels",
                  mode, fc);
        frt_tensor in[4] = {
            {.dtype = FRT_FLOAT32, .rank = 3, .shape = {B, Sq, H * dk}, .data = q, .nbytes = nq * 4},
            {.dtype = FRT_FLOAT32, .rank = 3, .shape = {B, Sk, H * dk}, .data = k, .nbytes = nk * 4},
            {.dtype = FRT_FLOAT32, .rank = 3, .shape = {B, Sk, H * dv}, .data = v, .nbytes = nv * 4},
            {.dtype = FRT_FLOAT32, .rank = 4, .shape = {B, 1, 1, Sk}, .data = m,
             .nbytes = (size_t)(B * Sk) * 4}};
        const char *names[] = {"Q", "K", "V", "M"};
        float *qkv = NULL;
        int nin = mode == 1 ? 4 : 3;
        if (g_qkv) { /* one input QKV (rows of Q | K | V) and the mask */
            const int64_t w = H * dk;
            qkv = malloc(3 * nq * 4);
            for (int64_t r = 0; r < (int64_t)B * Sq; r++) {
                memcpy(qkv + r * 3 * w, q + r * w, (size_t)w * 4);
                memcpy(qkv + r * 3 * w + w, k + r * w, (size_t)w * 4);
                memcpy(qkv + r * 3 * w + 2 * w, v + r * w, (size_t)w * 4);
            }
            names[0] = "QKV";
            names[1] = "M";
            in[0] = (frt_tensor){.dtype = FRT_FLOAT32, .rank = 3, .shape = {B, Sq, 3 * w},
                                 .data = qkv, .nbytes = 3 * nq * 4};
            in[1] = in[3];
            nin = mode == 1 ? 2 : 1;
        }
        float *yf = run(mf, names, in, nin, extra ? 2 : 1, ny);
        float *yu = run(mu, names, in, nin, extra ? 2 : 1, ny);
        free(qkv);
        double *ref = calloc(ny, sizeof(double)), *sc = malloc((size_t)Sk * sizeof(double));
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++)
                for (int i = 0; i < Sq; i++) {
                    double mx = -INFINITY, sum = 0;
                    for (int j = 0; j < Sk; j++) {
                        double d = 0;
                        for (int t = 0; t < dk; t++)
                            d += (double)q[(b * Sq + i) * H * dk + h * dk + t] *
                                 k[(b * Sk + j) * H * dk + h * dk + t];
                        d /= c;
                        if (mode == 1) d += m[b * Sk + j];
                        if (where && cond[i * Sk + j]) d = fillv;
                        sc[j] = d;
                        if (d > mx) mx = d;
                    }
                    for (int j = 0; j < Sk; j++) sum += (sc[j] = exp(sc[j] - mx));
                    for (int j = 0; j < Sk; j++)
                        for (int t = 0; t < dv; t++)
                            ref[(b * Sq + i) * H * dv + h * dv + t] +=
                                sc[j] / sum * v[(b * Sk + j) * H * dv + h * dv + t];
                }
        if (yf && yu) {
            CHECK_MSG(!max_bad(yf, ref, ny, 1e-5, 1e-4), "attention fused mode %d", mode);
            CHECK_MSG(!max_bad(yu, ref, ny, 1e-5, 1e-4), "attention unfused mode %d", mode);
        }
        free(yf);
        free(yu);
        free(ref);
        free(sc);
    }
    frt_model_free(mf);
    frt_model_free(mu);
    free(mb.p);
    free(q);
    free(k);
    free(v);
    free(m);
    free(cond);
}

static void test_attention(void) {
    check_attention(1, 5, 5, 2, 4, 4, 0, 0, 0, 1);
    check_attention(2, 5, 7, 3, 4, 6, 1, 0, 0, 1);
    check_attention(1, 9, 9, 2, 8, 8, 2, 1, 0, 1);
    check_attention(2, 13, 13, 4, 16, 16, 1, 1, 0, 1);
    check_attention(1, 6, 6, 2, 4, 4, 2, 0, 1, 1); /* softmax output also read: not fused */
    check_attention(2, 11, 11, 5, 8, 8, 1, 0, 0, 2); /* 10 heads over 2 threads */
    check_attention(1, 7, 7, 3, 8, 8, 2, 0, 0, 3);
    /* causal over several blocks of 12 rows, square and with Sk > Sq */
    check_attention(2, 29, 29, 3, 8, 8, 2, 0, 0, 1);
    check_attention(1, 25, 31, 2, 16, 12, 2, 1, 0, 2);
    check_attention(1, 26, 26, 2, 8, 8, 3, 0, 0, 1); /* fill -0.5: the full rows */
    check_attention(1, 17, 17, 2, 8, 8, 4, 0, 0, 1); /* constant bool, not causal */
    g_qkv = 1; /* Q, K, V from a Split of one projection */
    check_attention(1, 5, 5, 2, 4, 4, 0, 0, 0, 1);
    check_attention(2, 13, 13, 4, 16, 16, 1, 1, 0, 1);
    check_attention(2, 11, 11, 5, 8, 8, 1, 0, 0, 2);
    check_attention(1, 29, 29, 3, 8, 8, 2, 0, 0, 1); /* causal */
    check_attention(1, 26, 26, 2, 8, 8, 3, 0, 0, 1);
    check_attention(1, 6, 6, 2, 4, 4, 2, 0, 1, 1); /* not fused */
    g_qkv = 0;
}

static void test_attention_errors(void) {
    float q[2 * 3 * 8] = {0}, m[2 * 3] = {0};
    int64_t qd[3] = {2, 3, 8}, kd7[3] = {2, 3, 7}, md[4] = {2, 1, 1, 3}, mbad[4] = {2, 1, 1, 4};
    frt_value out[1];
    frt_value in[4] = {frt_test_value(FRT_FLOAT32, 3, qd, q), frt_test_value(FRT_FLOAT32, 3, qd, q),
                       frt_test_value(FRT_FLOAT32, 3, qd, q), frt_test_value(FRT_FLOAT32, 4, md, m)};
    frt_onnx_attr at[3] = {frt_test_attr_int("num_heads", 2), frt_test_attr_float("scale", 0.5f),
                           frt_test_attr_int("mask_mode", 1)};
    frt_test_op op = {.op_type = "Attention", .opset = 1, .attrs = at, .n_attrs = 3, .inputs = in,
                      .n_in = 4, .n_out = 1};
    const char *kn = NULL;
    if (frt_test_run_op(&op, out, &kn) == FRT_OK) { /* V = 0: output 0 */
        CHECK(kn && strncmp(kn, "attention_f32", 13) == 0);
        CHECK(out[0].rank == 3 && out[0].dims[2] == 8 && ((float *)out[0].data)[5] == 0.0f);
        free(out[0].data);
    } else {
        CHECK_MSG(0, "Attention good call: %s", frt_last_error());
    }
    in[3] = frt_test_value(FRT_FLOAT32, 4, mbad, m); /* mask does not broadcast */
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_SHAPE);
    in[3] = frt_test_value(FRT_FLOAT32, 4, md, m);
    in[1] = frt_test_value(FRT_FLOAT32, 3, kd7, q); /* K width differs from Q's */
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_SHAPE);
    in[1] = frt_test_value(FRT_FLOAT32, 3, qd, q);
    at[0] = frt_test_attr_int("num_heads", 3); /* 8 columns do not split into 3 heads */
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_SHAPE);
    at[0] = frt_test_attr_int("num_heads", 0);
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_UNSUPPORTED);
    at[0] = frt_test_attr_int("num_heads", 2);
    at[2] = frt_test_attr_int("mask_mode", 2); /* bool mask expected, float given */
    CHECK(frt_test_run_op(&op, out, NULL) != FRT_OK);
    at[2] = frt_test_attr_int("mask_mode", 0); /* no mask expected, 4 inputs */
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_UNSUPPORTED);
}

/* ---- bad input to the op itself -------------------------------------------------------------- */

static void test_fmm_errors(void) {
    float a[2 * 3] = {0}, w[3 * 4] = {0}, b[4] = {0}, r[2 * 4] = {0}, out_dummy;
    (void)out_dummy;
    int64_t ad[2] = {2, 3}, wd[2] = {3, 4}, bd[1] = {4}, rd[2] = {2, 4}, b5[1] = {5}, rbad[2] = {2, 5};
    frt_value out[1];
    frt_value in[4] = {frt_test_value(FRT_FLOAT32, 2, ad, a), frt_test_value(FRT_FLOAT32, 2, wd, w),
                       frt_test_value(FRT_FLOAT32, 1, bd, b), frt_test_value(FRT_FLOAT32, 2, rd, r)};
    frt_onnx_attr act = frt_test_attr_int("activation", 1);
    frt_test_op op = {.op_type = "FusedMatMul", .opset = 1, .attrs = &act, .n_attrs = 1,
                      .inputs = in, .n_in = 4, .const_mask = 6u, .n_out = 1};
    const char *kn = NULL;
    /* good call: act(A W + b) + R = gelu(0) + 0 = 0 */
    if (frt_test_run_op(&op, out, &kn) == FRT_OK) {
        CHECK(kn && strncmp(kn, "fused_matmul_f32", 16) == 0);
        CHECK(out[0].rank == 2 && out[0].dims[1] == 4 && ((float *)out[0].data)[7] == 0.0f);
        free(out[0].data);
    } else {
        CHECK_MSG(0, "FusedMatMul good call: %s", frt_last_error());
    }
    /* bad activation */
    frt_onnx_attr bad_act = frt_test_attr_int("activation", 7);
    op.attrs = &bad_act;
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_UNSUPPORTED);
    op.attrs = &act;
    /* W not constant */
    op.const_mask = 4u;
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_UNSUPPORTED);
    op.const_mask = 6u;
    /* bias of the wrong length */
    in[2] = frt_test_value(FRT_FLOAT32, 1, b5, b);
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_SHAPE);
    in[2] = frt_test_value(FRT_FLOAT32, 1, bd, b);
    /* residual of the wrong shape */
    in[3] = frt_test_value(FRT_FLOAT32, 2, rbad, r);
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_SHAPE);
    in[3] = frt_test_value(FRT_FLOAT32, 2, rd, r);
    /* inner dims differ */
    int64_t ad4[2] = {2, 4};
    in[0] = frt_test_value(FRT_FLOAT32, 2, ad4, a);
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_SHAPE);
    in[0] = frt_test_value(FRT_FLOAT32, 2, ad, a);
    /* wrong dtype */
    double ad64[6] = {0};
    in[0] = frt_test_value(FRT_FLOAT64, 2, ad, ad64);
    CHECK(frt_test_run_op(&op, out, NULL) != FRT_OK);
    in[0] = frt_test_value(FRT_FLOAT32, 2, ad, a);
    /* 1-D A */
    int64_t a1[1] = {3};
    in[0] = frt_test_value(FRT_FLOAT32, 1, a1, a);
    CHECK(frt_test_run_op(&op, out, NULL) == FRT_ERR_SHAPE);
}

int main(void) {
    test_layernorm();
    test_gelu();
    test_fused_matmul();
    test_fmm_errors();
    test_attention();
    test_attention_errors();
    TEST_MAIN_END();
}
