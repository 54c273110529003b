/* Intra-op thread pool. The calling thread takes part in every parallel region. After a region,
 * workers poll for up to 100 us for the next one (regions inside one run follow each other
 * closely, and a futex wake-up costs tens of microseconds), then sleep on a condition variable:
 * a pool idle between runs costs no CPU after that. */
#ifndef FRT_UTIL_THREADPOOL_H
#define FRT_UTIL_THREADPOOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct frt_threadpool frt_threadpool;

/* A pool that runs regions on n_threads threads in all (the caller + n_threads-1 workers).
 * Returns NULL for n_threads <= 1 (serial) or on failure; all functions accept NULL.
 * thread_init (may be NULL) runs once on each worker before create returns, so per-thread state
 * that kernels set up lazily (packing buffers) exists before the first region. */
frt_threadpool *frt_threadpool_create(int n_threads, void (*thread_init)(void));
void frt_threadpool_free(frt_threadpool *tp);
int frt_threadpool_size(const frt_threadpool *tp); /* 1 for NULL */

/* Calls fn(ctx, i) for every i in [0, n) across the pool and returns when all are done.
 * Tasks are handed out dynamically; fn must not call frt_parallel_for on the same pool. */
void frt_parallel_for(frt_threadpool *tp, size_t n, void (*fn)(void *ctx, size_t i), void *ctx);

/* Splits [0, n) into contiguous ranges and calls fn(ctx, lo, hi) for each: once, on the calling
 * thread, when the pool is serial or n * item_cost < min_cost (not worth a fork/join); otherwise
 * in about four ranges per thread. */
void frt_parallel_ranges(frt_threadpool *tp, int64_t n, int64_t item_cost, int64_t min_cost,
                         void (*fn)(void *ctx, int64_t lo, int64_t hi), void *ctx);

#endif
