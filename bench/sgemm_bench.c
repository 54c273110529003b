/* SGEMM throughput of each ISA tier's blocked kernel (frt_sgemm_tier) and of frt_sgemm (the
 * tier's choice, BLAS where the tier uses it), single thread. Not a test: prints GFLOP/s.
 * "packed B": frt_sgemm_pb with B packed once (frt_sgemm_pack_b), as for weights.
 *   usage: sgemm_bench [M N K ...]   (default: a few square and batch shapes)
 * Build: cmake target sgemm_bench (bench/ is not built by default: -DFRT_BUILD_BENCH=ON). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ops/cpu.h"
#include "ops/sgemm.h"

static double now(void) {
    struct timespec t;
    /* thread CPU time: on a shared host, time spent descheduled does not count */
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Best of 5 runs of ~0.2 s each, GFLOP/s. Bp: frt_sgemm_pb with that prepacked B; else tier < 0:
 * frt_sgemm. */
static double run(int tier, int64_t M, int64_t N, int64_t K, const float *A, const float *B,
                  float *C, const float *Bp) {
    double best = 0, flop = 2.0 * (double)M * (double)N * (double)K;
    for (int rep = 0; rep < 5; rep++) {
        int64_t it = 0;
        double t0 = now(), t;
        do {
            if (Bp) frt_sgemm_pb(0, M, N, K, 1.0f, A, K, Bp, 0.0f, C, N);
            else if (tier < 0) frt_sgemm(0, 0, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
            else frt_sgemm_tier((frt_isa)tier, 0, 0, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
            it++;
            t = now() - t0;
        } while (t < 0.2);
        double g = flop * (double)it / t * 1e-9;
        if (g > best) best = g;
    }
    return best;
}

int main(int argc, char **argv) {
    static const int64_t dflt[][3] = {{1024, 1024, 1024}, {512, 512, 512}, {64, 1024, 1024},
                                      {8, 1024, 1024},    {1, 1024, 1024}};
    int n = argc > 1 ? (argc - 1) / 3 : (int)(sizeof dflt / sizeof dflt[0]);
    frt_blas_init();
    printf("host tier %s, tier %s, blas %d\n", frt_isa_name(frt_cpu_get()->host),
           frt_isa_name(frt_cpu_tier()), frt_sgemm_have_blas());
    printf("%-16s %10s %10s", "M x N x K", "frt_sgemm", "packed B");
    for (int t = 0; t <= (int)frt_cpu_get()->host; t++) printf(" %10s", frt_isa_name((frt_isa)t));
    printf("   (GFLOP/s, best of 5)\n");
    for (int i = 0; i < n; i++) {
        int64_t M = argc > 1 ? atoll(argv[1 + 3 * i]) : dflt[i][0];
        int64_t N = argc > 1 ? atoll(argv[2 + 3 * i]) : dflt[i][1];
        int64_t K = argc > 1 ? atoll(argv[3 + 3 * i]) : dflt[i][2];
        float *A = malloc((size_t)(M * K) * 4), *B = malloc((size_t)(K * N) * 4);
        float *C = malloc((size_t)(M * N) * 4);
        if (!A || !B || !C) return 1;
        for (int64_t j = 0; j < M * K; j++) A[j] = (float)(j % 7) * 0.1f;
        for (int64_t j = 0; j < K * N; j++) B[j] = (float)(j % 5) * 0.1f;
        char shape[48];
        snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)M, (long long)N, (long long)K);
        float *Bp = malloc(frt_sgemm_pack_b_size(K, N) * 4);
        if (!Bp) return 1;
        frt_sgemm_pack_b(0, K, N, B, N, Bp);
        printf("%-16s %10.1f %10.1f", shape, run(-1, M, N, K, A, B, C, NULL),
               run(-1, M, N, K, A, B, C, Bp));
        free(Bp);
        for (int t = 0; t <= (int)frt_cpu_get()->host; t++)
            printf(" %10.1f",
                   t == 0 && M * N * K > (1 << 27) ? 0.0 : run(t, M, N, K, A, B, C, NULL));
        printf("\n");
        fflush(stdout);
        free(A);
        free(B);
        free(C);
    }
    return 0;
}
