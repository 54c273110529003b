/* The SIMD loops of the elementwise, activation and cast families against their portable twins,
 * called directly through the variant tables (src/ops/x86/simd_elementwise.h): every tier from
 * AVX2 up to the one this process runs (FRT_ISA caps it; ctest runs this binary once per tier).
 * Sizes 0..70 (every tail of 8- and 16-lane blocks, 64-element unrolls) and 1001; special values
 * (NaN, +-inf, +-0, denormals, FLT_MAX, large |x| for exp/sigmoid/tanh); in place where allowed.
 * Exact loops (arithmetic incl. NaN-propagating min/max, Relu, Clip, max, mul, half <-> float) must match bit for bit (NaN
 * matches any NaN); exp-based ones within the tolerances of test_activation.c. */
#include <float.h>
#include <stdint.h>

#include "ops/x86/simd_elementwise.h"
#include "test_util.h"

#define MAXN 1001
static const size_t NS[] = {0,  1,  2,  3,  5,  7,  8,  9,  15, 16, 17, 23, 31, 32, 33,
                            47, 48, 49, 63, 64, 65, 66, 70, 127, 129, 1001};
#define NNS (sizeof NS / sizeof NS[0])

static const float SPECIAL[] = {NAN,     -NAN,     INFINITY, -INFINITY, 0.0f,    -0.0f,
                                1e-40f,  -1e-40f,  FLT_MAX,  -FLT_MAX,  1e30f,   -1e30f,
                                88.0f,   -88.0f,   89.0f,    -104.0f,   -105.0f, 0.625f,
                                -0.625f, 20.0f,    -20.0f,   1e-30f,    100.0f,  -100.0f};
#define NSPECIAL (sizeof SPECIAL / sizeof SPECIAL[0])

/* Random values in [-scale, scale) with the special values spread over the array. */
static void fill_x(float *x, size_t n, unsigned seed, float scale) {
    t_fill(x, n, seed);
    for (size_t i = 0; i < n; i++) x[i] *= scale;
    for (size_t k = 0; k < NSPECIAL && n; k++) x[(k * 37 + seed) % n] = SPECIAL[k];
}

/* Bit-identical, except that a NaN matches any NaN. */
static int same_f32(const float *a, const float *b, size_t n, size_t *at) {
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) && isnan(b[i])) continue;
        if (memcmp(&a[i], &b[i], 4) != 0) {
            *at = i;
            return 0;
        }
    }
    return 1;
}

/* Tiers above portable that this process may run, from AVX2 up. */
static frt_isa tier_hi(void) { return FRT_HAVE_X86 ? frt_cpu_tier() : FRT_ISA_PORTABLE; }

static void test_binary(void) {
    static const char *ops[FRT_EW_N] = {"add", "sub", "mul", "div", "min", "max"};
    const frt_ew_variant *ref = frt_ew_variant_get(FRT_ISA_PORTABLE);
    CHECK(ref->isa == FRT_ISA_PORTABLE && ref->suffix[0] == 0);
    float *a = malloc(MAXN * 4), *b = malloc(MAXN * 4), *o1 = malloc(MAXN * 4),
          *o2 = malloc(MAXN * 4);
    for (int t = FRT_ISA_AVX2; t <= (int)tier_hi(); t++) {
        const frt_ew_variant *v = frt_ew_variant_get((frt_isa)t);
        CHECK_MSG(v->isa == (frt_isa)t, "tier %s has no elementwise variant", frt_isa_name(t));
        for (int op = 0; op < FRT_EW_N; op++)
            for (size_t si = 0; si < NNS; si++) {
                size_t n = NS[si], at = 0;
                fill_x(a, n, 1u + (unsigned)n, 3.0f);
                fill_x(b, n, 7u + (unsigned)n, 2.0f);
                for (int form = 0; form < 3; form++) {
                    frt_bin_fn f = form == 0 ? v->f32[op].vv : form == 1 ? v->f32[op].vs
                                                                         : v->f32[op].sv;
                    frt_bin_fn g = form == 0 ? ref->f32[op].vv : form == 1 ? ref->f32[op].vs
                                                                           : ref->f32[op].sv;
                    /* the scalar side is b[0] / a[0]; try a special one too */
                    for (int sc = 0; sc < 2; sc++) {
                        float s = sc ? SPECIAL[(n + (size_t)op) % NSPECIAL] : 1.375f;
                        const float *pa = form == 2 ? &s : a, *pb = form == 1 ? &s : b;
                        memset(o1, 0xff, MAXN * 4);
                        memset(o2, 0xff, MAXN * 4);
                        CHECK(f(pa, pb, o1, n) == 0);
                        CHECK(g(pa, pb, o2, n) == 0);
                        CHECK_MSG(same_f32(o1, o2, n, &at), "%s%s form %d n %zu at %zu: %g vs %g",
                                  ops[op], v->suffix, form, n, at, o1[at], o2[at]);
                        /* nothing written past n */
                        CHECK_MSG(memcmp(o1 + n, o2 + n, (MAXN - n) * 4) == 0, "%s%s n %zu tail",
                                  ops[op], v->suffix, n);
                    }
                    /* in place: o == the vector input */
                    if (n) {
                        float *io = form == 2 ? b : a;
                        memcpy(o1, io, n * 4);
                        const float s = 0.75f;
                        f(form == 2 ? &s : o1, form == 1 ? &s : form == 2 ? o1 : b, o1, n);
                        g(form == 2 ? &s : a, form == 1 ? &s : b, o2, n);
                        CHECK_MSG(same_f32(o1, o2, n, &at), "%s%s in place form %d n %zu",
                                  ops[op], v->suffix, form, n);
                    }
                }
            }
    }
    free(a);
    free(b);
    free(o1);
    free(o2);
}

static void test_exact_activations(const frt_act_variant *v, const frt_act_variant *ref) {
    float *x = malloc(MAXN * 4), *y1 = malloc(MAXN * 4), *y2 = malloc(MAXN * 4),
          *m1 = malloc(MAXN * 4), *m2 = malloc(MAXN * 4);
    const float bounds[][2] = {{0.0f, INFINITY}, {-0.5f, 0.5f}, {-INFINITY, 1.0f}, {1.0f, -1.0f},
                               {NAN, 1.0f},      {-1.0f, NAN},  {-0.0f, 0.0f}};
    for (size_t si = 0; si < NNS; si++) {
        size_t n = NS[si], at = 0;
        fill_x(x, n, 11u + (unsigned)n, 4.0f);
        memset(y1, 0xff, MAXN * 4);
        memset(y2, 0xff, MAXN * 4);
        v->relu(x, y1, n);
        ref->relu(x, y2, n);
        CHECK_MSG(same_f32(y1, y2, MAXN, &at), "relu%s n %zu at %zu", v->suffix, n, at);
        for (size_t bi = 0; bi < sizeof bounds / sizeof bounds[0]; bi++) {
            v->clip(x, y1, n, bounds[bi][0], bounds[bi][1]);
            ref->clip(x, y2, n, bounds[bi][0], bounds[bi][1]);
            CHECK_MSG(same_f32(y1, y2, MAXN, &at), "clip%s [%g, %g] n %zu at %zu: %g vs %g",
                      v->suffix, bounds[bi][0], bounds[bi][1], n, at, y1[at], y2[at]);
        }
        /* in place */
        memcpy(y1, x, n * 4);
        v->relu(y1, y1, n);
        ref->relu(x, y2, n);
        CHECK_MSG(same_f32(y1, y2, n, &at), "relu%s in place n %zu", v->suffix, n);
        /* strided softmax helpers: vmax and vmul are exact */
        fill_x(m1, n, 5u + (unsigned)n, 2.0f);
        memcpy(m2, m1, MAXN * 4);
        v->vmax(m1, x, n);
        ref->vmax(m2, x, n);
        CHECK_MSG(same_f32(m1, m2, MAXN, &at), "vmax%s n %zu at %zu", v->suffix, n, at);
        memcpy(y1, x, MAXN * 4);
        memcpy(y2, x, MAXN * 4);
        v->vmul(y1, m1, n);
        ref->vmul(y2, m1, n);
        CHECK_MSG(same_f32(y1, y2, MAXN, &at), "vmul%s n %zu at %zu", v->suffix, n, at);
    }
    free(x);
    free(y1);
    free(y2);
    free(m1);
    free(m2);
}

/* |a - b| <= atol + rtol * max|b|, NaN where b has NaN (t_close), and nothing past n written. */
static void check_close(const char *what, const float *a, const float *b, size_t n, float atol,
                        float rtol) {
    CHECK_MSG(t_close(a, b, n, atol, rtol), "%s n %zu", what, n);
}

static void test_exp_activations(const frt_act_variant *v, const frt_act_variant *ref) {
    float *x = malloc(MAXN * 4), *y1 = malloc(MAXN * 4), *y2 = malloc(MAXN * 4);
    float *m = malloc(MAXN * 4), *s1 = malloc(MAXN * 4), *s2 = malloc(MAXN * 4);
    char what[64];
    for (size_t si = 0; si < NNS; si++) {
        size_t n = NS[si];
        for (int scale = 0; scale < 2; scale++) { /* |x| < 12, and |x| up to 120 */
            fill_x(x, n, 23u + (unsigned)n, scale ? 120.0f : 12.0f);
            for (int op = 0; op < 2; op++) {
                frt_unary_fn f = op ? v->tanh : v->sigmoid, g = op ? ref->tanh : ref->sigmoid;
                memset(y1, 0xff, MAXN * 4);
                f(x, y1, n);
                g(x, y2, n);
                snprintf(what, sizeof what, "%s%s scale %d", op ? "tanh" : "sigmoid", v->suffix,
                         scale);
                check_close(what, y1, y2, n, 0, 5e-7f);
                for (size_t i = n; i < MAXN; i++) CHECK_MSG(isnan(y1[i]), "%s wrote past n", what);
                /* in place */
                memcpy(y1, x, n * 4);
                f(y1, y1, n);
                check_close(what, y1, y2, n, 0, 5e-7f);
            }
            /* y1 is tanh: NaN stays NaN, exactly +-1 where tanh rounds to +-1 in float */
            for (size_t i = 0; i < n; i++) {
                if (isnan(x[i])) CHECK_MSG(isnan(y1[i]), "tanh%s(NaN) = %g", v->suffix, y1[i]);
                if (x[i] >= 10.0f) CHECK_MSG(y1[i] == 1.0f, "tanh%s(%g)", v->suffix, x[i]);
                if (x[i] <= -10.0f) CHECK_MSG(y1[i] == -1.0f, "tanh%s(%g)", v->suffix, x[i]);
            }
            /* expsub_acc: y = exp(x - m), s += y */
            fill_x(m, n, 3u, 1.0f);
            for (size_t i = 0; i < n; i++)
                if (!isfinite(m[i])) m[i] = 0.5f; /* m is a max of finite rows in practice */
            for (size_t i = 0; i < n; i++) s1[i] = s2[i] = (float)i * 0.25f;
            v->expsub_acc(x, m, y1, s1, n);
            ref->expsub_acc(x, m, y2, s2, n);
            for (size_t i = 0; i < n; i++) { /* exp(88) is the largest result (inputs clamp) */
                if (y1[i] > 1e30f && y2[i] > 1e30f) y1[i] = y2[i] = 1e30f;
                if (s1[i] > 1e30f && s2[i] > 1e30f) s1[i] = s2[i] = 1e30f;
            }
            snprintf(what, sizeof what, "expsub_acc%s scale %d", v->suffix, scale);
            for (size_t i = 0; i < n; i++) { /* relative per element: values span many decades */
                float tol = 2e-6f * fabsf(y2[i]) + 1e-38f;
                if (!(isnan(y1[i]) && isnan(y2[i])))
                    CHECK_MSG(fabsf(y1[i] - y2[i]) <= tol, "%s at %zu: %g vs %g (x %g m %g)",
                              what, i, y1[i], y2[i], x[i], m[i]);
            }
        }
    }
    free(x);
    free(y1);
    free(y2);
    free(m);
    free(s1);
    free(s2);
}

static void test_softmax_rows(const frt_act_variant *v, const frt_act_variant *ref) {
    enum { ROWS = 3 };
    float *x = malloc(ROWS * MAXN * 4), *y1 = malloc(ROWS * MAXN * 4),
          *y2 = malloc(ROWS * MAXN * 4);
    char what[64];
    for (size_t si = 0; si < NNS; si++) {
        size_t len = NS[si];
        if (len == 0) continue;
        for (int kind = 0; kind < 3; kind++) {
            t_fill(x, ROWS * len, 31u + (unsigned)len);
            for (size_t i = 0; i < ROWS * len; i++)
                x[i] = kind == 0 ? x[i] * 8.0f : kind == 1 ? x[i] * 30.0f + 1000.0f : x[i];
            if (kind == 2) /* -inf entries (exp gives 0) and a row of one value */
                for (size_t i = 0; i < len; i += 3) x[i] = -INFINITY;
            v->softmax_rows(x, y1, ROWS, len);
            ref->softmax_rows(x, y2, ROWS, len);
            snprintf(what, sizeof what, "softmax_rows%s kind %d", v->suffix, kind);
            check_close(what, y1, y2, ROWS * len, 1e-7f, 1e-6f);
            memcpy(y1, x, ROWS * len * 4); /* in place */
            v->softmax_rows(y1, y1, ROWS, len);
            check_close(what, y1, y2, ROWS * len, 1e-7f, 1e-6f);
        }
    }
    free(x);
    free(y1);
    free(y2);
}

static void test_activations(void) {
    const frt_act_variant *ref = frt_act_variant_get(FRT_ISA_PORTABLE);
    CHECK(ref->isa == FRT_ISA_PORTABLE);
    for (int t = FRT_ISA_AVX2; t <= (int)tier_hi(); t++) {
        const frt_act_variant *v = frt_act_variant_get((frt_isa)t);
        CHECK_MSG(v->isa == (frt_isa)t, "tier %s has no activation variant", frt_isa_name(t));
        test_exact_activations(v, ref);
        test_exp_activations(v, ref);
        test_softmax_rows(v, ref);
    }
}

static void test_f16(void) {
    const frt_f16_variant *ref = frt_f16_variant_get(FRT_ISA_PORTABLE);
    uint16_t *h = malloc(65536 * 2), *h1 = malloc(65536 * 2), *h2 = malloc(65536 * 2);
    float *f1 = malloc(65536 * 4), *f2 = malloc(65536 * 4), *x = malloc(65536 * 4);
    for (int t = FRT_ISA_AVX2; t <= (int)tier_hi(); t++) {
        const frt_f16_variant *v = frt_f16_variant_get((frt_isa)t);
        CHECK_MSG(v->isa == (frt_isa)t, "tier %s has no f16 variant", frt_isa_name(t));
        /* every half, then every tail length */
        for (uint32_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;
        size_t at = 0;
        v->to_f32(h, f1, 65536);
        ref->to_f32(h, f2, 65536);
        CHECK_MSG(same_f32(f1, f2, 65536, &at), "f16->f32%s at 0x%04zx", v->suffix, at);
        for (size_t si = 0; si < NNS; si++) {
            size_t n = NS[si];
            memset(f1, 0xff, 4 * MAXN);
            v->to_f32(h + 0x3bf0, f1, n);
            ref->to_f32(h + 0x3bf0, f2, n);
            CHECK_MSG(same_f32(f1, f2, n, &at), "f16->f32%s n %zu", v->suffix, n);
            for (size_t i = n; i < MAXN; i++) CHECK(isnan(f1[i]));
        }
        /* floats: every half's value, midpoints between neighbours (ties to even), random bit
         * patterns (huge, tiny, NaN payloads), specials */
        size_t nx = 0;
        for (uint32_t i = 0; i < 65536; i += 3) x[nx++] = f2[i];
        for (uint32_t i = 0; i + 1 < 0x7c00; i += 5) x[nx++] = 0.5f * (f2[i] + f2[i + 1]);
        fill_bytes(x + nx, 4 * 20000, 77);
        nx += 20000;
        for (size_t k = 0; k < NSPECIAL; k++) x[nx++] = SPECIAL[k];
        v->from_f32(x, h1, nx);
        ref->from_f32(x, h2, nx);
        int bad = -1;
        for (size_t i = 0; i < nx && bad < 0; i++) {
            int n1 = (h1[i] & 0x7fff) > 0x7c00, n2 = (h2[i] & 0x7fff) > 0x7c00;
            if (n1 != n2 || (!n1 && h1[i] != h2[i])) bad = (int)i;
        }
        CHECK_MSG(bad < 0, "f32->f16%s at %d: x %g gives 0x%04x, portable 0x%04x", v->suffix,
                  bad, bad < 0 ? 0.0 : (double)x[bad], bad < 0 ? 0 : h1[bad],
                  bad < 0 ? 0 : h2[bad]);
        for (size_t si = 0; si < NNS; si++) {
            size_t n = NS[si];
            memset(h1, 0xee, 2 * MAXN);
            v->from_f32(x + 1, h1, n);
            ref->from_f32(x + 1, h2, n);
            CHECK_MSG(memcmp(h1, h2, n * 2) == 0 || n == 0, "f32->f16%s n %zu", v->suffix, n);
            for (size_t i = n; i < MAXN; i++) CHECK(h1[i] == 0xeeee);
        }
    }
    free(h);
    free(h1);
    free(h2);
    free(f1);
    free(f2);
    free(x);
}

int main(void) {
    printf("tier %s (host %s)\n", frt_isa_name(frt_cpu_tier()), frt_isa_name(frt_cpu_get()->host));
    test_binary();
    test_activations();
    test_f16();
    TEST_MAIN_END();
}
