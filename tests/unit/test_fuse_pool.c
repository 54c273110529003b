/* AveragePool moved in front of a 1x1 Conv (src/passes/fuse_pool.c): small graphs Conv ->
 * [zero Pad ->] AveragePool, loaded with and without fusion (frt_options.fuse); the fused model
 * must run the pool first (when the pattern applies) and match the unfused run. Negative cases:
 * a 3x3 conv, a padded pool, a conv output read twice, a conv with an activation. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_build.h"
#include "runtime/model.h"
#include "test_util.h"

typedef struct pcase {
    const char *name;
    int64_t C, M, k, H, W, pk, ps, ppad; /* conv k x k (pad k/2), pool pk x pk stride ps, pads */
    int zero_pad;                         /* a Pad with zero pads between conv and pool */
    int relu;                             /* Relu after the conv (before the Pad / pool) */
    int conv_out;                         /* the conv's output is also a graph output */
    int expect_swap;
} pcase;

static ob_buf build(const pcase *t, const float *w, const float *b) {
    ob_buf g = {0};
    int64_t xd[4] = {1, t->C, t->H, t->W};
    ob_buf vi = ob_vinfo("X", 1, 4, xd);
    ob_msg(&g, OB_INPUT, &vi);
    int64_t wd[4] = {t->M, t->C, t->k, t->k};
    ob_buf wt = ob_tensor_f32("W", wd, 4, w), bt = ob_tensor_f32("B", &t->M, 1, b);
    ob_msg(&g, OB_INIT, &wt);
    ob_msg(&g, OB_INIT, &bt);
    int64_t zp[8] = {0};
    ob_buf pt = ob_tensor_i64("P0", 8, zp);
    ob_msg(&g, OB_INIT, &pt);
    const char *ci[] = {"X", "W", "B", NULL}, *co[] = {"Y", NULL};
    ob_buf conv = ob_node("Conv", NULL, "conv", ci, co);
    int64_t cp = t->k / 2, pads[4] = {cp, cp, cp, cp};
    ob_attr_ints(&conv, "pads", pads, 4);
    ob_msg(&g, OB_NODE, &conv);
    const char *cur = "Y";
    if (t->relu) {
        const char *ri[] = {"Y", NULL}, *ro[] = {"R", NULL};
        ob_buf r = ob_node("Relu", NULL, "relu", ri, ro);
        ob_msg(&g, OB_NODE, &r);
        cur = "R";
    }
    if (t->zero_pad) {
        const char *pi[] = {cur, "P0", NULL}, *po[] = {"YP", NULL};
        ob_buf p = ob_node("Pad", NULL, "pad", pi, po);
        ob_msg(&g, OB_NODE, &p);
        cur = "YP";
    }
    const char *ai[] = {cur, NULL}, *ao[] = {"Z", NULL};
    ob_buf ap = ob_node("AveragePool", NULL, "pool", ai, ao);
    int64_t ks[2] = {t->pk, t->pk}, st[2] = {t->ps, t->ps};
    int64_t pp[4] = {t->ppad, t->ppad, t->ppad, t->ppad};
    ob_attr_ints(&ap, "kernel_shape", ks, 2);
    ob_attr_ints(&ap, "strides", st, 2);
    ob_attr_ints(&ap, "pads", pp, 4);
    ob_msg(&g, OB_NODE, &ap);
    ob_buf zo = ob_vinfo("Z", 1, -1, NULL);
    ob_msg(&g, OB_OUTPUT, &zo);
    if (t->conv_out) {
        ob_buf yo = ob_vinfo("Y", 1, -1, NULL);
        ob_msg(&g, OB_OUTPUT, &yo);
    }
    return ob_model(&g);
}

/* Runs the model (fuse on/off); returns output Z (malloc'd copy), whether the first compute step
 * is the pool, and its element count. */
static float *run(const ob_buf *mb, int fuse, const float *x, const pcase *t, int *pool_first,
                  int64_t *numel) {
    frt_options opt;
    frt_options_init(&opt);
    opt.fuse = fuse;
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer(mb->p, mb->n, NULL, &opt, &m));
    if (!m) return NULL;
    const frt_program *pg = m->blocks[0].prog;
    *pool_first = -1;
    for (size_t i = 0; i < pg->n_steps && *pool_first < 0; i++) {
        const char *op = pg->steps[i].ir ? pg->steps[i].ir->op_type : NULL;
        if (op && !strcmp(op, "AveragePool")) *pool_first = 1;
        else if (op && strstr(op, "Conv")) *pool_first = 0;
    }
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    float *res = NULL;
    if (rt) {
        frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 4, .shape = {1, t->C, t->H, t->W},
                         .data = (void *)x, .nbytes = (size_t)(t->C * t->H * t->W) * 4};
        const char *names[] = {"X"};
        frt_tensor out[2];
        size_t nout = t->conv_out ? 2 : 1;
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

static void check(const pcase *t, unsigned seed) {
    size_t nx = (size_t)(t->C * t->H * t->W), nw = (size_t)(t->M * t->C * t->k * t->k);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc((size_t)t->M * 4);
    t_fill(x, nx, seed);
    t_fill(w, nw, seed + 1);
    t_fill(b, (size_t)t->M, seed + 2);
    ob_buf mb = build(t, w, b);
    int pf = -1, pu = -1;
    int64_t nf = 0, nu = 0;
    float *yf = run(&mb, 1, x, t, &pf, &nf), *yu = run(&mb, 0, x, t, &pu, &nu);
    CHECK_MSG(pu == 0, "%s: the unfused model runs the conv first", t->name);
    CHECK_MSG(pf == t->expect_swap, "%s: pool first %d, expected %d", t->name, pf,
              t->expect_swap);
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
    static const pcase cases[] = {
        /* name                        C   M  k   H   W pk ps pp zp relu out swap */
        {"1x1, zero Pad, 2x2/2",      40, 24, 1, 14, 14, 2, 2, 0, 1, 0, 0, 1},
        {"1x1, 2x2/2 odd image",      17, 35, 1, 15, 9, 2, 2, 0, 0, 0, 0, 1},
        {"1x1, 3x3/2 overlapping",    32, 16, 1, 13, 13, 3, 2, 0, 1, 0, 0, 1},
        {"1x1, 1x1/1 pool",           16, 16, 1, 6, 6, 1, 1, 0, 0, 0, 0, 0},
        {"3x3 conv",                  16, 32, 3, 12, 12, 2, 2, 0, 1, 0, 0, 0},
        {"padded pool",               16, 32, 1, 12, 12, 3, 2, 1, 0, 0, 0, 0},
        {"relu between",              16, 32, 1, 12, 12, 2, 2, 0, 1, 1, 0, 0},
        {"conv output read twice",    16, 32, 1, 12, 12, 2, 2, 0, 0, 0, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(&cases[i], 11u + (unsigned)i);
    TEST_MAIN_END();
}
