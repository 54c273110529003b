/* Helpers shared by operator implementations: attributes, messages, shapes. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "op.h"

static frt_status vfail(const frt_node *n, frt_status s, const char *fmt, va_list ap) {
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (n)
        return frt_error(s, "node '%s' (%s): %s", n->name, n->op_type, msg);
    return frt_error(s, "%s", msg);
}

frt_status frt_op_fail(const frt_op_ctx *c, frt_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(c ? c->node : NULL, s, fmt, ap);
    va_end(ap);
    return s;
}

frt_status frt_step_fail(const frt_step *st, frt_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(st ? st->ir : NULL, s, fmt, ap);
    va_end(ap);
    return s;
}

const frt_onnx_attr *frt_attr_find(const frt_node *n, const char *name) {
    for (size_t i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

int64_t frt_attr_int(const frt_node *n, const char *name, int64_t dflt) {
    const frt_onnx_attr *a = frt_attr_find(n, name);
    return a && a->type == FRT_ATTR_INT ? a->i : dflt;
}

float frt_attr_float(const frt_node *n, const char *name, float dflt) {
    const frt_onnx_attr *a = frt_attr_find(n, name);
    if (!a) return dflt;
    if (a->type == FRT_ATTR_FLOAT) return a->f;
    if (a->type == FRT_ATTR_INT) return (float)a->i;
    return dflt;
}

const char *frt_attr_string(const frt_node *n, const char *name, const char *dflt) {
    const frt_onnx_attr *a = frt_attr_find(n, name);
    return a && a->type == FRT_ATTR_STRING ? a->s : dflt;
}

const int64_t *frt_attr_ints(const frt_node *n, const char *name, size_t *count) {
    const frt_onnx_attr *a = frt_attr_find(n, name);
    if (!a || a->type != FRT_ATTR_INTS) {
        *count = 0;
        return NULL;
    }
    *count = a->n;
    return a->ints;
}

const float *frt_attr_floats(const frt_node *n, const char *name, size_t *count) {
    const frt_onnx_attr *a = frt_attr_find(n, name);
    if (!a || a->type != FRT_ATTR_FLOATS) {
        *count = 0;
        return NULL;
    }
    *count = a->n;
    return a->floats;
}

frt_status frt_op_check_arity(const frt_op_ctx *c, int lo, int hi, int olo, int ohi) {
    if (c->n_in < lo || c->n_in > hi)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "expects %d to %d inputs, has %d", lo, hi, c->n_in);
    if (c->n_out < olo || c->n_out > ohi)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "expects %d to %d outputs, has %d", olo, ohi,
                           c->n_out);
    return FRT_OK;
}

frt_status frt_op_check_input(const frt_op_ctx *c, int i, int32_t dtype) {
    if (i >= c->n_in || !c->in[i])
        return frt_op_fail(c, FRT_ERR_MALFORMED, "input %d is required but missing", i);
    if (dtype && c->in[i]->dtype != dtype)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "input %d has dtype %s, expected %s", i,
                           frt_dtype_name(c->in[i]->dtype), frt_dtype_name(dtype));
    if (c->in[i]->rank > FRT_MAX_RANK)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "input %d has rank %d > %d", i,
                           c->in[i]->rank, FRT_MAX_RANK);
    return FRT_OK;
}

frt_status frt_broadcast_shape(const frt_op_ctx *c, const frt_value *a, const frt_value *b,
                               int32_t *rank, int64_t *dims) {
    if (a->rank < 0 || b->rank < 0) {
        *rank = -1;
        return FRT_OK;
    }
    int r = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        int64_t d;
        if (da == db) d = da;
        else if (da == 1) d = db;
        else if (db == 1) d = da;
        else if (da < 0) d = db;
        else if (db < 0) d = da;
        else {
            char sa[128], sb[128];
            return frt_op_fail(c, FRT_ERR_SHAPE, "shapes %s and %s do not broadcast",
                               frt_shape_str(a, sa, sizeof sa), frt_shape_str(b, sb, sizeof sb));
        }
        dims[i] = d;
    }
    *rank = r;
    return FRT_OK;
}

int frt_norm_axis(int64_t axis, int rank) {
    if (axis < -(int64_t)rank || axis >= rank) return -1;
    return (int)(axis < 0 ? axis + rank : axis);
}

int64_t frt_value_get_int(const frt_value *v, int64_t i) {
    if (v->dtype == FRT_INT64) return ((const int64_t *)v->data)[i];
    if (v->dtype == FRT_INT32) return ((const int32_t *)v->data)[i];
    return 0;
}

#if defined(__GNUC__)
typedef uint8_t __attribute__((may_alias)) g_u8;
typedef uint16_t __attribute__((may_alias)) g_u16;
typedef uint32_t __attribute__((may_alias)) g_u32;
typedef uint64_t __attribute__((may_alias)) g_u64;
#else
typedef uint8_t g_u8;
typedef uint16_t g_u16;
typedef uint32_t g_u32;
typedef uint64_t g_u64;
#endif

void frt_gather_elems(char *dst, const char *src, int64_t n, int64_t stride, size_t esize) {
#define GATHER_LOOP(T)                                                                             \
    do {                                                                                           \
        T *d = (T *)dst;                                                                           \
        for (int64_t i = 0; i < n; i++) d[i] = *(const T *)(src + i * stride);                     \
    } while (0)
    switch (esize) {
    case 1: GATHER_LOOP(g_u8); break;
    case 2: GATHER_LOOP(g_u16); break;
    case 4: GATHER_LOOP(g_u32); break;
    case 8: GATHER_LOOP(g_u64); break;
    default:
        for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * esize, src + i * stride, esize);
    }
#undef GATHER_LOOP
}

/* A kernel class a selective build compiled out (FRT_KERNEL_BUILT): the load-time error. */
frt_status frt_op_kernel_missing(frt_op_ctx *c, const char *kernel) {
#ifdef FRT_OPS_SELECTION
    return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "kernel '%s' of op '%s' not in this build's "
                       "selection (%s)", kernel, c->node->op_type, FRT_SELECTION_FILE);
#else
    return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "kernel '%s' of op '%s' not built", kernel,
                       c->node->op_type);
#endif
}

/* A dtype case a selective build compiled out (or no kernel has): the load-time error. */
frt_status frt_op_dtype_missing(frt_op_ctx *c, int32_t dt) {
#ifdef FRT_OPS_SELECTION
    return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s of op '%s' not in this build's selection "
                       "(%s)", frt_dtype_name((frt_dtype)dt), c->node->op_type, FRT_SELECTION_FILE);
#else
    return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported", frt_dtype_name((frt_dtype)dt));
#endif
}
