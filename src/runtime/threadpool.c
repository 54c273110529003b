#include "threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct frt_threadpool {
    int n_threads;
    pthread_t *workers;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    /* current region, guarded by mu except the atomic counters */
    void (*fn)(void *, size_t);
    void *ctx;
    size_t n;
    atomic_size_t next;
    int active;          /* workers still inside the region */
    unsigned long epoch; /* bumped per region */
    int stop;
};

static void run_tasks(frt_threadpool *tp, void (*fn)(void *, size_t), void *ctx, size_t n) {
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&tp->next, 1, memory_order_relaxed);
        if (i >= n) break;
        fn(ctx, i);
    }
}

static void *worker_main(void *arg) {
    frt_threadpool *tp = arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&tp->mu);
    for (;;) {
        while (!tp->stop && tp->epoch == seen) pthread_cond_wait(&tp->wake, &tp->mu);
        if (tp->stop) break;
        seen = tp->epoch;
        void (*fn)(void *, size_t) = tp->fn;
        void *ctx = tp->ctx;
        size_t n = tp->n;
        pthread_mutex_unlock(&tp->mu);
        run_tasks(tp, fn, ctx, n);
        pthread_mutex_lock(&tp->mu);
        if (--tp->active == 0) pthread_cond_signal(&tp->done);
    }
    pthread_mutex_unlock(&tp->mu);
    return NULL;
}

frt_threadpool *frt_threadpool_create(int n_threads) {
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
    for (int i = 0; i < n_threads - 1; i++) {
        if (pthread_create(&tp->workers[i], NULL, worker_main, tp) != 0) break;
        tp->n_threads++;
    }
    if (tp->n_threads == 1) {
        frt_threadpool_free(tp);
        return NULL;
    }
    return tp;
}

void frt_threadpool_free(frt_threadpool *tp) {
    if (!tp) return;
    pthread_mutex_lock(&tp->mu);
    tp->stop = 1;
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
    pthread_mutex_lock(&tp->mu);
    tp->fn = fn;
    tp->ctx = ctx;
    tp->n = n;
    atomic_store_explicit(&tp->next, 0, memory_order_relaxed);
    tp->active = tp->n_threads - 1;
    tp->epoch++;
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->mu);
    run_tasks(tp, fn, ctx, n);
    pthread_mutex_lock(&tp->mu);
    while (tp->active > 0) pthread_cond_wait(&tp->done, &tp->mu);
    pthread_mutex_unlock(&tp->mu);
}
