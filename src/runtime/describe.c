/* frt_desc: the decoded ONNX graph of a model for tools (flatrt info), with inferred shapes and
 * chosen kernels when the model compiled. All strings live in the description's arena. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx/onnx.h"
#include "runtime/model.h"
#include "util/arena.h"
#include "util/error.h"

struct frt_desc {
    frt_arena arena;
    const frt_model *m;       /* NULL: decoded only */
    frt_onnx_model *own;      /* decoded here (m == NULL) */
    void *map;                /* the file's mapping (m == NULL) */
    size_t map_len;
    const frt_onnx_model *ox;
    const frt_onnx_graph *g;
    size_t *inputs;           /* indices into g->inputs of the non-initializer inputs */
    size_t n_inputs;
    const char **node_names;  /* per node */
    const char **kernels;     /* per node */
    int *supported;           /* per node */
    frt_desc_attr **attrs;    /* per node, formatted lazily */
};

/* ---------------------------------------------------------------------------------------------- */

static int64_t domain_opset(const frt_onnx_model *ox, const char *domain) {
    for (size_t i = 0; i < ox->n_opsets; i++)
        if (!strcmp(ox->opsets[i].domain ? ox->opsets[i].domain : "", domain ? domain : ""))
            return ox->opsets[i].version;
    return 0;
}

static int op_supported(const frt_onnx_model *ox, const char *domain, const char *op_type) {
    int64_t v = domain_opset(ox, domain);
    size_t n = frt_num_ops();
    for (size_t i = 0; i < n; i++) {
        frt_op_info o;
        if (frt_op_info_get(i, &o) != FRT_OK) continue;
        if (!strcmp(o.op_type, op_type) && !strcmp(o.domain, domain ? domain : "") &&
            v >= o.since_opset && v <= o.max_opset)
            return 1;
    }
    return 0;
}

static int is_initializer(const frt_onnx_graph *g, const char *name) {
    for (size_t i = 0; i < g->n_initializers; i++)
        if (g->initializers[i].name && !strcmp(g->initializers[i].name, name)) return 1;
    return 0;
}

/* What compiling did with the node called name (block 0 of a loaded model). */
static const char *compiled_kernel(const frt_model *m, const char *name) {
    const frt_program *p = m->blocks[0].prog;
    for (size_t s = 0; p && s < p->n_steps; s++) {
        const frt_step *st = &p->steps[s];
        if (!st->ir || strcmp(st->ir->name, name)) continue;
        if (p->cls[s] == FRT_STEP_VIEW) return "(view)";
        if (p->cls[s] == FRT_STEP_SHAPE) return "(shape)";
        return st->k.name && st->k.name[0] ? st->k.name : "-";
    }
    const frt_graph *g = &m->g;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const frt_node *n = &g->nodes[i];
        if (strcmp(n->name, name)) continue;
        if (!n->dead) return "-";
        int folded = n->n_out > 0;
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0 && g->values[n->out[k]].kind != FRT_VALUE_CONST) folded = 0;
        return folded ? "(folded)" : "(fused)";
    }
    return "-";
}

static frt_status build(frt_desc *d) {
    const frt_onnx_graph *g = d->g;
    size_t nn = g->n_nodes ? g->n_nodes : 1;
    d->inputs = frt_arena_array(&d->arena, g->n_inputs ? g->n_inputs : 1, sizeof *d->inputs);
    d->node_names = frt_arena_array(&d->arena, nn, sizeof *d->node_names);
    d->kernels = frt_arena_array(&d->arena, nn, sizeof *d->kernels);
    d->supported = frt_arena_array(&d->arena, nn, sizeof *d->supported);
    d->attrs = frt_arena_array(&d->arena, nn, sizeof *d->attrs);
    if (!d->inputs || !d->node_names || !d->kernels || !d->supported || !d->attrs)
        return frt_error(FRT_ERR_NO_MEMORY, "frt_desc_create: out of memory");
    for (size_t i = 0; i < g->n_inputs; i++)
        if (!is_initializer(g, g->inputs[i].name)) d->inputs[d->n_inputs++] = i;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const frt_onnx_node *n = &g->nodes[i];
        const char *name = n->name;
        if (!name[0]) { /* the name frt_graph_build gives it */
            char gen[160];
            snprintf(gen, sizeof gen, "%s_%zu", n->op_type, i);
            name = frt_arena_strdup(&d->arena, gen);
            if (!name) return frt_error(FRT_ERR_NO_MEMORY, "frt_desc_create: out of memory");
        }
        d->node_names[i] = name;
        d->supported[i] = op_supported(d->ox, n->domain, n->op_type);
        d->kernels[i] = d->m ? compiled_kernel(d->m, name) : d->supported[i] ? NULL : "(unsupported)";
        d->attrs[i] = NULL;
    }
    return FRT_OK;
}

frt_status frt_desc_create(const char *path, const frt_model *model, frt_desc **out) {
    if (!out) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_desc_create: out is NULL");
    *out = NULL;
    if (!model && !path) return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_desc_create: no path");
    frt_desc *d = calloc(1, sizeof *d);
    if (!d) return frt_error(FRT_ERR_NO_MEMORY, "frt_desc_create: out of memory");
    frt_arena_init(&d->arena);
    frt_status st = FRT_OK;
    if (model) {
        d->m = model;
        d->ox = model->onnx;
    } else {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat sb;
        if (fd < 0) {
            st = frt_error(FRT_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
            goto fail;
        }
        if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            close(fd);
            st = frt_error(FRT_ERR_IO, "'%s' is not a regular file", path);
            goto fail;
        }
        d->map_len = (size_t)sb.st_size;
        if (d->map_len) {
            d->map = mmap(NULL, d->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
            if (d->map == MAP_FAILED) {
                int e = errno;
                d->map = NULL;
                close(fd);
                st = frt_error(FRT_ERR_IO, "cannot map '%s': %s", path, strerror(e));
                goto fail;
            }
        }
        close(fd);
        st = frt_onnx_decode(d->map, d->map_len, &d->own);
        if (st) goto fail;
        d->ox = d->own;
    }
    if (!d->ox || !d->ox->graph) {
        st = frt_error(FRT_ERR_MALFORMED, "%s: the model has no graph", path ? path : "model");
        goto fail;
    }
    d->g = d->ox->graph;
    if ((st = build(d))) goto fail;
    *out = d;
    return FRT_OK;
fail:
    frt_desc_free(d);
    return st;
}

void frt_desc_free(frt_desc *d) {
    if (!d) return;
    if (d->own) frt_onnx_model_free(d->own);
    if (d->map) munmap(d->map, d->map_len);
    frt_arena_free(&d->arena);
    free(d);
}

void frt_desc_get_info(const frt_desc *d, frt_desc_info *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!d) return;
    if (d->m) {
        out->producer = d->m->stats.producer ? d->m->stats.producer : "";
    } else {
        out->producer = d->ox->producer_name ? d->ox->producer_name : "";
    }
    out->opset = frt_onnx_default_opset(d->ox);
    out->ir_version = d->ox->ir_version;
    out->num_nodes = d->g->n_nodes;
    out->num_initializers = d->g->n_initializers;
    out->num_inputs = d->n_inputs;
    out->num_outputs = d->g->n_outputs;
    out->compiled = d->m != NULL;
}

/* ---------------------------------------------------------------------------------------------- */
/* Values                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

static void info_clear(frt_tensor_info *t, const char *name) {
    memset(t, 0, sizeof *t);
    t->name = name;
    t->rank = -1;
}

static int from_value_info(const frt_onnx_value_info *vi, frt_tensor_info *t) {
    info_clear(t, vi->name);
    if (!vi->has_type) return 0;
    t->dtype = (frt_dtype)vi->elem_type;
    if (vi->type_kind == FRT_ONNX_TYPE_SEQUENCE) t->kind = FRT_KIND_SEQUENCE;
    else if (vi->type_kind == FRT_ONNX_TYPE_OPTIONAL) {
        t->kind = FRT_KIND_OPTIONAL;
        t->elem_kind = vi->inner_kind == FRT_ONNX_TYPE_SEQUENCE ? FRT_KIND_SEQUENCE : FRT_KIND_TENSOR;
    }
    if (t->kind != FRT_KIND_TENSOR || !vi->has_shape) return 1;
    t->rank = vi->rank;
    for (int k = 0; k < vi->rank && k < FRT_MAX_RANK; k++) {
        t->shape[k] = vi->dims[k].value;
        t->dim_names[k] = vi->dims[k].param;
    }
    return 1;
}

frt_status frt_desc_input(const frt_desc *d, size_t i, frt_tensor_info *out) {
    if (!d || !out || i >= d->n_inputs)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_desc_input: bad argument");
    from_value_info(&d->g->inputs[d->inputs[i]], out);
    return FRT_OK;
}

frt_status frt_desc_output(const frt_desc *d, size_t i, frt_tensor_info *out) {
    if (!d || !out || i >= d->g->n_outputs)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_desc_output: bad argument");
    from_value_info(&d->g->outputs[i], out);
    return FRT_OK;
}

/* A value by name: the compiled graph's inferred type, else declared (inputs, outputs,
 * value_info, initializers). */
static void value_by_name(const frt_desc *d, const char *name, frt_tensor_info *t) {
    info_clear(t, name);
    if (!name[0]) return;
    if (d->m) {
        const frt_graph *g = &d->m->g;
        for (size_t v = 0; v < g->n_values; v++) {
            const frt_ir_value *iv = &g->values[v];
            if (!iv->name || strcmp(iv->name, name)) continue;
            if (iv->v.vtype != FRT_VT_TENSOR || (!iv->v.dtype && iv->v.rank < 0)) break;
            t->dtype = (frt_dtype)iv->v.dtype;
            t->rank = iv->v.rank;
            for (int k = 0; k < t->rank && k < FRT_MAX_RANK; k++) {
                t->shape[k] = iv->v.dims[k];
                t->dim_names[k] = iv->dim_names[k];
            }
            return;
        }
    }
    const frt_onnx_graph *g = d->g;
    const frt_onnx_value_info *lists[3] = {g->inputs, g->outputs, g->value_info};
    size_t counts[3] = {g->n_inputs, g->n_outputs, g->n_value_info};
    for (int l = 0; l < 3; l++)
        for (size_t i = 0; i < counts[l]; i++)
            if (lists[l][i].name && !strcmp(lists[l][i].name, name) &&
                from_value_info(&lists[l][i], t))
                return;
    info_clear(t, name);
    for (size_t i = 0; i < g->n_initializers; i++) {
        const frt_onnx_tensor *it = &g->initializers[i];
        if (it->name && !strcmp(it->name, name)) {
            t->dtype = (frt_dtype)it->dtype;
            t->rank = it->rank;
            for (int k = 0; k < it->rank; k++) t->shape[k] = it->dims[k];
            return;
        }
    }
}

frt_status frt_desc_node_get(const frt_desc *d, size_t i, frt_desc_node *out) {
    if (!d || !out || i >= d->g->n_nodes)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_desc_node_get: bad argument");
    const frt_onnx_node *n = &d->g->nodes[i];
    memset(out, 0, sizeof *out);
    out->name = d->node_names[i];
    out->op_type = n->op_type;
    out->domain = n->domain ? n->domain : "";
    out->opset = domain_opset(d->ox, out->domain);
    out->supported = d->supported[i];
    out->kernel = d->kernels[i];
    out->num_inputs = n->n_inputs;
    out->num_outputs = n->n_outputs;
    out->num_attrs = n->n_attrs;
    return FRT_OK;
}

frt_status frt_desc_node_value(const frt_desc *d, size_t node, int is_output, size_t k,
                               frt_tensor_info *out) {
    if (!d || !out || node >= d->g->n_nodes)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_desc_node_value: bad argument");
    const frt_onnx_node *n = &d->g->nodes[node];
    if (k >= (is_output ? n->n_outputs : n->n_inputs))
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_desc_node_value: index out of range");
    value_by_name(d, is_output ? n->outputs[k] : n->inputs[k], out);
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Attributes                                                                                      */
/* ---------------------------------------------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) FRT_PRINTF(2, 3);
static void sb_printf(sbuf *b, const char *fmt, ...) {
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 128) + (size_t)n;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

static void sb_json_str(sbuf *b, const char *s, size_t len) {
    sb_printf(b, "\"");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') sb_printf(b, "\\%c", c);
        else if (c < 0x20) sb_printf(b, "\\u%04x", c);
        else sb_printf(b, "%c", c);
    }
    sb_printf(b, "\"");
}

static void sb_float(sbuf *b, double v, int json) {
    if (json && !isfinite(v)) sb_printf(b, "null");
    else sb_printf(b, json ? "%.9g" : "%g", v);
}

static void sb_shape(sbuf *b, const frt_onnx_tensor *t, int json) {
    sb_printf(b, "[");
    for (int k = 0; t && k < t->rank; k++) sb_printf(b, "%s%lld", k ? (json ? ", " : ",") : "", (long long)t->dims[k]);
    sb_printf(b, "]");
}

static void format_attr(sbuf *b, const frt_onnx_attr *a, int json) {
    size_t cap = json ? (size_t)-1 : 16; /* list elements shown in text */
    switch (a->type) {
    case FRT_ATTR_FLOAT: sb_float(b, a->f, json); break;
    case FRT_ATTR_INT: sb_printf(b, "%lld", (long long)a->i); break;
    case FRT_ATTR_STRING:
        if (json) sb_json_str(b, a->s ? a->s : "", a->s ? a->s_len : 0);
        else sb_printf(b, "'%.40s%s'", a->s ? a->s : "", a->s && a->s_len > 40 ? "..." : "");
        break;
    case FRT_ATTR_INTS:
    case FRT_ATTR_FLOATS:
    case FRT_ATTR_STRINGS:
        sb_printf(b, "[");
        for (size_t k = 0; k < a->n && k < cap; k++) {
            if (k) sb_printf(b, json ? ", " : ",");
            if (a->type == FRT_ATTR_INTS) sb_printf(b, "%lld", (long long)a->ints[k]);
            else if (a->type == FRT_ATTR_FLOATS) sb_float(b, a->floats[k], json);
            else if (json) sb_json_str(b, a->strings[k], strlen(a->strings[k]));
            else sb_printf(b, "'%s'", a->strings[k]);
        }
        if (a->n > cap) sb_printf(b, ",... (%zu)", a->n);
        sb_printf(b, "]");
        break;
    case FRT_ATTR_TENSOR:
        if (json) {
            sb_printf(b, "{\"tensor\": {\"dtype\": \"%s\", \"shape\": ",
                      frt_dtype_name(a->t ? (frt_dtype)a->t->dtype : (frt_dtype)0));
            sb_shape(b, a->t, 1);
            sb_printf(b, "}}");
        } else {
            sb_printf(b, "tensor(%s", frt_dtype_name(a->t ? (frt_dtype)a->t->dtype : (frt_dtype)0));
            sb_shape(b, a->t, 0);
            sb_printf(b, ")");
        }
        break;
    case FRT_ATTR_GRAPH:
        sb_printf(b, json ? "{\"graph\": {\"nodes\": %zu}}" : "graph(%zu nodes)", a->g ? a->g->n_nodes : 0);
        break;
    case FRT_ATTR_GRAPHS: sb_printf(b, json ? "{\"graphs\": %zu}" : "graphs(%zu)", a->n); break;
    case FRT_ATTR_TENSORS: sb_printf(b, json ? "{\"tensors\": %zu}" : "tensors(%zu)", a->n); break;
    case FRT_ATTR_TYPE_PROTO: sb_printf(b, json ? "{\"type\": null}" : "type"); break;
    default: sb_printf(b, json ? "null" : "?");
    }
}

frt_status frt_desc_node_attr(const frt_desc *cd, size_t node, size_t k, frt_desc_attr *out) {
    if (!cd || !out || node >= cd->g->n_nodes || k >= cd->g->nodes[node].n_attrs)
        return frt_error(FRT_ERR_INVALID_ARGUMENT, "frt_desc_node_attr: bad argument");
    frt_desc *d = (frt_desc *)cd; /* formats lazily into the description's own arena */
    const frt_onnx_node *n = &d->g->nodes[node];
    if (!d->attrs[node]) {
        frt_desc_attr *as = frt_arena_array(&d->arena, n->n_attrs, sizeof *as);
        if (!as) return frt_error(FRT_ERR_NO_MEMORY, "frt_desc_node_attr: out of memory");
        for (size_t a = 0; a < n->n_attrs; a++) {
            sbuf t = {0}, j = {0};
            format_attr(&t, &n->attrs[a], 0);
            format_attr(&j, &n->attrs[a], 1);
            as[a].name = n->attrs[a].name;
            as[a].text = t.oom || !t.p ? NULL : frt_arena_strdup(&d->arena, t.p);
            as[a].json = j.oom || !j.p ? NULL : frt_arena_strdup(&d->arena, j.p);
            free(t.p);
            free(j.p);
            if (!as[a].text || !as[a].json)
                return frt_error(FRT_ERR_NO_MEMORY, "frt_desc_node_attr: out of memory");
        }
        d->attrs[node] = as;
    }
    *out = d->attrs[node][k];
    return FRT_OK;
}
