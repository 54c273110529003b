/* Graph passes over the IR, run by compile (src/compile/compile.c) in this order: constant folding
 * node by node during inference, use counts + dead-code elimination, fusion, and again use counts
 * + dead-code elimination. Passes mark nodes dead instead of removing them. Folding evaluates nodes
 * with their own kernels, so passes sit above ops in the layering (docs/architecture.md). */
#ifndef FRT_PASSES_PASSES_H
#define FRT_PASSES_PASSES_H

#include <stddef.h>
#include <stdint.h>

#include "flatrt.h"
#include "ir/ir.h"
#include "ops/op.h"
#include "util/arena.h"

/* Evaluates node `node` (definition def) once at load with its builtin kernel; the caller has
 * checked that its inputs are available (constants, or known shapes for FRT_OP_SHAPE_ONLY ops).
 * Its outputs become constants (data in arena) and it is marked dead. Returns 1 when folded, 0
 * when it cannot be (an output shape unknown), -1 on error with *st set. */
int frt_pass_fold_node(frt_graph *g, int32_t node, const frt_op_def *def, frt_arena *arena,
                       frt_status *st);
/* Fusion (src/passes/fuse.c). Returns the number of nodes it removed, or -1 on error with *st set;
 * bytes of weights it made are added to *transformed_bytes. */
int frt_pass_fuse(frt_graph *g, frt_arena *arena, size_t *transformed_bytes, frt_status *st);
/* Replaces each Loop that torch exports for nn.EmbeddingBag by a flatrt::EmbeddingBag node, in g
 * and all its subgraphs (src/passes/embedding_bag_fuse.c); runs on the IR before inference.
 * Returns the number of Loops replaced, or -1 on error with *st set. */
int frt_pass_embedding_bag(frt_graph *g, frt_status *st);
/* Moves loop-invariant nodes of Loop and Scan bodies in front of their Loop/Scan node, in g and
 * all its subgraphs, innermost first (src/passes/hoist.c); runs on the IR before inference. Only
 * nodes for which filter(user, node) is true move (the caller rejects nodes without a definition
 * and random ops). Returns the number of nodes moved, or -1 on error with *st set. */
int frt_pass_hoist(frt_graph *g, bool (*filter)(void *user, const frt_node *n), void *user,
                   frt_status *st);
/* CNN activation fusions into Conv / FusedConv node `conv` (src/passes/fuse_cnn.c), called by
 * frt_pass_fuse. Returns the number of nodes removed. */
int frt_pass_fuse_conv_act(frt_graph *g, frt_node *conv);
/* The squeeze of squeeze-and-excitation: a GlobalAveragePool of a grouped / depthwise Conv's
 * output (read by other nodes too) becomes the conv's second output, the node a
 * flatrt::ConvMean (src/passes/fuse_cnn.c). Returns the number of nodes removed, -1 on error
 * with *st set. */
int frt_pass_fuse_conv_mean(frt_graph *g, frt_arena *arena, frt_node *conv, frt_status *st);
/* Moves an AveragePool without pads (after an optional all-zero Pad) in front of the 1x1 Conv
 * node `conv` that feeds it (src/passes/fuse_pool.c), called by frt_pass_fuse. *swapped is set
 * when it did: the pool then sits at conv's index and the conv at the pool's. Returns the number
 * of nodes removed (the Pad). */
int frt_pass_pool_before_conv(frt_graph *g, frt_node *conv, bool *swapped);
/* Pad (constant zeros, spatial pads only) read only by an AveragePool without pads: folded into
 * the pool as its pads with count_include_pad = 1 (fuse_pool.c). Returns 1 when the Pad died. */
int frt_pass_pad_into_avgpool(frt_graph *g, frt_arena *arena, frt_node *pad);
/* Transformer fusions (src/passes/fuse_xf.c: LayerNorm, GELU, MatMul + bias [+ GELU] [+ residual]),
 * called by frt_pass_fuse. Returns the number of nodes removed, or -1 with *st set. */
int frt_pass_fuse_xf(frt_graph *g, frt_arena *arena, frt_status *st);
/* Channel shuffles ([Concat ->] Reshape -> Transpose(0, 2, 1, ..) -> Reshape [-> channel Slices /
 * Splits]) -> flatrt::ChannelShuffle (src/passes/fuse_shuffle.c), called by frt_pass_fuse. Returns
 * the number of nodes removed, or -1 with *st set. */
int frt_pass_fuse_shuffle(frt_graph *g, frt_arena *arena, frt_status *st);
/* Marks dead every node none of whose outputs is used; needs valid n_uses. */
void frt_pass_dce(frt_graph *g);
/* Recomputes n_uses of every value from the reads of the live nodes, captured reads (subgraphs)
 * included (+1 for graph outputs). */
void frt_graph_count_uses(frt_graph *g);

#endif
