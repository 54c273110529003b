/*
 * flatrt — command-line tool for the flatrt runtime: run a model on tensor files, benchmark it,
 * or describe it. Uses only the public API (include/flatrt.h). See usage() for the commands.
 *
 * Exit status: 0 on success, 1 on any error (message on stderr, for library errors the text of
 * frt_last_error()), 2 on a usage error.
 *
 * `flatrt bench` prints human-readable lines and then, as its LAST line, key=value pairs
 * separated by single spaces. Keys and number formats follow ../shared/tools/ortbench so the two
 * can be compared side by side (bench/compare.sh parses both):
 *   flatrt_version load_ms threads planner weights warmup iters mean_us p10_us p50_us p90_us p99_us
 *   min_us max_us std_us peak_rss_kib rss_before_load_kib arena_bytes naive_bytes
 *   lower_bound_bytes outputs
 * Percentiles interpolate linearly between order statistics (numpy's default, as ortbench).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "flatrt.h"
#define FRT_STR_(x) #x
#define FRT_STR(x) FRT_STR_(x)
#include "plan_svg.h"
#include "check.h"
#include "tensor_io.h"

#define EXIT_USAGE 2
#define MAX_KV 256

/* ---------------------------------------------------------------------------------------------- */
/* Messages                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

static void usage(FILE *f) {
    fprintf(f,
            "usage: flatrt COMMAND [options]\n"
            "\n"
            "commands:\n"
            "  run MODEL [--input NAME=FILE]... [--output-dir DIR] [--check-finite]\n"
            "      Run the model once on tensors from .npy or ONNX TensorProto .pb files and print\n"
            "      each output (dtype, shape, min/max/mean, first values, argmax for [N] or [1,N]\n"
            "      floats). With --output-dir, write each output to DIR/<name>.npy (characters\n"
            "      other than letters, digits, '.', '_' and '-' in the name become '_').\n"
            "      NaN or infinite output values are reported on stderr; with --check-finite\n"
            "      they are an error (exit status 1).\n"
            "  bench MODEL [--input NAME=FILE]... [--shape NAME=d0,d1,...]... [--iters N]\n"
            "        [--warmup N] [--threads N] [--profile] [--planner standard|greedy|none] [--seed N]\n"
            "        [--lat-file PATH] [--runtimes R] [--trace FILE.json] [--inter-op N]\n"
            "      Time frt_run (outputs borrowed). Inputs not given are random (floats uniform in\n"
            "      [-1,1), integers 0..9, fixed seed); symbolic dims are 1 unless --shape says\n"
            "      otherwise. Default --iters 1000 --warmup 100, or 50 and 5 when one run takes\n"
            "      more than 10 ms. --profile adds time per op type, per node and plan statistics.\n"
            "      --runtimes R then runs R runtimes (clones) on R threads at once, --iters runs\n"
            "      each, and reports their aggregate throughput (throughput_per_s; without\n"
            "      --runtimes it is 1 / mean latency of the single runtime).\n"
            "      --trace writes up to 10 further runs as Chrome trace events (one per step,\n"
            "      subgraph steps nested), for Perfetto or chrome://tracing.\n"
            "      --inter-op N runs independent steps on up to N threads at once\n"
            "      (frt_options.inter_op_threads; default 1).\n"
            "      The last line is key=value pairs (load_ms iters mean_us p10_us p50_us p90_us\n"
            "      p99_us min_us peak_rss_kib arena_bytes ...).\n"
            "  info MODEL [--memory]\n"
            "      Inputs, outputs, producer, opset, op types, compile statistics, parameters and\n"
            "      the memory plan with symbolic dims = 1. --memory compares every planner.\n"
            "  info --ops\n"
            "      The operators this build implements: op, domain, opsets, family, and '*' for\n"
            "      ops whose output shapes may depend on input data.\n"
            "  plan MODEL --svg FILE [--shape NAME=d0,d1,...]... [--input NAME=FILE]...\n"
            "      Draw the memory plan (steps across, slab offset down, one rectangle per tensor)\n"
            "      for the given (or default: symbolic dims = 1) input shapes.\n"
            "  check CASE_DIR... [--threads N] [--weights fp32|fp16|bf16]\n"
            "      Run ONNX backend test cases (CASE_DIR/model.onnx, test_data_set_*/input_K.pb and\n"
            "      output_K.pb, as in ONNX's node suite) and compare the outputs: floats within\n"
            "      1e-7 + 1e-3 * |expected|, other types exactly. One line per case (pass, fail\n"
            "      with the first mismatch, unsupported with what is missing, error) and a summary;\n"
            "      exit status 0 only when every case passed.\n"
            "  help [COMMAND]        this text\n"
            "  version               print the version (also --version)\n"
            "\n"
            "options for run, bench and info:\n"
            "  --threads N           intra-op threads, 1 to " FRT_STR(FRT_MAX_THREADS) " (default 1)\n"
            "  --planner P           memory planner: standard (default), greedy or none\n"
            "  --no-fold             do not fold constant subgraphs at load\n"
            "  --no-fuse             do not fuse operators at load\n"
            "  --weights P           storage of constant Gemm/MatMul weights: fp32 (default),\n"
            "                        fp16 or bf16 (computed in float32; also for check)\n"
            "  --input FILE          (without NAME=) for a model with one input, or a .pb file\n"
            "                        whose TensorProto name is the input's name\n"
            "\n"
            "exit status: 0 ok, 1 error, 2 usage error\n");
}

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

static int PRINTF_LIKE(1, 2) fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("flatrt: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

static int PRINTF_LIKE(1, 2) usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("flatrt: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\nTry 'flatrt --help'.\n", stderr);
    va_end(ap);
    return EXIT_USAGE;
}

/* Reports the library's last error with an optional context prefix. */
static int fail_frt(const char *context) {
    const char *msg = frt_last_error();
    if (!msg || !*msg) msg = "unknown error";
    if (context) return fail("%s: %s", context, msg);
    return fail("%s", msg);
}

static void warn(const char *fmt, ...) PRINTF_LIKE(1, 2);
static void warn(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("flatrt: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---------------------------------------------------------------------------------------------- */
/* Small helpers                                                                                   */
/* ---------------------------------------------------------------------------------------------- */

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static long proc_status_kib(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    size_t kl = strlen(key);
    long v = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
            v = strtol(line + kl + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

/* "[1,3,224,224]"; dims that are not fixed print as their symbolic name or "?". */
static void shape_str(char *buf, size_t n, int32_t rank, const int64_t *shape,
                      const char *const *dim_names) {
    if (rank < 0) {
        snprintf(buf, n, "[?]");
        return;
    }
    size_t o = 0;
    o += (size_t)snprintf(buf + o, n - o, "[");
    for (int32_t d = 0; d < rank && o < n; d++) {
        const char *sep = d ? "," : "";
        if (shape[d] >= 0)
            o += (size_t)snprintf(buf + o, n - o, "%s%lld", sep, (long long)shape[d]);
        else if (dim_names && dim_names[d] && dim_names[d][0])
            o += (size_t)snprintf(buf + o, n - o, "%s%s", sep, dim_names[d]);
        else
            o += (size_t)snprintf(buf + o, n - o, "%s?", sep);
    }
    if (o < n) snprintf(buf + o, n - o, "]");
}

static void bytes_str(char *buf, size_t n, double b) {
    if (b < 1024) snprintf(buf, n, "%.0f B", b);
    else if (b < 1024.0 * 1024) snprintf(buf, n, "%.1f KiB", b / 1024);
    else if (b < 1024.0 * 1024 * 1024) snprintf(buf, n, "%.2f MiB", b / (1024.0 * 1024));
    else snprintf(buf, n, "%.2f GiB", b / (1024.0 * 1024 * 1024));
}

static int parse_long(const char *s, const char *opt, long min, long max, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) {
        usage_error("%s expects an integer in [%ld, %ld], got '%s'", opt, min, max, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int mkdir_p(const char *path) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST) return -1;
    struct stat st;
    if (stat(tmp, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* Command line                                                                                    */
/* ---------------------------------------------------------------------------------------------- */

typedef struct kv {
    const char *name; /* NULL for "--input FILE" without a name */
    const char *value;
    char *owned;      /* storage of name */
} kv;

enum { CMD_RUN, CMD_BENCH, CMD_INFO, CMD_PLAN };

static const char *planner_name(frt_planner p) {
    return p == FRT_PLANNER_NONE ? "none" : p == FRT_PLANNER_GREEDY ? "greedy" : "standard";
}

typedef struct cli {
    int cmd;
    const char *model;
    kv inputs[MAX_KV], shapes[MAX_KV];
    int n_inputs, n_shapes;
    const char *output_dir, *lat_file, *trace_file;
    long iters, warmup, threads, seed, runtimes;
    int iters_given, warmup_given, seed_given, profile, memory, check_finite;
    const char *svg;
    frt_planner planner;
    frt_weights_precision weights;
    int fold, fuse;
    long inter_op; /* --inter-op: frt_options.inter_op_threads */
} cli;

static const char *weights_name(frt_weights_precision w) {
    return w == FRT_WEIGHTS_FP16 ? "fp16" : w == FRT_WEIGHTS_BF16 ? "bf16" : "fp32";
}

/* "fp32" | "fp16" | "bf16" -> *out; -1 (usage error printed) otherwise. */
static int parse_weights(const char *val, frt_weights_precision *out) {
    if (!strcmp(val, "fp32")) *out = FRT_WEIGHTS_FP32;
    else if (!strcmp(val, "fp16")) *out = FRT_WEIGHTS_FP16;
    else if (!strcmp(val, "bf16")) *out = FRT_WEIGHTS_BF16;
    else {
        usage_error("--weights expects fp32, fp16 or bf16, got '%s'", val);
        return -1;
    }
    return 0;
}

static void cli_free(cli *c) {
    for (int i = 0; i < c->n_inputs; i++) free(c->inputs[i].owned);
    for (int i = 0; i < c->n_shapes; i++) free(c->shapes[i].owned);
}

/* NAME=VALUE split at the first '='; allow_bare: "VALUE" alone gives name NULL. */
static int parse_kv(const char *arg, const char *opt, int allow_bare, kv *out) {
    const char *eq = strchr(arg, '=');
    memset(out, 0, sizeof *out);
    if (!eq) {
        if (allow_bare && *arg) {
            out->value = arg;
            return 0;
        }
        usage_error("%s expects NAME=VALUE, got '%s'", opt, arg);
        return -1;
    }
    if (eq == arg) {
        usage_error("%s expects NAME=VALUE, got '%s' (empty name)", opt, arg);
        return -1;
    }
    out->owned = strndup(arg, (size_t)(eq - arg));
    if (!out->owned) {
        fail("out of memory");
        return -1;
    }
    out->name = out->owned;
    out->value = eq + 1;
    return 0;
}

/* Parses argv[2..] for command cmd. Returns 0, or an exit code (help printed: -1 → exit 0). */
static int parse_cli(int argc, char **argv, int cmd, cli *c) {
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    c->iters = 1000;
    c->warmup = 100;
    c->threads = 1;
    c->inter_op = 1;
    c->planner = FRT_PLANNER_STANDARD;
    c->fold = c->fuse = 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        char optbuf[64];
        const char *val = NULL;
        /* --opt=value form */
        if (a[0] == '-' && a[1] == '-' && strchr(a, '=')) {
            size_t k = (size_t)(strchr(a, '=') - a);
            if (k >= sizeof optbuf) return usage_error("unknown option '%s'", a);
            memcpy(optbuf, a, k);
            optbuf[k] = 0;
            val = a + k + 1;
            a = optbuf;
        }
#define TAKES_VALUE()                                                                             \
    do {                                                                                          \
        if (!val) {                                                                               \
            if (i + 1 >= argc) return usage_error("%s needs a value", a);                         \
            val = argv[++i];                                                                      \
        }                                                                                         \
    } while (0)
#define NO_VALUE()                                                                                \
    do {                                                                                          \
        if (val) return usage_error("%s takes no value", a);                                      \
    } while (0)
        int is_run = cmd == CMD_RUN, is_bench = cmd == CMD_BENCH || cmd == CMD_PLAN;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        } else if (!strcmp(a, "--input") && (is_run || is_bench)) {
            TAKES_VALUE();
            if (c->n_inputs >= MAX_KV) return usage_error("too many --input options");
            if (parse_kv(val, a, 1, &c->inputs[c->n_inputs])) return EXIT_USAGE;
            c->n_inputs++;
        } else if (!strcmp(a, "--shape") && is_bench) {
            TAKES_VALUE();
            if (c->n_shapes >= MAX_KV) return usage_error("too many --shape options");
            if (parse_kv(val, a, 0, &c->shapes[c->n_shapes])) return EXIT_USAGE;
            c->n_shapes++;
        } else if (!strcmp(a, "--output-dir") && is_run) {
            TAKES_VALUE();
            if (!*val) return usage_error("--output-dir needs a directory");
            c->output_dir = val;
        } else if (!strcmp(a, "--iters") && is_bench) {
            TAKES_VALUE();
            if (parse_long(val, a, 1, 10000000, &c->iters)) return EXIT_USAGE;
            c->iters_given = 1;
        } else if (!strcmp(a, "--warmup") && is_bench) {
            TAKES_VALUE();
            if (parse_long(val, a, 0, 10000000, &c->warmup)) return EXIT_USAGE;
            c->warmup_given = 1;
        } else if (!strcmp(a, "--seed") && is_bench) {
            TAKES_VALUE();
            if (parse_long(val, a, 0, LONG_MAX, &c->seed)) return EXIT_USAGE;
            c->seed_given = 1;
        } else if (!strcmp(a, "--runtimes") && is_bench) {
            TAKES_VALUE();
            if (parse_long(val, a, 1, 256, &c->runtimes)) return EXIT_USAGE;
        } else if (!strcmp(a, "--lat-file") && is_bench) {
            TAKES_VALUE();
            c->lat_file = val;
        } else if (!strcmp(a, "--check-finite") && is_run) {
            NO_VALUE();
            c->check_finite = 1;
        } else if (!strcmp(a, "--memory") && cmd == CMD_INFO) {
            NO_VALUE();
            c->memory = 1;
        } else if (!strcmp(a, "--svg") && cmd == CMD_PLAN) {
            TAKES_VALUE();
            if (!*val) return usage_error("--svg needs a file name");
            c->svg = val;
        } else if (!strcmp(a, "--trace") && is_bench) {
            TAKES_VALUE();
            if (!*val) return usage_error("--trace needs a file name");
            c->trace_file = val;
        } else if (!strcmp(a, "--profile") && is_bench) {
            NO_VALUE();
            c->profile = 1;
        } else if (!strcmp(a, "--inter-op") && is_bench) {
            TAKES_VALUE();
            if (parse_long(val, a, 1, FRT_MAX_THREADS, &c->inter_op)) return EXIT_USAGE;
        } else if (!strcmp(a, "--threads")) {
            TAKES_VALUE();
            if (parse_long(val, a, 1, FRT_MAX_THREADS, &c->threads)) return EXIT_USAGE;
        } else if (!strcmp(a, "--planner")) {
            TAKES_VALUE();
            if (!strcmp(val, "standard")) c->planner = FRT_PLANNER_STANDARD;
            else if (!strcmp(val, "greedy")) c->planner = FRT_PLANNER_GREEDY;
            else if (!strcmp(val, "none")) c->planner = FRT_PLANNER_NONE;
            else return usage_error("--planner expects standard, greedy or none, got '%s'", val);
        } else if (!strcmp(a, "--weights")) {
            TAKES_VALUE();
            if (parse_weights(val, &c->weights)) return EXIT_USAGE;
        } else if (!strcmp(a, "--no-fold")) {
            NO_VALUE();
            c->fold = 0;
        } else if (!strcmp(a, "--no-fuse")) {
            NO_VALUE();
            c->fuse = 0;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option '%s' for '%s'", a, argv[1]);
        } else if (!c->model) {
            c->model = a;
        } else {
            return usage_error("unexpected argument '%s'", a);
        }
#undef TAKES_VALUE
#undef NO_VALUE
    }
    if (!c->model) return usage_error("'%s' needs a MODEL argument", argv[1]);
    if (cmd == CMD_PLAN && !c->svg) return usage_error("plan needs --svg FILE");
    return 0;
}

static frt_status load_model(const cli *c, frt_model **m, double *load_ms) {
    frt_options opt;
    frt_options_init(&opt);
    opt.num_threads = (int32_t)c->threads;
    opt.inter_op_threads = (int32_t)c->inter_op;
    opt.planner = c->planner;
    opt.fold_constants = c->fold;
    opt.fuse = c->fuse;
    opt.weights_precision = c->weights;
    double t0 = now_us();
    frt_status st = frt_model_load(c->model, &opt, m);
    if (load_ms) *load_ms = (now_us() - t0) / 1e3;
    return st;
}

/* ---------------------------------------------------------------------------------------------- */
/* Inputs                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

/* The model's inputs and the tensors bound to them (data malloc'd by tensor_io or here). */
typedef struct inputs {
    size_t n;
    frt_tensor_info *info;
    const char **names;
    frt_tensor *t;
    const char **source; /* file name, or NULL for random data */
} inputs;

static void inputs_free(inputs *in) {
    if (in->t)
        for (size_t i = 0; i < in->n; i++) tio_tensor_free(&in->t[i]);
    free(in->info);
    free(in->names);
    free(in->t);
    free(in->source);
    memset(in, 0, sizeof *in);
}

static int inputs_init(const frt_model *m, inputs *in) {
    memset(in, 0, sizeof *in);
    in->n = frt_model_num_inputs(m);
    size_t k = in->n ? in->n : 1;
    in->info = calloc(k, sizeof *in->info);
    in->names = calloc(k, sizeof *in->names);
    in->t = calloc(k, sizeof *in->t);
    in->source = calloc(k, sizeof *in->source);
    if (!in->info || !in->names || !in->t || !in->source) return fail("out of memory");
    for (size_t i = 0; i < in->n; i++) {
        if (frt_model_input(m, i, &in->info[i]) != FRT_OK) return fail_frt("reading model inputs");
        in->names[i] = in->info[i].name;
    }
    return 0;
}

static void list_inputs(const inputs *in, char *buf, size_t n) {
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; i < in->n && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s'%s'", i ? ", " : "", in->names[i]);
    if (!in->n) snprintf(buf, n, "(none)");
}

/* Index of the model input called name: exact match, else the unique input whose sanitized name
 * equals name (so file-name forms like "input_0" for "input:0" work). -1 when none, -2 when
 * ambiguous. */
static long find_input(const inputs *in, const char *name) {
    for (size_t i = 0; i < in->n; i++)
        if (!strcmp(in->names[i], name)) return (long)i;
    long found = -1;
    char s[1024];
    for (size_t i = 0; i < in->n; i++) {
        tio_sanitize_name(in->names[i], s, sizeof s);
        if (!strcmp(s, name)) {
            if (found >= 0) return -2;
            found = (long)i;
        }
    }
    return found;
}

/* Loads every --input file into in->t. */
static int load_input_files(const cli *c, inputs *in) {
    char list[1024], err[1024];
    list_inputs(in, list, sizeof list);
    for (int k = 0; k < c->n_inputs; k++) {
        const kv *a = &c->inputs[k];
        frt_tensor t;
        char *pbname = NULL;
        if (tio_load(a->value, &t, &pbname, err, sizeof err)) return fail("%s", err);
        const char *name = a->name;
        if (!name) { /* the proto's name if it is an input's, else the only input */
            if (pbname && pbname[0] && (find_input(in, pbname) >= 0 || in->n != 1)) name = pbname;
            else if (in->n == 1) name = in->names[0];
            else {
                free(pbname);
                tio_tensor_free(&t);
                return usage_error("--input %s: name the input (NAME=FILE); model inputs: %s",
                                   a->value, list);
            }
        }
        long i = find_input(in, name);
        if (i < 0) {
            int rc = fail("--input %s=%s: %s input '%s' (model inputs: %s)", name, a->value,
                          i == -2 ? "ambiguous" : "the model has no", name, list);
            free(pbname);
            tio_tensor_free(&t);
            return rc;
        }
        free(pbname);
        if (in->source[i]) {
            tio_tensor_free(&t);
            return fail("input '%s' given twice (%s and %s)", in->names[i], in->source[i],
                        a->value);
        }
        const frt_tensor_info *info = &in->info[i];
        if (t.dtype != info->dtype) {
            int rc = fail("input '%s' expects %s but %s holds %s", in->names[i],
                          frt_dtype_name(info->dtype), a->value, frt_dtype_name(t.dtype));
            tio_tensor_free(&t);
            return rc;
        }
        int bad_rank = info->rank >= 0 && t.rank != info->rank, bad_dim = -1;
        for (int d = 0; !bad_rank && info->rank >= 0 && d < t.rank; d++)
            if (info->shape[d] >= 0 && info->shape[d] != t.shape[d]) bad_dim = d;
        if (bad_rank || bad_dim >= 0) {
            char want[256], got[256];
            shape_str(want, sizeof want, info->rank, info->shape, info->dim_names);
            shape_str(got, sizeof got, t.rank, t.shape, NULL);
            tio_tensor_free(&t);
            return fail("input '%s' expects shape %s but %s holds %s", in->names[i], want,
                        a->value, got);
        }
        in->t[i] = t;
        in->source[i] = a->value;
    }
    return 0;
}

/* Random data generator shared with ortbench (splitmix64, same seed and draw order) so both
 * tools see identical random inputs. */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void) {
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double rng_unit(void) { return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0); }

static int fill_random(frt_tensor *t, const char *name) {
    int64_t numel = frt_tensor_numel(t);
    size_t es = frt_dtype_size(t->dtype);
    if (t->dtype == FRT_STRING || !es)
        return fail("cannot make random data of type %s for input '%s'; pass it with --input",
                    frt_dtype_name(t->dtype), name);
    if (numel < 0 || (uint64_t)numel > ((uint64_t)1 << 40) / es)
        return fail("input '%s': shape too large for random data", name);
    t->nbytes = (size_t)numel * es;
    t->data = malloc(t->nbytes ? t->nbytes : 1);
    if (!t->data) return fail("out of memory for input '%s' (%zu bytes)", name, t->nbytes);
    for (int64_t i = 0; i < numel; i++) {
        double u = rng_unit();
        int k = (int)(rng_next() % 10);
        float f = (float)(2.0 * u - 1.0);
        switch (t->dtype) {
        case FRT_FLOAT32: ((float *)t->data)[i] = f; break;
        case FRT_FLOAT64: ((double *)t->data)[i] = 2.0 * u - 1.0; break;
        case FRT_FLOAT16: ((uint16_t *)t->data)[i] = tio_float_to_half(f); break;
        case FRT_BFLOAT16: { /* truncated: f's upper half */
            uint32_t bits;
            memcpy(&bits, &f, 4);
            ((uint16_t *)t->data)[i] = (uint16_t)(bits >> 16);
            break;
        }
        case FRT_INT64: ((int64_t *)t->data)[i] = k; break;
        case FRT_UINT64: ((uint64_t *)t->data)[i] = (uint64_t)k; break;
        case FRT_INT32: ((int32_t *)t->data)[i] = k; break;
        case FRT_UINT32: ((uint32_t *)t->data)[i] = (uint32_t)k; break;
        case FRT_INT16: ((int16_t *)t->data)[i] = (int16_t)k; break;
        case FRT_UINT16: ((uint16_t *)t->data)[i] = (uint16_t)k; break;
        case FRT_INT8: ((int8_t *)t->data)[i] = (int8_t)k; break;
        case FRT_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)k; break;
        case FRT_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)(k & 1); break;
        default:
            return fail("cannot make random data of type %s for input '%s'",
                        frt_dtype_name(t->dtype), name);
        }
    }
    return 0;
}

/* Parses "d0,d1,..." (',' or 'x' separated; empty = scalar). */
static int parse_shape(const char *s, const char *name, frt_tensor *t) {
    t->rank = 0;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long long d = strtoll(p, &end, 10);
        if (end == p || errno || d < 0)
            return usage_error("bad --shape for '%s': '%s' (expected d0,d1,...)", name, s);
        if (t->rank >= FRT_MAX_RANK)
            return usage_error("--shape for '%s': rank above %d", name, FRT_MAX_RANK);
        t->shape[t->rank++] = d;
        p = end;
        if ((*p == ',' || *p == 'x') && p[1]) p++;
        else if (*p) return usage_error("bad --shape for '%s': '%s' (expected d0,d1,...)", name, s);
    }
    return 0;
}

/* Bench inputs: files where given, random data of the model's (or --shape's) shape otherwise. */
static int make_bench_inputs(const cli *c, inputs *in) {
    char list[1024];
    list_inputs(in, list, sizeof list);
    for (int k = 0; k < c->n_shapes; k++) {
        long i = find_input(in, c->shapes[k].name);
        if (i < 0)
            return fail("--shape %s: the model has no input '%s' (model inputs: %s)",
                        c->shapes[k].name, c->shapes[k].name, list);
    }
    int rc = load_input_files(c, in);
    if (rc) return rc;
    if (c->seed_given) g_rng = (uint64_t)c->seed * 0x2545F4914F6CDD1Dull + 1;
    for (size_t i = 0; i < in->n; i++) {
        const char *shp = NULL;
        for (int k = 0; k < c->n_shapes; k++)
            if (find_input(in, c->shapes[k].name) == (long)i) shp = c->shapes[k].value;
        if (in->source[i]) {
            if (shp) warn("--shape %s ignored: shape taken from %s", in->names[i], in->source[i]);
            continue;
        }
        const frt_tensor_info *info = &in->info[i];
        frt_tensor *t = &in->t[i];
        memset(t, 0, sizeof *t);
        t->dtype = info->dtype;
        if (shp) {
            if ((rc = parse_shape(shp, in->names[i], t))) return rc;
        } else {
            if (info->rank < 0)
                return fail("input '%s' has no known rank; give --shape %s=d0,d1,... or --input",
                            in->names[i], in->names[i]);
            t->rank = info->rank;
            for (int d = 0; d < info->rank; d++) t->shape[d] = info->shape[d] < 0 ? 1 : info->shape[d];
        }
        if ((rc = fill_random(t, in->names[i]))) return rc;
    }
    return 0;
}

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

/* ---------------------------------------------------------------------------------------------- */
/* run                                                                                             */
/* ---------------------------------------------------------------------------------------------- */

static int cmd_run(const cli *c) {
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    inputs in = {0};
    frt_tensor *outs = NULL;
    size_t n_out = 0;
    int rc = 0;

    if (load_model(c, &m, NULL) != FRT_OK) {
        rc = fail_frt(NULL);
        goto done;
    }
    if ((rc = inputs_init(m, &in))) goto done;
    if ((rc = load_input_files(c, &in))) goto done;
    {
        char missing[1024];
        size_t o = 0, n_missing = 0;
        missing[0] = 0;
        for (size_t i = 0; i < in.n; i++) {
            if (in.source[i]) continue;
            n_missing++;
            if (o < sizeof missing)
                o += (size_t)snprintf(missing + o, sizeof missing - o, "%s'%s'", o ? ", " : "",
                                      in.names[i]);
        }
        if (n_missing) {
            rc = fail("missing input%s %s: give each with --input NAME=FILE.npy",
                      n_missing > 1 ? "s" : "", missing);
            goto done;
        }
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
    return rc;
}

/* ---------------------------------------------------------------------------------------------- */
/* bench                                                                                           */
/* ---------------------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linearly interpolated percentile of sorted s[0..n) (numpy's default; same as ortbench). */
static double percentile(const double *s, size_t n, double q) {
    if (n == 0) return NAN;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double fr = pos - (double)lo;
    return s[lo] + (s[hi] - s[lo]) * fr;
}

typedef struct op_row {
    const char *op_type;
    double us;
    size_t count;
} op_row;

typedef struct node_row {
    frt_step_profile p;
    double us;
} node_row;

static int cmp_op_row(const void *a, const void *b) {
    double x = ((const op_row *)a)->us, y = ((const op_row *)b)->us;
    return (x < y) - (x > y);
}

static int cmp_node_row(const void *a, const void *b) {
    double x = ((const node_row *)a)->us, y = ((const node_row *)b)->us;
    return (x < y) - (x > y);
}

static const char *nz(const char *s) { return s && *s ? s : "-"; }

static void print_plan_stats(const frt_plan_stats *ps) {
    char a[32], nv[32], lb[32], ob[32], sb[32];
    bytes_str(a, sizeof a, (double)ps->arena_bytes);
    bytes_str(nv, sizeof nv, (double)ps->naive_bytes);
    bytes_str(lb, sizeof lb, (double)ps->lower_bound_bytes);
    bytes_str(ob, sizeof ob, (double)ps->output_bytes);
    bytes_str(sb, sizeof sb, (double)ps->shape_bytes);
    printf("  arena         %12zu bytes (%s)\n", ps->arena_bytes, a);
    printf("  naive         %12zu bytes (%s)", ps->naive_bytes, nv);
    if (ps->arena_bytes) printf("  naive/arena %.2fx", (double)ps->naive_bytes / (double)ps->arena_bytes);
    printf("\n  lower bound   %12zu bytes (%s)", ps->lower_bound_bytes, lb);
    if (ps->lower_bound_bytes)
        printf("  arena/lower bound %.3fx", (double)ps->arena_bytes / (double)ps->lower_bound_bytes);
    printf("\n  managed %zu tensors, reused %zu, in place %zu, concats removed %zu, views %zu\n",
           ps->num_managed, ps->num_reused, ps->num_inplace, ps->num_concat_removed, ps->num_views);
    printf("  outputs %zu bytes (%s), shape values %zu bytes (%s)\n", ps->output_bytes, ob,
           ps->shape_bytes, sb);
}

static void print_profile(const frt_runtime *rt, double mean_us) {
    size_t n = frt_runtime_num_steps(rt);
    node_row *nodes = calloc(n ? n : 1, sizeof *nodes);
    op_row *ops = calloc(n ? n : 1, sizeof *ops);
    if (!nodes || !ops) {
        warn("out of memory for the profile");
        free(nodes);
        free(ops);
        return;
    }
    size_t n_ops = 0;
    double total = 0;
    uint64_t runs = 0;
    for (size_t i = 0; i < n; i++) {
        frt_runtime_step_profile(rt, i, &nodes[i].p);
        nodes[i].us = nodes[i].p.runs ? (double)nodes[i].p.total_ns / 1e3 / (double)nodes[i].p.runs : 0;
        if (nodes[i].p.runs > runs) runs = nodes[i].p.runs;
        total += nodes[i].us;
        const char *ot = nodes[i].p.op_type ? nodes[i].p.op_type : "?";
        size_t k = 0;
        while (k < n_ops && strcmp(ops[k].op_type, ot) != 0) k++;
        if (k == n_ops) ops[n_ops++].op_type = ot;
        ops[k].us += nodes[i].us;
        ops[k].count++;
    }
    qsort(ops, n_ops, sizeof *ops, cmp_op_row);
    printf("\nprofile: %zu steps, %llu profiled runs; sum of steps %.3f us/run, mean latency "
           "%.3f us (%.3f us, %.1f%%, outside steps: input checks, planning, output copies)\n",
           n, (unsigned long long)runs, total, mean_us, mean_us - total,
           mean_us > 0 ? 100.0 * (mean_us - total) / mean_us : 0.0);
    printf("\ntime per op type:\n");
    printf("  %-28s %12s %7s %6s\n", "op type", "us/run", "%", "nodes");
    for (size_t k = 0; k < n_ops; k++)
        printf("  %-28s %12.3f %6.1f%% %6zu\n", ops[k].op_type, ops[k].us,
               total > 0 ? 100.0 * ops[k].us / total : 0.0, ops[k].count);
    qsort(nodes, n, sizeof *nodes, cmp_node_row);
    size_t top = n < 30 ? n : 30;
    printf("\ntop %zu nodes by time:\n", top);
    printf("  %-36s %-20s %-28s %10s %7s\n", "node", "op type", "kernel", "us/run", "%");
    for (size_t i = 0; i < top; i++)
        printf("  %-36s %-20s %-28s %10.3f %6.1f%%\n", nz(nodes[i].p.node_name),
               nz(nodes[i].p.op_type), nz(nodes[i].p.kernel), nodes[i].us,
               total > 0 ? 100.0 * nodes[i].us / total : 0.0);
    free(nodes);
    free(ops);
}

/* "name:dtype:1x10;..." with characters that would break key=value parsing replaced. */
static void outputs_desc(const frt_model *m, const frt_tensor *outs, size_t n, char *buf,
                         size_t len) {
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n && o < len; i++) {
        frt_tensor_info info;
        const char *name = frt_model_output(m, i, &info) == FRT_OK && info.name ? info.name : "?";
        size_t start = o;
        o += (size_t)snprintf(buf + o, len - o, "%s%s:%s:", i ? ";" : "", name,
                              frt_dtype_name(outs[i].dtype));
        for (int d = 0; d < outs[i].rank && o < len; d++)
            o += (size_t)snprintf(buf + o, len - o, "%s%lld", d ? "x" : "",
                                  (long long)outs[i].shape[d]);
        if (outs[i].rank == 0 && o < len) o += (size_t)snprintf(buf + o, len - o, "scalar");
        for (size_t j = start; j < o && j < len; j++)
            if (buf[j] == ' ' || buf[j] == '=' || buf[j] == '\t' || buf[j] == '\n') buf[j] = '_';
    }
    if (o >= len && len) buf[len - 1] = 0;
}

/* Start line of the --runtimes measurement: threads wait until go is 1 (start) or -1 (abort). */
typedef struct tput_gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready, go;
} tput_gate;

/* One thread of the --runtimes measurement: warm-up runs, then (once every thread is ready and
 * the gate opens) iters timed runs on its own runtime. */
typedef struct tput_thread {
    frt_runtime *rt;
    const inputs *in;
    frt_tensor *outs;
    size_t n_out;
    long warmup, iters;
    tput_gate *gate;
    frt_status st;
    char err[512];
} tput_thread;

static void *tput_main(void *arg) {
    tput_thread *t = arg;
    for (long r = 0; r < t->warmup && !t->st; r++)
        t->st = frt_run(t->rt, t->in->names, t->in->t, t->in->n, t->outs, t->n_out,
                        FRT_OUTPUTS_BORROW);
    if (t->st) snprintf(t->err, sizeof t->err, "%s", frt_last_error());
    pthread_mutex_lock(&t->gate->mu);
    t->gate->ready++;
    pthread_cond_broadcast(&t->gate->cv);
    while (!t->gate->go) pthread_cond_wait(&t->gate->cv, &t->gate->mu);
    int go = t->gate->go;
    pthread_mutex_unlock(&t->gate->mu);
    for (long r = 0; go > 0 && r < t->iters && !t->st; r++) {
        t->st = frt_run(t->rt, t->in->names, t->in->t, t->in->n, t->outs, t->n_out,
                        FRT_OUTPUTS_BORROW);
        if (t->st) snprintf(t->err, sizeof t->err, "%s", frt_last_error());
    }
    return NULL;
}

/* Runs R clones of rt on R threads at once, iters runs each; returns the aggregate runs per
 * second, or a negative value after printing an error. */
static double bench_runtimes(const frt_runtime *rt, const inputs *in, size_t n_out, long R,
                             long warmup, long iters) {
    size_t per = n_out ? n_out : 1;
    tput_thread *t = calloc((size_t)R, sizeof *t);
    pthread_t *th = calloc((size_t)R, sizeof *th);
    frt_tensor *outs = calloc((size_t)R * per, sizeof *outs);
    tput_gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    double result = -1;
    long made = 0, started = 0;
    if (!t || !th || !outs) {
        fail("out of memory");
        goto out;
    }
    for (; made < R; made++) {
        frt_runtime *clone;
        if (frt_runtime_clone(rt, &clone) != FRT_OK) {
            fail_frt("runtime clone");
            goto out;
        }
        t[made] = (tput_thread){clone, in, outs + (size_t)made * per, n_out,
                                warmup < 10 ? warmup : 10, iters, &gate, FRT_OK, ""};
    }
    for (; started < R; started++)
        if (pthread_create(&th[started], NULL, tput_main, &t[started]) != 0) break;
    pthread_mutex_lock(&gate.mu);
    while (started == R && gate.ready < R) pthread_cond_wait(&gate.cv, &gate.mu);
    gate.go = started == R ? 1 : -1;
    double a = now_us();
    pthread_cond_broadcast(&gate.cv);
    pthread_mutex_unlock(&gate.mu);
    for (long i = 0; i < started; i++) pthread_join(th[i], NULL);
    double b = now_us();
    if (started < R) {
        fail("cannot start thread %ld of %ld", started + 1, R);
        goto out;
    }
    for (long i = 0; i < R; i++)
        if (t[i].st) {
            fail("runtime %ld of %ld: %s", i + 1, R, t[i].err);
            goto out;
        }
    result = (double)R * (double)iters / ((b - a) * 1e-6);
out:
    for (long i = 0; t && i < made; i++) frt_runtime_free(t[i].rt);
    free(t);
    free(th);
    free(outs);
    return result;
}

static int cmd_bench(const cli *c) {
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    inputs in = {0};
    frt_tensor *outs = NULL;
    double *lat = NULL;
    int rc = 0;
    long rss_before_load = proc_status_kib("VmRSS");
    double load_ms;

    if (load_model(c, &m, &load_ms) != FRT_OK) {
        rc = fail_frt(NULL);
        goto done;
    }
    if ((rc = inputs_init(m, &in))) goto done;
    if ((rc = make_bench_inputs(c, &in))) goto done;
    if (frt_runtime_create(m, &rt) != FRT_OK) {
        rc = fail_frt(NULL);
        goto done;
    }
    size_t n_out = frt_model_num_outputs(m);
    outs = calloc(n_out ? n_out : 1, sizeof *outs);
    if (!outs) {
        rc = fail("out of memory");
        goto done;
    }
    printf("model: %s (loaded in %.3f ms)\n", c->model, load_ms);
    for (size_t i = 0; i < in.n; i++) {
        char shp[256];
        shape_str(shp, sizeof shp, in.t[i].rank, in.t[i].shape, NULL);
        printf("input '%s': %s %s from %s\n", in.names[i], frt_dtype_name(in.t[i].dtype), shp,
               in.source[i] ? in.source[i] : "random data");
    }

    /* Warm-up. The first run also plans; its time decides the default iteration counts. */
    long iters = c->iters, warmup = c->warmup, done_warmup = 0;
    if (!c->iters_given || !c->warmup_given) {
        double t0 = now_us();
        if (frt_run(rt, in.names, in.t, in.n, outs, n_out, FRT_OUTPUTS_BORROW) != FRT_OK) {
            rc = fail_frt(NULL);
            goto done;
        }
        double first_ms = (now_us() - t0) / 1e3;
        done_warmup = 1;
        if (first_ms > 10.0) {
            if (!c->iters_given) iters = 50;
            if (!c->warmup_given) warmup = 5;
        }
        printf("first run %.3f ms\n", first_ms);
    }
    for (long r = done_warmup; r < warmup; r++) {
        if (frt_run(rt, in.names, in.t, in.n, outs, n_out, FRT_OUTPUTS_BORROW) != FRT_OK) {
            rc = fail_frt(NULL);
            goto done;
        }
    }
    if (c->profile) {
        frt_runtime_reset_profile(rt);
        frt_runtime_set_profiling(rt, 1);
    }
    lat = malloc((size_t)iters * sizeof *lat);
    if (!lat) {
        rc = fail("out of memory");
        goto done;
    }
    for (long r = 0; r < iters; r++) {
        double a = now_us();
        frt_status st = frt_run(rt, in.names, in.t, in.n, outs, n_out, FRT_OUTPUTS_BORROW);
        double b = now_us();
        if (st != FRT_OK) {
            rc = fail_frt(NULL);
            goto done;
        }
        lat[r] = b - a;
    }
    if (c->profile) frt_runtime_set_profiling(rt, 0);

    if (c->trace_file) {
        /* further runs, traced: room for every step of block 0 and plenty for subgraph steps */
        long n_tr = iters < 10 ? iters : 10;
        size_t cap = (frt_runtime_num_steps(rt) + 16) * (size_t)n_tr * 8;
        uint64_t dropped = 0;
        if (frt_runtime_set_trace(rt, cap) != FRT_OK) {
            rc = fail_frt("trace");
            goto done;
        }
        for (long r = 0; r < n_tr; r++) {
            if (frt_run(rt, in.names, in.t, in.n, outs, n_out, FRT_OUTPUTS_BORROW) != FRT_OK) {
                rc = fail_frt(NULL);
                goto done;
            }
        }
        size_t n_ev = frt_runtime_trace_size(rt, &dropped);
        if (frt_runtime_write_trace(rt, c->trace_file) != FRT_OK) {
            rc = fail_frt(NULL);
            goto done;
        }
        printf("trace: %zu events of %ld runs written to %s", n_ev, n_tr, c->trace_file);
        if (dropped) printf(" (%llu steps did not fit)", (unsigned long long)dropped);
        printf("\n");
        frt_runtime_set_trace(rt, 0);
    }
    if (c->lat_file) {
        FILE *lf = fopen(c->lat_file, "w");
        if (!lf) {
            rc = fail("cannot write %s: %s", c->lat_file, strerror(errno));
            goto done;
        }
        for (long r = 0; r < iters; r++) fprintf(lf, "%.3f\n", lat[r]);
        if (fclose(lf) != 0) {
            rc = fail("cannot write %s: %s", c->lat_file, strerror(errno));
            goto done;
        }
    }
    double mean = 0, sd = 0;
    for (long r = 0; r < iters; r++) mean += lat[r];
    mean /= (double)iters;
    for (long r = 0; r < iters; r++) sd += (lat[r] - mean) * (lat[r] - mean);
    sd = iters > 1 ? sqrt(sd / (double)(iters - 1)) : 0;
    qsort(lat, (size_t)iters, sizeof *lat, cmp_double);
    double mn = lat[0], mx = lat[iters - 1];
    double p10 = percentile(lat, (size_t)iters, 0.10), p50 = percentile(lat, (size_t)iters, 0.50);
    double p90 = percentile(lat, (size_t)iters, 0.90), p99 = percentile(lat, (size_t)iters, 0.99);
    printf("latency over %ld runs (after %ld warm-up): mean %.3f us, p50 %.3f us, p90 %.3f us, "
           "min %.3f us%s\n",
           iters, warmup, mean, p50, p90, mn, c->profile ? " (with profiling timers)" : "");

    frt_plan_stats ps;
    memset(&ps, 0, sizeof ps);
    if (frt_runtime_plan_stats(rt, &ps) != FRT_OK) {
        rc = fail_frt("plan statistics");
        goto done;
    }
    if (c->profile) {
        print_profile(rt, mean);
        printf("\nmemory plan:\n");
        print_plan_stats(&ps);
    }

    double tput = mean > 0 ? 1e6 / mean : 0;
    long runtimes = c->runtimes > 0 ? c->runtimes : 1;
    if (c->runtimes > 0) {
        printf("throughput: %ld runtimes on %ld threads, %ld runs each ...\n", runtimes, runtimes,
               iters);
        fflush(stdout);
        double one = tput;
        tput = bench_runtimes(rt, &in, n_out, runtimes, warmup, iters);
        if (tput < 0) {
            rc = 1;
            goto done;
        }
        printf("throughput: %.1f runs/s, %.2fx one runtime's 1/mean (%.1f runs/s)\n", tput,
               one > 0 ? tput / one : 0.0, one);
    }

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char od[4096];
    outputs_desc(m, outs, n_out, od, sizeof od);
    printf("flatrt_version=%s load_ms=%.3f threads=%ld planner=%s weights=%s warmup=%ld iters=%ld "
           "mean_us=%.3f p10_us=%.3f p50_us=%.3f p90_us=%.3f p99_us=%.3f min_us=%.3f max_us=%.3f "
           "std_us=%.3f peak_rss_kib=%ld rss_before_load_kib=%ld arena_bytes=%zu naive_bytes=%zu "
           "lower_bound_bytes=%zu runtimes=%ld throughput_per_s=%.1f inter_op=%ld outputs=%s\n",
           FRT_VERSION_STRING, load_ms, c->threads,
           planner_name(c->planner), weights_name(c->weights), warmup, iters, mean, p10, p50,
           p90, p99, mn, mx, sd, (long)ru.ru_maxrss, rss_before_load, ps.arena_bytes,
           ps.naive_bytes, ps.lower_bound_bytes, runtimes, tput, c->inter_op, od[0] ? od : "none");
    fflush(stdout);
done:
    free(lat);
    free(outs); /* borrowed outputs: nothing to release */
    inputs_free(&in);
    frt_runtime_free(rt);
    frt_model_free(m);
    return rc;
}

/* ---------------------------------------------------------------------------------------------- */
/* info                                                                                            */
/* ---------------------------------------------------------------------------------------------- */

typedef struct op_count {
    const char *op;
    size_t count;
} op_count;

static int cmp_op_count(const void *a, const void *b) {
    const op_count *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return strcmp(x->op, y->op);
}

static void print_info_tensor(const frt_tensor_info *info) {
    char shp[512];
    if (info->kind != FRT_KIND_TENSOR) { /* run with frt_run_values: `check` feeds such cases */
        snprintf(shp, sizeof shp, "%s", info->kind == FRT_KIND_SEQUENCE ? "sequence"
                                        : info->elem_kind == FRT_KIND_SEQUENCE
                                            ? "optional sequence"
                                            : "optional tensor");
        printf("  %-24s %-8s %s\n", info->name ? info->name : "?", frt_dtype_name(info->dtype), shp);
        return;
    }
    shape_str(shp, sizeof shp, info->rank, info->shape, info->dim_names);
    printf("  %-24s %-8s %s\n", info->name ? info->name : "?", frt_dtype_name(info->dtype), shp);
}

/* info --memory: one row per planner for the same input shapes. */
static int print_memory_table(const cli *c, const inputs *in) {
    static const frt_planner planners[] = {FRT_PLANNER_STANDARD, FRT_PLANNER_GREEDY, FRT_PLANNER_NONE};
    printf("\nplanners compared (same shapes):\n");
    printf("  %-9s %14s %14s %14s %11s %11s %8s %7s %9s %8s\n", "planner", "slab_bytes",
           "lower_bound", "naive", "slab/lower", "naive/slab", "managed", "reused", "in_place",
           "concats");
    for (size_t k = 0; k < sizeof planners / sizeof planners[0]; k++) {
        cli cc = *c;
        cc.planner = planners[k];
        frt_model *m = NULL;
        frt_runtime *rt = NULL;
        double ms;
        frt_plan_stats ps;
        if (load_model(&cc, &m, &ms) != FRT_OK || frt_runtime_create(m, &rt) != FRT_OK ||
            frt_runtime_reshape(rt, in->names, in->t, in->n) != FRT_OK ||
            frt_runtime_plan_stats(rt, &ps) != FRT_OK) {
            int rc = fail_frt(planner_name(planners[k]));
            frt_runtime_free(rt);
            frt_model_free(m);
            return rc;
        }
        printf("  %-9s %14zu %14zu %14zu %11.3f %11.2f %8zu %7zu %9zu %8zu\n",
               planner_name(planners[k]), ps.arena_bytes, ps.lower_bound_bytes, ps.naive_bytes,
               ps.lower_bound_bytes ? (double)ps.arena_bytes / (double)ps.lower_bound_bytes : 0.0,
               ps.arena_bytes ? (double)ps.naive_bytes / (double)ps.arena_bytes : 0.0,
               ps.num_managed, ps.num_reused, ps.num_inplace, ps.num_concat_removed);
        frt_runtime_free(rt);
        frt_model_free(m);
    }
    return 0;
}

/* plan --svg: draw the plan for the bench-style inputs. */
static int cmd_plan(const cli *c) {
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    inputs in = {0};
    int rc = 0;
    double load_ms;
    if (load_model(c, &m, &load_ms) != FRT_OK) {
        rc = fail_frt(NULL);
        goto done;
    }
    if ((rc = inputs_init(m, &in)) || (rc = make_bench_inputs(c, &in))) goto done;
    if (frt_runtime_create(m, &rt) != FRT_OK || frt_runtime_reshape(rt, in.names, in.t, in.n) != FRT_OK) {
        rc = fail_frt("planning");
        goto done;
    }
    FILE *f = fopen(c->svg, "w");
    if (!f) {
        rc = fail("cannot write '%s': %s", c->svg, strerror(errno));
        goto done;
    }
    char title[512];
    snprintf(title, sizeof title, "%s: memory plan (%s planner)", c->model, planner_name(c->planner));
    int wr = plan_svg_write(f, rt, title);
    if (fclose(f) != 0 || wr != 0) {
        rc = fail("error writing '%s'", c->svg);
        goto done;
    }
    frt_plan_stats ps;
    frt_runtime_plan_stats(rt, &ps);
    printf("wrote %s: %zu tensors, slab %zu bytes, lower bound %zu bytes\n", c->svg,
           frt_runtime_plan_size(rt), ps.arena_bytes, ps.lower_bound_bytes);
done:
    inputs_free(&in);
    frt_runtime_free(rt);
    frt_model_free(m);
    return rc;
}

static int cmd_info(const cli *c) {
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    inputs in = {0};
    op_count *ops = NULL;
    int rc = 0;
    double load_ms;
    if (load_model(c, &m, &load_ms) != FRT_OK) {
        rc = fail_frt(NULL);
        goto done;
    }
    frt_model_stats st;
    memset(&st, 0, sizeof st);
    frt_model_get_stats(m, &st);
    printf("model:     %s\n", c->model);
    printf("producer:  %s\n", st.producer && st.producer[0] ? st.producer : "(unknown)");
    printf("opset:     %lld\n", (long long)st.opset);
    printf("load time: %.3f ms\n", load_ms);
    if ((rc = inputs_init(m, &in))) goto done;
    printf("inputs (%zu):\n", in.n);
    for (size_t i = 0; i < in.n; i++) print_info_tensor(&in.info[i]);
    size_t n_out = frt_model_num_outputs(m);
    printf("outputs (%zu):\n", n_out);
    for (size_t i = 0; i < n_out; i++) {
        frt_tensor_info info;
        if (frt_model_output(m, i, &info) != FRT_OK) {
            rc = fail_frt("reading model outputs");
            goto done;
        }
        print_info_tensor(&info);
    }
    size_t n_types = frt_model_num_op_types(m);
    ops = calloc(n_types ? n_types : 1, sizeof *ops);
    if (!ops) {
        rc = fail("out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_types; i++) {
        frt_model_op_type(m, i, &ops[i].op, &ops[i].count);
        if (!ops[i].op) ops[i].op = "?";
    }
    qsort(ops, n_types, sizeof *ops, cmp_op_count);
    printf("op types (%zu):\n", n_types);
    for (size_t i = 0; i < n_types; i++) printf("  %-24s %zu\n", ops[i].op, ops[i].count);
    printf("graph:     %zu nodes -> %zu steps (%zu folded at load, %zu fused)\n", st.num_nodes,
           st.num_steps, st.num_folded, st.num_fused);
    char pb[32], mb[32], cb[32], tb[32];
    bytes_str(pb, sizeof pb, (double)st.param_bytes);
    bytes_str(mb, sizeof mb, (double)st.mapped_bytes);
    bytes_str(cb, sizeof cb, (double)st.copied_bytes);
    bytes_str(tb, sizeof tb, (double)st.transformed_bytes);
    printf("parameters: %zu elements, %zu bytes (%s)\n", st.num_params, st.param_bytes, pb);
    printf("  mapped in place %zu bytes (%s), copied %zu bytes (%s), transformed %zu bytes (%s)\n",
           st.mapped_bytes, mb, st.copied_bytes, cb, st.transformed_bytes, tb);

    /* memory plan with every symbolic dim = 1 */
    int symbolic = 0, unknown_rank = 0;
    for (size_t i = 0; i < in.n; i++) {
        const frt_tensor_info *info = &in.info[i];
        frt_tensor *t = &in.t[i];
        if (info->rank < 0) {
            unknown_rank = 1;
            continue;
        }
        t->dtype = info->dtype;
        t->rank = info->rank;
        for (int d = 0; d < info->rank; d++) {
            if (info->shape[d] < 0) symbolic = 1;
            t->shape[d] = info->shape[d] < 0 ? 1 : info->shape[d];
        }
        int64_t numel = frt_tensor_numel(t);
        size_t es = frt_dtype_size(t->dtype);
        if (numel < 0 || !es || (uint64_t)numel > ((uint64_t)1 << 36) / es) {
            unknown_rank = 1; /* cannot make a placeholder; skip the plan */
            continue;
        }
        t->nbytes = (size_t)numel * es;
        t->data = calloc(t->nbytes ? t->nbytes : 1, 1);
        if (!t->data) {
            rc = fail("out of memory");
            goto done;
        }
    }
    if (unknown_rank) {
        printf("memory plan: not computed (an input has unknown rank, string type or huge shape)\n");
        goto done;
    }
    frt_plan_stats ps;
    if (frt_runtime_create(m, &rt) != FRT_OK ||
        frt_runtime_reshape(rt, in.names, in.t, in.n) != FRT_OK ||
        frt_runtime_plan_stats(rt, &ps) != FRT_OK) {
        /* The model loaded; a planning failure (e.g. shapes that depend on input values) is
         * reported but is not fatal for info. */
        printf("memory plan: not computed: %s\n", frt_last_error());
        goto done;
    }
    printf("memory plan%s, planner %s:\n", symbolic ? " (symbolic dims = 1)" : "",
           planner_name(c->planner));
    print_plan_stats(&ps);
    if (c->memory) rc = print_memory_table(c, &in);
done:
    free(ops);
    inputs_free(&in);
    frt_runtime_free(rt);
    frt_model_free(m);
    return rc;
}

/* `flatrt info --ops`: the registry, one line per op and opset range. */
static int cmd_ops(void) {
    size_t n = frt_num_ops();
    printf("%-28s %-26s %-9s %-16s %s\n", "op", "domain", "opsets", "family", "data-shape");
    for (size_t i = 0; i < n; i++) {
        frt_op_info o;
        if (frt_op_info_get(i, &o) != FRT_OK) return fail_frt("info --ops");
        char range[32];
        snprintf(range, sizeof range, "%d..%d", o.since_opset, o.max_opset);
        printf("%-28s %-26s %-9s %-16s %s\n", o.op_type, o.domain[0] ? o.domain : "ai.onnx",
               range, o.family, o.data_shape ? "*" : "");
    }
    printf("%zu entries\n", n);
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        if (argc > 3 || (argc == 3 && strcmp(argv[2], "run") && strcmp(argv[2], "bench") &&
                         strcmp(argv[2], "info") && strcmp(argv[2], "plan")))
            return usage_error("help takes an optional command name (run, bench, info or plan)");
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version")) {
        if (argc > 2) return usage_error("%s takes no arguments", cmd);
        printf("flatrt %s\n", FRT_VERSION_STRING);
        return 0;
    }
    if (!strcmp(cmd, "check")) {
        long threads = 1;
        frt_weights_precision weights = FRT_WEIGHTS_FP32;
        int first = 2;
        for (; first < argc && argv[first][0] == '-'; first++) {
            const char *a = argv[first];
            if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
                usage(stdout);
                return 0;
            } else if (!strcmp(a, "--threads") && first + 1 < argc) {
                if (parse_long(argv[++first], a, 1, FRT_MAX_THREADS, &threads)) return EXIT_USAGE;
            } else if (!strncmp(a, "--threads=", 10)) {
                if (parse_long(a + 10, "--threads", 1, FRT_MAX_THREADS, &threads)) return EXIT_USAGE;
            } else if (!strcmp(a, "--weights") && first + 1 < argc) {
                if (parse_weights(argv[++first], &weights)) return EXIT_USAGE;
            } else if (!strncmp(a, "--weights=", 10)) {
                if (parse_weights(a + 10, &weights)) return EXIT_USAGE;
            } else {
                return usage_error("unknown option '%s' for 'check'", a);
            }
        }
        if (first >= argc) return usage_error("'check' needs at least one CASE_DIR");
        return flatrt_check_main(argc - first, argv + first, (int)threads, (int)weights);
    }
    if (!strcmp(cmd, "info") && argc >= 3 && !strcmp(argv[2], "--ops")) {
        if (argc > 3) return usage_error("'info --ops' takes no other arguments");
        return cmd_ops();
    }
    int which;
    if (!strcmp(cmd, "run")) which = CMD_RUN;
    else if (!strcmp(cmd, "bench")) which = CMD_BENCH;
    else if (!strcmp(cmd, "info")) which = CMD_INFO;
    else if (!strcmp(cmd, "plan")) which = CMD_PLAN;
    else if (cmd[0] == '-') return usage_error("unknown option '%s'", cmd);
    else return usage_error("unknown command '%s'", cmd);

    cli c;
    int rc = parse_cli(argc, argv, which, &c);
    if (rc == 0) {
        if (which == CMD_RUN) rc = cmd_run(&c);
        else if (which == CMD_BENCH) rc = cmd_bench(&c);
        else if (which == CMD_PLAN) rc = cmd_plan(&c);
        else rc = cmd_info(&c);
    } else if (rc < 0) {
        rc = 0; /* --help */
    }
    cli_free(&c);
    return rc;
}
