/* `flatrt trace`: loads and runs models with the selection trace on (frt_selection_record, flatrt.h) and
 * writes what they used as a selection file for `cmake -DFRT_SELECT=FILE` (format:
 * docs/selective.md). Several models, and --merge of earlier selection files, give the union.
 *
 * A selection is held as the recorder's set of tab-separated records ("op\tai.onnx\tConv\t13",
 * "variant\tconv_gemm\tavx512", ...); writing groups them into the YAML layout, reading parses
 * that layout back into records, so a merge is a set union. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flatrt.h"
#include "tensor_io.h"
#include "trace_cmd.h"

#define SEL_VERSION 1


#if defined(FRT_SELECTIVE) && FRT_SELECTIVE
/* A selective build records nothing (its hooks are compiled out). */
int flatrt_trace_main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fputs("flatrt trace: this is a selective build (cmake -DFRT_SELECT), which does not record "
          "traces; trace with a full build\n", stderr);
    return 1;
}
#else
static int fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("flatrt trace: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

static void usage(FILE *f) {
    fputs("usage: flatrt trace MODEL... [--input NAME=FILE]... [--shape NAME=d0,d1,...]...\n"
          "                    [--threads N] [--planner standard|greedy|none] [--runs N]\n"
          "                    [--profile] [--merge SELECTION.yaml]... -o SELECTION.yaml\n"
          "  Loads and runs each MODEL (inputs not given are random: floats uniform in [-1,1),\n"
          "  integers 0..9, as in bench; symbolic dims are 1 unless --shape says otherwise) and\n"
          "  writes the operators (domain, type, opsets), dtypes, kernels, ISA tiers of the\n"
          "  variant tables, providers and features the loads and runs used. --input and --shape\n"
          "  apply to every model with an input of that name. --merge adds the contents of\n"
          "  earlier selection files (the result is the union); with --merge, MODEL may be\n"
          "  omitted. Build with: cmake -DFRT_SELECT=SELECTION.yaml (docs/selective.md).\n",
          f);
}

/* ---- the record set of a selection ---------------------------------------------------------- */

typedef struct recset {
    char **s;
    size_t n, cap;
} recset;

static int rs_add(recset *r, const char *s) {
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->s[i], s)) return 0;
    if (r->n == r->cap) {
        size_t c = r->cap ? 2 * r->cap : 64;
        char **p = realloc(r->s, c * sizeof *p);
        if (!p) return fail("out of memory");
        r->s = p;
        r->cap = c;
    }
    if (!(r->s[r->n] = strdup(s))) return fail("out of memory");
    r->n++;
    return 0;
}

static int rs_addf(recset *r, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof buf) return fail("selection record too long");
    return rs_add(r, buf);
}

static void rs_free(recset *r) {
    for (size_t i = 0; i < r->n; i++) free(r->s[i]);
    free(r->s);
    memset(r, 0, sizeof *r);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Splits a record into at most max tab-separated fields (in place in buf). */
static int fields(const char *rec, char *buf, size_t cap, char **f, int max) {
    snprintf(buf, cap, "%s", rec);
    int n = 0;
    char *p = buf;
    while (n < max) {
        f[n++] = p;
        char *t = strchr(p, '\t');
        if (!t) break;
        *t = 0;
        p = t + 1;
    }
    return n;
}

/* ---- writing ---------------------------------------------------------------------------------- */

/* Writes the values of records "<kind>\t<key...>\t<value...>" whose first nkey fields after
 * kind equal key[] as a flow list, value fields joined by ':'; quoted: in double quotes. */
static void put_list(FILE *f, const recset *r, const char *kind, const char *const *key, int nkey,
                     int quoted) {
    fputc('[', f);
    int first = 1;
    for (size_t i = 0; i < r->n; i++) {
        char buf[1024], *fl[8];
        int n = fields(r->s[i], buf, sizeof buf, fl, 8);
        if (n < nkey + 2 || strcmp(fl[0], kind)) continue;
        int match = 1;
        for (int k = 0; k < nkey && match; k++) match = !strcmp(fl[1 + k], key[k]);
        if (!match) continue;
        fputs(first ? "" : ", ", f);
        if (quoted) fputc('"', f);
        for (int k = nkey + 1; k < n; k++) fprintf(f, "%s%s", k > nkey + 1 ? ":" : "", fl[k]);
        if (quoted) fputc('"', f);
        first = 0;
    }
    fputc(']', f);
}

static int write_yaml(const char *path, recset *r) {
    qsort(r->s, r->n, sizeof *r->s, cmp_str);
    FILE *f = fopen(path, "w");
    if (!f) return fail("cannot write '%s': %s", path, strerror(errno));
    fprintf(f, "# flatrt selection (docs/selective.md): what `flatrt trace` saw models use.\n"
               "# Build a runtime with only this: cmake -DFRT_SELECT=<this file>\n"
               "flatrt_selection: %d\n", SEL_VERSION);
    fputs("models:\n", f);
    for (size_t i = 0; i < r->n; i++)
        if (!strncmp(r->s[i], "model\t", 6)) fprintf(f, "  - \"%s\"\n", r->s[i] + 6);
    fputs("isa: ", f);
    put_list(f, r, "isa", NULL, 0, 0);
    fputs("\nproviders: ", f);
    put_list(f, r, "provider", NULL, 0, 0);
    fputs("\nfeatures: ", f);
    put_list(f, r, "feature", NULL, 0, 0);
    fputs("\nvariants:\n", f);
    for (size_t i = 0; i < r->n; i++) {
        char buf[1024], *fl[4];
        if (fields(r->s[i], buf, sizeof buf, fl, 4) != 3 || strcmp(fl[0], "variant")) continue;
        if (i > 0 && !strncmp(r->s[i - 1], r->s[i], (size_t)(fl[2] - buf))) continue; /* same fam */
        const char *key[1] = {fl[1]};
        fprintf(f, "  %s: ", fl[1]);
        put_list(f, r, "variant", key, 1, 0);
        fputc('\n', f);
    }
    fputs("operators:\n", f);
    for (size_t i = 0; i < r->n; i++) {
        char buf[1024], *fl[4];
        if (fields(r->s[i], buf, sizeof buf, fl, 4) != 4 || strcmp(fl[0], "op")) continue;
        /* one line per (domain, op): records of one op are adjacent after the sort */
        char prev[1024], *pf[4];
        if (i > 0 && fields(r->s[i - 1], prev, sizeof prev, pf, 4) == 4 && !strcmp(pf[0], "op") &&
            !strcmp(pf[1], fl[1]) && !strcmp(pf[2], fl[2]))
            continue;
        const char *key[2] = {fl[1], fl[2]};
        fprintf(f, "  - {domain: %s, op: %s, opsets: ", fl[1], fl[2]);
        put_list(f, r, "op", key, 2, 0);
        fputs(", dtypes: ", f);
        put_list(f, r, "dtype", key, 2, 0);
        fputs(", kernels: ", f);
        put_list(f, r, "kernel", key, 2, 1);
        fputs("}\n", f);
    }
    if (fclose(f)) return fail("cannot write '%s': %s", path, strerror(errno));
    return 0;
}

/* ---- reading (the layout write_yaml produces) ------------------------------------------------ */

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = 0;
    return s;
}

static char *unquote(char *s) {
    size_t n = strlen(s);
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
        s[n - 1] = 0;
        return s + 1;
    }
    return s;
}

/* Items of a flow list "[a, b, "c"]" (in place); -1 when s is not one. */
static int flow_items(char *s, char **items, int max) {
    s = trim(s);
    size_t n = strlen(s);
    if (n < 2 || s[0] != '[' || s[n - 1] != ']') return -1;
    s[n - 1] = 0;
    s++;
    int k = 0;
    char *p = s;
    while (*trim(p)) {
        if (k == max) return -1;
        char *c = p;
        int q = 0;
        while (*c && (q || *c != ',')) {
            if (*c == '"') q = !q;
            c++;
        }
        int last = !*c;
        *c = 0;
        items[k++] = unquote(trim(p));
        if (last) break;
        p = c + 1;
    }
    return k;
}

/* The value of key in a flow map "{domain: a, op: B, opsets: [1], ...}" (in place, top level). */
static char *map_get(char *map, const char *key, char *out, size_t cap) {
    size_t kl = strlen(key);
    int depth = 0, q = 0;
    for (char *p = map; *p; p++) {
        if (*p == '"') q = !q;
        if (q) continue;
        if (*p == '[') depth++;
        if (*p == ']') depth--;
        if (depth == 0 && (p[-1] == '{' || p[-1] == ' ') && !strncmp(p, key, kl) && p[kl] == ':') {
            char *v = p + kl + 1, *e = v;
            int d = 0, qq = 0;
            while (*e && (qq || d || (*e != ',' && *e != '}'))) {
                if (*e == '"') qq = !qq;
                else if (!qq && *e == '[') d++;
                else if (!qq && *e == ']') d--;
                e++;
            }
            snprintf(out, cap, "%.*s", (int)(e - v), v);
            return trim(out);
        }
    }
    return NULL;
}

static int read_yaml(const char *path, recset *r) {
    FILE *f = fopen(path, "r");
    if (!f) return fail("cannot read '%s': %s", path, strerror(errno));
    char line[8192], *items[512];
    char section[32] = "";
    int lineno = 0, version = 0, rc = 0;
#define BAD(what) do { rc = fail("%s:%d: %s", path, lineno, what); goto out; } while (0)
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) BAD("line too long");
        char *s = trim(line);
        if (!*s || *s == '#') continue;
        int indented = line[0] == ' ';
        if (!indented) {
            char *colon = strchr(s, ':');
            if (!colon) BAD("expected 'key: value'");
            *colon = 0;
            char *val = trim(colon + 1);
            snprintf(section, sizeof section, "%s", s);
            if (!strcmp(s, "flatrt_selection")) {
                version = atoi(val);
                if (version != SEL_VERSION) BAD("unsupported flatrt_selection version");
            } else if (!strcmp(s, "isa") || !strcmp(s, "providers") || !strcmp(s, "features")) {
                int n = flow_items(val, items, 512);
                if (n < 0) BAD("expected a list [a, b, ...]");
                const char *kind = !strcmp(s, "isa") ? "isa" : !strcmp(s, "providers") ? "provider"
                                                                                        : "feature";
                for (int i = 0; i < n; i++)
                    if ((rc = rs_addf(r, "%s\t%s", kind, items[i]))) goto out;
            } else if (strcmp(s, "models") && strcmp(s, "variants") && strcmp(s, "operators")) {
                BAD("unknown key");
            } else if (*val) {
                BAD("expected the entries on the following lines");
            }
            continue;
        }
        if (!version) BAD("the file must start with 'flatrt_selection: 1'");
        if (!strcmp(section, "models")) {
            if (s[0] != '-') BAD("expected '- \"model path\"'");
            if ((rc = rs_addf(r, "model\t%s", unquote(trim(s + 1))))) goto out;
        } else if (!strcmp(section, "variants")) {
            char *colon = strchr(s, ':');
            if (!colon) BAD("expected 'family: [tiers]'");
            *colon = 0;
            int n = flow_items(colon + 1, items, 512);
            if (n < 0) BAD("expected 'family: [tiers]'");
            for (int i = 0; i < n; i++)
                if ((rc = rs_addf(r, "variant\t%s\t%s", trim(s), items[i]))) goto out;
        } else if (!strcmp(section, "operators")) {
            if (s[0] != '-') BAD("expected '- {domain: ..., op: ..., ...}'");
            char *m = trim(s + 1);
            size_t ml = strlen(m);
            if (ml < 2 || m[0] != '{' || m[ml - 1] != '}') BAD("expected '- {domain: ..., op: ...}'");
            char dom[256], op[256], tmp[8192];
            char *d = map_get(m, "domain", dom, sizeof dom), *o = map_get(m, "op", op, sizeof op);
            if (!d || !o || !*d || !*o) BAD("operator without domain or op");
            static const char *const keys[3] = {"opsets", "dtypes", "kernels"};
            static const char *const kinds[3] = {"op", "dtype", "kernel"};
            for (int k = 0; k < 3; k++) {
                char *v = map_get(m, keys[k], tmp, sizeof tmp);
                if (!v) continue;
                int n = flow_items(v, items, 512);
                if (n < 0) BAD("expected a list [a, b, ...]");
                for (int i = 0; i < n; i++) {
                    if (k == 2) { /* "provider:name" */
                        char *c = strchr(items[i], ':');
                        if (!c) BAD("kernel without 'provider:'");
                        *c = 0;
                        rc = rs_addf(r, "kernel\t%s\t%s\t%s\t%s", d, o, items[i], c + 1);
                    } else {
                        rc = rs_addf(r, "%s\t%s\t%s\t%s", kinds[k], d, o, items[i]);
                    }
                    if (rc) goto out;
                }
            }
        } else {
            BAD("unexpected indented line");
        }
    }
    if (!version) BAD("not a flatrt selection (no 'flatrt_selection: 1')");
#undef BAD
out:
    fclose(f);
    return rc;
}

/* ---- inputs and runs -------------------------------------------------------------------------- */

typedef struct kv {
    const char *name, *value;
} kv;

/* splitmix64 with bench's seed, so trace and bench see the same random inputs */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void) {
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int fill_random(frt_tensor *t, const char *name) {
    int64_t numel = frt_tensor_numel(t);
    size_t es = frt_dtype_size(t->dtype);
    if (t->dtype == FRT_STRING || !es || numel < 0 ||
        (uint64_t)numel > ((uint64_t)1 << 34) / es)
        return fail("cannot make random data of type %s and this shape for input '%s'; pass it "
                    "with --input", frt_dtype_name(t->dtype), name);
    t->nbytes = (size_t)numel * es;
    t->data = calloc(t->nbytes ? t->nbytes : 1, 1);
    if (!t->data) return fail("out of memory for input '%s'", name);
    for (int64_t i = 0; i < numel; i++) {
        double u = (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0);
        int k = (int)(rng_next() % 10);
        float x = (float)(2.0 * u - 1.0);
        uint32_t bits;
        memcpy(&bits, &x, 4);
        switch (t->dtype) {
        case FRT_FLOAT32: ((float *)t->data)[i] = x; break;
        case FRT_FLOAT64: ((double *)t->data)[i] = 2.0 * u - 1.0; break;
        case FRT_FLOAT16: ((uint16_t *)t->data)[i] = tio_float_to_half(x); break;
        case FRT_BFLOAT16: ((uint16_t *)t->data)[i] = (uint16_t)(bits >> 16); break;
        case FRT_INT64: ((int64_t *)t->data)[i] = k; break;
        case FRT_UINT64: ((uint64_t *)t->data)[i] = (uint64_t)k; break;
        case FRT_INT32: ((int32_t *)t->data)[i] = k; break;
        case FRT_UINT32: ((uint32_t *)t->data)[i] = (uint32_t)k; break;
        case FRT_INT16: ((int16_t *)t->data)[i] = (int16_t)k; break;
        case FRT_UINT16: ((uint16_t *)t->data)[i] = (uint16_t)k; break;
        case FRT_INT8: ((int8_t *)t->data)[i] = (int8_t)k; break;
        case FRT_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)k; break;
        case FRT_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)(k & 1); break;
        default: break; /* zeros */
        }
    }
    return 0;
}

static int parse_dims(const char *s, frt_tensor *t) {
    t->rank = 0;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long long d = strtoll(p, &end, 10);
        if (end == p || errno || d < 0 || t->rank >= FRT_MAX_RANK)
            return fail("bad --shape '%s' (expected d0,d1,...)", s);
        t->shape[t->rank++] = d;
        p = end;
        if ((*p == ',' || *p == 'x') && p[1]) p++;
        else if (*p) return fail("bad --shape '%s' (expected d0,d1,...)", s);
    }
    return 0;
}

typedef struct trace_opts {
    kv *inputs, *shapes;
    int n_inputs, n_shapes;
    long threads, runs;
    frt_planner planner;
    int profile;
    int *input_used, *shape_used;
} trace_opts;

static int trace_model(const char *path, trace_opts *o, recset *r) {
    frt_options opt;
    frt_options_init(&opt);
    opt.num_threads = (int32_t)o->threads;
    opt.planner = o->planner;
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    frt_io_value *in = NULL, *out = NULL;
    const char **names = NULL;
    size_t ni = 0, no = 0;
    int rc = 0;
    if (frt_model_load(path, &opt, &m)) {
        rc = fail("%s: %s", path, frt_last_error());
        goto done;
    }
    ni = frt_model_num_inputs(m);
    no = frt_model_num_outputs(m);
    in = calloc(ni + 1, sizeof *in);
    out = calloc(no + 1, sizeof *out);
    names = calloc(ni + 1, sizeof *names);
    if (!in || !out || !names) {
        rc = fail("out of memory");
        goto done;
    }
    for (size_t i = 0; i < ni && !rc; i++) {
        frt_tensor_info info;
        frt_model_input(m, i, &info);
        names[i] = info.name;
        frt_io_value *v = &in[i];
        v->kind = info.kind;
        v->elem_kind = info.elem_kind;
        if (info.kind != FRT_KIND_TENSOR) continue; /* empty sequence / absent optional */
        v->n = 1;
        if (!(v->tensors = calloc(1, sizeof *v->tensors))) {
            rc = fail("out of memory");
            break;
        }
        frt_tensor *t = v->tensors;
        const char *file = NULL, *shp = NULL;
        for (int k = 0; k < o->n_inputs; k++)
            if (!strcmp(o->inputs[k].name, info.name)) file = o->inputs[k].value, o->input_used[k] = 1;
        for (int k = 0; k < o->n_shapes; k++)
            if (!strcmp(o->shapes[k].name, info.name)) shp = o->shapes[k].value, o->shape_used[k] = 1;
        if (file) {
            char err[1024];
            if (tio_load(file, t, NULL, err, sizeof err)) rc = fail("%s", err);
            continue;
        }
        t->dtype = info.dtype;
        if (shp) {
            rc = parse_dims(shp, t);
        } else if (info.rank < 0) {
            rc = fail("%s: input '%s' has no known rank; give --shape %s=d0,d1,...", path,
                      info.name, info.name);
        } else {
            t->rank = info.rank;
            for (int d = 0; d < info.rank; d++) t->shape[d] = info.shape[d] < 0 ? 1 : info.shape[d];
        }
        if (!rc) rc = fill_random(t, info.name);
    }
    if (rc) goto done;
    if (frt_runtime_create(m, &rt)) {
        rc = fail("%s: %s", path, frt_last_error());
        goto done;
    }
    if (o->profile) frt_runtime_set_profiling(rt, 1);
    for (long k = 0; k < o->runs && !rc; k++) {
        if (frt_run_values(rt, names, in, ni, out, no)) rc = fail("%s: run: %s", path, frt_last_error());
        for (size_t i = 0; i < no; i++) frt_io_value_release(&out[i]);
    }
    if (!rc) rc = rs_addf(r, "model\t%s", path);
done:
    for (size_t i = 0; in && i < ni; i++) {
        if (in[i].tensors) tio_tensor_free(in[i].tensors);
        free(in[i].tensors);
    }
    free(in);
    free(out);
    free(names);
    frt_runtime_free(rt);
    frt_model_free(m);
    return rc;
}

static int opt_value(int argc, char **argv, int *i, const char *name, const char **val) {
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (!strncmp(a, name, n) && a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (strcmp(a, name)) return 0;
    if (*i + 1 >= argc) {
        *val = NULL;
        return 1;
    }
    *val = argv[++*i];
    return 1;
}

static int parse_kv(const char *s, const char *opt, kv *out) {
    const char *eq = strchr(s, '=');
    if (!eq || eq == s || !eq[1]) return fail("%s expects NAME=VALUE, got '%s'", opt, s);
    char *name = strndup(s, (size_t)(eq - s));
    if (!name) return fail("out of memory");
    out->name = name;
    out->value = eq + 1;
    return 0;
}

int flatrt_trace_main(int argc, char **argv) {
    trace_opts o = {0};
    o.threads = 1;
    o.runs = 1;
    const char **models = calloc((size_t)argc + 1, sizeof *models);
    const char **merges = calloc((size_t)argc + 1, sizeof *merges);
    o.inputs = calloc((size_t)argc + 1, sizeof *o.inputs);
    o.shapes = calloc((size_t)argc + 1, sizeof *o.shapes);
    o.input_used = calloc((size_t)argc + 1, sizeof(int));
    o.shape_used = calloc((size_t)argc + 1, sizeof(int));
    int n_models = 0, n_merges = 0, rc = 0;
    const char *outp = NULL, *v;
    recset r = {0};
    if (!models || !merges || !o.inputs || !o.shapes || !o.input_used || !o.shape_used) {
        rc = fail("out of memory");
        goto done;
    }
    for (int i = 0; i < argc && !rc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            goto done;
        } else if (opt_value(argc, argv, &i, "-o", &v) || opt_value(argc, argv, &i, "--output", &v)) {
            if (!v) rc = fail("%s needs a file name", a);
            outp = v;
        } else if (opt_value(argc, argv, &i, "--input", &v)) {
            rc = v ? parse_kv(v, "--input", &o.inputs[o.n_inputs++]) : fail("--input needs NAME=FILE");
        } else if (opt_value(argc, argv, &i, "--shape", &v)) {
            rc = v ? parse_kv(v, "--shape", &o.shapes[o.n_shapes++]) : fail("--shape needs NAME=DIMS");
        } else if (opt_value(argc, argv, &i, "--merge", &v)) {
            if (!v) rc = fail("--merge needs a selection file");
            merges[n_merges++] = v;
        } else if (opt_value(argc, argv, &i, "--threads", &v) ||
                   opt_value(argc, argv, &i, "--runs", &v)) {
            char *end;
            long x = v ? strtol(v, &end, 10) : 0;
            long max = a[2] == 't' ? FRT_MAX_THREADS : 1000000;
            if (!v || *end || x < 1 || x > max) rc = fail("%s expects an integer 1..%ld", a, max);
            else if (a[2] == 't') o.threads = x;
            else o.runs = x;
        } else if (opt_value(argc, argv, &i, "--planner", &v)) {
            if (v && !strcmp(v, "standard")) o.planner = FRT_PLANNER_STANDARD;
            else if (v && !strcmp(v, "greedy")) o.planner = FRT_PLANNER_GREEDY;
            else if (v && !strcmp(v, "none")) o.planner = FRT_PLANNER_NONE;
            else rc = fail("--planner expects standard, greedy or none");
        } else if (!strcmp(a, "--profile")) {
            o.profile = 1;
        } else if (a[0] == '-' && a[1]) {
            rc = fail("unknown option '%s' (flatrt trace --help)", a);
        } else {
            models[n_models++] = a;
        }
    }
    if (rc) goto done;
    if (!outp) {
        rc = fail("-o SELECTION.yaml is required (flatrt trace --help)");
        goto done;
    }
    if (!n_models && !n_merges) {
        rc = fail("nothing to trace: give MODEL... and/or --merge FILE (flatrt trace --help)");
        goto done;
    }
    for (int i = 0; i < n_merges && !rc; i++) rc = read_yaml(merges[i], &r);
    for (int i = 0; i < n_models && !rc; i++) {
        frt_selection_reset();
        frt_selection_record(1);
        rc = trace_model(models[i], &o, &r);
        frt_selection_record(0);
        for (size_t k = 0; k < frt_selection_count() && !rc; k++) rc = rs_add(&r, frt_selection_at(k));
        if (rc) break;
        static const char *const planners[] = {"standard", "none", "greedy"};
        rc = rs_addf(&r, "feature\tplanner_%s", planners[o.planner]);
        if (!rc && o.threads > 1) rc = rs_add(&r, "feature\tthread_pool");
        if (!rc && o.profile) rc = rs_add(&r, "feature\tprofiler");
        if (!rc) rc = rs_addf(&r, "isa\t%s", frt_isa_tier());
    }
    for (int k = 0; k < o.n_inputs && !rc && n_models; k++)
        if (!o.input_used[k]) rc = fail("--input %s: no model has an input of that name", o.inputs[k].name);
    for (int k = 0; k < o.n_shapes && !rc && n_models; k++)
        if (!o.shape_used[k]) rc = fail("--shape %s: no model has an input of that name", o.shapes[k].name);
    if (!rc) rc = write_yaml(outp, &r);
    if (!rc) {
        size_t ops = 0;
        for (size_t i = 0; i < r.n; i++) ops += !strncmp(r.s[i], "op\t", 3);
        fprintf(stderr, "flatrt trace: wrote %s (%zu operator records)\n", outp, ops);
    }
done:
    frt_selection_reset();
    for (int k = 0; o.inputs && k < o.n_inputs; k++) free((void *)o.inputs[k].name);
    for (int k = 0; o.shapes && k < o.n_shapes; k++) free((void *)o.shapes[k].name);
    free(o.inputs);
    free(o.shapes);
    free(o.input_used);
    free(o.shape_used);
    free(models);
    free(merges);
    rs_free(&r);
    return rc;
}
#endif
