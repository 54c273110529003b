/* `flatrt bench`: time frt_run on one model (latency percentiles, optional profile, trace and
 * multi-runtime throughput).
 *
 * Output: the phases as they happen (load, warm-up, timed runs; flushed, with a progress line
 * only when stdout is a terminal), then, as the LAST line, key=value pairs separated by single
 * spaces. Keys and number formats follow ../shared/tools/ortbench so the two can be compared side
 * by side (bench/compare.sh parses both):
 *   flatrt_version load_ms threads planner weights warmup iters mean_us p10_us p50_us p90_us p99_us
 *   min_us max_us std_us peak_rss_kib rss_before_load_kib arena_bytes naive_bytes
 *   lower_bound_bytes runtimes throughput_per_s inter_op [inter_op_used inter_op_bound] outputs
 * (inter_op_used: inter-op threads the runs used, 1 when declined at load; inter_op_bound: sum of
 * profiled step times / their critical path; both only with --inter-op N > 1 and a step graph)
 * With --json, stdout holds only one JSON object with the same keys and values (numbers as
 * numbers), and everything else, the key=value line included, goes to stderr.
 * Percentiles interpolate linearly between order statistics (numpy's default, as ortbench).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"

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

static void print_profile(FILE *f, const frt_runtime *rt, double mean_us) {
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
    fprintf(f, "\nprofile: %zu steps, %llu profiled runs; sum of steps %.3f us/run, mean latency "
           "%.3f us (%.3f us, %.1f%%, outside steps: input checks, planning, output copies)\n",
           n, (unsigned long long)runs, total, mean_us, mean_us - total,
           mean_us > 0 ? 100.0 * (mean_us - total) / mean_us : 0.0);
    fprintf(f, "\ntime per op type:\n");
    fprintf(f, "  %-28s %12s %7s %6s\n", "op type", "us/run", "%", "nodes");
    for (size_t k = 0; k < n_ops; k++)
        fprintf(f, "  %-28s %12.3f %6.1f%% %6zu\n", ops[k].op_type, ops[k].us,
               total > 0 ? 100.0 * ops[k].us / total : 0.0, ops[k].count);
    qsort(nodes, n, sizeof *nodes, cmp_node_row);
    size_t top = n < 30 || getenv("FRT_PROFILE_ALL") ? n : 30;
    fprintf(f, "\ntop %zu nodes by time:\n", top);
    fprintf(f, "  %-36s %-20s %-28s %10s %7s\n", "node", "op type", "kernel", "us/run", "%");
    for (size_t i = 0; i < top; i++)
        fprintf(f, "  %-36s %-20s %-28s %10.3f %6.1f%%\n", nz(nodes[i].p.node_name),
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

/* Progress of a loop of runs: on a terminal, one line rewritten at most every 100 ms. */
typedef struct progress {
    FILE *f;
    int on;
    double last_us;
    const char *what;
} progress;

static void progress_update(progress *p, long done, long total) {
    if (!p->on) return;
    double t = now_us();
    if (done != 0 && done != total && t - p->last_us < 100e3) return;
    p->last_us = t;
    fprintf(p->f, "\r%s: %ld/%ld runs", p->what, done, total);
    if (done == total) fputs("\r\033[K", p->f); /* the phase's summary line replaces it */
    fflush(p->f);
}

/* The figures of the last line, in order; str: a string in JSON (else a number). */
typedef struct figure {
    const char *key;
    char val[64];
    const char *sval; /* long string values (outputs) */
    int str;
} figure;

#define MAX_FIGURES 40

static void fig(figure *f, int *n, const char *key, int str, const char *fmt, ...) PRINTF_LIKE(5, 6);
static void fig(figure *f, int *n, const char *key, int str, const char *fmt, ...) {
    if (*n >= MAX_FIGURES) return;
    figure *x = &f[(*n)++];
    x->key = key;
    x->str = str;
    x->sval = NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->val, sizeof x->val, fmt, ap);
    va_end(ap);
}

static void print_kv_line(FILE *f, const figure *fg, int n) {
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%s=%s", i ? " " : "", fg[i].key, fg[i].sval ? fg[i].sval : fg[i].val);
    fputc('\n', f);
}

static void print_json(FILE *f, const figure *fg, int n) {
    fputc('{', f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "", fg[i].key);
        const char *v = fg[i].sval ? fg[i].sval : fg[i].val;
        if (fg[i].str) json_str(f, v);
        else fputs(v, f);
    }
    fputs("}\n", f);
}

static int run_once(frt_runtime *rt, const inputs *in, frt_tensor *outs, size_t n_out) {
    return frt_run(rt, in->names, in->t, in->n, outs, n_out, FRT_OUTPUTS_BORROW) != FRT_OK;
}

int cmd_bench(int argc, char **argv) {
    cli cl, *c = &cl;
    int rc = cli_parse(cli_find_command(argv[0]), argc, argv, c);
    if (!rc) rc = cli_need_model(c);
    if (rc) {
        cli_free(c);
        return rc < 0 ? 0 : rc;
    }
    /* human-readable lines: stdout, or stderr when stdout carries the JSON object */
    FILE *out = c->json ? stderr : stdout;
    progress prog = {out, isatty(fileno(out)), 0, ""};
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    inputs in = {0};
    frt_tensor *outs = NULL;
    double *lat = NULL;
    double cpu_run = 0; /* process CPU time per timed run, all threads */
    long rss_before_load = proc_status_kib("VmRSS");
    double load_ms;

    fprintf(out, "load: %s ...\n", c->model);
    fflush(out);
    if (load_model(c, &m, &load_ms) != FRT_OK) {
        rc = fail_frt(NULL);
        goto done;
    }
    if ((rc = inputs_init(m, &in))) goto done;
    if ((rc = bind_inputs(c, &in, 1))) goto done;
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
    fprintf(out, "model: %s (loaded in %.3f ms)\n", c->model, load_ms);
    for (size_t i = 0; i < in.n; i++) {
        char shp[256];
        shape_str(shp, sizeof shp, in.t[i].rank, in.t[i].shape, NULL);
        fprintf(out, "input '%s': %s %s from %s\n", in.names[i], frt_dtype_name(in.t[i].dtype), shp,
                in.source[i] ? in.source[i] : "random data");
    }

    /* Warm-up. The first run also plans; its time decides the default iteration counts. */
    long iters = c->iters, warmup = c->warmup, done_warmup = 0;
    fprintf(out, "warm-up: ...\n");
    fflush(out);
    double w0 = now_us();
    if (!c->iters_given || !c->warmup_given) {
        double t0 = now_us();
        if (run_once(rt, &in, outs, n_out)) {
            rc = fail_frt(NULL);
            goto done;
        }
        double first_ms = (now_us() - t0) / 1e3;
        done_warmup = 1;
        if (first_ms > 10.0) {
            if (!c->iters_given) iters = 50;
            if (!c->warmup_given) warmup = 5;
        }
        fprintf(out, "first run %.3f ms\n", first_ms);
        fflush(out);
    }
    prog.what = "warm-up";
    for (long r = done_warmup; r < warmup; r++) {
        progress_update(&prog, r, warmup);
        if (run_once(rt, &in, outs, n_out)) {
            rc = fail_frt(NULL);
            goto done;
        }
    }
    if (warmup > done_warmup) progress_update(&prog, warmup, warmup);
    fprintf(out, "warm-up: %ld runs in %.3f ms\n", warmup > done_warmup ? warmup : done_warmup,
            (now_us() - w0) / 1e3);
    if (c->profile) {
        frt_runtime_reset_profile(rt);
        frt_runtime_set_profiling(rt, 1);
    }
    lat = malloc((size_t)iters * sizeof *lat);
    if (!lat) {
        rc = fail("out of memory");
        goto done;
    }
    fprintf(out, "timed runs: %ld ...\n", iters);
    fflush(out);
    prog.what = "timed runs";
    double cpu0 = cpu_us();
    for (long r = 0; r < iters; r++) {
        progress_update(&prog, r, iters);
        double a = now_us();
        int bad = run_once(rt, &in, outs, n_out);
        double b = now_us();
        if (bad) {
            rc = fail_frt(NULL);
            goto done;
        }
        lat[r] = b - a;
    }
    progress_update(&prog, iters, iters);
    cpu_run = iters > 0 ? (cpu_us() - cpu0) / (double)iters : 0;
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
            if (run_once(rt, &in, outs, n_out)) {
                rc = fail_frt(NULL);
                goto done;
            }
        }
        size_t n_ev = frt_runtime_trace_size(rt, &dropped);
        if (frt_runtime_write_trace(rt, c->trace_file) != FRT_OK) {
            rc = fail_frt(NULL);
            goto done;
        }
        fprintf(out, "trace: %zu events of %ld runs written to %s", n_ev, n_tr, c->trace_file);
        if (dropped) fprintf(out, " (%llu steps did not fit)", (unsigned long long)dropped);
        fprintf(out, "\n");
        frt_runtime_set_trace(rt, 0);
    }
    /* inter-op: the critical-path bound from profiled step times (the timed runs' profile with
       --profile, else 4 profiled passes of up to 50 more runs each, keeping the pass with the
       least step time: a pass where another process took the core inflates some steps) */
    frt_interop_info ii;
    int have_ii = 0;
    memset(&ii, 0, sizeof ii);
    if (c->inter_op > 1) {
        if (c->profile) {
            have_ii = frt_runtime_interop_info(rt, &ii) == FRT_OK;
        } else {
            long n_pr = iters < 50 ? iters : 50;
            for (int pass = 0; pass < 4; pass++) {
                frt_interop_info pi;
                frt_runtime_reset_profile(rt);
                frt_runtime_set_profiling(rt, 1);
                for (long r = 0; r < n_pr; r++) {
                    if (run_once(rt, &in, outs, n_out)) {
                        rc = fail_frt(NULL);
                        goto done;
                    }
                }
                frt_runtime_set_profiling(rt, 0);
                if (frt_runtime_interop_info(rt, &pi) != FRT_OK) break;
                if (!have_ii || pi.total_us < ii.total_us) ii = pi;
                have_ii = 1;
                ii.runs = (uint64_t)n_pr;
            }
            frt_runtime_reset_profile(rt);
        }
        if (!have_ii) fprintf(out, "inter-op: %s\n", frt_last_error());
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
    fprintf(out, "latency over %ld runs (after %ld warm-up): mean %.3f us, p50 %.3f us, p90 %.3f us, "
           "min %.3f us%s\n",
           iters, warmup, mean, p50, p90, mn, c->profile ? " (with profiling timers)" : "");
    if (have_ii) {
        if (ii.declined) fprintf(out, "inter-op declined at load: %s\n", ii.declined);
        fprintf(out, "inter-op: %ld threads asked, runs use %d; critical-path bound from profiled "
                "step times (%llu runs): steps %.3f us / longest path %.3f us = %.3fx",
                c->inter_op, (int)ii.threads, (unsigned long long)ii.runs, ii.total_us,
                ii.path_us, ii.path_us > 0 ? ii.total_us / ii.path_us : 0.0);
        if (ii.est_path_us > 0)
            fprintf(out, " (load-time estimate %.1f us / %.1f us = %.2fx)", ii.est_total_us,
                    ii.est_path_us, ii.est_total_us / ii.est_path_us);
        fprintf(out, "\n");
    }

    frt_plan_stats ps;
    memset(&ps, 0, sizeof ps);
    if (frt_runtime_plan_stats(rt, &ps) != FRT_OK) {
        rc = fail_frt("plan statistics");
        goto done;
    }
    if (c->profile) {
        print_profile(out, rt, mean);
        fprintf(out, "\nmemory plan:\n");
        print_plan_stats(out, &ps);
    }

    double tput = mean > 0 ? 1e6 / mean : 0;
    long runtimes = c->runtimes > 0 ? c->runtimes : 1;
    if (c->runtimes > 0) {
        fprintf(out, "throughput: %ld runtimes on %ld threads, %ld runs each ...\n", runtimes,
                runtimes, iters);
        fflush(out);
        double one = tput;
        tput = bench_runtimes(rt, &in, n_out, runtimes, warmup, iters);
        if (tput < 0) {
            rc = 1;
            goto done;
        }
        fprintf(out, "throughput: %.1f runs/s, %.2fx one runtime's 1/mean (%.1f runs/s)\n", tput,
                one > 0 ? tput / one : 0.0, one);
    }

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char od[4096];
    outputs_desc(m, outs, n_out, od, sizeof od);
    figure fg[MAX_FIGURES];
    int nf = 0;
    fig(fg, &nf, "flatrt_version", 1, "%s", FRT_VERSION_STRING);
    fig(fg, &nf, "load_ms", 0, "%.3f", load_ms);
    fig(fg, &nf, "threads", 0, "%ld", c->threads);
    fig(fg, &nf, "planner", 1, "%s", planner_name(c->planner));
    fig(fg, &nf, "weights", 1, "%s", weights_name(c->weights));
    fig(fg, &nf, "warmup", 0, "%ld", warmup);
    fig(fg, &nf, "iters", 0, "%ld", iters);
    fig(fg, &nf, "mean_us", 0, "%.3f", mean);
    fig(fg, &nf, "p10_us", 0, "%.3f", p10);
    fig(fg, &nf, "p50_us", 0, "%.3f", p50);
    fig(fg, &nf, "p90_us", 0, "%.3f", p90);
    fig(fg, &nf, "p99_us", 0, "%.3f", p99);
    fig(fg, &nf, "min_us", 0, "%.3f", mn);
    fig(fg, &nf, "max_us", 0, "%.3f", mx);
    fig(fg, &nf, "std_us", 0, "%.3f", sd);
    fig(fg, &nf, "peak_rss_kib", 0, "%ld", (long)ru.ru_maxrss);
    fig(fg, &nf, "rss_before_load_kib", 0, "%ld", rss_before_load);
    fig(fg, &nf, "arena_bytes", 0, "%zu", ps.arena_bytes);
    fig(fg, &nf, "naive_bytes", 0, "%zu", ps.naive_bytes);
    fig(fg, &nf, "lower_bound_bytes", 0, "%zu", ps.lower_bound_bytes);
    fig(fg, &nf, "runtimes", 0, "%ld", runtimes);
    fig(fg, &nf, "throughput_per_s", 0, "%.1f", tput);
    fig(fg, &nf, "inter_op", 0, "%ld", c->inter_op);
    if (have_ii) {
        fig(fg, &nf, "inter_op_used", 0, "%d", (int)ii.threads);
        fig(fg, &nf, "inter_op_bound", 0, "%.3f", ii.path_us > 0 ? ii.total_us / ii.path_us : 0.0);
    }
    fig(fg, &nf, "cpu_us", 0, "%.3f", cpu_run);
    fig(fg, &nf, "outputs", 1, "%s", "");
    fg[nf - 1].sval = od[0] ? od : "none";
    print_kv_line(out, fg, nf);
    fflush(out);
    if (c->json) {
        print_json(stdout, fg, nf);
        fflush(stdout);
    }
done:
    free(lat);
    free(outs); /* borrowed outputs: nothing to release */
    inputs_free(&in);
    frt_runtime_free(rt);
    frt_model_free(m);
    cli_free(c);
    return rc;
}
