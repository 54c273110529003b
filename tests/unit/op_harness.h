/* Runs one operator outside a model, through the same infer -> select -> infer -> kernel path that
 * compile and the runtime use. For kernel tests against naive references. */
#ifndef FRT_TEST_OP_HARNESS_H
#define FRT_TEST_OP_HARNESS_H

#include "ops/op.h"

/* Inputs: dtype, rank, dims and data set (data may be NULL for omitted optional inputs given as
 * rank -2... use the `present` mask instead). Bit i of const_mask makes input i a constant at
 * select time (as an initializer would be); other inputs are seen by select with their shapes
 * (or all dims -1 when unknown_dims is set, to test dynamic-shape selection).
 * On success each outputs[i] has its shape set and data malloc'ed (free with free()).
 * kernel_name (may be NULL) receives the chosen kernel's name (a copy, valid until the next call). */
typedef struct frt_test_op {
    const char *op_type;
    int64_t opset;                 /* 0 -> 17 */
    const frt_onnx_attr *attrs;
    size_t n_attrs;
    frt_value *inputs;             /* n_in entries */
    int n_in;
    unsigned absent_mask;          /* bit i: input i omitted (optional) */
    unsigned const_mask;
    int unknown_dims;              /* select sees non-constant inputs with all dims -1 */
    frt_act act;                   /* fused activation to request */
    int n_out;
    int n_threads;                 /* 0/1 serial */
    int isa;                       /* ISA tier select may use: 0 = frt_cpu_tier() (the host's,
                                      capped by FRT_ISA); FRT_TEST_ISA(t) = min(t, that) */
    int weights_precision;         /* frt_options.weights_precision select sees (0 fp32) */
} frt_test_op;

#define FRT_TEST_ISA(tier) ((int)(tier) + 1)

frt_status frt_test_run_op(const frt_test_op *op, frt_value *outputs, const char **kernel_name);

/* Attribute builders (no allocation; names and arrays are borrowed). */
frt_onnx_attr frt_test_attr_int(const char *name, int64_t v);
frt_onnx_attr frt_test_attr_float(const char *name, float v);
frt_onnx_attr frt_test_attr_ints(const char *name, const int64_t *v, size_t n);
frt_onnx_attr frt_test_attr_floats(const char *name, const float *v, size_t n);
frt_onnx_attr frt_test_attr_string(const char *name, const char *s);

/* A value with the given dtype, shape and borrowed data. */
frt_value frt_test_value(int32_t dtype, int rank, const int64_t *dims, void *data);

#endif
