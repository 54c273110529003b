/* The inverted-residual strip loop (src/ops/blkir.h) of every tier from portable up to the one
 * this process runs:
 *  - against the three unfused kernels of the same variant run one after another over whole
 *    images (blkpw expand, blkdw depthwise, blkpw project): the same bits, for every strip height
 *    R (1 row up to more than the image), row ranges split in parts, stride 1 and 2, pads 0 and
 *    1, odd widths and heights, channel counts with a padded last block, with and without the
 *    residual input;
 *  - against a double-precision reference over plain channel indices (so a wrong strip offset
 *    or pad cannot hide behind the unfused kernels);
 *  - NaN in the input's and residual's padding lanes and in the whole output beforehand: every
 *    output element written, padding lanes 0, nothing leaks. */
#include "ops/blkir.h"
#include "test_util.h"

static frt_isa tier_hi(void) { return FRT_HAVE_X86 ? frt_cpu_tier() : FRT_ISA_PORTABLE; }

static double clip6(double v) { return v < 0 ? 0 : v > 6 ? 6 : v; }

static int g_cases;

typedef struct ir_case {
    int64_t C, E, M, H, W, S, pt, pb, pl, pr;
    int resid;
} ir_case;

static float *blk(const float *plain, int64_t C, int64_t HW) {
    int64_t cb = (C + 7) / 8;
    float *b = malloc((size_t)(cb * HW * 8) * 4);
    for (int64_t k = 0; k < cb; k++)
        for (int64_t s = 0; s < HW; s++)
            for (int64_t l = 0; l < 8; l++) {
                int64_t c = k * 8 + l;
                b[(k * HW + s) * 8 + l] = c < C ? plain[c * HW + s] : NAN;
            }
    return b;
}

static void run_case(const frt_blkir_variant *v, const ir_case *t) {
    int64_t C = t->C, E = t->E, M = t->M, H = t->H, W = t->W, S = t->S;
    int64_t OH = (H + t->pt + t->pb - 3) / S + 1, OW = (W + t->pl + t->pr - 3) / S + 1;
    int64_t eb = (E + 7) / 8, mb = (M + 7) / 8;
    float *xp = malloc((size_t)(C * H * W) * 4), *zp = malloc((size_t)(M * OH * OW) * 4);
    float *we = malloc((size_t)(E * C) * 4), *be = malloc((size_t)E * 4);
    float *wd = malloc((size_t)(E * 9) * 4), *bd = malloc((size_t)E * 4);
    float *wp = malloc((size_t)(M * E) * 4), *bp = malloc((size_t)M * 4);
    t_fill(xp, (size_t)(C * H * W), (unsigned)(C * 7 + H * 3 + W));
    t_fill(zp, (size_t)(M * OH * OW), (unsigned)(M * 5 + OH));
    t_fill(we, (size_t)(E * C), (unsigned)(E * 11 + C));
    t_fill(be, (size_t)E, (unsigned)(E + 3));
    t_fill(wd, (size_t)(E * 9), (unsigned)(E * 13 + 1));
    t_fill(bd, (size_t)E, (unsigned)(E + 9));
    t_fill(wp, (size_t)(M * E), (unsigned)(M * 17 + E));
    t_fill(bp, (size_t)M, (unsigned)(M + 5));
    for (int64_t i = 0; i < C * H * W; i++) xp[i] *= 8.0f; /* reach the clip's upper bend */
    float *x = blk(xp, C, H * W), *z = t->resid ? blk(zp, M, OH * OW) : NULL;
    float *pwe = malloc((size_t)(eb * C * 8) * 4), *pbe = malloc((size_t)(eb * 8) * 4);
    float *pwd = malloc((size_t)(eb * 9 * 8) * 4), *pbd = malloc((size_t)(eb * 8) * 4);
    float *pwp = malloc((size_t)(mb * E * 8) * 4), *pbp = malloc((size_t)(mb * 8) * 4);
    frt_blkpw_pack(we, be, C, E, pwe, pbe);
    frt_blkdw_pack(wd, bd, E, 3, 8, pwd, pbd);
    frt_blkpw_pack(wp, bp, E, M, pwp, pbp);
    frt_blkir_weights wts = {pwe, pbe, pwd, pbd, pwp, pbp};
    size_t ny = (size_t)(mb * OH * OW * 8);

    /* unfused: whole images through the same variant's kernels */
    float *em = malloc((size_t)(eb * H * W * 8) * 4), *dm = malloc((size_t)(eb * OH * OW * 8) * 4);
    float *y0 = malloc(ny * 4);
    frt_blkpw_geom ge = {C, E, H * W, FRT_BLKPW_CLIP, 0.0f, 6.0f, 0, 0};
    v->pw(x, pwe, pbe, NULL, em, &ge, 0, H * W);
    frt_blkdw_geom gd = {E, H, W, OH, OW, 3, S, t->pt, t->pl, FRT_BLKDW_CLIP, 0.0f, 6.0f, 0, 0};
    v->dw(em, pwd, pbd, dm, &gd, 8);
    frt_blkpw_geom gp = {E, M, OH * OW, FRT_BLKPW_NONE, 0.0f, 0.0f, 0, 0};
    v->pw(dm, pwp, pbp, z, y0, &gp, 0, OH * OW);

    /* the double reference of the first output elements (all of a small image) */
    size_t bad_ref = ny;
    double want = 0;
    {
        double *e = malloc((size_t)(E * H * W) * sizeof(double));
        double *d = malloc((size_t)(E * OH * OW) * sizeof(double));
        for (int64_t c = 0; c < E; c++)
            for (int64_t s = 0; s < H * W; s++) {
                double r = be[c];
                for (int64_t i = 0; i < C; i++) r += (double)we[c * C + i] * xp[i * H * W + s];
                e[c * H * W + s] = clip6(r);
            }
        for (int64_t c = 0; c < E; c++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double r = bd[c];
                    for (int64_t i = 0; i < 3; i++)
                        for (int64_t j = 0; j < 3; j++) {
                            int64_t ih = oh * S - t->pt + i, iw = ow * S - t->pl + j;
                            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                r += (double)wd[c * 9 + i * 3 + j] * e[(c * H + ih) * W + iw];
                        }
                    d[(c * OH + oh) * OW + ow] = clip6(r);
                }
        for (int64_t k = 0; k < mb && bad_ref == ny; k++)
            for (int64_t s = 0; s < OH * OW && bad_ref == ny; s++)
                for (int64_t l = 0; l < 8; l++) {
                    int64_t m = k * 8 + l;
                    size_t at = (size_t)((k * OH * OW + s) * 8 + l);
                    double r = 0;
                    if (m < M) {
                        r = bp[m] + (t->resid ? zp[m * OH * OW + s] : 0.0);
                        for (int64_t c = 0; c < E; c++)
                            r += (double)wp[m * E + c] * d[c * OH * OW + s];
                    }
                    double tol = 1e-4 * (1.0 + fabs(r)) * (1.0 + (double)(C + E) / 64.0);
                    if (!(fabs(y0[at] - r) <= tol)) {
                        bad_ref = at, want = r;
                        break;
                    }
                }
        free(e), free(d);
    }
    CHECK_MSG(bad_ref == ny, "blkir%s unfused C=%lld E=%lld M=%lld %lldx%lld S=%lld: element %zu "
              "is %g, want %g", v->suffix, (long long)C, (long long)E, (long long)M, (long long)H,
              (long long)W, (long long)S, bad_ref, bad_ref < ny ? y0[bad_ref] : 0.0, want);

    /* fused, strip heights 1 .. OH + 1, in one range and in two parts (r = 0..split, split..OH) */
    float *y = malloc(ny * 4);
    for (int64_t R = 1; R <= OH + 1; R += R < 4 ? 1 : 3) {
        frt_blkir_geom g = {C, E, M, H, W, OH, OW, S, t->pt, t->pl, FRT_BLKPW_CLIP,
                            FRT_BLKDW_CLIP, 0.0f, 6.0f, 0.0f, 6.0f, R};
        float *scr = malloc(frt_blkir_scratch_floats(&g) * 4);
        for (int parts = 1; parts <= 2; parts++) {
            for (size_t i = 0; i < ny; i++) y[i] = NAN;
            for (size_t i = 0; i < frt_blkir_scratch_floats(&g); i++) scr[i] = NAN;
            int64_t split = parts == 1 ? OH : OH / 2 + 1 > OH ? OH : OH / 2 + 1;
            frt_blkir_rows(v, x, &wts, z, y, &g, split, OH, scr);
            frt_blkir_rows(v, x, &wts, z, y, &g, 0, split, scr);
            size_t d = ny;
            for (size_t i = 0; i < ny && d == ny; i++)
                if (memcmp(&y[i], &y0[i], 4) != 0) d = i;
            CHECK_MSG(d == ny, "blkir%s C=%lld E=%lld M=%lld %lldx%lld S=%lld pads %lld,%lld "
                      "R=%lld parts %d: element %zu is %g, unfused %g", v->suffix, (long long)C,
                      (long long)E, (long long)M, (long long)H, (long long)W, (long long)S,
                      (long long)t->pt, (long long)t->pl, (long long)R, parts, d,
                      d < ny ? y[d] : 0.0, d < ny ? y0[d] : 0.0);
            g_cases++;
        }
        free(scr);
    }
    free(y), free(y0), free(em), free(dm), free(x), free(z), free(xp), free(zp);
    free(we), free(be), free(wd), free(bd), free(wp), free(bp);
    free(pwe), free(pbe), free(pwd), free(pbd), free(pwp), free(pbp);
}

static void test_strips(void) {
    static const ir_case cases[] = {
        /* C   E   M   H   W  S pt pb pl pr resid */
        {16, 96, 24, 12, 13, 2, 1, 1, 1, 1, 0},  /* features.2-like, odd width */
        {24, 144, 24, 9, 8, 1, 1, 1, 1, 1, 1},   /* features.3-like, residual */
        {5, 30, 7, 7, 9, 1, 1, 1, 1, 1, 1},      /* padded blocks everywhere */
        {8, 48, 16, 11, 5, 2, 1, 1, 1, 1, 0},    /* odd height, stride 2 */
        {13, 20, 9, 6, 7, 2, 0, 1, 0, 1, 0},     /* stride 2, pads only at the end */
        {8, 8, 8, 1, 1, 1, 1, 1, 1, 1, 1},       /* one pixel */
        {32, 40, 32, 4, 17, 1, 0, 0, 0, 0, 1},   /* no pads: the image shrinks by 2 */
        {3, 17, 3, 10, 3, 2, 1, 0, 1, 0, 0},     /* stride 2, pads only at the start */
    };
    for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++) {
        const frt_blkir_variant *v = frt_blkir_variant_get((frt_isa)t);
        frt_isa want = t >= FRT_ISA_AVX2 ? FRT_ISA_AVX2 : FRT_ISA_PORTABLE;
        CHECK_MSG(v->isa == want, "tier %s: variant of tier %s", frt_isa_name(t),
                  frt_isa_name(v->isa));
        if (t > FRT_ISA_PORTABLE && v->isa == FRT_ISA_PORTABLE) continue;
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) run_case(v, &cases[i]);
    }
    CHECK_MSG(g_cases > 60, "only %d cases ran", g_cases);
}

int main(void) {
    test_strips();
    TEST_MAIN_END();
}
