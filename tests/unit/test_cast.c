/* Cast through infer -> select -> kernel: every pair of float32, float64, float16, bfloat16,
 * int8..int64, uint8..uint64 and bool against a naive reference (truncation toward zero,
 * wrap-around, saturation, NaN/inf, bool, bfloat16 round to nearest even), CastLike, float16
 * rounding against an independent search-based reference over a sweep of
 * float bit patterns, F16C vs portable bit-equality, odd sizes, threads, views and errors. */
#include <float.h>
#include <stdint.h>

#include "op_harness.h"
#include "ops/x86/simd_elementwise.h"
#include "test_util.h"

#define NT 13
static const int DT[NT] = {FRT_FLOAT32, FRT_FLOAT64, FRT_INT64,  FRT_INT32,  FRT_INT8,
                           FRT_UINT8,   FRT_BOOL,    FRT_FLOAT16, FRT_BFLOAT16, FRT_INT16,
                           FRT_UINT16,  FRT_UINT32,  FRT_UINT64};
static int is_float(int dt) {
    return dt == FRT_FLOAT32 || dt == FRT_FLOAT64 || dt == FRT_FLOAT16 || dt == FRT_BFLOAT16;
}

/* ---- independent bfloat16 reference: nearest of the two neighbours, ties to even ---- */
static double bf_value(uint32_t hi16) { /* 0x7f80 (inf) reads as 2^128 for rounding purposes */
    if ((hi16 & 0x7fff) == 0x7f80) return (hi16 & 0x8000) ? -0x1p128 : 0x1p128;
    uint32_t b = hi16 << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
}
static uint16_t ref_f2bf(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    if (isnan(f)) return (uint16_t)((b >> 16) | 0x40);
    if (isinf(f)) return (uint16_t)(b >> 16);
    uint32_t lo = b >> 16, hi = lo + 1; /* same sign: |value(lo)| <= |f| < |value(hi)| */
    double a = fabs((double)f), dl = a - fabs(bf_value(lo)), dh = fabs(bf_value(hi)) - a;
    return (uint16_t)(dl < dh ? lo : dh < dl ? hi : (lo & 1 ? hi : lo));
}
static double ref_bf2d(uint16_t h) {
    uint32_t b = (uint32_t)h << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

/* ---- independent float16 reference ---- */
static double half_value(uint16_t h) { /* 0x7c00 (inf) reads as 65536 for rounding purposes */
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
    return s ? -v : v;
}
static uint16_t ref_f2h(float f) {
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    if (isnan(f)) return sign | 0x7e00;
    double a = fabs((double)f);
    if (a >= 65520.0) return sign | 0x7c00;
    unsigned lo = 0, hi = 0x7c00; /* half_value(lo) <= a < half_value(hi) */
    while (hi - lo > 1) {
        unsigned mid = (lo + hi) / 2;
        if (half_value((uint16_t)mid) <= a) lo = mid;
        else hi = mid;
    }
    double dl = a - half_value((uint16_t)lo), dh = half_value((uint16_t)hi) - a;
    unsigned r = dl < dh ? lo : dh < dl ? hi : (lo & 1 ? hi : lo);
    return (uint16_t)(sign | r);
}
static double ref_h2d(uint16_t h) {
    if (((h >> 10) & 31) == 31) return (h & 1023) ? NAN : (h >> 15 ? -INFINITY : INFINITY);
    return half_value(h);
}

/* ---- reference conversion: element of type sdt at p -> element of type ddt at q ---- */
static int64_t ref_trunc(double d) {
    if (isnan(d)) return 0;
    if (d >= 9223372036854775808.0) return INT64_MAX;
    if (d < -9223372036854775808.0) return INT64_MIN;
    return (int64_t)trunc(d);
}
static void ref_cast(int sdt, const void *p, int ddt, void *q) {
    double d = 0;
    int64_t i = 0;
    uint64_t uu = 0;
    int fl = is_float(sdt), big = sdt == FRT_UINT64;
    switch (sdt) {
    case FRT_FLOAT32: d = *(const float *)p; break;
    case FRT_FLOAT64: d = *(const double *)p; break;
    case FRT_FLOAT16: d = ref_h2d(*(const uint16_t *)p); break;
    case FRT_BFLOAT16: d = ref_bf2d(*(const uint16_t *)p); break;
    case FRT_INT64: i = *(const int64_t *)p; break;
    case FRT_INT32: i = *(const int32_t *)p; break;
    case FRT_INT16: i = *(const int16_t *)p; break;
    case FRT_INT8: i = *(const int8_t *)p; break;
    case FRT_UINT8: i = *(const uint8_t *)p; break;
    case FRT_UINT16: i = *(const uint16_t *)p; break;
    case FRT_UINT32: i = *(const uint32_t *)p; break;
    case FRT_UINT64: uu = *(const uint64_t *)p; i = (int64_t)uu; break;
    case FRT_BOOL: i = *(const uint8_t *)p != 0; break;
    }
    int64_t iv = fl ? ref_trunc(d) : i;
    uint64_t u = (uint64_t)iv;
    uint64_t u64 = u; /* to uint64 only: [2^63, 2^64) exact, beyond saturated */
    if (fl && d >= 18446744073709551616.0) u64 = UINT64_MAX;
    else if (fl && d >= 9223372036854775808.0) u64 = (uint64_t)d;
    /* the value as float / double, rounded once from the source */
    float asf = fl ? (float)d : big ? (float)uu : (float)i;
    double asd = fl ? d : big ? (double)uu : (double)i;
    switch (ddt) {
    case FRT_FLOAT32: *(float *)q = asf; break;
    case FRT_FLOAT64: *(double *)q = asd; break;
    case FRT_FLOAT16: *(uint16_t *)q = ref_f2h(asf); break;
    case FRT_BFLOAT16: *(uint16_t *)q = ref_f2bf(asf); break;
    case FRT_INT64: *(int64_t *)q = iv; break;
    case FRT_INT32: *(int32_t *)q = (int32_t)(uint32_t)u; break;
    case FRT_INT16: *(int16_t *)q = (int16_t)(uint16_t)u; break;
    case FRT_INT8: *(int8_t *)q = (int8_t)(uint8_t)u; break;
    case FRT_UINT8: *(uint8_t *)q = (uint8_t)u; break;
    case FRT_UINT16: *(uint16_t *)q = (uint16_t)u; break;
    case FRT_UINT32: *(uint32_t *)q = (uint32_t)u; break;
    case FRT_UINT64: *(uint64_t *)q = u64; break;
    case FRT_BOOL: *(uint8_t *)q = fl ? d != 0 : i != 0; break;
    }
}

static int eq_elem(int dt, const void *a, const void *b) {
    size_t es = frt_dtype_size(dt);
    if (dt == FRT_FLOAT32 && isnan(*(const float *)a)) return isnan(*(const float *)b);
    if (dt == FRT_FLOAT64 && isnan(*(const double *)a)) return isnan(*(const double *)b);
    if (dt == FRT_FLOAT16 && (*(const uint16_t *)a & 0x7fff) > 0x7c00)
        return (*(const uint16_t *)b & 0x7fff) > 0x7c00;
    if (dt == FRT_BFLOAT16 && (*(const uint16_t *)a & 0x7fff) > 0x7f80)
        return (*(const uint16_t *)b & 0x7fff) > 0x7f80;
    if (dt == FRT_BOOL) /* bool -> bool is a view: non-canonical bytes pass through */
        return (*(const uint8_t *)a != 0) == (*(const uint8_t *)b != 0);
    return memcmp(a, b, es) == 0;
}

static frt_status run_cast(int sdt, void *data, int rank, const int64_t *dims, int64_t to,
                           int unknown, int threads, int portable, frt_value *out,
                           const char **kn) {
    frt_value in = frt_test_value(sdt, rank, dims, data);
    frt_onnx_attr at = frt_test_attr_int("to", to);
    frt_test_op t = {.op_type = "Cast", .opset = 13, .attrs = &at, .n_attrs = 1, .inputs = &in,
                     .n_in = 1, .n_out = 1, .unknown_dims = unknown, .n_threads = threads};
    if (portable) t.isa = FRT_TEST_ISA(FRT_ISA_PORTABLE);
    return frt_test_run_op(&t, out, kn);
}

static const double FSEED[] = {0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.7, -2.7, 127.9, 128.0, -128.9,
                               -129.0, 255.5, 256.0, 300.0, 65504.0, 65519.0, 65520.0, 1e10,
                               -1e10, 3e9, -3e9, 1e30, -1e30, 9.3e18, -9.3e18, 1e-8, 6e-8,
                               1e-40, 3.4e38, 1e300, NAN, INFINITY, -INFINITY, 0.1, 1.0 / 3};
static const int64_t ISEED[] = {0, 1, -1, 2, 127, 128, 255, 256, -128, -129, 65535, 65536,
                                2147483647, 2147483648LL, -2147483649LL, (1LL << 53) + 1,
                                (1LL << 32) + 5, INT64_MAX, INT64_MIN, 16777217, -300};

/* Builds n source elements of dtype sdt from the seeds (converted with the reference). */
static void *make_source(int sdt, int64_t n) {
    size_t es = frt_dtype_size(sdt);
    unsigned char *p = malloc((size_t)n * es + 8);
    unsigned seed = 77;
    const size_t nf = sizeof FSEED / sizeof FSEED[0], ni = sizeof ISEED / sizeof ISEED[0];
    for (int64_t k = 0; k < n; k++) {
        size_t j = (size_t)k;
        if (is_float(sdt)) {
            double d = j < nf ? FSEED[j] : t_rand(&seed) * 1000.0;
            ref_cast(FRT_FLOAT64, &d, sdt, p + (size_t)k * es);
        } else if (sdt == FRT_BOOL) {
            p[k] = (uint8_t)(j % 3); /* includes a non-canonical 2 */
        } else {
            int64_t v = j < ni ? ISEED[j] : (int64_t)(t_rand(&seed) * 100000.0f);
            ref_cast(FRT_INT64, &v, sdt, p + (size_t)k * es);
        }
    }
    return p;
}

static void test_all_pairs(void) {
    const int64_t sizes[] = {1, 7, 37, 1001, 70001};
    for (int si = 0; si < NT; si++)
        for (int di = 0; di < NT; di++)
            for (size_t zi = 0; zi < sizeof sizes / sizeof sizes[0]; zi++) {
                int sdt = DT[si], ddt = DT[di];
                int64_t n = sizes[zi];
                size_t ses = frt_dtype_size(sdt), des = frt_dtype_size(ddt);
                unsigned char *src = make_source(sdt, n), *ref = malloc((size_t)n * des);
                for (int64_t k = 0; k < n; k++)
                    ref_cast(sdt, src + (size_t)k * ses, ddt, ref + (size_t)k * des);
                for (int v = 0; v < 4; v++) {
                    frt_value out;
                    const char *kn = "";
                    frt_status st = run_cast(sdt, src, 1, &n, ddt, v & 1, 2, v >> 1, &out, &kn);
                    CHECK_MSG(st == FRT_OK, "cast %s->%s: %s", frt_dtype_name(sdt),
                              frt_dtype_name(ddt), frt_last_error());
                    if (st) continue;
                    CHECK(out.dtype == ddt && out.numel == n);
                    int64_t bad = -1;
                    for (int64_t k = 0; k < n && bad < 0; k++)
                        if (!eq_elem(ddt, ref + (size_t)k * des, (unsigned char *)out.data + (size_t)k * des))
                            bad = k;
                    CHECK_MSG(bad < 0, "cast %s->%s n=%lld kernel %s: element %lld differs",
                              frt_dtype_name(sdt), frt_dtype_name(ddt), (long long)n, kn,
                              (long long)bad);
                    if (si == di) CHECK(strcmp(kn, "cast_view") == 0);
                    free(out.data);
                }
                free(src);
                free(ref);
            }
}

static void test_specific(void) {
    /* hand-checked values */
    float f[8] = {2.7f, -2.7f, NAN, 1e30f, -1e30f, 300.0f, -1.0f, 0.0f};
    int64_t n = 8;
    frt_value out;
    CHECK_OK(run_cast(FRT_FLOAT32, f, 1, &n, FRT_INT64, 0, 1, 0, &out, NULL));
    if (out.data) {
        int64_t *y = out.data;
        CHECK(y[0] == 2 && y[1] == -2 && y[2] == 0 && y[3] == INT64_MAX && y[4] == INT64_MIN);
        free(y);
    }
    CHECK_OK(run_cast(FRT_FLOAT32, f, 1, &n, FRT_UINT8, 0, 1, 0, &out, NULL));
    if (out.data) {
        uint8_t *y = out.data;
        CHECK(y[0] == 2 && y[1] == 254 && y[5] == 44 && y[6] == 255);
        free(y);
    }
    CHECK_OK(run_cast(FRT_FLOAT32, f, 1, &n, FRT_BOOL, 0, 1, 0, &out, NULL));
    if (out.data) {
        uint8_t *y = out.data, want[8] = {1, 1, 1, 1, 1, 1, 1, 0};
        CHECK(memcmp(y, want, 8) == 0);
        free(y);
    }
    int64_t big[2] = {(1LL << 32) + 5, (1LL << 53) + 1};
    n = 2;
    CHECK_OK(run_cast(FRT_INT64, big, 1, &n, FRT_INT32, 0, 1, 0, &out, NULL));
    if (out.data) {
        CHECK(((int32_t *)out.data)[0] == 5);
        free(out.data);
    }
    CHECK_OK(run_cast(FRT_INT64, big, 1, &n, FRT_FLOAT32, 0, 1, 0, &out, NULL));
    if (out.data) {
        CHECK(((float *)out.data)[1] == 9007199254740992.0f);
        free(out.data);
    }
    /* scalars (rank 0) and empty tensors */
    double one = 1.5;
    CHECK_OK(run_cast(FRT_FLOAT64, &one, 0, NULL, FRT_INT32, 0, 1, 0, &out, NULL));
    if (out.data) {
        CHECK(out.rank == 0 && ((int32_t *)out.data)[0] == 1);
        free(out.data);
    }
    int64_t dz[2] = {0, 3};
    CHECK_OK(run_cast(FRT_FLOAT32, f, 2, dz, FRT_FLOAT16, 0, 1, 0, &out, NULL));
    CHECK(out.numel == 0);
    free(out.data);
    /* shape is kept */
    int64_t d3[3] = {2, 1, 4};
    CHECK_OK(run_cast(FRT_FLOAT32, f, 3, d3, FRT_FLOAT64, 1, 1, 0, &out, NULL));
    CHECK(out.rank == 3 && out.dims[0] == 2 && out.dims[1] == 1 && out.dims[2] == 4);
    free(out.data);
}

/* float16 rounding: portable and F16C against the search reference, and against each other. */
static void test_f16(void) {
    /* every half -> float */
    int64_t nh = 65536;
    uint16_t *h = malloc((size_t)nh * 2);
    for (int64_t i = 0; i < nh; i++) h[i] = (uint16_t)i;
    float *hf[2] = {NULL, NULL};
    for (int p = 0; p < 2; p++) {
        frt_value out;
        const char *kn = "";
        CHECK_OK(run_cast(FRT_FLOAT16, h, 1, &nh, FRT_FLOAT32, 0, 2, p, &out, &kn));
        hf[p] = out.data;
        if (!out.data) continue;
        int ok = 1;
        for (int64_t i = 0; i < nh; i++) {
            double r = ref_h2d((uint16_t)i);
            float y = hf[p][i];
            if (isnan(r) ? !isnan(y) : (double)y != r || !signbit(y) != !signbit(r)) ok = 0;
        }
        CHECK_MSG(ok, "f16->f32 (%s)", kn);
    }
    if (hf[0] && hf[1]) CHECK(memcmp(hf[0], hf[1], (size_t)nh * 4) == 0); /* NaN payloads too */
    free(hf[0]);
    free(hf[1]);

    /* float -> half over float bit patterns: a stride through all of them, plus every half's
     * value, its float neighbours, and the exact midpoints between adjacent halves */
    int64_t cap = (int64_t)((1ULL << 32) / 997) + 6 * 65536 + 16, n = 0;
    float *x = malloc((size_t)cap * 4);
    for (uint64_t b = 0; b < (1ULL << 32); b += 997) {
        uint32_t u = (uint32_t)b;
        memcpy(&x[n++], &u, 4);
    }
    for (int64_t i = 0; i < 0x7c00; i++) {
        float v = (float)half_value((uint16_t)i);
        float mid = (float)((half_value((uint16_t)i) + half_value((uint16_t)(i + 1))) / 2);
        x[n++] = v;
        x[n++] = -v;
        x[n++] = mid;
        x[n++] = -mid;
        x[n++] = nextafterf(mid, INFINITY);
        x[n++] = nextafterf(mid, 0.0f);
    }
    uint16_t *fh[2] = {NULL, NULL};
    for (int p = 0; p < 2; p++) {
        frt_value out;
        const char *kn = "";
        CHECK_OK(run_cast(FRT_FLOAT32, x, 1, &n, FRT_FLOAT16, 0, 2, p, &out, &kn));
        fh[p] = out.data;
        if (!out.data) continue;
        int64_t bad = -1;
        for (int64_t i = 0; i < n && bad < 0; i++) {
            uint16_t r = ref_f2h(x[i]), y = fh[p][i];
            if (isnan(x[i]) ? (y & 0x7fff) <= 0x7c00 || (y & 0x8000) != (r & 0x8000) : y != r)
                bad = i;
        }
        CHECK_MSG(bad < 0, "f32->f16 (%s) at %g: got %04x want %04x", kn,
                  bad < 0 ? 0.0 : (double)x[bad], bad < 0 ? 0 : fh[p][bad],
                  bad < 0 ? 0 : ref_f2h(x[bad]));
    }
    if (fh[0] && fh[1]) CHECK(memcmp(fh[0], fh[1], (size_t)n * 2) == 0);
    free(fh[0]);
    free(fh[1]);
    free(x);
    free(h);
    {   /* without a cap, select takes the conversion loops of the tier this process runs */
        frt_value out;
        const char *kn = "";
        float one = 1;
        int64_t n1 = 1;
        CHECK_OK(run_cast(FRT_FLOAT32, &one, 1, &n1, FRT_FLOAT16, 0, 1, 0, &out, &kn));
        char want[64];
        snprintf(want, sizeof want, "cast_f32_to_f16%s",
                 frt_f16_variant_get(frt_cpu_tier())->suffix);
        CHECK_MSG(strcmp(kn, want) == 0, "%s, expected %s", kn, want);
        CHECK(out.data && ((uint16_t *)out.data)[0] == 0x3c00);
        free(out.data);
    }
}

static void test_errors_and_flags(void) {
    float f[2] = {0};
    int64_t n = 2;
    frt_value in = frt_test_value(FRT_FLOAT32, 1, &n, f), out;
    frt_test_op t = {.op_type = "Cast", .inputs = &in, .n_in = 1, .n_out = 1};
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_MALFORMED); /* no 'to' */
    CHECK(strstr(frt_last_error(), "'to'") != NULL);
    frt_onnx_attr at = frt_test_attr_float("to", 1.0f);
    t.attrs = &at;
    t.n_attrs = 1;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_MALFORMED); /* wrong attribute type */
    at = frt_test_attr_int("to", FRT_STRING);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED);
    at = frt_test_attr_int("to", 1000);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED);
    at = frt_test_attr_int("to", -3);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED);
    CHECK(strstr(frt_last_error(), "unsupported") != NULL);
    at = frt_test_attr_int("to", FRT_STRING);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED);
    CHECK(strstr(frt_last_error(), "unsupported: cast to dtype string") != NULL);
    uint16_t u16[2] = {0};
    frt_value ins = frt_test_value(FRT_STRING, 1, &n, u16);
    at = frt_test_attr_int("to", FRT_FLOAT32);
    t.inputs = &ins;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED);
    CHECK(strstr(frt_last_error(), "dtype string") != NULL);

    /* CastLike: the target dtype is the second input's (its data unused) */
    {
        float fx[3] = {1.5f, -2.5f, 1e30f};
        int64_t n3 = 3, n1 = 1;
        frt_value cl[2] = {frt_test_value(FRT_FLOAT32, 1, &n3, fx),
                           frt_test_value(FRT_BFLOAT16, 1, &n1, u16)};
        frt_test_op tl = {.op_type = "CastLike", .opset = 15, .inputs = cl, .n_in = 2,
                          .n_out = 1};
        CHECK_OK(frt_test_run_op(&tl, &out, NULL));
        CHECK(out.dtype == FRT_BFLOAT16 && out.numel == 3);
        if (out.data) {
            const uint16_t *y = out.data;
            CHECK(y[0] == 0x3fc0 && y[1] == 0xc020 && y[2] == ref_f2bf(1e30f));
        }
        free(out.data);
        cl[1] = frt_test_value(FRT_INT8, 1, &n1, u16);
        CHECK_OK(frt_test_run_op(&tl, &out, NULL));
        CHECK(out.dtype == FRT_INT8 && out.data && ((int8_t *)out.data)[1] == -2);
        free(out.data);
        tl.n_in = 1;
        CHECK(frt_test_run_op(&tl, &out, NULL) != FRT_OK);
        cl[1] = frt_test_value(FRT_STRING, 1, &n1, u16);
        tl.n_in = 2;
        CHECK(frt_test_run_op(&tl, &out, NULL) == FRT_ERR_UNSUPPORTED);
    }

    /* flags: in place only between equal element sizes; same dtype is a view */
    const frt_op_def *def = frt_op_find("", "Cast");
    int pairs[3][3] = {{FRT_FLOAT32, FRT_INT32, FRT_K_INPLACE},
                       {FRT_FLOAT32, FRT_INT64, 0},
                       {FRT_INT64, FRT_INT64, FRT_K_VIEW}};
    for (int i = 0; i < 3; i++) {
        int32_t ids_in[1] = {0}, ids_out[1] = {1};
        frt_onnx_attr a = frt_test_attr_int("to", pairs[i][1]);
        frt_node node = {.name = "n", .op_type = "Cast", .domain = "", .n_in = 1, .n_out = 1,
                         .in = ids_in, .out = ids_out, .opset = 13, .attrs = &a, .n_attrs = 1};
        frt_value v = frt_test_value(pairs[i][0], 1, &n, NULL), o = {0};
        frt_value *ip[1] = {&v}, *op[1] = {&o};
        frt_op_ctx c = {&node, 13, 1, 1, ip, op, NULL, frt_cpu_tier()};
        CHECK_OK(def->infer(&c));
        CHECK(o.dtype == pairs[i][1]);
        frt_arena ar;
        frt_arena_init(&ar);
        c.arena = &ar;
        frt_kernel k = {0};
        CHECK_OK(def->select(&c, &k));
        CHECK(k.flags == (uint32_t)pairs[i][2]);
        frt_arena_free(&ar);
    }
    /* in place f32 -> i32 really works */
    {
        float buf[37];
        int32_t want[37];
        for (int i = 0; i < 37; i++) {
            buf[i] = (float)i * 1.7f - 30.0f;
            want[i] = (int32_t)buf[i];
        }
        int64_t d = 37;
        int32_t ids_in[1] = {0}, ids_out[1] = {0};
        frt_onnx_attr a = frt_test_attr_int("to", FRT_INT32);
        frt_node node = {.name = "n", .op_type = "Cast", .domain = "", .n_in = 1, .n_out = 1,
                         .in = ids_in, .out = ids_out, .opset = 13, .attrs = &a, .n_attrs = 1};
        frt_value v = frt_test_value(FRT_FLOAT32, 1, &d, buf), o = {0};
        frt_value *ip[1] = {&v}, *op[1] = {&o};
        frt_op_ctx c = {&node, 13, 1, 1, ip, op, NULL, frt_cpu_tier()};
        CHECK_OK(def->infer(&c));
        frt_arena ar;
        frt_arena_init(&ar);
        c.arena = &ar;
        frt_kernel k = {0};
        CHECK_OK(def->select(&c, &k));
        frt_step s = {.k = k, .in = ids_in, .out = ids_out, .n_in = 1, .n_out = 1, .ir = &node};
        frt_exec x = {.values = &v};
        CHECK_OK(k.fn(&s, &x));
        CHECK(memcmp(buf, want, sizeof want) == 0);
        frt_arena_free(&ar);
    }
}

int main(void) {
    test_all_pairs();
    test_specific();
    test_f16();
    test_errors_and_flags();
    TEST_MAIN_END();
}
