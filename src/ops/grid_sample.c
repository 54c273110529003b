/* GridSample (opset 16, float32, 4-D): X [N, C, H, W], grid [N, Ho, Wo, 2] -> Y [N, C, Ho, Wo].
 *
 * grid holds normalized (x, y) in [-1, 1]; with align_corners the extremes are the centers of the
 * corner pixels (x = (gx + 1) / 2 * (W - 1)), without it their outer edges
 * (x = ((gx + 1) * W - 1) / 2). mode: bilinear (4 neighbours), nearest (round half to even),
 * bicubic (4x4 neighbours, cubic convolution with A = -0.75). padding_mode decides what lies
 * outside the image: zeros (pixels read as 0), border (coordinates clamped to the edge pixels),
 * reflection (coordinates mirrored at the edges: the corner-pixel centers with align_corners, the
 * image border otherwise). For bilinear and nearest the sampling point itself is clamped or
 * mirrored; for bicubic each of the 16 pixels is.
 */
#include <math.h>
#include <string.h>

#include "op.h"

enum { GS_BILINEAR, GS_NEAREST, GS_BICUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

typedef struct gs_params {
    int mode, pad, align;
} gs_params;

static frt_status gs_parse(const frt_op_ctx *c, gs_params *p) {
    const char *m = frt_attr_string(c->node, "mode", "bilinear");
    const char *pm = frt_attr_string(c->node, "padding_mode", "zeros");
    int64_t ac = frt_attr_int(c->node, "align_corners", 0);
    if (!strcmp(m, "bilinear") || !strcmp(m, "linear")) p->mode = GS_BILINEAR;
    else if (!strcmp(m, "nearest")) p->mode = GS_NEAREST;
    else if (!strcmp(m, "bicubic") || !strcmp(m, "cubic")) p->mode = GS_BICUBIC;
    else return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "mode '%s'", m);
    if (!strcmp(pm, "zeros")) p->pad = GS_ZEROS;
    else if (!strcmp(pm, "border")) p->pad = GS_BORDER;
    else if (!strcmp(pm, "reflection")) p->pad = GS_REFLECTION;
    else return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "padding_mode '%s'", pm);
    if (ac != 0 && ac != 1)
        return frt_op_fail(c, FRT_ERR_SHAPE, "align_corners %lld must be 0 or 1", (long long)ac);
    p->align = (int)ac;
    return FRT_OK;
}

static frt_status gs_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 2, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, FRT_FLOAT32)) ||
        (st = frt_op_check_input(c, 1, FRT_FLOAT32)))
        return st;
    gs_params p;
    if ((st = gs_parse(c, &p))) return st;
    const frt_value *x = c->in[0], *g = c->in[1];
    char sx[128], sg[128];
    if ((x->rank >= 0 && x->rank != 4) ||
        (g->rank >= 0 && (g->rank != 4 || (g->dims[3] >= 0 && g->dims[3] != 2))) ||
        (x->rank == 4 && g->rank == 4 && x->dims[0] >= 0 && g->dims[0] >= 0 &&
         x->dims[0] != g->dims[0]))
        return frt_op_fail(c, FRT_ERR_SHAPE, "X %s must be [N, C, H, W] and grid %s [N, Ho, Wo, 2]",
                           frt_shape_str(x, sx, sizeof sx), frt_shape_str(g, sg, sizeof sg));
    int64_t od[4] = {x->rank == 4 ? x->dims[0] : -1, x->rank == 4 ? x->dims[1] : -1,
                     g->rank == 4 ? g->dims[1] : -1, g->rank == 4 ? g->dims[2] : -1};
    frt_op_set_shape(c->out[0], FRT_FLOAT32, 4, od);
    return FRT_OK;
}

/* Mirrors v into [lo, hi] (repeatedly: a point far outside folds back and forth). */
static float gs_reflect(float v, float lo, float hi) {
    float range = hi - lo;
    if (range <= 0) return lo;
    if (v < lo) {
        float d = lo - v;
        float n = floorf(d / range), r = d - n * range;
        return fmodf(n, 2.0f) == 0 ? lo + r : hi - r;
    }
    if (v > hi) {
        float d = v - hi;
        float n = floorf(d / range), r = d - n * range;
        return fmodf(n, 2.0f) == 0 ? hi - r : lo + r;
    }
    return v;
}

typedef struct gs_plane {
    const float *img;
    int64_t H, W;
    const gs_params *p;
    float lo_x, hi_x, lo_y, hi_y; /* reflection bounds */
} gs_plane;

static float gs_pixel(const gs_plane *g, int64_t r, int64_t c) {
    if (g->p->pad == GS_ZEROS) {
        if (r < 0 || r >= g->H || c < 0 || c >= g->W) return 0;
    } else if (g->p->pad == GS_BORDER) {
        r = r < 0 ? 0 : r >= g->H ? g->H - 1 : r;
        c = c < 0 ? 0 : c >= g->W ? g->W - 1 : c;
    } else {
        c = (int64_t)gs_reflect((float)c, g->lo_x, g->hi_x);
        r = (int64_t)gs_reflect((float)r, g->lo_y, g->hi_y);
        r = r < 0 ? 0 : r >= g->H ? g->H - 1 : r;
        c = c < 0 ? 0 : c >= g->W ? g->W - 1 : c;
    }
    return g->img[r * g->W + c];
}

static void gs_cubic_coeffs(float t, float co[4]) {
    const float A = -0.75f;
    float x = fabsf(t) + 1.0f;
    co[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    x = fabsf(t);
    co[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    x = 1.0f - fabsf(t);
    co[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
    x = 2.0f - fabsf(t);
    co[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}

static float gs_sample(const gs_plane *g, float x, float y) {
    const gs_params *p = g->p;
    if (p->mode != GS_BICUBIC) {
        if (p->pad == GS_BORDER) {
            x = fminf(fmaxf(x, 0.0f), (float)(g->W - 1));
            y = fminf(fmaxf(y, 0.0f), (float)(g->H - 1));
        } else if (p->pad == GS_REFLECTION) {
            x = gs_reflect(x, g->lo_x, g->hi_x);
            y = gs_reflect(y, g->lo_y, g->hi_y);
        }
    }
    if (p->mode == GS_NEAREST) return gs_pixel(g, (int64_t)nearbyintf(y), (int64_t)nearbyintf(x));
    if (p->mode == GS_BILINEAR) {
        float fx = floorf(x), fy = floorf(y);
        int64_t x1 = (int64_t)fx, y1 = (int64_t)fy;
        float dx = x - fx, dy = y - fy;
        float p11 = gs_pixel(g, y1, x1), p12 = gs_pixel(g, y1, x1 + 1);
        float p21 = gs_pixel(g, y1 + 1, x1), p22 = gs_pixel(g, y1 + 1, x1 + 1);
        return (1 - dy) * ((1 - dx) * p11 + dx * p12) + dy * ((1 - dx) * p21 + dx * p22);
    }
    float fx = floorf(x), fy = floorf(y);
    int64_t x0 = (int64_t)fx - 1, y0 = (int64_t)fy - 1;
    float cx[4], cy[4], rows[4];
    gs_cubic_coeffs(x - fx, cx);
    gs_cubic_coeffs(y - fy, cy);
    for (int i = 0; i < 4; i++) {
        rows[i] = 0;
        for (int j = 0; j < 4; j++) rows[i] += cx[j] * gs_pixel(g, y0 + i, x0 + j);
    }
    return cy[0] * rows[0] + cy[1] * rows[1] + cy[2] * rows[2] + cy[3] * rows[3];
}

static frt_status gs_kernel(const frt_step *s, frt_exec *x) {
    const gs_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *gv = &x->values[s->in[1]];
    int64_t N = xv->dims[0], C = xv->dims[1], H = xv->dims[2], W = xv->dims[3];
    int64_t Ho = gv->dims[1], Wo = gv->dims[2];
    if (gv->dims[0] != N) return frt_step_fail(s, FRT_ERR_SHAPE, "X and grid differ in batch");
    const float *X = xv->data, *G = gv->data;
    float *Y = x->values[s->out[0]].data;
    if (H == 0 || W == 0) {
        memset(Y, 0, (size_t)(N * C * Ho * Wo) * sizeof(float));
        return FRT_OK;
    }
    gs_plane pl = {NULL, H, W, p, 0, 0, 0, 0};
    if (p->align) {
        pl.hi_x = (float)(W - 1);
        pl.hi_y = (float)(H - 1);
    } else {
        pl.lo_x = pl.lo_y = -0.5f;
        pl.hi_x = (float)W - 0.5f;
        pl.hi_y = (float)H - 0.5f;
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            pl.img = X + (n * C + c) * H * W;
            const float *gr = G + n * Ho * Wo * 2;
            float *yo = Y + (n * C + c) * Ho * Wo;
            for (int64_t i = 0; i < Ho * Wo; i++) {
                float gx = gr[2 * i], gy = gr[2 * i + 1];
                float fx = p->align ? (gx + 1) * 0.5f * (float)(W - 1) : ((gx + 1) * (float)W - 1) * 0.5f;
                float fy = p->align ? (gy + 1) * 0.5f * (float)(H - 1) : ((gy + 1) * (float)H - 1) * 0.5f;
                yo[i] = isfinite(fx) && isfinite(fy) && fabsf(fx) < 1e9f && fabsf(fy) < 1e9f
                            ? gs_sample(&pl, fx, fy)
                            : 0.0f;
            }
        }
    return FRT_OK;
}

static frt_status gs_select(frt_op_ctx *c, frt_kernel *k) {
    gs_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    frt_status st = gs_parse(c, p);
    if (st) return st;
    static const char *const names[3] = {"gridsample_bilinear_f32", "gridsample_nearest_f32",
                                         "gridsample_bicubic_f32"};
    k->name = names[p->mode];
    k->fn = gs_kernel;
    k->params = p;
    return FRT_OK;
}

FRT_OP_IMPL(grid_sample, GridSample, gs_infer, gs_select);
