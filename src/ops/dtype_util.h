/* Element access for any numeric dtype, for kernels whose portable path is generic over dtypes
 * (index ops, integer and float64 arithmetic, reductions on rare dtypes). Hot float32 paths use
 * typed loops instead.
 *
 *   frt_ld_f64(dt, p, i)   element i of an array of dtype dt, as double (int64 beyond 2^53 loses
 *                          precision: use frt_ld_i64 for integers)
 *   frt_ld_i64(dt, p, i)   element i as int64 (floats truncated toward zero, uint64 wraps)
 *   frt_st_f64 / frt_st_i64  store with C conversion rules (float -> int: caller ensures range)
 *   frt_half_to_float / frt_float_to_half  IEEE binary16, round to nearest even
 *   frt_bf16_to_float / frt_float_to_bf16  bfloat16 (the top half of a float), round to nearest
 *                          even, NaN kept quiet
 *   frt_dtype_is_float / _is_int / _is_signed
 */
#ifndef FRT_OPS_DTYPE_UTIL_H
#define FRT_OPS_DTYPE_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "flatrt.h"

static inline uint32_t frt_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float frt_bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* IEEE half -> float, exact; a signaling NaN comes back quiet (as F16C does). */
static inline float frt_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f) return frt_bits_f32(sign | 0x7f800000 | (m << 13) | (m ? 0x400000 : 0));
    if (e) return frt_bits_f32(sign | ((e + 112) << 23) | (m << 13));
    return frt_bits_f32(sign | frt_f32_bits((float)m * 0x1p-24f)); /* zero or subnormal: exact */
}

/* float -> IEEE half, round to nearest even (bit-identical to VCVTPS2PH with RNE). */
static inline uint16_t frt_float_to_half(float f) {
    uint32_t x = frt_f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffff;
    if (ax > 0x7f800000) return (uint16_t)(sign | 0x7e00 | ((ax >> 13) & 0x3ff)); /* NaN, quiet */
    if (ax >= 0x477ff000) return (uint16_t)(sign | 0x7c00); /* >= 65520 (and inf): inf */
    if (ax >= 0x38800000) {                                 /* normal half (>= 2^-14) */
        uint32_t r = ax + 0xfff + ((ax >> 13) & 1);
        return (uint16_t)(sign | ((r - 0x38000000) >> 13));
    }
    if (ax <= 0x33000000) return sign; /* <= 2^-25: rounds to zero (2^-25 is a tie to even 0) */
    /* subnormal half: value / 2^-24 = mant * 2^(e - 126) */
    uint32_t e = ax >> 23, mant = (ax & 0x7fffff) | 0x800000, shift = 126 - e;
    uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    return (uint16_t)(sign | q);
}

static inline float frt_bf16_to_float(uint16_t h) { return frt_bits_f32((uint32_t)h << 16); }

static inline uint16_t frt_float_to_bf16(float f) {
    uint32_t x = frt_f32_bits(f);
    if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40); /* NaN stays NaN */
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

static inline bool frt_dtype_is_float(int32_t dt) {
    return dt == FRT_FLOAT32 || dt == FRT_FLOAT64 || dt == FRT_FLOAT16 || dt == FRT_BFLOAT16;
}
static inline bool frt_dtype_is_int(int32_t dt) {
    return dt == FRT_INT8 || dt == FRT_INT16 || dt == FRT_INT32 || dt == FRT_INT64 ||
           dt == FRT_UINT8 || dt == FRT_UINT16 || dt == FRT_UINT32 || dt == FRT_UINT64;
}
static inline bool frt_dtype_is_signed(int32_t dt) {
    return dt == FRT_INT8 || dt == FRT_INT16 || dt == FRT_INT32 || dt == FRT_INT64 ||
           frt_dtype_is_float(dt);
}

static inline double frt_ld_f64(int32_t dt, const void *p, int64_t i) {
    switch (dt) {
    case FRT_FLOAT32: return ((const float *)p)[i];
    case FRT_FLOAT64: return ((const double *)p)[i];
    case FRT_FLOAT16: return frt_half_to_float(((const uint16_t *)p)[i]);
    case FRT_BFLOAT16: return frt_bf16_to_float(((const uint16_t *)p)[i]);
    case FRT_INT8: return ((const int8_t *)p)[i];
    case FRT_INT16: return ((const int16_t *)p)[i];
    case FRT_INT32: return ((const int32_t *)p)[i];
    case FRT_INT64: return (double)((const int64_t *)p)[i];
    case FRT_UINT8: case FRT_BOOL: return ((const uint8_t *)p)[i];
    case FRT_UINT16: return ((const uint16_t *)p)[i];
    case FRT_UINT32: return ((const uint32_t *)p)[i];
    case FRT_UINT64: return (double)((const uint64_t *)p)[i];
    default: return 0;
    }
}

static inline int64_t frt_ld_i64(int32_t dt, const void *p, int64_t i) {
    switch (dt) {
    case FRT_INT8: return ((const int8_t *)p)[i];
    case FRT_INT16: return ((const int16_t *)p)[i];
    case FRT_INT32: return ((const int32_t *)p)[i];
    case FRT_INT64: return ((const int64_t *)p)[i];
    case FRT_UINT8: case FRT_BOOL: return ((const uint8_t *)p)[i];
    case FRT_UINT16: return ((const uint16_t *)p)[i];
    case FRT_UINT32: return ((const uint32_t *)p)[i];
    case FRT_UINT64: return (int64_t)((const uint64_t *)p)[i];
    case FRT_FLOAT32: case FRT_FLOAT64: case FRT_FLOAT16: case FRT_BFLOAT16: {
        double d = frt_ld_f64(dt, p, i);
        return d != d ? 0 : d >= 0x1p63 ? INT64_MAX : d <= -0x1p63 ? INT64_MIN : (int64_t)d;
    }
    default: return 0;
    }
}

static inline void frt_st_f64(int32_t dt, void *p, int64_t i, double v) {
    switch (dt) {
    case FRT_FLOAT32: ((float *)p)[i] = (float)v; break;
    case FRT_FLOAT64: ((double *)p)[i] = v; break;
    case FRT_FLOAT16: ((uint16_t *)p)[i] = frt_float_to_half((float)v); break;
    case FRT_BFLOAT16: ((uint16_t *)p)[i] = frt_float_to_bf16((float)v); break;
    case FRT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: {
        int64_t k = v != v ? 0 : v >= 0x1p63 ? INT64_MAX : v <= -0x1p63 ? INT64_MIN : (int64_t)v;
        switch (dt) {
        case FRT_INT8: ((int8_t *)p)[i] = (int8_t)k; break;
        case FRT_INT16: ((int16_t *)p)[i] = (int16_t)k; break;
        case FRT_INT32: ((int32_t *)p)[i] = (int32_t)k; break;
        case FRT_INT64: ((int64_t *)p)[i] = k; break;
        case FRT_UINT8: ((uint8_t *)p)[i] = (uint8_t)k; break;
        case FRT_UINT16: ((uint16_t *)p)[i] = (uint16_t)k; break;
        case FRT_UINT32: ((uint32_t *)p)[i] = (uint32_t)k; break;
        case FRT_UINT64: ((uint64_t *)p)[i] = v >= 0x1p63 ? (uint64_t)v : (uint64_t)k; break;
        default: break;
        }
    }
    }
}

static inline void frt_st_i64(int32_t dt, void *p, int64_t i, int64_t v) {
    switch (dt) {
    case FRT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case FRT_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case FRT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case FRT_INT64: ((int64_t *)p)[i] = v; break;
    case FRT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case FRT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case FRT_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case FRT_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case FRT_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    default: frt_st_f64(dt, p, i, (double)v); break;
    }
}

#endif
