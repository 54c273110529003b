/* Dataflow DAG of a program's compute steps for inter-op parallelism (frt_dag in program.h):
 * predecessor counts and successor lists for the scheduler, readers per value and the
 * happens-before relation (a bit matrix, n^2 / 8 bytes) for the concurrency-aware memory plan;
 * the longest (critical) path through it and load-time cost estimates of its positions. */
#include <string.h>

#include "program.h"
#include "util/threadpool.h"

frt_status frt_dag_build(frt_program *prog, const frt_graph *g, frt_arena *arena) {
    prog->dag = NULL;
    if (prog->has_dynamic) return FRT_OK;
    size_t n = prog->n_compute, nv = g->n_values;
    frt_dag *d = frt_arena_alloc(arena, sizeof *d, 64);
    int32_t *prod = frt_arena_array(arena, nv + 1, sizeof(int32_t));
    int32_t *mark = frt_arena_array(arena, n + 1, sizeof(int32_t));
    int32_t *vmark = frt_arena_array(arena, nv + 1, sizeof(int32_t));
    if (!d || !prod || !mark || !vmark) goto oom;
    d->n = (int32_t)n;
    d->words = (n + 63) / 64;
    d->n_pred = frt_arena_array(arena, n + 1, sizeof(int32_t));
    d->succ_off = frt_arena_array(arena, n + 2, sizeof(int32_t));
    d->src = frt_arena_array(arena, n + 1, sizeof(int32_t));
    d->rd_off = frt_arena_array(arena, nv + 2, sizeof(int32_t));
    d->anc = frt_arena_array(arena, n * d->words + 1, sizeof(uint64_t));
    if (!d->n_pred || !d->succ_off || !d->src || !d->rd_off || !d->anc) goto oom;
    for (size_t v = 0; v < nv; v++) prod[v] = vmark[v] = -1;
    for (size_t q = 0; q < n; q++) {
        const frt_node *nd = prog->steps[prog->compute[q]].ir;
        for (int j = 0; j < nd->n_out; j++)
            if (nd->out[j] >= 0) prod[nd->out[j]] = (int32_t)q;
        mark[q] = -1;
    }
    /* pass 0 counts, pass 1 fills (edges deduplicated with mark[p] == q, readers with
       vmark[v] == q) */
    size_t n_edges = 0, n_reads = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            d->succ = frt_arena_array(arena, n_edges + 1, sizeof(int32_t));
            d->rd = frt_arena_array(arena, n_reads + 1, sizeof(int32_t));
            if (!d->succ || !d->rd) goto oom;
            /* counts -> start offsets shifted by one (off[q + 1] = start of q); appending with
               off[p + 1]++ then leaves off[p + 1] = end of p = start of p + 1 */
            int32_t acc = 0;
            for (size_t q = 0; q < n; q++) {
                int32_t c = d->succ_off[q];
                d->succ_off[q] = acc;
                acc += c;
            }
            for (size_t q = n; q > 0; q--) d->succ_off[q] = d->succ_off[q - 1];
            d->succ_off[0] = 0;
            acc = 0;
            for (size_t v = 0; v < nv; v++) {
                int32_t c = d->rd_off[v];
                d->rd_off[v] = acc;
                acc += c;
            }
            for (size_t v = nv; v > 0; v--) d->rd_off[v] = d->rd_off[v - 1];
            d->rd_off[0] = 0;
            for (size_t q = 0; q < n; q++) mark[q] = -1;
            for (size_t v = 0; v < nv; v++) vmark[v] = -1;
        }
        for (size_t q = 0; q < n; q++) {
            const frt_node *nd = prog->steps[prog->compute[q]].ir;
            int32_t nr = frt_node_n_reads(nd);
            for (int j = 0; j < nr; j++) {
                if (nd->in[j] < 0) continue;
                int32_t r = prog->root[nd->in[j]];
                if (vmark[r] != (int32_t)q) {
                    vmark[r] = (int32_t)q;
                    if (pass == 0) {
                        d->rd_off[r]++;
                        n_reads++;
                    } else {
                        d->rd[d->rd_off[r + 1]++] = (int32_t)q;
                    }
                }
                int32_t p = prod[r];
                if (p < 0 || p == (int32_t)q || mark[p] == (int32_t)q) continue;
                mark[p] = (int32_t)q;
                if (pass == 0) {
                    d->succ_off[p]++;
                    d->n_pred[q]++;
                    n_edges++;
                } else {
                    d->succ[d->succ_off[p + 1]++] = (int32_t)q;
                }
            }
        }
    }
    for (size_t q = 0; q < n; q++) {
        if (d->n_pred[q] == 0) d->src[d->n_src++] = (int32_t)q;
        uint64_t *row = &d->anc[q * d->words];
        const frt_node *nd = prog->steps[prog->compute[q]].ir;
        int32_t nr = frt_node_n_reads(nd);
        for (int j = 0; j < nr; j++) {
            if (nd->in[j] < 0) continue;
            int32_t p = prod[prog->root[nd->in[j]]];
            if (p < 0 || p >= (int32_t)q) continue; /* compute order is topological */
            const uint64_t *pr = &d->anc[(size_t)p * d->words];
            for (size_t w = 0; w < d->words; w++) row[w] |= pr[w];
            row[p >> 6] |= (uint64_t)1 << (p & 63);
        }
    }
    /* alone: ancestors + descendants == n - 1 */
    int32_t *nd = mark; /* reused: descendants per position */
    d->alone = frt_arena_array(arena, n + 1, 1);
    if (!d->alone) goto oom;
    for (size_t q = 0; q < n; q++) nd[q] = 0;
    for (size_t q = 0; q < n; q++) {
        const uint64_t *row = &d->anc[q * d->words];
        for (size_t w = 0; w < d->words; w++)
            for (uint64_t b = row[w]; b; b &= b - 1) nd[w * 64 + (size_t)__builtin_ctzll(b)]++;
    }
    for (size_t q = 0; q < n; q++) {
        size_t na = 0;
        const uint64_t *row = &d->anc[q * d->words];
        for (size_t w = 0; w < d->words; w++) na += (size_t)__builtin_popcountll(row[w]);
        d->alone[q] = na + (size_t)nd[q] + 1 == n;
    }
    prog->dag = d;
    return FRT_OK;
oom:
    return frt_error(FRT_ERR_NO_MEMORY, "out of memory building the step graph");
}

uint64_t frt_dag_longest(const frt_dag *d, const uint64_t *w, uint64_t *start) {
    uint64_t best = 0;
    for (int32_t q = 0; q < d->n; q++) start[q] = 0;
    for (int32_t q = 0; q < d->n; q++) { /* positions are in topological order */
        uint64_t fin = start[q] + w[q];
        if (fin > best) best = fin;
        for (int32_t k = d->succ_off[q]; k < d->succ_off[q + 1]; k++)
            if (start[d->succ[k]] < fin) start[d->succ[k]] = fin;
    }
    return best;
}

/* Multiply-adds of a product or convolution node from the shapes inferred at load (0 for other
 * ops), -1 when a shape it needs is unknown. */
static double node_macs(const frt_node *nd, const frt_graph *g) {
    const char *op = nd->op_type;
    bool prod = !strcmp(op, "Gemm") || !strcmp(op, "MatMul") || strstr(op, "Gemm") ||
                strstr(op, "MatMul");
    bool conv = strstr(op, "Conv") != NULL;
    if (!prod && !conv) return 0;
    if (nd->n_in < 2 || nd->n_out < 1 || nd->in[0] < 0 || nd->in[1] < 0 || nd->out[0] < 0)
        return 0;
    const frt_value *a = &g->values[nd->in[0]].v, *w = &g->values[nd->in[1]].v,
                    *y = &g->values[nd->out[0]].v;
    if (a->rank < 1 || w->rank < 1 || y->rank < 0 || !frt_shape_known(a) ||
        !frt_shape_known(w) || !frt_shape_known(y))
        return -1;
    if (prod) return (double)y->numel * (double)a->dims[a->rank - 1];
    /* Conv: each output element sums over w's numel / w.dims[0] inputs (ConvTranspose: each
       input element spreads over as many outputs) */
    double per = w->dims[0] > 0 ? (double)w->numel / (double)w->dims[0] : 0;
    return (strstr(op, "Transpose") ? (double)a->numel : (double)y->numel) * per;
}

int frt_dag_estimate(const frt_program *prog, const frt_graph *g, uint64_t *cost) {
    for (size_t q = 0; q < prog->n_compute; q++) {
        const frt_node *nd = prog->steps[prog->compute[q]].ir;
        double bytes = 0, macs = node_macs(nd, g);
        if (macs < 0) return 0;
        int32_t nr = frt_node_n_reads(nd);
        for (int j = 0; j < nr + nd->n_out; j++) {
            int32_t id = j < nr ? nd->in[j] : nd->out[j - nr];
            if (id < 0) continue;
            const frt_value *v = &g->values[id].v;
            if (v->vtype != FRT_VT_TENSOR) continue;
            if (v->rank < 0 || !frt_shape_known(v)) return 0;
            /* constant inputs: weights (counted as multiply-adds) or tables read in part */
            if (j < nr && prog->vclass[id] == FRT_VC_CONST) continue;
            bytes += (double)frt_value_nbytes(v);
        }
        /* flatrt::EmbeddingBag reads one row of its constant table per index, which is more
           than its output (a bag sums several rows): without them dlrm_small's 8 lookups were
           estimated at ~0.7 us each, measured 3-4 us (128 rows of 256 bytes each, gathered
           from a 2.5 MB table) */
        if (!strcmp(nd->op_type, "EmbeddingBag") && nr >= 2 && nd->in[0] >= 0 && nd->in[1] >= 0) {
            const frt_value *w = &g->values[nd->in[0]].v, *ix = &g->values[nd->in[1]].v;
            if (w->rank < 1 || !frt_shape_known(w) || w->dims[0] <= 0) return 0;
            bytes += (double)ix->numel * (double)frt_value_nbytes(w) / (double)w->dims[0];
        }
        cost[q] = (uint64_t)(FRT_DAG_STEP_NS + bytes * FRT_PAR_NS_PER_BYTE +
                             2.0 * macs * FRT_PAR_NS_PER_FLOP);
    }
    return 1;
}
