/* CPU features and ISA tiers: the one place that decides which SIMD kernels may run.
 *
 * The host is probed once (CPUID + XGETBV, so a feature the OS does not save in its context counts
 * as absent). The tier is capped by the environment variable FRT_ISA (portable | avx2 | avx512),
 * read once at the first query, so a test suite can run every tier the host has. A cap above what
 * the host supports is clamped to the host's tier. */
#ifndef FRT_OPS_CPU_H
#define FRT_OPS_CPU_H

#include <stdbool.h>
#include <stddef.h>

#include "util/features.h"

typedef enum frt_isa {
    FRT_ISA_PORTABLE = 0, /* plain C */
    FRT_ISA_AVX2 = 1,     /* AVX2 + FMA + F16C */
    FRT_ISA_AVX512 = 2    /* AVX-512 F/BW/VL/DQ on top of the AVX2 tier */
} frt_isa;

typedef struct frt_cpu {
    frt_isa host;         /* best tier the host and OS support */
    frt_isa tier;         /* host capped by FRT_ISA: what kernel selection uses */
    bool avx2, fma, f16c; /* raw flags of the host (before the cap) */
    bool avx512f, avx512bw, avx512vl, avx512dq, avx512_bf16, avx512_vnni;
} frt_cpu;

/* Features of this host; probed on first use (thread-safe), constant afterwards. */
const frt_cpu *frt_cpu_get(void);
/* Shorthand: the tier kernel selection may use. */
frt_isa frt_cpu_tier(void);
/* "portable", "avx2", "avx512". */
const char *frt_isa_name(frt_isa isa);

/* Kernel variants. An op family lists its variants in a table ordered best first, each entry a
 * struct whose FIRST member is the frt_isa it needs, e.g.
 *     typedef struct { frt_isa isa; const char *name; ukr_fn ukr; pack_fn pack; } conv_variant;
 *     static const conv_variant conv_variants[] = {{FRT_ISA_AVX512, ...}, {FRT_ISA_AVX2, ...},
 *                                                  {FRT_ISA_PORTABLE, ...}};
 * and select takes FRT_PICK_VARIANT(conv_variants, cap): the first entry whose isa <= cap (cap is
 * normally frt_cpu_tier(); tests pass lower tiers). The table must end with a portable entry. */
const void *frt_pick_variant(const void *table, size_t n, size_t stride, frt_isa cap);
/* The same; site (__FILE__ of the caller, or NULL) names the family to the selection trace
 * (src/util/seltrace.h), which a selective build does not have. */
const void *frt_pick_variant_at(const void *table, size_t n, size_t stride, frt_isa cap,
                                const char *site);
#if defined(FRT_SELECTIVE) && FRT_SELECTIVE
#define FRT_PICK_SITE NULL
#else
#define FRT_PICK_SITE __FILE__
#endif
#define FRT_PICK_VARIANT(table, cap)                                                            \
    ((const __typeof__((table)[0]) *)frt_pick_variant_at(                                       \
        (table), sizeof(table) / sizeof((table)[0]), sizeof((table)[0]), (cap), FRT_PICK_SITE))

/* Tiers a variant table may list: both on x86 builds. A selective build (cmake -DFRT_SELECT)
 * defines them per family file to keep only the tiers its trace picked there, so the other
 * tiers' kernels are not referenced and drop out of the link. Tables write
 *     #if FRT_TIER_AVX512  {FRT_ISA_AVX512, ...},  #endif   (and the same for AVX2). */
#ifndef FRT_TIER_AVX512
#define FRT_TIER_AVX512 FRT_HAVE_X86
#endif
#ifndef FRT_TIER_AVX2
#define FRT_TIER_AVX2 FRT_HAVE_X86
#endif

#endif
