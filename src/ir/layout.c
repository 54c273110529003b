/* Built-in non-plain layouts: channel-blocked NCHW (nChw8c, nChw16c).
 *
 * [N, C, S...] (S = the spatial dims, rank >= 3) is stored as [N, ceil(C/b), S..., b]: the channel
 * dim is split into blocks of b consecutive channels that are innermost, and the last block is
 * padded with zeros up to b channels. Any dtype with a fixed size. */
#include <string.h>

#include "ir.h"

static bool blocked_fits(const frt_value *v) {
    return v->rank >= 3 && frt_dtype_size(v->dtype) > 0;
}

/* N, channel blocks, spatial size; false when the product overflows. */
static bool blocked_geom(const frt_value *v, int64_t b, int64_t *n, int64_t *cb, int64_t *sp) {
    *n = v->dims[0];
    *cb = (v->dims[1] + b - 1) / b;
    int64_t s = 1;
    for (int d = 2; d < v->rank; d++) {
        if (v->dims[d] != 0 && s > INT64_MAX / v->dims[d]) return false;
        s *= v->dims[d];
    }
    *sp = s;
    return true;
}

static size_t blocked_nbytes(const frt_value *v, int64_t b) {
    int64_t n, cb, sp;
    if (v->rank < 3 || !blocked_geom(v, b, &n, &cb, &sp)) return 0;
    int64_t e = frt_shape_numel((int64_t[]){n, cb, sp, b}, 4);
    size_t es = frt_dtype_size(v->dtype);
    if (e < 0 || (es && (uint64_t)e > SIZE_MAX / es)) return 0;
    return (size_t)e * es;
}

/* 4-byte elements: one block of b channels at a time, the b plane rows read (or written) side by
 * side and the blocked rows written (or read) contiguously; padding lanes are zero. */
static void blocked_copy4(const frt_value *plain, const frt_value *blk, int64_t b, int64_t n,
                          int64_t cb, int64_t sp, bool to_blocked) {
    int64_t C = plain->dims[1];
    uint32_t *P = plain->data, *B = blk->data;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < cb; k++) {
            int64_t c0 = k * b, nc = C - c0 < b ? C - c0 : b;
            uint32_t *pp = P + (i * C + c0) * sp, *bp = B + (i * cb + k) * sp * b;
            if (to_blocked) {
                for (int64_t s = 0; s < sp; s++) {
                    uint32_t *row = bp + s * b;
                    int64_t l = 0;
                    for (; l < nc; l++) row[l] = pp[l * sp + s];
                    for (; l < b; l++) row[l] = 0;
                }
            } else {
                for (int64_t s = 0; s < sp; s++) {
                    const uint32_t *row = bp + s * b;
                    for (int64_t l = 0; l < nc; l++) pp[l * sp + s] = row[l];
                }
            }
        }
}

/* Copies between plain src/dst and blocked (to_blocked selects the direction). */
static void blocked_copy(const frt_value *plain, const frt_value *blk, int64_t b, bool to_blocked) {
    int64_t n, cb, sp;
    if (!blocked_geom(plain, b, &n, &cb, &sp)) return;
    int64_t C = plain->dims[1];
    size_t es = frt_dtype_size(plain->dtype);
    if (es == 4) {
        blocked_copy4(plain, blk, b, n, cb, sp, to_blocked);
        return;
    }
    unsigned char *P = plain->data, *B = blk->data;
    if (to_blocked) memset(B, 0, frt_value_nbytes(blk));
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < C; c++) {
            unsigned char *pp = P + (size_t)((i * C + c) * sp) * es;
            unsigned char *bp = B + (size_t)(((i * cb + c / b) * sp) * b + c % b) * es;
            for (int64_t s = 0; s < sp; s++) {
                if (to_blocked) memcpy(bp + (size_t)(s * b) * es, pp + (size_t)s * es, es);
                else memcpy(pp + (size_t)s * es, bp + (size_t)(s * b) * es, es);
            }
        }
}

static size_t nbytes8(const frt_value *v) { return blocked_nbytes(v, 8); }
static size_t nbytes16(const frt_value *v) { return blocked_nbytes(v, 16); }
static void to_plain8(const frt_value *src, frt_value *dst) { blocked_copy(dst, src, 8, false); }
static void from_plain8(const frt_value *src, frt_value *dst) { blocked_copy(src, dst, 8, true); }
static void to_plain16(const frt_value *src, frt_value *dst) { blocked_copy(dst, src, 16, false); }
static void from_plain16(const frt_value *src, frt_value *dst) { blocked_copy(src, dst, 16, true); }

const frt_layout frt_layout_nchw8c = {"nChw8c", 8, nbytes8, blocked_fits, to_plain8, from_plain8};
const frt_layout frt_layout_nchw16c = {"nChw16c", 16, nbytes16, blocked_fits, to_plain16,
                                       from_plain16};
