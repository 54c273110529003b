/* The oneDNN provider's own pointwise convolution (see pwconv.h): weights packed once at select
 * into [ceil(M/8)][C][8] (model arena), the bias padded to whole blocks, the residual and the
 * fused activation applied as the outputs are stored. A run executes the tier's loop (blkpw.h)
 * over each image's pixels, at N threads as contiguous pixel ranges on the runtime's pool
 * (frt_parallel_ranges; every output element is the same chain of fused multiply-adds whatever
 * the range, so the outputs are the same bits at any thread count). It allocates nothing.
 *
 * Why: oneDNN's 1x1 convolutions split over output channel blocks (split.c), which cannot give
 * two threads even halves of a layer with one or three blocks and gave the 16- and 24-channel
 * layers of mobilenet_v2 1.2-1.5x at 2 threads. Pixel ranges of the blocked layout are
 * contiguous in every channel block, so parts need no copies. At 1 thread the loop runs at oneDNN's
 * speed on those layers (measured with FRT_DNNL_OWN_PW=0/1, see docs/architecture.md).
 * Layers of 64 pixels or fewer (7x7) run it too, faster than oneDNN's jit_1x1 there (see
 * frt_dn_pw_select), split at N threads into ranges of output blocks instead (same bits). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ops/blkpw.h"
#include "pwconv.h"
#include "util/threadpool.h"

#if FRT_HAVE_DNNL

enum { PW_CHUNK = 24 }; /* pixels per range unit: whole tiles of 4, 6 and 8 pixels */
enum { PW_UNIT = 3 };   /* output blocks per range unit of a split over blocks (a 3-block group) */

typedef struct dn_pw {
    frt_blkpw_geom g;
    const float *w, *bias;       /* packed (model arena) */
    frt_blkpw_fn fn;
    double chunk_ns;             /* estimated time of PW_CHUNK pixels (of PW_UNIT blocks) */
    bool by_blocks;              /* parts are ranges of output blocks, not of pixels */
    size_t in_img, out_img;      /* floats of one image in the blocked layout */
} dn_pw;

typedef struct pw_job {
    const dn_pw *p;
    const float *x, *z;
    float *y;
} pw_job;

static void pw_range(void *ctx, int64_t lo, int64_t hi) {
    const pw_job *j = ctx;
    int64_t s0 = lo * PW_CHUNK, s1 = hi * PW_CHUNK;
    if (s1 > j->p->g.S) s1 = j->p->g.S;
    j->p->fn(j->x, j->p->w, j->p->bias, j->z, j->y, &j->p->g, s0, s1);
}

/* Output blocks [PW_UNIT lo, PW_UNIT hi) over all pixels: the loop on the part's weights, bias
   and output (and residual) blocks, with M cut to the part (its last block keeps its padding). */
static void pw_range_blocks(void *ctx, int64_t lo, int64_t hi) {
    const pw_job *j = ctx;
    const dn_pw *p = j->p;
    int64_t C = p->g.C, S = p->g.S, mb = (p->g.M + 7) / 8, b0 = lo * PW_UNIT;
    int64_t b1 = hi * PW_UNIT < mb ? hi * PW_UNIT : mb;
    frt_blkpw_geom g = p->g;
    g.M = (p->g.M < b1 * 8 ? p->g.M : b1 * 8) - b0 * 8;
    size_t at = (size_t)(b0 * S * 8);
    p->fn(j->x, p->w + (size_t)(b0 * C * 8), p->bias + b0 * 8, j->z ? j->z + at : NULL,
          j->y + at, &g, 0, S);
}

static frt_status pw_run(const frt_step *s, frt_exec *x) {
    const dn_pw *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    const frt_value *Z = s->n_in > 3 && s->in[3] >= 0 ? &x->values[s->in[3]] : NULL;
    frt_value *Y = &x->values[s->out[0]];
    if (X->rank != 4 || X->dims[1] != p->g.C || X->dims[2] * X->dims[3] != p->g.S ||
        Y->dims[0] != X->dims[0])
        return frt_step_fail(s, FRT_ERR_SHAPE, "onednn: pointwise input differs from the "
                             "load-time image of %lld channels, %lld pixels",
                             (long long)p->g.C, (long long)p->g.S);
    int64_t chunks = p->by_blocks ? ((p->g.M + 7) / 8 + PW_UNIT - 1) / PW_UNIT
                                  : (p->g.S + PW_CHUNK - 1) / PW_CHUNK;
    for (int64_t n = 0; n < X->dims[0]; n++) {
        pw_job j = {p, (const float *)X->data + (size_t)n * p->in_img,
                    Z ? (const float *)Z->data + (size_t)n * p->out_img : NULL,
                    (float *)Y->data + (size_t)n * p->out_img};
        frt_parallel_ranges(x->tp, chunks, p->chunk_ns, p->by_blocks ? pw_range_blocks : pw_range,
                            &j);
    }
    return FRT_OK;
}

frt_status frt_dn_pw_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L, int threads) {
    const char *env = getenv("FRT_DNNL_OWN_PW");
    bool force = env && !strcmp(env, "1");
    if (env && !strcmp(env, "0")) return FRT_DECLINE;
    bool fused = c->n_in > 3 && c->in[3];
    const frt_value *X = c->in[0], *Wt = c->in[1], *B = c->n_in > 2 ? c->in[2] : NULL;
    const frt_value *Z = fused ? c->in[3] : NULL, *Y = c->out[0];
    if (L->block != 8 || X->layout != L || X->rank != 4 || Wt->rank != 4 || Y->rank != 4 ||
        Wt->dims[2] != 1 || Wt->dims[3] != 1 || Wt->dims[1] != X->dims[1] ||
        Y->dims[1] != Wt->dims[0] || Y->dims[2] != X->dims[2] || Y->dims[3] != X->dims[3] ||
        (Z && Z->layout != L))
        return FRT_DECLINE;
    int act;
    switch (c->node->act.kind) {
    case FRT_ACT_NONE: act = FRT_BLKPW_NONE; break;
    case FRT_ACT_RELU: act = FRT_BLKPW_RELU; break;
    case FRT_ACT_CLIP: act = FRT_BLKPW_CLIP; break;
    case FRT_ACT_SILU: act = FRT_BLKPW_SILU; break;
    case FRT_ACT_HARDSWISH: act = FRT_BLKPW_HARDSWISH; break;
    default: return FRT_DECLINE;
    }
    int64_t C = X->dims[1], M = Wt->dims[0], S = X->dims[2] * X->dims[3], mb = (M + 7) / 8;
    /* the AVX2 tier's layers of one to three, five or seven output blocks, which oneDNN's
       channel split cannot halve (the AVX-512 tier, nChw16c, keeps oneDNN: not measured there).
       At 1 thread the loop is level with oneDNN's 1x1 kernel on every 1x1 layer of mobilenet_v2
       and efficientnet_b0 (0.94-1.06 per layer, FRT_DNNL_OWN_PW=1 against 0, min of 3 profiles
       under chrt); at 2 threads the pixel split beats the channel split on those few-block layers
       (efficientnet_b0: 16 ch 0.67, 24 ch 0.72-0.75, 40 ch 0.85-0.92 of oneDNN's time) but
       loses where each part streams large weights for few pixels (1152->192 at 14x14: 1.21) */
    bool few = mb <= 3 || (mb <= 7 && mb % 2 == 1);
    /* and the layers of 64 pixels or fewer with at most 320 input channels (7x7: mobilenet_v2's
       160 -> 960 and 320 -> 1280), whose weights come from L3 or memory for few pixels each:
       the loop prefetches the next group's weights and ends a row of 49 pixels without a
       one-pixel tile; per-node minima at 1 thread 0.90-0.92 of oneDNN's jit_1x1, where 14x14
       layers are level and the larger images' expand layers (16, 24, 32 -> 6x channels) 4-16%
       slower (FRT_DNNL_OWN_PW=1 against 0, 4 alternating runs). At N threads they split into
       ranges of output blocks (a few pixels each cannot be shared out; oneDNN splits them over
       channel blocks too), so every thread count runs the same loop and gives the same bits.
       The 7x7 layers of 576 and 960 input channels were 0.94-0.97 at 1 thread too, but that
       split ran them 1.3-1.4x oneDNN's at 2 threads (per-node minima, mobilenet_v2 under
       chrt -f 1), so they keep oneDNN. */
    bool small_map = S <= 64 && C <= 320;
    /* and the layers of 14x14 pixels or fewer with at most 512 input channels (of more than 64
       pixels at 1 thread only):
       resnet50's 256 -> 1024 at 14x14 and 512 -> 2048 at 7x7 (+ residual, Relu) 0.95-0.97 and
       RegNetY-400MF's 14x14 and 7x7 layers (208 and 440 channels) 0.92-0.97 of oneDNN's jit_1x1
       time, where layers of 1024 and 2048 input channels at these sizes are 3-24% slower with
       the loop (the image of one 8-pixel tile's inputs outgrows L1) and 28x28 and larger images
       level to 3% slower (per-node minima, FRT_DNNL_OWN_PW=1 against 0, Zen 3, chrt -f 1, 3-5
       alternating profiles; docs/architecture.md). At 2 threads the 7x7 ones split into ranges
       of output blocks run 0.96-0.98 of oneDNN's channel split (resnet50, regnet), the 14x14
       ones split into pixel ranges 1.03-1.05 (resnet50) and 1.10-1.25 (mobilenet_v2's), so
       those keep oneDNN at N threads (the outputs then differ in the last bits between 1 and N
       threads, as for the stride-2 Winograd) */
    bool mid_map = C <= 512 && (S <= 64 || (S <= 196 && threads == 1));
    /* SiLU and HardSwish at the store (blkpw.h) only when forced: on Zen 3 the loop with them
       lost to oneDNN's 1x1 primitive + the tier's SiLU loop after it (onednn.c own_silu) and to
       oneDNN with its hardswish post-op on every expand shape of efficientnet_b0 and
       mobilenet_v3_small (per-node minima of 3 traced rounds, one-layer models: SiLU 16->96 at
       112x112 911 against 850 us, 24->144@56 420/388, 40->240@28 236/216, 80->480@14 195/184,
       the 7x7 layers 192->1152 326/247 and 320->1280 590/442; HardSwish 1.03-1.12x). The SiLU
       pass after oneDNN is bound by its arithmetic (~0.34 ns per element in L1, 0.38 over the
       layer's output), not by re-reading the output, so applying it at the store saves little,
       and in the tile it competes with the FMAs for the same pipes (docs/dependencies.md). */
    bool act_at_store = act == FRT_BLKPW_SILU || act == FRT_BLKPW_HARDSWISH;
    /* At 1 thread also the 7x7 layers (64 pixels or fewer) of any width, those of more than 512
       input channels in slices of the input channels (kc below, blkpw.h), with any activation,
       and the 14x14 ones with HardSwish: per-node minima inside the models (FRT_DNNL_OWN_PW=1
       against oneDNN's jit_1x1, 4 traced rounds of 10 runs, Zen 3): mnasnet1_0's 576/1152 ->
       192/320 at 7x7 0.95-0.98 (unsliced 1.20-1.33), mobilenet_v3_large's 672/960 -> 160 at 7x7
       0.95-0.99, its HardSwish expands 160 -> 960 at 7x7 0.90-0.92 and 80 -> 184..480 at 14x14
       0.94-0.98 (112 -> 672 level), efficientnet_b0's SiLU 192 -> 1152 at 7x7 0.95 and 1152 ->
       192/320 0.96-0.98; its SiLU layers at 14x14 1.00-1.02 and the larger images' 1.04-1.08 keep
       oneDNN (+ the SiLU loop). At N threads these keep oneDNN (see small_map). */
    bool wide7 = threads == 1 && S <= 64;
    bool store_ok = threads == 1 && (S <= 64 || (S <= 196 && act == FRT_BLKPW_HARDSWISH));
    if (!force && (c->isa != FRT_ISA_AVX2 || !(few || small_map || mid_map || wide7) ||
                   (act_at_store && !store_ok)))
        return FRT_DECLINE;
    dn_pw *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    float *w = frt_arena_alloc(c->arena, (size_t)(mb * C * 8) * sizeof *w, 64);
    float *bias = frt_arena_alloc(c->arena, (size_t)(mb * 8) * sizeof *bias, 64);
    const frt_layout **in = frt_arena_array(c->arena, (size_t)c->n_in + 1, sizeof *in);
    const frt_layout **out = frt_arena_array(c->arena, 2, sizeof *out);
    if (!p || !w || !bias || !in || !out)
        return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for kernel parameters");
    frt_blkpw_pack(Wt->data, B ? B->data : NULL, C, M, w, bias);
    p->g = (frt_blkpw_geom){.C = C, .M = M, .S = S, .act = act, .lo = c->node->act.lo,
                            .hi = c->node->act.hi};
    /* input channel slices (blkpw.h): the layers of more than 512 input channels, whose tile
       groups' weights (3 blocks x C x 32 bytes) outgrow L1, in slices of 128 (12 KiB: mnasnet1_0's
       1152 -> 192 at 7x7 0.95-0.98 of oneDNN's time, slices of 256 0.97-1.02, 512 0.98-1.03);
       FRT_BLKPW_KC overrides (0: none) */
    p->g.kc = C > 512 ? 128 : 0;
    const char *kce = getenv("FRT_BLKPW_KC");
    if (kce) p->g.kc = atoll(kce) / 8 * 8;
    p->w = w;
    p->bias = bias;
    p->fn = frt_blkpw_variant_get(c->isa)->run;
    p->by_blocks = (small_map || mid_map || wide7) && !few;
    p->chunk_ns = 2.0 * (double)C * (p->by_blocks ? (double)S * 8 * PW_UNIT : (double)M * PW_CHUNK) *
                  FRT_PAR_NS_PER_FLOP_DNNL_AVX2;
    p->in_img = (size_t)((C + 7) / 8 * 8 * S);
    p->out_img = (size_t)(mb * 8 * S);
    in[0] = L;
    if (Z) in[3] = L;
    out[0] = L;
    k->params = p;
    k->fn = pw_run;
    double chunks = p->by_blocks ? (double)((mb + PW_UNIT - 1) / PW_UNIT)
                                 : (double)((S + PW_CHUNK - 1) / PW_CHUNK);
    k->name = frt_par_split(threads, chunks * p->chunk_ns) > 1 ? "pw_own_split" : "pw_own";
    k->in_layouts = in;
    k->out_layouts = out;
    k->const_copied = B ? (1u << 1) | (1u << 2) : 1u << 1;
    return FRT_OK;
}

#endif /* FRT_HAVE_DNNL */
