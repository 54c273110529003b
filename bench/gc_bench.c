/* Times the blocked grouped convolution (src/ops/blkgc.h) on the layer shapes of RegNetY-400MF
 * (3x3, pads 1, Relu; groups of G channels), one thread: the minimum over reps runs of one image
 * per layer (warm caches), and the GFLOP/s it corresponds to.
 *   cc -O2 -Iinclude -Isrc bench/gc_bench.c build/libflatrt.a -ldnnl -lm -lpthread
 *   ./a.out [reps] [G]   (G: group width, default 8) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ops/blkgc.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 200;
    int64_t G = argc > 2 ? atoll(argv[2]) : 8;
    /* C, H (= W) of the input, stride */
    static const int64_t L[][3] = {{48, 112, 2}, {104, 56, 2}, {104, 28, 1}, {208, 28, 2},
                                   {208, 14, 1}, {440, 14, 2}, {440, 7, 1}};
    double total = 0;
    for (size_t l = 0; l < sizeof L / sizeof *L; l++) {
        int64_t C = L[l][0] / G * G, H = L[l][1], S = L[l][2], OH = (H - 1) / S + 1;
        frt_blkgc_geom g = {C, G, H, H, OH, OH, 3, S, 1, 1, FRT_BLKGC_RELU, 0, 0};
        float *x = malloc((size_t)(C * H * H) * 4), *y = malloc((size_t)(C * OH * OH) * 4);
        float *w = malloc((size_t)(C * G * 9) * 4), *b = malloc((size_t)C * 4);
        for (int64_t i = 0; i < C * H * H; i++) x[i] = (float)(i % 17) * 0.1f - 0.8f;
        for (int64_t i = 0; i < C * G * 9; i++) w[i] = (float)(i % 13) * 0.01f - 0.06f;
        for (int64_t i = 0; i < C; i++) b[i] = 0.01f;
        frt_blkgc_fn fn = frt_blkgc_get(frt_cpu_tier(), &g);
        double best = 1e9;
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            fn(x, w, b, y, &g, 0, C / 8);
            double t = now() - t0;
            if (t < best) best = t;
        }
        double flop = 2.0 * (double)(C * G * 9 * OH * OH);
        printf("C %4lld G %2lld %3lldx%-3lld s%lld: %8.1f us  %5.1f GFLOP/s\n", (long long)C,
               (long long)G, (long long)H, (long long)H, (long long)S, best * 1e6,
               flop / best * 1e-9);
        total += best;
        free(x), free(y), free(w), free(b);
    }
    printf("sum %.1f us\n", total * 1e6);
    return 0;
}
