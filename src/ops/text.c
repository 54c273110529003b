/* Text feature ops: TfIdfVectorizer on integer tokens (int32 / int64; string tokens are not
 * supported).
 *
 * TfIdfVectorizer: X [C] or [N, C] tokens -> Y [O] or [N, O] float32, O = max(ngram_indexes) + 1.
 * The pool (pool_int64s) holds the n-grams to count, level by level: ngram_counts[k] is where the
 * (k+1)-grams start (in tokens), so level k has (next start - start) / (k+1) grams; the g-th gram
 * of the pool (over all levels) is counted into output ngram_indexes[g]. For every row, n-grams of
 * n in [min_gram_length, max_gram_length] are counted: unigrams once per token, and n-grams with
 * n >= 2 once for each skip distance 1..max_skip_count+1 (tokens i, i+d, ..., i+(n-1)d).
 * mode TF: the count; IDF: weights[g] (1 without weights) when the count is non-zero, else 0;
 * TFIDF: count * weights[g] (weight 1 without weights). A gram listed twice in the pool counts at
 * its first entry.
 */
#include <string.h>

#include "dtype_util.h"
#include "op.h"

enum { TF_TF, TF_IDF, TF_TFIDF };

typedef struct tfidf_params {
    int mode;
    int64_t min_n, max_n, max_skip, out_size;
    int64_t n_levels;
    const int64_t *level_start; /* n_levels + 1 entries (last = pool size), in tokens */
    const int64_t *pool;
    const int64_t *out_index;   /* per gram */
    const float *weights;       /* per gram, or NULL */
    int64_t n_grams;
} tfidf_params;

static frt_status tfidf_parse(const frt_op_ctx *c, tfidf_params *p, frt_arena *arena) {
    const frt_node *n = c->node;
    const char *mode = frt_attr_string(n, "mode", "");
    if (!strcmp(mode, "TF")) p->mode = TF_TF;
    else if (!strcmp(mode, "IDF")) p->mode = TF_IDF;
    else if (!strcmp(mode, "TFIDF")) p->mode = TF_TFIDF;
    else return frt_op_fail(c, FRT_ERR_SHAPE, "mode '%s' must be TF, IDF or TFIDF", mode);
    p->min_n = frt_attr_int(n, "min_gram_length", 0);
    p->max_n = frt_attr_int(n, "max_gram_length", 0);
    p->max_skip = frt_attr_int(n, "max_skip_count", 0);
    if (p->min_n < 1 || p->max_n < p->min_n || p->max_n > 64 || p->max_skip < 0 ||
        p->max_skip > (1 << 20))
        return frt_op_fail(c, FRT_ERR_SHAPE, "gram lengths %lld..%lld / max_skip_count %lld invalid",
                           (long long)p->min_n, (long long)p->max_n, (long long)p->max_skip);
    if (frt_attr_find(n, "pool_strings"))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "string pools (pool_strings) are not supported");
    size_t nc, ni, np, nw;
    const int64_t *counts = frt_attr_ints(n, "ngram_counts", &nc);
    const int64_t *idx = frt_attr_ints(n, "ngram_indexes", &ni);
    const int64_t *pool = frt_attr_ints(n, "pool_int64s", &np);
    const float *w = frt_attr_floats(n, "weights", &nw);
    if (!counts || !idx || nc == 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "ngram_counts and ngram_indexes are required");
    if ((int64_t)nc < p->max_n)
        return frt_op_fail(c, FRT_ERR_SHAPE, "ngram_counts has %zu levels, max_gram_length is %lld",
                           nc, (long long)p->max_n);
    int64_t *starts = arena ? frt_arena_alloc(arena, (nc + 1) * sizeof(int64_t), 8) : NULL;
    if (arena && !starts) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    int64_t grams = 0;
    for (size_t k = 0; k < nc; k++) {
        int64_t a = counts[k], b = k + 1 < nc ? counts[k + 1] : (int64_t)np;
        if (a < 0 || b < a || b > (int64_t)np || (b - a) % (int64_t)(k + 1))
            return frt_op_fail(c, FRT_ERR_SHAPE, "ngram_counts[%zu] = %lld does not split the pool "
                               "of %zu tokens into %zu-grams", k, (long long)a, np, k + 1);
        grams += (b - a) / (int64_t)(k + 1);
        if (starts) starts[k] = a;
    }
    if ((int64_t)ni != grams || (w && (int64_t)nw != grams))
        return frt_op_fail(c, FRT_ERR_SHAPE, "%zu ngram_indexes / %zu weights for %lld pool n-grams",
                           ni, w ? nw : 0, (long long)grams);
    int64_t out = 0;
    for (size_t g = 0; g < ni; g++) {
        if (idx[g] < 0 || idx[g] > ((int64_t)1 << 30))
            return frt_op_fail(c, FRT_ERR_SHAPE, "ngram_indexes[%zu] = %lld", g, (long long)idx[g]);
        if (idx[g] + 1 > out) out = idx[g] + 1;
    }
    if (starts) {
        starts[nc] = (int64_t)np;
        /* the kernel keeps its own copies (params outlive nothing but the model arena) */
        int64_t *pc = frt_arena_alloc(arena, (np + 1) * sizeof(int64_t), 8);
        int64_t *ic = frt_arena_alloc(arena, (ni + 1) * sizeof(int64_t), 8);
        float *wc = w ? frt_arena_alloc(arena, (nw + 1) * sizeof(float), 8) : NULL;
        if (!pc || !ic || (w && !wc)) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
        if (np) memcpy(pc, pool, np * sizeof(int64_t));
        memcpy(ic, idx, ni * sizeof(int64_t));
        if (w) memcpy(wc, w, nw * sizeof(float));
        pool = pc;
        idx = ic;
        w = wc;
    }
    p->out_size = out;
    p->n_levels = (int64_t)nc;
    p->level_start = starts;
    p->pool = pool;
    p->out_index = idx;
    p->weights = w;
    p->n_grams = grams;
    return FRT_OK;
}

static frt_status tfidf_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    const frt_value *x = c->in[0];
    if (x->dtype != FRT_INT32 && x->dtype != FRT_INT64)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (int32, int64)",
                           frt_dtype_name(x->dtype));
    tfidf_params p;
    memset(&p, 0, sizeof p);
    if ((st = tfidf_parse(c, &p, NULL))) return st;
    if (x->rank < 0) {
        frt_op_set_shape(c->out[0], FRT_FLOAT32, -1, NULL);
        return FRT_OK;
    }
    if (x->rank != 1 && x->rank != 2)
        return frt_op_fail(c, FRT_ERR_SHAPE, "input must be [C] or [N, C]");
    int64_t od[2] = {x->rank == 2 ? x->dims[0] : p.out_size, p.out_size};
    frt_op_set_shape(c->out[0], FRT_FLOAT32, x->rank, od);
    return FRT_OK;
}

/* Index (over all levels) of the n-gram tok[0], tok[d], ... in the pool, or -1. */
static int64_t tfidf_find(const tfidf_params *p, int32_t dt, const void *row, int64_t i, int64_t d,
                          int64_t n) {
    int64_t a = p->level_start[n - 1], b = p->level_start[n], g0 = 0;
    for (int64_t k = 0; k < n - 1; k++) g0 += (p->level_start[k + 1] - p->level_start[k]) / (k + 1);
    for (int64_t e = a, g = g0; e < b; e += n, g++) {
        int64_t j = 0;
        while (j < n && p->pool[e + j] == frt_ld_i64(dt, row, i + j * d)) j++;
        if (j == n) return g;
    }
    return -1;
}

static frt_status tfidf_kernel(const frt_step *s, frt_exec *x) {
    const tfidf_params *p = s->k.params;
    const frt_value *xv = &x->values[s->in[0]];
    float *Y = x->values[s->out[0]].data;
    int64_t rows = xv->rank == 2 ? xv->dims[0] : 1, C = xv->dims[xv->rank - 1];
    size_t es = frt_dtype_size(xv->dtype);
    memset(Y, 0, (size_t)(rows * p->out_size) * sizeof(float));
    for (int64_t r = 0; r < rows; r++) {
        const void *row = (const char *)xv->data + (size_t)(r * C) * es;
        float *y = Y + r * p->out_size;
        for (int64_t n = p->min_n; n <= p->max_n; n++) {
            int64_t dmax = n == 1 ? 1 : p->max_skip + 1;
            for (int64_t d = 1; d <= dmax; d++)
                for (int64_t i = 0; i + (n - 1) * d < C; i++) {
                    int64_t g = tfidf_find(p, xv->dtype, row, i, d, n);
                    if (g >= 0) y[p->out_index[g]] += 1.0f;
                }
        }
        if (p->mode == TF_TF) continue;
        for (int64_t g = 0; g < p->n_grams; g++) {
            float *v = &y[p->out_index[g]];
            float w = p->weights ? p->weights[g] : 1.0f;
            *v = p->mode == TF_IDF ? (*v > 0 ? w : 0.0f) : *v * w;
        }
    }
    return FRT_OK;
}

static frt_status tfidf_select(frt_op_ctx *c, frt_kernel *k) {
    tfidf_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    memset(p, 0, sizeof *p);
    frt_status st = tfidf_parse(c, p, c->arena);
    if (st) return st;
    k->name = "tfidf_int";
    k->fn = tfidf_kernel;
    k->params = p;
    return FRT_OK;
}

FRT_OP_IMPL(text, TfIdfVectorizer, tfidf_infer, tfidf_select);
