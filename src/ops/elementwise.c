/* Add Sub Mul Div with ONNX multidirectional (numpy) broadcasting, for float32, int64 and int32.
 *
 * Both inputs must have the same dtype; out[0] has that dtype and the broadcast shape.
 * Integer arithmetic wraps (two's complement) and integer division truncates toward zero as in C;
 * an integer division by zero makes the kernel fail with FRT_ERR_RUNTIME (INT_MIN / -1 wraps to
 * INT_MIN). A fused activation (node->act, set by passes) is applied to float32 outputs.
 *
 * Kernels are specialized at select from what is known at load (dtypes, possibly partial shapes,
 * constant inputs):
 *   <op>_<dt>_same          a, b and out have the same number of elements (same layout)
 *   <op>_<dt>_scalar_const  one input is a constant with one element; its value is copied into
 *                           the params at select and the kernel never reads that input
 *   <op>_<dt>_scalar        one input has one element (read at run time)
 *   <op>_<dt>_chan          the smaller input's non-1 dims form one block that is not last, e.g.
 *                           [N,C,H,W] op [C,1,1] or [1,C,1,1] or [N,C,1,1]: out = [outer,mid,inner]
 *   <op>_<dt>_row           the same with the block last: [...,K] op [K]
 *   <op>_<dt>_bcast_nd      general broadcasting; strides are computed per run from the dims
 * (float32 names end in the loops' tier: "" portable, _avx2, _avx512; see frt_ew_variant).
 * Every specialized kernel re-checks its precondition against the run-time dims (a few compares:
 * shapes unknown at load may turn out different) and otherwise falls back to a run-time dispatch
 * over the same patterns.
 */
#include <stdatomic.h>
#include <string.h>

#include "cpu.h"
#include "op.h"
#include "x86/simd_elementwise.h"

/* ---- portable loops ------------------------------------------------------------------------ */

/* EXPR computes the result from x (element of a) and y (element of b). No restrict: o may be a. */
#define EW_LOOPS(NAME, T, EXPR)                                                                  \
    static int NAME##_vv(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const T *a = a_, *b = b_;                                                                \
        T *o = o_;                                                                               \
        for (size_t i = 0; i < n; i++) {                                                         \
            T x = a[i], y = b[i];                                                                \
            o[i] = (EXPR);                                                                       \
        }                                                                                        \
        return 0;                                                                                \
    }                                                                                            \
    static int NAME##_vs(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const T *a = a_;                                                                         \
        const T y = *(const T *)b_;                                                              \
        T *o = o_;                                                                               \
        for (size_t i = 0; i < n; i++) {                                                         \
            T x = a[i];                                                                          \
            o[i] = (EXPR);                                                                       \
        }                                                                                        \
        return 0;                                                                                \
    }                                                                                            \
    static int NAME##_sv(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const T x = *(const T *)a_;                                                              \
        const T *b = b_;                                                                         \
        T *o = o_;                                                                               \
        for (size_t i = 0; i < n; i++) {                                                         \
            T y = b[i];                                                                          \
            o[i] = (EXPR);                                                                       \
        }                                                                                        \
        return 0;                                                                                \
    }

/* Integer division: truncates toward zero; y == -1 is negation with wrap-around (avoids the
 * INT_MIN / -1 trap); y == 0 writes 0 and reports failure. */
#define EW_DIV_LOOPS(NAME, T, U)                                                                 \
    static inline T NAME##_one(T x, T y, int *bad) {                                             \
        if (y == 0) {                                                                            \
            *bad = 1;                                                                            \
            return 0;                                                                            \
        }                                                                                        \
        if (y == -1) return (T)((U)0 - (U)x);                                                    \
        return x / y;                                                                            \
    }                                                                                            \
    static int NAME##_vv(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const T *a = a_, *b = b_;                                                                \
        T *o = o_;                                                                               \
        int bad = 0;                                                                             \
        for (size_t i = 0; i < n; i++) o[i] = NAME##_one(a[i], b[i], &bad);                     \
        return bad;                                                                              \
    }                                                                                            \
    static int NAME##_vs(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const T *a = a_;                                                                         \
        const T y = *(const T *)b_;                                                              \
        T *o = o_;                                                                               \
        if (y == 0) return n != 0;                                                               \
        if (y == -1) {                                                                           \
            for (size_t i = 0; i < n; i++) o[i] = (T)((U)0 - (U)a[i]);                           \
            return 0;                                                                            \
        }                                                                                        \
        for (size_t i = 0; i < n; i++) o[i] = a[i] / y;                                          \
        return 0;                                                                                \
    }                                                                                            \
    static int NAME##_sv(const void *a_, const void *b_, void *o_, size_t n) {                   \
        const T x = *(const T *)a_;                                                              \
        const T *b = b_;                                                                         \
        T *o = o_;                                                                               \
        int bad = 0;                                                                             \
        for (size_t i = 0; i < n; i++) o[i] = NAME##_one(x, b[i], &bad);                         \
        return bad;                                                                              \
    }

EW_LOOPS(add_f32, float, x + y)
EW_LOOPS(sub_f32, float, x - y)
EW_LOOPS(mul_f32, float, x * y)
EW_LOOPS(div_f32, float, x / y)
EW_LOOPS(add_i64, int64_t, (int64_t)((uint64_t)x + (uint64_t)y))
EW_LOOPS(sub_i64, int64_t, (int64_t)((uint64_t)x - (uint64_t)y))
EW_LOOPS(mul_i64, int64_t, (int64_t)((uint64_t)x * (uint64_t)y))
EW_DIV_LOOPS(div_i64, int64_t, uint64_t)
EW_LOOPS(add_i32, int32_t, (int32_t)((uint32_t)x + (uint32_t)y))
EW_LOOPS(sub_i32, int32_t, (int32_t)((uint32_t)x - (uint32_t)y))
EW_LOOPS(mul_i32, int32_t, (int32_t)((uint32_t)x * (uint32_t)y))
EW_DIV_LOOPS(div_i32, int32_t, uint32_t)

#define LOOPS(NAME) {NAME##_vv, NAME##_vs, NAME##_sv}
static const frt_bin_loops loops_f32[4] = {LOOPS(add_f32), LOOPS(sub_f32), LOOPS(mul_f32),
                                           LOOPS(div_f32)};
static const frt_bin_loops loops_i64[4] = {LOOPS(add_i64), LOOPS(sub_i64), LOOPS(mul_i64),
                                           LOOPS(div_i64)};
static const frt_bin_loops loops_i32[4] = {LOOPS(add_i32), LOOPS(sub_i32), LOOPS(mul_i32),
                                           LOOPS(div_i32)};

/* Float32 loop variants, best tier first. Integer loops are portable only. */
static const frt_ew_variant ew_variants[] = {
#if FRT_HAVE_X86
    {FRT_ISA_AVX512, "_avx512", frt_ew_f32_avx512},
    {FRT_ISA_AVX2, "_avx2", frt_ew_f32_avx2},
#endif
    {FRT_ISA_PORTABLE, "", loops_f32},
};

const frt_ew_variant *frt_ew_variant_get(frt_isa cap) { return FRT_PICK_VARIANT(ew_variants, cap); }

/* ---- params and shared run-time pieces ---------------------------------------------------- */

typedef struct ew_params {
    frt_bin_loops L;
    frt_clip_fn act; /* fused activation on the float32 output, or NULL */
    float lo, hi;
    size_t esize;
    int side; /* scalar / scalar_const / chan / row: which input is the small one (0 or 1) */
    union {
        float f;
        int64_t i64;
        int32_t i32;
        unsigned char bytes[8];
    } sc; /* scalar_const: the constant's value */
} ew_params;

#define EW_VALUES(s, x)                                                                          \
    const frt_value *A = &(x)->values[(s)->in[0]];                                               \
    const frt_value *B = &(x)->values[(s)->in[1]];                                               \
    frt_value *O = &(x)->values[(s)->out[0]]

static frt_status div_zero(const frt_step *s) {
    return frt_step_fail(s, FRT_ERR_RUNTIME, "integer division by zero");
}

/* Flat job: o[i] = a[i*as] op b[i*bs] with as, bs in {0,1}. */
typedef struct flat_job {
    const ew_params *p;
    frt_bin_fn f;
    const char *a, *b;
    char *o;
    size_t as, bs; /* byte step per element: esize or 0 */
    atomic_int bad;
} flat_job;

static void flat_range(void *ctx, size_t lo, size_t hi) {
    flat_job *j = ctx;
    size_t es = j->p->esize;
    char *o = j->o + lo * es;
    if (j->f(j->a + lo * j->as, j->b + lo * j->bs, o, hi - lo))
        atomic_store_explicit(&j->bad, 1, memory_order_relaxed);
    if (j->p->act) j->p->act((float *)o, (float *)o, hi - lo, j->p->lo, j->p->hi);
}

static frt_status run_flat(const frt_step *s, frt_exec *x, frt_bin_fn f, const void *a, size_t as,
                           const void *b, size_t bs, void *o, size_t n) {
    const ew_params *p = s->k.params;
    if (!x->tp || n < 2 * FRT_EW_CHUNK) { /* the common small case: no job, one call */
        int bad = f(a, b, o, n);
        if (p->act) p->act(o, o, n, p->lo, p->hi);
        return bad ? div_zero(s) : FRT_OK;
    }
    flat_job j = {p, f, a, b, o, as, bs, 0};
    frt_ew_parallel(x->tp, n, 1, flat_range, &j);
    return atomic_load(&j.bad) ? div_zero(s) : FRT_OK;
}

/* Block job: out viewed as [outer, mid, inner]; the small input has mid elements and is constant
 * along outer and inner; the big input has the out layout. */
typedef struct block_job {
    const ew_params *p;
    int side; /* which input is the small one */
    const char *big, *small;
    char *o;
    size_t mid, inner;
    atomic_int bad;
} block_job;

/* inner == 1 ("row"): units are the outer rows of mid elements. */
static void row_range(void *ctx, size_t lo, size_t hi) {
    block_job *j = ctx;
    const ew_params *p = j->p;
    size_t es = p->esize, rb = j->mid * es;
    int bad = 0;
    for (size_t r = lo; r < hi; r++) {
        const char *br = j->big + r * rb;
        char *o = j->o + r * rb;
        bad |= j->side ? p->L.vv(br, j->small, o, j->mid) : p->L.vv(j->small, br, o, j->mid);
        if (p->act) p->act((float *)o, (float *)o, j->mid, p->lo, p->hi);
    }
    if (bad) atomic_store_explicit(&j->bad, 1, memory_order_relaxed);
}

/* inner > 1 ("chan"): units are the outer*mid rows of inner elements; row r uses small[r % mid]. */
static void chan_range(void *ctx, size_t lo, size_t hi) {
    block_job *j = ctx;
    const ew_params *p = j->p;
    size_t es = p->esize, rb = j->inner * es;
    size_t c = lo % j->mid; /* once per range; then a wrapping counter */
    int bad = 0;
    for (size_t r = lo; r < hi; r++) {
        const char *br = j->big + r * rb, *sc = j->small + c * es;
        char *o = j->o + r * rb;
        bad |= j->side ? p->L.vs(br, sc, o, j->inner) : p->L.sv(sc, br, o, j->inner);
        if (p->act) p->act((float *)o, (float *)o, j->inner, p->lo, p->hi);
        if (++c == j->mid) c = 0;
    }
    if (bad) atomic_store_explicit(&j->bad, 1, memory_order_relaxed);
}

/* Right-aligns sm against out. Succeeds when sm's dims other than 1 form one block [first,last]
 * equal to out's dims there, and sm has more than one element; sets inner = product of out dims
 * after the block. */
static bool block_shape(const frt_value *sm, const frt_value *o, size_t *inner) {
    int off = o->rank - sm->rank;
    if (off < 0 || sm->numel <= 1) return false;
    int first = -1, last = -1;
    for (int i = 0; i < sm->rank; i++)
        if (sm->dims[i] != 1) {
            if (first < 0) first = i;
            last = i;
        }
    for (int i = first; i <= last; i++)
        if (sm->dims[i] != o->dims[i + off]) return false;
    size_t in = 1;
    for (int i = last + 1 + off; i < o->rank; i++) in *= (size_t)o->dims[i];
    *inner = in;
    return true;
}

static frt_status run_block(const frt_step *s, frt_exec *x, int side, size_t inner) {
    EW_VALUES(s, x);
    const ew_params *p = s->k.params;
    const frt_value *sm = side ? B : A, *bg = side ? A : B;
    block_job j = {p, side, bg->data, sm->data, O->data, (size_t)sm->numel, inner, 0};
    size_t units = (size_t)O->numel / (j.mid * inner);
    if (inner == 1)
        frt_ew_parallel(x->tp, units, j.mid, row_range, &j);
    else
        frt_ew_parallel(x->tp, units * j.mid, inner, chan_range, &j);
    return atomic_load(&j.bad) ? div_zero(s) : FRT_OK;
}

/* General broadcasting: out dims coalesced (dims of 1 dropped, neighbours with the same
 * broadcast pattern merged), element strides per input (0 where broadcast). */
typedef struct nd_job {
    const ew_params *p;
    frt_bin_fn f; /* inner loop: vv, vs or sv by the inner strides */
    const char *a, *b;
    char *o;
    int nd;       /* coalesced rank >= 1; the last dim is the inner loop */
    size_t dims[FRT_MAX_RANK], sa[FRT_MAX_RANK], sb[FRT_MAX_RANK];
    atomic_int bad;
} nd_job;

static void nd_range(void *ctx, size_t lo, size_t hi) {
    nd_job *j = ctx;
    const ew_params *p = j->p;
    size_t es = p->esize, L = j->dims[j->nd - 1];
    int no = j->nd - 1; /* outer dims */
    size_t idx[FRT_MAX_RANK], oa = 0, ob = 0, rem = lo;
    for (int k = no - 1; k >= 0; k--) { /* once per range */
        idx[k] = rem % j->dims[k];
        rem /= j->dims[k];
        oa += idx[k] * j->sa[k];
        ob += idx[k] * j->sb[k];
    }
    int bad = 0;
    for (size_t r = lo; r < hi; r++) {
        char *o = j->o + r * L * es;
        bad |= j->f(j->a + oa * es, j->b + ob * es, o, L);
        if (p->act) p->act((float *)o, (float *)o, L, p->lo, p->hi);
        for (int k = no - 1; k >= 0; k--) {
            oa += j->sa[k];
            ob += j->sb[k];
            if (++idx[k] < j->dims[k]) break;
            oa -= j->sa[k] * j->dims[k];
            ob -= j->sb[k] * j->dims[k];
            idx[k] = 0;
        }
    }
    if (bad) atomic_store_explicit(&j->bad, 1, memory_order_relaxed);
}

static frt_status run_nd(const frt_step *s, frt_exec *x) {
    EW_VALUES(s, x);
    const ew_params *p = s->k.params;
    int r = O->rank, fa[FRT_MAX_RANK], fb[FRT_MAX_RANK];
    if (A->rank > r || B->rank > r)
        return frt_step_fail(s, FRT_ERR_INTERNAL, "input rank exceeds output rank");
    nd_job j;
    j.p = p;
    j.a = A->data;
    j.b = B->data;
    j.o = O->data;
    atomic_init(&j.bad, 0);
    int nd = 0;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - A->rank), ib = i - (r - B->rank);
        int64_t od = O->dims[i], ad = ia >= 0 ? A->dims[ia] : 1, bd = ib >= 0 ? B->dims[ib] : 1;
        if ((ad != od && ad != 1) || (bd != od && bd != 1))
            return frt_step_fail(s, FRT_ERR_SHAPE, "input dims do not broadcast to the output");
        if (od == 1) continue;
        int ba = ad == 1, bb = bd == 1;
        if (nd > 0 && fa[nd - 1] == ba && fb[nd - 1] == bb) {
            j.dims[nd - 1] *= (size_t)od;
        } else {
            j.dims[nd] = (size_t)od;
            fa[nd] = ba;
            fb[nd] = bb;
            nd++;
        }
    }
    if (nd == 0) { /* a single element */
        j.dims[0] = 1;
        fa[0] = fb[0] = 0;
        nd = 1;
    }
    size_t acc_a = 1, acc_b = 1;
    for (int k = nd - 1; k >= 0; k--) {
        j.sa[k] = fa[k] ? 0 : acc_a;
        j.sb[k] = fb[k] ? 0 : acc_b;
        if (!fa[k]) acc_a *= j.dims[k];
        if (!fb[k]) acc_b *= j.dims[k];
    }
    j.nd = nd;
    j.f = fa[nd - 1] ? p->L.sv : fb[nd - 1] ? p->L.vs : p->L.vv;
    size_t L = j.dims[nd - 1];
    frt_ew_parallel(x->tp, (size_t)O->numel / L, L, nd_range, &j);
    return atomic_load(&j.bad) ? div_zero(s) : FRT_OK;
}

/* Run-time dispatch over the patterns, for kernels whose select-time guess did not hold. */
static frt_status run_any(const frt_step *s, frt_exec *x) {
    EW_VALUES(s, x);
    const ew_params *p = s->k.params;
    size_t n = (size_t)O->numel, es = p->esize, inner;
    if (A->numel == O->numel && B->numel == O->numel)
        return run_flat(s, x, p->L.vv, A->data, es, B->data, es, O->data, n);
    if (B->numel == 1 && A->numel == O->numel)
        return run_flat(s, x, p->L.vs, A->data, es, B->data, 0, O->data, n);
    if (A->numel == 1 && B->numel == O->numel)
        return run_flat(s, x, p->L.sv, A->data, 0, B->data, es, O->data, n);
    if (A->numel == O->numel && block_shape(B, O, &inner)) return run_block(s, x, 1, inner);
    if (B->numel == O->numel && block_shape(A, O, &inner)) return run_block(s, x, 0, inner);
    return run_nd(s, x);
}

/* ---- kernels ------------------------------------------------------------------------------- */

static frt_status k_same(const frt_step *s, frt_exec *x) {
    EW_VALUES(s, x);
    const ew_params *p = s->k.params;
    if (A->numel != O->numel || B->numel != O->numel) return run_any(s, x);
    if (O->numel == 0) return FRT_OK;
    return run_flat(s, x, p->L.vv, A->data, p->esize, B->data, p->esize, O->data,
                    (size_t)O->numel);
}

static frt_status k_scalar(const frt_step *s, frt_exec *x) {
    EW_VALUES(s, x);
    const ew_params *p = s->k.params;
    const frt_value *sv = p->side ? B : A, *vv = p->side ? A : B;
    if (sv->numel != 1 || vv->numel != O->numel) return run_any(s, x);
    if (O->numel == 0) return FRT_OK;
    if (p->side) return run_flat(s, x, p->L.vs, A->data, p->esize, B->data, 0, O->data,
                                 (size_t)O->numel);
    return run_flat(s, x, p->L.sv, A->data, 0, B->data, p->esize, O->data, (size_t)O->numel);
}

/* The constant has one element, so out has the other input's layout whatever its shape. */
static frt_status k_scalar_const(const frt_step *s, frt_exec *x) {
    EW_VALUES(s, x);
    const ew_params *p = s->k.params;
    (void)A;
    (void)B;
    const frt_value *vv = &x->values[s->in[1 - p->side]];
    if (vv->numel != O->numel) return run_any(s, x); /* cannot happen after infer */
    if (O->numel == 0) return FRT_OK;
    if (p->side) return run_flat(s, x, p->L.vs, vv->data, p->esize, p->sc.bytes, 0, O->data,
                                 (size_t)O->numel);
    return run_flat(s, x, p->L.sv, p->sc.bytes, 0, vv->data, p->esize, O->data, (size_t)O->numel);
}

static frt_status k_block(const frt_step *s, frt_exec *x) {
    EW_VALUES(s, x);
    const ew_params *p = s->k.params;
    const frt_value *sm = p->side ? B : A, *bg = p->side ? A : B;
    size_t inner;
    if (O->numel == 0) return FRT_OK;
    if (bg->numel != O->numel || !block_shape(sm, O, &inner)) return run_any(s, x);
    return run_block(s, x, p->side, inner);
}

static frt_status k_nd(const frt_step *s, frt_exec *x) {
    if (x->values[s->out[0]].numel == 0) return FRT_OK;
    return run_nd(s, x);
}

/* ---- infer / select ------------------------------------------------------------------------ */

static frt_status ew_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 2, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (!st) st = frt_op_check_input(c, 1, 0);
    if (st) return st;
    const frt_value *a = c->in[0], *b = c->in[1];
    if (c->opset < 7 && frt_attr_find(c->node, "axis") && frt_attr_int(c->node, "broadcast", 0))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED,
                           "legacy (opset < 7) broadcasting with an axis attribute");
    if (a->dtype != b->dtype)
        return frt_op_fail(c, FRT_ERR_SHAPE, "inputs have different dtypes %s and %s",
                           frt_dtype_name(a->dtype), frt_dtype_name(b->dtype));
    if (a->dtype != FRT_FLOAT32 && a->dtype != FRT_INT64 && a->dtype != FRT_INT32)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (float32, int64, int32)",
                           frt_dtype_name(a->dtype));
    int32_t rank;
    int64_t dims[FRT_MAX_RANK];
    st = frt_broadcast_shape(c, a, b, &rank, dims);
    if (st) return st;
    frt_op_set_shape(c->out[0], a->dtype, rank, dims);
    return FRT_OK;
}

enum { PAT_SAME, PAT_SCALAR_CONST, PAT_SCALAR, PAT_CHAN, PAT_ROW, PAT_ND };
/* Kernel names, static so they outlive any arena: [op][dtype][pattern][activation][isa]. */
#define N_ISA(o, d, p, a) {o "_" d "_" p a, o "_" d "_" p a "_avx2", o "_" d "_" p a "_avx512"}
#define N_ACT(o, d, p) {N_ISA(o, d, p, ""), N_ISA(o, d, p, "_relu"), N_ISA(o, d, p, "_clip")}
#define N_PAT(o, d)                                                                              \
    {N_ACT(o, d, "same"), N_ACT(o, d, "scalar_const"), N_ACT(o, d, "scalar"),                    \
     N_ACT(o, d, "chan"), N_ACT(o, d, "row"),          N_ACT(o, d, "bcast_nd")}
#define N_DT(o) {N_PAT(o, "f32"), N_PAT(o, "i64"), N_PAT(o, "i32")}
static const char *const ew_names[4][3][6][3][3] = {N_DT("add"), N_DT("sub"), N_DT("mul"),
                                                     N_DT("div")};
static const frt_kernel_fn pat_fns[] = {k_same, k_scalar_const, k_scalar, k_block, k_block, k_nd};

/* Guesses the pattern from load-time shapes (dims may be -1); kernels verify at run time. */
static int guess_pattern(const frt_value *a, const frt_value *b, int *side) {
    *side = 1;
    if (b->numel == 1 && b->data) return PAT_SCALAR_CONST;
    if (a->numel == 1 && a->data) {
        *side = 0;
        return PAT_SCALAR_CONST;
    }
    if (b->numel == 1) return PAT_SCALAR;
    if (a->numel == 1) {
        *side = 0;
        return PAT_SCALAR;
    }
    if (a->rank < 0 || b->rank < 0) return PAT_SAME;
    int r = a->rank > b->rank ? a->rank : b->rank;
    int64_t ad[FRT_MAX_RANK], bd[FRT_MAX_RANK];
    bool a_bc = false, b_bc = false;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        ad[i] = ia >= 0 ? a->dims[ia] : 1;
        bd[i] = ib >= 0 ? b->dims[ib] : 1;
        if (ad[i] == 1 && bd[i] != 1) a_bc = true;
        if (bd[i] == 1 && ad[i] != 1) b_bc = true;
    }
    if (!a_bc && !b_bc) return PAT_SAME;
    if (a_bc && b_bc) return PAT_ND;
    *side = b_bc ? 1 : 0;
    const int64_t *sm = b_bc ? bd : ad, *bg = b_bc ? ad : bd;
    int first = -1, last = -1;
    for (int i = 0; i < r; i++)
        if (sm[i] != 1) {
            if (first < 0) first = i;
            last = i;
        }
    if (first < 0) return PAT_ND; /* unreachable: numel would be 1 */
    for (int i = first; i <= last; i++)
        if (sm[i] == 1 && bg[i] != 1) return PAT_ND; /* a broadcast dim inside the block */
    return last == r - 1 ? PAT_ROW : PAT_CHAN;
}

static frt_status ew_select(frt_op_ctx *c, frt_kernel *k, int op) {
    const frt_value *a = c->in[0], *b = c->in[1];
    int32_t dt = a->dtype;
    if (b->dtype != dt) return frt_op_fail(c, FRT_ERR_SHAPE, "inputs have different dtypes");
    ew_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    frt_isa isa = FRT_ISA_PORTABLE; /* tier of the loops, for the kernel name */
    switch (dt) {
    case FRT_FLOAT32: {
        const frt_ew_variant *v = frt_ew_variant_get(c->isa);
        p->L = v->f32[op];
        p->esize = 4;
        isa = v->isa;
        break;
    }
    case FRT_INT64:
        p->L = loops_i64[op];
        p->esize = 8;
        break;
    case FRT_INT32:
        p->L = loops_i32[op];
        p->esize = 4;
        break;
    default:
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported", frt_dtype_name(dt));
    }
    const frt_act *act = &c->node->act;
    if (act->kind != FRT_ACT_NONE) {
        if (dt != FRT_FLOAT32)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "fused activation on a %s output",
                               frt_dtype_name(dt));
        p->act = frt_act_variant_get(c->isa)->clip;
        p->lo = act->kind == FRT_ACT_RELU ? 0.0f : act->lo;
        p->hi = act->kind == FRT_ACT_RELU ? __builtin_inff() : act->hi;
    }
    int side;
    int pat = guess_pattern(a, b, &side);
    p->side = side;
    if (pat == PAT_SCALAR_CONST) memcpy(p->sc.bytes, (side ? b : a)->data, p->esize);

    int ai = act->kind == FRT_ACT_RELU ? 1 : act->kind == FRT_ACT_CLIP ? 2 : 0;
    k->name = ew_names[op][dt == FRT_FLOAT32 ? 0 : dt == FRT_INT64 ? 1 : 2][pat][ai][isa];
    k->fn = pat_fns[pat];
    k->params = p;
    k->scratch = NULL;
    k->flags = FRT_K_INPLACE;
    return FRT_OK;
}

static frt_status add_select(frt_op_ctx *c, frt_kernel *k) { return ew_select(c, k, FRT_EW_ADD); }
static frt_status sub_select(frt_op_ctx *c, frt_kernel *k) { return ew_select(c, k, FRT_EW_SUB); }
static frt_status mul_select(frt_op_ctx *c, frt_kernel *k) { return ew_select(c, k, FRT_EW_MUL); }
static frt_status div_select(frt_op_ctx *c, frt_kernel *k) { return ew_select(c, k, FRT_EW_DIV); }

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(elementwise, Add, ew_infer, add_select);
FRT_OP_IMPL(elementwise, Sub, ew_infer, sub_select);
FRT_OP_IMPL(elementwise, Mul, ew_infer, mul_select);
FRT_OP_IMPL(elementwise, Div, ew_infer, div_select);
