/* `flatrt info` (model description, --ops, --nodes, --json) and `flatrt plan` (memory plan SVG). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plan_svg.h"
#include "tensor_io.h"

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

static void json_tensor_info(FILE *f, const frt_tensor_info *ti) {
    fputs("{\"name\": ", f);
    json_str(f, ti->name);
    fputs(", \"dtype\": ", f);
    json_str(f, ti->dtype ? frt_dtype_name(ti->dtype) : NULL);
    fputs(", \"shape\": ", f);
    json_shape(f, ti->kind == FRT_KIND_TENSOR ? ti->rank : -1, ti->shape, ti->dim_names);
    fputc('}', f);
}

static void text_values(const frt_desc *d, size_t node, int is_output, size_t n) {
    printf("      %s", is_output ? "out:" : "in: ");
    for (size_t k = 0; k < n; k++) {
        frt_tensor_info ti;
        if (frt_desc_node_value(d, node, is_output, k, &ti) != FRT_OK) continue;
        const char *sep = k ? ", " : " ";
        if (!ti.name[0]) {
            printf("%s(none)", sep);
        } else if (ti.dtype || ti.rank >= 0) {
            char shp[512];
            shape_str(shp, sizeof shp, ti.rank, ti.shape, ti.dim_names);
            printf("%s%s %s %s", sep, ti.name, frt_dtype_name(ti.dtype), shp);
        } else {
            printf("%s%s ?", sep, ti.name);
        }
    }
    printf("\n");
}

/* info --nodes: every node of the model's graph. */
static void print_nodes_text(const frt_desc *d) {
    frt_desc_info di;
    frt_desc_get_info(d, &di);
    printf("nodes (%zu):\n", di.num_nodes);
    for (size_t i = 0; i < di.num_nodes; i++) {
        frt_desc_node n;
        if (frt_desc_node_get(d, i, &n) != FRT_OK) continue;
        printf("  [%zu] %s %s%s%s  kernel %s\n", i, n.name, n.domain, n.domain[0] ? "." : "",
               n.op_type, n.kernel ? n.kernel : "-");
        text_values(d, i, 0, n.num_inputs);
        text_values(d, i, 1, n.num_outputs);
        if (n.num_attrs) {
            printf("      attrs:");
            for (size_t a = 0; a < n.num_attrs; a++) {
                frt_desc_attr at;
                if (frt_desc_node_attr(d, i, a, &at) == FRT_OK) printf(" %s=%s", at.name, at.text);
            }
            printf("\n");
        }
    }
}

static void print_nodes_json(FILE *f, const frt_desc *d) {
    frt_desc_info di;
    frt_desc_get_info(d, &di);
    fputs(", \"nodes\": [", f);
    for (size_t i = 0; i < di.num_nodes; i++) {
        frt_desc_node n;
        if (frt_desc_node_get(d, i, &n) != FRT_OK) continue;
        fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
        json_str(f, n.name);
        fputs(", \"op\": ", f);
        json_str(f, n.op_type);
        fputs(", \"domain\": ", f);
        json_str(f, n.domain);
        fputs(", \"kernel\": ", f);
        json_str(f, n.kernel);
        for (int io = 0; io < 2; io++) {
            fputs(io ? "], \"outputs\": [" : ", \"inputs\": [", f);
            size_t cnt = io ? n.num_outputs : n.num_inputs;
            for (size_t k = 0; k < cnt; k++) {
                frt_tensor_info ti;
                if (frt_desc_node_value(d, i, io, k, &ti) != FRT_OK) continue;
                if (k) fputs(", ", f);
                json_tensor_info(f, &ti);
            }
        }
        fputs("], \"attributes\": {", f);
        for (size_t a = 0; a < n.num_attrs; a++) {
            frt_desc_attr at;
            if (frt_desc_node_attr(d, i, a, &at) != FRT_OK) continue;
            fputs(a ? ", " : "", f);
            json_str(f, at.name);
            fprintf(f, ": %s", at.json);
        }
        fputs("}}", f);
    }
    fputs("]", f);
}

/* Unsupported op types of the top-level graph, with their node counts. */
typedef struct unsup {
    const char *op, *domain;
    int64_t opset;
    size_t count;
    const char *first;
} unsup;

static size_t find_unsupported(const frt_desc *d, unsup *u, size_t cap) {
    frt_desc_info di;
    frt_desc_get_info(d, &di);
    size_t n = 0;
    for (size_t i = 0; i < di.num_nodes; i++) {
        frt_desc_node nd;
        if (frt_desc_node_get(d, i, &nd) != FRT_OK || nd.supported) continue;
        size_t k = 0;
        while (k < n && (strcmp(u[k].op, nd.op_type) || strcmp(u[k].domain, nd.domain))) k++;
        if (k == n) {
            if (n == cap) continue;
            u[n++] = (unsup){nd.op_type, nd.domain, nd.opset, 0, nd.name};
        }
        u[k].count++;
    }
    return n;
}

/* info for a model the runtime could not load: what the decoder reads. */
static int info_decoded(const cli *c, const frt_desc *d, const char *load_error) {
    frt_desc_info di;
    frt_desc_get_info(d, &di);
    unsup u[256];
    size_t nu = find_unsupported(d, u, 256);
    op_count ops[512];
    size_t n_ops = 0;
    for (size_t i = 0; i < di.num_nodes; i++) {
        frt_desc_node nd;
        if (frt_desc_node_get(d, i, &nd) != FRT_OK) continue;
        size_t k = 0;
        while (k < n_ops && strcmp(ops[k].op, nd.op_type)) k++;
        if (k == n_ops) {
            if (n_ops == 512) continue;
            ops[n_ops++] = (op_count){nd.op_type, 0};
        }
        ops[k].count++;
    }
    qsort(ops, n_ops, sizeof *ops, cmp_op_count);
    if (c->json) {
        FILE *f = stdout;
        fputs("{\"model\": ", f);
        json_str(f, c->model);
        fputs(", \"loaded\": false, \"error\": ", f);
        json_str(f, load_error);
        fputs(", \"producer\": ", f);
        json_str(f, di.producer);
        fprintf(f, ", \"opset\": %lld, \"inputs\": [", (long long)di.opset);
        for (size_t i = 0; i < di.num_inputs; i++) {
            frt_tensor_info ti;
            if (frt_desc_input(d, i, &ti) != FRT_OK) continue;
            if (i) fputs(", ", f);
            json_tensor_info(f, &ti);
        }
        fputs("], \"outputs\": [", f);
        for (size_t i = 0; i < di.num_outputs; i++) {
            frt_tensor_info ti;
            if (frt_desc_output(d, i, &ti) != FRT_OK) continue;
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
        fprintf(f, "], \"graph\": {\"nodes\": %zu, \"initializers\": %zu}", di.num_nodes,
                di.num_initializers);
        if (c->nodes) print_nodes_json(f, d);
        fputs("}\n", f);
        return 0;
    }
    printf("model:     %s\n", c->model);
    printf("producer:  %s\n", di.producer[0] ? di.producer : "(unknown)");
    printf("opset:     %lld\n", (long long)di.opset);
    printf("not compiled: %s\n", load_error);
    printf("inputs (%zu):\n", di.num_inputs);
    for (size_t i = 0; i < di.num_inputs; i++) {
        frt_tensor_info ti;
        if (frt_desc_input(d, i, &ti) == FRT_OK) print_info_tensor(&ti);
    }
    printf("outputs (%zu):\n", di.num_outputs);
    for (size_t i = 0; i < di.num_outputs; i++) {
        frt_tensor_info ti;
        if (frt_desc_output(d, i, &ti) == FRT_OK) print_info_tensor(&ti);
    }
    printf("op types (%zu):\n", n_ops);
    for (size_t k = 0; k < n_ops; k++) printf("  %-24s %zu\n", ops[k].op, ops[k].count);
    printf("unsupported operators (%zu):\n", nu);
    for (size_t k = 0; k < nu; k++)
        printf("  %-24s %s, opset %lld, %zu node%s, e.g. %s\n", u[k].op,
               u[k].domain[0] ? u[k].domain : "ai.onnx", (long long)u[k].opset, u[k].count,
               u[k].count == 1 ? "" : "s", u[k].first);
    printf("graph:     %zu nodes, %zu initializers\n", di.num_nodes, di.num_initializers);
    if (c->nodes) print_nodes_text(d);
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
    frt_desc *ds = NULL;
    inputs in = {0};
    op_count *ops = NULL;
    double load_ms;
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    FILE *out = c->json ? stderr : stdout; /* text lines; JSON goes to stdout at the end */
    if (load_model(c, &m, &load_ms) != FRT_OK) {
        /* not loadable: describe what the decoder reads, if it can */
        char load_error[2048];
        snprintf(load_error, sizeof load_error, "%s", frt_last_error());
        if (frt_desc_create(c->model, NULL, &ds) != FRT_OK) {
            rc = fail("%s", load_error);
            goto done;
        }
        warn("%s cannot be compiled: %s", c->model, load_error);
        rc = info_decoded(c, ds, load_error);
        goto done;
    }
    if (c->nodes && frt_desc_create(NULL, m, &ds) != FRT_OK) {
        rc = fail_frt("describing the model");
        goto done;
    }
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
        if (c->nodes) print_nodes_json(f, ds);
        fputs("}\n", f);
    } else {
        if (c->nodes) print_nodes_text(ds);
        if (planned && c->memory) rc = print_memory_table(c, &in);
    }
    free(outs_info);
done:
    free(ops);
    inputs_free(&in);
    frt_desc_free(ds); /* before the model it describes */
    frt_runtime_free(rt);
    frt_model_free(m);
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

