/* Runtime pool (frt_pool in flatrt.h): runtimes of one model handed to callers on many threads.
 *
 * State, under one mutex (held only for a few list operations, never while a runtime runs or is
 * created or freed):
 *   idle[0..n_idle)  free runtimes ordered by when they were returned: idle[0] is the one idle
 *                    longest, idle[n_idle-1] the most recently used. frt_pool_run takes from the
 *                    top (warm caches); collection frees from the bottom.
 *   alive            runtimes that exist or are being created (reserved under the lock before
 *                    frt_runtime_create runs outside it), <= max_runtimes.
 * Waiters sleep on `freed_cv` (a runtime returned or a reservation released). The collector
 * thread (idle_timeout_ms > 0) sleeps on `idle_cv` (signalled only by frt_pool_free) until the
 * bottom runtime's idle time runs out, or one timeout when nothing is idle.
 */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flatrt.h"
#include "util/error.h"

typedef struct idle_rt {
    frt_runtime *rt;
    int64_t since_ns; /* CLOCK_MONOTONIC when it was returned */
} idle_rt;

struct frt_pool {
    const frt_model *model;
    int32_t max_rt;
    int64_t timeout_ns;      /* 0: never collect */
    pthread_mutex_t mu;
    pthread_cond_t freed_cv; /* CLOCK_MONOTONIC */
    pthread_cond_t idle_cv;  /* CLOCK_MONOTONIC */
    idle_rt *idle;           /* max_rt entries */
    size_t n_idle;
    size_t alive, peak, waiting;
    uint64_t created, freed, runs, waits, timeouts;
    bool stop;
    bool has_collector;
    pthread_t collector;
};

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct timespec abs_time(int64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    return ts;
}

void frt_pool_options_init(frt_pool_options *opt) {
    if (!opt) return;
    opt->max_runtimes = 8;
    opt->idle_timeout_ms = 10000;
}

/* Takes up to max runtimes idle at least idle_ns (at time now) off the bottom of the list into
 * out[]; returns their number. Lock held. */
static size_t take_expired(frt_pool *p, int64_t idle_ns, frt_runtime **out, size_t max) {
    int64_t now = now_ns();
    size_t n = 0;
    while (n < max && n < p->n_idle && now - p->idle[n].since_ns >= idle_ns) {
        out[n] = p->idle[n].rt;
        n++;
    }
    if (n) {
        memmove(p->idle, p->idle + n, (p->n_idle - n) * sizeof *p->idle);
        p->n_idle -= n;
        p->alive -= n;
        p->freed += n;
        pthread_cond_broadcast(&p->freed_cv); /* room to create for waiters */
    }
    return n;
}

enum { BATCH = 32 };

static void *collector_main(void *arg) {
    frt_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        /* Runs return without waking this thread (that would cost every run a wake-up): with no
         * idle runtime it sleeps one timeout, so a runtime returned meanwhile is due no later
         * than shortly after it wakes. */
        int64_t due = p->n_idle ? p->idle[0].since_ns + p->timeout_ns : now_ns() + p->timeout_ns;
        if (p->n_idle == 0) {
            struct timespec ts = abs_time(due);
            pthread_cond_timedwait(&p->idle_cv, &p->mu, &ts);
            continue;
        }
        if (now_ns() < due) {
            struct timespec ts = abs_time(due);
            pthread_cond_timedwait(&p->idle_cv, &p->mu, &ts);
            continue;
        }
        frt_runtime *batch[BATCH];
        size_t n = take_expired(p, p->timeout_ns, batch, BATCH);
        pthread_mutex_unlock(&p->mu);
        for (size_t i = 0; i < n; i++) frt_runtime_free(batch[i]);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

frt_status frt_pool_create(const frt_model *model, const frt_pool_options *opt, frt_pool **out) {
    if (!out) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_pool_create: out is NULL");
    *out = NULL;
    if (!model) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_pool_create: model is NULL");
    frt_pool_options o;
    frt_pool_options_init(&o);
    if (opt) o = *opt;
    if (o.max_runtimes < 1 || o.max_runtimes > FRT_POOL_MAX_RUNTIMES)
        return frt_error(FRT_ERR_INVALID_ARGUMENT,
                         "frt_pool_create: max_runtimes %d is not in [1, %d]", (int)o.max_runtimes,
                         FRT_POOL_MAX_RUNTIMES);
    if (o.idle_timeout_ms < 0 || o.idle_timeout_ms > INT64_MAX / 1000000)
        return frt_error(FRT_ERR_INVALID_ARGUMENT,
                         "frt_pool_create: idle_timeout_ms %lld is negative or too large",
                         (long long)o.idle_timeout_ms);
    frt_pool *p = calloc(1, sizeof *p);
    idle_rt *idle = calloc((size_t)o.max_runtimes, sizeof *idle);
    if (!p || !idle) {
        free(p);
        free(idle);
        return frt_error(FRT_ERR_NO_MEMORY, "frt_pool_create: out of memory");
    }
    p->model = model;
    p->max_rt = o.max_runtimes;
    p->timeout_ns = o.idle_timeout_ms * 1000000;
    p->idle = idle;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int e = pthread_mutex_init(&p->mu, NULL);
    bool mu_ok = e == 0, c1 = false, c2 = false;
    if (!e) c1 = (e = pthread_cond_init(&p->freed_cv, &ca)) == 0;
    if (!e) c2 = (e = pthread_cond_init(&p->idle_cv, &ca)) == 0;
    pthread_condattr_destroy(&ca);
    if (!e && p->timeout_ns > 0) {
        e = pthread_create(&p->collector, NULL, collector_main, p);
        p->has_collector = e == 0;
    }
    if (e) {
        if (c2) pthread_cond_destroy(&p->idle_cv);
        if (c1) pthread_cond_destroy(&p->freed_cv);
        if (mu_ok) pthread_mutex_destroy(&p->mu);
        free(idle);
        free(p);
        return frt_error(FRT_ERR_NO_MEMORY, "frt_pool_create: cannot start the pool (%s)",
                         strerror(e));
    }
    *out = p;
    return FRT_OK;
}

void frt_pool_free(frt_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->idle_cv);
    pthread_mutex_unlock(&p->mu);
    if (p->has_collector) pthread_join(p->collector, NULL);
    for (size_t i = 0; i < p->n_idle; i++) frt_runtime_free(p->idle[i].rt);
    pthread_cond_destroy(&p->idle_cv);
    pthread_cond_destroy(&p->freed_cv);
    pthread_mutex_destroy(&p->mu);
    free(p->idle);
    free(p);
}

/* Gets a runtime: a free one, a new one while fewer than max_rt are alive, else waits until
 * deadline_ns (< 0: no limit; 0: no wait). */
static frt_status acquire(frt_pool *p, int64_t timeout_ms, frt_runtime **rt) {
    int64_t deadline = timeout_ms > 0 ? now_ns() + (timeout_ms > INT64_MAX / 2000000
                                                        ? INT64_MAX / 2
                                                        : timeout_ms * 1000000)
                                      : 0;
    bool waited = false;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (p->n_idle) {
            *rt = p->idle[--p->n_idle].rt;
            p->runs++;
            p->waits += waited;
            pthread_mutex_unlock(&p->mu);
            return FRT_OK;
        }
        if (p->alive < (size_t)p->max_rt) {
            p->alive++; /* reserve, then create outside the lock */
            if (p->alive > p->peak) p->peak = p->alive;
            pthread_mutex_unlock(&p->mu);
            frt_status st = frt_runtime_create(p->model, rt);
            pthread_mutex_lock(&p->mu);
            if (st != FRT_OK) {
                p->alive--;
                pthread_cond_signal(&p->freed_cv);
            } else {
                p->created++;
                p->runs++;
                p->waits += waited;
            }
            pthread_mutex_unlock(&p->mu);
            return st;
        }
        int r = 0;
        if (timeout_ms == 0 || (timeout_ms > 0 && now_ns() >= deadline)) {
            r = ETIMEDOUT;
        } else {
            waited = true;
            p->waiting++;
            if (timeout_ms < 0) {
                r = pthread_cond_wait(&p->freed_cv, &p->mu);
            } else {
                struct timespec ts = abs_time(deadline);
                r = pthread_cond_timedwait(&p->freed_cv, &p->mu, &ts);
            }
            p->waiting--;
            if (r == ETIMEDOUT && (p->n_idle || p->alive < (size_t)p->max_rt)) r = 0;
        }
        if (r == ETIMEDOUT) {
            p->timeouts++;
            pthread_mutex_unlock(&p->mu);
            return frt_error(FRT_ERR_TIMEOUT,
                             "frt_pool_run: all %d runtimes of the pool stayed busy for %lld ms",
                             (int)p->max_rt, (long long)(timeout_ms > 0 ? timeout_ms : 0));
        }
    }
}

static void release(frt_pool *p, frt_runtime *rt) {
    pthread_mutex_lock(&p->mu);
    p->idle[p->n_idle].rt = rt;
    p->idle[p->n_idle].since_ns = now_ns();
    p->n_idle++;
    if (p->waiting) pthread_cond_signal(&p->freed_cv);
    pthread_mutex_unlock(&p->mu);
}

frt_status frt_pool_run(frt_pool *p, const char *const *input_names, const frt_tensor *inputs,
                        size_t n_inputs, frt_tensor *outputs, size_t n_outputs,
                        frt_output_mode mode, int64_t timeout_ms) {
    if (!p) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_pool_run: pool is NULL");
    if (mode == FRT_OUTPUTS_BORROW)
        return frt_error(FRT_ERR_INVALID_ARGUMENT,
                         "frt_pool_run: FRT_OUTPUTS_BORROW is not available on a pool (the "
                         "runtime goes back to the pool after the run); use FRT_OUTPUTS_ALLOC "
                         "or FRT_OUTPUTS_CALLER");
    if (mode != FRT_OUTPUTS_ALLOC && mode != FRT_OUTPUTS_CALLER)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_pool_run: unknown output mode %d",
                         (int)mode);
    frt_runtime *rt = NULL;
    frt_status st = acquire(p, timeout_ms, &rt);
    if (st != FRT_OK) return st;
    st = frt_run(rt, input_names, inputs, n_inputs, outputs, n_outputs, mode);
    release(p, rt);
    return st;
}

size_t frt_pool_collect(frt_pool *p, int64_t idle_ms) {
    if (!p) return 0;
    if (idle_ms < 0) idle_ms = 0;
    int64_t idle_ns = idle_ms > INT64_MAX / 1000000 ? INT64_MAX : idle_ms * 1000000;
    size_t total = 0, n;
    do {
        frt_runtime *batch[BATCH];
        pthread_mutex_lock(&p->mu);
        n = take_expired(p, idle_ns, batch, BATCH);
        pthread_mutex_unlock(&p->mu);
        for (size_t i = 0; i < n; i++) frt_runtime_free(batch[i]);
        total += n;
    } while (n == BATCH);
    return total;
}

void frt_pool_get_stats(frt_pool *p, frt_pool_stats *s) {
    if (!s) return;
    memset(s, 0, sizeof *s);
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    s->alive = p->alive;
    s->idle = p->n_idle;
    s->peak = p->peak;
    s->created = p->created;
    s->freed = p->freed;
    s->runs = p->runs;
    s->waits = p->waits;
    s->timeouts = p->timeouts;
    pthread_mutex_unlock(&p->mu);
}
