/* Storage of sequence and optional values (see seq.h). */
#include "ir/seq.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

void frt_seq_reset(frt_seq *s, int32_t dtype, bool present) {
    s->n = 0;
    s->dtype = dtype;
    s->present = present;
}

/* Makes room for one more slot. */
static frt_status reserve(frt_seq *s) {
    if (s->n < s->cap) return FRT_OK;
    size_t c = s->cap ? 2 * s->cap : 4;
    frt_value *it = realloc(s->items, c * sizeof *it);
    if (!it) return frt_error(FRT_ERR_NO_MEMORY, "out of memory growing a sequence");
    s->items = it;
    void **b = realloc(s->bufs, c * sizeof *b);
    if (!b) return frt_error(FRT_ERR_NO_MEMORY, "out of memory growing a sequence");
    s->bufs = b;
    size_t *bc = realloc(s->buf_cap, c * sizeof *bc);
    if (!bc) return frt_error(FRT_ERR_NO_MEMORY, "out of memory growing a sequence");
    s->buf_cap = bc;
    for (size_t i = s->cap; i < c; i++) {
        s->bufs[i] = NULL;
        s->buf_cap[i] = 0;
        memset(&s->items[i], 0, sizeof s->items[i]);
    }
    s->cap = c;
    return FRT_OK;
}

/* Sets slot s->n to a plain tensor of the given shape (data not set); checks the shape. */
static frt_status new_item(frt_seq *s, int32_t dtype, int32_t rank, const int64_t *dims,
                           size_t *nb) {
    if (rank < 0 || rank > FRT_MAX_RANK)
        return frt_error(FRT_ERR_RUNTIME, "sequence element rank %d is out of range", (int)rank);
    frt_status st = reserve(s);
    if (st) return st;
    frt_value *v = &s->items[s->n];
    memset(v, 0, sizeof *v);
    frt_value_set_shape(v, dtype, rank, dims);
    if (v->numel < 0 || frt_dtype_size((frt_dtype)dtype) == 0)
        return frt_error(FRT_ERR_RUNTIME, "sequence element of dtype %s with an invalid shape",
                         frt_dtype_name((frt_dtype)dtype));
    *nb = frt_value_nbytes(v);
    if (*nb > ((size_t)1 << 38)) return frt_error(FRT_ERR_NO_MEMORY, "sequence element too large");
    return FRT_OK;
}

frt_status frt_seq_push(frt_seq *s, int32_t dtype, int32_t rank, const int64_t *dims, void **data) {
    size_t nb;
    frt_status st = new_item(s, dtype, rank, dims, &nb);
    if (st) return st;
    size_t i = s->n;
    if (s->buf_cap[i] < nb || !s->bufs[i]) {
        size_t sz = (nb + 63) & ~(size_t)63;
        void *p = aligned_alloc(64, sz ? sz : 64);
        if (!p)
            return frt_error(FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for a sequence element",
                             nb);
        free(s->bufs[i]);
        s->bufs[i] = p;
        s->buf_cap[i] = sz ? sz : 64;
    }
    s->items[i].data = s->bufs[i];
    s->n++;
    *data = s->items[i].data;
    return FRT_OK;
}

frt_status frt_seq_push_copy(frt_seq *s, const frt_value *t) {
    if (t->vtype || t->layout)
        return frt_error(FRT_ERR_INTERNAL, "sequence element is not a plain tensor");
    void *d;
    frt_status st = frt_seq_push(s, t->dtype, t->rank, t->dims, &d);
    if (st) return st;
    size_t nb = frt_value_nbytes(t);
    if (nb) memcpy(d, t->data, nb);
    return FRT_OK;
}

frt_status frt_seq_push_borrowed(frt_seq *s, const frt_value *t) {
    size_t nb;
    frt_status st = new_item(s, t->dtype, t->rank, t->dims, &nb);
    if (st) return st;
    s->items[s->n].data = t->data;
    s->n++;
    return FRT_OK;
}

void frt_seq_move(frt_seq *s, size_t from, size_t to) {
    if (from == to || from >= s->n || to >= s->n) return;
    frt_value v = s->items[from];
    void *b = s->bufs[from];
    size_t bc = s->buf_cap[from];
    if (from < to) {
        memmove(&s->items[from], &s->items[from + 1], (to - from) * sizeof *s->items);
        memmove(&s->bufs[from], &s->bufs[from + 1], (to - from) * sizeof *s->bufs);
        memmove(&s->buf_cap[from], &s->buf_cap[from + 1], (to - from) * sizeof *s->buf_cap);
    } else {
        memmove(&s->items[to + 1], &s->items[to], (from - to) * sizeof *s->items);
        memmove(&s->bufs[to + 1], &s->bufs[to], (from - to) * sizeof *s->bufs);
        memmove(&s->buf_cap[to + 1], &s->buf_cap[to], (from - to) * sizeof *s->buf_cap);
    }
    s->items[to] = v;
    s->bufs[to] = b;
    s->buf_cap[to] = bc;
}

void frt_seq_erase(frt_seq *s, size_t i) {
    if (i >= s->n) return;
    frt_seq_move(s, i, s->n - 1);
    s->n--;
}

frt_status frt_seq_copy(frt_seq *dst, const frt_seq *src) {
    if (dst == src) return FRT_OK;
    frt_seq_reset(dst, src->dtype, src->present);
    for (size_t i = 0; i < src->n; i++) {
        frt_status st = frt_seq_push_copy(dst, &src->items[i]);
        if (st) return st;
    }
    return FRT_OK;
}

void frt_seq_free(frt_seq *s) {
    if (!s) return;
    for (size_t i = 0; i < s->cap; i++)
        free(s->bufs[i]);
    free(s->items);
    free(s->bufs);
    free(s->buf_cap);
    memset(s, 0, sizeof *s);
}
