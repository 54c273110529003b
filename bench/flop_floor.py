#!/usr/bin/python3
"""flop_floor.py: a model's convolution and GEMM FLOPs by kind, and the time they take at a given
FMA peak, to tell how far a runtime's p50 is from the arithmetic limit of the host.

Usage:
  /usr/bin/python3 bench/flop_floor.py [-p PEAK_GFLOPS] [-d MODELS_DIR] MODEL[=ORT_P50_US] ...

MODELS_DIR defaults to build/models (MODEL/model.onnx). PEAK_GFLOPS defaults to 100, the fp32 FMA
peak of one Zen 3 core at AVX2 (../shared/docs/limits.md). Kinds: 1x1 convolutions, 3x3 stride-1
(the ones Winograd can shorten), 3x3 stride-2, depthwise/grouped, other convolutions, Gemm/MatMul
with a constant B. A FLOP is one multiply or one add (2 per multiply-add). With =ORT_P50_US the
last column is floor / ORT p50: the lowest flatrt/ORT ratio direct (non-Winograd) arithmetic at
the peak can reach.
"""
import argparse
import onnx
from onnx import shape_inference


def kinds(path):
    m = shape_inference.infer_shapes(onnx.load(path))
    shape = {}
    for v in list(m.graph.value_info) + list(m.graph.output) + list(m.graph.input):
        shape[v.name] = [d.dim_value for d in v.type.tensor_type.shape.dim]
    init = {t.name: list(t.dims) for t in m.graph.initializer}
    tot = dict.fromkeys(("1x1", "3x3s1", "3x3s2", "dw", "other", "gemm"), 0)
    for n in m.graph.node:
        if n.op_type == "Conv" and n.input[1] in init and shape.get(n.output[0]):
            w, out = init[n.input[1]], shape[n.output[0]]
            a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
            s = (a.get("strides") or [1])[0]
            f = 2 * out[0] * out[1] * out[2] * out[3] * w[1] * w[2] * w[3]
            if a.get("group", 1) > 1:
                k = "dw"
            elif w[2] == 1 and w[3] == 1:
                k = "1x1"
            elif w[2] == 3 and w[3] == 3:
                k = "3x3s1" if s == 1 else "3x3s2"
            else:
                k = "other"
            tot[k] += f
        elif n.op_type in ("Gemm", "MatMul") and n.input[1] in init:
            a_shape = shape.get(n.input[0]) or [1]
            rows = 1
            for d in a_shape[:-1]:
                rows *= max(d, 1)
            w = init[n.input[1]]
            tot["gemm"] += 2 * rows * w[0] * w[1]
    return tot


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-p", type=float, default=100.0, help="FMA peak, GFLOP/s")
    ap.add_argument("-d", default="build/models")
    ap.add_argument("models", nargs="+")
    o = ap.parse_args()
    print("%-16s %8s  %-52s %10s %10s" % ("model", "GFLOP", "share by kind", "floor ms", "floor/ORT"))
    for spec in o.models:
        name, _, ort = spec.partition("=")
        tot = kinds("%s/%s/model.onnx" % (o.d, name))
        t = sum(tot.values())
        share = " ".join("%s %.0f%%" % (k, 100.0 * v / t) for k, v in tot.items() if v)
        floor_ms = t / (o.p * 1e6)
        ratio = "%.2f" % (floor_ms * 1e3 / float(ort)) if ort else "-"
        print("%-16s %8.3f  %-52s %10.2f %10s" % (name, t / 1e9, share, floor_ms, ratio))


if __name__ == "__main__":
    main()
