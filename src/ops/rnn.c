/* Recurrent operators: RNN, GRU, LSTM (float32).
 *
 * Inputs (D = 2 for direction "bidirectional", else 1; G = gates: RNN 1, GRU 3 (z r h),
 * LSTM 4 (i o f c); H = hidden_size; T = sequence length, B = batch, I = input size):
 *   X [T,B,I] (layout 0) or [B,T,I] (layout 1, opset >= 14)
 *   W [D, G*H, I], R [D, G*H, H], B [D, 2*G*H] optional (Wb then Rb),
 *   sequence_lens [B] int32 optional (each in [0, T], checked at run time),
 *   initial_h [D,B,H] (layout 1: [B,D,H]) optional, LSTM: initial_c like initial_h, P [D, 3*H]
 *   (peepholes i o f) optional.
 * Outputs (each optional): Y [T,D,B,H] (layout 1: [B,T,D,H]), Y_h like initial_h, LSTM: Y_c.
 * Attributes: hidden_size (else taken from R), direction, activations (+ activation_alpha/beta,
 * consumed in order by the activations that take them), clip (applied to every activation input),
 * layout, GRU linear_before_reset, LSTM input_forget (f = 1 - i).
 * Sequence lengths: batch row b runs steps 0..L_b-1 (forward t = s, reverse t = L_b-1-s); Y is
 * zero at t >= L_b and Y_h / Y_c hold the state after the row's last step (initial state when
 * L_b == 0).
 *
 * Kernel: per direction, the input projection of all T*B rows is one GEMM X * W^T into scratch
 * (AVX2 tier at one thread: the recurrent small-M kernel on W packed at select, 4 rows at a time,
 * W read once per 4 rows from L2/L3: ~93 GFLOP/s on Zen 3 against ~80 for the SGEMM (OpenBLAS)
 * at these shapes, 128 x 1024 x 128..256);
 * then each step runs the recurrent GEMM H_prev * R^T (GRU with linear_before_reset = 0: the z,r
 * part, then (r . H_prev) * Rh^T) and the gate math row by row, with sigmoid/tanh/relu from the
 * activation variants of the ISA tier (x86/activation_*.c). Constant W and R are packed for the
 * GEMM at select (unless the tier calls the BLAS, which packs itself). All working memory comes
 * from the step's scratch.
 * Fused steps (tiers with frt_rnn_step_variant_get: AVX-512, AVX2 and portable): LSTM without clip,
 * input_forget or peepholes and GRU with linear_before_reset, default activations, constant R:
 * each step computes, per group of 16 hidden units and up to 4 batch rows, the recurrent product
 * in registers and applies the gate math to it right away (R packed per unit group at select,
 * frt_rnn_pack_gates, in the variant's group width and gates per pass; AVX2: GRU 8 units in one
 * pass of 3 gates, LSTM 24 units in 4 passes of one gate (12 accumulators for 4 rows), through a
 * stack buffer, x86/rnn_avx2.c), writing c, the new h (double-buffered) and Y's row; rows past
 * their sequence length keep their state. The AVX-512 steps start the accumulators from xw + bias and
 * use their own sigmoid / tanh on a table-driven exp (x86/rnn_avx512.c: fewer FMA-pipe operations
 * than the activation ops' loops, within 2e-7 / 1e-6 relative; the LSTM step divides 3 times per
 * unit instead of 5) and read R as one stream per step with software prefetch (inputs k run down
 * in the reverse sweeps). No rec buffer and no separate passes over the gates. When h
 * starts at zero (initial_h absent or zero) and R is finite, the first step skips the product.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "op.h"
#include "sgemm.h"
#include "util/threadpool.h"
#include "x86/rnn_simd.h"
#include "x86/simd_elementwise.h"

enum { OP_RNN = 0, OP_GRU = 1, OP_LSTM = 2 };
enum { DIR_FORWARD = 0, DIR_REVERSE = 1, DIR_BIDI = 2 };

typedef enum rnn_act_kind {
    A_SIGMOID, A_TANH, A_RELU, A_AFFINE, A_LEAKYRELU, A_THRESHOLDEDRELU, A_SCALEDTANH,
    A_HARDSIGMOID, A_ELU, A_SOFTSIGN, A_SOFTPLUS
} rnn_act_kind;

typedef struct rnn_act {
    rnn_act_kind kind;
    float alpha, beta;
} rnn_act;

static const struct {
    const char *name;
    rnn_act_kind kind;
    int uses_alpha, uses_beta;
    float alpha, beta; /* defaults */
} act_table[] = {
    {"sigmoid", A_SIGMOID, 0, 0, 0, 0},
    {"tanh", A_TANH, 0, 0, 0, 0},
    {"relu", A_RELU, 0, 0, 0, 0},
    {"affine", A_AFFINE, 1, 1, 1.0f, 0.0f},
    {"leakyrelu", A_LEAKYRELU, 1, 0, 0.01f, 0},
    {"thresholdedrelu", A_THRESHOLDEDRELU, 1, 0, 1.0f, 0},
    {"scaledtanh", A_SCALEDTANH, 1, 1, 1.0f, 1.0f},
    {"hardsigmoid", A_HARDSIGMOID, 1, 1, 0.2f, 0.5f},
    {"elu", A_ELU, 1, 0, 1.0f, 0},
    {"softsign", A_SOFTSIGN, 0, 0, 0, 0},
    {"softplus", A_SOFTPLUS, 0, 0, 0, 0},
};

typedef struct rnn_params {
    int op, G, D, dir, layout, lbr, input_forget, has_clip;
    int64_t H, I;
    float clip;
    rnn_act act[2][3];           /* [direction][f, g, h] */
    const frt_act_variant *v;    /* sigmoid / tanh / relu loops of the tier */
    const frt_rnn_mm_variant *mm;/* recurrent small-M GEMM of the tier */
    int gv;                      /* its group width for the batch size known at select */
    int64_t n1, n2;              /* columns of the recurrent products: G*H and 0, or for GRU with
                                    linear_before_reset = 0: 2*H (z, r) and H (h, after r) */
    /* Per direction: packed W^T [I, G*H] for frt_sgemm_pb (NULL: W used as stored); R packed for
     * mm (rows [0, n1) into Rq, rows [n1, n1+n2) into Rq2), NULL when R is packed at run time. */
    const float *Wp[2], *Rq[2], *Rq2[2];
    const float *Wq[2]; /* AVX2 tier, constant W: W packed for mm (gv PROJ_GV), NULL otherwise */
    /* Fused steps (LSTM, GRU with linear_before_reset; default activations, no clip, input_forget
     * or peepholes; constant R): the tier's step functions and R packed per direction for them
     * (frt_rnn_pack_gates); NULL otherwise. */
    const frt_rnn_step_variant *fused;
    const float *Rg[2];
    int r_finite; /* fused: every element of R is finite (a zero h_prev gives a zero product) */
} rnn_params;

#define PROJ_GV 2 /* group width of Wq: mm's 4-row blocks */

/* ---- recurrent GEMM, portable (the reference the SIMD variants are tested against) ---------- */

#define PORT_VL 8
static void rnn_mm_c(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                     const float *Bq, int gv, float *C, int64_t ldc) {
    const int64_t gw = (int64_t)gv * PORT_VL;
    for (int64_t c0 = 0; c0 < N; c0 += gw, Bq += K * gw)
        for (int64_t i = 0; i < M; i++) {
            float acc[8 * PORT_VL] = {0};
            const float *a = A + i * lda;
            for (int64_t k = 0; k < K; k++)
                for (int64_t j = 0; j < gw; j++) acc[j] += a[k] * Bq[k * gw + j];
            for (int64_t j = 0; j < gw && c0 + j < N; j++) C[i * ldc + c0 + j] = acc[j];
        }
}

static const frt_rnn_mm_variant mm_variants[] = {
#if FRT_HAVE_X86
    {FRT_ISA_AVX512, "_avx512", 16, {8, 4, 4, 4}, frt_rnn_mm_avx512},
    {FRT_ISA_AVX2, "_avx2", 8, {8, 4, 2, 2}, frt_rnn_mm_avx2},
#endif
    {FRT_ISA_PORTABLE, "", PORT_VL, {8, 8, 8, 8}, rnn_mm_c},
};

const frt_rnn_mm_variant *frt_rnn_mm_variant_get(frt_isa cap) {
    return FRT_PICK_VARIANT(mm_variants, cap);
}

/* ---- fused steps, portable (the twin the SIMD variants are tested against) ----------------- */

static float sigmoid1(float v) {
    if (v >= 0.0f) return 1.0f / (1.0f + expf(-v));
    float e = expf(v); /* also NaN */
    return e / (1.0f + e);
}

static void step_c(const frt_rnn_step_args *a, int G) {
    const int64_t H = a->H;
    for (int64_t b = 0; b < a->B; b++) {
        const float *xw = a->xw[b], *hp = a->h_prev + b * H;
        float *hn = a->h_next + b * H;
        if (!xw) {
            memcpy(hn, hp, (size_t)H * sizeof(float));
            continue;
        }
        for (int64_t j = 0; j < H; j++) {
            const int64_t g = j / FRT_RNN_GROUP, l = j % FRT_RNN_GROUP;
            float acc[4] = {0, 0, 0, 0}, pre[4];
            for (int64_t k = 0; k < (a->h_prev_zero ? 0 : H); k++)
                for (int v = 0; v < G; v++)
                    acc[v] += hp[k] * a->Rq[((g * H + k) * G + v) * FRT_RNN_GROUP + l];
            for (int v = 0; v < G; v++) pre[v] = (xw[v * H + j] + acc[v]) + a->bias[v * H + j];
            float h;
            if (G == 4) {
                float gi = sigmoid1(pre[0]), go = sigmoid1(pre[1]), gf = sigmoid1(pre[2]);
                float gc = tanhf(pre[3]);
                float *c = a->c + b * H + j;
                *c = gf * *c + gi * gc;
                h = go * tanhf(*c);
            } else {
                float z = sigmoid1(pre[0]), r = sigmoid1(pre[1]);
                float n = tanhf((xw[2 * H + j] + a->bias[2 * H + j]) + r * (acc[2] + a->rbh[j]));
                h = (1.0f - z) * n + z * hp[j];
            }
            hn[j] = h;
            if (a->y[b]) a->y[b][j] = h;
        }
    }
}
static void lstm_step_c(const frt_rnn_step_args *a) { step_c(a, 4); }
static void gru_step_c(const frt_rnn_step_args *a) { step_c(a, 3); }

static const frt_rnn_step_variant step_variants[] = {
#if FRT_HAVE_X86
    {FRT_ISA_AVX512, frt_rnn_lstm_step_avx512, frt_rnn_gru_step_avx512, FRT_RNN_GROUP,
     FRT_RNN_GROUP, 4, 3, FRT_RNN_GROUP},
    {FRT_ISA_AVX2, frt_rnn_lstm_step_avx2, frt_rnn_gru_step_avx2, 24, 8, 1, 3, 8},
#endif
    {FRT_ISA_PORTABLE, lstm_step_c, gru_step_c, FRT_RNN_GROUP, FRT_RNN_GROUP, 4, 3, FRT_RNN_GROUP},
};

const frt_rnn_step_variant *frt_rnn_step_variant_get(frt_isa isa) {
    for (size_t i = 0; i < sizeof step_variants / sizeof step_variants[0]; i++)
        if (step_variants[i].isa == isa) return &step_variants[i];
    return NULL;
}

static int gates_of(int op) { return op == OP_LSTM ? 4 : op == OP_GRU ? 3 : 1; }
static int acts_per_dir(int op) { return op == OP_LSTM ? 3 : op == OP_GRU ? 2 : 1; }

/* ---- activations ----------------------------------------------------------------------------- */

/* x[0..n) = act(x) in place. */
static void act_apply(const rnn_act *a, const frt_act_variant *v, float *x, size_t n) {
    const float al = a->alpha, be = a->beta;
    switch (a->kind) {
    case A_SIGMOID: v->sigmoid(x, x, n); return;
    case A_TANH: v->tanh(x, x, n); return;
    case A_RELU: v->relu(x, x, n); return;
    case A_AFFINE:
        for (size_t i = 0; i < n; i++) x[i] = al * x[i] + be;
        return;
    case A_LEAKYRELU:
        for (size_t i = 0; i < n; i++) x[i] = x[i] >= 0.0f ? x[i] : al * x[i];
        return;
    case A_THRESHOLDEDRELU:
        for (size_t i = 0; i < n; i++) x[i] = x[i] > al ? x[i] : 0.0f;
        return;
    case A_SCALEDTANH:
        for (size_t i = 0; i < n; i++) x[i] *= be;
        v->tanh(x, x, n);
        for (size_t i = 0; i < n; i++) x[i] *= al;
        return;
    case A_HARDSIGMOID:
        for (size_t i = 0; i < n; i++) {
            float y = al * x[i] + be;
            y = y < 0.0f ? 0.0f : y;
            x[i] = y > 1.0f ? 1.0f : y;
        }
        return;
    case A_ELU:
        for (size_t i = 0; i < n; i++) x[i] = x[i] >= 0.0f ? x[i] : al * (expf(x[i]) - 1.0f);
        return;
    case A_SOFTSIGN:
        for (size_t i = 0; i < n; i++) x[i] = x[i] / (1.0f + fabsf(x[i]));
        return;
    case A_SOFTPLUS:
        for (size_t i = 0; i < n; i++)
            x[i] = x[i] > 0.0f ? x[i] + log1pf(expf(-x[i])) : log1pf(expf(x[i]));
        return;
    }
}

static void clip_apply(const rnn_params *p, float *x, size_t n) {
    if (!p->has_clip) return;
    const float lo = -p->clip, hi = p->clip;
    for (size_t i = 0; i < n; i++) {
        float y = x[i] < lo ? lo : x[i];
        x[i] = y > hi ? hi : y;
    }
}

static int name_eq(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != (unsigned char)*b) return 0;
    return *a == *b;
}

/* ---- infer ----------------------------------------------------------------------------------- */

static frt_status parse_direction(const frt_op_ctx *c, int *dir) {
    const char *d = frt_attr_string(c->node, "direction", "forward");
    if (strcmp(d, "forward") == 0) *dir = DIR_FORWARD;
    else if (strcmp(d, "reverse") == 0) *dir = DIR_REVERSE;
    else if (strcmp(d, "bidirectional") == 0) *dir = DIR_BIDI;
    else
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED,
                           "direction '%s' (forward, reverse or bidirectional)", d);
    return FRT_OK;
}

/* Fails unless v (when present with known rank) has rank r and dims matching want (-1 = any). */
static frt_status check_dims(const frt_op_ctx *c, int i, const char *what, int r,
                             const int64_t *want) {
    const frt_value *v = c->in[i];
    char sv[128];
    if (!v || v->rank < 0) return FRT_OK;
    int bad = v->rank != r;
    for (int k = 0; !bad && k < r; k++)
        if (want[k] >= 0 && v->dims[k] >= 0 && v->dims[k] != want[k]) bad = 1;
    if (!bad) return FRT_OK;
    char sw[128];
    size_t o = 0;
    sw[o++] = '[';
    for (int k = 0; k < r && o < sizeof sw - 24; k++)
        o += (size_t)snprintf(sw + o, sizeof sw - o, k ? ",%lld" : "%lld", (long long)want[k]);
    snprintf(sw + o, sizeof sw - o, "]");
    return frt_op_fail(c, FRT_ERR_SHAPE, "%s has shape %s, expected %s (-1: any)", what,
                       frt_shape_str(v, sv, sizeof sv), sw);
}

static frt_status rnn_infer_op(frt_op_ctx *c, int op) {
    const int G = gates_of(op);
    frt_status st = frt_op_check_arity(c, 3, op == OP_LSTM ? 8 : 6, 0, op == OP_LSTM ? 3 : 2);
    if (st) return st;
    for (int i = 0; i < c->n_in; i++) {
        if (!c->in[i]) continue;
        if (i < 3 && (st = frt_op_check_input(c, i, 0))) return st;
        int32_t want = i == 4 ? FRT_INT32 : FRT_FLOAT32;
        if (c->in[i]->dtype != want)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "input %d has dtype %s, expected %s", i,
                               frt_dtype_name(c->in[i]->dtype), frt_dtype_name(want));
    }
    if (!c->in[1] || !c->in[2]) return frt_op_fail(c, FRT_ERR_SHAPE, "W and R are required");
    int dir;
    if ((st = parse_direction(c, &dir))) return st;
    const int D = dir == DIR_BIDI ? 2 : 1;
    int64_t layout = frt_attr_int(c->node, "layout", 0);
    if (layout != 0 && (layout != 1 || c->opset < 14))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "layout %lld (0, or 1 from opset 14)",
                           (long long)layout);
    if (op == OP_GRU) {
        int64_t lbr = frt_attr_int(c->node, "linear_before_reset", 0);
        if (lbr != 0 && lbr != 1)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "linear_before_reset %lld (0 or 1)",
                               (long long)lbr);
    }
    const frt_value *X = c->in[0], *R = c->in[2];
    char sx[128];
    if (X->rank >= 0 && X->rank != 3)
        return frt_op_fail(c, FRT_ERR_SHAPE, "X has shape %s, expected rank 3",
                           frt_shape_str(X, sx, sizeof sx));
    int64_t H = frt_attr_int(c->node, "hidden_size", -1);
    if (H == 0 || H < -1)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "hidden_size %lld must be positive",
                           (long long)H);
    if (H < 0 && R->rank == 3) H = R->dims[2];
    if (H < 0 && R->rank == 3 && R->dims[1] >= 0) H = R->dims[1] / G;
    int64_t T = -1, Bn = -1, I = -1;
    if (X->rank == 3) {
        T = X->dims[layout ? 1 : 0];
        Bn = X->dims[layout ? 0 : 1];
        I = X->dims[2];
    }
    int64_t GH = H >= 0 ? G * H : -1;
    int64_t wd[3] = {D, GH, I}, rd[3] = {D, GH, H}, bd[2] = {D, GH >= 0 ? 2 * GH : -1};
    int64_t sd[1] = {Bn}, pd[2] = {D, H >= 0 ? 3 * H : -1};
    int64_t hd[3] = {layout ? Bn : D, layout ? D : Bn, H};
    if ((st = check_dims(c, 1, "W", 3, wd)) || (st = check_dims(c, 2, "R", 3, rd))) return st;
    if (c->n_in > 3 && (st = check_dims(c, 3, "B", 2, bd))) return st;
    if (c->n_in > 4 && (st = check_dims(c, 4, "sequence_lens", 1, sd))) return st;
    if (c->n_in > 5 && (st = check_dims(c, 5, "initial_h", 3, hd))) return st;
    if (c->n_in > 6 && (st = check_dims(c, 6, "initial_c", 3, hd))) return st;
    if (c->n_in > 7 && (st = check_dims(c, 7, "P", 2, pd))) return st;
    int64_t yd[4] = {T, D, Bn, H};
    if (layout) {
        yd[0] = Bn;
        yd[1] = T;
        yd[2] = D;
    }
    if (c->n_out > 0 && c->out[0]) frt_op_set_shape(c->out[0], FRT_FLOAT32, 4, yd);
    for (int j = 1; j < c->n_out; j++)
        if (c->out[j]) frt_op_set_shape(c->out[j], FRT_FLOAT32, 3, hd);
    return FRT_OK;
}

/* ---- select ---------------------------------------------------------------------------------- */

static frt_status parse_acts(const frt_op_ctx *c, rnn_params *p) {
    const int na = acts_per_dir(p->op);
    static const rnn_act_kind dflt[3][3] = {
        {A_TANH}, {A_SIGMOID, A_TANH}, {A_SIGMOID, A_TANH, A_TANH}};
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < na; k++) p->act[d][k] = (rnn_act){dflt[p->op][k], 0, 0};
    const frt_onnx_attr *a = frt_attr_find(c->node, "activations");
    if (!a) return FRT_OK;
    if (a->type != FRT_ATTR_STRINGS)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "activations must be a list of strings");
    size_t nal = 0, nbe = 0, ial = 0, ibe = 0;
    const float *al = frt_attr_floats(c->node, "activation_alpha", &nal);
    const float *be = frt_attr_floats(c->node, "activation_beta", &nbe);
    /* one set for every direction, or one set shared by both */
    if (a->n != (size_t)(na * p->D) && a->n != (size_t)na)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "%zu activations, expected %d", a->n,
                           na * p->D);
    for (size_t i = 0; i < a->n; i++) {
        size_t t = 0, nt = sizeof act_table / sizeof act_table[0];
        while (t < nt && !name_eq(a->strings[i], act_table[t].name)) t++;
        if (t == nt)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "activation '%s' not supported",
                               a->strings[i]);
        rnn_act r = {act_table[t].kind, act_table[t].alpha, act_table[t].beta};
        if (act_table[t].uses_alpha && ial < nal) r.alpha = al[ial++];
        if (act_table[t].uses_beta && ibe < nbe) r.beta = be[ibe++];
        p->act[i / (size_t)na][i % (size_t)na] = r;
    }
    if (a->n == (size_t)na)
        for (int k = 0; k < na; k++) p->act[1][k] = p->act[0][k];
    return FRT_OK;
}

/* Packs the rows [r0, r0+n) of the [*, K] matrix M (row-major) as the B operand op(B) = M^T of a
 * GEMM with K x n. Returns NULL when the tier calls the BLAS (nothing to gain). */
static const float *pack_rows(frt_op_ctx *c, const float *M, int64_t r0, int64_t n, int64_t K,
                              frt_status *st) {
    *st = FRT_OK;
    if (frt_sgemm_uses_blas() || n <= 0 || K <= 0) return NULL;
    size_t sz = frt_sgemm_pack_b_size(K, n);
    if (sz == 0) return NULL;
    float *p = frt_arena_array(c->arena, sz, sizeof(float));
    if (!p) {
        *st = frt_op_fail(c, FRT_ERR_NO_MEMORY, "cannot allocate %zu bytes for packed weights",
                          sz * sizeof(float));
        return NULL;
    }
    frt_sgemm_pack_b(1, K, n, M + r0 * K, K, p);
    return p;
}

static size_t rnn_scratch(const frt_step *s, const frt_value *values);
static frt_status rnn_kernel(const frt_step *s, frt_exec *x);

/* Whether the configuration has fused steps: LSTM without clip, input_forget and peepholes, or
 * GRU with linear_before_reset and no clip; default activations in every direction. */
static bool fusable(const frt_op_ctx *c, const rnn_params *p) {
    if (p->has_clip || (p->op != OP_LSTM && p->op != OP_GRU)) return false;
    if (p->op == OP_LSTM && (p->input_forget || (c->n_in > 7 && c->in[7]))) return false;
    if (p->op == OP_GRU && !p->lbr) return false;
    static const rnn_act_kind dflt[3] = {A_SIGMOID, A_TANH, A_TANH};
    for (int d = 0; d < p->D; d++)
        for (int k = 0; k < acts_per_dir(p->op); k++)
            if (p->act[d][k].kind != dflt[k]) return false;
    return true;
}

static frt_status rnn_select_op(frt_op_ctx *c, frt_kernel *k, int op) {
    if (c->in[0]->dtype != FRT_FLOAT32)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (float32)",
                           frt_dtype_name(c->in[0]->dtype));
    const frt_value *W = c->in[1], *R = c->in[2];
    if (W->rank != 3 || R->rank != 3 || W->dims[1] < 0 || W->dims[2] < 0 || R->dims[2] < 0)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "W and R need known shapes");
    rnn_params *p = frt_arena_alloc(c->arena, sizeof *p, 64);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    memset(p, 0, sizeof *p);
    p->op = op;
    p->G = gates_of(op);
    frt_status st = parse_direction(c, &p->dir);
    if (st) return st;
    p->D = p->dir == DIR_BIDI ? 2 : 1;
    p->layout = (int)frt_attr_int(c->node, "layout", 0);
    p->lbr = op == OP_GRU && frt_attr_int(c->node, "linear_before_reset", 0) != 0;
    p->input_forget = op == OP_LSTM && frt_attr_int(c->node, "input_forget", 0) != 0;
    p->H = R->dims[2];
    p->I = W->dims[2];
    if (W->dims[1] != p->G * p->H)
        return frt_op_fail(c, FRT_ERR_SHAPE, "W has %lld rows, expected %d x hidden_size %lld",
                           (long long)W->dims[1], p->G, (long long)p->H);
    const frt_onnx_attr *ca = frt_attr_find(c->node, "clip");
    if (ca) {
        p->has_clip = 1;
        p->clip = frt_attr_float(c->node, "clip", 0.0f);
        if (!(p->clip > 0.0f))
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "clip %g must be positive", p->clip);
    }
    if ((st = parse_acts(c, p))) return st;
    p->v = frt_act_variant_get(c->isa);
    p->mm = frt_rnn_mm_variant_get(c->isa);
    {
        const frt_value *X = c->in[0];
        int64_t B = X->rank == 3 ? X->dims[p->layout ? 0 : 1] : -1;
        p->gv = frt_rnn_gv(p->mm, B);
    }
    const int64_t GH = p->G * p->H, H = p->H;
    p->n1 = op == OP_GRU && !p->lbr ? 2 * H : GH;
    p->n2 = op == OP_GRU && !p->lbr ? H : 0;
    if (fusable(c, p) && R->data) {
        p->fused = frt_rnn_step_variant_get(c->isa);
        for (int d = 0; p->fused && d < p->D; d++) {
            const int gw = frt_rnn_step_gw(p->fused, p->G), gp = frt_rnn_step_gp(p->fused, p->G);
            const int vl = p->fused->vl;
            float *q =
                frt_arena_array(c->arena, frt_rnn_gates_size(p->G, H, gw, vl), sizeof(float));
            if (!q) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for packed R");
            frt_rnn_pack_gates(p->G, H, gw, vl, gp, (const float *)R->data + d * GH * H, q);
            p->Rg[d] = q;
        }
        p->r_finite = 1;
        for (int64_t i = 0; i < (int64_t)R->numel && p->r_finite; i++)
            p->r_finite = isfinite(((const float *)R->data)[i]) != 0;
    }
    for (int d = 0; d < p->D; d++) {
        if (W->data && p->mm->isa == FRT_ISA_AVX2) {
            float *q = frt_arena_array(c->arena, frt_rnn_pack_size(p->mm->vl, PROJ_GV, GH, p->I),
                                       sizeof(float));
            if (!q) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for packed W");
            frt_rnn_pack(p->mm->vl, PROJ_GV, GH, p->I, (const float *)W->data + d * GH * p->I,
                         p->I, q);
            p->Wq[d] = q;
        } else if (W->data) {
            p->Wp[d] = pack_rows(c, (const float *)W->data + d * GH * p->I, 0, GH, p->I, &st);
            if (st) return st;
        }
        if (R->data && !p->fused) {
            const float *Rd = (const float *)R->data + d * GH * H;
            float *q1 = frt_arena_array(c->arena, frt_rnn_pack_size(p->mm->vl, p->gv, p->n1, H),
                                        sizeof(float));
            float *q2 = p->n2 ? frt_arena_array(c->arena, frt_rnn_pack_size(p->mm->vl, p->gv, p->n2, H),
                                                sizeof(float))
                              : NULL;
            if (!q1 || (p->n2 && !q2))
                return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory for packed R");
            frt_rnn_pack(p->mm->vl, p->gv, p->n1, H, Rd, H, q1);
            if (q2) frt_rnn_pack(p->mm->vl, p->gv, p->n2, H, Rd + p->n1 * H, H, q2);
            p->Rq[d] = q1;
            p->Rq2[d] = q2;
        }
    }
    static const char *const names[3][3] = {{"rnn_f32", "rnn_f32_avx2", "rnn_f32_avx512"},
                                            {"gru_f32", "gru_f32_avx2", "gru_f32_avx512"},
                                            {"lstm_f32", "lstm_f32_avx2", "lstm_f32_avx512"}};
    static const char *const fused_names[3][3] = {
        {"", "", ""},
        {"gru_f32_fused", "gru_f32_fused_avx2", "gru_f32_fused_avx512"},
        {"lstm_f32_fused", "lstm_f32_fused_avx2", "lstm_f32_fused_avx512"}};
    k->name = p->fused ? fused_names[op][p->fused->isa] : names[op][p->mm->isa];
    k->fn = rnn_kernel;
    k->scratch = rnn_scratch;
    k->params = p;
    return FRT_OK;
}

/* ---- kernel ---------------------------------------------------------------------------------- */

/* Floats rounded up to whole 64-byte lines. */
static size_t lines(size_t n) { return (n + 15) & ~(size_t)15; }

typedef struct rnn_dims {
    int64_t T, B;
} rnn_dims;

static rnn_dims dims_of(const rnn_params *p, const frt_value *X) {
    rnn_dims d = {X->dims[p->layout ? 1 : 0], X->dims[p->layout ? 0 : 1]};
    return d;
}

/* Floats of R packed at run time (0 when packed at select). */
static size_t rq_floats(const rnn_params *p) {
    if (p->Rq[0] || p->fused) return 0;
    return lines(frt_rnn_pack_size(p->mm->vl, p->gv, p->n1, p->H)) +
           lines(frt_rnn_pack_size(p->mm->vl, p->gv, p->n2, p->H));
}

/* Scratch: xw [T*B, G*H], rec [B, G*H], h, c, tmp, rec2 [B, H] each, bias [2*G*H], lens [B],
 * then R packed at run time when it is not constant, then the fused steps' row pointers (2 B). */
static size_t rnn_scratch(const frt_step *s, const frt_value *values) {
    const rnn_params *p = s->k.params;
    rnn_dims d = dims_of(p, &values[s->in[0]]);
    const size_t GH = (size_t)(p->G * p->H), H = (size_t)p->H, T = (size_t)d.T, B = (size_t)d.B;
    size_t n = lines(T * B * GH) + lines(B * GH) + 4 * lines(B * H) + lines(2 * GH) + lines(B) +
               rq_floats(p);
    return n * sizeof(float) + 2 * B * sizeof(void *); /* fused: row pointers */
}

/* C[M, N] = A[M, K] * op^T where op is the packed Bp or rows [N, K] of raw (ldb K). */
static void mm_t(frt_threadpool *tp, int64_t M, int64_t N, int64_t K, const float *A,
                 const float *Bp, const float *raw, float *C) {
    if (M <= 0 || N <= 0) return;
    if (Bp) frt_sgemm_pb_mt(tp, 0, M, N, K, 1.0f, A, K, Bp, 0.0f, C, N);
    else frt_sgemm_mt(tp, 0, 1, M, N, K, 1.0f, A, K, raw, K, 0.0f, C, N);
}

typedef struct rnn_run {
    const rnn_params *p;
    int64_t T, B, H, GH;
    int d, rev;
    const int32_t *lens;
    const float *xw, *bias, *rbh, *P;
    float *rec, *rec2, *h, *c, *tmp;
    float *Y;
} rnn_run;

/* Offsets of the row of (t, b) in xw and Y, and of b's state in Y_h. */
static inline int64_t xw_row(const rnn_run *r, int64_t t, int64_t b) {
    return r->p->layout ? b * r->T + t : t * r->B + b;
}
static inline float *y_row(const rnn_run *r, int64_t t, int64_t b) {
    const int64_t D = r->p->D;
    return r->Y + (r->p->layout ? (b * r->T + t) * D + r->d : (t * D + r->d) * r->B + b) * r->H;
}

/* g[0..n) = xw + g + bias. */
static inline void add3(float *g, const float *xw, const float *bias, int64_t n) {
    for (int64_t j = 0; j < n; j++) g[j] = xw[j] + g[j] + bias[j];
}

static void lstm_row(const rnn_run *r, int64_t b, int64_t t) {
    const rnn_params *p = r->p;
    const rnn_act *a = p->act[r->d];
    const int64_t H = r->H;
    float *g = r->rec + b * r->GH, *h = r->h + b * H, *c = r->c + b * H, *tmp = r->tmp + b * H;
    add3(g, r->xw + xw_row(r, t, b) * r->GH, r->bias, r->GH);
    float *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
    if (r->P) {
        const float *Pi = r->P, *Pf = r->P + 2 * H;
        for (int64_t j = 0; j < H; j++) {
            gi[j] += Pi[j] * c[j];
            gf[j] += Pf[j] * c[j];
        }
        clip_apply(p, gi, (size_t)H);
        clip_apply(p, gf, (size_t)(2 * H));
        act_apply(&a[0], p->v, gi, (size_t)H);
        act_apply(&a[0], p->v, gf, (size_t)H);
    } else {
        clip_apply(p, g, (size_t)(4 * H));
        act_apply(&a[0], p->v, g, (size_t)(3 * H)); /* i o f */
    }
    act_apply(&a[1], p->v, gc, (size_t)H);
    if (p->input_forget)
        for (int64_t j = 0; j < H; j++) gf[j] = 1.0f - gi[j];
    for (int64_t j = 0; j < H; j++) c[j] = gf[j] * c[j] + gi[j] * gc[j];
    if (r->P) {
        const float *Po = r->P + H;
        for (int64_t j = 0; j < H; j++) go[j] += Po[j] * c[j];
        clip_apply(p, go, (size_t)H);
        act_apply(&a[0], p->v, go, (size_t)H);
    }
    memcpy(tmp, c, (size_t)H * sizeof(float));
    act_apply(&a[2], p->v, tmp, (size_t)H);
    for (int64_t j = 0; j < H; j++) h[j] = go[j] * tmp[j];
}

static void rnn_row(const rnn_run *r, int64_t b, int64_t t) {
    const rnn_params *p = r->p;
    float *g = r->rec + b * r->GH, *h = r->h + b * r->H;
    add3(g, r->xw + xw_row(r, t, b) * r->GH, r->bias, r->H);
    clip_apply(p, g, (size_t)r->H);
    act_apply(&p->act[r->d][0], p->v, g, (size_t)r->H);
    memcpy(h, g, (size_t)r->H * sizeof(float));
}

/* GRU, first half: z and r into rec[b] (activated); linear_before_reset = 0: tmp[b] = r . h. */
static void gru_zr_row(const rnn_run *r, int64_t b, int64_t t) {
    const rnn_params *p = r->p;
    const int64_t H = r->H;
    const int64_t ld = p->lbr ? r->GH : 2 * H; /* row length of rec */
    float *g = r->rec + b * ld;
    add3(g, r->xw + xw_row(r, t, b) * r->GH, r->bias, 2 * H);
    clip_apply(p, g, (size_t)(2 * H));
    act_apply(&p->act[r->d][0], p->v, g, (size_t)(2 * H));
    if (!p->lbr) {
        const float *rg = g + H, *h = r->h + b * H;
        float *rh = r->tmp + b * H;
        for (int64_t j = 0; j < H; j++) rh[j] = rg[j] * h[j];
    }
}

/* GRU, second half: the candidate and the new h. */
static void gru_h_row(const rnn_run *r, int64_t b, int64_t t) {
    const rnn_params *p = r->p;
    const int64_t H = r->H;
    const float *xh = r->xw + xw_row(r, t, b) * r->GH + 2 * H, *bh = r->bias + 2 * H;
    float *h = r->h + b * H, *hh;
    const float *z;
    if (p->lbr) {
        float *g = r->rec + b * r->GH;
        z = g;
        const float *rg = g + H;
        hh = g + 2 * H;
        for (int64_t j = 0; j < H; j++) hh[j] = xh[j] + bh[j] + rg[j] * (hh[j] + r->rbh[j]);
    } else {
        z = r->rec + b * 2 * H;
        hh = r->rec2 + b * H;
        for (int64_t j = 0; j < H; j++) hh[j] = xh[j] + hh[j] + bh[j];
    }
    clip_apply(p, hh, (size_t)H);
    act_apply(&p->act[r->d][1], p->v, hh, (size_t)H);
    for (int64_t j = 0; j < H; j++) h[j] = (1.0f - z[j]) * hh[j] + z[j] * h[j];
}

/* The steps of one direction with the fused step functions, then Y_h / Y_c of the direction
 * (h in r->h at the end); ptrs: room for 2 B row pointers. */
static void rnn_fused_dir(const rnn_run *r, const float *Rg, void *ptrs) {
    const rnn_params *p = r->p;
    const int64_t B = r->B, H = r->H, T = r->T;
    const float **xr = ptrs;
    float **yr = (float **)(xr + B);
    float *hc = r->h, *hn = r->tmp;
    const frt_rnn_step_fn step = p->op == OP_LSTM ? p->fused->lstm : p->fused->gru;
    int h_zero = p->r_finite; /* whether h is all zeros (then the first product is skipped) */
    for (int64_t i = 0; i < B * H && h_zero; i++) h_zero = hc[i] == 0.0f;
    for (int64_t st = 0; st < T; st++) {
        int any = 0;
        for (int64_t b = 0; b < B; b++) {
            xr[b] = NULL;
            yr[b] = NULL;
            if (st >= r->lens[b]) continue;
            int64_t t = r->rev ? r->lens[b] - 1 - st : st;
            xr[b] = r->xw + xw_row(r, t, b) * r->GH;
            yr[b] = r->Y ? y_row(r, t, b) : NULL;
            any = 1;
        }
        if (!any) break;
        frt_rnn_step_args a = {B, H, hc, hn, r->c, Rg, xr, yr, r->bias, r->rbh, (int)(st & 1),
                               h_zero};
        h_zero = 0;
        step(&a);
        float *sw = hc;
        hc = hn;
        hn = sw;
    }
    if (hc != r->h) memcpy(r->h, hc, (size_t)(B * H) * sizeof(float));
}

static frt_status rnn_kernel(const frt_step *s, frt_exec *x) {
    const rnn_params *p = s->k.params;
    const frt_value *vals = x->values;
#define IN(i) (s->n_in > (i) && s->in[i] >= 0 ? &vals[s->in[i]] : NULL)
#define OUT(j) (s->n_out > (j) && s->out[j] >= 0 ? &x->values[s->out[j]] : NULL)
    const frt_value *X = IN(0), *W = IN(1), *R = IN(2), *Bv = IN(3), *SL = IN(4), *H0 = IN(5);
    const frt_value *C0 = p->op == OP_LSTM ? IN(6) : NULL, *Pv = p->op == OP_LSTM ? IN(7) : NULL;
    frt_value *Yv = OUT(0), *Yh = OUT(1), *Yc = p->op == OP_LSTM ? OUT(2) : NULL;
#undef IN
#undef OUT
    rnn_dims dm = dims_of(p, X);
    const int64_t T = dm.T, B = dm.B, H = p->H, GH = p->G * p->H, I = p->I, D = p->D;
    if (X->dims[2] != I || W->dims[0] != D || W->dims[1] != GH || W->dims[2] != I ||
        R->dims[0] != D || R->dims[1] != GH || R->dims[2] != H)
        return frt_step_fail(s, FRT_ERR_SHAPE,
                             "X, W or R changed shape after load (input size %lld, W [%lld,%lld,%lld]"
                             ", R [%lld,%lld,%lld]; selected for I=%lld, hidden_size %lld)",
                             (long long)X->dims[2], (long long)W->dims[0], (long long)W->dims[1],
                             (long long)W->dims[2], (long long)R->dims[0], (long long)R->dims[1],
                             (long long)R->dims[2], (long long)I, (long long)H);
    /* scratch (see rnn_scratch) */
    float *sp = x->scratch;
    float *xw = sp;
    sp += lines((size_t)(T * B * GH));
    float *rec = sp;
    sp += lines((size_t)(B * GH));
    float *hbuf = sp;
    sp += lines((size_t)(B * H));
    float *cbuf = sp;
    sp += lines((size_t)(B * H));
    float *tmp = sp;
    sp += lines((size_t)(B * H));
    float *rec2 = sp;
    sp += lines((size_t)(B * H));
    float *bias = sp;
    sp += lines((size_t)(2 * GH));
    int32_t *lens = (int32_t *)sp;
    sp += lines((size_t)B);
    float *rq_run = sp; /* rq_floats(p) floats */
    for (int64_t b = 0; b < B; b++) {
        int64_t L = SL ? ((const int32_t *)SL->data)[b] : T;
        if (L < 0 || L > T)
            return frt_step_fail(s, FRT_ERR_RUNTIME,
                                 "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)b,
                                 (long long)L, (long long)T);
        lens[b] = (int32_t)L;
    }
    float *Y = Yv ? Yv->data : NULL;
    if (Y && T * B > 0) {
        /* positions past a row's length stay zero */
        for (int64_t b = 0; b < B; b++)
            if (lens[b] < T) {
                memset(Y, 0, (size_t)Yv->numel * sizeof(float));
                break;
            }
    }
    for (int d = 0; d < (int)D; d++) {
        rnn_run r = {p, T, B, H, GH, d, p->dir == DIR_REVERSE || d == 1, lens, xw, bias,
                     bias + GH, NULL, rec, rec2, hbuf, cbuf, tmp, Y};
        /* biases: Wb + Rb, except GRU linear_before_reset keeps Rbh apart (rbh) */
        if (Bv) {
            const float *Bd = (const float *)Bv->data + d * 2 * GH;
            for (int64_t j = 0; j < GH; j++) bias[j] = Bd[j] + Bd[GH + j];
            if (p->lbr)
                for (int64_t j = 0; j < H; j++) {
                    bias[2 * H + j] = Bd[2 * H + j];
                    bias[GH + j] = Bd[GH + 2 * H + j];
                }
        } else {
            memset(bias, 0, (size_t)(2 * GH) * sizeof(float));
        }
        r.P = Pv ? (const float *)Pv->data + d * 3 * H : NULL;
        /* initial state, row b of direction d */
        for (int64_t b = 0; b < B; b++) {
            int64_t off = (p->layout ? b * D + d : d * B + b) * H;
            if (H0) memcpy(hbuf + b * H, (const float *)H0->data + off, (size_t)H * sizeof(float));
            else memset(hbuf + b * H, 0, (size_t)H * sizeof(float));
            if (C0) memcpy(cbuf + b * H, (const float *)C0->data + off, (size_t)H * sizeof(float));
            else memset(cbuf + b * H, 0, (size_t)H * sizeof(float));
        }
        /* input projection of every time step: xw = X * W^T */
        if (p->Wq[d] && frt_threadpool_size(x->tp) == 1)
            p->mm->mm(T * B, GH, I, X->data, I, p->Wq[d], PROJ_GV, xw, GH);
        else
            mm_t(x->tp, T * B, GH, I, X->data, p->Wp[d],
                 p->Wp[d] ? NULL : (const float *)W->data + d * GH * I, xw);
        if (p->fused) {
            rnn_fused_dir(&r, p->Rg[d], (void *)(rq_run + rq_floats(p)));
        } else {
            const float *Rq = p->Rq[d], *Rq2 = p->Rq2[d];
            if (!Rq) {
                const float *Rd = (const float *)R->data + d * GH * H;
                float *q1 = rq_run, *q2 = rq_run + lines(frt_rnn_pack_size(p->mm->vl, p->gv, p->n1, H));
                frt_rnn_pack(p->mm->vl, p->gv, p->n1, H, Rd, H, q1);
                if (p->n2) frt_rnn_pack(p->mm->vl, p->gv, p->n2, H, Rd + p->n1 * H, H, q2);
                Rq = q1;
                Rq2 = q2;
            }
            const frt_rnn_mm_fn mm = p->mm->mm;
            for (int64_t st = 0; st < T; st++) {
                int any = 0;
                for (int64_t b = 0; b < B; b++) any |= st < lens[b];
                if (!any) break;
                mm(B, p->n1, H, hbuf, H, Rq, p->gv, rec, p->n1);
                if (p->n2) {
                    for (int64_t b = 0; b < B; b++) {
                        if (st < lens[b]) gru_zr_row(&r, b, r.rev ? lens[b] - 1 - st : st);
                        else memset(tmp + b * H, 0, (size_t)H * sizeof(float));
                    }
                    mm(B, p->n2, H, tmp, H, Rq2, p->gv, rec2, p->n2);
                }
                for (int64_t b = 0; b < B; b++) {
                    if (st >= lens[b]) continue;
                    int64_t t = r.rev ? lens[b] - 1 - st : st;
                    switch (p->op) {
                    case OP_LSTM: lstm_row(&r, b, t); break;
                    case OP_GRU:
                        if (p->lbr) gru_zr_row(&r, b, t);
                        gru_h_row(&r, b, t);
                        break;
                    default: rnn_row(&r, b, t); break;
                    }
                    if (Y) memcpy(y_row(&r, t, b), hbuf + b * H, (size_t)H * sizeof(float));
                }
            }
        }
        for (int64_t b = 0; b < B; b++) {
            int64_t off = (p->layout ? b * D + d : d * B + b) * H;
            if (Yh) memcpy((float *)Yh->data + off, hbuf + b * H, (size_t)H * sizeof(float));
            if (Yc) memcpy((float *)Yc->data + off, cbuf + b * H, (size_t)H * sizeof(float));
        }
    }
    return FRT_OK;
}

static frt_status rnn_infer(frt_op_ctx *c) { return rnn_infer_op(c, OP_RNN); }
static frt_status gru_infer(frt_op_ctx *c) { return rnn_infer_op(c, OP_GRU); }
static frt_status lstm_infer(frt_op_ctx *c) { return rnn_infer_op(c, OP_LSTM); }
static frt_status rnn_select(frt_op_ctx *c, frt_kernel *k) { return rnn_select_op(c, k, OP_RNN); }
static frt_status gru_select(frt_op_ctx *c, frt_kernel *k) { return rnn_select_op(c, k, OP_GRU); }
static frt_status lstm_select(frt_op_ctx *c, frt_kernel *k) {
    return rnn_select_op(c, k, OP_LSTM);
}

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(rnn, RNN, rnn_infer, rnn_select);
FRT_OP_IMPL(rnn, GRU, gru_infer, gru_select);
FRT_OP_IMPL(rnn, LSTM, lstm_infer, lstm_select);
