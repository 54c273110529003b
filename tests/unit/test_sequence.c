/* Sequence and optional values (src/ops/sequence.c, src/ir/seq.c, frt_run_values) on models built
 * in memory, against hand-computed references:
 *   SequenceLength/Insert/At/Erase/ConcatFromSequence on a sequence graph input, positions at the
 *     front, middle, back and negative, out-of-range positions rejected at run time;
 *   SplitToSequence (no split with keepdims 0, scalar split with a short last chunk, split list)
 *     and ConcatFromSequence with new_axis, bad split lengths rejected at run time;
 *   SequenceEmpty, SequenceConstruct, Identity of a sequence, Optional with and without a value,
 *     OptionalHasElement, OptionalGetElement (an empty optional rejected at run time);
 *   SequenceMap (a sequence and a tensor; sequences of different lengths rejected);
 *   a Loop carrying a sequence (M = 3, 0, 5 in turn: storage reused and grown);
 *   the public API: input/output kinds, frt_run refusing sequences, kind and dtype mismatches,
 *     a tensor model run through frt_run_values;
 *   load errors: a sequence given to a tensor op, SequenceInsert of a different dtype. */
#include "runtime/model.h"
#include "alloc_count.h"
#include "onnx_build.h"
#include "test_util.h"

enum { F32 = 1, I64 = 7, BOOL_ = 9 };

static void add(ob_buf *g, ob_buf n) {
    ob_msg(g, OB_NODE, &n);
}
static ob_buf node(const char *op, const char *const *ins, const char *const *outs) {
    return ob_node(op, NULL, outs[0], ins, outs);
}
#define IN(...) ((const char *[]){__VA_ARGS__, NULL})
#define OUT(...) ((const char *[]){__VA_ARGS__, NULL})

/* TypeProto of a tensor (rank < 0: no shape). */
static ob_buf tensor_type(int elem, int rank, const int64_t *dims) {
    ob_buf type = {0}, tt = {0};
    ob_int(&tt, 1, elem);
    if (rank >= 0) {
        ob_buf shape = {0};
        for (int i = 0; i < rank; i++) {
            ob_buf dim = {0};
            if (dims[i] >= 0) ob_int(&dim, 1, dims[i]);
            ob_msg(&shape, 1, &dim);
        }
        ob_msg(&tt, 2, &shape);
    }
    ob_msg(&type, 1, &tt);
    return type;
}
/* TypeProto of a sequence (field 4) or optional (field 9) of `inner`; frees inner. */
static ob_buf wrap_type(int field, ob_buf *inner) {
    ob_buf type = {0}, w = {0};
    ob_msg(&w, 1, inner);
    ob_msg(&type, (uint32_t)field, &w);
    return type;
}
static ob_buf seq_type(int elem) {
    ob_buf t = tensor_type(elem, -1, NULL);
    return wrap_type(4, &t);
}
static void value(ob_buf *g, int part, const char *name, ob_buf *type) {
    ob_buf vi = {0};
    ob_str(&vi, 1, name);
    ob_msg(&vi, 2, type);
    ob_msg(g, (uint32_t)part, &vi);
}
static void tensor_io(ob_buf *g, int part, const char *name, int elem, int rank,
                      const int64_t *dims) {
    ob_buf t = tensor_type(elem, rank, dims);
    value(g, part, name, &t);
}
static void seq_io(ob_buf *g, int part, const char *name, int elem) {
    ob_buf t = seq_type(elem);
    value(g, part, name, &t);
}
static void const_i64(ob_buf *g, const char *name, int rank, const int64_t *dims, int n,
                      const int64_t *v) {
    ob_buf t = {0};
    for (int i = 0; i < rank; i++)
        ob_int(&t, 1, dims[i]);
    ob_int(&t, 2, I64);
    ob_str(&t, 8, name);
    ob_bytes(&t, 9, v, (size_t)n * 8);
    ob_msg(g, OB_INIT, &t);
}
static ob_buf model_opset(ob_buf *g, int64_t opset) {
    ob_buf m = {0}, o = {0};
    ob_int(&m, 1, 8);
    ob_int(&o, 2, opset);
    ob_msg(&m, 8, &o);
    ob_str(g, 2, "g");
    ob_msg(&m, 7, g);
    return m;
}
static frt_model *load(ob_buf *mb, frt_status want, const char *msg) {
    frt_model *m = NULL;
    frt_status st = frt_model_load_buffer(mb->p, mb->n, NULL, NULL, &m);
    free(mb->p);
    CHECK_MSG(st == want, "load: %d (%s), expected %d", (int)st, frt_last_error(), (int)want);
    if (msg) CHECK_MSG(err_has(msg), "'%s' not in: %s", msg, frt_last_error());
    if (st) frt_model_free(m);
    return st ? NULL : m;
}

static frt_tensor ten(frt_dtype dt, int rank, const int64_t *shape, void *data) {
    frt_tensor t = {.dtype = dt, .rank = rank, .data = data};
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        t.shape[i] = shape[i], n *= (size_t)shape[i];
    t.nbytes = n * frt_dtype_size(dt);
    return t;
}
static frt_io_value tval(frt_tensor *t) {
    return (frt_io_value){.kind = FRT_KIND_TENSOR, .n = 1, .tensors = t};
}
static frt_io_value sval(frt_tensor *t, size_t n) {
    return (frt_io_value){.kind = FRT_KIND_SEQUENCE, .n = n, .tensors = t};
}

/* The tensor holds float32 values v[0..n) with the given shape. */
static bool is_f32(const frt_tensor *t, int rank, const int64_t *shape, const float *v) {
    if (t->dtype != FRT_FLOAT32 || t->rank != rank) return false;
    size_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (t->shape[i] != shape[i]) return false;
        n *= (size_t)shape[i];
    }
    return t->nbytes == n * 4 && (n == 0 || memcmp(t->data, v, n * 4) == 0);
}
static int64_t i64_of(const frt_io_value *v) {
    return v->kind == FRT_KIND_TENSOR && v->n == 1 && v->tensors[0].dtype == FRT_INT64
               ? *(const int64_t *)v->tensors[0].data
               : -999;
}
static void release(frt_io_value *v, size_t n) {
    for (size_t i = 0; i < n; i++)
        frt_io_value_release(&v[i]);
}

/* ---- SequenceLength / Insert / At / Erase / ConcatFromSequence ---- */

static void test_insert_at_erase(void) {
    ob_buf g = {0};
    seq_io(&g, OB_INPUT, "S", F32);
    tensor_io(&g, OB_INPUT, "T", F32, 1, (int64_t[]){-1});
    tensor_io(&g, OB_INPUT, "pos", I64, 0, NULL);
    add(&g, node("SequenceLength", IN("S"), OUT("len")));
    add(&g, node("SequenceInsert", IN("S", "T", "pos"), OUT("ins")));
    add(&g, node("SequenceAt", IN("ins", "pos"), OUT("at")));
    add(&g, node("SequenceErase", IN("ins", "pos"), OUT("er")));
    add(&g, node("SequenceErase", IN("ins"), OUT("er_last")));
    ob_buf cat = node("ConcatFromSequence", IN("ins"), OUT("cat"));
    ob_attr_int(&cat, "axis", 0);
    add(&g, cat);
    tensor_io(&g, OB_OUTPUT, "len", I64, 0, NULL);
    seq_io(&g, OB_OUTPUT, "ins", F32);
    tensor_io(&g, OB_OUTPUT, "at", F32, 1, (int64_t[]){-1});
    seq_io(&g, OB_OUTPUT, "er", F32);
    seq_io(&g, OB_OUTPUT, "er_last", F32);
    tensor_io(&g, OB_OUTPUT, "cat", F32, 1, (int64_t[]){-1});
    ob_buf mb = model_opset(&g, 13);
    frt_model *m = load(&mb, FRT_OK, NULL);
    if (!m) return;
    frt_tensor_info info;
    CHECK_OK(frt_model_input(m, 0, &info));
    CHECK(info.kind == FRT_KIND_SEQUENCE && info.dtype == FRT_FLOAT32 && info.rank == -1);
    CHECK_OK(frt_model_output(m, 1, &info));
    CHECK(info.kind == FRT_KIND_SEQUENCE);
    CHECK_OK(frt_model_input(m, 1, &info));
    CHECK(info.kind == FRT_KIND_TENSOR);
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    float a[2] = {1, 2}, b[3] = {3, 4, 5}, t[2] = {-1, -2};
    frt_tensor items[2] = {ten(FRT_FLOAT32, 1, (int64_t[]){2}, a),
                           ten(FRT_FLOAT32, 1, (int64_t[]){3}, b)};
    frt_tensor tt = ten(FRT_FLOAT32, 1, (int64_t[]){2}, t);
    const char *names[3] = {"S", "T", "pos"};
    /* pos -> the inserted sequence, as indices into {a, b, t} */
    static const struct {
        int64_t pos;
        int order[3];
    } cases[] = {{1, {0, 2, 1}}, {0, {2, 0, 1}}, {2, {0, 1, 2}}, {-1, {0, 2, 1}}, {-2, {2, 0, 1}}};
    const float *src[3] = {a, b, t};
    const int64_t len[3] = {2, 3, 2};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0] && rt; c++) {
        int64_t pos = cases[c].pos;
        frt_tensor pt = ten(FRT_INT64, 0, NULL, &pos);
        frt_io_value in[3] = {sval(items, 2), tval(&tt), tval(&pt)}, out[6];
        memset(out, 0, sizeof out);
        frt_status st = frt_run_values(rt, names, in, 3, out, 6);
        CHECK_MSG(st == FRT_OK, "pos %lld: %s", (long long)pos, frt_last_error());
        if (st) continue;
        CHECK(i64_of(&out[0]) == 2);
        CHECK(out[1].kind == FRT_KIND_SEQUENCE && out[1].n == 3 &&
              out[1].elem_dtype == FRT_FLOAT32);
        float cat[7];
        int k = 0;
        for (int i = 0; i < 3 && out[1].n == 3; i++) {
            int o = cases[c].order[i];
            CHECK_MSG(is_f32(&out[1].tensors[i], 1, &len[o], src[o]), "pos %lld item %d",
                      (long long)pos, i);
            memcpy(cat + k, src[o], (size_t)len[o] * 4);
            k += (int)len[o];
        }
        int64_t p = pos < 0 ? pos + 3 : pos; /* At/Erase see the sequence of 3 */
        int at = cases[c].order[p];
        CHECK(out[2].kind == FRT_KIND_TENSOR && is_f32(&out[2].tensors[0], 1, &len[at], src[at]));
        CHECK(out[3].n == 2);
        for (int i = 0, j = 0; i < 3 && out[3].n == 2; i++) {
            if (i == p) continue;
            int o = cases[c].order[i];
            CHECK(is_f32(&out[3].tensors[j++], 1, &len[o], src[o]));
        }
        CHECK(out[4].n == 2 &&
              is_f32(&out[4].tensors[1], 1, &len[cases[c].order[1]], src[cases[c].order[1]]));
        CHECK(is_f32(&out[5].tensors[0], 1, (int64_t[]){7}, cat));
        release(out, 6);
    }
    /* out of range: insert accepts [-2, 2], At and Erase [-3, 2] on the result */
    int64_t bad[] = {3, -3, 7};
    for (int i = 0; i < 3 && rt; i++) {
        frt_tensor pt = ten(FRT_INT64, 0, NULL, &bad[i]);
        frt_io_value in[3] = {sval(items, 2), tval(&tt), tval(&pt)}, out[6];
        memset(out, 0, sizeof out);
        CHECK(frt_run_values(rt, names, in, 3, out, 6) == FRT_ERR_RUNTIME);
        CHECK_MSG(err_has("out of range") && err_has("position"), "%s", frt_last_error());
        for (int k = 0; k < 6; k++)
            CHECK(out[k].tensors == NULL);
    }
    /* element of another dtype than the model's sequence */
    int64_t pos = 0, wrong[2] = {1, 2};
    frt_tensor pt = ten(FRT_INT64, 0, NULL, &pos);
    frt_tensor wi = ten(FRT_INT64, 1, (int64_t[]){2}, wrong);
    frt_io_value in[3] = {sval(&wi, 1), tval(&tt), tval(&pt)}, out[6];
    memset(out, 0, sizeof out);
    CHECK(frt_run_values(rt, names, in, 3, out, 6) == FRT_ERR_INVALID_ARGUMENT);
    CHECK_MSG(err_has("dtype"), "%s", frt_last_error());
    /* a tensor where the sequence goes, and frt_run on a sequence model */
    frt_io_value in2[3] = {tval(&tt), tval(&tt), tval(&pt)};
    CHECK(frt_run_values(rt, names, in2, 3, out, 6) == FRT_ERR_INVALID_ARGUMENT);
    frt_tensor tin[3] = {tt, tt, pt}, tout[1];
    memset(tout, 0, sizeof tout);
    CHECK(frt_run(rt, names, tin, 3, tout, 1, FRT_OUTPUTS_ALLOC) == FRT_ERR_INVALID_ARGUMENT);
    CHECK_MSG(err_has("frt_run_values"), "%s", frt_last_error());
    /* an empty input sequence: Erase without a position of an empty sequence fails, Insert works */
    frt_io_value in3[3] = {sval(NULL, 0), tval(&tt), tval(&pt)};
    CHECK_OK(frt_run_values(rt, names, in3, 3, out, 4));
    CHECK(i64_of(&out[0]) == 0 && out[1].n == 1 && out[3].n == 0);
    release(out, 6);
    frt_runtime_free(rt);
    frt_model_free(m);
}

/* ---- SplitToSequence / ConcatFromSequence(new_axis) ---- */

static void test_split_concat(void) {
    ob_buf g = {0};
    int64_t xd[2] = {3, 4};
    tensor_io(&g, OB_INPUT, "X", F32, 2, xd);
    tensor_io(&g, OB_INPUT, "lens", I64, 1, (int64_t[]){2});
    const_i64(&g, "two", 0, NULL, 1, (int64_t[]){3});
    ob_buf s1 = node("SplitToSequence", IN("X"), OUT("s1"));
    ob_attr_int(&s1, "axis", 1);
    ob_attr_int(&s1, "keepdims", 0);
    add(&g, s1);
    ob_buf s2 = node("SplitToSequence", IN("X", "two"), OUT("s2"));
    ob_attr_int(&s2, "axis", -1);
    add(&g, s2);
    add(&g, node("SplitToSequence", IN("X", "lens"), OUT("s3")));
    ob_buf c1 = node("ConcatFromSequence", IN("s1"), OUT("c1"));
    ob_attr_int(&c1, "axis", -1);
    ob_attr_int(&c1, "new_axis", 1);
    add(&g, c1);
    ob_buf c3 = node("ConcatFromSequence", IN("s3"), OUT("c3"));
    ob_attr_int(&c3, "axis", 0);
    add(&g, c3);
    seq_io(&g, OB_OUTPUT, "s1", F32);
    seq_io(&g, OB_OUTPUT, "s2", F32);
    seq_io(&g, OB_OUTPUT, "s3", F32);
    tensor_io(&g, OB_OUTPUT, "c1", F32, -1, NULL);
    tensor_io(&g, OB_OUTPUT, "c3", F32, -1, NULL);
    ob_buf mb = model_opset(&g, 13);
    frt_model *m = load(&mb, FRT_OK, NULL);
    if (!m) return;
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    float x[12];
    for (int i = 0; i < 12; i++)
        x[i] = (float)i * 0.5f - 2;
    int64_t lens[2] = {1, 2};
    frt_tensor xt = ten(FRT_FLOAT32, 2, xd, x), lt = ten(FRT_INT64, 1, (int64_t[]){2}, lens);
    const char *names[2] = {"X", "lens"};
    frt_io_value in[2] = {tval(&xt), tval(&lt)}, out[5];
    memset(out, 0, sizeof out);
    for (int r = 0; r < 2 && rt; r++) { /* twice: the sequences' buffers are reused */
        CHECK_OK(frt_run_values(rt, names, in, 2, out, 5));
        CHECK(out[0].n == 4);
        for (size_t j = 0; j < out[0].n && j < 4; j++) {
            float col[3] = {x[j], x[4 + j], x[8 + j]};
            CHECK_MSG(is_f32(&out[0].tensors[j], 1, (int64_t[]){3}, col), "s1[%zu]", j);
        }
        CHECK(out[1].n == 2);
        if (out[1].n == 2) {
            float p0[9] = {x[0], x[1], x[2], x[4], x[5], x[6], x[8], x[9], x[10]};
            float p1[3] = {x[3], x[7], x[11]};
            CHECK(is_f32(&out[1].tensors[0], 2, (int64_t[]){3, 3}, p0));
            CHECK(is_f32(&out[1].tensors[1], 2, (int64_t[]){3, 1}, p1));
        }
        CHECK(out[2].n == 2 && is_f32(&out[2].tensors[0], 2, (int64_t[]){1, 4}, x) &&
              is_f32(&out[2].tensors[1], 2, (int64_t[]){2, 4}, x + 4));
        /* stacking the columns on a new last axis gives X back; concatenating the rows too */
        CHECK(is_f32(&out[3].tensors[0], 2, xd, x));
        CHECK(is_f32(&out[4].tensors[0], 2, xd, x));
        release(out, 5);
    }
    int64_t bad[2][2] = {{1, 1}, {-1, 4}};
    for (int i = 0; i < 2 && rt; i++) {
        memcpy(lens, bad[i], sizeof lens);
        CHECK(frt_run_values(rt, names, in, 2, out, 5) == FRT_ERR_RUNTIME);
        CHECK_MSG(err_has("split"), "%s", frt_last_error());
    }
    frt_runtime_free(rt);
    frt_model_free(m);
}

/* ---- SequenceEmpty / Construct / Identity / Optional* ---- */

static void attr_type(ob_buf *n, const char *name, ob_buf *type) {
    ob_buf a = {0};
    ob_str(&a, 1, name);
    ob_msg(&a, 14, type);
    ob_int(&a, 20, 13);
    ob_msg(n, 5, &a);
}

static void test_construct_optional(void) {
    ob_buf g = {0};
    tensor_io(&g, OB_INPUT, "X", F32, 1, (int64_t[]){-1});
    tensor_io(&g, OB_INPUT, "Y", F32, 2, (int64_t[]){-1, 2});
    ob_buf e = node("SequenceEmpty", NULL, OUT("e"));
    ob_attr_int(&e, "dtype", I64);
    add(&g, e);
    add(&g, node("SequenceLength", IN("e"), OUT("le")));
    add(&g, node("SequenceConstruct", IN("X", "Y", "X"), OUT("c")));
    add(&g, node("Identity", IN("c"), OUT("ic")));
    add(&g, node("Optional", IN("X"), OUT("o")));
    add(&g, node("OptionalHasElement", IN("o"), OUT("h")));
    add(&g, node("OptionalGetElement", IN("o"), OUT("ge")));
    ob_buf on = node("Optional", NULL, OUT("on"));
    ob_buf tt = tensor_type(F32, -1, NULL);
    attr_type(&on, "type", &tt);
    add(&g, on);
    add(&g, node("OptionalHasElement", IN("on"), OUT("hn")));
    add(&g, node("Optional", IN("c"), OUT("os")));
    add(&g, node("OptionalGetElement", IN("os"), OUT("gs")));
    seq_io(&g, OB_OUTPUT, "e", I64);
    tensor_io(&g, OB_OUTPUT, "le", I64, 0, NULL);
    seq_io(&g, OB_OUTPUT, "ic", F32);
    tensor_io(&g, OB_OUTPUT, "h", BOOL_, 0, NULL);
    tensor_io(&g, OB_OUTPUT, "ge", F32, 1, (int64_t[]){-1});
    ob_buf ot = tensor_type(F32, -1, NULL);
    ob_buf opt = wrap_type(9, &ot);
    value(&g, OB_OUTPUT, "on", &opt);
    tensor_io(&g, OB_OUTPUT, "hn", BOOL_, 0, NULL);
    seq_io(&g, OB_OUTPUT, "gs", F32);
    ob_buf mb = model_opset(&g, 15);
    frt_model *m = load(&mb, FRT_OK, NULL);
    if (!m) return;
    frt_tensor_info info;
    CHECK_OK(frt_model_output(m, 5, &info));
    CHECK(info.kind == FRT_KIND_OPTIONAL && info.elem_kind == FRT_KIND_TENSOR);
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    float x[3] = {1, 2, 3}, y[4] = {4, 5, 6, 7};
    frt_tensor xt = ten(FRT_FLOAT32, 1, (int64_t[]){3}, x),
               yt = ten(FRT_FLOAT32, 2, (int64_t[]){2, 2}, y);
    const char *names[2] = {"Y", "X"};
    frt_io_value in[2] = {tval(&yt), tval(&xt)}, out[8];
    memset(out, 0, sizeof out);
    CHECK_OK(frt_run_values(rt, names, in, 2, out, 8));
    if (rt && out[0].tensors) {
        CHECK(out[0].kind == FRT_KIND_SEQUENCE && out[0].n == 0 && out[0].elem_dtype == FRT_INT64);
        CHECK(i64_of(&out[1]) == 0);
        CHECK(out[2].n == 3 && is_f32(&out[2].tensors[0], 1, (int64_t[]){3}, x) &&
              is_f32(&out[2].tensors[1], 2, (int64_t[]){2, 2}, y) &&
              is_f32(&out[2].tensors[2], 1, (int64_t[]){3}, x));
        CHECK(out[3].tensors[0].dtype == FRT_BOOL && *(uint8_t *)out[3].tensors[0].data == 1);
        CHECK(is_f32(&out[4].tensors[0], 1, (int64_t[]){3}, x));
        CHECK(out[5].kind == FRT_KIND_OPTIONAL && !out[5].has_value && out[5].n == 0);
        CHECK(*(uint8_t *)out[6].tensors[0].data == 0);
        CHECK(out[7].kind == FRT_KIND_SEQUENCE && out[7].n == 3);
    }
    release(out, 8);
    frt_runtime_free(rt);
    frt_model_free(m);

    /* OptionalGetElement of an optional input: a value, then none (a run-time error) */
    g = (ob_buf){0};
    ob_buf it = tensor_type(I64, 1, (int64_t[]){-1});
    ob_buf oi = wrap_type(9, &it);
    value(&g, OB_INPUT, "O", &oi);
    add(&g, node("OptionalGetElement", IN("O"), OUT("v")));
    add(&g, node("OptionalHasElement", IN("O"), OUT("h")));
    tensor_io(&g, OB_OUTPUT, "v", I64, 1, (int64_t[]){-1});
    tensor_io(&g, OB_OUTPUT, "h", BOOL_, 0, NULL);
    mb = model_opset(&g, 15);
    m = load(&mb, FRT_OK, NULL);
    if (!m) return;
    CHECK_OK(frt_runtime_create(m, &rt));
    int64_t v[2] = {7, -7};
    frt_tensor vt = ten(FRT_INT64, 1, (int64_t[]){2}, v);
    const char *on_[1] = {"O"};
    frt_io_value oin = {.kind = FRT_KIND_OPTIONAL,
                        .elem_kind = FRT_KIND_TENSOR,
                        .has_value = 1,
                        .n = 1,
                        .tensors = &vt};
    CHECK_OK(frt_run_values(rt, on_, &oin, 1, out, 2));
    CHECK(out[0].n == 1 && out[0].tensors[0].dtype == FRT_INT64 &&
          memcmp(out[0].tensors[0].data, v, 16) == 0);
    release(out, 2);
    oin.has_value = 0;
    oin.n = 0;
    CHECK(frt_run_values(rt, on_, &oin, 1, out, 2) == FRT_ERR_RUNTIME);
    CHECK_MSG(err_has("no value"), "%s", frt_last_error());
    oin.elem_kind = FRT_KIND_SEQUENCE; /* the wrong kind of optional */
    CHECK(frt_run_values(rt, on_, &oin, 1, out, 2) == FRT_ERR_INVALID_ARGUMENT);
    frt_runtime_free(rt);
    frt_model_free(m);
}

/* OptionalHasElement / OptionalGetElement at opset 18: a tensor input, no input, a sequence. */
static void test_optional18(void) {
    ob_buf g = {0};
    tensor_io(&g, OB_INPUT, "X", F32, 1, (int64_t[]){2});
    seq_io(&g, OB_INPUT, "S", F32);
    add(&g, node("OptionalHasElement", IN("X"), OUT("hx")));
    add(&g, node("OptionalHasElement", NULL, OUT("hn")));
    add(&g, node("OptionalHasElement", IN("S"), OUT("hs")));
    add(&g, node("OptionalGetElement", IN("X"), OUT("gx")));
    add(&g, node("OptionalGetElement", IN("S"), OUT("gs")));
    tensor_io(&g, OB_OUTPUT, "hx", BOOL_, 0, NULL);
    tensor_io(&g, OB_OUTPUT, "hn", BOOL_, 0, NULL);
    tensor_io(&g, OB_OUTPUT, "hs", BOOL_, 0, NULL);
    tensor_io(&g, OB_OUTPUT, "gx", F32, 1, (int64_t[]){2});
    seq_io(&g, OB_OUTPUT, "gs", F32);
    ob_buf mb = model_opset(&g, 18);
    frt_model *m = load(&mb, FRT_OK, NULL);
    if (!m) return;
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    float x[2] = {3, 4};
    frt_tensor xt = ten(FRT_FLOAT32, 1, (int64_t[]){2}, x);
    const char *names[2] = {"X", "S"};
    frt_io_value in[2] = {tval(&xt), sval(&xt, 1)}, out[5];
    memset(out, 0, sizeof out);
    CHECK_OK(frt_run_values(rt, names, in, 2, out, 5));
    if (out[0].tensors) {
        CHECK(*(uint8_t *)out[0].tensors[0].data == 1);
        CHECK(*(uint8_t *)out[1].tensors[0].data == 0);
        CHECK(*(uint8_t *)out[2].tensors[0].data == 1);
        CHECK(is_f32(&out[3].tensors[0], 1, (int64_t[]){2}, x));
        CHECK(out[4].kind == FRT_KIND_SEQUENCE && out[4].n == 1);
    }
    release(out, 5);
    frt_runtime_free(rt);
    frt_model_free(m);
    /* opset 15 wants an optional */
    g = (ob_buf){0};
    tensor_io(&g, OB_INPUT, "X", F32, 1, (int64_t[]){2});
    add(&g, node("OptionalHasElement", IN("X"), OUT("hx")));
    tensor_io(&g, OB_OUTPUT, "hx", BOOL_, 0, NULL);
    mb = model_opset(&g, 15);
    load(&mb, FRT_ERR_MALFORMED, "optional");
}

/* ---- SequenceMap ---- */

static void test_map(void) {
    ob_buf g = {0}, body = {0};
    seq_io(&g, OB_INPUT, "S", F32);
    seq_io(&g, OB_INPUT, "S2", F32);
    tensor_io(&g, OB_INPUT, "T", F32, 1, (int64_t[]){2});
    tensor_io(&body, OB_INPUT, "e", F32, 1, (int64_t[]){-1});
    tensor_io(&body, OB_INPUT, "e2", F32, 1, (int64_t[]){-1});
    tensor_io(&body, OB_INPUT, "t", F32, 1, (int64_t[]){2});
    add(&body, node("Add", IN("e", "t"), OUT("y")));
    add(&body, node("Mul", IN("y", "e2"), OUT("z")));
    add(&body, node("Shape", IN("e"), OUT("sh")));
    tensor_io(&body, OB_OUTPUT, "z", F32, 1, (int64_t[]){-1});
    tensor_io(&body, OB_OUTPUT, "sh", I64, 1, (int64_t[]){1});
    ob_str(&body, 2, "body");
    ob_buf mp = node("SequenceMap", IN("S", "S2", "T"), OUT("Z", "SH"));
    ob_attr_graph(&mp, "body", &body);
    add(&g, mp);
    seq_io(&g, OB_OUTPUT, "Z", F32);
    seq_io(&g, OB_OUTPUT, "SH", I64);
    ob_buf mb = model_opset(&g, 17);
    frt_model *m = load(&mb, FRT_OK, NULL);
    if (!m) return;
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    /* elements of 2 (broadcast with t) and 1 ([1] + [2] -> [2]) */
    float a[2] = {1, 2}, b[1] = {10}, c[2] = {2, 3}, d[1] = {-1}, t[2] = {0.5f, -0.5f};
    frt_tensor s[2] = {ten(FRT_FLOAT32, 1, (int64_t[]){2}, a),
                       ten(FRT_FLOAT32, 1, (int64_t[]){1}, b)};
    frt_tensor s2[2] = {ten(FRT_FLOAT32, 1, (int64_t[]){2}, c),
                        ten(FRT_FLOAT32, 1, (int64_t[]){1}, d)};
    frt_tensor tt = ten(FRT_FLOAT32, 1, (int64_t[]){2}, t);
    const char *names[3] = {"S", "S2", "T"};
    frt_io_value in[3] = {sval(s, 2), sval(s2, 2), tval(&tt)}, out[2];
    memset(out, 0, sizeof out);
    for (int r = 0; r < 2 && rt; r++) {
        CHECK_OK(frt_run_values(rt, names, in, 3, out, 2));
        float z0[2] = {(1 + 0.5f) * 2, (2 - 0.5f) * 3}, z1[2] = {-(10 + 0.5f), -(10 - 0.5f)};
        CHECK(out[0].n == 2 && is_f32(&out[0].tensors[0], 1, (int64_t[]){2}, z0) &&
              is_f32(&out[0].tensors[1], 1, (int64_t[]){2}, z1));
        CHECK(out[1].n == 2 && out[1].elem_dtype == FRT_INT64 &&
              ((int64_t *)out[1].tensors[1].data)[0] == 1);
        release(out, 2);
    }
    in[1] = sval(s2, 1); /* lengths differ */
    CHECK(frt_run_values(rt, names, in, 3, out, 2) == FRT_ERR_RUNTIME);
    CHECK_MSG(err_has("elements"), "%s", frt_last_error());
    in[0] = sval(NULL, 0); /* nothing to map: empty outputs */
    in[1] = sval(NULL, 0);
    CHECK_OK(frt_run_values(rt, names, in, 3, out, 2));
    CHECK(out[0].n == 0 && out[0].kind == FRT_KIND_SEQUENCE && out[1].n == 0);
    release(out, 2);
    frt_runtime_free(rt);
    frt_model_free(m);
}

/* ---- Loop carrying a sequence ---- */

static void test_loop(void) {
    ob_buf g = {0}, body = {0};
    tensor_io(&g, OB_INPUT, "M", I64, 0, NULL);
    const_i64(&g, "ax", 1, (int64_t[]){1}, 1, (int64_t[]){0});
    ob_buf e = node("SequenceEmpty", NULL, OUT("e"));
    ob_attr_int(&e, "dtype", I64);
    add(&g, e);
    tensor_io(&body, OB_INPUT, "i", I64, 0, NULL);
    tensor_io(&body, OB_INPUT, "cin", BOOL_, 0, NULL);
    seq_io(&body, OB_INPUT, "sin", I64);
    add(&body, node("Identity", IN("cin"), OUT("cout")));
    add(&body, node("Unsqueeze", IN("i", "ax"), OUT("u")));
    ob_buf cc = node("Concat", IN("u", "u"), OUT("uu"));
    ob_attr_int(&cc, "axis", 0);
    add(&body, cc);
    add(&body, node("SequenceInsert", IN("sin", "uu"), OUT("sout")));
    tensor_io(&body, OB_OUTPUT, "cout", BOOL_, 0, NULL);
    seq_io(&body, OB_OUTPUT, "sout", I64);
    ob_str(&body, 2, "body");
    ob_buf lp = node("Loop", IN("M", "", "e"), OUT("R"));
    ob_attr_graph(&lp, "body", &body);
    add(&g, lp);
    seq_io(&g, OB_OUTPUT, "R", I64);
    ob_buf mb = model_opset(&g, 13);
    frt_model *m = load(&mb, FRT_OK, NULL);
    if (!m) return;
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    int64_t trips[3] = {3, 0, 5};
    for (int r = 0; r < 3 && rt; r++) {
        int64_t mv = trips[r];
        frt_tensor mt = ten(FRT_INT64, 0, NULL, &mv);
        const char *names[1] = {"M"};
        frt_io_value in = tval(&mt), out;
        memset(&out, 0, sizeof out);
        CHECK_OK(frt_run_values(rt, names, &in, 1, &out, 1));
        CHECK_MSG(out.kind == FRT_KIND_SEQUENCE && out.n == (size_t)mv, "M %lld: %zu items",
                  (long long)mv, out.n);
        for (size_t k = 0; k < out.n; k++) {
            const int64_t *d = out.tensors[k].data;
            CHECK(out.tensors[k].rank == 1 && out.tensors[k].shape[0] == 2 && d[0] == (int64_t)k &&
                  d[1] == (int64_t)k);
        }
        frt_io_value_release(&out);
        CHECK(out.tensors == NULL && out.n == 0);
    }
    /* steady state: a run as long as an earlier one (outputs not taken) allocates nothing: the
       sequences keep their buffers */
    for (int r = 0; r < 2 && rt; r++) {
        int64_t mv = 5;
        frt_tensor mt = ten(FRT_INT64, 0, NULL, &mv);
        const char *names[1] = {"M"};
        frt_io_value in = tval(&mt);
        long before = atomic_load(&g_allocs);
        CHECK_OK(frt_run_values(rt, names, &in, 1, NULL, 0));
        long got = atomic_load(&g_allocs) - before;
        CHECK_MSG(!alloc_counting || got == 0, "run %d: %ld allocations", r, got);
    }
    frt_runtime_free(rt);
    frt_model_free(m);
}

/* ---- load errors and tensor models through frt_run_values ---- */

static void test_errors(void) {
    ob_buf g = {0};
    seq_io(&g, OB_INPUT, "S", F32);
    add(&g, node("Relu", IN("S"), OUT("y")));
    tensor_io(&g, OB_OUTPUT, "y", F32, -1, NULL);
    ob_buf mb = model_opset(&g, 13);
    load(&mb, FRT_ERR_UNSUPPORTED, "is a sequence");

    g = (ob_buf){0};
    seq_io(&g, OB_INPUT, "S", F32);
    tensor_io(&g, OB_INPUT, "T", I64, 1, (int64_t[]){2});
    add(&g, node("SequenceInsert", IN("S", "T"), OUT("y")));
    seq_io(&g, OB_OUTPUT, "y", F32);
    mb = model_opset(&g, 13);
    load(&mb, FRT_ERR_MALFORMED, "dtype");

    g = (ob_buf){0};
    tensor_io(&g, OB_INPUT, "S", F32, 1, (int64_t[]){2});
    add(&g, node("SequenceAt", IN("S", "S"), OUT("y")));
    tensor_io(&g, OB_OUTPUT, "y", F32, -1, NULL);
    mb = model_opset(&g, 13);
    load(&mb, FRT_ERR_MALFORMED, "expected a sequence");

    /* erase from / concatenation of an empty sequence: run-time errors */
    for (int k = 0; k < 2; k++) {
        g = (ob_buf){0};
        seq_io(&g, OB_INPUT, "S", F32);
        ob_buf nd = node(k ? "ConcatFromSequence" : "SequenceErase", IN("S"), OUT("y"));
        if (k) ob_attr_int(&nd, "axis", 0);
        add(&g, nd);
        if (k) tensor_io(&g, OB_OUTPUT, "y", F32, -1, NULL);
        else seq_io(&g, OB_OUTPUT, "y", F32);
        mb = model_opset(&g, 13);
        frt_model *me = load(&mb, FRT_OK, NULL);
        frt_runtime *re = NULL;
        if (!me || frt_runtime_create(me, &re) != FRT_OK) {
            frt_model_free(me);
            continue;
        }
        const char *sn[1] = {"S"};
        frt_io_value sin = sval(NULL, 0), sout;
        memset(&sout, 0, sizeof sout);
        CHECK(frt_run_values(re, sn, &sin, 1, &sout, 1) == FRT_ERR_RUNTIME);
        CHECK_MSG(err_has("empty sequence"), "%s", frt_last_error());
        frt_runtime_free(re);
        frt_model_free(me);
    }

    /* a tensor-only model through frt_run_values */
    g = (ob_buf){0};
    tensor_io(&g, OB_INPUT, "x", F32, 1, (int64_t[]){3});
    add(&g, node("Neg", IN("x"), OUT("y")));
    tensor_io(&g, OB_OUTPUT, "y", F32, 1, (int64_t[]){3});
    mb = model_opset(&g, 13);
    frt_model *m = load(&mb, FRT_OK, NULL);
    if (!m) return;
    frt_runtime *rt = NULL;
    CHECK_OK(frt_runtime_create(m, &rt));
    float x[3] = {1, -2, 3}, y[3] = {-1, 2, -3};
    frt_tensor xt = ten(FRT_FLOAT32, 1, (int64_t[]){3}, x);
    const char *names[1] = {"x"};
    frt_io_value in = tval(&xt), out;
    memset(&out, 0, sizeof out);
    CHECK_OK(frt_run_values(rt, names, &in, 1, &out, 1));
    CHECK(out.kind == FRT_KIND_TENSOR && out.n == 1 &&
          is_f32(&out.tensors[0], 1, (int64_t[]){3}, y));
    frt_io_value_release(&out);
    in = sval(&xt, 1);
    CHECK(frt_run_values(rt, names, &in, 1, &out, 1) == FRT_ERR_INVALID_ARGUMENT);
    frt_io_value_release(NULL);
    frt_runtime_free(rt);
    frt_model_free(m);
}

int main(void) {
    setenv("FRT_CHECK_PLAN", "1", 1);
    test_insert_at_erase();
    test_split_concat();
    test_construct_optional();
    test_optional18();
    test_map();
    test_loop();
    test_errors();
    printf("test_sequence: %d checks, %d failures\n", t_checks, t_failures);
    return t_failures != 0;
}
