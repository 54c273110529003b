/* Conv (ONNX opset 1-22): 1-D, 2-D and 3-D, NCHW / NCDHW, groups, asymmetric pads, strides, dilations,
 * auto_pad, optional bias, fused activation (node->act: Relu/Clip as a clamp, SiLU, HardSwish,
 * HardSigmoid, Sigmoid as conv.h's p->post).
 *
 * 3-D (NCDHW, W [M, C/group, kd, kh, kw], constant W; the provider declines rank 5):
 *   AVX2 tier: the packed GEMM per depth slice (conv_gemm.c, frt_conv_gemm_run3d;
 *     "conv_im2col_gemm_avx2_3d"): each output depth plane is the sum over the kernel depths
 *     whose input plane is inside the input of a 2-D packed-weight product with implicit im2col.
 *   otherwise (portable; the AVX-512 tier until measured there): per (batch, group)
 *     Y_g[Mg, OD*OH*OW] = W_g[Mg, Cg*kd*kh*kw] * col_g, col tiled over output positions
 *     (vol2col of a tile + frt_sgemm; "conv_im2col_sgemm_3d").
 *
 * Algorithms of 1-D and 2-D, chosen at select:
 *   depthwise (W [M, 1, kh, kw], group == C > 1): direct kernel, one output plane at a time
 *     (conv_depthwise.c; the tier's 3x3 stride 1/2 fast paths from frt_conv_dw_pick).
 *   everything else: per (batch, group) a GEMM Y_g[Mg, OH*OW] = W_g[Mg, Kg] * col_g[Kg, OH*OW],
 *     Kg = Cg*kh*kw, with col tiled over output positions so it stays in cache:
 *       SIMD tiers: the variant of frt_conv_gemm_pick(tier) (conv_gemm.c): weights packed at
 *                 select for the variant's register tile; the input tile is packed straight from
 *                 X (implicit im2col); bias and activation are applied in the micro-kernel
 *                 before its tile is stored (x86/conv_avx2.c, x86/conv_avx512.c).
 *       portable: im2col of a tile (skipped for 1x1 stride 1 unpadded convs, where X is the GEMM
 *                 operand itself) + frt_sgemm, then bias and activation on the tile.
 *     region split (AVX2 tier; 2-D, constant finite W, input shape fixed at load, ungrouped or
 *       grouped but not depthwise): when most taps read padding (a dilation as large as the map),
 *       the output is split into regions by live-tap ranges and each region runs the packed GEMM
 *       of its live sub-kernel (conv_try_split below, conv.h frt_conv_split, conv_gemm.c's
 *       frt_conv_split_run; kernel "conv_im2col_gemm_avx2_split<regions>").
 * A non-constant W (read from the values at run time) goes to the portable GEMM kernel or the
 * depthwise kernels; the packed GEMM needs the weights packed at select.
 * Threads (x->tp): depthwise splits (image, channel) planes, the GEMMs split position blocks or
 * output channel panels.
 */
#include "conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "util/seltrace.h"
#include "util/threadpool.h"
#include "cpu.h"
#include "sgemm.h"
#include "x86/simd_act.h"
#include "x86/simd_elementwise.h"

#define MAX_SP 6 /* spatial rank handled by infer (select supports 1, 2 and 3) */
/* Kernel classes (FRT_KERNEL_BUILT, op.h) of Conv and FusedConv: DW the depthwise kernels
 * ("conv_depthwise*"), DW5 their 5x5 channel-blocked cases ("conv_depthwise_k5"), GEMM the tier's packed GEMM ("conv_1x1_gemm_*", "conv_im2col_gemm_*"),
 * SGEMM the portable im2col + frt_sgemm path ("conv_im2col_sgemm*", 3-D: "conv_im2col_sgemm_3d"). */
#define K_CLASS(cls)                                                                             \
    (FRT_KERNEL_BUILT(Conv, cls) || FRT_KERNEL_BUILT(FusedConv, cls) ||                           \
     FRT_KERNEL_BUILT(ConvMean, cls))
#define K_DW K_CLASS(DW)
#define K_GEMM K_CLASS(GEMM)
#define K_SGEMM K_CLASS(SGEMM)
/* Largest kernel_shape, stride, dilation or pad accepted, so output-size arithmetic cannot overflow. */
#define MAX_CONV_ATTR ((int64_t)1 << 31)

/* ---------------------------------------------------------------------------------------------- */
/* Attributes and shapes                                                                          */
/* ---------------------------------------------------------------------------------------------- */

typedef struct conv_attrs {
    int nsp;
    int auto_pad;
    int64_t group;
    int has_kshape;
    int64_t kshape[MAX_SP], strides[MAX_SP], dil[MAX_SP];
    int64_t pads[2 * MAX_SP]; /* begins then ends, as in ONNX */
} conv_attrs;

static frt_status parse_attrs(const frt_op_ctx *c, int nsp, conv_attrs *a) {
    const frt_node *n = c->node;
    static const struct {
        const char *name;
        frt_onnx_attr_type type;
    } known[] = {{"group", FRT_ATTR_INT},         {"auto_pad", FRT_ATTR_STRING},
                 {"kernel_shape", FRT_ATTR_INTS}, {"strides", FRT_ATTR_INTS},
                 {"dilations", FRT_ATTR_INTS},    {"pads", FRT_ATTR_INTS}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const frt_onnx_attr *at = frt_attr_find(n, known[i].name);
        if (at && at->type != known[i].type)
            return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute %s has the wrong type",
                               known[i].name);
    }
    a->nsp = nsp;
    a->group = frt_attr_int(n, "group", 1);
    if (a->group < 1)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "group must be >= 1, got %lld",
                           (long long)a->group);

    const char *ap = frt_attr_string(n, "auto_pad", "NOTSET");
    if (strcmp(ap, "NOTSET") == 0) a->auto_pad = FRT_CONV_PAD_NOTSET;
    else if (strcmp(ap, "SAME_UPPER") == 0) a->auto_pad = FRT_CONV_PAD_SAME_UPPER;
    else if (strcmp(ap, "SAME_LOWER") == 0) a->auto_pad = FRT_CONV_PAD_SAME_LOWER;
    else if (strcmp(ap, "VALID") == 0) a->auto_pad = FRT_CONV_PAD_VALID;
    else return frt_op_fail(c, FRT_ERR_MALFORMED, "unknown auto_pad '%s'", ap);

    size_t cnt;
    const int64_t *v = frt_attr_ints(n, "kernel_shape", &cnt);
    a->has_kshape = v != NULL;
    if (v && cnt != (size_t)nsp)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "kernel_shape has %zu values, expected %d", cnt,
                           nsp);
    for (int i = 0; i < nsp; i++) {
        a->kshape[i] = v ? v[i] : -1;
        if (v && (v[i] < 1 || v[i] > MAX_CONV_ATTR))
            return frt_op_fail(c, FRT_ERR_MALFORMED, "kernel_shape[%d] = %lld must be in [1, 2^31]",
                               i, (long long)v[i]);
    }

    static const char *const names[2] = {"strides", "dilations"};
    int64_t *dst[2] = {a->strides, a->dil};
    for (int k = 0; k < 2; k++) {
        v = frt_attr_ints(n, names[k], &cnt);
        if (v && cnt != (size_t)nsp)
            return frt_op_fail(c, FRT_ERR_MALFORMED, "%s has %zu values, expected %d", names[k],
                               cnt, nsp);
        for (int i = 0; i < nsp; i++) {
            dst[k][i] = v ? v[i] : 1;
            if (dst[k][i] < 1 || dst[k][i] > MAX_CONV_ATTR)
                return frt_op_fail(c, FRT_ERR_MALFORMED, "%s[%d] = %lld must be in [1, 2^31]",
                                   names[k], i, (long long)dst[k][i]);
        }
    }

    v = frt_attr_ints(n, "pads", &cnt);
    if (v && cnt != (size_t)(2 * nsp))
        return frt_op_fail(c, FRT_ERR_MALFORMED, "pads has %zu values, expected %d", cnt,
                           2 * nsp);
    for (int i = 0; i < 2 * nsp; i++) {
        /* pads are ignored when auto_pad is set */
        a->pads[i] = v && a->auto_pad == FRT_CONV_PAD_NOTSET ? v[i] : 0;
        if (a->pads[i] < 0)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "negative pads[%d] = %lld", i,
                               (long long)a->pads[i]);
        if (a->pads[i] > MAX_CONV_ATTR)
            return frt_op_fail(c, FRT_ERR_MALFORMED, "pads[%d] = %lld is larger than 2^31", i,
                               (long long)a->pads[i]);
    }
    return FRT_OK;
}



static int is_fused(const frt_op_ctx *c) { return strcmp(c->node->op_type, "FusedConv") == 0; }
static int is_mean(const frt_op_ctx *c) { return strcmp(c->node->op_type, "ConvMean") == 0; }

/* FusedConv's sum input Z (input 3) must have exactly the output's shape (checked where known). */
static frt_status check_sum(frt_op_ctx *c, const frt_value *y) {
    const frt_value *z = c->n_in > 3 ? c->in[3] : NULL;
    if (!z) return FRT_OK;
    frt_status st = frt_op_check_input(c, 3, FRT_FLOAT32);
    if (st) return st;
    int ok = z->rank < 0 || y->rank < 0 || z->rank == y->rank;
    for (int i = 0; ok && z->rank >= 0 && i < y->rank; i++)
        ok = z->dims[i] < 0 || y->dims[i] < 0 || z->dims[i] == y->dims[i];
    if (!ok) {
        char a[128], b[128];
        return frt_op_fail(c, FRT_ERR_SHAPE, "sum input has shape %s, the output %s",
                           frt_shape_str(z, a, sizeof a), frt_shape_str(y, b, sizeof b));
    }
    return FRT_OK;
}

static frt_status conv_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, is_fused(c) ? 4 : 3, is_mean(c) ? 2 : 1,
                                       is_mean(c) ? 2 : 1);
    if (st) return st;
    if ((st = frt_op_check_input(c, 0, FRT_FLOAT32))) return st;
    if ((st = frt_op_check_input(c, 1, FRT_FLOAT32))) return st;
    const frt_value *x = c->in[0], *w = c->in[1];
    const frt_value *b = c->n_in > 2 ? c->in[2] : NULL;
    if (b && (st = frt_op_check_input(c, 2, FRT_FLOAT32))) return st;

    if (w->rank >= 0 && w->rank < 3)
        return frt_op_fail(c, FRT_ERR_SHAPE,
                           "W must have rank 3 (1-D conv) or 4 (2-D conv) [M, C/group, k...], "
                           "got rank %d", w->rank);
    if (x->rank >= 0 && x->rank < 3)
        return frt_op_fail(c, FRT_ERR_SHAPE, "X must have rank >= 3 [N, C, spatial...], got %d",
                           x->rank);
    if (x->rank >= 0 && w->rank >= 0 && x->rank != w->rank)
        return frt_op_fail(c, FRT_ERR_SHAPE, "X has rank %d but W has rank %d", x->rank,
                           w->rank);
    int rank = x->rank >= 0 ? x->rank : w->rank;
    frt_value *y = c->out[0];
    if (rank < 0) {
        frt_op_set_shape(y, FRT_FLOAT32, -1, NULL);
        if (is_mean(c)) frt_op_set_shape(c->out[1], FRT_FLOAT32, -1, NULL);
        return check_sum(c, y);
    }
    int nsp = rank - 2;
    if (nsp > MAX_SP)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "%d spatial dims", nsp);
    conv_attrs a;
    if ((st = parse_attrs(c, nsp, &a))) return st;

    int64_t C = x->rank >= 0 ? x->dims[1] : -1;
    int64_t M = w->rank >= 0 ? w->dims[0] : -1;
    int64_t Cg = w->rank >= 0 ? w->dims[1] : -1;
    int64_t cw;
    if (C >= 0 && Cg >= 0 && (__builtin_mul_overflow(Cg, a.group, &cw) || C != cw))
        return frt_op_fail(c, FRT_ERR_SHAPE,
                           "X has %lld channels but W expects %lld per group x group %lld",
                           (long long)C, (long long)Cg, (long long)a.group);
    if (M >= 0 && M % a.group != 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "W has %lld output channels, not divisible by "
                           "group %lld", (long long)M, (long long)a.group);
    if (b && b->rank >= 0) {
        if (b->rank != 1 || (M >= 0 && b->dims[0] >= 0 && b->dims[0] != M))
            return frt_op_fail(c, FRT_ERR_SHAPE, "B must have shape [%lld], got rank %d dim0 %lld",
                               (long long)M, b->rank, (long long)(b->rank ? b->dims[0] : 0));
        if (M < 0) M = b->dims[0];
    }

    int64_t dims[FRT_MAX_RANK];
    dims[0] = x->rank >= 0 ? x->dims[0] : -1;
    dims[1] = M;
    for (int i = 0; i < nsp; i++) {
        int64_t k = w->rank >= 0 ? w->dims[2 + i] : -1;
        if (a.has_kshape) {
            if (k >= 0 && k != a.kshape[i])
                return frt_op_fail(c, FRT_ERR_SHAPE,
                                   "kernel_shape[%d] = %lld but W has spatial dim %lld", i,
                                   (long long)a.kshape[i], (long long)k);
            k = a.kshape[i];
        }
        if (k == 0)
            return frt_op_fail(c, FRT_ERR_SHAPE, "W has an empty spatial dim %d", i);
        int64_t in = x->rank >= 0 ? x->dims[2 + i] : -1;
        if (in < 0 || k < 0) {
            dims[2 + i] = -1;
            continue;
        }
        int64_t pb;
        int64_t o = frt_conv_out_dim(in, k, a.strides[i], a.dil[i], a.auto_pad, a.pads[i],
                                     a.pads[nsp + i], &pb);
        if (o < 0)
            return frt_op_fail(c, FRT_ERR_SHAPE, "spatial dim %d: input %lld plus padding "
                               "overflows int64", i, (long long)in);
        if (o == 0)
            return frt_op_fail(c, FRT_ERR_SHAPE,
                               "spatial dim %d: input %lld is smaller than the dilated kernel "
                               "%lld plus padding", i, (long long)in,
                               (long long)((k - 1) * a.dil[i] + 1));
        dims[2 + i] = o;
    }
    frt_op_set_shape(y, FRT_FLOAT32, rank, dims);
    if (is_mean(c)) { /* the spatial mean: [N, M, 1...] */
        for (int i = 0; i < nsp; i++) dims[2 + i] = 1;
        frt_op_set_shape(c->out[1], FRT_FLOAT32, rank, dims);
    }
    return check_sum(c, y);
}

/* ---------------------------------------------------------------------------------------------- */
/* Portable GEMM path (im2col + sgemm)                                                            */
/* ---------------------------------------------------------------------------------------------- */

/* Valid output columns [*lo, *hi) for kernel column kx: those whose input column
 * ow*sw - pl + kx*dw lies in [0, W). */
static inline void valid_cols(const frt_conv_params *p, const frt_conv_geom *g, int64_t kx,
                              int64_t *lo, int64_t *hi) {
    int64_t off = kx * p->dw - g->pl; /* iw = ow*sw + off */
    int64_t l = off >= 0 ? 0 : (-off + p->sw - 1) / p->sw;
    int64_t h = g->W - 1 - off < 0 ? 0 : (g->W - 1 - off) / p->sw + 1;
    if (h > g->OW) h = g->OW;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
}

/* ---------------------------------------------------------------------------------------------- */
/* Portable GEMM path: tiled im2col + frt_sgemm                                                   */
/* ---------------------------------------------------------------------------------------------- */

/* Tile width (output positions) of the portable path: the col tile [Kg, nt] stays near 256 KiB. */
static int64_t ref_tile(const frt_conv_params *p, int64_t npos) {
    int64_t nt = (64 * 1024) / (p->Kg > 0 ? p->Kg : 1);
    nt = nt < 32 ? 32 : nt;
    nt = (nt + 15) & ~(int64_t)15;
    return nt < npos ? nt : npos;
}

static int is_pointwise(const frt_conv_params *p, const frt_conv_geom *g) {
    return p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && g->pt == 0 && g->pl == 0 &&
           g->OH == g->H && g->OW == g->W;
}

static size_t conv_ref_scratch(const frt_step *s, const frt_value *values) {
    const frt_conv_params *p = s->k.params;
    frt_conv_geom g;
    frt_conv_geometry(p, &values[s->in[0]], &g);
    if (is_pointwise(p, &g)) return 0;
    int64_t nt = ref_tile(p, g.OH * g.OW);
    return (size_t)(nt * p->Kg) * sizeof(float);
}

/* col[Kg][nt] = im2col of channels xg[Cg][H][W] for output positions [n0, n0+nt). */
static void im2col_tile(const frt_conv_params *p, const frt_conv_geom *g, const float *xg,
                        int64_t n0, int64_t nt, float *col) {
    int64_t HW = g->H * g->W;
    for (int64_t ci = 0; ci < p->Cg; ci++) {
        const float *xc = xg + ci * HW;
        for (int64_t ky = 0; ky < p->kh; ky++) {
            for (int64_t kx = 0; kx < p->kw; kx++) {
                float *dst = col + ((ci * p->kh + ky) * p->kw + kx) * nt;
                int64_t lo, hi;
                valid_cols(p, g, kx, &lo, &hi);
                int64_t off = kx * p->dw - g->pl;
                int64_t oh = n0 / g->OW, ow = n0 % g->OW, q = 0;
                while (q < nt) {
                    int64_t len = g->OW - ow < nt - q ? g->OW - ow : nt - q;
                    int64_t ih = oh * p->sh - g->pt + ky * p->dh;
                    float *d = dst + q - ow; /* d[ow'] for ow' in [ow, ow+len) */
                    int64_t e = ow + len;
                    if (ih < 0 || ih >= g->H) {
                        for (int64_t i = ow; i < e; i++) d[i] = 0;
                    } else {
                        const float *row = xc + ih * g->W + off;
                        int64_t a = lo > ow ? lo : ow, b = hi < e ? hi : e;
                        if (a > b) a = b;
                        int64_t i = ow;
                        for (; i < a; i++) d[i] = 0;
                        if (p->sw == 1)
                            for (; i < b; i++) d[i] = row[i];
                        else
                            for (; i < b; i++) d[i] = row[i * p->sw];
                        for (; i < e; i++) d[i] = 0;
                    }
                    q += len;
                    ow = 0;
                    oh++;
                }
            }
        }
    }
}

typedef struct ref_gemm_task {
    const frt_conv_params *p;
    const float *w, *bias, *bmat;
    const float *z; /* sum input rows of the tile (same layout as y) or NULL */
    int64_t ldb, nt, ldy, m0;
    float *y;
    int64_t chunk; /* rows per task */
    int64_t rows;
} ref_gemm_task;

/* Rows [i*chunk, ...) of Y_tile = W_g * col, then bias, sum input and activation on those rows. */
static void ref_gemm_rows(void *ctx, size_t i) {
    const ref_gemm_task *t = ctx;
    const frt_conv_params *p = t->p;
    int64_t r0 = (int64_t)i * t->chunk;
    int64_t r1 = r0 + t->chunk < t->rows ? r0 + t->chunk : t->rows;
    if (r0 >= r1) return;
    float *y = t->y + r0 * t->ldy;
    frt_sgemm(0, 0, r1 - r0, t->nt, p->Kg, 1.0f, t->w + r0 * p->Kg, p->Kg, t->bmat, t->ldb, 0.0f,
              y, t->ldy);
    for (int64_t r = r0; r < r1; r++, y += t->ldy) {
        if (t->bias) {
            float bv = t->bias[t->m0 + r];
            for (int64_t j = 0; j < t->nt; j++) y[j] += bv;
        }
        if (t->z)
            frt_conv_sum_act(p, y, t->z + r * t->ldy, t->nt);
        else
            frt_conv_act_ref(p, y, t->nt);
    }
}

/* The tile t (t->chunk = t->p->Mg: one part) on the pool: split into row parts of a multiple of 8
   when nth > 1 threads and the tile's cur columns are worth it, else on the calling thread. */
static void ref_gemm_run(frt_threadpool *tp, int nth, ref_gemm_task *t, int64_t cur) {
    const frt_conv_params *p = t->p;
    if (nth > 1 && p->Mg >= 16 &&
        frt_par_threads(tp, 2.0 * (double)(p->Mg * cur * p->Kg) * FRT_PAR_NS_PER_FLOP) > 1) {
        t->chunk = (p->Mg + nth - 1) / nth;
        t->chunk = (t->chunk + 7) & ~(int64_t)7;
        frt_parallel_for(tp, (size_t)((p->Mg + t->chunk - 1) / t->chunk), ref_gemm_rows, t);
    } else {
        ref_gemm_rows(t, 0);
    }
}


static const float *conv_bias(const frt_step *s, const frt_exec *x) {
    return s->n_in > 2 && s->in[2] >= 0 ? (const float *)x->values[s->in[2]].data : NULL;
}



static frt_status conv_gemm_ref(const frt_step *s, frt_exec *x) {
    const frt_conv_params *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    frt_value *Y = &x->values[s->out[0]];
    frt_conv_geom g;
    frt_conv_geometry(p, X, &g);
    const float *w;
    frt_status st = frt_conv_weights(s, x, &w);
    if (st) return st;
    const float *bias = conv_bias(s, x), *sum = frt_conv_sum(s, x);
    int64_t npos = g.OH * g.OW;
    int pw = is_pointwise(p, &g);
    int64_t nt = pw ? (npos < 512 ? npos : 512) : ref_tile(p, npos);
    float *col = x->scratch;
    int nth = frt_threadpool_size(x->tp);
    for (int64_t n = 0; n < g.N; n++) {
        for (int64_t gr = 0; gr < p->group; gr++) {
            const float *xg = (const float *)X->data + (n * g.C + gr * p->Cg) * g.H * g.W;
            float *yg = (float *)Y->data + (n * p->M + gr * p->Mg) * npos;
            for (int64_t n0 = 0; n0 < npos; n0 += nt) {
                int64_t cur = npos - n0 < nt ? npos - n0 : nt;
                ref_gemm_task t = {.p = p, .w = w + gr * p->Mg * p->Kg, .bias = bias,
                                   .nt = cur, .ldy = npos, .m0 = gr * p->Mg, .y = yg + n0,
                                   .chunk = p->Mg, .rows = p->Mg};
                if (sum) t.z = sum + (yg - (float *)Y->data) + n0;
                if (pw) {
                    t.bmat = xg + n0;
                    t.ldb = npos;
                } else {
                    im2col_tile(p, &g, xg, n0, cur, col);
                    t.bmat = col;
                    t.ldb = cur;
                }
                ref_gemm_run(x->tp, nth, &t, cur);
            }
        }
    }
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* 3-D: tiled vol2col + frt_sgemm                                                                  */
/* ---------------------------------------------------------------------------------------------- */
/* Region split (conv.h: frt_conv_split)                                                          */
/* ---------------------------------------------------------------------------------------------- */

/* Longest output axis the split considers: split_axis costs O(out) at load, and an axis longer
   than this (only seen in malformed or absurdly padded models) keeps the unsplit kernel. */
#define SPLIT_MAX_OUT ((int64_t)1 << 20)

/* Splits one axis into bands of equal live-tap ranges: input size in, k taps, stride s,
 * dilation d, leading pad pad0, out outputs (conv.c bounds every one of these to 2^31). Band b
 * covers outputs [o0[b], o0[b+1]) with live taps [t0[b], t1[b]]. Returns the band count, or 0
 * when some output has no live tap, there are more than max bands or out > SPLIT_MAX_OUT. */
static int split_axis(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pad0, int64_t out,
                      int max, int64_t *o0, int64_t *t0, int64_t *t1) {
    if (out > SPLIT_MAX_OUT) return 0;
    int nb = 0;
    for (int64_t o = 0; o < out; o++) {
        /* tap t reads base + t*d: live when 0 <= base + t*d <= in - 1 */
        int64_t base = o * s - pad0;
        int64_t lo = base >= 0 ? 0 : (-base + d - 1) / d;
        int64_t hi = in - 1 - base < 0 ? -1 : (in - 1 - base) / d;
        if (hi > k - 1) hi = k - 1;
        if (lo > hi) return 0;
        if (nb > 0 && t0[nb - 1] == lo && t1[nb - 1] == hi) continue;
        if (nb == max) return 0;
        o0[nb] = o;
        t0[nb] = lo;
        t1[nb] = hi;
        nb++;
    }
    o0[nb] = out;
    return nb;
}

#define SPLIT_MAX_BANDS 8
/* Split when the live taps are at most this share of the unsplit kernel's multiply-adds (the
   regions' weight panels are read once per region) and the regions' packs hold at most 4 times
   the kernel's weights; FRT_CONV_SPLIT=0 turns the split off, =1 takes it whenever it saves work
   (no memory cap), for measurements and tests. */
#define SPLIT_MAX_SHARE 0.6

/* Builds p->split for a packed-GEMM node (2-D, constant finite W, input shape x known, fp32
   weights): 1 when built, 0 when the split does not pay or does not apply, -1 out of memory. */
static int conv_try_split(frt_op_ctx *c, frt_conv_params *p, const frt_conv_gemm_variant *var,
                          const frt_value *x) {
    const char *env = getenv("FRT_CONV_SPLIT");
    if (env && !strcmp(env, "0")) return 0;
    int forced = env && !strcmp(env, "1");
    double max_share = forced ? 0.999 : SPLIT_MAX_SHARE;
    int64_t H = x->dims[2], W = x->dims[3], pt, pl;
    int64_t OH = frt_conv_out_dim(H, p->kh, p->sh, p->dh, p->auto_pad, p->pt, p->pb, &pt);
    int64_t OW = frt_conv_out_dim(W, p->kw, p->sw, p->dw, p->auto_pad, p->pl, p->pr, &pl);
    if (OH <= 0 || OW <= 0) return 0;
    int64_t ro[SPLIT_MAX_BANDS + 1], rt0[SPLIT_MAX_BANDS], rt1[SPLIT_MAX_BANDS];
    int64_t co[SPLIT_MAX_BANDS + 1], ct0[SPLIT_MAX_BANDS], ct1[SPLIT_MAX_BANDS];
    int nr = split_axis(H, p->kh, p->sh, p->dh, pt, OH, SPLIT_MAX_BANDS, ro, rt0, rt1);
    int ncb = split_axis(W, p->kw, p->sw, p->dw, pl, OW, SPLIT_MAX_BANDS, co, ct0, ct1);
    if (nr == 0 || ncb == 0 || nr * ncb == 1) return 0;
    double live = 0, full = (double)(OH * OW) * (double)(p->kh * p->kw);
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < ncb; j++)
            live += (double)((ro[i + 1] - ro[i]) * (co[j + 1] - co[j])) *
                    (double)((rt1[i] - rt0[i] + 1) * (ct1[j] - ct0[j] + 1));
    if (live > max_share * full) return 0;
    /* memory: the regions' packs together hold at most 4 times the kernel's taps (a 3x3 whose
       dilation reaches past the map: 1 + 4 x 2 + 4 x 4 = 25 taps, 2.8 times) */
    int64_t taps = 0;
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < ncb; j++) taps += (rt1[i] - rt0[i] + 1) * (ct1[j] - ct0[j] + 1);
    if (taps > 4 * p->kh * p->kw && !forced) return 0;
    const float *w = p->w;
    for (int64_t i = 0; i < p->M * p->Kg; i++)
        if (!isfinite(w[i])) return 0; /* inf * 0 of a dead tap is NaN in the unsplit sum */

    frt_conv_split *sp = frt_arena_alloc(c->arena, sizeof *sp, 8);
    frt_conv_region *rg = frt_arena_alloc(c->arena, sizeof *rg * (size_t)(nr * ncb), 8);
    if (!sp || !rg) return -1;
    /* one sub-kernel per distinct live range (row range x column range), shared by regions */
    frt_conv_params *sub[SPLIT_MAX_BANDS * SPLIT_MAX_BANDS];
    int nsub = 0;
    float *tmp = NULL;
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < ncb; j++) {
            frt_conv_region *r = &rg[i * ncb + j];
            r->oh0 = ro[i], r->oh1 = ro[i + 1], r->ow0 = co[j], r->ow1 = co[j + 1];
            r->ky0 = rt0[i], r->kx0 = ct0[j];
            int64_t kh = rt1[i] - rt0[i] + 1, kw = ct1[j] - ct0[j] + 1;
            frt_conv_params *q = NULL;
            for (int u = 0; u < nsub && !q; u++)
                if (sub[u]->kh == kh && sub[u]->kw == kw &&
                    sub[u]->pt == r->ky0 && sub[u]->pl == r->kx0)
                    q = sub[u];
            if (!q) {
                q = frt_arena_alloc(c->arena, sizeof *q, 64);
                if (!q) {
                    free(tmp);
                    return -1;
                }
                if (!tmp) tmp = malloc((size_t)(p->M * p->Kg) * sizeof(float));
                if (!tmp) return -1;
                float *sw = tmp; /* the sub-kernel's weights, a load-time temporary */
                *q = *p;
                q->kh = kh, q->kw = kw;
                q->Kg = p->Cg * kh * kw;
                q->pt = r->ky0, q->pl = r->kx0; /* the key above; region_geom sets the run's pads */
                q->pb = q->pr = 0;
                q->auto_pad = FRT_CONV_PAD_NOTSET;
                q->act = 0;
                q->post = FRT_CONV_POST_NONE;
                q->wprec = 0;
                q->split = NULL;
                for (int64_t mc = 0; mc < p->M * p->Cg; mc++)
                    for (int64_t y = 0; y < kh; y++)
                        for (int64_t xx = 0; xx < kw; xx++)
                            sw[(mc * kh + y) * kw + xx] =
                                w[(mc * p->kh + r->ky0 + y) * p->kw + r->kx0 + xx];
                q->w = NULL; /* the regions read only their packs */
                if (frt_conv_gemm_pack(q, var, sw, c->arena)) {
                    free(tmp);
                    return -1;
                }
                sub[nsub++] = q;
            }
            r->p = q;
        }
    free(tmp);
    sp->C = x->dims[1], sp->H = H, sp->W = W, sp->OH = OH, sp->OW = OW;
    sp->pt = pt, sp->pl = pl;
    sp->nregions = nr * ncb;
    sp->regions = rg;
    p->split = sp;
    p->var = var;
    return 1;
}

/* ---------------------------------------------------------------------------------------------- */

/* Parameters of every Conv node (conv.h): p first (the GEMM loops and helpers read it; for the
 * portable 3-D path Kg = Cg * kd * kh * kw, for the packed one Cg * kh * kw), then the depth axis
 * of a 3-D one. */
typedef frt_conv_node_params conv_node_params;

typedef struct conv3d_geom {
    int64_t N, C, D, H, W, OD, OH, OW;
    int64_t pf, pt, pl; /* front / top / left padding actually applied */
} conv3d_geom;

static void conv3d_geometry(const conv_node_params *q, const frt_value *x, conv3d_geom *g) {
    const frt_conv_params *p = &q->p;
    g->N = x->dims[0];
    g->C = x->dims[1];
    g->D = x->dims[2];
    g->H = x->dims[3];
    g->W = x->dims[4];
    g->OD = frt_conv_out_dim(g->D, q->kd, q->sd, q->dd, p->auto_pad, q->pf, q->pk, &g->pf);
    g->OH = frt_conv_out_dim(g->H, p->kh, p->sh, p->dh, p->auto_pad, p->pt, p->pb, &g->pt);
    g->OW = frt_conv_out_dim(g->W, p->kw, p->sw, p->dw, p->auto_pad, p->pl, p->pr, &g->pl);
}

static size_t conv3d_scratch(const frt_step *s, const frt_value *values) {
    const conv_node_params *q = s->k.params;
    conv3d_geom g;
    conv3d_geometry(q, &values[s->in[0]], &g);
    int64_t nt = ref_tile(&q->p, g.OD * g.OH * g.OW);
    return (size_t)(nt * q->p.Kg) * sizeof(float);
}

/* col[Kg][nt] = vol2col of channels xg[Cg][D][H][W] for the output positions [n0, n0+nt) of the
 * flattened (od, oh, ow); row (ci, kz, ky, kx) reads x[ci][od*sd - pf + kz*dd][oh*sh - pt +
 * ky*dh][ow*sw - pl + kx*dw], 0 outside the input. */
static void vol2col_tile(const conv_node_params *q, const conv3d_geom *g, const float *xg,
                         int64_t n0, int64_t nt, float *col) {
    const frt_conv_params *p = &q->p;
    int64_t HW = g->H * g->W, OHW = g->OH * g->OW;
    for (int64_t ci = 0; ci < p->Cg; ci++) {
        const float *xc = xg + ci * g->D * HW;
        for (int64_t kz = 0; kz < q->kd; kz++)
            for (int64_t ky = 0; ky < p->kh; ky++)
                for (int64_t kx = 0; kx < p->kw; kx++) {
                    float *d = col + (((ci * q->kd + kz) * p->kh + ky) * p->kw + kx) * nt;
                    int64_t od = n0 / OHW, r = n0 % OHW, oh = r / g->OW, ow = r % g->OW;
                    for (int64_t j = 0; j < nt; j++) {
                        int64_t id = od * q->sd - g->pf + kz * q->dd;
                        int64_t ih = oh * p->sh - g->pt + ky * p->dh;
                        int64_t iw = ow * p->sw - g->pl + kx * p->dw;
                        d[j] = id >= 0 && id < g->D && ih >= 0 && ih < g->H && iw >= 0 &&
                                       iw < g->W
                                   ? xc[(id * g->H + ih) * g->W + iw]
                                   : 0.0f;
                        if (++ow == g->OW) {
                            ow = 0;
                            if (++oh == g->OH) oh = 0, od++;
                        }
                    }
                }
    }
}

static frt_status conv3d_run(const frt_step *s, frt_exec *x) {
    const conv_node_params *q = s->k.params;
    const frt_conv_params *p = &q->p;
    const frt_value *X = &x->values[s->in[0]];
    frt_value *Y = &x->values[s->out[0]];
    conv3d_geom g;
    conv3d_geometry(q, X, &g);
    const float *w = p->w; /* constant (select) */
    const float *bias = conv_bias(s, x), *sum = frt_conv_sum(s, x);
    int64_t npos = g.OD * g.OH * g.OW, vol = g.D * g.H * g.W;
    int64_t nt = ref_tile(p, npos);
    float *col = x->scratch;
    int nth = frt_threadpool_size(x->tp);
    for (int64_t n = 0; n < g.N; n++) {
        for (int64_t gr = 0; gr < p->group; gr++) {
            const float *xg = (const float *)X->data + (n * g.C + gr * p->Cg) * vol;
            float *yg = (float *)Y->data + (n * p->M + gr * p->Mg) * npos;
            for (int64_t n0 = 0; n0 < npos; n0 += nt) {
                int64_t cur = npos - n0 < nt ? npos - n0 : nt;
                vol2col_tile(q, &g, xg, n0, cur, col);
                ref_gemm_task t = {.p = p, .w = w + gr * p->Mg * p->Kg, .bias = bias,
                                   .bmat = col, .ldb = cur, .nt = cur, .ldy = npos,
                                   .m0 = gr * p->Mg, .y = yg + n0, .chunk = p->Mg,
                                   .rows = p->Mg};
                if (sum) t.z = sum + (yg - (float *)Y->data) + n0;
                ref_gemm_run(x->tp, nth, &t, cur);
            }
        }
    }
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Select                                                                                         */
/* ---------------------------------------------------------------------------------------------- */

static frt_status conv_select_kernel(frt_op_ctx *c, frt_kernel *k) {
    const frt_value *x = c->in[0], *w = c->in[1];
    int rank = x->rank >= 0 ? x->rank : w->rank;
    if (rank < 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "ranks of X and W unknown at load");
    if (rank > 5)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED,
                           "%d-D convolution is not supported (only 1-D, 2-D and 3-D)", rank - 2);
    if (w->rank != rank || !frt_shape_known(w))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "the shape of W must be known at load");
    int nsp = rank - 2;
    conv_attrs a;
    frt_status st = parse_attrs(c, nsp, &a);
    if (st) return st;

    conv_node_params *q = frt_arena_alloc(c->arena, sizeof *q, 64);
    if (!q) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for kernel parameters");
    frt_conv_params *p = &q->p;
    p->nsp = nsp;
    p->auto_pad = a.auto_pad;
    p->group = a.group;
    p->M = w->dims[0];
    p->Cg = w->dims[1];
    p->Mg = p->M / a.group;
    if (nsp == 1) {
        p->kh = p->sh = p->dh = 1;
        p->kw = w->dims[2];
        p->sw = a.strides[0];
        p->dw = a.dil[0];
        p->pl = a.pads[0];
        p->pr = a.pads[1];
    } else if (nsp == 2) {
        p->kh = w->dims[2];
        p->kw = w->dims[3];
        p->sh = a.strides[0];
        p->sw = a.strides[1];
        p->dh = a.dil[0];
        p->dw = a.dil[1];
        p->pt = a.pads[0];
        p->pl = a.pads[1];
        p->pb = a.pads[2];
        p->pr = a.pads[3];
    } else { /* 3-D: depth in q, H and W in p; pads [front, top, left, back, bottom, right] */
        q->kd = w->dims[2];
        q->sd = a.strides[0];
        q->dd = a.dil[0];
        q->pf = a.pads[0];
        q->pk = a.pads[3];
        p->kh = w->dims[3];
        p->kw = w->dims[4];
        p->sh = a.strides[1];
        p->sw = a.strides[2];
        p->dh = a.dil[1];
        p->dw = a.dil[2];
        p->pt = a.pads[1];
        p->pl = a.pads[2];
        p->pb = a.pads[4];
        p->pr = a.pads[5];
    }
    /* 2-D, constant W, input shape fixed at load, explicit pads: kernel rows (columns) whose
       taps read only padding at every output row (column) are cut off and the pads shrunk by as
       much, so the output size stays (deeplabv3's ASPP: 3x3 with dilation 24 and 36 on a 14x14
       map becomes a 1x1, a ninth of the work). W is copied into the arena, trimmed. */
    const float *wdata = w->data;
    if (nsp == 2 && wdata && a.auto_pad == FRT_CONV_PAD_NOTSET && frt_shape_known(x)) {
        int64_t lo[2] = {0, 0}, hi[2] = {p->kh - 1, p->kw - 1};
        int64_t ks[2] = {p->kh, p->kw}, st[2] = {p->sh, p->sw}, dl[2] = {p->dh, p->dw};
        int64_t pb[2] = {p->pt, p->pl}, pe[2] = {p->pb, p->pr};
        bool trim = false, ok = true;
        for (int ax = 0; ax < 2 && ok; ax++) {
            int64_t in = x->dims[2 + ax], pad0;
            int64_t out = frt_conv_out_dim(in, ks[ax], st[ax], dl[ax], 0, pb[ax], pe[ax], &pad0);
            if (out <= 0) {
                ok = false;
                break;
            }
            /* tap t is live if some output o in [0, out) reads input o*s - pad + t*d inside
               [0, in): o*s in [a, a + in) with a = pad - t*d; the least such o is ceil(a / s)
               (0 for a <= 0), so one test per tap, whatever the output's size */
            for (int pass = 0; pass < 2; pass++) {
                int64_t *t = pass ? &hi[ax] : &lo[ax];
                while (*t >= 0 && *t < ks[ax] && lo[ax] <= hi[ax]) {
                    int64_t a0 = pad0 - *t * dl[ax];
                    int64_t o = a0 <= 0 ? 0 : (a0 + st[ax] - 1) / st[ax];
                    bool live = o < out && o * st[ax] < a0 + in;
                    if (live) break;
                    *t += pass ? -1 : 1;
                }
            }
            if (lo[ax] > hi[ax]) ok = false; /* every tap reads padding: leave it as it is */
            else if (lo[ax] > 0 || hi[ax] < ks[ax] - 1) trim = true;
            if (pb[ax] - lo[ax] * dl[ax] < 0 || pe[ax] - (ks[ax] - 1 - hi[ax]) * dl[ax] < 0)
                ok = false;
        }
        if (ok && trim) {
            int64_t nkh = hi[0] - lo[0] + 1, nkw = hi[1] - lo[1] + 1;
            float *tw = frt_arena_alloc(c->arena, (size_t)(p->M * p->Cg * nkh * nkw) * 4, 64);
            if (!tw) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for weights");
            for (int64_t mc = 0; mc < p->M * p->Cg; mc++)
                for (int64_t y = 0; y < nkh; y++)
                    for (int64_t xx = 0; xx < nkw; xx++)
                        tw[(mc * nkh + y) * nkw + xx] =
                            wdata[(mc * p->kh + lo[0] + y) * p->kw + lo[1] + xx];
            p->pt -= lo[0] * p->dh;
            p->pb -= (p->kh - 1 - hi[0]) * p->dh;
            p->pl -= lo[1] * p->dw;
            p->pr -= (p->kw - 1 - hi[1]) * p->dw;
            p->kh = nkh;
            p->kw = nkw;
            wdata = tw;
        }
    }
    p->Kg = p->Cg * p->kh * p->kw * (nsp == 3 ? q->kd : 1);
    if (p->M == 0 || p->Kg == 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "empty W");
    switch (c->node->act.kind) {
    case FRT_ACT_NONE: break;
    case FRT_ACT_RELU: p->act = 1; p->lo = 0.0f; p->hi = INFINITY; break;
    case FRT_ACT_CLIP: p->act = 1; p->lo = c->node->act.lo; p->hi = c->node->act.hi; break;
    case FRT_ACT_SILU: p->post = FRT_CONV_POST_SILU; p->post_kind = FRT_ACTP_SILU; break;
    case FRT_ACT_HARDSWISH:
        p->post = FRT_CONV_POST_HARDSWISH;
        p->post_kind = FRT_ACTP_HARDSWISH;
        break;
    case FRT_ACT_HARDSIGMOID:
        p->post = FRT_CONV_POST_HARDSIGMOID;
        p->post_kind = FRT_ACTP_HARDSIGMOID;
        p->post_prm[0] = c->node->act.lo; /* alpha */
        p->post_prm[1] = c->node->act.hi; /* beta */
        break;
    case FRT_ACT_SIGMOID: p->post = FRT_CONV_POST_SIGMOID; break;
    default: return frt_op_fail(c, FRT_ERR_INTERNAL, "unknown fused activation");
    }
    if (p->post == FRT_CONV_POST_SIGMOID) {
        p->post_sigmoid = frt_act_variant_get(c->isa)->sigmoid;
        if (!p->post_sigmoid) return frt_op_kernel_missing(c, "sigmoid"); /* selective, no Sigmoid */
    }
    else if (p->post != FRT_CONV_POST_NONE) {
        /* Silu, HardSwish, HardSigmoid: fusion made them from one of these ops, which load
           resolved, so a selective build with none of them has no such node */
        if (!(FRT_OP_BUILT(Silu) || FRT_OP_BUILT(Sigmoid) || FRT_OP_BUILT(HardSwish) ||
              FRT_OP_BUILT(HardSigmoid)))
            return frt_op_kernel_missing(c, "conv_post_activation");
        p->post_fn = frt_actp_variant_get(c->isa)->pointwise;
    }
    p->w = wdata; /* NULL when W is computed at run time; trimmed above */
    k->params = q;

    if (nsp == 3) {
        if (!p->w)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED,
                               "3-D convolution needs constant weights W");
        /* the tier's packed GEMM per depth slice (conv_gemm.c) */
        const frt_conv_gemm_variant *var3 = K_GEMM ? frt_conv_gemm_pick(c->isa) : NULL;
        if (var3) {
            p->wprec = 0; /* float32 weights (half ones are not wired up for 3-D) */
            if ((st = frt_conv_gemm_pack3d(q, var3, p->w, c->arena)))
                return frt_op_fail(c, st, "out of memory packing weights");
            k->const_copied = 1u << 1; /* W lives on packed only */
            k->name = var3->isa == FRT_ISA_AVX512 ? "conv_im2col_gemm_avx512_3d"
                                                  : "conv_im2col_gemm_avx2_3d";
            k->fn = frt_conv_gemm_run3d;
            k->scratch = frt_conv_gemm_scratch3d;
            return FRT_OK;
        }
        k->name = "conv_im2col_sgemm_3d";
        if (!K_SGEMM) return frt_op_kernel_missing(c, k->name);
        k->fn = conv3d_run;
        k->scratch = conv3d_scratch;
        return FRT_OK;
    }

    frt_isa cap = c->isa;
    if (p->Cg == 1 && p->group > 1) {
        p->dwvar = frt_conv_dw_pick(cap);
        k->name = p->dwvar ? p->dwvar->name : "conv_depthwise";
        if (!K_DW) return frt_op_kernel_missing(c, k->name);
        /* the tier's channel-blocked depthwise kernels are compiled per kernel size: the trace
           records a 5x5 one, and a selective build without it (class DW5) refuses 5x5 nodes */
        if (p->dwvar && p->kh == p->kw && (p->kh == 3 || p->kh == 5)) {
            const char *ks = p->kh == 5 ? "conv_depthwise_k5" : "conv_depthwise_k3";
            if (FRT_SELTRACE_ON)
                frt_seltrace_add("kernel", frt_seltrace_domain(c->node->domain), c->node->op_type,
                                 "builtin", ks, NULL);
            if (p->kh == 5 && !K_CLASS(DW5)) return frt_op_kernel_missing(c, ks);
        }
        k->fn = frt_conv_depthwise_run;
        return FRT_OK;
    }
    const frt_conv_gemm_variant *var = p->w && K_GEMM ? frt_conv_gemm_pick(cap) : NULL;
    /* the region split: measured on the AVX2 tier (Zen 3); the AVX-512 tier keeps the unsplit
       kernel until a session measures it there */
    if (var && var->isa == FRT_ISA_AVX2 && nsp == 2 && !(p->Cg == 1 && p->group > 1) &&
        !(FRT_HALF_WEIGHTS && c->node->wprec) && frt_shape_known(x)) {
        int r = conv_try_split(c, p, var, x);
        if (r < 0) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory packing weights");
        if (r) {
            k->const_copied = 1u << 1; /* W lives on the regions' packs */
            char *name = frt_arena_alloc(c->arena, 64, 1);
            if (!name) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
            snprintf(name, 64, "%s_split%d", var->name_im2col, p->split->nregions);
            k->name = name;
            k->fn = frt_conv_split_run;
            k->scratch = frt_conv_split_scratch;
            return FRT_OK;
        }
    }
    if (var) {
        /* half weights (frt_conv_gemm_pack keeps fp32 if it must) */
        p->wprec = FRT_HALF_WEIGHTS ? c->node->wprec : 0;
        p->f16_to_f32 = FRT_HALF_WEIGHTS && p->wprec ? frt_f16_variant_get(cap)->to_f32 : NULL;
        if ((st = frt_conv_gemm_pack(p, var, p->w, c->arena)))
            return frt_op_fail(c, st, "out of memory packing weights");
        k->const_copied = 1u << 1; /* W lives on packed only (p->w is not read by this path) */
        k->name = p->kh * p->kw == 1 ? var->name_1x1 : var->name_im2col;
        if (FRT_HALF_WEIGHTS && p->whalf) {
            char *name = frt_arena_alloc(c->arena, 64, 1);
            if (!name) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
            snprintf(name, 64, "%s_%s", k->name, p->wprec == 1 ? "f16w" : "bf16w");
            k->name = name;
        }
        k->fn = frt_conv_gemm_run;
        k->scratch = frt_conv_gemm_scratch;
        return FRT_OK;
    }
    k->name = p->w ? "conv_im2col_sgemm" : "conv_im2col_sgemm_dynamic_w";
    if (!K_SGEMM) return frt_op_kernel_missing(c, k->name);
    k->fn = conv_gemm_ref;
    k->scratch = conv_ref_scratch;
    return FRT_OK;
}

/* flatrt::ConvMean: the conv's kernel, then output 1 = the mean of output 0 over its spatial
 * positions per (image, channel) plane, summed in order (float), times 1 / positions. */
static frt_status conv_mean_run(const frt_step *s, frt_exec *x) {
    const frt_conv_params *p = s->k.params;
    frt_status st = p->mean_inner(s, x);
    if (st) return st;
    const frt_value *Y = &x->values[s->out[0]];
    float *m = x->values[s->out[1]].data;
    int64_t S = 1, planes = Y->dims[0] * Y->dims[1];
    for (int i = 2; i < Y->rank; i++) S *= Y->dims[i];
    const float *y = Y->data, inv = 1.0f / (float)S;
    for (int64_t pl = 0; pl < planes; pl++) {
        float sum = 0.0f;
        for (int64_t i = 0; i < S; i++) sum += y[pl * S + i];
        m[pl] = sum * inv;
    }
    return FRT_OK;
}

static frt_status conv_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = conv_select_kernel(c, k);
    if (st || !is_mean(c)) return st;
    frt_conv_params *p = (frt_conv_params *)k->params;
    p->mean_inner = k->fn;
    k->fn = conv_mean_run;
    return FRT_OK;
}

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(conv, Conv, conv_infer, conv_select);
/* Internal (made by a fusion pass): Conv with a 4th input Z of the output's shape,
 * Y = act(conv(X, W) + B + Z). */
FRT_OP_IMPL(conv, FusedConv, conv_infer, conv_select);
/* Internal (made by the squeeze-and-excitation fusion, src/passes/fuse_cnn.c): Conv (inputs X, W,
 * optional B; the fused activation) with a second output, GlobalAveragePool of the first:
 * [N, M, 1, 1]. */
FRT_OP_IMPL(conv, ConvMean, conv_infer, conv_select);
