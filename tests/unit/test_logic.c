/* And Or Xor Not Equal Less Greater LessOrEqual GreaterOrEqual Where IsNaN IsInf through infer ->
 * select -> kernel, against naive references: every dtype, odd sizes, scalar / row / channel /
 * two-sided and three-way broadcasts, NaN and infinities, the host tier's float32 loops against
 * the portable ones, threads, unknown dims at select, and bad inputs (dtypes, shapes). */
#include <math.h>
#include <stdint.h>

#include "op_harness.h"
#include "ops/dtype_util.h"
#include "ops/x86/simd_logic.h"
#include "test_util.h"

typedef struct shp {
    int r;
    int64_t d[4];
} shp;

/* Flat index into an input of shape s for output element i of shape o (numpy broadcasting). */
static int64_t bidx(const shp *o, const shp *s, int64_t i) {
    int64_t idx = 0, mul = 1;
    for (int k = o->r - 1; k >= 0; k--) {
        int64_t c = i % o->d[k];
        i /= o->d[k];
        int ks = k - (o->r - s->r);
        if (ks < 0) continue;
        if (s->d[ks] != 1) idx += c * mul;
        mul *= s->d[ks];
    }
    return idx;
}

static shp bshape(const shp *a, const shp *b) {
    shp o;
    o.r = a->r > b->r ? a->r : b->r;
    for (int k = 0; k < o.r; k++) {
        int ka = k - (o.r - a->r), kb = k - (o.r - b->r);
        int64_t da = ka >= 0 ? a->d[ka] : 1, db = kb >= 0 ? b->d[kb] : 1;
        o.d[k] = da == 1 ? db : da;
    }
    return o;
}

static int64_t nel(const shp *s) { return numel(s->d, s->r); }

/* Random small values of dtype dt (so that equal elements occur), with NaN / inf for floats. */
static void *rand_data(int32_t dt, int64_t n, unsigned seed) {
    size_t es = frt_dtype_size((frt_dtype)dt);
    void *p = malloc((size_t)(n ? n : 1) * es);
    unsigned st = seed * 2654435761u + 1;
    for (int64_t i = 0; i < n; i++) {
        st = st * 1103515245u + 12345u;
        int v = (int)((st >> 16) % 7) - (frt_dtype_is_signed(dt) ? 3 : 0);
        double d = v * 0.5;
        if (dt == FRT_BOOL) d = v & 1;
        else if (!frt_dtype_is_float(dt)) d = v;
        if (frt_dtype_is_float(dt) && (st >> 8) % 17 == 0) d = ((st >> 12) & 3) == 0 ? NAN
                                                             : ((st >> 12) & 1) ? INFINITY
                                                                                : -INFINITY;
        frt_st_f64(dt, p, i, d);
    }
    return p;
}

static frt_status run(const char *op, int64_t opset, frt_value *in, int n_in,
                      const frt_onnx_attr *attrs, size_t n_attrs, int portable, int unknown,
                      frt_value *out, const char **kn) {
    frt_test_op t = {0};
    t.op_type = op;
    t.opset = opset;
    t.inputs = in;
    t.n_in = n_in;
    t.attrs = attrs;
    t.n_attrs = n_attrs;
    t.n_out = 1;
    t.n_threads = 2;
    t.unknown_dims = unknown;
    if (portable) t.isa = FRT_TEST_ISA(FRT_ISA_PORTABLE);
    return frt_test_run_op(&t, out, kn);
}

static const shp PAIRS[][2] = {
    {{2, {5, 7}}, {2, {5, 7}}},          {{3, {3, 1, 9}}, {2, {4, 1}}},
    {{1, {1}}, {2, {2, 33}}},            {{1, {33}}, {1, {1}}},
    {{4, {2, 3, 1, 37}}, {3, {3, 5, 1}}}, {{3, {2, 17, 3}}, {3, {1, 17, 1}}},
    {{1, {70001}}, {1, {1}}},            {{2, {3, 0}}, {1, {1}}},
    {{0, {0}}, {0, {0}}},
};
#define NPAIRS (sizeof PAIRS / sizeof PAIRS[0])

static const char *const CMP_OPS[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};

static int ref_cmp(int op, double x, double y) {
    switch (op) {
    case 0: return x == y;
    case 1: return x < y;
    case 2: return x > y;
    case 3: return x <= y;
    default: return x >= y;
    }
}

static void test_compare(void) {
    static const int32_t dts[] = {FRT_FLOAT32, FRT_FLOAT64, FRT_FLOAT16, FRT_BFLOAT16, FRT_INT8,
                                  FRT_INT16,   FRT_INT32,   FRT_INT64,   FRT_UINT8,    FRT_UINT16,
                                  FRT_UINT32,  FRT_UINT64,  FRT_BOOL};
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
        int32_t dt = dts[di];
        for (size_t pi = 0; pi < NPAIRS; pi++) {
            shp sa = PAIRS[pi][0], sb = PAIRS[pi][1], so = bshape(&sa, &sb);
            if (dt != FRT_FLOAT32 && nel(&so) > 5000) continue; /* big case: float32 only */
            int64_t na = nel(&sa), nb = nel(&sb), no = nel(&so);
            void *a = rand_data(dt, na, (unsigned)(pi * 31 + di)), *b = rand_data(dt, nb, (unsigned)(pi * 17 + di + 5));
            for (int op = 0; op < 5; op++) {
                if (dt == FRT_BOOL && op) continue;
                for (int v = 0; v < 4; v++) {
                    frt_value in[2] = {frt_test_value(dt, sa.r, sa.d, a),
                                       frt_test_value(dt, sb.r, sb.d, b)},
                              out;
                    const char *kn = "";
                    frt_status st = run(CMP_OPS[op], 13, in, 2, NULL, 0, v & 1, v >> 1, &out, &kn);
                    CHECK_MSG(st == FRT_OK, "%s %s pair %zu: %s", CMP_OPS[op], frt_dtype_name(dt),
                              pi, frt_last_error());
                    if (st) continue;
                    CHECK(out.dtype == FRT_BOOL && out.rank == so.r);
                    const uint8_t *o = out.data;
                    int bad = 0;
                    for (int64_t i = 0; i < no && !bad; i++) {
                        double x = frt_ld_f64(dt, a, bidx(&so, &sa, i));
                        double y = frt_ld_f64(dt, b, bidx(&so, &sb, i));
                        if (o[i] != ref_cmp(op, x, y)) {
                            bad = 1;
                            CHECK_MSG(0, "%s %s pair %zu (%s): element %lld is %d (%g vs %g)",
                                      CMP_OPS[op], frt_dtype_name(dt), pi, kn, (long long)i, o[i],
                                      x, y);
                        }
                    }
                    free(out.data);
                }
            }
            free(a);
            free(b);
        }
    }
}

/* The host tier's float32 loops give the same bytes as the portable ones, for every stride
 * pattern and every length around the vector widths. */
static void test_f32_loops(void) {
    const frt_logic_variant *p = frt_logic_variant_get(FRT_ISA_PORTABLE);
    const frt_logic_variant *h = frt_logic_variant_get(frt_cpu_tier());
    CHECK(p->isa == FRT_ISA_PORTABLE);
    float a[131], b[131];
    uint8_t c[131];
    for (int i = 0; i < 131; i++) {
        a[i] = (float)((i * 7) % 5) - 2.0f;
        b[i] = (float)((i * 3) % 5) - 2.0f;
        c[i] = (uint8_t)((i * 5) % 3); /* 0, 1, 2: any nonzero byte is true */
    }
    a[5] = NAN, b[9] = NAN, a[40] = INFINITY, b[41] = -INFINITY, a[77] = -0.0f, b[77] = 0.0f;
    for (size_t n = 0; n <= 131; n += (n < 40 ? 1 : 13)) {
        for (int s = 0; s < 4; s++) {
            size_t sa = s & 1, sb = s >> 1;
            for (int op = 0; op < FRT_CMP_N; op++) {
                uint8_t r1[131], r2[131];
                p->cmp_f32[op](a, b, r1, n, sa, sb);
                h->cmp_f32[op](a, b, r2, n, sa, sb);
                CHECK_MSG(memcmp(r1, r2, n) == 0, "cmp %d n=%zu strides %zu,%zu (%s)", op, n, sa,
                          sb, h->suffix);
            }
            for (int sc = 0; sc < 2; sc++) {
                float w1[131], w2[131];
                p->where32(c, a, b, w1, n, (size_t)sc, sa, sb);
                h->where32(c, a, b, w2, n, (size_t)sc, sa, sb);
                CHECK_MSG(memcmp(w1, w2, n * 4) == 0, "where n=%zu strides %d,%zu,%zu (%s)", n,
                          sc, sa, sb, h->suffix);
                for (size_t i = 0; i < n; i++) {
                    const float *src = c[i * (size_t)sc] ? &a[i * sa] : &b[i * sb];
                    if (memcmp(&w1[i], src, 4) != 0) {
                        CHECK_MSG(0, "where ref n=%zu i=%zu", n, i);
                        break;
                    }
                }
            }
        }
    }
}

static void test_logical(void) {
    static const char *const ops[] = {"And", "Or", "Xor"};
    for (size_t pi = 0; pi < NPAIRS; pi++) {
        shp sa = PAIRS[pi][0], sb = PAIRS[pi][1], so = bshape(&sa, &sb);
        int64_t na = nel(&sa), nb = nel(&sb), no = nel(&so);
        uint8_t *a = rand_data(FRT_BOOL, na, (unsigned)pi), *b = rand_data(FRT_BOOL, nb, (unsigned)pi + 9);
        for (int op = 0; op < 3; op++) {
            for (int64_t opset = 1; opset <= 7; opset += 6) {
                frt_value in[2] = {frt_test_value(FRT_BOOL, sa.r, sa.d, a),
                                   frt_test_value(FRT_BOOL, sb.r, sb.d, b)},
                          out;
                frt_status st = run(ops[op], opset, in, 2, NULL, 0, 0, (int)pi & 1, &out, NULL);
                CHECK_MSG(st == FRT_OK, "%s: %s", ops[op], frt_last_error());
                if (st) continue;
                const uint8_t *o = out.data;
                int bad = 0;
                for (int64_t i = 0; i < no && !bad; i++) {
                    int x = a[bidx(&so, &sa, i)], y = b[bidx(&so, &sb, i)];
                    int want = op == 0 ? x && y : op == 1 ? x || y : x != y;
                    if (o[i] != want) bad = 1;
                }
                CHECK_MSG(!bad, "%s pair %zu", ops[op], pi);
                free(out.data);
            }
        }
        free(a);
        free(b);
    }
    /* Not */
    int64_t n = 37;
    uint8_t x[37];
    for (int i = 0; i < 37; i++) x[i] = (uint8_t)(i % 3 == 0);
    frt_value in = frt_test_value(FRT_BOOL, 1, &n, x), out;
    CHECK_OK(run("Not", 1, &in, 1, NULL, 0, 0, 0, &out, NULL));
    int bad = 0;
    for (int i = 0; i < 37 && out.data; i++) bad |= ((uint8_t *)out.data)[i] != !x[i];
    CHECK(!bad);
    free(out.data);
}

static void test_isnan_isinf(void) {
    static const int32_t dts[] = {FRT_FLOAT32, FRT_FLOAT64, FRT_FLOAT16, FRT_BFLOAT16};
    for (size_t di = 0; di < 4; di++) {
        int32_t dt = dts[di];
        int64_t n = 41;
        void *x = rand_data(dt, n, (unsigned)di + 3);
        for (int op = 0; op < 4; op++) {
            frt_onnx_attr at[2] = {frt_test_attr_int("detect_positive", op == 2 ? 0 : 1),
                                   frt_test_attr_int("detect_negative", op == 3 ? 0 : 1)};
            frt_value in = frt_test_value(dt, 1, &n, x), out;
            frt_status st = run(op ? "IsInf" : "IsNaN", 13, &in, 1, at, op ? 2 : 0, 0, 0, &out,
                                NULL);
            CHECK_MSG(st == FRT_OK, "%s", frt_last_error());
            if (st) continue;
            int bad = 0;
            for (int64_t i = 0; i < n; i++) {
                double v = frt_ld_f64(dt, x, i);
                int want = op == 0 ? isnan(v)
                                   : (op != 2 && v == INFINITY) || (op != 3 && v == -INFINITY);
                bad |= ((uint8_t *)out.data)[i] != want;
            }
            CHECK_MSG(!bad, "%s %s op %d", op ? "IsInf" : "IsNaN", frt_dtype_name(dt), op);
            free(out.data);
        }
        free(x);
    }
}

static void test_where(void) {
    static const shp TRIPLES[][3] = {
        {{2, {5, 7}}, {2, {5, 7}}, {2, {5, 7}}},
        {{2, {4, 1}}, {3, {3, 1, 9}}, {1, {1}}},
        {{1, {1}}, {2, {2, 33}}, {1, {33}}},
        {{3, {2, 1, 37}}, {2, {3, 1}}, {3, {1, 3, 37}}},
        {{1, {70001}}, {1, {70001}}, {1, {1}}},
        {{1, {1}}, {1, {1}}, {1, {1}}},
    };
    static const int32_t dts[] = {FRT_FLOAT32, FRT_INT64, FRT_UINT8, FRT_FLOAT16, FRT_BOOL,
                                  FRT_INT32};
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
        int32_t dt = dts[di];
        size_t es = frt_dtype_size((frt_dtype)dt);
        for (size_t ti = 0; ti < sizeof TRIPLES / sizeof TRIPLES[0]; ti++) {
            shp sc = TRIPLES[ti][0], sx = TRIPLES[ti][1], sy = TRIPLES[ti][2];
            shp t = bshape(&sx, &sy), so = bshape(&sc, &t);
            if (dt != FRT_FLOAT32 && nel(&so) > 5000) continue;
            uint8_t *c = rand_data(FRT_BOOL, nel(&sc), (unsigned)ti);
            void *x = rand_data(dt, nel(&sx), (unsigned)ti + 1), *y = rand_data(dt, nel(&sy), (unsigned)ti + 2);
            for (int v = 0; v < 4; v++) {
                frt_value in[3] = {frt_test_value(FRT_BOOL, sc.r, sc.d, c),
                                   frt_test_value(dt, sx.r, sx.d, x),
                                   frt_test_value(dt, sy.r, sy.d, y)},
                          out;
                const char *kn = "";
                frt_status st = run("Where", 16, in, 3, NULL, 0, v & 1, v >> 1, &out, &kn);
                CHECK_MSG(st == FRT_OK, "Where: %s", frt_last_error());
                if (st) continue;
                CHECK(out.dtype == dt && out.rank == so.r);
                int bad = 0;
                for (int64_t i = 0; i < nel(&so) && !bad; i++) {
                    const char *src = c[bidx(&so, &sc, i)]
                                          ? (const char *)x + bidx(&so, &sx, i) * (int64_t)es
                                          : (const char *)y + bidx(&so, &sy, i) * (int64_t)es;
                    if (memcmp((const char *)out.data + i * (int64_t)es, src, es) != 0) bad = 1;
                }
                CHECK_MSG(!bad, "Where %s triple %zu (%s)", frt_dtype_name(dt), ti, kn);
                free(out.data);
            }
            free(c);
            free(x);
            free(y);
        }
    }
}

static void test_errors(void) {
    int64_t d3[1] = {3}, d4[1] = {4};
    float f[4] = {0};
    uint8_t b[4] = {0};
    int64_t i[4] = {0};
    frt_value out;
    struct {
        const char *op;
        int32_t dt0, dt1;
        const int64_t *s0, *s1;
        const char *msg;
    } cases[] = {
        {"Less", FRT_BOOL, FRT_BOOL, d3, d3, "bool"},
        {"And", FRT_FLOAT32, FRT_FLOAT32, d3, d3, "float32"},
        {"Equal", FRT_FLOAT32, FRT_INT64, d3, d3, "different dtypes"},
        {"Greater", FRT_FLOAT32, FRT_FLOAT32, d3, d4, "broadcast"},
        {"Equal", FRT_STRING, FRT_STRING, d3, d3, "dtype string"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        void *p0 = cases[k].dt0 == FRT_BOOL ? (void *)b : cases[k].dt0 == FRT_INT64 ? (void *)i : f;
        void *p1 = cases[k].dt1 == FRT_BOOL ? (void *)b : cases[k].dt1 == FRT_INT64 ? (void *)i : f;
        frt_value in[2] = {frt_test_value(cases[k].dt0, 1, cases[k].s0, p0),
                           frt_test_value(cases[k].dt1, 1, cases[k].s1, p1)};
        frt_status st = run(cases[k].op, 13, in, 2, NULL, 0, 0, 0, &out, NULL);
        CHECK_MSG(st != FRT_OK && err_has(cases[k].msg), "case %zu: %s", k, frt_last_error());
    }
    /* Where: condition not bool, X/Y dtypes differ, shapes that do not broadcast */
    frt_value w1[3] = {frt_test_value(FRT_FLOAT32, 1, d3, f), frt_test_value(FRT_FLOAT32, 1, d3, f),
                       frt_test_value(FRT_FLOAT32, 1, d3, f)};
    CHECK(run("Where", 16, w1, 3, NULL, 0, 0, 0, &out, NULL) != FRT_OK && err_has("bool"));
    frt_value w2[3] = {frt_test_value(FRT_BOOL, 1, d3, b), frt_test_value(FRT_FLOAT32, 1, d3, f),
                       frt_test_value(FRT_INT64, 1, d3, i)};
    CHECK(run("Where", 16, w2, 3, NULL, 0, 0, 0, &out, NULL) != FRT_OK && err_has("dtypes"));
    frt_value w3[3] = {frt_test_value(FRT_BOOL, 1, d4, b), frt_test_value(FRT_FLOAT32, 1, d3, f),
                       frt_test_value(FRT_FLOAT32, 1, d3, f)};
    CHECK(run("Where", 16, w3, 3, NULL, 0, 0, 0, &out, NULL) != FRT_OK && err_has("broadcast"));
    /* unary dtype checks; opset-1 legacy broadcasting with an axis */
    frt_value u = frt_test_value(FRT_INT64, 1, d3, i);
    CHECK(run("IsNaN", 13, &u, 1, NULL, 0, 0, 0, &out, NULL) == FRT_ERR_UNSUPPORTED);
    CHECK(run("Not", 1, &u, 1, NULL, 0, 0, 0, &out, NULL) == FRT_ERR_UNSUPPORTED);
    frt_onnx_attr legacy[2] = {frt_test_attr_int("broadcast", 1), frt_test_attr_int("axis", 0)};
    frt_value l[2] = {frt_test_value(FRT_BOOL, 1, d3, b), frt_test_value(FRT_BOOL, 1, d3, b)};
    CHECK(run("And", 1, l, 2, legacy, 2, 0, 0, &out, NULL) == FRT_ERR_UNSUPPORTED &&
          err_has("legacy"));
}

int main(void) {
    test_compare();
    test_f32_loops();
    test_logical();
    test_isnan_isinf();
    test_where();
    test_errors();
    TEST_MAIN_END();
}
