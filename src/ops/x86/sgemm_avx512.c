/* AVX-512 inner loops of the blocked SGEMM/SGEMV (see sgemm.h); called only through the AVX-512
 * entry of the variant table.
 *
 * Register tile 12 x 32: 24 zmm accumulators (12 rows x 2 vectors of 16 columns); each K step
 * loads the 32 packed B columns once and broadcasts the 12 packed A values (embedded broadcasts),
 * 24 FMAs per 2 vector loads + 12 broadcasts. */
#include "ops/sgemm.h"

#if FRT_HAVE_X86
#include <immintrin.h>
#include <string.h>

#define MR 12
#define NR 32
#ifndef PF_HINT
#define PF_HINT _MM_HINT_T0
#endif

/* Stores alpha*acc + beta*c to 16 floats at c (lanes of m). */
static inline void store16(float *c, __m512 acc, __m512 va, __m512 vb, float beta, __mmask16 m) {
    if (beta == 0.0f) _mm512_mask_storeu_ps(c, m, _mm512_mul_ps(acc, va));
    else if (beta == 1.0f)
        _mm512_mask_storeu_ps(c, m, _mm512_fmadd_ps(acc, va, _mm512_maskz_loadu_ps(m, c)));
    else
        _mm512_mask_storeu_ps(
            c, m, _mm512_fmadd_ps(acc, va, _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(m, c))));
}

void frt_sgemm_ukr_avx512(int64_t kc, const float *Ap, const float *Bp, float *C, int64_t ldc,
                          float alpha, float beta) {
    __m512 c0[MR], c1[MR];
#pragma GCC unroll 12
    for (int r = 0; r < MR; r++) c0[r] = c1[r] = _mm512_setzero_ps();
    const int64_t pf = kc * NR;
    for (int64_t k = 0; k < kc; k++) {
        __m512 b0 = _mm512_loadu_ps(Bp), b1 = _mm512_loadu_ps(Bp + 16);
        _mm_prefetch((const char *)(Bp + pf), PF_HINT);
        _mm_prefetch((const char *)(Bp + pf + 16), PF_HINT);
#pragma GCC unroll 12
        for (int r = 0; r < MR; r++) {
            __m512 a = _mm512_set1_ps(Ap[r]);
            c0[r] = _mm512_fmadd_ps(a, b0, c0[r]);
            c1[r] = _mm512_fmadd_ps(a, b1, c1[r]);
        }
        Ap += MR;
        Bp += NR;
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
    for (int r = 0; r < MR; r++) {
        store16(C + r * ldc, c0[r], va, vb, beta, 0xffff);
        store16(C + r * ldc + 16, c1[r], va, vb, beta, 0xffff);
    }
}

/* Rows [0, R) of a 12-row packed A panel (stride MR) times a 32-column B panel: the last panel
 * of M (M = 64 leaves 4 rows, M = 128 leaves 8) at the full tile's throughput per row. */
static inline __attribute__((always_inline)) void ukr_rows(const int R, int64_t kc, const float *Ap,
                                                           const float *Bp, float *C, int64_t ldc,
                                                           float alpha, float beta) {
    __m512 c0[MR], c1[MR];
#pragma GCC unroll 12
    for (int r = 0; r < R; r++) c0[r] = c1[r] = _mm512_setzero_ps();
    const int64_t pf = kc * NR;
    for (int64_t k = 0; k < kc; k++) {
        __m512 b0 = _mm512_loadu_ps(Bp), b1 = _mm512_loadu_ps(Bp + 16);
        _mm_prefetch((const char *)(Bp + pf), PF_HINT);
        _mm_prefetch((const char *)(Bp + pf + 16), PF_HINT);
#pragma GCC unroll 12
        for (int r = 0; r < R; r++) {
            __m512 a = _mm512_set1_ps(Ap[r]);
            c0[r] = _mm512_fmadd_ps(a, b0, c0[r]);
            c1[r] = _mm512_fmadd_ps(a, b1, c1[r]);
        }
        Ap += MR;
        Bp += NR;
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
    for (int r = 0; r < R; r++) {
        store16(C + r * ldc, c0[r], va, vb, beta, 0xffff);
        store16(C + r * ldc + 16, c1[r], va, vb, beta, 0xffff);
    }
}

#ifdef FRT_SELECTIVE
/* A selective build keeps five row counts instead of twelve (about 9 KB less code): mr below 12
 * runs as sub-tiles of 8, 4, 2 and 1 rows. Each row of C gets the same products summed in the
 * same order, so the results are bit-identical (ctest selective.tile_rows). */
void frt_sgemm_ukr_m_avx512(int64_t mr, int64_t kc, const float *Ap, const float *Bp, float *C,
                            int64_t ldc, float alpha, float beta) {
    if (mr >= MR) {
        frt_sgemm_ukr_avx512(kc, Ap, Bp, C, ldc, alpha, beta);
        return;
    }
    for (int64_t r0 = 0; r0 < mr;) {
        int64_t left = mr - r0, n = left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
        if (n == 8) ukr_rows(8, kc, Ap + r0, Bp, C + r0 * ldc, ldc, alpha, beta);
        else if (n == 4) ukr_rows(4, kc, Ap + r0, Bp, C + r0 * ldc, ldc, alpha, beta);
        else if (n == 2) ukr_rows(2, kc, Ap + r0, Bp, C + r0 * ldc, ldc, alpha, beta);
        else ukr_rows(1, kc, Ap + r0, Bp, C + r0 * ldc, ldc, alpha, beta);
        r0 += n;
    }
}
#else
void frt_sgemm_ukr_m_avx512(int64_t mr, int64_t kc, const float *Ap, const float *Bp, float *C,
                            int64_t ldc, float alpha, float beta) {
    switch (mr) {
    case 1: ukr_rows(1, kc, Ap, Bp, C, ldc, alpha, beta); break;
    case 2: ukr_rows(2, kc, Ap, Bp, C, ldc, alpha, beta); break;
    case 3: ukr_rows(3, kc, Ap, Bp, C, ldc, alpha, beta); break;
    case 4: ukr_rows(4, kc, Ap, Bp, C, ldc, alpha, beta); break;
    case 5: ukr_rows(5, kc, Ap, Bp, C, ldc, alpha, beta); break;
    case 6: ukr_rows(6, kc, Ap, Bp, C, ldc, alpha, beta); break;
    case 7: ukr_rows(7, kc, Ap, Bp, C, ldc, alpha, beta); break;
    case 8: ukr_rows(8, kc, Ap, Bp, C, ldc, alpha, beta); break;
    case 9: ukr_rows(9, kc, Ap, Bp, C, ldc, alpha, beta); break;
    case 10: ukr_rows(10, kc, Ap, Bp, C, ldc, alpha, beta); break;
    case 11: ukr_rows(11, kc, Ap, Bp, C, ldc, alpha, beta); break;
    default: ukr_rows(12, kc, Ap, Bp, C, ldc, alpha, beta); break;
    }
}
#endif

void frt_sgemm_row_avx512(int64_t kc, const float *a, int64_t inca, const float *Bp, float *c,
                          float alpha, float beta) {
    /* two accumulator pairs over even/odd k to hide FMA latency */
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, t0 = s0, t1 = s0;
    int64_t k = 0;
    for (; k + 2 <= kc; k += 2) {
        __m512 a0 = _mm512_set1_ps(a[k * inca]), a1 = _mm512_set1_ps(a[(k + 1) * inca]);
        s0 = _mm512_fmadd_ps(a0, _mm512_loadu_ps(Bp), s0);
        s1 = _mm512_fmadd_ps(a0, _mm512_loadu_ps(Bp + 16), s1);
        t0 = _mm512_fmadd_ps(a1, _mm512_loadu_ps(Bp + 32), t0);
        t1 = _mm512_fmadd_ps(a1, _mm512_loadu_ps(Bp + 48), t1);
        Bp += 2 * NR;
    }
    if (k < kc) {
        __m512 a0 = _mm512_set1_ps(a[k * inca]);
        s0 = _mm512_fmadd_ps(a0, _mm512_loadu_ps(Bp), s0);
        s1 = _mm512_fmadd_ps(a0, _mm512_loadu_ps(Bp + 16), s1);
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    store16(c, _mm512_add_ps(s0, t0), va, vb, beta, 0xffff);
    store16(c + 16, _mm512_add_ps(s1, t1), va, vb, beta, 0xffff);
}

static inline __mmask16 first(int64_t n) { /* lanes [0, n), n <= 16 */
    return (__mmask16)(n >= 16 ? 0xffffu : (1u << n) - 1u);
}

static inline float out1(float r, float alpha, float beta, const float *y) {
    return beta == 0.0f ? alpha * r : alpha * r + beta * *y;
}

void frt_sgemv_n_avx512(int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
                        const float *x, float beta, float *y) {
    int64_t n16 = N & ~(int64_t)15;
    __mmask16 tm = first(N - n16);
    int64_t i = 0;
    /* four rows at a time share the x loads; two accumulators per row */
    for (; i + 4 <= M; i += 4) {
        const float *a0 = A + i * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        __m512 t0 = s0, t1 = s0, t2 = s0, t3 = s0;
        int64_t j = 0;
        for (; j + 32 <= n16; j += 32) {
            __m512 xv = _mm512_loadu_ps(x + j), xw = _mm512_loadu_ps(x + j + 16);
            s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a0 + j), xv, s0);
            s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a1 + j), xv, s1);
            s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a2 + j), xv, s2);
            s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a3 + j), xv, s3);
            t0 = _mm512_fmadd_ps(_mm512_loadu_ps(a0 + j + 16), xw, t0);
            t1 = _mm512_fmadd_ps(_mm512_loadu_ps(a1 + j + 16), xw, t1);
            t2 = _mm512_fmadd_ps(_mm512_loadu_ps(a2 + j + 16), xw, t2);
            t3 = _mm512_fmadd_ps(_mm512_loadu_ps(a3 + j + 16), xw, t3);
        }
        for (; j < N; j += 16) {
            __mmask16 m = j < n16 ? 0xffff : tm;
            __m512 xv = _mm512_maskz_loadu_ps(m, x + j);
            s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a0 + j), xv, s0);
            s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a1 + j), xv, s1);
            s2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a2 + j), xv, s2);
            s3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a3 + j), xv, s3);
        }
        float r[4] = {_mm512_reduce_add_ps(_mm512_add_ps(s0, t0)),
                      _mm512_reduce_add_ps(_mm512_add_ps(s1, t1)),
                      _mm512_reduce_add_ps(_mm512_add_ps(s2, t2)),
                      _mm512_reduce_add_ps(_mm512_add_ps(s3, t3))};
        for (int t = 0; t < 4; t++) y[i + t] = out1(r[t], alpha, beta, y + i + t);
    }
    for (; i < M; i++) {
        const float *a0 = A + i * lda;
        __m512 s0 = _mm512_setzero_ps(), s1 = s0;
        int64_t j = 0;
        for (; j + 32 <= n16; j += 32) {
            s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a0 + j), _mm512_loadu_ps(x + j), s0);
            s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a0 + j + 16), _mm512_loadu_ps(x + j + 16), s1);
        }
        for (; j < N; j += 16) {
            __mmask16 m = j < n16 ? 0xffff : tm;
            s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a0 + j), _mm512_maskz_loadu_ps(m, x + j),
                                 s0);
        }
        y[i] = out1(_mm512_reduce_add_ps(_mm512_add_ps(s0, s1)), alpha, beta, y + i);
    }
}

/* Narrow N (<= 64): y[0 .. N) (lanes of m0..m3) = alpha * A[:, block]^T x + beta * y: the 64 columns stay in
 * registers while the rows stream by, two rows per step. */
static void gemv_t_block(int64_t M, int64_t nb, float alpha, const float *A, int64_t lda,
                         const float *x, float beta, float *y) {
    __mmask16 m[4];
    for (int v = 0; v < 4; v++) m[v] = first(nb - 16 * v > 0 ? nb - 16 * v : 0);
    __m512 s[4], t[4];
    for (int v = 0; v < 4; v++) s[v] = t[v] = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 2 <= M; i += 2) {
        const float *a = A + i * lda;
        __m512 x0 = _mm512_set1_ps(x[i]), x1 = _mm512_set1_ps(x[i + 1]);
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) {
            s[v] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m[v], a + 16 * v), x0, s[v]);
            t[v] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m[v], a + lda + 16 * v), x1, t[v]);
        }
    }
    if (i < M) {
        const float *a = A + i * lda;
        __m512 x0 = _mm512_set1_ps(x[i]);
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++)
            s[v] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m[v], a + 16 * v), x0, s[v]);
    }
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    for (int v = 0; v < 4; v++)
        if (m[v]) store16(y + 16 * v, _mm512_add_ps(s[v], t[v]), va, vb, beta, m[v]);
}

/* Wide N: y = beta*y, then y += (alpha x[i]) A[i,:] four rows at a time (sequential streams). */
static void gemv_t_wide(int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
                        const float *x, float beta, float *y) {
    int64_t n16 = N & ~(int64_t)15;
    __mmask16 tm = first(N - n16);
    if (beta == 0.0f) memset(y, 0, (size_t)N * sizeof(float));
    else if (beta != 1.0f)
        for (int64_t j = 0; j < N; j++) y[j] *= beta;
    int64_t i = 0;
    for (; i + 4 <= M; i += 4) {
        const float *a0 = A + i * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        __m512 x0 = _mm512_set1_ps(alpha * x[i]), x1 = _mm512_set1_ps(alpha * x[i + 1]);
        __m512 x2 = _mm512_set1_ps(alpha * x[i + 2]), x3 = _mm512_set1_ps(alpha * x[i + 3]);
        for (int64_t j = 0; j < N; j += 16) {
            __mmask16 m = j < n16 ? 0xffff : tm;
            __m512 acc = _mm512_maskz_loadu_ps(m, y + j);
            __m512 t = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, a1 + j), x1);
            acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a0 + j), x0, acc);
            t = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a3 + j), x3, t);
            acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a2 + j), x2, acc);
            _mm512_mask_storeu_ps(y + j, m, _mm512_add_ps(acc, t));
        }
    }
    for (; i < M; i++) {
        const float *a0 = A + i * lda;
        __m512 x0 = _mm512_set1_ps(alpha * x[i]);
        for (int64_t j = 0; j < N; j += 16) {
            __mmask16 m = j < n16 ? 0xffff : tm;
            _mm512_mask_storeu_ps(y + j, m,
                                  _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a0 + j), x0,
                                                  _mm512_maskz_loadu_ps(m, y + j)));
        }
    }
}

void frt_sgemv_t_avx512(int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
                        const float *x, float beta, float *y) {
    if (N > 64) {
        gemv_t_wide(M, N, alpha, A, lda, x, beta, y);
        return;
    }
    gemv_t_block(M, N, alpha, A, lda, x, beta, y);
}

/* 16 x 16 transpose of r[0..15] in registers (row i lane j -> row j lane i). */
static inline void transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) { /* pairs of rows: interleave 32-bit lanes */
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) { /* 64-bit pairs */
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    /* rows 0-3 hold 4x4 blocks of source rows 0-3 in each 128-bit lane, rows 4-7 of rows 4-7,
     * and so on: exchange the 128-bit blocks between the four groups */
    for (int i = 0; i < 4; i++) {
        __m512 a = r[i], b = r[i + 4], c = r[i + 8], d = r[i + 12];
        __m512 ab0 = _mm512_shuffle_f32x4(a, b, 0x88); /* a0 a2 b0 b2 */
        __m512 ab1 = _mm512_shuffle_f32x4(a, b, 0xDD); /* a1 a3 b1 b3 */
        __m512 cd0 = _mm512_shuffle_f32x4(c, d, 0x88);
        __m512 cd1 = _mm512_shuffle_f32x4(c, d, 0xDD);
        t[i] = _mm512_shuffle_f32x4(ab0, cd0, 0x88);      /* a0 b0 c0 d0 */
        t[i + 8] = _mm512_shuffle_f32x4(ab0, cd0, 0xDD);  /* a2 b2 c2 d2 */
        t[i + 4] = _mm512_shuffle_f32x4(ab1, cd1, 0x88);  /* a1 b1 c1 d1 */
        t[i + 12] = _mm512_shuffle_f32x4(ab1, cd1, 0xDD); /* a3 b3 c3 d3 */
    }
    for (int i = 0; i < 16; i++) r[i] = t[i];
}

void frt_sgemm_pack_a_avx512(int64_t kc, const float *A, int64_t lda, float *d) {
    int64_t k = 0;
    for (; k + 16 <= kc; k += 16) {
        __m512 r[16];
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++)
            r[i] = i < MR ? _mm512_loadu_ps(A + i * lda + k) : _mm512_setzero_ps();
        transpose16(r); /* r[j] = column k + j: rows 0..11 in lanes 0..11 */
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++) _mm512_mask_storeu_ps(d + (k + j) * MR, 0x0fff, r[j]);
    }
    for (; k < kc; k++)
        for (int i = 0; i < MR; i++) d[k * MR + i] = A[i * lda + k];
}

#endif
