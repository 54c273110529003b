/* NonMaxSuppression (through a model: its output is run-time sized) and RoiAlign (through the op
 * harness) against naive references written from the ONNX spec, on random data; bad inputs. */
#include <stdint.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include "flatrt.h"
#include "onnx_build.h"
#include "ops/x86/simd_detection.h"
#include "op_harness.h"
#include "test_util.h"

static uint32_t rng = 4242;
static float frand(void) { /* [0, 1) */
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) & 0xffff) / 65536.0f;
}

/* ---- NMS ---- */

static float ref_iou(const float *a, const float *b, int center) {
    float ay1, ax1, ay2, ax2, by1, bx1, by2, bx2;
    if (center) {
        ax1 = a[0] - a[2] / 2, ax2 = a[0] + a[2] / 2, ay1 = a[1] - a[3] / 2, ay2 = a[1] + a[3] / 2;
        bx1 = b[0] - b[2] / 2, bx2 = b[0] + b[2] / 2, by1 = b[1] - b[3] / 2, by2 = b[1] + b[3] / 2;
    } else {
        ay1 = fminf(a[0], a[2]), ay2 = fmaxf(a[0], a[2]), ax1 = fminf(a[1], a[3]), ax2 = fmaxf(a[1], a[3]);
        by1 = fminf(b[0], b[2]), by2 = fmaxf(b[0], b[2]), bx1 = fminf(b[1], b[3]), bx2 = fmaxf(b[1], b[3]);
    }
    float iw = fminf(ax2, bx2) - fmaxf(ax1, bx1), ih = fminf(ay2, by2) - fmaxf(ay1, by1);
    if (iw <= 0 || ih <= 0) return 0;
    float in = iw * ih, un = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - in;
    return un > 0 ? in / un : 0;
}

/* Reference: repeatedly pick the best remaining box (highest score, lowest index). */
static int64_t ref_nms(int64_t B, int64_t C, int64_t N, const float *boxes, const float *scores,
                       int64_t max_out, float iou, float sth, int center, int64_t *rows) {
    int64_t nr = 0;
    char *used = calloc((size_t)N, 1);
    int64_t *kept = malloc((size_t)N * 8);
    for (int64_t b = 0; b < B; b++)
        for (int64_t c = 0; c < C; c++) {
            memset(used, 0, (size_t)N);
            const float *sc = scores + (b * C + c) * N;
            int64_t nk = 0;
            while (nk < max_out) {
                int64_t best = -1;
                for (int64_t i = 0; i < N; i++)
                    if (!used[i] && sc[i] > sth && (best < 0 || sc[i] > sc[best])) best = i;
                if (best < 0) break;
                used[best] = 1;
                int ok = 1;
                for (int64_t j = 0; j < nk; j++)
                    if (ref_iou(boxes + (b * N + best) * 4, boxes + (b * N + kept[j]) * 4, center) > iou)
                        ok = 0;
                if (!ok) continue;
                kept[nk++] = best;
                rows[3 * nr] = b, rows[3 * nr + 1] = c, rows[3 * nr + 2] = best;
                nr++;
            }
        }
    free(used);
    free(kept);
    return nr;
}

static ob_buf nms_model(int center) {
    ob_buf g = {0};
    int64_t bd[3] = {-1, -1, 4}, sd[3] = {-1, -1, -1}, one[1] = {1};
    ob_buf v = ob_vinfo("boxes", 1, 3, bd);
    ob_msg(&g, OB_INPUT, &v);
    v = ob_vinfo("scores", 1, 3, sd);
    ob_msg(&g, OB_INPUT, &v);
    v = ob_vinfo("max_out", 7, 1, one);
    ob_msg(&g, OB_INPUT, &v);
    v = ob_vinfo("iou", 1, 1, one);
    ob_msg(&g, OB_INPUT, &v);
    v = ob_vinfo("sth", 1, 1, one);
    ob_msg(&g, OB_INPUT, &v);
    const char *ins[] = {"boxes", "scores", "max_out", "iou", "sth", NULL}, *outs[] = {"sel", NULL};
    ob_buf n = ob_node("NonMaxSuppression", NULL, "nms", ins, outs);
    ob_attr_int(&n, "center_point_box", center);
    ob_msg(&g, OB_NODE, &n);
    v = ob_vinfo("sel", 7, -1, NULL);
    ob_msg(&g, OB_OUTPUT, &v);
    return ob_model(&g);
}

static void test_nms(void) {
    for (int center = 0; center < 2; center++) {
        ob_buf mb = nms_model(center);
        frt_model *m = NULL;
        frt_status st = frt_model_load_buffer(mb.p, mb.n, NULL, NULL, &m);
        free(mb.p);
        CHECK_MSG(st == FRT_OK, "load: %s", frt_last_error());
        if (st) return;
        frt_runtime *rt = NULL;
        CHECK(frt_runtime_create(m, &rt) == FRT_OK);
        int64_t most_kept = 0;
        /* it >= 40: up to 90 boxes and no output cap, so dozens are kept and a candidate is
           tested against several blocks of kept boxes (NMS_LANES = 8 in detection.c) */
        for (int it = 0; it < 50 && rt; it++) {
            bool many = it >= 40;
            int64_t B = 1 + it % 2, C = 1 + it % 3, N = many ? 41 + (it - 40) * 5 : 1 + (it * 7) % 23;
            float *boxes = malloc((size_t)(B * N * 4) * 4), *scores = malloc((size_t)(B * C * N) * 4);
            for (int64_t i = 0; i < B * N * 4; i++) boxes[i] = frand() * 10;
            for (int64_t i = 0; i < B * C * N; i++) scores[i] = (float)(int)(frand() * 8) / 8; /* ties */
            int64_t max_out = many ? 1000 : it % 5 == 0 ? 0 : 1 + it % 6;
            float iou = 0.1f * (float)(it % 6), sth = it % 3 ? 0.2f : -1.0f;
            frt_tensor in[5] = {
                {.dtype = FRT_FLOAT32, .rank = 3, .shape = {B, N, 4}, .data = boxes, .nbytes = (size_t)(B * N * 16)},
                {.dtype = FRT_FLOAT32, .rank = 3, .shape = {B, C, N}, .data = scores, .nbytes = (size_t)(B * C * N * 4)},
                {.dtype = FRT_INT64, .rank = 1, .shape = {1}, .data = &max_out, .nbytes = 8},
                {.dtype = FRT_FLOAT32, .rank = 1, .shape = {1}, .data = &iou, .nbytes = 4},
                {.dtype = FRT_FLOAT32, .rank = 1, .shape = {1}, .data = &sth, .nbytes = 4}};
            const char *names[] = {"boxes", "scores", "max_out", "iou", "sth"};
            frt_tensor out;
            st = frt_run(rt, names, in, 5, &out, 1, FRT_OUTPUTS_ALLOC);
            CHECK_MSG(st == FRT_OK, "run: %s", frt_last_error());
            if (!st) {
                int64_t *rows = malloc((size_t)(B * C * N * 3) * 8 + 8);
                int64_t nr = ref_nms(B, C, N, boxes, scores, max_out, iou, sth, center, rows);
                CHECK_MSG(out.dtype == FRT_INT64 && out.rank == 2 && out.shape[0] == nr &&
                              out.shape[1] == 3,
                          "it %d: %lld rows, want %lld", it, (long long)out.shape[0], (long long)nr);
                if (out.shape[0] == nr) CHECK(memcmp(out.data, rows, (size_t)nr * 24) == 0);
                if (many) /* rows per (batch, class), the most kept boxes of one class */
                    for (int64_t r = 0, run = 0; r < nr; r++) {
                        run = r && rows[3 * r] == rows[3 * r - 3] &&
                                      rows[3 * r + 1] == rows[3 * r - 2] ? run + 1 : 1;
                        if (run > most_kept) most_kept = run;
                    }
                free(rows);
                frt_tensor_release(&out);
            }
            free(boxes);
            free(scores);
        }
        CHECK_MSG(most_kept > 24, "the large cases keep at most %lld boxes of a class",
                  (long long)most_kept);
        /* boxes and scores disagree on N: an error, not a crash */
        float bx[8] = {0}, sc[3] = {0};
        int64_t mo = 3;
        float th = 0;
        frt_tensor bad[5] = {
            {.dtype = FRT_FLOAT32, .rank = 3, .shape = {1, 2, 4}, .data = bx, .nbytes = 32},
            {.dtype = FRT_FLOAT32, .rank = 3, .shape = {1, 1, 3}, .data = sc, .nbytes = 12},
            {.dtype = FRT_INT64, .rank = 1, .shape = {1}, .data = &mo, .nbytes = 8},
            {.dtype = FRT_FLOAT32, .rank = 1, .shape = {1}, .data = &th, .nbytes = 4},
            {.dtype = FRT_FLOAT32, .rank = 1, .shape = {1}, .data = &th, .nbytes = 4}};
        const char *names[] = {"boxes", "scores", "max_out", "iou", "sth"};
        frt_tensor out;
        st = frt_run(rt, names, bad, 5, &out, 1, FRT_OUTPUTS_ALLOC);
        CHECK(st == FRT_ERR_SHAPE);
        if (!st) frt_tensor_release(&out);
        frt_runtime_free(rt);
        frt_model_free(m);
    }
}

/* ---- RoiAlign ---- */

static double ref_bilinear(const float *pl, int64_t H, int64_t W, double y, double x, int mx) {
    if (y < -1.0 || y > (double)H || x < -1.0 || x > (double)W) return 0;
    y = y < 0 ? 0 : y;
    x = x < 0 ? 0 : x;
    int64_t y0 = (int64_t)floor(y), x0 = (int64_t)floor(x);
    if (y0 >= H - 1) y0 = H - 1, y = (double)y0;
    if (x0 >= W - 1) x0 = W - 1, x = (double)x0;
    int64_t y1 = y0 + 1 < H ? y0 + 1 : H - 1, x1 = x0 + 1 < W ? x0 + 1 : W - 1;
    double ly = y - (double)y0, lx = x - (double)x0;
    double v[4] = {(1 - ly) * (1 - lx) * pl[y0 * W + x0], (1 - ly) * lx * pl[y0 * W + x1],
                   ly * (1 - lx) * pl[y1 * W + x0], ly * lx * pl[y1 * W + x1]};
    if (mx) return fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));
    return v[0] + v[1] + v[2] + v[3];
}

static void test_roialign(void) {
    for (int it = 0; it < 30; it++) {
        int64_t N = 2, C = 1 + it % 3, H = 3 + it % 5, W = 4 + it % 4, R = 1 + it % 4;
        int64_t oh = 1 + it % 3, ow = 1 + (it / 3) % 3, sr = it % 3;
        int mx = it % 4 == 3, half = it % 2;
        float scale = it % 5 == 4 ? 0.5f : 1.0f;
        float *X = malloc((size_t)(N * C * H * W) * 4), rois[16];
        int64_t bi[4];
        for (int64_t i = 0; i < N * C * H * W; i++) X[i] = frand() * 2 - 1;
        for (int64_t r = 0; r < R; r++) {
            float x1 = frand() * (float)W * 1.2f - 1, y1 = frand() * (float)H * 1.2f - 1;
            rois[4 * r] = x1 / scale, rois[4 * r + 1] = y1 / scale;
            rois[4 * r + 2] = (x1 + frand() * (float)W) / scale;
            rois[4 * r + 3] = (y1 + frand() * (float)H) / scale;
            bi[r] = r % 2;
        }
        int64_t xd[4] = {N, C, H, W}, rd[2] = {R, 4}, bd[1] = {R};
        frt_value in[3] = {frt_test_value(FRT_FLOAT32, 4, xd, X), frt_test_value(FRT_FLOAT32, 2, rd, rois),
                           frt_test_value(FRT_INT64, 1, bd, bi)};
        frt_onnx_attr at[6] = {frt_test_attr_int("output_height", oh), frt_test_attr_int("output_width", ow),
                               frt_test_attr_int("sampling_ratio", sr),
                               frt_test_attr_float("spatial_scale", scale),
                               frt_test_attr_string("mode", mx ? "max" : "avg"),
                               frt_test_attr_string("coordinate_transformation_mode",
                                                    half ? "half_pixel" : "output_half_pixel")};
        frt_test_op t = {.op_type = "RoiAlign", .opset = 16, .attrs = at, .n_attrs = 6, .inputs = in,
                         .n_in = 3, .n_out = 1};
        frt_value out;
        frt_status st = frt_test_run_op(&t, &out, NULL);
        CHECK_MSG(st == FRT_OK, "RoiAlign: %s", frt_last_error());
        if (st) {
            free(X);
            continue;
        }
        CHECK(out.dims[0] == R && out.dims[1] == C && out.dims[2] == oh && out.dims[3] == ow);
        for (int64_t r = 0; r < R; r++) {
            double off = half ? 0.5 : 0;
            double x1 = rois[4 * r] * scale - off, y1 = rois[4 * r + 1] * scale - off;
            double rw = rois[4 * r + 2] * scale - off - x1, rh = rois[4 * r + 3] * scale - off - y1;
            if (!half) rw = fmax(rw, 1), rh = fmax(rh, 1);
            int64_t gh = sr ? sr : (int64_t)ceil(rh / (double)oh), gw = sr ? sr : (int64_t)ceil(rw / (double)ow);
            for (int64_t c = 0; c < C; c++)
                for (int64_t a = 0; a < oh; a++)
                    for (int64_t b = 0; b < ow; b++) {
                        double acc = mx ? -INFINITY : 0;
                        for (int64_t iy = 0; iy < gh; iy++)
                            for (int64_t ix = 0; ix < gw; ix++) {
                                double y = y1 + (double)a * rh / (double)oh + (iy + 0.5) * rh / (double)oh / (double)gh;
                                double x = x1 + (double)b * rw / (double)ow + (ix + 0.5) * rw / (double)ow / (double)gw;
                                double v = ref_bilinear(X + (bi[r] * C + c) * H * W, H, W, y, x, mx);
                                acc = mx ? fmax(acc, v) : acc + v;
                            }
                        if (!mx) acc /= (double)(gh * gw > 1 ? gh * gw : 1);
                        if (mx && gh * gw == 0) acc = 0;
                        float got = ((float *)out.data)[((r * C + c) * oh + a) * ow + b];
                        CHECK_MSG(fabs(got - acc) <= 1e-4 + 1e-4 * fabs(acc),
                                  "it %d r %lld c %lld (%lld,%lld): %g vs %g", it, (long long)r,
                                  (long long)c, (long long)a, (long long)b, (double)got, acc);
                    }
        }
        free(out.data);
        /* an out-of-range batch index is a run-time error */
        bi[0] = 5;
        st = frt_test_run_op(&t, &out, NULL);
        CHECK(st == FRT_ERR_RUNTIME && strstr(frt_last_error(), "batch_indices[0] = 5"));
        if (!st) free(out.data);
        free(X);
    }
}

/* ---- NMS block loops: the division-free IoU test of every tier against the division ----
 * The kernel's decision "fl(inter / uni) > th" (src/ops/x86/simd_detection.h) is taken without a
 * division, as an exact comparison in double precision. Here the portable twin and the tier's
 * (AVX2) loop are checked against the division itself on pairs whose IoU sits on the rounding
 * boundary: th = fl(IoU) (no hit) and the float below it (hit), the float above; thresholds 0,
 * subnormal, negative, 1, FLT_MAX, inf, NaN; nested, disjoint, touching, degenerate and NaN boxes.
 * A pair's hit must not depend on the other lanes of its block or on where the block ends. */
static float box_min(float a, float b) { return a < b ? a : b; }
static float box_max(float a, float b) { return a > b ? a : b; }

static int div_hit(const frt_nms_box *a, const frt_nms_box *k, float th) {
    float w = box_min(a->x2, k->x2) - box_max(a->x1, k->x1);
    float h = box_min(a->y2, k->y2) - box_max(a->y1, k->y1);
    float inter = w * h, uni = a->area + k->area - inter;
    volatile float q = inter / uni; /* the float32 division (no contraction / excess precision) */
    float iou = w > 0 && h > 0 && uni > 0 ? q : 0.0f;
    return iou > th;
}

static frt_nms_box mkbox(float y1, float x1, float y2, float x2) {
    frt_nms_box b = {y1, x1, y2, x2, (x2 - x1) * (y2 - y1)};
    return b;
}

static void test_nms_lanes(void) {
    const frt_nms_variant *v[2] = {frt_nms_variant_get(FRT_ISA_PORTABLE),
                                   frt_nms_variant_get(frt_cpu_tier())};
    printf("nms loops: %s, %s\n", v[0]->name, v[1]->name);
    enum { NB = 40 };
    float col[5][NB + FRT_NMS_LANES];
    frt_nms_cols kc = {col[0], col[1], col[2], col[3], col[4]};
    int64_t checked = 0, hits = 0, bad = 0;
    for (int iter = 0; iter < 4000; iter++) {
        /* a candidate and NB kept boxes around it */
        float cy = frand() * 10, cx = frand() * 10, hh = 0.01f + frand() * 4, ww = 0.01f + frand() * 4;
        frt_nms_box a = mkbox(cy, cx, cy + hh, cx + ww);
        if (iter % 97 == 0) a = mkbox(cy, cx, cy, cx + ww); /* degenerate: area 0 */
        if (iter % 89 == 0) a.x1 = NAN;
        frt_nms_box kb[NB];
        for (int j = 0; j < NB; j++) {
            float dy = (frand() - 0.5f) * hh * (iter % 3 ? 0.3f : 3), dx = (frand() - 0.5f) * ww;
            float sy = 1 + (frand() - 0.5f) * (iter % 2 ? 0.2f : 1.5f);
            float sx = 1 + (frand() - 0.5f) * 0.2f;
            kb[j] = mkbox(cy + dy, cx + dx, cy + dy + hh * sy, cx + dx + ww * sx);
            if (j % 13 == 5) kb[j] = mkbox(cy + hh, cx, cy + 2 * hh, cx + ww); /* touching */
            if (j % 17 == 3) kb[j] = a;                                         /* identical */
        }
        /* thresholds: on the rounding boundary of one pair's IoU, or special values */
        int jp = iter % NB;
        float w = box_min(a.x2, kb[jp].x2) - box_max(a.x1, kb[jp].x1);
        float h = box_min(a.y2, kb[jp].y2) - box_max(a.y1, kb[jp].y1);
        float inter = w * h, uni = a.area + kb[jp].area - inter;
        float q = inter / uni;
        static const float special[] = {0.0f, -0.0f, 1e-45f, 1e-40f, -0.5f, 1.0f, 0.5f,
                                        FLT_MAX, INFINITY, -INFINITY, NAN, 0.45f, 0.55f};
        float th;
        switch (iter % 5) {
        case 0: th = q; break;
        case 1: th = nextafterf(q, -INFINITY); break;
        case 2: th = nextafterf(q, INFINITY); break;
        case 3: th = special[(iter / 5) % (int)(sizeof special / sizeof special[0])]; break;
        default: th = frand(); break;
        }
        frt_nms_th t;
        frt_nms_threshold(th, &t);
        /* each kept box alone in lane l of a block of empty boxes, then all NB as columns */
        for (int j = 0; j < NB; j++) {
            int want = div_hit(&a, &kb[j], th);
            for (int l = 0; l < FRT_NMS_LANES; l += 3) {
                for (int c = 0; c < 5; c++)
                    for (int i = 0; i < FRT_NMS_LANES; i++) col[c][i] = 0;
                col[0][l] = kb[j].y1, col[1][l] = kb[j].x1, col[2][l] = kb[j].y2;
                col[3][l] = kb[j].x2, col[4][l] = kb[j].area;
                /* the empty lanes hit only when 0 > th, as the division does for them */
                int want_l = want || div_hit(&a, &(frt_nms_box){0, 0, 0, 0, 0}, th);
                for (int u = 0; u < 2; u++) {
                    int got = v[u]->suppressed(&a, &kc, l + 1, &t);
                    bad += got != want_l;
                    if (got != want_l && bad < 5)
                        fprintf(stderr, "  %s: box %d lane %d th %a q %a: %d, division %d\n",
                                v[u]->name, j, l, th, q, got, want_l);
                }
                checked++;
            }
            hits += want;
        }
        for (int j = 0; j < NB; j++) {
            col[0][j] = kb[j].y1, col[1][j] = kb[j].x1, col[2][j] = kb[j].y2;
            col[3][j] = kb[j].x2, col[4][j] = kb[j].area;
        }
        for (int j = NB; j < NB + FRT_NMS_LANES; j++)
            for (int c = 0; c < 5; c++) col[c][j] = 0;
        for (int nk = 1; nk <= NB; nk += 7) {
            int want = 0;
            for (int j = 0; j < nk; j++) want |= div_hit(&a, &kb[j], th);
            /* lanes past nk are real boxes here: set them empty as the kernel does */
            float save[5][FRT_NMS_LANES];
            int e = (nk + FRT_NMS_LANES - 1) / FRT_NMS_LANES * FRT_NMS_LANES;
            for (int c = 0; c < 5; c++)
                for (int j = nk; j < e; j++) save[c][j - nk] = col[c][j], col[c][j] = 0;
            if (e > nk) want |= div_hit(&a, &(frt_nms_box){0, 0, 0, 0, 0}, th);
            for (int u = 0; u < 2; u++) bad += v[u]->suppressed(&a, &kc, nk, &t) != want;
            for (int c = 0; c < 5; c++)
                for (int j = nk; j < e; j++) col[c][j] = save[c][j - nk];
            checked++;
        }
    }
    printf("nms loops: %lld tests, %lld single-pair hits\n", (long long)checked, (long long)hits);
    CHECK_MSG(bad == 0, "%lld decisions differ from the division", (long long)bad);
    CHECK(hits > 1000 && hits < 4000 * 40 - 1000); /* both outcomes are exercised */
}

int main(void) {
    test_nms();
    test_nms_lanes();
    test_roialign();
    TEST_MAIN_END();
}
