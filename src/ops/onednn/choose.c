/* Per-shape choice among oneDNN's convolution implementations (see choose.h).
 *
 * Winograd, oneDNN 2.6.3 on AVX-512 (AMD Zen 5, 1 thread, min of 15 runs per implementation,
 * relu post-op; the descriptor lists jit_fp32_wino_2x3 and/or jit_wino_4x3):
 *   C->M @ HxW        2x3 (us)   4x3 (us)   oneDNN's first
 *   64->64 @ 56        543        447        2x3
 *   16->64 @ 55        251        140        2x3
 *   32->128 @ 27       140        116        2x3
 *   128->32 @ 28       152        133        2x3
 *   48->192 @ 13        92         74        2x3
 *   64->256 @ 13       221        147        2x3
 *   256->256 @ 14      474        463        2x3
 *   128->32 @ 14        39         65        2x3
 *   128->32 @ 7         14         14        2x3
 *   512->512 @ 7       847       1616        2x3
 * 4x3 (4x4 output tiles) wins from 13x13 up unless the output has few channels on a small image;
 * 2x3 wins at 7x7 and for 32 output channels at 14x14. */
#include "choose.h"

#include <stdlib.h>
#include <string.h>

const char *frt_dn_wino_pref(int64_t C, int64_t M, int64_t H, int64_t W) {
    (void)C;
    const char *e = getenv("FRT_DNNL_WINO_IMPL");
    if (e && *e) return e;
    int64_t s = H < W ? H : W;
    if (s >= 13 && (M >= 64 || s >= 28)) return "jit_wino_4x3:avx512_core";
    return "jit_fp32_wino_2x3:avx512_core";
}

dnnl_status_t frt_dn_pd_prefer(dnnl_primitive_desc_t *pd, const_dnnl_op_desc_t op_desc,
                               const_dnnl_primitive_attr_t attr, dnnl_engine_t eng,
                               const char *want) {
    *pd = NULL;
    if (!want) return dnnl_primitive_desc_create(pd, op_desc, attr, eng, NULL);
    dnnl_primitive_desc_iterator_t it = NULL;
    dnnl_status_t s = dnnl_primitive_desc_iterator_create(&it, op_desc, attr, eng, NULL);
    if (s != dnnl_success) return s;
    dnnl_primitive_desc_t first = NULL;
    do {
        dnnl_primitive_desc_t cur = dnnl_primitive_desc_iterator_fetch(it);
        if (!cur) continue;
        const char *name = NULL;
        if (dnnl_primitive_desc_query(cur, dnnl_query_impl_info_str, 0, &name) == dnnl_success &&
            name && !strcmp(name, want)) {
            *pd = cur;
            break;
        }
        if (!first) first = cur;
        else dnnl_primitive_desc_destroy(cur);
    } while (dnnl_primitive_desc_iterator_next(it) == dnnl_success);
    dnnl_primitive_desc_iterator_destroy(it);
    if (*pd) {
        if (first) dnnl_primitive_desc_destroy(first);
        return dnnl_success;
    }
    if (first) {
        *pd = first;
        return dnnl_success;
    }
    return dnnl_unimplemented;
}
