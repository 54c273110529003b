/* The public API of optional features that a selective build left out (docs/selective.md,
 * "Features"): cmake/selective.cmake compiles this file instead of the feature's own file and
 * defines FRT_FEATURE_OFF_<name>. Each function keeps its contract for bad arguments and
 * otherwise answers FRT_ERR_UNSUPPORTED with a message naming the feature, the selection file
 * and how to keep it. In a full build (nothing defined) the file is empty.
 *
 *   FRT_FEATURE_OFF_DESCRIBE    frt_desc_* (src/runtime/describe.c)
 *   FRT_FEATURE_OFF_STEP_TRACE  frt_runtime_*trace* and the Chrome JSON writer (src/runtime/trace.c)
 *   FRT_FEATURE_OFF_THREAD_POOL the intra-op pool (src/util/threadpool.c: every region runs on the
 *                               caller, as with a NULL pool), inter-op scheduling and async runs
 *                               (src/runtime/interop.c), the dataflow DAG (src/compile/dag.c); a
 *                               model asking for more than one thread fails at load
 *   FRT_FEATURE_OFF_RUNTIME_POOL frt_pool_* (src/runtime/pool.c)
 *   FRT_FEATURE_OFF_EXTERNAL_DATA tensors stored outside the model file (src/onnx/external.c): a
 *                               model with one fails at load naming the tensor
 */
#include <string.h>

#include "flatrt.h"
#include "ops/op.h"
#include "runtime/model.h"
#include "util/error.h"
#include "util/threadpool.h"
#ifdef FRT_FEATURE_OFF_THREAD_POOL
#include "compile/program.h"
#include "runtime/interop.h"
#endif
#ifdef FRT_FEATURE_OFF_EXTERNAL_DATA
#include "onnx/onnx.h"
#endif

#if defined(FRT_FEATURE_OFF_DESCRIBE) || defined(FRT_FEATURE_OFF_STEP_TRACE) || \
    defined(FRT_FEATURE_OFF_THREAD_POOL) || defined(FRT_FEATURE_OFF_RUNTIME_POOL)
static frt_status left_out(const char *fn, const char *feature) {
    const char *sel = frt_selection_file();
    return frt_error(FRT_ERR_UNSUPPORTED,
                     "%s: feature '%s' not in this build's selection (%s); keep it with "
                     "cmake -DFRT_SELECT_KEEP=%s",
                     fn, feature, sel ? sel : "?", feature);
}
#endif

#ifdef FRT_FEATURE_OFF_DESCRIBE
frt_status frt_desc_create(const char *path, const frt_model *model, frt_desc **out) {
    if (out) *out = NULL;
    if (!out || (!path && !model))
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_desc_create: NULL argument");
    return left_out("frt_desc_create", "describe");
}

void frt_desc_free(frt_desc *desc) { (void)desc; }

void frt_desc_get_info(const frt_desc *desc, frt_desc_info *out) {
    (void)desc;
    if (out) memset(out, 0, sizeof *out);
}

frt_status frt_desc_input(const frt_desc *desc, size_t index, frt_tensor_info *out) {
    (void)desc, (void)index, (void)out;
    return left_out("frt_desc_input", "describe");
}

frt_status frt_desc_output(const frt_desc *desc, size_t index, frt_tensor_info *out) {
    (void)desc, (void)index, (void)out;
    return left_out("frt_desc_output", "describe");
}

frt_status frt_desc_node_get(const frt_desc *desc, size_t index, frt_desc_node *out) {
    (void)desc, (void)index, (void)out;
    return left_out("frt_desc_node_get", "describe");
}

frt_status frt_desc_node_value(const frt_desc *desc, size_t node, int is_output, size_t k,
                               frt_tensor_info *out) {
    (void)desc, (void)node, (void)is_output, (void)k, (void)out;
    return left_out("frt_desc_node_value", "describe");
}

frt_status frt_desc_node_attr(const frt_desc *desc, size_t node, size_t k, frt_desc_attr *out) {
    (void)desc, (void)node, (void)k, (void)out;
    return left_out("frt_desc_node_attr", "describe");
}
#endif

#ifdef FRT_FEATURE_OFF_STEP_TRACE
/* Never called: tracing cannot be switched on (rt->trace.cap stays 0). */
void frt_trace_step(frt_runtime *rt, const frt_brt *b, const frt_step *s, uint64_t t0,
                    uint64_t t1) {
    (void)rt, (void)b, (void)s, (void)t0, (void)t1;
}

void frt_trace_free(frt_trace *t) { (void)t; }

frt_status frt_runtime_set_trace(frt_runtime *rt, size_t max_events) {
    if (!rt) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_set_trace: rt is NULL");
    if (!max_events) return FRT_OK; /* switching it off always works */
    return left_out("frt_runtime_set_trace", "step_trace");
}

size_t frt_runtime_trace_size(const frt_runtime *rt, uint64_t *dropped) {
    (void)rt;
    if (dropped) *dropped = 0;
    return 0;
}

void frt_runtime_trace_clear(frt_runtime *rt) { (void)rt; }

frt_status frt_runtime_trace_event(const frt_runtime *rt, size_t index, frt_trace_event *ev) {
    (void)index;
    if (!rt || !ev) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_trace_event: NULL argument");
    return left_out("frt_runtime_trace_event", "step_trace");
}

frt_status frt_runtime_write_trace(const frt_runtime *rt, const char *path) {
    (void)rt, (void)path;
    return left_out("frt_runtime_write_trace", "step_trace");
}
#endif

#ifdef FRT_FEATURE_OFF_THREAD_POOL
frt_status frt_threadpool_check(int threads) {
    if (threads <= 1) return FRT_OK;
    const char *sel = frt_selection_file();
    return frt_error(FRT_ERR_UNSUPPORTED,
                     "%d threads (num_threads / inter_op_threads): feature 'thread_pool' not in "
                     "this build's selection (%s); trace with --threads %d to keep it",
                     threads, sel ? sel : "?", threads);
}

/* Every pool is NULL: regions run on the calling thread, exactly as the full build's do with
 * one thread. */
frt_threadpool *frt_threadpool_create(int n_threads, void (*thread_init)(void)) {
    (void)n_threads, (void)thread_init;
    return NULL;
}

frt_threadpool *frt_threadpool_create_shared(int n_threads, int n_workers,
                                             void (*thread_init)(void)) {
    (void)n_threads, (void)n_workers, (void)thread_init;
    return NULL;
}

void frt_threadpool_free(frt_threadpool *tp) { (void)tp; }
void frt_threadpool_hold(frt_threadpool *tp, int on) {
    (void)tp;
    (void)on;
}

int frt_threadpool_size(const frt_threadpool *tp) {
    (void)tp;
    return 1;
}

void frt_parallel_for(frt_threadpool *tp, size_t n, void (*fn)(void *ctx, size_t i), void *ctx) {
    (void)tp;
    for (size_t i = 0; i < n; i++) fn(ctx, i);
}

void frt_threadpool_set_notify(frt_threadpool *tp, void (*notify)(void *), void *ctx) {
    (void)tp, (void)notify, (void)ctx;
}

int frt_threadpool_open(const frt_threadpool *tp) {
    (void)tp;
    return 0;
}

int frt_threadpool_help(frt_threadpool *tp) {
    (void)tp;
    return 0;
}

int frt_par_threads(const frt_threadpool *tp, double work_ns) {
    (void)tp, (void)work_ns;
    return 1;
}

int frt_par_split(int threads, double work_ns) {
    if (threads <= 1 || !(work_ns >= 2 * FRT_PAR_MIN_NS)) return 1; /* as threadpool.c */
    double fit = work_ns / FRT_PAR_MIN_NS;
    return fit < (double)threads ? (int)fit : threads;
}

void frt_parallel_ranges(frt_threadpool *tp, int64_t n, double item_ns,
                         void (*fn)(void *ctx, int64_t lo, int64_t hi), void *ctx) {
    (void)tp, (void)item_ns;
    if (n > 0) fn(ctx, 0, n);
}

/* Never reached with one thread (no DAG is built); kept for the contract. */
frt_status frt_dag_build(frt_program *prog, const frt_graph *g, frt_arena *arena) {
    (void)g, (void)arena;
    prog->dag = NULL;
    return frt_threadpool_check(2);
}

/* Never reached with one thread (frt_dag_build fails first); kept for the contract. */
frt_status frt_iop_decide(frt_model *m) {
    m->iop_threads = 1;
    return FRT_OK;
}

frt_status frt_runtime_interop_info(const frt_runtime *rt, frt_interop_info *info) {
    (void)rt;
    if (info) memset(info, 0, sizeof *info);
    return left_out("inter-op scheduling", "thread_pool");
}

frt_status frt_iop_create(frt_runtime *rt, const frt_iop_hooks *hooks, frt_iop **out) {
    (void)rt, (void)hooks;
    *out = NULL;
    return left_out("inter-op scheduling", "thread_pool");
}

void frt_iop_free(frt_iop *io) { (void)io; }

frt_status frt_iop_run(frt_runtime *rt) {
    (void)rt;
    return left_out("inter-op scheduling", "thread_pool");
}

frt_status frt_iop_start(frt_runtime *rt, const frt_iop_hooks *hooks,
                         const frt_task_launcher *launcher,
                         void (*fin)(frt_runtime *, frt_status, void *), void *fin_arg) {
    (void)rt, (void)hooks, (void)launcher, (void)fin, (void)fin_arg;
    return left_out("frt_run_async", "thread_pool");
}
#endif

#ifdef FRT_FEATURE_OFF_RUNTIME_POOL
void frt_pool_options_init(frt_pool_options *opt) {
    if (!opt) return;
    opt->max_runtimes = 8;
    opt->idle_timeout_ms = 10000;
}

frt_status frt_pool_create(const frt_model *model, const frt_pool_options *opt, frt_pool **out) {
    (void)opt;
    if (out) *out = NULL;
    if (!model || !out) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_pool_create: NULL argument");
    return left_out("frt_pool_create", "runtime_pool");
}

void frt_pool_free(frt_pool *p) { (void)p; }

frt_status frt_pool_run(frt_pool *p, const char *const *input_names, const frt_tensor *inputs,
                        size_t n_inputs, frt_tensor *outputs, size_t n_outputs,
                        frt_output_mode mode, int64_t timeout_ms) {
    (void)input_names, (void)inputs, (void)n_inputs, (void)outputs, (void)n_outputs, (void)mode,
        (void)timeout_ms;
    if (!p) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_pool_run: pool is NULL");
    return left_out("frt_pool_run", "runtime_pool");
}

size_t frt_pool_collect(frt_pool *p, int64_t idle_ms) {
    (void)p, (void)idle_ms;
    return 0;
}

void frt_pool_get_stats(frt_pool *p, frt_pool_stats *s) {
    (void)p;
    if (s) memset(s, 0, sizeof *s);
}
#endif

#ifdef FRT_FEATURE_OFF_EXTERNAL_DATA
/* The first tensor with external data (initializers, then node attributes, subgraphs included),
 * or NULL. */
static const frt_onnx_tensor *first_external(const frt_onnx_graph *g) {
    for (size_t i = 0; i < g->n_initializers; i++)
        if (g->initializers[i].external) return &g->initializers[i];
    for (size_t i = 0; i < g->n_nodes; i++)
        for (size_t j = 0; j < g->nodes[i].n_attrs; j++) {
            const frt_onnx_attr *a = &g->nodes[i].attrs[j];
            const frt_onnx_tensor *t = NULL;
            if (a->type == FRT_ATTR_TENSOR && a->t && a->t->external) t = a->t;
            for (size_t k = 0; !t && a->type == FRT_ATTR_TENSORS && k < a->n; k++)
                if (a->tensors[k].external) t = &a->tensors[k];
            if (!t && a->type == FRT_ATTR_GRAPH && a->g) t = first_external(a->g);
            for (size_t k = 0; !t && a->type == FRT_ATTR_GRAPHS && k < a->n; k++)
                t = first_external(&a->graphs[k]);
            if (t) return t;
        }
    return NULL;
}

frt_status frt_onnx_map_external(frt_onnx_model *m, const char *base_dir) {
    (void)base_dir;
    if (!m) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_onnx_map_external: model is NULL");
    const frt_onnx_tensor *t = m->graph ? first_external(m->graph) : NULL;
    if (!t) return FRT_OK;
    const char *sel = frt_selection_file();
    return frt_error(FRT_ERR_UNSUPPORTED,
                     "tensor '%s' has external data ('%s'): feature 'external_data' not in this "
                     "build's selection (%s); trace a model with external data, or keep it with "
                     "cmake -DFRT_SELECT_KEEP=external_data",
                     t->name, t->ext_location ? t->ext_location : "", sel ? sel : "?");
}
#endif

typedef int frt_features_off_nonempty; /* ISO C: a translation unit declares something */
