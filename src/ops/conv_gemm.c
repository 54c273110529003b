/* Conv as a GEMM with weights packed at select (see conv.h): the driver. Blocking, threading and
 * the weight packing live here; the col-block packing and the register tiles are the chosen
 * variant's inner loops (x86/conv_avx2.c, x86/conv_avx512.c).
 *
 *   W_g  packed once: [K block][mpanels][kc][mr]  (zero rows past Mg); the panels of one K block
 *        are contiguous, so they stream from memory in order.
 *   col  packed per block of kc x nc: [nc/nr][kc][nr], gathered straight from X (implicit
 *        im2col: stride, dilation and padding resolved by the variant's pack_block).
 * A 1x1 stride-1 unpadded conv is the same with the spatial dims flattened (H = 1, W = H*W).
 * 3-D (frt_conv_gemm_run3d, conv.h): W packed per (group, kernel depth kz) as 2-D groups; a
 * position block lies in one output depth plane and runs the K blocks of every live kz against
 * its input plane (xg at that plane, channel stride D*H*W), accumulating into Y.
 * Half-precision weights (frt_options.weights_precision fp16 / bf16): W_g is kept only as fp16 /
 * bf16 in the same layout (half the bytes) and each K block is widened to float32 into the task's
 * scratch before the same float32 inner loops run over it, so the products and sums stay float32
 * and the only difference from float32 weights is the rounding of W (2^-11 relative for fp16,
 * 2^-8 for bf16). The widening is repeated per position block: Mg * kc conversions against
 * Mg * kc * nc multiply-adds.
 *
 * Threads: one parallel region per call (see gemm_task); when frt_par_threads gives 1 the call
 * runs on the calling thread. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "dtype_util.h"
#include "util/seltrace.h"
#include "util/threadpool.h"

/* K block (packed col rows) and position block: the col block kc x nc floats stays in L2 while
 * every weight panel streams past it. */
#define KC_MAX 256
#define NC_MAX 256
#define BLOCK_FLOATS (KC_MAX * NC_MAX)
/* Weight bytes of a K block small enough to stay in L1 next to one col panel. */
#define JOUTER_MAX (16 * 1024)
/* Scratch: SLOTS col blocks of kc x nc floats. With a pool, independent position blocks run in
 * parallel, each task packing into its own slot (see gemm_task). */
#define SLOTS 4

/* Best first; the portable tier has no entry here (conv.c's im2col + frt_sgemm path). */
static const frt_conv_gemm_variant gemm_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512, "conv_1x1_gemm_avx512", "conv_im2col_gemm_avx512", 16, 16,
     frt_conv_pack_block_avx2, frt_conv_compute_avx512, frt_conv_gemv_avx512},
#endif
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "conv_1x1_gemm_avx2", "conv_im2col_gemm_avx2", 6, 16, frt_conv_pack_block_avx2,
     frt_conv_compute_avx2, NULL},
#endif
#endif
    {FRT_ISA_PORTABLE, NULL, NULL, 1, 1, NULL, NULL, NULL},
};

const frt_conv_gemm_variant *frt_conv_gemm_pick(frt_isa cap) {
    const frt_conv_gemm_variant *v = FRT_PICK_VARIANT(gemm_variants, cap);
    return v->compute ? v : NULL;
}

/* Half-precision weights: the packed float32 layout converted to fp16 / bf16 (round to nearest
 * even). Returns 0 when a finite weight does not fit fp16 (|w| >= 65520); the caller keeps fp32. */
static int pack_half(frt_conv_params *p, const float *wp, size_t n, frt_arena *arena) {
    uint16_t *h = frt_arena_array(arena, n, sizeof(uint16_t));
    if (!h) return -1;
    for (size_t i = 0; i < n; i++) {
        if (p->wprec == 1) {
            if (isfinite(wp[i]) && fabsf(wp[i]) >= 65520.0f) return 0;
            h[i] = frt_float_to_half(wp[i]);
        } else {
            h[i] = frt_float_to_bf16(wp[i]);
        }
    }
    p->whalf = h;
    return 1;
}

/* dst[n] = the half weights src as float32 (exact). */
static void widen(const frt_conv_params *p, const uint16_t *src, size_t n, float *dst) {
    if (p->wprec == 1) {
        p->f16_to_f32(src, dst, n);
        return;
    }
    uint32_t *d = (uint32_t *)(void *)dst;
    for (size_t i = 0; i < n; i++) d[i] = (uint32_t)src[i] << 16;
}

/* Floats of one task's widened K block (with the inner loops' slack), 0 for float32 weights. */
static size_t wbuf_floats(const frt_conv_params *p) {
    return p->whalf ? (size_t)(p->mpanels * p->var->mr * p->kc) + FRT_CONV_WPACK_SLACK : 0;
}

frt_status frt_conv_gemm_pack(frt_conv_params *p, const frt_conv_gemm_variant *var,
                              const float *w, frt_arena *arena) {
    const int64_t MR = var->mr, NR = var->nr;
    int64_t mp = (p->Mg + MR - 1) / MR;
    int64_t nkb = (p->Kg + KC_MAX - 1) / KC_MAX;
    p->kc = (p->Kg + nkb - 1) / nkb;
    /* shallow K: wider position blocks (same block bytes, fewer passes over the weights) */
    p->nc = (BLOCK_FLOATS / p->kc) / NR * NR;
    if (p->nc < NC_MAX) p->nc = NC_MAX;
    if (p->nc > 8 * NC_MAX) p->nc = 8 * NC_MAX;
    p->mpanels = mp;
    size_t n = (size_t)(p->group * mp * p->Kg * MR) + FRT_CONV_WPACK_SLACK;
    float *wp = frt_arena_array(arena, n, sizeof(float));
    if (!wp) return FRT_ERR_NO_MEMORY;
    memset(wp, 0, n * sizeof(float));
    /* [group][K block k0][panel][kcur][MR]: the panels of one K block are one sequential stream */
    for (int64_t gr = 0; gr < p->group; gr++)
        for (int64_t k0 = 0; k0 < p->Kg; k0 += p->kc) {
            int64_t kcur = p->Kg - k0 < p->kc ? p->Kg - k0 : p->kc;
            float *blk = wp + (gr * mp * p->Kg + k0 * mp) * MR;
            for (int64_t m = 0; m < p->Mg; m++) {
                const float *src = w + (gr * p->Mg + m) * p->Kg + k0;
                float *dst = blk + (m / MR) * kcur * MR + m % MR;
                for (int64_t k = 0; k < kcur; k++) dst[k * MR] = src[k];
            }
        }
    p->wpack = wp;
    p->var = var;
    if (FRT_HALF_WEIGHTS && (p->wprec == 1 || p->wprec == 2)) {
        /* the float32 pack above is a load-time temporary in the arena; only whalf is read */
        int r = pack_half(p, wp, n, arena);
        if (r < 0) return FRT_ERR_NO_MEMORY;
        if (r) p->wpack = NULL;
        else p->wprec = 0; /* fp16 cannot hold a weight: float32 */
    } else {
        p->wprec = 0;
    }
    return FRT_OK;
}

static void geometry(const frt_conv_params *p, const frt_value *x, frt_conv_geom *g) {
    frt_conv_geometry(p, x, g);
    if (p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && g->pt == 0 && g->pl == 0 &&
        g->OH == g->H && g->OW == g->W && g->H * g->W < FRT_CONV_COL_LIMIT) {
        g->W = g->OW = g->H * g->W; /* pointwise: one long row */
        g->H = g->OH = 1;
    }
}

static int64_t block_cols(const frt_conv_params *p, int64_t npos) {
    int64_t nr = p->var->nr;
    int64_t np = (npos + nr - 1) / nr * nr;
    return np < p->nc ? np : p->nc;
}

/* The AVX2 tile's tail shapes a run of Mg x npos takes (conv.h): recorded while tracing (the kernel
 * names "conv_gemm_avx2_<tail>" of the node's op); a selective build refuses one it left out. */
static frt_status avx2_tails(const frt_step *s, int64_t Mg, int64_t npos) {
    static const char names[6][20] = {"conv_gemm_avx2_r1",  "conv_gemm_avx2_r2",
                                      "conv_gemm_avx2_r4",  "conv_gemm_avx2_col",
                                      "conv_gemm_avx2_e8",  "conv_gemm_avx2_e16"};
    unsigned tails = frt_conv_avx2_tails(Mg, npos);
    if (FRT_SELTRACE_ON)
        for (int i = 0; i < 6; i++)
            if (tails >> i & 1)
                frt_seltrace_add("kernel", frt_seltrace_domain(s->ir->domain), s->ir->op_type,
                                 "builtin", names[i], NULL);
    unsigned miss = tails & ~(unsigned)FRT_CONV_AVX2_TAILS_BUILT;
    if (!miss) return FRT_OK;
    int i = 0;
    while (!(miss >> i & 1)) i++;
    return frt_step_fail(s, FRT_ERR_UNSUPPORTED, "%s with %lld output channels per group and %lld "
                         "positions: kernel '%s' not in this build's selection (%s)",
                         s->ir->op_type, (long long)Mg, (long long)npos, names[i],
                         frt_selection_file());
}

size_t frt_conv_gemm_scratch(const frt_step *s, const frt_value *values) {
    const frt_conv_params *p = s->k.params;
    frt_conv_geom g;
    geometry(p, &values[s->in[0]], &g);
    int64_t nc = block_cols(p, g.OH * g.OW);
    return ((size_t)(SLOTS * p->kc * nc) + SLOTS * wbuf_floats(p)) * sizeof(float);
}

/* Selects block b of the run: image n, group gr, positions [n0, n0 + ncur). */
static void set_block(frt_conv_gemm_ctx *t, const float *X, float *Y, const float *bias,
                      const float *Z, int64_t nc, int64_t b) {
    const frt_conv_params *p = t->p;
    int64_t nb = (t->npos + nc - 1) / nc, nr = p->var->nr;
    int64_t img = b / nb, gr = img % p->group, n = img / p->group;
    t->n0 = (b % nb) * nc;
    t->ncur = t->npos - t->n0 < nc ? t->npos - t->n0 : nc;
    t->npan = (t->ncur + nr - 1) / nr;
    t->xg = X + (n * t->g.C + gr * p->Cg) * t->g.H * t->g.W;
    t->cs = t->g.H * t->g.W;
    t->yg = Y + (n * p->M + gr * p->Mg) * t->npos;
    t->zg = Z ? Z + (n * p->M + gr * p->Mg) * t->npos : NULL;
    t->wg = p->wpack ? p->wpack + gr * p->mpanels * p->Kg * p->var->mr : NULL;
    t->gr = gr;
    t->bias = bias ? bias + gr * p->Mg : NULL;
}

static void set_kblock(frt_conv_gemm_ctx *t, int64_t k0) {
    const frt_conv_params *p = t->p;
    t->k0 = k0;
    t->kcur = p->Kg - k0 < p->kc ? p->Kg - k0 : p->kc;
    t->flags = (k0 == 0 ? FRT_CONV_UK_FIRST : 0) |
               (k0 + t->kcur == p->Kg ? FRT_CONV_UK_LAST : 0);
    t->jouter = p->mpanels * p->var->mr * t->kcur * (int64_t)sizeof(float) <= JOUTER_MAX;
    const int64_t off = k0 * p->mpanels * p->var->mr; /* the K block within the group's panels */
    if (FRT_HALF_WEIGHTS && p->whalf) {
        const int64_t n = p->mpanels * p->var->mr * t->kcur;
        widen(p, p->whalf + t->gr * p->mpanels * p->Kg * p->var->mr + off, (size_t)n, t->wbuf);
        t->wk = t->wbuf;
    } else {
        t->wk = t->wg + off;
    }
}

/* One block, every K block, weight panels [mp0, mp1), on the calling thread. */
static void run_block(frt_conv_gemm_ctx *t, int64_t mp0, int64_t mp1) {
    const frt_conv_gemm_variant *v = t->p->var;
    for (int64_t k0 = 0; k0 < t->p->Kg; k0 += t->p->kc) {
        set_kblock(t, k0);
        v->pack_block(t);
        v->compute(t, mp0, mp1);
    }
    if (t->p->post != FRT_CONV_POST_NONE) {
        /* the inner loops applied the clamp; the nonlinear part goes over the block's rows */
        int64_t r1 = mp1 * v->mr < t->p->Mg ? mp1 * v->mr : t->p->Mg;
        for (int64_t r = mp0 * v->mr; r < r1; r++)
            frt_conv_post(t->p, t->yg + r * t->npos + t->n0, t->ncur);
    }
}

/* Parallel runs use one region per call (waking the pool costs microseconds):
 *   many position blocks: each task owns a scratch slot and takes whole blocks from a counter;
 *   few blocks: task i takes the i-th share of the weight panels of every block and packs each
 *   block into its own slot (the packing is repeated per task; it is small next to the GEMM). */
typedef struct run3 run3;
static void set_block3(frt_conv_gemm_ctx *t, const run3 *r, int64_t nc, int64_t b);
static void run_block3(frt_conv_gemm_ctx *t, const run3 *r, int64_t mp0, int64_t mp1);

typedef struct par_ctx {
    const frt_conv_gemm_ctx *base;
    const run3 *r3; /* 3-D: its run (blocks are set_block3's), else NULL */
    const float *X, *bias, *Z;
    float *Y;
    int64_t nc, nblocks, ntask;
    int by_block;
    atomic_llong next; /* next block to hand out (by_block) */
} par_ctx;

static void task_block(par_ctx *pc, frt_conv_gemm_ctx *t, int64_t b, int64_t mp0, int64_t mp1) {
    if (pc->r3) {
        set_block3(t, pc->r3, pc->nc, b);
        run_block3(t, pc->r3, mp0, mp1);
    } else {
        set_block(t, pc->X, pc->Y, pc->bias, pc->Z, pc->nc, b);
        run_block(t, mp0, mp1);
    }
}

static void gemm_task(void *ctx, size_t i) {
    par_ctx *pc = ctx;
    frt_conv_gemm_ctx t = *pc->base;
    const frt_conv_params *p = t.p;
    t.blk = pc->base->blk + (int64_t)i * p->kc * pc->nc;
    if (t.wbuf) t.wbuf += i * wbuf_floats(p);
    if (pc->by_block) {
        for (;;) {
            int64_t b = atomic_fetch_add_explicit(&pc->next, 1, memory_order_relaxed);
            if (b >= pc->nblocks) break;
            task_block(pc, &t, b, 0, p->mpanels);
        }
        return;
    }
    int64_t share = (p->mpanels + pc->ntask - 1) / pc->ntask;
    int64_t mp0 = (int64_t)i * share, mp1 = mp0 + share < p->mpanels ? mp0 + share : p->mpanels;
    if (mp0 >= mp1) return;
    for (int64_t b = 0; b < pc->nblocks; b++) task_block(pc, &t, b, mp0, mp1);
}

/* Runs the blocks of t on the pool when it is worth nth > 1 threads: imgs independent
 * (image, group[, depth]) products of npos positions each, position blocks nc wide (r3: 3-D).
 * Returns false (nothing run) when the call should run serially. */
static bool run_parallel(frt_threadpool *tp, const frt_conv_gemm_ctx *t, const run3 *r3,
                         const float *X, float *Y, const float *bias, const float *sum,
                         int64_t imgs, int64_t npos, int64_t nc, double flops) {
    const frt_conv_params *p = t->p;
    const int64_t NR = p->var->nr;
    int64_t nth = frt_par_threads(tp, flops * FRT_PAR_NS_PER_FLOP);
    if (nth > SLOTS) nth = SLOTS;
    if (nth <= 1) return false;
    /* position blocks of equal width, as many as a multiple of the task count when the
     * blocks stay at least 3 panels wide; otherwise split the weight panels */
    int64_t panels = (npos + NR - 1) / NR;
    int64_t nb = (npos + nc - 1) / nc;
    if (imgs * nb < nth) nb = (nth + imgs - 1) / imgs;
    while ((imgs * nb) % nth != 0 && nb < panels) nb++;
    int64_t ncp = (panels + nb - 1) / nb * NR;
    par_ctx pc = {t,   r3,  X,   bias, sum, Y, ncp, imgs * ((npos + ncp - 1) / ncp),
                  nth, ncp >= 3 * NR, 0};
    if (!pc.by_block) {
        pc.nc = nc;
        pc.nblocks = imgs * ((npos + nc - 1) / nc);
        if (p->mpanels < nth) pc.ntask = p->mpanels;
    }
    if (pc.ntask <= 1) return false;
    frt_parallel_for(tp, (size_t)pc.ntask, gemm_task, &pc);
    return true;
}

/* The GEMM of p over geometry g (as frt_conv_geometry gives, or a region's: g->pt / g->pl may be
 * negative, an offset into X) from X into Y ([N, M, OH*OW]), with bias and sum input (NULL: none);
 * scratch holds frt_conv_gemm_scratch's floats for this g. */
static frt_status gemm_exec(const frt_step *s, const frt_conv_params *p, const frt_conv_geom *g,
                            const float *X, float *Y, const float *bias, const float *sum,
                            void *scratch, frt_threadpool *tp) {
    const int64_t NR = p->var->nr;
    frt_conv_gemm_ctx t;
    memset(&t, 0, sizeof t);
    t.p = p;
    t.g = *g;
    t.npos = t.g.OH * t.g.OW;
    if (t.g.W + t.g.pl + (p->kw - 1) * p->dw + NR * p->sw >= FRT_CONV_COL_LIMIT ||
        t.g.pl >= FRT_CONV_COL_LIMIT)
        return frt_step_fail(s, FRT_ERR_UNSUPPORTED, "input width %lld is too large",
                             (long long)t.g.W);
    if (p->var->isa == FRT_ISA_AVX2) {
        frt_status st = avx2_tails(s, p->Mg, t.npos);
        if (st) return st;
    }
    if (p->var->gemv && p->wpack && p->kh == 1 && p->kw == 1 && t.npos == 1 && t.g.H * t.g.W == 1) {
        /* 1x1 conv on a 1x1 input (squeeze-and-excitation FCs): one GEMV per image and group */
        for (int64_t n = 0; n < t.g.N; n++)
            for (int64_t gr = 0; gr < p->group; gr++) {
                int64_t yo = n * p->M + gr * p->Mg;
                float *yg = Y + yo;
                p->var->gemv(p, p->wpack + gr * p->mpanels * p->Kg * p->var->mr,
                             X + n * t.g.C + gr * p->Cg,
                             bias ? bias + gr * p->Mg : NULL, sum ? sum + yo : NULL, yg);
                frt_conv_post(p, yg, p->Mg);
            }
        return FRT_OK;
    }
    t.blk = scratch;
    int64_t nc = block_cols(p, t.npos);
    /* half weights: SLOTS widened K blocks after the SLOTS col blocks of the largest width */
    t.wbuf = p->whalf ? (float *)scratch + SLOTS * p->kc * nc : NULL;
    int64_t nblocks = t.g.N * p->group * ((t.npos + nc - 1) / nc);
    double flops = 2.0 * (double)(t.g.N * p->M) * (double)t.npos * (double)p->Kg;
    if (run_parallel(tp, &t, NULL, X, Y, bias, sum, t.g.N * p->group, t.npos, nc, flops))
        return FRT_OK;
    for (int64_t b = 0; b < nblocks; b++) {
        set_block(&t, X, Y, bias, sum, nc, b);
        run_block(&t, 0, p->mpanels);
    }
    return FRT_OK;
}

/* ---- 3-D (conv.h: frt_conv_gemm_run3d) ------------------------------------------------------- */

frt_status frt_conv_gemm_pack3d(frt_conv_node_params *q, const frt_conv_gemm_variant *var,
                                const float *w, frt_arena *arena) {
    frt_conv_params *p = &q->p;
    const int64_t kd = q->kd, khw = p->kh * p->kw, group = p->group;
    /* W [group][Mg][Cg][kd][kh][kw] -> [group][kd][Mg][Cg][kh][kw], a load-time temporary */
    float *tw = malloc((size_t)(p->M * p->Cg * kd * khw) * sizeof *tw);
    if (!tw) return FRT_ERR_NO_MEMORY;
    for (int64_t gr = 0; gr < group; gr++)
        for (int64_t kz = 0; kz < kd; kz++)
            for (int64_t m = 0; m < p->Mg; m++)
                for (int64_t ci = 0; ci < p->Cg; ci++)
                    memcpy(tw + (((gr * kd + kz) * p->Mg + m) * p->Cg + ci) * khw,
                           w + (((gr * p->Mg + m) * p->Cg + ci) * kd + kz) * khw,
                           (size_t)khw * sizeof *tw);
    /* each (group, kz) slice packed as a 2-D group of depth Cg kh kw */
    p->Kg = p->Cg * khw;
    p->group = group * kd;
    frt_status st = frt_conv_gemm_pack(p, var, tw, arena);
    p->group = group;
    free(tw);
    return st;
}

/* One run: the input and output as (image, group) stacks of depth planes. */
struct run3 {
    const frt_conv_node_params *q;
    const float *X, *bias, *Z;
    float *Y;
    int64_t D, OD, pf; /* input depth, output depth, front padding applied */
    int64_t ohw;       /* positions of one output depth plane */
};

static void geometry3(const frt_conv_node_params *q, const frt_value *x, frt_conv_geom *g,
                      int64_t *OD, int64_t *pf) {
    const frt_conv_params *p = &q->p;
    g->N = x->dims[0];
    g->C = x->dims[1];
    g->H = x->dims[3];
    g->W = x->dims[4];
    *OD = frt_conv_out_dim(x->dims[2], q->kd, q->sd, q->dd, p->auto_pad, q->pf, q->pk, pf);
    g->OH = frt_conv_out_dim(g->H, p->kh, p->sh, p->dh, p->auto_pad, p->pt, p->pb, &g->pt);
    g->OW = frt_conv_out_dim(g->W, p->kw, p->sw, p->dw, p->auto_pad, p->pl, p->pr, &g->pl);
}

size_t frt_conv_gemm_scratch3d(const frt_step *s, const frt_value *values) {
    const frt_conv_node_params *q = s->k.params;
    frt_conv_geom g;
    int64_t OD, pf;
    geometry3(q, &values[s->in[0]], &g, &OD, &pf);
    int64_t nc = block_cols(&q->p, g.OH * g.OW);
    return ((size_t)(SLOTS * q->p.kc * nc) + SLOTS * wbuf_floats(&q->p)) * sizeof(float);
}

/* Selects block b: image n, group gr, output depth od, positions [n0, n0 + ncur) of that plane.
 * t->xg is set per kernel depth by run_block3; t->npos is the row stride OD * ohw. */
static void set_block3(frt_conv_gemm_ctx *t, const run3 *r, int64_t nc, int64_t b) {
    const frt_conv_params *p = t->p;
    int64_t nb = (r->ohw + nc - 1) / nc, nr = p->var->nr;
    int64_t img = b / nb, od = img % r->OD, gr = img / r->OD % p->group;
    int64_t n = img / r->OD / p->group;
    t->n0 = (b % nb) * nc;
    t->ncur = r->ohw - t->n0 < nc ? r->ohw - t->n0 : nc;
    t->npan = (t->ncur + nr - 1) / nr;
    t->od = od;
    t->gr = gr;
    t->xg = r->X + (n * t->g.C + gr * p->Cg) * t->cs; /* depth plane 0 */
    t->yg = r->Y + (n * p->M + gr * p->Mg) * t->npos + od * r->ohw;
    t->zg = r->Z ? r->Z + (n * p->M + gr * p->Mg) * t->npos + od * r->ohw : NULL;
    t->bias = r->bias ? r->bias + gr * p->Mg : NULL;
}

/* One block of set_block3, weight panels [mp0, mp1): the K blocks of every kernel depth whose
 * input plane is inside the input, accumulated into Y (bias on the first, sum input and clamp on
 * the last), then the nonlinear activation. No such depth: Y = act(bias + z). */
static void run_block3(frt_conv_gemm_ctx *t, const run3 *r, int64_t mp0, int64_t mp1) {
    const frt_conv_node_params *q = r->q;
    const frt_conv_params *p = t->p;
    const frt_conv_gemm_variant *v = p->var;
    const int64_t od = t->od, gr = t->gr, plane = t->g.H * t->g.W;
    const float *x0 = t->xg;
    int64_t kz0 = -1, kz1 = -1; /* first and last live kernel depth */
    for (int64_t kz = 0; kz < q->kd; kz++) {
        int64_t id = od * q->sd - r->pf + kz * q->dd;
        if (id < 0 || id >= r->D) continue;
        if (kz0 < 0) kz0 = kz;
        kz1 = kz;
    }
    int64_t r0 = mp0 * v->mr, r1 = mp1 * v->mr < p->Mg ? mp1 * v->mr : p->Mg;
    if (kz0 < 0) {
        for (int64_t row = r0; row < r1; row++) {
            float *y = t->yg + row * t->npos + t->n0;
            const float *z = t->zg ? t->zg + row * t->npos + t->n0 : NULL;
            float bv = t->bias ? t->bias[row] : 0.0f;
            for (int64_t j = 0; j < t->ncur; j++) y[j] = bv;
            if (z) frt_conv_sum_act(p, y, z, t->ncur);
            else frt_conv_act_ref(p, y, t->ncur);
        }
        return;
    }
    for (int64_t kz = kz0; kz <= kz1; kz++) {
        int64_t id = od * q->sd - r->pf + kz * q->dd;
        if (id < 0 || id >= r->D) continue;
        t->xg = x0 + id * plane;
        t->gr = gr * q->kd + kz; /* the packed slice (set_kblock reads the half weights by it) */
        t->wg = p->wpack ? p->wpack + t->gr * p->mpanels * p->Kg * v->mr : NULL;
        for (int64_t k0 = 0; k0 < p->Kg; k0 += p->kc) {
            set_kblock(t, k0);
            t->flags = (kz == kz0 && k0 == 0 ? FRT_CONV_UK_FIRST : 0) |
                       (kz == kz1 && k0 + t->kcur == p->Kg ? FRT_CONV_UK_LAST : 0);
            v->pack_block(t);
            v->compute(t, mp0, mp1);
        }
    }
    t->xg = x0;
    t->gr = gr;
    if (p->post != FRT_CONV_POST_NONE)
        for (int64_t row = r0; row < r1; row++)
            frt_conv_post(p, t->yg + row * t->npos + t->n0, t->ncur);
}

frt_status frt_conv_gemm_run3d(const frt_step *s, frt_exec *x) {
    const frt_conv_node_params *q = s->k.params;
    const frt_conv_params *p = &q->p;
    const frt_value *X = &x->values[s->in[0]];
    frt_value *Y = &x->values[s->out[0]];
    const int64_t NR = p->var->nr;
    frt_conv_gemm_ctx t;
    memset(&t, 0, sizeof t);
    t.p = p;
    run3 r = {q, X->data, s->n_in > 2 && s->in[2] >= 0 ? x->values[s->in[2]].data : NULL,
              frt_conv_sum(s, x), Y->data, X->dims[2], 0, 0, 0};
    geometry3(q, X, &t.g, &r.OD, &r.pf);
    r.ohw = t.g.OH * t.g.OW;
    t.npos = r.OD * r.ohw;
    t.cs = r.D * t.g.H * t.g.W;
    if (t.g.W + t.g.pl + (p->kw - 1) * p->dw + NR * p->sw >= FRT_CONV_COL_LIMIT ||
        t.g.pl >= FRT_CONV_COL_LIMIT)
        return frt_step_fail(s, FRT_ERR_UNSUPPORTED, "input width %lld is too large",
                             (long long)t.g.W);
    if (p->var->isa == FRT_ISA_AVX2) {
        frt_status st = avx2_tails(s, p->Mg, r.ohw);
        if (st) return st;
    }
    t.blk = x->scratch;
    int64_t nc = block_cols(p, r.ohw);
    t.wbuf = p->whalf ? (float *)x->scratch + SLOTS * p->kc * nc : NULL;
    int64_t imgs = t.g.N * p->group * r.OD, nblocks = imgs * ((r.ohw + nc - 1) / nc);
    /* the work of the live kernel depths only */
    int64_t live = 0;
    for (int64_t od = 0; od < r.OD; od++)
        for (int64_t kz = 0; kz < q->kd; kz++) {
            int64_t id = od * q->sd - r.pf + kz * q->dd;
            live += id >= 0 && id < r.D;
        }
    double flops = 2.0 * (double)(t.g.N * p->M) * (double)r.ohw * (double)live * (double)p->Kg;
    if (run_parallel(x->tp, &t, &r, NULL, NULL, NULL, NULL, imgs, r.ohw, nc, flops))
        return FRT_OK;
    for (int64_t b = 0; b < nblocks; b++) {
        set_block3(&t, &r, nc, b);
        run_block3(&t, &r, 0, p->mpanels);
    }
    return FRT_OK;
}

frt_status frt_conv_gemm_run(const frt_step *s, frt_exec *x) {
    const frt_conv_params *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    frt_value *Y = &x->values[s->out[0]];
    const float *bias = s->n_in > 2 && s->in[2] >= 0 ? x->values[s->in[2]].data : NULL;
    frt_conv_geom g;
    geometry(p, X, &g);
    return gemm_exec(s, p, &g, X->data, Y->data, bias, frt_conv_sum(s, x), x->scratch, x->tp);
}

/* ---------------------------------------------------------------------------------------------- */
/* Region split (conv.h: frt_conv_split)                                                          */
/* ---------------------------------------------------------------------------------------------- */

/* The geometry of region r of sp: the rectangle's size, and the pads that make the region's
 * sub-kernel (rows ky0.., columns kx0..) read what the full kernel's taps read there. */
static void region_geom(const frt_conv_split *sp, const frt_conv_region *r, int64_t N,
                        frt_conv_geom *g) {
    const frt_conv_params *p = r->p;
    g->N = N;
    g->C = sp->C;
    g->H = sp->H;
    g->W = sp->W;
    g->OH = r->oh1 - r->oh0;
    g->OW = r->ow1 - r->ow0;
    g->pt = sp->pt - r->oh0 * p->sh - r->ky0 * p->dh;
    g->pl = sp->pl - r->ow0 * p->sw - r->kx0 * p->dw;
}

static size_t region_scratch_floats(const frt_conv_params *p, int64_t npos) {
    int64_t nc = block_cols(p, npos);
    return (size_t)(SLOTS * p->kc * nc) + SLOTS * wbuf_floats(p);
}

size_t frt_conv_split_scratch(const frt_step *s, const frt_value *values) {
    const frt_conv_params *p = s->k.params;
    const frt_conv_split *sp = p->split;
    int64_t N = values[s->in[0]].dims[0];
    size_t gemm = 0, tmp = 0;
    for (int i = 0; i < sp->nregions; i++) {
        const frt_conv_region *r = &sp->regions[i];
        int64_t npos = (r->oh1 - r->oh0) * (r->ow1 - r->ow0);
        size_t f = region_scratch_floats(r->p, npos);
        if (f > gemm) gemm = f;
        if ((size_t)(N * p->M * npos) > tmp) tmp = (size_t)(N * p->M * npos);
    }
    gemm = (gemm + 15) & ~(size_t)15;
    return (gemm + tmp) * sizeof(float);
}

frt_status frt_conv_split_run(const frt_step *s, frt_exec *x) {
    const frt_conv_params *p = s->k.params;
    const frt_conv_split *sp = p->split;
    const frt_value *X = &x->values[s->in[0]];
    frt_value *Y = &x->values[s->out[0]];
    if (X->rank != 4 || X->dims[1] != sp->C || X->dims[2] != sp->H || X->dims[3] != sp->W)
        return frt_step_fail(s, FRT_ERR_SHAPE, "input shape differs from the one seen at load");
    const float *bias = s->n_in > 2 && s->in[2] >= 0 ? x->values[s->in[2]].data : NULL;
    const float *sum = frt_conv_sum(s, x);
    int64_t N = X->dims[0], OW = sp->OW, npos = sp->OH * sp->OW;
    size_t gemm = 0;
    for (int i = 0; i < sp->nregions; i++) {
        const frt_conv_region *r = &sp->regions[i];
        size_t f = region_scratch_floats(r->p, (r->oh1 - r->oh0) * (r->ow1 - r->ow0));
        if (f > gemm) gemm = f;
    }
    gemm = (gemm + 15) & ~(size_t)15;
    float *tmp = (float *)x->scratch + gemm;
    float *y = Y->data;
    for (int i = 0; i < sp->nregions; i++) {
        const frt_conv_region *r = &sp->regions[i];
        frt_conv_geom g;
        region_geom(sp, r, N, &g);
        /* the region's sums with the bias, into tmp [N, M, rows * cols] */
        frt_status st = gemm_exec(s, r->p, &g, X->data, tmp, bias, NULL, x->scratch, x->tp);
        if (st) return st;
        /* into Y, then the sum input and the activation, row by row (elementwise: as the
           unsplit kernel applies them after its last K block) */
        int64_t rows = g.OH, cols = g.OW;
        for (int64_t nm = 0; nm < N * p->M; nm++)
            for (int64_t oh = 0; oh < rows; oh++) {
                int64_t o = nm * npos + (r->oh0 + oh) * OW + r->ow0;
                memcpy(y + o, tmp + (nm * rows + oh) * cols, (size_t)cols * sizeof(float));
                if (sum) frt_conv_sum_act(p, y + o, sum + o, cols);
                else frt_conv_act_ref(p, y + o, cols);
            }
    }
    return FRT_OK;
}
