/* frt_runtime: per-thread value array and memory; shape resolution, planning and the run loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <time.h>

#include "model.h"
#include "ops/sgemm.h"

#define MAX_NODE_IO 1024
/* Largest single tensor a run may plan; larger shapes are rejected as absurd. */
#define MAX_TENSOR_BYTES ((size_t)1 << 38)

/* Bump allocation from the runtime's shape buffer; NULL (and shape_need updated) when full. */
static void *shape_alloc(frt_runtime *rt, size_t nb) {
    size_t sz = (nb + 63) & ~(size_t)63;
    if (sz == 0) sz = 64;
    rt->shape_need += sz;
    if (rt->shape_used + sz > rt->shape_cap) return NULL;
    void *p = (char *)rt->shape_mem + rt->shape_used;
    rt->shape_used += sz;
    return p;
}

frt_status frt_runtime_create(const frt_model *m, frt_runtime **out) {
    if (!m || !out) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_create: NULL argument");
    *out = NULL;
    frt_runtime *rt = calloc(1, sizeof *rt);
    if (!rt) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    rt->m = m;
    size_t nv = m->g.n_values;
    rt->v = malloc((nv + 1) * sizeof *rt->v);
    rt->in_dims = calloc(m->g.n_inputs + 1, sizeof *rt->in_dims);
    rt->prof_ns = calloc(m->prog.n_compute + 1, sizeof *rt->prof_ns);
    rt->run = malloc((m->prog.n_compute + 1) * sizeof *rt->run);
    rt->run_pos = malloc((m->prog.n_compute + 1) * sizeof *rt->run_pos);
    if (!rt->v || !rt->in_dims || !rt->prof_ns || !rt->run || !rt->run_pos ||
        frt_plan_init(&rt->plan, nv, m->prog.n_compute) != FRT_OK) {
        frt_runtime_free(rt);
        return frt_error(FRT_ERR_NO_MEMORY, "out of memory creating a runtime");
    }
    memcpy(rt->v, m->tmpl, nv * sizeof *rt->v);
    if (m->opt.num_threads > 1) rt->tp = frt_threadpool_create(m->opt.num_threads, frt_sgemm_thread_warmup);
    *out = rt;
    return FRT_OK;
}

void frt_runtime_free(frt_runtime *rt) {
    if (!rt) return;
    free(rt->shape_mem);
    free(rt->run);
    free(rt->run_pos);
    frt_threadpool_free(rt->tp);
    free(rt->slab);
    frt_out_block_unref(rt->out);
    frt_plan_free(&rt->plan);
    free(rt->v);
    free(rt->in_dims);
    free(rt->prof_ns);
    free(rt);
}

frt_status frt_runtime_clone(const frt_runtime *src, frt_runtime **out) {
    if (!src || !out) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_clone: NULL argument");
    frt_status st = frt_runtime_create(src->m, out);
    if (st || !src->shaped) return st;
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
    size_t sz = (need + 63) & ~(size_t)63;
    *p = aligned_alloc(64, sz ? sz : 64);
    if (!*p) return frt_error(FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for tensors", need);
    *cap = need;
    return FRT_OK;
}

/* Runs a SHAPE step into the shape buffer. *full is set (and nothing run) when it is too small. */
static frt_status run_shape_step(frt_runtime *rt, const frt_step *s, bool *full) {
    for (int j = 0; j < s->n_out; j++) {
        if (s->out[j] < 0) continue;
        frt_value *o = &rt->v[s->out[j]];
        size_t nb = frt_value_nbytes(o);
        o->data = shape_alloc(rt, nb);
        rt->shape_bytes += nb;
        if (!o->data) *full = true;
    }
    void *scratch = NULL;
    if (s->k.scratch) {
        scratch = shape_alloc(rt, s->k.scratch(s, rt->v));
        if (!scratch) *full = true;
    }
    if (*full) return FRT_OK;
    frt_exec x = {rt->v, scratch, NULL};
    return s->k.fn(s, &x);
}

static frt_status resolve_hiding_inputs(frt_runtime *rt, bool *full);
static frt_status resolve_once(frt_runtime *rt, bool *full);

frt_status frt_runtime_resolve(frt_runtime *rt) {
    rt->shaped = false;
    for (int attempt = 0; attempt < 40; attempt++) {
        bool full = false;
        rt->shape_used = rt->shape_need = rt->shape_bytes = 0;
        frt_status st = resolve_hiding_inputs(rt, &full);
        if (st || !full) return st;
        /* shape buffer too small: grow it (an allocation only when shapes need more) and redo */
        size_t cap = 2 * (rt->shape_cap > rt->shape_need ? rt->shape_cap : rt->shape_need) + 4096;
        void *nb = aligned_alloc(64, (cap + 63) & ~(size_t)63);
        if (!nb) return frt_error(FRT_ERR_NO_MEMORY, "out of memory resolving shapes");
        free(rt->shape_mem);
        rt->shape_mem = nb;
        rt->shape_cap = cap;
    }
    return frt_error(FRT_ERR_INTERNAL, "shape buffer did not converge");
}


/* Shapes may depend on the dims of graph inputs but never on their values: a plan is reused for
 * as long as input shapes stay the same, so infer must not see input data (a Reshape whose shape
 * comes from a graph input is reported as unresolvable instead of silently going stale). */
static frt_status resolve_hiding_inputs(frt_runtime *rt, bool *full) {
    const frt_graph *g = &rt->m->g;
    for (size_t i = 0; i < g->n_inputs; i++) rt->v[g->inputs[i]].data = NULL;
    return resolve_once(rt, full);
}

static frt_status resolve_once(frt_runtime *rt, bool *full) {
    const frt_model *m = rt->m;
    const frt_program *p = &m->prog;
    const frt_graph *g = &m->g;
    for (size_t i = 0; i < g->n_values; i++)
        if (p->vclass[i] != FRT_VC_CONST && p->vclass[i] != FRT_VC_INPUT) rt->v[i].data = NULL;

    frt_value *in[MAX_NODE_IO], *out[MAX_NODE_IO];
    frt_value dummy;
    for (size_t si = 0; si < p->n_steps; si++) {
        const frt_step *s = &p->steps[si];
        for (int j = 0; j < s->n_in; j++) in[j] = s->in[j] < 0 ? NULL : &rt->v[s->in[j]];
        for (int j = 0; j < s->n_out; j++) {
            if (s->out[j] < 0) memset(&dummy, 0, sizeof dummy);
            out[j] = s->out[j] < 0 ? &dummy : &rt->v[s->out[j]];
        }
        frt_op_ctx c = {s->ir, s->ir->opset, s->n_in, s->n_out, in, out, NULL, FRT_ISA_PORTABLE};
        frt_status st = p->defs[si]->infer(&c);
        if (st) return st;
        for (int j = 0; j < s->n_out; j++) {
            if (s->out[j] < 0) continue;
            frt_value *o = &rt->v[s->out[j]];
            if (!frt_shape_known(o)) {
                char b[128];
                return frt_error(FRT_ERR_SHAPE,
                                 "node '%s' (%s): shape of output '%s' could not be resolved (%s); "
                                 "it may depend on data computed at run time",
                                 s->ir->name, s->ir->op_type, g->values[s->out[j]].name,
                                 frt_shape_str(o, b, sizeof b));
            }
            o->numel = frt_shape_numel(o->dims, o->rank);
            if (frt_value_nbytes(o) > MAX_TENSOR_BYTES) {
                char b[128];
                return frt_error(FRT_ERR_NO_MEMORY, "node '%s' (%s): output '%s' %s is too large",
                                 s->ir->name, s->ir->op_type, g->values[s->out[j]].name,
                                 frt_shape_str(o, b, sizeof b));
            }
        }
        if (p->cls[si] == FRT_STEP_SHAPE) {
            st = run_shape_step(rt, s, full);
            if (st || *full) return st; /* full: the caller grows the buffer and starts again */
        } else if (p->cls[si] == FRT_STEP_VIEW) {
            frt_value *o = &rt->v[s->out[0]];
            if (frt_value_nbytes(o) != frt_value_nbytes(in[0]))
                return frt_error(FRT_ERR_INTERNAL, "node '%s' (%s): view changes the size",
                                 s->ir->name, s->ir->op_type);
            o->data = in[0]->data; /* known now for constant and shape roots */
        }
    }

    for (size_t pos = 0; pos < p->n_compute; pos++) {
        const frt_step *s = &p->steps[p->compute[pos]];
        rt->plan.scratch_bytes[pos] = s->k.scratch ? s->k.scratch(s, rt->v) : 0;
    }
    frt_status st = frt_plan_compute(p, rt->v, m->opt.planner, &rt->plan);
    if (st) return st;
    st = grow(&rt->slab, &rt->slab_cap, rt->plan.slab_bytes);
    if (st) return st;
    if (!rt->out || rt->out->cap < rt->plan.output_bytes) {
        frt_out_block *b = frt_out_block_new(rt->plan.output_bytes);
        if (!b) return frt_error(FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for outputs",
                                 rt->plan.output_bytes);
        frt_out_block_unref(rt->out);
        rt->out = b;
    }
    for (size_t i = 0; i < g->n_values; i++) {
        if (p->vclass[i] == FRT_VC_MANAGED) rt->v[i].data = (char *)rt->slab + rt->plan.offset[i];
        else if (p->vclass[i] == FRT_VC_OWNED)
            rt->v[i].data = rt->out->data + rt->plan.offset[i];
    }
    for (size_t si = 0; si < p->n_steps; si++)
        if (p->cls[si] == FRT_STEP_VIEW) {
            const frt_step *s = &p->steps[si];
            rt->v[s->out[0]].data = rt->v[s->in[0]].data;
        }
    if (m->check_plan) {
        st = frt_plan_check(p, g, rt->v, &rt->plan);
        if (st) return st;
    }
    rt->n_run = 0;
    for (size_t pos = 0; pos < p->n_compute; pos++) {
        if (rt->plan.skip[pos]) continue;
        rt->run[rt->n_run] = &p->steps[p->compute[pos]];
        rt->run_pos[rt->n_run++] = (int32_t)pos;
    }
    for (size_t i = 0; i < g->n_inputs; i++)
        memcpy(rt->in_dims[i], rt->v[g->inputs[i]].dims, sizeof rt->in_dims[i]);
    rt->shaped = true;
    return FRT_OK;
}

/* Matches caller inputs to graph inputs, validates them and stores their shapes in rt->v.
 * Sets *changed when any shape differs from the current plan's. */
static frt_status bind_inputs(frt_runtime *rt, const char *const *names, const frt_tensor *inputs,
                              size_t n, bool *changed) {
    const frt_model *m = rt->m;
    const frt_graph *g = &m->g;
    if (n && (!names || !inputs))
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
    *changed = !rt->shaped;
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
        const frt_tensor *t = &inputs[j];
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
    frt_status st = bind_inputs(rt, names, inputs, n, &changed);
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

/* manage_outputs: the caller still holds tensors of the last run in the current block, so this
 * run writes its outputs into a fresh one. */
static frt_status fresh_output_block(frt_runtime *rt) {
    const frt_program *p = &rt->m->prog;
    frt_out_block *b = frt_out_block_new(rt->plan.output_bytes);
    if (!b) return frt_error(FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for outputs",
                             rt->plan.output_bytes);
    frt_out_block_unref(rt->out);
    rt->out = b;
    for (size_t i = 0; i < rt->m->g.n_values; i++)
        if (p->vclass[i] == FRT_VC_OWNED) rt->v[i].data = b->data + rt->plan.offset[i];
    for (size_t si = 0; si < p->n_steps; si++)
        if (p->cls[si] == FRT_STEP_VIEW) rt->v[p->steps[si].out[0]].data = rt->v[p->steps[si].in[0]].data;
    return FRT_OK;
}

static inline uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static frt_status emit_outputs(frt_runtime *rt, frt_tensor *outs, size_t n, frt_output_mode mode) {
    const frt_graph *g = &rt->m->g;
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
                   rt->m->prog.vclass[rt->m->prog.root[g->outputs[i]]] == FRT_VC_OWNED) {
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
        t->dtype = (frt_dtype)v->dtype;
        t->rank = v->rank;
        memset(t->shape, 0, sizeof t->shape);
        memcpy(t->shape, v->dims, (size_t)v->rank * sizeof(int64_t));
        t->nbytes = nb;
    }
    return FRT_OK;
}

frt_status frt_run(frt_runtime *rt, const char *const *names, const frt_tensor *inputs, size_t n_in,
                   frt_tensor *outputs, size_t n_out, frt_output_mode mode) {
    if (!rt) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_run: runtime is NULL");
    const frt_model *m = rt->m;
    const frt_program *p = &m->prog;
    if (n_out > m->g.n_outputs)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_run: %zu outputs requested, model has %zu",
                         n_out, m->g.n_outputs);
    if (n_out && !outputs) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_run: outputs is NULL");
    if (mode != FRT_OUTPUTS_ALLOC && mode != FRT_OUTPUTS_CALLER && mode != FRT_OUTPUTS_BORROW)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_run: unknown output mode %d", (int)mode);
    bool changed;
    frt_status st = bind_inputs(rt, names, inputs, n_in, &changed);
    if (st) return st;
    if (changed) {
        st = frt_runtime_resolve(rt);
        if (st) return st;
        for (size_t j = 0; j < n_in; j++) /* resolve hid the input data from infer */
            for (size_t i = 0; i < m->g.n_inputs; i++)
                if (strcmp(names[j], m->g.values[m->g.inputs[i]].name) == 0)
                    rt->v[m->g.inputs[i]].data = inputs[j].data;
    }
    if (m->opt.manage_outputs && atomic_load_explicit(&rt->out->refs, memory_order_acquire) != 1) {
        st = fresh_output_block(rt);
        if (st) return st;
    }
    for (size_t i = 0; i < p->n_input_views; i++) {
        const frt_step *s = &p->steps[p->input_views[i]];
        rt->v[s->out[0]].data = rt->v[s->in[0]].data;
    }
    frt_exec x = {rt->v, NULL, rt->tp};
    char *slab = rt->slab;
    const size_t *soff = rt->plan.scratch_off;
    const frt_step *const *run = rt->run;
    const int32_t *run_pos = rt->run_pos;
    size_t n_run = rt->n_run;
    if (m->check_plan) rt->input_hash = hash_inputs(rt);
    if (!rt->profiling) {
        for (size_t i = 0; i < n_run; i++) {
            x.scratch = slab + soff[run_pos[i]];
            st = run[i]->k.fn(run[i], &x);
            if (st) return st;
        }
    } else {
        for (size_t i = 0; i < n_run; i++) {
            x.scratch = slab + soff[run_pos[i]];
            uint64_t t0 = now_ns();
            st = run[i]->k.fn(run[i], &x);
            rt->prof_ns[run_pos[i]] += now_ns() - t0;
            if (st) return st;
        }
        rt->prof_runs++;
    }
    if (m->check_plan && hash_inputs(rt) != rt->input_hash)
        return frt_error(FRT_ERR_INTERNAL, "a step wrote into a graph input");
    (void)p;
    return emit_outputs(rt, outputs, n_out, mode);
}

frt_status frt_runtime_plan_stats(const frt_runtime *rt, frt_plan_stats *s) {
    if (!rt || !s) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_plan_stats: NULL argument");
    if (!rt->shaped)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "runtime has no plan yet: run or reshape it first");
    memset(s, 0, sizeof *s);
    s->arena_bytes = rt->plan.slab_bytes;
    s->naive_bytes = rt->plan.naive_bytes;
    s->lower_bound_bytes = rt->plan.lower_bound_bytes;
    s->num_managed = rt->plan.num_managed;
    s->num_reused = rt->plan.num_reused;
    s->output_bytes = rt->plan.output_bytes;
    s->num_inplace = rt->plan.num_inplace;
    s->num_concat_removed = rt->plan.num_concat_removed;
    s->shape_bytes = rt->shape_bytes;
    for (size_t i = 0; i < rt->m->g.n_values; i++) s->num_views += rt->m->prog.vclass[i] == FRT_VC_VIEW;
    return FRT_OK;
}

void frt_runtime_set_profiling(frt_runtime *rt, int on) {
    if (rt) rt->profiling = on != 0;
}

size_t frt_runtime_num_steps(const frt_runtime *rt) { return rt ? rt->m->prog.n_compute : 0; }

void frt_runtime_step_profile(const frt_runtime *rt, size_t i, frt_step_profile *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!rt || i >= rt->m->prog.n_compute) return;
    const frt_step *s = &rt->m->prog.steps[rt->m->prog.compute[i]];
    out->node_name = s->ir->name;
    out->op_type = s->ir->op_type;
    out->kernel = s->k.name ? s->k.name : "";
    out->total_ns = rt->prof_ns[i];
    out->runs = rt->prof_runs;
}

void frt_runtime_reset_profile(frt_runtime *rt) {
    if (!rt) return;
    memset(rt->prof_ns, 0, rt->m->prog.n_compute * sizeof *rt->prof_ns);
    rt->prof_runs = 0;
}

size_t frt_runtime_plan_size(const frt_runtime *rt) {
    if (!rt || !rt->shaped) return 0;
    const frt_program *p = &rt->m->prog;
    size_t n = 0;
    for (size_t v = 0; v < rt->m->g.n_values; v++) n += p->vclass[v] == FRT_VC_MANAGED;
    for (size_t pos = 0; pos < p->n_compute; pos++)
        n += rt->plan.scratch_bytes[pos] && !rt->plan.skip[pos];
    return n;
}

frt_status frt_runtime_plan_entry(const frt_runtime *rt, size_t index, frt_plan_entry *e) {
    if (!rt || !e) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_plan_entry: NULL argument");
    const frt_program *p = &rt->m->prog;
    const frt_plan *pl = &rt->plan;
    size_t k = 0;
    for (size_t v = 0; rt->shaped && v < rt->m->g.n_values; v++) {
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
    for (size_t pos = 0; rt->shaped && pos < p->n_compute; pos++) {
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
