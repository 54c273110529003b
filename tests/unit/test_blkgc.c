/* The blocked grouped convolution loops (src/ops/blkgc.h) of every tier from portable up to the
 * one this process runs, against a double-precision reference over plain channel indices:
 * groups of 8, 16 and 24 channels (one to several groups) and of 4 and 2 (several per channel
 * block), stride 1 and 2, top/left pads 0 and
 * 1 with bottom/right pads 0 to 2 (the AVX2 loop's skipped edge columns and rows, and outputs
 * whose taps all lie in the padding), images from 1x1 up to rows of several register tiles
 * (widths 1..30, below, at and above its 12-output tiles), each activation, ranges of output
 * blocks starting and ending inside the image, and NaN in the whole output buffer beforehand
 * (every element of the range must be written, nothing outside it). The SIMD loop must give the
 * portable twin's bits exactly (both are the same chain of fused multiply-adds); geometries the
 * SIMD loop does not take (5x5, stride 3, left pad 2) must come back from frt_blkgc_get as the
 * portable loop. */
#include "ops/blkgc.h"
#include "test_util.h"

static frt_isa tier_hi(void) { return FRT_HAVE_X86 ? frt_cpu_tier() : FRT_ISA_PORTABLE; }

static double ref_act(int act, double v) {
    if (act == FRT_BLKGC_RELU) return v < 0 ? 0 : v;
    if (act == FRT_BLKGC_CLIP) return v < -0.5 ? -0.5 : v > 1.5 ? 1.5 : v;
    return v;
}

static int g_cases;

/* C channels in groups of G, H x W image, K x K kernel, stride S, pads pt, pl (top, left) and
   pb, pr; output blocks [m0, m1) (m1 < 0: all). */
static void run_case(frt_isa tier, int64_t C, int64_t G, int64_t H, int64_t W, int64_t K,
                     int64_t S, int64_t pt, int64_t pl, int64_t pb, int64_t pr, int act,
                     int64_t m0, int64_t m1) {
    int64_t OH = (H + pt + pb - K) / S + 1, OW = (W + pl + pr - K) / S + 1, cb = C / 8;
    if (OH < 1 || OW < 1) return;
    if (m1 < 0) m1 = cb;
    frt_blkgc_geom g = {C, G, H, W, OH, OW, K, S, pt, pl, act, -0.5f, 1.5f};
    frt_blkgc_fn fn = frt_blkgc_get(tier, &g);
    size_t nx = (size_t)(C * H * W), ny = (size_t)(C * OH * OW), nw = (size_t)(C * G * K * K);
    float *xp = malloc(nx * 4), *wt = malloc(nw * 4), *bt = malloc((size_t)C * 4);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *bias = malloc((size_t)C * 4);
    float *y = malloc(ny * 4), *y0 = malloc(ny * 4);
    t_fill(xp, nx, (unsigned)(C * 7 + H * 3 + W));
    t_fill(wt, nw, (unsigned)(G * 11 + K + S));
    t_fill(bt, (size_t)C, (unsigned)(C + 3));
    for (size_t i = 0; i < nx; i++) xp[i] *= 2.0f; /* reach the activations' bends */
    for (int64_t c = 0; c < C; c++)
        for (int64_t s = 0; s < H * W; s++) x[((c / 8) * H * W + s) * 8 + c % 8] = xp[c * H * W + s];
    frt_blkgc_pack(wt, bt, C, G, K, w, bias);
    for (size_t i = 0; i < ny; i++) y[i] = y0[i] = NAN;
    fn(x, w, bias, y, &g, m0, m1);
    frt_blkgc_portable(x, w, bias, y0, &g, m0, m1);
    size_t bad = ny, badt = ny;
    double want = 0;
    for (int64_t m = 0; m < C; m++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                size_t at = (size_t)((((m / 8) * OH + oh) * OW + ow) * 8 + m % 8);
                if (m / 8 < m0 || m / 8 >= m1) {
                    if (bad == ny && !isnan(y[at])) bad = at, want = NAN;
                    continue;
                }
                double r = bt[m];
                int64_t gi = m / G;
                for (int64_t c = 0; c < G; c++)
                    for (int64_t i = 0; i < K; i++)
                        for (int64_t j = 0; j < K; j++) {
                            int64_t ih = oh * S - pt + i, iw = ow * S - pl + j;
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                            r += (double)wt[((m * G + c) * K + i) * K + j] *
                                 xp[((gi * G + c) * H + ih) * W + iw];
                        }
                r = ref_act(act, r);
                double tol = 1e-5 * (1.0 + fabs(r)) * (1.0 + (double)(G * K * K) / 64.0);
                if (bad == ny && !(fabs(y[at] - r) <= tol)) bad = at, want = r;
                if (badt == ny && memcmp(&y[at], &y0[at], 4) != 0 &&
                    !(isnan(y[at]) && isnan(y0[at])))
                    badt = at;
            }
    CHECK_MSG(bad == ny && badt == ny,
              "blkgc tier %s C=%lld G=%lld %lldx%lld K=%lld S=%lld pads %lld,%lld,%lld,%lld act "
              "%d blocks [%lld,%lld): element %zu is %g, want %g; element %zu differs from the "
              "portable loop (%g / %g)",
              frt_isa_name(tier), (long long)C, (long long)G, (long long)H, (long long)W,
              (long long)K, (long long)S, (long long)pt, (long long)pl, (long long)pb,
              (long long)pr, act, (long long)m0, (long long)m1, bad, bad < ny ? y[bad] : 0.0,
              want, badt, badt < ny ? y[badt] : 0.0, badt < ny ? y0[badt] : 0.0);
    g_cases++;
    free(xp), free(wt), free(bt), free(x), free(w), free(bias), free(y), free(y0);
}

static void test_loops(void) {
    static const int64_t Gs[][2] = {{8, 8},   {8, 48}, {16, 32}, {24, 48},
                                    {8, 104}, {4, 8},  {4, 24},  {2, 16}};
    static const int64_t sizes[][2] = {{1, 1}, {2, 3}, {3, 2}, {5, 7}, {7, 7}, {4, 13},
                                       {14, 14}, {6, 25}, {3, 30}, {28, 28}};
    static const int64_t pads[][4] = {{1, 1, 1, 1}, {0, 0, 0, 0}, {1, 0, 2, 2}, {0, 1, 1, 0},
                                      {1, 1, 0, 2}};
    for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++) {
        const frt_blkgc_variant *v = frt_blkgc_variant_get((frt_isa)t);
        frt_isa want = t >= FRT_ISA_AVX2 ? FRT_ISA_AVX2 : FRT_ISA_PORTABLE;
        CHECK_MSG(v->isa == want, "tier %s: variant of tier %s", frt_isa_name(t),
                  frt_isa_name(v->isa));
        int n = 0;
        for (size_t gi = 0; gi < sizeof Gs / sizeof *Gs; gi++)
            for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
                for (size_t pi = 0; pi < sizeof pads / sizeof *pads; pi++)
                    for (int64_t S = 1; S <= 2; S++, n++) {
                        const int64_t *p = pads[pi];
                        int64_t cb = Gs[gi][1] / 8;
                        int act = n % 3;
                        run_case((frt_isa)t, Gs[gi][1], Gs[gi][0], sizes[si][0], sizes[si][1],
                                 3, S, p[0], p[1], p[2], p[3], act, 0, -1);
                        if (cb > 2 && n % 4 == 0)
                            run_case((frt_isa)t, Gs[gi][1], Gs[gi][0], sizes[si][0],
                                     sizes[si][1], 3, S, p[0], p[1], p[2], p[3], (act + 1) % 3,
                                     1, cb - 1);
                    }
        /* geometries the SIMD loop leaves to the portable one */
        frt_blkgc_geom g5 = {16, 8, 9, 9, 9, 9, 5, 1, 2, 2, 0, 0, 0};
        frt_blkgc_geom g3 = {16, 8, 9, 9, 3, 3, 3, 3, 1, 1, 0, 0, 0};
        frt_blkgc_geom gp = {16, 8, 9, 9, 9, 9, 3, 1, 2, 2, 0, 0, 0};
        CHECK(frt_blkgc_get((frt_isa)t, &g5) == frt_blkgc_portable);
        CHECK(frt_blkgc_get((frt_isa)t, &g3) == frt_blkgc_portable);
        CHECK(frt_blkgc_get((frt_isa)t, &gp) == frt_blkgc_portable);
        run_case((frt_isa)t, 16, 8, 9, 9, 5, 1, 2, 2, 2, 2, FRT_BLKGC_RELU, 0, -1);
        run_case((frt_isa)t, 16, 8, 9, 8, 3, 3, 1, 1, 1, 1, FRT_BLKGC_NONE, 0, -1);
        run_case((frt_isa)t, 16, 16, 6, 6, 1, 1, 0, 0, 0, 0, FRT_BLKGC_CLIP, 0, -1);
        run_case((frt_isa)t, 16, 4, 7, 9, 5, 2, 1, 2, 1, 2, FRT_BLKGC_NONE, 0, -1);
        if (v->isa != FRT_ISA_PORTABLE) {
            frt_blkgc_geom gs = {16, 8, 9, 9, 9, 9, 3, 1, 1, 1, 0, 0, 0};
            CHECK(frt_blkgc_get((frt_isa)t, &gs) == v->run);
        }
    }
    CHECK_MSG(g_cases >= 800 * ((int)tier_hi() + 1), "only %d cases ran", g_cases);
}

/* NaN stays NaN through every activation; -0, infinities and large values pass as in the
   reference. */
static void test_specials(void) {
    static const float in[] = {NAN, -INFINITY, INFINITY, -100.0f, 100.0f, -0.0f};
    for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++)
        for (int act = 0; act < 3; act++)
            for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
                /* 8 channels in one group, 1x1 image, 3x3 kernel with pads 1: only the centre
                   tap of channel 0 is 1, so the output of every channel is act(x[0]) */
                float x[8], wt[8 * 8 * 9] = {0}, w[8 * 8 * 9], bias[8], y[8];
                for (int l = 0; l < 8; l++) x[l] = l ? 3.0f : in[i];
                for (int m = 0; m < 8; m++) wt[(m * 8 + 0) * 9 + 4] = 1.0f;
                frt_blkgc_pack(wt, NULL, 8, 8, 3, w, bias);
                frt_blkgc_geom g = {8, 8, 1, 1, 1, 1, 3, 1, 1, 1, act, -0.5f, 1.5f};
                frt_blkgc_get((frt_isa)t, &g)(x, w, bias, y, &g, 0, 1);
                double r = ref_act(act, 0.0 + (double)in[i]); /* the bias +0 first: -0 gives +0 */
                for (int l = 0; l < 8; l++) {
                    bool ok = isnan(r) ? isnan(y[l]) : y[l] == r && !signbit(y[l]) == !signbit(r);
                    CHECK_MSG(ok, "blkgc tier %s act %d of %g: lane %d is %g, want %g",
                              frt_isa_name(t), act, (double)in[i], l, (double)y[l], r);
                }
            }
}

int main(void) {
    test_loops();
    test_specials();
    TEST_MAIN_END();
}
