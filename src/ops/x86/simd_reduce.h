/* Private interface between the reductions (src/ops/reduce.c) and their AVX2 / AVX-512 float32
 * inner loops (src/ops/x86/reduce_avx2.c, reduce_avx512.c), reached only through the variant
 * table (frt_reduce_variant_get).
 *
 * Kinds (FRT_RK_*): SUM x, SUMSQ x*x, SUMABS |x|, MAX, MIN.
 *   row[kind](x, n)         reduces n contiguous floats to one value (n == 0: the identity,
 *                           0 for the sums, -inf for MAX, +inf for MIN)
 *   col[kind](acc, x, n)    acc[j] = acc[j] (op) f(x[j]) for j < n (one row of an
 *                           [outer, red, inner] reduction folded into the inner accumulators)
 * MAX and MIN propagate NaN: a NaN anywhere among the values gives NaN. Sums are in float32 with
 * several partial sums, so they differ from the portable twin by rounding only. */
#ifndef FRT_OPS_X86_SIMD_REDUCE_H
#define FRT_OPS_X86_SIMD_REDUCE_H

#include <stddef.h>

#include "ops/cpu.h"

enum { FRT_RK_SUM = 0, FRT_RK_SUMSQ, FRT_RK_SUMABS, FRT_RK_MAX, FRT_RK_MIN, FRT_RK_N };

typedef float (*frt_reduce_row_fn)(const float *x, size_t n);
typedef void (*frt_reduce_col_fn)(float *acc, const float *x, size_t n);

typedef struct frt_reduce_variant {
    frt_isa isa;
    const char *suffix; /* "" portable, "_avx2", "_avx512": appended to kernel names */
    frt_reduce_row_fn row[FRT_RK_N];
    frt_reduce_col_fn col[FRT_RK_N];
} frt_reduce_variant;

/* The best variant whose tier is <= cap (reduce.c). */
const frt_reduce_variant *frt_reduce_variant_get(frt_isa cap);

#if FRT_HAVE_X86
float frt_reduce_row_sum_avx2(const float *x, size_t n);
float frt_reduce_row_sumsq_avx2(const float *x, size_t n);
float frt_reduce_row_sumabs_avx2(const float *x, size_t n);
float frt_reduce_row_max_avx2(const float *x, size_t n);
float frt_reduce_row_min_avx2(const float *x, size_t n);
void frt_reduce_col_sum_avx2(float *acc, const float *x, size_t n);
void frt_reduce_col_sumsq_avx2(float *acc, const float *x, size_t n);
void frt_reduce_col_sumabs_avx2(float *acc, const float *x, size_t n);
void frt_reduce_col_max_avx2(float *acc, const float *x, size_t n);
void frt_reduce_col_min_avx2(float *acc, const float *x, size_t n);
float frt_reduce_row_sum_avx512(const float *x, size_t n);
float frt_reduce_row_sumsq_avx512(const float *x, size_t n);
float frt_reduce_row_sumabs_avx512(const float *x, size_t n);
float frt_reduce_row_max_avx512(const float *x, size_t n);
float frt_reduce_row_min_avx512(const float *x, size_t n);
void frt_reduce_col_sum_avx512(float *acc, const float *x, size_t n);
void frt_reduce_col_sumsq_avx512(float *acc, const float *x, size_t n);
void frt_reduce_col_sumabs_avx512(float *acc, const float *x, size_t n);
void frt_reduce_col_max_avx512(float *acc, const float *x, size_t n);
void frt_reduce_col_min_avx512(float *acc, const float *x, size_t n);
#endif

#endif
