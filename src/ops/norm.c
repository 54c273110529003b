/* BatchNormalization. (placeholder: not implemented yet) */
#include "op.h"

const frt_op_def frt_ops_norm[] = {{0}};
