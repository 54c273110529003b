/* Expand Tile Split Range ConstantOfShape OneHot Trilu EyeLike DepthToSpace SpaceToDepth
 * ReverseSequence: shape and data-movement operators.
 *
 * Every kernel here moves elements without interpreting them (bytes of the dtype's size), except
 * Range, OneHot's index comparison and EyeLike's "one", which go through dtype_util.h. Copies run
 * over the largest contiguous blocks: Expand and Tile build one output row (or slab) and
 * replicate it with memcpy, Split copies one contiguous run per outer index, the permutations
 * (DepthToSpace, SpaceToDepth) merge dims first so the innermost loop is a typed strided gather.
 *
 * Output shapes that depend on input data (Expand's shape, Tile's repeats, Split's split, Range's
 * start/limit/delta, ConstantOfShape's shape, OneHot's depth) are computed by infer from the input
 * data when it is available and left unknown (-1) otherwise (FRT_OP_SHAPE_IN in ops.def). Kernels
 * read every dim from the runtime values, so one kernel serves every shape.
 */
#include <math.h>
#include <string.h>

#include "dtype_util.h"
#include "op.h"

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

static void set_unknown(frt_value *out, int32_t dtype, int rank) {
    int64_t dims[FRT_MAX_RANK];
    for (int i = 0; i < FRT_MAX_RANK; i++) dims[i] = -1;
    frt_op_set_shape(out, dtype, rank, dims);
}

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

static frt_value *in_val(const frt_step *s, frt_exec *x, int i) {
    return i < s->n_in && s->in[i] >= 0 ? &x->values[s->in[i]] : NULL;
}

/* Writes n copies of the es-byte element at pat to dst: the first by memcpy, then by doubling. */
static void fill_elems(char *dst, const void *pat, int64_t n, size_t es) {
    if (n <= 0) return;
    switch (es) {
    case 1: memset(dst, *(const uint8_t *)pat, (size_t)n); return;
    case 4: {
        uint32_t v;
        memcpy(&v, pat, 4);
        u32a *d = (u32a *)dst;
        for (int64_t i = 0; i < n; i++) d[i] = v;
        return;
    }
    case 8: {
        uint64_t v;
        memcpy(&v, pat, 8);
        u64a *d = (u64a *)dst;
        for (int64_t i = 0; i < n; i++) d[i] = v;
        return;
    }
    default: break;
    }
    memcpy(dst, pat, es);
    size_t have = es, total = (size_t)n * es;
    while (have < total) {
        size_t c = have < total - have ? have : total - have;
        memcpy(dst + have, dst, c);
        have += c;
    }
}

/* Makes `times` copies in total of the block of `bytes` bytes at dst (the first already there),
 * one after another, by doubling. */
static void replicate_block(char *dst, size_t bytes, int64_t times) {
    if (times <= 1 || bytes == 0) return;
    size_t have = bytes, total = bytes * (size_t)times;
    while (have < total) {
        size_t c = have < total - have ? have : total - have;
        memcpy(dst + have, dst, c);
        have += c;
    }
}

/* Permuted copy: output dim k is input dim perm[k] (r dims, input dims idims, plain row-major,
 * es-byte elements). Size-1 dims are dropped and output-adjacent dims that are input-adjacent
 * merged, so contiguous runs are copied with memcpy and the rest by a typed strided gather along
 * the innermost output dim. */
static void permute_copy(char *dst, const char *src, int r, const int64_t *idims, const int *perm,
                         size_t es) {
    int64_t istr[FRT_MAX_RANK], sz[FRT_MAX_RANK], st[FRT_MAX_RANK];
    int64_t acc = 1;
    for (int i = r - 1; i >= 0; i--) {
        istr[i] = acc;
        acc *= idims[i];
    }
    if (acc == 0) return;
    int nd = 0;
    for (int k = 0; k < r; k++) {
        int64_t n = idims[perm[k]], s = istr[perm[k]];
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
    if (nd == 0) {
        memcpy(dst, src, es);
        return;
    }
    bool contig = st[nd - 1] == 1;
    int64_t row = sz[nd - 1];
    size_t row_bytes = (size_t)row * es;
    int64_t rstride = st[nd - 1] * (int64_t)es;
    int no = nd - 1;
    int64_t rows = prod_range(sz, 0, no);
    int64_t idx[FRT_MAX_RANK] = {0};
    const char *s = src;
    for (int64_t t = 0; t < rows; t++) {
        if (contig) memcpy(dst, s, row_bytes);
        else frt_gather_elems(dst, s, row, rstride, es);
        dst += row_bytes;
        for (int k = no - 1; k >= 0; k--) {
            s += st[k] * (int64_t)es;
            if (++idx[k] < sz[k]) break;
            s -= st[k] * sz[k] * (int64_t)es;
            idx[k] = 0;
        }
    }
}

/* An integer list input (any integer dtype, 1-D): *n its length (-1 unknown), *known whether the
 * values are in vals (data present, or empty). */
static frt_status int_list(const frt_op_ctx *c, int i, const char *what, int64_t *vals, int max,
                           int *n, bool *known) {
    const frt_value *v = c->in[i];
    *n = -1;
    *known = false;
    if (!frt_dtype_is_int(v->dtype))
        return frt_op_fail(c, FRT_ERR_SHAPE, "%s input has dtype %s, expected int64", what,
                           frt_dtype_name((frt_dtype)v->dtype));
    if (v->rank >= 0 && v->rank != 1)
        return frt_op_fail(c, FRT_ERR_SHAPE, "%s input must be 1-D, has rank %d", what, v->rank);
    if (v->rank != 1 || v->dims[0] < 0) return FRT_OK;
    if (v->dims[0] > max)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "%s input has %lld entries (max %d)", what,
                           (long long)v->dims[0], max);
    *n = (int)v->dims[0];
    if (*n > 0 && !v->data) return FRT_OK;
    for (int k = 0; k < *n; k++) vals[k] = frt_ld_i64(v->dtype, v->data, k);
    *known = true;
    return FRT_OK;
}

/* A scalar input (rank 0, or one element): *known whether its data is present. */
static frt_status scalar_input(const frt_op_ctx *c, int i, const char *what, bool *known) {
    const frt_value *v = c->in[i];
    if (v->numel >= 0 && v->numel != 1) {
        char b[128];
        return frt_op_fail(c, FRT_ERR_SHAPE, "%s must be a scalar, has shape %s", what,
                           frt_shape_str(v, b, sizeof b));
    }
    *known = v->data != NULL && v->numel == 1;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Expand                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

/* Output: the numpy broadcast of the input's dims and the shape input's values. */
static frt_status expand_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 2, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0)) || (st = frt_op_check_input(c, 1, 0))) return st;
    const frt_value *x = c->in[0];
    int64_t sh[FRT_MAX_RANK];
    int n;
    bool known;
    if ((st = int_list(c, 1, "shape", sh, FRT_MAX_RANK, &n, &known))) return st;
    if (n < 0 || x->rank < 0) {
        set_unknown(c->out[0], x->dtype, -1);
        return FRT_OK;
    }
    int R = x->rank > n ? x->rank : n;
    if (!known) {
        set_unknown(c->out[0], x->dtype, R);
        return FRT_OK;
    }
    int64_t od[FRT_MAX_RANK];
    for (int i = 0; i < R; i++) {
        int xi = i - (R - x->rank), si = i - (R - n);
        int64_t a = xi >= 0 ? x->dims[xi] : 1, b = si >= 0 ? sh[si] : 1;
        if (b < 0)
            return frt_op_fail(c, FRT_ERR_SHAPE, "shape entry %d is %lld", si, (long long)b);
        if (a < 0) od[i] = b == 1 ? -1 : b;
        else if (a == b || b == 1) od[i] = a;
        else if (a == 1) od[i] = b;
        else {
            char b0[160], b1[160];
            return frt_op_fail(c, FRT_ERR_SHAPE, "input %s cannot be expanded to shape %s",
                               frt_shape_str(x, b0, sizeof b0), frt_ints_str(sh, n, b1, sizeof b1));
        }
    }
    frt_op_set_shape(c->out[0], x->dtype, R, od);
    return FRT_OK;
}

/* Broadcast copy over nd merged dims: on[k] output sizes, bc[k] whether the input has size 1 there
 * (else the same size), ostr/istr byte strides. The innermost dim is a memcpy (or a fill of one
 * element); an outer broadcast dim writes its first slice and replicates it. */
static void bcast_rec(char *dst, const char *src, int d, int nd, const int64_t *on, const bool *bc,
                      const int64_t *ostr, const int64_t *istr, size_t es) {
    if (d == nd - 1) {
        if (bc[d]) fill_elems(dst, src, on[d], es);
        else memcpy(dst, src, (size_t)on[d] * es);
        return;
    }
    if (bc[d]) {
        bcast_rec(dst, src, d + 1, nd, on, bc, ostr, istr, es);
        replicate_block(dst, (size_t)ostr[d], on[d]);
        return;
    }
    for (int64_t i = 0; i < on[d]; i++)
        bcast_rec(dst + i * ostr[d], src + i * istr[d], d + 1, nd, on, bc, ostr, istr, es);
}

/* Broadcasts x (rank <= R) into y (rank R) by the numpy rule (x's dims are 1 or y's). */
static void broadcast_to(char *dst, const frt_value *y, const char *src, const frt_value *x,
                         size_t es) {
    int R = y->rank;
    if (y->numel == 0) return;
    int64_t on[FRT_MAX_RANK];
    bool bc[FRT_MAX_RANK];
    int nd = 0;
    for (int i = 0; i < R; i++) {
        int xi = i - (R - x->rank);
        int64_t a = xi >= 0 ? x->dims[xi] : 1, o = y->dims[i];
        if (o == 1) continue;
        bool b = a == 1;
        if (nd > 0 && bc[nd - 1] == b) on[nd - 1] *= o;
        else {
            on[nd] = o;
            bc[nd] = b;
            nd++;
        }
    }
    if (nd == 0) {
        memcpy(dst, src, es);
        return;
    }
    int64_t ostr[FRT_MAX_RANK], istr[FRT_MAX_RANK];
    int64_t oa = (int64_t)es, ia = (int64_t)es;
    for (int k = nd - 1; k >= 0; k--) {
        ostr[k] = oa;
        istr[k] = ia;
        oa *= on[k];
        if (!bc[k]) ia *= on[k];
    }
    bcast_rec(dst, src, 0, nd, on, bc, ostr, istr, es);
}

static frt_status expand_kernel(const frt_step *s, frt_exec *x) {
    const frt_value *xv = in_val(s, x, 0);
    frt_value *y = &x->values[s->out[0]];
    broadcast_to(y->data, y, xv->data, xv, frt_dtype_size((frt_dtype)xv->dtype));
    return FRT_OK;
}

static frt_status expand_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_fixed_size(c, c->in[0]->dtype);
    if (st) return st;
    k->name = "expand";
    k->fn = expand_kernel;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Tile                                                                                            */
/* ---------------------------------------------------------------------------------------------- */

static frt_status tile_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 2, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0)) || (st = frt_op_check_input(c, 1, 0))) return st;
    const frt_value *x = c->in[0];
    int64_t rep[FRT_MAX_RANK];
    int n;
    bool known;
    if ((st = int_list(c, 1, "repeats", rep, FRT_MAX_RANK, &n, &known))) return st;
    int r = x->rank >= 0 ? x->rank : n;
    if (x->rank >= 0 && n >= 0 && n != x->rank)
        return frt_op_fail(c, FRT_ERR_SHAPE, "repeats has %d entries for an input of rank %d", n,
                           x->rank);
    if (r < 0 || !known || x->rank < 0) {
        set_unknown(c->out[0], x->dtype, r);
        return FRT_OK;
    }
    int64_t od[FRT_MAX_RANK];
    for (int i = 0; i < r; i++) {
        if (rep[i] < 0)
            return frt_op_fail(c, FRT_ERR_SHAPE, "repeats entry %d is %lld (must be >= 0)", i,
                               (long long)rep[i]);
        if (x->dims[i] < 0) od[i] = -1;
        else if (__builtin_mul_overflow(x->dims[i], rep[i], &od[i]))
            return frt_op_fail(c, FRT_ERR_SHAPE, "tiled dim %d overflows", i);
    }
    frt_op_set_shape(c->out[0], x->dtype, r, od);
    return FRT_OK;
}

/* Tiles over nd merged dims: in[k] input sizes, rep[k] repeats; istr/ostr byte strides of one
 * index of dim k. Dim k's output is in[k] sub-blocks followed by rep[k]-1 copies of them. */
static void tile_rec(char *dst, const char *src, int d, int nd, const int64_t *in,
                     const int64_t *rep, const int64_t *istr, const int64_t *ostr) {
    if (d == nd - 1) memcpy(dst, src, (size_t)(in[d] * istr[d]));
    else
        for (int64_t i = 0; i < in[d]; i++)
            tile_rec(dst + i * ostr[d], src + i * istr[d], d + 1, nd, in, rep, istr, ostr);
    replicate_block(dst, (size_t)(in[d] * ostr[d]), rep[d]);
}

static frt_status tile_kernel(const frt_step *s, frt_exec *x) {
    const frt_value *xv = in_val(s, x, 0);
    frt_value *y = &x->values[s->out[0]];
    size_t es = frt_dtype_size((frt_dtype)xv->dtype);
    if (y->numel == 0) return FRT_OK;
    int r = xv->rank;
    if (r == 0) {
        memcpy(y->data, xv->data, es);
        return FRT_OK;
    }
    /* merge: a dim with no repeat joins the dim outside it (its blocks are contiguous) */
    int64_t in[FRT_MAX_RANK], rep[FRT_MAX_RANK];
    int nd = 0;
    for (int i = 0; i < r; i++) {
        int64_t n = xv->dims[i], t = y->dims[i] / n;
        if (nd > 0 && t == 1) in[nd - 1] *= n;
        else {
            in[nd] = n;
            rep[nd] = t;
            nd++;
        }
    }
    int64_t istr[FRT_MAX_RANK], ostr[FRT_MAX_RANK];
    int64_t ia = (int64_t)es, oa = (int64_t)es;
    for (int k = nd - 1; k >= 0; k--) {
        istr[k] = ia;
        ostr[k] = oa;
        ia *= in[k];
        oa *= in[k] * rep[k];
    }
    tile_rec(y->data, xv->data, 0, nd, in, rep, istr, ostr);
    return FRT_OK;
}

static frt_status tile_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_fixed_size(c, c->in[0]->dtype);
    if (st) return st;
    k->name = "tile";
    k->fn = tile_kernel;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Split                                                                                           */
/* ---------------------------------------------------------------------------------------------- */

/* The split sizes: *n = -1 when they are not known yet (non-constant split input); *given false
 * when neither the attribute nor the input is present (equal parts). */
static frt_status split_sizes(const frt_op_ctx *c, int64_t *sz, int *n, bool *given) {
    *given = false;
    *n = 0;
    bool input_form = c->opset >= 13 || (c->opset < 2 && c->n_in >= 2 && c->in[1]);
    if (!input_form) {
        size_t cnt;
        const int64_t *a = frt_attr_ints(c->node, "split", &cnt);
        if (!a) return FRT_OK;
        if (cnt != (size_t)c->n_out)
            return frt_op_fail(c, FRT_ERR_SHAPE, "split has %zu entries for %d outputs", cnt,
                               c->n_out);
        memcpy(sz, a, cnt * sizeof *a);
        *n = (int)cnt;
        *given = true;
        return FRT_OK;
    }
    if (c->n_in < 2 || !c->in[1]) return FRT_OK;
    *given = true;
    bool known;
    frt_status st = int_list(c, 1, "split", sz, c->n_out, n, &known);
    if (st) return st;
    if (*n >= 0 && *n != c->n_out)
        return frt_op_fail(c, FRT_ERR_SHAPE, "split has %d entries for %d outputs", *n, c->n_out);
    if (!known) *n = -1;
    return FRT_OK;
}

static frt_status split_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 2, 1, 1 << 16);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    const frt_value *x = c->in[0];
    int64_t sz[64]; /* the split sizes, one per output */
    if (c->n_out > 64)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "Split into %d outputs (max 64)", c->n_out);
    int n;
    bool given;
    if ((st = split_sizes(c, sz, &n, &given))) return st;
    int64_t num_outputs = frt_attr_int(c->node, "num_outputs", 0);
    if (c->opset >= 18 && frt_attr_find(c->node, "num_outputs")) {
        if (given)
            return frt_op_fail(c, FRT_ERR_MALFORMED, "both split and num_outputs are given");
        if (num_outputs != c->n_out)
            return frt_op_fail(c, FRT_ERR_SHAPE, "num_outputs is %lld but the node has %d outputs",
                               (long long)num_outputs, c->n_out);
    }
    for (int j = 0; j < c->n_out; j++)
        if (c->out[j]) set_unknown(c->out[j], x->dtype, x->rank);
    if (x->rank < 0) return FRT_OK;
    if (x->rank == 0) return frt_op_fail(c, FRT_ERR_SHAPE, "cannot split a scalar");
    int64_t a = frt_attr_int(c->node, "axis", 0);
    int axis = frt_norm_axis(a, x->rank);
    if (axis < 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d", (long long)a,
                           x->rank);
    int64_t D = x->dims[axis];
    if (!given && D >= 0) {
        int64_t parts = c->n_out;
        if (c->opset >= 18) {
            int64_t chunk = (D + parts - 1) / parts;
            for (int j = 0; j < c->n_out; j++) {
                int64_t lo = chunk * j;
                sz[j] = lo >= D ? 0 : D - lo < chunk ? D - lo : chunk;
            }
        } else {
            if (D % parts != 0)
                return frt_op_fail(c, FRT_ERR_SHAPE, "dim %d of size %lld cannot be split into %d "
                                   "equal parts", axis, (long long)D, c->n_out);
            for (int j = 0; j < c->n_out; j++) sz[j] = D / parts;
        }
        n = c->n_out;
    } else if (!given) {
        n = -1;
    }
    if (n >= 0) {
        int64_t sum = 0;
        for (int j = 0; j < n; j++) {
            if (sz[j] < 0)
                return frt_op_fail(c, FRT_ERR_SHAPE, "split entry %d is %lld", j, (long long)sz[j]);
            if (__builtin_add_overflow(sum, sz[j], &sum))
                return frt_op_fail(c, FRT_ERR_SHAPE, "split sizes overflow");
        }
        if (D >= 0 && sum != D)
            return frt_op_fail(c, FRT_ERR_SHAPE, "split sizes add up to %lld, dim %d has %lld",
                               (long long)sum, axis, (long long)D);
    }
    for (int j = 0; j < c->n_out; j++) {
        if (!c->out[j]) continue;
        int64_t od[FRT_MAX_RANK];
        memcpy(od, x->dims, sizeof od);
        od[axis] = n >= 0 ? sz[j] : -1;
        frt_op_set_shape(c->out[j], x->dtype, x->rank, od);
    }
    return FRT_OK;
}

typedef struct split_params {
    int64_t axis;
} split_params;

static frt_status split_kernel(const frt_step *s, frt_exec *x) {
    const split_params *p = s->k.params;
    const frt_value *xv = in_val(s, x, 0);
    size_t es = frt_dtype_size((frt_dtype)xv->dtype);
    int axis = frt_norm_axis(p->axis, xv->rank);
    if (axis < 0) return frt_step_fail(s, FRT_ERR_INTERNAL, "bad axis");
    int64_t outer = prod_range(xv->dims, 0, axis), D = xv->dims[axis];
    size_t inner = (size_t)prod_range(xv->dims, axis + 1, xv->rank) * es;
    int64_t off = 0;
    for (int j = 0; j < s->n_out; j++) {
        /* every output's size along the axis comes from its shape (infer) */
        int64_t sj;
        if (s->out[j] >= 0) sj = x->values[s->out[j]].dims[axis];
        else return frt_step_fail(s, FRT_ERR_UNSUPPORTED, "omitted Split output %d", j);
        if (off + sj > D) return frt_step_fail(s, FRT_ERR_INTERNAL, "split past the dim");
        char *dst = x->values[s->out[j]].data;
        size_t run = (size_t)sj * inner;
        if (run)
            for (int64_t o = 0; o < outer; o++)
                memcpy(dst + (size_t)o * run,
                       (const char *)xv->data + ((size_t)o * (size_t)D + (size_t)off) * inner,
                       run);
        off += sj;
    }
    return FRT_OK;
}

static frt_status split_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_fixed_size(c, c->in[0]->dtype);
    if (st) return st;
    for (int j = 0; j < c->n_out; j++)
        if (c->node->out[j] < 0)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "omitted Split output %d", j);
    split_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->axis = frt_attr_int(c->node, "axis", 0);
    k->name = "split";
    k->fn = split_kernel;
    k->params = p;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Range                                                                                           */
/* ---------------------------------------------------------------------------------------------- */

static bool range_dtype_ok(int32_t dt) {
    return dt == FRT_FLOAT32 || dt == FRT_FLOAT64 || dt == FRT_INT16 || dt == FRT_INT32 ||
           dt == FRT_INT64;
}

/* Number of elements max(ceil((limit - start) / delta), 0); -1 with a message on a bad delta. */
static frt_status range_count(const frt_op_ctx *c, int32_t dt, const void *ps, const void *pl,
                              const void *pd, int64_t *n) {
    if (frt_dtype_is_int(dt)) {
        int64_t s = frt_ld_i64(dt, ps, 0), l = frt_ld_i64(dt, pl, 0), d = frt_ld_i64(dt, pd, 0);
        if (d == 0) return frt_op_fail(c, FRT_ERR_SHAPE, "delta is 0");
        /* exact: limit - start fits in 128 bits */
        __int128 span = (__int128)l - s;
        __int128 q = span / d, r = span % d;
        if (r != 0 && ((r > 0) == (d > 0))) q++;
        *n = q < 0 ? 0 : q > INT64_MAX ? INT64_MAX : (int64_t)q;
    } else {
        double s = frt_ld_f64(dt, ps, 0), l = frt_ld_f64(dt, pl, 0), d = frt_ld_f64(dt, pd, 0);
        if (d == 0 || d != d || s != s || l != l)
            return frt_op_fail(c, FRT_ERR_SHAPE, "start, limit and delta must be finite with "
                               "delta != 0");
        double q = ceil((l - s) / d);
        if (!(q < 0x1p62)) return frt_op_fail(c, FRT_ERR_SHAPE, "range has too many elements");
        *n = q < 0 ? 0 : (int64_t)q;
    }
    return FRT_OK;
}

static frt_status range_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 3, 3, 1, 1);
    if (st) return st;
    bool kn[3];
    static const char *const names[] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; i++) {
        if ((st = frt_op_check_input(c, i, 0)) || (st = scalar_input(c, i, names[i], &kn[i])))
            return st;
        if (c->in[i]->dtype != c->in[0]->dtype)
            return frt_op_fail(c, FRT_ERR_SHAPE, "%s has dtype %s, start has %s", names[i],
                               frt_dtype_name((frt_dtype)c->in[i]->dtype),
                               frt_dtype_name((frt_dtype)c->in[0]->dtype));
    }
    int32_t dt = c->in[0]->dtype;
    if (!range_dtype_ok(dt))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s is not supported (float, double, "
                           "int16, int32, int64 are)", frt_dtype_name((frt_dtype)dt));
    int64_t n = -1;
    if (kn[0] && kn[1] && kn[2] &&
        (st = range_count(c, dt, c->in[0]->data, c->in[1]->data, c->in[2]->data, &n)))
        return st;
    frt_op_set_shape(c->out[0], dt, 1, &n);
    return FRT_OK;
}

static frt_status range_kernel(const frt_step *s, frt_exec *x) {
    const frt_value *vs = in_val(s, x, 0), *vd = in_val(s, x, 2);
    frt_value *y = &x->values[s->out[0]];
    int32_t dt = y->dtype;
    int64_t n = y->numel;
    if (dt == FRT_FLOAT32) {
        float st = *(const float *)vs->data, d = *(const float *)vd->data;
        float *o = y->data;
        for (int64_t i = 0; i < n; i++) o[i] = st + (float)i * d;
    } else if (frt_dtype_is_int(dt)) {
        int64_t st = frt_ld_i64(dt, vs->data, 0), d = frt_ld_i64(dt, vd->data, 0);
        for (int64_t i = 0; i < n; i++)
            frt_st_i64(dt, y->data, i, (int64_t)((uint64_t)st + (uint64_t)i * (uint64_t)d));
    } else {
        double st = frt_ld_f64(dt, vs->data, 0), d = frt_ld_f64(dt, vd->data, 0);
        for (int64_t i = 0; i < n; i++) frt_st_f64(dt, y->data, i, st + (double)i * d);
    }
    return FRT_OK;
}

static frt_status range_select(frt_op_ctx *c, frt_kernel *k) {
    (void)c;
    k->name = "range";
    k->fn = range_kernel;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* ConstantOfShape                                                                                 */
/* ---------------------------------------------------------------------------------------------- */

/* The value attribute: a one-element tensor of any fixed-size dtype (default float32 0). pat
 * receives its bytes. */
static frt_status cos_value(const frt_op_ctx *c, int32_t *dtype, unsigned char pat[16]) {
    const frt_onnx_attr *a = frt_attr_find(c->node, "value");
    memset(pat, 0, 16);
    *dtype = FRT_FLOAT32;
    if (!a) return FRT_OK;
    if (a->type != FRT_ATTR_TENSOR || !a->t)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute 'value' must be a tensor");
    const frt_onnx_tensor *t = a->t;
    size_t es = frt_dtype_size((frt_dtype)t->dtype);
    if (!es || es > 16)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "value of dtype %s is not supported",
                           frt_dtype_name((frt_dtype)t->dtype));
    if (t->numel != 1 || !t->data || t->nbytes != es)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "value must hold exactly one element");
    memcpy(pat, t->data, es);
    *dtype = t->dtype;
    return FRT_OK;
}

static frt_status cos_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    int32_t dt;
    unsigned char pat[16];
    if ((st = cos_value(c, &dt, pat))) return st;
    if (c->in[0]->dtype != FRT_INT64)
        return frt_op_fail(c, FRT_ERR_SHAPE, "input has dtype %s, expected int64",
                           frt_dtype_name((frt_dtype)c->in[0]->dtype));
    int64_t sh[FRT_MAX_RANK];
    int n;
    bool known;
    if ((st = int_list(c, 0, "shape", sh, FRT_MAX_RANK, &n, &known))) return st;
    if (n < 0 || !known) {
        set_unknown(c->out[0], dt, n);
        return FRT_OK;
    }
    for (int i = 0; i < n; i++)
        if (sh[i] < 0)
            return frt_op_fail(c, FRT_ERR_SHAPE, "shape entry %d is %lld", i, (long long)sh[i]);
    if (frt_shape_numel(sh, n) < 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "shape has too many elements");
    frt_op_set_shape(c->out[0], dt, n, sh);
    return FRT_OK;
}

typedef struct cos_params {
    unsigned char pat[16];
} cos_params;

static frt_status cos_kernel(const frt_step *s, frt_exec *x) {
    const cos_params *p = s->k.params;
    frt_value *y = &x->values[s->out[0]];
    fill_elems(y->data, p->pat, y->numel, frt_dtype_size((frt_dtype)y->dtype));
    return FRT_OK;
}

static frt_status cos_select(frt_op_ctx *c, frt_kernel *k) {
    cos_params *p = frt_arena_alloc(c->arena, sizeof *p, 16);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    int32_t dt;
    frt_status st = cos_value(c, &dt, p->pat);
    if (st) return st;
    k->name = "constant_of_shape";
    k->fn = cos_kernel;
    k->params = p;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* OneHot                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

static bool numeric(int32_t dt) { return frt_dtype_is_int(dt) || frt_dtype_is_float(dt); }

static frt_status onehot_depth(const frt_op_ctx *c, const frt_value *d, int64_t *depth) {
    double v = frt_ld_f64(d->dtype, d->data, 0);
    if (!(v >= 1) || v > 0x1p40)
        return frt_op_fail(c, FRT_ERR_SHAPE, "depth is %g (must be >= 1)", v);
    *depth = (int64_t)v;
    return FRT_OK;
}

/* indices [i0..i_{r-1}] -> [i0..i_{axis-1}, depth, i_axis..], dtype of values. */
static frt_status onehot_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 3, 3, 1, 1);
    if (st) return st;
    for (int i = 0; i < 3; i++)
        if ((st = frt_op_check_input(c, i, 0))) return st;
    const frt_value *ix = c->in[0], *dv = c->in[1], *vals = c->in[2];
    if (!numeric(ix->dtype) || !numeric(dv->dtype))
        return frt_op_fail(c, FRT_ERR_SHAPE, "indices and depth must be numeric");
    bool dknown;
    if ((st = scalar_input(c, 1, "depth", &dknown))) return st;
    if (vals->numel >= 0 && vals->numel != 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "values must have 2 elements, has %lld",
                           (long long)vals->numel);
    if (ix->rank < 0) {
        set_unknown(c->out[0], vals->dtype, -1);
        return FRT_OK;
    }
    int R = ix->rank + 1;
    if (R > FRT_MAX_RANK)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "output rank %d > %d", R, FRT_MAX_RANK);
    int64_t a = frt_attr_int(c->node, "axis", -1);
    int axis = frt_norm_axis(a, R);
    if (axis < 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for output rank %d",
                           (long long)a, R);
    int64_t depth = -1;
    if (dknown && (st = onehot_depth(c, dv, &depth))) return st;
    int64_t od[FRT_MAX_RANK];
    for (int i = 0, j = 0; i < R; i++) od[i] = i == axis ? depth : ix->dims[j++];
    frt_op_set_shape(c->out[0], vals->dtype, R, od);
    return FRT_OK;
}

typedef struct onehot_params {
    int64_t axis;
} onehot_params;

static frt_status onehot_kernel(const frt_step *s, frt_exec *x) {
    const onehot_params *p = s->k.params;
    const frt_value *ix = in_val(s, x, 0), *vals = in_val(s, x, 2);
    frt_value *y = &x->values[s->out[0]];
    size_t es = frt_dtype_size((frt_dtype)y->dtype);
    int axis = frt_norm_axis(p->axis, y->rank);
    if (axis < 0) return frt_step_fail(s, FRT_ERR_INTERNAL, "bad axis");
    int64_t depth = y->dims[axis];
    const char *off = vals->data, *on = (const char *)vals->data + es;
    fill_elems(y->data, off, y->numel, es);
    int64_t outer = prod_range(ix->dims, 0, axis), inner = prod_range(ix->dims, axis, ix->rank);
    bool is_int = frt_dtype_is_int(ix->dtype);
    char *dst = y->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t e = o * inner + i, k;
            if (is_int) {
                k = frt_ld_i64(ix->dtype, ix->data, e);
            } else {
                double v = frt_ld_f64(ix->dtype, ix->data, e);
                if (!(v == floor(v)) || fabs(v) > 0x1p62) continue;
                k = (int64_t)v;
            }
            if (k < 0 && k >= -depth) k += depth;
            if (k < 0 || k >= depth) continue; /* out of range: all off (the spec) */
            memcpy(dst + (size_t)((o * depth + k) * inner + i) * es, on, es);
        }
    return FRT_OK;
}

static frt_status onehot_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_fixed_size(c, c->in[2]->dtype);
    if (st) return st;
    onehot_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->axis = frt_attr_int(c->node, "axis", -1);
    k->name = "onehot";
    k->fn = onehot_kernel;
    k->params = p;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Trilu                                                                                           */
/* ---------------------------------------------------------------------------------------------- */

static frt_status trilu_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 2, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    const frt_value *x = c->in[0];
    if (x->rank >= 0 && x->rank < 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "input must have rank >= 2, has %d", x->rank);
    if (c->n_in == 2 && c->in[1]) {
        bool kk;
        if (!frt_dtype_is_int(c->in[1]->dtype))
            return frt_op_fail(c, FRT_ERR_SHAPE, "k must be int64");
        if ((st = scalar_input(c, 1, "k", &kk))) return st;
    }
    frt_op_set_shape(c->out[0], x->dtype, x->rank, x->dims);
    return FRT_OK;
}

typedef struct trilu_params {
    bool upper;
} trilu_params;

static frt_status trilu_kernel(const frt_step *s, frt_exec *x) {
    const trilu_params *p = s->k.params;
    const frt_value *xv = in_val(s, x, 0), *kv = in_val(s, x, 1);
    frt_value *y = &x->values[s->out[0]];
    size_t es = frt_dtype_size((frt_dtype)xv->dtype);
    int64_t k = kv ? frt_ld_i64(kv->dtype, kv->data, 0) : 0;
    int r = xv->rank;
    int64_t N = xv->dims[r - 2], M = xv->dims[r - 1], mats = prod_range(xv->dims, 0, r - 2);
    if (k > M + N) k = M + N;
    if (k < -(M + N)) k = -(M + N);
    const char *src = xv->data;
    char *dst = y->data;
    size_t row = (size_t)M * es;
    for (int64_t m = 0; m < mats; m++)
        for (int64_t i = 0; i < N; i++) {
            const char *sr = src + (size_t)(m * N + i) * row;
            char *dr = dst + (size_t)(m * N + i) * row;
            /* kept columns [lo, hi): upper j >= i + k, lower j <= i + k */
            int64_t lo = p->upper ? i + k : 0, hi = p->upper ? M : i + k + 1;
            lo = lo < 0 ? 0 : lo > M ? M : lo;
            hi = hi < lo ? lo : hi > M ? M : hi;
            memset(dr, 0, (size_t)lo * es);
            memcpy(dr + (size_t)lo * es, sr + (size_t)lo * es, (size_t)(hi - lo) * es);
            memset(dr + (size_t)hi * es, 0, (size_t)(M - hi) * es);
        }
    return FRT_OK;
}

static frt_status trilu_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_fixed_size(c, c->in[0]->dtype);
    if (st) return st;
    trilu_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->upper = frt_attr_int(c->node, "upper", 1) != 0;
    k->name = "trilu";
    k->fn = trilu_kernel;
    k->params = p;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* EyeLike                                                                                         */
/* ---------------------------------------------------------------------------------------------- */

static frt_status eyelike_dtype(const frt_op_ctx *c, int32_t *dt) {
    const frt_onnx_attr *a = frt_attr_find(c->node, "dtype");
    *dt = a ? (int32_t)a->i : c->in[0]->dtype;
    if (a && a->type != FRT_ATTR_INT)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute 'dtype' must be an int");
    if (!numeric(*dt) && *dt != FRT_BOOL)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                           frt_dtype_name((frt_dtype)*dt));
    return FRT_OK;
}

static frt_status eyelike_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    const frt_value *x = c->in[0];
    if (x->rank >= 0 && x->rank != 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "input must be 2-D, has rank %d", x->rank);
    int32_t dt;
    if ((st = eyelike_dtype(c, &dt))) return st;
    if (x->rank < 0) set_unknown(c->out[0], dt, 2);
    else frt_op_set_shape(c->out[0], dt, 2, x->dims);
    return FRT_OK;
}

typedef struct eyelike_params {
    int64_t k;
} eyelike_params;

static frt_status eyelike_kernel(const frt_step *s, frt_exec *x) {
    const eyelike_params *p = s->k.params;
    frt_value *y = &x->values[s->out[0]];
    size_t es = frt_dtype_size((frt_dtype)y->dtype);
    int64_t N = y->dims[0], M = y->dims[1];
    memset(y->data, 0, (size_t)y->numel * es);
    for (int64_t i = 0; i < N; i++) {
        if (p->k > M || p->k < -N) break;
        int64_t j = i + p->k;
        if (j >= 0 && j < M) frt_st_f64(y->dtype, y->data, i * M + j, 1.0);
    }
    return FRT_OK;
}

static frt_status eyelike_select(frt_op_ctx *c, frt_kernel *k) {
    eyelike_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->k = frt_attr_int(c->node, "k", 0);
    k->name = "eyelike";
    k->fn = eyelike_kernel;
    k->params = p;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* DepthToSpace / SpaceToDepth                                                                     */
/* ---------------------------------------------------------------------------------------------- */

typedef struct d2s_params {
    int64_t b;
    bool crd; /* DepthToSpace mode CRD (else DCR) */
} d2s_params;

static frt_status d2s_read(const frt_op_ctx *c, d2s_params *p, bool d2s) {
    const frt_onnx_attr *a = frt_attr_find(c->node, "blocksize");
    if (!a || a->type != FRT_ATTR_INT || a->i < 1 || a->i > (1 << 20))
        return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute 'blocksize' (int >= 1) is required");
    p->b = a->i;
    p->crd = false;
    if (d2s && c->opset >= 11) {
        const char *m = frt_attr_string(c->node, "mode", "DCR");
        if (strcmp(m, "CRD") == 0) p->crd = true;
        else if (strcmp(m, "DCR") != 0)
            return frt_op_fail(c, FRT_ERR_MALFORMED, "unknown mode '%s' (DCR or CRD)", m);
    }
    return FRT_OK;
}

static frt_status d2s_infer_common(frt_op_ctx *c, bool d2s) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    d2s_params p;
    if ((st = d2s_read(c, &p, d2s))) return st;
    const frt_value *x = c->in[0];
    if (x->rank < 0) {
        set_unknown(c->out[0], x->dtype, 4);
        return FRT_OK;
    }
    if (x->rank != 4)
        return frt_op_fail(c, FRT_ERR_SHAPE, "input must be 4-D, has rank %d", x->rank);
    int64_t od[4], b = p.b, bb = b * b;
    od[0] = x->dims[0];
    if (d2s) {
        if (x->dims[1] >= 0 && x->dims[1] % bb)
            return frt_op_fail(c, FRT_ERR_SHAPE, "channels %lld are not a multiple of %lld",
                               (long long)x->dims[1], (long long)bb);
        od[1] = x->dims[1] < 0 ? -1 : x->dims[1] / bb;
        od[2] = x->dims[2] < 0 ? -1 : x->dims[2] * b;
        od[3] = x->dims[3] < 0 ? -1 : x->dims[3] * b;
    } else {
        for (int d = 2; d < 4; d++)
            if (x->dims[d] >= 0 && x->dims[d] % b)
                return frt_op_fail(c, FRT_ERR_SHAPE, "dim %d (%lld) is not a multiple of %lld", d,
                                   (long long)x->dims[d], (long long)b);
        od[1] = x->dims[1] < 0 ? -1 : x->dims[1] * bb;
        od[2] = x->dims[2] < 0 ? -1 : x->dims[2] / b;
        od[3] = x->dims[3] < 0 ? -1 : x->dims[3] / b;
    }
    frt_op_set_shape(c->out[0], x->dtype, 4, od);
    return FRT_OK;
}

static frt_status d2s_infer(frt_op_ctx *c) { return d2s_infer_common(c, true); }
static frt_status s2d_infer(frt_op_ctx *c) { return d2s_infer_common(c, false); }

/* DepthToSpace: DCR views x as [N, b, b, C', H, W] and permutes (0,3,4,1,5,2); CRD views it as
 * [N, C', b, b, H, W] and permutes (0,1,4,2,5,3). Either way the output is [N, C', H*b, W*b]. */
static frt_status d2s_kernel(const frt_step *s, frt_exec *x) {
    const d2s_params *p = s->k.params;
    const frt_value *xv = in_val(s, x, 0);
    frt_value *y = &x->values[s->out[0]];
    int64_t N = xv->dims[0], C = xv->dims[1], H = xv->dims[2], W = xv->dims[3], b = p->b;
    int64_t Cp = C / (b * b);
    int64_t dcr[6] = {N, b, b, Cp, H, W}, crd[6] = {N, Cp, b, b, H, W};
    static const int pdcr[6] = {0, 3, 4, 1, 5, 2}, pcrd[6] = {0, 1, 4, 2, 5, 3};
    permute_copy(y->data, xv->data, 6, p->crd ? crd : dcr, p->crd ? pcrd : pdcr,
                 frt_dtype_size((frt_dtype)xv->dtype));
    return FRT_OK;
}

/* SpaceToDepth views x as [N, C, H/b, b, W/b, b] and permutes (0,3,5,1,2,4). */
static frt_status s2d_kernel(const frt_step *s, frt_exec *x) {
    const d2s_params *p = s->k.params;
    const frt_value *xv = in_val(s, x, 0);
    frt_value *y = &x->values[s->out[0]];
    int64_t N = xv->dims[0], C = xv->dims[1], H = xv->dims[2], W = xv->dims[3], b = p->b;
    int64_t v[6] = {N, C, H / b, b, W / b, b};
    static const int perm[6] = {0, 3, 5, 1, 2, 4};
    permute_copy(y->data, xv->data, 6, v, perm, frt_dtype_size((frt_dtype)xv->dtype));
    return FRT_OK;
}

static frt_status d2s_select_common(frt_op_ctx *c, frt_kernel *k, bool d2s) {
    frt_status st = check_fixed_size(c, c->in[0]->dtype);
    if (st) return st;
    d2s_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    if ((st = d2s_read(c, p, d2s))) return st;
    k->name = d2s ? "depth_to_space" : "space_to_depth";
    k->fn = d2s ? d2s_kernel : s2d_kernel;
    k->params = p;
    return FRT_OK;
}

static frt_status d2s_select(frt_op_ctx *c, frt_kernel *k) { return d2s_select_common(c, k, true); }
static frt_status s2d_select(frt_op_ctx *c, frt_kernel *k) {
    return d2s_select_common(c, k, false);
}

/* ---------------------------------------------------------------------------------------------- */
/* ReverseSequence                                                                                 */
/* ---------------------------------------------------------------------------------------------- */

typedef struct revseq_params {
    int time_axis; /* 0 or 1; batch_axis is the other */
} revseq_params;

static frt_status revseq_axes(const frt_op_ctx *c, int *time_axis) {
    int64_t t = frt_attr_int(c->node, "time_axis", 0), b = frt_attr_int(c->node, "batch_axis", 1);
    if (!((t == 0 && b == 1) || (t == 1 && b == 0)))
        return frt_op_fail(c, FRT_ERR_SHAPE, "time_axis %lld and batch_axis %lld must be 0 and 1",
                           (long long)t, (long long)b);
    *time_axis = (int)t;
    return FRT_OK;
}

static frt_status revseq_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 2, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0)) || (st = frt_op_check_input(c, 1, 0))) return st;
    int ta;
    if ((st = revseq_axes(c, &ta))) return st;
    const frt_value *x = c->in[0], *l = c->in[1];
    if (l->dtype != FRT_INT64 && l->dtype != FRT_INT32)
        return frt_op_fail(c, FRT_ERR_SHAPE, "sequence_lens must be int64");
    if (x->rank >= 0 && x->rank < 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "input must have rank >= 2, has %d", x->rank);
    if (x->rank >= 2 && l->rank >= 0) {
        int64_t B = x->dims[1 - ta];
        if (l->rank != 1 || (B >= 0 && l->dims[0] >= 0 && l->dims[0] != B))
            return frt_op_fail(c, FRT_ERR_SHAPE, "sequence_lens must be [%lld]", (long long)B);
    }
    frt_op_set_shape(c->out[0], x->dtype, x->rank, x->dims);
    return FRT_OK;
}

static frt_status revseq_kernel(const frt_step *s, frt_exec *x) {
    const revseq_params *p = s->k.params;
    const frt_value *xv = in_val(s, x, 0), *lv = in_val(s, x, 1);
    frt_value *y = &x->values[s->out[0]];
    int ta = p->time_axis;
    int64_t T = xv->dims[ta], B = xv->dims[1 - ta];
    size_t blk = (size_t)prod_range(xv->dims, 2, xv->rank) * frt_dtype_size((frt_dtype)xv->dtype);
    for (int64_t b = 0; b < B; b++) {
        int64_t len = frt_value_get_int(lv, b);
        if (len < 0 || len > T)
            return frt_step_fail(s, FRT_ERR_RUNTIME, "sequence_lens[%lld] = %lld is out of range "
                                 "[0, %lld]", (long long)b, (long long)len, (long long)T);
    }
    for (int64_t b = 0; b < B; b++) {
        int64_t len = frt_value_get_int(lv, b);
        for (int64_t t = 0; t < T; t++) {
            int64_t st = t < len ? len - 1 - t : t;
            size_t od = (size_t)(ta == 0 ? t * B + b : b * T + t);
            size_t id = (size_t)(ta == 0 ? st * B + b : b * T + st);
            memcpy((char *)y->data + od * blk, (const char *)xv->data + id * blk, blk);
        }
    }
    return FRT_OK;
}

static frt_status revseq_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_fixed_size(c, c->in[0]->dtype);
    if (st) return st;
    revseq_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    if ((st = revseq_axes(c, &p->time_axis))) return st;
    k->name = "reverse_sequence";
    k->fn = revseq_kernel;
    k->params = p;
    return FRT_OK;
}

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(shape, Expand, expand_infer, expand_select);
FRT_OP_IMPL(shape, Tile, tile_infer, tile_select);
FRT_OP_IMPL(shape, Split, split_infer, split_select);
FRT_OP_IMPL(shape, Range, range_infer, range_select);
FRT_OP_IMPL(shape, ConstantOfShape, cos_infer, cos_select);
FRT_OP_IMPL(shape, OneHot, onehot_infer, onehot_select);
FRT_OP_IMPL(shape, Trilu, trilu_infer, trilu_select);
FRT_OP_IMPL(shape, EyeLike, eyelike_infer, eyelike_select);
FRT_OP_IMPL(shape, DepthToSpace, d2s_infer, d2s_select);
FRT_OP_IMPL(shape, SpaceToDepth, s2d_infer, s2d_select);
FRT_OP_IMPL(shape, ReverseSequence, revseq_infer, revseq_select);
