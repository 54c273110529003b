/* The oneDNN provider's own stem convolution (src/ops/onednn/stemconv.c): the first layer of a
 * CNN, Conv of group 1 over an image of 1 .. 4 channels in the plain layout writing the tier's
 * blocked layout (nChw8c on AVX2, nChw16c on AVX-512), a square 3x3, 5x5 or 7x7 kernel, stride 1
 * or 2 (both axes the same), no dilation, any zero padding, with bias and a fused none / Relu /
 * Clip / SiLU / HardSwish, run with the loop of src/ops/blkstem.h instead of oneDNN's direct
 * convolution; at N threads split into ranges of output rows. Internal to the provider. */
#ifndef FRT_OPS_ONEDNN_STEMCONV_H
#define FRT_OPS_ONEDNN_STEMCONV_H

#include "dwconv.h"
#include "ops/op.h"

/* Selects the own stem kernel for Conv node c (c->in[0] plain, the output in layout L, constant
 * weights c->in[1], optional constant bias c->in[2]; the node's fused activation) with the
 * geometry conv_select read (geo->pl: top and left pads; the bottom / right ones follow from the
 * output size), or returns FRT_DECLINE (the caller then uses oneDNN) when the shape or
 * activation is outside what it covers or oneDNN measured as fast or faster: it takes SiLU and
 * HardSwish stems on the AVX2 tier and 7x7 stems on the AVX-512 tier (decided from the shape
 * alone, the same at every thread count: a split model computes the same bits as a 1-thread
 * one). threads: the model's intra-op threads. The environment variable FRT_DNNL_OWN_STEM, read
 * at load, overrides the rule: "0" never takes it, "1" takes every covered shape on any tier
 * whose layout has blocks of 8 or 16 (tests). Any other status is a load failure. */
frt_status frt_dn_stem_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L,
                              const frt_dn_dw_geom *geo, int threads);

#endif
