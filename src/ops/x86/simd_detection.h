/* Private interface between NonMaxSuppression (src/ops/detection.c) and its AVX2 block loop
 * (src/ops/x86/detection_avx2.c).
 *
 * The IoU test without a division. detection.c decides "IoU > iou_threshold" for a candidate box
 * a and a kept box k as
 *     w = min(a.x2, k.x2) - max(a.x1, k.x1),  h = min(a.y2, k.y2) - max(a.y1, k.y1)   (float)
 *     inter = w * h,  uni = (a.area + k.area) - inter                                     (float)
 *     hit = (w > 0 && h > 0 && uni > 0) ? fl(inter / uni) > th : 0 > th
 * (min(a, b) = a < b ? a : b, max(a, b) = a > b ? a : b; fl() the float32 division). The division
 * is replaced by an exact comparison: rounding to nearest is monotone, so for a finite th with
 * s = the next float32 above th and m = (th + s) / 2, fl(q) > th holds exactly when q > m, or
 * q == m and the tie rounds to s (s's significand is even). m has at most 25 significant bits and
 * uni 24, so m * uni is exact in double precision and, with uni > 0, q > m <=> inter > m * uni.
 * (For a normal th, q == m cannot happen: m's odd 25-bit numerator would have to divide into
 * the 24-bit inter; ties are possible for a subnormal th.) th = FLT_MAX: s is 2^128 (even),
 * th = +inf or NaN: m is +inf or NaN and nothing hits, th = -inf: m = -inf and every overlap hits.
 * So every decision equals the division's (tests/unit/test_detection.c checks the twins against
 * the division at rounding boundaries). */
#ifndef FRT_OPS_X86_SIMD_DETECTION_H
#define FRT_OPS_X86_SIMD_DETECTION_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/cpu.h"

/* Kept boxes as columns of n + FRT_NMS_LANES floats; the lanes after the last kept box hold the
 * empty box (all 0), whose test is "0 > th" like any non-overlapping box. */
#define FRT_NMS_LANES 8
typedef struct frt_nms_cols {
    float *y1, *x1, *y2, *x2, *area;
} frt_nms_cols;

typedef struct frt_nms_box {
    float y1, x1, y2, x2, area;
} frt_nms_box;

/* The threshold test of th: see above. */
typedef struct frt_nms_th {
    double m;   /* (th + next float above th) / 2 */
    int tie_ge; /* inter == m * uni hits */
    int zero;   /* 0 > th: the decision for non-overlapping pairs */
} frt_nms_th;
void frt_nms_threshold(float th, frt_nms_th *t);

/* Whether candidate a hits (IoU > th) any of the first nk kept boxes of k (read in blocks of
 * FRT_NMS_LANES: the columns hold nk rounded up to the lanes). */
typedef bool (*frt_nms_suppressed_fn)(const frt_nms_box *a, const frt_nms_cols *k, int64_t nk,
                                      const frt_nms_th *th);

typedef struct frt_nms_variant {
    frt_isa isa;
    const char *name;
    frt_nms_suppressed_fn suppressed;
} frt_nms_variant;
const frt_nms_variant *frt_nms_variant_get(frt_isa cap);

#if FRT_HAVE_X86
bool frt_nms_suppressed_avx2(const frt_nms_box *a, const frt_nms_cols *k, int64_t nk,
                             const frt_nms_th *th);
#endif

#endif
