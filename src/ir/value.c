/* Value and shape helpers (the dtype table is in src/util/dtype.c). */
#include <stdio.h>
#include <string.h>

#include "ir.h"

int64_t frt_shape_numel(const int64_t *dims, int rank) {
    int64_t n = 1;
    if (rank < 0) return -1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) return -1;
        if (dims[i] != 0 && n > INT64_MAX / dims[i]) return -1;
        n *= dims[i];
    }
    return n;
}

bool frt_shape_known(const frt_value *v) {
    if (v->vtype) return true; /* a container has no shape of its own */
    return v->rank >= 0 && frt_shape_numel(v->dims, v->rank) >= 0;
}

void frt_value_set_shape(frt_value *v, int32_t dtype, int32_t rank, const int64_t *dims) {
    v->dtype = dtype;
    v->rank = rank;
    for (int i = 0; i < rank && i < FRT_MAX_RANK; i++) v->dims[i] = dims[i];
    v->numel = rank < 0 ? -1 : frt_shape_numel(v->dims, rank);
}

size_t frt_value_nbytes(const frt_value *v) {
    if (v->vtype) return 0; /* containers live in an frt_seq, never in planned memory */
    if (v->layout) return frt_shape_known(v) ? v->layout->nbytes(v) : 0;
    int64_t n = frt_shape_numel(v->dims, v->rank);
    return n < 0 ? 0 : (size_t)n * frt_dtype_size(v->dtype);
}

void frt_value_set_container(frt_value *v, int32_t vtype, int32_t dtype) {
    v->vtype = vtype;
    v->dtype = dtype;
    v->rank = 0;
    v->numel = 0;
    v->layout = FRT_LAYOUT_PLAIN;
}

const char *frt_vtype_name(int32_t vtype) {
    switch (vtype) {
    case FRT_VT_TENSOR: return "tensor";
    case FRT_VT_SEQUENCE: return "sequence";
    case FRT_VT_OPT_TENSOR: return "optional tensor";
    case FRT_VT_OPT_SEQUENCE: return "optional sequence";
    default: return "unknown value type";
    }
}

const char *frt_ints_str(const int64_t *v, int n, char *buf, size_t cap) {
    size_t o = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < n && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%lld", i ? "," : "", (long long)v[i]);
    if (o < cap) snprintf(buf + o, cap - o, "]");
    return buf;
}

const char *frt_layout_name(const frt_layout *l) { return l ? l->name : "plain"; }

const char *frt_shape_str(const frt_value *v, char *buf, size_t cap) {
    size_t o = 0;
    if (v->rank < 0) {
        snprintf(buf, cap, "[?]");
        return buf;
    }
    o += (size_t)snprintf(buf + o, cap - o, "[");
    for (int i = 0; i < v->rank && o < cap; i++) {
        if (v->dims[i] < 0)
            o += (size_t)snprintf(buf + o, cap - o, "%s?", i ? "," : "");
        else
            o += (size_t)snprintf(buf + o, cap - o, "%s%lld", i ? "," : "", (long long)v->dims[i]);
    }
    if (o < cap) snprintf(buf + o, cap - o, "]");
    return buf;
}
