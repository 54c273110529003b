/* Channel splits of the oneDNN provider's steps (see split.h).
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
 * How many parts: the cost model of src/util/threadpool.h (frt_par_split) on the convolution's
 * flops at oneDNN's speed (FRT_PAR_NS_PER_FLOP_DNNL; depthwise: FRT_PAR_NS_PER_FLOP_DNNL_DW), at
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
} dn_part;

struct dn_split {
    const dn_env *env;
    int n;                         /* parts */
    int z_arg;                     /* >0: Z passed under this argument; -1: copied into Y first */
    size_t in_img, out_img;        /* bytes of one input / output image */
    size_t scratch;                /* bytes of all scratchpads */
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

frt_status frt_dn_split_conv(frt_op_ctx *c, const_dnnl_primitive_desc_t pd, int threads,
                             const frt_value *Wt, const frt_value *B, const dn_env *env,
                             dn_split **out) {
    *out = NULL;
    const dnnl_convolution_desc_t *cd = NULL;
    const_dnnl_primitive_attr_t attr = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_convolution_d, 0, &cd) != dnnl_success || !cd ||
        dnnl_primitive_desc_get_attr(pd, &attr) != dnnl_success)
        return FRT_OK;
    const dnnl_memory_desc_t *src = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *dst = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    const dnnl_memory_desc_t *wei = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    int64_t blk = channel_block(dst);
    if (!src || !dst || !wei || !blk || src->ndims != 4 || dst->dims[0] != 1) return FRT_OK;
    int64_t C = src->dims[1], H = src->dims[2], W = src->dims[3];
    int64_t OC = dst->dims[1], OH = dst->dims[2], OW = dst->dims[3];
    bool grouped = wei->ndims == 5;
    int64_t kh = wei->dims[wei->ndims - 2], kw = wei->dims[wei->ndims - 1];
    int64_t Cg = grouped ? wei->dims[2] : wei->dims[1];
    /* grouped: depthwise only (one input and one output channel per group) */
    if (grouped && (wei->dims[0] != C || wei->dims[1] != 1 || Cg != 1 || OC != C ||
                    channel_block(src) != blk))
        return FRT_OK;
    int64_t nb = (OC + blk - 1) / blk;
    double flops = 2.0 * (double)OC * (double)(OH * OW) * (double)(Cg * kh * kw);
    int n = parts_for(threads,
                      flops * (grouped ? FRT_PAR_NS_PER_FLOP_DNNL_DW : FRT_PAR_NS_PER_FLOP_DNNL),
                      nb);
    if (n < 2) return FRT_OK;

    dn_split *sp = frt_arena_alloc(c->arena, sizeof *sp + (size_t)n * sizeof(dn_part), 64);
    if (!sp) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "onednn: out of memory for the parts");
    memset(sp, 0, sizeof *sp + (size_t)n * sizeof(dn_part));
    sp->env = env;
    sp->in_img = dnnl_memory_desc_get_size(src);
    sp->out_img = dnnl_memory_desc_get_size(dst);
    const char *whole_impl = impl_name(pd);
    const float *wdata = Wt->data, *bdata = B ? B->data : NULL;
    int64_t wrow = Cg * kh * kw; /* floats per output channel in the plain weights */
    dnnl_status_t ds = dnnl_success;
    const char *why = NULL;
    for (int i = 0; i < n && !ds && !why; i++) {
        dn_part *p = &sp->part[i];
        int64_t b0 = nb * i / n, b1 = nb * (i + 1) / n;
        int64_t o0 = b0 * blk, oc = (b1 * blk < OC ? b1 * blk : OC) - o0;
        dnnl_dims_t dd = {1, oc, OH, OW}, sd = {1, oc, H, W}, bd = {oc};
        dnnl_dims_t wd5 = {oc, 1, 1, kh, kw}, wd4 = {oc, Cg, kh, kw};
        dnnl_memory_desc_t pwei, pbia, wplain;
        ds = dnnl_memory_desc_init_by_tag(&p->dst_md, 4, dd, dnnl_f32, blocked_tag(blk));
        if (!ds) {
            if (grouped) ds = dnnl_memory_desc_init_by_tag(&p->src_md, 4, sd, dnnl_f32, blocked_tag(blk));
            else p->src_md = *src;
        }
        if (!ds) {
            if (grouped) {
                ds = dnnl_memory_desc_init_by_tag(&pwei, 5, wd5, dnnl_f32, dnnl_format_tag_any);
                if (!ds) ds = dnnl_memory_desc_init_by_tag(&wplain, 5, wd5, dnnl_f32, dnnl_goihw);
            } else {
                ds = dnnl_memory_desc_init_by_tag(&pwei, 4, wd4, dnnl_f32, dnnl_format_tag_any);
                if (!ds) ds = dnnl_memory_desc_init_by_tag(&wplain, 4, wd4, dnnl_f32, dnnl_oihw);
            }
        }
        if (!ds) ds = dnnl_memory_desc_init_by_tag(&pbia, 1, bd, dnnl_f32, dnnl_x);
        dnnl_convolution_desc_t pcd;
        if (!ds)
            ds = dnnl_dilated_convolution_forward_desc_init(
                &pcd, cd->prop_kind, cd->alg_kind, &p->src_md, &pwei,
                cd->bias_desc.ndims ? &pbia : NULL, &p->dst_md, cd->strides, cd->dilates,
                cd->padding[0], cd->padding[1]);
        if (ds) break;
        int z_arg = 0;
        dnnl_primitive_attr_t a = part_attr(attr, dst, &p->dst_md, &z_arg);
        if (!a) {
            why = "post-ops";
            break;
        }
        dnnl_primitive_desc_t ppd = NULL;
        ds = dnnl_primitive_desc_create(&ppd, &pcd, a, env->engine(), NULL);
        dnnl_primitive_attr_destroy(a);
        if (ds) {
            why = "no primitive for the part";
            ds = dnnl_success;
            break;
        }
        if (strcmp(impl_name(ppd), whole_impl) != 0) {
            why = "another implementation for the part";
            dnnl_primitive_desc_destroy(ppd);
            break;
        }
        sp->z_arg = z_arg;
        p->z_md = p->dst_md;
        p->sp_md = *dnnl_primitive_desc_query_md(ppd, dnnl_query_scratchpad_md, 0);
        p->sp_bytes = dnnl_memory_desc_get_size(&p->sp_md);
        p->sp_off = sp->scratch;
        sp->scratch += (p->sp_bytes + 63) & ~(size_t)63;
        p->dst_off = (size_t)(b0 * OH * OW * blk) * sizeof(float);
        p->dst_bytes = (size_t)((b1 - b0) * OH * OW * blk) * sizeof(float);
        p->src_off = grouped ? (size_t)(b0 * H * W * blk) * sizeof(float) : 0;
        const dnnl_memory_desc_t wmd = *dnnl_primitive_desc_query_md(ppd, dnnl_query_weights_md, 0);
        ds = dnnl_primitive_create(&p->prim, ppd);
        dnnl_primitive_desc_destroy(ppd);
        if (ds) {
            p->prim = NULL;
            break;
        }
        sp->n = i + 1; /* from here on frt_dn_split_free releases this part */
        ds = reorder_weights(c, env, &wplain, wdata + o0 * wrow, &wmd, &p->wmem);
        if (!ds && bdata) {
            float *b = frt_arena_alloc(c->arena, (size_t)oc * sizeof *b, 64);
            if (!b) ds = dnnl_out_of_memory;
            else {
                memcpy(b, bdata + o0, (size_t)oc * sizeof *b);
                ds = dnnl_memory_create(&p->bmem, &pbia, env->engine(), b);
            }
        }
    }
    if (ds || why) {
        frt_dn_split_free(sp);
        if (why) return FRT_OK; /* the convolution stays whole */
        return frt_op_fail(c, ds == dnnl_out_of_memory ? FRT_ERR_NO_MEMORY : FRT_ERR_INTERNAL,
                           "onednn: splitting the convolution failed (status %d)", (int)ds);
    }
    *out = sp;
    return FRT_OK;
}

/* ---- running ------------------------------------------------------------------------------- */

typedef struct split_job {
    const dn_split *sp;
    const char *z;                 /* Z's image when copied into Y before the part (sum) */
    char *y;                       /* Y's image */
    dnnl_stream_t stream[DN_MAX_PARTS];
    dnnl_exec_arg_t args[DN_MAX_PARTS][DN_ARGS];
    int nargs[DN_MAX_PARTS];
    dnnl_status_t status[DN_MAX_PARTS];
} split_job;

static void part_task(void *ctx, size_t i) {
    split_job *j = ctx;
    const dn_part *p = &j->sp->part[i];
    j->sp->env->set_threads(1); /* a pool's helper (interop.c) may not have run thread_init */
    if (j->z && j->z != j->y) memcpy(j->y + p->dst_off, j->z + p->dst_off, p->dst_bytes);
    dnnl_status_t ds = dnnl_primitive_execute(p->prim, j->stream[i], j->nargs[i], j->args[i]);
    if (!ds) ds = dnnl_stream_wait(j->stream[i]);
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
        const char *xi = (const char *)X->data + (size_t)n * sp->in_img;
        j.y = (char *)Y->data + (size_t)n * sp->out_img;
        j.z = sp->z_arg < 0 && Z ? (const char *)Z->data + (size_t)n * sp->out_img : NULL;
        for (int i = 0; i < sp->n && !ds; i++) {
            const dn_part *p = &sp->part[i];
            ds = dnnl_memory_set_data_handle(ms[i], (char *)xi + p->src_off);
            if (!ds) ds = dnnl_memory_set_data_handle(md[i], j.y + p->dst_off);
            if (!ds && mz[i])
                ds = dnnl_memory_set_data_handle(
                    mz[i], (char *)Z->data + (size_t)n * sp->out_img + p->dst_off);
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
