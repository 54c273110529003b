/* Minimal test framework: CHECK macros count failures; main returns the count (0 = pass). */
#ifndef FRT_TEST_UTIL_H
#define FRT_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/cpu.h"

static int t_failures, t_checks;

/* Exit code of a unit test that did not run; tests/CMakeLists.txt registers it as ctest's
 * SKIP_RETURN_CODE. */
#define T_SKIP_CODE 77

/* Every unit test binary runs once per ISA tier (ctest sets FRT_ISA=portable|avx2|avx512, see
 * tests/CMakeLists.txt). A tier this build or host cannot run would silently run a lower tier's
 * kernels and pass for the wrong reason, so the binary reports a skip instead, before main. */
__attribute__((constructor)) static void t_isa_gate(void) {
    const char *want = getenv("FRT_ISA");
    if (!want || !want[0]) return;
    frt_isa host = FRT_HAVE_X86 ? frt_cpu_get()->host : FRT_ISA_PORTABLE;
    frt_isa req = strcmp(want, "avx512") == 0 ? FRT_ISA_AVX512
                  : strcmp(want, "avx2") == 0 ? FRT_ISA_AVX2
                                              : FRT_ISA_PORTABLE;
    if (req > host) {
        printf("SKIP: FRT_ISA=%s but this %s supports only '%s'\n", want,
               FRT_HAVE_X86 ? "host" : "build (no x86 SIMD kernels)", frt_isa_name(host));
        fflush(stdout);
        exit(T_SKIP_CODE);
    }
}

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        t_checks++;                                                                          \
        if (!(cond)) {                                                                       \
            t_failures++;                                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);         \
        }                                                                                    \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                 \
    do {                                                                                     \
        t_checks++;                                                                          \
        if (!(cond)) {                                                                       \
            t_failures++;                                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);         \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
        }                                                                                    \
    } while (0)

/* Status check that prints frt_last_error() on failure. */
#define CHECK_OK(expr)                                                                       \
    do {                                                                                     \
        t_checks++;                                                                          \
        int st_ = (int)(expr);                                                               \
        if (st_ != 0) {                                                                      \
            t_failures++;                                                                    \
            fprintf(stderr, "%s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #expr, st_,   \
                    frt_last_error());                                                       \
        }                                                                                    \
    } while (0)

/* max |a-b| <= atol + rtol * max|b| over n floats; prints the worst element on failure. */
static inline int t_close(const float *a, const float *b, size_t n, float atol, float rtol) {
    float maxref = 0, worst = 0;
    size_t wi = 0;
    for (size_t i = 0; i < n; i++) maxref = fmaxf(maxref, fabsf(b[i]));
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) && isnan(b[i])) continue; /* NaN where the reference has NaN is right */
        float d = fabsf(a[i] - b[i]);
        if (isnan(d)) { worst = NAN; wi = i; break; } /* a NaN is never overwritten */
        if (d > worst) { worst = d; wi = i; }
    }
    if (!(worst <= atol + rtol * maxref)) {
        fprintf(stderr, "  mismatch: |%g - %g| = %g at %zu (tolerance %g)\n", a[wi], b[wi], worst,
                wi, atol + rtol * maxref);
        return 0;
    }
    return 1;
}

/* frt_last_error() contains s (declared in flatrt.h, which tests include before this header or
 * via the op harness). */
const char *frt_last_error(void);
static inline int err_has(const char *s) { return strstr(frt_last_error(), s) != NULL; }

/* Deterministic pseudo-random bytes. */
static inline void fill_bytes(void *p, size_t n, unsigned seed) {
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        b[i] = (unsigned char)(seed >> 24);
    }
}

/* Product of r dims. */
static inline int64_t numel(const int64_t *d, int r) {
    int64_t n = 1;
    for (int i = 0; i < r; i++) n *= d[i];
    return n;
}

#define TEST_MAIN_END()                                                                      \
    do {                                                                                     \
        printf("%s: %d checks, %d failed\n", __FILE__, t_checks, t_failures);                \
        return t_failures ? 1 : 0;                                                           \
    } while (0)

/* Deterministic pseudo-random floats in [-1, 1). */
static inline float t_rand(unsigned *state) {
    *state = *state * 1664525u + 1013904223u;
    return (float)((*state >> 8) & 0xFFFFFF) / (float)0x800000 - 1.0f;
}
static inline void t_fill(float *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) p[i] = t_rand(&seed);
}

#endif
