/* Bump allocator: many small allocations freed together. Used for the decoded model, the IR and
 * kernel parameters, all of which live exactly as long as their frt_model. */
#ifndef FRT_UTIL_ARENA_H
#define FRT_UTIL_ARENA_H

#include <stddef.h>

typedef struct frt_arena_chunk frt_arena_chunk;
typedef struct frt_arena {
    frt_arena_chunk *head;
    size_t total; /* bytes handed out, for statistics */
} frt_arena;

void frt_arena_init(frt_arena *a);
/* Zeroed memory aligned to `align` (a power of two <= 4096), or NULL on failure or on a size
 * over FRT_ARENA_MAX_ALLOC. */
void *frt_arena_alloc(frt_arena *a, size_t size, size_t align);
/* n * size bytes with overflow check, aligned to 64. */
void *frt_arena_array(frt_arena *a, size_t n, size_t size);
/* NUL-terminated copy of len bytes (which need not be NUL-terminated). */
char *frt_arena_strndup(frt_arena *a, const char *s, size_t len);
char *frt_arena_strdup(frt_arena *a, const char *s);
void frt_arena_free(frt_arena *a);

#define FRT_ARENA_MAX_ALLOC ((size_t)1 << 40)

#endif
