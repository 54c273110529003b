/* Internal single-precision GEMM / GEMV used by Gemm, MatMul, Conv and friends.
 *
 * CONTRACT (all functions):
 *   - Row-major storage. op(X) = X when transX == 0, X^T when transX != 0.
 *   - frt_sgemm computes C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C.
 *       A is stored M x K (lda >= K) when transA == 0, K x M (lda >= M) otherwise.
 *       B is stored K x N (ldb >= N) when transB == 0, N x K (ldb >= K) otherwise.
 *       C is M x N with ldc >= N.
 *   - beta == 0: C is write-only (never read; NaN/garbage in C does not propagate).
 *   - K == 0: C = beta * C (C zeroed when beta == 0). M == 0 or N == 0: no-op.
 *   - Runs entirely on the calling thread (the BLAS is pinned to 1 thread by frt_blas_init) except
 *     the *_mt variants, which may split work over the given pool. All functions are thread-safe
 *     and reentrant and never fail. The portable kernel packs into a per-thread buffer (~1.1 MB)
 *     malloc'ed on the thread's first portable GEMM (or by frt_sgemm_thread_warmup) and freed at
 *     thread exit; if that allocation fails it falls back to an unblocked loop.
 *   - C must not overlap A or B.
 *
 * Implementation: a cache-blocked kernel whose register tile and inner loops are the variant of
 * the ISA tier (frt_sgemm_pick(frt_cpu_tier()): x86/sgemm_avx512.c, x86/sgemm_avx2.c or portable
 * C). With FRT_USE_BLAS, the AVX2 and portable tiers call OpenBLAS instead (cblas_sgemv when M == 1
 * or N == 1, since OpenBLAS does not switch by itself); the AVX-512 tier keeps its own kernels.
 * Exception: on the AVX2 tier, products with a prepacked B (frt_sgemm_pb*, weights) run the own
 * kernel (variant pb_own): with B packed once it beats OpenBLAS on Zen 3 (90-93 vs 78-84 GFLOP/s
 * on the transformer shapes, with its B-panel prefetch in the kernel's k loop: ukr_pf) and runs
 * the epilogue of frt_sgemm_pb_epi_mt per tile.
 *
 * The BLAS is initialized lazily: every path into it calls frt_blas_init() first, which does the
 * work once per process (pthread_once), so callers never need to.
 */
#ifndef FRT_OPS_SGEMM_H
#define FRT_OPS_SGEMM_H

#include <stddef.h>
#include <stdint.h>

#include "cpu.h"

struct frt_threadpool;

/* Pins OpenBLAS to the calling thread (openblas_set_num_threads(1)), once per process;
 * idempotent, thread-safe, a no-op without FRT_USE_BLAS. */
void frt_blas_init(void);

/* Allocates the calling thread's packing buffer of the portable kernel now (it is otherwise
 * allocated on the thread's first portable GEMM and freed at thread exit), so later GEMMs on this
 * thread never allocate. Runtimes call it on every worker of their intra-op pool at creation:
 * with BLAS too, since the packed-weight paths run the own kernel on pool threads. */
void frt_sgemm_thread_warmup(void);

/* C = alpha * op(A) * op(B) + beta * C (see the contract above). Best available implementation. */
void frt_sgemm(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha,
               const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
               int64_t ldc);

/* As frt_sgemm, but a large problem may be split along N (or M) into independent blocks run on
 * tp (NULL = serial). Must not be called from inside a frt_parallel_for task on the same pool. */
void frt_sgemm_mt(struct frt_threadpool *tp, int transA, int transB, int64_t M, int64_t N,
                  int64_t K, float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                  float beta, float *C, int64_t ldc);

/* y = alpha * op(A) * x + beta * y, with A stored M x N row-major (lda >= N).
 * transA == 0: x has N entries, y has M.  transA != 0: x has M entries, y has N.
 * Contiguous x and y. beta == 0: y is write-only. */
void frt_sgemv(int transA, int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
               const float *x, float beta, float *y);

/* ---- prepacked constant operands ----
 * For a matrix that is constant for the model's lifetime (weights), pack it once at select time
 * into a buffer of frt_sgemm_pack_*_size(...) floats (64-byte aligned, e.g. from ctx->arena) and
 * then multiply with the packed form. The packed layout is private and depends on the build and
 * tier (a plain row-major copy of op(X) where that product goes to the BLAS; register-panel format
 * for the own kernels: packed B on the AVX2 tier is always in panel format).
 * The packed buffer is only read by the multiply functions. */
size_t frt_sgemm_pack_a_size(int64_t M, int64_t K);
void frt_sgemm_pack_a(int transA, int64_t M, int64_t K, const float *A, int64_t lda, float *Ap);
size_t frt_sgemm_pack_b_size(int64_t K, int64_t N);
void frt_sgemm_pack_b(int transB, int64_t K, int64_t N, const float *B, int64_t ldb, float *Bp);

/* C[M,N] = alpha * Ap * op(B) + beta * C, Ap from frt_sgemm_pack_a(.., M, K, ..). */
void frt_sgemm_pa(int64_t M, int64_t N, int64_t K, float alpha, const float *Ap, int transB,
                  const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
/* C[M,N] = alpha * op(A) * Bp + beta * C, Bp from frt_sgemm_pack_b(.., K, N, ..). */
void frt_sgemm_pb(int transA, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                  int64_t lda, const float *Bp, float beta, float *C, int64_t ldc);

/* C[M,n] = alpha * op(A) * Bp[:, 0:n) + beta * C: the first n <= N columns of a Bp packed by
 * frt_sgemm_pack_b(.., K, N, ..) (e.g. the keys a causal row block sees). */
void frt_sgemm_pb_n(int transA, int64_t M, int64_t N, int64_t n, int64_t K, float alpha,
                    const float *A, int64_t lda, const float *Bp, float beta, float *C,
                    int64_t ldc);

/* Multi-threaded forms of the packed multiplies (tp NULL = serial; same rules as frt_sgemm_mt). */
void frt_sgemm_pa_mt(struct frt_threadpool *tp, int64_t M, int64_t N, int64_t K, float alpha,
                     const float *Ap, int transB, const float *B, int64_t ldb, float beta, float *C,
                     int64_t ldc);
void frt_sgemm_pb_mt(struct frt_threadpool *tp, int transA, int64_t M, int64_t N, int64_t K,
                     float alpha, const float *A, int64_t lda, const float *Bp, float beta, float *C,
                     int64_t ldc);
/* Output epilogue of frt_sgemm_pb_epi_mt: called once for every finished block C[m x n] (ldc)
 * whose top-left element is (i, j) of the whole product, after its last K block, on the thread
 * that computed it (blocks are disjoint; typically one register tile, still in L1). */
typedef void (*frt_sgemm_epilogue_fn)(const void *ctx, float *C, int64_t ldc, int64_t i,
                                      int64_t j, int64_t m, int64_t n);
/* C[M,N] = epi(A[M,K] (lda) * Bp), Bp from frt_sgemm_pack_b(.., K, N, ..); tp may split the
 * work (same rules as frt_sgemm_mt). epi must not be NULL. */
void frt_sgemm_pb_epi_mt(struct frt_threadpool *tp, int64_t M, int64_t N, int64_t K,
                         const float *A, int64_t lda, const float *Bp, float *C, int64_t ldc,
                         frt_sgemm_epilogue_fn epi, const void *epi_ctx);
/* frt_sgemv that may split the output vector over tp when A is large. */
void frt_sgemv_mt(struct frt_threadpool *tp, int transA, int64_t M, int64_t N, float alpha,
                  const float *A, int64_t lda, const float *x, float beta, float *y);

/* ---- ISA variants (for tests and benchmarks; the entries above use the tier's variant) ---- */
/* A variant of the blocked kernel: register tile mr x nr and its inner loops (NULL: portable C).
 * The prepacked formats above follow the variant of frt_cpu_tier(). */
#define FRT_SGEMM_MR_MAX 16
#define FRT_SGEMM_NR_MAX 32
typedef struct frt_sgemm_variant {
    frt_isa isa;
    const char *name;
    int blas;       /* plain products go to the BLAS when built with one */
    int pb_own;     /* ... but products with a prepacked B (frt_sgemm_pack_b, weights) run the
                       own kernel, whose epilogue runs per tile (measured faster on Zen 3) */
    int pf_b;       /* the driver prefetches the next B panel while the current one is in use */
    int64_t mr, nr; /* <= FRT_SGEMM_MR_MAX, FRT_SGEMM_NR_MAX; nr divides 64 */
    /* C[mr, nr] = alpha * Ap(mr x kc panel, [k][mr]) * Bp(kc x nr panel, [k][nr]) + beta * C;
     * beta == 0: C not read. */
    void (*ukr)(int64_t kc, const float *Ap, const float *Bp, float *C, int64_t ldc, float alpha,
                float beta);
    /* c[nr] = alpha * sum_k a[k*inca] * Bp[k][nr] + beta * c (beta == 0: c not read). */
    void (*row)(int64_t kc, const float *a, int64_t inca, const float *Bp, float *c, float alpha,
                float beta);
    /* y[M] = alpha * A[M,N] x + beta * y  and  y[N] = alpha * A[M,N]^T x + beta * y. */
    void (*gemv_n)(int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
                   const float *x, float beta, float *y);
    void (*gemv_t)(int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
                   const float *x, float beta, float *y);
    /* As ukr for rows [0, m) of the panel only (1 <= m <= mr; C rows past m untouched), or NULL. */
    void (*ukr_m)(int64_t m, int64_t kc, const float *Ap, const float *Bp, float *C, int64_t ldc,
                  float alpha, float beta);
    /* Packs one full mr-row panel of a row-major A (rows A[0..mr) with stride lda, columns
     * [0, kc)) into d[k][r] (the packed-A panel format), or NULL (portable packing). */
    void (*pack_a)(int64_t kc, const float *A, int64_t lda, float *d);
    /* As ukr, also prefetching pf_lines 64-byte lines from pf into L1, spread over its k loop
     * (the driver's B-panel prefetch of pf_b, interleaved with the FMAs), or NULL. */
    void (*ukr_pf)(int64_t kc, const float *Ap, const float *Bp, float *C, int64_t ldc,
                   float alpha, float beta, const char *pf, int64_t pf_lines);
} frt_sgemm_variant;
/* The ISA tier of the variant this process's products run (the tier of frt_sgemm_pick at
 * frt_cpu_tier()), without referring to its kernels. */
frt_isa frt_sgemm_isa(void);

/* The best variant whose tier is <= cap. */
const frt_sgemm_variant *frt_sgemm_pick(frt_isa cap);
/* The blocked kernel of frt_sgemm_pick(cap), never the BLAS (same contract as frt_sgemm). */
void frt_sgemm_tier(frt_isa cap, int transA, int transB, int64_t M, int64_t N, int64_t K,
                    float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                    float beta, float *C, int64_t ldc);
/* The GEMV of frt_sgemm_pick(cap), never the BLAS (same contract as frt_sgemv). */
void frt_sgemv_tier(frt_isa cap, int transA, int64_t M, int64_t N, float alpha, const float *A,
                    int64_t lda, const float *x, float beta, float *y);
/* 1 when built with FRT_USE_BLAS. */
int frt_sgemm_have_blas(void);
/* 1 when frt_sgemm / frt_sgemv of this process's tier call the BLAS (then packed A is a plain
 * row-major copy and prepacking A gains nothing; a packed B may still run the own kernel, see
 * pb_own). */
int frt_sgemm_uses_blas(void);
/* 1 when products with a prepacked B (frt_sgemm_pb*) of this process's tier call the BLAS too (then
 * packing B at load gains nothing); 0 where the own kernel runs them (AVX-512, AVX2 with pb_own). */
int frt_sgemm_pb_uses_blas(void);

#if FRT_HAVE_X86
/* AVX2/FMA inner loops (x86/sgemm_avx2.c): 6 x 16 tile. */
void frt_sgemm_ukr_avx2(int64_t kc, const float *Ap, const float *Bp, float *C, int64_t ldc,
                        float alpha, float beta);
void frt_sgemm_ukr_pf_avx2(int64_t kc, const float *Ap, const float *Bp, float *C, int64_t ldc,
                           float alpha, float beta, const char *pf, int64_t pf_lines);
void frt_sgemm_row_avx2(int64_t kc, const float *a, int64_t inca, const float *Bp, float *c,
                        float alpha, float beta);
void frt_sgemm_ukr_m_avx2(int64_t m, int64_t kc, const float *Ap, const float *Bp, float *C,
                          int64_t ldc, float alpha, float beta);
void frt_sgemm_pack_a_avx2(int64_t kc, const float *A, int64_t lda, float *d);
void frt_sgemv_n_avx2(int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
                      const float *x, float beta, float *y);
void frt_sgemv_t_avx2(int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
                      const float *x, float beta, float *y);
/* AVX-512 inner loops (x86/sgemm_avx512.c): 12 x 32 tile. */
void frt_sgemm_ukr_avx512(int64_t kc, const float *Ap, const float *Bp, float *C, int64_t ldc,
                          float alpha, float beta);
void frt_sgemm_row_avx512(int64_t kc, const float *a, int64_t inca, const float *Bp, float *c,
                          float alpha, float beta);
void frt_sgemm_ukr_m_avx512(int64_t mr, int64_t kc, const float *Ap, const float *Bp, float *C,
                            int64_t ldc, float alpha, float beta);
void frt_sgemm_pack_a_avx512(int64_t kc, const float *A, int64_t lda, float *d);
void frt_sgemv_n_avx512(int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
                        const float *x, float beta, float *y);
void frt_sgemv_t_avx512(int64_t M, int64_t N, float alpha, const float *A, int64_t lda,
                        const float *x, float beta, float *y);
#endif

#endif
