/* AVX2 2-D transpose of 4-byte elements (float32, int32, ...), used by the Transpose kernel in
 * src/ops/tensor.c when the CPU supports AVX2. Moves bits only (shuffles never alter NaNs). */
#include <immintrin.h>
#include <stdint.h>

void frt_transpose2d_u32_avx2(uint32_t *dst, const uint32_t *src, int64_t A, int64_t B,
                              int64_t dld, int64_t sld);

/* Transposes the 8x8 block whose source rows are src + i*sld (i < 8, 8 elements each) into the
 * destination rows dst + j*dld. */
static inline void block8x8(uint32_t *dst, const uint32_t *src, int64_t dld, int64_t sld) {
    const float *s = (const float *)src;
    __m256 r0 = _mm256_loadu_ps(s + 0 * sld), r1 = _mm256_loadu_ps(s + 1 * sld);
    __m256 r2 = _mm256_loadu_ps(s + 2 * sld), r3 = _mm256_loadu_ps(s + 3 * sld);
    __m256 r4 = _mm256_loadu_ps(s + 4 * sld), r5 = _mm256_loadu_ps(s + 5 * sld);
    __m256 r6 = _mm256_loadu_ps(s + 6 * sld), r7 = _mm256_loadu_ps(s + 7 * sld);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
    __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
    __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
    float *d = (float *)dst;
    _mm256_storeu_ps(d + 0 * dld, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(d + 1 * dld, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(d + 2 * dld, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(d + 3 * dld, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(d + 4 * dld, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(d + 5 * dld, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(d + 6 * dld, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(d + 7 * dld, _mm256_permute2f128_ps(u3, u7, 0x31));
}

/* dst[a*dld + b] = src[b*sld + a] for a < A, b < B (strides in elements). Tiles of 32x32 keep
 * both sides in L1; 8x8 register blocks inside, scalar edges. */
void frt_transpose2d_u32_avx2(uint32_t *dst, const uint32_t *src, int64_t A, int64_t B,
                              int64_t dld, int64_t sld) {
    enum { TILE = 32 };
    int64_t A8 = A & ~(int64_t)7, B8 = B & ~(int64_t)7;
    for (int64_t a0 = 0; a0 < A8; a0 += TILE) {
        int64_t a1 = a0 + TILE < A8 ? a0 + TILE : A8;
        for (int64_t b0 = 0; b0 < B8; b0 += TILE) {
            int64_t b1 = b0 + TILE < B8 ? b0 + TILE : B8;
            for (int64_t a = a0; a < a1; a += 8)
                for (int64_t b = b0; b < b1; b += 8)
                    block8x8(dst + a * dld + b, src + b * sld + a, dld, sld);
        }
    }
    /* right edge: columns b >= B8 for the vectorized rows */
    for (int64_t a = 0; a < A8; a++)
        for (int64_t b = B8; b < B; b++) dst[a * dld + b] = src[b * sld + a];
    /* bottom edge: rows a >= A8, all columns */
    for (int64_t b0 = 0; b0 < B; b0 += TILE) {
        int64_t b1 = b0 + TILE < B ? b0 + TILE : B;
        for (int64_t a = A8; a < A; a++)
            for (int64_t b = b0; b < b1; b++) dst[a * dld + b] = src[b * sld + a];
    }
}
