/* Loops over channel-blocked activations (the provider layouts nChw16c / nChw8c, src/ir/layout.c:
 * [N, ceil(C/b), S, b], the last block's lanes past C padding) that the oneDNN provider runs
 * between its primitives. A variant per ISA tier (x86/blocked_avx512.c for b = 16,
 * x86/blocked_avx2.c for b = 8, portable C for any b), picked with FRT_PICK_VARIANT and then the
 * first variant of that tier or below whose block is b (the portable one takes any b).
 * Thread-safe, never fail. */
#ifndef FRT_OPS_BLOCKED_H
#define FRT_OPS_BLOCKED_H

#include <stdint.h>

#include "cpu.h"

/* One image: y[k][s][l] = x[k][s][l] * g[k][l] for k < ceil(C/b), s < S, l < b, where g is the
 * [ceil(C/b), b] blocked per-channel factor; padding lanes (k*b + l >= C) of y are written as 0
 * whatever x and g hold there. y may be x. 1 <= b <= 64. */
typedef void (*frt_blk_chanmul_fn)(const float *x, const float *g, float *y, int64_t C, int64_t S,
                                   int64_t b);

typedef struct frt_blk_variant {
    frt_isa isa;
    const char *suffix;           /* "" portable, "_avx2", "_avx512" */
    int64_t block;                /* the b its loops take; 0: any */
    frt_blk_chanmul_fn chanmul;
} frt_blk_variant;

/* The loops for block size b on tier cap or below. */
const frt_blk_variant *frt_blk_variant_get(frt_isa cap, int64_t b);

void frt_blk_chanmul_portable(const float *x, const float *g, float *y, int64_t C, int64_t S,
                              int64_t b);
void frt_blk_chanmul_avx2(const float *x, const float *g, float *y, int64_t C, int64_t S,
                          int64_t b);
void frt_blk_chanmul_avx512(const float *x, const float *g, float *y, int64_t C, int64_t S,
                            int64_t b);

#endif
