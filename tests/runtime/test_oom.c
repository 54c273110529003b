/* Allocation-failure injection: the library's Nth allocation (or open/mmap, or thread start)
 * fails, for every N, over one fixed sequence of public calls per model:
 *
 *   load -> runtime create -> run (input shapes A, ALLOC outputs) -> reshape to shapes B ->
 *   run (B, ALLOC) -> clone -> run on the clone (B, BORROW)
 *
 * Shapes A give every symbolic dim 2, shapes B give it 3 (a model without symbolic dims runs B =
 * A again, over other input data). Every call must either succeed, with outputs equal to those of
 * a clean run, or fail with a status the failure explains (FRT_ERR_NO_MEMORY for an allocation,
 * FRT_ERR_IO or FRT_ERR_NO_MEMORY for open/mmap) and a fresh message that says so. A failed call
 * leaves nothing to free (*out NULL, no owned output). After the failure:
 *   - a runtime that already existed runs A and B again and gives the clean outputs;
 *   - every block the library allocated is back (counted here, so a leak names its fail point;
 *     the ASan build's LeakSanitizer checks the same at exit);
 *   - a fresh load + run of the model gives the clean outputs.
 *
 * How: the test links the static library with -Wl,--wrap for malloc, calloc, realloc,
 * aligned_alloc, posix_memalign, free, open, mmap and pthread_create (every allocating, mapping or
 * thread-starting libc call in src/; see tests/oom.cmake), so only the library's own calls are
 * counted; the wrappers call the real (or sanitizer) functions. Allocations inside libc and
 * OpenBLAS are not counted. The test's own memory bypasses the wrappers (t_alloc). Its copy of
 * the arena has tiny chunks, so nearly every arena allocation is a heap allocation of its own.
 *
 * Fail points: every call of the sequence, unless --sample-load K[:F]: then every Kth allocation
 * of the load stage (and its first and last 16) and every allocation of the later stages. With
 * FRT_OOM_FULL=1 in the environment (CI's sanitizer job) the step is F (default 1: every one).
 *
 * Usage: test_oom [options] MODEL.onnx...
 *   --threads N      frt_options.num_threads = N (pthread_create failures are injected too)
 *   --manage         manage_outputs = 1; run A's outputs are held across run B
 *   --buffer         load with frt_model_load_buffer from a copy of the file
 *   --persistent     the Nth call and every later one fail (error paths that allocate)
 *   --sample-load K[:F]  see above
 *   --only N         allocation fail point N alone (debugging; with OOM_BACKTRACE=1 the stack
 *                    of each injected failure is printed, resolve it with addr2line -f)
 *   --trace          selection recording (frt_selection_record) on during every scenario: when
 *                    every call succeeded, the recorded facts equal those of the clean run unless
 *                    frt_selection_dropped() says the recorder lost some (an incomplete trace
 *                    must be visible, never silently short)
 * OOM_VERBOSE=1 lists the fail points that every call survived. */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

#include "flatrt.h"

/* ---------------------------------------------------------------------------------------------- */
/* Injection                                                                                      */
/* ---------------------------------------------------------------------------------------------- */

enum { K_ALLOC, K_MAP, K_THREAD, K_N };
static const char *const k_name[K_N] = {"allocation", "open/mmap", "pthread_create"};

static atomic_int g_armed;
static atomic_long g_seen[K_N];   /* calls of each kind seen while armed */
static atomic_long g_fail_at[K_N]; /* 1-based index of the call to fail, 0 = none */
static atomic_long g_injected;    /* failures injected since the last reset */
static atomic_long g_live;        /* blocks from the library's allocators not yet freed */

void *__real_malloc(size_t);
void *__real_calloc(size_t, size_t);
void *__real_realloc(void *, size_t);
void *__real_aligned_alloc(size_t, size_t);
int __real_posix_memalign(void **, size_t, size_t);
void __real_free(void *);
void *__real_mmap(void *, size_t, int, int, int, off_t);
int __real_open(const char *, int, ...);
int __real_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static int g_full;       /* FRT_OOM_FULL=1: --sample-load K:F steps by F */
static int g_persistent; /* --persistent: the Nth call and every later one fail */
static long g_only;     /* --only N: try allocation fail point N alone (debugging) */
static int g_backtrace; /* OOM_BACKTRACE=1: print the call stack of every injected failure */
static int g_trace;     /* --trace: selection recording on in every scenario */

static int inject(int kind) {
    if (!atomic_load(&g_armed)) return 0;
    long n = atomic_fetch_add(&g_seen[kind], 1) + 1;
    long at = atomic_load(&g_fail_at[kind]);
    if (at == 0 || n < at || (n > at && !g_persistent)) return 0;
    atomic_fetch_add(&g_injected, 1);
    if (g_backtrace) {
        void *pc[32];
        int depth = backtrace(pc, 32);
        fprintf(stderr, "injected failure of %s %ld at:\n", k_name[kind], n);
        backtrace_symbols_fd(pc, depth, 2);
    }
    return 1;
}

static void *counted(void *p) {
    if (p) atomic_fetch_add(&g_live, 1);
    return p;
}

void *__wrap_malloc(size_t n) { return inject(K_ALLOC) ? NULL : counted(__real_malloc(n)); }
void *__wrap_calloc(size_t a, size_t b) {
    return inject(K_ALLOC) ? NULL : counted(__real_calloc(a, b));
}
void *__wrap_aligned_alloc(size_t al, size_t n) {
    return inject(K_ALLOC) ? NULL : counted(__real_aligned_alloc(al, n));
}
void *__wrap_realloc(void *p, size_t n) {
    if (inject(K_ALLOC)) return NULL;
    void *q = __real_realloc(p, n);
    if (q && !p) atomic_fetch_add(&g_live, 1);
    return q;
}
int __wrap_posix_memalign(void **p, size_t al, size_t n) {
    if (inject(K_ALLOC)) return ENOMEM;
    int r = __real_posix_memalign(p, al, n);
    if (r == 0) counted(*p);
    return r;
}
void __wrap_free(void *p) {
    if (p) atomic_fetch_sub(&g_live, 1);
    __real_free(p);
}
void *__wrap_mmap(void *a, size_t len, int prot, int flags, int fd, off_t off) {
    if (inject(K_MAP)) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return __real_mmap(a, len, prot, flags, fd, off);
}
int __wrap_open(const char *path, int flags, ...) {
    int mode = 0;
    if (flags & O_CREAT) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, int);
        va_end(ap);
    }
    if (inject(K_MAP)) {
        errno = EMFILE;
        return -1;
    }
    return __real_open(path, flags, mode);
}
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
                          void *arg) {
    if (inject(K_THREAD)) return EAGAIN;
    return __real_pthread_create(t, attr, fn, arg);
}

/* The test's own memory: not counted, never failed. */
static void *t_alloc(size_t n) {
    void *p = __real_calloc(1, n ? n : 1);
    if (!p) {
        fprintf(stderr, "test_oom: out of memory\n");
        exit(2);
    }
    return p;
}

/* ---------------------------------------------------------------------------------------------- */
/* Checks                                                                                         */
/* ---------------------------------------------------------------------------------------------- */

static int g_failures, g_checks;
static int g_verbose; /* OOM_VERBOSE=1: list the fail points that every call survived */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    g_failures++;
}

/* Puts a known message into frt_last_error(), so a failure that sets none is seen. */
#define SENTINEL_INDEX ((size_t)987654321)
static void set_sentinel(void) {
    frt_tensor_info info;
    (void)frt_model_input(NULL, SENTINEL_INDEX, &info);
}
static int message_is_stale(const char *msg) { return strstr(msg, "987654321") != NULL; }

static int contains_ci(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && (hay[i] | 32) == (needle[i] | 32)) i++;
        if (i == n) return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* One model case                                                                                 */
/* ---------------------------------------------------------------------------------------------- */

#define MAX_IO 16
enum { STAGE_LOAD, STAGE_CREATE, STAGE_RUN_A, STAGE_RESHAPE, STAGE_RUN_B, STAGE_CLONE,
       STAGE_RUN_CLONE, STAGE_N };
static const char *const stage_name[STAGE_N] = {"load", "create", "run A", "reshape B", "run B",
                                                "clone", "run clone"};

typedef struct {
    const char *path;
    void *buf;       /* --buffer: the file's bytes, loaded with frt_model_load_buffer */
    size_t buf_size;
    char dir[1024];  /* its directory (external data) */
    frt_options opt;
    int manage;
    size_t ni, no;
    const char *names[MAX_IO];
    frt_tensor in_a[MAX_IO], in_b[MAX_IO];
    frt_tensor ref_a[MAX_IO], ref_b[MAX_IO]; /* clean outputs (test-owned copies) */
    long stage_start[STAGE_N + 1];           /* allocation index at each stage start (clean run) */
    long total[K_N];                         /* calls of each kind in a clean run */
    long baseline;                           /* g_live between scenarios */
    char **facts;                            /* --trace: facts of the clean run (test-owned) */
    size_t n_facts;
} mcase;

static frt_status load(const mcase *c, frt_model **m) {
    if (c->buf) return frt_model_load_buffer(c->buf, c->buf_size, c->dir, &c->opt, m);
    return frt_model_load(c->path, &c->opt, m);
}

/* The file's bytes in test-owned memory (NULL if unreadable). */
static void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    void *b = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0) {
            b = t_alloc((size_t)n);
            if (fread(b, 1, (size_t)n, f) != (size_t)n) {
                __real_free(b);
                b = NULL;
            }
            *size = (size_t)n;
        }
    }
    fclose(f);
    return b;
}

static void fill_input(frt_tensor *t, const frt_tensor_info *info, int64_t sym, unsigned seed) {
    memset(t, 0, sizeof *t);
    t->dtype = info->dtype;
    t->rank = info->rank < 0 ? 0 : info->rank;
    size_t n = 1;
    for (int d = 0; d < t->rank; d++) {
        t->shape[d] = info->shape[d] < 0 ? sym : info->shape[d];
        n *= (size_t)t->shape[d];
    }
    t->nbytes = n * frt_dtype_size(info->dtype);
    t->data = t_alloc(t->nbytes);
    if (info->dtype == FRT_FLOAT32) {
        float *f = t->data;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1664525u + 1013904223u;
            f[i] = (float)((seed >> 8) & 0xFFFF) / 32768.0f - 1.0f;
        }
    } /* other dtypes stay zero: valid indices and shapes for any op */
}

/* Same dtype, shape and bytes. */
static int same_tensor(const frt_tensor *a, const frt_tensor *b) {
    if (a->dtype != b->dtype || a->rank != b->rank || a->nbytes != b->nbytes) return 0;
    if (memcmp(a->shape, b->shape, (size_t)a->rank * sizeof a->shape[0]) != 0) return 0;
    return a->nbytes == 0 || (a->data && memcmp(a->data, b->data, a->nbytes) == 0);
}

static void check_outputs(const mcase *c, const frt_tensor *out, const frt_tensor *ref,
                          const char *what, long at) {
    for (size_t o = 0; o < c->no; o++) {
        g_checks++;
        if (!same_tensor(&out[o], &ref[o]))
            fail("%s: %s (fail point %ld): output %zu differs from the clean run", c->path, what,
                 at, o);
    }
}

/* A failed call: status explained by the injected failure and a fresh message. */
static void check_failure(const mcase *c, frt_status st, int stage, int kind, long at) {
    const char *msg = frt_last_error();
    g_checks++;
    if (atomic_load(&g_injected) == 0) {
        fail("%s: %s failed with %s though nothing was injected (%s fail point %ld): %s", c->path,
             stage_name[stage], frt_status_string(st), k_name[kind], at, msg);
        return;
    }
    int ok_status = st == FRT_ERR_NO_MEMORY || (kind == K_MAP && st == FRT_ERR_IO);
    if (!ok_status)
        fail("%s: %s: %s fail point %ld gave %s: %s", c->path, stage_name[stage], k_name[kind], at,
             frt_status_string(st), msg);
    if (!msg[0] || message_is_stale(msg))
        fail("%s: %s: %s fail point %ld gave %s with %s message", c->path, stage_name[stage],
             k_name[kind], at, frt_status_string(st), msg[0] ? "a stale" : "no");
    else if (st == FRT_ERR_NO_MEMORY && !contains_ci(msg, "memory") && !contains_ci(msg, "alloc"))
        fail("%s: %s: %s fail point %ld: FRT_ERR_NO_MEMORY message does not say so: %s", c->path,
             stage_name[stage], k_name[kind], at, msg);
}

static void check_no_owner(const mcase *c, const frt_tensor *out, const char *what, long at) {
    for (size_t o = 0; o < c->no; o++) {
        g_checks++;
        if (out[o]._owner)
            fail("%s: failed %s (fail point %ld) left output %zu owned", c->path, what, at, o);
    }
}

static void release_all(frt_tensor *t, size_t n) {
    for (size_t i = 0; i < n; i++) frt_tensor_release(&t[i]);
}

static void copy_outputs(const mcase *c, const frt_tensor *out, frt_tensor *ref) {
    for (size_t o = 0; o < c->no; o++) {
        ref[o] = out[o];
        ref[o]._owner = NULL;
        ref[o].data = t_alloc(out[o].nbytes);
        if (out[o].nbytes) memcpy(ref[o].data, out[o].data, out[o].nbytes);
    }
}

static void arm(int kind, long at) {
    for (int k = 0; k < K_N; k++) {
        atomic_store(&g_seen[k], 0);
        atomic_store(&g_fail_at[k], k == kind ? at : 0);
    }
    atomic_store(&g_injected, 0);
    atomic_store(&g_armed, 1);
}
static void disarm(void) { atomic_store(&g_armed, 0); }

/* The sequence with the at-th call of `kind` failing (at = 0: clean; record = 1: store the
 * outputs as references and the stage boundaries). Returns the stage that failed, or STAGE_N. */
/* --trace: ends recording; a clean run keeps the facts, a run whose calls all succeeded must have
 * recorded the same set or report dropped facts. Frees the recorder's memory either way. */
static void trace_end(mcase *c, int record, int succeeded, long at) {
    frt_selection_record(0);
    size_t n = frt_selection_count(), dropped = frt_selection_dropped();
    if (record) {
        if (dropped) fail("%s: clean traced run dropped %zu facts", c->path, dropped);
        c->facts = t_alloc((n ? n : 1) * sizeof *c->facts);
        for (size_t i = 0; i < n; i++) {
            const char *f = frt_selection_at(i);
            c->facts[i] = t_alloc(strlen(f) + 1);
            memcpy(c->facts[i], f, strlen(f) + 1);
        }
        c->n_facts = n;
    } else if (succeeded && !dropped) {
        g_checks++;
        size_t missing = 0;
        const char *first = NULL;
        for (size_t i = 0; i < c->n_facts; i++) {
            size_t j = 0;
            while (j < n && strcmp(frt_selection_at(j), c->facts[i])) j++;
            if (j == n && !missing++) first = c->facts[i];
        }
        if (missing || n != c->n_facts)
            fail("%s: allocation fail point %ld: every call succeeded and no fact was reported "
                 "dropped, but the trace has %zu facts (clean: %zu; %zu missing, first '%s')",
                 c->path, at, n, c->n_facts, missing, first ? first : "-");
    }
    frt_selection_reset();
}

static int scenario(mcase *c, int kind, long at, int record) {
    frt_model *m = NULL;
    frt_runtime *rt = NULL, *rt2 = NULL;
    frt_tensor out_a[MAX_IO] = {{0}}, out_b[MAX_IO] = {{0}}, out_c[MAX_IO] = {{0}};
    frt_status st = FRT_OK;
    int stage = STAGE_LOAD;
    if (g_trace) {
        frt_selection_reset();
        frt_selection_record(1);
    }
    arm(kind, at);
#define STAGE(s)                                                                                   \
    do {                                                                                           \
        stage = (s);                                                                               \
        if (record) c->stage_start[stage] = atomic_load(&g_seen[K_ALLOC]);                         \
        set_sentinel();                                                                            \
    } while (0)

    STAGE(STAGE_LOAD);
    st = load(c, &m);
    if (st) {
        g_checks++;
        if (m) fail("%s: failed load left *out set", c->path);
        goto failed;
    }
    STAGE(STAGE_CREATE);
    st = frt_runtime_create(m, &rt);
    if (st) {
        g_checks++;
        if (rt) fail("%s: failed create left *out set", c->path);
        goto failed;
    }
    STAGE(STAGE_RUN_A);
    st = frt_run(rt, c->names, c->in_a, c->ni, out_a, c->no, FRT_OUTPUTS_ALLOC);
    if (st) {
        check_no_owner(c, out_a, "run A", at);
        goto failed;
    }
    if (record) copy_outputs(c, out_a, c->ref_a);
    else check_outputs(c, out_a, c->ref_a, "run A", at);
    if (!c->manage) release_all(out_a, c->no); /* else held: run B needs a fresh output block */
    STAGE(STAGE_RESHAPE);
    st = frt_runtime_reshape(rt, c->names, c->in_b, c->ni);
    if (st) goto failed;
    STAGE(STAGE_RUN_B);
    st = frt_run(rt, c->names, c->in_b, c->ni, out_b, c->no, FRT_OUTPUTS_ALLOC);
    if (st) {
        check_no_owner(c, out_b, "run B", at);
        goto failed;
    }
    if (record) copy_outputs(c, out_b, c->ref_b);
    else check_outputs(c, out_b, c->ref_b, "run B", at);
    release_all(out_b, c->no);
    STAGE(STAGE_CLONE);
    st = frt_runtime_clone(rt, &rt2);
    if (st) {
        g_checks++;
        if (rt2) fail("%s: failed clone left *out set", c->path);
        goto failed;
    }
    STAGE(STAGE_RUN_CLONE);
    st = frt_run(rt2, c->names, c->in_b, c->ni, out_c, c->no, FRT_OUTPUTS_BORROW);
    if (st) goto failed;
    if (!record) check_outputs(c, out_c, c->ref_b, "run clone", at);
    stage = STAGE_N;
    if (record) c->stage_start[STAGE_N] = atomic_load(&g_seen[K_ALLOC]);
    disarm();
    goto done;

failed:
    disarm();
    if (record) {
        fail("%s: clean run failed at %s: %s", c->path, stage_name[stage], frt_last_error());
        goto done;
    }
    check_failure(c, st, stage, kind, at);
    /* A runtime that saw the failure still works. */
    if (rt) {
        frt_tensor o[MAX_IO] = {{0}};
        st = frt_run(rt, c->names, c->in_a, c->ni, o, c->no, FRT_OUTPUTS_BORROW);
        if (st) fail("%s: after %s failed (fail point %ld), run A on the same runtime failed: %s",
                     c->path, stage_name[stage], at, frt_last_error());
        else check_outputs(c, o, c->ref_a, "run A after failure", at);
        st = frt_run(rt, c->names, c->in_b, c->ni, o, c->no, FRT_OUTPUTS_ALLOC);
        if (st) fail("%s: after %s failed (fail point %ld), run B on the same runtime failed: %s",
                     c->path, stage_name[stage], at, frt_last_error());
        else check_outputs(c, o, c->ref_b, "run B after failure", at);
        release_all(o, c->no);
    }

done:
    release_all(out_a, c->no);
    release_all(out_b, c->no);
    frt_runtime_free(rt2);
    frt_runtime_free(rt);
    frt_model_free(m);
    if (g_trace) trace_end(c, record, stage == STAGE_N, at);
#undef STAGE
    if (record) {
        for (int k = 0; k < K_N; k++) c->total[k] = atomic_load(&g_seen[k]);
    } else {
        g_checks++;
        long live = atomic_load(&g_live);
        if (live != c->baseline) {
            fail("%s: %s fail point %ld (in %s): %ld blocks leaked", c->path, k_name[kind], at,
                 stage < STAGE_N ? stage_name[stage] : "no stage", live - c->baseline);
            c->baseline = live; /* report each leak once */
        }
    }
    return stage;
}

/* A fresh load and run A after a failure: the library has no broken global state. */
static void fresh_run(mcase *c, long at) {
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    frt_tensor o[MAX_IO] = {{0}};
    if (load(c, &m) || frt_runtime_create(m, &rt) ||
        frt_run(rt, c->names, c->in_a, c->ni, o, c->no, FRT_OUTPUTS_BORROW))
        fail("%s: clean load+run after fail point %ld failed: %s", c->path, at, frt_last_error());
    else check_outputs(c, o, c->ref_a, "fresh run after failure", at);
    frt_runtime_free(rt);
    frt_model_free(m);
}

static int wanted(const mcase *c, long at, long sample) {
    long load_end = c->stage_start[STAGE_CREATE];
    if (sample <= 1 || at > load_end) return 1;
    return at <= 16 || at > load_end - 16 || at % sample == 0;
}

static void test_model(const char *path, const frt_options *opt, int manage, int buffer,
                       long sample) {
    mcase *c = t_alloc(sizeof *c);
    c->path = path;
    c->opt = *opt;
    c->opt.manage_outputs = manage;
    c->manage = manage;
    snprintf(c->dir, sizeof c->dir, "%s", path);
    char *slash = strrchr(c->dir, '/');
    if (slash) *slash = 0;
    else snprintf(c->dir, sizeof c->dir, ".");
    g_checks++;
    if (buffer && !(c->buf = read_file(path, &c->buf_size))) {
        fail("%s: cannot read", path);
        __real_free(c);
        return;
    }
    /* shapes come from the model's declared inputs */
    frt_model *m;
    if (load(c, &m) != FRT_OK) {
        fail("%s: %s", path, frt_last_error());
        __real_free(c->buf);
        __real_free(c);
        return;
    }
    c->ni = frt_model_num_inputs(m);
    c->no = frt_model_num_outputs(m);
    if (c->ni > MAX_IO || c->no > MAX_IO) {
        fail("%s: more than %d inputs or outputs", path, MAX_IO);
        frt_model_free(m);
        __real_free(c->buf);
        __real_free(c);
        return;
    }
    char *names = t_alloc(c->ni * 256);
    for (size_t i = 0; i < c->ni; i++) {
        frt_tensor_info info;
        frt_model_input(m, i, &info);
        snprintf(names + i * 256, 256, "%s", info.name);
        c->names[i] = names + i * 256;
        fill_input(&c->in_a[i], &info, 2, 17u + (unsigned)i);
        fill_input(&c->in_b[i], &info, 3, 91u + (unsigned)i);
    }
    frt_model_free(m);

    scenario(c, K_ALLOC, 0, 1); /* clean: references and counts */
    c->baseline = atomic_load(&g_live);
    printf("%s%s%s%s: %ld allocations (load %ld, create %ld, run A %ld, reshape %ld, run B %ld, "
           "clone %ld, run clone %ld), %ld open/mmap, %ld thread starts\n",
           path, c->buf ? " [buffer]" : "", manage ? " [manage_outputs]" : "",
           opt->num_threads > 1 ? " [threads]" : "",
           c->total[K_ALLOC], c->stage_start[1] - c->stage_start[0],
           c->stage_start[2] - c->stage_start[1], c->stage_start[3] - c->stage_start[2],
           c->stage_start[4] - c->stage_start[3], c->stage_start[5] - c->stage_start[4],
           c->stage_start[6] - c->stage_start[5], c->stage_start[7] - c->stage_start[6],
           c->total[K_MAP], c->total[K_THREAD]);
    fflush(stdout);
    int before = g_failures;
    long tried = 0, failed_calls = 0;
    for (int k = 0; k < K_N; k++) {
        for (long at = 1; at <= c->total[k]; at++) {
            if (k == K_ALLOC && !wanted(c, at, sample)) continue;
            if (g_only && (k != K_ALLOC || at != g_only)) continue;
            tried++;
            int stage = scenario(c, k, at, 0);
            if (g_verbose && stage == STAGE_N)
                fprintf(stderr, "  %s fail point %ld: every call succeeded (%s, %ld calls)\n",
                        k_name[k], at, atomic_load(&g_injected) ? "injected" : "not reached",
                        atomic_load(&g_seen[k]));
            if (stage < STAGE_N) {
                failed_calls++;
                fresh_run(c, at);
            }
        }
    }
    printf("  %ld fail points tried%s, %ld of them failed a call, %d problems\n", tried,
           sample > 1 ? " (load sampled)" : "", failed_calls, g_failures - before);
    for (size_t i = 0; i < c->ni; i++) {
        __real_free(c->in_a[i].data);
        __real_free(c->in_b[i].data);
    }
    for (size_t o = 0; o < c->no; o++) {
        __real_free(c->ref_a[o].data);
        __real_free(c->ref_b[o].data);
    }
    for (size_t i = 0; i < c->n_facts; i++) __real_free(c->facts[i]);
    __real_free(c->facts);
    __real_free(names);
    __real_free(c->buf);
    __real_free(c);
}

int main(int argc, char **argv) {
    frt_options opt;
    frt_options_init(&opt);
    int manage = 0, buffer = 0, n_models = 0;
    g_verbose = getenv("OOM_VERBOSE") && getenv("OOM_VERBOSE")[0] == '1';
    g_full = getenv("FRT_OOM_FULL") && getenv("FRT_OOM_FULL")[0] == '1';
    g_backtrace = getenv("OOM_BACKTRACE") && getenv("OOM_BACKTRACE")[0] == '1';
    long sample = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) opt.num_threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--manage") == 0) manage = 1;
        else if (strcmp(argv[i], "--buffer") == 0) buffer = 1;
        else if (strcmp(argv[i], "--persistent") == 0) g_persistent = 1;
        else if (strcmp(argv[i], "--trace") == 0) g_trace = 1;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) g_only = atol(argv[++i]);
        else if (strcmp(argv[i], "--sample-load") == 0 && i + 1 < argc) {
            char *colon;
            sample = strtol(argv[++i], &colon, 10);
            long full_step = *colon == ':' ? atol(colon + 1) : 1;
            if (g_full) sample = full_step;
        }
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: test_oom [--threads N] [--manage] [--buffer] [--persistent] "
                            "[--trace] [--sample-load K[:F]] [--only N] MODEL.onnx...\n");
            return 2;
        } else {
            test_model(argv[i], &opt, manage, buffer, sample);
            n_models++;
        }
    }
    if (!n_models) {
        fprintf(stderr, "test_oom: no model given\n");
        return 2;
    }
    printf("%d passed, %d failed\n", g_checks - g_failures, g_failures);
    return g_failures ? 1 : 0;
}
