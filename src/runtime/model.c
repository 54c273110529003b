/* frt_model: load (map, decode, build IR, compile) and introspection. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"
#include "ops/cpu.h"
#include "ops/op.h"
#include "util/seltrace.h"
#include "interop.h"

void frt_options_init(frt_options *opt) {
    memset(opt, 0, sizeof *opt);
    opt->num_threads = 1;
    opt->planner = FRT_PLANNER_STANDARD;
    opt->fold_constants = 1;
    opt->fuse = 1;
    opt->inter_op_threads = 1;
}

static frt_status fill_info(const frt_model *m, int32_t vid, frt_tensor_info *info) {
    const frt_ir_value *v = &m->g.values[vid];
    memset(info, 0, sizeof *info);
    info->name = v->name;
    info->dtype = (frt_dtype)v->v.dtype;
    info->rank = v->v.rank;
    if (v->v.vtype) {
        info->kind = v->v.vtype == FRT_VT_SEQUENCE ? FRT_KIND_SEQUENCE : FRT_KIND_OPTIONAL;
        info->elem_kind = v->v.vtype == FRT_VT_OPT_SEQUENCE ? FRT_KIND_SEQUENCE : FRT_KIND_TENSOR;
        info->rank = -1;
        return FRT_OK;
    }
    for (int d = 0; d < v->v.rank && d < FRT_MAX_RANK; d++) {
        info->shape[d] = v->v.dims[d];
        info->dim_names[d] = v->v.dims[d] < 0 ? v->dim_names[d] : NULL;
    }
    return FRT_OK;
}

/* Constant bytes nothing reads any more: when they lie in a mapping flatrt made (the model file or
 * an external-data file, both private read-only mappings), the whole pages inside them go back to
 * the page cache; they would fault back in unchanged from the file. Bytes in a caller's buffer are
 * never touched. */
static void release_model_bytes(void *ctx, const void *data, size_t nbytes) {
    const frt_model *m = ctx;
    uintptr_t a = (uintptr_t)data, e = a + nbytes;
    bool own = m->map && a >= (uintptr_t)m->map && e <= (uintptr_t)m->map + m->map_len;
    for (size_t i = 0; !own && m->onnx && i < m->onnx->n_maps; i++) {
        uintptr_t lo = (uintptr_t)m->onnx->maps[i].addr;
        own = a >= lo && e <= lo + m->onnx->maps[i].len;
    }
    if (!own) return;
    long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0) return;
    uintptr_t lo = (a + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1), hi = e & ~((uintptr_t)pg - 1);
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

static frt_status finish_load(frt_model *m, const void *data, size_t size, const char *base_dir,
                              const frt_op_source *src) {
    const char *cp = getenv("FRT_CHECK_PLAN");
    m->check_plan = cp && cp[0] == '1';
#if defined(FRT_SELECTIVE) && FRT_SELECTIVE
    /* the plan checker (a debugging aid) is not in selective builds: refused, not ignored */
    if (m->check_plan)
        return frt_error(FRT_ERR_UNSUPPORTED, "FRT_CHECK_PLAN=1: the plan checker is not in this "
                         "selective build (%s); unset it, or check with a full build",
                         frt_selection_file());
#endif
    frt_status st = frt_onnx_decode(data, size, &m->onnx);
    if (st) return st;
    st = frt_onnx_map_external(m->onnx, base_dir);
    if (st) return st;
    st = frt_graph_build(m->onnx, &m->arena, release_model_bytes, m, &m->g);
    if (st) return st;
    frt_graph *g = &m->g;

    /* statistics of the original graph, before passes change it */
    m->stats.opset = g->opset;
    const char *pn = m->onnx->producer_name ? m->onnx->producer_name : "";
    const char *pv = m->onnx->producer_version ? m->onnx->producer_version : "";
    size_t plen = strlen(pn) + strlen(pv) + 2;
    char *prod = frt_arena_alloc(&m->arena, plen, 1);
    if (!prod) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    snprintf(prod, plen, "%s%s%s", pn, pv[0] ? " " : "", pv);
    m->stats.producer = prod;
    m->stats.num_nodes = g->n_nodes;
    for (size_t i = 0; i < g->n_values; i++) {
        const frt_ir_value *v = &g->values[i];
        if (v->kind != FRT_VALUE_CONST) continue;
        size_t nb = frt_value_nbytes(&v->v);
        m->stats.num_params += (size_t)(v->v.numel > 0 ? v->v.numel : 0);
        m->stats.param_bytes += nb;
        if (v->in_place) m->stats.mapped_bytes += nb;
        else m->stats.copied_bytes += nb;
    }
    m->op_types = frt_arena_array(&m->arena, g->n_nodes + 1, sizeof *m->op_types);
    if (!m->op_types) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < g->n_nodes; i++) {
        size_t t = 0;
        while (t < m->n_op_types && strcmp(m->op_types[t].op_type, g->nodes[i].op_type) != 0) t++;
        if (t == m->n_op_types) m->op_types[m->n_op_types++].op_type = g->nodes[i].op_type;
        m->op_types[t].count++;
    }
    /* declared input/output infos (before inference fills output shapes) */
    m->inputs = frt_arena_array(&m->arena, g->n_inputs + 1, sizeof *m->inputs);
    m->outputs = frt_arena_array(&m->arena, g->n_outputs + 1, sizeof *m->outputs);
    if (!m->inputs || !m->outputs) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < g->n_inputs; i++) fill_info(m, g->inputs[i], &m->inputs[i]);

    frt_compile_stats cs;
    size_t n_prov;
    /* kernels plan for the largest intra-op pool a step may get: with inter-op threads, the
       pool has max(num_threads, inter_op_threads) threads (runtime.c, interop.c) */
    int pool = m->opt.num_threads;
    if (m->opt.inter_op_threads > pool) pool = m->opt.inter_op_threads;
    const frt_provider *const *prov = frt_providers_for_threads(pool, &n_prov);
    st = frt_compile_blocks(g, &m->opt, prov, n_prov, src, &m->arena, &m->blocks, &m->n_blocks,
                            &cs);
    if (st) return st;
    m->stats.num_folded = cs.num_folded;
    m->stats.num_fused = cs.num_fused;
    m->stats.transformed_bytes = cs.transformed_bytes;
    m->stats.num_steps = m->blocks[0].prog->n_steps;
    /* inter-op parallelism runs the steps of the model's graph (block 0) by their DAG */
    m->iop_threads = 1;
    if (m->opt.inter_op_threads > 1) {
        st = frt_dag_build(m->blocks[0].prog, g, &m->arena);
        if (st) return st;
        st = frt_iop_decide(m);
        if (st) return st;
    }
    for (size_t i = 0; i < g->n_outputs; i++) fill_info(m, g->outputs[i], &m->outputs[i]);

    /* Drop weight copies nobody reads any more (originals of folded or repacked weights), and let
       the kernel page cache take back mapped pages: those still used fault back in on first
       use, the rest no longer count against the process. */
    for (size_t b = 0; b < m->n_blocks; b++) frt_graph_release_temps(m->blocks[b].g);
    if (m->map && m->map_len) madvise(m->map, m->map_len, MADV_DONTNEED);
    for (size_t i = 0; i < m->onnx->n_maps; i++)
        madvise(m->onnx->maps[i].addr, m->onnx->maps[i].len, MADV_DONTNEED);

    for (size_t b = 0; b < m->n_blocks; b++) {
        const frt_graph *bg = m->blocks[b].g;
        frt_value *tmpl = frt_arena_array(&m->arena, bg->n_values + 1, sizeof *tmpl);
        if (!tmpl) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
        for (size_t i = 0; i < bg->n_values; i++) {
            tmpl[i] = bg->values[i].v;
            if (m->blocks[b].prog->vclass[i] != FRT_VC_CONST) tmpl[i].data = NULL;
        }
        m->blocks[b].tmpl = tmpl;
    }
    const char *is = getenv("FRT_INTEROP_SERIAL");
    m->interop_serial = is && is[0] == '1';
    return FRT_OK;
}

static frt_status new_model(const frt_options *opt, frt_model **out) {
    frt_model *m = calloc(1, sizeof *m);
    if (!m) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    if (opt) m->opt = *opt;
    else frt_options_init(&m->opt);
    if (m->opt.num_threads < 1 || m->opt.num_threads > FRT_MAX_THREADS) {
        int n = m->opt.num_threads;
        free(m);
        return frt_error(FRT_ERR_INVALID_ARGUMENT,
                         "num_threads is %d; it must be 1 to %d (frt_options_init sets 1)", n,
                         FRT_MAX_THREADS);
    }
    if (m->opt.inter_op_threads < 1 || m->opt.inter_op_threads > FRT_MAX_THREADS) {
        int n = m->opt.inter_op_threads;
        free(m);
        return frt_error(FRT_ERR_INVALID_ARGUMENT,
                         "inter_op_threads is %d; it must be 1 to %d (frt_options_init sets 1)", n,
                         FRT_MAX_THREADS);
    }
    frt_status tst = frt_threadpool_check(m->opt.num_threads > m->opt.inter_op_threads
                                              ? m->opt.num_threads : m->opt.inter_op_threads);
    if (tst) {
        free(m);
        return tst;
    }
    if (m->opt.planner != FRT_PLANNER_STANDARD && m->opt.planner != FRT_PLANNER_NONE &&
        m->opt.planner != FRT_PLANNER_GREEDY) {
        int pl = (int)m->opt.planner;
        free(m);
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "unknown planner %d", pl);
    }
    if ((tst = frt_plan_available(m->opt.planner))) {
        free(m);
        return tst;
    }
    if (m->opt.weights_precision != FRT_WEIGHTS_FP32 &&
        m->opt.weights_precision != FRT_WEIGHTS_FP16 &&
        m->opt.weights_precision != FRT_WEIGHTS_BF16) {
        int wp = (int)m->opt.weights_precision;
        free(m);
        return frt_error(FRT_ERR_INVALID_ARGUMENT,
                         "unknown weights_precision %d (0 fp32, 1 fp16, 2 bf16)", wp);
    }
    if (m->opt.weights_precision != FRT_WEIGHTS_FP32) {
        if (FRT_SELTRACE_ON) frt_seltrace_feature("half_weights");
        if (!FRT_HALF_WEIGHTS) {
            const char *wn = m->opt.weights_precision == FRT_WEIGHTS_FP16 ? "fp16" : "bf16";
            free(m);
            return frt_error(FRT_ERR_UNSUPPORTED,
                             "weights_precision %s: feature 'half_weights' not in this build's "
                             "selection (%s); trace with --weights %s to keep it",
                             wn, frt_selection_file(), wn);
        }
    }
    frt_arena_init(&m->arena);
    *out = m;
    return FRT_OK;
}

frt_status frt_model_load_buffer(const void *data, size_t size, const char *base_dir,
                                 const frt_options *opt, frt_model **out) {
    return frt_model_load_buffer_with(data, size, base_dir, opt, NULL, out);
}

frt_status frt_model_load_buffer_with(const void *data, size_t size, const char *base_dir,
                                      const frt_options *opt, const frt_op_source *src,
                                      frt_model **out) {
    if (!out) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_model_load_buffer: out is NULL");
    *out = NULL;
    if (!data && size) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_model_load_buffer: data is NULL");
    frt_model *m;
    frt_status st = new_model(opt, &m);
    if (st) return st;
    st = finish_load(m, data, size, base_dir, src);
    if (st) {
        frt_model_free(m);
        return st;
    }
    *out = m;
    return FRT_OK;
}

frt_status frt_model_load(const char *path, const frt_options *opt, frt_model **out) {
    if (!out || !path) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_model_load: NULL argument");
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return frt_error(FRT_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return frt_error(FRT_ERR_IO, "'%s' is not a regular file", path);
    }
    size_t len = (size_t)sb.st_size;
    void *map = NULL;
    if (len > 0) {
        map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            int e = errno;
            close(fd);
            return frt_error(FRT_ERR_IO, "cannot map '%s': %s", path, strerror(e));
        }
    }
    close(fd);
    frt_model *m;
    frt_status st = new_model(opt, &m);
    if (st) {
        if (map) munmap(map, len);
        return st;
    }
    m->map = map;
    m->map_len = len;
    /* external data lives next to the model */
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (slash) {
        size_t dl = (size_t)(slash - path);
        if (dl >= sizeof dir) dl = sizeof dir - 1;
        memcpy(dir, path, dl);
        dir[dl] = 0;
        if (dl == 0) strcpy(dir, "/");
    } else {
        strcpy(dir, ".");
    }
    st = finish_load(m, map, len, dir, NULL);
    if (st) {
        frt_error_context(st, "%s", path);
        frt_model_free(m);
        return st;
    }
    *out = m;
    return FRT_OK;
}

void frt_model_free(frt_model *m) {
    if (!m) return;
    frt_blocks_release(m->blocks, m->n_blocks); /* kernel params may refer to the model's memory */
    frt_onnx_model_free(m->onnx);
    frt_graph_free_temps(&m->g);
    frt_arena_free(&m->arena);
    if (m->map) munmap(m->map, m->map_len);
    free(m);
}

size_t frt_model_num_inputs(const frt_model *m) { return m ? m->g.n_inputs : 0; }
size_t frt_model_num_outputs(const frt_model *m) { return m ? m->g.n_outputs : 0; }

frt_status frt_model_input(const frt_model *m, size_t i, frt_tensor_info *info) {
    if (!m || !info || i >= m->g.n_inputs)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_model_input: index %zu out of range", i);
    *info = m->inputs[i];
    return FRT_OK;
}

frt_status frt_model_output(const frt_model *m, size_t i, frt_tensor_info *info) {
    if (!m || !info || i >= m->g.n_outputs)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_model_output: index %zu out of range", i);
    *info = m->outputs[i];
    return FRT_OK;
}

void frt_model_get_stats(const frt_model *m, frt_model_stats *s) {
    if (m && s) *s = m->stats;
}

size_t frt_model_num_op_types(const frt_model *m) { return m ? m->n_op_types : 0; }

void frt_model_op_type(const frt_model *m, size_t i, const char **op_type, size_t *count) {
    if (!m || i >= m->n_op_types) {
        if (op_type) *op_type = NULL;
        if (count) *count = 0;
        return;
    }
    if (op_type) *op_type = m->op_types[i].op_type;
    if (count) *count = m->op_types[i].count;
}

/* ---- the operator list (frt_num_ops / frt_op_info_get) ---- */

size_t frt_num_ops(void) { return frt_op_def_count(); }

frt_status frt_op_info_get(size_t index, frt_op_info *out) {
    const frt_op_def *d = frt_op_def_at(index);
    if (!out) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_op_info_get: out is NULL");
    if (!d)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_op_info_get: index %zu of %zu", index,
                         frt_op_def_count());
    out->domain = d->domain;
    out->op_type = d->op_type;
    out->since_opset = d->since;
    out->max_opset = d->max;
    out->family = d->family;
    out->data_shape = (d->flags & (FRT_OP_DATA_SHAPE | FRT_OP_SHAPE_IN_MASK)) != 0;
    return FRT_OK;
}
