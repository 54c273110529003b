/* dtype table and value/shape helpers. */
#include <stdio.h>
#include <string.h>

#include "ir.h"

const char *frt_dtype_name(frt_dtype t) {
    switch (t) {
    case FRT_FLOAT32: return "float32";
    case FRT_UINT8: return "uint8";
    case FRT_INT8: return "int8";
    case FRT_UINT16: return "uint16";
    case FRT_INT16: return "int16";
    case FRT_INT32: return "int32";
    case FRT_INT64: return "int64";
    case FRT_STRING: return "string";
    case FRT_BOOL: return "bool";
    case FRT_FLOAT16: return "float16";
    case FRT_FLOAT64: return "float64";
    case FRT_UINT32: return "uint32";
    case FRT_UINT64: return "uint64";
    case FRT_DTYPE_UNDEFINED: return "undefined";
    }
    return "unknown";
}

size_t frt_dtype_size(frt_dtype t) {
    switch (t) {
    case FRT_UINT8: case FRT_INT8: case FRT_BOOL: return 1;
    case FRT_UINT16: case FRT_INT16: case FRT_FLOAT16: return 2;
    case FRT_FLOAT32: case FRT_INT32: case FRT_UINT32: return 4;
    case FRT_INT64: case FRT_FLOAT64: case FRT_UINT64: return 8;
    default: return 0;
    }
}

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
    return v->rank >= 0 && frt_shape_numel(v->dims, v->rank) >= 0;
}

size_t frt_value_nbytes(const frt_value *v) {
    int64_t n = frt_shape_numel(v->dims, v->rank);
    return n < 0 ? 0 : (size_t)n * frt_dtype_size(v->dtype);
}

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
