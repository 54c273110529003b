/* Loop-invariant code motion: a node of a Loop or Scan body whose inputs are all values of the
 * enclosing graph (outer values), outputs of Constant nodes or outputs of other such nodes, and
 * that reads at least one outer value (directly or through such nodes), is moved in front of the
 * Loop/Scan node in the enclosing graph, so it runs once per execution of the node instead of
 * once per iteration. Runs on the IR as built (before inference), innermost bodies first, so a
 * value invariant in two nested loops moves out of both.
 *
 * Moving node h out of body b of node L in graph g:
 *   - h's copy in g reads the values of g that b's outer values stand for (L's captured reads),
 *     the outputs of nodes moved before it, and copies of the body's Constant nodes (the body
 *     keeps its own; they are made once per L);
 *   - each output of h gets a new value of g, captured by L (appended to L's captured reads), and
 *     the body's value becomes an outer value reading it;
 *   - h is marked dead in b. The copies are inserted in g's node array right before L, in body
 *     order (the array stays topological); producers and subgraph owners are renumbered.
 * Never moved: nodes with subgraphs, nodes the caller's filter rejects (no definition, random
 * ops), nodes reading a body initializer, and anything in If branches (they run conditionally).
 * A loop that runs zero times still runs the moved nodes once. */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

static bool is_op(const frt_node *n, const char *op) {
    return n->domain[0] == 0 && strcmp(n->op_type, op) == 0;
}

/* Nodes to insert into g before node `at` (an index of g's current node array). */
typedef struct pending {
    frt_node *nodes;
    int32_t *at;
    size_t n, cap;
} pending;

static frt_status nomem(void) { return frt_error(FRT_ERR_NO_MEMORY, "out of memory moving loop-invariant nodes"); }

/* Appends a node to insert before `at`; returns its slot or -1. */
static int32_t pend(pending *p, const frt_node *n, int32_t at) {
    if (p->n == p->cap) {
        size_t c = p->cap ? 2 * p->cap : 16;
        frt_node *nn = realloc(p->nodes, c * sizeof *nn);
        if (!nn) return -1;
        p->nodes = nn;
        int32_t *na = realloc(p->at, c * sizeof *na);
        if (!na) return -1;
        p->at = na;
        p->cap = c;
    }
    p->nodes[p->n] = *n;
    p->at[p->n] = at;
    return (int32_t)p->n++;
}

/* A new value of g for body value bv: appended to L's captured reads, bv becomes outer. */
static frt_status export_value(frt_graph *g, int32_t li, frt_graph *b, int32_t bv, int32_t *pv) {
    *pv = frt_graph_add_value(g, b->values[bv].name, FRT_VALUE_NODE);
    if (*pv < 0) return nomem();
    frt_node *L = &g->nodes[li];
    int32_t n_reads = frt_node_n_reads(L);
    int32_t *in = frt_arena_array(g->arena, (size_t)n_reads + 2, sizeof *in);
    if (!in) return nomem();
    memcpy(in, L->in, (size_t)n_reads * sizeof *in);
    in[n_reads] = *pv;
    L->in = in;
    L->n_cap++;
    g->values[*pv].n_uses++;
    frt_ir_value *x = &b->values[bv];
    x->kind = FRT_VALUE_OUTER;
    x->producer = -1;
    x->outer = L->n_cap - 1;
    return FRT_OK;
}

/* Copies node n (of b) into the pending list of g with inputs in[] (values of g) and new output
 * values of g (written to map[] for n's outputs), to be inserted before L (index li). */
static frt_status copy_node(frt_graph *g, int32_t li, pending *p, const frt_node *n,
                            const int32_t *in, int32_t *out_g) {
    frt_node c = *n;
    c.in = frt_arena_array(g->arena, (size_t)n->n_in + 1, sizeof *c.in);
    c.out = frt_arena_array(g->arena, (size_t)n->n_out + 1, sizeof *c.out);
    if (!c.in || !c.out) return nomem();
    if (n->n_in) memcpy(c.in, in, (size_t)n->n_in * sizeof *c.in);
    memcpy(c.out, out_g, (size_t)n->n_out * sizeof *c.out);
    c.n_cap = 0;
    c.n_sub = 0;
    c.sub = NULL;
    c.dead = false;
    for (int j = 0; j < n->n_in; j++)
        if (in[j] >= 0) g->values[in[j]].n_uses++;
    int32_t slot = pend(p, &c, li);
    if (slot < 0) return nomem();
    /* producer: pending slot, encoded as -2 - slot until the array is rebuilt */
    for (int j = 0; j < n->n_out; j++)
        if (out_g[j] >= 0) g->values[out_g[j]].producer = -2 - slot;
    return FRT_OK;
}

/* Moves the invariant nodes of L's body (L = node li of g) into the pending list. */
static frt_status hoist_body(frt_graph *g, int32_t li, pending *p,
                             bool (*filter)(void *, const frt_node *), void *user, int *moved) {
    frt_graph *b = g->nodes[li].sub[0];
    size_t nv = b->n_values;
    /* per body value: the value of g it equals (-1: none yet); state 0 variant, 1 constant node
     * output (copy on demand), 2 available in g (outer or moved) */
    int32_t *map = malloc((nv + 1) * sizeof *map);
    uint8_t *state = calloc(nv + 1, 1);
    frt_status st = FRT_OK;
    if (!map || !state) {
        st = nomem();
        goto out;
    }
    for (size_t v = 0; v < nv; v++) {
        map[v] = -1;
        const frt_ir_value *x = &b->values[v];
        if (x->kind == FRT_VALUE_OUTER) {
            const frt_node *L = &g->nodes[li];
            if (x->outer >= 0 && x->outer < L->n_cap) {
                map[v] = L->in[L->n_in + x->outer];
                state[v] = 2;
            }
        } else if (x->kind == FRT_VALUE_NODE && x->producer >= 0) {
            const frt_node *pn = &b->nodes[x->producer];
            if (!pn->dead && pn->n_in == 0 && pn->n_sub == 0 && is_op(pn, "Constant")) state[v] = 1;
        }
    }
    for (size_t i = 0; i < b->n_nodes; i++) {
        frt_node *n = &b->nodes[i];
        if (n->dead || n->n_sub || n->n_in == 0 || n->n_out < 1) continue;
        bool ok = true, reads_outer = false;
        for (int j = 0; j < n->n_in && ok; j++) {
            int32_t v = n->in[j];
            if (v < 0) continue;
            ok = state[v] != 0;
            reads_outer |= state[v] == 2;
        }
        if (!ok || !reads_outer || !filter(user, n)) continue;
        int32_t in[1024], out_g[1024];
        if (n->n_in > 1024 || n->n_out > 1024) continue;
        for (int j = 0; j < n->n_in && !st; j++) {
            int32_t v = n->in[j];
            in[j] = -1;
            if (v < 0) continue;
            if (state[v] == 1 && map[v] < 0) { /* a copy of the body's Constant node */
                const frt_node *cn = &b->nodes[b->values[v].producer];
                int32_t cv = frt_graph_add_value(g, b->values[v].name, FRT_VALUE_NODE);
                if (cv < 0) st = nomem();
                else st = copy_node(g, li, p, cn, NULL, &cv);
                map[v] = cv;
            }
            in[j] = map[v];
        }
        if (st) goto out;
        for (int j = 0; j < n->n_out; j++) {
            out_g[j] = -1;
            int32_t v = n->out[j];
            if (v < 0) continue;
            st = export_value(g, li, b, v, &out_g[j]);
            if (st) goto out;
            map[v] = out_g[j];
            state[v] = 2;
        }
        st = copy_node(g, li, p, n, in, out_g);
        if (st) goto out;
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j] >= 0) b->values[n->in[j]].n_uses--;
        n->dead = true;
        (*moved)++;
    }
out:
    free(map);
    free(state);
    return st;
}

/* Rebuilds g's node array with the pending nodes inserted; renumbers producers and owners. */
static frt_status insert_pending(frt_graph *g, pending *p) {
    size_t total = g->n_nodes + p->n;
    frt_node *nodes = frt_arena_array(g->arena, total + 1, sizeof *nodes);
    int32_t *newpos = malloc((g->n_nodes + 1) * sizeof *newpos);
    int32_t *slotpos = malloc((p->n + 1) * sizeof *slotpos);
    if (!nodes || !newpos || !slotpos) {
        free(newpos);
        free(slotpos);
        return nomem();
    }
    size_t k = 0, q = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        for (; q < p->n && p->at[q] == (int32_t)i; q++) {
            slotpos[q] = (int32_t)k;
            nodes[k++] = p->nodes[q];
        }
        newpos[i] = (int32_t)k;
        nodes[k++] = g->nodes[i];
    }
    for (size_t v = 0; v < g->n_values; v++) {
        int32_t pr = g->values[v].producer;
        if (pr >= 0) g->values[v].producer = newpos[pr];
        else if (pr <= -2) g->values[v].producer = slotpos[-2 - pr];
    }
    g->nodes = nodes;
    g->n_nodes = total;
    g->cap_nodes = total + 1;
    for (size_t i = 0; i < total; i++)
        for (int32_t s = 0; s < nodes[i].n_sub; s++) nodes[i].sub[s]->owner = (int32_t)i;
    free(newpos);
    free(slotpos);
    return FRT_OK;
}

int frt_pass_hoist(frt_graph *g, bool (*filter)(void *user, const frt_node *n), void *user,
                   frt_status *st) {
    int moved = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (int32_t k = 0; k < n->n_sub; k++) {
            int r = frt_pass_hoist(n->sub[k], filter, user, st);
            if (r < 0) return r;
            moved += r;
        }
    }
    pending p = {0};
    *st = FRT_OK;
    for (size_t i = 0; i < g->n_nodes && !*st; i++) {
        frt_node *n = &g->nodes[i];
        if (n->dead || n->n_sub != 1 || !(is_op(n, "Loop") || is_op(n, "Scan"))) continue;
        *st = hoist_body(g, (int32_t)i, &p, filter, user, &moved);
    }
    if (!*st && p.n) *st = insert_pending(g, &p);
    free(p.nodes);
    free(p.at);
    return *st ? -1 : moved;
}
