/* `flatrt run`: run a model once on tensors from files (or random data) and summarize or save
 * each output. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tensor_io.h"

/* ---------------------------------------------------------------------------------------------- */
/* Output summaries                                                                                */
/* ---------------------------------------------------------------------------------------------- */

static int is_float(frt_dtype t) {
    return t == FRT_FLOAT32 || t == FRT_FLOAT64 || t == FRT_FLOAT16;
}

/* Counts NaN and infinite elements of a floating-point tensor (0 for other dtypes). */
static void count_nonfinite(const frt_tensor *t, int64_t *nan, int64_t *inf) {
    *nan = *inf = 0;
    size_t es = frt_dtype_size(t->dtype);
    if (!is_float(t->dtype) || !es || !t->data) return;
    int64_t numel = frt_tensor_numel(t);
    if (numel < 0 || (size_t)numel > t->nbytes / es) numel = (int64_t)(t->nbytes / es);
    for (int64_t i = 0; i < numel; i++) {
        double v = tio_element_as_double(t, (size_t)i);
        if (isnan(v)) (*nan)++;
        else if (isinf(v)) (*inf)++;
    }
}

static void print_summary(const frt_tensor *t) {
    int64_t numel = frt_tensor_numel(t);
    size_t es = frt_dtype_size(t->dtype);
    if (!es || t->dtype == FRT_STRING || !t->data) {
        printf("  (no numeric summary for %s)\n", frt_dtype_name(t->dtype));
        return;
    }
    if ((size_t)numel > t->nbytes / es) numel = (int64_t)(t->nbytes / es);
    if (numel <= 0) {
        printf("  (empty)\n");
        return;
    }
    double mn = INFINITY, mx = -INFINITY, sum = 0;
    int64_t nan = 0, amax = -1;
    for (int64_t i = 0; i < numel; i++) {
        double v = tio_element_as_double(t, (size_t)i);
        if (isnan(v)) {
            nan++;
            continue;
        }
        if (v < mn) mn = v;
        if (v > mx) {
            mx = v;
            amax = i;
        }
        sum += v;
    }
    int64_t good = numel - nan;
    printf("  min %.6g  max %.6g  mean %.6g", good ? mn : NAN, good ? mx : NAN,
           good ? sum / (double)good : NAN);
    if (nan) printf("  NaN %lld", (long long)nan);
    int vector = t->rank == 1 || (t->rank == 2 && t->shape[0] == 1);
    if (vector && is_float(t->dtype) && amax >= 0) printf("  argmax %lld", (long long)amax);
    printf("\n  values:");
    int64_t show = numel < 8 ? numel : 8;
    for (int64_t i = 0; i < show; i++) printf(" %.6g", tio_element_as_double(t, (size_t)i));
    if (numel > show) printf(" ... (%lld values)", (long long)numel);
    printf("\n");
}


int cmd_run(int argc, char **argv) {
    cli cl, *c = &cl;
    int rc = cli_parse(cli_find_command(argv[0]), argc, argv, c);
    if (!rc) rc = cli_need_model(c);
    if (rc) {
        cli_free(c);
        return rc < 0 ? 0 : rc;
    }
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    inputs in = {0};
    frt_tensor *outs = NULL;
    size_t n_out = 0;

    if (load_model(c, &m, NULL) != FRT_OK) {
        rc = fail_frt(NULL);
        goto done;
    }
    if ((rc = inputs_init(m, &in))) goto done;
    if ((rc = bind_inputs(c, &in, c->random))) goto done;
    for (size_t i = 0; c->random && i < in.n; i++) {
        char shp[256];
        shape_str(shp, sizeof shp, in.t[i].rank, in.t[i].shape, NULL);
        printf("input '%s': %s %s from %s\n", in.names[i], frt_dtype_name(in.t[i].dtype), shp,
               in.source[i] ? in.source[i] : "random data");
    }
    if (frt_runtime_create(m, &rt) != FRT_OK) {
        rc = fail_frt(NULL);
        goto done;
    }
    n_out = frt_model_num_outputs(m);
    outs = calloc(n_out ? n_out : 1, sizeof *outs);
    if (!outs) {
        rc = fail("out of memory");
        goto done;
    }
    double t0 = now_us();
    if (frt_run(rt, in.names, in.t, in.n, outs, n_out, FRT_OUTPUTS_ALLOC) != FRT_OK) {
        rc = fail_frt(NULL);
        n_out = 0; /* nothing to release */
        goto done;
    }
    double ms = (now_us() - t0) / 1e3;
    if (c->output_dir && mkdir_p(c->output_dir) != 0) {
        rc = fail("cannot create directory %s: %s", c->output_dir, strerror(errno));
        goto done;
    }
    for (size_t i = 0; i < n_out; i++) {
        frt_tensor_info info;
        const char *name = "?";
        if (frt_model_output(m, i, &info) == FRT_OK && info.name) name = info.name;
        char shp[256];
        shape_str(shp, sizeof shp, outs[i].rank, outs[i].shape, NULL);
        printf("output '%s': %s %s\n", name, frt_dtype_name(outs[i].dtype), shp);
        print_summary(&outs[i]);
        int64_t n_nan, n_inf;
        count_nonfinite(&outs[i], &n_nan, &n_inf);
        if (n_nan || n_inf) {
            fflush(stdout);
            if (c->check_finite && !rc)
                rc = fail("output '%s' has %lld NaN and %lld infinite values (--check-finite)",
                          name, (long long)n_nan, (long long)n_inf);
            else if (!c->check_finite)
                warn("output '%s' has %lld NaN and %lld infinite values", name, (long long)n_nan,
                     (long long)n_inf);
        }
        if (c->output_dir) {
            char stem[1024], path[4096], err[1024];
            tio_sanitize_name(name, stem, sizeof stem);
            for (size_t j = 0; j < i; j++) {
                frt_tensor_info other;
                char s2[1024];
                if (frt_model_output(m, j, &other) != FRT_OK || !other.name) continue;
                tio_sanitize_name(other.name, s2, sizeof s2);
                if (!strcmp(s2, stem))
                    warn("outputs '%s' and '%s' both map to %s.npy; the later one wins",
                         other.name, name, stem);
            }
            snprintf(path, sizeof path, "%s/%s.npy", c->output_dir, stem);
            if (tio_npy_save(path, &outs[i], err, sizeof err)) {
                rc = fail("output '%s': %s", name, err);
                goto done;
            }
            printf("  wrote %s\n", path);
        }
    }
    printf("run time %.3f ms (first run, includes planning)\n", ms);
done:
    for (size_t i = 0; outs && i < n_out; i++) frt_tensor_release(&outs[i]);
    free(outs);
    inputs_free(&in);
    frt_runtime_free(rt);
    frt_model_free(m);
    cli_free(c);
    return rc;
}
