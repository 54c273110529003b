/* Graph IR: the ONNX graph with names resolved to integer value ids.
 *
 * Values are numbered 0..n_values-1 and the same ids index a runtime's value array, so a step
 * refers to its tensors by index only. Nodes are kept in a topological order. Passes mark nodes
 * dead instead of removing them; compile skips dead nodes.
 */
#ifndef FRT_IR_IR_H
#define FRT_IR_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flatrt.h"
#include "onnx/onnx.h"
#include "util/arena.h"

struct frt_value;

/* Physical layout of a tensor's bytes. dims are always the logical (ONNX) dims; the layout says
 * how the elements are placed and how many bytes that takes (padding included). A value's layout
 * is fixed at load by the kernel that produces it; graph inputs, constants and graph outputs are
 * always plain. Layouts are immutable descriptors compared by address. */
typedef struct frt_layout {
    const char *name;            /* "nChw8c" */
    int32_t block;               /* channel block (dim 1) for blocked layouts, 0 otherwise */
    /* Bytes the layout needs for v's dtype and dims (v->rank >= 0, all dims known). */
    size_t (*nbytes)(const struct frt_value *v);
    /* Whether v's dtype/rank can be held in this layout (e.g. blocked: rank >= 3). */
    bool (*fits)(const struct frt_value *v);
    /* Conversions between this layout and plain for one tensor; dst and src have the same dtype
     * and dims, dst has its own storage of frt_value_nbytes(dst) bytes. Padding is written as 0. */
    void (*to_plain)(const struct frt_value *src, struct frt_value *dst);
    void (*from_plain)(const struct frt_value *src, struct frt_value *dst);
} frt_layout;

/* Row-major, no padding: every value unless a kernel declares otherwise. */
#define FRT_LAYOUT_PLAIN ((const frt_layout *)0)
/* NCHW with the channel dim split into blocks of 8 / 16, padded up to a multiple of the block:
 * element (n, c, h, w) of an [N, C, H, W...] tensor lives at
 * ((n * ceil(C/b) + c/b) * H*W... + spatial) * b + c%b. Rank >= 3. */
extern const frt_layout frt_layout_nchw8c;
extern const frt_layout frt_layout_nchw16c;

/* A tensor as kernels and shape inference see it. In the IR (load time) a dim may be -1
 * (unknown) and then numel is -1; in a runtime every dim is known. data is non-NULL for
 * constants at load time and for every value during a run. */
typedef struct frt_value {
    void *data;
    int64_t dims[FRT_MAX_RANK];
    int64_t numel;
    int32_t rank;  /* -1: unknown (load time only) */
    int32_t dtype; /* frt_dtype */
    const frt_layout *layout; /* FRT_LAYOUT_PLAIN (NULL) unless a kernel produces another */
    int32_t vtype; /* frt_vtype: FRT_VT_TENSOR (0) for tensors */
} frt_value;

/* What a value is. A sequence or optional value (vtype != FRT_VT_TENSOR) has no shape of its own:
 * dtype is its element dtype (0 if unknown), rank 0, numel 0, frt_value_nbytes 0 and
 * frt_shape_known true; during a run its data points to the frt_seq (src/ir/seq.h) that holds its
 * tensors, owned by the runtime (never planned in a slab). */
typedef enum frt_vtype {
    FRT_VT_TENSOR = 0,
    FRT_VT_SEQUENCE = 1,     /* sequence of tensors of one dtype */
    FRT_VT_OPT_TENSOR = 2,   /* optional tensor */
    FRT_VT_OPT_SEQUENCE = 3  /* optional sequence of tensors */
} frt_vtype;

typedef enum frt_value_kind {
    FRT_VALUE_INPUT = 0, /* graph input: data supplied by the caller, never written */
    FRT_VALUE_CONST = 1, /* initializer, Constant output or folded: data fixed at load */
    FRT_VALUE_NODE = 2,  /* produced by a node */
    FRT_VALUE_OUTER = 3  /* subgraph only: a value of an enclosing graph, read in place (bound
                            from the owner node's captured input `outer` at each execution) */
} frt_value_kind;

typedef struct frt_ir_value {
    const char *name;
    frt_value v;                 /* dtype/shape as inferred at load; data for constants */
    const char *dim_names[FRT_MAX_RANK]; /* symbolic dim names (graph inputs/outputs), or NULL */
    frt_value_kind kind;
    int32_t producer;            /* node id, or -1 */
    int32_t n_uses;              /* consumer inputs among live nodes (+1 per graph-output use) */
    int32_t outer;               /* FRT_VALUE_OUTER (or a constant captured from outside): index
                                    of the owner node's captured input it reads, else -1 */
    bool is_output;
    bool in_place;               /* constant data points into the model file */
} frt_ir_value;

/* Activation fused into a producing node by passes; kernels apply it to their output.
 *   RELU         max(x, 0)                     (lo = 0, hi = +inf)
 *   CLIP         min(max(x, lo), hi)
 *   SILU         x sigmoid(x)                  Conv only (fuse_cnn.c)
 *   HARDSWISH    x max(0, min(1, x/6 + 1/2))   Conv only
 *   HARDSIGMOID  max(0, min(1, alpha x + beta)) Conv only; alpha in lo, beta in hi
 *   SIGMOID      1 / (1 + e^-x)                Conv only
 * Kinds other than RELU and CLIP are fused only into Conv / FusedConv. */
typedef enum frt_act_kind {
    FRT_ACT_NONE = 0,
    FRT_ACT_RELU,
    FRT_ACT_CLIP,
    FRT_ACT_SILU,
    FRT_ACT_HARDSWISH,
    FRT_ACT_HARDSIGMOID,
    FRT_ACT_SIGMOID
} frt_act_kind;
typedef struct frt_act {
    frt_act_kind kind;
    float lo, hi; /* FRT_ACT_CLIP bounds (RELU: 0, +inf); FRT_ACT_HARDSIGMOID: alpha, beta */
} frt_act;

typedef struct frt_graph frt_graph;

typedef struct frt_node {
    const char *name;            /* never NULL; generated as "<op>_<index>" if the model has none */
    const char *op_type;
    const char *domain;
    int32_t n_in, n_out;
    int32_t *in;                 /* value ids; -1 for an omitted optional input. Followed by n_cap
                                    captured values: in[n_in .. n_in + n_cap) are the values of
                                    this graph that the node's subgraphs read from outside; they
                                    count as inputs of the node for order, uses and lifetimes. */
    int32_t *out;
    int32_t n_cap;
    int32_t n_sub;               /* subgraphs of GRAPH/GRAPHS attributes, in attribute order */
    frt_graph **sub;
    size_t n_attrs;
    const frt_onnx_attr *attrs;
    int64_t opset;               /* opset version of the node's domain */
    frt_act act;                 /* fused activation, FRT_ACT_NONE by default */
    /* storage precision of the node's constant weights (frt_weights_precision: 0 fp32, 1 fp16,
     * 2 bf16), set by compile from the options just before kernel selection (0 when folding) */
    int8_t wprec;
    bool dead;
} frt_node;

struct frt_graph {
    frt_arena *arena;            /* the model's arena */
    const char *path;            /* "" for the model's graph; "<path>/<node>/<attribute>" for a
                                    subgraph (messages) */
    const frt_graph *parent;     /* enclosing graph, NULL for the model's graph */
    int32_t owner;               /* node of the parent that owns this subgraph, -1 at the top */
    size_t n_values, cap_values;
    frt_ir_value *values;
    size_t n_nodes, cap_nodes;
    frt_node *nodes;
    size_t n_inputs, n_outputs;
    int32_t *inputs;             /* graph inputs, excluding initializers */
    int32_t *outputs;
    int64_t opset;               /* default domain */
    /* Constants in temporary heap buffers (aligned copies of misaligned initializers, weights
     * made by passes): released by frt_graph_release_temps once no live node reads them. */
    size_t n_temps, cap_temps;
    void **temps;
    int32_t *temp_vid;
    /* Set by the loader: told about constant bytes used in place from the model that nothing will
     * read again. Only the loader knows whether those bytes are a mapping it made (and may give
     * back to the OS) or the caller's buffer (which must never be touched). May be NULL. */
    void (*release_bytes)(void *ctx, const void *data, size_t nbytes);
    void *release_ctx;
};

/* Builds the IR from a decoded ONNX graph: resolves names, checks that every input of every node
 * is defined (graph input, initializer or an earlier/any node output), orders nodes
 * topologically (fails on cycles), and records declared shapes of inputs and outputs.
 * Subgraph attributes are built recursively into node->sub; a name a subgraph does not define is
 * looked up in the enclosing graphs and becomes an FRT_VALUE_OUTER value of the subgraph, captured
 * by the owner node (and by every enclosing owner in between). Subgraph inputs need a type; their
 * shape may be absent (rank -1). */
/* release/release_ctx become g->release_bytes/release_ctx (NULL: none); the builder already hands
 * it the mapped bytes of each misaligned initializer it copies, since the graph never reads them
 * again. */
frt_status frt_graph_build(const frt_onnx_model *m, frt_arena *arena,
                           void (*release)(void *ctx, const void *data, size_t nbytes),
                           void *release_ctx, frt_graph *g);

/* Values the node reads: its inputs followed by its captured outer values. */
static inline int32_t frt_node_n_reads(const frt_node *n) { return n->n_in + n->n_cap; }

/* Up to max live readers of value v in out[] (each node once, inputs and captured values);
 * returns how many there are in total, or -1 when v is a graph output (or v < 0). */
int frt_graph_readers(frt_graph *g, int32_t v, frt_node **out, int max);
/* Marks node n dead; its outputs lose their producer (-1) and their use counts. */
void frt_graph_kill_node(frt_graph *g, frt_node *n);

/* Adds a value; returns its id or -1 on allocation failure. name is copied. */
int32_t frt_graph_add_value(frt_graph *g, const char *name, frt_value_kind kind);

/* A 64-aligned heap buffer for the data of constant value vid, owned by the graph; NULL on
 * failure. */
void *frt_graph_temp_const(frt_graph *g, int32_t vid, size_t nbytes);
/* Frees temporary constants that no live node reads and that are not graph outputs; returns the
 * bytes still held. */
size_t frt_graph_release_temps(frt_graph *g);
/* Frees the temporary constants of g and of all its subgraphs. */
void frt_graph_free_temps(frt_graph *g);
/* Releases the memory behind constant vid now that nothing will read it (a pass replaced it):
 * frees its temporary copy, or hands in-place bytes to g->release_bytes. data becomes NULL. */
void frt_graph_drop_const(frt_graph *g, int32_t vid);

/* Value helpers */
int64_t frt_shape_numel(const int64_t *dims, int rank); /* -1 if any dim < 0 or on overflow */
bool frt_shape_known(const frt_value *v);                 /* rank >= 0 and all dims >= 0 */
/* Physical bytes of v in its layout (padding included): numel * dtype size for plain; 0 if the
 * shape is unknown or the dtype has no size. The one size function the planner uses. */
size_t frt_value_nbytes(const frt_value *v);
/* Name of a layout ("plain" for FRT_LAYOUT_PLAIN). */
const char *frt_layout_name(const frt_layout *l);
/* Sets dtype, rank and dims (the first min(rank, FRT_MAX_RANK) of dims; dims may be NULL when
 * rank <= 0) and recomputes numel (-1 when rank < 0, a dim is unknown or on overflow). */
void frt_value_set_shape(frt_value *v, int32_t dtype, int32_t rank, const int64_t *dims);
/* Makes v a sequence or optional value (vtype != FRT_VT_TENSOR) of element dtype `dtype`. */
void frt_value_set_container(frt_value *v, int32_t vtype, int32_t dtype);
/* "tensor", "sequence", "optional tensor", "optional sequence". */
const char *frt_vtype_name(int32_t vtype);
/* Formats "[1,3,224,224]" (unknown dims as ?) into buf; returns buf. */
const char *frt_shape_str(const frt_value *v, char *buf, size_t cap);
/* Formats n raw integers as "[2,0,-1]" (negative values printed as they are) into buf. */
const char *frt_ints_str(const int64_t *v, int n, char *buf, size_t cap);

/* Node id producing value id, or -1. */
static inline int32_t frt_graph_producer(const frt_graph *g, int32_t vid) {
    return vid < 0 ? -1 : g->values[vid].producer;
}

#endif
