#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct frt_arena_chunk {
    frt_arena_chunk *next;
    size_t size; /* usable bytes after the header */
    size_t used;
    _Alignas(64) unsigned char data[];
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
    size_t need = size + align;
    size_t cap = need > CHUNK_MIN ? need : CHUNK_MIN;
    frt_arena_chunk *n = aligned_alloc(64, (sizeof *n + cap + 63) & ~(size_t)63);
    if (!n) return NULL;
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
        free(c);
        c = n;
    }
    a->head = NULL;
    a->total = 0;
}
