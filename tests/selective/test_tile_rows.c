/* The conv GEMM tile of a selective build (src/ops/x86/conv_avx512.c with FRT_SELECTIVE: channel
 * tails as sub-tiles of 8, 4, 2 and 1 rows) against the full build's one-kernel-per-row-count
 * tile, for every rows x cols tail, both K-block positions (first: bias; last: sum input and
 * clamp) and odd K: the outputs must be bit-identical. Exit 77 (skipped) without AVX-512. */
#define FRT_SELECTIVE 1
#include "../../src/ops/x86/conv_avx512.c"

#include <stdio.h>
#include <string.h>
#include "rows_util.h"

/* The full build's dispatch (one tile instantiation per row count). */
#define REF_CASE(n) \
    case n: tile(kc, a, b, c, ldc, n, cm, flags, bias, z, act, lo, hi); break;
static void tile_ref(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                     int64_t rows, int64_t cols, int flags, const float *bias, const float *z,
                     int act, float lo, float hi) {
    __mmask16 cm = (__mmask16)(cols >= NR ? 0xffffu : (1u << cols) - 1u);
    switch (rows) {
        REF_CASE(1) REF_CASE(2) REF_CASE(3) REF_CASE(4) REF_CASE(5) REF_CASE(6) REF_CASE(7)
        REF_CASE(8) REF_CASE(9) REF_CASE(10) REF_CASE(11) REF_CASE(12) REF_CASE(13)
        REF_CASE(14) REF_CASE(15)
    default: tile(kc, a, b, c, ldc, 16, cm, flags, bias, z, act, lo, hi); break;
    }
}

int main(void) {
    if (!have_avx512("test_tile_rows")) return 77;
    g_seed = 7;
    enum { KC = 37, LDC = 24 };
    static _Alignas(64) float a[(KC + 64) * MR], b[KC * NR], bias[MR], z[MR * LDC];
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
        for (int64_t rows = 1; rows <= MR; rows++)
            for (int64_t cols = 1; cols <= NR; cols++) {
                for (int i = 0; i < MR * LDC; i++) c0[i] = c1[i] = rnd();
                tile_ref(KC, a, b, c0, LDC, rows, cols, flags, bs, zs, act, -0.5f, 0.75f);
                tile_any(KC, a, b, c1, LDC, rows, cols, flags, bs, zs, act, -0.5f, 0.75f);
                if (memcmp(c0, c1, sizeof c0)) {
                    printf("test_tile_rows: rows %lld cols %lld flags %d: outputs differ\n",
                           (long long)rows, (long long)cols, flags);
                    return 1;
                }
                checked++;
            }
    }
    printf("test_tile_rows: %d tiles bit-identical\n", checked);
    return 0;
}
