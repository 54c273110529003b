/* A oneDNN step split into parts along channel blocks or output rows, run on the runtime's
 * intra-op pool (src/ops/onednn/split.c; internal to the provider). */
#ifndef FRT_OPS_ONEDNN_SPLIT_H
#define FRT_OPS_ONEDNN_SPLIT_H

#include <dnnl.h>

#include "onednn_impl.h"

typedef struct dn_split dn_split;

/* Plans the convolution of pd (made for a whole image: src, weights "any", dst in the blocked
 * layout, user scratchpad, post-ops) as up to `threads` parts of whole output channel blocks when
 * the cost model says a split pays; depthwise convolutions split input and output channels alike.
 * A Winograd convolution that oneDNN does not make as channel parts with the same
 * implementation is split into parts of output rows instead (split.c).
 * Wt, B: the node's plain float32 weights [M, C/group, kh, kw] (group 1 or depthwise) and bias
 * (B may be NULL). Each part gets its own primitive and its slice of the weights, reordered into
 * that primitive's layout in c->arena; env: onednn.c's engine and thread state, kept for the
 * runs. *out = NULL (FRT_OK) when the convolution stays whole. */
frt_status frt_dn_split_conv(frt_op_ctx *c, const_dnnl_primitive_desc_t pd, int threads,
                             const frt_value *Wt, const frt_value *B, const dn_env *env,
                             dn_split **out);

/* Whether sp's parts are runs of output rows (else channel blocks). */
int frt_dn_split_by_rows(const dn_split *sp);

/* Scratch bytes of all parts together (each part's user scratchpad at its own offset). */
size_t frt_dn_split_scratch(const dn_split *sp);

/* Runs the parts for every image of X into Y on x->tp (sequentially on the calling thread when
 * x->tp is NULL). Z: the residual input of a FusedConv (same shape and layout as Y), else NULL.
 * The caller checked X's image dims. */
frt_status frt_dn_split_run(const frt_step *s, frt_exec *x, const dn_split *sp,
                            const frt_value *X, frt_value *Y, const frt_value *Z);

/* Destroys the parts' primitives and memory objects (sp's memory is the model arena's). */
void frt_dn_split_free(dn_split *sp);

#endif
