#!/usr/bin/python3
"""layer_diff.py: flatrt's and ONNX Runtime's per-node times side by side, ranked by the loss.

Usage:
  FRT_PROFILE_ALL=1 build/flatrt bench M/model.onnx --input-dir M/in --profile > frt.txt
  node bench/ort_profile.js M 200 > ort.txt
  /usr/bin/python3 bench/layer_diff.py M/model.onnx frt.txt ort.txt

Both runtimes fuse nodes differently, so each entry is mapped to an "anchor" node of the ONNX
graph: flatrt names a step by its first node; ORT names a fused node by its output (with a
suffix such as _nchwc). From a produced tensor the script walks up through elementwise nodes
(Relu, Add, Mul, Sigmoid, BatchNormalization, Clip, ...) to the nearest Conv/Gemm/MatMul/Pool
node, so a Conv+Add+Relu in one runtime and Conv, then Add+Relu in the other meet at the Conv.
Prints anchor, flatrt us, ORT us, difference, flatrt kernels; sorted by the difference.
"""
import re
import sys

import onnx

HEAVY = {"Conv", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool", "Concat",
         "ConvTranspose", "Flatten", "Reshape", "Softmax"}


def main():
    model, frt_file, ort_file = sys.argv[1:4]
    g = onnx.load(model, load_external_data=False).graph
    prod = {}
    index = {}
    byname = {}
    for i, n in enumerate(g.node):
        index[n.name] = i
        byname[n.name] = n
        for o in n.output:
            prod[o] = n

    def anchor_of_node(n):
        seen = 0
        while n is not None and n.op_type not in HEAVY and seen < 8:
            cands = [prod[x] for x in n.input if x in prod and prod[x].op_type != "Constant"]
            if not cands:
                break
            n = max(cands, key=lambda c: index[c.name])
            seen += 1
        return n.name if n is not None else None

    def anchor_of_tensor(t):
        for cand in (t, re.sub(r"_nchwc$", "", t), re.sub(r"(_nchwc)?(_\d+)?$", "", t)):
            if cand in prod:
                return anchor_of_node(prod[cand])
        # fused nodes named after a node plus a suffix ("/x/Mul/QuickGeluFusion/"): the longest
        # prefix that names a node
        parts = t.rstrip("/").split("/")
        for k in range(len(parts), 1, -1):
            name = "/".join(parts[:k])
            if name in byname:
                return anchor_of_node(byname[name])
            if name in prod:
                return anchor_of_node(prod[name])
        return None

    frt = {}
    kern = {}
    on = False
    for line in open(frt_file):
        if line.startswith("top ") and "nodes by time" in line:
            on = True
            continue
        if on:
            if not line.strip():
                on = False
                continue
            parts = line.split()
            if parts[0] == "node":
                continue
            name, us, k = parts[0], float(parts[-2]), parts[-3]
            base = name.split("@")[0]
            a = anchor_of_node(byname[base]) if base in byname else anchor_of_tensor(base)
            a = a or name
            frt[a] = frt.get(a, 0.0) + us
            kern.setdefault(a, []).append(k)
    ort = {}
    for line in open(ort_file):
        parts = line.split()
        if len(parts) < 3 or not parts[0].isdigit():
            continue
        a = anchor_of_tensor(parts[1]) or parts[1]
        ort[a] = ort.get(a, 0.0) + float(parts[0])
    keys = set(frt) | set(ort)
    rows = sorted(keys, key=lambda k: -(frt.get(k, 0) - ort.get(k, 0)))
    print("%-55s %9s %9s %9s  %s" % ("anchor", "flatrt", "ort", "diff", "kernels"))
    for k in rows:
        print("%-55s %9.0f %9.0f %9.0f  %s" % (k, frt.get(k, 0), ort.get(k, 0),
                                               frt.get(k, 0) - ort.get(k, 0),
                                               ",".join(kern.get(k, []))))
    print("%-55s %9.0f %9.0f %9.0f" % ("total", sum(frt.values()), sum(ort.values()),
                                       sum(frt.values()) - sum(ort.values())))


if __name__ == "__main__":
    main()
