/* Constant weights packed at load for Gemm/MatMul: the batch-1 GEMV (bandwidth-bound, one
 * sequential stream of weights) and, for the opt-in reduced-precision weights (frt_options
 * weights_precision), the M > 1 product too.
 *
 * A packed matrix W = op(B) is [K,N] (K inputs, N outputs). Layout: column panels of
 * FRT_WPACK_P = 64 outputs; the last panel is N - 64*p rounded up to a multiple of 16 wide (w),
 * padding columns zero. Panel p starts at element 64 * p * Kp. Inside a panel:
 *   FRT_WPREC_F32 / FRT_WPREC_F16: [K][w] (float / IEEE half), Kp = K;
 *   FRT_WPREC_BF16: [Kp/2][w][2] (bfloat16 pairs of rows k, k+1 per column: one 32-bit word whose
 *   high half is row k+1 and low half row k), Kp = K rounded up to even, padding row zero.
 * Half values are rounded to nearest even from float32; products are computed in float32 (F16C
 * conversion / bf16 -> fp32 by a 16-bit shift), so the only error against float32 weights is that
 * rounding: |w16 - w| <= 2^-11 |w| (fp16, normal range) or 2^-8 |w| (bf16).
 *
 * Kernels: a variant per ISA tier (x86/gemv_avx512.c, x86/gemv_avx2.c, portable C), picked with
 * FRT_PICK_VARIANT from the cap given. All functions are thread-safe and never fail.
 */
#ifndef FRT_OPS_GEMV_H
#define FRT_OPS_GEMV_H

#include <stddef.h>
#include <stdint.h>

#include "cpu.h"

struct frt_threadpool;

/* Storage precision of packed weights; the values equal frt_weights_precision (flatrt.h). */
typedef enum frt_wprec { FRT_WPREC_F32 = 0, FRT_WPREC_F16 = 1, FRT_WPREC_BF16 = 2 } frt_wprec;

#define FRT_WPACK_P 64

typedef struct frt_wpack {
    frt_wprec prec;
    int64_t K, N;
    const void *data; /* frt_wpack_bytes(prec, K, N) bytes, 64-byte aligned */
} frt_wpack;

/* Bytes of the packed form of a [K,N] matrix (0 when K or N <= 0). */
size_t frt_wpack_bytes(frt_wprec prec, int64_t K, int64_t N);
/* Packs op(B) [K,N] into dst (B stored K x N, ldb >= N, when transB == 0; N x K, ldb >= K,
 * otherwise). Returns 0 when a finite weight does not fit the precision (fp16: |w| >= 65520
 * would become infinite); dst is then incomplete. */
int frt_wpack_fill(frt_wprec prec, int transB, int64_t K, int64_t N, const float *B, int64_t ldb,
                   void *dst);

/* y[N] = alpha * x[K] * W + beta * y (beta == 0: y write-only). x contiguous. */
void frt_wpack_gemv(frt_isa cap, const frt_wpack *w, float alpha, const float *x, float beta,
                    float *y);
/* The same, with the panels split over tp when W is large (NULL: serial). */
void frt_wpack_gemv_mt(struct frt_threadpool *tp, frt_isa cap, const frt_wpack *w, float alpha,
                       const float *x, float beta, float *y);

/* Scratch bytes frt_wpack_gemm needs (64-byte aligned buffer). */
size_t frt_wpack_gemm_scratch(frt_isa cap);
/* C[M,N] = alpha * op(A)[M,K] * W + beta * C (A stored M x K, lda >= K, or K x M, lda >= M, when
 * transA; ldc >= N; beta == 0: C write-only). M == 1 with contiguous a runs the GEMV. Blocked:
 * K blocks of W are converted to float32 register panels in scratch and run by the tier's SGEMM
 * micro-kernel. */
void frt_wpack_gemm(frt_isa cap, const frt_wpack *w, int transA, int64_t M, float alpha,
                    const float *A, int64_t lda, float beta, float *C, int64_t ldc,
                    void *scratch);

/* ---- variants (for tests) ---- */
typedef struct frt_gemv_variant {
    frt_isa isa;
    const char *name;
    /* out[0..w) = sum_k x[k] * Wpanel[k][j], w in {16, 32, 48, 64}, panel in the layout above
     * (Kp rows; bf16 reads x[k] only for k < K). NULL: portable C. */
    void (*panel)(frt_wprec prec, int64_t K, const void *W, int64_t w, const float *x, float *out);
    /* Rows [k0, k0+kc) (k0 even) of a panel of width w as float32 into dst, in NR-column
     * register panels: column c at dst + (c / nr) * kc * nr + k * nr + c % nr, nr in {16, 32}. */
    void (*unpack)(frt_wprec prec, const void *W, int64_t w, int64_t k0, int64_t kc, int64_t nr,
                   float *dst);
    /* C[M, n] = A[M, K] (row stride lda) * one f32 panel W [K][w] (w in {16, 32, 48, 64}; the
     * first n <= w columns stored, ldc) for M > 1 rows: the fp32 M > 1 product without the
     * conversion to SGEMM panels (frt_wpack_gemm). NULL: not available on this tier. */
    void (*rows)(int64_t M, int64_t K, const float *A, int64_t lda, const float *W, int64_t w,
                 float *C, int64_t ldc, int64_t n);
} frt_gemv_variant;

const frt_gemv_variant *frt_gemv_pick(frt_isa cap);

#if FRT_HAVE_X86
void frt_gemv_panel_avx2(frt_wprec prec, int64_t K, const void *W, int64_t w, const float *x,
                         float *out);
void frt_gemv_unpack_avx2(frt_wprec prec, const void *W, int64_t w, int64_t k0, int64_t kc,
                          int64_t nr, float *dst);
void frt_gemv_panel_avx512(frt_wprec prec, int64_t K, const void *W, int64_t w, const float *x,
                           float *out);
void frt_gemv_unpack_avx512(frt_wprec prec, const void *W, int64_t w, int64_t k0, int64_t kc,
                            int64_t nr, float *dst);
void frt_gemv_rows_avx512(int64_t M, int64_t K, const float *A, int64_t lda, const float *W,
                          int64_t w, float *C, int64_t ldc, int64_t n);
#endif

#endif
