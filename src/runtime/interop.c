/* Inter-op parallelism and asynchronous runs of a runtime.
 *
 * A parallel run executes the compute steps of block 0 by their dataflow DAG (frt_dag): each
 * position has a counter of predecessors not yet done, reset at the start of every run; positions
 * whose counter is zero wait in a ready set (critical path first, see take). Up to
 * inter_op_threads participants (the caller of frt_run and workers of the runtime, or tasks given
 * to a caller's launcher for frt_run_async) take ready steps, run them and count down their
 * successors. One mutex guards the schedule: a
 * step is a kernel call (microseconds at least), so the lock is not where time goes, and every
 * hand-over of a tensor from its producer to a reader passes through it (TSan sees the order).
 *
 * Threads: one set of threads serves both kinds of parallelism. The runtime's intra-op pool is
 * shared (frt_threadpool_create_shared): of its max(num_threads, inter_op_threads) threads, the
 * participants are the helpers and only the rest are the pool's own workers. Every step runs on
 * its participant with the pool; a kernel that splits its work (by the cost model,
 * frt_par_threads) opens a region, and idle participants join it (frt_threadpool_help): while
 * the 8 lookups of dlrm_small run, its bottom MLP runs on one thread, and once they are done the
 * other participant takes half of each GEMM. A region nobody joins (every participant busy) runs
 * on its caller alone; kernels split without changing any summation order, so a step's result
 * does not depend on who helped. So at most max(num_threads, inter_op_threads) threads compute
 * at a time. Idle participants poll (ready steps, open regions, the end of the run) for up to
 * SPIN_NS before sleeping (a futex wake-up costs tens of microseconds on a VM); opening a region
 * wakes sleeping participants.
 *
 * Hand-off: a synchronous run (frt_iop_run) queues no tasks. The caller resets the schedule
 * under the mutex and bumps the workers' run epoch; limit - 1 of the limit workers watch it
 * (SPIN_NS after their last run or task, then they sleep until woken) and take part, at most
 * limit - 1 at a time (sync_in); the last worker serves only asynchronous runs' tasks.
 * The caller returns when no step is left and the next synchronous run does not wait for the
 * workers to leave: one that arrives late sees either a finished schedule (and leaves) or the
 * next run's (and takes part in it). Asynchronous starts and frt_iop_free wait for them.
 *
 * Solo steps (FRT_INTEROP_SOLO=SUBSTR[,SUBSTR...], read when the runtime is created; default
 * none): a step whose kernel name contains one of the substrings ("*": every step) runs without
 * the intra-op pool whenever another step is ready or running, so its parts run one after
 * another on its participant while the others take the sibling steps; with nothing else to do
 * it splits as usual. For kernels that split poorly: GoogLeNet's Winograd convolutions run 1.67x
 * faster on 2 threads than on 1 (its direct ones 1.91x); with `wino` solo, forced inter-op runs
 * level with the steps in order at 2 threads (0.97x without; docs/architecture.md, inter-op).
 *
 * Positions the plan removed (Concat done in place) are scheduled as no-ops so the order they
 * carry is kept. After a step fails, the remaining steps are counted down without running and
 * the first failure (status and message) is the run's. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "interop.h"
#include "ops/sgemm.h"
#include "util/threadpool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

#define SPIN_NS 50000

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the runtime's own worker threads: a FIFO of tasks ------------------------------------------- */

typedef struct task {
    void (*fn)(void *);
    void *arg;
} task;

typedef struct workers {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    task *q;
    size_t cap, head, n;
    atomic_size_t queued; /* == n, readable without the lock while polling */
    /* synchronous inter-op runs: bumped (under mu) when one starts; a worker that sees it change
       calls run(run_ctx) (interop.c's sync participant), no task needed */
    atomic_ulong run_epoch;
    void (*run)(void *);
    void *run_ctx;
    /* only the first n_sync workers (by start order) watch run_epoch: a synchronous run takes
       the caller and n_sync = inter_op_threads - 1 workers, and the last worker is there for
       asynchronous runs (inter_op_threads tasks). A worker that also watched would wake or poll
       at every run only to find the run full, and then poll (SPIN_NS) for the next one: on 2
       vCPUs, a third runnable thread beside the run's two (dlrm_small, inter-op 2: ~50 us of
       polling per ~120 us run). Watchers sleep on cv_sync, the others on cv. */
    pthread_cond_t cv_sync;
    int n_sync;
    atomic_int started;
    int sleepers;
    int stop;
    int n_threads;
    pthread_t *th;
} workers;

static void *worker_main(void *arg) {
    workers *w = arg;
    frt_sgemm_thread_warmup();
    /* n_sync is set before the threads start */
    bool watch = atomic_fetch_add(&w->started, 1) < w->n_sync;
    pthread_cond_t *cv = watch ? &w->cv_sync : &w->cv;
    unsigned long seen = atomic_load(&w->run_epoch);
#define RUN_STARTED(order) (watch && atomic_load_explicit(&w->run_epoch, order) != seen)
    for (;;) {
        uint64_t t0 = now_ns();
        for (int k = 0; !atomic_load_explicit(&w->queued, memory_order_acquire) &&
                        !RUN_STARTED(memory_order_acquire);
             k++) {
            if ((k & 63) == 63 && now_ns() - t0 > SPIN_NS) break;
            cpu_relax();
        }
        pthread_mutex_lock(&w->mu);
        while (!w->n && !w->stop && !RUN_STARTED(memory_order_relaxed)) {
            w->sleepers++;
            pthread_cond_wait(cv, &w->mu);
            w->sleepers--;
        }
        if (RUN_STARTED(memory_order_relaxed) && !w->stop) { /* a synchronous run started */
            seen = atomic_load_explicit(&w->run_epoch, memory_order_relaxed);
            void (*run)(void *) = w->run;
            void *ctx = w->run_ctx;
            pthread_mutex_unlock(&w->mu);
            run(ctx);
            continue;
        }
#undef RUN_STARTED
        if (!w->n) { /* stop */
            pthread_mutex_unlock(&w->mu);
            return NULL;
        }
        task t = w->q[w->head];
        w->head = (w->head + 1) % w->cap;
        w->n--;
        atomic_store_explicit(&w->queued, w->n, memory_order_release);
        pthread_mutex_unlock(&w->mu);
        t.fn(t.arg);
    }
}

static void workers_free(workers *w) {
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_cond_broadcast(&w->cv_sync);
    pthread_mutex_unlock(&w->mu);
    for (int i = 0; i < w->n_threads; i++) pthread_join(w->th[i], NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    pthread_cond_destroy(&w->cv_sync);
    free(w->q);
    free(w->th);
    free(w);
}

/* n threads, of which the first n_sync take part in synchronous runs (workers_start_run). */
static workers *workers_new(int n, int n_sync) {
    workers *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->n_sync = n_sync;
    w->cap = (size_t)n + 4;
    w->q = calloc(w->cap, sizeof *w->q);
    w->th = calloc((size_t)n, sizeof *w->th);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    pthread_cond_init(&w->cv_sync, NULL);
    if (!w->q || !w->th) {
        workers_free(w);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (pthread_create(&w->th[i], NULL, worker_main, w) != 0) break;
        w->n_threads++;
    }
    if (w->n_threads < n) {
        workers_free(w);
        return NULL;
    }
    return w;
}

/* Launcher over the workers. The queue holds every participant of one run (at most n_threads +
 * 4 tasks are ever queued: one run at a time per runtime); a full queue runs the task here. */
static void workers_launch(void *ctx, void (*fn)(void *), void *arg) {
    workers *w = ctx;
    pthread_mutex_lock(&w->mu);
    if (w->n == w->cap) {
        pthread_mutex_unlock(&w->mu);
        fn(arg);
        return;
    }
    w->q[(w->head + w->n) % w->cap] = (task){fn, arg};
    w->n++;
    atomic_store_explicit(&w->queued, w->n, memory_order_release);
    if (w->sleepers) { /* any worker takes tasks, watchers too (rare: async runs) */
        pthread_cond_signal(&w->cv);
        pthread_cond_broadcast(&w->cv_sync);
    }
    pthread_mutex_unlock(&w->mu);
}

/* Starts a synchronous run: every watching worker not busy with a task calls w->run (set
 * before). */
static void workers_start_run(workers *w) {
    pthread_mutex_lock(&w->mu);
    atomic_fetch_add_explicit(&w->run_epoch, 1, memory_order_release);
    if (w->sleepers) pthread_cond_broadcast(&w->cv_sync);
    pthread_mutex_unlock(&w->mu);
}

/* ---- one run ----------------------------------------------------------------------------------- */

struct frt_iop {
    frt_runtime *rt;
    frt_iop_hooks hooks;
    workers *w;            /* created with the runtime (inter_op_threads > 1) or on first async use */
    int limit;             /* participants per run: inter_op_threads (1 when declined) */
    pthread_mutex_t mu;
    pthread_cond_t cv;     /* idle participants and a waiting frt_run caller */
    int32_t *pending;      /* per position: predecessors not done */
    int32_t *ready;        /* stack of ready positions */
    int32_t n_ready, n_left, running;
    atomic_int ready_hint; /* n_ready, for polling without the lock */
    atomic_int left_hint;  /* n_left */
    atomic_int participants; /* async tasks still inside the run (written under mu) */
    atomic_int sync_in;    /* workers inside a synchronous run (written under mu) */
    bool sync;             /* the current run is frt_iop_run's (under mu) */
    atomic_int sleepers;   /* participants asleep on cv (written under mu) */
    bool caller_waits;     /* a caller waits on cv for participants == 0 */
    frt_status st;
    char msg[1024];
    bool *solo;            /* per position: runs without the pool beside other steps (NULL: none) */
    /* async: called by the last participant to leave */
    void (*fin)(frt_runtime *, frt_status, void *);
    void *fin_arg;
};

static void notify_sleepers(void *arg);
static void sync_participate(void *arg);

/* Whether kernel name kn is in list, FRT_INTEROP_SOLO's value: comma-separated substrings of
 * kernel names, "*" for every kernel. */
static bool solo_kernel(const char *list, const char *kn) {
    if (!kn) return false;
    for (const char *a = list; *a;) {
        const char *e = strchr(a, ',');
        size_t len = e ? (size_t)(e - a) : strlen(a);
        if (len == 1 && *a == '*') return true;
        for (const char *k = kn; len && *k; k++)
            if (!strncmp(k, a, len)) return true;
        if (!e) break;
        a = e + 1;
    }
    return false;
}

frt_status frt_iop_create(frt_runtime *rt, const frt_iop_hooks *hooks, frt_iop **out) {
    *out = NULL;
    frt_iop *io = calloc(1, sizeof *io);
    if (!io) return frt_error(FRT_ERR_NO_MEMORY, "out of memory creating a runtime");
    io->rt = rt;
    io->hooks = *hooks;
    io->limit = rt->m->iop_threads;
    pthread_mutex_init(&io->mu, NULL);
    pthread_cond_init(&io->cv, NULL);
    const frt_dag *d = rt->m->blocks[0].prog->dag;
    if (d) {
        io->pending = malloc(((size_t)d->n + 1) * sizeof *io->pending);
        io->ready = malloc(((size_t)d->n + 1) * sizeof *io->ready);
        if (!io->pending || !io->ready) {
            frt_iop_free(io);
            return frt_error(FRT_ERR_NO_MEMORY, "out of memory creating a runtime");
        }
    }
    const char *se = getenv("FRT_INTEROP_SOLO");
    if (d && se && *se) {
        io->solo = calloc((size_t)d->n + 1, sizeof *io->solo);
        if (!io->solo) {
            frt_iop_free(io);
            return frt_error(FRT_ERR_NO_MEMORY, "out of memory creating a runtime");
        }
        const frt_program *p = rt->m->blocks[0].prog;
        for (int32_t q = 0; q < d->n; q++)
            io->solo[q] = solo_kernel(se, p->steps[p->compute[q]].k.name);
    }
    frt_threadpool_set_notify(rt->tp, notify_sleepers, io);
    if (io->limit > 1) {
        io->w = workers_new(io->limit, io->limit - 1);
        if (!io->w) {
            frt_iop_free(io);
            return frt_error(FRT_ERR_NO_MEMORY, "cannot start %d inter-op threads", io->limit);
        }
        pthread_mutex_lock(&io->w->mu);
        io->w->run = sync_participate;
        io->w->run_ctx = io;
        pthread_mutex_unlock(&io->w->mu);
    }
    *out = io;
    return FRT_OK;
}

void frt_iop_free(frt_iop *io) {
    if (!io) return;
    workers_free(io->w);
    pthread_mutex_destroy(&io->mu);
    pthread_cond_destroy(&io->cv);
    free(io->pending);
    free(io->ready);
    free(io->solo);
    free(io);
}

/* Wakes participants asleep on cv: a region of the intra-op pool opened (its notify). */
static void notify_sleepers(void *arg) {
    frt_iop *io = arg;
    if (!atomic_load(&io->sleepers)) return;
    pthread_mutex_lock(&io->mu);
    pthread_cond_broadcast(&io->cv);
    pthread_mutex_unlock(&io->mu);
}

/* Waits until the async participants of the previous run have left, and with all also the
 * workers still inside a synchronous run (the sync caller returns as soon as every step is done,
 * without waiting for the others to notice). A synchronous run need not wait for those: a
 * worker that is late finds the schedule of the next run (reset under mu) and takes part in it,
 * counted in sync_in, or nothing to do. */
static int still_in(frt_iop *io, bool all) {
    return atomic_load_explicit(&io->participants, memory_order_acquire) > 0 ||
           (all && atomic_load_explicit(&io->sync_in, memory_order_acquire) > 0);
}

static void wait_left(frt_iop *io, bool all) {
    uint64_t t0 = now_ns();
    for (int k = 0; still_in(io, all); k++) {
        if ((k & 63) == 63 && now_ns() - t0 > SPIN_NS) break;
        cpu_relax();
    }
    pthread_mutex_lock(&io->mu);
    while (still_in(io, all)) {
        io->caller_waits = true;
        pthread_cond_wait(&io->cv, &io->mu);
    }
    io->caller_waits = false;
    pthread_mutex_unlock(&io->mu);
}

/* Resets the schedule for a run (no participant is active). */
static void reset(frt_iop *io) {
    const frt_dag *d = io->rt->m->blocks[0].prog->dag;
    memcpy(io->pending, d->n_pred, (size_t)d->n * sizeof *io->pending);
    for (int32_t i = 0; i < d->n_src; i++) io->ready[i] = d->src[i]; /* order: see take */
    io->n_ready = d->n_src;
    io->n_left = d->n;
    io->running = 0;
    io->st = FRT_OK;
    io->msg[0] = 0;
    atomic_store(&io->ready_hint, io->n_ready);
    atomic_store(&io->left_hint, io->n_left);
}

/* Under mu: takes a ready position (-1: none): the one with the longest estimated chain of
 * steps still behind it (iop_prio; ties and no estimates: the first in program order), so the
 * critical path starts first and steps with slack fill in beside it. dlrm_small: whichever
 * thread comes first takes the bottom MLP, the other the lookups; handed out in program order
 * both had sometimes started on lookups, and the bottom MLP with everything after it began ~55 us
 * late (runs of ~195 us instead of ~120). */
static int32_t take(frt_iop *io) {
    if (!io->n_ready) return -1;
    const uint64_t *prio = io->rt->m->iop_prio;
    int32_t best = io->n_ready - 1;
    for (int32_t i = io->n_ready - 2; i >= 0; i--) {
        int32_t a = io->ready[i], b = io->ready[best];
        uint64_t pa = prio ? prio[a] : 0, pb = prio ? prio[b] : 0;
        if (pa > pb || (pa == pb && a < b)) best = i;
    }
    int32_t pos = io->ready[best];
    io->ready[best] = io->ready[--io->n_ready];
    io->running++;
    atomic_store_explicit(&io->ready_hint, io->n_ready, memory_order_relaxed);
    return pos;
}

/* Under mu: position pos ended with status st. */
static void complete(frt_iop *io, int32_t pos, frt_status st) {
    const frt_dag *d = io->rt->m->blocks[0].prog->dag;
    if (st && !io->st) {
        io->st = st;
        snprintf(io->msg, sizeof io->msg, "%s", frt_last_error());
    }
    for (int32_t k = d->succ_off[pos]; k < d->succ_off[pos + 1]; k++)
        if (--io->pending[d->succ[k]] == 0) io->ready[io->n_ready++] = d->succ[k];
    io->running--;
    io->n_left--;
    atomic_store_explicit(&io->ready_hint, io->n_ready, memory_order_relaxed);
    atomic_store_explicit(&io->left_hint, io->n_left, memory_order_relaxed);
}

/* Runs position pos; alone: without the intra-op pool (its kernel runs every part itself, in the
 * same order of summation, so the same bits; nobody can join it). */
static frt_status run_step(frt_iop *io, int32_t pos, bool alone) {
    frt_runtime *rt = io->rt;
    frt_brt *b = &rt->blk[0];
    if (b->plan.skip[pos]) return FRT_OK;
    const frt_program *p = b->b->prog;
    const frt_step *s = &p->steps[p->compute[pos]];
    frt_exec x = io->hooks.exec(b, (char *)b->slab + b->plan.scratch_off[pos],
                                alone ? NULL : rt->tp);
    bool prof = rt->profiling, trace = rt->trace.cap != 0;
    uint64_t t0 = prof || trace ? now_ns() : 0;
    frt_status st = s->k.fn(s, &x);
    if (prof || trace) {
        uint64_t t1 = now_ns();
        if (prof) rt->prof_ns[pos] += t1 - t0; /* one writer per position */
        if (trace) {
            pthread_mutex_lock(&io->mu);
            frt_trace_step(rt, b, s, t0, t1);
            pthread_mutex_unlock(&io->mu);
        }
    }
    return st;
}

/* Idle: helps with open regions of the intra-op pool and polls for up to SPIN_NS (since the
 * last help), then sleeps until a step is ready, a region opens or the run ends. Called and
 * returns with mu held. */
static void idle_wait(frt_iop *io) {
    frt_threadpool *tp = io->rt->tp;
    pthread_mutex_unlock(&io->mu);
    uint64_t t0 = now_ns();
    for (int k = 0; !atomic_load_explicit(&io->ready_hint, memory_order_relaxed) &&
                    atomic_load_explicit(&io->left_hint, memory_order_relaxed);
         k++) {
        if (frt_threadpool_help(tp)) {
            t0 = now_ns();
            continue;
        }
        if ((k & 63) == 63 && now_ns() - t0 > SPIN_NS) break;
        cpu_relax();
    }
    pthread_mutex_lock(&io->mu);
    if (!io->n_ready && io->n_left) {
        /* announce, then look: a region opened after the look sees the sleeper (notify) */
        atomic_fetch_add(&io->sleepers, 1);
        if (!frt_threadpool_open(tp)) pthread_cond_wait(&io->cv, &io->mu);
        atomic_fetch_sub(&io->sleepers, 1);
    }
}

/* Takes ready steps (and helps open regions) until every step of the current run is done.
 * Called and returns with mu held. */
static void run_loop(frt_iop *io) {
    frt_threadpool *tp = io->rt->tp;
    for (;;) {
        /* a region of a running step first: that step is under way and others wait for it,
           whereas a ready step may have slack (dlrm_small's lookups beside the bottom MLP) */
        if (frt_threadpool_open(tp)) {
            pthread_mutex_unlock(&io->mu);
            frt_threadpool_help(tp);
            pthread_mutex_lock(&io->mu);
            continue;
        }
        int32_t pos = take(io);
        if (pos < 0) {
            if (!io->n_left) break;
            idle_wait(io);
            continue;
        }
        bool failed = io->st != FRT_OK;
        /* a solo step runs alone when another step is ready or running: the other
           participants take those instead of joining its parts */
        bool alone = io->solo && io->solo[pos] && (io->n_ready > 0 || io->running > 1);
        pthread_mutex_unlock(&io->mu);
        frt_status st = failed ? FRT_OK : run_step(io, pos, alone);
        pthread_mutex_lock(&io->mu);
        complete(io, pos, st);
        /* wake sleepers for the steps this thread does not take next, and all at the end */
        if (atomic_load_explicit(&io->sleepers, memory_order_relaxed) &&
            (io->n_ready > 1 || !io->n_left))
            pthread_cond_broadcast(&io->cv);
    }
}

/* A worker's part in a synchronous run: at most limit - 1 workers at a time besides the caller. */
static void sync_participate(void *arg) {
    frt_iop *io = arg;
    pthread_mutex_lock(&io->mu);
    if (io->sync && atomic_load_explicit(&io->sync_in, memory_order_relaxed) < io->limit - 1) {
        atomic_fetch_add_explicit(&io->sync_in, 1, memory_order_relaxed);
        run_loop(io);
        if (atomic_fetch_sub_explicit(&io->sync_in, 1, memory_order_release) == 1 &&
            io->caller_waits)
            pthread_cond_broadcast(&io->cv);
    }
    pthread_mutex_unlock(&io->mu);
}

/* An async participant (a launched task): the last to leave ends the run. */
static void participate(void *arg) {
    frt_iop *io = arg;
    pthread_mutex_lock(&io->mu);
    run_loop(io);
    bool last = atomic_fetch_sub_explicit(&io->participants, 1, memory_order_release) == 1;
    if (last && io->caller_waits) pthread_cond_broadcast(&io->cv);
    void (*fin)(frt_runtime *, frt_status, void *) = io->fin;
    void *fin_arg = io->fin_arg;
    frt_runtime *rt = io->rt;
    frt_status st = io->st;
    char msg[sizeof io->msg];
    if (last && fin && st) memcpy(msg, io->msg, sizeof msg);
    pthread_mutex_unlock(&io->mu);
    if (last && fin) { /* io is not touched after this: fin may start the next run or free rt */
        if (st) frt_error(st, "%s", msg);
        fin(rt, st, fin_arg);
    }
}

frt_status frt_iop_run(frt_runtime *rt) {
    frt_iop *io = rt->iop;
    wait_left(io, false);
    pthread_mutex_lock(&io->mu);
    reset(io);
    io->fin = NULL;
    io->sync = true;
    pthread_mutex_unlock(&io->mu);
    /* the caller and up to limit - 1 workers (FRT_INTEROP_SERIAL=1: the caller alone, in a
       fixed order: the reference the tests compare parallel runs with) */
    if (!rt->m->interop_serial && io->limit > 1) workers_start_run(io->w);
    pthread_mutex_lock(&io->mu);
    run_loop(io);
    /* every step is done; workers leave on their own (a late one may join the next run), and
       an async start or frt_iop_free's join of the workers waits for them */
    frt_status st = io->st;
    pthread_mutex_unlock(&io->mu);
    if (st) return frt_error(st, "%s", io->msg);
    return FRT_OK;
}

/* ---- asynchronous runs ------------------------------------------------------------------------- */

/* A run whose steps go in order: one task. */
static void seq_task(void *arg) {
    frt_iop *io = arg;
    frt_runtime *rt = io->rt;
    void (*fin)(frt_runtime *, frt_status, void *) = io->fin;
    void *fin_arg = io->fin_arg;
    frt_status st = io->hooks.run_block0(rt);
    fin(rt, st, fin_arg);
}

frt_status frt_iop_start(frt_runtime *rt, const frt_iop_hooks *hooks,
                         const frt_task_launcher *launcher,
                         void (*fin)(frt_runtime *, frt_status, void *), void *fin_arg) {
    frt_status st;
    if (!rt->iop) {
        st = frt_iop_create(rt, hooks, &rt->iop);
        if (st) return st;
    }
    frt_iop *io = rt->iop;
    frt_task_launcher own = {workers_launch, NULL};
    if (!launcher) {
        if (!io->w) io->w = workers_new(1, 0);
        if (!io->w) return frt_error(FRT_ERR_NO_MEMORY, "cannot start a worker thread");
        own.ctx = io->w;
        launcher = &own;
    }
    wait_left(io, true);
    pthread_mutex_lock(&io->mu);
    io->sync = false;
    pthread_mutex_unlock(&io->mu);
    io->fin = fin;
    io->fin_arg = fin_arg;
    if (!rt->m->blocks[0].prog->dag || io->limit < 2) {
        launcher->launch(launcher->ctx, seq_task, io); /* io and rt are the task's from here */
        return FRT_OK;
    }
    reset(io);
    /* one share more than the tasks, held while launching: a launcher that runs tasks at once
       cannot end the run (and free it from the callback) before every task was launched */
    atomic_store(&io->participants, io->limit + 1);
    for (int i = 0; i < io->limit; i++) launcher->launch(launcher->ctx, participate, io);
    pthread_mutex_lock(&io->mu);
    bool last = atomic_fetch_sub(&io->participants, 1) == 1;
    st = io->st;
    char msg[sizeof io->msg];
    if (last && st) memcpy(msg, io->msg, sizeof msg);
    pthread_mutex_unlock(&io->mu);
    if (last) {
        if (st) frt_error(st, "%s", msg);
        fin(rt, st, fin_arg);
    }
    return FRT_OK;
}

/* ---- the decision at load and the critical-path bound ------------------------------------------ */

/* Inter-op is declined at load when the estimated schedule gains less than this, or less than
 * IOP_MIN_SPEEDUP: every hand-off of a tensor between threads costs ~1 us when the other thread
 * polls and tens of microseconds when it sleeps (a futex wake-up on a VM), and each step takes
 * the schedule's lock.
 *
 * The runtime's pool has W = max(T, P) threads either way (T intra-op, P inter-op threads;
 * runtime.c), so the estimate compares against the run inter-op would replace: steps in order,
 * each split over the W threads as the cost model splits it (frt_par_split: cost c on W threads
 * takes about c / frt_par_split(W, c)). With inter-op, the W threads share the steps: the span
 * is at least the critical path of those split step times and at least the total work over W
 * threads. The gain is only what steps too small to split leave idle, which is why inter-op on
 * a CNN whose layers all split is declined, and kept where many small steps are independent. */
#define IOP_MIN_GAIN_NS 20000.0
#define IOP_MIN_SPEEDUP 1.15

frt_status frt_iop_decide(frt_model *m) {
    frt_program *prog = m->blocks[0].prog;
    const frt_dag *d = prog->dag;
    m->iop_dag = prog->dag;
    m->iop_declined[0] = 0;
    m->iop_threads = 1;
    if (!d) return FRT_OK; /* steps sized at run time: sequential */
    m->iop_threads = m->opt.inter_op_threads;
    uint64_t *c = malloc(((size_t)d->n + 1) * 3 * sizeof *c);
    if (!c) return frt_error(FRT_ERR_NO_MEMORY, "out of memory estimating the step graph");
    if (frt_dag_estimate(prog, &m->g, c)) {
        int P = m->opt.inter_op_threads;
        int T = m->opt.num_threads > 1 ? m->opt.num_threads : 1;
        int W = T > P ? T : P;
        uint64_t *cs = c + 2 * ((size_t)d->n + 1); /* step times split over W threads */
        uint64_t total = 0, seq = 0;
        for (int32_t q = 0; q < d->n; q++) {
            total += c[q];
            cs[q] = c[q] / (uint64_t)frt_par_split(W, (double)c[q]);
            seq += cs[q];
        }
        uint64_t path = frt_dag_longest(d, cs, c + d->n + 1);
        /* the scheduler's priorities: longest chain from each position to the end (positions
           are in topological order, so successors come later) */
        m->iop_prio = frt_arena_array(&m->arena, (size_t)d->n + 1, sizeof *m->iop_prio);
        if (m->iop_prio)
            for (int32_t q = d->n - 1; q >= 0; q--) {
                uint64_t tail = 0;
                for (int32_t k = d->succ_off[q]; k < d->succ_off[q + 1]; k++)
                    if (m->iop_prio[d->succ[k]] > tail) tail = m->iop_prio[d->succ[k]];
                m->iop_prio[q] = cs[q] + tail;
            }
        m->iop_est_total = seq;
        m->iop_est_path = path;
        double span = (double)path > (double)total / W ? (double)path : (double)total / W;
        double gain = (double)seq - span;
        const char *f = getenv("FRT_INTEROP_FORCE");
        bool force = f && f[0] == '1';
        if (!force && (gain < IOP_MIN_GAIN_NS || (double)seq < IOP_MIN_SPEEDUP * span)) {
            snprintf(m->iop_declined, sizeof m->iop_declined,
                     "estimated at load: %.1f us of steps in order (split over %d threads), "
                     "critical path %.1f us: %d inter-op threads could gain at most %.1f us "
                     "(%.2fx), below the cost of hand-offs between threads (needs %.0f us and "
                     "%.2fx); steps run in order",
                     (double)seq / 1e3, W, (double)path / 1e3, P, gain / 1e3,
                     span > 0 ? (double)seq / span : 1.0, IOP_MIN_GAIN_NS / 1e3,
                     IOP_MIN_SPEEDUP);
            prog->dag = NULL;
            m->iop_threads = 1;
        }
    }
    free(c);
    return FRT_OK;
}

frt_status frt_runtime_interop_info(const frt_runtime *rt, frt_interop_info *info) {
    if (!rt || !info)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_runtime_interop_info: NULL argument");
    memset(info, 0, sizeof *info);
    const frt_model *m = rt->m;
    const frt_dag *d = m->iop_dag;
    if (!d)
        return frt_error(FRT_ERR_UNSUPPORTED,
                         m->opt.inter_op_threads > 1
                             ? "inter-op: the graph has steps sized at run time (no step graph)"
                             : "inter-op: the model was loaded with inter_op_threads 1");
    info->threads = m->iop_threads;
    info->declined = m->iop_declined[0] ? m->iop_declined : NULL;
    info->est_total_us = (double)m->iop_est_total / 1e3;
    info->est_path_us = (double)m->iop_est_path / 1e3;
    info->runs = rt->prof_runs;
    if (rt->prof_runs) {
        uint64_t *start = malloc(((size_t)d->n + 1) * sizeof *start);
        if (!start) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
        uint64_t total = 0;
        for (int32_t q = 0; q < d->n; q++) total += rt->prof_ns[q];
        uint64_t path = frt_dag_longest(d, rt->prof_ns, start);
        free(start);
        info->total_us = (double)total / 1e3 / (double)rt->prof_runs;
        info->path_us = (double)path / 1e3 / (double)rt->prof_runs;
    }
    return FRT_OK;
}
