/* Per-shape choice among oneDNN's implementations of a convolution (src/ops/onednn/choose.c;
 * internal to the provider). oneDNN lists several implementations for one convolution descriptor
 * and its own pick is not always the fastest; these rules, measured offline per shape on the
 * AVX-512 tier (docs/dependencies.md), name the one to take. The choice depends on the shape
 * only, so it is the same at every load. */
#ifndef FRT_OPS_ONEDNN_CHOOSE_H
#define FRT_OPS_ONEDNN_CHOOSE_H

#include <stdint.h>

#include <dnnl.h>

/* The Winograd implementation to prefer for a 3x3, stride-1 convolution of C input and M
 * output channels on an H x W image (oneDNN 2.6 names, e.g. "jit_wino_4x3:avx512_core"), or NULL
 * to take oneDNN's first. The environment variable FRT_DNNL_WINO_IMPL (debugging aid) overrides
 * the rule with the name it holds. */
const char *frt_dn_wino_pref(int64_t C, int64_t M, int64_t H, int64_t W);

/* Creates in *pd the primitive descriptor of op_desc with attr on eng: the implementation named
 * want when oneDNN lists it for these arguments, else oneDNN's first (want NULL: the first).
 * Returns oneDNN's status; *pd is NULL on failure. */
dnnl_status_t frt_dn_pd_prefer(dnnl_primitive_desc_t *pd, const_dnnl_op_desc_t op_desc,
                               const_dnnl_primitive_attr_t attr, dnnl_engine_t eng,
                               const char *want);

#endif
