/* Linear algebra: Einsum (opset 12+), Det (opset 11+).
 *
 * Einsum(inputs...) with the equation attribute "term,term,...[->out]": terms of letters (a-z,
 *   A-Z) and at most one "..." each; spaces are ignored. Without "->" the output is "..." (when an
 *   input has one) followed by the letters that appear exactly once, in alphabetical order. A
 *   letter repeated within a term takes the diagonal; letters missing from the output are summed.
 *   Dims of one letter must be equal or 1 (broadcast). Dtypes: float32, float64, float16, int32,
 *   int64, uint32, uint64, all inputs alike.
 *   Kernels: einsum_gemm (float32, two inputs, each letter at most once per input, every letter
 *   in at least two of A, B, out): operands are brought to [batch, M, K] and [batch, K, N] (copied
 *   only when their layout is not already one of those or its transpose) and multiplied with the
 *   SGEMM (src/ops/sgemm.h), the result written in the output's letter order. Every other
 *   equation runs the generic loop (einsum), accumulating in double (floats) or int64 (integers).
 * Det(X [*, M, M]) -> [*]: float32, float64, float16; LU decomposition with partial pivoting in
 *   double per matrix (M = 0 gives 1).
 */
#include <math.h>
#include <string.h>

#include "dtype_util.h"
#include "op.h"
#include "sgemm.h"

/* ---- Einsum -------------------------------------------------------------------------------- */

#define EIN_MAX_IN 8
#define EIN_ELL 52 /* label ids: 0-25 a-z, 26-51 A-Z, 52.. ellipsis dims */
#define EIN_LABELS (EIN_ELL + FRT_MAX_RANK)

typedef struct ein_term {
    int n;                    /* labels written (the ellipsis counts once, as -1) */
    int lab[FRT_MAX_RANK + 1];
} ein_term;

typedef struct ein_spec {
    int n_in;
    ein_term in[EIN_MAX_IN];
    ein_term out;
    int explicit_out;
} ein_spec;

static int letter_id(char ch) {
    if (ch >= 'a' && ch <= 'z') return ch - 'a';
    if (ch >= 'A' && ch <= 'Z') return 26 + ch - 'A';
    return -1;
}

/* Parses eq; returns NULL or a message. */
static const char *ein_parse(const char *eq, ein_spec *sp) {
    memset(sp, 0, sizeof *sp);
    ein_term *t = &sp->in[0];
    sp->n_in = 1;
    int ell_seen = 0, in_out = 0;
    for (const char *c = eq; *c; c++) {
        if (*c == ' ') continue;
        if (*c == ',') {
            if (in_out) return "',' after '->'";
            if (sp->n_in == EIN_MAX_IN) return "too many inputs";
            t = &sp->in[sp->n_in++];
            ell_seen = 0;
            continue;
        }
        if (*c == '-') {
            if (c[1] != '>' || in_out) return "bad '->'";
            c++;
            in_out = 1;
            sp->explicit_out = 1;
            t = &sp->out;
            ell_seen = 0;
            continue;
        }
        if (*c == '.') {
            if (c[1] != '.' || c[2] != '.') return "'.' outside '...'";
            if (ell_seen) return "two '...' in one term";
            c += 2;
            ell_seen = 1;
            if (t->n > FRT_MAX_RANK) return "term too long";
            t->lab[t->n++] = -1;
            continue;
        }
        int id = letter_id(*c);
        if (id < 0) return "invalid character";
        if (t->n > FRT_MAX_RANK) return "term too long";
        t->lab[t->n++] = id;
    }
    return NULL;
}

/* Resolved equation for concrete input ranks: every dim of every operand gets a label id. */
typedef struct ein_dims {
    int n_in, ell; /* ellipsis rank */
    int rank[EIN_MAX_IN];
    int lab[EIN_MAX_IN][FRT_MAX_RANK];
    int out_rank;
    int out_lab[FRT_MAX_RANK];
    int64_t size[EIN_LABELS]; /* -1 unknown, 0 unused label: see used */
    bool used[EIN_LABELS];
} ein_dims;

/* Expands the terms against input ranks and dims (dims may be -1 at load). */
static const char *ein_resolve(const ein_spec *sp, int n_in, const frt_value *const *in,
                               ein_dims *ed) {
    memset(ed, 0, sizeof *ed);
    if (n_in != sp->n_in) return "the equation's input count differs from the node's";
    ed->n_in = n_in;
    for (int i = 0; i < n_in; i++) {
        const ein_term *t = &sp->in[i];
        int letters = 0, ell = 0;
        for (int j = 0; j < t->n; j++) t->lab[j] < 0 ? ell++ : letters++;
        int r = in[i]->rank;
        if (ell ? r < letters : r != letters) return "an input's rank does not match its term";
        int e = r - letters;
        if (e > ed->ell) ed->ell = e;
        ed->rank[i] = r;
    }
    for (int l = 0; l < EIN_LABELS; l++) ed->size[l] = 1;
    for (int i = 0; i < n_in; i++) {
        const ein_term *t = &sp->in[i];
        int letters = 0;
        for (int j = 0; j < t->n; j++) letters += t->lab[j] >= 0;
        int e = ed->rank[i] - letters, d = 0;
        for (int j = 0; j < t->n; j++) {
            if (t->lab[j] < 0) {
                for (int q = 0; q < e; q++) ed->lab[i][d++] = EIN_ELL + ed->ell - e + q;
            } else ed->lab[i][d++] = t->lab[j];
        }
        for (d = 0; d < ed->rank[i]; d++) {
            int l = ed->lab[i][d];
            int64_t s = in[i]->dims[d];
            if (!ed->used[l] || ed->size[l] == 1) ed->size[l] = s;
            else if (s >= 0 && ed->size[l] >= 0 && s != ed->size[l] && s != 1)
                return "one label has different dims";
            else if (s < 0 && ed->size[l] >= 0) { /* keep the known size */
            }
            ed->used[l] = true;
        }
    }
    if (sp->explicit_out) {
        const ein_term *t = &sp->out;
        int n = 0;
        bool seen[EIN_LABELS] = {false};
        for (int j = 0; j < t->n; j++) {
            if (t->lab[j] < 0) {
                for (int q = 0; q < ed->ell; q++) ed->out_lab[n++] = EIN_ELL + q;
                continue;
            }
            int l = t->lab[j];
            if (!ed->used[l]) return "an output label is in no input";
            if (seen[l]) return "an output label is repeated";
            seen[l] = true;
            if (n >= FRT_MAX_RANK) return "output rank too large";
            ed->out_lab[n++] = l;
        }
        ed->out_rank = n;
    } else {
        int n = 0, cnt[EIN_ELL] = {0};
        for (int q = 0; q < ed->ell; q++) ed->out_lab[n++] = EIN_ELL + q;
        for (int i = 0; i < n_in; i++)
            for (int d = 0; d < ed->rank[i]; d++)
                if (ed->lab[i][d] < EIN_ELL) cnt[ed->lab[i][d]]++;
        for (int l = 0; l < EIN_ELL; l++)
            if (cnt[l] == 1) {
                if (n >= FRT_MAX_RANK) return "output rank too large";
                ed->out_lab[n++] = l;
            }
        ed->out_rank = n;
    }
    return NULL;
}

typedef struct ein_params {
    ein_spec sp;
    int gemm; /* float32 two-input contraction */
} ein_params;

static bool ein_dtype(int32_t dt) {
    return dt == FRT_FLOAT32 || dt == FRT_FLOAT64 || dt == FRT_FLOAT16 || dt == FRT_INT32 ||
           dt == FRT_INT64 || dt == FRT_UINT32 || dt == FRT_UINT64;
}

static frt_status ein_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, EIN_MAX_IN, 1, 1);
    if (st) return st;
    for (int i = 0; i < c->n_in; i++)
        if ((st = frt_op_check_input(c, i, 0))) return st;
    int32_t dt = c->in[0]->dtype;
    if (!ein_dtype(dt))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported", frt_dtype_name(dt));
    for (int i = 1; i < c->n_in; i++)
        if (c->in[i]->dtype != dt)
            return frt_op_fail(c, FRT_ERR_SHAPE, "inputs have different dtypes %s and %s",
                               frt_dtype_name(dt), frt_dtype_name(c->in[i]->dtype));
    const char *eq = frt_attr_string(c->node, "equation", NULL);
    if (!eq) return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute equation is required");
    ein_spec sp;
    const char *why = ein_parse(eq, &sp);
    if (why) return frt_op_fail(c, FRT_ERR_MALFORMED, "equation '%s': %s", eq, why);
    for (int i = 0; i < c->n_in; i++)
        if (c->in[i]->rank < 0) {
            frt_op_set_shape(c->out[0], dt, -1, NULL);
            return FRT_OK;
        }
    ein_dims ed;
    why = ein_resolve(&sp, c->n_in, (const frt_value *const *)c->in, &ed);
    if (why) return frt_op_fail(c, FRT_ERR_SHAPE, "equation '%s': %s", eq, why);
    int64_t dims[FRT_MAX_RANK];
    for (int i = 0; i < ed.out_rank; i++) dims[i] = ed.size[ed.out_lab[i]];
    frt_op_set_shape(c->out[0], dt, ed.out_rank, dims);
    return FRT_OK;
}

/* Stride (elements) of each label in operand i: the sum over its dims with that label (a
 * diagonal), 0 where the operand's dim is 1 (broadcast). */
static void ein_strides(const ein_dims *ed, int i, const frt_value *v, int64_t *st) {
    for (int l = 0; l < EIN_LABELS; l++) st[l] = 0;
    int64_t s = 1;
    for (int d = ed->rank[i] - 1; d >= 0; d--) {
        if (v->dims[d] != 1) st[ed->lab[i][d]] += s;
        s *= v->dims[d];
    }
}

/* Writes src (strides sst per label) into dst contiguous in label order lab[0..n). */
static void ein_gather_f32(float *dst, const float *src, int n, const int *lab,
                           const int64_t *size, const int64_t *sst) {
    int64_t idx[FRT_MAX_RANK * 2] = {0}, off = 0, total = 1;
    for (int k = 0; k < n; k++) total *= size[lab[k]];
    for (int64_t e = 0; e < total; e++) {
        dst[e] = src[off];
        for (int k = n - 1; k >= 0; k--) {
            off += sst[lab[k]];
            if (++idx[k] < size[lab[k]]) break;
            off -= sst[lab[k]] * size[lab[k]];
            idx[k] = 0;
        }
    }
}

/* The label lists of the GEMM form, or false when the equation is not a plain contraction. */
typedef struct ein_gemm_form {
    int nb, nm, nn, nk;
    int b[FRT_MAX_RANK], m[FRT_MAX_RANK], n[FRT_MAX_RANK], k[FRT_MAX_RANK * 2];
} ein_gemm_form;

static bool ein_gemm_classify(const ein_dims *ed, ein_gemm_form *g) {
    if (ed->n_in != 2) return false;
    memset(g, 0, sizeof *g);
    int inA[EIN_LABELS] = {0}, inB[EIN_LABELS] = {0}, inO[EIN_LABELS] = {0};
    for (int d = 0; d < ed->rank[0]; d++)
        if (inA[ed->lab[0][d]]++) return false;
    for (int d = 0; d < ed->rank[1]; d++)
        if (inB[ed->lab[1][d]]++) return false;
    for (int d = 0; d < ed->out_rank; d++) inO[ed->out_lab[d]] = 1;
    for (int d = 0; d < ed->out_rank; d++) {
        int l = ed->out_lab[d];
        if (inA[l] && inB[l]) g->b[g->nb++] = l;
    }
    for (int d = 0; d < ed->rank[0]; d++) {
        int l = ed->lab[0][d];
        if (inO[l] && !inB[l]) g->m[g->nm++] = l;
        else if (!inO[l] && inB[l]) g->k[g->nk++] = l;
        else if (!inO[l]) return false; /* summed over A alone */
    }
    for (int d = 0; d < ed->rank[1]; d++) {
        int l = ed->lab[1][d];
        if (inO[l] && !inA[l]) g->n[g->nn++] = l;
        else if (!inO[l] && !inA[l]) return false;
    }
    return true;
}

static size_t ein_scratch(const frt_step *s, const frt_value *values) {
    const ein_params *p = s->k.params;
    if (!p->gemm) return 0;
    int64_t n = values[s->out[0]].numel;
    for (int i = 0; i < s->n_in; i++) n += values[s->in[i]].numel;
    return (size_t)(n > 0 ? n : 1) * sizeof(float) + 3 * 64;
}

static bool same_labels(const int *a, const int *b, int n) {
    for (int i = 0; i < n; i++)
        if (a[i] != b[i]) return false;
    return true;
}

/* Whether operand i's dims are exactly labels x then y (possibly x, y swapped: *trans). */
static bool ein_direct(const ein_dims *ed, int i, const int *bl, int nb, const int *x, int nx,
                       const int *y, int ny, int *trans) {
    const int *lab = ed->lab[i];
    if (ed->rank[i] != nb + nx + ny || !same_labels(lab, bl, nb)) return false;
    if (same_labels(lab + nb, x, nx) && same_labels(lab + nb + nx, y, ny)) {
        *trans = 0;
        return true;
    }
    if (same_labels(lab + nb, y, ny) && same_labels(lab + nb + ny, x, nx)) {
        *trans = 1;
        return true;
    }
    return false;
}

static frt_status ein_run_gemm(const frt_step *s, frt_exec *x, const ein_dims *ed,
                               const ein_gemm_form *g) {
    const frt_value *A = &x->values[s->in[0]], *B = &x->values[s->in[1]];
    frt_value *O = &x->values[s->out[0]];
    int64_t nb = 1, M = 1, N = 1, K = 1;
    for (int i = 0; i < g->nb; i++) nb *= ed->size[g->b[i]];
    for (int i = 0; i < g->nm; i++) M *= ed->size[g->m[i]];
    for (int i = 0; i < g->nn; i++) N *= ed->size[g->n[i]];
    for (int i = 0; i < g->nk; i++) K *= ed->size[g->k[i]];
    if (K == 0) { /* empty sums: zeros, without touching the (empty) operands */
        memset(O->data, 0, (size_t)O->numel * sizeof(float));
        return FRT_OK;
    }
    char *scr = x->scratch;
    const float *ap = A->data, *bp = B->data;
    int ta = 0, tb = 0;
    int64_t st[EIN_LABELS];
    if (!ein_direct(ed, 0, g->b, g->nb, g->m, g->nm, g->k, g->nk, &ta)) {
        float *buf = (float *)scr;
        scr += ((size_t)(nb * M * K) * 4 + 63) & ~(size_t)63;
        int lab[FRT_MAX_RANK * 3], n = 0;
        for (int i = 0; i < g->nb; i++) lab[n++] = g->b[i];
        for (int i = 0; i < g->nm; i++) lab[n++] = g->m[i];
        for (int i = 0; i < g->nk; i++) lab[n++] = g->k[i];
        ein_strides(ed, 0, A, st);
        ein_gather_f32(buf, A->data, n, lab, ed->size, st);
        ap = buf;
        ta = 0;
    }
    if (!ein_direct(ed, 1, g->b, g->nb, g->k, g->nk, g->n, g->nn, &tb)) {
        float *buf = (float *)scr;
        scr += ((size_t)(nb * K * N) * 4 + 63) & ~(size_t)63;
        int lab[FRT_MAX_RANK * 3], n = 0;
        for (int i = 0; i < g->nb; i++) lab[n++] = g->b[i];
        for (int i = 0; i < g->nk; i++) lab[n++] = g->k[i];
        for (int i = 0; i < g->nn; i++) lab[n++] = g->n[i];
        ein_strides(ed, 1, B, st);
        ein_gather_f32(buf, B->data, n, lab, ed->size, st);
        bp = buf;
        tb = 0;
    }
    int clab[FRT_MAX_RANK * 3], nc = 0;
    for (int i = 0; i < g->nb; i++) clab[nc++] = g->b[i];
    for (int i = 0; i < g->nm; i++) clab[nc++] = g->m[i];
    for (int i = 0; i < g->nn; i++) clab[nc++] = g->n[i];
    bool direct_out = nc == ed->out_rank && same_labels(clab, ed->out_lab, nc);
    float *cp = direct_out ? O->data : (float *)scr;
    for (int64_t b = 0; b < nb; b++)
        frt_sgemm(ta, tb, M, N, K, 1.0f, ap + b * M * K, ta ? M : K, bp + b * K * N, tb ? K : N,
                  0.0f, cp + b * M * N, N);
    if (!direct_out) { /* C is [batch, M, N] in clab order: read it in the output's order */
        for (int l = 0; l < EIN_LABELS; l++) st[l] = 0;
        int64_t sz = 1;
        for (int i = nc - 1; i >= 0; i--) {
            st[clab[i]] = sz;
            sz *= ed->size[clab[i]];
        }
        ein_gather_f32(O->data, cp, ed->out_rank, ed->out_lab, ed->size, st);
    }
    return FRT_OK;
}

static frt_status ein_kernel(const frt_step *s, frt_exec *x) {
    const ein_params *p = s->k.params;
    const frt_value *in[EIN_MAX_IN];
    for (int i = 0; i < s->n_in; i++) in[i] = &x->values[s->in[i]];
    frt_value *O = &x->values[s->out[0]];
    ein_dims ed;
    const char *why = ein_resolve(&p->sp, s->n_in, in, &ed);
    if (why) return frt_step_fail(s, FRT_ERR_SHAPE, "%s", why);
    /* broadcast dims (1 against n) are handled by strides in the generic loop only */
    bool bcast = false;
    for (int i = 0; i < s->n_in; i++)
        for (int d = 0; d < ed.rank[i]; d++)
            if (in[i]->dims[d] != ed.size[ed.lab[i][d]]) bcast = true;
    if (O->numel == 0) return FRT_OK;
    ein_gemm_form g;
    if (p->gemm && !bcast && ein_gemm_classify(&ed, &g)) return ein_run_gemm(s, x, &ed, &g);
    /* generic: odometer over the output labels, then over the summed labels */
    int32_t dt = O->dtype;
    bool isf = frt_dtype_is_float(dt);
    int64_t st[EIN_MAX_IN][EIN_LABELS];
    for (int i = 0; i < s->n_in; i++) ein_strides(&ed, i, in[i], st[i]);
    bool in_out[EIN_LABELS] = {false};
    for (int d = 0; d < ed.out_rank; d++) in_out[ed.out_lab[d]] = true;
    int sum_lab[EIN_LABELS], ns = 0;
    int64_t n_sum = 1;
    for (int l = 0; l < EIN_LABELS; l++)
        if (ed.used[l] && !in_out[l]) {
            sum_lab[ns++] = l;
            n_sum *= ed.size[l];
        }
    int64_t oidx[FRT_MAX_RANK] = {0}, obase[EIN_MAX_IN] = {0};
    for (int64_t e = 0; e < O->numel; e++) {
        double accf = 0;
        uint64_t acci = 0;
        if (n_sum > 0) {
            int64_t sidx[EIN_LABELS] = {0}, off[EIN_MAX_IN];
            for (int i = 0; i < s->n_in; i++) off[i] = obase[i];
            for (;;) {
                if (isf) {
                    double prod = 1;
                    for (int i = 0; i < s->n_in; i++) prod *= frt_ld_f64(dt, in[i]->data, off[i]);
                    accf += prod;
                } else {
                    uint64_t prod = 1;
                    for (int i = 0; i < s->n_in; i++)
                        prod *= (uint64_t)frt_ld_i64(dt, in[i]->data, off[i]);
                    acci += prod;
                }
                int k = ns - 1;
                for (; k >= 0; k--) {
                    int l = sum_lab[k];
                    for (int i = 0; i < s->n_in; i++) off[i] += st[i][l];
                    if (++sidx[k] < ed.size[l]) break;
                    for (int i = 0; i < s->n_in; i++) off[i] -= st[i][l] * ed.size[l];
                    sidx[k] = 0;
                }
                if (k < 0) break;
            }
        }
        if (isf) frt_st_f64(dt, O->data, e, accf);
        else frt_st_i64(dt, O->data, e, (int64_t)acci);
        for (int k = ed.out_rank - 1; k >= 0; k--) {
            int l = ed.out_lab[k];
            for (int i = 0; i < s->n_in; i++) obase[i] += st[i][l];
            if (++oidx[k] < ed.size[l]) break;
            for (int i = 0; i < s->n_in; i++) obase[i] -= st[i][l] * ed.size[l];
            oidx[k] = 0;
        }
    }
    return FRT_OK;
}

static frt_status ein_select(frt_op_ctx *c, frt_kernel *k) {
    ein_params *p = frt_arena_alloc(c->arena, sizeof *p, 8);
    if (!p) return frt_op_fail(c, FRT_ERR_NO_MEMORY, "out of memory");
    const char *eq = frt_attr_string(c->node, "equation", "");
    const char *why = ein_parse(eq, &p->sp);
    if (why) return frt_op_fail(c, FRT_ERR_MALFORMED, "equation '%s': %s", eq, why);
    p->gemm = 0;
    if (c->in[0]->dtype == FRT_FLOAT32 && c->n_in == 2) {
        /* labels only: does the equation have the contraction form (ranks as at load)? */
        ein_dims ed;
        ein_gemm_form g;
        if (c->in[0]->rank >= 0 && c->in[1]->rank >= 0 &&
            !ein_resolve(&p->sp, 2, (const frt_value *const *)c->in, &ed) &&
            ein_gemm_classify(&ed, &g))
            p->gemm = 1;
    }
    k->name = p->gemm ? "einsum_gemm" : "einsum";
    k->fn = ein_kernel;
    k->params = p;
    k->scratch = ein_scratch;
    return FRT_OK;
}
FRT_OP_IMPL(linalg, Einsum, ein_infer, ein_select);

/* ---- Det ----------------------------------------------------------------------------------- */

static frt_status det_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (!st) st = frt_op_check_input(c, 0, 0);
    if (st) return st;
    const frt_value *x = c->in[0];
    if (!frt_dtype_is_float(x->dtype))
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "dtype %s not supported (float32, float64, "
                           "float16)", frt_dtype_name(x->dtype));
    if (x->rank < 0) {
        frt_op_set_shape(c->out[0], x->dtype, -1, NULL);
        return FRT_OK;
    }
    char sx[128];
    int r = x->rank;
    if (r < 2 || (x->dims[r - 1] >= 0 && x->dims[r - 2] >= 0 && x->dims[r - 1] != x->dims[r - 2]))
        return frt_op_fail(c, FRT_ERR_SHAPE, "input %s is not [*, M, M]",
                           frt_shape_str(x, sx, sizeof sx));
    frt_op_set_shape(c->out[0], x->dtype, r - 2, x->dims);
    return FRT_OK;
}

static size_t det_scratch(const frt_step *s, const frt_value *values) {
    const frt_value *x = &values[s->in[0]];
    int64_t m = x->rank >= 2 ? x->dims[x->rank - 1] : 0;
    return (size_t)(m * m + 1) * sizeof(double);
}

static frt_status det_kernel(const frt_step *s, frt_exec *x) {
    const frt_value *X = &x->values[s->in[0]];
    frt_value *Y = &x->values[s->out[0]];
    int r = X->rank;
    if (r < 2 || X->dims[r - 1] != X->dims[r - 2])
        return frt_step_fail(s, FRT_ERR_SHAPE, "input is not [*, M, M]");
    int64_t m = X->dims[r - 1], mm = m * m, batch = Y->numel;
    double *a = x->scratch;
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t i = 0; i < mm; i++) a[i] = frt_ld_f64(X->dtype, X->data, b * mm + i);
        double det = 1;
        for (int64_t col = 0; col < m; col++) {
            int64_t piv = col;
            for (int64_t i = col + 1; i < m; i++)
                if (fabs(a[i * m + col]) > fabs(a[piv * m + col])) piv = i;
            if (a[piv * m + col] == 0) {
                det = 0;
                break;
            }
            if (piv != col) {
                for (int64_t j = 0; j < m; j++) {
                    double t = a[col * m + j];
                    a[col * m + j] = a[piv * m + j];
                    a[piv * m + j] = t;
                }
                det = -det;
            }
            double d = a[col * m + col];
            det *= d;
            for (int64_t i = col + 1; i < m; i++) {
                double f = a[i * m + col] / d;
                for (int64_t j = col + 1; j < m; j++) a[i * m + j] -= f * a[col * m + j];
            }
        }
        frt_st_f64(Y->dtype, Y->data, b, det);
    }
    return FRT_OK;
}

static frt_status det_select(frt_op_ctx *c, frt_kernel *k) {
    (void)c;
    k->name = "det";
    k->fn = det_kernel;
    k->scratch = det_scratch;
    return FRT_OK;
}
FRT_OP_IMPL(linalg, Det, det_infer, det_select);
