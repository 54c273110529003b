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
    frt_graph g;
    frt_program prog;
    frt_value *tmpl;      /* load-time values: constants carry data; copied into each runtime */
    frt_model_stats stats;
    size_t n_op_types;
    frt_op_count *op_types;
    frt_tensor_info *inputs, *outputs;
    bool check_plan;      /* FRT_CHECK_PLAN=1: verify every plan (tests) */
};

struct frt_runtime {
    const frt_model *m;
    frt_value *v;         /* value array, indexed by value id */
    bool shaped;          /* v holds resolved shapes and a plan */
    int64_t (*in_dims)[FRT_MAX_RANK]; /* per graph input: dims the plan was made for */
    frt_plan plan;
    void *slab;
    size_t slab_cap;
    frt_out_block *out;   /* storage of graph outputs (shared with callers: manage_outputs) */
    void *shape_mem;      /* bump buffer for SHAPE values (and their scratch) */
    size_t shape_cap, shape_used, shape_need;
    size_t shape_bytes;   /* bytes of SHAPE values for the current shapes */
    const frt_step **run; /* steps a run executes (COMPUTE steps not removed by the plan) */
    int32_t *run_pos;     /* their compute positions */
    size_t n_run;
    uint64_t input_hash;  /* FRT_CHECK_PLAN: inputs must be unchanged by a run */
    frt_threadpool *tp;
    bool profiling;
    uint64_t *prof_ns;    /* per step */
    uint64_t prof_runs;
};

/* Resolves shapes for the input dims in rt->v and plans memory (runtime.c). */
frt_status frt_runtime_resolve(frt_runtime *rt);

#endif
