/* Direct small matrix products for MatMul: no packing (a packed GEMM spends most of a product
 * this small copying A and B, e.g. dlrm_small's 32 items of [9,64]x[64,9]).
 *
 * CONTRACT: Y[M,N] = A[M,K] * B[K,N], all row-major with leading dimensions lda >= K,
 * ldb >= N, ldy >= N; Y is overwritten (never read) and must not overlap A or B. M, N, K >= 1.
 * Each Y element is one float32 sum over k in increasing order (fused multiply-adds on the SIMD
 * tiers); no element outside A, B or Y's rows/columns is read or written (the SIMD tiers use
 * masked loads and stores for the last columns). Thread-safe, never fails.
 *
 * Variants (picked with FRT_PICK_VARIANT in gemm.c, the MatMul family): AVX-512 (16 columns per
 * vector, up to 12 rows x 16 or 6 rows x 32 per register tile), AVX2 (8 columns per vector, 12 x 8
 * or 6 x 16), portable C. */
#ifndef FRT_OPS_MM_SMALL_H
#define FRT_OPS_MM_SMALL_H

#include <stdint.h>

#include "cpu.h"

typedef void (*frt_mm_small_fn)(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                                const float *B, int64_t ldb, float *Y, int64_t ldy);

typedef struct frt_mm_small_variant {
    frt_isa isa;
    const char *name;
    frt_mm_small_fn fn;
} frt_mm_small_variant;

/* The best variant whose tier is <= cap. */
const frt_mm_small_variant *frt_mm_small_pick(frt_isa cap);

void frt_mm_small_portable(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                           const float *B, int64_t ldb, float *Y, int64_t ldy);
#if FRT_HAVE_X86
void frt_mm_small_avx2(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                       const float *B, int64_t ldb, float *Y, int64_t ldy);
void frt_mm_small_avx512(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                         const float *B, int64_t ldb, float *Y, int64_t ldy);
#endif

#endif
