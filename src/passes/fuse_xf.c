/* Transformer fusions over the IR (run by frt_pass_fuse after its own rules).
 *
 *   LayerNorm, decomposed as exporters write it (float32, over the last dim):
 *     m = ReduceMean(X, axes=[-1]); d = Sub(X, m); v = ReduceMean(Pow(d, 2), axes=[-1]);
 *     n = Div(d, Sqrt(Add(v, eps))); Y = Add(Mul(n, gamma), beta)     (Mul/Add in either order)
 *   -> LayerNormalization(X, gamma[, beta]; axis=-1, epsilon=eps) (ai.onnx 17 kernel). The final
 *     Add is optional; gamma and beta are constants of D = X's last dim elements.
 *   GELU, erf form:  x * (1 + Erf(x / sqrt2 | x * (1/sqrt2))) * 0.5   -> Gelu(x)
 *         tanh form: x * (1 + Tanh(c1 * (x + 0.044715 x^3))) * 0.5    -> Gelu(x, approximate=tanh)
 *     (ai.onnx 20 kernel); x^3 as Pow(x, 3) or Mul(x, Mul(x, x)); the 0.5 may multiply x, the
 *     (1 + ...) factor or the product.
 *   MatMul(A, W) + bias [-> Gelu] [-> Add(., R)]  -> flatrt::FusedMatMul(A, W, bias[, R])
 *     W a float32 2-D constant [K, N], bias a float32 constant of N elements, R of the output's
 *     static shape and computed before the MatMul; bias, activation and residual are applied in
 *     the GEMM's output tiles (src/ops/transformer.c).
 *   Attention: Q4 = Transpose(Reshape(Q3), 0,2,1,3), K4T = Transpose(Reshape(K3), 0,2,3,1),
 *     V4 likewise from V3 ([B, S, H*d] -> [B, H, S, d]); P = Softmax(MatMul(Q4, K4T) / c (or * c)
 *     [+ mask | Where(cond, fill, .)], axis -1); Y = Reshape(Transpose(MatMul(P, V4), 0,2,1,3),
 *     [B, Sq, H*dv])  -> flatrt::Attention(Q3, K3, V3[, mask|cond]) reading the heads in place
 *     (no transposes); the mask (float, added) or cond (bool) broadcasts to [B, H, Sq, Sk].
 *     When Q3, K3 and V3 are the three equal parts of a Split of one [B, S, 3W] value on its
 *     last axis (a fused QKV projection) that nothing else reads, the Split goes too: Attention
 *     reads that value in place (attribute qkv = 1).
 *     Here the last node of the chain (the final Reshape) takes over the fused op.
 *
 * Every intermediate must be read by the pattern only (not a graph output). The first node of a
 * chain in topological order takes over the fused op (it reads only values that exist there) and
 * writes the chain's last output; the other nodes are marked dead. */
#include <math.h>
#include <string.h>

#include "ops/op.h"
#include "passes/passes.h"

/* Live readers of value v: up to cap of them in r[], returns how many there are (counting past
 * cap). A graph output counts as an extra reader. */
static int readers(frt_graph *g, int32_t v, frt_node **r, int cap) {
    if (v < 0) return 0;
    int n = g->values[v].is_output ? cap + 1 : 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_node *x = &g->nodes[i];
        if (x->dead) continue;
        for (int k = 0; k < frt_node_n_reads(x); k++)
            if (x->in[k] == v) {
                if (n < cap) r[n] = x;
                n++;
                break;
            }
    }
    return n;
}

/* The only reader of v when it is an op of the default domain named op, else NULL. */
static frt_node *only_reader(frt_graph *g, int32_t v, const char *op) {
    frt_node *r[1];
    if (readers(g, v, r, 1) != 1) return NULL;
    if (r[0]->domain[0] || strcmp(r[0]->op_type, op) != 0 || r[0]->n_out != 1) return NULL;
    return r[0];
}

static bool is_op(const frt_node *n, const char *op, int n_in) {
    return n && !n->dead && !n->domain[0] && strcmp(n->op_type, op) == 0 && n->n_in == n_in &&
           n->n_out == 1;
}

static frt_node *producer(frt_graph *g, int32_t v) {
    int32_t p = v < 0 ? -1 : g->values[v].producer;
    return p < 0 ? NULL : &g->nodes[p];
}

/* Value of a float32 constant with one element. */
static bool const_scalar(const frt_graph *g, int32_t v, float *out) {
    if (v < 0) return false;
    const frt_ir_value *x = &g->values[v];
    if (x->kind != FRT_VALUE_CONST || x->v.dtype != FRT_FLOAT32 || !x->v.data || x->v.numel != 1)
        return false;
    memcpy(out, x->v.data, sizeof *out);
    return true;
}

static bool const_is(const frt_graph *g, int32_t v, float want) {
    float f;
    return const_scalar(g, v, &f) && fabsf(f - want) <= 1e-6f * fabsf(want);
}

/* A float32 constant of n elements whose dims are all 1 but the last. */
static bool const_row(const frt_graph *g, int32_t v, int64_t n) {
    if (v < 0) return false;
    const frt_ir_value *x = &g->values[v];
    if (x->kind != FRT_VALUE_CONST || x->v.dtype != FRT_FLOAT32 || !x->v.data || x->v.numel != n ||
        x->v.rank < 1)
        return false;
    return x->v.dims[x->v.rank - 1] == n;
}

/* The operand of binary node n that is not v (-1 when v is not an operand). */
static int32_t other_in(const frt_node *n, int32_t v) {
    if (n->in[0] == v) return n->in[1];
    if (n->in[1] == v) return n->in[0];
    return -1;
}

/* Whether ReduceMean node r reduces exactly the last of rank dims and keeps them. */
static bool mean_last(const frt_graph *g, const frt_node *r, int rank) {
    if (frt_attr_int(r, "keepdims", 1) != 1) return false;
    size_t na = 0;
    const int64_t *ax = frt_attr_ints(r, "axes", &na);
    int64_t a;
    if (ax) {
        if (na != 1 || r->n_in != 1) return false;
        a = ax[0];
    } else {
        if (r->n_in != 2 || r->in[1] < 0) return false; /* opset 18: axes input */
        const frt_ir_value *x = &g->values[r->in[1]];
        if (x->kind != FRT_VALUE_CONST || x->v.dtype != FRT_INT64 || x->v.numel != 1 || !x->v.data)
            return false;
        memcpy(&a, x->v.data, sizeof a);
    }
    return a == -1 || a == rank - 1;
}

/* Turns node n into default-domain op `op` at opset `opset` with inputs in[0..n_in) (copied into
 * the arena) and output `out`, attributes attrs[0..n_attrs) (copied). The chain's other nodes
 * must be marked dead by the caller. Returns false on allocation failure. */
static bool rewrite(frt_graph *g, frt_arena *arena, frt_node *n, const char *domain,
                    const char *op, int64_t opset, const int32_t *in, int n_in, int32_t out,
                    const frt_onnx_attr *attrs, size_t n_attrs) {
    int32_t *nin = frt_arena_array(arena, (size_t)(n_in > 0 ? n_in : 1), sizeof(int32_t));
    frt_onnx_attr *na = n_attrs ? frt_arena_array(arena, n_attrs, sizeof *na) : NULL;
    if (!nin || (n_attrs && !na)) return false;
    memcpy(nin, in, (size_t)n_in * sizeof *nin);
    if (n_attrs) memcpy(na, attrs, n_attrs * sizeof *na);
    int32_t id = (int32_t)(n - g->nodes);
    /* the old output is no longer produced by anyone */
    if (n->out[0] != out) {
        g->values[n->out[0]].producer = -1;
        g->values[n->out[0]].n_uses = 0;
    }
    n->in = nin;
    n->n_in = n_in;
    n->n_cap = 0;
    n->out[0] = out;
    n->n_out = 1;
    n->domain = domain;
    n->op_type = op;
    n->opset = opset;
    frt_op_created(domain, op, opset);
    n->attrs = na;
    n->n_attrs = n_attrs;
    g->values[out].producer = id;
    return true;
}

/* ---- LayerNorm ------------------------------------------------------------------------------ */

static int fuse_layernorm(frt_graph *g, frt_arena *arena, frt_node *rm1, frt_status *st) {
    if (!is_op(rm1, "ReduceMean", rm1->n_in) || rm1->n_in < 1) return 0;
    if (!FRT_OP_BUILT(LayerNormalization) || !frt_op_probe(FRT_DOMAIN_ONNX, "LayerNormalization", 17)) return 0;
    int32_t X = rm1->in[0];
    const frt_value *xv = &g->values[X].v;
    if (X < 0 || xv->dtype != FRT_FLOAT32 || xv->rank < 1 || xv->dims[xv->rank - 1] <= 0) return 0;
    const int rank = xv->rank;
    const int64_t D = xv->dims[rank - 1];
    if (!mean_last(g, rm1, rank)) return 0;
    frt_node *sub = only_reader(g, rm1->out[0], "Sub");
    if (!sub || !is_op(sub, "Sub", 2) || sub->in[0] != X || sub->in[1] != rm1->out[0]) return 0;
    int32_t d = sub->out[0];
    frt_node *r2[2];
    if (readers(g, d, r2, 2) != 2) return 0;
    frt_node *pw = is_op(r2[0], "Pow", 2) ? r2[0] : r2[1];
    frt_node *div = pw == r2[0] ? r2[1] : r2[0];
    if (!is_op(pw, "Pow", 2) || pw->in[0] != d || !const_is(g, pw->in[1], 2.0f)) return 0;
    if (!is_op(div, "Div", 2) || div->in[0] != d) return 0;
    frt_node *rm2 = only_reader(g, pw->out[0], "ReduceMean");
    if (!rm2 || rm2->in[0] != pw->out[0] || !mean_last(g, rm2, rank)) return 0;
    frt_node *add = only_reader(g, rm2->out[0], "Add");
    float eps;
    if (!is_op(add, "Add", 2) || !const_scalar(g, other_in(add, rm2->out[0]), &eps) ||
        !(eps >= 0.0f))
        return 0;
    frt_node *sq = only_reader(g, add->out[0], "Sqrt");
    if (!is_op(sq, "Sqrt", 1) || div->in[1] != sq->out[0] || only_reader(g, sq->out[0], "Div") != div)
        return 0;
    frt_node *mul = only_reader(g, div->out[0], "Mul");
    if (!is_op(mul, "Mul", 2)) return 0;
    int32_t gamma = other_in(mul, div->out[0]);
    if (!const_row(g, gamma, D) || g->values[gamma].v.rank > rank) return 0;
    frt_node *badd = only_reader(g, mul->out[0], "Add");
    int32_t beta = badd && is_op(badd, "Add", 2) ? other_in(badd, mul->out[0]) : -1;
    if (!const_row(g, beta, D) || g->values[beta].v.rank > rank) badd = NULL;
    frt_node *last = badd ? badd : mul;
    int32_t out = last->out[0];
    int32_t in[3] = {X, gamma, beta};
    frt_onnx_attr at[2] = {{.name = "axis", .type = FRT_ATTR_INT, .i = -1},
                           {.name = "epsilon", .type = FRT_ATTR_FLOAT, .f = eps}};
    frt_node *dead[] = {sub, pw, div, rm2, add, sq, mul, badd};
    for (size_t i = 0; i < sizeof dead / sizeof dead[0]; i++)
        if (dead[i]) frt_graph_kill_node(g, dead[i]);
    if (!rewrite(g, arena, rm1, FRT_DOMAIN_ONNX, "LayerNormalization", 17, in, badd ? 3 : 2, out,
                 at, 2)) {
        *st = frt_error(FRT_ERR_NO_MEMORY, "out of memory fusing a LayerNorm");
        return -1;
    }
    return badd ? 8 : 7;
}

/* ---- GELU ----------------------------------------------------------------------------------- */

/* From a = (1 + f(x)) (the output of the Add), matches the product x * a * 0.5 in any grouping.
 * Adds the nodes it used to chain[] (*n so far) and returns the value of the product, or -1. */
static int32_t gelu_tail(frt_graph *g, int32_t a, int32_t x, frt_node **chain, int *n) {
    frt_node *m1 = only_reader(g, a, "Mul");
    if (!is_op(m1, "Mul", 2)) return -1;
    int32_t o = other_in(m1, a);
    chain[(*n)++] = m1;
    if (o == x) { /* (x a) 0.5 */
        frt_node *m2 = only_reader(g, m1->out[0], "Mul");
        if (!is_op(m2, "Mul", 2) || !const_is(g, other_in(m2, m1->out[0]), 0.5f)) return -1;
        chain[(*n)++] = m2;
        return m2->out[0];
    }
    if (const_is(g, o, 0.5f)) { /* x (a 0.5) */
        frt_node *m2 = only_reader(g, m1->out[0], "Mul");
        if (!is_op(m2, "Mul", 2) || other_in(m2, m1->out[0]) != x) return -1;
        chain[(*n)++] = m2;
        return m2->out[0];
    }
    /* (x 0.5) a */
    frt_node *h = producer(g, o);
    if (!is_op(h, "Mul", 2) || other_in(h, x) < 0 || !const_is(g, other_in(h, x), 0.5f) ||
        only_reader(g, h->out[0], "Mul") != m1)
        return -1;
    chain[(*n)++] = h;
    return m1->out[0];
}

/* 1 + f: the Add reading value f with a constant 1. */
static frt_node *plus_one(frt_graph *g, int32_t f) {
    frt_node *a = only_reader(g, f, "Add");
    if (!is_op(a, "Add", 2) || !const_is(g, other_in(a, f), 1.0f)) return NULL;
    return a;
}

static int chain_apply(frt_graph *g, frt_arena *arena, frt_node **chain, int n, int32_t x,
                       int32_t out, int tanh_form, frt_status *st) {
    if (g->values[x].v.dtype != FRT_FLOAT32) return 0;
    frt_node *first = chain[0];
    for (int i = 1; i < n; i++)
        if (chain[i] < first) first = chain[i];
    for (int i = 0; i < n; i++)
        if (chain[i] != first) frt_graph_kill_node(g, chain[i]);
    frt_onnx_attr at = {.name = "approximate", .type = FRT_ATTR_STRING,
                        .s = tanh_form ? "tanh" : "none", .s_len = 4};
    if (!rewrite(g, arena, first, FRT_DOMAIN_ONNX, "Gelu", 20, &x, 1, out, &at, 1)) {
        *st = frt_error(FRT_ERR_NO_MEMORY, "out of memory fusing a GELU");
        return -1;
    }
    return n - 1;
}

static int fuse_gelu_erf(frt_graph *g, frt_arena *arena, frt_node *erf, frt_status *st) {
    if (!FRT_OP_BUILT(Gelu) || !is_op(erf, "Erf", 1) || !frt_op_probe(FRT_DOMAIN_ONNX, "Gelu", 20)) return 0;
    frt_node *sc = producer(g, erf->in[0]);
    if (!sc || only_reader(g, sc->out[0], "Erf") != erf) return 0;
    int32_t x;
    if (is_op(sc, "Div", 2) && const_is(g, sc->in[1], 1.41421356f)) x = sc->in[0];
    else if (is_op(sc, "Mul", 2) && const_is(g, sc->in[1], 0.70710678f)) x = sc->in[0];
    else if (is_op(sc, "Mul", 2) && const_is(g, sc->in[0], 0.70710678f)) x = sc->in[1];
    else return 0;
    frt_node *chain[8] = {sc, erf};
    int n = 2;
    frt_node *a = plus_one(g, erf->out[0]);
    if (!a) return 0;
    chain[n++] = a;
    int32_t out = gelu_tail(g, a->out[0], x, chain, &n);
    if (out < 0) return 0;
    return chain_apply(g, arena, chain, n, x, out, 0, st);
}

/* x^3 as Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x): returns x, adding nodes to chain. */
static int32_t cube_of(frt_graph *g, int32_t v, frt_node **chain, int *n) {
    frt_node *p = producer(g, v);
    if (!p || g->values[v].n_uses != 1) return -1;
    if (is_op(p, "Pow", 2) && const_is(g, p->in[1], 3.0f)) {
        chain[(*n)++] = p;
        return p->in[0];
    }
    if (!is_op(p, "Mul", 2)) return -1;
    for (int s = 0; s < 2; s++) {
        frt_node *q = producer(g, p->in[s]);
        int32_t x = p->in[1 - s];
        if (is_op(q, "Mul", 2) && q->in[0] == x && q->in[1] == x &&
            g->values[q->out[0]].n_uses == 1 && !g->values[q->out[0]].is_output) {
            chain[(*n)++] = p;
            chain[(*n)++] = q;
            return x;
        }
    }
    return -1;
}

static int fuse_gelu_tanh(frt_graph *g, frt_arena *arena, frt_node *th, frt_status *st) {
    if (!FRT_OP_BUILT(Gelu) || !is_op(th, "Tanh", 1) || !frt_op_probe(FRT_DOMAIN_ONNX, "Gelu", 20)) return 0;
    frt_node *chain[12] = {th};
    int n = 1;
    /* Tanh(c1 * (x + 0.044715 x^3)) */
    frt_node *m = producer(g, th->in[0]);
    if (!is_op(m, "Mul", 2) || only_reader(g, m->out[0], "Tanh") != th) return 0;
    int ci = const_is(g, m->in[0], 0.7978845608f) ? 0 : const_is(g, m->in[1], 0.7978845608f) ? 1 : -1;
    if (ci < 0) return 0;
    chain[n++] = m;
    frt_node *ad = producer(g, m->in[1 - ci]);
    if (!is_op(ad, "Add", 2) || only_reader(g, ad->out[0], "Mul") != m) return 0;
    chain[n++] = ad;
    int32_t x = -1;
    for (int s = 0; s < 2 && x < 0; s++) {
        frt_node *k = producer(g, ad->in[s]);
        if (!is_op(k, "Mul", 2) || only_reader(g, k->out[0], "Add") != ad) continue;
        int kc = const_is(g, k->in[0], 0.044715f) ? 0 : const_is(g, k->in[1], 0.044715f) ? 1 : -1;
        if (kc < 0) continue;
        int save = n;
        chain[n++] = k;
        int32_t cx = cube_of(g, k->in[1 - kc], chain, &n);
        if (cx >= 0 && cx == ad->in[1 - s]) x = cx;
        else n = save;
    }
    if (x < 0) return 0;
    frt_node *a = plus_one(g, th->out[0]);
    if (!a) return 0;
    chain[n++] = a;
    int32_t out = gelu_tail(g, a->out[0], x, chain, &n);
    if (out < 0) return 0;
    return chain_apply(g, arena, chain, n, x, out, 1, st);
}

/* ---- MatMul + bias [+ Gelu] [+ residual] ----------------------------------------------------- */

static bool same_static_shape(const frt_value *a, const frt_value *b) {
    if (a->rank < 0 || a->rank != b->rank) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] < 0 || a->dims[d] != b->dims[d]) return false;
    return true;
}

static int fuse_matmul(frt_graph *g, frt_arena *arena, frt_node *mm, frt_status *st) {
    if (!FRT_OP_BUILT(FusedMatMul) || !is_op(mm, "MatMul", 2) ||
        !frt_op_probe(FRT_DOMAIN_INTERNAL, "FusedMatMul", 1))
        return 0;
    const frt_ir_value *w = &g->values[mm->in[1]];
    const frt_value *av = &g->values[mm->in[0]].v;
    if (w->kind != FRT_VALUE_CONST || w->v.dtype != FRT_FLOAT32 || w->v.rank != 2 || !w->v.data ||
        av->dtype != FRT_FLOAT32 || av->rank < 2)
        return 0;
    const int64_t N = w->v.dims[1];
    frt_node *add = only_reader(g, mm->out[0], "Add");
    if (!is_op(add, "Add", 2)) return 0;
    int32_t bias = other_in(add, mm->out[0]);
    if (!const_row(g, bias, N) || g->values[bias].v.rank > av->rank) return 0;
    int32_t out = add->out[0];
    int act = 0, removed = 1;
    frt_node *ge = only_reader(g, out, "Gelu");
    if (ge && is_op(ge, "Gelu", 1) && ge->opset >= 20) {
        const char *ap = frt_attr_string(ge, "approximate", "none");
        act = strcmp(ap, "none") == 0 ? 1 : strcmp(ap, "tanh") == 0 ? 2 : 0;
        if (act) {
            frt_graph_kill_node(g, ge);
            out = ge->out[0];
            removed++;
        }
    }
    int32_t res = -1;
    frt_node *radd = only_reader(g, out, "Add");
    if (radd && is_op(radd, "Add", 2)) {
        int32_t r = other_in(radd, out);
        frt_node *rp = producer(g, r);
        if (r >= 0 && r != out && (!rp || rp < mm) && g->values[r].v.dtype == FRT_FLOAT32 &&
            same_static_shape(&g->values[r].v, &g->values[out].v) &&
            same_static_shape(&g->values[r].v, &g->values[radd->out[0]].v)) {
            res = r;
            frt_graph_kill_node(g, radd);
            out = radd->out[0];
            removed++;
        }
    }
    frt_graph_kill_node(g, add);
    int32_t in[4] = {mm->in[0], mm->in[1], bias, res};
    frt_onnx_attr at = {.name = "activation", .type = FRT_ATTR_INT, .i = act};
    if (!rewrite(g, arena, mm, FRT_DOMAIN_INTERNAL, "FusedMatMul", 1, in, res >= 0 ? 4 : 3, out,
                 &at, 1)) {
        *st = frt_error(FRT_ERR_NO_MEMORY, "out of memory fusing a MatMul");
        return -1;
    }
    return removed;
}

/* ---- attention ------------------------------------------------------------------------------ */

static bool perm_is(const frt_node *t, const int64_t *want, int n) {
    size_t np = 0;
    const int64_t *p = frt_attr_ints(t, "perm", &np);
    if (!p || np != (size_t)n) return false;
    for (int i = 0; i < n; i++)
        if (p[i] != want[i]) return false;
    return true;
}

static bool dims_are(const frt_value *v, int rank, const int64_t *d) {
    if (v->rank != rank) return false;
    for (int i = 0; i < rank; i++)
        if (d[i] < 0 || v->dims[i] != d[i]) return false;
    return true;
}

/* v = Transpose(Reshape(X3, [B, S, H, dh]), perm): returns X3 ([B, S, H*dh], float32) and sets
 * S, H, dh; adds the two nodes to chain[]. B must match *B (or sets it when *B < 0). */
static int32_t head_split(frt_graph *g, int32_t v, const int64_t *perm, int64_t *B, int64_t *S,
                          int64_t *H, int64_t *dh, frt_node **chain, int *n) {
    frt_node *t = producer(g, v);
    if (!is_op(t, "Transpose", 1) || !perm_is(t, perm, 4) || g->values[v].n_uses != 1 ||
        g->values[v].is_output)
        return -1;
    frt_node *r = producer(g, t->in[0]);
    if (!is_op(r, "Reshape", 2) || only_reader(g, r->out[0], "Transpose") != t) return -1;
    const frt_value *rv = &g->values[r->out[0]].v, *xv = &g->values[r->in[0]].v;
    if (rv->rank != 4 || !frt_shape_known(rv) || xv->dtype != FRT_FLOAT32) return -1;
    int64_t d3[3] = {rv->dims[0], rv->dims[1], rv->dims[2] * rv->dims[3]};
    if (!dims_are(xv, 3, d3) || (*B >= 0 && *B != d3[0])) return -1;
    *B = d3[0];
    *S = rv->dims[1];
    *H = rv->dims[2];
    *dh = rv->dims[3];
    chain[(*n)++] = t;
    chain[(*n)++] = r;
    return r->in[0];
}

/* Whether constant-or-computed value m (dtype dt) broadcasts to [B, H, Sq, Sk] without growing it. */
static bool mask_fits(const frt_graph *g, int32_t m, int32_t dt, const int64_t *full) {
    const frt_value *v = &g->values[m].v;
    if (m < 0 || v->dtype != dt || v->rank < 0 || v->rank > 4 || !frt_shape_known(v)) return false;
    for (int i = 0; i < v->rank; i++) {
        int64_t f = full[4 - v->rank + i];
        if (v->dims[i] != 1 && v->dims[i] != f) return false;
    }
    return true;
}

/* Q3, K3, V3 as outputs 0, 1, 2 of one Split of a float32 [B, S, 3W] value on its last axis into
 * three [B, S, W] parts that nothing else reads (called once the attention chain is dead): that
 * Split (Attention then reads its input in place with qkv = 1), else NULL. */
static frt_node *qkv_split(frt_graph *g, int32_t q3, int32_t k3, int32_t v3) {
    frt_node *s = producer(g, q3), *r[1];
    if (!s || s->dead || s->domain[0] || strcmp(s->op_type, "Split") != 0 || s->n_out != 3 ||
        s->n_in < 1 || s->out[0] != q3 || s->out[1] != k3 || s->out[2] != v3)
        return NULL;
    const frt_value *xv = &g->values[s->in[0]].v;
    if (xv->dtype != FRT_FLOAT32 || xv->rank != 3 || !frt_shape_known(xv) || xv->dims[2] % 3)
        return NULL;
    const int64_t ax = frt_attr_int(s, "axis", 0);
    if (ax != -1 && ax != 2) return NULL;
    const int64_t d3[3] = {xv->dims[0], xv->dims[1], xv->dims[2] / 3};
    for (int i = 0; i < 3; i++)
        if (!dims_are(&g->values[s->out[i]].v, 3, d3) || readers(g, s->out[i], r, 1) != 0)
            return NULL;
    return s;
}

/* MatMul(Q4, K4^T) -> Div|Mul scale -> [Add mask | Where(cond, fill, .)] -> Softmax(-1) ->
 * MatMul(., V4) -> Transpose(0,2,1,3) -> Reshape [B, Sq, H*dv], with Q4/K4/V4 split into heads
 * from [B, S, H*d] tensors by Reshape + Transpose. */
static int fuse_attention(frt_graph *g, frt_arena *arena, frt_node *mm1, frt_status *st) {
    if (!FRT_OP_BUILT(Attention) || !is_op(mm1, "MatMul", 2) ||
        !frt_op_probe(FRT_DOMAIN_INTERNAL, "Attention", 1))
        return 0;
    frt_node *chain[24] = {mm1};
    int n = 1;
    static const int64_t p0213[4] = {0, 2, 1, 3}, p0231[4] = {0, 2, 3, 1};
    int64_t B = -1, Sq, H, dh, Sk, Hk, dk, Sv, Hv, dv;
    int32_t q3 = head_split(g, mm1->in[0], p0213, &B, &Sq, &H, &dh, chain, &n);
    if (q3 < 0) return 0;
    int32_t k3 = head_split(g, mm1->in[1], p0231, &B, &Sk, &Hk, &dk, chain, &n);
    if (k3 < 0 || Hk != H || dk != dh) return 0;
    /* scale */
    frt_node *sc = NULL;
    float scale = 1.0f, c;
    frt_node *r1[1];
    if (readers(g, mm1->out[0], r1, 1) != 1) return 0;
    sc = r1[0];
    if (is_op(sc, "Div", 2) && sc->in[0] == mm1->out[0] && const_scalar(g, sc->in[1], &c) && c != 0.0f)
        scale = 1.0f / c;
    else if (is_op(sc, "Mul", 2) && const_scalar(g, other_in(sc, mm1->out[0]), &c))
        scale = c;
    else
        return 0;
    chain[n++] = sc;
    int32_t cur = sc->out[0], mask = -1, cond = -1;
    int mode = 0;
    float fill = 0.0f;
    const int64_t full[4] = {B, H, Sq, Sk};
    frt_node *nx;
    if (readers(g, cur, r1, 1) != 1) return 0;
    nx = r1[0];
    if (is_op(nx, "Add", 2) && mask_fits(g, other_in(nx, cur), FRT_FLOAT32, full)) {
        mask = other_in(nx, cur);
        mode = 1;
    } else if (is_op(nx, "Where", 3) && nx->in[2] == cur && nx->in[0] != cur &&
               mask_fits(g, nx->in[0], FRT_BOOL, full) && const_scalar(g, nx->in[1], &fill)) {
        cond = nx->in[0];
        mode = 2;
    }
    if (mode) {
        chain[n++] = nx;
        cur = nx->out[0];
    }
    frt_node *sm = only_reader(g, cur, "Softmax");
    if (!is_op(sm, "Softmax", 1)) return 0;
    int64_t ax = frt_attr_int(sm, "axis", sm->opset >= 13 ? -1 : 1);
    if (ax != -1 && ax != 3) return 0;
    chain[n++] = sm;
    frt_node *mm2 = only_reader(g, sm->out[0], "MatMul");
    if (!is_op(mm2, "MatMul", 2) || mm2->in[0] != sm->out[0]) return 0;
    chain[n++] = mm2;
    int32_t v3 = head_split(g, mm2->in[1], p0213, &B, &Sv, &Hv, &dv, chain, &n);
    if (v3 < 0 || Sv != Sk || Hv != H) return 0;
    frt_node *ot = only_reader(g, mm2->out[0], "Transpose");
    if (!is_op(ot, "Transpose", 1) || !perm_is(ot, p0213, 4)) return 0;
    chain[n++] = ot;
    frt_node *orr = only_reader(g, ot->out[0], "Reshape");
    const int64_t od[3] = {B, Sq, H * dv};
    if (!is_op(orr, "Reshape", 2) || !dims_are(&g->values[orr->out[0]].v, 3, od)) return 0;
    int32_t out = orr->out[0];
    for (int i = 0; i < n; i++) frt_graph_kill_node(g, chain[i]);
    int32_t in[4] = {q3, k3, v3, mode == 1 ? mask : mode == 2 ? cond : -1};
    /* Q, K, V cut from one projection by a Split: read it in place instead of the copies */
    frt_node *sp = Sq == Sk ? qkv_split(g, q3, k3, v3) : NULL;
    if (sp) {
        const int32_t x = sp->in[0];
        in[0] = in[1] = in[2] = x;
        g->values[x].n_uses += 2; /* read three times instead of once */
        for (int k = 1; k < sp->n_in; k++)
            if (sp->in[k] >= 0 && g->values[sp->in[k]].n_uses > 0) g->values[sp->in[k]].n_uses--;
        frt_graph_kill_node(g, sp);
        n++;
    }
    frt_onnx_attr at[5] = {{.name = "num_heads", .type = FRT_ATTR_INT, .i = H},
                           {.name = "scale", .type = FRT_ATTR_FLOAT, .f = scale},
                           {.name = "mask_mode", .type = FRT_ATTR_INT, .i = mode},
                           {.name = "fill", .type = FRT_ATTR_FLOAT, .f = fill},
                           {.name = "qkv", .type = FRT_ATTR_INT, .i = 1}};
    if (!rewrite(g, arena, orr, FRT_DOMAIN_INTERNAL, "Attention", 1, in, mode ? 4 : 3, out, at,
                 sp ? 5 : 4)) {
        *st = frt_error(FRT_ERR_NO_MEMORY, "out of memory fusing attention");
        return -1;
    }
    return n;
}

int frt_pass_fuse_xf(frt_graph *g, frt_arena *arena, frt_status *st) {
    int removed = 0;
    /* elementwise patterns first: the MatMul epilogue absorbs the Gelu nodes they make */
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_node *n = &g->nodes[i];
        if (n->dead || n->domain[0]) continue;
        int r = 0;
        if (strcmp(n->op_type, "ReduceMean") == 0) r = fuse_layernorm(g, arena, n, st);
        else if (strcmp(n->op_type, "Erf") == 0) r = fuse_gelu_erf(g, arena, n, st);
        else if (strcmp(n->op_type, "Tanh") == 0) r = fuse_gelu_tanh(g, arena, n, st);
        if (r < 0) return -1;
        removed += r;
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_node *n = &g->nodes[i];
        if (n->dead || n->domain[0] || strcmp(n->op_type, "MatMul") != 0) continue;
        int r = fuse_attention(g, arena, n, st);
        if (r == 0) r = fuse_matmul(g, arena, n, st);
        if (r < 0) return -1;
        removed += r;
    }
    return removed;
}
