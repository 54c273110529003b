/* The arena (src/util/arena.h): allocations aligned, zeroed and disjoint; large ones (packed
 * weights, >= FRT_HUGE_MIN) in chunks from frt_alloc_large, later large allocations filling an
 * earlier large chunk's rest, small ones unchanged. frt_alloc_large per huge-page mode
 * (FRT_HUGEPAGES unset or "0": none; "slab": the slab only; "all": weights too): a covered large size at
 * 2 MiB alignment in whole 2 MiB on Linux, anything else 64-byte aligned and exact. The mode is
 * read once per process, so the other two modes run in child processes. Alignments above 64
 * hold as addresses (the head chunk's offsets were aligned relative to its 64-aligned data
 * before). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"
#include "util/arena.h"

static int all_zero(const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return 0;
    return 1;
}

static void test_arena(void) {
    frt_arena a;
    frt_arena_init(&a);
    enum { N = 12 };
    /* large and small interleaved: 300 KiB, 1 KiB, 700 KiB, ... */
    static const size_t sz[N] = {300 << 10, 1024, 700 << 10, 64, 1500 << 10, 300 << 10,
                                 5 << 20,   17,   256 << 10, 3,  900 << 10,  100 << 10};
    static const size_t al[N] = {64, 8, 4096, 1, 64, 256, 64, 4, 64, 1, 128, 64};
    unsigned char *p[N];
    for (int i = 0; i < N; i++) {
        p[i] = frt_arena_alloc(&a, sz[i], al[i]);
        CHECK_MSG(p[i] != NULL, "allocation %d of %zu bytes failed", i, sz[i]);
        if (!p[i]) return;
        CHECK_MSG((uintptr_t)p[i] % al[i] == 0, "allocation %d misaligned", i);
        CHECK_MSG(all_zero(p[i], sz[i]), "allocation %d not zeroed", i);
        memset(p[i], 0xA0 + i, sz[i]);
    }
    for (int i = 0; i < N; i++) /* disjoint: each still holds its own pattern */
        for (size_t k = 0; k < sz[i]; k += 4093)
            CHECK_MSG(p[i][k] == (unsigned char)(0xA0 + i), "allocation %d overwritten at %zu", i,
                      k);
    CHECK(a.total >= 9000000);
    frt_arena_free(&a);
    CHECK(a.head == NULL && a.total == 0);
}

/* two large allocations of 300 KiB: the second in the first one's 2 MiB chunk, right after it */
static void test_large_reuse(void) {
    frt_arena a;
    frt_arena_init(&a);
    unsigned char *x = frt_arena_alloc(&a, 300 << 10, 64);
    unsigned char *y = frt_arena_alloc(&a, 300 << 10, 64);
    CHECK(x && y);
#if defined(__linux__)
    CHECK_MSG(y == x + (300 << 10), "second large allocation at %+td from the first",
              (ptrdiff_t)(y - x));
#endif
    frt_arena_free(&a);
}

static void check_large(frt_large_use use, int want_huge) {
    size_t cap = 0;
    void *p = frt_alloc_large(3 << 20, use, &cap);
    CHECK(p != NULL);
    if (!p) return;
#if defined(__linux__)
    if (want_huge)
        CHECK_MSG((uintptr_t)p % (2u << 20) == 0 && cap == (4u << 20),
                  "3 MiB (use %d): at %p, %zu bytes usable", (int)use, p, cap);
    else
        CHECK_MSG((uintptr_t)p % 64 == 0 && cap == (3u << 20), "3 MiB (use %d, no huge pages): %zu",
                  (int)use, cap);
#else
    (void)want_huge;
#endif
    memset(p, 1, 3 << 20);
    free(p);
    p = frt_alloc_large(1000, use, &cap);
    CHECK(p && (uintptr_t)p % 64 == 0 && cap == 1024);
    free(p);
}

static int mode_of(const char *e) {
    return !e || !*e || !strcmp(e, "0") ? FRT_HUGE_NONE : !strcmp(e, "slab") ? FRT_HUGE_SLAB
           : !strcmp(e, "all") || !strcmp(e, "1")    ? FRT_HUGE_ALL
                                                     : FRT_HUGE_NONE;
}

static void run_all(void) {
    int mode = frt_huge_pages_mode();
    CHECK_MSG(mode == mode_of(getenv("FRT_HUGEPAGES")), "mode %d for FRT_HUGEPAGES=%s", mode,
              getenv("FRT_HUGEPAGES") ? getenv("FRT_HUGEPAGES") : "(unset)");
    test_arena();
    check_large(FRT_LARGE_SLAB, mode != FRT_HUGE_NONE);
    check_large(FRT_LARGE_WEIGHTS, mode == FRT_HUGE_ALL);
    if (mode == FRT_HUGE_ALL) test_large_reuse();
}

/* This test binary in a child process with FRT_HUGEPAGES=value (NULL: unset). */
static void child(const char *argv0, const char *value) {
    pid_t pid = fork();
    if (pid == 0) {
        if (value) setenv("FRT_HUGEPAGES", value, 1);
        else unsetenv("FRT_HUGEPAGES");
        execl("/proc/self/exe", argv0, "child", (char *)NULL);
        _exit(127);
    }
    int st = 0;
    CHECK_MSG(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "the FRT_HUGEPAGES=%s child failed (status %d)", value ? value : "(unset)", st);
}

int main(int argc, char **argv) {
    run_all();
    if (argc > 1 && !strcmp(argv[1], "child")) return t_failures ? 1 : 0;
    int mode = frt_huge_pages_mode();
    if (mode != FRT_HUGE_NONE) child(argv[0], NULL);
    if (mode != FRT_HUGE_SLAB) child(argv[0], "slab");
    if (mode != FRT_HUGE_ALL) child(argv[0], "all");
    TEST_MAIN_END();
}
