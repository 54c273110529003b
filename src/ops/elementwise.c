/* Add Sub Mul Div. (placeholder: not implemented yet) */
#include "op.h"

const frt_op_def frt_ops_elementwise[] = {{0}};
