/* Index ops: GatherElements GatherND ScatterElements Scatter ScatterND, and the ops whose output
 * size depends on the data: NonZero Compress Unique.
 *
 * Every kernel moves elements as bytes (any dtype with a fixed element size); only the scatter
 * reductions (add, mul, max, min) and Unique's ordering interpret values, through dtype_util.h.
 * Indices are int32 or int64, negative values count from the end, and every index is range-checked
 * when the kernel runs: an index out of range fails the step with FRT_ERR_RUNTIME naming the
 * index, its position and the allowed range.
 *
 * NonZero, Compress and Unique are FRT_K_DYNAMIC_OUT kernels: they get their outputs' storage with
 * frt_exec_alloc_output once they know the sizes. Their infer computes the sizes from the input
 * data when it is there (constants at load: the node folds) and leaves them -1 otherwise (Unique
 * always does: counting distinct values needs memory infer may not allocate).
 */
#include <limits.h>
#include <string.h>

#include "dtype_util.h"
#include "op.h"

/* ---------------------------------------------------------------------------------------------- */
/* Shared helpers                                                                                  */
/* ---------------------------------------------------------------------------------------------- */

/* bfloat16's ONNX dtype number (FRT_BFLOAT16 once flatrt.h names it; frt_dtype_size() of an
 * unknown dtype is 0, so until then selection refuses it like any unsized dtype). */
#define DT_BF16 16

static bool is_index_dtype(int32_t t) { return t == FRT_INT64 || t == FRT_INT32; }

static frt_status check_indices(const frt_op_ctx *c, int i) {
    frt_status st = frt_op_check_input(c, i, 0);
    if (st) return st;
    if (!is_index_dtype(c->in[i]->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "indices have dtype %s (int32 or int64 needed)",
                           frt_dtype_name((frt_dtype)c->in[i]->dtype));
    return FRT_OK;
}

static frt_status check_fixed_size(const frt_op_ctx *c, int32_t dtype) {
    if (frt_dtype_size((frt_dtype)dtype) == 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                           frt_dtype_name((frt_dtype)dtype));
    return FRT_OK;
}

static int64_t prod_range(const int64_t *dims, int lo, int hi) {
    int64_t p = 1;
    for (int i = lo; i < hi; i++) p *= dims[i];
    return p;
}

/* Row-major element strides of dims[0..rank). */
static void strides_of(const int64_t *dims, int rank, int64_t *st) {
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= dims[d];
    }
}

static inline int64_t ld_index(const frt_value *ix, int64_t j) {
    return ix->dtype == FRT_INT64 ? ((const int64_t *)ix->data)[j]
                                  : (int64_t)((const int32_t *)ix->data)[j];
}

/* Index j of ix, normalized to [0, n); FRT_ERR_RUNTIME naming it when outside [-n, n). */
static inline frt_status get_index(const frt_step *s, const frt_value *ix, int64_t j, int64_t n,
                                   int axis, int64_t *out) {
    int64_t v = ld_index(ix, j);
    if (v < -n || v >= n)
        return frt_step_fail(s, FRT_ERR_RUNTIME,
                             "index %lld (at position %lld of the indices) is out of range "
                             "[%lld, %lld) for axis %d of size %lld",
                             (long long)v, (long long)j, (long long)-n, (long long)n, axis,
                             (long long)n);
    *out = v < 0 ? v + n : v;
    return FRT_OK;
}

static inline void copy_elem(char *dst, const char *src, size_t es) {
    switch (es) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, es);
    }
}

/* Storage of run-time-sized output j into *out. In a runtime: frt_exec_alloc_output (its
 * failures are reported as FRT_ERR_NO_MEMORY, with the runtime's message). Without one (folding
 * at load, op tests), infer has already shaped the output from the input data and it has
 * storage: the sizes must agree. */
static frt_status dyn_output(frt_exec *x, const frt_step *s, int j, int32_t dtype, int rank,
                             const int64_t *dims, void *out) {
    void *d;
    if (x->svc) {
        d = frt_exec_alloc_output(x, s, j, dtype, rank, dims);
        if (!d) return FRT_ERR_NO_MEMORY;
    } else {
        frt_value *v = &x->values[s->out[j]];
        bool same = v->data && v->dtype == dtype && v->rank == rank;
        for (int k = 0; same && k < rank; k++) same = v->dims[k] == dims[k];
        if (!same)
            return frt_step_fail(s, FRT_ERR_INTERNAL, "output %d has no storage of the run-time "
                                 "size", j);
        d = v->data;
    }
    memcpy(out, &d, sizeof d);
    return FRT_OK;
}

/* Scatter reductions. */
enum { RED_NONE = 0, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static int parse_reduction(const char *r) {
    if (!strcmp(r, "none")) return RED_NONE;
    if (!strcmp(r, "add")) return RED_ADD;
    if (!strcmp(r, "mul")) return RED_MUL;
    if (!strcmp(r, "max")) return RED_MAX;
    if (!strcmp(r, "min")) return RED_MIN;
    return -1;
}

/* Reads the 'reduction' attribute: add/mul since opset 16, max/min since 18. */
static frt_status reduction_attr(const frt_op_ctx *c, int *red) {
    const char *r = frt_attr_string(c->node, "reduction", "none");
    *red = parse_reduction(r);
    int need = *red == RED_NONE ? 0 : *red <= RED_MUL ? 16 : 18;
    if (*red < 0 || c->opset < need)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "reduction '%s' is not defined at opset %lld",
                           r, (long long)c->opset);
    return FRT_OK;
}

/* dst[i] = dst[i] (red) src[i] on element i of dtype dt; RED_NONE copies. Integers wrap on
 * overflow (computed as unsigned); bool: add = or, mul = and. */
static void reduce_elem(int32_t dt, void *dst, const void *src, int red, size_t es) {
    if (red == RED_NONE) {
        copy_elem(dst, src, es);
        return;
    }
    if (frt_dtype_is_float(dt) || dt == DT_BF16) {
        double a, b;
        if (dt == DT_BF16) {
            a = frt_bf16_to_float(*(const uint16_t *)dst);
            b = frt_bf16_to_float(*(const uint16_t *)src);
        } else {
            a = frt_ld_f64(dt, dst, 0);
            b = frt_ld_f64(dt, src, 0);
        }
        double r = red == RED_ADD ? a + b : red == RED_MUL ? a * b
                 : red == RED_MAX ? (a >= b || a != a ? a : b)
                                  : (a <= b || a != a ? a : b);
        if (dt == DT_BF16) *(uint16_t *)dst = frt_float_to_bf16((float)r);
        else if (dt == FRT_FLOAT32) *(float *)dst = (float)r; /* float math via double: exact
                                                                  for add/mul of two floats
                                                                  up to the final rounding */
        else frt_st_f64(dt, dst, 0, r);
        return;
    }
    if (dt == FRT_UINT64) {
        uint64_t a = *(const uint64_t *)dst, b = *(const uint64_t *)src;
        uint64_t r = red == RED_ADD ? a + b : red == RED_MUL ? a * b
                   : red == RED_MAX ? (a > b ? a : b) : (a < b ? a : b);
        *(uint64_t *)dst = r;
        return;
    }
    int64_t a = frt_ld_i64(dt, dst, 0), b = frt_ld_i64(dt, src, 0);
    int64_t r;
    if (dt == FRT_BOOL) {
        r = red == RED_ADD || red == RED_MAX ? (a | b) : (a & b);
    } else {
        r = red == RED_ADD ? (int64_t)((uint64_t)a + (uint64_t)b)
          : red == RED_MUL ? (int64_t)((uint64_t)a * (uint64_t)b)
          : red == RED_MAX ? (a > b ? a : b) : (a < b ? a : b);
    }
    frt_st_i64(dt, dst, 0, r);
}

/* ---------------------------------------------------------------------------------------------- */
/* GatherElements, ScatterElements, Scatter                                                        */
/* ---------------------------------------------------------------------------------------------- */

/* Shared by the element-wise gather and scatters:
 *   data [d0..d_{r-1}], indices [i0..i_{r-1}] (same rank, i_k <= d_k for k != axis; any size on
 *   axis for gather, <= d_axis is not required of indices), updates of indices' shape (scatter).
 * GatherElements: out = indices shape, out[p] = data[p with p_axis := indices[p]].
 * ScatterElements: out = data, then out[p with p_axis := indices[p]] (red)= updates[p], in order. */
typedef struct elems_params {
    int64_t axis; /* as given: [-r, r) */
    int red;      /* RED_* (scatter) */
} elems_params;

static frt_status elems_axis(const frt_op_ctx *c, int rank, int *axis) {
    int64_t a = frt_attr_int(c->node, "axis", 0);
    *axis = frt_norm_axis(a, rank);
    if (*axis < 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d", (long long)a,
                           rank);
    return FRT_OK;
}

/* Checks indices against data: same rank, dims <= data's off the axis (when known). */
static frt_status elems_check(const frt_op_ctx *c, const frt_value *x, const frt_value *ix,
                              int axis) {
    if (ix->rank != x->rank)
        return frt_op_fail(c, FRT_ERR_SHAPE, "indices have rank %d, data has rank %d", ix->rank,
                           x->rank);
    for (int d = 0; d < x->rank; d++) {
        if (d == axis || x->dims[d] < 0 || ix->dims[d] < 0) continue;
        if (ix->dims[d] > x->dims[d])
            return frt_op_fail(c, FRT_ERR_SHAPE,
                               "indices dim %d is %lld, larger than data's %lld", d,
                               (long long)ix->dims[d], (long long)x->dims[d]);
    }
    return FRT_OK;
}

static frt_status gather_elements_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 2, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0)) || (st = check_indices(c, 1))) return st;
    const frt_value *x = c->in[0], *ix = c->in[1];
    if (x->rank >= 0 && x->rank < 1) return frt_op_fail(c, FRT_ERR_SHAPE, "data must have rank >= 1");
    if (x->rank >= 0 && ix->rank >= 0) {
        int axis;
        if ((st = elems_axis(c, x->rank, &axis)) || (st = elems_check(c, x, ix, axis))) return st;
    }
    frt_op_set_shape(c->out[0], x->dtype, ix->rank, ix->rank >= 0 ? ix->dims : NULL);
    return FRT_OK;
}

/* Walks every position p of indices (rank r, dims idims) in row-major order, with the data
 * offset of p off the axis (data strides ds) and the axis stride. Calls BODY with `j` (linear
 * position in indices) and `base` (data element offset excluding the axis coordinate). */
#define ELEMS_WALK(r, idims, ds, axis, BODY)                                                       \
    do {                                                                                           \
        int64_t n_ = prod_range(idims, 0, r);                                                      \
        int64_t co_[FRT_MAX_RANK] = {0};                                                           \
        int64_t base = 0;                                                                          \
        for (int64_t j = 0; j < n_; j++) {                                                         \
            BODY;                                                                                  \
            for (int k_ = (r) - 1; k_ >= 0; k_--) {                                                \
                int64_t sk_ = k_ == (axis) ? 0 : (ds)[k_];                                         \
                base += sk_;                                                                       \
                if (++co_[k_] < (idims)[k_]) break;                                                \
                base -= sk_ * (idims)[k_];                                                         \
                co_[k_] = 0;                                                                       \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static frt_status elems_runtime_check(const frt_step *s, const frt_value *x, const frt_value *ix,
                                      int axis) {
    if (ix->rank != x->rank) return frt_step_fail(s, FRT_ERR_SHAPE, "indices rank differs");
    for (int d = 0; d < x->rank; d++)
        if (d != axis && ix->dims[d] > x->dims[d])
            return frt_step_fail(s, FRT_ERR_SHAPE,
                                 "indices dim %d is %lld, larger than data's %lld", d,
                                 (long long)ix->dims[d], (long long)x->dims[d]);
    return FRT_OK;
}

static frt_status gather_elements_kernel(const frt_step *s, frt_exec *x) {
    const elems_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *ix = &x->values[s->in[1]];
    frt_value *y = &x->values[s->out[0]];
    int r = xv->rank, axis = frt_norm_axis(p->axis, r);
    frt_status st;
    if (axis < 0) return frt_step_fail(s, FRT_ERR_SHAPE, "axis out of range");
    if ((st = elems_runtime_check(s, xv, ix, axis))) return st;
    size_t es = frt_dtype_size((frt_dtype)xv->dtype);
    int64_t ds[FRT_MAX_RANK] = {0};
    strides_of(xv->dims, r, ds);
    int64_t n = xv->dims[axis], sa = ds[axis];
    const char *src = xv->data;
    char *dst = y->data;
    ELEMS_WALK(r, ix->dims, ds, axis, {
        int64_t v = 0;
        if ((st = get_index(s, ix, j, n, axis, &v))) return st;
        copy_elem(dst + (size_t)j * es, src + (size_t)(base + v * sa) * es, es);
    });
    return FRT_OK;
}

static frt_status elems_select(frt_op_ctx *c, frt_kernel *k, const char *name, frt_kernel_fn fn,
                               bool scatter) {
    frt_status st = check_fixed_size(c, c->in[0]->dtype);
    if (st) return st;
    elems_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->axis = frt_attr_int(c->node, "axis", 0);
    p->red = RED_NONE;
    if (scatter && (st = reduction_attr(c, &p->red))) return st;
    if (p->red != RED_NONE && !frt_dtype_is_float(c->in[0]->dtype) &&
        !frt_dtype_is_int(c->in[0]->dtype) && c->in[0]->dtype != FRT_BOOL &&
        c->in[0]->dtype != DT_BF16)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "reduction on dtype %s",
                           frt_dtype_name((frt_dtype)c->in[0]->dtype));
    k->name = name;
    k->fn = fn;
    k->params = p;
    if (scatter) k->flags = FRT_K_INPLACE; /* copies data over itself only when not aliased */
    return FRT_OK;
}

static frt_status gather_elements_select(frt_op_ctx *c, frt_kernel *k) {
    return elems_select(c, k, "gather_elements", gather_elements_kernel, false);
}

/* ScatterElements / Scatter: data, indices, updates (indices' shape) -> data's shape. */
static frt_status scatter_elements_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 3, 3, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0)) || (st = check_indices(c, 1)) ||
        (st = frt_op_check_input(c, 2, c->in[0]->dtype)))
        return st;
    const frt_value *x = c->in[0], *ix = c->in[1], *u = c->in[2];
    if (x->rank >= 0 && x->rank < 1) return frt_op_fail(c, FRT_ERR_SHAPE, "data must have rank >= 1");
    if (ix->rank >= 0 && u->rank >= 0) {
        bool same = ix->rank == u->rank;
        for (int d = 0; same && d < ix->rank; d++)
            same = ix->dims[d] < 0 || u->dims[d] < 0 || ix->dims[d] == u->dims[d];
        if (!same) {
            char a[128], b[128];
            return frt_op_fail(c, FRT_ERR_SHAPE, "indices %s and updates %s differ in shape",
                               frt_shape_str(ix, a, sizeof a), frt_shape_str(u, b, sizeof b));
        }
    }
    if (x->rank >= 0 && ix->rank >= 0) {
        int axis;
        if ((st = elems_axis(c, x->rank, &axis)) || (st = elems_check(c, x, ix, axis))) return st;
    }
    frt_op_set_shape(c->out[0], x->dtype, x->rank, x->rank >= 0 ? x->dims : NULL);
    return FRT_OK;
}

static frt_status scatter_elements_kernel(const frt_step *s, frt_exec *x) {
    const elems_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *ix = &x->values[s->in[1]],
                    *u = &x->values[s->in[2]];
    frt_value *y = &x->values[s->out[0]];
    int r = xv->rank, axis = frt_norm_axis(p->axis, r);
    frt_status st;
    if (axis < 0) return frt_step_fail(s, FRT_ERR_SHAPE, "axis out of range");
    if ((st = elems_runtime_check(s, xv, ix, axis))) return st;
    if (u->numel != ix->numel || u->rank != ix->rank)
        return frt_step_fail(s, FRT_ERR_SHAPE, "updates and indices differ in shape");
    size_t es = frt_dtype_size((frt_dtype)xv->dtype);
    if (y->data != xv->data) memcpy(y->data, xv->data, (size_t)xv->numel * es);
    int64_t ds[FRT_MAX_RANK] = {0};
    strides_of(xv->dims, r, ds);
    int64_t n = xv->dims[axis], sa = ds[axis];
    const char *src = u->data;
    char *dst = y->data;
    int red = p->red;
    int32_t dt = xv->dtype;
    ELEMS_WALK(r, ix->dims, ds, axis, {
        int64_t v = 0;
        if ((st = get_index(s, ix, j, n, axis, &v))) return st;
        char *d = dst + (size_t)(base + v * sa) * es;
        if (red == RED_NONE) copy_elem(d, src + (size_t)j * es, es);
        else reduce_elem(dt, d, src + (size_t)j * es, red, es);
    });
    return FRT_OK;
}

static frt_status scatter_elements_select(frt_op_ctx *c, frt_kernel *k) {
    return elems_select(c, k, "scatter_elements", scatter_elements_kernel, true);
}

/* ---------------------------------------------------------------------------------------------- */
/* GatherND, ScatterND                                                                             */
/* ---------------------------------------------------------------------------------------------- */

/* GatherND: data [d0..d_{r-1}], indices [i0..i_{q-2}, k] with b = batch_dims leading dims equal
 * to data's, k <= r - b -> [i0..i_{q-2}, d_{b+k}..d_{r-1}]. Each index tuple (k values) picks the
 * slice data[batch][t0]..[t_{k-1}] of prod(d_{b+k}..) elements. */
typedef struct nd_params {
    int64_t batch_dims;
    int red;
} nd_params;

static frt_status gather_nd_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 2, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0)) || (st = check_indices(c, 1))) return st;
    const frt_value *x = c->in[0], *ix = c->in[1];
    int64_t b = frt_attr_int(c->node, "batch_dims", 0);
    if (b < 0 || (c->opset < 12 && b != 0))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "batch_dims %lld is not valid", (long long)b);
    if (x->rank == 0 || ix->rank == 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "data and indices need rank >= 1 (have %d, %d)",
                           x->rank, ix->rank);
    if (x->rank < 0 || ix->rank < 0 || ix->dims[ix->rank - 1] < 0) {
        frt_op_set_shape(c->out[0], x->dtype, -1, NULL);
        return FRT_OK;
    }
    int r = x->rank, q = ix->rank;
    if (b >= q || b >= r)
        return frt_op_fail(c, FRT_ERR_SHAPE, "batch_dims %lld must be less than both ranks (%d, %d)",
                           (long long)b, r, q);
    int64_t k = ix->dims[q - 1];
    if (k < 1 || k > r - b)
        return frt_op_fail(c, FRT_ERR_SHAPE,
                           "indices' last dim %lld must be in [1, %lld] (data rank - batch_dims)",
                           (long long)k, (long long)(r - b));
    for (int d = 0; d < b; d++)
        if (x->dims[d] >= 0 && ix->dims[d] >= 0 && x->dims[d] != ix->dims[d])
            return frt_op_fail(c, FRT_ERR_SHAPE, "batch dim %d differs: data %lld, indices %lld", d,
                               (long long)x->dims[d], (long long)ix->dims[d]);
    int orank = q - 1 + r - (int)b - (int)k;
    if (orank > FRT_MAX_RANK)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "output rank %d > %d", orank, FRT_MAX_RANK);
    int64_t dims[FRT_MAX_RANK];
    int o = 0;
    for (int d = 0; d < q - 1; d++) dims[o++] = d < b && ix->dims[d] < 0 ? x->dims[d] : ix->dims[d];
    for (int d = (int)(b + k); d < r; d++) dims[o++] = x->dims[d];
    frt_op_set_shape(c->out[0], x->dtype, orank, dims);
    return FRT_OK;
}

/* Data element offset of index tuple t (positions t*k .. t*k+k-1 of ix) within one batch: the
 * tuple addresses dims b..b+k-1 of data (strides ds). */
static inline frt_status nd_offset(const frt_step *s, const frt_value *xv, const frt_value *ix,
                                   const int64_t *ds, int b, int64_t k, int64_t t, int64_t *off) {
    int64_t o = 0;
    for (int64_t i = 0; i < k; i++) {
        int64_t v = 0;
        frt_status st = get_index(s, ix, t * k + i, xv->dims[b + i], b + (int)i, &v);
        if (st) return st;
        o += v * ds[b + i];
    }
    *off = o;
    return FRT_OK;
}

static frt_status gather_nd_kernel(const frt_step *s, frt_exec *x) {
    const nd_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *ix = &x->values[s->in[1]];
    frt_value *y = &x->values[s->out[0]];
    int r = xv->rank, q = ix->rank, b = (int)p->batch_dims;
    if (r < 1 || q < 1) return frt_step_fail(s, FRT_ERR_SHAPE, "data and indices need rank >= 1");
    int64_t k = ix->dims[q - 1];
    if (b >= q || b >= r || k < 1 || k > r - b)
        return frt_step_fail(s, FRT_ERR_SHAPE, "indices do not fit the data");
    for (int d = 0; d < b; d++)
        if (xv->dims[d] != ix->dims[d])
            return frt_step_fail(s, FRT_ERR_SHAPE, "batch dim %d differs", d);
    size_t es = frt_dtype_size((frt_dtype)xv->dtype);
    int64_t ds[FRT_MAX_RANK] = {0};
    strides_of(xv->dims, r, ds);
    int64_t nb = prod_range(xv->dims, 0, b);
    int64_t per_batch = prod_range(ix->dims, b, q - 1); /* tuples per batch */
    int64_t slice = prod_range(xv->dims, b + (int)k, r);
    int64_t bstride = prod_range(xv->dims, b, r);
    size_t sb = (size_t)slice * es;
    const char *src = xv->data;
    char *dst = y->data;
    for (int64_t bi = 0; bi < nb; bi++) {
        const char *bsrc = src + (size_t)(bi * bstride) * es;
        for (int64_t t = 0; t < per_batch; t++) {
            int64_t off;
            frt_status st = nd_offset(s, xv, ix, ds, b, k, bi * per_batch + t, &off);
            if (st) return st;
            if (sb) memcpy(dst, bsrc + (size_t)off * es, sb);
            dst += sb;
        }
    }
    return FRT_OK;
}

static frt_status gather_nd_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_fixed_size(c, c->in[0]->dtype);
    if (st) return st;
    nd_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->batch_dims = frt_attr_int(c->node, "batch_dims", 0);
    p->red = RED_NONE;
    k->name = "gather_nd";
    k->fn = gather_nd_kernel;
    k->params = p;
    return FRT_OK;
}

/* ScatterND: data [d0..d_{r-1}], indices [i0..i_{q-2}, k], updates [i0..i_{q-2}, d_k..d_{r-1}]
 * -> data's shape; each tuple's slice of data (red)= the matching updates slice, in order. */
static frt_status scatter_nd_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 3, 3, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0)) || (st = check_indices(c, 1)) ||
        (st = frt_op_check_input(c, 2, c->in[0]->dtype)))
        return st;
    const frt_value *x = c->in[0], *ix = c->in[1], *u = c->in[2];
    if (x->rank == 0 || ix->rank == 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "data and indices need rank >= 1");
    if (x->rank >= 0 && ix->rank >= 0 && u->rank >= 0) {
        int r = x->rank, q = ix->rank;
        int64_t k = ix->dims[q - 1];
        if (k >= 0) {
            if (k < 1 || k > r)
                return frt_op_fail(c, FRT_ERR_SHAPE,
                                   "indices' last dim %lld must be in [1, %d]", (long long)k, r);
            int want = q - 1 + r - (int)k;
            bool ok = u->rank == want;
            for (int d = 0; ok && d < want; d++) {
                int64_t e = d < q - 1 ? ix->dims[d] : x->dims[k + d - (q - 1)];
                ok = e < 0 || u->dims[d] < 0 || u->dims[d] == e;
            }
            if (!ok) {
                char a[128];
                return frt_op_fail(c, FRT_ERR_SHAPE,
                                   "updates %s do not have the shape indices[:-1] + data[%lld:]",
                                   frt_shape_str(u, a, sizeof a), (long long)k);
            }
        }
    }
    frt_op_set_shape(c->out[0], x->dtype, x->rank, x->rank >= 0 ? x->dims : NULL);
    return FRT_OK;
}

static frt_status scatter_nd_kernel(const frt_step *s, frt_exec *x) {
    const nd_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *ix = &x->values[s->in[1]],
                    *u = &x->values[s->in[2]];
    frt_value *y = &x->values[s->out[0]];
    int r = xv->rank, q = ix->rank;
    if (r < 1 || q < 1) return frt_step_fail(s, FRT_ERR_SHAPE, "data and indices need rank >= 1");
    int64_t k = ix->dims[q - 1];
    if (k < 1 || k > r) return frt_step_fail(s, FRT_ERR_SHAPE, "indices do not fit the data");
    int64_t tuples = prod_range(ix->dims, 0, q - 1), slice = prod_range(xv->dims, (int)k, r);
    if (u->numel != tuples * slice)
        return frt_step_fail(s, FRT_ERR_SHAPE, "updates do not have the shape the indices need");
    size_t es = frt_dtype_size((frt_dtype)xv->dtype);
    if (y->data != xv->data) memcpy(y->data, xv->data, (size_t)xv->numel * es);
    int64_t ds[FRT_MAX_RANK] = {0};
    strides_of(xv->dims, r, ds);
    char *dst = y->data;
    const char *src = u->data;
    size_t sb = (size_t)slice * es;
    for (int64_t t = 0; t < tuples; t++) {
        int64_t off;
        frt_status st = nd_offset(s, xv, ix, ds, 0, k, t, &off);
        if (st) return st;
        char *d = dst + (size_t)off * es;
        const char *sp = src + (size_t)t * sb;
        if (p->red == RED_NONE) {
            if (sb) memcpy(d, sp, sb);
        } else {
            for (int64_t e = 0; e < slice; e++)
                reduce_elem(xv->dtype, d + (size_t)e * es, sp + (size_t)e * es, p->red, es);
        }
    }
    return FRT_OK;
}

static frt_status scatter_nd_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_fixed_size(c, c->in[0]->dtype);
    if (st) return st;
    nd_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->batch_dims = 0;
    if ((st = reduction_attr(c, &p->red))) return st;
    k->name = "scatter_nd";
    k->fn = scatter_nd_kernel;
    k->params = p;
    k->flags = FRT_K_INPLACE;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* NonZero                                                                                         */
/* ---------------------------------------------------------------------------------------------- */

/* Element i is nonzero: any bit set for integers and bool, any bit but the sign for floating
 * types (-0 is zero, NaN is not). */
static inline bool is_nonzero(const char *p, int64_t i, size_t es, bool fp) {
    switch (es) {
    case 1: return p[i] != 0;
    case 2: {
        uint16_t v;
        memcpy(&v, p + i * 2, 2);
        return (fp ? (v & 0x7fffu) : v) != 0;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p + i * 4, 4);
        return (fp ? (v & 0x7fffffffu) : v) != 0;
    }
    default: {
        uint64_t v;
        memcpy(&v, p + i * 8, 8);
        return (fp ? (v & 0x7fffffffffffffffull) : v) != 0;
    }
    }
}

static bool dtype_fp(int32_t dt) { return frt_dtype_is_float(dt) || dt == DT_BF16; }

static int64_t count_nonzero(const frt_value *v, int64_t n) {
    size_t es = frt_dtype_size((frt_dtype)v->dtype);
    bool fp = dtype_fp(v->dtype);
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++) c += is_nonzero(v->data, i, es, fp);
    return c;
}

static frt_status nonzero_check_dtype(const frt_op_ctx *c, int32_t dt) {
    size_t es = frt_dtype_size((frt_dtype)dt);
    if (es != 1 && es != 2 && es != 4 && es != 8)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                           frt_dtype_name((frt_dtype)dt));
    return FRT_OK;
}

/* X (any rank; a scalar counts as 1-D of 1) -> int64 [max(rank, 1), nnz]: the coordinates of the
 * nonzero elements in row-major order. */
static frt_status nonzero_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0)) || (st = nonzero_check_dtype(c, c->in[0]->dtype)))
        return st;
    const frt_value *x = c->in[0];
    int64_t dims[2] = {x->rank < 0 ? -1 : x->rank == 0 ? 1 : x->rank, -1};
    if (x->data && frt_shape_known(x)) dims[1] = count_nonzero(x, x->numel);
    frt_op_set_shape(c->out[0], FRT_INT64, 2, dims);
    return FRT_OK;
}

static frt_status nonzero_kernel(const frt_step *s, frt_exec *x) {
    const frt_value *xv = &x->values[s->in[0]];
    int r = xv->rank;
    int64_t nnz = count_nonzero(xv, xv->numel);
    int64_t dims[2] = {r == 0 ? 1 : r, nnz};
    int64_t *y;
    frt_status st = dyn_output(x, s, 0, FRT_INT64, 2, dims, &y);
    if (st) return st;
    size_t es = frt_dtype_size((frt_dtype)xv->dtype);
    bool fp = dtype_fp(xv->dtype);
    int64_t co[FRT_MAX_RANK] = {0}, k = 0;
    for (int64_t i = 0; i < xv->numel; i++) {
        if (is_nonzero(xv->data, i, es, fp)) {
            if (r == 0) y[k] = 0;
            for (int d = 0; d < r; d++) y[d * nnz + k] = co[d];
            k++;
        }
        for (int d = r - 1; d >= 0; d--) {
            if (++co[d] < xv->dims[d]) break;
            co[d] = 0;
        }
    }
    return FRT_OK;
}

static frt_status nonzero_select(frt_op_ctx *c, frt_kernel *k) {
    k->name = "nonzero";
    k->fn = nonzero_kernel;
    k->flags = FRT_K_DYNAMIC_OUT;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Compress                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

/* input [d0..], condition (bool, 1-D, length <= the selected dim; missing entries are false).
 * With axis: the slices along axis whose condition is true; without: the true elements of the
 * flattened input, 1-D. */
typedef struct compress_params {
    bool has_axis;
    int64_t axis;
} compress_params;

static int64_t count_true(const frt_value *cv, int64_t n) {
    const uint8_t *cd = cv->data;
    int64_t m = n < cv->numel ? n : cv->numel, k = 0;
    for (int64_t i = 0; i < m; i++) k += cd[i] != 0;
    return k;
}

static frt_status compress_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 2, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0)) || (st = frt_op_check_input(c, 1, FRT_BOOL)))
        return st;
    const frt_value *x = c->in[0], *cv = c->in[1];
    if (cv->rank >= 0 && cv->rank != 1)
        return frt_op_fail(c, FRT_ERR_SHAPE, "condition must be 1-D, has rank %d", cv->rank);
    const frt_onnx_attr *a = frt_attr_find(c->node, "axis");
    int64_t len = cv->rank == 1 ? cv->dims[0] : -1;
    if (!a) {
        int64_t n = x->rank >= 0 ? frt_shape_numel(x->dims, x->rank) : -1;
        if (len >= 0 && n >= 0 && len > n)
            return frt_op_fail(c, FRT_ERR_SHAPE, "condition has %lld entries, input has %lld elements",
                               (long long)len, (long long)n);
        int64_t d = cv->data && len >= 0 && n >= 0 ? count_true(cv, n) : -1;
        frt_op_set_shape(c->out[0], x->dtype, 1, &d);
        return FRT_OK;
    }
    if (x->rank < 0) {
        frt_op_set_shape(c->out[0], x->dtype, -1, NULL);
        return FRT_OK;
    }
    int axis = frt_norm_axis(a->i, x->rank);
    if (axis < 0 || (a->i < 0 && c->opset < 11))
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d",
                           (long long)a->i, x->rank);
    int64_t dims[FRT_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    int64_t n = x->dims[axis];
    if (len >= 0 && n >= 0 && len > n)
        return frt_op_fail(c, FRT_ERR_SHAPE, "condition has %lld entries, axis %d has %lld",
                           (long long)len, axis, (long long)n);
    dims[axis] = cv->data && len >= 0 && n >= 0 ? count_true(cv, n) : -1;
    frt_op_set_shape(c->out[0], x->dtype, x->rank, dims);
    return FRT_OK;
}

static frt_status compress_kernel(const frt_step *s, frt_exec *x) {
    const compress_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *cv = &x->values[s->in[1]];
    size_t es = frt_dtype_size((frt_dtype)xv->dtype);
    const uint8_t *cd = cv->data;
    const char *src = xv->data;
    if (!p->has_axis) {
        if (cv->numel > xv->numel)
            return frt_step_fail(s, FRT_ERR_RUNTIME, "condition has %lld entries, input has %lld "
                                 "elements", (long long)cv->numel, (long long)xv->numel);
        int64_t n = count_true(cv, xv->numel);
        char *y;
        frt_status st = dyn_output(x, s, 0, xv->dtype, 1, &n, &y);
        if (st) return st;
        for (int64_t i = 0; i < cv->numel; i++)
            if (cd[i]) {
                copy_elem(y, src + (size_t)i * es, es);
                y += es;
            }
        return FRT_OK;
    }
    int axis = frt_norm_axis(p->axis, xv->rank);
    if (axis < 0) return frt_step_fail(s, FRT_ERR_SHAPE, "axis out of range");
    int64_t n = xv->dims[axis];
    if (cv->numel > n)
        return frt_step_fail(s, FRT_ERR_RUNTIME, "condition has %lld entries, axis %d has %lld",
                             (long long)cv->numel, axis, (long long)n);
    int64_t dims[FRT_MAX_RANK];
    memcpy(dims, xv->dims, sizeof dims);
    dims[axis] = count_true(cv, n);
    char *y;
    frt_status st = dyn_output(x, s, 0, xv->dtype, xv->rank, dims, &y);
    if (st) return st;
    int64_t outer = prod_range(xv->dims, 0, axis);
    size_t inner = (size_t)prod_range(xv->dims, axis + 1, xv->rank) * es;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < cv->numel; i++)
            if (cd[i]) {
                if (inner) memcpy(y, src + ((size_t)o * (size_t)n + (size_t)i) * inner, inner);
                y += inner;
            }
    return FRT_OK;
}

static frt_status compress_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_fixed_size(c, c->in[0]->dtype);
    if (st) return st;
    compress_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    const frt_onnx_attr *a = frt_attr_find(c->node, "axis");
    p->has_axis = a != NULL;
    p->axis = a ? a->i : 0;
    k->name = "compress";
    k->fn = compress_kernel;
    k->params = p;
    k->flags = FRT_K_DYNAMIC_OUT;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Unique                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

/* X -> Y (the distinct elements, or the distinct slices along axis), indices (first occurrence
 * of each in X), inverse_indices (for each element/slice of X, its position in Y), counts; the
 * last three int64 and optional. sorted=1: Y in ascending order (slices compared
 * lexicographically, numerically; NaN after everything and equal to NaN); sorted=0: in order of
 * first occurrence. Without axis X is flattened. */
typedef struct unique_params {
    bool has_axis;
    int64_t axis;
    bool sorted;
} unique_params;

/* n_sl slices of len elements, slice i's element e at data[(o*n_sl + i)*inner + e'] laid out as
 * outer x n_sl x inner; compared over every (o, e). */
typedef struct uq_view {
    const char *data;
    int32_t dt;
    size_t es;
    int64_t outer, n_sl, inner;
} uq_view;

static int cmp_scalar(int32_t dt, const char *a, const char *b) {
    if (dtype_fp(dt)) {
        double x, y;
        if (dt == DT_BF16) {
            uint16_t ua, ub;
            memcpy(&ua, a, 2);
            memcpy(&ub, b, 2);
            x = frt_bf16_to_float(ua);
            y = frt_bf16_to_float(ub);
        } else {
            x = frt_ld_f64(dt, a, 0);
            y = frt_ld_f64(dt, b, 0);
        }
        bool nx = x != x, ny = y != y;
        if (nx || ny) return nx - ny;
        return (x > y) - (x < y);
    }
    if (dt == FRT_UINT64) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return (x > y) - (x < y);
    }
    int64_t x = frt_ld_i64(dt, a, 0), y = frt_ld_i64(dt, b, 0);
    return (x > y) - (x < y);
}

static int cmp_slices(const uq_view *v, int64_t i, int64_t j) {
    for (int64_t o = 0; o < v->outer; o++) {
        const char *a = v->data + (size_t)((o * v->n_sl + i) * v->inner) * v->es;
        const char *b = v->data + (size_t)((o * v->n_sl + j) * v->inner) * v->es;
        for (int64_t e = 0; e < v->inner; e++) {
            int r = cmp_scalar(v->dt, a + (size_t)e * v->es, b + (size_t)e * v->es);
            if (r) return r;
        }
    }
    return 0;
}

/* Stable merge sort of idx[0..n) by cmp_slices, with tmp[n]. */
static void uq_sort(const uq_view *v, int64_t *idx, int64_t *tmp, int64_t n) {
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi) tmp[o++] = cmp_slices(v, idx[b], idx[a]) < 0 ? idx[b++] : idx[a++];
            while (a < mid) tmp[o++] = idx[a++];
            while (b < hi) tmp[o++] = idx[b++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

static frt_status unique_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 4);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    const frt_value *x = c->in[0];
    int32_t dt = x->dtype;
    if (!frt_dtype_is_float(dt) && !frt_dtype_is_int(dt) && dt != FRT_BOOL && dt != DT_BF16)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                           frt_dtype_name((frt_dtype)dt));
    int64_t sorted = frt_attr_int(c->node, "sorted", 1);
    if (sorted != 0 && sorted != 1)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "sorted must be 0 or 1, is %lld", (long long)sorted);
    const frt_onnx_attr *a = frt_attr_find(c->node, "axis");
    int64_t unk = -1, n_sl = -1;
    if (a) {
        if (x->rank < 0) {
            frt_op_set_shape(c->out[0], dt, -1, NULL);
        } else {
            int axis = frt_norm_axis(a->i, x->rank);
            if (axis < 0)
                return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d",
                                   (long long)a->i, x->rank);
            int64_t dims[FRT_MAX_RANK];
            memcpy(dims, x->dims, sizeof dims);
            n_sl = dims[axis];
            dims[axis] = -1;
            frt_op_set_shape(c->out[0], dt, x->rank, dims);
        }
    } else {
        frt_op_set_shape(c->out[0], dt, 1, &unk);
        n_sl = x->rank >= 0 ? frt_shape_numel(x->dims, x->rank) : -1;
    }
    for (int j = 1; j < c->n_out; j++)
        frt_op_set_shape(c->out[j], FRT_INT64, 1, j == 2 ? &n_sl : &unk);
    return FRT_OK;
}

static size_t unique_scratch(const frt_step *s, const frt_value *values) {
    const frt_value *xv = &values[s->in[0]];
    const unique_params *p = s->k.params;
    int64_t n = xv->numel;
    if (p->has_axis) {
        int axis = frt_norm_axis(p->axis, xv->rank);
        n = axis < 0 ? 0 : xv->dims[axis];
    }
    return (size_t)(n > 0 ? n : 1) * 4 * sizeof(int64_t);
}

static frt_status unique_kernel(const frt_step *s, frt_exec *x) {
    const unique_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]];
    uq_view v = {xv->data, xv->dtype, frt_dtype_size((frt_dtype)xv->dtype), 1, xv->numel, 1};
    int axis = -1;
    if (p->has_axis) {
        axis = frt_norm_axis(p->axis, xv->rank);
        if (axis < 0) return frt_step_fail(s, FRT_ERR_SHAPE, "axis out of range");
        v.outer = prod_range(xv->dims, 0, axis);
        v.n_sl = xv->dims[axis];
        v.inner = prod_range(xv->dims, axis + 1, xv->rank);
    }
    int64_t n = v.n_sl;
    int64_t *perm = x->scratch, *tmp = perm + n, *gid = tmp + n, *first = gid + n;
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    /* empty slices (a zero dim off the axis) are all equal */
    if (v.outer * v.inner > 0) uq_sort(&v, perm, tmp, n);
    /* groups of equal slices in sorted order; with a stable sort the first of a group is its
       first occurrence */
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || (v.outer * v.inner > 0 && cmp_slices(&v, perm[i - 1], perm[i]) != 0))
            first[u++] = perm[i];
        gid[perm[i]] = u - 1;
    }
    /* rank[g]: position of group g in Y (tmp reused) */
    int64_t *rank = tmp;
    if (p->sorted) {
        for (int64_t g = 0; g < u; g++) rank[g] = g;
    } else {
        int64_t next = 0;
        for (int64_t g = 0; g < u; g++) rank[g] = -1;
        for (int64_t i = 0; i < n; i++)
            if (rank[gid[i]] < 0) rank[gid[i]] = next++;
    }
    /* outputs */
    int64_t ydims[FRT_MAX_RANK];
    int yrank = 1;
    if (axis >= 0) {
        memcpy(ydims, xv->dims, sizeof ydims);
        ydims[axis] = u;
        yrank = xv->rank;
    } else {
        ydims[0] = u;
    }
    char *y;
    frt_status st = dyn_output(x, s, 0, xv->dtype, yrank, ydims, &y);
    if (st) return st;
    int64_t *outs[4] = {NULL, NULL, NULL, NULL};
    for (int j = 1; j < s->n_out && j < 4; j++) {
        if (s->out[j] < 0) continue;
        int64_t d = j == 2 ? n : u;
        if ((st = dyn_output(x, s, j, FRT_INT64, 1, &d, &outs[j]))) return st;
    }
    size_t row = (size_t)v.inner * v.es;
    for (int64_t g = 0; g < u; g++) {
        int64_t src = first[g], dst = rank[g];
        for (int64_t o = 0; o < v.outer; o++)
            if (row)
                memcpy(y + (size_t)(o * u + dst) * row, v.data + (size_t)(o * n + src) * row, row);
        if (outs[1]) outs[1][dst] = src;
    }
    if (outs[2])
        for (int64_t i = 0; i < n; i++) outs[2][i] = rank[gid[i]];
    if (outs[3]) {
        for (int64_t g = 0; g < u; g++) outs[3][g] = 0;
        for (int64_t i = 0; i < n; i++) outs[3][rank[gid[i]]]++;
    }
    return FRT_OK;
}

static frt_status unique_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_fixed_size(c, c->in[0]->dtype);
    if (st) return st;
    unique_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    const frt_onnx_attr *a = frt_attr_find(c->node, "axis");
    p->has_axis = a != NULL;
    p->axis = a ? a->i : 0;
    p->sorted = frt_attr_int(c->node, "sorted", 1) != 0;
    k->name = "unique";
    k->fn = unique_kernel;
    k->params = p;
    k->scratch = unique_scratch;
    k->flags = FRT_K_DYNAMIC_OUT;
    return FRT_OK;
}

FRT_OP_IMPL(index, Compress, compress_infer, compress_select);
FRT_OP_IMPL(index, GatherElements, gather_elements_infer, gather_elements_select);
FRT_OP_IMPL(index, GatherND, gather_nd_infer, gather_nd_select);
FRT_OP_IMPL(index, NonZero, nonzero_infer, nonzero_select);
FRT_OP_IMPL(index, Scatter, scatter_elements_infer, scatter_elements_select);
FRT_OP_IMPL(index, ScatterElements, scatter_elements_infer, scatter_elements_select);
FRT_OP_IMPL(index, ScatterND, scatter_nd_infer, scatter_nd_select);
FRT_OP_IMPL(index, Unique, unique_infer, unique_select);
