/* Concat Transpose Gather Slice Shape Size Constant.
 *
 * Every kernel here moves bytes without interpreting them, so each works for any dtype with a fixed
 * element size (1, 2, 4 or 8 bytes get typed loops; other sizes fall back to memcpy). Attributes
 * are resolved at select into the kernel's params and shapes are read from the runtime values, so
 * a kernel selected at load with unknown dims works for whatever shapes the runtime resolves.
 * These kernels also run while resolving shapes (Shape -> Gather -> Concat -> Reshape on int64
 * data).
 */
#include <limits.h>
#include <string.h>

#include "cpu.h"
#include "op.h"

/* Portable 2-D transpose (exported for tests): dst[a*dld + b] = src[b*sld + a], a < A, b < B,
 * strides in elements of esize bytes. */
void frt_transpose2d_portable(void *dst, const void *src, int64_t A, int64_t B, int64_t dld,
                              int64_t sld, size_t esize);
/* The same for 4-byte elements, one function per ISA tier. */
typedef void (*frt_transpose2d_u32_fn)(uint32_t *dst, const uint32_t *src, int64_t A, int64_t B,
                                       int64_t dld, int64_t sld);
#if FRT_HAVE_X86
void frt_transpose2d_u32_avx2(uint32_t *dst, const uint32_t *src, int64_t A, int64_t B,
                              int64_t dld, int64_t sld); /* src/ops/x86/transpose_avx2.c */
#endif
/* The best of them whose tier is <= cap (exported for tests). */
frt_transpose2d_u32_fn frt_transpose2d_u32_get(frt_isa cap);

#if defined(__GNUC__)
typedef uint8_t __attribute__((may_alias)) u8a;
typedef uint16_t __attribute__((may_alias)) u16a;
typedef uint32_t __attribute__((may_alias)) u32a;
typedef uint64_t __attribute__((may_alias)) u64a;
#else
typedef uint8_t u8a;
typedef uint16_t u16a;
typedef uint32_t u32a;
typedef uint64_t u64a;
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Shared helpers                                                                                  */
/* ---------------------------------------------------------------------------------------------- */

/* A context for calling the infer-side helpers from a kernel, so messages name the node. */
static void step_ctx(const frt_step *s, frt_exec *x, frt_value **in, frt_value **out,
                     frt_op_ctx *c) {
    for (int i = 0; i < s->n_in; i++) in[i] = s->in[i] < 0 ? NULL : &x->values[s->in[i]];
    for (int i = 0; i < s->n_out; i++) out[i] = s->out[i] < 0 ? NULL : &x->values[s->out[i]];
    c->node = s->ir;
    c->opset = s->ir->opset;
    c->n_in = s->n_in;
    c->n_out = s->n_out;
    c->in = in;
    c->out = out;
    c->arena = NULL;
}

/* Product of dims[lo..hi) (known dims assumed, as in a runtime). */
static int64_t prod_range(const int64_t *dims, int lo, int hi) {
    int64_t p = 1;
    for (int i = lo; i < hi; i++) p *= dims[i];
    return p;
}

static frt_status check_fixed_size(const frt_op_ctx *c, int32_t dtype) {
    if (frt_dtype_size((frt_dtype)dtype) == 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                           frt_dtype_name((frt_dtype)dtype));
    return FRT_OK;
}

static bool is_int_dtype(int32_t t) { return t == FRT_INT64 || t == FRT_INT32; }

/* Copies n bytes (no alignment assumed); the small constant sizes that shape subgraphs and thin
 * slices use compile to single moves instead of a library call. */
static inline void copy_bytes(char *dst, const char *src, size_t n) {
    switch (n) {
    case 0: return;
    case 1: *dst = *src; return;
    case 2: memcpy(dst, src, 2); return;
    case 4: memcpy(dst, src, 4); return;
    case 8: memcpy(dst, src, 8); return;
    case 16: memcpy(dst, src, 16); return;
    default: memcpy(dst, src, n);
    }
}

/* Copies an nd-dimensional strided view of src into contiguous dst. View element (i0..i_{nd-1})
 * starts at src + sum(ik * is[k]) (byte strides, may be negative) and is `block` contiguous bytes;
 * od[k] are the view's extents. When block == esize the innermost dim runs as a typed loop. */
static void strided_copy(char *dst, const char *src, int nd, const int64_t *od, const int64_t *is,
                         size_t block, size_t esize) {
    int64_t total = 1;
    for (int k = 0; k < nd; k++) total *= od[k];
    if (total == 0 || block == 0) return;
    bool elem_rows = nd >= 1 && block == esize;
    int no = elem_rows ? nd - 1 : nd;  /* dims walked by the odometer */
    int64_t rows = 1;
    for (int k = 0; k < no; k++) rows *= od[k];
    int64_t row_n = elem_rows ? od[nd - 1] : 1, row_stride = elem_rows ? is[nd - 1] : 0;
    size_t row_bytes = elem_rows ? (size_t)row_n * esize : block;
    int64_t idx[FRT_MAX_RANK] = {0};
    const char *s = src;
    for (int64_t r = 0; r < rows; r++) {
        if (elem_rows)
            frt_gather_elems(dst, s, row_n, row_stride, esize);
        else
            copy_bytes(dst, s, block);
        dst += row_bytes;
        for (int k = no - 1; k >= 0; k--) {
            s += is[k];
            if (++idx[k] < od[k]) break;
            s -= is[k] * od[k];
            idx[k] = 0;
        }
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Concat                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

/* Output: same rank as the inputs; dims equal except on axis, where they add up. Unknown dims at
 * load: a dim known on any input is used; the axis dim is -1 if any input's is unknown. */
static frt_status concat_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, INT32_MAX, 1, 1);
    if (st) return st;
    const frt_onnx_attr *a = frt_attr_find(c->node, "axis");
    if (!a || a->type != FRT_ATTR_INT)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute 'axis' (int) is required");
    int rank = -1;
    int32_t dtype = 0;
    for (int i = 0; i < c->n_in; i++) {
        if ((st = frt_op_check_input(c, i, 0))) return st;
        const frt_value *v = c->in[i];
        if (i == 0) dtype = v->dtype;
        else if (v->dtype != dtype)
            return frt_op_fail(c, FRT_ERR_SHAPE, "input %d has dtype %s, input 0 has %s", i,
                               frt_dtype_name((frt_dtype)v->dtype), frt_dtype_name((frt_dtype)dtype));
        if (v->rank < 0) continue;
        if (rank < 0) rank = v->rank;
        else if (v->rank != rank)
            return frt_op_fail(c, FRT_ERR_SHAPE, "input %d has rank %d, expected %d", i, v->rank,
                               rank);
    }
    if (rank < 0) {
        frt_op_set_shape(c->out[0], dtype, -1, NULL);
        return FRT_OK;
    }
    int axis = frt_norm_axis(a->i, rank);
    if (axis < 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d",
                           (long long)a->i, rank);
    int64_t dims[FRT_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        int64_t known = -1;
        if (d == axis) {
            int64_t sum = 0;
            for (int i = 0; i < c->n_in; i++) {
                const frt_value *v = c->in[i];
                int64_t x = v->rank < 0 ? -1 : v->dims[d];
                if (x < 0 || sum < 0) sum = -1;
                else if (__builtin_add_overflow(sum, x, &sum))
                    return frt_op_fail(c, FRT_ERR_SHAPE, "concatenated dim overflows");
            }
            dims[d] = sum;
            continue;
        }
        for (int i = 0; i < c->n_in; i++) {
            const frt_value *v = c->in[i];
            if (v->rank < 0 || v->dims[d] < 0) continue;
            if (known < 0) known = v->dims[d];
            else if (v->dims[d] != known) {
                char s0[128], s1[128];
                int j = 0;
                while (c->in[j]->rank < 0 || c->in[j]->dims[d] != known) j++;
                return frt_op_fail(c, FRT_ERR_SHAPE,
                                   "input %d %s and input %d %s differ in dim %d (axis is %d)", j,
                                   frt_shape_str(c->in[j], s0, sizeof s0), i,
                                   frt_shape_str(v, s1, sizeof s1), d, axis);
            }
        }
        dims[d] = known;
    }
    frt_op_set_shape(c->out[0], dtype, rank, dims);
    return FRT_OK;
}

static frt_status concat_kernel(const frt_step *s, frt_exec *x) {
    const frt_concat_params *p = s->k.params;
    frt_value *y = &x->values[s->out[0]];
    size_t es = frt_dtype_size((frt_dtype)y->dtype);
    int axis = frt_norm_axis(p->axis, y->rank);
    if (axis < 0) return frt_step_fail(s, FRT_ERR_INTERNAL, "bad axis");
    int64_t outer = prod_range(y->dims, 0, axis);
    size_t inner = (size_t)prod_range(y->dims, axis + 1, y->rank) * es;
    char *dst = y->data;
    if (s->n_in == 1) {
        copy_bytes(dst, x->values[s->in[0]].data, frt_value_nbytes(y));
        return FRT_OK;
    }
    for (int64_t o = 0; o < outer; o++) {
        for (int i = 0; i < s->n_in; i++) {
            const frt_value *v = &x->values[s->in[i]];
            size_t chunk = (size_t)v->dims[axis] * inner;
            if (!chunk) continue;
            copy_bytes(dst, (const char *)v->data + (size_t)o * chunk, chunk);
            dst += chunk;
        }
    }
    return FRT_OK;
}

static frt_status concat_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_fixed_size(c, c->out[0]->dtype);
    if (st) return st;
    frt_concat_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->axis = frt_attr_int(c->node, "axis", 0); /* infer checked that it is there */
    k->name = "concat";
    k->fn = concat_kernel;
    k->params = p;
    k->flags = FRT_K_CONCAT;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Transpose                                                                                       */
/* ---------------------------------------------------------------------------------------------- */

/* perm from the attribute (validated as a permutation of [0, rank)) or reversed dims. rank may be
 * -1 when unknown; then *out_rank comes from the attribute (or stays -1). */
static frt_status transpose_perm(const frt_op_ctx *c, int rank, int *out_rank, int *perm) {
    size_t n;
    const int64_t *p = frt_attr_ints(c->node, "perm", &n);
    if (!p) {
        *out_rank = rank;
        for (int i = 0; i < rank; i++) perm[i] = rank - 1 - i;
        return FRT_OK;
    }
    if (n > FRT_MAX_RANK)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "perm has %zu entries > %d", n, FRT_MAX_RANK);
    if (rank >= 0 && (size_t)rank != n)
        return frt_op_fail(c, FRT_ERR_SHAPE, "perm has %zu entries but the input has rank %d", n,
                           rank);
    unsigned seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < 0 || p[i] >= (int64_t)n || (seen >> p[i]) & 1)
            return frt_op_fail(c, FRT_ERR_SHAPE, "perm is not a permutation of 0..%zu "
                               "(entry %zu is %lld)", n - 1, i, (long long)p[i]);
        seen |= 1u << p[i];
        perm[i] = (int)p[i];
    }
    *out_rank = (int)n;
    return FRT_OK;
}

static frt_status transpose_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    const frt_value *x = c->in[0];
    int perm[FRT_MAX_RANK], r;
    if ((st = transpose_perm(c, x->rank, &r, perm))) return st;
    int64_t dims[FRT_MAX_RANK];
    for (int i = 0; i < r; i++) dims[i] = x->rank < 0 ? -1 : x->dims[perm[i]];
    frt_op_set_shape(c->out[0], x->dtype, r, dims);
    return FRT_OK;
}

void frt_transpose2d_portable(void *dst, const void *src, int64_t A, int64_t B, int64_t dld,
                              int64_t sld, size_t esize) {
    enum { TILE = 32 };
#define T2D_LOOP(T)                                                                                \
    do {                                                                                           \
        T *d = (T *)dst;                                                                           \
        const T *sp = (const T *)src;                                                              \
        for (int64_t a0 = 0; a0 < A; a0 += TILE) {                                                 \
            int64_t a1 = a0 + TILE < A ? a0 + TILE : A;                                            \
            for (int64_t b0 = 0; b0 < B; b0 += TILE) {                                             \
                int64_t b1 = b0 + TILE < B ? b0 + TILE : B;                                        \
                for (int64_t a = a0; a < a1; a++) {                                                \
                    T *drow = d + a * dld;                                                         \
                    for (int64_t b = b0; b < b1; b++) drow[b] = sp[b * sld + a];                   \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    } while (0)
    switch (esize) {
    case 1: T2D_LOOP(u8a); break;
    case 2: T2D_LOOP(u16a); break;
    case 4: T2D_LOOP(u32a); break;
    case 8: T2D_LOOP(u64a); break;
    default:
        for (int64_t a = 0; a < A; a++)
            for (int64_t b = 0; b < B; b++)
                memcpy((char *)dst + (size_t)(a * dld + b) * esize,
                       (const char *)src + (size_t)(b * sld + a) * esize, esize);
    }
#undef T2D_LOOP
}

static void transpose2d_u32_c(uint32_t *dst, const uint32_t *src, int64_t A, int64_t B,
                              int64_t dld, int64_t sld) {
    frt_transpose2d_portable(dst, src, A, B, dld, sld, 4);
}

/* 4-byte 2-D transpose variants, best tier first. No AVX-512 entry (not shown to pay yet): the
 * AVX-512 tier takes the AVX2 one. */
typedef struct transpose_variant {
    frt_isa isa;
    frt_transpose2d_u32_fn t32;
    const char *name, *name_2d; /* kernel names: any path / known 2-D path */
} transpose_variant;
static const transpose_variant transpose_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, frt_transpose2d_u32_avx2, "transpose_avx2", "transpose_2d_avx2"},
#endif
#endif
    {FRT_ISA_PORTABLE, transpose2d_u32_c, "transpose", "transpose_2d"},
};

frt_transpose2d_u32_fn frt_transpose2d_u32_get(frt_isa cap) {
    return FRT_PICK_VARIANT(transpose_variants, cap)->t32;
}

typedef struct transpose_params {
    frt_transpose2d_u32_fn t32; /* 4-byte elements */
    int perm_rank;            /* rank of the perm attribute; -1 when absent (dims reversed) */
    int perm[FRT_MAX_RANK];   /* the validated perm attribute */
} transpose_params;

/* The permutation for input rank `rank` from the params. */
static frt_status transpose_perm_of(const frt_step *s, const transpose_params *p, int rank,
                                    int *perm) {
    if (p->perm_rank < 0) {
        for (int i = 0; i < rank; i++) perm[i] = rank - 1 - i;
        return FRT_OK;
    }
    if (p->perm_rank != rank)
        return frt_step_fail(s, FRT_ERR_INTERNAL, "perm has %d entries, input rank %d",
                             p->perm_rank, rank);
    memcpy(perm, p->perm, (size_t)rank * sizeof *perm);
    return FRT_OK;
}

/* Output dims of a transpose as (size, input stride) pairs with size-1 dims dropped and output-
 * adjacent dims that are also input-adjacent merged. Returns the count. */
static int transpose_canon(const frt_value *x, const int *perm, int r, int64_t *sz, int64_t *st) {
    int64_t istr[FRT_MAX_RANK];
    int64_t acc = 1;
    for (int i = r - 1; i >= 0; i--) {
        istr[i] = acc;
        acc *= x->dims[i];
    }
    int nd = 0;
    for (int k = 0; k < r; k++) {
        int64_t n = x->dims[perm[k]], s = istr[perm[k]];
        if (n == 1) continue;
        if (nd > 0 && st[nd - 1] == s * n) {
            sz[nd - 1] *= n;
            st[nd - 1] = s;
        } else {
            sz[nd] = n;
            st[nd] = s;
            nd++;
        }
    }
    return nd;
}

static frt_status transpose_kernel(const frt_step *s, frt_exec *x) {
    const frt_value *xv = &x->values[s->in[0]];
    frt_value *y = &x->values[s->out[0]];
    const transpose_params *p = s->k.params;
    size_t es = frt_dtype_size((frt_dtype)y->dtype);
    if (y->numel == 0) return FRT_OK;
    int perm[FRT_MAX_RANK], r = xv->rank;
    frt_status st = transpose_perm_of(s, p, r, perm);
    if (st) return st;
    int64_t sz[FRT_MAX_RANK], str[FRT_MAX_RANK];
    int nd = transpose_canon(xv, perm, r, sz, str);
    char *dst = y->data;
    const char *src = xv->data;
    if (nd == 0 || (nd == 1 && str[0] == 1)) { /* identity */
        memcpy(dst, src, frt_value_nbytes(y));
        return FRT_OK;
    }
    int64_t bstr[FRT_MAX_RANK];
    for (int k = 0; k < nd; k++) bstr[k] = str[k] * (int64_t)es;
    if (str[nd - 1] == 1) { /* innermost dim stays innermost: contiguous runs */
        strided_copy(dst, src, nd - 1, sz, bstr, (size_t)sz[nd - 1] * es, es);
        return FRT_OK;
    }
    /* 2-D transposes between output dim j (input-contiguous) and the last output dim, walked over
     * every other dim. */
    int j = 0;
    while (str[j] != 1) j++;
    int64_t ostr[FRT_MAX_RANK];
    int64_t acc = 1;
    for (int k = nd - 1; k >= 0; k--) {
        ostr[k] = acc;
        acc *= sz[k];
    }
    int64_t osz[FRT_MAX_RANK], ois[FRT_MAX_RANK], oos[FRT_MAX_RANK];
    int no = 0;
    for (int k = 0; k < nd - 1; k++) {
        if (k == j) continue;
        osz[no] = sz[k];
        ois[no] = bstr[k];
        oos[no] = ostr[k] * (int64_t)es;
        no++;
    }
    int64_t A = sz[j], B = sz[nd - 1], dld = ostr[j], sld = str[nd - 1];
    int64_t total = 1;
    for (int k = 0; k < no; k++) total *= osz[k];
    int64_t idx[FRT_MAX_RANK] = {0};
    const char *sp = src;
    char *dp = dst;
    for (int64_t t = 0; t < total; t++) {
        if (p && es == 4) p->t32((uint32_t *)dp, (const uint32_t *)sp, A, B, dld, sld);
        else frt_transpose2d_portable(dp, sp, A, B, dld, sld, es);
        for (int k = no - 1; k >= 0; k--) {
            sp += ois[k];
            dp += oos[k];
            if (++idx[k] < osz[k]) break;
            sp -= ois[k] * osz[k];
            dp -= oos[k] * osz[k];
            idx[k] = 0;
        }
    }
    return FRT_OK;
}

static frt_status transpose_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_fixed_size(c, c->in[0]->dtype);
    if (st) return st;
    transpose_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    size_t n_perm;
    p->perm_rank = -1;
    if (frt_attr_ints(c->node, "perm", &n_perm)) { /* validated (and rank checked) here */
        if ((st = transpose_perm(c, c->in[0]->rank, &p->perm_rank, p->perm))) return st;
    }
    frt_isa isa = frt_dtype_size((frt_dtype)c->in[0]->dtype) == 4 ? c->isa : FRT_ISA_PORTABLE;
    const transpose_variant *v = FRT_PICK_VARIANT(transpose_variants, isa);
    p->t32 = v->t32;
    k->params = p;
    k->fn = transpose_kernel;
    k->name = v->name;
    /* With known load-time shapes, name the path the kernel will take (shown in profiles). */
    const frt_value *x = c->in[0];
    int perm[FRT_MAX_RANK], r;
    if (frt_shape_known(x) && !transpose_perm(c, x->rank, &r, perm)) {
        int64_t sz[FRT_MAX_RANK], str[FRT_MAX_RANK];
        int nd = transpose_canon(x, perm, r, sz, str);
        if (nd == 0 || (nd == 1 && str[0] == 1)) k->name = "transpose_copy";
        else if (str[nd - 1] == 1) k->name = "transpose_blocks";
        else k->name = v->name_2d;
    }
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Gather                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

/* data [d0..d_{r-1}], indices [i0..i_{q-1}] -> [d0..d_{axis-1}, i0..i_{q-1}, d_{axis+1}..]. */
static frt_status gather_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 2, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0)) || (st = frt_op_check_input(c, 1, 0))) return st;
    const frt_value *x = c->in[0], *ix = c->in[1];
    if (!is_int_dtype(ix->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "indices have dtype %s (int32 or int64 needed)",
                           frt_dtype_name((frt_dtype)ix->dtype));
    if (x->rank < 0 || ix->rank < 0) {
        frt_op_set_shape(c->out[0], x->dtype, -1, NULL);
        return FRT_OK;
    }
    if (x->rank == 0) return frt_op_fail(c, FRT_ERR_SHAPE, "data must have rank >= 1");
    int64_t a = frt_attr_int(c->node, "axis", 0);
    int axis = frt_norm_axis(a, x->rank);
    if (axis < 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d", (long long)a,
                           x->rank);
    int r = x->rank - 1 + ix->rank;
    if (r > FRT_MAX_RANK)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "output rank %d > %d", r, FRT_MAX_RANK);
    int64_t dims[FRT_MAX_RANK];
    int o = 0;
    for (int d = 0; d < axis; d++) dims[o++] = x->dims[d];
    for (int d = 0; d < ix->rank; d++) dims[o++] = ix->dims[d];
    for (int d = axis + 1; d < x->rank; d++) dims[o++] = x->dims[d];
    frt_op_set_shape(c->out[0], x->dtype, r, dims);
    return FRT_OK;
}

typedef struct gather_params {
    int64_t axis; /* the attribute as given */
} gather_params;

static frt_status gather_kernel(const frt_step *s, frt_exec *x) {
    const gather_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *ix = &x->values[s->in[1]];
    frt_value *y = &x->values[s->out[0]];
    size_t es = frt_dtype_size((frt_dtype)xv->dtype);
    int axis = frt_norm_axis(p->axis, xv->rank);
    if (axis < 0) return frt_step_fail(s, FRT_ERR_INTERNAL, "bad axis");
    int64_t n = xv->dims[axis], ni = ix->numel;
    for (int64_t j = 0; j < ni; j++) {
        int64_t v = frt_value_get_int(ix, j);
        if (v < -n || v >= n)
            return frt_step_fail(s, FRT_ERR_RUNTIME,
                                 "index %lld (at position %lld of the indices) is out of range for "
                                 "axis %d of size %lld",
                                 (long long)v, (long long)j, axis, (long long)n);
    }
    int64_t outer = prod_range(xv->dims, 0, axis);
    size_t inner = (size_t)prod_range(xv->dims, axis + 1, xv->rank) * es;
    if (!inner || !ni || !outer) return FRT_OK;
    const char *src = xv->data;
    char *dst = y->data;
    const int64_t *i64 = ix->dtype == FRT_INT64 ? ix->data : NULL;
    const int32_t *i32 = ix->dtype == FRT_INT32 ? ix->data : NULL;
    for (int64_t o = 0; o < outer; o++) {
        const char *base = src + (size_t)o * (size_t)n * inner;
        if (inner == es && es == 4 && i64) {
            u32a *d = (u32a *)dst;
            for (int64_t j = 0; j < ni; j++) {
                int64_t v = i64[j] < 0 ? i64[j] + n : i64[j];
                d[j] = ((const u32a *)base)[v];
            }
            dst += (size_t)ni * 4;
            continue;
        }
        if (inner == es && es == 8 && i64) {
            u64a *d = (u64a *)dst;
            for (int64_t j = 0; j < ni; j++) {
                int64_t v = i64[j] < 0 ? i64[j] + n : i64[j];
                d[j] = ((const u64a *)base)[v];
            }
            dst += (size_t)ni * 8;
            continue;
        }
        for (int64_t j = 0; j < ni; j++) {
            int64_t v = i64 ? i64[j] : i32[j];
            if (v < 0) v += n;
            copy_bytes(dst, base + (size_t)v * inner, inner);
            dst += inner;
        }
    }
    return FRT_OK;
}

static frt_status gather_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_fixed_size(c, c->in[0]->dtype);
    if (st) return st;
    gather_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->axis = frt_attr_int(c->node, "axis", 0);
    k->name = "gather";
    k->fn = gather_kernel;
    k->params = p;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Slice                                                                                           */
/* ---------------------------------------------------------------------------------------------- */

/* Per-dim slicing of data: out dim d = odim[d] elements start[d], start[d]+step[d], ...
 * odim[d] is -1 when unknown (load time). */
typedef struct slice_plan {
    int rank;
    int64_t start[FRT_MAX_RANK], step[FRT_MAX_RANK], odim[FRT_MAX_RANK];
} slice_plan;

/* A list of integers from an INTS attribute or an int32/int64 1-D tensor. */
typedef struct int_list {
    const int64_t *a;    /* attribute values, or NULL */
    const frt_value *v;  /* tensor values, or NULL */
    int64_t n;           /* -1 when the length is unknown */
    bool known;          /* values available */
} int_list;

static int64_t il_get(const int_list *l, int64_t i) {
    return l->a ? l->a[i] : frt_value_get_int(l->v, i);
}

/* Reads input i as an int_list; absent inputs leave l->n = 0 with known = true. */
static frt_status il_input(const frt_op_ctx *c, int i, const char *what, int_list *l) {
    memset(l, 0, sizeof *l);
    l->known = true;
    if (i >= c->n_in || !c->in[i]) return FRT_OK;
    const frt_value *v = c->in[i];
    if (!is_int_dtype(v->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "%s has dtype %s (int32 or int64 needed)", what,
                           frt_dtype_name((frt_dtype)v->dtype));
    if (v->rank >= 0 && v->rank != 1)
        return frt_op_fail(c, FRT_ERR_SHAPE, "%s must be 1-D, has rank %d", what, v->rank);
    l->v = v;
    l->n = v->rank == 1 ? v->dims[0] : -1;
    l->known = l->n == 0 || (v->data != NULL && l->n > 0); /* empty lists may have no data */
    return FRT_OK;
}

/* Opset < 10 takes starts, ends and axes as attributes: read at infer and select (for the
 * kernel's params). The arrays are the model's attribute data. */
typedef struct slice_attrs {
    bool legacy; /* opset < 10 */
    const int64_t *starts, *ends, *axes;
    size_t ns, ne, na;
} slice_attrs;

static frt_status slice_attrs_read(const frt_op_ctx *c, slice_attrs *sa) {
    memset(sa, 0, sizeof *sa);
    sa->legacy = c->opset < 10;
    if (!sa->legacy) return FRT_OK;
    sa->starts = frt_attr_ints(c->node, "starts", &sa->ns);
    sa->ends = frt_attr_ints(c->node, "ends", &sa->ne);
    sa->axes = frt_attr_ints(c->node, "axes", &sa->na);
    if (!sa->starts || !sa->ends)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "attributes 'starts' and 'ends' are required");
    return FRT_OK;
}

static frt_status slice_plan_make(const frt_op_ctx *c, const slice_attrs *sa, const frt_value *x,
                                  slice_plan *p) {
    frt_status st;
    int_list starts, ends, axes, steps;
    bool have_axes, have_steps;
    if (sa->legacy) {
        if ((st = frt_op_check_arity(c, 1, 1, 1, 1))) return st;
        memset(&starts, 0, sizeof starts);
        ends = axes = steps = starts;
        starts.a = sa->starts;
        ends.a = sa->ends;
        axes.a = sa->axes;
        starts.n = (int64_t)sa->ns;
        ends.n = (int64_t)sa->ne;
        axes.n = (int64_t)sa->na;
        starts.known = ends.known = axes.known = steps.known = true;
        have_axes = axes.a != NULL;
        have_steps = false;
    } else {
        if ((st = frt_op_check_arity(c, 3, 5, 1, 1))) return st;
        if ((st = frt_op_check_input(c, 1, 0)) || (st = frt_op_check_input(c, 2, 0))) return st;
        if ((st = il_input(c, 1, "starts", &starts)) || (st = il_input(c, 2, "ends", &ends)) ||
            (st = il_input(c, 3, "axes", &axes)) || (st = il_input(c, 4, "steps", &steps)))
            return st;
        have_axes = axes.v != NULL;
        have_steps = steps.v != NULL;
    }
    int r = x->rank;
    p->rank = r;
    if (r < 0) return FRT_OK;
    for (int d = 0; d < r; d++) {
        p->start[d] = 0;
        p->step[d] = 1;
        p->odim[d] = x->dims[d];
    }
    int64_t m = starts.n;
    if (m >= 0 && ((ends.n >= 0 && ends.n != m) || (have_axes && axes.n >= 0 && axes.n != m) ||
                   (have_steps && steps.n >= 0 && steps.n != m)))
        return frt_op_fail(c, FRT_ERR_SHAPE,
                           "starts, ends, axes and steps have different lengths (%lld, %lld, "
                           "%lld, %lld)",
                           (long long)m, (long long)ends.n, (long long)(have_axes ? axes.n : m),
                           (long long)(have_steps ? steps.n : m));
    if (m > r) return frt_op_fail(c, FRT_ERR_SHAPE, "%lld slice entries for rank %d", (long long)m, r);
    if (m < 0 || (have_axes && !axes.known)) {
        /* which axes are sliced is not known yet */
        for (int d = 0; d < r; d++) p->odim[d] = -1;
        return FRT_OK;
    }
    bool vals_known = starts.known && ends.known && (!have_steps || steps.known);
    unsigned seen = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t a = have_axes ? il_get(&axes, i) : i;
        int d = frt_norm_axis(a, r);
        if (d < 0)
            return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d", (long long)a,
                               r);
        if ((seen >> d) & 1)
            return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld appears twice", (long long)a);
        seen |= 1u << d;
        if (!vals_known) {
            p->odim[d] = -1;
            continue;
        }
        int64_t s = il_get(&starts, i), e = il_get(&ends, i);
        int64_t k = have_steps ? il_get(&steps, i) : 1;
        if (k == 0) return frt_op_fail(c, FRT_ERR_SHAPE, "step for axis %d is 0", d);
        if (k < -INT64_MAX) k = -INT64_MAX;
        p->step[d] = k;
        int64_t n = x->dims[d];
        if (n < 0) {
            p->odim[d] = -1;
            continue;
        }
        if (s < 0) s += n;
        if (e < 0) e += n;
        int64_t cnt;
        if (k > 0) {
            s = s < 0 ? 0 : s > n ? n : s;
            e = e < 0 ? 0 : e > n ? n : e;
            cnt = e > s ? (e - s - 1) / k + 1 : 0;
        } else {
            s = s < 0 ? 0 : s > n - 1 ? n - 1 : s;
            e = e < -1 ? -1 : e > n - 1 ? n - 1 : e;
            cnt = s > e ? (s - e - 1) / -k + 1 : 0;
        }
        p->start[d] = cnt ? s : 0;
        p->step[d] = cnt > 1 ? k : 1; /* with <= 1 element the step is irrelevant (and |k| < n
                                         otherwise, so strides cannot overflow) */
        p->odim[d] = cnt;
    }
    return FRT_OK;
}

static frt_status slice_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    const frt_value *x = c->in[0];
    slice_attrs sa;
    slice_plan p;
    if ((st = slice_attrs_read(c, &sa)) || (st = slice_plan_make(c, &sa, x, &p))) return st;
    frt_op_set_shape(c->out[0], x->dtype, x->rank, p.odim);
    return FRT_OK;
}

static frt_status slice_kernel(const frt_step *s, frt_exec *x) {
    frt_value *in[5], *out[1];
    frt_op_ctx c;
    if (s->n_in > 5 || s->n_out != 1) return frt_step_fail(s, FRT_ERR_INTERNAL, "bad arity");
    step_ctx(s, x, in, out, &c);
    const frt_value *xv = in[0];
    frt_value *y = out[0];
    slice_plan p;
    frt_status st = slice_plan_make(&c, s->k.params, xv, &p);
    if (st) return st;
    for (int d = 0; d < p.rank; d++)
        if (p.odim[d] != y->dims[d])
            return frt_step_fail(s, FRT_ERR_INTERNAL, "slice of dim %d has %lld elements, output "
                                 "has %lld", d, (long long)p.odim[d], (long long)y->dims[d]);
    if (y->numel == 0) return FRT_OK;
    size_t es = frt_dtype_size((frt_dtype)xv->dtype);
    int r = p.rank;
    int64_t istr[FRT_MAX_RANK];
    int64_t acc = 1;
    for (int d = r - 1; d >= 0; d--) {
        istr[d] = acc;
        acc *= xv->dims[d];
    }
    const char *src = xv->data;
    for (int d = 0; d < r; d++) src += p.start[d] * istr[d] * (int64_t)es;
    /* trailing dims taken whole form contiguous runs */
    int last = r - 1;
    int64_t inner = 1;
    while (last >= 0 && p.start[last] == 0 && p.step[last] == 1 &&
           p.odim[last] == xv->dims[last]) {
        inner *= xv->dims[last];
        last--;
    }
    int nd = last + 1;
    size_t block = (size_t)inner * es;
    if (last >= 0 && p.step[last] == 1) { /* the partial dim is a contiguous run too */
        block *= (size_t)p.odim[last];
        nd = last;
    }
    int64_t bstr[FRT_MAX_RANK];
    for (int d = 0; d < nd; d++) bstr[d] = p.step[d] * istr[d] * (int64_t)es;
    strided_copy(y->data, src, nd, p.odim, bstr, block, es);
    return FRT_OK;
}

static frt_status slice_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_fixed_size(c, c->in[0]->dtype);
    if (st) return st;
    slice_attrs *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    if ((st = slice_attrs_read(c, p))) return st;
    k->name = "slice";
    k->fn = slice_kernel;
    k->params = p;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Shape                                                                                           */
/* ---------------------------------------------------------------------------------------------- */

/* The opset 15 start and end attributes. */
typedef struct shape_params {
    int64_t start, end;
    bool has_end;     /* else the rank */
} shape_params;

static void shape_params_read(const frt_op_ctx *c, shape_params *p) {
    p->start = 0;
    p->end = 0;
    p->has_end = false;
    if (c->opset < 15) return;
    p->start = frt_attr_int(c->node, "start", 0);
    const frt_onnx_attr *a = frt_attr_find(c->node, "end");
    p->has_end = a && a->type == FRT_ATTR_INT;
    if (p->has_end) p->end = a->i;
}

/* Range [start, end) of dims reported (clamped to [0, rank]). */
static void shape_range(const shape_params *p, int rank, int64_t *lo, int64_t *hi) {
    int64_t s = p->start, e = p->has_end ? p->end : rank;
    if (s < 0) s += rank;
    if (e < 0) e += rank;
    s = s < 0 ? 0 : s > rank ? rank : s;
    e = e < 0 ? 0 : e > rank ? rank : e;
    *lo = s;
    *hi = e > s ? e : s;
}

static frt_status shape_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    int64_t n = -1;
    if (c->in[0]->rank >= 0) {
        int64_t lo, hi;
        shape_params sp;
        shape_params_read(c, &sp);
        shape_range(&sp, c->in[0]->rank, &lo, &hi);
        n = hi - lo;
    }
    frt_op_set_shape(c->out[0], FRT_INT64, 1, &n);
    return FRT_OK;
}

static frt_status shape_kernel(const frt_step *s, frt_exec *x) {
    frt_value *in[1], *out[1];
    frt_op_ctx c;
    step_ctx(s, x, in, out, &c);
    int64_t lo, hi;
    shape_range(s->k.params, in[0]->rank, &lo, &hi);
    if (out[0]->dtype != FRT_INT64 || out[0]->rank != 1 || out[0]->dims[0] != hi - lo)
        return frt_step_fail(s, FRT_ERR_INTERNAL, "output not shaped as [%lld] int64",
                             (long long)(hi - lo));
    int64_t *d = out[0]->data;
    for (int64_t i = lo; i < hi; i++) d[i - lo] = in[0]->dims[i];
    return FRT_OK;
}

static frt_status shape_select(frt_op_ctx *c, frt_kernel *k) {
    shape_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    shape_params_read(c, p);
    k->name = "shape";
    k->fn = shape_kernel;
    k->params = p;
    k->flags = FRT_K_SHAPE_ONLY;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Size                                                                                            */
/* ---------------------------------------------------------------------------------------------- */

/* Size(x): an int64 scalar, the number of elements of x (any dtype; x's data is never read). */
static frt_status size_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    frt_op_set_shape(c->out[0], FRT_INT64, 0, NULL);
    return FRT_OK;
}

static frt_status size_kernel(const frt_step *s, frt_exec *x) {
    const frt_value *in = &x->values[s->in[0]];
    frt_value *out = &x->values[s->out[0]];
    if (out->dtype != FRT_INT64 || out->numel != 1)
        return frt_step_fail(s, FRT_ERR_INTERNAL, "output not shaped as an int64 scalar");
    int64_t n = 1;
    for (int d = 0; d < in->rank; d++) n *= in->dims[d];
    memcpy(out->data, &n, 8);
    return FRT_OK;
}

static frt_status size_select(frt_op_ctx *c, frt_kernel *k) {
    (void)c;
    k->name = "size";
    k->fn = size_kernel;
    k->flags = FRT_K_SHAPE_ONLY;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Constant                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

typedef struct constant_src {
    int32_t dtype;
    int rank;
    int64_t dims[FRT_MAX_RANK];
    const void *data; /* NULL for value_float/value_int(s)/value_floats until select copies */
    size_t nbytes;
    const frt_onnx_attr *attr;
} constant_src;

static frt_status constant_source(const frt_op_ctx *c, constant_src *cs) {
    static const char *const names[] = {"value",       "value_float",  "value_floats",
                                        "value_int",   "value_ints",   "value_string",
                                        "value_strings", "sparse_value"};
    const frt_onnx_attr *a = NULL;
    int which = -1, count = 0;
    for (int i = 0; i < 8; i++) {
        const frt_onnx_attr *f = frt_attr_find(c->node, names[i]);
        if (f) {
            a = f;
            which = i;
            count++;
        }
    }
    if (count != 1)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "expects exactly one value attribute, has %d",
                           count);
    memset(cs, 0, sizeof *cs);
    cs->attr = a;
    static const frt_onnx_attr_type types[] = {FRT_ATTR_TENSOR, FRT_ATTR_FLOAT, FRT_ATTR_FLOATS,
                                               FRT_ATTR_INT,    FRT_ATTR_INTS,  FRT_ATTR_STRING,
                                               FRT_ATTR_STRINGS};
    if (which == 5 || which == 6)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unsupported: dtype string (attribute '%s')",
                           names[which]);
    if (which == 7)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED,
                           "unsupported: attribute 'sparse_value' (sparse tensors)");
    if (a->type != types[which])
        return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute '%s' has the wrong type (%d)",
                           names[which], (int)a->type);
    switch (which) {
    case 0: {
        const frt_onnx_tensor *t = a->t;
        if (!t) return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute 'value' has no tensor");
        size_t es = frt_dtype_size((frt_dtype)t->dtype);
        if (!es)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unsupported: dtype %s (constant)",
                               frt_dtype_name((frt_dtype)t->dtype));
        if (t->rank < 0 || t->rank > FRT_MAX_RANK)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "constant rank %d", t->rank);
        int64_t n = frt_shape_numel(t->dims, t->rank);
        if (n < 0 || (size_t)n > SIZE_MAX / es || t->nbytes != (size_t)n * es ||
            (n > 0 && !t->data))
            return frt_op_fail(c, FRT_ERR_MALFORMED,
                               "value tensor has %zu bytes of data for %lld elements of %s", 
                               t->data ? t->nbytes : 0, (long long)n,
                               frt_dtype_name((frt_dtype)t->dtype));
        cs->dtype = t->dtype;
        cs->rank = t->rank;
        memcpy(cs->dims, t->dims, sizeof cs->dims);
        cs->data = t->data;
        cs->nbytes = t->nbytes;
        break;
    }
    case 1:
        cs->dtype = FRT_FLOAT32;
        cs->nbytes = 4;
        break;
    case 2:
        cs->dtype = FRT_FLOAT32;
        cs->rank = 1;
        cs->dims[0] = (int64_t)a->n;
        cs->nbytes = a->n * 4;
        break;
    case 3:
        cs->dtype = FRT_INT64;
        cs->nbytes = 8;
        break;
    case 4:
        cs->dtype = FRT_INT64;
        cs->rank = 1;
        cs->dims[0] = (int64_t)a->n;
        cs->nbytes = a->n * 8;
        break;
    }
    return FRT_OK;
}

static frt_status constant_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 0, 0, 1, 1);
    if (st) return st;
    constant_src cs;
    if ((st = constant_source(c, &cs))) return st;
    frt_op_set_shape(c->out[0], cs.dtype, cs.rank, cs.dims);
    return FRT_OK;
}

typedef struct constant_params {
    const void *data;
    size_t nbytes;
} constant_params;

static frt_status constant_kernel(const frt_step *s, frt_exec *x) {
    const constant_params *p = s->k.params;
    frt_value *y = &x->values[s->out[0]];
    if (frt_value_nbytes(y) != p->nbytes)
        return frt_step_fail(s, FRT_ERR_INTERNAL, "output has %zu bytes, constant %zu",
                             frt_value_nbytes(y), p->nbytes);
    if (p->nbytes) memcpy(y->data, p->data, p->nbytes);
    return FRT_OK;
}

static frt_status constant_select(frt_op_ctx *c, frt_kernel *k) {
    constant_src cs;
    frt_status st = constant_source(c, &cs);
    if (st) return st;
    constant_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->nbytes = cs.nbytes;
    p->data = cs.data;
    if (!cs.data && cs.nbytes) { /* scalar or list attribute: copy into the model arena */
        void *d = frt_arena_alloc(c->arena, cs.nbytes, 8);
        if (!d) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
        const frt_onnx_attr *a = cs.attr;
        switch (a->type) {
        case FRT_ATTR_FLOAT: memcpy(d, &a->f, 4); break;
        case FRT_ATTR_INT: memcpy(d, &a->i, 8); break;
        case FRT_ATTR_FLOATS: memcpy(d, a->floats, cs.nbytes); break;
        case FRT_ATTR_INTS: memcpy(d, a->ints, cs.nbytes); break;
        default: return frt_op_fail(c, FRT_ERR_INTERNAL, "constant attribute type %d", a->type);
        }
        p->data = d;
    }
    k->name = "constant";
    k->fn = constant_kernel;
    k->params = p;
    return FRT_OK;
}

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(tensor, Concat, concat_infer, concat_select);
FRT_OP_IMPL(tensor, Transpose, transpose_infer, transpose_select);
FRT_OP_IMPL(tensor, Gather, gather_infer, gather_select);
FRT_OP_IMPL(tensor, Slice, slice_infer, slice_select);
FRT_OP_IMPL(tensor, Shape, shape_infer, shape_select);
FRT_OP_IMPL(tensor, Size, size_infer, size_select);
FRT_OP_IMPL(tensor, Constant, constant_infer, constant_select);

/* ---- ahead-of-time programs (src/ops/aot.h) ------------------------------------------------ */

#include "aot.h"

#if FRT_AOT_SAVE
/* Transpose: the tier of the 4-byte 2-D loop (its transpose_variants row) and the perm. */
frt_status frt_aot_save_transpose(const frt_step *s, frt_aot_w *w) {
    const transpose_params *p = s->k.params;
    if (s->k.fn != transpose_kernel || !p) return frt_aot_unsupported(s, "unknown kernel");
    int tier = -1;
    for (size_t i = 0; i < sizeof transpose_variants / sizeof *transpose_variants; i++)
        if (transpose_variants[i].t32 == p->t32) tier = (int)transpose_variants[i].isa;
    if (tier < 0) return frt_aot_unsupported(s, "2-D loop not in the table");
    frt_aot_put_i32(w, tier);
    frt_aot_put_i32(w, p->perm_rank);
    for (int i = 0; i < FRT_MAX_RANK; i++) frt_aot_put_i32(w, p->perm[i]);
    return FRT_OK;
}

/* Concat: the axis. */
frt_status frt_aot_save_concat(const frt_step *s, frt_aot_w *w) {
    const frt_concat_params *p = s->k.params;
    if (s->k.fn != concat_kernel || !p) return frt_aot_unsupported(s, "unknown kernel");
    frt_aot_put_i64(w, p->axis);
    return FRT_OK;
}
#endif

#if FRT_AOT_LOAD
frt_status frt_aot_load_transpose(frt_aot_r *r, frt_isa isa, const frt_step *s,
                                  const frt_value *values, frt_kernel *k) {
    int tier = frt_aot_int_in(r, FRT_ISA_PORTABLE, (int32_t)isa);
    transpose_params *p = frt_aot_params(r, sizeof *p);
    if (!p) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    p->perm_rank = frt_aot_int_in(r, -1, FRT_MAX_RANK);
    unsigned seen = 0;
    for (int i = 0; i < FRT_MAX_RANK; i++) {
        p->perm[i] = frt_aot_int_in(r, 0, FRT_MAX_RANK - 1);
        if (i < p->perm_rank) seen |= 1u << p->perm[i];
    }
    if (r->bad) return FRT_ERR_MALFORMED;
    if (s->n_in != 1 || s->n_out != 1 || s->in[0] < 0 ||
        (p->perm_rank >= 0 && (p->perm_rank != values[s->in[0]].rank ||
                               seen != (1u << p->perm_rank) - 1)))
        return frt_error(FRT_ERR_MALFORMED, "transpose step does not fit its perm");
    {
        const frt_value *x = &values[s->in[0]], *y = &values[s->out[0]];
        if (y->rank != x->rank || y->dtype != x->dtype)
            return frt_error(FRT_ERR_MALFORMED, "transpose step does not fit its values");
        for (int i = 0; i < x->rank; i++)
            if (y->dims[i] != x->dims[p->perm_rank < 0 ? x->rank - 1 - i : p->perm[i]])
                return frt_error(FRT_ERR_MALFORMED, "transpose step does not fit its values");
    }
    const transpose_variant *v = FRT_PICK_VARIANT(transpose_variants, (frt_isa)tier);
    if ((int)v->isa != tier)
        return frt_error(FRT_ERR_UNSUPPORTED, "transpose loops of tier %s not in this build",
                         frt_isa_name((frt_isa)tier));
    p->t32 = v->t32;
    k->fn = transpose_kernel;
    k->params = p;
    return FRT_OK;
}

frt_status frt_aot_load_concat(frt_aot_r *r, frt_isa isa, const frt_step *s,
                               const frt_value *values, frt_kernel *k) {
    (void)isa;
    frt_concat_params *p = frt_aot_params(r, sizeof *p);
    if (!p) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    p->axis = frt_aot_i64(r);
    if (r->bad) return FRT_ERR_MALFORMED;
    if (s->n_out != 1 || s->n_in < 1 || frt_norm_axis(p->axis, values[s->out[0]].rank) < 0)
        return frt_error(FRT_ERR_MALFORMED, "concat step does not fit its axis");
    const frt_value *y = &values[s->out[0]];
    int axis = frt_norm_axis(p->axis, y->rank);
    int64_t sum = 0;
    for (int i = 0; i < s->n_in; i++) {
        if (s->in[i] < 0) return frt_error(FRT_ERR_MALFORMED, "concat step lacks an input");
        const frt_value *v = &values[s->in[i]];
        if (v->rank != y->rank || v->dtype != y->dtype)
            return frt_error(FRT_ERR_MALFORMED, "concat step does not fit its inputs");
        for (int d = 0; d < y->rank; d++)
            if (d != axis && v->dims[d] != y->dims[d])
                return frt_error(FRT_ERR_MALFORMED, "concat step does not fit its inputs");
        sum += v->dims[axis];
    }
    if (sum != y->dims[axis])
        return frt_error(FRT_ERR_MALFORMED, "concat step does not fit its inputs");
    k->fn = concat_kernel;
    k->params = p;
    k->flags = FRT_K_CONCAT;
    return FRT_OK;
}
#endif
