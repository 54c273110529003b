/* Single-precision GEMM/GEMV: OpenBLAS dispatch and the portable cache-blocked kernel.
 * See sgemm.h for the contract.
 *
 * Portable kernel (BLIS-style loop nest):
 *   jc over N in NC columns -> pc over K in KC -> pack op(B)[kc, nc] into NR-column panels
 *     -> ic over M in MC rows -> pack op(A)[mc, kc] into MR-row panels
 *       -> jr over NR panels -> ir over MR panels -> MR x NR register micro-kernel.
 * MR x NR is the register tile of the tier's variant (frt_sgemm_pick): 6 x 16 portable and AVX2,
 * 12 x 32 AVX-512 (x86/sgemm_avx512.c, with a kernel for the last panel's 1..11 rows).
 * Packed panel formats (also the prepacked formats of frt_sgemm_pack_a/b when the tier's variant
 * runs its own kernels rather than the BLAS):
 *   A: for each K block k0 (size kc = min(KC, K-k0)) at offset k0*Mpad, the MR-row panels in order;
 *      panel p holds kc * MR floats, [k][r], rows past M zero. Mpad = ceil(M/MR)*MR.
 *   B: the same with NR-column panels, [k][c], columns past N zero, K block at offset k0*Npad.
 */
#include "cpu.h"
#include "sgemm.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/seltrace.h"
#include "util/threadpool.h"

#if FRT_USE_BLAS
#include <cblas.h>
#include <limits.h>
#endif

#define MR_MAX FRT_SGEMM_MR_MAX
#define NR_MAX FRT_SGEMM_NR_MAX
#define KC 256
#define MC 144  /* rounded down to a multiple of the variant's mr */
#define NC 1024 /* multiple of every variant's nr */

/* ------------------------------------------------------------------------------------------ */
/* CPU features, BLAS init                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* Variants of the portable kernel, best first. blas: the AVX2 and portable tiers call the BLAS
 * when built with one (OpenBLAS detects this core as Haswell: half of an AVX-512 core's peak), the
 * AVX-512 tier runs its own kernels. pb_own, pf_b: measured on Zen 3 (AVX2) only; the AVX-512
 * tier keeps its tuning from Zen 5 (pf_b there is for a Zen 5 session to measure). */
/* isa, name, blas, pb_own, pf_b, mr, nr of each tier: the head of its variant, and its entry of
 * sgemm_infos (the same fields without the kernels). */
#define SGEMM_AVX512 FRT_ISA_AVX512, "avx512", 0, 0, 0, 12, 32
#define SGEMM_AVX2 FRT_ISA_AVX2, "avx2", 1, 1, 1, 6, 16
#define SGEMM_PORTABLE FRT_ISA_PORTABLE, "portable", 1, 0, 0, 6, 16
static const frt_sgemm_variant sgemm_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {SGEMM_AVX512, frt_sgemm_ukr_avx512, frt_sgemm_row_avx512, frt_sgemv_n_avx512,
     frt_sgemv_t_avx512, frt_sgemm_ukr_m_avx512, frt_sgemm_pack_a_avx512, NULL},
#endif
#if FRT_TIER_AVX2
    {SGEMM_AVX2, frt_sgemm_ukr_avx2, frt_sgemm_row_avx2, frt_sgemv_n_avx2, frt_sgemv_t_avx2,
     frt_sgemm_ukr_m_avx2, frt_sgemm_pack_a_avx2, frt_sgemm_ukr_pf_avx2},
#endif
#endif
    {SGEMM_PORTABLE, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

/* The tiers' parameters without their kernels, in the same order (so the same pick): what
 * callers that only ask about the tier (BLAS or not, packed sizes, kernel names) read, so that
 * they do not keep every kernel of the table in a selective build that runs none. */
typedef struct sgemm_info {
    frt_isa isa;
    const char *name;
    int blas, pb_own, pf_b;
    int64_t mr, nr;
} sgemm_info;
static const sgemm_info sgemm_infos[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {SGEMM_AVX512},
#endif
#if FRT_TIER_AVX2
    {SGEMM_AVX2},
#endif
#endif
    {SGEMM_PORTABLE},
};

const frt_sgemm_variant *frt_sgemm_pick(frt_isa cap) {
    return FRT_PICK_VARIANT(sgemm_variants, cap);
}

/* The variant of this process's tier (constant once chosen), and its parameters alone. */
static const frt_sgemm_variant *cur(void) { return frt_sgemm_pick(frt_cpu_tier()); }
static const sgemm_info *cur_info(void) { return FRT_PICK_VARIANT(sgemm_infos, frt_cpu_tier()); }

frt_isa frt_sgemm_isa(void) { return cur_info()->isa; }

/* 1 when the tier's variant hands plain products to the BLAS. */
static int use_blas(const frt_sgemm_variant *v) { return FRT_USE_BLAS && v->blas; }

/* 1 when products with a prepacked B go to the BLAS too (then Bp is a plain row-major copy). */
static int use_blas_pb(const frt_sgemm_variant *v) { return use_blas(v) && !v->pb_own; }

int frt_sgemm_uses_blas(void) { return FRT_USE_BLAS && cur_info()->blas; }

int frt_sgemm_pb_uses_blas(void) {
    const sgemm_info *v = cur_info();
    return FRT_USE_BLAS && v->blas && !v->pb_own;
}

int frt_sgemm_have_blas(void) { return FRT_USE_BLAS ? 1 : 0; }

#if FRT_USE_BLAS
static pthread_once_t g_blas_once = PTHREAD_ONCE_INIT;
static void blas_init_once(void) { openblas_set_num_threads(1); }
#endif

void frt_blas_init(void) {
#if FRT_USE_BLAS
    pthread_once(&g_blas_once, blas_init_once);
#endif
}

/* ------------------------------------------------------------------------------------------ */
/* Small helpers                                                                              */
/* ------------------------------------------------------------------------------------------ */

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* C[M,N] = beta * C (beta == 0: zero, C not read). */
static void scale_c(int64_t M, int64_t N, float beta, float *C, int64_t ldc) {
    for (int64_t i = 0; i < M; i++) {
        float *c = C + i * ldc;
        if (beta == 0.0f) memset(c, 0, (size_t)N * sizeof(float));
        else if (beta != 1.0f)
            for (int64_t j = 0; j < N; j++) c[j] *= beta;
    }
}

/* y[n] (stride incy) = beta * y; beta == 0 zeroes without reading. */
static void scale_y(int64_t n, float beta, float *y, int64_t incy) {
    for (int64_t i = 0; i < n; i++) y[i * incy] = beta == 0.0f ? 0.0f : y[i * incy] * beta;
}

/* ------------------------------------------------------------------------------------------ */
/* Portable GEMV                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* Dot product with 8 independent accumulators (the compiler's SLP vectorizer packs them). */
static float dot_c(int64_t n, const float *a, const float *b) {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
        s4 += a[i + 4] * b[i + 4];
        s5 += a[i + 5] * b[i + 5];
        s6 += a[i + 6] * b[i + 6];
        s7 += a[i + 7] * b[i + 7];
    }
    for (; i < n; i++) s0 += a[i] * b[i];
    return ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7));
}

/* y[n] += a * x[n] */
static void axpy_c(int64_t n, float a, const float *x, float *y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        y[i] += a * x[i];
        y[i + 1] += a * x[i + 1];
        y[i + 2] += a * x[i + 2];
        y[i + 3] += a * x[i + 3];
        y[i + 4] += a * x[i + 4];
        y[i + 5] += a * x[i + 5];
        y[i + 6] += a * x[i + 6];
        y[i + 7] += a * x[i + 7];
    }
    for (; i < n; i++) y[i] += a * x[i];
}

static void sgemv_c(int transA, int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
                    const float *x, float beta, float *y) {
    if (!transA) {
        for (int64_t i = 0; i < M; i++) {
            float d = alpha * dot_c(N, A + i * lda, x);
            y[i] = beta == 0.0f ? d : d + beta * y[i];
        }
    } else {
        scale_y(N, beta, y, 1);
        for (int64_t i = 0; i < M; i++) axpy_c(N, alpha * x[i], A + i * lda, y);
    }
}

static void sgemv_var(const frt_sgemm_variant *v, int transA, int64_t M, int64_t N, float alpha,
                      const float *A, int64_t lda, const float *x, float beta, float *y) {
    int64_t ny = transA ? N : M, nx = transA ? M : N;
    if (ny <= 0) return;
    if (nx <= 0) {
        scale_y(ny, beta, y, 1);
        return;
    }
    if (v->gemv_n) {
        if (transA) v->gemv_t(M, N, alpha, A, lda, x, beta, y);
        else v->gemv_n(M, N, alpha, A, lda, x, beta, y);
        return;
    }
    sgemv_c(transA, M, N, alpha, A, lda, x, beta, y);
}

void frt_sgemv_tier(frt_isa cap, int transA, int64_t M, int64_t N, float alpha, const float *A,
                    int64_t lda, const float *x, float beta, float *y) {
    sgemv_var(frt_sgemm_pick(cap), transA, M, N, alpha, A, lda, x, beta, y);
}

/* ------------------------------------------------------------------------------------------ */
/* Portable blocked GEMM                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* Operands of one portable GEMM. Either the plain matrix (A/lda/transA) or a prepacked buffer
 * (Ap != NULL: Apad = padded row count of the whole packed matrix, a_off = first row, a multiple
 * of MR). Likewise for B with columns. */
typedef struct gemm_ops {
    const frt_sgemm_variant *v; /* register tile and inner loops */
    int transA, transB;
    const float *A;
    int64_t lda;
    const float *B;
    int64_t ldb;
    const float *Ap;
    int64_t Apad, a_off;
    const float *Bp;
    int64_t Bpad, b_off;
    frt_sgemm_epilogue_fn epi; /* applied to each finished tile, or NULL */
    const void *epi_ctx;
    int64_t i_base, j_base;    /* position of this product's C in the epilogue's coordinates */
} gemm_ops;

/* Packs op(A)[i0:i0+mc, k0:k0+kc] into MR-row panels at dst (panel r at dst + r*kc). */
static void pack_a(const frt_sgemm_variant *v, int transA, const float *A, int64_t lda, int64_t i0,
                   int64_t mc, int64_t k0, int64_t kc, float *dst) {
    const int64_t MR = v->mr;
    for (int64_t ir = 0; ir < mc; ir += MR) {
        int64_t mr = min64(MR, mc - ir);
        float *d = dst + ir * kc;
        if (!transA && mr == MR && v->pack_a) {
            v->pack_a(kc, A + (i0 + ir) * lda + k0, lda, d);
        } else if (!transA) {
            const float *rows[MR_MAX];
            for (int64_t r = 0; r < MR; r++) rows[r] = A + (i0 + ir + (r < mr ? r : 0)) * lda + k0;
            if (mr == MR) {
                for (int64_t k = 0; k < kc; k++, d += MR)
                    for (int64_t r = 0; r < MR; r++) d[r] = rows[r][k];
            } else {
                for (int64_t k = 0; k < kc; k++, d += MR)
                    for (int64_t r = 0; r < MR; r++) d[r] = r < mr ? rows[r][k] : 0.0f;
            }
        } else {
            for (int64_t k = 0; k < kc; k++, d += MR) {
                const float *s = A + (k0 + k) * lda + i0 + ir;
                if (mr == MR) memcpy(d, s, MR * sizeof(float));
                else
                    for (int64_t r = 0; r < MR; r++) d[r] = r < mr ? s[r] : 0.0f;
            }
        }
    }
}

/* Packs op(B)[k0:k0+kc, j0:j0+nc] into NR-column panels at dst (panel c at dst + c*kc). */
static void pack_b(int64_t NR, int transB, const float *B, int64_t ldb, int64_t k0, int64_t kc,
                   int64_t j0, int64_t nc, float *dst) {
    int64_t nfull = nc / NR * NR;
    if (!transB) {
        /* row by row: sequential reads, each row scattered over the panels */
        for (int64_t k = 0; k < kc; k++) {
            const float *s = B + (k0 + k) * ldb + j0;
            float *d = dst + k * NR;
            int64_t jr = 0;
            for (; jr < nfull; jr += NR) memcpy(d + jr * kc, s + jr, NR * sizeof(float));
            if (jr < nc) {
                float *dk = d + jr * kc;
                int64_t c = 0;
                for (; c < nc - jr; c++) dk[c] = s[jr + c];
                for (; c < NR; c++) dk[c] = 0.0f;
            }
        }
        return;
    }
    for (int64_t jr = 0; jr < nc; jr += NR) {
        int64_t nr = min64(NR, nc - jr);
        float *d = dst + jr * kc;
        const float *rows[NR_MAX];
        for (int64_t c = 0; c < NR; c++) rows[c] = B + (j0 + jr + (c < nr ? c : 0)) * ldb + k0;
        if (nr == NR) {
            for (int64_t k = 0; k < kc; k++, d += NR)
                for (int64_t c = 0; c < NR; c++) d[c] = rows[c][k];
        } else {
            for (int64_t k = 0; k < kc; k++, d += NR)
                for (int64_t c = 0; c < NR; c++) d[c] = c < nr ? rows[c][k] : 0.0f;
        }
    }
}

/* Portable register kernel (the portable variant's 6 x 16 tile): tile[6][16] = Ap * Bp. */
#define MR_C 6
#define NR_C 16
static void ukr_c(int64_t kc, const float *a, const float *b, float *tile) {
    float acc[MR_C][NR_C];
    memset(acc, 0, sizeof acc);
    for (int64_t k = 0; k < kc; k++) {
        for (int r = 0; r < MR_C; r++) {
            float ar = a[r];
            for (int c = 0; c < NR_C; c++) acc[r][c] += ar * b[c];
        }
        a += MR_C;
        b += NR_C;
    }
    memcpy(tile, acc, sizeof acc);
}

/* C[mr, nr] = alpha * Ap-panel * Bp-panel + beta * C. */
static void micro(const frt_sgemm_variant *v, int64_t kc, const float *a, const float *b,
                  float *C, int64_t ldc, int64_t mr, int64_t nr, float alpha, float beta) {
    const int64_t NR = v->nr;
    if (v->ukr && mr == v->mr && nr == NR) {
        v->ukr(kc, a, b, C, ldc, alpha, beta);
        return;
    }
    if (v->ukr_m && nr == NR) { /* the last panel of M */
        v->ukr_m(mr, kc, a, b, C, ldc, alpha, beta);
        return;
    }
    if (v->row && nr == NR && 2 * mr <= v->mr) {
        /* a short last panel (M = 64 leaves 4 of 12 rows): one row at a time costs about its
         * share of a full tile instead of the whole tile */
        for (int64_t r = 0; r < mr; r++) v->row(kc, a + r, v->mr, b, C + r * ldc, alpha, beta);
        return;
    }
    _Alignas(64) float tile[MR_MAX * NR_MAX];
    if (v->ukr) v->ukr(kc, a, b, tile, NR, 1.0f, 0.0f);
    else ukr_c(kc, a, b, tile);
    for (int64_t r = 0; r < mr; r++) {
        float *c = C + r * ldc;
        const float *t = tile + r * NR;
        if (beta == 0.0f)
            for (int64_t j = 0; j < nr; j++) c[j] = alpha * t[j];
        else
            for (int64_t j = 0; j < nr; j++) c[j] = alpha * t[j] + beta * c[j];
    }
}

/* One row of C against packed B panels: c[nc] = alpha * a[kc] (stride inca) * Bblk + beta * c. */
static void row_panels(const frt_sgemm_variant *v, int64_t kc, const float *a, int64_t inca,
                       const float *bblk, float *c, int64_t nc, float alpha, float beta) {
    const int64_t NR = v->nr;
    for (int64_t jr = 0; jr < nc; jr += NR) {
        int64_t nr = min64(NR, nc - jr);
        const float *b = bblk + jr * kc;
        _Alignas(64) float acc[NR_MAX];
        if (v->row) {
            if (nr == NR) {
                v->row(kc, a, inca, b, c + jr, alpha, beta);
                continue;
            }
            v->row(kc, a, inca, b, acc, 1.0f, 0.0f);
        } else {
            for (int64_t j = 0; j < NR; j++) acc[j] = 0.0f;
            for (int64_t k = 0; k < kc; k++) {
                float ak = a[k * inca];
                for (int64_t j = 0; j < NR; j++) acc[j] += ak * b[k * NR + j];
            }
        }
        for (int64_t j = 0; j < nr; j++)
            c[jr + j] = beta == 0.0f ? alpha * acc[j] : alpha * acc[j] + beta * c[jr + j];
    }
}

/* Per-thread packing buffers, allocated on first use and freed at thread exit. */
#define BUF_A_FLOATS ((size_t)MC * KC)
#define BUF_B_FLOATS ((size_t)KC * NC)
static pthread_key_t g_buf_key;
static int g_buf_key_ok;
static pthread_once_t g_buf_once = PTHREAD_ONCE_INIT;
static _Thread_local float *t_buf;
static void buf_key_create(void) { g_buf_key_ok = pthread_key_create(&g_buf_key, free) == 0; }

static float *thread_buf(void) {
    if (t_buf) return t_buf;
    pthread_once(&g_buf_once, buf_key_create);
    void *p = NULL;
    if (posix_memalign(&p, 64, (BUF_A_FLOATS + BUF_B_FLOATS) * sizeof(float)) != 0) return NULL;
    if (g_buf_key_ok) pthread_setspecific(g_buf_key, p);
    t_buf = p;
    return t_buf;
}

/* Element (i, k) of op(A) and (k, j) of op(B), plain or prepacked (K = full depth). */
static float elem_a(const gemm_ops *o, int64_t K, int64_t i, int64_t k) {
    if (!o->Ap) return o->transA ? o->A[k * o->lda + i] : o->A[i * o->lda + k];
    const int64_t MR = o->v->mr;
    int64_t k0 = k / KC * KC, kc = min64(KC, K - k0), r = o->a_off + i;
    return o->Ap[k0 * o->Apad + (r / MR) * MR * kc + (k - k0) * MR + r % MR];
}
static float elem_b(const gemm_ops *o, int64_t K, int64_t k, int64_t j) {
    if (!o->Bp) return o->transB ? o->B[j * o->ldb + k] : o->B[k * o->ldb + j];
    const int64_t NR = o->v->nr;
    int64_t k0 = k / KC * KC, kc = min64(KC, K - k0), c = o->b_off + j;
    return o->Bp[k0 * o->Bpad + (c / NR) * NR * kc + (k - k0) * NR + c % NR];
}

void frt_sgemm_thread_warmup(void) { (void)thread_buf(); }

/* Unblocked fallback (when the packing buffer cannot be allocated). */
static void gemm_naive(const gemm_ops *o, int64_t M, int64_t N, int64_t K, float alpha,
                       float beta, float *C, int64_t ldc) {
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            float s = 0.0f;
            for (int64_t k = 0; k < K; k++) s += elem_a(o, K, i, k) * elem_b(o, K, k, j);
            float *c = C + i * ldc + j;
            *c = beta == 0.0f ? alpha * s : alpha * s + beta * *c;
        }
    if (o->epi) o->epi(o->epi_ctx, C, ldc, o->i_base, o->j_base, M, N);
}

/* The blocked driver. Requires M, N, K > 0. */
static void gemm_blocked(const gemm_ops *o, int64_t M, int64_t N, int64_t K, float alpha,
                         float beta, float *C, int64_t ldc) {
    const frt_sgemm_variant *v = o->v;
    const int64_t MR = v->mr, NR = v->nr, mcmax = MC / MR * MR;
    float *bufA = NULL, *bufB = NULL;
    if (!o->Ap || !o->Bp) {
        float *buf = thread_buf();
        if (!buf) {
            gemm_naive(o, M, N, K, alpha, beta, C, ldc);
            return;
        }
        bufA = buf;
        bufB = buf + BUF_A_FLOATS;
    }
    const int64_t Mpad = (M + MR - 1) / MR * MR;
    if (o->Bp && !o->Ap && M > 1 && N > NC && Mpad * K <= (int64_t)BUF_B_FLOATS) {
        /* B is prepacked and its buffer free: pack all of A once there (the prepacked-A format)
         * instead of once per NC block of columns */
        gemm_ops pa = *o;
        for (int64_t k0 = 0; k0 < K; k0 += KC)
            pack_a(v, o->transA, o->A, o->lda, 0, M, k0, min64(KC, K - k0), bufB + k0 * Mpad);
        pa.Ap = bufB;
        pa.Apad = Mpad;
        pa.a_off = 0;
        gemm_blocked(&pa, M, N, K, alpha, beta, C, ldc);
        return;
    }
    for (int64_t j0 = 0; j0 < N; j0 += NC) {
        int64_t nc = min64(NC, N - j0);
        for (int64_t k0 = 0; k0 < K; k0 += KC) {
            int64_t kc = min64(KC, K - k0);
            float bk = k0 == 0 ? beta : 1.0f;
            const float *bblk;
            if (o->Bp) {
                bblk = o->Bp + k0 * o->Bpad + (o->b_off + j0) * kc;
            } else {
                pack_b(NR, o->transB, o->B, o->ldb, k0, kc, j0, nc, bufB);
                bblk = bufB;
            }
            if (M == 1 && !o->Ap) {
                /* a single row: stream it against the B panels without packing A */
                const float *a = o->transA ? o->A + k0 * o->lda : o->A + k0;
                row_panels(v, kc, a, o->transA ? o->lda : 1, bblk, C + j0, nc, alpha, bk);
                if (o->epi && k0 + kc >= K)
                    o->epi(o->epi_ctx, C + j0, ldc, o->i_base, o->j_base + j0, 1, nc);
                continue;
            }
            for (int64_t i0 = 0; i0 < M; i0 += mcmax) {
                int64_t mc = min64(mcmax, M - i0);
                const float *ablk;
                if (o->Ap) {
                    ablk = o->Ap + k0 * o->Apad + (o->a_off + i0) * kc;
                } else {
                    pack_a(v, o->transA, o->A, o->lda, i0, mc, k0, kc, bufA);
                    ablk = bufA;
                }
                for (int64_t jr = 0; jr < nc; jr += NR) {
                    int64_t nr = min64(NR, nc - jr);
                    /* v->pf_b: the next B panel (kc*NR floats, from L3 or DRAM for weights) is
                     * prefetched into L1 a slice per tile while this one is in use; by the
                     * kernel between its FMAs where the variant has ukr_pf (a burst of
                     * prefetches before the tile stalls on full miss buffers: -4% on Zen 3) */
                    const int64_t pf_lines = v->pf_b && jr + NR < nc ? kc * NR / 16 : 0;
                    const char *pfb = pf_lines ? (const char *)(bblk + (jr + NR) * kc) : NULL;
                    const int64_t ntiles = (mc + MR - 1) / MR;
                    const int64_t pf_per = (pf_lines + ntiles - 1) / ntiles;
                    int64_t pf_done = 0;
                    for (int64_t ir = 0; ir < mc; ir += MR) {
                        int64_t mr = min64(MR, mc - ir);
                        float *ct = C + (i0 + ir) * ldc + j0 + jr;
                        if (v->ukr_pf && mr == MR && nr == NR) {
                            /* the kernel spreads this tile's share over its k loop */
                            const int64_t l = min64(pf_per, pf_lines - pf_done);
                            v->ukr_pf(kc, ablk + ir * kc, bblk + jr * kc, ct, ldc, alpha, bk,
                                      l > 0 ? pfb + pf_done * 64 : NULL, l > 0 ? l : 0);
                            pf_done += l > 0 ? l : 0;
                        } else {
                            for (int64_t l = 0; l < pf_per && pf_done < pf_lines; l++, pf_done++)
                                __builtin_prefetch(pfb + pf_done * 64, 0, 3);
                            micro(v, kc, ablk + ir * kc, bblk + jr * kc, ct, ldc, mr, nr, alpha,
                                  bk);
                        }
                        if (o->epi && k0 + kc >= K)
                            o->epi(o->epi_ctx, ct, ldc, o->i_base + i0 + ir, o->j_base + j0 + jr,
                                   mr, nr);
                    }
                }
            }
        }
    }
}

/* Portable GEMM entry with gemv shortcuts for contiguous vector cases. */
static void sgemm_port(const frt_sgemm_variant *v, int transA, int transB, int64_t M, int64_t N, int64_t K,
                       float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                       float beta, float *C, int64_t ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        scale_c(M, N, beta, C, ldc);
        return;
    }
    if (M == 1 && !transA) {
        /* C[1,N] = alpha * a[K] op(B) */
        if (transB) sgemv_var(v, 0, N, K, alpha, B, ldb, A, beta, C);
        else sgemv_var(v, 1, K, N, alpha, B, ldb, A, beta, C);
        return;
    }
    if (N == 1 && ldc == 1 && (transB || ldb == 1)) {
        /* C[M] = alpha * op(A) b[K] */
        if (transA) sgemv_var(v, 1, K, M, alpha, A, lda, B, beta, C);
        else sgemv_var(v, 0, M, K, alpha, A, lda, B, beta, C);
        return;
    }
    gemm_ops o = {v, transA, transB, A, lda, B, ldb, NULL, 0, 0, NULL, 0, 0, NULL, NULL, 0, 0};
    gemm_blocked(&o, M, N, K, alpha, beta, C, ldc);
}

void frt_sgemm_tier(frt_isa cap, int transA, int transB, int64_t M, int64_t N, int64_t K,
                    float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                    float beta, float *C, int64_t ldc) {
    sgemm_port(frt_sgemm_pick(cap), transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* ------------------------------------------------------------------------------------------ */
/* BLAS dispatch                                                                              */
/* ------------------------------------------------------------------------------------------ */

#if FRT_USE_BLAS
static int fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

static void sgemm_blas(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha,
                       const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                       float *C, int64_t ldc) {
    frt_blas_init();
    if (FRT_SELTRACE_ON) frt_seltrace_add("provider", "openblas", NULL);
    enum CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans;
    enum CBLAS_TRANSPOSE tb = transB ? CblasTrans : CblasNoTrans;
    if (M == 1) {
        /* C[1,N] row = alpha * op(B)^T a + beta * C; a has stride lda when transposed */
        if (beta == 0.0f) memset(C, 0, (size_t)N * sizeof(float));
        int inca = transA ? (int)lda : 1;
        if (transB)
            cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)N, (int)K, alpha, B, (int)ldb, A, inca,
                        beta, C, 1);
        else
            cblas_sgemv(CblasRowMajor, CblasTrans, (int)K, (int)N, alpha, B, (int)ldb, A, inca,
                        beta, C, 1);
        return;
    }
    if (N == 1) {
        /* C[M,1] column (stride ldc) = alpha * op(A) b + beta * C; b has stride ldb unless
         * transposed */
        if (beta == 0.0f) scale_y(M, 0.0f, C, ldc);
        int incb = transB ? 1 : (int)ldb;
        if (transA)
            cblas_sgemv(CblasRowMajor, CblasTrans, (int)K, (int)M, alpha, A, (int)lda, B, incb,
                        beta, C, (int)ldc);
        else
            cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)M, (int)K, alpha, A, (int)lda, B, incb,
                        beta, C, (int)ldc);
        return;
    }
    cblas_sgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb,
                beta, C, (int)ldc);
}
#endif

void frt_sgemm(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha,
               const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
               int64_t ldc) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        scale_c(M, N, beta, C, ldc);
        return;
    }
    const frt_sgemm_variant *v = cur();
#if FRT_USE_BLAS
    if (use_blas(v) && fits_int(M) && fits_int(N) && fits_int(K) && fits_int(lda) &&
        fits_int(ldb) && fits_int(ldc)) {
        sgemm_blas(transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
#endif
    sgemm_port(v, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void frt_sgemv(int transA, int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
               const float *x, float beta, float *y) {
    int64_t ny = transA ? N : M, nx = transA ? M : N;
    if (ny <= 0) return;
    if (nx <= 0) {
        scale_y(ny, beta, y, 1);
        return;
    }
    const frt_sgemm_variant *v = cur();
#if FRT_USE_BLAS
    if (use_blas(v) && fits_int(M) && fits_int(N) && fits_int(lda)) {
        frt_blas_init();
        if (FRT_SELTRACE_ON) frt_seltrace_add("provider", "openblas", NULL);
        if (beta == 0.0f) memset(y, 0, (size_t)ny * sizeof(float));
        cblas_sgemv(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, (int)M, (int)N, alpha, A,
                    (int)lda, x, 1, beta, y, 1);
        return;
    }
#endif
    sgemv_var(v, transA, M, N, alpha, A, lda, x, beta, y);
}

/* ------------------------------------------------------------------------------------------ */
/* Prepacked operands                                                                         */
/* ------------------------------------------------------------------------------------------ */

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

size_t frt_sgemm_pack_a_size(int64_t M, int64_t K) {
    if (M <= 0 || K <= 0) return 0;
    const sgemm_info *v = cur_info();
    if (frt_sgemm_uses_blas()) return (size_t)M * (size_t)K;
    return (size_t)round_up(M, v->mr) * (size_t)K;
}

size_t frt_sgemm_pack_b_size(int64_t K, int64_t N) {
    if (N <= 0 || K <= 0) return 0;
    const sgemm_info *v = cur_info();
    if (frt_sgemm_pb_uses_blas()) return (size_t)K * (size_t)N;
    return (size_t)round_up(N, v->nr) * (size_t)K;
}

void frt_sgemm_pack_a(int transA, int64_t M, int64_t K, const float *A, int64_t lda, float *Ap) {
    if (M <= 0 || K <= 0) return;
    const frt_sgemm_variant *v = cur();
    if (use_blas(v)) {
        for (int64_t i = 0; i < M; i++)
            for (int64_t k = 0; k < K; k++)
                Ap[i * K + k] = transA ? A[k * lda + i] : A[i * lda + k];
        return;
    }
    int64_t Mpad = round_up(M, v->mr);
    for (int64_t k0 = 0; k0 < K; k0 += KC) {
        int64_t kc = min64(KC, K - k0);
        pack_a(v, transA, A, lda, 0, M, k0, kc, Ap + k0 * Mpad);
    }
}

void frt_sgemm_pack_b(int transB, int64_t K, int64_t N, const float *B, int64_t ldb, float *Bp) {
    if (N <= 0 || K <= 0) return;
    const frt_sgemm_variant *v = cur();
    if (use_blas_pb(v)) {
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < N; j++)
                Bp[k * N + j] = transB ? B[j * ldb + k] : B[k * ldb + j];
        return;
    }
    int64_t Npad = round_up(N, v->nr);
    for (int64_t k0 = 0; k0 < K; k0 += KC) {
        int64_t kc = min64(KC, K - k0);
        pack_b(v->nr, transB, B, ldb, k0, kc, 0, N, Bp + k0 * Npad);
    }
}

/* Rows [i0, i0+m) of a packed-A product; i0 a multiple of the variant's mr (own kernels). */
static void pa_rows(int64_t Mtot, int64_t i0, int64_t m, int64_t N, int64_t K, float alpha,
                    const float *Ap, int transB, const float *B, int64_t ldb, float beta,
                    float *C, int64_t ldc) {
    if (m <= 0 || N <= 0) return;
    if (K <= 0) {
        scale_c(m, N, beta, C + i0 * ldc, ldc);
        return;
    }
    const frt_sgemm_variant *v = cur();
    if (use_blas(v)) {
        frt_sgemm(0, transB, m, N, K, alpha, Ap + i0 * K, K, B, ldb, beta, C + i0 * ldc, ldc);
        return;
    }
    gemm_ops o = {v, 0, transB, NULL, 0, B, ldb, Ap, round_up(Mtot, v->mr), i0, NULL, 0, 0, NULL, NULL, 0, 0};
    gemm_blocked(&o, m, N, K, alpha, beta, C + i0 * ldc, ldc);
}

/* Columns [j0, j0+n) of a packed-B product; j0 a multiple of the variant's nr (own kernels). */
static void pb_cols(int transA, int64_t M, int64_t Ntot, int64_t j0, int64_t n, int64_t K,
                    float alpha, const float *A, int64_t lda, const float *Bp, float beta,
                    float *C, int64_t ldc, frt_sgemm_epilogue_fn epi, const void *epi_ctx,
                    int64_t i_base) {
    if (M <= 0 || n <= 0) return;
    if (K <= 0 || use_blas_pb(cur())) {
        if (K <= 0) scale_c(M, n, beta, C + j0, ldc);
        else frt_sgemm(transA, 0, M, n, K, alpha, A, lda, Bp + j0, Ntot, beta, C + j0, ldc);
        if (epi) epi(epi_ctx, C + j0, ldc, i_base, j0, M, n);
        return;
    }
    const frt_sgemm_variant *v = cur();
    gemm_ops o = {v, transA, 0, A, lda, NULL, 0, NULL, 0, 0, Bp, round_up(Ntot, v->nr), j0,
                  epi, epi_ctx, i_base, j0};
    gemm_blocked(&o, M, n, K, alpha, beta, C + j0, ldc);
}

void frt_sgemm_pa(int64_t M, int64_t N, int64_t K, float alpha, const float *Ap, int transB,
                  const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    pa_rows(M, 0, M, N, K, alpha, Ap, transB, B, ldb, beta, C, ldc);
}

void frt_sgemm_pb(int transA, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                  int64_t lda, const float *Bp, float beta, float *C, int64_t ldc) {
    pb_cols(transA, M, N, 0, N, K, alpha, A, lda, Bp, beta, C, ldc, NULL, NULL, 0);
}

void frt_sgemm_pb_n(int transA, int64_t M, int64_t N, int64_t n, int64_t K, float alpha,
                    const float *A, int64_t lda, const float *Bp, float beta, float *C,
                    int64_t ldc) {
    pb_cols(transA, M, N, 0, n < N ? n : N, K, alpha, A, lda, Bp, beta, C, ldc, NULL, NULL, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Multi-threaded splitting                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* Threads come from threadpool.h's cost model: 2 flops per multiply-add (gemm), or the bytes of
 * the matrix read once (gemv). */

typedef struct mt_job {
    int kind; /* 0 plain gemm, 1 packed A, 2 packed B, 3 gemv */
    int split_n; /* 1: blocks of columns (or gemv outputs), 0: blocks of rows */
    int64_t block, total;
    int transA, transB;
    int64_t M, N, K;
    float alpha, beta;
    const float *A;
    int64_t lda;
    const float *B;
    int64_t ldb;
    float *C;
    int64_t ldc;
    const float *x;
    frt_sgemm_epilogue_fn epi; /* kind 2 only */
    const void *epi_ctx;
} mt_job;

static void mt_task(void *ctx, size_t t) {
    const mt_job *j = ctx;
    int64_t s = (int64_t)t * j->block, n = min64(j->block, j->total - s);
    if (n <= 0) return;
    switch (j->kind) {
    case 0:
        if (j->split_n)
            frt_sgemm(j->transA, j->transB, j->M, n, j->K, j->alpha, j->A, j->lda,
                      j->transB ? j->B + s * j->ldb : j->B + s, j->ldb, j->beta, j->C + s, j->ldc);
        else
            frt_sgemm(j->transA, j->transB, n, j->N, j->K, j->alpha,
                      j->transA ? j->A + s : j->A + s * j->lda, j->lda, j->B, j->ldb, j->beta,
                      j->C + s * j->ldc, j->ldc);
        break;
    case 1:
        if (j->split_n)
            pa_rows(j->M, 0, j->M, n, j->K, j->alpha, j->A, j->transB,
                    j->transB ? j->B + s * j->ldb : j->B + s, j->ldb, j->beta, j->C + s, j->ldc);
        else
            pa_rows(j->M, s, n, j->N, j->K, j->alpha, j->A, j->transB, j->B, j->ldb, j->beta,
                    j->C, j->ldc);
        break;
    case 2:
        if (j->split_n)
            pb_cols(j->transA, j->M, j->N, s, n, j->K, j->alpha, j->A, j->lda, j->B, j->beta,
                    j->C, j->ldc, j->epi, j->epi_ctx, 0);
        else
            pb_cols(j->transA, n, j->N, 0, j->N, j->K, j->alpha,
                    j->transA ? j->A + s : j->A + s * j->lda, j->lda, j->B, j->beta,
                    j->C + s * j->ldc, j->ldc, j->epi, j->epi_ctx, s);
        break;
    default:
        /* gemv: split the outputs. transA == 0: rows s..s+n of A; else columns. */
        if (!j->transA)
            frt_sgemv(0, n, j->N, j->alpha, j->A + s * j->lda, j->lda, j->x, j->beta, j->C + s);
        else
            frt_sgemv(1, j->M, n, j->alpha, j->A + s, j->lda, j->x, j->beta, j->C + s);
        break;
    }
}

/* Number of tasks and block size for splitting `total` into pieces of multiples of `align`. */
static int plan_split(int threads, int64_t total, int64_t align, int64_t *block) {
    int64_t per = (total + threads - 1) / threads;
    per = round_up(per, align);
    if (per >= total) return 1;
    *block = per;
    return (int)((total + per - 1) / per);
}

static void run_mt(frt_threadpool *tp, mt_job *j, int64_t rows, int64_t cols, int64_t macs,
                   int64_t row_align, int64_t col_align) {
    int threads = frt_par_threads(tp, 2.0 * (double)macs * FRT_PAR_NS_PER_FLOP);
    int tasks = 1;
    if (threads > 1) {
        if (cols >= rows || rows < 2 * row_align) {
            j->split_n = 1;
            j->total = cols;
            tasks = plan_split(threads, cols, col_align, &j->block);
        }
        if (tasks <= 1) {
            j->split_n = 0;
            j->total = rows;
            tasks = plan_split(threads, rows, row_align, &j->block);
        }
    }
    if (tasks <= 1) {
        j->split_n = 0;
        j->total = rows;
        j->block = rows;
        mt_task(j, 0);
        return;
    }
    /* the caller runs tasks too, in this run or a later one: its packing buffer is allocated
       now, not in whichever later run first hands it a task (steady-state runs allocate nothing) */
    (void)thread_buf();
    frt_parallel_for(tp, (size_t)tasks, mt_task, j);
}

void frt_sgemm_mt(frt_threadpool *tp, int transA, int transB, int64_t M, int64_t N, int64_t K,
                  float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                  float beta, float *C, int64_t ldc) {
    if (M <= 0 || N <= 0) return;
    mt_job j = {0, 0, 0, 0, transA, transB, M, N, K, alpha, beta, A, lda, B, ldb, C, ldc, NULL, NULL, NULL};
    run_mt(tp, &j, M, N, M * N * (K > 0 ? K : 1), cur()->mr, 64);
}

void frt_sgemm_pa_mt(frt_threadpool *tp, int64_t M, int64_t N, int64_t K, float alpha,
                     const float *Ap, int transB, const float *B, int64_t ldb, float beta, float *C,
                     int64_t ldc) {
    if (M <= 0 || N <= 0) return;
    mt_job j = {1, 0, 0, 0, 0, transB, M, N, K, alpha, beta, Ap, 0, B, ldb, C, ldc, NULL, NULL, NULL};
    int64_t mr = cur()->mr;
    run_mt(tp, &j, M, N, M * N * (K > 0 ? K : 1), MC / mr * mr, 64);
}

void frt_sgemm_pb_mt(frt_threadpool *tp, int transA, int64_t M, int64_t N, int64_t K,
                     float alpha, const float *A, int64_t lda, const float *Bp, float beta, float *C,
                     int64_t ldc) {
    if (M <= 0 || N <= 0) return;
    mt_job j = {2, 0, 0, 0, transA, 0, M, N, K, alpha, beta, A, lda, Bp, 0, C, ldc, NULL,
                NULL, NULL};
    run_mt(tp, &j, M, N, M * N * (K > 0 ? K : 1), cur()->mr, 64);
}

void frt_sgemm_pb_epi_mt(frt_threadpool *tp, int64_t M, int64_t N, int64_t K, const float *A,
                         int64_t lda, const float *Bp, float *C, int64_t ldc,
                         frt_sgemm_epilogue_fn epi, const void *epi_ctx) {
    if (M <= 0 || N <= 0) return;
    mt_job j = {2, 0, 0, 0, 0, 0, M, N, K, 1.0f, 0.0f, A, lda, Bp, 0, C, ldc, NULL,
                epi, epi_ctx};
    run_mt(tp, &j, M, N, M * N * (K > 0 ? K : 1), cur()->mr, 64);
}

void frt_sgemv_mt(frt_threadpool *tp, int transA, int64_t M, int64_t N, float alpha,
                  const float *A, int64_t lda, const float *x, float beta, float *y) {
    int64_t ny = transA ? N : M;
    int threads = frt_par_threads(tp, (double)M * (double)N * 4 * FRT_PAR_NS_PER_BYTE);
    if (threads <= 1 || ny < 128) {
        frt_sgemv(transA, M, N, alpha, A, lda, x, beta, y);
        return;
    }
    mt_job j = {3, 1, 0, ny, transA, 0, M, N, 0, alpha, beta, A, lda, NULL, 0, y, 1, x, NULL, NULL};
    int tasks = plan_split(threads, ny, 64, &j.block);
    if (tasks <= 1) {
        frt_sgemv(transA, M, N, alpha, A, lda, x, beta, y);
        return;
    }
    frt_parallel_for(tp, (size_t)tasks, mt_task, &j);
}
