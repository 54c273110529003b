/* The compiled program: what compile produces from the IR and every runtime executes.
 *
 * Steps are the live nodes in topological order, each with its kernel chosen at load. A step has
 * one of three classes:
 *   COMPUTE  runs on every frt_run;
 *   SHAPE    runs while a runtime resolves shapes (its inputs are constants or other SHAPE values,
 *            or it reads only input dims, like Shape): shape subgraphs over dynamic dims;
 *   VIEW     never runs: its output aliases its input (Reshape, Flatten, ...).
 * Values get a class too; lifetimes of MANAGED values are positions in the compute order.
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
    FRT_VC_OWNED        /* graph output storage of the runtime (not shared) */
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
} frt_program;

typedef struct frt_compile_stats {
    size_t num_folded, num_fused, transformed_bytes;
} frt_compile_stats;

/* Runs inference, folding, fusion and selection over g and fills prog (arrays in arena), with the
 * default providers. On failure the kernels already selected are released. */
frt_status frt_compile(frt_graph *g, const frt_options *opt, frt_arena *arena, frt_program *prog,
                       frt_compile_stats *stats);
/* The same with the given providers, tried in order for each node (the builtin one last). */
frt_status frt_compile_with(frt_graph *g, const frt_options *opt,
                            const frt_provider *const *providers, size_t n_providers,
                            frt_arena *arena, frt_program *prog, frt_compile_stats *stats);
/* Calls each step's kernel destroy hook once (the model is being freed). */
void frt_program_release(frt_program *prog);

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
} frt_plan;

frt_status frt_plan_init(frt_plan *plan, size_t n_values, size_t n_compute);
/* Plans memory for the sizes in values (all dims known) with plan->scratch_bytes filled. */
frt_status frt_plan_compute(const frt_program *prog, const frt_value *values, frt_planner which,
                            frt_plan *plan);
/* Checks that no two storage roots (or scratch areas) live at the same step overlap, that every
 * member lies inside its root, and that in-place outputs overwrite only dead inputs. Returns
 * FRT_ERR_INTERNAL with a message naming the values otherwise. */
frt_status frt_plan_check(const frt_program *prog, const frt_graph *g, const frt_value *values,
                          const frt_plan *plan);
void frt_plan_free(frt_plan *plan);

#endif
