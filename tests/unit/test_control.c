/* If, Loop, Scan (src/ops/control.c) on models built in memory, against naive references:
 *   If: same-shape branches (planned outputs) and different-shape branches (run-time-sized),
 *       both branches alternately, an empty cond rejected at run time;
 *   Loop: trip count and condition (stops early), no M (condition only: the scan output grows
 *       past its first buffer), M = 0 and negative, a carried value read from outside, bad M dtype;
 *   Scan: opset 9+ with input/output axes and directions, opset 8 with a batch axis and
 *       sequence_lens, an axis out of range rejected at load. */
#include "runtime/model.h"
#include "onnx_build.h"
#include "test_util.h"

enum { F32 = 1, BOOL_ = 9, I64 = 7 };

static void add(ob_buf *g, ob_buf n) { ob_msg(g, OB_NODE, &n); }
static ob_buf node(const char *op, const char *name, const char *const *ins,
                   const char *const *outs) {
    return ob_node(op, NULL, name, ins, outs);
}
static void input(ob_buf *g, const char *name, int elem, int rank, const int64_t *dims) {
    ob_buf v = ob_vinfo(name, elem, rank, dims);
    ob_msg(g, OB_INPUT, &v);
}
static void output(ob_buf *g, const char *name, int elem, int rank, const int64_t *dims) {
    ob_buf v = ob_vinfo(name, elem, rank, dims);
    ob_msg(g, OB_OUTPUT, &v);
}
static void const_f32(ob_buf *g, const char *name, float v) {
    ob_buf t = ob_tensor_f32(name, NULL, 0, &v);
    ob_msg(g, OB_INIT, &t);
}
/* ModelProto at the given default opset; frees g. */
static ob_buf model_opset(ob_buf *g, int64_t opset) {
    ob_buf m = {0}, o = {0};
    ob_int(&m, 1, 8);
    ob_int(&o, 2, opset);
    ob_msg(&m, 8, &o);
    ob_str(g, 2, "g");
    ob_msg(&m, 7, g);
    return m;
}

static frt_model *load(ob_buf *mb, frt_status want) {
    frt_model *m = NULL;
    frt_status st = frt_model_load_buffer(mb->p, mb->n, NULL, NULL, &m);
    free(mb->p);
    CHECK_MSG(st == want, "load: %d (%s), expected %d", (int)st, frt_last_error(), (int)want);
    return st ? NULL : m;
}

static const char *kernel_of(const frt_model *m, const char *node_name) {
    const frt_program *p = m->blocks[0].prog;
    for (size_t i = 0; i < p->n_steps; i++)
        if (strcmp(p->steps[i].ir->name, node_name) == 0) return p->steps[i].k.name;
    return "";
}

static frt_tensor f32(int rank, const int64_t *shape, float *data) {
    frt_tensor t = {.dtype = FRT_FLOAT32, .rank = rank, .data = data};
    size_t n = 1;
    for (int i = 0; i < rank; i++) t.shape[i] = shape[i], n *= (size_t)shape[i];
    t.nbytes = n * 4;
    return t;
}

/* ---- If ---- */

/* then: y = Relu(x), z = x + x; else: y = Concat(x, Neg(x)) (or Neg(x) when same_shape),
 * z = x * x. x [2,3] from outside, cond an input. */
static ob_buf if_model(bool same_shape) {
    ob_buf g = {0}, thn = {0}, els = {0};
    int64_t xd[2] = {2, 3}, yd[2] = {same_shape ? 2 : 4, 3};
    input(&g, "c", BOOL_, 1, (int64_t[]){-1});
    input(&g, "x", F32, 2, xd);
    add(&thn, node("Relu", "relu", (const char *[]){"x", NULL}, (const char *[]){"ty", NULL}));
    add(&thn, node("Add", "add", (const char *[]){"x", "x", NULL}, (const char *[]){"tz", NULL}));
    output(&thn, "ty", F32, 2, xd);
    output(&thn, "tz", F32, 2, xd);
    ob_str(&thn, 2, "then");
    add(&els, node("Neg", "neg", (const char *[]){"x", NULL}, (const char *[]){"nx", NULL}));
    if (same_shape) {
        add(&els, node("Identity", "id", (const char *[]){"nx", NULL}, (const char *[]){"ey", NULL}));
    } else {
        ob_buf cc = node("Concat", "cat", (const char *[]){"x", "nx", NULL}, (const char *[]){"ey", NULL});
        ob_attr_int(&cc, "axis", 0);
        add(&els, cc);
    }
    add(&els, node("Mul", "mul", (const char *[]){"x", "x", NULL}, (const char *[]){"ez", NULL}));
    output(&els, "ey", F32, 2, yd);
    output(&els, "ez", F32, 2, xd);
    ob_str(&els, 2, "else");
    ob_buf iff = node("If", "if", (const char *[]){"c", NULL}, (const char *[]){"y", "z", NULL});
    ob_attr_graph(&iff, "then_branch", &thn);
    ob_attr_graph(&iff, "else_branch", &els);
    add(&g, iff);
    output(&g, "y", F32, 2, (int64_t[]){-1, 3});
    output(&g, "z", F32, 2, xd);
    return model_opset(&g, 13);
}

static void test_if(bool same_shape) {
    ob_buf mb = if_model(same_shape);
    frt_model *m = load(&mb, FRT_OK);
    if (!m) return;
    CHECK_MSG(strcmp(kernel_of(m, "if"), same_shape ? "if" : "if_dynamic") == 0, "%s",
              kernel_of(m, "if"));
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    float x[6] = {-1.5f, 2, 0, 3.25f, -0.5f, 1};
    int64_t xd[2] = {2, 3};
    for (int r = 0; r < 4 && rt; r++) {
        bool c = r % 2 == 0;
        uint8_t cb = c;
        frt_tensor in[2] = {{.dtype = FRT_BOOL, .rank = 1, .shape = {1}, .data = &cb, .nbytes = 1},
                            f32(2, xd, x)};
        const char *names[] = {"c", "x"};
        frt_tensor out[2];
        CHECK_OK(frt_run(rt, names, in, 2, out, 2, FRT_OUTPUTS_BORROW));
        float wy[12], wz[6];
        int ny = c || same_shape ? 6 : 12;
        for (int i = 0; i < 6; i++) {
            wz[i] = c ? x[i] + x[i] : x[i] * x[i];
            wy[i] = c ? (x[i] > 0 ? x[i] : 0) : same_shape ? -x[i] : x[i];
            if (!c && !same_shape) wy[6 + i] = -x[i];
        }
        CHECK_MSG(out[0].rank == 2 && out[0].shape[0] == ny / 3 && out[0].shape[1] == 3,
                  "run %d: y rank %d dim0 %lld", r, out[0].rank, (long long)out[0].shape[0]);
        CHECK(out[0].nbytes == (size_t)ny * 4 && t_close(out[0].data, wy, (size_t)ny, 0, 0));
        CHECK(out[1].nbytes == 24 && t_close(out[1].data, wz, 6, 0, 0));
    }
    /* an empty cond is an error at run time, not a crash */
    uint8_t cb = 1;
    frt_tensor in[2] = {{.dtype = FRT_BOOL, .rank = 1, .shape = {0}, .data = &cb, .nbytes = 0},
                        f32(2, xd, x)};
    const char *names[] = {"c", "x"};
    frt_tensor out[2];
    CHECK(frt_run(rt, names, in, 2, out, 2, FRT_OUTPUTS_BORROW) == FRT_ERR_RUNTIME);
    CHECK_MSG(strstr(frt_last_error(), "cond"), "%s", frt_last_error());
    frt_runtime_free(rt);
    frt_model_free(m);
}

/* ---- Loop ---- */

/* Loop(M?, cond?, h0 = x[2,3]): body h' = h + x + i (x read from outside), s = h' (scan),
 * cond' = (i != limit) as Cast(limit - float(i) -> bool). */
static ob_buf loop_model(bool with_m, bool with_cond, float limit, int m_dtype) {
    ob_buf g = {0}, body = {0};
    int64_t xd[2] = {2, 3};
    if (with_m) input(&g, "M", m_dtype, 0, NULL);
    if (with_cond) input(&g, "c0", BOOL_, 0, NULL);
    input(&g, "x", F32, 2, xd);
    const_f32(&g, "limit", limit);
    input(&body, "i", I64, 0, NULL);
    input(&body, "cin", BOOL_, 0, NULL);
    input(&body, "h", F32, 2, xd);
    ob_buf cast = node("Cast", "fi", (const char *[]){"i", NULL}, (const char *[]){"fi", NULL});
    ob_attr_int(&cast, "to", F32);
    add(&body, cast);
    add(&body, node("Add", "a1", (const char *[]){"h", "x", NULL}, (const char *[]){"hx", NULL}));
    add(&body, node("Add", "a2", (const char *[]){"hx", "fi", NULL}, (const char *[]){"h2", NULL}));
    add(&body, node("Sub", "left", (const char *[]){"limit", "fi", NULL}, (const char *[]){"left", NULL}));
    ob_buf cb = node("Cast", "cb", (const char *[]){"left", NULL}, (const char *[]){"cout", NULL});
    ob_attr_int(&cb, "to", BOOL_);
    add(&body, cb);
    add(&body, node("Identity", "s", (const char *[]){"h2", NULL}, (const char *[]){"s", NULL}));
    output(&body, "cout", BOOL_, 0, NULL);
    output(&body, "h2", F32, 2, xd);
    output(&body, "s", F32, 2, xd);
    ob_str(&body, 2, "body");
    ob_buf lp = node("Loop", "loop",
                     (const char *[]){with_m ? "M" : "", with_cond ? "c0" : "", "x", NULL},
                     (const char *[]){"h", "s_all", NULL});
    ob_attr_graph(&lp, "body", &body);
    add(&g, lp);
    output(&g, "h", F32, 2, xd);
    output(&g, "s_all", F32, 3, (int64_t[]){-1, 2, 3});
    return model_opset(&g, 13);
}

/* Expected iterations: at most M (INT64_MAX: none), stopping after the iteration whose i ==
 * limit; none when cond0 is false. */
static void check_loop(frt_runtime *rt, int64_t mv, bool with_m, bool cond0, bool with_cond,
                       float limit) {
    float x[6] = {0.5f, -1, 2, 0.25f, 3, -2};
    int64_t xd[2] = {2, 3};
    uint8_t c0 = cond0;
    frt_tensor in[3];
    const char *names[3];
    int k = 0;
    if (with_m) {
        in[k] = (frt_tensor){.dtype = FRT_INT64, .rank = 0, .data = &mv, .nbytes = 8};
        names[k++] = "M";
    }
    if (with_cond) {
        in[k] = (frt_tensor){.dtype = FRT_BOOL, .rank = 0, .data = &c0, .nbytes = 1};
        names[k++] = "c0";
    }
    in[k] = f32(2, xd, x);
    names[k++] = "x";
    frt_tensor out[2];
    CHECK_OK(frt_run(rt, names, in, (size_t)k, out, 2, FRT_OUTPUTS_BORROW));
    float h[6], s[64 * 6];
    memcpy(h, x, sizeof h);
    int64_t n = 0;
    bool cond = with_cond ? cond0 : true;
    for (int64_t i = 0; (!with_m || i < mv) && cond && n < 64; i++) {
        for (int e = 0; e < 6; e++) h[e] = h[e] + x[e] + (float)i, s[n * 6 + e] = h[e];
        n++;
        cond = limit - (float)i != 0;
    }
    CHECK(t_close(out[0].data, h, 6, 1e-6f, 0));
    CHECK_MSG(out[1].rank == 3 && out[1].shape[0] == n && out[1].shape[1] == 2 &&
                  out[1].nbytes == (size_t)n * 24,
              "M %lld: s_all dim0 %lld, expected %lld", (long long)mv, (long long)out[1].shape[0],
              (long long)n);
    if (out[1].shape[0] == n) CHECK(t_close(out[1].data, s, (size_t)n * 6, 1e-6f, 0));
}

static void test_loop(void) {
    /* M and cond: stops at i == 3 (4 iterations) unless M is smaller */
    ob_buf mb = loop_model(true, true, 3.0f, I64);
    frt_model *m = load(&mb, FRT_OK);
    frt_runtime *rt = NULL;
    if (m) CHECK_OK(frt_runtime_create(m, &rt));
    if (rt) {
        CHECK(strcmp(kernel_of(m, "loop"), "loop_dynamic") == 0);
        const int64_t ms[] = {10, 2, 0, -3, 4, 10};
        for (int r = 0; r < 6; r++) check_loop(rt, ms[r], true, true, true, 3.0f);
        check_loop(rt, 10, true, false, true, 3.0f); /* cond false: no iteration */
    }
    frt_runtime_free(rt);
    frt_model_free(m);

    /* condition only: 21 iterations, past the scan output's first buffer (16) */
    mb = loop_model(false, false, 20.0f, I64);
    m = load(&mb, FRT_OK);
    rt = NULL;
    if (m) CHECK_OK(frt_runtime_create(m, &rt));
    if (rt) {
        check_loop(rt, 0, false, true, false, 20.0f);
        check_loop(rt, 0, false, true, false, 20.0f);
    }
    frt_runtime_free(rt);
    frt_model_free(m);

    /* M must be int64 */
    mb = loop_model(true, false, 3.0f, F32);
    m = load(&mb, FRT_ERR_MALFORMED);
    CHECK_MSG(strstr(frt_last_error(), "trip count"), "%s", frt_last_error());
    frt_model_free(m);
}

/* ---- Scan ---- */

/* opset 9+: state sum [3] (+= the slice), scan input x [3, T] along axis 1 (reversed when rev),
 * scan output y = sum after each step, along output axis 1 ([3, T], reversed when orev). */
static ob_buf scan9_model(int64_t in_axis, int rev, int orev) {
    ob_buf g = {0}, body = {0};
    input(&g, "s0", F32, 1, (int64_t[]){3});
    input(&g, "x", F32, 2, (int64_t[]){3, -1});
    input(&body, "s", F32, 1, (int64_t[]){3});
    input(&body, "xt", F32, 1, (int64_t[]){3});
    add(&body, node("Add", "add", (const char *[]){"s", "xt", NULL}, (const char *[]){"s2", NULL}));
    add(&body, node("Identity", "id", (const char *[]){"s2", NULL}, (const char *[]){"y", NULL}));
    output(&body, "s2", F32, 1, (int64_t[]){3});
    output(&body, "y", F32, 1, (int64_t[]){3});
    ob_str(&body, 2, "body");
    ob_buf sc = node("Scan", "scan", (const char *[]){"s0", "x", NULL},
                     (const char *[]){"sf", "ys", NULL});
    ob_attr_graph(&sc, "body", &body);
    ob_attr_int(&sc, "num_scan_inputs", 1);
    ob_attr_ints(&sc, "scan_input_axes", &in_axis, 1);
    ob_attr_ints(&sc, "scan_input_directions", (int64_t[]){rev}, 1);
    ob_attr_ints(&sc, "scan_output_axes", (int64_t[]){-1}, 1);
    ob_attr_ints(&sc, "scan_output_directions", (int64_t[]){orev}, 1);
    add(&g, sc);
    output(&g, "sf", F32, 1, (int64_t[]){3});
    output(&g, "ys", F32, 2, (int64_t[]){3, -1});
    return model_opset(&g, 11);
}

static void test_scan9(int rev, int orev) {
    ob_buf mb = scan9_model(1, rev, orev);
    frt_model *m = load(&mb, FRT_OK);
    frt_runtime *rt = NULL;
    if (m) CHECK_OK(frt_runtime_create(m, &rt));
    for (int T = 5; rt && T >= 0; T -= 2) { /* 5, 3, 1 steps (shapes change between runs) */
        float s0[3] = {1, -2, 0.5f}, x[15];
        for (int i = 0; i < 3 * T; i++) x[i] = (float)((i * 5) % 7) - 3.0f;
        frt_tensor in[2] = {f32(1, (int64_t[]){3}, s0), f32(2, (int64_t[]){3, T}, x)};
        const char *names[] = {"s0", "x"};
        frt_tensor out[2];
        CHECK_OK(frt_run(rt, names, in, 2, out, 2, FRT_OUTPUTS_BORROW));
        float s[3] = {s0[0], s0[1], s0[2]}, y[15];
        for (int t = 0; t < T; t++) {
            int ti = rev ? T - 1 - t : t, to = orev ? T - 1 - t : t;
            for (int r = 0; r < 3; r++) s[r] += x[r * T + ti], y[r * T + to] = s[r];
        }
        CHECK(t_close(out[0].data, s, 3, 1e-6f, 0));
        CHECK(out[1].rank == 2 && out[1].shape[0] == 3 && out[1].shape[1] == T);
        CHECK(t_close(out[1].data, y, (size_t)(3 * T), 1e-6f, 0));
    }
    frt_runtime_free(rt);
    frt_model_free(m);
    /* an axis beyond the input's rank is refused at load */
    mb = scan9_model(2, rev, orev);
    m = load(&mb, FRT_ERR_MALFORMED);
    CHECK_MSG(strstr(frt_last_error(), "axis"), "%s", frt_last_error());
    frt_model_free(m);
}

/* opset 8: batch axis 0. sequence_lens [B], state [B,2], x [B,T,2] (directions [1] when rev);
 * body: s' = s * x_t, y = s'. */
static void test_scan8(bool rev) {
    ob_buf g = {0}, body = {0};
    input(&g, "lens", I64, 1, (int64_t[]){2});
    input(&g, "s0", F32, 2, (int64_t[]){2, 2});
    input(&g, "x", F32, 3, (int64_t[]){2, 4, 2});
    input(&body, "s", F32, 1, (int64_t[]){2});
    input(&body, "xt", F32, 1, (int64_t[]){2});
    add(&body, node("Mul", "mul", (const char *[]){"s", "xt", NULL}, (const char *[]){"s2", NULL}));
    add(&body, node("Identity", "id", (const char *[]){"s2", NULL}, (const char *[]){"y", NULL}));
    output(&body, "s2", F32, 1, (int64_t[]){2});
    output(&body, "y", F32, 1, (int64_t[]){2});
    ob_str(&body, 2, "body");
    ob_buf sc = node("Scan", "scan", (const char *[]){"lens", "s0", "x", NULL},
                     (const char *[]){"sf", "ys", NULL});
    ob_attr_graph(&sc, "body", &body);
    ob_attr_int(&sc, "num_scan_inputs", 1);
    if (rev) ob_attr_ints(&sc, "directions", (int64_t[]){1}, 1);
    add(&g, sc);
    output(&g, "sf", F32, 2, (int64_t[]){2, 2});
    output(&g, "ys", F32, 3, (int64_t[]){2, 4, 2});
    ob_buf mb = model_opset(&g, 8);
    frt_model *m = load(&mb, FRT_OK);
    frt_runtime *rt = NULL;
    if (m) CHECK_OK(frt_runtime_create(m, &rt));
    if (rt) {
        int64_t lens[2] = {4, 2};
        float s0[4] = {1, 2, -1, 0.5f}, x[16];
        for (int i = 0; i < 16; i++) x[i] = 0.5f + (float)(i % 5) * 0.25f;
        frt_tensor in[3] = {{.dtype = FRT_INT64, .rank = 1, .shape = {2}, .data = lens, .nbytes = 16},
                            f32(2, (int64_t[]){2, 2}, s0), f32(3, (int64_t[]){2, 4, 2}, x)};
        const char *names[] = {"lens", "s0", "x"};
        frt_tensor out[2];
        CHECK_OK(frt_run(rt, names, in, 3, out, 2, FRT_OUTPUTS_BORROW));
        float sf[4], ys[16] = {0};
        for (int b = 0; b < 2; b++) {
            float s[2] = {s0[b * 2], s0[b * 2 + 1]};
            for (int t = 0; t < lens[b]; t++) {
                int ti = rev ? (int)lens[b] - 1 - t : t;
                for (int e = 0; e < 2; e++) s[e] *= x[(b * 4 + ti) * 2 + e], ys[(b * 4 + t) * 2 + e] = s[e];
            }
            sf[b * 2] = s[0], sf[b * 2 + 1] = s[1];
        }
        CHECK(t_close(out[0].data, sf, 4, 1e-6f, 0));
        CHECK(out[1].rank == 3 && out[1].shape[0] == 2 && out[1].shape[1] == 4 && out[1].shape[2] == 2);
        CHECK(t_close(out[1].data, ys, 16, 1e-6f, 0));
        /* a length beyond the sequence is a run-time error */
        lens[1] = 5;
        CHECK(frt_run(rt, names, in, 3, out, 2, FRT_OUTPUTS_BORROW) == FRT_ERR_RUNTIME);
        CHECK_MSG(strstr(frt_last_error(), "sequence_lens"), "%s", frt_last_error());
    }
    frt_runtime_free(rt);
    frt_model_free(m);
}

int main(void) {
    setenv("FRT_CHECK_PLAN", "1", 1);
    test_if(true);
    test_if(false);
    test_loop();
    for (int r = 0; r < 4; r++) test_scan9(r & 1, r >> 1);
    test_scan8(false);
    test_scan8(true);
    printf("test_control: %d checks, %d failures\n", t_checks, t_failures);
    return t_failures != 0;
}
