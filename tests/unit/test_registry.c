/* Operator definitions: the registry built from src/ops/ops.def (order, lookup by domain and
 * opset, the unsupported-opset message, capability flags, iteration), and attributes resolved at
 * select: kernels of Concat, Gather, Transpose, Slice (opset 9), Shape (opset 15) and Pad
 * (opset 10, rank unknown at load) must compute the same result when the node has lost its
 * attributes by the time they run. */
#include <stdint.h>

#include "compile/program.h"
#include "op_harness.h"
#include "test_util.h"

static int has(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

/* ---- registry ---- */

static void test_table(void) {
    const frt_op_table *t = frt_op_registry();
    CHECK_OK(frt_op_table_check(t));
    CHECK(frt_op_def_count() == t->n);
    CHECK(frt_op_def_count() >= 32);
    CHECK(frt_op_def_at(frt_op_def_count()) == NULL);
    size_t internal = 0;
    for (size_t i = 0; i < frt_op_def_count(); i++) {
        const frt_op_def *d = frt_op_def_at(i);
        CHECK(d && d->infer && d->select && d->family && d->family[0]);
        CHECK_MSG(d->since >= 1 && d->max >= d->since && d->max <= FRT_OPSET_LATEST, "%s %d..%d",
                  d->op_type, d->since, d->max);
        internal += strcmp(d->domain, FRT_DOMAIN_INTERNAL) == 0;
        /* each entry is what a lookup in its range returns */
        CHECK(frt_op_lookup(d->domain, d->op_type, d->since) == d);
        CHECK(frt_op_lookup(d->domain, d->op_type, d->max) == d);
    }
    /* Attention, ChannelShuffle, ConvMean, EmbeddingBag, FusedConv, FusedMatMul, Silu */
    CHECK(internal == 7);
}

static void test_lookup(void) {
    const frt_op_def *relu = frt_op_lookup("", "Relu", 13);
    CHECK(relu && strcmp(relu->op_type, "Relu") == 0 && strcmp(relu->family, "activation") == 0);
    CHECK(frt_op_lookup("ai.onnx", "Relu", 13) == relu); /* the default domain's other name */
    CHECK(frt_op_lookup(NULL, "Relu", 13) == relu);
    CHECK(frt_op_find("", "Relu") == relu);
    CHECK(frt_op_lookup("", "Relu", FRT_OPSET_LATEST + 1) == NULL);
    CHECK(frt_op_lookup("", "Relu", 0) == NULL);
    CHECK(frt_op_lookup("", "NoSuchOp", 13) == NULL);
    CHECK(frt_op_lookup("com.microsoft", "Relu", 1) == NULL);
    /* internal ops only in their domain, public ops never there */
    CHECK(frt_op_lookup("", "FusedConv", 13) == NULL);
    CHECK(frt_op_lookup("ai.onnx", "FusedConv", 13) == NULL);
    CHECK(frt_op_lookup(FRT_DOMAIN_INTERNAL, "FusedConv", 13) != NULL);
    CHECK(frt_op_lookup(FRT_DOMAIN_INTERNAL, "Silu", 13) != NULL);
    CHECK(frt_op_lookup("", "Silu", 13) == NULL);
    CHECK(frt_op_lookup(FRT_DOMAIN_INTERNAL, "Conv", 13) == NULL);
    /* Concat-1..3 (optional axis) is not implemented: 4..LATEST is */
    CHECK(frt_op_lookup("", "Concat", 3) == NULL);
    CHECK(frt_op_lookup("", "Concat", 4) != NULL);
    char why[200];
    CHECK(!frt_op_table_find(frt_op_registry(), "", "Concat", 3, why, sizeof why));
    CHECK_MSG(has(why, "opset 3") && has(why, "4..21"), "%s", why);
    CHECK(!frt_op_table_find(frt_op_registry(), "", "Foo", 3, why, sizeof why));
    CHECK_MSG(has(why, "no operator Foo"), "%s", why);
}

static void test_flags(void) {
    CHECK(frt_op_find("", "Shape")->flags == FRT_OP_SHAPE_ONLY);
    CHECK(frt_op_find("", "Concat")->flags == FRT_OP_CONCAT_INPLACE);
    const char *views[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout",
                           "Cast"};
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
        CHECK_MSG(frt_op_find("", views[i])->flags & FRT_OP_MAY_ALIAS, "%s", views[i]);
    const char *inplace[] = {"Add", "Sub", "Mul", "Div", "Relu", "Clip", "Sigmoid", "Tanh",
                             "Softmax", "Neg", "BatchNormalization"};
    for (size_t i = 0; i < sizeof inplace / sizeof inplace[0]; i++)
        CHECK_MSG(frt_op_find("", inplace[i])->flags == FRT_OP_INPLACE, "%s", inplace[i]);
    CHECK(frt_op_find("", "Conv")->flags == 0);
    CHECK(frt_op_find("", "Gather")->flags == 0);
}

/* A provider-style table with two opset ranges of one op, and broken tables. */
static frt_status dummy_infer(frt_op_ctx *c) { return FRT_OK; }
static frt_status dummy_select(frt_op_ctx *c, frt_kernel *k) { return FRT_OK; }

static void test_own_table(void) {
    const frt_op_def defs[] = {
        {"", "Foo", 1, 10, 0, "t", dummy_infer, dummy_select},
        {"", "Foo", 11, 21, FRT_OP_INPLACE, "t", dummy_infer, dummy_select},
        {"", "Zap", 7, 21, 0, "t", dummy_infer, dummy_select},
        {"flatrt", "Bar", 1, 1, 0, "t", dummy_infer, dummy_select},
    };
    frt_op_table t = {defs, 4};
    CHECK_OK(frt_op_table_check(&t));
    CHECK(frt_op_table_find(&t, "", "Foo", 1, NULL, 0) == &defs[0]);
    CHECK(frt_op_table_find(&t, "", "Foo", 10, NULL, 0) == &defs[0]);
    CHECK(frt_op_table_find(&t, "ai.onnx", "Foo", 11, NULL, 0) == &defs[1]);
    CHECK(frt_op_table_find(&t, "", "Zap", 6, NULL, 0) == NULL);
    CHECK(frt_op_table_find(&t, "flatrt", "Bar", 1, NULL, 0) == &defs[3]);
    char why[200];
    CHECK(!frt_op_table_find(&t, "", "Foo", 22, why, sizeof why));
    CHECK_MSG(has(why, "opset 22") && has(why, "1..10, 11..21"), "%s", why);

    const frt_op_def overlap[] = {
        {"", "Foo", 1, 11, 0, "t", dummy_infer, dummy_select},
        {"", "Foo", 11, 21, 0, "t", dummy_infer, dummy_select},
    };
    frt_op_table to = {overlap, 2};
    CHECK(frt_op_table_check(&to) == FRT_ERR_INTERNAL);
    const frt_op_def unsorted[] = {
        {"", "Zap", 1, 21, 0, "t", dummy_infer, dummy_select},
        {"", "Foo", 1, 21, 0, "t", dummy_infer, dummy_select},
    };
    frt_op_table tu = {unsorted, 2};
    CHECK(frt_op_table_check(&tu) == FRT_ERR_INTERNAL);
    CHECK(has(frt_last_error(), "Zap") && has(frt_last_error(), "Foo"));
}

/* A node at an opset no definition covers: FRT_ERR_UNSUPPORTED naming op, domain and opset, from
 * frt_op_resolve and from compile (which lists it with the others). */
static void test_unsupported_opset(void) {
    frt_node n = {0};
    n.name = "cat0";
    n.op_type = "Concat";
    n.domain = "";
    n.opset = 3;
    const frt_op_def *d = (const frt_op_def *)&n; /* overwritten */
    CHECK(frt_op_resolve(&n, &d) == FRT_ERR_UNSUPPORTED && d == NULL);
    const char *e = frt_last_error();
    CHECK_MSG(has(e, "cat0") && has(e, "Concat") && has(e, "ai.onnx") && has(e, "opset 3") &&
              has(e, "4..21"), "%s", e);
    n.opset = 4;
    CHECK_OK(frt_op_resolve(&n, &d));
    CHECK(d == frt_op_lookup("", "Concat", 4));

    /* through compile: X -> Relu (opset 25) -> Y, plus an op flatrt does not have */
    frt_arena arena;
    frt_arena_init(&arena);
    frt_graph g;
    memset(&g, 0, sizeof g);
    g.arena = &arena;
    int32_t x = frt_graph_add_value(&g, "x", FRT_VALUE_INPUT);
    int32_t y = frt_graph_add_value(&g, "y", FRT_VALUE_NODE);
    int32_t z = frt_graph_add_value(&g, "z", FRT_VALUE_NODE);
    int64_t dims[2] = {2, 3};
    frt_op_set_shape(&g.values[x].v, FRT_FLOAT32, 2, dims);
    g.values[z].is_output = true;
    frt_node nodes[2];
    memset(nodes, 0, sizeof nodes);
    int32_t io[4] = {x, y, y, z};
    nodes[0] = (frt_node){.name = "r0", .op_type = "Relu", .domain = "", .n_in = 1, .n_out = 1,
                          .in = &io[0], .out = &io[1], .opset = 25};
    nodes[1] = (frt_node){.name = "w0", .op_type = "Whatever", .domain = "ai.onnx", .n_in = 1,
                          .n_out = 1, .in = &io[2], .out = &io[3], .opset = 25};
    g.nodes = nodes;
    g.n_nodes = 2;
    g.values[y].producer = 0;
    g.values[z].producer = 1;
    int32_t ins[1] = {x}, outs[1] = {z};
    g.inputs = ins;
    g.n_inputs = 1;
    g.outputs = outs;
    g.n_outputs = 1;
    frt_options opt;
    frt_options_init(&opt);
    frt_program p;
    frt_compile_stats cs;
    CHECK(frt_compile(&g, &opt, &arena, &p, &cs) == FRT_ERR_UNSUPPORTED);
    e = frt_last_error();
    CHECK_MSG(has(e, "unsupported operators:") && has(e, "Relu [domain ai.onnx, opset 25 not "
              "implemented (implemented: 1..21)] (1 node: r0)") && has(e, "Whatever (1 node: w0)"),
              "%s", e);
    frt_arena_free(&arena);
}

/* ---- attributes resolved at select ---- */

/* Runs one op like a model would: infer and select at load (non-constant inputs without data,
 * and without a rank when unknown_rank), infer at reshape, then the kernel on a node whose
 * attributes are gone (infer may read attributes; kernels may not). out gets malloc'ed data. */
static frt_status run_stripped(const char *op, int64_t opset, const frt_onnx_attr *attrs, size_t na,
                               frt_value *in, int n_in, unsigned const_mask, int unknown_rank,
                               frt_value *out) {
    const frt_op_def *def = frt_op_lookup("", op, opset);
    if (!def) return FRT_ERR_INTERNAL;
    int32_t in_ids[8], out_ids[1] = {n_in};
    frt_value load[8], *in_p[8], out_v, *out_p[1] = {&out_v};
    for (int i = 0; i < n_in; i++) {
        in_ids[i] = i;
        load[i] = in[i];
        if (!((const_mask >> i) & 1)) {
            load[i].data = NULL;
            if (unknown_rank) load[i].rank = -1, load[i].numel = -1;
        }
        in_p[i] = &load[i];
    }
    memset(&out_v, 0, sizeof out_v);
    frt_node node = {0};
    node.name = "n";
    node.op_type = op;
    node.domain = "";
    node.n_in = n_in;
    node.n_out = 1;
    node.in = in_ids;
    node.out = out_ids;
    node.attrs = attrs;
    node.n_attrs = na;
    node.opset = opset;
    frt_op_ctx c = {&node, opset, n_in, 1, in_p, out_p, NULL, FRT_ISA_PORTABLE};
    frt_status st = def->infer(&c);
    if (st) return st;
    frt_arena arena;
    frt_arena_init(&arena);
    c.arena = &arena;
    frt_kernel k = {0};
    st = def->select(&c, &k);
    if (st) goto done;
    frt_value vals[9];
    for (int i = 0; i < n_in; i++) {
        vals[i] = in[i];
        in_p[i] = &vals[i];
    }
    memset(&vals[n_in], 0, sizeof vals[0]);
    out_p[0] = &vals[n_in];
    c.arena = NULL;
    if ((st = def->infer(&c))) goto done;
    size_t nb = frt_value_nbytes(&vals[n_in]);
    vals[n_in].data = calloc(1, nb ? nb : 1);
    node.attrs = NULL; /* the kernel must not need them */
    node.n_attrs = 0;
    frt_step s = {0};
    s.k = k;
    s.in = in_ids;
    s.out = out_ids;
    s.n_in = n_in;
    s.n_out = 1;
    s.ir = &node;
    void *scratch = k.scratch ? calloc(1, k.scratch(&s, vals) + 64) : NULL;
    frt_exec x = {.values = vals, .scratch = scratch};
    st = k.fn(&s, &x);
    free(scratch);
    *out = vals[n_in];
    if (st) {
        free(out->data);
        out->data = NULL;
    }
done:
    if (k.destroy) k.destroy((void *)k.params);
    frt_arena_free(&arena);
    return st;
}

static void test_attr_params(void) {
    float a[6] = {1, 2, 3, 4, 5, 6}, b[4] = {7, 8, 9, 10};
    int64_t da[2] = {2, 3}, db[2] = {2, 2};
    frt_value out;

    /* Concat axis 1: [2,3] ++ [2,2] -> [2,5] */
    frt_value cin[2] = {frt_test_value(FRT_FLOAT32, 2, da, a), frt_test_value(FRT_FLOAT32, 2, db, b)};
    frt_onnx_attr ax1 = frt_test_attr_int("axis", 1);
    CHECK_OK(run_stripped("Concat", 13, &ax1, 1, cin, 2, 0, 0, &out));
    float cexp[10] = {1, 2, 3, 7, 8, 4, 5, 6, 9, 10};
    CHECK(out.data && out.rank == 2 && out.dims[1] == 5 && memcmp(out.data, cexp, sizeof cexp) == 0);
    free(out.data);
    frt_onnx_attr axm1 = frt_test_attr_int("axis", -1); /* negative, rank unknown at load */
    CHECK_OK(run_stripped("Concat", 13, &axm1, 1, cin, 2, 0, 1, &out));
    CHECK(out.data && memcmp(out.data, cexp, sizeof cexp) == 0);
    free(out.data);

    /* Gather axis 1 of [2,3] with indices [2,0] -> [2,2] */
    int64_t idx[2] = {2, 0}, di[1] = {2};
    frt_value gin[2] = {frt_test_value(FRT_FLOAT32, 2, da, a), frt_test_value(FRT_INT64, 1, di, idx)};
    CHECK_OK(run_stripped("Gather", 13, &ax1, 1, gin, 2, 0, 0, &out));
    float gexp[4] = {3, 1, 6, 4};
    CHECK(out.data && out.rank == 2 && memcmp(out.data, gexp, sizeof gexp) == 0);
    free(out.data);

    /* Transpose perm [0,2,1] of [1,2,3] (a reversal would give [3,2,1]) */
    int64_t d3[3] = {1, 2, 3}, perm[3] = {0, 2, 1};
    frt_value tin[1] = {frt_test_value(FRT_FLOAT32, 3, d3, a)};
    frt_onnx_attr pa = frt_test_attr_ints("perm", perm, 3);
    CHECK_OK(run_stripped("Transpose", 13, &pa, 1, tin, 1, 0, 1, &out));
    float texp[6] = {1, 4, 2, 5, 3, 6};
    CHECK(out.data && out.rank == 3 && out.dims[1] == 3 && memcmp(out.data, texp, sizeof texp) == 0);
    free(out.data);

    /* Slice opset 9 (attributes): rows 1.., columns 1..3 of [2,3] */
    int64_t st[2] = {1, 1}, en[2] = {2, 3}, axes[2] = {0, 1};
    frt_onnx_attr sa[3] = {frt_test_attr_ints("starts", st, 2), frt_test_attr_ints("ends", en, 2),
                           frt_test_attr_ints("axes", axes, 2)};
    frt_value sin[1] = {frt_test_value(FRT_FLOAT32, 2, da, a)};
    CHECK_OK(run_stripped("Slice", 9, sa, 3, sin, 1, 0, 0, &out));
    float sexp[2] = {5, 6};
    CHECK(out.data && out.numel == 2 && memcmp(out.data, sexp, sizeof sexp) == 0);
    free(out.data);

    /* Shape opset 15 start=1: dims [3] of a [2,3] */
    frt_onnx_attr s1 = frt_test_attr_int("start", 1);
    CHECK_OK(run_stripped("Shape", 15, &s1, 1, sin, 1, 0, 0, &out));
    CHECK(out.data && out.numel == 1 && ((int64_t *)out.data)[0] == 3);
    free(out.data);

    /* Pad opset 10 (pads attribute), data rank unknown at load: one column of 0 on the right */
    int64_t pads[4] = {0, 0, 0, 1};
    frt_onnx_attr pd = frt_test_attr_ints("pads", pads, 4);
    CHECK_OK(run_stripped("Pad", 10, &pd, 1, sin, 1, 0, 1, &out));
    float pexp[8] = {1, 2, 3, 0, 4, 5, 6, 0};
    CHECK(out.data && out.numel == 8 && memcmp(out.data, pexp, sizeof pexp) == 0);
    free(out.data);
}

int main(void) {
    test_table();
    test_lookup();
    test_flags();
    test_own_table();
    test_unsupported_opset();
    test_attr_params();
    printf("%d checks, %d failures\n", t_checks, t_failures);
    return t_failures != 0;
}
