#include "threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

/* After a region, workers (and the caller, waiting for them) poll for spin_ns (default 0, see
 * threadpool.h) before sleeping on a condition variable (a futex). bench/wake_bench.c measures
 * both ways (docs/architecture.md, Threads). */
#define SPIN_NS_DEFAULT 0
#define SPIN_NS_MAX 10000000

struct frt_threadpool {
    int n_threads;
    uint64_t spin_ns;     /* polling window before sleeping (FRT_SPIN_US, see threadpool.h) */
    pthread_t *workers;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    /* the current region: written by the caller before it publishes a new epoch */
    void (*fn)(void *, size_t);
    void *ctx;
    size_t n;
    atomic_size_t next;
    atomic_int active;    /* workers still inside the region */
    atomic_ulong epoch;   /* bumped per region (under mu, so sleepers cannot miss it) */
    atomic_int stop;
    void (*thread_init)(void);
    int starting;         /* workers that have not finished thread_init (under mu) */
};

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void run_tasks(frt_threadpool *tp, void (*fn)(void *, size_t), void *ctx, size_t n) {
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&tp->next, 1, memory_order_relaxed);
        if (i >= n) break;
        fn(ctx, i);
    }
}

/* FRT_SPIN_US if set to a number in [0, 10^4], else the default (0); in nanoseconds. */
static uint64_t spin_window_ns(void) {
    const char *e = getenv("FRT_SPIN_US");
    if (e && *e) {
        char *end;
        long v = strtol(e, &end, 10);
        if (*end == '\0' && v >= 0 && (uint64_t)v * 1000u <= SPIN_NS_MAX)
            return (uint64_t)v * 1000u;
    }
    return SPIN_NS_DEFAULT;
}

/* Polls until a new region (or stop) is published or spin_ns passed; returns whether one was. */
static int spin_until_new_epoch(frt_threadpool *tp, unsigned long seen) {
    uint64_t t0 = tp->spin_ns ? now_ns() : 0;
    for (int k = 0;; k++) {
        if (atomic_load_explicit(&tp->epoch, memory_order_acquire) != seen ||
            atomic_load_explicit(&tp->stop, memory_order_acquire))
            return 1;
        if (!tp->spin_ns || ((k & 63) == 63 && now_ns() - t0 > tp->spin_ns)) return 0;
        cpu_relax();
    }
}

static void *worker_main(void *arg) {
    frt_threadpool *tp = arg;
    unsigned long seen = 0;
    if (tp->thread_init) tp->thread_init();
    pthread_mutex_lock(&tp->mu);
    if (--tp->starting == 0) pthread_cond_signal(&tp->done);
    pthread_mutex_unlock(&tp->mu);
    for (;;) {
        if (!spin_until_new_epoch(tp, seen)) {
            pthread_mutex_lock(&tp->mu);
            while (atomic_load(&tp->epoch) == seen && !atomic_load(&tp->stop))
                pthread_cond_wait(&tp->wake, &tp->mu);
            pthread_mutex_unlock(&tp->mu);
        }
        if (atomic_load(&tp->stop)) break;
        seen = atomic_load_explicit(&tp->epoch, memory_order_acquire);
        run_tasks(tp, tp->fn, tp->ctx, tp->n);
        if (atomic_fetch_sub_explicit(&tp->active, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&tp->mu);
            pthread_cond_signal(&tp->done);
            pthread_mutex_unlock(&tp->mu);
        }
    }
    return NULL;
}

frt_threadpool *frt_threadpool_create(int n_threads, void (*thread_init)(void)) {
    if (n_threads <= 1) return NULL;
    frt_threadpool *tp = calloc(1, sizeof *tp);
    if (!tp) return NULL;
    tp->workers = calloc((size_t)n_threads - 1, sizeof *tp->workers);
    if (!tp->workers) {
        free(tp);
        return NULL;
    }
    pthread_mutex_init(&tp->mu, NULL);
    pthread_cond_init(&tp->wake, NULL);
    pthread_cond_init(&tp->done, NULL);
    tp->n_threads = 1;
    tp->spin_ns = spin_window_ns();
    tp->thread_init = thread_init;
    for (int i = 0; i < n_threads - 1; i++) {
        pthread_mutex_lock(&tp->mu);
        tp->starting++;
        pthread_mutex_unlock(&tp->mu);
        if (pthread_create(&tp->workers[i], NULL, worker_main, tp) != 0) {
            pthread_mutex_lock(&tp->mu);
            tp->starting--;
            pthread_mutex_unlock(&tp->mu);
            break;
        }
        tp->n_threads++;
    }
    pthread_mutex_lock(&tp->mu);
    while (tp->starting > 0) pthread_cond_wait(&tp->done, &tp->mu);
    pthread_mutex_unlock(&tp->mu);
    if (tp->n_threads == 1) {
        frt_threadpool_free(tp);
        return NULL;
    }
    return tp;
}

void frt_threadpool_free(frt_threadpool *tp) {
    if (!tp) return;
    pthread_mutex_lock(&tp->mu);
    atomic_store(&tp->stop, 1);
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->mu);
    for (int i = 0; i < tp->n_threads - 1; i++) pthread_join(tp->workers[i], NULL);
    pthread_mutex_destroy(&tp->mu);
    pthread_cond_destroy(&tp->wake);
    pthread_cond_destroy(&tp->done);
    free(tp->workers);
    free(tp);
}

int frt_threadpool_size(const frt_threadpool *tp) { return tp ? tp->n_threads : 1; }

void frt_parallel_for(frt_threadpool *tp, size_t n, void (*fn)(void *ctx, size_t i), void *ctx) {
    if (!tp || n <= 1) {
        for (size_t i = 0; i < n; i++) fn(ctx, i);
        return;
    }
    tp->fn = fn;
    tp->ctx = ctx;
    tp->n = n;
    atomic_store_explicit(&tp->next, 0, memory_order_relaxed);
    atomic_store_explicit(&tp->active, tp->n_threads - 1, memory_order_relaxed);
    pthread_mutex_lock(&tp->mu);
    atomic_fetch_add_explicit(&tp->epoch, 1, memory_order_release);
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->mu);
    run_tasks(tp, fn, ctx, n);
    uint64_t t0 = tp->spin_ns ? now_ns() : 0;
    for (int k = 0; atomic_load_explicit(&tp->active, memory_order_acquire) > 0; k++) {
        if (!tp->spin_ns || ((k & 63) == 63 && now_ns() - t0 > tp->spin_ns)) {
            pthread_mutex_lock(&tp->mu);
            while (atomic_load_explicit(&tp->active, memory_order_acquire) > 0)
                pthread_cond_wait(&tp->done, &tp->mu);
            pthread_mutex_unlock(&tp->mu);
            break;
        }
        cpu_relax();
    }
}

typedef struct ranges_job {
    void (*fn)(void *, int64_t, int64_t);
    void *ctx;
    int64_t n, per;
} ranges_job;

static void ranges_task(void *ctx, size_t i) {
    const ranges_job *j = ctx;
    int64_t lo = (int64_t)i * j->per, hi = lo + j->per;
    j->fn(j->ctx, lo, hi < j->n ? hi : j->n);
}

int frt_par_threads(const frt_threadpool *tp, double work_ns) {
    int threads = frt_threadpool_size(tp);
    if (threads <= 1 || !(work_ns >= 2 * FRT_PAR_MIN_NS)) return 1; /* also NaN */
    double fit = work_ns / FRT_PAR_MIN_NS;
    return fit < (double)threads ? (int)fit : threads;
}

void frt_parallel_ranges(frt_threadpool *tp, int64_t n, double item_ns,
                         void (*fn)(void *ctx, int64_t lo, int64_t hi), void *ctx) {
    if (n <= 0) return;
    int threads = n > 1 ? frt_par_threads(tp, (double)n * item_ns) : 1;
    if (threads <= 1) {
        fn(ctx, 0, n);
        return;
    }
    int64_t tasks = (int64_t)threads * 4;
    if (tasks > n) tasks = n;
    ranges_job j = {fn, ctx, n, (n + tasks - 1) / tasks};
    frt_parallel_for(tp, (size_t)((n + j.per - 1) / j.per), ranges_task, &j);
}
