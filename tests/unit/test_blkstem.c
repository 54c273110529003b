/* The stem convolution loops (src/ops/blkstem.h: 1..4 plain input channels -> nChw8c and
 * nChw16c) of every tier from portable up to the one this process runs, each block size (the
 * AVX2 loop writes blocks of 8, the AVX-512 one blocks of 16), against a double-precision naive
 * convolution over plain indices and against the portable twin: C = 1..4 input channels, M = 3,
 * 8, 16, 20, 24, 37, 64 output channels (padding lanes of the last block must be 0), 3x3, 5x5
 * and 7x7 kernels (the AVX2 loop) and 1x1, 2x2, 3x5 and 4x4 (the portable one), stride 1, 2
 * and 3, symmetric, zero and asymmetric pads (pads up to K - 1: outputs whose taps all lie in the
 * padding), images from 1x1 up to rows of several register tiles with odd sizes, each
 * activation, row ranges [r0, r1) starting and ending inside the image with NaN in the whole
 * output beforehand (every element of the rows must be written, nothing outside them). The SIMD
 * loop must give the portable twin's bits exactly, SiLU included (both are the same chain of
 * fused multiply-adds and the same activation operations). Geometries the SIMD loop does not
 * take must come back from frt_blkstem_get as the portable loop. */
#include "ops/blkstem.h"
#include "test_util.h"

static frt_isa tier_hi(void) { return FRT_HAVE_X86 ? frt_cpu_tier() : FRT_ISA_PORTABLE; }

static double ref_act(int act, double v) {
    switch (act) {
    case FRT_BLKSTEM_RELU: return v < 0 ? 0 : v;
    case FRT_BLKSTEM_CLIP: return v < -0.5 ? -0.5 : v > 1.5 ? 1.5 : v;
    case FRT_BLKSTEM_SILU: return v / (1.0 + exp(-v));
    case FRT_BLKSTEM_HARDSWISH: {
        double t = v / 6.0 + 0.5;
        return v * (t < 0 ? 0 : t > 1 ? 1 : t);
    }
    }
    return v;
}

static int g_cases;
static int64_t g_blk = 8; /* the block size of the cases run */

/* C -> M channels, H x W image, KH x KW kernel, stride S, pads pt, pl, pb, pr; output rows
   [r0, r1) (r1 < 0: all). */
static void run_case(frt_isa tier, int64_t C, int64_t M, int64_t H, int64_t W, int64_t KH,
                     int64_t KW, int64_t S, int64_t pt, int64_t pl, int64_t pb, int64_t pr,
                     int act, int64_t r0, int64_t r1) {
    const int64_t b = g_blk;
    int64_t OH = (H + pt + pb - KH) / S + 1, OW = (W + pl + pr - KW) / S + 1, mb = (M + b - 1) / b;
    if (H + pt + pb < KH || W + pl + pr < KW || OH < 1 || OW < 1) return;
    if (r1 < 0 || r1 > OH) r1 = OH;
    if (r0 > r1) r0 = r1;
    frt_blkstem_geom g = {b, C, M, H, W, OH, OW, KH, KW, S, pt, pl, act, -0.5f, 1.5f};
    frt_blkstem_fn fn = frt_blkstem_get(tier, &g);
    size_t nx = (size_t)(C * H * W), ny = (size_t)(mb * b * OH * OW);
    size_t nw = (size_t)(M * C * KH * KW), np = (size_t)(mb * b * C * KH * KW);
    float *x = malloc(nx * 4), *wt = malloc(nw * 4), *bt = malloc((size_t)M * 4);
    float *w = malloc(np * 4), *bias = malloc((size_t)mb * b * 4);
    float *y = malloc(ny * 4), *y0 = malloc(ny * 4);
    t_fill(x, nx, (unsigned)(C * 7 + H * 3 + W));
    t_fill(wt, nw, (unsigned)(M * 11 + KH + S));
    t_fill(bt, (size_t)M, (unsigned)(M + 3));
    for (size_t i = 0; i < nx; i++) x[i] *= 3.0f; /* reach the activations' bends */
    frt_blkstem_pack(wt, bt, M, C, KH, KW, b, w, bias);
    for (size_t i = 0; i < ny; i++) y[i] = y0[i] = NAN;
    fn(x, w, bias, y, &g, r0, r1);
    frt_blkstem_portable(x, w, bias, y0, &g, r0, r1);
    size_t bad = ny, badt = ny;
    double want = 0;
    for (int64_t m = 0; m < mb * b; m++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                size_t at = (size_t)((((m / b) * OH + oh) * OW + ow) * b + m % b);
                if (badt == ny && memcmp(&y[at], &y0[at], 4) != 0 &&
                    !(isnan(y[at]) && isnan(y0[at])))
                    badt = at;
                if (oh < r0 || oh >= r1) {
                    if (bad == ny && !isnan(y[at])) bad = at, want = NAN;
                    continue;
                }
                if (m >= M) {
                    if (bad == ny && !(y[at] == 0.0f)) bad = at, want = 0;
                    continue;
                }
                double r = bt[m];
                for (int64_t c = 0; c < C; c++)
                    for (int64_t i = 0; i < KH; i++)
                        for (int64_t j = 0; j < KW; j++) {
                            int64_t ih = oh * S - pt + i, iw = ow * S - pl + j;
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                            r += (double)wt[((m * C + c) * KH + i) * KW + j] *
                                 x[(c * H + ih) * W + iw];
                        }
                r = ref_act(act, r);
                double tol = 1e-5 * (1.0 + fabs(r)) * (1.0 + (double)(C * KH * KW) / 64.0);
                if (bad == ny && !(fabs(y[at] - r) <= tol)) bad = at, want = r;
            }
    CHECK_MSG(bad == ny && badt == ny,
              "blkstem tier %s block %lld C=%lld M=%lld %lldx%lld K=%lldx%lld S=%lld pads %lld,%lld,%lld,"
              "%lld act %d rows [%lld,%lld): element %zu is %g, want %g; element %zu differs "
              "from the portable loop (%g / %g)",
              frt_isa_name(tier), (long long)b, (long long)C, (long long)M, (long long)H, (long long)W,
              (long long)KH, (long long)KW, (long long)S, (long long)pt, (long long)pl,
              (long long)pb, (long long)pr, act, (long long)r0, (long long)r1, bad,
              bad < ny ? y[bad] : 0.0, want, badt, badt < ny ? y[badt] : 0.0,
              badt < ny ? y0[badt] : 0.0);
    g_cases++;
    free(x), free(wt), free(bt), free(w), free(bias), free(y), free(y0);
}

/* The SIMD variant that writes blocks of b at tier t: AVX2 for 8, AVX-512 for 16 */
static frt_isa want_variant(int t, int64_t b) {
    if (b == 8 && t >= FRT_ISA_AVX2) return FRT_ISA_AVX2;
    if (b == 16 && t >= FRT_ISA_AVX512) return FRT_ISA_AVX512;
    return FRT_ISA_PORTABLE;
}

static void test_loops(int64_t blk) {
    static const int64_t Ms[] = {64, 3, 8, 16, 20, 24, 37};
    static const int64_t sizes[][2] = {{1, 1}, {2, 3}, {5, 7}, {7, 7}, {9, 13},
                                       {17, 11}, {8, 30}, {6, 45}};
    g_blk = blk;
    int cases0 = g_cases;
    for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++) {
        const frt_blkstem_variant *v = frt_blkstem_variant_get((frt_isa)t, blk);
        frt_isa want = want_variant(t, blk);
        CHECK_MSG(v->isa == want, "tier %s block %lld: variant of tier %s", frt_isa_name(t),
                  (long long)blk, frt_isa_name(v->isa));
        int n = 0;
        for (int64_t K = 3; K <= 7; K += 2)
            for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
                for (int64_t S = 1; S <= 2; S++)
                    for (int pk = 0; pk < 4; pk++, n++) {
                        /* pads: symmetric K / 2, none, asymmetric (TF "same" at stride 2: more
                           at the end), all K - 1 on top / left */
                        int64_t h = K / 2, pads[4][4] = {{h, h, h, h},
                                                         {0, 0, 0, 0},
                                                         {h - 1, h - 1, h, h + 1},
                                                         {K - 1, K - 1, 0, 1}};
                        const int64_t *p = pads[pk];
                        int64_t C = 1 + n % 4, M = Ms[n % 7];
                        int act = n % 5;
                        run_case((frt_isa)t, C, M, sizes[si][0], sizes[si][1], K, K, S, p[0],
                                 p[1], p[2], p[3], act, 0, -1);
                        if (n % 3 == 0) /* rows inside the image only */
                            run_case((frt_isa)t, C, Ms[(n + 3) % 7], sizes[si][0], sizes[si][1],
                                     K, K, S, p[0], p[1], p[2], p[3], (act + 2) % 5, 1,
                                     sizes[si][0] / S);
                    }
        /* the first layers of the torchvision models (reduced to a few rows) */
        run_case((frt_isa)t, 3, 64, 224, 224, 7, 7, 2, 3, 3, 3, 3, FRT_BLKSTEM_RELU, 50, 53);
        run_case((frt_isa)t, 3, 32, 224, 224, 3, 3, 2, 1, 1, 1, 1, FRT_BLKSTEM_CLIP, 0, 3);
        run_case((frt_isa)t, 3, 16, 224, 224, 3, 3, 2, 1, 1, 1, 1, FRT_BLKSTEM_HARDSWISH, 109,
                 112);
        run_case((frt_isa)t, 3, 32, 224, 224, 3, 3, 2, 1, 1, 1, 1, FRT_BLKSTEM_SILU, 60, 62);
        run_case((frt_isa)t, 3, 64, 224, 224, 3, 3, 2, 0, 0, 0, 0, FRT_BLKSTEM_RELU, 108, 111);
        run_case((frt_isa)t, 3, 24, 224, 224, 3, 3, 2, 1, 1, 1, 1, FRT_BLKSTEM_RELU, 0, 2);
        /* geometries the SIMD loop leaves to the portable one (and that loop on them) */
        frt_blkstem_geom g1 = {blk, 3, 16, 9, 9, 9, 9, 1, 1, 1, 0, 0, 0, 0, 0};
        frt_blkstem_geom g35 = {blk, 3, 16, 9, 9, 9, 9, 3, 5, 1, 1, 2, 0, 0, 0};
        frt_blkstem_geom gs3 = {blk, 3, 16, 9, 9, 3, 3, 3, 3, 3, 1, 1, 0, 0, 0};
        frt_blkstem_geom g4 = {blk, 3, 16, 9, 9, 9, 9, 4, 4, 1, 2, 2, 0, 0, 0};
        CHECK(frt_blkstem_get((frt_isa)t, &g1) == frt_blkstem_portable);
        CHECK(frt_blkstem_get((frt_isa)t, &g35) == frt_blkstem_portable);
        CHECK(frt_blkstem_get((frt_isa)t, &gs3) == frt_blkstem_portable);
        CHECK(frt_blkstem_get((frt_isa)t, &g4) == frt_blkstem_portable);
        run_case((frt_isa)t, 3, 16, 9, 9, 1, 1, 1, 0, 0, 0, 0, FRT_BLKSTEM_RELU, 0, -1);
        run_case((frt_isa)t, 2, 20, 9, 10, 3, 5, 1, 1, 2, 1, 2, FRT_BLKSTEM_SILU, 0, -1);
        run_case((frt_isa)t, 4, 9, 11, 8, 3, 3, 3, 1, 1, 1, 1, FRT_BLKSTEM_CLIP, 0, -1);
        run_case((frt_isa)t, 1, 8, 8, 9, 4, 4, 2, 1, 2, 2, 1, FRT_BLKSTEM_HARDSWISH, 0, -1);
        run_case((frt_isa)t, 3, 12, 6, 7, 2, 2, 2, 0, 0, 0, 0, FRT_BLKSTEM_NONE, 0, -1);
        frt_blkstem_geom gs = {blk, 3, 16, 9, 9, 9, 9, 3, 3, 1, 1, 1, 0, 0, 0};
        CHECK(frt_blkstem_get((frt_isa)t, &gs) == v->run);
    }
    CHECK_MSG(g_cases - cases0 >= 200 * ((int)tier_hi() + 1), "only %d cases ran",
              g_cases - cases0);
}

/* NaN stays NaN through every activation; infinities and large values come out as the
   double-precision reference says (SiLU of -inf is NaN, of +inf +inf; HardSwish of -inf is
   -inf x 0 = NaN, as x max(0, min(1, x / 6 + 1/2)) in IEEE arithmetic). */
static void test_specials(int64_t b) {
    static const float in[] = {NAN, -INFINITY, INFINITY, -100.0f, 100.0f, -3.0f, 3.0f, 0.25f};
    for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++)
        for (int act = 0; act <= FRT_BLKSTEM_HARDSWISH; act++)
            for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
                /* 1 channel, 1x1 image, 3x3 kernel with pads 1: only the centre tap is 1, the
                   others 0: out = act(0 + fma(x, 1, 0 x 0 ...)) = act(x) */
                float x[1] = {in[i]}, wt[16 * 9] = {0}, w[16 * 9], bias[16], y[16];
                for (int m = 0; m < b; m++) wt[m * 9 + 4] = 1.0f;
                frt_blkstem_pack(wt, NULL, b, 1, 3, 3, b, w, bias);
                frt_blkstem_geom g = {b, 1, b, 1, 1, 1, 1, 3, 3, 1, 1, 1, act, -0.5f, 1.5f};
                frt_blkstem_get((frt_isa)t, &g)(x, w, bias, y, &g, 0, 1);
                double r = ref_act(act, (double)in[i]);
                for (int l = 0; l < b; l++) {
                    bool ok = isnan(r) ? isnan(y[l])
                                       : fabs(y[l] - r) <= 5e-6 * fabs(r) + 1e-30 ||
                                             (isinf(r) && y[l] == r);
                    CHECK_MSG(ok, "blkstem tier %s act %d of %g: lane %d is %g, want %g",
                              frt_isa_name(t), act, (double)in[i], l, (double)y[l], r);
                }
            }
}

int main(void) {
    test_loops(8);
    test_loops(16);
    test_specials(8);
    test_specials(16);
    TEST_MAIN_END();
}
