/* `flatrt info` (model description, --ops, --nodes, --json) and `flatrt plan` (memory plan SVG). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plan_svg.h"

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
    FILE *f = fopen(c->svg, "w");
    if (!f) {
        rc = fail("cannot write '%s': %s", c->svg, strerror(errno));
        goto done;
    }
    char title[512];
    snprintf(title, sizeof title, "%s: memory plan (%s planner)", c->model, planner_name(c->planner));
    int wr = plan_svg_write(f, rt, title);
    if (fclose(f) != 0 || wr != 0) {
        rc = fail("error writing '%s'", c->svg);
        goto done;
    }
    frt_plan_stats ps;
    frt_runtime_plan_stats(rt, &ps);
    printf("wrote %s: %zu tensors, slab %zu bytes, lower bound %zu bytes\n", c->svg,
           frt_runtime_plan_size(rt), ps.arena_bytes, ps.lower_bound_bytes);
done:
    inputs_free(&in);
    frt_runtime_free(rt);
    frt_model_free(m);
    cli_free(c);
    return rc;
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
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    inputs in = {0};
    op_count *ops = NULL;
    double load_ms;
    if (load_model(c, &m, &load_ms) != FRT_OK) {
        rc = fail_frt(NULL);
        goto done;
    }
    frt_model_stats st;
    memset(&st, 0, sizeof st);
    frt_model_get_stats(m, &st);
    printf("model:     %s\n", c->model);
    printf("producer:  %s\n", st.producer && st.producer[0] ? st.producer : "(unknown)");
    printf("opset:     %lld\n", (long long)st.opset);
    printf("load time: %.3f ms\n", load_ms);
    if ((rc = inputs_init(m, &in))) goto done;
    printf("inputs (%zu):\n", in.n);
    for (size_t i = 0; i < in.n; i++) print_info_tensor(&in.info[i]);
    size_t n_out = frt_model_num_outputs(m);
    printf("outputs (%zu):\n", n_out);
    for (size_t i = 0; i < n_out; i++) {
        frt_tensor_info info;
        if (frt_model_output(m, i, &info) != FRT_OK) {
            rc = fail_frt("reading model outputs");
            goto done;
        }
        print_info_tensor(&info);
    }
    size_t n_types = frt_model_num_op_types(m);
    ops = calloc(n_types ? n_types : 1, sizeof *ops);
    if (!ops) {
        rc = fail("out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_types; i++) {
        frt_model_op_type(m, i, &ops[i].op, &ops[i].count);
        if (!ops[i].op) ops[i].op = "?";
    }
    qsort(ops, n_types, sizeof *ops, cmp_op_count);
    printf("op types (%zu):\n", n_types);
    for (size_t i = 0; i < n_types; i++) printf("  %-24s %zu\n", ops[i].op, ops[i].count);
    printf("graph:     %zu nodes -> %zu steps (%zu folded at load, %zu fused)\n", st.num_nodes,
           st.num_steps, st.num_folded, st.num_fused);
    char pb[32], mb[32], cb[32], tb[32];
    bytes_str(pb, sizeof pb, (double)st.param_bytes);
    bytes_str(mb, sizeof mb, (double)st.mapped_bytes);
    bytes_str(cb, sizeof cb, (double)st.copied_bytes);
    bytes_str(tb, sizeof tb, (double)st.transformed_bytes);
    printf("parameters: %zu elements, %zu bytes (%s)\n", st.num_params, st.param_bytes, pb);
    printf("  mapped in place %zu bytes (%s), copied %zu bytes (%s), transformed %zu bytes (%s)\n",
           st.mapped_bytes, mb, st.copied_bytes, cb, st.transformed_bytes, tb);

    /* memory plan with every symbolic dim = 1 */
    int symbolic = 0, unknown_rank = 0;
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
            rc = fail("out of memory");
            goto done;
        }
    }
    if (unknown_rank) {
        printf("memory plan: not computed (an input has unknown rank, string type or huge shape)\n");
        goto done;
    }
    frt_plan_stats ps;
    if (frt_runtime_create(m, &rt) != FRT_OK ||
        frt_runtime_reshape(rt, in.names, in.t, in.n) != FRT_OK ||
        frt_runtime_plan_stats(rt, &ps) != FRT_OK) {
        /* The model loaded; a planning failure (e.g. shapes that depend on input values) is
         * reported but is not fatal for info. */
        printf("memory plan: not computed: %s\n", frt_last_error());
        goto done;
    }
    printf("memory plan%s, planner %s:\n", symbolic ? " (symbolic dims = 1)" : "",
           planner_name(c->planner));
    print_plan_stats(stdout, &ps);
    if (c->memory) rc = print_memory_table(c, &in);
done:
    free(ops);
    inputs_free(&in);
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

