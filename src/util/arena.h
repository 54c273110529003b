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

/* Memory for a large buffer that lives long and is read in every run, freed with free(): the
 * planner's slab (FRT_LARGE_SLAB) or the model arena's large chunks of packed weights
 * (FRT_LARGE_WEIGHTS). A size of FRT_HUGE_MIN bytes or more that the huge-page mode covers is
 * rounded up to whole 2 MiB at 2 MiB alignment and advised for transparent huge pages (Linux
 * MADV_HUGEPAGE; the host's THP "madvise" mode), so that a run's working set takes a few dozen
 * TLB entries instead of thousands of 4 KiB pages; otherwise it is 64-byte aligned. *cap (may be
 * NULL) gets the usable size (>= size). NULL when out of memory.
 *
 * The mode (frt_huge_pages_mode, from FRT_HUGEPAGES, read once per process): unset or "0",
 * none (FRT_HUGE_NONE); "slab", the slab only (FRT_HUGE_SLAB: at most one more 2 MiB page per
 * runtime, and the slab's untouched parts: squeezenet1_1 +4.4 MB); "all" (or "1"), weights too
 * (FRT_HUGE_ALL: up to a fifth more peak RSS, as chunks' partly used pages become resident
 * whole). Off by default: the speed gain measured on Zen 3 (2-6%) did not hold up against the
 * noise on Zen 5. docs/memory.md has the measurements. */
#define FRT_HUGE_MIN ((size_t)256 << 10)
typedef enum { FRT_LARGE_SLAB, FRT_LARGE_WEIGHTS } frt_large_use;
enum { FRT_HUGE_NONE, FRT_HUGE_SLAB, FRT_HUGE_ALL };
int frt_huge_pages_mode(void);
void *frt_alloc_large(size_t size, frt_large_use use, size_t *cap);

#define FRT_ARENA_MAX_ALLOC ((size_t)1 << 40)

#endif
