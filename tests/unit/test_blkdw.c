/* The blocked depthwise convolution loops (src/ops/blkdw.h) of every tier from portable up to the
 * one this process runs, against a naive double-precision reference over plain channel indices:
 * blocks 8 and 16, channel counts with and without a padded last block, K 3 and 5 (the SIMD
 * paths) and 1, 2, 7 (the portable fallback), strides 1, 2 and 3, zero / partial / full pads on
 * every side (asymmetric), odd image sizes from 1x1 (every output an edge) to rows longer than
 * the register block with its tails, each activation, NaN in the padding lanes of the input
 * (must not leak) and in the whole output buffer beforehand (every element must be written).
 * The SIMD loops are also compared with their portable twin. */
#include "ops/blkdw.h"
#include "test_util.h"

static frt_isa tier_hi(void) { return FRT_HAVE_X86 ? frt_cpu_tier() : FRT_ISA_PORTABLE; }

static double ref_act(int act, double v, double lo, double hi) {
    switch (act) {
    case FRT_BLKDW_RELU: return v < 0 ? 0 : v;
    case FRT_BLKDW_CLIP: return v < lo ? lo : v > hi ? hi : v;
    case FRT_BLKDW_SILU: return v / (1.0 + exp(-v));
    case FRT_BLKDW_HARDSWISH: {
        double h = v / 6.0 + 0.5;
        return v * (h < 0 ? 0 : h > 1 ? 1 : h);
    }
    }
    return v;
}

typedef struct dcase {
    int64_t C, H, W, K, S, pt, pb, pl, pr;
} dcase;

static int g_cases;

/* Runs case d with block b and activation act on variant v (and the portable twin), checks both
 * against the reference. */
static void run_case(const frt_blkdw_variant *v, const dcase *d, int64_t b, int act) {
    int64_t C = d->C, H = d->H, W = d->W, K = d->K, S = d->S;
    int64_t OH = (H + d->pt + d->pb - K) / S + 1, OW = (W + d->pl + d->pr - K) / S + 1;
    if (OH < 1 || OW < 1) return;
    int64_t cb = (C + b - 1) / b;
    size_t nx = (size_t)(cb * H * W * b), ny = (size_t)(cb * OH * OW * b);
    float *xp = malloc((size_t)(C * H * W) * 4), *wt = malloc((size_t)(C * K * K) * 4);
    float *bt = malloc((size_t)C * 4), *x = malloc(nx * 4), *y = malloc(ny * 4);
    float *y0 = malloc(ny * 4), *w = malloc((size_t)(cb * K * K * b) * 4);
    float *bias = malloc((size_t)(cb * b) * 4);
    t_fill(xp, (size_t)(C * H * W), (unsigned)(C * 7 + H * 3 + W));
    t_fill(wt, (size_t)(C * K * K), (unsigned)(K * 11 + C));
    t_fill(bt, (size_t)C, (unsigned)(C + 3));
    for (int64_t i = 0; i < C * H * W; i++) xp[i] *= 3.0f; /* reach the activations' bends */
    for (int64_t k = 0; k < cb; k++)
        for (int64_t s = 0; s < H * W; s++)
            for (int64_t l = 0; l < b; l++) {
                int64_t c = k * b + l;
                x[(k * H * W + s) * b + l] = c < C ? xp[c * H * W + s] : NAN;
            }
    frt_blkdw_pack(wt, bt, C, K, b, w, bias);
    frt_blkdw_geom g = {C, H, W, OH, OW, K, S, d->pt, d->pl, act, -0.5f, 1.5f};
    for (size_t i = 0; i < ny; i++) y[i] = y0[i] = NAN;
    frt_blkdw_get(v->isa, b, K, S)(x, w, bias, y, &g, b);
    frt_blkdw_portable(x, w, bias, y0, &g, b);
    size_t bad = ny, bad0 = ny, badt = ny;
    double want = 0;
    for (int64_t k = 0; k < cb && bad == ny && bad0 == ny && badt == ny; k++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++)
                for (int64_t l = 0; l < b; l++) {
                    int64_t c = k * b + l;
                    size_t at = (size_t)(((k * OH + oh) * OW + ow) * b + l);
                    double r = 0;
                    if (c < C) {
                        r = bt[c];
                        for (int64_t i = 0; i < K; i++)
                            for (int64_t j = 0; j < K; j++) {
                                int64_t ih = oh * S - d->pt + i, iw = ow * S - d->pl + j;
                                if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                    r += (double)wt[(c * K + i) * K + j] *
                                         xp[(c * H + ih) * W + iw];
                            }
                        r = ref_act(act, r, -0.5, 1.5);
                    }
                    double tol = 2e-5 * (1.0 + fabs(r));
                    if (bad == ny && !(fabs(y[at] - r) <= tol)) bad = at, want = r;
                    if (bad0 == ny && !(fabs(y0[at] - r) <= tol)) bad0 = at, want = r;
                    /* SIMD against the portable twin */
                    if (badt == ny && !(fabs(y[at] - y0[at]) <= 4e-6 * (1.0 + fabs(y0[at]))))
                        badt = at;
                }
    CHECK_MSG(bad == ny && bad0 == ny && badt == ny,
              "blkdw%s b=%lld C=%lld %lldx%lld K=%lld S=%lld pads %lld,%lld,%lld,%lld act %d: "
              "element %zu/%zu/%zu is %g / %g (portable), want %g",
              v->suffix, (long long)b, (long long)C, (long long)H, (long long)W, (long long)K,
              (long long)S, (long long)d->pt, (long long)d->pb, (long long)d->pl,
              (long long)d->pr, act, bad, bad0, badt,
              bad < ny ? y[bad] : bad0 < ny ? y[bad0] : badt < ny ? y[badt] : 0.0,
              bad < ny ? y0[bad] : bad0 < ny ? y0[bad0] : badt < ny ? y0[badt] : 0.0, want);
    g_cases++;
    free(xp), free(wt), free(bt), free(x), free(y), free(y0), free(w), free(bias);
}

static void test_loops(void) {
    static const int64_t bs[] = {8, 16};
    static const int64_t Cs[] = {1, 9, 16, 24, 40};
    /* 7x7, 14x14, 28x28, 13x13, 6x27, 9x42: widths whose outputs fill rows of 7 (the AVX2 row
       tiles, x86/blkdw_impl.h bd_tile7; more below) */
    static const int64_t HWs[][2] = {{1, 1},   {2, 3},   {5, 7},  {7, 7}, {13, 30},
                                     {14, 14}, {9, 37},  {28, 28}, {13, 13}, {6, 27}, {9, 42}};
    static const int64_t Ks[] = {3, 5, 1, 2, 7};
    for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++)
        for (size_t bi = 0; bi < 2; bi++) {
            int64_t b = bs[bi];
            const frt_blkdw_variant *v = frt_blkdw_variant_get((frt_isa)t, b);
            frt_isa want = b == 16 && t >= FRT_ISA_AVX512 ? FRT_ISA_AVX512
                           : b == 8 && t >= FRT_ISA_AVX2  ? FRT_ISA_AVX2
                                                          : FRT_ISA_PORTABLE;
            CHECK_MSG(v->isa == want, "tier %s, block %lld: variant of tier %s", frt_isa_name(t),
                      (long long)b, frt_isa_name(v->isa));
            if (t > FRT_ISA_PORTABLE && v->isa == FRT_ISA_PORTABLE) continue; /* done at t = 0 */
            unsigned seed = 99;
            for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++)
                for (int64_t S = 1; S <= 3; S++)
                    for (size_t hi = 0; hi < sizeof HWs / sizeof *HWs; hi++)
                        for (size_t ci = 0; ci < sizeof Cs / sizeof *Cs; ci++) {
                            int64_t K = Ks[ki];
                            /* the SIMD geometries everywhere; the fallback ones more sparsely */
                            if (((K != 3 && K != 5) || S == 3) && (ci % 2 || hi % 2)) continue;
                            dcase d = {Cs[ci], HWs[hi][0], HWs[hi][1], K, S, 0, 0, 0, 0};
                            /* pads: symmetric K/2, or each side drawn from [0, K) */
                            if ((ci + hi) % 3 == 0) {
                                d.pt = d.pb = d.pl = d.pr = K / 2;
                            } else {
                                unsigned r = (unsigned)(t_rand(&seed) * 1e6f + 1e6f);
                                d.pt = (int64_t)(r % (unsigned)K);
                                d.pb = (int64_t)(r / 7 % (unsigned)K);
                                d.pl = (int64_t)(r / 49 % (unsigned)K);
                                d.pr = (int64_t)(r / 343 % (unsigned)K);
                            }
                            int act = (int)((ci + hi + ki + (size_t)S) % 5);
                            run_case(v, &d, b, act);
                        }
            /* the AVX2 row tiles (bd_tile7: left pad K / 2, output widths 7, 14 and 21): the
               right edge passed by 0 to K / 2 columns (each count its own instance), left and
               right edges in one tile (width 7), tiles without edges between (width 21),
               kernel rows cut at the top and bottom (height 2 to 6), stride 1 and 2 */
            for (int64_t K = 3; K <= 5; K += 2)
                for (int64_t S = 1; S <= 2; S++)
                    for (int64_t W = 7; W <= 44; W++)
                        for (int64_t pr = 0; pr <= K / 2; pr++) {
                            int64_t OW = (W + K / 2 + pr - K) / S + 1;
                            if (OW != 7 && OW != 14 && OW != 21) continue;
                            int64_t H = 2 + (W + pr) % 5;
                            dcase d = {9, H, W, K, S, K / 2, (W + pr) % 2 ? K / 2 : 0, K / 2, pr};
                            run_case(v, &d, b, (int)((W + pr + K + S) % 5));
                        }
            /* every activation on the common geometries (3x3 and 5x5, stride 1 and 2) */
            for (int act = 0; act < 5; act++)
                for (int64_t K = 3; K <= 5; K += 2)
                    for (int64_t S = 1; S <= 2; S++) {
                        dcase d = {24, 11, 29, K, S, K / 2, K / 2, K / 2, K / 2};
                        run_case(v, &d, b, act);
                    }
        }
    CHECK_MSG(g_cases > 500, "only %d cases ran", g_cases);
}

/* SiLU of -inf gives NaN (as the unfused Sigmoid + Mul: -inf * 0); NaN stays NaN for every
 * activation; large inputs do not overflow to NaN. */
static void test_specials(void) {
    static const float in[] = {-INFINITY, NAN, -100.0f, 100.0f, 1e30f, -1e30f};
    for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++)
        for (int64_t b = 8; b <= 16; b += 8) {
            const frt_blkdw_variant *v = frt_blkdw_variant_get((frt_isa)t, b);
            for (int act = 0; act < 5; act++)
                for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
                    /* 1 channel, 3x3 image of x, 3x3 kernel with only the centre tap 1, no pads:
                       the single output is act(x) */
                    float x[9 * 16], w[9 * 16], bias[16] = {0}, y[16];
                    for (int s = 0; s < 9 * 16; s++) x[s] = s % b == 0 ? in[i] : NAN;
                    memset(w, 0, sizeof w);
                    w[4 * b] = 1.0f;
                    /* centre tap only; the others multiply x too: make them see 0 */
                    for (int s = 0; s < 9; s++)
                        if (s != 4) x[s * b] = 0.0f;
                    frt_blkdw_geom g = {1, 3, 3, 1, 1, 3, 1, 0, 0, act, -0.5f, 1.5f};
                    frt_blkdw_get(v->isa, b, 3, 1)(x, w, bias, y, &g, b);
                    double r = ref_act(act, in[i], -0.5, 1.5);
                    if (act == FRT_BLKDW_SILU && in[i] == -INFINITY) r = NAN;
                    if (act == FRT_BLKDW_HARDSWISH && isinf(in[i]) && in[i] > 0) r = INFINITY;
                    bool ok = isnan(r) ? isnan(y[0]) : fabs(y[0] - r) <= 1e-5 * (1 + fabs(r)) ||
                                                           y[0] == r;
                    CHECK_MSG(ok, "blkdw%s b=%lld act %d of %g: %g, want %g", v->suffix,
                              (long long)b, act, (double)in[i], (double)y[0], r);
                    for (int64_t l = 1; l < b; l++)
                        CHECK_MSG(y[l] == 0.0f, "blkdw%s act %d: padding lane %lld is %g",
                                  v->suffix, act, (long long)l, (double)y[l]);
                }
        }
}

int main(void) {
    test_loops();
    test_specials();
    TEST_MAIN_END();
}
