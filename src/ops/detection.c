/* Detection ops: NonMaxSuppression and RoiAlign (float32).
 *
 * NonMaxSuppression: boxes [B, N, 4], scores [B, C, N], optional scalars max_output_boxes_per_class
 * (int64, default 0 = none), iou_threshold (float, default 0), score_threshold (float, none when
 * absent) -> selected [K, 3] int64 rows (batch, class, box), batch-major, then class, then in
 * selection order. Per (batch, class): boxes with score > score_threshold, by descending score
 * (ties: lower box index first), are kept greedily unless their IoU with a kept box exceeds
 * iou_threshold. center_point_box 0: [y1, x1, y2, x2] (any two opposite corners), 1: [xc, yc, w, h].
 * K is known only when the kernel has run (run-time-sized output).
 *
 * RoiAlign: X [N, C, H, W], rois [R, 4] ([x1, y1, x2, y2] in input coordinates times
 * spatial_scale), batch_indices [R] int64 -> Y [R, C, output_height, output_width]. Each output bin
 * averages (mode avg) or takes the max of (mode max) sampling_ratio^2 bilinear samples (adaptive:
 * ceil(roi size / output size) per axis when sampling_ratio = 0). coordinate_transformation_mode
 * half_pixel (default from opset 16) shifts the roi by -0.5 pixel; output_half_pixel (the only
 * behaviour before 16) does not and makes rois at least 1 pixel wide.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op.h"
#include "x86/simd_detection.h"

/* ---- NonMaxSuppression ---- */

typedef struct nms_params {
    int center_point_box;
    frt_nms_suppressed_fn suppressed; /* the tier's block loop */
} nms_params;

static frt_status nms_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 5, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, FRT_FLOAT32)) ||
        (st = frt_op_check_input(c, 1, FRT_FLOAT32)))
        return st;
    if (c->n_in > 2 && c->in[2] && (st = frt_op_check_input(c, 2, FRT_INT64))) return st;
    if (c->n_in > 3 && c->in[3] && (st = frt_op_check_input(c, 3, FRT_FLOAT32))) return st;
    if (c->n_in > 4 && c->in[4] && (st = frt_op_check_input(c, 4, FRT_FLOAT32))) return st;
    const frt_value *b = c->in[0], *s = c->in[1];
    char sb[128], ss[128];
    if ((b->rank >= 0 && (b->rank != 3 || (b->dims[2] >= 0 && b->dims[2] != 4))) ||
        (s->rank >= 0 && s->rank != 3) ||
        (b->rank == 3 && s->rank == 3 &&
         ((b->dims[0] >= 0 && s->dims[0] >= 0 && b->dims[0] != s->dims[0]) ||
          (b->dims[1] >= 0 && s->dims[2] >= 0 && b->dims[1] != s->dims[2]))))
        return frt_op_fail(c, FRT_ERR_SHAPE, "boxes %s must be [B, N, 4] and scores %s [B, C, N]",
                           frt_shape_str(b, sb, sizeof sb), frt_shape_str(s, ss, sizeof ss));
    for (int i = 2; i < c->n_in && i < 5; i++)
        if (c->in[i] && c->in[i]->numel > 1)
            return frt_op_fail(c, FRT_ERR_SHAPE, "input %d must hold one value", i);
    int64_t od[2] = {-1, 3};
    frt_op_set_shape(c->out[0], FRT_INT64, 2, od);
    return FRT_OK;
}

typedef frt_nms_box nms_box;

static nms_box nms_corners(const float *b, int center) {
    nms_box r;
    if (center) {
        r.x1 = b[0] - b[2] * 0.5f;
        r.x2 = b[0] + b[2] * 0.5f;
        r.y1 = b[1] - b[3] * 0.5f;
        r.y2 = b[1] + b[3] * 0.5f;
    } else {
        r.y1 = fminf(b[0], b[2]);
        r.y2 = fmaxf(b[0], b[2]);
        r.x1 = fminf(b[1], b[3]);
        r.x2 = fmaxf(b[1], b[3]);
    }
    r.area = (r.x2 - r.x1) * (r.y2 - r.y1);
    return r;
}

/* The inner loop of the kernel (candidates x kept boxes: ~10^8 calls for a torchvision detector's
 * batched NMS over 90 classes), so min / max are plain comparisons: fminf / fmaxf are libm calls
 * here (their NaN rule keeps gcc from inlining them), which took 40% of ssdlite320's run. With a
 * NaN coordinate w or h is NaN or the comparisons fail, and the IoU is 0 either way. */
static inline float nms_min(float a, float b) { return a < b ? a : b; }
static inline float nms_max(float a, float b) { return a > b ? a : b; }


typedef struct nms_cand {
    float score;
    int64_t index;
} nms_cand;

/* Descending score, then ascending index: a total order, so qsort's result is deterministic. */
static int nms_cmp(const void *pa, const void *pb) {
    const nms_cand *a = pa, *b = pb;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Scratch: cands[N], kept[N] (int64), rows[B*C*N*3] (int64), boxes[N], then the kept boxes as
 * five float columns (y1, x1, y2, x2, area) of N + FRT_NMS_LANES each. */
#define NMS_LANES FRT_NMS_LANES
static size_t nms_scratch(const frt_step *s, const frt_value *values) {
    const frt_value *b = &values[s->in[0]], *sc = &values[s->in[1]];
    size_t N = (size_t)b->dims[1], BC = (size_t)sc->dims[0] * (size_t)sc->dims[1];
    return N * (sizeof(nms_cand) + sizeof(int64_t) + sizeof(nms_box)) +
           BC * N * 3 * sizeof(int64_t) + 5 * (N + NMS_LANES) * sizeof(float) + 64;
}

void frt_nms_threshold(float th, frt_nms_th *t) {
    t->zero = 0.0f > th;
    if (th == FLT_MAX) { /* the next value up is 2^128 (even: ties overflow to it) */
        t->m = ((double)FLT_MAX + 0x1p128) / 2;
        t->tie_ge = 1;
        return;
    }
    float s = nextafterf(th, INFINITY); /* th NaN: NaN, +inf: +inf, -inf: -FLT_MAX */
    t->m = isinf(th) ? (double)th : ((double)th + (double)s) / 2;
    uint32_t sb;
    memcpy(&sb, &s, 4);
    t->tie_ge = (sb & 1) == 0;
}

/* The portable block loop (simd_detection.h: the IoU test, division-free): a candidate's test
 * against FRT_NMS_LANES kept boxes at a time, no early exit inside a block (the compiler may
 * vectorize it), so a pair's decision does not depend on the lanes around it. */
static bool nms_suppressed(const nms_box *a, const frt_nms_cols *k, int64_t nk,
                           const frt_nms_th *th) {
    for (int64_t j0 = 0; j0 < nk; j0 += NMS_LANES) {
        int hit = 0;
        for (int l = 0; l < NMS_LANES; l++) { /* lanes past nk hold an empty box */
            int64_t j = j0 + l;
            float w = nms_min(a->x2, k->x2[j]) - nms_max(a->x1, k->x1[j]);
            float h = nms_min(a->y2, k->y2[j]) - nms_max(a->y1, k->y1[j]);
            float inter = w * h, uni = a->area + k->area[j] - inter;
            /* bitwise, not short-circuit: no branch per lane */
            double p = th->m * (double)uni;
            int ov = (w > 0) & (h > 0) & (uni > 0);
            int gt = ((double)inter > p) | (th->tie_ge & ((double)inter == p));
            hit |= ov ? gt : th->zero;
        }
        if (hit) return true;
    }
    return false;
}

static const frt_nms_variant nms_variants[] = {
#if FRT_HAVE_X86 && FRT_TIER_AVX2
    {FRT_ISA_AVX2, "nms_f32_avx2", frt_nms_suppressed_avx2},
#endif
    {FRT_ISA_PORTABLE, "nms_f32", nms_suppressed},
};

const frt_nms_variant *frt_nms_variant_get(frt_isa cap) {
    return FRT_PICK_VARIANT(nms_variants, cap);
}

static frt_status nms_kernel(const frt_step *s, frt_exec *x) {
    const nms_params *p = s->k.params;
    const frt_value *bv = &x->values[s->in[0]], *sv = &x->values[s->in[1]];
    int64_t B = sv->dims[0], C = sv->dims[1], N = sv->dims[2];
    if (bv->dims[0] != B || bv->dims[1] != N)
        return frt_step_fail(s, FRT_ERR_SHAPE, "boxes and scores disagree on batch or box count");
    int64_t max_out = 0;
    float iou_th = 0, score_th = 0;
    int has_score_th = 0;
    if (s->n_in > 2 && s->in[2] >= 0 && x->values[s->in[2]].numel == 1)
        max_out = ((const int64_t *)x->values[s->in[2]].data)[0];
    if (s->n_in > 3 && s->in[3] >= 0 && x->values[s->in[3]].numel == 1)
        iou_th = ((const float *)x->values[s->in[3]].data)[0];
    if (s->n_in > 4 && s->in[4] >= 0 && x->values[s->in[4]].numel == 1) {
        score_th = ((const float *)x->values[s->in[4]].data)[0];
        has_score_th = 1;
    }
    if (max_out < 0) max_out = 0;
    frt_nms_th th;
    frt_nms_threshold(iou_th, &th);
    char *mem = x->scratch;
    int64_t BC = B * C, n_rows = 0;
    nms_cand *cand = (nms_cand *)mem; /* 8-byte members first, the float boxes last */
    int64_t *kept = (int64_t *)(cand + N);
    int64_t *rows = kept + N;
    nms_box *boxes = (nms_box *)(rows + BC * N * 3);
    float *colmem = (float *)(boxes + N);
    int64_t cn = N + NMS_LANES;
    frt_nms_cols kc = {colmem, colmem + cn, colmem + 2 * cn, colmem + 3 * cn, colmem + 4 * cn};
    for (int64_t b = 0; b < B; b++) {
        const float *bx = (const float *)bv->data + b * N * 4;
        for (int64_t i = 0; i < N; i++) boxes[i] = nms_corners(bx + 4 * i, p->center_point_box);
        for (int64_t cl = 0; cl < C; cl++) {
            const float *sc = (const float *)sv->data + (b * C + cl) * N;
            int64_t n = 0;
            for (int64_t i = 0; i < N; i++)
                if (!has_score_th || sc[i] > score_th) cand[n++] = (nms_cand){sc[i], i};
            qsort(cand, (size_t)n, sizeof *cand, nms_cmp);
            int64_t nk = 0;
            for (int64_t i = 0; i < n && nk < max_out; i++) {
                int64_t bi = cand[i].index;
                if (p->suppressed(&boxes[bi], &kc, nk, &th)) continue;
                /* append it as a column entry, and an empty box in the lanes after it */
                for (int64_t j = nk; j < nk + NMS_LANES && j < cn; j++) {
                    const nms_box *e = j == nk ? &boxes[bi] : &(nms_box){0, 0, 0, 0, 0};
                    kc.y1[j] = e->y1, kc.x1[j] = e->x1, kc.y2[j] = e->y2, kc.x2[j] = e->x2;
                    kc.area[j] = e->area;
                }
                kept[nk++] = bi;
                rows[3 * n_rows] = b;
                rows[3 * n_rows + 1] = cl;
                rows[3 * n_rows + 2] = bi;
                n_rows++;
            }
        }
    }
    int64_t od[2] = {n_rows, 3};
    int64_t *y = frt_exec_alloc_output(x, s, 0, FRT_INT64, 2, od);
    if (!y) return FRT_ERR_NO_MEMORY;
    if (n_rows) memcpy(y, rows, (size_t)n_rows * 3 * sizeof(int64_t));
    return FRT_OK;
}

static frt_status nms_select(frt_op_ctx *c, frt_kernel *k) {
    nms_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    int64_t cpb = frt_attr_int(c->node, "center_point_box", 0);
    if (cpb != 0 && cpb != 1)
        return frt_op_fail(c, FRT_ERR_SHAPE, "center_point_box %lld must be 0 or 1", (long long)cpb);
    p->center_point_box = (int)cpb;
    const frt_nms_variant *v = frt_nms_variant_get(c->isa);
    p->suppressed = v->suppressed;
    k->name = v->name;
    k->fn = nms_kernel;
    k->params = p;
    k->scratch = nms_scratch;
    k->flags = FRT_K_DYNAMIC_OUT;
    return FRT_OK;
}

/* ---- RoiAlign ---- */

typedef struct roi_params {
    int mode_max;
    int half_pixel;
    int64_t oh, ow, sampling;
    float scale;
} roi_params;

static frt_status roi_parse(const frt_op_ctx *c, roi_params *p) {
    const frt_node *n = c->node;
    const char *mode = frt_attr_string(n, "mode", "avg");
    const char *ctm = frt_attr_string(n, "coordinate_transformation_mode",
                                      c->opset >= 16 ? "half_pixel" : "output_half_pixel");
    if (strcmp(mode, "avg") && strcmp(mode, "max"))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "mode '%s' (avg or max)", mode);
    if (strcmp(ctm, "half_pixel") && strcmp(ctm, "output_half_pixel"))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "coordinate_transformation_mode '%s'", ctm);
    p->mode_max = !strcmp(mode, "max");
    p->half_pixel = !strcmp(ctm, "half_pixel");
    p->oh = frt_attr_int(n, "output_height", 1);
    p->ow = frt_attr_int(n, "output_width", 1);
    p->sampling = frt_attr_int(n, "sampling_ratio", 0);
    p->scale = frt_attr_float(n, "spatial_scale", 1.0f);
    if (p->oh < 1 || p->ow < 1 || p->oh > (1 << 20) || p->ow > (1 << 20) || p->sampling < 0 ||
        p->sampling > 1024 || !(p->scale > 0) || !isfinite(p->scale))
        return frt_op_fail(c, FRT_ERR_SHAPE,
                           "output %lldx%lld, sampling_ratio %lld, spatial_scale %g out of range",
                           (long long)p->oh, (long long)p->ow, (long long)p->sampling,
                           (double)p->scale);
    return FRT_OK;
}

static frt_status roi_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 3, 3, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, FRT_FLOAT32)) ||
        (st = frt_op_check_input(c, 1, FRT_FLOAT32)) || (st = frt_op_check_input(c, 2, FRT_INT64)))
        return st;
    roi_params p;
    if ((st = roi_parse(c, &p))) return st;
    const frt_value *x = c->in[0], *r = c->in[1], *bi = c->in[2];
    char sx[128], sr[128];
    if ((x->rank >= 0 && x->rank != 4) || (r->rank >= 0 && (r->rank != 2 || (r->dims[1] >= 0 && r->dims[1] != 4))) ||
        (bi->rank >= 0 && bi->rank != 1) ||
        (r->rank == 2 && bi->rank == 1 && r->dims[0] >= 0 && bi->dims[0] >= 0 &&
         r->dims[0] != bi->dims[0]))
        return frt_op_fail(c, FRT_ERR_SHAPE, "X %s must be 4-D, rois %s [R, 4], batch_indices [R]",
                           frt_shape_str(x, sx, sizeof sx), frt_shape_str(r, sr, sizeof sr));
    int64_t od[4] = {r->rank == 2 ? r->dims[0] : -1, x->rank == 4 ? x->dims[1] : -1, p.oh, p.ow};
    frt_op_set_shape(c->out[0], FRT_FLOAT32, 4, od);
    return FRT_OK;
}

/* Bilinear sample of plane (H x W) at (y, x) with RoiAlign's edge rules; *w (4 weights) and *o
 * (4 offsets) describe it, or it is empty (returns 0) when outside [-1, H] x [-1, W]. */
static int roi_sample(int64_t H, int64_t W, float y, float x, float *w, int64_t *o) {
    if (y < -1.0f || y > (float)H || x < -1.0f || x > (float)W) return 0;
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;
    if (yl >= H - 1) {
        yh = yl = H - 1;
        y = (float)yl;
    } else {
        yh = yl + 1;
    }
    if (xl >= W - 1) {
        xh = xl = W - 1;
        x = (float)xl;
    } else {
        xh = xl + 1;
    }
    float ly = y - (float)yl, lx = x - (float)xl, hy = 1.0f - ly, hx = 1.0f - lx;
    w[0] = hy * hx;
    w[1] = hy * lx;
    w[2] = ly * hx;
    w[3] = ly * lx;
    o[0] = yl * W + xl;
    o[1] = yl * W + xh;
    o[2] = yh * W + xl;
    o[3] = yh * W + xh;
    return 1;
}

static frt_status roi_kernel(const frt_step *s, frt_exec *x) {
    const roi_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *rv = &x->values[s->in[1]];
    const frt_value *bv = &x->values[s->in[2]];
    int64_t N = xv->dims[0], C = xv->dims[1], H = xv->dims[2], W = xv->dims[3], R = rv->dims[0];
    const float *X = xv->data, *rois = rv->data;
    const int64_t *bidx = bv->data;
    float *Y = x->values[s->out[0]].data;
    float off = p->half_pixel ? 0.5f : 0.0f;
    for (int64_t r = 0; r < R; r++) {
        int64_t n = bidx[r];
        if (n < 0 || n >= N)
            return frt_step_fail(s, FRT_ERR_RUNTIME, "batch_indices[%lld] = %lld is outside [0, %lld)",
                                 (long long)r, (long long)n, (long long)N);
        const float *roi = rois + 4 * r;
        float x1 = roi[0] * p->scale - off, y1 = roi[1] * p->scale - off;
        float rw = roi[2] * p->scale - off - x1, rh = roi[3] * p->scale - off - y1;
        if (!p->half_pixel) {
            rw = fmaxf(rw, 1.0f);
            rh = fmaxf(rh, 1.0f);
        }
        float bh = rh / (float)p->oh, bw = rw / (float)p->ow;
        int64_t gh = p->sampling > 0 ? p->sampling : (int64_t)ceilf(rh / (float)p->oh);
        int64_t gw = p->sampling > 0 ? p->sampling : (int64_t)ceilf(rw / (float)p->ow);
        if (gh < 0 || gh > 4096 || gw < 0 || gw > 4096)
            return frt_step_fail(s, FRT_ERR_RUNTIME, "roi %lld is too large or not finite",
                                 (long long)r);
        float count = (float)(gh * gw > 1 ? gh * gw : 1);
        for (int64_t ch = 0; ch < C; ch++) {
            const float *plane = X + (n * C + ch) * H * W;
            float *yo = Y + (r * C + ch) * p->oh * p->ow;
            for (int64_t ph = 0; ph < p->oh; ph++)
                for (int64_t pw = 0; pw < p->ow; pw++) {
                    float acc = 0;
                    int first = 1;
                    for (int64_t iy = 0; iy < gh; iy++) {
                        float yy = y1 + (float)ph * bh + ((float)iy + 0.5f) * bh / (float)gh;
                        for (int64_t ix = 0; ix < gw; ix++) {
                            float xx = x1 + (float)pw * bw + ((float)ix + 0.5f) * bw / (float)gw;
                            float w[4];
                            int64_t o[4];
                            float v;
                            if (!roi_sample(H, W, yy, xx, w, o)) {
                                v = 0;
                            } else if (p->mode_max) {
                                v = fmaxf(fmaxf(w[0] * plane[o[0]], w[1] * plane[o[1]]),
                                          fmaxf(w[2] * plane[o[2]], w[3] * plane[o[3]]));
                            } else {
                                v = w[0] * plane[o[0]] + w[1] * plane[o[1]] + w[2] * plane[o[2]] +
                                    w[3] * plane[o[3]];
                            }
                            if (p->mode_max) acc = first || v > acc ? v : acc;
                            else acc += v;
                            first = 0;
                        }
                    }
                    yo[ph * p->ow + pw] = p->mode_max ? acc : acc / count;
                }
        }
    }
    return FRT_OK;
}

static frt_status roi_select(frt_op_ctx *c, frt_kernel *k) {
    roi_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    frt_status st = roi_parse(c, p);
    if (st) return st;
    k->name = "roialign_f32";
    k->fn = roi_kernel;
    k->params = p;
    return FRT_OK;
}

FRT_OP_IMPL(detection, NonMaxSuppression, nms_infer, nms_select);
FRT_OP_IMPL(detection, RoiAlign, roi_infer, roi_select);
