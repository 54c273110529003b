/* Operator interface: what every operator family implements, and helpers they share.
 *
 * Each ONNX op type has an frt_op_def with two functions:
 *
 *   infer(ctx)       dtype and shape inference. Sets out[i]->dtype, ->rank, ->dims (and numel via
 *                    frt_op_set_shape). Called at load with the IR's values, where a dim may be -1
 *                    (unknown: propagate -1, check only what is known), and again by each runtime
 *                    whenever input shapes change, with every dim known. Input data is available
 *                    (in[i]->data != NULL) for constants at load, and at reshape for constants and
 *                    for values computed while resolving shapes (shape subgraphs). infer must not
 *                    allocate and must not write out[i]->data.
 *
 *   select(ctx, k)   kernel selection, once at load, after infer. Sees the node, its attributes,
 *                    dtypes, load-time shapes (dims may be -1) and constant inputs, and fills k with
 *                    a kernel specialized for them. Parameters and transformed weights go into
 *                    ctx->arena (they live as long as the model and are shared by all runtimes, so
 *                    a kernel never writes them). Returns FRT_ERR_UNSUPPORTED (via frt_op_fail) for
 *                    configurations it does not handle.
 *
 * A kernel runs with all output values already shaped (by infer) and backed by memory; it reads
 * input data and dims from x->values and writes output data only. It must not keep state between
 * calls. It returns FRT_OK, or an error via frt_step_fail for data it cannot handle (an index out
 * of range).
 */
#ifndef FRT_OPS_OP_H
#define FRT_OPS_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "util/error.h"

struct frt_threadpool;
typedef struct frt_step frt_step;

typedef struct frt_exec {
    frt_value *values;           /* the runtime's value array, indexed by value id */
    void *scratch;               /* this step's scratch memory (k.scratch bytes), 64-aligned */
    struct frt_threadpool *tp;   /* intra-op pool; NULL = run on the calling thread */
} frt_exec;

typedef frt_status (*frt_kernel_fn)(const frt_step *s, frt_exec *x);
/* Scratch bytes the kernel needs for the current shapes in values (outputs already shaped). */
typedef size_t (*frt_scratch_fn)(const frt_step *s, const frt_value *values);

enum {
    FRT_K_VIEW = 1u << 0,       /* output 0 aliases input 0 (same bytes, new shape); fn is NULL */
    FRT_K_SHAPE_ONLY = 1u << 1, /* reads only the dims of its inputs, never their data (Shape) */
    FRT_K_INPLACE = 1u << 2     /* output 0 may share memory with input 0 (elementwise, same size) */
};

typedef struct frt_kernel {
    const char *name;            /* static string, e.g. "conv_1x1_gemm_avx2"; shown in profiles */
    frt_kernel_fn fn;
    const void *params;          /* immutable, in the model arena; may be NULL */
    frt_scratch_fn scratch;      /* may be NULL: no scratch */
    uint32_t flags;
    /* Bit i set: the kernel made its own copy of constant input i at select (packed weights) and
     * never reads that input's data again, so the model may release the original. */
    uint32_t const_copied;
} frt_kernel;

struct frt_step {
    frt_kernel k;
    const int32_t *in;           /* value ids, -1 for omitted optional inputs */
    const int32_t *out;
    int32_t n_in, n_out;
    int32_t node;                /* IR node id (for messages and profiles) */
    const frt_node *ir;          /* the IR node itself */
};

typedef struct frt_op_ctx {
    const frt_node *node;
    int64_t opset;               /* == node->opset */
    int32_t n_in, n_out;
    frt_value **in;              /* n_in entries; NULL for an omitted optional input */
    frt_value **out;
    frt_arena *arena;            /* select only (NULL in infer) */
} frt_op_ctx;

typedef struct frt_op_def {
    const char *op_type;
    frt_status (*infer)(frt_op_ctx *c);
    frt_status (*select)(frt_op_ctx *c, frt_kernel *k);
} frt_op_def;

/* Each family file defines one array, terminated by an entry with op_type NULL. */
extern const frt_op_def frt_ops_elementwise[]; /* Add Sub Mul Div */
extern const frt_op_def frt_ops_activation[];  /* Relu Clip Sigmoid Tanh Softmax Neg */
extern const frt_op_def frt_ops_cast[];        /* Cast */
extern const frt_op_def frt_ops_gemm[];        /* Gemm MatMul */
extern const frt_op_def frt_ops_conv[];        /* Conv */
extern const frt_op_def frt_ops_pool[];        /* MaxPool AveragePool GlobalAveragePool */
extern const frt_op_def frt_ops_norm[];        /* BatchNormalization */
extern const frt_op_def frt_ops_tensor[];      /* Concat Transpose Gather Slice Shape Constant */
extern const frt_op_def frt_ops_view[];        /* Reshape Flatten Squeeze Unsqueeze Identity Dropout */
extern const frt_op_def frt_ops_pad[];         /* Pad */

/* Registry lookup by (domain, op_type); NULL if flatrt has no such op. */
const frt_op_def *frt_op_find(const char *domain, const char *op_type);

/* ---- helpers for op implementations (src/ops/common.c) ---- */

/* Fails with "node '<name>' (<op>): <message>". Returns s. */
frt_status frt_op_fail(const frt_op_ctx *c, frt_status s, const char *fmt, ...) FRT_PRINTF(3, 4);
frt_status frt_step_fail(const frt_step *s, frt_status st, const char *fmt, ...) FRT_PRINTF(3, 4);

/* Attribute lookup on the node; dflt when absent. A present attribute of the wrong type is
 * treated as absent by these getters; frt_op_check_attr reports it instead. */
const frt_onnx_attr *frt_attr_find(const frt_node *n, const char *name);
int64_t frt_attr_int(const frt_node *n, const char *name, int64_t dflt);
float frt_attr_float(const frt_node *n, const char *name, float dflt);
const char *frt_attr_string(const frt_node *n, const char *name, const char *dflt);
/* INTS attribute: returns the array and sets *count, or NULL (count 0) when absent. */
const int64_t *frt_attr_ints(const frt_node *n, const char *name, size_t *count);
const float *frt_attr_floats(const frt_node *n, const char *name, size_t *count);

/* Sets dtype, rank and dims of v and recomputes numel. */
void frt_op_set_shape(frt_value *v, int32_t dtype, int32_t rank, const int64_t *dims);

/* Checks n_in within [lo, hi] and n_out within [olo, ohi]; the message names the op. */
frt_status frt_op_check_arity(const frt_op_ctx *c, int lo, int hi, int olo, int ohi);
/* Checks that input i is present with the given dtype (or any dtype when dtype == 0). */
frt_status frt_op_check_input(const frt_op_ctx *c, int i, int32_t dtype);

/* Multidirectional (numpy) broadcasting of a and b into out (rank = max rank).
 * Unknown (-1) dims: 1 vs ? -> ?, n vs ? -> n. Fails (FRT_ERR_SHAPE, message) on a mismatch. */
frt_status frt_broadcast_shape(const frt_op_ctx *c, const frt_value *a, const frt_value *b,
                               int32_t *rank, int64_t *dims);

/* Normalizes an axis in [-rank, rank) to [0, rank); returns -1 when out of range. */
int frt_norm_axis(int64_t axis, int rank);

/* Reads element i of an integer tensor (INT32 or INT64) as int64. */
int64_t frt_value_get_int(const frt_value *v, int64_t i);

#endif
