/* Layouts: the blocked layouts' sizes and conversions, and the layout pass with a test-only layout
 * ("rev": elements stored in reverse order after PAD zero elements) whose kernels come from a
 * test op source given to this model's load only. Checks that reorders are inserted exactly where a
 * reader needs another layout (and shared by readers wanting the same), that graph outputs are
 * plain, that the planner sizes values with their padding, and that results are right. */
#include "runtime/model.h"
#include "onnx_build.h"
#include "test_util.h"

/* ---- the built-in blocked layouts ---- */

static void test_blocked(void) {
    frt_value v = {0};
    int64_t d[4] = {2, 11, 3, 2};
    frt_op_set_shape(&v, FRT_FLOAT32, 4, d);
    CHECK(frt_value_nbytes(&v) == 2 * 11 * 6 * 4);
    v.layout = &frt_layout_nchw8c;
    CHECK(frt_value_nbytes(&v) == 2 * 16 * 6 * 4); /* 11 channels padded to 16 */
    v.layout = &frt_layout_nchw16c;
    CHECK(frt_value_nbytes(&v) == 2 * 16 * 6 * 4);
    int64_t d3[3] = {1, 17, 5};
    frt_op_set_shape(&v, FRT_INT64, 3, d3);
    CHECK(frt_value_nbytes(&v) == 1 * 32 * 5 * 8);
    CHECK(strcmp(frt_layout_name(&frt_layout_nchw16c), "nChw16c") == 0);
    CHECK(strcmp(frt_layout_name(FRT_LAYOUT_PLAIN), "plain") == 0);
    frt_value r2 = {0};
    frt_op_set_shape(&r2, FRT_FLOAT32, 2, d);
    CHECK(!frt_layout_nchw8c.fits(&r2));
    CHECK(frt_layout_nchw8c.fits(&v));

    /* round trip through nChw8c, element positions, zero padding */
    const frt_layout *ls[2] = {&frt_layout_nchw8c, &frt_layout_nchw16c};
    for (int li = 0; li < 2; li++) {
        const frt_layout *l = ls[li];
        int64_t b = l->block;
        frt_value p = {0}, q = {0}, back = {0};
        frt_op_set_shape(&p, FRT_FLOAT32, 4, d);
        q = p;
        q.layout = l;
        back = p;
        size_t n = (size_t)p.numel;
        float *src = malloc(n * 4), *blk = malloc(frt_value_nbytes(&q)), *dst = malloc(n * 4);
        memset(blk, 0x7f, frt_value_nbytes(&q));
        for (size_t i = 0; i < n; i++) src[i] = (float)i + 0.5f;
        p.data = src;
        q.data = blk;
        back.data = dst;
        l->from_plain(&p, &q);
        int64_t cb = (11 + b - 1) / b;
        int bad = 0;
        for (int64_t i = 0; i < 2; i++)
            for (int64_t c = 0; c < cb * b; c++)
                for (int64_t s = 0; s < 6; s++) {
                    float got = blk[((i * cb + c / b) * 6 + s) * b + c % b];
                    float want = c < 11 ? src[(i * 11 + c) * 6 + s] : 0.0f;
                    bad += got != want;
                }
        CHECK_MSG(bad == 0, "%s: %d misplaced elements", l->name, bad);
        l->to_plain(&q, &back);
        CHECK(memcmp(src, dst, n * 4) == 0);
        free(src);
        free(blk);
        free(dst);
    }
}

/* ---- a test-only layout and op source ---- */

#define PAD 5

static size_t rev_nbytes(const frt_value *v) {
    return (size_t)(v->numel + PAD) * frt_dtype_size(v->dtype);
}
static bool rev_fits(const frt_value *v) { return v->dtype == FRT_FLOAT32; }
static void rev_to_plain(const frt_value *src, frt_value *dst) {
    const float *s = (const float *)src->data + PAD;
    float *d = dst->data;
    for (int64_t i = 0; i < src->numel; i++) d[i] = s[src->numel - 1 - i];
}
static void rev_from_plain(const frt_value *src, frt_value *dst) {
    const float *s = src->data;
    float *d = dst->data;
    for (int i = 0; i < PAD; i++) d[i] = 0;
    for (int64_t i = 0; i < src->numel; i++) d[PAD + src->numel - 1 - i] = s[i];
}
static const frt_layout rev = {"rev", 0, rev_nbytes, rev_fits, rev_to_plain, rev_from_plain};
static const frt_layout *const rev1[1] = {&rev};
static const frt_layout *const blk8[1] = {&frt_layout_nchw8c};

static frt_status same_infer(frt_op_ctx *c) {
    frt_op_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
    return FRT_OK;
}

/* ScaleRev: Y = 2 X, X plain, Y in rev */
static frt_status scale_rev_run(const frt_step *s, frt_exec *x) {
    const frt_value *a = &x->values[s->in[0]];
    frt_value *y = &x->values[s->out[0]];
    if (a->layout || y->layout != &rev) return frt_step_fail(s, FRT_ERR_INTERNAL, "layouts");
    const float *ad = a->data;
    float *yd = (float *)y->data;
    for (int i = 0; i < PAD; i++) yd[i] = 0;
    for (int64_t i = 0; i < a->numel; i++) yd[PAD + a->numel - 1 - i] = 2 * ad[i];
    return FRT_OK;
}
static frt_status scale_rev_select(frt_op_ctx *c, frt_kernel *k) {
    k->name = "test_scale_rev";
    k->fn = scale_rev_run;
    k->out_layouts = rev1;
    return FRT_OK;
}

/* NegRev: Y = -X, both in rev (padding included, so it also checks that padding is there) */
static frt_status neg_rev_run(const frt_step *s, frt_exec *x) {
    const frt_value *a = &x->values[s->in[0]];
    frt_value *y = &x->values[s->out[0]];
    if (a->layout != &rev || y->layout != &rev) return frt_step_fail(s, FRT_ERR_INTERNAL, "layouts");
    const float *ad = a->data;
    float *yd = y->data;
    for (int64_t i = 0; i < a->numel + PAD; i++) yd[i] = -ad[i];
    return FRT_OK;
}
static frt_status neg_rev_select(frt_op_ctx *c, frt_kernel *k) {
    k->name = "test_neg_rev";
    k->fn = neg_rev_run;
    k->in_layouts = rev1;
    k->out_layouts = rev1;
    return FRT_OK;
}

/* To8c: Y = X + 1 written in nChw8c */
static frt_status to8c_run(const frt_step *s, frt_exec *x) {
    const frt_value *a = &x->values[s->in[0]];
    frt_value *y = &x->values[s->out[0]];
    if (a->layout || y->layout != &frt_layout_nchw8c)
        return frt_step_fail(s, FRT_ERR_INTERNAL, "layouts");
    frt_value t = *a;
    t.data = x->scratch;
    for (int64_t i = 0; i < a->numel; i++) ((float *)t.data)[i] = ((const float *)a->data)[i] + 1;
    frt_layout_nchw8c.from_plain(&t, y);
    return FRT_OK;
}
static size_t to8c_scratch(const frt_step *s, const frt_value *v) {
    return frt_value_nbytes(&v[s->in[0]]);
}
static frt_status to8c_select(frt_op_ctx *c, frt_kernel *k) {
    k->name = "test_to8c";
    k->fn = to8c_run;
    k->scratch = to8c_scratch;
    k->out_layouts = blk8;
    return FRT_OK;
}

/* Wants8c: reads X in nChw8c (checks padding is zero), writes Y = X plain */
static frt_status want8c_run(const frt_step *s, frt_exec *x) {
    const frt_value *a = &x->values[s->in[0]];
    frt_value *y = &x->values[s->out[0]];
    if (a->layout != &frt_layout_nchw8c || y->layout) return frt_step_fail(s, FRT_ERR_INTERNAL, "layouts");
    frt_layout_nchw8c.to_plain(a, y);
    return FRT_OK;
}
static frt_status want8c_select(frt_op_ctx *c, frt_kernel *k) {
    k->name = "test_want8c";
    k->fn = want8c_run;
    k->in_layouts = blk8;
    return FRT_OK;
}

#define TEST_OP(name, flags_, infer_fn, select_fn)                                                \
    {.domain = "test", .op_type = name, .since = 1, .max = FRT_OPSET_LATEST, .flags = (flags_),   \
     .family = "test", .infer = infer_fn, .select = select_fn}
static const frt_op_def test_ops[] = {
    TEST_OP("ScaleRev", 0, same_infer, scale_rev_select),
    TEST_OP("NegRev", 0, same_infer, neg_rev_select),
    TEST_OP("To8c", 0, same_infer, to8c_select),
    TEST_OP("Want8c", 0, same_infer, want8c_select),
};

static const frt_op_def *find(void *user, const char *domain, const char *op) {
    (*(int *)user)++;
    if (strcmp(domain, "test") != 0) return NULL;
    for (size_t i = 0; i < sizeof test_ops / sizeof test_ops[0]; i++)
        if (strcmp(test_ops[i].op_type, op) == 0) return &test_ops[i];
    return NULL;
}

static void add_node(ob_buf *g, const char *op, const char *dom, const char *name, const char *in,
                     const char *out) {
    const char *ins[] = {in, NULL}, *outs[] = {out, NULL};
    ob_buf n = ob_node(op, dom, name, ins, outs);
    ob_msg(g, OB_NODE, &n);
}

/*   A = ScaleRev(X)  rev          B = NegRev(A)    rev, graph output (copied to plain)
 *   C = Relu(A)      reads A@plain  D = Neg(A)     reuses A@plain
 *   E = NegRev(X)    reads X@rev, graph output    F = To8c(X) nChw8c
 *   G = NegRev(F)    reads F@rev (nChw8c -> rev)  H = Want8c(F) no reorder; I = Want8c(X) X@nChw8c */
static ob_buf layout_model(void) {
    ob_buf g = {0};
    int64_t dims[4] = {1, 3, 2, 2};
    ob_buf vi = ob_vinfo("X", 1, 4, dims);
    ob_msg(&g, OB_INPUT, &vi);
    add_node(&g, "ScaleRev", "test", "scale", "X", "A");
    add_node(&g, "NegRev", "test", "negA", "A", "B");
    add_node(&g, "Relu", NULL, "relu", "A", "C");
    add_node(&g, "Neg", NULL, "neg", "A", "D");
    add_node(&g, "NegRev", "test", "negX", "X", "E");
    add_node(&g, "To8c", "test", "to8c", "X", "F");
    add_node(&g, "NegRev", "test", "negF", "F", "G");
    add_node(&g, "Want8c", "test", "wantF", "F", "H");
    add_node(&g, "Want8c", "test", "wantX", "X", "I");
    const char *outs[] = {"B", "C", "D", "E", "G", "H", "I"};
    for (int i = 0; i < 7; i++) {
        ob_buf o = ob_vinfo(outs[i], 1, -1, NULL);
        ob_msg(&g, OB_OUTPUT, &o);
    }
    return ob_model(&g);
}

static int32_t value_id(const frt_graph *g, const char *name) {
    for (size_t i = 0; i < g->n_values; i++)
        if (strcmp(g->values[i].name, name) == 0) return (int32_t)i;
    return -1;
}

static void test_pass(frt_planner planner) {
    ob_buf mb = layout_model();
    int calls = 0;
    frt_op_source prov = {find, &calls};
    frt_options opt;
    frt_options_init(&opt);
    opt.planner = planner;
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer_with(mb.p, mb.n, NULL, &opt, &prov, &m));
    CHECK(calls > 0);
    if (!m) {
        free(mb.p);
        return;
    }
    const frt_block *b0 = &m->blocks[0];
    const frt_graph *g = b0->g;
    /* reorders: A@plain (shared by Relu and Neg), X@rev, B and E and G copied to plain for the
       outputs, F@rev for negF, X@nChw8c for wantX; none between To8c and Want8c */
    CHECK_MSG(b0->prog->n_reorders == 7, "%zu reorders", b0->prog->n_reorders);
    size_t n_re = 0;
    for (size_t i = 0; i < b0->prog->n_steps; i++)
        n_re += strcmp(b0->prog->steps[i].ir->op_type, "Reorder") == 0;
    CHECK(n_re == 7);
    CHECK(value_id(g, "A@plain") >= 0 && value_id(g, "X@rev") >= 0 && value_id(g, "F@rev") >= 0);
    CHECK(value_id(g, "X@nChw8c") >= 0 && value_id(g, "B@rev") >= 0 && value_id(g, "F@plain") < 0);
    /* every reader sees the layout it declared; graph outputs are plain */
    for (size_t i = 0; i < b0->prog->n_steps; i++) {
        const frt_step *s = &b0->prog->steps[i];
        for (int j = 0; j < s->n_in; j++) {
            const frt_layout *want = s->k.in_layouts ? s->k.in_layouts[j] : NULL;
            if (strcmp(s->ir->op_type, "Reorder") == 0) continue;
            CHECK_MSG(g->values[s->in[j]].v.layout == want, "step %s input %d", s->ir->name, j);
        }
    }
    for (size_t i = 0; i < g->n_outputs; i++) CHECK(g->values[g->outputs[i]].v.layout == NULL);

    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    float x[12];
    for (int i = 0; i < 12; i++) x[i] = (float)(i - 5) * 0.75f;
    frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 4, .shape = {1, 3, 2, 2}, .data = x,
                     .nbytes = sizeof x};
    const char *names[] = {"X"};
    frt_tensor out[7];
    for (int round = 0; round < 2 && rt; round++) {
        CHECK_OK(frt_run(rt, names, &in, 1, out, 7, FRT_OUTPUTS_BORROW));
        float want[7][12];
        for (int i = 0; i < 12; i++) {
            want[0][i] = -2 * x[i];
            want[1][i] = 2 * x[i] > 0 ? 2 * x[i] : 0;
            want[2][i] = -2 * x[i];
            want[3][i] = -x[i];
            want[4][i] = -(x[i] + 1);
            want[5][i] = x[i] + 1;
            want[6][i] = x[i];
        }
        for (int o = 0; o < 7; o++) {
            CHECK(out[o].nbytes == sizeof x && out[o].rank == 4 && out[o].shape[1] == 3);
            CHECK_MSG(out[o].data && t_close(out[o].data, want[o], 12, 0, 0), "output %d", o);
        }
    }
    /* planned sizes include each layout's padding */
    if (rt) {
        int32_t a = value_id(g, "A"), f = value_id(g, "F"), ap = value_id(g, "A@plain");
        CHECK(rt->v[a].layout == &rev && frt_value_nbytes(&rt->v[a]) == (12 + PAD) * 4);
        CHECK(frt_value_nbytes(&rt->v[f]) == 8 * 4 * 4); /* 3 channels padded to 8 */
        CHECK(frt_value_nbytes(&rt->v[ap]) == 12 * 4);
        size_t n = frt_runtime_plan_size(rt), seen = 0;
        for (size_t i = 0; i < n; i++) {
            frt_plan_entry e;
            CHECK_OK(frt_runtime_plan_entry(rt, i, &e));
            if (strcmp(e.name, "A") == 0) { seen++; CHECK(e.bytes == (12 + PAD) * 4); }
            if (strcmp(e.name, "F") == 0) { seen++; CHECK(e.bytes == 8 * 4 * 4); }
            if (strcmp(e.name, "A@plain") == 0) { seen++; CHECK(e.bytes == 12 * 4); }
        }
        CHECK(seen == 3);
        frt_plan_stats ps;
        CHECK_OK(frt_runtime_plan_stats(rt, &ps));
        CHECK(ps.naive_bytes >= (size_t)(12 + PAD) * 4 + 128);
    }
    frt_runtime_free(rt);
    frt_model_free(m);
    free(mb.p);
}

/* A model of registry ops only gets no reorder; a layout a value cannot hold is an error. */
static void test_plain_and_misfit(void) {
    ob_buf g = {0};
    int64_t dims[2] = {2, 3};
    ob_buf vi = ob_vinfo("X", 1, 2, dims);
    ob_msg(&g, OB_INPUT, &vi);
    add_node(&g, "Relu", NULL, "relu", "X", "Y");
    ob_buf o = ob_vinfo("Y", 1, -1, NULL);
    ob_msg(&g, OB_OUTPUT, &o);
    ob_buf mb = ob_model(&g);
    int calls = 0;
    frt_op_source prov = {find, &calls};
    frt_model *m = NULL;
    CHECK_OK(frt_model_load_buffer_with(mb.p, mb.n, NULL, NULL, &prov, &m));
    if (m) CHECK(m->blocks[0].prog->n_reorders == 0 && m->blocks[0].prog->n_steps == 1);
    frt_model_free(m);
    free(mb.p);

    g = (ob_buf){0};
    vi = ob_vinfo("X", 1, 2, dims);
    ob_msg(&g, OB_INPUT, &vi);
    add_node(&g, "Want8c", "test", "want", "X", "Y");
    o = ob_vinfo("Y", 1, -1, NULL);
    ob_msg(&g, OB_OUTPUT, &o);
    mb = ob_model(&g);
    m = NULL;
    CHECK(frt_model_load_buffer_with(mb.p, mb.n, NULL, NULL, &prov, &m) == FRT_ERR_INTERNAL);
    CHECK_MSG(err_has("cannot be held in layout nChw8c"), "%s", frt_last_error());
    CHECK(m == NULL);
    /* without the op source the test ops do not exist */
    CHECK(frt_model_load_buffer(mb.p, mb.n, NULL, NULL, &m) == FRT_ERR_UNSUPPORTED);
    CHECK_MSG(err_has("test::Want8c"), "%s", frt_last_error());
    free(mb.p);
}

int main(void) {
    setenv("FRT_CHECK_PLAN", "1", 1);
    test_blocked();
    test_pass(FRT_PLANNER_STANDARD);
    test_pass(FRT_PLANNER_GREEDY);
    test_pass(FRT_PLANNER_NONE);
    test_plain_and_misfit();
    printf("test_layout: %d checks, %d failures\n", t_checks, t_failures);
    return t_failures != 0;
}
