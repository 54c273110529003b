/* NonMaxSuppression's block loop with AVX2 (see simd_detection.h; the portable twin is
 * nms_suppressed in src/ops/detection.c, with the same operations lane by lane). */
#include <immintrin.h>

#include "ops/x86/simd_detection.h"

/* The hit mask (bit l: lane l) of candidate a against kept lanes [j, j + 8). */
static inline int block_hits(__m256 ax1, __m256 ay1, __m256 ax2, __m256 ay2, __m256 aar,
                             const frt_nms_cols *k, int64_t j, __m256d m, int tie_ge, int zero) {
    /* _mm256_min_ps(a, b) = a < b ? a : b and _mm256_max_ps(a, b) = a > b ? a : b per lane,
       NaN included: the portable nms_min / nms_max */
    __m256 w = _mm256_sub_ps(_mm256_min_ps(ax2, _mm256_loadu_ps(k->x2 + j)),
                             _mm256_max_ps(ax1, _mm256_loadu_ps(k->x1 + j)));
    __m256 h = _mm256_sub_ps(_mm256_min_ps(ay2, _mm256_loadu_ps(k->y2 + j)),
                             _mm256_max_ps(ay1, _mm256_loadu_ps(k->y1 + j)));
    __m256 inter = _mm256_mul_ps(w, h);
    __m256 uni = _mm256_sub_ps(_mm256_add_ps(aar, _mm256_loadu_ps(k->area + j)), inter);
    __m256 z = _mm256_setzero_ps();
    __m256 cond = _mm256_and_ps(_mm256_and_ps(_mm256_cmp_ps(w, z, _CMP_GT_OQ),
                                              _mm256_cmp_ps(h, z, _CMP_GT_OQ)),
                                _mm256_cmp_ps(uni, z, _CMP_GT_OQ));
    int c = _mm256_movemask_ps(cond);
    if (!c) return zero ? 0xff : 0;
    __m256d il = _mm256_cvtps_pd(_mm256_castps256_ps128(inter));
    __m256d ih = _mm256_cvtps_pd(_mm256_extractf128_ps(inter, 1));
    __m256d pl = _mm256_mul_pd(m, _mm256_cvtps_pd(_mm256_castps256_ps128(uni)));
    __m256d ph = _mm256_mul_pd(m, _mm256_cvtps_pd(_mm256_extractf128_ps(uni, 1)));
    __m256d gl = _mm256_cmp_pd(il, pl, _CMP_GT_OQ), gh = _mm256_cmp_pd(ih, ph, _CMP_GT_OQ);
    if (tie_ge) {
        gl = _mm256_or_pd(gl, _mm256_cmp_pd(il, pl, _CMP_EQ_OQ));
        gh = _mm256_or_pd(gh, _mm256_cmp_pd(ih, ph, _CMP_EQ_OQ));
    }
    int g = _mm256_movemask_pd(gl) | _mm256_movemask_pd(gh) << 4;
    return (g & c) | (zero ? ~c & 0xff : 0);
}

bool frt_nms_suppressed_avx2(const frt_nms_box *a, const frt_nms_cols *k, int64_t nk,
                             const frt_nms_th *th) {
    __m256 ax1 = _mm256_set1_ps(a->x1), ay1 = _mm256_set1_ps(a->y1);
    __m256 ax2 = _mm256_set1_ps(a->x2), ay2 = _mm256_set1_ps(a->y2);
    __m256 aar = _mm256_set1_ps(a->area);
    __m256d m = _mm256_set1_pd(th->m);
    for (int64_t j = 0; j < nk; j += FRT_NMS_LANES)
        if (block_hits(ax1, ay1, ax2, ay2, aar, k, j, m, th->tie_ge, th->zero)) return true;
    return false;
}
