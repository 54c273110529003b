/* AVX2/FMA small-M GEMM of the recurrent step (see rnn_simd.h): ymm vectors, blocks of up to
 * 4 rows x min(gv, 8 / 4 / 2 / 2 for 1 / 2 / 3 / 4 rows) vectors (at most 8 accumulators), and
 * with gv 2 (the input projections' packing, rnn.c PROJ_GV) blocks of 6 rows x 2 vectors while 6
 * rows remain (but 7 and 8 rows run as 4 + 3 and 4 + 4): 12 accumulators give the FMA chains
 * slack (the projections of the lstm zoo model, 128 x 1024 x 128..256: ~96 -> ~98-99 GFLOP/s on
 * Zen 3, peak ~103.7). */
#include "rnn_simd.h"

#if FRT_HAVE_X86
#include <immintrin.h>

#define VL 8

/* C[MR, NV*VL) = A[MR, K] * NV vectors at B (row stride gw floats); only the first n columns are
 * stored. */
static inline __attribute__((always_inline)) void blk(const int MR, const int NV, int64_t K,
                                                      const float *A, int64_t lda, const float *B,
                                                      int64_t gw, float *C, int64_t ldc,
                                                      int64_t n) {
    __m256 acc[6][8];
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) acc[r][v] = _mm256_setzero_ps();
    for (int64_t k = 0; k < K; k++) {
        __m256 b[8];
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) b[v] = _mm256_loadu_ps(B + k * gw + v * VL);
#pragma GCC unroll 6
        for (int r = 0; r < MR; r++) {
            __m256 a = _mm256_set1_ps(A[r * lda + k]);
#pragma GCC unroll 8
            for (int v = 0; v < NV; v++) acc[r][v] = _mm256_fmadd_ps(a, b[v], acc[r][v]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 8
        for (int v = 0; v < NV; v++) {
            int64_t c0 = (int64_t)v * VL;
            if (c0 + VL <= n) _mm256_storeu_ps(C + r * ldc + c0, acc[r][v]);
            else if (c0 < n)
                _mm256_maskstore_ps(C + r * ldc + c0,
                                    _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - c0)),
                                                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)),
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
ROWS(3, 2)
ROWS(4, 2)
ROWS(6, 2)

void frt_rnn_mm_avx2(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bq,
                     int gv, float *C, int64_t ldc) {
    for (int64_t i = 0; i < M;) {
        const float *a = A + i * lda;
        float *c = C + i * ldc;
        /* 7 and 8 rows: 4 + 3 and 4 + 4 (a 1- or 2-row block has 2 or 4 accumulators and costs
         * about as much time as a 4-row block) */
        if (gv == 2 && M - i >= 6 && M - i != 7 && M - i != 8) {
            rows6_2(N, K, a, lda, Bq, gv, c, ldc);
            i += 6;
            continue;
        }
        const int64_t m = M - i >= 4 ? 4 : M - i;
        i += m;
        if (m == 4) {
            rows4_2(N, K, a, lda, Bq, gv, c, ldc);
        } else if (m == 3) {
            rows3_2(N, K, a, lda, Bq, gv, c, ldc);
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

/* ---- fused LSTM / GRU steps (see rnn_simd.h) --------------------------------------------------
 * GRU: R packed with gw = 8 units per group, one pass of 3 gates (z r h); LSTM: gw = 24 units per
 * group, 4 passes of one gate (i, o, f, c; below). A block is up to 4 rows x one group (GRU: up
 * to 4 groups for fewer rows): each pass keeps up to 12 accumulators of the 16 ymm registers
 * (rows x gates x vectors) and streams its part of R once for all rows; the pre-activations go
 * through a small stack buffer to the gate math. The FMA chains need slack: with latency 4 and 2
 * FMAs per cycle, 8 accumulators keep the FMA units busy only if nothing delays them (the LSTM's
 * former 4 rows x 2 gates x 1 vector blocks ran the steps ~2-4% slower than 12). */
#if FRT_HAVE_X86
#define NOINLINE __attribute__((noinline))
#define GW 8
#define RNN_PF 24 /* inputs (k) the software prefetches of R run ahead */

/* ---- gate math: sigmoid and tanh on a table-driven exp (the AVX-512 steps' method with an
 * 8-entry table, which a single permutevar8x32 reads, and a degree-4 expm1 on |r| <= ln2/16:
 * relative error < 2e-9 before rounding). Arguments of the sigmoids are clamped to [-60, 60]
 * (sigmoid(x < -60) = sigmoid(-60) ~ 8.8e-27) and |x| <= 10 for tanh (tanh(10) rounds to 1);
 * NaN stays NaN. */
#define EXP_SHIFTER 12582912.0f          /* 1.5 * 2^23: t's low bits hold m */
#define EXP_L2E8 11.54156032f            /* 8 / ln 2 */
#define EXP_LN2_8_HI 0.086669921875f     /* ln2 / 8 = HI + LO, HI * m exact */
#define EXP_LN2_8_LO (-2.652430500e-05f)

/* 2^(m/8) for the m held in the low bits of t = y * 8/ln2 + 1.5 * 2^23. */
static inline __m256 pow2_8(__m256 t) {
    const __m256 tab = _mm256_setr_ps(1.0f, 1.090507733f, 1.189207115f, 1.296839555f,
                                      1.414213562f, 1.542210825f, 1.681792831f, 1.834008086f);
    __m256i ti = _mm256_castps_si256(t);
    __m256 tj = _mm256_permutevar8x32_ps(tab, ti);
    __m256i n23 = _mm256_slli_epi32(_mm256_srli_epi32(ti, 3), 23); /* floor(m / 8) << 23 */
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(tj), n23));
}

/* 1 + exp(-x) (sigmoid(x) = 1 / that), x clamped to [-60, 60]. */
static inline __m256 one_exp_neg(__m256 x) {
    x = _mm256_min_ps(_mm256_set1_ps(60.0f), _mm256_max_ps(_mm256_set1_ps(-60.0f), x));
    const __m256 sh = _mm256_set1_ps(EXP_SHIFTER);
    __m256 t = _mm256_fnmadd_ps(x, _mm256_set1_ps(EXP_L2E8), sh); /* y = -x */
    __m256 mf = _mm256_sub_ps(t, sh);
    __m256 rn = _mm256_fmadd_ps(mf, _mm256_set1_ps(EXP_LN2_8_HI), x); /* rn = -r */
    rn = _mm256_fmadd_ps(mf, _mm256_set1_ps(EXP_LN2_8_LO), rn);
    /* expm1(r) ~ r + r^2 (1/2 + r (1/6 + r/24)), r = -rn */
    __m256 q = _mm256_fnmadd_ps(rn, _mm256_set1_ps(1.0f / 24.0f), _mm256_set1_ps(1.0f / 6.0f));
    q = _mm256_fnmadd_ps(rn, q, _mm256_set1_ps(0.5f));
    __m256 p = _mm256_fmsub_ps(q, _mm256_mul_ps(rn, rn), rn);
    __m256 s = pow2_8(t);
    return _mm256_add_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(s, p, s));
}

/* tanh(x) = n / d: m = expm1(-2 |x|) in (-1, 0] (|x| clamped to 10), d = 2 + m, n = -m with the
 * sign of x. NaN gives NaN. */
typedef struct frac {
    __m256 n, d;
} frac;
static inline frac tanh_frac(__m256 x) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 ax = _mm256_min_ps(_mm256_set1_ps(10.0f), _mm256_andnot_ps(sign, x));
    const __m256 sh = _mm256_set1_ps(EXP_SHIFTER);
    __m256 t = _mm256_fnmadd_ps(ax, _mm256_set1_ps(2.0f * EXP_L2E8), sh); /* y = -2|x| */
    __m256 mf = _mm256_sub_ps(t, sh);
    __m256 rn = _mm256_fmadd_ps(mf, _mm256_set1_ps(0.5f * EXP_LN2_8_HI), ax); /* rn = -r/2 */
    rn = _mm256_fmadd_ps(mf, _mm256_set1_ps(0.5f * EXP_LN2_8_LO), rn);
    /* expm1(r), r = -2 rn: rn (rn (2 + rn (2/3 rn - 4/3)) - 2) */
    __m256 q = _mm256_fmadd_ps(rn, _mm256_set1_ps(2.0f / 3.0f), _mm256_set1_ps(-4.0f / 3.0f));
    q = _mm256_fmadd_ps(q, rn, _mm256_set1_ps(2.0f));
    __m256 p = _mm256_mul_ps(_mm256_fmsub_ps(q, rn, _mm256_set1_ps(2.0f)), rn);
    __m256 s = pow2_8(t);
    __m256 m = _mm256_fmadd_ps(s, p, _mm256_sub_ps(s, _mm256_set1_ps(1.0f)));
    frac f;
    f.d = _mm256_add_ps(_mm256_set1_ps(2.0f), m);
    f.n = _mm256_xor_ps(m, _mm256_andnot_ps(x, sign)); /* -m for x >= 0, m for x < 0 */
    return f;
}

/* Lanes below n (n >= 8: all). */
static inline __m256i lane_mask(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n >= GW ? GW : (int)n),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline __m256 ld(const float *p, __m256i m, int full) {
    return full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, m);
}
static inline void st(float *p, __m256i m, int full, __m256 v) {
    if (full) _mm256_storeu_ps(p, v);
    else _mm256_maskstore_ps(p, m, v);
}

/* One pass over the inputs k for NG slices: acc[r][n][u] (MR rows x NG slices x P vectors of 8
 * units, at pre + r * sr + n * sn + u * 8) += h_prev[r] * slice n (Bq + n * gs: [K][P*8]); k runs
 * down when rev. The prefetches run RNN_PF inputs ahead along the same direction (addresses
 * possibly outside R, never dereferenced). The GRU passes call it with slices = unit groups
 * (pre: [group][row][gate][unit]), the LSTM passes with slices = gates (pre: [row][gate][LW]). */
static inline __attribute__((always_inline)) void kpass(const int MR, const int NG, const int P,
                                                        int64_t K, const float *A, int64_t lda,
                                                        const float *Bq, int64_t gs, int rev,
                                                        float *pre, const int64_t sr,
                                                        const int64_t sn) {
    __m256 acc[4][4][3];
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int n = 0; n < NG; n++)
#pragma GCC unroll 3
            for (int u = 0; u < P; u++)
                acc[r][n][u] = _mm256_load_ps(pre + r * sr + n * sn + u * GW);
    const int64_t kd = rev ? -1 : 1, pf = kd * RNN_PF * P * GW * (int64_t)sizeof(float);
    for (int64_t kk = 0, k = rev ? K - 1 : 0; kk < K; kk++, k += kd) {
        __m256 bv[4][3];
#pragma GCC unroll 4
        for (int n = 0; n < NG; n++) {
            const float *b = Bq + n * gs + k * P * GW;
            const uintptr_t pa = (uintptr_t)b + (uintptr_t)pf;
            _mm_prefetch((const char *)pa, _MM_HINT_T0);
            if (P == 3) _mm_prefetch((const char *)(pa + 64), _MM_HINT_T0);
#pragma GCC unroll 3
            for (int u = 0; u < P; u++) bv[n][u] = _mm256_loadu_ps(b + u * GW);
        }
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++) {
            __m256 x = _mm256_broadcast_ss(A + r * lda + k);
#pragma GCC unroll 4
            for (int n = 0; n < NG; n++)
#pragma GCC unroll 3
                for (int u = 0; u < P; u++)
                    acc[r][n][u] = _mm256_fmadd_ps(x, bv[n][u], acc[r][n][u]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
        for (int n = 0; n < NG; n++)
#pragma GCC unroll 3
            for (int u = 0; u < P; u++)
                _mm256_store_ps(pre + r * sr + n * sn + u * GW, acc[r][n][u]);
}

/* Block shapes (rows, groups) per kind: at most 12 accumulators. */
#define KPASS(MR, NG, P)                                                                         \
    static NOINLINE void kpass_##MR##_##NG##_##P(int64_t K, const float *A, int64_t lda,         \
                                                 const float *Bq, int64_t gs, int rev,           \
                                                 float *pre) {                                   \
        kpass(MR, NG, P, K, A, lda, Bq, gs, rev, pre, 4 * GW, 16 * GW);                          \
    }
KPASS(1, 4, 3)
KPASS(2, 2, 3)
KPASS(3, 1, 3)
KPASS(4, 1, 3)
KPASS(1, 1, 3)
KPASS(2, 1, 3)
typedef void (*kpass_fn)(int64_t K, const float *A, int64_t lda, const float *Bq, int64_t gs,
                         int rev, float *pre);
/* [rows - 1]: the wide shape, its groups, the one-group shape */
static const kpass_fn kp_wide[4] = {kpass_1_4_3, kpass_2_2_3, kpass_3_1_3, kpass_4_1_3};
static const int kp_ng[4] = {4, 2, 1, 1};
static const kpass_fn kp_one[4] = {kpass_1_1_3, kpass_2_1_3, kpass_3_1_3, kpass_4_1_3};

/* LSTM gate math of 4 rows x 8 units (pre: [row][gate][unit]), written in stages over the rows so
 * the 4 independent dependency chains interleave (one row's chain is ~40 operations deep). */
static inline __attribute__((always_inline)) void lstm_gates4(const frt_rnn_step_args *a,
                                                              const float *pre, int64_t gs,
                                                              int64_t r0, int64_t j0, int full,
                                                              __m256i lm) {
    const int64_t H = a->H;
    __m256 dout[4], cn[4];
    /* i g = tanh(pre_c) / (1 + e^-pre_i), f c = c / (1 + e^-pre_f), h = tanh(c) / (1 + e^-pre_o)
     * (rows past their length compute on their zero pre-activations; nothing of them is kept) */
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) {
        const float *pr = pre + r * 4 * gs;
        const __m256 di = one_exp_neg(_mm256_load_ps(pr)), df = one_exp_neg(_mm256_load_ps(pr + 2 * gs));
        dout[r] = one_exp_neg(_mm256_load_ps(pr + gs));
        const frac gc = tanh_frac(_mm256_load_ps(pr + 3 * gs));
        __m256 ig = _mm256_div_ps(gc.n, _mm256_mul_ps(di, gc.d));
        cn[r] = _mm256_add_ps(_mm256_div_ps(ld(a->c + (r0 + r) * H + j0, lm, full), df), ig);
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; r++) {
        const int64_t row = r0 + r;
        float *hn = a->h_next + row * H + j0;
        if (!a->xw[row]) {
            st(hn, lm, full, ld(a->h_prev + row * H + j0, lm, full));
            continue;
        }
        st(a->c + row * H + j0, lm, full, cn[r]);
        const frac tc = tanh_frac(cn[r]);
        __m256 h = _mm256_div_ps(tc.n, _mm256_mul_ps(dout[r], tc.d));
        st(hn, lm, full, h);
        if (a->y[row]) st(a->y[row] + j0, lm, full, h);
    }
}

/* LSTM gate math of one row x 8 units at j0 (pr: the row's pre-activations, gates gs floats
 * apart), as in lstm_gates4; a row past its sequence length keeps its state. */
static inline __attribute__((always_inline)) void lstm_row(const frt_rnn_step_args *a,
                                                           const float *pr, int64_t gs,
                                                           int64_t row, int64_t j0, int full,
                                                           __m256i lm) {
    const int64_t H = a->H;
    float *hn = a->h_next + row * H + j0;
    if (!a->xw[row]) {
        st(hn, lm, full, ld(a->h_prev + row * H + j0, lm, full));
        return;
    }
    const __m256 di = one_exp_neg(_mm256_load_ps(pr)), dout = one_exp_neg(_mm256_load_ps(pr + gs)),
                 df = one_exp_neg(_mm256_load_ps(pr + 2 * gs));
    const frac gc = tanh_frac(_mm256_load_ps(pr + 3 * gs));
    float *c = a->c + row * H + j0;
    __m256 ig = _mm256_div_ps(gc.n, _mm256_mul_ps(di, gc.d));
    __m256 cn = _mm256_add_ps(_mm256_div_ps(ld(c, lm, full), df), ig);
    st(c, lm, full, cn);
    const frac tc = tanh_frac(cn);
    __m256 h = _mm256_div_ps(tc.n, _mm256_mul_ps(dout, tc.d));
    st(hn, lm, full, h);
    if (a->y[row]) st(a->y[row] + j0, lm, full, h);
}

/* GRU: rows [r0, r0+m) and unit groups [g0, g0+ng) of one step (ng 1 or kp_ng). */
static NOINLINE void gru_blk(const frt_rnn_step_args *a, int64_t r0, int m, int64_t g0, int ng,
                             int rev) {
    const int64_t H = a->H;
    float pre[4 * 4 * 4 * GW] __attribute__((aligned(32))); /* [group][row][gate][unit] */
    /* the products start from what the gate math adds to them: xw + bias (h gate: Rbh) */
    for (int n = 0; n < ng; n++) {
        const int64_t j0 = (g0 + n) * GW;
        const int full = j0 + GW <= H;
        const __m256i lm = lane_mask(H - j0);
        for (int r = 0; r < m; r++) {
            const float *xw = a->xw[r0 + r];
            for (int v = 0; v < 3; v++) {
                __m256 s = !xw     ? _mm256_setzero_ps()
                           : v == 2 ? ld(a->rbh + j0, lm, full)
                                    : _mm256_add_ps(ld(xw + v * H + j0, lm, full),
                                                    ld(a->bias + v * H + j0, lm, full));
                _mm256_store_ps(pre + ((n * 4 + r) * 4 + v) * GW, s);
            }
        }
    }
    if (!a->h_prev_zero) {
        const kpass_fn f = ng == 1 ? kp_one[(m - 1) & 3] : kp_wide[(m - 1) & 3];
        f(H, a->h_prev + r0 * H, H, a->Rq + g0 * H * 3 * GW, H * 3 * GW, rev, pre);
    }
    for (int n = 0; n < ng; n++) {
        const int64_t j0 = (g0 + n) * GW;
        const int full = j0 + GW <= H;
        const __m256i lm = lane_mask(H - j0);
        for (int r = 0; r < m; r++) {
            const int64_t row = r0 + r;
            const float *hp = a->h_prev + row * H + j0;
            float *hn = a->h_next + row * H + j0;
            const float *pr = pre + (n * 4 + r) * 4 * GW;
            const float *xw = a->xw[row];
            if (!xw) { /* past this row's sequence length: the state stays */
                st(hn, lm, full, ld(hp, lm, full));
                continue;
            }
            const __m256 one = _mm256_set1_ps(1.0f);
            __m256 z = _mm256_div_ps(one, one_exp_neg(_mm256_load_ps(pr)));
            __m256 rg = _mm256_div_ps(one, one_exp_neg(_mm256_load_ps(pr + GW)));
            __m256 xh = _mm256_add_ps(ld(xw + 2 * H + j0, lm, full),
                                      ld(a->bias + 2 * H + j0, lm, full));
            frac nf = tanh_frac(_mm256_fmadd_ps(rg, _mm256_load_ps(pr + 2 * GW), xh));
            __m256 nn = _mm256_div_ps(nf.n, nf.d);
            __m256 h =
                _mm256_fmadd_ps(_mm256_sub_ps(one, z), nn, _mm256_mul_ps(z, ld(hp, lm, full)));
            st(hn, lm, full, h);
            if (a->y[row]) st(a->y[row] + j0, lm, full, h);
        }
    }
}

/* GRU step: for each block of up to 4 rows, groups first to last in blocks of kp_ng groups, then
 * single ones (last to first when rev; each row block sweeps the other way than the one before,
 * so R is read as one stream). */
void frt_rnn_gru_step_avx2(const frt_rnn_step_args *a) {
    const int64_t ng = (a->H + GW - 1) / GW;
    int rev = a->reverse;
    for (int64_t r0 = 0; r0 < a->B; r0 += 4) {
        const int m = a->B - r0 >= 4 ? 4 : (int)(a->B - r0), NG = kp_ng[m - 1];
        const int64_t nb = ng / NG, done = nb * NG;
        if (!rev) {
            for (int64_t q = 0; q < nb; q++) gru_blk(a, r0, m, q * NG, NG, 0);
            for (int64_t g = done; g < ng; g++) gru_blk(a, r0, m, g, 1, 0);
        } else {
            for (int64_t g = ng - 1; g >= done; g--) gru_blk(a, r0, m, g, 1, 1);
            for (int64_t q = nb - 1; q >= 0; q--) gru_blk(a, r0, m, q * NG, NG, 1);
        }
        rev = !rev;
    }
}

/* ---- LSTM: R packed with gw = 24 units, one gate per pass, the last group rounded up to 8 units
 * (frt_rnn_pack_gates(4, H, 24, 8, 1)): group s of w units (24, or 8 nv in the last) starts at
 * float s*4*H*24 and holds the gates' [H][w] slices, one per pass. A block of m rows and one
 * group runs its passes lp_np[m] at a time (4 rows: 1, 3: 1, 2: 2, 1 row: all 4), each pass as nv
 * = w / 8 vectors: 12 accumulators for 4, 2 and 1 rows (9 for 3) in full groups, so the FMA chains
 * (latency 4, 2 per cycle: 8 in flight) have slack. */
#define LW 24 /* units per supergroup */

/* acc[r][p][v] (pre: [row][gate][LW]) += h_prev[r] * passes [p0, p0+NPA) (Bq: pass p0, passes ps
 * floats apart, [K][NV*8] each); k runs down when rev. */
#define LPASS(MR, NPA, NV)                                                                       \
    static NOINLINE void lpass_##MR##_##NV(int64_t K, const float *A, int64_t lda,               \
                                           const float *Bq, int64_t ps, int rev, float *pre) {   \
        kpass(MR, NPA, NV, K, A, lda, Bq, ps, rev, pre, 4 * LW, LW);                             \
    }
LPASS(1, 4, 1)
LPASS(1, 4, 2)
LPASS(1, 4, 3)
LPASS(2, 2, 1)
LPASS(2, 2, 2)
LPASS(2, 2, 3)
LPASS(3, 1, 1)
LPASS(3, 1, 2)
LPASS(3, 1, 3)
LPASS(4, 1, 1)
LPASS(4, 1, 2)
LPASS(4, 1, 3)
typedef void (*lpass_fn)(int64_t K, const float *A, int64_t lda, const float *Bq, int64_t ps,
                         int rev, float *pre);
static const lpass_fn lp[4][3] = {{lpass_1_1, lpass_1_2, lpass_1_3},
                                  {lpass_2_1, lpass_2_2, lpass_2_3},
                                  {lpass_3_1, lpass_3_2, lpass_3_3},
                                  {lpass_4_1, lpass_4_2, lpass_4_3}};
static const int lp_np[4] = {4, 2, 1, 1}; /* passes at once, by rows - 1 */

/* Rows [r0, r0+m) x supergroup s of one step. */
static NOINLINE void lstm_sblk(const frt_rnn_step_args *a, int64_t r0, int m, int64_t s,
                               int rev) {
    const int64_t H = a->H, u0 = s * LW;
    const int nv = (int)((H - u0 >= LW ? LW : H - u0) + GW - 1) / GW;
    const int64_t ps = H * nv * GW; /* floats per pass */
    float pre[4 * 4 * LW] __attribute__((aligned(32))); /* [row][gate][unit] */
    for (int v = 0; v < nv; v++) {
        const int64_t j0 = u0 + v * GW;
        const int full = j0 + GW <= H;
        const __m256i lm = lane_mask(H - j0);
        for (int r = 0; r < m; r++) {
            const float *xw = a->xw[r0 + r];
            for (int g = 0; g < 4; g++)
                _mm256_store_ps(pre + (r * 4 + g) * LW + v * GW,
                                !xw ? _mm256_setzero_ps()
                                    : _mm256_add_ps(ld(xw + g * H + j0, lm, full),
                                                    ld(a->bias + g * H + j0, lm, full)));
        }
    }
    if (!a->h_prev_zero) {
        const int npa = lp_np[m - 1];
        const lpass_fn f = lp[m - 1][nv - 1];
        const float *Bs = a->Rq + s * 4 * H * LW, *A = a->h_prev + r0 * H;
        for (int i = 0; i < 4; i += npa) {
            const int p = rev ? 4 - npa - i : i;
            f(H, A, H, Bs + p * ps, ps, rev, pre + p * LW);
        }
    }
    for (int v = 0; v < nv; v++) {
        const int64_t j0 = u0 + v * GW;
        const int full = j0 + GW <= H;
        const __m256i lm = lane_mask(H - j0);
        if (m == 4) {
            lstm_gates4(a, pre + v * GW, LW, r0, j0, full, lm);
            continue;
        }
        for (int r = 0; r < m; r++)
            lstm_row(a, pre + r * 4 * LW + v * GW, LW, r0 + r, j0, full, lm);
    }
}

/* One step: for each block of up to 4 rows, supergroups first to last (last to first when rev;
 * each row block sweeps the other way than the one before, so R is read as one stream). */
void frt_rnn_lstm_step_avx2(const frt_rnn_step_args *a) {
    const int64_t ns = (a->H + LW - 1) / LW;
    int rev = a->reverse;
    for (int64_t r0 = 0; r0 < a->B; r0 += 4) {
        const int m = a->B - r0 >= 4 ? 4 : (int)(a->B - r0);
        for (int64_t i = 0; i < ns; i++) lstm_sblk(a, r0, m, rev ? ns - 1 - i : i, rev);
        rev = !rev;
    }
}
#endif
