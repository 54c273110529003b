/* Ahead-of-time programs: the byte writer and the bounds-checked reader of src/ops/aot.h (the
 * table of ops with a writer / reader is aot_ops.c, so that the family files, which call these,
 * are not called from here). */
#include "aot.h"

#include <stdlib.h>
#include <string.h>


#if FRT_AOT_SAVE || FRT_AOT_LOAD

void frt_aot_put(frt_aot_w *w, const void *src, size_t n) {
    if (w->oom || !n) return;
    if (w->cap - w->n < n) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap - w->n < n) {
            if (cap > SIZE_MAX / 2) {
                w->oom = true;
                return;
            }
            cap *= 2;
        }
        unsigned char *p = realloc(w->p, cap);
        if (!p) {
            w->oom = true;
            return;
        }
        w->p = p;
        w->cap = cap;
    }
    memcpy(w->p + w->n, src, n);
    w->n += n;
}

void frt_aot_put_blob(frt_aot_w *w, const void *src, size_t n) {
    frt_aot_put_i64(w, (int64_t)n);
    if (n) frt_aot_put(w, src, n);
}

void frt_aot_get(frt_aot_r *r, void *dst, size_t n) {
    if (r->bad || r->n - r->at < n) {
        r->bad = true;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, r->p + r->at, n);
    r->at += n;
}

int32_t frt_aot_int_in(frt_aot_r *r, int32_t lo, int32_t hi) {
    int32_t v = frt_aot_i32(r);
    if (v < lo || v > hi) {
        r->bad = true;
        return lo;
    }
    return v;
}

void *frt_aot_blob(frt_aot_r *r, size_t want, size_t *n) {
    int64_t len = frt_aot_i64(r);
    *n = 0;
    if (r->bad || len < 0 || (uint64_t)len > r->n - r->at ||
        (want != (size_t)-1 && (size_t)len != want)) {
        r->bad = true;
        return NULL;
    }
    if (!len) return NULL;
    void *p = r->mem ? r->mem(r->mem_ctx, (size_t)len) : NULL;
    if (!p) {
        r->bad = true;
        return NULL;
    }
    memcpy(p, r->p + r->at, (size_t)len);
    r->at += (size_t)len;
    *n = (size_t)len;
    return p;
}

void *frt_aot_params(frt_aot_r *r, size_t n) {
    void *p = r->mem ? r->mem(r->mem_ctx, n) : NULL;
    if (p) memset(p, 0, n);
    return p;
}

frt_status frt_aot_unsupported(const frt_step *s, const char *why) {
    return frt_error(FRT_ERR_UNSUPPORTED,
                     "op '%s' (node '%s', kernel '%s'): no ahead-of-time writer for it (%s)",
                     s->ir ? s->ir->op_type : "?", s->ir ? s->ir->name : "?",
                     s->k.name ? s->k.name : "?", why);
}

#endif
