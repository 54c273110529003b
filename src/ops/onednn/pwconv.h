/* The oneDNN provider's own pointwise convolution (src/ops/onednn/pwconv.c): Conv / FusedConv with
 * a 1x1 kernel, stride 1, no padding, one group and one to three, five or seven 8-channel output
 * blocks (at most 24, 33-40 or 49-56 output channels) on the AVX2 tier's nChw8c layout, run with the blocked loop of src/ops/blkpw.h instead
 * of oneDNN's 1x1 primitive; at N threads split into ranges of pixels. Internal to the provider. */
#ifndef FRT_OPS_ONEDNN_PWCONV_H
#define FRT_OPS_ONEDNN_PWCONV_H

#include "ops/op.h"

/* Selects the own pointwise kernel for node c (c->in[0] in layout L, constant weights c->in[1],
 * optional constant bias c->in[2], for FusedConv the residual c->in[3] in layout L; the node's
 * fused activation), or returns FRT_DECLINE (the caller then uses oneDNN) when the shape or
 * activation is outside what it covers (decided from the shape alone, the same at every thread
 * count, so a split model computes the same bits as a 1-thread one). threads: the model's
 * intra-op threads. The environment variable FRT_DNNL_OWN_PW, read at load, overrides the rule:
 * "0" never takes it, "1" takes every covered shape at any output channel count, and the SiLU
 * and HardSwish layers, which the rule leaves to oneDNN (tests, A/B). Any
 * other status is a load failure. */
frt_status frt_dn_pw_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L, int threads);

#endif
