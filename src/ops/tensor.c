/* Concat Transpose Gather Slice Shape Constant. (placeholder: not implemented yet) */
#include "op.h"

const frt_op_def frt_ops_tensor[] = {{0}};
