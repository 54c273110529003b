/* AVX2/FMA pieces of the Winograd F(4x4, 3x3) and F(2x2, 3x3) convolutions (see ../wino.h): one 8-channel group
 * is one ymm vector throughout. The GEMM is register-tiled 6 tiles x 16 output channels (12
 * accumulators, two weight vectors and a broadcast per step), the weights of one 16-wide panel
 * (Cp x 16 floats) reused from L1 across the block's row groups. */
#include <immintrin.h>
#include <stdbool.h>

#include "ops/wino.h"

/* Offset of 8-channel group gi's pixel (0, 0) in a blocked image of H x W pixels (the division
 * by the run-time block b is done once per group, not per pixel); pixel (y, x) is at
 * grp_base + (y W + x) b. */
static inline size_t grp_base(const frt_wino_geom *g, int64_t gi, int64_t H, int64_t W) {
    int64_t c = gi * 8;
    return (size_t)(c / g->b * H * W * g->b + c % g->b);
}

/* Lanes [0, n) set (n in 0..8). */
static inline __m256 lane_mask(int64_t n) {
    static const int32_t m[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    return _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(m + 8 - n)));
}

/* B^T over six vectors d[0..5] at stride ds, into r[0..5] at stride rs. */
#define BT6(d, ds, r, rs)                                                                       \
    do {                                                                                        \
        __m256 d0 = (d)[0], d1 = (d)[(ds)], d2 = (d)[2 * (ds)], d3 = (d)[3 * (ds)];             \
        __m256 d4 = (d)[4 * (ds)], d5 = (d)[5 * (ds)];                                          \
        __m256 a = _mm256_fnmadd_ps(four, d2, d4), b = _mm256_fnmadd_ps(four, d1, d3);          \
        __m256 c = _mm256_sub_ps(d4, d2), e = _mm256_mul_ps(two, _mm256_sub_ps(d3, d1));        \
        (r)[0] = _mm256_fmadd_ps(four, d0, _mm256_fnmadd_ps(five, d2, d4));                     \
        (r)[(rs)] = _mm256_add_ps(a, b);                                                        \
        (r)[2 * (rs)] = _mm256_sub_ps(a, b);                                                    \
        (r)[3 * (rs)] = _mm256_add_ps(c, e);                                                    \
        (r)[4 * (rs)] = _mm256_sub_ps(c, e);                                                    \
        (r)[5 * (rs)] = _mm256_fmadd_ps(four, d1, _mm256_fnmadd_ps(five, d3, d5));              \
    } while (0)

/* B^T of one 6x6 patch of 8-channel vectors, p[(a rs + b cs)] = d[a][b], into V at positions
 * (i 6 + j) xs: V = B^T d B. Rows first, a few output columns j at a time ({0}, {1, 2}, {3, 4},
 * {5}: the pairs share their terms), then B^T down the six rows of each of those columns, so
 * that at most 12 vectors are live and nothing goes through the stack (the 36 + 36 vector
 * arrays of the straightforward form cost a store per vector and made the step store-bound). */
static inline __attribute__((always_inline)) void itrans_patch(const float *p, size_t rs,
                                                               size_t cs, float *v, size_t xs) {
    const __m256 four = _mm256_set1_ps(4.0f), five = _mm256_set1_ps(5.0f),
                 two = _mm256_set1_ps(2.0f);
#define LD(a, b) _mm256_loadu_ps(p + (size_t)(a) * rs + (size_t)(b) * cs)
#define COLS(R, j)                                                                              \
    do {                                                                                        \
        __m256 o[6];                                                                            \
        BT6(R, 1, o, 1);                                                                        \
        _Pragma("GCC unroll 6") for (int i = 0; i < 6; i++)                                     \
            _mm256_storeu_ps(v + (size_t)(i * 6 + (j)) * xs, o[i]);                             \
    } while (0)
    {
        __m256 r0[6], r5[6];
        _Pragma("GCC unroll 6") for (int a = 0; a < 6; a++) {
            r0[a] = _mm256_fmadd_ps(four, LD(a, 0), _mm256_fnmadd_ps(five, LD(a, 2), LD(a, 4)));
            r5[a] = _mm256_fmadd_ps(four, LD(a, 1), _mm256_fnmadd_ps(five, LD(a, 3), LD(a, 5)));
        }
        COLS(r0, 0);
        COLS(r5, 5);
    }
    {
        __m256 r1[6], r2[6];
        _Pragma("GCC unroll 6") for (int a = 0; a < 6; a++) {
            __m256 d1 = LD(a, 1), d2 = LD(a, 2), d3 = LD(a, 3), d4 = LD(a, 4);
            __m256 x = _mm256_fnmadd_ps(four, d2, d4), y = _mm256_fnmadd_ps(four, d1, d3);
            r1[a] = _mm256_add_ps(x, y);
            r2[a] = _mm256_sub_ps(x, y);
        }
        COLS(r1, 1);
        COLS(r2, 2);
    }
    {
        __m256 r3[6], r4[6];
        _Pragma("GCC unroll 6") for (int a = 0; a < 6; a++) {
            __m256 d1 = LD(a, 1), d2 = LD(a, 2), d3 = LD(a, 3), d4 = LD(a, 4);
            __m256 c = _mm256_sub_ps(d4, d2), e = _mm256_mul_ps(two, _mm256_sub_ps(d3, d1));
            r3[a] = _mm256_add_ps(c, e);
            r4[a] = _mm256_sub_ps(c, e);
        }
        COLS(r3, 3);
        COLS(r4, 4);
    }
#undef COLS
#undef LD
}

/* F(2x2, 3x3): B^T d B of each 4x4 patch, 16 vectors in registers; patches at the image edges or
 * in a group with padding lanes are gathered with zeros first. */
static void itrans2_avx2(const float *x, const frt_wino_geom *g, int64_t t0, int64_t nt,
                         float *V) {
    const __m256 zero = _mm256_setzero_ps();
    const __m256 last = lane_mask(g->C - (g->Cg - 1) * 8);
    const bool part = g->C % 8 != 0;
    const size_t rs = (size_t)(g->W * g->b), cs = (size_t)g->b;
    for (int64_t gi = 0; gi < g->Cg; gi++) {
        const float *xg = x + grp_base(g, gi, g->H, g->W);
        bool lastg = part && gi == g->Cg - 1;
        for (int64_t t = t0; t < t0 + nt; t++) {
            int64_t iy0 = t / g->tw * 2 - g->pt, ix0 = t % g->tw * 2 - g->pl;
            bool inner = iy0 >= 0 && ix0 >= 0 && iy0 + 4 <= g->H && ix0 + 4 <= g->W && !lastg;
            float *v = V + (size_t)gi * (size_t)g->gs + (size_t)(t - t0) * 16 * 8;
            __m256 d[4][4];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) {
                    int64_t yy = iy0 + i, xx = ix0 + j;
                    if (inner) {
                        d[i][j] = _mm256_loadu_ps(xg + (size_t)yy * rs + (size_t)xx * cs);
                        continue;
                    }
                    __m256 u = yy >= 0 && yy < g->H && xx >= 0 && xx < g->W
                                   ? _mm256_loadu_ps(xg + (size_t)yy * rs + (size_t)xx * cs)
                                   : zero;
                    d[i][j] = lastg ? _mm256_and_ps(u, last) : u;
                }
            for (int j = 0; j < 4; j++) { /* B^T d down the columns */
                __m256 d0 = d[0][j], d1 = d[1][j], d2 = d[2][j], d3 = d[3][j];
                d[0][j] = _mm256_sub_ps(d0, d2);
                d[1][j] = _mm256_add_ps(d1, d2);
                d[2][j] = _mm256_sub_ps(d2, d1);
                d[3][j] = _mm256_sub_ps(d1, d3);
            }
            for (int i = 0; i < 4; i++) { /* then B along the rows */
                __m256 r0 = d[i][0], r1 = d[i][1], r2 = d[i][2], r3 = d[i][3];
                _mm256_storeu_ps(v + (size_t)(i * 4 + 0) * 8, _mm256_sub_ps(r0, r2));
                _mm256_storeu_ps(v + (size_t)(i * 4 + 1) * 8, _mm256_add_ps(r1, r2));
                _mm256_storeu_ps(v + (size_t)(i * 4 + 2) * 8, _mm256_sub_ps(r2, r1));
                _mm256_storeu_ps(v + (size_t)(i * 4 + 3) * 8, _mm256_sub_ps(r1, r3));
            }
        }
    }
}

/* Stride 2 (wino.h): B^T d B of each 5x5 patch, 25 vectors in registers (B^T only subtracts:
 * rows 0 and 2 minus row 2's neighbour, the odd rows copied); patches at the image edges or in a
 * group with padding lanes are gathered with zeros first. */
static void itrans_s2_avx2(const float *x, const frt_wino_geom *g, int64_t t0, int64_t nt,
                           float *V) {
    const __m256 zero = _mm256_setzero_ps();
    const __m256 last = lane_mask(g->C - (g->Cg - 1) * 8);
    const bool part = g->C % 8 != 0;
    const size_t rs = (size_t)(g->W * g->b), cs = (size_t)g->b;
    for (int64_t gi = 0; gi < g->Cg; gi++) {
        const float *xg = x + grp_base(g, gi, g->H, g->W);
        bool lastg = part && gi == g->Cg - 1;
        for (int64_t t = t0; t < t0 + nt; t++) {
            int64_t iy0 = t / g->tw * 4 - g->pt, ix0 = t % g->tw * 4 - g->pl;
            bool inner = iy0 >= 0 && ix0 >= 0 && iy0 + 5 <= g->H && ix0 + 5 <= g->W && !lastg;
            float *v = V + (size_t)gi * (size_t)g->gs + (size_t)(t - t0) * 25 * 8;
            __m256 d[5][5];
            for (int i = 0; i < 5; i++)
                for (int j = 0; j < 5; j++) {
                    int64_t yy = iy0 + i, xx = ix0 + j;
                    if (inner) {
                        d[i][j] = _mm256_loadu_ps(xg + (size_t)yy * rs + (size_t)xx * cs);
                        continue;
                    }
                    __m256 u = yy >= 0 && yy < g->H && xx >= 0 && xx < g->W
                                   ? _mm256_loadu_ps(xg + (size_t)yy * rs + (size_t)xx * cs)
                                   : zero;
                    d[i][j] = lastg ? _mm256_and_ps(u, last) : u;
                }
            __m256 r[5][5];
            for (int j = 0; j < 5; j++) { /* B^T d down the columns */
                r[0][j] = _mm256_sub_ps(d[0][j], d[2][j]);
                r[1][j] = d[2][j];
                r[2][j] = _mm256_sub_ps(d[4][j], d[2][j]);
                r[3][j] = d[1][j];
                r[4][j] = d[3][j];
            }
            for (int i = 0; i < 5; i++) { /* then B along the rows */
                _mm256_storeu_ps(v + (size_t)(i * 5 + 0) * 8, _mm256_sub_ps(r[i][0], r[i][2]));
                _mm256_storeu_ps(v + (size_t)(i * 5 + 1) * 8, r[i][2]);
                _mm256_storeu_ps(v + (size_t)(i * 5 + 2) * 8, _mm256_sub_ps(r[i][4], r[i][2]));
                _mm256_storeu_ps(v + (size_t)(i * 5 + 3) * 8, r[i][1]);
                _mm256_storeu_ps(v + (size_t)(i * 5 + 4) * 8, r[i][3]);
            }
        }
    }
}

/* The one-dimensional form (wino.h): V = B^T d of each tile's P samples along the axis, for each
 * of its tap lines, B^T a dense matrix broadcast into vectors once per call (FMAs from L1; a
 * sparse form with the +-a rows' shared terms measured slower through its indexed operands);
 * samples outside the image, and the padding lanes of the last group, are zeros. */
static inline __attribute__((always_inline)) void itrans1_p(const float *x,
                                                            const frt_wino_geom *g, int64_t t0,
                                                            int64_t nt, float *V, const int64_t P) {
    const __m256 zero = _mm256_setzero_ps();
    const __m256 last = lane_mask(g->C - (g->Cg - 1) * 8);
    const bool part = g->C % 8 != 0;
    const size_t rs = (size_t)(g->W * g->b), cs = (size_t)g->b;
    const size_t ks = g->axis ? rs : cs;        /* between the samples of a tile */
    const int64_t n = g->axis ? g->H : g->W;    /* samples along the axis */
    const int64_t nl = g->axis ? g->W : g->H;   /* lines across it */
    __m256 bt[FRT_WINO1_PMAX * FRT_WINO1_PMAX];
    for (int64_t i = 0; i < P * P; i++) bt[i] = _mm256_set1_ps(g->bt[i]);
    for (int64_t vg = 0; vg < g->Kg; vg++) { /* V group vg: tap line vg / Cg, channels vg % Cg */
        int64_t gi = vg % g->Cg, tap = vg / g->Cg;
        const float *xg = x + grp_base(g, gi, g->H, g->W);
        bool lastg = part && gi == g->Cg - 1;
        for (int64_t t = t0; t < t0 + nt; t++) {
            /* k0: the first sample along the axis; line: the row (axis 0) or column it is on */
            int64_t k0 = g->axis ? t / g->tw * g->m - g->pt : t % g->tw * g->m - g->pl;
            int64_t line = g->axis ? t % g->tw + tap - g->pl : t / g->tw + tap - g->pt;
            float *v = V + (size_t)vg * (size_t)g->gs + (size_t)(t - t0) * (size_t)P * 8;
            if (line < 0 || line >= nl) { /* a tap line in the padding: zeros */
                for (int64_t i = 0; i < P; i++) _mm256_storeu_ps(v + (size_t)i * 8, zero);
                continue;
            }
            const float *p = xg + (size_t)line * (g->axis ? cs : rs);
            __m256 d[FRT_WINO1_PMAX];
            /* a run-time P: all of d set (GCC cannot see that the P used below are) */
            if (!__builtin_constant_p(P))
                for (int k = 0; k < FRT_WINO1_PMAX; k++) d[k] = zero;
            if (k0 >= 0 && k0 + P <= n && !lastg) {
                _Pragma("GCC unroll 10") for (int64_t k = 0; k < P; k++)
                    d[k] = _mm256_loadu_ps(p + (size_t)(k0 + k) * ks);
            } else {
                for (int64_t k = 0; k < P; k++) {
                    int64_t kk = k0 + k;
                    __m256 u = kk >= 0 && kk < n ? _mm256_loadu_ps(p + (size_t)kk * ks) : zero;
                    d[k] = lastg ? _mm256_and_ps(u, last) : u;
                }
            }
            _Pragma("GCC unroll 10") for (int64_t i = 0; i < P; i++) {
                const __m256 *row = bt + i * P;
                __m256 acc0 = zero, acc1 = zero; /* (0 + a b is a b: the bits of a product) */
                int64_t k = 0;
                _Pragma("GCC unroll 5") for (; k + 2 <= P; k += 2) {
                    acc0 = _mm256_fmadd_ps(row[k], d[k], acc0);
                    acc1 = _mm256_fmadd_ps(row[k + 1], d[k + 1], acc1);
                }
                if (k < P) acc0 = _mm256_fmadd_ps(row[k], d[k], acc0);
                _mm256_storeu_ps(v + (size_t)i * 8, _mm256_add_ps(acc0, acc1));
            }
        }
    }
}

/* itrans1_p with P a constant (loops unrolled, the patch in registers: inception_v3's F(4, 7)
 * input transform 95 -> 61 us per 192-channel layer, bench/wino_bench.c, against a run-time P) */
static void itrans1_avx2(const float *x, const frt_wino_geom *g, int64_t t0, int64_t nt,
                         float *V) {
    switch (g->P) { /* P = m + r - 1: 3 .. FRT_WINO1_PMAX */
    case 3: itrans1_p(x, g, t0, nt, V, 3); break;
    case 4: itrans1_p(x, g, t0, nt, V, 4); break;
    case 5: itrans1_p(x, g, t0, nt, V, 5); break;
    case 6: itrans1_p(x, g, t0, nt, V, 6); break;
    case 7: itrans1_p(x, g, t0, nt, V, 7); break;
    case 8: itrans1_p(x, g, t0, nt, V, 8); break;
    case 9: itrans1_p(x, g, t0, nt, V, 9); break;
    case 10: itrans1_p(x, g, t0, nt, V, 10); break;
    default: itrans1_p(x, g, t0, nt, V, g->P); break; /* (none: P is 3..10) */
    }
}

void frt_wino_itrans_avx2(const float *x, const frt_wino_geom *g, int64_t t0, int64_t nt,
                          float *V) {
    if (g->r > 0) {
        itrans1_avx2(x, g, t0, nt, V);
        return;
    }
    if (g->s == 2) {
        itrans_s2_avx2(x, g, t0, nt, V);
        return;
    }
    if (g->m == 2) {
        itrans2_avx2(x, g, t0, nt, V);
        return;
    }
    const __m256 zero = _mm256_setzero_ps();
    const __m256 last = lane_mask(g->C - (g->Cg - 1) * 8);
    const bool part = g->C % 8 != 0; /* the last group has padding lanes (may hold anything) */
    const size_t xs = 8; /* V [Cg][T][36][8]: the 36 positions of a tile are contiguous */
    const size_t rs = (size_t)(g->W * g->b), cs = (size_t)g->b;
    /* groups outer, tiles inner: consecutive tiles fill the two halves of each of the 36 V
       lines they write */
    for (int64_t gi = 0; gi < g->Cg; gi++) {
        const float *xg = x + grp_base(g, gi, g->H, g->W);
        bool lastg = part && gi == g->Cg - 1;
        for (int64_t t = t0; t < t0 + nt; t++) {
            int64_t iy0 = t / g->tw * 4 - g->pt, ix0 = t % g->tw * 4 - g->pl;
            bool inner = iy0 >= 0 && ix0 >= 0 && iy0 + 6 <= g->H && ix0 + 6 <= g->W;
            float *v = V + (size_t)gi * (size_t)g->gs + (size_t)(t - t0) * 36 * 8;
            if (inner && !lastg) {
                itrans_patch(xg + (size_t)iy0 * rs + (size_t)ix0 * cs, rs, cs, v, xs);
                continue;
            }
            /* image edges (zeros outside) or padding lanes: through a 6x6 copy of the patch */
            __m256 d[36];
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 6; j++) {
                    int64_t yy = iy0 + i, xx = ix0 + j;
                    __m256 u = yy >= 0 && yy < g->H && xx >= 0 && xx < g->W
                                   ? _mm256_loadu_ps(xg + (size_t)yy * rs + (size_t)xx * cs)
                                   : zero;
                    d[i * 6 + j] = lastg ? _mm256_and_ps(u, last) : u;
                }
            itrans_patch((const float *)d, 48, 8, v, xs);
        }
    }
}

/* O rows [0, R) x 16 channels of one position: A rows at a (stride rs per row, ags per
 * channel group), K = 8 kg, weights u [Cp][16], results to o (stride rs per row, ogs between the
 * two 8-channel groups). */
/* PF: prefetch U this many floats ahead (4 KiB: one 64-byte line per 16-float step), for U beyond
 * the L2, whose lines the first row group of a block streams from L3 or memory: 256->256 at 14x14
 * (9.4 MB of U) 0.97-1.02 -> 0.90 ms for the GEMMs (bench/wino_bench.c, Zen 3); where U fits the
 * L2 (64->64, 128->128) the prefetches cost 1-5% and are left out. */
#define GEMM_KERNEL(R, NAME, PF)                                                                \
    static void NAME(const float *a, size_t ags, size_t rs, int64_t kg, const float *u,          \
                     float *o, size_t ogs) {                                                    \
        __m256 c0[R], c1[R];                                                                    \
        _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) c0[r] = c1[r] = _mm256_setzero_ps();  \
        for (int64_t k = 0; k < kg; k++, a += ags) {                                            \
            _Pragma("GCC unroll 8") for (int j = 0; j < 8; j++, u += 16) {                      \
                if (PF) _mm_prefetch((const char *)(u + (PF)), _MM_HINT_T0);                    \
                __m256 u0 = _mm256_loadu_ps(u), u1 = _mm256_loadu_ps(u + 8);                    \
                _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {                           \
                    __m256 av = _mm256_broadcast_ss(a + r * rs + j);                            \
                    c0[r] = _mm256_fmadd_ps(av, u0, c0[r]);                                     \
                    c1[r] = _mm256_fmadd_ps(av, u1, c1[r]);                                     \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
        _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {                                   \
            _mm256_storeu_ps(o + r * rs, c0[r]);                                                \
            _mm256_storeu_ps(o + ogs + r * rs, c1[r]);                                          \
        }                                                                                       \
    }
GEMM_KERNEL(1, gemm_r1, 0)
GEMM_KERNEL(2, gemm_r2, 0)
GEMM_KERNEL(3, gemm_r3, 0)
GEMM_KERNEL(4, gemm_r4, 0)
GEMM_KERNEL(5, gemm_r5, 0)
GEMM_KERNEL(6, gemm_r6, 0)
GEMM_KERNEL(1, gemm_pf_r1, 1024)
GEMM_KERNEL(2, gemm_pf_r2, 1024)
GEMM_KERNEL(3, gemm_pf_r3, 1024)
GEMM_KERNEL(4, gemm_pf_r4, 1024)
GEMM_KERNEL(5, gemm_pf_r5, 1024)
GEMM_KERNEL(6, gemm_pf_r6, 1024)

typedef void (*gemm_fn)(const float *, size_t, size_t, int64_t, const float *, float *, size_t);
static const gemm_fn gemm_plain[7] = {NULL, gemm_r1, gemm_r2, gemm_r3, gemm_r4, gemm_r5, gemm_r6};
static const gemm_fn gemm_pf[7] = {NULL,        gemm_pf_r1, gemm_pf_r2, gemm_pf_r3,
                                   gemm_pf_r4, gemm_pf_r5, gemm_pf_r6};

void frt_wino_gemm_avx2(const float *V, const float *U, float *O, const frt_wino_geom *g,
                        int64_t nt, int64_t p0, int64_t p1) {
    /* V [Cg][T][P][8], O [Mp/8][T][P][8]: rows (tiles) P 8 floats apart */
    size_t P = (size_t)g->P;
    size_t Cp = (size_t)(8 * g->Kg), np = (size_t)(g->Mp / 16), rs = P * 8;
    size_t gs = (size_t)g->gs; /* between 8-channel groups */
    const gemm_fn *k = (size_t)frt_wino_u_positions(g) * Cp * (size_t)g->Mp * sizeof(float) > 1048576
                           ? gemm_pf
                           : gemm_plain;
    /* the stride-2 form's positions in an order where those that share U (frt_wino_upos) are
       adjacent: rows 0-2, then rows 3 and 4 column by column (so U's last 4x4 row is read
       once from beyond the L2, its lines of (3, j) reused by (4, j)) */
    static const uint8_t s2_order[25] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                                         13, 14, 15, 20, 16, 21, 17, 22, 18, 23, 19, 24};
    for (size_t q = 0; q < P; q++) {
        size_t xi = g->s == 2 ? s2_order[q] : q;
        const float *a0 = V + xi * 8;
        float *o0 = O + xi * 8;
        for (size_t p = (size_t)p0; p < (size_t)p1; p++) {
            const float *u = U + ((size_t)frt_wino_upos(g, (int64_t)xi) * np + p) * Cp * 16;
            float *op = o0 + 2 * p * gs;
            int64_t t = 0;
            for (; t + 6 <= nt; t += 6) k[6](a0 + t * rs, gs, rs, g->Kg, u, op + t * rs, gs);
            if (nt > t) k[nt - t](a0 + t * rs, gs, rs, g->Kg, u, op + t * rs, gs);
        }
    }
}

/* A^T over six vectors m[0..5] at stride ms, into r[0..3] at stride rs. */
#define AT6(m, ms, r, rs)                                                                       \
    do {                                                                                        \
        __m256 s12 = _mm256_add_ps((m)[(ms)], (m)[2 * (ms)]);                                   \
        __m256 d12 = _mm256_sub_ps((m)[(ms)], (m)[2 * (ms)]);                                   \
        __m256 s34 = _mm256_add_ps((m)[3 * (ms)], (m)[4 * (ms)]);                               \
        __m256 d34 = _mm256_sub_ps((m)[3 * (ms)], (m)[4 * (ms)]);                               \
        (r)[0] = _mm256_add_ps(_mm256_add_ps((m)[0], s12), s34);                                \
        (r)[(rs)] = _mm256_fmadd_ps(two, d34, d12);                                             \
        (r)[2 * (rs)] = _mm256_fmadd_ps(four, s34, s12);                                        \
        (r)[3 * (rs)] = _mm256_add_ps(_mm256_fmadd_ps(eight, d34, d12), (m)[5 * (ms)]);         \
    } while (0)

/* The epilogue of one output vector: bias, residual, activation (operands ordered so that NaN
 * passes through, as in the portable twin). */
static inline __attribute__((always_inline)) __m256 oepi(__m256 v, __m256 bv, const float *zp,
                                                         int act, __m256 lo, __m256 hi) {
    v = _mm256_add_ps(v, bv);
    if (zp) v = _mm256_add_ps(v, _mm256_loadu_ps(zp));
    if (act == FRT_WINO_RELU) v = _mm256_max_ps(_mm256_setzero_ps(), v);
    else if (act == FRT_WINO_CLIP) v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
    return v;
}

/* A^T m A of one whole 4x4 output tile of a group without padding lanes: o the tile's 36
 * vectors (position xi at o + 8 xi), y / z at its top-left pixel (rows rs, columns cs apart).
 * Down the columns two output rows at a time ({0, 2} and {1, 3} share their terms), then A^T
 * along each of those rows: at most 12 vectors live, nothing through the stack. */
static inline __attribute__((always_inline)) void otrans_tile(const float *o, __m256 bv,
                                                              const float *z, float *y, size_t rs,
                                                              size_t cs, int act, __m256 lo,
                                                              __m256 hi) {
    const __m256 two = _mm256_set1_ps(2.0f), four = _mm256_set1_ps(4.0f),
                 eight = _mm256_set1_ps(8.0f);
#define LM(a, j) _mm256_loadu_ps(o + (size_t)((a) * 6 + (j)) * 8)
#define ROW(R, i)                                                                               \
    do {                                                                                        \
        __m256 q[4];                                                                            \
        AT6(R, 1, q, 1);                                                                        \
        _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {                                   \
            size_t at = (size_t)(i) * rs + (size_t)j * cs;                                      \
            _mm256_storeu_ps(y + at, oepi(q[j], bv, z ? z + at : NULL, act, lo, hi));           \
        }                                                                                       \
    } while (0)
    {
        __m256 r0[6], r2[6];
        _Pragma("GCC unroll 6") for (int j = 0; j < 6; j++) {
            __m256 s12 = _mm256_add_ps(LM(1, j), LM(2, j)), s34 = _mm256_add_ps(LM(3, j), LM(4, j));
            r0[j] = _mm256_add_ps(_mm256_add_ps(LM(0, j), s12), s34);
            r2[j] = _mm256_fmadd_ps(four, s34, s12);
        }
        ROW(r0, 0);
        ROW(r2, 2);
    }
    {
        __m256 r1[6], r3[6];
        _Pragma("GCC unroll 6") for (int j = 0; j < 6; j++) {
            __m256 d12 = _mm256_sub_ps(LM(1, j), LM(2, j)), d34 = _mm256_sub_ps(LM(3, j), LM(4, j));
            r1[j] = _mm256_fmadd_ps(two, d34, d12);
            r3[j] = _mm256_add_ps(_mm256_fmadd_ps(eight, d34, d12), LM(5, j));
        }
        ROW(r1, 1);
        ROW(r3, 3);
    }
#undef ROW
#undef LM
}

/* F(2x2, 3x3): A^T m A of each tile (16 vectors), the epilogue of oepi; the last group's padding
 * lanes written as 0. */
static void otrans2_avx2(const float *O, const float *bias, const float *z, float *y,
                         const frt_wino_geom *g, int64_t t0, int64_t nt, int64_t g0, int64_t g1) {
    const __m256 zero = _mm256_setzero_ps();
    const __m256 lo = _mm256_set1_ps(g->lo), hi = _mm256_set1_ps(g->hi);
    const __m256 last = lane_mask(g->M - (g->Mg - 1) * 8);
    for (int64_t gi = g0; gi < g1; gi++) {
        const size_t yg = grp_base(g, gi, g->OH, g->OW);
        const __m256 bv = _mm256_loadu_ps(bias + gi * 8);
        const bool lastg = gi == g->Mg - 1;
        for (int64_t t = t0; t < t0 + nt; t++) {
            int64_t oy0 = t / g->tw * 2, ox0 = t % g->tw * 2;
            int64_t ni = g->OH - oy0 < 2 ? g->OH - oy0 : 2;
            int64_t nj = g->OW - ox0 < 2 ? g->OW - ox0 : 2;
            const float *o = O + (size_t)gi * (size_t)g->gs + (size_t)(t - t0) * 16 * 8;
            __m256 r0[4], r1[4];
            for (int j = 0; j < 4; j++) { /* A^T down the columns */
                __m256 m0 = _mm256_loadu_ps(o + (size_t)(0 * 4 + j) * 8);
                __m256 m1 = _mm256_loadu_ps(o + (size_t)(1 * 4 + j) * 8);
                __m256 m2 = _mm256_loadu_ps(o + (size_t)(2 * 4 + j) * 8);
                __m256 m3 = _mm256_loadu_ps(o + (size_t)(3 * 4 + j) * 8);
                r0[j] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
                r1[j] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
            }
            for (int i = 0; i < ni; i++) {
                const __m256 *r = i ? r1 : r0;
                __m256 q[2] = {_mm256_add_ps(_mm256_add_ps(r[0], r[1]), r[2]),
                               _mm256_sub_ps(_mm256_sub_ps(r[1], r[2]), r[3])};
                size_t at = yg + (size_t)(((oy0 + i) * g->OW + ox0) * g->b);
                for (int j = 0; j < nj; j++) {
                    size_t aj = at + (size_t)(j * g->b);
                    __m256 v = oepi(q[j], bv, z ? z + aj : NULL, g->act, lo, hi);
                    if (lastg) {
                        v = _mm256_and_ps(v, last);
                        /* a 16-lane block's second group past M: all padding */
                        if ((gi * 8) % g->b + 8 < g->b) _mm256_storeu_ps(y + aj + 8, zero);
                    }
                    _mm256_storeu_ps(y + aj, v);
                }
            }
        }
    }
}

/* Stride 2 (wino.h): A^T m A of each tile (25 vectors; A^T adds rows {0, 1, 3} and
 * {1, 2, 4}), the epilogue of oepi; the last group's padding lanes written as 0. */
static void otrans_s2_avx2(const float *O, const float *bias, const float *z, float *y,
                           const frt_wino_geom *g, int64_t t0, int64_t nt, int64_t g0,
                           int64_t g1) {
    const __m256 zero = _mm256_setzero_ps();
    const __m256 lo = _mm256_set1_ps(g->lo), hi = _mm256_set1_ps(g->hi);
    const __m256 last = lane_mask(g->M - (g->Mg - 1) * 8);
    for (int64_t gi = g0; gi < g1; gi++) {
        const size_t yg = grp_base(g, gi, g->OH, g->OW);
        const __m256 bv = _mm256_loadu_ps(bias + gi * 8);
        const bool lastg = gi == g->Mg - 1;
        for (int64_t t = t0; t < t0 + nt; t++) {
            int64_t oy0 = t / g->tw * 2, ox0 = t % g->tw * 2;
            int64_t ni = g->OH - oy0 < 2 ? g->OH - oy0 : 2;
            int64_t nj = g->OW - ox0 < 2 ? g->OW - ox0 : 2;
            const float *o = O + (size_t)gi * (size_t)g->gs + (size_t)(t - t0) * 25 * 8;
            __m256 r0[5], r1[5];
            for (int j = 0; j < 5; j++) { /* A^T down the columns */
                __m256 m1 = _mm256_loadu_ps(o + (size_t)(1 * 5 + j) * 8);
                r0[j] = _mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(o + (size_t)j * 8), m1),
                                      _mm256_loadu_ps(o + (size_t)(3 * 5 + j) * 8));
                r1[j] = _mm256_add_ps(_mm256_add_ps(m1, _mm256_loadu_ps(o + (size_t)(2 * 5 + j) * 8)),
                                      _mm256_loadu_ps(o + (size_t)(4 * 5 + j) * 8));
            }
            for (int i = 0; i < ni; i++) {
                const __m256 *r = i ? r1 : r0;
                __m256 q[2] = {_mm256_add_ps(_mm256_add_ps(r[0], r[1]), r[3]),
                               _mm256_add_ps(_mm256_add_ps(r[1], r[2]), r[4])};
                size_t at = yg + (size_t)(((oy0 + i) * g->OW + ox0) * g->b);
                for (int j = 0; j < nj; j++) {
                    size_t aj = at + (size_t)(j * g->b);
                    __m256 v = oepi(q[j], bv, z ? z + aj : NULL, g->act, lo, hi);
                    if (lastg) {
                        v = _mm256_and_ps(v, last);
                        /* a 16-lane block's second group past M: all padding */
                        if ((gi * 8) % g->b + 8 < g->b) _mm256_storeu_ps(y + aj + 8, zero);
                    }
                    _mm256_storeu_ps(y + aj, v);
                }
            }
        }
    }
}

/* The one-dimensional form (wino.h): Y = A^T o of each tile (A^T dense, broadcast once per
 * call), the epilogue of oepi, outputs past the image's edge not stored, the last group's padding
 * lanes written as 0. */
static inline __attribute__((always_inline)) void otrans1_p(const float *O, const float *bias,
                                                            const float *z, float *y,
                                                            const frt_wino_geom *g, int64_t t0,
                                                            int64_t nt, int64_t g0, int64_t g1,
                                                            const int64_t P) {
    const int64_t m = g->m;
    const __m256 zero = _mm256_setzero_ps();
    const __m256 lo = _mm256_set1_ps(g->lo), hi = _mm256_set1_ps(g->hi);
    const __m256 last = lane_mask(g->M - (g->Mg - 1) * 8);
    const size_t rs = (size_t)(g->OW * g->b), cs = (size_t)g->b;
    const size_t ks = g->axis ? rs : cs;
    const int64_t n = g->axis ? g->OH : g->OW;
    __m256 at[FRT_WINO1_MMAX * FRT_WINO1_PMAX];
    for (int64_t i = 0; i < m * P; i++) at[i] = _mm256_set1_ps(g->at[i]);
    for (int64_t gi = g0; gi < g1; gi++) {
        const size_t yg = grp_base(g, gi, g->OH, g->OW);
        const __m256 bv = _mm256_loadu_ps(bias + gi * 8);
        const bool lastg = gi == g->Mg - 1;
        for (int64_t t = t0; t < t0 + nt; t++) {
            int64_t k0 = (g->axis ? t / g->tw : t % g->tw) * m;
            size_t at0 = yg + (g->axis ? (size_t)(t % g->tw) * cs : (size_t)(t / g->tw) * rs);
            int64_t ni = n - k0 < m ? n - k0 : m;
            const float *o = O + (size_t)gi * (size_t)g->gs + (size_t)(t - t0) * (size_t)P * 8;
            __m256 d[FRT_WINO1_PMAX];
            _Pragma("GCC unroll 10") for (int64_t j = 0; j < P; j++)
                d[j] = _mm256_loadu_ps(o + (size_t)j * 8);
            for (int64_t i = 0; i < ni; i++) {
                const __m256 *row = at + i * P;
                __m256 acc0 = zero, acc1 = zero;
                int64_t j = 0;
                _Pragma("GCC unroll 5") for (; j + 2 <= P; j += 2) {
                    acc0 = _mm256_fmadd_ps(row[j], d[j], acc0);
                    acc1 = _mm256_fmadd_ps(row[j + 1], d[j + 1], acc1);
                }
                if (j < P) acc0 = _mm256_fmadd_ps(row[j], d[j], acc0);
                size_t aj = at0 + (size_t)(k0 + i) * ks;
                __m256 v = oepi(_mm256_add_ps(acc0, acc1), bv, z ? z + aj : NULL, g->act, lo, hi);
                if (lastg) {
                    v = _mm256_and_ps(v, last);
                    /* a 16-lane block's second group past M: all padding */
                    if ((gi * 8) % g->b + 8 < g->b) _mm256_storeu_ps(y + aj + 8, zero);
                }
                _mm256_storeu_ps(y + aj, v);
            }
        }
    }
}

/* otrans1_p with P a constant for the usual sizes (as itrans1_avx2; 54 -> 24 us) */
static void otrans1_avx2(const float *O, const float *bias, const float *z, float *y,
                         const frt_wino_geom *g, int64_t t0, int64_t nt, int64_t g0, int64_t g1) {
    switch (g->P) {
    case 6: otrans1_p(O, bias, z, y, g, t0, nt, g0, g1, 6); break;
    case 8: otrans1_p(O, bias, z, y, g, t0, nt, g0, g1, 8); break;
    case 10: otrans1_p(O, bias, z, y, g, t0, nt, g0, g1, 10); break;
    default: otrans1_p(O, bias, z, y, g, t0, nt, g0, g1, g->P); break;
    }
}

void frt_wino_otrans_avx2(const float *O, const float *bias, const float *z, float *y,
                          const frt_wino_geom *g, int64_t t0, int64_t nt, int64_t g0,
                          int64_t g1) {
    if (g->r > 0) {
        otrans1_avx2(O, bias, z, y, g, t0, nt, g0, g1);
        return;
    }
    if (g->s == 2) {
        otrans_s2_avx2(O, bias, z, y, g, t0, nt, g0, g1);
        return;
    }
    if (g->m == 2) {
        otrans2_avx2(O, bias, z, y, g, t0, nt, g0, g1);
        return;
    }
    const __m256 two = _mm256_set1_ps(2.0f), four = _mm256_set1_ps(4.0f),
                 eight = _mm256_set1_ps(8.0f), zero = _mm256_setzero_ps();
    const __m256 lo = _mm256_set1_ps(g->lo), hi = _mm256_set1_ps(g->hi);
    const __m256 last = lane_mask(g->M - (g->Mg - 1) * 8);
    const size_t xs = 8; /* O [Mp/8][T][36][8] */
    /* groups outer, tiles inner (as in itrans: the 36 O lines of a group are read by
       consecutive tiles) */
    for (int64_t gi = g0; gi < g1; gi++) {
        const size_t yg = grp_base(g, gi, g->OH, g->OW);
        for (int64_t t = t0; t < t0 + nt; t++) {
            int64_t oy0 = t / g->tw * 4, ox0 = t % g->tw * 4;
            int64_t ni = g->OH - oy0 < 4 ? g->OH - oy0 : 4;
            int64_t nj = g->OW - ox0 < 4 ? g->OW - ox0 : 4;
            const float *o = O + (size_t)gi * (size_t)g->gs + (size_t)(t - t0) * 36 * 8;
            if (ni == 4 && nj == 4 && gi != g->Mg - 1) { /* a whole tile: the fast path */
                __m256 bv = _mm256_loadu_ps(bias + gi * 8);
                size_t at = yg + (size_t)((oy0 * g->OW + ox0) * g->b);
                size_t rs = (size_t)(g->OW * g->b), cs = (size_t)g->b;
                const float *zt = z ? z + at : NULL;
                switch (g->act * 2 + (z != NULL)) { /* act and z as constants */
                case 0: otrans_tile(o, bv, NULL, y + at, rs, cs, FRT_WINO_NONE, lo, hi); break;
                case 1: otrans_tile(o, bv, zt, y + at, rs, cs, FRT_WINO_NONE, lo, hi); break;
                case 2: otrans_tile(o, bv, NULL, y + at, rs, cs, FRT_WINO_RELU, lo, hi); break;
                case 3: otrans_tile(o, bv, zt, y + at, rs, cs, FRT_WINO_RELU, lo, hi); break;
                case 4: otrans_tile(o, bv, NULL, y + at, rs, cs, FRT_WINO_CLIP, lo, hi); break;
                default: otrans_tile(o, bv, zt, y + at, rs, cs, FRT_WINO_CLIP, lo, hi); break;
                }
                continue;
            }
            __m256 m[36], r[24];
            _Pragma("GCC unroll 36") for (int k = 0; k < 36; k++)
                m[k] = _mm256_loadu_ps(o + (size_t)k * xs);
            _Pragma("GCC unroll 6") for (int j = 0; j < 6; j++) AT6(m + j, 6, r + j, 6);
            __m256 bv = _mm256_loadu_ps(bias + gi * 8);
            bool lastg = gi == g->Mg - 1;
            for (int i = 0; i < ni; i++) {
                __m256 q[4];
                AT6(r + i * 6, 1, q, 1);
                size_t at = yg + (size_t)(((oy0 + i) * g->OW + ox0) * g->b);
                for (int j = 0; j < nj; j++) {
                    size_t aj = at + (size_t)(j * g->b);
                    __m256 v = _mm256_add_ps(q[j], bv);
                    if (z) v = _mm256_add_ps(v, _mm256_loadu_ps(z + aj));
                    /* operands ordered so that NaN passes through, as in the portable twin */
                    if (g->act == FRT_WINO_RELU) v = _mm256_max_ps(zero, v);
                    else if (g->act == FRT_WINO_CLIP) v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
                    if (lastg) {
                        v = _mm256_and_ps(v, last);
                        /* a 16-lane block's second group past M: all padding */
                        if ((gi * 8) % g->b + 8 < g->b) _mm256_storeu_ps(y + aj + 8, zero);
                    }
                    _mm256_storeu_ps(y + aj, v);
                }
            }
        }
    }
}
