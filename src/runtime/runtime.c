/* frt_runtime: per-thread value arrays and memory, one state per block of the model; shape
 * resolution, planning, the run loop, and the services kernels use (child blocks, run-time-sized
 * outputs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <time.h>

#include "ir/seq.h"
#include "interop.h"
#include "model.h"
#include "out_tensor.h"
#include "ops/onednn/onednn.h"
#include "ops/sgemm.h"

#define MAX_NODE_IO 1024
/* Largest single tensor a run may plan; larger shapes are rejected as absurd. */
#define MAX_TENSOR_BYTES ((size_t)1 << 38)

/* FRT_CHECK_PLAN=1 verifies every plan (frt_plan_check) and that no step writes a graph input; a
 * selective build has no checker and refuses the variable at load (model.c). */
#if defined(FRT_SELECTIVE) && FRT_SELECTIVE
#define CHECK_PLAN 0
#else
#define CHECK_PLAN 1
#endif

static const frt_exec_services services;
static frt_exec exec_for(frt_brt *b, void *scratch, frt_threadpool *tp);
static frt_status run_block0(frt_runtime *rt);
static const frt_iop_hooks iop_hooks = {exec_for, run_block0}; /* for interop.c */

/* Bump allocation from the block's shape buffer; NULL (and shape_need updated) when full. */
static void *shape_alloc(frt_brt *b, size_t nb) {
    size_t sz = (nb + 63) & ~(size_t)63;
    if (sz == 0) sz = 64;
    b->shape_need += sz;
    if (b->shape_used + sz > b->shape_cap) return NULL;
    void *p = (char *)b->shape_mem + b->shape_used;
    b->shape_used += sz;
    return p;
}

/* ---- run-time-sized memory ---------------------------------------------------------------- */

/* Starts a run of the block: overflow allocations of the previous run are freed and the buffer
 * grows to what that run needed (the only allocation, and only when a larger size was seen). */
static frt_status dyn_reset(frt_dynmem *d) {
    if (d->n_extra || d->need > d->cap) {
        for (size_t i = 0; i < d->n_extra; i++) free(d->extra[i]);
        d->n_extra = 0;
        if (d->need > d->cap) {
            free(d->base);
            d->base = aligned_alloc(64, d->need);
            d->cap = d->base ? d->need : 0;
            if (!d->base) return frt_error(FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for "
                                           "run-time-sized tensors", d->need);
        }
    }
    d->used = d->need = 0;
    return FRT_OK;
}

static void *dyn_alloc(frt_dynmem *d, size_t nb) {
    size_t sz = (nb + 63) & ~(size_t)63;
    if (sz == 0) sz = 64;
    d->need += sz;
    if (d->used + sz <= d->cap) {
        void *p = d->base + d->used;
        d->used += sz;
        return p;
    }
    if (d->n_extra == d->cap_extra) {
        size_t c = d->cap_extra ? 2 * d->cap_extra : 8;
        void **e = realloc(d->extra, c * sizeof *e);
        if (!e) return NULL;
        d->extra = e;
        d->cap_extra = c;
    }
    void *p = aligned_alloc(64, sz);
    if (p) d->extra[d->n_extra++] = p;
    return p;
}

static void dyn_free(frt_dynmem *d) {
    for (size_t i = 0; i < d->n_extra; i++) free(d->extra[i]);
    free(d->extra);
    free(d->base);
    memset(d, 0, sizeof *d);
}

/* ---- creation ------------------------------------------------------------------------------ */

static frt_status brt_init(frt_runtime *rt, int32_t id) {
    frt_brt *b = &rt->blk[id];
    const frt_block *bl = &rt->m->blocks[id];
    const frt_graph *g = bl->g;
    const frt_program *p = bl->prog;
    b->rt = rt;
    b->b = bl;
    b->id = id;
    size_t nv = g->n_values;
    for (size_t v = 0; v < nv; v++) b->n_outer += g->values[v].kind == FRT_VALUE_OUTER;
    b->v = malloc((nv + 1) * sizeof *b->v);
    b->outer = malloc((b->n_outer + 1) * sizeof *b->outer);
    b->in_dims = calloc(g->n_inputs + b->n_outer + 1, sizeof *b->in_dims);
    b->in_rank = calloc(g->n_inputs + b->n_outer + 1, sizeof *b->in_rank);
    b->run = malloc((p->n_compute + 1) * sizeof *b->run);
    b->run_pos = malloc((p->n_compute + 1) * sizeof *b->run_pos);
    if (!b->v || !b->outer || !b->in_dims || !b->in_rank || !b->run || !b->run_pos ||
        frt_plan_init(&b->plan, nv, p->n_compute) != FRT_OK)
        return frt_error(FRT_ERR_NO_MEMORY, "out of memory creating a runtime");
    memcpy(b->v, bl->tmpl, nv * sizeof *b->v);
    bool any_seq = false;
    for (size_t v = 0; v < nv; v++) any_seq |= b->v[v].vtype != 0;
    if (!FRT_SEQUENCES && any_seq) /* refused at load (compile.c); kept as a guard */
        return frt_error(FRT_ERR_UNSUPPORTED, "feature 'sequences' not in this build's selection "
                         "(%s)", frt_selection_file());
    if (FRT_SEQUENCES && any_seq) {
        b->seqs = calloc(nv, sizeof *b->seqs);
        if (!b->seqs) return frt_error(FRT_ERR_NO_MEMORY, "out of memory creating a runtime");
        for (size_t v = 0; v < nv; v++)
            if (b->v[v].vtype) b->v[v].data = &b->seqs[v];
    }
    size_t k = 0;
    for (size_t v = 0; v < nv; v++)
        if (g->values[v].kind == FRT_VALUE_OUTER) b->outer[k++] = (int32_t)v;
    return FRT_OK;
}

static void brt_free(frt_brt *b) {
    free(b->shape_mem);
    free(b->run);
    free(b->run_pos);
    free(b->slab);
    free(b->outmem);
    frt_plan_free(&b->plan);
    free(b->v);
    free(b->outer);
    free(b->in_dims);
    free(b->in_rank);
    dyn_free(&b->dyn);
    for (size_t v = 0; FRT_SEQUENCES && b->seqs && v < b->b->g->n_values; v++)
        frt_seq_free(&b->seqs[v]);
    free(b->seqs);
}

/* Runs once on each worker of a runtime's intra-op pool: the thread's GEMM packing buffers, and
 * OpenMP thread count 1 for the oneDNN provider, whose steps run their parts on this pool
 * (src/ops/onednn/split.c), so those allocations happen when the pool starts, not in a run. */
static void pool_thread_init(void) {
    frt_sgemm_thread_warmup();
    frt_onednn_thread_init();
}

frt_status frt_runtime_create(const frt_model *m, frt_runtime **out) {
    if (!m || !out) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_create: NULL argument");
    *out = NULL;
    frt_runtime *rt = calloc(1, sizeof *rt);
    if (!rt) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    rt->m = m;
    rt->blk = calloc(m->n_blocks, sizeof *rt->blk);
    rt->n_blk = rt->blk ? m->n_blocks : 0;
    rt->prof_ns = calloc(m->blocks[0].prog->n_compute + 1, sizeof *rt->prof_ns);
    frt_status st = rt->blk && rt->prof_ns ? FRT_OK
                                           : frt_error(FRT_ERR_NO_MEMORY, "out of memory creating a runtime");
    for (size_t i = 0; !st && i < rt->n_blk; i++) st = brt_init(rt, (int32_t)i);
    if (st) {
        frt_runtime_free(rt);
        return st;
    }
    rt->v = rt->blk[0].v;
    rt->in_dims = rt->blk[0].in_dims;
    /* The intra-op pool has max(num_threads, inter_op_threads) threads, the number the kernels
       were chosen for (model.c). With inter-op kept it is shared: the inter-op participants are
       its helpers and it has only max(num_threads, inter_op_threads) - inter_op_threads workers
       of its own (interop.c). With inter-op declined at load the steps run in order and all of
       those threads are the pool's, so the threads the caller granted split the steps. */
    int pool = m->opt.num_threads, helpers = 0;
    if (m->opt.inter_op_threads > pool) pool = m->opt.inter_op_threads;
    if (m->blocks[0].prog->dag && m->opt.inter_op_threads > 1) helpers = m->opt.inter_op_threads - 1;
    if (pool > 1) rt->tp = frt_threadpool_create_shared(pool, pool - 1 - helpers, pool_thread_init);
    if (m->opt.inter_op_threads > 1 && m->blocks[0].prog->dag) {
        st = frt_iop_create(rt, &iop_hooks, &rt->iop);
        if (st) {
            frt_runtime_free(rt);
            return st;
        }
    }
    *out = rt;
    return FRT_OK;
}

void frt_runtime_free(frt_runtime *rt) {
    if (!rt) return;
    frt_iop_free(rt->iop); /* its workers first: they may hold the intra-op pool */
    for (size_t i = 0; i < rt->n_blk; i++) brt_free(&rt->blk[i]);
    free(rt->blk);
    frt_threadpool_free(rt->tp);
    frt_out_block_unref(rt->out);
    free(rt->prof_ns);
    frt_trace_free(&rt->trace);
    free(rt);
}

frt_status frt_runtime_clone(const frt_runtime *src, frt_runtime **out) {
    if (!src || !out) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_clone: NULL argument");
    frt_status st = frt_runtime_create(src->m, out);
    if (st || !src->blk[0].shaped) return st;
    frt_runtime *rt = *out;
    const frt_graph *g = &rt->m->g;
    for (size_t i = 0; i < g->n_inputs; i++) {
        frt_value *v = &rt->v[g->inputs[i]];
        memcpy(v->dims, src->in_dims[i], sizeof v->dims);
        v->numel = frt_shape_numel(v->dims, v->rank);
    }
    st = frt_runtime_resolve(rt);
    if (st) {
        frt_runtime_free(rt);
        *out = NULL;
    }
    return st;
}

static frt_status grow(void **p, size_t *cap, size_t need) {
    if (need <= *cap && *p) return FRT_OK;
    free(*p);
    *p = NULL;
    *cap = 0;
    *p = frt_alloc_large(need, FRT_LARGE_SLAB, NULL); /* (huge pages: arena.h) */
    if (!*p) return frt_error(FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for tensors", need);
    *cap = need;
    return FRT_OK;
}

/* ---- resolving shapes and planning ----------------------------------------------------------- */

static frt_exec exec_for(frt_brt *b, void *scratch, frt_threadpool *tp) {
    frt_exec x = {b->v, scratch, tp, &services, b};
    return x;
}



/* Runs a SHAPE step into the shape buffer. *full is set (and nothing run) when it is too small. */
static frt_status run_shape_step(frt_brt *b, const frt_step *s, bool *full) {
    for (int j = 0; j < s->n_out; j++) {
        if (s->out[j] < 0) continue;
        frt_value *o = &b->v[s->out[j]];
        size_t nb = frt_value_nbytes(o);
        o->data = shape_alloc(b, nb);
        b->shape_bytes += nb;
        if (!o->data) *full = true;
    }
    void *scratch = NULL;
    if (s->k.scratch) {
        scratch = shape_alloc(b, s->k.scratch(s, b->v));
        if (!scratch) *full = true;
    }
    if (*full) return FRT_OK;
    frt_exec x = exec_for(b, scratch, NULL);
    return s->k.fn(s, &x);
}

static frt_status resolve_hiding_inputs(frt_brt *b, bool *full);
static frt_status resolve_once(frt_brt *b, bool *full);

/* Resolves shapes of block b for the input (and outer) dims in b->v and plans its memory. */
static frt_status brt_resolve(frt_brt *b) {
    b->shaped = false;
    for (int attempt = 0; attempt < 40; attempt++) {
        bool full = false;
        b->shape_used = b->shape_need = b->shape_bytes = 0;
        frt_status st = resolve_hiding_inputs(b, &full);
        if (st || !full) return st;
        /* shape buffer too small: grow it (an allocation only when shapes need more) and redo */
        size_t cap = 2 * (b->shape_cap > b->shape_need ? b->shape_cap : b->shape_need) + 4096;
        void *nb = aligned_alloc(64, (cap + 63) & ~(size_t)63);
        if (!nb) return frt_error(FRT_ERR_NO_MEMORY, "out of memory resolving shapes");
        free(b->shape_mem);
        b->shape_mem = nb;
        b->shape_cap = cap;
    }
    return frt_error(FRT_ERR_INTERNAL, "shape buffer did not converge");
}

frt_status frt_runtime_resolve(frt_runtime *rt) { return brt_resolve(&rt->blk[0]); }

/* Shapes may depend on the dims of graph inputs (and of a block's outer values) but never on their
 * values: a plan is reused for as long as those shapes stay the same, so infer must not see their
 * data (a Reshape whose shape comes from a graph input is reported as unresolvable instead of
 * silently going stale). */
static frt_status resolve_hiding_inputs(frt_brt *b, bool *full) {
    const frt_graph *g = b->b->g;
    /* (sequences and optionals keep their frt_seq: no infer reads their contents) */
    for (size_t i = 0; i < g->n_inputs; i++)
        if (!b->v[g->inputs[i]].vtype) b->v[g->inputs[i]].data = NULL;
    for (size_t i = 0; i < b->n_outer; i++)
        if (!b->v[b->outer[i]].vtype) b->v[b->outer[i]].data = NULL;
    return resolve_once(b, full);
}

/* Storage of the block's graph outputs: the runtime's output block for block 0, the block's own
 * buffer for a child. */
static frt_status output_storage(frt_brt *b, char **base) {
    frt_runtime *rt = b->rt;
    size_t need = b->plan.output_bytes;
    if (b->id != 0) {
        frt_status st = grow(&b->outmem, &b->out_cap, need);
        *base = b->outmem;
        return st;
    }
    if (!rt->out || rt->out->cap < need) {
        frt_out_block *nb = frt_out_block_new(need);
        if (!nb) return frt_error(FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for outputs", need);
        frt_out_block_unref(rt->out);
        rt->out = nb;
    }
    *base = (char *)rt->out->data;
    return FRT_OK;
}

static frt_status resolve_once(frt_brt *b, bool *full) {
    frt_runtime *rt = b->rt;
    const frt_model *m = rt->m;
    const frt_program *p = b->b->prog;
    const frt_graph *g = b->b->g;
    const frt_value *tmpl = b->b->tmpl;
    for (size_t i = 0; i < g->n_values; i++)
        if (p->vclass[i] != FRT_VC_CONST && p->vclass[i] != FRT_VC_INPUT && !b->v[i].vtype)
            b->v[i].data = NULL;

    frt_value *in[MAX_NODE_IO], *out[MAX_NODE_IO];
    frt_value dummy;
    for (size_t si = 0; si < p->n_steps; si++) {
        const frt_step *s = &p->steps[si];
        if (p->deferred[si]) continue; /* shaped when it runs */
        for (int j = 0; j < s->n_in; j++) in[j] = s->in[j] < 0 ? NULL : &b->v[s->in[j]];
        for (int j = 0; j < s->n_out; j++) {
            if (s->out[j] < 0) memset(&dummy, 0, sizeof dummy);
            out[j] = s->out[j] < 0 ? &dummy : &b->v[s->out[j]];
        }
        frt_op_ctx c = {s->ir, s->ir->opset, s->n_in, s->n_out, in, out, NULL, FRT_ISA_PORTABLE};
        frt_status st = p->defs[si]->infer(&c);
        if (st) return st;
        for (int j = 0; j < s->n_out; j++) {
            if (s->out[j] < 0) continue;
            frt_value *o = &b->v[s->out[j]];
            o->layout = tmpl[s->out[j]].layout; /* fixed at load */
            if (!frt_shape_known(o)) {
                char bs[128];
                return frt_error(FRT_ERR_SHAPE,
                                 "node '%s' (%s): shape of output '%s' could not be resolved (%s); "
                                 "it may depend on data computed at run time",
                                 s->ir->name, s->ir->op_type, g->values[s->out[j]].name,
                                 frt_shape_str(o, bs, sizeof bs));
            }
            o->numel = frt_shape_numel(o->dims, o->rank);
            if (frt_value_nbytes(o) > MAX_TENSOR_BYTES) {
                char bs[128];
                return frt_error(FRT_ERR_NO_MEMORY, "node '%s' (%s): output '%s' %s is too large",
                                 s->ir->name, s->ir->op_type, g->values[s->out[j]].name,
                                 frt_shape_str(o, bs, sizeof bs));
            }
        }
        if (p->cls[si] == FRT_STEP_SHAPE) {
            st = run_shape_step(b, s, full);
            if (st || *full) return st; /* full: the caller grows the buffer and starts again */
        } else if (p->cls[si] == FRT_STEP_VIEW) {
            frt_value *o = &b->v[s->out[0]];
            if (frt_value_nbytes(o) != frt_value_nbytes(in[0]))
                return frt_error(FRT_ERR_INTERNAL, "node '%s' (%s): view changes the size",
                                 s->ir->name, s->ir->op_type);
            o->data = in[0]->data; /* known now for constant and shape roots */
        }
    }

    for (size_t pos = 0; pos < p->n_compute; pos++) {
        const frt_step *s = &p->steps[p->compute[pos]];
        b->plan.scratch_bytes[pos] =
            s->k.scratch && !p->deferred[p->compute[pos]] ? s->k.scratch(s, b->v) : 0;
    }
    frt_status st = frt_plan_compute(p, b->v, m->opt.planner, &b->plan);
    if (st) return st;
    st = grow(&b->slab, &b->slab_cap, b->plan.slab_bytes);
    if (st) return st;
    char *outbase = NULL;
    st = output_storage(b, &outbase);
    if (st) return st;
    for (size_t i = 0; i < g->n_values; i++) {
        if (p->vclass[i] == FRT_VC_MANAGED) b->v[i].data = (char *)b->slab + b->plan.offset[i];
        else if (p->vclass[i] == FRT_VC_OWNED) b->v[i].data = outbase + b->plan.offset[i];
    }
    for (size_t si = 0; si < p->n_steps; si++)
        if (p->cls[si] == FRT_STEP_VIEW) {
            const frt_step *s = &p->steps[si];
            b->v[s->out[0]].data = b->v[s->in[0]].data;
        }
    if (CHECK_PLAN && m->check_plan) {
        st = frt_plan_check(p, g, b->v, &b->plan);
        if (st) return st;
    }
    b->n_run = 0;
    for (size_t pos = 0; pos < p->n_compute; pos++) {
        if (b->plan.skip[pos]) continue;
        b->run[b->n_run] = &p->steps[p->compute[pos]];
        b->run_pos[b->n_run++] = (int32_t)pos;
    }
    for (size_t i = 0; i < g->n_inputs; i++) {
        memcpy(b->in_dims[i], b->v[g->inputs[i]].dims, sizeof b->in_dims[i]);
        b->in_rank[i] = b->v[g->inputs[i]].rank;
    }
    for (size_t i = 0; i < b->n_outer; i++) {
        memcpy(b->in_dims[g->n_inputs + i], b->v[b->outer[i]].dims, sizeof b->in_dims[0]);
        b->in_rank[g->n_inputs + i] = b->v[b->outer[i]].rank;
    }
    /* children planned for the previous shapes (and outer data) of this block re-plan when run */
    for (size_t i = 0; i < rt->n_blk; i++)
        if (rt->blk[i].b->parent == b->id) rt->blk[i].shaped = false;
    b->shaped = true;
    return FRT_OK;
}

/* ---- running ----------------------------------------------------------------------------------- */

/* A step whose outputs are sized now: FRT_DEFER_INFER shapes them with infer and gives them
 * run-time-sized storage (a view only aliases); FRT_DEFER_KERNEL lets the kernel do it. */
static frt_status run_deferred(frt_brt *b, const frt_step *s, uint8_t how, frt_exec *x) {
    const frt_program *p = b->b->prog;
    x->scratch = NULL;
    if (how == FRT_DEFER_INFER) {
        frt_value *in[MAX_NODE_IO], *out[MAX_NODE_IO];
        frt_value dummy;
        for (int j = 0; j < s->n_in; j++) in[j] = s->in[j] < 0 ? NULL : &b->v[s->in[j]];
        for (int j = 0; j < s->n_out; j++) {
            if (s->out[j] < 0) memset(&dummy, 0, sizeof dummy);
            out[j] = s->out[j] < 0 ? &dummy : &b->v[s->out[j]];
        }
        frt_op_ctx c = {s->ir, s->ir->opset, s->n_in, s->n_out, in, out, NULL, FRT_ISA_PORTABLE};
        frt_status st = p->defs[s - p->steps]->infer(&c);
        if (st) return st;
        for (int j = 0; j < s->n_out; j++) {
            if (s->out[j] < 0 || b->v[s->out[j]].vtype) continue; /* a sequence has its frt_seq */
            frt_value *o = &b->v[s->out[j]];
            o->layout = b->b->tmpl[s->out[j]].layout;
            size_t nb = frt_value_nbytes(o);
            if (!frt_shape_known(o) || nb > MAX_TENSOR_BYTES) {
                char bs[128];
                return frt_step_fail(s, FRT_ERR_SHAPE, "output '%s' has no valid shape %s",
                                     b->b->g->values[s->out[j]].name, frt_shape_str(o, bs, sizeof bs));
            }
            o->numel = frt_shape_numel(o->dims, o->rank);
            if (s->k.flags & FRT_K_VIEW) {
                if (nb != frt_value_nbytes(in[0]))
                    return frt_step_fail(s, FRT_ERR_INTERNAL, "view changes the size");
                o->data = in[0]->data;
                return FRT_OK;
            }
            o->data = dyn_alloc(&b->dyn, nb);
            if (!o->data) return frt_error(FRT_ERR_NO_MEMORY, "out of memory for a tensor");
        }
    }
    if (s->k.scratch) {
        x->scratch = dyn_alloc(&b->dyn, s->k.scratch(s, b->v));
        if (!x->scratch) return frt_error(FRT_ERR_NO_MEMORY, "out of memory for scratch");
    }
    return s->k.fn(s, x);
}

static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Runs the compute steps of a shaped block (profiled: block 0 only; traced: every block) with
 * intra-op pool tp (the runtime's, or for a subgraph the one its owner step was given). */
static frt_status brt_run(frt_brt *b, bool profile, frt_threadpool *tp) {
    const frt_program *p = b->b->prog;
    frt_runtime *rt = b->rt;
    frt_exec x = exec_for(b, NULL, tp);
    char *slab = b->slab;
    const size_t *soff = b->plan.scratch_off;
    const frt_step *const *run = b->run;
    const int32_t *run_pos = b->run_pos;
    size_t n_run = b->n_run;
    frt_status st;
    bool trace = rt->trace.cap != 0;
    bool dynamic = FRT_DYNAMIC_STEPS && p->has_dynamic; /* util/features.h */
    if (!profile && !trace && !dynamic) {
        for (size_t i = 0; i < n_run; i++) {
            x.scratch = slab + soff[run_pos[i]];
            st = run[i]->k.fn(run[i], &x);
            if (st) return st;
        }
        return FRT_OK;
    }
    if (dynamic) {
        st = dyn_reset(&b->dyn);
        if (st) return st;
    }
    for (size_t i = 0; i < n_run; i++) {
        uint64_t t0 = profile || trace ? now_ns() : 0;
        uint8_t how = dynamic ? p->deferred[p->compute[run_pos[i]]] : 0;
        if (how) {
            st = run_deferred(b, run[i], how, &x);
        } else {
            x.scratch = slab + soff[run_pos[i]];
            st = run[i]->k.fn(run[i], &x);
        }
        if (profile || trace) {
            uint64_t t1 = now_ns();
            if (profile) rt->prof_ns[run_pos[i]] += t1 - t0;
            if (trace) frt_trace_step(rt, b, run[i], t0, t1);
        }
        if (st) return st;
    }
    return FRT_OK;
}

/* ---- services for kernels ------------------------------------------------------------------------ */

/* Subgraph execution (frt_exec_block) serves only the ops that own subgraphs (control.c: If,
 * Loop, Scan; sequence.c: SequenceMap); a selective build without them leaves it out. */
#if FRT_OP_BUILT(If) || FRT_OP_BUILT(Loop) || FRT_OP_BUILT(Scan) || FRT_OP_BUILT(SequenceMap)
/* Binds the inputs and outer values of child block c (of parent block pb); sets *changed when a
 * shape differs from c's plan. */
static frt_status bind_child(frt_brt *pb, frt_brt *c, const frt_value *inputs, size_t n_in,
                             bool *changed) {
    const frt_graph *g = c->b->g;
    if (n_in != g->n_inputs)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "subgraph %s: %zu inputs given, it has %zu",
                         g->path, n_in, g->n_inputs);
    *changed = !c->shaped;
    for (size_t i = 0; i < n_in; i++) {
        const frt_value *t = &inputs[i];
        const frt_value *decl = &c->b->tmpl[g->inputs[i]];
        if (t->vtype || decl->vtype) { /* a sequence / optional: bound as it is, no plan change */
            if (t->vtype != decl->vtype || (decl->dtype && t->dtype && t->dtype != decl->dtype) ||
                !t->data)
                return frt_error(FRT_ERR_INVALID_ARGUMENT,
                                 "subgraph %s: input '%s' is a %s of %s, expected a %s of %s",
                                 g->path, g->values[g->inputs[i]].name, frt_vtype_name(t->vtype),
                                 frt_dtype_name((frt_dtype)t->dtype), frt_vtype_name(decl->vtype),
                                 frt_dtype_name((frt_dtype)decl->dtype));
            c->v[g->inputs[i]] = *t;
            continue;
        }
        if (t->dtype != decl->dtype || (decl->rank >= 0 && t->rank != decl->rank) || t->layout ||
            !frt_shape_known(t))
            return frt_error(FRT_ERR_INVALID_ARGUMENT,
                             "subgraph %s: input '%s' is %s rank %d, expected %s rank %d",
                             g->path, g->values[g->inputs[i]].name,
                             frt_dtype_name((frt_dtype)t->dtype), (int)t->rank,
                             frt_dtype_name((frt_dtype)decl->dtype), (int)decl->rank);
        for (int d = 0; d < t->rank; d++)
            if (decl->rank >= 0 && decl->dims[d] >= 0 && decl->dims[d] != t->dims[d])
                return frt_error(FRT_ERR_INVALID_ARGUMENT,
                                 "subgraph %s: input '%s' dim %d is %lld, expected %lld", g->path,
                                 g->values[g->inputs[i]].name, d, (long long)t->dims[d],
                                 (long long)decl->dims[d]);
        if (c->in_rank[i] != t->rank ||
            memcmp(c->in_dims[i], t->dims, (size_t)t->rank * sizeof(int64_t)) != 0)
            *changed = true;
        frt_value *v = &c->v[g->inputs[i]];
        *v = *t;
        v->numel = frt_shape_numel(t->dims, t->rank);
    }
    const frt_node *owner = &pb->b->g->nodes[c->b->owner];
    for (size_t i = 0; i < c->n_outer; i++) {
        frt_value *v = &c->v[c->outer[i]];
        const frt_value *src = &pb->v[owner->in[owner->n_in + g->values[c->outer[i]].outer]];
        size_t k = g->n_inputs + i;
        if (c->in_rank[k] != src->rank ||
            memcmp(c->in_dims[k], src->dims, (size_t)src->rank * sizeof(int64_t)) != 0)
            *changed = true;
        *v = *src;
    }
    return FRT_OK;
}

static frt_status svc_run_block(frt_exec *x, int32_t block, const frt_value *inputs, size_t n_in,
                                frt_value *outputs, size_t n_out) {
    frt_brt *pb = x->ctx;
    frt_runtime *rt = pb->rt;
    if (block < 0 || (size_t)block >= rt->n_blk || rt->blk[block].b->parent != pb->id)
        return frt_error(FRT_ERR_INTERNAL, "block %d is not a child of block %d", (int)block,
                         (int)pb->id);
    frt_brt *c = &rt->blk[block];
    const frt_graph *g = c->b->g;
    if (n_out > g->n_outputs)
        return frt_error(FRT_ERR_INTERNAL, "subgraph %s: %zu outputs requested, it has %zu",
                         g->path, n_out, g->n_outputs);
    if (n_in && !inputs) return frt_error(FRT_ERR_INTERNAL, "frt_exec_block: inputs is NULL");
    bool changed;
    frt_status st = bind_child(pb, c, inputs, n_in, &changed);
    if (st) return st;
    if (changed) {
        st = brt_resolve(c);
        if (!st) st = bind_child(pb, c, inputs, n_in, &changed); /* resolve hid the data */
        if (st) return frt_error_context(st, "subgraph %s", g->path);
    }
    /* views of the block's inputs and outer values (an output passing an input through) */
    const frt_program *cp = c->b->prog;
    for (size_t i = 0; i < cp->n_input_views; i++) {
        const frt_step *vs = &cp->steps[cp->input_views[i]];
        c->v[vs->out[0]].data = c->v[vs->in[0]].data;
    }
    st = brt_run(c, false, x->tp);
    if (st) return st;
    for (size_t i = 0; i < n_out; i++) outputs[i] = c->v[g->outputs[i]];
    return FRT_OK;
}
#else
static frt_status svc_run_block(frt_exec *x, int32_t block, const frt_value *inputs, size_t n_in,
                                frt_value *outputs, size_t n_out) {
    (void)x, (void)block, (void)inputs, (void)n_in, (void)outputs, (void)n_out;
    return frt_error(FRT_ERR_INTERNAL, "subgraph execution is not in this build's selection");
}
#endif

static void *svc_alloc_output(frt_exec *x, const frt_step *s, int j, int32_t dtype, int32_t rank,
                              const int64_t *dims) {
    frt_brt *b = x->ctx;
    if (!FRT_DYNAMIC_STEPS || j < 0 || j >= s->n_out || s->out[j] < 0 || rank < 0 ||
        rank > FRT_MAX_RANK || b->b->prog->vclass[s->out[j]] != FRT_VC_DYNAMIC) {
        frt_step_fail(s, FRT_ERR_INTERNAL, "output %d is not run-time-sized", j);
        return NULL;
    }
    frt_value *o = &x->values[s->out[j]];
    frt_op_set_shape(o, dtype, rank, dims);
    o->layout = FRT_LAYOUT_PLAIN;
    size_t nb = frt_value_nbytes(o);
    if (o->numel < 0 || nb > MAX_TENSOR_BYTES || (nb == 0 && o->numel > 0)) {
        frt_step_fail(s, FRT_ERR_RUNTIME, "run-time-sized output %d is too large", j);
        return NULL;
    }
    o->data = dyn_alloc(&b->dyn, nb);
    if (!o->data) frt_step_fail(s, FRT_ERR_NO_MEMORY, "out of memory for output %d", j);
    return o->data;
}

static const frt_exec_services services = {svc_run_block, svc_alloc_output};

static frt_kind kind_of(int32_t vtype) {
    return vtype == FRT_VT_TENSOR ? FRT_KIND_TENSOR
           : vtype == FRT_VT_SEQUENCE ? FRT_KIND_SEQUENCE : FRT_KIND_OPTIONAL;
}

/* Binds a sequence / optional graph input value (vtype != 0) from the caller's val: its tensors
 * are borrowed into the input's frt_seq. */
static frt_status bind_seq_input(frt_runtime *rt, int32_t vid, const char *name,
                                 const frt_io_value *val) {
    frt_value *v = &rt->v[vid];
    frt_kind want = kind_of(v->vtype);
    frt_kind want_elem = v->vtype == FRT_VT_OPT_SEQUENCE ? FRT_KIND_SEQUENCE : FRT_KIND_TENSOR;
    if (!val)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s' is a %s: pass it with "
                         "frt_run_values", name, frt_vtype_name(v->vtype));
    if (val->kind != want || (want == FRT_KIND_OPTIONAL && val->elem_kind != want_elem))
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s': the model expects a %s",
                         name, frt_vtype_name(v->vtype));
    bool present = want != FRT_KIND_OPTIONAL || val->has_value;
    size_t n = present ? val->n : 0;
    if (v->vtype == FRT_VT_OPT_TENSOR && present && n != 1)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s': an optional tensor with a value "
                         "has n == 1 (got %zu)", name, n);
    if (n && !val->tensors)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s': tensors is NULL", name);
    frt_seq *sq = &rt->blk[0].seqs[vid];
    v->data = sq;
    frt_seq_reset(sq, v->dtype, present);
    for (size_t k = 0; k < n; k++) {
        const frt_tensor *t = &val->tensors[k];
        if ((int32_t)t->dtype != v->dtype)
            return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s' tensor %zu: dtype %s, model "
                             "expects %s", name, k, frt_dtype_name(t->dtype),
                             frt_dtype_name((frt_dtype)v->dtype));
        if (t->rank < 0 || t->rank > FRT_MAX_RANK)
            return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s' tensor %zu: rank %d is out of "
                             "range", name, k, (int)t->rank);
        int64_t numel = frt_shape_numel(t->shape, t->rank);
        size_t need = numel < 0 ? 0 : (size_t)numel * frt_dtype_size(t->dtype);
        if (numel < 0 || need > MAX_TENSOR_BYTES)
            return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s' tensor %zu: bad shape", name, k);
        if ((need && !t->data) || t->nbytes < need)
            return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s' tensor %zu: %zu bytes given, "
                             "shape needs %zu", name, k, t->data ? t->nbytes : 0, need);
        frt_value e;
        memset(&e, 0, sizeof e);
        frt_value_set_shape(&e, t->dtype, t->rank, t->shape);
        e.data = t->data;
        frt_status st = frt_seq_push_borrowed(sq, &e);
        if (st) return st;
    }
    return FRT_OK;
}

/* Matches caller inputs to graph inputs, validates them and stores their shapes in rt->v. Inputs
 * are the tensors `inputs` (frt_run) or the values `vals` (frt_run_values): one of them is NULL.
 * Sets *changed when any shape differs from the current plan's. */
static frt_status bind_inputs(frt_runtime *rt, const char *const *names, const frt_tensor *inputs,
                              const frt_io_value *vals, size_t n, bool *changed) {
    const frt_model *m = rt->m;
    const frt_graph *g = &m->g;
    if (n && (!names || (!inputs && !vals)))
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "input names or tensors are NULL");
    if (n != g->n_inputs) {
        /* report precisely which ones are missing or unknown */
        for (size_t i = 0; i < g->n_inputs; i++) {
            const char *want = g->values[g->inputs[i]].name;
            bool found = false;
            for (size_t j = 0; j < n && !found; j++) found = names[j] && strcmp(names[j], want) == 0;
            if (!found) return frt_error(FRT_ERR_INVALID_ARGUMENT, "missing input '%s'", want);
        }
    }
    *changed = !rt->blk[0].shaped;
    for (size_t j = 0; j < n; j++) {
        const char *name = names[j];
        size_t i = 0;
        while (i < g->n_inputs && !(name && strcmp(name, g->values[g->inputs[i]].name) == 0)) i++;
        if (i == g->n_inputs) {
            char list[512];
            size_t o = 0;
            list[0] = 0;
            for (size_t k = 0; k < g->n_inputs && o < sizeof list; k++)
                o += (size_t)snprintf(list + o, sizeof list - o, "%s'%s'", k ? ", " : "",
                                      g->values[g->inputs[k]].name);
            return frt_error(FRT_ERR_INVALID_ARGUMENT, "unknown input '%s' (model inputs: %s)",
                             name ? name : "(null)", list);
        }
        for (size_t k = 0; k < j; k++)
            if (names[k] && strcmp(names[k], name) == 0)
                return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s' given twice", name);
        if (FRT_SEQUENCES && rt->v[g->inputs[i]].vtype) {
            frt_status st = bind_seq_input(rt, g->inputs[i], name, vals ? &vals[j] : NULL);
            if (st) return st;
            continue;
        }
        if (vals && (vals[j].kind != FRT_KIND_TENSOR || vals[j].n != 1 || !vals[j].tensors))
            return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s' is a tensor: pass kind "
                             "FRT_KIND_TENSOR with n = 1", name);
        const frt_tensor *t = vals ? &vals[j].tensors[0] : &inputs[j];
        const frt_tensor_info *info = &m->inputs[i];
        if ((int32_t)t->dtype != (int32_t)info->dtype)
            return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s': dtype %s, model expects %s",
                             name, frt_dtype_name(t->dtype), frt_dtype_name(info->dtype));
        if (t->rank != info->rank)
            return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s': rank %d, model expects %d",
                             name, (int)t->rank, (int)info->rank);
        if (t->rank < 0 || t->rank > FRT_MAX_RANK)
            return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s': rank %d is out of range", name,
                             (int)t->rank);
        for (int d = 0; d < t->rank; d++) {
            char got[200];
            if (t->shape[d] < 0)
                return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s': dim %d of %s is negative",
                                 name, d, frt_ints_str(t->shape, t->rank, got, sizeof got));
            if (info->shape[d] >= 0 && t->shape[d] != info->shape[d])
                return frt_error(FRT_ERR_INVALID_ARGUMENT,
                                 "input '%s': dim %d is %lld, the model fixes it to %lld (shape "
                                 "given %s)",
                                 name, d, (long long)t->shape[d], (long long)info->shape[d],
                                 frt_ints_str(t->shape, t->rank, got, sizeof got));
        }
        int64_t numel = frt_shape_numel(t->shape, t->rank);
        size_t need = numel < 0 ? 0 : (size_t)numel * frt_dtype_size(t->dtype);
        if (numel < 0 || need > MAX_TENSOR_BYTES)
            return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s': shape is too large", name);
        if (need && !t->data)
            return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s': data is NULL (%zu bytes needed)",
                             name, need);
        if (t->nbytes < need)
            return frt_error(FRT_ERR_INVALID_ARGUMENT,
                             "input '%s': %zu bytes given, shape needs %zu", name, t->nbytes, need);
        frt_value *v = &rt->v[g->inputs[i]];
        if (memcmp(rt->in_dims[i], t->shape, (size_t)t->rank * sizeof(int64_t)) != 0) *changed = true;
        memcpy(v->dims, t->shape, (size_t)t->rank * sizeof(int64_t));
        v->numel = numel;
        v->data = t->data; /* borrowed; kernels never write graph inputs */
    }
    return FRT_OK;
}

frt_status frt_runtime_reshape(frt_runtime *rt, const char *const *names, const frt_tensor *inputs,
                               size_t n) {
    if (!rt) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_reshape: runtime is NULL");
    bool changed;
    frt_status st = bind_inputs(rt, names, inputs, NULL, n, &changed);
    if (st) return st;
    return changed ? frt_runtime_resolve(rt) : FRT_OK;
}

/* FNV-1a over the bytes of every graph input (FRT_CHECK_PLAN only). */
static uint64_t hash_inputs(const frt_runtime *rt) {
    const frt_graph *g = &rt->m->g;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const frt_value *v = &rt->v[g->inputs[i]];
        const unsigned char *b = v->data;
        size_t n = frt_value_nbytes(v);
        for (size_t k = 0; k < n; k++) h = (h ^ b[k]) * 1099511628211ull;
    }
    return h;
}

frt_out_block *frt_out_block_new(size_t cap) {
    size_t sz = (sizeof(frt_out_block) + cap + 63) & ~(size_t)63;
    frt_out_block *b = aligned_alloc(64, sz);
    if (!b) return NULL;
    atomic_init(&b->refs, 1);
    b->cap = cap;
    return b;
}

void frt_out_block_unref(frt_out_block *b) {
    if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) free(b);
}

/* Public tensor helpers live beside the output blocks they release. */
void frt_tensor_release(frt_tensor *t) {
    if (!t) return;
    frt_out_block_unref(t->_owner);
    memset(t, 0, sizeof *t);
}

int64_t frt_tensor_numel(const frt_tensor *t) {
    if (!t || t->rank < 0 || t->rank > FRT_MAX_RANK) return -1;
    return frt_shape_numel(t->shape, t->rank);
}

/* manage_outputs: the caller still holds tensors of the last run in the current block, so this
 * run writes its outputs into a fresh one. */
static frt_status fresh_output_block(frt_runtime *rt) {
    const frt_program *p = rt->m->blocks[0].prog;
    const frt_plan *plan = &rt->blk[0].plan;
    frt_out_block *b = frt_out_block_new(plan->output_bytes);
    if (!b) return frt_error(FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for outputs",
                             plan->output_bytes);
    frt_out_block_unref(rt->out);
    rt->out = b;
    for (size_t i = 0; i < rt->m->g.n_values; i++)
        if (p->vclass[i] == FRT_VC_OWNED) rt->v[i].data = b->data + plan->offset[i];
    for (size_t si = 0; si < p->n_steps; si++)
        if (p->cls[si] == FRT_STEP_VIEW) rt->v[p->steps[si].out[0]].data = rt->v[p->steps[si].in[0]].data;
    return FRT_OK;
}

static frt_status emit_outputs(frt_runtime *rt, frt_tensor *outs, size_t n, frt_output_mode mode) {
    const frt_graph *g = &rt->m->g;
    for (size_t i = 0; i < n; i++)
        if (rt->v[g->outputs[i]].vtype)
            return frt_error(FRT_ERR_INVALID_ARGUMENT, "output '%s' is a %s: use frt_run_values",
                             g->values[g->outputs[i]].name,
                             frt_vtype_name(rt->v[g->outputs[i]].vtype));
    for (size_t i = 0; i < n; i++) {
        const frt_value *v = &rt->v[g->outputs[i]];
        frt_tensor *t = &outs[i];
        size_t nb = frt_value_nbytes(v);
        if (mode == FRT_OUTPUTS_CALLER) {
            if (t->nbytes < nb || (nb && !t->data))
                return frt_error(FRT_ERR_INVALID_ARGUMENT,
                                 "output '%s' needs %zu bytes, buffer has %zu",
                                 g->values[g->outputs[i]].name, nb, t->nbytes);
            if (nb) memcpy(t->data, v->data, nb);
            t->_owner = NULL;
        } else if (mode == FRT_OUTPUTS_ALLOC && rt->m->opt.manage_outputs &&
                   rt->m->blocks[0].prog->vclass[rt->m->blocks[0].prog->root[g->outputs[i]]] == FRT_VC_OWNED) {
            atomic_fetch_add_explicit(&rt->out->refs, 1, memory_order_relaxed);
            t->data = v->data;
            t->_owner = rt->out;
        } else if (mode == FRT_OUTPUTS_ALLOC) {
            frt_out_block *b = frt_out_block_new(nb);
            if (!b) { /* the caller gets nothing to free from a failed run */
                for (size_t k = 0; k < i; k++) frt_tensor_release(&outs[k]);
                return frt_error(FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for output '%s'",
                                 nb, g->values[g->outputs[i]].name);
            }
            if (nb) memcpy(b->data, v->data, nb);
            t->data = b->data;
            t->_owner = b;
        } else {
            t->data = v->data;
            t->_owner = NULL;
        }
        frt_out_tensor_describe(t, v, nb);
    }
    return FRT_OK;
}

/* Binds the inputs (tensors or values: one is NULL) and re-plans when shapes changed. */
static frt_status run_inputs(frt_runtime *rt, const char *const *names, const frt_tensor *inputs,
                             const frt_io_value *vals, size_t n_in) {
    const frt_model *m = rt->m;
    const frt_program *p = m->blocks[0].prog;
    bool changed;
    frt_status st = bind_inputs(rt, names, inputs, vals, n_in, &changed);
    if (st) return st;
    if (changed) {
        st = frt_runtime_resolve(rt);
        if (st) return st;
        for (size_t j = 0; j < n_in; j++) /* resolve hid the input data from infer */
            for (size_t i = 0; i < m->g.n_inputs; i++)
                if (strcmp(names[j], m->g.values[m->g.inputs[i]].name) == 0 &&
                    !rt->v[m->g.inputs[i]].vtype)
                    rt->v[m->g.inputs[i]].data = vals ? vals[j].tensors[0].data : inputs[j].data;
    }
    if (m->opt.manage_outputs && atomic_load_explicit(&rt->out->refs, memory_order_acquire) != 1) {
        st = fresh_output_block(rt);
        if (st) return st;
    }
    for (size_t i = 0; i < p->n_input_views; i++) {
        const frt_step *s = &p->steps[p->input_views[i]];
        rt->v[s->out[0]].data = rt->v[s->in[0]].data;
    }
    if (CHECK_PLAN && m->check_plan) rt->input_hash = hash_inputs(rt);
    return FRT_OK;
}

/* After block 0 ran with status st. */
static frt_status run_done(frt_runtime *rt, frt_status st) {
    if (st) return st;
    if (rt->profiling) rt->prof_runs++;
    if (CHECK_PLAN && rt->m->check_plan && hash_inputs(rt) != rt->input_hash)
        return frt_error(FRT_ERR_INTERNAL, "a step wrote into a graph input");
    return FRT_OK;
}

static frt_status run_block0(frt_runtime *rt) { return brt_run(&rt->blk[0], rt->profiling, rt->tp); }

/* Runs block 0: by its DAG with inter-op threads, else in order. */
static frt_status run_bound(frt_runtime *rt, const char *const *names, const frt_tensor *inputs,
                            const frt_io_value *vals, size_t n_in) {
    frt_status st = run_inputs(rt, names, inputs, vals, n_in);
    if (st) return st;
    /* with a pool, the calling thread runs parts of regions in some runs and not in others: its
       GEMM packing buffer is made in its first run, as the workers' are when they start */
    if (rt->tp) frt_sgemm_thread_warmup();
    if (rt->iop && rt->m->blocks[0].prog->dag) {
        st = frt_iop_run(rt);
    } else {
        /* the run owns its pool: workers poll between its steps (threadpool.h) */
        frt_threadpool_hold(rt->tp, 1);
        st = brt_run(&rt->blk[0], rt->profiling, rt->tp);
        frt_threadpool_hold(rt->tp, 0);
    }
    return run_done(rt, st);
}

static frt_status check_run_args(const frt_runtime *rt, const char *fn, const void *outputs,
                                 size_t n_out) {
    if (!rt) return frt_error(FRT_ERR_INVALID_ARGUMENT, "%s: runtime is NULL", fn);
    if (n_out > rt->m->g.n_outputs)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "%s: %zu outputs requested, model has %zu",
                         fn, n_out, rt->m->g.n_outputs);
    if (n_out && !outputs) return frt_error(FRT_ERR_INVALID_ARGUMENT, "%s: outputs is NULL", fn);
    return FRT_OK;
}

frt_status frt_run(frt_runtime *rt, const char *const *names, const frt_tensor *inputs, size_t n_in,
                   frt_tensor *outputs, size_t n_out, frt_output_mode mode) {
    frt_status st = check_run_args(rt, "frt_run", outputs, n_out);
    if (st) return st;
    if (mode != FRT_OUTPUTS_ALLOC && mode != FRT_OUTPUTS_CALLER && mode != FRT_OUTPUTS_BORROW)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_run: unknown output mode %d", (int)mode);
    if (n_in && !inputs) return frt_error(FRT_ERR_INVALID_ARGUMENT, "input names or tensors are NULL");
    st = run_bound(rt, names, inputs, NULL, n_in);
    if (st) return st;
    return emit_outputs(rt, outputs, n_out, mode);
}

/* ---- asynchronous runs ------------------------------------------------------------------------ */

/* What an asynchronous run needs once its steps are done (one per runtime: one run at a time). */
typedef struct async_run {
    frt_tensor *outputs;
    size_t n_out;
    frt_output_mode mode;
    frt_run_callback done;
    void *user;
} async_run;

static void async_fin(frt_runtime *rt, frt_status st, void *arg) {
    async_run a = *(async_run *)arg;
    free(arg);
    st = run_done(rt, st);
    if (!st) st = emit_outputs(rt, a.outputs, a.n_out, a.mode);
    a.done(a.user, st); /* the message of a failure is this thread's frt_last_error() */
}

frt_status frt_run_async(frt_runtime *rt, const char *const *names, const frt_tensor *inputs,
                         size_t n_in, frt_tensor *outputs, size_t n_out, frt_output_mode mode,
                         const frt_task_launcher *launcher, frt_run_callback done, void *user) {
    frt_status st = check_run_args(rt, "frt_run_async", outputs, n_out);
    if (st) return st;
    if (mode != FRT_OUTPUTS_ALLOC && mode != FRT_OUTPUTS_CALLER && mode != FRT_OUTPUTS_BORROW)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_run_async: unknown output mode %d", (int)mode);
    if (!done) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_run_async: callback is NULL");
    if (launcher && !launcher->launch)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_run_async: launcher has no launch function");
    if (n_in && !inputs) return frt_error(FRT_ERR_INVALID_ARGUMENT, "input names or tensors are NULL");
#ifdef FRT_SEL_OFF_THREAD_POOL
    /* a selective build without the thread pool: refused before binding anything
       (features_off.c names the feature and the selection) */
    return frt_iop_start(rt, &iop_hooks, launcher, NULL, NULL);
#endif
    async_run *a = malloc(sizeof *a);
    if (!a) return frt_error(FRT_ERR_NO_MEMORY, "out of memory starting a run");
    *a = (async_run){outputs, n_out, mode, done, user};
    st = run_inputs(rt, names, inputs, NULL, n_in);
    if (!st) st = frt_iop_start(rt, &iop_hooks, launcher, async_fin, a);
    if (st) free(a);
    return st;
}

/* A copy of tensor v in its own allocation (as FRT_OUTPUTS_ALLOC without manage_outputs). */
static frt_status copy_out(const frt_value *v, frt_tensor *t) {
    size_t nb = frt_value_nbytes(v);
    frt_out_block *b = frt_out_block_new(nb);
    if (!b) return frt_error(FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for an output", nb);
    if (nb) memcpy(b->data, v->data, nb);
    memset(t, 0, sizeof *t);
    t->dtype = (frt_dtype)v->dtype;
    t->rank = v->rank;
    memcpy(t->shape, v->dims, (size_t)v->rank * sizeof(int64_t));
    t->data = b->data;
    t->nbytes = nb;
    t->_owner = b;
    return FRT_OK;
}

static frt_status emit_value(const frt_value *v, frt_io_value *o) {
    memset(o, 0, sizeof *o);
    const frt_seq *sq = FRT_SEQUENCES ? frt_seq_of(v) : NULL;
    size_t n = sq ? sq->n : 1;
    o->kind = kind_of(v->vtype);
    o->elem_kind = v->vtype == FRT_VT_OPT_SEQUENCE ? FRT_KIND_SEQUENCE : FRT_KIND_TENSOR;
    o->has_value = sq ? sq->present : 1;
    o->elem_dtype = (frt_dtype)(sq && sq->dtype ? sq->dtype : v->dtype);
    o->tensors = calloc(n ? n : 1, sizeof *o->tensors);
    if (!o->tensors) return frt_error(FRT_ERR_NO_MEMORY, "out of memory for outputs");
    for (size_t k = 0; k < n; k++) {
        frt_status st = copy_out(sq ? &sq->items[k] : v, &o->tensors[k]);
        if (st) return st;
        o->n = k + 1;
    }
    return FRT_OK;
}

frt_status frt_run_values(frt_runtime *rt, const char *const *names, const frt_io_value *inputs,
                          size_t n_in, frt_io_value *outputs, size_t n_out) {
    frt_status st = check_run_args(rt, "frt_run_values", outputs, n_out);
    if (st) return st;
    if (n_in && !inputs) return frt_error(FRT_ERR_INVALID_ARGUMENT, "input names or values are NULL");
    st = run_bound(rt, names, NULL, inputs, n_in);
    if (st) return st;
    for (size_t i = 0; i < n_out; i++) {
        st = emit_value(&rt->v[rt->m->g.outputs[i]], &outputs[i]);
        if (st) { /* the caller gets nothing to free from a failed run */
            for (size_t k = 0; k <= i; k++) frt_io_value_release(&outputs[k]);
            return frt_error_context(st, "output '%s'", rt->m->g.values[rt->m->g.outputs[i]].name);
        }
    }
    return FRT_OK;
}

void frt_io_value_release(frt_io_value *v) {
    if (!v) return;
    for (size_t k = 0; v->tensors && k < v->n; k++) frt_tensor_release(&v->tensors[k]);
    free(v->tensors);
    memset(v, 0, sizeof *v);
}

frt_status frt_runtime_plan_stats(const frt_runtime *rt, frt_plan_stats *s) {
    if (!rt || !s) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_plan_stats: NULL argument");
    if (!rt->blk[0].shaped)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "runtime has no plan yet: run or reshape it first");
    memset(s, 0, sizeof *s);
    s->arena_bytes = rt->blk[0].plan.slab_bytes;
    s->naive_bytes = rt->blk[0].plan.naive_bytes;
    s->lower_bound_bytes = rt->blk[0].plan.lower_bound_bytes;
    s->num_managed = rt->blk[0].plan.num_managed;
    s->num_reused = rt->blk[0].plan.num_reused;
    s->output_bytes = rt->blk[0].plan.output_bytes;
    s->num_inplace = rt->blk[0].plan.num_inplace;
    s->num_concat_removed = rt->blk[0].plan.num_concat_removed;
    s->shape_bytes = rt->blk[0].shape_bytes;
    for (size_t i = 0; i < rt->m->g.n_values; i++) s->num_views += rt->m->blocks[0].prog->vclass[i] == FRT_VC_VIEW;
    return FRT_OK;
}

void frt_runtime_set_profiling(frt_runtime *rt, int on) {
    if (rt) rt->profiling = on != 0;
}

size_t frt_runtime_num_steps(const frt_runtime *rt) { return rt ? rt->m->blocks[0].prog->n_compute : 0; }

void frt_runtime_step_profile(const frt_runtime *rt, size_t i, frt_step_profile *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!rt || i >= rt->m->blocks[0].prog->n_compute) return;
    const frt_step *s = &rt->m->blocks[0].prog->steps[rt->m->blocks[0].prog->compute[i]];
    out->node_name = s->ir->name;
    out->op_type = s->ir->op_type;
    out->kernel = s->k.name ? s->k.name : "";
    out->total_ns = rt->prof_ns[i];
    out->runs = rt->prof_runs;
}

void frt_runtime_reset_profile(frt_runtime *rt) {
    if (!rt) return;
    memset(rt->prof_ns, 0, rt->m->blocks[0].prog->n_compute * sizeof *rt->prof_ns);
    rt->prof_runs = 0;
}

size_t frt_runtime_plan_size(const frt_runtime *rt) {
    if (!rt || !rt->blk[0].shaped) return 0;
    const frt_program *p = rt->m->blocks[0].prog;
    size_t n = 0;
    for (size_t v = 0; v < rt->m->g.n_values; v++) n += p->vclass[v] == FRT_VC_MANAGED;
    for (size_t pos = 0; pos < p->n_compute; pos++)
        n += rt->blk[0].plan.scratch_bytes[pos] && !rt->blk[0].plan.skip[pos];
    return n;
}

frt_status frt_runtime_plan_entry(const frt_runtime *rt, size_t index, frt_plan_entry *e) {
    if (!rt || !e) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_plan_entry: NULL argument");
    const frt_program *p = rt->m->blocks[0].prog;
    const frt_plan *pl = &rt->blk[0].plan;
    size_t k = 0;
    for (size_t v = 0; rt->blk[0].shaped && v < rt->m->g.n_values; v++) {
        if (p->vclass[v] != FRT_VC_MANAGED) continue;
        if (k++ != index) continue;
        e->name = rt->m->g.values[v].name;
        e->kind = pl->kind[v] == 1 ? FRT_PLAN_SLICE : pl->kind[v] == 2 ? FRT_PLAN_INPLACE : FRT_PLAN_TENSOR;
        e->offset = pl->offset[v];
        e->bytes = frt_value_nbytes(&rt->v[v]);
        e->first = p->def_pos[v];
        e->last = p->last_pos[v];
        return FRT_OK;
    }
    for (size_t pos = 0; rt->blk[0].shaped && pos < p->n_compute; pos++) {
        if (!pl->scratch_bytes[pos] || pl->skip[pos]) continue;
        if (k++ != index) continue;
        e->name = p->steps[p->compute[pos]].ir->name;
        e->kind = FRT_PLAN_SCRATCH;
        e->offset = pl->scratch_off[pos];
        e->bytes = pl->scratch_bytes[pos];
        e->first = e->last = (int32_t)pos;
        return FRT_OK;
    }
    return frt_error(FRT_ERR_INVALID_ARGUMENT, "plan entry %zu out of range", index);
}
