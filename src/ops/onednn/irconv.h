/* The oneDNN provider's flatrt::InvertedResidual (src/ops/invres.c) on the AVX2 tier's nChw8c
 * layout, in row strips through step scratch (src/ops/blkir.h). Internal to the provider. */
#ifndef FRT_OPS_ONEDNN_IRCONV_H
#define FRT_OPS_ONEDNN_IRCONV_H

#include "ops/op.h"

/* Selects the kernel for node c (c->in[0] and the residual c->in[7] in layout L, constant
 * weights and biases), or returns FRT_DECLINE when L is not nChw8c or a shape is outside what the
 * strip loop covers. threads: the model's intra-op threads (the image's rows are split into that
 * many parts, each with its own scratch). Any other status is a load failure. */
frt_status frt_dn_ir_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L, int threads);

#endif
