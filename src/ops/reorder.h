/* Reorder: converts a tensor between layouts (see frt_layout in ir/ir.h). Not an ONNX op and not
 * in the registry: compile inserts reorder steps ("flatrt::Reorder") where a producer's output
 * layout differs from the layout a reader needs, and before non-plain graph outputs. */
#ifndef FRT_OPS_REORDER_H
#define FRT_OPS_REORDER_H

#include "op.h"

/* infer: output = input's dtype and dims (its layout is the one compile gave the output value). */
extern const frt_op_def frt_op_reorder;
/* The kernel converting input 0 (in its layout) into output 0 (in its layout). */
frt_kernel frt_reorder_kernel(void);

#endif
