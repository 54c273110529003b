/* The Winograd F(4x4, 3x3), F(2x2, 3x3) and stride-2 convolutions (src/ops/wino.h; all cases for each tile
 * side): every tier's pieces from portable up to
 * the one this process runs, against a direct double-precision convolution over plain channel
 * indices, and the SIMD pieces against their portable twin. Blocks 8 and 16; channel counts with
 * and without a padded last group (1, 3, 8, 13, 16, 24, 40) and a large one (256); images from 1x1
 * (every tile a border tile, most of it outside) to sizes not multiples of 4 and larger than a
 * tile block; pads 0, 1, 2 and asymmetric bottom/right; each activation; with and without the
 * residual; tile blocks of several sizes and work split into items by panels (a split must not
 * change the result); NaN in the padding lanes of x and z (must not leak) and in all of y
 * beforehand (every element must be written, padding lanes as 0).
 *
 * Tolerance: the rounding error of a Winograd output is bounded by K eps S, where S = |bias| +
 * |z| + sum_{c,i,j} |w x| over its receptive field and K grows with the norms of the transforms
 * (rows of B^T sum to up to 10 in absolute value, of A^T to 18, and both are applied in two
 * dimensions: K is in the hundreds for F(4x4, 3x3), against ~ the sum's length for a direct
 * convolution). Each output is checked with |y - ref| <= 3e-5 S (~500 eps S). The worst error
 * over this test's cases is ~1.3e-5 S (printed at the end; ~215 eps S, in the 1-channel and
 * corner cases where S is a few products). */
#include "ops/wino.h"
#include "test_util.h"

static frt_isa tier_hi(void) { return FRT_HAVE_X86 ? frt_cpu_tier() : FRT_ISA_PORTABLE; }

typedef struct wcase {
    int64_t C, M, H, W, pt, pb, pl, pr;
} wcase;

static int g_cases;
static int64_t g_m = 4; /* tile side of the cases: 4 = F(4x4, 3x3), 2 = F(2x2, 3x3) */
static int64_t g_s = 1; /* stride of the cases: 1, or 2 (the polyphase stride-2 form, m 2) */
static double g_worst; /* max |y - ref| / S over all checked outputs */

static void run_case(const frt_wino_variant *v, const wcase *d, int64_t b, int act, int with_z,
                     int64_t T, int64_t nsplit) {
    int64_t C = d->C, M = d->M, H = d->H, W = d->W;
    int64_t OH = (H + d->pt + d->pb - 3) / g_s + 1, OW = (W + d->pl + d->pr - 3) / g_s + 1;
    if (H + d->pt + d->pb < 3 || W + d->pl + d->pr < 3) return;
    if (OH < 1 || OW < 1) return;
    int64_t cb = (C + b - 1) / b, mb = (M + b - 1) / b;
    size_t nx = (size_t)(cb * H * W * b), ny = (size_t)(mb * OH * OW * b);
    float *xp = malloc((size_t)(C * H * W) * 4), *wt = malloc((size_t)(M * C * 9) * 4);
    float *bt = malloc((size_t)M * 4), *x = malloc(nx * 4), *y = malloc(ny * 4);
    float *y0 = malloc(ny * 4), *z = malloc(ny * 4);
    frt_wino_geom g = {.C = C, .M = M, .H = H, .W = W, .OH = OH, .OW = OW, .pt = d->pt,
                       .pl = d->pl, .b = b, .m = g_m, .s = g_s, .act = act, .lo = -0.5f,
                       .hi = 0.75f};
    frt_wino_geom_init(&g, T);
    float *U = malloc(frt_wino_u_floats_geom(&g) * 4);
    float *bias = calloc((size_t)g.Mp, 4);
    float *sc = aligned_alloc(64, (frt_wino_scratch_floats(&g) * 4 + 63) / 64 * 64);
    t_fill(xp, (size_t)(C * H * W), (unsigned)(C * 7 + H * 3 + W));
    t_fill(wt, (size_t)(M * C * 9), (unsigned)(M * 11 + C));
    t_fill(bt, (size_t)M, (unsigned)(M + 3));
    t_fill(z, ny, (unsigned)(M + 5));
    memcpy(bias, bt, (size_t)M * 4);
    for (int64_t k = 0; k < cb; k++)
        for (int64_t s = 0; s < H * W; s++)
            for (int64_t l = 0; l < b; l++) {
                int64_t c = k * b + l;
                x[(k * H * W + s) * b + l] = c < C ? xp[c * H * W + s] : NAN;
            }
    for (int64_t k = 0; k < mb; k++)
        for (int64_t s = 0; s < OH * OW; s++)
            for (int64_t l = M - k * b; l < b; l++) z[(k * OH * OW + s) * b + l] = NAN;
    if (g_s == 2) frt_wino_pack_geom(wt, &g, U);
    else frt_wino_pack_m(wt, C, M, g_m, U);
    const frt_wino_variant *pv = frt_wino_variant_get(FRT_ISA_PORTABLE);
    for (size_t i = 0; i < ny; i++) y[i] = y0[i] = NAN;
    /* the variant split into items one by one (in reverse), the portable one in a single call */
    int64_t items = frt_wino_items(&g, nsplit);
    for (int64_t i = items - 1; i >= 0; i--)
        frt_wino_run(v, x, U, bias, with_z ? z : NULL, y, &g, nsplit, i, i + 1, sc);
    frt_wino_run(pv, x, U, bias, with_z ? z : NULL, y0, &g, 1, 0, frt_wino_items(&g, 1), sc);
    size_t bad = ny, bad0 = ny, badt = ny;
    double want = 0;
    for (int64_t k = 0; k < mb && bad == ny && bad0 == ny && badt == ny; k++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++)
                for (int64_t l = 0; l < b; l++) {
                    int64_t m = k * b + l;
                    size_t at = (size_t)(((k * OH + oh) * OW + ow) * b + l);
                    double r = 0, S = 0;
                    if (m < M) {
                        r = bt[m];
                        S = fabs(r);
                        if (with_z) r += z[at], S += fabs(z[at]);
                        for (int64_t c = 0; c < C; c++)
                            for (int64_t i = 0; i < 3; i++)
                                for (int64_t j = 0; j < 3; j++) {
                                    int64_t ih = oh * g_s - d->pt + i,
                                            iw = ow * g_s - d->pl + j;
                                    if (ih >= 0 && ih < H && iw >= 0 && iw < W) {
                                        double p = (double)wt[((m * C + c) * 3 + i) * 3 + j] *
                                                   xp[(c * H + ih) * W + iw];
                                        r += p;
                                        S += fabs(p);
                                    }
                                }
                        if (act == FRT_WINO_RELU) r = r < 0 ? 0 : r;
                        if (act == FRT_WINO_CLIP) r = r < -0.5 ? -0.5 : r > 0.75 ? 0.75 : r;
                    }
                    double tol = 3e-5 * S;
                    if (m < M && fabs(y[at] - r) / S > g_worst) g_worst = fabs(y[at] - r) / S;
                    if (bad == ny && !(fabs(y[at] - r) <= tol)) bad = at, want = r;
                    if (bad0 == ny && !(fabs(y0[at] - r) <= tol)) bad0 = at, want = r;
                    if (badt == ny && !(fabs(y[at] - y0[at]) <= 2 * tol)) badt = at;
                }
    CHECK_MSG(bad == ny && bad0 == ny && badt == ny,
              "wino%s m=%lld s=%lld b=%lld C=%lld M=%lld %lldx%lld pads %lld,%lld,%lld,%lld act %d z %d T %lld "
              "split %lld: element %zu/%zu/%zu is %g / %g (portable), want %g",
              v->suffix, (long long)g_m, (long long)g_s, (long long)b, (long long)C, (long long)M, (long long)H, (long long)W,
              (long long)d->pt, (long long)d->pb, (long long)d->pl, (long long)d->pr, act,
              with_z, (long long)g.T, (long long)nsplit, bad, bad0, badt,
              bad < ny ? y[bad] : bad0 < ny ? y[bad0] : badt < ny ? y[badt] : 0.0,
              bad < ny ? y0[bad] : bad0 < ny ? y0[bad0] : badt < ny ? y0[badt] : 0.0, want);
    g_cases++;
    free(xp), free(wt), free(bt), free(x), free(y), free(y0), free(z), free(U), free(bias);
    free(sc);
}

static void test_cases(void) {
    static const int64_t Cs[] = {1, 3, 8, 13, 16, 24, 40};
    static const int64_t HWs[][2] = {{1, 1}, {2, 3}, {4, 4}, {5, 7}, {7, 7}, {13, 30}, {14, 14}};
    for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++) {
        const frt_wino_variant *v = frt_wino_variant_get((frt_isa)t);
        frt_isa want = t >= FRT_ISA_AVX2 && FRT_HAVE_X86 ? FRT_ISA_AVX2 : FRT_ISA_PORTABLE;
        CHECK_MSG(v->isa == want, "tier %s: variant of tier %s", frt_isa_name(t),
                  frt_isa_name(v->isa));
        if (t > FRT_ISA_PORTABLE && v->isa == FRT_ISA_PORTABLE) continue; /* done at t = 0 */
        unsigned seed = 7;
        for (int64_t b = 8; b <= 16; b += 8)
            for (size_t hi = 0; hi < sizeof HWs / sizeof *HWs; hi++)
                for (size_t ci = 0; ci < sizeof Cs / sizeof *Cs; ci++)
                    for (size_t mi = 0; mi < sizeof Cs / sizeof *Cs; mi += 2) {
                        size_t k = hi + ci + mi;
                        wcase d = {Cs[ci], Cs[(mi + ci) % 7], HWs[hi][0], HWs[hi][1], 1, 1, 1, 1};
                        if (k % 3 == 1) {
                            d.pt = d.pb = d.pl = d.pr = 0;
                        } else if (k % 3 == 2) {
                            unsigned r = (unsigned)(t_rand(&seed) * 1e6f + 1e6f);
                            d.pt = (int64_t)(r % 3u), d.pb = (int64_t)(r / 3 % 3u);
                            d.pl = (int64_t)(r / 9 % 3u), d.pr = (int64_t)(r / 27 % 3u);
                        }
                        /* 0, 1, 6, 11 or 16 (16 tiles: V and O groups 16 P 8 floats, a
                           multiple of 512, padded apart: frt_wino_geom.gs) */
                        int64_t T = k % 4 == 0 ? 0 : k % 8 == 7 ? 16 : (int64_t)(k % 4) * 5 - 4;
                        run_case(v, &d, b, (int)(k % 3), (int)(k % 2), T, (int64_t)(k % 3) + 1);
                    }
        /* realistic sizes: several tile blocks, many panels, all activations */
        for (int act = 0; act < 3; act++) {
            wcase d1 = {64, 64, 29, 31, 1, 1, 1, 1}, d2 = {256, 48, 7, 7, 1, 1, 1, 1};
            wcase d3 = {32, 256, 9, 10, 0, 2, 2, 0};
            run_case(v, &d1, 8, act, act != 1, 0, 1);
            run_case(v, &d2, 8, act, act != 2, 0, 2);
            run_case(v, &d3, 16, act, act != 0, 0, 3);
        }
        /* resnet's layer4 shape, with T = 48 as the provider plans it (U beyond the L2) */
        wcase d4 = {512, 512, 7, 7, 1, 1, 1, 1};
        run_case(v, &d4, 8, FRT_WINO_RELU, 1, 48, 1);
    }
    printf("wino m=%lld s=%lld: %d cases, worst |y - ref| / sum|w x| = %.3g\n", (long long)g_m, (long long)g_s, g_cases,
           g_worst);
}

/* Planning parts (frt_wino_even_blocks, frt_wino_plan_parts): for layer shapes of resnet18/50 and
 * odd ones, 2..4 parts: the bounds cover the items in order, and every part's cost (tiles times
 * panels, counted here from the items) is within 5% of an even share unless the blocks' panels
 * are split as finely as they go. 49 tiles (28x28) with 48 per block become two blocks of 25 and
 * 24 tiles, taken whole by 2 parts (equal item counts gave 48 tiles and 1). Then one image run
 * part by part equals the run in one call, bit for bit. */
static void test_plan(void) {
    static const int64_t shapes[][4] = {{128, 128, 28, 28}, {64, 64, 56, 56}, {256, 256, 14, 14},
                                        {40, 40, 30, 29}, {16, 24, 13, 30}, {512, 512, 7, 7},
                                        {24, 40, 5, 7}};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
        for (int64_t T0 = 0; T0 <= 48; T0 += 48)
            for (int64_t parts = 2; parts <= 4; parts++) {
                const int64_t *d = shapes[si];
                frt_wino_geom g = {.C = d[0], .M = d[1], .H = d[2], .W = d[3], .OH = d[2],
                                   .OW = d[3], .pt = 1, .pl = 1, .b = 8};
                frt_wino_geom_init(&g, T0);
                int64_t nb = (g.ntiles + g.T - 1) / g.T;
                frt_wino_even_blocks(&g);
                CHECK_MSG((g.ntiles + g.T - 1) / g.T == nb &&
                              (g.T == 1 || (g.ntiles + g.T - 2) / (g.T - 1) > nb),
                          "plan %lld tiles: %lld blocks of %lld", (long long)g.ntiles,
                          (long long)nb, (long long)g.T);
                if (g.ntiles == 49 && T0 == 48) CHECK(g.T == 25);
                int64_t bound[5], nsplit = 0, np = g.Mp / 16;
                int64_t n = frt_wino_plan_parts(&g, parts, &nsplit, bound);
                int64_t items = frt_wino_items(&g, nsplit), worst = 0;
                CHECK(n >= 1 && n <= parts && nsplit >= 1 && nsplit <= np);
                CHECK(bound[0] == 0 && bound[n] == items);
                for (int64_t k = 0; k < n; k++) {
                    CHECK(bound[k] <= bound[k + 1]);
                    int64_t c = 0;
                    for (int64_t i = bound[k]; i < bound[k + 1]; i++) {
                        int64_t blk = i / nsplit, s = i % nsplit;
                        int64_t nt = g.ntiles - blk * g.T < g.T ? g.ntiles - blk * g.T : g.T;
                        c += nt * (np * (s + 1) / nsplit - np * s / nsplit);
                    }
                    worst = c > worst ? c : worst;
                }
                CHECK_MSG(nsplit == np || (n == parts && (double)worst * (double)parts <=
                                                             1.05 * (double)(g.ntiles * np)),
                          "plan C=%lld M=%lld %lldx%lld T %lld, %lld parts: split %lld, largest "
                          "part %lld of %lld", (long long)g.C, (long long)g.M, (long long)g.H,
                          (long long)g.W, (long long)g.T, (long long)parts, (long long)nsplit,
                          (long long)worst, (long long)(g.ntiles * np));
                if (g.ntiles == 49 && T0 == 48 && parts == 2)
                    CHECK(nsplit == 1 && bound[1] == 1); /* whole blocks */
            }
    /* a planned split runs to the same bits as one call */
    const frt_wino_variant *v = frt_wino_variant_get(tier_hi());
    frt_wino_geom g = {.C = 40, .M = 48, .H = 28, .W = 27, .OH = 28, .OW = 27, .pt = 1, .pl = 1,
                       .b = 8, .act = FRT_WINO_RELU};
    frt_wino_geom_init(&g, 48);
    frt_wino_even_blocks(&g);
    size_t nx = (size_t)(g.Cg * 8 * g.H * g.W), ny = (size_t)(g.Mg * 8 * g.OH * g.OW);
    float *x = malloc(nx * 4), *w = malloc((size_t)(g.C * g.M * 9) * 4);
    float *U = malloc(frt_wino_u_floats(g.C, g.M) * 4), *bias = calloc((size_t)g.Mp, 4);
    float *y = malloc(ny * 4), *y1 = malloc(ny * 4);
    float *sc = aligned_alloc(64, (frt_wino_scratch_floats(&g) * 4 + 63) / 64 * 64);
    t_fill(x, nx, 3);
    t_fill(w, (size_t)(g.C * g.M * 9), 5);
    frt_wino_pack(w, g.C, g.M, U);
    frt_wino_run(v, x, U, bias, NULL, y1, &g, 1, 0, frt_wino_items(&g, 1), sc);
    for (int64_t parts = 2; parts <= 4; parts++) {
        int64_t bound[5], nsplit;
        int64_t n = frt_wino_plan_parts(&g, parts, &nsplit, bound);
        for (size_t i = 0; i < ny; i++) y[i] = NAN;
        for (int64_t k = n - 1; k >= 0; k--)
            frt_wino_run(v, x, U, bias, NULL, y, &g, nsplit, bound[k], bound[k + 1], sc);
        CHECK_MSG(memcmp(y, y1, ny * 4) == 0, "plan: %lld parts differ from one call",
                  (long long)parts);
    }
    free(x), free(w), free(U), free(bias), free(y), free(y1), free(sc);
}

/* The one-dimensional form F(m, r) (wino.h): a kd x r (axis 0) or r x kd (axis 1) kernel with
 * pads lo / hi along the axis and clo / chi across it, every tier's pieces against a direct double-precision convolution
 * and the SIMD pieces against their portable twin, as run_case does. The tolerance is the same
 * 3e-5 S: the transforms are applied in one dimension only (the worst error is printed). */
static void run_case1(const frt_wino_variant *v, int64_t C, int64_t M, int64_t H, int64_t W,
                      int64_t r, int64_t axis, int64_t lo, int64_t hi, int64_t kd, int64_t clo,
                      int64_t chi, int64_t tm, int64_t b, int act, int with_z, int64_t T,
                      int64_t nsplit, double *worst) {
    int64_t n = axis ? H : W, on = n + lo + hi - r + 1, nc = (axis ? W : H) + clo + chi - kd + 1;
    if (on < 1 || nc < 1) return;
    int64_t OH = axis ? on : nc, OW = axis ? nc : on;
    int64_t cb = (C + b - 1) / b, mb = (M + b - 1) / b;
    size_t nx = (size_t)(cb * H * W * b), ny = (size_t)(mb * OH * OW * b);
    float *xp = malloc((size_t)(C * H * W) * 4), *wt = malloc((size_t)(M * C * r * kd) * 4);
    float *bt = malloc((size_t)M * 4), *x = malloc(nx * 4), *y = malloc(ny * 4);
    float *y0 = malloc(ny * 4), *z = malloc(ny * 4);
    frt_wino_geom g = {.C = C, .M = M, .H = H, .W = W, .OH = OH, .OW = OW, .pt = axis ? lo : clo,
                       .pl = axis ? clo : lo, .b = b, .m = tm, .r = r, .axis = axis, .kd = kd,
                       .act = act, .lo = -0.5f, .hi = 0.75f};
    frt_wino_geom_init(&g, T);
    float *U = malloc(frt_wino_u_floats_geom(&g) * 4);
    float *bias = calloc((size_t)g.Mp, 4);
    float *sc = aligned_alloc(64, (frt_wino_scratch_floats(&g) * 4 + 63) / 64 * 64);
    t_fill(xp, (size_t)(C * H * W), (unsigned)(C * 7 + H * 3 + W));
    t_fill(wt, (size_t)(M * C * r * kd), (unsigned)(M * 11 + C + r));
    t_fill(bt, (size_t)M, (unsigned)(M + 3));
    t_fill(z, ny, (unsigned)(M + 5));
    memcpy(bias, bt, (size_t)M * 4);
    for (int64_t k = 0; k < cb; k++)
        for (int64_t q = 0; q < H * W; q++)
            for (int64_t l = 0; l < b; l++) {
                int64_t c = k * b + l;
                x[(k * H * W + q) * b + l] = c < C ? xp[c * H * W + q] : NAN;
            }
    for (int64_t k = 0; k < mb; k++)
        for (int64_t q = 0; q < OH * OW; q++)
            for (int64_t l = M - k * b; l < b; l++) z[(k * OH * OW + q) * b + l] = NAN;
    frt_wino_pack_geom(wt, &g, U);
    const frt_wino_variant *pv = frt_wino_variant_get(FRT_ISA_PORTABLE);
    for (size_t i = 0; i < ny; i++) y[i] = y0[i] = NAN;
    int64_t items = frt_wino_items(&g, nsplit);
    for (int64_t i = items - 1; i >= 0; i--)
        frt_wino_run(v, x, U, bias, with_z ? z : NULL, y, &g, nsplit, i, i + 1, sc);
    frt_wino_run(pv, x, U, bias, with_z ? z : NULL, y0, &g, 1, 0, frt_wino_items(&g, 1), sc);
    size_t bad = ny, bad0 = ny, badt = ny;
    double want = 0;
    for (int64_t k = 0; k < mb; k++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++)
                for (int64_t l = 0; l < b; l++) {
                    int64_t m = k * b + l;
                    size_t at = (size_t)(((k * OH + oh) * OW + ow) * b + l);
                    double ref = 0, S = 1;
                    if (m < M) {
                        ref = bt[m];
                        S = fabs(ref);
                        if (with_z) ref += z[at], S += fabs(z[at]);
                        for (int64_t c = 0; c < C; c++)
                            for (int64_t e = 0; e < r * kd; e++) {
                                int64_t q = e % r, i = e / r; /* along, across the axis */
                                int64_t ih = oh + (axis ? q - lo : i - clo),
                                        iw = ow + (axis ? i - clo : q - lo);
                                size_t wi = (size_t)((m * C + c) * r * kd) +
                                            (size_t)(axis ? q * kd + i : i * r + q);
                                if (ih >= 0 && ih < H && iw >= 0 && iw < W) {
                                    double p = (double)wt[wi] * xp[(c * H + ih) * W + iw];
                                    ref += p;
                                    S += fabs(p);
                                }
                            }
                        if (act == FRT_WINO_RELU) ref = ref < 0 ? 0 : ref;
                        if (act == FRT_WINO_CLIP) ref = ref < -0.5 ? -0.5 : ref > 0.75 ? 0.75 : ref;
                    }
                    double tol = 3e-5 * S;
                    if (m < M && fabs(y[at] - ref) / S > *worst) *worst = fabs(y[at] - ref) / S;
                    if (bad == ny && !(fabs(y[at] - ref) <= tol)) bad = at, want = ref;
                    if (bad0 == ny && !(fabs(y0[at] - ref) <= tol)) bad0 = at, want = ref;
                    if (badt == ny && !(fabs(y[at] - y0[at]) <= 2 * tol)) badt = at;
                }
    CHECK_MSG(bad == ny && bad0 == ny && badt == ny,
              "wino1%s F(%lld,%lld) kd %lld axis %lld b=%lld C=%lld M=%lld %lldx%lld pads %lld,%lld "
              "across %lld,%lld act %d z %d T %lld split %lld: element %zu/%zu/%zu is %g / %g "
              "(portable), want %g",
              v->suffix, (long long)tm, (long long)r, (long long)kd, (long long)axis, (long long)b,
              (long long)C, (long long)M, (long long)H, (long long)W, (long long)lo, (long long)hi,
              (long long)clo, (long long)chi, act, with_z,
              (long long)g.T, (long long)nsplit, bad, bad0, badt,
              bad < ny ? y[bad] : bad0 < ny ? y[bad0] : badt < ny ? y[badt] : 0.0,
              bad < ny ? y0[bad] : bad0 < ny ? y0[bad0] : badt < ny ? y0[badt] : 0.0, want);
    free(xp), free(wt), free(bt), free(x), free(y), free(y0), free(z), free(U), free(bias);
    free(sc);
}

static void test_cases1(void) {
    static const int64_t Cs[] = {1, 3, 8, 13, 16, 24, 40};
    static const int64_t HWs[][2] = {{1, 1}, {2, 3}, {5, 7}, {8, 8}, {17, 17}, {13, 30}};
    /* (m, r): inception_v3's F(4, 7) and F(4, 3), and every other tile side up to the limits */
    static const int64_t mr[][2] = {{4, 7}, {4, 3}, {2, 7}, {3, 7}, {2, 3}, {4, 5}, {3, 5},
                                    {2, 2}, {3, 3}, {3, 2}};
    for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++) {
        const frt_wino_variant *v = frt_wino_variant_get((frt_isa)t);
        if (t > FRT_ISA_PORTABLE && v->isa == FRT_ISA_PORTABLE) continue;
        for (size_t q = 0; q < sizeof mr / sizeof *mr; q++) {
            double worst = 0;
            int cases = 0;
            for (int64_t b = 8; b <= 16; b += 8)
                for (size_t hi = 0; hi < sizeof HWs / sizeof *HWs; hi++)
                    for (size_t ci = 0; ci < sizeof Cs / sizeof *Cs; ci += 2) {
                        size_t k = hi + ci + q + (size_t)b;
                        int64_t r = mr[q][1], axis = (int64_t)(k % 2);
                        /* pads: "same" ((r - 1) / 2 each side), none, or uneven */
                        int64_t lo = k % 3 == 0 ? (r - 1) / 2 : k % 3 == 1 ? 0 : r - 1;
                        int64_t hp = k % 3 == 0 ? r - 1 - lo : k % 3 == 1 ? 0 : 1;
                        int64_t T = k % 4 == 0 ? 0 : (int64_t)(k % 4) * 5 - 4;
                        /* taps across the axis: 1, or (two cases in three) 1..5 with pads
                           "same" or all before */
                        int64_t kd = k % 3 == 2 ? 1 : (int64_t)(k / 3 % 5) + 1;
                        int64_t clo = k % 2 ? (kd - 1) / 2 : kd - 1, chi = k % 2 ? kd / 2 : 0;
                        run_case1(v, Cs[ci], Cs[(ci + 3 * hi + q) % 7], HWs[hi][0], HWs[hi][1],
                                  r, axis, lo, hp, kd, clo, chi, mr[q][0], b, (int)(k % 3),
                                  (int)(k / 2 % 2), T, (int64_t)(k % 3) + 1, &worst);
                        cases++;
                    }
            /* inception_v3's shapes (17x17, 192 channels; 8x8, 384), all activations */
            for (int act = 0; act < 3; act++)
                run_case1(v, mr[q][1] == 3 ? 384 : 160, 192, mr[q][1] == 3 ? 8 : 17,
                          mr[q][1] == 3 ? 8 : 17, mr[q][1], act % 2, (mr[q][1] - 1) / 2,
                          mr[q][1] / 2, 1, 0, 0, mr[q][0], 8, act, act != 1, 0, act + 1, &worst);
            /* its 5x5 (48 -> 64 at 35x35, pads 2) as kd 5 */
            if (mr[q][1] == 5)
                run_case1(v, 48, 64, 35, 35, 5, 0, 2, 2, 5, 2, 2, mr[q][0], 8, FRT_WINO_RELU, 0,
                          0, 1, &worst);
            printf("wino1%s F(%lld,%lld): %d cases, worst |y - ref| / sum|w x| = %.3g\n",
                   v->suffix, (long long)mr[q][0], (long long)mr[q][1], cases + 3, worst);
        }
    }
}

int main(void) {
    test_cases1();
    test_plan();
    test_cases();
    g_m = 2, g_cases = 0, g_worst = 0;
    test_cases();
    g_s = 2, g_cases = 0, g_worst = 0;
    test_cases();
    TEST_MAIN_END();
}
