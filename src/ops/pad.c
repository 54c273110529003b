/* Pad, all opset forms, for any dtype with a fixed element size (the kernels move bytes).
 *
 *   opset 1-10:  Pad(data) with attributes pads (opset 1: paddings), mode, value (float,
 *                converted to the data dtype; default 0).
 *   opset 11-17: Pad(data, pads, constant_value?) with pads an int64 1-D tensor [2 * rank] and
 *                constant_value a scalar (or [1]) of the data dtype, default 0.
 *   opset 18+:   Pad(data, pads, constant_value?, axes?) — with axes (int32/int64, negative counted
 *                from the back, no repeats) pads has 2 * len(axes) entries and the other axes are
 *                not padded.
 * pads is [b_0 .. b_{k-1}, e_0 .. e_{k-1}]: begin and end counts per axis. mode is "constant"
 * (default), "reflect" (mirror without repeating the edge element), "edge" (repeat it) or "wrap"
 * (opset 19: continue periodically from the other end).
 *
 * Semantics: output dim d = in_d + b_d + e_d, and output element o maps per axis to the input
 * coordinate i = o - b_d: inside [0, in_d) it is that element; outside, constant mode gives the
 * value, edge clamps i into the input, reflect mirrors it (-i before, 2*(in_d-1)-i after), wrap
 * takes i modulo in_d.
 * Negative pads therefore crop (the result equals padding the positive sides and then slicing
 * the negative ones away). Errors (FRT_ERR_SHAPE): an output dim < 0, a reflect pad >= in_d,
 * an edge or wrap pad on an empty dim, a pads length that does not match the rank or axes.
 *
 * pads, axes and constant_value are read at select time when they are constants; otherwise the
 * kernel reads them from its inputs at run time. infer computes the output shape whenever pads
 * (and axes) data is available — constants at load, and shape-subgraph values at reshape — and
 * leaves the padded dims -1 otherwise; the runtime then reports that the output shape depends on
 * run-time data (pads computed by compute ops are not supported).
 *
 * Kernels:
 *   pad_nchw_f32  float32 rank 4, constant mode, pads known at select and zero on N and C (the
 *                 usual F.pad / AveragePool export): per plane, rows of fill + memcpy + fill.
 *   pad           the general N-d kernel: trailing unpadded axes are merged into one contiguous
 *                 unit; every output row (the innermost padded axis) is built from one input row
 *                 as fill/replicate + memcpy + fill/replicate, the input row found by mapping
 *                 the outer output indices through the per-axis rule above.
 * Both split rows (planes) over the intra-op pool for large outputs.
 */
#include <math.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>

#include "op.h"
#include "util/threadpool.h"

enum { PAD_CONSTANT = 0, PAD_REFLECT = 1, PAD_EDGE = 2, PAD_WRAP = 3 };

/* Threads from threadpool.h's cost model for `bytes` of output (written once, as many read). */
static int pad_threads(frt_threadpool *tp, size_t bytes) {
    return frt_par_threads(tp, 2.0 * (double)bytes * FRT_PAR_NS_PER_BYTE);
}

/* Per-axis pads over the data's rank. rank is -1 when unknown; known is false when the pad
 * counts are not available yet (non-constant pads or axes at load). */
typedef struct pad_spec {
    int rank;
    bool known;
    int64_t b[FRT_MAX_RANK], e[FRT_MAX_RANK];
} pad_spec;

typedef struct pad_params {
    int mode;
    size_t esize;
    bool spec_known;                    /* spec read at select (constants / attributes) */
    pad_spec spec;
    bool value_known;                   /* value read at select (else from input 2 at run time) */
    unsigned char value[8];             /* constant value, esize bytes */
    const frt_onnx_attr *pads_attr;     /* opset < 11: the pads attribute (model lifetime) */
} pad_params;

static frt_status read_mode(const frt_op_ctx *c, int *mode) {
    const frt_onnx_attr *a = frt_attr_find(c->node, "mode");
    *mode = PAD_CONSTANT;
    if (!a) return FRT_OK;
    if (a->type != FRT_ATTR_STRING)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute 'mode' must be a string");
    if (strcmp(a->s, "constant") == 0) *mode = PAD_CONSTANT;
    else if (strcmp(a->s, "reflect") == 0) *mode = PAD_REFLECT;
    else if (strcmp(a->s, "edge") == 0) *mode = PAD_EDGE;
    else if (strcmp(a->s, "wrap") == 0 && c->opset >= 19) *mode = PAD_WRAP;
    else if (strcmp(a->s, "wrap") == 0)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "mode 'wrap' needs opset 19 (the model has %lld)",
                           (long long)c->opset);
    else
        return frt_op_fail(c, FRT_ERR_MALFORMED,
                           "unknown mode '%s' (expected constant, reflect, edge or wrap)", a->s);
    return FRT_OK;
}

/* Reads an integer 1-D input i: *n its length (-1 unknown), *known whether its values are
 * available (data present, or empty). Absent input: *n = -1, *present = false. */
static frt_status int_list_input(const frt_op_ctx *c, int i, const char *what, bool *present,
                                 int64_t *n, bool *known) {
    *present = false;
    *n = -1;
    *known = false;
    if (i >= c->n_in || !c->in[i]) return FRT_OK;
    const frt_value *v = c->in[i];
    *present = true;
    if (v->dtype != FRT_INT64 && v->dtype != FRT_INT32)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "%s input has dtype %s, expected int64", what,
                           frt_dtype_name((frt_dtype)v->dtype));
    if (v->rank >= 0 && v->rank != 1)
        return frt_op_fail(c, FRT_ERR_SHAPE, "%s input must be 1-D, has rank %d", what, v->rank);
    if (v->rank == 1 && v->dims[0] >= 0) *n = v->dims[0];
    *known = *n == 0 || (*n > 0 && v->data != NULL);
    return FRT_OK;
}

/* Opset < 11: the pads attribute ("paddings" in opset 1), validated; NULL for later opsets. */
static frt_status pads_attr_read(const frt_op_ctx *c, const frt_onnx_attr **out) {
    *out = NULL;
    if (c->opset >= 11) return FRT_OK;
    const frt_onnx_attr *a = frt_attr_find(c->node, "pads");
    if (!a) a = frt_attr_find(c->node, "paddings"); /* opset 1 */
    if (!a || a->type != FRT_ATTR_INTS || (a->n > 0 && !a->ints))
        return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute 'pads' (ints) is required");
    *out = a;
    return FRT_OK;
}

/* Resolves the per-axis pads for data of rank `rank` (-1 unknown) from the attribute a read by
 * pads_attr_read (opset < 11) or the pads/axes inputs. Validates lengths and axes as far as they
 * are known. */
static frt_status pad_spec_make(const frt_op_ctx *c, const frt_onnx_attr *a, int rank,
                                pad_spec *p) {
    memset(p, 0, sizeof *p);
    p->rank = rank;
    frt_status st;
    const int64_t *apads = NULL;  /* attribute pads */
    const frt_value *vpads = NULL, *vaxes = NULL;
    int64_t n, m = -1;
    bool pads_known, have_axes = false, axes_known = true;
    if (c->opset < 11) {
        if ((st = frt_op_check_arity(c, 1, 1, 1, 1))) return st;
        if (!a) return frt_op_fail(c, FRT_ERR_INTERNAL, "pads attribute not resolved");
        apads = a->ints;
        n = (int64_t)a->n;
        pads_known = true;
    } else {
        if ((st = frt_op_check_arity(c, 2, c->opset >= 18 ? 4 : 3, 1, 1))) return st;
        if ((st = frt_op_check_input(c, 1, 0))) return st;
        bool present;
        if ((st = int_list_input(c, 1, "pads", &present, &n, &pads_known))) return st;
        vpads = c->in[1];
        if ((st = int_list_input(c, 3, "axes", &have_axes, &m, &axes_known))) return st;
        if (have_axes) vaxes = c->in[3];
    }
    if (have_axes) {
        if (m >= 0 && n >= 0 && n != 2 * m)
            return frt_op_fail(c, FRT_ERR_SHAPE, "pads has %lld entries, expected %lld (2 * %lld "
                               "axes)", (long long)n, (long long)(2 * m), (long long)m);
        if (m > FRT_MAX_RANK || (rank >= 0 && m > rank))
            return frt_op_fail(c, FRT_ERR_SHAPE, "axes has %lld entries for data of rank %d",
                               (long long)m, rank);
        if (rank < 0 || m < 0 || !axes_known) return FRT_OK; /* which axes: not known yet */
        unsigned seen = 0;
        int ax[FRT_MAX_RANK];
        for (int64_t i = 0; i < m; i++) {
            int64_t a = frt_value_get_int(vaxes, i);
            int d = frt_norm_axis(a, rank);
            if (d < 0)
                return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d",
                                   (long long)a, rank);
            if ((seen >> d) & 1)
                return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld appears twice in axes",
                                   (long long)a);
            seen |= 1u << d;
            ax[i] = d;
        }
        if (n < 0 || !pads_known) return FRT_OK;
        for (int64_t i = 0; i < m; i++) {
            p->b[ax[i]] = frt_value_get_int(vpads, i);
            p->e[ax[i]] = frt_value_get_int(vpads, i + m);
        }
        p->known = true;
        return FRT_OK;
    }
    if (n >= 0) {
        if (rank >= 0 && n != 2 * (int64_t)rank)
            return frt_op_fail(c, FRT_ERR_SHAPE, "pads has %lld entries, expected %d (2 * rank %d)",
                               (long long)n, 2 * rank, rank);
        if (rank < 0) {
            if (n % 2 != 0)
                return frt_op_fail(c, FRT_ERR_SHAPE, "pads has an odd number of entries (%lld)",
                                   (long long)n);
            if (n / 2 > FRT_MAX_RANK)
                return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "pads has %lld entries (rank > %d)",
                                   (long long)n, FRT_MAX_RANK);
            p->rank = (int)(n / 2);
        }
    }
    if (n < 0 || !pads_known) return FRT_OK;
    int r = p->rank;
    for (int d = 0; d < r; d++) {
        p->b[d] = apads ? apads[d] : frt_value_get_int(vpads, d);
        p->e[d] = apads ? apads[d + r] : frt_value_get_int(vpads, d + r);
    }
    p->known = true;
    return FRT_OK;
}

/* Pads beyond this magnitude are rejected, so index arithmetic (o - b, n + b) cannot overflow. */
#define PAD_LIMIT ((int64_t)1 << 48)

/* Output size of axis d (input size n, pads b, e) with the mode's restrictions. */
static frt_status pad_axis(const frt_op_ctx *c, int d, int64_t n, int64_t b, int64_t e, int mode,
                           int64_t *out) {
    if (b > PAD_LIMIT || b < -PAD_LIMIT || e > PAD_LIMIT || e < -PAD_LIMIT || n > PAD_LIMIT)
        return frt_op_fail(c, FRT_ERR_SHAPE, "pads (%lld, %lld) on axis %d are out of range",
                           (long long)b, (long long)e, d);
    int64_t o = n + b + e;
    if (o < 0)
        return frt_op_fail(c, FRT_ERR_SHAPE,
                           "output dim %d would be %lld (input dim %lld, pads %lld, %lld)", d,
                           (long long)o, (long long)n, (long long)b, (long long)e);
    if (mode == PAD_REFLECT && ((b > 0 && b >= n) || (e > 0 && e >= n)))
        return frt_op_fail(c, FRT_ERR_SHAPE,
                           "reflect pads (%lld, %lld) on axis %d must be smaller than the input "
                           "dim %lld", (long long)b, (long long)e, d, (long long)n);
    if ((mode == PAD_EDGE || mode == PAD_WRAP) && n == 0 && (b > 0 || e > 0))
        return frt_op_fail(c, FRT_ERR_SHAPE, "%s padding of axis %d, which is empty",
                           mode == PAD_EDGE ? "edge" : "wrap", d);
    *out = o;
    return FRT_OK;
}

/* Checks the optional constant_value input (opset >= 11): same dtype as data, one element. */
static frt_status check_value_input(const frt_op_ctx *c) {
    if (c->opset < 11 || c->n_in < 3 || !c->in[2]) return FRT_OK;
    const frt_value *v = c->in[2], *x = c->in[0];
    if (v->dtype != x->dtype)
        return frt_op_fail(c, FRT_ERR_SHAPE, "constant_value has dtype %s, data has %s",
                           frt_dtype_name((frt_dtype)v->dtype), frt_dtype_name((frt_dtype)x->dtype));
    if (v->rank > 1 || (v->numel >= 0 && v->numel != 1)) {
        char b[128];
        return frt_op_fail(c, FRT_ERR_SHAPE, "constant_value must be a scalar, has shape %s",
                           frt_shape_str(v, b, sizeof b));
    }
    return FRT_OK;
}

static frt_status pad_infer(frt_op_ctx *c) {
    frt_status st;
    int mode;
    if ((st = frt_op_check_input(c, 0, 0)) || (st = read_mode(c, &mode))) return st;
    const frt_value *x = c->in[0];
    pad_spec p;
    const frt_onnx_attr *pa;
    if ((st = pads_attr_read(c, &pa)) || (st = pad_spec_make(c, pa, x->rank, &p)) ||
        (st = check_value_input(c)))
        return st;
    if (p.rank < 0) {
        frt_op_set_shape(c->out[0], x->dtype, -1, NULL);
        return FRT_OK;
    }
    int64_t dims[FRT_MAX_RANK];
    for (int d = 0; d < p.rank; d++) {
        int64_t n = x->rank < 0 ? -1 : x->dims[d];
        dims[d] = -1;
        if (!p.known) continue;
        if (n < 0) continue; /* unknown input dim */
        if ((st = pad_axis(c, d, n, p.b[d], p.e[d], mode, &dims[d]))) return st;
    }
    frt_op_set_shape(c->out[0], x->dtype, p.rank, dims);
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Kernels                                                                                         */
/* ---------------------------------------------------------------------------------------------- */

#if defined(__GNUC__)
typedef uint16_t __attribute__((may_alias)) u16a;
typedef uint32_t __attribute__((may_alias)) u32a;
typedef uint64_t __attribute__((may_alias)) u64a;
#else
typedef uint16_t u16a;
typedef uint32_t u32a;
typedef uint64_t u64a;
#endif

/* dst[0 .. count) = value, elements of es bytes. */
static void fill_value(char *dst, int64_t count, const unsigned char *v, size_t es) {
    if (count <= 0) return;
    bool same = true;
    for (size_t i = 1; i < es; i++) same &= v[i] == v[0];
    if (same) {
        memset(dst, v[0], (size_t)count * es);
        return;
    }
    switch (es) {
    case 2: {
        u16a w;
        memcpy(&w, v, 2);
        u16a *d = (u16a *)dst;
        for (int64_t i = 0; i < count; i++) d[i] = w;
        break;
    }
    case 4: {
        u32a w;
        memcpy(&w, v, 4);
        u32a *d = (u32a *)dst;
        for (int64_t i = 0; i < count; i++) d[i] = w;
        break;
    }
    case 8: {
        u64a w;
        memcpy(&w, v, 8);
        u64a *d = (u64a *)dst;
        for (int64_t i = 0; i < count; i++) d[i] = w;
        break;
    }
    default:
        for (int64_t i = 0; i < count; i++) memcpy(dst + (size_t)i * es, v, es);
    }
}

/* Input coordinate for output coordinate o on an axis of input size n with begin pad b; -1 for
 * the constant value. Pads are validated (reflect: overhang < n; edge, wrap: n > 0 when
 * padded). */
static inline int64_t map_index(int64_t o, int64_t b, int64_t n, int mode) {
    int64_t i = o - b;
    if (i >= 0 && i < n) return i;
    if (mode == PAD_CONSTANT) return -1;
    if (mode == PAD_EDGE) return i < 0 ? 0 : n - 1;
    if (mode == PAD_WRAP) return (i % n + n) % n;
    return i < 0 ? -i : 2 * (n - 1) - i;
}

/* Output positions [0, L) of an axis of input size n with begin pad b split into the padding
 * before [0, lo), the copied run [lo, hi) (input lo - b ..) and the padding after [hi, L). */
static inline void split_axis(int64_t L, int64_t n, int64_t b, int64_t *lo, int64_t *hi) {
    int64_t l = b > 0 ? b : 0;
    if (l > L) l = L;
    int64_t h = n + b < L ? n + b : L;
    if (h < l) h = l;
    *lo = l;
    *hi = h;
}

/* ---- general N-d kernel ---- */

typedef struct pad_run {
    const char *src;
    char *dst;
    int na;                      /* axes 0..na-1; axis na-1 is the innermost padded one */
    int mode;
    int64_t n[FRT_MAX_RANK], b[FRT_MAX_RANK], od[FRT_MAX_RANK];
    int64_t is[FRT_MAX_RANK];    /* input byte strides of axes 0..na-2 */
    size_t unit;                 /* bytes per element of axis na-1 (es * merged trailing dims) */
    size_t es;
    int64_t inner;               /* elements per unit */
    const unsigned char *value;
    int64_t rows;                /* prod od[0 .. na-1) */
    int64_t chunk;               /* rows per parallel task */
} pad_run;

static void copy_unit(char *dst, const char *src, size_t unit) {
    switch (unit) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, unit);
    }
}

/* Output rows [r0, r1). */
static void pad_rows(const pad_run *R, int64_t r0, int64_t r1) {
    int last = R->na - 1;
    int64_t L = R->od[last], n = R->n[last], b = R->b[last];
    size_t unit = R->unit, row_bytes = (size_t)L * unit;
    int64_t lo, hi;
    split_axis(L, n, b, &lo, &hi);
    int64_t idx[FRT_MAX_RANK] = {0};
    int64_t t = r0;
    for (int k = last - 1; k >= 0; k--) {
        idx[k] = t % R->od[k];
        t /= R->od[k];
    }
    for (int64_t r = r0; r < r1; r++) {
        char *dst = R->dst + (size_t)r * row_bytes;
        int64_t off = 0;
        bool fill = false;
        for (int k = 0; k < last; k++) {
            int64_t i = map_index(idx[k], R->b[k], R->n[k], R->mode);
            if (i < 0) {
                fill = true;
                break;
            }
            off += i * R->is[k];
        }
        if (fill) {
            fill_value(dst, L * R->inner, R->value, R->es);
        } else {
            if (R->mode == PAD_CONSTANT) {
                fill_value(dst, lo * R->inner, R->value, R->es);
                fill_value(dst + (size_t)hi * unit, (L - hi) * R->inner, R->value, R->es);
            } else {
                const char *srow = R->src + off;
                for (int64_t o = 0; o < lo; o++)
                    copy_unit(dst + (size_t)o * unit,
                              srow + (size_t)map_index(o, b, n, R->mode) * unit, unit);
                for (int64_t o = hi; o < L; o++)
                    copy_unit(dst + (size_t)o * unit,
                              srow + (size_t)map_index(o, b, n, R->mode) * unit, unit);
            }
            if (hi > lo)
                memcpy(dst + (size_t)lo * unit, R->src + off + (lo - b) * (int64_t)unit,
                       (size_t)(hi - lo) * unit);
        }
        for (int k = last - 1; k >= 0; k--) {
            if (++idx[k] < R->od[k]) break;
            idx[k] = 0;
        }
    }
}

static void pad_rows_task(void *ctx, size_t t) {
    const pad_run *R = ctx;
    int64_t r0 = (int64_t)t * R->chunk, r1 = r0 + R->chunk;
    pad_rows(R, r0, r1 < R->rows ? r1 : R->rows);
}

/* Pads x (dims n, rank r) into y per spec. y is already shaped. */
static void pad_general(const frt_value *x, frt_value *y, const pad_spec *sp, int mode,
                        const unsigned char *value, size_t es, frt_exec *ex) {
    int r = sp->rank;
    int P = r - 1; /* innermost padded axis */
    while (P >= 0 && sp->b[P] == 0 && sp->e[P] == 0) P--;
    if (P < 0) { /* nothing padded: a copy */
        if (y->numel > 0) memcpy(y->data, x->data, (size_t)y->numel * es);
        return;
    }
    pad_run R;
    memset(&R, 0, sizeof R);
    R.src = x->data;
    R.dst = y->data;
    R.na = P + 1;
    R.mode = mode;
    R.es = es;
    R.value = value;
    R.inner = 1;
    for (int d = P + 1; d < r; d++) R.inner *= x->dims[d];
    R.unit = (size_t)R.inner * es;
    int64_t stride = (int64_t)R.unit * x->dims[P];
    for (int d = P; d >= 0; d--) {
        R.n[d] = x->dims[d];
        R.b[d] = sp->b[d];
        R.od[d] = y->dims[d];
        if (d < P) {
            R.is[d] = stride;
            stride *= x->dims[d];
        }
    }
    R.rows = 1;
    for (int d = 0; d < P; d++) R.rows *= R.od[d];
    int nt = pad_threads(ex->tp, (size_t)y->numel * es);
    if (nt > 1 && R.rows > 1) {
        int64_t tasks = (int64_t)nt * 4;
        if (tasks > R.rows) tasks = R.rows;
        R.chunk = (R.rows + tasks - 1) / tasks;
        tasks = (R.rows + R.chunk - 1) / R.chunk;
        frt_parallel_for(ex->tp, (size_t)tasks, pad_rows_task, &R);
    } else {
        pad_rows(&R, 0, R.rows);
    }
}

/* ---- float32 NCHW, constant mode, pads on H and W only ---- */

typedef struct nchw_run {
    const float *src;
    float *dst;
    int64_t H, W, OH, OW, pt, pl;
    float v;
    bool zero;
    int64_t planes, chunk;
} nchw_run;

static inline void fill_f32(float *d, int64_t n, float v, bool zero) {
    if (n <= 0) return;
    if (zero) {
        memset(d, 0, (size_t)n * sizeof(float));
        return;
    }
    for (int64_t i = 0; i < n; i++) d[i] = v;
}

static void nchw_planes(const nchw_run *R, int64_t p0, int64_t p1) {
    int64_t lo, hi;
    split_axis(R->OW, R->W, R->pl, &lo, &hi);
    for (int64_t p = p0; p < p1; p++) {
        const float *s = R->src + p * R->H * R->W;
        float *d = R->dst + p * R->OH * R->OW;
        for (int64_t oh = 0; oh < R->OH; oh++, d += R->OW) {
            int64_t ih = oh - R->pt;
            if (ih < 0 || ih >= R->H) {
                fill_f32(d, R->OW, R->v, R->zero);
                continue;
            }
            fill_f32(d, lo, R->v, R->zero);
            if (hi > lo)
                memcpy(d + lo, s + ih * R->W + (lo - R->pl), (size_t)(hi - lo) * sizeof(float));
            fill_f32(d + hi, R->OW - hi, R->v, R->zero);
        }
    }
}

static void nchw_task(void *ctx, size_t t) {
    const nchw_run *R = ctx;
    int64_t p0 = (int64_t)t * R->chunk, p1 = p0 + R->chunk;
    nchw_planes(R, p0, p1 < R->planes ? p1 : R->planes);
}

static void pad_nchw(const frt_value *x, frt_value *y, const pad_spec *sp,
                     const unsigned char *value, frt_exec *ex) {
    nchw_run R;
    R.src = x->data;
    R.dst = y->data;
    R.H = x->dims[2];
    R.W = x->dims[3];
    R.OH = y->dims[2];
    R.OW = y->dims[3];
    R.pt = sp->b[2];
    R.pl = sp->b[3];
    memcpy(&R.v, value, sizeof(float));
    uint32_t bits;
    memcpy(&bits, value, 4);
    R.zero = bits == 0;
    R.planes = y->dims[0] * y->dims[1];
    R.chunk = R.planes;
    int nt = pad_threads(ex->tp, (size_t)y->numel * sizeof(float));
    if (nt > 1 && R.planes > 1) {
        int64_t tasks = (int64_t)nt * 4;
        if (tasks > R.planes) tasks = R.planes;
        R.chunk = (R.planes + tasks - 1) / tasks;
        tasks = (R.planes + R.chunk - 1) / R.chunk;
        frt_parallel_for(ex->tp, (size_t)tasks, nchw_task, &R);
    } else {
        nchw_planes(&R, 0, R.planes);
    }
}

/* ---- kernel entry points ---- */

/* Resolves the pads and the constant value of a step: from the params when known at select,
 * else from the run-time inputs. Checks them against the output shape. */
static frt_status step_spec(const frt_step *s, frt_exec *x, pad_spec *sp, unsigned char *value) {
    const pad_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]];
    const frt_value *y = &x->values[s->out[0]];
    if (p->spec_known) {
        *sp = p->spec;
    } else {
        frt_value *in[4] = {NULL, NULL, NULL, NULL}, *out[1];
        if (s->n_in > 4 || s->n_out != 1) return frt_step_fail(s, FRT_ERR_INTERNAL, "bad arity");
        for (int i = 0; i < s->n_in; i++) in[i] = s->in[i] < 0 ? NULL : &x->values[s->in[i]];
        out[0] = &x->values[s->out[0]];
        frt_op_ctx c = {s->ir, s->ir->opset, s->n_in, s->n_out, in, out, NULL, FRT_ISA_PORTABLE};
        frt_status st = pad_spec_make(&c, p->pads_attr, xv->rank, sp);
        if (st) return st;
        if (!sp->known)
            return frt_step_fail(s, FRT_ERR_RUNTIME, "pads are not available when the kernel runs");
    }
    if (sp->rank != xv->rank || y->rank != xv->rank)
        return frt_step_fail(s, FRT_ERR_INTERNAL, "pads for rank %d, data rank %d, output rank %d",
                             sp->rank, xv->rank, y->rank);
    frt_op_ctx c = {s->ir, s->ir->opset, 0, 0, NULL, NULL, NULL, FRT_ISA_PORTABLE};
    for (int d = 0; d < sp->rank; d++) { /* infer validated these at reshape; recheck */
        int64_t o;
        frt_status st = pad_axis(&c, d, xv->dims[d], sp->b[d], sp->e[d], p->mode, &o);
        if (st) return st;
        if (o != y->dims[d])
            return frt_step_fail(s, FRT_ERR_INTERNAL, "pads give %lld on axis %d, output has %lld",
                                 (long long)o, d, (long long)y->dims[d]);
    }
    memset(value, 0, 8);
    if (p->value_known) {
        memcpy(value, p->value, p->esize);
    } else {
        const frt_value *v = &x->values[s->in[2]];
        if (v->numel != 1 || v->dtype != xv->dtype || !v->data)
            return frt_step_fail(s, FRT_ERR_INTERNAL, "bad constant_value");
        memcpy(value, v->data, p->esize);
    }
    return FRT_OK;
}

static frt_status pad_kernel(const frt_step *s, frt_exec *x) {
    const pad_params *p = s->k.params;
    pad_spec sp;
    unsigned char value[8];
    frt_status st = step_spec(s, x, &sp, value);
    if (st) return st;
    frt_value *y = &x->values[s->out[0]];
    if (y->numel == 0) return FRT_OK;
    pad_general(&x->values[s->in[0]], y, &sp, p->mode, value, p->esize, x);
    return FRT_OK;
}

static frt_status pad_nchw_kernel(const frt_step *s, frt_exec *x) {
    pad_spec sp;
    unsigned char value[8];
    frt_status st = step_spec(s, x, &sp, value);
    if (st) return st;
    frt_value *y = &x->values[s->out[0]];
    if (y->numel == 0) return FRT_OK;
    pad_nchw(&x->values[s->in[0]], y, &sp, value, x);
    return FRT_OK;
}

/* ---- select ---- */

/* IEEE half from float, round to nearest even. */
static uint16_t f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to infinity */
    if (ax < 0x38800000u) { /* subnormal half: round(|f| * 2^24) */
        float a;
        memcpy(&a, &ax, 4);
        return (uint16_t)(sign | (uint16_t)lrintf(a * 16777216.0f));
    }
    uint32_t r = ax + 0xfffu + ((ax >> 13) & 1u) - 0x38000000u;
    return (uint16_t)(sign | (r >> 13));
}

/* Saturating float -> integer in [lo, hi] (NaN -> 0). */
static int64_t f2i(double v, double lo, double hi) {
    if (!(v == v)) return 0;
    if (v <= lo) return (int64_t)lo;
    if (v >= hi) return hi >= 9.2e18 ? INT64_MAX : (int64_t)hi;
    return (int64_t)v;
}

/* The `value` attribute (opset < 11) in the data dtype. */
static void value_from_float(float f, int32_t dtype, unsigned char *out) {
    memset(out, 0, 8);
    switch (dtype) {
    case FRT_FLOAT32: memcpy(out, &f, 4); break;
    case FRT_FLOAT64: { double d = f; memcpy(out, &d, 8); break; }
    case FRT_FLOAT16: { uint16_t h = f32_to_f16(f); memcpy(out, &h, 2); break; }
    case FRT_BOOL: out[0] = f != 0.0f; break;
    case FRT_INT8: { int8_t v = (int8_t)f2i(f, INT8_MIN, INT8_MAX); memcpy(out, &v, 1); break; }
    case FRT_UINT8: { uint8_t v = (uint8_t)f2i(f, 0, UINT8_MAX); memcpy(out, &v, 1); break; }
    case FRT_INT16: { int16_t v = (int16_t)f2i(f, INT16_MIN, INT16_MAX); memcpy(out, &v, 2); break; }
    case FRT_UINT16: { uint16_t v = (uint16_t)f2i(f, 0, UINT16_MAX); memcpy(out, &v, 2); break; }
    case FRT_INT32: { int32_t v = (int32_t)f2i(f, INT32_MIN, INT32_MAX); memcpy(out, &v, 4); break; }
    case FRT_UINT32: { uint32_t v = (uint32_t)f2i(f, 0, UINT32_MAX); memcpy(out, &v, 4); break; }
    case FRT_INT64: { int64_t v = f2i(f, -9.2233720368547758e18, 9.2233720368547758e18); memcpy(out, &v, 8); break; }
    case FRT_UINT64: {
        uint64_t v = !(f == f) || f <= 0 ? 0 : f >= 1.8446744073709552e19f ? UINT64_MAX : (uint64_t)f;
        memcpy(out, &v, 8);
        break;
    }
    default: break;
    }
}

static frt_status pad_select(frt_op_ctx *c, frt_kernel *k) {
    const frt_value *x = c->in[0];
    size_t es = frt_dtype_size((frt_dtype)x->dtype);
    if (es == 0 || es > 8)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                           frt_dtype_name((frt_dtype)x->dtype));
    pad_params *p = frt_arena_alloc(c->arena, sizeof *p, alignof(pad_params));
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    memset(p, 0, sizeof *p);
    p->esize = es;
    frt_status st;
    if ((st = read_mode(c, &p->mode))) return st;
    if ((st = pads_attr_read(c, &p->pads_attr)) ||
        (st = pad_spec_make(c, p->pads_attr, x->rank, &p->spec)) || (st = check_value_input(c)))
        return st;
    p->spec_known = p->spec.known && p->spec.rank >= 0;
    if (c->opset < 11) {
        value_from_float(frt_attr_float(c->node, "value", 0.0f), x->dtype, p->value);
        p->value_known = true;
    } else if (p->mode != PAD_CONSTANT || c->n_in < 3 || !c->in[2]) {
        p->value_known = true; /* zero */
    } else if (c->in[2]->data) {
        memcpy(p->value, c->in[2]->data, es);
        p->value_known = true;
    }
    k->params = p;
    const pad_spec *sp = &p->spec;
    if (p->spec_known && sp->rank == 4 && x->dtype == FRT_FLOAT32 && p->mode == PAD_CONSTANT &&
        sp->b[0] == 0 && sp->e[0] == 0 && sp->b[1] == 0 && sp->e[1] == 0) {
        k->name = "pad_nchw_f32";
        k->fn = pad_nchw_kernel;
    } else {
        k->name = "pad";
        k->fn = pad_kernel;
    }
    return FRT_OK;
}

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(pad, Pad, pad_infer, pad_select);
