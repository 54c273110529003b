/* Operator interface: what every operator family implements, and helpers they share.
 *
 * Each op has definitions (frt_op_def, listed once in src/ops/ops.def) with its contract (domain,
 * opset range, capability flags) and two functions, infer and select (FRT_OP_IMPL below).
 *
 * A node with subgraphs (node->sub) is inferred and selected after its subgraphs were compiled, so
 * the dtypes and load-time shapes of each subgraph's outputs are known; its kernel runs them with
 * frt_exec_block(x, s->blocks[i], ...).
 *
 * A kernel runs with all output values already shaped (by infer) and backed by memory; it reads
 * input data and dims from x->values and writes output data only. It must not keep state between
 * calls. It returns FRT_OK, or an error via frt_step_fail for data it cannot handle (an index out
 * of range).
 */
#ifndef FRT_OPS_OP_H
#define FRT_OPS_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "ops/cpu.h"
#include "util/error.h"

struct frt_threadpool;
typedef struct frt_step frt_step;

typedef struct frt_exec frt_exec;

/* What a runtime offers the kernels it runs (implemented in src/runtime/; reached through
 * frt_exec so that kernels never call into the runtime layer directly). */
typedef struct frt_exec_services {
    /* Runs child block `block` of the running block: binds inputs[0..n_in) to its graph inputs
     * (dtype and rank must match), runs it and fills outputs[0..n_out) with its graph outputs
     * (data points into the block's memory: valid until the block runs again or the runtime is
     * re-planned). */
    frt_status (*run_block)(frt_exec *x, int32_t block, const frt_value *inputs, size_t n_in,
                            frt_value *outputs, size_t n_out);
    /* Storage for output j of step s, whose size is known only now: sets the value's dtype, rank
     * and dims and returns its data (from the runtime's run-time-sized memory, valid until the
     * next run of the block), or NULL with an error set. */
    void *(*alloc_output)(frt_exec *x, const frt_step *s, int j, int32_t dtype, int32_t rank,
                          const int64_t *dims);
} frt_exec_services;

struct frt_exec {
    frt_value *values;           /* the running block's value array, indexed by value id */
    void *scratch;               /* this step's scratch memory (k.scratch bytes), 64-aligned */
    struct frt_threadpool *tp;   /* intra-op pool; NULL = run on the calling thread */
    const frt_exec_services *svc;/* NULL while folding at load: no blocks, no run-time sizes */
    void *ctx;                   /* the runtime's state of the running block (for svc) */
};

/* Runs child block `block` (a value of s->blocks[i]); see frt_exec_services. */
static inline frt_status frt_exec_block(frt_exec *x, int32_t block, const frt_value *inputs,
                                        size_t n_in, frt_value *outputs, size_t n_out) {
    if (!x->svc) return frt_error(FRT_ERR_INTERNAL, "a block can only run inside a runtime");
    return x->svc->run_block(x, block, inputs, n_in, outputs, n_out);
}

/* Run-time-sized output j of s (kernels with FRT_K_DYNAMIC_OUT); see frt_exec_services. */
static inline void *frt_exec_alloc_output(frt_exec *x, const frt_step *s, int j, int32_t dtype,
                                          int32_t rank, const int64_t *dims) {
    if (!x->svc) {
        frt_error(FRT_ERR_INTERNAL, "run-time-sized outputs need a runtime");
        return NULL;
    }
    return x->svc->alloc_output(x, s, j, dtype, rank, dims);
}

typedef frt_status (*frt_kernel_fn)(const frt_step *s, frt_exec *x);
/* Scratch bytes the kernel needs for the current shapes in values (outputs already shaped). */
typedef size_t (*frt_scratch_fn)(const frt_step *s, const frt_value *values);

/* Kernel flags: what a selected kernel does. Each needs the matching FRT_OP_* capability of the
 * op's definition (compile rejects a kernel claiming more than its op allows). */
enum {
    FRT_K_VIEW = 1u << 0,       /* output 0 aliases input 0 (same bytes, new shape); fn is NULL */
    FRT_K_SHAPE_ONLY = 1u << 1, /* reads only the dims of its inputs, never their data (Shape) */
    FRT_K_INPLACE = 1u << 2,    /* output 0 may share memory with input inplace_in (default 0:
                                   elementwise, same size) */
    FRT_K_CONCAT = 1u << 3,     /* copies its inputs one after another along the axis in params,
                                   which start with frt_concat_params; the planner may instead
                                   place the inputs in the output and skip the step */
    /* The sizes of the outputs are known only when the kernel runs (NonZero, Unique, a block's
     * results): infer may leave them unknown, nothing is planned for them, and the kernel gets
     * their storage with frt_exec_alloc_output. Steps reading such values are shaped (infer) and
     * given storage just before they run. Needs FRT_OP_DATA_SHAPE. */
    FRT_K_DYNAMIC_OUT = 1u << 4
};

/* Leading member of the params of an FRT_K_CONCAT kernel. */
typedef struct frt_concat_params {
    int64_t axis; /* the attribute as given: [-rank, rank) */
} frt_concat_params;

typedef struct frt_kernel {
    const char *name;            /* static or model-arena string, e.g. "conv_1x1_gemm_avx2";
                                    shown in profiles ("<provider>:<name>" for non-builtin) */
    frt_kernel_fn fn;
    const void *params;          /* immutable after select; may be NULL */
    frt_scratch_fn scratch;      /* may be NULL: no scratch */
    /* May be NULL. For params that own more than model-arena memory: called exactly once with
     * params when the model is freed, or earlier when the kernel is not kept (loading fails after
     * its select, compile rejects it, or it evaluated a folded node). */
    void (*destroy)(void *params);
    uint32_t flags;
    /* With FRT_K_INPLACE: the input whose memory output 0 may take when that input dies at the
     * step (same size and layout). 0 for elementwise kernels; a fused convolution's residual sum
     * input (FusedConv's input 3), which the kernel adds onto the output's old contents, reading
     * each element before writing it. Any other input aliasing it keeps the step out of place. */
    int32_t inplace_in;
    /* Bit i set: the kernel made its own copy of constant input i at select (packed weights) and
     * never reads that input's data again, so the model may release the original. */
    uint32_t const_copied;
    /* Layouts, declared at select (NULL arrays: all plain). out_layouts[j]: the layout the kernel
     * writes output j in; in_layouts[j]: the layout it reads input j in (NULL entry = plain).
     * Compile inserts reorder steps where a producer's layout differs from what a reader needs.
     * Selection runs in node order, and at select ctx->in[j]->layout is the layout the input's
     * producer declared (plain for graph inputs and constants), so a kernel may follow it.
     * Arrays live in the model arena, n_out / n_in entries. */
    const frt_layout *const *out_layouts;
    const frt_layout *const *in_layouts;
} frt_kernel;

struct frt_step {
    frt_kernel k;
    const int32_t *in;           /* value ids, -1 for omitted optional inputs */
    const int32_t *out;
    int32_t n_in, n_out;
    int32_t node;                /* IR node id (for messages and profiles) */
    const frt_node *ir;          /* the IR node itself */
    const int32_t *blocks;       /* ir->n_sub entries: block id of each subgraph of the node */
};

typedef struct frt_op_ctx {
    const frt_node *node;
    int64_t opset;               /* == node->opset */
    int32_t n_in, n_out;
    frt_value **in;              /* n_in entries; NULL for an omitted optional input */
    frt_value **out;
    frt_arena *arena;            /* select only (NULL in infer) */
    frt_isa isa;                 /* select only: best ISA tier the kernel may use. Compile passes
                                    frt_cpu_tier(); tests pass lower tiers to compare variants. */
} frt_op_ctx;

/* ---- operator definitions ---- */

/* Domains. A model's "" and "ai.onnx" are the same (default) domain and are looked up as "".
 * "flatrt" holds internal ops that passes create and that models may not use. */
#define FRT_DOMAIN_ONNX ""
#define FRT_DOMAIN_INTERNAL "flatrt"
/* The preview training domain (Adagrad, Adam, Momentum); its opset 1. */
#define FRT_DOMAIN_TRAINING "ai.onnx.preview.training"

/* Newest ai.onnx opset the definitions were checked against (the graph loader's upper bound). */
#define FRT_OPSET_LATEST 21

/* Capabilities of an op (frt_op_def.flags): what compile, folding and the planner may do with its
 * nodes. Kernels announce what they actually do with FRT_K_* flags within these. */
enum {
    FRT_OP_SHAPE_ONLY = 1u << 0,     /* reads only input dims (Shape): folded once they are known */
    FRT_OP_MAY_ALIAS = 1u << 1,      /* a kernel may be a view: output 0 aliases input 0 */
    FRT_OP_INPLACE = 1u << 2,        /* a kernel may write output 0 over an input (frt_kernel
                                        inplace_in) */
    FRT_OP_CONCAT_INPLACE = 1u << 3, /* a kernel may be FRT_K_CONCAT (skipped by the planner) */
    FRT_OP_DATA_SHAPE = 1u << 4,     /* output shape depends on input data (NonZero, a block's
                                        results): a kernel may be FRT_K_DYNAMIC_OUT */
    FRT_OP_NO_FOLD = 1u << 5,        /* outputs may differ between runs (random ops): never
                                        evaluated at load, even when every input is constant */
    FRT_OP_SEQ_VALUES = 1u << 6      /* takes sequence / optional inputs (frt_value.vtype; data
                                        an frt_seq while running); other ops get tensors only */
};

/* Capability: the output shapes depend on the *data* of input i (Reshape's shape, Expand's
 * shape, Range's start/limit/delta, Reduce's axes...). infer reads in[i]->data when it is not
 * NULL and otherwise leaves the dims it decides unknown (-1). When such an input is a constant or
 * computed from shapes only, the shapes are resolved at load or reshape as usual; when it is
 * computed at run time (a graph input, a compute step's output), compile defers the step
 * (FRT_DEFER_INFER): infer runs just before the kernel, with the input's data, and the outputs
 * get run-time-sized storage. Inputs 0..7. */
#define FRT_OP_SHAPE_IN(i) (1u << (8 + (i)))
#define FRT_OP_SHAPE_IN_MASK (0xffu << 8)

/* What a family file implements for one op (or one opset range of it):
 *
 *   infer(ctx)       dtype and shape inference. Sets out[i]->dtype, ->rank, ->dims (and numel via
 *                    frt_op_set_shape). Called at load with the IR's values, where a dim may be -1
 *                    (unknown: propagate -1, check only what is known), and again by each runtime
 *                    whenever input shapes change, with every dim known. Input data is available
 *                    (in[i]->data != NULL) for constants at load, and at reshape for constants and
 *                    for values computed while resolving shapes (shape subgraphs). infer may read
 *                    attributes; it must not allocate and must not write out[i]->data.
 *
 *   select(ctx, k)   the builtin provider's kernel selection, once at load, after infer. Sees the
 *                    node, its attributes, dtypes, load-time shapes (dims may be -1) and constant
 *                    inputs, and fills k with a kernel specialized for them. Every attribute the
 *                    kernel needs is resolved here into k->params: kernels never look attributes up
 *                    by name. Parameters and transformed weights go into ctx->arena (they live as
 *                    long as the model and are shared by all runtimes, so a kernel never writes
 *                    them); memory from elsewhere needs k->destroy. Returns FRT_ERR_UNSUPPORTED (via
 *                    frt_op_fail) for configurations it does not handle.
 */
typedef frt_status (*frt_infer_fn)(frt_op_ctx *c);
typedef frt_status (*frt_select_fn)(frt_op_ctx *c, frt_kernel *k);

/* Defines the implementation symbols frt_op_<family>_<sym>_infer and _select that the op list
 * (ops.def) refers to, forwarding to the family file's static infer and select functions. */
#define FRT_OP_IMPL(family, sym, infer_fn, select_fn)                                              \
    frt_status frt_op_##family##_##sym##_infer(frt_op_ctx *c);                                     \
    frt_status frt_op_##family##_##sym##_select(frt_op_ctx *c, frt_kernel *k);                     \
    frt_status frt_op_##family##_##sym##_infer(frt_op_ctx *c) { return infer_fn(c); }              \
    frt_status frt_op_##family##_##sym##_select(frt_op_ctx *c, frt_kernel *k) {                    \
        return select_fn(c, k);                                                                    \
    }                                                                                              \
    typedef int frt_op_impl_##family##_##sym##_defined_

/* One registered op over an opset range: its contract and its implementation. */
typedef struct frt_op_def {
    const char *domain;          /* FRT_DOMAIN_ONNX, FRT_DOMAIN_TRAINING or FRT_DOMAIN_INTERNAL */
    const char *op_type;
    int since, max;              /* opsets of the domain this entry implements: [since, max] */
    uint32_t flags;              /* FRT_OP_* */
    const char *family;          /* family file, e.g. "tensor" */
    frt_infer_fn infer;
    frt_select_fn select;        /* the builtin provider's */
} frt_op_def;

/* A table of defs sorted by (domain, op_type, since), ranges of one op not overlapping: the
 * registry's (built from src/ops/ops.def) or a provider's own. */
typedef struct frt_op_table {
    const frt_op_def *defs;
    size_t n;
} frt_op_table;

/* Looks (domain, op_type, opset) up in t by binary search; "ai.onnx" is the default domain.
 * Returns NULL when absent, and then, when why is not NULL, says why in why[0..cap): no such op,
 * or the opset ranges the op has. */
const frt_op_def *frt_op_table_find(const frt_op_table *t, const char *domain, const char *op_type,
                                    int64_t opset, char *why, size_t cap);
/* Checks that t is sorted and its ranges of one op do not overlap; FRT_ERR_INTERNAL otherwise. */
frt_status frt_op_table_check(const frt_op_table *t);

/* The builtin registry (only the ops a selective build lists). */
const frt_op_table *frt_op_registry(void);
size_t frt_op_def_count(void);
const frt_op_def *frt_op_def_at(size_t i); /* NULL when i >= frt_op_def_count() */
/* The registry's def for (domain, op_type, opset); NULL if none covers that opset. */
const frt_op_def *frt_op_lookup(const char *domain, const char *op_type, int64_t opset);
/* Passes: frt_op_probe is frt_op_lookup without adding the op to a selection trace (a pass probes
 * for the op it may create before matching its pattern); frt_op_created records an op a pass
 * did create, so a selection keeps exactly the fused ops its models' fusions produce. */
const frt_op_def *frt_op_probe(const char *domain, const char *op_type, int64_t opset);
void frt_op_created(const char *domain, const char *op_type, int64_t opset);
/* Like frt_op_lookup for any opset: the entry with the newest range (tests, tools). */
const frt_op_def *frt_op_find(const char *domain, const char *op_type);
/* FRT_OK with *def set, or FRT_ERR_UNSUPPORTED with a message naming the node, op, domain and
 * opset (and the opsets that are implemented). */
frt_status frt_op_resolve(const frt_node *n, const frt_op_def **def);
/* FRT_OP_BUILT(op_type): 1 unless a selective build left op_type out (then 0, at compile time).
 * Passes test it before looking up the ops they create, so a pass none of whose ops are built is
 * compiled out. The selection's header (FRT_OPS_SELECTION) defines FRT_OP_SELECT_<op> 1 per op. */
#ifdef FRT_OPS_SELECTION
#include FRT_OPS_SELECTION
#define FRT_BUILT_ONE_1 0,
#define FRT_BUILT_SECOND(a, b, ...) b
#define FRT_BUILT_IS1(v) FRT_BUILT_IS1_(v)
#define FRT_BUILT_IS1_(v) FRT_BUILT_IS1__(FRT_BUILT_ONE_##v)
#define FRT_BUILT_IS1__(x) FRT_BUILT_SECOND(x 1, 0, ~)
#define FRT_OP_BUILT(op) FRT_BUILT_IS1(FRT_OP_SELECT_##op)
#define FRT_DT_BUILT(dt) FRT_BUILT_IS1(FRT_DT_SELECT_##dt)
#define FRT_KERNEL_BUILT(op, cls) FRT_BUILT_IS1(FRT_KSEL_##op##_##cls)
#else
#define FRT_OP_BUILT(op) 1
#define FRT_DT_BUILT(dt) 1
#define FRT_KERNEL_BUILT(op, cls) 1
#endif
/* FRT_KERNEL_BUILT(op_type, class): per-kernel selection inside an op. An op whose select
 * chooses among kernel paths of very different code size names classes of them (Gemm: WGEMV,
 * WGEMM, SGEMV, SGEMM, see gemm.c); scripts/gen_selection.py (KERNEL_CLASSES) maps the kernel
 * names a trace recorded for the op to the classes they need, and a class no recorded kernel
 * needs is 0, so its code is compiled out. The op then refuses that path with
 * frt_op_kernel_missing at load (or frt_step_fail at run, for shapes the load did not know). */
/* FRT_DT_BUILT(dt) (dt as frt_dtype_name spells it: float32, int64, ...): 0 when a selective
 * build's trace saw no op with a tensor of that dtype. FRT_IF_DT(dt, ...) is its arguments when
 * FRT_DT_BUILT(dt), else nothing: kernels that handle several dtypes wrap the table entries of
 * each dtype in it, and report a missing entry with frt_op_dtype_missing. */
#define FRT_BUILT_EMIT_1(...) __VA_ARGS__
#define FRT_BUILT_EMIT_0(...)
#define FRT_BUILT_CAT(a, b) FRT_BUILT_CAT_(a, b)
#define FRT_BUILT_CAT_(a, b) a##b
#define FRT_IF_DT(dt, ...) FRT_BUILT_CAT(FRT_BUILT_EMIT_, FRT_DT_BUILT(dt))(__VA_ARGS__)
/* Selective builds (cmake -DFRT_SELECT=FILE): whether op_type of domain is implemented by flatrt
 * but was left out by it (false in a full build; the file's name: frt_selection_file,
 * util/features.h). */
bool frt_op_left_out(const char *domain, const char *op_type);
/* FRT_ERR_UNSUPPORTED for a kernel without loops for dtype dt: "dtype X of op 'Y' not in this
 * build's selection (FILE)" in a selective build, else "dtype X not supported". */
frt_status frt_op_dtype_missing(frt_op_ctx *c, int32_t dt);
/* FRT_ERR_UNSUPPORTED for a kernel a selective build compiled out (FRT_KERNEL_BUILT): "kernel
 * NAME of op 'Y' not in this build's selection (FILE)". */
frt_status frt_op_kernel_missing(frt_op_ctx *c, const char *kernel);

/* Selection tracing (util/seltrace.h): records the kernel k that provider chose for a node (op,
 * kernel name, dtypes of its values, features). Call only when FRT_SELTRACE_ON. */
void frt_seltrace_kernel(const frt_op_def *def, const frt_op_ctx *c, const frt_kernel *k,
                         const char *provider);

/* ---- providers ---- */

/* Status a provider's select returns for a node it leaves to the next provider (with the reason
 * in the error message). Internal to kernel selection: never returned by the library. */
#define FRT_DECLINE ((frt_status)100)

/* A kernel provider. Selection tries the providers in priority order; the first that returns
 * FRT_OK supplies the node's kernel. select gets the node's definition (the builtin contract:
 * flags limit the kernel flags the provider may set) and returns FRT_OK, FRT_DECLINE, or an
 * error that fails the load. The builtin provider comes last; its select declines with
 * FRT_ERR_UNSUPPORTED configurations it does not handle. */
typedef struct frt_provider {
    const char *name;            /* "builtin", "onednn", ...; non-builtin names prefix kernel names */
    frt_status (*select)(const struct frt_provider *p, const frt_op_def *def, frt_op_ctx *c,
                         frt_kernel *k);
    void *ctx;                   /* the provider's own state (its registry, counters) */
} frt_provider;

/* The builtin provider: def->select. */
extern const frt_provider frt_provider_builtin;
/* The default provider list: the oneDNN provider (when built and not switched off by FRT_DNNL=0,
 * src/ops/onednn/onednn.h) planning for one intra-op thread, then builtin. */
const frt_provider *const *frt_default_providers(size_t *n);
/* The same for runtimes with num_threads intra-op threads (the model option). */
const frt_provider *const *frt_providers_for_threads(int num_threads, size_t *n);

/* ---- helpers for op implementations (src/ops/common.c) ---- */

/* Fails with "node '<name>' (<op>): <message>". Returns s. */
frt_status frt_op_fail(const frt_op_ctx *c, frt_status s, const char *fmt, ...) FRT_PRINTF(3, 4);
frt_status frt_step_fail(const frt_step *s, frt_status st, const char *fmt, ...) FRT_PRINTF(3, 4);

/* Attribute lookup on the node; dflt when absent. A present attribute of the wrong type is
 * treated as absent by these getters; frt_op_check_attr reports it instead. */
const frt_onnx_attr *frt_attr_find(const frt_node *n, const char *name);
int64_t frt_attr_int(const frt_node *n, const char *name, int64_t dflt);
float frt_attr_float(const frt_node *n, const char *name, float dflt);
const char *frt_attr_string(const frt_node *n, const char *name, const char *dflt);
/* INTS attribute: returns the array and sets *count, or NULL (count 0) when absent. */
const int64_t *frt_attr_ints(const frt_node *n, const char *name, size_t *count);
const float *frt_attr_floats(const frt_node *n, const char *name, size_t *count);

/* Sets dtype, rank and dims of v and recomputes numel (frt_value_set_shape, src/ir/value.c). */
static inline void frt_op_set_shape(frt_value *v, int32_t dtype, int32_t rank,
                                    const int64_t *dims) {
    frt_value_set_shape(v, dtype, rank, dims);
}

/* Checks n_in within [lo, hi] and n_out within [olo, ohi]; the message names the op. */
frt_status frt_op_check_arity(const frt_op_ctx *c, int lo, int hi, int olo, int ohi);
/* Checks that input i is present with the given dtype (or any dtype when dtype == 0). */
frt_status frt_op_check_input(const frt_op_ctx *c, int i, int32_t dtype);

/* Multidirectional (numpy) broadcasting of a and b into out (rank = max rank).
 * Unknown (-1) dims: 1 vs ? -> ?, n vs ? -> n. Fails (FRT_ERR_SHAPE, message) on a mismatch. */
frt_status frt_broadcast_shape(const frt_op_ctx *c, const frt_value *a, const frt_value *b,
                               int32_t *rank, int64_t *dims);

/* Normalizes an axis in [-rank, rank) to [0, rank); returns -1 when out of range. */
int frt_norm_axis(int64_t axis, int rank);

/* dst[i] = the esize-byte element at src + i*stride (byte stride, may be negative), i < n; dst is
 * contiguous. Typed loads for 1/2/4/8-byte elements, memcpy otherwise. */
void frt_gather_elems(char *dst, const char *src, int64_t n, int64_t stride, size_t esize);

/* Reads element i of an integer tensor (INT32 or INT64) as int64. */
int64_t frt_value_get_int(const frt_value *v, int64_t i);

#endif
