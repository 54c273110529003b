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
 * conv then writes the last node's output and the pattern's nodes die. float32 only. */
#include <stdlib.h>
#include <string.h>

#include "ops/cpu.h"
#include "ops/onednn/onednn.h"
#include "ops/op.h"
#include "passes/passes.h"

/* Up to `max` live readers of value v (each node once); returns how many there are in total, or
 * -1 when v is a graph output. */
static int readers(frt_graph *g, int32_t v, frt_node **out, int max) {
    if (v < 0 || g->values[v].is_output) return -1;
    int n = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_node *nd = &g->nodes[i];
        if (nd->dead) continue;
        for (int k = 0; k < nd->n_in + nd->n_cap; k++)
            if (nd->in[k] == v) {
                if (n < max) out[n] = nd;
                n++;
                break;
            }
    }
    return n;
}

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
    int nr = readers(g, y, rd, 2);
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
        if (readers(g, f->out[0], fr, 1) != 1) continue;
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

/* ---- MobileNetV2's inverted-residual block -> flatrt::InvertedResidual (ops/invres.c) ----
 *
 *   E = Conv 1x1 (X, We[, Be]) act A;  D = Conv 3x3 depthwise (E, Wd[, Bd]) act A;
 *   Y = Conv 1x1 (D, Wp[, Bp])  or  FusedConv (D, Wp, Bp, Z)  (no activation)
 *     -> Y = InvertedResidual(X, We, Be, Wd, Bd, Wp, Bp[, Z]) act A
 *
 * A none, Relu or Clip, the same on both (kind and bounds); weights constant; 1x1 convs of stride
 * 1, no pads, group 1; the depthwise one 3x3, group E, stride 1 or 2, dilation 1, pads <= 2, no
 * auto_pad; E and D read only by the pattern and not graph outputs; float32, shapes known. Only
 * where the oneDNN provider runs the node (enabled, AVX2 tier: its nChw8c row-strip kernel,
 * onednn/irconv.c) and the expanded image E is at least FRT_FUSE_IR_MIN_KB of one image. The
 * depthwise node becomes the fused one (its attributes describe the 3x3 conv), the other two
 * die.
 *
 * Off by default: FRT_FUSE_IR=1 (read at load) turns it on. On the Zen 3 host (session 13) the
 * strip kernel was no faster than the three unfused steps: the blocked 1x1 and depthwise loops
 * run at 80-97 GFLOP/s from L3 already, and on strips of a few rows they lose 5-15% (in-process
 * microbenchmark, min of 30: features.2 767 vs 750 us, features.3 615 vs 574; whole model
 * pair_bench FRT_FUSE_IR=0 against 1, 40 rounds on a loaded host: 0.95, restricted to the 112
 * and 56 maps 0.98-1.00). Kept for a quieter host or a memory-bound one (2 threads sharing the
 * memory bus, smaller caches) to measure again. */
/* the least expanded image (one image's E H W floats) fused unless FRT_FUSE_IR_MIN_KB says */
#define FRT_FUSE_IR_MIN_KB_DEFAULT 0

static bool ints_are(const frt_node *n, const char *name, int64_t v, size_t want_n) {
    size_t cnt = 0;
    const int64_t *p = frt_attr_ints(n, name, &cnt);
    if (!p) return true;
    if (want_n && cnt != want_n) return false;
    for (size_t i = 0; i < cnt; i++)
        if (p[i] != v) return false;
    return true;
}

static bool plain_conv(const frt_node *n) {
    return n->n_out == 1 && n->n_in >= 2 && n->in[0] >= 0 && n->in[1] >= 0 &&
           !strcmp(frt_attr_string(n, "auto_pad", "NOTSET"), "NOTSET") &&
           ints_are(n, "dilations", 1, 0);
}

static bool const_w(const frt_graph *g, int32_t v, int64_t d0, int64_t d1, int64_t k) {
    const frt_ir_value *w = &g->values[v];
    return w->kind == FRT_VALUE_CONST && w->v.data && w->v.dtype == FRT_FLOAT32 &&
           w->v.rank == 4 && (d0 < 0 || w->v.dims[0] == d0) && (d1 < 0 || w->v.dims[1] == d1) &&
           w->v.dims[2] == k && w->v.dims[3] == k;
}

static bool known4(const frt_graph *g, int32_t v) {
    const frt_value *x = &g->values[v].v;
    if (x->dtype != FRT_FLOAT32 || x->rank != 4) return false;
    for (int i = 0; i < 4; i++)
        if (x->dims[i] < 0) return false;
    return true;
}

/* v is read by exactly one live node input and is not a graph output */
static bool single_use(frt_graph *g, int32_t v) {
    frt_node *rd[2];
    return g->values[v].n_uses == 1 && readers(g, v, rd, 2) == 1;
}

static int fuse_invres_at(frt_graph *g, frt_arena *arena, frt_node *dw, int64_t min_bytes,
                          frt_status *st) {
    if (!is_op(dw, "", "Conv") || !plain_conv(dw) || dw->n_in > 3) return 0;
    int a = dw->act.kind;
    if (a != FRT_ACT_NONE && a != FRT_ACT_RELU && a != FRT_ACT_CLIP) return 0;
    int32_t e = dw->in[0], d = dw->out[0];
    if (e < 0 || d < 0 || !known4(g, e) || !known4(g, d)) return 0;
    int64_t E = g->values[e].v.dims[1];
    if (frt_attr_int(dw, "group", 1) != E || !const_w(g, dw->in[1], E, 1, 3)) return 0;
    size_t n = 0;
    const int64_t *ks = frt_attr_ints(dw, "kernel_shape", &n);
    if (ks && (n != 2 || ks[0] != 3 || ks[1] != 3)) return 0;
    const int64_t *sv = frt_attr_ints(dw, "strides", &n);
    if (sv && (n != 2 || sv[0] != sv[1] || (sv[0] != 1 && sv[0] != 2))) return 0;
    const int64_t *pv = frt_attr_ints(dw, "pads", &n);
    if (pv && n != 4) return 0;
    for (size_t i = 0; pv && i < 4; i++)
        if (pv[i] < 0 || pv[i] > 2) return 0;
    /* the expand conv */
    int32_t ep = g->values[e].producer;
    if (ep < 0 || !single_use(g, e)) return 0;
    frt_node *ex = &g->nodes[ep];
    if (ex->dead || !is_op(ex, "", "Conv") || !plain_conv(ex) || ex->n_in > 3 ||
        (int)ex->act.kind != a || (a == FRT_ACT_CLIP && (ex->act.lo != dw->act.lo ||
                                                    ex->act.hi != dw->act.hi)) ||
        frt_attr_int(ex, "group", 1) != 1 || !ints_are(ex, "strides", 1, 0) ||
        !ints_are(ex, "pads", 0, 0) || !known4(g, ex->in[0]) || !const_w(g, ex->in[1], E, -1, 1))
        return 0;
    int64_t C = g->values[ex->in[0]].v.dims[1];
    if (g->values[ex->in[1]].v.dims[1] != C) return 0;
    if (E * g->values[e].v.dims[2] * g->values[e].v.dims[3] * (int64_t)sizeof(float) < min_bytes)
        return 0;
    /* the project conv */
    frt_node *rd[1];
    if (!single_use(g, d) || readers(g, d, rd, 1) != 1) return 0;
    frt_node *pj = rd[0];
    bool fused = is_op(pj, "flatrt", "FusedConv");
    if (!(is_op(pj, "", "Conv") || fused) || !plain_conv(pj) || pj->in[0] != d ||
        pj->act.kind != FRT_ACT_NONE || frt_attr_int(pj, "group", 1) != 1 ||
        !ints_are(pj, "strides", 1, 0) || !ints_are(pj, "pads", 0, 0) ||
        !const_w(g, pj->in[1], -1, E, 1) || !known4(g, pj->out[0]))
        return 0;
    if ((fused && (pj->n_in != 4 || pj->in[3] < 0)) || (!fused && pj->n_in > 3)) return 0;
    for (int i = 2; i < 3; i++) {
        /* biases: constant vectors of the conv's output channels, or omitted */
        const frt_node *cv[3] = {ex, dw, pj};
        for (int j = 0; j < 3; j++) {
            int32_t b = cv[j]->n_in > i ? cv[j]->in[i] : -1;
            if (b < 0) continue;
            const frt_ir_value *bv = &g->values[b];
            if (bv->kind != FRT_VALUE_CONST || !bv->v.data || bv->v.dtype != FRT_FLOAT32 ||
                bv->v.rank != 1)
                return 0;
        }
    }
    if (!FRT_OP_BUILT(InvertedResidual) ||
        !frt_op_probe(FRT_DOMAIN_INTERNAL, "InvertedResidual", dw->opset))
        return 0;
    int32_t *nin = frt_arena_array(arena, 8, sizeof(int32_t));
    if (!nin) {
        *st = frt_error(FRT_ERR_NO_MEMORY, "out of memory fusing an inverted-residual block");
        return -1;
    }
    nin[0] = ex->in[0];
    nin[1] = ex->in[1];
    nin[2] = ex->n_in > 2 ? ex->in[2] : -1;
    nin[3] = dw->in[1];
    nin[4] = dw->n_in > 2 ? dw->in[2] : -1;
    nin[5] = pj->in[1];
    nin[6] = pj->n_in > 2 ? pj->in[2] : -1;
    nin[7] = fused ? pj->in[3] : -1;
    int32_t y = pj->out[0], self = (int32_t)(dw - g->nodes);
    dw->in = nin;
    dw->n_in = fused ? 8 : 7;
    dw->domain = "flatrt";
    dw->op_type = "InvertedResidual";
    frt_op_created(dw->domain, dw->op_type, dw->opset);
    /* E and D lose their producers and readers; Y is the fused node's */
    g->values[e].producer = -1;
    g->values[e].n_uses = 0;
    g->values[d].producer = -1;
    g->values[d].n_uses = 0;
    dw->out[0] = y;
    g->values[y].producer = self;
    ex->dead = true;
    pj->dead = true;
    return 2;
}

int frt_pass_fuse_invres(frt_graph *g, frt_arena *arena, frt_status *st) {
    const char *on = getenv("FRT_FUSE_IR");
    if (!on || strcmp(on, "1") != 0 || !frt_onednn_enabled() || frt_cpu_tier() != FRT_ISA_AVX2)
        return 0;
    const char *mk = getenv("FRT_FUSE_IR_MIN_KB");
    int64_t min_bytes = (mk && *mk ? atoll(mk) : FRT_FUSE_IR_MIN_KB_DEFAULT) * 1024;
    int removed = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        frt_node *n = &g->nodes[i];
        if (n->dead) continue;
        int r = fuse_invres_at(g, arena, n, min_bytes, st);
        if (r < 0) return -1;
        removed += r;
    }
    return removed;
}
