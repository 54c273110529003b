/* AVX-512 small-M GEMM of the recurrent step (see rnn_simd.h): zmm vectors, blocks of up to
 * 4 rows x min(gv, 8 / 4 / 4 / 4 for 1 / 2 / 3 / 4 rows) vectors (at most 16 accumulators). */
#include "rnn_simd.h"

#if FRT_HAVE_X86
#include <immintrin.h>

#define VL 16

/* C[MR, NV*VL) = A[MR, K] * NV vectors at B (row stride gw floats); only the first n columns are
 * stored. */
static inline __attribute__((always_inline)) void blk(const int MR, const int NV, int64_t K,
                                                      const float *A, int64_t lda, const float *B,
                                                      int64_t gw, float *C, int64_t ldc,
                                                      int64_t n) {
    __m512 acc[4][8];
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();
    for (int64_t k = 0; k < K; k++) {
        __m512 b[8];
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) b[v] = _mm512_loadu_ps(B + k * gw + v * VL);
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++) {
            __m512 a = _mm512_set1_ps(A[r * lda + k]);
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++) acc[r][v] = _mm512_fmadd_ps(a, b[v], acc[r][v]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) {
            int64_t c0 = (int64_t)v * VL;
            if (c0 + VL <= n) _mm512_storeu_ps(C + r * ldc + c0, acc[r][v]);
            else if (c0 < n)
                _mm512_mask_storeu_ps(C + r * ldc + c0, (__mmask16)((1u << (n - c0)) - 1u),
                                      acc[r][v]);
        }
}

/* MR rows of every group, NV vectors per block (NV divides gv). */
#define ROWS(MR, NV)                                                                             \
    static void rows##MR##_##NV(int64_t N, int64_t K, const float *A, int64_t lda,               \
                                const float *Bq, int gv, float *C, int64_t ldc) {                \
        const int64_t gw = (int64_t)gv * VL;                                                     \
        for (int64_t c0 = 0; c0 < N; c0 += gw, Bq += K * gw)                                     \
            for (int64_t o = 0; o < gw && c0 + o < N; o += NV * VL)                              \
                blk(MR, NV, K, A, lda, Bq + o, gw, C + c0 + o, ldc, N - c0 - o);                 \
    }
ROWS(1, 8)
ROWS(1, 4)
ROWS(1, 2)
ROWS(2, 4)
ROWS(2, 2)
ROWS(3, 4)
ROWS(3, 2)
ROWS(4, 4)
ROWS(4, 2)

void frt_rnn_mm_avx512(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bq,
                       int gv, float *C, int64_t ldc) {
    for (int64_t i = 0; i < M; i += 4) {
        const float *a = A + i * lda;
        float *c = C + i * ldc;
        const int64_t m = M - i >= 4 ? 4 : M - i;
        if (m == 4) {
            if (gv >= 4) rows4_4(N, K, a, lda, Bq, gv, c, ldc);
            else rows4_2(N, K, a, lda, Bq, gv, c, ldc);
        } else if (m == 3) {
            if (gv >= 4) rows3_4(N, K, a, lda, Bq, gv, c, ldc);
            else rows3_2(N, K, a, lda, Bq, gv, c, ldc);
        } else if (m == 2) {
            if (gv >= 4) rows2_4(N, K, a, lda, Bq, gv, c, ldc);
            else rows2_2(N, K, a, lda, Bq, gv, c, ldc);
        } else {
            if (gv >= 8) rows1_8(N, K, a, lda, Bq, gv, c, ldc);
            else if (gv >= 4) rows1_4(N, K, a, lda, Bq, gv, c, ldc);
            else rows1_2(N, K, a, lda, Bq, gv, c, ldc);
        }
    }
}
#endif

/* ---- fused LSTM / GRU steps (see rnn_simd.h) -------------------------------------------------- */
#if FRT_HAVE_X86
#include "act_math_avx512.h"

#define GW FRT_RNN_GROUP

enum { K_LSTM = 0, K_GRU = 1 };

/* Rows [r0, r0+MR) and groups [g0, g0+NG) of one step: MR*NG*G accumulators. */
static inline __attribute__((always_inline)) void fused_blk(const int KIND, const int G,
                                                            const int MR, const int NG,
                                                            const frt_rnn_step_args *a,
                                                            int64_t r0, int64_t g0) {
    const int64_t H = a->H, gs = H * G * GW; /* floats per packed group */
    const float *Bq = a->Rq + g0 * gs;
    const float *A = a->h_prev + r0 * H;
    __m512 acc[4][4][4];
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int n = 0; n < NG; n++)
#pragma GCC unroll 4
            for (int v = 0; v < G; v++) acc[r][n][v] = _mm512_setzero_ps();
    for (int64_t k = 0; k < H; k++) {
        __m512 b[4][4];
#pragma GCC unroll 4
        for (int n = 0; n < NG; n++)
#pragma GCC unroll 4
            for (int v = 0; v < G; v++) b[n][v] = _mm512_loadu_ps(Bq + n * gs + (k * G + v) * GW);
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++) {
            __m512 x = _mm512_set1_ps(A[r * H + k]);
#pragma GCC unroll 4
            for (int n = 0; n < NG; n++)
#pragma GCC unroll 4
                for (int v = 0; v < G; v++) acc[r][n][v] = _mm512_fmadd_ps(x, b[n][v], acc[r][n][v]);
        }
    }
    const __m512 one = _mm512_set1_ps(1.0f);
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++) {
        const int64_t row = r0 + r;
        const float *xw = a->xw[row];
        const float *hp = a->h_prev + row * H;
        float *hn = a->h_next + row * H;
        float *y = a->y[row];
#pragma GCC unroll 4
        for (int n = 0; n < NG; n++) {
            const int64_t j0 = (g0 + n) * GW;
            const __mmask16 m = j0 + GW <= H ? (__mmask16)0xffff
                                             : (__mmask16)((1u << (H - j0)) - 1u);
            if (!xw) { /* past this row's sequence length: the state stays */
                _mm512_mask_storeu_ps(hn + j0, m, _mm512_maskz_loadu_ps(m, hp + j0));
                continue;
            }
#define PRE(v) _mm512_add_ps(_mm512_add_ps(_mm512_maskz_loadu_ps(m, xw + (v) * H + j0), \
                                           acc[r][n][v]),                               \
                             _mm512_maskz_loadu_ps(m, a->bias + (v) * H + j0))
            __m512 h;
            if (KIND == K_LSTM) {
                __m512 gi = sigmoid512(PRE(0)), go = sigmoid512(PRE(1)), gf = sigmoid512(PRE(2));
                __m512 gc = tanh512(PRE(3));
                float *c = a->c + row * H + j0;
                __m512 cn = _mm512_fmadd_ps(gf, _mm512_maskz_loadu_ps(m, c), _mm512_mul_ps(gi, gc));
                _mm512_mask_storeu_ps(c, m, cn);
                h = _mm512_mul_ps(go, tanh512(cn));
            } else {
                __m512 z = sigmoid512(PRE(0)), rg = sigmoid512(PRE(1));
                __m512 xh = _mm512_add_ps(_mm512_maskz_loadu_ps(m, xw + 2 * H + j0),
                                          _mm512_maskz_loadu_ps(m, a->bias + 2 * H + j0));
                __m512 rh = _mm512_add_ps(acc[r][n][2], _mm512_maskz_loadu_ps(m, a->rbh + j0));
                __m512 nn = tanh512(_mm512_fmadd_ps(rg, rh, xh));
                __m512 hv = _mm512_maskz_loadu_ps(m, hp + j0);
                h = _mm512_fmadd_ps(_mm512_sub_ps(one, z), nn, _mm512_mul_ps(z, hv));
            }
#undef PRE
            _mm512_mask_storeu_ps(hn + j0, m, h);
            if (y) _mm512_mask_storeu_ps(y + j0, m, h);
        }
    }
}

/* Groups [0, ng) for rows [r0, r0+MR): blocks of NG groups, then single groups; last to first
 * when rev (each row block sweeps the other way than the one before). */
#define GROUPS(KIND, G, MR, NG)                                                                  \
    do {                                                                                         \
        const int64_t nb = ng / (NG), done = nb * (NG);                                          \
        if (!rev) {                                                                              \
            for (int64_t q = 0; q < nb; q++) fused_blk(KIND, G, MR, NG, a, r0, q * (NG));       \
            for (int64_t g = done; g < ng; g++) fused_blk(KIND, G, MR, 1, a, r0, g);             \
        } else {                                                                                 \
            for (int64_t g = ng - 1; g >= done; g--) fused_blk(KIND, G, MR, 1, a, r0, g);        \
            for (int64_t q = nb - 1; q >= 0; q--) fused_blk(KIND, G, MR, NG, a, r0, q * (NG));  \
        }                                                                                        \
        rev = !rev;                                                                              \
    } while (0)

void frt_rnn_lstm_step_avx512(const frt_rnn_step_args *a) {
    const int64_t ng = (a->H + GW - 1) / GW;
    int rev = a->reverse;
    for (int64_t r0 = 0; r0 < a->B; r0 += 4) {
        switch (a->B - r0 >= 4 ? 4 : a->B - r0) {
        case 4: GROUPS(K_LSTM, 4, 4, 1); break;
        case 3: GROUPS(K_LSTM, 4, 3, 1); break;
        case 2: GROUPS(K_LSTM, 4, 2, 2); break;
        default: GROUPS(K_LSTM, 4, 1, 4); break;
        }
    }
}

void frt_rnn_gru_step_avx512(const frt_rnn_step_args *a) {
    const int64_t ng = (a->H + GW - 1) / GW;
    int rev = a->reverse;
    for (int64_t r0 = 0; r0 < a->B; r0 += 4) {
        switch (a->B - r0 >= 4 ? 4 : a->B - r0) {
        case 4: GROUPS(K_GRU, 3, 4, 1); break;
        case 3: GROUPS(K_GRU, 3, 3, 1); break;
        case 2: GROUPS(K_GRU, 3, 2, 2); break;
        default: GROUPS(K_GRU, 3, 1, 4); break;
        }
    }
}
#endif
