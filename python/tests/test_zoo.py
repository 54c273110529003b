"""Zoo models (tests/models/export_zoo.py) through the Python binding match PyTorch's saved
outputs: |flatrt - torch| <= 1e-4 * max|ref| + 1e-5 per output, as tests/e2e/check_model.c."""
import numpy as np
import pytest

import flatrt
from conftest import zoo_model

MODELS = ["mlp", "resnet18", "deep_wide", "bert4", "gpt2mini", "all_ops_dyn"]


def check(got, refs):
    assert set(got) == set(refs)
    for name, ref in refs.items():
        out = got[name]
        assert out.shape == ref.shape and out.dtype == ref.dtype, name
        tol = 1e-4 * float(np.max(np.abs(ref))) + 1e-5 if ref.size else 0.0
        err = float(np.max(np.abs(out.astype(np.float64) - ref))) if ref.size else 0.0
        assert err <= tol, f"{name}: max |flatrt - torch| = {err:g} > {tol:g}"


@pytest.mark.parametrize("name", MODELS)
def test_zoo_model_matches_pytorch(name):
    path, feeds, refs = zoo_model(name)
    m = flatrt.Model(path)
    check(m.run(feeds), refs)
    assert m.converted_inputs == 0  # the saved .npy inputs have the model's dtypes


@pytest.mark.parametrize("name", ["resnet18", "bert4"])
def test_zoo_model_options(name):
    path, feeds, refs = zoo_model(name)
    check(flatrt.Model(path, threads=2, planner="standard").run(feeds), refs)
    check(flatrt.Model(str(path), manage_outputs=True).run(feeds), refs)
    # fed by bytes
    check(flatrt.Model(path.read_bytes()).run(feeds), refs)


def test_symbolic_dims():
    path, feeds, refs = zoo_model("deep_wide")
    m = flatrt.Model(path)
    for info in m.inputs + m.outputs:
        assert info.shape[0] == "batch", info
    assert all(isinstance(d, int) for d in m.inputs[0].shape[1:])


def test_int64_inputs_refuse_floats():
    path, feeds, refs = zoo_model("bert4")
    m = flatrt.Model(path)
    bad = dict(feeds, input_ids=feeds["input_ids"].astype(np.float32))
    with pytest.raises(TypeError, match="input_ids.*int64"):
        m.run(bad)
    # int32 ids are the same kind: converted
    check(m.run(dict(feeds, input_ids=feeds["input_ids"].astype(np.int32))), refs)
    assert m.converted_inputs == 1


def test_runtime_error_from_kernel():
    path, feeds, refs = zoo_model("bert4")
    m = flatrt.Model(path)
    bad = dict(feeds, input_ids=np.full_like(feeds["input_ids"], 10**9))  # index out of range
    with pytest.raises(flatrt.Error) as e:
        m.run(bad)
    assert e.value.status == flatrt.FRT_ERR_RUNTIME, str(e.value)
    check(m.run(feeds), refs)
