/* A build with only Relu, Add and Identity (tests/selective.cmake): the registry holds those
 * three, every other op flatrt has is refused as left out by the selection, an unknown op as
 * unsupported, and the pad family, whose only references are through the op list, is not in the
 * executable. */
#include "compile/program.h"
#include "../unit/test_util.h"

/* Weak: resolves to NULL when pad.c's object was left out of the link. */
extern frt_status frt_op_pad_Pad_infer(frt_op_ctx *c) __attribute__((weak));
extern frt_status frt_op_activation_Relu_infer(frt_op_ctx *c) __attribute__((weak));

static int has(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

/* x -> op -> y over a [2,2] float input; returns the compile status. */
static frt_status compile_one(const char *op) {
    frt_arena arena;
    frt_arena_init(&arena);
    frt_graph g;
    memset(&g, 0, sizeof g);
    g.arena = &arena;
    int32_t x = frt_graph_add_value(&g, "x", FRT_VALUE_INPUT);
    int32_t y = frt_graph_add_value(&g, "y", FRT_VALUE_NODE);
    int64_t dims[2] = {2, 2};
    frt_op_set_shape(&g.values[x].v, FRT_FLOAT32, 2, dims);
    int32_t io[2] = {x, y};
    frt_node n = {.name = "n0", .op_type = op, .domain = "", .n_in = 1, .n_out = 1,
                  .in = &io[0], .out = &io[1], .opset = 13};
    g.nodes = &n;
    g.n_nodes = 1;
    g.values[y].producer = 0;
    g.values[y].is_output = true;
    int32_t ins[1] = {x}, outs[1] = {y};
    g.inputs = ins;
    g.n_inputs = 1;
    g.outputs = outs;
    g.n_outputs = 1;
    frt_options opt;
    frt_options_init(&opt);
    frt_program p;
    frt_compile_stats cs;
    frt_status st = frt_compile(&g, &opt, &arena, &p, &cs);
    if (!st) frt_program_release(&p);
    frt_arena_free(&arena);
    return st;
}

int main(void) {
    CHECK(frt_op_def_count() == 3);
    CHECK_OK(frt_op_table_check(frt_op_registry()));
    CHECK(frt_op_lookup("", "Relu", 13) && frt_op_lookup("", "Add", 13) &&
          frt_op_lookup("", "Identity", 13));
    CHECK(!frt_op_find("", "Conv") && !frt_op_find("", "Pad"));
    CHECK(!frt_op_find("flatrt", "FusedConv"));
    CHECK(frt_op_pad_Pad_infer == NULL);          /* pad family not linked */
    CHECK(frt_op_activation_Relu_infer != NULL);
    CHECK_OK(compile_one("Relu"));
    CHECK(compile_one("Sigmoid") == FRT_ERR_UNSUPPORTED);
    /* an op flatrt has but the selection left out is named as such; an unknown op as before */
    CHECK_MSG(has(frt_last_error(),
                  "op 'Sigmoid' (ai.onnx) not in this build's selection (the op list FRT_OPS)"),
              "%s", frt_last_error());
    CHECK(compile_one("NoSuchOp") == FRT_ERR_UNSUPPORTED);
    CHECK_MSG(has(frt_last_error(), "unsupported operators: NoSuchOp (1 node: n0)"), "%s",
              frt_last_error());
    printf("%d checks, %d failures\n", t_checks, t_failures);
    return t_failures != 0;
}
