/* Times the pieces of the Winograd F(4x4, 3x3) convolution (src/ops/wino.h) for one layer shape
 * on nChw8c, one thread: input transform, the 36 GEMMs and output transform summed over an
 * image's tile blocks, and the whole run.
 *   cc -O2 -Iinclude -Isrc bench/wino_bench.c build/libflatrt.a -lopenblas -ldnnl -lm -lpthread
 *   ./a.out C M H W [T] [reps] [m] [s]   (pads 1; T: tiles per block, 0 = default; m: tile side
 *                                  4 = F(4x4, 3x3) (default) or 2 = F(2x2, 3x3); s: stride 1
 *                                  (default) or 2 (the polyphase stride-2 form, m 2))
 *   ./a.out C M H W T reps m 1 r axis   (the one-dimensional form F(m, r): a 1 x r kernel (axis
 *                                  0) or r x 1 (axis 1), "same" pads)
 * WB_COLD=1 in the environment writes 64 MiB before each timed piece loop and run, so that U
 * comes from memory as in a model whose weights exceed the L3 (resnet50's 100 MB). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/wino.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 5) return fprintf(stderr, "usage: %s C M H W [T] [reps]\n", argv[0]), 2;
    int64_t C = atoll(argv[1]), M = atoll(argv[2]), H = atoll(argv[3]), W = atoll(argv[4]);
    int64_t T = argc > 5 ? atoll(argv[5]) : 0;
    int reps = argc > 6 ? atoi(argv[6]) : 50;
    int64_t m = argc > 7 ? atoll(argv[7]) : 4, st = argc > 8 ? atoll(argv[8]) : 1;
    int64_t r = argc > 9 ? atoll(argv[9]) : 0, axis = argc > 10 ? atoll(argv[10]) : 0;
    int64_t OH = st == 2 ? (H - 1) / 2 + 1 : H, OW = st == 2 ? (W - 1) / 2 + 1 : W;
    frt_wino_geom g = {.C = C, .M = M, .H = H, .W = W, .OH = OH, .OW = OW, .pt = 1, .pl = 1,
                       .b = 8, .m = m, .s = st, .act = FRT_WINO_RELU, .r = r, .axis = axis};
    if (r > 0) g.pt = axis ? (r - 1) / 2 : 0, g.pl = axis ? 0 : (r - 1) / 2;
    frt_wino_geom_init(&g, T);
    const frt_wino_variant *v = frt_wino_variant_get(frt_cpu_tier());
    size_t nx = (size_t)((C + 7) / 8 * 8 * H * W), ny = (size_t)((M + 7) / 8 * 8 * OH * OW);
    float *x = aligned_alloc(64, nx * 4), *y = aligned_alloc(64, ny * 4);
    float *w = malloc((size_t)(C * M * 9) * 4), *bias = calloc((size_t)g.Mp, 4);
    float *U = aligned_alloc(64, (frt_wino_u_floats_geom(&g) * 4 + 63) / 64 * 64);
    float *sc = aligned_alloc(64, (frt_wino_scratch_floats(&g) * 4 + 63) / 64 * 64);
    for (size_t i = 0; i < nx; i++) x[i] = (float)(i % 17) * 0.1f - 0.8f;
    for (int64_t i = 0; i < C * M * 9; i++) w[i] = (float)(i % 13) * 0.01f - 0.06f;
    frt_wino_pack_geom(w, &g, U);
    float *V = sc, *O = sc + (size_t)g.gs * (size_t)g.Cg;
    double best[4] = {1e9, 1e9, 1e9, 1e9};
    const char *ce = getenv("WB_COLD");
    size_t nflush = ce && *ce == '1' ? (size_t)64 << 20 : 0;
    char *flush = nflush ? malloc(nflush) : NULL;
    for (int r = 0; r < reps; r++) {
        if (flush) memset(flush, r, nflush);
        double ti = 0, tg = 0, to = 0, t0 = now();
        for (int64_t t = 0; t < g.ntiles; t += g.T) {
            int64_t nt = g.ntiles - t < g.T ? g.ntiles - t : g.T;
            double a = now();
            v->itrans(x, &g, t, nt, V);
            double b = now();
            v->gemm(V, U, O, &g, nt, 0, g.Mp / 16);
            double c = now();
            v->otrans(O, bias, NULL, y, &g, t, nt, 0, g.Mg);
            to += now() - c, tg += c - b, ti += b - a;
        }
        if (flush) memset(flush, r + 1, nflush);
        double t1 = now();
        frt_wino_run(v, x, U, bias, NULL, y, &g, 1, 0, frt_wino_items(&g, 1), sc);
        double t2 = now();
        if (ti < best[0]) best[0] = ti;
        if (tg < best[1]) best[1] = tg;
        if (to < best[2]) best[2] = to;
        if (t2 - t1 < best[3]) best[3] = t2 - t1;
        (void)t0;
    }
    double gflop = 2.0 * (double)g.P * g.ntiles * (double)(8 * g.Cg) * g.Mp * 1e-9;
    printf("F(%lldx%lld)%s C %lld M %lld %lldx%lld T %lld tiles %lld: itrans %.1f us, gemm %.1f us (%.1f GFLOP/s), "
           "otrans %.1f us, run %.1f us (direct-equivalent %.1f GFLOP/s)\n",
           (long long)g.m, (long long)g.m, st == 2 ? " stride 2" : "", (long long)C, (long long)M, (long long)H, (long long)W,
           (long long)g.T,
           (long long)g.ntiles, best[0] * 1e6, best[1] * 1e6, gflop / best[1], best[2] * 1e6,
           best[3] * 1e6, (r > 0 ? 2.0 * r : 18.0) * C * M * OH * OW * 1e-9 / best[3]);
    return 0;
}
