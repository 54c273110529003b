"""Shared fixtures of the flatrt Python tests (run by ctest: python/tests/python_tests.cmake).

FRT_MODELS_DIR: the PyTorch model zoo (tests/models/export_zoo.py: <name>/model.onnx, in/*.npy,
ref/*.npy, meta.json). The digits example comes from the source tree."""
import json
import os
import pathlib

import numpy as np
import pytest

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]
DIGITS = SOURCE_DIR / "examples" / "digits"


def models_dir():
    return pathlib.Path(os.environ.get("FRT_MODELS_DIR", SOURCE_DIR / "build" / "models"))


def zoo_model(name):
    """(path of model.onnx, feeds {input name: array}, refs {output name: array}) of a zoo model;
    inputs and outputs are named as in meta.json, files as <name>.npy."""
    d = models_dir() / name
    if not (d / "model.onnx").exists():
        pytest.fail(f"zoo model {d} is missing (export it: ctest -R models.export)")
    meta = json.loads((d / "meta.json").read_text())
    feeds = {i["name"]: np.load(d / "in" / (i["name"] + ".npy")) for i in meta["inputs"]}
    refs = {o["name"]: np.load(d / "ref" / (o["name"] + ".npy")) for o in meta["outputs"]}
    return d / "model.onnx", feeds, refs


@pytest.fixture
def digits_path():
    return DIGITS / "digits.onnx"


@pytest.fixture
def digit_samples():
    """[(image array [1,1,8,8] float32, label)] of examples/digits/samples."""
    out = []
    for line in (DIGITS / "samples" / "labels.txt").read_text().split("\n"):
        if line.strip():
            f, label = line.split()
            out.append((np.load(DIGITS / "samples" / pathlib.Path(f).name), int(label)))
    return out
