/* Kernel providers: selection tries providers in order, a provider may decline a node (the next
 * one takes it), FRT_ERR_UNSUPPORTED only when every provider declines (the message says what each
 * one said), kernel flags are held to the op's contract, non-builtin kernel names carry the
 * provider's name, and destroy hooks run exactly once: when the program is released, when the
 * load fails after select, or when a kernel is rejected. Under ASan a missed destroy leaks. */
#include <stdint.h>

#include "compile/program.h"
#include "ops/onednn/onednn.h"
#include "test_util.h"

static int has(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

/* ---- the test provider ---- */

typedef struct test_state {
    int destroyed;       /* destroy hook calls */
    int selected;        /* kernels it supplied */
    uint32_t bad_flags;  /* flags to put on its Relu kernel (contract violations) */
    int fail_hard;       /* return FRT_ERR_SHAPE for Relu */
} test_state;

static test_state g_state; /* the destroy hook has only params; they point back here */

typedef struct relu_params {
    test_state *st;
    float *heap;         /* memory outside the model arena: freed by destroy */
} relu_params;

static void relu_destroy(void *params) {
    relu_params *p = params;
    p->st->destroyed++;
    free(p->heap);
    free(p);
}

static frt_status relu_kernel(const frt_step *s, frt_exec *x) {
    const relu_params *p = s->k.params;
    const frt_value *in = &x->values[s->in[0]];
    frt_value *out = &x->values[s->out[0]];
    const float *a = in->data;
    float *y = out->data;
    for (int64_t i = 0; i < in->numel; i++) y[i] = a[i] > 0 ? a[i] * p->heap[0] : 0.0f;
    return FRT_OK;
}

/* Takes Relu (with its own kernel), declines Neg with FRT_DECLINE and everything else with
 * FRT_ERR_UNSUPPORTED. */
static frt_status test_select(const frt_provider *pr, const frt_op_def *def, frt_op_ctx *c,
                              frt_kernel *k) {
    test_state *st = pr->ctx;
    if (strcmp(def->op_type, "Relu") == 0) {
        if (st->fail_hard) return frt_op_fail(c, FRT_ERR_SHAPE, "test provider: broken input");
        relu_params *p = malloc(sizeof *p);
        if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
        p->st = st;
        p->heap = malloc(sizeof(float));
        if (!p->heap) {
            free(p);
            return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
        }
        p->heap[0] = 1.0f;
        k->name = "relu_test";
        k->fn = relu_kernel;
        k->params = p;
        k->destroy = relu_destroy;
        k->flags = st->bad_flags;
        st->selected++;
        return FRT_OK;
    }
    if (strcmp(def->op_type, "Neg") == 0)
        return frt_op_fail(c, FRT_DECLINE, "Neg is left to others");
    return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "only Relu here");
}

static const frt_provider g_test = {"test", test_select, &g_state};

/* ---- a small graph: y = Concat(Relu(x), Neg(x), axis 1) [-> Dropout with a mask] ---- */

typedef struct net {
    frt_arena arena;
    frt_graph g;
    frt_node nodes[4];
    int32_t io[16];
    int32_t ins[1], outs[2];
    frt_onnx_attr axis;
} net;

static void net_build(net *t, int with_bad_dropout) {
    memset(t, 0, sizeof *t);
    frt_arena_init(&t->arena);
    frt_graph *g = &t->g;
    g->arena = &t->arena;
    int32_t x = frt_graph_add_value(g, "x", FRT_VALUE_INPUT);
    int32_t a = frt_graph_add_value(g, "a", FRT_VALUE_NODE);
    int32_t b = frt_graph_add_value(g, "b", FRT_VALUE_NODE);
    int32_t y = frt_graph_add_value(g, "y", FRT_VALUE_NODE);
    int64_t dims[2] = {2, 3};
    frt_op_set_shape(&g->values[x].v, FRT_FLOAT32, 2, dims);
    int32_t *io = t->io;
    io[0] = x, io[1] = a;            /* Relu */
    io[2] = x, io[3] = b;            /* Neg */
    io[4] = a, io[5] = b, io[6] = y; /* Concat */
    t->axis = (frt_onnx_attr){.name = "axis", .type = FRT_ATTR_INT, .i = 1};
    t->nodes[0] = (frt_node){.name = "relu0", .op_type = "Relu", .domain = "", .n_in = 1,
                             .n_out = 1, .in = &io[0], .out = &io[1], .opset = 13};
    t->nodes[1] = (frt_node){.name = "neg0", .op_type = "Neg", .domain = "", .n_in = 1,
                             .n_out = 1, .in = &io[2], .out = &io[3], .opset = 13};
    t->nodes[2] = (frt_node){.name = "cat0", .op_type = "Concat", .domain = "", .n_in = 2,
                             .n_out = 1, .in = &io[4], .out = &io[6], .attrs = &t->axis,
                             .n_attrs = 1, .opset = 13};
    g->nodes = t->nodes;
    g->n_nodes = 3;
    g->values[a].producer = 0;
    g->values[b].producer = 1;
    g->values[y].producer = 2;
    g->values[y].is_output = true;
    t->ins[0] = x;
    t->outs[0] = y;
    g->inputs = t->ins;
    g->n_inputs = 1;
    g->outputs = t->outs;
    g->n_outputs = 1;
    if (with_bad_dropout) { /* Dropout whose training_mode is a graph input: the builtin (inference
                               only) does not support it */
        int32_t z = frt_graph_add_value(g, "z", FRT_VALUE_NODE);
        int32_t m = frt_graph_add_value(g, "mask", FRT_VALUE_NODE);
        io[7] = y, io[8] = -1, io[9] = x, io[10] = z, io[11] = m;
        t->nodes[3] = (frt_node){.name = "drop0", .op_type = "Dropout", .domain = "", .n_in = 3,
                                 .n_out = 2, .in = &io[7], .out = &io[10], .opset = 13};
        g->n_nodes = 4;
        g->values[z].producer = 3;
        g->values[m].producer = 3;
        g->values[y].is_output = false;
        g->values[z].is_output = true;
        g->values[m].is_output = true;
        t->outs[0] = z;
        t->outs[1] = m;
        g->n_outputs = 2;
    }
}

static void net_free(net *t) {
    frt_graph_free_temps(&t->g);
    frt_arena_free(&t->arena);
}

static frt_status compile_with(net *t, const frt_provider *const *list, size_t n, frt_program *p) {
    frt_options opt;
    frt_options_init(&opt);
    frt_compile_stats cs;
    return frt_compile_with(&t->g, &opt, list, n, &t->arena, p, &cs);
}

/* Runs the program's compute steps over fresh buffers; returns y (6 x 2 floats, malloc'ed). */
static float *run_program(net *t, const frt_program *p, const float *x) {
    const frt_graph *g = &t->g;
    frt_value vals[8];
    for (size_t i = 0; i < g->n_values; i++) {
        vals[i] = g->values[i].v;
        size_t nb = frt_value_nbytes(&vals[i]);
        vals[i].data = calloc(1, nb ? nb : 1);
    }
    memcpy(vals[t->ins[0]].data, x, 6 * sizeof(float));
    for (size_t pos = 0; pos < p->n_compute; pos++) {
        const frt_step *s = &p->steps[p->compute[pos]];
        frt_exec ex = {.values = vals};
        CHECK(!s->k.scratch);
        CHECK_OK(s->k.fn(s, &ex));
    }
    float *y = vals[t->outs[0]].data;
    for (size_t i = 0; i < g->n_values; i++)
        if ((int32_t)i != t->outs[0]) free(vals[i].data);
    return y;
}

static const frt_step *step_of(const frt_program *p, const char *node) {
    for (size_t i = 0; i < p->n_steps; i++)
        if (strcmp(p->steps[i].ir->name, node) == 0) return &p->steps[i];
    return NULL;
}

/* The test provider takes Relu, declines Neg and Concat; the builtin takes those. */
static void test_decline_chain(void) {
    memset(&g_state, 0, sizeof g_state);
    net t;
    net_build(&t, 0);
    const frt_provider *list[] = {&g_test, &frt_provider_builtin};
    frt_program p;
    CHECK_OK(compile_with(&t, list, 2, &p));
    CHECK(g_state.selected == 1 && g_state.destroyed == 0);
    const frt_step *r = step_of(&p, "relu0"), *n = step_of(&p, "neg0"), *c = step_of(&p, "cat0");
    CHECK(r && n && c);
    if (r && n && c) {
        CHECK_MSG(strcmp(r->k.name, "test:relu_test") == 0, "%s", r->k.name);
        CHECK(r->k.fn == relu_kernel);
        CHECK(!has(n->k.name, ":") && !has(c->k.name, ":")); /* builtin names stay as they were */
        CHECK(c->k.flags & FRT_K_CONCAT);
    }
    /* the concat axis came from the kernel's params: the planner may place it in place */
    int concat_pos = -1;
    for (size_t pos = 0; pos < p.n_compute; pos++)
        if (&p.steps[p.compute[pos]] == c) concat_pos = (int)pos;
    CHECK(concat_pos >= 0 && p.concat_axis[concat_pos] == 1);
    float x[6] = {-1, 2, -3, 4, -5, 6};
    float *y = run_program(&t, &p, x);
    float expect[12] = {0, 2, 0, 1, -2, 3, 4, 0, 6, -4, 5, -6};
    CHECK(y && memcmp(y, expect, sizeof expect) == 0);
    free(y);
    frt_program_release(&p);
    CHECK(g_state.destroyed == 1);
    frt_program_release(&p); /* once only */
    CHECK(g_state.destroyed == 1);
    net_free(&t);

    /* builtin alone: no destroy hooks, nothing named after a provider */
    net_build(&t, 0);
    size_t nd;
    const frt_provider *const *dl = frt_default_providers(&nd);
    /* builtin last; the oneDNN provider first when built, unless FRT_DNNL=0 */
    CHECK(nd == (frt_onednn_enabled() ? 2u : 1u) && dl[nd - 1] == &frt_provider_builtin);
    CHECK(nd == 1 || strcmp(dl[0]->name, "onednn") == 0);
    setenv("FRT_DNNL", "0", 1);
    size_t nd0;
    CHECK(frt_default_providers(&nd0)[0] == &frt_provider_builtin && nd0 == 1);
    unsetenv("FRT_DNNL");
    CHECK_OK(compile_with(&t, dl, nd, &p));
    r = step_of(&p, "relu0");
    CHECK(r && r->k.fn != relu_kernel && !has(r->k.name, ":") && !r->k.destroy);
    frt_program_release(&p);
    net_free(&t);
}

/* Every provider declines the Dropout node: FRT_ERR_UNSUPPORTED listing each provider's word,
 * and the Relu kernel selected before it is destroyed. */
static void test_all_decline(void) {
    memset(&g_state, 0, sizeof g_state);
    net t;
    net_build(&t, 1);
    const frt_provider *list[] = {&g_test, &frt_provider_builtin};
    frt_program p;
    CHECK(compile_with(&t, list, 2, &p) == FRT_ERR_UNSUPPORTED);
    const char *e = frt_last_error();
    CHECK_MSG(has(e, "drop0") && has(e, "no provider accepts it") && has(e, "test: ") &&
              has(e, "only Relu here") && has(e, "builtin: ") && has(e, "training_mode"),
              "%s", e);
    CHECK(g_state.selected == 1 && g_state.destroyed == 1);
    net_free(&t);

    /* only the test provider: it declines Neg with FRT_DECLINE, which becomes UNSUPPORTED */
    memset(&g_state, 0, sizeof g_state);
    net_build(&t, 0);
    const frt_provider *only[] = {&g_test};
    CHECK(compile_with(&t, only, 1, &p) == FRT_ERR_UNSUPPORTED);
    e = frt_last_error();
    CHECK_MSG(has(e, "neg0") && has(e, "test: ") && has(e, "Neg is left to others"), "%s", e);
    CHECK(g_state.destroyed == g_state.selected && g_state.selected == 1);
    net_free(&t);
}

/* A provider error other than a decline fails the load at once; a kernel whose flags exceed the
 * op's capabilities is rejected (FRT_ERR_INTERNAL) and destroyed. */
static void test_errors(void) {
    memset(&g_state, 0, sizeof g_state);
    g_state.fail_hard = 1;
    net t;
    net_build(&t, 0);
    const frt_provider *list[] = {&g_test, &frt_provider_builtin};
    frt_program p;
    CHECK(compile_with(&t, list, 2, &p) == FRT_ERR_SHAPE);
    CHECK(has(frt_last_error(), "broken input"));
    net_free(&t);

    memset(&g_state, 0, sizeof g_state);
    g_state.bad_flags = FRT_K_CONCAT; /* Relu may not be skipped as a concat */
    net_build(&t, 0);
    CHECK(compile_with(&t, list, 2, &p) == FRT_ERR_INTERNAL);
    CHECK_MSG(has(frt_last_error(), "relu0") && has(frt_last_error(), "capabilities"), "%s",
              frt_last_error());
    CHECK(g_state.selected == 1 && g_state.destroyed == 1);
    net_free(&t);

    memset(&g_state, 0, sizeof g_state);
    g_state.bad_flags = FRT_K_INPLACE; /* allowed: Relu is in-place capable */
    net_build(&t, 0);
    CHECK_OK(compile_with(&t, list, 2, &p));
    frt_program_release(&p);
    CHECK(g_state.selected == 1 && g_state.destroyed == 1);
    net_free(&t);
}

int main(void) {
    test_decline_chain();
    test_all_decline();
    test_errors();
    printf("%d checks, %d failures\n", t_checks, t_failures);
    return t_failures != 0;
}
