/* Add Sub Mul Div Min Max Mod BitShift Pow Sum Mean on every dtype they take, through infer ->
 * select -> kernel, against a naive broadcasting reference computed element by element:
 * every broadcast pattern (same, scalar either side, constant scalar, row, channel, general),
 * odd sizes, threads; integer semantics (wrap, truncating division, Mod sign rules, shifts past
 * the width), NaN-propagating Min/Max, Pow with mixed dtypes and the specialized constant
 * exponents, variadic broadcasting, opset < 7 axis broadcasting, in place; and errors (zero
 * divisors at run time, dtypes and attributes an op does not take). */
#include <stdarg.h>
#include <stdint.h>

#include "op_harness.h"
#include "ops/dtype_util.h"
#include "test_util.h"

typedef struct shp {
    int rank;
    int64_t d[FRT_MAX_RANK];
} shp;

static shp S(int rank, ...) {
    shp s = {0};
    s.rank = rank;
    va_list ap;
    va_start(ap, rank);
    for (int i = 0; i < rank; i++) s.d[i] = va_arg(ap, int);
    va_end(ap);
    return s;
}

static int64_t shp_n(shp s) {
    int64_t n = 1;
    for (int i = 0; i < s.rank; i++) n *= s.d[i];
    return n;
}

static shp bshape(shp a, shp b) {
    shp o = {0};
    o.rank = a.rank > b.rank ? a.rank : b.rank;
    for (int i = 0; i < o.rank; i++) {
        int ia = i - (o.rank - a.rank), ib = i - (o.rank - b.rank);
        int64_t da = ia >= 0 ? a.d[ia] : 1, db = ib >= 0 ? b.d[ib] : 1;
        o.d[i] = da == 1 ? db : da;
    }
    return o;
}

/* Flat index into s of output element li (shape so), numpy broadcasting. */
static int64_t bidx(shp s, shp so, int64_t li) {
    int64_t idx[FRT_MAX_RANK], rem = li, r = 0;
    for (int k = so.rank - 1; k >= 0; k--) {
        idx[k] = rem % so.d[k];
        rem /= so.d[k];
    }
    for (int k = 0; k < so.rank; k++) {
        int ks = k - (so.rank - s.rank);
        if (ks >= 0) r = r * s.d[ks] + (s.d[ks] == 1 ? 0 : idx[k]);
    }
    return r;
}

enum { ADD, SUB, MUL, DIV, MIN, MAX, MOD, FMOD, SHL, SHR, POW, NOPS };
static const char *const OPT[NOPS] = {"Add", "Sub", "Mul", "Div", "Min", "Max",
                                      "Mod", "Mod", "BitShift", "BitShift", "Pow"};

static const int32_t ALL_DT[] = {FRT_INT8,   FRT_INT16,  FRT_INT32,   FRT_INT64,
                                 FRT_UINT8,  FRT_UINT16, FRT_UINT32,  FRT_UINT64,
                                 FRT_FLOAT16, FRT_FLOAT32, FRT_FLOAT64};
#define N_ALL_DT (sizeof ALL_DT / sizeof ALL_DT[0])

static int64_t ipow_ref(int64_t x, int64_t e) {
    if (e < 0) return x == 1 ? 1 : x == -1 ? ((e & 1) ? -1 : 1) : 0;
    uint64_t r = 1;
    for (int64_t i = 0; i < e; i++) r *= (uint64_t)x;
    return (int64_t)r;
}

/* Reference of one element: op on element ia of a (dtype da) and ib of b (db), stored as
 * element io of o (dtype da). */
static void ref_elem(int op, int32_t da, const void *a, int64_t ia, int32_t db, const void *b,
                     int64_t ib, void *o, int64_t io) {
    if (op == POW) {
        if (frt_dtype_is_float(da) || frt_dtype_is_float(db)) {
            double r = pow(frt_ld_f64(da, a, ia), frt_ld_f64(db, b, ib));
            if (da == FRT_FLOAT16) r = (float)r;
            frt_st_f64(da, o, io, r);
        } else {
            frt_st_i64(da, o, io, ipow_ref(frt_ld_i64(da, a, ia), frt_ld_i64(db, b, ib)));
        }
        return;
    }
    if (frt_dtype_is_float(da)) {
        double x = frt_ld_f64(da, a, ia), y = frt_ld_f64(db, b, ib), r;
        switch (op) {
        case ADD: r = x + y; break;
        case SUB: r = x - y; break;
        case MUL: r = x * y; break;
        case DIV: r = x / y; break;
        case MIN: r = isnan(x) || isnan(y) ? NAN : x < y ? x : y; break;
        case MAX: r = isnan(x) || isnan(y) ? NAN : x > y ? x : y; break;
        default: r = fmod(x, y); break;
        }
        if (da == FRT_FLOAT16) r = (float)r; /* computed in float32, then rounded to half */
        frt_st_f64(da, o, io, r);
        return;
    }
    bool sgn = frt_dtype_is_signed(da);
    if (!sgn) {
        uint64_t x = (uint64_t)frt_ld_i64(da, a, ia), y = (uint64_t)frt_ld_i64(db, b, ib), r = 0;
        unsigned bits = 8 * (unsigned)frt_dtype_size(da);
        switch (op) {
        case ADD: r = x + y; break;
        case SUB: r = x - y; break;
        case MUL: r = x * y; break;
        case DIV: r = y ? x / y : 0; break;
        case MIN: r = x < y ? x : y; break;
        case MAX: r = x > y ? x : y; break;
        case MOD: case FMOD: r = y ? x % y : 0; break;
        case SHL: r = y >= bits ? 0 : x << y; break;
        case SHR: r = y >= bits ? 0 : x >> y; break;
        }
        frt_st_i64(da, o, io, (int64_t)r);
        return;
    }
    int64_t x = frt_ld_i64(da, a, ia), y = frt_ld_i64(db, b, ib), r = 0;
    switch (op) {
    case ADD: r = (int64_t)((uint64_t)x + (uint64_t)y); break;
    case SUB: r = (int64_t)((uint64_t)x - (uint64_t)y); break;
    case MUL: r = (int64_t)((uint64_t)x * (uint64_t)y); break;
    case DIV: r = y ? x / y : 0; break;
    case MIN: r = x < y ? x : y; break;
    case MAX: r = x > y ? x : y; break;
    case FMOD: r = y ? x % y : 0; break;
    case MOD:
        r = y ? x % y : 0;
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        break;
    }
    frt_st_i64(da, o, io, r);
}

/* Test data of dtype dt: small values of both signs (nonneg for unsigned), no zeros when
 * nonzero; a few wide values for add/sub/mul wrap-around. */
static void fill(int32_t dt, void *p, int64_t n, unsigned seed, int nonzero, int op) {
    for (int64_t i = 0; i < n; i++) {
        double u = t_rand(&seed);
        if (frt_dtype_is_float(dt)) {
            double v = u * 8.0;
            if (nonzero && fabs(v) < 0.25) v = 0.5;
            if (op == POW) v = fabs(v) + 0.1;
            if (dt == FRT_FLOAT16) v = frt_half_to_float(frt_float_to_half((float)v));
            if (dt == FRT_FLOAT32) v = (float)v;
            frt_st_f64(dt, p, i, v);
        } else {
            int64_t v = (int64_t)(u * 60.0);
            if (!frt_dtype_is_signed(dt) || op == POW) v = v < 0 ? -v : v;
            if (op == SHL || op == SHR) v %= (int64_t)(8 * frt_dtype_size(dt)) + 3;
            if (op == POW) v %= 5;
            if (nonzero && v == 0) v = 3;
            if ((op == ADD || op == MUL) && i % 11 == 5) v = (int64_t)(u * 9.2e18);
            frt_st_i64(dt, p, i, v);
        }
    }
}

static frt_status run_bin(int op, int32_t da, shp sa, void *a, int32_t db, shp sb, void *b,
                          unsigned cmask, int threads, frt_value *out, const char **kn) {
    frt_value in[2] = {frt_test_value(da, sa.rank, sa.d, a), frt_test_value(db, sb.rank, sb.d, b)};
    frt_onnx_attr attr;
    frt_test_op t = {0};
    t.op_type = OPT[op];
    t.opset = 15;
    t.inputs = in;
    t.n_in = 2;
    t.n_out = 1;
    t.const_mask = cmask;
    t.n_threads = threads;
    if (op == MOD || op == FMOD) {
        attr = frt_test_attr_int("fmod", op == FMOD);
        t.attrs = &attr;
        t.n_attrs = 1;
    }
    if (op == SHL || op == SHR) {
        attr = frt_test_attr_string("direction", op == SHL ? "LEFT" : "RIGHT");
        t.attrs = &attr;
        t.n_attrs = 1;
    }
    return frt_test_run_op(&t, out, kn);
}

static bool op_takes(int op, int32_t dt) {
    if (op == SHL || op == SHR) return dt == FRT_UINT8 || dt == FRT_UINT16 || dt == FRT_UINT32 || dt == FRT_UINT64;
    if (op == MOD) return frt_dtype_is_int(dt);
    return true;
}

/* out vs reference: integers exactly; floats bit for bit (NaN matches NaN) except Pow (rtol). */
static void check_out(const char *what, int op, int32_t dt, const void *got, const void *want,
                      int64_t n) {
    size_t es = frt_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) {
        if (frt_dtype_is_float(dt)) {
            double g = frt_ld_f64(dt, got, i), w = frt_ld_f64(dt, want, i);
            if (isnan(g) && isnan(w)) continue;
            if (op == POW) {
                double tol = dt == FRT_FLOAT16 ? 1e-3 : dt == FRT_FLOAT32 ? 3e-7 : 1e-15;
                if (fabs(g - w) <= tol * fabs(w) || g == w) continue;
            } else if (memcmp((const char *)got + i * (int64_t)es, (const char *)want + i * (int64_t)es, es) == 0) {
                continue;
            }
            CHECK_MSG(0, "%s at %lld: %.9g, expected %.9g", what, (long long)i, g, w);
            return;
        }
        if (memcmp((const char *)got + i * (int64_t)es, (const char *)want + i * (int64_t)es, es)) {
            CHECK_MSG(0, "%s at %lld: %lld, expected %lld", what, (long long)i,
                      (long long)frt_ld_i64(dt, got, i), (long long)frt_ld_i64(dt, want, i));
            return;
        }
    }
    t_checks++;
}

static void check_bin(int op, int32_t da, int32_t db, shp sa, shp sb) {
    shp so = bshape(sa, sb);
    int64_t na = shp_n(sa), nb = shp_n(sb), no = shp_n(so);
    size_t ea = frt_dtype_size(da), eb = frt_dtype_size(db);
    void *a = malloc((size_t)na * ea + 8), *b = malloc((size_t)nb * eb + 8);
    void *ref = malloc((size_t)no * ea + 8);
    fill(da, a, na, 7u + (unsigned)na, 0, op);
    fill(db, b, nb, 99u + (unsigned)nb, op == DIV || op == MOD || op == FMOD, op);
    if (op == POW && frt_dtype_is_float(db) && nb > 2) frt_st_f64(db, b, 1, 0.5);
    for (int64_t i = 0; i < no; i++) ref_elem(op, da, a, bidx(sa, so, i), db, b, bidx(sb, so, i), ref, i);
    static const unsigned cms[] = {0, 1, 2};
    for (int c = 0; c < 3; c++)
        for (int th = 1; th <= 2; th++) {
            frt_value out;
            const char *kn = "";
            frt_status st = run_bin(op, da, sa, a, db, sb, b, cms[c], th, &out, &kn);
            char what[128];
            snprintf(what, sizeof what, "%s(%d) %s,%s ranks %d,%d numel %lld const %u kernel %s",
                     OPT[op], op, frt_dtype_name(da), frt_dtype_name(db), sa.rank, sb.rank,
                     (long long)no, cms[c], kn);
            CHECK_MSG(st == FRT_OK, "%s: %s", what, frt_last_error());
            if (st) continue;
            CHECK(out.dtype == da && out.numel == no && out.rank == so.rank);
            check_out(what, op, da, out.data, ref, no);
            free(out.data);
        }
    free(a);
    free(b);
    free(ref);
}

static void test_dtypes(void) {
    shp cases[][2] = {
        {S(3, 2, 3, 5), S(3, 2, 3, 5)}, {S(3, 2, 3, 5), S(0)},       {S(0), S(3, 2, 3, 5)},
        {S(3, 2, 3, 5), S(1, 5)},       {S(3, 2, 3, 5), S(2, 3, 1)}, {S(3, 2, 1, 5), S(2, 3, 1)},
        {S(1, 4099), S(1, 4099)},       {S(2, 2, 1), S(3, 1, 1, 7)},
    };
    for (int op = 0; op < POW; op++)
        for (size_t d = 0; d < N_ALL_DT; d++) {
            if (!op_takes(op, ALL_DT[d])) continue;
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
                check_bin(op, ALL_DT[d], ALL_DT[d], cases[c][0], cases[c][1]);
        }
    /* large, threaded: 70001 elements */
    for (size_t d = 0; d < N_ALL_DT; d++) {
        check_bin(MUL, ALL_DT[d], ALL_DT[d], S(1, 70001), S(1, 70001));
        check_bin(MAX, ALL_DT[d], ALL_DT[d], S(2, 70, 1001), S(1, 1001));
    }
}

static void test_pow(void) {
    int32_t pairs[][2] = {
        {FRT_FLOAT32, FRT_FLOAT32}, {FRT_FLOAT32, FRT_INT64},  {FRT_FLOAT32, FRT_INT32},
        {FRT_FLOAT32, FRT_UINT32},  {FRT_FLOAT32, FRT_UINT64}, {FRT_INT64, FRT_FLOAT32},
        {FRT_INT32, FRT_FLOAT32},   {FRT_INT64, FRT_INT64},    {FRT_INT32, FRT_INT32},
        {FRT_FLOAT64, FRT_FLOAT64}, {FRT_FLOAT16, FRT_FLOAT16}, {FRT_FLOAT64, FRT_INT8},
        {FRT_INT64, FRT_UINT8},     {FRT_FLOAT16, FRT_FLOAT32},
    };
    shp cases[][2] = {{S(1, 37), S(1, 37)}, {S(2, 3, 5), S(0)}, {S(2, 3, 5), S(1, 5)},
                      {S(0), S(2, 3, 5)}, {S(2, 4, 1), S(3, 1, 1, 3)}};
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            check_bin(POW, pairs[p][0], pairs[p][1], cases[c][0], cases[c][1]);

    /* constant scalar exponents of float32: specialized kernels, pow() results */
    const float exps[] = {2.0f, 3.0f, 0.5f, 1.0f, 1.5f};
    const char *names[] = {"pow_f32_sq", "pow_f32_cube", "pow_f32_sqrt", "pow_f32_one",
                           "pow_f32_f32_scalar_const"};
    float x[1001];
    unsigned seed = 5;
    for (int i = 0; i < 1001; i++) x[i] = t_rand(&seed) * 30.0f;
    x[0] = -0.0f;
    x[1] = -INFINITY;
    x[2] = INFINITY;
    x[3] = NAN;
    x[4] = -2.0f;
    for (int e = 0; e < 5; e++) {
        frt_value out;
        const char *kn = "";
        float ev = exps[e];
        CHECK_OK(run_bin(POW, FRT_FLOAT32, S(1, 1001), x, FRT_FLOAT32, S(0), &ev, 2, 1, &out, &kn));
        if (!out.data) continue;
        CHECK_MSG(strncmp(kn, names[e], strlen(names[e])) == 0, "kernel %s, expected %s", kn,
                  names[e]);
        for (int i = 0; i < 1001; i++) {
            float g = ((float *)out.data)[i], w = (float)pow(x[i], ev);
            int ok = isnan(w) ? isnan(g) : (g == w || fabsf(g - w) <= 2.5e-7f * fabsf(w));
            if (i < 5) ok = ok && (isnan(w) || signbit(g) == signbit(w));
            CHECK_MSG(ok, "pow(%a, %g) = %a (kernel %s), expected %a", x[i], ev, g, kn, w);
        }
        free(out.data);
    }
    /* integer 0 to a negative power fails at run time; 1 and -1 do not */
    int64_t ib[3] = {2, -1, 1}, ie[3] = {-2, -3, -5}, z[1] = {0}, m1[1] = {-1};
    frt_value out;
    CHECK_OK(run_bin(POW, FRT_INT64, S(1, 3), ib, FRT_INT64, S(1, 3), ie, 0, 1, &out, NULL));
    if (out.data) {
        CHECK(((int64_t *)out.data)[0] == 0 && ((int64_t *)out.data)[1] == -1 &&
              ((int64_t *)out.data)[2] == 1);
        free(out.data);
    }
    CHECK(run_bin(POW, FRT_INT64, S(0), z, FRT_INT64, S(0), m1, 0, 1, &out, NULL) == FRT_ERR_RUNTIME);
    CHECK(strstr(frt_last_error(), "negative power") != NULL);
    /* unsupported base dtype */
    uint8_t u[2] = {1, 2};
    CHECK(run_bin(POW, FRT_UINT8, S(1, 2), u, FRT_UINT8, S(1, 2), u, 0, 1, &out, NULL) ==
          FRT_ERR_UNSUPPORTED);
}

static void test_int_semantics(void) {
    /* Mod: numpy sign rules (fmod=0), C remainder (fmod=1); INT_MIN % -1 */
    int64_t x[7] = {-4, 7, 5, 4, -7, 8, INT64_MIN}, y[7] = {2, -3, 8, -2, 3, 5, -1};
    int64_t want_mod[7] = {0, -2, 5, 0, 2, 3, 0}, want_fmod[7] = {0, 1, 5, 0, -1, 3, 0};
    frt_value out;
    CHECK_OK(run_bin(MOD, FRT_INT64, S(1, 7), x, FRT_INT64, S(1, 7), y, 0, 1, &out, NULL));
    if (out.data) {
        CHECK(memcmp(out.data, want_mod, sizeof want_mod) == 0);
        free(out.data);
    }
    CHECK_OK(run_bin(FMOD, FRT_INT64, S(1, 7), x, FRT_INT64, S(1, 7), y, 0, 1, &out, NULL));
    if (out.data) {
        CHECK(memcmp(out.data, want_fmod, sizeof want_fmod) == 0);
        free(out.data);
    }
    /* zero divisors: Div and Mod fail at run time, every dtype and pattern */
    for (size_t d = 0; d < N_ALL_DT; d++) {
        int32_t dt = ALL_DT[d];
        if (!frt_dtype_is_int(dt)) continue;
        char a[64] = {0}, b[64] = {0};
        for (int i = 0; i < 4; i++) {
            frt_st_i64(dt, a, i, i + 1);
            frt_st_i64(dt, b, i, i == 2 ? 0 : 1);
        }
        for (int op = DIV; op <= FMOD; op++) {
            if (op == MIN || op == MAX) continue;
            CHECK(run_bin(op, dt, S(1, 4), a, dt, S(1, 4), b, 0, 1, &out, NULL) == FRT_ERR_RUNTIME);
            CHECK(strstr(frt_last_error(), "by zero") != NULL);
            CHECK(run_bin(op, dt, S(1, 4), a, dt, S(0), b + 2 * frt_dtype_size(dt), 2, 1, &out,
                          NULL) == FRT_ERR_RUNTIME);
            CHECK(run_bin(op, dt, S(2, 2, 2), a, dt, S(1, 2), b + frt_dtype_size(dt), 0, 1, &out,
                          NULL) == FRT_ERR_RUNTIME);
        }
    }
    /* BitShift by >= the width gives 0 */
    uint32_t v[3] = {1, 0xffffffffu, 5}, sh[3] = {31, 32, 200};
    CHECK_OK(run_bin(SHL, FRT_UINT32, S(1, 3), v, FRT_UINT32, S(1, 3), sh, 0, 1, &out, NULL));
    if (out.data) {
        CHECK(((uint32_t *)out.data)[0] == 0x80000000u && ((uint32_t *)out.data)[1] == 0 &&
              ((uint32_t *)out.data)[2] == 0);
        free(out.data);
    }
}

static void test_nan_minmax(void) {
    float a[6] = {NAN, 1.0f, NAN, -0.0f, 2.0f, INFINITY}, b[6] = {1.0f, NAN, NAN, 0.0f, -3.0f, 1.0f};
    frt_value out;
    for (int op = MIN; op <= MAX; op++) {
        CHECK_OK(run_bin(op, FRT_FLOAT32, S(1, 6), a, FRT_FLOAT32, S(1, 6), b, 0, 1, &out, NULL));
        if (!out.data) continue;
        const float *o = out.data;
        CHECK(isnan(o[0]) && isnan(o[1]) && isnan(o[2]));
        CHECK(o[4] == (op == MIN ? -3.0f : 2.0f) && o[5] == (op == MIN ? 1.0f : INFINITY));
        free(out.data);
    }
}

/* ---- variadic ---------------------------------------------------------------------------- */

static frt_status run_var(const char *op, int32_t dt, int n, shp *ss, void **data, unsigned cmask,
                          frt_value *out, const char **kn) {
    frt_value in[4];
    for (int i = 0; i < n; i++) in[i] = frt_test_value(dt, ss[i].rank, ss[i].d, data[i]);
    frt_test_op t = {0};
    t.op_type = op;
    t.opset = 13;
    t.inputs = in;
    t.n_in = n;
    t.n_out = 1;
    t.const_mask = cmask;
    return frt_test_run_op(&t, out, kn);
}

static void test_variadic(void) {
    const char *ops[4] = {"Min", "Max", "Sum", "Mean"};
    const int bops[4] = {MIN, MAX, ADD, ADD};
    shp sets[][3] = {
        {S(2, 3, 4), S(2, 3, 4), S(2, 3, 4)}, {S(1, 4), S(2, 3, 4), S(0)},
        {S(2, 3, 1), S(1, 5), S(3, 2, 1, 1)}, {S(0), S(1, 1), S(2, 3, 4)},
        {S(1, 1001), S(2, 7, 1001), S(2, 7, 1)},
    };
    for (int o = 0; o < 4; o++)
        for (size_t d = 0; d < N_ALL_DT; d++) {
            int32_t dt = ALL_DT[d];
            if (o >= 2 && !frt_dtype_is_float(dt)) continue;
            size_t es = frt_dtype_size(dt);
            for (size_t si = 0; si < sizeof sets / sizeof sets[0]; si++)
                for (int n = 1; n <= 3; n++) {
                    shp *ss = sets[si];
                    void *data[3];
                    shp so = ss[0];
                    for (int i = 0; i < n; i++) {
                        data[i] = malloc((size_t)shp_n(ss[i]) * es + 8);
                        fill(dt, data[i], shp_n(ss[i]), 3u + (unsigned)(i * 31 + n), 0, MIN);
                        if (i) so = bshape(so, ss[i]);
                    }
                    int64_t no = shp_n(so);
                    /* reference: left fold in the op's dtype, Mean divides at the end */
                    void *ref = malloc((size_t)no * es + 8), *tmp = malloc(8);
                    for (int64_t k = 0; k < no; k++) {
                        int64_t i0 = bidx(ss[0], so, k);
                        memcpy(tmp, (char *)data[0] + i0 * (int64_t)es, es);
                        for (int i = 1; i < n; i++)
                            ref_elem(bops[o], dt, tmp, 0, dt, data[i], bidx(ss[i], so, k), tmp, 0);
                        if (o == 3) {
                            char cnt[8];
                            frt_st_f64(dt, cnt, 0, n);
                            ref_elem(DIV, dt, tmp, 0, dt, cnt, 0, tmp, 0);
                        }
                        memcpy((char *)ref + k * (int64_t)es, tmp, es);
                    }
                    for (unsigned cm = 0; cm < 2; cm++) {
                        frt_value out;
                        const char *kn = "";
                        frt_status st = run_var(ops[o], dt, n, ss, data, cm ? 2 : 0, &out, &kn);
                        char what[128];
                        snprintf(what, sizeof what, "%s %s set %zu n %d (%s)", ops[o],
                                 frt_dtype_name(dt), si, n, kn);
                        CHECK_MSG(st == FRT_OK, "%s: %s", what, frt_last_error());
                        if (st) continue;
                        CHECK(out.numel == no && out.rank == so.rank);
                        check_out(what, bops[o], dt, out.data, ref, no);
                        free(out.data);
                    }
                    for (int i = 0; i < n; i++) free(data[i]);
                    free(ref);
                    free(tmp);
                }
        }
    /* mixed dtypes and integer Sum are refused */
    float f[2] = {1, 2};
    int32_t i32[2] = {1, 2};
    shp s2[2] = {S(1, 2), S(1, 2)};
    void *d2[2] = {f, i32};
    frt_value out;
    frt_value in[2] = {frt_test_value(FRT_FLOAT32, 1, s2[0].d, f), frt_test_value(FRT_INT32, 1, s2[1].d, i32)};
    frt_test_op t = {.op_type = "Max", .opset = 13, .inputs = in, .n_in = 2, .n_out = 1};
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    d2[0] = i32;
    CHECK(run_var("Sum", FRT_INT32, 2, s2, d2, 0, &out, NULL) == FRT_ERR_UNSUPPORTED);
    CHECK(strstr(frt_last_error(), "int32") != NULL);
    /* shapes that do not broadcast */
    shp bad[2] = {S(1, 2), S(1, 3)};
    d2[0] = f;
    d2[1] = f;
    CHECK(run_var("Min", FRT_FLOAT32, 2, bad, d2, 0, &out, NULL) == FRT_ERR_SHAPE);
}

/* ---- legacy broadcast (opset < 7) ------------------------------------------------------------ */

static void test_legacy_broadcast(void) {
    float a[2 * 3 * 4 * 5], b[3 * 4], c[5];
    unsigned seed = 9;
    for (int i = 0; i < 120; i++) a[i] = t_rand(&seed);
    for (int i = 0; i < 12; i++) b[i] = (float)i;
    for (int i = 0; i < 5; i++) c[i] = (float)(10 * i);
    int64_t da[4] = {2, 3, 4, 5}, db[2] = {3, 4}, dc[1] = {5};
    frt_onnx_attr attrs[2] = {frt_test_attr_int("broadcast", 1), frt_test_attr_int("axis", 1)};
    frt_value in[2] = {frt_test_value(FRT_FLOAT32, 4, da, a), frt_test_value(FRT_FLOAT32, 2, db, b)};
    frt_value out;
    for (unsigned cm = 0; cm < 2; cm++) {
        frt_test_op t = {.op_type = "Add", .opset = 6, .attrs = attrs, .n_attrs = 2, .inputs = in,
                         .n_in = 2, .n_out = 1, .const_mask = cm ? 2 : 0};
        CHECK_OK(frt_test_run_op(&t, &out, NULL));
        if (out.data) {
            CHECK(out.rank == 4 && out.dims[3] == 5);
            int ok = 1;
            for (int i = 0; i < 120; i++)
                ok &= ((float *)out.data)[i] == a[i] + b[(i / 5) % 12];
            CHECK(ok);
            free(out.data);
        }
    }
    /* no axis: trailing alignment */
    in[1] = frt_test_value(FRT_FLOAT32, 1, dc, c);
    frt_test_op t = {.op_type = "Mul", .opset = 1, .attrs = attrs, .n_attrs = 1, .inputs = in,
                     .n_in = 2, .n_out = 1};
    CHECK_OK(frt_test_run_op(&t, &out, NULL));
    if (out.data) {
        int ok = 1;
        for (int i = 0; i < 120; i++) ok &= ((float *)out.data)[i] == a[i] * c[i % 5];
        CHECK(ok);
        free(out.data);
    }
    /* b does not fit at the axis */
    t.n_attrs = 2; /* axis 1: [5] against dim 3 */
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
}

static void test_errors(void) {
    float f[4] = {1, 2, 3, 4};
    frt_value out;
    /* Mod of floats needs fmod=1 */
    CHECK(run_bin(MOD, FRT_FLOAT32, S(1, 4), f, FRT_FLOAT32, S(1, 4), f, 0, 1, &out, NULL) ==
          FRT_ERR_UNSUPPORTED);
    CHECK(strstr(frt_last_error(), "fmod") != NULL);
    /* BitShift: signed and float dtypes, a bad direction */
    int32_t i[4] = {1, 2, 3, 4};
    CHECK(run_bin(SHL, FRT_INT32, S(1, 4), i, FRT_INT32, S(1, 4), i, 0, 1, &out, NULL) ==
          FRT_ERR_UNSUPPORTED);
    uint8_t u[4] = {1, 2, 3, 4};
    int64_t d4[1] = {4};
    frt_value in[2] = {frt_test_value(FRT_UINT8, 1, d4, u), frt_test_value(FRT_UINT8, 1, d4, u)};
    frt_onnx_attr dir = frt_test_attr_string("direction", "UP");
    frt_test_op t = {.op_type = "BitShift", .opset = 11, .attrs = &dir, .n_attrs = 1, .inputs = in,
                     .n_in = 2, .n_out = 1};
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_MALFORMED);
    CHECK(strstr(frt_last_error(), "direction") != NULL);
    t.n_attrs = 0;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_MALFORMED);
    /* mixed dtypes outside Pow */
    CHECK(run_bin(ADD, FRT_UINT8, S(1, 4), u, FRT_INT32, S(1, 4), i, 0, 1, &out, NULL) ==
          FRT_ERR_SHAPE);
}

/* Variadic and Pow-special kernels may run with out == in[0]. */
static void test_inplace(void) {
    const char *ops[] = {"Sum", "Max", "Pow"};
    for (int o = 0; o < 3; o++) {
        float a[33 * 5], b[33], ref[33 * 5];
        unsigned seed = 4;
        for (int i = 0; i < 165; i++) a[i] = t_rand(&seed) * 3.0f;
        for (int i = 0; i < 33; i++) b[i] = t_rand(&seed);
        float two = 2.0f;
        for (int i = 0; i < 165; i++)
            ref[i] = o == 0 ? a[i] + b[i % 33] : o == 1 ? (a[i] > b[i % 33] ? a[i] : b[i % 33])
                                               : a[i] * a[i];
        int32_t ids_in[2] = {0, 1}, ids_out[1] = {0};
        frt_node node = {.name = "n", .op_type = ops[o], .domain = "", .n_in = 2, .n_out = 1,
                         .in = ids_in, .out = ids_out, .opset = 13};
        int64_t d[2] = {5, 33}, db[1] = {33};
        frt_value vals[2] = {frt_test_value(FRT_FLOAT32, 2, d, a),
                             o == 2 ? frt_test_value(FRT_FLOAT32, 0, db, &two)
                                    : frt_test_value(FRT_FLOAT32, 1, db, b)};
        frt_value *ip[2] = {&vals[0], &vals[1]}, outv = {0}, *op[1] = {&outv};
        const frt_op_def *def = frt_op_find("", ops[o]);
        frt_op_ctx c = {&node, 13, 2, 1, ip, op, NULL, frt_cpu_tier()};
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
        CHECK_MSG(memcmp(a, ref, sizeof ref) == 0, "%s in place (%s)", ops[o], k.name);
        frt_arena_free(&ar);
    }
}

int main(void) {
    test_dtypes();
    test_pow();
    test_int_semantics();
    test_nan_minmax();
    test_variadic();
    test_legacy_broadcast();
    test_errors();
    test_inplace();
    TEST_MAIN_END();
}
