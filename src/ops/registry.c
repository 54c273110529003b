/* Registry: op type -> frt_op_def. Consulted at load time only; steps keep kernel pointers. */
#include <stdbool.h>
#include <string.h>

#include "op.h"

static const frt_op_def *const families[] = {
    frt_ops_elementwise, frt_ops_activation, frt_ops_cast,   frt_ops_gemm, frt_ops_conv,
    frt_ops_pool,        frt_ops_norm,       frt_ops_tensor, frt_ops_view, frt_ops_pad,
};

/* Ops that passes create and that no model may use: found only in the "flatrt" domain. */
static bool is_internal(const char *op_type) { return strcmp(op_type, "FusedConv") == 0; }

const frt_op_def *frt_op_find(const char *domain, const char *op_type) {
    bool internal = domain && strcmp(domain, "flatrt") == 0;
    if (!internal && domain && domain[0] && strcmp(domain, "ai.onnx") != 0) return NULL;
    if (internal != is_internal(op_type)) return NULL;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const frt_op_def *d = families[f]; d->op_type; d++)
            if (strcmp(d->op_type, op_type) == 0) return d;
    return NULL;
}
