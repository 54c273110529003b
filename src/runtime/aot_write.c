/* Ahead-of-time programs: the writer, frt_model_write_program (what `flatrt compile` calls; full
 * builds only, selective builds answer FRT_ERR_UNSUPPORTED). docs/selective.md "Ahead-of-time
 * programs".
 *
 * It shapes a runtime of the loaded model for the given input shapes (symbolic
 * dims from the caller), then writes what that runtime would execute: every value of the model's
 * graph with its dtype, dims and place (a byte range of the run memory, which holds the memory
 * plan's slab, the graph outputs and a copy of the inputs, or of the constant bytes written in
 * the file), the steps the plan runs with their scratch areas and their kernels' parameters (the
 * op's save function, src/ops/aot.h), and the graph's inputs and outputs. Places come from the
 * value classes of the program and the pointers the runtime itself set (inside its slab or its
 * output block), never from reading data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/aot.h"
#include "util/error.h"

#if FRT_AOT_SAVE
#include "runtime/model.h"

enum { REG_NONE = 0, REG_CONST = 1, REG_BUF = 2 };

static size_t al64(size_t n) { return (n + 63) & ~(size_t)63; }

/* Whether p lies in [base, base + n); *off is its offset there. */
static bool inside(const void *p, const void *base, size_t n, size_t *off) {
    const char *c = p, *b = base;
    if (!b || c < b || c >= b + n) return false;
    *off = (size_t)(c - b);
    return true;
}

static uint64_t fnv1a64(const unsigned char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void put_str(frt_aot_w *w, const char *s) { frt_aot_put_blob(w, s, s ? strlen(s) : 0); }

/* Body of the program of runtime rt (shaped), inputs bound to in[i] (in_bytes each). */
static frt_status write_body(frt_runtime *rt, const size_t *in_bytes,
                             frt_aot_w *w, frt_aot_w *cw) {
    const frt_model *m = rt->m;
    const frt_graph *g = &m->g;
    const frt_program *p = m->blocks[0].prog;
    const frt_brt *b = &rt->blk[0];
    size_t slab = al64(b->plan.slab_bytes), outb = al64(b->plan.output_bytes);
    size_t in_base = slab + outb, in_off[64], buf = in_base;
    if (g->n_inputs > 64) return frt_error(FRT_ERR_UNSUPPORTED, "more than 64 graph inputs");
    for (size_t i = 0; i < g->n_inputs; i++) {
        in_off[i] = buf;
        buf += al64(in_bytes[i]);
    }
    frt_aot_put_i64(w, (int64_t)g->n_values);
    frt_aot_put_i64(w, (int64_t)g->n_inputs);
    frt_aot_put_i64(w, (int64_t)g->n_outputs);
    frt_aot_put_i64(w, (int64_t)b->n_run);
    frt_aot_put_i64(w, (int64_t)buf);
    /* constant bytes are written only for values a step reads (not those whose kernel copied
       them at select: the model may have released those bytes) or the graph outputs */
    uint8_t *need = calloc(g->n_values + 1, 1);
    if (!need) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < b->n_run; i++)
        for (int j = 0; j < b->run[i]->n_in; j++)
            if (b->run[i]->in[j] >= 0 && !(j < 32 && (b->run[i]->k.const_copied >> j & 1)))
                need[b->run[i]->in[j]] = 1;
    for (size_t i = 0; i < g->n_outputs; i++) need[g->outputs[i]] = 1;
    frt_status st = FRT_OK;
    for (size_t i = 0; i < g->n_values && !st; i++) {
        const frt_value *v = &rt->v[i];
        size_t nb = frt_value_nbytes(v), off = 0;
        int32_t reg = REG_NONE;
        uint8_t vc = p->vclass[p->root[i]];
        if (v->vtype || vc == FRT_VC_DYNAMIC || vc == FRT_VC_SEQ) {
            st = frt_error(FRT_ERR_UNSUPPORTED, "value '%s': sequences and run-time-sized values "
                           "are not written yet", g->values[i].name);
            break;
        }
        if (vc != FRT_VC_NONE && v->rank >= 0 && !frt_shape_known(v)) {
            st = frt_error(FRT_ERR_SHAPE, "value '%s' has no known shape", g->values[i].name);
            break;
        }
        if (vc == FRT_VC_NONE || !nb || ((vc == FRT_VC_CONST || vc == FRT_VC_SHAPE) && !need[i])) {
            reg = REG_NONE;
        } else if (inside(v->data, b->slab, b->plan.slab_bytes, &off)) {
            reg = REG_BUF;
        } else if (rt->out && inside(v->data, rt->out->data, b->plan.output_bytes, &off)) {
            reg = REG_BUF;
            off += slab;
        } else {
            /* a graph input, or a view of one (the whole input: offset 0) */
            size_t k = 0;
            while (vc == FRT_VC_INPUT && k < g->n_inputs && g->inputs[k] != p->root[i]) k++;
            if (vc == FRT_VC_INPUT && k < g->n_inputs) {
                reg = REG_BUF;
                off = in_off[k];
            } else if (vc == FRT_VC_CONST || vc == FRT_VC_SHAPE) {
                reg = REG_CONST; /* a constant, or a shape value fixed by the shapes given */
                if (!v->data) {
                    st = frt_error(FRT_ERR_INTERNAL, "value '%s' has no data", g->values[i].name);
                    break;
                }
                while (cw->n % 64) frt_aot_put(cw, "", 1);
                off = cw->n;
                frt_aot_put(cw, v->data, nb);
            } else {
                st = frt_error(FRT_ERR_INTERNAL, "value '%s': memory of no known place",
                               g->values[i].name);
                break;
            }
        }
        if (reg == REG_CONST && !v->data) {
            st = frt_error(FRT_ERR_INTERNAL, "value '%s' has no data", g->values[i].name);
            break;
        }
        frt_aot_put_i32(w, v->dtype);
        frt_aot_put_i32(w, v->rank < 0 ? 0 : v->rank);
        frt_aot_put_i32(w, reg);
        frt_aot_put_i32(w, 0);
        frt_aot_put_i64(w, (int64_t)off);
        for (int d = 0; d < v->rank; d++) frt_aot_put_i64(w, v->dims[d]);
    }
    free(need);
    if (st) return st;
    for (size_t i = 0; i < g->n_inputs; i++) {
        frt_aot_put_i32(w, g->inputs[i]);
        put_str(w, g->values[g->inputs[i]].name);
    }
    for (size_t i = 0; i < g->n_outputs; i++) {
        frt_aot_put_i32(w, g->outputs[i]);
        put_str(w, g->values[g->outputs[i]].name);
    }
    for (size_t i = 0; i < b->n_run; i++) {
        const frt_step *s = b->run[i];
        int32_t pos = b->run_pos[i];
        const char *dom = s->ir->domain;
        const frt_aot_op *op = frt_aot_ops;
        if (!dom || !*dom || !strcmp(dom, "ai.onnx"))
            while (op->op_type && strcmp(op->op_type, s->ir->op_type)) op++;
        else
            while (op->op_type) op++;
        if (!op->op_type || !op->save)
            return frt_aot_unsupported(s, "this op has no writer yet");
        if (s->k.flags & FRT_K_DYNAMIC_OUT || p->deferred[p->compute[pos]])
            return frt_aot_unsupported(s, "outputs sized at run time");
        if ((s->k.flags & FRT_K_INPLACE) && s->k.inplace_in != 0) /* the loader checks input 0 */
            return frt_aot_unsupported(s, "runs in place over an input other than the first");
        put_str(w, op->op_type);
        put_str(w, s->ir->name);
        put_str(w, s->k.name);
        frt_aot_put_i32(w, s->n_in);
        frt_aot_put_i32(w, s->n_out);
        for (int j = 0; j < s->n_in; j++) frt_aot_put_i32(w, s->in[j]);
        for (int j = 0; j < s->n_out; j++) frt_aot_put_i32(w, s->out[j]);
        frt_aot_put_i64(w, (int64_t)b->plan.scratch_off[pos]);
        frt_aot_put_i64(w, (int64_t)b->plan.scratch_bytes[pos]);
        frt_aot_put_i32(w, (int32_t)s->k.const_copied);
        frt_aot_w pw = {0};
        frt_status st = op->save(s, &pw);
        if (!st && pw.oom) st = frt_error(FRT_ERR_NO_MEMORY, "out of memory");
        if (!st) frt_aot_put_blob(w, pw.p, pw.n);
        free(pw.p);
        if (st) return st;
    }
    frt_aot_put_blob(w, cw->p, cw->n);
    return w->oom || cw->oom ? frt_error(FRT_ERR_NO_MEMORY, "out of memory") : FRT_OK;
}

static frt_status program_write(const frt_model *m, const int64_t (*dims)[FRT_MAX_RANK],
                                const char *path) {
    const frt_graph *g = &m->g;
    if (m->n_blocks != 1)
        return frt_error(FRT_ERR_UNSUPPORTED, "models with subgraphs are not written yet");
    if (m->opt.num_threads > 1 || m->iop_threads > 1)
        return frt_error(FRT_ERR_UNSUPPORTED, "programs run on one thread: load with 1 thread");
    if (g->n_inputs > 64) return frt_error(FRT_ERR_UNSUPPORTED, "more than 64 graph inputs");
    frt_runtime *rt = NULL;
    frt_status st = frt_runtime_create(m, &rt);
    if (st) return st;
    const char *names[64];
    frt_tensor t[64];
    void *in[64] = {0};
    size_t in_bytes[64] = {0};
    memset(t, 0, sizeof t);
    for (size_t i = 0; i < g->n_inputs && !st; i++) {
        const frt_tensor_info *info = &m->inputs[i];
        names[i] = info->name;
        t[i].dtype = info->dtype;
        t[i].rank = info->rank;
        for (int d = 0; d < info->rank; d++) t[i].shape[d] = dims[i][d];
        int64_t n = frt_tensor_numel(&t[i]);
        if (n < 0) st = frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s': bad shape", info->name);
        in_bytes[i] = n < 0 ? 0 : (size_t)n * frt_dtype_size(info->dtype);
        t[i].nbytes = in_bytes[i];
        in[i] = st ? NULL : calloc(in_bytes[i] + 64, 1);
        t[i].data = in[i];
        if (!st && !in[i]) st = frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    }
    if (!st) st = frt_runtime_reshape(rt, names, t, g->n_inputs);
    frt_aot_w w = {0}, cw = {0};
    if (!st) {
        static const char magic[8] = FRT_AOT_MAGIC;
        frt_aot_put(&w, magic, sizeof magic);
        frt_aot_put_i32(&w, (int32_t)FRT_AOT_VERSION);
        frt_aot_put_i32(&w, (int32_t)frt_cpu_tier());
        frt_aot_put_i64(&w, 0); /* body length, patched below */
        frt_aot_put_i64(&w, 0); /* FNV-1a of the body */
        st = write_body(rt, in_bytes, &w, &cw);
    }
    if (!st) {
        int64_t len = (int64_t)(w.n - 32);
        uint64_t h = fnv1a64(w.p + 32, w.n - 32);
        memcpy(w.p + 16, &len, 8);
        memcpy(w.p + 24, &h, 8);
        FILE *f = fopen(path, "wb");
        if (!f) st = frt_error(FRT_ERR_IO, "cannot write '%s'", path);
        else if (fwrite(w.p, 1, w.n, f) != w.n)
            st = frt_error(FRT_ERR_IO, "cannot write '%s'", path);
        if (f && fclose(f) && !st) st = frt_error(FRT_ERR_IO, "cannot write '%s'", path);
    }
    free(w.p);
    free(cw.p);
    for (size_t i = 0; i < g->n_inputs; i++) free(in[i]);
    frt_runtime_free(rt);
    return st;
}

frt_status frt_model_write_program(const frt_model *m, const char *const *names,
                                   const frt_tensor *inputs, size_t n, const char *path) {
    if (!m || !path || (n && (!names || !inputs)))
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_model_write_program: NULL argument");
    const frt_graph *g = &m->g;
    if (n != g->n_inputs || n > 64)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_model_write_program: %zu input shapes "
                         "given, the model has %zu inputs", n, g->n_inputs);
    int64_t dims[64][FRT_MAX_RANK];
    for (size_t i = 0; i < n; i++) {
        const frt_tensor_info *info = &m->inputs[i];
        size_t j = 0;
        while (j < n && !(names[j] && !strcmp(names[j], info->name))) j++;
        if (j == n) return frt_error(FRT_ERR_INVALID_ARGUMENT, "missing input '%s'", info->name);
        const frt_tensor *t = &inputs[j];
        if (t->rank != info->rank || (int32_t)t->dtype != (int32_t)info->dtype)
            return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s': dtype or rank differs from the "
                             "model's", info->name);
        for (int d = 0; d < t->rank; d++) {
            if (t->shape[d] < 0 || (info->shape[d] >= 0 && t->shape[d] != info->shape[d]))
                return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s': dim %d is %lld, the model "
                                 "has %lld", info->name, d, (long long)t->shape[d],
                                 (long long)info->shape[d]);
            dims[i][d] = t->shape[d];
        }
    }
    return program_write(m, (const int64_t(*)[FRT_MAX_RANK])dims, path);
}

#else

frt_status frt_model_write_program(const frt_model *m, const char *const *names,
                                   const frt_tensor *inputs, size_t n, const char *path) {
    (void)m;
    (void)names;
    (void)inputs;
    (void)n;
    (void)path;
    return frt_error(FRT_ERR_UNSUPPORTED, "programs are written by a full build");
}

#endif
