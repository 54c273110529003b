"""The flatrt Python API on the bundled digits classifier (examples/digits) and small edge cases:
metadata, runs, input conversion, output ownership, errors, profile and plan."""
import gc
import pathlib

import numpy as np
import pytest

import flatrt


def test_version():
    assert flatrt.__version__ == flatrt.version()
    assert flatrt.__version__.count(".") == 2


def test_metadata(digits_path):
    m = flatrt.Model(digits_path)
    (inp,) = m.inputs
    assert isinstance(inp, flatrt.TensorInfo) and inp.kind == "tensor"
    assert inp.name == "image" and inp.dtype == np.float32
    assert len(inp.shape) == 4 and inp.shape[1:] == (1, 8, 8)
    assert isinstance(inp.shape[0], str) and inp.shape[0]  # the dynamic batch: its symbolic name
    (out,) = m.outputs
    assert out.name == "logits" and out.dtype == np.dtype("float32")
    assert out.shape[1] == 10 and isinstance(out.shape[0], str)
    assert m.stats()["num_nodes"] > 0


def test_classifies_samples(digits_path, digit_samples):
    m = flatrt.Model(str(digits_path))
    for img, label in digit_samples:
        out = m.run({"image": img})
        assert list(out) == ["logits"]
        logits = out["logits"]
        assert logits.shape == (1, 10) and logits.dtype == np.float32
        assert int(np.argmax(logits)) == label


def test_batch_and_options(digits_path, digit_samples):
    batch = np.concatenate([img for img, _ in digit_samples])
    ref = flatrt.Model(digits_path).run({"image": batch})["logits"]
    assert ref.shape == (len(digit_samples), 10)
    assert [int(k) for k in ref.argmax(1)] == [label for _, label in digit_samples]
    for kw in [dict(threads=2), dict(planner="standard"), dict(planner="none"),
               dict(fuse=False, fold_constants=False), dict(manage_outputs=True),
               dict(max_runtimes=1, idle_timeout_ms=0)]:
        got = flatrt.Model(digits_path, **kw).run({"image": batch})["logits"]
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5, err_msg=str(kw))


def test_load_from_bytes(digits_path, digit_samples):
    data = pathlib.Path(digits_path).read_bytes()
    img = digit_samples[0][0]
    ref = flatrt.Model(digits_path).run({"image": img})["logits"]
    for src in (data, bytearray(data), memoryview(data), pathlib.Path(digits_path)):
        m = flatrt.Model(src)
        np.testing.assert_array_equal(m.run({"image": img})["logits"], ref)
    m = flatrt.Model(bytearray(data))
    del data
    gc.collect()
    np.testing.assert_array_equal(m.run({"image": img})["logits"], ref)


def test_inputs_zero_copy_and_conversion(digits_path, digit_samples):
    m = flatrt.Model(digits_path)
    img = np.ascontiguousarray(digit_samples[1][0], dtype=np.float32)
    ref = m.run({"image": img})["logits"]
    assert m.converted_inputs == 0  # C-contiguous float32: used in place
    m.run({"image": img[:, :, :, :]})  # a view, still contiguous
    assert m.converted_inputs == 0
    cases = [
        img.astype(np.float64),                  # other float type: cast
        img.astype(np.float16),
        np.asfortranarray(np.repeat(img, 2, 0))[:1],  # not C-contiguous
        img.tolist(),                            # nested list
        img.astype(img.dtype.newbyteorder()),    # big-endian float32
    ]
    for i, x in enumerate(cases, 1):
        out = m.run({"image": x})["logits"]
        assert m.converted_inputs == i
        tol = 1e-2 if getattr(x, "dtype", None) == np.float16 else 1e-6
        np.testing.assert_allclose(out, ref, rtol=tol, atol=tol)
    # the caller's array is not written
    before = img.copy()
    m.run({"image": img})
    np.testing.assert_array_equal(img, before)
    # integers convert to float (same kind order: int -> float is allowed)
    ints = np.zeros((1, 1, 8, 8), np.int64)
    zeros = m.run({"image": np.zeros((1, 1, 8, 8), np.float32)})["logits"]
    np.testing.assert_array_equal(m.run({"image": ints})["logits"], zeros)


def test_impossible_conversions(digits_path):
    m = flatrt.Model(digits_path)
    with pytest.raises(TypeError, match="image"):
        m.run({"image": np.zeros((1, 1, 8, 8), np.complex64)})
    with pytest.raises((TypeError, ValueError)):
        m.run({"image": np.array([["a"] * 8] * 8).reshape(1, 1, 8, 8)})
    with pytest.raises((TypeError, ValueError)):
        m.run({"image": [[1.0, 2.0], [3.0]]})  # ragged
    with pytest.raises(ValueError, match="rank"):
        m.run({"image": np.zeros((1,) * 9, np.float32)})
    with pytest.raises(TypeError):
        m.run([np.zeros((1, 1, 8, 8), np.float32)])
    with pytest.raises(TypeError):
        m.run({1: np.zeros((1, 1, 8, 8), np.float32)})


def test_library_errors_raise_flatrt_error(digits_path, tmp_path):
    with pytest.raises(flatrt.Error) as e:
        flatrt.Model(tmp_path / "missing.onnx")
    assert e.value.status == flatrt.FRT_ERR_IO and e.value.status_name == "FRT_ERR_IO"
    assert "missing.onnx" in str(e.value)
    with pytest.raises(flatrt.Error) as e:
        flatrt.Model(b"\x08\x07 this is not an onnx model \xff\xff")
    assert e.value.status == flatrt.FRT_ERR_MALFORMED
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(flatrt.Error) as e:
        flatrt.Model(digits_path, threads=0)
    assert e.value.status == flatrt.FRT_ERR_INVALID_ARGUMENT and str(e.value)

    m = flatrt.Model(digits_path)
    for feeds in ({}, {"image": np.zeros((1, 1, 8, 8), np.float32), "extra": np.zeros(1)},
                  {"picture": np.zeros((1, 1, 8, 8), np.float32)}):
        with pytest.raises(flatrt.Error) as e:
            m.run(feeds)
        assert e.value.status == flatrt.FRT_ERR_INVALID_ARGUMENT, str(e.value)
        assert str(e.value)
    with pytest.raises(flatrt.Error) as e:
        m.run({"image": np.zeros((1, 1, 8, 9), np.float32)})  # fixed dim 8 given as 9
    assert e.value.status in (flatrt.FRT_ERR_INVALID_ARGUMENT, flatrt.FRT_ERR_SHAPE)
    assert "image" in str(e.value)
    # the Model still works after failures
    assert m.run({"image": np.zeros((1, 1, 8, 8), np.float32)})["logits"].shape == (1, 10)


def test_argument_errors(digits_path):
    with pytest.raises(ValueError, match="planner"):
        flatrt.Model(digits_path, planner="best")
    with pytest.raises(TypeError):
        flatrt.Model(42)
    m = flatrt.Model(digits_path)
    with pytest.raises(ValueError, match="nope"):
        m.run({"image": np.zeros((1, 1, 8, 8), np.float32)}, outputs=["nope"])


def test_outputs_select_and_own_memory(digits_path, digit_samples):
    m = flatrt.Model(digits_path, manage_outputs=True)
    a = m.run({"image": digit_samples[0][0]}, outputs=["logits"])
    assert list(a) == ["logits"]
    keep = a["logits"].copy()
    assert m.run({"image": digit_samples[0][0]}, outputs=[]) == {}
    # more runs (other inputs) do not touch an earlier output
    for img, _ in digit_samples:
        m.run({"image": img})
    np.testing.assert_array_equal(a["logits"], keep)
    assert a["logits"].flags.c_contiguous and a["logits"].flags.writeable
    assert not isinstance(a["logits"].base, np.ndarray)  # flatrt's allocation, not a slab view
    # outputs outlive their Model
    del m
    gc.collect()
    np.testing.assert_array_equal(a["logits"], keep)
    a["logits"][...] = 0


def test_empty_batch(digits_path):
    m = flatrt.Model(digits_path)
    out = m.run({"image": np.zeros((0, 1, 8, 8), np.float32)})["logits"]
    assert out.shape == (0, 10) and out.dtype == np.float32


def test_profile_and_plan(digits_path, digit_samples):
    m = flatrt.Model(digits_path)
    feeds = {"image": digit_samples[0][0]}
    prof = m.profile(feeds, runs=3)
    assert prof and all({"node", "op_type", "kernel", "total_ns", "runs", "mean_ms"} <= set(p)
                        for p in prof)
    assert max(p["runs"] for p in prof) == 3
    assert sum(p["total_ns"] for p in prof) > 0
    assert any(p["op_type"] in ("Conv", "FusedConv") for p in prof)
    ps = m.plan_stats(feeds)
    assert 0 < ps["arena_bytes"] <= ps["naive_bytes"]
    assert ps["lower_bound_bytes"] <= ps["arena_bytes"]
    big = m.plan_stats({"image": np.zeros((64, 1, 8, 8), np.float32)})
    assert big["arena_bytes"] > ps["arena_bytes"]
    with pytest.raises(ValueError, match="image"):
        m.plan_stats()  # the batch is symbolic: no shape to plan without feeds
    with pytest.raises(ValueError):
        m.profile(feeds, runs=0)
    # profiling does not use the pool
    assert m.pool_stats()["runs"] == 0
    m.run(feeds)
    s = m.pool_stats()
    assert s["runs"] == 1 and s["created"] == 1 and s["alive"] == 1


def test_sequence_outputs_are_described_and_refused_cleanly():
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    seq = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("SequenceConstruct", ["x", "x"], ["s"])],
                              "seq", [x], [seq])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m = flatrt.Model(model.SerializeToString())
    assert m.inputs[0].kind == "tensor" and m.inputs[0].shape == (2, 3)
    (out,) = m.outputs
    assert out.kind == "sequence" and out.dtype == np.float32 and out.shape is None
    with pytest.raises(flatrt.Error) as e:  # run() handles tensors only (frt_pool_run)
        m.run({"x": np.zeros((2, 3), np.float32)})
    assert e.value.status == flatrt.FRT_ERR_INVALID_ARGUMENT and str(e.value)
