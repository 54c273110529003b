/* Build features a selective build (cmake -DFRT_SELECT, docs/selective.md) may leave out, and the
 * selection file it was made from. Every layer may read these; the full build has them all. */
#ifndef FRT_UTIL_FEATURES_H
#define FRT_UTIL_FEATURES_H

#ifdef FRT_OPS_SELECTION
#include FRT_OPS_SELECTION
#endif

/* Half-precision weight storage (frt_options.weights_precision FP16 / BF16): the packing and
 * widening code of Conv, Gemm, MatMul and the fused products. A selective build whose trace never
 * loaded a model with it (feature half_weights) defines FRT_HALF_WEIGHTS_OFF in its selection
 * header: load refuses the option (src/runtime/model.c) and that code is compiled out. */
#ifdef FRT_HALF_WEIGHTS_OFF
#define FRT_HALF_WEIGHTS 0
#else
#define FRT_HALF_WEIGHTS 1
#endif

/* Sequence and optional values (feature sequences, recorded when a traced model has one): a
 * selective build without them refuses a model with such a value at load (src/onnx/decode.c,
 * src/compile/compile.c) and compiles the runtime's container handling out
 * (src/runtime/runtime.c). */
#ifdef FRT_SEQUENCES_OFF
#define FRT_SEQUENCES 0
#else
#define FRT_SEQUENCES 1
#endif

/* Steps shaped while running (src/compile/compile.c FRT_DEFER_*: an input that decides output
 * shapes known only at run, a kernel that sizes its outputs, sequence values). Only ops that
 * declare it (FRT_OP_SHAPE_IN, FRT_OP_DATA_SHAPE, FRT_OP_SEQ_VALUES in src/ops/ops.def) can make
 * one; a selective build with none of them defines FRT_DYNAMIC_STEPS_OFF, and the runtime's
 * deferred-step path (run-time shaping and its allocator, src/runtime/runtime.c) is compiled
 * out. */
#ifdef FRT_DYNAMIC_STEPS_OFF
#define FRT_DYNAMIC_STEPS 0
#else
#define FRT_DYNAMIC_STEPS 1
#endif

/* Subgraphs (GRAPH / GRAPHS attributes: If, Loop, Scan, SequenceMap; feature subgraphs, recorded
 * when a traced model has a node with one): a selective build without them refuses such an
 * attribute in the decoder (src/onnx/decode.c) and compiles the IR's and compile's subgraph
 * handling (outer-scope names, captured values, nested blocks) out. */
#ifdef FRT_SUBGRAPHS_OFF
#define FRT_SUBGRAPHS 0
#else
#define FRT_SUBGRAPHS 1
#endif

/* The selection file a selective build was made from (for messages that name it), or NULL in
 * the full build. */
const char *frt_selection_file(void);

#endif
