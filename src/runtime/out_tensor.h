/* The description half of handing a value out as an frt_tensor (runtime.c and aot_load.c): dtype,
 * rank, shape (unused dims zero) and byte size; the caller sets data and _owner. */
#ifndef FRT_RUNTIME_OUT_TENSOR_H
#define FRT_RUNTIME_OUT_TENSOR_H

#include <string.h>

#include "flatrt.h"
#include "ir/ir.h"

static inline void frt_out_tensor_describe(frt_tensor *t, const frt_value *v, size_t nbytes) {
    t->dtype = (frt_dtype)v->dtype;
    t->rank = v->rank;
    memset(t->shape, 0, sizeof t->shape);
    memcpy(t->shape, v->dims, (size_t)v->rank * sizeof(int64_t));
    t->nbytes = nbytes;
}

#endif
