/* Internal layout of frt_model and frt_runtime. */
#ifndef FRT_RUNTIME_MODEL_H
#define FRT_RUNTIME_MODEL_H

#include <stdatomic.h>

#include "compile/program.h"
#include "util/threadpool.h"

/* Reference-counted memory handed to callers as frt_tensor._owner. The runtime holds one reference
 * to its current output block; every tensor returned from it in FRT_OUTPUTS_ALLOC mode with
 * manage_outputs holds another. The last release frees it. */
typedef struct frt_out_block {
    _Atomic long refs;
    size_t cap;
    _Alignas(64) unsigned char data[];
} frt_out_block;

frt_out_block *frt_out_block_new(size_t cap);
void frt_out_block_unref(frt_out_block *b);

typedef struct frt_op_count {
    const char *op_type;
    size_t count;
} frt_op_count;

struct frt_model {
    frt_options opt;
    void *map;            /* file mapping (NULL when loaded from a caller's buffer) */
    size_t map_len;
    frt_onnx_model *onnx;
    frt_arena arena;      /* IR, kernel parameters, transformed weights */
    frt_graph g;          /* the model's graph (block 0's) */
    frt_block *blocks;    /* block tree, blocks[0] is the model's graph; each block's tmpl holds
                             its load-time values (constants carry data), copied into runtimes */
    size_t n_blocks;
    frt_model_stats stats;
    size_t n_op_types;
    frt_op_count *op_types;
    frt_tensor_info *inputs, *outputs;
    bool check_plan;      /* FRT_CHECK_PLAN=1: verify every plan (tests) */
    bool interop_serial;  /* FRT_INTEROP_SERIAL=1: inter-op runs on the caller only (tests) */
    /* inter-op decision at load (interop.c, frt_iop_decide): iop_threads is the number of
       inter-op threads runs use (1 when declined, or inter_op_threads is 1); iop_dag the
       DAG of block 0 (also when declined: then blocks[0].prog->dag is NULL and the plan and
       runs are sequential); iop_est_* the load-time estimate per run, ns (0: shapes unknown) */
    int iop_threads;
    struct frt_dag *iop_dag;
    uint64_t iop_est_total, iop_est_path;
    /* per position of block 0: the estimated longest chain of steps from its start to the end
       of the run (its own time included, steps split as the cost model splits them), ns; the
       scheduler hands out the ready step with the longest first. NULL: program order */
    uint64_t *iop_prio;
    char iop_declined[256]; /* why inter-op was declined, or "" */
};

/* Run-time-sized memory of one block in a runtime (FRT_VC_DYNAMIC values and the scratch of
 * steps shaped at run time): bump allocation from one buffer, reset when the block starts a run.
 * What does not fit in a run gets its own allocation; the next run then frees those and grows the
 * buffer to the total the previous run needed, so a steady state allocates nothing. */
typedef struct frt_dynmem {
    char *base;
    size_t cap, used, need;
    void **extra;
    size_t n_extra, cap_extra;
} frt_dynmem;

/* The state of one block in a runtime: values, plan, memory. Created with the runtime; a child
 * block is shaped and planned when first run and again whenever the shapes of its inputs or outer
 * values change or its parent re-planned. */
typedef struct frt_brt {
    struct frt_runtime *rt;
    const frt_block *b;
    int32_t id;
    frt_value *v;         /* value array, indexed by the block's value ids */
    bool shaped;          /* v holds resolved shapes and a plan */
    size_t n_outer;
    int32_t *outer;       /* FRT_VALUE_OUTER value ids (bound from the parent at each run) */
    /* per graph input, then per outer value: dims and rank the plan was made for */
    int64_t (*in_dims)[FRT_MAX_RANK];
    int32_t *in_rank;
    frt_plan plan;
    void *slab;
    size_t slab_cap;
    void *outmem;         /* child blocks: storage of the block's graph outputs */
    size_t out_cap;
    void *shape_mem;      /* bump buffer for SHAPE values (and their scratch) */
    size_t shape_cap, shape_used, shape_need;
    size_t shape_bytes;   /* bytes of SHAPE values for the current shapes */
    const frt_step **run; /* steps a run executes (COMPUTE steps not removed by the plan) */
    int32_t *run_pos;     /* their compute positions */
    size_t n_run;
    frt_dynmem dyn;
    /* sequence / optional values (vtype != 0): one frt_seq per value id (NULL when the block has
     * none); a value's data points to its own, or for inputs and outer values to the one bound */
    struct frt_seq *seqs;
} frt_brt;

/* One step's record in a runtime's trace (src/runtime/trace.c). */
typedef struct frt_trace_rec {
    const frt_step *s;
    int32_t block, depth;
    uint32_t tid;
    int32_t rank;         /* output 0's shape after the step (-1: no output) */
    int64_t dims[FRT_MAX_RANK];
    uint64_t t0, dur;     /* CLOCK_MONOTONIC ns */
    uint64_t in_bytes, out_bytes;
} frt_trace_rec;

/* A runtime's trace buffer: cap == 0 means tracing is off. */
typedef struct frt_trace {
    frt_trace_rec *ev;
    size_t cap, n;
    uint64_t dropped;     /* steps not recorded because the buffer was full */
} frt_trace;

typedef struct frt_iop frt_iop; /* inter-op schedule and workers (interop.c) */

struct frt_runtime {
    const frt_model *m;
    frt_brt *blk;         /* per block of the model; blk[0] is the model's graph */
    size_t n_blk;
    frt_value *v;         /* == blk[0].v */
    int64_t (*in_dims)[FRT_MAX_RANK]; /* == blk[0].in_dims: per graph input, dims of the plan */
    frt_out_block *out;   /* storage of graph outputs (shared with callers: manage_outputs) */
    uint64_t input_hash;  /* FRT_CHECK_PLAN: inputs must be unchanged by a run */
    frt_threadpool *tp;
    bool profiling;
    uint64_t *prof_ns;    /* per compute step of block 0 */
    uint64_t prof_runs;
    frt_trace trace;
    frt_iop *iop;         /* inter_op_threads > 1 (or an async run): schedule and workers */
};

/* Loads like frt_model_load_buffer, with op definitions from src tried before the registry
 * (tests: test-only ops, kernels and layouts). src may be NULL; it must outlive the model. */
frt_status frt_model_load_buffer_with(const void *data, size_t size, const char *base_dir,
                                      const frt_options *opt, const frt_op_source *src,
                                      frt_model **out);

/* Appends the record of step s of block b that ran from t0 to t1 (rt->trace.cap > 0). */
void frt_trace_step(frt_runtime *rt, const frt_brt *b, const frt_step *s, uint64_t t0,
                    uint64_t t1);
/* Frees the trace buffer (frt_runtime_free). */
void frt_trace_free(frt_trace *t);

/* Resolves shapes of block 0 for the input dims in rt->v and plans memory (runtime.c). */
frt_status frt_runtime_resolve(frt_runtime *rt);

#endif
