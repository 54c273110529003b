/* Winograd F(4x4, 3x3) on channel-blocked activations: geometry, weight transform, the portable
 * pieces, the driver and the variant table (see wino.h). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "wino.h"

#define WINO_L2_BUDGET (224 * 1024) /* bytes of V + O per block (the L2 is 512 KiB on Zen 3) */

/* The one-dimensional form's points (wino.h): the first P - 1 finite ones, then infinity. */
static const double wino1_pts[FRT_WINO1_PMAX - 1] = {0, 1, -1, 2, -2, 0.5, -0.5, 3, -3};

/* Inverts the n x n matrix a (row-major, destroyed) into inv by Gauss-Jordan elimination with
 * partial pivoting (the Vandermonde matrices here are regular: distinct points). */
static void inv_mat(double *a, int n, double *inv) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) inv[i * n + j] = i == j;
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int i = c + 1; i < n; i++)
            if (fabs(a[i * n + c]) > fabs(a[piv * n + c])) piv = i;
        for (int j = 0; j < n && piv != c; j++) {
            double t = a[c * n + j];
            a[c * n + j] = a[piv * n + j], a[piv * n + j] = t;
            t = inv[c * n + j];
            inv[c * n + j] = inv[piv * n + j], inv[piv * n + j] = t;
        }
        double d = a[c * n + c];
        for (int j = 0; j < n; j++) a[c * n + j] /= d, inv[c * n + j] /= d;
        for (int i = 0; i < n; i++) {
            double f = a[i * n + c];
            if (i == c || f == 0) continue;
            for (int j = 0; j < n; j++) a[i * n + j] -= f * a[c * n + j], inv[i * n + j] -= f * inv[c * n + j];
        }
    }
}

/* The one-dimensional form's matrices (wino.h): with V the P x P evaluation matrix of a
 * polynomial of degree P - 1 at the points (row j = (1, a_j, .., a_j^(P-1)); infinity: the
 * leading coefficient), a linear convolution of u (m) and w (r) is C ((A u) .* (G w)) with
 * C = V^-1, A and G evaluations at the points; the correlation is its transpose,
 * y = A^T ((G w) .* (C^T d)): B^T = C^T. Row j of B^T is divided by its largest magnitude s_j and
 * row j of G multiplied by it. bt [P][P], at [m][P], G [P][r] (any may be NULL). */
static void wino1_mats(int64_t m, int64_t r, float *bt, float *at, double *G) {
    int P = (int)(m + r - 1);
    double V[FRT_WINO1_PMAX * FRT_WINO1_PMAX], C[FRT_WINO1_PMAX * FRT_WINO1_PMAX];
    for (int j = 0; j < P; j++)
        for (int n = 0; n < P; n++)
            V[j * P + n] = j < P - 1 ? pow(wino1_pts[j], n) : n == P - 1;
    inv_mat(V, P, C);
    /* entries that are zero but for the inversion's rounding, zero */
    for (int i = 0; i < P * P; i++)
        if (fabs(C[i]) < 1e-12) C[i] = 0;
    for (int j = 0; j < P; j++) {
        double sc = 0;
        for (int n = 0; n < P; n++) sc = fabs(C[n * P + j]) > sc ? fabs(C[n * P + j]) : sc;
        for (int n = 0; n < P && bt; n++) bt[j * P + n] = (float)(C[n * P + j] / sc);
        for (int k = 0; k < r && G; k++)
            G[j * r + k] = sc * (j < P - 1 ? pow(wino1_pts[j], k) : k == r - 1);
        for (int i = 0; i < m && at; i++)
            at[i * P + j] = (float)(j < P - 1 ? pow(wino1_pts[j], i) : i == m - 1);
    }
}

void frt_wino1_gmat(const frt_wino_geom *g, double *G) {
    wino1_mats(g->m, g->r, NULL, NULL, G);
}

void frt_wino_geom_init(frt_wino_geom *g, int64_t T) {
    g->Cg = (g->C + 7) / 8;
    g->Mg = (g->M + 7) / 8;
    g->Mp = (g->M + 15) / 16 * 16;
    g->Kg = g->Cg;
    if (g->r > 0) {
        if (g->kd < 1) g->kd = 1;
        g->Kg = g->kd * g->Cg;
        g->s = 1;
        g->P = g->m + g->r - 1;
        g->th = g->axis ? (g->OH + g->m - 1) / g->m : g->OH;
        g->tw = g->axis ? g->OW : (g->OW + g->m - 1) / g->m;
        wino1_mats(g->m, g->r, g->bt, g->at, NULL);
    } else {
        if (g->s != 2) g->s = 1;
        if (g->m != 2 || g->s == 2) g->m = g->s == 2 ? 2 : 4;
        g->P = g->s == 2 ? 25 : (g->m + 2) * (g->m + 2);
        g->th = (g->OH + g->m - 1) / g->m;
        g->tw = (g->OW + g->m - 1) / g->m;
    }
    g->ntiles = g->th * g->tw;
    if (T <= 0) {
        /* as many tiles as keep V and O in the L2 budget, in whole GEMM row groups of 6 */
        T = WINO_L2_BUDGET / (g->P * 4 * (8 * g->Kg + g->Mp));
        T = T / 6 * 6;
        if (T < 6) T = 6;
    }
    if (T > g->ntiles) T = g->ntiles;
    g->T = T;
    /* V and O groups T P 8 floats apart, plus one 64-byte line where that is a multiple of
       2 KiB: with such a stride a GEMM's A rows of all channel groups (and the O rows it stores)
       fall into few cache sets (512->512 at 7x7, F(2x2), one block of 16 tiles: 8 KiB) */
    g->gs = T * g->P * 8;
    if (g->gs % 512 == 0) g->gs += 16;
}

size_t frt_wino_u_floats_m(int64_t C, int64_t M, int64_t m) {
    return (size_t)((m + 2) * (m + 2)) * (size_t)((C + 7) / 8 * 8) * (size_t)((M + 15) / 16 * 16);
}

size_t frt_wino_u_floats_geom(const frt_wino_geom *g) {
    return (size_t)frt_wino_u_positions(g) * (size_t)(g->r > 0 && g->kd > 1 ? g->kd : 1) *
           (size_t)((g->C + 7) / 8 * 8) *
           (size_t)((g->M + 15) / 16 * 16);
}

size_t frt_wino_u_floats(int64_t C, int64_t M) {
    return frt_wino_u_floats_m(C, M, 4);
}

size_t frt_wino_scratch_floats(const frt_wino_geom *g) {
    return (size_t)g->gs * (size_t)(g->Kg + g->Mp / 8);
}

/* G g for one column g = (g0, g1, g2) of a 3x3 kernel: G's rows are (1/4, 0, 0),
 * -(1, 1, 1)/6, -(1, -1, 1)/6, (1/24, 1/12, 1/6), (1/24, -1/12, 1/6), (0, 0, 1). */
static void wino_g6(double g0, double g1, double g2, double out[6]) {
    double e = g0 + g2, f = g0 / 24 + g2 / 6;
    out[0] = g0 / 4;
    out[1] = -(e + g1) / 6;
    out[2] = -(e - g1) / 6;
    out[3] = f + g1 / 12;
    out[4] = f - g1 / 12;
    out[5] = g2;
}

/* G g for F(2x2, 3x3): G's rows are (1, 0, 0), (1, 1, 1)/2, (1, -1, 1)/2, (0, 0, 1). */
static void wino_g4(double g0, double g1, double g2, double out[4]) {
    out[0] = g0;
    out[1] = (g0 + g1 + g2) / 2;
    out[2] = (g0 - g1 + g2) / 2;
    out[3] = g2;
}

/* G g for the stride-2 form (g->s == 2): (g0, g0 + g2, g2) for the even input samples'
 * F(2, 2), then g1 for the odd ones (G's rows 3 and 4, both (0, 1, 0): stored once). */
static void wino_g5(double g0, double g1, double g2, double out[4]) {
    out[0] = g0;
    out[1] = g0 + g2;
    out[2] = g2;
    out[3] = g1;
}

static void wino_gn(int n, double g0, double g1, double g2, double *out) {
    if (n == 6) wino_g6(g0, g1, g2, out);
    else if (n == 5) wino_g5(g0, g1, g2, out);
    else wino_g4(g0, g1, g2, out);
}

void frt_wino_pack(const float *w, int64_t C, int64_t M, float *U) {
    frt_wino_pack_m(w, C, M, 4, U);
}

static void wino_pack_n(const float *w, int64_t C, int64_t M, int n, float *U);

void frt_wino_pack_m(const float *w, int64_t C, int64_t M, int64_t tm, float *U) {
    wino_pack_n(w, C, M, tm == 2 ? 4 : 6, U);
}

/* The one-dimensional form: U [P][Mp/16][Cp][16] = G w per (m, c), zero past C and M. */
static void wino1_pack(const float *w, const frt_wino_geom *g, float *U) {
    int64_t C = g->C, M = g->M, Cp = 8 * g->Cg, Kp = 8 * g->Kg, np = g->Mp / 16, r = g->r;
    int64_t P = g->P, kd = g->kd;
    /* tap q along the axis of line i: w[m][c][i][q] (axis 0) or w[m][c][q][i] (axis 1) */
    int64_t qs = g->axis ? kd : 1, is = g->axis ? 1 : r;
    double G[FRT_WINO1_PMAX * FRT_WINO1_PMAX];
    frt_wino1_gmat(g, G);
    size_t plane = (size_t)np * (size_t)Kp * 16;
    memset(U, 0, (size_t)P * plane * sizeof *U);
    for (int64_t m = 0; m < M; m++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < kd; i++) {
                const float *k = w + (m * C + c) * r * kd + i * is;
                for (int64_t xi = 0; xi < P; xi++) {
                    double v = 0;
                    for (int64_t q = 0; q < r; q++) v += G[xi * r + q] * k[q * qs];
                    U[(size_t)xi * plane + (size_t)((m / 16 * Kp + i * Cp + c) * 16 + m % 16)] =
                        (float)v;
                }
            }
}

void frt_wino_pack_geom(const float *w, const frt_wino_geom *g, float *U) {
    if (g->r > 0) {
        wino1_pack(w, g, U);
        return;
    }
    wino_pack_n(w, g->C, g->M, g->s == 2 ? 5 : g->m == 2 ? 4 : 6, U);
}

/* kind: transformed tile side 6 or 4, or 5 for the stride-2 form (its 4x4 distinct positions
 * stored, frt_wino_upos) */
static void wino_pack_n(const float *w, int64_t C, int64_t M, int kind, float *U) {
    int64_t Cp = (C + 7) / 8 * 8, np = (M + 15) / 16;
    const int n = kind == 5 ? 4 : kind, P = n * n; /* stored side, positions */
    /* one input channel and 16-channel panel at a time: its 36 lines (one per plane, planes
       apart by a multiple of 4 KiB, so scattered single stores would thrash a cache set) are
       gathered in `line` and stored whole */
    size_t plane = (size_t)np * (size_t)Cp * 16;
    for (int64_t c = 0; c < C; c++)
        for (int64_t p = 0; p < np; p++) {
            float line[36][16] = {{0}};
            for (int64_t m = p * 16; m < M && m < p * 16 + 16; m++) {
                const float *k = w + (m * C + c) * 9;
                double t[3][6], u[6][6]; /* t: G applied to the kernel's columns; u = G k G^T */
                for (int j = 0; j < 3; j++) wino_gn(kind, k[j], k[3 + j], k[6 + j], t[j]);
                for (int i = 0; i < n; i++) wino_gn(kind, t[0][i], t[1][i], t[2][i], u[i]);
                for (int xi = 0; xi < P; xi++) line[xi][m % 16] = (float)u[xi / n][xi % n];
            }
            float *dst = U + (p * Cp + c) * 16;
            for (int xi = 0; xi < P; xi++) memcpy(dst + xi * plane, line[xi], sizeof line[xi]);
        }
    /* the padding channels C..Cp-1 of every panel are zero */
    for (int64_t xi = 0; xi < P && Cp > C; xi++)
        for (int64_t p = 0; p < np; p++)
            memset(U + xi * plane + (p * Cp + C) * 16, 0, (size_t)(Cp - C) * 16 * sizeof *U);
}

/* ---- portable pieces -------------------------------------------------------------------------- */

/* Address of 8-channel group gi of pixel (y, x) in a blocked image of block b. */
static inline size_t grp_at(const frt_wino_geom *g, int64_t gi, int64_t H, int64_t W, int64_t y,
                            int64_t x) {
    int64_t c = gi * 8;
    return (size_t)(((c / g->b * H + y) * W + x) * g->b + c % g->b);
}

/* The n x n input patch of channel group gi whose top-left is (iy0, ix0), as d[n][n][8]: zero
 * outside the image (padding) and in the lanes from `valid` on (channels past C). */
static void gather_patch(const float *x, const frt_wino_geom *g, int64_t gi, int64_t iy0,
                         int64_t ix0, int n, int64_t valid, float *d) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int64_t yy = iy0 + i, xx = ix0 + j;
            bool in = yy >= 0 && yy < g->H && xx >= 0 && xx < g->W;
            const float *p = in ? x + grp_at(g, gi, g->H, g->W, yy, xx) : NULL;
            for (int l = 0; l < 8; l++) d[(i * n + j) * 8 + l] = in && l < valid ? p[l] : 0.0f;
        }
}

/* F(2x2, 3x3): V = B^T d B of each 4x4 patch. */
static void itrans2_portable(const float *x, const frt_wino_geom *g, int64_t t0, int64_t nt,
                             float *V) {
    for (int64_t t = t0; t < t0 + nt; t++) {
        int64_t iy0 = t / g->tw * 2 - g->pt, ix0 = t % g->tw * 2 - g->pl;
        for (int64_t gi = 0; gi < g->Cg; gi++) {
            int64_t valid = g->C - gi * 8 < 8 ? g->C - gi * 8 : 8;
            float d[4][4][8], r[4][4][8];
            gather_patch(x, g, gi, iy0, ix0, 4, valid, &d[0][0][0]);
            for (int j = 0; j < 4; j++) /* r = B^T d (columns) */
                for (int l = 0; l < 8; l++) {
                    r[0][j][l] = d[0][j][l] - d[2][j][l];
                    r[1][j][l] = d[1][j][l] + d[2][j][l];
                    r[2][j][l] = d[2][j][l] - d[1][j][l];
                    r[3][j][l] = d[1][j][l] - d[3][j][l];
                }
            for (int i = 0; i < 4; i++) /* then (r B) rows */
                for (int l = 0; l < 8; l++) {
                    float o[4] = {r[i][0][l] - r[i][2][l], r[i][1][l] + r[i][2][l],
                                  r[i][2][l] - r[i][1][l], r[i][1][l] - r[i][3][l]};
                    for (int j = 0; j < 4; j++)
                        V[gi * g->gs + ((t - t0) * 16 + i * 4 + j) * 8 + l] = o[j];
                }
        }
    }
}

/* Stride 2: V = B^T d B of each 5x5 patch (the tile's 2x2 outputs read input rows / columns
 * 4 t - pad .. + 4), B^T = [1 0 -1 0 0; 0 0 1 0 0; 0 0 -1 0 1; 0 1 0 0 0; 0 0 0 1 0]. */
static void itrans_s2_portable(const float *x, const frt_wino_geom *g, int64_t t0, int64_t nt,
                               float *V) {
    for (int64_t t = t0; t < t0 + nt; t++) {
        int64_t iy0 = t / g->tw * 4 - g->pt, ix0 = t % g->tw * 4 - g->pl;
        for (int64_t gi = 0; gi < g->Cg; gi++) {
            int64_t valid = g->C - gi * 8 < 8 ? g->C - gi * 8 : 8;
            float d[5][5][8], r[5][5][8];
            gather_patch(x, g, gi, iy0, ix0, 5, valid, &d[0][0][0]);
            for (int j = 0; j < 5; j++) /* r = B^T d (columns) */
                for (int l = 0; l < 8; l++) {
                    r[0][j][l] = d[0][j][l] - d[2][j][l];
                    r[1][j][l] = d[2][j][l];
                    r[2][j][l] = d[4][j][l] - d[2][j][l];
                    r[3][j][l] = d[1][j][l];
                    r[4][j][l] = d[3][j][l];
                }
            for (int i = 0; i < 5; i++) /* then (r B) rows */
                for (int l = 0; l < 8; l++) {
                    float o[5] = {r[i][0][l] - r[i][2][l], r[i][2][l], r[i][4][l] - r[i][2][l],
                                  r[i][1][l], r[i][3][l]};
                    for (int j = 0; j < 5; j++)
                        V[gi * g->gs + ((t - t0) * 25 + i * 5 + j) * 8 + l] = o[j];
                }
        }
    }
}

/* The one-dimensional form: V = B^T d of each tile's P samples along the axis, for each of its
 * kd tap lines. */
static void itrans1_portable(const float *x, const frt_wino_geom *g, int64_t t0, int64_t nt,
                             float *V) {
    int64_t P = g->P;
    for (int64_t t = t0; t < t0 + nt; t++)
        for (int64_t vg = 0; vg < g->Kg; vg++) { /* V group vg: tap line i, channel group gi */
            int64_t i = vg / g->Cg, gi = vg % g->Cg;
            /* the first sample of tap line i */
            int64_t iy0 = t / g->tw, ix0 = t % g->tw;
            if (g->axis) iy0 = iy0 * g->m - g->pt, ix0 += i - g->pl;
            else ix0 = ix0 * g->m - g->pl, iy0 += i - g->pt;
            int64_t valid = g->C - gi * 8 < 8 ? g->C - gi * 8 : 8;
            float d[FRT_WINO1_PMAX][8];
            for (int64_t k = 0; k < P; k++) {
                int64_t yy = iy0 + (g->axis ? k : 0), xx = ix0 + (g->axis ? 0 : k);
                bool in = yy >= 0 && yy < g->H && xx >= 0 && xx < g->W;
                const float *p = in ? x + grp_at(g, gi, g->H, g->W, yy, xx) : NULL;
                for (int l = 0; l < 8; l++) d[k][l] = in && l < valid ? p[l] : 0.0f;
            }
            for (int64_t j = 0; j < P; j++)
                for (int l = 0; l < 8; l++) {
                    float v = 0.0f;
                    for (int64_t k = 0; k < P; k++) v += g->bt[j * P + k] * d[k][l];
                    V[vg * g->gs + ((t - t0) * P + j) * 8 + l] = v;
                }
        }
}

void frt_wino_itrans_portable(const float *x, const frt_wino_geom *g, int64_t t0, int64_t nt,
                              float *V) {
    if (g->r > 0) {
        itrans1_portable(x, g, t0, nt, V);
        return;
    }
    if (g->s == 2) {
        itrans_s2_portable(x, g, t0, nt, V);
        return;
    }
    if (g->m == 2) {
        itrans2_portable(x, g, t0, nt, V);
        return;
    }
    for (int64_t t = t0; t < t0 + nt; t++) {
        int64_t iy0 = t / g->tw * 4 - g->pt, ix0 = t % g->tw * 4 - g->pl;
        for (int64_t gi = 0; gi < g->Cg; gi++) {
            int64_t valid = g->C - gi * 8 < 8 ? g->C - gi * 8 : 8;
            float d[6][6][8], r[6][6][8];
            gather_patch(x, g, gi, iy0, ix0, 6, valid, &d[0][0][0]);
            /* r = B^T d (columns), then (r B) rows */
            for (int j = 0; j < 6; j++)
                for (int l = 0; l < 8; l++) {
                    float d0 = d[0][j][l], d1 = d[1][j][l], d2 = d[2][j][l], d3 = d[3][j][l],
                          d4 = d[4][j][l], d5 = d[5][j][l];
                    float a = d4 - 4.0f * d2, b = d3 - 4.0f * d1, c = d4 - d2,
                          e = 2.0f * (d3 - d1);
                    r[0][j][l] = 4.0f * d0 - 5.0f * d2 + d4;
                    r[1][j][l] = a + b;
                    r[2][j][l] = a - b;
                    r[3][j][l] = c + e;
                    r[4][j][l] = c - e;
                    r[5][j][l] = 4.0f * d1 - 5.0f * d3 + d5;
                }
            for (int i = 0; i < 6; i++)
                for (int l = 0; l < 8; l++) {
                    float d0 = r[i][0][l], d1 = r[i][1][l], d2 = r[i][2][l], d3 = r[i][3][l],
                          d4 = r[i][4][l], d5 = r[i][5][l];
                    float a = d4 - 4.0f * d2, b = d3 - 4.0f * d1, c = d4 - d2,
                          e = 2.0f * (d3 - d1);
                    float o[6] = {4.0f * d0 - 5.0f * d2 + d4, a + b, a - b, c + e, c - e,
                                  4.0f * d1 - 5.0f * d3 + d5};
                    for (int j = 0; j < 6; j++)
                        V[gi * g->gs + ((t - t0) * 36 + i * 6 + j) * 8 + l] = o[j];
                }
        }
    }
}

void frt_wino_gemm_portable(const float *V, const float *U, float *O, const frt_wino_geom *g,
                            int64_t nt, int64_t p0, int64_t p1) {
    int64_t Cp = 8 * g->Kg, np = g->Mp / 16, P = g->P;
    for (int64_t xi = 0; xi < P; xi++)
        for (int64_t p = p0; p < p1; p++)
            for (int64_t t = 0; t < nt; t++) {
                float acc[16] = {0};
                const float *u = U + (frt_wino_upos(g, xi) * np + p) * Cp * 16;
                for (int64_t c = 0; c < Cp; c++) {
                    float a = V[c / 8 * g->gs + (t * P + xi) * 8 + c % 8];
                    for (int m = 0; m < 16; m++) acc[m] += a * u[c * 16 + m];
                }
                for (int m = 0; m < 16; m++)
                    O[(2 * p + m / 8) * g->gs + (t * P + xi) * 8 + m % 8] = acc[m];
            }
}

/* The epilogue of one output value at y[at] (lane l of group gi): bias, residual, activation,
 * padding lanes written as 0. */
static inline void oput(const frt_wino_geom *g, int64_t gi, int l, int64_t valid, float o,
                        const float *bias, const float *z, float *y, size_t at) {
    float v = o + bias[gi * 8 + l];
    if (z) v += z[at];
    if (g->act == FRT_WINO_RELU) v = v < 0.0f ? 0.0f : v;
    else if (g->act == FRT_WINO_CLIP) v = v < g->lo ? g->lo : v > g->hi ? g->hi : v;
    y[at] = l < valid ? v : 0.0f;
    /* a 16-lane block's second group past M: all padding */
    if (gi == g->Mg - 1 && (gi * 8) % g->b + 8 < g->b) y[at + 8] = 0.0f;
}

/* F(2x2, 3x3): Y = A^T m A of each tile. */
static void otrans2_portable(const float *O, const float *bias, const float *z, float *y,
                             const frt_wino_geom *g, int64_t t0, int64_t nt, int64_t g0,
                             int64_t g1) {
    for (int64_t t = t0; t < t0 + nt; t++) {
        int64_t oy0 = t / g->tw * 2, ox0 = t % g->tw * 2;
        for (int64_t gi = g0; gi < g1; gi++) {
            int64_t valid = g->M - gi * 8 < 8 ? g->M - gi * 8 : 8;
            const float *o = O + gi * g->gs + (t - t0) * 16 * 8;
            for (int l = 0; l < 8; l++) {
                float r[2][4];
                for (int j = 0; j < 4; j++) {
                    float m0 = o[(0 * 4 + j) * 8 + l], m1 = o[(1 * 4 + j) * 8 + l],
                          m2 = o[(2 * 4 + j) * 8 + l], m3 = o[(3 * 4 + j) * 8 + l];
                    r[0][j] = m0 + m1 + m2;
                    r[1][j] = m1 - m2 - m3;
                }
                for (int i = 0; i < 2 && oy0 + i < g->OH; i++) {
                    float q[2] = {r[i][0] + r[i][1] + r[i][2], r[i][1] - r[i][2] - r[i][3]};
                    for (int j = 0; j < 2 && ox0 + j < g->OW; j++)
                        oput(g, gi, l, valid, q[j], bias, z, y,
                             grp_at(g, gi, g->OH, g->OW, oy0 + i, ox0 + j) + (size_t)l);
                }
            }
        }
    }
}

/* Stride 2: Y = A^T m A of each tile, A^T = [1 1 0 1 0; 0 1 1 0 1]. */
static void otrans_s2_portable(const float *O, const float *bias, const float *z, float *y,
                               const frt_wino_geom *g, int64_t t0, int64_t nt, int64_t g0,
                               int64_t g1) {
    for (int64_t t = t0; t < t0 + nt; t++) {
        int64_t oy0 = t / g->tw * 2, ox0 = t % g->tw * 2;
        for (int64_t gi = g0; gi < g1; gi++) {
            int64_t valid = g->M - gi * 8 < 8 ? g->M - gi * 8 : 8;
            const float *o = O + gi * g->gs + (t - t0) * 25 * 8;
            for (int l = 0; l < 8; l++) {
                float r[2][5];
                for (int j = 0; j < 5; j++) {
                    float m0 = o[(0 * 5 + j) * 8 + l], m1 = o[(1 * 5 + j) * 8 + l],
                          m2 = o[(2 * 5 + j) * 8 + l], m3 = o[(3 * 5 + j) * 8 + l],
                          m4 = o[(4 * 5 + j) * 8 + l];
                    r[0][j] = m0 + m1 + m3;
                    r[1][j] = m1 + m2 + m4;
                }
                for (int i = 0; i < 2 && oy0 + i < g->OH; i++) {
                    float q[2] = {r[i][0] + r[i][1] + r[i][3], r[i][1] + r[i][2] + r[i][4]};
                    for (int j = 0; j < 2 && ox0 + j < g->OW; j++)
                        oput(g, gi, l, valid, q[j], bias, z, y,
                             grp_at(g, gi, g->OH, g->OW, oy0 + i, ox0 + j) + (size_t)l);
                }
            }
        }
    }
}

/* The one-dimensional form: Y = A^T o of each tile, clipped to the image. */
static void otrans1_portable(const float *O, const float *bias, const float *z, float *y,
                             const frt_wino_geom *g, int64_t t0, int64_t nt, int64_t g0,
                             int64_t g1) {
    int64_t P = g->P;
    for (int64_t t = t0; t < t0 + nt; t++) {
        int64_t oy0 = t / g->tw, ox0 = t % g->tw;
        if (g->axis) oy0 *= g->m;
        else ox0 *= g->m;
        for (int64_t gi = g0; gi < g1; gi++) {
            int64_t valid = g->M - gi * 8 < 8 ? g->M - gi * 8 : 8;
            const float *o = O + gi * g->gs + (t - t0) * P * 8;
            for (int64_t i = 0; i < g->m; i++) {
                int64_t yy = oy0 + (g->axis ? i : 0), xx = ox0 + (g->axis ? 0 : i);
                if (yy >= g->OH || xx >= g->OW) break;
                for (int l = 0; l < 8; l++) {
                    float v = 0.0f;
                    for (int64_t j = 0; j < P; j++) v += g->at[i * P + j] * o[j * 8 + l];
                    oput(g, gi, l, valid, v, bias, z, y,
                         grp_at(g, gi, g->OH, g->OW, yy, xx) + (size_t)l);
                }
            }
        }
    }
}

void frt_wino_otrans_portable(const float *O, const float *bias, const float *z, float *y,
                              const frt_wino_geom *g, int64_t t0, int64_t nt, int64_t g0,
                              int64_t g1) {
    if (g->r > 0) {
        otrans1_portable(O, bias, z, y, g, t0, nt, g0, g1);
        return;
    }
    if (g->s == 2) {
        otrans_s2_portable(O, bias, z, y, g, t0, nt, g0, g1);
        return;
    }
    if (g->m == 2) {
        otrans2_portable(O, bias, z, y, g, t0, nt, g0, g1);
        return;
    }
    for (int64_t t = t0; t < t0 + nt; t++) {
        int64_t oy0 = t / g->tw * 4, ox0 = t % g->tw * 4;
        for (int64_t gi = g0; gi < g1; gi++) {
            int64_t valid = g->M - gi * 8 < 8 ? g->M - gi * 8 : 8;
            float r[4][6][8];
            for (int j = 0; j < 6; j++)
                for (int l = 0; l < 8; l++) {
                    float m[6];
                    for (int i = 0; i < 6; i++)
                        m[i] = O[gi * g->gs + ((t - t0) * 36 + i * 6 + j) * 8 + l];
                    float s12 = m[1] + m[2], d12 = m[1] - m[2], s34 = m[3] + m[4],
                          d34 = m[3] - m[4];
                    r[0][j][l] = m[0] + s12 + s34;
                    r[1][j][l] = d12 + 2.0f * d34;
                    r[2][j][l] = s12 + 4.0f * s34;
                    r[3][j][l] = d12 + 8.0f * d34 + m[5];
                }
            for (int i = 0; i < 4; i++) {
                if (oy0 + i >= g->OH) break;
                for (int l = 0; l < 8; l++) {
                    float m[6];
                    for (int j = 0; j < 6; j++) m[j] = r[i][j][l];
                    float s12 = m[1] + m[2], d12 = m[1] - m[2], s34 = m[3] + m[4],
                          d34 = m[3] - m[4];
                    float o[4] = {m[0] + s12 + s34, d12 + 2.0f * d34, s12 + 4.0f * s34,
                                  d12 + 8.0f * d34 + m[5]};
                    for (int j = 0; j < 4 && ox0 + j < g->OW; j++) {
                        size_t at = grp_at(g, gi, g->OH, g->OW, oy0 + i, ox0 + j) + (size_t)l;
                        float v = o[j] + bias[gi * 8 + l];
                        if (z) v += z[at];
                        if (g->act == FRT_WINO_RELU) v = v < 0.0f ? 0.0f : v;
                        else if (g->act == FRT_WINO_CLIP)
                            v = v < g->lo ? g->lo : v > g->hi ? g->hi : v;
                        y[at] = l < valid ? v : 0.0f;
                        /* a 16-lane block's second group past M: all padding */
                        if (gi == g->Mg - 1 && (gi * 8) % g->b + 8 < g->b) y[at + 8] = 0.0f;
                    }
                }
            }
        }
    }
}

/* ---- driver ----------------------------------------------------------------------------------- */

int64_t frt_wino_items(const frt_wino_geom *g, int64_t nsplit) {
    return (g->ntiles + g->T - 1) / g->T * nsplit;
}

void frt_wino_even_blocks(frt_wino_geom *g) {
    int64_t nb = (g->ntiles + g->T - 1) / g->T;
    if (nb > 1) frt_wino_geom_init(g, (g->ntiles + nb - 1) / nb);
}

/* The cost of work item i: its block's tiles times its panels. */
static int64_t item_cost(const frt_wino_geom *g, int64_t nsplit, int64_t i) {
    int64_t blk = i / nsplit, s = i % nsplit, np = g->Mp / 16;
    int64_t nt = g->ntiles - blk * g->T < g->T ? g->ntiles - blk * g->T : g->T;
    return nt * (np * (s + 1) / nsplit - np * s / nsplit);
}

/* Boundaries of `parts` parts over the items by cost (equal item counts are not even: blocks of
 * 48 tiles for 49 gave one part 48 tiles and the other 1). Boundary k goes before or after the
 * item where the running cost crosses k/parts of the total, whichever is nearer. Returns the
 * largest part's cost. */
static int64_t plan_bounds(const frt_wino_geom *g, int64_t nsplit, int64_t items, int64_t parts,
                           int64_t *bound) {
    int64_t total = 0, i = 0, cum = 0; /* cum: cost of items [0, i) */
    for (int64_t q = 0; q < items; q++) total += item_cost(g, nsplit, q);
    bound[0] = 0;
    for (int64_t k = 1; k < parts; k++) {
        double target = (double)total * (double)k / (double)parts;
        while (i < items && (double)(cum + item_cost(g, nsplit, i)) < target)
            cum += item_cost(g, nsplit, i++);
        if (i < items && (double)(cum + item_cost(g, nsplit, i)) - target < target - (double)cum)
            cum += item_cost(g, nsplit, i++);
        bound[k] = i;
    }
    bound[parts] = items;
    int64_t worst = 0;
    for (int64_t k = 0; k < parts; k++) {
        int64_t c = 0;
        for (int64_t q = bound[k]; q < bound[k + 1]; q++) c += item_cost(g, nsplit, q);
        if (c > worst) worst = c;
    }
    return worst;
}

int64_t frt_wino_plan_parts(const frt_wino_geom *g, int64_t parts, int64_t *nsplit,
                            int64_t *bound) {
    int64_t np = g->Mp / 16, ns = 1;
    if (parts < 1) parts = 1;
    for (; parts > 1 && ns < np; ns++) {
        int64_t items = frt_wino_items(g, ns);
        if (items >= parts && (double)plan_bounds(g, ns, items, parts, bound) * (double)parts <=
                                  1.05 * (double)(g->ntiles * np))
            break;
    }
    int64_t items = frt_wino_items(g, ns);
    if (parts > items) parts = items;
    plan_bounds(g, ns, items, parts, bound);
    *nsplit = ns;
    return parts;
}

void frt_wino_run(const frt_wino_variant *v, const float *x, const float *U, const float *bias,
                  const float *z, float *y, const frt_wino_geom *g, int64_t nsplit, int64_t i0,
                  int64_t i1, float *scratch) {
    float *V = scratch, *O = scratch + (size_t)g->gs * (size_t)g->Kg;
    int64_t np = g->Mp / 16, have = -1;
    for (int64_t i = i0; i < i1; i++) {
        int64_t blk = i / nsplit, s = i % nsplit;
        int64_t p0 = np * s / nsplit, p1 = np * (s + 1) / nsplit;
        if (p0 == p1) continue;
        int64_t t0 = blk * g->T, nt = g->ntiles - t0 < g->T ? g->ntiles - t0 : g->T;
        if (have != blk) v->itrans(x, g, t0, nt, V);
        have = blk;
        v->gemm(V, U, O, g, nt, p0, p1);
        int64_t g1 = 2 * p1 < g->Mg ? 2 * p1 : g->Mg;
        v->otrans(O, bias, z, y, g, t0, nt, 2 * p0, g1);
    }
}

static const frt_wino_variant wino_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "_avx2", frt_wino_itrans_avx2, frt_wino_gemm_avx2, frt_wino_otrans_avx2},
#endif
#endif
    {FRT_ISA_PORTABLE, "", frt_wino_itrans_portable, frt_wino_gemm_portable,
     frt_wino_otrans_portable},
};

const frt_wino_variant *frt_wino_variant_get(frt_isa cap) {
    return FRT_PICK_VARIANT(wino_variants, cap);
}
