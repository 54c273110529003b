/* Relu Clip Sigmoid Tanh Softmax LogSoftmax Hardmax.
 *
 * Relu, Clip: float32, int64, int32 typed; every other integer dtype, float64 and float16 through
 * one generic loop (integers compared as int64, floats in double); out = in's shape. Clip bounds:
 * opset < 11 from the float attributes min/max; opset >= 11 from the optional inputs 1 and 2 (one
 * element each, same dtype as the input), read at select when constant, else at every run. An
 * absent bound is no bound (+-inf for floats). If min > max every element becomes max (as
 * numpy.clip). NaN stays NaN.
 * Sigmoid, Tanh: float32; SIMD versions accurate to ~2e-7 relative (x86/activation_avx*.c).
 * Softmax, LogSoftmax, Hardmax: max-subtracted (stable); LogSoftmax = (x - max) - log(sum).
 *   opset < 13: input flattened to 2-D [prod(d[0..axis)), prod(d[axis..])] and the op taken over
 *               each row; axis default 1, range [-r, r].
 *   opset >= 13: along one axis (default -1) of [outer, A, inner]: contiguous rows when
 *               inner == 1, else a strided kernel that works on blocks of lanes across A.
 *   Float32 Softmax/LogSoftmax have typed (SIMD) loops; float64/float16 and Hardmax (1 at the
 *   first maximum, 0 elsewhere) run a portable loop in double.
 * Float32 kernel names end in the tier of their loops ("" portable, _avx2, _avx512), picked at
 * select from the frt_act_variant / frt_actp_variant tables by the context's ISA tier.
 * Every float kernel may run in place (FRT_K_INPLACE) and splits tensors of >= 32K elements into
 * 16K-element tasks over the thread pool.
 */
#include <math.h>
#include <string.h>

#include "dtype_util.h"
#include "op.h"
#include "x86/simd_act.h"
#include "x86/simd_elementwise.h"

/* ---- portable float loops ------------------------------------------------------------------ */

static void relu_f32_c(const float *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = 0.0f > x[i] ? 0.0f : x[i];
}

static void clip_f32_c(const float *x, float *y, size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        v = lo > v ? lo : v;
        y[i] = hi < v ? hi : v;
    }
}

static void sigmoid_f32_c(const float *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        if (v >= 0.0f) {
            y[i] = 1.0f / (1.0f + expf(-v));
        } else { /* also NaN */
            float e = expf(v);
            y[i] = e / (1.0f + e);
        }
    }
}

static void tanh_f32_c(const float *x, float *y, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = tanhf(x[i]);
}

static void softmax_rows_f32_c(const float *x, float *y, size_t rows, size_t len) {
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * len;
        float *yr = y + r * len;
        float m = xr[0], sum = 0.0f;
        for (size_t i = 1; i < len; i++) m = xr[i] > m ? xr[i] : m;
        for (size_t i = 0; i < len; i++) {
            float e = expf(xr[i] - m);
            yr[i] = e;
            sum += e;
        }
        float inv = 1.0f / sum;
        for (size_t i = 0; i < len; i++) yr[i] *= inv;
    }
}

static void vmax_f32_c(float *m, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++) m[i] = x[i] > m[i] ? x[i] : m[i];
}

static void expsub_acc_f32_c(const float *x, const float *m, float *y, float *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float e = expf(x[i] - m[i]);
        y[i] = e;
        s[i] += e;
    }
}

static void vmul_f32_c(float *y, const float *r, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] *= r[i];
}

/* A selective build keeps the sigmoid, tanh and softmax loops only when an op that reaches them
 * through this table is built (NULL otherwise): sigmoid for Sigmoid/Tanh and the RNNs (and a
 * FusedConv with a sigmoid, which conv.c refuses when it is NULL), tanh for Tanh and the RNNs,
 * the softmax loops (softmax_rows, vmax, expsub_acc, vmul) for Softmax, LogSoftmax, Hardmax and
 * Attention. */
#if FRT_OP_BUILT(Sigmoid) || FRT_OP_BUILT(Tanh) || FRT_OP_BUILT(LSTM) || FRT_OP_BUILT(GRU) || \
    FRT_OP_BUILT(RNN)
#define ACT_SIGMOID(f) f
#else
#define ACT_SIGMOID(f) NULL
#endif
#if FRT_OP_BUILT(Tanh) || FRT_OP_BUILT(LSTM) || FRT_OP_BUILT(GRU) || FRT_OP_BUILT(RNN)
#define ACT_TANH(f) f
#else
#define ACT_TANH(f) NULL
#endif
#if FRT_OP_BUILT(Softmax) || FRT_OP_BUILT(LogSoftmax) || FRT_OP_BUILT(Hardmax) || \
    FRT_OP_BUILT(Attention)
#define ACT_SOFTMAX(f) f
#else
#define ACT_SOFTMAX(f) NULL
#endif

/* Float32 loop variants, best tier first. */
static const frt_act_variant act_variants[] = {
#if FRT_HAVE_X86
#define X86_ACT(T, ISA)                                                                          \
    {ISA,                 "_" #T,           frt_relu_f32_##T, ACT_SIGMOID(frt_sigmoid_f32_##T),  \
     ACT_TANH(frt_tanh_f32_##T), frt_clip_f32_##T, ACT_SOFTMAX(frt_softmax_rows_f32_##T),        \
     ACT_SOFTMAX(frt_vmax_f32_##T), ACT_SOFTMAX(frt_expsub_acc_f32_##T),                         \
     ACT_SOFTMAX(frt_vmul_f32_##T)}
#if FRT_TIER_AVX512
    X86_ACT(avx512, FRT_ISA_AVX512),
#endif
#if FRT_TIER_AVX2
    X86_ACT(avx2, FRT_ISA_AVX2),
#endif
#undef X86_ACT
#endif
    {FRT_ISA_PORTABLE, "", relu_f32_c, ACT_SIGMOID(sigmoid_f32_c), ACT_TANH(tanh_f32_c), clip_f32_c,
     ACT_SOFTMAX(softmax_rows_f32_c), ACT_SOFTMAX(vmax_f32_c), ACT_SOFTMAX(expsub_acc_f32_c),
     ACT_SOFTMAX(vmul_f32_c)},
};

const frt_act_variant *frt_act_variant_get(frt_isa cap) {
    return FRT_PICK_VARIANT(act_variants, cap);
}

/* ---- unary kernels ------------------------------------------------------------------------- */

typedef struct un_params {
    frt_unary_fn f;    /* Relu, Sigmoid, Tanh */
    frt_clip_fn clip;  /* Clip */
    float lo, hi;      /* float Clip bounds known at select */
    int64_t ilo, ihi;  /* integer Clip bounds known at select */
    double dlo, dhi;   /* float64/float16 Clip bounds known at select */
    bool lo_run, hi_run; /* bound read from input 1 / 2 at run time */
} un_params;

typedef struct un_job {
    const un_params *p;
    const float *x;
    float *y;
    float lo, hi;
} un_job;

static void unary_range(void *ctx, size_t lo, size_t hi) {
    const un_job *j = ctx;
    j->p->f(j->x + lo, j->y + lo, hi - lo);
}

static void clip_range(void *ctx, size_t lo, size_t hi) {
    const un_job *j = ctx;
    j->p->clip(j->x + lo, j->y + lo, hi - lo, j->lo, j->hi);
}

static frt_status k_unary_f32(const frt_step *s, frt_exec *x) {
    const un_params *p = s->k.params;
    const frt_value *in = &x->values[s->in[0]];
    frt_value *out = &x->values[s->out[0]];
    size_t n = (size_t)out->numel;
    if (!x->tp || n < 2 * FRT_EW_CHUNK) {
        if (n) p->f(in->data, out->data, n);
        return FRT_OK;
    }
    un_job j = {p, in->data, out->data, 0, 0};
    frt_ew_parallel(x->tp, n, 1, unary_range, &j);
    return FRT_OK;
}

/* Reads a run-time Clip bound (input i, one element) as int64 or float. */
static frt_status bound_value(const frt_step *s, frt_exec *x, int i, const frt_value **v) {
    *v = &x->values[s->in[i]];
    if ((*v)->numel != 1 || !(*v)->data)
        return frt_step_fail(s, FRT_ERR_SHAPE, "Clip bound (input %d) must have one element", i);
    return FRT_OK;
}

static frt_status k_clip_f32(const frt_step *s, frt_exec *x) {
    const un_params *p = s->k.params;
    const frt_value *in = &x->values[s->in[0]], *bv;
    frt_value *out = &x->values[s->out[0]];
    float lo = p->lo, hi = p->hi;
    if (p->lo_run) {
        if (bound_value(s, x, 1, &bv)) return FRT_ERR_SHAPE;
        lo = *(const float *)bv->data;
    }
    if (p->hi_run) {
        if (bound_value(s, x, 2, &bv)) return FRT_ERR_SHAPE;
        hi = *(const float *)bv->data;
    }
    size_t n = (size_t)out->numel;
    if (!x->tp || n < 2 * FRT_EW_CHUNK) {
        if (n) p->clip(in->data, out->data, n, lo, hi);
        return FRT_OK;
    }
    un_job j = {p, in->data, out->data, lo, hi};
    frt_ew_parallel(x->tp, n, 1, clip_range, &j);
    return FRT_OK;
}

/* Integer Relu/Clip (rare; shape arithmetic): portable, single-threaded. */
#define INT_CLIP_KERNEL(NAME, T)                                                                 \
    static frt_status NAME(const frt_step *s, frt_exec *x) {                                     \
        const un_params *p = s->k.params;                                                        \
        const frt_value *in = &x->values[s->in[0]], *bv;                                         \
        frt_value *out = &x->values[s->out[0]];                                                  \
        int64_t lo = p->ilo, hi = p->ihi;                                                        \
        if (p->lo_run) {                                                                         \
            if (bound_value(s, x, 1, &bv)) return FRT_ERR_SHAPE;                                 \
            lo = frt_value_get_int(bv, 0);                                                       \
        }                                                                                        \
        if (p->hi_run) {                                                                         \
            if (bound_value(s, x, 2, &bv)) return FRT_ERR_SHAPE;                                 \
            hi = frt_value_get_int(bv, 0);                                                       \
        }                                                                                        \
        const T *a = in->data;                                                                   \
        T *o = out->data;                                                                        \
        for (int64_t i = 0; i < out->numel; i++) {                                               \
            int64_t v = a[i];                                                                    \
            v = v < lo ? lo : v;                                                                 \
            o[i] = (T)(v > hi ? hi : v);                                                         \
        }                                                                                        \
        return FRT_OK;                                                                           \
    }
INT_CLIP_KERNEL(k_clip_i64, int64_t)
INT_CLIP_KERNEL(k_clip_i32, int32_t)

/* Relu/Clip of the other dtypes (int8/16, unsigned, float64, float16): integers compared as
 * int64 (uint64 above INT64_MAX included only when no upper bound applies), floats in double
 * (NaN stays NaN). Portable, single-threaded. */
static frt_status k_clip_generic(const frt_step *s, frt_exec *x) {
    const un_params *p = s->k.params;
    const frt_value *in = &x->values[s->in[0]], *bv;
    frt_value *out = &x->values[s->out[0]];
    const int32_t dt = in->dtype;
    if (frt_dtype_is_float(dt)) {
        double lo = p->dlo, hi = p->dhi;
        if (p->lo_run) {
            if (bound_value(s, x, 1, &bv)) return FRT_ERR_SHAPE;
            lo = frt_ld_f64(dt, bv->data, 0);
        }
        if (p->hi_run) {
            if (bound_value(s, x, 2, &bv)) return FRT_ERR_SHAPE;
            hi = frt_ld_f64(dt, bv->data, 0);
        }
        for (int64_t i = 0; i < out->numel; i++) {
            double v = frt_ld_f64(dt, in->data, i);
            v = lo > v ? lo : v;
            frt_st_f64(dt, out->data, i, hi < v ? hi : v);
        }
        return FRT_OK;
    }
    int64_t lo = p->ilo, hi = p->ihi;
    if (p->lo_run) {
        if (bound_value(s, x, 1, &bv)) return FRT_ERR_SHAPE;
        lo = frt_ld_i64(dt, bv->data, 0);
    }
    if (p->hi_run) {
        if (bound_value(s, x, 2, &bv)) return FRT_ERR_SHAPE;
        hi = frt_ld_i64(dt, bv->data, 0);
    }
    for (int64_t i = 0; i < out->numel; i++) {
        int64_t v = frt_ld_i64(dt, in->data, i);
        if (dt == FRT_UINT64 && v < 0) { /* above INT64_MAX */
            if (hi != INT64_MAX) frt_st_i64(dt, out->data, i, hi < lo ? lo : hi);
            else frt_st_i64(dt, out->data, i, v);
            continue;
        }
        v = v < lo ? lo : v;
        frt_st_i64(dt, out->data, i, v > hi ? hi : v);
    }
    return FRT_OK;
}

/* ---- infer / select of the unary ops ------------------------------------------------------- */

/* ints_ok: every integer dtype, float64 and float16 too (Relu, Clip). */
static frt_status same_shape_infer(frt_op_ctx *c, bool ints_ok) {
    const frt_value *a = c->in[0];
    if (a->dtype != FRT_FLOAT32 &&
        !(ints_ok && (frt_dtype_is_int(a->dtype) || frt_dtype_is_float(a->dtype))))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (%s)",
                           frt_dtype_name(a->dtype),
                           ints_ok ? "float32, float64, float16, integers" : "float32");
    frt_op_set_shape(c->out[0], a->dtype, a->rank, a->dims);
    return FRT_OK;
}

static frt_status unary_infer(frt_op_ctx *c, bool ints_ok) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    return same_shape_infer(c, ints_ok);
}

static frt_status relu_infer(frt_op_ctx *c) { return unary_infer(c, true); }
static frt_status float_unary_infer(frt_op_ctx *c) { return unary_infer(c, false); }

static un_params *new_params(frt_op_ctx *c) {
    un_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    return p;
}

/* The dtypes of the generic clip kernel (every int and float type but float32, int32, int64): a
 * selective build whose trace saw none of them leaves it out (FRT_DT_BUILT, op.h). */
#define CLIP_GENERIC_BUILT                                                                        \
    (FRT_DT_BUILT(float16) || FRT_DT_BUILT(float64) || FRT_DT_BUILT(bfloat16) ||                   \
     FRT_DT_BUILT(int8) || FRT_DT_BUILT(int16) || FRT_DT_BUILT(uint8) || FRT_DT_BUILT(uint16) ||  \
     FRT_DT_BUILT(uint32) || FRT_DT_BUILT(uint64))

static frt_status relu_select(frt_op_ctx *c, frt_kernel *k) {
    un_params *p = new_params(c);
    if (!p) return FRT_ERR_NO_MEMORY;
    k->params = p;
    k->flags = FRT_K_INPLACE;
    switch (c->in[0]->dtype) {
    case FRT_FLOAT32: {
        static const char *const names[] = {"relu_f32", "relu_f32_avx2", "relu_f32_avx512"};
        const frt_act_variant *v = frt_act_variant_get(c->isa);
        p->f = v->relu;
        k->name = names[v->isa];
        k->fn = k_unary_f32;
        return FRT_OK;
    }
    case FRT_INT64:
        if (!FRT_DT_BUILT(int64)) return frt_op_dtype_missing(c, FRT_INT64);
        p->ilo = 0;
        p->ihi = INT64_MAX;
        k->name = "relu_i64";
        k->fn = k_clip_i64;
        return FRT_OK;
    case FRT_INT32:
        if (!FRT_DT_BUILT(int32)) return frt_op_dtype_missing(c, FRT_INT32);
        p->ilo = 0;
        p->ihi = INT32_MAX;
        k->name = "relu_i32";
        k->fn = k_clip_i32;
        return FRT_OK;
    }
    if (!frt_dtype_is_int(c->in[0]->dtype) && !frt_dtype_is_float(c->in[0]->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported",
                           frt_dtype_name(c->in[0]->dtype));
    if (!CLIP_GENERIC_BUILT) return frt_op_dtype_missing(c, c->in[0]->dtype);
    p->ilo = 0;
    p->ihi = INT64_MAX;
    p->dlo = 0;
    p->dhi = INFINITY;
    k->name = "relu_generic";
    k->fn = k_clip_generic;
    return FRT_OK;
}

static frt_status sigmoid_tanh_select(frt_op_ctx *c, frt_kernel *k, bool is_tanh) {
    if (c->in[0]->dtype != FRT_FLOAT32)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported",
                           frt_dtype_name(c->in[0]->dtype));
    un_params *p = new_params(c);
    if (!p) return FRT_ERR_NO_MEMORY;
    static const char *const names[2][3] = {
        {"sigmoid_f32", "sigmoid_f32_avx2", "sigmoid_f32_avx512"},
        {"tanh_f32", "tanh_f32_avx2", "tanh_f32_avx512"}};
    const frt_act_variant *v = frt_act_variant_get(c->isa);
    p->f = is_tanh ? v->tanh : v->sigmoid;
    k->name = names[is_tanh][v->isa];
    k->fn = k_unary_f32;
    k->params = p;
    k->flags = FRT_K_INPLACE;
    return FRT_OK;
}
static frt_status sigmoid_select(frt_op_ctx *c, frt_kernel *k) {
    return sigmoid_tanh_select(c, k, false);
}
static frt_status tanh_select(frt_op_ctx *c, frt_kernel *k) {
    return sigmoid_tanh_select(c, k, true);
}

/* ---- Clip ---------------------------------------------------------------------------------- */

static frt_status clip_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, c->opset < 11 ? 1 : 3, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    if (c->opset < 11 && !frt_dtype_is_float(c->in[0]->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported before opset 11",
                           frt_dtype_name(c->in[0]->dtype));
    for (int i = 1; i < c->n_in; i++) {
        const frt_value *b = c->in[i];
        if (!b) continue;
        if (b->dtype != c->in[0]->dtype)
            return frt_op_fail(c, FRT_ERR_SHAPE, "%s bound has dtype %s, input has %s",
                               i == 1 ? "min" : "max", frt_dtype_name(b->dtype),
                               frt_dtype_name(c->in[0]->dtype));
        if (b->numel >= 0 && b->numel != 1)
            return frt_op_fail(c, FRT_ERR_SHAPE, "%s bound must have one element, has %lld",
                               i == 1 ? "min" : "max", (long long)b->numel);
    }
    return same_shape_infer(c, true);
}

static frt_status clip_select(frt_op_ctx *c, frt_kernel *k) {
    int32_t dt = c->in[0]->dtype;
    un_params *p = new_params(c);
    if (!p) return FRT_ERR_NO_MEMORY;
    p->lo = -INFINITY;
    p->hi = INFINITY;
    p->ilo = dt == FRT_INT32 ? INT32_MIN : INT64_MIN;
    p->ihi = dt == FRT_INT32 ? INT32_MAX : INT64_MAX;
    p->dlo = -INFINITY;
    p->dhi = INFINITY;
    if (c->opset < 11) {
        p->lo = frt_attr_float(c->node, "min", -INFINITY);
        p->hi = frt_attr_float(c->node, "max", INFINITY);
        p->dlo = p->lo;
        p->dhi = p->hi;
    } else {
        for (int i = 1; i < c->n_in; i++) {
            const frt_value *b = c->in[i];
            if (!b) continue;
            if (!b->data || b->numel != 1) { /* computed at run time */
                if (i == 1) p->lo_run = true;
                else p->hi_run = true;
                continue;
            }
            if (dt == FRT_FLOAT32) {
                float v = *(const float *)b->data;
                if (i == 1) p->lo = v;
                else p->hi = v;
            } else if (frt_dtype_is_float(dt)) {
                double v = frt_ld_f64(dt, b->data, 0);
                if (i == 1) p->dlo = v;
                else p->dhi = v;
            } else {
                int64_t v = frt_ld_i64(dt, b->data, 0);
                if (i == 1) p->ilo = v;
                else p->ihi = v;
            }
        }
    }
    k->params = p;
    k->flags = FRT_K_INPLACE;
    switch (dt) {
    case FRT_FLOAT32: {
        static const char *const names[2][3] = {
            {"clip_f32", "clip_f32_avx2", "clip_f32_avx512"},
            {"clip_f32_relu", "clip_f32_relu_avx2", "clip_f32_relu_avx512"}};
        const frt_act_variant *v = frt_act_variant_get(c->isa);
        p->clip = v->clip;
        k->fn = k_clip_f32;
        k->name = names[0][v->isa];
        /* Clip(0, +inf) with constant bounds is Relu (Relu's select has the same NaN rules) */
        if (!p->lo_run && !p->hi_run && p->lo == 0.0f && !signbit(p->lo) && p->hi == INFINITY) {
            p->f = v->relu;
            k->name = names[1][v->isa];
            k->fn = k_unary_f32;
        }
        return FRT_OK;
    }
    case FRT_INT64:
        if (!FRT_DT_BUILT(int64)) return frt_op_dtype_missing(c, dt);
        k->fn = k_clip_i64;
        k->name = "clip_i64";
        return FRT_OK;
    case FRT_INT32:
        if (!FRT_DT_BUILT(int32)) return frt_op_dtype_missing(c, dt);
        k->fn = k_clip_i32;
        k->name = "clip_i32";
        return FRT_OK;
    }
    if (!frt_dtype_is_int(dt) && !frt_dtype_is_float(dt))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported", frt_dtype_name(dt));
    if (!CLIP_GENERIC_BUILT) return frt_op_dtype_missing(c, dt);
    k->fn = k_clip_generic;
    k->name = "clip_generic";
    return FRT_OK;
}

/* ---- Softmax ------------------------------------------------------------------------------- */

enum { SM_SOFTMAX = 0, SM_LOG = 1, SM_HARDMAX = 2 };

typedef struct sm_params {
    int64_t axis;  /* as given; normalized per run against the run-time rank */
    bool legacy;   /* opset < 13: flatten to 2-D at axis */
    int mode;      /* SM_* */
    void (*rows)(const float *x, float *y, size_t rows, size_t len);
    void (*lrows)(const float *x, float *y, size_t rows, size_t len);
    void (*vmax)(float *m, const float *x, size_t n);
    void (*expsub_acc)(const float *x, const float *m, float *y, float *s, size_t n);
    void (*vmul)(float *y, const float *r, size_t n);
} sm_params;

/* Splits dims into [outer, A, inner] for the node's semantics; legacy: inner is 1 and A is the
 * product from axis on. Returns false when axis is out of range for this rank. */
static bool sm_split(const sm_params *p, const frt_value *v, size_t *outer, size_t *a,
                     size_t *inner) {
    int r = v->rank;
    int64_t ax = p->axis < 0 ? p->axis + r : p->axis;
    if (ax < 0 || ax > r || (!p->legacy && ax == r)) return false;
    size_t o = 1, m = 1, in = 1;
    for (int i = 0; i < ax; i++) o *= (size_t)v->dims[i];
    if (p->legacy) {
        for (int i = (int)ax; i < r; i++) m *= (size_t)v->dims[i];
    } else {
        m = (size_t)v->dims[ax];
        for (int i = (int)ax + 1; i < r; i++) in *= (size_t)v->dims[i];
    }
    *outer = o;
    *a = m;
    *inner = in;
    return true;
}

typedef struct sm_job {
    const sm_params *p;
    const float *x;
    float *y;
    size_t a, inner, nblk;
} sm_job;

static void sm_rows_range(void *ctx, size_t lo, size_t hi) {
    const sm_job *j = ctx;
    j->p->rows(j->x + lo * j->a, j->y + lo * j->a, hi - lo, j->a);
}

#define SM_LANES 256
/* Unit u = (outer index, block of up to SM_LANES lanes of inner). */
static void sm_strided_range(void *ctx, size_t lo, size_t hi) {
    const sm_job *j = ctx;
    const sm_params *p = j->p;
    float m[SM_LANES], s[SM_LANES];
    for (size_t u = lo; u < hi; u++) {
        size_t o = u / j->nblk, j0 = (u % j->nblk) * SM_LANES;
        size_t w = j->inner - j0 < SM_LANES ? j->inner - j0 : SM_LANES;
        const float *xb = j->x + o * j->a * j->inner + j0;
        float *yb = j->y + o * j->a * j->inner + j0;
        memcpy(m, xb, w * sizeof(float));
        for (size_t k = 1; k < j->a; k++) p->vmax(m, xb + k * j->inner, w);
        memset(s, 0, w * sizeof(float));
        for (size_t k = 0; k < j->a; k++)
            p->expsub_acc(xb + k * j->inner, m, yb + k * j->inner, s, w);
        for (size_t i = 0; i < w; i++) s[i] = 1.0f / s[i];
        for (size_t k = 0; k < j->a; k++) p->vmul(yb + k * j->inner, s, w);
    }
}

static frt_status k_softmax(const frt_step *s, frt_exec *x) {
    const sm_params *p = s->k.params;
    const frt_value *in = &x->values[s->in[0]];
    frt_value *out = &x->values[s->out[0]];
    size_t outer, a, inner;
    if (!sm_split(p, in, &outer, &a, &inner))
        return frt_step_fail(s, FRT_ERR_SHAPE, "axis %lld out of range for rank %d",
                             (long long)p->axis, in->rank);
    if (out->numel == 0) return FRT_OK;
    sm_job j = {p, in->data, out->data, a, inner, 0};
    if (inner == 1) {
        if (!x->tp || (size_t)out->numel < 2 * FRT_EW_CHUNK)
            p->rows(in->data, out->data, outer, a);
        else
            frt_ew_parallel(x->tp, outer, a, sm_rows_range, &j);
        return FRT_OK;
    }
    j.nblk = (inner + SM_LANES - 1) / SM_LANES;
    frt_ew_parallel(x->tp, outer * j.nblk, a * (inner < SM_LANES ? inner : SM_LANES),
                    sm_strided_range, &j);
    return FRT_OK;
}

/* Float32 LogSoftmax over strided lanes: same [outer, A, inner] units as sm_strided_range. */
static void lsm_strided_range(void *ctx, size_t lo, size_t hi) {
    const sm_job *j = ctx;
    const sm_params *p = j->p;
    float m[SM_LANES], s[SM_LANES];
    for (size_t u = lo; u < hi; u++) {
        size_t o = u / j->nblk, j0 = (u % j->nblk) * SM_LANES;
        size_t w = j->inner - j0 < SM_LANES ? j->inner - j0 : SM_LANES;
        const float *xb = j->x + o * j->a * j->inner + j0;
        float *yb = j->y + o * j->a * j->inner + j0;
        memcpy(m, xb, w * sizeof(float));
        for (size_t k = 1; k < j->a; k++) p->vmax(m, xb + k * j->inner, w);
        memset(s, 0, w * sizeof(float));
        for (size_t k = 0; k < j->a; k++) /* y is scratch here: overwritten below */
            p->expsub_acc(xb + k * j->inner, m, yb + k * j->inner, s, w);
        for (size_t i = 0; i < w; i++) s[i] = logf(s[i]);
        for (size_t k = 0; k < j->a; k++) {
            const float *xk = xb + k * j->inner;
            float *yk = yb + k * j->inner;
            for (size_t i = 0; i < w; i++) yk[i] = (xk[i] - m[i]) - s[i];
        }
    }
}

static void lsm_rows_range(void *ctx, size_t lo, size_t hi) {
    const sm_job *j = ctx;
    j->p->lrows(j->x + lo * j->a, j->y + lo * j->a, hi - lo, j->a);
}

static frt_status k_logsoftmax(const frt_step *s, frt_exec *x) {
    const sm_params *p = s->k.params;
    const frt_value *in = &x->values[s->in[0]];
    frt_value *out = &x->values[s->out[0]];
    size_t outer, a, inner;
    if (!sm_split(p, in, &outer, &a, &inner))
        return frt_step_fail(s, FRT_ERR_SHAPE, "axis %lld out of range for rank %d",
                             (long long)p->axis, in->rank);
    if (out->numel == 0) return FRT_OK;
    sm_job j = {p, in->data, out->data, a, inner, 0};
    if (inner == 1) {
        frt_ew_parallel(x->tp, outer, a, lsm_rows_range, &j);
        return FRT_OK;
    }
    j.nblk = (inner + SM_LANES - 1) / SM_LANES;
    frt_ew_parallel(x->tp, outer * j.nblk, a * (inner < SM_LANES ? inner : SM_LANES),
                    lsm_strided_range, &j);
    return FRT_OK;
}

/* Softmax / LogSoftmax of any float dtype in double, and Hardmax of any float dtype (1 at the
 * first maximum along the axis, 0 elsewhere; NaN never is a maximum unless all are NaN, then the
 * first element). Portable, single-threaded. */
static frt_status k_softmax_generic(const frt_step *s, frt_exec *x) {
    const sm_params *p = s->k.params;
    const frt_value *in = &x->values[s->in[0]];
    frt_value *out = &x->values[s->out[0]];
    size_t outer, a, inner;
    if (!sm_split(p, in, &outer, &a, &inner))
        return frt_step_fail(s, FRT_ERR_SHAPE, "axis %lld out of range for rank %d",
                             (long long)p->axis, in->rank);
    const int32_t dt = in->dtype;
    for (size_t o = 0; o < outer; o++)
        for (size_t i = 0; i < inner; i++) {
            const int64_t b = (int64_t)(o * a * inner + i), st = (int64_t)inner;
            if (a == 0) continue;
            size_t arg = 0;
            double m = frt_ld_f64(dt, in->data, b);
            for (size_t k = 1; k < a; k++) {
                double v = frt_ld_f64(dt, in->data, b + (int64_t)k * st);
                if (v > m || (m != m && v == v)) {
                    m = v;
                    arg = k;
                }
            }
            if (p->mode == SM_HARDMAX) {
                for (size_t k = 0; k < a; k++)
                    frt_st_f64(dt, out->data, b + (int64_t)k * st, k == arg ? 1.0 : 0.0);
                continue;
            }
            double sum = 0;
            for (size_t k = 0; k < a; k++)
                sum += exp(frt_ld_f64(dt, in->data, b + (int64_t)k * st) - m);
            const double ls = log(sum), inv = 1.0 / sum;
            for (size_t k = 0; k < a; k++) {
                double d = frt_ld_f64(dt, in->data, b + (int64_t)k * st) - m;
                frt_st_f64(dt, out->data, b + (int64_t)k * st,
                           p->mode == SM_LOG ? d - ls : exp(d) * inv);
            }
        }
    return FRT_OK;
}

static frt_status softmax_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    const frt_value *a = c->in[0];
    if (!frt_dtype_is_float(a->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (float32, float64, "
                           "float16)", frt_dtype_name(a->dtype));
    bool legacy = c->opset < 13;
    int64_t axis = frt_attr_int(c->node, "axis", legacy ? 1 : -1);
    if (a->rank >= 0) {
        int64_t r = a->rank, ax = axis < 0 ? axis + r : axis;
        if (ax < 0 || ax > r || (!legacy && ax == r))
            return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d",
                               (long long)axis, a->rank);
    }
    frt_op_set_shape(c->out[0], a->dtype, a->rank, a->dims);
    return FRT_OK;
}

static frt_status softmax_select_mode(frt_op_ctx *c, frt_kernel *k, int mode) {
    const frt_value *a = c->in[0];
    if (!frt_dtype_is_float(a->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported",
                           frt_dtype_name(a->dtype));
    sm_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->legacy = c->opset < 13;
    p->mode = mode;
    p->axis = frt_attr_int(c->node, "axis", p->legacy ? 1 : -1);
    k->params = p;
    k->flags = FRT_K_INPLACE;
    if (a->dtype != FRT_FLOAT32 || mode == SM_HARDMAX) {
        static const char *const gnames[3] = {"softmax_generic", "logsoftmax_generic",
                                              "hardmax"};
        k->name = gnames[mode];
        k->fn = k_softmax_generic;
        return FRT_OK;
    }
    const frt_act_variant *v = frt_act_variant_get(c->isa);
    p->rows = v->softmax_rows;
    p->lrows = frt_actp_variant_get(c->isa)->logsoftmax_rows;
    p->vmax = v->vmax;
    p->expsub_acc = v->expsub_acc;
    p->vmul = v->vmul;
    /* rows when the reduced block is known to be contiguous: legacy, or the last axis */
    bool rows = p->legacy || p->axis == -1 || (a->rank >= 0 && p->axis == a->rank - 1);
    if (!rows && a->rank >= 0) { /* trailing dims known to be 1 */
        int64_t ax = p->axis < 0 ? p->axis + a->rank : p->axis;
        rows = true;
        for (int i = (int)ax + 1; i < a->rank; i++)
            if (a->dims[i] != 1) rows = false;
    }
    static const char *const names[2][3][3] = {
        {{"softmax_f32_2d", "softmax_f32_2d_avx2", "softmax_f32_2d_avx512"},
         {"softmax_f32_rows", "softmax_f32_rows_avx2", "softmax_f32_rows_avx512"},
         {"softmax_f32_strided", "softmax_f32_strided_avx2", "softmax_f32_strided_avx512"}},
        {{"logsoftmax_f32_2d", "logsoftmax_f32_2d_avx2", "logsoftmax_f32_2d_avx512"},
         {"logsoftmax_f32_rows", "logsoftmax_f32_rows_avx2", "logsoftmax_f32_rows_avx512"},
         {"logsoftmax_f32_strided", "logsoftmax_f32_strided_avx2",
          "logsoftmax_f32_strided_avx512"}}};
    k->name = names[mode][!rows ? 2 : p->legacy ? 0 : 1][v->isa];
    /* one function per mode: inner == 1 takes the row path at run time */
    k->fn = mode == SM_LOG ? k_logsoftmax : k_softmax;
    return FRT_OK;
}

static frt_status softmax_select(frt_op_ctx *c, frt_kernel *k) {
    return softmax_select_mode(c, k, SM_SOFTMAX);
}
static frt_status logsoftmax_select(frt_op_ctx *c, frt_kernel *k) {
    return softmax_select_mode(c, k, SM_LOG);
}
static frt_status hardmax_select(frt_op_ctx *c, frt_kernel *k) {
    return softmax_select_mode(c, k, SM_HARDMAX);
}

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(activation, Relu, relu_infer, relu_select);
FRT_OP_IMPL(activation, Clip, clip_infer, clip_select);
FRT_OP_IMPL(activation, Sigmoid, float_unary_infer, sigmoid_select);
FRT_OP_IMPL(activation, Tanh, float_unary_infer, tanh_select);
FRT_OP_IMPL(activation, Softmax, softmax_infer, softmax_select);
FRT_OP_IMPL(activation, LogSoftmax, softmax_infer, logsoftmax_select);
FRT_OP_IMPL(activation, Hardmax, softmax_infer, hardmax_select);

/* ---- ahead-of-time programs (src/ops/aot.h) ------------------------------------------------ */

#include "aot.h"
#if FRT_AOT_SAVE || FRT_AOT_LOAD
/* float32 Relu / Sigmoid / Tanh (k_unary_f32) and Clip (k_clip_f32, or k_unary_f32 with relu):
 * kernel, the tier of the act_variants row its loop came from, which loop, Clip's bounds. */
enum { UN_K_UNARY = 0, UN_K_CLIP = 1 };
enum { UN_RELU = 0, UN_SIGMOID = 1, UN_TANH = 2, UN_CLIP = 3 };
#endif

#if FRT_AOT_SAVE
frt_status frt_aot_save_unary(const frt_step *s, frt_aot_w *w) {
    const un_params *p = s->k.params;
    int kern = s->k.fn == k_unary_f32 ? UN_K_UNARY : s->k.fn == k_clip_f32 ? UN_K_CLIP : -1;
    if (kern < 0 || !p) return frt_aot_unsupported(s, "only the float32 kernels are written");
    for (size_t i = 0; i < sizeof act_variants / sizeof *act_variants; i++) {
        const frt_act_variant *v = &act_variants[i];
        int which = kern == UN_K_CLIP ? (p->clip == v->clip ? UN_CLIP : -1)
                    : p->f == v->relu ? UN_RELU : p->f == v->sigmoid ? UN_SIGMOID
                    : p->f == v->tanh ? UN_TANH : -1;
        if (which < 0 || (kern == UN_K_UNARY && !p->f)) continue;
        frt_aot_put_i32(w, kern);
        frt_aot_put_i32(w, (int32_t)v->isa);
        frt_aot_put_i32(w, which);
        frt_aot_put_f32(w, p->lo);
        frt_aot_put_f32(w, p->hi);
        frt_aot_put_i32(w, p->lo_run);
        frt_aot_put_i32(w, p->hi_run);
        return FRT_OK;
    }
    return frt_aot_unsupported(s, "loop not in the activation table");
}
#endif

#if FRT_AOT_LOAD
frt_status frt_aot_load_unary(frt_aot_r *r, frt_isa isa, const frt_step *s,
                              const frt_value *values, frt_kernel *k) {
    int kern = frt_aot_int_in(r, UN_K_UNARY, UN_K_CLIP);
    frt_isa vi = (frt_isa)frt_aot_int_in(r, FRT_ISA_PORTABLE, (int32_t)isa); /* never above it */
    int which = frt_aot_int_in(r, UN_RELU, UN_CLIP);
    un_params *p = frt_aot_params(r, sizeof *p);
    if (!p) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    p->lo = frt_aot_f32(r);
    p->hi = frt_aot_f32(r);
    p->lo_run = frt_aot_int_in(r, 0, 1);
    p->hi_run = frt_aot_int_in(r, 0, 1);
    if (r->bad) return FRT_ERR_MALFORMED;
    if ((kern == UN_K_CLIP) != (which == UN_CLIP) ||
        (kern == UN_K_UNARY && (p->lo_run || p->hi_run)))
        return frt_error(FRT_ERR_MALFORMED, "activation parameters are inconsistent");
    if (s->n_in < 1 || s->in[0] < 0 || values[s->in[0]].dtype != FRT_FLOAT32 ||
        (p->lo_run && (s->n_in < 2 || s->in[1] < 0)) ||
        (p->hi_run && (s->n_in < 3 || s->in[2] < 0)))
        return frt_error(FRT_ERR_MALFORMED, "activation step does not fit its kernel");
    const frt_value *in = &values[s->in[0]], *out = &values[s->out[0]];
    if (s->n_out != 1 || out->dtype != FRT_FLOAT32 || out->numel != in->numel)
        return frt_error(FRT_ERR_MALFORMED, "activation step does not fit its values");
    for (int i = 1; i <= 2; i++)
        if ((i == 1 ? p->lo_run : p->hi_run) &&
            (values[s->in[i]].dtype != FRT_FLOAT32 || values[s->in[i]].numel != 1))
            return frt_error(FRT_ERR_MALFORMED, "activation step does not fit its values");
    const frt_act_variant *v = frt_act_variant_get(vi);
    if (v->isa != vi)
        return frt_error(FRT_ERR_UNSUPPORTED, "activation loops of tier %s not in this build",
                         frt_isa_name(vi));
    p->f = which == UN_RELU      ? v->relu
           : which == UN_SIGMOID ? v->sigmoid
           : which == UN_TANH    ? v->tanh
                                 : NULL;
    p->clip = which == UN_CLIP ? v->clip : NULL;
    if (!p->f && !p->clip)
        return frt_error(FRT_ERR_UNSUPPORTED, "activation loop %d not in this build", which);
    k->fn = kern == UN_K_CLIP ? k_clip_f32 : k_unary_f32;
    k->params = p;
    k->flags = FRT_K_INPLACE;
    return FRT_OK;
}
#endif
