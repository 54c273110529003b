/* Times the stem convolution (src/ops/blkstem.h) against oneDNN's direct convolution (plain
 * 3-channel input -> the tier's blocked output, nChw8c on AVX2 and nChw16c on AVX-512, the
 * provider's setting) on the first layers of the
 * torchvision CNNs, one thread, interleaved: per layer the minimum over reps runs of each (warm
 * caches) and the GFLOP/s (2 flops per multiply-add) it corresponds to.
 *   cc -O2 -Iinclude -Isrc bench/stem_bench.c build/libflatrt.a -ldnnl -lgomp -lm -lpthread
 *   ./a.out [reps]
 * oneDNN runs on one OpenMP thread, as in the provider (left to OpenMP's default of one thread
 * per core it ran the resnet stem in 697 us against 1233 us on one thread, Zen 5). */
#define _POSIX_C_SOURCE 200809L
#include <dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ops/blkstem.h"
#include "ops/cpu.h"

void omp_set_num_threads(int n); /* libgomp, which Debian's oneDNN runs on */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

#define DN(x)                                                                                  \
    do {                                                                                       \
        if ((x) != dnnl_success) {                                                             \
            fprintf(stderr, "dnnl error at %s:%d\n", __FILE__, __LINE__);                      \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 50;
    omp_set_num_threads(1);
    /* name, M, H (= W), K, S, pad, activation */
    static const struct { const char *name; int M, H, K, S, P, act; } L[] = {
        {"resnet 7x7 s2 3->64 relu", 64, 224, 7, 2, 3, FRT_BLKSTEM_RELU},
        {"mobilenet_v2 3x3 s2 3->32 clip", 32, 224, 3, 2, 1, FRT_BLKSTEM_CLIP},
        {"efficientnet 3x3 s2 3->32 silu", 32, 224, 3, 2, 1, FRT_BLKSTEM_SILU},
        {"mnv3_small 3x3 s2 3->16 hswish", 16, 224, 3, 2, 1, FRT_BLKSTEM_HARDSWISH},
        {"squeezenet 3x3 s2 p0 3->64 relu", 64, 224, 3, 2, 0, FRT_BLKSTEM_RELU},
        {"shufflenet 3x3 s2 3->24 relu", 24, 224, 3, 2, 1, FRT_BLKSTEM_RELU},
        {"inception_v3 3x3 s2 p0 299 3->32", 32, 299, 3, 2, 0, FRT_BLKSTEM_RELU},
    };
    dnnl_engine_t eng;
    dnnl_stream_t st;
    DN(dnnl_engine_create(&eng, dnnl_cpu, 0));
    DN(dnnl_stream_create(&st, eng, dnnl_stream_default_flags));
    for (size_t l = 0; l < sizeof L / sizeof *L; l++) {
        int C = 3, M = L[l].M, H = L[l].H, K = L[l].K, S = L[l].S, P = L[l].P;
        int blk = frt_cpu_tier() >= FRT_ISA_AVX512 ? 16 : 8;
        int OH = (H + 2 * P - K) / S + 1, mb = (M + blk - 1) / blk;
        frt_blkstem_geom g = {blk, C, M, H, H, OH, OH, K, K, S, P, P, L[l].act, 0.0f, 6.0f};
        size_t nx = (size_t)C * H * H, ny = (size_t)mb * blk * OH * OH;
        size_t nw = (size_t)M * C * K * K;
        float *x = malloc(nx * 4), *wt = malloc(nw * 4), *bt = malloc((size_t)M * 4);
        float *w = malloc((size_t)mb * blk * C * K * K * 4), *b = malloc((size_t)mb * blk * 4);
        float *y = malloc(ny * 4), *y2 = malloc(ny * 4);
        for (size_t i = 0; i < nx; i++) x[i] = (float)(i % 17) * 0.1f - 0.8f;
        for (size_t i = 0; i < nw; i++) wt[i] = (float)(i % 13) * 0.01f - 0.06f;
        for (int i = 0; i < M; i++) bt[i] = 0.01f;
        frt_blkstem_pack(wt, bt, M, C, K, K, blk, w, b);
        frt_blkstem_fn fn = frt_blkstem_get(frt_cpu_tier(), &g);
        /* oneDNN: nchw -> nChw8c, weights in its own layout, bias, the activation post-op */
        dnnl_memory_desc_t sd, dd, wd, bd, wany;
        dnnl_dims_t sdims = {1, C, H, H}, ddims = {1, M, OH, OH}, wdims = {M, C, K, K};
        dnnl_dims_t bdims = {M}, strides = {S, S}, pads = {P, P}, pr;
        pr[0] = pr[1] = (OH - 1) * S + K - H - P;
        DN(dnnl_memory_desc_init_by_tag(&sd, 4, sdims, dnnl_f32, dnnl_nchw));
        DN(dnnl_memory_desc_init_by_tag(&dd, 4, ddims, dnnl_f32,
                                        blk == 16 ? dnnl_nChw16c : dnnl_nChw8c));
        DN(dnnl_memory_desc_init_by_tag(&wd, 4, wdims, dnnl_f32, dnnl_oihw));
        DN(dnnl_memory_desc_init_by_tag(&wany, 4, wdims, dnnl_f32, dnnl_format_tag_any));
        DN(dnnl_memory_desc_init_by_tag(&bd, 1, bdims, dnnl_f32, dnnl_x));
        dnnl_convolution_desc_t cd;
        DN(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                              dnnl_convolution_direct, &sd, &wany, &bd, &dd,
                                              strides, pads, pr));
        dnnl_primitive_attr_t attr;
        dnnl_post_ops_t po;
        DN(dnnl_primitive_attr_create(&attr));
        DN(dnnl_post_ops_create(&po));
        int a = L[l].act;
        if (a == FRT_BLKSTEM_RELU) DN(dnnl_post_ops_append_eltwise(po, 1, dnnl_eltwise_relu, 0, 0));
        if (a == FRT_BLKSTEM_CLIP) DN(dnnl_post_ops_append_eltwise(po, 1, dnnl_eltwise_clip, 0, 6));
        if (a == FRT_BLKSTEM_SILU) DN(dnnl_post_ops_append_eltwise(po, 1, dnnl_eltwise_swish, 1, 0));
        if (a == FRT_BLKSTEM_HARDSWISH)
            DN(dnnl_post_ops_append_eltwise(po, 1, dnnl_eltwise_hardswish, 0, 0));
        DN(dnnl_primitive_attr_set_post_ops(attr, po));
        dnnl_primitive_desc_t pd;
        DN(dnnl_primitive_desc_create(&pd, &cd, attr, eng, NULL));
        const char *impl = "?";
        dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
        const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
        dnnl_primitive_t prim, rp;
        DN(dnnl_primitive_create(&prim, pd));
        dnnl_memory_t mx, my, mw, mwp, mbias;
        DN(dnnl_memory_create(&mx, &sd, eng, x));
        DN(dnnl_memory_create(&my, &dd, eng, y2));
        DN(dnnl_memory_create(&mwp, &wd, eng, wt));
        DN(dnnl_memory_create(&mw, wmd, eng, DNNL_MEMORY_ALLOCATE));
        DN(dnnl_memory_create(&mbias, &bd, eng, bt));
        dnnl_primitive_desc_t rpd;
        DN(dnnl_reorder_primitive_desc_create(&rpd, &wd, eng, wmd, eng, NULL));
        DN(dnnl_primitive_create(&rp, rpd));
        dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, mwp}, {DNNL_ARG_TO, mw}};
        DN(dnnl_primitive_execute(rp, st, 2, ra));
        dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, mx}, {DNNL_ARG_WEIGHTS, mw},
                                   {DNNL_ARG_BIAS, mbias}, {DNNL_ARG_DST, my}};
        double bo = 1e30, bd_ = 1e30;
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            fn(x, w, b, y, &g, 0, OH);
            double t1 = now();
            DN(dnnl_primitive_execute(prim, st, 4, args));
            DN(dnnl_stream_wait(st));
            double t2 = now();
            if (t1 - t0 < bo) bo = t1 - t0;
            if (t2 - t1 < bd_) bd_ = t2 - t1;
        }
        double maxd = 0;
        for (size_t i = 0; i < ny; i++) {
            double d = y[i] - y2[i];
            if (d < 0) d = -d;
            if (d > maxd) maxd = d;
        }
        double fl = 2.0 * M * C * K * K * OH * OH;
        printf("%-34s own %7.1f us (%5.1f GFLOP/s)  oneDNN %-18s %7.1f us (%5.1f)  own/oneDNN "
               "%.2f  max|diff| %.1e\n",
               L[l].name, bo, fl / bo * 1e-3, impl, bd_, fl / bd_ * 1e-3, bo / bd_, maxd);
        dnnl_primitive_destroy(prim), dnnl_primitive_destroy(rp);
        dnnl_primitive_desc_destroy(pd), dnnl_primitive_desc_destroy(rpd);
        dnnl_memory_destroy(mx), dnnl_memory_destroy(my), dnnl_memory_destroy(mw);
        dnnl_memory_destroy(mwp), dnnl_memory_destroy(mbias);
        dnnl_post_ops_destroy(po), dnnl_primitive_attr_destroy(attr);
        free(x), free(wt), free(bt), free(w), free(b), free(y), free(y2);
    }
    dnnl_stream_destroy(st), dnnl_engine_destroy(eng);
    return 0;
}
