/* Resize / Upsample against a port of ONNX's reference (onnx/backend/test/case/node/resize.py:
 * per output element, nested 1-D interpolation over every dim with edge-padded neighbours), for
 * every mode, coordinate transformation and nearest mode, scales and sizes, odd shapes, resizing
 * outer dims too, tables made at select (constant scales) and per run; nearest on other dtypes;
 * bad inputs. */
#include <math.h>
#include <stdint.h>

#include "op_harness.h"
#include "ops/dtype_util.h"
#include "test_util.h"

enum { NEAREST, LINEAR, CUBIC };
static const char *const mode_names[] = {"nearest", "linear", "cubic"};
static const char *const ctm_names[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                        "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
static const char *const nm_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

typedef struct ref_cfg {
    int mode, ctm, nm;
    double a;
    bool exclude;
    double extrap;
} ref_cfg;

static int coeffs(const ref_cfg *c, double ratio, bool integer, double *w) {
    if (c->mode == NEAREST) {
        if (integer) { w[0] = 0; w[1] = 1; return 2; }
        switch (c->nm) {
        case 0: w[0] = ratio <= 0.5; w[1] = ratio > 0.5; break;
        case 1: w[0] = ratio < 0.5; w[1] = ratio >= 0.5; break;
        case 2: w[0] = 1; w[1] = 0; break;
        default: w[0] = 0; w[1] = 1; break;
        }
        return 2;
    }
    if (c->mode == LINEAR) {
        w[0] = 1 - ratio;
        w[1] = ratio;
        return 2;
    }
    double A = c->a, r = ratio;
    w[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
    w[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
    w[2] = ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1;
    w[3] = ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A;
    return 4;
}

/* interpolate_1d_with_x: data[0..len) at output index x. */
static double ref_1d(const ref_cfg *c, const double *data, int64_t len, double scale, int64_t x,
                     double r0, double r1) {
    double ow = scale * (double)len, xo;
    switch (c->ctm) {
    case 2: xo = ow == 1 ? 0 : (double)x * (double)(len - 1) / (ow - 1); break;
    case 3: xo = (double)x / scale; break;
    case 4: xo = ((double)x + 0.5) / scale; break;
    case 5:
        xo = ow == 1 ? (r1 - r0) * (double)(len - 1) / 2
                     : (double)x * (r1 - r0) * (double)(len - 1) / (ow - 1);
        xo += r0 * (double)(len - 1);
        if (xo < 0 || xo > (double)(len - 1)) return c->extrap;
        break;
    case 1: xo = ow == 1 ? 0 : ((double)x + 0.5) / scale - 0.5; break; /* the spec's 0 */
    default: xo = ((double)x + 0.5) / scale - 0.5; break;
    }
    double fl = floor(xo);
    bool integer = xo == fl;
    double ratio = integer ? 1 : xo - fl, w[4];
    int n = coeffs(c, ratio, integer, w);
    /* get_neighbor: n nearest indices of the edge-padded array, smaller first on ties */
    int64_t pad = (n + 1) / 2, plen = len + 2 * pad;
    double xp = xo + (double)pad;
    int64_t chosen[4];
    bool used[64] = {false};
    for (int k = 0; k < n; k++) {
        int64_t best = -1;
        for (int64_t i = 0; i < plen; i++) {
            if (used[i]) continue;
            if (best < 0 || fabs(xp - (double)i) < fabs(xp - (double)best)) best = i;
        }
        used[best] = true;
    }
    for (int64_t i = 0, k = 0; i < plen; i++)
        if (used[i]) chosen[k++] = i - pad;
    if (c->exclude) {
        double sum = 0;
        for (int k = 0; k < n; k++) {
            if (chosen[k] < 0 || chosen[k] >= len) w[k] = 0;
            sum += w[k];
        }
        for (int k = 0; k < n; k++) w[k] /= sum;
    }
    double acc = 0;
    for (int k = 0; k < n; k++) {
        int64_t i = chosen[k] < 0 ? 0 : chosen[k] >= len ? len - 1 : chosen[k];
        acc += w[k] * data[i];
    }
    return acc;
}

/* interpolate_nd_with_x over dims d..r-1 of data (dims dd) at output coords x. */
static double ref_nd(const ref_cfg *c, const double *data, const int64_t *dd, int r, int d,
                     const double *scale, const int64_t *x, const double *roi) {
    int64_t inner = 1;
    for (int k = d + 1; k < r; k++) inner *= dd[k];
    double col[64];
    for (int64_t i = 0; i < dd[d]; i++)
        col[i] = d == r - 1 ? data[i] : ref_nd(c, data + i * inner, dd, r, d + 1, scale, x, roi);
    return ref_1d(c, col, dd[d], scale[d], x[d], roi ? roi[d] : 0, roi ? roi[d + r] : 1);
}

typedef struct rcase {
    int r;
    int64_t xd[4];
    int use_sizes;
    double scales[4];  /* with use_sizes: the sizes */
    const double *roi; /* 2r entries or NULL */
} rcase;

static const double roi_a[8] = {0, 0, 0.4, 0.6, 1, 1, 0.6, 0.8};
static const double roi_b[8] = {0, 0, -0.2, 0.1, 1, 1, 1.3, 0.7};

static const rcase cases[] = {
    {4, {1, 2, 5, 7}, 0, {1, 1, 1.7, 0.6}, NULL},
    {4, {1, 2, 4, 3}, 0, {1, 1, 2, 3}, NULL},
    {4, {1, 1, 6, 5}, 1, {1, 1, 4, 9}, NULL},
    {4, {1, 2, 5, 7}, 1, {1, 2, 1, 3}, NULL},
    {3, {3, 4, 5}, 0, {2, 1, 0.5}, NULL},   /* outer dim resized */
    {2, {5, 1}, 1, {3, 4}, NULL},
    {4, {1, 1, 5, 6}, 1, {1, 1, 3, 4}, roi_a},
    {4, {1, 1, 5, 6}, 1, {1, 1, 7, 2}, roi_b},
    {1, {9}, 0, {0.8}, NULL},
};

/* Runs one Resize-13 configuration of case k against the reference. */
static void run_case(size_t k, const ref_cfg *cfg, int const_scales) {
    const rcase *rc = &cases[k];
    int r = rc->r;
    if (cfg->ctm == 5 && !rc->roi) return;
    if (cfg->ctm != 5 && rc->roi) return;
    int64_t xn = numel(rc->xd, r);
    float x[512];
    double xdbl[512];
    t_fill(x, (size_t)xn, 100 + (unsigned)k);
    for (int64_t i = 0; i < xn; i++) xdbl[i] = x[i];
    int64_t od[4];
    double scale[4];
    float sc[4];
    int64_t sizes[4];
    for (int d = 0; d < r; d++) {
        if (rc->use_sizes) {
            sizes[d] = (int64_t)rc->scales[d];
            od[d] = sizes[d];
            scale[d] = (double)od[d] / (double)rc->xd[d];
        } else {
            sc[d] = (float)rc->scales[d];
            scale[d] = sc[d];
            od[d] = (int64_t)floor((double)sc[d] * (double)rc->xd[d]);
        }
    }
    float roi[8] = {0};
    if (rc->roi)
        for (int i = 0; i < 2 * r; i++) roi[i] = (float)rc->roi[i];
    int64_t rl[1] = {rc->roi ? 2 * r : 0}, sl[1] = {r}, none[1] = {0};
    frt_value ins[4] = {frt_test_value(FRT_FLOAT32, r, rc->xd, x),
                        frt_test_value(FRT_FLOAT32, 1, rc->roi ? rl : none, roi),
                        frt_test_value(FRT_FLOAT32, 1, rc->use_sizes ? none : sl, sc),
                        frt_test_value(FRT_INT64, 1, sl, sizes)};
    frt_onnx_attr at[7];
    size_t na = 0;
    at[na++] = frt_test_attr_string("mode", mode_names[cfg->mode]);
    at[na++] = frt_test_attr_string("coordinate_transformation_mode", ctm_names[cfg->ctm]);
    at[na++] = frt_test_attr_string("nearest_mode", nm_names[cfg->nm]);
    at[na++] = frt_test_attr_float("cubic_coeff_a", (float)cfg->a);
    at[na++] = frt_test_attr_int("exclude_outside", cfg->exclude);
    at[na++] = frt_test_attr_float("extrapolation_value", (float)cfg->extrap);
    frt_test_op t = {0};
    t.op_type = "Resize";
    t.opset = 13;
    t.attrs = at;
    t.n_attrs = na;
    t.inputs = ins;
    t.n_in = rc->use_sizes ? 4 : 3;
    t.absent_mask = rc->roi ? 0 : 2u;
    t.const_mask = const_scales ? 0xEu : 0;
    t.n_out = 1;
    frt_value out;
    const char *kname = NULL;
    frt_status st = frt_test_run_op(&t, &out, &kname);
    CHECK_MSG(st == FRT_OK, "case %zu mode %d ctm %d: %s", k, cfg->mode, cfg->ctm,
              frt_last_error());
    if (st) return;
    bool shape_ok = out.rank == r;
    for (int d = 0; d < r && shape_ok; d++) shape_ok = out.dims[d] == od[d];
    CHECK_MSG(shape_ok, "case %zu shape", k);
    int64_t on = numel(od, r);
    float ref[4096];
    double sroi[8];
    for (int i = 0; i < 2 * r; i++) sroi[i] = roi[i];
    for (int64_t o = 0; o < on; o++) {
        int64_t c[4];
        int64_t rem = o;
        for (int d = r - 1; d >= 0; d--) {
            c[d] = rem % od[d];
            rem /= od[d];
        }
        ref[o] = (float)ref_nd(cfg, xdbl, rc->xd, r, 0, scale, c, rc->roi ? sroi : NULL);
    }
    if (shape_ok)
        CHECK_MSG(t_close(out.data, ref, (size_t)on, 1e-5f, 1e-5f),
                  "case %zu mode %s ctm %s nm %s a %g excl %d const %d kernel %s", k,
                  mode_names[cfg->mode], ctm_names[cfg->ctm], nm_names[cfg->nm], cfg->a,
                  cfg->exclude, const_scales, kname ? kname : "?");
    free(out.data);
}

static void test_modes(void) {
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int mode = 0; mode < 3; mode++)
            for (int ctm = 0; ctm < 6; ctm++)
                for (int cs = 0; cs < 2; cs++) {
                    if (mode == NEAREST) {
                        for (int nm = 0; nm < 4; nm++) {
                            ref_cfg c = {mode, ctm, nm, -0.75, false, 10.0};
                            run_case(k, &c, cs);
                        }
                    } else if (mode == CUBIC) {
                        ref_cfg c1 = {mode, ctm, 0, -0.75, false, -3.0};
                        ref_cfg c2 = {mode, ctm, 0, -0.5, true, 0.0};
                        run_case(k, &c1, cs);
                        run_case(k, &c2, cs);
                    } else {
                        ref_cfg c = {mode, ctm, 0, -0.75, false, 2.5};
                        run_case(k, &c, cs);
                    }
                }
}

/* Upsample-7 / -9 and Resize-10: asymmetric coordinates, nearest = floor. Nearest on several
 * dtypes (bytes moved as they are). */
static void test_old_opsets_and_dtypes(void) {
    static const int32_t dts[] = {FRT_FLOAT32, FRT_UINT8, FRT_INT64, FRT_FLOAT16};
    int64_t xd[4] = {1, 2, 3, 5};
    float sc[4] = {1, 1.5f, 2.5f, 0.7f};
    int64_t od[4] = {1, 3, 7, 3}, sl[1] = {4};
    double scale[4] = {1, 1.5f, 2.5f, 0.7f};
    for (int form = 0; form < 3; form++)
        for (size_t ti = 0; ti < 4; ti++)
            for (int mode = 0; mode < 2; mode++) {
                int32_t dt = dts[ti];
                if (mode == LINEAR && dt != FRT_FLOAT32) continue;
                unsigned char x[30 * 8];
                double xv[30];
                fill_bytes(x, sizeof x, 77 + (unsigned)ti);
                if (dt == FRT_FLOAT32) t_fill((float *)x, 30, 5);
                if (dt == FRT_FLOAT16)
                    for (int i = 0; i < 30; i++) ((uint16_t *)x)[i] &= 0x3bff; /* finite */
                for (int i = 0; i < 30; i++) xv[i] = frt_ld_f64(dt, x, i);
                frt_onnx_attr at[2] = {frt_test_attr_string("mode", mode_names[mode]),
                                       frt_test_attr_floats("scales", sc, 4)};
                frt_value ins[2] = {frt_test_value(dt, 4, xd, x),
                                    frt_test_value(FRT_FLOAT32, 1, sl, sc)};
                frt_test_op t = {0};
                t.op_type = form == 2 ? "Resize" : "Upsample";
                t.opset = form == 0 ? 7 : form == 1 ? 9 : 10;
                t.attrs = at;
                t.n_attrs = form == 0 ? 2 : 1;
                t.inputs = ins;
                t.n_in = form == 0 ? 1 : 2;
                t.const_mask = ti & 1 ? 2u : 0u;
                t.n_out = 1;
                frt_value out;
                CHECK_OK(frt_test_run_op(&t, &out, NULL));
                if (!out.data) continue;
                CHECK(out.rank == 4 && out.dims[1] == 3 && out.dims[2] == 7 && out.dims[3] == 3);
                ref_cfg c = {mode, 3, 2, -0.75, false, 0};
                bool ok = true;
                for (int64_t o = 0; o < 63 && ok; o++) {
                    int64_t cc[4], rem = o;
                    for (int d = 3; d >= 0; d--) {
                        cc[d] = rem % od[d];
                        rem /= od[d];
                    }
                    double want = ref_nd(&c, xv, xd, 4, 0, scale, cc, NULL);
                    double got = frt_ld_f64(dt, out.data, o);
                    ok = mode == NEAREST ? (got == want || (got != got && want != want))
                                         : fabs(got - want) <= 1e-5;
                }
                CHECK_MSG(ok, "form %d dtype %d mode %d", form, dt, mode);
                free(out.data);
            }
}

/* Opset 18 axes: only the listed dims are resized. */
static void test_axes(void) {
    int64_t xd[3] = {3, 4, 5};
    float x[60];
    t_fill(x, 60, 3);
    int64_t ax[2] = {2, 0}, sizes[2] = {7, 2}, sl[1] = {2}, none[1] = {0};
    frt_onnx_attr at[2] = {frt_test_attr_string("mode", "linear"), frt_test_attr_ints("axes", ax, 2)};
    frt_value ins[4] = {frt_test_value(FRT_FLOAT32, 3, xd, x), frt_test_value(FRT_FLOAT32, 1, none, NULL),
                        frt_test_value(FRT_FLOAT32, 1, none, NULL), frt_test_value(FRT_INT64, 1, sl, sizes)};
    frt_test_op t = {0};
    t.op_type = "Resize";
    t.opset = 18;
    t.attrs = at;
    t.n_attrs = 2;
    t.inputs = ins;
    t.n_in = 4;
    t.absent_mask = 6;
    t.const_mask = 8;
    t.n_out = 1;
    frt_value out;
    CHECK_OK(frt_test_run_op(&t, &out, NULL));
    if (!out.data) return;
    CHECK(out.rank == 3 && out.dims[0] == 2 && out.dims[1] == 4 && out.dims[2] == 7);
    double xv[60];
    for (int i = 0; i < 60; i++) xv[i] = x[i];
    double scale[3] = {2.0 / 3, 1, 7.0 / 5};
    int64_t od[3] = {2, 4, 7};
    ref_cfg c = {LINEAR, 0, 0, -0.75, false, 0};
    float ref[56];
    for (int64_t o = 0; o < 56; o++) {
        int64_t cc[3], rem = o;
        for (int d = 2; d >= 0; d--) {
            cc[d] = rem % od[d];
            rem /= od[d];
        }
        ref[o] = (float)ref_nd(&c, xv, xd, 3, 0, scale, cc, NULL);
    }
    CHECK(t_close(out.data, ref, 56, 1e-5f, 1e-5f));
    free(out.data);
}

static void test_errors(void) {
    int64_t xd[4] = {1, 1, 2, 2}, sl[1] = {4}, s3[1] = {3}, none[1] = {0};
    float x[4] = {0}, sc[4] = {1, 1, 2, 2}, neg[4] = {1, 1, -2, 2};
    int64_t sizes[4] = {1, 1, 3, 3};
    frt_onnx_attr mode = frt_test_attr_string("mode", "linear");
    frt_value ins[4] = {frt_test_value(FRT_FLOAT32, 4, xd, x), frt_test_value(FRT_FLOAT32, 1, none, NULL),
                        frt_test_value(FRT_FLOAT32, 1, sl, sc), frt_test_value(FRT_INT64, 1, sl, sizes)};
    frt_test_op t = {0};
    t.op_type = "Resize";
    t.opset = 13;
    t.attrs = &mode;
    t.n_attrs = 1;
    t.inputs = ins;
    t.n_in = 4;
    t.absent_mask = 2;
    t.const_mask = 0xC;
    t.n_out = 1;
    frt_value out;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_MALFORMED); /* scales and sizes */
    CHECK(err_has("only one"));
    t.n_in = 3;
    ins[2] = frt_test_value(FRT_FLOAT32, 1, s3, sc);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE); /* 3 scales for rank 4 */
    ins[2] = frt_test_value(FRT_FLOAT32, 1, sl, neg);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    ins[2] = frt_test_value(FRT_FLOAT32, 1, none, NULL);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_MALFORMED); /* neither */
    ins[2] = frt_test_value(FRT_FLOAT32, 1, sl, sc);
    int32_t xi[4] = {0};
    ins[0] = frt_test_value(FRT_INT32, 4, xd, xi);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED); /* linear on int32 */
    ins[0] = frt_test_value(FRT_FLOAT32, 4, xd, x);
    frt_onnx_attr bad = frt_test_attr_string("mode", "bicubic");
    t.attrs = &bad;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED);
    frt_onnx_attr ct = frt_test_attr_string("coordinate_transformation_mode", "diagonal");
    t.attrs = &ct;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED);
    frt_onnx_attr aa = frt_test_attr_int("antialias", 1);
    t.attrs = &aa;
    t.opset = 18;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED);
}

int main(void) {
    test_modes();
    test_old_opsets_and_dtypes();
    test_axes();
    test_errors();
    TEST_MAIN_END();
}
