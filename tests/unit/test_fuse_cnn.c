/* CNN fusions (src/passes/fuse_cnn.c): small graphs Conv -> activation pattern, loaded with and
 * without fusion (frt_options.fuse); the fused model must have the expected number of steps and
 * match the unfused run. Depthwise 3x3 / 5x5 (channel-blocked kernels) and plain convs, at the
 * ISA tier of the run (FRT_ISA). Negative cases: patterns that must not be fused.
 * Squeeze-and-excitation's squeeze (frt_pass_fuse_conv_mean): Q = Mul(Z, GlobalAveragePool(Z)),
 * Z a depthwise / grouped conv's (activated) output: the pool becomes the conv's second output
 * (flatrt::ConvMean); with the oneDNN provider on the AVX2 tier the own depthwise loop (SiLU at
 * the store and as a pass after it, a padded channel block, images of at most 14x14 outputs
 * whole and larger ones block by block) and the own grouped loop take it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_build.h"
#include "runtime/model.h"
#include "test_util.h"

static void attr_float(ob_buf *node, const char *name, float v) {
    ob_buf a = {0};
    ob_str(&a, 1, name);
    ob_tag(&a, 2, 5);
    ob_raw(&a, &v, 4);
    ob_int(&a, 20, 1);
    ob_msg(node, 5, &a);
}

enum tail {
    T_SIG_MUL,       /* Mul(Y, Sigmoid(Y)) -> SILU */
    T_MUL_SIG,       /* Mul(Sigmoid(Y), Y) -> SILU */
    T_HSIG_MUL,      /* Mul(Y, HardSigmoid(Y; 1/6, 1/2)) -> HARDSWISH */
    T_HSIG,          /* HardSigmoid(Y; 0.2, 0.4) -> HARDSIGMOID */
    T_HSIG_MUL_OTHER,/* Mul(Y, HardSigmoid(Y; 0.2, 0.5)): not a HardSwish, HardSigmoid alone is
                        not fused either (Y has two readers) */
    T_SIG_EXTRA,     /* Mul(Y, Sigmoid(Y)) with Sigmoid(Y) also a graph output: not fused */
    T_SIG,           /* Sigmoid(Y) alone -> SIGMOID */
    T_SE_SILU,       /* Z = Mul(Y, Sigmoid(Y)); Q = Mul(Z, GlobalAveragePool(Z)) -> SILU, ConvMean */
    T_SE,            /* Q = Mul(Y, GlobalAveragePool(Y)) -> ConvMean where the conv is grouped */
};

typedef struct fcase {
    const char *name;
    int64_t C, M, group, k, s, H, W, pad;
    enum tail tail;
    size_t fused_steps, unfused_steps; /* expected steps of the fused model / with fuse = 0 */
} fcase;

static ob_buf build(const fcase *t, const float *w, const float *b) {
    ob_buf g = {0};
    int64_t xd[4] = {1, t->C, t->H, t->W};
    ob_buf vi = ob_vinfo("X", 1, 4, xd);
    ob_msg(&g, OB_INPUT, &vi);
    int64_t wd[4] = {t->M, t->C / t->group, t->k, t->k};
    ob_buf wt = ob_tensor_f32("W", wd, 4, w), bt = ob_tensor_f32("B", &t->M, 1, b);
    ob_msg(&g, OB_INIT, &wt);
    ob_msg(&g, OB_INIT, &bt);
    const char *ci[] = {"X", "W", "B", NULL}, *co[] = {"Y", NULL};
    ob_buf conv = ob_node("Conv", NULL, "conv", ci, co);
    int64_t pads[4] = {t->pad, t->pad, t->pad, t->pad}, st[2] = {t->s, t->s};
    ob_attr_ints(&conv, "pads", pads, 4);
    ob_attr_ints(&conv, "strides", st, 2);
    ob_attr_int(&conv, "group", t->group);
    ob_msg(&g, OB_NODE, &conv);
    const char *yi[] = {"Y", NULL}, *so[] = {"S", NULL}, *zo[] = {"Z", NULL};
    const char *m1[] = {"Y", "S", NULL}, *m2[] = {"S", "Y", NULL};
    const char *out = "Z";
    ob_buf f, m;
    switch (t->tail) {
    case T_SIG_MUL:
    case T_MUL_SIG:
    case T_SIG_EXTRA:
        f = ob_node("Sigmoid", NULL, "sig", yi, so);
        m = ob_node("Mul", NULL, "mul", t->tail == T_MUL_SIG ? m2 : m1, zo);
        ob_msg(&g, OB_NODE, &f);
        ob_msg(&g, OB_NODE, &m);
        break;
    case T_HSIG_MUL:
    case T_HSIG_MUL_OTHER:
        f = ob_node("HardSigmoid", NULL, "hsig", yi, so);
        attr_float(&f, "alpha", t->tail == T_HSIG_MUL ? 1.0f / 6.0f : 0.2f);
        attr_float(&f, "beta", 0.5f);
        m = ob_node("Mul", NULL, "mul", m2, zo);
        ob_msg(&g, OB_NODE, &f);
        ob_msg(&g, OB_NODE, &m);
        break;
    case T_HSIG:
        f = ob_node("HardSigmoid", NULL, "hsig", yi, so);
        attr_float(&f, "alpha", 0.2f);
        attr_float(&f, "beta", 0.4f);
        ob_msg(&g, OB_NODE, &f);
        out = "S";
        break;
    case T_SIG:
        f = ob_node("Sigmoid", NULL, "sig", yi, so);
        ob_msg(&g, OB_NODE, &f);
        out = "S";
        break;
    case T_SE_SILU:
    case T_SE: {
        const char *zi[] = {"Z", NULL}, *go[] = {"G", NULL}, *qi[] = {"Z", "G", NULL};
        const char *qo[] = {"Q", NULL};
        if (t->tail == T_SE_SILU) {
            f = ob_node("Sigmoid", NULL, "sig", yi, so);
            m = ob_node("Mul", NULL, "mul", m1, zo);
            ob_msg(&g, OB_NODE, &f);
            ob_msg(&g, OB_NODE, &m);
        } else {
            zi[0] = qi[0] = "Y";
        }
        ob_buf gap = ob_node("GlobalAveragePool", NULL, "gap", zi, go);
        ob_buf q = ob_node("Mul", NULL, "scale", qi, qo);
        ob_msg(&g, OB_NODE, &gap);
        ob_msg(&g, OB_NODE, &q);
        out = "Q";
        break;
    }
    }
    ob_buf zo_vi = ob_vinfo(out, 1, -1, NULL);
    ob_msg(&g, OB_OUTPUT, &zo_vi);
    if (t->tail == T_SIG_EXTRA) {
        ob_buf s2 = ob_vinfo("S", 1, -1, NULL);
        ob_msg(&g, OB_OUTPUT, &s2);
    }
    return ob_model(&g);
}

/* Runs the model (fuse on/off); returns the first output (malloc'd copy) and the step count. */
static float *run(const ob_buf *mb, int fuse, const float *x, const fcase *t, size_t *steps,
                  int64_t *numel) {
    frt_options opt;
    frt_options_init(&opt);
    opt.fuse = fuse;
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer(mb->p, mb->n, NULL, &opt, &m));
    if (!m) return NULL;
    /* compute steps: layout reorders a provider adds around its convs are not counted */
    const frt_program *pg = m->blocks[0].prog;
    *steps = 0;
    for (size_t i = 0; i < pg->n_steps; i++)
        if (!pg->steps[i].k.name || !strstr(pg->steps[i].k.name, "reorder")) (*steps)++;
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    float *res = NULL;
    if (rt) {
        frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 4, .shape = {1, t->C, t->H, t->W},
                         .data = (void *)x, .nbytes = (size_t)(t->C * t->H * t->W) * 4};
        const char *names[] = {"X"};
        frt_tensor out[2];
        int nout = t->tail == T_SIG_EXTRA ? 2 : 1;
        CHECK_OK(frt_run(rt, names, &in, 1, out, (size_t)nout, FRT_OUTPUTS_ALLOC));
        if (out[0].data) {
            *numel = (int64_t)(out[0].nbytes / 4);
            res = malloc(out[0].nbytes);
            memcpy(res, out[0].data, out[0].nbytes);
            for (int i = 0; i < nout; i++) frt_tensor_release(&out[i]);
        }
        frt_runtime_free(rt);
    }
    frt_model_free(m);
    return res;
}

static void check(const fcase *t, unsigned seed) {
    size_t nx = (size_t)(t->C * t->H * t->W), nw = (size_t)(t->M * (t->C / t->group) * t->k * t->k);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc((size_t)t->M * 4);
    t_fill(x, nx, seed);
    t_fill(w, nw, seed + 1);
    t_fill(b, (size_t)t->M, seed + 2);
    for (size_t i = 0; i < nx; i++) x[i] *= 4.0f; /* reach both saturated ends of the hard gates */
    ob_buf mb = build(t, w, b);
    size_t sf = 0, su = 0;
    int64_t nf = 0, nu = 0;
    float *yf = run(&mb, 1, x, t, &sf, &nf), *yu = run(&mb, 0, x, t, &su, &nu);
    CHECK_MSG(sf == t->fused_steps && su == t->unfused_steps, "%s: %zu fused steps, %zu unfused",
              t->name, sf, su);
    CHECK_MSG(yf && yu && nf == nu && nf > 0, "%s: outputs", t->name);
    if (yf && yu && nf == nu)
        CHECK_MSG(t_close(yf, yu, (size_t)nf, 1e-6f, 1e-5f), "%s: fused vs unfused outputs",
                  t->name);
    free(yf);
    free(yu);
    free(mb.p);
    free(x);
    free(w);
    free(b);
}

int main(void) {
    static const fcase cases[] = {
        {"dw5 s1 silu", 21, 21, 21, 5, 1, 14, 14, 2, T_SIG_MUL, 1, 3},
        {"dw5 s2 silu swapped", 18, 18, 18, 5, 2, 15, 16, 2, T_MUL_SIG, 1, 3},
        {"dw3 s1 hardswish", 17, 17, 17, 3, 1, 9, 30, 1, T_HSIG_MUL, 1, 3},
        {"dw3 s2 hardsigmoid", 40, 40, 40, 3, 2, 12, 12, 1, T_HSIG, 1, 2},
        {"1x1 hardswish", 24, 35, 1, 1, 1, 7, 7, 0, T_HSIG_MUL, 1, 3},
        {"3x3 silu", 5, 19, 1, 3, 1, 11, 9, 1, T_SIG_MUL, 1, 3},
        {"1x1 on 1x1 hardsigmoid", 40, 72, 1, 1, 1, 1, 1, 0, T_HSIG, 1, 2},
        {"hardsigmoid 0.2 + mul", 8, 8, 8, 3, 1, 6, 6, 1, T_HSIG_MUL_OTHER, 3, 3},
        {"sigmoid read twice", 8, 8, 8, 5, 1, 6, 6, 2, T_SIG_EXTRA, 3, 3},
        {"dw3 sigmoid", 8, 8, 8, 3, 1, 6, 6, 1, T_SIG, 1, 2},
        {"1x1 on 1x1 sigmoid", 48, 40, 1, 1, 1, 1, 1, 0, T_SIG, 1, 2},
        /* squeeze-and-excitation: conv + Mul fused, conv + Sigmoid + Mul + pool + Mul unfused */
        {"se dw3 s1 silu (at the store)", 20, 20, 20, 3, 1, 14, 14, 1, T_SE_SILU, 2, 5},
        {"se dw5 s2 silu (a pass)", 24, 24, 24, 5, 2, 15, 15, 2, T_SE_SILU, 2, 5},
        {"se dw3 s1 batch of blocks", 72, 72, 72, 3, 1, 9, 10, 1, T_SE_SILU, 2, 5},
        /* more than 14x14 outputs: the own depthwise loop one channel block at a time */
        {"se dw3 s1 silu block by block", 20, 20, 20, 3, 1, 21, 21, 1, T_SE_SILU, 2, 5},
        {"se dw5 s1 silu pass block by block", 24, 24, 24, 5, 1, 17, 24, 2, T_SE_SILU, 2, 5},
        {"se grouped 3x3 groups of 8", 32, 32, 4, 3, 1, 10, 10, 1, T_SE, 2, 3},
        {"se grouped 3x3 s2 groups of 16", 48, 48, 3, 3, 2, 13, 13, 1, T_SE, 2, 3},
        {"se plain conv: not fused", 8, 16, 1, 3, 1, 8, 8, 1, T_SE, 3, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(&cases[i], 7u + (unsigned)i);
    TEST_MAIN_END();
}
