/* Loops over channel-blocked activations: the portable variants and the variant table
 * (see blocked.h). */
#include "blocked.h"

void frt_blk_chanmul_portable(const float *x, const float *g, float *y, int64_t C, int64_t S,
                              int64_t b) {
    int64_t cb = (C + b - 1) / b;
    for (int64_t k = 0; k < cb; k++) {
        float f[64];
        int64_t valid = C - k * b < b ? C - k * b : b;
        for (int64_t l = 0; l < b; l++) f[l] = l < valid ? g[k * b + l] : 0.0f;
        const float *xr = x + k * S * b;
        float *yr = y + k * S * b;
        for (int64_t s = 0; s < S; s++)
            for (int64_t l = 0; l < b; l++)
                yr[s * b + l] = l < valid ? xr[s * b + l] * f[l] : 0.0f;
    }
}

static const frt_blk_variant blk_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512, "_avx512", 16, frt_blk_chanmul_avx512},
#endif
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "_avx2", 8, frt_blk_chanmul_avx2},
#endif
#endif
    {FRT_ISA_PORTABLE, "", 0, frt_blk_chanmul_portable},
};

const frt_blk_variant *frt_blk_variant_get(frt_isa cap, int64_t b) {
    const frt_blk_variant *v = FRT_PICK_VARIANT(blk_variants, cap);
    while (v->block && v->block != b) v++; /* the table ends with the portable loops (any b) */
    return v;
}
