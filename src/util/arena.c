#include "arena.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

struct frt_arena_chunk {
    frt_arena_chunk *next;
    size_t size; /* usable bytes at data */
    size_t used;
    bool large;  /* from frt_alloc_large: later large allocations may fill its rest */
    unsigned char *data; /* data_in, or a large chunk's own frt_alloc_large block */
    _Alignas(64) unsigned char data_in[];
};

/* Smallest chunk. The allocation-failure test builds this file with a tiny value, so that almost
 * every arena allocation is a heap allocation that can fail. */
#ifndef FRT_ARENA_CHUNK_MIN
#define FRT_ARENA_CHUNK_MIN (64 * 1024)
#endif
#define CHUNK_MIN ((size_t)FRT_ARENA_CHUNK_MIN)

void frt_arena_init(frt_arena *a) {
    a->head = NULL;
    a->total = 0;
}

int frt_huge_pages_mode(void) {
    static atomic_int g_mode = -1; /* (every thread computes the same value) */
    int mode = atomic_load_explicit(&g_mode, memory_order_relaxed);
    if (mode < 0) {
        const char *e = getenv("FRT_HUGEPAGES");
        mode = !e || !*e || !strcmp(e, "0")          ? FRT_HUGE_NONE
               : !strcmp(e, "slab")                   ? FRT_HUGE_SLAB
               : !strcmp(e, "all") || !strcmp(e, "1") ? FRT_HUGE_ALL
                                                       : FRT_HUGE_NONE;
        atomic_store_explicit(&g_mode, mode, memory_order_relaxed);
    }
    return mode;
}

void *frt_alloc_large(size_t size, frt_large_use use, size_t *cap) {
    int mode = frt_huge_pages_mode();
    bool huge = mode == FRT_HUGE_ALL || (mode == FRT_HUGE_SLAB && use == FRT_LARGE_SLAB);
    size_t hp = (size_t)2 << 20, sz = (size + 63) & ~(size_t)63;
    if (sz < size) return NULL;
    if (sz == 0) sz = 64;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (huge && size >= FRT_HUGE_MIN && size <= SIZE_MAX - hp) {
        sz = (size + hp - 1) & ~(hp - 1);
        void *p = aligned_alloc(hp, sz);
        if (p) madvise(p, sz, MADV_HUGEPAGE); /* advice only: its failure changes nothing */
        if (p && cap) *cap = sz;
        return p;
    }
#else
    (void)hp;
#endif
    void *p = aligned_alloc(64, sz);
    if (p && cap) *cap = sz;
    return p;
}

/* Room for size bytes at align in c: the offset, or SIZE_MAX (aligned as an address: data is
   only 64-aligned). */
static size_t fit(const frt_arena_chunk *c, size_t size, size_t align) {
    uintptr_t at = (uintptr_t)c->data + c->used;
    size_t off = (size_t)(((at + align - 1) & ~(uintptr_t)(align - 1)) - (uintptr_t)c->data);
    return off <= c->size && c->size - off >= size ? off : SIZE_MAX;
}

void *frt_arena_alloc(frt_arena *a, size_t size, size_t align) {
    if (size > FRT_ARENA_MAX_ALLOC || align == 0 || align > 4096 || (align & (align - 1)))
        return NULL;
    if (size == 0) size = 1;
    frt_arena_chunk *c = a->head;
    size_t off;
    if (c && (off = fit(c, size, align)) != SIZE_MAX) {
        c->used = off + size;
        a->total += size;
        return memset(c->data + off, 0, size);
    }
    size_t need = size + align;
    /* a large allocation (packed weights): the rest of an earlier large chunk, else a new one
       from frt_alloc_large (huge pages) whose rest later large ones fill */
    bool large = need >= FRT_HUGE_MIN;
    if (large)
        for (frt_arena_chunk *k = c; k; k = k->next)
            if (k->large && (off = fit(k, size, align)) != SIZE_MAX) {
                k->used = off + size;
                a->total += size;
                return memset(k->data + off, 0, size);
            }
    size_t cap = need > CHUNK_MIN ? need : CHUNK_MIN;
    frt_arena_chunk *n;
    if (large) {
        /* the header apart from the block, so that an allocation of whole 2 MiB pages (the
           Winograd layers' transformed weights: 16 MiB in resnet18) is a block of exactly
           that, not one more huge page for the header (each touched huge page is resident) */
        size_t got = 0;
        n = aligned_alloc(_Alignof(frt_arena_chunk), sizeof *n); /* (size: a multiple of it) */
        if (!n) return NULL;
        /* (64-aligned at least) */
        n->data = frt_alloc_large(align > 64 ? need : size, FRT_LARGE_WEIGHTS, &got);
        if (!n->data) {
            free(n);
            return NULL;
        }
        cap = got;
    } else {
        n = aligned_alloc(64, (sizeof *n + cap + 63) & ~(size_t)63);
        if (n) n->data = n->data_in;
    }
    if (!n) return NULL;
    n->size = cap;
    n->used = 0;
    n->large = large;
    /* A large one-off allocation goes behind the head so the head's free space stays usable. */
    if (c && need > CHUNK_MIN) {
        n->next = c->next;
        c->next = n;
    } else {
        n->next = c;
        a->head = n;
    }
    /* data is 64-aligned; align up for larger alignments */
    uintptr_t p = (uintptr_t)n->data;
    off = ((p + align - 1) & ~(uintptr_t)(align - 1)) - p;
    n->used = off + size;
    a->total += size;
    return memset(n->data + off, 0, size);
}

void *frt_arena_array(frt_arena *a, size_t n, size_t size) {
    if (size && n > FRT_ARENA_MAX_ALLOC / size) return NULL;
    return frt_arena_alloc(a, n * size, 64);
}

char *frt_arena_strndup(frt_arena *a, const char *s, size_t len) {
    char *d = frt_arena_alloc(a, len + 1, 1);
    if (d && len) memcpy(d, s, len);
    return d;
}

char *frt_arena_strdup(frt_arena *a, const char *s) { return frt_arena_strndup(a, s, strlen(s)); }

void frt_arena_free(frt_arena *a) {
    frt_arena_chunk *c = a->head;
    while (c) {
        frt_arena_chunk *n = c->next;
        if (c->large) free(c->data);
        free(c);
        c = n;
    }
    a->head = NULL;
    a->total = 0;
}
