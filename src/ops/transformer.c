/* Transformer blocks made by the fusion pass (src/passes/fuse_xf.c); models may not use them.
 *
 * flatrt::FusedMatMul(A, W, bias[, R]; activation) float32:
 *   Y = act(A W + bias) [+ R]
 *   A [..., K] (rank >= 2, leading dims folded into M rows), W a constant [K, N], bias N elements
 *   (broadcast over rows), R (optional) of Y's shape [..., N]. activation: 0 none, 1 GELU (erf),
 *   2 GELU (tanh approximation). W is packed once at select for the SGEMM (sgemm.h); bias,
 *   activation and residual are applied by the GEMM's epilogue to each output tile while it is
 *   still in L1 (frt_sgemm_pb_epi_mt), so Y is written once. The activation is the vectorized
 *   loop of the ISA tier (activation_param, x86/simd_act.h). With reduced-precision weights
 *   (node->wprec, frt_options.weights_precision) W is packed in fp16/bf16 instead (gemv.h) and the
 *   epilogue runs once over Y after the product.
 *
 * flatrt::Attention(Q, K, V[, M]; num_heads H, scale, mask_mode, fill) float32:
 *   Q [B, Sq, H*dk], K [B, Sk, H*dk], V [B, Sk, H*dv] hold the heads side by side (head h is
 *   columns [h*d, (h+1)*d)); per batch b and head h:
 *     S = scale * Q_h K_h^T  [Sq, Sk];  mask_mode 1: S += M (float32),  2: S = M ? fill : S (bool);
 *     Y_h = softmax(S, last axis) V_h,  written to columns [h*dv, (h+1)*dv) of Y [B, Sq, H*dv].
 *   M broadcasts to [B, H, Sq, Sk] (rank <= 4, dims 1 or full). Attribute qkv = 1: Q, K and V
 *   are one value [B, S, 3*H*d] holding Q | K | V side by side (the output of the projection a
 *   Split would cut; Sq = Sk = S, dk = dv = d), read in place with row stride 3*H*d. The heads
 *   are read and written in place through leading dimensions (no transposes); S lives in step
 *   scratch (Sq*Sk floats, L1/L2-sized for the sequence lengths of these models); both products
 *   use the SGEMM (att_mm), the softmax the tier's vectorized rows (x86/simd_elementwise.h).
 *   Heads are split over up to 4 threads of the intra-op pool (one scores buffer each). A
 *   constant causal condition (mode 2, cond[i][c] = c > i + Sk - Sq) is recognized at select:
 *   then blocks of 12 rows multiply only the columns they see (about 60% of the work at
 *   Sq = Sk = 64), see att_head_causal.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gemv.h"
#include "op.h"
#include "sgemm.h"
#include "util/threadpool.h"
#include "x86/simd_act.h"
#include "x86/simd_elementwise.h"

typedef struct fmm_params {
    const float *Wp; /* packed W */
    frt_wpack wh;    /* W in half precision (wh.data != NULL: used instead of Wp) */
    frt_isa isa;
    const float *bias;
    int64_t K, N;
    int act;         /* 0 none, 1 gelu, 2 gelu tanh */
    frt_actp_rows_fn rows_fn; /* bias + activation + residual of an output block */
} fmm_params;

static frt_status fmm_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 3, 4, 1, 1);
    for (int i = 0; !st && i < c->n_in; i++) st = frt_op_check_input(c, i, FRT_FLOAT32);
    if (st) return st;
    const frt_value *a = c->in[0], *w = c->in[1], *b = c->in[2];
    char sa[128], sw[128];
    if (w->rank >= 0 && w->rank != 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "W %s must be 2-D", frt_shape_str(w, sw, sizeof sw));
    if (a->rank >= 0 && a->rank < 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "A %s must have rank >= 2",
                           frt_shape_str(a, sa, sizeof sa));
    int64_t K = w->rank == 2 ? w->dims[0] : -1, N = w->rank == 2 ? w->dims[1] : -1;
    if (a->rank >= 2 && K >= 0 && a->dims[a->rank - 1] >= 0 && a->dims[a->rank - 1] != K)
        return frt_op_fail(c, FRT_ERR_SHAPE, "inner dimensions differ: A %s, W %s",
                           frt_shape_str(a, sa, sizeof sa), frt_shape_str(w, sw, sizeof sw));
    if (b->numel >= 0 && N >= 0 && b->numel != N)
        return frt_op_fail(c, FRT_ERR_SHAPE, "bias has %lld elements, expected N = %lld",
                           (long long)b->numel, (long long)N);
    if (a->rank < 0) {
        frt_op_set_shape(c->out[0], FRT_FLOAT32, -1, NULL);
        return FRT_OK;
    }
    int64_t od[FRT_MAX_RANK];
    memcpy(od, a->dims, sizeof(int64_t) * (size_t)a->rank);
    od[a->rank - 1] = N;
    frt_op_set_shape(c->out[0], FRT_FLOAT32, a->rank, od);
    if (c->n_in > 3 && c->in[3]->rank >= 0) {
        const frt_value *r = c->in[3];
        bool ok = r->rank == a->rank;
        for (int d = 0; ok && d < r->rank; d++)
            ok = r->dims[d] < 0 || od[d] < 0 || r->dims[d] == od[d];
        if (!ok)
            return frt_op_fail(c, FRT_ERR_SHAPE, "residual %s does not match the output %s",
                               frt_shape_str(r, sa, sizeof sa),
                               frt_shape_str(c->out[0], sw, sizeof sw));
    }
    return FRT_OK;
}

/* Run-time state of the epilogue. */
typedef struct fmm_epi {
    const fmm_params *p;
    const float *res; /* [M, N] or NULL */
} fmm_epi;

static const float no_prm[4] = {0, 0, 0, 0};

static void fmm_epilogue(const void *ctx, float *C, int64_t ldc, int64_t i, int64_t j, int64_t m,
                         int64_t n) {
    const fmm_epi *e = ctx;
    const fmm_params *p = e->p;
    p->rows_fn(p->act == 0 ? FRT_ACTP_COUNT : p->act == 1 ? FRT_ACTP_GELU : FRT_ACTP_GELU_TANH, C,
               (size_t)ldc, (size_t)m, (size_t)n, p->bias + j, e->res ? e->res + i * p->N + j : NULL,
               (size_t)p->N, no_prm);
}

static frt_status k_fmm(const frt_step *s, frt_exec *x) {
    const fmm_params *p = s->k.params;
    const frt_value *a = &x->values[s->in[0]];
    const frt_value *r = s->n_in > 3 && s->in[3] >= 0 ? &x->values[s->in[3]] : NULL;
    frt_value *y = &x->values[s->out[0]];
    if (a->rank < 2 || a->dims[a->rank - 1] != p->K || y->numel % (p->N ? p->N : 1) != 0)
        return frt_step_fail(s, FRT_ERR_SHAPE, "FusedMatMul: A's last dim is not K = %lld",
                             (long long)p->K);
    if (r && r->numel != y->numel)
        return frt_step_fail(s, FRT_ERR_SHAPE, "FusedMatMul: residual has %lld elements, output %lld",
                             (long long)r->numel, (long long)y->numel);
    int64_t M = p->K ? a->numel / p->K : (p->N ? y->numel / p->N : 0);
    if (M == 0 || p->N == 0) return FRT_OK;
    fmm_epi e = {p, r ? r->data : NULL};
    if (p->wh.data) {
        if (M == 1) frt_wpack_gemv_mt(x->tp, p->isa, &p->wh, 1.0f, a->data, 0.0f, y->data);
        else frt_wpack_gemm(p->isa, &p->wh, 0, M, 1.0f, a->data, p->K, 0.0f, y->data, p->N, x->scratch);
        fmm_epilogue(&e, y->data, p->N, 0, 0, M, p->N);
        return FRT_OK;
    }
    frt_sgemm_pb_epi_mt(x->tp, M, p->N, p->K, a->data, p->K, p->Wp, y->data, p->N, fmm_epilogue,
                        &e);
    return FRT_OK;
}

static size_t fmm_scratch(const frt_step *s, const frt_value *values) {
    const fmm_params *p = s->k.params;
    const frt_value *a = &values[s->in[0]];
    return p->wh.data && p->K > 0 && a->numel / p->K > 1 ? frt_wpack_gemm_scratch(p->isa) : 0;
}

static frt_status fmm_select(frt_op_ctx *c, frt_kernel *k) {
    const frt_value *w = c->in[1], *b = c->in[2];
    int64_t act = frt_attr_int(c->node, "activation", 0);
    if (act < 0 || act > 2)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "activation %lld (expected 0, 1 or 2)",
                           (long long)act);
    if (!w->data || !b->data || w->rank != 2 || w->dims[0] <= 0 || w->dims[1] <= 0 ||
        b->numel != w->dims[1])
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "W and bias must be constants of [K, N] and N");
    fmm_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->K = w->dims[0];
    p->N = w->dims[1];
    p->act = (int)act;
    p->rows_fn = frt_actp_variant_get(c->isa)->bias_rows;
    p->isa = c->isa;
    size_t np = frt_sgemm_pack_b_size(p->K, p->N);
    /* N <= 16 (one vector of columns, e.g. a classifier head): fp32 W in the packed-weight
     * layout, whose row kernel (frt_wpack_gemm) computes only those columns */
    const int node_wprec = FRT_HALF_WEIGHTS ? c->node->wprec : 0; /* 0 in builds without them */
    const bool small_n = node_wprec == 0 && p->N <= 16 && frt_gemv_pick(c->isa)->rows;
    const frt_wprec wprec = small_n ? FRT_WPREC_F32 : (frt_wprec)node_wprec;
    if (node_wprec != 0 || small_n) {
        /* half-precision W (keeps fp32 if fp16 cannot hold it), or the fp32 small-N case */
        size_t nh = frt_wpack_bytes(wprec, p->K, p->N);
        void *wh = frt_arena_alloc(c->arena, nh, 64);
        if (!wh) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes", nh);
        if (frt_wpack_fill(wprec, 0, p->K, p->N, w->data, p->N, wh)) {
            p->wh = (frt_wpack){wprec, p->K, p->N, wh};
            np = 0;
        }
    }
    float *wp = frt_arena_array(c->arena, np, sizeof(float));
    float *bias = frt_arena_array(c->arena, (size_t)p->N, sizeof(float));
    char *name = frt_arena_alloc(c->arena, 64, 1);
    if ((np && !wp) || !bias || !name)
        return frt_op_fail(c, FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for packed weights",
                           np * sizeof(float));
    if (np) frt_sgemm_pack_b(0, p->K, p->N, w->data, p->N, wp);
    memcpy(bias, b->data, (size_t)p->N * sizeof(float));
    p->Wp = wp;
    p->bias = bias;
    static const char *const tiers[] = {"portable", "avx2", "avx512"};
    static const char *const acts[] = {"", "_gelu", "_gelu_tanh"};
    static const char *const precs[] = {"f32", "f16w", "bf16w"};
    snprintf(name, 64, "fused_matmul_%s_%s_bias%s%s", p->wh.data ? precs[p->wh.prec] : "f32",
             tiers[p->wh.data ? frt_gemv_pick(c->isa)->isa : frt_sgemm_pick(frt_cpu_tier())->isa],
             acts[act], c->n_in > 3 ? "_res" : "");
    k->name = name;
    k->fn = k_fmm;
    k->params = p;
    k->scratch = fmm_scratch;
    k->const_copied = 1u << 1 | 1u << 2;
    return FRT_OK;
}

/* ---- Attention ------------------------------------------------------------------------------ */

typedef struct att_params {
    int64_t H;
    int qkv; /* 1: inputs 0..2 are one [B, S, 3*H*d] value, Q | K | V side by side */
    int own; /* the products run the tier's own SGEMM kernel, not the BLAS (see att_mm) */
    float scale, fill;
    int mode; /* 0 none, 1 additive float mask, 2 bool condition -> fill */
    frt_softmax_rows_fn softmax;
    /* mode 2 with a constant causal condition (cond[i][c] = c > i + cz_off for all B and H, every
     * row keeping column 0): for Sq == cz_sq and Sk == cz_sk only the visible columns are computed */
    int causal;
    int64_t cz_sq, cz_sk, cz_off;
} att_params;

static frt_status att_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 3, 4, 1, 1);
    for (int i = 0; !st && i < 3; i++) st = frt_op_check_input(c, i, FRT_FLOAT32);
    if (st) return st;
    int64_t mode = frt_attr_int(c->node, "mask_mode", 0), H = frt_attr_int(c->node, "num_heads", 0);
    if (mode < 0 || mode > 2 || (mode != 0) != (c->n_in == 4))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "mask_mode %lld with %d inputs", (long long)mode,
                           c->n_in);
    if (mode && (st = frt_op_check_input(c, 3, mode == 1 ? FRT_FLOAT32 : FRT_BOOL))) return st;
    if (H <= 0) return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "num_heads %lld", (long long)H);
    const frt_value *q = c->in[0], *k = c->in[1], *v = c->in[2];
    char s1[128], s2[128], s3[128];
    if (q->rank < 0 || k->rank < 0 || v->rank < 0) {
        frt_op_set_shape(c->out[0], FRT_FLOAT32, -1, NULL);
        return FRT_OK;
    }
    const int64_t qkv = frt_attr_int(c->node, "qkv", 0);
    if (qkv != 0 && qkv != 1)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "qkv %lld (expected 0 or 1)", (long long)qkv);
    if (qkv) {
        const int32_t *ni = c->node->in;
        if (ni[1] != ni[0] || ni[2] != ni[0] || q->rank != 3 ||
            (q->dims[2] >= 0 && q->dims[2] % (3 * H)))
            return frt_op_fail(c, FRT_ERR_SHAPE,
                               "qkv: inputs 0..2 must be one [B, S, 3*H*d] value with H = %lld, "
                               "got %s", (long long)H, frt_shape_str(q, s1, sizeof s1));
        if (mode) {
            const frt_value *m = c->in[3];
            int64_t full[4] = {q->dims[0], H, q->dims[1], q->dims[1]};
            bool ok = m->rank >= 0 && m->rank <= 4;
            for (int i = 0; ok && i < m->rank; i++) {
                int64_t md = m->dims[i], f = full[4 - m->rank + i];
                ok = md < 0 || f < 0 || md == 1 || md == f;
            }
            if (!ok && m->rank >= 0)
                return frt_op_fail(c, FRT_ERR_SHAPE, "mask %s does not broadcast to [B, H, S, S]",
                                   frt_shape_str(m, s1, sizeof s1));
        }
        int64_t od[3] = {q->dims[0], q->dims[1], q->dims[2] < 0 ? -1 : q->dims[2] / 3};
        frt_op_set_shape(c->out[0], FRT_FLOAT32, 3, od);
        return FRT_OK;
    }
    bool ok = q->rank == 3 && k->rank == 3 && v->rank == 3;
    for (int d = 0; ok && d < 3; d++) /* B equal; K and V: same Sk; Q and K: same width */
        ok = d == 1 ? k->dims[1] < 0 || v->dims[1] < 0 || k->dims[1] == v->dims[1]
                    : (q->dims[d] < 0 || k->dims[d] < 0 || q->dims[d] == k->dims[d]) &&
                          (d != 0 || v->dims[0] < 0 || q->dims[0] < 0 || v->dims[0] == q->dims[0]);
    if (ok && ((q->dims[2] >= 0 && q->dims[2] % H) || (v->dims[2] >= 0 && v->dims[2] % H)))
        ok = false;
    if (!ok)
        return frt_op_fail(c, FRT_ERR_SHAPE, "Q %s, K %s, V %s are not [B, S, H*d] with H = %lld",
                           frt_shape_str(q, s1, sizeof s1), frt_shape_str(k, s2, sizeof s2),
                           frt_shape_str(v, s3, sizeof s3), (long long)H);
    if (mode) {
        const frt_value *m = c->in[3];
        int64_t full[4] = {q->dims[0], H, q->dims[1], k->dims[1]};
        ok = m->rank >= 0 && m->rank <= 4;
        for (int i = 0; ok && i < m->rank; i++) {
            int64_t md = m->dims[i], f = full[4 - m->rank + i];
            ok = md < 0 || f < 0 || md == 1 || md == f;
        }
        if (!ok && m->rank >= 0)
            return frt_op_fail(c, FRT_ERR_SHAPE, "mask %s does not broadcast to [B, H, Sq, Sk]",
                               frt_shape_str(m, s1, sizeof s1));
    }
    int64_t od[3] = {q->dims[0], q->dims[1], v->dims[2]};
    frt_op_set_shape(c->out[0], FRT_FLOAT32, 3, od);
    return FRT_OK;
}

/* Heads run on up to ATT_SLOTS pool threads, each with its own scores buffer. */
#define ATT_SLOTS 4

/* Floats of one slot (a multiple of 16: 64-byte aligned slots): the scores [Sq, Sk], and on the
 * causal path K_h^T packed once per head for the SGEMM (frt_sgemm_pack_b of [dk, Sk]). */
static size_t att_slot_floats(const att_params *p, int64_t Sq, int64_t Sk, int64_t dk) {
    size_t n = ((size_t)Sq * (size_t)Sk + 15) / 16 * 16;
    if (p->causal) n += (frt_sgemm_pack_b_size(dk, Sk) + 15) / 16 * 16;
    return n;
}

static size_t att_scratch(const frt_step *s, const frt_value *values) {
    const att_params *p = s->k.params;
    const frt_value *q = &values[s->in[0]], *k = &values[s->in[1]];
    int64_t heads = q->dims[0] * p->H, slots = heads < ATT_SLOTS ? heads : ATT_SLOTS;
    if (slots < 1) slots = 1;
    return (size_t)slots *
               att_slot_floats(p, q->dims[1], k->dims[1], q->dims[2] / (p->qkv ? 3 : 1) / p->H) *
               sizeof(float) + 64;
}

typedef struct att_job {
    const att_params *p;
    const float *Q, *K, *V, *M;
    const bool *C;
    float *Y, *S;
    int64_t B, Sq, Sk, dk, dv, per_slot, heads_per_task;
    int64_t ldq, ldv, ldy; /* row strides of Q and K, of V, of Y */
    int64_t ms[4];
} att_job;

/* C = alpha A op(B) + beta C for the per-head products (A, C row-major, B transposed when tb):
 * the tier's own blocked kernel where it has SIMD inner loops (p->own; on the AVX2 tier it beats
 * OpenBLAS on these small products: 128x128x64 and 128x64x128, 12 heads, 656-674 us vs 752-778
 * us; the AVX-512 tier's frt_sgemm is that kernel already), else frt_sgemm. */
static void att_mm(const att_params *p, int tb, int64_t M, int64_t N, int64_t K, float alpha,
                   const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                   int64_t ldc) {
    if (p->own)
        frt_sgemm_tier(frt_cpu_tier(), 0, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        frt_sgemm(0, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* Rows of the causal path per block: the tile height of the AVX-512 SGEMM. */
#define ATT_CZ_ROWS 12

/* One head with a causal condition (p->causal; Sq, Sk the constant's): per block of rows
 * [i0, i1), only columns [0, i1 + off) are multiplied, the softmax of row i runs over its
 * i + off + 1 visible columns and the masked ones get probability 0. That equals the full
 * computation when exp(fill - max of the visible scores) underflows to 0 (fill = -inf, the
 * float minimum or -1e4 with ordinary scores); a block where some row does not meet that
 * (|fill - max| < 104) is recomputed over all Sk columns with the fill, as the full path does. */
static void att_head_causal(const att_params *p, int64_t Sq, int64_t Sk, int64_t dk, int64_t dv,
                            const float *Qh, int64_t ldq, const float *Kh, const float *Vh,
                            int64_t ldv, float *Yh, int64_t ldy, float *S, float *Kp) {
    const int64_t off = p->cz_off;
    frt_sgemm_pack_b(1, dk, Sk, Kh, ldq, Kp); /* K_h^T, packed once for all row blocks */
    for (int64_t i0 = 0; i0 < Sq; i0 += ATT_CZ_ROWS) {
        const int64_t i1 = i0 + ATT_CZ_ROWS < Sq ? i0 + ATT_CZ_ROWS : Sq;
        int64_t nv = i1 + off < Sk ? i1 + off : Sk; /* columns visible to some row of the block */
        float *Sb = S + i0 * Sk;
        frt_sgemm_pb_n(0, i1 - i0, Sk, nv, dk, p->scale, Qh + i0 * ldq, ldq, Kp, 0.0f, Sb, Sk);
        bool full = false;
        for (int64_t i = i0; i < i1 && !full; i++) {
            const float *r = S + i * Sk;
            const int64_t L = i + off + 1 < Sk ? i + off + 1 : Sk;
            float mx = r[0];
            for (int64_t c = 1; c < L; c++) mx = r[c] > mx ? r[c] : mx;
            /* expf(x) is 0 in float below about -103.97: the masked columns add nothing */
            full = L < Sk && !(p->fill - mx < -104.0f);
        }
        if (full) { /* the masked columns count: the whole rows, as the full path computes them */
            nv = Sk;
            frt_sgemm_pb_n(0, i1 - i0, Sk, Sk, dk, p->scale, Qh + i0 * ldq, ldq, Kp, 0.0f, Sb, Sk);
            for (int64_t i = i0; i < i1; i++)
                for (int64_t c = i + off + 1; c < Sk; c++) S[i * Sk + c] = p->fill;
            p->softmax(Sb, Sb, (size_t)(i1 - i0), (size_t)Sk);
        } else {
            for (int64_t i = i0; i < i1; i++) {
                float *r = S + i * Sk;
                const int64_t L = i + off + 1 < Sk ? i + off + 1 : Sk;
                p->softmax(r, r, 1, (size_t)L);
                for (int64_t c = L; c < nv; c++) r[c] = 0.0f;
            }
        }
        att_mm(p, 0, i1 - i0, dv, nv, 1.0f, Sb, Sk, Vh, ldv, 0.0f, Yh + i0 * ldy, ldy);
    }
}

/* Heads [t * heads_per_task, ...) of the B*H, with scores slot t. */
static void att_task(void *ctx, size_t t) {
    const att_job *j = ctx;
    const att_params *p = j->p;
    const int64_t H = p->H, Sq = j->Sq, Sk = j->Sk, dk = j->dk, dv = j->dv;
    const int64_t ldq = j->ldq, ldv = j->ldv, ldy = j->ldy;
    float *S = j->S + (int64_t)t * j->per_slot;
    int64_t h0 = (int64_t)t * j->heads_per_task, h1 = h0 + j->heads_per_task;
    if (h1 > j->B * H) h1 = j->B * H;
    for (int64_t bh = h0; bh < h1; bh++) {
        const int64_t b = bh / H, h = bh % H;
        const float *Qh = j->Q + b * Sq * ldq + h * dk, *Kh = j->K + b * Sk * ldq + h * dk;
        const float *Vh = j->V + b * Sk * ldv + h * dv;
        float *Yh = j->Y + b * Sq * ldy + h * dv;
        if (Sk == 0) {
            for (int64_t i = 0; i < Sq; i++) memset(Yh + i * ldy, 0, (size_t)dv * sizeof(float));
            continue;
        }
        if (p->causal && Sq == p->cz_sq && Sk == p->cz_sk) {
            att_head_causal(p, Sq, Sk, dk, dv, Qh, ldq, Kh, Vh, ldv, Yh, ldy, S,
                            S + (Sq * Sk + 15) / 16 * 16);
            continue;
        }
        if (p->mode == 1 && j->ms[3] == 1) {
            /* contiguous mask rows: S starts as the mask, the product adds to it (beta 1) */
            for (int64_t i = 0; i < Sq; i++)
                memcpy(S + i * Sk, j->M + b * j->ms[0] + h * j->ms[1] + i * j->ms[2],
                       (size_t)Sk * sizeof(float));
            att_mm(p, 1, Sq, Sk, dk, p->scale, Qh, ldq, Kh, ldq, 1.0f, S, Sk);
        } else {
            att_mm(p, 1, Sq, Sk, dk, p->scale, Qh, ldq, Kh, ldq, 0.0f, S, Sk);
            for (int64_t i = 0; p->mode && i < Sq; i++) {
                float *r = S + i * Sk;
                const int64_t o = b * j->ms[0] + h * j->ms[1] + i * j->ms[2], m3 = j->ms[3];
                if (p->mode == 1)
                    for (int64_t c = 0; c < Sk; c++) r[c] += j->M[o + c * m3];
                else
                    for (int64_t c = 0; c < Sk; c++) r[c] = j->C[o + c * m3] ? p->fill : r[c];
            }
        }
        p->softmax(S, S, (size_t)Sq, (size_t)Sk);
        att_mm(p, 0, Sq, dv, Sk, 1.0f, S, Sk, Vh, ldv, 0.0f, Yh, ldy);
    }
}

static frt_status k_att(const frt_step *s, frt_exec *x) {
    const att_params *p = s->k.params;
    const frt_value *q = &x->values[s->in[0]], *k = &x->values[s->in[1]], *v = &x->values[s->in[2]];
    const frt_value *m = p->mode ? &x->values[s->in[3]] : NULL;
    frt_value *y = &x->values[s->out[0]];
    const int64_t B = q->dims[0], Sq = q->dims[1], Sk = k->dims[1], H = p->H;
    if (q->rank != 3 || k->rank != 3 || v->rank != 3 || k->dims[0] != B || v->dims[0] != B ||
        v->dims[1] != Sk || k->dims[2] != q->dims[2] || q->dims[2] % H || v->dims[2] % H ||
        (p->qkv && (q->dims[2] % (3 * H) || k->data != q->data || v->data != q->data)))
        return frt_step_fail(s, FRT_ERR_SHAPE, "Attention: Q, K, V shapes do not agree");
    const int64_t W = q->dims[2], d = W / (3 * H); /* d: the head width when p->qkv */
    att_job j = {p, q->data, k->data, v->data, NULL, NULL, y->data, x->scratch, B, Sq, Sk,
                 p->qkv ? d : W / H, p->qkv ? d : v->dims[2] / H, 0, 0,
                 W, v->dims[2], p->qkv ? H * d : v->dims[2], {0, 0, 0, 0}};
    if (p->qkv) { /* Q | K | V side by side in one value */
        j.K = (const float *)q->data + H * d;
        j.V = (const float *)q->data + 2 * H * d;
    }
    if (m) { /* mask strides over [B, H, Sq, Sk] (0: broadcast) */
        const int64_t full[4] = {B, H, Sq, Sk};
        int64_t st = 1;
        if (m->rank > 4) return frt_step_fail(s, FRT_ERR_SHAPE, "Attention: mask rank %d", m->rank);
        for (int i = m->rank - 1; i >= 0; i--) {
            int64_t md = m->dims[i], f = full[4 - m->rank + i];
            if (md != 1 && md != f)
                return frt_step_fail(s, FRT_ERR_SHAPE, "Attention: mask dim %d is %lld, not 1 or %lld",
                                     i, (long long)md, (long long)f);
            j.ms[4 - m->rank + i] = md == 1 ? 0 : st;
            st *= md;
        }
        if (p->mode == 1) j.M = m->data;
        else j.C = m->data;
    }
    if (y->numel == 0) return FRT_OK;
    const int64_t heads = B * H;
    /* scores and weighted sum: 2 Sq Sk (dk + dv) flops per head */
    double flops = 2.0 * (double)(heads * Sq * Sk) * (double)(j.dk + j.dv);
    int64_t tasks = frt_par_threads(x->tp, flops * FRT_PAR_NS_PER_FLOP);
    if (tasks > ATT_SLOTS) tasks = ATT_SLOTS;
    if (tasks > heads) tasks = heads;
    if (tasks < 1) tasks = 1;
    j.per_slot = (int64_t)att_slot_floats(p, Sq, Sk, j.dk);
    j.heads_per_task = (heads + tasks - 1) / tasks;
    tasks = (heads + j.heads_per_task - 1) / j.heads_per_task;
    if (tasks > 1) frt_parallel_for(x->tp, (size_t)tasks, att_task, &j);
    else att_task(&j, 0);
    return FRT_OK;
}

/* Whether the bool condition m is a constant [1, .., 1, Sq, Sk] with m[i][c] = c > i + off for
 * some off >= 0 (every row sees column 0): the causal mask of a decoder. */
static bool att_causal(const frt_value *m, int64_t *sq, int64_t *sk, int64_t *off) {
    if (!m->data || m->dtype != FRT_BOOL || m->rank < 2 || m->rank > 4) return false;
    for (int i = 0; i < m->rank - 2; i++)
        if (m->dims[i] != 1) return false;
    const int64_t Sq = m->dims[m->rank - 2], Sk = m->dims[m->rank - 1], o = Sk - Sq;
    if (Sq < 1 || Sk < 1 || o < 0) return false;
    const bool *b = m->data;
    for (int64_t i = 0; i < Sq; i++)
        for (int64_t j = 0; j < Sk; j++)
            if (b[i * Sk + j] != (j > i + o)) return false;
    *sq = Sq;
    *sk = Sk;
    *off = o;
    return true;
}

static frt_status att_select(frt_op_ctx *c, frt_kernel *k) {
    att_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->H = frt_attr_int(c->node, "num_heads", 0);
    p->scale = frt_attr_float(c->node, "scale", 1.0f);
    p->fill = frt_attr_float(c->node, "fill", 0.0f);
    p->mode = (int)frt_attr_int(c->node, "mask_mode", 0);
    p->qkv = (int)frt_attr_int(c->node, "qkv", 0);
    p->own = frt_sgemm_pick(frt_cpu_tier())->ukr != NULL;
    if (!isfinite(p->scale))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "scale %g must be finite", (double)p->scale);
    const frt_act_variant *v = frt_act_variant_get(c->isa);
    p->softmax = v->softmax_rows;
    p->causal = p->mode == 2 && c->n_in == 4 && att_causal(c->in[3], &p->cz_sq, &p->cz_sk, &p->cz_off);
    static const char *const names[2][3] = {
        {"attention_f32", "attention_f32_avx2", "attention_f32_avx512"},
        {"attention_f32_causal", "attention_f32_causal_avx2", "attention_f32_causal_avx512"}};
    k->name = names[p->causal][v->isa];
    k->fn = k_att;
    k->scratch = att_scratch;
    k->params = p;
    return FRT_OK;
}

FRT_OP_IMPL(transformer, FusedMatMul, fmm_infer, fmm_select);
FRT_OP_IMPL(transformer, Attention, att_infer, att_select);
