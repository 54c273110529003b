/* Shared by the sub-tile tests (test_tile_rows.c, test_ukr_rows.c, test_tile_rows_avx2.c): a fixed
 * pseudo-random source and the AVX-512 gate of the AVX-512 kernels' tests. */
#ifndef FRT_TEST_ROWS_UTIL_H
#define FRT_TEST_ROWS_UTIL_H

#include <stdint.h>
#include <stdio.h>

static uint32_t g_seed;
/* Uniform in [-1, 1), from g_seed (set it first). */
static float rnd(void) {
    g_seed = g_seed * 1664525u + 1013904223u;
    return (float)(g_seed >> 8) / 8388608.0f - 1.0f;
}

/* 1 when the host has the AVX-512 subsets the kernels use; else says the test is skipped. */
static int have_avx512(const char *test) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        return 1;
    printf("%s: skipped (no AVX-512 on this host)\n", test);
    return 0;
}

#endif
