#!/usr/bin/python3
"""FLOPs of convolution and matrix-product nodes in ONNX models, by kind.

Usage: /usr/bin/python3 bench/flops.py [--peak GFLOPS] [--ms NAME=MS ...] MODEL.onnx...

For each model: total GFLOP (one multiply-add counts 2), the share of each convolution kind
(kernel size, stride, depthwise/grouped) and of MatMul/Gemm, and, with --peak, the time those
FLOPs take at that rate with a direct algorithm (a lower bound for any runtime that does not
use Winograd/FFT-style algorithms). --ms NAME=MS (repeatable, NAME = the model's directory
name) prints the GFLOP/s a measured p50 corresponds to. Shapes come from ONNX shape inference
with the model's declared input shapes (symbolic dimensions count as 1).
"""
import argparse
import os
import sys
from collections import defaultdict

import onnx
from onnx import shape_inference


def dims(vi):
    return [d.dim_value if d.dim_value > 0 else 1 for d in vi.type.tensor_type.shape.dim]


def count(path):
    m = shape_inference.infer_shapes(onnx.load(path))
    g = m.graph
    shapes = {vi.name: dims(vi) for vi in list(g.value_info) + list(g.input) + list(g.output)}
    shapes.update({i.name: list(i.dims) for i in g.initializer})
    kinds = defaultdict(float)
    for n in g.node:
        attrs = {a.name: a for a in n.attribute}
        if n.op_type == "Conv":
            w = shapes.get(n.input[1])
            o = shapes.get(n.output[0])
            if not w or not o or len(w) != 4 or len(o) != 4:
                continue
            s = list(attrs["strides"].ints) if "strides" in attrs else [1, 1]
            grp = attrs["group"].i if "group" in attrs else 1
            kind = "conv %dx%d s%d%s" % (w[2], w[3], s[0],
                                        " depthwise" if grp > 1 and w[1] == 1 else
                                        " grouped" if grp > 1 else "")
            kinds[kind] += 2.0 * o[1] * o[2] * o[3] * w[1] * w[2] * w[3]
        elif n.op_type in ("MatMul", "Gemm"):
            a = shapes.get(n.input[0])
            o = shapes.get(n.output[0])
            if not a or not o:
                continue
            trans_a = n.op_type == "Gemm" and "transA" in attrs and attrs["transA"].i
            k = a[0] if trans_a else a[-1]
            numel = 1
            for d in o:
                numel *= d
            kinds[n.op_type] += 2.0 * numel * k
    return kinds


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--peak", type=float, default=0.0, help="GFLOP/s of the core (e.g. 222)")
    ap.add_argument("--ms", action="append", default=[], help="NAME=MS measured p50")
    args = ap.parse_args(argv)
    measured = {}
    for s in args.ms:
        name, _, ms = s.partition("=")
        measured[name] = float(ms)
    for path in args.models:
        name = os.path.basename(os.path.dirname(os.path.abspath(path)))
        kinds = count(path)
        total = sum(kinds.values())
        line = "%s: %.3f GFLOP" % (name, total / 1e9)
        if args.peak:
            line += ", %.1f ms at %.0f GFLOP/s" % (total / 1e9 / args.peak * 1e3, args.peak)
        if name in measured:
            line += ", measured %.2f ms = %.0f GFLOP/s" % (measured[name],
                                                          total / 1e9 / (measured[name] / 1e3))
        print(line)
        for kind, f in sorted(kinds.items(), key=lambda kv: -kv[1]):
            print("  %-22s %8.3f GFLOP %5.1f%%" % (kind, f / 1e9, 100.0 * f / total))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
