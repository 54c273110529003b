/* The oneDNN provider (src/ops/onednn/) against the builtin kernels: small models built in memory
 * are loaded twice, with the provider (FRT_DNNL unset) and without it (FRT_DNNL=0), and must give
 * the same outputs. Covered: plain / grouped / depthwise / strided / dilated / asymmetric-padded /
 * auto_pad convolutions, 1-D convolution, odd channel counts (padded blocks), Relu and Clip
 * post-ops, the residual sum (FusedConv), max / average (ceil mode, count_include_pad) / global
 * pooling, BatchNormalization, blocked elementwise ops and Concat between convolutions, batch 2,
 * one and two threads, and every convolution split into 2 and 3 channel parts (FRT_DNNL_PARTS) on
 * a pool of 2 and 3 threads; the provider must have taken the convolutions, activations must stay
 * blocked between them (no reorder between two convolutions), and a run with another image size
 * fails cleanly. Skips (77) in a build without the provider. */
#include "flatrt.h"
#include "runtime/model.h"
#include "onnx_build.h"
#include "test_util.h"

#if FRT_HAVE_DNNL

/* ---- model building ---- */

static void attr_float(ob_buf *node, const char *name, float v) {
    ob_buf a = {0};
    ob_str(&a, 1, name);
    ob_tag(&a, 2, 5);
    ob_raw(&a, &v, 4);
    ob_int(&a, 20, 1);
    ob_msg(node, 5, &a);
}

static void attr_str(ob_buf *node, const char *name, const char *v) {
    ob_buf a = {0};
    ob_str(&a, 1, name);
    ob_str(&a, 4, v);
    ob_int(&a, 20, 3);
    ob_msg(node, 5, &a);
}

static unsigned g_seed = 12345;
static int g_on; /* the provider takes nodes at this ISA tier (AVX2 and up) */

static void add_init(ob_buf *g, const char *name, const int64_t *dims, int rank, float lo,
                     float hi) {
    int64_t n = numel(dims, rank);
    float *d = malloc((size_t)n * sizeof *d);
    for (int64_t i = 0; i < n; i++) d[i] = lo + (hi - lo) * 0.5f * (t_rand(&g_seed) + 1.0f);
    ob_buf t = ob_tensor_f32(name, dims, rank, d);
    ob_msg(g, OB_INIT, &t);
    free(d);
}

/* Conv name: in -> out with weights [M, C/group, kh, kw] (kh < 0: 1-D, [M, C/group, kw]) and a
 * bias; attrs: strides, dilations, pads (4 or 2 values), group, auto_pad (NULL: none). */
typedef struct conv_spec {
    int64_t C, M, kh, kw, group;
    int64_t s[2], d[2], p[4];
    const char *auto_pad;
    int bias;
} conv_spec;

static void add_conv(ob_buf *g, const char *name, const char *in, const char *out,
                     const conv_spec *c) {
    char wn[64], bn[64];
    snprintf(wn, sizeof wn, "%s.w", name);
    snprintf(bn, sizeof bn, "%s.b", name);
    bool one_d = c->kh < 0;
    int64_t wd[4] = {c->M, c->C / c->group, one_d ? c->kw : c->kh, c->kw};
    float r = 1.0f / sqrtf((float)(c->C / c->group * (one_d ? 1 : c->kh) * c->kw));
    add_init(g, wn, wd, one_d ? 3 : 4, -r, r);
    if (c->bias) {
        int64_t bd[1] = {c->M};
        add_init(g, bn, bd, 1, -0.5f, 0.5f);
    }
    const char *ins[] = {in, wn, c->bias ? bn : NULL, NULL}, *outs[] = {out, NULL};
    ob_buf n = ob_node("Conv", NULL, name, ins, outs);
    int nsp = one_d ? 1 : 2;
    ob_attr_ints(&n, "strides", one_d ? c->s + 1 : c->s, nsp);
    ob_attr_ints(&n, "dilations", one_d ? c->d + 1 : c->d, nsp);
    if (c->auto_pad) {
        attr_str(&n, "auto_pad", c->auto_pad);
    } else {
        int64_t p1[2] = {c->p[1], c->p[3]};
        ob_attr_ints(&n, "pads", one_d ? p1 : c->p, 2 * nsp);
    }
    ob_attr_int(&n, "group", c->group);
    ob_msg(g, OB_NODE, &n);
}

static void add_op(ob_buf *g, const char *op, const char *name, const char *a, const char *b,
                   const char *out) {
    const char *ins[] = {a, b, NULL}, *outs[] = {out, NULL};
    ob_buf n = ob_node(op, NULL, name, ins, outs);
    ob_msg(g, OB_NODE, &n);
}

static void add_pool(ob_buf *g, const char *op, const char *name, const char *in, const char *out,
                     int64_t k, int64_t s, const int64_t *pads, int ceil, int include_pad) {
    const char *ins[] = {in, NULL}, *outs[] = {out, NULL};
    ob_buf n = ob_node(op, NULL, name, ins, outs);
    int64_t ks[2] = {k, k}, ss[2] = {s, s};
    ob_attr_ints(&n, "kernel_shape", ks, 2);
    ob_attr_ints(&n, "strides", ss, 2);
    if (pads) ob_attr_ints(&n, "pads", pads, 4);
    if (ceil) ob_attr_int(&n, "ceil_mode", 1);
    if (include_pad) ob_attr_int(&n, "count_include_pad", 1);
    ob_msg(g, OB_NODE, &n);
}

static void io(ob_buf *g, const int64_t *xd, int rank, const char *const *outs) {
    ob_buf vi = ob_vinfo("X", 1, rank, xd);
    ob_msg(g, OB_INPUT, &vi);
    for (; *outs; outs++) {
        ob_buf o = ob_vinfo(*outs, 1, -1, NULL);
        ob_msg(g, OB_OUTPUT, &o);
    }
}

/* ---- running and comparing ---- */

typedef struct result {
    float *out[4];
    size_t n[4];
    int n_out;
    int onednn_steps;   /* steps with an "onednn:" kernel */
    int reorders;       /* reorder steps */
    int split_steps;    /* convolutions run as channel parts (kernel name ending in "_split") */
    int gemvconv_steps; /* 1x1-image convolutions run by the own GEMV (gemvconv.c) */
    int relay_steps;    /* convolutions run on nChw8c between reorders ("onednn:conv_relay") */
    int conv_plain;     /* convolutions on oneDNN's primitive, neither split nor relayed ("onednn:conv") */
    int wino_steps;     /* convolutions run by the own Winograd kernel ("onednn:wino4x3...") */
    int wino_split;     /* of those, run as parts on the pool ("onednn:wino4x3_split") */
    int wino_s2;        /* stride-2 convolutions run by its polyphase form ("onednn:wino2x3s2") */
    int wino2;          /* stride-1 convolutions run by its F(2x2) form ("onednn:wino2x3[_split]") */
    char last_conv[48]; /* the kernel of the last Conv / FusedConv step */
    int pool_split;     /* own pooling loops split over channel blocks ("onednn:*pool_blk*_split") */
    int bn_own;         /* own batch normalization loops ("onednn:batchnorm_blk...") */
    int bn_split;       /* of those, split over channel blocks ("..._split") */
    int chanmul;        /* per-channel Muls ("onednn:channel_mul...") */
    int chanmul_split;  /* of those, split over channel blocks ("onednn:channel_mul_split") */
    int pw_own;         /* own pointwise convolutions ("onednn:pw_own...", pwconv.c) */
    int pw_split;       /* of those, split over pixels ("onednn:pw_own_split") */
    int reduce_own;     /* ReduceMean as the own global pool ("onednn:reduce_mean_blk...") */
    int gc_own;         /* own grouped convolutions ("onednn:gconv_own...", gconv.c) */
    int gc_split;       /* of those, split over output channel blocks ("onednn:gconv_own_split") */
    int dw_split;       /* own depthwise loops split over channel blocks ("onednn:dw_own_split") */
    int taps;           /* convolutions run as 1x1 over gathered taps ("onednn:conv_taps") */
    int conv3d_packed;  /* 3-D convolutions on the builtin packed GEMM ("conv_im2col_gemm_*_3d") */
} result;

/* parts > 0: every convolution the provider can split is split into that many parts */
static frt_model *load_parts(const ob_buf *mb, int dnnl, int threads, int parts) {
    setenv("FRT_DNNL", dnnl ? "1" : "0", 1);
    char pn[16];
    snprintf(pn, sizeof pn, "%d", parts);
    if (parts > 0) setenv("FRT_DNNL_PARTS", pn, 1);
    frt_options opt;
    frt_options_init(&opt);
    opt.num_threads = threads;
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer(mb->p, mb->n, NULL, &opt, &m));
    unsetenv("FRT_DNNL");
    unsetenv("FRT_DNNL_PARTS");
    return m;
}

static frt_model *load(const ob_buf *mb, int dnnl, int threads) {
    return load_parts(mb, dnnl, threads, 0);
}

static void run(const ob_buf *mb, int dnnl, int threads, int parts, const int64_t *xd, int rank,
                const char *const *outs, result *r) {
    memset(r, 0, sizeof *r);
    frt_model *m = load_parts(mb, dnnl, threads, parts);
    if (!m) return;
    const frt_program *p = m->blocks[0].prog;
    for (size_t i = 0; i < p->n_steps; i++) {
        const char *kn = p->steps[i].k.name ? p->steps[i].k.name : "";
        size_t kl = strlen(kn);
        r->onednn_steps += strncmp(kn, "onednn:", 7) == 0;
        r->split_steps += kl > 6 && strcmp(kn + kl - 6, "_split") == 0;
        r->gemvconv_steps += strcmp(kn, "onednn:gemvconv") == 0;
        r->reorders += strcmp(p->steps[i].ir->op_type, "Reorder") == 0;
        r->relay_steps += strcmp(kn, "onednn:conv_relay") == 0;
        r->conv_plain += strcmp(kn, "onednn:conv") == 0;
        r->wino_steps += strncmp(kn, "onednn:wino4x3", 14) == 0;
        r->wino_split += strcmp(kn, "onednn:wino4x3_split") == 0;
        r->wino_s2 += strncmp(kn, "onednn:wino2x3s2", 16) == 0;
        r->wino2 += !strcmp(kn, "onednn:wino2x3") || !strcmp(kn, "onednn:wino2x3_split");
        if (strstr(p->steps[i].ir->op_type, "Conv"))
            snprintf(r->last_conv, sizeof r->last_conv, "%s", kn);
        r->pool_split += strstr(kn, "pool_blk") && kl > 6 && strcmp(kn + kl - 6, "_split") == 0;
        r->bn_own += strncmp(kn, "onednn:batchnorm_blk", 20) == 0;
        r->bn_split += strncmp(kn, "onednn:batchnorm_blk", 20) == 0 && strcmp(kn + kl - 6, "_split") == 0;
        r->chanmul += strncmp(kn, "onednn:channel_mul", 18) == 0;
        r->chanmul_split += strcmp(kn, "onednn:channel_mul_split") == 0;
        r->pw_own += strncmp(kn, "onednn:pw_own", 13) == 0;
        r->pw_split += strcmp(kn, "onednn:pw_own_split") == 0;
        r->dw_split += strcmp(kn, "onednn:dw_own_split") == 0;
        r->taps += strcmp(kn, "onednn:conv_taps") == 0;
        r->conv3d_packed += strcmp(kn, "conv_im2col_gemm_avx2_3d") == 0 ||
                            strcmp(kn, "conv_im2col_gemm_avx512_3d") == 0;
        r->reduce_own += strncmp(kn, "onednn:reduce_mean_blk", 22) == 0;
        r->gc_own += strncmp(kn, "onednn:gconv_own", 16) == 0;
        r->gc_split += strcmp(kn, "onednn:gconv_own_split") == 0;
        if (getenv("T_VERBOSE")) printf("  %s %s %s\n", p->steps[i].ir->op_type, p->steps[i].ir->name, kn);
    }
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    int64_t n = numel(xd, rank);
    float *x = malloc((size_t)n * sizeof *x);
    t_fill(x, (size_t)n, 777);
    frt_tensor in = {.dtype = FRT_FLOAT32, .rank = rank, .data = x, .nbytes = (size_t)n * 4};
    for (int i = 0; i < rank; i++) in.shape[i] = xd[i];
    const char *names[] = {"X"};
    int no = 0;
    while (outs[no]) no++;
    frt_tensor out[4];
    for (int round = 0; round < 2 && rt; round++) { /* twice: a second run reuses the state */
        CHECK_OK(frt_run(rt, names, &in, 1, out, (size_t)no, FRT_OUTPUTS_BORROW));
    }
    r->n_out = no;
    for (int o = 0; o < no && rt; o++) {
        r->n[o] = out[o].nbytes / 4;
        r->out[o] = malloc(out[o].nbytes + 4);
        if (out[o].data) memcpy(r->out[o], out[o].data, out[o].nbytes);
    }
    free(x);
    frt_runtime_free(rt);
    frt_model_free(m);
}

static void free_result(result *r) {
    for (int i = 0; i < r->n_out; i++) free(r->out[i]);
}

/* Runs mb with and without the provider (1 and 2 threads, then 2 and 3 threads with every
 * convolution that has as many channel blocks split into that many parts) and compares; returns
 * the 1-thread provider run's statistics in *with (outputs freed), split_steps from the 3-part run. */
static void compare(const char *what, ob_buf mb, const int64_t *xd, int rank,
                    const char *const *outs, result *with) {
    result ref, got;
    run(&mb, 0, 1, 0, xd, rank, outs, &ref);
    CHECK_MSG(ref.onednn_steps == 0, "%s: provider used with FRT_DNNL=0", what);
    int split3 = 0, wsplit2 = 0, pwsplit2 = 0;
    for (int cfg = 0; cfg < 4; cfg++) {
        int threads = cfg == 0 ? 1 : cfg == 3 ? 3 : 2, parts = cfg < 2 ? 0 : threads;
        run(&mb, 1, threads, parts, xd, rank, outs, &got);
        if (parts == 3) split3 = got.split_steps;
        if (cfg == 1) wsplit2 = got.wino_split, pwsplit2 = got.pw_split;
        CHECK_MSG(got.n_out == ref.n_out, "%s: outputs", what);
        for (int o = 0; o < ref.n_out && o < got.n_out; o++) {
            CHECK_MSG(got.n[o] == ref.n[o], "%s: output %d size", what, o);
            if (got.n[o] == ref.n[o] && got.out[o] && ref.out[o])
                CHECK_MSG(t_close(got.out[o], ref.out[o], ref.n[o], 1e-5f, 2e-5f),
                          "%s: output %d, %d threads, %d parts", what, o, threads, parts);
        }
        if (cfg == 0) *with = got;
        else free_result(&got);
    }
    with->split_steps = split3;
    with->wino_split = wsplit2;
    with->pw_split = pwsplit2;
    free_result(with);
    free_result(&ref);
    free(mb.p);
}

/* ---- cases ---- */

/* A chain: plain-input conv (C=3) -> grouped dilated conv -> depthwise strided asymmetric-padded
 * conv -> 1x1 conv; + a residual branch (FusedConv: act(conv + Z)); Relu; MaxPool ceil mode;
 * AveragePool with and without counted pads; GlobalAveragePool. 20 channels: padded blocks. */
static void test_chain(int64_t batch) {
    ob_buf g = {0};
    int64_t xd[4] = {batch, 3, 23, 19};
    conv_spec c1 = {3, 20, 3, 3, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c1", "X", "a1", &c1);
    add_op(&g, "Relu", "r1", "a1", NULL, "b1");
    conv_spec c2 = {20, 20, 3, 3, 4, {1, 1}, {2, 2}, {2, 2, 2, 2}, NULL, 1};
    add_conv(&g, "c2", "b1", "a2", &c2);
    conv_spec c3 = {20, 20, 3, 3, 20, {2, 2}, {1, 1}, {1, 0, 1, 1}, NULL, 0};
    add_conv(&g, "c3", "a2", "a3", &c3);
    conv_spec c4 = {20, 24, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c4", "a3", "a4", &c4);
    conv_spec c5 = {20, 24, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c5", "a3", "a5", &c5);
    add_op(&g, "Add", "add", "a4", "a5", "s");
    add_op(&g, "Relu", "r2", "s", NULL, "t");
    add_pool(&g, "MaxPool", "mp", "t", "u", 3, 2, NULL, 1, 0);
    int64_t pads[4] = {1, 1, 0, 1};
    add_pool(&g, "AveragePool", "ap", "u", "v", 2, 1, pads, 0, 0);
    add_pool(&g, "AveragePool", "ap2", "u", "v2", 2, 1, pads, 0, 1);
    const char *ins[] = {"v", NULL}, *o1[] = {"w", NULL};
    ob_buf n = ob_node("GlobalAveragePool", NULL, "gap", ins, o1);
    ob_msg(&g, OB_NODE, &n);
    const char *outs[] = {"w", "v2", "t", NULL};
    io(&g, xd, 4, outs);
    result r;
    compare("chain", ob_model(&g), xd, 4, outs, &r);
    /* c1..c5 (c4 fused with the Add and Relu), 3 pools: all onednn */
    if (!g_on) return;
    CHECK_MSG(r.onednn_steps >= 8, "chain: %d onednn steps", r.onednn_steps);
    /* reorders only at the graph outputs (w, v2, t) */
    CHECK_MSG(r.reorders == 3, "chain: %d reorders", r.reorders);
    /* split into parts: c1 (plain input), c3 (depthwise), c4 (with the residual sum), c5; on
       the AVX2 tier c4 and c5 (1x1, 24 channels) are the own pointwise loop (pwconv.c), which
       does not split this small image, unless FRT_DNNL_OWN_PW=0 */
    /* (the own loop works on nChw8c blocks only: the AVX-512 tier's nChw16c keeps oneDNN even
       with FRT_DNNL_OWN_PW=1) */
    const char *pwe = getenv("FRT_DNNL_OWN_PW");
    int pw = frt_cpu_tier() == FRT_ISA_AVX2 && !(pwe && !strcmp(pwe, "0")) ? 2 : 0;
    CHECK_MSG(r.pw_own == pw, "chain: %d own pointwise steps, want %d", r.pw_own, pw);
    CHECK_MSG(r.split_steps == 4 - pw, "chain: %d split steps", r.split_steps);
}

/* The pooling geometries the own blocked loops take beyond the chain's (20 channels, padded
 * last block): MaxPool with dilations and uneven pads, AveragePool counting pads with ceil_mode
 * (oneDNN's pooling declines it), AveragePool counting SAME_UPPER pads, GlobalMaxPool. */
static void test_pools(int64_t batch) {
    ob_buf g = {0};
    int64_t xd[4] = {batch, 3, 16, 14}; /* p1: ceil_mode adds a window */
    conv_spec c1 = {3, 20, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c1", "X", "a", &c1);
    const char *ins[] = {"a", NULL};
    const char *o1[] = {"m1", NULL}, *o2[] = {"p1", NULL}, *o3[] = {"p2", NULL}, *o4[] = {"g1", NULL};
    ob_buf n = ob_node("MaxPool", NULL, "m1", ins, o1);
    int64_t k3[2] = {3, 3}, s2[2] = {2, 2}, d2[2] = {2, 2}, pm[4] = {2, 1, 1, 2}, p1[4] = {1, 1, 1, 1};
    ob_attr_ints(&n, "kernel_shape", k3, 2);
    ob_attr_ints(&n, "strides", s2, 2);
    ob_attr_ints(&n, "dilations", d2, 2);
    ob_attr_ints(&n, "pads", pm, 4);
    ob_msg(&g, OB_NODE, &n);
    n = ob_node("AveragePool", NULL, "p1", ins, o2);
    ob_attr_ints(&n, "kernel_shape", k3, 2);
    ob_attr_ints(&n, "strides", s2, 2);
    ob_attr_ints(&n, "pads", p1, 4);
    ob_attr_int(&n, "ceil_mode", 1);
    ob_attr_int(&n, "count_include_pad", 1);
    ob_msg(&g, OB_NODE, &n);
    n = ob_node("AveragePool", NULL, "p2", ins, o3);
    ob_attr_ints(&n, "kernel_shape", k3, 2);
    ob_attr_ints(&n, "strides", s2, 2);
    ob_attr_int(&n, "count_include_pad", 1);
    ob_buf a = {0}; /* auto_pad = "SAME_UPPER": a STRING attribute */
    ob_str(&a, 1, "auto_pad");
    ob_str(&a, 4, "SAME_UPPER");
    ob_int(&a, 20, 3);
    ob_msg(&n, 5, &a);
    ob_msg(&g, OB_NODE, &n);
    n = ob_node("GlobalMaxPool", NULL, "g1", ins, o4);
    ob_msg(&g, OB_NODE, &n);
    const char *outs[] = {"m1", "p1", "p2", "g1", NULL};
    io(&g, xd, 4, outs);
    result r;
    compare("pools", ob_model(&g), xd, 4, outs, &r);
    if (!g_on) return;
    /* c1 and the four pools: the own loops take all four on the AVX2 tier or with
       FRT_DNNL_OWN_POOL=1, and on the AVX-512 tier by default all but the average pools of at
       most 64 output pixels (p2, 8x7, oneDNN's; p1 is 9x8); oneDNN's, which decline p1, with
       FRT_DNNL_OWN_POOL=0 */
    const char *e = getenv("FRT_DNNL_OWN_POOL");
    bool own = e && *e ? strcmp(e, "0") != 0 : frt_cpu_tier() >= FRT_ISA_AVX2;
    CHECK_MSG(r.onednn_steps == (own ? 5 : 4), "pools: %d onednn steps", r.onednn_steps);
}

/* Pools big enough for the cost model to split one image over channel blocks (the own loops on
 * the AVX2 and AVX-512 tiers: MaxPool 3x3/2 and GlobalAveragePool of 64 channels at 112x112, as resnet50's
 * stem): at 2 and 3 threads both steps are split and their outputs are bit-identical to 1
 * thread's (a block's result does not depend on who computes it); FRT_DNNL_POOL_SPLIT=0 keeps
 * them whole. The 1x1 convolution in front runs as one part (FRT_DNNL_PARTS=1) so that its
 * output, the pools' input, is the same bits in every run. */
static void test_pool_split(void) {
    ob_buf g = {0};
    int64_t xd[4] = {1, 3, 112, 112};
    conv_spec c1 = {3, 64, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c1", "X", "a", &c1);
    const char *ins[] = {"a", NULL}, *o1[] = {"m1", NULL}, *o2[] = {"g1", NULL};
    ob_buf n = ob_node("MaxPool", NULL, "m1", ins, o1);
    int64_t k3[2] = {3, 3}, s2[2] = {2, 2}, p1[4] = {1, 1, 1, 1};
    ob_attr_ints(&n, "kernel_shape", k3, 2);
    ob_attr_ints(&n, "strides", s2, 2);
    ob_attr_ints(&n, "pads", p1, 4);
    ob_msg(&g, OB_NODE, &n);
    n = ob_node("GlobalAveragePool", NULL, "g1", ins, o2);
    ob_msg(&g, OB_NODE, &n);
    const char *outs[] = {"m1", "g1", NULL};
    io(&g, xd, 4, outs);
    ob_buf mb = ob_model(&g);
    result ref, got;
    run(&mb, 1, 1, 1, xd, 4, outs, &ref);
    bool own = frt_cpu_tier() >= FRT_ISA_AVX2;
    CHECK_MSG(ref.pool_split == 0, "pool split: %d split pools at 1 thread", ref.pool_split);
    for (int cfg = 0; cfg < 3 && g_on; cfg++) {
        int threads = cfg == 2 ? 2 : cfg + 2;
        if (cfg == 2) setenv("FRT_DNNL_POOL_SPLIT", "0", 1);
        run(&mb, 1, threads, 1, xd, 4, outs, &got);
        unsetenv("FRT_DNNL_POOL_SPLIT");
        int want = own && cfg < 2 ? 2 : 0;
        CHECK_MSG(got.pool_split == want, "pool split: %d split pools at %d threads (cfg %d), want %d",
                  got.pool_split, threads, cfg, want);
        for (int o = 0; o < 2; o++)
            CHECK_MSG(got.n[o] == ref.n[o] && got.out[o] && ref.out[o] &&
                          !memcmp(got.out[o], ref.out[o], ref.n[o] * sizeof(float)),
                      "pool split: output %d at %d threads (cfg %d) differs from 1 thread's", o,
                      threads, cfg);
        free_result(&got);
    }
    free_result(&ref);
    free(mb.p);
}

/* DenseNet's BatchNormalization (+ Relu) and efficientnet's squeeze-and-excitation scale
 * (channel_mul) big enough for the cost model to split one image over channel blocks (64
 * channels at 56x56: 8 blocks of 12.5 us at FRT_PAR_NS_PER_BYTE), and the same two ops on a
 * 7x7 image (64 channels, 1.6 us in all), which stay on one thread. On the AVX2 tier the batch
 * normalizations run the own loops; at 2 and 3 threads the big pair runs split and the outputs
 * are bit-identical to 1 thread's; FRT_DNNL_ELT_SPLIT=0 keeps them whole. The convolution in
 * front runs as one part (FRT_DNNL_PARTS=1). */
static void test_elt_split(void) {
    ob_buf g = {0};
    int64_t xd[4] = {1, 64, 56, 56}, vd[1] = {64};
    conv_spec c1 = {64, 64, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c1", "X", "a", &c1);
    int64_t p1[4] = {1, 1, 1, 1};
    add_pool(&g, "MaxPool", "mp", "a", "m", 3, 1, p1, 0, 0);
    add_init(&g, "bn.s", vd, 1, 0.5f, 1.5f);
    add_init(&g, "bn.b", vd, 1, -0.5f, 0.5f);
    add_init(&g, "bn.m", vd, 1, -0.5f, 0.5f);
    add_init(&g, "bn.v", vd, 1, 0.5f, 2.0f);
    const char *bins[] = {"m", "bn.s", "bn.b", "bn.m", "bn.v", NULL}, *bouts[] = {"bn", NULL};
    ob_buf bnn = ob_node("BatchNormalization", NULL, "bn", bins, bouts);
    ob_msg(&g, OB_NODE, &bnn);
    add_op(&g, "Relu", "relu", "bn", NULL, "r");
    const char *gin[] = {"r", NULL}, *gout[] = {"p", NULL};
    ob_buf gn = ob_node("GlobalAveragePool", NULL, "gap", gin, gout);
    ob_msg(&g, OB_NODE, &gn);
    conv_spec f1 = {64, 64, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "f1", "p", "f", &f1);
    add_op(&g, "Sigmoid", "sg", "f", NULL, "gate");
    add_op(&g, "Mul", "se", "r", "gate", "y");
    /* the small pair: 7x7 */
    add_pool(&g, "MaxPool", "mp2", "r", "q", 8, 8, NULL, 0, 0);
    const char *b2ins[] = {"q", "bn.s", "bn.b", "bn.m", "bn.v", NULL}, *b2outs[] = {"bq", NULL};
    ob_buf bn2 = ob_node("BatchNormalization", NULL, "bn2", b2ins, b2outs);
    ob_msg(&g, OB_NODE, &bn2);
    add_op(&g, "Mul", "se2", "gate", "bq", "y2");
    const char *outs[] = {"y", "y2", NULL};
    io(&g, xd, 4, outs);
    ob_buf mb = ob_model(&g);
    result ref, got;
    run(&mb, 1, 1, 1, xd, 4, outs, &ref);
    bool own = frt_cpu_tier() == FRT_ISA_AVX2;
    if (g_on) {
        CHECK_MSG(ref.bn_own == (own ? 2 : 0), "elt split: %d own batch normalizations", ref.bn_own);
        CHECK_MSG(ref.chanmul == 2, "elt split: %d channel_mul steps", ref.chanmul);
        CHECK_MSG(ref.bn_split + ref.chanmul_split == 0, "elt split: split at 1 thread");
    }
    for (int cfg = 0; cfg < 3 && g_on; cfg++) {
        int threads = cfg == 2 ? 2 : cfg + 2;
        if (cfg == 2) setenv("FRT_DNNL_ELT_SPLIT", "0", 1);
        run(&mb, 1, threads, 1, xd, 4, outs, &got);
        unsetenv("FRT_DNNL_ELT_SPLIT");
        int want = cfg < 2;
        CHECK_MSG(got.bn_split == (own ? want : 0) && got.chanmul_split == want,
                  "elt split: %d batch normalizations, %d channel_muls split at %d threads (cfg %d)",
                  got.bn_split, got.chanmul_split, threads, cfg);
        for (int o = 0; o < 2; o++)
            CHECK_MSG(got.n[o] == ref.n[o] && got.out[o] && ref.out[o] &&
                          !memcmp(got.out[o], ref.out[o], ref.n[o] * sizeof(float)),
                      "elt split: output %d at %d threads (cfg %d) differs from 1 thread's", o,
                      threads, cfg);
        free_result(&got);
    }
    free_result(&ref);
    free(mb.p);
}

/* 1x1 convolutions of 7x7 images with at most 512 input channels and many output blocks
 * (mobilenet_v2's 160 -> 960, 320 -> 1280, resnet50's 512 -> 2048): on the AVX2 tier the own
 * pointwise loop at every thread count (pwconv.c), at 2 threads split into ranges of output
 * blocks: 160 -> 576 with Relu (72 blocks: parts of 3-block groups) and two 320 -> 100, one with
 * the other's output as its residual (13 blocks, the last one padded: the last part ends at the
 * padded block), bit-identical to 1 thread and within float tolerance of the builtin kernels;
 * 576 -> 320 is own at 1 thread only, in slices of the input channels (the same bits as
 * unsliced, FRT_BLKPW_KC=0), and keeps oneDNN at 2 threads (y then differs in the last bits). */
static void test_small_map_pw(void) {
    ob_buf g = {0};
    int64_t xd[4] = {1, 160, 7, 7};
    conv_spec c0 = {160, 160, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c0", "X", "a0", &c0); /* (so that c1 reads a blocked tensor) */
    conv_spec c1 = {160, 576, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c1", "a0", "a1", &c1);
    add_op(&g, "Relu", "r1", "a1", NULL, "b1");
    conv_spec c2 = {576, 320, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c2", "b1", "a2", &c2);
    conv_spec c3 = {320, 100, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c3", "a2", "a3", &c3);
    conv_spec c4 = {320, 100, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c4", "a2", "a4", &c4);
    add_op(&g, "Add", "s", "a3", "a4", "y");
    const char *outs[] = {"b1", "y", NULL};
    io(&g, xd, 4, outs);
    ob_buf mb = ob_model(&g);
    result ref, got, plain, whole;
    run(&mb, 1, 1, 0, xd, 4, outs, &ref);
    run(&mb, 1, 2, 0, xd, 4, outs, &got);
    run(&mb, 0, 1, 0, xd, 4, outs, &plain);
    setenv("FRT_BLKPW_KC", "0", 1);
    run(&mb, 1, 1, 0, xd, 4, outs, &whole);
    unsetenv("FRT_BLKPW_KC");
    if (g_on && frt_cpu_tier() == FRT_ISA_AVX2) {
        /* c1, c3 and c4 + Add (a FusedConv); c2 (576 channels in) at 1 thread only */
        CHECK_MSG(ref.pw_own == 4 && got.pw_own == 3,
                  "small map pw: %d / %d own pointwise steps at 1 / 2 threads", ref.pw_own,
                  got.pw_own);
        CHECK_MSG(got.pw_split == 3, "small map pw: %d own pointwise steps split at 2 threads",
                  got.pw_split);
        for (int o = 0; o < 2; o++) {
            CHECK_MSG(o == 1 || (got.n[o] == ref.n[o] && got.out[o] && ref.out[o] &&
                                 !memcmp(got.out[o], ref.out[o], ref.n[o] * sizeof(float))),
                      "small map pw: output %d at 2 threads differs from 1 thread's", o);
            CHECK_MSG(whole.n[o] == ref.n[o] && whole.out[o] && ref.out[o] &&
                          !memcmp(whole.out[o], ref.out[o], ref.n[o] * sizeof(float)),
                      "small map pw: output %d with input channel slices differs from without", o);
            for (int k = 0; k < 2; k++) {
                const result *r = k ? &got : &ref;
                double md = 0;
                for (size_t i = 0; i < r->n[o] && plain.out[o]; i++) {
                    double d = fabs((double)r->out[o][i] - plain.out[o][i]);
                    if (d > md) md = d;
                }
                CHECK_MSG(plain.out[o] && plain.n[o] == r->n[o] && md < 1e-3,
                          "small map pw: output %d at %d threads differs from the builtin kernels "
                          "by %g", o, k + 1, md);
            }
        }
    }
    free_result(&whole);
    free_result(&plain);
    free_result(&got);
    free_result(&ref);
    free(mb.p);
}

/* Depthwise convolutions as mobilenet_v2's 14x14 and 7x7 layers (384 channels stride 1 with
 * Relu, 576 channels stride 2), whose flops alone (17 and 8 us at FRT_PAR_NS_PER_FLOP_DNNL_DW)
 * keep them whole but whose bytes (38 and 35 us at FRT_PAR_NS_PER_BYTE) split them on the AVX2
 * tier at 2 threads (split.c; the own depthwise loop's channel ranges, dwconv.c, with the same
 * estimate), and a 1x1 convolution 576 -> 48 at 7x7 (2.7 MFLOP: 14 us at
 * FRT_PAR_NS_PER_FLOP_DNNL, 30 us at the AVX2 tier's FRT_PAR_NS_PER_FLOP_DNNL_AVX2): all four
 * run as parts there, bit-identical to 1 thread (FRT_DNNL_OWN_PW=0: 384 -> 576 at 14x14 would
 * run the own pointwise loop at 1 thread only on the AVX2 tier, pwconv.c). */
static void test_small_split(void) {
    ob_buf g = {0};
    int64_t xd[4] = {1, 384, 14, 14};
    conv_spec d1 = {384, 384, 3, 3, 384, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "d1", "X", "a1", &d1);
    add_op(&g, "Relu", "r1", "a1", NULL, "b1");
    conv_spec c2 = {384, 576, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c2", "b1", "a2", &c2);
    conv_spec d3 = {576, 576, 3, 3, 576, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "d3", "a2", "a3", &d3);
    conv_spec c4 = {576, 48, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c4", "a3", "a4", &c4);
    const char *outs[] = {"b1", "a4", NULL};
    io(&g, xd, 4, outs);
    ob_buf mb = ob_model(&g);
    result ref, got;
    setenv("FRT_DNNL_OWN_PW", "0", 1);
    run(&mb, 1, 1, 0, xd, 4, outs, &ref);
    run(&mb, 1, 2, 0, xd, 4, outs, &got);
    unsetenv("FRT_DNNL_OWN_PW");
    if (g_on && frt_cpu_tier() == FRT_ISA_AVX2) {
        CHECK_MSG(got.split_steps == 4, "small split: %d split steps at 2 threads", got.split_steps);
        /* d3 (d1 reads the graph's plain input: oneDNN's kernel, split.c) */
        CHECK_MSG(got.dw_split == 1, "small split: %d own depthwise steps split at 2 threads",
                  got.dw_split);
        for (int o = 0; o < 2; o++)
            CHECK_MSG(got.n[o] == ref.n[o] && got.out[o] && ref.out[o] &&
                          !memcmp(got.out[o], ref.out[o], ref.n[o] * sizeof(float)),
                      "small split: output %d at 2 threads differs from 1 thread's", o);
    }
    free_result(&got);
    free_result(&ref);
    free(mb.p);
}

/* Grouped convolutions whose groups are not whole channel blocks (oneDNN has only its reference
 * kernel for them on the blocked layout): groups of 8 channels (48 channels, stride 2, Relu; 104
 * channels = 6.5 blocks of 16, so the last block is padded, dilated, no bias, SiLU) run on nChw8c
 * between two reorders inside the step (relay.c) on the AVX-512 tier (on nChw8c directly on the
 * AVX2 tier); groups of 4 run on NHWC between two reorders on the AVX-512 tier (the AVX2 tier's
 * own grouped loop takes them, and g1, with FRT_DNNL_OWN_GC=0 g4 is relayed). Activations stay
 * blocked between the steps: one reorder at the input, one at the graph output. */
static void test_relay(int64_t batch) {
    ob_buf g = {0};
    int64_t xd[4] = {batch, 48, 15, 13};
    conv_spec g1 = {48, 48, 3, 3, 6, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "g1", "X", "a1", &g1);
    add_op(&g, "Relu", "r1", "a1", NULL, "b1");
    conv_spec c2 = {48, 104, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c2", "b1", "a2", &c2);
    conv_spec g3 = {104, 104, 3, 3, 13, {1, 1}, {2, 2}, {2, 1, 2, 2}, NULL, 0};
    add_conv(&g, "g3", "a2", "a3", &g3);
    add_op(&g, "Sigmoid", "s3", "a3", NULL, "sg3");
    add_op(&g, "Mul", "silu3", "a3", "sg3", "b3"); /* SiLU, fused into g3 */
    conv_spec g4 = {104, 104, 3, 3, 26, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "g4", "b3", "a4", &g4);
    const char *outs[] = {"a4", NULL};
    io(&g, xd, 4, outs);
    result r;
    compare("relay", ob_model(&g), xd, 4, outs, &r);
    if (!g_on) return;
    CHECK_MSG(r.onednn_steps == 4, "relay: %d onednn steps", r.onednn_steps);
    CHECK_MSG(r.reorders == 2, "relay: %d reorders", r.reorders); /* X -> blocked, a4 -> plain */
    /* AVX2 tier: g1 (groups of 8) and g4 (groups of 4) run the own grouped loop (gconv.c), g3
       (dilated) oneDNN's kernel on nChw8c */
    const char *gce = getenv("FRT_DNNL_OWN_GC");
    int relayed = frt_cpu_tier() >= FRT_ISA_AVX512 ? 3 : gce && !strcmp(gce, "0") ? 1 : 0;
    CHECK_MSG(r.relay_steps == relayed, "relay: %d relayed steps", r.relay_steps);
}

/* Ungrouped dilated 3x3 convolutions that oneDNN 2.6 runs only with its reference kernel on the
 * blocked layout on the AVX2 tier (dilation 4, pad 4, as in fcn_resnet50's layer4: its JIT kernel
 * takes no pad that large): d1 (Relu) and d2 (act(conv + residual), FusedConv) are left to the
 * builtin kernel; no step runs oneDNN's reference convolution (a scalar loop: fcn_resnet50 took
 * 80 s a run with it). */
static void test_dilated_ref(int64_t batch) {
    ob_buf g = {0};
    int64_t xd[4] = {batch, 32, 14, 12};
    conv_spec d1 = {32, 32, 3, 3, 1, {1, 1}, {4, 4}, {4, 4, 4, 4}, NULL, 1};
    add_conv(&g, "d1", "X", "a1", &d1);
    add_op(&g, "Relu", "r1", "a1", NULL, "b1");
    conv_spec d2 = {32, 32, 3, 3, 1, {1, 1}, {4, 4}, {4, 4, 4, 4}, NULL, 1};
    add_conv(&g, "d2", "b1", "a2", &d2);
    add_op(&g, "Add", "add2", "a2", "b1", "c2");
    add_op(&g, "Relu", "r2", "c2", NULL, "y");
    const char *outs[] = {"y", NULL};
    io(&g, xd, 4, outs);
    result r;
    compare("dilated_ref", ob_model(&g), xd, 4, outs, &r);
    if (!g_on) return;
    if (frt_cpu_tier() != FRT_ISA_AVX2) return; /* AVX-512: oneDNN's JIT kernel takes both */
    /* both on the builtin kernel, none on oneDNN's plain primitive (here its reference kernel) */
    CHECK_MSG(r.onednn_steps == 0, "dilated_ref: %d onednn steps", r.onednn_steps);
    CHECK_MSG(r.conv_plain == 0, "dilated_ref: %d onednn:conv steps (reference kernel)",
              r.conv_plain);
}

/* Clip as a fused activation (opset 13 Clip with constant bounds), auto_pad SAME_UPPER/LOWER with
 * stride 2, no bias, BatchNormalization, Concat of whole blocks and elementwise ops on blocked
 * data (Sigmoid, Mul of same shapes), 32 channels. */
static void test_blocks(void) {
    ob_buf g = {0};
    int64_t xd[4] = {1, 32, 17, 14};
    conv_spec c1 = {32, 32, 3, 3, 1, {2, 2}, {1, 1}, {0}, "SAME_UPPER", 0};
    add_conv(&g, "c1", "X", "a1", &c1);
    int64_t sd[1] = {1};
    float lo = -0.25f, hi = 0.5f;
    ob_buf tl = ob_tensor_f32("lo", sd, 0, &lo), th = ob_tensor_f32("hi", sd, 0, &hi);
    ob_msg(&g, OB_INIT, &tl);
    ob_msg(&g, OB_INIT, &th);
    const char *cins[] = {"a1", "lo", "hi", NULL}, *couts[] = {"b1", NULL};
    ob_buf cn = ob_node("Clip", NULL, "clip", cins, couts);
    ob_msg(&g, OB_NODE, &cn);
    conv_spec c2 = {32, 16, 5, 3, 1, {2, 2}, {1, 1}, {0}, "SAME_LOWER", 1};
    add_conv(&g, "c2", "X", "a2", &c2);
    conv_spec c2b = {32, 16, 3, 3, 1, {2, 2}, {1, 1}, {0}, "SAME_UPPER", 1};
    add_conv(&g, "c2b", "X", "a2b", &c2b);
    const char *catin[] = {"a2", "a2b", NULL}, *catout[] = {"cat", NULL};
    ob_buf catn = ob_node("Concat", NULL, "cat", catin, catout);
    ob_attr_int(&catn, "axis", 1);
    ob_msg(&g, OB_NODE, &catn);
    int64_t vd[1] = {32};
    add_init(&g, "bn.s", vd, 1, 0.5f, 1.5f);
    add_init(&g, "bn.b", vd, 1, -0.5f, 0.5f);
    add_init(&g, "bn.m", vd, 1, -0.5f, 0.5f);
    add_init(&g, "bn.v", vd, 1, 0.5f, 2.0f);
    const char *bins[] = {"cat", "bn.s", "bn.b", "bn.m", "bn.v", NULL}, *bouts[] = {"bn", NULL};
    ob_buf bnn = ob_node("BatchNormalization", NULL, "bn", bins, bouts);
    attr_float(&bnn, "epsilon", 1e-3f);
    ob_msg(&g, OB_NODE, &bnn);
    add_op(&g, "Sigmoid", "sig", "bn", NULL, "sg");
    add_op(&g, "Mul", "mul", "bn", "sg", "silu");
    add_op(&g, "Add", "add", "silu", "b1", "sum");
    conv_spec c3 = {32, 8, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c3", "sum", "y", &c3);
    const char *outs[] = {"y", NULL};
    io(&g, xd, 4, outs);
    result r;
    compare("blocks", ob_model(&g), xd, 4, outs, &r);
    /* c1 (+Clip), c2, c2b, Concat, BatchNormalization, Silu (the fused Sigmoid and Mul), Add, c3;
       reorders: X to blocked (shared by c1, c2, c2b) and y to plain */
    if (!g_on) return;
    CHECK_MSG(r.onednn_steps == 8, "blocks: %d onednn steps", r.onednn_steps);
    CHECK_MSG(r.reorders == 2, "blocks: %d reorders", r.reorders);
    CHECK_MSG(r.split_steps >= 1, "blocks: %d split steps", r.split_steps);
}

/* Fused SiLU and HardSigmoid conv activations (fuse_cnn.c; HardSwish needs opset 14, these
 * models are opset 13), squeeze-and-excitation
 * (GlobalAveragePool -> 1x1 conv -> Sigmoid -> per-channel Mul on blocked data) and an all-zero
 * Pad before an AveragePool, 48 channels. */
static void test_cnn_ops(void) {
    ob_buf g = {0};
    int64_t xd[4] = {1, 16, 15, 13};
    conv_spec c1 = {16, 48, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c1", "X", "a1", &c1);
    add_op(&g, "Sigmoid", "sg1", "a1", NULL, "s1");
    add_op(&g, "Mul", "silu1", "a1", "s1", "b1");
    conv_spec c2 = {48, 48, 3, 3, 48, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c2", "b1", "a2", &c2);
    add_op(&g, "Relu", "relu", "a2", NULL, "b2");
    const char *gin[] = {"b2", NULL}, *gout[] = {"p", NULL};
    ob_buf gn = ob_node("GlobalAveragePool", NULL, "gap", gin, gout);
    ob_msg(&g, OB_NODE, &gn);
    conv_spec c3 = {48, 48, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c3", "p", "q", &c3);
    add_op(&g, "Sigmoid", "sg3", "q", NULL, "r");
    add_op(&g, "Mul", "se", "b2", "r", "e");
    conv_spec c4 = {48, 32, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c4", "e", "a4", &c4);
    const char *hin[] = {"a4", NULL}, *hout[] = {"b4", NULL};
    ob_buf hn = ob_node("HardSigmoid", NULL, "hsig", hin, hout);
    attr_float(&hn, "alpha", 0.25f);
    attr_float(&hn, "beta", 0.375f);
    ob_msg(&g, OB_NODE, &hn);
    int64_t zeros[8] = {0};
    ob_buf pt = {0};
    ob_int(&pt, 1, 8);
    ob_int(&pt, 2, 7);
    ob_str(&pt, 8, "pads");
    ob_bytes(&pt, 9, zeros, sizeof zeros);
    ob_msg(&g, OB_INIT, &pt);
    add_op(&g, "Pad", "pad", "b4", "pads", "c");
    add_pool(&g, "AveragePool", "ap", "c", "y", 2, 2, NULL, 0, 0);
    const char *outs[] = {"y", NULL};
    io(&g, xd, 4, outs);
    result r;
    compare("cnn_ops", ob_model(&g), xd, 4, outs, &r);
    /* every step stays blocked with the provider: c1 (+SiLU), c2 (+Relu, and the global pool as
       its second output: flatrt::ConvMean, fuse_cnn.c), c3 (+Sigmoid as a logistic post-op),
       the per-channel Mul, c4 (+HardSigmoid), AveragePool (the zero Pad before it is folded into
       its pads, fuse_pool.c): 6 steps; reorders only for the input (16 channels: blocked) and
       the output */
    if (!g_on) return;
    CHECK_MSG(r.onednn_steps == 6, "cnn_ops: %d onednn steps", r.onednn_steps);
    CHECK_MSG(r.reorders == 2, "cnn_ops: %d reorders", r.reorders);
    CHECK_MSG(r.split_steps >= 3, "cnn_ops: %d split steps", r.split_steps);
}

/* Squeeze-and-excitation gates (1x1 convolutions of the 1x1 image a GlobalAveragePool makes,
 * the provider's own GEMV kernel, gemvconv.c) with every activation it maps: Relu then
 * HardSigmoid, SiLU (Sigmoid + Mul, fused) then Sigmoid, Clip, none; 40 / 10 / 12 / 24 channels
 * (padded blocks), batch 2, with and without bias; the gates' inputs in the blocked layout (after
 * a convolution) and, for gc/gd (graph outputs), read back as plain data. */
/* A squeeze-and-excitation scale as torchvision writes it, Mul(gate, x): the fusion pass puts
 * the broadcast gate second (fuse.c), so the provider's channel_mul may write its product over
 * x, which dies there; the plan then writes it in place. Outputs against the builtin kernels and
 * the provider at 2 and 3 threads (compare). */
static void test_se_inplace(void) {
    ob_buf g = {0};
    int64_t xd[4] = {1, 24, 9, 7};
    conv_spec c0 = {24, 24, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c0", "X", "x0", &c0);
    const char *gin[] = {"x0", NULL}, *gout[] = {"p", NULL};
    ob_buf gn = ob_node("GlobalAveragePool", NULL, "gap", gin, gout);
    ob_msg(&g, OB_NODE, &gn);
    conv_spec fa = {24, 8, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "fa", "p", "a1", &fa);
    add_op(&g, "Relu", "ra", "a1", NULL, "a2");
    conv_spec fb = {8, 24, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "fb", "a2", "a3", &fb);
    add_op(&g, "Sigmoid", "sg", "a3", NULL, "gate");
    add_op(&g, "Mul", "se", "gate", "x0", "y");
    conv_spec c1 = {24, 16, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c1", "y", "z", &c1);
    const char *outs[] = {"z", NULL};
    io(&g, xd, 4, outs);
    ob_buf mb = ob_model(&g);
    frt_model *m = g_on ? load(&mb, 1, 1) : NULL;
    if (m) {
        const frt_program *pg = m->blocks[0].prog;
        int inplace = -1;
        for (size_t i = 0; i < pg->n_steps; i++)
            if (pg->steps[i].k.name && !strcmp(pg->steps[i].k.name, "onednn:channel_mul"))
                inplace = (pg->steps[i].k.flags & FRT_K_INPLACE) != 0;
        CHECK_MSG(inplace == 1, "se_inplace: channel_mul may run in place: %d", inplace);
        frt_runtime *rt = NULL;
        CHECK_OK(frt_runtime_create(m, &rt));
        float *x = malloc((size_t)numel(xd, 4) * sizeof *x);
        t_fill(x, (size_t)numel(xd, 4), 5);
        frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 4, .shape = {1, 24, 9, 7}, .data = x,
                         .nbytes = (size_t)numel(xd, 4) * 4};
        const char *names[] = {"X"};
        frt_tensor out[1];
        frt_plan_stats ps = {0};
        if (rt) {
            CHECK_OK(frt_run(rt, names, &in, 1, out, 1, FRT_OUTPUTS_BORROW));
            CHECK_OK(frt_runtime_plan_stats(rt, &ps));
        }
        CHECK_MSG(ps.num_inplace >= 1, "se_inplace: %zu steps in place", ps.num_inplace);
        free(x);
        frt_runtime_free(rt);
        frt_model_free(m);
    }
    result r;
    compare("se_inplace", mb, xd, 4, outs, &r); /* frees mb */
    if (g_on) CHECK_MSG(r.chanmul == 1, "se_inplace: %d channel_mul steps", r.chanmul);
}

static void test_se_gates(void) {
    ob_buf g = {0};
    int64_t xd[4] = {2, 40, 6, 5};
    conv_spec c0 = {40, 40, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c0", "X", "x0", &c0);
    const char *gin[] = {"x0", NULL}, *gout[] = {"p", NULL};
    ob_buf gn = ob_node("GlobalAveragePool", NULL, "gap", gin, gout);
    ob_msg(&g, OB_NODE, &gn);
    conv_spec fa = {40, 10, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "fa", "p", "a1", &fa);
    add_op(&g, "Relu", "ra", "a1", NULL, "a2");
    conv_spec fb = {10, 40, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0};
    add_conv(&g, "fb", "a2", "a3", &fb);
    const char *hin[] = {"a3", NULL}, *hout[] = {"ga", NULL};
    ob_buf hn = ob_node("HardSigmoid", NULL, "hsig", hin, hout);
    attr_float(&hn, "alpha", 0.25f);
    attr_float(&hn, "beta", 0.375f);
    ob_msg(&g, OB_NODE, &hn);
    conv_spec fc = {40, 12, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "fc", "p", "b1", &fc);
    add_op(&g, "Sigmoid", "sb", "b1", NULL, "b2");
    add_op(&g, "Mul", "silu", "b1", "b2", "b3");
    conv_spec fd = {12, 40, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "fd", "b3", "b4", &fd);
    add_op(&g, "Sigmoid", "sd", "b4", NULL, "gb");
    conv_spec fe = {40, 24, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "fe", "p", "e1", &fe);
    int64_t sd[1] = {1};
    float lo = -0.25f, hi = 0.5f;
    ob_buf tl = ob_tensor_f32("lo", sd, 0, &lo), th = ob_tensor_f32("hi", sd, 0, &hi);
    ob_msg(&g, OB_INIT, &tl);
    ob_msg(&g, OB_INIT, &th);
    const char *cins[] = {"e1", "lo", "hi", NULL}, *couts[] = {"gc", NULL};
    ob_buf cn = ob_node("Clip", NULL, "clip", cins, couts);
    ob_msg(&g, OB_NODE, &cn);
    conv_spec ff = {24, 40, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0};
    add_conv(&g, "ff", "gc", "gd", &ff);
    add_op(&g, "Mul", "m1", "x0", "ga", "y1");
    add_op(&g, "Mul", "m2", "y1", "gb", "y2");
    const char *outs[] = {"y2", "gc", "gd", NULL};
    io(&g, xd, 4, outs);
    result r;
    compare("se_gates", ob_model(&g), xd, 4, outs, &r);
    /* c0, the pool, 6 gate convolutions, 2 per-channel Muls */
    if (!g_on) return;
    CHECK_MSG(r.onednn_steps == 10, "se_gates: %d onednn steps", r.onednn_steps);
    CHECK_MSG(r.gemvconv_steps == 6, "se_gates: %d gemvconv steps", r.gemvconv_steps);
}

/* efficientnet_b0's narrowest gate: 96 -> 4 (SiLU) -> 96 (Sigmoid), then the per-channel Mul. */
static void test_se_narrow(void) {
    ob_buf g = {0};
    int64_t xd[4] = {1, 96, 8, 8};
    conv_spec c0 = {96, 96, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c0", "X", "x0", &c0);
    const char *gin[] = {"x0", NULL}, *gout[] = {"p", NULL};
    ob_buf gn = ob_node("GlobalAveragePool", NULL, "gap", gin, gout);
    ob_msg(&g, OB_NODE, &gn);
    conv_spec fc = {96, 4, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "fc", "p", "b1", &fc);
    add_op(&g, "Sigmoid", "sb", "b1", NULL, "b2");
    add_op(&g, "Mul", "silu", "b1", "b2", "b3");
    conv_spec fd = {4, 96, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "fd", "b3", "b4", &fd);
    add_op(&g, "Sigmoid", "sd", "b4", NULL, "gb");
    add_op(&g, "Mul", "m2", "x0", "gb", "y2");
    const char *outs[] = {"y2", NULL};
    io(&g, xd, 4, outs);
    result r;
    compare("se_narrow", ob_model(&g), xd, 4, outs, &r);
    if (!g_on) return;
    CHECK_MSG(r.gemvconv_steps == 2, "se_narrow: %d gemvconv steps", r.gemvconv_steps);
}

/* DenseNet's pre-activation: BatchNormalization -> Relu fused into one step (fuse.c; oneDNN's
 * fused ReLU), and BatchNormalization -> Clip (after pools: a BatchNormalization right after a
 * Conv is folded into its weights), which the provider leaves to the builtin kernel
 * (plain data, reorders around it). 48 channels (a padded block on AVX-512). */
static void test_bn_act(void) {
    ob_buf g = {0};
    int64_t xd[4] = {2, 48, 9, 11};
    int64_t vd[1] = {48};
    add_init(&g, "bn.s", vd, 1, 0.5f, 1.5f);
    add_init(&g, "bn.b", vd, 1, -0.5f, 0.5f);
    add_init(&g, "bn.m", vd, 1, -0.5f, 0.5f);
    add_init(&g, "bn.v", vd, 1, 0.5f, 2.0f);
    conv_spec c1 = {48, 48, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c1", "X", "a1", &c1);
    add_pool(&g, "MaxPool", "mp1", "a1", "p1", 2, 1, NULL, 0, 0);
    const char *bins[] = {"p1", "bn.s", "bn.b", "bn.m", "bn.v", NULL}, *bouts[] = {"bn", NULL};
    ob_buf bnn = ob_node("BatchNormalization", NULL, "bn", bins, bouts);
    ob_msg(&g, OB_NODE, &bnn);
    add_op(&g, "Relu", "relu", "bn", NULL, "r");
    conv_spec c2 = {48, 48, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c2", "r", "a2", &c2);
    add_pool(&g, "MaxPool", "mp2", "a2", "p2", 2, 1, NULL, 0, 0);
    const char *b2ins[] = {"p2", "bn.s", "bn.b", "bn.m", "bn.v", NULL}, *b2outs[] = {"bn2", NULL};
    ob_buf bn2 = ob_node("BatchNormalization", NULL, "bn2", b2ins, b2outs);
    ob_msg(&g, OB_NODE, &bn2);
    int64_t sd[1] = {1};
    float lo = -0.25f, hi = 0.5f;
    ob_buf tl = ob_tensor_f32("lo", sd, 0, &lo), th = ob_tensor_f32("hi", sd, 0, &hi);
    ob_msg(&g, OB_INIT, &tl);
    ob_msg(&g, OB_INIT, &th);
    const char *cins[] = {"bn2", "lo", "hi", NULL}, *couts[] = {"y", NULL};
    ob_buf cn = ob_node("Clip", NULL, "clip", cins, couts);
    ob_msg(&g, OB_NODE, &cn);
    const char *outs[] = {"y", NULL};
    io(&g, xd, 4, outs);
    result r;
    compare("bn_act", ob_model(&g), xd, 4, outs, &r);
    /* c1, mp1, bn+Relu, c2, mp2 with the provider; bn2+Clip builtin on plain: reorders X to
       blocked and p2 to plain, y is plain already */
    if (!g_on) return;
    CHECK_MSG(r.onednn_steps == 5, "bn_act: %d onednn steps", r.onednn_steps);
    CHECK_MSG(r.reorders == 2, "bn_act: %d reorders", r.reorders);
}

/* 1-D convolution (rank 3) with stride, dilation and padding; 7 channels. */
static void test_conv1d(void) {
    ob_buf g = {0};
    int64_t xd[3] = {2, 7, 29};
    conv_spec c1 = {7, 9, -1, 5, 1, {1, 2}, {1, 2}, {0, 3, 0, 1}, NULL, 1};
    add_conv(&g, "c1", "X", "a1", &c1);
    conv_spec c2 = {9, 9, -1, 3, 9, {1, 1}, {1, 1}, {0, 1, 0, 1}, NULL, 1};
    add_conv(&g, "c2", "a1", "y", &c2);
    const char *outs[] = {"y", NULL};
    io(&g, xd, 3, outs);
    result r;
    compare("conv1d", ob_model(&g), xd, 3, outs, &r);
    if (g_on) CHECK_MSG(r.onednn_steps == 2, "conv1d: %d onednn steps", r.onednn_steps);
}

/* 3-D convolution (rank 5, r3d_18's block in small: 5 -> 11 channels, odd planes, Relu, the
 * residual sum, a strided one, GlobalAveragePool on 5-D): the provider declines rank 5, so with
 * it on the builtin kernels run on plain data (no reorder) and give the FRT_DNNL=0 outputs; on the
 * AVX2 tier they are the packed 3-D GEMM. */
static void add_conv3(ob_buf *g, const char *name, const char *in, const char *out, int64_t C,
                      int64_t M, const int64_t *k, const int64_t *st, const int64_t *pads) {
    char wn[64], bn[64];
    snprintf(wn, sizeof wn, "%s.w", name);
    snprintf(bn, sizeof bn, "%s.b", name);
    int64_t wd[5] = {M, C, k[0], k[1], k[2]}, bd[1] = {M};
    float r = 1.0f / sqrtf((float)(C * k[0] * k[1] * k[2]));
    add_init(g, wn, wd, 5, -r, r);
    add_init(g, bn, bd, 1, -0.5f, 0.5f);
    const char *ins[] = {in, wn, bn, NULL}, *outs[] = {out, NULL};
    ob_buf n = ob_node("Conv", NULL, name, ins, outs);
    ob_attr_ints(&n, "strides", st, 3);
    ob_attr_ints(&n, "pads", pads, 6);
    ob_msg(g, OB_NODE, &n);
}

static void test_conv3d(void) {
    ob_buf g = {0};
    int64_t xd[5] = {1, 5, 4, 9, 7};
    static const int64_t k3[3] = {3, 3, 3}, s1[3] = {1, 1, 1}, s2[3] = {2, 2, 2};
    static const int64_t p1[6] = {1, 1, 1, 1, 1, 1};
    add_conv3(&g, "c1", "X", "a1", 5, 11, k3, s1, p1);
    add_op(&g, "Relu", "r1", "a1", NULL, "b1");
    add_conv3(&g, "c2", "b1", "a2", 11, 11, k3, s1, p1);
    add_op(&g, "Add", "add", "a2", "b1", "a3");
    add_op(&g, "Relu", "r2", "a3", NULL, "b3");
    add_conv3(&g, "c3", "b3", "a4", 11, 13, k3, s2, p1);
    add_op(&g, "GlobalAveragePool", "gap", "a4", NULL, "y");
    const char *outs[] = {"y", "b3", NULL};
    io(&g, xd, 5, outs);
    result r;
    compare("conv3d", ob_model(&g), xd, 5, outs, &r);
    CHECK_MSG(r.onednn_steps == 0, "conv3d: %d onednn steps", r.onednn_steps);
    CHECK_MSG(r.reorders == 0, "conv3d: %d reorders", r.reorders);
    if (frt_cpu_tier() >= FRT_ISA_AVX2)
        CHECK_MSG(r.conv3d_packed == 3, "conv3d: %d packed 3-D convolutions", r.conv3d_packed);
}

/* A convolution whose image size is symbolic at load is left to builtin (the primitives are built
 * for the load-time dims). */
static void test_shapes(void) {
    ob_buf g = {0};
    int64_t xd[4] = {1, 4, -1, 6};
    conv_spec c1 = {4, 16, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c1", "X", "y", &c1);
    const char *outs[] = {"y", NULL};
    io(&g, xd, 4, outs);
    ob_buf mb = ob_model(&g);
    frt_model *m = load(&mb, 1, 1);
    if (m) {
        const frt_program *p = m->blocks[0].prog;
        for (size_t i = 0; i < p->n_steps; i++)
            CHECK_MSG(strncmp(p->steps[i].k.name, "onednn:", 7) != 0, "symbolic H taken");
        frt_model_free(m);
    }
    free(mb.p);
}

/* Images whose sizes overflow oneDNN's 32-bit kernel parameters are left to builtin: a model
 * with such dims loads (or fails with a status when its slab cannot be allocated) and never
 * reaches oneDNN, whose kernel setup keeps sizes in 32 bits (before the bound, all three were
 * handed to it on AVX-512; CI's fuzz_pipeline hit a SIGFPE inside that setup). */
static void test_huge_images(void) {
    static const int64_t shapes[3][4] = {
        {1, 16, 1, (int64_t)1 << 31}, {1, 16, 70000, 70000}, {1, (int64_t)1 << 26, 8, 8}};
    for (int i = 0; i < 3; i++) {
        ob_buf g = {0};
        const int64_t *xd = shapes[i];
        conv_spec c1 = {16, 16, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0};
        if (i == 2) c1.C = c1.M = c1.group = xd[1];
        add_conv(&g, "c1", "X", "y", &c1);
        const char *outs[] = {"y", NULL};
        io(&g, xd, 4, outs);
        ob_buf mb = ob_model(&g);
        setenv("FRT_DNNL", "1", 1);
        frt_options opt;
        frt_options_init(&opt);
        frt_model *m = NULL;
        frt_status st = frt_model_load_buffer(mb.p, mb.n, NULL, &opt, &m);
        unsetenv("FRT_DNNL");
        if (st == FRT_OK) {
            const frt_program *p = m->blocks[0].prog;
            for (size_t j = 0; j < p->n_steps; j++)
                CHECK_MSG(strncmp(p->steps[j].k.name, "onednn:", 7) != 0,
                          "huge image %d taken by oneDNN", i);
            frt_model_free(m);
        } else {
            CHECK_MSG(m == NULL, "failed load set the model");
        }
        free(mb.p);
    }
}

/* The own Winograd F(4x4, 3x3) kernel (winoconv.c) in a chain of 3x3 stride-1 convolutions on
 * blocked data: padded channel blocks (20 -> 24 -> 40), pads 1 and 0, Relu, a residual FusedConv
 * (act(conv + Z)), a 1x1-output image (pads 0 on 3x3), a stride-2 3x3 (its stride-2 form,
 * 48 -> 40 channels on a 28x27 image) in between;
 * batch 1 and 2; 1, 2 and 3 threads (the 48-channel layers are big enough to run as parts at 2
 * threads). FRT_WINO=1 takes every covered shape (the default rule, too, takes these). */
static void test_wino(int64_t batch) {
    ob_buf g = {0};
    int64_t xd[4] = {batch, 20, 30, 29};
    conv_spec c1 = {20, 24, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c1", "X", "a1", &c1);
    add_op(&g, "Relu", "r1", "a1", NULL, "b1");
    conv_spec c2 = {24, 48, 3, 3, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0};
    add_conv(&g, "c2", "b1", "a2", &c2);
    conv_spec c3 = {48, 48, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c3", "a2", "a3", &c3);
    add_op(&g, "Add", "add", "a3", "a2", "s3");
    add_op(&g, "Relu", "r3", "s3", NULL, "t3"); /* FusedConv: relu(c3 + a2) */
    conv_spec c4 = {48, 40, 3, 3, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c4", "t3", "a4", &c4);
    conv_spec c5 = {40, 40, 3, 3, 1, {1, 1}, {1, 1}, {2, 1, 0, 2}, NULL, 1};
    add_conv(&g, "c5", "a4", "a5", &c5);
    const char *outs[] = {"a5", "t3", NULL};
    io(&g, xd, 4, outs);
    setenv("FRT_WINO", "1", 1);
    result r;
    compare("wino", ob_model(&g), xd, 4, outs, &r);
    unsetenv("FRT_WINO");
    if (!g_on) return;
    CHECK_MSG(r.wino_steps == 4, "wino: %d Winograd steps", r.wino_steps);
    CHECK_MSG(r.wino_s2 == 1, "wino: %d stride-2 Winograd steps", r.wino_s2);
    CHECK_MSG(r.wino_split >= 1, "wino: %d Winograd steps split at 2 threads", r.wino_split);
}

/* The Winograd rule for large weights (winoconv.c wino_many_tiles): with at least 16 tiles a
 * stride-1 3x3 takes the Winograd form whatever the size of its transformed weights U. c1: 344 ->
 * 344 at 14x14 (F(4x4): 16 tiles, 1.04 MiB of U per tile, over the 1 MiB rule) takes F(4x4);
 * c3: 576 -> 576 at 7x7 (F(2x2): 16 tiles, 1.27 MiB per tile, over the 1.25 MiB rule) takes
 * F(2x2); c2 (344 -> 576, stride 2, 14x14 -> 7x7) keeps its own rule. Default rule on the AVX2
 * tier (the others keep oneDNN); outputs against the builtin kernels at 1-3 threads. */
static void test_wino_many_tiles(void) {
    ob_buf g = {0};
    int64_t xd[4] = {1, 344, 14, 14};
    conv_spec c1 = {344, 344, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c1", "X", "a1", &c1);
    add_op(&g, "Relu", "r1", "a1", NULL, "b1");
    conv_spec c2 = {344, 576, 3, 3, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c2", "b1", "a2", &c2);
    conv_spec c3 = {576, 576, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c3", "a2", "a3", &c3);
    const char *outs[] = {"a3", "b1", NULL};
    io(&g, xd, 4, outs);
    result r;
    compare("wino_many_tiles", ob_model(&g), xd, 4, outs, &r);
    if (!g_on || frt_cpu_tier() != FRT_ISA_AVX2) return;
    CHECK_MSG(r.wino_steps == 1, "wino_many_tiles: %d F(4x4) steps", r.wino_steps);
    CHECK_MSG(r.wino2 == 1, "wino_many_tiles: %d F(2x2) steps", r.wino2);
    CHECK_MSG(!strcmp(r.last_conv, "onednn:wino2x3"), "wino_many_tiles: c3 ran %s", r.last_conv);
}

/* Convolutions run as a 1x1 convolution over their gathered input taps (onednn.c, conv_taps): at
 * 1 thread the 3x3 stride-2 layers of 64 output pixels or fewer on the AVX2 tier, 196 on the
 * AVX-512 tier, whose input channels are whole blocks (c2: 16 -> 24,
 * 15x13 -> 8x7, pads 1, Relu; c3: 24 -> 24, 8x7 -> 4x3, pads 1 0 0 1, no bias; the own
 * stride-2 Winograd declined, FRT_WINO_S2=0); with FRT_DNNL_GATHER=1 (and the Winograd kernels
 * off) the other square kernels too (c1: 3x3 stride 1 from the graph input; c4: 5x5 stride 1,
 * pads 2 2 1 2, 8 output channels); at 2 and 3 threads oneDNN's kernels. Batch 1 and 2, outputs
 * within float tolerance of the builtin kernels at every thread count (compare). */
static void test_taps(int64_t batch, int every) {
    ob_buf g = {0};
    int64_t xd[4] = {batch, 16, 15, 13};
    conv_spec c1 = {16, 16, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c1", "X", "a1", &c1);
    conv_spec c2 = {16, 24, 3, 3, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c2", "a1", "a2", &c2);
    add_op(&g, "Relu", "r2", "a2", NULL, "b2");
    conv_spec c3 = {24, 24, 3, 3, 1, {2, 2}, {1, 1}, {1, 0, 0, 1}, NULL, 0};
    add_conv(&g, "c3", "b2", "a3", &c3);
    conv_spec c4 = {24, 8, 5, 5, 1, {1, 1}, {1, 1}, {2, 2, 1, 2}, NULL, 1};
    add_conv(&g, "c4", "a3", "a4", &c4);
    const char *outs[] = {"a4", "b2", NULL};
    io(&g, xd, 4, outs);
    /* (the own Winograd kernels would take these small layers first) */
    setenv("FRT_WINO_S2", "0", 1);
    if (every) {
        setenv("FRT_DNNL_GATHER", "1", 1);
        setenv("FRT_WINO", "0", 1);
        setenv("FRT_WINO1", "0", 1);
    }
    result r;
    compare("taps", ob_model(&g), xd, 4, outs, &r);
    unsetenv("FRT_DNNL_GATHER");
    unsetenv("FRT_WINO");
    unsetenv("FRT_WINO1");
    unsetenv("FRT_WINO_S2");
    if (!g_on) return;
    /* every: each layer whose input channels are whole blocks (nChw8c: all four; the AVX-512
       tier's nChw16c: c1 and c2, 16 channels, not c3 and c4, 24); by default the stride-2 ones
       among them (nChw8c: c2 and c3; nChw16c: c2) */
    bool blk8 = frt_cpu_tier() == FRT_ISA_AVX2;
    int want = every ? (blk8 ? 4 : 2) : blk8 ? 2 : 1;
    CHECK_MSG(r.taps == want, "taps: %d gathered-tap convolutions at 1 thread, want %d", r.taps,
              want);
}

/* The own pointwise loop (pwconv.c) on the 1x1 layers it takes: 8, 20, 24 and 40 output channels
 * (1 to 3 and 5 blocks, a padded last block), 8, 20, 24 and 40 input channels, with bias or without, Relu,
 * Clip and a residual FusedConv (relu(conv + Z)), batch 1 and 2, on an image big enough to run as
 * pixel ranges at 2 and 3 threads: against the builtin kernels (compare), and the outputs at 2
 * and 3 threads must be the bits of the 1-thread run. */
static void test_pw(int64_t batch) {
    ob_buf g = {0};
    int64_t xd[4] = {batch, 13, 45, 53};
    conv_spec c1 = {13, 40, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c1", "X", "a1", &c1); /* reads the plain model input: oneDNN */
    add_op(&g, "Relu", "r1", "a1", NULL, "b1");
    conv_spec c2 = {40, 24, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c2", "b1", "a2", &c2);
    conv_spec c3 = {40, 24, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0};
    add_conv(&g, "c3", "b1", "a3", &c3);
    add_op(&g, "Add", "add", "a3", "a2", "s3");
    add_op(&g, "Relu", "r3", "s3", NULL, "t3"); /* FusedConv: relu(c3 + a2) */
    conv_spec c4 = {24, 20, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c4", "t3", "a4", &c4);
    int64_t sd[1] = {1};
    float lo = -0.25f, hi = 0.5f;
    ob_buf tl = ob_tensor_f32("lo", sd, 0, &lo), th = ob_tensor_f32("hi", sd, 0, &hi);
    ob_msg(&g, OB_INIT, &tl);
    ob_msg(&g, OB_INIT, &th);
    const char *cins[] = {"a4", "lo", "hi", NULL}, *couts[] = {"b4", NULL};
    ob_buf cn = ob_node("Clip", NULL, "clip", cins, couts);
    ob_msg(&g, OB_NODE, &cn);
    conv_spec c5 = {20, 8, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c5", "b4", "a5", &c5);
    conv_spec c6 = {8, 40, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0};
    add_conv(&g, "c6", "a5", "a6", &c6);
    const char *outs[] = {"a6", "t3", NULL};
    io(&g, xd, 4, outs);
    ob_buf mb = ob_model(&g);
    result one, two;
    run(&mb, 1, 1, 0, xd, 4, outs, &one);
    for (int threads = 2; threads <= 3; threads++) {
        run(&mb, 1, threads, 0, xd, 4, outs, &two);
        for (int o = 0; o < one.n_out && o < two.n_out; o++)
            CHECK_MSG(one.n[o] == two.n[o] && one.out[o] && two.out[o] &&
                          memcmp(one.out[o], two.out[o], one.n[o] * 4) == 0,
                      "pw: output %d at %d threads differs from 1 thread", o, threads);
        if (g_on && frt_cpu_tier() == FRT_ISA_AVX2)
            CHECK_MSG(two.pw_split >= 3, "pw: %d own pointwise steps split at %d threads",
                      two.pw_split, threads);
        free_result(&two);
    }
    free_result(&one);
    result r;
    compare("pw", mb, xd, 4, outs, &r);
    if (!g_on) return;
    int pw = frt_cpu_tier() == FRT_ISA_AVX2 ? 5 : 0;
    CHECK_MSG(r.pw_own == pw, "pw: %d own pointwise steps, want %d", r.pw_own, pw);
}

/* ReduceMean over the spatial axes of a blocked image (ShuffleNetV2's x.mean([2, 3])): with 16
 * channels (whole blocks) the own global pool writes the plain [N, C] / [N, C, 1, 1] output
 * without a reorder (where the own pools run: the AVX2 tier); 20 channels (a padded block) and a
 * reduction over W only stay builtin after a reorder. */
static void test_reduce_mean(int64_t batch) {
    ob_buf g = {0};
    int64_t xd[4] = {batch, 3, 9, 7};
    conv_spec c1 = {3, 16, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c1", "X", "a", &c1);
    conv_spec c2 = {3, 20, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "c2", "X", "b", &c2);
    int64_t hw[2] = {2, 3}, w[1] = {-1};
    const char *i0[] = {"a", NULL}, *o0[] = {"m0", NULL}, *o1[] = {"m1", NULL};
    const char *i2[] = {"b", NULL}, *o2[] = {"m2", NULL}, *o3[] = {"m3", NULL};
    ob_buf r0 = ob_node("ReduceMean", NULL, "r0", i0, o0);
    ob_attr_ints(&r0, "axes", hw, 2);
    ob_attr_int(&r0, "keepdims", 0);
    ob_msg(&g, OB_NODE, &r0);
    ob_buf r1 = ob_node("ReduceMean", NULL, "r1", i0, o1);
    ob_attr_ints(&r1, "axes", hw, 2);
    ob_msg(&g, OB_NODE, &r1);
    ob_buf r2 = ob_node("ReduceMean", NULL, "r2", i2, o2);
    ob_attr_ints(&r2, "axes", hw, 2);
    ob_attr_int(&r2, "keepdims", 0);
    ob_msg(&g, OB_NODE, &r2);
    ob_buf r3 = ob_node("ReduceMean", NULL, "r3", i0, o3);
    ob_attr_ints(&r3, "axes", w, 1);
    ob_msg(&g, OB_NODE, &r3);
    const char *outs[] = {"m0", "m1", "m2", "m3", NULL};
    io(&g, xd, 4, outs);
    result r;
    compare("reduce_mean", ob_model(&g), xd, 4, outs, &r);
    if (!g_on) return;
    const char *e = getenv("FRT_DNNL_OWN_POOL");
    int own = e && *e ? strcmp(e, "0") != 0 : frt_cpu_tier() >= FRT_ISA_AVX2;
    CHECK_MSG(r.reduce_own == 2 * own, "reduce_mean: %d own reductions, want %d", r.reduce_own,
              2 * own);
    /* b and a to plain for r2 and r3; a also for r0 and r1 without the own reductions */
    CHECK_MSG(r.reorders == 2, "reduce_mean: %d reorders", r.reorders);
}

/* Grouped 3x3 convolutions with groups of 8k channels (gconv.c, the own loop of blkgc.h on the
 * AVX2 tier): 48 channels in groups of 8 (stride 2, Relu), 16 (no bias, Clip), 24 (asymmetric
 * pads 0, 1, 2, 1, no activation) and 4 (stride 2); a dilated one stays oneDNN's. With the own loop the outputs at
 * 2 and 3 threads (split over output channel blocks) must be the 1-thread bits; every run must
 * match the run without the provider. */
static void test_gconv(int64_t batch) {
    ob_buf g = {0};
    int64_t xd[4] = {batch, 16, 64, 63};
    conv_spec c1 = {16, 48, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
    add_conv(&g, "c1", "X", "a1", &c1);
    add_op(&g, "Relu", "r1", "a1", NULL, "b1");
    conv_spec g1 = {48, 48, 3, 3, 6, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "g1", "b1", "a2", &g1);
    add_op(&g, "Relu", "r2", "a2", NULL, "b2");
    conv_spec g2 = {48, 48, 3, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0};
    add_conv(&g, "g2", "b2", "a3", &g2);
    int64_t sd[1] = {1};
    float lo = -0.25f, hi = 0.5f;
    ob_buf tl = ob_tensor_f32("lo", sd, 0, &lo), th = ob_tensor_f32("hi", sd, 0, &hi);
    ob_msg(&g, OB_INIT, &tl);
    ob_msg(&g, OB_INIT, &th);
    const char *cins[] = {"a3", "lo", "hi", NULL}, *couts[] = {"b3", NULL};
    ob_buf cn = ob_node("Clip", NULL, "clip", cins, couts);
    ob_msg(&g, OB_NODE, &cn);
    conv_spec g3 = {48, 48, 3, 3, 2, {1, 1}, {1, 1}, {0, 1, 2, 1}, NULL, 1};
    add_conv(&g, "g3", "b3", "a4", &g3);
    conv_spec g4 = {48, 48, 3, 3, 6, {1, 1}, {2, 2}, {2, 2, 2, 2}, NULL, 1};
    add_conv(&g, "g4", "a4", "a5", &g4);
    conv_spec g5 = {48, 48, 3, 3, 12, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
    add_conv(&g, "g5", "a5", "a6", &g5);
    const char *outs[] = {"a6", "b3", NULL};
    io(&g, xd, 4, outs);
    ob_buf mb = ob_model(&g);
    bool own = g_on && frt_cpu_tier() == FRT_ISA_AVX2;
    const char *env = getenv("FRT_DNNL_OWN_GC");
    if (env && !strcmp(env, "0")) own = false;
    /* (nChw8c only: the AVX-512 tier's nChw16c keeps oneDNN even with FRT_DNNL_OWN_GC=1) */
    if (env && !strcmp(env, "1")) own = g_on && frt_cpu_tier() == FRT_ISA_AVX2;
    result one, two;
    run(&mb, 1, 1, 0, xd, 4, outs, &one);
    for (int threads = 2; threads <= 3; threads++) {
        run(&mb, 1, threads, 0, xd, 4, outs, &two);
        /* (without the own loop: the builtin / oneDNN kernels' splits may sum in another
           order; compare() checks those against the run without the provider) */
        for (int o = 0; own && o < one.n_out && o < two.n_out; o++)
            CHECK_MSG(one.n[o] == two.n[o] && one.out[o] && two.out[o] &&
                          memcmp(one.out[o], two.out[o], one.n[o] * 4) == 0,
                      "gconv: output %d at %d threads differs from 1 thread", o, threads);
        if (own)
            CHECK_MSG(two.gc_split >= 1, "gconv: %d own grouped steps split at %d threads",
                      two.gc_split, threads);
        free_result(&two);
    }
    free_result(&one);
    result r;
    compare("gconv", mb, xd, 4, outs, &r);
    if (!g_on) return;
    CHECK_MSG(r.gc_own == (own ? 4 : 0), "gconv: %d own grouped steps, want %d", r.gc_own,
              own ? 4 : 0);
}

/* Steps written in place over the residual input (FusedConv's input 3, a sum post-op,
 * FRT_K_INPLACE with inplace_in = 3): with FRT_DNNL_SUM_Z=1 every residual convolution of the
 * provider takes the sum form (Winograd ones always do), with oneDNN's kernels (FRT_WINO=0,
 * FRT_DNNL_OWN_PW=0). Three graphs X -> c0 (1x1, 16 -> 32) -> a0 -> c1 (3x3) -> a1, then
 * relu(c2(a1) + a0) = t2 -> c3 (1x1) -> y:
 *   dies:   a0 is read last by the FusedConv: it runs in place (one step over a dying input);
 *   lives:  a0 is also read after it (y2 = y * a0, both outputs): not in place;
 *   self:   the FusedConv's own input is a0 (relu(c2(a0) + a0)): not in place (the kernel
 *           reads its input's neighbourhood while writing).
 * Counted as the in-place steps with the sum form less those with the binary form (the Mul of
 * "lives" runs in place over y either way). Outputs against the builtin kernels at 1-3 threads
 * and in 2 and 3 channel parts (compare), batch 1 and 2; the plan checker runs on every load
 * (FRT_CHECK_PLAN). */
static size_t inplace_steps(ob_buf mb, const int64_t *xd) {
    frt_model *m = load(&mb, 1, 1);
    frt_runtime *rt = NULL;
    frt_plan_stats ps = {0};
    size_t nb = (size_t)numel(xd, 4) * sizeof(float);
    float *x = calloc(1, nb);
    frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 4, .data = x, .nbytes = nb};
    for (int i = 0; i < 4; i++) in.shape[i] = xd[i];
    const char *names[] = {"X"};
    if (m) CHECK_OK(frt_runtime_create(m, &rt));
    if (rt) CHECK_OK(frt_runtime_reshape(rt, names, &in, 1));
    if (rt) CHECK_OK(frt_runtime_plan_stats(rt, &ps));
    frt_runtime_free(rt);
    frt_model_free(m);
    free(x);
    return ps.num_inplace;
}

static void test_sum_inplace(int64_t batch) {
    for (int kind = 0; kind < 3; kind++) {
        static const char *const what[] = {"sum_inplace dies", "sum_inplace lives",
                                           "sum_inplace self"};
        ob_buf g = {0};
        int64_t xd[4] = {batch, 16, 12, 11};
        conv_spec c0 = {16, 32, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
        conv_spec c3 = {3, 3, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 1};
        c3.C = 32, c3.M = 32;
        conv_spec c1x1 = {32, 32, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 1};
        add_conv(&g, "c0", "X", "a0", &c0);
        add_conv(&g, "c1", "a0", "a1", &c3);
        add_conv(&g, "c2", kind == 2 ? "a0" : "a1", "a2", &c3);
        add_op(&g, "Add", "add", "a2", "a0", "s2");
        add_op(&g, "Relu", "r2", "s2", NULL, "t2");
        add_conv(&g, "c3", "t2", "y", &c1x1);
        if (kind == 1) add_op(&g, "Mul", "mul", "y", "a0", "y2");
        const char *outs1[] = {"y", NULL}, *outs2[] = {"y", "y2", NULL};
        const char *const *outs = kind == 1 ? outs2 : outs1;
        io(&g, xd, 4, outs);
        setenv("FRT_WINO", "0", 1);
        setenv("FRT_DNNL_OWN_PW", "0", 1);
        ob_buf mb = ob_model(&g);
        /* in-place steps with the residual as a binary post-op (oneDNN's Winograd off) and as a
           sum post-op: the difference is the FusedConv's own */
        setenv("FRT_DNNL_WINO", "0", 1);
        size_t n_bin = g_on ? inplace_steps(mb, xd) : 0;
        setenv("FRT_DNNL_SUM_Z", "1", 1);
        size_t n_sum = g_on ? inplace_steps(mb, xd) : 0;
        unsetenv("FRT_DNNL_WINO");
        result r;
        compare(what[kind], mb, xd, 4, outs, &r);
        unsetenv("FRT_DNNL_SUM_Z");
        unsetenv("FRT_WINO");
        unsetenv("FRT_DNNL_OWN_PW");
        if (!g_on) continue;
        size_t n = n_sum - n_bin;
        CHECK_MSG(n_sum >= n_bin && n == (kind == 0 ? 1u : 0u),
                  "%s: %zu steps in place with a sum post-op, %zu with a binary one", what[kind],
                  n_sum, n_bin);
    }
}

int main(void) {
    setenv("FRT_CHECK_PLAN", "1", 1);
    g_on = frt_cpu_tier() >= FRT_ISA_AVX2;
    test_reduce_mean(1);
    test_reduce_mean(2);
    test_chain(1);
    test_chain(2);
    test_blocks();
    test_conv1d();
    test_conv3d();
    test_cnn_ops();
    test_se_gates();
    test_se_inplace();
    test_se_narrow();
    test_bn_act();
    /* oneDNN's batch normalization on the AVX2 tier too (the own loops are the tier's default) */
    setenv("FRT_DNNL_OWN_BN", "0", 1);
    test_bn_act();
    unsetenv("FRT_DNNL_OWN_BN");
    test_shapes();
    test_huge_images();
    test_relay(1);
    test_relay(2);
    test_dilated_ref(1);
    test_dilated_ref(2);
    test_wino(1);
    test_wino(2);
    test_wino_many_tiles();
    test_sum_inplace(1);
    test_sum_inplace(2);
    test_taps(1, 0);
    test_taps(2, 0);
    test_taps(1, 1);
    /* the provider's own depthwise kernel (dwconv.c) on every depthwise shape it covers (c3 of
       the chain: stride 2, asymmetric pads, 20 channels; c2 of cnn_ops: SiLU), at one thread */
    setenv("FRT_DNNL_OWN_DW", "1", 1);
    test_chain(1);
    test_chain(2);
    test_cnn_ops();
    test_shapes();
    unsetenv("FRT_DNNL_OWN_DW");
    /* pooling: the tier's default (the own loops split over channel blocks at 2 and 3 threads
       where the cost model says so), then never split (FRT_DNNL_POOL_SPLIT=0), then oneDNN's
       pooling (FRT_DNNL_OWN_POOL=0), then the own loops for every pool (FRT_DNNL_OWN_POOL=1) */
    test_pools(1);
    test_pools(2);
    test_pool_split();
    test_small_split();
    test_small_map_pw();
    test_elt_split();
    setenv("FRT_DNNL_POOL_SPLIT", "0", 1);
    test_chain(2);
    test_pools(2);
    unsetenv("FRT_DNNL_POOL_SPLIT");
    setenv("FRT_DNNL_OWN_POOL", "0", 1);
    test_pools(1);
    setenv("FRT_DNNL_OWN_POOL", "1", 1);
    test_pools(2);
    unsetenv("FRT_DNNL_OWN_POOL");
    /* the own pointwise loop (pwconv.c); then oneDNN's 1x1 kernels and their channel split where
       it is the tier's default, and the own loop on every 1x1 shape it covers */
    test_pw(1);
    test_pw(2);
    setenv("FRT_DNNL_OWN_PW", "0", 1);
    test_chain(1);
    test_chain(2);
    setenv("FRT_DNNL_OWN_PW", "1", 1);
    test_chain(1);
    test_chain(2);
    test_cnn_ops();
    test_se_gates();
    unsetenv("FRT_DNNL_OWN_PW");
    /* the own grouped loop (gconv.c): the tier's default, then oneDNN's grouped kernels, then the
       own loop on any tier with 8-channel blocks */
    test_gconv(1);
    test_gconv(2);
    setenv("FRT_DNNL_OWN_GC", "0", 1);
    test_gconv(1);
    test_relay(1);
    setenv("FRT_DNNL_OWN_GC", "1", 1);
    test_gconv(1);
    unsetenv("FRT_DNNL_OWN_GC");
    TEST_MAIN_END();
}

#else

int main(void) {
    (void)t_failures, (void)t_checks;
    printf("SKIP: built without the oneDNN provider (FRT_USE_DNNL=OFF)\n");
    return T_SKIP_CODE;
}

#endif
