/* The oneDNN provider's own grouped convolution (see gconv.h): weights packed once at select into
 * [C/8][K][G][K][8] (model arena), the fused activation applied as the outputs are stored. A run
 * executes the tier's loop (blkgc.h) over each image's output channel blocks, at N threads as
 * contiguous ranges of blocks on the runtime's pool (frt_parallel_ranges; every output element is
 * the same chain of fused multiply-adds whatever the range, so the outputs are the same bits at
 * any thread count). It allocates nothing.
 *
 * Why: oneDNN 2.6's jit:avx2 grouped kernel on nChw8c (groups of 8: weights aBCde8c8b) ran
 * RegNetY-400MF's 3x3 grouped layers at 31-40 GFLOP/s on Zen 3 (docs/dependencies.md). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gconv.h"
#include "ops/blkgc.h"
#include "ops/blkmean.h"
#include "util/threadpool.h"

#if FRT_HAVE_DNNL

typedef struct dn_gc {
    frt_blkgc_geom g;
    const float *w, *bias;       /* packed (model arena) */
    frt_blkgc_fn fn;
    double block_ns;             /* estimated time of one output block */
    size_t in_img, out_img;      /* floats of one image in the blocked layout */
    frt_blkmean_fn mean_fn;      /* flatrt::ConvMean: output 1 the per-channel mean (blkmean.h) */
} dn_gc;

typedef struct gc_job {
    const dn_gc *p;
    const float *x;
    float *y;
    float *m;                    /* ConvMean: the image's C means */
} gc_job;

static void gc_range(void *ctx, int64_t lo, int64_t hi) {
    const gc_job *j = ctx;
    const dn_gc *p = j->p;
    if (!p->mean_fn) {
        p->fn(j->x, p->w, p->bias, j->y, &p->g, lo, hi);
        return;
    }
    /* one block at a time, its mean taken while it is in cache (the same bits at any split) */
    int64_t S = p->g.OH * p->g.OW;
    for (int64_t m = lo; m < hi; m++) {
        p->fn(j->x, p->w, p->bias, j->y, &p->g, m, m + 1);
        p->mean_fn(j->y + (size_t)(m * S * 8), S, 8, 1.0f / (float)S, j->m + m * 8);
    }
}

static frt_status gc_run(const frt_step *s, frt_exec *x) {
    const dn_gc *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    frt_value *Y = &x->values[s->out[0]];
    if (X->rank != 4 || X->dims[1] != p->g.C || X->dims[2] != p->g.H || X->dims[3] != p->g.W ||
        Y->dims[0] != X->dims[0])
        return frt_step_fail(s, FRT_ERR_SHAPE, "onednn: grouped convolution input differs from "
                             "the load-time image %lldx%lldx%lld", (long long)p->g.C,
                             (long long)p->g.H, (long long)p->g.W);
    for (int64_t n = 0; n < X->dims[0]; n++) {
        gc_job j = {p, (const float *)X->data + (size_t)n * p->in_img,
                    (float *)Y->data + (size_t)n * p->out_img,
                    p->mean_fn ? (float *)x->values[s->out[1]].data + n * p->g.C : NULL};
        frt_parallel_ranges(x->tp, p->g.C / 8, p->block_ns, gc_range, &j);
    }
    return FRT_OK;
}

frt_status frt_dn_gc_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L,
                            const frt_dn_dw_geom *geo, int threads) {
    const char *env = getenv("FRT_DNNL_OWN_GC");
    bool force = env && !strcmp(env, "1");
    if (env && !strcmp(env, "0")) return FRT_DECLINE;
    const frt_value *X = c->in[0], *Wt = c->in[1], *B = c->n_in > 2 ? c->in[2] : NULL;
    const frt_value *Y = c->out[0];
    if (L->block != 8 || X->layout != L || X->rank != 4 || Wt->rank != 4 || Y->rank != 4)
        return FRT_DECLINE;
    int64_t C = X->dims[1], group = frt_attr_int(c->node, "group", 1);
    if (group < 2 || C % group || Wt->dims[0] != C || Y->dims[1] != C) return FRT_DECLINE;
    int64_t G = C / group;
    if ((G % 8 && G != 4 && G != 2) || C % 8 || Wt->dims[1] != G) return FRT_DECLINE;
    int act;
    switch (c->node->act.kind) {
    case FRT_ACT_NONE: act = FRT_BLKGC_NONE; break;
    case FRT_ACT_RELU: act = FRT_BLKGC_RELU; break;
    case FRT_ACT_CLIP: act = FRT_BLKGC_CLIP; break;
    default: return FRT_DECLINE;
    }
    frt_blkgc_geom g = {.C = C, .G = G, .H = X->dims[2], .W = X->dims[3], .OH = Y->dims[2],
                        .OW = Y->dims[3], .K = geo->k[0], .S = geo->s[0], .pt = geo->pl[0],
                        .pl = geo->pl[1], .act = act, .lo = c->node->act.lo,
                        .hi = c->node->act.hi};
    if (geo->k[1] != geo->k[0] || geo->s[1] != geo->s[0] || geo->d[0] != 1 || geo->d[1] != 1 ||
        g.pt < 0 || g.pl < 0 || g.pt >= g.K || g.pl >= g.K || !frt_blkgc_simd_covers(&g))
        return FRT_DECLINE;
    /* where it wins: see the note at the top and docs/dependencies.md (measured on the AVX2 tier
       only; the AVX-512 tier's nChw16c layout has blocks of 16 and keeps oneDNN) */
    if (!force && c->isa != FRT_ISA_AVX2) return FRT_DECLINE;
    int64_t K = g.K, cb = C / 8;
    dn_gc *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    float *w = frt_arena_alloc(c->arena, (size_t)(C * K * G * K) * sizeof *w, 64);
    float *bias = frt_arena_alloc(c->arena, (size_t)C * sizeof *bias, 64);
    const frt_layout **in = frt_arena_array(c->arena, (size_t)c->n_in + 1, sizeof *in);
    const frt_layout **out = frt_arena_array(c->arena, 2, sizeof *out);
    if (!p || !w || !bias || !in || !out)
        return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for kernel parameters");
    frt_blkgc_pack(Wt->data, B ? B->data : NULL, C, G, K, w, bias);
    p->g = g;
    p->w = w;
    p->bias = bias;
    p->fn = frt_blkgc_get(c->isa, &g);
    /* ConvMean (onednn.c admits no other two-output conv) */
    p->mean_fn = c->n_out == 2 ? frt_blkmean_get(c->isa) : NULL;
    p->block_ns = 2.0 * 8.0 * (double)(G * K * K * g.OH * g.OW) * FRT_PAR_NS_PER_FLOP_DNNL_AVX2;
    p->in_img = (size_t)(C * g.H * g.W);
    p->out_img = (size_t)(C * g.OH * g.OW);
    in[0] = L;
    out[0] = L;
    if (p->mean_fn) out[1] = L;
    k->params = p;
    k->fn = gc_run;
    bool split = frt_par_split(threads, (double)cb * p->block_ns) > 1;
    k->name = p->mean_fn ? (split ? "gconv_own_split_mean" : "gconv_own_mean")
                      : (split ? "gconv_own_split" : "gconv_own");
    k->in_layouts = in;
    k->out_layouts = out;
    k->const_copied = B ? (1u << 1) | (1u << 2) : 1u << 1;
    return FRT_OK;
}

#endif /* FRT_HAVE_DNNL */
