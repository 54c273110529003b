/* The oneDNN provider (see onednn.h).
 *
 * Layout: activations between the provider's kernels are channel-blocked, L = nChw16c on the
 * AVX-512 tier and nChw8c on the AVX2 tier (src/ir/layout.c: [N, ceil(C/b), S..., b], the last
 * block zero-padded; byte for byte oneDNN's nChw16c / nChw8c). Conv and FusedConv always write L;
 * they read L, or plain when the producer is plain and C < b (the first convolution of an image
 * model: oneDNN's kernels for few input channels take plain data). Pooling, BatchNormalization,
 * the elementwise ops and Concat are taken only when their data input already is in L (their
 * producer declared it, see op.h), so a plain chain stays plain and costs no reorder. The layout
 * pass (src/compile/layout.c) inserts reorders wherever a reader needs plain data.
 *
 * Shapes: the primitives are built at select for the load-time dims, which must all be known
 * (the provider declines otherwise), for one image (N = 1); a run with batch N executes them N
 * times on consecutive images (each image is contiguous in both layouts). A run whose C/H/W
 * differ from the load-time ones fails with FRT_ERR_SHAPE.
 *
 * Primitives, weights (reordered once at select into the layout the primitive chose, in the
 * model arena: const_copied) and weight/bias memory objects are immutable after select and
 * shared by every runtime. The user-mode scratchpad is the step's scratch (k.scratch). A kernel
 * points memory objects of the calling thread (one per memory descriptor, made on the thread's
 * first run of the step, see thread_state) at its activation buffers and executes on the
 * thread's stream, so flatrt allocates nothing per run. oneDNN's own dnnl_primitive_execute
 * allocates 5 small blocks per call (its argument map and execution context; measured with
 * oneDNN 2.6.3), which test_noalloc counts apart (docs/dependencies.md).
 *
 * Threads: Debian's oneDNN runs on OpenMP and plans each primitive's work split for the calling
 * thread's omp_get_max_threads() when the primitive is created, and runs it with the count current
 * at the call. Select sets it (omp_set_num_threads, a per-thread setting) to 1 before creating
 * primitives, every kernel sets it to 1 again before executing, and the runtime's pool workers set
 * it when they start (frt_onednn_thread_init), so oneDNN always runs on the thread that calls it and
 * never starts an OpenMP team: runtimes on different threads do not share one. A model of N > 1
 * intra-op threads splits big convolutions into channel parts that run on the runtime's own pool
 * (split.c); the other kernels run on the calling thread. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "onednn.h"
#include "ops/blkmean.h"
#include "ops/blocked.h"
#include "ops/x86/simd_act.h"

#if FRT_HAVE_DNNL
#include <dnnl.h>

#include "choose.h"
#include "dwconv.h"
#include "gconv.h"
#include "stemconv.h"
#include "gemvconv.h"
#include "pwconv.h"
#include "onednn_impl.h"
#include "relay.h"
#include "split.h"
#include "util/threadpool.h"
#include "winoconv.h"


/* ---- engine, streams, threads ---------------------------------------------------------------- */

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static dnnl_engine_t g_engine;
static pthread_key_t g_thread_key;
static void (*g_omp_set)(int);

/* What a thread keeps for running primitives: its stream, and a memory object per memory
 * descriptor it has executed with (key: the descriptor's address in a kernel's params). A kernel
 * points the objects at its buffers with dnnl_memory_set_data_handle, so a steady-state run
 * creates none. Entries stay valid when a model is freed and another one reuses the address:
 * a hit is checked against the descriptor and the object remade when they differ. Open
 * addressing, capacity a power of two, at most half full. */
typedef struct mem_entry {
    const dnnl_memory_desc_t *key;
    dnnl_memory_t mem;
} mem_entry;

typedef struct thread_state {
    dnnl_stream_t stream;
    mem_entry *e;
    size_t n, cap;
} thread_state;

static void thread_state_free(void *p) {
    thread_state *t = p;
    for (size_t i = 0; i < t->cap; i++)
        if (t->e[i].mem) dnnl_memory_destroy(t->e[i].mem);
    free(t->e);
    if (t->stream) dnnl_stream_destroy(t->stream);
    free(t);
}

static void engine_init(void) {
    /* oneDNN follows the ISA cap (FRT_ISA=avx2 keeps it off AVX-512); must precede primitives */
    if (frt_cpu_tier() < FRT_ISA_AVX512) dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx2);
    if (dnnl_engine_create(&g_engine, dnnl_cpu, 0) != dnnl_success) g_engine = NULL;
    if (pthread_key_create(&g_thread_key, thread_state_free) != 0) g_engine = NULL;
}

static pthread_once_t g_omp_once = PTHREAD_ONCE_INIT;

static void omp_init(void) {
    /* libdnnl links libgomp, so its omp_set_num_threads is in the process */
    *(void **)&g_omp_set = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
}

static dnnl_engine_t engine(void) {
    pthread_once(&g_once, engine_init);
    return g_engine;
}

/* This thread's state (made on its first use, freed when the thread exits), or NULL. */
static thread_state *this_thread(void) {
    thread_state *t = pthread_getspecific(g_thread_key);
    if (t) return t;
    t = calloc(1, sizeof *t);
    if (!t) return NULL;
    if (dnnl_stream_create(&t->stream, g_engine, dnnl_stream_default_flags) != dnnl_success ||
        pthread_setspecific(g_thread_key, t) != 0) {
        if (t->stream) dnnl_stream_destroy(t->stream);
        free(t);
        return NULL;
    }
    return t;
}

static dnnl_stream_t thread_stream(void) {
    thread_state *t = this_thread();
    return t ? t->stream : NULL;
}

static size_t key_hash(const void *k, size_t mask) {
    uint64_t h = (uint64_t)(uintptr_t)k * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & mask;
}

static bool mem_insert(mem_entry *e, size_t cap, const dnnl_memory_desc_t *key, dnnl_memory_t m) {
    for (size_t i = key_hash(key, cap - 1), n = 0; n < cap; i = (i + 1) & (cap - 1), n++)
        if (!e[i].key) {
            e[i] = (mem_entry){key, m};
            return true;
        }
    return false;
}

/* A memory object of this thread for descriptor md (with no buffer set), or NULL on failure. */
static dnnl_memory_t thread_mem(thread_state *t, const dnnl_memory_desc_t *md,
                                dnnl_status_t *err) {
    *err = dnnl_success;
    if (t->cap) {
        for (size_t i = key_hash(md, t->cap - 1), n = 0; n < t->cap && t->e[i].key;
             i = (i + 1) & (t->cap - 1), n++) {
            if (t->e[i].key != md) continue;
            const dnnl_memory_desc_t *have = NULL;
            if (dnnl_memory_get_memory_desc(t->e[i].mem, &have) == dnnl_success &&
                dnnl_memory_desc_equal(have, md))
                return t->e[i].mem;
            /* another model's descriptor at this address: remake the object */
            dnnl_memory_t m = NULL;
            *err = dnnl_memory_create(&m, md, g_engine, DNNL_MEMORY_NONE);
            if (*err) return NULL;
            dnnl_memory_destroy(t->e[i].mem);
            t->e[i].mem = m;
            return m;
        }
    }
    if (2 * (t->n + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        mem_entry *e = calloc(cap, sizeof *e);
        if (!e) {
            *err = dnnl_out_of_memory;
            return NULL;
        }
        for (size_t i = 0; i < t->cap; i++)
            if (t->e[i].key) mem_insert(e, cap, t->e[i].key, t->e[i].mem);
        free(t->e);
        t->e = e;
        t->cap = cap;
    }
    dnnl_memory_t m = NULL;
    *err = dnnl_memory_create(&m, md, g_engine, DNNL_MEMORY_NONE);
    if (*err) return NULL;
    mem_insert(t->e, t->cap, md, m);
    t->n++;
    return m;
}

static void set_threads(int n) {
    pthread_once(&g_omp_once, omp_init);
    if (g_omp_set) g_omp_set(n > 0 ? n : 1);
}

static dnnl_stream_t stream_of(frt_dn_thread *t) { return t->stream; }

/* what split.c uses (onednn_impl.h) */
static const dn_env g_env = {engine, this_thread, stream_of, thread_mem, set_threads};

/* ---- helpers ---------------------------------------------------------------------------------- */

/* The blocked layout of tier isa (NULL below AVX2: the provider declines everything). */
static const frt_layout *blocked_layout(frt_isa isa) {
    return isa >= FRT_ISA_AVX512 ? &frt_layout_nchw16c
           : isa >= FRT_ISA_AVX2 ? &frt_layout_nchw8c
                                 : NULL;
}

static dnnl_format_tag_t tag_of(const frt_layout *l) {
    return l == &frt_layout_nchw16c ? dnnl_nChw16c : l == &frt_layout_nchw8c ? dnnl_nChw8c
                                                                              : dnnl_nchw;
}

static frt_status decline(const frt_op_ctx *c, const char *why) {
    frt_error(FRT_ERR_UNSUPPORTED, "onednn: node '%s' (%s): %s", c->node->name,
              c->node->op_type, why);
    return FRT_DECLINE;
}

/* Dims of a rank-3/4 activation as one 2-D image: C, H, W (H = 1 for rank 3). */
static void image_dims(const frt_value *v, int64_t *C, int64_t *H, int64_t *W) {
    *C = v->dims[1];
    *H = v->rank == 4 ? v->dims[2] : 1;
    *W = v->dims[v->rank - 1];
}

/* oneDNN 2.6 sets up its kernels with 32-bit sizes: every image the provider takes has positive
 * dims and fits in 2^31 elements per image, channels padded to a whole block of 16. */
#define DN_MAX_IMAGE ((int64_t)INT32_MAX)

static bool fits_int32(const frt_value *v, int64_t pad_c) {
    int64_t n = 1;
    for (int i = 1; i < v->rank; i++) {
        int64_t d = v->dims[i];
        if (i == 1 && pad_c) d = (d + pad_c - 1) / pad_c * pad_c;
        if (d <= 0 || d > DN_MAX_IMAGE || n > DN_MAX_IMAGE / d) return false;
        n *= d;
    }
    return true;
}

static bool is_image(const frt_value *v) {
    return v && v->dtype == FRT_FLOAT32 && (v->rank == 3 || v->rank == 4) &&
           frt_shape_known(v) && v->dims[0] > 0 && v->dims[0] <= DN_MAX_IMAGE &&
           fits_int32(v, 16);
}

static const frt_layout **layouts(frt_arena *a, int n) {
    const frt_layout **l = frt_arena_array(a, (size_t)n + 1, sizeof *l);
    if (l) memset(l, 0, ((size_t)n + 1) * sizeof *l);
    return l;
}

/* Bytes of one image (all dims but N) of v in layout l. */
static size_t image_bytes(const frt_value *v, const frt_layout *l) {
    frt_value t = *v;
    t.dims[0] = 1;
    t.numel = frt_shape_numel(t.dims, t.rank);
    t.layout = l;
    return frt_value_nbytes(&t);
}

static frt_status dnnl_fail(const frt_op_ctx *c, const char *what, dnnl_status_t s) {
    return frt_op_fail(c, s == dnnl_out_of_memory ? FRT_ERR_NO_MEMORY : FRT_ERR_INTERNAL,
                       "onednn: %s failed (status %d)", what, (int)s);
}

/* A primitive with its memory descriptors: what every kernel of this file holds. */
typedef struct dn_prim {
    dnnl_primitive_t prim;
    dnnl_memory_desc_t src_md, dst_md, sp_md;
    size_t sp_bytes;
    int64_t C, H, W;            /* input image dims at select */
    int64_t OC, OH, OW;         /* output image dims */
    size_t in_img, out_img;     /* bytes of one input / output image in its layout */
    int nthr;                   /* OpenMP threads it was planned for (the provider's count) */
    int64_t gat_b;              /* > 0: a K x K convolution run as a 1x1 one over K K C channels,
                                   its input taps gathered per image (blocks of gat_b channels)
                                   into the step's scratch at gat_off (see conv_select) */
    int64_t gat_k, gat_s, gat_pt, gat_pl;
    size_t gat_off, gat_bytes;
} dn_prim;

/* The OpenMP thread count primitives are made for (1: see the header) and the intra-op thread
 * count of the model selecting on this thread (the provider's ctx, set by onednn_select). */
static _Thread_local int g_sel_threads = 1;
static _Thread_local int g_model_threads = 1;

/* Creates the primitive of pd into p (pd is destroyed). */
static dnnl_status_t make_prim(dn_prim *p, dnnl_primitive_desc_t pd) {
    p->src_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    p->dst_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    p->sp_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    p->sp_bytes = dnnl_memory_desc_get_size(&p->sp_md);
    p->nthr = g_sel_threads;
    dnnl_status_t s = dnnl_primitive_create(&p->prim, pd);
    dnnl_primitive_desc_destroy(pd);
    if (s != dnnl_success) p->prim = NULL;
    return s;
}

static dnnl_primitive_attr_t user_scratch_attr(void) {
    dnnl_primitive_attr_t a;
    if (dnnl_primitive_attr_create(&a) != dnnl_success) return NULL;
    dnnl_primitive_attr_set_scratchpad_mode(a, dnnl_scratchpad_mode_user);
    return a;
}

static size_t prim_scratch(const frt_step *s, const frt_value *values) {
    const dn_prim *p = s->k.params;
    return p->gat_b ? p->gat_off + p->gat_bytes : p->sp_bytes;
}

/* The taps of one blocked image x [C/b][H][W][b] as a [K K C/b][OH][OW][b]: block (i K + j) C/b + k
   holds x's block k at (oh S - pt + i, ow S - pl + j), zero outside the image. Blocks of 8 copy
   with a constant size (inlined). */
static void gather_taps(const float *x, float *a, const dn_prim *p) {
    int64_t b = p->gat_b, cb = p->C / b, K = p->gat_k, S = p->gat_s;
    for (int64_t k = 0; k < cb; k++) /* one input block (in L1) for all its taps */
        for (int64_t i = 0; i < K; i++)
            for (int64_t j = 0; j < K; j++) {
                /* the output columns whose input column is inside the image: [o0, o1) */
                int64_t o0 = 0, o1 = p->OW;
                while (o0 < o1 && o0 * S - p->gat_pl + j < 0) o0++;
                while (o1 > o0 && (o1 - 1) * S - p->gat_pl + j >= p->W) o1--;
                float *ab = a + (size_t)(((i * K + j) * cb + k) * p->OH * p->OW * b);
                const float *xb = x + (size_t)(k * p->H * p->W * b);
                for (int64_t oh = 0; oh < p->OH; oh++) {
                    int64_t ih = oh * S - p->gat_pt + i;
                    float *ar = ab + (size_t)(oh * p->OW * b);
                    if (ih < 0 || ih >= p->H) {
                        memset(ar, 0, (size_t)(p->OW * b) * sizeof *ar);
                        continue;
                    }
                    memset(ar, 0, (size_t)(o0 * b) * sizeof *ar);
                    memset(ar + o1 * b, 0, (size_t)((p->OW - o1) * b) * sizeof *ar);
                    const float *xr = xb + (size_t)((ih * p->W + o0 * S - p->gat_pl + j) * b);
                    float *ao = ar + o0 * b;
                    if (b == 8)
                        for (int64_t ow = o0; ow < o1; ow++, ao += 8, xr += S * 8)
                            memcpy(ao, xr, 8 * sizeof *ao);
                    else
                        for (int64_t ow = o0; ow < o1; ow++, ao += b, xr += S * b)
                            memcpy(ao, xr, (size_t)b * sizeof *ao);
                }
            }
}

/* Checks that a run's input has the load-time image dims. */
static frt_status check_image(const frt_step *s, const dn_prim *p, const frt_value *X) {
    int64_t C, H, W;
    image_dims(X, &C, &H, &W);
    if (C != p->C || H != p->H || W != p->W)
        return frt_step_fail(s, FRT_ERR_SHAPE, "onednn: input image %lldx%lldx%lld differs from "
                             "the load-time %lldx%lldx%lld", (long long)C, (long long)H,
                             (long long)W, (long long)p->C, (long long)p->H, (long long)p->W);
    return FRT_OK;
}

/* Executes p once per image of X (batch N) with the extra arguments extra[0..n_extra); when
 * z_arg > 0, the value zin (same layout and size as the output) is passed per image under that
 * argument; when z_arg < 0, zin's image is copied into the output image before the call (a sum
 * post-op accumulates onto the destination's contents) * argument. */
typedef struct dn_extra {
    int arg;
    dnnl_memory_t mem;
} dn_extra;

static frt_status run_images(const frt_step *s, frt_exec *x, const dn_prim *p,
                             const dn_extra *extra, int n_extra, int z_arg,
                             const dnnl_memory_desc_t *z_md, const frt_value *zin) {
    const frt_value *X = &x->values[s->in[0]];
    frt_value *Y = &x->values[s->out[0]];
    frt_status st = check_image(s, p, X);
    if (st) return st;
    thread_state *t = this_thread();
    if (!t) return frt_step_fail(s, FRT_ERR_NO_MEMORY, "onednn: no stream");
    set_threads(p->nthr);
    dnnl_exec_arg_t args[8];
    int na = 0;
    for (int i = 0; i < n_extra; i++) args[na++] = (dnnl_exec_arg_t){extra[i].arg, extra[i].mem};
    dnnl_memory_t ms = NULL, md = NULL, msp = NULL, mz = NULL;
    dnnl_status_t ds;
    ms = thread_mem(t, &p->src_md, &ds);
    if (!ds) md = thread_mem(t, &p->dst_md, &ds);
    if (!ds && p->sp_bytes) msp = thread_mem(t, &p->sp_md, &ds);
    if (!ds && msp) ds = dnnl_memory_set_data_handle(msp, x->scratch);
    if (!ds && z_arg > 0) mz = thread_mem(t, z_md, &ds);
    args[na++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, ms};
    args[na++] = (dnnl_exec_arg_t){DNNL_ARG_DST, md};
    if (msp) args[na++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, msp};
    if (mz) args[na++] = (dnnl_exec_arg_t){z_arg, mz};
    for (int64_t n = 0; n < X->dims[0] && !ds; n++) {
        const char *xn = (const char *)X->data + (size_t)n * p->in_img;
        if (p->gat_b) {
            float *a = (float *)((char *)x->scratch + p->gat_off);
            gather_taps((const float *)xn, a, p);
            xn = (const char *)a;
        }
        ds = dnnl_memory_set_data_handle(ms, (void *)xn);
        if (!ds) ds = dnnl_memory_set_data_handle(md, (char *)Y->data + (size_t)n * p->out_img);
        if (!ds && mz) ds = dnnl_memory_set_data_handle(mz, (char *)zin->data + (size_t)n * p->out_img);
        if (z_arg < 0 && zin->data != Y->data)
            memcpy((char *)Y->data + (size_t)n * p->out_img,
                   (const char *)zin->data + (size_t)n * p->out_img, p->out_img);
        if (!ds) ds = dnnl_primitive_execute(p->prim, t->stream, na, args);
    }
    if (!ds) ds = dnnl_stream_wait(t->stream);
    if (ds)
        return frt_step_fail(s, ds == dnnl_out_of_memory ? FRT_ERR_NO_MEMORY : FRT_ERR_INTERNAL,
                             "onednn: execution failed (status %d)", (int)ds);
    return FRT_OK;
}

/* ---- Conv / FusedConv --------------------------------------------------------------------------- */

typedef struct dn_conv {
    dn_prim p;                  /* first: prim_scratch reads it */
    dnnl_memory_t wmem, bmem;   /* reordered weights and bias (model arena), read-only */
    dnnl_memory_desc_t z_md;    /* FusedConv: the sum input (the output's layout) */
    int has_z;                  /* 1: sum input as a binary post-op; -1: as a sum post-op */
    dn_split *split;            /* non-NULL: runs as channel parts on the pool (split.c) */
    frt_actp_fn silu;           /* non-NULL: SiLU applied by this loop after the primitive */
    dn_relay *relay;            /* non-NULL: runs on nChw8c between two reorders (relay.c) */
    int64_t mean_b;             /* ConvMean: the block size; output 1 the per-channel mean of the
                                   output, taken after the primitive (blkmean.h, mean_fn) */
    frt_blkmean_fn mean_fn;
} dn_conv;

static void conv_destroy(void *params) {
    dn_conv *p = params;
    if (p->p.prim) dnnl_primitive_destroy(p->p.prim);
    if (p->wmem) dnnl_memory_destroy(p->wmem);
    if (p->bmem) dnnl_memory_destroy(p->bmem);
    frt_dn_split_free(p->split);
    frt_dn_relay_free(p->relay);
}

static frt_status conv_run(const frt_step *s, frt_exec *x) {
    const dn_conv *p = s->k.params;
    frt_status st;
    if (p->split) {
        st = check_image(s, &p->p, &x->values[s->in[0]]);
        if (!st)
            st = frt_dn_split_run(s, x, p->split, &x->values[s->in[0]], &x->values[s->out[0]],
                                  p->has_z ? &x->values[s->in[3]] : NULL);
    } else if (p->relay) {
        st = check_image(s, &p->p, &x->values[s->in[0]]);
        if (!st)
            st = frt_dn_relay_run(s, x, p->relay, p->p.prim, p->wmem, p->bmem,
                                  &x->values[s->in[0]], &x->values[s->out[0]]);
    } else {
        dn_extra ex[2] = {{DNNL_ARG_WEIGHTS, p->wmem}, {DNNL_ARG_BIAS, p->bmem}};
        const frt_value *z = p->has_z ? &x->values[s->in[3]] : NULL;
        st = run_images(s, x, &p->p, ex, p->bmem ? 2 : 1,
                        p->has_z > 0 ? (DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1)
                                     : p->has_z,
                        &p->z_md, z);
    }
    if (!st && p->silu && !p->split) {
        /* padding lanes hold 0 and SiLU(0) = 0, so the whole blocked buffer is mapped */
        frt_value *Y = &x->values[s->out[0]];
        static const float prm[4];
        p->silu(FRT_ACTP_SILU, Y->data, Y->data, p->p.out_img / sizeof(float) * (size_t)Y->dims[0],
                prm);
    }
    if (!st && p->mean_b) {
        /* (the own depthwise and grouped loops take each block's mean right after computing it:
           dwconv.c, gconv.c; here a pass after the primitive, as the GlobalAveragePool was) */
        const frt_value *Y = &x->values[s->out[0]];
        float *m = x->values[s->out[1]].data;
        int64_t b = p->mean_b, cb = (p->p.OC + b - 1) / b, S = p->p.OH * p->p.OW;
        for (int64_t n = 0; n < Y->dims[0]; n++)
            for (int64_t k = 0; k < cb; k++)
                p->mean_fn((const float *)Y->data + (size_t)((n * cb + k) * S * b), S, b,
                            1.0f / (float)S, m + (n * cb + k) * b);
    }
    return st;
}

/* Spatial attributes shared by Conv and the pools; k* from kernel_shape (or W). Returns false with
 * a reason when an attribute is out of what the provider maps. */
typedef struct spatial {
    int64_t k[2], s[2], d[2], pb[2], pe[2];
    int auto_pad;               /* 0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID */
} spatial;

static const char *read_spatial(const frt_node *n, int nsp, const int64_t *kdefault,
                                spatial *sp) {
    for (int i = 0; i < 2; i++) {
        sp->k[i] = 1;
        sp->s[i] = sp->d[i] = 1;
        sp->pb[i] = sp->pe[i] = 0;
    }
    size_t cnt;
    const int64_t *v = frt_attr_ints(n, "kernel_shape", &cnt);
    if (v && cnt != (size_t)nsp) return "kernel_shape of the wrong length";
    for (int i = 0; i < nsp; i++) sp->k[2 - nsp + i] = v ? v[i] : kdefault ? kdefault[i] : 0;
    v = frt_attr_ints(n, "strides", &cnt);
    if (v && cnt != (size_t)nsp) return "strides of the wrong length";
    for (int i = 0; v && i < nsp; i++) sp->s[2 - nsp + i] = v[i];
    v = frt_attr_ints(n, "dilations", &cnt);
    if (v && cnt != (size_t)nsp) return "dilations of the wrong length";
    for (int i = 0; v && i < nsp; i++) sp->d[2 - nsp + i] = v[i];
    v = frt_attr_ints(n, "pads", &cnt);
    if (v && cnt != (size_t)(2 * nsp)) return "pads of the wrong length";
    for (int i = 0; v && i < nsp; i++) {
        sp->pb[2 - nsp + i] = v[i];
        sp->pe[2 - nsp + i] = v[nsp + i];
    }
    const char *ap = frt_attr_string(n, "auto_pad", "NOTSET");
    sp->auto_pad = !strcmp(ap, "NOTSET")       ? 0
                   : !strcmp(ap, "SAME_UPPER") ? 1
                   : !strcmp(ap, "SAME_LOWER") ? 2
                   : !strcmp(ap, "VALID")      ? 3
                                               : -1;
    if (sp->auto_pad < 0) return "unknown auto_pad";
    for (int i = 0; i < 2; i++)
        if (sp->k[i] < 1 || sp->s[i] < 1 || sp->d[i] < 1 || sp->pb[i] < 0 || sp->pe[i] < 0 ||
            sp->k[i] > 4096 || sp->s[i] > 4096 || sp->d[i] > 4096 || sp->pb[i] > 4096 ||
            sp->pe[i] > 4096)
            return "kernel, stride, dilation or pad out of the mapped range";
    return NULL;
}

/* oneDNN's left / right pads of axis i for input size in and output size out (the right pad
 * follows from the output size, so ceil-mode pooling and auto_pad come out right). */
static void pads_for(const spatial *sp, int i, int64_t in, int64_t out, int64_t *pl, int64_t *pr) {
    int64_t keff = (sp->k[i] - 1) * sp->d[i] + 1;
    int64_t l = sp->pb[i];
    if (sp->auto_pad == 1 || sp->auto_pad == 2) {
        int64_t total = (out - 1) * sp->s[i] + keff - in;
        if (total < 0) total = 0;
        l = sp->auto_pad == 1 ? total / 2 : total - total / 2;
    } else if (sp->auto_pad == 3) {
        l = 0;
    }
    *pl = l;
    /* a negative right pad (the last input columns unused) is given as 0: with floor division
       the output size is the same */
    int64_t r = (out - 1) * sp->s[i] + keff - in - l;
    *pr = r < 0 ? 0 : r;
}

static frt_status conv_select(const frt_op_def *def, frt_op_ctx *c, frt_kernel *k,
                              const frt_layout *L) {
    const frt_node *n = c->node;
    bool fused = strcmp(def->op_type, "FusedConv") == 0;
    const frt_value *X = c->in[0], *Wt = c->n_in > 1 ? c->in[1] : NULL;
    const frt_value *B = c->n_in > 2 ? c->in[2] : NULL, *Z = fused && c->n_in > 3 ? c->in[3] : NULL;
    const frt_value *Y = c->out[0];
    bool mean = strcmp(def->op_type, "ConvMean") == 0; /* output 1: the spatial mean */
    if (c->n_out != (mean ? 2 : 1) || !is_image(X) || !Y || !is_image(Y) ||
        (mean && X->rank != 4))
        return decline(c, "needs float32 [N, C, (H,) W] with dims known at load");
    if (!Wt || !Wt->data || Wt->dtype != FRT_FLOAT32 || Wt->rank != X->rank)
        return decline(c, "needs constant float32 weights");
    if (!fits_int32(Wt, 16) || Wt->dims[0] > DN_MAX_IMAGE / 16)
        return decline(c, "weights too large for oneDNN's 32-bit kernel sizes");
    if (B && (!B->data || B->dtype != FRT_FLOAT32 || B->rank != 1))
        return decline(c, "needs a constant float32 bias");
    if (fused && (!Z || !is_image(Z) || Z->layout != L))
        return decline(c, "the sum input is not in the blocked layout");
    /* the fused activation as eltwise post-ops (a2: a second one, for HardSigmoid) */
    int a = 0, a2 = 0;
    float alpha = 0, beta = 0, alpha2 = 0, beta2 = 0;
    switch (n->act.kind) {
    case FRT_ACT_NONE: break;
    case FRT_ACT_RELU: a = dnnl_eltwise_relu; break;
    case FRT_ACT_CLIP: a = dnnl_eltwise_clip; alpha = n->act.lo; beta = n->act.hi; break;
    case FRT_ACT_SILU: /* x sigmoid(1 x): oneDNN's swish post-op, or the own loop (see below) */
        a = dnnl_eltwise_swish, alpha = 1.0f;
        break;
    case FRT_ACT_HARDSWISH: a = dnnl_eltwise_hardswish; break;
    case FRT_ACT_SIGMOID: a = dnnl_eltwise_logistic; break;
    case FRT_ACT_HARDSIGMOID: /* clip(alpha x + beta, 0, 1) */
        a = dnnl_eltwise_linear, alpha = n->act.lo, beta = n->act.hi;
        a2 = dnnl_eltwise_clip, alpha2 = 0.0f, beta2 = 1.0f;
        break;
    default: return decline(c, "fused activation kind not mapped to a oneDNN post-op");
    }
    /* SiLU at one thread: the tier's own loop over the output after the primitive, in place of
       oneDNN 2.6's swish post-op, which costs about twice as much per element (1x1 16->96 at
       112x112: 198 us without a post-op, 566 with swish; docs/dependencies.md) */
    bool own_silu = n->act.kind == FRT_ACT_SILU && g_model_threads == 1 &&
                    !(getenv("FRT_DNNL_OWN_SILU") && !strcmp(getenv("FRT_DNNL_OWN_SILU"), "0"));
    if (own_silu) a = 0;
    int nsp = X->rank - 2;
    spatial sp;
    const char *why = read_spatial(n, nsp, Wt->dims + 2, &sp);
    if (why) return decline(c, why);
    int64_t group = frt_attr_int(n, "group", 1);
    int64_t C, H, W, OC, OH, OW;
    image_dims(X, &C, &H, &W);
    image_dims(Y, &OC, &OH, &OW);
    int64_t M = Wt->dims[0], Cg = Wt->dims[1];
    if (group < 1 || C % group || M % group || Cg * group != C || OC != M ||
        sp.k[0] != (nsp == 2 ? Wt->dims[2] : 1) || sp.k[1] != Wt->dims[Wt->rank - 1] ||
        (B && B->dims[0] != M))
        return decline(c, "inconsistent group, weights or bias shape");
    /* source layout: the producer's blocked data, or plain for a plain producer with few
       channels, else blocked (the layout pass reorders) */
    const frt_layout *Lin = X->layout == L || C >= L->block ? L : FRT_LAYOUT_PLAIN;

    dnnl_memory_desc_t src, wei, bia, dst;
    dnnl_dims_t sd = {1, C, H, W}, dd = {1, M, OH, OW}, bd = {M};
    dnnl_status_t ds = dnnl_memory_desc_init_by_tag(&src, 4, sd, dnnl_f32, tag_of(Lin));
    if (!ds) ds = dnnl_memory_desc_init_by_tag(&dst, 4, dd, dnnl_f32, tag_of(L));
    if (!ds) ds = dnnl_memory_desc_init_by_tag(&bia, 1, bd, dnnl_f32, dnnl_x);
    dnnl_dims_t wd = {group, M / group, Cg, sp.k[0], sp.k[1]}, wd4 = {M, Cg, sp.k[0], sp.k[1]};
    if (!ds) {
        if (group > 1) ds = dnnl_memory_desc_init_by_tag(&wei, 5, wd, dnnl_f32, dnnl_format_tag_any);
        else ds = dnnl_memory_desc_init_by_tag(&wei, 4, wd4, dnnl_f32, dnnl_format_tag_any);
    }
    dnnl_dims_t strides = {sp.s[0], sp.s[1]}, dil = {sp.d[0] - 1, sp.d[1] - 1}, pl, pr;
    pads_for(&sp, 0, H, OH, &pl[0], &pr[0]);
    pads_for(&sp, 1, W, OW, &pl[1], &pr[1]);
    /* depthwise 3x3 / 5x5: the own blocked loop (dwconv.c) where it covers it (at N threads on
       the AVX2 tier only, split over channel blocks) */
    if (!fused && Lin == L && group == C && group > 1 && nsp == 2) {
        frt_dn_dw_geom geo = {{sp.k[0], sp.k[1]}, {sp.s[0], sp.s[1]}, {sp.d[0], sp.d[1]},
                              {pl[0], pl[1]}};
        frt_status st = frt_dn_dw_select(c, k, L, &geo, g_model_threads);
        if (st != FRT_DECLINE) return st;
    }
    /* grouped 3x3 with groups of 8, 16, 24 ... channels (AVX2 tier): the own blocked loop,
       split over output channel blocks at N threads (gconv.c) */
    if (!fused && Lin == L && group > 1 && group < C && nsp == 2) {
        frt_dn_dw_geom geo = {{sp.k[0], sp.k[1]}, {sp.s[0], sp.s[1]}, {sp.d[0], sp.d[1]},
                              {pl[0], pl[1]}};
        frt_status st = frt_dn_gc_select(c, k, L, &geo, g_model_threads);
        if (st != FRT_DECLINE) return st;
    }
    /* the first layer (1 .. 4 plain input channels, 3x3 / 5x5 / 7x7, stride 1 or 2, AVX2 tier):
       the own stem loop, split over output rows at N threads (stemconv.c) */
    if (!fused && Lin == FRT_LAYOUT_PLAIN && group == 1 && nsp == 2) {
        frt_dn_dw_geom geo = {{sp.k[0], sp.k[1]}, {sp.s[0], sp.s[1]}, {sp.d[0], sp.d[1]},
                              {pl[0], pl[1]}};
        frt_status st = frt_dn_stem_select(c, k, L, &geo, g_model_threads);
        if (st != FRT_DECLINE) return st;
    }
    /* a 1x1 convolution of a 1x1 image (squeeze-and-excitation): the own GEMV (gemvconv.c) */
    if (!fused && !mean && Lin == L && group == 1 && nsp == 2 && H == 1 && W == 1 && pl[0] == 0 &&
        pl[1] == 0) {
        frt_status st = frt_dn_gemvconv_select(c, k, L);
        if (st != FRT_DECLINE) return st;
    }
    /* 1x1, stride 1, unpadded, ungrouped, few output channel blocks or (1 thread) a small image
       (AVX2 tier): the own pointwise loop, split over pixels at N threads (pwconv.c) */
    if (!ds && !mean && Lin == L && group == 1 && nsp == 2 && sp.k[0] == 1 && sp.k[1] == 1 &&
        sp.s[0] == 1 && sp.s[1] == 1 && pl[0] == 0 && pl[1] == 0 && pr[0] == 0 && pr[1] == 0) {
        frt_status st = frt_dn_pw_select(c, k, L, g_model_threads);
        if (st != FRT_DECLINE) return st;
    }
    /* 3x3, stride 1 or 2, undilated, ungrouped: the own Winograd F(4x4, 3x3) / F(2x2, 3x3) / its
       stride-2 form where it beats oneDNN's direct kernel (winoconv.c; oneDNN 2.6 has Winograd
       on AVX-512 only) */
    if (!ds && !mean && Lin == L && group == 1 && nsp == 2 && sp.k[0] == 3 && sp.k[1] == 3 &&
        sp.s[0] == sp.s[1] && (sp.s[0] == 1 || sp.s[0] == 2) && sp.d[0] == 1 && sp.d[1] == 1) {
        frt_status st = frt_dn_wino_select(c, k, L, pl[0], pl[1], sp.s[0], g_model_threads);
        if (st != FRT_DECLINE) return st;
    }
    /* other kernels (1 x r, r x 1, 5x5, ...), stride 1, undilated, ungrouped: the own
       one-dimensional Winograd F(m, r) where it beats oneDNN's direct kernel (winoconv.c) */
    if (!ds && !mean && Lin == L && group == 1 && nsp == 2 && !(sp.k[0] == 1 && sp.k[1] == 1) &&
        !(sp.k[0] == 3 && sp.k[1] == 3) && sp.s[0] == 1 && sp.s[1] == 1 && sp.d[0] == 1 &&
        sp.d[1] == 1) {
        int64_t pb[2] = {pl[0], pl[1]}, pe[2] = {pr[0], pr[1]};
        frt_status st = frt_dn_wino1_select(c, k, L, pb, pe, g_model_threads);
        if (st != FRT_DECLINE) return st;
    }
    /* 3x3, stride 2, ungrouped, at one thread, of at most 64 output pixels on the AVX2 tier
       (resnet50's layer4.0 conv2, 512 -> 512, 14x14 -> 7x7, which the own Winograd declines) and
       at most 196 (14x14) on the AVX-512 tier: as a 1x1 convolution over the K K C channels of
       the input's taps, which the run gathers into the step's scratch (docs/architecture.md);
       FRT_DNNL_GATHER=0 never, 1 every such shape */
    const char *gte = getenv("FRT_DNNL_GATHER");
    bool gat = !ds && Lin == L && group == 1 && nsp == 2 && sp.k[0] == sp.k[1] && sp.k[0] > 1 &&
               sp.s[0] == sp.s[1] && sp.d[0] == 1 && sp.d[1] == 1 && C % L->block == 0 &&
               g_model_threads == 1 && !(gte && !strcmp(gte, "0")) &&
               ((gte && !strcmp(gte, "1")) ||
                (sp.k[0] == 3 && sp.s[0] == 2 && OH * OW <= (c->isa == FRT_ISA_AVX2 ? 64 : 196)));
    int64_t gat_pt = pl[0], gat_pl = pl[1];
    if (gat) {
        int64_t KK = sp.k[0] * sp.k[1];
        dnnl_dims_t sdg = {1, KK * C, OH, OW};
        wd4[1] = KK * C, wd4[2] = wd4[3] = 1;
        ds = dnnl_memory_desc_init_by_tag(&src, 4, sdg, dnnl_f32, tag_of(Lin));
        if (!ds) ds = dnnl_memory_desc_init_by_tag(&wei, 4, wd4, dnnl_f32, dnnl_format_tag_any);
        strides[0] = strides[1] = 1;
        pl[0] = pl[1] = pr[0] = pr[1] = 0;
    }
    dnnl_convolution_desc_t cd;
    if (!ds)
        ds = dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                        dnnl_convolution_direct, &src, &wei,
                                                        B ? &bia : NULL, &dst, strides, dil, pl, pr);
    if (ds) return decline(c, "oneDNN rejects the convolution's geometry");
    dnnl_primitive_attr_t attr = user_scratch_attr();
    dnnl_post_ops_t po = NULL;
    if (!attr || dnnl_post_ops_create(&po) != dnnl_success) {
        if (attr) dnnl_primitive_attr_destroy(attr);
        return frt_op_fail(c, FRT_ERR_NO_MEMORY, "onednn: out of memory");
    }
    ds = dnnl_success;
    /* The residual input Z: a direct convolution reads it as a binary add post-op; Winograd
       (below) as a sum post-op, which adds the output's old contents: Z's, copied in first, or
       Z's own memory when the planner runs the step in place over input 3 (it may whenever Z
       dies here). A sum post-op in place was slower for the direct 1x1 kernels inside resnet50
       (bench/layer_ab.sh, Zen 5, median of 5: layer1 conv3 556-590 us binary, 589-631 sum in
       place, 16 layers 2.6% slower in all). FRT_DNNL_SUM_Z=1 (an A/B aid): direct ones take the
       sum post-op too. */
    const char *sze = getenv("FRT_DNNL_SUM_Z");
    bool sum_direct = fused && sze && !strcmp(sze, "1");
    if (sum_direct) ds = dnnl_post_ops_append_sum(po, 1.0f);
    else if (fused) ds = dnnl_post_ops_append_binary(po, dnnl_binary_add, &dst);
    if (!ds && a) ds = dnnl_post_ops_append_eltwise(po, 1.0f, (dnnl_alg_kind_t)a, alpha, beta);
    if (!ds && a2) ds = dnnl_post_ops_append_eltwise(po, 1.0f, (dnnl_alg_kind_t)a2, alpha2, beta2);
    if (!ds) ds = dnnl_primitive_attr_set_post_ops(attr, po);
    dnnl_primitive_desc_t pd = NULL;
    /* 3x3, stride 1, undilated, ungrouped: oneDNN's Winograd convolutions (F(2,3) / F(4,3) on
       AVX-512) where it has one for these shapes and post-ops; measured 1.4-1.7x the direct
       kernels' speed on resnet50's 3x3 layers (docs/dependencies.md). FRT_DNNL_WINO=0: direct only */
    const char *wino_env = getenv("FRT_DNNL_WINO");
    bool wino = !ds && group == 1 && nsp == 2 && sp.k[0] == 3 && sp.k[1] == 3 && sp.s[0] == 1 &&
                sp.s[1] == 1 && sp.d[0] == 1 && sp.d[1] == 1 && Lin == L && !gat &&
                !(wino_env && !strcmp(wino_env, "0"));
    bool sum_z = false;
    if (wino) {
        /* the residual input as a sum post-op (the Winograd kernels take no binary post-ops):
           Z copied into the output first, or the output is Z's memory (in place: resnet18's
           residual 3x3 convolutions 6806 -> 6454 us in all, 1 thread, bench/layer_ab.sh) */
        dnnl_primitive_attr_t wattr = attr;
        dnnl_post_ops_t wpo = NULL;
        if (fused) {
            wattr = user_scratch_attr();
            dnnl_status_t ws = wattr ? dnnl_post_ops_create(&wpo) : dnnl_out_of_memory;
            if (!ws) ws = dnnl_post_ops_append_sum(wpo, 1.0f);
            if (!ws && a) ws = dnnl_post_ops_append_eltwise(wpo, 1.0f, (dnnl_alg_kind_t)a, alpha, beta);
            if (!ws && a2) ws = dnnl_post_ops_append_eltwise(wpo, 1.0f, (dnnl_alg_kind_t)a2, alpha2, beta2);
            if (!ws) ws = dnnl_primitive_attr_set_post_ops(wattr, wpo);
            if (ws) wino = false;
        }
        dnnl_convolution_desc_t wd_;
        if (!wino ||
            dnnl_dilated_convolution_forward_desc_init(&wd_, dnnl_forward_inference,
                                                       dnnl_convolution_winograd, &src, &wei,
                                                       B ? &bia : NULL, &dst, strides, dil, pl,
                                                       pr) != dnnl_success ||
            frt_dn_pd_prefer(&pd, &wd_, wattr, g_engine, frt_dn_wino_pref(C, M, H, W)) !=
                dnnl_success)
            pd = NULL;
        sum_z = fused && pd; /* Winograd: always a sum post-op */
        if (wpo) dnnl_post_ops_destroy(wpo);
        if (wattr && wattr != attr) dnnl_primitive_attr_destroy(wattr);
    }
    if (!ds && !pd) ds = dnnl_primitive_desc_create(&pd, &cd, attr, g_engine, NULL);
    sum_z = sum_z || sum_direct;
    /* a grouped convolution that oneDNN runs only with its reference kernel on the blocked
       layout (groups not whole blocks): on nChw8c or else NHWC between two reorders inside the
       step, where oneDNN has a JIT kernel for that (relay.c); FRT_DNNL_RELAY=0 never */
    dnnl_memory_desc_t relay_x = src, relay_y = dst;
    bool relay = false;
    const char *relay_env = getenv("FRT_DNNL_RELAY");
    if (!ds && group > 1 && !fused && Lin == L && frt_dn_is_ref(pd) &&
        !(relay_env && !strcmp(relay_env, "0"))) {
        const dnnl_format_tag_t alt[2] = {dnnl_nChw8c, dnnl_nhwc};
        for (int i = 0; i < 2 && !relay; i++) {
            if (alt[i] == tag_of(L)) continue;
            dnnl_memory_desc_t sa, da;
            dnnl_convolution_desc_t cda;
            dnnl_primitive_desc_t pda = NULL;
            if (dnnl_memory_desc_init_by_tag(&sa, 4, sd, dnnl_f32, alt[i]) != dnnl_success ||
                dnnl_memory_desc_init_by_tag(&da, 4, dd, dnnl_f32, alt[i]) != dnnl_success ||
                dnnl_dilated_convolution_forward_desc_init(&cda, dnnl_forward_inference,
                                                           dnnl_convolution_direct, &sa, &wei,
                                                           B ? &bia : NULL, &da, strides, dil,
                                                           pl, pr) != dnnl_success ||
                dnnl_primitive_desc_create(&pda, &cda, attr, g_engine, NULL) != dnnl_success)
                continue;
            if (frt_dn_is_ref(pda)) {
                dnnl_primitive_desc_destroy(pda);
                continue;
            }
            dnnl_primitive_desc_destroy(pd);
            pd = pda;
            relay = true;
        }
    }
    dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    if (ds) return decline(c, "oneDNN has no convolution for these post-ops");
    /* still oneDNN's reference kernel (a scalar loop, 20-100x slower than the builtin im2col +
       GEMM convolution; on AVX2, ungrouped dilated 3x3s whose pad exceeds what its JIT kernel
       takes, e.g. fcn_resnet50's dilation-4 layers, 80 s a run, and deeplabv3's ASPP): leave the
       node to the builtin kernel. Relaying those to NHWC / nChw8c (JIT) was measured slower than
       the builtin kernel: 46 vs 25 ms per ASPP 960->256 conv at 14x14, 137 vs 124 ms per
       fcn_resnet50 layer4 conv2 (docs/zoo.md) */
    if (!relay && frt_dn_is_ref(pd)) {
        dnnl_primitive_desc_destroy(pd);
        return decline(c, "oneDNN has only its reference kernel for this convolution");
    }

    dn_conv *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) {
        dnnl_primitive_desc_destroy(pd);
        return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for kernel parameters");
    }
    memset(p, 0, sizeof *p);
    const dnnl_memory_desc_t wmd = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    /* a model of several threads runs big convolutions as channel parts (split.c) */
    frt_status sst = relay ? frt_dn_relay_make(c, &relay_x, &relay_y, pd, &g_env, &p->relay)
                           : frt_dn_split_conv(c, pd, g_model_threads, Wt, B, &g_env, &p->split);
    if (sst) {
        dnnl_primitive_desc_destroy(pd);
        return sst;
    }
    ds = make_prim(&p->p, pd);
    if (ds) {
        frt_dn_split_free(p->split);
        frt_dn_relay_free(p->relay);
        return dnnl_fail(c, "creating the convolution", ds);
    }
    p->p.C = C, p->p.H = H, p->p.W = W, p->p.OC = M, p->p.OH = OH, p->p.OW = OW;
    p->p.in_img = image_bytes(X, Lin);
    p->p.out_img = image_bytes(Y, L);
    if (gat) {
        p->p.gat_b = L->block, p->p.gat_k = sp.k[0], p->p.gat_s = sp.s[0];
        p->p.gat_pt = gat_pt, p->p.gat_pl = gat_pl;
        p->p.gat_off = (p->p.sp_bytes + 63) / 64 * 64;
        p->p.gat_bytes = (size_t)(sp.k[0] * sp.k[1] * C * OH * OW) * sizeof(float);
    }
    p->z_md = dst;
    p->has_z = sum_z ? -1 : fused;
    if (own_silu) p->silu = frt_actp_variant_get(c->isa)->pointwise;
    /* weights: plain [G, Mg, Cg, kh, kw] -> the primitive's layout, once (the parts hold
       their own slices) */
    k->params = p;
    k->destroy = conv_destroy;
    if (p->relay) p->p.sp_bytes = frt_dn_relay_scratch(p->relay);
    if (p->split) {
        p->p.sp_bytes = frt_dn_split_scratch(p->split);
        k->const_copied = 1u << 1;
        goto layouts;
    }
    size_t wbytes = dnnl_memory_desc_get_size(&wmd);
    void *wbuf = frt_arena_alloc(c->arena, wbytes, 64);
    if (!wbuf) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for weights");
    dnnl_memory_desc_t wplain;
    if (group > 1) ds = dnnl_memory_desc_init_by_tag(&wplain, 5, wd, dnnl_f32, dnnl_goihw);
    else ds = dnnl_memory_desc_init_by_tag(&wplain, 4, wd4, dnnl_f32, dnnl_oihw);
    dnnl_memory_t mu = NULL;
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t rp = NULL;
    dnnl_stream_t stream = thread_stream();
    if (!stream) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "onednn: no stream");
    /* gathered taps: weights [M][C][K][K] -> [M][K K][C] (the gathered channel order), a
       temporary copy freed after the reorder */
    float *wgat = NULL;
    if (!ds && gat) {
        int64_t KK = sp.k[0] * sp.k[1];
        wgat = malloc((size_t)(M * KK * C) * sizeof *wgat);
        if (!wgat) ds = dnnl_out_of_memory;
        const float *wt = Wt->data;
        for (int64_t m = 0; wgat && m < M; m++)
            for (int64_t ci = 0; ci < C; ci++)
                for (int64_t t = 0; t < KK; t++)
                    wgat[(m * KK + t) * C + ci] = wt[(m * C + ci) * KK + t];
    }
    if (!ds) ds = dnnl_memory_create(&mu, &wplain, g_engine, wgat ? wgat : (void *)Wt->data);
    if (!ds) ds = dnnl_memory_create(&p->wmem, &wmd, g_engine, wbuf);
    if (!ds) ds = dnnl_reorder_primitive_desc_create(&rpd, &wplain, g_engine, &wmd, g_engine, NULL);
    if (!ds) ds = dnnl_primitive_create(&rp, rpd);
    if (!ds) {
        dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, mu}, {DNNL_ARG_TO, p->wmem}};
        ds = dnnl_primitive_execute(rp, stream, 2, ra);
        if (!ds) ds = dnnl_stream_wait(stream);
    }
    if (rp) dnnl_primitive_destroy(rp);
    if (rpd) dnnl_primitive_desc_destroy(rpd);
    if (mu) dnnl_memory_destroy(mu);
    free(wgat);
    if (ds) return dnnl_fail(c, "reordering the weights", ds);
    k->const_copied = 1u << 1;
    if (B) {
        float *b = frt_arena_alloc(c->arena, (size_t)M * sizeof *b, 64);
        if (!b) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for the bias");
        memcpy(b, B->data, (size_t)M * sizeof *b);
        ds = dnnl_memory_create(&p->bmem, &bia, g_engine, b);
        if (ds) return dnnl_fail(c, "wrapping the bias", ds);
    }
layouts:;
    const frt_layout **in = layouts(c->arena, c->n_in), **out = layouts(c->arena, c->n_out);
    if (!in || !out) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    in[0] = Lin;
    if (fused) in[3] = L;
    out[0] = L;
    if (mean) out[1] = L, p->mean_b = L->block, p->mean_fn = frt_blkmean_get(c->isa);
    k->in_layouts = in;
    k->out_layouts = out;
    k->name = group == C && group > 1 ? "conv_dw" : "conv";
    if (p->split)
        k->name = frt_dn_split_by_rows(p->split) ? (group > 1 ? "conv_dw_rows" : "conv_rows")
                                                 : (group > 1 ? "conv_dw_split" : "conv_split");
    if (p->relay) k->name = "conv_relay";
    if (gat) k->name = "conv_taps";
    k->fn = conv_run;
    k->scratch = prim_scratch;
    if (sum_z) {
        k->flags |= FRT_K_INPLACE;
        k->inplace_in = 3;
    }
    return FRT_OK;
}

/* ---- pooling ----------------------------------------------------------------------------------- */

typedef struct dn_pool {
    dn_prim p;
} dn_pool;

static void pool_destroy(void *params) {
    dn_pool *p = params;
    if (p->p.prim) dnnl_primitive_destroy(p->p.prim);
}

static frt_status pool_run(const frt_step *s, frt_exec *x) {
    const dn_pool *p = s->k.params;
    return run_images(s, x, &p->p, NULL, 0, 0, NULL, NULL);
}

/* The own pooling loops on the blocked layout (blocked.h) in place of oneDNN's: on the AVX2 tier,
 * where oneDNN 2.6.3's jit:avx2 pooling on nChw8c is slow (Zen 3: MaxPool 3x3/2 of 64 channels
 * 111x111 took 0.83 ms), every pool; on the AVX-512 tier (16-lane loops on nChw16c) every max and
 * global pool and the average pools of more than 64 output pixels (Zen 5, bench/layer_ab.sh,
 * median us/run, oneDNN -> own: resnet50's stem MaxPool 153 -> 121, squeezenet1_1's 114 -> 86 and
 * 80 -> 53, inception_v3's 3x3 average pools at 35x35 91..110 -> 69..98 and 17x17 86..96 ->
 * 63..74, densenet121's 2x2 ones at 28x28 140 -> 107 and 14x14 70 -> 70; oneDNN's stay for the
 * small average pools: inception_v3's at 8x8 33 / 53 vs 40 / 59, densenet121's at 7x7 40 vs 52).
 * The environment variable FRT_DNNL_OWN_POOL=0 / 1 (A/B aid) turns them off / on for every pool
 * of every tier. They run on the
 * calling thread, except that a big pool of a model of several intra-op threads runs as ranges
 * of channel blocks on the runtime's pool (the cost model decides how many; FRT_DNNL_POOL_SPLIT=0
 * never splits). */
typedef struct dn_opool {
    frt_blk_pool_geom g;
    frt_blk_pool_fn fn;
    int64_t b, cb;
    size_t in_img, out_img;     /* floats of one image */
    double blk_ns;              /* the cost model's estimate for one channel block */
} dn_opool;

typedef struct opool_job {
    const dn_opool *p;
    const float *x;
    float *y;
} opool_job;

/* Split steps over channel blocks number their items image * cb + block. blk_run gives the run of
 * items starting at lo (< hi) that lies in one image: image *n, blocks [*k0, *k1); the next run
 * starts at *n * cb + *k1. */
static void blk_run(int64_t lo, int64_t hi, int64_t cb, int64_t *n, int64_t *k0, int64_t *k1) {
    *n = lo / cb;
    *k0 = lo % cb;
    *k1 = *n * cb + cb > hi ? hi - *n * cb : cb;
}

static void opool_task(void *ctx, int64_t lo, int64_t hi) {
    const opool_job *j = ctx;
    const dn_opool *p = j->p;
    while (lo < hi) {
        int64_t n, k0, k1;
        blk_run(lo, hi, p->cb, &n, &k0, &k1);
        p->fn(&p->g, j->x + (size_t)n * p->in_img, j->y + (size_t)n * p->out_img, k0, k1, p->b);
        lo = n * p->cb + k1;
    }
}

static frt_status opool_run(const frt_step *s, frt_exec *x) {
    const dn_opool *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    frt_value *Y = &x->values[s->out[0]];
    int64_t C, H, W;
    image_dims(X, &C, &H, &W);
    if (C != p->g.C || H != p->g.H || W != p->g.W)
        return frt_step_fail(s, FRT_ERR_SHAPE, "onednn: input image %lldx%lldx%lld differs from "
                             "the load-time %lldx%lldx%lld", (long long)C, (long long)H,
                             (long long)W, (long long)p->g.C, (long long)p->g.H, (long long)p->g.W);
    opool_job j = {p, X->data, Y->data};
    frt_parallel_ranges(x->tp, X->dims[0] * p->cb, p->blk_ns, opool_task, &j);
    return FRT_OK;
}

/* The pool loops for block b: the tier's own block (nChw16c on AVX-512, nChw8c on AVX2), else the
 * AVX2 loops for any multiple of 8, else the portable ones. */
static const frt_blk_variant *own_pool_loops(frt_isa isa, int64_t b) {
    const frt_blk_variant *v = frt_blk_variant_get(isa, b);
    if (v->block == b || isa < FRT_ISA_AVX2 || b % 8) return v;
    return frt_blk_variant_get(FRT_ISA_AVX2, 8);
}

/* The row of the own loops' kernel-name tables for block b: 0 portable, 1 AVX2, 2 AVX-512 */
static int own_pool_tier(frt_isa isa, int64_t b) {
    const char *sfx = own_pool_loops(isa, b)->pool_suffix;
    return !strcmp(sfx, "_avx512") ? 2 : !strcmp(sfx, "_avx2") ? 1 : 0;
}

/* small_avg: an average pool of at most 64 output pixels (not global) */
static bool own_pool_wanted(frt_isa isa, bool small_avg) {
    const char *e = getenv("FRT_DNNL_OWN_POOL");
    if (e && *e) return strcmp(e, "0") != 0;
    return isa == FRT_ISA_AVX2 || (isa == FRT_ISA_AVX512 && !small_avg);
}

/* Lout: the output's layout, L or plain (a global pool whose channels are whole blocks: the
 * blocked [N, C/b, 1, 1, b] output holds the plain [N, C] bytes) */
static frt_status own_pool_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L,
                                  const frt_layout *Lout, const frt_blk_pool_geom *g,
                                  const char *name, const char *split_name) {
    dn_opool *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    const frt_layout **in = layouts(c->arena, c->n_in), **out = layouts(c->arena, 1);
    if (!p || !in || !out) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->g = *g;
    p->b = L->block;
    p->cb = (g->C + p->b - 1) / p->b;
    p->fn = own_pool_loops(c->isa, p->b)->pool;
    p->in_img = (size_t)(p->cb * g->H * g->W * p->b);
    p->out_img = (size_t)(p->cb * g->OH * g->OW * p->b);
    /* bytes of one block read and written, and a vector op per window position */
    p->blk_ns = (double)(g->H * g->W + g->OH * g->OW) * (double)(p->b * 4) * FRT_PAR_NS_PER_BYTE +
                (double)(g->OH * g->OW * g->kh * g->kw) * (double)(p->b / 8) * 0.15;
    /* Split as the cost model says; FRT_DNNL_POOL_SPLIT=0 (an A/B aid) keeps every pool on the
       calling thread. resnet50's stem MaxPool (64 channels, 112x112 -> 56x56) at 2 threads under
       `chrt -f 1` (Zen 3, 3 interleaved rounds, per-node profile): 156-207 us on the calling
       thread, 101-117 us split. (Session 10 had measured the split slower without chrt at load
       average 6.5, where every split step suffers from the worker not running.) */
    const char *e = getenv("FRT_DNNL_POOL_SPLIT");
    if (e && !strcmp(e, "0")) p->blk_ns = 0;
    /* profiles name a pool that one image splits "..._split" (split_name) */
    if (p->blk_ns > 0 && p->cb > 1 &&
        frt_par_split(g_model_threads, (double)p->cb * p->blk_ns) > 1)
        name = split_name;
    in[0] = L;
    out[0] = Lout;
    k->params = p;
    k->in_layouts = in;
    k->out_layouts = out;
    k->name = name;
    k->fn = opool_run;
    return FRT_OK;
}

static frt_status pool_select(const frt_op_def *def, frt_op_ctx *c, frt_kernel *k,
                              const frt_layout *L) {
    const frt_node *n = c->node;
    const frt_value *X = c->in[0], *Y = c->out[0];
    if (c->n_out != 1 || !is_image(X) || !Y || !is_image(Y))
        return decline(c, "needs float32 [N, C, (H,) W] with dims known at load, one output");
    if (X->layout != L) return decline(c, "input not in the blocked layout");
    int nsp = X->rank - 2;
    bool global = strncmp(def->op_type, "Global", 6) == 0;
    bool maxp = strcmp(def->op_type, "MaxPool") == 0 || strcmp(def->op_type, "GlobalMaxPool") == 0;
    int64_t C, H, W, OC, OH, OW;
    image_dims(X, &C, &H, &W);
    image_dims(Y, &OC, &OH, &OW);
    spatial sp;
    dnnl_alg_kind_t alg;
    if (global) {
        int64_t kd[2] = {H, W};
        const char *why = read_spatial(n, 2, kd, &sp);
        if (why) return decline(c, why);
        alg = maxp ? dnnl_pooling_max : dnnl_pooling_avg_include_padding;
    } else {
        const char *why = read_spatial(n, nsp, NULL, &sp);
        if (why) return decline(c, why);
        if (frt_attr_int(n, "storage_order", 0) != 0) return decline(c, "storage_order");
        alg = maxp ? dnnl_pooling_max
              : frt_attr_int(n, "count_include_pad", 0) ? dnnl_pooling_avg_include_padding
                                                        : dnnl_pooling_avg_exclude_padding;
    }
    dnnl_dims_t strides = {sp.s[0], sp.s[1]}, kern = {sp.k[0], sp.k[1]};
    dnnl_dims_t dil = {sp.d[0] - 1, sp.d[1] - 1}, pl, pr;
    pads_for(&sp, 0, H, OH, &pl[0], &pr[0]);
    pads_for(&sp, 1, W, OW, &pl[1], &pr[1]);
    bool own = own_pool_wanted(c->isa, !maxp && !global && OH * OW <= 64);
    for (int i = 0; i < 2; i++) {
        /* counting the pads: ONNX counts the explicit ones only, oneDNN every pad it is given */
        if (!own && alg == dnnl_pooling_avg_include_padding && !global && pr[i] != sp.pe[i] &&
            sp.auto_pad == 0)
            return decline(c, "count_include_pad with ceil_mode");
        if (pl[i] >= kern[i] || pr[i] >= kern[i]) return decline(c, "pads as large as the kernel");
    }
    const char *name = global ? (maxp ? "global_maxpool" : "global_avgpool")
                       : maxp ? "maxpool" : "avgpool";
    if (own) {
        /* the own loops' kernel names: the op's, then "_blk", the loops' tier and "_split"
           when the cost model splits one image at the model's thread count */
        static const char *const own_names[2][3][4] = {
            {{"maxpool_blk", "avgpool_blk", "global_maxpool_blk", "global_avgpool_blk"},
             {"maxpool_blk_avx2", "avgpool_blk_avx2", "global_maxpool_blk_avx2",
              "global_avgpool_blk_avx2"},
             {"maxpool_blk_avx512", "avgpool_blk_avx512", "global_maxpool_blk_avx512",
              "global_avgpool_blk_avx512"}},
            {{"maxpool_blk_split", "avgpool_blk_split", "global_maxpool_blk_split",
              "global_avgpool_blk_split"},
             {"maxpool_blk_avx2_split", "avgpool_blk_avx2_split", "global_maxpool_blk_avx2_split",
              "global_avgpool_blk_avx2_split"},
             {"maxpool_blk_avx512_split", "avgpool_blk_avx512_split",
              "global_maxpool_blk_avx512_split", "global_avgpool_blk_avx512_split"}}};
        int tier = own_pool_tier(c->isa, L->block);
        name = own_names[0][tier][2 * global + !maxp];
        /* counting the pads: the explicit ones (NOTSET), the computed ones (SAME_*) */
        bool inc = alg == dnnl_pooling_avg_include_padding && !global;
        int64_t eh = sp.auto_pad ? pr[0] : sp.pe[0], ew = sp.auto_pad ? pr[1] : sp.pe[1];
        frt_blk_pool_geom g = {C, H, W, OH, OW, sp.k[0], sp.k[1], sp.s[0], sp.s[1], sp.d[0],
                               sp.d[1], pl[0], pl[1], inc ? -pl[0] : 0, inc ? H + eh : H,
                               inc ? -pl[1] : 0, inc ? W + ew : W, maxp};
        return own_pool_select(c, k, L, L, &g, name, own_names[1][tier][2 * global + !maxp]);
    }
    dnnl_memory_desc_t src, dst;
    dnnl_dims_t sd = {1, C, H, W}, dd = {1, OC, OH, OW};
    dnnl_status_t ds = dnnl_memory_desc_init_by_tag(&src, 4, sd, dnnl_f32, tag_of(L));
    if (!ds) ds = dnnl_memory_desc_init_by_tag(&dst, 4, dd, dnnl_f32, tag_of(L));
    dnnl_pooling_v2_desc_t pdsc;
    if (!ds)
        ds = dnnl_pooling_v2_forward_desc_init(&pdsc, dnnl_forward_inference, alg, &src, &dst,
                                               strides, kern, dil, pl, pr);
    if (ds) return decline(c, "oneDNN rejects the pooling geometry");
    dnnl_primitive_attr_t attr = user_scratch_attr();
    if (!attr) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "onednn: out of memory");
    dnnl_primitive_desc_t pd = NULL;
    ds = dnnl_primitive_desc_create(&pd, &pdsc, attr, g_engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    if (ds) return decline(c, "oneDNN has no pooling for this geometry");
    dn_pool *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) {
        dnnl_primitive_desc_destroy(pd);
        return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for kernel parameters");
    }
    memset(p, 0, sizeof *p);
    ds = make_prim(&p->p, pd);
    if (ds) return dnnl_fail(c, "creating the pooling", ds);
    k->params = p;
    k->destroy = pool_destroy;
    p->p.C = C, p->p.H = H, p->p.W = W, p->p.OC = OC, p->p.OH = OH, p->p.OW = OW;
    p->p.in_img = image_bytes(X, L);
    p->p.out_img = image_bytes(Y, L);
    const frt_layout **in = layouts(c->arena, c->n_in), **out = layouts(c->arena, 1);
    if (!in || !out) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    in[0] = out[0] = L;
    k->in_layouts = in;
    k->out_layouts = out;
    k->name = name;
    k->fn = pool_run;
    k->scratch = prim_scratch;
    return FRT_OK;
}

/* ReduceMean over every spatial axis of a blocked image whose channels are whole blocks (torch's
 * x.mean([2, 3]) in front of a classifier, ShuffleNetV2's): the own global average pool, whose
 * blocked [N, C/b, 1, 1, b] result is the plain [N, C] (keepdims 0) or [N, C, 1, 1] output, so
 * the image needs no reorder to plain first. Where the own pools run (own_pool_wanted: the AVX2
 * and AVX-512 tiers); elsewhere the builtin ReduceMean after a reorder. */
static frt_status reduce_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L) {
    const frt_value *X = c->in[0], *Y = c->out[0];
    if (c->n_out != 1 || !is_image(X) || !Y || !frt_shape_known(Y) || X->layout != L)
        return decline(c, "not a blocked float32 image with dims known at load");
    if (!own_pool_wanted(c->isa, false)) return decline(c, "the own pooling loops are off");
    if (X->dims[1] % L->block) return decline(c, "channels not a multiple of the block");
    int r = X->rank;
    const int64_t *ax = NULL;
    size_t na = 0;
    if (c->opset >= 18) {
        const frt_value *a = c->n_in > 1 ? c->in[1] : NULL;
        if (!a || !a->data || a->dtype != FRT_INT64 || a->rank != 1) return decline(c, "axes");
        ax = a->data;
        na = (size_t)a->dims[0];
    } else {
        ax = frt_attr_ints(c->node, "axes", &na);
    }
    bool seen[FRT_MAX_RANK] = {false};
    for (size_t i = 0; ax && i < na; i++) {
        int a = frt_norm_axis(ax[i], r);
        if (a < 2 || seen[a]) return decline(c, "not a reduction over the spatial axes");
        seen[a] = true;
    }
    if (!ax || na != (size_t)(r - 2)) return decline(c, "not a reduction over the spatial axes");
    if (frt_shape_numel(Y->dims, Y->rank) != X->dims[0] * X->dims[1])
        return decline(c, "output is not [N, C]");
    int64_t C, H, W;
    image_dims(X, &C, &H, &W);
    frt_blk_pool_geom g = {C, H, W, 1, 1, H, W, 1, 1, 1, 1, 0, 0, 0, H, 0, W, 0};
    int tier = own_pool_tier(c->isa, L->block);
    static const char *const names[2][3] = {
        {"reduce_mean_blk", "reduce_mean_blk_avx2", "reduce_mean_blk_avx512"},
        {"reduce_mean_blk_split", "reduce_mean_blk_avx2_split", "reduce_mean_blk_avx512_split"}};
    return own_pool_select(c, k, L, FRT_LAYOUT_PLAIN, &g, names[0][tier], names[1][tier]);
}

/* ---- BatchNormalization (inference) ------------------------------------------------------------ */

typedef struct dn_bn {
    dn_prim p;
    dnnl_memory_t m[4];         /* scale, shift, mean, variance (model arena), read-only */
} dn_bn;

static void bn_destroy(void *params) {
    dn_bn *p = params;
    if (p->p.prim) dnnl_primitive_destroy(p->p.prim);
    for (int i = 0; i < 4; i++)
        if (p->m[i]) dnnl_memory_destroy(p->m[i]);
}

static frt_status bn_run(const frt_step *s, frt_exec *x) {
    const dn_bn *p = s->k.params;
    dn_extra ex[4] = {{DNNL_ARG_SCALE, p->m[0]}, {DNNL_ARG_SHIFT, p->m[1]},
                      {DNNL_ARG_MEAN, p->m[2]}, {DNNL_ARG_VARIANCE, p->m[3]}};
    return run_images(s, x, &p->p, ex, 4, 0, NULL, NULL);
}

/* The own per-channel affine loops (blocked.h) in place of oneDNN's batch normalization on the
 * AVX2 tier (the AVX-512 tier keeps oneDNN's: not measured against); FRT_DNNL_OWN_BN=0 / 1 (an
 * A/B aid) turns them off / on for every tier. The statistics fold into y = x * a + c at load. A
 * big step of a model of several intra-op threads runs as ranges of channel blocks on the
 * runtime's pool, as the own pools do (FRT_DNNL_ELT_SPLIT=0 never splits it). */
typedef struct dn_obn {
    frt_blk_affine_fn fn;
    const float *a, *c;         /* blocked [cb, b], padding lanes 0 (model arena) */
    int64_t C, H, W, b, cb;
    size_t img;                 /* floats of one image */
    int relu;
    double blk_ns;              /* the cost model's estimate for one channel block */
} dn_obn;

typedef struct obn_job {
    const dn_obn *p;
    const float *x;
    float *y;
} obn_job;

static void obn_task(void *ctx, int64_t lo, int64_t hi) {
    const obn_job *j = ctx;
    const dn_obn *p = j->p;
    while (lo < hi) {
        int64_t n, k0, k1;
        blk_run(lo, hi, p->cb, &n, &k0, &k1);
        p->fn(j->x + (size_t)n * p->img, p->a, p->c, j->y + (size_t)n * p->img, p->C, p->H * p->W,
              p->b, k0, k1, p->relu);
        lo = n * p->cb + k1;
    }
}

static frt_status obn_run(const frt_step *s, frt_exec *x) {
    const dn_obn *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    frt_value *Y = &x->values[s->out[0]];
    int64_t C, H, W;
    image_dims(X, &C, &H, &W);
    if (C != p->C || H != p->H || W != p->W)
        return frt_step_fail(s, FRT_ERR_SHAPE, "onednn: input image %lldx%lldx%lld differs from "
                             "the load-time %lldx%lldx%lld", (long long)C, (long long)H,
                             (long long)W, (long long)p->C, (long long)p->H, (long long)p->W);
    obn_job j = {p, X->data, Y->data};
    frt_parallel_ranges(x->tp, X->dims[0] * p->cb, p->blk_ns, obn_task, &j);
    return FRT_OK;
}

static bool own_bn_wanted(frt_isa isa) {
    const char *e = getenv("FRT_DNNL_OWN_BN");
    if (e && *e) return strcmp(e, "0") != 0;
    return isa == FRT_ISA_AVX2;
}

/* Whether FRT_DNNL_ELT_SPLIT=0 (an A/B aid) keeps the own batch normalization and channel_mul
 * steps on the calling thread. */
static bool elt_split_off(void) {
    const char *e = getenv("FRT_DNNL_ELT_SPLIT");
    return e && !strcmp(e, "0");
}

static frt_status own_bn_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L, int relu,
                                float eps) {
    const frt_value *X = c->in[0];
    dn_obn *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    const frt_layout **in = layouts(c->arena, c->n_in), **out = layouts(c->arena, 1);
    if (!p || !in || !out) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    image_dims(X, &p->C, &p->H, &p->W);
    p->b = L->block;
    p->cb = (p->C + p->b - 1) / p->b;
    p->img = (size_t)(p->cb * p->H * p->W * p->b);
    p->relu = relu;
    float *a = frt_arena_alloc(c->arena, (size_t)(p->cb * p->b) * sizeof *a, 64);
    float *sh = frt_arena_alloc(c->arena, (size_t)(p->cb * p->b) * sizeof *sh, 64);
    if (!a || !sh) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    const float *sc = c->in[1]->data, *bi = c->in[2]->data, *mu = c->in[3]->data,
                *va = c->in[4]->data;
    /* y = (x - mean) / sqrt(var + eps) * scale + bias = x * a + (bias - mean * a) */
    for (int64_t i = 0; i < p->cb * p->b; i++) {
        a[i] = i < p->C ? sc[i] / sqrtf(va[i] + eps) : 0.0f;
        sh[i] = i < p->C ? bi[i] - mu[i] * a[i] : 0.0f;
    }
    p->a = a;
    p->c = sh;
    const frt_blk_variant *v = frt_blk_variant_get(c->isa >= FRT_ISA_AVX2 ? FRT_ISA_AVX2 : c->isa, 8);
    p->fn = p->b % 8 == 0 ? v->affine : frt_blk_affine_portable;
    /* bytes of one block read and written */
    p->blk_ns = elt_split_off() ? 0
                                : (double)(2 * p->H * p->W * p->b * 4) * FRT_PAR_NS_PER_BYTE;
    bool split = p->blk_ns > 0 && p->cb > 1 &&
                 frt_par_split(g_model_threads, (double)p->cb * p->blk_ns) > 1;
    bool avx2 = p->fn != frt_blk_affine_portable;
    static const char *const names[2][2] = {{"batchnorm_blk", "batchnorm_blk_split"},
                                            {"batchnorm_blk_avx2", "batchnorm_blk_avx2_split"}};
    in[0] = out[0] = L;
    k->params = p;
    k->in_layouts = in;
    k->out_layouts = out;
    k->name = names[avx2][split];
    k->fn = obn_run;
    return FRT_OK;
}

static frt_status bn_select(const frt_op_def *def, frt_op_ctx *c, frt_kernel *k,
                            const frt_layout *L) {
    const frt_value *X = c->in[0], *Y = c->out[0];
    if (c->n_out != 1 || c->n_in != 5 || !is_image(X) || !Y || !is_image(Y))
        return decline(c, "needs float32 [N, C, (H,) W] with dims known at load, one output");
    if (X->layout != L) return decline(c, "input not in the blocked layout");
    if (frt_attr_int(c->node, "training_mode", 0)) return decline(c, "training_mode");
    /* a fused Relu (fuse.c) as oneDNN's fused ReLU of the normalized output */
    unsigned relu = 0;
    if (c->node->act.kind == FRT_ACT_RELU) relu = dnnl_fuse_norm_relu;
    else if (c->node->act.kind != FRT_ACT_NONE) return decline(c, "fused activation not a Relu");
    int64_t C, H, W;
    image_dims(X, &C, &H, &W);
    for (int i = 1; i < 5; i++)
        if (!c->in[i] || !c->in[i]->data || c->in[i]->dtype != FRT_FLOAT32 ||
            c->in[i]->rank != 1 || c->in[i]->dims[0] != C)
            return decline(c, "needs constant float32 scale, bias, mean and variance");
    float eps = frt_attr_float(c->node, "epsilon", 1e-5f);
    if (own_bn_wanted(c->isa)) return own_bn_select(c, k, L, relu != 0, eps);
    dnnl_memory_desc_t src, vec;
    dnnl_dims_t sd = {1, C, H, W}, vd = {C};
    dnnl_status_t ds = dnnl_memory_desc_init_by_tag(&src, 4, sd, dnnl_f32, tag_of(L));
    if (!ds) ds = dnnl_memory_desc_init_by_tag(&vec, 1, vd, dnnl_f32, dnnl_x);
    dnnl_batch_normalization_desc_t bd;
    if (!ds)
        ds = dnnl_batch_normalization_forward_desc_init(
            &bd, dnnl_forward_inference, &src, eps,
            dnnl_use_global_stats | dnnl_use_scale | dnnl_use_shift | relu);
    if (ds) return decline(c, "oneDNN rejects the batch normalization");
    dnnl_primitive_attr_t attr = user_scratch_attr();
    if (!attr) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "onednn: out of memory");
    dnnl_primitive_desc_t pd = NULL;
    ds = dnnl_primitive_desc_create(&pd, &bd, attr, g_engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    if (ds) return decline(c, "oneDNN has no batch normalization here");
    dn_bn *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) {
        dnnl_primitive_desc_destroy(pd);
        return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for kernel parameters");
    }
    memset(p, 0, sizeof *p);
    ds = make_prim(&p->p, pd);
    if (ds) return dnnl_fail(c, "creating the batch normalization", ds);
    k->params = p;
    k->destroy = bn_destroy;
    p->p.C = p->p.OC = C, p->p.H = p->p.OH = H, p->p.W = p->p.OW = W;
    p->p.in_img = p->p.out_img = image_bytes(X, L);
    for (int i = 0; i < 4; i++) {
        float *v = frt_arena_alloc(c->arena, (size_t)C * sizeof *v, 64);
        if (!v) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
        memcpy(v, c->in[i + 1]->data, (size_t)C * sizeof *v);
        ds = dnnl_memory_create(&p->m[i], &vec, g_engine, v);
        if (ds) return dnnl_fail(c, "wrapping the statistics", ds);
    }
    const frt_layout **in = layouts(c->arena, c->n_in), **out = layouts(c->arena, 1);
    if (!in || !out) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    in[0] = out[0] = L;
    k->in_layouts = in;
    k->out_layouts = out;
    k->name = "batchnorm";
    k->fn = bn_run;
    k->scratch = prim_scratch;
    return FRT_OK;
}

/* ---- builtin kernels on blocked data ------------------------------------------------------------
 * With C a multiple of the block there is no padding, and an image in L holds the same elements
 * as in plain order, permuted the same way for every tensor of that shape. So a builtin kernel
 * that maps element i of its same-shape inputs to element i of its output (unary activations,
 * same-shape binary arithmetic) computes the right blocked result; and Concat along channels
 * copies the same byte ranges in both layouts (each input's channels are whole blocks). */

static bool is_op(const char *t, const char *const *list) {
    for (; *list; list++)
        if (!strcmp(t, *list)) return true;
    return false;
}

static const char *const k_unary[] = {"Relu", "Clip", "Sigmoid", "Tanh", "LeakyRelu",
                                      "HardSigmoid", "HardSwish", "Elu", "Neg", "Abs", "Silu",
                                      NULL};
static const char *const k_binary[] = {"Add", "Sub", "Mul", "Div", NULL};

static bool same_dims(const frt_value *a, const frt_value *b) {
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

static frt_status wrap_select(const frt_op_def *def, frt_op_ctx *c, frt_kernel *k,
                              const frt_layout *L) {
    bool unary = is_op(def->op_type, k_unary), binary = is_op(def->op_type, k_binary);
    bool concat = !strcmp(def->op_type, "Concat");
    const frt_value *Y = c->out[0];
    if (c->n_out != 1 || !Y || !is_image(Y) || c->n_in < 1 || !c->in[0])
        return decline(c, "needs a float32 image output with dims known at load");
    uint32_t blocked = 0;
    if (concat) {
        int r = Y->rank;
        if (frt_norm_axis(frt_attr_int(c->node, "axis", 0), r) != 1)
            return decline(c, "concat not along channels");
        for (int i = 0; i < c->n_in; i++) {
            const frt_value *v = c->in[i];
            if (!v || v->layout != L || !is_image(v) || v->dims[1] % L->block)
                return decline(c, "an input is not blocked in whole channel blocks");
            blocked |= 1u << i;
        }
    } else {
        int nd = unary ? 1 : binary ? 2 : 0;
        if (!nd || c->n_in < nd) return decline(c, "op not run on blocked data");
        if (Y->dims[1] % L->block) return decline(c, "channels not a multiple of the block");
        for (int i = 0; i < nd; i++) {
            const frt_value *v = c->in[i];
            if (!v || v->layout != L || !same_dims(v, Y))
                return decline(c, "inputs not blocked with the output's shape");
            blocked |= 1u << i;
        }
        for (int i = nd; i < c->n_in; i++)
            if (c->in[i] && c->in[i]->layout) return decline(c, "a blocked parameter input");
    }
    frt_status st = def->select(c, k);
    if (st == FRT_ERR_UNSUPPORTED) return FRT_DECLINE;
    if (st) return st;
    if (k->in_layouts || k->out_layouts || (k->flags & (FRT_K_VIEW | FRT_K_DYNAMIC_OUT))) {
        if (k->destroy) k->destroy((void *)k->params);
        memset(k, 0, sizeof *k);
        return decline(c, "the builtin kernel is not elementwise");
    }
    const frt_layout **in = layouts(c->arena, c->n_in), **out = layouts(c->arena, 1);
    if (!in || !out) {
        if (k->destroy) k->destroy((void *)k->params);
        memset(k, 0, sizeof *k);
        return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    }
    for (int i = 0; i < c->n_in; i++)
        if (blocked >> i & 1) in[i] = L;
    out[0] = L;
    k->in_layouts = in;
    k->out_layouts = out;
    return FRT_OK;
}

/* ---- own kernels on blocked data ----------------------------------------------------------------
 * Pad with all pads zero (an exporter's no-op before AveragePool): a copy of the blocked bytes.
 * Mul of a [N, C, S...] image by a [N, C, 1...] per-channel factor (squeeze-and-excitation), both
 * blocked: y[n][k][s][l] = x[n][k][s][l] * g[n][k][l]; padding lanes are written as zero. */

static frt_status copy_run(const frt_step *s, frt_exec *x) {
    const frt_value *X = &x->values[s->in[0]];
    frt_value *Y = &x->values[s->out[0]];
    size_t nb = frt_value_nbytes(X);
    if (nb != frt_value_nbytes(Y))
        return frt_step_fail(s, FRT_ERR_SHAPE, "onednn: copy between different sizes");
    memcpy(Y->data, X->data, nb);
    return FRT_OK;
}

/* params of channel_mul: a big step of a model of several intra-op threads runs as ranges of
 * channel blocks on the runtime's pool (the cost model decides; FRT_DNNL_ELT_SPLIT=0 never
 * splits); each block is the same loop's product whoever runs it */
typedef struct dn_chanmul {
    int swap;                   /* 1: the factor is input 0 */
    frt_blk_chanmul_fn fn;      /* the tier's loop (blocked.h) */
    double blk_ns;              /* the cost model's estimate for one channel block */
} dn_chanmul;

typedef struct chanmul_job {
    frt_blk_chanmul_fn fn;
    const float *x, *g;
    float *y;
    int64_t C, S, b, cb;
} chanmul_job;

static void chanmul_task(void *ctx, int64_t lo, int64_t hi) {
    const chanmul_job *j = ctx;
    while (lo < hi) { /* blocks [k0, k1) of image n as an image of their channels */
        int64_t n, k0, k1;
        blk_run(lo, hi, j->cb, &n, &k0, &k1);
        int64_t cn = j->C - k0 * j->b;
        if (cn > (k1 - k0) * j->b) cn = (k1 - k0) * j->b;
        size_t xo = (size_t)((n * j->cb + k0) * j->S * j->b), go = (size_t)((n * j->cb + k0) * j->b);
        j->fn(j->x + xo, j->g + go, j->y + xo, cn, j->S, j->b);
        lo = n * j->cb + k1;
    }
}

static frt_status chanmul_run(const frt_step *s, frt_exec *x) {
    const dn_chanmul *p = s->k.params;
    const frt_value *X = &x->values[s->in[p->swap ? 1 : 0]], *G = &x->values[s->in[p->swap ? 0 : 1]];
    frt_value *Y = &x->values[s->out[0]];
    int64_t b = X->layout->block, N = X->dims[0], C = X->dims[1], cbn = (C + b - 1) / b, sp = 1;
    for (int d = 2; d < X->rank; d++) sp *= X->dims[d];
    if (G->dims[0] != N || G->dims[1] != C || frt_shape_numel(G->dims, G->rank) != N * C)
        return frt_step_fail(s, FRT_ERR_SHAPE, "onednn: channel factor of another shape");
    chanmul_job j = {p->fn, X->data, G->data, Y->data, C, sp, b, cbn};
    frt_parallel_ranges(x->tp, N * cbn, p->blk_ns * (double)sp, chanmul_task, &j);
    return FRT_OK;
}

static bool all_zero_pads(const frt_op_ctx *c) {
    const int64_t *p = NULL;
    size_t n = 0;
    if (c->opset >= 11) {
        const frt_value *pv = c->n_in > 1 ? c->in[1] : NULL;
        if (!pv || !pv->data || pv->dtype != FRT_INT64 || pv->rank != 1) return false;
        p = pv->data;
        n = (size_t)pv->dims[0];
        if (c->n_in > 3 && c->in[3]) return false; /* axes */
    } else {
        p = frt_attr_ints(c->node, "pads", &n);
    }
    if (!p || n == 0) return false;
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0) return false;
    return true;
}

static frt_status own_select(const frt_op_def *def, frt_op_ctx *c, frt_kernel *k,
                             const frt_layout *L) {
    const frt_value *Y = c->out[0];
    if (c->n_out != 1 || !Y || !is_image(Y) || c->n_in < 1 || !c->in[0])
        return decline(c, "needs a float32 image output with dims known at load");
    const frt_layout **in = layouts(c->arena, c->n_in), **out = layouts(c->arena, 1);
    if (!in || !out) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    if (!strcmp(def->op_type, "Pad")) {
        if (c->in[0]->layout != L || !same_dims(c->in[0], Y) || !all_zero_pads(c))
            return decline(c, "not a zero Pad of blocked data");
        k->name = "copy";
        k->fn = copy_run;
    } else { /* Mul */
        if (c->n_in != 2 || !c->in[1]) return decline(c, "Mul needs two inputs");
        int big = same_dims(c->in[0], Y) ? 0 : 1;
        const frt_value *X = c->in[big], *G = c->in[1 - big];
        if (!same_dims(X, Y) || X->layout != L || G->layout != L || G->rank != X->rank ||
            !frt_shape_known(G) || G->dims[0] != X->dims[0] || G->dims[1] != X->dims[1] ||
            frt_shape_numel(G->dims, G->rank) != G->dims[0] * G->dims[1] || X->rank < 3)
            return decline(c, "not a blocked per-channel Mul");
        dn_chanmul *sw = frt_arena_alloc(c->arena, sizeof *sw, 8);
        if (!sw) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
        sw->swap = big;
        sw->fn = frt_blk_variant_get(c->isa, L->block)->chanmul;
        /* bytes of one block's spatial position read and written (the run scales it by the
           image's positions); "channel_mul_split" when the cost model splits one image */
        sw->blk_ns = elt_split_off() ? 0 : (double)(2 * L->block * 4) * FRT_PAR_NS_PER_BYTE;
        int64_t sp = 1, cbn = (X->dims[1] + L->block - 1) / L->block;
        for (int d = 2; d < X->rank; d++) sp *= X->dims[d];
        bool split = sw->blk_ns > 0 && cbn > 1 &&
                     frt_par_split(g_model_threads, sw->blk_ns * (double)(sp * cbn)) > 1;
        k->params = sw;
        in[1] = L;
        k->name = split ? "channel_mul_split" : "channel_mul";
        k->fn = chanmul_run;
        /* the loop may write y over x (blocked.h): in place when x is input 0 (fuse.c puts
           the broadcast factor second) */
        if (!big) k->flags |= FRT_K_INPLACE;
    }
    in[0] = L;
    out[0] = L;
    k->in_layouts = in;
    k->out_layouts = out;
    return FRT_OK;
}

/* ---- the provider ------------------------------------------------------------------------------ */

static frt_status onednn_select(const frt_provider *pr, const frt_op_def *def, frt_op_ctx *c,
                                frt_kernel *k) {
    const frt_layout *L = blocked_layout(c->isa);
    if (!L) return decline(c, "ISA tier below AVX2");
    const char *t = def->op_type;
    bool internal = !strcmp(def->domain, FRT_DOMAIN_INTERNAL);
    if (internal && strcmp(t, "FusedConv") != 0 && strcmp(t, "Silu") != 0 &&
        strcmp(t, "ConvMean") != 0)
        return decline(c, "internal op");
    if (!engine()) return decline(c, "no oneDNN CPU engine");
    /* oneDNN plans a primitive's work split for the thread count current at its creation: one
       thread; a model of several threads splits a step into parts on its pool (split.c) */
    g_sel_threads = 1;
    g_model_threads = (int)(intptr_t)pr->ctx;
    set_threads(g_sel_threads);
    const char *skip = getenv("FRT_DNNL_SKIP"); /* debugging aid: op types left to builtin */
    if (skip) {
        size_t tl = strlen(t);
        for (const char *q = strstr(skip, t); q; q = strstr(q + 1, t))
            if ((q == skip || q[-1] == ',') && (q[tl] == ',' || !q[tl]))
                return decline(c, "listed in FRT_DNNL_SKIP");
    }
    if (!strcmp(t, "Conv") || !strcmp(t, "FusedConv") || !strcmp(t, "ConvMean"))
        return conv_select(def, c, k, L);
    if (!strcmp(t, "MaxPool") || !strcmp(t, "AveragePool") || !strcmp(t, "GlobalAveragePool") ||
        !strcmp(t, "GlobalMaxPool"))
        return pool_select(def, c, k, L);
    if (!strcmp(t, "BatchNormalization")) return bn_select(def, c, k, L);
    if (!strcmp(t, "ReduceMean")) return reduce_select(c, k, L);
    if (!strcmp(t, "Concat") || is_op(t, k_unary) || is_op(t, k_binary)) {
        frt_status st = wrap_select(def, c, k, L);
        if (st != FRT_DECLINE || strcmp(t, "Mul") != 0) return st;
    }
    if (!strcmp(t, "Pad") || !strcmp(t, "Mul")) return own_select(def, c, k, L);
    return decline(c, "op not covered");
}

/* One provider per thread count (ctx = the count). */
enum { MAXT = 256 };
static frt_provider g_prov[MAXT + 1];
static pthread_once_t g_prov_once = PTHREAD_ONCE_INIT;

static void providers_init(void) {
    for (int i = 1; i <= MAXT; i++)
        g_prov[i] = (frt_provider){"onednn", onednn_select, (void *)(intptr_t)i};
}

const frt_provider *frt_onednn_provider(int num_threads) {
    if (num_threads < 1 || num_threads > MAXT) return NULL;
    pthread_once(&g_prov_once, providers_init);
    return &g_prov[num_threads];
}

void frt_onednn_thread_init(void) { set_threads(1); }

#else

void frt_onednn_thread_init(void) {}

const frt_provider *frt_onednn_provider(int num_threads) {
    (void)num_threads;
    return NULL;
}

#endif /* FRT_HAVE_DNNL */

bool frt_onednn_enabled(void) {
#if FRT_HAVE_DNNL
    const char *e = getenv("FRT_DNNL");
    return !(e && (!strcmp(e, "0") || !strcmp(e, "off") || !strcmp(e, "OFF")));
#else
    return false;
#endif
}
