/* Runtime tests on the tiny hand-built models (tests/models/make_tiny_models.py): dynamic shape
 * subgraphs, folding, external data, unsupported-op errors, view aliasing, input validation,
 * clones, and concurrent runtimes sharing one model.
 * Usage: test_runtime TINY_DIR */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../../tools/tensor_io.h"
#include "../unit/test_util.h"
#include "flatrt.h"

static const char *g_dir;

static frt_model *load(const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.onnx", g_dir, name);
    frt_model *m = NULL;
    frt_status st = frt_model_load(path, NULL, &m);
    CHECK_MSG(st == FRT_OK, "%s: %s", name, frt_last_error());
    return m;
}

static int load_npy(const char *name, const char *sub, const char *tensor, frt_tensor *t) {
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/%s/%s/%s.npy", g_dir, name, sub, tensor);
    if (tio_load(path, t, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

/* Runs model `name` on in/<inputs> and compares each output with ref/. */
static void check_model_refs(const char *name, const char *in_sub, const char *ref_sub) {
    frt_model *m = load(name);
    if (!m) return;
    frt_runtime *rt;
    CHECK_OK(frt_runtime_create(m, &rt));
    size_t ni = frt_model_num_inputs(m), no = frt_model_num_outputs(m);
    frt_tensor in[8] = {{0}}, out[8] = {{0}};
    const char *names[8];
    for (size_t i = 0; i < ni; i++) {
        frt_tensor_info info;
        frt_model_input(m, i, &info);
        names[i] = info.name;
        CHECK(load_npy(name, in_sub, info.name, &in[i]) == 0);
    }
    CHECK_OK(frt_run(rt, names, in, ni, out, no, FRT_OUTPUTS_ALLOC));
    for (size_t i = 0; i < no; i++) {
        frt_tensor_info info;
        frt_model_output(m, i, &info);
        frt_tensor ref = {0};
        if (load_npy(name, ref_sub, info.name, &ref) != 0) {
            CHECK(0);
            continue;
        }
        CHECK_MSG(out[i].rank == ref.rank && frt_tensor_numel(&out[i]) == frt_tensor_numel(&ref),
                  "%s output %s shape", name, info.name);
        if (ref.dtype == FRT_FLOAT32 && out[i].dtype == FRT_FLOAT32 &&
            frt_tensor_numel(&out[i]) == frt_tensor_numel(&ref))
            CHECK_MSG(t_close(out[i].data, ref.data, (size_t)frt_tensor_numel(&ref), 1e-5f, 1e-5f),
                      "%s output %s", name, info.name);
        else
            CHECK_MSG(out[i].nbytes == ref.nbytes && memcmp(out[i].data, ref.data, ref.nbytes) == 0,
                      "%s output %s", name, info.name);
        tio_tensor_free(&ref);
        frt_tensor_release(&out[i]);
    }
    for (size_t i = 0; i < ni; i++) tio_tensor_free(&in[i]);
    frt_runtime_free(rt);
    frt_model_free(m);
}

/* shape_dynamic: y = relu(reshape(x, [batch, 12])) for any batch, via a shape subgraph. */
static void test_dynamic_batch(void) {
    frt_model *m = load("shape_dynamic");
    if (!m) return;
    frt_tensor_info info;
    CHECK_OK(frt_model_input(m, 0, &info));
    CHECK(info.rank == 3 && info.shape[0] == -1 && info.dim_names[0] &&
          strcmp(info.dim_names[0], "batch") == 0);
    frt_runtime *rt;
    CHECK_OK(frt_runtime_create(m, &rt));
    const int batches[] = {2, 5, 1, 5, 7, 2};
    float x[7 * 12], y[7 * 12];
    for (size_t r = 0; r < sizeof batches / sizeof batches[0]; r++) {
        int b = batches[r];
        for (int i = 0; i < b * 12; i++) x[i] = (float)((i * 7 + r) % 11) - 5.0f;
        frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 3, .shape = {b, 3, 4}, .data = x,
                         .nbytes = (size_t)b * 12 * 4};
        frt_tensor out = {.data = y, .nbytes = sizeof y};
        const char *name = info.name;
        CHECK_OK(frt_run(rt, &name, &in, 1, &out, 1, FRT_OUTPUTS_CALLER));
        CHECK(out.rank == 2 && out.shape[0] == b && out.shape[1] == 12);
        int ok = 1;
        for (int i = 0; i < b * 12; i++) ok &= y[i] == (x[i] > 0 ? x[i] : 0);
        CHECK_MSG(ok, "batch %d", b);
    }
    frt_plan_stats ps;
    CHECK_OK(frt_runtime_plan_stats(rt, &ps));
    CHECK(ps.shape_bytes > 0); /* the shape chain ran while resolving shapes */
    frt_runtime_free(rt);
    frt_model_free(m);
}

static void test_static_folds(void) {
    frt_model *m = load("shape_static");
    if (!m) return;
    frt_model_stats s;
    frt_model_get_stats(m, &s);
    CHECK_MSG(s.num_folded >= 4, "folded %zu", s.num_folded); /* Shape Gather Unsqueeze Concat */
    CHECK(s.num_steps <= 2);                                  /* Reshape (view) + Relu */
    frt_model_free(m);
    check_model_refs("shape_static", "in", "ref");
}

static void test_unsupported(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/unsupported_ops.onnx", g_dir);
    frt_model *m = NULL;
    frt_status st = frt_model_load(path, NULL, &m);
    CHECK(st == FRT_ERR_UNSUPPORTED && m == NULL);
    const char *e = frt_last_error();
    CHECK_MSG(strstr(e, "Multinomial") && strstr(e, "MaxRoiPool") && !strstr(e, "Relu"), "%s", e);
    CHECK_MSG(strstr(e, "2 nodes") != NULL, "%s", e);
}

/* frt_desc: a model this build cannot compile is still described (unsupported nodes named), and a
 * loaded model reports the kernel per node, inferred shapes and formatted attributes. */
static void test_describe(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/unsupported_ops.onnx", g_dir);
    frt_desc *d = NULL;
    CHECK_OK(frt_desc_create(path, NULL, &d));
    if (d) {
        frt_desc_info info;
        frt_desc_get_info(d, &info);
        CHECK(info.compiled == 0 && info.num_nodes == 5 && info.opset == 13);
        CHECK(info.num_inputs == 2 && info.num_outputs == 2 && info.num_initializers == 1);
        int unsupported = 0;
        for (size_t i = 0; i < info.num_nodes; i++) {
            frt_desc_node n;
            CHECK_OK(frt_desc_node_get(d, i, &n));
            bool bad = !strcmp(n.op_type, "Multinomial") || !strcmp(n.op_type, "MaxRoiPool");
            CHECK_MSG(n.supported == !bad, "%s supported=%d", n.name, n.supported);
            if (bad) {
                unsupported++;
                CHECK(n.kernel && !strcmp(n.kernel, "(unsupported)"));
            }
            if (!strcmp(n.op_type, "MaxRoiPool")) {
                frt_desc_attr a;
                CHECK(n.num_attrs == 1);
                CHECK_OK(frt_desc_node_attr(d, i, 0, &a));
                CHECK_MSG(!strcmp(a.name, "pooled_shape") && !strcmp(a.text, "[2,2]") &&
                              !strcmp(a.json, "[2, 2]"),
                          "%s=%s / %s", a.name, a.text, a.json);
                frt_tensor_info v;
                CHECK_OK(frt_desc_node_value(d, i, 1, 0, &v));
                CHECK(!strcmp(v.name, "pooled") && v.rank == 4 && v.shape[2] == 2);
            }
        }
        CHECK(unsupported == 3);
        frt_desc_node n;
        CHECK(frt_desc_node_get(d, info.num_nodes, &n) != FRT_OK); /* past the end */
        frt_desc_attr a;
        CHECK(frt_desc_node_attr(d, 0, 5, &a) != FRT_OK);
        frt_tensor_info v;
        CHECK(frt_desc_node_value(d, 0, 0, 3, &v) != FRT_OK);
        CHECK(frt_desc_input(d, 2, &v) != FRT_OK);
        frt_desc_free(d);
    }
    d = NULL;
    snprintf(path, sizeof path, "%s/no_such_model.onnx", g_dir);
    CHECK(frt_desc_create(path, NULL, &d) != FRT_OK && d == NULL);

    frt_model *m = load("shape_static");
    if (!m) return;
    CHECK_OK(frt_desc_create(NULL, m, &d));
    if (d) {
        frt_desc_info info;
        frt_desc_get_info(d, &info);
        CHECK(info.compiled == 1 && info.num_nodes == 6);
        int folded = 0, views = 0, kernels = 0;
        for (size_t i = 0; i < info.num_nodes; i++) {
            frt_desc_node n;
            CHECK_OK(frt_desc_node_get(d, i, &n));
            CHECK(n.supported && n.kernel);
            if (!n.kernel) continue;
            folded += !strcmp(n.kernel, "(folded)");
            views += !strcmp(n.kernel, "(view)");
            if (!strcmp(n.op_type, "Relu")) {
                kernels += n.kernel[0] != '(' && strstr(n.kernel, "relu") != NULL;
                frt_tensor_info v;
                CHECK_OK(frt_desc_node_value(d, i, 1, 0, &v));
                CHECK(v.rank == 2 && v.shape[0] == 2 && v.shape[1] == 12 && v.dtype == FRT_FLOAT32);
            }
        }
        CHECK_MSG(folded == 4 && views == 1 && kernels == 1, "folded %d views %d relu %d", folded,
                  views, kernels);
        frt_desc_free(d);
    }
    frt_model_free(m);
}

/* num_threads outside 1..FRT_MAX_THREADS is rejected, never clamped. */
static void test_bad_options(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/shape_dynamic.onnx", g_dir);
    const int32_t bad[] = {0, -1, -100, FRT_MAX_THREADS + 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        frt_options opt;
        frt_options_init(&opt);
        opt.num_threads = bad[i];
        frt_model *m = NULL;
        CHECK(frt_model_load(path, &opt, &m) == FRT_ERR_INVALID_ARGUMENT && m == NULL);
        CHECK_MSG(strstr(frt_last_error(), "num_threads") != NULL, "%s", frt_last_error());
    }
    frt_options opt;
    frt_options_init(&opt);
    opt.num_threads = FRT_MAX_THREADS;
    frt_model *m = NULL;
    CHECK_OK(frt_model_load(path, &opt, &m));
    frt_model_free(m);
}

static void test_bad_inputs(void) {
    frt_model *m = load("shape_dynamic");
    if (!m) return;
    frt_runtime *rt;
    CHECK_OK(frt_runtime_create(m, &rt));
    float x[24] = {0}, y[24];
    frt_tensor out = {.data = y, .nbytes = sizeof y};
    frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 3, .shape = {2, 3, 4}, .data = x, .nbytes = sizeof x};
    const char *bad = "nope";
    CHECK(frt_run(rt, &bad, &in, 1, &out, 1, FRT_OUTPUTS_CALLER) == FRT_ERR_INVALID_ARGUMENT);
    CHECK(strstr(frt_last_error(), "nope") != NULL);
    frt_tensor_info info;
    frt_model_input(m, 0, &info);
    const char *name = info.name;
    frt_tensor w = in;
    w.dtype = FRT_INT64;
    CHECK(frt_run(rt, &name, &w, 1, &out, 1, FRT_OUTPUTS_CALLER) == FRT_ERR_INVALID_ARGUMENT);
    CHECK(strstr(frt_last_error(), "dtype") != NULL);
    w = in;
    w.rank = 2;
    CHECK(frt_run(rt, &name, &w, 1, &out, 1, FRT_OUTPUTS_CALLER) == FRT_ERR_INVALID_ARGUMENT);
    CHECK(strstr(frt_last_error(), "rank") != NULL);
    w = in;
    w.shape[2] = 5;
    CHECK(frt_run(rt, &name, &w, 1, &out, 1, FRT_OUTPUTS_CALLER) == FRT_ERR_INVALID_ARGUMENT);
    /* the message names the offending dim with both values, not two identical shapes */
    CHECK_MSG(strstr(frt_last_error(), "dim 2 is 5, the model fixes it to 4") != NULL, "%s",
              frt_last_error());
    w = in;
    w.shape[0] = -2;
    CHECK(frt_run(rt, &name, &w, 1, &out, 1, FRT_OUTPUTS_CALLER) == FRT_ERR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(frt_last_error(), "dim 0 of [-2,3,4] is negative") != NULL, "%s",
              frt_last_error());
    w = in;
    w.data = NULL;
    CHECK(frt_run(rt, &name, &w, 1, &out, 1, FRT_OUTPUTS_CALLER) == FRT_ERR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(frt_last_error(), "data is NULL") != NULL, "%s", frt_last_error());
    w = in;
    w.nbytes = 8;
    CHECK(frt_run(rt, &name, &w, 1, &out, 1, FRT_OUTPUTS_CALLER) == FRT_ERR_INVALID_ARGUMENT);
    CHECK(frt_run(rt, NULL, NULL, 0, &out, 1, FRT_OUTPUTS_CALLER) == FRT_ERR_INVALID_ARGUMENT);
    CHECK(strstr(frt_last_error(), "missing input") != NULL);
    frt_tensor small = {.data = y, .nbytes = 4};
    CHECK(frt_run(rt, &name, &in, 1, &small, 1, FRT_OUTPUTS_CALLER) == FRT_ERR_INVALID_ARGUMENT);
    /* after errors, a good run still works */
    CHECK_OK(frt_run(rt, &name, &in, 1, &out, 1, FRT_OUTPUTS_CALLER));
    frt_runtime_free(rt);
    frt_model_free(m);
}

typedef struct worker {
    const frt_model *m;
    int id, ok;
} worker;

static void *worker_main(void *arg) {
    worker *w = arg;
    frt_runtime *rt;
    w->ok = 0;
    if (frt_runtime_create(w->m, &rt) != FRT_OK) return NULL;
    frt_tensor_info info;
    frt_model_input(w->m, 0, &info);
    const char *name = info.name;
    float x[6 * 12], y[6 * 12];
    int ok = 1;
    for (int it = 0; it < 200; it++) {
        int b = 1 + (it + w->id) % 6;
        for (int i = 0; i < b * 12; i++) x[i] = (float)(i % 5) - 2.0f + (float)w->id;
        frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 3, .shape = {b, 3, 4}, .data = x,
                         .nbytes = (size_t)b * 48};
        frt_tensor out = {.data = y, .nbytes = sizeof y};
        if (frt_run(rt, &name, &in, 1, &out, 1, FRT_OUTPUTS_CALLER) != FRT_OK) {
            ok = 0;
            break;
        }
        for (int i = 0; i < b * 12; i++) ok &= y[i] == (x[i] > 0 ? x[i] : 0);
    }
    frt_runtime_free(rt);
    w->ok = ok;
    return NULL;
}

static void test_threads_and_clone(void) {
    frt_model *m = load("shape_dynamic");
    if (!m) return;
    pthread_t th[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){m, i, 0};
        pthread_create(&th[i], NULL, worker_main, &w[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK_MSG(w[i].ok, "worker %d", i);
    }
    frt_runtime *a, *b;
    CHECK_OK(frt_runtime_create(m, &a));
    float x[24];
    for (int i = 0; i < 24; i++) x[i] = (float)i - 10;
    frt_tensor_info info;
    frt_model_input(m, 0, &info);
    const char *name = info.name;
    frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 3, .shape = {2, 3, 4}, .data = x, .nbytes = sizeof x};
    CHECK_OK(frt_runtime_reshape(a, &name, &in, 1));
    CHECK_OK(frt_runtime_clone(a, &b));
    frt_plan_stats sa, sb;
    CHECK_OK(frt_runtime_plan_stats(a, &sa));
    CHECK_OK(frt_runtime_plan_stats(b, &sb));
    CHECK(sa.arena_bytes == sb.arena_bytes);
    frt_tensor out = {0};
    CHECK_OK(frt_run(b, &name, &in, 1, &out, 1, FRT_OUTPUTS_BORROW));
    CHECK(out._owner == NULL && out.data != NULL && ((float *)out.data)[23] == 13.0f);
    frt_runtime_free(a);
    frt_runtime_free(b);
    frt_model_free(m);
}

/* manage_outputs: outputs point into the runtime's output arena without a copy; an arena still
 * held by the caller is never overwritten and outlives the runtime. */
static void test_managed_outputs(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/shape_dynamic.onnx", g_dir);
    frt_options opt;
    frt_options_init(&opt);
    opt.manage_outputs = 1;
    frt_model *m;
    CHECK_OK(frt_model_load(path, &opt, &m));
    if (!m) return;
    frt_runtime *rt;
    CHECK_OK(frt_runtime_create(m, &rt));
    frt_tensor_info info;
    frt_model_input(m, 0, &info);
    const char *name = info.name;
    float x1[24], x2[24];
    for (int i = 0; i < 24; i++) x1[i] = (float)i, x2[i] = (float)(100 + i);
    frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 3, .shape = {2, 3, 4}, .data = x1, .nbytes = sizeof x1};
    frt_tensor a = {0}, b = {0}, c = {0};
    CHECK_OK(frt_run(rt, &name, &in, 1, &a, 1, FRT_OUTPUTS_ALLOC));
    in.data = x2;
    CHECK_OK(frt_run(rt, &name, &in, 1, &b, 1, FRT_OUTPUTS_ALLOC));
    CHECK(a._owner && b._owner && a.data != b.data);
    CHECK(a.data && ((float *)a.data)[23] == 23.0f);     /* first run's result intact */
    CHECK(b.data && ((float *)b.data)[23] == 123.0f);
    void *bdata = b.data;
    frt_tensor_release(&a);
    frt_tensor_release(&b);
    CHECK(a.data == NULL && b.data == NULL);
    /* both released: the runtime reuses its current arena */
    CHECK_OK(frt_run(rt, &name, &in, 1, &c, 1, FRT_OUTPUTS_ALLOC));
    CHECK(c.data == bdata);
    frt_runtime_free(rt); /* c keeps the arena alive */
    CHECK(((float *)c.data)[0] == 100.0f);
    frt_tensor_release(&c);
    frt_model_free(m);
}

/* Tracing the tiny Loop model (M = 5): one event per executed step, the body's steps nested in
 * the Loop step's interval at depth 1, shapes and bytes, a full buffer counted as dropped, and
 * the JSON file. */
static void test_trace(void) {
    frt_model *m = load("control_loop");
    if (!m) return;
    frt_runtime *rt;
    CHECK_OK(frt_runtime_create(m, &rt));
    frt_tensor in[2] = {{0}}, out[2] = {{0}};
    const char *names[2] = {"M", "x"};
    CHECK(load_npy("control_loop", "in", "M", &in[0]) == 0);
    CHECK(load_npy("control_loop", "in", "x", &in[1]) == 0);
    CHECK(frt_runtime_set_trace(NULL, 10) == FRT_ERR_INVALID_ARGUMENT);
    CHECK_OK(frt_runtime_set_trace(rt, 1000));
    CHECK_OK(frt_run(rt, names, in, 2, out, 2, FRT_OUTPUTS_BORROW));
    uint64_t dropped = 99;
    size_t n = frt_runtime_trace_size(rt, &dropped);
    CHECK(dropped == 0);
    int loops = 0, body = 0, squares = 0;
    frt_trace_event loop_ev = {0}, ev;
    for (size_t i = 0; i < n; i++) {
        CHECK_OK(frt_runtime_trace_event(rt, i, &ev));
        if (!strcmp(ev.op_type, "Loop")) {
            loops++;
            loop_ev = ev;
            CHECK(ev.depth == 0 && ev.block == 0);
        }
    }
    CHECK_MSG(loops == 1, "%d Loop events", loops);
    for (size_t i = 0; i < n; i++) {
        frt_trace_event e;
        CHECK_OK(frt_runtime_trace_event(rt, i, &e));
        CHECK(e.node_name && e.kernel && e.thread_id == loop_ev.thread_id);
        if (e.depth != 1) continue;
        body++;
        CHECK(e.block > 0);
        CHECK(e.start_ns >= loop_ev.start_ns &&
              e.start_ns + e.dur_ns <= loop_ev.start_ns + loop_ev.dur_ns);
        if (!strcmp(e.node_name, "square")) {
            squares++;
            CHECK(e.rank == 2 && e.shape[0] == 2 && e.shape[1] == 3);
            CHECK(e.in_bytes == 48 && e.out_bytes == 24);
        }
    }
    CHECK_MSG(squares == 5 && body % 5 == 0 && body >= 20, "%d body events, %d squares", body,
              squares);
    CHECK(frt_runtime_trace_event(rt, n, &ev) == FRT_ERR_INVALID_ARGUMENT);
    /* a second run appends */
    CHECK_OK(frt_run(rt, names, in, 2, out, 2, FRT_OUTPUTS_BORROW));
    CHECK(frt_runtime_trace_size(rt, NULL) == 2 * n);
    /* the JSON file: one complete event per record */
    char path[1100];
    snprintf(path, sizeof path, "%s/trace_test.json", g_dir);
    CHECK_OK(frt_runtime_write_trace(rt, path));
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (f) {
        char line[4096];
        size_t xs = 0;
        while (fgets(line, sizeof line, f)) xs += strstr(line, "\"ph\":\"X\"") != NULL;
        fclose(f);
        CHECK_MSG(xs == 2 * n, "%zu complete events in the file, %zu recorded", xs, 2 * n);
    }
    remove(path);
    CHECK(frt_runtime_write_trace(rt, "/nonexistent-dir/t.json") == FRT_ERR_IO);
    /* a full buffer counts what did not fit */
    CHECK_OK(frt_runtime_set_trace(rt, 3));
    CHECK_OK(frt_run(rt, names, in, 2, out, 2, FRT_OUTPUTS_BORROW));
    CHECK(frt_runtime_trace_size(rt, &dropped) == 3 && dropped == n - 3);
    frt_runtime_trace_clear(rt);
    CHECK(frt_runtime_trace_size(rt, &dropped) == 0 && dropped == 0);
    /* off: nothing recorded */
    CHECK_OK(frt_runtime_set_trace(rt, 0));
    CHECK_OK(frt_run(rt, names, in, 2, out, 2, FRT_OUTPUTS_BORROW));
    CHECK(frt_runtime_trace_size(rt, NULL) == 0);
    for (int i = 0; i < 2; i++) tio_tensor_free(&in[i]);
    frt_runtime_free(rt);
    frt_model_free(m);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_runtime TINY_DIR\n");
        return 2;
    }
    g_dir = argv[1];
    test_dynamic_batch();
    test_static_folds();
    test_unsupported();
    test_describe();
    test_bad_inputs();
    test_bad_options();
    test_threads_and_clone();
    test_managed_outputs();
    test_trace();
    check_model_refs("shape_dynamic", "in", "ref");
    check_model_refs("shape_dynamic", "in5", "ref5");
    check_model_refs("external_gemm", "in", "ref");
    check_model_refs("view_alias", "in", "ref");
    check_model_refs("io_passthrough", "in", "ref");
    check_model_refs("const_outputs", "in", "ref");
    TEST_MAIN_END();
}
