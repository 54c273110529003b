/* The per-channel mean of a channel-blocked image: the portable loop and the variant pick (see
 * blkmean.h). */
#include "blkmean.h"

void frt_blkmean_portable(const float *y, int64_t S, int64_t b, float inv, float *out) {
    for (int64_t l = 0; l < b; l++) {
        float a[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int64_t s = 0; s < S; s++) a[s % 4] += y[s * b + l];
        out[l] = ((a[0] + a[1]) + (a[2] + a[3])) * inv;
    }
}

frt_blkmean_fn frt_blkmean_get(frt_isa cap) {
#if FRT_HAVE_X86 && FRT_TIER_AVX2
    if (cap >= FRT_ISA_AVX2) return frt_blkmean_avx2;
#endif
    (void)cap;
    return frt_blkmean_portable;
}
