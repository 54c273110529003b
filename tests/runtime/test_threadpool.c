/* The intra-op pool (src/util/threadpool.c): the cost model (frt_par_threads) keeps tiny work on
 * the calling thread and splits larger work; frt_parallel_ranges covers [0, n) exactly once;
 * regions run correctly back to back (workers polling) and after pauses (workers asleep), with
 * the default polling window and with FRT_SPIN_US=0 (sleep at once); a bad FRT_SPIN_US falls
 * back to the default. Shared pools (frt_threadpool_create_shared): helper threads that join with
 * frt_threadpool_help, two callers at once (the second runs its region alone), nested calls,
 * notify. Holds (frt_threadpool_hold): regions inside and outside run-scoped polling.
 * Usage: test_threadpool */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../unit/test_util.h"
#include "util/threadpool.h"

static void test_cost_model(void) {
    frt_threadpool *tp = frt_threadpool_create(2, NULL);
    CHECK(tp && frt_threadpool_size(tp) == 2);
    CHECK(frt_par_threads(NULL, 1e12) == 1);
    CHECK(frt_par_threads(tp, 0) == 1);
    CHECK(frt_par_threads(tp, NAN) == 1);
    CHECK(frt_par_threads(tp, FRT_PAR_MIN_NS) == 1);
    CHECK(frt_par_threads(tp, 2 * FRT_PAR_MIN_NS - 1) == 1);
    CHECK(frt_par_threads(tp, 2 * FRT_PAR_MIN_NS) == 2);
    CHECK(frt_par_threads(tp, 1e12) == 2);
    /* a tiny elementwise op (1000 floats read and written) stays serial; a mid-sized one
     * (64 Ki floats, e.g. a 64x32x32 activation) already splits */
    CHECK(frt_par_threads(tp, 1000 * 8 * FRT_PAR_NS_PER_BYTE) == 1);
    CHECK(frt_par_threads(tp, 65536 * 8 * FRT_PAR_NS_PER_BYTE) == 2);
    /* a 3x3 conv 16->16 channels on 8x8 stays serial; 64->64 on 28x28 splits */
    CHECK(frt_par_threads(tp, 2.0 * 16 * 64 * 16 * 9 * FRT_PAR_NS_PER_FLOP) == 1);
    CHECK(frt_par_threads(tp, 2.0 * 64 * 784 * 64 * 9 * FRT_PAR_NS_PER_FLOP) == 2);
    frt_threadpool_free(tp);
    tp = frt_threadpool_create(4, NULL);
    if (frt_threadpool_size(tp) == 4) {
        CHECK(frt_par_threads(tp, 3 * FRT_PAR_MIN_NS) == 3);
        CHECK(frt_par_threads(tp, 100 * FRT_PAR_MIN_NS) == 4);
    }
    frt_threadpool_free(tp);
}

/* ---- frt_parallel_ranges ---- */

typedef struct {
    atomic_int calls;
    atomic_int *hits; /* per item */
    int64_t n;
    atomic_int bad;
} ranges_ctx;

static void count_range(void *p, int64_t lo, int64_t hi) {
    ranges_ctx *c = p;
    atomic_fetch_add(&c->calls, 1);
    if (lo < 0 || hi > c->n || lo >= hi) atomic_fetch_add(&c->bad, 1);
    for (int64_t i = lo; i < hi && i >= 0 && i < c->n; i++) atomic_fetch_add(&c->hits[i], 1);
}

static void check_ranges(frt_threadpool *tp, int64_t n, double item_ns, int expect_one_call) {
    ranges_ctx c = {.n = n};
    c.hits = calloc((size_t)n, sizeof *c.hits);
    frt_parallel_ranges(tp, n, item_ns, count_range, &c);
    int calls = atomic_load(&c.calls), missed = 0;
    for (int64_t i = 0; i < n; i++) missed += atomic_load(&c.hits[i]) != 1;
    CHECK_MSG(missed == 0 && atomic_load(&c.bad) == 0, "n %lld: %d items not done exactly once",
              (long long)n, missed);
    if (expect_one_call) CHECK_MSG(calls == 1, "n %lld: %d calls, expected 1", (long long)n, calls);
    else CHECK_MSG(calls > 1, "n %lld: %d calls, expected a split", (long long)n, calls);
    free(c.hits);
}

static void test_ranges(void) {
    frt_threadpool *tp = frt_threadpool_create(2, NULL);
    check_ranges(tp, 1, 1e9, 1);                  /* one item: nothing to split */
    check_ranges(tp, 1000, 1.0, 1);               /* 1 us in all: serial */
    check_ranges(tp, 1000, 100.0, 0);             /* 100 us: split */
    check_ranges(tp, 7, 1e6, 0);                  /* fewer items than ranges */
    check_ranges(NULL, 1000, 100.0, 1);           /* no pool */
    frt_parallel_ranges(tp, 0, 1e9, count_range, NULL); /* n 0: fn not called */
    frt_threadpool_free(tp);
}

/* ---- regions back to back and after pauses ---- */

typedef struct {
    int64_t *slots;
    size_t n;
} sum_ctx;

static void fill_task(void *p, size_t i) {
    sum_ctx *c = p;
    c->slots[i] += (int64_t)i + 1;
}

static void sleep_us(long us) {
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static void run_regions(const char *spin, int threads) {
    if (spin) setenv("FRT_SPIN_US", spin, 1);
    else unsetenv("FRT_SPIN_US");
    frt_threadpool *tp = frt_threadpool_create(threads, NULL);
    CHECK_MSG(frt_threadpool_size(tp) == threads, "FRT_SPIN_US=%s: pool of %d", spin ? spin : "-",
              frt_threadpool_size(tp));
    enum { N = 37, REGIONS = 3000 };
    int64_t slots[N] = {0};
    sum_ctx c = {slots, N};
    for (int r = 0; r < REGIONS; r++) {
        if (r % 500 == 499) sleep_us(3000); /* longer than any default window: workers asleep */
        frt_parallel_for(tp, N, fill_task, &c);
    }
    int bad = 0;
    for (int i = 0; i < N; i++) bad += slots[i] != (int64_t)REGIONS * (i + 1);
    CHECK_MSG(bad == 0, "FRT_SPIN_US=%s, %d threads: %d slots wrong", spin ? spin : "-", threads,
              bad);
    frt_threadpool_free(tp);
}

static void test_regions(void) {
    run_regions(NULL, 2);
    run_regions("0", 2);
    run_regions("0", 3);
    run_regions("5", 2);
    run_regions("200", 2);
    run_regions("junk", 2);    /* ignored: default window */
    run_regions("99999999", 2); /* out of range: default window */
    unsetenv("FRT_SPIN_US");
}

/* Regions inside and outside holds (workers polling between regions while held, asleep
 * otherwise), with pauses longer than the hold's polling window inside a hold, holds without
 * any region, and hold calls on NULL and on a pool without own workers. */
static void test_hold(int threads) {
    frt_threadpool_hold(NULL, 1);
    frt_threadpool_hold(NULL, 0);
    frt_threadpool *tp = frt_threadpool_create(threads, NULL);
    CHECK(frt_threadpool_size(tp) == threads);
    enum { N = 23, RUNS = 300, PER_RUN = 10 };
    int64_t slots[N] = {0};
    sum_ctx c = {slots, N};
    long regions = 0;
    for (int r = 0; r < RUNS; r++) {
        frt_threadpool_hold(tp, 1);
        for (int k = 0; k < PER_RUN && r % 7 != 3; k++) { /* every 7th hold runs nothing */
            if (r % 50 == 1 && k == 5) sleep_us(2500); /* past the 1 ms polling window */
            frt_parallel_for(tp, N, fill_task, &c);
            regions++;
        }
        frt_threadpool_hold(tp, 0);
        if (r % 3 == 0) {
            frt_parallel_for(tp, N, fill_task, &c); /* between holds */
            regions++;
        }
        if (r % 100 == 99) sleep_us(2000);
    }
    int bad = 0;
    for (int i = 0; i < N; i++) bad += slots[i] != regions * (i + 1);
    CHECK_MSG(bad == 0, "hold, %d threads: %d slots wrong", threads, bad);
    frt_threadpool_free(tp);
    /* a pool whose only other thread is a helper: hold is a no-op */
    tp = frt_threadpool_create_shared(2, 0, NULL);
    CHECK(frt_threadpool_size(tp) == 2);
    frt_threadpool_hold(tp, 1);
    memset(slots, 0, sizeof slots);
    frt_parallel_for(tp, N, fill_task, &c); /* nobody joins: the caller runs every task */
    frt_threadpool_hold(tp, 0);
    bad = 0;
    for (int i = 0; i < N; i++) bad += slots[i] != i + 1;
    CHECK_MSG(bad == 0, "hold without workers: %d slots wrong", bad);
    frt_threadpool_free(tp);
}

/* ---- shared pools: regions served by helper threads ---- */

typedef struct {
    frt_threadpool *tp;
    atomic_int stop, helped, notified;
} helper_ctx;

static void *helper_main(void *p) {
    helper_ctx *h = p;
    while (!atomic_load(&h->stop))
        if (frt_threadpool_help(h->tp)) atomic_fetch_add(&h->helped, 1);
    return NULL;
}

static void count_notify(void *p) { atomic_fetch_add(&((helper_ctx *)p)->notified, 1); }

typedef struct {
    frt_threadpool *tp;
    atomic_llong *slots;
    size_t n;
    int nested;
} shared_ctx;

static void shared_inner(void *p, size_t i) {
    shared_ctx *c = p;
    atomic_fetch_add(&c->slots[0], (long long)i + 1);
}

/* adds 1 to every slot; with nested, each task runs a region of two tasks of its own on the
   same pool (it must run on the calling thread), adding 1 and 2, and subtracts 2 */
static void shared_task(void *p, size_t i) {
    shared_ctx *c = p;
    if (c->nested) {
        shared_ctx one = {c->tp, c->slots + i, 2, 0};
        frt_parallel_for(c->tp, 2, shared_inner, &one);
        atomic_fetch_sub(&c->slots[i], 2);
        return;
    }
    atomic_fetch_add(&c->slots[i], 1);
}

typedef struct {
    shared_ctx c;
    int regions;
} caller_arg;

static void *caller_main(void *p) {
    caller_arg *a = p;
    for (int r = 0; r < a->regions; r++) frt_parallel_for(a->c.tp, a->c.n, shared_task, &a->c);
    return NULL;
}

static void test_shared(void) {
    CHECK(frt_threadpool_create_shared(2, 2, NULL) == NULL); /* no helper left */
    CHECK(frt_threadpool_create_shared(1, 0, NULL) == NULL);
    frt_threadpool *tp = frt_threadpool_create_shared(3, 0, NULL); /* 2 helpers, no workers */
    CHECK(frt_threadpool_size(tp) == 3);
    CHECK(!frt_threadpool_open(tp) && !frt_threadpool_help(tp)); /* no region: nothing joined */
    helper_ctx h = {.tp = tp};
    frt_threadpool_set_notify(tp, count_notify, &h);
    /* without helpers: every region runs on its caller */
    enum { N = 29, REGIONS = 2000, CALLERS = 2 };
    atomic_llong slots[CALLERS][N];
    memset(slots, 0, sizeof slots);
    caller_arg a[CALLERS];
    for (int k = 0; k < CALLERS; k++) a[k] = (caller_arg){{tp, slots[k], N, k == 1}, REGIONS};
    caller_main(&a[0]);
    CHECK(atomic_load(&h.notified) == REGIONS);
    /* two helpers, two callers at once (one of them nesting): every task once per region */
    pthread_t th[2], ca[CALLERS];
    for (int k = 0; k < 2; k++) pthread_create(&th[k], NULL, helper_main, &h);
    for (int k = 0; k < CALLERS; k++) pthread_create(&ca[k], NULL, caller_main, &a[k]);
    for (int k = 0; k < CALLERS; k++) pthread_join(ca[k], NULL);
    atomic_store(&h.stop, 1);
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        bad += atomic_load(&slots[0][i]) != 2 * REGIONS;
        bad += atomic_load(&slots[1][i]) != REGIONS;
    }
    CHECK_MSG(bad == 0, "shared pool: %d slots wrong", bad);
    CHECK(atomic_load(&h.notified) >= REGIONS + 1);
    frt_threadpool_free(tp);
    /* own workers and helpers together */
    tp = frt_threadpool_create_shared(3, 1, NULL);
    CHECK(frt_threadpool_size(tp) == 3);
    h = (helper_ctx){.tp = tp};
    pthread_create(&th[0], NULL, helper_main, &h);
    memset(slots, 0, sizeof slots);
    a[0] = (caller_arg){{tp, slots[0], N, 0}, REGIONS};
    caller_main(&a[0]);
    atomic_store(&h.stop, 1);
    pthread_join(th[0], NULL);
    bad = 0;
    for (int i = 0; i < N; i++) bad += atomic_load(&slots[0][i]) != REGIONS;
    CHECK_MSG(bad == 0, "shared pool with a worker: %d slots wrong", bad);
    frt_threadpool_free(tp);
}

int main(void) {
    test_cost_model();
    test_ranges();
    test_regions();
    test_hold(2);
    test_hold(3);
    test_shared();
    TEST_MAIN_END();
}
