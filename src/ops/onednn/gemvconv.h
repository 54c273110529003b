/* The oneDNN provider's own kernel for a 1x1 convolution of a 1x1 image (src/ops/onednn/
 * gemvconv.c): the fully connected layers of squeeze-and-excitation blocks after a
 * GlobalAveragePool, which oneDNN's 1x1 primitive runs at a few microseconds of call and setup
 * cost each. Internal to the provider. */
#ifndef FRT_OPS_ONEDNN_GEMVCONV_H
#define FRT_OPS_ONEDNN_GEMVCONV_H

#include "ops/op.h"

/* Selects the kernel for Conv node c, reading its input c->in[0] in layout L (the layout pass
 * reorders a plain producer's data), when that input is a 1x1 image ([N, C, 1, 1]), its weights c->in[1] are constant [M, C, 1, 1] (group 1), its optional bias
 * c->in[2] constant, and its fused activation one of none, Relu, Clip, SiLU, HardSwish, Sigmoid,
 * HardSigmoid; returns FRT_DECLINE otherwise (the caller then uses oneDNN). The caller checks
 * that the top and left pads are zero (so output pixel 0 reads input pixel 0) and that the
 * weights and bias are constant float32 of these shapes. The environment variable
 * FRT_DNNL_GEMVCONV=0 declines always (debugging aid). Any other status is a load failure. */
frt_status frt_dn_gemvconv_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L);

#endif
