/* What a frt_pool costs per run: the digits model (batch 1) run N times directly on a runtime and
 * N times through frt_pool_run (1 caller thread, pool of 1), interleaved in R rounds; prints the
 * median over rounds of each mean per-run time and their difference. Then T caller threads share
 * a pool of T runtimes and report runs per second.
 * usage: pool_bench DIGITS.onnx [N=20000] [R=7] [T=2] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flatrt.h"

static const char *names[] = {"image"};
static float pixels[64];
static frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 4, .shape = {1, 1, 8, 8}, .data = pixels,
                        .nbytes = sizeof pixels};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int fail(const char *what) {
    fprintf(stderr, "pool_bench: %s: %s\n", what, frt_last_error());
    return 1;
}

typedef struct {
    frt_pool *pool;
    int n;
    int bad;
} worker;

static void *work(void *p) {
    worker *w = p;
    float buf[10];
    for (int i = 0; i < w->n; i++) {
        frt_tensor out = {.data = buf, .nbytes = sizeof buf};
        if (frt_pool_run(w->pool, names, &in, 1, &out, 1, FRT_OUTPUTS_CALLER, -1) != FRT_OK)
            w->bad++;
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: pool_bench DIGITS.onnx [N] [ROUNDS] [THREADS]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 20000, rounds = argc > 3 ? atoi(argv[3]) : 7;
    int threads = argc > 4 ? atoi(argv[4]) : 2;
    if (n < 1 || rounds < 1 || rounds > 100 || threads < 1 || threads > 64) return 2;
    for (int i = 0; i < 64; i++) pixels[i] = (float)(i % 16) / 16.0f;
    frt_model *m;
    if (frt_model_load(argv[1], NULL, &m) != FRT_OK) return fail("load");
    frt_runtime *rt;
    frt_pool *pool;
    frt_pool_options po;
    frt_pool_options_init(&po);
    po.max_runtimes = 1;
    if (frt_runtime_create(m, &rt) != FRT_OK) return fail("runtime");
    if (frt_pool_create(m, &po, &pool) != FRT_OK) return fail("pool");
    double direct[100], pooled[100];
    float buf[10];
    for (int r = 0; r < rounds; r++) {
        double t0 = now_s();
        for (int i = 0; i < n; i++) {
            frt_tensor out = {.data = buf, .nbytes = sizeof buf};
            if (frt_run(rt, names, &in, 1, &out, 1, FRT_OUTPUTS_CALLER) != FRT_OK)
                return fail("run");
        }
        double t1 = now_s();
        for (int i = 0; i < n; i++) {
            frt_tensor out = {.data = buf, .nbytes = sizeof buf};
            if (frt_pool_run(pool, names, &in, 1, &out, 1, FRT_OUTPUTS_CALLER, -1) != FRT_OK)
                return fail("pool run");
        }
        double t2 = now_s();
        direct[r] = (t1 - t0) / n * 1e9;
        pooled[r] = (t2 - t1) / n * 1e9;
    }
    qsort(direct, (size_t)rounds, sizeof *direct, cmp_d);
    qsort(pooled, (size_t)rounds, sizeof *pooled, cmp_d);
    printf("digits batch 1, %d runs x %d rounds, medians: frt_run %.0f ns, frt_pool_run %.0f ns, "
           "pool overhead %.0f ns\n",
           n, rounds, direct[rounds / 2], pooled[rounds / 2], pooled[rounds / 2] - direct[rounds / 2]);
    frt_pool_free(pool);
    frt_runtime_free(rt);

    po.max_runtimes = threads;
    if (frt_pool_create(m, &po, &pool) != FRT_OK) return fail("pool");
    pthread_t th[64];
    worker w[64];
    double t0 = now_s();
    for (int i = 0; i < threads; i++) {
        w[i] = (worker){pool, n, 0};
        pthread_create(&th[i], NULL, work, &w[i]);
    }
    int bad = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        bad += w[i].bad;
    }
    double t1 = now_s();
    frt_pool_stats s;
    frt_pool_get_stats(pool, &s);
    printf("%d threads on a pool of %d: %.0f runs/s (runtimes created %llu, waits %llu, "
           "failed %d)\n",
           threads, threads, (double)threads * n / (t1 - t0), (unsigned long long)s.created,
           (unsigned long long)s.waits, bad);
    frt_pool_free(pool);
    frt_model_free(m);
    return bad != 0;
}
