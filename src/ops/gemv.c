/* Packed constant weights for Gemm/MatMul: packing, the GEMV driver, the blocked M > 1 driver
 * over converted panels, and the portable kernels. See gemv.h for the layout and contracts. */
#include "gemv.h"

#include <string.h>

#include "dtype_util.h"
#include "op.h"
#include "sgemm.h"
#include "util/threadpool.h"

#define P FRT_WPACK_P
#define KC 256        /* K rows converted per block (even) */
#define NCB 256       /* output columns per block (a multiple of P) */
#define MCB 144       /* A rows per block, rounded down to the micro-kernel's mr */
#define MR_C 6        /* portable micro-kernel tile */
#define NR_C 16

/* The f32 row-block kernel and the panel unpacking serve frt_wpack_gemm with M > 1 only: Gemm's
 * WGEMM class, MatMul's WPACK class, and transformer.c's FusedMatMul / Attention; a selective
 * build without them leaves them out. */
#if FRT_KERNEL_BUILT(Gemm, WGEMM) || FRT_KERNEL_BUILT(MatMul, WPACK) || \
    FRT_OP_BUILT(FusedMatMul) || FRT_OP_BUILT(Attention)
#define ROWS_AVX512 frt_gemv_rows_avx512
#define UNPACK_AVX512 frt_gemv_unpack_avx512
#define UNPACK_AVX2 frt_gemv_unpack_avx2
#else
#define ROWS_AVX512 NULL
#define UNPACK_AVX512 NULL
#define UNPACK_AVX2 NULL
#endif

static const frt_gemv_variant gemv_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512, "avx512", frt_gemv_panel_avx512, UNPACK_AVX512, ROWS_AVX512},
#endif
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "avx2", frt_gemv_panel_avx2, UNPACK_AVX2, NULL},
#endif
#endif
    {FRT_ISA_PORTABLE, "portable", NULL, NULL, NULL},
};

const frt_gemv_variant *frt_gemv_pick(frt_isa cap) { return FRT_PICK_VARIANT(gemv_variants, cap); }

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

static size_t esize(frt_wprec p) { return p == FRT_WPREC_F32 ? 4 : 2; }
static int64_t kpad(frt_wprec p, int64_t K) { return p == FRT_WPREC_BF16 ? round_up(K, 2) : K; }
/* Width of panel q (a multiple of 16). */
static int64_t panel_w(int64_t N, int64_t q) { return min64(P, round_up(N - q * P, 16)); }
static const char *panel_at(const frt_wpack *w, int64_t q) {
    return (const char *)w->data + (size_t)(q * P * kpad(w->prec, w->K)) * esize(w->prec);
}

size_t frt_wpack_bytes(frt_wprec prec, int64_t K, int64_t N) {
    if (K <= 0 || N <= 0) return 0;
    return (size_t)round_up(N, 16) * (size_t)kpad(prec, K) * esize(prec);
}

int frt_wpack_fill(frt_wprec prec, int transB, int64_t K, int64_t N, const float *B, int64_t ldb,
                   void *dst) {
    if (K <= 0 || N <= 0) return 1;
    int64_t Kp = kpad(prec, K), np = (N + P - 1) / P;
    for (int64_t q = 0; q < np; q++) {
        int64_t w = panel_w(N, q), j0 = q * P;
        size_t base = (size_t)(q * P * Kp);
        for (int64_t k = 0; k < Kp; k++)
            for (int64_t c = 0; c < w; c++) {
                int64_t j = j0 + c;
                float v = k < K && j < N ? (transB ? B[j * ldb + k] : B[k * ldb + j]) : 0.0f;
                if (prec == FRT_WPREC_F32 || !FRT_HALF_WEIGHTS) {
                    ((float *)dst)[base + (size_t)(k * w + c)] = v;
                } else if (prec == FRT_WPREC_F16) {
                    uint16_t h = frt_float_to_half(v);
                    if ((h & 0x7fff) == 0x7c00 && !(v != v) && v - v == 0.0f) return 0;
                    ((uint16_t *)dst)[base + (size_t)(k * w + c)] = h;
                } else {
                    ((uint16_t *)dst)[base + (size_t)((k / 2) * w * 2 + c * 2 + (k & 1))] =
                        frt_float_to_bf16(v);
                }
            }
    }
    return 1;
}

/* Weight (k, c) of a panel of width w, as float. */
static inline float wget(frt_wprec prec, const void *W, int64_t w, int64_t k, int64_t c) {
    if (prec == FRT_WPREC_F32 || !FRT_HALF_WEIGHTS) return ((const float *)W)[k * w + c];
    if (prec == FRT_WPREC_F16) return frt_half_to_float(((const uint16_t *)W)[k * w + c]);
    return frt_bf16_to_float(((const uint16_t *)W)[(k / 2) * w * 2 + c * 2 + (k & 1)]);
}

/* Portable panel kernel: out[w] = x[K] * Wpanel. */
static void panel_c(frt_wprec prec, int64_t K, const void *W, int64_t w, const float *x,
                    float *out) {
    float acc[P];
    for (int64_t c = 0; c < w; c++) acc[c] = 0.0f;
    if (prec == FRT_WPREC_F32 || !FRT_HALF_WEIGHTS) {
        const float *wf = W;
        for (int64_t k = 0; k < K; k++) {
            const float xk = x[k], *row = wf + k * w;
            for (int64_t c = 0; c < w; c++) acc[c] += xk * row[c];
        }
    } else {
        for (int64_t k = 0; k < K; k++) {
            const float xk = x[k];
            for (int64_t c = 0; c < w; c++) acc[c] += xk * wget(prec, W, w, k, c);
        }
    }
    memcpy(out, acc, (size_t)w * sizeof(float));
}

static void unpack_c(frt_wprec prec, const void *W, int64_t w, int64_t k0, int64_t kc, int64_t nr,
                     float *dst) {
    for (int64_t c = 0; c < round_up(w, nr); c++) {
        float *d = dst + (c / nr) * kc * nr + c % nr;
        for (int64_t k = 0; k < kc; k++) d[k * nr] = c < w ? wget(prec, W, w, k0 + k, c) : 0.0f;
    }
}

/* Panels [q0, q1) of y = alpha * x W + beta * y. */
static void gemv_panels(const frt_gemv_variant *v, const frt_wpack *w, int64_t q0, int64_t q1,
                        float alpha, const float *x, float beta, float *y) {
    _Alignas(64) float out[P];
    for (int64_t q = q0; q < q1; q++) {
        int64_t pw = panel_w(w->N, q), n = min64(P, w->N - q * P);
        if (v->panel) v->panel(w->prec, w->K, panel_at(w, q), pw, x, out);
        else panel_c(w->prec, w->K, panel_at(w, q), pw, x, out);
        float *yq = y + q * P;
        if (beta == 0.0f)
            for (int64_t j = 0; j < n; j++) yq[j] = alpha * out[j];
        else
            for (int64_t j = 0; j < n; j++) yq[j] = alpha * out[j] + beta * yq[j];
    }
}

void frt_wpack_gemv(frt_isa cap, const frt_wpack *w, float alpha, const float *x, float beta,
                    float *y) {
    if (w->N <= 0) return;
    if (w->K <= 0) {
        for (int64_t j = 0; j < w->N; j++) y[j] = beta == 0.0f ? 0.0f : beta * y[j];
        return;
    }
    gemv_panels(frt_gemv_pick(cap), w, 0, (w->N + P - 1) / P, alpha, x, beta, y);
}

typedef struct gemv_job {
    const frt_gemv_variant *v;
    const frt_wpack *w;
    int64_t per, np;
    float alpha, beta;
    const float *x;
    float *y;
} gemv_job;

static void gemv_task(void *ctx, size_t t) {
    const gemv_job *j = ctx;
    int64_t q0 = (int64_t)t * j->per, q1 = min64(q0 + j->per, j->np);
    if (q0 < q1) gemv_panels(j->v, j->w, q0, q1, j->alpha, j->x, j->beta, j->y);
}

void frt_wpack_gemv_mt(frt_threadpool *tp, frt_isa cap, const frt_wpack *w, float alpha,
                       const float *x, float beta, float *y) {
    /* the packed weights are read once: their bytes set the cost */
    double bytes = (double)frt_wpack_bytes(w->prec, w->K, w->N);
    int threads = frt_par_threads(tp, bytes * FRT_PAR_NS_PER_BYTE);
    int64_t np = (w->N + P - 1) / P;
    if (threads <= 1 || w->K <= 0 || np < 2) {
        frt_wpack_gemv(cap, w, alpha, x, beta, y);
        return;
    }
    gemv_job j = {frt_gemv_pick(cap), w, (np + threads - 1) / threads, np, alpha, beta, x, y};
    int64_t tasks = (np + j.per - 1) / j.per;
    frt_parallel_for(tp, (size_t)tasks, gemv_task, &j);
}

/* ------------------------------------------------------------------------------------------ */
/* M > 1: blocked product over converted panels                                               */
/* ------------------------------------------------------------------------------------------ */

/* Register tile of the tier's SGEMM micro-kernel (portable: MR_C x NR_C loops below). */
static void tile_of(frt_isa cap, int64_t *mr, int64_t *nr, const frt_sgemm_variant **sv) {
    *sv = frt_sgemm_pick(cap);
    if ((*sv)->ukr) {
        *mr = (*sv)->mr;
        *nr = (*sv)->nr;
    } else {
        *mr = MR_C;
        *nr = NR_C;
    }
}

size_t frt_wpack_gemm_scratch(frt_isa cap) {
    int64_t mr, nr;
    const frt_sgemm_variant *sv;
    tile_of(cap, &mr, &nr, &sv);
    return ((size_t)KC * NCB + (size_t)(MCB / mr * mr) * KC) * sizeof(float);
}

/* Packs op(A)[i0:i0+mc, k0:k0+kc] into mr-row panels [k][mr] (rows past mc zero). */
static void pack_rows(int64_t mr, int transA, const float *A, int64_t lda, int64_t i0, int64_t mc,
                      int64_t k0, int64_t kc, float *dst) {
    for (int64_t ir = 0; ir < mc; ir += mr) {
        int64_t m = min64(mr, mc - ir);
        float *d = dst + ir * kc;
        for (int64_t k = 0; k < kc; k++, d += mr)
            for (int64_t r = 0; r < mr; r++) {
                int64_t i = i0 + ir + r, kk = k0 + k;
                d[r] = r < m ? (transA ? A[kk * lda + i] : A[i * lda + kk]) : 0.0f;
            }
    }
}

/* Portable tile: t[MR_C][NR_C] = Ap * Bp over kc. */
static void ukr_c(int64_t kc, const float *a, const float *b, float *t) {
    float acc[MR_C][NR_C];
    memset(acc, 0, sizeof acc);
    for (int64_t k = 0; k < kc; k++, a += MR_C, b += NR_C)
        for (int r = 0; r < MR_C; r++)
            for (int c = 0; c < NR_C; c++) acc[r][c] += a[r] * b[c];
    memcpy(t, acc, sizeof acc);
}

void frt_wpack_gemm(frt_isa cap, const frt_wpack *w, int transA, int64_t M, float alpha,
                    const float *A, int64_t lda, float beta, float *C, int64_t ldc,
                    void *scratch) {
    const int64_t N = w->N, K = w->K;
    if (M <= 0 || N <= 0) return;
    if (K <= 0 || (M == 1 && (!transA || lda == 1))) {
        if (K <= 0)
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++)
                    C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
        else frt_wpack_gemv(cap, w, alpha, A, beta, C);
        return;
    }
    const frt_gemv_variant *gv = frt_gemv_pick(cap);
    if (gv->rows && w->prec == FRT_WPREC_F32 && !transA && alpha == 1.0f && beta == 0.0f &&
        N <= P && K * round_up(N, 16) <= 32768) { /* one panel of at most 128 KB */
        gv->rows(M, K, A, lda, (const float *)panel_at(w, 0), panel_w(N, 0), C, ldc, N);
        return;
    }
    const frt_sgemm_variant *sv;
    int64_t mr, nr;
    tile_of(cap, &mr, &nr, &sv);
    const int64_t mcmax = MCB / mr * mr;
    float *bufB = scratch, *bufA = bufB + (size_t)KC * NCB;
    _Alignas(64) float tile[FRT_SGEMM_MR_MAX * FRT_SGEMM_NR_MAX];
    for (int64_t j0 = 0; j0 < N; j0 += NCB) {
        int64_t nc = min64(NCB, N - j0);
        for (int64_t k0 = 0; k0 < K; k0 += KC) {
            int64_t kc = min64(KC, K - k0);
            float bk = k0 == 0 ? beta : 1.0f;
            /* convert the panels of this block: panel q's columns start at register panel
             * (q - j0/P) * P / nr */
            for (int64_t q = j0 / P; q * P < j0 + nc; q++) {
                float *d = bufB + ((q * P - j0) / nr) * kc * nr;
                if (gv->unpack) gv->unpack(w->prec, panel_at(w, q), panel_w(N, q), k0, kc, nr, d);
                else unpack_c(w->prec, panel_at(w, q), panel_w(N, q), k0, kc, nr, d);
            }
            for (int64_t i0 = 0; i0 < M; i0 += mcmax) {
                int64_t mc = min64(mcmax, M - i0);
                pack_rows(mr, transA, A, lda, i0, mc, k0, kc, bufA);
                for (int64_t jr = 0; jr < nc; jr += nr) {
                    int64_t n = min64(nr, nc - jr);
                    const float *b = bufB + jr * kc;
                    for (int64_t ir = 0; ir < mc; ir += mr) {
                        int64_t m = min64(mr, mc - ir);
                        const float *a = bufA + ir * kc;
                        float *c = C + (i0 + ir) * ldc + j0 + jr;
                        if (sv->ukr && m == mr && n == nr) {
                            sv->ukr(kc, a, b, c, ldc, alpha, bk);
                            continue;
                        }
                        if (sv->ukr_m && n == nr) { /* the last panel of M */
                            sv->ukr_m(m, kc, a, b, c, ldc, alpha, bk);
                            continue;
                        }
                        if (sv->ukr) sv->ukr(kc, a, b, tile, nr, 1.0f, 0.0f);
                        else ukr_c(kc, a, b, tile);
                        for (int64_t r = 0; r < m; r++) {
                            float *cr = c + r * ldc;
                            const float *t = tile + r * nr;
                            if (bk == 0.0f)
                                for (int64_t j = 0; j < n; j++) cr[j] = alpha * t[j];
                            else
                                for (int64_t j = 0; j < n; j++) cr[j] = alpha * t[j] + bk * cr[j];
                        }
                    }
                }
            }
        }
    }
}
