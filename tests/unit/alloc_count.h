/* Counts every heap allocation of the process, for tests that prove steady-state runs allocate
 * nothing. Include in exactly one file of a test program. Plain builds interpose malloc and
 * friends (glibc exports __libc_* for this); under AddressSanitizer, which owns malloc, the
 * sanitizer's malloc hook counts; under ThreadSanitizer nothing is counted and
 * alloc_counting == 0, so checks must be written as `!alloc_counting || got == 0`.
 *   long before = atomic_load(&g_allocs); ...; long got = atomic_load(&g_allocs) - before; */
#ifndef FRT_TEST_ALLOC_COUNT_H
#define FRT_TEST_ALLOC_COUNT_H

#include <errno.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_long g_allocs;
/* While g_alloc_exempt > 0 (a test sets it around calls into a library it does not hold to the
 * rule), allocations are counted in g_exempt_allocs instead of g_allocs. */
static atomic_int g_alloc_exempt;
static atomic_long g_exempt_allocs;
/* While g_alloc_trace > 0 (a test sets it around the runs that must not allocate, and only when
 * T_ALLOC_TRACE=1 is in the environment), each counted allocation prints its call stack to stderr:
 * resolve it with addr2line -f -e <binary>. */
static atomic_int g_alloc_trace;
static _Thread_local int t_in_trace;
static inline void t_count_alloc(void) {
    if (atomic_load(&g_alloc_exempt) > 0) {
        atomic_fetch_add(&g_exempt_allocs, 1);
        return;
    }
    atomic_fetch_add(&g_allocs, 1);
    if (atomic_load(&g_alloc_trace) > 0 && !t_in_trace) {
        t_in_trace = 1;
        void *pc[24];
        int depth = backtrace(pc, 24);
        fprintf(stderr, "counted allocation at:\n");
        backtrace_symbols_fd(pc, depth, 2);
        t_in_trace = 0;
    }
}
/* Arms tracing when T_ALLOC_TRACE=1 (backtrace is called once first: its first call allocates). */
static inline void t_alloc_trace(int on) {
    const char *e = getenv("T_ALLOC_TRACE");
    if (!e || e[0] != '1') return;
    if (on) {
        void *pc[2];
        backtrace(pc, 2);
    }
    atomic_fetch_add(&g_alloc_trace, on ? 1 : -1);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ALLOC_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define T_ALLOC_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define T_ALLOC_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define T_ALLOC_TSAN 1
#endif

#if defined(T_ALLOC_ASAN)
static const int alloc_counting __attribute__((unused)) = 1;
/* from the sanitizer allocator interface (declared here: gcc ships no header for it) */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));
static void count_malloc(const volatile void *p, size_t n) {
    (void)p, (void)n;
    t_count_alloc();
}
static void ignore_free(const volatile void *p) { (void)p; }
__attribute__((constructor)) static void install_hooks(void) {
    __sanitizer_install_malloc_and_free_hooks(count_malloc, ignore_free);
}
#elif defined(T_ALLOC_TSAN)
static const int alloc_counting __attribute__((unused)) = 0;
#else
static const int alloc_counting __attribute__((unused)) = 1;
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);
void *malloc(size_t n) { t_count_alloc(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { t_count_alloc(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { t_count_alloc(); return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
void *aligned_alloc(size_t al, size_t n) { t_count_alloc(); return __libc_memalign(al, n); }
void *memalign(size_t al, size_t n) { t_count_alloc(); return __libc_memalign(al, n); }
int posix_memalign(void **p, size_t al, size_t n) {
    t_count_alloc();
    *p = __libc_memalign(al, n);
    return *p ? 0 : ENOMEM;
}
#endif

#endif
