/* flatrt::ChannelShuffle: ShuffleNet's channel shuffle with the Concat in front of it and the
 * channel Slices / Split after it, as one copy (made by src/passes/fuse_shuffle.c).
 *
 *   inputs   X_0 .. X_{k-1}: [N, C_i, spatial...], the same dtype, N and spatial dims (k >= 1)
 *   attrs    group = A >= 1 (divides C = sum C_i; B = C / A), starts / ends: ints, one pair per
 *            output, 0 <= start < end <= C
 *   outputs  Y_j = shuffled channels [starts[j], ends[j]): [N, ends[j] - starts[j], spatial...]
 *
 * With Z = Concat(X, axis 1), the shuffle is Reshape(Z, [N, A, B, spatial...]), Transpose(0, 2,
 * 1, 3, ...), Reshape back to [N, C, spatial...]: shuffled channel c is Z's channel
 * (c % A) * B + c / A. (A = groups for torch's channel_shuffle's view(N, groups, C/groups, H, W).)
 *
 * Kernels: plain (any fixed-size dtype, one plane copy per output channel, shapes read at run
 * time); on blocked float32 data (every input in the provider's nChw8c / nChw16c layout, channel
 * counts known at load) the outputs are written in that layout too, by the tier's gather loop
 * (blocked.h) over a plan made at select: no reorder to plain and back around the shuffle. */
#include <string.h>

#include "blocked.h"
#include "cpu.h"
#include "op.h"
#include "util/threadpool.h"

/* Inputs / outputs the blocked kernel takes (its per-image pointer arrays live on the stack). */
enum { SHUF_MAX_IO = 16 };

typedef struct shuf_params {
    int64_t group;
    int32_t n_out;
    const int64_t *starts, *ends;   /* n_out each */
    /* blocked kernel */
    int64_t b;                      /* the layout's block */
    const int64_t *cin;             /* channels of each input, known at load */
    frt_blk_gather_fn gather;
    const frt_blk_gchunk *ch;
    const frt_blk_gsrc *src;
    int64_t n_ch;                   /* chunks of one image (all outputs) */
    double chunk_ns;                /* cost model: one chunk at one position */
} shuf_params;

static frt_status shuf_attrs(const frt_op_ctx *c, int64_t *A, const int64_t **st,
                             const int64_t **en) {
    const frt_onnx_attr *g = frt_attr_find(c->node, "group");
    if (!g || g->type != FRT_ATTR_INT || g->i < 1)
        return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute 'group' (int >= 1) is required");
    size_t ns = 0, ne = 0;
    *st = frt_attr_ints(c->node, "starts", &ns);
    *en = frt_attr_ints(c->node, "ends", &ne);
    if (!*st || !*en || ns != ne || ns != (size_t)c->n_out)
        return frt_op_fail(c, FRT_ERR_MALFORMED,
                           "attributes 'starts' and 'ends' need one entry per output");
    *A = g->i;
    return FRT_OK;
}

/* infer: outputs [N, end - start, spatial...]; N and spatial dims from the first input that knows
 * them, the channel sum checked against group and the ranges when every C_i is known. */
static frt_status shuf_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, INT32_MAX, 1, INT32_MAX);
    if (st) return st;
    int64_t A;
    const int64_t *s0, *e0;
    if ((st = shuf_attrs(c, &A, &s0, &e0))) return st;
    int rank = -1;
    int32_t dtype = 0;
    int64_t dims[FRT_MAX_RANK], C = 0;
    for (int i = 0; i < c->n_in; i++) {
        if ((st = frt_op_check_input(c, i, 0))) return st;
        const frt_value *v = c->in[i];
        if (i == 0) dtype = v->dtype;
        else if (v->dtype != dtype)
            return frt_op_fail(c, FRT_ERR_SHAPE, "input %d has another dtype than input 0", i);
        if (v->rank < 0) return frt_op_fail(c, FRT_ERR_SHAPE, "input %d has no known rank", i);
        if (rank < 0) {
            rank = v->rank;
            if (rank < 2) return frt_op_fail(c, FRT_ERR_SHAPE, "inputs need [N, C, ...]");
            for (int d = 0; d < rank; d++) dims[d] = -1;
        } else if (v->rank != rank) {
            return frt_op_fail(c, FRT_ERR_SHAPE, "input %d has rank %d, input 0 %d", i, v->rank,
                               rank);
        }
        for (int d = 0; d < rank; d++) {
            if (d == 1 || v->dims[d] < 0) continue;
            if (dims[d] < 0) dims[d] = v->dims[d];
            else if (dims[d] != v->dims[d])
                return frt_op_fail(c, FRT_ERR_SHAPE, "input %d differs in dim %d", i, d);
        }
        C = C < 0 || v->dims[1] < 0 ? -1 : C + v->dims[1];
    }
    if (C >= 0 && C % A)
        return frt_op_fail(c, FRT_ERR_SHAPE, "group %lld does not divide %lld channels",
                           (long long)A, (long long)C);
    for (int j = 0; j < c->n_out; j++) {
        if (s0[j] < 0 || e0[j] <= s0[j] || (C >= 0 && e0[j] > C))
            return frt_op_fail(c, FRT_ERR_SHAPE, "output %d: channels [%lld, %lld) of %lld", j,
                               (long long)s0[j], (long long)e0[j], (long long)C);
        dims[1] = e0[j] - s0[j];
        frt_op_set_shape(c->out[j], dtype, rank, dims);
    }
    return FRT_OK;
}

/* Concat channel of shuffled channel c (C channels, group A). */
static inline int64_t shuf_src(int64_t c, int64_t A, int64_t C) {
    return (c % A) * (C / A) + c / A;
}

/* ---- plain kernel ---- */

static frt_status shuf_plain_run(const frt_step *s, frt_exec *x) {
    const shuf_params *p = s->k.params;
    const frt_value *X0 = &x->values[s->in[0]];
    size_t es = frt_dtype_size((frt_dtype)X0->dtype);
    int64_t N = X0->dims[0], S = 1, C = 0;
    for (int d = 2; d < X0->rank; d++) S *= X0->dims[d];
    for (int i = 0; i < s->n_in; i++) C += x->values[s->in[i]].dims[1];
    if (C % p->group) return frt_step_fail(s, FRT_ERR_SHAPE, "group does not divide the channels");
    size_t plane = (size_t)S * es;
    for (int j = 0; j < s->n_out; j++) {
        frt_value *Y = &x->values[s->out[j]];
        int64_t len = p->ends[j] - p->starts[j];
        if (p->ends[j] > C) return frt_step_fail(s, FRT_ERR_SHAPE, "channel range past the input");
        for (int64_t n = 0; n < N; n++)
            for (int64_t c = 0; c < len; c++) {
                int64_t z = shuf_src(p->starts[j] + c, p->group, C);
                int i = 0;
                while (z >= x->values[s->in[i]].dims[1]) z -= x->values[s->in[i++]].dims[1];
                const frt_value *Xi = &x->values[s->in[i]];
                memcpy((char *)Y->data + (size_t)(n * len + c) * plane,
                       (const char *)Xi->data + (size_t)(n * Xi->dims[1] + z) * plane, plane);
            }
    }
    return FRT_OK;
}

/* ---- blocked kernel ---- */

typedef struct shuf_job {
    const shuf_params *p;
    const frt_step *s;
    frt_exec *x;
    int64_t S;
} shuf_job;

static void shuf_task(void *ctx, int64_t lo, int64_t hi) {
    const shuf_job *j = ctx;
    const shuf_params *p = j->p;
    while (lo < hi) {
        int64_t n = lo / p->n_ch, q0 = lo % p->n_ch, q1 = p->n_ch;
        if (hi - n * p->n_ch < q1) q1 = hi - n * p->n_ch;
        const float *xs[SHUF_MAX_IO];
        float *ys[SHUF_MAX_IO];
        for (int i = 0; i < j->s->n_in; i++) {
            int64_t img = (p->cin[i] + p->b - 1) / p->b * j->S * p->b;
            xs[i] = (const float *)j->x->values[j->s->in[i]].data + n * img;
        }
        for (int o = 0; o < p->n_out; o++) {
            int64_t img = (p->ends[o] - p->starts[o] + p->b - 1) / p->b * j->S * p->b;
            ys[o] = (float *)j->x->values[j->s->out[o]].data + n * img;
        }
        p->gather(xs, ys, p->ch, p->src, q0, q1, j->S, p->b);
        lo = n * p->n_ch + q1;
    }
}

static frt_status shuf_blk_run(const frt_step *s, frt_exec *x) {
    const shuf_params *p = s->k.params;
    const frt_value *X0 = &x->values[s->in[0]];
    int64_t N = X0->dims[0], S = 1;
    for (int d = 2; d < X0->rank; d++) S *= X0->dims[d];
    for (int i = 0; i < s->n_in; i++)
        if (x->values[s->in[i]].dims[1] != p->cin[i])
            return frt_step_fail(s, FRT_ERR_SHAPE, "input %d: channels differ from the load's", i);
    shuf_job j = {p, s, x, S};
    frt_parallel_ranges(x->tp, N * p->n_ch, p->chunk_ns * (double)S, shuf_task, &j);
    return FRT_OK;
}

/* The gather plan for block b: every 8-lane chunk of every output image, with its sources. */
static frt_status shuf_plan(frt_op_ctx *c, shuf_params *p, int64_t C) {
    int64_t b = p->b, n_ch = 0;
    for (int o = 0; o < p->n_out; o++) n_ch += (p->ends[o] - p->starts[o] + b - 1) / b * (b / 8);
    frt_blk_gchunk *ch = frt_arena_array(c->arena, (size_t)n_ch, sizeof *ch);
    frt_blk_gsrc *src = frt_arena_array(c->arena, (size_t)n_ch * 8, sizeof *src);
    if (!ch || !src) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    int64_t q = 0, ns = 0;
    for (int o = 0; o < p->n_out; o++) {
        int64_t len = p->ends[o] - p->starts[o], nb = (len + b - 1) / b;
        for (int64_t blk = 0; blk < nb; blk++)
            for (int64_t sub = 0; sub < b / 8; sub++, q++) {
                frt_blk_gchunk *k = &ch[q];
                *k = (frt_blk_gchunk){o, (int32_t)blk, (int32_t)sub, (int32_t)ns, 0};
                for (int l = 0; l < 8; l++) {
                    int64_t oc = blk * b + sub * 8 + l;
                    if (oc >= len) break; /* padding lanes: no source */
                    int64_t z = shuf_src(p->starts[o] + oc, p->group, C);
                    int i = 0;
                    while (z >= p->cin[i]) z -= p->cin[i++];
                    int32_t sb = (int32_t)(z / b), ss = (int32_t)(z % b / 8);
                    frt_blk_gsrc *g = NULL;
                    for (int32_t t = k->first; t < k->first + k->n; t++)
                        if (src[t].in == i && src[t].blk == sb && src[t].sub == ss) g = &src[t];
                    if (!g) {
                        g = &src[k->first + k->n++];
                        *g = (frt_blk_gsrc){.in = i, .blk = sb, .sub = ss};
                        ns++;
                    }
                    g->mask |= 1u << l;
                    g->lane[l] = (int32_t)(z % 8);
                }
            }
    }
    p->ch = ch;
    p->src = src;
    p->n_ch = n_ch;
    return FRT_OK;
}

static bool blocked_layout(const frt_layout *L) {
    return L && (L == &frt_layout_nchw8c || L == &frt_layout_nchw16c) && L->block % 8 == 0;
}

static frt_status shuf_select(frt_op_ctx *c, frt_kernel *k) {
    int64_t A;
    const int64_t *s0, *e0;
    frt_status st = shuf_attrs(c, &A, &s0, &e0);
    if (st) return st;
    int32_t dtype = c->in[0]->dtype;
    if (frt_dtype_size((frt_dtype)dtype) == 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s is not supported",
                           frt_dtype_name((frt_dtype)dtype));
    shuf_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    memset(p, 0, sizeof *p);
    p->group = A;
    p->n_out = c->n_out;
    p->starts = s0;
    p->ends = e0;
    k->params = p;
    k->name = "channel_shuffle";
    k->fn = shuf_plain_run;
    /* Blocked: the provider's layout on every input (selection follows producers), float32,
     * channel counts known. Otherwise plain (the layout pass reorders blocked inputs). */
    const frt_layout *L = c->in[0]->layout;
    bool blk = blocked_layout(L) && dtype == FRT_FLOAT32 && c->n_in <= SHUF_MAX_IO &&
               c->n_out <= SHUF_MAX_IO && c->in[0]->rank >= 3;
    int64_t C = 0;
    for (int i = 0; blk && i < c->n_in; i++) {
        blk = c->in[i]->layout == L && c->in[i]->dims[1] > 0;
        C += c->in[i]->dims[1];
    }
    if (!blk) return FRT_OK;
    int64_t *cin = frt_arena_array(c->arena, (size_t)c->n_in, sizeof *cin);
    const frt_layout **lin = frt_arena_array(c->arena, (size_t)c->n_in, sizeof *lin);
    const frt_layout **lout = frt_arena_array(c->arena, (size_t)c->n_out, sizeof *lout);
    if (!cin || !lin || !lout) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    for (int i = 0; i < c->n_in; i++) {
        cin[i] = c->in[i]->dims[1];
        lin[i] = L;
    }
    for (int o = 0; o < c->n_out; o++) lout[o] = L;
    p->b = L->block;
    p->cin = cin;
    if ((st = shuf_plan(c, p, C))) return st;
    const frt_blk_variant *v = frt_blk_variant_get(c->isa, p->b);
    p->gather = v->gather;
    p->chunk_ns = 2.0 * 8 * sizeof(float) * FRT_PAR_NS_PER_BYTE; /* read and write 8 floats */
    bool simd = v->isa >= FRT_ISA_AVX2;
    k->name = p->b == 8 ? (simd ? "channel_shuffle_8c_avx2" : "channel_shuffle_8c")
                        : (simd ? "channel_shuffle_16c_avx2" : "channel_shuffle_16c");
    k->fn = shuf_blk_run;
    k->in_layouts = lin;
    k->out_layouts = lout;
    return FRT_OK;
}

FRT_OP_IMPL(shuffle, ChannelShuffle, shuf_infer, shuf_select);
