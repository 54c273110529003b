#!/usr/bin/python3
"""pw_layers.py: one-layer ONNX models of 1x1 expand convolutions (EfficientNet-B0 /
MobileNetV3-Small shapes) for A/B timing of the oneDNN provider's 1x1 paths with trace_ab.py:
X -> depthwise 3x3 -> Relu (so the 1x1 conv's input is blocked, as in a model) -> 1x1 conv with
bias -> act, act one of silu (Sigmoid + Mul), hswish (HardSwish), none.

Usage: /usr/bin/python3 bench/pw_layers.py OUT_DIR [ACT...]   (writes ACT_C_M_H.onnx)
  e.g. /usr/bin/python3 bench/trace_ab.py OUT_DIR/silu_16_96_112.onnx 3 FRT_DNNL_OWN_PW=0 \\
       FRT_DNNL_OWN_PW=1 Conv_2
"""
import os
import onnx, numpy as np, sys
from onnx import helper, TensorProto, numpy_helper
def make(C, M, H, act, name):
    rng = np.random.default_rng(0)
    W = (rng.standard_normal((M, C, 1, 1)) / np.sqrt(C)).astype(np.float32)
    B = (rng.standard_normal(M) * 0.1).astype(np.float32)
    D = (rng.standard_normal((C, 1, 3, 3)) / 3).astype(np.float32)
    nodes = [helper.make_node('Conv', ['x', 'D'], ['x1'], kernel_shape=[3, 3], pads=[1,1,1,1], group=C),
             helper.make_node('Relu', ['x1'], ['x2']),
             helper.make_node('Conv', ['x2', 'W', 'B'], ['y'], kernel_shape=[1, 1])]
    out = 'y'
    if act == 'silu':
        nodes += [helper.make_node('Sigmoid', ['y'], ['s']), helper.make_node('Mul', ['y', 's'], ['z'])]; out = 'z'
    elif act == 'hswish':
        nodes += [helper.make_node('HardSwish', ['y'], ['z'])]; out = 'z'
    # a following depthwise-ish consumer is not needed; add Relu-free output
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, C, H, H])],
                          [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, M, H, H])],
                          [numpy_helper.from_array(D, 'D'), numpy_helper.from_array(W, 'W'), numpy_helper.from_array(B, 'B')])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 14)])
    onnx.save(m, os.path.join(sys.argv[1], name + '.onnx'))
ACTS = sys.argv[2:] or ['silu','hswish']
shapes = [(16,96,112),(24,144,56),(40,240,28),(80,480,14),(112,672,14),(192,1152,7),(320,1280,7),(32,192,28),(16,64,56),(24,88,28),(24,96,28),(40,240,14),(40,120,14),(48,144,14),(48,288,14),(96,576,7),(576,1024,1)]
for C, M, H in shapes:
    for act in ACTS:
        make(C, M, H, act, '%s_%d_%d_%d' % (act, C, M, H))
