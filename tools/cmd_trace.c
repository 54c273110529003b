/* `flatrt trace MODEL... -o FILE`: loads and runs each model with the library's selection
 * recorder on (frt_selection_record, flatrt.h) and writes what the loads and runs used as a
 * selection file (selection_file.c) for `cmake -DFRT_SELECT=FILE` (docs/selective.md). Inputs are
 * bound as in bench (cli.c bind_inputs: files, else random data from bench's generator and seed);
 * --input and --shape apply to every model that has an input or symbolic dim of that name, and
 * one that no model has is an error. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "selection_file.h"

#if defined(FRT_SELECTIVE) && FRT_SELECTIVE
/* A selective build records nothing (its hooks are compiled out). */
int cmd_trace(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return fail("trace: this is a selective build (cmake -DFRT_SELECT), which does not record "
                "traces; trace with a full build");
}
#else

/* Whether the model has an input or a symbolic dimension called name. */
static int model_has_name(const inputs *in, const char *name) {
    for (size_t i = 0; i < in->n; i++) {
        if (!strcmp(in->names[i], name)) return 1;
        const frt_tensor_info *t = &in->info[i];
        for (int d = 0; d < t->rank; d++)
            if (t->dim_names[d] && !strcmp(t->dim_names[d], name)) return 1;
    }
    return 0;
}

/* Keeps the entries of kv[0..*n) that the model has a name for, marking them in used[]. */
static void keep_known(const inputs *in, kv *list, int *n, int *used) {
    int k = 0;
    for (int i = 0; i < *n; i++) {
        if (!model_has_name(in, list[i].name)) continue;
        used[i] = 1;
        list[k++] = list[i];
    }
    *n = k;
}

/* One model: load, bind inputs, create a runtime, run c->runs times (frt_run_values, so models
 * with sequence or optional inputs run too, with those empty / absent). */
static int trace_model(const cli *c, const char *path, int *input_used, int *shape_used) {
    cli mc = *c; /* this model's view of the options: only the names it has */
    mc.model = path;
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    inputs in = {0};
    frt_io_value *vin = NULL, *outs = NULL;
    int rc = 0;
    if (load_model(&mc, &m, NULL)) return fail_frt(path);
    if (inputs_init(m, &in)) {
        rc = fail("out of memory");
        goto done;
    }
    keep_known(&in, mc.inputs, &mc.n_inputs, input_used);
    keep_known(&in, mc.shapes, &mc.n_shapes, shape_used);
    if ((rc = bind_inputs(&mc, &in, 1))) goto done;
    size_t no = frt_model_num_outputs(m);
    vin = calloc(in.n + 1, sizeof *vin);
    outs = calloc(no + 1, sizeof *outs);
    if (!vin || !outs) {
        rc = fail("out of memory");
        goto done;
    }
    for (size_t i = 0; i < in.n; i++) { /* a sequence / optional input: empty / absent */
        vin[i].kind = in.info[i].kind;
        vin[i].elem_kind = in.info[i].elem_kind;
        if (in.info[i].kind != FRT_KIND_TENSOR) continue;
        vin[i].n = 1;
        vin[i].tensors = &in.t[i];
    }
    if (frt_runtime_create(m, &rt)) {
        rc = fail_frt(path);
        goto done;
    }
    if (c->profile) frt_runtime_set_profiling(rt, 1);
    for (long k = 0; k < c->runs && !rc; k++) {
        if (frt_run_values(rt, in.names, vin, in.n, outs, no)) rc = fail_frt(path);
        for (size_t i = 0; i < no; i++) frt_io_value_release(&outs[i]);
    }
done:
    free(vin);
    free(outs);
    frt_runtime_free(rt);
    inputs_free(&in);
    frt_model_free(m);
    return rc;
}

int cmd_trace(int argc, char **argv) {
    cli c;
    int rc = cli_parse(cli_find_command(argv[0]), argc, argv, &c);
    if (rc) return rc < 0 ? 0 : rc;
    int input_used[MAX_KV] = {0}, shape_used[MAX_KV] = {0};
    sel_set r = {0};
    if (!c.output) {
        rc = usage_error("-o SELECTION.yaml is required");
        goto done;
    }
    if (!c.n_args && !c.n_merges) {
        rc = usage_error("nothing to trace: give MODEL... and/or --merge FILE");
        goto done;
    }
    for (int k = 0; k < c.n_inputs; k++)
        if (!c.inputs[k].name) {
            rc = usage_error("trace: --input needs NAME=FILE (the input's name), got '%s'",
                             c.inputs[k].value);
            goto done;
        }
    for (int i = 0; i < c.n_merges && !rc; i++) rc = sel_read(c.merges[i], &r);
    for (int i = 0; i < c.n_args && !rc; i++) {
        frt_selection_reset();
        frt_selection_record(1);
        rc = trace_model(&c, c.args[i], input_used, shape_used);
        frt_selection_record(0);
        if (!rc && frt_selection_dropped())
            rc = fail("trace of %s is incomplete: %zu facts could not be recorded (out of memory)",
                      c.args[i], frt_selection_dropped());
        for (size_t k = 0; k < frt_selection_count() && !rc; k++)
            rc = sel_add(&r, frt_selection_at(k));
        if (!rc) rc = sel_addf(&r, "model\t%s", c.args[i]);
        if (!rc) rc = sel_addf(&r, "feature\tplanner_%s", planner_name(c.planner));
        if (!rc && c.threads > 1) rc = sel_add(&r, "feature\tthread_pool");
        if (!rc && c.profile) rc = sel_add(&r, "feature\tprofiler");
        if (!rc) rc = sel_addf(&r, "isa\t%s", frt_isa_tier());
    }
    for (int k = 0; k < c.n_inputs && !rc && c.n_args; k++)
        if (!input_used[k])
            rc = fail("--input %s: no model has an input of that name", c.inputs[k].name);
    for (int k = 0; k < c.n_shapes && !rc && c.n_args; k++)
        if (!shape_used[k])
            rc = fail("--shape %s: no model has an input or symbolic dimension of that name",
                      c.shapes[k].name);
    if (!rc) rc = sel_write(c.output, &r);
    if (!rc) {
        size_t ops = 0;
        for (size_t i = 0; i < r.n; i++) ops += !strncmp(r.s[i], "op\t", 3);
        fprintf(stderr, "flatrt trace: wrote %s (%zu operator records)\n", c.output, ops);
    }
done:
    frt_selection_reset();
    sel_free(&r);
    cli_free(&c);
    return rc;
}
#endif
