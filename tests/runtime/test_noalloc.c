/* Proves that a steady-state run allocates nothing: every heap allocation in the process is
 * counted, then the model runs many times with the same input shapes and the count must not move.
 * Plain builds count by interposing malloc and friends (glibc exports __libc_* for this); under
 * AddressSanitizer, which owns malloc, through its malloc hook.
 * Usage: test_noalloc MODEL.onnx [THREADS | --alternate | --sets DIR SET,SET...]. */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flatrt.h"
#include "tensor_io.h"

#include "../unit/alloc_count.h"

#if FRT_HAVE_DNNL
#include <dlfcn.h>
#include <dnnl.h>
/* oneDNN's dnnl_primitive_execute allocates a few blocks per call (its argument map and execution
 * context), which flatrt cannot avoid: this definition takes the place of the library's for the
 * provider's calls, and the allocations made while it runs are counted apart (g_exempt_allocs),
 * so the test still proves that flatrt itself allocates nothing. */
static long g_dnnl_calls;
dnnl_status_t dnnl_primitive_execute(const_dnnl_primitive_t p, dnnl_stream_t s, int nargs,
                                     const dnnl_exec_arg_t *args) {
    static dnnl_status_t (*real)(const_dnnl_primitive_t, dnnl_stream_t, int,
                                 const dnnl_exec_arg_t *);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "dnnl_primitive_execute");
    if (!real) return dnnl_runtime_error;
    atomic_fetch_add(&g_alloc_exempt, 1);
    dnnl_status_t r = real(p, s, nargs, args);
    atomic_fetch_sub(&g_alloc_exempt, 1);
    g_dnnl_calls++;
    return r;
}
#else
static long g_dnnl_calls;
#endif

/* Alternating batch sizes: after the largest batch was seen, switching between smaller and larger
 * ones must not allocate, and every batch must give the same per-sample results as the largest.
 * The model's first input has a symbolic batch dim 0; all inputs get batch b, all outputs have
 * batch rows. */
static int alternate(const char *path, frt_planner planner) {
    frt_options opt;
    frt_options_init(&opt);
    opt.planner = planner;
    frt_model *m;
    if (frt_model_load(path, &opt, &m) != FRT_OK) {
        fprintf(stderr, "%s\n", frt_last_error());
        return 1;
    }
    enum { BMAX = 20 };
    size_t ni = frt_model_num_inputs(m), no = frt_model_num_outputs(m);
    if (ni > 8 || no > 8) return 2;
    frt_tensor in[8] = {{0}}, out[8] = {{0}};
    const char *names[8];
    size_t in_row[8];
    float *ref[8];
    for (size_t i = 0; i < ni; i++) {
        frt_tensor_info info;
        frt_model_input(m, i, &info);
        names[i] = info.name;
        in[i].dtype = info.dtype;
        in[i].rank = info.rank;
        size_t row = frt_dtype_size(info.dtype);
        for (int d = 1; d < info.rank; d++) row *= (size_t)(info.shape[d] < 0 ? 3 : info.shape[d]);
        for (int d = 0; d < info.rank; d++) in[i].shape[d] = info.shape[d] < 0 ? 3 : info.shape[d];
        in_row[i] = row;
        in[i].data = malloc(row * BMAX);
        float *f = in[i].data;
        for (size_t k = 0; k < row * BMAX / 4; k++) f[k] = (float)((k * 2654435761u) % 1000) / 500.0f - 1.0f;
    }
    frt_runtime *rt;
    if (frt_runtime_create(m, &rt) != FRT_OK) return 1;
    const int batches[] = {BMAX, 1, 8, 1, BMAX, 3, 8, 1};
    int failures = 0;
    long before = 0;
    for (size_t r = 0; r < sizeof batches / sizeof batches[0]; r++) {
        int b = batches[r];
        for (size_t i = 0; i < ni; i++) {
            in[i].shape[0] = b;
            in[i].nbytes = in_row[i] * (size_t)b;
        }
        if (r == 1) before = atomic_load(&g_allocs);
        if (frt_run(rt, names, in, ni, out, no, FRT_OUTPUTS_BORROW) != FRT_OK) {
            fprintf(stderr, "%s\n", frt_last_error());
            return 1;
        }
        for (size_t o = 0; o < no; o++) {
            if (out[o].shape[0] != b || out[o].dtype != FRT_FLOAT32) {
                fprintf(stderr, "output %zu: batch %lld, expected %d\n", o, (long long)out[o].shape[0], b);
                failures++;
                continue;
            }
            size_t row = out[o].nbytes / (size_t)b;
            if (r == 0) {
                ref[o] = malloc(out[o].nbytes);
                memcpy(ref[o], out[o].data, out[o].nbytes);
                continue;
            }
            const float *a = out[o].data;
            size_t n = row / 4 * (size_t)b;
            for (size_t k = 0; k < n; k++) {
                float d = a[k] - ref[o][k];
                if (d < 0) d = -d;
                if (!(d <= 1e-5f + 1e-5f * (ref[o][k] < 0 ? -ref[o][k] : ref[o][k]))) {
                    fprintf(stderr, "batch %d output %zu element %zu: %g vs %g\n", b, o, k, a[k], ref[o][k]);
                    failures++;
                    break;
                }
            }
        }
    }
    long allocs = atomic_load(&g_allocs) - before;
    printf("alternating batches (planner %d): %ld allocations after the largest batch\n",
           (int)planner, allocs);
    if (allocs != 0) failures++;
    for (size_t o = 0; o < no; o++) free(ref[o]);
    for (size_t i = 0; i < ni; i++) free(in[i].data);
    frt_runtime_free(rt);
    frt_model_free(m);
    return failures;
}

/* Alternating input sets (control flow: an If taking either branch, a Loop with different trip
 * counts, outputs of different sizes): DIR/<set>/<input>.npy with the expected outputs in
 * DIR/ref<suffix>/<output>.npy (set "in_else" -> "ref_else"). The sets run in turn, forward then
 * backward: after two such rounds (the run-time-sized buffers grow at the start of the run after
 * the one that first needed more), four more rounds must allocate nothing, and every run must
 * give the expected outputs (|got - want| <= 1e-4 max|want| + 1e-5, the end-to-end tests' rule). */
enum { MAXSETS = 8, MAXIO = 8 };
typedef struct io_set {
    frt_tensor in[MAXIO], ref[MAXIO];
} io_set;

static int load_set(const char *dir, const char *set, frt_model *m, io_set *s) {
    char path[4096], err[256];
    for (size_t i = 0; i < frt_model_num_inputs(m); i++) {
        frt_tensor_info info;
        frt_model_input(m, i, &info);
        snprintf(path, sizeof path, "%s/%s/%s.npy", dir, set, info.name);
        if (tio_load(path, &s->in[i], NULL, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", path, err);
            return 1;
        }
    }
    for (size_t i = 0; i < frt_model_num_outputs(m); i++) {
        frt_tensor_info info;
        frt_model_output(m, i, &info);
        snprintf(path, sizeof path, "%s/ref%s/%s.npy", dir, set + 2, info.name);
        if (tio_load(path, &s->ref[i], NULL, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", path, err);
            return 1;
        }
    }
    return 0;
}

static int check_outputs(const frt_tensor *got, const frt_tensor *want, size_t n, const char *set) {
    for (size_t o = 0; o < n; o++) {
        int64_t k = frt_tensor_numel(&want[o]);
        if (got[o].dtype != want[o].dtype || got[o].rank != want[o].rank ||
            memcmp(got[o].shape, want[o].shape, (size_t)want[o].rank * sizeof(int64_t)) != 0 ||
            got[o].nbytes != want[o].nbytes) {
            fprintf(stderr, "set %s output %zu: dtype/shape differ from the reference\n", set, o);
            return 1;
        }
        if (want[o].dtype != FRT_FLOAT32) {
            if (memcmp(got[o].data, want[o].data, want[o].nbytes) != 0) {
                fprintf(stderr, "set %s output %zu differs\n", set, o);
                return 1;
            }
            continue;
        }
        const float *a = got[o].data, *b = want[o].data;
        double mx = 0;
        for (int64_t e = 0; e < k; e++) mx = fabs(b[e]) > mx ? fabs(b[e]) : mx;
        for (int64_t e = 0; e < k; e++)
            if (!(fabs((double)a[e] - b[e]) <= 1e-4 * mx + 1e-5)) {
                fprintf(stderr, "set %s output %zu element %lld: %g, expected %g\n", set, o,
                        (long long)e, a[e], b[e]);
                return 1;
            }
    }
    return 0;
}

static int sets_mode(const char *model, const char *dir, const char *list) {
    frt_model *m;
    if (frt_model_load(model, NULL, &m) != FRT_OK) {
        fprintf(stderr, "%s\n", frt_last_error());
        return 1;
    }
    size_t ni = frt_model_num_inputs(m), no = frt_model_num_outputs(m);
    static io_set sets[MAXSETS];
    char names_buf[MAXSETS][64];
    const char *in_names[MAXIO];
    int n_sets = 0, failures = 0;
    if (ni > MAXIO || no > MAXIO) return 2;
    for (size_t i = 0; i < ni; i++) {
        frt_tensor_info info;
        frt_model_input(m, i, &info);
        in_names[i] = info.name;
    }
    for (const char *p = list; *p && n_sets < MAXSETS;) {
        size_t len = strcspn(p, ",");
        snprintf(names_buf[n_sets], sizeof names_buf[0], "%.*s", (int)len, p);
        if (load_set(dir, names_buf[n_sets], m, &sets[n_sets])) return 1;
        n_sets++;
        p += len + (p[len] == ',');
    }
    frt_runtime *rt;
    if (frt_runtime_create(m, &rt) != FRT_OK) return 1;
    frt_tensor out[MAXIO];
    long before = 0;
    for (int round = 0; round < 6; round++) {
        if (round == 2) before = atomic_load(&g_allocs);
        for (int k = 0; k < n_sets; k++) {
            int which = round % 2 ? n_sets - 1 - k : k; /* forward, then backward */
            if (frt_run(rt, in_names, sets[which].in, ni, out, no, FRT_OUTPUTS_BORROW) != FRT_OK) {
                fprintf(stderr, "set %s: %s\n", names_buf[which], frt_last_error());
                return 1;
            }
            failures += check_outputs(out, sets[which].ref, no, names_buf[which]);
        }
    }
    long allocs = atomic_load(&g_allocs) - before;
    printf("%d input sets alternating: %ld allocations in 4 rounds after 2 warm-up rounds\n",
           n_sets, allocs);
    if (allocs) failures++;
    frt_runtime_free(rt);
    frt_model_free(m);
    for (int k = 0; k < n_sets; k++)
        for (int i = 0; i < MAXIO; i++) {
            tio_tensor_free(&sets[k].in[i]);
            tio_tensor_free(&sets[k].ref[i]);
        }
    printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
    return failures ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc > 4 && strcmp(argv[2], "--sets") == 0) return sets_mode(argv[1], argv[3], argv[4]);
    if (argc > 2 && strcmp(argv[2], "--alternate") == 0) {
        int f = alternate(argv[1], FRT_PLANNER_STANDARD) + alternate(argv[1], FRT_PLANNER_GREEDY);
        printf("%d passed, %d failed\n", f ? 0 : 2, f ? 1 : 0);
        return f ? 1 : 0;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: test_noalloc MODEL.onnx [THREADS]\n");
        return 2;
    }
    frt_options opt;
    frt_options_init(&opt);
    if (argc > 2) opt.num_threads = atoi(argv[2]);
    frt_model *m;
    if (frt_model_load(argv[1], &opt, &m) != FRT_OK) {
        fprintf(stderr, "%s\n", frt_last_error());
        return 1;
    }
    size_t ni = frt_model_num_inputs(m), no = frt_model_num_outputs(m);
    frt_tensor in[16] = {{0}}, out[16] = {{0}};
    const char *names[16];
    if (ni > 16 || no > 16) return 2;
    for (size_t i = 0; i < ni; i++) {
        frt_tensor_info info;
        frt_model_input(m, i, &info);
        names[i] = info.name;
        in[i].dtype = info.dtype;
        in[i].rank = info.rank;
        int64_t n = 1;
        for (int d = 0; d < info.rank; d++) {
            in[i].shape[d] = info.shape[d] < 0 ? 3 : info.shape[d];
            n *= in[i].shape[d];
        }
        in[i].nbytes = (size_t)n * frt_dtype_size(info.dtype);
        in[i].data = calloc(1, in[i].nbytes + 1);
    }
    frt_runtime *rt;
    if (frt_runtime_create(m, &rt) != FRT_OK) return 1;
    /* first run plans and sizes everything */
    if (frt_run(rt, names, in, ni, out, no, FRT_OUTPUTS_BORROW) != FRT_OK) {
        fprintf(stderr, "%s\n", frt_last_error());
        return 1;
    }
    int failures = 0;
    for (int mode = 0; mode < 2; mode++) {
        frt_output_mode om = mode ? FRT_OUTPUTS_CALLER : FRT_OUTPUTS_BORROW;
        void *bufs[16];
        for (size_t i = 0; i < no; i++) {
            bufs[i] = mode ? calloc(1, out[i].nbytes + 64) : NULL;
            if (mode) { out[i].data = bufs[i]; out[i].nbytes += 64; }
        }
        t_alloc_trace(1);
        long before = atomic_load(&g_allocs), ex0 = atomic_load(&g_exempt_allocs);
        long calls0 = g_dnnl_calls;
        for (int it = 0; it < 50; it++) {
            if (frt_run(rt, names, in, ni, out, no, om) != FRT_OK) {
                fprintf(stderr, "%s\n", frt_last_error());
                return 1;
            }
            if (mode) for (size_t i = 0; i < no; i++) { out[i].data = bufs[i]; out[i].nbytes += 64; }
        }
        long after = atomic_load(&g_allocs);
        t_alloc_trace(0);
        printf("%s mode: %ld allocations in 50 steady-state runs\n", mode ? "caller" : "borrow",
               after - before);
        if (g_dnnl_calls != calls0)
            printf("  (apart: %ld allocations inside %ld calls of oneDNN's dnnl_primitive_execute)\n",
                   atomic_load(&g_exempt_allocs) - ex0, g_dnnl_calls - calls0);
        if (after != before) failures++;
        for (size_t i = 0; i < no; i++) if (mode) free(bufs[i]);
    }
    /* The counter must see allocations that do happen: ALLOC mode mallocs each output. */
    long before = atomic_load(&g_allocs);
    if (frt_run(rt, names, in, ni, out, no, FRT_OUTPUTS_ALLOC) != FRT_OK) return 1;
    long seen = atomic_load(&g_allocs) - before;
    for (size_t i = 0; i < no; i++) frt_tensor_release(&out[i]);
    printf("alloc mode: %ld allocations for %zu outputs (counter works)\n", seen, no);
    if (seen < (long)no) failures++;
    frt_runtime_free(rt);
    frt_model_free(m);
    for (size_t i = 0; i < ni; i++) free(in[i].data);
    printf("%d passed, %d failed\n", 3 - failures, failures);
    return failures ? 1 : 0;
}
