/* AVX-512 float32 parametric activations and LogSoftmax rows (16 lanes): the loops of
 * activation_param_impl.h over the vector vocabulary of vec_avx512.h. Compiled with
 * -mavx512f/bw/vl/dq; reached through the variant table in simd_act.h. */
#include <math.h>

#include "simd_act.h"
#include "vec_avx512.h"

#include "activation_param_impl.h"

void frt_actp_f32_avx512(int kind, const float *x, float *y, size_t n, const float *prm) {
    actp_f32(kind, x, y, n, prm);
}
void frt_logsoftmax_rows_f32_avx512(const float *x, float *y, size_t rows, size_t len) {
    logsoftmax_rows_f32(x, y, rows, len);
}
void frt_actp_rows_f32_avx512(int kind, float *y, size_t ldy, size_t m, size_t n, const float *bias,
                              const float *res, size_t ldr, const float *prm) {
    actp_rows_f32(kind, y, ldy, m, n, bias, res, ldr, prm);
}
