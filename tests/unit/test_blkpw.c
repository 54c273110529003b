/* The blocked pointwise convolution loops (src/ops/blkpw.h) of every tier from portable up to the
 * one this process runs, against a double-precision reference over plain channel indices: channel
 * counts with and without a padded last block (input and output), 1 to 5 output blocks (the
 * AVX2 loop's 3-, 2+2-, 2- and 1-block groups), pixel counts below, at and above its 4/6/8-pixel
 * tiles, pixel ranges starting and ending mid-tile, with and without a residual input (also z ==
 * y), each activation, NaN in the padding lanes of x and z (must not leak) and in the whole output
 * buffer beforehand (every element of the range must be written, nothing outside it). The SIMD
 * loop must give the portable twin's bits exactly (both are the same chain of fused
 * multiply-adds; SiLU, whose SIMD form is vsilu of vec_avx2.h and the portable one expf: within
 * 5e-6 relative, 1e-30 absolute), and a run split into pixel ranges the bits of one run over all
 * pixels. */
#include "ops/blkpw.h"
#include "test_util.h"

static frt_isa tier_hi(void) { return FRT_HAVE_X86 ? frt_cpu_tier() : FRT_ISA_PORTABLE; }

static double ref_act(int act, double v) {
    if (act == FRT_BLKPW_RELU) return v < 0 ? 0 : v;
    if (act == FRT_BLKPW_CLIP) return v < -0.5 ? -0.5 : v > 1.5 ? 1.5 : v;
    if (act == FRT_BLKPW_SILU) return v == -INFINITY ? NAN : v / (1.0 + exp(-v));
    if (act == FRT_BLKPW_HARDSWISH) {
        double h = v / 6.0 + 0.5;
        return isnan(v) ? v : v * (h < 0 ? 0 : h > 1 ? 1 : h);
    }
    return v;
}

static int g_cases;

/* C -> M channels, S pixels, output range [s0, s1); zmode 0: no residual, 1: z, 2: z == y;
   input channel slices of kc (0: none). */
static void run_case_kc(const frt_blkpw_variant *v, int64_t C, int64_t M, int64_t S, int64_t s0,
                        int64_t s1, int act, int zmode, int64_t kc) {
    int64_t cb = (C + 7) / 8, mb = (M + 7) / 8;
    size_t nx = (size_t)(cb * S * 8), ny = (size_t)(mb * S * 8);
    float *xp = malloc((size_t)(C * S) * 4), *zp = malloc((size_t)(M * S) * 4);
    float *wt = malloc((size_t)(M * C) * 4), *bt = malloc((size_t)M * 4);
    float *x = malloc(nx * 4), *z = malloc(ny * 4), *y = malloc(ny * 4), *y0 = malloc(ny * 4);
    float *w = malloc((size_t)(mb * C * 8) * 4), *bias = malloc((size_t)(mb * 8) * 4);
    t_fill(xp, (size_t)(C * S), (unsigned)(C * 7 + S));
    t_fill(zp, (size_t)(M * S), (unsigned)(M * 5 + S));
    t_fill(wt, (size_t)(M * C), (unsigned)(M * 11 + C));
    t_fill(bt, (size_t)M, (unsigned)(M + 3));
    for (int64_t i = 0; i < C * S; i++) xp[i] *= 2.0f; /* reach the activations' bends */
    for (int64_t k = 0; k < cb; k++)
        for (int64_t s = 0; s < S; s++)
            for (int64_t l = 0; l < 8; l++) {
                int64_t c = k * 8 + l;
                x[(k * S + s) * 8 + l] = c < C ? xp[c * S + s] : NAN;
            }
    for (int64_t k = 0; k < mb; k++)
        for (int64_t s = 0; s < S; s++)
            for (int64_t l = 0; l < 8; l++) {
                int64_t m = k * 8 + l;
                z[(k * S + s) * 8 + l] = m < M ? zp[m * S + s] : NAN;
            }
    frt_blkpw_pack(wt, bt, C, M, w, bias);
    frt_blkpw_geom g = {C, M, S, act, -0.5f, 1.5f, kc};
    const float *zz = NULL;
    if (zmode == 1) zz = z;
    for (size_t i = 0; i < ny; i++) y[i] = y0[i] = NAN;
    if (zmode == 2) {
        memcpy(y, z, ny * 4);
        memcpy(y0, z, ny * 4);
    }
    v->run(x, w, bias, zmode == 2 ? y : zz, y, &g, s0, s1);
    frt_blkpw_portable(x, w, bias, zmode == 2 ? y0 : zz, y0, &g, s0, s1);
    size_t bad = ny, badt = ny;
    double want = 0;
    for (int64_t k = 0; k < mb; k++)
        for (int64_t s = 0; s < S; s++)
            for (int64_t l = 0; l < 8; l++) {
                int64_t m = k * 8 + l;
                size_t at = (size_t)((k * S + s) * 8 + l);
                double r;
                if (s < s0 || s >= s1) {
                    /* outside the range: untouched */
                    if (zmode == 2 ? memcmp(&y[at], &z[at], 4) != 0 : !isnan(y[at])) {
                        if (bad == ny) bad = at, want = NAN;
                    }
                    continue;
                }
                if (m < M) {
                    r = bt[m];
                    for (int64_t c = 0; c < C; c++) r += (double)wt[m * C + c] * xp[c * S + s];
                    if (zmode) r += zp[m * S + s];
                    r = ref_act(act, r);
                } else {
                    r = 0;
                }
                double tol = 1e-5 * (1.0 + fabs(r)) * (1.0 + (double)C / 64.0);
                if (bad == ny && !(fabs(y[at] - r) <= tol)) bad = at, want = r;
                bool same = act == FRT_BLKPW_SILU
                                ? fabs((double)y[at] - y0[at]) <= 5e-6 * fabs((double)y0[at]) + 1e-30
                                : memcmp(&y[at], &y0[at], 4) == 0;
                if (badt == ny && !same) badt = at;
            }
    CHECK_MSG(bad == ny && badt == ny,
              "blkpw%s C=%lld M=%lld S=%lld [%lld,%lld) act %d z %d kc %lld: element %zu is %g, "
              "want %g; element %zu differs from the portable loop (%g / %g)",
              v->suffix, (long long)C, (long long)M, (long long)S, (long long)s0, (long long)s1,
              act, zmode, (long long)kc, bad, bad < ny ? y[bad] : 0.0, want, badt, badt < ny ? y[badt] : 0.0,
              badt < ny ? y0[badt] : 0.0);
    /* a split into pixel ranges gives the bits of the whole range */
    if (s1 - s0 >= 3 && zmode != 2) {
        float *y2 = malloc(ny * 4);
        for (size_t i = 0; i < ny; i++) y2[i] = NAN;
        int64_t a = s0 + (s1 - s0) / 3, b = s0 + (s1 - s0) * 2 / 3 + 1;
        v->run(x, w, bias, zz, y2, &g, b, s1);
        v->run(x, w, bias, zz, y2, &g, s0, a);
        v->run(x, w, bias, zz, y2, &g, a, b);
        size_t d = ny;
        for (size_t i = 0; i < ny && d == ny; i++)
            if (memcmp(&y[i], &y2[i], 4) != 0 && !(isnan(y[i]) && isnan(y2[i]))) d = i;
        CHECK_MSG(d == ny, "blkpw%s C=%lld M=%lld S=%lld: split at %lld, %lld differs at %zu",
                  v->suffix, (long long)C, (long long)M, (long long)S, (long long)a,
                  (long long)b, d);
        free(y2);
    }
    g_cases++;
    free(xp), free(zp), free(wt), free(bt), free(x), free(z), free(y), free(y0), free(w);
    free(bias);
}

static void run_case(const frt_blkpw_variant *v, int64_t C, int64_t M, int64_t S, int64_t s0,
                     int64_t s1, int act, int zmode) {
    run_case_kc(v, C, M, S, s0, s1, act, zmode, 0);
}

static void test_loops(void) {
    static const int64_t Cs[] = {1, 8, 13, 32, 96};
    static const int64_t Ms[] = {1, 8, 16, 20, 24, 32, 40};
    static const int64_t Ss[] = {1, 3, 4, 6, 7, 13, 15, 24, 49, 57, 100};
    for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++) {
        const frt_blkpw_variant *v = frt_blkpw_variant_get((frt_isa)t);
        frt_isa want = t >= FRT_ISA_AVX2 ? FRT_ISA_AVX2 : FRT_ISA_PORTABLE;
        CHECK_MSG(v->isa == want, "tier %s: variant of tier %s", frt_isa_name(t),
                  frt_isa_name(v->isa));
        if (t > FRT_ISA_PORTABLE && v->isa == FRT_ISA_PORTABLE) continue;
        for (size_t ci = 0; ci < sizeof Cs / sizeof *Cs; ci++)
            for (size_t mi = 0; mi < sizeof Ms / sizeof *Ms; mi++)
                for (size_t si = 0; si < sizeof Ss / sizeof *Ss; si++) {
                    int64_t S = Ss[si];
                    int act = (int)((ci + mi + si) % 5), zmode = (int)((ci + 2 * mi + si) % 3);
                    run_case(v, Cs[ci], Ms[mi], S, 0, S, act, zmode);
                    if (S > 2) run_case(v, Cs[ci], Ms[mi], S, 1, S - 1, (act + 1) % 5, zmode);
                }
        for (int act = 0; act < 5; act++)
            for (int zmode = 0; zmode < 3; zmode++) run_case(v, 24, 24, 57, 5, 50, act, zmode);
        /* input channel slices: the same bits as one pass (the portable loop has none), the
           last slice whole or cut in a block (C 13, 101, 600, 1001), every tile group width
           (M 8, 16, 24, 40, 56), full tiles and tails (S 7, 13, 49), ranges and the residual */
        static const int64_t Ks[][2] = {{13, 8}, {101, 16}, {101, 48}, {600, 256}, {1001, 256}};
        static const int64_t Ms2[] = {8, 16, 24, 40, 56};
        static const int64_t Ss2[] = {7, 13, 49};
        for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++)
            for (size_t mi = 0; mi < sizeof Ms2 / sizeof *Ms2; mi++)
                for (size_t si = 0; si < sizeof Ss2 / sizeof *Ss2; si++) {
                    int64_t S = Ss2[si];
                    int act = (int)((ki + mi + si) % 5), zmode = (int)((ki + 2 * mi + si) % 3);
                    run_case_kc(v, Ks[ki][0], Ms2[mi], S, 0, S, act, zmode, Ks[ki][1]);
                    run_case_kc(v, Ks[ki][0], Ms2[mi], S, 1, S - 1, (act + 1) % 5, (zmode + 1) % 3,
                                Ks[ki][1]);
                }
    }
    CHECK_MSG(g_cases > 600, "only %d cases ran", g_cases);
}

/* NaN stays NaN through every activation; the padding lanes stay 0 with NaN in x and z. */
static void test_specials(void) {
    static const float in[] = {NAN, -INFINITY, INFINITY, -100.0f, 100.0f, -0.0f, -3.0f, 3.0f, 2.5f};
    for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++) {
        const frt_blkpw_variant *v = frt_blkpw_variant_get((frt_isa)t);
        for (int act = 0; act < 5; act++)
            for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
                /* 1 -> 1 channel, 1 pixel, weight 1, no bias: the output is act(x) */
                float x[8], w[8] = {1}, bias[8] = {0}, y[8];
                for (int l = 0; l < 8; l++) x[l] = l ? NAN : in[i];
                frt_blkpw_geom g = {1, 1, 1, act, -0.5f, 1.5f, 0};
                v->run(x, w, bias, NULL, y, &g, 0, 1);
                double r = ref_act(act, in[i]);
                bool ok = isnan(r) ? isnan(y[0])
                          : act >= FRT_BLKPW_SILU ? y[0] == r || fabs(y[0] - r) <= 5e-6 * fabs(r) + 1e-30
                                                  : y[0] == r;
                CHECK_MSG(ok, "blkpw%s act %d of %g: %g, want %g", v->suffix, act,
                          (double)in[i], (double)y[0], r);
                for (int l = 1; l < 8; l++)
                    CHECK_MSG(y[l] == 0.0f, "blkpw%s act %d: padding lane %d is %g", v->suffix,
                              act, l, (double)y[l]);
            }
    }
}

int main(void) {
    test_loops();
    test_specials();
    TEST_MAIN_END();
}
