/* Building the graph IR from a decoded ONNX graph: name resolution, topological order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "util/error.h"
#include "util/features.h"

/* Open-addressing map from value name to id; grows so that cap > 2 * count. */
typedef struct name_map {
    size_t cap, count; /* cap: power of two */
    const char **keys;
    int32_t *ids;
} name_map;

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

static int map_init(name_map *m, size_t n) {
    m->cap = 16;
    m->count = 0;
    while (m->cap < 2 * n + 1) m->cap <<= 1;
    m->keys = calloc(m->cap, sizeof *m->keys);
    m->ids = calloc(m->cap, sizeof *m->ids);
    return m->keys && m->ids;
}

static void map_free(name_map *m) {
    free(m->keys);
    free(m->ids);
}

static int32_t map_get(const name_map *m, const char *k) {
    for (size_t i = hash_str(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i]) return -1;
        if (strcmp(m->keys[i], k) == 0) return m->ids[i];
    }
}

static void map_put_nogrow(name_map *m, const char *k, int32_t id) {
    size_t i = hash_str(k) & (m->cap - 1);
    while (m->keys[i] && strcmp(m->keys[i], k) != 0) i = (i + 1) & (m->cap - 1);
    if (!m->keys[i]) m->count++;
    m->keys[i] = k;
    m->ids[i] = id;
}

/* Inserts or overwrites; returns 0 when growing the map failed. */
static int map_put(name_map *m, const char *k, int32_t id) {
    if (2 * (m->count + 1) + 1 > m->cap) {
        name_map n;
        if (!map_init(&n, m->count + 1)) {
            map_free(&n);
            return 0;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i]) map_put_nogrow(&n, m->keys[i], m->ids[i]);
        map_free(m);
        *m = n;
    }
    map_put_nogrow(m, k, id);
    return 1;
}

/* Name resolution of one graph being built, linked to the scopes of its enclosing graphs. */
typedef struct scope {
    struct scope *up;
    frt_graph *g;
    name_map map;
    /* values of g captured by the subgraphs of the node being built (that node's n_cap list) */
    int32_t *cap;
    size_t n_cap, cap_cap;
} scope;

/* Slot of value id in the current owner's capture list, appended if new; -1 on no memory. */
static int32_t add_capture(scope *s, int32_t id) {
    for (size_t i = 0; i < s->n_cap; i++)
        if (s->cap[i] == id) return (int32_t)i;
    if (s->n_cap == s->cap_cap) {
        size_t c = s->cap_cap ? 2 * s->cap_cap : 8;
        int32_t *n = realloc(s->cap, c * sizeof *n);
        if (!n) return -1;
        s->cap = n;
        s->cap_cap = c;
    }
    s->cap[s->n_cap] = id;
    return (int32_t)s->n_cap++;
}

/* Value id of name in s's graph: defined there, or found in an enclosing graph and then made an
 * FRT_VALUE_OUTER value of this graph captured by each owner node on the way. -1: not defined
 * anywhere; -2: out of memory. */
static int32_t resolve(scope *s, const char *name) {
    int32_t id = map_get(&s->map, name);
    if (id >= 0 || !FRT_SUBGRAPHS || !s->up) return id;
    int32_t pid = resolve(s->up, name);
    if (pid < 0) return pid;
    int32_t slot = add_capture(s->up, pid);
    if (slot < 0) return -2;
    id = frt_graph_add_value(s->g, name, FRT_VALUE_OUTER);
    if (id < 0) return -2;
    s->g->values[id].outer = slot;
    if (!map_put(&s->map, s->g->values[id].name, id)) return -2;
    return id;
}

int frt_graph_readers(frt_graph *g, int32_t v, frt_node **out, int max) {
    if (v < 0 || g->values[v].is_output) return -1;
    int n = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_node *nd = &g->nodes[i];
        if (nd->dead) continue;
        for (int k = 0; k < frt_node_n_reads(nd); k++)
            if (nd->in[k] == v) {
                if (n < max) out[n] = nd;
                n++;
                break;
            }
    }
    return n;
}

void frt_graph_kill_node(frt_graph *g, frt_node *n) {
    n->dead = true;
    for (int k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0 && g->values[n->out[k]].producer == (int32_t)(n - g->nodes)) {
            g->values[n->out[k]].producer = -1;
            g->values[n->out[k]].n_uses = 0;
        }
}

int32_t frt_graph_add_value(frt_graph *g, const char *name, frt_value_kind kind) {
    if (g->n_values == g->cap_values) {
        size_t cap = g->cap_values ? 2 * g->cap_values : 64;
        frt_ir_value *nv = frt_arena_array(g->arena, cap, sizeof *nv);
        if (!nv) return -1;
        if (g->n_values) memcpy(nv, g->values, g->n_values * sizeof *nv);
        g->values = nv;
        g->cap_values = cap;
    }
    frt_ir_value *v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = frt_arena_strdup(g->arena, name ? name : "");
    if (!v->name) return -1;
    v->kind = kind;
    v->producer = -1;
    v->outer = -1;
    v->v.rank = -1;
    v->v.numel = -1;
    return (int32_t)g->n_values++;
}

void *frt_graph_temp_const(frt_graph *g, int32_t vid, size_t nbytes) {
    if (g->n_temps == g->cap_temps) {
        size_t cap = g->cap_temps ? 2 * g->cap_temps : 16;
        void **t = realloc(g->temps, cap * sizeof *t);
        if (!t) return NULL;
        g->temps = t;
        int32_t *v = realloc(g->temp_vid, cap * sizeof *v);
        if (!v) return NULL;
        g->temp_vid = v;
        g->cap_temps = cap;
    }
    void *p = aligned_alloc(64, (nbytes + 63) & ~(size_t)63);
    if (!p) return NULL;
    g->temps[g->n_temps] = p;
    g->temp_vid[g->n_temps++] = vid;
    return p;
}

/* A constant other than vid whose data starts at p: a view folded at load (Reshape, Identity,
 * ...) shares its input's bytes, so a buffer is free only when no such value needs it. */
static int32_t const_sharing(const frt_graph *g, const void *p, int32_t vid, const bool *used) {
    for (size_t u = 0; u < g->n_values; u++)
        if ((int32_t)u != vid && g->values[u].kind == FRT_VALUE_CONST && g->values[u].v.data == p &&
            (!used || used[u]))
            return (int32_t)u;
    return -1;
}

size_t frt_graph_release_temps(frt_graph *g) {
    bool *used = calloc(g->n_values + 1, 1);
    size_t held = 0;
    if (!used) return 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const frt_node *n = &g->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < frt_node_n_reads(n); k++)
            if (n->in[k] >= 0) used[n->in[k]] = true;
    }
    for (size_t i = 0; i < g->n_outputs; i++) used[g->outputs[i]] = true;
    for (size_t t = 0; t < g->n_temps; t++) {
        int32_t v = g->temp_vid[t];
        if (!g->temps[t]) continue;
        int32_t reader = used[v] ? v : const_sharing(g, g->temps[t], v, used);
        if (reader >= 0) {
            g->temp_vid[t] = reader;
            held += frt_value_nbytes(&g->values[reader].v);
            continue;
        }
        for (size_t u = 0; u < g->n_values; u++)
            if (g->values[u].v.data == g->temps[t]) g->values[u].v.data = NULL;
        free(g->temps[t]);
        g->temps[t] = NULL;
    }
    free(used);
    return held;
}

void frt_graph_drop_const(frt_graph *g, int32_t vid) {
    frt_ir_value *v = &g->values[vid];
    if (v->kind != FRT_VALUE_CONST || !v->v.data) return;
    for (size_t t = 0; t < g->n_temps; t++)
        if (g->temps[t] == v->v.data) {
            int32_t other = const_sharing(g, v->v.data, vid, NULL);
            v->v.data = NULL;
            if (other >= 0) { /* a view still reads these bytes: it owns them now */
                g->temp_vid[t] = other;
                return;
            }
            free(g->temps[t]);
            g->temps[t] = NULL;
            return;
        }
    if (v->in_place && g->release_bytes)
        g->release_bytes(g->release_ctx, v->v.data, frt_value_nbytes(&v->v));
    v->v.data = NULL;
}

void frt_graph_free_temps(frt_graph *g) {
    for (size_t i = 0; i < g->n_nodes; i++)
        for (int32_t k = 0; k < g->nodes[i].n_sub; k++)
            if (g->nodes[i].sub[k]) frt_graph_free_temps(g->nodes[i].sub[k]);
    for (size_t t = 0; t < g->n_temps; t++) free(g->temps[t]);
    free(g->temps);
    free(g->temp_vid);
    g->temps = NULL;
    g->temp_vid = NULL;
    g->n_temps = g->cap_temps = 0;
}

static frt_status set_from_tensor(frt_graph *g, int32_t id, const frt_onnx_tensor *t) {
    frt_ir_value *v = &g->values[id];
    v->v.dtype = t->dtype;
    v->v.rank = t->rank;
    for (int i = 0; i < t->rank; i++) v->v.dims[i] = t->dims[i];
    v->v.numel = t->numel;
    v->v.data = (void *)t->data;
    v->in_place = t->in_place && !t->misaligned;
    if (t->misaligned && t->data) {
        void *c = frt_graph_temp_const(g, id, t->nbytes);
        if (!c) return frt_error(FRT_ERR_NO_MEMORY, "out of memory copying initializer '%s'", t->name);
        memcpy(c, t->data, t->nbytes);
        g->values[id].v.data = c;
        /* the mapped bytes are not read again: out of the resident set before the next copy */
        const frt_graph *root = g;
        while (root->parent) root = root->parent;
        if (t->in_place && root->release_bytes)
            root->release_bytes(root->release_ctx, t->data, t->nbytes);
    }
    return FRT_OK;
}

static void set_from_info(frt_graph *g, frt_ir_value *v, const frt_onnx_value_info *vi) {
    if (!vi->has_type) return;
    if (vi->type_kind != FRT_ONNX_TYPE_TENSOR) { /* element shapes are not kept */
        int32_t vt = vi->type_kind == FRT_ONNX_TYPE_SEQUENCE        ? FRT_VT_SEQUENCE
                     : vi->inner_kind == FRT_ONNX_TYPE_SEQUENCE     ? FRT_VT_OPT_SEQUENCE
                                                                    : FRT_VT_OPT_TENSOR;
        frt_value_set_container(&v->v, vt, vi->elem_type);
        return;
    }
    v->v.dtype = vi->elem_type;
    if (!vi->has_shape) return;
    v->v.rank = vi->rank;
    for (int i = 0; i < vi->rank; i++) {
        v->v.dims[i] = vi->dims[i].value;
        v->dim_names[i] = vi->dims[i].param ? frt_arena_strdup(g->arena, vi->dims[i].param) : NULL;
    }
    v->v.numel = frt_shape_numel(v->v.dims, v->v.rank);
}

static int64_t opset_for(const frt_onnx_model *m, const char *domain) {
    for (size_t i = 0; i < m->n_opsets; i++)
        if (strcmp(m->opsets[i].domain, domain) == 0) return m->opsets[i].version;
    return 0;
}

static frt_status build(const frt_onnx_model *m, const frt_onnx_graph *og, scope *up,
                        frt_arena *arena, frt_graph *g);

/* Builds the subgraphs of node i of s->g (its GRAPH and GRAPHS attributes) and appends the values
 * they capture to the node's inputs as n_cap captured reads. */
static frt_status build_subgraphs(const frt_onnx_model *m, const frt_onnx_node *on, scope *s,
                                  int32_t i, frt_arena *arena) {
    if (!FRT_SUBGRAPHS) return FRT_OK; /* the decoder refused GRAPH attributes */
    frt_node *n = &s->g->nodes[i];
    size_t n_sub = 0;
    for (size_t a = 0; a < on->n_attrs; a++) {
        const frt_onnx_attr *at = &on->attrs[a];
        if (at->type == FRT_ATTR_GRAPH && at->g) n_sub++;
        else if (at->type == FRT_ATTR_GRAPHS) n_sub += at->n;
    }
    if (!n_sub) return FRT_OK;
    if (n_sub > 1024)
        return frt_error(FRT_ERR_UNSUPPORTED, "node '%s' (%s) has too many subgraphs", n->name,
                         n->op_type);
    frt_graph **sub = frt_arena_array(arena, n_sub, sizeof *sub);
    if (!sub) return frt_error(FRT_ERR_NO_MEMORY, "out of memory building the graph");
    s->n_cap = 0;
    size_t k = 0;
    for (size_t a = 0; a < on->n_attrs; a++) {
        const frt_onnx_attr *at = &on->attrs[a];
        size_t cnt = at->type == FRT_ATTR_GRAPH && at->g ? 1 : at->type == FRT_ATTR_GRAPHS ? at->n : 0;
        for (size_t j = 0; j < cnt; j++) {
            const frt_onnx_graph *sog = at->type == FRT_ATTR_GRAPH ? at->g : &at->graphs[j];
            frt_graph *c = frt_arena_alloc(arena, sizeof *c, 8);
            char path[512];
            if (at->type == FRT_ATTR_GRAPH)
                snprintf(path, sizeof path, "%s%s%s/%s", s->g->path, s->g->path[0] ? "/" : "",
                         n->name, at->name);
            else
                snprintf(path, sizeof path, "%s%s%s/%s[%zu]", s->g->path, s->g->path[0] ? "/" : "",
                         n->name, at->name, j);
            if (!c) return frt_error(FRT_ERR_NO_MEMORY, "out of memory building the graph");
            memset(c, 0, sizeof *c);
            c->path = frt_arena_strdup(arena, path);
            if (!c->path) return frt_error(FRT_ERR_NO_MEMORY, "out of memory building the graph");
            c->parent = s->g;
            c->owner = i;
            frt_status st = build(m, sog, s, arena, c);
            if (st) return st;
            n = &s->g->nodes[i];
            sub[k++] = c;
        }
    }
    n->sub = sub;
    n->n_sub = (int32_t)n_sub;
    if (s->n_cap) {
        if (s->n_cap > 4096)
            return frt_error(FRT_ERR_UNSUPPORTED, "node '%s' (%s): subgraphs read too many outer "
                             "values", n->name, n->op_type);
        int32_t *in = frt_arena_array(arena, (size_t)n->n_in + s->n_cap + 1, sizeof *in);
        if (!in) return frt_error(FRT_ERR_NO_MEMORY, "out of memory building the graph");
        memcpy(in, n->in, (size_t)n->n_in * sizeof *in);
        memcpy(in + n->n_in, s->cap, s->n_cap * sizeof *in);
        n->in = in;
        n->n_cap = (int32_t)s->n_cap;
        for (size_t c = 0; c < s->n_cap; c++) s->g->values[s->cap[c]].n_uses++;
    }
    s->n_cap = 0;
    return FRT_OK;
}

frt_status frt_graph_build(const frt_onnx_model *m, frt_arena *arena,
                           void (*release)(void *ctx, const void *data, size_t nbytes),
                           void *release_ctx, frt_graph *g) {
    memset(g, 0, sizeof *g);
    g->release_bytes = release;
    g->release_ctx = release_ctx;
    g->arena = arena;
    g->path = "";
    g->owner = -1;
    g->opset = frt_onnx_default_opset(m);
    if (!m->graph) return frt_error(FRT_ERR_MALFORMED, "model has no graph");
    /* No default-domain import is fine when every node comes from another domain (the preview
     * training ops): a node of a domain the model does not import finds no implementation (opset
     * 0) and is reported with the unsupported operators. */
    if (g->opset > 21)
        return frt_error(FRT_ERR_UNSUPPORTED, "ai.onnx opset %lld is not supported (1..21)",
                         (long long)g->opset);
    return build(m, m->graph, NULL, arena, g);
}

/* Builds g (arena, path, parent and owner already set) from og; up: enclosing scope or NULL. */
static frt_status build(const frt_onnx_model *m, const frt_onnx_graph *og, scope *up,
                        frt_arena *arena, frt_graph *g) {
    g->arena = arena;
    g->opset = frt_onnx_default_opset(m);
    const char *gpath = up ? g->path : "";

    size_t n_names = og->n_initializers + og->n_inputs;
    for (size_t i = 0; i < og->n_nodes; i++) n_names += og->nodes[i].n_outputs;
    scope sc = {up, g, {0}, NULL, 0, 0};
    if (!map_init(&sc.map, n_names)) {
        map_free(&sc.map);
        return frt_error(FRT_ERR_NO_MEMORY, "out of memory building the graph");
    }
    name_map *map = &sc.map;
    frt_status st = FRT_OK;
    int32_t *order = NULL, *indeg = NULL, *queue = NULL;

#define FAIL(s, ...)                                                                               \
    do {                                                                                           \
        st = frt_error(s, __VA_ARGS__);                                                            \
        if (up) frt_error_context(st, "subgraph %s", gpath);                                      \
        goto out;                                                                                  \
    } while (0)
#define NOMEM() FAIL(FRT_ERR_NO_MEMORY, "out of memory building the graph")
#define PUT(k, id)                                                                                 \
    do {                                                                                           \
        if (!map_put(map, (k), (id))) NOMEM();                                                     \
    } while (0)

    for (size_t i = 0; i < og->n_initializers; i++) {
        const frt_onnx_tensor *t = &og->initializers[i];
        if (!t->name[0]) FAIL(FRT_ERR_MALFORMED, "initializer %zu has no name", i);
        if (map_get(map, t->name) >= 0)
            FAIL(FRT_ERR_MALFORMED, "initializer '%s' is defined twice", t->name);
        int32_t id = frt_graph_add_value(g, t->name, FRT_VALUE_CONST);
        if (id < 0) NOMEM();
        if ((st = set_from_tensor(g, id, t))) goto out;
        if (t->external && !t->data)
            FAIL(FRT_ERR_MALFORMED, "initializer '%s': external data not loaded", t->name);
        PUT(g->values[id].name, id);
    }
    g->inputs = frt_arena_array(arena, og->n_inputs ? og->n_inputs : 1, sizeof(int32_t));
    if (!g->inputs) NOMEM();
    for (size_t i = 0; i < og->n_inputs; i++) {
        const frt_onnx_value_info *vi = &og->inputs[i];
        if (!vi->name[0]) FAIL(FRT_ERR_MALFORMED, "graph input %zu has no name", i);
        int32_t prev = map_get(map, vi->name);
        if (prev >= 0) {
            if (g->values[prev].kind == FRT_VALUE_CONST) continue; /* initializer listed as input */
            FAIL(FRT_ERR_MALFORMED, "graph input '%s' is listed twice", vi->name);
        }
        int32_t id = frt_graph_add_value(g, vi->name, FRT_VALUE_INPUT);
        if (id < 0) NOMEM();
        set_from_info(g, &g->values[id], vi);
        /* a subgraph input without a type takes its dtype from the owner node (compile) */
        bool untyped = up && vi->type_kind == FRT_ONNX_TYPE_NONE;
        if (!vi->has_type && !untyped)
            FAIL(FRT_ERR_UNSUPPORTED, "graph input '%s' is not a tensor, sequence of tensors or "
                 "optional tensor or sequence", vi->name);
        if (frt_dtype_size(g->values[id].v.dtype) == 0 && !untyped)
            FAIL(FRT_ERR_UNSUPPORTED, "graph input '%s': unsupported: dtype %s (%d)", vi->name,
                 frt_dtype_name(g->values[id].v.dtype), (int)g->values[id].v.dtype);
        /* a subgraph's input shapes come from its owner at run time; sequences have none */
        if (!vi->has_shape && !up && !g->values[id].v.vtype)
            FAIL(FRT_ERR_UNSUPPORTED, "graph input '%s' has no shape (rank must be declared)",
                 vi->name);
        PUT(g->values[id].name, id);
        g->inputs[g->n_inputs++] = id;
    }

    /* Node outputs: each name defined once (SSA). */
    g->nodes = frt_arena_array(arena, og->n_nodes ? og->n_nodes : 1, sizeof *g->nodes);
    if (!g->nodes) NOMEM();
    g->cap_nodes = og->n_nodes;
    for (size_t i = 0; i < og->n_nodes; i++) {
        const frt_onnx_node *on = &og->nodes[i];
        frt_node *n = &g->nodes[i];
        char gen[64];
        if (on->name[0]) {
            n->name = on->name;
        } else {
            snprintf(gen, sizeof gen, "%s_%zu", on->op_type, i);
            n->name = frt_arena_strdup(arena, gen);
            if (!n->name) NOMEM();
        }
        n->op_type = on->op_type;
        n->domain = on->domain;
        n->attrs = on->attrs;
        n->n_attrs = on->n_attrs;
        n->opset = opset_for(m, on->domain);
        if (!n->opset && strcmp(on->domain, "ai.onnx") == 0) n->opset = g->opset; /* == "" */
        if (on->n_inputs > 1024 || on->n_outputs > 1024)
            FAIL(FRT_ERR_UNSUPPORTED, "node '%s' (%s) has too many inputs or outputs", n->name,
                 n->op_type);
        n->n_in = (int32_t)on->n_inputs;
        n->n_out = (int32_t)on->n_outputs;
        n->in = frt_arena_array(arena, on->n_inputs + 1, sizeof(int32_t));
        n->out = frt_arena_array(arena, on->n_outputs + 1, sizeof(int32_t));
        if (!n->in || !n->out) NOMEM();
        for (size_t k = 0; k < on->n_outputs; k++) {
            const char *name = on->outputs[k];
            if (!name[0]) {
                n->out[k] = -1;
                continue;
            }
            if (map_get(map, name) >= 0)
                FAIL(FRT_ERR_MALFORMED, "node '%s' (%s): output '%s' is already defined", n->name,
                     n->op_type, name);
            int32_t id = frt_graph_add_value(g, name, FRT_VALUE_NODE);
            if (id < 0) NOMEM();
            g->values[id].producer = (int32_t)i;
            PUT(g->values[id].name, id);
            n->out[k] = id;
        }
    }
    g->n_nodes = og->n_nodes;
    for (size_t i = 0; i < og->n_nodes; i++) {
        const frt_onnx_node *on = &og->nodes[i];
        frt_node *n = &g->nodes[i];
        for (size_t k = 0; k < on->n_inputs; k++) {
            const char *name = on->inputs[k];
            if (!name[0]) {
                n->in[k] = -1;
                continue;
            }
            int32_t id = resolve(&sc, name);
            if (id == -2) NOMEM();
            if (id < 0)
                FAIL(FRT_ERR_MALFORMED, "node '%s' (%s): input '%s' is not defined by any node, "
                     "initializer or graph input", n->name, n->op_type, name);
            n->in[k] = id;
            g->values[id].n_uses++;
        }
        st = build_subgraphs(m, on, &sc, (int32_t)i, arena);
        if (st) goto out;
    }
    g->outputs = frt_arena_array(arena, og->n_outputs ? og->n_outputs : 1, sizeof(int32_t));
    if (!g->outputs) NOMEM();
    if (og->n_outputs == 0) FAIL(FRT_ERR_MALFORMED, "graph has no outputs");
    for (size_t i = 0; i < og->n_outputs; i++) {
        const frt_onnx_value_info *vi = &og->outputs[i];
        int32_t id = resolve(&sc, vi->name);
        if (id == -2) NOMEM();
        if (id < 0) FAIL(FRT_ERR_MALFORMED, "graph output '%s' is not produced", vi->name);
        frt_ir_value *v = &g->values[id];
        v->is_output = true;
        v->n_uses++;
        if (vi->has_shape && v->v.rank < 0)
            for (int d = 0; d < vi->rank; d++)
                v->dim_names[d] = vi->dims[d].param ? frt_arena_strdup(arena, vi->dims[d].param)
                                                    : NULL;
        g->outputs[g->n_outputs++] = id;
    }

    /* Topological order (Kahn); a stable order that keeps the file order where possible. Captured
       reads order a node after the producers of the values its subgraphs read. */
    size_t nn = g->n_nodes;
    order = malloc((nn + 1) * sizeof *order);
    indeg = calloc(nn + 1, sizeof *indeg);
    queue = malloc((nn + 1) * sizeof *queue);
    if (!order || !indeg || !queue) NOMEM();
    for (size_t i = 0; i < nn; i++)
        for (int k = 0; k < frt_node_n_reads(&g->nodes[i]); k++) {
            int32_t p = frt_graph_producer(g, g->nodes[i].in[k]);
            if (p >= 0) indeg[i]++;
        }
    /* consumers lists via counting sort */
    size_t *cstart = calloc(nn + 1, sizeof *cstart);
    int32_t *clist = NULL;
    size_t total = 0;
    if (!cstart) NOMEM();
    for (size_t i = 0; i < nn; i++)
        for (int k = 0; k < frt_node_n_reads(&g->nodes[i]); k++) {
            int32_t p = frt_graph_producer(g, g->nodes[i].in[k]);
            if (p >= 0) cstart[p + 1]++, total++;
        }
    for (size_t i = 0; i < nn; i++) cstart[i + 1] += cstart[i];
    clist = malloc((total + 1) * sizeof *clist);
    size_t *fill = calloc(nn + 1, sizeof *fill);
    if (!clist || !fill) {
        free(cstart);
        free(clist);
        free(fill);
        NOMEM();
    }
    for (size_t i = 0; i < nn; i++)
        for (int k = 0; k < frt_node_n_reads(&g->nodes[i]); k++) {
            int32_t p = frt_graph_producer(g, g->nodes[i].in[k]);
            if (p >= 0) clist[cstart[p] + fill[p]++] = (int32_t)i;
        }
    size_t qh = 0, qt = 0, no = 0;
    for (size_t i = 0; i < nn; i++)
        if (indeg[i] == 0) queue[qt++] = (int32_t)i;
    while (qh < qt) {
        int32_t i = queue[qh++];
        order[no++] = i;
        for (size_t c = cstart[i]; c < cstart[i + 1]; c++)
            if (--indeg[clist[c]] == 0) queue[qt++] = clist[c];
    }
    free(cstart);
    free(clist);
    free(fill);
    if (no != nn) {
        for (size_t i = 0; i < nn; i++)
            if (indeg[i] > 0)
                FAIL(FRT_ERR_MALFORMED, "graph has a cycle through node '%s' (%s)",
                     g->nodes[i].name, g->nodes[i].op_type);
    }
    /* Permute nodes into that order and renumber producers and subgraph owners. */
    frt_node *sorted = frt_arena_array(arena, nn ? nn : 1, sizeof *sorted);
    if (!sorted) NOMEM();
    for (size_t i = 0; i < nn; i++) sorted[i] = g->nodes[order[i]];
    g->nodes = sorted;
    for (size_t i = 0; i < nn; i++) {
        for (int k = 0; k < sorted[i].n_out; k++)
            if (sorted[i].out[k] >= 0) g->values[sorted[i].out[k]].producer = (int32_t)i;
        for (int k = 0; k < sorted[i].n_sub; k++) sorted[i].sub[k]->owner = (int32_t)i;
    }
#undef FAIL
#undef NOMEM
#undef PUT
out:
    free(order);
    free(indeg);
    free(queue);
    free(sc.cap);
    map_free(&sc.map);
    return st;
}
