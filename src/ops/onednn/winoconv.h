/* The oneDNN provider's own Winograd F(4x4, 3x3) convolution (src/ops/onednn/winoconv.c, the
 * kernel in src/ops/wino.h): a 3x3, stride-1, undilated, ungrouped Conv / FusedConv on blocked
 * input and output (layout L; stride 1, or 2 in its polyphase form), in place of oneDNN's direct convolution, which oneDNN 2.6 runs
 * without Winograd below AVX-512. Internal to the provider. */
#ifndef FRT_OPS_ONEDNN_WINOCONV_H
#define FRT_OPS_ONEDNN_WINOCONV_H

#include "ops/op.h"

/* Selects the kernel for node c (c->in[0] in layout L, constant float32 weights c->in[1]
 * [M, C, 3, 3], optional constant bias c->in[2], FusedConv's residual c->in[3] in L; the node's
 * fused activation none, Relu or Clip) with top / left pads pt, pl and the output size of c->out[0]
 * (bottom / right pads follow from it), for a model of `threads` intra-op threads; returns
 * FRT_DECLINE (the caller then uses oneDNN) outside that, or where oneDNN is expected to be faster
 * (the rule in winoconv.c, from the shape). The environment variable FRT_WINO overrides the rule
 * at load: "0" never takes it, "1" takes every covered shape on any tier (tests, A/B). The caller
 * checked group 1, kernel 3x3, stride 1 or 2 in both dimensions (`stride`), dilation 1, and
 * that the input is read in L (a plain
 * producer gets a reorder). Any other status
 * is a load failure. */
frt_status frt_dn_wino_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L, int64_t pt,
                              int64_t pl, int64_t stride, int threads);

/* The one-dimensional form (wino.h, g->r): a kh x kw (F(m, kw) along the rows, kh taps summed
 * directly; an r x 1 kernel F(m, r) down the columns), stride-1 (both dimensions), undilated,
 * ungrouped convolution with pads pb (top, left) and pe (bottom, right) below the kernel's;
 * otherwise as frt_dn_wino_select (FRT_WINO1 "0" / "1" in place of FRT_WINO). The caller leaves
 * out 1x1 and 3x3 kernels. */
frt_status frt_dn_wino1_select(frt_op_ctx *c, frt_kernel *k, const frt_layout *L,
                               const int64_t pb[2], const int64_t pe[2], int threads);

#endif
