/* Channel shuffle fused into flatrt::ChannelShuffle (src/passes/fuse_shuffle.c, src/ops/shuffle.c):
 * graphs X -> Conv 1x1 (c1 channels) and Conv 3x3 (c2 channels) -> Concat -> Reshape -> Transpose
 * -> Reshape -> channel Slices / Split -> Conv 1x1 each -> outputs (ShuffleNetV2's unit), loaded
 * with and without fusion (frt_options.fuse) at 1 and 2 intra-op threads, batch 1 and 2. The
 * fused program must have a ChannelShuffle step and no Transpose exactly when the pattern
 * applies, and its outputs must match the unfused run. Channel counts that are not multiples of 8
 * or 16 (ShuffleNet's 58 / 116), groups 2 to 4, both Reshape orders, spatial dims flattened, a
 * Split, the shuffled tensor also a graph output, no Concat; negative cases: another permutation,
 * a Reshape that is not the inverse. Run per ISA tier by ctest: the oneDNN provider's blocked
 * layout on AVX2 and up (the blocked gather), plain below (the plain kernel). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_build.h"
#include "runtime/model.h"
#include "test_util.h"

enum { M_SLICE, M_SPLIT, M_FULL, M_YOUT };
enum { R_AB, R_BA, R_FLAT }; /* Reshape [N, A, B, H, W], [N, B, A, H, W], [N, A, B, H*W] */

typedef struct scase {
    const char *name;
    int64_t C0, c1, c2, H, W; /* input channels, the two branches (c2 = 0: no Concat) */
    int64_t A;                /* the Reshape's dim 1 (groups) */
    int form;                 /* R_* */
    int mode;                 /* M_* */
    int64_t cut;              /* Slice / Split point (channels of the first part) */
    int bad_perm;             /* Transpose (0, 1, 2, 4, 3): not a shuffle */
    int bad_back;             /* second Reshape to [N, C, W, H] (H != W): not the inverse */
    int expect_fused;
} scase;

static int64_t g_N = 1; /* batch */

static void add_conv(ob_buf *g, const char *x, const char *w, const char *y, int64_t M,
                     int64_t C, int k, const float *wd) {
    int64_t wdims[4] = {M, C, k, k};
    ob_buf wt = ob_tensor_f32(w, wdims, 4, wd);
    ob_msg(g, OB_INIT, &wt);
    const char *ci[] = {x, w, NULL}, *co[] = {y, NULL};
    ob_buf c = ob_node("Conv", NULL, y, ci, co);
    if (k == 3) {
        int64_t p[4] = {1, 1, 1, 1};
        ob_attr_ints(&c, "pads", p, 4);
    }
    ob_msg(g, OB_NODE, &c);
}

static ob_buf build(const scase *t, const float *w) {
    ob_buf g = {0};
    int64_t C = t->c1 + t->c2, H = t->H, W = t->W, B = C / t->A;
    int64_t N = g_N, xd[4] = {N, t->C0, H, W};
    ob_buf vi = ob_vinfo("X", 1, 4, xd);
    ob_msg(&g, OB_INPUT, &vi);
    const float *wp = w;
    add_conv(&g, "X", "Wa", t->c2 ? "A" : "Z", t->c1, t->C0, 1, wp);
    wp += t->c1 * t->C0;
    if (t->c2) {
        add_conv(&g, "X", "Wb", "B", t->c2, t->C0, 3, wp);
        wp += t->c2 * t->C0 * 9;
        const char *ci[] = {"A", "B", NULL}, *co[] = {"Z", NULL};
        ob_buf c = ob_node("Concat", NULL, "cat", ci, co);
        ob_attr_int(&c, "axis", 1);
        ob_msg(&g, OB_NODE, &c);
    }
    int64_t s1[5] = {N, t->A, B, H, W}, s1b[5] = {N, B, t->A, H, W}, s1f[4] = {N, t->A, B, H * W};
    int64_t s2[4] = {N, C, H, W}, s2bad[4] = {N, C, W, H};
    ob_buf st1 = t->form == R_AB   ? ob_tensor_i64("S1", 5, s1)
                 : t->form == R_BA ? ob_tensor_i64("S1", 5, s1b)
                                   : ob_tensor_i64("S1", 4, s1f);
    ob_msg(&g, OB_INIT, &st1);
    ob_buf st2 = ob_tensor_i64("S2", 4, t->bad_back ? s2bad : s2);
    ob_msg(&g, OB_INIT, &st2);
    const char *r1i[] = {"Z", "S1", NULL}, *r1o[] = {"R", NULL};
    ob_buf r1 = ob_node("Reshape", NULL, "r1", r1i, r1o);
    ob_msg(&g, OB_NODE, &r1);
    const char *ti[] = {"R", NULL}, *to[] = {"T", NULL};
    ob_buf tr = ob_node("Transpose", NULL, "tr", ti, to);
    int64_t perm5[5] = {0, 2, 1, 3, 4}, perm4[4] = {0, 2, 1, 3}, bad[5] = {0, 1, 2, 4, 3};
    if (t->bad_perm) ob_attr_ints(&tr, "perm", bad, 5);
    else if (t->form == R_FLAT) ob_attr_ints(&tr, "perm", perm4, 4);
    else ob_attr_ints(&tr, "perm", perm5, 5);
    ob_msg(&g, OB_NODE, &tr);
    const char *r2i[] = {"T", "S2", NULL}, *r2o[] = {"Y", NULL};
    ob_buf r2 = ob_node("Reshape", NULL, "r2", r2i, r2o);
    ob_msg(&g, OB_NODE, &r2);
    int64_t cut = t->cut, big = INT64_MAX, one = 1, zero = 0;
    if (t->mode == M_FULL) {
        add_conv(&g, "Y", "W1", "O1", 8, C, 1, wp);
    } else {
        if (t->mode == M_SPLIT) {
            int64_t sp[2] = {cut, C - cut};
            ob_buf spt = ob_tensor_i64("SP", 2, sp);
            ob_msg(&g, OB_INIT, &spt);
            const char *si[] = {"Y", "SP", NULL}, *so[] = {"P1", "P2", NULL};
            ob_buf s = ob_node("Split", NULL, "split", si, so);
            ob_attr_int(&s, "axis", 1);
            ob_msg(&g, OB_NODE, &s);
        } else {
            ob_buf a = ob_tensor_i64("I0", 1, &zero), b = ob_tensor_i64("IC", 1, &cut),
                   e = ob_tensor_i64("IE", 1, &big), x = ob_tensor_i64("AX", 1, &one);
            ob_msg(&g, OB_INIT, &a);
            ob_msg(&g, OB_INIT, &b);
            ob_msg(&g, OB_INIT, &e);
            ob_msg(&g, OB_INIT, &x);
            const char *s1i[] = {"Y", "I0", "IC", "AX", NULL}, *s1o[] = {"P1", NULL};
            const char *s2i[] = {"Y", "IC", "IE", "AX", NULL}, *s2o[] = {"P2", NULL};
            ob_buf a1 = ob_node("Slice", NULL, "slice1", s1i, s1o);
            ob_msg(&g, OB_NODE, &a1);
            ob_buf a2 = ob_node("Slice", NULL, "slice2", s2i, s2o);
            ob_msg(&g, OB_NODE, &a2);
        }
        add_conv(&g, "P1", "W1", "O1", 8, cut, 1, wp);
        wp += 8 * cut;
        add_conv(&g, "P2", "W2", "O2", 8, C - cut, 1, wp);
    }
    ob_buf o1 = ob_vinfo("O1", 1, -1, NULL);
    ob_msg(&g, OB_OUTPUT, &o1);
    if (t->mode != M_FULL) {
        ob_buf o2 = ob_vinfo("O2", 1, -1, NULL);
        ob_msg(&g, OB_OUTPUT, &o2);
    }
    if (t->mode == M_YOUT) {
        ob_buf yo = ob_vinfo("Y", 1, -1, NULL);
        ob_msg(&g, OB_OUTPUT, &yo);
    }
    return ob_model(&g);
}

static int n_outputs(const scase *t) { return t->mode == M_FULL ? 1 : t->mode == M_YOUT ? 3 : 2; }

/* Runs the model; returns its outputs concatenated (malloc'd) and their element count, and
 * whether the program has a ChannelShuffle step and a Transpose step. */
static float *run(const ob_buf *mb, int fuse, int threads, const float *x, const scase *t,
                  int *has_shuffle, int *has_transpose, int64_t *numel) {
    frt_options opt;
    frt_options_init(&opt);
    opt.fuse = fuse;
    opt.num_threads = threads;
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer(mb->p, mb->n, NULL, &opt, &m));
    if (!m) return NULL;
    const frt_program *pg = m->blocks[0].prog;
    *has_shuffle = *has_transpose = 0;
    for (size_t i = 0; i < pg->n_steps; i++) {
        const char *op = pg->steps[i].ir ? pg->steps[i].ir->op_type : NULL;
        if (op && !strcmp(op, "ChannelShuffle")) *has_shuffle = 1;
        if (op && !strcmp(op, "Transpose")) *has_transpose = 1;
    }
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    float *res = NULL;
    if (rt) {
        frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 4, .shape = {g_N, t->C0, t->H, t->W},
                         .data = (void *)x, .nbytes = (size_t)(g_N * t->C0 * t->H * t->W) * 4};
        const char *names[] = {"X"};
        frt_tensor out[3];
        int no = n_outputs(t);
        CHECK_OK(frt_run(rt, names, &in, 1, out, (size_t)no, FRT_OUTPUTS_ALLOC));
        size_t total = 0;
        for (int i = 0; i < no; i++) total += out[i].data ? out[i].nbytes : 0;
        res = malloc(total ? total : 1);
        *numel = 0;
        for (int i = 0; i < no; i++) {
            if (!out[i].data) continue;
            memcpy(res + *numel, out[i].data, out[i].nbytes);
            *numel += (int64_t)(out[i].nbytes / 4);
            frt_tensor_release(&out[i]);
        }
        frt_runtime_free(rt);
    }
    frt_model_free(m);
    return res;
}

static void check(const scase *t, int threads, unsigned seed) {
    int64_t C = t->c1 + t->c2;
    size_t nx = (size_t)(g_N * t->C0 * t->H * t->W);
    size_t nw = (size_t)(t->c1 * t->C0 + t->c2 * t->C0 * 9 + 8 * C);
    float *x = malloc(nx * 4), *w = malloc(nw * 4);
    t_fill(x, nx, seed);
    t_fill(w, nw, seed + 1);
    ob_buf mb = build(t, w);
    int sf = -1, su = -1, tf = -1, tu = -1;
    int64_t nf = 0, nu = 0;
    float *yf = run(&mb, 1, threads, x, t, &sf, &tf, &nf);
    float *yu = run(&mb, 0, threads, x, t, &su, &tu, &nu);
    CHECK_MSG(su == 0 && tu == 1, "%s: the unfused program has its Transpose", t->name);
    CHECK_MSG(sf == t->expect_fused && tf == !t->expect_fused,
              "%s (%d threads): ChannelShuffle step %d, Transpose step %d, expected fused %d",
              t->name, threads, sf, tf, t->expect_fused);
    CHECK_MSG(yf && yu && nf == nu && nf > 0, "%s: outputs", t->name);
    if (yf && yu && nf == nu)
        CHECK_MSG(t_close(yf, yu, (size_t)nf, 1e-6f, 1e-5f),
                  "%s (%d threads): fused vs unfused outputs", t->name, threads);
    free(yf);
    free(yu);
    free(mb.p);
    free(x);
    free(w);
}

int main(void) {
    static const scase cases[] = {
        /* name                       C0  c1  c2   H   W  A  form    mode   cut bp bb fused */
        {"ShuffleNet unit 58+58",     24, 58, 58, 7, 9, 2, R_AB, M_SLICE, 58, 0, 0, 1},
        {"uneven split 10+30",        16, 12, 28, 6, 6, 2, R_AB, M_SLICE, 10, 0, 0, 1},
        {"group 4, 16c blocks",       16, 32, 32, 5, 4, 4, R_AB, M_SLICE, 40, 0, 0, 1},
        {"group 3",                   8, 9, 15, 4, 5, 3, R_AB, M_SLICE, 7, 0, 0, 1},
        {"Reshape [N, C/4, 4]",       8, 20, 16, 4, 4, 4, R_BA, M_SLICE, 18, 0, 0, 1},
        {"spatial flattened",         8, 20, 20, 6, 5, 2, R_FLAT, M_SLICE, 20, 0, 0, 1},
        {"Split",                     8, 29, 29, 7, 7, 2, R_AB, M_SPLIT, 29, 0, 0, 1},
        {"shuffle read whole",        8, 20, 12, 5, 5, 2, R_AB, M_FULL, 16, 0, 0, 1},
        {"shuffle also an output",    8, 20, 12, 5, 5, 2, R_AB, M_YOUT, 16, 0, 0, 1},
        {"no Concat",                 8, 36, 0, 5, 5, 2, R_AB, M_SLICE, 18, 0, 0, 1},
        {"other permutation",         8, 20, 20, 4, 4, 2, R_AB, M_SLICE, 20, 1, 0, 0},
        {"not the inverse Reshape",   8, 20, 20, 4, 5, 2, R_AB, M_SLICE, 20, 0, 1, 0},
    };
    for (g_N = 1; g_N <= 2; g_N++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            for (int th = 1; th <= 2; th++) check(&cases[i], th, 17u + (unsigned)i);
    TEST_MAIN_END();
}
