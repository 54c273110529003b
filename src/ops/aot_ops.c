/* Ahead-of-time programs: the ops with a save function (full builds) and a load function (AOT
 * builds) in this build (src/ops/aot.h). */
#include "aot.h"

#if FRT_AOT_SAVE || FRT_AOT_LOAD

#if FRT_AOT_SAVE && FRT_AOT_LOAD
#define AOT_FNS(fam) frt_aot_save_##fam, frt_aot_load_##fam
#elif FRT_AOT_SAVE
#define AOT_FNS(fam) frt_aot_save_##fam, NULL
#else
#define AOT_FNS(fam) NULL, frt_aot_load_##fam
#endif

const frt_aot_op frt_aot_ops[] = {
#if FRT_OP_BUILT(Gemm)
    {"Gemm", AOT_FNS(gemm)},
#endif
#if FRT_OP_BUILT(MatMul)
    {"MatMul", AOT_FNS(matmul)},
#endif
#if FRT_OP_BUILT(Transpose)
    {"Transpose", AOT_FNS(transpose)},
#endif
#if FRT_OP_BUILT(Concat)
    {"Concat", AOT_FNS(concat)},
#endif
#if FRT_OP_BUILT(Add)
    {"Add", AOT_FNS(arith)},
#endif
#if FRT_OP_BUILT(Sub)
    {"Sub", AOT_FNS(arith)},
#endif
#if FRT_OP_BUILT(Mul)
    {"Mul", AOT_FNS(arith)},
#endif
#if FRT_OP_BUILT(Div)
    {"Div", AOT_FNS(arith)},
#endif
#if FRT_OP_BUILT(Relu)
    {"Relu", AOT_FNS(unary)},
#endif
#if FRT_OP_BUILT(Sigmoid)
    {"Sigmoid", AOT_FNS(unary)},
#endif
#if FRT_OP_BUILT(Tanh)
    {"Tanh", AOT_FNS(unary)},
#endif
#if FRT_OP_BUILT(Clip)
    {"Clip", AOT_FNS(unary)},
#endif
    {NULL, NULL, NULL},
};

#endif
