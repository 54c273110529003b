/* Inter-op parallel runs of block 0 by its DAG, and asynchronous runs (src/runtime/interop.c). */
#ifndef FRT_RUNTIME_INTEROP_H
#define FRT_RUNTIME_INTEROP_H

#include "model.h"

/* The runtime's inter-op state: schedule arrays and inter_op_threads worker threads (one when
 * inter_op_threads is 1: created for frt_run_async without a launcher). */
/* What interop.c needs from runtime.c, passed in (the layering check forbids call cycles between
 * files): the exec context of block b for a step, and a sequential run of block 0. */
typedef struct frt_iop_hooks {
    frt_exec (*exec)(frt_brt *b, void *scratch, frt_threadpool *tp);
    frt_status (*run_block0)(frt_runtime *rt);
} frt_iop_hooks;

/* At load, after frt_dag_build (inter_op_threads > 1): estimates the critical path and either
 * keeps inter-op (m->iop_threads = inter_op_threads) or declines it (m->iop_threads = 1,
 * blocks[0].prog->dag NULL so plans and runs are sequential, m->iop_declined says why); the DAG
 * stays in m->iop_dag for frt_runtime_interop_info. */
frt_status frt_iop_decide(frt_model *m);

frt_status frt_iop_create(frt_runtime *rt, const frt_iop_hooks *hooks, frt_iop **out);
void frt_iop_free(frt_iop *io);
/* Runs block 0 (shaped, inputs bound) by its DAG on the caller and the workers; waits. */
frt_status frt_iop_run(frt_runtime *rt);
/* Starts running block 0 through launcher (NULL: the runtime's workers): by the DAG, or as one
 * task when the program has none or inter_op_threads is 1. fin(rt, status, fin_arg) is called
 * once on the thread that ends the run (with the message set there on failure); the run's state
 * is not touched after it. */
frt_status frt_iop_start(frt_runtime *rt, const frt_iop_hooks *hooks,
                         const frt_task_launcher *launcher,
                         void (*fin)(frt_runtime *, frt_status, void *), void *fin_arg);


#endif
