/* AVX2 row helpers for pooling (see pool.c; compiled with -mavx2 -mfma, called after CPU
 * detection). */
#include <stdint.h>

#if FRT_HAVE_X86
#include <immintrin.h>

void frt_pool_vmax_avx2(float *dst, const float *src, int64_t n);
void frt_pool_vadd_avx2(float *dst, const float *src, int64_t n);
float frt_pool_sum_avx2(const float *src, int64_t n);
int64_t frt_pool_hrow_avx2(int is_max, const float *row, int64_t len, float *out, int64_t n,
                           int64_t s, int64_t K, int64_t d);

/* dst[i] = src[i] > dst[i] ? src[i] : dst[i] (same selection as the portable loop) */
void frt_pool_vmax_avx2(float *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 s0 = _mm256_loadu_ps(src + i), s1 = _mm256_loadu_ps(src + i + 8);
        __m256 d0 = _mm256_loadu_ps(dst + i), d1 = _mm256_loadu_ps(dst + i + 8);
        /* max_ps(a, b) returns b unless a > b: max_ps(src, dst) == (src > dst ? src : dst) */
        _mm256_storeu_ps(dst + i, _mm256_max_ps(s0, d0));
        _mm256_storeu_ps(dst + i + 8, _mm256_max_ps(s1, d1));
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_max_ps(_mm256_loadu_ps(src + i), _mm256_loadu_ps(dst + i)));
    for (; i < n; i++) dst[i] = src[i] > dst[i] ? src[i] : dst[i];
}

void frt_pool_vadd_avx2(float *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(dst + i), _mm256_loadu_ps(src + i)));
        _mm256_storeu_ps(dst + i + 8,
                         _mm256_add_ps(_mm256_loadu_ps(dst + i + 8), _mm256_loadu_ps(src + i + 8)));
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(dst + i), _mm256_loadu_ps(src + i)));
    for (; i < n; i++) dst[i] += src[i];
}

float frt_pool_sum_avx2(const float *src, int64_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_add_ps(s0, _mm256_loadu_ps(src + i));
        s1 = _mm256_add_ps(s1, _mm256_loadu_ps(src + i + 8));
        s2 = _mm256_add_ps(s2, _mm256_loadu_ps(src + i + 16));
        s3 = _mm256_add_ps(s3, _mm256_loadu_ps(src + i + 24));
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_add_ps(s0, _mm256_loadu_ps(src + i));
    __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    float r = _mm_cvtss_f32(h);
    for (; i < n; i++) r += src[i];
    return r;
}
/* Even elements p[0], p[2], ..., p[14] of 16 floats. */
static inline __m256 evens16(const float *p) {
    __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
    __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)); /* a0 a2 b0 b2 | a4 a6 b4 b6 */
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
}

int64_t frt_pool_hrow_avx2(int is_max, const float *row, int64_t len, float *out, int64_t n,
                           int64_t s, int64_t K, int64_t d) {
    int64_t j = 0, span = (K - 1) * d;
    if (s == 1) {
        /* reads row[j .. j + 7 + span] */
        for (; j + 8 <= n && j + 7 + span < len; j += 8) {
            const float *p = row + j;
            __m256 acc = _mm256_loadu_ps(p);
            for (int64_t k = 1; k < K; k++) {
                __m256 v = _mm256_loadu_ps(p + k * d);
                acc = is_max ? _mm256_max_ps(v, acc) : _mm256_add_ps(acc, v);
            }
            _mm256_storeu_ps(out + j, acc);
        }
    } else if (s == 2) {
        /* reads row[2j .. 2j + 15 + span] */
        for (; j + 8 <= n && 2 * j + 15 + span < len; j += 8) {
            const float *p = row + 2 * j;
            __m256 acc = evens16(p);
            for (int64_t k = 1; k < K; k++) {
                __m256 v = evens16(p + k * d);
                acc = is_max ? _mm256_max_ps(v, acc) : _mm256_add_ps(acc, v);
            }
            _mm256_storeu_ps(out + j, acc);
        }
    }
    return j;
}
#endif
