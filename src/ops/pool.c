/* MaxPool AveragePool GlobalAveragePool (float32, NCHW-style layouts).
 *
 * MaxPool/AveragePool: X [N, C, S1..Sk] with k = 1, 2 or 3 spatial dims -> Y [N, C, O1..Ok].
 * Attributes: kernel_shape (required), strides, pads ([b1..bk, e1..ek]), dilations, ceil_mode,
 * auto_pad (NOTSET, SAME_UPPER, SAME_LOWER, VALID), count_include_pad (AveragePool). Output size
 * per dim, with ek = (kernel-1)*dilation + 1:
 *   NOTSET: floor((S + b + e - ek) / stride) + 1 (ceil_mode: ceil, then minus 1 if the last
 *           window would start at or after S + b, i.e. entirely in the right padding);
 *   VALID:  ceil((S - ek + 1) / stride), no padding;
 *   SAME_*: ceil(S / stride), total padding max(0, (O-1)*stride + ek - S) split evenly, the odd
 *           one at the end (UPPER) or the beginning (LOWER).
 * Padding never contributes to a max. The average divides by the number of input elements in the
 * window, or with count_include_pad=1 by the number of window positions inside the padded input
 * (positions past the end padding created by ceil_mode are not counted). A window with no input
 * element yields -FLT_MAX (max) or 0 (average).
 * MaxPool with its Indices output (flat indices into X, row-major or with storage_order=1
 * column-major over the spatial dims), MaxPool on float64/float16/int8/uint8, and LpPool
 * (y = (sum |x|^p)^(1/p) over the window) run a generic window loop (pool_generic_*).
 *
 * Kernel: spatial dims are normalized to 3-D (D, H, W) with leading 1s. For each output row the
 * valid input rows of the window are first reduced element-wise into a temporary row (vectorized,
 * AVX2 when available), then each output reduces its horizontal window from that row — pooling is
 * separable for max and sum. Planes (N*C) are split over the intra-op pool.
 *
 * GlobalAveragePool / GlobalMaxPool: X [N, C, S...] -> [N, C, 1...], mean / max over the spatial
 * dims.
 *
 * MaxUnpool: X [N, C, S...] and I (int64, same shape: flat indices into Y) -> Y zero except
 * Y.flat[I[j]] = X[j]. Y's spatial dims are (S-1)*stride + kernel - pads, or output_shape (input
 * 2, data decides the shape).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "cpu.h"
#include "dtype_util.h"
#include "op.h"
#include "util/threadpool.h"

#if FRT_HAVE_X86
/* src/ops/x86/pool_avx2.c: dst[i] = max(dst[i], src[i]) / dst[i] += src[i] / sum of src. */
void frt_pool_vmax_avx2(float *dst, const float *src, int64_t n);
void frt_pool_vadd_avx2(float *dst, const float *src, int64_t n);
float frt_pool_sum_avx2(const float *src, int64_t n);
/* Interior horizontal pooling for stride s in {1, 2}: out[j] = reduce_{k<K} row[s*j + k*d]
 * (max, or sum when !is_max) for j < n, never reading row[len] or beyond. Returns how many
 * outputs it produced (a prefix; the caller finishes the rest). */
int64_t frt_pool_hrow_avx2(int is_max, const float *row, int64_t len, float *out, int64_t n,
                           int64_t s, int64_t K, int64_t d);
/* src/ops/x86/pool_avx512.c: the same three row loops with zmm and masked tails. */
void frt_pool_vmax_avx512(float *dst, const float *src, int64_t n);
void frt_pool_vadd_avx512(float *dst, const float *src, int64_t n);
float frt_pool_sum_avx512(const float *src, int64_t n);
#endif

/* Row loops of one ISA tier (NULL members: the portable C loops). */
typedef struct pool_variant {
    frt_isa isa;
    void (*vmax)(float *dst, const float *src, int64_t n);
    void (*vadd)(float *dst, const float *src, int64_t n);
    float (*sum)(const float *src, int64_t n);
    int64_t (*hrow)(int is_max, const float *row, int64_t len, float *out, int64_t n, int64_t s,
                    int64_t K, int64_t d);
} pool_variant;

/* Kernel names by tier (index = frt_isa). */
#define P_TIERS(s) {s, s "_avx2", s "_avx512"}

/* The row loops (vmax, vadd, hrow) serve the windowed pools only (MaxPool, AveragePool, LpPool);
 * a selective build with only the global ones (sum) leaves them out. */
#if FRT_OP_BUILT(MaxPool) || FRT_OP_BUILT(AveragePool) || FRT_OP_BUILT(LpPool)
#define POOL_ROW(fn) fn
#else
#define POOL_ROW(fn) NULL
#endif

/* Best first. The AVX-512 entry keeps the AVX2 horizontal pass (strided gathers of 8). */
static const pool_variant pool_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512, POOL_ROW(frt_pool_vmax_avx512), POOL_ROW(frt_pool_vadd_avx512),
     frt_pool_sum_avx512, POOL_ROW(frt_pool_hrow_avx2)},
#endif
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, POOL_ROW(frt_pool_vmax_avx2), POOL_ROW(frt_pool_vadd_avx2), frt_pool_sum_avx2,
     POOL_ROW(frt_pool_hrow_avx2)},
#endif
#endif
    {FRT_ISA_PORTABLE, NULL, NULL, NULL, NULL},
};

enum { POOL_MAX = 0, POOL_AVG = 1, POOL_LP = 2 };
enum { PAD_NOTSET = 0, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID };

#define TMP_ROW 2048 /* widest input row reduced through the temporary row */

typedef struct pool_params {
    int kind;
    int nsp;               /* spatial dims of the model (1..3) */
    int auto_pad;
    int ceil_mode;
    int include_pad;
    int storage_order;     /* MaxPool Indices: 0 row-major, 1 column-major spatial dims */
    int64_t p;             /* LpPool's p */
    const pool_variant *var; /* row loops of the tier */
    /* normalized to 3 spatial dims (index 0 = D, 1 = H, 2 = W) */
    int64_t k[3], s[3], d[3], pb[3], pe[3];
} pool_params;

/* ---- portable row helpers ---- */

static void vmax_c(float *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        dst[i] = src[i] > dst[i] ? src[i] : dst[i];
        dst[i + 1] = src[i + 1] > dst[i + 1] ? src[i + 1] : dst[i + 1];
        dst[i + 2] = src[i + 2] > dst[i + 2] ? src[i + 2] : dst[i + 2];
        dst[i + 3] = src[i + 3] > dst[i + 3] ? src[i + 3] : dst[i + 3];
    }
    for (; i < n; i++) dst[i] = src[i] > dst[i] ? src[i] : dst[i];
}

static void vadd_c(float *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        dst[i] += src[i];
        dst[i + 1] += src[i + 1];
        dst[i + 2] += src[i + 2];
        dst[i + 3] += src[i + 3];
    }
    for (; i < n; i++) dst[i] += src[i];
}

static float sum_c(const float *src, int64_t n) {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        s0 += src[i];
        s1 += src[i + 1];
        s2 += src[i + 2];
        s3 += src[i + 3];
        s4 += src[i + 4];
        s5 += src[i + 5];
        s6 += src[i + 6];
        s7 += src[i + 7];
    }
    for (; i < n; i++) s0 += src[i];
    return ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7));
}

static inline void row_op(const pool_variant *v, int kind, float *dst, const float *src,
                          int64_t n) {
    if (v->vmax) {
        if (kind == POOL_MAX) v->vmax(dst, src, n);
        else v->vadd(dst, src, n);
        return;
    }
    if (kind == POOL_MAX) vmax_c(dst, src, n);
    else vadd_c(dst, src, n);
}

/* ---- shapes ---- */

static int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Output size and effective pads of one dim; returns -2 when the window does not fit. */
static int64_t pool_out_dim(const pool_params *p, int i, int64_t in, int64_t *pb, int64_t *pe) {
    int64_t ek = (p->k[i] - 1) * p->d[i] + 1, s = p->s[i];
    *pb = p->pb[i];
    *pe = p->pe[i];
    if (in < 0) return -1;
    switch (p->auto_pad) {
    case PAD_VALID:
        *pb = *pe = 0;
        if (in < ek) return -2;
        return (in - ek) / s + 1;
    case PAD_SAME_UPPER:
    case PAD_SAME_LOWER: {
        int64_t o = ceil_div(in, s);
        int64_t total = (o - 1) * s + ek - in;
        if (total < 0) total = 0;
        if (p->auto_pad == PAD_SAME_UPPER) {
            *pb = total / 2;
            *pe = total - *pb;
        } else {
            *pe = total / 2;
            *pb = total - *pe;
        }
        return o;
    }
    default: {
        int64_t num = in + *pb + *pe - ek;
        if (num < 0) return -2;
        int64_t o = (p->ceil_mode ? ceil_div(num, s) : floor_div(num, s)) + 1;
        if (p->ceil_mode && (o - 1) * s >= in + *pb) o--;
        return o;
    }
    }
}

static frt_status parse_pool(const frt_op_ctx *c, int kind, int nsp, pool_params *p) {
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->nsp = nsp;
    for (int i = 0; i < 3; i++) p->k[i] = p->s[i] = p->d[i] = 1;
    const frt_node *n = c->node;
    size_t nk, ns, np, nd;
    const int64_t *ks = frt_attr_ints(n, "kernel_shape", &nk);
    const int64_t *st = frt_attr_ints(n, "strides", &ns);
    const int64_t *pads = frt_attr_ints(n, "pads", &np);
    const int64_t *dil = frt_attr_ints(n, "dilations", &nd);
    if (!ks) return frt_op_fail(c, FRT_ERR_MALFORMED, "kernel_shape attribute is required");
    if ((int)nk != nsp)
        return frt_op_fail(c, FRT_ERR_SHAPE, "kernel_shape has %zu values for %d spatial dims", nk,
                           nsp);
    if ((st && (int)ns != nsp) || (dil && (int)nd != nsp) || (pads && (int)np != 2 * nsp))
        return frt_op_fail(c, FRT_ERR_SHAPE,
                           "strides/dilations/pads lengths (%zu/%zu/%zu) do not match %d spatial "
                           "dims",
                           ns, nd, np, nsp);
    int off = 3 - nsp;
    for (int i = 0; i < nsp; i++) {
        p->k[off + i] = ks[i];
        if (st) p->s[off + i] = st[i];
        if (dil) p->d[off + i] = dil[i];
        if (pads) {
            p->pb[off + i] = pads[i];
            p->pe[off + i] = pads[nsp + i];
        }
        if (ks[i] < 1 || p->s[off + i] < 1 || p->d[off + i] < 1 || p->pb[off + i] < 0 ||
            p->pe[off + i] < 0 || ks[i] > ((int64_t)1 << 31) || p->s[off + i] > ((int64_t)1 << 31) ||
            p->d[off + i] > ((int64_t)1 << 31) || p->pb[off + i] > ((int64_t)1 << 31) ||
            p->pe[off + i] > ((int64_t)1 << 31))
            return frt_op_fail(c, FRT_ERR_SHAPE,
                               "bad kernel %lld / stride %lld / dilation %lld / pads %lld,%lld in "
                               "spatial dim %d",
                               (long long)ks[i], (long long)p->s[off + i], (long long)p->d[off + i],
                               (long long)p->pb[off + i], (long long)p->pe[off + i], i);
    }
    const char *ap = frt_attr_string(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") == 0 || ap[0] == 0) p->auto_pad = PAD_NOTSET;
    else if (strcmp(ap, "SAME_UPPER") == 0) p->auto_pad = PAD_SAME_UPPER;
    else if (strcmp(ap, "SAME_LOWER") == 0) p->auto_pad = PAD_SAME_LOWER;
    else if (strcmp(ap, "VALID") == 0) p->auto_pad = PAD_VALID;
    else return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unknown auto_pad '%s'", ap);
    int64_t cm = frt_attr_int(n, "ceil_mode", 0);
    int64_t cip = frt_attr_int(n, "count_include_pad", 0);
    if ((cm != 0 && cm != 1) || (cip != 0 && cip != 1))
        return frt_op_fail(c, FRT_ERR_SHAPE, "ceil_mode %lld / count_include_pad %lld must be 0 or 1",
                           (long long)cm, (long long)cip);
    p->ceil_mode = (int)cm;
    p->include_pad = kind == POOL_AVG && cip;
    int64_t so = frt_attr_int(n, "storage_order", 0);
    if (so != 0 && so != 1)
        return frt_op_fail(c, FRT_ERR_SHAPE, "storage_order %lld must be 0 or 1", (long long)so);
    p->storage_order = (int)so;
    p->p = frt_attr_int(n, "p", 2);
    if (kind == POOL_LP && (p->p < 1 || p->p > 64))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "LpPool p=%lld (1..64 supported)",
                           (long long)p->p);
    return FRT_OK;
}

static frt_status pool_infer_common(frt_op_ctx *c, int kind) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, kind == POOL_MAX ? 2 : 1);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    const frt_value *x = c->in[0];
    int32_t dt = x->dtype;
    bool ok = dt == FRT_FLOAT32 || ((kind == POOL_MAX || kind == POOL_LP) &&
                                    (dt == FRT_FLOAT64 || dt == FRT_FLOAT16)) ||
              (kind == POOL_MAX && (dt == FRT_INT8 || dt == FRT_UINT8));
    if (!ok)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported", frt_dtype_name(dt));
    char sx[128];
    if (x->rank < 0) {
        frt_op_set_shape(c->out[0], dt, -1, NULL);
        if (c->n_out > 1 && c->out[1]) frt_op_set_shape(c->out[1], FRT_INT64, -1, NULL);
        return FRT_OK;
    }
    if (x->rank < 3 || x->rank > 5)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "input %s: only 1 to 3 spatial dims supported",
                           frt_shape_str(x, sx, sizeof sx));
    int nsp = x->rank - 2;
    pool_params p;
    if ((st = parse_pool(c, kind, nsp, &p))) return st;
    int64_t od[FRT_MAX_RANK];
    od[0] = x->dims[0];
    od[1] = x->dims[1];
    for (int i = 0; i < nsp; i++) {
        int64_t pb, pe;
        int64_t o = pool_out_dim(&p, 3 - nsp + i, x->dims[2 + i], &pb, &pe);
        if (o == -2 || o == 0)
            return frt_op_fail(c, FRT_ERR_SHAPE,
                               "input %s is too small for kernel %lld (dilation %lld) in spatial "
                               "dim %d",
                               frt_shape_str(x, sx, sizeof sx), (long long)p.k[3 - nsp + i],
                               (long long)p.d[3 - nsp + i], i);
        od[2 + i] = o;
    }
    frt_op_set_shape(c->out[0], dt, x->rank, od);
    if (c->n_out > 1 && c->out[1]) frt_op_set_shape(c->out[1], FRT_INT64, x->rank, od);
    return FRT_OK;
}

static frt_status lppool_infer(frt_op_ctx *c) { return pool_infer_common(c, POOL_LP); }
static frt_status maxpool_infer(frt_op_ctx *c) { return pool_infer_common(c, POOL_MAX); }
static frt_status avgpool_infer(frt_op_ctx *c) { return pool_infer_common(c, POOL_AVG); }

/* ---- kernel ---- */

/* Per output index of one dim: window start, valid k range [k0, k1), and the count of window
 * positions inside the padded extent. [lo, hi) is the interior: outputs whose whole window lies
 * inside the input. inv[o] (W dim only) is 1 / the average's divisor share of this dim. */
typedef struct dim_tab {
    int64_t in, out, k, s, d, lo, hi;
    int64_t *start, *k0, *k1, *cnt;
    float *inv;
} dim_tab;

typedef struct pool_run {
    const pool_params *p;
    dim_tab t[3];
    const float *X;
    float *Y;
    int64_t in_plane, out_plane;
    int64_t planes;
} pool_run;

/* Fills the table of one dim from mem (5 * out int64 slots). */
static void fill_tab(dim_tab *t, int64_t in, int64_t out, int64_t k, int64_t s, int64_t d,
                     int64_t pb, int64_t pe, int include_pad, int64_t *mem) {
    t->in = in;
    t->out = out;
    t->k = k;
    t->s = s;
    t->d = d;
    t->start = mem;
    t->k0 = mem + out;
    t->k1 = mem + 2 * out;
    t->cnt = mem + 3 * out;
    t->inv = (float *)(mem + 4 * out);
    t->lo = out;
    t->hi = 0;
    for (int64_t o = 0; o < out; o++) {
        int64_t st = o * s - pb;
        int64_t k0 = st >= 0 ? 0 : ceil_div(-st, d);
        int64_t k1 = st < in ? ceil_div(in - st, d) : 0;
        if (k1 > k) k1 = k;
        if (k0 > k1) k0 = k1;
        int64_t cnt = ceil_div(in + pe - st, d);
        if (cnt > k) cnt = k;
        if (cnt < 0) cnt = 0;
        t->start[o] = st;
        t->k0[o] = k0;
        t->k1[o] = k1;
        t->cnt[o] = cnt;
        int64_t div = include_pad ? cnt : k1 - k0;
        t->inv[o] = div > 0 ? 1.0f / (float)div : 0.0f;
        if (k0 == 0 && k1 == k) {
            if (o < t->lo) t->lo = o;
            t->hi = o + 1;
        }
    }
    if (t->lo > t->hi) t->lo = t->hi = 0;
}

/* Horizontal pass: o[ow] = reduce over the valid kw of row[start + kw*d] (raw sums for avg). */
static void hpass(const pool_params *p, const dim_tab *tw, const float *row, float *o) {
    const int kind = p->kind;
    const int64_t dw = tw->d, K = tw->k, s = tw->s;
    int64_t lo = tw->lo, hi = tw->hi;
    (void)s;
    /* borders: clipped windows */
    for (int64_t ow = 0; ow < tw->out; ow++) {
        if (ow == lo && lo < hi) {
            ow = hi - 1;
            continue;
        }
        const int64_t st = tw->start[ow];
        float acc = kind == POOL_MAX ? -FLT_MAX : 0.0f;
        for (int64_t k = tw->k0[ow]; k < tw->k1[ow]; k++) {
            float v = row[st + k * dw];
            if (kind == POOL_MAX) acc = v > acc ? v : acc;
            else acc += v;
        }
        o[ow] = acc;
    }
    if (lo >= hi) return;
    /* interior: full windows */
    int64_t j = lo;
    if (p->var->hrow && (s == 1 || s == 2))
        j = lo + p->var->hrow(kind == POOL_MAX, row + tw->start[lo], tw->in - tw->start[lo],
                              o + lo, hi - lo, s, K, dw);
    for (; j < hi; j++) {
        const float *rr = row + tw->start[j];
        float acc = rr[0];
        if (kind == POOL_MAX)
            for (int64_t k = 1; k < K; k++) acc = rr[k * dw] > acc ? rr[k * dw] : acc;
        else
            for (int64_t k = 1; k < K; k++) acc += rr[k * dw];
        o[j] = acc;
    }
}

static void pool_plane(const pool_run *r, const float *in, float *out, float *tmp) {
    const pool_params *p = r->p;
    const dim_tab *td = &r->t[0], *th = &r->t[1], *tw = &r->t[2];
    const int64_t IH = th->in, IW = tw->in, OW = tw->out;
    const int kind = p->kind;
    for (int64_t od = 0; od < td->out; od++) {
        for (int64_t oh = 0; oh < th->out; oh++) {
            float *o = out + (od * th->out + oh) * OW;
            int64_t nd = td->k1[od] - td->k0[od], nh = th->k1[oh] - th->k0[oh];
            if (nd * nh == 0) {
                for (int64_t ow = 0; ow < OW; ow++) o[ow] = kind == POOL_MAX ? -FLT_MAX : 0.0f;
                continue;
            }
            /* reduce the valid window rows into one row, then pool it horizontally */
            if (nd * nh == 1) {
                int64_t id = td->start[od] + td->k0[od] * td->d;
                int64_t ih = th->start[oh] + th->k0[oh] * th->d;
                hpass(p, tw, in + (id * IH + ih) * IW, o);
            } else if (tmp) {
                int first = 1;
                for (int64_t kd = td->k0[od]; kd < td->k1[od]; kd++) {
                    int64_t id = td->start[od] + kd * td->d;
                    for (int64_t kh = th->k0[oh]; kh < th->k1[oh]; kh++) {
                        const float *src = in + (id * IH + th->start[oh] + kh * th->d) * IW;
                        if (first) memcpy(tmp, src, (size_t)IW * sizeof(float));
                        else row_op(p->var, kind, tmp, src, IW);
                        first = 0;
                    }
                }
                hpass(p, tw, tmp, o);
            } else {
                /* rows wider than the temporary: pool the first valid row into o, then merge
                 * the pooled values of each further row chunk by chunk */
                int first = 1;
                for (int64_t kd = td->k0[od]; kd < td->k1[od]; kd++) {
                    int64_t id = td->start[od] + kd * td->d;
                    for (int64_t kh = th->k0[oh]; kh < th->k1[oh]; kh++) {
                        const float *src = in + (id * IH + th->start[oh] + kh * th->d) * IW;
                        if (first) {
                            hpass(p, tw, src, o);
                            first = 0;
                            continue;
                        }
                        float part[256];
                        for (int64_t ow = 0; ow < OW; ow += 256) {
                            int64_t n = OW - ow < 256 ? OW - ow : 256;
                            for (int64_t q = 0; q < n; q++) {
                                int64_t w = ow + q, st = tw->start[w];
                                float acc = kind == POOL_MAX ? -FLT_MAX : 0.0f;
                                for (int64_t k = tw->k0[w]; k < tw->k1[w]; k++) {
                                    float v = src[st + k * tw->d];
                                    if (kind == POOL_MAX) acc = v > acc ? v : acc;
                                    else acc += v;
                                }
                                part[q] = acc;
                            }
                            row_op(p->var, kind, o + ow, part, n);
                        }
                    }
                }
            }
            if (kind == POOL_AVG) {
                float ih = 1.0f / (float)(p->include_pad ? td->cnt[od] * th->cnt[oh] : nd * nh);
                for (int64_t ow = 0; ow < OW; ow++) o[ow] *= ih * tw->inv[ow];
            }
        }
    }
}

static void pool_task(void *ctx, int64_t p0, int64_t p1) {
    const pool_run *r = ctx;
    float tmp[TMP_ROW];
    float *tp = r->t[2].in <= TMP_ROW ? tmp : NULL;
    for (int64_t pl = p0; pl < p1; pl++)
        pool_plane(r, r->X + pl * r->in_plane, r->Y + pl * r->out_plane, tp);
}

static size_t pool_scratch(const frt_step *s, const frt_value *values) {
    const frt_value *y = &values[s->out[0]];
    size_t n = 0;
    for (int i = 2; i < y->rank; i++) n += (size_t)y->dims[i];
    return (5 * n + 16) * sizeof(int64_t);
}

static frt_status pool_kernel(const frt_step *s, frt_exec *x) {
    const pool_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]];
    const frt_value *yv = &x->values[s->out[0]];
    if (xv->rank != p->nsp + 2 || yv->rank != xv->rank)
        return frt_step_fail(s, FRT_ERR_SHAPE, "pool input rank changed after inference");
    pool_run r;
    memset(&r, 0, sizeof r);
    r.p = p;
    int64_t *mem = x->scratch;
    int64_t in3[3] = {1, 1, 1}, out3[3] = {1, 1, 1};
    for (int i = 0; i < p->nsp; i++) {
        in3[3 - p->nsp + i] = xv->dims[2 + i];
        out3[3 - p->nsp + i] = yv->dims[2 + i];
    }
    for (int i = 0; i < 3; i++) {
        int64_t pb, pe;
        int64_t o = pool_out_dim(p, i, in3[i], &pb, &pe);
        if (o != out3[i])
            return frt_step_fail(s, FRT_ERR_SHAPE, "pool output shape changed after inference");
        fill_tab(&r.t[i], in3[i], out3[i], p->k[i], p->s[i], p->d[i], pb, pe, p->include_pad, mem);
        mem += 5 * out3[i];
    }
    r.X = xv->data;
    r.Y = yv->data;
    r.in_plane = in3[0] * in3[1] * in3[2];
    r.out_plane = out3[0] * out3[1] * out3[2];
    r.planes = xv->dims[0] * xv->dims[1];
    if (r.planes == 0 || r.out_plane == 0) return FRT_OK;
    double plane_ns = (double)(r.in_plane + r.out_plane) * 4 * FRT_PAR_NS_PER_BYTE;
    frt_parallel_ranges(x->tp, r.planes, plane_ns, pool_task, &r);
    return FRT_OK;
}

/* ---- generic window loop: MaxPool with Indices or on other dtypes, LpPool ---- */

typedef struct gen_run {
    const pool_params *p;
    const void *X;
    void *Y;
    int64_t *I;                  /* MaxPool Indices, or NULL */
    int32_t dt;
    int64_t in3[3], out3[3], pb3[3], st3[3]; /* st3: index strides of the Indices order */
    int64_t in_plane, out_plane;
} gen_run;

static void gen_task(void *ctx, int64_t p0, int64_t p1) {
    const gen_run *r = ctx;
    const pool_params *p = r->p;
    for (int64_t pl = p0; pl < p1; pl++) {
        int64_t ib = pl * r->in_plane, ob = pl * r->out_plane, o = 0;
        for (int64_t o0 = 0; o0 < r->out3[0]; o0++)
            for (int64_t o1 = 0; o1 < r->out3[1]; o1++)
                for (int64_t o2 = 0; o2 < r->out3[2]; o2++, o++) {
                    double best = -INFINITY, acc = 0;
                    int64_t bidx = -1;
                    for (int64_t k0 = 0; k0 < p->k[0]; k0++) {
                        int64_t i0 = o0 * p->s[0] - r->pb3[0] + k0 * p->d[0];
                        if (i0 < 0 || i0 >= r->in3[0]) continue;
                        for (int64_t k1 = 0; k1 < p->k[1]; k1++) {
                            int64_t i1 = o1 * p->s[1] - r->pb3[1] + k1 * p->d[1];
                            if (i1 < 0 || i1 >= r->in3[1]) continue;
                            for (int64_t k2 = 0; k2 < p->k[2]; k2++) {
                                int64_t i2 = o2 * p->s[2] - r->pb3[2] + k2 * p->d[2];
                                if (i2 < 0 || i2 >= r->in3[2]) continue;
                                int64_t off = (i0 * r->in3[1] + i1) * r->in3[2] + i2;
                                double v = frt_ld_f64(r->dt, r->X, ib + off);
                                if (p->kind == POOL_LP) {
                                    acc += pow(fabs(v), (double)p->p);
                                } else if (bidx < 0 || v > best) {
                                    best = v;
                                    bidx = i0 * r->st3[0] + i1 * r->st3[1] + i2 * r->st3[2];
                                }
                            }
                        }
                    }
                    if (p->kind == POOL_LP) {
                        frt_st_f64(r->dt, r->Y, ob + o, pow(acc, 1.0 / (double)p->p));
                    } else {
                        frt_st_f64(r->dt, r->Y, ob + o, best);
                        if (r->I) r->I[ob + o] = bidx < 0 ? -1 : ib + bidx;
                    }
                }
    }
}

static frt_status gen_kernel(const frt_step *s, frt_exec *x) {
    const pool_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *yv = &x->values[s->out[0]];
    if (xv->rank != p->nsp + 2 || yv->rank != xv->rank)
        return frt_step_fail(s, FRT_ERR_SHAPE, "pool input rank changed after inference");
    gen_run r;
    memset(&r, 0, sizeof r);
    r.p = p;
    r.X = xv->data;
    r.Y = yv->data;
    r.dt = xv->dtype;
    r.I = s->n_out > 1 && s->out[1] >= 0 ? x->values[s->out[1]].data : NULL;
    int off = 3 - p->nsp;
    for (int i = 0; i < 3; i++) r.in3[i] = r.out3[i] = 1;
    for (int i = 0; i < p->nsp; i++) {
        r.in3[off + i] = xv->dims[2 + i];
        r.out3[off + i] = yv->dims[2 + i];
    }
    for (int i = 0; i < 3; i++) {
        int64_t pe, o = pool_out_dim(p, i, r.in3[i], &r.pb3[i], &pe);
        if (o != r.out3[i])
            return frt_step_fail(s, FRT_ERR_SHAPE, "pool output shape changed after inference");
    }
    /* Indices: row-major offsets, or column-major over the model's spatial dims */
    r.st3[2] = 1;
    r.st3[1] = r.in3[2];
    r.st3[0] = r.in3[1] * r.in3[2];
    if (p->storage_order == 1) {
        int64_t m = 1;
        for (int i = off; i < 3; i++) {
            r.st3[i] = m;
            m *= r.in3[i];
        }
    }
    r.in_plane = r.in3[0] * r.in3[1] * r.in3[2];
    r.out_plane = r.out3[0] * r.out3[1] * r.out3[2];
    int64_t planes = xv->dims[0] * xv->dims[1];
    if (planes == 0 || r.out_plane == 0) return FRT_OK;
    double plane_ns = (double)(r.out_plane * p->k[0] * p->k[1] * p->k[2]) * 4 * FRT_PAR_NS_PER_BYTE;
    frt_parallel_ranges(x->tp, planes, plane_ns, gen_task, &r);
    return FRT_OK;
}

static frt_status pool_select_common(frt_op_ctx *c, frt_kernel *k, int kind) {
    bool indices = kind == POOL_MAX && c->n_out > 1 && c->node->out[1] >= 0;
    /* the spatial rank comes from kernel_shape (the input rank may be unknown at load) */
    size_t nk;
    if (!frt_attr_ints(c->node, "kernel_shape", &nk))
        return frt_op_fail(c, FRT_ERR_MALFORMED, "kernel_shape attribute is required");
    if (nk < 1 || nk > 3)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "%zu spatial dims (only 1 to 3 supported)", nk);
    pool_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    frt_status st = parse_pool(c, kind, (int)nk, p);
    if (st) return st;
    p->var = FRT_PICK_VARIANT(pool_variants, c->isa);
    k->params = p;
    if (indices || kind == POOL_LP || c->in[0]->dtype != FRT_FLOAT32) {
        k->name = kind == POOL_LP ? "lppool_generic" : indices ? "maxpool_indices_generic"
                                                               : "maxpool_generic";
        k->fn = gen_kernel;
        return FRT_OK;
    }
    static const char *const names[2][3][3] = {
        {P_TIERS("maxpool1d_f32"), P_TIERS("maxpool2d_f32"), P_TIERS("maxpool3d_f32")},
        {P_TIERS("avgpool1d_f32"), P_TIERS("avgpool2d_f32"), P_TIERS("avgpool3d_f32")}};
    k->name = names[kind][p->nsp - 1][p->var->isa];
    k->fn = pool_kernel;
    k->scratch = pool_scratch;
    return FRT_OK;
}

static frt_status maxpool_select(frt_op_ctx *c, frt_kernel *k) {
    return pool_select_common(c, k, POOL_MAX);
}
static frt_status avgpool_select(frt_op_ctx *c, frt_kernel *k) {
    return pool_select_common(c, k, POOL_AVG);
}
static frt_status lppool_select(frt_op_ctx *c, frt_kernel *k) {
    return pool_select_common(c, k, POOL_LP);
}

/* ---- GlobalAveragePool ---- */

static frt_status gap_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, FRT_FLOAT32))) return st;
    const frt_value *x = c->in[0];
    if (x->rank < 0) {
        frt_op_set_shape(c->out[0], FRT_FLOAT32, -1, NULL);
        return FRT_OK;
    }
    char sx[128];
    if (x->rank < 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "input %s must have rank >= 2",
                           frt_shape_str(x, sx, sizeof sx));
    int64_t od[FRT_MAX_RANK];
    for (int i = 0; i < x->rank; i++) od[i] = i < 2 ? x->dims[i] : 1;
    frt_op_set_shape(c->out[0], FRT_FLOAT32, x->rank, od);
    return FRT_OK;
}

typedef struct gap_run {
    const float *X;
    float *Y;
    int64_t S, planes;
    const pool_variant *var; /* row loops of the tier */
} gap_run;

static void gap_task(void *ctx, int64_t p0, int64_t p1) {
    const gap_run *r = ctx;
    float inv = 1.0f / (float)r->S;
    for (int64_t pl = p0; pl < p1; pl++) {
        const float *src = r->X + pl * r->S;
        float s;
        if (r->var->sum) s = r->var->sum(src, r->S);
        else s = sum_c(src, r->S);
        r->Y[pl] = s * inv;
    }
}

static frt_status gap_kernel(const frt_step *s, frt_exec *x) {
    const pool_variant *var = s->k.params;
    const frt_value *xv = &x->values[s->in[0]];
    const frt_value *yv = &x->values[s->out[0]];
    gap_run r = {xv->data, yv->data, 1, 0, var};
    if (xv->rank < 2) return frt_step_fail(s, FRT_ERR_SHAPE, "input rank changed after inference");
    for (int i = 2; i < xv->rank; i++) r.S *= xv->dims[i];
    r.planes = xv->dims[0] * xv->dims[1];
    if (r.planes == 0) return FRT_OK;
    if (r.S == 0) {
        /* mean over nothing: NaN as in numpy/onnx reference */
        for (int64_t i = 0; i < r.planes; i++) r.Y[i] = NAN;
        return FRT_OK;
    }
    frt_parallel_ranges(x->tp, r.planes, (double)r.S * 4 * FRT_PAR_NS_PER_BYTE, gap_task, &r);
    return FRT_OK;
}

static frt_status gap_select(frt_op_ctx *c, frt_kernel *k) {
    const pool_variant *var = FRT_PICK_VARIANT(pool_variants, c->isa);
    static const char *const names[3] = P_TIERS("global_avgpool_f32");
    k->name = names[var->isa];
    k->fn = gap_kernel;
    k->params = var; /* static table entry: immutable */
    return FRT_OK;
}

/* ---- GlobalMaxPool (float32, float64, float16) ---- */

static frt_status gmp_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    const frt_value *x = c->in[0];
    if (!frt_dtype_is_float(x->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported",
                           frt_dtype_name(x->dtype));
    if (x->rank < 0) {
        frt_op_set_shape(c->out[0], x->dtype, -1, NULL);
        return FRT_OK;
    }
    char sx[128];
    if (x->rank < 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "input %s must have rank >= 2",
                           frt_shape_str(x, sx, sizeof sx));
    int64_t od[FRT_MAX_RANK];
    for (int i = 0; i < x->rank; i++) od[i] = i < 2 ? x->dims[i] : 1;
    frt_op_set_shape(c->out[0], x->dtype, x->rank, od);
    return FRT_OK;
}

static frt_status gmp_kernel(const frt_step *s, frt_exec *x) {
    (void)x;
    const frt_value *xv = &x->values[s->in[0]], *yv = &x->values[s->out[0]];
    int64_t S = 1, planes = xv->dims[0] * xv->dims[1];
    for (int i = 2; i < xv->rank; i++) S *= xv->dims[i];
    for (int64_t pl = 0; pl < planes; pl++) {
        double m = -INFINITY;
        if (xv->dtype == FRT_FLOAT32) {
            const float *src = (const float *)xv->data + pl * S;
            float fm = -INFINITY;
            for (int64_t i = 0; i < S; i++) fm = src[i] > fm || src[i] != src[i] ? src[i] : fm;
            m = fm;
        } else {
            for (int64_t i = 0; i < S; i++) {
                double v = frt_ld_f64(xv->dtype, xv->data, pl * S + i);
                m = v > m || v != v ? v : m;
            }
        }
        frt_st_f64(yv->dtype, yv->data, pl, S ? m : NAN);
    }
    return FRT_OK;
}

static frt_status gmp_select(frt_op_ctx *c, frt_kernel *k) {
    k->name = "global_maxpool";
    k->fn = gmp_kernel;
    return FRT_OK;
}

/* ---- MaxUnpool ---- */

static frt_status unpool_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 3, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0)) || (st = frt_op_check_input(c, 1, FRT_INT64)))
        return st;
    const frt_value *x = c->in[0], *ix = c->in[1];
    const frt_value *os = c->n_in > 2 ? c->in[2] : NULL;
    if (frt_dtype_size(x->dtype) == 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported",
                           frt_dtype_name(x->dtype));
    char sx[128], si[128];
    if (x->rank >= 0 && ix->rank >= 0 &&
        (x->rank != ix->rank || memcmp(x->dims, ix->dims, (size_t)x->rank * sizeof(int64_t))))
        if (frt_shape_known(x) && frt_shape_known(ix))
            return frt_op_fail(c, FRT_ERR_SHAPE, "X %s and I %s must have the same shape",
                               frt_shape_str(x, sx, sizeof sx), frt_shape_str(ix, si, sizeof si));
    if (os) {
        if ((st = frt_op_check_input(c, 2, FRT_INT64))) return st;
        if (os->rank >= 0 && os->rank != 1)
            return frt_op_fail(c, FRT_ERR_SHAPE, "output_shape must be 1-D");
        if (!os->data) {
            int r = os->rank == 1 && os->dims[0] >= 0 ? (int)os->dims[0] : -1;
            int64_t od[FRT_MAX_RANK];
            for (int i = 0; i < FRT_MAX_RANK; i++) od[i] = -1;
            if (r > FRT_MAX_RANK) return frt_op_fail(c, FRT_ERR_SHAPE, "output_shape too long");
            frt_op_set_shape(c->out[0], x->dtype, r, od);
            return FRT_OK;
        }
        if (os->numel != x->rank && x->rank >= 0)
            return frt_op_fail(c, FRT_ERR_SHAPE, "output_shape has %lld values for rank %d",
                               (long long)os->numel, x->rank);
        int64_t od[FRT_MAX_RANK];
        for (int i = 0; i < os->numel && i < FRT_MAX_RANK; i++) {
            od[i] = ((const int64_t *)os->data)[i];
            if (od[i] < 0 || od[i] > ((int64_t)1 << 40))
                return frt_op_fail(c, FRT_ERR_SHAPE, "output_shape[%d] = %lld", i, (long long)od[i]);
        }
        frt_op_set_shape(c->out[0], x->dtype, (int32_t)os->numel, od);
        return FRT_OK;
    }
    if (x->rank < 0) {
        frt_op_set_shape(c->out[0], x->dtype, -1, NULL);
        return FRT_OK;
    }
    if (x->rank < 3 || x->rank > 5)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "input %s: only 1 to 3 spatial dims supported",
                           frt_shape_str(x, sx, sizeof sx));
    int nsp = x->rank - 2;
    pool_params p;
    if ((st = parse_pool(c, POOL_MAX, nsp, &p))) return st;
    int64_t od[FRT_MAX_RANK] = {x->dims[0], x->dims[1]};
    for (int i = 0; i < nsp; i++) {
        int j = 3 - nsp + i;
        int64_t in = x->dims[2 + i];
        od[2 + i] = in < 0 ? -1 : (in - 1) * p.s[j] + p.k[j] - p.pb[j] - p.pe[j];
        if (in >= 0 && od[2 + i] < 0)
            return frt_op_fail(c, FRT_ERR_SHAPE, "output spatial dim %d would be %lld", i,
                               (long long)od[2 + i]);
    }
    frt_op_set_shape(c->out[0], x->dtype, x->rank, od);
    return FRT_OK;
}

/* Indices are flat offsets into the unpooled shape the attributes give (N, C, (S-1)*stride +
 * kernel - pads ...); with output_shape each lands at the same (n, c, spatial) coordinates of Y. */
static frt_status unpool_kernel(const frt_step *s, frt_exec *x) {
    const pool_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *iv = &x->values[s->in[1]];
    const frt_value *yv = &x->values[s->out[0]];
    size_t es = frt_dtype_size(xv->dtype);
    if (iv->numel != xv->numel || xv->rank != p->nsp + 2 || yv->rank != xv->rank)
        return frt_step_fail(s, FRT_ERR_SHAPE, "X, I and Y shapes do not agree");
    int r = xv->rank;
    int64_t dd[FRT_MAX_RANK], dnum = 1; /* the default unpooled shape */
    bool same = true;
    for (int i = 0; i < r; i++) {
        int j = 3 - p->nsp + i - 2;
        dd[i] = i < 2 ? xv->dims[i] : (xv->dims[i] - 1) * p->s[j] + p->k[j] - p->pb[j] - p->pe[j];
        dnum *= dd[i];
        same = same && dd[i] == yv->dims[i];
    }
    memset(yv->data, 0, (size_t)yv->numel * es);
    const int64_t *I = iv->data;
    for (int64_t j = 0; j < xv->numel; j++) {
        int64_t at = I[j];
        if (at < 0 || at >= dnum)
            return frt_step_fail(s, FRT_ERR_RUNTIME, "index I[%lld] = %lld is outside the unpooled "
                                 "shape (%lld elements)", (long long)j, (long long)at,
                                 (long long)dnum);
        if (!same) { /* unravel in the default shape, ravel in Y's; outside Y: dropped */
            int64_t rem = at, o = 0, mul = 1;
            bool inside = true;
            for (int i = r - 1; i >= 0; i--) {
                int64_t c = rem % dd[i];
                rem /= dd[i];
                if (c >= yv->dims[i]) inside = false;
                o += c * mul;
                mul *= yv->dims[i];
            }
            if (!inside) continue;
            at = o;
        }
        memcpy((char *)yv->data + (size_t)at * es, (const char *)xv->data + (size_t)j * es, es);
    }
    return FRT_OK;
}

static frt_status unpool_select(frt_op_ctx *c, frt_kernel *k) {
    size_t nk;
    if (!frt_attr_ints(c->node, "kernel_shape", &nk))
        return frt_op_fail(c, FRT_ERR_MALFORMED, "kernel_shape attribute is required");
    if (nk < 1 || nk > 3)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "%zu spatial dims (only 1 to 3 supported)", nk);
    pool_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    frt_status st = parse_pool(c, POOL_MAX, (int)nk, p);
    if (st) return st;
    k->name = "maxunpool";
    k->fn = unpool_kernel;
    k->params = p;
    return FRT_OK;
}

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(pool, MaxPool, maxpool_infer, maxpool_select);
FRT_OP_IMPL(pool, AveragePool, avgpool_infer, avgpool_select);
FRT_OP_IMPL(pool, GlobalAveragePool, gap_infer, gap_select);
FRT_OP_IMPL(pool, GlobalMaxPool, gmp_infer, gmp_select);
FRT_OP_IMPL(pool, LpPool, lppool_infer, lppool_select);
FRT_OP_IMPL(pool, MaxUnpool, unpool_infer, unpool_select);
