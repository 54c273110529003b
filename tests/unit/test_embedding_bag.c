/* flatrt::EmbeddingBag (src/ops/embedding_bag.c) and the pass that makes it from torch's
 * EmbeddingBag Loop (src/passes/embedding_bag_fuse.c):
 *   - the kernel against a naive reference: sum / mean / max, int64 and int32 indices, rank-2
 *     indices, odd sizes, negative indices, offsets that are negative, past the end or decreasing
 *     (Slice clamping), empty bags; every ISA tier against the portable one; bad inputs (index
 *     out of range, too few offsets, wrong dtypes, bad mode) fail with clear errors;
 *   - models shaped like torch 1.13's export (Loop over bags: Gather + Unsqueeze + Slice + Gather +
 *     Reduce*): loaded with fusion the Loop becomes one EmbeddingBag step, and its outputs equal the
 *     unfused Loop's (fusion off) on several inputs; the same bad index fails both; a trip count
 *     given as a graph input (output shaped at run time). */
#include "runtime/model.h"
#include "onnx_build.h"
#include "op_harness.h"
#include "test_util.h"

enum { F32 = 1, I32 = 6, I64 = 7, BOOL_ = 9 };
enum { SUM = 0, MEAN = 1, MAX = 2 };

/* a == b elementwise, NaN matching NaN and infinities matching exactly, else within tol. */
static int same(const float *a, const float *b, size_t n, float tol) {
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) && isnan(b[i])) continue;
        if (a[i] == b[i]) continue;
        if (!(fabsf(a[i] - b[i]) <= tol)) {
            fprintf(stderr, "  mismatch at %zu: %g vs %g\n", i, a[i], b[i]);
            return 0;
        }
    }
    return 1;
}

/* Naive reference: Y [M, K, D] from W [N, D], idx [L, K], starts/ends, as the Loop computes it
 * (double accumulation is not used: float32 in row order, like ReduceSum). Returns 0, or -1 for a
 * bad index. */
static int reference(int mode, const float *W, int64_t N, int64_t D, const int64_t *idx, int64_t L,
                     int64_t K, const int64_t *st, const int64_t *en, int64_t M, float *Y) {
    for (int64_t i = 0; i < M; i++) {
        int64_t b = st[i], e = en[i];
        if (b < 0) b += L;
        if (e < 0) e += L;
        b = b < 0 ? 0 : b > L ? L : b;
        e = e < 0 ? 0 : e > L ? L : e;
        for (int64_t k = 0; k < K; k++)
            for (int64_t d = 0; d < D; d++) {
                float acc = mode == MAX ? -INFINITY : 0.0f;
                for (int64_t r = b; r < e; r++) {
                    int64_t row = idx[r * K + k];
                    if (row < 0) row += N;
                    if (row < 0 || row >= N) return -1;
                    float v = W[row * D + d];
                    if (mode == MAX) acc = (v > acc || v != v) ? v : acc;
                    else acc += v;
                }
                if (mode == MEAN) acc = acc / (float)(e > b ? e - b : 0);
                Y[(i * K + k) * D + d] = acc;
            }
    }
    return 0;
}

/* ---- the kernel through the op harness ---- */

typedef struct eb_case {
    int64_t N, D, L, K, S, M;
    int idx_i32;
    const int64_t *idx, *st, *en; /* L*K, S, S */
} eb_case;

static frt_status run_kernel(const eb_case *c, int mode, int isa, int32_t wdtype, int32_t odtype,
                             float *out, const char **kname) {
    float W[64 * 8];
    for (int64_t i = 0; i < c->N * c->D; i++) W[i] = (float)((i * 37) % 23) * 0.25f - 2.5f;
    int32_t idx32[256], st32[64], en32[64];
    for (int64_t i = 0; i < c->L * c->K; i++) idx32[i] = (int32_t)c->idx[i];
    for (int64_t i = 0; i < c->S; i++) st32[i] = (int32_t)c->st[i], en32[i] = (int32_t)c->en[i];
    int64_t wd[2] = {c->N, c->D}, id[2] = {c->L, c->K}, sd[1] = {c->S}, m = c->M;
    frt_value in[5] = {
        frt_test_value(wdtype, 2, wd, W),
        frt_test_value(c->idx_i32 ? FRT_INT32 : FRT_INT64, c->K > 1 ? 2 : 1, id,
                       c->idx_i32 ? (void *)idx32 : (void *)c->idx),
        frt_test_value(odtype, 1, sd, odtype == FRT_INT32 ? (void *)st32 : (void *)c->st),
        frt_test_value(odtype, 1, sd, odtype == FRT_INT32 ? (void *)en32 : (void *)c->en),
        frt_test_value(FRT_INT64, 0, NULL, &m)};
    frt_onnx_attr a = frt_test_attr_int("mode", mode);
    frt_test_op op = {.op_type = "EmbeddingBag", .opset = 1, .attrs = &a, .n_attrs = 1,
                      .inputs = in, .n_in = 5, .const_mask = 1u << 4, .n_out = 1, .isa = isa};
    frt_value y;
    frt_status st = frt_test_run_op(&op, &y, kname);
    if (st) return st;
    size_t n = (size_t)(c->M * c->K * c->D);
    int ok = y.numel == (int64_t)n && y.dims[0] == c->M && y.rank == (c->K > 1 ? 3 : 2);
    CHECK_MSG(ok, "output numel %lld rank %d", (long long)y.numel, y.rank);
    if (ok && n) memcpy(out, y.data, n * sizeof(float));
    free(y.data);
    return FRT_OK;
}

static void test_kernel(void) {
    /* N 7 rows of D 5; L 11 indices (some negative); bags: normal, empty, negative start,
       start past the end, decreasing, the whole range */
    static const int64_t idx[11] = {0, 6, -1, 3, 3, 2, -7, 5, 1, 4, 0};
    static const int64_t st[7] = {0, 3, 3, -4, 20, 8, 0}, en[7] = {3, 3, 6, 11, 30, 5, 11};
    static const int64_t idx2[22] = {0, 1, 6, 5, -1, 4, 3, 3, 3, 2, 2, 2,
                                     -7, 1, 5, 5, 1, 6, 4, 0, 0, 1};
    float W[64 * 8], want[7 * 2 * 5], got[7 * 2 * 5], tier0[7 * 2 * 5];
    for (int64_t i = 0; i < 7 * 5; i++) W[i] = (float)((i * 37) % 23) * 0.25f - 2.5f;
    for (int rank2 = 0; rank2 < 2; rank2++)
        for (int i32 = 0; i32 < 2; i32++)
            for (int mode = SUM; mode <= MAX; mode++) {
                eb_case c = {7, 5, 11, rank2 ? 2 : 1, 7, 6 + rank2, i32, rank2 ? idx2 : idx, st, en};
                size_t n = (size_t)(c.M * c.K * c.D);
                CHECK(reference(mode, W, c.N, c.D, c.idx, c.L, c.K, st, en, c.M, want) == 0);
                for (int t = FRT_ISA_PORTABLE; t <= FRT_ISA_AVX512; t++) {
                    const char *kn = NULL;
                    memset(got, 0, sizeof got);
                    frt_status s = run_kernel(&c, mode, FRT_TEST_ISA(t), FRT_FLOAT32,
                                              i32 ? FRT_INT32 : FRT_INT64, got, &kn);
                    CHECK_MSG(s == FRT_OK, "mode %d tier %d: %s", mode, t, frt_last_error());
                    CHECK_MSG(same(got, want, n, 1e-5f), "mode %d rank2 %d i32 %d tier %d (%s)",
                              mode, rank2, i32, t, kn ? kn : "?");
                    /* SIMD tiers against the portable twin: the same sums, element by element */
                    if (t == FRT_ISA_PORTABLE) memcpy(tier0, got, n * sizeof(float));
                    else CHECK_MSG(same(got, tier0, n, 1e-6f), "tier %d vs portable", t);
                }
            }
    /* M = 0: an empty output */
    eb_case z = {7, 5, 11, 1, 7, 0, 0, idx, st, en};
    CHECK(run_kernel(&z, SUM, 0, FRT_FLOAT32, FRT_INT64, got, NULL) == FRT_OK);

    /* bad inputs */
    static const int64_t bad_idx[11] = {0, 6, 7, 3, 3, 2, -8, 5, 1, 4, 0};
    eb_case b = {7, 5, 11, 1, 7, 6, 0, bad_idx, st, en};
    CHECK(run_kernel(&b, SUM, 0, FRT_FLOAT32, FRT_INT64, got, NULL) == FRT_ERR_RUNTIME);
    CHECK_MSG(strstr(frt_last_error(), "index 7") && strstr(frt_last_error(), "out of range"),
              "%s", frt_last_error());
    eb_case few = {7, 5, 11, 1, 7, 8, 0, idx, st, en}; /* 8 bags, 7 offsets */
    CHECK(run_kernel(&few, SUM, 0, FRT_FLOAT32, FRT_INT64, got, NULL) == FRT_ERR_RUNTIME);
    CHECK_MSG(strstr(frt_last_error(), "bag 7"), "%s", frt_last_error());
    eb_case ok = {7, 5, 11, 1, 7, 6, 0, idx, st, en};
    CHECK(run_kernel(&ok, SUM, 0, FRT_INT32, FRT_INT64, got, NULL) == FRT_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(frt_last_error(), "float32"), "%s", frt_last_error());
    CHECK(run_kernel(&ok, SUM, 0, FRT_FLOAT32, FRT_FLOAT32, got, NULL) == FRT_ERR_MALFORMED);
    CHECK(run_kernel(&ok, 3, 0, FRT_FLOAT32, FRT_INT64, got, NULL) == FRT_ERR_MALFORMED);
    CHECK_MSG(strstr(frt_last_error(), "mode"), "%s", frt_last_error());
}

/* ---- models shaped like torch's export ---- */

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
/* Constant node `out` holding int64 values (rank 0 when rank == 0) or one bool. */
static void constant(ob_buf *g, const char *out, int elem, int rank, const int64_t *v, int n) {
    ob_buf t = {0}, a = {0};
    if (rank) ob_int(&t, 1, n);
    ob_int(&t, 2, elem);
    if (elem == BOOL_) {
        uint8_t b = (uint8_t)(v[0] != 0);
        ob_bytes(&t, 9, &b, 1);
    } else {
        ob_bytes(&t, 9, v, (size_t)n * 8);
    }
    ob_str(&a, 1, "value");
    ob_msg(&a, 5, &t);
    ob_int(&a, 20, 4);
    ob_buf c = node("Constant", out, NULL, (const char *[]){out, NULL});
    ob_msg(&c, 5, &a);
    add(g, c);
}

/* W [7, 5] initializer; indices [L] int64 (L free), offsets [B] int64. With m_input: the trip
 * count is a graph input "M". Body: Gather(Concat(offsets, [L]), i) .. Gather(Slice(..,1:), i),
 * Slice(indices), Gather(W), Reduce(mode) over axis 0, as torch writes it. */
static ob_buf torch_model(int mode, bool m_input) {
    ob_buf g = {0}, b = {0};
    float W[35];
    for (int i = 0; i < 35; i++) W[i] = (float)((i * 37) % 23) * 0.25f - 2.5f;
    ob_buf wt = ob_tensor_f32("weight", (int64_t[]){7, 5}, 2, W);
    ob_msg(&g, OB_INIT, &wt);
    vin(&g, "indices", I64, 1, (int64_t[]){-1});
    vin(&g, "offsets", I64, 1, (int64_t[]){4});
    if (m_input) vin(&g, "M", I64, 0, NULL);
    constant(&g, "true", BOOL_, 0, (int64_t[]){1}, 1);
    constant(&g, "zero", I64, 0, (int64_t[]){0}, 1);
    constant(&g, "ax0", I64, 1, (int64_t[]){0}, 1);
    constant(&g, "one", I64, 1, (int64_t[]){1}, 1);
    constant(&g, "big", I64, 1, (int64_t[]){INT64_MAX}, 1);
    add(&g, node("Shape", "shape", (const char *[]){"indices", NULL}, (const char *[]){"ishape", NULL}));
    add(&g, node("Gather", "len", (const char *[]){"ishape", "zero", NULL}, (const char *[]){"L", NULL}));
    add(&g, node("Unsqueeze", "unsq", (const char *[]){"L", "ax0", NULL}, (const char *[]){"L1", NULL}));
    ob_buf cat = node("Concat", "cat", (const char *[]){"offsets", "L1", NULL}, (const char *[]){"starts", NULL});
    ob_attr_int(&cat, "axis", 0);
    add(&g, cat);
    add(&g, node("Slice", "ends", (const char *[]){"starts", "one", "big", "ax0", "one", NULL},
                 (const char *[]){"ends", NULL}));
    add(&g, node("Shape", "eshape", (const char *[]){"ends", NULL}, (const char *[]){"eshape", NULL}));
    add(&g, node("Gather", "nbags", (const char *[]){"eshape", "zero", NULL}, (const char *[]){"nbags", NULL}));

    vin(&b, "i", I64, 0, NULL);
    vin(&b, "c", BOOL_, 0, NULL);
    add(&b, node("Gather", "g2", (const char *[]){"starts", "i", NULL}, (const char *[]){"s0", NULL}));
    add(&b, node("Gather", "g3", (const char *[]){"ends", "i", NULL}, (const char *[]){"e0", NULL}));
    constant(&b, "bax", I64, 1, (int64_t[]){0}, 1);
    add(&b, node("Unsqueeze", "u1", (const char *[]){"s0", "bax", NULL}, (const char *[]){"s1", NULL}));
    add(&b, node("Unsqueeze", "u2", (const char *[]){"e0", "bax", NULL}, (const char *[]){"e1", NULL}));
    add(&b, node("Slice", "rows", (const char *[]){"indices", "s1", "e1", "ax0", NULL},
                 (const char *[]){"rows", NULL}));
    add(&b, node("Gather", "g4", (const char *[]){"weight", "rows", NULL}, (const char *[]){"emb", NULL}));
    static const char *const red[] = {"ReduceSum", "ReduceMean", "ReduceMax"};
    ob_buf r = node(red[mode], "red",
                    mode == SUM ? (const char *[]){"emb", "bax", NULL} : (const char *[]){"emb", NULL},
                    (const char *[]){"bag", NULL});
    ob_attr_int(&r, "keepdims", 0);
    if (mode != SUM) ob_attr_ints(&r, "axes", (int64_t[]){0}, 1);
    add(&b, r);
    ob_buf cast = node("Cast", "cast", (const char *[]){"true", NULL}, (const char *[]){"cout", NULL});
    ob_attr_int(&cast, "to", BOOL_);
    add(&b, cast);
    vout(&b, "cout", BOOL_, 0, NULL);
    vout(&b, "bag", F32, 1, (int64_t[]){5});
    ob_str(&b, 2, "body");
    ob_buf lp = node("Loop", "loop", (const char *[]){m_input ? "M" : "nbags", "true", NULL},
                     (const char *[]){"y", NULL});
    ob_attr_graph(&lp, "body", &b);
    add(&g, lp);
    vout(&g, "y", F32, 2, (int64_t[]){-1, 5});
    return ob_model(&g);
}

static frt_model *load(int mode, bool m_input, bool fuse) {
    ob_buf mb = torch_model(mode, m_input);
    frt_options opt;
    frt_options_init(&opt);
    opt.fuse = fuse;
    frt_model *m = NULL;
    frt_status st = frt_model_load_buffer(mb.p, mb.n, NULL, &opt, &m);
    free(mb.p);
    CHECK_MSG(st == FRT_OK, "load (mode %d, fuse %d): %s", mode, fuse, frt_last_error());
    return m;
}

/* Step of block 0 running node `name`, or NULL. */
static const frt_step *step_of(const frt_model *m, const char *name) {
    const frt_program *p = m->blocks[0].prog;
    for (size_t i = 0; i < p->n_steps; i++)
        if (strcmp(p->steps[i].ir->name, name) == 0) return &p->steps[i];
    return NULL;
}

static frt_status run(frt_runtime *rt, const int64_t *idx, int64_t L, const int64_t *off,
                      int64_t M, bool m_input, float *y, int64_t *rows) {
    frt_tensor in[3] = {
        {.dtype = FRT_INT64, .rank = 1, .shape = {L}, .data = (void *)idx, .nbytes = (size_t)L * 8},
        {.dtype = FRT_INT64, .rank = 1, .shape = {4}, .data = (void *)off, .nbytes = 32},
        {.dtype = FRT_INT64, .rank = 0, .data = &M, .nbytes = 8}};
    const char *names[3] = {"indices", "offsets", "M"};
    frt_tensor out;
    frt_status st = frt_run(rt, names, in, m_input ? 3 : 2, &out, 1, FRT_OUTPUTS_BORROW);
    if (st) return st;
    *rows = out.shape[0];
    CHECK(out.rank == 2 && out.shape[1] == 5);
    memcpy(y, out.data, out.nbytes);
    return FRT_OK;
}

static void test_models(void) {
    static const int64_t idx[9] = {3, 0, 6, -2, 5, 5, 1, 2, 4};
    static const int64_t offs[3][4] = {{0, 2, 2, 5}, {0, 0, 9, 9}, {0, 4, 1, 8}};
    for (int mode = SUM; mode <= MAX; mode++)
        for (int mi = 0; mi < 2; mi++) {
            frt_model *mf = load(mode, mi, true), *mu = load(mode, mi, false);
            frt_runtime *rf = NULL, *ru = NULL;
            if (mf && mu) {
                const frt_step *sf = step_of(mf, "loop"), *su = step_of(mu, "loop");
                CHECK_MSG(mf->n_blocks == 1 && sf && strcmp(sf->ir->op_type, "EmbeddingBag") == 0 &&
                              strncmp(sf->k.name, "embedding_bag_", 14) == 0,
                          "fused model: %zu blocks, step %s", mf->n_blocks, sf ? sf->k.name : "none");
                CHECK(mu->n_blocks == 2 && su && strcmp(su->ir->op_type, "Loop") == 0);
                CHECK_OK(frt_runtime_create(mf, &rf));
                CHECK_OK(frt_runtime_create(mu, &ru));
            }
            for (int r = 0; rf && ru && r < 6; r++) {
                float yf[64], yu[64];
                int64_t nf = -1, nu = -1, L = r == 4 ? 0 : 9, M = mi ? (r == 5 ? 2 : 4) : 4;
                CHECK_OK(run(rf, idx, L, offs[r % 3], M, mi, yf, &nf));
                CHECK_OK(run(ru, idx, L, offs[r % 3], M, mi, yu, &nu));
                CHECK_MSG(nf == M && nu == M, "bags %lld / %lld, expected %lld", (long long)nf,
                          (long long)nu, (long long)M);
                if (nf == M && nu == M)
                    CHECK_MSG(same(yf, yu, (size_t)(M * 5), 0.0f), "mode %d m_input %d run %d",
                              mode, mi, r);
            }
            if (rf && ru) { /* the same bad index fails both */
                static const int64_t bad[9] = {3, 0, 6, -2, 5, 9, 1, 2, 4};
                float y[64];
                int64_t n;
                CHECK(run(rf, bad, 9, offs[0], 4, mi, y, &n) == FRT_ERR_RUNTIME);
                CHECK_MSG(strstr(frt_last_error(), "index 9"), "%s", frt_last_error());
                CHECK(run(ru, bad, 9, offs[0], 4, mi, y, &n) == FRT_ERR_RUNTIME);
                if (mi) { /* more bags than offsets */
                    CHECK(run(rf, idx, 9, offs[0], 6, mi, y, &n) == FRT_ERR_RUNTIME);
                    CHECK(run(ru, idx, 9, offs[0], 6, mi, y, &n) == FRT_ERR_RUNTIME);
                }
            }
            frt_runtime_free(rf);
            frt_runtime_free(ru);
            frt_model_free(mf);
            frt_model_free(mu);
        }
}

int main(void) {
    test_kernel();
    test_models();
    printf("test_embedding_bag: %d checks, %d failures\n", t_checks, t_failures);
    return t_failures != 0;
}
