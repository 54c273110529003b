/* Private interface between the logic operators (src/ops/logic.c) and their AVX2 and AVX-512
 * float32 loops (src/ops/x86/logic_avx2.c, logic_avx512.c).
 *
 * The x86 functions exist only when FRT_HAVE_X86 is 1; they are reached only through the variant
 * table in logic.c (frt_logic_variant_get), whose entries select picks by ISA tier.
 */
#ifndef FRT_OPS_X86_SIMD_LOGIC_H
#define FRT_OPS_X86_SIMD_LOGIC_H

#include <stddef.h>
#include <stdint.h>

#include "ops/cpu.h"

/* Comparison loop: o[i] = a[i*sa] OP b[i*sb] as 0/1 bytes, i < n, with the element strides sa and
 * sb each 0 (a broadcast scalar) or 1. NaN compares false (unequal). */
typedef void (*frt_cmp_fn)(const void *a, const void *b, uint8_t *o, size_t n, size_t sa,
                           size_t sb);

/* Where loop for one element size: o[i] = c[i*sc] ? x[i*sx] : y[i*sy], strides 0 or 1 (in
 * elements); c holds bool bytes (any nonzero byte is true). o never aliases an input. */
typedef void (*frt_where_fn)(const uint8_t *c, const void *x, const void *y, void *o, size_t n,
                             size_t sc, size_t sx, size_t sy);

enum { FRT_CMP_EQ = 0, FRT_CMP_LT = 1, FRT_CMP_GT = 2, FRT_CMP_LE = 3, FRT_CMP_GE = 4,
       FRT_CMP_N = 5 };

/* Float32 comparison loops (indexed by FRT_CMP_*) and the 4-byte Where loop of one ISA tier. All
 * tiers give identical bytes. */
typedef struct frt_logic_variant {
    frt_isa isa;
    const char *suffix;
    const frt_cmp_fn *cmp_f32; /* [FRT_CMP_N] */
    frt_where_fn where32;
} frt_logic_variant;
const frt_logic_variant *frt_logic_variant_get(frt_isa cap);

#if FRT_HAVE_X86
extern const frt_cmp_fn frt_cmp_f32_avx2[FRT_CMP_N], frt_cmp_f32_avx512[FRT_CMP_N];
void frt_where32_avx2(const uint8_t *c, const void *x, const void *y, void *o, size_t n, size_t sc,
                      size_t sx, size_t sy);
void frt_where32_avx512(const uint8_t *c, const void *x, const void *y, void *o, size_t n,
                        size_t sc, size_t sx, size_t sy);
#endif

#endif
