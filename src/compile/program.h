/* The compiled program: what compile produces from the IR and every runtime executes.
 *
 * Steps are the live nodes in topological order, each with its kernel chosen at load. A step has
 * one of three classes:
 *   COMPUTE  runs on every frt_run;
 *   SHAPE    runs while a runtime resolves shapes (its inputs are constants or other SHAPE values,
 *            or it reads only input dims, like Shape): shape subgraphs over dynamic dims;
 *   VIEW     never runs: its output aliases its input (Reshape, Flatten, ...).
 * Values get a class too; lifetimes of MANAGED values are positions in the compute order.
 *
 * A model is a tree of blocks: block 0 is the model's graph; each subgraph attribute of a node
 * (If, Loop, Scan) is a child block with its own graph, program and (in each runtime) its own
 * values and memory plan. A kernel runs a child block with frt_exec_block.
 */
#ifndef FRT_COMPILE_PROGRAM_H
#define FRT_COMPILE_PROGRAM_H

#include "ir/ir.h"
#include "ops/op.h"

enum { FRT_STEP_COMPUTE = 0, FRT_STEP_SHAPE = 1, FRT_STEP_VIEW = 2 };

enum {
    FRT_VC_NONE = 0,    /* unused value (e.g. output of a dead node) */
    FRT_VC_INPUT,       /* graph input: caller's memory */
    FRT_VC_CONST,       /* initializer or folded: model memory */
    FRT_VC_SHAPE,       /* computed at reshape: runtime's shape memory */
    FRT_VC_VIEW,        /* aliases root[v] */
    FRT_VC_MANAGED,     /* in the runtime's slab, at a planned place */
    FRT_VC_OWNED,       /* graph output storage of the runtime (not shared) */
    FRT_VC_DYNAMIC,     /* size known only when produced: run-time-sized memory of the runtime */
    FRT_VC_SEQ          /* sequence or optional (vtype != 0) made by a step: the runtime's frt_seq */
};

typedef struct frt_program {
    size_t n_steps;
    frt_step *steps;
    const frt_op_def **defs; /* per step */
    uint8_t *cls;            /* per step: FRT_STEP_* */
    size_t n_compute;
    int32_t *compute;        /* step indices of COMPUTE steps, in order */
    size_t n_input_views;
    int32_t *input_views;    /* VIEW steps whose root is a graph input (re-pointed every run) */
    /* per value (g.n_values entries) */
    uint8_t *vclass;
    int32_t *root;           /* value whose memory this value uses (itself unless a view) */
    int32_t *def_pos;        /* MANAGED/OWNED: compute position of the producer */
    int32_t *last_pos;       /* MANAGED: last compute position that reads it (via views too) */
    int32_t *concat_axis;    /* per compute position: axis of a Concat step, else -1 */
    /* per step: 0, or how a COMPUTE step whose outputs are sized at run time runs:
     * FRT_DEFER_KERNEL (the kernel sizes them: FRT_K_DYNAMIC_OUT) or FRT_DEFER_INFER (it reads a
     * DYNAMIC value: infer and storage just before it runs; a view then only aliases) */
    uint8_t *deferred;
    bool has_dynamic;        /* some step is deferred */
    size_t n_reorders;       /* reorder steps inserted by the layout pass */
    /* dataflow DAG of the compute steps (inter_op_threads > 1 and no deferred step), else NULL:
     * then the plan and the run follow the sequential order */
    struct frt_dag *dag;
} frt_program;

/* Dataflow DAG over the compute positions of a program (src/compile/dag.c). Position q depends
 * on p when q reads (directly or through views, or as an outer value of a subgraph) a value that
 * p writes. "p happens before q" (frt_dag_before) is the transitive closure: under any schedule
 * that starts a step only after its predecessors ended, p's step has ended before q's starts. */
typedef struct frt_dag {
    int32_t n;               /* compute positions */
    int32_t *n_pred;         /* per position: distinct predecessor positions */
    int32_t *succ_off, *succ;/* successors of q: succ[succ_off[q] .. succ_off[q + 1]) */
    int32_t n_src;
    int32_t *src;            /* positions without predecessors, in order */
    int32_t *rd_off, *rd;    /* per value: positions reading it (through views), ascending */
    uint8_t *alone;          /* per position: ordered with every other position (it can never run
                                beside another step, under any schedule) */
    size_t words;            /* per position in anc */
    uint64_t *anc;           /* bit p of row q: p happens before q (p != q) */
} frt_dag;

static inline bool frt_dag_before(const frt_dag *d, int32_t p, int32_t q) {
    return p >= 0 && q >= 0 && (d->anc[(size_t)q * d->words + ((size_t)p >> 6)] >> (p & 63) & 1);
}

/* Builds prog->dag (in arena) for the program of graph g; prog->dag stays NULL for a program with
 * deferred steps. */
frt_status frt_dag_build(frt_program *prog, const frt_graph *g, frt_arena *arena);

/* The critical path: the largest sum of w[q] (per position) along a chain of dependent positions.
 * start: scratch of d->n entries. No inter-op schedule of steps taking w[q] each ends before it,
 * so sum(w) / frt_dag_longest(d, w) bounds any inter-op speed-up. */
uint64_t frt_dag_longest(const frt_dag *d, const uint64_t *w, uint64_t *start);

/* Per-step fixed cost of the estimate below (dispatch and scheduling), ns. */
#define FRT_DAG_STEP_NS 100.0
/* Load-time estimate of each compute position's time on one thread (cost[prog->n_compute], ns)
 * from the shapes inferred at load, by the kernels' cost model (util/threadpool.h): multiply-
 * adds of products and convolutions (FRT_PAR_NS_PER_FLOP) plus the bytes of non-constant inputs
 * and outputs (FRT_PAR_NS_PER_BYTE) plus FRT_DAG_STEP_NS. Returns 0 when some shape is unknown at
 * load (cost is then incomplete). */
int frt_dag_estimate(const frt_program *prog, const frt_graph *g, uint64_t *cost);

enum { FRT_DEFER_NONE = 0, FRT_DEFER_KERNEL = 1, FRT_DEFER_INFER = 2 };

/* One block of the model's tree. */
typedef struct frt_block {
    frt_graph *g;
    frt_program *prog;
    frt_value *tmpl;         /* load-time values (constants carry data), set by the model */
    int32_t parent;          /* parent block, -1 for block 0 */
    int32_t owner;           /* node of the parent's graph that owns it, -1 for block 0 */
} frt_block;

/* A source of op definitions consulted before the registry (for every opset), per compile (no
 * global state): tests use it for test-only ops, kernels and layouts. find returns NULL to leave
 * an op to the registry; the definitions it returns must outlive the model. Their kernels are
 * still chosen by the kernel providers (the builtin one calls def->select). */
typedef struct frt_op_source {
    const frt_op_def *(*find)(void *user, const char *domain, const char *op_type);
    void *user;
} frt_op_source;

typedef struct frt_compile_stats {
    size_t num_folded, num_fused, transformed_bytes;
} frt_compile_stats;

/* Compiles g and its subgraphs into blocks (*blocks[0] is g; arrays in arena): inference,
 * folding, fusion, selection, layout reorders, step classes and lifetimes, per block. A node's
 * subgraphs are compiled when inference reaches it, so their outer values have their load-time
 * types. Each node's definition comes from src (may be NULL) if it has one, else from the registry
 * for the node's opset; its kernel from the providers, tried in order (the builtin one last). On
 * failure the kernels already selected, in every block, are released. */
frt_status frt_compile_blocks(frt_graph *g, const frt_options *opt,
                              const frt_provider *const *providers, size_t n_providers,
                              const frt_op_source *src, frt_arena *arena, frt_block **blocks,
                              size_t *n_blocks, frt_compile_stats *stats);
/* Compiles a graph without subgraphs into prog (arrays in arena), with the default providers
 * (FRT_ERR_UNSUPPORTED for a graph with subgraphs: use frt_compile_blocks). On failure the kernels
 * already selected are released. */
frt_status frt_compile(frt_graph *g, const frt_options *opt, frt_arena *arena, frt_program *prog,
                       frt_compile_stats *stats);
/* The same with the given providers, tried in order for each node (the builtin one last). */
frt_status frt_compile_with(frt_graph *g, const frt_options *opt,
                            const frt_provider *const *providers, size_t n_providers,
                            frt_arena *arena, frt_program *prog, frt_compile_stats *stats);
/* Calls each step's kernel destroy hook once (the model is being freed). */
void frt_program_release(frt_program *prog);
/* frt_program_release for the program of every block. */
void frt_blocks_release(frt_block *blocks, size_t n_blocks);

/* Memory plan of one runtime for its current shapes (src/compile/plan.c). Results first, then
 * work arrays; everything is allocated once by frt_plan_init. */
typedef struct frt_plan_item frt_plan_item;
typedef struct frt_plan_group frt_plan_group;
typedef struct frt_plan {
    size_t n_values, n_compute;
    size_t *offset;          /* per value: byte offset in the slab (MANAGED) or output slab (OWNED) */
    size_t *scratch_off;     /* per compute position */
    size_t *scratch_bytes;   /* per compute position: filled by the caller before planning */
    uint8_t *skip;           /* per compute position: step removed (Concat done in place) */
    size_t slab_bytes, output_bytes;
    size_t naive_bytes, lower_bound_bytes;
    size_t num_managed, num_reused, num_inplace, num_concat_removed;
    /* work arrays */
    int32_t *parent;         /* per value: value whose storage holds it (-1: own storage) */
    size_t *rel;             /* per value: byte offset inside parent */
    uint8_t *kind;           /* per value: root / concat slice / in-place alias */
    int32_t *first, *last;   /* per storage root: lifetime covering all its members */
    frt_plan_item *items;    /* planned roots and scratch areas (n_items) */
    size_t n_items;
    int32_t *order;
    frt_plan_group *groups;
    int32_t *end_head, *end_next;
    int32_t *mhead, *mnext;  /* with a DAG: members of each storage root (linked list) */
} frt_plan;

frt_status frt_plan_init(frt_plan *plan, size_t n_values, size_t n_compute);
/* FRT_OK when this build has planner `which`; FRT_ERR_UNSUPPORTED naming the selection file when
 * a selective build left it out (checked when a model is loaded). */
frt_status frt_plan_available(frt_planner which);
/* Plans memory for the sizes in values (all dims known) with plan->scratch_bytes filled. */
frt_status frt_plan_compute(const frt_program *prog, const frt_value *values, frt_planner which,
                            frt_plan *plan);
/* Checks that no two storage roots (or scratch areas) live at the same step overlap, that every
 * member lies inside its root, and that in-place outputs overwrite only dead inputs. Returns
 * FRT_ERR_INTERNAL with a message naming the values otherwise. With a DAG (prog->dag), "live at
 * the same step" is "not ordered by the DAG": two areas may overlap only when every use of one
 * (its producers and readers, of every member) happens before every write of the other, so any
 * schedule that respects the DAG is safe; the DAG itself is checked against the steps' reads. */
frt_status frt_plan_check(const frt_program *prog, const frt_graph *g, const frt_value *values,
                          const frt_plan *plan);
void frt_plan_free(frt_plan *plan);

#endif
