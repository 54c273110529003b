/* What splitting a product over two cores costs, apart from the work: a batch-M product with a
 * prepacked B of N columns (as a Gemm's weights) run (1) whole on one thread, (2) as its two
 * column halves one after the other on one thread, (3) as the two halves at once on two threads
 * started together by a barrier (no pool), (4) as two tasks of one frt_parallel_for region on a
 * 2-thread pool held for the loop (frt_threadpool_hold, as a run does). Each halve has its own
 * packed B of N/2 columns and its own output. (3) against (2)/2 is what the hardware gives to two
 * cores reading different weights; (4) against (3) is the pool's fork/join. Prints the mean
 * per-call time of each over ITERS calls, best of 3 rounds.
 *   usage: split_gemm_bench [M=32 N=1024 K=512 ITERS=3000]
 * Build: cmake target split_gemm_bench (-DFRT_BUILD_BENCH=ON). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ops/sgemm.h"
#include "util/threadpool.h"

static int64_t M = 32, N = 1024, K = 512;
static int iters = 3000;
static float *A, *Bp[2], *C[2];
static pthread_barrier_t bar;
static double half_us[2];

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static void half(void *ctx, size_t h) {
    (void)ctx;
    frt_sgemm_pb(0, M, N / 2, K, 1.0f, A, K, Bp[h], 0.0f, C[h], N / 2);
}

static void *half_thread(void *arg) {
    size_t h = (size_t)arg;
    double sum = 0;
    for (int i = 0; i < iters; i++) {
        pthread_barrier_wait(&bar);
        double t0 = now_us();
        half(NULL, h);
        sum += now_us() - t0;
    }
    half_us[h] = sum / iters;
    return NULL;
}

static float *fill(size_t n, unsigned seed) {
    float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
    if (!p) exit(1);
    for (size_t i = 0; i < n; i++) p[i] = (float)((i * 7 + seed) % 13) * 0.05f - 0.3f;
    return p;
}

static double best(double a, double b) { return a < b ? a : b; }

int main(int argc, char **argv) {
    if (argc > 1) M = atoll(argv[1]);
    if (argc > 2) N = atoll(argv[2]) / 2 * 2;
    if (argc > 3) K = atoll(argv[3]);
    if (argc > 4) iters = atoi(argv[4]);
    if (M < 1 || N < 2 || K < 1 || iters < 1) return 1;
    A = fill((size_t)(M * K), 1);
    float *Bw = fill((size_t)(K * N), 2), *Cw = fill((size_t)(M * N), 3);
    float *Bpw = aligned_alloc(64, frt_sgemm_pack_b_size(K, N) * sizeof(float) + 64);
    if (!Bpw) return 1;
    frt_sgemm_pack_b(0, K, N, Bw, N, Bpw);
    for (int h = 0; h < 2; h++) {
        float *Bh = fill((size_t)(K * N / 2), 4 + (unsigned)h);
        Bp[h] = aligned_alloc(64, frt_sgemm_pack_b_size(K, N / 2) * sizeof(float) + 64);
        if (!Bp[h]) return 1;
        frt_sgemm_pack_b(0, K, N / 2, Bh, N / 2, Bp[h]);
        C[h] = fill((size_t)(M * N / 2), 5);
        free(Bh);
    }
    frt_threadpool *tp = frt_threadpool_create(2, NULL);
    if (!tp) return 1;
    double whole = 1e30, seq = 1e30, conc = 1e30, pool = 1e30;
    for (int round = 0; round < 3; round++) {
        double t0 = now_us();
        for (int i = 0; i < iters; i++) frt_sgemm_pb(0, M, N, K, 1.0f, A, K, Bpw, 0.0f, Cw, N);
        whole = best(whole, (now_us() - t0) / iters);
        t0 = now_us();
        for (int i = 0; i < iters; i++) half(NULL, 0), half(NULL, 1);
        seq = best(seq, (now_us() - t0) / iters);
        pthread_barrier_init(&bar, NULL, 2);
        pthread_t th;
        if (pthread_create(&th, NULL, half_thread, (void *)1) != 0) return 1;
        half_thread((void *)0);
        pthread_join(th, NULL);
        pthread_barrier_destroy(&bar);
        conc = best(conc, half_us[0] > half_us[1] ? half_us[0] : half_us[1]);
        frt_threadpool_hold(tp, 1);
        t0 = now_us();
        for (int i = 0; i < iters; i++) frt_parallel_for(tp, 2, half, NULL);
        pool = best(pool, (now_us() - t0) / iters);
        frt_threadpool_hold(tp, 0);
    }
    printf("M=%lld N=%lld K=%lld: whole %.1f us; halves in turn %.1f us (%.1f each); halves at "
           "once on 2 threads %.1f us (slower of the two, %.2fx of one alone); 2 tasks on the "
           "pool %.1f us (%.1f us over the halves at once)\n",
           (long long)M, (long long)N, (long long)K, whole, seq, seq / 2, conc,
           conc / (seq / 2), pool, pool - conc);
    frt_threadpool_free(tp);
    return 0;
}
