/* Quantized ops: QuantizeLinear DequantizeLinear DynamicQuantizeLinear MatMulInteger ConvInteger
 * QLinearMatMul QLinearConv.
 *
 * Quantized values are 8-bit (uint8 or int8; QuantizeLinear/DequantizeLinear also 16-bit and
 * int32 where their opsets allow). Scales and zero points are read when the kernel runs (they may
 * be graph inputs): a scale or zero point is per tensor (a scalar or one element) or a 1-D tensor
 * along one axis (QuantizeLinear/DequantizeLinear: attribute axis; MatMul: rows of A / columns
 * of B; Conv: output channels of W).
 *
 * Rounding is to nearest with ties to even (nearbyintf in the default rounding mode), then the
 * zero point is added and the result saturated to the output type:
 *   QuantizeLinear    y = sat(rint(x / scale) + zp)
 *   DequantizeLinear  y = (x - zp) * scale
 *   Integer products  acc = sum (a - a_zp) (b - b_zp) in 32 bits (wrapping, as ONNX Runtime)
 *   QLinear*          y = sat(rint(acc * (a_scale * b_scale / y_scale)) + y_zp), the multiplier
 *                     in float as ONNX Runtime computes it
 * The integer products run on int16 operands with their zero points subtracted (conv: im2col),
 * B packed in row pairs, through a variant table (frt_qgemm_fn: portable, AVX2 VPMADDWD).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "conv.h"
#include "dtype_util.h"
#include "op.h"

/* ---------------------------------------------------------------------------------------------- */
/* Shared helpers                                                                                  */
/* ---------------------------------------------------------------------------------------------- */

static bool is_q8(int32_t t) { return t == FRT_UINT8 || t == FRT_INT8; }

static int64_t prod_range(const int64_t *dims, int lo, int hi) {
    int64_t p = 1;
    for (int i = lo; i < hi; i++) p *= dims[i];
    return p;
}

/* Saturation range of a quantized dtype (0 for other dtypes). */
static bool q_range(int32_t t, int64_t *lo, int64_t *hi) {
    switch (t) {
    case FRT_UINT8: *lo = 0; *hi = 255; return true;
    case FRT_INT8: *lo = -128; *hi = 127; return true;
    case FRT_UINT16: *lo = 0; *hi = 65535; return true;
    case FRT_INT16: *lo = -32768; *hi = 32767; return true;
    case FRT_INT32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    default: *lo = *hi = 0; return false;
    }
}

/* rint(v) + zp saturated to [lo, hi]; v may be NaN (-> zp, as a cast of 0) or huge. */
static inline int64_t q_round(float v, int64_t zp, int64_t lo, int64_t hi) {
    float r = nearbyintf(v);
    if (r != r) r = 0;
    double q = (double)r + (double)zp;
    return q <= (double)lo ? lo : q >= (double)hi ? hi : (int64_t)q;
}

static inline float ld_scale(const frt_value *v, int64_t i) {
    return v->dtype == FRT_FLOAT32 ? ((const float *)v->data)[i]
                                   : (float)frt_ld_f64(v->dtype, v->data, i);
}

/* Number of elements of a per-tensor or 1-D parameter v (scale / zero point): 1 for a scalar or
 * a one-element tensor; otherwise its length, which must be n (n < 0: not known yet). */
static frt_status qparam_check(const frt_op_ctx *c, int i, const char *what, int64_t n,
                               const char *along, bool allow_vec) {
    const frt_value *v = i < c->n_in ? c->in[i] : NULL;
    if (!v || v->rank < 0) return FRT_OK;
    int64_t len = v->rank == 0 ? 1 : v->rank == 1 ? v->dims[0] : -2;
    if (len == 1 || len == -1) return FRT_OK;
    if (len == -2 || !allow_vec)
        return frt_op_fail(c, FRT_ERR_SHAPE, "%s must be a scalar%s%s, has rank %d", what,
                           allow_vec ? " or 1-D along " : "", allow_vec ? along : "", v->rank);
    if (n >= 0 && len != n)
        return frt_op_fail(c, FRT_ERR_SHAPE, "%s has %lld elements, %s has %lld", what,
                           (long long)len, along, (long long)n);
    return FRT_OK;
}

/* Run-time twin of qparam_check: v (may be NULL) has 1 element or exactly n. */
static frt_status qparam_run(const frt_step *s, const frt_value *v, const char *what, int64_t n) {
    if (!v || v->numel == 1 || (v->rank == 1 && v->numel == n)) return FRT_OK;
    return frt_step_fail(s, FRT_ERR_SHAPE, "%s has %lld elements (1 or %lld expected)", what,
                         (long long)v->numel, (long long)n);
}

static frt_status check_scale_dtype(const frt_op_ctx *c, int i) {
    frt_status st = frt_op_check_input(c, i, 0);
    if (st) return st;
    int32_t t = c->in[i]->dtype;
    if (t != FRT_FLOAT32 && t != FRT_FLOAT16)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "scale (input %d) has dtype %s (float32 or "
                           "float16 supported)", i, frt_dtype_name((frt_dtype)t));
    return FRT_OK;
}

static frt_status check_q8(const frt_op_ctx *c, int i, const char *what) {
    frt_status st = frt_op_check_input(c, i, 0);
    if (st) return st;
    if (!is_q8(c->in[i]->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "%s has dtype %s (uint8 or int8 supported)",
                           what, frt_dtype_name((frt_dtype)c->in[i]->dtype));
    return FRT_OK;
}

/* Optional zero point i: absent is fine; present must have dtype dt. */
static frt_status check_zp(const frt_op_ctx *c, int i, int32_t dt, const char *what) {
    if (i >= c->n_in || !c->in[i]) return FRT_OK;
    if (c->in[i]->dtype != dt)
        return frt_op_fail(c, FRT_ERR_SHAPE, "%s has dtype %s, its tensor has %s", what,
                           frt_dtype_name((frt_dtype)c->in[i]->dtype), frt_dtype_name((frt_dtype)dt));
    return FRT_OK;
}

static inline const frt_value *opt_in(const frt_step *s, const frt_exec *x, int i) {
    return i < s->n_in && s->in[i] >= 0 ? &x->values[s->in[i]] : NULL;
}

/* Zero point element i of v (NULL: 0); a one-element v is per tensor. */
static inline int32_t zp_at(const frt_value *v, int64_t i) {
    if (!v) return 0;
    return (int32_t)frt_ld_i64(v->dtype, v->data, v->numel == 1 ? 0 : i);
}

/* ---------------------------------------------------------------------------------------------- */
/* QuantizeLinear, DequantizeLinear                                                                */
/* ---------------------------------------------------------------------------------------------- */

typedef struct qdq_params {
    int64_t axis;  /* as given (opset >= 13), 1 otherwise */
    int32_t out_dtype;
} qdq_params;

/* Axis a per-axis scale runs along, for x of rank r; -1 when the parameters are per tensor (a
 * scalar or one-element scale, or opset < 13). The attribute is ignored for per-tensor scales. */
static frt_status qdq_axis(const frt_op_ctx *c, int rank, int *axis) {
    *axis = -1;
    const frt_value *sc = c->in[1];
    bool per_tensor = sc->rank == 0 || (sc->rank == 1 && sc->dims[0] == 1);
    if (c->opset < 13 || rank < 0 || per_tensor) return FRT_OK;
    int64_t a = frt_attr_int(c->node, "axis", 1);
    *axis = frt_norm_axis(a, rank);
    if (*axis < 0 && sc->rank == 1 && sc->dims[0] > 1)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d", (long long)a,
                           rank);
    return FRT_OK;
}

static frt_status qdq_common(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 3, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0)) || (st = frt_op_check_input(c, 1, 0))) return st;
    if (frt_attr_int(c->node, "block_size", 0) != 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "blocked quantization (block_size) is not "
                           "supported");
    const frt_value *x = c->in[0];
    int axis;
    if ((st = qdq_axis(c, x->rank, &axis))) return st;
    int64_t n = axis >= 0 ? x->dims[axis] : -1;
    bool vec = c->opset >= 13;
    if ((st = qparam_check(c, 1, "scale", n, "the axis", vec)) ||
        (st = qparam_check(c, 2, "zero point", n, "the axis", vec)))
        return st;
    return FRT_OK;
}

static frt_status quantize_infer(frt_op_ctx *c) {
    frt_status st = qdq_common(c);
    if (st || (st = check_scale_dtype(c, 1))) return st;
    const frt_value *x = c->in[0];
    if (x->dtype != FRT_FLOAT32 && x->dtype != FRT_FLOAT16 && x->dtype != FRT_INT32)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "x has dtype %s (float32, float16 or int32 "
                           "supported)", frt_dtype_name((frt_dtype)x->dtype));
    int32_t ot = FRT_UINT8;
    if (c->n_in > 2 && c->in[2]) ot = c->in[2]->dtype;
    else if (c->opset >= 21) ot = (int32_t)frt_attr_int(c->node, "output_dtype", FRT_UINT8);
    int64_t lo, hi;
    if (!q_range(ot, &lo, &hi) || ot == FRT_INT32)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "quantizing to %s is not supported (uint8, int8, "
                           "uint16, int16)", frt_dtype_name((frt_dtype)ot));
    frt_op_set_shape(c->out[0], ot, x->rank, x->rank >= 0 ? x->dims : NULL);
    return FRT_OK;
}

/* The loop of QuantizeLinear and DequantizeLinear: x viewed as [outer, C, inner] with the
 * parameters indexed by C (C = 1 for per-tensor). */
static void qdq_view(const frt_value *xv, int64_t axis, const frt_value *scale, int64_t *outer,
                     int64_t *C, int64_t *inner) {
    int a = scale->numel == 1 || xv->rank == 0 ? -1 : frt_norm_axis(axis, xv->rank);
    if (a < 0) {
        *outer = 1;
        *C = 1;
        *inner = xv->numel;
        return;
    }
    *outer = prod_range(xv->dims, 0, a);
    *C = xv->dims[a];
    *inner = prod_range(xv->dims, a + 1, xv->rank);
}

static frt_status quantize_kernel(const frt_step *s, frt_exec *x) {
    const qdq_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *sc = &x->values[s->in[1]], *zp = opt_in(s, x, 2);
    frt_value *y = &x->values[s->out[0]];
    int64_t outer, C, inner;
    qdq_view(xv, p->axis, sc, &outer, &C, &inner);
    frt_status st;
    if ((st = qparam_run(s, sc, "scale", C)) || (st = qparam_run(s, zp, "zero point", C))) return st;
    int64_t lo, hi;
    q_range(p->out_dtype, &lo, &hi);
    int32_t ot = p->out_dtype;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t ch = 0; ch < C; ch++) {
            float scale = ld_scale(sc, sc->numel == 1 ? 0 : ch);
            int32_t z = zp_at(zp, ch);
            int64_t base = (o * C + ch) * inner;
            if (xv->dtype == FRT_FLOAT32 && ot == FRT_UINT8) {
                const float *xs = (const float *)xv->data + base;
                uint8_t *yd = (uint8_t *)y->data + base;
                for (int64_t i = 0; i < inner; i++) yd[i] = (uint8_t)q_round(xs[i] / scale, z, lo, hi);
            } else if (xv->dtype == FRT_FLOAT32 && ot == FRT_INT8) {
                const float *xs = (const float *)xv->data + base;
                int8_t *yd = (int8_t *)y->data + base;
                for (int64_t i = 0; i < inner; i++) yd[i] = (int8_t)q_round(xs[i] / scale, z, lo, hi);
            } else {
                for (int64_t i = base; i < base + inner; i++) {
                    float v = (float)frt_ld_f64(xv->dtype, xv->data, i);
                    frt_st_i64(ot, y->data, i, q_round(v / scale, z, lo, hi));
                }
            }
        }
    return FRT_OK;
}

static frt_status qdq_select(frt_op_ctx *c, frt_kernel *k, const char *name, frt_kernel_fn fn) {
    qdq_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    /* before opset 13 parameters are per tensor: no axis (a longer scale fails at run time) */
    p->axis = c->opset >= 13 ? frt_attr_int(c->node, "axis", 1) : INT64_MAX;
    p->out_dtype = c->out[0]->dtype;
    k->name = name;
    k->fn = fn;
    k->params = p;
    return FRT_OK;
}

static frt_status quantize_select(frt_op_ctx *c, frt_kernel *k) {
    return qdq_select(c, k, "quantize_linear", quantize_kernel);
}

static frt_status dequantize_infer(frt_op_ctx *c) {
    frt_status st = qdq_common(c);
    if (st || (st = check_scale_dtype(c, 1))) return st;
    const frt_value *x = c->in[0];
    int64_t lo, hi;
    if (!q_range(x->dtype, &lo, &hi))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "x has dtype %s (uint8, int8, uint16, int16 or "
                           "int32 supported)", frt_dtype_name((frt_dtype)x->dtype));
    if ((st = check_zp(c, 2, x->dtype, "zero point"))) return st;
    frt_op_set_shape(c->out[0], c->in[1]->dtype, x->rank, x->rank >= 0 ? x->dims : NULL);
    return FRT_OK;
}

static frt_status dequantize_kernel(const frt_step *s, frt_exec *x) {
    const qdq_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]], *sc = &x->values[s->in[1]], *zp = opt_in(s, x, 2);
    frt_value *y = &x->values[s->out[0]];
    int64_t outer, C, inner;
    qdq_view(xv, p->axis, sc, &outer, &C, &inner);
    frt_status st;
    if ((st = qparam_run(s, sc, "scale", C)) || (st = qparam_run(s, zp, "zero point", C))) return st;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t ch = 0; ch < C; ch++) {
            float scale = ld_scale(sc, sc->numel == 1 ? 0 : ch);
            int64_t z = zp_at(zp, ch);
            int64_t base = (o * C + ch) * inner;
            if (xv->dtype == FRT_UINT8 && p->out_dtype == FRT_FLOAT32) {
                const uint8_t *xs = (const uint8_t *)xv->data + base;
                float *yd = (float *)y->data + base;
                for (int64_t i = 0; i < inner; i++) yd[i] = (float)((int32_t)xs[i] - (int32_t)z) * scale;
            } else if (xv->dtype == FRT_INT8 && p->out_dtype == FRT_FLOAT32) {
                const int8_t *xs = (const int8_t *)xv->data + base;
                float *yd = (float *)y->data + base;
                for (int64_t i = 0; i < inner; i++) yd[i] = (float)((int32_t)xs[i] - (int32_t)z) * scale;
            } else {
                for (int64_t i = base; i < base + inner; i++) {
                    int64_t q = frt_ld_i64(xv->dtype, xv->data, i) - z;
                    frt_st_f64(p->out_dtype, y->data, i, (double)((float)q * scale));
                }
            }
        }
    return FRT_OK;
}

static frt_status dequantize_select(frt_op_ctx *c, frt_kernel *k) {
    return qdq_select(c, k, "dequantize_linear", dequantize_kernel);
}

/* ---------------------------------------------------------------------------------------------- */
/* DynamicQuantizeLinear                                                                           */
/* ---------------------------------------------------------------------------------------------- */

/* x float32 -> y uint8 (x's shape), y_scale float32 scalar, y_zero_point uint8 scalar:
 *   lo = min(0, min x), hi = max(0, max x), scale = (hi - lo) / 255 (1 when hi == lo),
 *   zp = sat(rint(-lo / scale)), y = sat(rint(x / scale) + zp). */
static frt_status dynq_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 3, 3);
    if (st || (st = frt_op_check_input(c, 0, FRT_FLOAT32))) return st;
    const frt_value *x = c->in[0];
    frt_op_set_shape(c->out[0], FRT_UINT8, x->rank, x->rank >= 0 ? x->dims : NULL);
    frt_op_set_shape(c->out[1], FRT_FLOAT32, 0, NULL);
    frt_op_set_shape(c->out[2], FRT_UINT8, 0, NULL);
    return FRT_OK;
}

static frt_status dynq_kernel(const frt_step *s, frt_exec *x) {
    const frt_value *xv = &x->values[s->in[0]];
    const float *xs = xv->data;
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < xv->numel; i++) {
        float v = xs[i];
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    if (isinf(lo) || isinf(hi))
        return frt_step_fail(s, FRT_ERR_RUNTIME, "x contains an infinite value: no finite scale");
    float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    int64_t zp = q_round((0.0f - lo) / scale, 0, 0, 255);
    uint8_t *y = x->values[s->out[0]].data;
    for (int64_t i = 0; i < xv->numel; i++) y[i] = (uint8_t)q_round(xs[i] / scale, zp, 0, 255);
    if (s->out[1] >= 0) *(float *)x->values[s->out[1]].data = scale;
    if (s->out[2] >= 0) *(uint8_t *)x->values[s->out[2]].data = (uint8_t)zp;
    return FRT_OK;
}

static frt_status dynq_select(frt_op_ctx *c, frt_kernel *k) {
    k->name = "dynamic_quantize_linear";
    k->fn = dynq_kernel;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Integer matrix products: MatMulInteger, QLinearMatMul                                           */
/* ---------------------------------------------------------------------------------------------- */

/* The integer product at the heart of MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv:
 *   C[M, N] (int32, row stride ldc) = A[M, 2*K2] (int16, row stride lda) x B[2*K2, N],
 * B packed in pairs of rows: Bp[(k2*N + j)*2 + h] = B[2*k2 + h][j] (an odd K is padded with a
 * zero row, A with a zero column). Operands are 8-bit values minus their zero points (|v| <= 255);
 * sums wrap in 32 bits. */
typedef void (*frt_qgemm_fn)(int64_t M, int64_t N, int64_t K2, const int16_t *A, int64_t lda,
                             const int16_t *Bp, int32_t *C, int64_t ldc);
#if FRT_HAVE_X86
void frt_qgemm_i16_avx2(int64_t M, int64_t N, int64_t K2, const int16_t *A, int64_t lda,
                        const int16_t *Bp, int32_t *C, int64_t ldc); /* x86/quant_avx2.c */
#endif

static void qgemm_portable(int64_t M, int64_t N, int64_t K2, const int16_t *A, int64_t lda,
                           const int16_t *Bp, int32_t *C, int64_t ldc) {
    for (int64_t i = 0; i < M; i++) {
        uint32_t *c = (uint32_t *)(C + i * ldc); /* int32 storage, accumulated unsigned (wraps) */
        const int16_t *a = A + i * lda;
        memset(c, 0, (size_t)N * sizeof *c);
        for (int64_t k = 0; k < K2; k++) {
            int32_t a0 = a[2 * k], a1 = a[2 * k + 1];
            if (!a0 && !a1) continue;
            const int16_t *b = Bp + k * N * 2;
            for (int64_t j = 0; j < N; j++)
                c[j] += (uint32_t)(a0 * (int32_t)b[2 * j] + a1 * (int32_t)b[2 * j + 1]);
        }
    }
}

/* Kernels built on the integer product (index into qgemm_variant.names). */
enum { QK_MATMUL_INTEGER, QK_QLINEAR_MATMUL, QK_CONV_INTEGER, QK_QLINEAR_CONV };

typedef struct qgemm_variant {
    frt_isa isa;
    const char *names[4]; /* kernel names, by QK_* */
    frt_qgemm_fn fn;
} qgemm_variant;

static const qgemm_variant qgemm_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2,
     {"matmul_integer_avx2", "qlinear_matmul_avx2", "conv_integer_avx2", "qlinear_conv_avx2"},
     frt_qgemm_i16_avx2},
#endif
#endif
    {FRT_ISA_PORTABLE, {"matmul_integer", "qlinear_matmul", "conv_integer", "qlinear_conv"},
     qgemm_portable},
};

/* Params of the integer product kernels: the inner loop picked at select. */
typedef struct qgemm_params {
    frt_qgemm_fn gemm;
} qgemm_params;

/* The best inner loop for c->isa: sets k->name (kernel `which`) and *fn. */
static void qgemm_pick(const frt_op_ctx *c, frt_kernel *k, int which, frt_qgemm_fn *fn) {
    const qgemm_variant *v = FRT_PICK_VARIANT(qgemm_variants, c->isa);
    k->name = v->names[which];
    *fn = v->fn;
}

/* q8 element i of v minus zp, as int16. */
static inline int16_t q8_sub(int32_t dt, const void *p, int64_t i, int32_t zp) {
    int32_t v = dt == FRT_UINT8 ? ((const uint8_t *)p)[i] : ((const int8_t *)p)[i];
    return (int16_t)(v - zp);
}

/* MatMul shapes: A [..., M, K] (1-D: [K], M = 1 dropped), B [..., K, N] (1-D: [K], N = 1
 * dropped), batch dims broadcast. */
typedef struct qmm_shape {
    int64_t M, K, Kb, N;
    int batch_rank;
    int64_t batch[FRT_MAX_RANK], a_bat[FRT_MAX_RANK], b_bat[FRT_MAX_RANK];
    bool a_vec, b_vec;
} qmm_shape;

static bool qmm_shape_of(const frt_value *a, const frt_value *b, qmm_shape *sh) {
    memset(sh, 0, sizeof *sh);
    sh->a_vec = a->rank == 1;
    sh->b_vec = b->rank == 1;
    sh->M = sh->a_vec ? 1 : a->dims[a->rank - 2];
    sh->K = a->dims[a->rank - 1];
    sh->Kb = sh->b_vec ? b->dims[0] : b->dims[b->rank - 2];
    sh->N = sh->b_vec ? 1 : b->dims[b->rank - 1];
    int ra = sh->a_vec ? 0 : a->rank - 2, rb = sh->b_vec ? 0 : b->rank - 2;
    int r = ra > rb ? ra : rb;
    sh->batch_rank = r;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - ra), ib = i - (r - rb);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        sh->a_bat[i] = da;
        sh->b_bat[i] = db;
        int64_t d;
        if (da == db) d = da;
        else if (da == 1) d = db;
        else if (db == 1) d = da;
        else if (da < 0 || db < 0) d = da < 0 ? db : da;
        else return false;
        sh->batch[i] = d;
    }
    return true;
}

static frt_status qmm_out_shape(frt_op_ctx *c, const frt_value *a, const frt_value *b,
                                int32_t dtype, qmm_shape *sh) {
    char sa[128], sb[128];
    if (a->rank == 0 || b->rank == 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "operands must have rank >= 1, got %s and %s",
                           frt_shape_str(a, sa, sizeof sa), frt_shape_str(b, sb, sizeof sb));
    if (a->rank < 0 || b->rank < 0) {
        frt_op_set_shape(c->out[0], dtype, -1, NULL);
        memset(sh, 0, sizeof *sh);
        sh->M = sh->N = sh->K = -1;
        return FRT_OK;
    }
    if (!qmm_shape_of(a, b, sh))
        return frt_op_fail(c, FRT_ERR_SHAPE, "batch dimensions of %s and %s do not broadcast",
                           frt_shape_str(a, sa, sizeof sa), frt_shape_str(b, sb, sizeof sb));
    if (sh->K >= 0 && sh->Kb >= 0 && sh->K != sh->Kb)
        return frt_op_fail(c, FRT_ERR_SHAPE, "inner dimensions differ: %s and %s",
                           frt_shape_str(a, sa, sizeof sa), frt_shape_str(b, sb, sizeof sb));
    int64_t od[FRT_MAX_RANK + 2];
    int r = 0;
    for (int i = 0; i < sh->batch_rank; i++) od[r++] = sh->batch[i];
    if (!sh->a_vec) od[r++] = sh->M;
    if (!sh->b_vec) od[r++] = sh->N;
    if (r > FRT_MAX_RANK) return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "output rank %d too large", r);
    frt_op_set_shape(c->out[0], dtype, r, od);
    return FRT_OK;
}

/* What one integer matmul run needs: operands, zero points (NULL: 0) and, for QLinearMatMul,
 * scales and the output's zero point. */
typedef struct qmm_run {
    const frt_value *a, *b, *azp, *bzp;
    const frt_value *as, *bs, *ys, *yzp; /* QLinearMatMul only */
    frt_value *y;
} qmm_run;

/* Scratch of one run: B packed [K2][N][2] and A [M][2*K2] as int16, and for QLinearMatMul the
 * int32 products [M, N]. */
static size_t qmm_scratch(const frt_step *s, const frt_value *values) {
    bool ql = s->n_in == 8;
    const frt_value *a = &values[s->in[0]], *b = &values[s->in[ql ? 3 : 1]];
    int64_t M = a->rank >= 2 ? a->dims[a->rank - 2] : 1, K = a->dims[a->rank - 1];
    int64_t N = b->rank == 1 ? 1 : b->dims[b->rank - 1], K2 = (K + 1) / 2;
    size_t nb = (size_t)(2 * K2 * (N + M)) * sizeof(int16_t) + 64;
    if (ql) nb += (size_t)(M * N) * sizeof(int32_t);
    return nb;
}

static frt_status qmm_run_all(const frt_step *s, frt_exec *x, const qmm_run *r) {
    const qgemm_params *p = s->k.params;
    qmm_shape sh;
    if (!qmm_shape_of(r->a, r->b, &sh) || sh.K != sh.Kb)
        return frt_step_fail(s, FRT_ERR_SHAPE, "operand shapes do not fit");
    int64_t M = sh.M, K = sh.K, N = sh.N, K2 = (K + 1) / 2;
    frt_status st;
    /* per-row parameters of A have M elements, per-column ones of B have N */
    if ((st = qparam_run(s, r->azp, "a_zero_point", M)) ||
        (st = qparam_run(s, r->bzp, "b_zero_point", N)) ||
        (st = qparam_run(s, r->as, "a_scale", M)) || (st = qparam_run(s, r->bs, "b_scale", N)) ||
        (st = qparam_run(s, r->ys, "y_scale", M)) || (st = qparam_run(s, r->yzp, "y_zero_point", M)))
        return st;
    int16_t *bp = x->scratch;
    int16_t *a16 = bp + 2 * K2 * N;
    int32_t *acc = (int32_t *)(((uintptr_t)(a16 + 2 * K2 * M) + 63) & ~(uintptr_t)63);
    int32_t adt = r->a->dtype, bdt = r->b->dtype;
    int64_t nbatch = 1;
    for (int i = 0; i < sh.batch_rank; i++) nbatch *= sh.batch[i];
    int64_t lo = 0, hi = 0;
    if (r->ys) q_range(r->y->dtype, &lo, &hi);
    int64_t prev_ao = -1, prev_bo = -1;
    for (int64_t t = 0; t < nbatch; t++) {
        int64_t rem = t, ao = 0, bo = 0, as = 1, bs = 1;
        for (int d = sh.batch_rank - 1; d >= 0; d--) {
            int64_t idx = rem % sh.batch[d];
            rem /= sh.batch[d];
            if (sh.a_bat[d] != 1) ao += idx * as;
            if (sh.b_bat[d] != 1) bo += idx * bs;
            as *= sh.a_bat[d];
            bs *= sh.b_bat[d];
        }
        if (bo != prev_bo) { /* B - b_zp in row pairs */
            int64_t bbase = bo * K * N;
            for (int64_t k = 0; k < 2 * K2; k++)
                for (int64_t j = 0; j < N; j++)
                    bp[((k >> 1) * N + j) * 2 + (k & 1)] =
                        k < K ? q8_sub(bdt, r->b->data, bbase + k * N + j, zp_at(r->bzp, j)) : 0;
            prev_bo = bo;
        }
        if (ao != prev_ao) { /* A - a_zp, rows padded to 2*K2 */
            int64_t abase = ao * M * K;
            for (int64_t i = 0; i < M; i++) {
                int32_t az = zp_at(r->azp, i);
                for (int64_t k = 0; k < K; k++)
                    a16[i * 2 * K2 + k] = q8_sub(adt, r->a->data, abase + i * K + k, az);
                if (K & 1) a16[i * 2 * K2 + K] = 0;
            }
            prev_ao = ao;
        }
        int32_t *c = r->ys ? acc : (int32_t *)r->y->data + t * M * N;
        p->gemm(M, N, K2, a16, 2 * K2, bp, c, N);
        if (!r->ys) continue;
        for (int64_t i = 0; i < M; i++) {
            float sa = ld_scale(r->as, r->as->numel == 1 ? 0 : i);
            float sy = ld_scale(r->ys, r->ys->numel == 1 ? 0 : i);
            int32_t yz = zp_at(r->yzp, i);
            int64_t yo = (t * M + i) * N;
            for (int64_t j = 0; j < N; j++) {
                float mult = sa * ld_scale(r->bs, r->bs->numel == 1 ? 0 : j) / sy;
                int64_t q = q_round((float)acc[i * N + j] * mult, yz, lo, hi);
                frt_st_i64(r->y->dtype, r->y->data, yo + j, q);
            }
        }
    }
    return FRT_OK;
}

static frt_status qmm_select(frt_op_ctx *c, frt_kernel *k, int which, frt_kernel_fn fn) {
    qgemm_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    qgemm_pick(c, k, which, &p->gemm);
    k->fn = fn;
    k->params = p;
    k->scratch = qmm_scratch;
    return FRT_OK;
}

/* MatMulInteger(A, B, a_zero_point?, b_zero_point?) -> int32. */
static frt_status mmi_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 4, 1, 1);
    if (st || (st = check_q8(c, 0, "A")) || (st = check_q8(c, 1, "B")) ||
        (st = check_zp(c, 2, c->in[0]->dtype, "a_zero_point")) ||
        (st = check_zp(c, 3, c->in[1]->dtype, "b_zero_point")))
        return st;
    qmm_shape sh;
    if ((st = qmm_out_shape(c, c->in[0], c->in[1], FRT_INT32, &sh))) return st;
    if ((st = qparam_check(c, 2, "a_zero_point", sh.M, "the rows of A", true)) ||
        (st = qparam_check(c, 3, "b_zero_point", sh.N, "the columns of B", true)))
        return st;
    return FRT_OK;
}

static frt_status mmi_kernel(const frt_step *s, frt_exec *x) {
    qmm_run r = {&x->values[s->in[0]], &x->values[s->in[1]], opt_in(s, x, 2), opt_in(s, x, 3),
                 NULL, NULL, NULL, NULL, &x->values[s->out[0]]};
    return qmm_run_all(s, x, &r);
}

static frt_status mmi_select(frt_op_ctx *c, frt_kernel *k) {
    return qmm_select(c, k, QK_MATMUL_INTEGER, mmi_kernel);
}

/* QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point). */
static frt_status qlmm_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 8, 8, 1, 1);
    if (st || (st = check_q8(c, 0, "a")) || (st = check_q8(c, 3, "b")) ||
        (st = check_scale_dtype(c, 1)) || (st = check_scale_dtype(c, 4)) ||
        (st = check_scale_dtype(c, 6)) || (st = check_q8(c, 7, "y_zero_point")) ||
        (st = check_zp(c, 2, c->in[0]->dtype, "a_zero_point")) ||
        (st = check_zp(c, 5, c->in[3]->dtype, "b_zero_point")))
        return st;
    qmm_shape sh;
    if ((st = qmm_out_shape(c, c->in[0], c->in[3], c->in[7]->dtype, &sh))) return st;
    if ((st = qparam_check(c, 1, "a_scale", sh.M, "the rows of a", true)) ||
        (st = qparam_check(c, 2, "a_zero_point", sh.M, "the rows of a", true)) ||
        (st = qparam_check(c, 4, "b_scale", sh.N, "the columns of b", true)) ||
        (st = qparam_check(c, 5, "b_zero_point", sh.N, "the columns of b", true)) ||
        (st = qparam_check(c, 6, "y_scale", sh.M, "the rows of y", true)) ||
        (st = qparam_check(c, 7, "y_zero_point", sh.M, "the rows of y", true)))
        return st;
    return FRT_OK;
}

static frt_status qlmm_kernel(const frt_step *s, frt_exec *x) {
    const frt_value *v = x->values;
    qmm_run r = {&v[s->in[0]], &v[s->in[3]], opt_in(s, x, 2), opt_in(s, x, 5),
                 &v[s->in[1]], &v[s->in[4]], &v[s->in[6]], &v[s->in[7]], &x->values[s->out[0]]};
    return qmm_run_all(s, x, &r);
}

static frt_status qlmm_select(frt_op_ctx *c, frt_kernel *k) {
    return qmm_select(c, k, QK_QLINEAR_MATMUL, qlmm_kernel);
}

/* ---------------------------------------------------------------------------------------------- */
/* Integer convolutions: ConvInteger, QLinearConv                                                  */
/* ---------------------------------------------------------------------------------------------- */

/* X [N, C, s_1..s_n], W [M, C/group, k_1..k_n] (n spatial dims, 1..FRT_MAX_RANK-2),
 * Y [N, M, o_1..o_n]. Per (batch, group): col[Kg, P] = X - x_zp gathered (0 in the padding, i.e.
 * the zero point), Kg = C/group * prod(k), P = prod(o), packed in row pairs for the integer
 * product; Y_g[Mg, P] = (W_g - w_zp) col. */
typedef struct qconv_params {
    int nsp;
    int auto_pad;
    int64_t k[FRT_MAX_RANK], st[FRT_MAX_RANK], dil[FRT_MAX_RANK];
    int64_t pb[FRT_MAX_RANK], pe[FRT_MAX_RANK];
    int64_t group;
    bool qlinear;
    frt_qgemm_fn gemm;
} qconv_params;

/* Geometry of one run (also used by infer with possibly unknown dims). */
typedef struct qconv_geom {
    int64_t N, C, M, Cg, Mg, Kg, P;
    int64_t in[FRT_MAX_RANK], out[FRT_MAX_RANK], pad[FRT_MAX_RANK];
} qconv_geom;

#define QCONV_MAX_ATTR ((int64_t)1 << 31)

static frt_status qconv_params_read(const frt_op_ctx *c, const frt_value *w, qconv_params *p) {
    memset(p, 0, sizeof *p);
    p->nsp = w->rank - 2;
    if (w->rank < 3)
        return frt_op_fail(c, FRT_ERR_SHAPE, "W must have rank >= 3, has %d", w->rank);
    const char *ap = frt_attr_string(c->node, "auto_pad", "NOTSET");
    p->auto_pad = !strcmp(ap, "NOTSET")       ? FRT_CONV_PAD_NOTSET
                  : !strcmp(ap, "SAME_UPPER") ? FRT_CONV_PAD_SAME_UPPER
                  : !strcmp(ap, "SAME_LOWER") ? FRT_CONV_PAD_SAME_LOWER
                  : !strcmp(ap, "VALID")      ? FRT_CONV_PAD_VALID
                                              : -1;
    if (p->auto_pad < 0) return frt_op_fail(c, FRT_ERR_MALFORMED, "auto_pad '%s' is not valid", ap);
    size_t nk, ns, nd, np;
    const int64_t *ks = frt_attr_ints(c->node, "kernel_shape", &nk);
    const int64_t *ss = frt_attr_ints(c->node, "strides", &ns);
    const int64_t *ds = frt_attr_ints(c->node, "dilations", &nd);
    const int64_t *ps = frt_attr_ints(c->node, "pads", &np);
    int n = p->nsp;
    if ((ks && nk != (size_t)n) || (ss && ns != (size_t)n) || (ds && nd != (size_t)n) ||
        (ps && np != 2 * (size_t)n))
        return frt_op_fail(c, FRT_ERR_MALFORMED, "kernel_shape/strides/dilations/pads do not have "
                           "%d spatial entries", n);
    for (int i = 0; i < n; i++) {
        p->k[i] = ks ? ks[i] : w->dims[2 + i];
        p->st[i] = ss ? ss[i] : 1;
        p->dil[i] = ds ? ds[i] : 1;
        p->pb[i] = ps ? ps[i] : 0;
        p->pe[i] = ps ? ps[n + i] : 0;
        if (w->dims[2 + i] >= 0 && p->k[i] != w->dims[2 + i])
            return frt_op_fail(c, FRT_ERR_SHAPE, "kernel_shape[%d] = %lld but W has %lld", i,
                               (long long)p->k[i], (long long)w->dims[2 + i]);
        if (p->k[i] < 1 || p->k[i] > QCONV_MAX_ATTR || p->st[i] < 1 || p->st[i] > QCONV_MAX_ATTR ||
            p->dil[i] < 1 || p->dil[i] > QCONV_MAX_ATTR || p->pb[i] < 0 ||
            p->pb[i] > QCONV_MAX_ATTR || p->pe[i] < 0 || p->pe[i] > QCONV_MAX_ATTR)
            return frt_op_fail(c, FRT_ERR_MALFORMED, "kernel, stride, dilation or pad of spatial "
                               "axis %d is out of range", i);
    }
    p->group = frt_attr_int(c->node, "group", 1);
    if (p->group < 1 || p->group > QCONV_MAX_ATTR)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "group %lld is not valid", (long long)p->group);
    return FRT_OK;
}

/* Fills g from X and W dims (unknown dims stay -1); 0 or a shape error message in why. */
static bool qconv_geometry(const qconv_params *p, const frt_value *xv, const frt_value *w,
                           qconv_geom *g, char *why, size_t cap) {
    g->N = xv->dims[0];
    g->C = xv->dims[1];
    g->M = w->dims[0];
    g->Cg = w->dims[1];
    if (g->C >= 0 && g->C % p->group != 0) {
        snprintf(why, cap, "X has %lld channels, not a multiple of group %lld", (long long)g->C,
                 (long long)p->group);
        return false;
    }
    if (g->C >= 0 && g->Cg >= 0 && g->C / p->group != g->Cg) {
        snprintf(why, cap, "X has %lld channels, W expects %lld per group of %lld",
                 (long long)g->C, (long long)g->Cg, (long long)p->group);
        return false;
    }
    if (g->M >= 0 && g->M % p->group != 0) {
        snprintf(why, cap, "W has %lld output channels, not a multiple of group %lld",
                 (long long)g->M, (long long)p->group);
        return false;
    }
    g->Mg = g->M >= 0 ? g->M / p->group : -1;
    g->Kg = g->Cg;
    g->P = 1;
    for (int i = 0; i < p->nsp; i++) {
        g->in[i] = xv->dims[2 + i];
        if (g->Kg >= 0) g->Kg *= p->k[i];
        if (g->in[i] < 0) {
            g->out[i] = -1;
            g->P = -1;
            continue;
        }
        g->out[i] = frt_conv_out_dim(g->in[i], p->k[i], p->st[i], p->dil[i], p->auto_pad,
                                     p->pb[i], p->pe[i], &g->pad[i]);
        if (g->out[i] <= 0) {
            snprintf(why, cap, "the kernel does not fit spatial axis %d of size %lld", i,
                     (long long)g->in[i]);
            return false;
        }
        if (g->P >= 0) g->P *= g->out[i];
    }
    return true;
}

static frt_status qconv_infer(frt_op_ctx *c) {
    bool ql = c->node->op_type[0] == 'Q'; /* QLinearConv, else ConvInteger */
    frt_status st = ql ? frt_op_check_arity(c, 8, 9, 1, 1) : frt_op_check_arity(c, 2, 4, 1, 1);
    if (st) return st;
    int ix = 0, iw = ql ? 3 : 1;
    if ((st = check_q8(c, ix, "x")) || (st = check_q8(c, iw, "w"))) return st;
    const frt_value *xv = c->in[ix], *w = c->in[iw];
    if (ql) {
        if ((st = check_scale_dtype(c, 1)) || (st = check_scale_dtype(c, 4)) ||
            (st = check_scale_dtype(c, 6)) || (st = check_q8(c, 7, "y_zero_point")) ||
            (st = check_zp(c, 2, xv->dtype, "x_zero_point")) ||
            (st = check_zp(c, 5, w->dtype, "w_zero_point")) ||
            (st = check_zp(c, 8, FRT_INT32, "B")))
            return st;
    } else if ((st = check_zp(c, 2, xv->dtype, "x_zero_point")) ||
               (st = check_zp(c, 3, w->dtype, "w_zero_point"))) {
        return st;
    }
    int32_t ot = ql ? c->in[7]->dtype : FRT_INT32;
    if (xv->rank < 0 || w->rank < 0) {
        frt_op_set_shape(c->out[0], ot, -1, NULL);
        return FRT_OK;
    }
    if (xv->rank != w->rank)
        return frt_op_fail(c, FRT_ERR_SHAPE, "x has rank %d, w has rank %d", xv->rank, w->rank);
    qconv_params p;
    if ((st = qconv_params_read(c, w, &p))) return st;
    qconv_geom g;
    char why[160];
    if (!qconv_geometry(&p, xv, w, &g, why, sizeof why))
        return frt_op_fail(c, FRT_ERR_SHAPE, "%s", why);
    int64_t M = g.M;
    if ((st = qparam_check(c, 2, "x_zero_point", -1, "", false))) return st;
    if (ql) {
        if ((st = qparam_check(c, 1, "x_scale", -1, "", false)) ||
            (st = qparam_check(c, 4, "w_scale", M, "the output channels", true)) ||
            (st = qparam_check(c, 5, "w_zero_point", M, "the output channels", true)) ||
            (st = qparam_check(c, 6, "y_scale", -1, "", false)) ||
            (st = qparam_check(c, 7, "y_zero_point", -1, "", false)))
            return st;
        if (c->n_in > 8 && c->in[8] && c->in[8]->rank >= 0 &&
            (c->in[8]->rank != 1 || (M >= 0 && c->in[8]->dims[0] >= 0 && c->in[8]->dims[0] != M)))
            return frt_op_fail(c, FRT_ERR_SHAPE, "B must be 1-D with one entry per output channel");
    } else if ((st = qparam_check(c, 3, "w_zero_point", M, "the output channels", true))) {
        return st;
    }
    int64_t od[FRT_MAX_RANK];
    od[0] = g.N;
    od[1] = M;
    for (int i = 0; i < p.nsp; i++) od[2 + i] = g.out[i];
    frt_op_set_shape(c->out[0], ot, xv->rank, od);
    return FRT_OK;
}

static size_t qconv_scratch(const frt_step *s, const frt_value *values) {
    const qconv_params *p = s->k.params;
    const frt_value *xv = &values[s->in[0]], *w = &values[s->in[p->qlinear ? 3 : 1]];
    qconv_geom g;
    char why[160];
    if (xv->rank != p->nsp + 2 || w->rank != p->nsp + 2 ||
        !qconv_geometry(p, xv, w, &g, why, sizeof why))
        return 64; /* the kernel reports the error */
    /* col [K2][P][2] and W - w_zp [M][2*K2] as int16, products [Mg, P] (QLinearConv) */
    int64_t K2 = (g.Kg + 1) / 2;
    return (size_t)(2 * K2 * (g.P + g.M)) * sizeof(int16_t) + 64 +
           (p->qlinear ? (size_t)(g.Mg * g.P) * sizeof(int32_t) : 0);
}

/* col for group gr of batch item n, packed in row pairs: row k (= (ci*kvol + tap)) element p at
 * col[((k >> 1) * P + p) * 2 + (k & 1)] is x - zp at that tap, 0 in the padding; an odd Kg gets a
 * zero row. */
static void qconv_im2col(const qconv_params *p, const qconv_geom *g, const frt_value *xv,
                         int64_t n, int64_t gr, int32_t zp, int16_t *col) {
    int nsp = p->nsp;
    int64_t in_plane = 1, P = g->P;
    for (int i = 0; i < nsp; i++) in_plane *= g->in[i];
    int64_t kvol = g->Kg / g->Cg;
    if (g->Kg & 1)
        for (int64_t pp = 0; pp < P; pp++) col[((g->Kg >> 1) * P + pp) * 2 + 1] = 0;
    for (int64_t ci = 0; ci < g->Cg; ci++) {
        int64_t xbase = (n * g->C + gr * g->Cg + ci) * in_plane;
        for (int64_t kk = 0; kk < kvol; kk++) {
            int64_t kc[FRT_MAX_RANK], rem = kk, k = ci * kvol + kk;
            for (int i = nsp - 1; i >= 0; i--) {
                kc[i] = rem % p->k[i];
                rem /= p->k[i];
            }
            int16_t *row = col + (k >> 1) * P * 2 + (k & 1);
            int64_t oc[FRT_MAX_RANK] = {0};
            for (int64_t pp = 0; pp < P; pp++) {
                int64_t off = 0;
                bool inside = true;
                for (int i = 0; i < nsp; i++) {
                    int64_t pos = oc[i] * p->st[i] - g->pad[i] + kc[i] * p->dil[i];
                    if (pos < 0 || pos >= g->in[i]) {
                        inside = false;
                        break;
                    }
                    off = off * g->in[i] + pos;
                }
                row[2 * pp] = inside ? q8_sub(xv->dtype, xv->data, xbase + off, zp) : 0;
                for (int i = nsp - 1; i >= 0; i--) {
                    if (++oc[i] < g->out[i]) break;
                    oc[i] = 0;
                }
            }
        }
    }
}

static frt_status qconv_kernel(const frt_step *s, frt_exec *x) {
    const qconv_params *p = s->k.params;
    bool ql = p->qlinear;
    const frt_value *xv = &x->values[s->in[0]], *w = &x->values[s->in[ql ? 3 : 1]];
    const frt_value *xzp = opt_in(s, x, 2), *wzp = opt_in(s, x, ql ? 5 : 3);
    const frt_value *xs = ql ? &x->values[s->in[1]] : NULL, *ws = ql ? &x->values[s->in[4]] : NULL;
    const frt_value *ys = ql ? &x->values[s->in[6]] : NULL, *yzp = ql ? &x->values[s->in[7]] : NULL;
    const frt_value *bias = ql ? opt_in(s, x, 8) : NULL;
    frt_value *y = &x->values[s->out[0]];
    qconv_geom g;
    char why[160];
    if (xv->rank != p->nsp + 2 || w->rank != p->nsp + 2 ||
        !qconv_geometry(p, xv, w, &g, why, sizeof why))
        return frt_step_fail(s, FRT_ERR_SHAPE, "%s", xv->rank != w->rank ? "ranks differ" : why);
    frt_status st;
    if ((st = qparam_run(s, xzp, "x_zero_point", 1)) ||
        (st = qparam_run(s, wzp, "w_zero_point", g.M)) || (st = qparam_run(s, xs, "x_scale", 1)) ||
        (st = qparam_run(s, ws, "w_scale", g.M)) || (st = qparam_run(s, ys, "y_scale", 1)) ||
        (st = qparam_run(s, yzp, "y_zero_point", 1)))
        return st;
    if (bias && bias->numel != g.M)
        return frt_step_fail(s, FRT_ERR_SHAPE, "B has %lld entries, %lld output channels",
                             (long long)bias->numel, (long long)g.M);
    int64_t K2 = (g.Kg + 1) / 2;
    int16_t *col = x->scratch;
    int16_t *w16 = col + 2 * K2 * g.P;
    int32_t *acc = (int32_t *)(((uintptr_t)(w16 + 2 * K2 * g.M) + 63) & ~(uintptr_t)63);
    for (int64_t m = 0; m < g.M; m++) {
        int32_t z = zp_at(wzp, m);
        int16_t *wr = w16 + m * 2 * K2;
        for (int64_t k = 0; k < g.Kg; k++) wr[k] = q8_sub(w->dtype, w->data, m * g.Kg + k, z);
        if (g.Kg & 1) wr[g.Kg] = 0;
    }
    int32_t xz = zp_at(xzp, 0);
    int64_t lo = 0, hi = 0, yz = 0;
    float sx = 0, sy = 1;
    if (ql) {
        q_range(y->dtype, &lo, &hi);
        yz = zp_at(yzp, 0);
        sx = ld_scale(xs, 0);
        sy = ld_scale(ys, 0);
    }
    for (int64_t n = 0; n < g.N; n++)
        for (int64_t gr = 0; gr < p->group; gr++) {
            qconv_im2col(p, &g, xv, n, gr, xz, col);
            int64_t m0 = gr * g.Mg;
            int32_t *c = ql ? acc : (int32_t *)y->data + (n * g.M + m0) * g.P;
            p->gemm(g.Mg, g.P, K2, w16 + m0 * 2 * K2, 2 * K2, col, c, g.P);
            if (!ql) continue;
            for (int64_t mg = 0; mg < g.Mg; mg++) {
                int64_t m = m0 + mg;
                uint32_t b0 = bias ? (uint32_t)((const int32_t *)bias->data)[m] : 0;
                float mult = sx * ld_scale(ws, ws->numel == 1 ? 0 : m) / sy;
                int64_t yo = (n * g.M + m) * g.P;
                const int32_t *cr = acc + mg * g.P;
                for (int64_t pp = 0; pp < g.P; pp++) {
                    int32_t v = (int32_t)((uint32_t)cr[pp] + b0);
                    frt_st_i64(y->dtype, y->data, yo + pp, q_round((float)v * mult, yz, lo, hi));
                }
            }
        }
    return FRT_OK;
}

static frt_status qconv_select(frt_op_ctx *c, frt_kernel *k) {
    bool ql = c->node->op_type[0] == 'Q';
    const frt_value *w = c->in[ql ? 3 : 1];
    if (w->rank < 0 || c->in[0]->rank < 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "the ranks of x and w must be known at load");
    if (w->rank - 2 > FRT_MAX_RANK - 2 || w->rank < 3)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "w rank %d is not supported", w->rank);
    qconv_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    frt_status st = qconv_params_read(c, w, p);
    if (st) return st;
    p->qlinear = ql;
    qgemm_pick(c, k, ql ? QK_QLINEAR_CONV : QK_CONV_INTEGER, &p->gemm);
    k->fn = qconv_kernel;
    k->params = p;
    k->scratch = qconv_scratch;
    return FRT_OK;
}

FRT_OP_IMPL(quant, ConvInteger, qconv_infer, qconv_select);
FRT_OP_IMPL(quant, DequantizeLinear, dequantize_infer, dequantize_select);
FRT_OP_IMPL(quant, DynamicQuantizeLinear, dynq_infer, dynq_select);
FRT_OP_IMPL(quant, MatMulInteger, mmi_infer, mmi_select);
FRT_OP_IMPL(quant, QLinearConv, qconv_infer, qconv_select);
FRT_OP_IMPL(quant, QLinearMatMul, qlmm_infer, qlmm_select);
FRT_OP_IMPL(quant, QuantizeLinear, quantize_infer, quantize_select);
