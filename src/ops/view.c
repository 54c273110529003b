/* Reshape Flatten Squeeze Unsqueeze Identity Dropout: view operators.
 *
 * Each selects a kernel with flags FRT_K_VIEW and no function: output 0 aliases the bytes of
 * input 0 and only its shape changes. infer computes that shape; the runtime sets the data
 * pointer. At load, unknown dims (-1) propagate; shape/axes inputs that are not constants yet are
 * read at reshape time (infer reads in[i]->data whenever it is non-NULL).
 */
#include <stdio.h>
#include <string.h>

#include "ir/seq.h"
#include "op.h"

static frt_status view_kernel(frt_kernel *k, const char *name) {
    k->name = name;
    k->fn = NULL;
    k->flags = FRT_K_VIEW;
    return FRT_OK;
}

static void set_unknown(frt_value *out, int32_t dtype, int rank) {
    int64_t dims[FRT_MAX_RANK];
    for (int i = 0; i < FRT_MAX_RANK; i++) dims[i] = -1;
    frt_op_set_shape(out, dtype, rank, dims);
}

/* Reads an integer list input (1-D int64, or int32 tolerated) into vals; *n = its length (-1 if
 * unknown). *known: the values are available (data present, or the list is empty). */
static frt_status read_list_input(const frt_op_ctx *c, int i, const char *what, int64_t *vals,
                                  int *n, bool *known) {
    const frt_value *v = c->in[i];
    if (v->dtype != FRT_INT64 && v->dtype != FRT_INT32)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "%s input has dtype %s, expected int64", what,
                           frt_dtype_name((frt_dtype)v->dtype));
    if (v->rank >= 0 && v->rank != 1)
        return frt_op_fail(c, FRT_ERR_SHAPE, "%s input must be 1-D, has rank %d", what, v->rank);
    *known = false;
    *n = -1;
    if (v->rank != 1 || v->dims[0] < 0) return FRT_OK;
    if (v->dims[0] > FRT_MAX_RANK)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "%s input has %lld entries (max %d)", what,
                           (long long)v->dims[0], FRT_MAX_RANK);
    *n = (int)v->dims[0];
    if (!v->data && *n > 0) return FRT_OK; /* an empty list may have no data */
    for (int k = 0; k < *n; k++) vals[k] = frt_value_get_int(v, k);
    *known = true;
    return FRT_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Reshape                                                                                         */
/* ---------------------------------------------------------------------------------------------- */

/* Resolves a requested shape spec (0 = copy the input dim unless allowzero, -1 = infer) against
 * input x into out. Unknown input dims at load: a dim copied by 0 cancels against itself, so
 * [?,3,4] -> [0,-1] gives [?,12]; otherwise unresolvable dims stay -1. */
static frt_status reshape_resolve(const frt_op_ctx *c, const frt_value *x, const int64_t *spec,
                                  int n, bool allowzero) {
    int r = x->rank;
    int64_t od[FRT_MAX_RANK];
    bool copied[FRT_MAX_RANK] = {false};
    int neg = -1;
    bool zero_copied = false, has_zero = false;
    char b0[160], b1[160];
    for (int i = 0; i < n; i++) {
        int64_t s = spec[i];
        if (s == -1) {
            if (neg >= 0)
                return frt_op_fail(c, FRT_ERR_SHAPE, "shape %s has more than one -1",
                                   frt_ints_str(spec, n, b0, sizeof b0));
            neg = i;
            od[i] = -1;
        } else if (s == 0 && !allowzero) {
            if (r < 0) {
                od[i] = -1;
            } else if (i >= r) {
                return frt_op_fail(c, FRT_ERR_SHAPE,
                                   "shape %s copies dim %d (0) but the input %s has rank %d",
                                   frt_ints_str(spec, n, b0, sizeof b0), i,
                                   frt_shape_str(x, b1, sizeof b1), r);
            } else {
                od[i] = x->dims[i];
                copied[i] = true;
                if (od[i] == 0) zero_copied = true;
            }
        } else if (s < 0) {
            return frt_op_fail(c, FRT_ERR_SHAPE, "shape %s has invalid entry %lld",
                               frt_ints_str(spec, n, b0, sizeof b0), (long long)s);
        } else {
            od[i] = s;
            if (s == 0) has_zero = true;
        }
    }
    if (allowzero && has_zero && neg >= 0)
        return frt_op_fail(c, FRT_ERR_SHAPE, "shape %s has both 0 and -1 with allowzero=1",
                           frt_ints_str(spec, n, b0, sizeof b0));
    if (r >= 0) {
        /* num: input dims not copied; den: output dims not copied, except the -1 */
        int64_t num = 1, den = 1;
        bool nk = true, dk = true;
        for (int i = 0; i < r; i++) {
            if (i < n && copied[i]) continue;
            if (x->dims[i] < 0 || __builtin_mul_overflow(num, x->dims[i], &num)) nk = false;
        }
        for (int i = 0; i < n; i++) {
            if (i == neg || copied[i]) continue;
            if (od[i] < 0) dk = false;
            else if (__builtin_mul_overflow(den, od[i], &den))
                return frt_op_fail(c, FRT_ERR_SHAPE, "shape %s has too many elements",
                                   frt_ints_str(spec, n, b0, sizeof b0));
        }
        bool in_known = frt_shape_known(x);
        bool out_known = true;
        for (int i = 0; i < n; i++)
            if (i != neg && od[i] < 0) out_known = false;
        if (neg >= 0) {
            if (nk && dk) {
                if (den == 0 || zero_copied) {
                    if (in_known && out_known)
                        return frt_op_fail(c, FRT_ERR_SHAPE,
                                           "cannot infer the -1 in shape %s for input %s: the "
                                           "other dims have 0 elements",
                                           frt_ints_str(spec, n, b0, sizeof b0),
                                           frt_shape_str(x, b1, sizeof b1));
                } else if (num % den == 0) {
                    od[neg] = num / den;
                } else if (in_known && out_known) {
                    return frt_op_fail(c, FRT_ERR_SHAPE,
                                       "cannot reshape input %s (%lld elements) to %s",
                                       frt_shape_str(x, b1, sizeof b1), (long long)x->numel,
                                       frt_ints_str(spec, n, b0, sizeof b0));
                }
            }
        } else if (in_known && out_known) {
            int64_t on = frt_shape_numel(od, n);
            if (on != x->numel)
                return frt_op_fail(c, FRT_ERR_SHAPE,
                                   "cannot reshape input %s (%lld elements) to %s (%lld elements)",
                                   frt_shape_str(x, b1, sizeof b1), (long long)x->numel,
                                   frt_ints_str(spec, n, b0, sizeof b0), (long long)on);
        }
    }
    frt_op_set_shape(c->out[0], x->dtype, n, od);
    return FRT_OK;
}

static frt_status reshape_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, c->opset >= 5 ? 2 : 1, 2, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    const frt_value *x = c->in[0];
    int64_t spec[FRT_MAX_RANK];
    int n;
    if (c->opset < 5) {
        size_t cnt;
        const int64_t *s = frt_attr_ints(c->node, "shape", &cnt);
        if (!s) return frt_op_fail(c, FRT_ERR_MALFORMED, "attribute 'shape' is required");
        if (cnt > FRT_MAX_RANK)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "shape has %zu entries (max %d)", cnt,
                               FRT_MAX_RANK);
        n = (int)cnt;
        memcpy(spec, s, cnt * sizeof *s);
    } else {
        if ((st = frt_op_check_input(c, 1, 0))) return st;
        if (c->in[1]->dtype != FRT_INT64)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "shape input has dtype %s, expected int64",
                               frt_dtype_name((frt_dtype)c->in[1]->dtype));
        bool known;
        if ((st = read_list_input(c, 1, "shape", spec, &n, &known))) return st;
        if (!known) { /* rank from the shape input's length, dims unknown until reshape */
            set_unknown(c->out[0], x->dtype, n);
            return FRT_OK;
        }
    }
    bool allowzero = c->opset >= 14 && frt_attr_int(c->node, "allowzero", 0) != 0;
    return reshape_resolve(c, x, spec, n, allowzero);
}

static frt_status reshape_select(frt_op_ctx *c, frt_kernel *k) { return view_kernel(k, "reshape"); }

/* ---------------------------------------------------------------------------------------------- */
/* Flatten                                                                                         */
/* ---------------------------------------------------------------------------------------------- */

/* [d0..d_{r-1}] -> [d0*..*d_{axis-1}, d_axis*..*d_{r-1}], axis in [-r, r]. */
static frt_status flatten_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    const frt_value *x = c->in[0];
    int64_t a = frt_attr_int(c->node, "axis", 1);
    int r = x->rank;
    if (r < 0) {
        set_unknown(c->out[0], x->dtype, 2);
        return FRT_OK;
    }
    int64_t axis = a < 0 ? a + r : a;
    if (axis < 0 || axis > r)
        return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d", (long long)a,
                           r);
    int64_t d[2] = {1, 1};
    for (int i = 0; i < r; i++) {
        int64_t *p = &d[i >= axis];
        if (*p < 0) continue;
        if (x->dims[i] < 0) *p = -1;
        else if (__builtin_mul_overflow(*p, x->dims[i], p))
            return frt_op_fail(c, FRT_ERR_SHAPE, "flattened dim overflows int64");
    }
    frt_op_set_shape(c->out[0], x->dtype, 2, d);
    return FRT_OK;
}

static frt_status flatten_select(frt_op_ctx *c, frt_kernel *k) { return view_kernel(k, "flatten"); }

/* ---------------------------------------------------------------------------------------------- */
/* Squeeze / Unsqueeze                                                                             */
/* ---------------------------------------------------------------------------------------------- */

/* Axes from the attribute (opset < 13) or input 1 (opset >= 13). *present: axes were given;
 * *known: their values are available; *n: count (-1 if unknown). */
static frt_status get_axes(const frt_op_ctx *c, int64_t *axes, int *n, bool *present,
                           bool *known) {
    *present = false;
    *known = true;
    *n = 0;
    if (c->opset < 13) {
        size_t cnt;
        const int64_t *a = frt_attr_ints(c->node, "axes", &cnt);
        if (!a) return FRT_OK;
        if (cnt > FRT_MAX_RANK)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "axes has %zu entries (max %d)", cnt,
                               FRT_MAX_RANK);
        *present = true;
        *n = (int)cnt;
        memcpy(axes, a, cnt * sizeof *a);
        return FRT_OK;
    }
    if (c->n_in < 2 || !c->in[1]) return FRT_OK;
    *present = true;
    const frt_value *av = c->in[1];
    if (av->rank == 0 && (av->dtype == FRT_INT64 || av->dtype == FRT_INT32)) {
        /* a scalar axes is one axis (the node suite's Loop sequence cases write it so; ONNX
           Runtime accepts it) */
        *n = 1;
        *known = av->data != NULL;
        if (*known) axes[0] = frt_value_get_int(av, 0);
        return FRT_OK;
    }
    return read_list_input(c, 1, "axes", axes, n, known);
}

static frt_status squeeze_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, c->opset >= 13 ? 2 : 1, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    const frt_value *x = c->in[0];
    int64_t axes[FRT_MAX_RANK];
    int n, r = x->rank;
    bool present, known;
    if ((st = get_axes(c, axes, &n, &present, &known))) return st;
    if (r < 0 || !known) {
        set_unknown(c->out[0], x->dtype, r >= 0 && n >= 0 && n <= r ? r - n : -1);
        return FRT_OK;
    }
    bool drop[FRT_MAX_RANK] = {false};
    if (!present) {
        for (int i = 0; i < r; i++) {
            if (x->dims[i] < 0) { /* cannot tell whether it is 1 until reshape */
                set_unknown(c->out[0], x->dtype, -1);
                return FRT_OK;
            }
            drop[i] = x->dims[i] == 1;
        }
    }
    for (int k = 0; k < n; k++) {
        int d = frt_norm_axis(axes[k], r);
        if (d < 0)
            return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for rank %d",
                               (long long)axes[k], r);
        if (drop[d])
            return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld appears twice", (long long)axes[k]);
        if (x->dims[d] >= 0 && x->dims[d] != 1) {
            char b[160];
            return frt_op_fail(c, FRT_ERR_SHAPE, "cannot squeeze dim %d of size %lld (input %s)",
                               d, (long long)x->dims[d], frt_shape_str(x, b, sizeof b));
        }
        drop[d] = true;
    }
    int64_t od[FRT_MAX_RANK];
    int o = 0;
    for (int i = 0; i < r; i++)
        if (!drop[i]) od[o++] = x->dims[i];
    frt_op_set_shape(c->out[0], x->dtype, o, od);
    return FRT_OK;
}

static frt_status squeeze_select(frt_op_ctx *c, frt_kernel *k) { return view_kernel(k, "squeeze"); }

static frt_status unsqueeze_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, c->opset >= 13 ? 2 : 1, c->opset >= 13 ? 2 : 1, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    const frt_value *x = c->in[0];
    int64_t axes[FRT_MAX_RANK];
    int n, r = x->rank;
    bool present, known;
    if ((st = get_axes(c, axes, &n, &present, &known))) return st;
    if (!present) return frt_op_fail(c, FRT_ERR_MALFORMED, "axes are required");
    int R = r >= 0 && n >= 0 ? r + n : -1;
    if (R > FRT_MAX_RANK)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED, "output rank %d > %d", R, FRT_MAX_RANK);
    if (R < 0 || !known) {
        set_unknown(c->out[0], x->dtype, R);
        return FRT_OK;
    }
    bool ins[FRT_MAX_RANK] = {false};
    for (int k = 0; k < n; k++) {
        int d = frt_norm_axis(axes[k], R);
        if (d < 0)
            return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld out of range for output rank %d",
                               (long long)axes[k], R);
        if (ins[d])
            return frt_op_fail(c, FRT_ERR_SHAPE, "axis %lld appears twice", (long long)axes[k]);
        ins[d] = true;
    }
    int64_t od[FRT_MAX_RANK];
    for (int i = 0, j = 0; i < R; i++) od[i] = ins[i] ? 1 : x->dims[j++];
    frt_op_set_shape(c->out[0], x->dtype, R, od);
    return FRT_OK;
}

static frt_status unsqueeze_select(frt_op_ctx *c, frt_kernel *k) {
    return view_kernel(k, "unsqueeze");
}

/* ---------------------------------------------------------------------------------------------- */
/* Identity / Dropout                                                                              */
/* ---------------------------------------------------------------------------------------------- */

static frt_status identity_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, 1, 1, 1);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    const frt_value *x = c->in[0];
    if (x->vtype) {
        frt_value_set_container(c->out[0], x->vtype, x->dtype);
        return FRT_OK;
    }
    frt_op_set_shape(c->out[0], x->dtype, x->rank, x->dims);
    return FRT_OK;
}

/* Identity of a sequence / optional: a copy into the output's frt_seq (not a view: a container
 * value owns its storage). */
static frt_status identity_seq_run(const frt_step *s, frt_exec *x) {
    frt_seq *dst = frt_seq_of(&x->values[s->out[0]]), *src = frt_seq_of(&x->values[s->in[0]]);
    if (!dst || !src) return frt_step_fail(s, FRT_ERR_INTERNAL, "sequence expected");
    return frt_seq_copy(dst, src);
}

static frt_status identity_select(frt_op_ctx *c, frt_kernel *k) {
    if (c->in[0]->vtype) {
        k->name = "identity_seq";
        k->fn = identity_seq_run;
        return FRT_OK;
    }
    return view_kernel(k, "identity");
}

/* Inference-mode Dropout: output = data, mask (optional output, bool) all true. Opset < 12: ratio
 * attribute; opset >= 12: optional ratio and training_mode inputs. training_mode must be absent or
 * a constant; a constant true is accepted only with a constant ratio of 0 (dropping nothing: the
 * same result as inference). With the mask the kernel copies; without it it is a view. */
static frt_status dropout_infer(frt_op_ctx *c) {
    frt_status st = frt_op_check_arity(c, 1, c->opset >= 12 ? 3 : 1, 1, 2);
    if (st || (st = frt_op_check_input(c, 0, 0))) return st;
    const frt_value *x = c->in[0];
    frt_op_set_shape(c->out[0], x->dtype, x->rank, x->dims);
    if (c->n_out == 2 && c->out[1]) frt_op_set_shape(c->out[1], FRT_BOOL, x->rank, x->dims);
    return FRT_OK;
}

static frt_status dropout_mask_kernel(const frt_step *s, frt_exec *x) {
    const frt_value *in = &x->values[s->in[0]], *out = &x->values[s->out[0]];
    const frt_value *mask = &x->values[s->out[1]];
    size_t nb = frt_value_nbytes(in);
    if (nb && out->data != in->data) memcpy(out->data, in->data, nb);
    if (mask->numel > 0) memset(mask->data, 1, (size_t)mask->numel);
    return FRT_OK;
}

static frt_status dropout_select(frt_op_ctx *c, frt_kernel *k) {
    if (c->opset >= 12 && c->n_in >= 3 && c->in[2] && !c->in[2]->data)
        return frt_op_fail(c, FRT_ERR_UNSUPPORTED,
                           "Dropout whose training_mode is not a constant: flatrt runs inference "
                           "only, so training_mode must be absent or a constant false");
    if (c->opset >= 12 && c->n_in >= 3 && c->in[2] && c->in[2]->data) {
        const frt_value *t = c->in[2];
        if (t->numel != 1)
            return frt_op_fail(c, FRT_ERR_SHAPE, "training_mode must be a scalar");
        bool on;
        switch (frt_dtype_size((frt_dtype)t->dtype)) {
        case 1: on = *(const uint8_t *)t->data != 0; break;
        default: on = frt_value_get_int(t, 0) != 0; break;
        }
        const frt_value *r = c->n_in >= 2 ? c->in[1] : NULL;
        bool zero_ratio = r && r->data && r->numel == 1 &&
                          ((r->dtype == FRT_FLOAT32 && *(const float *)r->data == 0.0f) ||
                           (r->dtype == FRT_FLOAT64 && *(const double *)r->data == 0.0));
        if (on && !zero_ratio)
            return frt_op_fail(c, FRT_ERR_UNSUPPORTED,
                               "Dropout with training_mode=true (and a ratio other than a constant "
                               "0) is not supported");
    }
    if (c->n_out == 2 && c->node->out[1] >= 0) {
        k->name = "dropout_mask";
        k->fn = dropout_mask_kernel;
        return FRT_OK;
    }
    return view_kernel(k, "dropout");
}

/* Implementations referred to by src/ops/ops.def. */
FRT_OP_IMPL(view, Reshape, reshape_infer, reshape_select);
FRT_OP_IMPL(view, Flatten, flatten_infer, flatten_select);
FRT_OP_IMPL(view, Squeeze, squeeze_infer, squeeze_select);
FRT_OP_IMPL(view, Unsqueeze, unsqueeze_infer, unsqueeze_select);
FRT_OP_IMPL(view, Identity, identity_infer, identity_select);
FRT_OP_IMPL(view, Dropout, dropout_infer, dropout_select);
