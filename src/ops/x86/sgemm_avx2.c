/* AVX2/FMA inner loops of the blocked SGEMM/SGEMV (see sgemm.h): 6 x 16 register tile.
 * Compiled with -mavx2 -mfma; called only through the AVX2 entry of the variant table. */
#include "ops/sgemm.h"

#if FRT_HAVE_X86
#include <immintrin.h>
#include <string.h>


/* Stores alpha*acc + beta*c into 8 floats at c. */
static inline void store8(float *c, __m256 acc, __m256 va, __m256 vb, float beta) {
    if (beta == 0.0f) _mm256_storeu_ps(c, _mm256_mul_ps(acc, va));
    else if (beta == 1.0f) _mm256_storeu_ps(c, _mm256_fmadd_ps(acc, va, _mm256_loadu_ps(c)));
    else _mm256_storeu_ps(c, _mm256_fmadd_ps(acc, va, _mm256_mul_ps(vb, _mm256_loadu_ps(c))));
}


#define FMA_ROW(r, pa)                                                                            \
    do {                                                                                          \
        __m256 a_ = _mm256_broadcast_ss(pa);                                                      \
        c##r##0 = _mm256_fmadd_ps(a_, b0, c##r##0);                                               \
        c##r##1 = _mm256_fmadd_ps(a_, b1, c##r##1);                                               \
    } while (0)
#define KSTEP(o)                                                                                  \
    do {                                                                                          \
        __m256 b0 = _mm256_loadu_ps(Bp + 16 * (o)), b1 = _mm256_loadu_ps(Bp + 16 * (o) + 8);       \
        FMA_ROW(0, Ap + 6 * (o) + 0);                                                             \
        FMA_ROW(1, Ap + 6 * (o) + 1);                                                             \
        FMA_ROW(2, Ap + 6 * (o) + 2);                                                             \
        FMA_ROW(3, Ap + 6 * (o) + 3);                                                             \
        FMA_ROW(4, Ap + 6 * (o) + 4);                                                             \
        FMA_ROW(5, Ap + 6 * (o) + 5);                                                             \
    } while (0)

/* 6 x 16 tile: 12 accumulators, the k loop unrolled by 4 with the A panel prefetched ~16 steps
 * ahead (it streams from L2; the B panel is L1-resident, prefetched by the driver), the C tile
 * prefetched at the start so its load/store at the end does not miss. */
static inline __attribute__((always_inline)) void ukr_body(int64_t kc, const float *Ap,
                                                           const float *Bp, float *C, int64_t ldc,
                                                           float alpha, float beta,
                                                           const char *pf, int64_t pf_lines) {
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
    __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    for (int r = 0; r < 6; r++) {
        _mm_prefetch((const char *)(C + r * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(C + r * ldc + 15), _MM_HINT_T0);
    }
    int64_t k = 0;
    for (; k + 4 <= kc; k += 4) {
        _mm_prefetch((const char *)(Ap + 96), _MM_HINT_T0);
        _mm_prefetch((const char *)(Ap + 112), _MM_HINT_T0);
        if (pf_lines > 0 && (k & 4) == 0) { /* one line of the caller's prefetch per 8 k steps */
            _mm_prefetch(pf, _MM_HINT_T0);
            pf += 64;
            pf_lines--;
        }
        KSTEP(0);
        KSTEP(1);
        KSTEP(2);
        KSTEP(3);
        Ap += 24;
        Bp += 64;
    }
    for (; k < kc; k++) {
        KSTEP(0);
        Ap += 6;
        Bp += 16;
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    store8(C, c00, va, vb, beta);
    store8(C + 8, c01, va, vb, beta);
    C += ldc;
    store8(C, c10, va, vb, beta);
    store8(C + 8, c11, va, vb, beta);
    C += ldc;
    store8(C, c20, va, vb, beta);
    store8(C + 8, c21, va, vb, beta);
    C += ldc;
    store8(C, c30, va, vb, beta);
    store8(C + 8, c31, va, vb, beta);
    C += ldc;
    store8(C, c40, va, vb, beta);
    store8(C + 8, c41, va, vb, beta);
    C += ldc;
    store8(C, c50, va, vb, beta);
    store8(C + 8, c51, va, vb, beta);
    for (; pf_lines > 0; pf_lines--, pf += 64) _mm_prefetch(pf, _MM_HINT_T0); /* kc < 4 pf_lines */
}

void frt_sgemm_ukr_avx2(int64_t kc, const float *Ap, const float *Bp, float *C, int64_t ldc,
                        float alpha, float beta) {
    ukr_body(kc, Ap, Bp, C, ldc, alpha, beta, NULL, 0);
}

void frt_sgemm_ukr_pf_avx2(int64_t kc, const float *Ap, const float *Bp, float *C, int64_t ldc,
                           float alpha, float beta, const char *pf, int64_t pf_lines) {
    ukr_body(kc, Ap, Bp, C, ldc, alpha, beta, pf, pf_lines);
}

void frt_sgemm_row_avx2(int64_t kc, const float *a, int64_t inca, const float *Bp, float *c,
                        float alpha, float beta) {
    /* two accumulator pairs over even/odd k to hide FMA latency */
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 t0 = _mm256_setzero_ps(), t1 = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 2 <= kc; k += 2) {
        __m256 a0 = _mm256_set1_ps(a[k * inca]), a1 = _mm256_set1_ps(a[(k + 1) * inca]);
        s0 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(Bp), s0);
        s1 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(Bp + 8), s1);
        t0 = _mm256_fmadd_ps(a1, _mm256_loadu_ps(Bp + 16), t0);
        t1 = _mm256_fmadd_ps(a1, _mm256_loadu_ps(Bp + 24), t1);
        Bp += 32;
    }
    if (k < kc) {
        __m256 a0 = _mm256_set1_ps(a[k * inca]);
        s0 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(Bp), s0);
        s1 = _mm256_fmadd_ps(a0, _mm256_loadu_ps(Bp + 8), s1);
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    store8(c, _mm256_add_ps(s0, t0), va, vb, beta);
    store8(c + 8, _mm256_add_ps(s1, t1), va, vb, beta);
}

/* Rows [0, mm) of a 6 x 16 tile, mm = 3..5 a constant after inlining (named accumulators, each
 * row guarded by mm > r, so they stay in registers); the C rows past mm are untouched. */
#define ROW_FMA(r)                                                                                \
    if (mm > r) {                                                                                 \
        __m256 a_ = _mm256_broadcast_ss(Ap + r);                                                  \
        c##r##0 = _mm256_fmadd_ps(a_, b0, c##r##0);                                               \
        c##r##1 = _mm256_fmadd_ps(a_, b1, c##r##1);                                               \
    }
#define ROW_STORE(r)                                                                              \
    if (mm > r) {                                                                                 \
        store8(C + r * ldc, c##r##0, va, vb, beta);                                               \
        store8(C + r * ldc + 8, c##r##1, va, vb, beta);                                           \
    }
static inline __attribute__((always_inline)) void ukr_rows(const int mm, int64_t kc,
                                                           const float *Ap, const float *Bp,
                                                           float *C, int64_t ldc, float alpha,
                                                           float beta) {
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
    for (int r = 0; r < mm; r++) {
        _mm_prefetch((const char *)(C + r * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(C + r * ldc + 15), _MM_HINT_T0);
    }
    for (int64_t k = 0; k < kc; k++) {
        __m256 b0 = _mm256_loadu_ps(Bp), b1 = _mm256_loadu_ps(Bp + 8);
        ROW_FMA(0)
        ROW_FMA(1)
        ROW_FMA(2)
        ROW_FMA(3)
        ROW_FMA(4)
        Ap += 6;
        Bp += 16;
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    ROW_STORE(0)
    ROW_STORE(1)
    ROW_STORE(2)
    ROW_STORE(3)
    ROW_STORE(4)
}
#undef ROW_FMA
#undef ROW_STORE
static void ukr_rows3(int64_t kc, const float *Ap, const float *Bp, float *C, int64_t ldc,
                      float alpha, float beta) {
    ukr_rows(3, kc, Ap, Bp, C, ldc, alpha, beta);
}
static void ukr_rows4(int64_t kc, const float *Ap, const float *Bp, float *C, int64_t ldc,
                      float alpha, float beta) {
    ukr_rows(4, kc, Ap, Bp, C, ldc, alpha, beta);
}
static void ukr_rows5(int64_t kc, const float *Ap, const float *Bp, float *C, int64_t ldc,
                      float alpha, float beta) {
    ukr_rows(5, kc, Ap, Bp, C, ldc, alpha, beta);
}

/* Rows 0 and 1 of a 6 x 16 tile (the last panel of M = 128): two accumulator sets over even and
 * odd k, 8 chains that keep both FMA pipes busy (one row at a time, the row kernel reaches half
 * of that). */
static void ukr_rows2(int64_t kc, const float *Ap, const float *Bp, float *C, int64_t ldc,
                      float alpha, float beta) {
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
    __m256 d00 = _mm256_setzero_ps(), d01 = _mm256_setzero_ps();
    __m256 d10 = _mm256_setzero_ps(), d11 = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 2 <= kc; k += 2) {
        __m256 b0 = _mm256_loadu_ps(Bp), b1 = _mm256_loadu_ps(Bp + 8);
        __m256 e0 = _mm256_loadu_ps(Bp + 16), e1 = _mm256_loadu_ps(Bp + 24);
        __m256 a0 = _mm256_broadcast_ss(Ap), a1 = _mm256_broadcast_ss(Ap + 1);
        __m256 f0 = _mm256_broadcast_ss(Ap + 6), f1 = _mm256_broadcast_ss(Ap + 7);
        c00 = _mm256_fmadd_ps(a0, b0, c00);
        c01 = _mm256_fmadd_ps(a0, b1, c01);
        c10 = _mm256_fmadd_ps(a1, b0, c10);
        c11 = _mm256_fmadd_ps(a1, b1, c11);
        d00 = _mm256_fmadd_ps(f0, e0, d00);
        d01 = _mm256_fmadd_ps(f0, e1, d01);
        d10 = _mm256_fmadd_ps(f1, e0, d10);
        d11 = _mm256_fmadd_ps(f1, e1, d11);
        Ap += 12;
        Bp += 32;
    }
    if (k < kc) {
        __m256 b0 = _mm256_loadu_ps(Bp), b1 = _mm256_loadu_ps(Bp + 8);
        __m256 a0 = _mm256_broadcast_ss(Ap), a1 = _mm256_broadcast_ss(Ap + 1);
        c00 = _mm256_fmadd_ps(a0, b0, c00);
        c01 = _mm256_fmadd_ps(a0, b1, c01);
        c10 = _mm256_fmadd_ps(a1, b0, c10);
        c11 = _mm256_fmadd_ps(a1, b1, c11);
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    store8(C, _mm256_add_ps(c00, d00), va, vb, beta);
    store8(C + 8, _mm256_add_ps(c01, d01), va, vb, beta);
    store8(C + ldc, _mm256_add_ps(c10, d10), va, vb, beta);
    store8(C + ldc + 8, _mm256_add_ps(c11, d11), va, vb, beta);
}

void frt_sgemm_ukr_m_avx2(int64_t m, int64_t kc, const float *Ap, const float *Bp, float *C,
                          int64_t ldc, float alpha, float beta) {
    switch (m) {
    case 6: frt_sgemm_ukr_avx2(kc, Ap, Bp, C, ldc, alpha, beta); return;
    case 5: ukr_rows5(kc, Ap, Bp, C, ldc, alpha, beta); return;
    case 4: ukr_rows4(kc, Ap, Bp, C, ldc, alpha, beta); return;
    case 3: ukr_rows3(kc, Ap, Bp, C, ldc, alpha, beta); return;
    case 2: ukr_rows2(kc, Ap, Bp, C, ldc, alpha, beta); return;
    default: /* 1 row: the row kernel (two accumulator pairs hide the FMA latency) */
        for (int64_t r = 0; r < m; r++)
            frt_sgemm_row_avx2(kc, Ap + r, 6, Bp, C + r * ldc, alpha, beta);
        return;
    }
}

/* Packs one full 6-row panel of a row-major A (rows A[0..6) with stride lda, columns [0, kc))
 * into d[k][r] (6 floats per k): 8 columns at a time by an 8 x 8 transpose of the 6 rows and two
 * zero rows; column j of a group is stored as 8 floats at d + 6 (k + j), whose last 2 the next
 * column overwrites, except the group's last column, stored as 4 + 2 floats (never past the
 * panel). Columns past the last multiple of 8: element by element. Same result as the portable
 * packing (pack_a in sgemm.c), bit for bit. */
void frt_sgemm_pack_a_avx2(int64_t kc, const float *A, int64_t lda, float *d) {
    const float *a0 = A, *a1 = A + lda, *a2 = A + 2 * lda, *a3 = A + 3 * lda, *a4 = A + 4 * lda,
                *a5 = A + 5 * lda;
    const __m256 z = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 8 <= kc; k += 8) {
        __m256 r0 = _mm256_loadu_ps(a0 + k), r1 = _mm256_loadu_ps(a1 + k);
        __m256 r2 = _mm256_loadu_ps(a2 + k), r3 = _mm256_loadu_ps(a3 + k);
        __m256 r4 = _mm256_loadu_ps(a4 + k), r5 = _mm256_loadu_ps(a5 + k);
        __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
        __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
        __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
        /* s0: rows 0..3 of columns 0 | 4, s1: 1 | 5, s2: 2 | 6, s3: 3 | 7; s4..s7 rows 4, 5 */
        __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
        __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
        __m256 s4 = _mm256_shuffle_ps(t4, z, 0x44), s5 = _mm256_shuffle_ps(t4, z, 0xEE);
        __m256 s6 = _mm256_shuffle_ps(t5, z, 0x44), s7 = _mm256_shuffle_ps(t5, z, 0xEE);
        float *o = d + k * 6;
        _mm256_storeu_ps(o, _mm256_permute2f128_ps(s0, s4, 0x20));
        _mm256_storeu_ps(o + 6, _mm256_permute2f128_ps(s1, s5, 0x20));
        _mm256_storeu_ps(o + 12, _mm256_permute2f128_ps(s2, s6, 0x20));
        _mm256_storeu_ps(o + 18, _mm256_permute2f128_ps(s3, s7, 0x20));
        _mm256_storeu_ps(o + 24, _mm256_permute2f128_ps(s0, s4, 0x31));
        _mm256_storeu_ps(o + 30, _mm256_permute2f128_ps(s1, s5, 0x31));
        _mm256_storeu_ps(o + 36, _mm256_permute2f128_ps(s2, s6, 0x31));
        __m256 c7 = _mm256_permute2f128_ps(s3, s7, 0x31);
        _mm_storeu_ps(o + 42, _mm256_castps256_ps128(c7));
        _mm_storel_pi((__m64 *)(o + 46), _mm256_extractf128_ps(c7, 1));
    }
    for (; k < kc; k++) {
        float *o = d + k * 6;
        o[0] = a0[k];
        o[1] = a1[k];
        o[2] = a2[k];
        o[3] = a3[k];
        o[4] = a4[k];
        o[5] = a5[k];
    }
}

static inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Mask for the first n (0..7) lanes. */
static inline __m256i tail_mask(int64_t n) {
    static const int32_t m[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    return _mm256_loadu_si256((const __m256i *)(m + 8 - n));
}

void frt_sgemv_n_avx2(int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
                      const float *x, float beta, float *y) {
    if (N < 8) {
        /* short rows: plain dot products */
        for (int64_t i = 0; i < M; i++) {
            const float *a = A + i * lda;
            float r = 0.0f;
            for (int64_t j = 0; j < N; j++) r += a[j] * x[j];
            y[i] = beta == 0.0f ? alpha * r : alpha * r + beta * y[i];
        }
        return;
    }
    int64_t n8 = N & ~(int64_t)7;
    __m256i tm = tail_mask(N - n8);
    int64_t i = 0;
    /* four rows at a time share the x loads */
    for (; i + 4 <= M; i += 4) {
        const float *a0 = A + i * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
        __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
        int64_t j = 0;
        for (; j < n8; j += 8) {
            __m256 xv = _mm256_loadu_ps(x + j);
            s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a0 + j), xv, s0);
            s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a1 + j), xv, s1);
            s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a2 + j), xv, s2);
            s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a3 + j), xv, s3);
        }
        if (j < N) {
            __m256 xv = _mm256_maskload_ps(x + j, tm);
            s0 = _mm256_fmadd_ps(_mm256_maskload_ps(a0 + j, tm), xv, s0);
            s1 = _mm256_fmadd_ps(_mm256_maskload_ps(a1 + j, tm), xv, s1);
            s2 = _mm256_fmadd_ps(_mm256_maskload_ps(a2 + j, tm), xv, s2);
            s3 = _mm256_fmadd_ps(_mm256_maskload_ps(a3 + j, tm), xv, s3);
        }
        float r[4] = {hsum(s0), hsum(s1), hsum(s2), hsum(s3)};
        for (int t = 0; t < 4; t++)
            y[i + t] = beta == 0.0f ? alpha * r[t] : alpha * r[t] + beta * y[i + t];
    }
    for (; i < M; i++) {
        const float *a0 = A + i * lda;
        __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
        int64_t j = 0;
        for (; j + 16 <= n8; j += 16) {
            s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a0 + j), _mm256_loadu_ps(x + j), s0);
            s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a0 + j + 8), _mm256_loadu_ps(x + j + 8), s1);
        }
        for (; j < n8; j += 8)
            s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a0 + j), _mm256_loadu_ps(x + j), s0);
        if (j < N)
            s1 = _mm256_fmadd_ps(_mm256_maskload_ps(a0 + j, tm), _mm256_maskload_ps(x + j, tm), s1);
        float r = hsum(_mm256_add_ps(s0, s1));
        y[i] = beta == 0.0f ? alpha * r : alpha * r + beta * y[i];
    }
}

/* y[N] = alpha * A^T x + beta * y for few columns (N <= 64): the column block stays in registers
 * while the rows stream by. */
static void sgemv_t_narrow(int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
                           const float *x, float beta, float *y) {
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    int64_t j = 0;
    for (; j + 32 <= N; j += 32) {
        __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
        __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
        const float *a = A + j;
        for (int64_t i = 0; i < M; i++, a += lda) {
            __m256 xv = _mm256_broadcast_ss(x + i);
            s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a), xv, s0);
            s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + 8), xv, s1);
            s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + 16), xv, s2);
            s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + 24), xv, s3);
        }
        store8(y + j, s0, va, vb, beta);
        store8(y + j + 8, s1, va, vb, beta);
        store8(y + j + 16, s2, va, vb, beta);
        store8(y + j + 24, s3, va, vb, beta);
    }
    for (; j + 8 <= N; j += 8) {
        __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
        const float *a = A + j;
        int64_t i = 0;
        for (; i + 2 <= M; i += 2, a += 2 * lda) {
            s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a), _mm256_broadcast_ss(x + i), s0);
            s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + lda), _mm256_broadcast_ss(x + i + 1), s1);
        }
        if (i < M) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a), _mm256_broadcast_ss(x + i), s0);
        store8(y + j, _mm256_add_ps(s0, s1), va, vb, beta);
    }
    if (j < N) {
        if (N - j == 1) {
            /* a single column: strided dot product */
            float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            const float *a = A + j;
            int64_t i = 0;
            for (; i + 4 <= M; i += 4, a += 4 * lda) {
                s0 += a[0] * x[i];
                s1 += a[lda] * x[i + 1];
                s2 += a[2 * lda] * x[i + 2];
                s3 += a[3 * lda] * x[i + 3];
            }
            for (; i < M; i++, a += lda) s0 += a[0] * x[i];
            float r = (s0 + s1) + (s2 + s3);
            y[j] = beta == 0.0f ? alpha * r : alpha * r + beta * y[j];
            return;
        }
        __m256i tm = tail_mask(N - j);
        __m256 s0 = _mm256_setzero_ps();
        const float *a = A + j;
        for (int64_t i = 0; i < M; i++, a += lda)
            s0 = _mm256_fmadd_ps(_mm256_maskload_ps(a, tm), _mm256_broadcast_ss(x + i), s0);
        float r[8];
        _mm256_storeu_ps(r, s0);
        for (int64_t t = 0; t < N - j; t++)
            y[j + t] = beta == 0.0f ? alpha * r[t] : alpha * r[t] + beta * y[j + t];
    }
}

void frt_sgemv_t_avx2(int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
                      const float *x, float beta, float *y) {
    if (N <= 64) {
        sgemv_t_narrow(M, N, alpha, A, lda, x, beta, y);
        return;
    }
    /* wide: y = beta*y, then y += (alpha x[i]) A[i,:] four rows at a time (sequential streams) */
    int64_t n8 = N & ~(int64_t)7;
    __m256i tm = tail_mask(N - n8);
    if (beta == 0.0f) memset(y, 0, (size_t)N * sizeof(float));
    else if (beta != 1.0f)
        for (int64_t j = 0; j < N; j++) y[j] *= beta;
    int64_t i = 0;
    for (; i + 4 <= M; i += 4) {
        const float *a0 = A + i * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        const float f0 = alpha * x[i], f1 = alpha * x[i + 1], f2 = alpha * x[i + 2],
                    f3 = alpha * x[i + 3];
        __m256 x0 = _mm256_set1_ps(f0), x1 = _mm256_set1_ps(f1);
        __m256 x2 = _mm256_set1_ps(f2), x3 = _mm256_set1_ps(f3);
        int64_t j = 0;
        for (; j < n8; j += 8) {
            __m256 acc = _mm256_loadu_ps(y + j);
            __m256 t = _mm256_mul_ps(_mm256_loadu_ps(a1 + j), x1);
            acc = _mm256_fmadd_ps(_mm256_loadu_ps(a0 + j), x0, acc);
            t = _mm256_fmadd_ps(_mm256_loadu_ps(a3 + j), x3, t);
            acc = _mm256_fmadd_ps(_mm256_loadu_ps(a2 + j), x2, acc);
            _mm256_storeu_ps(y + j, _mm256_add_ps(acc, t));
        }
        for (; j < N; j++) y[j] += (a0[j] * f0 + a1[j] * f1) + (a2[j] * f2 + a3[j] * f3);
    }
    for (; i < M; i++) {
        const float *a0 = A + i * lda;
        __m256 x0 = _mm256_set1_ps(alpha * x[i]);
        int64_t j = 0;
        for (; j < n8; j += 8)
            _mm256_storeu_ps(y + j, _mm256_fmadd_ps(_mm256_loadu_ps(a0 + j), x0,
                                                    _mm256_loadu_ps(y + j)));
        if (j < N)
            _mm256_maskstore_ps(y + j, tm, _mm256_fmadd_ps(_mm256_maskload_ps(a0 + j, tm), x0,
                                                           _mm256_maskload_ps(y + j, tm)));
    }
}

#endif
