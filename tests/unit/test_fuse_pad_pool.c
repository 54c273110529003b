/* Zero Pad folded into the AveragePool that reads it (src/passes/fuse_pool.c,
 * frt_pass_pad_into_avgpool): graphs X -> Conv 3x3 -> Pad -> AveragePool -> Conv 1x1 -> Z (the
 * branch_pool of torchvision's Inception v3, whose avg_pool2d(padding=1) exports as Pad +
 * AveragePool), loaded with and without fusion (frt_options.fuse) at 1 and 2 intra-op threads;
 * the fused program must have no Pad step exactly when the pattern applies, and its output must
 * match the unfused run. Negative cases: a pad value of 1, pads on the channel dim, the Pad's
 * output also a graph output, a pool with pads of its own, ceil_mode 1. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_build.h"
#include "runtime/model.h"
#include "test_util.h"

typedef struct pcase {
    const char *name;
    int64_t C, M, H, W;  /* input channels, channels of the padded image, image size */
    int64_t pt, pl, pb, pr; /* the Pad's spatial pads (top, left, bottom, right) */
    int64_t pc;          /* pads on the channel dim (begin and end) */
    int64_t k, s;        /* pool kernel k x k, stride s */
    int64_t ppad;        /* the pool's own pads */
    int64_t ceil;        /* the pool's ceil_mode */
    int value_one;       /* pad with 1.0 instead of 0 (the value input) */
    int pad_out;         /* the Pad's output is also a graph output */
    int expect_fused;
} pcase;

static ob_buf build(const pcase *t, const float *w1, const float *w2) {
    ob_buf g = {0};
    int64_t xd[4] = {1, t->C, t->H, t->W};
    ob_buf vi = ob_vinfo("X", 1, 4, xd);
    ob_msg(&g, OB_INPUT, &vi);
    int64_t w1d[4] = {t->M, t->C, 3, 3}, w2d[4] = {16, t->M + 2 * t->pc, 1, 1};
    ob_buf w1t = ob_tensor_f32("W1", w1d, 4, w1), w2t = ob_tensor_f32("W2", w2d, 4, w2);
    ob_msg(&g, OB_INIT, &w1t);
    ob_msg(&g, OB_INIT, &w2t);
    int64_t pads[8] = {0, t->pc, t->pt, t->pl, 0, t->pc, t->pb, t->pr};
    ob_buf pt = ob_tensor_i64("P", 8, pads);
    ob_msg(&g, OB_INIT, &pt);
    float one = 1.f;
    ob_buf vt = ob_tensor_f32("V", NULL, 0, &one);
    ob_msg(&g, OB_INIT, &vt);
    const char *c1i[] = {"X", "W1", NULL}, *c1o[] = {"Y", NULL};
    ob_buf c1 = ob_node("Conv", NULL, "conv1", c1i, c1o);
    int64_t cp[4] = {1, 1, 1, 1};
    ob_attr_ints(&c1, "pads", cp, 4);
    ob_msg(&g, OB_NODE, &c1);
    const char *pi[] = {"Y", "P", t->value_one ? "V" : NULL, NULL}, *po[] = {"YP", NULL};
    ob_buf p = ob_node("Pad", NULL, "pad", pi, po);
    ob_msg(&g, OB_NODE, &p);
    const char *ai[] = {"YP", NULL}, *ao[] = {"Q", NULL};
    ob_buf ap = ob_node("AveragePool", NULL, "pool", ai, ao);
    int64_t ks[2] = {t->k, t->k}, st[2] = {t->s, t->s};
    int64_t pp[4] = {t->ppad, t->ppad, t->ppad, t->ppad};
    ob_attr_ints(&ap, "kernel_shape", ks, 2);
    ob_attr_ints(&ap, "strides", st, 2);
    ob_attr_ints(&ap, "pads", pp, 4);
    if (t->ceil) ob_attr_int(&ap, "ceil_mode", 1);
    ob_msg(&g, OB_NODE, &ap);
    const char *c2i[] = {"Q", "W2", NULL}, *c2o[] = {"Z", NULL};
    ob_buf c2 = ob_node("Conv", NULL, "conv2", c2i, c2o);
    ob_msg(&g, OB_NODE, &c2);
    ob_buf zo = ob_vinfo("Z", 1, -1, NULL);
    ob_msg(&g, OB_OUTPUT, &zo);
    if (t->pad_out) {
        ob_buf yo = ob_vinfo("YP", 1, -1, NULL);
        ob_msg(&g, OB_OUTPUT, &yo);
    }
    return ob_model(&g);
}

/* Runs the model (fuse on/off, `threads` intra-op threads); returns output Z (malloc'd copy) and
 * its element count, and whether the program has a Pad step. */
static float *run(const ob_buf *mb, int fuse, int threads, const float *x, const pcase *t,
                  int *has_pad, int64_t *numel) {
    frt_options opt;
    frt_options_init(&opt);
    opt.fuse = fuse;
    opt.num_threads = threads;
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer(mb->p, mb->n, NULL, &opt, &m));
    if (!m) return NULL;
    const frt_program *pg = m->blocks[0].prog;
    *has_pad = 0;
    for (size_t i = 0; i < pg->n_steps; i++) {
        const char *op = pg->steps[i].ir ? pg->steps[i].ir->op_type : NULL;
        if (op && !strcmp(op, "Pad")) *has_pad = 1;
    }
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    float *res = NULL;
    if (rt) {
        frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 4, .shape = {1, t->C, t->H, t->W},
                         .data = (void *)x, .nbytes = (size_t)(t->C * t->H * t->W) * 4};
        const char *names[] = {"X"};
        frt_tensor out[2];
        size_t nout = t->pad_out ? 2 : 1;
        CHECK_OK(frt_run(rt, names, &in, 1, out, nout, FRT_OUTPUTS_ALLOC));
        if (out[0].data) {
            *numel = (int64_t)(out[0].nbytes / 4);
            res = malloc(out[0].nbytes);
            memcpy(res, out[0].data, out[0].nbytes);
            for (size_t i = 0; i < nout; i++) frt_tensor_release(&out[i]);
        }
        frt_runtime_free(rt);
    }
    frt_model_free(m);
    return res;
}

static void check(const pcase *t, int threads, unsigned seed) {
    size_t nx = (size_t)(t->C * t->H * t->W), nw1 = (size_t)(t->M * t->C * 9),
           nw2 = (size_t)(16 * (t->M + 2 * t->pc));
    float *x = malloc(nx * 4), *w1 = malloc(nw1 * 4), *w2 = malloc(nw2 * 4);
    t_fill(x, nx, seed);
    t_fill(w1, nw1, seed + 1);
    t_fill(w2, nw2, seed + 2);
    ob_buf mb = build(t, w1, w2);
    int pf = -1, pu = -1;
    int64_t nf = 0, nu = 0;
    float *yf = run(&mb, 1, threads, x, t, &pf, &nf), *yu = run(&mb, 0, threads, x, t, &pu, &nu);
    CHECK_MSG(pu == 1, "%s: the unfused program has its Pad", t->name);
    CHECK_MSG(pf == !t->expect_fused, "%s (%d threads): Pad step %d, expected %d", t->name,
              threads, pf, !t->expect_fused);
    CHECK_MSG(yf && yu && nf == nu && nf > 0, "%s: outputs", t->name);
    if (yf && yu && nf == nu)
        CHECK_MSG(t_close(yf, yu, (size_t)nf, 1e-6f, 1e-5f),
                  "%s (%d threads): fused vs unfused outputs", t->name, threads);
    free(yf);
    free(yu);
    free(mb.p);
    free(x);
    free(w1);
    free(w2);
}

int main(void) {
    static const pcase cases[] = {
        /* name                          C   M   H   W  pt pl pb pr pc k  s pp ceil v1 out fused */
        {"3x3/1 pads 1 (Inception v3)", 8, 32, 17, 17, 1, 1, 1, 1, 0, 3, 1, 0, 0, 0, 0, 1},
        {"3x3/1 pads 1, 8x8",           8, 24, 8, 8, 1, 1, 1, 1, 0, 3, 1, 0, 0, 0, 0, 1},
        {"3x3/2 uneven pads",           5, 19, 13, 11, 0, 1, 2, 1, 0, 3, 2, 0, 0, 0, 0, 1},
        {"2x2/2 zero pads",             8, 16, 12, 12, 0, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1},
        {"pad value 1",                 8, 16, 12, 12, 1, 1, 1, 1, 0, 3, 1, 0, 0, 1, 0, 0},
        {"channel pads",                8, 16, 12, 12, 1, 1, 1, 1, 1, 3, 1, 0, 0, 0, 0, 0},
        {"Pad output read twice",       8, 16, 12, 12, 1, 1, 1, 1, 0, 3, 1, 0, 0, 0, 1, 0},
        {"padded pool",                 8, 16, 12, 12, 1, 1, 1, 1, 0, 3, 1, 1, 0, 0, 0, 0},
        {"ceil_mode",                   8, 16, 12, 12, 1, 1, 1, 1, 0, 3, 2, 0, 1, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int th = 1; th <= 2; th++) check(&cases[i], th, 11u + (unsigned)i);
    TEST_MAIN_END();
}
