/* The blocked-layout loops (src/ops/blocked.h) of every tier from portable up to the one this
 * process runs, against a naive reference written over plain channel indices: blocks 8 and 16,
 * channel counts with and without a padded last block, spatial sizes covering the 4-wide unroll
 * and its tails, garbage (NaN) in the padding lanes of both inputs, in place. Exact: a product of
 * two floats is the same in every variant. */
#include "ops/blocked.h"
#include "test_util.h"

static frt_isa tier_hi(void) { return FRT_HAVE_X86 ? frt_cpu_tier() : FRT_ISA_PORTABLE; }

/* Fills blocked [cb, S, b] with values of plain [C, S] (channel c at block c/b, lane c%b), NaN in
 * the padding lanes. */
static void to_blocked(const float *plain, float *blk, int64_t C, int64_t S, int64_t b) {
    int64_t cb = (C + b - 1) / b;
    for (int64_t k = 0; k < cb; k++)
        for (int64_t s = 0; s < S; s++)
            for (int64_t l = 0; l < b; l++) {
                int64_t c = k * b + l;
                blk[(k * S + s) * b + l] = c < C ? plain[c * S + s] : NAN;
            }
}

static void test_chanmul(void) {
    static const int64_t Cs[] = {1, 7, 8, 9, 16, 24, 40, 33};
    static const int64_t Ss[] = {1, 3, 4, 5, 49, 50};
    static const int64_t bs[] = {8, 16};
    for (int t = FRT_ISA_PORTABLE; t <= (int)tier_hi(); t++) {
        for (size_t bi = 0; bi < 2; bi++) {
            const frt_blk_variant *v = frt_blk_variant_get((frt_isa)t, bs[bi]);
            /* AVX-512 loops take b = 16, AVX2 loops b = 8 (also on an AVX-512 tier), portable
             * ones any b */
            frt_isa want = bs[bi] == 16 && t >= FRT_ISA_AVX512 ? FRT_ISA_AVX512
                           : bs[bi] == 8 && t >= FRT_ISA_AVX2  ? FRT_ISA_AVX2
                                                               : FRT_ISA_PORTABLE;
            CHECK_MSG(v->isa == want, "tier %s, block %lld: variant of tier %s", frt_isa_name(t),
                      (long long)bs[bi], frt_isa_name(v->isa));
            for (size_t ci = 0; ci < sizeof Cs / sizeof *Cs; ci++)
                for (size_t si = 0; si < sizeof Ss / sizeof *Ss; si++) {
                    int64_t b = bs[bi], C = Cs[ci], S = Ss[si], cb = (C + b - 1) / b;
                    size_t nb = (size_t)(cb * S * b);
                    float *xp = malloc((size_t)(C * S) * 4), *gp = malloc((size_t)C * 4);
                    float *x = malloc(nb * 4), *g = malloc((size_t)(cb * b) * 4);
                    float *y = malloc(nb * 4), *ref = malloc(nb * 4);
                    t_fill(xp, (size_t)(C * S), (unsigned)(C * 31 + S));
                    t_fill(gp, (size_t)C, (unsigned)(C + 5));
                    /* the reference: plain product, then the blocked arrangement, zero padding */
                    float *yp = malloc((size_t)(C * S) * 4);
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t s = 0; s < S; s++) yp[c * S + s] = xp[c * S + s] * gp[c];
                    to_blocked(yp, ref, C, S, b);
                    for (int64_t k = 0; k < cb; k++)
                        for (int64_t s = 0; s < S; s++)
                            for (int64_t l = 0; l < b; l++)
                                if (k * b + l >= C) ref[(k * S + s) * b + l] = 0.0f;
                    to_blocked(xp, x, C, S, b);
                    to_blocked(gp, g, C, 1, b);
                    for (int inplace = 0; inplace < 2; inplace++) {
                        float *out = inplace ? x : y;
                        if (!inplace)
                            for (size_t i = 0; i < nb; i++) y[i] = NAN;
                        v->chanmul(x, g, out, C, S, b);
                        size_t bad = nb;
                        for (size_t i = 0; i < nb && bad == nb; i++)
                            if (memcmp(&out[i], &ref[i], 4) != 0) bad = i;
                        CHECK_MSG(bad == nb,
                                  "chanmul%s b=%lld C=%lld S=%lld%s: element %zu is %g, want %g",
                                  v->suffix, (long long)b, (long long)C, (long long)S,
                                  inplace ? " in place" : "", bad, bad < nb ? out[bad] : 0.0,
                                  bad < nb ? ref[bad] : 0.0);
                    }
                    free(xp), free(gp), free(x), free(g), free(y), free(ref), free(yp);
                }
        }
    }
}

int main(void) {
    test_chanmul();
    TEST_MAIN_END();
}
