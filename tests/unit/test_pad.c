/* Pad against a naive reference (per output element index math), every opset form and mode. */
#include <stdint.h>

#include "op_harness.h"
#include "test_util.h"

enum { M_CONSTANT = 0, M_REFLECT = 1, M_EDGE = 2, M_WRAP = 3 };
static const char *const mode_names[] = {"constant", "reflect", "edge", "wrap"};

/* Opset forms: attributes (opset 10), inputs (opset 13), inputs with axes (opset 18). */
enum { F_ATTR = 0, F_INPUT = 1, F_AXES = 2 };


static unsigned rng = 12345u;
static int rnd(int lo, int hi) { /* inclusive */
    rng = rng * 1664525u + 1013904223u;
    return lo + (int)((rng >> 8) % (unsigned)(hi - lo + 1));
}

/* Reference: y[o] = x[i] with i per axis = o - b, outside [0, n): constant -> value, edge ->
 * nearest end, reflect -> mirrored about the end element. */
static void ref_pad(const void *x, const int64_t *in, int r, const int64_t *b, const int64_t *e,
                    int mode, const void *value, size_t es, void *y) {
    int64_t od[8];
    for (int d = 0; d < r; d++) od[d] = in[d] + b[d] + e[d];
    int64_t total = numel(od, r);
    for (int64_t lin = 0; lin < total; lin++) {
        int64_t rem = lin, src = 0, stride = 1;
        int outside = 0;
        int64_t o[8];
        for (int d = r - 1; d >= 0; d--) {
            o[d] = rem % od[d];
            rem /= od[d];
        }
        for (int d = r - 1; d >= 0; d--) {
            int64_t i = o[d] - b[d], n = in[d];
            if (i < 0 || i >= n) {
                if (mode == M_CONSTANT) outside = 1;
                else if (mode == M_EDGE) i = i < 0 ? 0 : n - 1;
                else if (mode == M_WRAP) i = ((i % n) + n) % n;
                else i = i < 0 ? -i : 2 * (n - 1) - i;
            }
            src += i * stride;
            stride *= n;
        }
        memcpy((char *)y + lin * (int64_t)es, outside ? value : (const char *)x + src * (int64_t)es,
               es);
    }
}

/* One Pad call in any form. pads are per axis over the full rank (b[], e[]); with F_AXES only the
 * axes listed in axes[0..n_axes) are passed (entries may be negative), others must be 0.
 * value: NULL = absent (zero); else es bytes; in F_ATTR form the float attr_value is used. */
typedef struct pad_call {
    int form;
    int mode;
    int32_t dtype;
    int rank;
    const int64_t *dims;
    void *x;
    const int64_t *b, *e;
    const int64_t *axes;
    int n_axes;
    const void *value;       /* input forms */
    float attr_value;        /* F_ATTR form; used when has_attr_value */
    int has_attr_value;
    int pads_const;          /* pads/axes/value constants at select */
    int unknown;             /* select sees data dims -1 */
    int threads;
    int64_t opset;           /* 0: 10 / 13 / 18 by form */
} pad_call;

static frt_status run_pad(const pad_call *pc, frt_value *out, const char **kname) {
    frt_value ins[4];
    int64_t pads[16];
    int64_t axes_buf[8];
    int r = pc->rank, n_in = 1;
    unsigned absent = 0, cmask = 0;
    frt_onnx_attr attrs[3];
    size_t na = 0;
    if (pc->mode != M_CONSTANT || pc->form == F_ATTR)
        attrs[na++] = frt_test_attr_string("mode", mode_names[pc->mode]);
    ins[0] = frt_test_value(pc->dtype, r, pc->dims, pc->x);
    int np;
    if (pc->form == F_AXES) {
        for (int i = 0; i < pc->n_axes; i++) {
            int d = (int)(pc->axes[i] < 0 ? pc->axes[i] + r : pc->axes[i]);
            pads[i] = pc->b[d];
            pads[i + pc->n_axes] = pc->e[d];
            axes_buf[i] = pc->axes[i];
        }
        np = 2 * pc->n_axes;
    } else {
        for (int d = 0; d < r; d++) {
            pads[d] = pc->b[d];
            pads[d + r] = pc->e[d];
        }
        np = 2 * r;
    }
    if (pc->form == F_ATTR) {
        attrs[na++] = frt_test_attr_ints("pads", pads, (size_t)np);
        if (pc->has_attr_value) attrs[na++] = frt_test_attr_float("value", pc->attr_value);
    } else {
        int64_t pd[1] = {np};
        ins[1] = frt_test_value(FRT_INT64, 1, pd, pads);
        int64_t sd[1] = {1};
        ins[2] = frt_test_value(pc->dtype, 0, sd, (void *)pc->value);
        n_in = 2;
        if (pc->value || pc->form == F_AXES) n_in = 3;
        if (!pc->value) absent |= 1u << 2;
        if (pc->form == F_AXES) {
            int64_t ad[1] = {pc->n_axes};
            ins[3] = frt_test_value(FRT_INT64, 1, ad, axes_buf);
            n_in = 4;
        }
        if (pc->pads_const) cmask |= 0xEu;
    }
    frt_test_op t = {0};
    t.op_type = "Pad";
    t.opset = pc->opset             ? pc->opset
              : pc->mode == M_WRAP  ? 19 /* wrap is opset 19 */
              : pc->form == F_ATTR  ? 10
              : pc->form == F_INPUT ? 13
                                    : 18;
    t.attrs = attrs;
    t.n_attrs = na;
    t.inputs = ins;
    t.n_in = n_in;
    t.absent_mask = absent;
    t.const_mask = cmask;
    t.unknown_dims = pc->unknown;
    t.n_out = 1;
    t.n_threads = pc->threads;
    return frt_test_run_op(&t, out, kname);
}

/* Runs pc and compares against the reference with value `val` (es bytes). */
static int check_pad(const pad_call *pc, const void *val, const char *want_kernel) {
    size_t es = frt_dtype_size((frt_dtype)pc->dtype);
    int64_t od[8];
    for (int d = 0; d < pc->rank; d++) od[d] = pc->dims[d] + pc->b[d] + pc->e[d];
    int64_t n = numel(od, pc->rank);
    char *ref = malloc((size_t)(n ? n : 1) * es);
    ref_pad(pc->x, pc->dims, pc->rank, pc->b, pc->e, pc->mode, val, es, ref);
    frt_value out;
    const char *kn = NULL;
    frt_status st = run_pad(pc, &out, &kn);
    int ok = st == FRT_OK;
    if (!ok) {
        fprintf(stderr, "  run failed (%d): %s\n", st, frt_last_error());
    } else {
        ok = out.rank == pc->rank && out.dtype == pc->dtype;
        for (int d = 0; ok && d < pc->rank; d++) ok = out.dims[d] == od[d];
        if (!ok) fprintf(stderr, "  wrong output shape\n");
        if (ok && memcmp(out.data, ref, (size_t)n * es) != 0) {
            ok = 0;
            for (int64_t i = 0; i < n; i++)
                if (memcmp((char *)out.data + i * (int64_t)es, ref + i * (int64_t)es, es)) {
                    fprintf(stderr, "  first mismatch at element %lld\n", (long long)i);
                    break;
                }
        }
        if (ok && want_kernel && (!kn || strcmp(kn, want_kernel) != 0)) {
            fprintf(stderr, "  kernel %s, expected %s\n", kn ? kn : "(null)", want_kernel);
            ok = 0;
        }
        free(out.data);
    }
    if (!ok) {
        fprintf(stderr, "  case: form %d mode %s dtype %d rank %d const %d unknown %d dims", pc->form,
                mode_names[pc->mode], pc->dtype, pc->rank, pc->pads_const, pc->unknown);
        for (int d = 0; d < pc->rank; d++)
            fprintf(stderr, " %lld(%lld,%lld)", (long long)pc->dims[d], (long long)pc->b[d],
                    (long long)pc->e[d]);
        fprintf(stderr, "\n");
    }
    free(ref);
    return ok;
}

/* Random valid pads for dim n under mode. */
static void rand_pads(int mode, int64_t n, int64_t *b, int64_t *e) {
    for (;;) {
        if (mode == M_REFLECT) {
            *b = rnd(-(int)n, (int)n - 1);
            *e = rnd(-(int)n, (int)n - 1);
        } else if (mode == M_WRAP) { /* pads may exceed the dim */
            *b = rnd(-(int)n, 2 * (int)n + 1);
            *e = rnd(-(int)n, 2 * (int)n + 1);
        } else {
            *b = rnd(-(int)n, 3);
            *e = rnd(-(int)n, 3);
        }
        if (rnd(0, 3) == 0) *b = 0;
        if (rnd(0, 3) == 0) *e = 0;
        if (n + *b + *e >= 0) return;
    }
}

/* ---- random cases over modes, ranks, dtypes and forms ---- */

static void test_random(void) {
    static const int32_t dtypes[] = {FRT_FLOAT32, FRT_INT64, FRT_UINT8, FRT_FLOAT16, FRT_FLOAT64};
    int cases = 0, fails = 0;
    for (int rank = 1; rank <= 5; rank++) {
        for (int mode = 0; mode < 4; mode++) {
            for (int iter = 0; iter < 24; iter++) {
                int32_t dt = dtypes[iter % 5];
                size_t es = frt_dtype_size((frt_dtype)dt);
                int64_t dims[5], b[5], e[5];
                int maxd = rank >= 4 ? 4 : 7;
                for (int d = 0; d < rank; d++) {
                    dims[d] = rnd(mode == M_CONSTANT ? 0 : 1, maxd);
                    if (mode == M_CONSTANT && dims[d] == 0 && rnd(0, 1)) dims[d] = 3;
                    rand_pads(mode, dims[d], &b[d], &e[d]);
                    if (rnd(0, 2) == 0) b[d] = e[d] = 0; /* unpadded axes (merged units) */
                }
                int64_t n = numel(dims, rank);
                void *x = malloc((size_t)(n ? n : 1) * es);
                fill_bytes(x, (size_t)n * es, (unsigned)(iter * 31 + rank * 7 + mode));
                unsigned char val[8];
                fill_bytes(val, sizeof val, (unsigned)iter + 99u);
                unsigned char zero[8] = {0};
                for (int form = mode == M_WRAP ? 1 : 0; form < 3; form++) {
                    pad_call pc = {0};
                    pc.form = form;
                    pc.mode = mode;
                    pc.dtype = dt;
                    pc.rank = rank;
                    pc.dims = dims;
                    pc.x = x;
                    pc.b = b;
                    pc.e = e;
                    pc.pads_const = (iter / 2) % 2;
                    pc.unknown = (iter / 4) % 2;
                    const void *want = zero;
                    unsigned char aval[8];
                    int64_t axes[5];
                    if (form == F_ATTR) {
                        /* a value every dtype represents exactly; half: 2.5 = 0x4100 */
                        pc.has_attr_value = iter % 3 != 0;
                        float f = 2.5f;
                        pc.attr_value = f;
                        memset(aval, 0, sizeof aval);
                        if (pc.has_attr_value) {
                            if (dt == FRT_FLOAT32) memcpy(aval, &f, 4);
                            else if (dt == FRT_FLOAT64) { double dv = f; memcpy(aval, &dv, 8); }
                            else if (dt == FRT_FLOAT16) { uint16_t h = 0x4100; memcpy(aval, &h, 2); }
                            else if (dt == FRT_INT64) { int64_t v = 2; memcpy(aval, &v, 8); }
                            else if (dt == FRT_UINT8) aval[0] = 2;
                        }
                        want = aval;
                    } else {
                        if (iter % 3 != 0) {
                            pc.value = val;
                            want = val;
                        }
                        if (form == F_AXES) {
                            /* the padded axes (and some unpadded), shuffled, some negative */
                            int na = 0;
                            for (int d = 0; d < rank; d++)
                                if (b[d] || e[d] || rnd(0, 1)) axes[na++] = d;
                            for (int i = na - 1; i > 0; i--) {
                                int j = rnd(0, i);
                                int64_t t = axes[i];
                                axes[i] = axes[j];
                                axes[j] = t;
                            }
                            for (int i = 0; i < na; i++)
                                if (rnd(0, 1)) axes[i] -= rank;
                            pc.axes = axes;
                            pc.n_axes = na;
                        }
                    }
                    if (mode != M_CONSTANT) want = zero;
                    cases++;
                    if (!check_pad(&pc, want, NULL)) fails++;
                }
                free(x);
            }
        }
    }
    CHECK_MSG(fails == 0, "%d of %d random cases failed", fails, cases);
}

/* ---- hand-written cases ---- */

static void test_small_exact(void) {
    /* rank 1 constant / reflect / edge / wrap with literal expectations */
    float x[4] = {1, 2, 3, 4};
    int64_t dims[1] = {4}, b[1] = {2}, e[1] = {3};
    static const float want[4][9] = {
        {9, 9, 1, 2, 3, 4, 9, 9, 9},
        {3, 2, 1, 2, 3, 4, 3, 2, 1},
        {1, 1, 1, 2, 3, 4, 4, 4, 4},
        {3, 4, 1, 2, 3, 4, 1, 2, 3},
    };
    for (int mode = 0; mode < 4; mode++) {
        float v = 9;
        pad_call pc = {0};
        pc.form = F_INPUT;
        pc.mode = mode;
        pc.dtype = FRT_FLOAT32;
        pc.rank = 1;
        pc.dims = dims;
        pc.x = x;
        pc.b = b;
        pc.e = e;
        pc.value = &v;
        pc.pads_const = 1;
        frt_value out;
        CHECK_OK(run_pad(&pc, &out, NULL));
        if (out.data) {
            CHECK(out.dims[0] == 9);
            CHECK_MSG(memcmp(out.data, want[mode], sizeof want[mode]) == 0, "mode %s",
                      mode_names[mode]);
            free(out.data);
        }
    }
    /* negative pads crop: [1,2,3,4] with (-1, +1) edge -> [2,3,4,4] */
    int64_t bn[1] = {-1}, en[1] = {1};
    pad_call pc = {0};
    pc.form = F_INPUT;
    pc.mode = M_EDGE;
    pc.dtype = FRT_FLOAT32;
    pc.rank = 1;
    pc.dims = dims;
    pc.x = x;
    pc.b = bn;
    pc.e = en;
    pc.pads_const = 1;
    frt_value out;
    CHECK_OK(run_pad(&pc, &out, NULL));
    if (out.data) {
        const float w[4] = {2, 3, 4, 4};
        CHECK(out.dims[0] == 4 && memcmp(out.data, w, sizeof w) == 0);
        free(out.data);
    }
}

/* Opset 1 `paddings` attribute and opset 2 `pads`, float16 value conversion (0.1 -> 0x2E66). */
static void test_attr_forms(void) {
    uint16_t x[3] = {0x3C00, 0x4000, 0x4200}; /* 1, 2, 3 */
    int64_t dims[2] = {1, 3};
    int64_t pads[4] = {0, 1, 0, 2};
    frt_onnx_attr attrs[2] = {frt_test_attr_ints("paddings", pads, 4),
                              frt_test_attr_float("value", 0.1f)};
    frt_value in = frt_test_value(FRT_FLOAT16, 2, dims, x);
    frt_test_op t = {0};
    t.op_type = "Pad";
    t.opset = 1;
    t.attrs = attrs;
    t.n_attrs = 2;
    t.inputs = &in;
    t.n_in = 1;
    t.n_out = 1;
    frt_value out;
    CHECK_OK(frt_test_run_op(&t, &out, NULL));
    if (out.data) {
        const uint16_t w[6] = {0x2E66, 0x3C00, 0x4000, 0x4200, 0x2E66, 0x2E66};
        CHECK(out.rank == 2 && out.dims[0] == 1 && out.dims[1] == 6);
        CHECK(memcmp(out.data, w, sizeof w) == 0);
        free(out.data);
    }
    attrs[0] = frt_test_attr_ints("pads", pads, 4);
    attrs[1] = frt_test_attr_float("value", -70000.0f); /* overflows half: -inf */
    t.opset = 2;
    CHECK_OK(frt_test_run_op(&t, &out, NULL));
    if (out.data) {
        CHECK(((uint16_t *)out.data)[0] == 0xFC00 && ((uint16_t *)out.data)[5] == 0xFC00);
        free(out.data);
    }
    /* int32 data: value attribute saturates */
    int32_t xi[3] = {1, 2, 3};
    in = frt_test_value(FRT_INT32, 2, dims, xi);
    attrs[1] = frt_test_attr_float("value", -3.0e10f);
    CHECK_OK(frt_test_run_op(&t, &out, NULL));
    if (out.data) {
        const int32_t w[6] = {INT32_MIN, 1, 2, 3, INT32_MIN, INT32_MIN};
        CHECK(memcmp(out.data, w, sizeof w) == 0);
        free(out.data);
    }
}

/* The NCHW float32 fast path, serial and threaded, zero and non-zero values, negative pads. */
static void test_nchw_fast(void) {
    static const int64_t shapes[][4] = {{1, 3, 7, 5}, {2, 5, 9, 13}, {1, 1, 1, 1}, {3, 16, 61, 67}};
    static const int64_t hw_pads[][4] = {
        {1, 1, 1, 1}, {0, 2, 3, 0}, {-1, 2, 1, -2}, {2, 0, -3, 1}, {0, 0, 0, 0}, {3, 3, 0, 0},
        {1, -2, 0, 1}, {0, -1, -1, -1}, {-2, -4, 5, 6}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        for (size_t pi = 0; pi < sizeof hw_pads / sizeof hw_pads[0]; pi++) {
            const int64_t *dims = shapes[si];
            int64_t b[4] = {0, 0, hw_pads[pi][0], hw_pads[pi][1]};
            int64_t e[4] = {0, 0, hw_pads[pi][2], hw_pads[pi][3]};
            if (dims[2] + b[2] + e[2] < 0 || dims[3] + b[3] + e[3] < 0) continue;
            int64_t n = numel(dims, 4);
            float *x = malloc((size_t)n * sizeof(float));
            t_fill(x, (size_t)n, (unsigned)(si * 10 + pi));
            for (int variant = 0; variant < 4; variant++) {
                float v = variant & 1 ? -1.25f : 0.0f;
                float zero = 0;
                pad_call pc = {0};
                pc.form = variant & 2 ? F_ATTR : F_INPUT;
                pc.mode = M_CONSTANT;
                pc.dtype = FRT_FLOAT32;
                pc.rank = 4;
                pc.dims = dims;
                pc.x = x;
                pc.b = b;
                pc.e = e;
                pc.pads_const = 1;
                pc.threads = si == 3 ? 2 : 1;
                pc.unknown = (int)(pi & 1);
                if (variant & 1) {
                    pc.value = &v;
                    pc.has_attr_value = 1;
                    pc.attr_value = v;
                }
                CHECK_MSG(check_pad(&pc, variant & 1 ? (const void *)&v : &zero, "pad_nchw_f32"),
                          "nchw shape %zu pads %zu variant %d", si, pi, variant);
            }
            free(x);
        }
    }
}

/* Kernel choice: the fast path needs known pads, float32, constant mode, no N/C pads. */
static void test_kernel_choice(void) {
    int64_t dims[4] = {2, 3, 5, 4};
    float x[120];
    t_fill(x, 120, 3);
    int64_t b[4] = {0, 1, 1, 1}, e[4] = {0, 0, 1, 1};
    pad_call pc = {0};
    pc.form = F_INPUT;
    pc.mode = M_CONSTANT;
    pc.dtype = FRT_FLOAT32;
    pc.rank = 4;
    pc.dims = dims;
    pc.x = x;
    pc.b = b;
    pc.e = e;
    pc.pads_const = 1;
    float zero[2] = {0};
    CHECK(check_pad(&pc, zero, "pad")); /* C padded */
    b[1] = 0;
    pc.pads_const = 0;
    CHECK(check_pad(&pc, zero, "pad")); /* pads unknown at select */
    pc.pads_const = 1;
    pc.mode = M_REFLECT;
    CHECK(check_pad(&pc, zero, "pad"));
    pc.mode = M_CONSTANT;
    CHECK(check_pad(&pc, zero, "pad_nchw_f32"));
    /* a constant_value computed at run time (not constant at select) on the fast path */
    float v = 4.5f;
    pc.value = &v;
    pc.pads_const = 0;
    CHECK(check_pad(&pc, &v, "pad"));
}

/* Large general-path cases split over two threads. */
static void test_threaded_general(void) {
    int64_t dims[3] = {37, 41, 43};
    int64_t n = numel(dims, 3);
    int64_t *x = malloc((size_t)n * sizeof(int64_t));
    fill_bytes(x, (size_t)n * sizeof(int64_t), 5);
    int64_t b[3] = {3, -2, 5}, e[3] = {-4, 7, 1};
    int64_t zero = 0, v = -77;
    for (int mode = 0; mode < 3; mode++) {
        pad_call pc = {0};
        pc.form = F_INPUT;
        pc.mode = mode;
        pc.dtype = FRT_INT64;
        pc.rank = 3;
        pc.dims = dims;
        pc.x = x;
        pc.b = b;
        pc.e = e;
        pc.value = &v;
        pc.pads_const = mode != 1;
        pc.threads = 2;
        CHECK_MSG(check_pad(&pc, mode == M_CONSTANT ? &v : &zero, "pad"), "mode %s",
                  mode_names[mode]);
    }
    free(x);
}

/* Load-time shape inference: known pads give dims; unknown pads give -1; rank from pads. */
static frt_status infer_only(int64_t opset, const frt_onnx_attr *attrs, size_t na, frt_value *ins,
                             int n_in, frt_value *out) {
    const frt_op_def *def = frt_op_find("", "Pad");
    if (!def) return FRT_ERR_INTERNAL;
    int32_t in_ids[4], out_ids[1] = {n_in};
    frt_value *in_p[4], *out_p[1] = {out};
    for (int i = 0; i < n_in; i++) {
        in_ids[i] = i;
        in_p[i] = &ins[i];
    }
    frt_node node = {0};
    node.name = "infer_node";
    node.op_type = "Pad";
    node.domain = "";
    node.n_in = n_in;
    node.n_out = 1;
    node.in = in_ids;
    node.out = out_ids;
    node.attrs = attrs;
    node.n_attrs = na;
    node.opset = opset;
    memset(out, 0, sizeof *out);
    frt_op_ctx c = {&node, opset, n_in, 1, in_p, out_p, NULL, FRT_ISA_PORTABLE};
    return def->infer(&c);
}

static void test_infer(void) {
    int64_t xd[3] = {2, -1, 5}, pd[1] = {6};
    int64_t pads[6] = {0, 1, 2, 0, 1, -3};
    frt_value ins[4];
    frt_value out;
    ins[0] = frt_test_value(FRT_FLOAT32, 3, xd, NULL);
    ins[1] = frt_test_value(FRT_INT64, 1, pd, pads);
    CHECK_OK(infer_only(13, NULL, 0, ins, 2, &out));
    CHECK(out.rank == 3 && out.dims[0] == 2 && out.dims[1] == -1 && out.dims[2] == 4);
    /* pads not constant: padded dims unknown (the runtime reports an unresolved shape) */
    ins[1].data = NULL;
    int64_t xk[3] = {2, 3, 5};
    ins[0] = frt_test_value(FRT_FLOAT32, 3, xk, NULL);
    CHECK_OK(infer_only(13, NULL, 0, ins, 2, &out));
    CHECK(out.rank == 3 && out.dims[0] == -1 && out.dims[1] == -1 && out.dims[2] == -1);
    /* unknown rank: rank from the pads length */
    ins[0].rank = -1;
    ins[1].data = pads;
    CHECK_OK(infer_only(13, NULL, 0, ins, 2, &out));
    CHECK(out.rank == 3 && out.dims[0] == -1 && out.dims[2] == -1);
    /* unknown pads length */
    ins[0] = frt_test_value(FRT_FLOAT32, 3, xk, NULL);
    int64_t pu[1] = {-1};
    ins[1] = frt_test_value(FRT_INT64, 1, pu, NULL);
    CHECK_OK(infer_only(13, NULL, 0, ins, 2, &out));
    CHECK(out.rank == 3 && out.dims[1] == -1);
    /* axes not constant: nothing known; with axes known but pads not, dims -1 */
    int64_t ad[1] = {1}, axes[1] = {-1}, p2d[1] = {2}, p2[2] = {1, 2};
    ins[1] = frt_test_value(FRT_INT64, 1, p2d, p2);
    ins[2] = frt_test_value(FRT_FLOAT32, 0, NULL, NULL);
    ins[3] = frt_test_value(FRT_INT64, 1, ad, NULL);
    CHECK_OK(infer_only(18, NULL, 0, ins, 4, &out));
    CHECK(out.rank == 3 && out.dims[2] == -1);
    ins[3].data = axes;
    CHECK_OK(infer_only(18, NULL, 0, ins, 4, &out));
    CHECK(out.rank == 3 && out.dims[0] == 2 && out.dims[1] == 3 && out.dims[2] == 8);
    /* attribute form with unknown input rank */
    frt_onnx_attr a = frt_test_attr_ints("pads", pads, 6);
    ins[0].rank = -1;
    CHECK_OK(infer_only(10, &a, 1, ins, 1, &out));
    CHECK(out.rank == 3);
}

/* An empty input dim padded in constant mode; an empty output. */
static void test_empty(void) {
    int64_t dims[2] = {0, 3};
    int64_t b[2] = {2, 0}, e[2] = {1, 0};
    float v = 3.0f;
    pad_call pc = {0};
    pc.form = F_INPUT;
    pc.mode = M_CONSTANT;
    pc.dtype = FRT_FLOAT32;
    pc.rank = 2;
    pc.dims = dims;
    pc.x = NULL;
    pc.b = b;
    pc.e = e;
    pc.value = &v;
    pc.pads_const = 1;
    CHECK(check_pad(&pc, &v, NULL));
    int64_t d2[2] = {2, 3};
    float x[6] = {1, 2, 3, 4, 5, 6};
    int64_t b2[2] = {0, -2}, e2[2] = {0, -1};
    pc.dims = d2;
    pc.x = x;
    pc.b = b2;
    pc.e = e2;
    frt_value out;
    CHECK_OK(run_pad(&pc, &out, NULL));
    if (out.data) {
        CHECK(out.rank == 2 && out.dims[0] == 2 && out.dims[1] == 0);
        free(out.data);
    }
}

/* ---- errors ---- */

static void test_errors(void) {
    float x[12];
    t_fill(x, 12, 1);
    int64_t dims[3] = {1, 3, 4};
    frt_value out;
    frt_value ins[4];
    int64_t pd4[1] = {4}, pads4[4] = {0, 1, 0, 1};
    frt_test_op t = {0};
    t.op_type = "Pad";
    t.opset = 13;
    t.inputs = ins;
    t.n_out = 1;
    t.const_mask = 0xE;

    /* wrong pads length (input form) */
    ins[0] = frt_test_value(FRT_FLOAT32, 3, dims, x);
    ins[1] = frt_test_value(FRT_INT64, 1, pd4, pads4);
    t.n_in = 2;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("pads has 4 entries, expected 6") && err_has("test_node") &&
              err_has("(Pad)"), "%s", frt_last_error());
    /* ... found at reshape when pads are a run-time (shape) value with unknown length at load */
    t.const_mask = 0;
    t.unknown_dims = 1;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("pads has 4 entries, expected 6"), "%s", frt_last_error());
    t.unknown_dims = 0;
    t.const_mask = 0xE;

    /* wrong pads length (attribute form) */
    frt_onnx_attr attrs[3];
    attrs[0] = frt_test_attr_ints("pads", pads4, 4);
    t.opset = 10;
    t.attrs = attrs;
    t.n_attrs = 1;
    t.n_in = 1;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("pads has 4 entries, expected 6"), "%s", frt_last_error());
    /* pads attribute of the wrong type, then missing */
    float fpads[6] = {0};
    attrs[0] = frt_test_attr_floats("pads", fpads, 6);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_MALFORMED);
    CHECK_MSG(err_has("attribute 'pads' (ints) is required"), "%s", frt_last_error());
    t.n_attrs = 0;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_MALFORMED);
    CHECK_MSG(err_has("'pads'"), "%s", frt_last_error());

    /* reflect pad >= dim */
    int64_t pd6[1] = {6}, refl[6] = {0, 0, 4, 0, 0, 0};
    attrs[0] = frt_test_attr_string("mode", "reflect");
    t.opset = 13;
    t.n_attrs = 1;
    t.n_in = 2;
    ins[1] = frt_test_value(FRT_INT64, 1, pd6, refl);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("reflect pads (4, 0) on axis 2 must be smaller than the input dim 4"), "%s",
              frt_last_error());
    refl[2] = 0;
    refl[4] = 3; /* dim 3: pad 3 too large too */
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("reflect pads (0, 3) on axis 1"), "%s", frt_last_error());
    refl[4] = 2; /* fine */
    CHECK_OK(frt_test_run_op(&t, &out, NULL));
    free(out.data);

    /* output dim negative */
    int64_t neg[6] = {0, -2, 0, 0, -2, 0};
    ins[1] = frt_test_value(FRT_INT64, 1, pd6, neg);
    t.n_attrs = 0;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("output dim 1 would be -1"), "%s", frt_last_error());

    /* huge pads whose sum is small (index arithmetic would overflow) */
    int64_t huge[6] = {0, INT64_MIN, 0, 0, INT64_MAX, 0};
    ins[1] = frt_test_value(FRT_INT64, 1, pd6, huge);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("out of range"), "%s", frt_last_error());

    /* edge on an empty dim */
    int64_t d0[3] = {1, 0, 4}, edge[6] = {0, 1, 0, 0, 0, 0};
    ins[0] = frt_test_value(FRT_FLOAT32, 3, d0, x);
    ins[1] = frt_test_value(FRT_INT64, 1, pd6, edge);
    attrs[0] = frt_test_attr_string("mode", "edge");
    t.n_attrs = 1;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("edge padding of axis 1"), "%s", frt_last_error());
    ins[0] = frt_test_value(FRT_FLOAT32, 3, dims, x);

    /* wrap before opset 19, wrap on an empty dim, unknown modes */
    int64_t ok6[6] = {0, 1, 0, 0, 1, 0};
    ins[1] = frt_test_value(FRT_INT64, 1, pd6, ok6);
    attrs[0] = frt_test_attr_string("mode", "wrap");
    t.opset = 18;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_MALFORMED);
    CHECK_MSG(err_has("'wrap' needs opset 19"), "%s", frt_last_error());
    t.opset = 19;
    ins[0] = frt_test_value(FRT_FLOAT32, 3, d0, x);
    ins[1] = frt_test_value(FRT_INT64, 1, pd6, edge);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("wrap padding of axis 1"), "%s", frt_last_error());
    ins[0] = frt_test_value(FRT_FLOAT32, 3, dims, x);
    ins[1] = frt_test_value(FRT_INT64, 1, pd6, ok6);
    attrs[0] = frt_test_attr_string("mode", "mirror");
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_MALFORMED);
    CHECK_MSG(err_has("unknown mode 'mirror'"), "%s", frt_last_error());
    t.n_attrs = 0;

    /* constant_value with another dtype / not a scalar */
    int64_t iv = 1;
    int64_t one[1] = {1}, two[1] = {2};
    float fv[2] = {1, 2};
    ins[2] = frt_test_value(FRT_INT64, 0, NULL, &iv);
    t.n_in = 3;
    t.opset = 13;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("constant_value has dtype int64"), "%s", frt_last_error());
    ins[2] = frt_test_value(FRT_FLOAT32, 1, two, fv);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("constant_value must be a scalar"), "%s", frt_last_error());
    ins[2] = frt_test_value(FRT_FLOAT32, 1, one, fv); /* [1] is accepted */
    CHECK_OK(frt_test_run_op(&t, &out, NULL));
    if (out.data) {
        CHECK(((float *)out.data)[0] == 1.0f);
        free(out.data);
    }

    /* axes: length mismatch, out of range, repeated, axes before opset 18 */
    int64_t ad1[1] = {1}, ad2[1] = {2}, ax[2] = {1, -3};
    t.opset = 18;
    t.n_in = 4;
    t.absent_mask = 1u << 2;
    ins[1] = frt_test_value(FRT_INT64, 1, pd4, pads4);
    ins[3] = frt_test_value(FRT_INT64, 1, ad1, ax);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("pads has 4 entries, expected 2 (2 * 1 axes)"), "%s", frt_last_error());
    ins[3] = frt_test_value(FRT_INT64, 1, ad2, ax);
    ax[1] = 3;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("axis 3 out of range for rank 3"), "%s", frt_last_error());
    ax[1] = -2;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("axis -2 appears twice"), "%s", frt_last_error());
    ax[1] = -3;
    CHECK_OK(frt_test_run_op(&t, &out, NULL));
    if (out.data) {
        CHECK(out.dims[0] == 3 && out.dims[1] == 3 && out.dims[2] == 4);
        free(out.data);
    }
    t.opset = 13;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_MALFORMED);
    CHECK_MSG(err_has("expects 2 to 3 inputs"), "%s", frt_last_error());
    t.absent_mask = 0;

    /* pads of the wrong dtype / rank */
    float fp[6] = {0};
    ins[1] = frt_test_value(FRT_FLOAT32, 1, pd6, fp);
    t.n_in = 2;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_UNSUPPORTED);
    CHECK_MSG(err_has("pads input has dtype float32"), "%s", frt_last_error());
    int64_t p23[2] = {2, 3};
    ins[1] = frt_test_value(FRT_INT64, 2, p23, ok6);
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_SHAPE);
    CHECK_MSG(err_has("pads input must be 1-D"), "%s", frt_last_error());
    /* missing pads input */
    t.n_in = 1;
    CHECK(frt_test_run_op(&t, &out, NULL) == FRT_ERR_MALFORMED);
}

int main(void) {
    test_small_exact();
    test_attr_forms();
    test_random();
    test_nchw_fast();
    test_kernel_choice();
    test_threaded_general();
    test_infer();
    test_empty();
    test_errors();
    TEST_MAIN_END();
}
