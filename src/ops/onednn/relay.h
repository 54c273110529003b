/* A convolution run on another blocked layout than the provider's, between two reorders inside
 * the step (src/ops/onednn/relay.c; internal to the provider).
 *
 * oneDNN 2.6 has only its reference kernel (`ref:any`, 100-1000x slower) for grouped convolutions
 * whose groups are not whole channel blocks of nChw16c / nChw8c (RegNet's groups of 8 channels on
 * AVX-512, ResNeXt's groups of 4), but a JIT kernel on nChw8c for groups of 8 and on NHWC for any
 * group width. The provider then keeps its blocked layout at the step's edges (the neighbours
 * stay blocked as before) and relays: X (blocked) -> A -> conv -> B -> Y (blocked), A and B in
 * the relay layout, in the step's scratch after the convolution's scratchpad. */
#ifndef FRT_OPS_ONEDNN_RELAY_H
#define FRT_OPS_ONEDNN_RELAY_H

#include <stdbool.h>

#include <dnnl.h>

#include "onednn_impl.h"

typedef struct dn_relay dn_relay;

/* True when pd's implementation is one of oneDNN's reference kernels ("ref:..."). */
bool frt_dn_is_ref(const_dnnl_primitive_desc_t pd);

/* Plans the relay around the convolution of pd (not consumed): x_md / y_md are one image of the
 * step's input and output in the provider's layout, pd's src and dst one image in the relay
 * layout. Makes the two reorder primitives (in c->arena's params; freed by frt_dn_relay_free).
 * Returns FRT_OK with *out set, or an error (frt_op_fail). */
frt_status frt_dn_relay_make(frt_op_ctx *c, const dnnl_memory_desc_t *x_md,
                             const dnnl_memory_desc_t *y_md, const_dnnl_primitive_desc_t pd,
                             const dn_env *env, dn_relay **out);

/* Scratch bytes of the step: the convolution's scratchpad (at offset 0), then A and B. */
size_t frt_dn_relay_scratch(const dn_relay *r);

/* Runs conv (made from the pd given to frt_dn_relay_make) with weights wmem and bias bmem (NULL:
 * none) on every image of X into Y. The caller checked X's image dims. */
frt_status frt_dn_relay_run(const frt_step *s, frt_exec *x, const dn_relay *r,
                            dnnl_primitive_t conv, dnnl_memory_t wmem, dnnl_memory_t bmem,
                            const frt_value *X, frt_value *Y);

/* Destroys the reorder primitives (r's memory is the model arena's). NULL is allowed. */
void frt_dn_relay_free(dn_relay *r);

#endif
