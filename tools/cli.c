/* Shared parts of the flatrt tool: option parsing (getopt_long over each command's option table),
 * per-command usage, messages, helpers and input binding (files, directories, random data). */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tensor_io.h"

/* ---------------------------------------------------------------------------------------------- */
/* Messages                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

const char *cli_current_command = NULL;

int fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    fputs("flatrt: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

int usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("flatrt: ", stderr);
    vfprintf(stderr, fmt, ap);
    if (cli_current_command)
        fprintf(stderr, "\nTry 'flatrt %s --help'.\n", cli_current_command);
    else
        fputs("\nTry 'flatrt --help'.\n", stderr);
    va_end(ap);
    return EXIT_USAGE;
}

int fail_frt(const char *context) {
    const char *msg = frt_last_error();
    if (!msg || !*msg) msg = "unknown error";
    if (context) return fail("%s: %s", context, msg);
    return fail("%s", msg);
}

void warn(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    fputs("flatrt: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---------------------------------------------------------------------------------------------- */
/* Helpers                                                                                         */
/* ---------------------------------------------------------------------------------------------- */

double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

double cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

long proc_status_kib(const char *key) {
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
void shape_str(char *buf, size_t n, int32_t rank, const int64_t *shape,
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

void bytes_str(char *buf, size_t n, double b) {
    if (b < 1024) snprintf(buf, n, "%.0f B", b);
    else if (b < 1024.0 * 1024) snprintf(buf, n, "%.1f KiB", b / 1024);
    else if (b < 1024.0 * 1024 * 1024) snprintf(buf, n, "%.2f MiB", b / (1024.0 * 1024));
    else snprintf(buf, n, "%.2f GiB", b / (1024.0 * 1024 * 1024));
}

int parse_long(const char *s, const char *opt, long min, long max, long *out) {
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

int parse_weights(const char *val, frt_weights_precision *out) {
    if (!strcmp(val, "fp32")) *out = FRT_WEIGHTS_FP32;
    else if (!strcmp(val, "fp16")) *out = FRT_WEIGHTS_FP16;
    else if (!strcmp(val, "bf16")) *out = FRT_WEIGHTS_BF16;
    else {
        usage_error("--weights expects fp32, fp16 or bf16, got '%s'", val);
        return -1;
    }
    return 0;
}

int mkdir_p(const char *path) {
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

const char *planner_name(frt_planner p) {
    return p == FRT_PLANNER_NONE ? "none" : p == FRT_PLANNER_GREEDY ? "greedy" : "standard";
}

const char *weights_name(frt_weights_precision w) {
    return w == FRT_WEIGHTS_FP16 ? "fp16" : w == FRT_WEIGHTS_BF16 ? "bf16" : "fp32";
}

frt_status load_model(const cli *c, frt_model **m, double *load_ms) {
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

void print_plan_stats(FILE *f, const frt_plan_stats *ps) {
    char a[32], nv[32], lb[32], ob[32], sb[32];
    bytes_str(a, sizeof a, (double)ps->arena_bytes);
    bytes_str(nv, sizeof nv, (double)ps->naive_bytes);
    bytes_str(lb, sizeof lb, (double)ps->lower_bound_bytes);
    bytes_str(ob, sizeof ob, (double)ps->output_bytes);
    bytes_str(sb, sizeof sb, (double)ps->shape_bytes);
    fprintf(f, "  arena         %12zu bytes (%s)\n", ps->arena_bytes, a);
    fprintf(f, "  naive         %12zu bytes (%s)", ps->naive_bytes, nv);
    if (ps->arena_bytes) fprintf(f, "  naive/arena %.2fx", (double)ps->naive_bytes / (double)ps->arena_bytes);
    fprintf(f, "\n  lower bound   %12zu bytes (%s)", ps->lower_bound_bytes, lb);
    if (ps->lower_bound_bytes)
        fprintf(f, "  arena/lower bound %.3fx", (double)ps->arena_bytes / (double)ps->lower_bound_bytes);
    fprintf(f, "\n  managed %zu tensors, reused %zu, in place %zu, concats removed %zu, views %zu\n",
           ps->num_managed, ps->num_reused, ps->num_inplace, ps->num_concat_removed, ps->num_views);
    fprintf(f, "  outputs %zu bytes (%s), shape values %zu bytes (%s)\n", ps->output_bytes, ob,
           ps->shape_bytes, sb);
}


void json_str(FILE *f, const char *s) {
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* ---------------------------------------------------------------------------------------------- */
/* Command line                                                                                    */
/* ---------------------------------------------------------------------------------------------- */

const cli_command *cli_find_command(const char *name) {
    for (size_t i = 0; i < cli_num_commands; i++)
        if (!strcmp(cli_commands[i].name, name)) return &cli_commands[i];
    return NULL;
}

void cli_print_opt(FILE *f, const cli_opt *o) {
    char left[64];
    if (o->id == OPT_HELP) snprintf(left, sizeof left, "-h, --help");
    else if (o->id >= 'a' && o->id <= 'z')
        snprintf(left, sizeof left, "-%c, --%s%s%s", o->id, o->name, o->arg ? " " : "",
                 o->arg ? o->arg : "");
    else snprintf(left, sizeof left, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    /* descriptions wrap at 100 columns, continuation lines indented under the first */
    const char *h = o->help;
    int first = 1;
    while (*h || first) {
        size_t len = strlen(h), room = 100 - 26;
        if (len > room) {
            size_t cut = room;
            while (cut > 0 && h[cut] != ' ') cut--;
            len = cut ? cut : room;
        }
        if (first && strlen(left) > 22) fprintf(f, "  %s\n  %-22s  %.*s\n", left, "", (int)len, h);
        else fprintf(f, "  %-22s  %.*s\n", first ? left : "", (int)len, h);
        h += len;
        while (*h == ' ') h++;
        first = 0;
    }
}

void cli_command_usage(FILE *f, const cli_command *cmd) {
    fprintf(f, "usage: flatrt %s%s%s [options]\n\n%s", cmd->name, cmd->args[0] ? " " : "",
            cmd->args, cmd->help);
    fprintf(f, "\noptions:\n");
    for (const cli_opt *o = cmd->opts; o->name; o++) cli_print_opt(f, o);
    fprintf(f, "\nexit status: 0 ok, 1 error, 2 usage error\n");
}

static const cli_opt *find_opt(const cli_command *cmd, int id) {
    for (const cli_opt *o = cmd->opts; o->name; o++)
        if (o->id == id) return o;
    return NULL;
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

/* Applies option id with value val (NULL for flags) to c. Returns 0 or EXIT_USAGE. */
static int cli_apply(cli *c, int id, const char *val) {
    switch (id) {
    case OPT_INPUT:
        if (c->n_inputs >= MAX_KV) return usage_error("too many --input options");
        if (parse_kv(val, "--input", 1, &c->inputs[c->n_inputs])) return EXIT_USAGE;
        c->n_inputs++;
        return 0;
    case OPT_SHAPE:
        if (c->n_shapes >= MAX_KV) return usage_error("too many --shape options");
        if (parse_kv(val, "--shape", 0, &c->shapes[c->n_shapes])) return EXIT_USAGE;
        c->n_shapes++;
        return 0;
    case OPT_INPUT_DIR:
        if (!*val) return usage_error("--input-dir needs a directory");
        c->input_dir = val;
        return 0;
    case OPT_OUTPUT_DIR:
        if (!*val) return usage_error("--output-dir needs a directory");
        c->output_dir = val;
        return 0;
    case OPT_ITERS:
        c->iters_given = 1;
        return parse_long(val, "--iters", 1, 10000000, &c->iters) ? EXIT_USAGE : 0;
    case OPT_WARMUP:
        c->warmup_given = 1;
        return parse_long(val, "--warmup", 0, 10000000, &c->warmup) ? EXIT_USAGE : 0;
    case OPT_SEED:
        c->seed_given = 1;
        return parse_long(val, "--seed", 0, LONG_MAX, &c->seed) ? EXIT_USAGE : 0;
    case OPT_INTER_OP:
        return parse_long(val, "--inter-op", 1, FRT_MAX_THREADS, &c->inter_op) ? EXIT_USAGE : 0;
    case OPT_RUNTIMES: return parse_long(val, "--runtimes", 1, 256, &c->runtimes) ? EXIT_USAGE : 0;
    case OPT_THREADS:
        return parse_long(val, "--threads", 1, FRT_MAX_THREADS, &c->threads) ? EXIT_USAGE : 0;
    case OPT_LAT_FILE: c->lat_file = val; return 0;
    case OPT_OUTPUT:
        if (!*val) return usage_error("-o/--output needs a file name");
        c->output = val;
        return 0;
    case OPT_MERGE:
        if (c->n_merges >= MAX_KV) return usage_error("too many --merge options");
        c->merges[c->n_merges++] = val;
        return 0;
    case OPT_RUNS: return parse_long(val, "--runs", 1, 1000000, &c->runs) ? EXIT_USAGE : 0;
    case OPT_TRACE:
        if (!*val) return usage_error("--trace needs a file name");
        c->trace_file = val;
        return 0;
    case OPT_SVG:
        if (!*val) return usage_error("--svg needs a file name (or - for stdout)");
        c->svg = val;
        return 0;
    case OPT_PLANNER:
        if (!strcmp(val, "standard")) c->planner = FRT_PLANNER_STANDARD;
        else if (!strcmp(val, "greedy")) c->planner = FRT_PLANNER_GREEDY;
        else if (!strcmp(val, "none")) c->planner = FRT_PLANNER_NONE;
        else return usage_error("--planner expects standard, greedy or none, got '%s'", val);
        return 0;
    case OPT_WEIGHTS: return parse_weights(val, &c->weights) ? EXIT_USAGE : 0;
    case OPT_CHECK_FINITE: c->check_finite = 1; return 0;
    case OPT_PROFILE: c->profile = 1; return 0;
    case OPT_RANDOM: c->random = 1; return 0;
    case OPT_JSON: c->json = 1; return 0;
    case OPT_MEMORY: c->memory = 1; return 0;
    case OPT_OPS: c->ops = 1; return 0;
    case OPT_NODES: c->nodes = 1; return 0;
    case OPT_NO_FOLD: c->fold = 0; return 0;
    case OPT_NO_FUSE: c->fuse = 0; return 0;
    default: return usage_error("option %d not handled", id);
    }
}

/* The option text of argv[i] as typed, without "=value". */
static void opt_text(const char *arg, char *buf, size_t n) {
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    if (len >= n) len = n - 1;
    memcpy(buf, arg, len);
    buf[len] = 0;
}

int cli_parse(const cli_command *cmd, int argc, char **argv, cli *c) {
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    c->iters = 1000;
    c->warmup = 100;
    c->threads = 1;
    c->inter_op = 1;
    c->runs = 1;
    c->planner = FRT_PLANNER_STANDARD;
    c->fold = c->fuse = 1;
    cli_current_command = cmd->name;

    size_t n_opts = 0;
    while (cmd->opts[n_opts].name) n_opts++;
    struct option *lo = calloc(n_opts + 1, sizeof *lo);
    if (!lo) return fail("out of memory");
    for (size_t i = 0; i < n_opts; i++) {
        lo[i].name = cmd->opts[i].name;
        lo[i].has_arg = cmd->opts[i].arg ? required_argument : no_argument;
        lo[i].flag = NULL;
        lo[i].val = cmd->opts[i].id;
    }
    /* ":h" plus "x:" for each option whose id is a letter (a short form -x VALUE) */
    char shorts[2 * 26 + 3] = ":h";
    size_t ns = 2;
    for (size_t i = 0; i < n_opts; i++) {
        int id = cmd->opts[i].id;
        if (id >= 'a' && id <= 'z' && id != 'h' && ns + 2 < sizeof shorts) {
            shorts[ns++] = (char)id;
            if (cmd->opts[i].arg) shorts[ns++] = ':';
        }
    }
    shorts[ns] = 0;
    int rc = 0;
    opterr = 0;
    optind = 0; /* full re-initialisation (GNU); argv[0] is the command name */
    for (;;) {
        int id = getopt_long(argc, argv, shorts, lo, NULL);
        if (id == -1) break;
        /* the argument getopt was looking at: prev normally, later ones after permutation */
        const char *arg = optind > 0 && optind - 1 < argc ? argv[optind - 1] : "";
        char txt[128];
        if (id == OPT_HELP) {
            cli_command_usage(stdout, cmd);
            rc = -1;
            break;
        }
        if (id == ':') {
            const cli_opt *o = find_opt(cmd, optopt);
            rc = usage_error("--%s needs a value (%s)", o ? o->name : "?", o && o->arg ? o->arg : "");
            break;
        }
        if (id == '?') {
            opt_text(arg, txt, sizeof txt);
            const cli_opt *o = optopt ? find_opt(cmd, optopt) : NULL;
            if (o && !o->arg) {
                rc = usage_error("option '--%s' takes no value", o->name);
                break;
            }
            if (optopt && !o) {
                rc = usage_error("unknown option '-%c' for '%s'", optopt, cmd->name);
                break;
            }
            /* an abbreviation matching several options, or no option at all */
            char cands[512];
            size_t co = 0, nc = 0, tl = strlen(txt);
            cands[0] = 0;
            if (tl > 2 && txt[0] == '-' && txt[1] == '-')
                for (size_t i = 0; i < n_opts; i++)
                    if (!strncmp(cmd->opts[i].name, txt + 2, tl - 2) && co < sizeof cands) {
                        co += (size_t)snprintf(cands + co, sizeof cands - co, "%s--%s",
                                               nc ? ", " : "", cmd->opts[i].name);
                        nc++;
                    }
            if (nc > 1)
                rc = usage_error("ambiguous option '%s' for '%s' (%s)", txt, cmd->name, cands);
            else
                rc = usage_error("unknown option '%s' for '%s'", txt, cmd->name);
            break;
        }
        if ((rc = cli_apply(c, id, optarg))) break;
    }
    free(lo);
    if (rc) return rc;
    c->args = argv + optind;
    c->n_args = argc - optind;
    return 0;
}

int cli_need_model(cli *c) {
    if (c->n_args == 0) return usage_error("'%s' needs a MODEL argument", c->cmd->name);
    if (c->n_args > 1) return usage_error("unexpected argument '%s'", c->args[1]);
    c->model = c->args[0];
    return 0;
}

void cli_free(cli *c) {
    for (int i = 0; i < c->n_inputs; i++) free(c->inputs[i].owned);
    for (int i = 0; i < c->n_shapes; i++) free(c->shapes[i].owned);
}

/* ---------------------------------------------------------------------------------------------- */
/* Inputs                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

void inputs_free(inputs *in) {
    if (in->t)
        for (size_t i = 0; i < in->n; i++) tio_tensor_free(&in->t[i]);
    if (in->owned)
        for (size_t i = 0; i < in->n; i++) free(in->owned[i]);
    free(in->info);
    free(in->names);
    free(in->t);
    free(in->source);
    free(in->owned);
    memset(in, 0, sizeof *in);
}

int inputs_init(const frt_model *m, inputs *in) {
    memset(in, 0, sizeof *in);
    in->n = frt_model_num_inputs(m);
    size_t k = in->n ? in->n : 1;
    in->info = calloc(k, sizeof *in->info);
    in->names = calloc(k, sizeof *in->names);
    in->t = calloc(k, sizeof *in->t);
    in->source = calloc(k, sizeof *in->source);
    in->owned = calloc(k, sizeof *in->owned);
    if (!in->info || !in->names || !in->t || !in->source || !in->owned) return fail("out of memory");
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

/* Puts tensor t (read from path) into input i after checking dtype and shape; takes t. */
static int bind_tensor(inputs *in, size_t i, frt_tensor *t, const char *path) {
    if (in->source[i]) {
        tio_tensor_free(t);
        return fail("input '%s' given twice (%s and %s)", in->names[i], in->source[i], path);
    }
    const frt_tensor_info *info = &in->info[i];
    if (t->dtype != info->dtype) {
        int rc = fail("input '%s' expects %s but %s holds %s", in->names[i],
                      frt_dtype_name(info->dtype), path, frt_dtype_name(t->dtype));
        tio_tensor_free(t);
        return rc;
    }
    int bad_rank = info->rank >= 0 && t->rank != info->rank, bad_dim = -1;
    for (int d = 0; !bad_rank && info->rank >= 0 && d < t->rank; d++)
        if (info->shape[d] >= 0 && info->shape[d] != t->shape[d]) bad_dim = d;
    if (bad_rank || bad_dim >= 0) {
        char want[256], got[256];
        shape_str(want, sizeof want, info->rank, info->shape, info->dim_names);
        shape_str(got, sizeof got, t->rank, t->shape, NULL);
        tio_tensor_free(t);
        return fail("input '%s' expects shape %s but %s holds %s", in->names[i], want, path, got);
    }
    in->t[i] = *t;
    in->source[i] = path;
    return 0;
}

/* Loads every --input file. */
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
        int rc = bind_tensor(in, (size_t)i, &t, a->value);
        if (rc) return rc;
    }
    return 0;
}

/* --input-dir: DIR/<name>.npy, .pb, then the same with the sanitized name, for every input not
 * bound yet. */
static int load_input_dir(const cli *c, inputs *in) {
    struct stat st;
    if (stat(c->input_dir, &st) != 0) return fail("--input-dir %s: %s", c->input_dir, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return fail("--input-dir %s: not a directory", c->input_dir);
    for (size_t i = 0; i < in->n; i++) {
        if (in->source[i]) continue;
        char stems[2][1024];
        snprintf(stems[0], sizeof stems[0], "%s", in->names[i]);
        tio_sanitize_name(in->names[i], stems[1], sizeof stems[1]);
        static const char *const ext[] = {".npy", ".pb"};
        char *found = NULL;
        for (int s = 0; s < 2 && !found; s++) {
            if (s == 1 && !strcmp(stems[0], stems[1])) break;
            if (strchr(stems[s], '/')) continue; /* a name with '/' is not a file in DIR */
            for (int e = 0; e < 2 && !found; e++) {
                size_t len = strlen(c->input_dir) + strlen(stems[s]) + 8;
                char *p = malloc(len);
                if (!p) return fail("out of memory");
                snprintf(p, len, "%s/%s%s", c->input_dir, stems[s], ext[e]);
                if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) found = p;
                else free(p);
            }
        }
        if (!found) continue;
        frt_tensor t;
        char err[1024];
        if (tio_load(found, &t, NULL, err, sizeof err)) {
            free(found);
            return fail("%s", err);
        }
        in->owned[i] = found;
        int rc = bind_tensor(in, i, &t, found);
        if (rc) return rc;
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

/* Whether name is a symbolic dimension of some input. */
static int is_dim_name(const inputs *in, const char *name) {
    for (size_t i = 0; i < in->n; i++)
        for (int d = 0; d < in->info[i].rank; d++)
            if (in->info[i].shape[d] < 0 && in->info[i].dim_names[d] &&
                !strcmp(in->info[i].dim_names[d], name))
                return 1;
    return 0;
}

static void list_dim_names(const inputs *in, char *buf, size_t n) {
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; i < in->n; i++)
        for (int d = 0; d < in->info[i].rank; d++) {
            const char *dn = in->info[i].dim_names[d];
            if (in->info[i].shape[d] >= 0 || !dn || !dn[0]) continue;
            char q[300];
            snprintf(q, sizeof q, "'%s'", dn);
            if (strstr(buf, q)) continue; /* listed already */
            if (o < n) o += (size_t)snprintf(buf + o, n - o, "%s'%s'", o ? ", " : "", dn);
        }
    if (!o) snprintf(buf, n, "(none)");
}

int bind_inputs(const cli *c, inputs *in, int random) {
    char list[1024], dims[1024];
    list_inputs(in, list, sizeof list);
    list_dim_names(in, dims, sizeof dims);
    /* --shape names: an input, else a symbolic dim (value: one size) */
    for (int k = 0; k < c->n_shapes; k++) {
        const kv *s = &c->shapes[k];
        if (find_input(in, s->name) >= 0) continue;
        if (is_dim_name(in, s->name)) {
            long v;
            char opt[300];
            snprintf(opt, sizeof opt, "--shape %s=", s->name);
            if (parse_long(s->value, opt, 0, INT32_MAX, &v)) return EXIT_USAGE;
            continue;
        }
        return fail("--shape %s: the model has no input or symbolic dimension '%s' (model inputs: "
                    "%s; symbolic dimensions: %s)",
                    s->name, s->name, list, dims);
    }
    int rc = load_input_files(c, in);
    if (rc) return rc;
    if (c->input_dir && (rc = load_input_dir(c, in))) return rc;
    if (!random) {
        char missing[1024];
        size_t o = 0, n_missing = 0;
        missing[0] = 0;
        for (size_t i = 0; i < in->n; i++) {
            if (in->source[i]) continue;
            n_missing++;
            if (o < sizeof missing)
                o += (size_t)snprintf(missing + o, sizeof missing - o, "%s'%s'", o ? ", " : "",
                                      in->names[i]);
        }
        if (n_missing)
            return fail("missing input%s %s: give each with --input NAME=FILE.npy%s, or use "
                        "--random",
                        n_missing > 1 ? "s" : "", missing, c->input_dir ? " or in --input-dir" : "");
        return 0;
    }
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
        if (info->kind != FRT_KIND_TENSOR) continue; /* sequences, optionals: see bind_inputs */
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
            for (int d = 0; d < info->rank; d++) {
                int64_t v = info->shape[d];
                if (v < 0) {
                    v = 1;
                    for (int k = 0; k < c->n_shapes; k++) /* the last --shape DIM=n wins */
                        if (info->dim_names[d] && !strcmp(c->shapes[k].name, info->dim_names[d]) &&
                            find_input(in, c->shapes[k].name) < 0)
                            v = strtoll(c->shapes[k].value, NULL, 10);
                }
                t->shape[d] = v;
            }
        }
        if ((rc = fill_random(t, in->names[i]))) return rc;
    }
    return 0;
}
