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
#include <immintrin.h>

/* ---- gate math of the fused steps ----------------------------------------------------------
 * sigmoid and tanh for the gates, cheaper than act_math_avx512.h's (which the unfused path and
 * the activation ops use): the step's product keeps both FMA pipes busy, so the gate math costs
 * its FMA-pipe operations. One table-driven exp (6 FMA-pipe operations instead of ~11) serves
 * both, and tanh takes expm1 directly instead of evaluating a polynomial and an exp and
 * blending them. Measured against double precision over [-100, 100]: sigmoid within 2e-7
 * relative, tanh within 1e-6 relative (2e-7 absolute); NaN stays NaN, +-inf give the limits,
 * sigmoid(x) for x < -86 is sigmoid(-86) ~ 4.5e-38. The LSTM step (one_exp_neg, tanh_frac) has
 * the same accuracy with its arguments clamped to [-60, 60] (sigmoid(x < -60) = sigmoid(-60) ~
 * 8.8e-27) and |x| <= 10 for tanh (tanh(10) rounds to 1). */
/* 2^(j/32), j = 0..31, rounded to float: the table of exp_parts. */
static const float exp2_32[32] __attribute__((aligned(64))) = {
    1.000000000e+00f, 1.021897197e+00f, 1.044273734e+00f, 1.067140460e+00f,
    1.090507746e+00f, 1.114386797e+00f, 1.138788581e+00f, 1.163724899e+00f,
    1.189207077e+00f, 1.215247393e+00f, 1.241857767e+00f, 1.269050956e+00f,
    1.296839595e+00f, 1.325236678e+00f, 1.354255557e+00f, 1.383909941e+00f,
    1.414213538e+00f, 1.445180774e+00f, 1.476826191e+00f, 1.509164453e+00f,
    1.542210817e+00f, 1.575980902e+00f, 1.610490322e+00f, 1.645755529e+00f,
    1.681792855e+00f, 1.718619347e+00f, 1.756252170e+00f, 1.794709086e+00f,
    1.834008098e+00f, 1.874167681e+00f, 1.915206552e+00f, 1.957144141e+00f};

/* exp(y) = s (1 + p) for y in [-86, 86] (or NaN: p NaN): y = m ln2/32 + r with m = round(y 32/ln2),
 * |r| <= ln2/64; s = 2^(m/32) from the table (2^floor(m/32) added to its exponent as an integer,
 * s stays normal) and p = expm1(r) ~ r + r^2 (1/2 + r/6) (relative error < 1e-9). */
typedef struct exp_parts {
    __m512 s, p;
} exp_parts;
static inline exp_parts exp_split(__m512 y) {
    const __m512 shifter = _mm512_set1_ps(12582912.0f); /* 1.5 * 2^23: t's low bits hold m */
    __m512 t = _mm512_fmadd_ps(y, _mm512_set1_ps(46.16624131f), shifter);
    __m512 mf = _mm512_sub_ps(t, shifter);
    __m512 r = _mm512_fnmadd_ps(mf, _mm512_set1_ps(0.02166748046875f), y); /* exact product */
    r = _mm512_fnmadd_ps(mf, _mm512_set1_ps(-6.631076252e-06f), r);
    __m512i ti = _mm512_castps_si512(t);
    __m512 tj = _mm512_permutex2var_ps(_mm512_load_ps(exp2_32), ti, _mm512_load_ps(exp2_32 + 16));
    __m512i n23 = _mm512_slli_epi32(_mm512_srli_epi32(ti, 5), 23); /* floor(m / 32) << 23 */
    exp_parts e;
    e.s = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(tj), n23));
    __m512 q = _mm512_fmadd_ps(r, _mm512_set1_ps(0.16666667f), _mm512_set1_ps(0.5f));
    e.p = _mm512_fmadd_ps(q, _mm512_mul_ps(r, r), r);
    return e;
}

/* sigmoid(x) = 1 / (1 + exp(-x)), x clamped to [-86, 86]. */
static inline __m512 sig_g(__m512 x) {
    x = _mm512_min_ps(_mm512_set1_ps(86.0f), _mm512_max_ps(_mm512_set1_ps(-86.0f), x));
    exp_parts e = exp_split(_mm512_xor_ps(x, _mm512_set1_ps(-0.0f)));
    const __m512 one = _mm512_set1_ps(1.0f);
    return _mm512_div_ps(one, _mm512_add_ps(one, _mm512_fmadd_ps(e.s, e.p, e.s)));
}

/* tanh(x) = sign(x) (-m) / (2 + m), m = expm1(-2|x|) = s (1 + p) - 1 (no cancellation near 0). */
static inline __m512 tanh_g(__m512 x) {
    const __m512 sign = _mm512_set1_ps(-0.0f);
    __m512 y = _mm512_mul_ps(_mm512_andnot_ps(sign, x), _mm512_set1_ps(-2.0f));
    exp_parts e = exp_split(_mm512_max_ps(_mm512_set1_ps(-86.0f), y));
    __m512 m = _mm512_fmadd_ps(e.s, e.p, _mm512_sub_ps(e.s, _mm512_set1_ps(1.0f)));
    __m512 t = _mm512_div_ps(m, _mm512_sub_ps(_mm512_set1_ps(-2.0f), m)); /* >= 0 or -0 */
    return _mm512_or_ps(_mm512_andnot_ps(sign, t), _mm512_and_ps(x, sign));
}

/* LSTM gate math in fewer operations (lstm_unit): the denominators of the sigmoids and tanhs are
 * kept apart and combined before dividing, 3 divisions per unit instead of 5.
 * 2^(m/32) for the m held in the low bits of t = y * 32/ln2 + 1.5 * 2^23 (as in exp_split). */
static inline __m512 pow2_32(__m512 t) {
    __m512i ti = _mm512_castps_si512(t);
    __m512 tj = _mm512_permutex2var_ps(_mm512_load_ps(exp2_32), ti, _mm512_load_ps(exp2_32 + 16));
    __m512i n23 = _mm512_slli_epi32(_mm512_srli_epi32(ti, 5), 23);
    return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(tj), n23));
}
#define EXP_SHIFTER 12582912.0f  /* 1.5 * 2^23 */
#define EXP_L2E32 46.16624131f   /* 32 / ln 2 */
#define EXP_LN2_32_HI 0.02166748046875f /* ln2 / 32 = HI + LO, HI * m exact */
#define EXP_LN2_32_LO (-6.631076252e-06f)

/* 1 + exp(-x) (sigmoid(x) = 1 / that), x clamped to [-60, 60]: at most 1 + e^60; NaN stays NaN. */
static inline __m512 one_exp_neg(__m512 x) {
    x = _mm512_min_ps(_mm512_set1_ps(60.0f), _mm512_max_ps(_mm512_set1_ps(-60.0f), x));
    const __m512 sh = _mm512_set1_ps(EXP_SHIFTER);
    __m512 t = _mm512_fnmadd_ps(x, _mm512_set1_ps(EXP_L2E32), sh); /* y = -x */
    __m512 mf = _mm512_sub_ps(t, sh);
    __m512 rn = _mm512_fmadd_ps(mf, _mm512_set1_ps(EXP_LN2_32_HI), x); /* rn = -r */
    rn = _mm512_fmadd_ps(mf, _mm512_set1_ps(EXP_LN2_32_LO), rn);
    /* expm1(r) ~ r + r^2/2 + r^3/6 = rn^2 (1/2 - rn/6) - rn */
    __m512 q = _mm512_fnmadd_ps(rn, _mm512_set1_ps(0.16666667f), _mm512_set1_ps(0.5f));
    __m512 p = _mm512_fmsub_ps(q, _mm512_mul_ps(rn, rn), rn);
    __m512 s = pow2_32(t);
    return _mm512_add_ps(_mm512_set1_ps(1.0f), _mm512_fmadd_ps(s, p, s));
}

/* tanh(x) = n / d: m = expm1(-2 |x|) in (-1, 0] (|x| clamped to 10), d = 2 + m, n = -m with the
 * sign of x (as tanh_g, without the division). NaN gives NaN. */
typedef struct frac {
    __m512 n, d;
} frac;
static inline frac tanh_frac(__m512 x) {
    const __m512 sign = _mm512_set1_ps(-0.0f);
    __m512 ax = _mm512_min_ps(_mm512_set1_ps(10.0f), _mm512_andnot_ps(sign, x));
    const __m512 sh = _mm512_set1_ps(EXP_SHIFTER);
    __m512 t = _mm512_fnmadd_ps(ax, _mm512_set1_ps(2.0f * EXP_L2E32), sh); /* y = -2|x| */
    __m512 mf = _mm512_sub_ps(t, sh);
    __m512 rn = _mm512_fmadd_ps(mf, _mm512_set1_ps(0.5f * EXP_LN2_32_HI), ax); /* rn = -r/2 */
    rn = _mm512_fmadd_ps(mf, _mm512_set1_ps(0.5f * EXP_LN2_32_LO), rn);
    /* expm1(r), r = -2 rn: rn (rn (2 - 4/3 rn) - 2) */
    __m512 q = _mm512_fnmadd_ps(rn, _mm512_set1_ps(1.33333333f), _mm512_set1_ps(2.0f));
    __m512 p = _mm512_mul_ps(_mm512_fmsub_ps(q, rn, _mm512_set1_ps(2.0f)), rn);
    __m512 s = pow2_32(t);
    __m512 m = _mm512_fmadd_ps(s, p, _mm512_sub_ps(s, _mm512_set1_ps(1.0f)));
    frac f;
    f.d = _mm512_add_ps(_mm512_set1_ps(2.0f), m);
    f.n = _mm512_xor_ps(m, _mm512_andnot_ps(x, sign)); /* -m for x >= 0, m for x < 0 */
    return f;
}

#define GW FRT_RNN_GROUP
#define RNN_PF 16 /* inputs (k) the prefetches of R run ahead */

enum { K_LSTM = 0, K_GRU = 1 };

/* The 16-unit mask of group g: lanes below H. */
static inline __mmask16 group_mask(int64_t H, int64_t j0) {
    return j0 + GW <= H ? (__mmask16)0xffff : (__mmask16)((1u << (H - j0)) - 1u);
}

/* Gate math of one (row, group) unit from its pre-activations acc[G] (LSTM: xw + bias + product;
 * GRU: z, r likewise, h: Rbh + product): writes c, h_next and y.
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
    /* i g = tanh(pre_c) / (1 + e^-pre_i), f c = c / (1 + e^-pre_f), h = tanh(c) / (1 + e^-pre_o):
     * denominators at most (1 + e^60) * 3 */
    const __m512 di = one_exp_neg(acc[0]), dout = one_exp_neg(acc[1]), df = one_exp_neg(acc[2]);
    const frac gc = tanh_frac(acc[3]);
    float *c = a->c + row * H + j0;
    __m512 ig = _mm512_div_ps(gc.n, _mm512_mul_ps(di, gc.d));
    __m512 cn = _mm512_add_ps(_mm512_div_ps(_mm512_maskz_loadu_ps(m, c), df), ig);
    _mm512_mask_storeu_ps(c, m, cn);
    const frac tc = tanh_frac(cn);
    __m512 h = _mm512_div_ps(tc.n, _mm512_mul_ps(dout, tc.d));
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
    __m512 z = sig_g(acc[0]), rg = sig_g(acc[1]);
    __m512 xh = _mm512_add_ps(_mm512_maskz_loadu_ps(m, xw + 2 * H + j0),
                              _mm512_maskz_loadu_ps(m, a->bias + 2 * H + j0));
    __m512 nn = tanh_g(_mm512_fmadd_ps(rg, acc[2], xh));
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
    /* The products start from what the gate math adds to them: xw + bias (GRU h gate: Rbh) */
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++) {
        const float *xw = a->xw[r0 + r];
#pragma GCC unroll 4
        for (int n = 0; n < NG; n++) {
            const int64_t j0 = (g0 + n) * GW;
            const __mmask16 m = group_mask(H, j0);
#pragma GCC unroll 4
            for (int v = 0; v < G; v++)
                acc[r][n][v] = !xw ? _mm512_setzero_ps()
                               : KIND == K_GRU && v == 2
                                   ? _mm512_maskz_loadu_ps(m, a->rbh + j0)
                                   : _mm512_add_ps(_mm512_maskz_loadu_ps(m, xw + v * H + j0),
                                                   _mm512_maskz_loadu_ps(m, a->bias + v * H + j0));
        }
    }
    const int64_t K = a->h_prev_zero ? 0 : H;
    /* k runs down in reverse steps, so the whole step reads R as one stream (up in forward steps,
     * down in reverse ones) that the prefetches, RNN_PF inputs ahead, carry across blocks; the
     * prefetch addresses may lie outside R (never dereferenced: integer arithmetic). */
    const int64_t kd = a->reverse ? -1 : 1, pf = kd * RNN_PF * G * GW * (int64_t)sizeof(float);
    for (int64_t kk = 0, k = a->reverse ? K - 1 : 0; kk < K; kk++, k += kd) {
        __m512 b[4][4];
        const uintptr_t row = (uintptr_t)(Bq + k * G * GW) + (uintptr_t)pf;
#pragma GCC unroll 4
        for (int n = 0; n < NG; n++)
#pragma GCC unroll 4
            for (int v = 0; v < G; v++)
                _mm_prefetch((const char *)(row + (uintptr_t)((n * gs + v * GW) * (int64_t)sizeof(float))),
                             _MM_HINT_T0);
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
