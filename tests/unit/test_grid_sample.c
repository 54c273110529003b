/* GridSample against a double-precision reference written from the ONNX spec: every mode x
 * padding_mode x align_corners, odd sizes, grid points inside, on the edges and far outside;
 * bad shapes and attributes. */
#include <stdint.h>

#include "op_harness.h"
#include "test_util.h"

static uint32_t rng = 99;
static double drand(void) {
    rng = rng * 1664525u + 1013904223u;
    return (double)((rng >> 8) & 0xffff) / 65536.0;
}

typedef struct ref_img {
    const float *p;
    int64_t H, W;
    int pad, align;
} ref_img;

static double reflect(double v, double lo, double hi) {
    if (hi <= lo) return lo;
    while (v < lo || v > hi) v = v < lo ? 2 * lo - v : 2 * hi - v; /* mirror until inside */
    return v;
}

static double px(const ref_img *m, int64_t r, int64_t c) {
    if (m->pad == 0) return r < 0 || r >= m->H || c < 0 || c >= m->W ? 0 : m->p[r * m->W + c];
    if (m->pad == 2) {
        double lo = m->align ? 0 : -0.5;
        c = (int64_t)reflect((double)c, lo, m->align ? (double)(m->W - 1) : m->W - 0.5);
        r = (int64_t)reflect((double)r, lo, m->align ? (double)(m->H - 1) : m->H - 0.5);
    }
    r = r < 0 ? 0 : r >= m->H ? m->H - 1 : r;
    c = c < 0 ? 0 : c >= m->W ? m->W - 1 : c;
    return m->p[r * m->W + c];
}

static double cubic(double t) { /* cubic convolution kernel, A = -0.75 */
    const double A = -0.75;
    t = fabs(t);
    if (t <= 1) return ((A + 2) * t - (A + 3)) * t * t + 1;
    if (t < 2) return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
    return 0;
}

static double ref_sample(const ref_img *m, int mode, double gx, double gy) {
    double x = m->align ? (gx + 1) / 2 * (double)(m->W - 1) : ((gx + 1) * (double)m->W - 1) / 2;
    double y = m->align ? (gy + 1) / 2 * (double)(m->H - 1) : ((gy + 1) * (double)m->H - 1) / 2;
    if (mode != 2 && m->pad == 1) {
        x = fmin(fmax(x, 0), (double)(m->W - 1));
        y = fmin(fmax(y, 0), (double)(m->H - 1));
    }
    if (mode != 2 && m->pad == 2) {
        x = reflect(x, m->align ? 0 : -0.5, m->align ? (double)(m->W - 1) : m->W - 0.5);
        y = reflect(y, m->align ? 0 : -0.5, m->align ? (double)(m->H - 1) : m->H - 0.5);
    }
    if (mode == 1) return px(m, (int64_t)nearbyint(y), (int64_t)nearbyint(x));
    double fx = floor(x), fy = floor(y);
    if (mode == 0) {
        double dx = x - fx, dy = y - fy;
        int64_t c = (int64_t)fx, r = (int64_t)fy;
        return (1 - dy) * ((1 - dx) * px(m, r, c) + dx * px(m, r, c + 1)) +
               dy * ((1 - dx) * px(m, r + 1, c) + dx * px(m, r + 1, c + 1));
    }
    double acc = 0;
    for (int i = -1; i <= 2; i++)
        for (int j = -1; j <= 2; j++)
            acc += cubic(y - (fy + i)) * cubic(x - (fx + j)) * px(m, (int64_t)fy + i, (int64_t)fx + j);
    return acc;
}

static void test_random(void) {
    static const char *modes[] = {"bilinear", "nearest", "bicubic"};
    static const char *pads[] = {"zeros", "border", "reflection"};
    for (int it = 0; it < 54; it++) {
        int mode = it % 3, pad = (it / 3) % 3, align = (it / 9) % 2;
        int64_t N = 1 + it % 2, C = 1 + it % 3, H = 1 + (it * 5) % 6, W = 1 + (it * 3) % 7;
        int64_t Ho = 1 + it % 4, Wo = 1 + (it * 7) % 5;
        float *X = malloc((size_t)(N * C * H * W) * 4), *G = malloc((size_t)(N * Ho * Wo * 2) * 4);
        for (int64_t i = 0; i < N * C * H * W; i++) X[i] = (float)(drand() * 2 - 1);
        for (int64_t i = 0; i < N * Ho * Wo * 2; i++) {
            /* avoid exact .5 nearest ties (float vs double rounding of the grid) */
            G[i] = (float)(i % 11 == 0 ? (drand() * 10 - 5) : drand() * 2.4 - 1.2);
        }
        int64_t xd[4] = {N, C, H, W}, gd[4] = {N, Ho, Wo, 2};
        frt_value in[2] = {frt_test_value(FRT_FLOAT32, 4, xd, X), frt_test_value(FRT_FLOAT32, 4, gd, G)};
        frt_onnx_attr at[3] = {frt_test_attr_string("mode", modes[mode]),
                               frt_test_attr_string("padding_mode", pads[pad]),
                               frt_test_attr_int("align_corners", align)};
        frt_test_op t = {.op_type = "GridSample", .opset = 16, .attrs = at, .n_attrs = 3,
                         .inputs = in, .n_in = 2, .n_out = 1};
        frt_value out;
        frt_status st = frt_test_run_op(&t, &out, NULL);
        CHECK_MSG(st == FRT_OK, "GridSample: %s", frt_last_error());
        if (!st) {
            CHECK(out.dims[0] == N && out.dims[1] == C && out.dims[2] == Ho && out.dims[3] == Wo);
            int bad = 0;
            for (int64_t n = 0; n < N; n++)
                for (int64_t c = 0; c < C; c++) {
                    ref_img m = {X + (n * C + c) * H * W, H, W, pad, align};
                    for (int64_t i = 0; i < Ho * Wo; i++) {
                        double want = ref_sample(&m, mode, G[(n * Ho * Wo + i) * 2], G[(n * Ho * Wo + i) * 2 + 1]);
                        float got = ((float *)out.data)[(n * C + c) * Ho * Wo + i];
                        if (fabs(got - want) > 1e-4 + 1e-4 * fabs(want)) bad++;
                    }
                }
            CHECK_MSG(bad == 0, "%s/%s/align %d: %d mismatches", modes[mode], pads[pad], align, bad);
            free(out.data);
        }
        free(X);
        free(G);
    }
}

static void test_bad(void) {
    float buf[64] = {0};
    int64_t xd[4] = {1, 1, 2, 2}, gd[4] = {1, 2, 2, 3}, gd2[4] = {2, 2, 2, 2};
    frt_value in[2] = {frt_test_value(FRT_FLOAT32, 4, xd, buf), frt_test_value(FRT_FLOAT32, 4, gd, buf)};
    frt_test_op t = {.op_type = "GridSample", .opset = 16, .inputs = in, .n_in = 2, .n_out = 1};
    frt_value out;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE); /* last grid dim 3 */
    in[1] = frt_test_value(FRT_FLOAT32, 4, gd2, buf);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE); /* batch 1 vs 2 */
    int64_t ok[4] = {1, 2, 2, 2};
    in[1] = frt_test_value(FRT_FLOAT32, 4, ok, buf);
    frt_onnx_attr a = frt_test_attr_string("mode", "area");
    t.attrs = &a;
    t.n_attrs = 1;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED);
}

int main(void) {
    test_random();
    test_bad();
    TEST_MAIN_END();
}
