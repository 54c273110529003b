/* Private interface between the parametric activations and the softmax family
 * (src/ops/activation_param.c, activation.c) and their AVX2/FMA and AVX-512 loops
 * (src/ops/x86/activation_param_{avx2,avx512}.c, sharing activation_param_impl.h).
 *
 * The x86 functions exist only when FRT_HAVE_X86 is 1; they are reached only through the variant
 * table below (FRT_PICK_VARIANT by the context's ISA tier). Every loop reads element i before it
 * writes element i, so y may equal x (in place).
 */
#ifndef FRT_OPS_X86_SIMD_ACT_H
#define FRT_OPS_X86_SIMD_ACT_H

#include <stddef.h>

#include "ops/cpu.h"

/* Pointwise float32 activations computed by frt_actp_fn; prm[0..3] are the op's attributes as
 * listed (unused entries are ignored).
 *   LEAKY       x < 0 ? a x : x                              prm a
 *   ELU         x < 0 ? a (e^x - 1) : x                      prm a
 *   SELU        x <= 0 ? g a (e^x - 1) : g x                 prm a, g
 *   CELU        x < 0 ? a (e^(x/a) - 1) : x                  prm a (nonzero)
 *   HARDSIGMOID max(0, min(1, a x + b))                      prm a, b
 *   HARDSWISH   x max(0, min(1, x / 6 + 1/2))
 *   SOFTPLUS    log(1 + e^x), as max(x, 0) + log1p(e^-|x|)
 *   SOFTSIGN    x / (1 + |x|)
 *   GELU        x Phi(x) = x erfc(-x / sqrt 2) / 2
 *   GELU_TANH   x (1 + tanh(u)) / 2 = x / (1 + e^(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3);
 *               -inf gives NaN (-inf * 0)
 *   MISH        x tanh(log(1 + e^x)) = x n / (n + 2), n = e^x (e^x + 2)
 *   THRESHOLDED x > a ? x : 0 (NaN stays NaN)                prm a
 *   SHRINK      x < -l ? x + b : x > l ? x - b : 0           prm l, b
 *   SILU        x sigmoid(x) = x / (1 + e^-x) (flatrt::Silu, fused from Sigmoid + Mul); -inf
 *               gives NaN (-inf * 0, as the unfused pair)
 * NaN in gives NaN out except for SHRINK (0). The SIMD loops are within 2e-6 relative (plus
 * 1e-30 absolute) of the portable ones, which use libm (expm1f, log1pf, erfcf, tanhf). */
enum {
    FRT_ACTP_LEAKY = 0,
    FRT_ACTP_ELU,
    FRT_ACTP_SELU,
    FRT_ACTP_CELU,
    FRT_ACTP_HARDSIGMOID,
    FRT_ACTP_HARDSWISH,
    FRT_ACTP_SOFTPLUS,
    FRT_ACTP_SOFTSIGN,
    FRT_ACTP_GELU,
    FRT_ACTP_GELU_TANH,
    FRT_ACTP_MISH,
    FRT_ACTP_THRESHOLDED,
    FRT_ACTP_SHRINK,
    FRT_ACTP_SILU,
    FRT_ACTP_COUNT
};

typedef void (*frt_actp_fn)(int kind, const float *x, float *y, size_t n, const float *prm);
/* LogSoftmax of `rows` contiguous rows of len >= 1 elements: y = x - max - log(sum e^(x - max)). */
typedef void (*frt_logsoftmax_rows_fn)(const float *x, float *y, size_t rows, size_t len);
/* GEMM output epilogue over a block y[m, n] (row stride ldy), in place:
 *   y[r][t] = act(y[r][t] + bias[t]) + res[r * ldr + t]
 * bias NULL: no bias; res NULL: no residual; kind FRT_ACTP_COUNT: no activation (identity),
 * otherwise one of the kinds above with prm as for frt_actp_fn. res must not overlap y. */
typedef void (*frt_actp_rows_fn)(int kind, float *y, size_t ldy, size_t m, size_t n,
                                 const float *bias, const float *res, size_t ldr, const float *prm);

typedef struct frt_actp_variant {
    frt_isa isa;
    const char *suffix;
    frt_actp_fn pointwise;
    frt_logsoftmax_rows_fn logsoftmax_rows;
    frt_actp_rows_fn bias_rows;
} frt_actp_variant;
/* Best variant whose tier is <= cap (activation_param.c). */
const frt_actp_variant *frt_actp_variant_get(frt_isa cap);

#if FRT_HAVE_X86
void frt_actp_f32_avx2(int kind, const float *x, float *y, size_t n, const float *prm);
void frt_actp_f32_avx512(int kind, const float *x, float *y, size_t n, const float *prm);
void frt_logsoftmax_rows_f32_avx2(const float *x, float *y, size_t rows, size_t len);
void frt_logsoftmax_rows_f32_avx512(const float *x, float *y, size_t rows, size_t len);
void frt_actp_rows_f32_avx2(int kind, float *y, size_t ldy, size_t m, size_t n, const float *bias,
                            const float *res, size_t ldr, const float *prm);
void frt_actp_rows_f32_avx512(int kind, float *y, size_t ldy, size_t m, size_t n,
                              const float *bias, const float *res, size_t ldr, const float *prm);
#endif

#endif
