/* Run-time storage of sequence and optional values (frt_value.vtype != FRT_VT_TENSOR).
 *
 * During a run, such a value's data points to an frt_seq owned by the runtime (one per value of a
 * block, reused by every run and freed with the runtime). It holds tensors of one dtype:
 *   sequence            present, n tensors (n may be 0)
 *   optional tensor     present with n == 1, or not present (n == 0)
 *   optional sequence   present with n tensors, or not present
 * items[i] is a plain tensor with known dims; its data is either the slot's own buffer bufs[i]
 * (written by kernels; kept and grown, never shrunk, so steady state allocates nothing) or memory
 * borrowed from the caller (graph inputs), which is only read. Reordering items (insert, erase)
 * moves a slot's buffer with it.
 */
#ifndef FRT_IR_SEQ_H
#define FRT_IR_SEQ_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/ir.h"

typedef struct frt_seq {
    int32_t dtype;    /* element dtype */
    bool present;     /* optional: holds a value; always true for a sequence once written */
    size_t n;         /* tensors held */
    size_t cap;       /* slots allocated */
    frt_value *items; /* cap slots, n in use */
    void **bufs;      /* per slot: owned 64-aligned buffer or NULL */
    size_t *buf_cap;  /* per slot: bytes of bufs[i] */
} frt_seq;

/* The frt_seq of a container value during a run (NULL if v is a tensor or has none). */
static inline frt_seq *frt_seq_of(const frt_value *v) {
    return v && v->vtype ? (frt_seq *)v->data : NULL;
}

/* Empties s (buffers kept) and sets its dtype and presence. */
void frt_seq_reset(frt_seq *s, int32_t dtype, bool present);
/* Appends a tensor of the given shape in a slot's own buffer; *data receives its (uninitialized)
 * bytes. Fails (error set) on a bad shape or out of memory. */
frt_status frt_seq_push(frt_seq *s, int32_t dtype, int32_t rank, const int64_t *dims, void **data);
/* Appends a copy of tensor t. */
frt_status frt_seq_push_copy(frt_seq *s, const frt_value *t);
/* Appends t without copying: the item reads t->data (caller memory that outlives the run). */
frt_status frt_seq_push_borrowed(frt_seq *s, const frt_value *t);
/* Moves item `from` to position `to` (both < n), shifting the items in between. */
void frt_seq_move(frt_seq *s, size_t from, size_t to);
/* Removes item i (< n); its buffer stays for reuse. */
void frt_seq_erase(frt_seq *s, size_t i);
/* Makes dst a deep copy of src (dtype, presence and tensors); nothing when dst == src. */
frt_status frt_seq_copy(frt_seq *dst, const frt_seq *src);
/* Frees the buffers and arrays of s (not s itself) and zeroes it. */
void frt_seq_free(frt_seq *s);

#endif
