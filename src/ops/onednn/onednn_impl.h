/* What the files of the oneDNN provider share (src/ops/onednn/; internal, not an API).
 * onednn.c owns the engine and the per-thread state (stream, memory objects per descriptor);
 * split.c runs a step's primitive as channel parts on the runtime's pool. */
#ifndef FRT_OPS_ONEDNN_IMPL_H
#define FRT_OPS_ONEDNN_IMPL_H

#include <dnnl.h>

#include "ops/op.h"

/* onednn.c's engine and per-thread state, handed to split.c as function pointers (so calls go
 * one way between the two files):
 *   engine()             the process's CPU engine (made on first use), or NULL;
 *   this_thread()        the calling thread's state (made on first use, freed when the thread
 *                        exits), or NULL;
 *   thread_stream(t)     its stream;
 *   thread_mem(t, md)    its memory object for descriptor md (made on first use, no buffer set; md
 *                        must stay at its address: a kernel's params), or NULL with *err;
 *   set_threads(n)       the calling thread's OpenMP thread count (what oneDNN plans and runs a
 *                        primitive with). */
typedef struct thread_state frt_dn_thread;
typedef struct dn_env {
    dnnl_engine_t (*engine)(void);
    frt_dn_thread *(*this_thread)(void);
    dnnl_stream_t (*thread_stream)(frt_dn_thread *t);
    dnnl_memory_t (*thread_mem)(frt_dn_thread *t, const dnnl_memory_desc_t *md,
                                dnnl_status_t *err);
    void (*set_threads)(int n);
} dn_env;

#endif
