#!/usr/bin/python3
"""Build small hand-made ONNX models for flatrt's loader/compiler tests.

Usage: /usr/bin/python3 tests/models/make_tiny_models.py OUT_DIR

Every model NAME is written as
  OUT_DIR/NAME.onnx                  opset 13, passes onnx.checker (full_check)
  OUT_DIR/NAME/in/<input>.npy        C order; float32 unless meta says else
  OUT_DIR/NAME/ref/<output>.npy      expected outputs, computed with numpy
  OUT_DIR/NAME/meta.json             {"inputs": [{"name","shape","dtype"}],
                                      "outputs": [...], "dynamic": {...},
                                      "extra_sets": [...], "purpose": "..."}
(same meta.json format as tests/models/export_zoo.py). external_gemm also
has OUT_DIR/weights.bin (its initializers, as ONNX external data).
unsupported_ops has "expect_error" in its meta.json instead of being
runnable.

Models:
  shape_dynamic   x[batch,3,4] -> Shape -> Gather(0) -> Unsqueeze -> Concat
                  with [12] -> Reshape(x) -> Relu -> y[batch,12]; extra set
                  in5/ref5 at batch 5.
  shape_static    the same with a static batch 2: the shape chain folds at
                  load time.
  external_gemm   Gemm(a[3,7], w[5,7]^T, c[5], alpha=0.5, beta=1) with w and c
                  in external data "weights.bin" (size_threshold=0).
  unsupported_ops Relu + two "Multinomial" nodes + Add, and one "MaxRoiPool": the
                  loader must list every unsupported op type (Multinomial, MaxRoiPool)
                  and the names of their nodes; Relu/Add must not be listed.
  view_alias      x -> Identity -> a (graph output); a -> Dropout(ratio
                  initializer, inference) -> Flatten(axis=1) -> f; y=Relu(f),
                  z=Neg(f): a runtime that aliases views must not let Relu
                  run in place over a buffer that z or output a still reads.
  io_passthrough  graph output "x" is the graph input itself; y=Relu(x) is
                  both a graph output and consumed by y_copy=Identity(y),
                  also a graph output (the same values under two names).
  const_outputs   outputs that depend on initializers only: c_sum=Add(w1,w2)
                  (foldable), "w1" (an initializer as graph output), and
                  y=Mul(x, c_sum).
  control_if      If(c) over x[3,4]: then y=Relu(x) [3,4], z=x+x; else
                  y=Concat(x,-x) [6,4], z=x*x (branches of different output
                  shapes: run-time-sized); extra set in_else/ref_else.
  control_loop    Loop(M, h0=x[2,3]): h = 0.5 h + x + i, scan output s = h*h
                  stacked [M,2,3]; extra sets at M=0 and M=2.
"""

import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
SEED = 1234


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(graph):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="flatrt-make_tiny_models")
    return m


def _dtype_name(a):
    return {np.dtype(np.float32): "float32",
            np.dtype(np.int64): "int64",
            np.dtype(np.bool_): "bool"}[a.dtype]


def _write(out_dir, name, model, inputs, refs, purpose, dynamic=None,
           extra_sets=None, expect_error=None, external=False):
    """Save NAME.onnx and NAME/{in,ref}/*.npy plus NAME/meta.json.

    inputs/refs: lists of (name, ndarray) in graph order.
    extra_sets: list of (batch, inputs, refs) written to in<b>/ref<b>.
    """
    path = os.path.join(out_dir, name + ".onnx")
    if external:
        onnx.save_model(model, path, save_as_external_data=True,
                        all_tensors_to_one_file=True, location="weights.bin",
                        size_threshold=0, convert_attribute=False)
    else:
        onnx.save_model(model, path)
    onnx.checker.check_model(path, full_check=True)
    size = os.path.getsize(path)
    assert size < 10 * 1024, (name, size)

    d = os.path.join(out_dir, name)

    def dump(sub, pairs):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
        for n, a in pairs:
            np.save(os.path.join(d, sub, n + ".npy"), np.array(a, order="C"))

    dump("in", inputs)
    if refs:
        dump("ref", refs)
    sets = []
    for b, xin, xref in (extra_sets or []):
        dump(f"in{b}", xin)
        dump(f"ref{b}", xref)
        sets.append({"in": f"in{b}", "ref": f"ref{b}", "batch": b})


    def desc(pairs):
        return [{"name": n, "shape": list(a.shape), "dtype": _dtype_name(a)}
                for n, a in pairs]

    meta = {"name": name, "opset": OPSET, "purpose": purpose,
            "inputs": desc(inputs), "outputs": desc(refs),
            "dynamic": dynamic or {}, "extra_sets": sets}
    if expect_error is not None:
        meta["expect_error"] = expect_error
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    extra = ""
    if external:
        extra = f" + weights.bin {os.path.getsize(os.path.join(out_dir, 'weights.bin'))} B"
    print(f"{name}.onnx: {size} B{extra}")


def _shape_model(batch_dim):
    """x[batch,3,4] -> Shape/Gather/Unsqueeze/Concat -> Reshape -> Relu."""
    inits = [
        numpy_helper.from_array(np.array(0, dtype=np.int64), "gather_idx"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "unsq_axes"),
        numpy_helper.from_array(np.array([12], dtype=np.int64), "tail"),
    ]
    nodes = [
        helper.make_node("Shape", ["x"], ["x_shape"], name="shape"),
        helper.make_node("Gather", ["x_shape", "gather_idx"], ["n"],
                         name="gather_batch", axis=0),
        helper.make_node("Unsqueeze", ["n", "unsq_axes"], ["n1"],
                         name="unsqueeze"),
        helper.make_node("Concat", ["n1", "tail"], ["new_shape"],
                         name="concat", axis=0),
        helper.make_node("Reshape", ["x", "new_shape"], ["r"], name="reshape"),
        helper.make_node("Relu", ["r"], ["y"], name="relu"),
    ]
    g = helper.make_graph(nodes, "shape_subgraph",
                          [_vi("x", TensorProto.FLOAT, [batch_dim, 3, 4])],
                          [_vi("y", TensorProto.FLOAT, [batch_dim, 12])],
                          initializer=inits)
    return _model(g)


def _shape_ref(x):
    return np.maximum(x.reshape(x.shape[0], 12), 0).astype(np.float32)


def _control_if_model():
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["ty"], name="relu"),
         helper.make_node("Add", ["x", "x"], ["tz"], name="add")],
        "then_branch", [],
        [_vi("ty", TensorProto.FLOAT, [3, 4]), _vi("tz", TensorProto.FLOAT, [3, 4])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["nx"], name="neg"),
         helper.make_node("Concat", ["x", "nx"], ["ey"], name="concat", axis=0),
         helper.make_node("Mul", ["x", "x"], ["ez"], name="mul")],
        "else_branch", [],
        [_vi("ey", TensorProto.FLOAT, [6, 4]), _vi("ez", TensorProto.FLOAT, [3, 4])])
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["y", "z"], name="if",
                          then_branch=then_g, else_branch=else_g)],
        "control_if",
        [_vi("c", TensorProto.BOOL, []), _vi("x", TensorProto.FLOAT, [3, 4])],
        [_vi("y", TensorProto.FLOAT, [None, 4]), _vi("z", TensorProto.FLOAT, [3, 4])])
    return _model(g)


def _control_if_ref(c, x):
    if c:
        return [("y", np.maximum(x, 0)), ("z", x + x)]
    return [("y", np.concatenate([x, -x], 0)), ("z", x * x)]


def _control_loop_model():
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], name="cast", to=TensorProto.FLOAT),
         helper.make_node("Mul", ["h", "half"], ["hh"], name="mul_half"),
         helper.make_node("Add", ["hh", "x"], ["hx"], name="add_x"),
         helper.make_node("Add", ["hx", "fi"], ["h2"], name="add_i"),
         helper.make_node("Mul", ["h2", "h2"], ["s"], name="square"),
         helper.make_node("Identity", ["cond"], ["cond_out"], name="keep")],
        "body",
        [_vi("i", TensorProto.INT64, []), _vi("cond", TensorProto.BOOL, []),
         _vi("h", TensorProto.FLOAT, [2, 3])],
        [_vi("cond_out", TensorProto.BOOL, []), _vi("h2", TensorProto.FLOAT, [2, 3]),
         _vi("s", TensorProto.FLOAT, [2, 3])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x"], ["h", "s_all"], name="loop", body=body)],
        "control_loop",
        [_vi("M", TensorProto.INT64, []), _vi("x", TensorProto.FLOAT, [2, 3])],
        [_vi("h", TensorProto.FLOAT, [2, 3]), _vi("s_all", TensorProto.FLOAT, [None, 2, 3])],
        initializer=[numpy_helper.from_array(np.array(0.5, np.float32), "half")])
    return _model(g)


def _control_loop_ref(m, x):
    h, ss = x.copy(), []
    for i in range(int(m)):
        h = (h * np.float32(0.5) + x + np.float32(i)).astype(np.float32)
        ss.append(h * h)
    s = np.stack(ss) if ss else np.zeros((0, 2, 3), np.float32)
    return [("h", h), ("s_all", s.astype(np.float32))]


def build_control(out_dir, randn):
    x = randn(3, 4)
    t, f = np.array(True), np.array(False)
    _write(out_dir, "control_if", _control_if_model(),
           [("c", t), ("x", x)], _control_if_ref(True, x),
           "If whose branches give outputs of different shapes",
           extra_sets=[("_else", [("c", f), ("x", x)], _control_if_ref(False, x))])
    x = randn(2, 3)
    m5, m0, m2 = (np.array(k, np.int64) for k in (5, 0, 2))
    _write(out_dir, "control_loop", _control_loop_model(),
           [("M", m5), ("x", x)], _control_loop_ref(5, x),
           "Loop with a trip-count input, a carried value and a scan output",
           extra_sets=[("_m0", [("M", m0), ("x", x)], _control_loop_ref(0, x)),
                       ("_m2", [("M", m2), ("x", x)], _control_loop_ref(2, x))])


def build_all(out_dir):
    rng = np.random.default_rng(SEED)

    def randn(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    os.makedirs(out_dir, exist_ok=True)

    # (a) dynamic batch shape subgraph
    x = randn(3, 3, 4)
    x5 = randn(5, 3, 4)
    _write(out_dir, "shape_dynamic", _shape_model("batch"),
           [("x", x)], [("y", _shape_ref(x))],
           "Shape->Gather->Unsqueeze->Concat->Reshape chain on a dynamic batch",
           dynamic={"x": {"0": "batch"}, "y": {"0": "batch"}},
           extra_sets=[(5, [("x", x5)], [("y", _shape_ref(x5))])])

    # (b) the same with a static batch: the chain folds at load
    x = randn(2, 3, 4)
    _write(out_dir, "shape_static", _shape_model(2),
           [("x", x)], [("y", _shape_ref(x))],
           "same shape chain with static batch 2: folds to a constant shape")

    # (c) Gemm with initializers in external data
    a = randn(3, 7)
    w = randn(5, 7)
    c = randn(5)
    g = helper.make_graph(
        [helper.make_node("Gemm", ["a", "w", "c"], ["y"], name="gemm",
                          alpha=0.5, beta=1.0, transB=1)],
        "external_gemm",
        [_vi("a", TensorProto.FLOAT, [3, 7])],
        [_vi("y", TensorProto.FLOAT, [3, 5])],
        initializer=[numpy_helper.from_array(w, "w"),
                     numpy_helper.from_array(c, "c")])
    y = (0.5 * (a.astype(np.float64) @ w.astype(np.float64).T) + c).astype(
        np.float32)
    _write(out_dir, "external_gemm", _model(g), [("a", a)], [("y", y)],
           "Gemm whose initializers w[5,7], c[5] live in weights.bin",
           external=True)

    # (d) unsupported op types (Multinomial, MaxRoiPool: in no node-suite case)
    x = randn(2, 3)
    nodes = [
        helper.make_node("Relu", ["x"], ["xr"], name="relu_0"),
        helper.make_node("Multinomial", ["xr"], ["m0"], name="multinomial_a",
                         dtype=TensorProto.INT64),
        helper.make_node("Multinomial", ["x"], ["m1"], name="multinomial_b",
                         dtype=TensorProto.INT64),
        helper.make_node("Add", ["m0", "m1"], ["s"], name="add_0"),
        helper.make_node("MaxRoiPool", ["img", "rois"], ["pooled"], name="maxroipool_0",
                         pooled_shape=[2, 2]),
    ]
    rois = np.array([[0, 0, 0, 3, 3]], dtype=np.float32)
    g = helper.make_graph(
        nodes, "unsupported_ops",
        [_vi("x", TensorProto.FLOAT, [2, 3]), _vi("img", TensorProto.FLOAT, [1, 1, 4, 4])],
        [_vi("s", TensorProto.INT64, [2, 1]), _vi("pooled", TensorProto.FLOAT, [1, 1, 2, 2])],
        initializer=[numpy_helper.from_array(rois, "rois")])
    img = randn(1, 1, 4, 4)
    # random samples: the model never runs; the ref only describes output s
    s = np.zeros((2, 1), dtype=np.int64)
    _write(out_dir, "unsupported_ops", _model(g), [("x", x), ("img", img)],
           [("s", s)],
           "load must fail listing every unsupported op type and node",
           expect_error={"status": "unsupported",
                         "op_types": ["Multinomial", "MaxRoiPool"],
                         "nodes": ["multinomial_a", "multinomial_b", "maxroipool_0"],
                         "not_listed": ["Relu", "Add", "relu_0", "add_0"]})

    # (e) Identity/Dropout/Flatten view chain with several readers
    x = randn(2, 3, 4)
    nodes = [
        helper.make_node("Identity", ["x"], ["a"], name="identity"),
        helper.make_node("Dropout", ["a", "ratio"], ["dr"], name="dropout"),
        helper.make_node("Flatten", ["dr"], ["f"], name="flatten", axis=1),
        helper.make_node("Relu", ["f"], ["y"], name="relu"),
        helper.make_node("Neg", ["f"], ["z"], name="neg"),
    ]
    g = helper.make_graph(
        nodes, "view_alias",
        [_vi("x", TensorProto.FLOAT, [2, 3, 4])],
        [_vi("a", TensorProto.FLOAT, [2, 3, 4]),
         _vi("y", TensorProto.FLOAT, [2, 12]),
         _vi("z", TensorProto.FLOAT, [2, 12])],
        initializer=[numpy_helper.from_array(np.array(0.3, np.float32),
                                             "ratio")])
    f = x.reshape(2, 12)
    _write(out_dir, "view_alias", _model(g), [("x", x)],
           [("a", x.copy()), ("y", np.maximum(f, 0)), ("z", -f)],
           "views (Identity/Dropout/Flatten) read by several consumers")

    # (f) graph output == graph input; one value under two output names
    x = randn(2, 5)
    nodes = [
        helper.make_node("Relu", ["x"], ["y"], name="relu"),
        helper.make_node("Identity", ["y"], ["y_copy"], name="copy"),
    ]
    g = helper.make_graph(
        nodes, "io_passthrough",
        [_vi("x", TensorProto.FLOAT, [2, 5])],
        [_vi("x", TensorProto.FLOAT, [2, 5]),
         _vi("y", TensorProto.FLOAT, [2, 5]),
         _vi("y_copy", TensorProto.FLOAT, [2, 5])])
    y = np.maximum(x, 0)
    _write(out_dir, "io_passthrough", _model(g), [("x", x)],
           [("x", x.copy()), ("y", y), ("y_copy", y.copy())],
           "an input that is also an output; one value exposed twice")

    # (g) outputs computed from initializers only
    x = randn(2, 4)
    w1 = randn(4)
    w2 = randn(4)
    nodes = [
        helper.make_node("Add", ["w1", "w2"], ["c_sum"], name="add_consts"),
        helper.make_node("Mul", ["x", "c_sum"], ["y"], name="mul"),
    ]
    g = helper.make_graph(
        nodes, "const_outputs",
        [_vi("x", TensorProto.FLOAT, [2, 4])],
        [_vi("c_sum", TensorProto.FLOAT, [4]),
         _vi("w1", TensorProto.FLOAT, [4]),
         _vi("y", TensorProto.FLOAT, [2, 4])],
        initializer=[numpy_helper.from_array(w1, "w1"),
                     numpy_helper.from_array(w2, "w2")])
    c_sum = (w1 + w2).astype(np.float32)
    _write(out_dir, "const_outputs", _model(g), [("x", x)],
           [("c_sum", c_sum), ("w1", w1.copy()), ("y", x * c_sum)],
           "outputs that are constants / an initializer; folded at load")

    build_control(out_dir, randn)


def build_malformed(out_dir):
    """Structurally invalid models (onnx.checker would reject them; they are saved without it).
    Each must fail to load with a clear error: OUT_DIR/malformed/<name>.onnx, and the expected
    words of the message in OUT_DIR/malformed/<name>.expect."""
    d = os.path.join(out_dir, "malformed")
    os.makedirs(d, exist_ok=True)
    f = TensorProto.FLOAT

    def save(name, graph, expect, opset=OPSET):
        imports = [helper.make_opsetid("", opset)] if opset else [helper.make_opsetid("com.x", 1)]
        m = helper.make_model(graph, opset_imports=imports,
                              producer_name="make_tiny_models")
        with open(os.path.join(d, name + ".onnx"), "wb") as fh:
            fh.write(m.SerializeToString())
        with open(os.path.join(d, name + ".expect"), "w") as fh:
            fh.write(expect + "\n")

    x = [_vi("x", f, [2, 3])]
    y = [_vi("y", f, [2, 3])]
    save("cycle", helper.make_graph([
        helper.make_node("Relu", ["b"], ["a"], name="n1"),
        helper.make_node("Relu", ["a"], ["b"], name="n2"),
        helper.make_node("Add", ["x", "b"], ["y"], name="n3")], "cycle", x, y), "cycle")
    save("missing_input", helper.make_graph([
        helper.make_node("Add", ["x", "nowhere"], ["y"], name="add")], "g", x, y),
        "nowhere")
    save("double_definition", helper.make_graph([
        helper.make_node("Relu", ["x"], ["y"], name="r1"),
        helper.make_node("Relu", ["x"], ["y"], name="r2")], "g", x, y), "already defined")
    save("output_not_produced", helper.make_graph([
        helper.make_node("Relu", ["x"], ["z"], name="r1")], "g", x, y), "not produced")
    save("no_opset", helper.make_graph([
        helper.make_node("Relu", ["x"], ["y"], name="r1")], "g", x, y), "opset", opset=None)
    save("opset_too_new", helper.make_graph([
        helper.make_node("Relu", ["x"], ["y"], name="r1")], "g", x, y), "opset 99", opset=99)
    save("huge_dim", helper.make_graph([
        helper.make_node("Relu", ["x"], ["y"], name="r1")], "g",
        [_vi("x", f, [1 << 40, 1 << 40])], y), "")
    save("flatten_overflow", helper.make_graph([  # found by fuzz_pipeline: int64 overflow
        helper.make_node("Flatten", ["x"], ["y"], name="flat", axis=0)], "g",
        [_vi("x", f, [1 << 40, 1 << 40])], y), "overflows")
    save("conv_dim_overflow", helper.make_graph([  # found by fuzz_pipeline: int64 overflow
        helper.make_node("Conv", ["xc", "w"], ["y"], name="conv", pads=[0, 0, 0, 9])], "g",
        [_vi("xc", f, [1, 1, 1, (1 << 63) - 1])], y,
        initializer=[numpy_helper.from_array(np.zeros((1, 1, 1, 1), np.float32), "w")]),
        "overflows")
    save("bad_shape_broadcast", helper.make_graph([
        helper.make_node("Add", ["x", "w"], ["y"], name="add")], "g", x, y,
        initializer=[numpy_helper.from_array(np.zeros((4,), np.float32), "w")]), "broadcast")
    save("gemm_k_mismatch", helper.make_graph([
        helper.make_node("Gemm", ["x", "w"], ["y"], name="gemm", transB=1)], "g", x, y,
        initializer=[numpy_helper.from_array(np.zeros((5, 4), np.float32), "w")]), "gemm")
    save("conv_channels", helper.make_graph([
        helper.make_node("Conv", ["x4", "w"], ["y"], name="conv")], "g",
        [_vi("x4", f, [1, 3, 8, 8])], y,
        initializer=[numpy_helper.from_array(np.zeros((2, 5, 3, 3), np.float32), "w")]), "conv")
    save("reshape_count", helper.make_graph([
        helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")], "g", x, y,
        initializer=[numpy_helper.from_array(np.array([4, 4], np.int64), "s")]), "reshape")
    save("missing_attr_cast", helper.make_graph([
        helper.make_node("Cast", ["x"], ["y"], name="cast")], "g", x, y), "cast")
    save("wrong_arity", helper.make_graph([
        helper.make_node("Relu", ["x", "x"], ["y"], name="relu2")], "g", x, y), "relu2")


def main(argv):
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: make_tiny_models.py OUT_DIR", file=sys.stderr)
        return 2
    build_all(argv[0])
    build_malformed(argv[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
