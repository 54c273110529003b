/* Conv: every kernel path against a naive 7-loop reference, plus error paths.
 *
 * Each case runs through the op harness several ways: default selection (the kernels of the ISA
 * tier, frt_cpu_tier(): run the binary under FRT_ISA=portable|avx2|avx512 to cover each tier),
 * dynamic-shape selection (unknown_dims), a non-constant W (the dynamic-weight kernel), a
 * non-constant B and two threads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_harness.h"
#include "ops/conv.h"
#include "test_util.h"

typedef struct conv_case {
    const char *name;
    int64_t N, C, H, W;    /* H == 0: 1-D conv over W */
    int64_t M, group;
    int64_t kh, kw;        /* kh ignored for 1-D */
    int64_t sh, sw, dh, dw;
    int64_t pads[4];       /* top, left, bottom, right (1-D: left, right in [1], [3]) */
    const char *auto_pad;  /* NULL: attribute absent */
    int bias;
    frt_act_kind act;
    float lo, hi;
    int kshape_attr;       /* also pass kernel_shape */
    const char *expect;    /* substring of the default kernel name, or NULL */
} conv_case;

/* Leading pad and output size of one axis, straight from the ONNX spec. */
static int64_t ref_axis(int64_t in, int64_t k, int64_t s, int64_t d, const char *ap, int64_t pb,
                        int64_t pe, int64_t *pad) {
    int64_t dk = (k - 1) * d + 1;
    if (ap && (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER"))) {
        int64_t out = (in + s - 1) / s;
        int64_t total = (out - 1) * s + dk - in;
        if (total < 0) total = 0;
        *pad = !strcmp(ap, "SAME_UPPER") ? total / 2 : (total + 1) / 2;
        return out;
    }
    if (ap && !strcmp(ap, "VALID")) pb = pe = 0;
    *pad = pb;
    int64_t num = in + pb + pe - dk;
    return num < 0 ? 0 : num / s + 1;
}

/* y[N][M][OH][OW] by the definition. */
static void ref_conv(const conv_case *t, const float *x, const float *w, const float *b,
                     const float *z, float *y, int64_t *OHp, int64_t *OWp) {
    int64_t H = t->H ? t->H : 1, kh = t->H ? t->kh : 1, sh = t->H ? t->sh : 1;
    int64_t dh = t->H ? t->dh : 1;
    int64_t pt, pl;
    int64_t OH = t->H ? ref_axis(H, kh, sh, dh, t->auto_pad, t->pads[0], t->pads[2], &pt) : 1;
    if (!t->H) pt = 0;
    int64_t OW = ref_axis(t->W, t->kw, t->sw, t->dw, t->auto_pad, t->pads[1], t->pads[3], &pl);
    int64_t Cg = t->C / t->group, Mg = t->M / t->group;
    for (int64_t n = 0; n < t->N; n++)
        for (int64_t m = 0; m < t->M; m++) {
            int64_t gr = m / Mg;
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double acc = b ? b[m] : 0.0;
                    for (int64_t ci = 0; ci < Cg; ci++)
                        for (int64_t ky = 0; ky < kh; ky++)
                            for (int64_t kx = 0; kx < t->kw; kx++) {
                                int64_t ih = oh * sh - pt + ky * dh;
                                int64_t iw = ow * t->sw - pl + kx * t->dw;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= t->W) continue;
                                acc += (double)x[((n * t->C + gr * Cg + ci) * H + ih) * t->W + iw] *
                                       w[((m * Cg + ci) * kh + ky) * t->kw + kx];
                            }
                    if (z) acc += z[((n * t->M + m) * OH + oh) * OW + ow];
                    float v = (float)acc;
                    if (t->act == FRT_ACT_RELU) v = v < 0 ? 0 : v;
                    if (t->act == FRT_ACT_CLIP) v = v < t->lo ? t->lo : v > t->hi ? t->hi : v;
                    if (t->act == FRT_ACT_SILU) v = (float)(acc / (1.0 + exp(-acc)));
                    if (t->act == FRT_ACT_HARDSWISH)
                        v = (float)(acc * fmin(1.0, fmax(0.0, acc / 6.0 + 0.5)));
                    if (t->act == FRT_ACT_SIGMOID) v = (float)(1.0 / (1.0 + exp(-acc)));
                    if (t->act == FRT_ACT_HARDSIGMOID) /* alpha in lo, beta in hi */
                        v = (float)fmin(1.0, fmax(0.0, t->lo * acc + t->hi));
                    y[((n * t->M + m) * OH + oh) * OW + ow] = v;
                }
        }
    *OHp = OH;
    *OWp = OW;
}

/* max |a-b| <= atol + rtol * max|b|, where any NaN in a (when b has none) is a mismatch.
 * (t_close in test_util.h lets a NaN be overwritten by a later finite difference.) */
static int close_nan(const float *a, const float *b, size_t n, float atol, float rtol) {
    float maxref = 0;
    for (size_t i = 0; i < n; i++) maxref = fmaxf(maxref, fabsf(b[i]));
    float tol = atol + rtol * maxref;
    for (size_t i = 0; i < n; i++) {
        float d = fabsf(a[i] - b[i]);
        if (!(d <= tol)) {
            fprintf(stderr, "  mismatch: |%g - %g| = %g at %zu (tolerance %g)\n", a[i], b[i], d,
                    i, tol);
            return 0;
        }
    }
    return 1;
}

/* Frees a float buffer after filling it with NaN: the harness mallocs each output, and a block
 * reused from an earlier run must not still hold that run's (correct) results. */
static void poison_free(void *p, size_t n) {
    float *f = p;
    for (size_t i = 0; f && i < n; i++) f[i] = NAN;
    free(p);
}

enum { RUN_DEFAULT, RUN_UNKNOWN, RUN_DYNW, RUN_DYNB, RUN_THREADS, N_RUNS };
static const char *const run_names[N_RUNS] = {"default", "unknown_dims", "dynamic_w", "dynamic_b",
                                              "2 threads"};

/* sum: run as FusedConv with a sum input Z (Y = act(conv + B + Z)). */
static void run_case(const conv_case *t, unsigned seed, int sum) {
    int one_d = t->H == 0;
    int64_t H = one_d ? 1 : t->H, kh = one_d ? 1 : t->kh;
    int64_t Cg = t->C / t->group;
    size_t nx = (size_t)(t->N * t->C * H * t->W), nw = (size_t)(t->M * Cg * kh * t->kw);
    float *x = malloc(nx * sizeof(float)), *w = malloc(nw * sizeof(float));
    float *b = malloc((size_t)t->M * sizeof(float));
    t_fill(x, nx, seed);
    t_fill(w, nw, seed + 1);
    t_fill(b, (size_t)t->M, seed + 2);
    int64_t OH, OW;
    /* reference output size first */
    {
        int64_t pt, pl;
        OH = one_d ? 1 : ref_axis(H, kh, t->sh, t->dh, t->auto_pad, t->pads[0], t->pads[2], &pt);
        OW = ref_axis(t->W, t->kw, t->sw, t->dw, t->auto_pad, t->pads[1], t->pads[3], &pl);
    }
    size_t ny = (size_t)(t->N * t->M * OH * OW);
    float *yr = malloc(ny * sizeof(float)), *z = malloc(ny * sizeof(float));
    t_fill(z, ny, seed + 3);
    ref_conv(t, x, w, t->bias ? b : NULL, sum ? z : NULL, yr, &OH, &OW);

    int64_t xd[4] = {t->N, t->C, H, t->W}, wd[4] = {t->M, Cg, kh, t->kw};
    if (one_d) {
        xd[2] = t->W;
        wd[2] = t->kw;
    }
    int rank = one_d ? 3 : 4;
    int64_t yd[4] = {t->N, t->M, one_d ? OW : OH, OW};
    frt_value in[4] = {frt_test_value(FRT_FLOAT32, rank, xd, x),
                       frt_test_value(FRT_FLOAT32, rank, wd, w),
                       frt_test_value(FRT_FLOAT32, 1, &t->M, b),
                       frt_test_value(FRT_FLOAT32, rank, yd, z)};
    int64_t strides[2] = {t->sh, t->sw}, dils[2] = {t->dh, t->dw};
    int64_t pads[4] = {t->pads[0], t->pads[1], t->pads[2], t->pads[3]};
    int64_t kshape[2] = {t->kh, t->kw};
    if (one_d) {
        strides[0] = t->sw;
        dils[0] = t->dw;
        pads[0] = t->pads[1];
        pads[1] = t->pads[3];
        kshape[0] = t->kw;
    }
    frt_onnx_attr attrs[7];
    size_t na = 0;
    attrs[na++] = frt_test_attr_int("group", t->group);
    attrs[na++] = frt_test_attr_ints("strides", strides, (size_t)(rank - 2));
    attrs[na++] = frt_test_attr_ints("dilations", dils, (size_t)(rank - 2));
    if (t->auto_pad) attrs[na++] = frt_test_attr_string("auto_pad", t->auto_pad);
    if (!t->auto_pad || !strcmp(t->auto_pad, "NOTSET"))
        attrs[na++] = frt_test_attr_ints("pads", pads, (size_t)(2 * (rank - 2)));
    if (t->kshape_attr)
        attrs[na++] = frt_test_attr_ints("kernel_shape", kshape, (size_t)(rank - 2));

    for (int r = 0; r < N_RUNS; r++) {
        frt_test_op op = {0};
        op.op_type = sum ? "FusedConv" : "Conv";
        op.attrs = attrs;
        op.n_attrs = na;
        op.inputs = in;
        op.n_in = sum ? 4 : t->bias ? 3 : 2;
        op.absent_mask = sum && !t->bias ? 4u : 0u;
        op.const_mask = r == RUN_DYNW ? 4u : r == RUN_DYNB ? 2u : 6u;
        op.unknown_dims = r == RUN_UNKNOWN;
        op.act.kind = t->act;
        op.act.lo = t->act == FRT_ACT_RELU ? 0.0f : t->lo;
        op.act.hi = t->act == FRT_ACT_RELU ? INFINITY : t->hi;
        op.n_out = 1;
        op.n_threads = r == RUN_THREADS ? 2 : 1;
        frt_value out;
        const char *kname = NULL;
        frt_status st = frt_test_run_op(&op, &out, &kname);
        CHECK_MSG(st == FRT_OK, "%s [%s]: %s", t->name, run_names[r], frt_last_error());
        if (st != FRT_OK) continue;
        CHECK_MSG(out.rank == rank && out.dims[0] == t->N && out.dims[1] == t->M &&
                      (one_d ? out.dims[2] == OW : out.dims[2] == OH && out.dims[3] == OW),
                  "%s [%s]: output shape", t->name, run_names[r]);
        CHECK_MSG(out.numel == (int64_t)ny, "%s [%s]: numel", t->name, run_names[r]);
        if (out.numel == (int64_t)ny)
            CHECK_MSG(close_nan(out.data, yr, ny, 1e-4f, 1e-5f), "%s [%s] kernel %s", t->name,
                      run_names[r], kname ? kname : "?");
        if (r == RUN_DEFAULT && t->expect)
            CHECK_MSG(kname && strstr(kname, t->expect), "%s: kernel %s, expected *%s*", t->name,
                      kname ? kname : "(none)", t->expect);
        if (frt_cpu_tier() == FRT_ISA_PORTABLE)
            CHECK_MSG(kname && !strstr(kname, "avx"), "%s: portable tier chose %s", t->name,
                      kname ? kname : "(none)");
        poison_free(out.data, (size_t)out.numel);
    }
    poison_free(x, nx);
    poison_free(w, nw);
    poison_free(b, (size_t)t->M);
    poison_free(yr, ny);
    poison_free(z, ny);
}

static void test_paths(void) {
    /* expected kernels of the tier (frt_cpu_tier() honours FRT_ISA) */
    frt_isa tier = frt_cpu_tier();
    const char *gemm = tier >= FRT_ISA_AVX512 ? "gemm_avx512"
                       : tier >= FRT_ISA_AVX2 ? "gemm_avx2"
                                              : "im2col_sgemm";
    const char *dw = tier >= FRT_ISA_AVX512 ? "depthwise_avx512"
                     : tier >= FRT_ISA_AVX2 ? "depthwise_avx2"
                                            : "conv_depthwise";
    printf("tier %s\n", frt_isa_name(tier));
    /* name, N, C, H, W, M, group, kh, kw, sh, sw, dh, dw, pads, auto_pad, bias, act, lo, hi,
     * kshape_attr, expect */
    /* a kernel whose outer taps read only padding is cut to its live taps at select */
    const char *trim1x1 = tier >= FRT_ISA_AVX2 ? "1x1_gemm" : "im2col_sgemm";
    const conv_case cases[] = {
        /* dilation beyond the map (deeplabv3's ASPP): 3x3 -> 1x1 (stride 1 and 2), 5 rows -> 3
           (the pads shrink by the cut taps times the dilation) */
        {"3x3 d12 on 9x8 -> 1x1", 1, 6, 9, 8, 5, 1, 3, 3, 1, 1, 12, 12, {12, 12, 12, 12}, NULL, 1,
         FRT_ACT_RELU, 0, 0, 0, trim1x1},
        {"3x3 s2 d10 on 7x7 -> 1x1", 1, 4, 7, 7, 3, 1, 3, 3, 2, 2, 10, 10, {10, 10, 10, 10}, NULL,
         0, FRT_ACT_NONE, 0, 0, 0, trim1x1},
        {"5x3 d4 rows cut", 1, 3, 6, 7, 4, 1, 5, 3, 1, 1, 4, 1, {8, 1, 8, 1}, NULL, 1,
         FRT_ACT_NONE, 0, 0, 0, NULL},
        /* pointwise (1x1 stride 1): plain GEMM, odd sizes, M and position tails */
        {"1x1", 1, 7, 5, 9, 13, 1, 1, 1, 1, 1, 1, 1, {0}, NULL, 1, FRT_ACT_NONE, 0, 0, 0, gemm},
        {"1x1 relu batch2", 2, 19, 17, 19, 11, 1, 1, 1, 1, 1, 1, 1, {0}, NULL, 1, FRT_ACT_RELU,
         0, 0, 1, gemm},
        {"1x1 stride2", 1, 5, 9, 11, 7, 1, 1, 1, 2, 2, 1, 1, {0}, NULL, 0, FRT_ACT_NONE, 0, 0, 0,
         gemm},
        {"1x1 stride3 padded", 1, 4, 10, 8, 6, 1, 1, 1, 3, 3, 1, 1, {1, 2, 0, 1}, NULL, 1,
         FRT_ACT_NONE, 0, 0, 0, gemm},
        /* stride 2 with a full 16-position chunk ending one column before the row end */
        {"1x1 s2 W31", 1, 3, 3, 31, 5, 1, 1, 1, 2, 2, 1, 1, {0}, NULL, 1, FRT_ACT_NONE, 0, 0, 0,
         gemm},
        {"3x3 s2 W33", 1, 2, 5, 33, 4, 1, 3, 3, 2, 2, 1, 1, {0}, NULL, 0, FRT_ACT_NONE, 0, 0, 0,
         gemm},
        /* K blocking (Kg > 256) and position blocking (> 256 positions), clip */
        {"3x3 big K", 1, 40, 19, 21, 14, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1, FRT_ACT_CLIP,
         -0.5f, 0.75f, 0, gemm},
        /* many position blocks (threads take whole blocks), two K blocks */
        {"1x1 many blocks", 1, 300, 40, 45, 13, 1, 1, 1, 1, 1, 1, 1, {0}, NULL, 1, FRT_ACT_RELU, 0,
         0, 0, gemm},
        /* big enough to run in parallel (frt_par_threads: 11.8 MFLOP) with two threads: few
         * position blocks, so the threads split the weight panels */
        {"3x3 8x8 K2304 parallel", 1, 256, 8, 8, 40, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_RELU, 0, 0, 0, gemm},
        /* position tails of 1, 2, 3 (one-column kernel) with several K blocks */
        {"3x3 7x7 tail1", 1, 40, 7, 7, 13, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_RELU, 0, 0, 0, gemm},
        {"1x1 tail2 big K", 1, 300, 5, 10, 7, 1, 1, 1, 1, 1, 1, 1, {0}, NULL, 1, FRT_ACT_CLIP,
         -0.2f, 0.3f, 0, gemm},
        {"1x1 tail3", 2, 9, 3, 9, 8, 1, 1, 1, 1, 1, 1, 1, {0}, NULL, 0, FRT_ACT_NONE, 0, 0, 0,
         gemm},
        {"1x1 big K", 1, 600, 3, 5, 7, 1, 1, 1, 1, 1, 1, 1, {0}, NULL, 1, FRT_ACT_RELU, 0, 0, 0,
         gemm},
        /* kernel sizes 3, 5, 7; strides 1..3; dilation 2; asymmetric pads */
        {"3x3 s1 p1", 1, 3, 13, 15, 8, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1, FRT_ACT_NONE, 0,
         0, 1, gemm},
        {"3x3 s2 asym", 2, 5, 14, 13, 9, 1, 3, 3, 2, 2, 1, 1, {0, 1, 2, 0}, NULL, 1, FRT_ACT_RELU,
         0, 0, 0, gemm},
        {"3x5 s3 d2", 1, 3, 17, 23, 5, 1, 3, 5, 3, 2, 2, 2, {2, 1, 3, 4}, NULL, 0, FRT_ACT_NONE,
         0, 0, 0, gemm},
        {"5x5 s1", 1, 6, 11, 12, 10, 1, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, NULL, 1, FRT_ACT_CLIP, 0,
         6, 0, gemm},
        {"7x7 s2 stem", 1, 3, 37, 41, 16, 1, 7, 7, 2, 2, 1, 1, {3, 3, 3, 3}, NULL, 1,
         FRT_ACT_RELU, 0, 0, 1, gemm},
        {"3x3 dil2 wide pad", 1, 4, 9, 10, 5, 1, 3, 3, 1, 1, 2, 2, {4, 3, 5, 2}, NULL, 1,
         FRT_ACT_NONE, 0, 0, 0, gemm},
        {"kernel wider than input+pads", 1, 2, 4, 3, 3, 1, 3, 5, 1, 1, 1, 1, {1, 2, 1, 2}, NULL, 0,
         FRT_ACT_NONE, 0, 0, 0, gemm},
        /* auto_pad */
        {"same_upper s2", 1, 3, 10, 11, 4, 1, 3, 3, 2, 2, 1, 1, {0}, "SAME_UPPER", 1,
         FRT_ACT_NONE, 0, 0, 0, gemm},
        {"same_lower s2", 1, 3, 10, 11, 4, 1, 4, 4, 2, 2, 1, 1, {0}, "SAME_LOWER", 1,
         FRT_ACT_NONE, 0, 0, 0, gemm},
        {"same_upper d2", 1, 3, 9, 8, 4, 1, 3, 2, 1, 1, 2, 3, {0}, "SAME_UPPER", 0, FRT_ACT_NONE,
         0, 0, 0, gemm},
        {"valid", 1, 3, 10, 11, 4, 1, 3, 3, 2, 3, 1, 1, {0}, "VALID", 1, FRT_ACT_NONE, 0, 0, 0,
         gemm},
        {"notset explicit", 1, 3, 10, 11, 4, 1, 3, 3, 1, 1, 1, 1, {1, 0, 0, 1}, "NOTSET", 1,
         FRT_ACT_NONE, 0, 0, 0, gemm},
        /* groups */
        {"group2", 1, 6, 9, 11, 10, 2, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1, FRT_ACT_RELU, 0, 0,
         0, gemm},
        {"group3 1x1 batch2", 2, 9, 5, 7, 15, 3, 1, 1, 1, 1, 1, 1, {0}, NULL, 1, FRT_ACT_NONE, 0,
         0, 0, gemm},
        {"group2 odd Mg", 1, 8, 7, 9, 14, 2, 3, 3, 2, 1, 1, 1, {1, 0, 1, 2}, NULL, 0,
         FRT_ACT_NONE, 0, 0, 0, gemm},
        /* groups of many channels: the packing prefetches input channels ahead within a group
         * (never into the next group's channels), also across K blocks and position blocks */
        {"group2 1x1 Cg300", 1, 600, 17, 19, 14, 2, 1, 1, 1, 1, 1, 1, {0}, NULL, 1, FRT_ACT_RELU,
         0, 0, 0, gemm},
        {"group2 3x3 Cg40", 1, 80, 18, 17, 10, 2, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_NONE, 0, 0, 0, gemm},
        /* single input channel, group 1: a GEMM, not depthwise */
        {"C=1", 1, 1, 8, 9, 5, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1, FRT_ACT_NONE, 0, 0, 0,
         gemm},
        /* depthwise */
        {"dw 3x3 s1", 1, 7, 13, 19, 7, 7, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1, FRT_ACT_CLIP, 0,
         6, 0, dw},
        {"dw 3x3 s2 batch2", 2, 5, 15, 21, 5, 5, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_RELU, 0, 0, 0, dw},
        {"dw 3x3 s2 even", 1, 4, 16, 32, 4, 4, 3, 3, 2, 2, 1, 1, {0, 0, 1, 1}, NULL, 0,
         FRT_ACT_NONE, 0, 0, 0, dw},
        {"dw 3x3 s1 narrow", 1, 3, 6, 5, 3, 3, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_NONE, 0, 0, 0, dw},
        {"dw 3x3 s2 7x7", 1, 3, 7, 7, 3, 3, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, NULL, 1, FRT_ACT_NONE,
         0, 0, 0, dw},
        {"dw 3x3 s1 no pad", 1, 3, 9, 26, 3, 3, 3, 3, 1, 1, 1, 1, {0}, NULL, 1, FRT_ACT_NONE, 0, 0,
         0, dw},
        {"dw 3x3 s1 asym", 1, 3, 9, 17, 3, 3, 3, 3, 1, 1, 1, 1, {2, 0, 0, 2}, NULL, 1,
         FRT_ACT_NONE, 0, 0, 0, dw},
        {"dw 3x3 s2 asym", 1, 3, 12, 35, 3, 3, 3, 3, 2, 2, 1, 1, {0, 2, 2, 0}, NULL, 1,
         FRT_ACT_NONE, 0, 0, 0, dw},
        {"dw 3x3 s1 wide row", 1, 2, 3, 1030, 2, 2, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_NONE, 0, 0, 0, dw},
        /* eight-channel blocks (small planes) plus leftover single planes */
        {"dw blocked 7x7 s1", 2, 19, 7, 7, 19, 19, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_CLIP, 0, 6, 0, dw},
        {"dw blocked 14x13 s2", 1, 16, 14, 13, 16, 16, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_RELU, 0, 0, 0, dw},
        {"dw blocked asym", 1, 9, 6, 11, 9, 9, 3, 3, 1, 1, 1, 1, {0, 2, 2, 0}, NULL, 0,
         FRT_ACT_NONE, 0, 0, 0, dw},
        {"dw blocked s2 no pad", 1, 8, 9, 12, 8, 8, 3, 3, 2, 2, 1, 1, {0}, NULL, 1, FRT_ACT_NONE,
         0, 0, 0, dw},
        {"dw blocked 1x1 out", 1, 8, 3, 3, 8, 8, 3, 3, 1, 1, 1, 1, {0}, NULL, 1, FRT_ACT_NONE, 0,
         0, 0, dw},
        {"dw blocked bands s1", 2, 8, 40, 27, 8, 8, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_RELU, 0, 0, 0, dw},
        {"dw blocked bands s2", 1, 9, 61, 27, 9, 9, 3, 3, 2, 2, 1, 1, {0, 1, 2, 1}, NULL, 1,
         FRT_ACT_NONE, 0, 0, 0, dw},
        {"dw parallel blocked", 1, 100, 200, 28, 100, 100, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_CLIP, 0, 6, 0, dw},
        {"dw parallel direct s2", 2, 18, 250, 250, 18, 18, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_NONE, 0, 0, 0, dw},
        {"dw large plane", 1, 8, 40, 45, 8, 8, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_NONE, 0, 0, 0, dw},
        {"dw large plane s2", 1, 8, 61, 64, 8, 8, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_NONE, 0, 0, 0, dw},
        {"dw multiplier2", 1, 5, 9, 10, 10, 5, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_RELU, 0, 0, 0, dw},
        {"dw multiplier2 s2", 2, 3, 11, 12, 6, 3, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, NULL, 0,
         FRT_ACT_NONE, 0, 0, 0, dw},
        {"dw 5x5 s2", 1, 4, 13, 14, 4, 4, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, NULL, 1, FRT_ACT_NONE, 0,
         0, 0, dw},
        /* channel-blocked path: 3x3 / 5x5, stride 1 / 2, channel tails, pads, bands, the
         * nonlinear epilogues */
        {"dw 5x5 s1 hardswish", 1, 19, 14, 14, 19, 19, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, NULL, 1,
         FRT_ACT_HARDSWISH, 0, 0, 0, dw},
        {"dw 5x5 s2 hardsigmoid", 1, 37, 28, 27, 37, 37, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, NULL, 1,
         FRT_ACT_HARDSIGMOID, 0.2f, 0.5f, 0, dw},
        {"dw 5x5 s1 7x7 silu", 2, 33, 7, 7, 33, 33, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, NULL, 1,
         FRT_ACT_SILU, 0, 0, 0, dw},
        {"dw 5x5 s2 asym", 1, 17, 15, 16, 17, 17, 5, 5, 2, 2, 1, 1, {0, 1, 2, 3}, NULL, 0,
         FRT_ACT_CLIP, -0.5f, 0.5f, 0, dw},
        {"dw 5x5 s1 no pad tiny", 1, 9, 6, 5, 9, 9, 5, 5, 1, 1, 1, 1, {0}, NULL, 1, FRT_ACT_NONE,
         0, 0, 0, dw},
        {"dw 5x5 s1 big pads", 1, 5, 4, 3, 5, 5, 5, 5, 1, 1, 1, 1, {4, 3, 4, 5}, NULL, 1,
         FRT_ACT_NONE, 0, 0, 0, dw},
        {"dw 3x3 s1 wide bands", 1, 24, 41, 113, 24, 24, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_RELU, 0, 0, 0, dw},
        {"dw 3x3 s2 wide", 1, 16, 57, 112, 16, 16, 3, 3, 2, 2, 1, 1, {0, 0, 1, 1}, NULL, 1,
         FRT_ACT_HARDSWISH, 0, 0, 0, dw},
        {"dw 5x5 s1 too wide", 1, 3, 7, 300, 3, 3, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, NULL, 1,
         FRT_ACT_SILU, 0, 0, 0, dw},
        {"dw 5x5 same_upper s2", 1, 20, 13, 11, 20, 20, 5, 5, 2, 2, 1, 1, {0}, "SAME_UPPER", 1,
         FRT_ACT_NONE, 0, 0, 0, dw},
        /* nonlinear epilogues on the GEMM paths */
        {"1x1 silu", 1, 24, 7, 9, 40, 1, 1, 1, 1, 1, 1, 1, {0}, NULL, 1, FRT_ACT_SILU, 0, 0, 0,
         gemm},
        {"3x3 hardswish", 1, 5, 9, 11, 21, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, 1,
         FRT_ACT_HARDSWISH, 0, 0, 0, gemm},
        {"1x1 hardsigmoid", 1, 12, 1, 1, 30, 1, 1, 1, 1, 1, 1, 1, {0}, NULL, 1,
         FRT_ACT_HARDSIGMOID, 1.0f / 6.0f, 0.5f, 0, gemm},
        /* 1x1 on a 1x1 input: the GEMV path (AVX-512), K blocks, channel tails, groups */
        {"1x1 on 1x1 big K", 2, 600, 1, 1, 37, 1, 1, 1, 1, 1, 1, 1, {0}, NULL, 1, FRT_ACT_RELU, 0,
         0, 0, gemm},
        {"1x1 on 1x1 group3", 1, 24, 1, 1, 21, 3, 1, 1, 1, 1, 1, 1, {0}, NULL, 0, FRT_ACT_SILU, 0,
         0, 0, gemm},
        {"1x1 on 1x1 sigmoid", 1, 40, 1, 1, 72, 1, 1, 1, 1, 1, 1, 1, {0}, NULL, 1, FRT_ACT_SIGMOID,
         0, 0, 0, gemm},
        {"dw 5x5 sigmoid", 1, 20, 9, 9, 20, 20, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, NULL, 1,
         FRT_ACT_SIGMOID, 0, 0, 0, dw},
        {"1x1 on 1x1 s2", 1, 16, 1, 1, 16, 1, 1, 1, 2, 2, 1, 1, {0}, NULL, 1, FRT_ACT_CLIP, -0.1f,
         0.1f, 0, gemm},
        {"dw 3x3 dil2", 1, 4, 11, 12, 4, 4, 3, 3, 1, 1, 2, 2, {2, 2, 2, 2}, NULL, 1, FRT_ACT_NONE,
         0, 0, 0, dw},
        {"dw 3x3 s3", 1, 4, 11, 13, 4, 4, 3, 3, 3, 3, 1, 1, {1, 0, 1, 2}, NULL, 1, FRT_ACT_NONE,
         0, 0, 0, dw},
        {"dw 3x3 s1x2", 1, 4, 11, 13, 4, 4, 3, 3, 1, 2, 1, 1, {1, 1, 1, 1}, NULL, 1, FRT_ACT_NONE,
         0, 0, 0, dw},
        {"dw same_lower", 1, 4, 10, 13, 4, 4, 3, 3, 2, 2, 1, 1, {0}, "SAME_LOWER", 1,
         FRT_ACT_NONE, 0, 0, 0, dw},
        {"dw 1x1", 1, 6, 5, 7, 6, 6, 1, 1, 1, 1, 1, 1, {0}, NULL, 1, FRT_ACT_NONE, 0, 0, 0, dw},
        /* 1-D */
        {"1d k3", 1, 4, 0, 29, 6, 1, 0, 3, 0, 1, 0, 1, {0, 1, 0, 1}, NULL, 1, FRT_ACT_NONE, 0, 0,
         1, gemm},
        {"1d k5 s2 d2 batch2", 2, 3, 0, 31, 5, 1, 0, 5, 0, 2, 0, 2, {0, 3, 0, 1}, NULL, 1,
         FRT_ACT_RELU, 0, 0, 0, gemm},
        {"1d k1", 1, 8, 0, 17, 3, 1, 0, 1, 0, 1, 0, 1, {0}, NULL, 0, FRT_ACT_NONE, 0, 0, 0, gemm},
        {"1d depthwise", 1, 4, 0, 23, 4, 4, 0, 3, 0, 1, 0, 1, {0, 1, 0, 1}, NULL, 1,
         FRT_ACT_NONE, 0, 0, 0, dw},
        {"1d group2 same_upper", 1, 4, 0, 20, 6, 2, 0, 4, 0, 3, 0, 1, {0}, "SAME_UPPER", 1,
         FRT_ACT_NONE, 0, 0, 0, gemm},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i], 100u + (unsigned)i, 0);

    /* FusedConv: the sum input is added before the activation, on every path and tail */
    static const char *const with_sum[] = {"1x1",           "1x1 relu batch2", "3x3 big K",
                                           "3x3 7x7 tail1", "1x1 tail2 big K", "1x1 many blocks",
                                           "group2 odd Mg", "3x3 s2 asym",     "dw blocked 7x7 s1",
                                           "dw 3x3 s1",     "dw 3x3 s2 batch2", "dw 5x5 s2",
                                           "1d k3",         "dw 5x5 s1 hardswish",
                                           "dw 5x5 s2 asym", "dw 5x5 s1 7x7 silu",
                                           "dw 3x3 s2 wide", "1x1 silu", "3x3 hardswish",
                                           "1x1 on 1x1 big K", "1x1 on 1x1 group3"};
    for (size_t k = 0; k < sizeof with_sum / sizeof with_sum[0]; k++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            if (!strcmp(cases[i].name, with_sum[k])) {
                conv_case c = cases[i];
                c.bias |= (int)(k & 1);
                run_case(&c, 500u + (unsigned)k, 1);
            }
}

/* ---- region split (conv.h frt_conv_split): dilated / padded 2-D convs with constant W ----
 * Each case: against the definition with the split forced (FRT_CONV_SPLIT=1), by default and with
 * it off (=0), at 1 and 2 threads (run_case's runs; the unknown-dims and dynamic-W runs take the
 * unsplit kernels); then the forced split's output against the unsplit kernel's. Each output sums
 * the same products of live taps in the same order from the bias (the unsplit kernel's dead taps
 * add w * 0, which leaves a finite sum unchanged), and the sum input and the activation are the
 * same elementwise operations after it, so the bits match (compared with ==: a zero's sign is not
 * compared) -- except at positions that either kernel runs through the AVX2 one-column tail
 * kernel (the last 1-3 positions of a GEMM whose position count is 1-3 mod 16), which sums K in
 * four interleaved partial sums: a region's GEMM has other tails than the whole output's. Cases
 * without such a tail (any GEMM of the split or the unsplit kernel) must match bit for bit. */

/* Bands of one axis with equal live-tap ranges (as conv.c's split): their count. */
static int split_bands(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pad, int64_t out,
                       int64_t *len) {
    int n = 0;
    int64_t plo = -1, phi = -1;
    for (int64_t o = 0; o < out; o++) {
        int64_t lo = 0, hi = k - 1;
        while (lo < k && o * s - pad + lo * d < 0) lo++;
        while (hi >= 0 && o * s - pad + hi * d >= in) hi--;
        if (n && lo == plo && hi == phi) {
            len[n - 1]++;
            continue;
        }
        len[n++] = 1;
        plo = lo, phi = hi;
    }
    return n;
}

static int col_tail(int64_t npos) { return npos % 16 >= 1 && npos % 16 <= 3; }
static int split_bit_cases; /* cases compared bit for bit */

static void split_bits(const conv_case *t, unsigned seed, int sum, int nth) {
    int64_t Cg = t->C / t->group;
    size_t nx = (size_t)(t->N * t->C * t->H * t->W), nw = (size_t)(t->M * Cg * t->kh * t->kw);
    int64_t pt, pl;
    int64_t OH = ref_axis(t->H, t->kh, t->sh, t->dh, t->auto_pad, t->pads[0], t->pads[2], &pt);
    int64_t OW = ref_axis(t->W, t->kw, t->sw, t->dw, t->auto_pad, t->pads[1], t->pads[3], &pl);
    size_t ny = (size_t)(t->N * t->M * OH * OW);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc((size_t)t->M * 4),
          *z = malloc(ny * 4);
    t_fill(x, nx, seed);
    t_fill(w, nw, seed + 1);
    t_fill(b, (size_t)t->M, seed + 2);
    t_fill(z, ny, seed + 3);
    int64_t xd[4] = {t->N, t->C, t->H, t->W}, wd[4] = {t->M, Cg, t->kh, t->kw};
    int64_t yd[4] = {t->N, t->M, OH, OW};
    frt_value in[4] = {frt_test_value(FRT_FLOAT32, 4, xd, x), frt_test_value(FRT_FLOAT32, 4, wd, w),
                       frt_test_value(FRT_FLOAT32, 1, &t->M, b),
                       frt_test_value(FRT_FLOAT32, 4, yd, z)};
    int64_t strides[2] = {t->sh, t->sw}, dils[2] = {t->dh, t->dw};
    int64_t pads[4] = {t->pads[0], t->pads[1], t->pads[2], t->pads[3]};
    frt_onnx_attr attrs[5];
    size_t na = 0;
    attrs[na++] = frt_test_attr_int("group", t->group);
    attrs[na++] = frt_test_attr_ints("strides", strides, 2);
    attrs[na++] = frt_test_attr_ints("dilations", dils, 2);
    if (t->auto_pad) attrs[na++] = frt_test_attr_string("auto_pad", t->auto_pad);
    else attrs[na++] = frt_test_attr_ints("pads", pads, 4);
    frt_value out[2];
    const char *kn[2] = {NULL, NULL};
    char names[2][96] = {"", ""};
    for (int r = 0; r < 2; r++) {
        setenv("FRT_CONV_SPLIT", r == 0 ? "1" : "0", 1);
        frt_test_op op = {0};
        op.op_type = sum ? "FusedConv" : "Conv";
        op.attrs = attrs;
        op.n_attrs = na;
        op.inputs = in;
        op.n_in = sum ? 4 : t->bias ? 3 : 2;
        op.absent_mask = sum && !t->bias ? 4u : 0u;
        op.const_mask = 6u;
        op.act.kind = t->act;
        op.act.lo = t->act == FRT_ACT_RELU ? 0.0f : t->lo;
        op.act.hi = t->act == FRT_ACT_RELU ? INFINITY : t->hi;
        op.n_out = 1;
        op.n_threads = nth;
        frt_status st = frt_test_run_op(&op, &out[r], &kn[r]);
        CHECK_MSG(st == FRT_OK, "%s split bits [%d]: %s", t->name, r, frt_last_error());
        if (st) out[r].data = NULL;
        snprintf(names[r], sizeof names[r], "%s", kn[r] ? kn[r] : "?");
        kn[r] = names[r];
    }
    unsetenv("FRT_CONV_SPLIT");
    if (frt_cpu_tier() == FRT_ISA_AVX2) {
        CHECK_MSG(kn[0] && strstr(kn[0], "_split"), "%s: forced split ran %s", t->name,
                  kn[0] ? kn[0] : "?");
        CHECK_MSG(kn[1] && !strstr(kn[1], "_split"), "%s: split off ran %s", t->name,
                  kn[1] ? kn[1] : "?");
    }
    /* tails: the unsplit GEMM's and every region's (the trim before the split is not modelled:
       cases with cut taps are marked by the caller) */
    int64_t rl[16], cl[16];
    int nr = split_bands(t->H, t->kh, t->sh, t->dh, pt, OH, rl);
    int nc = split_bands(t->W, t->kw, t->sw, t->dw, pl, OW, cl);
    int tails = col_tail(OH * OW);
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < nc; j++) tails |= col_tail(rl[i] * cl[j]);
    if (out[0].data && out[1].data && !tails) {
        const float *a = out[0].data, *c = out[1].data;
        size_t bad = 0;
        for (size_t i = 0; i < ny; i++) bad += !(a[i] == c[i]);
        split_bit_cases++;
        CHECK_MSG(bad == 0, "%s (%d threads, sum %d): %zu of %zu outputs differ from the unsplit "
                  "kernel's", t->name, nth, sum, bad, ny);
    }
    for (int r = 0; r < 2; r++) poison_free(out[r].data, out[r].data ? ny : 0);
    free(x), free(w), free(b), free(z);
}

static void test_split(void) {
    /* name, N, C, H, W, M, group, kh, kw, sh, sw, dh, dw, pads, auto_pad, bias, act, lo, hi,
     * kshape_attr, expect (the default path: split when the live taps are <= 0.6 of the work
     * and the regions' packs <= 4 times the weights) */
    /* the split runs on the AVX2 tier only (conv.c) */
    const char *split = frt_cpu_tier() == FRT_ISA_AVX2 ? "_split" : NULL;
    const conv_case cases[] = {
        /* deeplabv3's ASPP shape, smaller: d12 on 14x14, center tap only inside */
        {"split d12 14x14", 1, 24, 14, 14, 20, 1, 3, 3, 1, 1, 12, 12, {12, 12, 12, 12}, NULL, 1,
         FRT_ACT_RELU, 0, 0, 0, split},
        {"split d2 odd", 1, 5, 9, 11, 7, 1, 3, 3, 1, 1, 2, 2, {2, 2, 2, 2}, NULL, 1, FRT_ACT_NONE,
         0, 0, 0, NULL},
        {"split d3 s2 asym", 2, 6, 13, 10, 9, 1, 3, 3, 2, 2, 3, 3, {3, 1, 2, 4}, NULL, 0,
         FRT_ACT_CLIP, -0.3f, 0.4f, 0, NULL},
        {"split d4 28 wide", 1, 40, 12, 29, 13, 1, 3, 3, 1, 1, 4, 4, {4, 4, 4, 4}, NULL, 1,
         FRT_ACT_RELU, 0, 0, 0, NULL},
        /* 63 taps in its regions' packs against 15: over the default memory cap (4x) */
        {"split d5x7 5x3", 1, 4, 15, 17, 6, 1, 5, 3, 1, 2, 5, 7, {10, 7, 10, 7}, NULL, 1,
         FRT_ACT_HARDSWISH, 0, 0, 0, NULL},
        {"split d6 group2", 1, 8, 11, 9, 10, 2, 3, 3, 1, 1, 6, 6, {6, 6, 6, 6}, NULL, 1,
         FRT_ACT_NONE, 0, 0, 0, split},
        {"split d8 s2 group3", 1, 9, 17, 16, 12, 3, 3, 3, 2, 2, 8, 8, {8, 8, 8, 8}, NULL, 1,
         FRT_ACT_SILU, 0, 0, 0, split},
        {"split d10 s2 K blocks", 1, 70, 12, 13, 8, 1, 3, 3, 2, 1, 10, 10, {10, 10, 10, 10},
         NULL, 1, FRT_ACT_RELU, 0, 0, 0, split},
        {"split d12 big parallel", 1, 96, 14, 14, 64, 1, 3, 3, 1, 1, 12, 12, {12, 12, 12, 12},
         NULL, 1, FRT_ACT_NONE, 0, 0, 0, split},
        {"split d7 same_upper", 1, 5, 10, 12, 6, 1, 3, 3, 1, 1, 7, 7, {0}, "SAME_UPPER", 1,
         FRT_ACT_NONE, 0, 0, 0, split},
        {"split d9 one side", 1, 3, 8, 19, 5, 1, 3, 3, 1, 1, 9, 3, {0, 3, 18, 3}, NULL, 0,
         FRT_ACT_NONE, 0, 0, 0, NULL},
        {"split d11 batch3", 3, 7, 13, 12, 11, 1, 3, 3, 1, 1, 11, 11, {11, 11, 11, 11}, NULL, 1,
         FRT_ACT_CLIP, 0, 6, 0, split},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const conv_case *t = &cases[i];
        for (int mode = 0; mode < 3; mode++) { /* forced, default, off */
            if (mode != 1) setenv("FRT_CONV_SPLIT", mode == 0 ? "1" : "0", 1);
            conv_case c = *t;
            if (mode != 1) c.expect = NULL;
            run_case(&c, 900u + (unsigned)i, 0);
            run_case(&c, 950u + (unsigned)i, 1);
            unsetenv("FRT_CONV_SPLIT");
        }
        for (int nth = 1; nth <= 2; nth++)
            for (int sum = 0; sum < 2; sum++) split_bits(t, 980u + (unsigned)i, sum, nth);
    }
    printf("split: %d of %zu runs compared bit for bit (the others have a one-column tail)\n",
           split_bit_cases, 4 * sizeof cases / sizeof cases[0]);
    CHECK(split_bit_cases >= 16);
    if (frt_cpu_tier() != FRT_ISA_AVX2) printf("split: not on this tier (the runs above are unsplit)\n");
}

/* ---- 3-D (NCDHW): the vol2col + sgemm path against the definition ---- */

typedef struct conv3_case {
    const char *name;
    int64_t N, C, D, H, W, M, group;
    int64_t k[3], s[3], d[3];
    int64_t pads[6];       /* front, top, left, back, bottom, right */
    const char *auto_pad;  /* NULL: attribute absent */
    int bias, sum;         /* sum: FusedConv with a sum input Z */
    frt_act_kind act;      /* NONE, RELU or SILU */
} conv3_case;

static void run_conv3(const conv3_case *t, unsigned seed) {
    /* the tier's packed GEMM per depth slice, else (portable) vol2col + frt_sgemm */
    const char *expect = frt_cpu_tier() == FRT_ISA_AVX512 ? "conv_im2col_gemm_avx512_3d"
                         : frt_cpu_tier() == FRT_ISA_AVX2 ? "conv_im2col_gemm_avx2_3d"
                                                          : "conv_im2col_sgemm_3d";
    int64_t in[3] = {t->D, t->H, t->W}, out[3], pad[3];
    for (int i = 0; i < 3; i++)
        out[i] = ref_axis(in[i], t->k[i], t->s[i], t->d[i], t->auto_pad, t->pads[i],
                          t->pads[3 + i], &pad[i]);
    int64_t Cg = t->C / t->group, Mg = t->M / t->group, kv = t->k[0] * t->k[1] * t->k[2];
    int64_t vin = in[0] * in[1] * in[2], vout = out[0] * out[1] * out[2];
    size_t nx = (size_t)(t->N * t->C * vin), nw = (size_t)(t->M * Cg * kv);
    size_t ny = (size_t)(t->N * t->M * vout);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc((size_t)t->M * 4);
    float *z = malloc(ny * 4), *yr = malloc(ny * 4);
    t_fill(x, nx, seed);
    t_fill(w, nw, seed + 1);
    t_fill(b, (size_t)t->M, seed + 2);
    t_fill(z, ny, seed + 3);
    for (int64_t n = 0; n < t->N; n++)
        for (int64_t m = 0; m < t->M; m++)
            for (int64_t o = 0; o < vout; o++) {
                int64_t od = o / (out[1] * out[2]), oh = o / out[2] % out[1], ow = o % out[2];
                double acc = t->bias ? b[m] : 0.0;
                for (int64_t ci = 0; ci < Cg; ci++)
                    for (int64_t kk = 0; kk < kv; kk++) {
                        int64_t kz = kk / (t->k[1] * t->k[2]), ky = kk / t->k[2] % t->k[1];
                        int64_t kx = kk % t->k[2];
                        int64_t id = od * t->s[0] - pad[0] + kz * t->d[0];
                        int64_t ih = oh * t->s[1] - pad[1] + ky * t->d[1];
                        int64_t iw = ow * t->s[2] - pad[2] + kx * t->d[2];
                        if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 ||
                            iw >= in[2])
                            continue;
                        acc += (double)x[(n * t->C + m / Mg * Cg + ci) * vin +
                                         (id * in[1] + ih) * in[2] + iw] *
                               w[(m * Cg + ci) * kv + kk];
                    }
                size_t yi = (size_t)((n * t->M + m) * vout + o);
                if (t->sum) acc += z[yi];
                yr[yi] = t->act == FRT_ACT_RELU && acc < 0 ? 0.0f
                         : t->act == FRT_ACT_SILU      ? (float)(acc / (1.0 + exp(-acc)))
                                                       : (float)acc;
            }
    int64_t xd[5] = {t->N, t->C, t->D, t->H, t->W}, wd[5] = {t->M, Cg, t->k[0], t->k[1], t->k[2]};
    int64_t yd[5] = {t->N, t->M, out[0], out[1], out[2]};
    frt_value vals[4] = {frt_test_value(FRT_FLOAT32, 5, xd, x), frt_test_value(FRT_FLOAT32, 5, wd, w),
                         frt_test_value(FRT_FLOAT32, 1, &t->M, b),
                         frt_test_value(FRT_FLOAT32, 5, yd, z)};
    frt_onnx_attr attrs[5];
    size_t na = 0;
    attrs[na++] = frt_test_attr_int("group", t->group);
    attrs[na++] = frt_test_attr_ints("strides", t->s, 3);
    attrs[na++] = frt_test_attr_ints("dilations", t->d, 3);
    if (t->auto_pad) attrs[na++] = frt_test_attr_string("auto_pad", t->auto_pad);
    else attrs[na++] = frt_test_attr_ints("pads", t->pads, 6);
    for (int r = 0; r < 3; r++) { /* default, unknown dims at select, 2 threads */
        frt_test_op op = {0};
        op.op_type = t->sum ? "FusedConv" : "Conv";
        op.attrs = attrs;
        op.n_attrs = na;
        op.inputs = vals;
        op.n_in = t->sum ? 4 : t->bias ? 3 : 2;
        op.absent_mask = t->sum && !t->bias ? 4u : 0u;
        op.const_mask = 6u;
        op.unknown_dims = r == 1;
        op.act.kind = t->act;
        op.act.lo = 0.0f;
        op.act.hi = INFINITY;
        op.n_out = 1;
        op.n_threads = r == 2 ? 2 : 1;
        frt_value o;
        const char *kname = NULL;
        frt_status st = frt_test_run_op(&op, &o, &kname);
        CHECK_MSG(st == FRT_OK, "%s [run %d]: %s", t->name, r, frt_last_error());
        if (st != FRT_OK) continue;
        CHECK_MSG(o.rank == 5 && !memcmp(o.dims, yd, sizeof yd), "%s [run %d]: output shape",
                  t->name, r);
        if (o.numel == (int64_t)ny)
            CHECK_MSG(close_nan(o.data, yr, ny, 1e-4f, 1e-5f), "%s [run %d] kernel %s", t->name,
                      r, kname ? kname : "?");
        CHECK_MSG(kname && !strcmp(kname, expect), "%s: kernel %s, expected %s", t->name,
                  kname ? kname : "(none)", expect);
        poison_free(o.data, (size_t)o.numel);
    }
    poison_free(x, nx);
    poison_free(w, nw);
    poison_free(b, (size_t)t->M);
    poison_free(z, ny);
    poison_free(yr, ny);
}

/* r3d_18's shapes in small (3x3x3 / 1x3x3-style kernels, stride 1 and 2, residual + Relu), plus
 * groups, dilation, asymmetric pads and SAME_UPPER; tiles of several GEMM widths (the tile is
 * ~64K / Kg positions: the 40-channel case spans several tiles that cross depth planes). */
static void test_conv3d(void) {
    static const conv3_case cases[] = {
        {"stem", 1, 3, 4, 12, 10, 8, 1, {3, 7, 7}, {1, 2, 2}, {1, 1, 1}, {1, 3, 3, 1, 3, 3}, NULL,
         0, 0, FRT_ACT_RELU},
        {"block", 2, 8, 5, 6, 7, 8, 1, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, NULL,
         1, 1, FRT_ACT_RELU},
        {"down", 1, 8, 5, 9, 9, 16, 1, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, NULL,
         1, 0, FRT_ACT_NONE},
        {"shortcut_1x1x1", 1, 8, 4, 6, 6, 12, 1, {1, 1, 1}, {2, 2, 2}, {1, 1, 1}, {0}, NULL, 0, 0,
         FRT_ACT_NONE},
        {"grouped_dilated_asym", 1, 6, 6, 7, 8, 4, 2, {2, 3, 2}, {1, 2, 1}, {2, 1, 2},
         {0, 2, 1, 1, 0, 2}, NULL, 1, 0, FRT_ACT_RELU},
        {"same_upper", 1, 3, 5, 5, 6, 5, 1, {2, 3, 4}, {2, 1, 2}, {1, 1, 1}, {0}, "SAME_UPPER", 1,
         0, FRT_ACT_NONE},
        {"many_tiles", 1, 40, 6, 14, 13, 24, 1, {3, 3, 3}, {1, 1, 1}, {1, 1, 1},
         {1, 1, 1, 1, 1, 1}, NULL, 1, 1, FRT_ACT_RELU},
        /* the packed path's tails: Mg % 6 (rows 1 / 4+1 / 4) x plane positions % 16 (15, 3, 8),
           channels not a multiple of 8, odd planes */
        {"tail_r1_e16", 1, 5, 3, 7, 9, 13, 1, {3, 3, 3}, {1, 1, 1}, {1, 1, 1},
         {1, 1, 1, 1, 1, 1}, NULL, 1, 1, FRT_ACT_RELU},
        {"tail_r5_col", 1, 7, 4, 5, 7, 11, 1, {1, 3, 3}, {1, 1, 1}, {1, 1, 1},
         {0, 1, 1, 0, 1, 1}, NULL, 0, 1, FRT_ACT_NONE},
        {"tail_r4_e8", 1, 9, 3, 6, 4, 10, 1, {3, 1, 3}, {1, 1, 1}, {1, 1, 1},
         {1, 0, 1, 1, 0, 1}, NULL, 1, 0, FRT_ACT_RELU},
        /* output depth planes whose taps all read padding (bias, sum, activation only) */
        {"dead_depth", 1, 6, 2, 5, 6, 7, 1, {2, 3, 3}, {1, 1, 1}, {1, 1, 1},
         {3, 1, 1, 1, 1, 1}, NULL, 1, 1, FRT_ACT_SILU},
        {"dead_depth_relu", 1, 4, 3, 4, 4, 8, 1, {3, 3, 3}, {2, 1, 1}, {1, 1, 1},
         {4, 1, 1, 0, 1, 1}, NULL, 1, 0, FRT_ACT_RELU},
        /* one output plane of 25 positions, 40 channels, K over several blocks (96 x 9 per
           depth; only the middle depth live): at 2 threads the weight panels are split */
        {"deep_small", 1, 96, 1, 5, 5, 40, 1, {3, 3, 3}, {1, 1, 1}, {1, 1, 1},
         {1, 1, 1, 1, 1, 1}, NULL, 1, 1, FRT_ACT_RELU},
        /* batch, groups, depth dilation and stride, SiLU */
        {"batch2_group2_silu", 2, 8, 5, 6, 5, 6, 2, {2, 2, 2}, {2, 2, 1}, {2, 1, 1},
         {1, 0, 1, 0, 1, 0}, NULL, 1, 0, FRT_ACT_SILU},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_conv3(&cases[i], 900u + (unsigned)i);
}

/* Runs a Conv expecting failure; returns the status and checks that a message was set. */
static frt_status run_err(int rank_x, const int64_t *xd, int rank_w, const int64_t *wd,
                          const frt_onnx_attr *attrs, size_t na, int32_t wdtype, int n_in,
                          const int64_t *bd) {
    static float buf[4096];
    frt_value in[3] = {frt_test_value(FRT_FLOAT32, rank_x, xd, buf),
                       frt_test_value(wdtype, rank_w, wd, buf),
                       frt_test_value(FRT_FLOAT32, 1, bd ? bd : xd, buf)};
    frt_test_op op = {0};
    op.op_type = "Conv";
    op.attrs = attrs;
    op.n_attrs = na;
    op.inputs = in;
    op.n_in = n_in;
    op.const_mask = 6u;
    op.n_out = 1;
    frt_value out = {0};
    frt_status st = frt_test_run_op(&op, &out, NULL);
    if (st == FRT_OK) {
        free(out.data);
    } else {
        CHECK_MSG(strstr(frt_last_error(), "test_node") != NULL, "message names the node: %s",
                  frt_last_error());
    }
    return st;
}

static void test_errors(void) {
    int64_t x4[4] = {1, 4, 8, 8}, w4[4] = {6, 3, 3, 3}, w4ok[4] = {6, 4, 3, 3};
    frt_status st;
    /* channel mismatch */
    st = run_err(4, x4, 4, w4, NULL, 0, FRT_FLOAT32, 2, NULL);
    CHECK(st == FRT_ERR_SHAPE);
    CHECK(strstr(frt_last_error(), "channels") != NULL);
    /* group does not divide / mismatch */
    frt_onnx_attr g2 = frt_test_attr_int("group", 2);
    st = run_err(4, x4, 4, w4ok, &g2, 1, FRT_FLOAT32, 2, NULL);
    CHECK(st == FRT_ERR_SHAPE);
    int64_t w4m[4] = {5, 2, 3, 3};
    st = run_err(4, x4, 4, w4m, &g2, 1, FRT_FLOAT32, 2, NULL);
    CHECK(st == FRT_ERR_SHAPE);
    CHECK(strstr(frt_last_error(), "group") != NULL);
    /* W of rank 2, and W rank differing from X rank */
    int64_t w2[2] = {6, 4};
    st = run_err(4, x4, 2, w2, NULL, 0, FRT_FLOAT32, 2, NULL);
    CHECK(st == FRT_ERR_SHAPE);
    CHECK(strstr(frt_last_error(), "rank") != NULL);
    int64_t w3[3] = {6, 4, 3};
    st = run_err(4, x4, 3, w3, NULL, 0, FRT_FLOAT32, 2, NULL);
    CHECK(st == FRT_ERR_SHAPE);
    /* 4-D conv: shapes infer, select refuses; 3-D: only with constant weights */
    int64_t x6[6] = {1, 2, 3, 3, 3, 3}, w6[6] = {3, 2, 2, 2, 2, 2};
    st = run_err(6, x6, 6, w6, NULL, 0, FRT_FLOAT32, 2, NULL);
    CHECK(st == FRT_ERR_UNSUPPORTED);
    CHECK(strstr(frt_last_error(), "4-D") != NULL);
    {
        static float buf[4096];
        int64_t x5[5] = {1, 2, 4, 4, 4}, w5[5] = {3, 2, 2, 2, 2};
        frt_value in[2] = {frt_test_value(FRT_FLOAT32, 5, x5, buf),
                           frt_test_value(FRT_FLOAT32, 5, w5, buf)};
        frt_test_op op = {0};
        op.op_type = "Conv";
        op.inputs = in;
        op.n_in = 2;
        op.n_out = 1;
        frt_value out = {0};
        CHECK(frt_test_run_op(&op, &out, NULL) == FRT_ERR_UNSUPPORTED);
        CHECK(strstr(frt_last_error(), "constant weights") != NULL);
    }
    /* dtype */
    st = run_err(4, x4, 4, w4ok, NULL, 0, FRT_INT32, 2, NULL);
    CHECK(st == FRT_ERR_UNSUPPORTED);
    /* bad attributes */
    frt_onnx_attr ap = frt_test_attr_string("auto_pad", "SAME");
    CHECK(run_err(4, x4, 4, w4ok, &ap, 1, FRT_FLOAT32, 2, NULL) == FRT_ERR_MALFORMED);
    int64_t s3[3] = {1, 1, 1};
    frt_onnx_attr sa = frt_test_attr_ints("strides", s3, 3);
    CHECK(run_err(4, x4, 4, w4ok, &sa, 1, FRT_FLOAT32, 2, NULL) == FRT_ERR_MALFORMED);
    int64_t s0[2] = {1, 0};
    frt_onnx_attr sz = frt_test_attr_ints("strides", s0, 2);
    CHECK(run_err(4, x4, 4, w4ok, &sz, 1, FRT_FLOAT32, 2, NULL) == FRT_ERR_MALFORMED);
    int64_t p3[3] = {0, 0, 0};
    frt_onnx_attr pa = frt_test_attr_ints("pads", p3, 3);
    CHECK(run_err(4, x4, 4, w4ok, &pa, 1, FRT_FLOAT32, 2, NULL) == FRT_ERR_MALFORMED);
    frt_onnx_attr sw = frt_test_attr_int("strides", 2); /* INT instead of INTS */
    CHECK(run_err(4, x4, 4, w4ok, &sw, 1, FRT_FLOAT32, 2, NULL) == FRT_ERR_MALFORMED);
    CHECK(strstr(frt_last_error(), "strides") != NULL);
    frt_onnx_attr g0 = frt_test_attr_int("group", 0);
    CHECK(run_err(4, x4, 4, w4ok, &g0, 1, FRT_FLOAT32, 2, NULL) == FRT_ERR_MALFORMED);
    int64_t ks[2] = {5, 5};
    frt_onnx_attr ka = frt_test_attr_ints("kernel_shape", ks, 2);
    CHECK(run_err(4, x4, 4, w4ok, &ka, 1, FRT_FLOAT32, 2, NULL) == FRT_ERR_SHAPE);
    /* input smaller than the kernel */
    int64_t xs[4] = {1, 4, 2, 8};
    CHECK(run_err(4, xs, 4, w4ok, NULL, 0, FRT_FLOAT32, 2, NULL) == FRT_ERR_SHAPE);
    /* bias of the wrong length */
    int64_t bd[1] = {5};
    CHECK(run_err(4, x4, 4, w4ok, NULL, 0, FRT_FLOAT32, 3, bd) == FRT_ERR_SHAPE);
    /* a 4th input only for FusedConv, and it must have the output's shape */
    {
        static float buf[4096];
        int64_t zd_bad[4] = {1, 6, 5, 6}, zd_ok[4] = {1, 6, 6, 6}, bdim[1] = {6};
        frt_value in[4] = {frt_test_value(FRT_FLOAT32, 4, x4, buf),
                           frt_test_value(FRT_FLOAT32, 4, w4ok, buf),
                           frt_test_value(FRT_FLOAT32, 1, bdim, buf),
                           frt_test_value(FRT_FLOAT32, 4, zd_bad, buf)};
        frt_test_op op = {0};
        op.op_type = "Conv";
        op.inputs = in;
        op.n_in = 4;
        op.const_mask = 6u;
        op.n_out = 1;
        frt_value out = {0};
        CHECK(frt_test_run_op(&op, &out, NULL) == FRT_ERR_MALFORMED);
        op.op_type = "FusedConv";
        CHECK(frt_test_run_op(&op, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(strstr(frt_last_error(), "sum input") != NULL);
        in[3] = frt_test_value(FRT_FLOAT32, 4, zd_ok, buf);
        CHECK_OK(frt_test_run_op(&op, &out, NULL));
        free(out.data);
    }
    /* X of rank 2 */
    int64_t x2[2] = {1, 4};
    CHECK(run_err(2, x2, 4, w4ok, NULL, 0, FRT_FLOAT32, 2, NULL) == FRT_ERR_SHAPE);
}

/* Geometry helper against the spec formula, exhaustively on small sizes. */
static void test_out_dim(void) {
    static const char *const aps[4] = {NULL, "SAME_UPPER", "SAME_LOWER", "VALID"};
    for (int mode = 0; mode < 4; mode++)
        for (int64_t in = 1; in < 12; in++)
            for (int64_t k = 1; k < 5; k++)
                for (int64_t s = 1; s < 4; s++)
                    for (int64_t d = 1; d < 3; d++) {
                        int64_t pr, pi;
                        int64_t want = ref_axis(in, k, s, d, aps[mode], 1, 2, &pr);
                        int64_t got = frt_conv_out_dim(in, k, s, d, mode, 1, 2, &pi);
                        if (want < 0) want = 0;
                        CHECK(got == want || (want <= 0 && got <= 0));
                        if (want > 0) CHECK(pi == pr);
                    }
}

int main(void) {
    test_out_dim();
    test_paths();
    test_split();
    test_errors();
    test_conv3d();
    TEST_MAIN_END();
}
