/* The AVX2 conv GEMM tile of a selective build (src/ops/x86/conv_avx2.c with FRT_SELECTIVE:
 * channel tails as sub-tiles of 4, 2 and 1 rows) against the full build's one-kernel-per-row-count
 * tails, for every row count, both K-block positions (first: bias; last: sum input and clamp) and
 * odd K: the outputs must be bit-identical. Exit 77 (skipped) without AVX2 and FMA. */
#define FRT_SELECTIVE 1
#include "../../src/ops/x86/conv_avx2.c"

#include <stdio.h>
#include <string.h>
#include "rows_util.h"

/* The full build's dispatch (one micro-kernel instantiation per row count). */
static void rows_ref(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                     int64_t rows, int flags, const float *bias, const float *z, int act, float lo,
                     float hi) {
    switch (rows) {
    case 6: ukr(kc, a, b, c, ldc, 6, 2, flags, bias, z, act, lo, hi); break;
    case 5: ukr(kc, a, b, c, ldc, 5, 2, flags, bias, z, act, lo, hi); break;
    case 4: ukr(kc, a, b, c, ldc, 4, 2, flags, bias, z, act, lo, hi); break;
    case 3: ukr(kc, a, b, c, ldc, 3, 2, flags, bias, z, act, lo, hi); break;
    case 2: ukr(kc, a, b, c, ldc, 2, 2, flags, bias, z, act, lo, hi); break;
    default: ukr(kc, a, b, c, ldc, 1, 2, flags, bias, z, act, lo, hi); break;
    }
}

int main(void) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        printf("test_tile_rows_avx2: skipped (no AVX2/FMA on this host)\n");
        return 77;
    }
    g_seed = 11;
    enum { KC = 37, LDC = 24 };
    /* the weight panel is read PF_DIST floats ahead by the prefetch only (never dereferenced) */
    static _Alignas(32) float a[(KC + 8) * MR], b[KC * NR], bias[MR], z[MR * LDC];
    static float c0[MR * LDC], c1[MR * LDC];
    for (size_t i = 0; i < sizeof a / sizeof *a; i++) a[i] = rnd();
    for (size_t i = 0; i < sizeof b / sizeof *b; i++) b[i] = rnd();
    for (int i = 0; i < MR; i++) bias[i] = rnd();
    for (int i = 0; i < MR * LDC; i++) z[i] = rnd();
    int checked = 0;
    for (int variant = 0; variant < 4; variant++) {
        int flags = variant == 0 ? FRT_CONV_UK_FIRST
                    : variant == 1 ? FRT_CONV_UK_LAST
                    : variant == 2 ? FRT_CONV_UK_FIRST | FRT_CONV_UK_LAST
                                   : 0;
        const float *bs = variant != 1 ? bias : NULL, *zs = variant >= 1 ? z : NULL;
        int act = variant == 2;
        for (int64_t rows = 1; rows <= MR; rows++) {
            for (int i = 0; i < MR * LDC; i++) c0[i] = c1[i] = rnd();
            rows_ref(KC, a, b, c0, LDC, rows, flags, bs, zs, act, -0.5f, 0.75f);
            ukr_rows(KC, a, b, c1, LDC, rows, flags, bs, zs, act, -0.5f, 0.75f);
            if (memcmp(c0, c1, sizeof c0)) {
                printf("test_tile_rows_avx2: rows %lld flags %d: outputs differ\n",
                       (long long)rows, flags);
                return 1;
            }
            checked++;
        }
    }
    printf("test_tile_rows_avx2: %d tiles bit-identical\n", checked);
    return 0;
}
