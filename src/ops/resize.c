/* Resize (opset 10+) and Upsample (opsets 7-10).
 *
 *   Upsample-7:  Upsample(X) with the scales attribute; Upsample-9/-10 and Resize-10: (X, scales).
 *                Coordinates are asymmetric (x / scale) and nearest takes the floor.
 *   Resize-11+:  Resize(X, roi?, scales?, sizes?): exactly one of scales / sizes (an empty tensor
 *                counts as absent); attributes coordinate_transformation_mode (half_pixel,
 *                pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn,
 *                tf_crop_and_resize, half_pixel_symmetric), mode (nearest, linear, cubic),
 *                nearest_mode (round_prefer_floor, round_prefer_ceil, floor, ceil), cubic_coeff_a,
 *                exclude_outside, extrapolation_value. Opset 18's axes attribute is supported;
 *                antialias=1 and keep_aspect_ratio_policy other than stretch are not.
 *
 * Output dim d = floor(in_d * scale_d) with scales, sizes[d] with sizes (then scale_d =
 * sizes[d] / in_d). The mapping of output index x to an input coordinate uses scale_d and the
 * "output length" scale_d * in_d, as ONNX's reference does. Every mode is separable: per dim, each
 * output index reads a few input indices (taps, clamped into the input) with weights (nearest: 1
 * tap; linear: floor and floor + 1; cubic: floor - 1 .. floor + 2 with the Keys kernel of
 * coefficient a; exclude_outside zeroes taps outside the input and renormalizes), or lies outside
 * the crop (tf_crop_and_resize: extrapolation_value).
 *
 * Kernels (per-dim tap tables computed at select when the shapes are known, else per run in
 * scratch):
 *   resize_nearest  any fixed-size dtype: the innermost dim is a typed gather, outer dims copy
 *                   rows, and repeat the previous output row with memcpy when it reads the same
 *                   input row.
 *   resize_float    linear / cubic on float32: one pass per resized dim (dims left unchanged are
 *                   skipped; an enlarged innermost dim first, the others in order), rows combined
 *                   as whole contiguous runs, ping-ponging between two scratch buffers.
 */
#include <math.h>
#include <string.h>

#include "dtype_util.h"
#include "op.h"

#if defined(__GNUC__)
typedef uint16_t __attribute__((may_alias)) u16a;
typedef uint32_t __attribute__((may_alias)) u32a;
typedef uint64_t __attribute__((may_alias)) u64a;
#else
typedef uint16_t u16a;
typedef uint32_t u32a;
typedef uint64_t u64a;
#endif

enum { M_NEAREST = 0, M_LINEAR = 1, M_CUBIC = 2 };
enum {
    CT_HALF_PIXEL = 0,
    CT_PYTORCH_HALF_PIXEL,
    CT_ALIGN_CORNERS,
    CT_ASYMMETRIC,
    CT_TF_HALF_PIXEL_FOR_NN,
    CT_TF_CROP_AND_RESIZE,
    CT_HALF_PIXEL_SYMMETRIC
};
enum { N_ROUND_PREFER_FLOOR = 0, N_ROUND_PREFER_CEIL, N_FLOOR, N_CEIL };

/* Taps of one dim: output index o reads idx[o*nt + t] with weight w[o*nt + t]; outside[o]: the
 * output is extrapolation_value. identity: O == I and o reads o alone. */
typedef struct dim_table {
    int64_t I, O;
    int nt;
    bool identity;
    int64_t *idx;
    float *w;
    uint8_t *outside;
} dim_table;

typedef struct resize_params {
    int mode, ctm, nearest;
    float cubic_a, extrap;
    bool exclude_outside;
    int scales_in, sizes_in, roi_in;  /* input indices, -1 when the form has none */
    const float *scales_attr;         /* Upsample-7 */
    size_t n_scales_attr;
    int n_axes;                       /* opset 18 axes (0: all dims) */
    int axes[FRT_MAX_RANK];
    /* Tables computed at select for these shapes (rank -1: none) */
    int rank;
    int64_t in_dims[FRT_MAX_RANK], out_dims[FRT_MAX_RANK];
    dim_table tab[FRT_MAX_RANK];
} resize_params;

/* ---------------------------------------------------------------------------------------------- */
/* Attributes                                                                                      */
/* ---------------------------------------------------------------------------------------------- */

static int str_index(const char *s, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static frt_status read_params(const frt_op_ctx *c, resize_params *p) {
    memset(p, 0, sizeof *p);
    p->rank = -1;
    p->scales_in = p->sizes_in = p->roi_in = -1;
    p->cubic_a = -0.75f;
    p->ctm = CT_ASYMMETRIC;
    p->nearest = N_FLOOR;
    bool upsample = strcmp(c->node->op_type, "Upsample") == 0;
    bool modern = !upsample && c->opset >= 11;
    const char *mode = frt_attr_string(c->node, "mode", "nearest");
    if (strcmp(mode, "nearest") == 0) p->mode = M_NEAREST;
    else if (strcmp(mode, "linear") == 0 || (upsample && strcmp(mode, "bilinear") == 0))
        p->mode = M_LINEAR;
    else if (modern && strcmp(mode, "cubic") == 0) p->mode = M_CUBIC;
    else return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "mode '%s' is not supported", mode);
    if (upsample && c->opset < 9) {
        size_t n;
        p->scales_attr = frt_attr_floats(c->node, "scales", &n);
        if (!p->scales_attr)
            return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute 'scales' is required");
        p->n_scales_attr = n;
        return frt_op_check_arity(c, 1, 1, 1, 1);
    }
    if (!modern) {
        p->scales_in = 1;
        return frt_op_check_arity(c, 2, 2, 1, 1);
    }
    frt_status st = frt_op_check_arity(c, c->opset >= 13 ? 1 : 3, 4, 1, 1);
    if (st) return st;
    p->roi_in = 1;
    p->scales_in = 2;
    p->sizes_in = 3;
    static const char *const cts[] = {"half_pixel",           "pytorch_half_pixel",
                                      "align_corners",        "asymmetric",
                                      "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                      "half_pixel_symmetric"};
    const char *ct = frt_attr_string(c->node, "coordinate_transformation_mode", "half_pixel");
    p->ctm = str_index(ct, cts, c->opset >= 19 ? 7 : 6);
    if (p->ctm < 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "coordinate_transformation_mode '%s' is not "
                           "supported", ct);
    static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const char *nm = frt_attr_string(c->node, "nearest_mode", "round_prefer_floor");
    p->nearest = str_index(nm, nms, 4);
    if (p->nearest < 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "nearest_mode '%s' is not supported", nm);
    p->cubic_a = frt_attr_float(c->node, "cubic_coeff_a", -0.75f);
    p->exclude_outside = frt_attr_int(c->node, "exclude_outside", 0) != 0;
    p->extrap = frt_attr_float(c->node, "extrapolation_value", 0.0f);
    if (frt_attr_int(c->node, "antialias", 0) != 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "antialias=1 is not supported");
    const char *kar = frt_attr_string(c->node, "keep_aspect_ratio_policy", "stretch");
    if (strcmp(kar, "stretch") != 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "keep_aspect_ratio_policy '%s' is not "
                           "supported (stretch is)", kar);
    size_t na;
    const int64_t *axes = c->opset >= 18 ? frt_attr_ints(c->node, "axes", &na) : NULL;
    if (axes) {
        if (na == 0 || na > FRT_MAX_RANK)
            return frt_op_fail(c, FRT_ERR_SHAPE, "axes has %zu entries", na);
        const frt_value *x = c->in[0];
        if (x->rank < 0)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "axes with an input of unknown rank");
        unsigned seen = 0;
        for (size_t i = 0; i < na; i++) {
            int d = frt_norm_axis(axes[i], x->rank);
            if (d < 0 || (seen >> d) & 1)
                return frt_op_fail(c, FRT_ERR_SHAPE, "axes entry %lld is out of range or repeated",
                                   (long long)axes[i]);
            seen |= 1u << d;
            p->axes[i] = d;
        }
        p->n_axes = (int)na;
    }
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Geometry                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

static const frt_value *opt_in(frt_value *const *in, int n_in, int i) {
    if (i < 0 || i >= n_in || !in[i]) return NULL;
    if (in[i]->rank == 1 && in[i]->dims[0] == 0) return NULL; /* empty = absent */
    return in[i];
}

/* Per dim of x: output size od (-1 unknown), scale and output length (scale * in, or the size).
 * *known: everything needed is available. */
static frt_status geometry(const frt_op_ctx *c, const resize_params *p, frt_value *const *in,
                           int n_in, int64_t *od, double *scale, double *olen, bool *known) {
    const frt_value *x = in[0];
    int r = x->rank;
    *known = false;
    for (int d = 0; d < r; d++) {
        od[d] = x->dims[d];
        scale[d] = 1;
        olen[d] = (double)x->dims[d];
    }
    const frt_value *sc = opt_in(in, n_in, p->scales_in), *sz = opt_in(in, n_in, p->sizes_in);
    if (p->sizes_in >= 0 && sc && sz)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "only one of scales and sizes may be given");
    if (!p->scales_attr && !sc && !sz) {
        /* an input that is present but of unknown length may still be the one */
        bool maybe = false;
        for (int k = 0; k < 2; k++) {
            int i = k ? p->sizes_in : p->scales_in;
            if (i >= 0 && i < n_in && in[i] && (in[i]->rank != 1 || in[i]->dims[0] < 0))
                maybe = true;
        }
        if (maybe) {
            for (int d = 0; d < r; d++) od[d] = -1;
            return FRT_OK;
        }
        return frt_op_fail(c, FRT_ERR_MALFORMED, "one of scales and sizes is required");
    }
    int n_axes = p->n_axes ? p->n_axes : r;
    int ax[FRT_MAX_RANK];
    for (int i = 0; i < n_axes; i++) ax[i] = p->n_axes ? p->axes[i] : i;
    const frt_value *v = sz ? sz : sc;
    int64_t len = p->scales_attr ? (int64_t)p->n_scales_attr : v->rank == 1 ? v->dims[0] : -1;
    if (v && v->rank >= 0 && v->rank != 1)
        return frt_op_fail(c, FRT_ERR_SHAPE, "%s must be 1-D", sz ? "sizes" : "scales");
    if (r < 0) return FRT_OK;
    if (len >= 0 && len != n_axes)
        return frt_op_fail(c, FRT_ERR_SHAPE, "%s has %lld entries, expected %d",
                           sz ? "sizes" : "scales", (long long)len, n_axes);
    if (v && sz && !frt_dtype_is_int(v->dtype))
        return frt_op_fail(c, FRT_ERR_SHAPE, "sizes must be int64");
    if (v && !sz && !frt_dtype_is_float(v->dtype))
        return frt_op_fail(c, FRT_ERR_SHAPE, "scales must be float");
    if (!p->scales_attr && (!v->data || len < 0)) {
        for (int i = 0; i < n_axes; i++) od[ax[i]] = -1;
        return FRT_OK;
    }
    for (int i = 0; i < n_axes; i++) {
        int d = ax[i];
        int64_t I = x->dims[d];
        if (sz) {
            int64_t o = frt_ld_i64(v->dtype, v->data, i);
            if (o < 0) return frt_op_fail(c, FRT_ERR_SHAPE, "sizes[%d] is %lld", i, (long long)o);
            od[d] = o;
            olen[d] = (double)o;
            scale[d] = I > 0 ? (double)o / (double)I : 1;
        } else {
            double s = p->scales_attr ? p->scales_attr[i] : frt_ld_f64(v->dtype, v->data, i);
            if (!(s > 0) || s > 1e9)
                return frt_op_fail(c, FRT_ERR_SHAPE, "scales[%d] is %g (must be > 0)", i, s);
            scale[d] = s;
            if (I < 0) {
                od[d] = -1;
                continue;
            }
            olen[d] = s * (double)I;
            od[d] = (int64_t)floor(olen[d]);
        }
    }
    *known = frt_shape_known(x);
    return FRT_OK;
}

static frt_status resize_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    resize_params p;
    if ((st = read_params(c, &p))) return st;
    const frt_value *x = c->in[0];
    if (p.mode != M_NEAREST && x->dtype != FRT_FLOAT32)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "%s resize of %s is not supported (float32 is; "
                           "nearest takes any dtype)", p.mode == M_LINEAR ? "linear" : "cubic",
                           frt_dtype_name((frt_dtype)x->dtype));
    if (x->rank < 0) {
        frt_op_set_shape(c->out[0], x->dtype, -1, NULL);
        return FRT_OK;
    }
    int64_t od[FRT_MAX_RANK];
    double scale[FRT_MAX_RANK], olen[FRT_MAX_RANK];
    bool known;
    if ((st = geometry(c, &p, c->in, c->n_in, od, scale, olen, &known))) return st;
    frt_op_set_shape(c->out[0], x->dtype, x->rank, od);
    if (x->rank >= 0 && frt_shape_known(c->out[0]) && c->out[0]->numel < 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "output has too many elements");
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Tap tables                                                                                      */
/* ---------------------------------------------------------------------------------------------- */

static int taps_of(int mode) { return mode == M_NEAREST ? 1 : mode == M_LINEAR ? 2 : 4; }

static size_t table_bytes(int64_t O, int nt) {
    size_t n = (size_t)O * (size_t)nt * (sizeof(int64_t) + sizeof(float)) + (size_t)O;
    return (n + 63) & ~(size_t)63;
}

/* Input coordinate of output index o of dim d (see the file comment). */
static double src_coord(const resize_params *p, int64_t o, int64_t I, int64_t O, double s,
                        double olen, double r0, double r1) {
    double x = (double)o;
    switch (p->ctm) {
    case CT_HALF_PIXEL: return (x + 0.5) / s - 0.5;
    case CT_PYTORCH_HALF_PIXEL: return olen > 1 ? (x + 0.5) / s - 0.5 : 0;
    case CT_ALIGN_CORNERS: return olen == 1 ? 0 : x * (double)(I - 1) / (olen - 1);
    case CT_TF_HALF_PIXEL_FOR_NN: return (x + 0.5) / s;
    case CT_TF_CROP_AND_RESIZE:
        return (olen > 1 ? x * (r1 - r0) * (double)(I - 1) / (olen - 1)
                         : (r1 - r0) * (double)(I - 1) / 2) +
               r0 * (double)(I - 1);
    case CT_HALF_PIXEL_SYMMETRIC: {
        double adj = (double)O / olen, center = (double)I / 2;
        return center * (1 - adj) + (x + 0.5) / s - 0.5;
    }
    default: return x / s; /* asymmetric */
    }
}

static double cubic_w(double t, double a) { /* Keys kernel, |t| in [0, 2] */
    t = fabs(t);
    if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    return 0;
}

/* Fills t for one dim (storage at mem, table_bytes(O, nt) bytes, 8-aligned). */
static void build_table(const resize_params *p, dim_table *t, int64_t I, int64_t O, double s,
                        double olen, double r0, double r1, void *mem) {
    int nt = taps_of(p->mode);
    t->I = I;
    t->O = O;
    t->nt = nt;
    t->idx = mem;
    t->w = (float *)(t->idx + O * nt);
    t->outside = (uint8_t *)(t->w + O * nt);
    bool ident = O == I;
    for (int64_t o = 0; o < O; o++) {
        double xo = src_coord(p, o, I, O, s, olen, r0, r1);
        int64_t *ix = t->idx + o * nt;
        float *w = t->w + o * nt;
        t->outside[o] = 0;
        if (p->ctm == CT_TF_CROP_AND_RESIZE && (xo < 0 || xo > (double)(I - 1))) {
            t->outside[o] = 1;
            for (int k = 0; k < nt; k++) {
                ix[k] = 0;
                w[k] = 0;
            }
            ident = false;
            continue;
        }
        double fl = floor(xo), fr = xo - fl;
        if (!(fl > -1e15 && fl < 1e15)) fl = 0; /* NaN / huge: clamped below anyway */
        int64_t i0 = (int64_t)fl;
        double cw[4];
        int64_t ci[4];
        if (p->mode == M_NEAREST) {
            int64_t k = i0;
            if (fr != 0) {
                switch (p->nearest) {
                case N_ROUND_PREFER_FLOOR: k = fr <= 0.5 ? i0 : i0 + 1; break;
                case N_ROUND_PREFER_CEIL: k = fr < 0.5 ? i0 : i0 + 1; break;
                case N_FLOOR: k = i0; break;
                default: k = i0 + 1; break;
                }
            }
            ci[0] = k;
            cw[0] = 1;
        } else if (p->mode == M_LINEAR) {
            ci[0] = i0;
            ci[1] = i0 + 1;
            cw[0] = 1 - fr;
            cw[1] = fr;
        } else {
            for (int k = 0; k < 4; k++) {
                ci[k] = i0 - 1 + k;
                cw[k] = cubic_w(fr - (k - 1), p->cubic_a);
            }
        }
        if (p->exclude_outside && nt > 1) {
            double sum = 0;
            for (int k = 0; k < nt; k++) {
                if (ci[k] < 0 || ci[k] >= I) cw[k] = 0;
                sum += cw[k];
            }
            if (sum != 0)
                for (int k = 0; k < nt; k++) cw[k] /= sum;
        }
        for (int k = 0; k < nt; k++) {
            ix[k] = ci[k] < 0 ? 0 : ci[k] >= I ? I - 1 : ci[k];
            w[k] = (float)cw[k];
        }
        if (ident) {
            for (int k = 0; k < nt; k++)
                if (w[k] != 0 && (ix[k] != o || w[k] != 1)) ident = false;
        }
    }
    t->identity = ident;
}

/* Builds the tables of every dim of x -> y into mem (tables_bytes of them). */
static size_t tables_bytes(const resize_params *p, int r, const int64_t *od) {
    size_t n = 0;
    for (int d = 0; d < r; d++) n += table_bytes(od[d], taps_of(p->mode));
    return n;
}

static void build_tables(const resize_params *p, int r, const int64_t *id, const int64_t *od,
                         const double *scale, const double *olen, const frt_value *roi,
                         dim_table *tab, char *mem) {
    for (int d = 0; d < r; d++) {
        double r0 = 0, r1 = 1;
        if (roi && p->ctm == CT_TF_CROP_AND_RESIZE) {
            int n_axes = p->n_axes ? p->n_axes : r, slot = d;
            if (p->n_axes) {
                slot = -1;
                for (int i = 0; i < p->n_axes; i++)
                    if (p->axes[i] == d) slot = i;
            }
            if (slot >= 0 && roi->numel == 2 * n_axes) {
                r0 = frt_ld_f64(roi->dtype, roi->data, slot);
                r1 = frt_ld_f64(roi->dtype, roi->data, slot + n_axes);
            }
        }
        build_table(p, &tab[d], id[d], od[d], scale[d], olen[d], r0, r1, mem);
        mem += table_bytes(od[d], taps_of(p->mode));
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Kernels                                                                                         */
/* ---------------------------------------------------------------------------------------------- */

/* A context for the infer-side helpers inside a kernel (messages name the node). */
static void step_ctx(const frt_step *s, frt_exec *x, frt_value **in, frt_op_ctx *c) {
    for (int i = 0; i < s->n_in; i++) in[i] = s->in[i] < 0 ? NULL : &x->values[s->in[i]];
    memset(c, 0, sizeof *c);
    c->node = s->ir;
    c->opset = s->ir->opset;
    c->n_in = s->n_in;
    c->n_out = s->n_out;
    c->in = in;
}

/* The tables for this run: the ones made at select when the shapes match, else built in mem. */
static frt_status run_tables(const frt_step *s, frt_exec *x, const dim_table **out, char **mem) {
    const resize_params *p = s->k.params;
    frt_value *in[4];
    if (s->n_in > 4) return frt_step_fail(s, FRT_ERR_INTERNAL, "bad arity");
    const frt_value *xv = &x->values[s->in[0]], *y = &x->values[s->out[0]];
    int r = xv->rank;
    if (p->rank == r && memcmp(p->in_dims, xv->dims, (size_t)r * 8) == 0 &&
        memcmp(p->out_dims, y->dims, (size_t)r * 8) == 0) {
        *out = p->tab;
        return FRT_OK;
    }
    frt_op_ctx c;
    step_ctx(s, x, in, &c);
    int64_t od[FRT_MAX_RANK];
    double scale[FRT_MAX_RANK], olen[FRT_MAX_RANK];
    bool known;
    frt_status st = geometry(&c, p, in, s->n_in, od, scale, olen, &known);
    if (st) return st;
    for (int d = 0; d < r; d++)
        if (od[d] != y->dims[d])
            return frt_step_fail(s, FRT_ERR_INTERNAL, "output dim %d is %lld, expected %lld", d,
                                 (long long)y->dims[d], (long long)od[d]);
    dim_table *tab = (dim_table *)*mem;
    *mem += sizeof(dim_table) * FRT_MAX_RANK;
    build_tables(p, r, xv->dims, od, scale, olen, opt_in(in, s->n_in, p->roi_in), tab, *mem);
    *mem += tables_bytes(p, r, od);
    *out = tab;
    return FRT_OK;
}

static void nearest_row(char *dst, const char *src, const dim_table *t, size_t es) {
    int64_t O = t->O;
    const int64_t *ix = t->idx;
    switch (es) {
    case 1: for (int64_t o = 0; o < O; o++) dst[o] = src[ix[o]]; break;
    case 2: for (int64_t o = 0; o < O; o++) ((u16a *)dst)[o] = ((const u16a *)src)[ix[o]]; break;
    case 4: for (int64_t o = 0; o < O; o++) ((u32a *)dst)[o] = ((const u32a *)src)[ix[o]]; break;
    case 8: for (int64_t o = 0; o < O; o++) ((u64a *)dst)[o] = ((const u64a *)src)[ix[o]]; break;
    default:
        for (int64_t o = 0; o < O; o++) memcpy(dst + (size_t)o * es, src + ix[o] * (int64_t)es, es);
    }
}

/* Writes the extrapolation element pat (es bytes) n times. */
static void fill_pat(char *dst, const unsigned char *pat, int64_t n, size_t es) {
    for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * es, pat, es);
}

/* Nearest over dims d..r-1: istr/ostr byte strides. An output row that reads the same input row
 * as the one before is a memcpy of it; an identity innermost dim is a memcpy of the input row.
 * Outputs outside the crop (tf_crop_and_resize) get pat. */
static void nearest_rec(char *dst, const char *src, int d, int r, const dim_table *tab,
                        const int64_t *istr, const int64_t *ostr, size_t es,
                        const unsigned char *pat) {
    const dim_table *t = &tab[d];
    if (d == r - 1) {
        if (t->identity) memcpy(dst, src, (size_t)t->O * es);
        else nearest_row(dst, src, t, es);
        if (pat)
            for (int64_t o = 0; o < t->O; o++)
                if (t->outside[o]) memcpy(dst + (size_t)o * es, pat, es);
        return;
    }
    for (int64_t o = 0; o < t->O; o++) {
        char *dr = dst + o * ostr[d];
        if (pat && t->outside[o]) fill_pat(dr, pat, ostr[d] / (int64_t)es, es);
        else if (o > 0 && t->idx[o] == t->idx[o - 1] && !(pat && t->outside[o - 1]))
            memcpy(dr, dr - ostr[d], (size_t)ostr[d]);
        else nearest_rec(dr, src + t->idx[o] * istr[d], d + 1, r, tab, istr, ostr, es, pat);
    }
}

static frt_status nearest_kernel(const frt_step *s, frt_exec *x) {
    const frt_value *xv = &x->values[s->in[0]];
    frt_value *y = &x->values[s->out[0]];
    if (y->numel == 0) return FRT_OK;
    size_t es = frt_dtype_size((frt_dtype)y->dtype);
    const dim_table *tab;
    char *mem = x->scratch;
    frt_status st = run_tables(s, x, &tab, &mem);
    if (st) return st;
    int r = y->rank;
    if (r == 0) {
        memcpy(y->data, xv->data, es);
        return FRT_OK;
    }
    int64_t istr[FRT_MAX_RANK], ostr[FRT_MAX_RANK], ia = (int64_t)es, oa = (int64_t)es;
    for (int d = r - 1; d >= 0; d--) {
        istr[d] = ia;
        ostr[d] = oa;
        ia *= xv->dims[d];
        oa *= y->dims[d];
    }
    const resize_params *p = s->k.params;
    unsigned char pat[16] = {0};
    if (p->ctm == CT_TF_CROP_AND_RESIZE && es <= 16) frt_st_f64(y->dtype, pat, 0, p->extrap);
    nearest_rec(y->data, xv->data, 0, r, tab, istr, ostr, es,
                p->ctm == CT_TF_CROP_AND_RESIZE && es <= 16 ? pat : NULL);
    return FRT_OK;
}

/* dst[i] = w * src[i] (add: dst[i] += w * src[i]), i < n; dst and src do not overlap. Blocks of
 * 8 independent lanes, which the compiler turns into vector code at -O2. */
static void row_scale(float *restrict dst, const float *restrict src, float w, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++) dst[i + l] = w * src[i + l];
    for (; i < n; i++) dst[i] = w * src[i];
}
static void row_axpy(float *restrict dst, const float *restrict src, float w, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; l++) dst[i + l] += w * src[i + l];
    for (; i < n; i++) dst[i] += w * src[i];
}

/* The innermost dim (inner == 1): out[o] = sum over taps of w * in[idx], for O outputs. */
static void last_dim_pass(float *restrict dst, const float *restrict s, const dim_table *t,
                          float extrap) {
    int64_t O = t->O;
    const int64_t *ix = t->idx;
    const float *w = t->w;
    switch (t->nt) {
    case 2:
        for (int64_t o = 0; o < O; o++)
            dst[o] = w[2 * o] * s[ix[2 * o]] + w[2 * o + 1] * s[ix[2 * o + 1]];
        break;
    case 4:
        for (int64_t o = 0; o < O; o++) {
            const int64_t *i4 = ix + 4 * o;
            const float *w4 = w + 4 * o;
            dst[o] = (w4[0] * s[i4[0]] + w4[1] * s[i4[1]]) + (w4[2] * s[i4[2]] + w4[3] * s[i4[3]]);
        }
        break;
    default:
        for (int64_t o = 0; o < O; o++) dst[o] = w[o] * s[ix[o]];
    }
    for (int64_t o = 0; o < O; o++)
        if (t->outside[o]) dst[o] = extrap;
}

/* One interpolation pass along dim d: src has dims cur (rank r), dst the same with cur[d] -> O. */
static void float_pass(float *restrict dst, const float *restrict src, int r, const int64_t *cur,
                       int d, const dim_table *t, float extrap) {
    int64_t outer = 1, inner = 1, I = cur[d], O = t->O;
    for (int k = 0; k < d; k++) outer *= cur[k];
    for (int k = d + 1; k < r; k++) inner *= cur[k];
    int nt = t->nt;
    for (int64_t a = 0; a < outer; a++) {
        const float *s = src + a * I * inner;
        float *o0 = dst + a * O * inner;
        if (inner == 1) {
            last_dim_pass(o0, s, t, extrap);
            continue;
        }
        for (int64_t o = 0; o < O; o++) {
            float *dr = o0 + o * inner;
            const int64_t *ix = t->idx + o * nt;
            const float *w = t->w + o * nt;
            if (t->outside[o]) {
                for (int64_t i = 0; i < inner; i++) dr[i] = extrap;
                continue;
            }
            row_scale(dr, s + ix[0] * inner, w[0], inner);
            for (int k = 1; k < nt; k++)
                if (w[k] != 0) row_axpy(dr, s + ix[k] * inner, w[k], inner);
        }
    }
}

/* The order of the passes: the dims in order, except that an enlarged innermost dim goes first
 * when the other dims grow too: its pass gathers element by element (last_dim_pass) while the
 * others combine whole rows, so it runs on the smaller tensor (deeplabv3's final 28x28 -> 224x224: 132 K gathers instead of 1 M).
 * The result differs from the in-order passes by rounding only (the same separable weights). */
static void pass_order(int r, const int64_t *id, const int64_t *od, int *ord) {
    int n = 0;
    int64_t in_outer = 1, out_outer = 1; /* the other dims grow: the gathers are fewer first */
    for (int d = 0; d + 1 < r; d++) in_outer *= id[d], out_outer *= od[d];
    if (r > 1 && od[r - 1] > id[r - 1] && in_outer < out_outer) ord[n++] = r - 1;
    for (int d = 0; d < r; d++)
        if (!(n && d == r - 1 && ord[0] == r - 1)) ord[n++] = d;
}

/* Elements of the largest intermediate (dims resized so far, in pass order). */
static int64_t max_intermediate(int r, const int64_t *id, const int64_t *od) {
    int64_t cur[FRT_MAX_RANK], best = 0;
    int ord[FRT_MAX_RANK];
    pass_order(r, id, od, ord);
    memcpy(cur, id, (size_t)r * 8);
    for (int i = 0; i < r; i++) {
        int d = ord[i];
        cur[d] = od[d];
        int64_t n = frt_shape_numel(cur, r);
        if (n > best) best = n;
    }
    return best;
}

static frt_status float_kernel(const frt_step *s, frt_exec *x) {
    const resize_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]];
    frt_value *y = &x->values[s->out[0]];
    if (y->numel == 0) return FRT_OK;
    const dim_table *tab;
    char *mem = x->scratch;
    frt_status st = run_tables(s, x, &tab, &mem);
    if (st) return st;
    int r = y->rank;
    int ord[FRT_MAX_RANK];
    pass_order(r, xv->dims, y->dims, ord);
    int last = -1;
    for (int i = 0; i < r; i++)
        if (!tab[ord[i]].identity) last = i;
    if (last < 0) {
        memcpy(y->data, xv->data, (size_t)y->numel * sizeof(float));
        return FRT_OK;
    }
    mem = (char *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
    int64_t big = max_intermediate(r, xv->dims, y->dims);
    float *buf[2] = {(float *)mem, (float *)mem + ((big + 15) & ~(int64_t)15)};
    int64_t cur[FRT_MAX_RANK];
    memcpy(cur, xv->dims, (size_t)r * 8);
    const float *src = xv->data;
    int pb = 0;
    for (int i = 0; i <= last; i++) {
        int d = ord[i];
        if (tab[d].identity) continue;
        float *dst = i == last ? (float *)y->data : buf[pb];
        float_pass(dst, src, r, cur, d, &tab[d], p->extrap);
        cur[d] = tab[d].O;
        src = dst;
        pb ^= 1;
    }
    return FRT_OK;
}

static size_t resize_scratch(const frt_step *s, const frt_value *values) {
    const resize_params *p = s->k.params;
    const frt_value *xv = &values[s->in[0]], *y = &values[s->out[0]];
    int r = y->rank;
    if (!frt_shape_known(xv) || !frt_shape_known(y)) return 0; /* sized again once known */
    size_t n = sizeof(dim_table) * FRT_MAX_RANK + tables_bytes(p, r, y->dims) + 64;
    if (p->mode != M_NEAREST)
        n += 2 * ((size_t)max_intermediate(r, xv->dims, y->dims) + 16) * sizeof(float);
    return n;
}

static frt_status resize_select(frt_op_ctx *c, frt_kernel *k) {
    resize_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    frt_status st = read_params(c, p);
    if (st) return st;
    const frt_value *x = c->in[0], *y = c->out[0];
    if (!frt_dtype_size((frt_dtype)x->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                           frt_dtype_name((frt_dtype)x->dtype));
    /* tables now when the shapes and the scales/sizes (and roi) are known */
    int64_t od[FRT_MAX_RANK];
    double scale[FRT_MAX_RANK], olen[FRT_MAX_RANK];
    bool known = false;
    if (x->rank >= 0 && (st = geometry(c, p, c->in, c->n_in, od, scale, olen, &known)))
        return st;
    if (x->rank >= 0 && frt_shape_known(y) && known) {
        const frt_value *roi = opt_in(c->in, c->n_in, p->roi_in);
        if (!(p->ctm == CT_TF_CROP_AND_RESIZE && roi && !roi->data)) {
            char *mem = frt_arena_alloc(c->arena, tables_bytes(p, x->rank, od), 64);
            if (!mem) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
            build_tables(p, x->rank, x->dims, od, scale, olen, roi, p->tab, mem);
            p->rank = x->rank;
            memcpy(p->in_dims, x->dims, sizeof p->in_dims);
            memcpy(p->out_dims, od, sizeof p->out_dims);
        }
    }
    k->params = p;
    k->scratch = resize_scratch;
    if (p->mode == M_NEAREST) {
        k->name = "resize_nearest";
        k->fn = nearest_kernel;
    } else {
        k->name = p->mode == M_LINEAR ? "resize_linear_f32" : "resize_cubic_f32";
        k->fn = float_kernel;
    }
    return FRT_OK;
}

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(resize, Resize, resize_infer, resize_select);
FRT_OP_IMPL(resize, Upsample, resize_infer, resize_select);
