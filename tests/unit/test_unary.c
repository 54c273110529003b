/* Unary math (src/ops/unary.c) and its SIMD loops (src/ops/x86/unary_*.c):
 *  - accuracy of the vector exp, log and erf over their whole float range, measured in ulps
 *    against libm in double precision and against the portable (libm float) twins;
 *  - exact loops (abs, neg, sqrt, reciprocal, floor, ceil, round, Pow's square/cube/sqrt/identity)
 *    bit-identical to their portable twins, on every tail size, with special values, in place;
 *  - every op through infer -> select -> kernel on every dtype it takes (float16/32/64 and the
 *    integer ones of Abs Neg Sign) against a naive reference, odd sizes, threads;
 *  - bad input: dtypes an op does not take, arity. */
#include <float.h>
#include <stdint.h>

#include "op_harness.h"
#include "ops/dtype_util.h"
#include "ops/x86/simd_unary.h"
#include "test_util.h"

/* Distance in float ulps between a float and a double reference (both finite). */
static double ulp_err(float got, double want) {
    if (isnan(want)) return isnan(got) ? 0 : 1e30;
    if (isinf((float)want)) return got == (float)want ? 0 : 1e30; /* overflows in float */
    double aw = fabs(want);
    int e;
    frexp(aw < 0x1p-126 ? 0x1p-126 : aw, &e); /* subnormal range: the subnormal spacing */
    double ulp = ldexp(1.0, e - 24);
    return fabs((double)got - want) / ulp;
}

static frt_isa tier_hi(void) { return FRT_HAVE_X86 ? frt_cpu_tier() : FRT_ISA_PORTABLE; }

#define NBUF 4096

/* Runs f over xs in blocks; returns the max ulp error against ref (double), and records it vs
 * the portable twin too. */
typedef double (*ref_fn)(double);
static void measure(const char *what, frt_unary_fn f, frt_unary_fn twin, ref_fn ref,
                    const float *xs, size_t n, double bound_ref, double bound_twin) {
    float y[NBUF], t[NBUF];
    double worst = 0, worst_twin = 0;
    float wx = 0, wtx = 0;
    for (size_t i = 0; i < n; i += NBUF) {
        size_t m = n - i < NBUF ? n - i : NBUF;
        f(xs + i, y, m);
        twin(xs + i, t, m);
        for (size_t k = 0; k < m; k++) {
            double e = ulp_err(y[k], ref(xs[i + k]));
            if (e > worst) worst = e, wx = xs[i + k];
            double et = isnan(t[k]) ? (isnan(y[k]) ? 0 : 1e30) : ulp_err(y[k], t[k]);
            if (et > worst_twin) worst_twin = et, wtx = xs[i + k];
        }
    }
    printf("%s: max %.2f ulp vs libm double (at %a), %.2f ulp vs the portable twin (at %a)\n",
           what, worst, wx, worst_twin, wtx);
    CHECK_MSG(worst <= bound_ref, "%s: %.3f ulp at x = %a", what, worst, wx);
    CHECK_MSG(worst_twin <= bound_twin, "%s vs twin: %.3f ulp at x = %a", what, worst_twin, wtx);
}

/* Every float whose bits are a multiple of `stride` in [lo_bits, hi_bits] plus both signs when
 * sym; returns the count. */
static size_t sweep_bits(float *xs, size_t cap, uint32_t lo, uint32_t hi, uint32_t stride) {
    size_t n = 0;
    for (uint64_t b = lo; b <= hi && n < cap; b += stride) xs[n++] = frt_bits_f32((uint32_t)b);
    return n;
}

static double erf_rel_ref(double x) { return erf(x); }

static void test_approx_loops(void) {
    const frt_un_variant *ref = frt_un_variant_get(FRT_ISA_PORTABLE);
    size_t cap = 1u << 22;
    float *xs = malloc(cap * sizeof(float));
    for (int t = FRT_ISA_AVX2; t <= (int)tier_hi(); t++) {
        const frt_un_variant *v = frt_un_variant_get((frt_isa)t);
        CHECK(v->isa == (frt_isa)t);
        char what[64];
        /* exp: every 64th float of [-104, 89] (positive and negative halves), then specials */
        size_t n = sweep_bits(xs, cap, 0u, frt_f32_bits(89.0f), 509);
        n += sweep_bits(xs + n, cap - n, 0x80000000u, frt_f32_bits(-104.0f), 509);
        snprintf(what, sizeof what, "exp%s", v->suffix);
        measure(what, v->f[FRT_UN_EXP], ref->f[FRT_UN_EXP], exp, xs, n, 2.0, 2.0);
        /* log: positive floats incl. subnormals and inf */
        n = sweep_bits(xs, cap, 1u, 0x7f800000u, 521);
        snprintf(what, sizeof what, "log%s", v->suffix);
        measure(what, v->f[FRT_UN_LOG], ref->f[FRT_UN_LOG], log, xs, n, 2.0, 2.0);
        /* log near 1 (cancellation): every float of [0.5, 2] */
        n = sweep_bits(xs, cap, frt_f32_bits(0.5f), frt_f32_bits(2.0f), 7);
        snprintf(what, sizeof what, "log%s near 1", v->suffix);
        measure(what, v->f[FRT_UN_LOG], ref->f[FRT_UN_LOG], log, xs, n, 2.0, 2.0);
        /* erf: |x| from 1e-30 to 5 both signs, 4 ulp (relative 2.4e-7) */
        n = sweep_bits(xs, cap, frt_f32_bits(1e-30f), frt_f32_bits(5.0f), 251);
        size_t half = n;
        for (size_t i = 0; i < half && n < cap; i++) xs[n++] = -xs[i];
        snprintf(what, sizeof what, "erf%s", v->suffix);
        measure(what, v->f[FRT_UN_ERF], ref->f[FRT_UN_ERF], erf_rel_ref, xs, n, 4.0, 4.0);

        /* special values */
        const float sp[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, -1.0f, 1e-45f, FLT_MAX,
                            -FLT_MAX, 88.7228f, 88.73f, -103.9f, -87.4f, 3.85f, -3.9f, 1.0f};
        size_t ns = sizeof sp / sizeof sp[0];
        float y[32], r[32];
        for (int op = FRT_UN_EXP; op <= FRT_UN_ERF; op++) {
            if (op == FRT_UN_SQRT) continue;
            v->f[op](sp, y, ns);
            ref->f[op](sp, r, ns);
            for (size_t i = 0; i < ns; i++) {
                int ok = isnan(r[i]) ? isnan(y[i])
                         : isinf(r[i]) || r[i] == 0 ? memcmp(&y[i], &r[i], 4) == 0
                                                     : ulp_err(y[i], r[i]) <= 4;
                CHECK_MSG(ok, "op %d%s special %a: %a vs libm %a", op, v->suffix, sp[i], y[i],
                          r[i]);
            }
        }
    }
    free(xs);
}

static const size_t NS[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 70, 1001};

static void test_exact_loops(void) {
    const frt_un_variant *ref = frt_un_variant_get(FRT_ISA_PORTABLE);
    static const int exact[] = {FRT_UN_ABS,    FRT_UN_NEG,      FRT_UN_SQRT,   FRT_UN_RECIP,
                                FRT_UN_FLOOR,  FRT_UN_CEIL,     FRT_UN_ROUND,  FRT_UN_SQUARE,
                                FRT_UN_CUBE,   FRT_UN_POW_HALF, FRT_UN_IDENTITY};
    static const float sp[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0.5f, -0.5f, 1.5f,
                               2.5f, -2.5f, 1e-40f, -1e-40f, FLT_MAX, 8388609.0f, -3.5f};
    float x[1001 + 16] = {0}, y1[1001 + 16], y2[1001 + 16];
    for (int t = FRT_ISA_AVX2; t <= (int)tier_hi(); t++) {
        const frt_un_variant *v = frt_un_variant_get((frt_isa)t);
        for (size_t oi = 0; oi < sizeof exact / sizeof exact[0]; oi++)
            for (size_t si = 0; si < sizeof NS / sizeof NS[0]; si++) {
                int op = exact[oi];
                size_t n = NS[si];
                unsigned seed = 3u + (unsigned)n;
                for (size_t i = 0; i < n; i++) x[i] = t_rand(&seed) * 10.0f;
                for (size_t k = 0; k < sizeof sp / sizeof sp[0] && n; k++)
                    x[(k * 13) % n] = sp[k];
                memset(y1, 0x7f, sizeof y1);
                memset(y2, 0x7f, sizeof y2);
                v->f[op](x, y1, n);
                ref->f[op](x, y2, n);
                int same = 1;
                size_t at = 0;
                for (size_t i = 0; i < n + 16 && same; i++)
                    if (!(isnan(y1[i]) && isnan(y2[i])) && memcmp(&y1[i], &y2[i], 4) != 0)
                        same = 0, at = i;
                CHECK_MSG(same, "op %d%s n %zu at %zu: x %a: %a vs %a", op, v->suffix, n, at,
                          x[at], y1[at], y2[at]);
                /* in place */
                for (size_t i = 0; i < n; i++) y1[i] = x[i];
                v->f[op](y1, y1, n);
                for (size_t i = 0; i < n; i++)
                    if (!(isnan(y1[i]) && isnan(y2[i])))
                        CHECK_MSG(memcmp(&y1[i], &y2[i], 4) == 0, "op %d%s in place n %zu", op,
                                  v->suffix, n);
            }
    }
    /* Pow's sqrt form follows pow(): -0 -> +0, -inf -> +inf */
    float px[3] = {-0.0f, -INFINITY, 4.0f}, py[3];
    ref->f[FRT_UN_POW_HALF](px, py, 3);
    CHECK(py[0] == 0.0f && !signbit(py[0]) && py[1] == INFINITY && py[2] == 2.0f);
}

/* ---- ops through the harness ------------------------------------------------------------- */

static const char *const FLOAT_OPS[] = {"Exp",  "Log",  "Sqrt", "Erf",   "Reciprocal", "Floor",
                                        "Ceil", "Round", "Sin", "Cos",   "Tan",        "Asin",
                                        "Acos", "Atan", "Sinh", "Cosh",  "Asinh",      "Acosh",
                                        "Atanh", "Abs", "Neg",  "Sign"};
#define N_FLOAT_OPS (sizeof FLOAT_OPS / sizeof FLOAT_OPS[0])

static double ref_op(const char *op, double v) {
    if (!strcmp(op, "Exp")) return exp(v);
    if (!strcmp(op, "Log")) return log(v);
    if (!strcmp(op, "Sqrt")) return sqrt(v);
    if (!strcmp(op, "Erf")) return erf(v);
    if (!strcmp(op, "Reciprocal")) return 1.0 / v;
    if (!strcmp(op, "Floor")) return floor(v);
    if (!strcmp(op, "Ceil")) return ceil(v);
    if (!strcmp(op, "Round")) return nearbyint(v);
    if (!strcmp(op, "Sin")) return sin(v);
    if (!strcmp(op, "Cos")) return cos(v);
    if (!strcmp(op, "Tan")) return tan(v);
    if (!strcmp(op, "Asin")) return asin(v);
    if (!strcmp(op, "Acos")) return acos(v);
    if (!strcmp(op, "Atan")) return atan(v);
    if (!strcmp(op, "Sinh")) return sinh(v);
    if (!strcmp(op, "Cosh")) return cosh(v);
    if (!strcmp(op, "Asinh")) return asinh(v);
    if (!strcmp(op, "Acosh")) return acosh(v);
    if (!strcmp(op, "Atanh")) return atanh(v);
    if (!strcmp(op, "Abs")) return fabs(v);
    if (!strcmp(op, "Neg")) return -v;
    if (!strcmp(op, "Sign")) return v > 0 ? 1 : v < 0 ? -1 : v;
    return NAN;
}

/* Input value i for op (a domain where the op is defined, plus a few values outside). */
static double in_val(const char *op, size_t i) {
    unsigned s = 17u * (unsigned)i + 5u;
    double u = t_rand(&s); /* [-1, 1) */
    if (i % 29 == 7) return u * 40.0; /* out of most domains: NaN / inf results */
    if (!strcmp(op, "Asin") || !strcmp(op, "Acos") || !strcmp(op, "Atanh")) return u * 0.999;
    if (!strcmp(op, "Acosh")) return 1.0 + fabs(u) * 5.0;
    if (!strcmp(op, "Log") || !strcmp(op, "Sqrt")) return fabs(u) * 50.0 + 1e-3;
    if (!strcmp(op, "Round")) return floor(u * 20.0) / 2.0; /* halves: ties to even */
    return u * 4.0;
}

/* Element-wise closeness: |got - want| <= 1e-7 + rtol |want| (NaN matches NaN, inf exact). */
static int close_to(double got, double want, double rtol) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= 1e-7 + rtol * fabs(want);
}

static frt_status run_unary(const char *op, int32_t dt, int rank, const int64_t *dims, void *x,
                            int threads, int opset, frt_value *out, const char **kn) {
    frt_value in = frt_test_value(dt, rank, dims, x);
    frt_test_op t = {0};
    t.op_type = op;
    t.opset = opset;
    t.inputs = &in;
    t.n_in = 1;
    t.n_out = 1;
    t.n_threads = threads;
    return frt_test_run_op(&t, out, kn);
}

static void test_float_ops(void) {
    const int32_t dts[4] = {FRT_FLOAT32, FRT_FLOAT64, FRT_FLOAT16, FRT_BFLOAT16};
    const int64_t sizes[] = {1, 7, 33, 1001, 70001};
    for (size_t oi = 0; oi < N_FLOAT_OPS; oi++)
        for (int d = 0; d < 4; d++)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                const char *op = FLOAT_OPS[oi];
                int32_t dt = dts[d];
                int64_t n = sizes[si], dims[2] = {1, n};
                size_t es = frt_dtype_size(dt);
                void *x = malloc((size_t)n * es);
                for (int64_t i = 0; i < n; i++) {
                    double v = in_val(op, (size_t)i);
                    if (dt == FRT_FLOAT16) v = frt_half_to_float(frt_float_to_half((float)v));
                    if (dt == FRT_BFLOAT16) v = frt_bf16_to_float(frt_float_to_bf16((float)v));
                    frt_st_f64(dt, x, i, v);
                }
                frt_value out;
                const char *kn = "";
                frt_status st = run_unary(op, dt, 2, dims, x, si % 2 ? 2 : 1, 13, &out, &kn);
                CHECK_MSG(st == FRT_OK, "%s %s: %s", op, frt_dtype_name(dt), frt_last_error());
                if (st) {
                    free(x);
                    continue;
                }
                CHECK(out.dtype == dt && out.rank == 2 && out.dims[1] == n);
                /* half results are rounded to their 11 (float16) or 8 (bfloat16) significant bits,
                   so a float32 result next to a rounding boundary may end one unit away; float32
                   within the SIMD bounds */
                double rtol = dt == FRT_FLOAT16    ? 1e-3
                              : dt == FRT_BFLOAT16 ? 8e-3
                              : dt == FRT_FLOAT32  ? 4e-7
                                                   : 1e-15;
                int bad = 0;
                for (int64_t i = 0; i < n && bad < 3; i++) {
                    double xv = frt_ld_f64(dt, x, i);
                    double want = ref_op(op, dt == FRT_FLOAT32 ? (double)(float)xv : xv);
                    if (dt == FRT_FLOAT32) want = (double)(float)want;
                    if (dt == FRT_FLOAT16) want = frt_half_to_float(frt_float_to_half((float)want));
                    if (dt == FRT_BFLOAT16) want = frt_bf16_to_float(frt_float_to_bf16((float)want));
                    double got = frt_ld_f64(dt, out.data, i);
                    if (!close_to(got, want, rtol)) {
                        bad++;
                        CHECK_MSG(0, "%s %s (%s) n %lld: x = %.9g: %.9g, expected %.9g", op,
                                  frt_dtype_name(dt), kn, (long long)n, xv, got, want);
                    }
                }
                free(out.data);
                free(x);
            }
}

static void test_int_ops(void) {
    const int32_t dts[] = {FRT_INT8, FRT_INT16, FRT_INT32, FRT_INT64,
                           FRT_UINT8, FRT_UINT16, FRT_UINT32, FRT_UINT64};
    const char *ops[] = {"Abs", "Neg", "Sign"};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (int o = 0; o < 3; o++) {
            int32_t dt = dts[d];
            bool sgn = frt_dtype_is_signed(dt);
            int64_t n = 37, dims[1] = {n};
            size_t es = frt_dtype_size(dt);
            void *x = malloc((size_t)n * es);
            for (int64_t i = 0; i < n; i++) frt_st_i64(dt, x, i, (i * 7919) % 200 - (sgn ? 100 : 0));
            /* extremes: INT_MIN wraps under Abs and Neg */
            int64_t lo = dt == FRT_INT8 ? INT8_MIN : dt == FRT_INT16 ? INT16_MIN
                         : dt == FRT_INT32 ? INT32_MIN : dt == FRT_INT64 ? INT64_MIN : 0;
            if (sgn) frt_st_i64(dt, x, 3, lo);
            frt_value out;
            frt_status st = run_unary(ops[o], dt, 1, dims, x, 1, 13, &out, NULL);
            if (o == 1 && !sgn) {
                CHECK_MSG(st == FRT_ERR_UNSUPPORTED, "Neg on %s", frt_dtype_name(dt));
                CHECK(strstr(frt_last_error(), "dtype") != NULL);
                free(x);
                continue;
            }
            CHECK_MSG(st == FRT_OK, "%s %s: %s", ops[o], frt_dtype_name(dt), frt_last_error());
            if (!st) {
                for (int64_t i = 0; i < n; i++) {
                    int64_t v = frt_ld_i64(dt, x, i), w;
                    if (o == 2) w = v > 0 ? 1 : v < 0 ? -1 : 0;
                    else if (o == 0) w = v < 0 ? (int64_t)(0 - (uint64_t)v) : v;
                    else w = (int64_t)(0 - (uint64_t)v);
                    void *wb = malloc(es);
                    frt_st_i64(dt, wb, 0, w); /* wrapped into the dtype */
                    CHECK_MSG(memcmp((char *)out.data + i * (int64_t)es, wb, es) == 0,
                              "%s %s at %lld (x = %lld)", ops[o], frt_dtype_name(dt),
                              (long long)i, (long long)v);
                    free(wb);
                }
                free(out.data);
            }
            free(x);
        }
}

static void test_kernels_and_errors(void) {
    float x[5] = {1, 2, 3, 4, 5};
    int64_t dims[1] = {5};
    frt_value out;
    const char *kn = "";
    /* SIMD-backed ops name the tier of their loops; others are portable */
    CHECK_OK(run_unary("Exp", FRT_FLOAT32, 1, dims, x, 1, 13, &out, &kn));
    free(out.data);
    char want[32];
    snprintf(want, sizeof want, "exp_f32%s", frt_un_variant_get(frt_cpu_tier())->suffix);
    CHECK_MSG(strcmp(kn, want) == 0, "kernel %s, expected %s", kn, want);
    CHECK_OK(run_unary("Sin", FRT_FLOAT32, 1, dims, x, 1, 13, &out, &kn));
    free(out.data);
    CHECK(strcmp(kn, "sin_f32") == 0);
    /* old opsets (consumed_inputs ignored) */
    CHECK_OK(run_unary("Exp", FRT_FLOAT32, 1, dims, x, 1, 1, &out, &kn));
    free(out.data);
    /* dtypes an op does not take */
    int32_t xi[5] = {1, 2, 3, 4, 5};
    CHECK(run_unary("Exp", FRT_INT32, 1, dims, xi, 1, 13, &out, NULL) == FRT_ERR_UNSUPPORTED);
    CHECK(strstr(frt_last_error(), "int32") != NULL);
    CHECK(run_unary("Sqrt", FRT_BOOL, 1, dims, xi, 1, 13, &out, NULL) == FRT_ERR_UNSUPPORTED);
    CHECK(run_unary("Abs", FRT_BOOL, 1, dims, xi, 1, 13, &out, NULL) == FRT_ERR_UNSUPPORTED);
    /* arity */
    frt_value in[2] = {frt_test_value(FRT_FLOAT32, 1, dims, x), frt_test_value(FRT_FLOAT32, 1, dims, x)};
    frt_test_op t = {.op_type = "Log", .inputs = in, .n_in = 2, .n_out = 1};
    CHECK(frt_test_run_op(&t, &out, NULL) != FRT_OK);
}

int main(void) {
    test_approx_loops();
    test_exact_loops();
    test_float_ops();
    test_int_ops();
    test_kernels_and_errors();
    TEST_MAIN_END();
}
