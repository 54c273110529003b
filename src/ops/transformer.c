/* Transformer blocks made by the fusion pass (src/passes/fuse_xf.c); models may not use them.
 *
 * flatrt::FusedMatMul(A, W, bias[, R]; activation) float32:
 *   Y = act(A W + bias) [+ R]
 *   A [..., K] (rank >= 2, leading dims folded into M rows), W a constant [K, N], bias N elements
 *   (broadcast over rows), R (optional) of Y's shape [..., N]. activation: 0 none, 1 GELU (erf),
 *   2 GELU (tanh approximation). W is packed once at select for the SGEMM (sgemm.h); bias,
 *   activation and residual are applied by the GEMM's epilogue to each output tile while it is
 *   still in L1 (frt_sgemm_pb_epi_mt), so Y is written once. The activation is the vectorized
 *   loop of the ISA tier (activation_param, x86/simd_act.h).
 */
#include <stdio.h>
#include <string.h>

#include "op.h"
#include "sgemm.h"
#include "util/threadpool.h"
#include "x86/simd_act.h"

typedef struct fmm_params {
    const float *Wp; /* packed W */
    const float *bias;
    int64_t K, N;
    int act;         /* 0 none, 1 gelu, 2 gelu tanh */
    frt_actp_fn act_fn;
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
    const float *b = p->bias + j;
    for (int64_t r = 0; r < m; r++) {
        float *c = C + r * ldc;
        for (int64_t t = 0; t < n; t++) c[t] += b[t];
        if (p->act) p->act_fn(p->act == 1 ? FRT_ACTP_GELU : FRT_ACTP_GELU_TANH, c, c, (size_t)n, no_prm);
        if (e->res) {
            const float *rr = e->res + (i + r) * p->N + j;
            for (int64_t t = 0; t < n; t++) c[t] += rr[t];
        }
    }
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
    frt_sgemm_pb_epi_mt(x->tp, M, p->N, p->K, a->data, p->K, p->Wp, y->data, p->N, fmm_epilogue,
                        &e);
    return FRT_OK;
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
    p->act_fn = frt_actp_variant_get(c->isa)->pointwise;
    size_t np = frt_sgemm_pack_b_size(p->K, p->N);
    float *wp = frt_arena_array(c->arena, np, sizeof(float));
    float *bias = frt_arena_array(c->arena, (size_t)p->N, sizeof(float));
    char *name = frt_arena_alloc(c->arena, 64, 1);
    if (!wp || !bias || !name)
        return frt_op_fail(c, FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for packed weights",
                           np * sizeof(float));
    frt_sgemm_pack_b(0, p->K, p->N, w->data, p->N, wp);
    memcpy(bias, b->data, (size_t)p->N * sizeof(float));
    p->Wp = wp;
    p->bias = bias;
    static const char *const tiers[] = {"portable", "avx2", "avx512"};
    static const char *const acts[] = {"", "_gelu", "_gelu_tanh"};
    snprintf(name, 64, "fused_matmul_f32_%s_bias%s%s",
             tiers[frt_sgemm_pick(frt_cpu_tier())->isa], acts[act], c->n_in > 3 ? "_res" : "");
    k->name = name;
    k->fn = k_fmm;
    k->params = p;
    k->const_copied = 1u << 1 | 1u << 2;
    return FRT_OK;
}

FRT_OP_IMPL(transformer, FusedMatMul, fmm_infer, fmm_select);
