/*
 * check_model — end-to-end check of a model against reference outputs (from PyTorch/ONNX export).
 *
 *   check_model DIR [--in SUBDIR] [--ref SUBDIR] [--threads N] [--planner standard|none]
 *       Loads DIR/model.onnx, binds every .npy (or .pb) file in DIR/<in> to the model input
 *       whose name (or sanitized name, see tio_sanitize_name) is the file's stem (for .pb: the
 *       proto's name when it has one), runs the model and compares each output with DIR/<ref>/<sanitized
 *       output name>.npy. Defaults: --in in --ref ref.
 *       An output passes iff its shape equals the reference's and
 *           max|flatrt - ref| <= 1e-4 * max|ref| + 1e-5     (NaN only where ref is NaN).
 *       Besides accuracy it checks the runtime contract: the outputs of FRT_OUTPUTS_ALLOC,
 *       FRT_OUTPUTS_CALLER (exact capacity; one byte short must fail cleanly), FRT_OUTPUTS_BORROW,
 *       a second BORROW run (plan/slab reuse) and a run on a cloned runtime are bitwise identical.
 *
 *   check_model --classify MODEL --samples PATH --labels FILE [--threads N]
 *       FILE has one line per sample: "<label>", or "<file> <label>" naming a .npy in PATH.
 *       PATH is a directory of .npy files (one sample each: those FILE names, else all in name
 *       order), or one .npy with the samples stacked along dim 0. Each sample is reshaped to the
 *       model's input shape (symbolic dims = 1) and run alone; the predicted class is the argmax
 *       of output 0. Passes iff every prediction equals its label. When the input's first dim is
 *       symbolic, the whole set is also run as one batch and must agree.
 *
 * Exit status 0 = pass, 1 = fail or error, 2 = usage error. Uses only include/flatrt.h.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "flatrt.h"
#include "tensor_io.h"

static int fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("check_model: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

static int usage(void) {
    fprintf(stderr,
            "usage: check_model DIR [--in SUBDIR] [--ref SUBDIR] [--threads N] [--planner P]\n"
            "       check_model --classify MODEL --samples PATH --labels FILE [--threads N]\n");
    return 2;
}

static void shape_str(char *buf, size_t n, int32_t rank, const int64_t *shape) {
    size_t o = (size_t)snprintf(buf, n, "[");
    for (int32_t d = 0; d < rank && o < n; d++)
        o += (size_t)snprintf(buf + o, n - o, "%s%lld", d ? "," : "", (long long)shape[d]);
    if (o < n) snprintf(buf + o, n - o, "]");
}

static int ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the regular files in dir ending in one of the suffixes; *n set. */
static char **list_dir(const char *dir, const char *suf1, const char *suf2, size_t *n) {
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    size_t cap = 16;
    char **names = malloc(cap * sizeof *names);
    struct dirent *e;
    while (names && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (!ends_with(e->d_name, suf1) && !(suf2 && ends_with(e->d_name, suf2))) continue;
        if (*n == cap) {
            char **p = realloc(names, 2 * cap * sizeof *names);
            if (!p) break;
            names = p;
            cap *= 2;
        }
        names[*n] = strdup(e->d_name);
        if (names[*n]) (*n)++;
    }
    closedir(d);
    if (names) qsort(names, *n, sizeof *names, cmp_str);
    return names;
}

static void free_list(char **l, size_t n) {
    for (size_t i = 0; l && i < n; i++) free(l[i]);
    free(l);
}

static int same_tensor(const frt_tensor *a, const frt_tensor *b) {
    if (a->dtype != b->dtype || a->rank != b->rank || a->nbytes != b->nbytes) return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d] != b->shape[d]) return 0;
    return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
}

/* Deep copy of a (borrowed) tensor into malloc'd memory (free with tio_tensor_free). */
static int copy_tensor(const frt_tensor *src, frt_tensor *dst) {
    *dst = *src;
    dst->_owner = NULL;
    dst->data = malloc(src->nbytes ? src->nbytes : 1);
    if (!dst->data) return -1;
    if (src->nbytes) memcpy(dst->data, src->data, src->nbytes);
    return 0;
}

static frt_model *load(const char *path, long threads, frt_planner planner) {
    frt_options opt;
    frt_options_init(&opt);
    opt.num_threads = (int32_t)threads;
    opt.planner = planner;
    frt_model *m = NULL;
    if (frt_model_load(path, &opt, &m) != FRT_OK) {
        fail("loading %s: %s", path, frt_last_error());
        return NULL;
    }
    return m;
}

/* ---------------------------------------------------------------------------------------------- */
/* Reference comparison mode                                                                       */
/* ---------------------------------------------------------------------------------------------- */

static int check_dir(const char *dir, const char *in_sub, const char *ref_sub, long threads,
                     frt_planner planner) {
    char path[4096], err[1024];
    int rc = 1;
    size_t n_in = 0, n_out = 0, n_files = 0;
    frt_model *m = NULL;
    frt_runtime *rt = NULL, *rt2 = NULL;
    const char **names = NULL;
    frt_tensor *inputs = NULL, *o_alloc = NULL, *o_caller = NULL, *o_borrow = NULL,
               *o_borrow2 = NULL, *o_clone = NULL;
    char **files = NULL;

    snprintf(path, sizeof path, "%s/model.onnx", dir);
    if (!(m = load(path, threads, planner))) goto done;
    n_in = frt_model_num_inputs(m);
    n_out = frt_model_num_outputs(m);
    names = calloc(n_in + 1, sizeof *names);
    inputs = calloc(n_in + 1, sizeof *inputs);
    o_alloc = calloc(n_out + 1, sizeof *o_alloc);
    o_caller = calloc(n_out + 1, sizeof *o_caller);
    o_borrow = calloc(n_out + 1, sizeof *o_borrow);
    o_borrow2 = calloc(n_out + 1, sizeof *o_borrow2);
    o_clone = calloc(n_out + 1, sizeof *o_clone);
    if (!names || !inputs || !o_alloc || !o_caller || !o_borrow || !o_borrow2 || !o_clone) {
        fail("out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_in; i++) {
        frt_tensor_info info;
        if (frt_model_input(m, i, &info) != FRT_OK) {
            fail("model input %zu: %s", i, frt_last_error());
            goto done;
        }
        names[i] = info.name;
    }

    /* inputs: DIR/in/<name>.npy */
    char in_dir[2048];
    snprintf(in_dir, sizeof in_dir, "%s/%s", dir, in_sub);
    files = list_dir(in_dir, ".npy", ".pb", &n_files);
    if (!files) {
        fail("cannot read input directory %s: %s", in_dir, strerror(errno));
        goto done;
    }
    for (size_t f = 0; f < n_files; f++) {
        frt_tensor t;
        char *pbname = NULL;
        snprintf(path, sizeof path, "%s/%s", in_dir, files[f]);
        if (tio_load(path, &t, &pbname, err, sizeof err)) {
            fail("%s", err);
            goto done;
        }
        char stem[1024];
        if (pbname && pbname[0]) snprintf(stem, sizeof stem, "%s", pbname);
        else {
            snprintf(stem, sizeof stem, "%s", files[f]);
            stem[strlen(stem) - (ends_with(stem, ".npy") ? 4 : 3)] = 0;
        }
        free(pbname);
        long which = -1;
        for (size_t i = 0; i < n_in && which < 0; i++)
            if (!strcmp(names[i], stem)) which = (long)i;
        for (size_t i = 0; i < n_in && which < 0; i++) {
            char s[1024];
            tio_sanitize_name(names[i], s, sizeof s);
            if (!strcmp(s, stem)) which = (long)i;
        }
        if (which < 0) {
            tio_tensor_free(&t);
            fail("%s does not name an input of the model", path);
            goto done;
        }
        if (inputs[which].data) {
            tio_tensor_free(&t);
            fail("two files in %s give input '%s'", in_dir, names[which]);
            goto done;
        }
        inputs[which] = t;
        char shp[256];
        shape_str(shp, sizeof shp, t.rank, t.shape);
        printf("input  %-24s %-8s %s\n", names[which], frt_dtype_name(t.dtype), shp);
    }
    for (size_t i = 0; i < n_in; i++)
        if (!inputs[i].data) {
            fail("no file in %s for model input '%s'", in_dir, names[i]);
            goto done;
        }

    /* ALLOC */
    if (frt_runtime_create(m, &rt) != FRT_OK) {
        fail("frt_runtime_create: %s", frt_last_error());
        goto done;
    }
    if (frt_run(rt, names, inputs, n_in, o_alloc, n_out, FRT_OUTPUTS_ALLOC) != FRT_OK) {
        memset(o_alloc, 0, n_out * sizeof *o_alloc);
        fail("run (ALLOC): %s", frt_last_error());
        goto done;
    }
    /* the standard planner keeps the smaller slab of storage groups and greedy by size
       (src/compile/plan.c): never above greedy's for the same shapes */
    if (planner == FRT_PLANNER_STANDARD) {
        frt_plan_stats ss, gs;
        char mpath[4096];
        snprintf(mpath, sizeof mpath, "%s/model.onnx", dir);
        frt_model *mg = load(mpath, threads, FRT_PLANNER_GREEDY);
        frt_runtime *rg = NULL;
        int bad = !mg;
        if (mg && frt_runtime_create(mg, &rg) == FRT_OK &&
            frt_runtime_reshape(rg, names, inputs, n_in) == FRT_OK &&
            frt_runtime_plan_stats(rt, &ss) == FRT_OK && frt_runtime_plan_stats(rg, &gs) == FRT_OK) {
            if (ss.arena_bytes > gs.arena_bytes)
                bad = fail("standard planner's slab %zu bytes, above greedy's %zu",
                           ss.arena_bytes, gs.arena_bytes);
        } else if (mg) {
            bad = fail("greedy plan for the slab check: %s", frt_last_error());
        }
        frt_runtime_free(rg);
        frt_model_free(mg);
        if (bad) goto done;
    }

    /* CALLER: one byte short must fail, exact capacity must succeed */
    int consistent = 1;
    for (size_t i = 0; i < n_out; i++) {
        o_caller[i].nbytes = o_alloc[i].nbytes;
        o_caller[i].data = malloc(o_alloc[i].nbytes ? o_alloc[i].nbytes : 1);
        if (!o_caller[i].data) {
            fail("out of memory");
            goto done;
        }
    }
    for (size_t i = 0; i < n_out; i++) {
        if (!o_alloc[i].nbytes) continue;
        o_caller[i].nbytes--;
        frt_status st = frt_run(rt, names, inputs, n_in, o_caller, n_out, FRT_OUTPUTS_CALLER);
        if (st == FRT_OK) {
            printf("FAIL: CALLER mode accepted a buffer one byte too small for output %zu\n", i);
            consistent = 0;
        } else if (!frt_last_error()[0]) {
            printf("FAIL: CALLER mode capacity error has no message\n");
            consistent = 0;
        }
        o_caller[i].nbytes = o_alloc[i].nbytes;
        break; /* one output is enough */
    }
    for (size_t i = 0; i < n_out; i++) o_caller[i].nbytes = o_alloc[i].nbytes;
    if (frt_run(rt, names, inputs, n_in, o_caller, n_out, FRT_OUTPUTS_CALLER) != FRT_OK) {
        fail("run (CALLER): %s", frt_last_error());
        goto done;
    }
    /* BORROW twice, copying the first results before the second run invalidates them */
    frt_tensor *tmp = calloc(n_out + 1, sizeof *tmp);
    if (!tmp) {
        fail("out of memory");
        goto done;
    }
    if (frt_run(rt, names, inputs, n_in, tmp, n_out, FRT_OUTPUTS_BORROW) != FRT_OK) {
        free(tmp);
        fail("run (BORROW): %s", frt_last_error());
        goto done;
    }
    for (size_t i = 0; i < n_out; i++)
        if (copy_tensor(&tmp[i], &o_borrow[i])) {
            free(tmp);
            fail("out of memory");
            goto done;
        }
    if (frt_run(rt, names, inputs, n_in, tmp, n_out, FRT_OUTPUTS_BORROW) != FRT_OK) {
        free(tmp);
        fail("second run (BORROW): %s", frt_last_error());
        goto done;
    }
    for (size_t i = 0; i < n_out; i++)
        if (copy_tensor(&tmp[i], &o_borrow2[i])) {
            free(tmp);
            fail("out of memory");
            goto done;
        }
    /* a cloned runtime */
    if (frt_runtime_clone(rt, &rt2) != FRT_OK ||
        frt_run(rt2, names, inputs, n_in, tmp, n_out, FRT_OUTPUTS_BORROW) != FRT_OK) {
        free(tmp);
        fail("run on a cloned runtime: %s", frt_last_error());
        goto done;
    }
    for (size_t i = 0; i < n_out; i++)
        if (copy_tensor(&tmp[i], &o_clone[i])) {
            free(tmp);
            fail("out of memory");
            goto done;
        }
    free(tmp);
    for (size_t i = 0; i < n_out; i++) {
        const char *what = !same_tensor(&o_alloc[i], &o_caller[i])    ? "CALLER"
                           : !same_tensor(&o_alloc[i], &o_borrow[i])  ? "BORROW"
                           : !same_tensor(&o_alloc[i], &o_borrow2[i]) ? "second BORROW run"
                           : !same_tensor(&o_alloc[i], &o_clone[i])   ? "cloned runtime"
                                                                      : NULL;
        if (what) {
            printf("FAIL: output %zu differs between ALLOC and %s\n", i, what);
            consistent = 0;
        }
    }

    /* compare with references */
    int all_pass = consistent;
    for (size_t i = 0; i < n_out; i++) {
        frt_tensor_info info;
        if (frt_model_output(m, i, &info) != FRT_OK) {
            fail("model output %zu: %s", i, frt_last_error());
            goto done;
        }
        char stem[1024], shp[256], rshp[256];
        tio_sanitize_name(info.name, stem, sizeof stem);
        snprintf(path, sizeof path, "%s/%s/%s.npy", dir, ref_sub, stem);
        frt_tensor ref;
        if (tio_load(path, &ref, NULL, err, sizeof err)) {
            fail("output '%s': %s", info.name, err);
            goto done;
        }
        const frt_tensor *out = &o_alloc[i];
        shape_str(shp, sizeof shp, out->rank, out->shape);
        shape_str(rshp, sizeof rshp, ref.rank, ref.shape);
        int shape_ok = out->rank == ref.rank;
        for (int d = 0; shape_ok && d < out->rank; d++) shape_ok = out->shape[d] == ref.shape[d];
        if (!shape_ok) {
            printf("FAIL output %-24s shape %s, reference %s\n", info.name, shp, rshp);
            all_pass = 0;
            tio_tensor_free(&ref);
            continue;
        }
        if (out->dtype != ref.dtype)
            printf("note: output '%s' is %s, reference is %s (compared as numbers)\n", info.name,
                   frt_dtype_name(out->dtype), frt_dtype_name(ref.dtype));
        int64_t numel = frt_tensor_numel(out);
        double max_err = 0, max_ref = 0;
        int64_t worst = -1, nan_mismatch = 0;
        for (int64_t k = 0; k < numel; k++) {
            double r = tio_element_as_double(&ref, (size_t)k);
            double v = tio_element_as_double(out, (size_t)k);
            if (isnan(r) || isnan(v)) {
                if (isnan(r) != isnan(v)) nan_mismatch++;
                continue;
            }
            if (fabs(r) > max_ref) max_ref = fabs(r);
            double e = fabs(v - r);
            if (!(e <= max_err)) {
                max_err = e;
                worst = k;
            }
        }
        double bound = 1e-4 * max_ref + 1e-5;
        int pass = max_err <= bound && !nan_mismatch;
        printf("%s output %-24s %-8s %-18s max_abs_err %.3e  max_ref %.3e  bound %.3e", pass ? "ok  " : "FAIL",
               info.name, frt_dtype_name(out->dtype), shp, max_err, max_ref, bound);
        if (!pass && worst >= 0)
            printf("  (worst at %lld: %.9g vs %.9g)", (long long)worst,
                   tio_element_as_double(out, (size_t)worst), tio_element_as_double(&ref, (size_t)worst));
        if (nan_mismatch) printf("  NaN mismatches %lld", (long long)nan_mismatch);
        printf("\n");
        all_pass &= pass;
        tio_tensor_free(&ref);
    }
    printf("%s: %s (%zu outputs, threads %ld)\n", dir, all_pass ? "PASS" : "FAIL", n_out, threads);
    rc = all_pass ? 0 : 1;
done:
    for (size_t i = 0; i < n_out; i++) {
        if (o_alloc) frt_tensor_release(&o_alloc[i]);
        if (o_caller) free(o_caller[i].data);
        if (o_borrow) tio_tensor_free(&o_borrow[i]);
        if (o_borrow2) tio_tensor_free(&o_borrow2[i]);
        if (o_clone) tio_tensor_free(&o_clone[i]);
    }
    for (size_t i = 0; inputs && i < n_in; i++) tio_tensor_free(&inputs[i]);
    free(o_alloc);
    free(o_caller);
    free(o_borrow);
    free(o_borrow2);
    free(o_clone);
    free(inputs);
    free(names);
    free_list(files, n_files);
    frt_runtime_free(rt2);
    frt_runtime_free(rt);
    frt_model_free(m);
    return rc;
}

/* ---------------------------------------------------------------------------------------------- */
/* Classification mode                                                                             */
/* ---------------------------------------------------------------------------------------------- */

static int64_t argmax(const frt_tensor *t, int64_t start, int64_t n) {
    int64_t best = -1;
    double bv = -INFINITY;
    for (int64_t k = 0; k < n; k++) {
        double v = tio_element_as_double(t, (size_t)(start + k));
        if (v > bv || best < 0) {
            bv = v;
            best = k;
        }
    }
    return best;
}

static int check_classify(const char *model_path, const char *samples, const char *labels_path,
                          long threads) {
    char err[1024], path[4096];
    int rc = 1;
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    frt_tensor all = {0};
    long *labels = NULL;
    char **label_files = NULL; /* sample file per label, or NULL entries */
    size_t n_labels = 0, n_files = 0;
    char **files = NULL;
    unsigned char *batch = NULL;

    /* labels: one per line, "<label>" or "<sample file> <label>" */
    FILE *lf = fopen(labels_path, "r");
    if (!lf) return fail("cannot open %s: %s", labels_path, strerror(errno));
    size_t cap = 64;
    labels = malloc(cap * sizeof *labels);
    label_files = malloc(cap * sizeof *label_files);
    char line[1024];
    int lineno = 0, bad_line = 0, named = -1;
    while (labels && label_files && fgets(line, sizeof line, lf)) {
        lineno++;
        char a[512], b[512], extra[2];
        int k = sscanf(line, "%511s %511s %1s", a, b, extra);
        if (k <= 0) continue; /* blank line */
        if (k == 3 || (named >= 0 && named != (k == 2))) {
            bad_line = lineno;
            break;
        }
        named = k == 2;
        char *end;
        const char *num = k == 2 ? b : a;
        errno = 0;
        long v = strtol(num, &end, 10);
        if (*end || errno) {
            bad_line = lineno;
            break;
        }
        if (n_labels == cap) {
            long *p = realloc(labels, 2 * cap * sizeof *labels);
            if (p) labels = p;
            char **q = realloc(label_files, 2 * cap * sizeof *label_files);
            if (q) label_files = q;
            if (!p || !q) break;
            cap *= 2;
        }
        label_files[n_labels] = k == 2 ? strdup(a) : NULL;
        labels[n_labels++] = v;
    }
    fclose(lf);
    if (!labels || !label_files || bad_line || n_labels == 0) {
        rc = fail("%s: line %d: expected lines '<label>' or '<file> <label>'", labels_path,
                  bad_line);
        goto done;
    }

    if (!(m = load(model_path, threads, FRT_PLANNER_STANDARD))) goto done;
    if (frt_model_num_inputs(m) != 1 || frt_model_num_outputs(m) < 1) {
        fail("--classify needs a model with one input and at least one output");
        goto done;
    }
    frt_tensor_info info;
    if (frt_model_input(m, 0, &info) != FRT_OK || info.rank < 1) {
        fail("model input: %s", info.rank < 1 ? "rank unknown or 0" : frt_last_error());
        goto done;
    }
    frt_tensor one = {.dtype = info.dtype, .rank = info.rank};
    for (int d = 0; d < info.rank; d++) one.shape[d] = info.shape[d] < 0 ? 1 : info.shape[d];
    size_t es = frt_dtype_size(info.dtype);
    size_t per = (size_t)frt_tensor_numel(&one) * es; /* bytes of one sample */

    /* samples: one stacked .npy, or a directory of per-sample .npy files */
    size_t n_samples;
    struct stat st;
    if (stat(samples, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (label_files[0]) { /* the labels file names the samples */
            files = calloc(n_labels, sizeof *files);
            for (size_t k = 0; files && k < n_labels; k++) {
                files[k] = strdup(label_files[k]);
                if (files[k]) n_files++;
            }
        } else {
            files = list_dir(samples, ".npy", NULL, &n_files);
        }
        if (!files || !n_files) {
            fail("no .npy files in %s", samples);
            goto done;
        }
        n_samples = n_files;
        batch = malloc(per * n_samples + 1);
        if (!batch) {
            fail("out of memory");
            goto done;
        }
        for (size_t f = 0; f < n_files; f++) {
            frt_tensor t;
            snprintf(path, sizeof path, "%s/%s", samples, files[f]);
            if (tio_load(path, &t, NULL, err, sizeof err)) {
                fail("%s", err);
                goto done;
            }
            if (t.dtype != info.dtype || t.nbytes != per) {
                fail("%s: %s with %zu bytes, model input '%s' needs %s with %zu bytes", path,
                     frt_dtype_name(t.dtype), t.nbytes, info.name, frt_dtype_name(info.dtype), per);
                tio_tensor_free(&t);
                goto done;
            }
            memcpy(batch + f * per, t.data, per);
            tio_tensor_free(&t);
        }
    } else {
        if (tio_load(samples, &all, NULL, err, sizeof err)) {
            fail("%s", err);
            goto done;
        }
        if (all.dtype != info.dtype || all.rank < 1 || all.shape[0] < 1 || !per ||
            all.nbytes % per != 0 || all.nbytes / per != (size_t)all.shape[0]) {
            char shp[256];
            shape_str(shp, sizeof shp, all.rank, all.shape);
            fail("%s: %s %s does not stack samples of %s input '%s' along dim 0", samples,
                 frt_dtype_name(all.dtype), shp, frt_dtype_name(info.dtype), info.name);
            goto done;
        }
        n_samples = (size_t)all.shape[0];
        batch = all.data;
    }
    if (n_samples != n_labels) {
        fail("%zu samples but %zu labels in %s", n_samples, n_labels, labels_path);
        goto done;
    }

    if (frt_runtime_create(m, &rt) != FRT_OK) {
        fail("frt_runtime_create: %s", frt_last_error());
        goto done;
    }
    const char *names[1] = {info.name};
    size_t wrong = 0;
    int64_t n_classes = 0;
    for (size_t s = 0; s < n_samples; s++) {
        frt_tensor in = one, out;
        in.data = batch + s * per;
        in.nbytes = per;
        if (frt_run(rt, names, &in, 1, &out, 1, FRT_OUTPUTS_BORROW) != FRT_OK) {
            fail("sample %zu: %s", s, frt_last_error());
            goto done;
        }
        n_classes = frt_tensor_numel(&out);
        int64_t pred = argmax(&out, 0, n_classes);
        if (pred != labels[s]) {
            printf("sample %zu: predicted %lld, label %ld\n", s, (long long)pred, labels[s]);
            wrong++;
        }
    }
    printf("%zu samples, %zu predictions differ from %s\n", n_samples, wrong, labels_path);
    int pass = wrong == 0;

    /* the whole set as one batch when the batch dim is symbolic */
    if (info.shape[0] < 0 && n_classes > 0) {
        frt_tensor in = one, out;
        in.shape[0] = (int64_t)n_samples;
        in.data = batch;
        in.nbytes = per * n_samples;
        if (frt_run(rt, names, &in, 1, &out, 1, FRT_OUTPUTS_BORROW) != FRT_OK) {
            fail("batch of %zu: %s", n_samples, frt_last_error());
            goto done;
        }
        if (frt_tensor_numel(&out) != n_classes * (int64_t)n_samples) {
            printf("FAIL: batch output has %lld values, expected %lld\n",
                   (long long)frt_tensor_numel(&out), (long long)(n_classes * (int64_t)n_samples));
            pass = 0;
        } else {
            size_t bwrong = 0;
            for (size_t s = 0; s < n_samples; s++)
                bwrong += argmax(&out, (int64_t)s * n_classes, n_classes) != labels[s];
            printf("batch of %zu: %zu predictions differ\n", n_samples, bwrong);
            pass &= bwrong == 0;
        }
    }
    printf("%s: %s\n", model_path, pass ? "PASS" : "FAIL");
    rc = pass ? 0 : 1;
done:
    if (batch != all.data) free(batch);
    tio_tensor_free(&all);
    free_list(files, n_files);
    for (size_t k = 0; label_files && k < n_labels; k++) free(label_files[k]);
    free(label_files);
    free(labels);
    frt_runtime_free(rt);
    frt_model_free(m);
    return rc;
}

int main(int argc, char **argv) {
    const char *dir = NULL, *in_sub = "in", *ref_sub = "ref", *classify = NULL, *samples = NULL,
               *labels = NULL;
    long threads = 1;
    frt_planner planner = FRT_PLANNER_STANDARD;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--in") && val) in_sub = argv[++i];
        else if (!strcmp(a, "--ref") && val) ref_sub = argv[++i];
        else if (!strcmp(a, "--classify") && val) classify = argv[++i];
        else if (!strcmp(a, "--samples") && val) samples = argv[++i];
        else if (!strcmp(a, "--labels") && val) labels = argv[++i];
        else if (!strcmp(a, "--threads") && val) {
            char *end;
            threads = strtol(argv[++i], &end, 10);
            if (*end || threads < 1 || threads > 1024) return usage();
        } else if (!strcmp(a, "--planner") && val) {
            const char *p = argv[++i];
            if (!strcmp(p, "standard")) planner = FRT_PLANNER_STANDARD;
            else if (!strcmp(p, "none")) planner = FRT_PLANNER_NONE;
            else if (!strcmp(p, "greedy")) planner = FRT_PLANNER_GREEDY;
            else return usage();
        } else if (a[0] == '-') return usage();
        else if (!dir) dir = a;
        else return usage();
    }
    if (classify) {
        if (dir || !samples || !labels) return usage();
        return check_classify(classify, samples, labels, threads);
    }
    if (!dir || samples || labels) return usage();
    return check_dir(dir, in_sub, ref_sub, threads, planner);
}
