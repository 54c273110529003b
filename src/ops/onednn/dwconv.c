/* The oneDNN provider's own depthwise convolution (see dwconv.h): weights packed once at select
 * into [ceil(C/b)][K][K][b] (model arena), the bias padded to whole blocks, the fused activation
 * applied as the outputs are stored. A run executes the tier's loop (blkdw.h) once per image of
 * the batch, at N threads (AVX2 tier) as contiguous ranges of channel blocks on the runtime's pool
 * (frt_parallel_ranges; the blocks are independent, so the outputs are the same bits at any
 * thread count); it allocates nothing. Measured against oneDNN 2.6.3's
 * jit_dw kernel: docs/dependencies.md. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dwconv.h"
#include "ops/blkdw.h"
#include "ops/blkmean.h"
#include "ops/x86/simd_act.h"
#include "util/threadpool.h"

#if FRT_HAVE_DNNL

typedef struct dn_dw {
    frt_blkdw_geom g;
    const float *w, *bias;       /* packed (model arena) */
    frt_blkdw_fn fn;
    int64_t b;
    size_t in_img, out_img;      /* floats of one image in the blocked layout */
    frt_actp_fn silu;            /* non-NULL: SiLU by this loop over each output image after the
                                    convolution (g.act is then NONE): AVX2 tier, see select */
    double block_ns;             /* estimated time of one channel block (the thread split) */
    int64_t parts;               /* > 0: always this many ranges (FRT_DNNL_PARTS, tests) */
    frt_blkmean_fn mean_fn;      /* flatrt::ConvMean: output 1 the per-channel mean (blkmean.h),
                                    each channel block summed right after it is computed */
} dn_dw;

typedef struct dw_job {
    const dn_dw *p;
    const float *x;
    float *y;
    float *m;                    /* ConvMean: the image's per-channel means, else NULL */
} dw_job;

/* ConvMean, channel blocks [lo, hi): one block k at a time (the loop on that block's slice of
   x, w, bias and y, C cut to it), its SiLU pass, then its mean into m (b floats), the block still
   in cache. Images of 14x14 and fewer outputs run the range whole, then the means: there the
   blocks are small, the image stays in L2 anyway, and block by block lost (mobilenet_v3_small's
   5x5 HardSwish layers at 7x7, 576 ch: 16 -> 25.5 us against 16 + ~3 for the pool; per-node
   minima, Zen 3). Each block's mean is the same bits whatever the range. */
static void dw_range_mean(const dw_job *j, int64_t lo, int64_t hi) {
    static const float prm[4];
    const dn_dw *p = j->p;
    int64_t b = p->b, K = p->g.K, P = p->g.OH * p->g.OW;
    size_t xs = (size_t)(p->g.H * p->g.W * b), ys = (size_t)(P * b);
    float inv = 1.0f / (float)P;
    frt_blkdw_geom g = p->g;
    if (P <= 196) {
        int64_t C = hi * b < p->g.C ? hi * b : p->g.C;
        g.C = C - lo * b;
        float *y = j->y + (size_t)lo * ys;
        p->fn(j->x + (size_t)lo * xs, p->w + (size_t)(lo * K * K * b), p->bias + lo * b, y, &g, b);
        if (p->silu) p->silu(FRT_ACTP_SILU, y, y, ys * (size_t)(hi - lo), prm);
        for (int64_t k = lo; k < hi; k++) p->mean_fn(j->y + k * ys, P, b, inv, j->m + k * b);
        return;
    }
    for (int64_t k = lo; k < hi; k++) {
        g.C = p->g.C - k * b < b ? p->g.C - k * b : b;
        float *yk = j->y + k * ys;
        p->fn(j->x + k * xs, p->w + (size_t)(k * K * K * b), p->bias + k * b, yk, &g, b);
        if (p->silu) p->silu(FRT_ACTP_SILU, yk, yk, ys, prm);
        p->mean_fn(yk, P, b, inv, j->m + k * b);
    }
}

/* Channel blocks [lo, hi) of one image: the loop over a narrower image (the blocks are
   independent; every output is the same bits whatever the range). */
static void dw_range(void *ctx, int64_t lo, int64_t hi) {
    const dw_job *j = ctx;
    const dn_dw *p = j->p;
    if (j->m) {
        dw_range_mean(j, lo, hi);
        return;
    }
    int64_t b = p->b, C = hi * b < p->g.C ? hi * b : p->g.C;
    frt_blkdw_geom g = p->g;
    g.C = C - lo * b;
    size_t in_blk = (size_t)(g.H * g.W * b), out_blk = (size_t)(g.OH * g.OW * b);
    float *y = j->y + (size_t)lo * out_blk;
    p->fn(j->x + (size_t)lo * in_blk, p->w + (size_t)(lo * g.K * g.K * b), p->bias + lo * b, y,
          &g, b);
    static const float prm[4];
    /* padding lanes hold 0 and SiLU(0) = 0: whole blocks are mapped */
    if (p->silu) p->silu(FRT_ACTP_SILU, y, y, (size_t)(hi - lo) * out_blk, prm);
}

/* part i of p->parts even ranges of channel blocks */
static void dw_part(void *ctx, size_t i) {
    const dw_job *j = ctx;
    int64_t cb = (j->p->g.C + j->p->b - 1) / j->p->b, n = j->p->parts;
    dw_range(ctx, cb * (int64_t)i / n, cb * ((int64_t)i + 1) / n);
}

static frt_status dw_run(const frt_step *s, frt_exec *x) {
    const dn_dw *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    frt_value *Y = &x->values[s->out[0]];
    int64_t H = X->rank == 4 ? X->dims[2] : 1, W = X->dims[X->rank - 1];
    if (X->dims[1] != p->g.C || H != p->g.H || W != p->g.W || Y->dims[0] != X->dims[0])
        return frt_step_fail(s, FRT_ERR_SHAPE, "onednn: depthwise input differs from the "
                             "load-time image %lldx%lldx%lld", (long long)p->g.C,
                             (long long)p->g.H, (long long)p->g.W);
    int64_t cbb = (p->g.C + p->b - 1) / p->b * p->b;
    for (int64_t n = 0; n < X->dims[0]; n++) {
        dw_job j = {p, (const float *)X->data + (size_t)n * p->in_img,
                    (float *)Y->data + (size_t)n * p->out_img,
                    p->mean_fn ? (float *)x->values[s->out[1]].data + n * cbb : NULL};
        if (p->parts > 1 && x->tp) frt_parallel_for(x->tp, (size_t)p->parts, dw_part, &j);
        else frt_parallel_ranges(x->tp, (p->g.C + p->b - 1) / p->b, p->block_ns, dw_range, &j);
    }
    return FRT_OK;
}

frt_status frt_dn_dw_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L,
                            const frt_dn_dw_geom *geo, int threads) {
    const char *env = getenv("FRT_DNNL_OWN_DW");
    int force = env && !strcmp(env, "1");
    if (env && !strcmp(env, "0")) return FRT_DECLINE;
    const frt_value *X = c->in[0], *Wt = c->in[1], *B = c->n_in > 2 ? c->in[2] : NULL;
    const frt_value *Y = c->out[0];
    if (X->layout != L || X->rank != 4 || Wt->rank != 4 || Wt->dims[1] != 1) return FRT_DECLINE;
    int64_t C = X->dims[1], K = geo->k[0];
    if (frt_attr_int(c->node, "group", 1) != C || Wt->dims[0] != C || Y->dims[1] != C)
        return FRT_DECLINE;
    if (geo->k[1] != K || (K != 3 && K != 5) || geo->s[0] != geo->s[1] ||
        (geo->s[0] != 1 && geo->s[0] != 2) || geo->d[0] != 1 || geo->d[1] != 1 ||
        geo->pl[0] < 0 || geo->pl[1] < 0 || geo->pl[0] >= K || geo->pl[1] >= K)
        return FRT_DECLINE;
    int act;
    switch (c->node->act.kind) {
    case FRT_ACT_NONE: act = FRT_BLKDW_NONE; break;
    case FRT_ACT_RELU: act = FRT_BLKDW_RELU; break;
    case FRT_ACT_CLIP: act = FRT_BLKDW_CLIP; break;
    case FRT_ACT_SILU: act = FRT_BLKDW_SILU; break;
    case FRT_ACT_HARDSWISH: act = FRT_BLKDW_HARDSWISH; break;
    default: return FRT_DECLINE;
    }
    /* where it wins (measured one layer at a time against oneDNN 2.6.3's jit_dw, Zen 5,
       AVX-512, 1 thread, min of 200 runs): with SiLU, 3x3 from rows of 14 outputs and 5x5 from
       rows of 28 (oneDNN's swish post-op is slow: 1.2-1.5x on efficientnet_b0's layers); with
       other activations, rows of 56 and more (1.1x on mobilenet_v2's first layers; even at 28).
       On shorter rows the edge columns weigh more and oneDNN is up to 1.4x faster.
       AVX2 tier (nChw8c, Zen 3, per-node profile, min of 3 rounds of 300 runs, one layer after
       a 1x1 conv): with Clip (ReLU6), stride 1 wins at every mobilenet_v2 size (32 ch at
       112x112 112 vs 147 us, 144 at 56x56 132 vs 159, 192 at 28x28 49 vs 57, 576 at 14x14 42 vs
       51, 960 at 7x7 25 vs 27), stride 2 is even (96 ch 112->56 144 vs 139, 144 ch 56->28 56 vs
       54); SiLU applied at the store is slower than oneDNN's kernel + the SiLU loop after it
       (144 ch 56x56 341 vs 302, 5x5 240 ch 28x28 269 vs 200), so SiLU runs as that loop here
       too (p->silu). Since the AVX2 3x3 rows run in tiles of 7 with the edges inside them
       (blkdw_impl.h bd_row7), stride 2 wins too: mobilenet_v2's stride-2 layers 169 -> 156 us
       (96 ch 112->56), 64 -> 58, 23 -> 19, 21 -> 16 with the kernel before that change
       (FRT_DNNL_OWN_DW=1 against the default, min of 3 profiles); the row tiles took the
       microbenchmark of its 3x3 layers (min of 200 runs, warm) from 883 to 794 us. With the row
       tiles 5x5 wins as well: efficientnet_b0's 5x5 layers (SiLU) against oneDNN's jit_dw
       (FRT_DNNL_OWN_DW=1 against the default, min per node of 3 profiles on a loaded host):
       672 ch 14x14 318 -> 188, 231 -> 115, 190 -> 81 us; 240 ch 28x28 332 -> 209; 1152 ch 7x7
       239 -> 51, 78 -> 51, 76 -> 50; stride 2 144 ch 56->28 149 -> 119, 672 ch 14->7 50 -> 37.
       So on the AVX2 tier every 3x3 and 5x5 layer of stride 1 or 2 runs here. */
    int64_t OW = Y->dims[3], b = L->block, cb = (C + b - 1) / b;
    bool wins = b == 16 ? (act == FRT_BLKDW_SILU ? OW >= 28 || (K == 3 && OW >= 14) : OW >= 56)
                        : true;
    if (!force && (!(b == 16 || b == 8) || !wins)) return FRT_DECLINE;
    /* several threads: split over channel blocks (dw_run), measured on the AVX2 tier only (the
       AVX-512 tier keeps oneDNN's split there) */
    if (!force && threads > 1 && c->isa != FRT_ISA_AVX2) return FRT_DECLINE;
    dn_dw *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    float *w = frt_arena_alloc(c->arena, (size_t)(cb * K * K * b) * sizeof *w, 64);
    float *bias = frt_arena_alloc(c->arena, (size_t)(cb * b) * sizeof *bias, 64);
    const frt_layout **in = frt_arena_array(c->arena, (size_t)c->n_in + 1, sizeof *in);
    const frt_layout **out = frt_arena_array(c->arena, 2, sizeof *out);
    if (!p || !w || !bias || !in || !out)
        return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for kernel parameters");
    /* ConvMean (onednn.c admits no other two-output conv) */
    p->mean_fn = c->n_out == 2 ? frt_blkmean_get(c->isa) : NULL;
    frt_blkdw_pack(Wt->data, B ? B->data : NULL, C, K, b, w, bias);
    p->g = (frt_blkdw_geom){.C = C, .H = X->dims[2], .W = X->dims[3], .OH = Y->dims[2],
                            .OW = Y->dims[3], .K = K, .S = geo->s[0], .pt = geo->pl[0],
                            .pl = geo->pl[1], .act = act, .lo = c->node->act.lo,
                            .hi = c->node->act.hi};
    p->w = w;
    p->bias = bias;
    p->b = b;
    /* (with the row tiles SiLU at the store wins: cold output, just-written input, min of 12:
       32 ch 112x112 297 -> 237 us, 96 ch 112->56 320 -> 236, 144 ch 56x56 326 -> 265, 5x5 144
       ch 56->28 226 -> 213, 5x5 240 ch 28x28 179 -> 169, 480 ch 14x14 66 -> 55) */
    if (b == 8 && act == FRT_BLKDW_SILU && !frt_blkdw_row_tiles(&p->g)) {
        p->g.act = FRT_BLKDW_NONE;
        p->silu = frt_actp_variant_get(c->isa)->pointwise;
    }
    p->fn = frt_blkdw_get(c->isa, b, K, geo->s[0]);
    /* the larger of the flops and the bytes estimates, as split.c plans oneDNN's depthwise
       parts on the AVX2 tier (the small layers are bound by the image's bytes) */
    p->block_ns = 2.0 * (double)(K * K * b * p->g.OH * p->g.OW) * FRT_PAR_NS_PER_FLOP_DNNL_DW;
    double blk_bytes = 4.0 * (double)(b * (p->g.H * p->g.W + p->g.OH * p->g.OW));
    if (blk_bytes * FRT_PAR_NS_PER_BYTE > p->block_ns) p->block_ns = blk_bytes * FRT_PAR_NS_PER_BYTE;
    const char *be = getenv("FRT_DW_BLOCK_NS_X");
    if (be && atof(be) > 0) p->block_ns *= atof(be);
    /* FRT_DNNL_PARTS (debugging aid of split.c, tests): as many ranges at N threads */
    const char *pe = getenv("FRT_DNNL_PARTS");
    if (threads > 1 && pe && atoll(pe) > 1) p->parts = atoll(pe) < cb ? atoll(pe) : cb;
    p->in_img = (size_t)(cb * p->g.H * p->g.W * b);
    p->out_img = (size_t)(cb * p->g.OH * p->g.OW * b);
    in[0] = L;
    out[0] = L;
    if (p->mean_fn) out[1] = L;
    k->params = p;
    k->fn = dw_run;
    bool split = p->parts > 1 || frt_par_split(threads, (double)cb * p->block_ns) > 1;
    k->name = p->mean_fn ? (split ? "dw_own_mean_split" : "dw_own_mean")
                         : split ? "dw_own_split" : "dw_own";
    k->in_layouts = in;
    k->out_layouts = out;
    k->const_copied = B ? (1u << 1) | (1u << 2) : 1u << 1;
    return FRT_OK;
}

#endif /* FRT_HAVE_DNNL */
