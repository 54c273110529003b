#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct frt_arena_chunk {
    frt_arena_chunk *next;
    size_t size; /* usable bytes at data */
    size_t used;
    unsigned char *data; /* right after the header, or a separate huge block (see below) */
};
#define HDR (((sizeof(frt_arena_chunk)) + 63) & ~(size_t)63)

/* One-off allocations of at least HUGE bytes (packed GEMM weights of transformers, large
 * tables) get their own 2 MiB-aligned block, advised as transparent huge pages: a GEMM that
 * streams its weights from memory then walks a few huge pages instead of hundreds of 4 KiB pages
 * (about 4% faster for 64 x 512 x 2048 with cold weights on the Zen 5 host). The block is rounded
 * up to 2 MiB; only the bytes handed out are touched. */
#define HUGE ((size_t)2 << 20)

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

void *frt_arena_alloc(frt_arena *a, size_t size, size_t align) {
    if (size > FRT_ARENA_MAX_ALLOC || align == 0 || align > 4096 || (align & (align - 1)))
        return NULL;
    if (size == 0) size = 1;
    frt_arena_chunk *c = a->head;
    if (c) {
        size_t off = (c->used + align - 1) & ~(align - 1);
        if (off <= c->size && c->size - off >= size) {
            c->used = off + size;
            a->total += size;
            return memset(c->data + off, 0, size);
        }
    }
    size_t need = size + (align > 64 ? align : 0); /* data is 64-byte aligned */
    size_t cap = need > CHUNK_MIN ? need : CHUNK_MIN;
    frt_arena_chunk *n;
    if (need >= HUGE && need <= SIZE_MAX - HUGE) {
        size_t bytes = (need + HUGE - 1) & ~(HUGE - 1);
        n = malloc(sizeof *n);
        unsigned char *d = n ? aligned_alloc(HUGE, bytes) : NULL;
        if (!d) {
            free(n);
            return NULL;
        }
#ifdef MADV_HUGEPAGE
        (void)madvise(d, bytes, MADV_HUGEPAGE); /* a hint: no huge pages is fine */
#endif
        n->data = d;
    } else {
        if (cap > SIZE_MAX - HDR - 63) return NULL;
        n = aligned_alloc(64, (HDR + cap + 63) & ~(size_t)63);
        if (!n) return NULL;
        n->data = (unsigned char *)n + HDR;
    }
    n->size = cap;
    n->used = 0;
    /* A large one-off allocation goes behind the head so the head's free space stays usable. */
    if (c && need > CHUNK_MIN) {
        n->next = c->next;
        c->next = n;
    } else {
        n->next = c;
        a->head = n;
    }
    size_t off = 0; /* data is 64-aligned; align up for larger alignments */
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
        if (c->data != (unsigned char *)c + HDR) free(c->data);
        free(c);
        c = n;
    }
    a->head = NULL;
    a->total = 0;
}
