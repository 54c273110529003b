/* Loop-invariant code motion (src/passes/hoist.c) on models built in memory:
 *   - a Loop body computing u = Tanh(Count(x) * w) + 0.5 from outer values (x a graph input, w an
 *     initializer, 0.5 a Constant node of the body) and, inside a nested Loop, Neg(x): all of it
 *     moves to the model's graph (out of both loops); the body keeps the variant nodes, a random
 *     node and its Constant node. test::Count copies its input and counts its executions: once
 *     per run when moved, once per iteration without the pass (constant folding off);
 *   - a Scan body whose Tanh(x) of an outer value moves out;
 *   - results equal a naive reference with and without the pass, for several trip counts
 *     (zero included: the moved nodes then still run once);
 *   - a body gets the top graph's folding, fusion (Gemm + Relu) and shape-specialized kernels. */
#include <stdatomic.h>

#include "runtime/model.h"
#include "onnx_build.h"
#include "test_util.h"

enum { F32 = 1, I64 = 7, BOOL_ = 9 };

/* ---- test::Count(X) -> copy of X, counting executions ---- */

static atomic_long count_runs;

static frt_status count_infer(frt_op_ctx *c) {
    frt_op_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
    return FRT_OK;
}
static frt_status count_run(const frt_step *s, frt_exec *x) {
    atomic_fetch_add(&count_runs, 1);
    const frt_value *a = &x->values[s->in[0]];
    frt_value *y = &x->values[s->out[0]];
    if (frt_value_nbytes(a)) memcpy(y->data, a->data, frt_value_nbytes(a));
    return FRT_OK;
}
static frt_status count_select(frt_op_ctx *c, frt_kernel *k) {
    (void)c;
    k->name = "count";
    k->fn = count_run;
    return FRT_OK;
}
static const frt_op_def count_op = {.domain = "test", .op_type = "Count", .since = 1,
                                    .max = FRT_OPSET_LATEST, .flags = 0, .family = "test",
                                    .infer = count_infer, .select = count_select};
static const frt_op_def *find(void *user, const char *domain, const char *op) {
    (void)user;
    return strcmp(domain, "test") == 0 && strcmp(op, "Count") == 0 ? &count_op : NULL;
}
static const frt_op_source src = {find, NULL};

/* ---- model building ---- */

static void add(ob_buf *g, ob_buf n) { ob_msg(g, OB_NODE, &n); }
static ob_buf node(const char *op, const char *name, const char *const *ins,
                   const char *const *outs) {
    return ob_node(op, NULL, name, ins, outs);
}
static void vin(ob_buf *g, const char *name, int elem, int rank, const int64_t *dims) {
    ob_buf v = ob_vinfo(name, elem, rank, dims);
    ob_msg(g, OB_INPUT, &v);
}
static void vout(ob_buf *g, const char *name, int elem, int rank, const int64_t *dims) {
    ob_buf v = ob_vinfo(name, elem, rank, dims);
    ob_msg(g, OB_OUTPUT, &v);
}
/* Constant node `out`: one float32. */
static void constant_f32(ob_buf *g, const char *out, float v) {
    ob_buf t = ob_tensor_f32("", NULL, 0, &v), a = {0};
    ob_str(&a, 1, "value");
    ob_msg(&a, 5, &t);
    ob_int(&a, 20, 4);
    ob_buf c = node("Constant", out, NULL, (const char *[]){out, NULL});
    ob_msg(&c, 5, &a);
    add(g, c);
}
static ob_buf model(ob_buf *g) {
    ob_buf m = {0}, o = {0}, t = {0};
    ob_int(&m, 1, 8);
    ob_int(&o, 2, 13);
    ob_msg(&m, 8, &o);
    ob_str(&t, 1, "test");
    ob_int(&t, 2, 1);
    ob_msg(&m, 8, &t);
    ob_str(g, 2, "g");
    ob_msg(&m, 7, g);
    return m;
}

static const float W[6] = {0.5f, -1, 2, 0.25f, 1.5f, -0.75f};

/* Loop(M, , x): body (i, c, h) ->
 *   k = test::Count(x); a = k * w; t = Tanh(a); u = t + half        (invariant)
 *   hh = Loop(2, , h) with body (j, c2, gg) -> (c2, gg + Neg(x))     (Neg(x) invariant twice)
 *   h2 = hh + u; s = h2 * half; r = RandomUniformLike(h)             (variant / random)
 *   -> (c, h2, s, u, r) */
static ob_buf loop_model(void) {
    ob_buf g = {0}, b = {0}, ib = {0};
    int64_t xd[2] = {2, 3};
    vin(&g, "x", F32, 2, xd);
    vin(&g, "M", I64, 0, NULL);
    ob_buf wt = ob_tensor_f32("w", xd, 2, W);
    ob_msg(&g, OB_INIT, &wt);
    int64_t two = 2;
    ob_buf tt = {0};
    ob_int(&tt, 2, I64);
    ob_str(&tt, 8, "two");
    ob_bytes(&tt, 9, &two, 8);
    ob_msg(&g, OB_INIT, &tt);

    vin(&ib, "j", I64, 0, NULL);
    vin(&ib, "c2", BOOL_, 0, NULL);
    vin(&ib, "gg", F32, 2, xd);
    add(&ib, node("Neg", "neg", (const char *[]){"x", NULL}, (const char *[]){"nx", NULL}));
    add(&ib, node("Add", "acc", (const char *[]){"gg", "nx", NULL}, (const char *[]){"gg2", NULL}));
    vout(&ib, "c2", BOOL_, 0, NULL);
    vout(&ib, "gg2", F32, 2, xd);
    ob_str(&ib, 2, "inner");

    vin(&b, "i", I64, 0, NULL);
    vin(&b, "c", BOOL_, 0, NULL);
    vin(&b, "h", F32, 2, xd);
    add(&b, ob_node("Count", "test", "count", (const char *[]){"x", NULL}, (const char *[]){"k", NULL}));
    add(&b, node("Mul", "mul_a", (const char *[]){"k", "w", NULL}, (const char *[]){"a", NULL}));
    add(&b, node("Tanh", "tanh", (const char *[]){"a", NULL}, (const char *[]){"t", NULL}));
    constant_f32(&b, "half", 0.5f);
    add(&b, node("Add", "add_u", (const char *[]){"t", "half", NULL}, (const char *[]){"u", NULL}));
    ob_buf il = node("Loop", "inner_loop", (const char *[]){"two", "", "h", NULL},
                     (const char *[]){"hh", NULL});
    ob_attr_graph(&il, "body", &ib);
    add(&b, il);
    add(&b, node("Add", "add_h", (const char *[]){"hh", "u", NULL}, (const char *[]){"h2", NULL}));
    add(&b, node("Mul", "mul_s", (const char *[]){"h2", "half", NULL}, (const char *[]){"s", NULL}));
    add(&b, node("RandomUniformLike", "rand", (const char *[]){"x", NULL}, (const char *[]){"r", NULL}));
    vout(&b, "c", BOOL_, 0, NULL);
    vout(&b, "h2", F32, 2, xd);
    vout(&b, "s", F32, 2, xd);
    vout(&b, "u", F32, 2, xd);
    vout(&b, "r", F32, 2, xd);
    ob_str(&b, 2, "body");
    ob_buf lp = node("Loop", "loop", (const char *[]){"M", "", "x", NULL},
                     (const char *[]){"h", "s_all", "u_all", "r_all", NULL});
    ob_attr_graph(&lp, "body", &b);
    add(&g, lp);
    vout(&g, "h", F32, 2, xd);
    vout(&g, "s_all", F32, 3, (int64_t[]){-1, 2, 3});
    vout(&g, "u_all", F32, 3, (int64_t[]){-1, 2, 3});
    vout(&g, "r_all", F32, 3, (int64_t[]){-1, 2, 3});
    return model(&g);
}

static frt_model *load(ob_buf mb, int fold) {
    frt_options opt;
    frt_options_init(&opt);
    opt.fold_constants = fold;
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer_with(mb.p, mb.n, NULL, &opt, &src, &m));
    free(mb.p);
    return m;
}

/* Number of live steps named `name` in block b (0 if absent). */
static int steps_named(const frt_model *m, size_t b, const char *name) {
    const frt_program *p = m->blocks[b].prog;
    int n = 0;
    for (size_t i = 0; i < p->n_steps; i++) n += strcmp(p->steps[i].ir->name, name) == 0;
    return n;
}

/* Block whose graph is the subgraph of node `owner_name` of its parent. */
static size_t block_of(const frt_model *m, const char *owner_name) {
    for (size_t b = 1; b < m->n_blocks; b++) {
        const frt_block *bl = &m->blocks[b];
        const frt_graph *pg = m->blocks[bl->parent].g;
        if (strcmp(pg->nodes[bl->owner].name, owner_name) == 0) return b;
    }
    return 0;
}

static void check_loop_run(frt_runtime *rt, int64_t M, long want_counts) {
    float x[6] = {0.5f, -1, 2, 0.25f, 3, -2};
    int64_t xd[2] = {2, 3};
    frt_tensor in[2] = {{.dtype = FRT_FLOAT32, .rank = 2, .shape = {2, 3}, .data = x, .nbytes = 24},
                        {.dtype = FRT_INT64, .rank = 0, .data = &M, .nbytes = 8}};
    (void)xd;
    const char *names[2] = {"x", "M"};
    frt_tensor out[4];
    long before = atomic_load(&count_runs);
    CHECK_OK(frt_run(rt, names, in, 2, out, 4, FRT_OUTPUTS_BORROW));
    long runs = atomic_load(&count_runs) - before;
    CHECK_MSG(runs == want_counts, "M %lld: Count ran %ld times, expected %ld", (long long)M, runs,
              want_counts);
    float h[6], u[6], s[16 * 6];
    memcpy(h, x, sizeof h);
    for (int e = 0; e < 6; e++) u[e] = tanhf(x[e] * W[e]) + 0.5f;
    for (int64_t i = 0; i < M; i++)
        for (int e = 0; e < 6; e++) {
            h[e] = (h[e] - x[e] - x[e]) + u[e];
            s[i * 6 + e] = h[e] * 0.5f;
        }
    CHECK(t_close(out[0].data, h, 6, 1e-5f, 1e-5f));
    CHECK(out[1].rank == 3 && out[1].shape[0] == M && out[2].shape[0] == M);
    if (out[1].shape[0] == M) CHECK(t_close(out[1].data, s, (size_t)M * 6, 1e-5f, 1e-5f));
    for (int64_t i = 0; i < M && out[2].shape[0] == M; i++)
        CHECK(t_close((const float *)out[2].data + i * 6, u, 6, 1e-6f, 0));
}

static void test_loop(void) {
    frt_model *m = load(loop_model(), 1);
    frt_runtime *rt = NULL;
    if (m) {
        size_t body = block_of(m, "loop"), inner = block_of(m, "inner_loop");
        CHECK_MSG(body && inner, "blocks %zu %zu", body, inner);
        /* the invariant nodes run in the model's graph, out of both loops */
        const char *moved[] = {"count", "mul_a", "tanh", "add_u", "neg"};
        for (int i = 0; i < 5; i++) {
            CHECK_MSG(steps_named(m, 0, moved[i]) == 1, "%s not in block 0", moved[i]);
            CHECK_MSG(steps_named(m, body, moved[i]) == 0 && steps_named(m, inner, moved[i]) == 0,
                      "%s still in a body", moved[i]);
        }
        /* the variant and random nodes stay */
        const char *stay[] = {"add_h", "mul_s", "rand", "inner_loop"};
        for (int i = 0; i < 4; i++)
            CHECK_MSG(steps_named(m, body, stay[i]) == 1, "%s not in the body", stay[i]);
        CHECK(steps_named(m, inner, "acc") == 1);
        CHECK_OK(frt_runtime_create(m, &rt));
    }
    const int64_t ms[] = {5, 1, 0, 3};
    for (int r = 0; rt && r < 4; r++) check_loop_run(rt, ms[r], 1);
    frt_runtime_free(rt);
    frt_model_free(m);

    /* without the pass (folding off): Count runs once per iteration, same results */
    m = load(loop_model(), 0);
    rt = NULL;
    if (m) {
        CHECK(steps_named(m, 0, "count") == 0 && steps_named(m, block_of(m, "loop"), "count") == 1);
        CHECK_OK(frt_runtime_create(m, &rt));
    }
    for (int r = 0; rt && r < 4; r++) check_loop_run(rt, ms[r], (long)ms[r]);
    frt_runtime_free(rt);
    frt_model_free(m);
}

/* Scan(s0 [3], xs [T, 3]) body (s, xt) -> (s + xt * Tanh(x), same): Tanh(x) moves out. */
static void test_scan(void) {
    ob_buf g = {0}, b = {0};
    vin(&g, "x", F32, 1, (int64_t[]){3});
    vin(&g, "s0", F32, 1, (int64_t[]){3});
    vin(&g, "xs", F32, 2, (int64_t[]){-1, 3});
    vin(&b, "s", F32, 1, (int64_t[]){3});
    vin(&b, "xt", F32, 1, (int64_t[]){3});
    add(&b, node("Tanh", "tanh_x", (const char *[]){"x", NULL}, (const char *[]){"tx", NULL}));
    add(&b, node("Mul", "mul", (const char *[]){"xt", "tx", NULL}, (const char *[]){"p", NULL}));
    add(&b, node("Add", "add", (const char *[]){"s", "p", NULL}, (const char *[]){"s2", NULL}));
    add(&b, node("Identity", "id", (const char *[]){"s2", NULL}, (const char *[]){"y", NULL}));
    vout(&b, "s2", F32, 1, (int64_t[]){3});
    vout(&b, "y", F32, 1, (int64_t[]){3});
    ob_str(&b, 2, "body");
    ob_buf sc = node("Scan", "scan", (const char *[]){"s0", "xs", NULL}, (const char *[]){"sf", "ys", NULL});
    ob_attr_graph(&sc, "body", &b);
    ob_attr_int(&sc, "num_scan_inputs", 1);
    add(&g, sc);
    vout(&g, "sf", F32, 1, (int64_t[]){3});
    vout(&g, "ys", F32, 2, (int64_t[]){-1, 3});
    frt_model *m = load(model(&g), 1);
    frt_runtime *rt = NULL;
    if (m) {
        CHECK(steps_named(m, 0, "tanh_x") == 1 && steps_named(m, block_of(m, "scan"), "tanh_x") == 0);
        CHECK_OK(frt_runtime_create(m, &rt));
    }
    for (int T = 4; rt && T >= 0; T -= 2) {
        float x[3] = {0.3f, -1.2f, 2}, s0[3] = {1, 2, -1}, xs[12];
        for (int i = 0; i < 3 * T; i++) xs[i] = (float)(i % 5) - 1.5f;
        frt_tensor in[3] = {{.dtype = FRT_FLOAT32, .rank = 1, .shape = {3}, .data = x, .nbytes = 12},
                            {.dtype = FRT_FLOAT32, .rank = 1, .shape = {3}, .data = s0, .nbytes = 12},
                            {.dtype = FRT_FLOAT32, .rank = 2, .shape = {T, 3}, .data = xs,
                             .nbytes = (size_t)T * 12}};
        const char *names[3] = {"x", "s0", "xs"};
        frt_tensor out[2];
        CHECK_OK(frt_run(rt, names, in, 3, out, 2, FRT_OUTPUTS_BORROW));
        float s[3] = {s0[0], s0[1], s0[2]}, y[12];
        for (int t = 0; t < T; t++)
            for (int e = 0; e < 3; e++) s[e] += xs[t * 3 + e] * tanhf(x[e]), y[t * 3 + e] = s[e];
        CHECK(t_close(out[0].data, s, 3, 1e-5f, 1e-5f));
        CHECK(out[1].shape[0] == T && t_close(out[1].data, y, (size_t)T * 3, 1e-5f, 1e-5f));
    }
    frt_runtime_free(rt);
    frt_model_free(m);
}

/* Loop bodies get the top graph's folding, fusion and kernel selection: a body Gemm + Relu on a
 * carried [4,16] value is one Gemm step with the Relu fused, its constant Add(w, w) is folded. */
static void test_body_compile(void) {
    ob_buf g = {0}, b = {0};
    int64_t hd[2] = {4, 16}, wd[2] = {16, 16};
    float w[256];
    for (int i = 0; i < 256; i++) w[i] = (float)((i * 7) % 11) * 0.01f - 0.05f;
    vin(&g, "x", F32, 2, hd);
    vin(&g, "M", I64, 0, NULL);
    ob_buf wt = ob_tensor_f32("w", wd, 2, w);
    ob_msg(&g, OB_INIT, &wt);
    vin(&b, "i", I64, 0, NULL);
    vin(&b, "c", BOOL_, 0, NULL);
    vin(&b, "h", F32, 2, hd);
    add(&b, node("Add", "w2", (const char *[]){"w", "w", NULL}, (const char *[]){"w2", NULL}));
    ob_buf gm = node("Gemm", "gemm", (const char *[]){"h", "w2", NULL}, (const char *[]){"y", NULL});
    ob_attr_int(&gm, "transB", 1);
    add(&b, gm);
    add(&b, node("Relu", "relu", (const char *[]){"y", NULL}, (const char *[]){"h2", NULL}));
    vout(&b, "c", BOOL_, 0, NULL);
    vout(&b, "h2", F32, 2, hd);
    ob_str(&b, 2, "body");
    ob_buf lp = node("Loop", "loop", (const char *[]){"M", "", "x", NULL}, (const char *[]){"h", NULL});
    ob_attr_graph(&lp, "body", &b);
    add(&g, lp);
    vout(&g, "h", F32, 2, hd);
    frt_model *m = load(model(&g), 1);
    if (!m) return;
    size_t body = block_of(m, "loop");
    const frt_program *p = m->blocks[body].prog;
    CHECK_MSG(p->n_compute == 1, "body has %zu compute steps", p->n_compute);
    CHECK(steps_named(m, body, "relu") == 0 && steps_named(m, body, "w2") == 0);
    for (size_t i = 0; i < p->n_steps; i++)
        if (strcmp(p->steps[i].ir->name, "gemm") == 0)
            CHECK_MSG(strstr(p->steps[i].k.name, "relu") != NULL, "%s", p->steps[i].k.name);
    frt_model_free(m);
}

int main(void) {
    test_body_compile();
    test_loop();
    test_scan();
    printf("test_hoist: %d checks, %d failures\n", t_checks, t_failures);
    return t_failures != 0;
}
