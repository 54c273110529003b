/* The oneDNN provider's own depthwise convolution (src/ops/onednn/dwconv.c): Conv with
 * group == C == M, a square 3x3 or 5x5 kernel, stride 1 or 2 in both axes, no dilation, on
 * blocked input and output (layout L), run with the blocked loops of src/ops/blkdw.h instead of
 * oneDNN's depthwise primitive. Internal to the provider. */
#ifndef FRT_OPS_ONEDNN_DWCONV_H
#define FRT_OPS_ONEDNN_DWCONV_H

#include "ops/op.h"

/* The geometry conv_select read: kernel, strides, dilations and left/top pads per spatial axis
 * ([0] = H, [1] = W). */
typedef struct frt_dn_dw_geom {
    int64_t k[2], s[2], d[2], pl[2];
} frt_dn_dw_geom;

/* Selects the own depthwise kernel for Conv node c (c->in[0] in layout L, constant weights
 * c->in[1], optional constant bias c->in[2]; the node's fused activation), or returns
 * FRT_DECLINE (the caller then uses oneDNN) when the shape or activation is outside what it
 * covers, or the shape is one where oneDNN is faster (decided from the shape alone, see
 * dwconv.c). The environment variable FRT_DNNL_OWN_DW overrides the speed rule at load: "0" never
 * takes it, "1" takes every covered shape (tests). Any other status is a load failure. */
frt_status frt_dn_dw_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L,
                            const frt_dn_dw_geom *geo, int threads);

#endif
