/* Per-shape choice among oneDNN's convolution implementations (see choose.h).
 *
 * Winograd, oneDNN 2.6.3 on AVX-512 (AMD Zen 5, 1 thread). For 3x3 stride-1 convolutions the
 * descriptor lists jit_fp32_wino_2x3 (F(2x2,3x3): 4x4 tiles, transformed weights 16 C M floats)
 * and/or jit_wino_4x3 (F(4x4,3x3): 6x6 tiles, 36 C M floats), oneDNN's first being 2x3 wherever
 * both exist. Min time per convolution (us), isolated (one primitive run in a loop, min of 15)
 * and inside the model (ONEDNN_VERBOSE exec times, min over 20 runs, host under load):
 *   C->M @ HxW        isolated 2x3 / 4x3    in the model 2x3 / 4x3   4x3 weights
 *   64->64 @ 56          543 / 447               670 / 600            0.6 MB
 *   16->64 @ 55          251 / 140               236 / 199            0.15 MB
 *   32->128 @ 27         140 / 116               172 / 150            0.6 MB
 *   128->32 @ 28         152 / 133               151 / 151            0.6 MB
 *   48->192 @ 13          92 / 74                134 / 198            1.3 MB
 *   64->256 @ 13         221 / 147               266 / 365            2.4 MB
 *   256->256 @ 14        474 / 463               740 / 1150           9.4 MB
 *   128->32 @ 14          39 / 65                   -
 *   512->512 @ 7         847 / 1616                 -                37.7 MB
 * In a model the weights come from L3 or memory, not from a loop's warm cache: 4x3 wins from
 * 13x13 up while its transformed weights fit the 1 MB L2, and loses when they do not (2.25x the
 * weight bytes of 2x3); 2x3 also wins for 32 output channels at 14x14. */
#if FRT_HAVE_DNNL /* (compiled either way, CMakeLists.txt: the -DFRT_USE_DNNL=OFF build linked
                     calls to oneDNN from here) */

#include "choose.h"

#include <stdlib.h>
#include <string.h>

const char *frt_dn_wino_pref(int64_t C, int64_t M, int64_t H, int64_t W) {
    const char *e = getenv("FRT_DNNL_WINO_IMPL");
    if (e && *e) return e;
    int64_t s = H < W ? H : W;
    double wbytes = 36.0 * (double)C * (double)M * sizeof(float); /* 4x3's transformed weights */
    if (s >= 13 && wbytes <= 1024.0 * 1024.0 && (M >= 64 || s >= 28))
        return "jit_wino_4x3:avx512_core";
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

#endif /* FRT_HAVE_DNNL */
