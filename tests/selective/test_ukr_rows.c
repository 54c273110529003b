/* The SGEMM edge micro-kernel of a selective build (src/ops/x86/sgemm_avx512.c with
 * FRT_SELECTIVE: row tails as sub-tiles of 8, 4, 2 and 1 rows) against the full build's
 * one-kernel-per-row-count switch, for every row count, alpha/beta cases and odd K: the outputs
 * must be bit-identical. Exit 77 (skipped) without AVX-512. */
#define FRT_SELECTIVE 1
#include "../../src/ops/x86/sgemm_avx512.c"

#include <stdio.h>
#include <string.h>
#include "rows_util.h"

/* The full build's dispatch (one instantiation per row count). */
#define REF_CASE(n) \
    case n: ukr_rows(n, kc, Ap, Bp, C, ldc, alpha, beta); break;
static void ukr_ref(int64_t mr, int64_t kc, const float *Ap, const float *Bp, float *C,
                    int64_t ldc, float alpha, float beta) {
    switch (mr) {
        REF_CASE(1) REF_CASE(2) REF_CASE(3) REF_CASE(4) REF_CASE(5) REF_CASE(6) REF_CASE(7)
        REF_CASE(8) REF_CASE(9) REF_CASE(10) REF_CASE(11)
    default: ukr_rows(12, kc, Ap, Bp, C, ldc, alpha, beta); break;
    }
}

int main(void) {
    if (!have_avx512("test_ukr_rows")) return 77;
    g_seed = 11;
    enum { KC = 29, LDC = 40 };
    static float Ap[KC * MR], Bp[KC * NR], c0[MR * LDC], c1[MR * LDC];
    for (size_t i = 0; i < sizeof Ap / sizeof *Ap; i++) Ap[i] = rnd();
    for (size_t i = 0; i < sizeof Bp / sizeof *Bp; i++) Bp[i] = rnd();
    const float ab[4][2] = {{1.0f, 0.0f}, {1.0f, 1.0f}, {0.5f, -0.25f}, {-2.0f, 0.0f}};
    int checked = 0;
    for (int v = 0; v < 4; v++)
        for (int64_t mr = 1; mr <= MR; mr++) {
            for (int i = 0; i < MR * LDC; i++) c0[i] = c1[i] = rnd();
            ukr_ref(mr, KC, Ap, Bp, c0, LDC, ab[v][0], ab[v][1]);
            frt_sgemm_ukr_m_avx512(mr, KC, Ap, Bp, c1, LDC, ab[v][0], ab[v][1]);
            if (memcmp(c0, c1, sizeof c0)) {
                printf("test_ukr_rows: mr %lld alpha %g beta %g: outputs differ\n", (long long)mr,
                       (double)ab[v][0], (double)ab[v][1]);
                return 1;
            }
            checked++;
        }
    printf("test_ukr_rows: %d edge tiles bit-identical\n", checked);
    return 0;
}
