/* AVX-512 small-M GEMM of the recurrent step (see rnn_simd.h): zmm vectors, blocks of up to
 * 4 rows x min(gv, 8 / 4 / 4 / 4 for 1 / 2 / 3 / 4 rows) vectors (at most 16 accumulators). */
#include "rnn_simd.h"

#if FRT_HAVE_X86
#include <immintrin.h>

#define VL 16
/* Each kernel shape is its own small function: clang's loop passes (IndVarSimplify's scalar
 * evolution) take time superlinear in the size of a function: with ASan/UBSan checks, one
 * function holding every shape inlined takes minutes and gigabytes to compile. */
#define NOINLINE __attribute__((noinline))

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
    static NOINLINE void rows##MR##_##NV(int64_t N, int64_t K, const float *A, int64_t lda,      \
                                         const float *Bq, int gv, float *C, int64_t ldc) {       \
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

/* The 16-unit mask of group g: lanes below H. */
static inline __mmask16 group_mask(int64_t H, int64_t j0) {
    return j0 + GW <= H ? (__mmask16)0xffff : (__mmask16)((1u << (H - j0)) - 1u);
}

/* Gate math of one (row, group) unit from its recurrent products acc[G]: writes c, h_next and y.
 * Not inlined: one copy serves every block shape. */
static NOINLINE void lstm_unit(const frt_rnn_step_args *a, const __m512 *acc,
                                                int64_t row, int64_t g) {
    const int64_t H = a->H, j0 = g * GW;
    const __mmask16 m = group_mask(H, j0);
    const float *xw = a->xw[row], *hp = a->h_prev + row * H;
    float *hn = a->h_next + row * H;
    if (!xw) { /* past this row's sequence length: the state stays */
        _mm512_mask_storeu_ps(hn + j0, m, _mm512_maskz_loadu_ps(m, hp + j0));
        return;
    }
#define PRE(v) _mm512_add_ps(_mm512_add_ps(_mm512_maskz_loadu_ps(m, xw + (v) * H + j0), acc[v]), \
                             _mm512_maskz_loadu_ps(m, a->bias + (v) * H + j0))
    __m512 gi = sigmoid512(PRE(0)), go = sigmoid512(PRE(1)), gf = sigmoid512(PRE(2));
    __m512 gc = tanh512(PRE(3));
    float *c = a->c + row * H + j0;
    __m512 cn = _mm512_fmadd_ps(gf, _mm512_maskz_loadu_ps(m, c), _mm512_mul_ps(gi, gc));
    _mm512_mask_storeu_ps(c, m, cn);
    __m512 h = _mm512_mul_ps(go, tanh512(cn));
    _mm512_mask_storeu_ps(hn + j0, m, h);
    if (a->y[row]) _mm512_mask_storeu_ps(a->y[row] + j0, m, h);
}

static NOINLINE void gru_unit(const frt_rnn_step_args *a, const __m512 *acc,
                                               int64_t row, int64_t g) {
    const int64_t H = a->H, j0 = g * GW;
    const __mmask16 m = group_mask(H, j0);
    const float *xw = a->xw[row], *hp = a->h_prev + row * H;
    float *hn = a->h_next + row * H;
    const __m512 hv = _mm512_maskz_loadu_ps(m, hp + j0);
    if (!xw) {
        _mm512_mask_storeu_ps(hn + j0, m, hv);
        return;
    }
    __m512 z = sigmoid512(PRE(0)), rg = sigmoid512(PRE(1));
#undef PRE
    __m512 xh = _mm512_add_ps(_mm512_maskz_loadu_ps(m, xw + 2 * H + j0),
                              _mm512_maskz_loadu_ps(m, a->bias + 2 * H + j0));
    __m512 rh = _mm512_add_ps(acc[2], _mm512_maskz_loadu_ps(m, a->rbh + j0));
    __m512 nn = tanh512(_mm512_fmadd_ps(rg, rh, xh));
    __m512 h = _mm512_fmadd_ps(_mm512_sub_ps(_mm512_set1_ps(1.0f), z), nn, _mm512_mul_ps(z, hv));
    _mm512_mask_storeu_ps(hn + j0, m, h);
    if (a->y[row]) _mm512_mask_storeu_ps(a->y[row] + j0, m, h);
}

/* Rows [r0, r0+MR) and groups [g0, g0+NG) of one step: MR*NG*G accumulators. The product runs in
 * registers, then the gate math of each (row, group) unit (lstm_unit / gru_unit). */
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
    const int64_t K = a->h_prev_zero ? 0 : H;
    for (int64_t k = 0; k < K; k++) {
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
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int n = 0; n < NG; n++) {
            if (KIND == K_LSTM) lstm_unit(a, acc[r][n], r0 + r, g0 + n);
            else gru_unit(a, acc[r][n], r0 + r, g0 + n);
        }
}

/* One non-inlined function per block shape (kind, rows, groups): small functions keep the
 * compile time of the file low (clang with sanitizers, see below). */
#define BLK(NAME, KIND, G, MR, NG)                                                               \
    static NOINLINE void NAME(const frt_rnn_step_args *a, int64_t r0, int64_t g0) {          \
        fused_blk(KIND, G, MR, NG, a, r0, g0);                                                   \
    }
BLK(lstm_4x1, K_LSTM, 4, 4, 1)
BLK(lstm_3x1, K_LSTM, 4, 3, 1)
BLK(lstm_2x2, K_LSTM, 4, 2, 2)
BLK(lstm_2x1, K_LSTM, 4, 2, 1)
BLK(lstm_1x4, K_LSTM, 4, 1, 4)
BLK(lstm_1x1, K_LSTM, 4, 1, 1)
BLK(gru_4x1, K_GRU, 3, 4, 1)
BLK(gru_3x1, K_GRU, 3, 3, 1)
BLK(gru_2x2, K_GRU, 3, 2, 2)
BLK(gru_2x1, K_GRU, 3, 2, 1)
BLK(gru_1x4, K_GRU, 3, 1, 4)
BLK(gru_1x1, K_GRU, 3, 1, 1)

typedef void (*blk_fn)(const frt_rnn_step_args *a, int64_t r0, int64_t g0);

/* One step: for each block of up to 4 rows, groups [0, ng) in blocks of NG groups (wide), then
 * single groups (one); last to first when rev (each row block sweeps the other way than the one
 * before). wide[m-1] / one[m-1] / nwide[m-1]: the block functions and NG for m rows. */
static void step(const frt_rnn_step_args *a, const blk_fn wide[4], const blk_fn one[4],
                 const int nwide[4]) {
    const int64_t ng = (a->H + GW - 1) / GW;
    int rev = a->reverse;
    for (int64_t r0 = 0; r0 < a->B; r0 += 4) {
        const int m = a->B - r0 >= 4 ? 4 : (int)(a->B - r0), NG = nwide[m - 1];
        const blk_fn w = wide[m - 1], o = one[m - 1];
        const int64_t nb = ng / NG, done = nb * NG;
        if (!rev) {
            for (int64_t q = 0; q < nb; q++) w(a, r0, q * NG);
            for (int64_t g = done; g < ng; g++) o(a, r0, g);
        } else {
            for (int64_t g = ng - 1; g >= done; g--) o(a, r0, g);
            for (int64_t q = nb - 1; q >= 0; q--) w(a, r0, q * NG);
        }
        rev = !rev;
    }
}

static const int nwide[4] = {4, 2, 1, 1}; /* groups per block for 1, 2, 3, 4 rows */

void frt_rnn_lstm_step_avx512(const frt_rnn_step_args *a) {
    static const blk_fn wide[4] = {lstm_1x4, lstm_2x2, lstm_3x1, lstm_4x1};
    static const blk_fn one[4] = {lstm_1x1, lstm_2x1, lstm_3x1, lstm_4x1};
    step(a, wide, one, nwide);
}

void frt_rnn_gru_step_avx512(const frt_rnn_step_args *a) {
    static const blk_fn wide[4] = {gru_1x4, gru_2x2, gru_3x1, gru_4x1};
    static const blk_fn one[4] = {gru_1x1, gru_2x1, gru_3x1, gru_4x1};
    step(a, wide, one, nwide);
}
#endif
