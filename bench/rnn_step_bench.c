/* Where the time of a fused LSTM goes (src/ops/rnn.c): the FMA peak of this core, the fused step
 * (recurrent product + gate math) of the best tier with unit groups swept in alternating order
 * (as rnn.c runs it) and in one order, the gate math alone (h_prev zero: the product is skipped),
 * and the input projection (the tier's small-M GEMM on W packed as rnn.c packs it, 4-row blocks),
 * single thread. Not a test: prints times and GFLOP/s. Default shapes are the lstm zoo model's
 * (batch 4, seq 32, input 128 then 256, hidden 256).
 *   usage: rnn_step_bench [H [B [T [I]]]]
 * Build: cmake target rnn_step_bench (bench/ is not built by default: -DFRT_BUILD_BENCH=ON). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/cpu.h"
#include "ops/x86/rnn_simd.h"

#if FRT_HAVE_X86
#include <immintrin.h>
#endif

static double now_us(void) {
    struct timespec t;
    /* thread CPU time: on a shared host, time spent descheduled does not count */
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return 1e6 * (double)t.tv_sec + 1e-3 * (double)t.tv_nsec;
}

static int cmp_d(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

#if FRT_HAVE_X86
/* 12 independent FMA chains of 8 floats, n rounds: 192 n FLOP. */
__attribute__((target("avx2,fma"), noinline)) static float fma_loop(long n) {
    __m256 a[12];
    for (int i = 0; i < 12; i++) a[i] = _mm256_set1_ps(1e-3f * (float)i);
    const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-4f);
    for (long i = 0; i < n; i++) {
#pragma GCC unroll 12
        for (int j = 0; j < 12; j++) a[j] = _mm256_fmadd_ps(a[j], x, y);
        __asm__ volatile("" ::"x"(a[0]));
    }
    __m256 s = a[0];
    for (int i = 1; i < 12; i++) s = _mm256_add_ps(s, a[i]);
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0];
}
#endif

int main(int argc, char **argv) {
    const int64_t H = argc > 1 ? atoll(argv[1]) : 256, B = argc > 2 ? atoll(argv[2]) : 4,
                  T = argc > 3 ? atoll(argv[3]) : 32, I = argc > 4 ? atoll(argv[4]) : 256;
    const int G = 4, reps = 300;
    if (H < 1 || B < 1 || B > 64 || T < 1 || I < 1) {
        fprintf(stderr, "usage: rnn_step_bench [H [B<=64 [T [I]]]]\n");
        return 2;
    }
#if FRT_HAVE_X86
    if (frt_cpu_tier() >= FRT_ISA_AVX2) {
        double best = 1e30;
        for (int r = 0; r < 20; r++) {
            double t0 = now_us();
            volatile float f = fma_loop(100000);
            (void)f;
            double t = now_us() - t0;
            if (t < best) best = t;
        }
        printf("FMA peak (12 ymm chains): %.1f GFLOP/s\n", 100000.0 * 192 / best / 1e3);
    }
#endif
    const frt_rnn_step_variant *v = frt_rnn_step_variant_get(frt_cpu_tier());
    for (int t = (int)frt_cpu_tier(); !v && t > 0; t--)
        v = frt_rnn_step_variant_get((frt_isa)(t - 1));
    const frt_rnn_mm_variant *mm = frt_rnn_mm_variant_get(frt_cpu_tier());
    if (!v || !mm) return 1;
    const size_t nR = (size_t)(G * H * H),
                 nq = frt_rnn_gates_size(G, H, frt_rnn_step_gw(v, G), v->vl);
    float *R = malloc(nR * 4), *Rq = aligned_alloc(64, (nq * 4 + 63) / 64 * 64);
    float *xw = malloc((size_t)(T * B * G * H) * 4), *bias = calloc((size_t)(G * H), 4);
    float *h[2] = {calloc((size_t)(B * H), 4), calloc((size_t)(B * H), 4)};
    float *c = calloc((size_t)(B * H), 4), *Y = malloc((size_t)(T * B * H) * 4);
    double *ts = malloc(sizeof(double) * reps);
    if (!R || !Rq || !xw || !bias || !h[0] || !h[1] || !c || !Y || !ts) return 1;
    for (size_t i = 0; i < nR; i++) R[i] = (float)((int)(i * 7919 % 1000) - 500) * 1e-4f;
    for (int64_t i = 0; i < T * B * G * H; i++) xw[i] = (float)((int)(i * 31 % 100) - 50) * 1e-2f;
    frt_rnn_pack_gates(G, H, frt_rnn_step_gw(v, G), v->vl, frt_rnn_step_gp(v, G), R, Rq);
    const float *xr[64];
    float *yr[64];
    const double step_flop = 2.0 * (double)(B * G * H) * (double)H;
    /* mode 0: alternating sweeps (rnn.c), 1: one order, 2: gate math only (h_prev zero) */
    const char *names[3] = {"step, alternating sweeps", "step, one sweep order   ",
                            "gate math only          "};
    for (int mode = 0; mode < 3; mode++) {
        for (int rep = 0; rep < reps; rep++) {
            for (int64_t i = 0; i < B * H; i++) h[0][i] = 0.1f * (float)((int)(i % 7) - 3);
            double t0 = now_us();
            for (int64_t s = 0; s < T; s++) {
                for (int64_t b = 0; b < B; b++) {
                    xr[b] = xw + (s * B + b) * G * H;
                    yr[b] = Y + (s * B + b) * H;
                }
                frt_rnn_step_args a = {B,    H,  h[s & 1], h[!(s & 1)], c, Rq, xr, yr, bias, NULL,
                                       mode == 0 ? (int)(s & 1) : 0, mode == 2};
                v->lstm(&a);
            }
            ts[rep] = (now_us() - t0) / (double)T;
        }
        qsort(ts, (size_t)reps, sizeof(double), cmp_d);
        printf("%s (H %lld, B %lld, R %.0f KiB): p50 %.2f us/step, min %.2f",
               names[mode], (long long)H, (long long)B, (double)nR * 4 / 1024, ts[reps / 2], ts[0]);
        if (mode < 2) printf(" (%.1f GFLOP/s at p50)", step_flop / ts[reps / 2] / 1e3);
        printf("\n");
    }
    /* input projection: T*B rows x G*H columns x I, W packed as rnn.c packs it (gv 2) */
    const int64_t M = T * B, N = G * H;
    float *X = malloc((size_t)(M * I) * 4), *W = malloc((size_t)(N * I) * 4);
    float *Wq = aligned_alloc(64, (frt_rnn_pack_size(mm->vl, 2, N, I) * 4 + 63) / 64 * 64);
    float *C = malloc((size_t)(M * N) * 4);
    if (!X || !W || !Wq || !C) return 1;
    for (int64_t i = 0; i < M * I; i++) X[i] = (float)(i % 13) * 1e-2f;
    for (int64_t i = 0; i < N * I; i++) W[i] = (float)(i % 17) * 1e-2f;
    frt_rnn_pack(mm->vl, 2, N, I, W, I, Wq);
    double best = 1e30;
    for (int r = 0; r < 50; r++) {
        double t0 = now_us();
        mm->mm(M, N, I, X, I, Wq, 2, C, N);
        double t = now_us() - t0;
        if (t < best) best = t;
    }
    printf("input projection %lld x %lld x %lld: min %.1f us (%.1f GFLOP/s)\n", (long long)M,
           (long long)N, (long long)I, best, 2.0 * (double)(M * N) * (double)I / best / 1e3);
    double cs = 0;
    for (int64_t i = 0; i < T * B * H; i++) cs += Y[i];
    printf("(checksum %.6g %.6g)\n", cs, (double)C[M * N - 1]);
    free(R); free(Rq); free(xw); free(bias); free(h[0]); free(h[1]); free(c); free(Y); free(ts);
    free(X); free(W); free(Wq); free(C);
    return 0;
}
