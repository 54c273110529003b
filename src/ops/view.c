/* Reshape Flatten Squeeze Unsqueeze Identity Dropout. (placeholder: not implemented yet) */
#include "op.h"

const frt_op_def frt_ops_view[] = {{0}};
