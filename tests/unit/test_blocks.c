/* Nested blocks and run-time-sized values, through test-only ops given by an op source to the loads
 * of this test only:
 *   test::RunBlock(X...)        attribute body: runs it once; outputs sized at run time
 *   test::RunBlockStatic(X)     attribute body, iters: runs it iters times feeding output 0 back
 *                               as input 0; output shaped like X (planned storage)
 *   test::Positives(X)          the positive elements of X, 1-D (size known only at run time)
 * Models are built in memory (onnx_build.h). Checks: outer names resolve (constants shared,
 * node values captured by every owner on the way, also two levels up), captured values live until
 * the owner step, child blocks plan once per shape, results, run-time-sized memory reuse, and
 * messages naming the subgraph path. */
#include <errno.h>
#include <stdatomic.h>

#include "runtime/model.h"
#include "onnx_build.h"
#include "test_util.h"

/* Steady-state runs (child blocks and run-time-sized values included) must allocate nothing. */
#include "alloc_count.h"

/* ---- test ops ---- */

static const frt_graph *body_of(const frt_node *n) { return n->n_sub > 0 ? n->sub[0] : NULL; }

static frt_status runblock_infer(frt_op_ctx *c) {
    const frt_graph *b = body_of(c->node);
    if (!b || (size_t)c->n_out > b->n_outputs)
        return frt_op_fail(c, FRT_ERR_SHAPE, "needs a body with enough outputs");
    for (int j = 0; j < c->n_out; j++) {
        const frt_value *o = &b->values[b->outputs[j]].v;
        frt_op_set_shape(c->out[j], o->dtype, o->rank, o->dims);
        for (int d = 0; d < o->rank; d++) c->out[j]->dims[d] = -1;
        c->out[j]->numel = -1;
    }
    return FRT_OK;
}

static frt_status runblock_run(const frt_step *s, frt_exec *x) {
    frt_value in[8], out[8];
    if (s->n_in > 8 || s->n_out > 8) return frt_step_fail(s, FRT_ERR_INTERNAL, "too many");
    for (int j = 0; j < s->n_in; j++) in[j] = x->values[s->in[j]];
    frt_status st = frt_exec_block(x, s->blocks[0], in, (size_t)s->n_in, out, (size_t)s->n_out);
    if (st) return st;
    for (int j = 0; j < s->n_out; j++) {
        void *d = frt_exec_alloc_output(x, s, j, out[j].dtype, out[j].rank, out[j].dims);
        if (!d) return FRT_ERR_NO_MEMORY;
        memcpy(d, out[j].data, frt_value_nbytes(&out[j]));
    }
    return FRT_OK;
}

static frt_status runblock_select(frt_op_ctx *c, frt_kernel *k) {
    k->name = "test_runblock";
    k->fn = runblock_run;
    k->flags = FRT_K_DYNAMIC_OUT;
    return FRT_OK;
}

static frt_status static_infer(frt_op_ctx *c) {
    if (c->n_in != 1 || c->n_out != 1 || !body_of(c->node))
        return frt_op_fail(c, FRT_ERR_SHAPE, "one input, one output, a body");
    frt_op_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
    return FRT_OK;
}

static size_t static_scratch(const frt_step *s, const frt_value *v) {
    return 2 * frt_value_nbytes(&v[s->in[0]]);
}

/* Ping-pong between two scratch halves so the block never reads its own output storage. */
static frt_status static_run(const frt_step *s, frt_exec *x) {
    int64_t iters = frt_attr_int(s->ir, "iters", 1);
    frt_value cur = x->values[s->in[0]], out;
    frt_value *y = &x->values[s->out[0]];
    size_t nb = frt_value_nbytes(y);
    char *buf[2] = {x->scratch, (char *)x->scratch + nb};
    for (int64_t it = 0; it < iters; it++) {
        frt_status st = frt_exec_block(x, s->blocks[0], &cur, 1, &out, 1);
        if (st) return st;
        if (frt_value_nbytes(&out) != nb) return frt_step_fail(s, FRT_ERR_SHAPE, "body changed the size");
        void *dst = it + 1 == iters ? y->data : buf[it & 1];
        memcpy(dst, out.data, nb);
        cur.data = dst;
    }
    return FRT_OK;
}

static frt_status static_select(frt_op_ctx *c, frt_kernel *k) {
    k->name = "test_runblock_static";
    k->fn = static_run;
    k->scratch = static_scratch;
    return FRT_OK;
}

static frt_status pos_infer(frt_op_ctx *c) {
    int64_t d = -1;
    frt_op_set_shape(c->out[0], FRT_FLOAT32, 1, &d);
    return FRT_OK;
}

static frt_status pos_run(const frt_step *s, frt_exec *x) {
    const frt_value *a = &x->values[s->in[0]];
    const float *ad = a->data;
    int64_t n = 0;
    for (int64_t i = 0; i < a->numel; i++) n += ad[i] > 0;
    float *y = frt_exec_alloc_output(x, s, 0, FRT_FLOAT32, 1, &n);
    if (!y) return FRT_ERR_NO_MEMORY;
    for (int64_t i = 0, k = 0; i < a->numel; i++)
        if (ad[i] > 0) y[k++] = ad[i];
    return FRT_OK;
}

static frt_status pos_select(frt_op_ctx *c, frt_kernel *k) {
    k->name = "test_positives";
    k->fn = pos_run;
    k->flags = FRT_K_DYNAMIC_OUT;
    return FRT_OK;
}

/* Bad: asks run-time storage for an output that is planned */
static frt_status bad_run(const frt_step *s, frt_exec *x) {
    int64_t n = 1;
    return frt_exec_alloc_output(x, s, 0, FRT_FLOAT32, 1, &n) ? FRT_OK : FRT_ERR_INTERNAL;
}
static frt_status bad_select(frt_op_ctx *c, frt_kernel *k) {
    k->name = "test_bad";
    k->fn = bad_run;
    return FRT_OK;
}
static frt_status same_infer(frt_op_ctx *c) {
    frt_op_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
    return FRT_OK;
}

/* Owned: Y = X, with heap params released by a destroy hook (counted) */
static int g_destroyed;
static void owned_destroy(void *params) {
    free(params);
    g_destroyed++;
}
static frt_status owned_run(const frt_step *s, frt_exec *x) {
    const frt_value *a = &x->values[s->in[0]];
    memcpy(x->values[s->out[0]].data, a->data, frt_value_nbytes(a));
    return FRT_OK;
}
static frt_status owned_select(frt_op_ctx *c, frt_kernel *k) {
    int *p = malloc(sizeof *p);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "no params");
    k->name = "test_owned";
    k->fn = owned_run;
    k->params = p;
    k->destroy = owned_destroy;
    return FRT_OK;
}

#define TEST_OP(name, flags_, infer_fn, select_fn)                                                \
    {.domain = "test", .op_type = name, .since = 1, .max = FRT_OPSET_LATEST, .flags = (flags_),   \
     .family = "test", .infer = infer_fn, .select = select_fn}
static const frt_op_def test_ops[] = {
    TEST_OP("RunBlock", FRT_OP_DATA_SHAPE, runblock_infer, runblock_select),
    TEST_OP("RunBlockStatic", 0, static_infer, static_select),
    TEST_OP("Positives", FRT_OP_DATA_SHAPE, pos_infer, pos_select),
    TEST_OP("Bad", 0, same_infer, bad_select),
    /* Positives' kernel without the capability: compile must refuse it */
    TEST_OP("PositivesNoCap", 0, pos_infer, pos_select),
    TEST_OP("Owned", 0, same_infer, owned_select),
};

static const frt_op_def *find(void *user, const char *domain, const char *op) {
    (void)user;
    if (strcmp(domain, "test") != 0) return NULL;
    for (size_t i = 0; i < sizeof test_ops / sizeof test_ops[0]; i++)
        if (strcmp(test_ops[i].op_type, op) == 0) return &test_ops[i];
    return NULL;
}
static const frt_op_source prov = {find, NULL};

/* ---- model building ---- */

static ob_buf node2(const char *op, const char *dom, const char *name, const char *a, const char *b,
                    const char *out) {
    const char *ins[] = {a, b, NULL}, *outs[] = {out, NULL};
    return ob_node(op, dom, name, ins, outs);
}
static void add(ob_buf *g, ob_buf n) { ob_msg(g, OB_NODE, &n); }
static void input(ob_buf *g, const char *name, int rank, const int64_t *dims) {
    ob_buf v = ob_vinfo(name, 1, rank, dims);
    ob_msg(g, OB_INPUT, &v);
}
static void output(ob_buf *g, const char *name) {
    ob_buf v = ob_vinfo(name, 1, -1, NULL);
    ob_msg(g, OB_OUTPUT, &v);
}
/* A subgraph with one input (no shape) and one output. */
static ob_buf sub1(const char *in, const char *out) {
    ob_buf g = {0};
    input(&g, in, -1, NULL);
    output(&g, out);
    ob_str(&g, 2, "sub");
    return g;
}

/*   T = Relu(X)                                  (read only inside subgraphs)
 *   Y = RunBlock(X)        body:  by = Add(bx, W)  [W: outer initializer]; bz = Mul(by, T)
 *   Z = RunBlock(X)        body2: cy = RunBlock(cx) inner: dz = Sub(dx, T)  [T two levels up]
 *   V = RunBlockStatic(X)  body3 (iters 3): ey = Add(ex, W)
 * Y = (X + W) relu(X), Z = X - relu(X), V = X + 3 W. */
static ob_buf nested_model(void) {
    ob_buf g = {0};
    int64_t xd[2] = {-1, 3}, wd[2] = {1, 3};
    float w[3] = {0.5f, -1.0f, 2.0f};
    input(&g, "X", 2, xd);
    ob_buf t = ob_tensor_f32("W", wd, 2, w);
    ob_msg(&g, OB_INIT, &t);
    add(&g, node2("Relu", NULL, "relu", "X", NULL, "T"));

    ob_buf body = sub1("bx", "bz");
    add(&body, node2("Add", NULL, "add", "bx", "W", "by"));
    add(&body, node2("Mul", NULL, "mul", "by", "T", "bz"));
    ob_buf rb = node2("RunBlock", "test", "rb", "X", NULL, "Y");
    ob_attr_graph(&rb, "body", &body);
    add(&g, rb);

    ob_buf inner = sub1("dx", "dz");
    add(&inner, node2("Sub", NULL, "sub", "dx", "T", "dz"));
    ob_buf body2 = sub1("cx", "cy");
    ob_buf rb_in = node2("RunBlock", "test", "rb_inner", "cx", NULL, "cy");
    ob_attr_graph(&rb_in, "body", &inner);
    add(&body2, rb_in);
    ob_buf rb2 = node2("RunBlock", "test", "rb2", "X", NULL, "Z");
    ob_attr_graph(&rb2, "body", &body2);
    add(&g, rb2);

    ob_buf body3 = sub1("ex", "ey");
    add(&body3, node2("Add", NULL, "add3", "ex", "W", "ey"));
    ob_buf rs = node2("RunBlockStatic", "test", "rs", "X", NULL, "V");
    ob_attr_graph(&rs, "body", &body3);
    ob_attr_int(&rs, "iters", 3);
    add(&g, rs);
    output(&g, "Y");
    output(&g, "Z");
    output(&g, "V");
    return ob_model(&g);
}

static int32_t vid(const frt_graph *g, const char *name) {
    for (size_t i = 0; i < g->n_values; i++)
        if (strcmp(g->values[i].name, name) == 0) return (int32_t)i;
    return -1;
}
static int32_t block_of(const frt_model *m, const char *path) {
    for (size_t i = 0; i < m->n_blocks; i++)
        if (strcmp(m->blocks[i].g->path, path) == 0) return (int32_t)i;
    return -1;
}
static int32_t step_pos(const frt_program *p, const char *node) {
    for (size_t pos = 0; pos < p->n_compute; pos++)
        if (strcmp(p->steps[p->compute[pos]].ir->name, node) == 0) return (int32_t)pos;
    return -1;
}

static void test_nested(frt_planner planner) {
    ob_buf mb = nested_model();
    frt_options opt;
    frt_options_init(&opt);
    opt.planner = planner;
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer_with(mb.p, mb.n, NULL, &opt, &prov, &m));
    free(mb.p);
    if (!m) return;
    /* the tree */
    CHECK(m->n_blocks == 5);
    int32_t b_body = block_of(m, "rb/body"), b_body2 = block_of(m, "rb2/body"),
            b_inner = block_of(m, "rb2/body/rb_inner/body"), b_body3 = block_of(m, "rs/body");
    CHECK(b_body > 0 && b_body2 > 0 && b_inner > 0 && b_body3 > 0);
    if (b_body < 0 || b_body2 < 0 || b_inner < 0 || b_body3 < 0) {
        frt_model_free(m);
        return;
    }
    CHECK(m->blocks[b_body].parent == 0 && m->blocks[b_inner].parent == b_body2);
    const frt_graph *g = &m->g, *gb = m->blocks[b_body].g, *g2 = m->blocks[b_body2].g,
                    *gi = m->blocks[b_inner].g;
    /* outer names: W is a constant shared with the parent, T is captured */
    CHECK(gb->values[vid(gb, "W")].kind == FRT_VALUE_CONST);
    CHECK(gb->values[vid(gb, "W")].v.data == g->values[vid(g, "W")].v.data);
    CHECK(gb->values[vid(gb, "T")].kind == FRT_VALUE_OUTER);
    CHECK(gi->values[vid(gi, "T")].kind == FRT_VALUE_OUTER);
    CHECK(g2->values[vid(g2, "T")].kind == FRT_VALUE_OUTER); /* passed through body2 */
    const frt_program *p0 = m->blocks[0].prog;
    const frt_node *rb = NULL, *rb2 = NULL;
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (strcmp(g->nodes[i].name, "rb") == 0) rb = &g->nodes[i];
        if (strcmp(g->nodes[i].name, "rb2") == 0) rb2 = &g->nodes[i];
    }
    CHECK(rb && rb->n_cap == 2 && rb2 && rb2->n_cap == 1);
    if (rb2 && rb2->n_cap == 1) CHECK(rb2->in[rb2->n_in] == vid(g, "T"));
    /* T, read only inside subgraphs, lives until the last owner step */
    int32_t t = vid(g, "T");
    int32_t last_owner = step_pos(p0, "rb2") > step_pos(p0, "rb") ? step_pos(p0, "rb2") : step_pos(p0, "rb");
    CHECK(p0->vclass[t] == FRT_VC_MANAGED && p0->last_pos[t] == last_owner && last_owner > 0);
    CHECK(p0->vclass[vid(g, "Y")] == FRT_VC_DYNAMIC && p0->vclass[vid(g, "V")] == FRT_VC_OWNED);

    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    const int64_t batches[] = {2, 2, 4, 1, 4};
    void *slab3 = NULL;
    for (int r = 0; r < 5 && rt; r++) {
        int64_t nb = batches[r];
        float x[12];
        for (int i = 0; i < nb * 3; i++) x[i] = (float)((i * 7) % 11) - 5.0f + 0.25f * (float)r;
        frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 2, .shape = {nb, 3}, .data = x,
                         .nbytes = (size_t)nb * 12};
        const char *names[] = {"X"};
        frt_tensor out[3];
        CHECK_OK(frt_run(rt, names, &in, 1, out, 3, FRT_OUTPUTS_BORROW));
        const float w[3] = {0.5f, -1.0f, 2.0f};
        float wy[12], wz[12], wv[12];
        for (int i = 0; i < nb * 3; i++) {
            float tr = x[i] > 0 ? x[i] : 0;
            wy[i] = (x[i] + w[i % 3]) * tr;
            wz[i] = x[i] - tr;
            wv[i] = x[i] + 3 * w[i % 3];
        }
        for (int o = 0; o < 3; o++)
            CHECK_MSG(out[o].rank == 2 && out[o].shape[0] == nb && out[o].shape[1] == 3 &&
                          out[o].nbytes == (size_t)nb * 12, "run %d output %d", r, o);
        CHECK(t_close(out[0].data, wy, (size_t)nb * 3, 1e-6f, 0));
        CHECK(t_close(out[1].data, wz, (size_t)nb * 3, 1e-6f, 0));
        CHECK(t_close(out[2].data, wv, (size_t)nb * 3, 1e-6f, 1e-6f));
        /* body3 runs 3 times per run and re-plans only when the batch changes */
        if (r == 1) CHECK(rt->blk[b_body3].shaped && rt->blk[b_body3].slab == slab3);
        slab3 = rt->blk[b_body3].slab;
        CHECK(rt->blk[b_inner].shaped);
    }
    /* steady state: every batch size was seen, so alternating them re-plans the blocks but
       allocates nothing */
    for (int r = 0; r < 12 && rt; r++) {
        int64_t nb = batches[r % 5];
        float x[12] = {0};
        frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 2, .shape = {nb, 3}, .data = x,
                         .nbytes = (size_t)nb * 12};
        const char *names[] = {"X"};
        frt_tensor out[3];
        t_alloc_trace(1); /* T_ALLOC_TRACE=1 prints each counted allocation's stack */
        long before = atomic_load(&g_allocs);
        CHECK_OK(frt_run(rt, names, &in, 1, out, 3, FRT_OUTPUTS_BORROW));
        t_alloc_trace(0);
        long got = atomic_load(&g_allocs) - before;
        CHECK_MSG(!alloc_counting || got == 0, "batch %lld: %ld allocations", (long long)nb, got);
    }
    frt_runtime *cl = NULL;
    if (rt) CHECK_OK(frt_runtime_clone(rt, &cl));
    if (cl) {
        float x[12] = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12};
        frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 2, .shape = {4, 3}, .data = x, .nbytes = 48};
        const char *names[] = {"X"};
        frt_tensor out[3];
        CHECK_OK(frt_run(cl, names, &in, 1, out, 3, FRT_OUTPUTS_ALLOC));
        for (int o = 0; o < 3; o++) {
            CHECK(out[o].nbytes == 48);
            frt_tensor_release(&out[o]);
        }
    }
    frt_runtime_free(cl);
    frt_runtime_free(rt);
    frt_model_free(m);
}

/*   P = Positives(X), Q = Neg(P) (shaped at run time), S = Shape(P) (too), R = Relu(X) */
static void test_dynamic(int manage) {
    ob_buf g = {0};
    int64_t xd[1] = {8};
    input(&g, "X", 1, xd);
    add(&g, node2("Positives", "test", "pos", "X", NULL, "P"));
    add(&g, node2("Neg", NULL, "neg", "P", NULL, "Q"));
    add(&g, node2("Shape", NULL, "shape", "P", NULL, "S"));
    add(&g, node2("Relu", NULL, "relu", "X", NULL, "R"));
    output(&g, "P");
    output(&g, "Q");
    ob_buf so = ob_vinfo("S", 7, -1, NULL);
    ob_msg(&g, OB_OUTPUT, &so);
    output(&g, "R");
    ob_buf mb = ob_model(&g);
    frt_options opt;
    frt_options_init(&opt);
    opt.manage_outputs = manage;
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer_with(mb.p, mb.n, NULL, &opt, &prov, &m));
    free(mb.p);
    if (!m) return;
    const frt_program *p = m->blocks[0].prog;
    const frt_graph *gg = &m->g;
    CHECK(p->has_dynamic);
    CHECK(p->vclass[vid(gg, "P")] == FRT_VC_DYNAMIC && p->vclass[vid(gg, "Q")] == FRT_VC_DYNAMIC);
    CHECK(p->vclass[vid(gg, "S")] == FRT_VC_DYNAMIC && p->vclass[vid(gg, "R")] == FRT_VC_OWNED);
    for (size_t i = 0; i < p->n_steps; i++) {
        const char *n = p->steps[i].ir->name;
        if (!strcmp(n, "pos")) CHECK(p->deferred[i] == FRT_DEFER_KERNEL);
        if (!strcmp(n, "neg") || !strcmp(n, "shape")) CHECK(p->deferred[i] == FRT_DEFER_INFER);
        if (!strcmp(n, "relu")) CHECK(p->deferred[i] == FRT_DEFER_NONE);
    }
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    const int counts[] = {3, 3, 8, 8, 2, 0, 8, 5};
    size_t cap_after_growth = 0;
    void *base_after_growth = NULL;
    for (int r = 0; r < 8 && rt; r++) {
        float x[8];
        for (int i = 0; i < 8; i++) x[i] = i < counts[r] ? (float)(i + 1) * 1.5f : -(float)i;
        frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 1, .shape = {8}, .data = x, .nbytes = 32};
        const char *names[] = {"X"};
        frt_tensor out[4];
        if (r > 3) t_alloc_trace(1);
        long before = atomic_load(&g_allocs);
        CHECK_OK(frt_run(rt, names, &in, 1, out, 4, FRT_OUTPUTS_BORROW));
        long got = atomic_load(&g_allocs) - before;
        if (r > 3) t_alloc_trace(0);
        /* once the largest size was seen (run 2) and the buffer grew (run 3), runs allocate
           nothing */
        if (r > 3) CHECK_MSG(!alloc_counting || got == 0, "run %d: %ld allocations", r, got);
        float keep[3][8];
        for (int o = 0; o < 3; o++) memcpy(keep[o], out[o].data, out[o].nbytes);
        CHECK_OK(frt_run(rt, names, &in, 1, out, 4, FRT_OUTPUTS_ALLOC));
        for (int o = 0; o < 3; o++) CHECK(memcmp(keep[o], out[o].data, out[o].nbytes) == 0);
        int n = counts[r];
        CHECK(out[0].rank == 1 && out[0].shape[0] == n && out[0].nbytes == (size_t)n * 4);
        CHECK(out[1].rank == 1 && out[1].shape[0] == n);
        CHECK(out[2].dtype == FRT_INT64 && out[2].rank == 1 && out[2].shape[0] == 1 &&
              ((int64_t *)out[2].data)[0] == n);
        for (int i = 0; i < n; i++) {
            CHECK(((float *)out[0].data)[i] == x[i]);
            CHECK(((float *)out[1].data)[i] == -x[i]);
        }
        for (int i = 0; i < 8; i++) CHECK(((float *)out[3].data)[i] == (x[i] > 0 ? x[i] : 0));
        for (int o = 0; o < 4; o++) frt_tensor_release(&out[o]);
        /* the run-time-sized buffer grows once the largest size was seen, then stays */
        const frt_dynmem *d = &rt->blk[0].dyn;
        if (r == 3) {
            cap_after_growth = d->cap;
            base_after_growth = d->base;
            CHECK(d->n_extra == 0 && d->cap >= 3 * 64);
        }
        if (r > 3) CHECK(d->cap == cap_after_growth && d->base == base_after_growth && d->n_extra == 0);
    }
    frt_runtime_free(rt);
    frt_model_free(m);
}

/*   Y = Reshape(X, S) with S a graph input, Z = Relu(Y): the Reshape is deferred (its output shape
 * is decided by S's data, known only while running) and Relu with it; a bad S is an error. */
static void test_shape_from_input(void) {
    ob_buf g = {0};
    int64_t xd[1] = {6}, sd[1] = {2};
    input(&g, "X", 1, xd);
    ob_buf si = ob_vinfo("S", 7, 1, sd);
    ob_msg(&g, OB_INPUT, &si);
    add(&g, node2("Reshape", NULL, "reshape", "X", "S", "Y"));
    add(&g, node2("Relu", NULL, "relu", "Y", NULL, "Z"));
    output(&g, "Z");
    ob_buf mb = ob_model(&g);
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer(mb.p, mb.n, NULL, NULL, &m));
    free(mb.p);
    if (!m) return;
    const frt_program *p = m->blocks[0].prog;
    CHECK(p->has_dynamic && p->vclass[vid(&m->g, "Z")] == FRT_VC_DYNAMIC);
    for (size_t i = 0; i < p->n_steps; i++) CHECK(p->deferred[i] == FRT_DEFER_INFER);
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    const int64_t shapes[][2] = {{2, 3}, {3, 2}, {-1, 1}, {1, -1}, {4, 4}, {0, 3}, {2, 3}};
    const frt_status want[] = {FRT_OK, FRT_OK, FRT_OK, FRT_OK, FRT_ERR_SHAPE, FRT_ERR_SHAPE, FRT_OK};
    float x[6] = {-1, 2, -3, 4, -5, 6};
    for (int r = 0; r < 7 && rt; r++) {
        frt_tensor in[2] = {{.dtype = FRT_FLOAT32, .rank = 1, .shape = {6}, .data = x, .nbytes = 24},
                            {.dtype = FRT_INT64, .rank = 1, .shape = {2}, .data = (void *)shapes[r],
                             .nbytes = 16}};
        const char *names[] = {"X", "S"};
        frt_tensor out;
        frt_status st = frt_run(rt, names, in, 2, &out, 1, FRT_OUTPUTS_ALLOC);
        CHECK_MSG(st == want[r], "run %d: status %d (%s)", r, (int)st, st ? frt_last_error() : "");
        if (st) {
            CHECK(strstr(frt_last_error(), "reshape") != NULL);
            continue;
        }
        int64_t d0 = shapes[r][0] < 0 ? 6 / shapes[r][1] : shapes[r][0];
        CHECK(out.rank == 2 && out.shape[0] == d0 && out.shape[0] * out.shape[1] == 6);
        for (int i = 0; i < 6; i++) CHECK(((float *)out.data)[i] == (x[i] > 0 ? x[i] : 0));
        frt_tensor_release(&out);
    }
    frt_runtime_free(rt);
    frt_model_free(m);
}

static void test_bad_alloc(void) {
    ob_buf g = {0};
    int64_t xd[1] = {4};
    input(&g, "X", 1, xd);
    add(&g, node2("Bad", "test", "bad", "X", NULL, "Y"));
    output(&g, "Y");
    ob_buf mb = ob_model(&g);
    frt_model *m = NULL;
    frt_runtime *rt = NULL;
    CHECK_OK(frt_model_load_buffer_with(mb.p, mb.n, NULL, NULL, &prov, &m));
    free(mb.p);
    if (m) CHECK_OK(frt_runtime_create(m, &rt));
    if (rt) {
        float x[4] = {0};
        frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 1, .shape = {4}, .data = x, .nbytes = 16};
        const char *names[] = {"X"};
        frt_tensor out;
        CHECK(frt_run(rt, names, &in, 1, &out, 1, FRT_OUTPUTS_BORROW) == FRT_ERR_INTERNAL);
        CHECK_MSG(err_has("node 'bad'") && err_has("not run-time-sized"), "%s", frt_last_error());
    }
    frt_runtime_free(rt);
    frt_model_free(m);
}

/* A run-time-sized kernel needs an op with FRT_OP_DATA_SHAPE: otherwise the load fails. */
static void test_dynamic_needs_capability(void) {
    ob_buf g = {0};
    int64_t xd[1] = {4};
    input(&g, "X", 1, xd);
    add(&g, node2("PositivesNoCap", "test", "pos", "X", NULL, "Y"));
    output(&g, "Y");
    ob_buf mb = ob_model(&g);
    frt_model *m = NULL;
    CHECK(frt_model_load_buffer_with(mb.p, mb.n, NULL, NULL, &prov, &m) == FRT_ERR_INTERNAL);
    CHECK_MSG(err_has("node 'pos'") && err_has("beyond the op's capabilities"), "%s",
              frt_last_error());
    CHECK(m == NULL);
    free(mb.p);
}

/* Kernel destroy hooks run for the kernels of every block: once when the model is freed, and
 * when the load fails after a child block's kernels were selected.
 *   Y = RunBlock(X)  body: cy = RunBlock(cx)  inner: dz = Owned(dx);  O = Owned(Y)
 * and the same with P = PositivesNoCap(O) appended (refused in block 0's selection). */
static void test_destroy_every_block(void) {
    for (int fail = 0; fail <= 1; fail++) {
        ob_buf g = {0};
        int64_t xd[1] = {4};
        input(&g, "X", 1, xd);
        ob_buf inner = sub1("dx", "dz");
        add(&inner, node2("Owned", "test", "own_inner", "dx", NULL, "dz"));
        ob_buf body = sub1("cx", "cy");
        ob_buf rb_in = node2("RunBlock", "test", "rb_inner", "cx", NULL, "cy");
        ob_attr_graph(&rb_in, "body", &inner);
        add(&body, rb_in);
        ob_buf rb = node2("RunBlock", "test", "rb", "X", NULL, "Y");
        ob_attr_graph(&rb, "body", &body);
        add(&g, rb);
        add(&g, node2("Owned", "test", "own", "Y", NULL, "O"));
        if (fail) add(&g, node2("PositivesNoCap", "test", "pos", "O", NULL, "P"));
        output(&g, fail ? "P" : "O");
        ob_buf mb = ob_model(&g);
        frt_model *m = NULL;
        g_destroyed = 0;
        frt_status st = frt_model_load_buffer_with(mb.p, mb.n, NULL, NULL, &prov, &m);
        free(mb.p);
        if (fail) {
            CHECK(st == FRT_ERR_INTERNAL && m == NULL);
            CHECK_MSG(g_destroyed == 2, "%d destroyed after a failed load", g_destroyed);
            continue;
        }
        CHECK_OK(st);
        CHECK(m && m->n_blocks == 3);
        frt_runtime *rt = NULL;
        if (m) CHECK_OK(frt_runtime_create(m, &rt));
        if (rt) {
            float x[4] = {1, -2, 3, -4};
            frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 1, .shape = {4}, .data = x,
                             .nbytes = 16};
            const char *names[] = {"X"};
            frt_tensor out;
            CHECK_OK(frt_run(rt, names, &in, 1, &out, 1, FRT_OUTPUTS_BORROW));
            CHECK(out.nbytes == sizeof x && memcmp(out.data, x, sizeof x) == 0);
        }
        frt_runtime_free(rt);
        CHECK(g_destroyed == 0);
        frt_model_free(m);
        CHECK_MSG(g_destroyed == 2, "%d destroyed at model free", g_destroyed);
    }
}

/* Unknown ops inside subgraphs are named by path (the If itself is supported); undefined names
 * inside subgraphs are malformed, with the path. */
static void test_messages(void) {
    /* If with branches */
    ob_buf g = {0};
    int64_t cd[1] = {1};
    input(&g, "C", 1, cd);
    ob_buf thn = {0}, els = {0};
    add(&thn, node2("Relu", NULL, "r", "C", NULL, "o1"));
    output(&thn, "o1");
    add(&els, node2("Weird", NULL, "w", "C", NULL, "o2"));
    output(&els, "o2");
    ob_buf iff = node2("If", NULL, "if1", "C", NULL, "Y");
    ob_attr_graph(&iff, "then_branch", &thn);
    ob_attr_graph(&iff, "else_branch", &els);
    add(&g, iff);
    output(&g, "Y");
    ob_buf mb = ob_model(&g);
    frt_model *m = NULL;
    CHECK(frt_model_load_buffer(mb.p, mb.n, NULL, NULL, &m) == FRT_ERR_UNSUPPORTED);
    CHECK_MSG(!err_has("If (") && err_has("Weird (1 node: if1/else_branch/w)"), "%s",
              frt_last_error());
    free(mb.p);

    /* RunBlock (known through the op source) with an unknown op two levels down */
    g = (ob_buf){0};
    input(&g, "X", 1, cd);
    ob_buf inner = sub1("a", "b");
    add(&inner, node2("FooBar", "acme", "foo", "a", NULL, "b"));
    ob_buf body = sub1("c", "d");
    ob_buf rin = node2("RunBlock", "test", "in", "c", NULL, "d");
    ob_attr_graph(&rin, "body", &inner);
    add(&body, rin);
    ob_buf rb = node2("RunBlock", "test", "rb", "X", NULL, "Y");
    ob_attr_graph(&rb, "body", &body);
    add(&g, rb);
    output(&g, "Y");
    mb = ob_model(&g);
    CHECK(frt_model_load_buffer_with(mb.p, mb.n, NULL, NULL, &prov, &m) == FRT_ERR_UNSUPPORTED);
    CHECK_MSG(err_has("acme::FooBar (1 node: rb/body/in/body/foo)"), "%s", frt_last_error());
    CHECK(!err_has("RunBlock"));
    free(mb.p);

    /* undefined name inside a subgraph */
    g = (ob_buf){0};
    input(&g, "X", 1, cd);
    body = sub1("c", "d");
    add(&body, node2("Add", NULL, "add", "c", "nowhere", "d"));
    rb = node2("RunBlock", "test", "rb", "X", NULL, "Y");
    ob_attr_graph(&rb, "body", &body);
    add(&g, rb);
    output(&g, "Y");
    mb = ob_model(&g);
    CHECK(frt_model_load_buffer_with(mb.p, mb.n, NULL, NULL, &prov, &m) == FRT_ERR_MALFORMED);
    CHECK_MSG(err_has("subgraph rb/body") && err_has("'nowhere'"), "%s", frt_last_error());
    free(mb.p);

    /* a shape error inside a subgraph names the subgraph */
    g = (ob_buf){0};
    int64_t xd[1] = {4}, wd[1] = {3};
    float w[3] = {1, 2, 3};
    input(&g, "X", 1, xd);
    ob_buf t = ob_tensor_f32("W", wd, 1, w);
    ob_msg(&g, OB_INIT, &t);
    body = sub1("c", "d");
    add(&body, node2("Add", NULL, "add", "X", "W", "d"));
    rb = node2("RunBlock", "test", "rb", "X", NULL, "Y");
    ob_attr_graph(&rb, "body", &body);
    add(&g, rb);
    output(&g, "Y");
    mb = ob_model(&g);
    CHECK(frt_model_load_buffer_with(mb.p, mb.n, NULL, NULL, &prov, &m) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("subgraph rb/body") && err_has("'add'"), "%s", frt_last_error());
    CHECK(m == NULL);
    free(mb.p);
}

int main(void) {
    setenv("FRT_CHECK_PLAN", "1", 1);
    /* a steady-state run that allocates prints the allocation's stack (the check fails anyway) */
    setenv("T_ALLOC_TRACE", "1", 0);
    test_nested(FRT_PLANNER_STANDARD);
    test_nested(FRT_PLANNER_GREEDY);
    test_dynamic(0);
    test_dynamic(1);
    test_bad_alloc();
    test_dynamic_needs_capability();
    test_shape_from_input();
    test_destroy_every_block();
    test_messages();
    printf("test_blocks: %d checks, %d failures\n", t_checks, t_failures);
    return t_failures != 0;
}
