/* Add Sub Mul Div through infer -> select -> kernel, against a naive broadcasting reference:
 * every broadcast pattern (same, scalar either side, constant scalar, channel, row, general N-d),
 * float32/int64/int32, odd sizes, unknown dims at select, constant inputs, threads, AVX2 vs
 * portable bit-equality, fused activations, and error paths. */
#include <stdarg.h>
#include <stdint.h>

#include "op_harness.h"
#include "ops/x86/simd_elementwise.h"
#include "util/threadpool.h"
#include "test_util.h"
#include "ops/x86/simd_elementwise.h"

static const char *const OPS[4] = {"Add", "Sub", "Mul", "Div"};
static const char *const OPN[4] = {"add", "sub", "mul", "div"};

typedef struct shp {
    int rank;
    int64_t d[FRT_MAX_RANK];
} shp;

static int64_t shp_numel(shp s) {
    int64_t n = 1;
    for (int i = 0; i < s.rank; i++) n *= s.d[i];
    return n;
}

static size_t esize(int dt) { return dt == FRT_INT64 ? 8 : 4; }

/* Random data; nonzero: no zero values (divisors). */
static void fill(int dt, void *p, int64_t n, unsigned seed, int nonzero) {
    for (int64_t i = 0; i < n; i++) {
        float f = t_rand(&seed);
        if (dt == FRT_FLOAT32) {
            if (nonzero && fabsf(f) < 0.05f) f = 0.5f;
            ((float *)p)[i] = f * 4.0f;
        } else {
            int64_t v = (int64_t)(f * 1000.0f);
            if (nonzero && v == 0) v = 3;
            if (dt == FRT_INT64) ((int64_t *)p)[i] = v * 1000003; /* exercise wide values */
            else ((int32_t *)p)[i] = (int32_t)v;
        }
    }
}

/* Naive reference with explicit broadcast index arithmetic. */
static void ref_binary(int op, int dt, shp sa, const void *a, shp sb, const void *b, shp so,
                       void *o) {
    int64_t n = shp_numel(so);
    for (int64_t li = 0; li < n; li++) {
        int64_t idx[FRT_MAX_RANK], rem = li;
        for (int k = so.rank - 1; k >= 0; k--) {
            idx[k] = rem % so.d[k];
            rem /= so.d[k];
        }
        int64_t ia = 0, ib = 0;
        for (int k = 0; k < so.rank; k++) {
            int ka = k - (so.rank - sa.rank), kb = k - (so.rank - sb.rank);
            if (ka >= 0) ia = ia * sa.d[ka] + (sa.d[ka] == 1 ? 0 : idx[k]);
            if (kb >= 0) ib = ib * sb.d[kb] + (sb.d[kb] == 1 ? 0 : idx[k]);
        }
        if (dt == FRT_FLOAT32) {
            float x = ((const float *)a)[ia], y = ((const float *)b)[ib], r;
            r = op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : x / y;
            ((float *)o)[li] = r;
        } else {
            int64_t x = dt == FRT_INT64 ? ((const int64_t *)a)[ia] : ((const int32_t *)a)[ia];
            int64_t y = dt == FRT_INT64 ? ((const int64_t *)b)[ib] : ((const int32_t *)b)[ib];
            int64_t r = op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : x / y;
            if (dt == FRT_INT64) ((int64_t *)o)[li] = r;
            else ((int32_t *)o)[li] = (int32_t)r;
        }
    }
}

static shp bshape(shp a, shp b) {
    shp o;
    o.rank = a.rank > b.rank ? a.rank : b.rank;
    for (int i = 0; i < o.rank; i++) {
        int ia = i - (o.rank - a.rank), ib = i - (o.rank - b.rank);
        int64_t da = ia >= 0 ? a.d[ia] : 1, db = ib >= 0 ? b.d[ib] : 1;
        o.d[i] = da == 1 ? db : da;
    }
    return o;
}

typedef struct run_cfg {
    unsigned const_mask;
    int unknown;
    int threads;
    int portable;
    frt_act act;
} run_cfg;

static frt_status run_bin(int op, int dt, shp sa, void *a, shp sb, void *b, run_cfg cfg,
                          frt_value *out, const char **kname) {
    frt_value in[2] = {frt_test_value(dt, sa.rank, sa.d, a), frt_test_value(dt, sb.rank, sb.d, b)};
    frt_test_op t = {0};
    t.op_type = OPS[op];
    t.opset = 14;
    t.inputs = in;
    t.n_in = 2;
    t.n_out = 1;
    t.const_mask = cfg.const_mask;
    t.unknown_dims = cfg.unknown;
    t.n_threads = cfg.threads;
    t.act = cfg.act;
    if (cfg.portable) t.isa = FRT_TEST_ISA(FRT_ISA_PORTABLE);
    return frt_test_run_op(&t, out, kname);
}

static void apply_act(float *o, int64_t n, frt_act act) {
    if (act.kind == FRT_ACT_NONE) return;
    float lo = act.kind == FRT_ACT_RELU ? 0.0f : act.lo;
    float hi = act.kind == FRT_ACT_RELU ? INFINITY : act.hi;
    for (int64_t i = 0; i < n; i++) o[i] = o[i] < lo ? lo : o[i] > hi ? hi : o[i];
}

/* Runs one case in several configurations and checks each against the reference. When
 * expect is non-NULL, the kernel chosen with known shapes and no constants must start with it. */
static void check_case(int op, int dt, shp sa, shp sb, const char *expect) {
    shp so = bshape(sa, sb);
    int64_t na = shp_numel(sa), nb = shp_numel(sb), no = shp_numel(so);
    size_t es = esize(dt);
    void *a = malloc((size_t)na * es + 1), *b = malloc((size_t)nb * es + 1);
    void *ref = malloc((size_t)no * es + 1);
    fill(dt, a, na, 7u + (unsigned)na, 0);
    fill(dt, b, nb, 99u + (unsigned)nb, op == 3);
    ref_binary(op, dt, sa, a, sb, b, so, ref);

    run_cfg cfgs[] = {
        {0, 0, 1, 0, {0}}, {1, 0, 1, 0, {0}}, {2, 0, 1, 0, {0}}, {0, 1, 1, 0, {0}},
        {1, 1, 1, 0, {0}}, {2, 1, 1, 0, {0}}, {0, 0, 2, 0, {0}}, {2, 1, 2, 0, {0}},
        {0, 0, 1, 1, {0}}, {2, 0, 1, 1, {0}}, {0, 1, 2, 1, {0}},
    };
    void *first = NULL;
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
        frt_value out;
        const char *kn = NULL;
        frt_status st = run_bin(op, dt, sa, a, sb, b, cfgs[c], &out, &kn);
        CHECK_MSG(st == FRT_OK, "%s dt=%d cfg=%zu: %s", OPS[op], dt, c, frt_last_error());
        if (st) continue;
        CHECK(out.rank == so.rank && out.numel == no && out.dtype == dt);
        for (int i = 0; i < so.rank && i < out.rank; i++) CHECK(out.dims[i] == so.d[i]);
        if (c == 0 && expect) {
            char want[64];
            snprintf(want, sizeof want, "%s_%s", OPN[op], expect);
            CHECK_MSG(strncmp(kn, want, strlen(want)) == 0, "kernel %s, expected %s", kn, want);
        }
        int same = memcmp(out.data, ref, (size_t)no * es) == 0;
        CHECK_MSG(same, "%s dt=%d cfg=%zu kernel=%s rank %d numel %lld", OPS[op], dt, c, kn,
                  so.rank, (long long)no);
        if (!first) first = out.data;
        else {
            /* all configurations (AVX2 and portable, threads, constants) agree bit for bit */
            CHECK(memcmp(out.data, first, (size_t)no * es) == 0);
            free(out.data);
        }
    }
    free(first);
    free(a);
    free(b);
    free(ref);
}

static shp S(int rank, ...) {
    shp s = {0};
    s.rank = rank;
    va_list ap;
    va_start(ap, rank);
    for (int i = 0; i < rank; i++) s.d[i] = va_arg(ap, int);
    va_end(ap);
    return s;
}

static void test_patterns(void) {
    const int dts[3] = {FRT_FLOAT32, FRT_INT64, FRT_INT32};
    struct {
        shp a, b;
        const char *expect; /* kernel name after "<op>_" with known shapes, no constants */
    } cases[] = {
        /* same */
        {S(1, 1), S(1, 1), NULL},
        {S(1, 7), S(1, 7), NULL},
        {S(1, 33), S(2, 1, 33), NULL},
        {S(1, 1001), S(1, 1001), NULL},
        {S(3, 2, 3, 5), S(3, 2, 3, 5), NULL},
        /* scalar, either side, rank 0 or [1] */
        {S(1, 1001), S(0), NULL},
        {S(0), S(1, 1001), NULL},
        {S(2, 3, 7), S(1, 1), NULL},
        {S(2, 1, 1), S(2, 5, 7), NULL},
        {S(0), S(0), NULL},
        /* channel */
        {S(4, 2, 3, 5, 7), S(3, 3, 1, 1), NULL},
        {S(4, 1, 3, 4, 5), S(4, 1, 3, 1, 1), NULL},
        {S(3, 3, 1, 1), S(4, 2, 3, 4, 5), NULL},
        {S(4, 2, 3, 4, 4), S(4, 2, 3, 1, 1), NULL},
        {S(4, 2, 5, 3, 3), S(3, 5, 1, 1), NULL},
        /* row */
        {S(2, 4, 33), S(1, 33), NULL},
        {S(1, 33), S(2, 4, 33), NULL},
        {S(3, 2, 3, 7), S(2, 1, 7), NULL},
        {S(3, 2, 3, 7), S(2, 3, 7), NULL},
        /* general */
        {S(3, 2, 1, 3), S(2, 4, 1), NULL},
        {S(2, 5, 1), S(2, 1, 6), NULL},
        {S(4, 2, 1, 4, 1), S(3, 3, 1, 5), NULL},
        {S(3, 3, 1, 7), S(3, 1, 5, 1), NULL},
        {S(2, 0, 3), S(1, 3), NULL}, /* empty output */
        /* threaded sizes */
        {S(1, 70001), S(1, 70001), NULL},
        {S(2, 64, 1031), S(1, 1031), NULL},
        {S(4, 2, 16, 61, 67), S(3, 16, 1, 1), NULL},
        {S(3, 40, 1, 1001), S(2, 37, 1), NULL},
        {S(1, 70001), S(0), NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int d = 0; d < 3; d++)
            for (int op = 0; op < 4; op++) check_case(op, dts[d], cases[i].a, cases[i].b, NULL);
}

/* Kernel specialization chosen at select. */
static void expect_kernel(int op, shp sa, shp sb, unsigned const_mask, int unknown,
                          const char *want) {
    int64_t na = shp_numel(sa), nb = shp_numel(sb);
    float *a = calloc((size_t)na + 1, 4), *b = calloc((size_t)nb + 1, 4);
    fill(FRT_FLOAT32, a, na, 1, 1);
    fill(FRT_FLOAT32, b, nb, 2, 1);
    run_cfg cfg = {const_mask, unknown, 1, 1, {0}};
    frt_value out;
    const char *kn = "";
    frt_status st = run_bin(op, FRT_FLOAT32, sa, a, sb, b, cfg, &out, &kn);
    CHECK_OK(st);
    if (!st) {
        CHECK_MSG(strcmp(kn, want) == 0, "kernel %s, expected %s", kn, want);
        free(out.data);
    }
    free(a);
    free(b);
}

static void test_selection(void) {
    expect_kernel(0, S(2, 3, 7), S(2, 3, 7), 0, 0, "add_f32_same");
    expect_kernel(0, S(2, 3, 7), S(2, 3, 7), 0, 1, "add_f32_same");
    expect_kernel(2, S(2, 3, 7), S(0), 2, 0, "mul_f32_scalar_const");
    expect_kernel(2, S(2, 3, 7), S(0), 2, 1, "mul_f32_scalar_const");
    expect_kernel(1, S(1, 1), S(2, 3, 7), 1, 1, "sub_f32_scalar_const");
    expect_kernel(3, S(2, 3, 7), S(1, 1), 0, 0, "div_f32_scalar");
    expect_kernel(0, S(4, 2, 3, 5, 7), S(3, 3, 1, 1), 2, 0, "add_f32_chan");
    expect_kernel(0, S(4, 2, 3, 5, 7), S(3, 3, 1, 1), 2, 1, "add_f32_chan"); /* x unknown */
    expect_kernel(2, S(4, 2, 3, 5, 7), S(4, 2, 3, 1, 1), 0, 0, "mul_f32_chan");
    expect_kernel(0, S(3, 2, 3, 7), S(1, 7), 2, 1, "add_f32_row");
    expect_kernel(0, S(1, 7), S(3, 2, 3, 7), 1, 0, "add_f32_row");
    expect_kernel(0, S(3, 2, 1, 3), S(2, 4, 1), 0, 0, "add_f32_bcast_nd");
    /* unknown dims on both sides: the rank difference still says b is the small side */
    expect_kernel(0, S(3, 2, 1, 3), S(2, 4, 1), 0, 1, "add_f32_row");
    {   /* without a cap, select takes the float32 loops of the tier this process runs */
        frt_value in[2];
        float a[9] = {0}, b[9] = {0};
        int64_t d[1] = {9};
        in[0] = frt_test_value(FRT_FLOAT32, 1, d, a);
        in[1] = frt_test_value(FRT_FLOAT32, 1, d, b);
        frt_test_op t = {.op_type = "Add", .inputs = in, .n_in = 2, .n_out = 1};
        frt_value out;
        const char *kn = "";
        CHECK_OK(frt_test_run_op(&t, &out, &kn));
        char want[64];
        snprintf(want, sizeof want, "add_f32_same%s", frt_ew_variant_get(frt_cpu_tier())->suffix);
        CHECK_MSG(strcmp(kn, want) == 0, "kernel %s, expected %s", kn, want);
        free(out.data);
    }
}

/* Shapes that change between runs relative to a select-time guess: select sees [?,?] vs [?,?]
 * (guess "same") but the data is row- or scalar-broadcast; covered by unknown=1 above. Here the
 * constant side is known and the other side's rank is larger than at select. */
static void test_fused_act(void) {
    frt_act acts[2] = {{FRT_ACT_RELU, 0, 0}, {FRT_ACT_CLIP, -0.5f, 1.25f}};
    shp shapes[][2] = {{S(1, 1001), S(1, 1001)}, {S(1, 77), S(0)}, {S(4, 2, 3, 5, 7), S(3, 3, 1, 1)},
                       {S(2, 4, 33), S(1, 33)}, {S(3, 2, 1, 3), S(2, 4, 1)}, {S(1, 70001), S(1, 1)}};
    for (int ai = 0; ai < 2; ai++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (int portable = 0; portable < 2; portable++) {
                shp sa = shapes[si][0], sb = shapes[si][1], so = bshape(sa, sb);
                int64_t na = shp_numel(sa), nb = shp_numel(sb), no = shp_numel(so);
                float *a = malloc((size_t)na * 4), *b = malloc((size_t)nb * 4);
                float *ref = malloc((size_t)no * 4);
                fill(FRT_FLOAT32, a, na, 5, 0);
                fill(FRT_FLOAT32, b, nb, 6, 0);
                ref_binary(0, FRT_FLOAT32, sa, a, sb, b, so, ref);
                apply_act(ref, no, acts[ai]);
                run_cfg cfg = {2, 0, 2, portable, acts[ai]};
                frt_value out;
                const char *kn = "";
                CHECK_OK(run_bin(0, FRT_FLOAT32, sa, a, sb, b, cfg, &out, &kn));
                if (out.data) {
                    CHECK_MSG(memcmp(out.data, ref, (size_t)no * 4) == 0, "fused %d kernel %s", ai,
                              kn);
                    CHECK(strstr(kn, ai == 0 ? "_relu" : "_clip") != NULL);
                    free(out.data);
                }
                free(a);
                free(b);
                free(ref);
            }
    /* fused activation on ints is rejected */
    int64_t a[3] = {1, 2, 3}, dims[1] = {3};
    frt_value in[2] = {frt_test_value(FRT_INT64, 1, dims, a), frt_test_value(FRT_INT64, 1, dims, a)};
    frt_test_op t = {.op_type = "Add", .inputs = in, .n_in = 2, .n_out = 1, .act = acts[0]};
    frt_value out;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED);
}

static frt_status run_int_div(int dt, shp sa, void *a, shp sb, void *b, unsigned cmask,
                              frt_value *out) {
    run_cfg cfg = {cmask, 0, 1, 0, {0}};
    return run_bin(3, dt, sa, a, sb, b, cfg, out, NULL);
}

static void test_int_semantics(void) {
    /* truncation toward zero, INT_MIN / -1 wraps */
    int64_t a[6] = {-7, 7, -7, 7, INT64_MIN, 5}, b[6] = {2, 2, -2, -2, -1, 7};
    int64_t want[6] = {-3, 3, 3, -3, INT64_MIN, 0};
    frt_value out;
    CHECK_OK(run_int_div(FRT_INT64, S(1, 6), a, S(1, 6), b, 0, &out));
    if (out.data) {
        CHECK(memcmp(out.data, want, sizeof want) == 0);
        free(out.data);
    }
    int32_t a32[3] = {INT32_MIN, -9, 9}, m1 = -1;
    int32_t want32[3] = {INT32_MIN, 9, -9};
    for (unsigned cm = 0; cm < 3; cm += 2) {
        CHECK_OK(run_int_div(FRT_INT32, S(1, 3), a32, S(0), &m1, cm, &out));
        if (out.data) {
            CHECK(memcmp(out.data, want32, sizeof want32) == 0);
            free(out.data);
        }
    }
    /* wrap-around add/mul (no UB) */
    int64_t big[2] = {INT64_MAX, INT64_MIN}, one[2] = {1, -1};
    run_cfg cfg = {0, 0, 1, 0, {0}};
    CHECK_OK(run_bin(0, FRT_INT64, S(1, 2), big, S(1, 2), one, cfg, &out, NULL));
    if (out.data) {
        CHECK(((int64_t *)out.data)[0] == INT64_MIN && ((int64_t *)out.data)[1] == INT64_MAX);
        free(out.data);
    }
    int32_t m[1] = {INT32_MAX}, two = 2;
    CHECK_OK(run_bin(2, FRT_INT32, S(1, 1), m, S(0), &two, cfg, &out, NULL));
    if (out.data) {
        CHECK(((int32_t *)out.data)[0] == -2);
        free(out.data);
    }

    /* division by zero: vector, runtime scalar, constant scalar, scalar numerator, broadcast */
    int64_t z[6] = {1, 2, 0, 4, 5, 6}, zero = 0, sev = 7;
    CHECK(run_int_div(FRT_INT64, S(1, 6), a, S(1, 6), z, 0, &out) == FRT_ERR_RUNTIME);
    CHECK(strstr(frt_last_error(), "division by zero") != NULL);
    CHECK(strstr(frt_last_error(), "test_node") != NULL);
    CHECK(run_int_div(FRT_INT64, S(1, 6), a, S(0), &zero, 0, &out) == FRT_ERR_RUNTIME);
    CHECK(run_int_div(FRT_INT64, S(1, 6), a, S(0), &zero, 2, &out) == FRT_ERR_RUNTIME);
    CHECK(run_int_div(FRT_INT64, S(0), &sev, S(1, 6), z, 1, &out) == FRT_ERR_RUNTIME);
    CHECK(run_int_div(FRT_INT64, S(2, 2, 3), a, S(1, 3), z, 0, &out) == FRT_ERR_RUNTIME);
    CHECK(run_int_div(FRT_INT64, S(2, 3, 2), a, S(2, 3, 1), z + 1, 0, &out) == FRT_ERR_RUNTIME);
    CHECK(run_int_div(FRT_INT64, S(3, 2, 1, 3), a, S(2, 2, 1), z + 1, 0, &out) == FRT_ERR_RUNTIME);
    int32_t a3[4] = {1, 2, 3, 4}, z3[4] = {1, 0, 1, 1};
    CHECK(run_int_div(FRT_INT32, S(1, 4), a3, S(1, 4), z3, 0, &out) == FRT_ERR_RUNTIME);
    /* large, threaded */
    int64_t n = 70001;
    int64_t *la = calloc((size_t)n, 8), *lb = calloc((size_t)n, 8);
    for (int64_t i = 0; i < n; i++) lb[i] = i == n - 5 ? 0 : 3;
    run_cfg tcfg = {0, 0, 2, 0, {0}};
    CHECK(run_bin(3, FRT_INT64, S(1, (int)n), la, S(1, (int)n), lb, tcfg, &out, NULL) ==
          FRT_ERR_RUNTIME);
    free(la);
    free(lb);
    /* float division by zero is IEEE, not an error */
    float fa[2] = {1, -1}, fz = 0;
    CHECK_OK(run_bin(3, FRT_FLOAT32, S(1, 2), fa, S(0), &fz, cfg, &out, NULL));
    if (out.data) {
        CHECK(isinf(((float *)out.data)[0]) && ((float *)out.data)[1] < 0);
        free(out.data);
    }
}

static void test_errors(void) {
    float f[12] = {0};
    int64_t i64[12] = {0};
    double d[12] = {0};
    int64_t d3[1] = {3}, d4[1] = {4}, d34[2] = {3, 4}, d43[2] = {4, 3};
    frt_value out;
    frt_test_op t = {.op_type = "Add", .n_in = 2, .n_out = 1};
    /* mismatched dtypes */
    frt_value in1[2] = {frt_test_value(FRT_FLOAT32, 1, d3, f), frt_test_value(FRT_INT64, 1, d3, i64)};
    t.inputs = in1;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK(strstr(frt_last_error(), "dtype") != NULL);
    /* non-broadcastable */
    frt_value in2[2] = {frt_test_value(FRT_FLOAT32, 1, d3, f), frt_test_value(FRT_FLOAT32, 1, d4, f)};
    t.inputs = in2;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK(strstr(frt_last_error(), "broadcast") != NULL);
    frt_value in3[2] = {frt_test_value(FRT_FLOAT32, 2, d34, f), frt_test_value(FRT_FLOAT32, 2, d43, f)};
    t.inputs = in3;
    t.op_type = "Mul";
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    /* unknown at load, mismatch at run time: caught by the run-time infer */
    t.unknown_dims = 1;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    t.unknown_dims = 0;
    /* unsupported dtype (bool arithmetic) */
    frt_value in4[2] = {frt_test_value(FRT_BOOL, 1, d3, d), frt_test_value(FRT_BOOL, 1, d3, d)};
    t.inputs = in4;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED);
    /* arity */
    t.inputs = in2;
    t.n_in = 1;
    CHECK(frt_test_run_op(&t, &out, NULL) != FRT_OK);
}

/* In place: out aliasing in[0] must give the same result (the planner may do this). */
static void test_inplace(void) {
    frt_value in[2];
    int64_t d[2] = {5, 33}, db[1] = {33};
    float a[165], b[33], ref[165];
    fill(FRT_FLOAT32, a, 165, 3, 0);
    fill(FRT_FLOAT32, b, 33, 4, 0);
    for (int i = 0; i < 165; i++) ref[i] = a[i] * b[i % 33];
    in[0] = frt_test_value(FRT_FLOAT32, 2, d, a);
    in[1] = frt_test_value(FRT_FLOAT32, 1, db, b);
    frt_test_op t = {.op_type = "Mul", .inputs = in, .n_in = 2, .n_out = 1, .const_mask = 2};
    /* run the selected kernel directly with out == in[0] */
    const frt_op_def *def = frt_op_find("", "Mul");
    CHECK(def != NULL);
    frt_value out;
    const char *kn;
    CHECK_OK(frt_test_run_op(&t, &out, &kn));
    free(out.data);
    int32_t ids_in[2] = {0, 1}, ids_out[1] = {0};
    frt_node node = {.name = "n", .op_type = "Mul", .domain = "", .n_in = 2, .n_out = 1,
                     .in = ids_in, .out = ids_out, .opset = 14};
    frt_value vals[2] = {in[0], in[1]};
    frt_value *ip[2] = {&vals[0], &vals[1]}, outv = {0}, *op[1] = {&outv};
    frt_op_ctx c = {&node, 14, 2, 1, ip, op, NULL, FRT_ISA_PORTABLE};
    CHECK_OK(def->infer(&c));
    frt_arena ar;
    frt_arena_init(&ar);
    c.arena = &ar;
    frt_kernel k = {0};
    CHECK_OK(def->select(&c, &k));
    CHECK(k.flags & FRT_K_INPLACE);
    frt_step s = {.k = k, .in = ids_in, .out = ids_out, .n_in = 2, .n_out = 1, .ir = &node};
    frt_exec x = {.values = vals};
    CHECK_OK(k.fn(&s, &x));
    CHECK(memcmp(a, ref, sizeof ref) == 0);
    frt_arena_free(&ar);
}

/* One kernel selected with unknown dims, then run on shapes that change between runs (as a
 * runtime does after a reshape): every run must match the reference. */
static void test_shape_changes(void) {
    const frt_op_def *def = frt_op_find("", "Sub");
    shp runs[][2] = {{S(2, 3, 5), S(2, 3, 5)}, {S(2, 3, 5), S(2, 1, 5)}, {S(2, 3, 5), S(2, 3, 1)},
                     {S(2, 1, 5), S(2, 4, 1)}, {S(2, 1, 1), S(2, 4, 6)}, {S(2, 7, 9), S(2, 1, 1)},
                     {S(2, 0, 9), S(2, 1, 9)}, {S(2, 64, 1031), S(2, 64, 1031)}};
    for (int portable = 0; portable < 2; portable++) {
        int32_t ids_in[2] = {0, 1}, ids_out[1] = {2};
        frt_node node = {.name = "n", .op_type = "Sub", .domain = "", .n_in = 2, .n_out = 1,
                         .in = ids_in, .out = ids_out, .opset = 14};
        int64_t unk[2] = {-1, -1};
        frt_value lv[3] = {frt_test_value(FRT_FLOAT32, 2, unk, NULL),
                           frt_test_value(FRT_FLOAT32, 2, unk, NULL), {0}};
        frt_value *ip[2] = {&lv[0], &lv[1]}, *op[1] = {&lv[2]};
        frt_op_ctx c = {&node, 14, 2, 1, ip, op, NULL, FRT_ISA_PORTABLE};
        CHECK_OK(def->infer(&c));
        CHECK(lv[2].rank == 2 && lv[2].dims[0] == -1);
        frt_arena ar;
        frt_arena_init(&ar);
        c.arena = &ar;
        frt_kernel k = {0};
        c.isa = portable ? FRT_ISA_PORTABLE : frt_cpu_tier();
        CHECK_OK(def->select(&c, &k));
        frt_threadpool *tp = frt_threadpool_create(2, NULL);
        for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
            shp sa = runs[r][0], sb = runs[r][1], so = bshape(sa, sb);
            int64_t na = shp_numel(sa), nb = shp_numel(sb), no = shp_numel(so);
            float *a = malloc((size_t)na * 4 + 4), *b = malloc((size_t)nb * 4 + 4);
            float *o = malloc((size_t)no * 4 + 4), *ref = malloc((size_t)no * 4 + 4);
            fill(FRT_FLOAT32, a, na, 1, 0);
            fill(FRT_FLOAT32, b, nb, 2, 0);
            ref_binary(1, FRT_FLOAT32, sa, a, sb, b, so, ref);
            frt_value v[3] = {frt_test_value(FRT_FLOAT32, sa.rank, sa.d, a),
                              frt_test_value(FRT_FLOAT32, sb.rank, sb.d, b), {0}};
            frt_value *rp[2] = {&v[0], &v[1]}, *ro[1] = {&v[2]};
            frt_op_ctx rc = {&node, 14, 2, 1, rp, ro, NULL, FRT_ISA_PORTABLE};
            CHECK_OK(def->infer(&rc));
            v[2].data = o;
            frt_step st = {.k = k, .in = ids_in, .out = ids_out, .n_in = 2, .n_out = 1, .ir = &node};
            frt_exec x = {.values = v, .tp = r % 2 ? tp : NULL};
            CHECK_OK(k.fn(&st, &x));
            CHECK_MSG(memcmp(o, ref, (size_t)no * 4) == 0, "run %zu with kernel %s", r, k.name);
            free(a);
            free(b);
            free(o);
            free(ref);
        }
        frt_threadpool_free(tp);
        frt_arena_free(&ar);
    }
}

int main(void) {
    test_patterns();
    test_shape_changes();
    test_selection();
    test_fused_act();
    test_int_semantics();
    test_errors();
    test_inplace();
    TEST_MAIN_END();
}
