/* Shared by the compile sources (compile.c, layout.c); not used outside src/compile. */
#ifndef FRT_COMPILE_INTERNAL_H
#define FRT_COMPILE_INTERNAL_H

#include "program.h"

typedef struct frt_compile_ctx {
    const frt_options *opt;
    const frt_provider *const *providers; /* kernel providers, in order (builtin last) */
    size_t n_providers;
    const frt_op_source *src;    /* may be NULL */
    frt_arena *arena;
    frt_compile_stats *stats;
    frt_block *blocks;           /* heap while compiling; copied into the arena at the end */
    size_t n_blocks, cap_blocks;
    bool context_added;          /* an error already names the subgraph it happened in */
} frt_compile_ctx;

/* Definition of node n from the op source, else the registry's for n's opset; NULL if neither
 * has one. */
const frt_op_def *frt_compile_find(const frt_compile_ctx *cx, const frt_node *n);

/* Layout pass over the selected steps of g (in order; steps and defs hold n_steps entries):
 * gives every produced value the layout its kernel declared and returns new arrays (in the arena)
 * with reorder steps inserted where a reader needs another layout than the value has (before the
 * first such reader; later readers reuse the converted value) and after producers of non-plain
 * graph outputs (the graph output itself becomes the plain result). Captured reads (n_cap) need
 * plain. Reorders add IR nodes "flatrt::Reorder" and values to g. */
frt_status frt_layout_pass(frt_graph *g, frt_arena *arena, frt_step **steps,
                           const frt_op_def ***defs, size_t *n_steps, size_t *n_reorders);

#endif
