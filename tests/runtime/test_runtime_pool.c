/* frt_pool: runtimes shared by caller threads. Checks results against a plain runtime, the cap on
 * runtimes alive, waiting and FRT_ERR_TIMEOUT while every runtime is busy, idle collection by the
 * pool's thread (after a spike the count falls to 1 while one caller keeps running, then to 0)
 * and by frt_pool_collect, and argument errors.
 * Usage: test_runtime_pool DIGITS.onnx */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../unit/test_util.h"
#include "flatrt.h"

static frt_model *g_model;
static const char *g_names[] = {"image"};

/* A batch of n digit images with deterministic pixels. */
static float *make_batch(int64_t n, frt_tensor *t) {
    float *x = malloc((size_t)n * 64 * sizeof *x);
    for (int64_t i = 0; i < n * 64; i++) x[i] = (float)((i * 7919) % 17) / 16.0f;
    memset(t, 0, sizeof *t);
    t->dtype = FRT_FLOAT32;
    t->rank = 4;
    t->shape[0] = n;
    t->shape[1] = 1;
    t->shape[2] = 8;
    t->shape[3] = 8;
    t->data = x;
    t->nbytes = (size_t)n * 64 * sizeof *x;
    return x;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* ---- many threads, results equal to a plain runtime's ---- */

static float g_ref[5 * 10];
static frt_tensor g_in5;

typedef struct {
    frt_pool *pool;
    int runs;
    int bad;
} worker_arg;

static void *worker(void *argp) {
    worker_arg *a = argp;
    for (int r = 0; r < a->runs; r++) {
        frt_tensor out = {0};
        frt_status st = frt_pool_run(a->pool, g_names, &g_in5, 1, &out, 1, FRT_OUTPUTS_ALLOC, -1);
        if (st != FRT_OK || out.nbytes != sizeof g_ref || memcmp(out.data, g_ref, sizeof g_ref))
            a->bad++;
        frt_tensor_release(&out);
    }
    return NULL;
}

static void test_threads(void) {
    frt_runtime *rt;
    CHECK_OK(frt_runtime_create(g_model, &rt));
    frt_tensor out = {0};
    CHECK_OK(frt_run(rt, g_names, &g_in5, 1, &out, 1, FRT_OUTPUTS_ALLOC));
    CHECK(out.nbytes == sizeof g_ref);
    if (out.nbytes == sizeof g_ref) memcpy(g_ref, out.data, sizeof g_ref);
    frt_tensor_release(&out);
    frt_runtime_free(rt);

    frt_pool_options o;
    frt_pool_options_init(&o);
    o.max_runtimes = 2;
    o.idle_timeout_ms = 0;
    frt_pool *p;
    CHECK_OK(frt_pool_create(g_model, &o, &p));
    enum { T = 4, RUNS = 200 };
    pthread_t th[T];
    worker_arg args[T];
    for (int i = 0; i < T; i++) {
        args[i] = (worker_arg){p, RUNS, 0};
        CHECK(pthread_create(&th[i], NULL, worker, &args[i]) == 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECK_MSG(args[i].bad == 0, "thread %d: %d runs failed or differed", i, args[i].bad);
    }
    frt_pool_stats s;
    frt_pool_get_stats(p, &s);
    CHECK_MSG(s.runs == T * RUNS, "runs %llu", (unsigned long long)s.runs);
    CHECK_MSG(s.peak >= 1 && s.peak <= 2, "peak %zu above the cap 2", s.peak);
    CHECK(s.created == s.alive && s.alive <= 2 && s.idle == s.alive);
    CHECK(s.timeouts == 0 && s.freed == 0);
    /* no collector (timeout 0): collect by hand */
    CHECK(frt_pool_collect(p, 0) == s.idle);
    frt_pool_get_stats(p, &s);
    CHECK(s.alive == 0 && s.idle == 0 && s.freed == s.created);
    /* the pool creates again after collection */
    CHECK_OK(frt_pool_run(p, g_names, &g_in5, 1, &out, 1, FRT_OUTPUTS_ALLOC, 0));
    CHECK(out.nbytes == sizeof g_ref && memcmp(out.data, g_ref, sizeof g_ref) == 0);
    frt_tensor_release(&out);
    frt_pool_free(p);
}

/* ---- a busy pool: timeouts and waits ---- */

typedef struct {
    frt_pool *pool;
    frt_tensor in;
    atomic_int done;
    frt_status st;
} long_arg;

static void *long_run(void *argp) {
    long_arg *a = argp;
    frt_tensor out = {0};
    a->st = frt_pool_run(a->pool, g_names, &a->in, 1, &out, 1, FRT_OUTPUTS_ALLOC, -1);
    frt_tensor_release(&out);
    atomic_store(&a->done, 1);
    return NULL;
}

static void test_busy(void) {
    frt_pool_options o;
    frt_pool_options_init(&o);
    o.max_runtimes = 1;
    o.idle_timeout_ms = 0;
    frt_pool *p;
    CHECK_OK(frt_pool_create(g_model, &o, &p));
    long_arg a = {.pool = p};
    float *big = make_batch(200000, &a.in); /* a run of a few hundred ms */
    pthread_t th;
    CHECK(pthread_create(&th, NULL, long_run, &a) == 0);
    frt_pool_stats s;
    do {
        sleep_ms(1);
        frt_pool_get_stats(p, &s);
    } while (s.runs == 0); /* the long run holds the only runtime */
    int timeouts = 0, ok = 0;
    while (!atomic_load(&a.done)) {
        frt_tensor out = {0};
        frt_status st = frt_pool_run(p, g_names, &g_in5, 1, &out, 1, FRT_OUTPUTS_ALLOC, 0);
        if (st == FRT_ERR_TIMEOUT) {
            timeouts++;
            CHECK(strstr(frt_last_error(), "busy") != NULL);
        } else {
            CHECK_OK(st); /* only once the long run gave the runtime back */
            ok++;
            CHECK(out.nbytes == sizeof g_ref && memcmp(out.data, g_ref, sizeof g_ref) == 0);
        }
        frt_tensor_release(&out);
        if (timeouts == 1) {
            /* a bounded wait also runs out while the long run lasts, or gets the runtime */
            st = frt_pool_run(p, g_names, &g_in5, 1, &out, 1, FRT_OUTPUTS_ALLOC, 20);
            CHECK(st == FRT_ERR_TIMEOUT || st == FRT_OK);
            if (st == FRT_ERR_TIMEOUT) timeouts++;
            frt_tensor_release(&out);
            /* an unbounded wait returns once the runtime is free, with a correct result */
            st = frt_pool_run(p, g_names, &g_in5, 1, &out, 1, FRT_OUTPUTS_ALLOC, -1);
            CHECK_OK(st);
            CHECK(out.nbytes == sizeof g_ref && memcmp(out.data, g_ref, sizeof g_ref) == 0);
            frt_tensor_release(&out);
        }
    }
    pthread_join(th, NULL);
    CHECK_OK(a.st);
    CHECK_MSG(timeouts >= 1, "no FRT_ERR_TIMEOUT while the only runtime was busy");
    frt_pool_get_stats(p, &s);
    CHECK(s.timeouts == (uint64_t)timeouts);
    CHECK(s.peak == 1 && s.created == 1);
    CHECK_MSG(s.waits >= 1, "the unbounded call waited: waits %llu", (unsigned long long)s.waits);
    free(big);
    frt_pool_free(p);
}

/* ---- idle runtimes freed by the pool's thread ---- */

static void test_idle_collection(void) {
    frt_pool_options o;
    frt_pool_options_init(&o);
    o.max_runtimes = 4;
    o.idle_timeout_ms = 30;
    frt_pool *p;
    CHECK_OK(frt_pool_create(g_model, &o, &p));
    enum { T = 4 };
    pthread_t th[T];
    worker_arg args[T];
    for (int i = 0; i < T; i++) {
        args[i] = (worker_arg){p, 20, 0};
        CHECK(pthread_create(&th[i], NULL, worker, &args[i]) == 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECK(args[i].bad == 0);
    }
    frt_pool_stats s;
    frt_pool_get_stats(p, &s);
    CHECK(s.created >= 1 && s.peak <= 4);
    /* after the spike one caller keeps running: the runtimes it does not need are freed (it
     * reuses the most recent one), so the count falls to 1 within 10 s */
    size_t after_spike = s.alive;
    for (int i = 0; i < 2000; i++) {
        frt_tensor out = {0};
        CHECK_OK(frt_pool_run(p, g_names, &g_in5, 1, &out, 1, FRT_OUTPUTS_ALLOC, -1));
        CHECK(out.nbytes == sizeof g_ref && memcmp(out.data, g_ref, sizeof g_ref) == 0);
        frt_tensor_release(&out);
        frt_pool_get_stats(p, &s);
        if (s.alive <= 1) break;
        sleep_ms(5);
    }
    CHECK_MSG(s.alive <= 1, "%zu runtimes alive (%zu after the spike) while one caller runs",
              s.alive, after_spike);
    /* within 10 s (generous for sanitizers) every runtime is freed without any call */
    for (int i = 0; i < 1000; i++) {
        frt_pool_get_stats(p, &s);
        if (s.alive == 0) break;
        sleep_ms(10);
    }
    CHECK_MSG(s.alive == 0 && s.idle == 0, "%zu runtimes still alive after the idle timeout",
              s.alive);
    CHECK(s.freed == s.created);
    /* and the pool keeps working */
    frt_tensor out = {0};
    /* CALLER mode without a buffer: a capacity error, and the runtime is returned */
    CHECK(frt_pool_run(p, g_names, &g_in5, 1, &out, 1, FRT_OUTPUTS_CALLER, -1) != FRT_OK);
    float buf[50];
    out = (frt_tensor){.data = buf, .nbytes = sizeof buf};
    CHECK_OK(frt_pool_run(p, g_names, &g_in5, 1, &out, 1, FRT_OUTPUTS_CALLER, -1));
    CHECK(memcmp(buf, g_ref, sizeof buf) == 0);
    frt_pool_free(p);
}

/* ---- errors ---- */

static void test_errors(void) {
    frt_pool *p = (frt_pool *)1;
    frt_pool_options o;
    frt_pool_options_init(&o);
    CHECK(o.max_runtimes == 8 && o.idle_timeout_ms == 10000);
    CHECK(frt_pool_create(NULL, &o, &p) == FRT_ERR_INVALID_ARGUMENT && p == NULL);
    o.max_runtimes = 0;
    CHECK(frt_pool_create(g_model, &o, &p) == FRT_ERR_INVALID_ARGUMENT);
    CHECK(strstr(frt_last_error(), "max_runtimes 0") != NULL);
    o.max_runtimes = FRT_POOL_MAX_RUNTIMES + 1;
    CHECK(frt_pool_create(g_model, &o, &p) == FRT_ERR_INVALID_ARGUMENT);
    frt_pool_options_init(&o);
    o.idle_timeout_ms = -1;
    CHECK(frt_pool_create(g_model, &o, &p) == FRT_ERR_INVALID_ARGUMENT);
    CHECK(strstr(frt_last_error(), "idle_timeout_ms") != NULL);
    CHECK_OK(frt_pool_create(g_model, NULL, &p));
    frt_tensor out = {0};
    CHECK(frt_pool_run(p, g_names, &g_in5, 1, &out, 1, FRT_OUTPUTS_BORROW, -1) ==
          FRT_ERR_INVALID_ARGUMENT);
    CHECK(strstr(frt_last_error(), "BORROW") != NULL);
    CHECK(frt_pool_run(p, g_names, &g_in5, 1, &out, 1, (frt_output_mode)7, -1) ==
          FRT_ERR_INVALID_ARGUMENT);
    /* a run error passes through and the runtime goes back to the pool */
    const char *bad[] = {"nope"};
    CHECK(frt_pool_run(p, bad, &g_in5, 1, &out, 1, FRT_OUTPUTS_ALLOC, -1) ==
          FRT_ERR_INVALID_ARGUMENT);
    CHECK(strstr(frt_last_error(), "nope") != NULL);
    frt_pool_stats s;
    frt_pool_get_stats(p, &s);
    CHECK(s.alive == 1 && s.idle == 1);
    CHECK(frt_pool_run(NULL, g_names, &g_in5, 1, &out, 1, FRT_OUTPUTS_ALLOC, -1) ==
          FRT_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(frt_status_string(FRT_ERR_TIMEOUT), "FRT_ERR_TIMEOUT") == 0);
    frt_pool_free(p);
    frt_pool_free(NULL);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_runtime_pool DIGITS.onnx\n");
        return 2;
    }
    CHECK_OK(frt_model_load(argv[1], NULL, &g_model));
    if (!g_model) return 1;
    float *x5 = make_batch(5, &g_in5);
    test_threads();
    test_busy();
    test_idle_collection();
    test_errors();
    free(x5);
    frt_model_free(g_model);
    TEST_MAIN_END();
}
