/* flatrt::EmbeddingBag: the Loop that torch (1.13, opset 13) exports for nn.EmbeddingBag, as one
 * kernel (created by src/passes/embedding_bag.c; models cannot name it).
 *
 * Inputs:  W [N, E...] float32 (the table), Idx [L, K...] int32/int64, Starts [S] and Ends [S']
 *          int32/int64, M (trip count, one int64 element).
 * Output:  Y [max(M, 0), K..., E...] float32.
 * Attribute: mode 0 sum, 1 mean, 2 max.
 *
 * Bag i (0 <= i < M) is exactly what the replaced Loop body computes at iteration i:
 *   s = Starts[i], e = Ends[i]                            (Gather: i must be < S and < S')
 *   rows = Idx[s:e] along axis 0                          (Slice: negative s/e count from L,
 *                                                          both clamped to [0, L]; e <= s: none)
 *   Y[i] = reduce over the rows r of W[Idx[r, k]]         (Gather: an index in [-N, N), negative
 *                                                          counts from N; anything else fails)
 * reduced in row order in float32 with the reduction loops of ReduceSum/ReduceMean/ReduceMax
 * (src/ops/reduce.c), so the results equal the unfused Loop's. An empty bag gives 0 (sum), NaN
 * (mean: 0/0) and -inf (max), as the Reduce ops do for an empty reduction. Bad offsets or indices
 * fail the step with FRT_ERR_RUNTIME naming the bag and the value. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "x86/simd_reduce.h"

enum { EB_SUM = 0, EB_MEAN = 1, EB_MAX = 2 };

typedef struct eb_params {
    int mode;
    const frt_reduce_variant *v;
} eb_params;

/* Trip count from input 4 (one integer element). */
static bool read_trip(const frt_value *m, int64_t *out) {
    if (!m || !m->data || m->numel != 1 || !(m->dtype == FRT_INT64 || m->dtype == FRT_INT32))
        return false;
    *out = frt_value_get_int(m, 0);
    return true;
}

static frt_status eb_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 5, 5, 1, 1);
    if (st) return st;
    for (int i = 0; i < 5; i++)
        if (!c->in[i]) return frt_op_fail(c, FRT_ERR_MALFORMED, "input %d is missing", i);
    const frt_value *W = c->in[0], *I = c->in[1], *S = c->in[2], *E = c->in[3], *M = c->in[4];
    if (W->dtype != FRT_FLOAT32)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "table dtype %s (float32 only)",
                           frt_dtype_name(W->dtype));
    for (int i = 1; i < 4; i++)
        if (c->in[i]->dtype != FRT_INT64 && c->in[i]->dtype != FRT_INT32)
            return frt_op_fail(c, FRT_ERR_MALFORMED, "input %d has dtype %s (int32 or int64)", i,
                               frt_dtype_name(c->in[i]->dtype));
    if (M->dtype != FRT_INT64 && M->dtype != FRT_INT32)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "trip count has dtype %s",
                           frt_dtype_name(M->dtype));
    if (W->rank == 0 || I->rank == 0 || (S->rank >= 0 && S->rank != 1) ||
        (E->rank >= 0 && E->rank != 1))
        return frt_op_fail(c, FRT_ERR_SHAPE, "ranks: table %d (>= 1), indices %d (>= 1), offsets "
                           "%d and %d (1)", W->rank, I->rank, S->rank, E->rank);
    int64_t dims[FRT_MAX_RANK];
    if (W->rank < 0 || I->rank < 0) {
        frt_op_set_shape(c->out[0], FRT_FLOAT32, -1, NULL);
        return FRT_OK;
    }
    int rank = I->rank - 1 + W->rank;
    if (rank > FRT_MAX_RANK) return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "output rank %d", rank);
    int64_t m = -1;
    if (M->data && read_trip(M, &m) && m < 0) m = 0;
    dims[0] = m;
    int r = 1;
    for (int d = 1; d < I->rank; d++) dims[r++] = I->dims[d];
    for (int d = 1; d < W->rank; d++) dims[r++] = W->dims[d];
    frt_op_set_shape(c->out[0], FRT_FLOAT32, rank, dims);
    return FRT_OK;
}

/* Product of dims [from, rank). */
static int64_t tail(const frt_value *v, int from) {
    int64_t n = 1;
    for (int d = from; d < v->rank; d++) n *= v->dims[d];
    return n;
}

static frt_status eb_run(const frt_step *s, frt_exec *x) {
    const eb_params *p = s->k.params;
    const frt_value *W = &x->values[s->in[0]], *I = &x->values[s->in[1]];
    const frt_value *S = &x->values[s->in[2]], *E = &x->values[s->in[3]];
    frt_value *Y = &x->values[s->out[0]];
    int64_t m;
    if (!read_trip(&x->values[s->in[4]], &m))
        return frt_step_fail(s, FRT_ERR_RUNTIME, "the trip count is not one integer");
    if (m < 0) m = 0;
    if (S->rank != 1 || E->rank != 1)
        return frt_step_fail(s, FRT_ERR_SHAPE, "offsets must have rank 1");
    if (m > S->dims[0] || m > E->dims[0])
        return frt_step_fail(s, FRT_ERR_RUNTIME, "bag %lld of %lld has no offsets: starts has "
                             "%lld entries, ends %lld",
                             (long long)(S->dims[0] < E->dims[0] ? S->dims[0] : E->dims[0]),
                             (long long)m, (long long)S->dims[0], (long long)E->dims[0]);
    const int64_t L = I->dims[0], K = tail(I, 1), N = W->dims[0], D = tail(W, 1);
    const int64_t KD = K * D;
    if (Y->rank < 1 || Y->dims[0] != m || Y->numel != m * KD)
        return frt_step_fail(s, FRT_ERR_SHAPE, "output has %lld bags, the trip count is %lld",
                             (long long)(Y->rank >= 1 ? Y->dims[0] : -1), (long long)m);
    const float *w = W->data;
    float *y = Y->data;
    const frt_reduce_col_fn col = p->v->col[p->mode == EB_MAX ? FRT_RK_MAX : FRT_RK_SUM];
    const float init = p->mode == EB_MAX ? -INFINITY : 0.0f;
    const bool i64 = I->dtype == FRT_INT64;
    const int64_t *ix64 = I->data;
    const int32_t *ix32 = I->data;
    for (int64_t i = 0; i < m; i++) {
        int64_t b = frt_value_get_int(S, i), e = frt_value_get_int(E, i);
        if (b < 0) b += L;
        if (e < 0) e += L;
        b = b < 0 ? 0 : b > L ? L : b;
        e = e < 0 ? 0 : e > L ? L : e;
        float *out = y + i * KD;
        for (int64_t j = 0; j < KD; j++) out[j] = init;
        for (int64_t r = b; r < e; r++)
            for (int64_t k = 0; k < K; k++) {
                int64_t q = r * K + k;
                int64_t row = i64 ? ix64[q] : ix32[q];
                if (row < 0) row += N;
                if (row < 0 || row >= N)
                    return frt_step_fail(s, FRT_ERR_RUNTIME, "bag %lld: index %lld (at position "
                                         "%lld of the indices) is out of range for %lld rows",
                                         (long long)i, (long long)(i64 ? ix64[q] : ix32[q]),
                                         (long long)q, (long long)N);
                col(out + k * D, w + row * D, (size_t)D);
            }
        if (p->mode == EB_MEAN) {
            const float n = (float)(e > b ? e - b : 0);
            for (int64_t j = 0; j < KD; j++) out[j] = out[j] / n;
        }
    }
    return FRT_OK;
}

static frt_status eb_select(frt_op_ctx *c, frt_kernel *k) {
    int64_t mode = frt_attr_int(c->node, "mode", -1);
    if (mode < EB_SUM || mode > EB_MAX)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "mode %lld (0 sum, 1 mean, 2 max)", (long long)mode);
    eb_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    p->mode = (int)mode;
    p->v = frt_reduce_variant_get(c->isa);
    static const char *const names[3][3] = {
        {"embedding_bag_sum", "embedding_bag_sum_avx2", "embedding_bag_sum_avx512"},
        {"embedding_bag_mean", "embedding_bag_mean_avx2", "embedding_bag_mean_avx512"},
        {"embedding_bag_max", "embedding_bag_max_avx2", "embedding_bag_max_avx512"}};
    k->name = names[mode][p->v->isa == FRT_ISA_AVX512 ? 2 : p->v->isa == FRT_ISA_AVX2 ? 1 : 0];
    k->fn = eb_run;
    k->params = p;
    return FRT_OK;
}

FRT_OP_IMPL(embedding_bag, EmbeddingBag, eb_infer, eb_select);
