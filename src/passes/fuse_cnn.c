/* CNN fusions of mobile networks (MobileNetV3, EfficientNet), called by frt_pass_fuse (fuse.c)
 * for every Conv / FusedConv without a fused activation yet:
 *
 *   Y = Conv(..); S = Sigmoid(Y); Mul(Y, S)             -> conv act SILU
 *   Y = Conv(..); flatrt::Silu(Y)                       -> conv act SILU
 *   Y = Conv(..); H = HardSigmoid(Y) (alpha 1/6, beta 1/2); Mul(Y, H)
 *                                                       -> conv act HARDSWISH (torch's export of
 *                                                          nn.Hardswish before opset 14)
 *   Y = Conv(..); HardSwish(Y)                          -> conv act HARDSWISH
 *   Y = Conv(..); HardSigmoid(Y)                        -> conv act HARDSIGMOID(alpha, beta)
 *   Y = Conv(..); Sigmoid(Y)                            -> conv act SIGMOID
 *                                                          (the gates of squeeze-and-excitation)
 *
 * The activation is applied in the conv's epilogue (conv.h, p->post). Mul operands may come in
 * either order. Y must be read by exactly the pattern's nodes (and not be a graph output); the
 * conv then writes the last node's output and the pattern's nodes die. float32 only.
 *
 * And the squeeze of squeeze-and-excitation (frt_pass_fuse_conv_mean, after the above):
 *
 *   Y = Conv(.., group > 1) [act]; G = GlobalAveragePool(Y)   (Y read by others too: the SE Mul)
 *                                                       -> Y, G = flatrt::ConvMean(..) [act]
 *
 * The depthwise / grouped conv writes the mean of its output per channel as a second output
 * (conv.c; the oneDNN provider sums each channel block right after computing it,
 * onednn/dwconv.c, gconv.c), so no separate pass reads Y again. FRT_FUSE_SE=0 (read at load)
 * turns it off. */
#include <stdlib.h>
#include <string.h>

#include "ops/op.h"
#include "passes/passes.h"

static bool is_op(const frt_node *n, const char *domain, const char *op) {
    return strcmp(n->op_type, op) == 0 && strcmp(n->domain, domain) == 0;
}

/* Mul(a, b) or Mul(b, a), one output. */
static bool is_mul_of(const frt_node *m, int32_t a, int32_t b) {
    if (!is_op(m, "", "Mul") || m->n_in != 2 || m->n_out != 1) return false;
    return (m->in[0] == a && m->in[1] == b) || (m->in[0] == b && m->in[1] == a);
}

/* conv now defines `last`'s output 0; the values in between lose their producer and readers. */
static void take_output(frt_graph *g, frt_node *conv, frt_node *mid, frt_node *last) {
    int32_t y = conv->out[0], out = last->out[0];
    int32_t pid = g->values[y].producer;
    g->values[y].producer = -1;
    g->values[y].n_uses = 0;
    if (mid) {
        g->values[mid->out[0]].producer = -1;
        g->values[mid->out[0]].n_uses = 0;
        mid->dead = true;
    }
    conv->out[0] = out;
    g->values[out].producer = pid;
    last->dead = true;
}

static bool hardsigmoid_attrs(const frt_node *n, float *alpha, float *beta) {
    *alpha = frt_attr_float(n, "alpha", 0.2f);
    *beta = frt_attr_float(n, "beta", 0.5f);
    return n->n_in == 1 && n->n_out == 1;
}

int frt_pass_fuse_conv_act(frt_graph *g, frt_node *conv) {
    if (conv->n_out != 1 || conv->act.kind != FRT_ACT_NONE) return 0;
    int32_t y = conv->out[0];
    if (y < 0 || g->values[y].v.dtype != FRT_FLOAT32) return 0;
    frt_node *rd[2];
    int nr = frt_graph_readers(g, y, rd, 2);
    if (nr == 1) {
        frt_node *a = rd[0];
        if (a->n_in < 1 || a->in[0] != y || a->n_out != 1) return 0;
        if (is_op(a, "flatrt", "Silu") || is_op(a, "", "HardSwish")) {
            conv->act.kind = is_op(a, "", "HardSwish") ? FRT_ACT_HARDSWISH : FRT_ACT_SILU;
        } else if (is_op(a, "", "Sigmoid")) {
            conv->act.kind = FRT_ACT_SIGMOID;
        } else if (is_op(a, "", "HardSigmoid")) {
            float al, be;
            if (!hardsigmoid_attrs(a, &al, &be)) return 0;
            conv->act.kind = FRT_ACT_HARDSIGMOID;
            conv->act.lo = al; /* alpha */
            conv->act.hi = be; /* beta */
        } else {
            return 0;
        }
        take_output(g, conv, NULL, a);
        return 1;
    }
    if (nr != 2) return 0;
    /* S = f(Y) read only by Mul(Y, S) */
    for (int i = 0; i < 2; i++) {
        frt_node *f = rd[i], *m = rd[1 - i];
        if (f->n_in != 1 || f->n_out != 1 || f->in[0] != y || !is_mul_of(m, y, f->out[0])) continue;
        frt_node *fr[1];
        if (frt_graph_readers(g, f->out[0], fr, 1) != 1) continue;
        if (is_op(f, "", "Sigmoid")) {
            conv->act.kind = FRT_ACT_SILU;
        } else if (is_op(f, "", "HardSigmoid")) {
            float al, be;
            if (!hardsigmoid_attrs(f, &al, &be) || al != 1.0f / 6.0f || be != 0.5f) continue;
            conv->act.kind = FRT_ACT_HARDSWISH;
        } else {
            continue;
        }
        take_output(g, conv, f, m);
        return 2;
    }
    return 0;
}

int frt_pass_fuse_conv_mean(frt_graph *g, frt_arena *arena, frt_node *conv, frt_status *st) {
    const char *env = getenv("FRT_FUSE_SE");
    if (env && !strcmp(env, "0")) return 0;
    if (!is_op(conv, "", "Conv") || conv->n_out != 1 || conv->n_in < 2 || conv->n_in > 3 ||
        frt_attr_int(conv, "group", 1) < 2)
        return 0;
    if (!frt_op_probe(FRT_DOMAIN_INTERNAL, "ConvMean", 1)) return 0; /* not built */
    int32_t y = conv->out[0];
    if (y < 0) return 0;
    const frt_value *yv = &g->values[y].v;
    if (yv->dtype != FRT_FLOAT32 || yv->rank != 4 || !frt_shape_known(yv)) return 0;
    frt_node *rd[8];
    int nr = frt_graph_readers(g, y, rd, 8);
    if (nr < 2 || nr > 8) return 0; /* (alone: nothing else reads Y, leave it) */
    frt_node *gap = NULL;
    for (int i = 0; i < nr; i++)
        if (is_op(rd[i], "", "GlobalAveragePool") && rd[i]->n_in == 1 && rd[i]->n_out == 1 &&
            rd[i]->in[0] == y && rd[i]->out[0] >= 0) {
            if (gap) return 0; /* two of them: leave it */
            gap = rd[i];
        }
    if (!gap) return 0;
    int32_t *nout = frt_arena_array(arena, 2, sizeof(int32_t));
    if (!nout) {
        *st = frt_error(FRT_ERR_NO_MEMORY, "out of memory fusing a squeeze-and-excitation pool");
        return -1;
    }
    int32_t m = gap->out[0];
    nout[0] = y;
    nout[1] = m;
    gap->dead = true;
    g->values[y].n_uses--; /* the pool's read */
    conv->out = nout;
    conv->n_out = 2;
    conv->domain = FRT_DOMAIN_INTERNAL;
    conv->op_type = "ConvMean";
    g->values[m].producer = (int32_t)(conv - g->nodes);
    frt_op_created(conv->domain, conv->op_type, 1);
    return 1;
}
