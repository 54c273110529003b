/* Reorder between layouts: src -> plain -> dst through each layout's conversions to and from
 * plain; scratch holds the plain tensor when neither side is plain. */
#include <string.h>

#include "reorder.h"

static frt_status reorder_infer(frt_op_ctx *c) {
    if (c->n_in != 1 || c->n_out != 1 || !c->in[0])
        return frt_op_fail(c, FRT_ERR_INTERNAL, "reorder needs one input and one output");
    frt_op_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
    return FRT_OK;
}

static frt_status reorder_select(frt_op_ctx *c, frt_kernel *k) {
    *k = frt_reorder_kernel();
    return FRT_OK;
}

const frt_op_def frt_op_reorder = {
    .domain = FRT_DOMAIN_INTERNAL,
    .op_type = "Reorder",
    .since = 1,
    .max = FRT_OPSET_LATEST,
    .flags = 0,
    .family = "reorder",
    .infer = reorder_infer,
    .select = reorder_select,
};

static size_t reorder_scratch(const frt_step *s, const frt_value *values) {
    const frt_value *a = &values[s->in[0]], *b = &values[s->out[0]];
    if (!a->layout || !b->layout || a->layout == b->layout) return 0;
    frt_value p = *a;
    p.layout = FRT_LAYOUT_PLAIN;
    return frt_value_nbytes(&p);
}

static frt_status reorder_run(const frt_step *s, frt_exec *x) {
    const frt_value *a = &x->values[s->in[0]];
    frt_value *b = &x->values[s->out[0]];
    if (a->layout == b->layout) {
        memcpy(b->data, a->data, frt_value_nbytes(a));
    } else if (!a->layout) {
        b->layout->from_plain(a, b);
    } else if (!b->layout) {
        a->layout->to_plain(a, b);
    } else {
        frt_value p = *a;
        p.layout = FRT_LAYOUT_PLAIN;
        p.data = x->scratch;
        a->layout->to_plain(a, &p);
        b->layout->from_plain(&p, b);
    }
    return FRT_OK;
}

frt_kernel frt_reorder_kernel(void) {
    frt_kernel k = {0};
    k.name = "reorder";
    k.fn = reorder_run;
    k.scratch = reorder_scratch;
    return k;
}
