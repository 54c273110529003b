/* Intra-op thread pool. The calling thread takes part in every parallel region. Between regions
 * workers sleep on a condition variable (a futex): no spinning by default. Env FRT_SPIN_US =
 * 1..10000 (read when a pool is created) makes workers poll that many microseconds first, so
 * regions that follow each other closely skip the wake-up: faster on a dedicated machine, slower
 * on a busy one, where a polling thread uses up its time slice and then waits behind other
 * processes instead of being woken promptly (bench/wake_bench.c, docs/architecture.md "Threads").
 * A region's caller never waits for a worker to wake up: threads join a region while it has
 * tasks left, and the caller, once every task is taken, waits only for those that joined (they
 * are running a task: it polls briefly, then sleeps). */
#ifndef FRT_UTIL_THREADPOOL_H
#define FRT_UTIL_THREADPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "flatrt.h"

typedef struct frt_threadpool frt_threadpool;

/* A pool that runs regions on n_threads threads in all (the caller + n_threads-1 workers).
 * Returns NULL for n_threads <= 1 (serial) or on failure; all functions accept NULL.
 * thread_init (may be NULL) runs once on each worker before create returns, so per-thread state
 * that kernels set up lazily (packing buffers) exists before the first region. */
frt_threadpool *frt_threadpool_create(int n_threads, void (*thread_init)(void));
/* A pool of n_threads threads of which only n_workers (0 <= n_workers < n_threads) are its own:
 * the other n_threads - 1 - n_workers are helpers, threads of the owner (inter-op participants,
 * src/runtime/interop.c) that join regions with frt_threadpool_help when they are idle. n_threads
 * is the split the cost model plans for; a region nobody joins runs on its caller alone. */
frt_threadpool *frt_threadpool_create_shared(int n_threads, int n_workers,
                                             void (*thread_init)(void));
void frt_threadpool_free(frt_threadpool *tp);
/* Whether this build can run `threads` threads: FRT_OK, or (a selective build without the
 * thread_pool feature, src/runtime/features_off.c) FRT_ERR_UNSUPPORTED for threads > 1 with a
 * message naming the selection file. Checked when a model is loaded. */
frt_status frt_threadpool_check(int threads);
int frt_threadpool_size(const frt_threadpool *tp); /* 1 for NULL */

/* Calls fn(ctx, i) for every i in [0, n) across the pool and returns when all are done.
 * Tasks are handed out dynamically: the caller runs tasks too, and threads that arrive after the
 * last task was taken are not waited for. One region at a time per pool: a call made while
 * another thread's region runs (two inter-op participants) or from inside fn runs its tasks on
 * the calling thread. Each task must give the same result on any thread. */
void frt_parallel_for(frt_threadpool *tp, size_t n, void (*fn)(void *ctx, size_t i), void *ctx);

/* Run-scoped polling. Between frt_threadpool_hold(tp, 1) and (tp, 0) (the owner, around one
 * run of a model: it owns its pool for that long) the pool's own workers poll between regions
 * for up to 1 ms after each region instead of sleeping at once, and a region's caller polls up
 * to 1 ms for the threads that joined, so the steps of a run do not each pay a futex wake-up
 * (only its first region wakes sleeping workers: a run without regions costs nothing more).
 * After hold(0) they sleep as before (after FRT_SPIN_US, if set): the polling ends with the
 * run. On an oversubscribed host polling loses (a poller that used
 * up its time slice waits behind other threads when a region needs it; a sleeper is woken
 * promptly): a poller that finds itself preempted (over 100 us between two clock checks) sleeps,
 * and the hold polls no more for 50 ms. Env FRT_HOLD_SPIN_US = 0..10000 (read when a pool is
 * created; an A/B aid) sets the 1 ms window, 0 turning the hold's polling off. Called by the
 * pool's owner only, never from a task;
 * no-op for NULL or a pool without own workers. */
void frt_threadpool_hold(frt_threadpool *tp, int on);

/* ---- helpers (pools from frt_threadpool_create_shared) ----
 * notify(ctx) is called by the thread that opens a region (after opening it), so the owner can
 * wake helpers it let sleep; NULL: none. Set before any region runs. */
void frt_threadpool_set_notify(frt_threadpool *tp, void (*notify)(void *), void *ctx);
/* Whether a region is open that frt_threadpool_help would join (one atomic load; seq_cst, so a
 * helper that announces itself as sleeping, then checks this, cannot miss a notify). */
int frt_threadpool_open(const frt_threadpool *tp);
/* Joins the open region, if any, and runs its tasks until none is left; returns whether it
 * joined. Must not be called from inside a task. */
int frt_threadpool_help(frt_threadpool *tp);

/* Splits [0, n) into contiguous ranges and calls fn(ctx, lo, hi) for each, where one item costs
 * item_ns (cost model below): once, on the calling thread, when frt_par_threads gives 1;
 * otherwise in about four ranges per thread used. */
void frt_parallel_ranges(frt_threadpool *tp, int64_t n, double item_ns,
                         void (*fn)(void *ctx, int64_t lo, int64_t hi), void *ctx);

/* ---- cost model ----
 * A kernel estimates its work as nanoseconds on one thread, from the flops of compute-bound
 * loops (FRT_PAR_NS_PER_FLOP) or the bytes read and written by memory-bound ones
 * (FRT_PAR_NS_PER_BYTE), and frt_par_threads says how many threads to split it over: as many as
 * give each at least FRT_PAR_MIN_NS, so tiny ops stay on the calling thread (no fork/join) and
 * mid-sized ops already use 2 threads. This is the one place the thresholds are set. */
#define FRT_PAR_MIN_NS 10000.0           /* least work per thread worth a fork/join */
#define FRT_PAR_NS_PER_FLOP (1.0 / 64.0) /* ~64 GFLOP/s per thread in the float32 FMA kernels */
#define FRT_PAR_NS_PER_BYTE (1.0 / 16.0) /* ~16 GB/s per thread streaming through memory */
/* oneDNN's convolutions on blocked activations (src/ops/onednn/split.c); its depthwise ones
 * are bound by memory, not FMAs (70-95 GFLOP/s on the 14x14..56x56 layers of mobilenet_v2) */
#define FRT_PAR_NS_PER_FLOP_DNNL (1.0 / 200.0)
#define FRT_PAR_NS_PER_FLOP_DNNL_DW (1.0 / 80.0)
/* the same on the AVX2 tier (Zen 3, 1 thread under chrt -f 1: oneDNN's 1x1 convolutions of
 * mobilenet_v2 and resnet50 at 7x7..14x14 ran at 78-91 GFLOP/s); its depthwise estimate is the
 * larger of the flops one and the image's bytes (split.c) */
#define FRT_PAR_NS_PER_FLOP_DNNL_AVX2 (1.0 / 90.0)

/* Threads to use for work_ns of work: 1..frt_threadpool_size(tp). */
int frt_par_threads(const frt_threadpool *tp, double work_ns);

/* The same for `threads` threads without a pool at hand (a kernel planning its split at load). */
int frt_par_split(int threads, double work_ns);

#endif
