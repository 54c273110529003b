/*
 * flatrt check CASE_DIR... — runs ONNX backend test cases (the layout of ONNX's node suite:
 * CASE_DIR/model.onnx and CASE_DIR/test_data_set_N/{input_K.pb, output_K.pb}) and compares
 * flatrt's outputs with the expected ones, with the ONNX backend's rule: for floating types
 * |got - want| <= atol + rtol * |want| elementwise (rtol 1e-3, atol 1e-7; NaN matches NaN; bfloat16
 * and float16 values compared as the floats they hold, as the backend's numpy arrays are; bfloat16
 * test data, which the generator stores as uint16 bit patterns, is fed as bfloat16 and compared
 * as uint16 numbers with the float tolerance, as the backend runner compares it), and
 * exact equality for integers and booleans. Dtype and shape must match exactly.
 *
 * Random ops (RandomUniform/Normal(Like), Bernoulli): the suite's expected values come from numpy's
 * generator and cannot be reproduced, so in a model that contains one, every output is compared by
 * dtype, shape and range only (compare_random) and a pass says "(random: shape/range checked)".
 *
 * One line per case on stdout:
 *   pass CASE (N data sets)
 *   fail CASE: <first mismatch>
 *   unsupported CASE: <what flatrt lacks: op, dtype, attribute, input kind>
 *   error CASE: <anything else: unreadable files, a crash-free run error>
 * and a summary line "check: P passed, F failed, U unsupported, E errors of N cases".
 * Exit status: 0 when every case passed, 1 otherwise, 2 on usage errors.
 */
#include <dirent.h>
#include <stdarg.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "flatrt.h"
#include "tensor_io.h"

#define CHECK_RTOL 1e-3
#define CHECK_ATOL 1e-7
#define MAX_IO 64

typedef enum { R_PASS, R_FAIL, R_UNSUPPORTED, R_ERROR } result;

/* Outcome of one case: kind and a one-line reason. */
typedef struct outcome {
    result r;
    char why[1024];
    bool random; /* the model has a random op: outputs were compared by compare_random */
} outcome;

static result set(outcome *o, result r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static result set(outcome *o, result r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->why, sizeof o->why, fmt, ap);
    va_end(ap);
    o->r = r;
    return r;
}

static int is_floating(frt_dtype t) {
    return t == FRT_FLOAT32 || t == FRT_FLOAT64 || t == FRT_FLOAT16 || t == FRT_BFLOAT16;
}

static void shape_text(const frt_tensor *t, char *buf, size_t cap) {
    size_t o = (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < t->rank && o < cap; d++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%lld", d ? "," : "", (long long)t->shape[d]);
    if (o < cap) snprintf(buf + o, cap - o, "]");
}

/* Compares got with want; returns R_PASS or R_FAIL with the first mismatch described. */
static result compare(const char *name, const frt_tensor *got, const frt_tensor *want, outcome *o) {
    char gs[128], ws[128];
    /* bfloat16 data is stored by the suite's generator as uint16 bit patterns, and the ONNX
     * backend runner compares those arrays as numbers with its float tolerance; do the same */
    bool bf16_codes = got->dtype == FRT_BFLOAT16 && want->dtype == FRT_UINT16;
    if (got->dtype != want->dtype && !bf16_codes)
        return set(o, R_FAIL, "output '%s': dtype %s, expected %s", name,
                   frt_dtype_name(got->dtype), frt_dtype_name(want->dtype));
    shape_text(got, gs, sizeof gs);
    shape_text(want, ws, sizeof ws);
    if (got->rank != want->rank ||
        memcmp(got->shape, want->shape, (size_t)want->rank * sizeof want->shape[0]) != 0)
        return set(o, R_FAIL, "output '%s': shape %s, expected %s", name, gs, ws);
    int64_t n = frt_tensor_numel(want);
    size_t es = frt_dtype_size(want->dtype);
    if (n < 0 || !es || got->nbytes < (size_t)n * es || want->nbytes < (size_t)n * es)
        return set(o, R_FAIL, "output '%s': %zu bytes, expected %zu", name, got->nbytes,
                   want->nbytes);
    for (int64_t i = 0; i < n; i++) {
        if (bf16_codes) {
            uint16_t g, w;
            memcpy(&g, (const char *)got->data + (size_t)i * 2, 2);
            memcpy(&w, (const char *)want->data + (size_t)i * 2, 2);
            if (!(fabs((double)g - w) <= CHECK_ATOL + CHECK_RTOL * w))
                return set(o, R_FAIL, "output '%s' %s: bfloat16 element %lld is 0x%04x, "
                           "expected 0x%04x (compared as uint16 codes, as the ONNX runner does)",
                           name, ws, (long long)i, g, w);
        } else if (is_floating(want->dtype)) {
            double g = tio_element_as_double(got, (size_t)i), w = tio_element_as_double(want, (size_t)i);
            if (isnan(w) && isnan(g)) continue;
            if (isinf(w) && g == w) continue;
            if (!(fabs(g - w) <= CHECK_ATOL + CHECK_RTOL * fabs(w)))
                return set(o, R_FAIL, "output '%s' %s: element %lld is %.9g, expected %.9g", name,
                           ws, (long long)i, g, w);
        } else if (memcmp((const char *)got->data + (size_t)i * es,
                          (const char *)want->data + (size_t)i * es, es) != 0) {
            return set(o, R_FAIL, "output '%s' %s: element %lld is %.17g, expected %.17g", name, ws,
                       (long long)i, tio_element_as_double(got, (size_t)i),
                       tio_element_as_double(want, (size_t)i));
        }
    }
    return R_PASS;
}

/* The ops whose values come from a random generator: the suite's expected values come from
 * numpy's generator and cannot be reproduced. */
static bool model_is_random(const frt_model *m) {
    static const char *const ops[] = {"RandomUniform", "RandomNormal", "RandomUniformLike",
                                      "RandomNormalLike", "Bernoulli"};
    for (size_t i = 0; i < frt_model_num_op_types(m); i++) {
        const char *op;
        size_t count;
        frt_model_op_type(m, i, &op, &count);
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
            if (strcmp(op, ops[k]) == 0) return true;
    }
    return false;
}

/* The rule for outputs of a model with a random op: dtype and shape exactly; values finite and in
 * the range the expected output shows: when every expected value is 0 or 1 (Bernoulli-style
 * outputs, bool or numeric), every value must be 0 or 1; otherwise every value must lie within
 * [min - w, max + w] of the expected values, w = max - min (their spread). */
static result compare_random(const char *name, const frt_tensor *got, const frt_tensor *want,
                             outcome *o) {
    char gs[128], ws[128];
    if (got->dtype != want->dtype)
        return set(o, R_FAIL, "output '%s': dtype %s, expected %s (random)", name,
                   frt_dtype_name(got->dtype), frt_dtype_name(want->dtype));
    shape_text(got, gs, sizeof gs);
    shape_text(want, ws, sizeof ws);
    if (got->rank != want->rank ||
        memcmp(got->shape, want->shape, (size_t)want->rank * sizeof want->shape[0]) != 0)
        return set(o, R_FAIL, "output '%s': shape %s, expected %s (random)", name, gs, ws);
    int64_t n = frt_tensor_numel(want);
    size_t es = frt_dtype_size(want->dtype);
    if (n < 0 || !es || got->nbytes < (size_t)n * es || want->nbytes < (size_t)n * es)
        return set(o, R_FAIL, "output '%s': %zu bytes, expected %zu", name, got->nbytes,
                   want->nbytes);
    bool binary = true;
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        double w = tio_element_as_double(want, (size_t)i);
        if (w != 0 && w != 1) binary = false;
        if (w < lo) lo = w;
        if (w > hi) hi = w;
    }
    double span = hi - lo;
    for (int64_t i = 0; i < n; i++) {
        double g = tio_element_as_double(got, (size_t)i);
        bool ok = binary ? (g == 0 || g == 1) : (isfinite(g) && g >= lo - span && g <= hi + span);
        if (!ok)
            return set(o, R_FAIL, "output '%s' %s: element %lld is %.9g, outside the range %s "
                       "(random)", name, ws, (long long)i, g, binary ? "{0, 1}" : "of the expected");
    }
    return R_PASS;
}

/* Number of files "<prefix>N.pb" in dir for N = 0, 1, ... up to the first missing one. */
static int count_files(const char *dir, const char *prefix) {
    int n = 0;
    for (;; n++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/%s%d.pb", dir, prefix, n);
        FILE *f = fopen(p, "rb");
        if (!f) return n;
        fclose(f);
    }
}

/* Loads a .pb tensor; a file that is not a TensorProto (sequence, optional, map) or holds
 * strings is reported as unsupported. */
static result load_pb(const char *path, frt_tensor *t, char **name, outcome *o) {
    char err[512];
    if (tio_load(path, t, name, err, sizeof err) == 0) return R_PASS;
    if (strstr(err, "string") || strstr(err, "segment") || strstr(err, "not a TensorProto") ||
        strstr(err, "unknown") || strstr(err, "dtype") || strstr(err, "data_type"))
        return set(o, R_UNSUPPORTED, "%s", err);
    return set(o, R_ERROR, "%s", err);
}

/* Whether a graph input or output of m is a sequence or optional (the case then runs through
 * frt_run_values). */
static bool model_has_values(const frt_model *m) {
    frt_tensor_info info;
    for (size_t i = 0; i < frt_model_num_inputs(m); i++)
        if (frt_model_input(m, i, &info) == FRT_OK && info.kind != FRT_KIND_TENSOR) return true;
    for (size_t i = 0; i < frt_model_num_outputs(m); i++)
        if (frt_model_output(m, i, &info) == FRT_OK && info.kind != FRT_KIND_TENSOR) return true;
    return false;
}

static const char *kind_text(frt_kind k, frt_kind elem) {
    return k == FRT_KIND_TENSOR     ? "tensor"
           : k == FRT_KIND_SEQUENCE ? "sequence"
           : elem == FRT_KIND_SEQUENCE ? "optional sequence" : "optional tensor";
}

/* Compares an output value: kind, presence and length exactly, then each tensor by compare (or
 * compare_random). */
static result compare_value(const char *name, const frt_io_value *got, const frt_io_value *want,
                            outcome *o) {
    if (got->kind != want->kind || (want->kind == FRT_KIND_OPTIONAL && got->elem_kind != want->elem_kind))
        return set(o, R_FAIL, "output '%s': a %s, expected a %s", name,
                   kind_text(got->kind, got->elem_kind), kind_text(want->kind, want->elem_kind));
    if (want->kind == FRT_KIND_OPTIONAL && (got->has_value != 0) != (want->has_value != 0))
        return set(o, R_FAIL, "output '%s': optional %s a value, expected %s", name,
                   got->has_value ? "has" : "has no", want->has_value ? "one" : "none");
    if (got->n != want->n)
        return set(o, R_FAIL, "output '%s': %zu tensors, expected %zu", name, got->n, want->n);
    for (size_t i = 0; i < want->n; i++) {
        char nm[300];
        snprintf(nm, sizeof nm, "%s[%zu]", name, i);
        result r = o->random ? compare_random(nm, &got->tensors[i], &want->tensors[i], o)
                             : compare(nm, &got->tensors[i], &want->tensors[i], o);
        if (r != R_PASS) return r;
    }
    return R_PASS;
}

/* One data set of a case whose inputs or outputs include sequences or optionals. */
static result run_value_set(const frt_model *m, frt_runtime *rt, const char *sd, int ds,
                            outcome *o) {
    size_t ni = frt_model_num_inputs(m), no = frt_model_num_outputs(m);
    frt_io_value in[MAX_IO], want[MAX_IO], got[MAX_IO];
    const char *names[MAX_IO];
    char *pbnames[MAX_IO] = {0};
    memset(in, 0, sizeof in);
    memset(want, 0, sizeof want);
    memset(got, 0, sizeof got);
    result r = R_PASS;
    for (size_t k = 0; r == R_PASS && k < ni + no; k++) {
        bool is_in = k < ni;
        size_t idx = is_in ? k : k - ni;
        frt_tensor_info info;
        if (is_in) frt_model_input(m, idx, &info);
        else frt_model_output(m, idx, &info);
        char p[4200], err[512];
        snprintf(p, sizeof p, "%s/%s_%zu.pb", sd, is_in ? "input" : "output", idx);
        frt_io_value *v = is_in ? &in[idx] : &want[idx];
        if (tio_load_value(p, info.kind, info.elem_kind, v, is_in ? &pbnames[idx] : NULL, err,
                           sizeof err))
            r = set(o, strstr(err, "not supported") || strstr(err, "string") ? R_UNSUPPORTED
                                                                             : R_ERROR, "%s", err);
        else if (is_in && info.kind == FRT_KIND_TENSOR && info.dtype == FRT_BFLOAT16 &&
                 v->tensors[0].dtype == FRT_UINT16)
            v->tensors[0].dtype = FRT_BFLOAT16;
        if (is_in) names[idx] = pbnames[idx] && pbnames[idx][0] ? pbnames[idx] : info.name;
    }
    if (r == R_PASS) {
        frt_status st = frt_run_values(rt, names, in, ni, got, no);
        if (st != FRT_OK) {
            r = set(o, st == FRT_ERR_UNSUPPORTED ? R_UNSUPPORTED : R_FAIL, "data set %d: %s: %s",
                    ds, frt_status_string(st), frt_last_error());
        } else {
            for (size_t k = 0; r == R_PASS && k < no; k++) {
                frt_tensor_info info;
                frt_model_output(m, k, &info);
                r = compare_value(info.name, &got[k], &want[k], o);
            }
            for (size_t k = 0; k < no; k++) frt_io_value_release(&got[k]);
        }
    }
    for (size_t k = 0; k < MAX_IO; k++) {
        tio_value_free(&in[k]);
        tio_value_free(&want[k]);
        free(pbnames[k]);
    }
    return r;
}

/* Runs every test_data_set_* of one case. */
static result run_case(const char *dir, const frt_options *opt, outcome *o, int *n_sets) {
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    frt_model *m = NULL;
    frt_status st = frt_model_load(path, opt, &m);
    if (st != FRT_OK) {
        result r = st == FRT_ERR_UNSUPPORTED ? R_UNSUPPORTED : R_ERROR;
        return set(o, r, "%s: %s", frt_status_string(st), frt_last_error());
    }
    frt_runtime *rt = NULL;
    if (frt_runtime_create(m, &rt) != FRT_OK) {
        set(o, R_ERROR, "%s", frt_last_error());
        frt_model_free(m);
        return o->r;
    }
    size_t ni = frt_model_num_inputs(m), no = frt_model_num_outputs(m);
    o->random = model_is_random(m);
    bool values = model_has_values(m);
    result r = R_PASS;
    *n_sets = 0;
    if (ni > MAX_IO || no > MAX_IO) {
        r = set(o, R_UNSUPPORTED, "more than %d inputs or outputs", MAX_IO);
        goto done;
    }
    for (int ds = 0; r == R_PASS; ds++) {
        char sd[4096];
        snprintf(sd, sizeof sd, "%s/test_data_set_%d", dir, ds);
        DIR *dd = opendir(sd);
        if (!dd) break;
        closedir(dd);
        int nin = count_files(sd, "input_"), nout = count_files(sd, "output_");
        frt_tensor in[MAX_IO] = {{0}}, want[MAX_IO] = {{0}}, got[MAX_IO] = {{0}};
        const char *names[MAX_IO];
        char *pbnames[MAX_IO] = {0};
        if ((size_t)nin != ni) {
            r = set(o, R_ERROR, "data set %d has %d inputs, the model %zu", ds, nin, ni);
        } else if ((size_t)nout != no) {
            r = set(o, R_ERROR, "data set %d has %d outputs, the model %zu", ds, nout, no);
        } else if (values) {
            r = run_value_set(m, rt, sd, ds, o);
            if (r == R_PASS) (*n_sets)++;
            continue;
        }
        for (int k = 0; r == R_PASS && k < nin; k++) {
            char p[4200];
            snprintf(p, sizeof p, "%s/input_%d.pb", sd, k);
            r = load_pb(p, &in[k], &pbnames[k], o);
            frt_tensor_info info;
            frt_model_input(m, (size_t)k, &info);
            /* the suite stores bfloat16 inputs as their uint16 bit patterns */
            if (r == R_PASS && info.dtype == FRT_BFLOAT16 && in[k].dtype == FRT_UINT16)
                in[k].dtype = FRT_BFLOAT16;
            /* the suite names each input after the graph input; fall back to position */
            names[k] = pbnames[k] && pbnames[k][0] ? pbnames[k] : info.name;
        }
        for (int k = 0; r == R_PASS && k < nout; k++) {
            char p[4200];
            snprintf(p, sizeof p, "%s/output_%d.pb", sd, k);
            r = load_pb(p, &want[k], NULL, o);
        }
        if (r == R_PASS) {
            st = frt_run(rt, names, in, ni, got, no, FRT_OUTPUTS_ALLOC);
            if (st != FRT_OK) {
                r = set(o, st == FRT_ERR_UNSUPPORTED ? R_UNSUPPORTED : R_FAIL, "data set %d: %s: %s",
                        ds, frt_status_string(st), frt_last_error());
            } else {
                for (size_t k = 0; r == R_PASS && k < no; k++) {
                    frt_tensor_info info;
                    frt_model_output(m, k, &info);
                    r = o->random ? compare_random(info.name, &got[k], &want[k], o)
                                  : compare(info.name, &got[k], &want[k], o);
                }
                for (size_t k = 0; k < no; k++) frt_tensor_release(&got[k]);
            }
        }
        for (int k = 0; k < MAX_IO; k++) {
            tio_tensor_free(&in[k]);
            tio_tensor_free(&want[k]);
            free(pbnames[k]);
        }
        if (r == R_PASS) (*n_sets)++;
    }
    if (r == R_PASS && *n_sets == 0) r = set(o, R_ERROR, "no test_data_set_* directory");
done:
    frt_runtime_free(rt);
    frt_model_free(m);
    return r;
}

static const char *base_name(const char *p) {
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') n--;
    const char *b = p + n;
    while (b > p && b[-1] != '/') b--;
    return b;
}

int flatrt_check_main(int argc, char **argv, int threads, int weights) {
    int counts[4] = {0};
    int n = 0;
    frt_options opt;
    frt_options_init(&opt);
    opt.num_threads = threads;
    opt.weights_precision = (frt_weights_precision)weights;
    for (int i = 0; i < argc; i++) {
        outcome o = {R_PASS, "", false};
        int sets = 0;
        result r = run_case(argv[i], &opt, &o, &sets);
        char name[512];
        snprintf(name, sizeof name, "%s", base_name(argv[i]));
        char *slash = strchr(name, '/');
        if (slash) *slash = 0;
        static const char *const word[] = {"pass", "fail", "unsupported", "error"};
        if (r == R_PASS)
            printf("pass %s (%d data set%s)%s\n", name, sets, sets == 1 ? "" : "s",
                   o.random ? " (random: shape/range checked)" : "");
        else printf("%s %s: %s\n", word[r], name, o.why);
        fflush(stdout);
        counts[r]++;
        n++;
    }
    printf("check: %d passed, %d failed, %d unsupported, %d errors of %d cases\n", counts[R_PASS],
           counts[R_FAIL], counts[R_UNSUPPORTED], counts[R_ERROR], n);
    return counts[R_PASS] == n ? 0 : 1;
}
