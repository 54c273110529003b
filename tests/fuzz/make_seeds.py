#!/usr/bin/python3
"""Writes small hand-made ONNX models as fuzz seeds: one per op family, shaped so that the SIMD
kernels (8/16 channels, depthwise, strided, padded) and the shape subgraphs get exercised.

Usage: /usr/bin/python3 tests/fuzz/make_seeds.py OUT_DIR

The committed seeds in tests/fuzz/corpus/{pipeline,onnx_decode}/seed_*.onnx were made with it;
they are a few hundred bytes each, so a mutated copy still loads and runs in milliseconds.
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
rng = np.random.default_rng(7)


def w(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.5, name)


def i64(name, vals):
    return numpy_helper.from_array(np.array(vals, dtype=np.int64), name)


def save(out, name, nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="seed")
    with open(os.path.join(out, "seed_" + name + ".onnx"), "wb") as fh:
        fh.write(m.SerializeToString())


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def main(out):
    os.makedirs(out, exist_ok=True)
    N = helper.make_node
    # Conv (padded, strided) + BatchNorm + Relu: fused conv path; 8 channels for the AVX2 kernel
    save(out, "conv_bn_relu", [
        N("Conv", ["x", "cw", "cb"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        N("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"]),
        N("Relu", ["n"], ["y"])],
        [vi("x", F, ["N", 3, 6, 6])], [vi("y", F, None)],
        [w("cw", 8, 3, 3, 3), w("cb", 8), w("s", 8), w("b", 8), w("m", 8),
         numpy_helper.from_array(np.ones(8, np.float32), "v")])
    # depthwise conv + Clip (ReLU6) + residual Add: FusedConv with a residual
    save(out, "depthwise_residual", [
        N("Conv", ["x", "dw"], ["d"], group=8, pads=[1, 1, 1, 1]),
        N("Clip", ["d", "lo", "hi"], ["r"]),
        N("Conv", ["r", "pw"], ["p"]),
        N("Add", ["p", "x"], ["y"])],
        [vi("x", F, [1, 8, 5, 5])], [vi("y", F, None)],
        [w("dw", 8, 1, 3, 3), w("pw", 8, 8, 1, 1),
         numpy_helper.from_array(np.array(0, np.float32), "lo"),
         numpy_helper.from_array(np.array(6, np.float32), "hi")])
    # pools
    save(out, "pools", [
        N("MaxPool", ["x"], ["a"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        N("AveragePool", ["a"], ["b"], kernel_shape=[2, 2], count_include_pad=1, pads=[0, 0, 1, 1]),
        N("GlobalAveragePool", ["b"], ["y"])],
        [vi("x", F, [1, 4, 7, 7])], [vi("y", F, None)])
    # Gemm / MatMul / Softmax / Sigmoid / Tanh
    save(out, "gemm_softmax", [
        N("Flatten", ["x"], ["f"], axis=1),
        N("Gemm", ["f", "gw", "gb"], ["g"], transB=1, alpha=0.5, beta=1.0),
        N("Tanh", ["g"], ["t"]),
        N("MatMul", ["t", "mw"], ["mm"]),
        N("Sigmoid", ["mm"], ["s"]),
        N("Softmax", ["s"], ["y"], axis=-1)],
        [vi("x", F, ["B", 2, 3])], [vi("y", F, None)],
        [w("gw", 16, 6), w("gb", 16), w("mw", 16, 5)])
    # broadcasting arithmetic, Cast, Neg
    save(out, "elementwise", [
        N("Sub", ["x", "c"], ["a"]),
        N("Mul", ["a", "x"], ["b"]),
        N("Div", ["b", "c"], ["d"]),
        N("Neg", ["d"], ["e"]),
        N("Cast", ["e"], ["i"], to=TensorProto.INT32),
        N("Cast", ["i"], ["y"], to=TensorProto.FLOAT)],
        [vi("x", F, [2, 1, 3])], [vi("y", F, None)],
        [numpy_helper.from_array(np.array([[1.5], [2.0], [-3.0]], np.float32), "c")])
    # shape subgraph: Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Transpose, Slice, Pad
    save(out, "shape_ops", [
        N("Shape", ["x"], ["sh"]),
        N("Gather", ["sh", "zero"], ["n"], axis=0),
        N("Unsqueeze", ["n", "ax0"], ["n1"]),
        N("Concat", ["n1", "minus1"], ["ns"], axis=0),
        N("Reshape", ["x", "ns"], ["r"]),
        N("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
        N("Slice", ["t", "st", "en", "axs"], ["sl"]),
        N("Pad", ["sl", "pads"], ["p"], mode="reflect"),
        N("Squeeze", ["p", "ax0"], ["sq"]),
        N("Flatten", ["sq"], ["y"], axis=0),
        N("Relu", ["r"], ["z"])],
        [vi("x", F, ["batch", 3, 4])], [vi("y", F, None), vi("z", F, None)],
        [i64("zero", 0), i64("ax0", [0]), i64("minus1", [-1]), i64("st", [1]), i64("en", [3]),
         i64("axs", [2]), i64("pads", [0, 1, 1, 0, 1, 1])])
    # Concat of two convolution outputs (written into slices) + Gather over data
    save(out, "concat_gather", [
        N("Conv", ["x", "w1"], ["a"]),
        N("Conv", ["x", "w2"], ["b"], pads=[1, 1, 1, 1]),
        N("Concat", ["a", "b"], ["c"], axis=1),
        N("Gather", ["c", "idx"], ["y"], axis=1)],
        [vi("x", F, [1, 2, 4, 4])], [vi("y", F, None)],
        [w("w1", 3, 2, 1, 1), w("w2", 5, 2, 3, 3), i64("idx", [[0, 7], [2, -1]])])
    # integer inputs: int64 indices from the caller, Gather and int arithmetic
    save(out, "int_inputs", [
        N("Gather", ["table", "ids"], ["e"], axis=0),
        N("Add", ["ids", "ids"], ["i2"]),
        N("Cast", ["i2"], ["f"], to=TensorProto.FLOAT),
        N("Unsqueeze", ["f", "ax"], ["fu"]),
        N("Mul", ["e", "fu"], ["y"])],
        [vi("ids", I64, ["n"])], [vi("y", F, None)],
        [w("table", 3, 4), i64("ax", [1])])
    # old opset forms (attributes instead of inputs): Pad, Slice, Unsqueeze, Clip at opset 9/10
    save(out, "opset9", [
        N("Pad", ["x"], ["p"], pads=[0, 0, 1, 1, 0, 0, 1, 1], value=0.5),
        N("Clip", ["p"], ["c"], min=-0.5, max=0.5),
        N("Unsqueeze", ["c"], ["u"], axes=[0]),
        N("Dropout", ["u"], ["y"])],
        [vi("x", F, [1, 2, 3, 3])], [vi("y", F, None)], opset=9)


if __name__ == "__main__":
    main(sys.argv[1])
