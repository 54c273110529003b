/* And Or Xor Not Equal Less Greater LessOrEqual GreaterOrEqual Where IsNaN IsInf.
 *
 *   And/Or/Xor(A, B)            bool, bool -> bool; Not(X) bool -> bool
 *   Equal/Less/Greater/LessOrEqual/GreaterOrEqual(A, B)
 *                               A and B of one numeric dtype (float32/64, float16, bfloat16,
 *                               int8..int64, uint8..uint64; bool too for Equal) -> bool.
 *                               IEEE semantics: NaN compares false, -0 == +0. float16/bfloat16
 *                               compare as the floats they hold.
 *   Where(C, X, Y)              C bool, X and Y of one dtype (any fixed-size dtype) -> that dtype;
 *                               out[i] = C[i] ? X[i] : Y[i] (bits copied unchanged)
 *   IsNaN(X), IsInf(X)          float32/64, float16, bfloat16 -> bool; IsInf's detect_positive and
 *                               detect_negative (default 1) select which infinities count
 * Binary ops and Where broadcast their inputs multidirectionally (numpy). Opset-1 forms of
 * And/Or/Xor/Equal/Less/Greater with an `axis` attribute (legacy broadcasting) are rejected as
 * unsupported; `broadcast` without axis is numpy-compatible. Strings are unsupported (dtype
 * string). Bool inputs are read as (byte != 0).
 *
 * Kernels: the output dims are coalesced (dims of 1 dropped, neighbours with the same broadcast
 * pattern merged) and the last coalesced dim runs as an inner loop whose input strides are 0
 * (broadcast scalar) or 1, so the flat, scalar, row and channel cases all reduce to long inner
 * loops; rows run in parallel. float32 comparisons and the 4-byte Where loop have AVX2 and
 * AVX-512 variants (frt_logic_variant, src/ops/x86/logic_*.c; kernel names end in the tier).
 */
#include <math.h>
#include <string.h>

#include "cpu.h"
#include "dtype_util.h"
#include "op.h"
#include "x86/simd_elementwise.h"
#include "x86/simd_logic.h"

/* ---- portable loops ------------------------------------------------------------------------ */

#define LD_ID(v) (v)
#define LD_F16(v) frt_half_to_float(v)
#define LD_BF16(v) frt_bf16_to_float(v)
#define LD_B(v) ((v) != 0)

/* o[i] = EXPR(x = a[i*sa], y = b[i*sb]); the stride cases are separate loops so the contiguous
 * one vectorizes. */
#define CMP_LOOP(NAME, T, LD, EXPR)                                                              \
    static void NAME(const void *a_, const void *b_, uint8_t *o, size_t n, size_t sa,             \
                     size_t sb) {                                                                \
        const T *a = a_, *b = b_;                                                                \
        if (sa && sb) {                                                                          \
            for (size_t i = 0; i < n; i++) {                                                     \
                __typeof__(LD(a[0])) x = LD(a[i]), y = LD(b[i]);                                 \
                o[i] = (uint8_t)(EXPR);                                                          \
            }                                                                                    \
        } else if (sa) {                                                                         \
            __typeof__(LD(a[0])) y = LD(b[0]);                                                   \
            for (size_t i = 0; i < n; i++) {                                                     \
                __typeof__(LD(a[0])) x = LD(a[i]);                                               \
                o[i] = (uint8_t)(EXPR);                                                          \
            }                                                                                    \
        } else if (sb) {                                                                         \
            __typeof__(LD(a[0])) x = LD(a[0]);                                                   \
            for (size_t i = 0; i < n; i++) {                                                     \
                __typeof__(LD(a[0])) y = LD(b[i]);                                               \
                o[i] = (uint8_t)(EXPR);                                                          \
            }                                                                                    \
        } else {                                                                                 \
            __typeof__(LD(a[0])) x = LD(a[0]), y = LD(b[0]);                                     \
            memset(o, (uint8_t)(EXPR), n);                                                       \
        }                                                                                        \
    }

#define CMP_ROW(S, T, LD)                                                                        \
    CMP_LOOP(eq_##S, T, LD, x == y)                                                              \
    CMP_LOOP(lt_##S, T, LD, x < y)                                                               \
    CMP_LOOP(gt_##S, T, LD, x > y)                                                               \
    CMP_LOOP(le_##S, T, LD, x <= y)                                                              \
    CMP_LOOP(ge_##S, T, LD, x >= y)

CMP_ROW(f32, float, LD_ID)
CMP_ROW(f64, double, LD_ID)
CMP_ROW(f16, uint16_t, LD_F16)
CMP_ROW(bf16, uint16_t, LD_BF16)
CMP_ROW(i8, int8_t, LD_ID)
CMP_ROW(i16, int16_t, LD_ID)
CMP_ROW(i32, int32_t, LD_ID)
CMP_ROW(i64, int64_t, LD_ID)
CMP_ROW(u8, uint8_t, LD_ID)
CMP_ROW(u16, uint16_t, LD_ID)
CMP_ROW(u32, uint32_t, LD_ID)
CMP_ROW(u64, uint64_t, LD_ID)
CMP_LOOP(eq_b8, uint8_t, LD_B, x == y)
CMP_LOOP(and_b8, uint8_t, LD_B, x & y)
CMP_LOOP(or_b8, uint8_t, LD_B, x | y)
CMP_LOOP(xor_b8, uint8_t, LD_B, x ^ y)

/* Dtypes of the comparison tables, in table order. */
enum { T_F32, T_F64, T_F16, T_BF16, T_I8, T_I16, T_I32, T_I64, T_U8, T_U16, T_U32, T_U64, T_B8,
       T_N };
static const int32_t cmp_dtypes[T_N] = {FRT_FLOAT32, FRT_FLOAT64, FRT_FLOAT16, FRT_BFLOAT16,
                                        FRT_INT8,    FRT_INT16,   FRT_INT32,   FRT_INT64,
                                        FRT_UINT8,   FRT_UINT16,  FRT_UINT32,  FRT_UINT64,
                                        FRT_BOOL};
#define CMP_TAB(S) {eq_##S, lt_##S, gt_##S, le_##S, ge_##S}
static const frt_cmp_fn cmp_loops[T_B8][FRT_CMP_N] = {
    CMP_TAB(f32), CMP_TAB(f64), CMP_TAB(f16), CMP_TAB(bf16), CMP_TAB(i8),  CMP_TAB(i16),
    CMP_TAB(i32), CMP_TAB(i64), CMP_TAB(u8),  CMP_TAB(u16),  CMP_TAB(u32), CMP_TAB(u64)};

static int cmp_type_index(int32_t dt) {
    for (int i = 0; i < T_N; i++)
        if (cmp_dtypes[i] == dt) return i;
    return -1;
}

/* Where, one loop per element size (the bytes are copied, never interpreted). */
#define WHERE_LOOP(NAME, T)                                                                      \
    static void NAME(const uint8_t *c, const void *x_, const void *y_, void *o_, size_t n,        \
                     size_t sc, size_t sx, size_t sy) {                                          \
        const T *x = x_, *y = y_;                                                                \
        T *o = o_;                                                                               \
        if (sc && sx && sy) {                                                                    \
            for (size_t i = 0; i < n; i++) o[i] = c[i] ? x[i] : y[i];                            \
            return;                                                                              \
        }                                                                                        \
        for (size_t i = 0; i < n; i++) o[i] = c[i * sc] ? x[i * sx] : y[i * sy];                 \
    }
#if defined(__GNUC__)
typedef uint16_t __attribute__((may_alias)) w16;
typedef uint32_t __attribute__((may_alias)) w32;
typedef uint64_t __attribute__((may_alias)) w64;
#else
typedef uint16_t w16;
typedef uint32_t w32;
typedef uint64_t w64;
#endif
WHERE_LOOP(where8, uint8_t)
WHERE_LOOP(where16, w16)
WHERE_LOOP(where32, w32)
WHERE_LOOP(where64, w64)

/* ---- variants --------------------------------------------------------------------------- */

static const frt_cmp_fn cmp_f32_portable[FRT_CMP_N] = CMP_TAB(f32);
static const frt_logic_variant logic_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512, "_avx512", frt_cmp_f32_avx512, frt_where32_avx512},
#endif
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "_avx2", frt_cmp_f32_avx2, frt_where32_avx2},
#endif
#endif
    {FRT_ISA_PORTABLE, "", cmp_f32_portable, where32},
};

const frt_logic_variant *frt_logic_variant_get(frt_isa cap) {
    return FRT_PICK_VARIANT(logic_variants, cap);
}

/* ---- broadcasting ------------------------------------------------------------------------- */

/* Output viewed as rows: dims coalesced; st[k][d] element strides of input k (0 = broadcast). */
typedef struct bc_plan {
    int nd, n_in;
    size_t dims[FRT_MAX_RANK];
    size_t st[3][FRT_MAX_RANK];
} bc_plan;

/* Fails (0) when an input's dims do not broadcast to out's. */
static bool bc_plan_make(const frt_value *out, const frt_value *const *in, int n_in, bc_plan *p) {
    int r = out->rank, nd = 0;
    int flag[3][FRT_MAX_RANK];
    p->n_in = n_in;
    for (int i = 0; i < r; i++) {
        int64_t od = out->dims[i];
        int f[3];
        for (int k = 0; k < n_in; k++) {
            int ik = i - (r - in[k]->rank);
            int64_t d = ik >= 0 ? in[k]->dims[ik] : 1;
            if (in[k]->rank > r || (d != od && d != 1)) return false;
            f[k] = d == 1;
        }
        if (od == 1) continue;
        bool same = nd > 0;
        for (int k = 0; k < n_in && same; k++) same = flag[k][nd - 1] == f[k];
        if (same) {
            p->dims[nd - 1] *= (size_t)od;
        } else {
            p->dims[nd] = (size_t)od;
            for (int k = 0; k < n_in; k++) flag[k][nd] = f[k];
            nd++;
        }
    }
    if (nd == 0) {
        p->dims[0] = 1;
        for (int k = 0; k < n_in; k++) flag[k][0] = 0;
        nd = 1;
    }
    for (int k = 0; k < n_in; k++) {
        size_t acc = 1;
        for (int d = nd - 1; d >= 0; d--) {
            p->st[k][d] = flag[k][d] ? 0 : acc;
            if (!flag[k][d]) acc *= p->dims[d];
        }
    }
    p->nd = nd;
    return true;
}

typedef struct lg_job {
    bc_plan p;
    const char *in[3];
    size_t es[3], oes;
    char *o;
    frt_cmp_fn cmp;
    frt_where_fn where;
} lg_job;

static void lg_range(void *ctx, size_t lo, size_t hi) {
    const lg_job *j = ctx;
    const bc_plan *p = &j->p;
    int no = p->nd - 1;
    size_t L = p->dims[no], idx[FRT_MAX_RANK], off[3] = {0, 0, 0}, rem = lo;
    for (int d = no - 1; d >= 0; d--) {
        idx[d] = rem % p->dims[d];
        rem /= p->dims[d];
        for (int k = 0; k < p->n_in; k++) off[k] += idx[d] * p->st[k][d];
    }
    for (size_t r = lo; r < hi; r++) {
        char *o = j->o + r * L * j->oes;
        const char *a = j->in[0] + off[0] * j->es[0], *b = j->in[1] + off[1] * j->es[1];
        if (j->cmp) {
            j->cmp(a, b, (uint8_t *)o, L, p->st[0][no], p->st[1][no]);
        } else {
            const char *y = j->in[2] + off[2] * j->es[2];
            j->where((const uint8_t *)a, b, y, o, L, p->st[0][no], p->st[1][no], p->st[2][no]);
        }
        for (int d = no - 1; d >= 0; d--) {
            for (int k = 0; k < p->n_in; k++) off[k] += p->st[k][d];
            if (++idx[d] < p->dims[d]) break;
            for (int k = 0; k < p->n_in; k++) off[k] -= p->st[k][d] * p->dims[d];
            idx[d] = 0;
        }
    }
}

static frt_status lg_run(const frt_step *s, frt_exec *x, lg_job *j) {
    const frt_value *in[3];
    frt_value *O = &x->values[s->out[0]];
    for (int k = 0; k < s->n_in; k++) {
        in[k] = &x->values[s->in[k]];
        j->in[k] = in[k]->data;
        j->es[k] = frt_dtype_size((frt_dtype)in[k]->dtype);
    }
    j->o = O->data;
    j->oes = frt_dtype_size((frt_dtype)O->dtype);
    if (O->numel == 0) return FRT_OK;
    if (!bc_plan_make(O, in, s->n_in, &j->p))
        return frt_step_fail(s, FRT_ERR_SHAPE, "input dims do not broadcast to the output");
    size_t L = j->p.dims[j->p.nd - 1];
    frt_ew_parallel(x->tp, (size_t)O->numel / L, L, lg_range, j);
    return FRT_OK;
}

/* ---- binary comparisons and logic ---------------------------------------------------------- */

enum { OP_EQ, OP_LT, OP_GT, OP_LE, OP_GE, OP_AND, OP_OR, OP_XOR };
static const char *const op_names[] = {"equal", "less", "greater", "less_equal", "greater_equal",
                                       "and", "or", "xor"};

typedef struct cmp_params {
    frt_cmp_fn fn;
} cmp_params;

static frt_status k_cmp(const frt_step *s, frt_exec *x) {
    const cmp_params *p = s->k.params;
    lg_job j;
    memset(&j, 0, sizeof j);
    j.cmp = p->fn;
    return lg_run(s, x, &j);
}

/* Checks the legacy opset-1 broadcast attributes (numpy-compatible unless an axis is given). */
static frt_status check_legacy_bcast(const frt_op_ctx *c) {
    if (c->opset < 7 && frt_attr_find(c->node, "axis") && frt_attr_int(c->node, "broadcast", 0))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED,
                           "legacy (opset < 7) broadcasting with an axis attribute");
    return FRT_OK;
}

static frt_status bin_infer(frt_op_ctx *c, int op) {
    frt_status st = frt_op_check_arity(c, 2, 2, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (!st) st = frt_op_check_input(c, 1, 0);
    if (!st) st = check_legacy_bcast(c);
    if (st) return st;
    const frt_value *a = c->in[0], *b = c->in[1];
    if (a->dtype == FRT_STRING || b->dtype == FRT_STRING)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unsupported: dtype string");
    if (a->dtype != b->dtype)
        return frt_op_fail(c, FRT_ERR_SHAPE, "inputs have different dtypes %s and %s",
                           frt_dtype_name(a->dtype), frt_dtype_name(b->dtype));
    if (op >= OP_AND) {
        if (a->dtype != FRT_BOOL)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (bool only)",
                               frt_dtype_name(a->dtype));
    } else {
        int t = cmp_type_index(a->dtype);
        if (t < 0 || (t == T_B8 && op != OP_EQ))
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unsupported: dtype %s",
                               frt_dtype_name(a->dtype));
    }
    int32_t rank;
    int64_t dims[FRT_MAX_RANK];
    if ((st = frt_broadcast_shape(c, a, b, &rank, dims))) return st;
    frt_op_set_shape(c->out[0], FRT_BOOL, rank, dims);
    return FRT_OK;
}

/* Kernel names, static: [op][dtype][isa] for comparisons. */
#define CN(o, d) {o "_" d, o "_" d "_avx2", o "_" d "_avx512"}
#define CN_ROW(o)                                                                                \
    {CN(o, "f32"), CN(o, "f64"), CN(o, "f16"), CN(o, "bf16"), CN(o, "i8"), CN(o, "i16"),         \
     CN(o, "i32"), CN(o, "i64"), CN(o, "u8"),  CN(o, "u16"),  CN(o, "u32"), CN(o, "u64"),        \
     CN(o, "bool")}
static const char *const cmp_knames[5][T_N][3] = {CN_ROW("equal"), CN_ROW("less"),
                                                  CN_ROW("greater"), CN_ROW("less_equal"),
                                                  CN_ROW("greater_equal")};

static frt_status bin_select(frt_op_ctx *c, frt_kernel *k, int op) {
    cmp_params *p = frt_arena_alloc(c->arena, sizeof *p, 16);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    int32_t dt = c->in[0]->dtype;
    if (op >= OP_AND) {
        if (dt != FRT_BOOL)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (bool only)",
                               frt_dtype_name(dt));
        static const frt_cmp_fn fns[3] = {and_b8, or_b8, xor_b8};
        p->fn = fns[op - OP_AND];
        k->name = op_names[op];
    } else {
        int t = cmp_type_index(dt);
        if (t < 0 || (t == T_B8 && op != OP_EQ))
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unsupported: dtype %s",
                               frt_dtype_name(dt));
        frt_isa isa = FRT_ISA_PORTABLE;
        if (t == T_F32) {
            const frt_logic_variant *v = frt_logic_variant_get(c->isa);
            p->fn = v->cmp_f32[op];
            isa = v->isa;
        } else {
            p->fn = t == T_B8 ? eq_b8 : cmp_loops[t][op];
        }
        k->name = cmp_knames[op][t][isa];
    }
    k->fn = k_cmp;
    k->params = p;
    return FRT_OK;
}

#define BIN_OP(Name, OP)                                                                         \
    static frt_status Name##_infer(frt_op_ctx *c) { return bin_infer(c, OP); }                  \
    static frt_status Name##_select(frt_op_ctx *c, frt_kernel *k) { return bin_select(c, k, OP); }
BIN_OP(equal, OP_EQ)
BIN_OP(less, OP_LT)
BIN_OP(greater, OP_GT)
BIN_OP(less_equal, OP_LE)
BIN_OP(greater_equal, OP_GE)
BIN_OP(and, OP_AND)
BIN_OP(or, OP_OR)
BIN_OP(xor, OP_XOR)

/* ---- Where ------------------------------------------------------------------------------- */

typedef struct where_params {
    frt_where_fn fn;
} where_params;

static frt_status k_where(const frt_step *s, frt_exec *x) {
    const where_params *p = s->k.params;
    lg_job j;
    memset(&j, 0, sizeof j);
    j.where = p->fn;
    return lg_run(s, x, &j);
}

static frt_status where_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 3, 3, 1, 1);
    for (int i = 0; !st && i < 3; i++) st = frt_op_check_input(c, i, 0);
    if (st) return st;
    const frt_value *cd = c->in[0], *a = c->in[1], *b = c->in[2];
    if (cd->dtype != FRT_BOOL)
        return frt_op_fail(c, FRT_ERR_SHAPE, "condition has dtype %s, expected bool",
                           frt_dtype_name(cd->dtype));
    if (a->dtype != b->dtype)
        return frt_op_fail(c, FRT_ERR_SHAPE, "X and Y have different dtypes %s and %s",
                           frt_dtype_name(a->dtype), frt_dtype_name(b->dtype));
    if (frt_dtype_size((frt_dtype)a->dtype) == 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unsupported: dtype %s",
                           frt_dtype_name(a->dtype));
    frt_value t;
    memset(&t, 0, sizeof t);
    if ((st = frt_broadcast_shape(c, a, b, &t.rank, t.dims))) return st;
    int32_t rank;
    int64_t dims[FRT_MAX_RANK];
    if ((st = frt_broadcast_shape(c, cd, &t, &rank, dims))) return st;
    frt_op_set_shape(c->out[0], a->dtype, rank, dims);
    return FRT_OK;
}

static frt_status where_select(frt_op_ctx *c, frt_kernel *k) {
    where_params *p = frt_arena_alloc(c->arena, sizeof *p, 16);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    switch (frt_dtype_size((frt_dtype)c->in[1]->dtype)) {
    case 1: p->fn = where8, k->name = "where_b8"; break;
    case 2: p->fn = where16, k->name = "where_b16"; break;
    case 4: {
        static const char *const names[3] = {"where_b32", "where_b32_avx2", "where_b32_avx512"};
        const frt_logic_variant *v = frt_logic_variant_get(c->isa);
        p->fn = v->where32;
        k->name = names[v->isa];
        break;
    }
    case 8: p->fn = where64, k->name = "where_b64"; break;
    default:
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unsupported: dtype %s",
                           frt_dtype_name(c->in[1]->dtype));
    }
    k->fn = k_where;
    k->params = p;
    return FRT_OK;
}

/* ---- unary: Not IsNaN IsInf ------------------------------------------------------------------ */

enum { U_NOT, U_ISNAN, U_ISINF };

typedef struct unary_params {
    int op;
    int32_t dtype;
    bool pos, neg; /* IsInf: which infinities count */
} unary_params;

typedef struct unary_job {
    const unary_params *p;
    const void *x;
    uint8_t *o;
} unary_job;

static void unary_range(void *ctx, size_t lo, size_t hi) {
    const unary_job *j = ctx;
    const unary_params *p = j->p;
    uint8_t *o = j->o;
    if (p->op == U_NOT) {
        const uint8_t *x = j->x;
        for (size_t i = lo; i < hi; i++) o[i] = x[i] == 0;
        return;
    }
    if (p->dtype == FRT_FLOAT32) { /* typed loops for the common case */
        const float *x = j->x;
        if (p->op == U_ISNAN) {
            for (size_t i = lo; i < hi; i++) o[i] = x[i] != x[i];
        } else {
            float pv = p->pos ? INFINITY : NAN, nv = p->neg ? -INFINITY : NAN;
            for (size_t i = lo; i < hi; i++) o[i] = (x[i] == pv) | (x[i] == nv);
        }
        return;
    }
    for (size_t i = lo; i < hi; i++) {
        double v = frt_ld_f64(p->dtype, j->x, (int64_t)i);
        o[i] = p->op == U_ISNAN ? v != v : (p->pos && v == INFINITY) || (p->neg && v == -INFINITY);
    }
}

static frt_status k_unary(const frt_step *s, frt_exec *x) {
    const frt_value *X = &x->values[s->in[0]];
    frt_value *O = &x->values[s->out[0]];
    unary_job j = {s->k.params, X->data, O->data};
    frt_ew_parallel(x->tp, (size_t)O->numel, 1, unary_range, &j);
    return FRT_OK;
}

static frt_status unary_check(frt_op_ctx *c, int op) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    int32_t dt = c->in[0]->dtype;
    if (op == U_NOT ? dt != FRT_BOOL : !frt_dtype_is_float(dt))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unsupported: dtype %s (%s)",
                           frt_dtype_name(dt), op == U_NOT ? "bool only" : "floating types only");
    return FRT_OK;
}

static frt_status unary_infer(frt_op_ctx *c, int op) {
    frt_status st = unary_check(c, op);
    if (st) return st;
    frt_op_set_shape(c->out[0], FRT_BOOL, c->in[0]->rank, c->in[0]->dims);
    return FRT_OK;
}

static frt_status unary_select(frt_op_ctx *c, frt_kernel *k, int op) {
    frt_status st = unary_check(c, op);
    if (st) return st;
    unary_params *p = frt_arena_alloc(c->arena, sizeof *p, 16);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->op = op;
    p->dtype = c->in[0]->dtype;
    p->pos = frt_attr_int(c->node, "detect_positive", 1) != 0;
    p->neg = frt_attr_int(c->node, "detect_negative", 1) != 0;
    static const char *const names[3] = {"not", "isnan", "isinf"};
    k->name = names[op];
    k->fn = k_unary;
    k->params = p;
    return FRT_OK;
}

#define UN_OP(Name, OP)                                                                          \
    static frt_status Name##_infer(frt_op_ctx *c) { return unary_infer(c, OP); }                \
    static frt_status Name##_select(frt_op_ctx *c, frt_kernel *k) {                              \
        return unary_select(c, k, OP);                                                           \
    }
UN_OP(not, U_NOT)
UN_OP(isnan, U_ISNAN)
UN_OP(isinf, U_ISINF)

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(logic, And, and_infer, and_select);
FRT_OP_IMPL(logic, Or, or_infer, or_select);
FRT_OP_IMPL(logic, Xor, xor_infer, xor_select);
FRT_OP_IMPL(logic, Not, not_infer, not_select);
FRT_OP_IMPL(logic, Equal, equal_infer, equal_select);
FRT_OP_IMPL(logic, Less, less_infer, less_select);
FRT_OP_IMPL(logic, Greater, greater_infer, greater_select);
FRT_OP_IMPL(logic, LessOrEqual, less_equal_infer, less_equal_select);
FRT_OP_IMPL(logic, GreaterOrEqual, greater_equal_infer, greater_equal_select);
FRT_OP_IMPL(logic, Where, where_infer, where_select);
FRT_OP_IMPL(logic, IsNaN, isnan_infer, isnan_select);
FRT_OP_IMPL(logic, IsInf, isinf_infer, isinf_select);
