/* The oneDNN provider's inverted-residual block (see irconv.h): weights packed once at select
 * (model arena), a run executes the strip loop of blkir.h over each image's output rows, at N
 * threads as N contiguous row ranges, each with its own part of the step's scratch (planned in
 * the slab: nothing is allocated per run). A range recomputes the expanded rows its first strip
 * shares with the range before it; every output element is computed the same way whatever the
 * split, so the outputs are the same bits at any thread count. */
#include <stdlib.h>
#include <string.h>

#include "irconv.h"
#include "ops/blkir.h"
#include "util/threadpool.h"

#if FRT_HAVE_DNNL

typedef struct dn_ir {
    frt_blkir_geom g;
    frt_blkir_weights w;
    const frt_blkir_variant *v;
    int parts;                   /* row ranges (the model's threads, at most OH) */
    size_t part_floats;          /* scratch of one range (64-byte multiple) */
    size_t in_img, out_img;      /* floats of one image in the blocked layout */
} dn_ir;

typedef struct ir_job {
    const dn_ir *p;
    const float *x, *z;
    float *y, *scratch;
} ir_job;

static void ir_part(void *ctx, size_t i) {
    const ir_job *j = ctx;
    const dn_ir *p = j->p;
    int64_t OH = p->g.OH, r0 = OH * (int64_t)i / p->parts, r1 = OH * (int64_t)(i + 1) / p->parts;
    frt_blkir_rows(p->v, j->x, &p->w, j->z, j->y, &p->g, r0, r1,
                   j->scratch + i * p->part_floats);
}

static size_t ir_scratch(const frt_step *s, const frt_value *values) {
    (void)values;
    const dn_ir *p = s->k.params;
    return (size_t)p->parts * p->part_floats * sizeof(float);
}

static frt_status ir_run(const frt_step *s, frt_exec *x) {
    const dn_ir *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    const frt_value *Z = s->n_in > 7 && s->in[7] >= 0 ? &x->values[s->in[7]] : NULL;
    frt_value *Y = &x->values[s->out[0]];
    if (X->rank != 4 || X->dims[1] != p->g.C || X->dims[2] != p->g.H || X->dims[3] != p->g.W ||
        Y->dims[0] != X->dims[0])
        return frt_step_fail(s, FRT_ERR_SHAPE, "onednn: inverted-residual input differs from "
                             "the load-time image %lldx%lldx%lld", (long long)p->g.C,
                             (long long)p->g.H, (long long)p->g.W);
    for (int64_t n = 0; n < X->dims[0]; n++) {
        ir_job j = {p, (const float *)X->data + (size_t)n * p->in_img,
                    Z ? (const float *)Z->data + (size_t)n * p->out_img : NULL,
                    (float *)Y->data + (size_t)n * p->out_img, x->scratch};
        if (p->parts > 1) frt_parallel_for(x->tp, (size_t)p->parts, ir_part, &j);
        else ir_part(&j, 0);
    }
    return FRT_OK;
}

static const float *bias_of(const frt_op_ctx *c, int i) {
    return c->n_in > i && c->in[i] ? c->in[i]->data : NULL;
}

frt_status frt_dn_ir_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L, int threads) {
    if (L->block != 8 || c->n_in < 7) return FRT_DECLINE;
    const frt_value *X = c->in[0], *We = c->in[1], *Wd = c->in[3], *Wp = c->in[5];
    const frt_value *Z = c->n_in > 7 ? c->in[7] : NULL, *Y = c->out[0];
    if (X->rank != 4 || Y->rank != 4 || !We->data || !Wd->data || !Wp->data) return FRT_DECLINE;
    for (int i = 0; i < 4; i++)
        if (X->dims[i] < 0 || Y->dims[i] < 0) return FRT_DECLINE;
    for (int i = 2; i < 7; i += 2)
        if (c->n_in > i && c->in[i] && !c->in[i]->data) return FRT_DECLINE;
    int a = c->node->act.kind;
    int act_e = a == FRT_ACT_RELU ? FRT_BLKPW_RELU : a == FRT_ACT_CLIP ? FRT_BLKPW_CLIP
                                                                       : FRT_BLKPW_NONE;
    int act_d = a == FRT_ACT_RELU ? FRT_BLKDW_RELU : a == FRT_ACT_CLIP ? FRT_BLKDW_CLIP
                                                                       : FRT_BLKDW_NONE;
    if (a != FRT_ACT_NONE && a != FRT_ACT_RELU && a != FRT_ACT_CLIP) return FRT_DECLINE;
    size_t n = 0;
    const int64_t *sv = frt_attr_ints(c->node, "strides", &n);
    int64_t S = sv && n == 2 ? sv[0] : 1;
    const int64_t *pv = frt_attr_ints(c->node, "pads", &n);
    int64_t pt = pv && n == 4 ? pv[0] : 0, pl = pv && n == 4 ? pv[1] : 0;
    int64_t C = X->dims[1], H = X->dims[2], W = X->dims[3], E = We->dims[0], M = Wp->dims[0];
    int64_t OH = Y->dims[2], OW = Y->dims[3], eb = (E + 7) / 8, mb = (M + 7) / 8;
    /* output rows per strip: the expanded rows of a strip ((R - 1) S + 3 of E W floats) within
       FRT_IR_STRIP_KB (default 128 KiB: with the depthwise rows and the weights in L2's 512) */
    const char *kb = getenv("FRT_IR_STRIP_KB");
    int64_t budget = (kb && *kb ? atoll(kb) : 128) * 1024;
    int64_t row = eb * 8 * W * (int64_t)sizeof(float);
    int64_t R = (budget / row - 3) / S + 1;
    if (R < 1) R = 1;
    if (R > OH) R = OH;
    dn_ir *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    float *we = frt_arena_alloc(c->arena, (size_t)(eb * C * 8) * sizeof(float), 64);
    float *be = frt_arena_alloc(c->arena, (size_t)(eb * 8) * sizeof(float), 64);
    float *wd = frt_arena_alloc(c->arena, (size_t)(eb * 9 * 8) * sizeof(float), 64);
    float *bd = frt_arena_alloc(c->arena, (size_t)(eb * 8) * sizeof(float), 64);
    float *wp = frt_arena_alloc(c->arena, (size_t)(mb * E * 8) * sizeof(float), 64);
    float *bp = frt_arena_alloc(c->arena, (size_t)(mb * 8) * sizeof(float), 64);
    const frt_layout **in = frt_arena_array(c->arena, (size_t)c->n_in + 1, sizeof *in);
    const frt_layout **out = frt_arena_array(c->arena, 2, sizeof *out);
    if (!p || !we || !be || !wd || !bd || !wp || !bp || !in || !out)
        return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for kernel parameters");
    memset(p, 0, sizeof *p);
    memset(in, 0, ((size_t)c->n_in + 1) * sizeof *in);
    memset(out, 0, 2 * sizeof *out);
    frt_blkpw_pack(We->data, bias_of(c, 2), C, E, we, be);
    frt_blkdw_pack(Wd->data, bias_of(c, 4), E, 3, 8, wd, bd);
    frt_blkpw_pack(Wp->data, bias_of(c, 6), E, M, wp, bp);
    p->g = (frt_blkir_geom){.C = C, .E = E, .M = M, .H = H, .W = W, .OH = OH, .OW = OW, .S = S,
                            .pt = pt, .pl = pl, .act_e = act_e, .act_d = act_d,
                            .lo_e = c->node->act.lo, .hi_e = c->node->act.hi,
                            .lo_d = c->node->act.lo, .hi_d = c->node->act.hi, .R = R};
    p->w = (frt_blkir_weights){we, be, wd, bd, wp, bp};
    p->v = frt_blkir_variant_get(c->isa);
    p->parts = threads < 1 ? 1 : threads > OH ? (int)OH : threads;
    p->part_floats = (frt_blkir_scratch_floats(&p->g) + 15) & ~(size_t)15;
    p->in_img = (size_t)((C + 7) / 8 * 8 * H * W);
    p->out_img = (size_t)(mb * 8 * OH * OW);
    in[0] = L;
    if (Z) in[7] = L;
    out[0] = L;
    k->params = p;
    k->fn = ir_run;
    k->scratch = ir_scratch;
    k->name = p->parts > 1 ? "invres_strips_split" : "invres_strips";
    k->in_layouts = in;
    k->out_layouts = out;
    uint32_t cc = (1u << 1) | (1u << 3) | (1u << 5);
    for (int i = 2; i < 7; i += 2)
        if (c->n_in > i && c->in[i]) cc |= 1u << i;
    k->const_copied = cc;
    return FRT_OK;
}

#endif /* FRT_HAVE_DNNL */
