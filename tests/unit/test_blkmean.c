/* The blocked per-channel mean (src/ops/blkmean.h) of every tier from portable up to the one this
 * process runs: against a double-precision mean, and the SIMD loop bit for bit against the
 * portable twin (the same order of additions), for blocks of 8 and 16 lanes (and 4: the plain
 * loop), pixel counts below, at and past the 4 accumulators (1, 3, 4, 5, 7, 49, 196, 3137). */
#include "ops/blkmean.h"
#include "test_util.h"

static frt_isa tier_hi(void) { return FRT_HAVE_X86 ? frt_cpu_tier() : FRT_ISA_PORTABLE; }

int main(void) {
    static const int64_t Ss[] = {1, 3, 4, 5, 7, 49, 196, 3137};
    static const int64_t bs[] = {4, 8, 16};
    int cases = 0;
    for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++) {
        frt_blkmean_fn fn = frt_blkmean_get((frt_isa)t);
        for (size_t si = 0; si < sizeof Ss / sizeof *Ss; si++)
            for (size_t bi = 0; bi < sizeof bs / sizeof *bs; bi++) {
                int64_t S = Ss[si], b = bs[bi];
                float *y = malloc((size_t)(S * b) * 4), out[16], ref[16];
                t_fill(y, (size_t)(S * b), (unsigned)(S * 3 + b));
                float inv = 1.0f / (float)S;
                fn(y, S, b, inv, out);
                frt_blkmean_portable(y, S, b, inv, ref);
                for (int64_t l = 0; l < b; l++) {
                    double m = 0;
                    for (int64_t s = 0; s < S; s++) m += y[s * b + l];
                    m /= (double)S;
                    CHECK_MSG(fabs(out[l] - m) <= 1e-6 * (1.0 + (double)S / 64.0),
                              "tier %d S=%lld b=%lld lane %lld: %g, want %g", t, (long long)S,
                              (long long)b, (long long)l, (double)out[l], m);
                    CHECK_MSG(memcmp(&out[l], &ref[l], 4) == 0,
                              "tier %d S=%lld b=%lld lane %lld: %g differs from the portable %g",
                              t, (long long)S, (long long)b, (long long)l, (double)out[l],
                              (double)ref[l]);
                }
                free(y);
                cases++;
            }
    }
    CHECK(cases >= 24);
    TEST_MAIN_END();
}
