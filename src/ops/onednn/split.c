/* Channel and row splits of the oneDNN provider's steps (see split.h).
 *
 * Every primitive of the provider is made and run for one OpenMP thread, so it runs on the thread
 * that executes it and never starts an OpenMP team. A runtime with N intra-op threads gets its
 * parallelism from flatrt's own pool instead: at select, a big enough convolution is planned as
 * P <= N parts, part i producing output channel blocks [b_i, b_{i+1}) (blocks of 16 channels in
 * nChw16c, 8 in nChw8c). In the blocked layout those channels of one image are one contiguous
 * byte range [b_i * OH * OW * block, b_{i+1} * OH * OW * block) * 4, so part i is a convolution of
 * the whole input into OC_i = (b_{i+1} - b_i) * block channels (the last part: up to OC) written
 * at that offset, with weights rows [o_i, o_i + OC_i) and the same bias slice. A depthwise
 * convolution's part reads its own input channel range as well. Each part has its own primitive
 * (oneDNN chooses its weights layout and algorithm for OC_i; uneven parts just differ in OC_i) and
 * its own slice of the weights, reordered once at select into the model arena: the split model
 * holds each weight once, as the unsplit one does. The parts' user scratchpads lie side by side in
 * the step's scratch. Post-ops are rebuilt per part: eltwise ones unchanged, a binary add (the
 * residual input Z) reading Z at the part's offset, a sum post-op (Winograd) after the part's range
 * of Z is copied into the output.
 *
 * Row parts (plan_rows): part i computes output rows [y_i, y_{i+1}) of all channels from the
 * input rows those read, with the whole's padding only where they reach the image's edge. Rows of
 * one channel block are contiguous, rows of several are not, so a part copies its input rows
 * (and the residual's) into dense buffers in the step's scratch and its output rows out of one;
 * a tensor of one block is read or written in place. All parts share the weights (reordered
 * once). They are taken for Winograd convolutions whose channel parts oneDNN makes with another
 * implementation (see frt_dn_split_conv), with part bounds on whole 4x4 output tiles.
 *
 * Each part's primitive is oneDNN's implementation of the same name as the whole's (chosen from
 * its list with frt_dn_pd_prefer: for a half-width Winograd convolution oneDNN's first is
 * another one), or the split is not made.
 *
 * How many parts: the cost model of src/util/threadpool.h (frt_par_split) on the convolution's
 * flops at oneDNN's speed (FRT_PAR_NS_PER_FLOP_DNNL, on the AVX2 tier FRT_PAR_NS_PER_FLOP_DNNL_AVX2;
 * depthwise: FRT_PAR_NS_PER_FLOP_DNNL_DW, on the AVX2 tier at least the image's bytes), at
 * most one part per channel block and at most DN_MAX_PARTS. A convolution that stays whole runs
 * as before on the calling thread.
 *
 * Outputs: every output element is computed by the same kind of kernel as in the unsplit
 * primitive, over the same input channels in the same order, so a split changes no summation
 * order as long as oneDNN picks the same implementation for OC_i as for OC (checked at select:
 * a part whose implementation differs from the whole's declines the split).
 *
 * Running (frt_dn_split_run): the calling thread points its own memory objects for each part
 * (one per part descriptor, see onednn.c) at the part's buffers, then runs the parts as the tasks
 * of one frt_parallel_for region, each on a stream of the calling thread kept for that part index.
 * A part's memory objects and stream are used by one task at a time: the caller sets every handle
 * before the region starts (set_data_handle also zero-fills a blocked tensor's padding lanes, which
 * must not happen from two threads at once), and the region's start and end order those writes
 * with the tasks. So no memory object is made or allocated by a pool worker, whichever parts it
 * runs. */
#if FRT_HAVE_DNNL
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "choose.h"
#include "onednn_impl.h"
#include "split.h"
#include "util/threadpool.h"

enum { DN_MAX_PARTS = 16, DN_ARGS = 8 };

typedef struct dn_part {
    dnnl_primitive_t prim;
    dnnl_memory_desc_t src_md, dst_md, sp_md, z_md;
    dnnl_memory_t wmem, bmem;      /* this part's weights and bias (model arena), read-only */
    size_t src_off, dst_off;       /* bytes into one input / output image */
    size_t dst_bytes;              /* bytes of the part's output range in one image */
    size_t sp_off, sp_bytes;       /* its user scratchpad within the step's scratch */
    /* row parts: output rows [y0, y0 + oh) from input rows [iy0, iy0 + ih); the dense copies of
       those input rows, of the output rows and of the residual rows (binary post-op) at these
       offsets in the step's scratch, NO_BUF where the part reads or writes the image in place */
    int64_t y0, oh, iy0, ih;
    size_t in_buf, out_buf, z_buf;
} dn_part;

#define NO_BUF SIZE_MAX

struct dn_split {
    const dn_env *env;
    int n;                         /* parts */
    int z_arg;                     /* >0: Z passed under this argument; -1: copied into Y first */
    size_t in_img, out_img;        /* bytes of one input / output image */
    size_t scratch;                /* bytes of all scratchpads (and row copies) */
    int rows;                      /* 1: parts of output rows, else of channel blocks */
    int64_t cbi, cbo;              /* channel blocks of the input / output (rows) */
    int64_t H, OH;                 /* input / output rows of the whole image */
    size_t in_row, out_row;        /* bytes of one row of one channel block (rows) */
    dn_part part[];
};

/* ---- per-thread streams of the parts ------------------------------------------------------ */

typedef struct part_streams {
    dnnl_stream_t s[DN_MAX_PARTS];
} part_streams;

static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t g_key;
static int g_key_ok;

static void streams_free(void *p) {
    part_streams *ps = p;
    for (int i = 0; i < DN_MAX_PARTS; i++)
        if (ps->s[i]) dnnl_stream_destroy(ps->s[i]);
    free(ps);
}

static void key_init(void) { g_key_ok = pthread_key_create(&g_key, streams_free) == 0; }

/* The calling thread's stream for part i (made on first use), or NULL. */
static dnnl_stream_t part_stream(const dn_env *env, int i) {
    pthread_once(&g_key_once, key_init);
    if (!g_key_ok) return NULL;
    part_streams *ps = pthread_getspecific(g_key);
    if (!ps) {
        ps = calloc(1, sizeof *ps);
        if (!ps) return NULL;
        if (pthread_setspecific(g_key, ps) != 0) {
            free(ps);
            return NULL;
        }
    }
    if (!ps->s[i] &&
        dnnl_stream_create(&ps->s[i], env->engine(), dnnl_stream_default_flags) != dnnl_success)
        ps->s[i] = NULL;
    return ps->s[i];
}

/* ---- planning -------------------------------------------------------------------------------- */

static dnnl_format_tag_t blocked_tag(int64_t block) {
    return block == 16 ? dnnl_nChw16c : dnnl_nChw8c;
}

/* The channel block of a blocked activation descriptor (nChw16c / nChw8c), else 0. */
static int64_t channel_block(const dnnl_memory_desc_t *md) {
    if (md->format_kind != dnnl_blocked || md->ndims != 4) return 0;
    const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
    if (b->inner_nblks != 1 || b->inner_idxs[0] != 1) return 0;
    return b->inner_blks[0] == 16 || b->inner_blks[0] == 8 ? b->inner_blks[0] : 0;
}

static const char *impl_name(const_dnnl_primitive_desc_t pd) {
    const char *s = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &s) != dnnl_success) return "";
    return s ? s : "";
}

/* The post-ops of attr rebuilt for a part whose destination is dst (binary sources of the whole
 * destination's shape become dst); *z_arg as in dn_split. Returns NULL when a post-op is not one
 * the provider makes. */
static dnnl_primitive_attr_t part_attr(const_dnnl_primitive_attr_t attr,
                                       const dnnl_memory_desc_t *whole_dst,
                                       const dnnl_memory_desc_t *dst, int *z_arg) {
    const_dnnl_post_ops_t po = NULL;
    dnnl_post_ops_t npo = NULL;
    dnnl_primitive_attr_t a = NULL;
    *z_arg = 0;
    if (dnnl_primitive_attr_clone(&a, attr) != dnnl_success) return NULL;
    dnnl_status_t ds = dnnl_primitive_attr_get_post_ops(attr, &po);
    if (!ds) ds = dnnl_post_ops_create(&npo);
    for (int i = 0, n = ds ? 0 : dnnl_post_ops_len(po); i < n && !ds; i++) {
        dnnl_primitive_kind_t kind = dnnl_post_ops_get_kind(po, i);
        if (kind == dnnl_eltwise) {
            float scale, alpha, beta;
            dnnl_alg_kind_t alg;
            ds = dnnl_post_ops_get_params_eltwise(po, i, &scale, &alg, &alpha, &beta);
            if (!ds) ds = dnnl_post_ops_append_eltwise(npo, scale, alg, alpha, beta);
        } else if (kind == dnnl_sum && i == 0) {
            float scale;
            ds = dnnl_post_ops_get_params_sum(po, i, &scale);
            if (!ds) ds = dnnl_post_ops_append_sum(npo, scale);
            *z_arg = -1;
        } else if (kind == dnnl_binary && *z_arg == 0) {
            dnnl_alg_kind_t alg;
            const dnnl_memory_desc_t *src1 = NULL;
            ds = dnnl_post_ops_get_params_binary(po, i, &alg, &src1);
            if (!ds && !dnnl_memory_desc_equal(src1, whole_dst)) ds = dnnl_unimplemented;
            if (!ds) ds = dnnl_post_ops_append_binary(npo, alg, dst);
            *z_arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | DNNL_ARG_SRC_1;
        } else {
            ds = dnnl_unimplemented;
        }
    }
    if (!ds) ds = dnnl_primitive_attr_set_post_ops(a, npo);
    if (npo) dnnl_post_ops_destroy(npo);
    if (ds) {
        dnnl_primitive_attr_destroy(a);
        return NULL;
    }
    return a;
}

void frt_dn_split_free(dn_split *sp) {
    if (!sp) return;
    for (int i = 0; i < sp->n; i++) {
        dn_part *p = &sp->part[i];
        if (p->prim) dnnl_primitive_destroy(p->prim);
        if (p->wmem) dnnl_memory_destroy(p->wmem);
        if (p->bmem) dnnl_memory_destroy(p->bmem);
    }
}

size_t frt_dn_split_scratch(const dn_split *sp) { return sp ? sp->scratch : 0; }

int frt_dn_split_by_rows(const dn_split *sp) { return sp && sp->rows; }

/* Reorders the plain weights plain (descriptor wplain, data w) into a new buffer of layout wmd in
 * the arena; the memory object wrapping it goes to *out. */
static dnnl_status_t reorder_weights(frt_op_ctx *c, const dn_env *env,
                                     const dnnl_memory_desc_t *wplain,
                                     const void *w, const dnnl_memory_desc_t *wmd,
                                     dnnl_memory_t *out) {
    dnnl_engine_t eng = env->engine();
    frt_dn_thread *t = env->this_thread();
    dnnl_stream_t stream = t ? env->thread_stream(t) : NULL;
    if (!stream) return dnnl_out_of_memory;
    void *buf = frt_arena_alloc(c->arena, dnnl_memory_desc_get_size(wmd), 64);
    if (!buf) return dnnl_out_of_memory;
    dnnl_memory_t mu = NULL;
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t rp = NULL;
    dnnl_status_t ds = dnnl_memory_create(&mu, wplain, eng, (void *)w);
    if (!ds) ds = dnnl_memory_create(out, wmd, eng, buf);
    if (!ds) ds = dnnl_reorder_primitive_desc_create(&rpd, wplain, eng, wmd, eng, NULL);
    if (!ds) ds = dnnl_primitive_create(&rp, rpd);
    if (!ds) {
        dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, mu}, {DNNL_ARG_TO, *out}};
        ds = dnnl_primitive_execute(rp, stream, 2, ra);
        if (!ds) ds = dnnl_stream_wait(stream);
    }
    if (rp) dnnl_primitive_destroy(rp);
    if (rpd) dnnl_primitive_desc_destroy(rpd);
    if (mu) dnnl_memory_destroy(mu);
    return ds;
}

/* How many parts to make of work_ns of work over nblocks channel blocks with `threads` threads. */
static int parts_for(int threads, double work_ns, int64_t nblocks) {
    const char *e = getenv("FRT_DNNL_PARTS"); /* debugging aid: force this many parts */
    int n = e && *e ? atoi(e) : frt_par_split(threads, work_ns);
    if (n > DN_MAX_PARTS) n = DN_MAX_PARTS;
    if (n > nblocks) n = (int)nblocks;
    return n < 1 ? 1 : n;
}

/* Reserves bytes in the step's scratch of sp; returns their offset. */
static size_t scratch_take(dn_split *sp, size_t bytes) {
    size_t off = sp->scratch;
    sp->scratch += (bytes + 63) & ~(size_t)63;
    return off;
}

/* The part's primitive for descriptor pcd with the post-ops of attr rebuilt for its destination
 * p->dst_md: into p (prim, scratchpad descriptor and bytes) and *wmd (its weights layout), when
 * oneDNN has the whole convolution's implementation `impl` for it. Returns a reason (the split
 * is not made) or NULL; *ds: a oneDNN failure. */
static const char *part_prim(dn_split *sp, dn_part *p, const dnnl_convolution_desc_t *pcd,
                             const_dnnl_primitive_attr_t attr, const dnnl_memory_desc_t *whole_dst,
                             const char *impl, dnnl_memory_desc_t *wmd, dnnl_status_t *ds) {
    int z_arg = 0;
    dnnl_primitive_attr_t a = part_attr(attr, whole_dst, &p->dst_md, &z_arg);
    if (!a) return "post-ops";
    dnnl_primitive_desc_t ppd = NULL;
    dnnl_status_t s = frt_dn_pd_prefer(&ppd, pcd, a, sp->env->engine(), impl);
    dnnl_primitive_attr_destroy(a);
    if (s) return "no primitive for the part";
    if (strcmp(impl_name(ppd), impl) != 0) {
        dnnl_primitive_desc_destroy(ppd);
        return "another implementation for the part";
    }
    sp->z_arg = z_arg;
    p->z_md = p->dst_md;
    p->sp_md = *dnnl_primitive_desc_query_md(ppd, dnnl_query_scratchpad_md, 0);
    p->sp_bytes = dnnl_memory_desc_get_size(&p->sp_md);
    p->sp_off = scratch_take(sp, p->sp_bytes);
    *wmd = *dnnl_primitive_desc_query_md(ppd, dnnl_query_weights_md, 0);
    *ds = dnnl_primitive_create(&p->prim, ppd);
    dnnl_primitive_desc_destroy(ppd);
    if (*ds) p->prim = NULL;
    return NULL;
}

/* The geometry planning reads from the whole convolution. */
typedef struct conv_geom {
    const dnnl_convolution_desc_t *cd;
    const_dnnl_primitive_attr_t attr;
    const dnnl_memory_desc_t *src, *dst;
    int64_t C, H, W, OC, OH, OW, kh, kw, Cg, blk;
    bool grouped;
    const char *impl;
} conv_geom;

/* Plain weights and bias descriptors of oc output channels. */
static dnnl_status_t weight_mds(const conv_geom *g, int64_t oc, dnnl_memory_desc_t *pwei,
                                dnnl_memory_desc_t *wplain, dnnl_memory_desc_t *pbia) {
    dnnl_dims_t wd5 = {oc, 1, 1, g->kh, g->kw}, wd4 = {oc, g->Cg, g->kh, g->kw}, bd = {oc};
    dnnl_status_t ds;
    if (g->grouped) {
        ds = dnnl_memory_desc_init_by_tag(pwei, 5, wd5, dnnl_f32, dnnl_format_tag_any);
        if (!ds) ds = dnnl_memory_desc_init_by_tag(wplain, 5, wd5, dnnl_f32, dnnl_goihw);
    } else {
        ds = dnnl_memory_desc_init_by_tag(pwei, 4, wd4, dnnl_f32, dnnl_format_tag_any);
        if (!ds) ds = dnnl_memory_desc_init_by_tag(wplain, 4, wd4, dnnl_f32, dnnl_oihw);
    }
    if (!ds) ds = dnnl_memory_desc_init_by_tag(pbia, 1, bd, dnnl_f32, dnnl_x);
    return ds;
}

/* Channel parts (see the header): n parts of whole output channel blocks. */
static const char *plan_channels(frt_op_ctx *c, dn_split *sp, const conv_geom *g, int n,
                                 const float *wdata, const float *bdata, dnnl_status_t *dsp) {
    const dnnl_convolution_desc_t *cd = g->cd;
    int64_t blk = g->blk, nb = (g->OC + blk - 1) / blk, wrow = g->Cg * g->kh * g->kw;
    dnnl_status_t ds = dnnl_success;
    const char *why = NULL;
    for (int i = 0; i < n && !ds && !why; i++) {
        dn_part *p = &sp->part[i];
        int64_t b0 = nb * i / n, b1 = nb * (i + 1) / n;
        int64_t o0 = b0 * blk, oc = (b1 * blk < g->OC ? b1 * blk : g->OC) - o0;
        dnnl_dims_t dd = {1, oc, g->OH, g->OW}, sd = {1, oc, g->H, g->W};
        dnnl_memory_desc_t pwei, pbia, wplain, wmd;
        p->in_buf = p->out_buf = p->z_buf = NO_BUF;
        ds = dnnl_memory_desc_init_by_tag(&p->dst_md, 4, dd, dnnl_f32, blocked_tag(blk));
        if (!ds) {
            if (g->grouped)
                ds = dnnl_memory_desc_init_by_tag(&p->src_md, 4, sd, dnnl_f32, blocked_tag(blk));
            else p->src_md = *g->src;
        }
        if (!ds) ds = weight_mds(g, oc, &pwei, &wplain, &pbia);
        dnnl_convolution_desc_t pcd;
        if (!ds)
            ds = dnnl_dilated_convolution_forward_desc_init(
                &pcd, cd->prop_kind, cd->alg_kind, &p->src_md, &pwei,
                cd->bias_desc.ndims ? &pbia : NULL, &p->dst_md, cd->strides, cd->dilates,
                cd->padding[0], cd->padding[1]);
        if (ds) break;
        why = part_prim(sp, p, &pcd, g->attr, g->dst, g->impl, &wmd, &ds);
        if (why || ds) break;
        p->dst_off = (size_t)(b0 * g->OH * g->OW * blk) * sizeof(float);
        p->dst_bytes = (size_t)((b1 - b0) * g->OH * g->OW * blk) * sizeof(float);
        p->src_off = g->grouped ? (size_t)(b0 * g->H * g->W * blk) * sizeof(float) : 0;
        sp->n = i + 1; /* from here on frt_dn_split_free releases this part */
        ds = reorder_weights(c, sp->env, &wplain, wdata + o0 * wrow, &wmd, &p->wmem);
        if (!ds && bdata) {
            float *b = frt_arena_alloc(c->arena, (size_t)oc * sizeof *b, 64);
            if (!b) ds = dnnl_out_of_memory;
            else {
                memcpy(b, bdata + o0, (size_t)oc * sizeof *b);
                ds = dnnl_memory_create(&p->bmem, &pbia, sp->env->engine(), b);
            }
        }
    }
    *dsp = ds;
    return why;
}

/* Row parts: n parts of whole runs of `align` output rows, each a convolution of all channels
 * over its input rows (the rows its outputs read, with the whole's padding where they reach the
 * image's edge). A tensor with one channel block is read or written in place (its rows are one
 * contiguous range); with more blocks the part copies its rows into a dense buffer in the step's
 * scratch (input, residual) or out of one (output). Every part has all the weights: they are
 * reordered once and shared where the parts' primitives ask for the same layout. */
static const char *plan_rows(frt_op_ctx *c, dn_split *sp, const conv_geom *g, int n,
                             int64_t align, const float *wdata, const float *bdata,
                             dnnl_status_t *dsp) {
    const dnnl_convolution_desc_t *cd = g->cd;
    int64_t blk = g->blk, s = cd->strides[0], pt = cd->padding[0][0];
    int64_t keff = (g->kh - 1) * (cd->dilates[0] + 1) + 1, units = (g->OH + align - 1) / align;
    sp->rows = 1;
    sp->cbi = (g->C + blk - 1) / blk;
    sp->cbo = (g->OC + blk - 1) / blk;
    sp->H = g->H;
    sp->OH = g->OH;
    sp->in_row = (size_t)(g->W * blk) * sizeof(float);
    sp->out_row = (size_t)(g->OW * blk) * sizeof(float);
    dnnl_memory_desc_t pwei, pbia, wplain, wmd0;
    dnnl_status_t ds = weight_mds(g, g->OC, &pwei, &wplain, &pbia);
    const char *why = NULL;
    for (int i = 0; i < n && !ds && !why; i++) {
        dn_part *p = &sp->part[i];
        int64_t u0 = units * i / n, u1 = units * (i + 1) / n;
        int64_t y0 = u0 * align, y1 = u1 * align < g->OH ? u1 * align : g->OH;
        int64_t lo = y0 * s - pt, hi = (y1 - 1) * s - pt + keff; /* input rows read */
        int64_t iy0 = lo < 0 ? 0 : lo, iy1 = hi > g->H ? g->H : hi;
        if (y1 <= y0 || iy1 <= iy0) {
            why = "empty row part";
            break;
        }
        p->y0 = y0, p->oh = y1 - y0, p->iy0 = iy0, p->ih = iy1 - iy0;
        dnnl_dims_t dd = {1, g->OC, p->oh, g->OW}, sd = {1, g->C, p->ih, g->W};
        dnnl_dims_t pl = {iy0 - lo, cd->padding[0][1]}, pr = {hi - iy1, cd->padding[1][1]};
        ds = dnnl_memory_desc_init_by_tag(&p->dst_md, 4, dd, dnnl_f32, blocked_tag(blk));
        if (!ds) ds = dnnl_memory_desc_init_by_tag(&p->src_md, 4, sd, dnnl_f32, blocked_tag(blk));
        dnnl_convolution_desc_t pcd;
        if (!ds)
            ds = dnnl_dilated_convolution_forward_desc_init(
                &pcd, cd->prop_kind, cd->alg_kind, &p->src_md, &pwei,
                cd->bias_desc.ndims ? &pbia : NULL, &p->dst_md, cd->strides, cd->dilates, pl, pr);
        if (ds) break;
        dnnl_memory_desc_t wmd;
        why = part_prim(sp, p, &pcd, g->attr, g->dst, g->impl, &wmd, &ds);
        if (why || ds) break;
        p->in_buf = sp->cbi > 1 ? scratch_take(sp, dnnl_memory_desc_get_size(&p->src_md)) : NO_BUF;
        p->out_buf = sp->cbo > 1 ? scratch_take(sp, dnnl_memory_desc_get_size(&p->dst_md)) : NO_BUF;
        p->z_buf = sp->cbo > 1 && sp->z_arg > 0
                       ? scratch_take(sp, dnnl_memory_desc_get_size(&p->dst_md))
                       : NO_BUF;
        sp->n = i + 1; /* from here on frt_dn_split_free releases this part */
        if (i > 0 && dnnl_memory_desc_equal(&wmd, &wmd0)) {
            void *h = NULL;
            ds = dnnl_memory_get_data_handle(sp->part[0].wmem, &h);
            if (!ds) ds = dnnl_memory_create(&p->wmem, &wmd, sp->env->engine(), h);
        } else {
            ds = reorder_weights(c, sp->env, &wplain, wdata, &wmd, &p->wmem);
            if (i == 0) wmd0 = wmd;
        }
        if (!ds && bdata) {
            void *b = NULL;
            if (i > 0) ds = dnnl_memory_get_data_handle(sp->part[0].bmem, &b);
            else if ((b = frt_arena_alloc(c->arena, (size_t)g->OC * sizeof(float), 64)))
                memcpy(b, bdata, (size_t)g->OC * sizeof(float));
            else ds = dnnl_out_of_memory;
            if (!ds) ds = dnnl_memory_create(&p->bmem, &pbia, sp->env->engine(), b);
        }
    }
    *dsp = ds;
    return why;
}

frt_status frt_dn_split_conv(frt_op_ctx *c, const_dnnl_primitive_desc_t pd, int threads,
                             const frt_value *Wt, const frt_value *B, const dn_env *env,
                             dn_split **out) {
    *out = NULL;
    conv_geom g;
    if (dnnl_primitive_desc_query(pd, dnnl_query_convolution_d, 0, &g.cd) != dnnl_success ||
        !g.cd || dnnl_primitive_desc_get_attr(pd, &g.attr) != dnnl_success)
        return FRT_OK;
    g.src = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    g.dst = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    const dnnl_memory_desc_t *wei = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    g.blk = channel_block(g.dst);
    if (!g.src || !g.dst || !wei || !g.blk || g.src->ndims != 4 || g.dst->dims[0] != 1)
        return FRT_OK;
    g.C = g.src->dims[1], g.H = g.src->dims[2], g.W = g.src->dims[3];
    g.OC = g.dst->dims[1], g.OH = g.dst->dims[2], g.OW = g.dst->dims[3];
    g.grouped = wei->ndims == 5;
    g.kh = wei->dims[wei->ndims - 2], g.kw = wei->dims[wei->ndims - 1];
    g.Cg = g.grouped ? wei->dims[2] : wei->dims[1];
    /* grouped: depthwise only (one input and one output channel per group) */
    bool src_blocked = channel_block(g.src) == g.blk;
    if (g.grouped && (wei->dims[0] != g.C || wei->dims[1] != 1 || g.Cg != 1 || g.OC != g.C ||
                      !src_blocked))
        return FRT_OK;
    g.impl = impl_name(pd);
    int64_t nb = (g.OC + g.blk - 1) / g.blk;
    double flops = 2.0 * (double)g.OC * (double)(g.OH * g.OW) * (double)(g.Cg * g.kh * g.kw);
    double work = flops * (g.grouped                 ? FRT_PAR_NS_PER_FLOP_DNNL_DW
                           : c->isa == FRT_ISA_AVX2 ? FRT_PAR_NS_PER_FLOP_DNNL_AVX2
                                                    : FRT_PAR_NS_PER_FLOP_DNNL);
    /* Depthwise: bound by the bytes of the image in and out more than by the flops, so the
       larger estimate decides. AVX2 tier (mobilenet_v2's 7x7..14x14 layers at 1 thread, Zen 3,
       chrt -f 1: 21-36 GFLOP/s, 24-38 us, against the 9-17 us the flops rate predicts and 24-47
       us from the bytes at FRT_PAR_NS_PER_BYTE): those nine layers split at 2 threads,
       mobilenet_v2 5-7% faster (all convolutions forced into 2 parts, FRT_DNNL_PARTS=2, 4
       interleaved rounds). AVX-512 tier (Zen 5): at 2 threads a depthwise step left whole after
       a 1x1 split into channel parts reads half its input from the other core's cache and ran
       2-3x its 1-thread time (mobilenet_v2 features.11: 20 -> 63 us), while its parts each
       read what their own core wrote; with the bytes estimate every depthwise layer of
       mobilenet_v2 splits (features.11 63 -> 31 us) and efficientnet_b0's convolutions sum
       6568 -> 6393 us (bench/layer_ab.sh, 2 threads, median of 5; its whole depthwise steps
       95 -> 55 and 93 -> 59). Whole models at 2 threads (bench/compare.sh -t 2, two runs of
       5 and 7 rounds): 0.92-1.04 of the flops-only estimate, within this host's noise. */
    if (g.grouped) {
        double bytes = 4.0 * (double)(g.C * g.H * g.W + g.OC * g.OH * g.OW);
        if (bytes * FRT_PAR_NS_PER_BYTE > work) work = bytes * FRT_PAR_NS_PER_BYTE;
    }
    /* Row parts are the fallback for Winograd convolutions whose channel parts oneDNN does not
       make with the whole's implementation: parts of whole 4x4 tiles keep the whole
       convolution's tiles, and the outputs stay bit-identical (resnet50, squeezenet1_1 with
       FRT_DNNL_ROWS=1). Where both exist channel parts come first: on resnet50's Winograd layers
       the parts' times summed alike (1.09-1.28x the whole's for rows, 1.12-1.30x for channels,
       1 thread, min of 30 runs, load average 17) and row parts need scratch for their copies.
       Direct convolutions keep channel parts: oneDNN's 1x1 kernels on fewer rows changed the
       last bits of squeezenet1_1's outputs. */
    bool wino = strstr(g.impl, "wino") != NULL;
    int64_t align = wino ? 4 : 1;
    int n_rows = parts_for(threads, work, (g.OH + align - 1) / align);
    int n_ch = parts_for(threads, work, nb);
    /* debugging aid: "0" no row parts, "1" row parts first wherever oneDNN makes them (direct
       convolutions too, whose outputs may then differ in the last bits) */
    const char *re = getenv("FRT_DNNL_ROWS");
    bool rows_ok = src_blocked && n_rows >= 2 && wino, rows_first = false;
    if (re && *re) {
        rows_ok = src_blocked && n_rows >= 2 && re[0] == '1';
        rows_first = rows_ok;
    }
    for (int pass = 0; pass < 2; pass++) {
        bool rows = pass == (rows_first ? 0 : 1);
        int n = rows ? n_rows : n_ch;
        if (n < 2 || (rows && !rows_ok)) continue;
        dn_split *sp = frt_arena_alloc(c->arena, sizeof *sp + (size_t)n * sizeof(dn_part), 64);
        if (!sp) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "onednn: out of memory for the parts");
        memset(sp, 0, sizeof *sp + (size_t)n * sizeof(dn_part));
        sp->env = env;
        sp->in_img = dnnl_memory_desc_get_size(g.src);
        sp->out_img = dnnl_memory_desc_get_size(g.dst);
        dnnl_status_t ds = dnnl_success;
        const float *wdata = Wt->data, *bdata = B ? B->data : NULL;
        const char *why = rows ? plan_rows(c, sp, &g, n, align, wdata, bdata, &ds)
                               : plan_channels(c, sp, &g, n, wdata, bdata, &ds);
        if (!ds && !why) {
            *out = sp;
            return FRT_OK;
        }
        frt_dn_split_free(sp);
        if (!why)
            return frt_op_fail(c, ds == dnnl_out_of_memory ? FRT_ERR_NO_MEMORY : FRT_ERR_INTERNAL,
                               "onednn: splitting the convolution failed (status %d)", (int)ds);
    }
    return FRT_OK; /* the convolution stays whole */
}

/* ---- running ------------------------------------------------------------------------------- */

typedef struct split_job {
    const dn_split *sp;
    const char *x;                 /* X's image */
    const char *z;                 /* Z's image (residual), or NULL */
    char *y;                       /* Y's image */
    char *scratch;                 /* the step's scratch */
    dnnl_stream_t stream[DN_MAX_PARTS];
    dnnl_exec_arg_t args[DN_MAX_PARTS][DN_ARGS];
    int nargs[DN_MAX_PARTS];
    dnnl_status_t status[DN_MAX_PARTS];
} split_job;

/* Copies rows [r0, r0 + rows) of each of nblk channel blocks of an image of H rows (row_bytes
 * each) into the dense [nblk][rows] buffer buf (to_buf), or back from it. */
static void copy_rows(char *img, char *buf, int64_t nblk, int64_t H, int64_t r0, int64_t rows,
                      size_t row_bytes, bool to_buf) {
    size_t n = (size_t)rows * row_bytes;
    for (int64_t b = 0; b < nblk; b++) {
        char *im = img + (size_t)(b * H + r0) * row_bytes, *bu = buf + (size_t)b * n;
        if (to_buf) memcpy(bu, im, n);
        else memcpy(im, bu, n);
    }
}

static void part_task(void *ctx, size_t i) {
    split_job *j = ctx;
    const dn_split *sp = j->sp;
    const dn_part *p = &sp->part[i];
    sp->env->set_threads(1); /* a pool's helper (interop.c) may not have run thread_init */
    if (!sp->rows) {
        if (j->z && sp->z_arg < 0 && j->z != j->y)
            memcpy(j->y + p->dst_off, j->z + p->dst_off, p->dst_bytes);
    } else {
        if (p->in_buf != NO_BUF)
            copy_rows((char *)j->x, j->scratch + p->in_buf, sp->cbi, sp->H, p->iy0, p->ih,
                      sp->in_row, true);
        if (j->z && sp->z_arg < 0) { /* sum: the residual's rows into the destination first */
            if (p->out_buf != NO_BUF)
                copy_rows((char *)j->z, j->scratch + p->out_buf, sp->cbo, sp->OH, p->y0, p->oh,
                          sp->out_row, true);
            else if (j->z != j->y)
                memcpy(j->y + (size_t)p->y0 * sp->out_row, j->z + (size_t)p->y0 * sp->out_row,
                       (size_t)p->oh * sp->out_row);
        }
        if (j->z && sp->z_arg > 0 && p->z_buf != NO_BUF)
            copy_rows((char *)j->z, j->scratch + p->z_buf, sp->cbo, sp->OH, p->y0, p->oh,
                      sp->out_row, true);
    }
    dnnl_status_t ds = dnnl_primitive_execute(p->prim, j->stream[i], j->nargs[i], j->args[i]);
    if (!ds) ds = dnnl_stream_wait(j->stream[i]);
    if (!ds && sp->rows && p->out_buf != NO_BUF)
        copy_rows(j->y, j->scratch + p->out_buf, sp->cbo, sp->OH, p->y0, p->oh, sp->out_row,
                  false);
    j->status[i] = ds;
}

frt_status frt_dn_split_run(const frt_step *s, frt_exec *x, const dn_split *sp,
                            const frt_value *X, frt_value *Y, const frt_value *Z) {
    const dn_env *env = sp->env;
    env->set_threads(1);
    frt_dn_thread *t = env->this_thread();
    if (!t) return frt_step_fail(s, FRT_ERR_NO_MEMORY, "onednn: no thread state");
    split_job j;
    j.sp = sp;
    j.scratch = x->scratch;
    dnnl_memory_t ms[DN_MAX_PARTS], md[DN_MAX_PARTS], mz[DN_MAX_PARTS];
    dnnl_status_t ds = dnnl_success;
    for (int i = 0; i < sp->n && !ds; i++) {
        const dn_part *p = &sp->part[i];
        dnnl_exec_arg_t *a = j.args[i];
        int na = 0;
        mz[i] = NULL;
        j.stream[i] = part_stream(env, i);
        if (!j.stream[i]) ds = dnnl_out_of_memory;
        if (!ds) ms[i] = env->thread_mem(t, &p->src_md, &ds);
        if (!ds) md[i] = env->thread_mem(t, &p->dst_md, &ds);
        if (ds) break;
        a[na++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, ms[i]};
        a[na++] = (dnnl_exec_arg_t){DNNL_ARG_DST, md[i]};
        a[na++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, p->wmem};
        if (p->bmem) a[na++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, p->bmem};
        if (p->sp_bytes) {
            dnnl_memory_t m = env->thread_mem(t, &p->sp_md, &ds);
            if (!ds) ds = dnnl_memory_set_data_handle(m, (char *)x->scratch + p->sp_off);
            a[na++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, m};
        }
        if (!ds && sp->z_arg > 0 && Z) {
            mz[i] = env->thread_mem(t, &p->z_md, &ds);
            a[na++] = (dnnl_exec_arg_t){sp->z_arg, mz[i]};
        }
        j.nargs[i] = na;
    }
    for (int64_t n = 0; n < X->dims[0] && !ds; n++) {
        j.x = (const char *)X->data + (size_t)n * sp->in_img;
        j.y = (char *)Y->data + (size_t)n * sp->out_img;
        j.z = Z && sp->z_arg ? (const char *)Z->data + (size_t)n * sp->out_img : NULL;
        for (int i = 0; i < sp->n && !ds; i++) {
            const dn_part *p = &sp->part[i];
            char *src, *dst, *z = j.z ? (char *)j.z + p->dst_off : NULL;
            if (sp->rows) {
                src = p->in_buf != NO_BUF ? j.scratch + p->in_buf
                                          : (char *)j.x + (size_t)p->iy0 * sp->in_row;
                dst = p->out_buf != NO_BUF ? j.scratch + p->out_buf
                                           : j.y + (size_t)p->y0 * sp->out_row;
                if (z) z = p->z_buf != NO_BUF ? j.scratch + p->z_buf
                                              : (char *)j.z + (size_t)p->y0 * sp->out_row;
            } else {
                src = (char *)j.x + p->src_off;
                dst = j.y + p->dst_off;
            }
            ds = dnnl_memory_set_data_handle(ms[i], src);
            if (!ds) ds = dnnl_memory_set_data_handle(md[i], dst);
            if (!ds && mz[i]) ds = dnnl_memory_set_data_handle(mz[i], z);
            j.status[i] = dnnl_success;
        }
        if (ds) break;
        frt_parallel_for(x->tp, (size_t)sp->n, part_task, &j);
        for (int i = 0; i < sp->n && !ds; i++) ds = j.status[i];
    }
    if (ds)
        return frt_step_fail(s, ds == dnnl_out_of_memory ? FRT_ERR_NO_MEMORY : FRT_ERR_INTERNAL,
                             "onednn: execution failed (status %d)", (int)ds);
    return FRT_OK;
}

#else

typedef int frt_dn_split_unused; /* ISO C: no empty translation unit */

#endif /* FRT_HAVE_DNNL */
