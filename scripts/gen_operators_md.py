#!/usr/bin/python3
"""Writes docs/operators.md from the registry and the node suite.

Usage: /usr/bin/python3 scripts/gen_operators_md.py BUILD_DIR [OUT.md]

- The operator list (op, domain, opsets, family) comes from `flatrt info --ops` (the registry of
  this build).
- Dtypes: for every node-suite case that passes (BUILD_DIR/conformance/report.txt, written by
  scripts/conformance.sh), ONNX shape inference gives the dtypes of each node's inputs and
  outputs; an op lists the dtypes its nodes had in passing cases, so every dtype shown is one a
  test checked.
- Kernels: each passing case is run once with `flatrt bench --profile` at every ISA tier the host
  has (FRT_ISA=portable/avx2/avx512), on the case's own input data; the kernels the profile names
  for an op's nodes are listed.
"""
import os
import re
import subprocess
import sys

import onnx
from onnx import shape_inference

DT = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
      8: "string", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
      16: "bfloat16"}


def registry(flatrt):
    out = subprocess.run([flatrt, "info", "--ops"], check=True, capture_output=True, text=True)
    rows = []
    for line in out.stdout.splitlines()[1:]:
        parts = line.split()
        if len(parts) < 4 or parts[0] == "entries" or line.endswith(" entries"):
            continue
        rows.append({"op": parts[0], "domain": parts[1], "opsets": parts[2], "family": parts[3],
                     "data_shape": len(parts) > 4})
    return rows


def value_types(model):
    types = {}
    g = model.graph
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.HasField("tensor_type"):
            types[vi.name] = vi.type.tensor_type.elem_type
    for t in g.initializer:
        types[t.name] = t.data_type
    return types


def walk_nodes(graph):
    for n in graph.node:
        yield n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from walk_nodes(a.g)
            for sg in a.graphs:
                yield from walk_nodes(sg)


def tiers():
    have = ["portable"]
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        flags = ""
    if " avx2" in flags and " fma" in flags:
        have.append("avx2")
    if " avx512f" in flags and " avx512bw" in flags and " avx512vl" in flags and " avx512dq" in flags:
        have.append("avx512")
    return have


def kernels_of(flatrt, case, model, tier):
    args = [flatrt, "bench", os.path.join(case, "model.onnx"), "--iters", "1", "--warmup", "0",
            "--profile"]
    ds = os.path.join(case, "test_data_set_0")
    inputs = [i.name for i in model.graph.input
              if i.name not in {t.name for t in model.graph.initializer}]
    for k, name in enumerate(inputs):
        pb = os.path.join(ds, "input_%d.pb" % k)
        if os.path.exists(pb):
            args += ["--input", "%s=%s" % (name, pb)]
    env = dict(os.environ, FRT_ISA=tier)
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    found = []
    in_nodes = False
    for line in r.stdout.splitlines():
        if line.startswith("top ") and "nodes by time" in line:
            in_nodes = True
            continue
        if in_nodes:
            if not line.startswith("  ") or line.strip().startswith("node "):
                if not line.startswith("  "):
                    in_nodes = False
                continue
            parts = line.split()
            if len(parts) >= 3:
                found.append((parts[1], parts[2]))
    return found


def main(argv):
    build = argv[0]
    out_path = argv[1] if len(argv) > 1 else "docs/operators.md"
    flatrt = os.path.join(build, "flatrt")
    suite = os.path.join(build, "onnx-suite", "node")
    rows = registry(flatrt)
    report = open(os.path.join(build, "conformance", "report.txt")).read().splitlines()
    passing = [l.split()[1] for l in report if l.startswith("pass ")]
    cases_by_op, pass_by_op = {}, {}
    dtypes, kernels = {}, {}
    for line in report:
        m = re.match(r"(pass|fail|unsupported|error) (\S+?):?(\s|$)", line)
        if not m:
            continue
        case = m.group(2)
        path = os.path.join(suite, case, "model.onnx")
        try:
            model = onnx.load(path)
        except Exception:
            continue
        ops = {n.op_type for n in walk_nodes(model.graph)}
        for op in ops:
            cases_by_op[op] = cases_by_op.get(op, 0) + 1
            if m.group(1) == "pass":
                pass_by_op[op] = pass_by_op.get(op, 0) + 1
        if m.group(1) != "pass":
            continue
        try:
            inferred = shape_inference.infer_shapes(model)
        except Exception:
            inferred = model
        types = value_types(inferred)
        for n in walk_nodes(inferred.graph):
            s = dtypes.setdefault(n.op_type, set())
            for v in list(n.input) + list(n.output):
                if v in types and types[v] in DT:
                    s.add(DT[types[v]])
        for tier in tiers():
            for op, k in kernels_of(flatrt, os.path.join(suite, case), model, tier):
                kernels.setdefault(op, set()).add(k)
    total_pass = len(passing)
    with open(out_path, "w") as f:
        f.write("# Operators\n\n")
        f.write("Generated by `/usr/bin/python3 scripts/gen_operators_md.py build` from this build's "
                "registry (`flatrt info --ops`) and the ONNX node suite (see "
                "[conformance.md](conformance.md)); do not edit by hand.\n\n")
        f.write("- **opsets**: the opsets of the op's domain an entry implements (an op can have "
                "several entries when its semantics changed).\n")
        f.write("- **dtypes**: dtypes of the inputs and outputs of this op's nodes in node-suite cases "
                "that pass (so each one is checked by a test); an op may accept more.\n")
        f.write("- **kernels**: kernels chosen for this op's nodes in those cases, at every ISA tier "
                "of the generating host (`_avx2` / `_avx512` suffixes are SIMD variants).\n")
        f.write("- **suite**: node-suite cases using the op that pass / all cases using it.\n")
        f.write("- **\\***: output shapes may depend on input data (sized at run time).\n\n")
        f.write("%d registry entries; %d of the suite's cases pass.\n\n" % (len(rows), total_pass))
        f.write("| op | domain | opsets | family | dtypes | kernels | suite |\n")
        f.write("|---|---|---|---|---|---|---:|\n")
        for r in rows:
            op = r["op"]
            dts = ", ".join(sorted(dtypes.get(op, set()))) or "-"
            ks = ", ".join("`%s`" % k for k in sorted(kernels.get(op, set()))) or "-"
            suite_txt = "%d/%d" % (pass_by_op.get(op, 0), cases_by_op.get(op, 0)) \
                if op in cases_by_op else "-"
            f.write("| %s%s | %s | %s | %s | %s | %s | %s |\n" % (
                op, " \\*" if r["data_shape"] else "", r["domain"], r["opsets"], r["family"], dts,
                ks, suite_txt))
    print("wrote %s (%d entries)" % (out_path, len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
