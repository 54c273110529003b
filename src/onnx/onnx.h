/* ONNX ModelProto decoded straight from the protobuf wire format, without libprotobuf.
 *
 * The decoder reads a byte buffer (usually a read-only memory map of the model file) and fills the
 * structs below. Every length, offset, tag, wire type and count is checked against the buffer; a
 * truncated, corrupt or hostile file yields FRT_ERR_MALFORMED with a message naming the field path
 * and byte offset, never an out-of-bounds read.
 *
 * Ownership: all structs, arrays and strings live in the frt_onnx_model's arena. Tensor payloads
 * given as raw_data point INTO the input buffer (zero copy) when suitably aligned for their dtype
 * (graph initializers also when misaligned: see `misaligned`); otherwise, and for the typed
 * repeated fields (float_data, int64_data, ...), the decoder copies
 * them into the arena. External data is mapped by frt_onnx_map_external(). The input buffer must
 * outlive the frt_onnx_model.
 */
#ifndef FRT_ONNX_ONNX_H
#define FRT_ONNX_ONNX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flatrt.h"
#include "util/arena.h"

typedef struct frt_onnx_graph frt_onnx_graph;

/* TensorProto */
typedef struct frt_onnx_tensor {
    const char *name;     /* "" if absent */
    int32_t dtype;        /* TensorProto.DataType (== frt_dtype numbering) */
    int32_t rank;         /* number of dims; <= FRT_MAX_RANK else the decoder fails */
    int64_t dims[FRT_MAX_RANK]; /* each >= 0, product checked not to overflow */
    int64_t numel;        /* product of dims (1 for rank 0) */
    /* Payload, row-major, numel * frt_dtype_size(dtype) bytes, aligned to the element size;
     * NULL only when numel == 0 or while external data is not yet mapped. */
    const void *data;
    size_t nbytes;
    bool in_place;        /* data points into the model buffer (or an external-data mapping) */
    /* Graph initializers only: raw_data that is not aligned for its dtype is left in place and
     * flagged here (data is then NOT aligned; read it with memcpy). The graph builder makes an
     * aligned copy that is dropped once compilation no longer needs it, so weights that passes
     * transform (BatchNorm folding) are never copied twice. */
    bool misaligned;
    /* external data (data_location == EXTERNAL) */
    bool external;
    const char *ext_location; /* relative path as written in the model */
    int64_t ext_offset;       /* 0 if not given */
    int64_t ext_length;       /* -1 if not given */
} frt_onnx_tensor;

typedef enum frt_onnx_attr_type {
    FRT_ATTR_UNDEFINED = 0,
    FRT_ATTR_FLOAT = 1,
    FRT_ATTR_INT = 2,
    FRT_ATTR_STRING = 3,
    FRT_ATTR_TENSOR = 4,
    FRT_ATTR_GRAPH = 5,
    FRT_ATTR_FLOATS = 6,
    FRT_ATTR_INTS = 7,
    FRT_ATTR_STRINGS = 8,
    FRT_ATTR_TENSORS = 9,
    FRT_ATTR_GRAPHS = 10,
    FRT_ATTR_TYPE_PROTO = 13     /* decoded into tp (Optional's `type`) */
} frt_onnx_attr_type;

struct frt_onnx_value_info;

typedef struct frt_onnx_attr {
    const char *name;
    frt_onnx_attr_type type; /* from the `type` field; if absent (old exporters), inferred from
                                which value field is present */
    float f;
    int64_t i;
    const char *s;           /* NUL-terminated copy; s_len excludes the NUL (s may hold NULs) */
    size_t s_len;
    frt_onnx_tensor *t;
    frt_onnx_graph *g;
    size_t n;                /* element count for the list kinds below */
    float *floats;
    int64_t *ints;
    const char **strings;
    frt_onnx_tensor *tensors;
    frt_onnx_graph *graphs;
    struct frt_onnx_value_info *tp; /* TYPE_PROTO: the type (name "") */
} frt_onnx_attr;

typedef struct frt_onnx_node {
    const char *name;        /* "" if absent */
    const char *op_type;
    const char *domain;      /* "" for the default domain ("ai.onnx" is normalized to "") */
    size_t n_inputs, n_outputs, n_attrs;
    const char **inputs;     /* "" marks an omitted optional input/output */
    const char **outputs;
    frt_onnx_attr *attrs;
} frt_onnx_node;

/* One dimension of a TensorShapeProto. */
typedef struct frt_onnx_dim {
    int64_t value;           /* >= 0 if dim_value given, else -1 */
    const char *param;       /* dim_param, or NULL */
} frt_onnx_dim;

/* TypeProto kinds (the field number of the oneof member that is set; 0: no type given). */
enum { FRT_ONNX_TYPE_NONE = 0, FRT_ONNX_TYPE_TENSOR = 1, FRT_ONNX_TYPE_SEQUENCE = 4,
       FRT_ONNX_TYPE_MAP = 5, FRT_ONNX_TYPE_SPARSE = 8, FRT_ONNX_TYPE_OPTIONAL = 9 };

/* ValueInfoProto (or a TypeProto attribute). has_type is set for the types flatrt holds: a
 * tensor, a sequence of tensors, an optional tensor or optional sequence of tensors; elem_type,
 * rank and dims then describe the (innermost) tensor type. Other types: has_type false, type_kind
 * says which. */
typedef struct frt_onnx_value_info {
    const char *name;
    bool has_type;
    int32_t type_kind;       /* FRT_ONNX_TYPE_* */
    int32_t inner_kind;      /* OPTIONAL: FRT_ONNX_TYPE_TENSOR or _SEQUENCE */
    int32_t elem_type;
    bool has_shape;          /* false: rank unknown */
    int32_t rank;
    frt_onnx_dim dims[FRT_MAX_RANK];
} frt_onnx_value_info;

struct frt_onnx_graph {
    const char *name;
    size_t n_nodes, n_initializers, n_inputs, n_outputs, n_value_info;
    frt_onnx_node *nodes;
    frt_onnx_tensor *initializers;
    frt_onnx_value_info *inputs;   /* may include initializers (old IR versions) */
    frt_onnx_value_info *outputs;
    frt_onnx_value_info *value_info;
};

typedef struct frt_onnx_opset {
    const char *domain;      /* "" for the default domain */
    int64_t version;
} frt_onnx_opset;

typedef struct frt_onnx_model {
    frt_arena arena;
    int64_t ir_version;
    const char *producer_name;
    const char *producer_version;
    size_t n_opsets;
    frt_onnx_opset *opsets;
    frt_onnx_graph *graph;
    /* external-data mappings made by frt_onnx_map_external (unmapped by frt_onnx_model_free) */
    size_t n_maps;
    struct frt_onnx_map { void *addr; size_t len; char *path; } *maps;
} frt_onnx_model;

/* Decodes a ModelProto. On success *out owns everything decoded (free with frt_onnx_model_free);
 * on failure *out is NULL and frt_last_error() says what and where. */
frt_status frt_onnx_decode(const void *buf, size_t len, frt_onnx_model **out);

/* Maps the external data of every tensor (initializers, Constant attributes, subgraphs) read-only
 * from files relative to base_dir, checking that offset+length lies inside the file and matches
 * the tensor's size, and that the location does not escape base_dir ("..", absolute paths).
 * Each distinct file is mapped once. */
frt_status frt_onnx_map_external(frt_onnx_model *m, const char *base_dir);

void frt_onnx_model_free(frt_onnx_model *m);

/* Default-domain opset version, or 0 if none is imported. */
int64_t frt_onnx_default_opset(const frt_onnx_model *m);

#endif
