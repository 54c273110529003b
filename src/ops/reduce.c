/* Reductions: ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum
 * ReduceLogSumExp ReduceSumSquare; ArgMax ArgMin; CumSum; TopK.
 *
 * Reduce*: X of any numeric dtype (float32, float64, float16, int8..uint64) -> Y of X's dtype.
 *   axes: the attribute (ReduceSum opset < 13, the others opset < 18) or the optional int64
 *   input 1 (later opsets; its data decides the output shape: FRT_OP_SHAPE_IN(1)). No axes or
 *   an empty axes list reduces every axis, unless noop_with_empty_axes = 1 (input form only),
 *   which makes Y a copy of X. keepdims (default 1) keeps reduced axes as dims of 1. Axes are
 *   in [-rank, rank), each at most once (FRT_ERR_SHAPE otherwise).
 *   Empty reductions give the identity: 0 (Sum, L1, L2, SumSquare), 1 (Prod), NaN (Mean), -inf
 *   (LogSum, LogSumExp, Max of a float), +inf (Min of a float), the dtype's lowest / highest value
 *   (Max / Min of an integer). Max and Min propagate NaN.
 *   Integers: Sum, Prod, SumSquare wrap (two's complement); Mean is the sum divided by the count,
 *   truncated; L2, LogSum, LogSumExp are computed in double and truncated toward zero.
 * Run time: the shape is collapsed into runs of kept and reduced dims (dims of 1 dropped, neighbours
 * of the same kind merged). One reduced run is an [outer, red, inner] reduction: float32 uses the
 * vectorized loops of the tier (x86/reduce_*.c: whole rows when inner == 1, accumulator rows
 * otherwise) for Sum, Mean, Max, Min, L1, L2, LogSum, SumSquare. Everything else (other dtypes,
 * Prod, LogSumExp, several reduced runs) goes through a strided loop accumulating in double (floats)
 * or int64 (integers).
 *
 * ArgMax / ArgMin: X numeric -> int64 indices along axis (default 0), keepdims (default 1),
 *   select_last_index (opset >= 12; default 0: the first index among equal values). A NaN counts as
 *   the extreme value (numpy's argmax / argmin).
 * CumSum: X (float32, float64, float16, int32, int64, uint32, uint64), axis (input 1, int32 or
 *   int64 scalar or 1-element tensor, read at run time), exclusive, reverse. Sums in X's dtype
 *   (float16 in float; integers wrap).
 * TopK: X numeric, K (opset >= 10: int64 input 1 with one element, FRT_OP_SHAPE_IN(1); opset 1:
 *   attribute k), axis (default -1), largest (default 1), sorted (default 1; unsorted results
 *   are sorted too). Values and int64 Indices with dim axis = K. Among equal values the lower
 *   index comes first; NaN sorts above every number. K must be in [0, dim].
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dtype_util.h"
#include "op.h"
#include "x86/simd_elementwise.h"
#include "x86/simd_reduce.h"

/* ---- portable float32 loops (the twins of x86/reduce_*.c) -------------------------------- */

#define P_ROW_SUM(NAME, F)                                                                       \
    static float NAME(const float *x, size_t n) {                                                \
        float s[8] = {0};                                                                        \
        size_t i = 0;                                                                            \
        for (; i + 8 <= n; i += 8)                                                               \
            for (int k = 0; k < 8; k++) s[k] += F(x[i + k]);                                     \
        float r = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));            \
        for (; i < n; i++) r += F(x[i]);                                                         \
        return r;                                                                                \
    }
#define F_ID(v) (v)
#define F_SQ(v) ((v) * (v))
#define F_ABS(v) fabsf(v)
P_ROW_SUM(row_sum, F_ID)
P_ROW_SUM(row_sumsq, F_SQ)
P_ROW_SUM(row_sumabs, F_ABS)

/* m stays NaN once it is NaN; a NaN value replaces m */
#define S_MAX(m, v) ((v) > (m) || (v) != (v) ? (v) : (m))
#define S_MIN(m, v) ((v) < (m) || (v) != (v) ? (v) : (m))
/* Extremum of a row: 8 independent lanes without branches on the data; NaNs are counted apart. */
#define P_ROW_EXT(NAME, CMP, INIT)                                                               \
    static float NAME(const float *x, size_t n) {                                                \
        float m[8];                                                                              \
        int nan = 0;                                                                             \
        for (int k = 0; k < 8; k++) m[k] = INIT;                                                 \
        size_t i = 0;                                                                            \
        for (; i + 8 <= n; i += 8)                                                               \
            for (int k = 0; k < 8; k++) {                                                        \
                float v = x[i + k];                                                              \
                nan |= v != v;                                                                   \
                m[k] = v CMP m[k] ? v : m[k];                                                    \
            }                                                                                    \
        for (; i < n; i++) {                                                                     \
            nan |= x[i] != x[i];                                                                 \
            m[0] = x[i] CMP m[0] ? x[i] : m[0];                                                  \
        }                                                                                        \
        if (nan) return NAN;                                                                     \
        for (int k = 1; k < 8; k++) m[0] = m[k] CMP m[0] ? m[k] : m[0];                          \
        return m[0];                                                                             \
    }
P_ROW_EXT(row_max, >, -INFINITY)
P_ROW_EXT(row_min, <, INFINITY)

#define P_COL(NAME, OP)                                                                          \
    static void NAME(float *acc, const float *x, size_t n) {                                     \
        for (size_t i = 0; i < n; i++) acc[i] = OP(acc[i], x[i]);                                \
    }
#define C_ADD(s, v) ((s) + (v))
#define C_ADDSQ(s, v) ((s) + (v) * (v))
#define C_ADDABS(s, v) ((s) + fabsf(v))
P_COL(col_sum, C_ADD)
P_COL(col_sumsq, C_ADDSQ)
P_COL(col_sumabs, C_ADDABS)
P_COL(col_max, S_MAX)
P_COL(col_min, S_MIN)

static const frt_reduce_variant reduce_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512,
     "_avx512",
     {frt_reduce_row_sum_avx512, frt_reduce_row_sumsq_avx512, frt_reduce_row_sumabs_avx512,
      frt_reduce_row_max_avx512, frt_reduce_row_min_avx512},
     {frt_reduce_col_sum_avx512, frt_reduce_col_sumsq_avx512, frt_reduce_col_sumabs_avx512,
      frt_reduce_col_max_avx512, frt_reduce_col_min_avx512}},
#endif
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2,
     "_avx2",
     {frt_reduce_row_sum_avx2, frt_reduce_row_sumsq_avx2, frt_reduce_row_sumabs_avx2,
      frt_reduce_row_max_avx2, frt_reduce_row_min_avx2},
     {frt_reduce_col_sum_avx2, frt_reduce_col_sumsq_avx2, frt_reduce_col_sumabs_avx2,
      frt_reduce_col_max_avx2, frt_reduce_col_min_avx2}},
#endif
#endif
    {FRT_ISA_PORTABLE,
     "",
     {row_sum, row_sumsq, row_sumabs, row_max, row_min},
     {col_sum, col_sumsq, col_sumabs, col_max, col_min}},
};

const frt_reduce_variant *frt_reduce_variant_get(frt_isa cap) {
    return FRT_PICK_VARIANT(reduce_variants, cap);
}

/* ---- shared helpers ------------------------------------------------------------------------ */

static bool numeric_dtype(int32_t dt) { return frt_dtype_is_float(dt) || frt_dtype_is_int(dt); }

/* Lowest and highest value of an integer dtype. */
static void int_limits(int32_t dt, int64_t *lo, int64_t *hi) {
    switch (dt) {
    case FRT_INT8: *lo = INT8_MIN; *hi = INT8_MAX; break;
    case FRT_INT16: *lo = INT16_MIN; *hi = INT16_MAX; break;
    case FRT_INT32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case FRT_UINT8: *lo = 0; *hi = UINT8_MAX; break;
    case FRT_UINT16: *lo = 0; *hi = UINT16_MAX; break;
    case FRT_UINT32: *lo = 0; *hi = UINT32_MAX; break;
    case FRT_UINT64: *lo = 0; *hi = -1; break; /* UINT64_MAX as stored bits */
    default: *lo = INT64_MIN; *hi = INT64_MAX; break;
    }
}

/* Integer element as an ordered key: uint64 is compared unsigned through a sign flip. */
static inline int64_t int_key(int32_t dt, const void *p, int64_t i) {
    int64_t v = frt_ld_i64(dt, p, i);
    return dt == FRT_UINT64 ? (int64_t)((uint64_t)v ^ 0x8000000000000000u) : v;
}
static inline int64_t key_to_int(int32_t dt, int64_t k) {
    return dt == FRT_UINT64 ? (int64_t)((uint64_t)k ^ 0x8000000000000000u) : k;
}

/* Reads an int64/int32 1-D (or scalar) tensor's elements into out[0..cap); returns the count or
 * -1 when there are more than cap. */
static int read_ints(const frt_value *v, int64_t *out, int cap) {
    if (v->numel > cap) return -1;
    for (int64_t i = 0; i < v->numel; i++) out[i] = frt_value_get_int(v, i);
    return (int)v->numel;
}

/* ---- Reduce* -------------------------------------------------------------------------------- */

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP, R_SUMSQ };

/* Whether axes come from input 1 at this opset. */
static bool axes_from_input(int op, int64_t opset) { return opset >= (op == R_SUM ? 13 : 18); }

typedef struct red_params {
    int op;
    int keepdims, noop_empty;
    int axes_input;            /* axes from input 1 */
    int n_axes;                /* constant axes below; -1: read input 1 at run time */
    int64_t axes[FRT_MAX_RANK];
    const frt_reduce_variant *v; /* float32 loops */
} red_params;

/* Reduced-axes mask of a rank-r input from axes[0..n). *noop is set when the list is empty and
 * noop_empty. Returns a message for bad axes, NULL when fine. */
static const char *axes_mask(const int64_t *axes, int n, int rank, int noop_empty, uint32_t *mask,
                             int *noop, int64_t *bad) {
    *mask = 0;
    *noop = 0;
    if (n == 0) {
        if (noop_empty) *noop = 1;
        else *mask = rank > 0 ? (uint32_t)((1u << rank) - 1) : 0;
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        int a = frt_norm_axis(axes[i], rank);
        *bad = axes[i];
        if (a < 0) return "out of range";
        if (*mask & (1u << a)) return "repeated";
        *mask |= 1u << a;
    }
    return NULL;
}

static frt_status red_infer(frt_op_ctx *c, int op) {
    frt_status st = frt_op_check_arity(c, 1, 2, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    const frt_value *x = c->in[0];
    if (!numeric_dtype(x->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (numeric dtypes)",
                           frt_dtype_name(x->dtype));
    int keep = frt_attr_int(c->node, "keepdims", 1) != 0;
    int64_t axes[FRT_MAX_RANK];
    int n = 0, known = 1, noop_empty = 0;
    if (axes_from_input(op, c->opset)) {
        noop_empty = frt_attr_int(c->node, "noop_with_empty_axes", 0) != 0;
        const frt_value *a = c->n_in > 1 ? c->in[1] : NULL;
        if (a) {
            if (a->dtype != FRT_INT64)
                return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "axes has dtype %s, expected int64",
                                   frt_dtype_name(a->dtype));
            if (a->rank > 1)
                return frt_op_fail(c, FRT_ERR_SHAPE, "axes must be 1-D, has rank %d", a->rank);
            if (a->numel == 0) n = 0;
            else if (a->data) {
                n = read_ints(a, axes, FRT_MAX_RANK);
                if (n < 0)
                    return frt_op_fail(c, FRT_ERR_SHAPE, "%lld axes for an input of rank <= %d",
                                       (long long)a->numel, FRT_MAX_RANK);
            } else known = 0;
        }
    } else {
        if (c->n_in > 1 && c->in[1])
            return frt_op_fail(c, FRT_ERR_MALFORMED, "axes input before opset %d",
                               op == R_SUM ? 13 : 18);
        size_t na;
        const int64_t *aa = frt_attr_ints(c->node, "axes", &na);
        if (na > FRT_MAX_RANK)
            return frt_op_fail(c, FRT_ERR_SHAPE, "%zu axes for rank <= %d", na, FRT_MAX_RANK);
        for (size_t i = 0; i < na; i++) axes[i] = aa[i];
        n = (int)na;
    }
    frt_value *y = c->out[0];
    if (x->rank < 0) {
        frt_op_set_shape(y, x->dtype, -1, NULL);
        return FRT_OK;
    }
    int64_t dims[FRT_MAX_RANK];
    if (!known) { /* axes known only at run time */
        for (int i = 0; i < x->rank; i++) dims[i] = -1;
        frt_op_set_shape(y, x->dtype, keep ? x->rank : -1, dims);
        return FRT_OK;
    }
    uint32_t mask;
    int noop;
    int64_t bad = 0;
    const char *why = axes_mask(axes, n, x->rank, noop_empty, &mask, &noop, &bad);
    if (why)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld is %s for an input of rank %d",
                           (long long)bad, why, x->rank);
    if (noop) {
        frt_op_set_shape(y, x->dtype, x->rank, x->dims);
        return FRT_OK;
    }
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!(mask & (1u << i))) dims[r++] = x->dims[i];
        else if (keep) dims[r++] = 1;
    }
    frt_op_set_shape(y, x->dtype, r, dims);
    return FRT_OK;
}

/* Collapsed shape: kept and reduced runs with their input strides (elements). */
typedef struct red_plan {
    int nk, nr;
    int64_t kd[FRT_MAX_RANK], ks[FRT_MAX_RANK]; /* kept runs */
    int64_t rd[FRT_MAX_RANK], rs[FRT_MAX_RANK]; /* reduced runs */
    int64_t n_red;                              /* reduced elements per output */
} red_plan;

static void make_plan(const frt_value *x, uint32_t mask, red_plan *p) {
    int nd = 0, kind[FRT_MAX_RANK];
    int64_t d[FRT_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        if (x->dims[i] == 1) continue;
        int k = (mask >> i) & 1;
        if (nd > 0 && kind[nd - 1] == k) d[nd - 1] *= x->dims[i];
        else {
            kind[nd] = k;
            d[nd++] = x->dims[i];
        }
    }
    p->nk = p->nr = 0;
    p->n_red = 1;
    int64_t stride = 1;
    int64_t s[FRT_MAX_RANK];
    for (int i = nd - 1; i >= 0; i--) {
        s[i] = stride;
        stride *= d[i];
    }
    for (int i = 0; i < nd; i++) {
        if (kind[i]) {
            p->rd[p->nr] = d[i];
            p->rs[p->nr++] = s[i];
            p->n_red *= d[i];
        } else {
            p->kd[p->nk] = d[i];
            p->ks[p->nk++] = s[i];
        }
    }
}

/* One output of the strided path: the reduced elements of x starting at base. */
#define FOR_REDUCED(p, base, OFF, BODY)                                                          \
    do {                                                                                         \
        int64_t idx_[FRT_MAX_RANK] = {0}, OFF = (base);                                          \
        if ((p)->n_red == 0) break;                                                              \
        for (;;) {                                                                               \
            BODY;                                                                                \
            int k_ = (p)->nr - 1;                                                                \
            for (; k_ >= 0; k_--) {                                                              \
                OFF += (p)->rs[k_];                                                              \
                if (++idx_[k_] < (p)->rd[k_]) break;                                             \
                OFF -= (p)->rs[k_] * (p)->rd[k_];                                                \
                idx_[k_] = 0;                                                                    \
            }                                                                                    \
            if (k_ < 0) break;                                                                   \
        }                                                                                        \
    } while (0)

static double red_one_f64(int op, int32_t dt, const void *x, int64_t base, const red_plan *p) {
    double acc;
    switch (op) {
    case R_MAX:
        acc = -INFINITY;
        FOR_REDUCED(p, base, o, { double v = frt_ld_f64(dt, x, o); acc = S_MAX(acc, v); });
        return acc;
    case R_MIN:
        acc = INFINITY;
        FOR_REDUCED(p, base, o, { double v = frt_ld_f64(dt, x, o); acc = S_MIN(acc, v); });
        return acc;
    case R_PROD:
        acc = 1;
        FOR_REDUCED(p, base, o, acc *= frt_ld_f64(dt, x, o));
        return acc;
    case R_LOGSUMEXP: {
        double m = -INFINITY;
        FOR_REDUCED(p, base, o, { double v = frt_ld_f64(dt, x, o); m = S_MAX(m, v); });
        if (m != m || isinf(m)) return m; /* NaN, all -inf (or empty), or a +inf */
        acc = 0;
        FOR_REDUCED(p, base, o, acc += exp(frt_ld_f64(dt, x, o) - m));
        return m + log(acc);
    }
    case R_L1:
    case R_L2:
    case R_SUMSQ:
        acc = 0;
        FOR_REDUCED(p, base, o, {
            double v = frt_ld_f64(dt, x, o);
            acc += op == R_L1 ? fabs(v) : v * v;
        });
        return op == R_L2 ? sqrt(acc) : acc;
    default: /* SUM MEAN LOGSUM */
        acc = 0;
        FOR_REDUCED(p, base, o, acc += frt_ld_f64(dt, x, o));
        if (op == R_MEAN) return acc / (double)p->n_red;
        if (op == R_LOGSUM) return log(acc);
        return acc;
    }
}

/* Integer reductions; the result is stored into Y's (= X's) dtype by the caller. Returns the
 * value as int64 bits (*as_f64 = 0) or as a double to truncate (*as_f64 = 1). */
static int64_t red_one_i64(int op, int32_t dt, const void *x, int64_t base, const red_plan *p,
                           double *f, int *as_f64) {
    *as_f64 = 0;
    int64_t lo, hi;
    int_limits(dt, &lo, &hi);
    uint64_t acc = 0;
    switch (op) {
    case R_MAX: {
        int64_t m = INT64_MIN;
        if (!p->n_red) return lo;
        FOR_REDUCED(p, base, o, { int64_t v = int_key(dt, x, o); m = v > m ? v : m; });
        return key_to_int(dt, m);
    }
    case R_MIN: {
        int64_t m = INT64_MAX;
        if (!p->n_red) return hi;
        FOR_REDUCED(p, base, o, { int64_t v = int_key(dt, x, o); m = v < m ? v : m; });
        return key_to_int(dt, m);
    }
    case R_PROD:
        acc = 1;
        FOR_REDUCED(p, base, o, acc *= (uint64_t)frt_ld_i64(dt, x, o));
        return (int64_t)acc;
    case R_L1:
    case R_SUMSQ:
        FOR_REDUCED(p, base, o, {
            int64_t v = frt_ld_i64(dt, x, o);
            if (op == R_L1) acc += v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
            else acc += (uint64_t)v * (uint64_t)v;
        });
        return (int64_t)acc;
    case R_SUM:
    case R_MEAN:
        FOR_REDUCED(p, base, o, acc += (uint64_t)frt_ld_i64(dt, x, o));
        if (op == R_MEAN) {
            if (p->n_red == 0) return 0;
            if (dt == FRT_UINT64) return (int64_t)(acc / (uint64_t)p->n_red);
            return (int64_t)acc / p->n_red;
        }
        return (int64_t)acc;
    default: /* L2 LOGSUM LOGSUMEXP: in double */
        *as_f64 = 1;
        *f = red_one_f64(op, dt, x, base, p);
        return 0;
    }
}

typedef struct red_job {
    const red_params *p;
    const red_plan *pl;
    int32_t dt;
    const void *x;
    void *y;
    int64_t outer, red, inner; /* float32 fast path */
} red_job;

/* Output elements [lo, hi) of the strided path. */
static void red_generic_range(void *ctx, size_t lo, size_t hi) {
    const red_job *j = ctx;
    const red_plan *pl = j->pl;
    int64_t idx[FRT_MAX_RANK], base = 0, rem = (int64_t)lo;
    for (int k = pl->nk - 1; k >= 0; k--) {
        idx[k] = rem % pl->kd[k];
        rem /= pl->kd[k];
        base += idx[k] * pl->ks[k];
    }
    bool isf = frt_dtype_is_float(j->dt);
    for (size_t i = lo; i < hi; i++) {
        if (isf) {
            frt_st_f64(j->dt, j->y, (int64_t)i, red_one_f64(j->p->op, j->dt, j->x, base, pl));
        } else {
            double f = 0;
            int as_f64;
            int64_t v = red_one_i64(j->p->op, j->dt, j->x, base, pl, &f, &as_f64);
            if (as_f64) frt_st_f64(j->dt, j->y, (int64_t)i, f);
            else frt_st_i64(j->dt, j->y, (int64_t)i, v);
        }
        for (int k = pl->nk - 1; k >= 0; k--) {
            base += pl->ks[k];
            if (++idx[k] < pl->kd[k]) break;
            base -= pl->ks[k] * pl->kd[k];
            idx[k] = 0;
        }
    }
}

static int fast_kind(int op) {
    switch (op) {
    case R_SUM: case R_MEAN: case R_LOGSUM: return FRT_RK_SUM;
    case R_L1: return FRT_RK_SUMABS;
    case R_L2: case R_SUMSQ: return FRT_RK_SUMSQ;
    case R_MAX: return FRT_RK_MAX;
    case R_MIN: return FRT_RK_MIN;
    default: return -1;
    }
}

static inline float fast_post(int op, float v, int64_t red) {
    switch (op) {
    case R_MEAN: return v / (float)red;
    case R_L2: return sqrtf(v);
    case R_LOGSUM: return logf(v);
    default: return v;
    }
}

/* Outer rows [lo, hi) of the float32 [outer, red, inner] path. */
static void red_f32_range(void *ctx, size_t lo, size_t hi) {
    const red_job *j = ctx;
    int op = j->p->op, kind = fast_kind(op);
    const float *x = j->x;
    float *y = j->y;
    int64_t red = j->red, inner = j->inner;
    if (inner == 1) {
        frt_reduce_row_fn row = j->p->v->row[kind];
        for (size_t o = lo; o < hi; o++)
            y[o] = fast_post(op, row(x + (int64_t)o * red, (size_t)red), red);
        return;
    }
    frt_reduce_col_fn col = j->p->v->col[kind];
    float init = kind == FRT_RK_MAX ? -INFINITY : kind == FRT_RK_MIN ? INFINITY : 0.0f;
    for (size_t o = lo; o < hi; o++) {
        float *acc = y + (int64_t)o * inner;
        const float *xr = x + (int64_t)o * red * inner;
        for (int64_t i = 0; i < inner; i++) acc[i] = init;
        for (int64_t r = 0; r < red; r++) col(acc, xr + r * inner, (size_t)inner);
        if (op == R_MEAN || op == R_L2 || op == R_LOGSUM)
            for (int64_t i = 0; i < inner; i++) acc[i] = fast_post(op, acc[i], red);
    }
}

static frt_status red_kernel(const frt_step *s, frt_exec *x) {
    const red_params *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    frt_value *Y = &x->values[s->out[0]];
    int64_t axes[FRT_MAX_RANK];
    int n = p->n_axes;
    if (n >= 0) memcpy(axes, p->axes, sizeof axes);
    else {
        const frt_value *A = s->n_in > 1 && s->in[1] >= 0 ? &x->values[s->in[1]] : NULL;
        n = A ? read_ints(A, axes, FRT_MAX_RANK) : 0;
        if (n < 0) return frt_step_fail(s, FRT_ERR_SHAPE, "too many axes");
    }
    uint32_t mask;
    int noop;
    int64_t bad = 0;
    const char *why = axes_mask(axes, n, X->rank, p->noop_empty, &mask, &noop, &bad);
    if (why)
        return frt_step_fail(s, FRT_ERR_SHAPE, "axis %lld is %s for an input of rank %d",
                             (long long)bad, why, X->rank);
    size_t es = frt_dtype_size(X->dtype);
    if (noop) {
        if (Y->numel != X->numel) return frt_step_fail(s, FRT_ERR_SHAPE, "output size mismatch");
        if (Y->data != X->data && X->numel > 0) memcpy(Y->data, X->data, (size_t)X->numel * es);
        return FRT_OK;
    }
    red_plan pl;
    make_plan(X, mask, &pl);
    int64_t n_out = X->numel < 0 ? 0 : (pl.n_red ? X->numel / pl.n_red : 1);
    if (pl.n_red == 0) { /* empty reduction: output count is the product of kept dims */
        n_out = 1;
        for (int i = 0; i < X->rank; i++)
            if (!(mask & (1u << i))) n_out *= X->dims[i];
    }
    if (Y->numel != n_out)
        return frt_step_fail(s, FRT_ERR_SHAPE, "output has %lld elements, the reduction makes %lld",
                             (long long)Y->numel, (long long)n_out);
    if (n_out == 0) return FRT_OK;
    red_job j = {p, &pl, X->dtype, X->data, Y->data, 0, 0, 0};
    if (X->dtype == FRT_FLOAT32 && pl.nr <= 1 && pl.n_red > 0 && fast_kind(p->op) >= 0) {
        /* kept runs before the reduced run form outer, the one after it inner */
        j.red = pl.nr ? pl.rd[0] : 1;
        j.inner = pl.nr ? pl.rs[0] : 1;
        j.outer = n_out / j.inner;
        frt_ew_parallel(x->tp, (size_t)j.outer, (size_t)(j.red * j.inner), red_f32_range, &j);
        return FRT_OK;
    }
    frt_ew_parallel(x->tp, (size_t)n_out, (size_t)(pl.n_red ? pl.n_red : 1), red_generic_range, &j);
    return FRT_OK;
}

/* Kernel names: [op][0] the strided path of any dtype, [op][1 + tier] float32 on the tier's loops. */
#define RED_NAMES(n) {"reduce_" n, "reduce_" n "_f32", "reduce_" n "_f32_avx2", "reduce_" n "_f32_avx512"}
static const char *const red_kernel_names[][4] = {
    RED_NAMES("sum"), RED_NAMES("mean"), RED_NAMES("max"),     RED_NAMES("min"),
    RED_NAMES("prod"), RED_NAMES("l1"),  RED_NAMES("l2"),      RED_NAMES("log_sum"),
    RED_NAMES("log_sum_exp"), RED_NAMES("sum_square")};

static frt_status red_select(frt_op_ctx *c, frt_kernel *k, int op) {
    red_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    memset(p, 0, sizeof *p);
    p->op = op;
    p->keepdims = frt_attr_int(c->node, "keepdims", 1) != 0;
    p->axes_input = axes_from_input(op, c->opset);
    if (p->axes_input) {
        p->noop_empty = frt_attr_int(c->node, "noop_with_empty_axes", 0) != 0;
        const frt_value *a = c->n_in > 1 ? c->in[1] : NULL;
        if (!a || a->numel == 0) p->n_axes = 0;
        else if (a->data) p->n_axes = read_ints(a, p->axes, FRT_MAX_RANK);
        else p->n_axes = -1;
        if (a && a->data && p->n_axes < 0) return frt_op_fail(c, FRT_ERR_SHAPE, "too many axes");
    } else {
        size_t na;
        const int64_t *aa = frt_attr_ints(c->node, "axes", &na);
        if (na > FRT_MAX_RANK) return frt_op_fail(c, FRT_ERR_SHAPE, "too many axes");
        for (size_t i = 0; i < na; i++) p->axes[i] = aa[i];
        p->n_axes = (int)na;
    }
    int32_t dt = c->in[0]->dtype;
    p->v = frt_reduce_variant_get(c->isa);
    bool fast = dt == FRT_FLOAT32 && fast_kind(op) >= 0;
    k->name = red_kernel_names[op][fast ? 1 + (int)p->v->isa : 0];
    k->fn = red_kernel;
    k->params = p;
    return FRT_OK;
}

#define RED_OP(Sym, OP)                                                                          \
    static frt_status Sym##_infer(frt_op_ctx *c) { return red_infer(c, OP); }                   \
    static frt_status Sym##_select(frt_op_ctx *c, frt_kernel *k) { return red_select(c, k, OP); } \
    FRT_OP_IMPL(reduce, Sym, Sym##_infer, Sym##_select)

RED_OP(ReduceSum, R_SUM);
RED_OP(ReduceMean, R_MEAN);
RED_OP(ReduceMax, R_MAX);
RED_OP(ReduceMin, R_MIN);
RED_OP(ReduceProd, R_PROD);
RED_OP(ReduceL1, R_L1);
RED_OP(ReduceL2, R_L2);
RED_OP(ReduceLogSum, R_LOGSUM);
RED_OP(ReduceLogSumExp, R_LOGSUMEXP);
RED_OP(ReduceSumSquare, R_SUMSQ);

/* ---- ArgMax / ArgMin ------------------------------------------------------------------------ */

typedef struct arg_params {
    int is_max, last, axis; /* axis as given, normalized per run */
} arg_params;

static frt_status arg_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    const frt_value *x = c->in[0];
    if (!numeric_dtype(x->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (numeric dtypes)",
                           frt_dtype_name(x->dtype));
    if (x->rank < 0) {
        frt_op_set_shape(c->out[0], FRT_INT64, -1, NULL);
        return FRT_OK;
    }
    int64_t axis = frt_attr_int(c->node, "axis", 0);
    int a = frt_norm_axis(axis, x->rank);
    if (a < 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d", (long long)axis,
                           x->rank);
    int keep = frt_attr_int(c->node, "keepdims", 1) != 0;
    int64_t dims[FRT_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (i != a) dims[r++] = x->dims[i];
        else if (keep) dims[r++] = 1;
    }
    if (x->dims[a] == 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %d has no elements to choose from", a);
    frt_op_set_shape(c->out[0], FRT_INT64, r, dims);
    return FRT_OK;
}

/* Is v a better pick than the best so far (b)? NaN wins; ties go to the later index only with
 * select_last_index. */
#define ARG_BETTER(v, b, is_max, last)                                                           \
    ((b) != (b) ? ((last) && (v) != (v))                                                         \
                : ((v) != (v) || ((is_max) ? ((last) ? (v) >= (b) : (v) > (b))                   \
                                           : ((last) ? (v) <= (b) : (v) < (b)))))

#define ARG_BETTER_INT(v, b, is_max, last)                                                       \
    ((is_max) ? ((last) ? (v) >= (b) : (v) > (b)) : ((last) ? (v) <= (b) : (v) < (b)))

static frt_status arg_kernel(const frt_step *s, frt_exec *x) {
    const arg_params *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    int64_t *y = x->values[s->out[0]].data;
    int a = frt_norm_axis(p->axis, X->rank);
    if (a < 0) return frt_step_fail(s, FRT_ERR_SHAPE, "axis out of range");
    int64_t outer = 1, n = X->dims[a], inner = 1;
    for (int i = 0; i < a; i++) outer *= X->dims[i];
    for (int i = a + 1; i < X->rank; i++) inner *= X->dims[i];
    if (x->values[s->out[0]].numel != outer * inner)
        return frt_step_fail(s, FRT_ERR_SHAPE, "output size mismatch");
    if (outer * inner == 0) return FRT_OK;
    if (n <= 0) return frt_step_fail(s, FRT_ERR_SHAPE, "axis %d has no elements", a);
    int32_t dt = X->dtype;
    int mx = p->is_max, last = p->last;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i, best = 0;
            if (dt == FRT_FLOAT32) {
                const float *xf = X->data;
                float b = xf[base];
                for (int64_t r = 1; r < n; r++) {
                    float v = xf[base + r * inner];
                    if (ARG_BETTER(v, b, mx, last)) b = v, best = r;
                }
            } else if (frt_dtype_is_float(dt)) {
                double b = frt_ld_f64(dt, X->data, base);
                for (int64_t r = 1; r < n; r++) {
                    double v = frt_ld_f64(dt, X->data, base + r * inner);
                    if (ARG_BETTER(v, b, mx, last)) b = v, best = r;
                }
            } else {
                int64_t b = int_key(dt, X->data, base);
                for (int64_t r = 1; r < n; r++) {
                    int64_t v = int_key(dt, X->data, base + r * inner);
                    if (ARG_BETTER_INT(v, b, mx, last)) b = v, best = r;
                }
            }
            y[o * inner + i] = best;
        }
    return FRT_OK;
}

static frt_status arg_select(frt_op_ctx *c, frt_kernel *k, int is_max) {
    arg_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->is_max = is_max;
    p->last = c->opset >= 12 && frt_attr_int(c->node, "select_last_index", 0) != 0;
    int64_t axis = frt_attr_int(c->node, "axis", 0);
    if (axis < -FRT_MAX_RANK || axis >= FRT_MAX_RANK)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range", (long long)axis);
    p->axis = (int)axis;
    k->name = is_max ? "argmax" : "argmin";
    k->fn = arg_kernel;
    k->params = p;
    return FRT_OK;
}
static frt_status argmax_select(frt_op_ctx *c, frt_kernel *k) { return arg_select(c, k, 1); }
static frt_status argmin_select(frt_op_ctx *c, frt_kernel *k) { return arg_select(c, k, 0); }
FRT_OP_IMPL(reduce, ArgMax, arg_infer, argmax_select);
FRT_OP_IMPL(reduce, ArgMin, arg_infer, argmin_select);

/* ---- CumSum --------------------------------------------------------------------------------- */

typedef struct cumsum_params {
    int exclusive, reverse;
} cumsum_params;

static bool cumsum_dtype(int32_t dt) {
    return dt == FRT_FLOAT32 || dt == FRT_FLOAT64 || dt == FRT_FLOAT16 || dt == FRT_INT32 ||
           dt == FRT_INT64 || dt == FRT_UINT32 || dt == FRT_UINT64;
}

static frt_status cumsum_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 2, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (!st) st = frt_op_check_input(c, 1, 0);
    if (st) return st;
    const frt_value *x = c->in[0], *a = c->in[1];
    if (!cumsum_dtype(x->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED,
                           "dtype %s not supported (float32, float64, float16, int32, int64, "
                           "uint32, uint64)", frt_dtype_name(x->dtype));
    if (a->dtype != FRT_INT64 && a->dtype != FRT_INT32)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "axis has dtype %s, expected int32 or int64",
                           frt_dtype_name(a->dtype));
    if (a->rank > 1 || (a->numel >= 0 && a->numel != 1))
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis must be a scalar (has %lld elements)",
                           (long long)a->numel);
    if (a->data && x->rank >= 0 && frt_norm_axis(frt_value_get_int(a, 0), x->rank) < 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d",
                           (long long)frt_value_get_int(a, 0), x->rank);
    frt_op_set_shape(c->out[0], x->dtype, x->rank, x->dims);
    return FRT_OK;
}

#define CUMSUM_LOOP(T, ACC, LD, ST)                                                              \
    for (int64_t o = 0; o < outer; o++)                                                          \
        for (int64_t i = 0; i < inner; i++) {                                                    \
            ACC acc = 0;                                                                         \
            for (int64_t t = 0; t < n; t++) {                                                    \
                int64_t r = p->reverse ? n - 1 - t : t, e = (o * n + r) * inner + i;             \
                ACC v = LD(e);                                                                   \
                if (p->exclusive) {                                                              \
                    ST(e, acc);                                                                  \
                    acc = (ACC)(acc + v);                                                        \
                } else {                                                                         \
                    acc = (ACC)(acc + v);                                                        \
                    ST(e, acc);                                                                  \
                }                                                                                \
            }                                                                                    \
        }

static frt_status cumsum_kernel(const frt_step *s, frt_exec *x) {
    const cumsum_params *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]], *A = &x->values[s->in[1]];
    frt_value *Y = &x->values[s->out[0]];
    if (A->numel != 1) return frt_step_fail(s, FRT_ERR_SHAPE, "axis must have one element");
    int64_t axis = frt_value_get_int(A, 0);
    int a = frt_norm_axis(axis, X->rank);
    if (a < 0)
        return frt_step_fail(s, FRT_ERR_RUNTIME, "axis %lld out of range for rank %d",
                             (long long)axis, X->rank);
    if (Y->numel != X->numel) return frt_step_fail(s, FRT_ERR_SHAPE, "output size mismatch");
    int64_t outer = 1, n = X->dims[a], inner = 1;
    for (int i = 0; i < a; i++) outer *= X->dims[i];
    for (int i = a + 1; i < X->rank; i++) inner *= X->dims[i];
    const void *xd = X->data;
    void *yd = Y->data;
    switch (X->dtype) {
    case FRT_FLOAT32: {
        const float *xs = xd;
        float *ys = yd;
#define LDF(e) xs[e]
#define STF(e, v) ys[e] = (v)
        CUMSUM_LOOP(float, float, LDF, STF)
        break;
    }
    case FRT_FLOAT64: {
        const double *xs = xd;
        double *ys = yd;
        CUMSUM_LOOP(double, double, LDF, STF)
        break;
    }
    case FRT_FLOAT16: {
#define LDH(e) frt_ld_f64(FRT_FLOAT16, xd, e)
#define STH(e, v) frt_st_f64(FRT_FLOAT16, yd, e, (float)(v))
        CUMSUM_LOOP(float, float, LDH, STH)
        break;
    }
    default: { /* integers, wrapping */
        int32_t dt = X->dtype;
#define LDI(e) (uint64_t) frt_ld_i64(dt, xd, e)
#define STI(e, v) frt_st_i64(dt, yd, e, (int64_t)(v))
        CUMSUM_LOOP(uint64_t, uint64_t, LDI, STI)
        break;
    }
    }
    return FRT_OK;
}

static frt_status cumsum_select(frt_op_ctx *c, frt_kernel *k) {
    cumsum_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->exclusive = frt_attr_int(c->node, "exclusive", 0) != 0;
    p->reverse = frt_attr_int(c->node, "reverse", 0) != 0;
    k->name = "cumsum";
    k->fn = cumsum_kernel;
    k->params = p;
    return FRT_OK;
}
FRT_OP_IMPL(reduce, CumSum, cumsum_infer, cumsum_select);

/* ---- TopK ----------------------------------------------------------------------------------- */

typedef struct topk_params {
    int largest, axis;
    int64_t k_attr; /* opset < 10: the attribute; else -1 (input 1) */
} topk_params;

static frt_status topk_k(const frt_op_ctx *c, int64_t *k, int *known) {
    *known = 1;
    if (c->opset < 10) {
        *k = frt_attr_int(c->node, "k", -1);
        if (*k < 0) return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute k is required (>= 0)");
        return FRT_OK;
    }
    frt_status st = frt_op_check_input(c, 1, FRT_INT64);
    if (st) return st;
    const frt_value *kv = c->in[1];
    if (kv->rank > 1 || (kv->numel >= 0 && kv->numel != 1))
        return frt_op_fail(c, FRT_ERR_SHAPE, "K must have one element (has %lld)",
                           (long long)kv->numel);
    if (!kv->data) {
        *known = 0;
        return FRT_OK;
    }
    *k = ((const int64_t *)kv->data)[0];
    return FRT_OK;
}

static frt_status topk_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, c->opset < 10 ? 1 : 2, c->opset < 10 ? 1 : 2, 2, 2);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    const frt_value *x = c->in[0];
    if (!numeric_dtype(x->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (numeric dtypes)",
                           frt_dtype_name(x->dtype));
    int64_t k = -1;
    int known;
    if ((st = topk_k(c, &k, &known))) return st;
    if (x->rank < 0) {
        frt_op_set_shape(c->out[0], x->dtype, -1, NULL);
        frt_op_set_shape(c->out[1], FRT_INT64, -1, NULL);
        return FRT_OK;
    }
    int64_t axis = frt_attr_int(c->node, "axis", -1);
    int a = frt_norm_axis(axis, x->rank);
    if (a < 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d", (long long)axis,
                           x->rank);
    if (known && (k < 0 || (x->dims[a] >= 0 && k > x->dims[a])))
        return frt_op_fail(c, FRT_ERR_SHAPE, "K = %lld is not in [0, %lld] (dim %d)", (long long)k,
                           (long long)x->dims[a], a);
    int64_t dims[FRT_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    dims[a] = known ? k : -1;
    frt_op_set_shape(c->out[0], x->dtype, x->rank, dims);
    frt_op_set_shape(c->out[1], FRT_INT64, x->rank, dims);
    return FRT_OK;
}

typedef struct topk_item {
    double v;   /* float dtypes */
    int64_t iv; /* integer dtypes (ordered key) */
    int64_t idx;
} topk_item;

static int topk_cmp_desc(const void *a_, const void *b_) {
    const topk_item *a = a_, *b = b_;
    bool an = a->v != a->v, bn = b->v != b->v;
    if (an != bn) return an ? -1 : 1; /* NaN first */
    if (!an) {
        if (a->v > b->v) return -1;
        if (a->v < b->v) return 1;
        if (a->iv > b->iv) return -1;
        if (a->iv < b->iv) return 1;
    }
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}
static int topk_cmp_asc(const void *a_, const void *b_) {
    const topk_item *a = a_, *b = b_;
    bool an = a->v != a->v, bn = b->v != b->v;
    if (an != bn) return an ? 1 : -1; /* NaN last */
    if (!an) {
        if (a->v < b->v) return -1;
        if (a->v > b->v) return 1;
        if (a->iv < b->iv) return -1;
        if (a->iv > b->iv) return 1;
    }
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static size_t topk_scratch(const frt_step *s, const frt_value *values) {
    const topk_params *p = s->k.params;
    const frt_value *X = &values[s->in[0]];
    int a = frt_norm_axis(p->axis, X->rank);
    int64_t n = a >= 0 && X->dims[a] > 0 ? X->dims[a] : 1;
    return (size_t)n * sizeof(topk_item);
}

static frt_status topk_kernel(const frt_step *s, frt_exec *x) {
    const topk_params *p = s->k.params;
    const frt_value *X = &x->values[s->in[0]];
    frt_value *V = &x->values[s->out[0]];
    int64_t *I = x->values[s->out[1]].data;
    int a = frt_norm_axis(p->axis, X->rank);
    if (a < 0) return frt_step_fail(s, FRT_ERR_SHAPE, "axis out of range");
    int64_t k = p->k_attr >= 0 ? p->k_attr : ((const int64_t *)x->values[s->in[1]].data)[0];
    int64_t outer = 1, n = X->dims[a], inner = 1;
    if (k < 0 || k > n)
        return frt_step_fail(s, FRT_ERR_RUNTIME, "K = %lld is not in [0, %lld]", (long long)k,
                             (long long)n);
    if (V->rank != X->rank || V->dims[a] != k)
        return frt_step_fail(s, FRT_ERR_SHAPE, "output shape does not match K = %lld",
                             (long long)k);
    for (int i = 0; i < a; i++) outer *= X->dims[i];
    for (int i = a + 1; i < X->rank; i++) inner *= X->dims[i];
    int32_t dt = X->dtype;
    bool isf = frt_dtype_is_float(dt);
    topk_item *it = x->scratch;
    size_t es = frt_dtype_size(dt);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t r = 0; r < n; r++) {
                int64_t e = (o * n + r) * inner + i;
                it[r].idx = r;
                it[r].v = isf ? frt_ld_f64(dt, X->data, e) : 0;
                it[r].iv = isf ? 0 : int_key(dt, X->data, e);
            }
            qsort(it, (size_t)n, sizeof *it, p->largest ? topk_cmp_desc : topk_cmp_asc);
            for (int64_t r = 0; r < k; r++) {
                int64_t src = (o * n + it[r].idx) * inner + i, dst = (o * k + r) * inner + i;
                memcpy((char *)V->data + dst * (int64_t)es, (const char *)X->data + src * (int64_t)es,
                       es);
                I[dst] = it[r].idx;
            }
        }
    return FRT_OK;
}

static frt_status topk_select(frt_op_ctx *c, frt_kernel *k) {
    topk_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    int64_t axis = frt_attr_int(c->node, "axis", -1);
    if (axis < -FRT_MAX_RANK || axis >= FRT_MAX_RANK)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range", (long long)axis);
    p->axis = (int)axis;
    p->largest = c->opset < 11 || frt_attr_int(c->node, "largest", 1) != 0;
    p->k_attr = c->opset < 10 ? frt_attr_int(c->node, "k", -1) : -1;
    k->name = "topk";
    k->fn = topk_kernel;
    k->scratch = topk_scratch;
    k->params = p;
    return FRT_OK;
}
FRT_OP_IMPL(reduce, TopK, topk_infer, topk_select);
