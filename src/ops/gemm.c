/* Gemm and MatMul (float32).
 *
 * Gemm:   Y[M,N] = alpha * op(A) * op(B) + beta * C, op(X) = X or X^T (transA/transB), C optional
 *         and unidirectionally broadcast to [M,N] from [], [N], [1,N], [M,1], [1,1] or [M,N].
 * MatMul: numpy matmul: a 1-D A is promoted to [1,K] and a 1-D B to [K,1] (the added dim is
 *         removed from the output); leading (batch) dims broadcast.
 * Both apply node->act (fused Relu/Clip) to the output.
 *
 * Kernels (chosen at select):
 *   - Y is first filled with beta*C (a constant C that broadcasts by rows is precomputed as one
 *     [N] bias row) and the product accumulated with beta = 1; without C the product uses beta 0.
 *   - M == 1 (batch 1): sgemv against the weight matrix in its natural layout.
 *   - Constant B in a portable build (no BLAS): B is prepacked once into the model arena in the
 *     register-panel layout of the portable kernel. With OpenBLAS, B is used as stored (OpenBLAS
 *     packs internally and handles both orientations equally well).
 *   - MatMul with a 2-D (or 1-D) B folds A's batch dims into M: one GEMM for [b,s,K]x[K,N].
 *   - Tiny products (M*N*K <= 1024, e.g. DeepAndWide's [1,1,32]x[1,32,1]) use a direct loop.
 *   - Large products split over the intra-op pool (frt_sgemm_*_mt); the BLAS stays 1-threaded.
 *   - Packed weights (gemv.h): a constant B of a product known to be batch 1 (M == 1, not tiny)
 *     is packed at load into the GEMV's panel layout (one sequential stream, flatrt's kernels on
 *     every tier); with weights_precision fp16/bf16 every constant 2-D B is packed in half
 *     precision and serves any M (GEMV for M == 1, blocked over converted panels otherwise). The
 *     original B is then never read again (const_copied).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gemv.h"
#include "mm_small.h"
#include "op.h"
#include "util/seltrace.h"
#include "util/threadpool.h"
#include "sgemm.h"
#include "x86/simd_elementwise.h"

/* Products up to this many multiply-adds run as direct loops (a BLAS call costs ~0.2-1 us). */
#define TINY_MACS 1024
#define MM_CALL_NS 500.0 /* fixed cost of one small sgemm call (packing, dispatch), cost model */
/* MatMul products up to this many multiply-adds (per batch item) run the direct small kernel
 * (mm_small.h) instead of a packed GEMM; its fixed cost per call, cost model. */
#define SMALL_MACS 32768
#define MM_SMALL_CALL_NS 30.0

/* ------------------------------------------------------------------------------------------ */
/* shared helpers                                                                             */
/* ------------------------------------------------------------------------------------------ */

/* y[n] = act(y) in place. */
/* The fused activation over y[0..n); Relu with the tier's vector loop v (NaN stays NaN). */
static void apply_act(const frt_act *a, const frt_act_variant *v, float *y, int64_t n) {
    if (a->kind == FRT_ACT_RELU) {
        v->relu(y, y, (size_t)n);
    } else if (a->kind == FRT_ACT_CLIP) {
        float lo = a->lo, hi = a->hi;
        for (int64_t i = 0; i < n; i++) {
            float v = y[i];
            v = v < lo ? lo : v;
            y[i] = v > hi ? hi : v;
        }
    }
}

static frt_status check_act(const frt_op_ctx *c) {
    const frt_act *a = &c->node->act;
    if (a->kind != FRT_ACT_NONE && a->kind != FRT_ACT_RELU && a->kind != FRT_ACT_CLIP)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "unknown fused activation %d", (int)a->kind);
    if (a->kind == FRT_ACT_CLIP && !(a->lo <= a->hi))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "fused clip with min %g > max %g", a->lo, a->hi);
    return FRT_OK;
}

static int act_index(const frt_act *a) {
    return a->kind == FRT_ACT_RELU ? 1 : a->kind == FRT_ACT_CLIP ? 2 : 0;
}

/* Kernel names, made at select in the model's arena: <head>_<impl><tier>[_bias][_relu|_clip]
 * with impl "blas" (no tier: the BLAS ones carry none), "packed_" or "" (flatrt's own kernels carry
 * the ISA tier), e.g. "gemm_f32_packed_avx512_bias_relu", "matmul_f32_batched_avx2",
 * "gemv_f16w_avx512_bias" (packed-weight kernels: head gemm_/gemv_ + precision + "w"). Sets
 * k->name, or fails with FRT_ERR_NO_MEMORY. */
enum { IMPL_BLAS, IMPL_PACKED, IMPL_OWN };
static frt_status set_name(frt_op_ctx *c, frt_kernel *k, const char *head, int impl, int tier,
                           int bias, int act) {
    static const char *const tiers[3] = {"portable", "avx2", "avx512"};
    static const char *const acts[3] = {"", "_relu", "_clip"};
    char buf[64];
    snprintf(buf, sizeof buf, "%s_%s%s%s%s", head,
             impl == IMPL_BLAS ? "blas" : impl == IMPL_PACKED ? "packed_" : "",
             impl == IMPL_BLAS ? "" : tiers[tier], bias ? "_bias" : "", acts[act]);
    k->name = frt_arena_strdup(c->arena, buf);
    return k->name ? FRT_OK : frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for a kernel name");
}

/* Y[M,N] (+)= alpha * op(A) * op(B) by direct loops, for tiny products where a library call
 * costs more than the arithmetic (init_zero: Y is overwritten, else accumulated into). */
static void tiny_mm(int transA, int transB, int64_t M, int64_t N, int64_t K, float alpha,
                    const float *A, int64_t lda, const float *B, int64_t ldb, int init_zero,
                    float *Y, int64_t ldy) {
    for (int64_t i = 0; i < M; i++) {
        float *y = Y + i * ldy;
        const float *a = transA ? A + i : A + i * lda;
        const int64_t inca = transA ? lda : 1;
        if (!transB) {
            if (init_zero) memset(y, 0, (size_t)N * sizeof(float));
            for (int64_t k = 0; k < K; k++) {
                const float ak = alpha * a[k * inca];
                const float *b = B + k * ldb;
                for (int64_t j = 0; j < N; j++) y[j] += ak * b[j];
            }
        } else {
            for (int64_t j = 0; j < N; j++) {
                const float *b = B + j * ldb;
                float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
                int64_t k = 0;
                for (; k + 4 <= K; k += 4) {
                    s0 += a[k * inca] * b[k];
                    s1 += a[(k + 1) * inca] * b[k + 1];
                    s2 += a[(k + 2) * inca] * b[k + 2];
                    s3 += a[(k + 3) * inca] * b[k + 3];
                }
                for (; k < K; k++) s0 += a[k * inca] * b[k];
                float v = alpha * ((s0 + s1) + (s2 + s3));
                y[j] = init_zero ? v : y[j] + v;
            }
        }
    }
}

/* Prepacks a constant B for flatrt's own kernel. Returns NULL when packing is not used (the tier
 * calls the BLAS for prepacked products too), or sets *st on allocation failure. */
static const float *maybe_pack_b(frt_op_ctx *c, int transB, int64_t K, int64_t N, const float *B,
                                 frt_status *st) {
    *st = FRT_OK;
    if (frt_sgemm_pb_uses_blas()) return NULL;
    size_t n = frt_sgemm_pack_b_size(K, N);
    if (n == 0) return NULL;
    float *p = frt_arena_array(c->arena, n, sizeof(float));
    if (!p) {
        *st = frt_op_fail(c, FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for packed weights",
                          n * sizeof(float));
        return NULL;
    }
    frt_sgemm_pack_b(transB, K, N, B, transB ? K : N, p);
    return p;
}

/* Packed-weight kernels (gemv.h): name heads by [gemm / gemv][precision]. */
static const char *const wpack_heads[2][3] = {{"gemm_f32w", "gemm_f16w", "gemm_bf16w"},
                                              {"gemv_f32w", "gemv_f16w", "gemv_bf16w"}};

/* Packs a constant op(B) [K,N] in the precision the options ask for into w (w->data NULL when
 * not packed: fp16 cannot hold a weight, which keeps float32 weights). */
static frt_status wpack_b(frt_op_ctx *c, frt_wprec prec, int transB, int64_t K, int64_t N,
                          const float *B, frt_wpack *w) {
    size_t nb = frt_wpack_bytes(prec, K, N);
    void *d = frt_arena_alloc(c->arena, nb, 64);
    if (!d)
        return frt_op_fail(c, FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for packed weights", nb);
    if (!frt_wpack_fill(prec, transB, K, N, B, transB ? K : N, d)) return FRT_OK;
    w->prec = prec;
    w->K = K;
    w->N = N;
    w->data = d;
    return FRT_OK;
}

/* The node's weight precision (0 in a build without half_weights, whose load refuses others). */
#define NODE_WPREC(c) (FRT_HALF_WEIGHTS ? (c)->node->wprec : 0)

/* Whether to pack a constant B of a [M,K]x[K,N] product (M -1 when unknown). */
static int want_wpack(const frt_op_ctx *c, int64_t M, int64_t K, int64_t N) {
    if (K <= 0 || N <= 0) return 0;
    if (NODE_WPREC(c) != 0) return 1;
    return M == 1 && N * K > TINY_MACS;
}

/* Scratch of a packed-weight product with M rows. */
static size_t wpack_scratch(frt_isa isa, int64_t M) {
    return M > 1 ? frt_wpack_gemm_scratch(isa) : 0;
}

static int impl_index(int packed) {
    return packed ? IMPL_PACKED : frt_sgemm_uses_blas() ? IMPL_BLAS : IMPL_OWN;
}
static int tier_index(void) { return (int)frt_sgemm_isa(); }

/* ------------------------------------------------------------------------------------------ */
/* Gemm                                                                                       */
/* ------------------------------------------------------------------------------------------ */

/* Kernel classes (FRT_KERNEL_BUILT, op.h): packed weights for one row (WGEMV: "gemv_*w_*" names)
 * or any rows (WGEMM: "gemm_*w_*"), unpacked weights for one row (SGEMV: "gemv_f32_*", also the
 * tiny direct loop) or any rows (SGEMM: "gemm_f32_*", every unpacked path). A selective build
 * keeps the classes its trace's kernel names need; the full build keeps all. */
#define K_WGEMV FRT_KERNEL_BUILT(Gemm, WGEMV)
#define K_WGEMM FRT_KERNEL_BUILT(Gemm, WGEMM)
#define K_SGEMV FRT_KERNEL_BUILT(Gemm, SGEMV)
#define K_SGEMM FRT_KERNEL_BUILT(Gemm, SGEMM)
/* Inside SGEMM, the path a run takes depends on M, known only at run when the batch is symbolic:
 * the trace records it at run ("gemm_run_tiny": the direct loops of tiny products, "gemm_run_gemv":
 * one row or column, "gemm_run_sgemm": the blocked GEMM, packed B or not) and a selective build
 * keeps those paths (classes RTINY, RGEMV, RSGEMM); SMALL is the direct small kernel for constant
 * B chosen at select ("gemm_f32_small_*"). A run that needs a path left out fails naming it. */
#define K_RTINY FRT_KERNEL_BUILT(Gemm, RTINY)
#define K_RGEMV FRT_KERNEL_BUILT(Gemm, RGEMV)
#define K_RSGEMM FRT_KERNEL_BUILT(Gemm, RSGEMM)
#define K_GSMALL FRT_KERNEL_BUILT(Gemm, SMALL)

/* A run-time product path: recorded while tracing; refused when a selective build left it out. */
static frt_status run_path(const frt_step *s, const char *op, const char *path, int built,
                           int64_t M) {
    if (FRT_SELTRACE_ON) frt_seltrace_add("kernel", "ai.onnx", op, "builtin", path, NULL);
    if (built) return FRT_OK;
    return frt_step_fail(s, FRT_ERR_UNSUPPORTED, "%s with M=%lld: kernel '%s' not in this build's "
                         "selection (%s)", op, (long long)M, path, frt_selection_file());
}

typedef struct gemm_params {
    int transA, transB;
    float alpha, beta;
    const float *bias;  /* [N] = beta * C broadcast over rows (constant C), or NULL */
    int64_t bias_n;
    const float *Bp;    /* prepacked constant B (own-kernel tiers), or NULL */
    int64_t Bp_K, Bp_N;
    bool packs;         /* the full build prepacks B (Bp, or left NULL without RSGEMM) */
    frt_wpack wp;       /* packed constant B (wp.data != NULL): used for every M */
    /* small products with constant B (M > 1 known at load, M*N*K <= SMALL_MACS, A not
     * transposed): alpha * op(B) as row-major [K,N] for the tier's direct small kernel, chosen
     * for Bs_M rows */
    const float *Bs;
    int64_t Bs_M;
    frt_mm_small_fn small;
    frt_isa isa;
    frt_act act;
    const frt_act_variant *av; /* activation loops of the tier */
} gemm_params;

/* Dims of op(A) [M,Ka] and op(B) [Kb,N] from 2-D shapes. */
static void gemm_dims(const frt_value *a, const frt_value *b, int ta, int tb, int64_t *M,
                      int64_t *Ka, int64_t *Kb, int64_t *N) {
    *M = ta ? a->dims[1] : a->dims[0];
    *Ka = ta ? a->dims[0] : a->dims[1];
    *Kb = tb ? b->dims[1] : b->dims[0];
    *N = tb ? b->dims[0] : b->dims[1];
}

/* Checks that C (rank <= 2) broadcasts to [M, N] (unknown dims pass). */
static frt_status check_c_bcast(const frt_op_ctx *c, const frt_value *cv, int64_t M, int64_t N) {
    char sc[128];
    if (cv->rank < 0) return FRT_OK;
    if (cv->rank > 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "C has shape %s, rank > 2",
                           frt_shape_str(cv, sc, sizeof sc));
    int64_t cm = cv->rank == 2 ? cv->dims[0] : 1;
    int64_t cn = cv->rank >= 1 ? cv->dims[cv->rank - 1] : 1;
    if ((cm >= 0 && M >= 0 && cm != 1 && cm != M) || (cn >= 0 && N >= 0 && cn != 1 && cn != N))
        return frt_op_fail(c, FRT_ERR_SHAPE,
                           "C of shape %s does not broadcast to the output [%lld,%lld]",
                           frt_shape_str(cv, sc, sizeof sc), (long long)M, (long long)N);
    return FRT_OK;
}

static frt_status gemm_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 3, 1, 1);
    if (st) return st;
    if ((st = frt_op_check_input(c, 0, FRT_FLOAT32)) || (st = frt_op_check_input(c, 1, FRT_FLOAT32)))
        return st;
    const frt_value *a = c->in[0], *b = c->in[1];
    const frt_value *cv = c->n_in > 2 ? c->in[2] : NULL;
    if (cv && (st = frt_op_check_input(c, 2, FRT_FLOAT32))) return st;
    char sa[128], sb[128];
    if ((a->rank >= 0 && a->rank != 2) || (b->rank >= 0 && b->rank != 2))
        return frt_op_fail(c, FRT_ERR_SHAPE, "A %s and B %s must both be 2-D",
                           frt_shape_str(a, sa, sizeof sa), frt_shape_str(b, sb, sizeof sb));
    int ta = frt_attr_int(c->node, "transA", 0) != 0, tb = frt_attr_int(c->node, "transB", 0) != 0;
    int64_t M = -1, Ka = -1, Kb = -1, N = -1;
    if (a->rank == 2) {
        M = ta ? a->dims[1] : a->dims[0];
        Ka = ta ? a->dims[0] : a->dims[1];
    }
    if (b->rank == 2) {
        Kb = tb ? b->dims[1] : b->dims[0];
        N = tb ? b->dims[0] : b->dims[1];
    }
    if (Ka >= 0 && Kb >= 0 && Ka != Kb)
        return frt_op_fail(c, FRT_ERR_SHAPE,
                           "inner dimensions differ: A %s (transA=%d) gives K=%lld, B %s "
                           "(transB=%d) gives K=%lld",
                           frt_shape_str(a, sa, sizeof sa), ta, (long long)Ka,
                           frt_shape_str(b, sb, sizeof sb), tb, (long long)Kb);
    if (cv && (st = check_c_bcast(c, cv, M, N))) return st;
    int64_t od[2] = {M, N};
    frt_op_set_shape(c->out[0], FRT_FLOAT32, 2, od);
    return FRT_OK;
}

/* Fills Y[M,N] with beta * C broadcast (C rank <= 2, checked by infer). */
static void fill_c(const frt_value *cv, float beta, int64_t M, int64_t N, float *Y) {
    int64_t cm = cv->rank == 2 ? cv->dims[0] : 1;
    int64_t cn = cv->rank >= 1 ? cv->dims[cv->rank - 1] : 1;
    const float *C = cv->data;
    for (int64_t i = 0; i < M; i++) {
        const float *crow = C + (cm == 1 ? 0 : i * cn);
        float *y = Y + i * N;
        if (cn == 1)
            for (int64_t j = 0; j < N; j++) y[j] = beta * crow[0];
        else
            for (int64_t j = 0; j < N; j++) y[j] = beta * crow[j];
    }
}

static frt_status gemm_kernel(const frt_step *s, frt_exec *x) {
    const gemm_params *p = s->k.params;
    const frt_value *a = &x->values[s->in[0]], *b = &x->values[s->in[1]];
    const frt_value *cv = s->n_in > 2 && s->in[2] >= 0 ? &x->values[s->in[2]] : NULL;
    frt_value *y = &x->values[s->out[0]];
    int64_t M, Ka, Kb, N;
    gemm_dims(a, b, p->transA, p->transB, &M, &Ka, &Kb, &N);
    if (Ka != Kb || y->dims[0] != M || y->dims[1] != N)
        return frt_step_fail(s, FRT_ERR_SHAPE, "Gemm shapes changed after inference");
    int64_t K = Ka;
    float *Y = y->data;
    const float *A = a->data, *B = b->data;
    if (M == 0 || N == 0) return FRT_OK;
    if (p->Bs) {
        /* direct small product: Y = A * (alpha op(B)), then + bias row (select took this path
           only when C is absent, beta is 0 or C is a constant row; B's original bytes may be
           released, so other shapes cannot fall back to it) */
        if (M != p->Bs_M)
            return frt_step_fail(s, FRT_ERR_SHAPE, "Gemm rows changed after load (%lld, was %lld)",
                                 (long long)M, (long long)p->Bs_M);
        p->small(M, N, K, A, K, p->Bs, N, Y, N);
        if (cv && p->beta != 0.0f)
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) Y[i * N + j] += p->bias[j];
        apply_act(&p->act, p->av, Y, M * N);
        return FRT_OK;
    }
    float beta = 0.0f;
    if (cv && p->beta != 0.0f) {
        if (p->bias && p->bias_n == N) {
            for (int64_t i = 0; i < M; i++) memcpy(Y + i * N, p->bias, (size_t)N * sizeof(float));
        } else {
            fill_c(cv, p->beta, M, N, Y);
        }
        beta = 1.0f;
    }
    int64_t lda = p->transA ? M : K, ldb = p->transB ? K : N;
    const bool packed = p->packs && p->Bp_K == K && p->Bp_N == N;
    if (!(M == 1 ? p->wp.data ? K_WGEMV || K_WGEMM : K_SGEMV || K_SGEMM
                 : p->wp.data ? K_WGEMM : K_SGEMM))
        return frt_step_fail(s, FRT_ERR_UNSUPPORTED, "Gemm with M=%lld: kernel class %s not in "
                             "this build's selection (%s)", (long long)M,
                             p->wp.data ? "WGEMM" : "SGEMM", frt_selection_file());
    if (p->wp.data) {
        if (p->wp.K != K || p->wp.N != N)
            return frt_step_fail(s, FRT_ERR_SHAPE, "Gemm weights changed shape after packing");
        if (M == 1 && (K_WGEMV || K_WGEMM))
            frt_wpack_gemv_mt(x->tp, p->isa, &p->wp, p->alpha, A, beta, Y);
        else if (K_WGEMM)
            frt_wpack_gemm(p->isa, &p->wp, p->transA, M, p->alpha, A, lda, beta, Y, N, x->scratch);
    } else {
        /* the unpacked paths, in the full build's order */
        int path = M * N * K <= TINY_MACS && !(packed && M > 1) ? 0 : M == 1 || N == 1 ? 1 : 2;
        static const char *const path_names[3] = {"gemm_run_tiny", "gemm_run_gemv",
                                                  "gemm_run_sgemm"};
        const int built[3] = {K_RTINY, K_RGEMV, K_SGEMM && K_RSGEMM};
        frt_status st = run_path(s, "Gemm", path_names[path], built[path], M);
        if (st) return st;
        if (path == 0 && K_RTINY) {
            tiny_mm(p->transA, p->transB, M, N, K, p->alpha, A, lda, B, ldb, beta == 0.0f, Y, N);
        } else if (path == 1 && K_RGEMV && M == 1) {
            /* batch 1: y = alpha * op(B)^T a, weights in their natural layout; a is contiguous
             * (A is [1,K] or [K,1]) */
            if (p->transB) frt_sgemv_mt(x->tp, 0, N, K, p->alpha, B, ldb, A, beta, Y);
            else frt_sgemv_mt(x->tp, 1, K, N, p->alpha, B, ldb, A, beta, Y);
        } else if (path == 1 && K_RGEMV) {
            /* one output column (a final logit): y = alpha * op(A) b, b contiguous (B is [1,K]
               or [K,1]); a packed B would pad the column to a whole panel */
            if (p->transA) frt_sgemv_mt(x->tp, 1, K, M, p->alpha, A, lda, B, beta, Y);
            else frt_sgemv_mt(x->tp, 0, M, K, p->alpha, A, lda, B, beta, Y);
        } else if (path == 2 && K_SGEMM && K_RSGEMM && packed) {
            frt_sgemm_pb_mt(x->tp, p->transA, M, N, K, p->alpha, A, lda, p->Bp, beta, Y, N);
        } else if (path == 2 && K_SGEMM && K_RSGEMM) {
            frt_sgemm_mt(x->tp, p->transA, p->transB, M, N, K, p->alpha, A, lda, B, ldb, beta, Y,
                         N);
        }
    }
    apply_act(&p->act, p->av, Y, M * N);
    return FRT_OK;
}

static size_t gemm_scratch(const frt_step *s, const frt_value *values) {
    if (!K_WGEMM) return 0; /* one row only (M > 1 refused at run): no scratch */
    const gemm_params *p = s->k.params;
    const frt_value *a = &values[s->in[0]];
    return wpack_scratch(p->isa, p->transA ? a->dims[1] : a->dims[0]);
}

static frt_status gemm_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_act(c);
    if (st) return st;
    gemm_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->transA = frt_attr_int(c->node, "transA", 0) != 0;
    p->transB = frt_attr_int(c->node, "transB", 0) != 0;
    p->alpha = frt_attr_float(c->node, "alpha", 1.0f);
    p->beta = frt_attr_float(c->node, "beta", 1.0f);
    p->act = c->node->act;
    p->av = frt_act_variant_get(c->isa);
    const frt_value *a = c->in[0], *b = c->in[1];
    const frt_value *cv = c->n_in > 2 ? c->in[2] : NULL;
    int64_t M = a->rank == 2 ? (p->transA ? a->dims[1] : a->dims[0]) : -1;
    int64_t N = -1, K = -1;
    if (b->rank == 2) {
        K = p->transB ? b->dims[1] : b->dims[0];
        N = p->transB ? b->dims[0] : b->dims[1];
    }
    /* constant C that broadcasts along rows -> one precomputed bias row */
    if (cv && cv->data && p->beta != 0.0f && N > 0 && cv->rank <= 2 &&
        (cv->rank < 2 || cv->dims[0] == 1)) {
        float *bias = frt_arena_array(c->arena, (size_t)N, sizeof(float));
        if (!bias) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
        int64_t cn = cv->rank >= 1 ? cv->dims[cv->rank - 1] : 1;
        const float *C = cv->data;
        for (int64_t j = 0; j < N; j++) bias[j] = p->beta * C[cn == 1 ? 0 : j];
        p->bias = bias;
        p->bias_n = N;
    }
    p->isa = c->isa;
    if (b->data && want_wpack(c, M, K, N)) {
        /* (named by its head here: the tier's name would keep the packed kernels' tables) */
        int prec = NODE_WPREC(c) >= 0 && NODE_WPREC(c) <= 2 ? NODE_WPREC(c) : 0;
        if (!(M == 1 ? K_WGEMV || K_WGEMM : K_WGEMM))
            return frt_op_kernel_missing(c, wpack_heads[M == 1][prec]);
        st = wpack_b(c, (frt_wprec)NODE_WPREC(c), p->transB, K, N, b->data, &p->wp);
        if (st) return st;
    }
    if ((K_WGEMV || K_WGEMM) && p->wp.data) {
        st = set_name(c, k, wpack_heads[M == 1][p->wp.prec], IMPL_OWN,
                      (int)frt_gemv_pick(c->isa)->isa, cv && p->beta != 0.0f, act_index(&p->act));
        if (st) return st;
        k->fn = gemm_kernel;
        k->params = p;
        k->scratch = gemm_scratch;
        k->const_copied = 1u << 1;
        return FRT_OK;
    }
    if (!(M == 1 ? K_SGEMV || K_SGEMM : K_SGEMM))
        return frt_op_kernel_missing(c, M == 1 ? "gemv_f32" : "gemm_f32");
    /* small product with constant B and M known (e.g. a Linear layer inside a Loop body): B
       copied row-major with alpha folded in, run by the direct small kernel (a packed GEMM call
       or the scalar tiny loop cost more than the arithmetic here) */
    if (K_SGEMM && b->data && !p->transA && M > 1 && N > 1 && K > 0 && M * N * K <= SMALL_MACS &&
        (!cv || p->beta == 0.0f || p->bias)) {
        if (!K_GSMALL) return frt_op_kernel_missing(c, "gemm_f32_small");
        float *bs = frt_arena_array(c->arena, (size_t)(K * N), sizeof(float));
        if (!bs) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
        const float *B = b->data;
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < N; j++)
                bs[k * N + j] = p->alpha * (p->transB ? B[j * K + k] : B[k * N + j]);
        const frt_mm_small_variant *sv = frt_mm_small_pick(c->isa);
        p->Bs = bs;
        p->Bs_M = M;
        p->small = sv->fn;
        st = set_name(c, k, "gemm_f32_small", IMPL_OWN, (int)sv->isa, cv && p->beta != 0.0f,
                      act_index(&p->act));
        if (st) return st;
        k->fn = gemm_kernel;
        k->params = p;
        k->const_copied = 1u << 1;
        return FRT_OK;
    }
    /* constant B: prepack unless the product is known to be a gemv (M == 1) */
    if (b->data && K > 0 && N > 0 && M != 1) {
        /* only the blocked GEMM reads the packed B: a build without it packs nothing, but takes
           the same paths as one that packs (p->packs) */
        if (K_RSGEMM) {
            p->Bp = maybe_pack_b(c, p->transB, K, N, b->data, &st);
            if (st) return st;
            p->packs = p->Bp != NULL;
        } else {
            p->packs = !frt_sgemm_pb_uses_blas() && frt_sgemm_pack_b_size(K, N) != 0;
        }
        p->Bp_K = K;
        p->Bp_N = N;
    }
    st = set_name(c, k, M == 1 ? "gemv_f32" : "gemm_f32", impl_index(p->packs), tier_index(),
                  cv && p->beta != 0.0f, act_index(&p->act));
    if (st) return st;
    k->fn = gemm_kernel;
    k->params = p;
    return FRT_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* MatMul                                                                                     */
/* ------------------------------------------------------------------------------------------ */

typedef struct matmul_params {
    const float *Bp; /* prepacked constant 2-D B (own-kernel tiers), or NULL */
    int64_t Bp_K, Bp_N;
    frt_wpack wp;    /* packed constant 2-D B (wp.data != NULL): used for every M */
    frt_isa isa;
    frt_act act;
    const frt_act_variant *av; /* activation loops of the tier */
    frt_mm_small_fn small;     /* direct small products of the tier */
} matmul_params;

/* Shapes of a matmul after numpy promotion. */
typedef struct mm_shape {
    int batch_rank;
    int64_t batch[FRT_MAX_RANK]; /* output batch dims */
    int64_t a_bat[FRT_MAX_RANK]; /* A's batch dims right-aligned to batch_rank (1 where absent) */
    int64_t b_bat[FRT_MAX_RANK];
    int64_t M, K, Kb, N;
    int a_vec, b_vec; /* 1-D operands */
} mm_shape;

/* Fills sh from A and B (ranks known and >= 1). Unknown dims stay -1. Returns 0 on a batch
 * broadcast mismatch. */
static int mm_shape_of(const frt_value *a, const frt_value *b, mm_shape *sh) {
    sh->a_vec = a->rank == 1;
    sh->b_vec = b->rank == 1;
    sh->M = sh->a_vec ? 1 : a->dims[a->rank - 2];
    sh->K = a->dims[a->rank - 1];
    sh->Kb = sh->b_vec ? b->dims[0] : b->dims[b->rank - 2];
    sh->N = sh->b_vec ? 1 : b->dims[b->rank - 1];
    int ra = a->rank >= 2 ? a->rank - 2 : 0, rb = b->rank >= 2 ? b->rank - 2 : 0;
    int r = ra > rb ? ra : rb;
    sh->batch_rank = r;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - ra), ib = i - (r - rb);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        sh->a_bat[i] = da;
        sh->b_bat[i] = db;
        int64_t d;
        if (da == db) d = da;
        else if (da == 1) d = db;
        else if (db == 1) d = da;
        else if (da < 0 || db < 0) d = da < 0 ? db : da;
        else return 0;
        sh->batch[i] = d;
    }
    return 1;
}

static frt_status matmul_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 2, 2, 1, 1);
    if (st) return st;
    if ((st = frt_op_check_input(c, 0, FRT_FLOAT32)) || (st = frt_op_check_input(c, 1, FRT_FLOAT32)))
        return st;
    const frt_value *a = c->in[0], *b = c->in[1];
    char sa[128], sb[128];
    if (a->rank == 0 || b->rank == 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "MatMul operands must have rank >= 1, got %s and %s",
                           frt_shape_str(a, sa, sizeof sa), frt_shape_str(b, sb, sizeof sb));
    if (a->rank < 0 || b->rank < 0) {
        frt_op_set_shape(c->out[0], FRT_FLOAT32, -1, NULL);
        return FRT_OK;
    }
    mm_shape sh;
    if (!mm_shape_of(a, b, &sh))
        return frt_op_fail(c, FRT_ERR_SHAPE, "batch dimensions of %s and %s do not broadcast",
                           frt_shape_str(a, sa, sizeof sa), frt_shape_str(b, sb, sizeof sb));
    if (sh.K >= 0 && sh.Kb >= 0 && sh.K != sh.Kb)
        return frt_op_fail(c, FRT_ERR_SHAPE,
                           "inner dimensions differ: A %s has K=%lld, B %s has K=%lld",
                           frt_shape_str(a, sa, sizeof sa), (long long)sh.K,
                           frt_shape_str(b, sb, sizeof sb), (long long)sh.Kb);
    int64_t od[FRT_MAX_RANK + 2];
    int r = 0;
    for (int i = 0; i < sh.batch_rank; i++) od[r++] = sh.batch[i];
    if (!sh.a_vec) od[r++] = sh.M;
    if (!sh.b_vec) od[r++] = sh.N;
    if (r > FRT_MAX_RANK) return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "output rank %d too large", r);
    frt_op_set_shape(c->out[0], FRT_FLOAT32, r, od);
    return FRT_OK;
}

/* ---- direct small products (mm_small.h) ---- */

void frt_mm_small_portable(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                           const float *B, int64_t ldb, float *Y, int64_t ldy) {
    for (int64_t i = 0; i < M; i++) {
        float *y = Y + i * ldy;
        const float *a = A + i * lda;
        for (int64_t j = 0; j < N; j++) y[j] = 0.0f;
        for (int64_t k = 0; k < K; k++) {
            const float ak = a[k];
            const float *b = B + k * ldb;
            for (int64_t j = 0; j < N; j++) y[j] += ak * b[j];
        }
    }
}

static const frt_mm_small_variant mm_small_variants[] = {
#if FRT_HAVE_X86
#if FRT_TIER_AVX512
    {FRT_ISA_AVX512, "avx512", frt_mm_small_avx512},
#endif
#if FRT_TIER_AVX2
    {FRT_ISA_AVX2, "avx2", frt_mm_small_avx2},
#endif
#endif
    {FRT_ISA_PORTABLE, "portable", frt_mm_small_portable},
};

const frt_mm_small_variant *frt_mm_small_pick(frt_isa cap) {
    return FRT_PICK_VARIANT(mm_small_variants, cap);
}

/* Whether a [M,K]x[K,N] product (not a gemv) runs the direct small kernel. */
static int mm_is_small(int64_t M, int64_t N, int64_t K) {
    return M > 1 && N > 1 && M * N * K > TINY_MACS && M * N * K <= SMALL_MACS;
}

/* Kernel classes of MatMul (FRT_KERNEL_BUILT, op.h): WPACK the packed-weight kernels chosen at
 * select ("gemv_*w_*", "gemm_*w_*"); the paths of the other products, which depend on shapes
 * known at run (the trace records them at run as "matmul_run_<path>"): TINY the direct loops,
 * SMALL the tier's direct small kernel (mm_small.h), GEMV one row or column, SGEMM the blocked
 * GEMM (with B packed at load when constant). A run that needs a path left out fails naming it. */
#define K_MWPACK FRT_KERNEL_BUILT(MatMul, WPACK)
#define K_MTINY FRT_KERNEL_BUILT(MatMul, TINY)
#define K_MSMALL FRT_KERNEL_BUILT(MatMul, SMALL)
#define K_MGEMV FRT_KERNEL_BUILT(MatMul, GEMV)
#define K_MSGEMM FRT_KERNEL_BUILT(MatMul, SGEMM)

/* The path of one [M,K]x[K,N] product (mm_one); names and whether this build has it. */
enum { MM_TINY, MM_SMALL, MM_GEMV, MM_SGEMM };
static int mm_path(int64_t M, int64_t N, int64_t K) {
    return M * N * K <= TINY_MACS ? MM_TINY
           : mm_is_small(M, N, K) ? MM_SMALL
           : M == 1 || N == 1     ? MM_GEMV
                                  : MM_SGEMM;
}
static const char *const mm_path_names[4] = {"matmul_run_tiny", "matmul_run_small",
                                             "matmul_run_gemv", "matmul_run_sgemm"};
static const int mm_path_built[4] = {K_MTINY, K_MSMALL, K_MGEMV, K_MSGEMM};

/* One [M,K]x[K,N] product into Y (ldy = N), beta 0. Its path is in this build (mm_path, checked
 * by the caller). */
static void mm_one(frt_exec *x, const matmul_params *p, int64_t M, int64_t N, int64_t K,
                   const float *A, const float *B, float *Y, int allow_mt) {
    frt_threadpool *tp = allow_mt ? x->tp : NULL;
    int path = mm_path(M, N, K);
    if (path == MM_TINY && K_MTINY) {
        tiny_mm(0, 0, M, N, K, 1.0f, A, K, B, N, 1, Y, N);
    } else if (path == MM_SMALL && K_MSMALL) {
        p->small(M, N, K, A, K, B, N, Y, N);
    } else if (path == MM_GEMV && K_MGEMV && M == 1) {
        frt_sgemv_mt(tp, 1, K, N, 1.0f, B, N, A, 0.0f, Y);
    } else if (path == MM_GEMV && K_MGEMV) {
        frt_sgemv_mt(tp, 0, M, K, 1.0f, A, K, B, 0.0f, Y);
    } else if (path == MM_SGEMM && K_MSGEMM && p->Bp && p->Bp_K == K && p->Bp_N == N) {
        frt_sgemm_pb_mt(tp, 0, M, N, K, 1.0f, A, K, p->Bp, 0.0f, Y, N);
    } else if (path == MM_SGEMM && K_MSGEMM) {
        frt_sgemm_mt(tp, 0, 0, M, N, K, 1.0f, A, K, B, N, 0.0f, Y, N);
    }
}

typedef struct mm_batch_job {
    frt_exec *x;
    const matmul_params *p;
    const mm_shape *sh;
    const float *A, *B;
    float *Y;
} mm_batch_job;

/* Batch item t: decode the output batch index and broadcast it to A and B. */
static void mm_batch_task(void *ctx, size_t t) {
    const mm_batch_job *j = ctx;
    const mm_shape *sh = j->sh;
    int64_t rem = (int64_t)t, ao = 0, bo = 0, as = 1, bs = 1;
    for (int d = sh->batch_rank - 1; d >= 0; d--) {
        int64_t idx = rem % sh->batch[d];
        rem /= sh->batch[d];
        if (sh->a_bat[d] != 1) ao += idx * as;
        if (sh->b_bat[d] != 1) bo += idx * bs;
        as *= sh->a_bat[d];
        bs *= sh->b_bat[d];
    }
    mm_one(j->x, j->p, sh->M, sh->N, sh->K, j->A + ao * sh->M * sh->K, j->B + bo * sh->K * sh->N,
           j->Y + (int64_t)t * sh->M * sh->N, 0);
}

static frt_status matmul_kernel(const frt_step *s, frt_exec *x) {
    const matmul_params *p = s->k.params;
    const frt_value *a = &x->values[s->in[0]], *b = &x->values[s->in[1]];
    frt_value *y = &x->values[s->out[0]];
    mm_shape sh;
    if (a->rank < 1 || b->rank < 1 || !mm_shape_of(a, b, &sh) || sh.K != sh.Kb)
        return frt_step_fail(s, FRT_ERR_SHAPE, "MatMul shapes changed after inference");
    const float *A = a->data, *B = b->data;
    float *Y = y->data;
    if (y->numel == 0) return FRT_OK;
    if (sh.K == 0) {
        memset(Y, 0, (size_t)y->numel * sizeof(float));
    } else if (p->wp.data && K_MWPACK) {
        if (b->rank != 2 || p->wp.K != sh.K || p->wp.N != sh.N)
            return frt_step_fail(s, FRT_ERR_SHAPE, "MatMul weights changed shape after packing");
        int64_t M = a->numel / sh.K;
        if (M == 1) frt_wpack_gemv_mt(x->tp, p->isa, &p->wp, 1.0f, A, 0.0f, Y);
        else frt_wpack_gemm(p->isa, &p->wp, 0, M, 1.0f, A, sh.K, 0.0f, Y, sh.N, x->scratch);
    } else if (b->rank <= 2) {
        /* B is one matrix: fold all of A's leading dims into M */
        int64_t M = a->numel / sh.K;
        int path = mm_path(M, sh.N, sh.K);
        frt_status st = run_path(s, "MatMul", mm_path_names[path], mm_path_built[path], M);
        if (st) return st;
        mm_one(x, p, M, sh.N, sh.K, A, B, Y, 1);
    } else {
        int path = mm_path(sh.M, sh.N, sh.K);
        frt_status st = run_path(s, "MatMul", mm_path_names[path], mm_path_built[path], sh.M);
        if (st) return st;
        int64_t nb = 1;
        for (int i = 0; i < sh.batch_rank; i++) nb *= sh.batch[i];
        mm_batch_job j = {x, p, &sh, A, B, Y};
        int64_t macs = nb * sh.M * sh.N * sh.K;
        /* each item is one call: ~MM_CALL_NS of packing and dispatch besides its flops for an
           sgemm (dlrm_small's 32 items of 9x64x9 took 0.8 us each that way), ~MM_SMALL_CALL_NS
           for the direct small kernel */
        double call_ns = mm_is_small(sh.M, sh.N, sh.K) ? MM_SMALL_CALL_NS : MM_CALL_NS;
        double work = 2.0 * (double)macs * FRT_PAR_NS_PER_FLOP + (double)nb * call_ns;
        if (nb > 1 && frt_par_threads(x->tp, work) > 1) {
            frt_parallel_for(x->tp, (size_t)nb, mm_batch_task, &j);
        } else if (nb == 1) {
            /* single batch item: may use the pool inside */
            mm_one(x, p, sh.M, sh.N, sh.K, A, B, Y, 1);
        } else {
            for (int64_t t = 0; t < nb; t++) mm_batch_task(&j, (size_t)t);
        }
    }
    apply_act(&p->act, p->av, Y, y->numel);
    return FRT_OK;
}

static size_t matmul_scratch(const frt_step *s, const frt_value *values) {
    const matmul_params *p = s->k.params;
    const frt_value *a = &values[s->in[0]];
    int64_t K = a->rank >= 1 ? a->dims[a->rank - 1] : 0;
    return wpack_scratch(p->isa, K > 0 ? a->numel / K : 0);
}

static frt_status matmul_select(frt_op_ctx *c, frt_kernel *k) {
    frt_status st = check_act(c);
    if (st) return st;
    matmul_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->act = c->node->act;
    p->av = frt_act_variant_get(c->isa);
    const frt_mm_small_variant *sv = K_MSMALL ? frt_mm_small_pick(c->isa) : NULL;
    p->small = sv ? sv->fn : NULL;
    const frt_value *a = c->in[0], *b = c->in[1];
    /* a product known to have a single row (M == 1 after folding) runs as a gemv on raw B */
    int one_row = a->rank == 1 || (frt_shape_known(a) && a->dims[a->rank - 1] > 0 &&
                                   a->numel / a->dims[a->rank - 1] == 1);
    p->isa = c->isa;
    if (b->data && b->rank == 2 && want_wpack(c, one_row ? 1 : -1, b->dims[0], b->dims[1])) {
        if (!K_MWPACK) return frt_op_kernel_missing(c, one_row ? "gemv_f32w" : "gemm_f32w");
        st = wpack_b(c, (frt_wprec)NODE_WPREC(c), 0, b->dims[0], b->dims[1], b->data,
                     &p->wp);
        if (st) return st;
    }
    if (K_MWPACK && p->wp.data) {
        st = set_name(c, k, wpack_heads[one_row][p->wp.prec], IMPL_OWN,
                      (int)frt_gemv_pick(c->isa)->isa, 0, act_index(&p->act));
        if (st) return st;
        k->fn = matmul_kernel;
        k->params = p;
        k->scratch = matmul_scratch;
        k->const_copied = 1u << 1;
        return FRT_OK;
    }
    int packs = 0; /* whether the full build prepacks B (named "packed_") */
    if (b->data && b->rank == 2 && b->dims[0] > 0 && b->dims[1] > 1 && !one_row) {
        if (K_MSGEMM) { /* only the blocked GEMM reads it */
            p->Bp = maybe_pack_b(c, 0, b->dims[0], b->dims[1], b->data, &st);
            if (st) return st;
            packs = p->Bp != NULL;
        } else {
            packs = !frt_sgemm_pb_uses_blas() && frt_sgemm_pack_b_size(b->dims[0], b->dims[1]);
        }
        p->Bp_K = b->dims[0];
        p->Bp_N = b->dims[1];
    }
    const char *head = b->rank > 2 ? "matmul_f32_batched" : "matmul_f32";
    int impl = impl_index(packs), tier = tier_index();
    mm_shape sh;
    if (frt_shape_known(a) && frt_shape_known(b) && mm_shape_of(a, b, &sh) && sh.K > 0) {
        /* every product known to run the direct small kernel (mm_small.h): name it */
        int64_t M = b->rank <= 2 ? a->numel / sh.K : sh.M;
        if (mm_is_small(M, sh.N, sh.K)) {
            head = b->rank > 2 ? "matmul_f32_batched_small" : "matmul_f32_small";
            impl = IMPL_OWN;
            tier = sv ? (int)sv->isa : tier; /* without SMALL: refused at run, named anyway */
        }
    }
    st = set_name(c, k, head, impl, tier, 0, act_index(&p->act));
    if (st) return st;
    k->fn = matmul_kernel;
    k->params = p;
    return FRT_OK;
}

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(gemm, Gemm, gemm_infer, gemm_select);
FRT_OP_IMPL(gemm, MatMul, matmul_infer, matmul_select);

/* ---- ahead-of-time programs (src/ops/aot.h) ------------------------------------------------ */

#include "aot.h"

#if FRT_AOT_SAVE
/* What Gemm and MatMul share: the tier, the fused activation (its loops re-picked for the tier),
 * the prepacked B (bytes of frt_sgemm_pack_b_size floats; a build without the blocked GEMM drops
 * it as its select would) and its dims, and the packed weights (frt_wpack: precision, K, N and
 * frt_wpack_bytes of panels, a layout that does not depend on the tier). */
static frt_status mm_save_common(const frt_step *s, frt_aot_w *w, frt_isa isa, const frt_act *act,
                                 const frt_act_variant *av, const frt_wpack *wp, const float *Bp,
                                 int64_t Bp_K, int64_t Bp_N) {
    if (act->kind != FRT_ACT_NONE && act->kind != FRT_ACT_RELU && act->kind != FRT_ACT_CLIP)
        return frt_aot_unsupported(s, "fused activation other than Relu / Clip");
    if (av != frt_act_variant_get(isa) || (int)av->isa != (int)isa)
        return frt_aot_unsupported(s, "activation loops of another tier");
    frt_aot_put_i32(w, (int32_t)isa);
    frt_aot_put_i32(w, (int32_t)act->kind);
    frt_aot_put_f32(w, act->lo);
    frt_aot_put_f32(w, act->hi);
    frt_aot_put_i64(w, Bp_K);
    frt_aot_put_i64(w, Bp_N);
    size_t nbp = Bp && Bp_K > 0 && Bp_N > 0 ? frt_sgemm_pack_b_size(Bp_K, Bp_N) * sizeof(float) : 0;
    frt_aot_put_blob(w, Bp, nbp);
    frt_aot_put_i32(w, (int32_t)wp->prec);
    frt_aot_put_i64(w, wp->K);
    frt_aot_put_i64(w, wp->N);
    frt_aot_put_blob(w, wp->data, wp->data ? frt_wpack_bytes(wp->prec, wp->K, wp->N) : 0);
    return FRT_OK;
}

frt_status frt_aot_save_gemm(const frt_step *s, frt_aot_w *w) {
    const gemm_params *p = s->k.params;
    if (s->k.fn != gemm_kernel || !p) return frt_aot_unsupported(s, "unknown kernel");
    if (p->Bs || p->small)
        return frt_aot_unsupported(s, "the direct small kernel is not written yet");
    frt_status st = mm_save_common(s, w, p->isa, &p->act, p->av, &p->wp, p->Bp, p->Bp_K, p->Bp_N);
    if (st) return st;
    frt_aot_put_i32(w, p->transA);
    frt_aot_put_i32(w, p->transB);
    frt_aot_put_f32(w, p->alpha);
    frt_aot_put_f32(w, p->beta);
    frt_aot_put_i32(w, p->packs);
    frt_aot_put_blob(w, p->bias, p->bias ? (size_t)p->bias_n * sizeof(float) : 0);
    return FRT_OK;
}

frt_status frt_aot_save_matmul(const frt_step *s, frt_aot_w *w) {
    const matmul_params *p = s->k.params;
    if (s->k.fn != matmul_kernel || !p) return frt_aot_unsupported(s, "unknown kernel");
    if (p->small && p->small != frt_mm_small_pick(p->isa)->fn)
        return frt_aot_unsupported(s, "small kernel of another tier");
    return mm_save_common(s, w, p->isa, &p->act, p->av, &p->wp, p->Bp, p->Bp_K, p->Bp_N);
}
#endif

#if FRT_AOT_LOAD
/* Reads what mm_save_common wrote; *Bp is NULL unless this build has the blocked GEMM (flag);
 * wpack_bytes is NULL in a build without the packed-weight kernels (whose tables it would pull
 * in), which then refuses packed weights. */
static frt_status mm_load_common(frt_aot_r *r, frt_isa isa, frt_isa *pisa, frt_act *act,
                                 const frt_act_variant **av, const float **Bp, int64_t *Bp_K,
                                 int64_t *Bp_N, int sgemm_built, frt_wpack *wp,
                                 size_t (*wpack_bytes)(frt_wprec, int64_t, int64_t)) {
    *pisa = (frt_isa)frt_aot_int_in(r, FRT_ISA_PORTABLE, (int32_t)isa);
    act->kind = (frt_act_kind)frt_aot_int_in(r, FRT_ACT_NONE, FRT_ACT_CLIP);
    act->lo = frt_aot_f32(r);
    act->hi = frt_aot_f32(r);
    *Bp_K = frt_aot_i64(r);
    *Bp_N = frt_aot_i64(r);
    size_t nb = 0;
    const float *bp = frt_aot_blob(r, (size_t)-1, &nb);
    if (r->bad) return FRT_ERR_MALFORMED;
    if (nb && (*Bp_K <= 0 || *Bp_N <= 0 || *Bp_K > ((int64_t)1 << 31) ||
               *Bp_N > ((int64_t)1 << 31) ||
               nb != frt_sgemm_pack_b_size(*Bp_K, *Bp_N) * sizeof(float)))
        return frt_error(FRT_ERR_MALFORMED, "packed B does not fit its dims");
    *Bp = sgemm_built ? bp : NULL;
    wp->prec = (frt_wprec)frt_aot_int_in(r, FRT_WPREC_F32, FRT_WPREC_BF16);
    wp->K = frt_aot_i64(r);
    wp->N = frt_aot_i64(r);
    if (wpack_bytes) {
        size_t nw = 0;
        wp->data = frt_aot_blob(r, (size_t)-1, &nw);
        if (r->bad) return FRT_ERR_MALFORMED;
        if (nw && (wp->K <= 0 || wp->N <= 0 || wp->K > ((int64_t)1 << 31) ||
                   wp->N > ((int64_t)1 << 31) || nw != wpack_bytes(wp->prec, wp->K, wp->N)))
            return frt_error(FRT_ERR_MALFORMED, "packed weights do not fit their dims");
        if (nw && wp->prec != FRT_WPREC_F32 && !FRT_HALF_WEIGHTS)
            return frt_error(FRT_ERR_UNSUPPORTED, "half-precision weights: feature 'half_weights' "
                             "not in this build's selection (%s)", frt_selection_file());
    } else if (frt_aot_i64(r) != 0 || r->bad) {
        /* as the selective build's select would refuse them */
        return r->bad ? FRT_ERR_MALFORMED
                      : frt_error(FRT_ERR_UNSUPPORTED, "packed weights: their kernels are not in "
                                  "this build's selection (%s)", frt_selection_file());
    }
    *av = frt_act_variant_get(*pisa);
    if ((*av)->isa != *pisa)
        return frt_error(FRT_ERR_UNSUPPORTED, "activation loops of tier %s not in this build",
                         frt_isa_name(*pisa));
    return FRT_OK;
}

static bool f32_rank(const frt_value *v, int rank) {
    return v->dtype == FRT_FLOAT32 && v->rank == rank;
}

frt_status frt_aot_load_gemm(frt_aot_r *r, frt_isa isa, const frt_step *s, const frt_value *values,
                             frt_kernel *k) {
    gemm_params *p = frt_aot_params(r, sizeof *p);
    if (!p) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    frt_status st = mm_load_common(r, isa, &p->isa, &p->act, &p->av, &p->Bp, &p->Bp_K, &p->Bp_N,
                                   K_SGEMM && K_RSGEMM, &p->wp,
                                   K_WGEMV || K_WGEMM ? frt_wpack_bytes : NULL);
    if (st) return st;
    p->transA = frt_aot_int_in(r, 0, 1);
    p->transB = frt_aot_int_in(r, 0, 1);
    p->alpha = frt_aot_f32(r);
    p->beta = frt_aot_f32(r);
    p->packs = frt_aot_int_in(r, 0, 1);
    size_t nbias = 0;
    p->bias = frt_aot_blob(r, (size_t)-1, &nbias);
    p->bias_n = (int64_t)(nbias / sizeof(float));
    if (r->bad) return FRT_ERR_MALFORMED;
    if (s->n_in < 2 || s->n_in > 3 || s->n_out != 1 || s->in[0] < 0 || s->in[1] < 0)
        return frt_error(FRT_ERR_MALFORMED, "Gemm step does not fit its kernel");
    const frt_value *a = &values[s->in[0]], *b = &values[s->in[1]], *y = &values[s->out[0]];
    const frt_value *cv = s->n_in > 2 && s->in[2] >= 0 ? &values[s->in[2]] : NULL;
    int64_t M, Ka, Kb, N;
    if (!f32_rank(a, 2) || !f32_rank(b, 2) || !f32_rank(y, 2))
        return frt_error(FRT_ERR_MALFORMED, "Gemm step does not fit its values");
    gemm_dims(a, b, p->transA, p->transB, &M, &Ka, &Kb, &N);
    if (Ka != Kb || y->dims[0] != M || y->dims[1] != N || nbias % sizeof(float))
        return frt_error(FRT_ERR_MALFORMED, "Gemm step does not fit its values");
    if (cv) {
        int64_t cm = cv->rank == 2 ? cv->dims[0] : 1;
        int64_t cn = cv->rank >= 1 ? cv->dims[cv->rank - 1] : 1;
        if (cv->dtype != FRT_FLOAT32 || cv->rank > 2 || (cm != 1 && cm != M) ||
            (cn != 1 && cn != N))
            return frt_error(FRT_ERR_MALFORMED, "Gemm step does not fit its values");
    }
    k->fn = gemm_kernel;
    k->params = p;
    k->scratch = (K_WGEMV || K_WGEMM) && p->wp.data ? gemm_scratch : NULL; /* as select does */
    return FRT_OK;
}

frt_status frt_aot_load_matmul(frt_aot_r *r, frt_isa isa, const frt_step *s,
                               const frt_value *values, frt_kernel *k) {
    matmul_params *p = frt_aot_params(r, sizeof *p);
    if (!p) return frt_error(FRT_ERR_NO_MEMORY, "out of memory");
    frt_status st = mm_load_common(r, isa, &p->isa, &p->act, &p->av, &p->Bp, &p->Bp_K, &p->Bp_N,
                                   K_MSGEMM, &p->wp, K_MWPACK ? frt_wpack_bytes : NULL);
    if (st) return st;
    const frt_mm_small_variant *sv = K_MSMALL ? frt_mm_small_pick(p->isa) : NULL;
    p->small = sv ? sv->fn : NULL;
    if (s->n_in != 2 || s->n_out != 1 || s->in[0] < 0 || s->in[1] < 0)
        return frt_error(FRT_ERR_MALFORMED, "MatMul step does not fit its kernel");
    const frt_value *a = &values[s->in[0]], *b = &values[s->in[1]], *y = &values[s->out[0]];
    mm_shape sh;
    if (a->dtype != FRT_FLOAT32 || b->dtype != FRT_FLOAT32 || y->dtype != FRT_FLOAT32 ||
        a->rank < 1 || b->rank < 1 || !mm_shape_of(a, b, &sh) || sh.K != sh.Kb)
        return frt_error(FRT_ERR_MALFORMED, "MatMul step does not fit its values");
    int64_t want[FRT_MAX_RANK];
    int r_out = 0;
    for (int i = 0; i < sh.batch_rank; i++) want[r_out++] = sh.batch[i];
    if (!sh.a_vec) want[r_out++] = sh.M;
    if (!sh.b_vec) want[r_out++] = sh.N;
    if (r_out > FRT_MAX_RANK || y->rank != r_out ||
        memcmp(want, y->dims, (size_t)r_out * sizeof *want))
        return frt_error(FRT_ERR_MALFORMED, "MatMul step does not fit its values");
    k->fn = matmul_kernel;
    k->params = p;
    k->scratch = K_MWPACK && p->wp.data ? matmul_scratch : NULL;
    return FRT_OK;
}
#endif
