/* Private interface between the recurrent operators (src/ops/rnn.c) and their AVX2/FMA and
 * AVX-512 loops (src/ops/x86/rnn_{avx2,avx512}.c): the small-M GEMM of one recurrent step.
 *
 * The recurrent product of a step is C[M, N] = A[M, K] * R^T with M = batch (often 1 to 16), K =
 * hidden size and R [N, K] the constant recurrent weights. A blocked GEMM tile of 12 rows wastes
 * most of its work at such M, and the step is bound by reading R from L2. So the weights are
 * packed once into column groups of gv vectors (gw = gv * vl columns, vl = the variant's vector
 * width): Bq[g][k][j] = R[g*gw + j][k], zero past N, and a kernel block keeps one accumulator
 * register per (row, vector) for up to 4 rows and the whole group, so R is read as one sequential
 * stream, once per 4 rows. gv is the variant's block width for the batch size (frt_rnn_gv):
 * 8 vectors for one row, fewer for more rows (register budget). The packed form belongs to the
 * variant (vector width) and gv that packed it.
 */
#ifndef FRT_OPS_X86_RNN_SIMD_H
#define FRT_OPS_X86_RNN_SIMD_H

#include <stddef.h>
#include <stdint.h>

#include "ops/cpu.h"

/* C[M, N] = A[M, K] (row stride lda) * Bq (packed R^T in groups of gv vectors, gv 2, 4 or 8); C
 * has row stride ldc and is write-only. M, N >= 0, K >= 0 (K == 0: C = 0). Any M works with any
 * gv; M matching the gv the weights were packed for is fastest. */
typedef void (*frt_rnn_mm_fn)(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                              const float *Bq, int gv, float *C, int64_t ldc);

typedef struct frt_rnn_mm_variant {
    frt_isa isa;
    const char *suffix;
    int vl;          /* vector width in columns */
    int gv[4];       /* group width (vectors) for 1, 2, 3, >= 4 rows: the kernel's block widths */
    frt_rnn_mm_fn mm;
} frt_rnn_mm_variant;

/* Group width to pack for batch size B (B < 1, unknown: as for 4 rows). */
static inline int frt_rnn_gv(const frt_rnn_mm_variant *v, int64_t B) {
    return v->gv[B >= 1 && B < 4 ? B - 1 : 3];
}

/* The best variant whose tier is <= cap (rnn.c). */
const frt_rnn_mm_variant *frt_rnn_mm_variant_get(frt_isa cap);

/* Floats of the packed form of an [N, K] matrix in groups of gv * vl columns. */
static inline size_t frt_rnn_pack_size(int vl, int gv, int64_t N, int64_t K) {
    const int64_t gw = (int64_t)gv * vl;
    return (size_t)((N + gw - 1) / gw) * (size_t)gw * (size_t)K;
}
/* Packs R [N, K] (row stride ldr) into Bq (frt_rnn_pack_size floats). */
static inline void frt_rnn_pack(int vl, int gv, int64_t N, int64_t K, const float *R,
                                int64_t ldr, float *Bq) {
    const int64_t gw = (int64_t)gv * vl, ng = (N + gw - 1) / gw;
    for (int64_t g = 0; g < ng; g++)
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < gw; j++) {
                int64_t n = g * gw + j;
                Bq[(g * K + k) * gw + j] = n < N ? R[n * ldr + k] : 0.0f;
            }
}

/* ---- fused steps: recurrent product and gate math in one pass ---------------------------------
 * For LSTM (default activations, no clip, peepholes or input_forget) and GRU with
 * linear_before_reset = 1 (default activations, no clip), one step of every batch row runs as:
 * for each group of 16 hidden units, the products of h_prev with the gate rows of R for those
 * units are accumulated in registers and the gate math is applied to them right away, writing the
 * new state (and the row of Y). R is packed per group (frt_rnn_pack_gates): the slices of the G
 * gates for the group's units side by side (in passes of gp gates), so one group is one
 * sequential stream per pass. */
typedef struct frt_rnn_step_args {
    int64_t B, H;            /* batch rows, hidden size (also K of the product) */
    const float *h_prev;     /* [B, H] */
    float *h_next;           /* [B, H], != h_prev */
    float *c;                /* LSTM: cell state [B, H], updated in place */
    const float *Rq;         /* frt_rnn_pack_gates of R [G*H, H] */
    const float *const *xw;  /* per row: the row's X * W^T for this step (G*H floats, gate
                                order i o f c / z r h); NULL: row past its sequence length
                                (h_next = h_prev, c unchanged, y not written) */
    float *const *y;         /* per row: where to write the row's new h (H floats), or NULL */
    const float *bias;       /* G*H: LSTM Wb + Rb; GRU z, r: Wb + Rb, h: Wbh */
    const float *rbh;        /* GRU: Rbh (H) */
    int reverse;             /* sweep the unit groups last to first, and the inputs k of each
                                group last to first (callers alternate it from step to step, so
                                the part of R the previous step read last, still in cache when R
                                is larger than it, is read first; AVX-512 also prefetches R along
                                that order) */
    int h_prev_zero;         /* nonzero: h_prev is all zeros and R finite, so the recurrent
                                product is 0 and is skipped (the first step without initial_h) */
} frt_rnn_step_args;

/* LSTM: i o f = sigmoid, g = tanh(pre_c); c = f c + i g; h = o tanh(c).
 * GRU:  z r = sigmoid; n = tanh(xw_h + Wbh + r (h_prev Rh^T + Rbh)); h = (1 - z) n + z h_prev. */
typedef void (*frt_rnn_step_fn)(const frt_rnn_step_args *a);

/* R packing of a variant's steps: groups of gw hidden units; within a group the G gates come in
 * G / gp passes of gp gates each (gp divides G), each pass one sequential stream over the inputs
 * k (frt_rnn_pack_gates). AVX-512 and portable: gw 16, gp = G (one pass); AVX2: LSTM gw 24 in 4
 * passes of one gate (3 vectors per pass: 12 accumulators for 4 rows), GRU gw 8 in one pass of 3
 * gates (4 rows x 3 accumulators). */
typedef struct frt_rnn_step_variant {
    frt_isa isa;
    frt_rnn_step_fn lstm, gru;
    int lstm_gw, gru_gw, lstm_gp, gru_gp;
    int vl; /* the last group of units is packed rounded up to vl units only (frt_rnn_pack_gates) */
} frt_rnn_step_variant;

/* The fused steps of exactly tier `isa`, or NULL when that tier has none (rnn.c). */
const frt_rnn_step_variant *frt_rnn_step_variant_get(frt_isa isa);

/* Gates per pass of variant v for G gates (4: LSTM, 3: GRU). */
static inline int frt_rnn_step_gp(const frt_rnn_step_variant *v, int G) {
    return G == 4 ? v->lstm_gp : v->gru_gp;
}
/* Units per group of variant v for G gates (4: LSTM, 3: GRU). */
static inline int frt_rnn_step_gw(const frt_rnn_step_variant *v, int G) {
    return G == 4 ? v->lstm_gw : v->gru_gw;
}

#define FRT_RNN_GROUP 16 /* gw of the AVX-512 and portable steps */
/* Units of group g of H in groups of gw, the last one rounded up to a multiple of vl only (vl
 * divides gw; vl = gw: every group gw wide). */
static inline int64_t frt_rnn_group_width(int64_t H, int gw, int vl, int64_t g) {
    const int64_t rem = H - g * gw;
    return rem >= gw ? gw : (rem + vl - 1) / vl * vl;
}
/* Floats of R [G*H, H] packed by frt_rnn_pack_gates in groups of gw units (last group rounded
 * up to vl). */
static inline size_t frt_rnn_gates_size(int G, int64_t H, int gw, int vl) {
    const int64_t ng = (H + gw - 1) / gw;
    return ng ? (size_t)((ng - 1) * gw + frt_rnn_group_width(H, gw, vl, ng - 1)) * (size_t)H *
                    (size_t)G
              : 0;
}
/* Group g (width w = frt_rnn_group_width) starts at float g*G*H*gw; in it
 * Rq[((p*H + k)*gp + u)*w + l] = R[(p*gp + u)*H + gw*g + l][k] (0 past H), NP = G/gp passes:
 * pass p, input k, gate p*gp + u of the pass, unit l. */
static inline void frt_rnn_pack_gates(int G, int64_t H, int gw, int vl, int gp, const float *R,
                                      float *Rq) {
    const int64_t ng = (H + gw - 1) / gw, np = G / gp;
    for (int64_t g = 0; g < ng; g++) {
        const int64_t w = frt_rnn_group_width(H, gw, vl, g);
        float *q = Rq + g * G * H * gw;
        for (int64_t p = 0; p < np; p++)
            for (int64_t k = 0; k < H; k++)
                for (int u = 0; u < gp; u++)
                    for (int64_t l = 0; l < w; l++) {
                        int64_t j = g * gw + l, v = p * gp + u;
                        q[((p * H + k) * gp + u) * w + l] = j < H ? R[(v * H + j) * H + k] : 0.0f;
                    }
    }
}

#if FRT_HAVE_X86
void frt_rnn_lstm_step_avx512(const frt_rnn_step_args *a);
void frt_rnn_gru_step_avx512(const frt_rnn_step_args *a);
void frt_rnn_lstm_step_avx2(const frt_rnn_step_args *a);
void frt_rnn_gru_step_avx2(const frt_rnn_step_args *a);
void frt_rnn_mm_avx2(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                     const float *Bq, int gv, float *C, int64_t ldc);
void frt_rnn_mm_avx512(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                       const float *Bq, int gv, float *C, int64_t ldc);
#endif

#endif
