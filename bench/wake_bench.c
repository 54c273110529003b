/* What a fork/join of the intra-op pool (src/util/threadpool.c) costs on this host, for a pool of
 * T threads (the caller + T-1 workers) running regions of T empty tasks:
 *   hot:  regions back to back, so the workers are still polling from the previous one;
 *   cold: each region after a pause longer than the polling window, so the workers sleep on the
 *         condition variable and the region pays their wake-up (futex) and the caller's wait.
 * Both with workers that sleep at once (the default, FRT_SPIN_US=0) and with workers that poll W
 * microseconds first (FRT_SPIN_US=W). Prints the median and the 90th percentile over R
 * interleaved rounds of each round's mean.
 * usage: wake_bench [N=2000] [R=7] [T=2] [W=20] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "util/threadpool.h"

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void noop(void *ctx, size_t i) {
    (void)ctx;
    (void)i;
}

static void pause_us(long us) {
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* Mean ns per region: n back-to-back regions (hot) or n regions each after a pause (cold). */
static double measure(frt_threadpool *tp, int n, int cold) {
    int threads = frt_threadpool_size(tp);
    double total = 0;
    if (!cold) {
        double t0 = now_ns();
        for (int i = 0; i < n; i++) frt_parallel_for(tp, (size_t)threads, noop, NULL);
        return (now_ns() - t0) / n;
    }
    for (int i = 0; i < n; i++) {
        pause_us(2000); /* longer than the polling window: the workers are asleep */
        double t0 = now_ns();
        frt_parallel_for(tp, (size_t)threads, noop, NULL);
        total += now_ns() - t0;
    }
    return total / n;
}

static void report(const char *what, double *v, int rounds) {
    qsort(v, (size_t)rounds, sizeof *v, cmp_d);
    printf("%-34s median %8.0f ns  p90 %8.0f ns\n", what, v[rounds / 2], v[rounds * 9 / 10]);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2000, rounds = argc > 2 ? atoi(argv[2]) : 7;
    int threads = argc > 3 ? atoi(argv[3]) : 2, window = argc > 4 ? atoi(argv[4]) : 20;
    if (n < 1 || rounds < 1 || rounds > 100 || threads < 2 || threads > 64 || window < 1 ||
        window > 1000) {
        fprintf(stderr, "usage: wake_bench [N=2000] [ROUNDS=7] [THREADS=2] [WINDOW_US=20]\n");
        return 2;
    }
    int n_cold = n / 10 > 0 ? n / 10 : 1;
    char w[16];
    snprintf(w, sizeof w, "%d", window);
    setenv("FRT_SPIN_US", w, 1);
    frt_threadpool *spin = frt_threadpool_create(threads, NULL);
    setenv("FRT_SPIN_US", "0", 1);
    frt_threadpool *nospin = frt_threadpool_create(threads, NULL);
    if (!spin || !nospin) {
        fprintf(stderr, "wake_bench: cannot start threads\n");
        return 1;
    }
    double hot[100], cold[100], hot0[100], cold0[100];
    for (int r = 0; r < rounds; r++) { /* interleaved */
        hot[r] = measure(spin, n, 0);
        hot0[r] = measure(nospin, n, 0);
        cold[r] = measure(spin, n_cold, 1);
        cold0[r] = measure(nospin, n_cold, 1);
    }
    printf("pool of %d threads, %d back-to-back / %d after-a-pause regions x %d rounds\n",
           threads, n, n_cold, rounds);
    char what[64];
    snprintf(what, sizeof what, "FRT_SPIN_US=%d, back to back", window);
    report(what, hot, rounds);
    snprintf(what, sizeof what, "FRT_SPIN_US=%d, after a pause", window);
    report(what, cold, rounds);
    report("no polling (default), back to back", hot0, rounds);
    report("no polling (default), after a pause", cold0, rounds);
    frt_threadpool_free(spin);
    frt_threadpool_free(nospin);
    return 0;
}
