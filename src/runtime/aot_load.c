/* Ahead-of-time programs: the loader and runtime of a -DFRT_AOT_ONLY=ON build (docs/selective.md
 * "Ahead-of-time programs"). It implements the loading, description and run calls of flatrt.h
 * (frt_model_load / frt_model_load_program, frt_model_num_inputs/outputs, frt_model_input/output,
 * frt_runtime_create/free, frt_run, frt_tensor_release/numel) over a program written by
 * `flatrt compile` (src/runtime/aot_write.c), without the ONNX decoder, IR, passes, compile, planner or
 * any op's infer / select.
 *
 * A program is untrusted input. The loader checks the header (magic, version, the ISA tier: the
 * host's current tier must be the one the program was written at), the body's length and FNV-1a
 * checksum, and then every field as it reads it: dtypes, ranks, dims (>= 0, sizes without
 * overflow), each value's byte range inside the run memory or the constants, element alignment,
 * every value id and scratch range of every step, and each kernel's parameters and the shapes of
 * its values (the op's load function, src/ops/aot.h). A file that fails gets FRT_ERR_MALFORMED
 * with what failed; nothing is read outside the file's bytes.
 *
 * Run memory (one block per runtime): the memory plan's slab, the graph outputs and a copy of the
 * graph inputs, at the offsets the program gives. frt_run copies each input in (its shape must be
 * the one the program was written for), runs the steps in order and hands out the outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/aot.h"
#include "out_tensor.h"
#include "util/arena.h"

#if !FRT_AOT_LOAD
/* Other builds load ONNX models only. */
frt_status frt_model_load_program(const char *path, const frt_options *opt, frt_model **out) {
    (void)path;
    (void)opt;
    if (out) *out = NULL;
    return frt_error(FRT_ERR_UNSUPPORTED, "programs run in a build with -DFRT_AOT_ONLY=ON");
}
#endif

#if FRT_AOT_LOAD

enum { REG_NONE = 0, REG_CONST = 1, REG_BUF = 2 };
#define MAX_BYTES ((int64_t)1 << 40)
#define MAX_IO 64

typedef struct aot_io {
    int32_t v;
    char *name;
} aot_io;

struct frt_model {
    frt_arena arena;      /* everything below */
    frt_isa isa;
    size_t n_values, n_inputs, n_outputs, n_steps;
    frt_value *tmpl;      /* values; data of REG_CONST values set, others NULL */
    uint8_t *reg;         /* per value */
    int64_t *off;         /* per value: byte offset in its region */
    aot_io *inputs, *outputs;
    frt_step *steps;
    int64_t *scratch_off, *scratch_bytes;
    frt_node *nodes;      /* per step: name and op_type for messages */
    size_t buf_bytes;
    unsigned char *consts;
};

struct frt_runtime {
    const frt_model *m;
    frt_value *v;
    unsigned char *buf;
};

static void *arena_mem(void *ctx, size_t n) { return frt_arena_alloc(ctx, n ? n : 1, 64); }

static uint64_t fnv1a64(const unsigned char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static frt_status bad(const char *what) {
    return frt_error(FRT_ERR_MALFORMED, "program file: %s", what);
}

static char *get_str(frt_aot_r *r, frt_arena *a) {
    int64_t n = frt_aot_i64(r);
    if (r->bad || n < 0 || n > 4096 || (uint64_t)n > r->n - r->at) {
        r->bad = true;
        return NULL;
    }
    char *s = frt_arena_strndup(a, (const char *)r->p + r->at, (size_t)n);
    if (!s) r->bad = true;
    r->at += (size_t)n;
    return s;
}

/* Reads the body (after the header) into m. */
static frt_status read_body(frt_model *m, frt_aot_r *r) {
    frt_arena *a = &m->arena;
    int64_t nv = frt_aot_i64(r), ni = frt_aot_i64(r), no = frt_aot_i64(r), ns = frt_aot_i64(r);
    int64_t buf = frt_aot_i64(r);
    if (r->bad) return bad("truncated header fields");
    if (nv < 0 || nv > 1000000 || ni < 0 || ni > MAX_IO || no < 0 || no > MAX_IO || ns < 0 ||
        ns > 1000000 || buf < 0 || buf > MAX_BYTES)
        return bad("counts out of range");
    m->n_values = (size_t)nv;
    m->n_inputs = (size_t)ni;
    m->n_outputs = (size_t)no;
    m->n_steps = (size_t)ns;
    m->buf_bytes = (size_t)buf;
    m->tmpl = frt_arena_array(a, m->n_values + 1, sizeof *m->tmpl);
    m->reg = frt_arena_array(a, m->n_values + 1, 1);
    m->off = frt_arena_array(a, m->n_values + 1, sizeof *m->off);
    m->inputs = frt_arena_array(a, m->n_inputs + 1, sizeof *m->inputs);
    m->outputs = frt_arena_array(a, m->n_outputs + 1, sizeof *m->outputs);
    m->steps = frt_arena_array(a, m->n_steps + 1, sizeof *m->steps);
    m->scratch_off = frt_arena_array(a, m->n_steps + 1, sizeof *m->scratch_off);
    m->scratch_bytes = frt_arena_array(a, m->n_steps + 1, sizeof *m->scratch_bytes);
    m->nodes = frt_arena_array(a, m->n_steps + 1, sizeof *m->nodes);
    if (!m->tmpl || !m->reg || !m->off || !m->inputs || !m->outputs || !m->steps ||
        !m->scratch_off || !m->scratch_bytes || !m->nodes)
        return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < m->n_values; i++) {
        frt_value *v = &m->tmpl[i];
        memset(v, 0, sizeof *v);
        v->dtype = frt_aot_i32(r);
        v->rank = frt_aot_int_in(r, 0, FRT_MAX_RANK);
        m->reg[i] = (uint8_t)frt_aot_int_in(r, REG_NONE, REG_BUF);
        frt_aot_i32(r);
        m->off[i] = frt_aot_i64(r);
        int64_t numel = 1;
        for (int d = 0; d < v->rank; d++) {
            v->dims[d] = frt_aot_i64(r);
            if (v->dims[d] < 0 || v->dims[d] > MAX_BYTES ||
                (v->dims[d] && numel > MAX_BYTES / v->dims[d]))
                return bad("value dims out of range");
            numel *= v->dims[d];
        }
        if (r->bad) return bad("truncated value table");
        size_t es =
            v->dtype > 0 && v->dtype != FRT_STRING ? frt_dtype_size((frt_dtype)v->dtype) : 0;
        if (!es && m->reg[i] != REG_NONE) return bad("value of a dtype without fixed size");
        v->numel = numel;
        if (m->reg[i] != REG_NONE &&
            (m->off[i] < 0 || m->off[i] % (int64_t)es || numel > MAX_BYTES / (int64_t)es))
            return bad("value offset out of range");
    }
    for (int k = 0; k < 2; k++) {
        aot_io *io = k ? m->outputs : m->inputs;
        size_t n = k ? m->n_outputs : m->n_inputs;
        for (size_t i = 0; i < n; i++) {
            io[i].v = frt_aot_int_in(r, 0, (int32_t)m->n_values - 1);
            io[i].name = get_str(r, a);
            if (r->bad) return bad("truncated or bad input / output table");
            if (m->reg[io[i].v] != REG_BUF && (k == 0 || m->reg[io[i].v] != REG_CONST))
                return bad("input / output without memory");
        }
    }
    for (size_t i = 0; i < m->n_steps; i++) {
        frt_step *s = &m->steps[i];
        frt_node *nd = &m->nodes[i];
        char *op = get_str(r, a);
        nd->name = get_str(r, a);
        char *kname = get_str(r, a);
        int32_t n_in = frt_aot_int_in(r, 0, 64), n_out = frt_aot_int_in(r, 1, 64);
        if (r->bad) return bad("truncated step");
        int32_t *ids = frt_arena_array(a, (size_t)(n_in + n_out), sizeof *ids);
        if (!ids) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
        for (int j = 0; j < n_in + n_out; j++)
            ids[j] = frt_aot_int_in(r, j < n_in ? -1 : 0, (int32_t)m->n_values - 1);
        int64_t so = frt_aot_i64(r), sb = frt_aot_i64(r);
        uint32_t copied = (uint32_t)frt_aot_i32(r); /* inputs the kernel never reads */
        if (r->bad) return bad("truncated step or value id out of range");
        if (so < 0 || sb < 0 || so > (int64_t)m->buf_bytes || sb > (int64_t)m->buf_bytes - so)
            return bad("scratch out of range");
        for (int j = 0; j < n_in + n_out; j++)
            if (ids[j] >= 0 && m->reg[ids[j]] == REG_NONE && m->tmpl[ids[j]].numel &&
                !(j < 32 && j < n_in && (copied >> j & 1)))
                return bad("step reads or writes a value without memory");
        for (int j = n_in; j < n_in + n_out; j++)
            if (m->reg[ids[j]] != REG_BUF) return bad("step writes a constant");
        nd->op_type = op;
        s->in = ids;
        s->out = ids + n_in;
        s->n_in = n_in;
        s->n_out = n_out;
        s->node = (int32_t)i;
        s->ir = nd;
        s->k.name = kname;
        s->k.const_copied = copied;
        m->scratch_off[i] = so;
        m->scratch_bytes[i] = sb;
        const frt_aot_op *o = frt_aot_ops;
        while (o->op_type && strcmp(o->op_type, op)) o++;
        if (!o->op_type)
            return frt_error(FRT_ERR_UNSUPPORTED, "program file: step %zu: op '%s' not in this "
                             "build's selection", i, op);
        int64_t plen = frt_aot_i64(r);
        if (r->bad || plen < 0 || (uint64_t)plen > r->n - r->at)
            return bad("truncated step parameters");
        frt_aot_r pr = {r->p + r->at, (size_t)plen, 0, false, arena_mem, a};
        r->at += (size_t)plen;
        frt_status st = o->load(&pr, m->isa, s, m->tmpl, &s->k);
        if (pr.bad || (!st && pr.at != pr.n))
            return frt_error(FRT_ERR_MALFORMED, "program file: step %zu (op '%s', node '%s'): "
                             "parameters truncated or out of range", i, op, nd->name);
        if (st)
            return frt_error_context(st, "program file: step %zu (op '%s', node '%s')", i, op,
                                     nd->name);
        if (s->k.scratch && s->k.scratch(s, m->tmpl) > (size_t)sb)
            return frt_error(FRT_ERR_MALFORMED, "program file: step %zu (op '%s', node '%s'): "
                             "scratch smaller than the kernel needs", i, op, nd->name);
        s->k.name = kname;
    }
    size_t nc = 0;
    m->consts = frt_aot_blob(r, (size_t)-1, &nc);
    if (r->bad) return bad("truncated constants");
    if (r->at != r->n) return bad("bytes after the constants");
    for (size_t i = 0; i < m->n_values; i++) {
        if (m->reg[i] == REG_NONE) continue;
        size_t nb = frt_value_nbytes(&m->tmpl[i]);
        size_t lim = m->reg[i] == REG_CONST ? nc : m->buf_bytes;
        if ((uint64_t)m->off[i] > lim || nb > lim - (size_t)m->off[i])
            return bad("value outside its memory");
        if (m->reg[i] == REG_CONST) m->tmpl[i].data = m->consts + m->off[i];
    }
    /* what a step writes (outputs, scratch) overlaps nothing else it touches, except an output
       that is exactly input 0 of a kernel that may run in place (FRT_K_INPLACE: the plan puts
       output 0 over input 0 of the same size; another input may be that same value) */
    for (size_t i = 0; i < m->n_steps; i++) {
        const frt_step *s = &m->steps[i];
        int32_t in0 = s->n_in > 0 ? s->in[0] : -1, out0 = s->out[0];
        bool alias0 = (s->k.flags & FRT_K_INPLACE) && in0 >= 0 && m->reg[in0] == REG_BUF &&
                      m->off[in0] == m->off[out0] &&
                      frt_value_nbytes(&m->tmpl[in0]) == frt_value_nbytes(&m->tmpl[out0]);
        for (int j = 0; j <= s->n_out; j++) {
            int64_t wo, wn;
            if (j < s->n_out) {
                wo = m->off[s->out[j]];
                wn = (int64_t)frt_value_nbytes(&m->tmpl[s->out[j]]);
            } else {
                wo = m->scratch_off[i];
                wn = m->scratch_bytes[i];
            }
            for (int k = 0; k < s->n_in + s->n_out; k++) {
                int32_t v = k < s->n_in ? s->in[k] : s->out[k - s->n_in];
                if (v < 0 || m->reg[v] != REG_BUF || (j < s->n_out && k == s->n_in + j)) continue;
                int64_t o = m->off[v], n = (int64_t)frt_value_nbytes(&m->tmpl[v]);
                bool same = j == 0 && k < s->n_in && alias0 && o == wo && n == wn;
                if (!same && wn && n && o < wo + wn && wo < o + n)
                    return bad("a step writes over memory it reads or writes elsewhere");
            }
        }
    }
    return FRT_OK;
}

frt_status frt_model_load_program_buffer(const void *data, size_t size, frt_model **out) {
    if (!out) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_model_load_program: out is NULL");
    *out = NULL;
    const unsigned char *p = data;
    if (!p || size < 32 || memcmp(p, FRT_AOT_MAGIC, 8))
        return bad("not a flatrt program (no FRTPROG header): write one with `flatrt compile`");
    uint32_t version, isa;
    int64_t len;
    uint64_t h;
    memcpy(&version, p + 8, 4);
    memcpy(&isa, p + 12, 4);
    memcpy(&len, p + 16, 8);
    memcpy(&h, p + 24, 8);
    if (version != FRT_AOT_VERSION)
        return frt_error(FRT_ERR_UNSUPPORTED, "program file: version %u, this build reads %u",
                         version, FRT_AOT_VERSION);
    if (isa > FRT_ISA_AVX512 || (frt_isa)isa != frt_cpu_tier())
        return frt_error(FRT_ERR_UNSUPPORTED, "program file: written for ISA tier %s, this host "
                         "runs at %s (a program runs at the tier it was written at; FRT_ISA "
                         "caps it)", isa <= FRT_ISA_AVX512 ? frt_isa_name((frt_isa)isa) : "?",
                         frt_isa_name(frt_cpu_tier()));
    if (len < 0 || (uint64_t)len != size - 32)
        return bad(len >= 0 && (uint64_t)len > size - 32 ? "truncated" : "length mismatch");
    if (fnv1a64(p + 32, (size_t)len) != h) return bad("checksum mismatch (corrupted)");
    frt_model *m = calloc(1, sizeof *m);
    if (!m) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    frt_arena_init(&m->arena);
    m->isa = (frt_isa)isa;
    frt_aot_r r = {p + 32, (size_t)len, 0, false, arena_mem, &m->arena};
    frt_status st = read_body(m, &r);
    if (st) {
        frt_model_free(m);
        return st;
    }
    *out = m;
    return FRT_OK;
}

frt_status frt_model_load_program(const char *path, const frt_options *opt, frt_model **out) {
    if (out) *out = NULL;
    if (!path || !out)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_model_load_program: NULL argument");
    if (opt && (opt->num_threads > 1 || opt->inter_op_threads > 1))
        return frt_error(FRT_ERR_UNSUPPORTED, "programs run on one thread");
    FILE *f = fopen(path, "rb");
    if (!f) return frt_error(FRT_ERR_IO, "cannot open '%s'", path);
    unsigned char *d = NULL;
    size_t n = 0, cap = 0;
    frt_status st = FRT_OK;
    for (;;) {
        if (cap - n < 65536) {
            unsigned char *nd = cap > SIZE_MAX / 4 ? NULL : realloc(d, cap * 2 + 65536);
            if (!nd) {
                st = frt_error(FRT_ERR_NO_MEMORY, "out of memory reading '%s'", path);
                break;
            }
            d = nd;
            cap = cap * 2 + 65536;
        }
        size_t k = fread(d + n, 1, cap - n, f);
        n += k;
        if (k == 0) {
            if (ferror(f)) st = frt_error(FRT_ERR_IO, "cannot read '%s'", path);
            break;
        }
    }
    fclose(f);
    if (!st) st = frt_model_load_program_buffer(d, n, out);
    free(d);
    return st;
}

frt_status frt_model_load(const char *path, const frt_options *opt, frt_model **out) {
    return frt_model_load_program(path, opt, out);
}

void frt_model_free(frt_model *m) {
    if (!m) return;
    frt_arena_free(&m->arena);
    free(m);
}

size_t frt_model_num_inputs(const frt_model *m) { return m ? m->n_inputs : 0; }
size_t frt_model_num_outputs(const frt_model *m) { return m ? m->n_outputs : 0; }

static frt_status io_info(const frt_model *m, size_t i, frt_tensor_info *info, int out) {
    if (!m || !info || i >= (out ? m->n_outputs : m->n_inputs))
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_model_%s: bad argument",
                         out ? "output" : "input");
    const aot_io *io = out ? &m->outputs[i] : &m->inputs[i];
    const frt_value *v = &m->tmpl[io->v];
    memset(info, 0, sizeof *info);
    info->name = io->name;
    info->dtype = (frt_dtype)v->dtype;
    info->rank = v->rank;
    memcpy(info->shape, v->dims, sizeof info->shape);
    info->kind = FRT_KIND_TENSOR;
    info->elem_kind = FRT_KIND_TENSOR;
    return FRT_OK;
}

frt_status frt_model_input(const frt_model *m, size_t i, frt_tensor_info *info) {
    return io_info(m, i, info, 0);
}
frt_status frt_model_output(const frt_model *m, size_t i, frt_tensor_info *info) {
    return io_info(m, i, info, 1);
}

frt_status frt_runtime_create(const frt_model *m, frt_runtime **out) {
    if (!m || !out) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_create: NULL argument");
    *out = NULL;
    frt_runtime *rt = calloc(1, sizeof *rt);
    if (!rt) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    rt->m = m;
    rt->v = malloc((m->n_values + 1) * sizeof *rt->v);
    rt->buf = aligned_alloc(64, (m->buf_bytes + 64) & ~(size_t)63);
    if (!rt->v || !rt->buf) {
        frt_runtime_free(rt);
        return frt_error(FRT_ERR_NO_MEMORY, "out of memory for the run memory (%zu bytes)",
                         m->buf_bytes);
    }
    memcpy(rt->v, m->tmpl, m->n_values * sizeof *rt->v);
    for (size_t i = 0; i < m->n_values; i++)
        if (m->reg[i] == REG_BUF) rt->v[i].data = rt->buf + m->off[i];
    *out = rt;
    return FRT_OK;
}

void frt_runtime_free(frt_runtime *rt) {
    if (!rt) return;
    free(rt->v);
    free(rt->buf);
    free(rt);
}

void frt_tensor_release(frt_tensor *t) {
    if (!t) return;
    free(t->_owner);
    memset(t, 0, sizeof *t);
}

int64_t frt_tensor_numel(const frt_tensor *t) {
    if (!t || t->rank < 0 || t->rank > FRT_MAX_RANK) return -1;
    return frt_shape_numel(t->shape, t->rank);
}

frt_status frt_run(frt_runtime *rt, const char *const *names, const frt_tensor *inputs, size_t n_in,
                   frt_tensor *outputs, size_t n_out, frt_output_mode mode) {
    if (!rt) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_run: runtime is NULL");
    const frt_model *m = rt->m;
    if (n_out > m->n_outputs || (n_out && !outputs) || (n_in && (!names || !inputs)))
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_run: bad arguments");
    if (mode != FRT_OUTPUTS_ALLOC && mode != FRT_OUTPUTS_CALLER && mode != FRT_OUTPUTS_BORROW)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_run: unknown output mode %d", (int)mode);
    if (n_in != m->n_inputs)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_run: %zu inputs given, the program has %zu",
                         n_in, m->n_inputs);
    for (size_t i = 0; i < m->n_inputs; i++) {
        const aot_io *io = &m->inputs[i];
        size_t j = 0;
        while (j < n_in && !(names[j] && !strcmp(names[j], io->name))) j++;
        if (j == n_in) return frt_error(FRT_ERR_INVALID_ARGUMENT, "missing input '%s'", io->name);
        const frt_tensor *t = &inputs[j];
        const frt_value *v = &m->tmpl[io->v];
        if ((int32_t)t->dtype != v->dtype || t->rank != v->rank ||
            memcmp(t->shape, v->dims, (size_t)v->rank * sizeof *v->dims))
            return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s': dtype or shape differs from "
                             "the program's (programs have the shapes they were compiled for)",
                             io->name);
        size_t nb = frt_value_nbytes(v);
        if (t->nbytes < nb || (nb && !t->data))
            return frt_error(FRT_ERR_INVALID_ARGUMENT, "input '%s': %zu bytes given, %zu needed",
                             io->name, t->nbytes, nb);
        if (nb) memcpy(rt->v[io->v].data, t->data, nb);
    }
    frt_exec x = {rt->v, NULL, NULL, NULL, NULL};
    for (size_t i = 0; i < m->n_steps; i++) {
        const frt_step *s = &m->steps[i];
        x.scratch = rt->buf + m->scratch_off[i];
        frt_status st = s->k.fn(s, &x);
        if (st) return st;
    }
    for (size_t i = 0; i < n_out; i++) {
        const frt_value *v = &rt->v[m->outputs[i].v];
        frt_tensor *t = &outputs[i];
        size_t nb = frt_value_nbytes(v);
        if (mode == FRT_OUTPUTS_CALLER) {
            if (t->nbytes < nb || (nb && !t->data))
                return frt_error(FRT_ERR_INVALID_ARGUMENT,
                                 "output '%s' needs %zu bytes, buffer has %zu", m->outputs[i].name,
                                 nb, t->nbytes);
            if (nb) memcpy(t->data, v->data, nb);
            t->_owner = NULL;
        } else if (mode == FRT_OUTPUTS_ALLOC) {
            void *d = malloc(nb ? nb : 1);
            if (!d) {
                for (size_t k = 0; k < i; k++) frt_tensor_release(&outputs[k]);
                return frt_error(FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for output '%s'",
                                 nb, m->outputs[i].name);
            }
            if (nb) memcpy(d, v->data, nb);
            t->data = d;
            t->_owner = d;
        } else {
            t->data = v->data;
            t->_owner = NULL;
        }
        frt_out_tensor_describe(t, v, nb);
    }
    return FRT_OK;
}

#endif
