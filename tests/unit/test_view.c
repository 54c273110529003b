/* Reshape Flatten Squeeze Unsqueeze Identity Dropout: shapes, view flags, error paths. */
#include <stdint.h>

#include "op_harness.h"
#include "test_util.h"

/* ---- helpers ---- */

static frt_status run(const char *op, int64_t opset, const frt_onnx_attr *attrs, size_t na,
                      frt_value *ins, int n_in, unsigned const_mask, int unknown, frt_value *out,
                      const char **kname) {
    frt_test_op t = {0};
    t.op_type = op;
    t.opset = opset;
    t.attrs = attrs;
    t.n_attrs = na;
    t.inputs = ins;
    t.n_in = n_in;
    t.const_mask = const_mask;
    t.unknown_dims = unknown;
    t.n_out = 1;
    return frt_test_run_op(&t, out, kname);
}

/* Node over values ins[0..n_in) -> out; node.out[i] = n_in + i, or -1 for outputs not in
 * out_present. */
typedef struct tnode {
    frt_node node;
    int32_t in_ids[8], out_ids[2];
    frt_value *in_p[8], *out_p[2];
} tnode;

static void tnode_init(tnode *t, const char *op, int64_t opset, const frt_onnx_attr *attrs,
                       size_t na, frt_value *ins, int n_in, frt_value *outs, int n_out,
                       unsigned out_present) {
    memset(t, 0, sizeof *t);
    for (int i = 0; i < n_in; i++) {
        t->in_ids[i] = ins[i].rank == -2 ? -1 : i;
        t->in_p[i] = ins[i].rank == -2 ? NULL : &ins[i];
    }
    for (int i = 0; i < n_out; i++) {
        bool present = (out_present >> i) & 1;
        t->out_ids[i] = present ? n_in + i : -1;
        memset(&outs[i], 0, sizeof outs[i]);
        t->out_p[i] = present ? &outs[i] : NULL;
    }
    t->node.name = "view_node";
    t->node.op_type = op;
    t->node.domain = "";
    t->node.n_in = n_in;
    t->node.n_out = n_out;
    t->node.in = t->in_ids;
    t->node.out = t->out_ids;
    t->node.attrs = attrs;
    t->node.n_attrs = na;
    t->node.opset = opset;
}

/* Load-time inference with the inputs exactly as given (dims may be -1, data NULL). */
static frt_status infer_only(const char *op, int64_t opset, const frt_onnx_attr *attrs, size_t na,
                             frt_value *ins, int n_in, frt_value *out) {
    const frt_op_def *def = frt_op_find("", op);
    if (!def) return FRT_ERR_INTERNAL;
    tnode t;
    tnode_init(&t, op, opset, attrs, na, ins, n_in, out, 1, 1);
    frt_op_ctx c = {&t.node, opset, n_in, 1, t.in_p, t.out_p, NULL, FRT_ISA_PORTABLE};
    return def->infer(&c);
}

/* infer + select; returns select's status and the kernel. */
static frt_status select_only(const char *op, int64_t opset, const frt_onnx_attr *attrs,
                              size_t na, frt_value *ins, int n_in, int n_out,
                              unsigned out_present, frt_kernel *k) {
    const frt_op_def *def = frt_op_find("", op);
    if (!def) return FRT_ERR_INTERNAL;
    tnode t;
    frt_value outs[2];
    tnode_init(&t, op, opset, attrs, na, ins, n_in, outs, n_out, out_present);
    frt_value dummy[2];
    for (int i = 0; i < n_out; i++)
        if (!t.out_p[i]) t.out_p[i] = &dummy[i];
    frt_op_ctx c = {&t.node, opset, n_in, n_out, t.in_p, t.out_p, NULL, FRT_ISA_PORTABLE};
    frt_status st = def->infer(&c);
    if (st) return st;
    for (int i = 0; i < n_out; i++)
        if (t.out_ids[i] < 0) t.out_p[i] = NULL;
    frt_arena arena;
    frt_arena_init(&arena);
    c.arena = &arena;
    memset(k, 0, sizeof *k);
    st = def->select(&c, k);
    frt_arena_free(&arena);
    return st;
}

static int shape_is(const frt_value *v, int rank, const int64_t *dims) {
    if (v->rank != rank) return 0;
    for (int i = 0; i < rank; i++)
        if (v->dims[i] != dims[i]) return 0;
    return 1;
}

static float g_data[4096];

/* Runs a view op and checks its output shape and that the bytes are the input's. */
static void expect_view(const char *op, int64_t opset, const frt_onnx_attr *attrs, size_t na,
                        frt_value *ins, int n_in, unsigned const_mask, int unknown, int rank,
                        const int64_t *dims) {
    frt_value out;
    const char *kn = NULL;
    frt_status st = run(op, opset, attrs, na, ins, n_in, const_mask, unknown, &out, &kn);
    CHECK_MSG(st == FRT_OK, "%s opset %lld: %s", op, (long long)opset, frt_last_error());
    if (st) return;
    CHECK_MSG(shape_is(&out, rank, dims), "%s: rank %d dims %lld,%lld", op, out.rank,
              (long long)out.dims[0], (long long)out.dims[1]);
    CHECK(out.dtype == ins[0].dtype);
    size_t nb = frt_value_nbytes(&out);
    CHECK(nb == frt_value_nbytes(&ins[0]));
    CHECK(out.data && memcmp(out.data, ins[0].data, nb) == 0);
    free(out.data);
    /* the kernel is a view */
    frt_kernel k;
    CHECK_OK(select_only(op, opset, attrs, na, ins, n_in, 1, 1, &k));
    CHECK(k.flags == FRT_K_VIEW && k.fn == NULL && k.name);
}

/* ---- Reshape ---- */

static void reshape_case(const int64_t *xd, int xr, const int64_t *spec, int n, int allowzero,
                         int64_t opset, const int64_t *exp, int er) {
    frt_value ins[2];
    int64_t nn = n;
    ins[0] = frt_test_value(FRT_FLOAT32, xr, xd, g_data);
    ins[1] = frt_test_value(FRT_INT64, 1, &nn, (void *)spec);
    frt_onnx_attr az = frt_test_attr_int("allowzero", allowzero);
    expect_view("Reshape", opset, &az, 1, ins, 2, 2, 0, er, exp);
    /* shape input not constant at load: output rank from its length, dims known at reshape */
    expect_view("Reshape", opset, &az, 1, ins, 2, 0, 1, er, exp);
}

static void test_reshape(void) {
    {
        int64_t x[3] = {2, 3, 4}, s[2] = {6, 4}, e[2] = {6, 4};
        reshape_case(x, 3, s, 2, 0, 13, e, 2);
    }
    {
        int64_t x[3] = {2, 3, 4}, s[3] = {0, -1, 2}, e[3] = {2, 6, 2};
        reshape_case(x, 3, s, 3, 0, 13, e, 3);
        reshape_case(x, 3, s, 3, 0, 5, e, 3);
    }
    {
        int64_t x[3] = {2, 3, 4}, s[3] = {-1, 0, 0}, e[3] = {2, 3, 4};
        reshape_case(x, 3, s, 3, 0, 14, e, 3);
    }
    {
        int64_t x[3] = {2, 3, 4}, s[1] = {-1}, e[1] = {24};
        reshape_case(x, 3, s, 1, 0, 13, e, 1);
    }
    {
        int64_t x[1] = {1}, e[1] = {0};
        reshape_case(x, 1, NULL, 0, 0, 13, e, 0); /* to a scalar */
        int64_t s[1] = {1}, e1[1] = {1};
        reshape_case(NULL, 0, s, 1, 0, 13, e1, 1);
    }
    {
        /* allowzero=1: 0 is a real zero dim */
        int64_t x[2] = {0, 3}, s[3] = {3, 0, 5}, e[3] = {3, 0, 5};
        reshape_case(x, 2, s, 3, 1, 14, e, 3);
        /* allowzero=0 on the same spec copies dim 1 (3): 45 != 0 elements */
        frt_value ins[2];
        int64_t three = 3;
        ins[0] = frt_test_value(FRT_FLOAT32, 2, x, g_data);
        ins[1] = frt_test_value(FRT_INT64, 1, &three, s);
        frt_value out;
        CHECK(run("Reshape", 14, NULL, 0, ins, 2, 2, 0, &out, NULL) == FRT_ERR_SHAPE);
        /* before opset 14 allowzero does not exist: copying applies */
        int64_t x2[3] = {4, 0, 5}, s2[3] = {3, 0, 0}, e2[3] = {3, 0, 0}, e13[3] = {3, 0, 5};
        frt_onnx_attr az = frt_test_attr_int("allowzero", 1);
        ins[0] = frt_test_value(FRT_FLOAT32, 3, x2, g_data);
        ins[1] = frt_test_value(FRT_INT64, 1, &three, s2);
        expect_view("Reshape", 13, &az, 1, ins, 2, 2, 0, 3, e13);
        expect_view("Reshape", 14, &az, 1, ins, 2, 2, 0, 3, e2);
    }
    /* opset < 5: shape attribute */
    {
        int64_t x[2] = {6, 5}, s[3] = {3, -1, 5}, e[3] = {3, 2, 5};
        frt_value in = frt_test_value(FRT_FLOAT32, 2, x, g_data);
        frt_onnx_attr at = frt_test_attr_ints("shape", s, 3);
        expect_view("Reshape", 4, &at, 1, &in, 1, 0, 0, 3, e);
    }
    /* load-time inference with unknown dims */
    {
        int64_t x[3] = {-1, 3, 4}, s[2] = {0, -1}, two = 2;
        frt_value ins[2] = {frt_test_value(FRT_FLOAT32, 3, x, NULL),
                            frt_test_value(FRT_INT64, 1, &two, s)};
        frt_value out;
        CHECK_OK(infer_only("Reshape", 13, NULL, 0, ins, 2, &out));
        int64_t e[2] = {-1, 12};
        CHECK(shape_is(&out, 2, e));
        int64_t s2[2] = {-1, 6};
        ins[1].data = s2;
        CHECK_OK(infer_only("Reshape", 13, NULL, 0, ins, 2, &out));
        int64_t e2[2] = {-1, 6};
        CHECK(shape_is(&out, 2, e2));
        int64_t s3[2] = {-1, 5}; /* 12 * ? may be divisible by 5 at run time: not an error yet */
        ins[1].data = s3;
        CHECK_OK(infer_only("Reshape", 13, NULL, 0, ins, 2, &out));
        int64_t e3[2] = {-1, 5};
        CHECK(shape_is(&out, 2, e3));
        ins[1].data = NULL; /* shape not known: rank from its length */
        CHECK_OK(infer_only("Reshape", 13, NULL, 0, ins, 2, &out));
        int64_t e4[2] = {-1, -1};
        CHECK(shape_is(&out, 2, e4));
        ins[1].dims[0] = -1;
        CHECK_OK(infer_only("Reshape", 13, NULL, 0, ins, 2, &out));
        CHECK(out.rank == -1);
        ins[0].rank = -1; /* unknown input rank, known spec */
        ins[1] = frt_test_value(FRT_INT64, 1, &two, s);
        CHECK_OK(infer_only("Reshape", 13, NULL, 0, ins, 2, &out));
        CHECK(shape_is(&out, 2, e4));
        int64_t s5[2] = {7, 2};
        ins[1].data = s5;
        CHECK_OK(infer_only("Reshape", 13, NULL, 0, ins, 2, &out));
        CHECK(shape_is(&out, 2, s5));
    }
    /* errors */
    {
        int64_t x[2] = {2, 3}, two = 2, three = 3;
        frt_value ins[2] = {frt_test_value(FRT_FLOAT32, 2, x, g_data), {0}};
        frt_value out;
        int64_t s[2] = {4, 2};
        ins[1] = frt_test_value(FRT_INT64, 1, &two, s);
        CHECK(run("Reshape", 13, NULL, 0, ins, 2, 2, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("test_node") && err_has("Reshape") && err_has("[2,3]") && err_has("[4,2]"));
        /* mismatch found only at reshape time (shape not constant at load) */
        CHECK(run("Reshape", 13, NULL, 0, ins, 2, 0, 1, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("test_node") && err_has("[2,3]") && err_has("[4,2]"));
        int64_t s1[2] = {-1, 4};
        ins[1].data = s1;
        CHECK(run("Reshape", 13, NULL, 0, ins, 2, 2, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("[-1,4]"));
        int64_t s2[2] = {-1, -1};
        ins[1].data = s2;
        CHECK(run("Reshape", 13, NULL, 0, ins, 2, 2, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("more than one -1"));
        int64_t s3[3] = {0, 0, 0};
        ins[1] = frt_test_value(FRT_INT64, 1, &three, s3);
        CHECK(run("Reshape", 13, NULL, 0, ins, 2, 2, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("rank"));
        int64_t s4[2] = {-2, 3};
        ins[1] = frt_test_value(FRT_INT64, 1, &two, s4);
        CHECK(run("Reshape", 13, NULL, 0, ins, 2, 2, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("-2"));
        int64_t s5[2] = {0, -1};
        frt_onnx_attr az = frt_test_attr_int("allowzero", 1);
        ins[1].data = s5;
        CHECK(run("Reshape", 14, &az, 1, ins, 2, 2, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("allowzero"));
        int64_t xz[2] = {0, 3};
        ins[0] = frt_test_value(FRT_FLOAT32, 2, xz, g_data);
        CHECK(run("Reshape", 14, NULL, 0, ins, 2, 2, 0, &out, NULL) == FRT_ERR_SHAPE);
        CHECK(err_has("cannot infer"));
        int32_t s32[2] = {3, 2};
        ins[0] = frt_test_value(FRT_FLOAT32, 2, x, g_data);
        ins[1] = frt_test_value(FRT_INT32, 1, &two, s32);
        CHECK(run("Reshape", 13, NULL, 0, ins, 2, 2, 0, &out, NULL) == FRT_ERR_UNSUPPORTED);
        CHECK(run("Reshape", 13, NULL, 0, ins, 1, 0, 0, &out, NULL) == FRT_ERR_MALFORMED);
        CHECK(run("Reshape", 4, NULL, 0, ins, 1, 0, 0, &out, NULL) == FRT_ERR_MALFORMED);
        CHECK(err_has("shape"));
    }
}

/* ---- Flatten ---- */

static void test_flatten(void) {
    int64_t x[4] = {2, 3, 4, 5};
    frt_value in = frt_test_value(FRT_FLOAT32, 4, x, g_data);
    struct {
        int64_t axis;
        int64_t d0, d1;
    } cs[] = {{0, 1, 120}, {1, 2, 60}, {2, 6, 20}, {3, 24, 5}, {4, 120, 1},
              {-1, 24, 5}, {-4, 1, 120}, {-3, 2, 60}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        frt_onnx_attr at = frt_test_attr_int("axis", cs[i].axis);
        int64_t e[2] = {cs[i].d0, cs[i].d1};
        expect_view("Flatten", 13, &at, 1, &in, 1, 0, 0, 2, e);
        expect_view("Flatten", 9, &at, 1, &in, 1, 0, 1, 2, e);
    }
    int64_t e[2] = {2, 60};
    expect_view("Flatten", 11, NULL, 0, &in, 1, 0, 0, 2, e); /* default axis 1 */
    frt_value sc = frt_test_value(FRT_FLOAT32, 0, NULL, g_data);
    int64_t e0[2] = {1, 1};
    frt_onnx_attr a0 = frt_test_attr_int("axis", 0);
    expect_view("Flatten", 13, &a0, 1, &sc, 1, 0, 0, 2, e0);
    /* load-time: [?,1,1] axis 1 -> [?,1]; [2,?,3] axis 1 -> [2,?] */
    int64_t u[3] = {-1, 1, 1};
    frt_value ui = frt_test_value(FRT_FLOAT32, 3, u, NULL), out;
    CHECK_OK(infer_only("Flatten", 13, NULL, 0, &ui, 1, &out));
    int64_t eu[2] = {-1, 1};
    CHECK(shape_is(&out, 2, eu));
    int64_t u2[3] = {2, -1, 3};
    ui = frt_test_value(FRT_FLOAT32, 3, u2, NULL);
    CHECK_OK(infer_only("Flatten", 13, NULL, 0, &ui, 1, &out));
    int64_t eu2[2] = {2, -1};
    CHECK(shape_is(&out, 2, eu2));
    ui.rank = -1;
    CHECK_OK(infer_only("Flatten", 13, NULL, 0, &ui, 1, &out));
    int64_t eu3[2] = {-1, -1};
    CHECK(shape_is(&out, 2, eu3));
    /* errors */
    frt_onnx_attr bad = frt_test_attr_int("axis", 5);
    CHECK(run("Flatten", 13, &bad, 1, &in, 1, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
    CHECK(err_has("test_node") && err_has("axis 5"));
    bad = frt_test_attr_int("axis", -5);
    CHECK(run("Flatten", 13, &bad, 1, &in, 1, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
}

/* ---- Squeeze / Unsqueeze ---- */

static void test_squeeze(void) {
    int64_t x[5] = {1, 3, 1, 4, 1};
    frt_value in = frt_test_value(FRT_FLOAT32, 5, x, g_data);
    /* no axes: every 1 goes */
    int64_t e_all[2] = {3, 4};
    expect_view("Squeeze", 11, NULL, 0, &in, 1, 0, 0, 2, e_all);
    expect_view("Squeeze", 13, NULL, 0, &in, 1, 0, 0, 2, e_all);
    /* opset 11 attribute, negative axes */
    int64_t ax[2] = {0, -1};
    frt_onnx_attr at = frt_test_attr_ints("axes", ax, 2);
    int64_t e[3] = {3, 1, 4};
    expect_view("Squeeze", 11, &at, 1, &in, 1, 0, 0, 3, e);
    expect_view("Squeeze", 11, &at, 1, &in, 1, 0, 1, 3, e);
    /* opset 13 input, constant and computed at reshape */
    int64_t two = 2;
    frt_value ins[2] = {in, frt_test_value(FRT_INT64, 1, &two, ax)};
    expect_view("Squeeze", 13, NULL, 0, ins, 2, 2, 0, 3, e);
    expect_view("Squeeze", 13, NULL, 0, ins, 2, 0, 1, 3, e);
    /* squeeze everything to a scalar */
    int64_t one = 1;
    frt_value s1 = frt_test_value(FRT_FLOAT32, 1, &one, g_data);
    expect_view("Squeeze", 13, NULL, 0, &s1, 1, 0, 0, 0, NULL);
    /* load time */
    frt_value out;
    int64_t u[3] = {-1, 1, 5};
    frt_value ui[2] = {frt_test_value(FRT_FLOAT32, 3, u, NULL), frt_test_value(FRT_INT64, 1, &one, NULL)};
    int64_t a1 = 1;
    ui[1].data = &a1;
    CHECK_OK(infer_only("Squeeze", 13, NULL, 0, ui, 2, &out));
    int64_t eu[2] = {-1, 5};
    CHECK(shape_is(&out, 2, eu));
    ui[1].data = NULL; /* axes not known yet: rank only */
    CHECK_OK(infer_only("Squeeze", 13, NULL, 0, ui, 2, &out));
    int64_t eu2[2] = {-1, -1};
    CHECK(shape_is(&out, 2, eu2));
    CHECK_OK(infer_only("Squeeze", 13, NULL, 0, ui, 1, &out)); /* no axes, unknown dim */
    CHECK(out.rank == -1);
    int64_t a0 = 0;
    ui[1].data = &a0; /* an unknown dim may be squeezed (checked again at reshape) */
    CHECK_OK(infer_only("Squeeze", 13, NULL, 0, ui, 2, &out));
    int64_t eu3[2] = {1, 5};
    CHECK(shape_is(&out, 2, eu3));
    /* errors */
    int64_t bad = 1;
    frt_onnx_attr ab = frt_test_attr_ints("axes", &bad, 1);
    CHECK(run("Squeeze", 11, &ab, 1, &in, 1, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
    CHECK(err_has("test_node") && err_has("Squeeze") && err_has("size 3"));
    bad = 5;
    CHECK(run("Squeeze", 11, &ab, 1, &in, 1, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
    CHECK(err_has("out of range"));
    int64_t dup[2] = {0, -5};
    ab = frt_test_attr_ints("axes", dup, 2);
    CHECK(run("Squeeze", 11, &ab, 1, &in, 1, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
    CHECK(err_has("twice"));
    /* squeezing an unknown dim that turns out not to be 1 fails at reshape */
    int64_t xs[2] = {3, 4};
    frt_value bi[2] = {frt_test_value(FRT_FLOAT32, 2, xs, g_data),
                       frt_test_value(FRT_INT64, 1, &one, &a0)};
    CHECK(run("Squeeze", 13, NULL, 0, bi, 2, 2, 1, &out, NULL) == FRT_ERR_SHAPE);
    CHECK(err_has("size 3"));
}

static void test_unsqueeze(void) {
    int64_t x[2] = {3, 4};
    frt_value in = frt_test_value(FRT_FLOAT32, 2, x, g_data);
    struct {
        int n;
        int64_t axes[3];
        int64_t exp[5];
    } cs[] = {{1, {0}, {1, 3, 4}},          {1, {2}, {3, 4, 1}},
              {1, {-1}, {3, 4, 1}},         {2, {0, 3}, {1, 3, 4, 1}},
              {2, {-1, 1}, {3, 1, 4, 1}},   {3, {4, 0, 2}, {1, 3, 1, 4, 1}},
              {2, {1, 2}, {3, 1, 1, 4}}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        int r = 2 + cs[i].n;
        frt_onnx_attr at = frt_test_attr_ints("axes", cs[i].axes, (size_t)cs[i].n);
        expect_view("Unsqueeze", 11, &at, 1, &in, 1, 0, 0, r, cs[i].exp);
        expect_view("Unsqueeze", 9, &at, 1, &in, 1, 0, 1, r, cs[i].exp);
        int64_t n = cs[i].n;
        frt_value ins[2] = {in, frt_test_value(FRT_INT64, 1, &n, cs[i].axes)};
        expect_view("Unsqueeze", 13, NULL, 0, ins, 2, 2, 0, r, cs[i].exp);
        expect_view("Unsqueeze", 13, NULL, 0, ins, 2, 0, 1, r, cs[i].exp);
    }
    /* scalar -> [1] (shape subgraphs) */
    int64_t zero = 0, one = 1, v = 42;
    frt_value si[2] = {frt_test_value(FRT_INT64, 0, NULL, &v), frt_test_value(FRT_INT64, 1, &one, &zero)};
    frt_value out;
    CHECK_OK(run("Unsqueeze", 13, NULL, 0, si, 2, 2, 1, &out, NULL));
    CHECK(out.rank == 1 && out.dims[0] == 1 && out.data && *(int64_t *)out.data == 42);
    free(out.data);
    /* load time: unknown dims propagate; axes not known -> rank only */
    int64_t u[2] = {-1, 4};
    frt_value ui[2] = {frt_test_value(FRT_FLOAT32, 2, u, NULL), frt_test_value(FRT_INT64, 1, &one, &zero)};
    CHECK_OK(infer_only("Unsqueeze", 13, NULL, 0, ui, 2, &out));
    int64_t e[3] = {1, -1, 4};
    CHECK(shape_is(&out, 3, e));
    ui[1].data = NULL;
    CHECK_OK(infer_only("Unsqueeze", 13, NULL, 0, ui, 2, &out));
    int64_t e2[3] = {-1, -1, -1};
    CHECK(shape_is(&out, 3, e2));
    ui[0].rank = -1;
    CHECK_OK(infer_only("Unsqueeze", 13, NULL, 0, ui, 2, &out));
    CHECK(out.rank == -1);
    /* errors */
    int64_t bad[2] = {0, 0};
    frt_onnx_attr ab = frt_test_attr_ints("axes", bad, 2);
    CHECK(run("Unsqueeze", 11, &ab, 1, &in, 1, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
    CHECK(err_has("test_node") && err_has("twice"));
    bad[0] = 4;
    ab = frt_test_attr_ints("axes", bad, 1);
    CHECK(run("Unsqueeze", 11, &ab, 1, &in, 1, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
    CHECK(err_has("out of range"));
    bad[0] = -4;
    CHECK(run("Unsqueeze", 11, &ab, 1, &in, 1, 0, 0, &out, NULL) == FRT_ERR_SHAPE);
    CHECK(run("Unsqueeze", 11, NULL, 0, &in, 1, 0, 0, &out, NULL) == FRT_ERR_MALFORMED);
    CHECK(run("Unsqueeze", 13, NULL, 0, &in, 1, 0, 0, &out, NULL) == FRT_ERR_MALFORMED);
    int64_t big[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    ab = frt_test_attr_ints("axes", big, 7);
    CHECK(run("Unsqueeze", 11, &ab, 1, &in, 1, 0, 0, &out, NULL) == FRT_ERR_UNSUPPORTED);
    float fa[1] = {0};
    frt_value fi[2] = {in, frt_test_value(FRT_FLOAT32, 1, &one, fa)};
    CHECK(run("Unsqueeze", 13, NULL, 0, fi, 2, 2, 0, &out, NULL) == FRT_ERR_UNSUPPORTED);
}

/* ---- Identity / Dropout ---- */

static void test_identity_dropout(void) {
    int64_t x[3] = {2, 5, 7};
    frt_value in = frt_test_value(FRT_FLOAT32, 3, x, g_data);
    expect_view("Identity", 13, NULL, 0, &in, 1, 0, 0, 3, x);
    expect_view("Identity", 13, NULL, 0, &in, 1, 0, 1, 3, x);
    int64_t xi[1] = {3};
    int64_t iv[3] = {1, 2, 3};
    frt_value ii = frt_test_value(FRT_INT64, 1, xi, iv);
    expect_view("Identity", 16, NULL, 0, &ii, 1, 0, 0, 1, xi);

    /* opset 9..11: ratio attribute */
    frt_onnx_attr ratio = frt_test_attr_float("ratio", 0.3f);
    expect_view("Dropout", 10, &ratio, 1, &in, 1, 0, 0, 3, x);
    /* opset 12+: ratio and training_mode inputs, training_mode false */
    float r = 0.5f;
    uint8_t tm = 0;
    frt_value ins[3] = {in, frt_test_value(FRT_FLOAT32, 0, NULL, &r),
                        frt_test_value(FRT_BOOL, 0, NULL, &tm)};
    expect_view("Dropout", 13, NULL, 0, ins, 3, 6, 0, 3, x);
    expect_view("Dropout", 13, NULL, 0, ins, 2, 2, 0, 3, x);
    expect_view("Dropout", 12, NULL, 0, ins, 1, 0, 1, 3, x);
    /* training_mode not constant: refused (inference only; it would be ignored at run time) */
    frt_value out;
    CHECK(run("Dropout", 13, NULL, 0, ins, 3, 2, 0, &out, NULL) == FRT_ERR_UNSUPPORTED);
    CHECK(err_has("test_node") && err_has("training_mode is not a constant"));
    /* training_mode constant true -> unsupported */
    tm = 1;
    CHECK(run("Dropout", 13, NULL, 0, ins, 3, 6, 0, &out, NULL) == FRT_ERR_UNSUPPORTED);
    CHECK(err_has("test_node") && err_has("training_mode"));
    /* ... unless the ratio is a constant 0: nothing is dropped */
    float r0 = 0.0f;
    ins[1] = frt_test_value(FRT_FLOAT32, 0, NULL, &r0);
    expect_view("Dropout", 13, NULL, 0, ins, 3, 6, 0, 3, x);
    ins[1] = frt_test_value(FRT_FLOAT32, 0, NULL, &r);
    tm = 0;
    /* mask output present: a copy and an all-true mask; absent second output: a view */
    frt_kernel k;
    CHECK_OK(select_only("Dropout", 13, NULL, 0, ins, 1, 2, 3, &k));
    CHECK(k.fn && !(k.flags & FRT_K_VIEW) && !strcmp(k.name, "dropout_mask"));
    for (int opset = 10; opset <= 13; opset += 3) {
        frt_test_op t = {.op_type = "Dropout", .opset = opset, .attrs = opset < 12 ? &ratio : NULL,
                         .n_attrs = opset < 12, .inputs = ins, .n_in = 1, .n_out = 2};
        frt_value o2[2];
        CHECK_OK(frt_test_run_op(&t, o2, NULL));
        CHECK(o2[0].numel == 70 && memcmp(o2[0].data, g_data, 70 * sizeof(float)) == 0);
        CHECK(o2[1].dtype == FRT_BOOL && o2[1].numel == 70);
        for (int i = 0; i < 70; i++) CHECK(((uint8_t *)o2[1].data)[i] == 1);
        free(o2[0].data);
        free(o2[1].data);
    }
    CHECK_OK(select_only("Dropout", 13, NULL, 0, ins, 1, 2, 1, &k));
    CHECK(k.flags == FRT_K_VIEW && !k.fn);
    /* mask shape is inferred (bool, same shape) */
    {
        const frt_op_def *def = frt_op_find("", "Dropout");
        tnode t;
        frt_value outs[2];
        tnode_init(&t, "Dropout", 13, NULL, 0, ins, 1, outs, 2, 3);
        frt_op_ctx c = {&t.node, 13, 1, 2, t.in_p, t.out_p, NULL, FRT_ISA_PORTABLE};
        CHECK_OK(def->infer(&c));
        CHECK(shape_is(&outs[0], 3, x) && shape_is(&outs[1], 3, x) && outs[1].dtype == FRT_BOOL);
    }
    /* too many inputs before opset 12 */
    CHECK(run("Dropout", 11, NULL, 0, ins, 2, 2, 0, &out, NULL) == FRT_ERR_MALFORMED);
}

int main(void) {
    for (int i = 0; i < 4096; i++) g_data[i] = (float)i * 0.5f - 7.0f;
    test_reshape();
    test_flatten();
    test_squeeze();
    test_unsqueeze();
    test_identity_dropout();
    TEST_MAIN_END();
}
