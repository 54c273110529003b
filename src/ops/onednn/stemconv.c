/* The oneDNN provider's own stem convolution (see stemconv.h): weights packed once at select
 * into [ceil(M/b)][C][K][K][b] (model arena; b = 8 on the AVX2 tier's nChw8c, 16 on the AVX-512
 * tier's nChw16c), the fused activation applied as the outputs are
 * stored (SiLU too: no pass over the output after it). A run executes the tier's loop
 * (blkstem.h) over each image's output rows, at N threads as contiguous ranges of rows on the
 * runtime's pool (frt_parallel_ranges; every output element is the same chain of fused
 * multiply-adds whatever the range, so the outputs are the same bits at any thread count). It
 * allocates nothing.
 *
 * Why: oneDNN 2.6's jit:avx2 direct kernel for a plain 3-channel input with a swish or
 * hardswish post-op ran the 3x3 stride-2 stems of efficientnet_b0 / mobilenet_v3 at 42 / 64
 * GFLOP/s on Zen 3 against 92 without the post-op (docs/architecture.md has the table). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ops/blkstem.h"
#include "stemconv.h"
#include "util/threadpool.h"

#if FRT_HAVE_DNNL

typedef struct dn_stem {
    frt_blkstem_geom g;
    const float *w, *bias;       /* packed (model arena) */
    frt_blkstem_fn fn;
    double row_ns;               /* estimated time of one output row */
    size_t in_img, out_img;      /* floats of one image: plain input, blocked output */
} dn_stem;

typedef struct stem_job {
    const dn_stem *p;
    const float *x;
    float *y;
} stem_job;

static void stem_range(void *ctx, int64_t lo, int64_t hi) {
    const stem_job *j = ctx;
    j->p->fn(j->x, j->p->w, j->p->bias, j->y, &j->p->g, lo, hi);
}

static frt_status stem_run(const frt_step *s, frt_exec *x) {
    const dn_stem *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    frt_value *Y = &x->values[s->out[0]];
    if (X->rank != 4 || X->dims[1] != p->g.C || X->dims[2] != p->g.H || X->dims[3] != p->g.W ||
        Y->dims[0] != X->dims[0])
        return frt_step_fail(s, FRT_ERR_SHAPE, "onednn: stem convolution input differs from "
                             "the load-time image %lldx%lldx%lld", (long long)p->g.C,
                             (long long)p->g.H, (long long)p->g.W);
    for (int64_t n = 0; n < X->dims[0]; n++) {
        stem_job j = {p, (const float *)X->data + (size_t)n * p->in_img,
                      (float *)Y->data + (size_t)n * p->out_img};
        frt_parallel_ranges(x->tp, p->g.OH, p->row_ns, stem_range, &j);
    }
    return FRT_OK;
}

frt_status frt_dn_stem_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L,
                              const frt_dn_dw_geom *geo, int threads) {
    const char *env = getenv("FRT_DNNL_OWN_STEM");
    bool force = env && !strcmp(env, "1");
    if (env && !strcmp(env, "0")) return FRT_DECLINE;
    const frt_value *X = c->in[0], *Wt = c->in[1], *B = c->n_in > 2 ? c->in[2] : NULL;
    const frt_value *Y = c->out[0];
    if ((L->block != 8 && L->block != 16) || X->layout == L || X->rank != 4 || Wt->rank != 4 ||
        Y->rank != 4)
        return FRT_DECLINE;
    int64_t C = X->dims[1], M = Wt->dims[0];
    if (frt_attr_int(c->node, "group", 1) != 1 || C < 1 || C > FRT_BLKSTEM_CMAX ||
        Wt->dims[1] != C || Y->dims[1] != M)
        return FRT_DECLINE;
    int act;
    switch (c->node->act.kind) {
    case FRT_ACT_NONE: act = FRT_BLKSTEM_NONE; break;
    case FRT_ACT_RELU: act = FRT_BLKSTEM_RELU; break;
    case FRT_ACT_CLIP: act = FRT_BLKSTEM_CLIP; break;
    case FRT_ACT_SILU: act = FRT_BLKSTEM_SILU; break;
    case FRT_ACT_HARDSWISH: act = FRT_BLKSTEM_HARDSWISH; break;
    default: return FRT_DECLINE;
    }
    frt_blkstem_geom g = {.B = L->block, .C = C, .M = M, .H = X->dims[2], .W = X->dims[3], .OH = Y->dims[2],
                          .OW = Y->dims[3], .KH = geo->k[0], .KW = geo->k[1], .S = geo->s[0],
                          .pt = geo->pl[0], .pl = geo->pl[1], .act = act,
                          .lo = c->node->act.lo, .hi = c->node->act.hi};
    if (geo->s[1] != geo->s[0] || geo->d[0] != 1 || geo->d[1] != 1 || g.pt < 0 || g.pl < 0 ||
        !frt_blkstem_simd_covers(&g))
        return FRT_DECLINE;
    /* Where it wins (bench/stem_bench.c on one layer; bench/layer_ab.sh FRT_DNNL_OWN_STEM=0/1
       inside the models, which is what decides):
       - AVX2 tier (nChw8c, Zen 3): oneDNN 2.6's jit:avx2 kernel runs these layers at 88-99
         GFLOP/s without a post-op or with Relu / Clip (the loop here at 74-94: oneDNN stays), but
         its swish and hardswish post-ops cost 20-35% on top, where the loop's activation at the
         store costs less: the loop takes SiLU and HardSwish stems.
       - AVX-512 tier (nChw16c, Zen 5): the 7x7 stride-2 3->64 stems of resnet18/50 and
         densenet121 (1 thread, median us in the model) 1392 -> 1312, 1360 -> 1256, 1380 -> 1336
         (2 threads 812 -> 739, 812 -> 753, 832 -> 778): the loop takes 7x7 stems. The 3x3 ones
         of squeezenet1_1, mobilenet_v2/v3 and efficientnet_b0 were slower in the model (284 ->
         302, 173 -> 205, 81 -> 104, 274 -> 302), though faster alone except mobilenet_v3's
         (the cause inside the models is not known), and oneDNN stays. */
    bool wins = c->isa == FRT_ISA_AVX2 ? act == FRT_BLKSTEM_SILU || act == FRT_BLKSTEM_HARDSWISH
                                       : c->isa >= FRT_ISA_AVX512 && g.KH == 7;
    if (!force && !wins) return FRT_DECLINE;
    int64_t K = g.KH, b = g.B, mb = (M + b - 1) / b;
    dn_stem *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    float *w = frt_arena_alloc(c->arena, (size_t)(mb * b * C * K * K) * sizeof *w, 64);
    float *bias = frt_arena_alloc(c->arena, (size_t)(mb * b) * sizeof *bias, 64);
    const frt_layout **in = frt_arena_array(c->arena, (size_t)c->n_in + 1, sizeof *in);
    const frt_layout **out = frt_arena_array(c->arena, 2, sizeof *out);
    if (!p || !w || !bias || !in || !out)
        return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for kernel parameters");
    frt_blkstem_pack(Wt->data, B ? B->data : NULL, M, C, K, K, b, w, bias);
    p->g = g;
    p->w = w;
    p->bias = bias;
    p->fn = frt_blkstem_get(c->isa, &g);
    p->row_ns = 2.0 * (double)(mb * b * C * K * K * g.OW) *
                (b == 8 ? FRT_PAR_NS_PER_FLOP_DNNL_AVX2 : FRT_PAR_NS_PER_FLOP_DNNL);
    p->in_img = (size_t)(C * g.H * g.W);
    p->out_img = (size_t)(mb * b * g.OH * g.OW);
    in[0] = FRT_LAYOUT_PLAIN;
    out[0] = L;
    k->params = p;
    k->fn = stem_run;
    k->name = frt_par_split(threads, (double)g.OH * p->row_ns) > 1 ? "stem_own_split"
                                                                  : "stem_own";
    k->in_layouts = in;
    k->out_layouts = out;
    k->const_copied = B ? (1u << 1) | (1u << 2) : 1u << 1;
    return FRT_OK;
}

#endif /* FRT_HAVE_DNNL */
