/* Private interface between the recurrent operators (src/ops/rnn.c) and their AVX2/FMA and
 * AVX-512 loops (src/ops/x86/rnn_{avx2,avx512}.c): the small-M GEMM of one recurrent step.
 *
 * The recurrent product of a step is C[M, N] = A[M, K] * R^T with M = batch (often 1 to 16), K =
 * hidden size and R [N, K] the constant recurrent weights. A blocked GEMM tile of 12 rows wastes
 * most of its work at such M, so the weights are packed once into column panels of `vl` columns
 * (Bq[p][k][j] = R[p*vl + j][k], zero past N) and each kernel streams several panels at once for
 * up to 4 rows, with one accumulator register per (row, panel): every weight is read once per 4
 * rows. The panel width is the variant's vector width, so the packed form belongs to the variant
 * that packed it.
 */
#ifndef FRT_OPS_X86_RNN_SIMD_H
#define FRT_OPS_X86_RNN_SIMD_H

#include <stddef.h>
#include <stdint.h>

#include "ops/cpu.h"

/* C[M, N] = A[M, K] (row stride lda) * Bq (packed R^T); C has row stride ldc and is write-only.
 * M, N >= 0, K >= 0 (K == 0: C = 0). */
typedef void (*frt_rnn_mm_fn)(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                              const float *Bq, float *C, int64_t ldc);

typedef struct frt_rnn_mm_variant {
    frt_isa isa;
    const char *suffix;
    int vl;          /* panel width in columns */
    frt_rnn_mm_fn mm;
} frt_rnn_mm_variant;

/* The best variant whose tier is <= cap (rnn.c). */
const frt_rnn_mm_variant *frt_rnn_mm_variant_get(frt_isa cap);

/* Floats of the packed form of an [N, K] matrix in panels of vl columns. */
static inline size_t frt_rnn_pack_size(int vl, int64_t N, int64_t K) {
    return (size_t)((N + vl - 1) / vl) * (size_t)vl * (size_t)K;
}
/* Packs R [N, K] (row stride ldr) into Bq (frt_rnn_pack_size floats). */
static inline void frt_rnn_pack(int vl, int64_t N, int64_t K, const float *R, int64_t ldr,
                                float *Bq) {
    const int64_t np = (N + vl - 1) / vl;
    for (int64_t p = 0; p < np; p++)
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < vl; j++) {
                int64_t n = p * vl + j;
                Bq[(p * K + k) * vl + j] = n < N ? R[n * ldr + k] : 0.0f;
            }
}

#if FRT_HAVE_X86
void frt_rnn_mm_avx2(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                     const float *Bq, float *C, int64_t ldc);
void frt_rnn_mm_avx512(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                       const float *Bq, float *C, int64_t ldc);
#endif

#endif
