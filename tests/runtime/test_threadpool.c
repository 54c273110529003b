/* The intra-op pool (src/util/threadpool.c): the cost model (frt_par_threads) keeps tiny work on
 * the calling thread and splits larger work; frt_parallel_ranges covers [0, n) exactly once;
 * regions run correctly back to back (workers polling) and after pauses (workers asleep), with
 * the default polling window and with FRT_SPIN_US=0 (sleep at once); a bad FRT_SPIN_US falls
 * back to the default. Usage: test_threadpool */
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

int main(void) {
    test_cost_model();
    test_ranges();
    test_regions();
    TEST_MAIN_END();
}
