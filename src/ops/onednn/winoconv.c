/* The oneDNN provider's own Winograd convolution (see winoconv.h): weights transformed once at
 * select (frt_wino_pack, model arena), the bias padded to whole panels; a run executes the tile
 * blocks of each image with the tier's pieces (wino.h), split into parts on the runtime's pool
 * when the model has several intra-op threads and the cost model says it pays (each part its own
 * slice of the step's scratch: nothing is allocated per run). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ops/wino.h"
#include "util/threadpool.h"
#include "winoconv.h"

#if FRT_HAVE_DNNL

typedef struct dn_wino {
    frt_wino_geom g;
    const float *U, *bias;
    const frt_wino_variant *v;
    int64_t parts, nsplit, items;
    const int64_t *bound;        /* part i runs items [bound[i], bound[i + 1]) (parts + 1) */
    size_t in_img, out_img;      /* floats of one image in L */
    size_t part_floats;          /* scratch floats of one part (a multiple of 16) */
} dn_wino;

typedef struct wino_job {
    const dn_wino *p;
    const float *x, *z;
    float *y, *scratch;
} wino_job;

static void wino_part(void *ctx, size_t i) {
    const wino_job *j = ctx;
    const dn_wino *p = j->p;
    if (p->bound[i] < p->bound[i + 1])
        frt_wino_run(p->v, j->x, p->U, p->bias, j->z, j->y, &p->g, p->nsplit, p->bound[i],
                     p->bound[i + 1], j->scratch + i * p->part_floats);
}

static frt_status wino_run(const frt_step *s, frt_exec *x) {
    const dn_wino *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    const frt_value *Z = s->n_in > 3 && s->in[3] >= 0 ? &x->values[s->in[3]] : NULL;
    frt_value *Y = &x->values[s->out[0]];
    if (X->rank != 4 || X->dims[1] != p->g.C || X->dims[2] != p->g.H || X->dims[3] != p->g.W ||
        Y->dims[0] != X->dims[0])
        return frt_step_fail(s, FRT_ERR_SHAPE, "onednn: input image differs from the load-time "
                             "%lldx%lldx%lld", (long long)p->g.C, (long long)p->g.H,
                             (long long)p->g.W);
    for (int64_t n = 0; n < X->dims[0]; n++) {
        wino_job j = {p, (const float *)X->data + (size_t)n * p->in_img,
                      Z ? (const float *)Z->data + (size_t)n * p->out_img : NULL,
                      (float *)Y->data + (size_t)n * p->out_img, x->scratch};
        if (p->parts > 1 && x->tp) frt_parallel_for(x->tp, (size_t)p->parts, wino_part, &j);
        else
            for (int64_t i = 0; i < p->parts; i++) wino_part(&j, (size_t)i);
    }
    return FRT_OK;
}

static size_t wino_scratch(const frt_step *s, const frt_value *values) {
    const dn_wino *p = s->k.params;
    return (size_t)p->parts * p->part_floats * sizeof(float);
}

/* Whether the Winograd kernel is expected to beat oneDNN's direct convolution for this shape on
 * the AVX2 tier. Per image the GEMMs read all of U (36 C M floats for F(4x4), 16 C M for F(2x2);
 * mostly from L3 or memory inside a model) once per tile block, against 72 (F(4x4)) or 32 (F(2x2))
 * C M flops per tile: with few tiles the step is bound by U's bytes. F(4x4), measured in resnet18
 * (Zen 3, 1 thread, flatrt bench --profile, load ~2-3): 64->64 at 56x56 (196 tiles, 15 KB of U
 * per tile) 2.8 -> 1.6 ms, 128->128 at 28x28 (49 tiles, 48 KB) 2.9 -> 1.4, 256->256 at 14x14 (16
 * tiles, 590 KB) 3.1 -> 2.4-2.8, 512->512 at 7x7 (4 tiles, 9.4 MB per tile) 4.0 -> 4.3-5.2
 * (slower). Rule: at most 1 MiB of U per tile. Shapes that fail it take F(2x2) when its U is at
 * most 1.25 MiB per tile: 512->512 at 7x7 (16 tiles, 1.05 MB per tile; resnet18's layer4, three
 * layers, resnet50's two 3x3 of layer4.1/4.2), in resnet18 with oneDNN's direct convolution 3.2-3.7
 * ms per layer, F(2x2) 2.7-3.1, F(4x4) 3.1-3.3 (FRT_WINO_SMALL=0|2|4, interleaved profiles, load
 * ~5); whole model p50 27.4-28.1 -> 25.5-26.0 ms in 4 interleaved pairs. */
static bool wino_wins(const frt_wino_geom *g, double per_tile) {
    double ubytes = (double)frt_wino_u_floats_geom(g) * sizeof(float);
    return ubytes <= (double)g->ntiles * per_tile;
}

/* And a stride-1 shape with at least 16 tiles wins whatever U's size. Per image the GEMMs stream
 * U (36 or 16 C M floats) from memory once per tile block (48 tiles a block once U outgrows 1
 * MiB, so every block has at least 16 of them), while the multiplies saved grow with the tiles:
 * (16 x 9 - 36) C M per F(4x4) tile, (4 x 9 - 16) C M per F(2x2) tile; U's bytes per saved flop
 * are 0.67 / ntiles (F(4x4)) and 1.6 / ntiles (F(2x2)), independent of C and M. At 16 tiles that
 * is 0.04-0.1 bytes per flop, a few GB/s at the core's rate, well within the memory's 19 GB/s:
 * wide_resnet50_2 (Zen 3, 1 thread, per-node medians of 4-6 interleaved profiles, loaded host)
 * 512->512 at 14x14 (F(4x4) 16 tiles, 2.4 MB of U per tile) F(4x4) 9.1-11.7 ms against F(2x2)
 * 15.9-17.4 (WB_COLD=1 bench/wino_bench.c: 10.7 against 17.1-17.9), and 1024->1024 at 7x7
 * (F(2x2) 16 tiles, 4.2 MB per tile) F(2x2) 15.3-22.7 against oneDNN's direct jit:avx2
 * 24.5-28.1. The 1 MiB per tile rule stays for fewer tiles (resnet18's 512->512 at 7x7: 4 F(4x4)
 * tiles, 0.17 bytes per saved flop, slower than direct). */
static bool wino_many_tiles(const frt_wino_geom *g) {
    return g->s == 1 && g->ntiles >= 16;
}

static frt_status wino_install(frt_op_ctx *c, frt_kernel *k, const frt_layout *L,
                               const frt_wino_geom *gp, double kk, int threads);

static int wino_act(const frt_op_ctx *c, frt_wino_geom *g) {
    switch (c->node->act.kind) {
    case FRT_ACT_NONE: g->act = FRT_WINO_NONE; return 1;
    case FRT_ACT_RELU: g->act = FRT_WINO_RELU; return 1;
    case FRT_ACT_CLIP:
        g->act = FRT_WINO_CLIP, g->lo = c->node->act.lo, g->hi = c->node->act.hi;
        return 1;
    default: return 0;
    }
}

frt_status frt_dn_wino1_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L,
                               const int64_t pb[2], const int64_t pe[2], int threads) {
    const char *env = getenv("FRT_WINO1");
    bool force = env && !strcmp(env, "1");
    if (env && !strcmp(env, "0")) return FRT_DECLINE;
    const frt_value *X = c->in[0], *Wt = c->in[1], *Y = c->out[0];
    if (X->rank != 4 || Wt->rank != 4 || Wt->dims[1] != X->dims[1] || Y->rank != 4 ||
        Y->dims[1] != Wt->dims[0] || (L->block != 8 && L->block != 16))
        return FRT_DECLINE;
    /* the axis: along the rows (a kd x r kernel, kd = 1 included), or down the columns for an
       r x 1 kernel */
    int64_t axis = Wt->dims[3] == 1 && Wt->dims[2] > 1 ? 1 : 0, r = Wt->dims[axis ? 2 : 3];
    int64_t kd = Wt->dims[axis ? 3 : 2];
    int d = axis ? 0 : 1; /* the axis' index in pb, pe */
    if (r < 2 || pb[d] < 0 || pb[d] >= r || pe[d] < 0 || pb[1 - d] < 0 || pb[1 - d] >= kd ||
        pe[1 - d] < 0)
        return FRT_DECLINE;
    frt_wino_geom g = {.C = X->dims[1], .M = Wt->dims[0], .H = X->dims[2], .W = X->dims[3],
                       .OH = Y->dims[2], .OW = Y->dims[3], .pt = pb[0], .pl = pb[1],
                       .b = L->block, .s = 1, .r = r, .axis = axis, .kd = kd};
    if (!wino_act(c, &g)) return FRT_DECLINE;
    /* the tile side: the fewest multiplies, ceil(n / m) (m + r - 1) over the output's length n
       along the axis, m <= FRT_WINO1_MMAX and m + r - 1 <= FRT_WINO1_PMAX, the smaller m on a tie
       (17 outputs, r 7: F(4, 7) 50 against F(3, 7) 54, F(2, 7) 72 and a direct 119; 8
       outputs, r 3: F(4, 3) 12 against a direct 24). FRT_WINO1_M forces it (if it fits). */
    int64_t n = axis ? g.OH : g.OW, best = 0, bm = 0;
    for (int64_t m = 2; m <= FRT_WINO1_MMAX && m + r - 1 <= FRT_WINO1_PMAX; m++) {
        int64_t cost = (n + m - 1) / m * (m + r - 1);
        if (!bm || cost < best) best = cost, bm = m;
    }
    const char *me = getenv("FRT_WINO1_M");
    if (me && atoll(me) >= 2 && atoll(me) <= FRT_WINO1_MMAX && atoll(me) + r - 1 <= FRT_WINO1_PMAX)
        bm = atoll(me);
    if (!bm) return FRT_DECLINE;
    g.m = bm;
    frt_wino_geom_init(&g, 0);
    /* the rule of the 3x3 forms: at most 1 MiB of U per tile; and a saving of at least a third
       of the direct multiplies (n r per line against best) */
    bool wins = force || (wino_wins(&g, 1048576.0) && 3 * best <= 2 * n * r);
    const char *te = getenv("FRT_WINO_T");
    if (te && atoll(te) > 0) frt_wino_geom_init(&g, atoll(te));
    else if (frt_wino_u_floats_geom(&g) * sizeof(float) > 1048576) frt_wino_geom_init(&g, 48);
    frt_wino_even_blocks(&g);
    if (!force && (L->block != 8 || c->isa != FRT_ISA_AVX2 || !wins)) return FRT_DECLINE;
    return wino_install(c, k, L, &g, 2.0 * (double)(r * kd), threads);
}

frt_status frt_dn_wino_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L, int64_t pt,
                              int64_t pl, int64_t stride, int threads) {
    const char *env = getenv("FRT_WINO");
    bool force = env && !strcmp(env, "1");
    if (env && !strcmp(env, "0")) return FRT_DECLINE;
    const frt_value *X = c->in[0], *Wt = c->in[1];
    const frt_value *Y = c->out[0];
    if (X->rank != 4 || Wt->rank != 4 || Wt->dims[2] != 3 || Wt->dims[3] != 3 ||
        Wt->dims[1] != X->dims[1] || Y->rank != 4 || Y->dims[1] != Wt->dims[0] ||
        (L->block != 8 && L->block != 16) || pt < 0 || pl < 0 || pt > 2 || pl > 2 ||
        (stride != 1 && stride != 2))
        return FRT_DECLINE;
    frt_wino_geom g = {.C = X->dims[1], .M = Wt->dims[0], .H = X->dims[2], .W = X->dims[3],
                       .OH = Y->dims[2], .OW = Y->dims[3], .pt = pt, .pl = pl, .b = L->block,
                       .s = stride};
    /* the AVX-512 tier keeps oneDNN (its own Winograd there); AVX2 where it wins, F(4x4) or
       else F(2x2) (wino_wins). Tuning aids: FRT_WINO_M=2|4 forces the tile side of every
       Winograd layer; FRT_WINO_SMALL=0|4|2 what shapes that fail the F(4x4) rule run: oneDNN,
       F(4x4) or F(2x2) (default: F(2x2) where its own rule holds); FRT_WINO_T tiles per block. */
    if (!wino_act(c, &g)) return FRT_DECLINE;
    const char *me = getenv("FRT_WINO_M"), *se = getenv("FRT_WINO_SMALL");
    const char *te = getenv("FRT_WINO_T");
    int64_t T = te ? atoll(te) : 0;
    bool wins = force;
    g.m = me && atoll(me) == 2 ? 2 : 4;
    frt_wino_geom_init(&g, 0);
    /* stride 2 (wino.h; m is 2): 16 C M floats of U, 50 C M flops per tile. In resnet50 (Zen 3,
       1 thread, flatrt bench --profile, FRT_WINO_S2=0|1 alternated) against oneDNN's direct
       kernel: 128->128 56x56 -> 28x28 (196 tiles) 2.63 -> 2.22 ms, 256->256 28x28 -> 14x14 (49
       tiles, 85 KB of U per tile) 2.71 -> 2.40, 512->512 14x14 -> 7x7 (16 tiles, 1 MiB per
       tile) slower (4.5-4.9 -> 5.3-5.7 under load). At 2 threads (chrt -f 1, load ~7) its
       parts scale worse than oneDNN's split (the first two 1.75 / 1.59 ms against 1.44 / 1.43):
       oneDNN keeps stride 2 there. Rule: 1 thread, at most 0.75 MiB of U per tile;
       FRT_WINO_S2=0 declines every stride-2 shape, 1 takes every one the rule does not (A/B). */
    const char *s2 = getenv("FRT_WINO_S2");
    if (g.s == 2 && s2 && !strcmp(s2, "0")) return FRT_DECLINE;
    if (g.s == 2 && s2 && !strcmp(s2, "1")) wins = true;
    if (g.s == 2 && !wins && (threads > 1 || !wino_wins(&g, 0.75 * 1048576.0)))
        return FRT_DECLINE;
    if (!wins && (wino_wins(&g, 1048576.0) || wino_many_tiles(&g))) wins = true;
    if (!wins && g.s == 1 && !(me && *me)) {
        int64_t small = se && *se ? atoll(se) : 2;
        if (small == 4) wins = true;
        if (small == 2) {
            g.m = 2;
            frt_wino_geom_init(&g, 0);
            wins = (se && *se) || wino_wins(&g, 1.25 * 1048576.0) || wino_many_tiles(&g);
        }
    }
    /* stride 2: blocks of 24 tiles (fewer passes over U than the L2 budget's 6; resnet50's
       layer2.0 / layer3.0 at 1 thread 2.28 / 2.37 -> 2.17 / 2.24 ms, FRT_WINO_T, chrt -f 1) */
    if (T <= 0 && g.s == 2) T = 24;
    if (T <= 0 && frt_wino_u_floats_geom(&g) * sizeof(float) > 1048576)
        T = 48; /* U beyond L2: fewer blocks, fewer passes over U (14x14: one block) */
    frt_wino_geom_init(&g, T);
    frt_wino_even_blocks(&g);
    if (!force && (L->block != 8 || c->isa != FRT_ISA_AVX2 || !wins)) return FRT_DECLINE;
    return wino_install(c, k, L, &g, 18.0, threads);
}

/* Packs the weights of an initialized g and installs the kernel; kk: the direct convolution's
 * flops per input channel, output channel and output pixel (the thread split's cost). */
static frt_status wino_install(frt_op_ctx *c, frt_kernel *k, const frt_layout *L,
                               const frt_wino_geom *gp, double kk, int threads) {
    const frt_value *Wt = c->in[1], *B = c->n_in > 2 ? c->in[2] : NULL;
    frt_wino_geom g = *gp;
    dn_wino *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    float *U = frt_arena_alloc(c->arena, frt_wino_u_floats_geom(&g) * sizeof(float), 64);
    float *bias = frt_arena_alloc(c->arena, (size_t)g.Mp * sizeof *bias, 64);
    const frt_layout **in = frt_arena_array(c->arena, (size_t)c->n_in + 1, sizeof *in);
    const frt_layout **out = frt_arena_array(c->arena, 2, sizeof *out);
    if (!p || !U || !bias || !in || !out)
        return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for kernel parameters");
    memset(bias, 0, (size_t)g.Mp * sizeof *bias);
    if (B) memcpy(bias, B->data, (size_t)g.M * sizeof *bias);
    frt_wino_pack_geom(Wt->data, &g, U);
    p->g = g;
    p->U = U;
    p->bias = bias;
    p->v = frt_wino_variant_get(c->isa);
    /* parts: the direct convolution's flops at oneDNN's rate, as split.c plans its parts */
    double flops = kk * (double)g.C * (double)g.M * (double)g.OH * (double)g.OW;
    p->parts = frt_par_split(threads, flops * FRT_PAR_NS_PER_FLOP_DNNL);
    int64_t *bound = frt_arena_alloc(c->arena, (size_t)(p->parts + 1) * sizeof *bound, 8);
    if (!bound) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for kernel parameters");
    p->parts = frt_wino_plan_parts(&g, p->parts, &p->nsplit, bound);
    p->items = frt_wino_items(&g, p->nsplit);
    p->bound = bound;
    p->part_floats = (frt_wino_scratch_floats(&g) + 15) / 16 * 16;
    p->in_img = (size_t)((g.C + L->block - 1) / L->block * L->block * g.H * g.W);
    p->out_img = (size_t)((g.M + L->block - 1) / L->block * L->block * g.OH * g.OW);
    in[0] = L;
    if (c->n_in > 3) in[3] = L;
    out[0] = L;
    k->params = p;
    k->fn = wino_run;
    k->scratch = wino_scratch;
    if (g.r > 0) k->name = p->parts > 1 ? "wino1d_split" : "wino1d";
    else if (g.s == 2) k->name = p->parts > 1 ? "wino2x3s2_split" : "wino2x3s2";
    else if (g.m == 2) k->name = p->parts > 1 ? "wino2x3_split" : "wino2x3";
    else k->name = p->parts > 1 ? "wino4x3_split" : "wino4x3";
    k->in_layouts = in;
    k->out_layouts = out;
    k->const_copied = B ? (1u << 1) | (1u << 2) : 1u << 1;
    return FRT_OK;
}

#endif /* FRT_HAVE_DNNL */
