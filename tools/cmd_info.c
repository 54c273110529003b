/* `flatrt info` (model description, --ops, --nodes, --json) and `flatrt plan` (memory plan SVG). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plan_svg.h"
#include "tensor_io.h"

/* info reads the decoded ONNX graph and the inferred value types of the library (the tool is
 * built with its sources): a model the runtime cannot load is still described. */
#include "onnx/onnx.h"
#include "runtime/model.h"

typedef struct op_count {
    const char *op;
    size_t count;
} op_count;

static int cmp_op_count(const void *a, const void *b) {
    const op_count *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return strcmp(x->op, y->op);
}

static void print_info_tensor(const frt_tensor_info *info) {
    char shp[512];
    if (info->kind != FRT_KIND_TENSOR) { /* run with frt_run_values: `check` feeds such cases */
        snprintf(shp, sizeof shp, "%s", info->kind == FRT_KIND_SEQUENCE ? "sequence"
                                        : info->elem_kind == FRT_KIND_SEQUENCE
                                            ? "optional sequence"
                                            : "optional tensor");
        printf("  %-24s %-8s %s\n", info->name ? info->name : "?", frt_dtype_name(info->dtype), shp);
        return;
    }
    shape_str(shp, sizeof shp, info->rank, info->shape, info->dim_names);
    printf("  %-24s %-8s %s\n", info->name ? info->name : "?", frt_dtype_name(info->dtype), shp);
}

/* info --memory: one row per planner for the same input shapes. */
static int print_memory_table(const cli *c, const inputs *in) {
    static const frt_planner planners[] = {FRT_PLANNER_STANDARD, FRT_PLANNER_GREEDY, FRT_PLANNER_NONE};
    printf("\nplanners compared (same shapes):\n");
    printf("  %-9s %14s %14s %14s %11s %11s %8s %7s %9s %8s\n", "planner", "slab_bytes",
           "lower_bound", "naive", "slab/lower", "naive/slab", "managed", "reused", "in_place",
           "concats");
    for (size_t k = 0; k < sizeof planners / sizeof planners[0]; k++) {
        cli cc = *c;
        cc.planner = planners[k];
        frt_model *m = NULL;
        frt_runtime *rt = NULL;
        double ms;
        frt_plan_stats ps;
        if (load_model(&cc, &m, &ms) != FRT_OK || frt_runtime_create(m, &rt) != FRT_OK ||
            frt_runtime_reshape(rt, in->names, in->t, in->n) != FRT_OK ||
            frt_runtime_plan_stats(rt, &ps) != FRT_OK) {
            int rc = fail_frt(planner_name(planners[k]));
            frt_runtime_free(rt);
            frt_model_free(m);
            return rc;
        }
        printf("  %-9s %14zu %14zu %14zu %11.3f %11.2f %8zu %7zu %9zu %8zu\n",
               planner_name(planners[k]), ps.arena_bytes, ps.lower_bound_bytes, ps.naive_bytes,
               ps.lower_bound_bytes ? (double)ps.arena_bytes / (double)ps.lower_bound_bytes : 0.0,
               ps.arena_bytes ? (double)ps.naive_bytes / (double)ps.arena_bytes : 0.0,
               ps.num_managed, ps.num_reused, ps.num_inplace, ps.num_concat_removed);
        frt_runtime_free(rt);
        frt_model_free(m);
    }
    return 0;
}

/* plan --svg: draw the plan for the bench-style inputs. */
int cmd_plan(int argc, char **argv) {
    cli cl, *c = &cl;
    int rc = cli_parse(cli_find_command(argv[0]), argc, argv, c);
    if (!rc) rc = cli_need_model(c);
    if (!rc && !c->svg) rc = usage_error("plan needs --svg FILE (or --svg - for stdout)");
    if (rc) {
        cli_free(c);
        return rc < 0 ? 0 : rc;
    }
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    inputs in = {0};
    double load_ms;
    if (load_model(c, &m, &load_ms) != FRT_OK) {
        rc = fail_frt(NULL);
        goto done;
    }
    if ((rc = inputs_init(m, &in)) || (rc = bind_inputs(c, &in, 1))) goto done;
    if (frt_runtime_create(m, &rt) != FRT_OK || frt_runtime_reshape(rt, in.names, in.t, in.n) != FRT_OK) {
        rc = fail_frt("planning");
        goto done;
    }
    int to_stdout = !strcmp(c->svg, "-");
    FILE *f = to_stdout ? stdout : fopen(c->svg, "w");
    if (!f) {
        rc = fail("cannot write '%s': %s", c->svg, strerror(errno));
        goto done;
    }
    char title[512];
    snprintf(title, sizeof title, "%s: memory plan (%s planner)", c->model, planner_name(c->planner));
    int wr = plan_svg_write(f, rt, title);
    if ((to_stdout ? fflush(f) : fclose(f)) != 0 || wr != 0) {
        rc = fail("error writing '%s'", to_stdout ? "(stdout)" : c->svg);
        goto done;
    }
    frt_plan_stats ps;
    plan_svg_counts pc;
    char counts[256];
    frt_runtime_plan_stats(rt, &ps);
    plan_svg_count(rt, &pc);
    plan_svg_counts_str(&pc, counts, sizeof counts);
    /* the summary goes to stderr when stdout carries the picture */
    fprintf(to_stdout ? stderr : stdout, "wrote %s: %s; slab %zu bytes, lower bound %zu bytes\n",
            to_stdout ? "SVG to stdout" : c->svg, counts, ps.arena_bytes, ps.lower_bound_bytes);
done:
    inputs_free(&in);
    frt_runtime_free(rt);
    frt_model_free(m);
    cli_free(c);
    return rc;
}

/* ---------------------------------------------------------------------------------------------- */
/* info                                                                                            */
/* ---------------------------------------------------------------------------------------------- */

/* What info knows about a model: the decoded ONNX graph (the loaded model's, or decoded here when
 * the runtime could not load it), and when loaded the model, a runtime (kernels) and the plan. */
typedef struct desc {
    const char *path;
    frt_model *m;             /* NULL when the load failed */
    frt_runtime *rt;          /* NULL if it could not be created */
    char load_error[2048];
    double load_ms;
    void *buf;                /* file bytes decoded here (m == NULL) */
    frt_onnx_model *own;
    const frt_onnx_model *ox; /* m->onnx or own */
} desc;

static int64_t domain_opset(const frt_onnx_model *ox, const char *domain) {
    for (size_t i = 0; i < ox->n_opsets; i++)
        if (!strcmp(ox->opsets[i].domain ? ox->opsets[i].domain : "", domain ? domain : ""))
            return ox->opsets[i].version;
    return 0;
}

/* Whether this build has an implementation of op_type in domain at the model's opset. */
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

/* Node i's name as the runtime knows it ("<op>_<index>" when the model gives none). */
static const char *node_name(const frt_onnx_node *n, size_t i, char *buf, size_t len) {
    if (n->name && n->name[0]) return n->name;
    snprintf(buf, len, "%s_%zu", n->op_type, i);
    return buf;
}

/* Type and shape of a value by name: the loaded model's inferred ones, else the model's declared
 * ones (inputs, outputs, value_info, initializers). Returns 0 when unknown. */
typedef struct vshape {
    int32_t dtype, rank; /* rank -1: unknown */
    int64_t dims[FRT_MAX_RANK];
    const char *dim_names[FRT_MAX_RANK];
} vshape;

static int from_value_info(const frt_onnx_value_info *vi, vshape *out) {
    if (!vi->has_type) return 0;
    out->dtype = vi->elem_type;
    out->rank = vi->has_shape ? vi->rank : -1;
    for (int d = 0; d < out->rank && d < FRT_MAX_RANK; d++) {
        out->dims[d] = vi->dims[d].value;
        out->dim_names[d] = vi->dims[d].param;
    }
    return 1;
}

static int value_shape(const desc *ds, const char *name, vshape *out) {
    memset(out, 0, sizeof *out);
    out->rank = -1;
    if (!name || !name[0]) return 0;
    if (ds->m) {
        const frt_graph *g = &ds->m->g;
        for (size_t v = 0; v < g->n_values; v++) {
            const frt_ir_value *iv = &g->values[v];
            if (!iv->name || strcmp(iv->name, name)) continue;
            if (iv->v.vtype != FRT_VT_TENSOR || (!iv->v.dtype && iv->v.rank < 0)) break;
            out->dtype = iv->v.dtype;
            out->rank = iv->v.rank;
            for (int d = 0; d < out->rank && d < FRT_MAX_RANK; d++) {
                out->dims[d] = iv->v.dims[d];
                out->dim_names[d] = iv->dim_names[d];
            }
            return 1;
        }
    }
    const frt_onnx_graph *og = ds->ox->graph;
    const frt_onnx_value_info *lists[3] = {og->inputs, og->outputs, og->value_info};
    size_t counts[3] = {og->n_inputs, og->n_outputs, og->n_value_info};
    for (int l = 0; l < 3; l++)
        for (size_t i = 0; i < counts[l]; i++)
            if (lists[l][i].name && !strcmp(lists[l][i].name, name) &&
                from_value_info(&lists[l][i], out))
                return 1;
    for (size_t i = 0; i < og->n_initializers; i++) {
        const frt_onnx_tensor *t = &og->initializers[i];
        if (t->name && !strcmp(t->name, name)) {
            out->dtype = t->dtype;
            out->rank = t->rank;
            for (int d = 0; d < t->rank; d++) out->dims[d] = t->dims[d];
            return 1;
        }
    }
    return 0;
}

/* The kernel chosen for a node, or what became of it: "folded", "fused", "unsupported". */
static const char *node_kernel(const desc *ds, const frt_onnx_node *n, const char *name) {
    if (!ds->m) return op_supported(ds->ox, n->domain, n->op_type) ? NULL : "(unsupported)";
    size_t ns = ds->rt ? frt_runtime_num_steps(ds->rt) : 0;
    for (size_t i = 0; i < ns; i++) {
        frt_step_profile p;
        frt_runtime_step_profile(ds->rt, i, &p);
        if (p.node_name && !strcmp(p.node_name, name)) return p.kernel && p.kernel[0] ? p.kernel : "-";
    }
    const frt_graph *g = &ds->m->g;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const frt_node *gn = &g->nodes[i];
        if (strcmp(gn->name, name)) continue;
        if (!gn->dead) return "(no compute step)";
        int folded = gn->n_out > 0;
        for (int k = 0; k < gn->n_out; k++)
            if (gn->out[k] >= 0 && g->values[gn->out[k]].kind != FRT_VALUE_CONST) folded = 0;
        return folded ? "(folded)" : "(fused)";
    }
    return NULL;
}

static void json_num(FILE *f, double v) {
    if (v != v || v > 1e308 || v < -1e308) fputs("null", f);
    else fprintf(f, "%.9g", v);
}

static void print_attr(FILE *f, const frt_onnx_attr *a, int json) {
    size_t cap = json ? (size_t)1 << 20 : 16; /* list elements shown */
    switch (a->type) {
    case FRT_ATTR_FLOAT:
        if (json) json_num(f, a->f);
        else fprintf(f, "%g", a->f);
        break;
    case FRT_ATTR_INT: fprintf(f, "%lld", (long long)a->i); break;
    case FRT_ATTR_STRING:
        if (json) json_str(f, a->s ? a->s : "");
        else fprintf(f, "'%.40s%s'", a->s ? a->s : "", a->s && a->s_len > 40 ? "..." : "");
        break;
    case FRT_ATTR_INTS:
    case FRT_ATTR_FLOATS:
    case FRT_ATTR_STRINGS:
        fputc('[', f);
        for (size_t k = 0; k < a->n && k < cap; k++) {
            if (k) fputs(json ? ", " : ",", f);
            if (a->type == FRT_ATTR_INTS) fprintf(f, "%lld", (long long)a->ints[k]);
            else if (a->type == FRT_ATTR_FLOATS) {
                if (json) json_num(f, a->floats[k]);
                else fprintf(f, "%g", a->floats[k]);
            } else if (json) json_str(f, a->strings[k]);
            else fprintf(f, "'%s'", a->strings[k]);
        }
        if (a->n > cap) fprintf(f, ",... (%zu)", a->n);
        fputc(']', f);
        break;
    case FRT_ATTR_TENSOR: {
        char shp[256];
        const frt_onnx_tensor *t = a->t;
        shape_str(shp, sizeof shp, t ? t->rank : -1, t ? t->dims : NULL, NULL);
        if (json) {
            fprintf(f, "{\"tensor\": {\"dtype\": ");
            json_str(f, frt_dtype_name(t ? (frt_dtype)t->dtype : (frt_dtype)0));
            fprintf(f, ", \"shape\": [");
            for (int d = 0; t && d < t->rank; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)t->dims[d]);
            fprintf(f, "]}}");
        } else {
            fprintf(f, "tensor(%s%s)", frt_dtype_name(t ? (frt_dtype)t->dtype : (frt_dtype)0), shp);
        }
        break;
    }
    case FRT_ATTR_GRAPH:
        if (json) fprintf(f, "{\"graph\": {\"nodes\": %zu}}", a->g ? a->g->n_nodes : 0);
        else fprintf(f, "graph(%zu nodes)", a->g ? a->g->n_nodes : 0);
        break;
    case FRT_ATTR_GRAPHS:
        if (json) fprintf(f, "{\"graphs\": %zu}", a->n);
        else fprintf(f, "graphs(%zu)", a->n);
        break;
    case FRT_ATTR_TENSORS:
        if (json) fprintf(f, "{\"tensors\": %zu}", a->n);
        else fprintf(f, "tensors(%zu)", a->n);
        break;
    default:
        if (json) fputs("null", f);
        else fputs("?", f);
    }
}

static void json_shape(FILE *f, int32_t rank, const int64_t *dims, const char *const *names) {
    if (rank < 0) {
        fputs("null", f);
        return;
    }
    fputc('[', f);
    for (int d = 0; d < rank; d++) {
        if (d) fputs(", ", f);
        if (dims[d] >= 0) fprintf(f, "%lld", (long long)dims[d]);
        else json_str(f, names && names[d] && names[d][0] ? names[d] : "?");
    }
    fputc(']', f);
}

static void json_value(FILE *f, const desc *ds, const char *name) {
    vshape vs;
    int known = value_shape(ds, name, &vs);
    fputs("{\"name\": ", f);
    json_str(f, name);
    fputs(", \"dtype\": ", f);
    json_str(f, known ? frt_dtype_name((frt_dtype)vs.dtype) : NULL);
    fputs(", \"shape\": ", f);
    json_shape(f, known ? vs.rank : -1, vs.dims, vs.dim_names);
    fputc('}', f);
}

static void text_values(FILE *f, const desc *ds, const char *label, size_t n, const char **names) {
    fprintf(f, "      %s", label);
    for (size_t k = 0; k < n; k++) {
        if (!names[k][0]) {
            fprintf(f, "%s(none)", k ? ", " : " ");
            continue;
        }
        vshape vs;
        char shp[512];
        if (value_shape(ds, names[k], &vs)) {
            shape_str(shp, sizeof shp, vs.rank, vs.dims, vs.dim_names);
            fprintf(f, "%s%s %s %s", k ? ", " : " ", names[k], frt_dtype_name((frt_dtype)vs.dtype), shp);
        } else {
            fprintf(f, "%s%s ?", k ? ", " : " ", names[k]);
        }
    }
    fputc('\n', f);
}

static void print_nodes_text(const desc *ds) {
    const frt_onnx_graph *og = ds->ox->graph;
    printf("nodes (%zu):\n", og->n_nodes);
    for (size_t i = 0; i < og->n_nodes; i++) {
        const frt_onnx_node *n = &og->nodes[i];
        char gen[128];
        const char *name = node_name(n, i, gen, sizeof gen);
        const char *k = node_kernel(ds, n, name);
        printf("  [%zu] %s %s%s%s  kernel %s\n", i, name, n->domain[0] ? n->domain : "",
               n->domain[0] ? "." : "", n->op_type, k ? k : "-");
        text_values(stdout, ds, "in: ", n->n_inputs, n->inputs);
        text_values(stdout, ds, "out:", n->n_outputs, n->outputs);
        if (n->n_attrs) {
            printf("      attrs:");
            for (size_t a = 0; a < n->n_attrs; a++) {
                printf(" %s=", n->attrs[a].name);
                print_attr(stdout, &n->attrs[a], 0);
            }
            printf("\n");
        }
    }
}

static void print_nodes_json(FILE *f, const desc *ds) {
    const frt_onnx_graph *og = ds->ox->graph;
    fputs(", \"nodes\": [", f);
    for (size_t i = 0; i < og->n_nodes; i++) {
        const frt_onnx_node *n = &og->nodes[i];
        char gen[128];
        const char *name = node_name(n, i, gen, sizeof gen);
        fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
        json_str(f, name);
        fputs(", \"op\": ", f);
        json_str(f, n->op_type);
        fputs(", \"domain\": ", f);
        json_str(f, n->domain);
        fputs(", \"kernel\": ", f);
        json_str(f, node_kernel(ds, n, name));
        fputs(", \"inputs\": [", f);
        for (size_t k = 0; k < n->n_inputs; k++) {
            if (k) fputs(", ", f);
            json_value(f, ds, n->inputs[k]);
        }
        fputs("], \"outputs\": [", f);
        for (size_t k = 0; k < n->n_outputs; k++) {
            if (k) fputs(", ", f);
            json_value(f, ds, n->outputs[k]);
        }
        fputs("], \"attributes\": {", f);
        for (size_t a = 0; a < n->n_attrs; a++) {
            fprintf(f, "%s", a ? ", " : "");
            json_str(f, n->attrs[a].name);
            fputs(": ", f);
            print_attr(f, &n->attrs[a], 1);
        }
        fputs("}}", f);
    }
    fputs("]", f);
}

/* Unsupported op types of the decoded graph (top level and subgraphs' nodes are not searched:
 * the load error names those). */
typedef struct unsup {
    const char *op, *domain;
    size_t count;
    const char *first;
} unsup;

static size_t find_unsupported(const desc *ds, unsup *u, size_t cap) {
    const frt_onnx_graph *og = ds->ox->graph;
    size_t n = 0;
    for (size_t i = 0; i < og->n_nodes; i++) {
        const frt_onnx_node *nd = &og->nodes[i];
        if (op_supported(ds->ox, nd->domain, nd->op_type)) continue;
        size_t k = 0;
        while (k < n && (strcmp(u[k].op, nd->op_type) || strcmp(u[k].domain, nd->domain))) k++;
        if (k == n) {
            if (n == cap) continue;
            u[n++] = (unsup){nd->op_type, nd->domain, 0, nd->name};
        }
        u[k].count++;
    }
    return n;
}

static void tensor_info_from_vi(const frt_onnx_value_info *vi, frt_tensor_info *ti) {
    memset(ti, 0, sizeof *ti);
    ti->name = vi->name;
    vshape vs = {0};
    vs.rank = -1;
    from_value_info(vi, &vs);
    ti->dtype = (frt_dtype)vs.dtype;
    ti->rank = vs.rank;
    for (int d = 0; d < vs.rank; d++) {
        ti->shape[d] = vs.dims[d];
        ti->dim_names[d] = vs.dim_names[d];
    }
}

static int is_initializer(const frt_onnx_graph *og, const char *name) {
    for (size_t i = 0; i < og->n_initializers; i++)
        if (og->initializers[i].name && !strcmp(og->initializers[i].name, name)) return 1;
    return 0;
}

static void json_tensor_info(FILE *f, const frt_tensor_info *ti) {
    fputs("{\"name\": ", f);
    json_str(f, ti->name);
    fputs(", \"dtype\": ", f);
    json_str(f, frt_dtype_name(ti->dtype));
    fputs(", \"shape\": ", f);
    json_shape(f, ti->kind == FRT_KIND_TENSOR ? ti->rank : -1, ti->shape, ti->dim_names);
    fputc('}', f);
}

/* info for a model the runtime could not load: what the decoder reads. */
static int info_decoded(const cli *c, desc *ds) {
    const frt_onnx_graph *og = ds->ox->graph;
    unsup u[256];
    size_t nu = find_unsupported(ds, u, 256);
    char producer[512];
    snprintf(producer, sizeof producer, "%s%s%s",
             ds->ox->producer_name ? ds->ox->producer_name : "",
             ds->ox->producer_version && ds->ox->producer_version[0] ? " " : "",
             ds->ox->producer_version ? ds->ox->producer_version : "");
    /* op types with counts (top level) */
    op_count ops[512];
    size_t n_ops = 0;
    for (size_t i = 0; i < og->n_nodes; i++) {
        size_t k = 0;
        while (k < n_ops && strcmp(ops[k].op, og->nodes[i].op_type)) k++;
        if (k == n_ops) {
            if (n_ops == 512) continue;
            ops[n_ops++] = (op_count){og->nodes[i].op_type, 0};
        }
        ops[k].count++;
    }
    qsort(ops, n_ops, sizeof *ops, cmp_op_count);
    if (c->json) {
        FILE *f = stdout;
        fputs("{\"model\": ", f);
        json_str(f, c->model);
        fputs(", \"loaded\": false, \"error\": ", f);
        json_str(f, ds->load_error);
        fputs(", \"producer\": ", f);
        json_str(f, producer);
        fprintf(f, ", \"opset\": %lld, \"inputs\": [", (long long)frt_onnx_default_opset(ds->ox));
        int first = 1;
        for (size_t i = 0; i < og->n_inputs; i++) {
            if (is_initializer(og, og->inputs[i].name)) continue;
            frt_tensor_info ti;
            tensor_info_from_vi(&og->inputs[i], &ti);
            if (!first) fputs(", ", f);
            first = 0;
            json_tensor_info(f, &ti);
        }
        fputs("], \"outputs\": [", f);
        for (size_t i = 0; i < og->n_outputs; i++) {
            frt_tensor_info ti;
            tensor_info_from_vi(&og->outputs[i], &ti);
            if (i) fputs(", ", f);
            json_tensor_info(f, &ti);
        }
        fputs("], \"op_types\": {", f);
        for (size_t k = 0; k < n_ops; k++) {
            if (k) fputs(", ", f);
            json_str(f, ops[k].op);
            fprintf(f, ": %zu", ops[k].count);
        }
        fputs("}, \"unsupported\": [", f);
        for (size_t k = 0; k < nu; k++) {
            fputs(k ? ", {\"op\": " : "{\"op\": ", f);
            json_str(f, u[k].op);
            fputs(", \"domain\": ", f);
            json_str(f, u[k].domain);
            fprintf(f, ", \"nodes\": %zu}", u[k].count);
        }
        fprintf(f, "], \"graph\": {\"nodes\": %zu, \"initializers\": %zu}", og->n_nodes,
                og->n_initializers);
        if (c->nodes) print_nodes_json(f, ds);
        fputs("}\n", f);
        return 0;
    }
    printf("model:     %s\n", c->model);
    printf("producer:  %s\n", producer[0] ? producer : "(unknown)");
    printf("opset:     %lld\n", (long long)frt_onnx_default_opset(ds->ox));
    printf("not compiled: %s\n", ds->load_error);
    size_t n_in = 0;
    for (size_t i = 0; i < og->n_inputs; i++) n_in += !is_initializer(og, og->inputs[i].name);
    printf("inputs (%zu):\n", n_in);
    for (size_t i = 0; i < og->n_inputs; i++) {
        if (is_initializer(og, og->inputs[i].name)) continue;
        frt_tensor_info ti;
        tensor_info_from_vi(&og->inputs[i], &ti);
        print_info_tensor(&ti);
    }
    printf("outputs (%zu):\n", og->n_outputs);
    for (size_t i = 0; i < og->n_outputs; i++) {
        frt_tensor_info ti;
        tensor_info_from_vi(&og->outputs[i], &ti);
        print_info_tensor(&ti);
    }
    printf("op types (%zu):\n", n_ops);
    for (size_t k = 0; k < n_ops; k++) printf("  %-24s %zu\n", ops[k].op, ops[k].count);
    printf("unsupported operators (%zu):\n", nu);
    for (size_t k = 0; k < nu; k++)
        printf("  %-24s %s, opset %lld, %zu node%s%s%s\n", u[k].op,
               u[k].domain[0] ? u[k].domain : "ai.onnx", (long long)domain_opset(ds->ox, u[k].domain),
               u[k].count, u[k].count == 1 ? "" : "s", u[k].first && u[k].first[0] ? ", e.g. " : "",
               u[k].first ? u[k].first : "");
    printf("graph:     %zu nodes, %zu initializers\n", og->n_nodes, og->n_initializers);
    if (c->nodes) print_nodes_text(ds);
    return 0;
}

static int cmd_ops(void);

int cmd_info(int argc, char **argv) {
    cli cl, *c = &cl;
    int rc = cli_parse(cli_find_command(argv[0]), argc, argv, c);
    if (!rc && c->ops) {
        rc = c->n_args ? usage_error("'info --ops' takes no other arguments") : cmd_ops();
        cli_free(c);
        return rc;
    }
    if (!rc) rc = cli_need_model(c);
    if (rc) {
        cli_free(c);
        return rc < 0 ? 0 : rc;
    }
    desc ds;
    memset(&ds, 0, sizeof ds);
    ds.path = c->model;
    inputs in = {0};
    op_count *ops = NULL;
    double load_ms;
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    FILE *out = c->json ? stderr : stdout; /* text lines; JSON goes to stdout at the end */
    if (load_model(c, &m, &load_ms) != FRT_OK) {
        /* not loadable: describe what the decoder reads, if it can */
        snprintf(ds.load_error, sizeof ds.load_error, "%s", frt_last_error());
        size_t size = 0;
        char err[1024];
        if (tio_read_file(c->model, &ds.buf, &size, err, sizeof err) ||
            frt_onnx_decode(ds.buf, size, &ds.own) != FRT_OK || !ds.own->graph) {
            rc = fail("%s", ds.load_error);
            goto done;
        }
        ds.ox = ds.own;
        warn("%s cannot be compiled: %s", c->model, ds.load_error);
        rc = info_decoded(c, &ds);
        goto done;
    }
    ds.m = m;
    ds.ox = m->onnx;
    ds.load_ms = load_ms;
    frt_model_stats st;
    memset(&st, 0, sizeof st);
    frt_model_get_stats(m, &st);
    fprintf(out, "model:     %s\n", c->model);
    fprintf(out, "producer:  %s\n", st.producer && st.producer[0] ? st.producer : "(unknown)");
    fprintf(out, "opset:     %lld\n", (long long)st.opset);
    fprintf(out, "load time: %.3f ms\n", load_ms);
    if ((rc = inputs_init(m, &in))) goto done;
    size_t n_out = frt_model_num_outputs(m);
    frt_tensor_info *outs_info = calloc(n_out ? n_out : 1, sizeof *outs_info);
    if (!outs_info) {
        rc = fail("out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_out; i++)
        if (frt_model_output(m, i, &outs_info[i]) != FRT_OK) {
            free(outs_info);
            rc = fail_frt("reading model outputs");
            goto done;
        }
    if (!c->json) {
        printf("inputs (%zu):\n", in.n);
        for (size_t i = 0; i < in.n; i++) print_info_tensor(&in.info[i]);
        printf("outputs (%zu):\n", n_out);
        for (size_t i = 0; i < n_out; i++) print_info_tensor(&outs_info[i]);
    }
    size_t n_types = frt_model_num_op_types(m);
    ops = calloc(n_types ? n_types : 1, sizeof *ops);
    if (!ops) {
        free(outs_info);
        rc = fail("out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_types; i++) {
        frt_model_op_type(m, i, &ops[i].op, &ops[i].count);
        if (!ops[i].op) ops[i].op = "?";
    }
    qsort(ops, n_types, sizeof *ops, cmp_op_count);
    if (!c->json) {
        printf("op types (%zu):\n", n_types);
        for (size_t i = 0; i < n_types; i++) printf("  %-24s %zu\n", ops[i].op, ops[i].count);
    }
    fprintf(out, "graph:     %zu nodes -> %zu steps (%zu folded at load, %zu fused)\n", st.num_nodes,
            st.num_steps, st.num_folded, st.num_fused);
    char pb[32], mb[32], cb[32], tb[32];
    bytes_str(pb, sizeof pb, (double)st.param_bytes);
    bytes_str(mb, sizeof mb, (double)st.mapped_bytes);
    bytes_str(cb, sizeof cb, (double)st.copied_bytes);
    bytes_str(tb, sizeof tb, (double)st.transformed_bytes);
    fprintf(out, "parameters: %zu elements, %zu bytes (%s)\n", st.num_params, st.param_bytes, pb);
    fprintf(out, "  mapped in place %zu bytes (%s), copied %zu bytes (%s), transformed %zu bytes (%s)\n",
            st.mapped_bytes, mb, st.copied_bytes, cb, st.transformed_bytes, tb);

    /* memory plan with every symbolic dim = 1 */
    int symbolic = 0, unknown_rank = 0, planned = 0;
    char plan_error[1024] = "";
    frt_plan_stats ps;
    memset(&ps, 0, sizeof ps);
    for (size_t i = 0; i < in.n; i++) {
        const frt_tensor_info *info = &in.info[i];
        frt_tensor *t = &in.t[i];
        if (info->rank < 0) {
            unknown_rank = 1;
            continue;
        }
        t->dtype = info->dtype;
        t->rank = info->rank;
        for (int d = 0; d < info->rank; d++) {
            if (info->shape[d] < 0) symbolic = 1;
            t->shape[d] = info->shape[d] < 0 ? 1 : info->shape[d];
        }
        int64_t numel = frt_tensor_numel(t);
        size_t es = frt_dtype_size(t->dtype);
        if (numel < 0 || !es || (uint64_t)numel > ((uint64_t)1 << 36) / es) {
            unknown_rank = 1; /* cannot make a placeholder; skip the plan */
            continue;
        }
        t->nbytes = (size_t)numel * es;
        t->data = calloc(t->nbytes ? t->nbytes : 1, 1);
        if (!t->data) {
            free(outs_info);
            rc = fail("out of memory");
            goto done;
        }
    }
    if (frt_runtime_create(m, &rt) != FRT_OK) {
        snprintf(plan_error, sizeof plan_error, "%s", frt_last_error());
        rt = NULL;
    }
    ds.rt = rt;
    if (unknown_rank) {
        snprintf(plan_error, sizeof plan_error,
                 "an input has unknown rank, string type or huge shape");
        fprintf(out, "memory plan: not computed (%s)\n", plan_error);
    } else if (!rt || frt_runtime_reshape(rt, in.names, in.t, in.n) != FRT_OK ||
               frt_runtime_plan_stats(rt, &ps) != FRT_OK) {
        /* The model loaded; a planning failure (e.g. shapes that depend on input values) is
         * reported but is not fatal for info. */
        if (!plan_error[0]) snprintf(plan_error, sizeof plan_error, "%s", frt_last_error());
        fprintf(out, "memory plan: not computed: %s\n", plan_error);
    } else {
        planned = 1;
        fprintf(out, "memory plan%s, planner %s:\n", symbolic ? " (symbolic dims = 1)" : "",
                planner_name(c->planner));
        print_plan_stats(out, &ps);
    }
    if (c->json) {
        FILE *f = stdout;
        fputs("{\"model\": ", f);
        json_str(f, c->model);
        fputs(", \"loaded\": true, \"error\": null, \"producer\": ", f);
        json_str(f, st.producer ? st.producer : "");
        fprintf(f, ", \"opset\": %lld, \"load_ms\": %.3f, \"inputs\": [", (long long)st.opset, load_ms);
        for (size_t i = 0; i < in.n; i++) {
            if (i) fputs(", ", f);
            json_tensor_info(f, &in.info[i]);
        }
        fputs("], \"outputs\": [", f);
        for (size_t i = 0; i < n_out; i++) {
            if (i) fputs(", ", f);
            json_tensor_info(f, &outs_info[i]);
        }
        fputs("], \"op_types\": {", f);
        for (size_t k = 0; k < n_types; k++) {
            if (k) fputs(", ", f);
            json_str(f, ops[k].op);
            fprintf(f, ": %zu", ops[k].count);
        }
        fprintf(f, "}, \"unsupported\": [], \"graph\": {\"nodes\": %zu, \"steps\": %zu, "
                   "\"folded\": %zu, \"fused\": %zu}",
                st.num_nodes, st.num_steps, st.num_folded, st.num_fused);
        fprintf(f, ", \"parameters\": {\"elements\": %zu, \"bytes\": %zu, \"mapped_bytes\": %zu, "
                   "\"copied_bytes\": %zu, \"transformed_bytes\": %zu}",
                st.num_params, st.param_bytes, st.mapped_bytes, st.copied_bytes,
                st.transformed_bytes);
        fputs(", \"memory_plan\": ", f);
        if (planned)
            fprintf(f, "{\"planner\": \"%s\", \"symbolic_dims\": 1, \"arena_bytes\": %zu, "
                       "\"naive_bytes\": %zu, \"lower_bound_bytes\": %zu, \"managed\": %zu, "
                       "\"reused\": %zu, \"in_place\": %zu, \"concats_removed\": %zu, "
                       "\"views\": %zu}",
                    planner_name(c->planner), ps.arena_bytes, ps.naive_bytes,
                    ps.lower_bound_bytes, ps.num_managed, ps.num_reused, ps.num_inplace,
                    ps.num_concat_removed, ps.num_views);
        else {
            fputs("{\"error\": ", f);
            json_str(f, plan_error);
            fputs("}", f);
        }
        if (c->nodes) print_nodes_json(f, &ds);
        fputs("}\n", f);
    } else {
        if (c->nodes) print_nodes_text(&ds);
        if (planned && c->memory) rc = print_memory_table(c, &in);
    }
    free(outs_info);
done:
    free(ops);
    inputs_free(&in);
    frt_runtime_free(rt);
    frt_model_free(m);
    if (ds.own) frt_onnx_model_free(ds.own);
    free(ds.buf);
    cli_free(c);
    return rc;
}

/* `flatrt info --ops`: the registry, one line per op and opset range. */
static int cmd_ops(void) {
    size_t n = frt_num_ops();
    printf("%-28s %-26s %-9s %-16s %s\n", "op", "domain", "opsets", "family", "data-shape");
    for (size_t i = 0; i < n; i++) {
        frt_op_info o;
        if (frt_op_info_get(i, &o) != FRT_OK) return fail_frt("info --ops");
        char range[32];
        snprintf(range, sizeof range, "%d..%d", o.since_opset, o.max_opset);
        printf("%-28s %-26s %-9s %-16s %s\n", o.op_type, o.domain[0] ? o.domain : "ai.onnx",
               range, o.family, o.data_shape ? "*" : "");
    }
    printf("%zu entries\n", n);
    return 0;
}

