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

/* Between regions, own workers poll for spin_ns (default 0, see threadpool.h) before sleeping on
 * a condition variable (a futex). bench/wake_bench.c measures both ways (docs/architecture.md,
 * Threads).
 *
 * A region: its caller takes the pool (owner), publishes fn/ctx/n and opens the region under mu
 * (bumping epoch), runs tasks, then closes it under mu and waits until the threads that joined
 * it (joined) have left. A thread joins only under mu while the region is open, so after the
 * close no one else joins, and the caller waits only for threads that are running a task, never
 * for a sleeping worker's wake-up. The caller polls for them up to JOIN_SPIN_NS (they are in a
 * task, usually microseconds from its end), then sleeps on done. */
#define SPIN_NS_DEFAULT 0
#define SPIN_NS_MAX 10000000
#define JOIN_SPIN_NS 50000
/* While the owner holds the pool (frt_threadpool_hold), own workers poll between regions for up
 * to HOLD_SPIN_NS after the last region or the hold began before they sleep, and a region's
 * caller polls for joined threads up to that long before it sleeps. */
#define HOLD_SPIN_NS 1000000
/* A poller that finds more than PREEMPTED_NS between two of its clock checks (normally ~1 us
 * apart) lost its core to another thread: the host is oversubscribed, where polling only makes
 * the poller wait behind others when a region needs it (a sleeper is woken promptly instead). It
 * then sleeps, and the hold's polling is off for BACKOFF_NS. */
#define PREEMPTED_NS 100000
#define BACKOFF_NS 50000000

struct frt_threadpool {
    int n_threads;        /* the split planned for: caller + workers + helpers */
    int n_workers;        /* own threads */
    uint64_t spin_ns;     /* polling window before sleeping (FRT_SPIN_US, see threadpool.h) */
    uint64_t hold_ns;     /* the hold's polling window (HOLD_SPIN_NS; FRT_HOLD_SPIN_US) */
    pthread_t *workers;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    atomic_int owner;     /* a region is being run by some caller */
    /* the current region: written under mu while it is closed */
    void (*fn)(void *, size_t);
    void *ctx;
    atomic_size_t n;      /* tasks (written under mu, read by frt_threadpool_open) */
    atomic_size_t next;   /* next task to hand out */
    atomic_int open;      /* helpers may join while tasks are left (written under mu) */
    atomic_int joined;    /* threads inside the region besides its caller (written under mu) */
    int closer_waits;     /* the caller sleeps on done (under mu) */
    atomic_ulong epoch;   /* bumped per region (under mu, so sleeping workers cannot miss it) */
    atomic_int stop;
    atomic_int hold;      /* the owner is between frt_threadpool_hold(1) and (0) */
    _Atomic uint64_t backoff_until; /* no hold polling before this time (now_ns) */
    void (*notify)(void *);
    void *notify_ctx;
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

/* Env `name` if set to a number of microseconds in [0, 10^4], else def; in nanoseconds. */
static uint64_t env_window_ns(const char *name, uint64_t def) {
    const char *e = getenv(name);
    if (e && *e) {
        char *end;
        long v = strtol(e, &end, 10);
        if (*end == '\0' && v >= 0 && (uint64_t)v * 1000u <= SPIN_NS_MAX)
            return (uint64_t)v * 1000u;
    }
    return def;
}

/* Whether the hold's polling is on: held, and no preemption seen within BACKOFF_NS. */
static int hold_polls(frt_threadpool *tp, uint64_t now) {
    return tp->hold_ns && atomic_load_explicit(&tp->hold, memory_order_relaxed) &&
           now >= atomic_load_explicit(&tp->backoff_until, memory_order_relaxed);
}

static void note_preempted(frt_threadpool *tp, uint64_t now) {
    atomic_store_explicit(&tp->backoff_until, now + BACKOFF_NS, memory_order_relaxed);
}

/* Polls until a new region (or stop) is published or the polling window passed (spin_ns, or
 * HOLD_SPIN_NS while the hold polls); returns whether one was. */
static int spin_until_new_epoch(frt_threadpool *tp, unsigned long seen) {
    uint64_t t0 = now_ns(), last = t0;
    int held = hold_polls(tp, t0);
    uint64_t win = held && tp->spin_ns < tp->hold_ns ? tp->hold_ns : tp->spin_ns;
    for (int k = 0;; k++) {
        if (atomic_load_explicit(&tp->epoch, memory_order_acquire) != seen ||
            atomic_load_explicit(&tp->stop, memory_order_acquire))
            return 1;
        if (!win) return 0;
        if ((k & 63) == 63) {
            uint64_t t = now_ns();
            if (held && t - last > PREEMPTED_NS) {
                note_preempted(tp, t);
                return 0;
            }
            last = t;
            if (held && !atomic_load_explicit(&tp->hold, memory_order_relaxed)) {
                held = 0; /* released: back to the pool's own window, counted from now */
                win = tp->spin_ns;
                if (!win) return 0;
                t0 = t;
            } else if (t - t0 > win) {
                return 0;
            }
        }
        cpu_relax();
    }
}

int frt_threadpool_open(const frt_threadpool *tp) {
    frt_threadpool *t = (frt_threadpool *)tp; /* C11's atomic_load takes no const pointer */
    return t && atomic_load(&t->open) &&
           atomic_load_explicit(&t->next, memory_order_relaxed) <
               atomic_load_explicit(&t->n, memory_order_relaxed);
}

int frt_threadpool_help(frt_threadpool *tp) {
    if (!frt_threadpool_open(tp)) return 0;
    pthread_mutex_lock(&tp->mu);
    size_t n = atomic_load_explicit(&tp->n, memory_order_relaxed);
    if (!atomic_load_explicit(&tp->open, memory_order_relaxed) ||
        atomic_load_explicit(&tp->next, memory_order_relaxed) >= n) {
        pthread_mutex_unlock(&tp->mu); /* over, or every task taken: nothing to join */
        return 0;
    }
    atomic_fetch_add_explicit(&tp->joined, 1, memory_order_relaxed);
    void (*fn)(void *, size_t) = tp->fn;
    void *ctx = tp->ctx;
    pthread_mutex_unlock(&tp->mu);
    run_tasks(tp, fn, ctx, n);
    pthread_mutex_lock(&tp->mu);
    if (atomic_fetch_sub_explicit(&tp->joined, 1, memory_order_release) == 1 && tp->closer_waits)
        pthread_cond_signal(&tp->done);
    pthread_mutex_unlock(&tp->mu);
    return 1;
}

void frt_threadpool_hold(frt_threadpool *tp, int on) {
    /* no wake-up here: a run without a region (a tiny model) costs one store; the first
       region's broadcast wakes sleeping workers, which then poll for the rest of the run */
    if (tp && tp->n_workers) atomic_store_explicit(&tp->hold, on != 0, memory_order_relaxed);
}

void frt_threadpool_set_notify(frt_threadpool *tp, void (*notify)(void *), void *ctx) {
    if (!tp) return;
    tp->notify = notify;
    tp->notify_ctx = ctx;
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
        frt_threadpool_help(tp); /* the region may be over already: then nothing to do */
    }
    return NULL;
}

static frt_threadpool *pool_new(int n_threads, int n_workers, void (*thread_init)(void)) {
    if (n_threads <= 1 || n_workers < 0 || n_workers >= n_threads) return NULL;
    frt_threadpool *tp = calloc(1, sizeof *tp);
    if (!tp) return NULL;
    tp->workers = calloc((size_t)n_workers + 1, sizeof *tp->workers);
    if (!tp->workers) {
        free(tp);
        return NULL;
    }
    pthread_mutex_init(&tp->mu, NULL);
    pthread_cond_init(&tp->wake, NULL);
    pthread_cond_init(&tp->done, NULL);
    tp->spin_ns = env_window_ns("FRT_SPIN_US", SPIN_NS_DEFAULT);
    tp->hold_ns = env_window_ns("FRT_HOLD_SPIN_US", HOLD_SPIN_NS);
    tp->thread_init = thread_init;
    for (int i = 0; i < n_workers; i++) {
        pthread_mutex_lock(&tp->mu);
        tp->starting++;
        pthread_mutex_unlock(&tp->mu);
        if (pthread_create(&tp->workers[i], NULL, worker_main, tp) != 0) {
            pthread_mutex_lock(&tp->mu);
            tp->starting--;
            pthread_mutex_unlock(&tp->mu);
            break;
        }
        tp->n_workers++;
    }
    pthread_mutex_lock(&tp->mu);
    while (tp->starting > 0) pthread_cond_wait(&tp->done, &tp->mu);
    pthread_mutex_unlock(&tp->mu);
    /* helpers are the owner's; without them, as many threads as started */
    tp->n_threads = n_threads - (n_workers - tp->n_workers);
    if (tp->n_threads <= 1) {
        frt_threadpool_free(tp);
        return NULL;
    }
    return tp;
}

frt_threadpool *frt_threadpool_create(int n_threads, void (*thread_init)(void)) {
    return pool_new(n_threads, n_threads - 1, thread_init);
}

frt_threadpool *frt_threadpool_create_shared(int n_threads, int n_workers,
                                             void (*thread_init)(void)) {
    return pool_new(n_threads, n_workers, thread_init);
}

void frt_threadpool_free(frt_threadpool *tp) {
    if (!tp) return;
    pthread_mutex_lock(&tp->mu);
    atomic_store(&tp->stop, 1);
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->mu);
    for (int i = 0; i < tp->n_workers; i++) pthread_join(tp->workers[i], NULL);
    pthread_mutex_destroy(&tp->mu);
    pthread_cond_destroy(&tp->wake);
    pthread_cond_destroy(&tp->done);
    free(tp->workers);
    free(tp);
}

frt_status frt_threadpool_check(int threads) {
    (void)threads;
    return FRT_OK;
}

int frt_threadpool_size(const frt_threadpool *tp) { return tp ? tp->n_threads : 1; }

void frt_parallel_for(frt_threadpool *tp, size_t n, void (*fn)(void *ctx, size_t i), void *ctx) {
    int free_ = 0;
    if (!tp || n <= 1 ||
        !atomic_compare_exchange_strong_explicit(&tp->owner, &free_, 1, memory_order_acquire,
                                                 memory_order_relaxed)) {
        for (size_t i = 0; i < n; i++) fn(ctx, i);
        return;
    }
    pthread_mutex_lock(&tp->mu);
    tp->fn = fn;
    tp->ctx = ctx;
    atomic_store_explicit(&tp->n, n, memory_order_relaxed);
    atomic_store_explicit(&tp->next, 0, memory_order_relaxed);
    atomic_store(&tp->open, 1);
    atomic_fetch_add_explicit(&tp->epoch, 1, memory_order_release);
    if (tp->n_workers) pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->mu);
    if (tp->notify) tp->notify(tp->notify_ctx);
    run_tasks(tp, fn, ctx, n);
    pthread_mutex_lock(&tp->mu);
    atomic_store(&tp->open, 0);
    pthread_mutex_unlock(&tp->mu);
    /* only threads running a task remain: poll, then sleep */
    uint64_t t0 = 0, last = 0, join_ns = JOIN_SPIN_NS;
    for (int k = 0; atomic_load_explicit(&tp->joined, memory_order_acquire) > 0; k++) {
        if ((k & 63) == 63) {
            uint64_t t = now_ns();
            int preempted = 0;
            if (!t0) {
                t0 = t;
                if (hold_polls(tp, t)) join_ns = tp->hold_ns;
            } else if (join_ns == tp->hold_ns && t - last > PREEMPTED_NS) {
                note_preempted(tp, t);
                preempted = 1;
            }
            last = t;
            if (preempted || t - t0 > join_ns) {
                pthread_mutex_lock(&tp->mu);
                tp->closer_waits = 1;
                while (atomic_load_explicit(&tp->joined, memory_order_acquire) > 0)
                    pthread_cond_wait(&tp->done, &tp->mu);
                tp->closer_waits = 0;
                pthread_mutex_unlock(&tp->mu);
                break;
            }
        }
        cpu_relax();
    }
    atomic_store_explicit(&tp->owner, 0, memory_order_release);
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
    return frt_par_split(frt_threadpool_size(tp), work_ns);
}

int frt_par_split(int threads, double work_ns) {
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
