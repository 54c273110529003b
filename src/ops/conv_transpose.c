/* ConvTranspose (float32, 1 to 3 spatial dims), as a GEMM followed by col2im.
 *
 *   X [N, C, D1..Dn], W [C, M/group, k1..kn], B [M] (optional) -> Y [N, M, O1..On]
 *
 * Per image and group g (Cg = C/group input channels, Mg = M/group output channels, K = k1*..*kn):
 *   cols[Mg*K, S] = W_g^T [Mg*K, Cg] * X_g [Cg, S]          (S = D1*..*Dn, one GEMM)
 *   Y[m, o] += cols[m*K + kk, i]  where o = i*stride - pad_begin + kk*dilation lies inside Y
 * and Y starts as the bias (or 0). A constant W is packed for the GEMM once at select.
 *
 * Output size per spatial dim (ek = (k-1)*d + 1):
 *   output_shape given:   O = output_shape; total = s*(D-1) + output_padding + ek - O, split
 *                         between begin/end pads by auto_pad (the split rule changed at opset 11);
 *                         a negative total counts as 0 (the extra outputs hold only the bias)
 *   auto_pad SAME_*:      O = D*s, pads split the same way
 *   otherwise:            O = s*(D-1) + output_padding + ek - pad_begin - pad_end (VALID: no pads)
 */
#include <stdlib.h>
#include <string.h>

#include "op.h"
#include "sgemm.h"
#include "util/threadpool.h"

#define CT_MAX_ATTR ((int64_t)1 << 24)

typedef struct ct_params {
    int nsp;                 /* spatial dims, 1..3 */
    int64_t group;
    int64_t k[3], s[3], d[3], pb[3], pe[3], op[3], oshape[3];
    int has_oshape;
    int auto_pad;            /* 0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID */
    int64_t opset;
    const float *const *wpack; /* group entries: W_g^T packed for frt_sgemm_pa, or NULL */
} ct_params;

enum { CT_NOTSET, CT_SAME_UPPER, CT_SAME_LOWER, CT_VALID };

static frt_status ct_parse(const frt_op_ctx *c, int nsp, const frt_value *w, ct_params *p) {
    const frt_node *n = c->node;
    memset(p, 0, sizeof *p);
    p->nsp = nsp;
    p->opset = c->opset;
    p->group = frt_attr_int(n, "group", 1);
    if (p->group < 1 || p->group > CT_MAX_ATTR)
        return frt_op_fail(c, FRT_ERR_SHAPE, "group %lld must be >= 1", (long long)p->group);
    size_t nk, ns, nd, np, nop, nos;
    const int64_t *ks = frt_attr_ints(n, "kernel_shape", &nk);
    const int64_t *st = frt_attr_ints(n, "strides", &ns);
    const int64_t *dl = frt_attr_ints(n, "dilations", &nd);
    const int64_t *pads = frt_attr_ints(n, "pads", &np);
    const int64_t *opad = frt_attr_ints(n, "output_padding", &nop);
    const int64_t *os = frt_attr_ints(n, "output_shape", &nos);
    if ((ks && (int)nk != nsp) || (st && (int)ns != nsp) || (dl && (int)nd != nsp) ||
        (pads && (int)np != 2 * nsp) || (opad && (int)nop != nsp) ||
        (os && (int)nos != nsp && (int)nos != nsp + 2))
        return frt_op_fail(c, FRT_ERR_SHAPE,
                           "kernel_shape/strides/dilations/pads/output_padding/output_shape lengths "
                           "(%zu/%zu/%zu/%zu/%zu/%zu) do not match %d spatial dims",
                           nk, ns, nd, np, nop, nos, nsp);
    for (int i = 0; i < nsp; i++) {
        p->k[i] = ks ? ks[i] : (w && w->rank == nsp + 2 ? w->dims[2 + i] : -1);
        p->s[i] = st ? st[i] : 1;
        p->d[i] = dl ? dl[i] : 1;
        p->pb[i] = pads ? pads[i] : 0;
        p->pe[i] = pads ? pads[nsp + i] : 0;
        p->op[i] = opad ? opad[i] : 0;
        p->oshape[i] = os ? os[(int)nos - nsp + i] : 0;
        if ((p->k[i] < 1 && p->k[i] != -1) || p->k[i] > CT_MAX_ATTR || p->s[i] < 1 ||
            p->s[i] > CT_MAX_ATTR || p->d[i] < 1 || p->d[i] > CT_MAX_ATTR || p->pb[i] < 0 ||
            p->pb[i] > CT_MAX_ATTR || p->pe[i] < 0 || p->pe[i] > CT_MAX_ATTR || p->op[i] < 0 ||
            p->op[i] > CT_MAX_ATTR || (os && (p->oshape[i] < 0 || p->oshape[i] > CT_MAX_ATTR)))
            return frt_op_fail(c, FRT_ERR_SHAPE,
                               "bad kernel %lld / stride %lld / dilation %lld / pads %lld,%lld / "
                               "output_padding %lld in spatial dim %d",
                               (long long)p->k[i], (long long)p->s[i], (long long)p->d[i],
                               (long long)p->pb[i], (long long)p->pe[i], (long long)p->op[i], i);
    }
    p->has_oshape = os != NULL;
    const char *ap = frt_attr_string(n, "auto_pad", "NOTSET");
    if (!strcmp(ap, "NOTSET") || !ap[0]) p->auto_pad = CT_NOTSET;
    else if (!strcmp(ap, "SAME_UPPER")) p->auto_pad = CT_SAME_UPPER;
    else if (!strcmp(ap, "SAME_LOWER")) p->auto_pad = CT_SAME_LOWER;
    else if (!strcmp(ap, "VALID")) p->auto_pad = CT_VALID;
    else return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unknown auto_pad '%s'", ap);
    return FRT_OK;
}

/* Output size of spatial dim i for input size in (k known); sets the effective begin pad. */
static int64_t ct_out_dim(const ct_params *p, int i, int64_t in, int64_t *pad_begin) {
    int64_t ek = (p->k[i] - 1) * p->d[i] + 1;
    int64_t full = p->s[i] * (in - 1) + p->op[i] + ek; /* attrs <= 2^24, in <= 2^31: no overflow */
    int64_t out;
    if (p->has_oshape || p->auto_pad == CT_SAME_UPPER || p->auto_pad == CT_SAME_LOWER) {
        out = p->has_oshape ? p->oshape[i] : in * p->s[i];
        int64_t total = full > out ? full - out : 0; /* a larger output: bias-only tail */
        /* opset >= 11: SAME_UPPER puts the smaller half first; before 11 every mode but
           SAME_UPPER did */
        bool small_first = p->opset >= 11 ? p->auto_pad == CT_SAME_UPPER
                                           : p->auto_pad != CT_SAME_UPPER;
        int64_t half = total / 2;
        *pad_begin = small_first ? half : total - half;
        return out;
    }
    if (p->auto_pad == CT_VALID) {
        *pad_begin = 0;
        return full;
    }
    *pad_begin = p->pb[i];
    return full - p->pb[i] - p->pe[i];
}

static frt_status ct_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 3, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, FRT_FLOAT32)) ||
        (st = frt_op_check_input(c, 1, FRT_FLOAT32)))
        return st;
    if (c->n_in > 2 && c->in[2] && (st = frt_op_check_input(c, 2, FRT_FLOAT32))) return st;
    const frt_value *x = c->in[0], *w = c->in[1];
    int rank = x->rank >= 0 ? x->rank : w->rank;
    if (rank < 0) {
        frt_op_set_shape(c->out[0], FRT_FLOAT32, -1, NULL);
        return FRT_OK;
    }
    char sx[128], sw[128];
    if (rank < 3 || rank > 5 || (x->rank >= 0 && w->rank >= 0 && x->rank != w->rank))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "X %s and W %s: 1 to 3 spatial dims, same rank",
                           frt_shape_str(x, sx, sizeof sx), frt_shape_str(w, sw, sizeof sw));
    ct_params p;
    if ((st = ct_parse(c, rank - 2, w, &p))) return st;
    int64_t od[FRT_MAX_RANK];
    od[0] = x->rank >= 0 ? x->dims[0] : -1;
    od[1] = w->rank >= 0 && w->dims[1] >= 0 ? w->dims[1] * p.group : -1;
    if (x->rank >= 0 && w->rank >= 0 && x->dims[1] >= 0 && w->dims[0] >= 0 &&
        x->dims[1] != w->dims[0])
        return frt_op_fail(c, FRT_ERR_SHAPE, "X %s has %lld channels, W %s expects %lld",
                           frt_shape_str(x, sx, sizeof sx), (long long)x->dims[1],
                           frt_shape_str(w, sw, sizeof sw), (long long)w->dims[0]);
    if (w->rank >= 0 && w->dims[0] >= 0 && w->dims[0] % p.group)
        return frt_op_fail(c, FRT_ERR_SHAPE, "W's %lld input channels are not a multiple of group %lld",
                           (long long)w->dims[0], (long long)p.group);
    for (int i = 0; i < p.nsp; i++) {
        int64_t in = x->rank >= 0 ? x->dims[2 + i] : -1, pb;
        if (in < 0 || p.k[i] < 0) {
            od[2 + i] = p.has_oshape ? p.oshape[i] : -1;
            continue;
        }
        if (in < 1 || in > ((int64_t)1 << 31))
            return frt_op_fail(c, FRT_ERR_SHAPE, "input %s: spatial dim %d must be in [1, 2^31]",
                               frt_shape_str(x, sx, sizeof sx), i);
        od[2 + i] = ct_out_dim(&p, i, in, &pb);
        if (od[2 + i] < 1)
            return frt_op_fail(c, FRT_ERR_SHAPE, "output spatial dim %d would be %lld", i,
                               (long long)od[2 + i]);
    }
    if (c->n_in > 2 && c->in[2]) {
        const frt_value *b = c->in[2];
        if (b->rank >= 0 && (b->rank != 1 || (od[1] >= 0 && b->dims[0] >= 0 && b->dims[0] != od[1])))
            return frt_op_fail(c, FRT_ERR_SHAPE, "B %s must be [%lld]",
                               frt_shape_str(b, sx, sizeof sx), (long long)od[1]);
    }
    frt_op_set_shape(c->out[0], FRT_FLOAT32, rank, od);
    return FRT_OK;
}

/* ---- kernel ---- */

typedef struct ct_geom {
    int64_t N, C, M, Cg, Mg, K, S, OS;
    int64_t in[3], out[3], kk[3], pb[3];  /* padded to 3 dims (leading 1s) */
    int64_t s[3], d[3];
} ct_geom;

typedef struct ct_run {
    const ct_geom *g;
    const float *cols; /* [Mg*K, S] of the current group */
    float *y;          /* output channels of the current group: [Mg, OS] */
} ct_run;

/* Y[m] += col2im(cols[m*K .. m*K+K)) for m in [m0, m1). */
static void ct_col2im(void *ctx, int64_t m0, int64_t m1) {
    const ct_run *r = ctx;
    const ct_geom *g = r->g;
    for (int64_t m = m0; m < m1; m++) {
        float *ym = r->y + m * g->OS;
        int64_t kidx = 0;
        for (int64_t k0 = 0; k0 < g->kk[0]; k0++)
            for (int64_t k1 = 0; k1 < g->kk[1]; k1++)
                for (int64_t k2 = 0; k2 < g->kk[2]; k2++, kidx++) {
                    const float *col = r->cols + (m * g->K + kidx) * g->S;
                    for (int64_t i0 = 0; i0 < g->in[0]; i0++) {
                        int64_t o0 = i0 * g->s[0] - g->pb[0] + k0 * g->d[0];
                        if (o0 < 0 || o0 >= g->out[0]) continue;
                        for (int64_t i1 = 0; i1 < g->in[1]; i1++) {
                            int64_t o1 = i1 * g->s[1] - g->pb[1] + k1 * g->d[1];
                            if (o1 < 0 || o1 >= g->out[1]) continue;
                            const float *src = col + (i0 * g->in[1] + i1) * g->in[2];
                            float *dst = ym + (o0 * g->out[1] + o1) * g->out[2];
                            int64_t off = k2 * g->d[2] - g->pb[2], st = g->s[2];
                            /* i2 range with 0 <= i2*st + off < out[2] */
                            int64_t lo = off >= 0 ? 0 : (-off + st - 1) / st;
                            int64_t hi = g->out[2] - off <= 0 ? 0 : (g->out[2] - off + st - 1) / st;
                            if (hi > g->in[2]) hi = g->in[2];
                            if (st == 1) {
                                for (int64_t i2 = lo; i2 < hi; i2++) dst[i2 + off] += src[i2];
                            } else {
                                for (int64_t i2 = lo; i2 < hi; i2++) dst[i2 * st + off] += src[i2];
                            }
                        }
                    }
                }
    }
}

static frt_status ct_geometry(const frt_step *s, const frt_exec *x, ct_geom *g) {
    const ct_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *wv = &x->values[s->in[1]];
    const frt_value *yv = &x->values[s->out[0]];
    if (xv->rank != p->nsp + 2 || wv->rank != xv->rank || yv->rank != xv->rank)
        return frt_step_fail(s, FRT_ERR_SHAPE, "ranks changed after inference");
    memset(g, 0, sizeof *g);
    g->N = xv->dims[0];
    g->C = xv->dims[1];
    g->M = yv->dims[1];
    g->Cg = g->C / p->group;
    g->Mg = wv->dims[1];
    g->K = 1;
    g->S = 1;
    g->OS = 1;
    int off = 3 - p->nsp;
    for (int i = 0; i < 3; i++) {
        g->in[i] = g->out[i] = g->kk[i] = g->s[i] = g->d[i] = 1;
        g->pb[i] = 0;
    }
    for (int i = 0; i < p->nsp; i++) {
        int64_t pb;
        int64_t o = ct_out_dim(p, i, xv->dims[2 + i], &pb);
        if (o != yv->dims[2 + i] || wv->dims[2 + i] != p->k[i])
            return frt_step_fail(s, FRT_ERR_SHAPE, "shapes changed after inference");
        g->in[off + i] = xv->dims[2 + i];
        g->out[off + i] = o;
        g->kk[off + i] = p->k[i];
        g->s[off + i] = p->s[i];
        g->d[off + i] = p->d[i];
        g->pb[off + i] = pb;
        g->K *= p->k[i];
        g->S *= xv->dims[2 + i];
        g->OS *= o;
    }
    return FRT_OK;
}

static size_t ct_scratch(const frt_step *s, const frt_value *values) {
    const frt_value *xv = &values[s->in[0]], *wv = &values[s->in[1]];
    if (xv->rank < 3 || wv->rank != xv->rank) return 0;
    size_t n = (size_t)wv->dims[1];
    for (int i = 2; i < xv->rank; i++) n *= (size_t)wv->dims[i] * (size_t)xv->dims[i];
    return n * sizeof(float);
}

static frt_status ct_kernel(const frt_step *s, frt_exec *x) {
    const ct_params *p = s->k.params;
    ct_geom g;
    frt_status st = ct_geometry(s, x, &g);
    if (st) return st;
    const float *X = x->values[s->in[0]].data, *W = x->values[s->in[1]].data;
    const float *B = s->n_in > 2 && s->in[2] >= 0 ? x->values[s->in[2]].data : NULL;
    float *Y = x->values[s->out[0]].data;
    float *cols = x->scratch;
    int64_t MgK = g.Mg * g.K;
    for (int64_t n = 0; n < g.N; n++) {
        float *yn = Y + n * g.M * g.OS;
        for (int64_t m = 0; m < g.M; m++) {
            float b = B ? B[m] : 0.0f;
            for (int64_t i = 0; i < g.OS; i++) yn[m * g.OS + i] = b;
        }
        for (int64_t gi = 0; gi < p->group; gi++) {
            const float *xg = X + (n * g.C + gi * g.Cg) * g.S;
            if (p->wpack)
                frt_sgemm_pa_mt(x->tp, MgK, g.S, g.Cg, 1.0f, p->wpack[gi], 0, xg, g.S, 0.0f, cols,
                                g.S);
            else
                frt_sgemm_mt(x->tp, 1, 0, MgK, g.S, g.Cg, 1.0f, W + gi * g.Cg * MgK, MgK, xg, g.S,
                             0.0f, cols, g.S);
            ct_run r = {&g, cols, yn + gi * g.Mg * g.OS};
            frt_parallel_ranges(x->tp, g.Mg, (double)(g.K * g.S) * 8 * FRT_PAR_NS_PER_BYTE,
                                ct_col2im, &r);
        }
    }
    return FRT_OK;
}

static frt_status ct_select(frt_op_ctx *c, frt_kernel *k) {
    const frt_value *w = c->in[1];
    int rank = c->in[0]->rank >= 0 ? c->in[0]->rank : w->rank;
    if (rank < 3 || rank > 5)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "only 1 to 3 spatial dims are supported");
    ct_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    frt_status st = ct_parse(c, rank - 2, w, p);
    if (st) return st;
    for (int i = 0; i < p->nsp; i++)
        if (p->k[i] < 0) return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "kernel shape unknown at load");
    if (w->data && w->rank == rank && w->dims[0] % p->group == 0) {
        int64_t Cg = w->dims[0] / p->group, MgK = w->dims[1];
        for (int i = 2; i < rank; i++) MgK *= w->dims[i];
        const float **packs = frt_arena_alloc(c->arena, (size_t)p->group * sizeof *packs, 8);
        if (!packs) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
        for (int64_t gi = 0; gi < p->group; gi++) {
            float *ap = frt_arena_alloc(c->arena, frt_sgemm_pack_a_size(MgK, Cg) * sizeof(float), 64);
            if (!ap) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory packing W");
            frt_sgemm_pack_a(1, MgK, Cg, (const float *)w->data + gi * Cg * MgK, MgK, ap);
            packs[gi] = ap;
        }
        p->wpack = packs;
        k->const_copied = 1u << 1;
    }
    k->name = p->wpack ? "convtranspose_gemm_packed_f32" : "convtranspose_gemm_f32";
    k->fn = ct_kernel;
    k->params = p;
    k->scratch = ct_scratch;
    return FRT_OK;
}

FRT_OP_IMPL(conv_transpose, ConvTranspose, ct_infer, ct_select);
