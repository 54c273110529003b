/* The blocked-layout loops (src/ops/blocked.h) of every tier from portable up to the one this
 * process runs, against a naive reference written over plain channel indices: blocks 8 and 16,
 * channel counts with and without a padded last block, spatial sizes covering the 4-wide unroll
 * and its tails, garbage (NaN) in the padding lanes of both inputs, in place. Exact: a product of
 * two floats is the same in every variant (and the affine map's product, then sum). */
#include "ops/blocked.h"
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>

static frt_isa tier_hi(void) { return FRT_HAVE_X86 ? frt_cpu_tier() : FRT_ISA_PORTABLE; }

/* Fills blocked [cb, S, b] with values of plain [C, S] (channel c at block c/b, lane c%b), NaN in
 * the padding lanes. */
static void to_blocked(const float *plain, float *blk, int64_t C, int64_t S, int64_t b) {
    int64_t cb = (C + b - 1) / b;
    for (int64_t k = 0; k < cb; k++)
        for (int64_t s = 0; s < S; s++)
            for (int64_t l = 0; l < b; l++) {
                int64_t c = k * b + l;
                blk[(k * S + s) * b + l] = c < C ? plain[c * S + s] : NAN;
            }
}

static void test_chanmul(void) {
    static const int64_t Cs[] = {1, 7, 8, 9, 16, 24, 40, 33};
    static const int64_t Ss[] = {1, 3, 4, 5, 49, 50};
    static const int64_t bs[] = {8, 16};
    for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++) {
        for (size_t bi = 0; bi < 2; bi++) {
            const frt_blk_variant *v = frt_blk_variant_get((frt_isa)t, bs[bi]);
            /* AVX-512 loops take b = 16, AVX2 loops b = 8 (also on an AVX-512 tier), portable
             * ones any b */
            frt_isa want = bs[bi] == 16 && t >= FRT_ISA_AVX512 ? FRT_ISA_AVX512
                           : bs[bi] == 8 && t >= FRT_ISA_AVX2  ? FRT_ISA_AVX2
                                                               : FRT_ISA_PORTABLE;
            CHECK_MSG(v->isa == want, "tier %s, block %lld: variant of tier %s", frt_isa_name(t),
                      (long long)bs[bi], frt_isa_name(v->isa));
            for (size_t ci = 0; ci < sizeof Cs / sizeof *Cs; ci++)
                for (size_t si = 0; si < sizeof Ss / sizeof *Ss; si++) {
                    int64_t b = bs[bi], C = Cs[ci], S = Ss[si], cb = (C + b - 1) / b;
                    size_t nb = (size_t)(cb * S * b);
                    float *xp = malloc((size_t)(C * S) * 4), *gp = malloc((size_t)C * 4);
                    float *x = malloc(nb * 4), *g = malloc((size_t)(cb * b) * 4);
                    float *y = malloc(nb * 4), *ref = malloc(nb * 4);
                    t_fill(xp, (size_t)(C * S), (unsigned)(C * 31 + S));
                    t_fill(gp, (size_t)C, (unsigned)(C + 5));
                    /* the reference: plain product, then the blocked arrangement, zero padding */
                    float *yp = malloc((size_t)(C * S) * 4);
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t s = 0; s < S; s++) yp[c * S + s] = xp[c * S + s] * gp[c];
                    to_blocked(yp, ref, C, S, b);
                    for (int64_t k = 0; k < cb; k++)
                        for (int64_t s = 0; s < S; s++)
                            for (int64_t l = 0; l < b; l++)
                                if (k * b + l >= C) ref[(k * S + s) * b + l] = 0.0f;
                    to_blocked(xp, x, C, S, b);
                    to_blocked(gp, g, C, 1, b);
                    for (int inplace = 0; inplace < 2; inplace++) {
                        float *out = inplace ? x : y;
                        if (!inplace)
                            for (size_t i = 0; i < nb; i++) y[i] = NAN;
                        v->chanmul(x, g, out, C, S, b);
                        size_t bad = nb;
                        for (size_t i = 0; i < nb && bad == nb; i++)
                            if (memcmp(&out[i], &ref[i], 4) != 0) bad = i;
                        CHECK_MSG(bad == nb,
                                  "chanmul%s b=%lld C=%lld S=%lld%s: element %zu is %g, want %g",
                                  v->suffix, (long long)b, (long long)C, (long long)S,
                                  inplace ? " in place" : "", bad, bad < nb ? out[bad] : 0.0,
                                  bad < nb ? ref[bad] : 0.0);
                    }
                    free(xp), free(gp), free(x), free(g), free(y), free(ref), free(yp);
                }
        }
    }
}

/* ---- per-channel affine map ---- */

static void test_affine(void) {
    static const int64_t Cs[] = {1, 7, 8, 9, 16, 24, 40, 33};
    static const int64_t Ss[] = {1, 3, 5, 49};
    static const int64_t bs[] = {8, 16};
    for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++)
        for (size_t bi = 0; bi < 2; bi++) {
            const frt_blk_variant *v = frt_blk_variant_get((frt_isa)t, bs[bi]);
            frt_blk_affine_fn fn = v->affine;
            /* the AVX2 loops take any multiple of 8 (the provider's choice on either tier) */
            if (t >= FRT_ISA_AVX2 && FRT_HAVE_X86) fn = frt_blk_variant_get((frt_isa)t, 8)->affine;
            for (size_t ci = 0; ci < sizeof Cs / sizeof *Cs; ci++)
                for (size_t si = 0; si < sizeof Ss / sizeof *Ss; si++)
                    for (int relu = 0; relu < 2; relu++) {
                        int64_t b = bs[bi], C = Cs[ci], S = Ss[si], cb = (C + b - 1) / b;
                        size_t nb = (size_t)(cb * S * b);
                        float *xp = malloc((size_t)(C * S) * 4), *ap = malloc((size_t)C * 4);
                        float *cp = malloc((size_t)C * 4), *yp = malloc((size_t)(C * S) * 4);
                        float *x = malloc(nb * 4), *a = malloc((size_t)(cb * b) * 4);
                        float *c = malloc((size_t)(cb * b) * 4);
                        float *y = malloc(nb * 4), *ref = malloc(nb * 4);
                        t_fill(xp, (size_t)(C * S), (unsigned)(C * 17 + S));
                        t_fill(ap, (size_t)C, (unsigned)(C + 3));
                        t_fill(cp, (size_t)C, (unsigned)(C + 11));
                        for (int64_t ch = 0; ch < C; ch++)
                            for (int64_t q = 0; q < S; q++) {
                                float pr = xp[ch * S + q] * ap[ch];
                                float r = pr + cp[ch];
                                yp[ch * S + q] = relu && !(r > 0.0f) ? 0.0f : r;
                            }
                        to_blocked(yp, ref, C, S, b);
                        to_blocked(xp, x, C, S, b);
                        to_blocked(ap, a, C, 1, b);
                        to_blocked(cp, c, C, 1, b);
                        /* blocks [k0, k1) written, padding lanes 0, the others untouched */
                        int64_t k0 = cb > 2 ? 1 : 0, k1 = cb > 2 ? cb - 1 : cb;
                        for (int64_t k = 0; k < cb; k++)
                            for (int64_t q = 0; q < S; q++)
                                for (int64_t l = 0; l < b; l++) {
                                    float *e = &ref[(k * S + q) * b + l];
                                    if (k < k0 || k >= k1) *e = -7.0f;
                                    else if (k * b + l >= C) *e = 0.0f;
                                }
                        for (size_t i = 0; i < nb; i++) y[i] = -7.0f;
                        fn(x, a, c, y, C, S, b, k0, k1, relu);
                        size_t bad = nb;
                        for (size_t i = 0; i < nb && bad == nb; i++)
                            if (memcmp(&y[i], &ref[i], 4) != 0) bad = i;
                        CHECK_MSG(bad == nb,
                                  "affine tier %s b=%lld C=%lld S=%lld relu %d: element %zu is %g, "
                                  "want %g", frt_isa_name(t), (long long)b, (long long)C,
                                  (long long)S, relu, bad, bad < nb ? y[bad] : 0.0,
                                  bad < nb ? ref[bad] : 0.0);
                        /* in place, every block */
                        to_blocked(yp, ref, C, S, b);
                        for (int64_t k = 0; k < cb; k++)
                            for (int64_t q = 0; q < S; q++)
                                for (int64_t l = 0; l < b; l++)
                                    if (k * b + l >= C) ref[(k * S + q) * b + l] = 0.0f;
                        fn(x, a, c, x, C, S, b, 0, cb, relu);
                        CHECK_MSG(!memcmp(x, ref, nb * 4), "affine tier %s b=%lld C=%lld S=%lld "
                                  "relu %d: in place differs", frt_isa_name(t), (long long)b,
                                  (long long)C, (long long)S, relu);
                        free(xp), free(ap), free(cp), free(yp), free(x), free(a), free(c);
                        free(y), free(ref);
                    }
        }
}

/* ---- pooling ---- */

/* ONNX output size of one axis (NOTSET pads pb, pe; ceil_mode drops a last window that starts
 * in the end padding) */
static int64_t pool_out(int64_t n, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                        int ceil_mode) {
    int64_t num = n + pb + pe - ((k - 1) * d + 1);
    int64_t o = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
    if (ceil_mode && (o - 1) * s >= n + pb) o--;
    return o;
}

/* The plain NCHW reference, written from the ONNX definition: x [C, H, W] -> y [C, OH, OW]. */
static void pool_ref(const frt_blk_pool_geom *g, const float *x, float *y) {
    for (int64_t c = 0; c < g->C; c++)
        for (int64_t oh = 0; oh < g->OH; oh++)
            for (int64_t ow = 0; ow < g->OW; ow++) {
                float acc = g->max ? -FLT_MAX : 0.0f;
                int64_t cnt = 0;
                for (int64_t i = 0; i < g->kh; i++)
                    for (int64_t j = 0; j < g->kw; j++) {
                        int64_t ih = oh * g->sh - g->ph + i * g->dh;
                        int64_t iw = ow * g->sw - g->pw + j * g->dw;
                        if (ih >= g->ch0 && ih < g->ch1 && iw >= g->cw0 && iw < g->cw1) cnt++;
                        if (ih < 0 || ih >= g->H || iw < 0 || iw >= g->W) continue;
                        float v = x[(c * g->H + ih) * g->W + iw];
                        if (g->max) acc = v > acc ? v : acc;
                        else acc += v;
                    }
                y[(c * g->OH + oh) * g->OW + ow] =
                    g->max ? acc : acc * (cnt > 0 ? 1.0f / (float)cnt : 0.0f);
            }
}

typedef struct pool_case {
    int max, ceil_mode, include_pad;
    int64_t H, W, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
} pool_case;

static void test_pool(void) {
    static const pool_case cases[] = {
        /* max inc H W kh kw sh sw dh dw  pads t l b r */
        {1, 1, 0, 27, 27, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0},    /* squeezenet1_1, ceil_mode */
        {1, 1, 0, 28, 26, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0},
        {1, 0, 0, 16, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},    /* resnet stem */
        {1, 0, 0, 15, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
        {1, 0, 0, 11, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},    /* 3x3 max, stride 1 (max3x3_s1) */
        {1, 0, 0, 9, 23, 3, 3, 1, 2, 1, 1, 0, 2, 0, 1},     /* stride 1 x 2, left pads 2 */
        {1, 0, 0, 9, 11, 2, 3, 1, 2, 2, 1, 1, 0, 1, 2},     /* dilation, uneven pads */
        {1, 1, 0, 10, 10, 2, 2, 3, 3, 1, 1, 0, 0, 0, 0},    /* stride > kernel, ceil */
        {1, 0, 0, 7, 7, 7, 7, 1, 1, 1, 1, 0, 0, 0, 0},      /* 1x1 output (global) */
        {1, 0, 0, 1, 20, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1},     /* 1-D */
        {1, 0, 0, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},      /* all edge outputs */
        {0, 0, 0, 14, 14, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0},    /* densenet transition */
        {0, 0, 0, 13, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},    /* exclude pad */
        {0, 0, 1, 17, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},    /* inception_v3 (avg3x3_s1) */
        {0, 0, 0, 9, 21, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},     /* avg3x3_s2, exclude pad */
        {0, 0, 1, 13, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},    /* include pad */
        {0, 1, 1, 12, 12, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},    /* include pad + ceil_mode */
        {0, 1, 0, 12, 11, 3, 3, 2, 2, 1, 1, 1, 0, 1, 0},    /* exclude pad + ceil_mode */
        {0, 0, 0, 7, 7, 7, 7, 1, 1, 1, 1, 0, 0, 0, 0},      /* global average */
        {0, 0, 1, 10, 9, 5, 3, 2, 1, 2, 2, 2, 2, 3, 1},     /* dilation, include pad */
        {0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
        {0, 0, 0, 5, 3, 5, 3, 1, 1, 1, 1, 0, 0, 0, 0},      /* global average, 15 positions */
        {1, 0, 0, 5, 3, 5, 3, 1, 1, 1, 1, 0, 0, 0, 0},      /* global max */
        {0, 0, 0, 28, 28, 28, 28, 1, 1, 1, 1, 0, 0, 0, 0},  /* global average, 784 positions */
        {1, 0, 0, 1, 7, 1, 7, 1, 1, 1, 1, 0, 0, 0, 0},      /* 1-D global max */
        {1, 1, 0, 13, 15, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0},    /* max2x2_s2, ceil_mode */
        {0, 0, 1, 9, 11, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1},     /* avg2x2_s2, include pad */
        {0, 0, 0, 8, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},      /* inception_v3 8x8, exclude pad */
        {1, 0, 0, 17, 21, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},    /* max3x3_s2, padded top rows */
    };
    static const int64_t Cs[] = {1, 7, 8, 9, 20, 33};
    static const int64_t bs[] = {8, 16};
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        const pool_case *q = &cases[ci];
        frt_blk_pool_geom g = {0};
        g.H = q->H, g.W = q->W, g.kh = q->kh, g.kw = q->kw, g.sh = q->sh, g.sw = q->sw;
        g.dh = q->dh, g.dw = q->dw, g.ph = q->pt, g.pw = q->pl, g.max = q->max;
        g.OH = pool_out(q->H, q->kh, q->sh, q->dh, q->pt, q->pb, q->ceil_mode);
        g.OW = pool_out(q->W, q->kw, q->sw, q->dw, q->pl, q->pr, q->ceil_mode);
        g.ch0 = q->include_pad ? -q->pt : 0, g.ch1 = q->include_pad ? q->H + q->pb : q->H;
        g.cw0 = q->include_pad ? -q->pl : 0, g.cw1 = q->include_pad ? q->W + q->pr : q->W;
        for (size_t cj = 0; cj < sizeof Cs / sizeof *Cs; cj++) {
            int64_t C = Cs[cj], S = q->H * q->W, OS = g.OH * g.OW;
            g.C = C;
            float *xp = malloc((size_t)(C * S) * 4), *yp = malloc((size_t)(C * OS) * 4);
            t_fill(xp, (size_t)(C * S), (unsigned)(ci * 131 + C));
            pool_ref(&g, xp, yp);
            for (size_t bi = 0; bi < 2; bi++) {
                int64_t b = bs[bi], cb = (C + b - 1) / b;
                size_t nx = (size_t)(cb * S * b), ny = (size_t)(cb * OS * b);
                float *x = malloc(nx * 4), *y = malloc(ny * 4), *ref = malloc(ny * 4);
                to_blocked(xp, x, C, S, b);
                to_blocked(yp, ref, C, OS, b);
                for (size_t i = 0; i < ny; i++)
                    if (isnan(ref[i])) ref[i] = 0.0f; /* padding lanes: written as 0 */
                float *yport = malloc(ny * 4);
                for (int tl = 2 * FRT_ISA_PORTABLE; tl <= 2 * (int)tier_hi() + 1; tl++) {
                    /* tier t's loops for b (AVX-512: 16 lanes for b = 16), then (loops = 1) the
                       AVX2 loops, which take any multiple of 8 (16c as two halves) */
                    int t = tl / 2, loops = tl % 2;
                    if (loops && !(t >= FRT_ISA_AVX2 && FRT_HAVE_X86)) continue;
                    frt_blk_pool_fn fn = loops ? frt_blk_variant_get(FRT_ISA_AVX2, 8)->pool
                                               : frt_blk_variant_get((frt_isa)t, b)->pool;
                    for (int split = 0; split < 2; split++) {
                        for (size_t i = 0; i < ny; i++) y[i] = NAN;
                        if (split && cb > 1) {
                            fn(&g, x, y, 0, 1, b);
                            fn(&g, x, y, 1, cb, b);
                        } else {
                            fn(&g, x, y, 0, cb, b);
                        }
                        /* the reference: exact for max and windowed averages (same order of
                           additions); the whole-image average sums in four partial sums */
                        bool global = frt_blk_pool_is_global(&g) && !g.max;
                        size_t bad = ny;
                        for (size_t i = 0; i < ny && bad == ny; i++)
                            if (global ? !(fabsf(y[i] - ref[i]) <= 1e-6f * (1.0f + fabsf(ref[i])))
                                       : memcmp(&y[i], &ref[i], 4) != 0)
                                bad = i;
                        CHECK_MSG(bad == ny,
                                  "pool case %zu tier %s%s b=%lld C=%lld: element %zu is %g, "
                                  "want %g",
                                  ci, frt_isa_name(t), loops ? " (avx2 loops)" : "", (long long)b,
                                  (long long)C, bad, bad < ny ? y[bad] : 0.0,
                                  bad < ny ? ref[bad] : 0.0);
                        /* every tier: the portable loop's bits */
                        if (t == FRT_ISA_PORTABLE) memcpy(yport, y, ny * 4);
                        CHECK_MSG(memcmp(y, yport, ny * 4) == 0,
                                  "pool case %zu tier %s%s b=%lld C=%lld: not the portable bits",
                                  ci, frt_isa_name(t), loops ? " (avx2 loops)" : "", (long long)b,
                                  (long long)C);
                    }
                }
                free(x), free(y), free(ref), free(yport);
            }
            free(xp), free(yp);
        }
    }
}

/* Channel gather: two input images of Ci channels (blocked, NaN padding), outputs of Co channels
 * whose channel c comes from input map_in[c], channel map_ch[c] (a pseudo-random map: runs of
 * consecutive channels, as a shuffle or a slice makes, and single channels), planned into chunks
 * the way shuffle.c does; every tier's loop against the portable one and a reference over plain
 * indices (bit copies, padding lanes +0). */
static void test_gather(void) {
    static const int64_t bs[] = {8, 16};
    static const int64_t Ss[] = {1, 3, 49};
    static const int64_t Ci[][2] = {{58, 58}, {8, 21}, {40, 3}};
    static const int64_t Co[][2] = {{58, 58}, {29, 3}, {43, 1}};
    for (size_t bi = 0; bi < 2; bi++)
        for (size_t si = 0; si < sizeof Ss / sizeof *Ss; si++)
            for (size_t ci = 0; ci < sizeof Ci / sizeof *Ci; ci++) {
                int64_t b = bs[bi], S = Ss[si];
                const int64_t *cin = Ci[ci], *cout = Co[ci];
                float *x[2], *xp[2], *yr[2], *yp[2], *yt[2];
                int64_t *mi[2], *mc[2];
                unsigned seed = (unsigned)(ci * 7 + si * 3 + bi + 1);
                for (int i = 0; i < 2; i++) {
                    int64_t cb = (cin[i] + b - 1) / b, ob = (cout[i] + b - 1) / b;
                    xp[i] = malloc((size_t)(cin[i] * S) * 4);
                    x[i] = malloc((size_t)(cb * S * b) * 4);
                    t_fill(xp[i], (size_t)(cin[i] * S), seed + (unsigned)i);
                    to_blocked(xp[i], x[i], cin[i], S, b);
                    yr[i] = malloc((size_t)(ob * S * b) * 4);
                    yp[i] = malloc((size_t)(ob * S * b) * 4);
                    yt[i] = malloc((size_t)(ob * S * b) * 4);
                    mi[i] = malloc((size_t)cout[i] * sizeof(int64_t));
                    mc[i] = malloc((size_t)cout[i] * sizeof(int64_t));
                    for (int64_t c = 0; c < cout[i]; c++) {
                        seed = seed * 1664525u + 1013904223u;
                        int src = (int)(seed >> 30 & 1);
                        int64_t prev = c ? mc[i][c - 1] + 1 : 0;
                        bool run = c && (seed >> 20 & 3) != 0 && mi[i][c - 1] == src &&
                                   prev < cin[src];
                        mi[i][c] = src;
                        mc[i][c] = run ? prev : (int64_t)(seed >> 8) % cin[src];
                    }
                }
                /* plan */
                int64_t nch = 0;
                for (int o = 0; o < 2; o++) nch += (cout[o] + b - 1) / b * (b / 8);
                frt_blk_gchunk *ch = calloc((size_t)nch, sizeof *ch);
                frt_blk_gsrc *src = calloc((size_t)nch * 8, sizeof *src);
                int64_t q = 0, ns = 0;
                for (int o = 0; o < 2; o++)
                    for (int64_t blk = 0; blk < (cout[o] + b - 1) / b; blk++)
                        for (int64_t sub = 0; sub < b / 8; sub++, q++) {
                            frt_blk_gchunk *k = &ch[q];
                            *k = (frt_blk_gchunk){o, (int32_t)blk, (int32_t)sub, (int32_t)ns, 0};
                            for (int l = 0; l < 8; l++) {
                                int64_t c = blk * b + sub * 8 + l;
                                if (c >= cout[o]) break;
                                int32_t in = (int32_t)mi[o][c], sb = (int32_t)(mc[o][c] / b),
                                        ss = (int32_t)(mc[o][c] % b / 8);
                                frt_blk_gsrc *g = NULL;
                                for (int32_t t = k->first; t < k->first + k->n; t++)
                                    if (src[t].in == in && src[t].blk == sb && src[t].sub == ss)
                                        g = &src[t];
                                if (!g) {
                                    g = &src[k->first + k->n++];
                                    *g = (frt_blk_gsrc){.in = in, .blk = sb, .sub = ss};
                                    ns++;
                                }
                                g->mask |= 1u << l;
                                g->lane[l] = (int32_t)(mc[o][c] % 8);
                            }
                        }
                /* reference over plain indices */
                for (int o = 0; o < 2; o++) {
                    int64_t ob = (cout[o] + b - 1) / b;
                    for (int64_t k = 0; k < ob; k++)
                        for (int64_t s = 0; s < S; s++)
                            for (int64_t l = 0; l < b; l++) {
                                int64_t c = k * b + l;
                                yr[o][(k * S + s) * b + l] =
                                    c < cout[o] ? xp[mi[o][c]][mc[o][c] * S + s] : 0.0f;
                            }
                }
                const float *xs[2] = {x[0], x[1]};
                for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++) {
                    const frt_blk_variant *v = frt_blk_variant_get((frt_isa)t, b);
                    float *const ys[2] = {yt[0], yt[1]};
                    for (int o = 0; o < 2; o++)
                        for (int64_t i = 0; i < (cout[o] + b - 1) / b * S * b; i++) yt[o][i] = NAN;
                    /* in two calls: chunk ranges split anywhere */
                    v->gather(xs, ys, ch, src, 0, nch / 3, S, b);
                    v->gather(xs, ys, ch, src, nch / 3, nch, S, b);
                    for (int o = 0; o < 2; o++) {
                        size_t n = (size_t)((cout[o] + b - 1) / b * S * b);
                        CHECK_MSG(!memcmp(yt[o], yr[o], n * 4),
                                  "gather %s: b %lld, S %lld, case %zu, output %d",
                                  frt_isa_name((frt_isa)t), (long long)b, (long long)S, ci, o);
                        if (t == FRT_ISA_PORTABLE) memcpy(yp[o], yt[o], n * 4);
                        else CHECK_MSG(!memcmp(yt[o], yp[o], n * 4), "gather %s vs portable",
                                       frt_isa_name((frt_isa)t));
                    }
                }
                free(ch), free(src);
                for (int i = 0; i < 2; i++)
                    free(x[i]), free(xp[i]), free(yr[i]), free(yp[i]), free(yt[i]), free(mi[i]),
                        free(mc[i]);
            }
}

int main(void) {
    test_chanmul();
    test_affine();
    test_pool();
    test_gather();
    TEST_MAIN_END();
}
