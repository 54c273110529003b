/* Stress test of frt_pool: 8 caller threads share one pool (at most 4 runtimes, so callers also
 * wait and runtimes pass between threads) and each makes RUNS runs of the digits model, on
 * batches of 1..4 images drawn from 16 different inputs, alternating FRT_OUTPUTS_ALLOC and
 * FRT_OUTPUTS_CALLER. Every output must be bit-identical to the single-threaded reference of the
 * same input computed on a plain runtime beforehand. The pool's counters must add up.
 * Usage: test_pool_stress DIGITS.onnx [RUNS per thread, default 100000] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/test_util.h"
#include "flatrt.h"

enum { THREADS = 8, INPUTS = 16, MAX_BATCH = 4, CLASSES = 10 };

static const char *g_names[] = {"image"};
static float g_x[INPUTS][MAX_BATCH * 64];
static frt_tensor g_in[INPUTS];
static float g_ref[INPUTS][MAX_BATCH * CLASSES];
static size_t g_ref_bytes[INPUTS];

typedef struct {
    frt_pool *pool;
    long runs;
    unsigned seed;
    long bad, failed;
    char first_error[256];
} stress_arg;

static void *stress(void *argp) {
    stress_arg *a = argp;
    unsigned s = a->seed;
    for (long r = 0; r < a->runs; r++) {
        s = s * 1103515245u + 12345u;
        int k = (int)((s >> 16) % INPUTS);
        frt_tensor out = {0};
        float buf[MAX_BATCH * CLASSES];
        frt_output_mode mode = (r & 1) ? FRT_OUTPUTS_CALLER : FRT_OUTPUTS_ALLOC;
        if (mode == FRT_OUTPUTS_CALLER) out = (frt_tensor){.data = buf, .nbytes = sizeof buf};
        frt_status st = frt_pool_run(a->pool, g_names, &g_in[k], 1, &out, 1, mode, -1);
        if (st != FRT_OK) {
            if (!a->failed++)
                snprintf(a->first_error, sizeof a->first_error, "%s", frt_last_error());
        } else if (out.nbytes != g_ref_bytes[k] || memcmp(out.data, g_ref[k], g_ref_bytes[k])) {
            a->bad++;
        }
        if (mode == FRT_OUTPUTS_ALLOC) frt_tensor_release(&out);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_pool_stress DIGITS.onnx [RUNS]\n");
        return 2;
    }
    long runs = argc > 2 ? atol(argv[2]) : 100000;
    if (runs < 1) return 2;
    frt_model *m;
    CHECK_OK(frt_model_load(argv[1], NULL, &m));
    if (!m) return 1;

    /* references, single-threaded on a plain runtime */
    frt_runtime *rt;
    CHECK_OK(frt_runtime_create(m, &rt));
    for (int k = 0; k < INPUTS; k++) {
        int64_t n = 1 + k % MAX_BATCH;
        for (int64_t i = 0; i < n * 64; i++)
            g_x[k][i] = (float)(((i + 1) * (k + 3) * 7919) % 97) / 48.0f - 1.0f;
        g_in[k] = (frt_tensor){.dtype = FRT_FLOAT32, .rank = 4, .shape = {n, 1, 8, 8},
                               .data = g_x[k], .nbytes = (size_t)n * 64 * sizeof(float)};
        frt_tensor out = {0};
        CHECK_OK(frt_run(rt, g_names, &g_in[k], 1, &out, 1, FRT_OUTPUTS_ALLOC));
        CHECK(out.nbytes == (size_t)n * CLASSES * sizeof(float));
        if (out.nbytes <= sizeof g_ref[k]) {
            memcpy(g_ref[k], out.data, out.nbytes);
            g_ref_bytes[k] = out.nbytes;
        }
        frt_tensor_release(&out);
    }
    frt_runtime_free(rt);

    frt_pool_options o;
    frt_pool_options_init(&o);
    o.max_runtimes = 4;
    frt_pool *p;
    CHECK_OK(frt_pool_create(m, &o, &p));
    pthread_t th[THREADS];
    stress_arg args[THREADS];
    for (int i = 0; i < THREADS; i++) {
        args[i] = (stress_arg){.pool = p, .runs = runs, .seed = 77u + 13u * (unsigned)i};
        CHECK(pthread_create(&th[i], NULL, stress, &args[i]) == 0);
    }
    long bad = 0, failed = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        CHECK_MSG(args[i].failed == 0, "thread %d: %ld runs failed, first: %s", i, args[i].failed,
                  args[i].first_error);
        bad += args[i].bad;
        failed += args[i].failed;
    }
    CHECK_MSG(bad == 0, "%ld of %ld outputs differ from the single-threaded reference", bad,
              runs * THREADS);
    frt_pool_stats s;
    frt_pool_get_stats(p, &s);
    CHECK_MSG(s.runs == (uint64_t)(runs * THREADS), "runs %llu, expected %ld",
              (unsigned long long)s.runs, runs * THREADS);
    CHECK_MSG(s.peak >= 1 && s.peak <= 4, "peak %zu above the cap 4", s.peak);
    CHECK(s.alive <= 4 && s.idle == s.alive && s.timeouts == 0);
    CHECK(s.created == s.alive + s.freed);
    printf("%d threads x %ld runs: %ld bad, %ld failed; runtimes created %llu, peak %zu, "
           "waits %llu\n",
           THREADS, runs, bad, failed, (unsigned long long)s.created, s.peak,
           (unsigned long long)s.waits);
    frt_pool_free(p);
    frt_model_free(m);
    TEST_MAIN_END();
}
