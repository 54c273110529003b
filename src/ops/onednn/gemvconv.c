/* The oneDNN provider's own 1x1 convolution of a 1x1 image (see gemvconv.h).
 *
 * With a 1x1 image, one image in the blocked layout L is its C channels followed by the block's
 * padding lanes, so the convolution is y[M] = act(W[M][C] x[C] + b): the weights are packed once
 * at select for the batch-1 GEMV (gemv.h, float32 column panels, model arena), and a run does per
 * image the tier's GEMV, the bias, the tier's activation loop over the M outputs, and writes the
 * output's padding lanes as zero. Nothing is allocated per run.
 *
 * Why: an efficientnet_b0 block's two such layers (e.g. 672 -> 28 with SiLU, 28 -> 672 with
 * Sigmoid) took 5-22 us each through oneDNN's jit_1x1 primitive (per-node minimum over 10 runs,
 * Zen 5, load ~15), against about a microsecond of arithmetic; docs/dependencies.md. */
#include <stdlib.h>
#include <string.h>

#include "gemvconv.h"
#include "ops/gemv.h"
#include "ops/x86/simd_act.h"
#include "ops/x86/simd_elementwise.h"

#if FRT_HAVE_DNNL

enum { GC_NONE, GC_RELU, GC_CLIP, GC_SIGMOID, GC_ACTP };

typedef struct gemvconv {
    frt_wpack w;
    const float *bias;          /* [M] or NULL */
    int64_t C, M, in_img, out_img; /* floats of one image in L (C, M rounded up to the block) */
    frt_isa isa;
    int kind;                   /* GC_* */
    int actp;                   /* FRT_ACTP_* for GC_ACTP */
    float prm[4];               /* actp parameters */
    float lo, hi;               /* GC_CLIP bounds */
    frt_unary_fn relu, sigmoid;
    frt_clip_fn clip;
    frt_actp_fn pointwise;
} gemvconv;

static frt_status gc_run(const frt_step *s, frt_exec *x) {
    const gemvconv *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    frt_value *Y = &x->values[s->out[0]];
    if (X->rank != 4 || X->dims[1] != p->C || X->dims[2] != 1 || X->dims[3] != 1 ||
        Y->dims[0] != X->dims[0])
        return frt_step_fail(s, FRT_ERR_SHAPE, "onednn: 1x1-image convolution input differs "
                             "from the load-time [N,%lld,1,1]", (long long)p->C);
    const float *xp = X->data;
    float *yp = Y->data;
    for (int64_t n = 0; n < X->dims[0]; n++) {
        const float *xi = xp + n * p->in_img;
        float *yi = yp + n * p->out_img;
        frt_wpack_gemv(p->isa, &p->w, 1.0f, xi, 0.0f, yi);
        if (p->bias)
            for (int64_t m = 0; m < p->M; m++) yi[m] += p->bias[m];
        switch (p->kind) {
        case GC_RELU: p->relu(yi, yi, (size_t)p->M); break;
        case GC_CLIP: p->clip(yi, yi, (size_t)p->M, p->lo, p->hi); break;
        case GC_SIGMOID: p->sigmoid(yi, yi, (size_t)p->M); break;
        case GC_ACTP: p->pointwise(p->actp, yi, yi, (size_t)p->M, p->prm); break;
        }
        for (int64_t m = p->M; m < p->out_img; m++) yi[m] = 0.0f;
    }
    return FRT_OK;
}

frt_status frt_dn_gemvconv_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L) {
    const char *env = getenv("FRT_DNNL_GEMVCONV");
    if (env && !strcmp(env, "0")) return FRT_DECLINE;
    const frt_value *X = c->in[0], *Wt = c->in[1], *B = c->n_in > 2 ? c->in[2] : NULL;
    const frt_value *Y = c->out[0];
    if (X->rank != 4 || X->dims[2] != 1 || X->dims[3] != 1 || Wt->rank != 4 ||
        Wt->dims[2] != 1 || Wt->dims[3] != 1 || Wt->dims[1] != X->dims[1] || Y->rank != 4 ||
        Y->dims[1] != Wt->dims[0] || Y->dims[2] != 1 || Y->dims[3] != 1 ||
        frt_attr_int(c->node, "group", 1) != 1)
        return FRT_DECLINE;
    int64_t C = X->dims[1], M = Wt->dims[0], b = L->block;
    gemvconv g = {0};
    g.isa = c->isa;
    switch (c->node->act.kind) {
    case FRT_ACT_NONE: g.kind = GC_NONE; break;
    case FRT_ACT_RELU: g.kind = GC_RELU; break;
    case FRT_ACT_CLIP: g.kind = GC_CLIP, g.lo = c->node->act.lo, g.hi = c->node->act.hi; break;
    case FRT_ACT_SIGMOID: g.kind = GC_SIGMOID; break;
    case FRT_ACT_SILU: g.kind = GC_ACTP, g.actp = FRT_ACTP_SILU; break;
    case FRT_ACT_HARDSWISH: g.kind = GC_ACTP, g.actp = FRT_ACTP_HARDSWISH; break;
    case FRT_ACT_HARDSIGMOID:
        g.kind = GC_ACTP, g.actp = FRT_ACTP_HARDSIGMOID;
        g.prm[0] = c->node->act.lo, g.prm[1] = c->node->act.hi;
        break;
    default: return FRT_DECLINE;
    }
    const frt_act_variant *av = frt_act_variant_get(c->isa);
    g.relu = av->relu;
    g.sigmoid = av->sigmoid;
    g.clip = av->clip;
    g.pointwise = frt_actp_variant_get(c->isa)->pointwise;
    if ((g.kind == GC_RELU && !g.relu) || (g.kind == GC_SIGMOID && !g.sigmoid) || (g.kind == GC_CLIP && !g.clip) ||
        (g.kind == GC_ACTP && !g.pointwise))
        return FRT_DECLINE;
    g.C = C;
    g.M = M;
    g.in_img = (C + b - 1) / b * b;
    g.out_img = (M + b - 1) / b * b;
    gemvconv *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    void *wbuf = frt_arena_alloc(c->arena, frt_wpack_bytes(FRT_WPREC_F32, C, M), 64);
    float *bias = B ? frt_arena_alloc(c->arena, (size_t)M * sizeof *bias, 64) : NULL;
    const frt_layout **in = frt_arena_array(c->arena, (size_t)c->n_in + 1, sizeof *in);
    const frt_layout **out = frt_arena_array(c->arena, 2, sizeof *out);
    if (!p || !wbuf || (B && !bias) || !in || !out)
        return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for kernel parameters");
    /* W is [M][C] = op(B) with B stored N x K (transB): y = x W^T */
    frt_wpack_fill(FRT_WPREC_F32, 1, C, M, Wt->data, C, wbuf);
    g.w = (frt_wpack){FRT_WPREC_F32, C, M, wbuf};
    if (B) {
        memcpy(bias, B->data, (size_t)M * sizeof *bias);
        g.bias = bias;
    }
    *p = g;
    in[0] = L;
    out[0] = L;
    k->params = p;
    k->fn = gc_run;
    k->name = "gemvconv";
    k->in_layouts = in;
    k->out_layouts = out;
    k->const_copied = B ? (1u << 1) | (1u << 2) : 1u << 1; /* W and B live on in wbuf/bias */
    return FRT_OK;
}

#endif /* FRT_HAVE_DNNL */
