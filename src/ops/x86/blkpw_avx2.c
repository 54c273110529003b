/* AVX2/FMA loop of the pointwise convolution on nChw8c (see ../blkpw.h): one 8-channel block is
 * one ymm vector. Register tiles of 3 output blocks x 4 pixels or 2 x 6 (12 accumulators, a weight
 * vector per block and a broadcast input value per step; a single block 1 x 8); the weights of the tile's blocks
 * (C x 8 floats each) stay in L1 across the pixel range, the input is read once per tile of
 * output blocks. Per output element the same chain of fused multiply-adds as the portable loop. */
#include <immintrin.h>

#include "ops/blkpw.h"
#include "vec_avx2.h"

#ifndef PF_HINT
#define PF_HINT _MM_HINT_T0
#endif

/* SiLU / HardSwish over a just-stored tile (in L1): nb blocks of np pixels, blocks ld floats
   apart. Not inlined: in the tile's epilogue GCC hoisted their constants into the tile loop,
   where they took registers from the accumulators (HardSwish in the epilogue 1.5-2x oneDNN's
   time with its hardswish post-op on mobilenet_v3_small's expand shapes, 1.03-1.08x this way;
   SiLU 320->1280 at 7x7 1.34x oneDNN + the SiLU loop, 1.03x this way; Zen 3, per-node minima). */
static __attribute__((noinline)) void silu_tile(float *y, int64_t ld, int nb, int np) {
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < np; i++) /* vsilu: vec_avx2.h, the tier's SiLU loop's math */
            _mm256_storeu_ps(y + j * ld + i * 8, vsilu(_mm256_loadu_ps(y + j * ld + i * 8)));
}

static __attribute__((noinline)) void hswish_tile(float *y, int64_t ld, int nb, int np) {
    const V zero = vset(0.0f), one = vset(1.0f), a = vset(1.0f / 6.0f), b = vset(0.5f);
    for (int j = 0; j < nb; j++)
        for (int i = 0; i < np; i++) {
            V v = _mm256_loadu_ps(y + j * ld + i * 8);
            v = vmul(v, vmax(zero, vmin(one, vfma(v, a, b)))); /* NaN stays NaN */
            _mm256_storeu_ps(y + j * ld + i * 8, v);
        }
}

/* Lanes [0, n) set (n in 0..8). */
static inline __m256 lane_mask(int64_t n) {
    static const int32_t m[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    return _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(m + 8 - n)));
}

/* NB output blocks [m0, m0 + NB) x NP pixels [s, s + NP), input channels [k0, k1) (k0 a
   multiple of 8): k0 > 0 takes up the partial sums stored in y, k1 < C stores them raw. */
static inline __attribute__((always_inline)) void tile(const float *x, const float *w,
                                                       const float *bias, const float *z,
                                                       float *y, const frt_blkpw_geom *g,
                                                       int64_t m0, int64_t s, const float *pf,
                                                       int64_t k0, int64_t k1,
                                                       const int NB, const int NP,
                                                       const int ACT) {
    const int64_t C = g->C, S = g->S;
    __m256 acc[3][8];
    if (k0 == 0) {
        _Pragma("GCC unroll 3") for (int j = 0; j < NB; j++) {
            __m256 b = _mm256_loadu_ps(bias + (m0 + j) * 8);
            _Pragma("GCC unroll 8") for (int i = 0; i < NP; i++) acc[j][i] = b;
        }
    } else { /* a later slice of the input channels: the chain goes on from the stored sums */
        _Pragma("GCC unroll 3") for (int j = 0; j < NB; j++)
            _Pragma("GCC unroll 8") for (int i = 0; i < NP; i++)
                acc[j][i] = _mm256_loadu_ps(y + ((m0 + j) * S + s + i) * 8);
    }
    const float *wj[3];
    _Pragma("GCC unroll 3") for (int j = 0; j < NB; j++) wj[j] = w + (m0 + j) * C * 8;
    for (int64_t c0 = k0; c0 < k1; c0 += 8) {
        const float *xp = x + ((c0 / 8) * S + s) * 8;
        int64_t n = k1 - c0 < 8 ? k1 - c0 : 8;
        /* this block's lines 4 tiles ahead (one stream per input channel block) */
        _mm_prefetch((const char *)(xp + 4 * NP * 8), _MM_HINT_T0);
        if (NP > 2) _mm_prefetch((const char *)(xp + 4 * NP * 8 + 16), _MM_HINT_T0);
        if (NP > 4) _mm_prefetch((const char *)(xp + 4 * NP * 8 + 32), _MM_HINT_T0);
        if (NP > 6) _mm_prefetch((const char *)(xp + 4 * NP * 8 + 48), _MM_HINT_T0);
        if (pf) { /* two lines of the next group's weights (see blocks) */
            _mm_prefetch((const char *)(pf + (c0 - k0) * 4), PF_HINT);
            _mm_prefetch((const char *)(pf + (c0 - k0) * 4 + 16), PF_HINT);
        }
#define PW_STEP(l)                                                                              \
    do {                                                                                        \
        __m256 wv[3];                                                                           \
        _Pragma("GCC unroll 3") for (int j = 0; j < NB; j++)                                    \
            wv[j] = _mm256_loadu_ps(wj[j] + (c0 + (l)) * 8);                                    \
        _Pragma("GCC unroll 8") for (int i = 0; i < NP; i++) {                                  \
            __m256 xv = _mm256_broadcast_ss(xp + i * 8 + (l));                                  \
            _Pragma("GCC unroll 3") for (int j = 0; j < NB; j++)                                \
                acc[j][i] = _mm256_fmadd_ps(xv, wv[j], acc[j][i]);                              \
        }                                                                                       \
    } while (0)
        if (n == 8 && NB < 3) { /* (unrolled, the 3-block tiles ran 6% slower) */
            _Pragma("GCC unroll 8") for (int l = 0; l < 8; l++) PW_STEP(l);
        } else {
            for (int64_t l = 0; l < n; l++) PW_STEP(l);
        }
#undef PW_STEP
    }
    if (k1 < C) { /* not the last slice: the partial sums as they are */
        _Pragma("GCC unroll 3") for (int j = 0; j < NB; j++)
            _Pragma("GCC unroll 8") for (int i = 0; i < NP; i++)
                _mm256_storeu_ps(y + ((m0 + j) * S + s + i) * 8, acc[j][i]);
        return;
    }
    const __m256 zero = _mm256_setzero_ps(), lo = _mm256_set1_ps(g->lo),
                 hi = _mm256_set1_ps(g->hi);
    _Pragma("GCC unroll 3") for (int j = 0; j < NB; j++) {
        int64_t m = m0 + j, valid = g->M - m * 8;
        __m256 keep = lane_mask(valid < 8 ? valid : 8);
        _Pragma("GCC unroll 8") for (int i = 0; i < NP; i++) {
            size_t at = (size_t)((m * S + s + i) * 8);
            __m256 v = acc[j][i];
            if (z) v = _mm256_add_ps(v, _mm256_loadu_ps(z + at));
            if (ACT == FRT_BLKPW_RELU) v = _mm256_max_ps(zero, v);
            else if (ACT == FRT_BLKPW_CLIP) v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
            _mm256_storeu_ps(y + at, _mm256_and_ps(v, keep));
        }
    }
    if (ACT == FRT_BLKPW_SILU) silu_tile(y + (m0 * S + s) * 8, S * 8, NB, NP);
    if (ACT == FRT_BLKPW_HARDSWISH) hswish_tile(y + (m0 * S + s) * 8, S * 8, NB, NP);
}

/* Output blocks [m0, m0 + NB) over pixels [s0, s1): tiles of NP pixels (12 or 8 accumulators),
   then 1 at a time. */
static inline __attribute__((always_inline)) void blocks(const float *x, const float *w,
                                                         const float *bias, const float *z,
                                                         float *y, const frt_blkpw_geom *g,
                                                         int64_t m0, int64_t s0, int64_t s1,
                                                         const int NB, const int ACT) {
    const int NP = NB == 3 ? 4 : NB == 2 ? 6 : 8;
    /* The weights of the next group of blocks ([m0 + NB, m0 + NB + 3) at most, contiguous after
       this group's) are fetched into the cache while this group runs: each full tile prefetches
       2 lines per 8 input channels, the next 2 C / 8 lines of them (in a model the weights of a
       layer come from L3 or memory, and a group whose weights miss stalls its first tile). */
    const int64_t mb = (g->M + 7) / 8, step = (g->C + 7) / 8 * 32; /* floats per tile */
    const int64_t next_end = mb < m0 + NB + 3 ? mb : m0 + NB + 3;
    const float *pf = w + (m0 + NB) * g->C * 8, *pf_end = w + next_end * g->C * 8;
    /* Full tiles, then the rest in tiles of at least 3 pixels where there are enough (a tile of
       one pixel is bound by the latency of its NB chains: at 7x7, 49 = 12 x 4 + 1, it took as
       long as 2/3 of a full tile): NB 3 ends in tiles of 3 or 4 (9 = 3 + 3 + 3, 6 = 3 + 3,
       7 = 4 + 3), NB 2 and 1 in two near-halves of the last full tile and the rest. */
    int64_t full = (s1 - s0) / NP, r = (s1 - s0) % NP;
    if (r && full > 0) full -= NB == 3 && r == 1 && full > 1 ? 2 : 1;
    /* Input channels in slices of g->kc when the group's weights outgrow L1 (blkpw.h): each
       slice runs over the whole pixel range, its partial sums stored in y and taken up by the
       next slice (the same chain of FMAs: stored floats are exact), the last one adding the
       residual and the activation. Not when z is y (the sums would overwrite the residual). */
    int64_t kc = z == y || g->kc <= 0 || g->kc % 8 || g->kc >= g->C ? g->C : g->kc;
    for (int64_t k0 = 0; k0 < g->C; k0 += kc) {
        int64_t k1 = g->C - k0 < kc ? g->C : k0 + kc;
        int64_t pstep = k1 - k0 < g->C ? (k1 - k0 + 7) / 8 * 32 : step;
        int64_t s = s0;
        for (int64_t t = 0; t < full; t++, s += NP, pf += pstep)
            tile(x, w, bias, z, y, g, m0, s, pf < pf_end ? pf : NULL, k0, k1, NB, NP, ACT);
        while (s < s1) {
            int64_t t = s1 - s, k;
            if (NB == 3) k = t == 9 || t == 6 || t == 5 ? 3 : t > 4 ? 4 : t;
            else k = t > NP ? (t + 1) / 2 : t;
            switch (k) {
#define PW_TAIL(n)                                                                              \
    case n:                                                                                     \
        if (n <= NP) tile(x, w, bias, z, y, g, m0, s, NULL, k0, k1, NB, n <= NP ? n : 1, ACT);  \
        break;
                PW_TAIL(2) PW_TAIL(3) PW_TAIL(4) PW_TAIL(5) PW_TAIL(6) PW_TAIL(7) PW_TAIL(8)
#undef PW_TAIL
            default: tile(x, w, bias, z, y, g, m0, s, NULL, k0, k1, NB, 1, ACT); k = 1; break;
            }
            s += k;
        }
    }
}

/* All output blocks with activation ACT (a constant in each instance). */
static inline __attribute__((always_inline)) void all_blocks(const float *x, const float *w,
                                                             const float *bias, const float *z,
                                                             float *y, const frt_blkpw_geom *g,
                                                             int64_t s0, int64_t s1,
                                                             const int ACT) {
    /* groups of 3 output blocks, the rest as 2 + 2 (4 left), 2 or 1 */
    int64_t mb = (g->M + 7) / 8, m0 = 0;
    for (; mb - m0 >= 3 && mb - m0 != 4; m0 += 3) blocks(x, w, bias, z, y, g, m0, s0, s1, 3, ACT);
    for (; mb - m0 >= 2; m0 += 2) blocks(x, w, bias, z, y, g, m0, s0, s1, 2, ACT);
    if (mb - m0 == 1) blocks(x, w, bias, z, y, g, m0, s0, s1, 1, ACT);
}

void frt_blkpw_avx2(const float *x, const float *w, const float *bias, const float *z, float *y,
                    const frt_blkpw_geom *g, int64_t s0, int64_t s1) {
    if (g->act == FRT_BLKPW_RELU) all_blocks(x, w, bias, z, y, g, s0, s1, FRT_BLKPW_RELU);
    else if (g->act == FRT_BLKPW_CLIP) all_blocks(x, w, bias, z, y, g, s0, s1, FRT_BLKPW_CLIP);
    else if (g->act == FRT_BLKPW_SILU) all_blocks(x, w, bias, z, y, g, s0, s1, FRT_BLKPW_SILU);
    else if (g->act == FRT_BLKPW_HARDSWISH)
        all_blocks(x, w, bias, z, y, g, s0, s1, FRT_BLKPW_HARDSWISH);
    else all_blocks(x, w, bias, z, y, g, s0, s1, FRT_BLKPW_NONE);
}
