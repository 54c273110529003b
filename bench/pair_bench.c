/* Paired A/B latency of one model under K configurations in one process, for a shared host whose
 * load shifts from second to second: configuration k is loaded with T intra-op and N inter-op
 * threads and environment variables set only while it loads (FRT_INTEROP_FORCE=1, ...), then the
 * K runtimes run one after another, round after round (the order rotates every round), with a
 * pause between runs (the workers of the runtime that ran last go back to sleep, so none polls
 * while another runs). A burst of load hits the K runs of a round alike, so the per-round ratio
 * to configuration 0 is steadier than ratios of medians taken minutes apart.
 * Prints per configuration the p50 and p10 latency and the median (and quartiles) over rounds of
 * latency(config 0) / latency(config k): above 1, configuration k is faster.
 * Inputs: zeros for integers, a fixed pattern in [-0.5, 0.5) for floats; symbolic dims are 1.
 *
 * usage: pair_bench MODEL ROUNDS PAUSE_US CONFIG...   CONFIG: T,N[,VAR=VALUE[;VAR=VALUE...]]
 * e.g.   pair_bench googlenet_224.onnx 60 300 2,1 2,2,FRT_INTEROP_FORCE=1 1,1 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flatrt.h"

#define MAX_CFG 8
#define MAX_IO 16

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e6 * (double)ts.tv_sec + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Quantile f of v[0..n) (nearest rank), v unchanged. */
static double quantile(const double *v, int n, double f) {
    double *c = malloc((size_t)n * sizeof *c);
    if (!c) return 0;
    memcpy(c, v, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    double r = c[(int)(f * (n - 1) + 0.5)];
    free(c);
    return r;
}

/* Loads `path` as configuration `cfg` ("T,N[,VAR=VALUE;...]"). */
static int load(const char *path, const char *cfg, frt_model **m, frt_runtime **rt) {
    char buf[512], *vars[16];
    int n_vars = 0;
    snprintf(buf, sizeof buf, "%s", cfg);
    frt_options o;
    frt_options_init(&o);
    char *save = NULL, *tok = strtok_r(buf, ",", &save);
    o.num_threads = tok ? atoi(tok) : 1;
    tok = strtok_r(NULL, ",", &save);
    o.inter_op_threads = tok ? atoi(tok) : 1;
    char *env = strtok_r(NULL, ",", &save), *s2 = NULL;
    for (char *e = env ? strtok_r(env, ";", &s2) : NULL; e && n_vars < 16;
         e = strtok_r(NULL, ";", &s2)) {
        char *eq = strchr(e, '=');
        if (!eq) continue;
        *eq = 0;
        setenv(e, eq + 1, 1);
        vars[n_vars++] = e;
    }
    frt_status st = frt_model_load(path, &o, m);
    if (!st) st = frt_runtime_create(*m, rt);
    for (int i = 0; i < n_vars; i++) unsetenv(vars[i]);
    if (st) {
        fprintf(stderr, "%s: %s\n", cfg, frt_last_error());
        return 1;
    }
    frt_interop_info ii;
    if (o.inter_op_threads > 1 && !frt_runtime_interop_info(*rt, &ii))
        fprintf(stderr, "%s: inter-op %s\n", cfg, ii.declined ? ii.declined : "kept");
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 5 || argc - 4 > MAX_CFG) {
        fprintf(stderr, "usage: pair_bench MODEL ROUNDS PAUSE_US CONFIG... (at most %d; CONFIG: "
                        "T,N[,VAR=VALUE[;VAR=VALUE...]])\n", MAX_CFG);
        return 2;
    }
    const char *path = argv[1];
    int rounds = atoi(argv[2]), pause_us = atoi(argv[3]), K = argc - 4;
    if (rounds < 1) rounds = 1;
    frt_model *m[MAX_CFG] = {0};
    frt_runtime *rt[MAX_CFG] = {0};
    for (int k = 0; k < K; k++)
        if (load(path, argv[4 + k], &m[k], &rt[k])) return 1;
    size_t n_in = frt_model_num_inputs(m[0]);
    if (n_in > MAX_IO) return 1;
    frt_tensor in[MAX_IO];
    const char *names[MAX_IO];
    for (size_t i = 0; i < n_in; i++) {
        frt_tensor_info ti;
        frt_model_input(m[0], i, &ti);
        names[i] = ti.name;
        memset(&in[i], 0, sizeof in[i]);
        in[i].dtype = ti.dtype;
        in[i].rank = ti.rank;
        int64_t n = 1;
        for (int d = 0; d < ti.rank; d++) {
            in[i].shape[d] = ti.shape[d] > 0 ? ti.shape[d] : 1;
            n *= in[i].shape[d];
        }
        in[i].nbytes = (size_t)n * frt_dtype_size(ti.dtype);
        in[i].data = calloc(1, in[i].nbytes ? in[i].nbytes : 1);
        if (!in[i].data) return 1;
        if (ti.dtype == FRT_FLOAT32)
            for (int64_t j = 0; j < n; j++)
                ((float *)in[i].data)[j] = (float)((j * 7919) % 1000) / 1000.f - 0.5f;
    }
    frt_tensor out[1];
    int warm = rounds / 5 + 2;
    double *t = malloc(sizeof *t * (size_t)K * (size_t)rounds);
    double *r = malloc(sizeof *r * (size_t)rounds);
    if (!t || !r) return 1;
    for (int it = -warm; it < rounds; it++)
        for (int j = 0; j < K; j++) {
            int k = (j + (it < 0 ? 0 : it)) % K;
            if (pause_us) usleep((useconds_t)pause_us);
            double t0 = now_us();
            if (frt_run(rt[k], names, in, n_in, out, 1, FRT_OUTPUTS_BORROW)) {
                fprintf(stderr, "%s: %s\n", argv[4 + k], frt_last_error());
                return 1;
            }
            if (it >= 0) t[k * rounds + it] = now_us() - t0;
        }
    for (int k = 0; k < K; k++) {
        for (int i = 0; i < rounds; i++) r[i] = t[i] / t[k * rounds + i];
        printf("%-36s p50_us %10.1f p10_us %10.1f  config0/this: median %.3f (quartiles %.3f "
               "%.3f)\n",
               argv[4 + k], quantile(t + k * rounds, rounds, .5), quantile(t + k * rounds, rounds, .1),
               quantile(r, rounds, .5), quantile(r, rounds, .25), quantile(r, rounds, .75));
    }
    for (int k = 0; k < K; k++) {
        frt_runtime_free(rt[k]);
        frt_model_free(m[k]);
    }
    for (size_t i = 0; i < n_in; i++) free(in[i].data);
    free(t);
    free(r);
    return 0;
}
