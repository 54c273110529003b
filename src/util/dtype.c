/* The dtype table: names and element sizes of frt_dtype (declared in flatrt.h). Used by every
 * layer, from the ONNX decoder up. */
#include <stddef.h>

#include "flatrt.h"

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
    case FRT_BFLOAT16: return "bfloat16";
    case FRT_DTYPE_UNDEFINED: return "undefined";
    }
    return "unknown";
}

size_t frt_dtype_size(frt_dtype t) {
    switch (t) {
    case FRT_UINT8: case FRT_INT8: case FRT_BOOL: return 1;
    case FRT_UINT16: case FRT_INT16: case FRT_FLOAT16: case FRT_BFLOAT16: return 2;
    case FRT_FLOAT32: case FRT_INT32: case FRT_UINT32: return 4;
    case FRT_INT64: case FRT_FLOAT64: case FRT_UINT64: return 8;
    default: return 0;
    }
}
