/* The oneDNN provider's own grouped convolution (src/ops/onednn/gconv.c): Conv with groups of G
 * input = G output channels, G a multiple of 8 (RegNet's group widths) or 2 or 4 with C a
 * multiple of 8 (ResNeXt's narrowest groups), a square 3x3 kernel,
 * stride 1 or 2, no dilation, left pad at most 1, on the AVX2 tier's nChw8c layout, run with the
 * blocked loop of src/ops/blkgc.h instead of oneDNN's direct grouped primitive; at N threads
 * split into ranges of output channel blocks. Internal to the provider. */
#ifndef FRT_OPS_ONEDNN_GCONV_H
#define FRT_OPS_ONEDNN_GCONV_H

#include "dwconv.h"
#include "ops/op.h"

/* Selects the own grouped kernel for Conv node c (c->in[0] in layout L, constant weights
 * c->in[1], optional constant bias c->in[2]; the node's fused activation: none, Relu or Clip)
 * with the geometry conv_select read, or returns FRT_DECLINE (the caller then uses oneDNN) when
 * the shape or activation is outside what it covers or the tier is not AVX2 (decided from the
 * shape alone, the same at every thread count: a split model computes the same bits as a
 * 1-thread one). threads: the model's intra-op threads. The environment variable
 * FRT_DNNL_OWN_GC, read at load, overrides the rule: "0" never takes it, "1" takes every covered
 * shape on any tier whose layout has blocks of 8 (tests). Any other status is a load failure. */
frt_status frt_dn_gc_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L,
                            const frt_dn_dw_geom *geo, int threads);

#endif
