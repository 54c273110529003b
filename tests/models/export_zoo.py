#!/usr/bin/python3
"""Export the end-to-end model zoo for flatrt's model tests.

Usage: /usr/bin/python3 tests/models/export_zoo.py OUT_DIR [--only NAME,...] [--force]

Needs Debian python3-torch, python3-torchvision, python3-onnx, python3-numpy.
Works offline (torchvision weights=None, every parameter is drawn from a fixed
seed) and is deterministic: the same script gives the same files.

Layout written for every model NAME:
  OUT_DIR/NAME/model.onnx            opset 13, do_constant_folding=True
  OUT_DIR/NAME/in/<input_name>.npy   float32 (int64 for token ids and masks), C order,
                                     PyTorch's inputs
  OUT_DIR/NAME/ref/<output_name>.npy float32, C order, PyTorch's outputs
  OUT_DIR/NAME/meta.json             {"inputs": [{"name","shape","dtype"}],
                                      "outputs": [...], "dynamic": {...},
                                      "extra_sets": [...], "output_stats": {...}}
deep_wide also has in8/ and ref8/: the same model run at batch 8 (its batch
dimension is dynamic, named "batch").

"dynamic" maps an input or output name to {"<axis>": "<dim name>"}; it is {}
for fully static models. "extra_sets" lists further in/ref directory pairs
(e.g. [{"in": "in8", "ref": "ref8", "batch": 8}]).

BatchNormalization is kept as its own ONNX node (export with
training=TrainingMode.PRESERVE on a model in eval mode: the exporter's
Conv+BN fusion pass only runs in EVAL mode), and every BatchNorm gets random
running statistics and affine parameters, so the runtime's BN folding is
really exercised.

Sizes and export times of the issue-9 models (2-vCPU project machine, torch already imported):
bert4 138 MB ~11 s, gpt2mini 109 MB ~4-9 s, lstm 3.7 MB, gru 0.3 MB, mobilenet_v3_small
10 MB, efficientnet_b0 21 MB (under 1 s each); the whole zoo takes ~35 s wall.

A model is skipped when its meta.json (written last) and model.onnx exist and
meta.json names this script's content hash (not its mtime: every checkout of the
repository has a fresh one, and several checkouts may share one models
directory), unless --force is given. Every file is written under a temporary
name and renamed into place, so a process that has a model open or mapped
while it is re-exported keeps reading the old, complete file.
"""

import argparse
import json
import math
import os
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OPSET = 13
SEED = 20240611


def _seed(name):
    """Seed derived from the model name, so --only gives the same files."""
    s = SEED
    for ch in name:
        s = (s * 131 + ord(ch)) % (2**31 - 1)
    torch.manual_seed(s)
    return s


# --------------------------------------------------------------------------
# Models


class DeepAndWide(nn.Module):
    """PyTorch Static Runtime's DeepAndWide benchmark model.

    ad_emb_packed [b,1,E], user_emb [b,1,E], wide [b,W] -> [b,1]
    """

    def __init__(self, num_features=50, emb=32):
        super().__init__()
        self.mu = nn.Parameter(torch.randn(1, num_features))
        self.sigma = nn.Parameter(torch.randn(1, num_features))
        # fc_w is scaled down so that the sigmoid is not saturated (the
        # dot product of two randn embeddings alone has std ~sqrt(E)).
        self.fc_w = nn.Parameter(0.05 * torch.randn(1, num_features + 1))
        self.fc_b = nn.Parameter(0.1 * torch.randn(1))

    def forward(self, ad_emb_packed, user_emb, wide):
        wide_offset = wide + self.mu
        wide_normalized = wide_offset * self.sigma
        wide_preproc = torch.clamp(wide_normalized, -10.0, 10.0)
        user_emb_t = torch.transpose(user_emb, 1, 2)
        dp_unflatten = torch.bmm(ad_emb_packed, user_emb_t)
        dp = torch.flatten(dp_unflatten, 1)
        inp = torch.cat([dp, wide_preproc], 1)
        fc1 = F.linear(inp, self.fc_w, self.fc_b)
        return torch.sigmoid(fc1)


class AllOpsDynamic(nn.Module):
    """A small CNN with a dynamic batch that uses every operator family flatrt has (Conv+BN,
    pooling, Concat, Gemm/MatMul, Softmax, elementwise, Transpose, Gather, Slice, shape
    subgraphs), for the empty-batch policy: batch 0 must run and give empty outputs.

    x [b,3,12,12] -> (logits [b,10], feats [b,4,6,6])
    """

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 4, 1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.fc = nn.Linear(12 * 6 * 6, 32)
        self.w = nn.Parameter(0.1 * torch.randn(32, 10))

    def forward(self, x):
        y = F.relu(self.bn(self.c1(x)))
        a = F.max_pool2d(y, 2)
        b = F.avg_pool2d(self.dw(y), 2)
        c = torch.cat([torch.sigmoid(self.c2(a)), torch.tanh(b)], 1)   # [b,12,6,6]
        feats = torch.clamp(c[:, 2:6] * 2.0 - 0.5, -1.0, 1.0)
        g = F.adaptive_avg_pool2d(c, 1).flatten(1)                      # [b,12]
        h = self.fc(c.reshape(c.shape[0], 12 * 6 * 6)) + (g[:, 0:1] - g[:, 5:6]) / 4.0
        t = h.reshape(h.shape[0], 4, 8).transpose(1, 2).reshape(h.shape[0], 32)
        logits = torch.softmax(-t @ self.w, dim=1) + t[:, 3:4]
        return logits, feats


class LSTMModel(nn.Module):
    """nn.LSTM(128 -> 256, 2 layers, batch_first) + Linear(256 -> 16) on every step.

    x [4,32,128] -> [4,32,16]
    """

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(128, 256, num_layers=2, batch_first=True)
        self.fc = nn.Linear(256, 16)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y)


class GRUModel(nn.Module):
    """nn.GRU(64 -> 128) + Linear(128 -> 16) on every step. x [50,1,64] -> [50,1,16]"""

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(64, 128)
        self.fc = nn.Linear(128, 16)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y)


class Attention(nn.Module):
    """Multi-head self-attention from Linear layers; mask is added to the scores."""

    def __init__(self, d, heads):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x, mask_add=None, causal=None):
        b, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q = q.reshape(b, s, self.h, self.dh).transpose(1, 2)
        k = k.reshape(b, s, self.h, self.dh).transpose(1, 2)
        v = v.reshape(b, s, self.h, self.dh).transpose(1, 2)
        att = (q @ k.transpose(2, 3)) / math.sqrt(self.dh)
        if mask_add is not None:
            att = att + mask_add
        if causal is not None:
            att = att.masked_fill(causal == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, d)
        return self.out(y)


class BertLayer(nn.Module):
    """Post-LN encoder layer as in BERT (GELU feed-forward)."""

    def __init__(self, d, heads, ff):
        super().__init__()
        self.att = Attention(d, heads)
        self.ln1 = nn.LayerNorm(d, eps=1e-12)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-12)

    def forward(self, x, mask_add):
        x = self.ln1(x + self.att(x, mask_add=mask_add))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


class Bert4(nn.Module):
    """BERT-base-shaped encoder, 4 layers: d_model 768, 12 heads, ff 3072, GELU, token and
    position embeddings (vocab 8000), attention mask (1 = attend, 0 = padding).

    input_ids [1,128] int64, attention_mask [1,128] int64 -> hidden [1,128,768]
    """

    def __init__(self, vocab=8000, seq=128, d=768, heads=12, ff=3072, layers=4):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.ln = nn.LayerNorm(d, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(d, heads, ff) for _ in range(layers))
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    m.weight.normal_(0.0, 0.02)

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        pos = torch.arange(s, dtype=torch.int64).unsqueeze(0)
        x = self.ln(self.tok(input_ids) + self.pos(pos))
        mask_add = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_add)
        return x


class GPTBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.att = Attention(d, heads)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.proj = nn.Linear(4 * d, d)

    def forward(self, x, causal):
        x = x + self.att(self.ln1(x), causal=causal)
        return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT2Mini(nn.Module):
    """GPT-2-style decoder: d 512, 8 heads, 6 pre-LN blocks, causal mask (masked_fill), tied
    token embedding / LM head, vocab 8000.

    input_ids [1,64] int64 -> logits [1,64,8000]
    """

    def __init__(self, vocab=8000, seq=64, d=512, heads=8, layers=6):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(GPTBlock(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.register_buffer("causal", torch.tril(torch.ones(seq, seq)).reshape(1, 1, seq, seq))
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    m.weight.normal_(0.0, 0.02)

    def forward(self, input_ids):
        s = input_ids.shape[1]
        pos = torch.arange(s, dtype=torch.int64).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        causal = self.causal[:, :, :s, :s]
        for b in self.blocks:
            x = b(x, causal)
        return self.ln_f(x) @ self.wte.weight.t()


def _ids(vocab):
    return lambda shape: torch.randint(0, vocab, shape, dtype=torch.int64)


def _attention_mask(shape):
    """1 for the first 100 tokens, 0 (padding) after."""
    m = torch.ones(shape, dtype=torch.int64)
    m[:, 100:] = 0
    return m


def make_mlp():
    return nn.Sequential(
        nn.Linear(512, 1024), nn.ReLU(),
        nn.Linear(1024, 1024), nn.ReLU(),
        nn.Linear(1024, 10))


def randomize_batchnorm(model):
    """Give every BatchNorm random (seeded) running stats and affine params.

    running_var and weight are kept positive and near 1 and the mean/bias near
    0, so activations neither explode nor collapse through deep nets.
    """
    n = 0
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                c = m.num_features
                m.running_mean.copy_(torch.empty(c).uniform_(-0.2, 0.2))
                m.running_var.copy_(torch.empty(c).uniform_(0.5, 2.0))
                if m.weight is not None:
                    m.weight.copy_(torch.empty(c).uniform_(0.5, 1.5))
                    m.bias.copy_(torch.empty(c).uniform_(-0.2, 0.2))
                n += 1
        # The BN closing a ResNet residual branch (BasicBlock.bn2,
        # Bottleneck.bn3) gets a smaller gain, else the sum of 16 residual
        # branches in resnet50 grows activations to ~500.
        for m in model.modules():
            last = {"BasicBlock": "bn2", "Bottleneck": "bn3"}.get(
                type(m).__name__)
            if last is not None:
                bn = getattr(m, last)
                bn.weight.copy_(torch.empty(bn.num_features).uniform_(0.2, 0.5))
    return n


def make_torchvision(name):
    import torchvision
    ctor = getattr(torchvision.models, name)
    return ctor(weights=None)


# --------------------------------------------------------------------------
# Control flow (issue 9): scripted models whose ONNX has If / Loop nodes.


class ControlIf(nn.Module):
    """A data-dependent `if` (torch.jit.script -> ONNX If): the reductions of x
    are compared and the two branches use different ops.

    x [4,16] -> y [4,16]; the branch taken is then iff mean(x) > 0.
    """

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 16)
        self.b = nn.Linear(16, 16)

    def forward(self, x):
        if x.sum() > x.mean():
            y = torch.relu(self.a(x)) * 2.0
        else:
            y = torch.tanh(self.b(x)) - x
        return y


class ControlLoop(nn.Module):
    """A scripted `for` loop whose trip count is an input (ONNX Loop with M).

    x [4,16], n int64 scalar -> h [4,16]
    """

    def __init__(self):
        super().__init__()
        self.l = nn.Linear(16, 16)

    def forward(self, x, n):
        h = x
        for _ in range(int(n)):
            h = torch.tanh(self.l(h)) + x
        return h


class DLRMSmall(nn.Module):
    """A DLRM-style recommendation model: dense MLP 13-512-256-64, 8
    EmbeddingBag(10000, 64, sum) tables fed from indices [8, n] and offsets
    [8, batch], pairwise dot-product interaction of the 9 vectors (lower
    triangle), top MLP 100-256-1 and a sigmoid. torch 1.13 exports each
    EmbeddingBag with offsets at opset 13 as a Loop over the bags.

    dense [32,13], indices int64 [8,128], offsets int64 [8,32] -> y [32,1]
    """

    def __init__(self, tables=8, rows=10000, d=64):
        super().__init__()
        self.bot = nn.Sequential(nn.Linear(13, 512), nn.ReLU(), nn.Linear(512, 256),
                                 nn.ReLU(), nn.Linear(256, d), nn.ReLU())
        self.embs = nn.ModuleList(
            [nn.EmbeddingBag(rows, d, mode="sum") for _ in range(tables)])
        n = tables + 1
        li, lj = torch.tril_indices(n, n, offset=-1)
        self.register_buffer("li", li, persistent=False)
        self.register_buffer("lj", lj, persistent=False)
        self.top = nn.Sequential(nn.Linear(d + n * (n - 1) // 2, 256), nn.ReLU(),
                                 nn.Linear(256, 1), nn.Sigmoid())
        with torch.no_grad():  # embeddings ~N(0, 0.1): interactions of order 1
            for e in self.embs:
                e.weight.mul_(0.1)

    def forward(self, dense, indices, offsets):
        x = self.bot(dense)
        ly = [e(indices[i], offsets[i]) for i, e in enumerate(self.embs)]
        t = torch.stack([x] + ly, dim=1)
        z = torch.bmm(t, t.transpose(1, 2))
        zflat = z[:, self.li, self.lj]
        return self.top(torch.cat([x, zflat], dim=1))


def _dlrm_inputs(batch=32, tables=8, n=128, rows=10000):
    """Indices and offsets of variable-size bags (1 or more indices each)."""
    dense = torch.randn(batch, 13)
    idx = torch.randint(0, rows, (tables, n))
    off = torch.zeros(tables, batch, dtype=torch.int64)
    for t in range(tables):
        cuts = torch.randperm(n - 1)[:batch - 1] + 1
        off[t, 1:] = torch.sort(cuts).values
    return [dense, idx, off]


# Each entry: name -> dict(build=callable returning module,
#   inputs=[(name, shape)], outputs=[names], dynamic={name: {axis: dimname}},
#   extra_batches=[int])
def _zoo():
    z = {}
    z["deep_wide"] = dict(
        build=lambda: DeepAndWide(),
        inputs=[("ad_emb_packed", [1, 1, 32]), ("user_emb", [1, 1, 32]),
                ("wide", [1, 50])],
        outputs=["output"],
        dynamic={"ad_emb_packed": {0: "batch"}, "user_emb": {0: "batch"},
                 "wide": {0: "batch"}, "output": {0: "batch"}},
        extra_batches=[8])
    # batch 0: the empty-batch policy (every op runs on empty tensors, outputs are empty)
    z["all_ops_dyn"] = dict(
        build=lambda: AllOpsDynamic(), inputs=[("x", [2, 3, 12, 12])],
        outputs=["logits", "feats"],
        dynamic={"x": {0: "batch"}, "logits": {0: "batch"}, "feats": {0: "batch"}},
        extra_batches=[5, 0])
    z["mlp"] = dict(build=make_mlp, inputs=[("input", [1, 512])],
                    outputs=["output"], dynamic={}, extra_batches=[])
    # densenet121: DenseNet blocks, where every layer concatenates all earlier features
    for tv in ("resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1", "densenet121"):
        z[tv] = dict(build=(lambda tv=tv: make_torchvision(tv)),
                     inputs=[("input", [1, 3, 224, 224])],
                     outputs=["output"], dynamic={}, extra_batches=[])
    # Control flow: torch.jit.script'ed (script=True) so that data-dependent
    # Python control flow becomes ONNX If / Loop. make_inputs gives the inputs
    # (any dtype); extra_inputs(xs) more named data sets (the other branch,
    # other trip counts), saved as in_<tag>/ref_<tag>.
    z["control_if"] = dict(
        build=ControlIf, script=True, inputs=[("x", [4, 16])], outputs=["y"],
        dynamic={}, extra_batches=[],
        make_inputs=lambda: [torch.randn(4, 16).abs() + 0.1],
        extra_inputs=lambda xs: [("else", [-xs[0]])])
    z["control_loop"] = dict(
        build=ControlLoop, script=True, inputs=[("x", [4, 16]), ("n", [])],
        outputs=["y"], dynamic={}, extra_batches=[],
        make_inputs=lambda: [torch.randn(4, 16), torch.tensor(8, dtype=torch.int64)],
        extra_inputs=lambda xs: [("n0", [xs[0], torch.tensor(0, dtype=torch.int64)]),
                                 ("n3", [xs[0], torch.tensor(3, dtype=torch.int64)])])
    z["dlrm_small"] = dict(
        build=DLRMSmall, inputs=[("dense", [32, 13]), ("indices", [8, 128]),
                                 ("offsets", [8, 32])],
        outputs=["y"], dynamic={}, extra_batches=[], make_inputs=_dlrm_inputs,
        extra_inputs=lambda xs: [("b", _dlrm_inputs())])
    # issue 9: recurrent models, transformers, and two more torchvision CNNs
    z["lstm"] = dict(build=LSTMModel, inputs=[("input", [4, 32, 128])],
                     outputs=["output"], dynamic={}, extra_batches=[])
    z["gru"] = dict(build=GRUModel, inputs=[("input", [50, 1, 64])],
                    outputs=["output"], dynamic={}, extra_batches=[])
    z["bert4"] = dict(build=Bert4,
                      inputs=[("input_ids", [1, 128], _ids(8000)),
                              ("attention_mask", [1, 128], _attention_mask)],
                      outputs=["hidden"], dynamic={}, extra_batches=[])
    z["gpt2mini"] = dict(build=GPT2Mini, inputs=[("input_ids", [1, 64], _ids(8000))],
                         outputs=["logits"], dynamic={}, extra_batches=[])
    for tv in ("mobilenet_v3_small", "efficientnet_b0"):
        z[tv] = dict(build=(lambda tv=tv: make_torchvision(tv)),
                     inputs=[("input", [1, 3, 224, 224])],
                     outputs=["output"], dynamic={}, extra_batches=[])
    return z


# --------------------------------------------------------------------------
# Export


def _save_npy(path, t):
    a = t.detach().cpu().numpy()
    if a.dtype != np.int64 and a.dtype != np.bool_:
        a = a.astype(np.float32)
    tmp = f"{path}.{os.getpid()}.tmp"  # two exporters may share a directory
    with open(tmp, "wb") as f:
        np.save(f, a.copy(order="C"))  # ascontiguousarray would make a 0-d array 1-d
    os.replace(tmp, path)


def _script_hash():
    import hashlib
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _stats(t):
    a = t.detach().double()
    if a.numel() == 0:
        return {"min": 0.0, "max": 0.0, "mean": 0.0, "std": 0.0, "finite": True, "empty": True}
    return {"min": float(a.min()), "max": float(a.max()),
            "mean": float(a.mean()), "std": float(a.std(unbiased=False)),
            "finite": bool(torch.isfinite(a).all())}


def _make_input(spec_in, shape=None):
    """An input tensor: (name, shape) is randn; (name, shape, gen) calls gen(shape)."""
    shape = list(spec_in[1]) if shape is None else shape
    return spec_in[2](shape) if len(spec_in) > 2 else torch.randn(*shape)


def _with_batch(shape, b):
    return [b] + list(shape[1:])


def _run(model, xs):
    with torch.no_grad():
        y = model(*xs)
    return list(y) if isinstance(y, (tuple, list)) else [y]


def _check_sane(name, ys):
    for y in ys:
        if y.numel() == 0:
            continue  # an empty batch has nothing to check
        st = _stats(y)
        # A single value has no spread: check it is not tiny instead.
        spread = st["std"] if y.numel() > 1 else abs(st["mean"])
        if not st["finite"] or spread <= 1e-3:
            raise RuntimeError(f"{name}: degenerate output {st}")


def _up_to_date(d, script_hash):
    meta = os.path.join(d, "meta.json")
    onnx_path = os.path.join(d, "model.onnx")
    if not (os.path.exists(meta) and os.path.exists(onnx_path)):
        return False
    try:
        with open(meta) as f:
            return json.load(f).get("exporter_sha256") == script_hash
    except (OSError, ValueError):
        return False


def export_one(name, spec, out_dir, script_hash):
    import onnx

    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    meta_path = os.path.join(d, "meta.json")
    if os.path.exists(meta_path):
        os.remove(meta_path)  # a half-written directory never looks up to date

    seed = _seed(name)
    model = spec["build"]()
    n_bn = randomize_batchnorm(model)
    model.eval()

    in_names = [i[0] for i in spec["inputs"]]
    out_names = spec["outputs"]
    if "make_inputs" in spec:
        xs = spec["make_inputs"]()
    else:
        xs = [_make_input(i) for i in spec["inputs"]]
    ys = _run(model, xs)
    _check_sane(name, ys)
    named = [(tag, x2, _run(model, x2)) for tag, x2 in spec.get("extra_inputs", lambda _: [])(xs)]
    for tag, _, y2 in named:
        _check_sane(f"{name}/{tag}", y2)
    if spec.get("script"):
        model = torch.jit.script(model)

    # Extra batch sizes for models with a dynamic batch.
    extra = []
    for b in spec["extra_batches"]:
        xb = [_make_input(i, _with_batch(i[1], b)) for i in spec["inputs"]]
        yb = _run(model, xb)
        _check_sane(name, yb)
        extra.append((b, xb, yb))

    onnx_path = os.path.join(d, "model.onnx")
    onnx_tmp = f"{onnx_path}.{os.getpid()}.tmp"
    dyn = {k: {int(a): v for a, v in ax.items()}
           for k, ax in spec["dynamic"].items()}
    with warnings.catch_warnings():
        # PRESERVE + constant folding warns about models in training mode;
        # ours is in eval mode, so nothing is mutated.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model, tuple(xs), onnx_tmp,
            export_params=True, opset_version=OPSET,
            do_constant_folding=True,
            training=torch.onnx.TrainingMode.PRESERVE,
            input_names=in_names, output_names=out_names,
            dynamic_axes=dyn if dyn else None)

    m = onnx.load(onnx_tmp)
    onnx.checker.check_model(m)
    os.replace(onnx_tmp, onnx_path)
    ops = {}
    for node in m.graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1

    for sub in ("in", "ref"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    for n, x in zip(in_names, xs):
        _save_npy(os.path.join(d, "in", n + ".npy"), x)
    for n, y in zip(out_names, ys):
        _save_npy(os.path.join(d, "ref", n + ".npy"), y)
    extra_sets = []
    for b, xb, yb in extra:
        din, dref = f"in{b}", f"ref{b}"
        os.makedirs(os.path.join(d, din), exist_ok=True)
        os.makedirs(os.path.join(d, dref), exist_ok=True)
        for n, x in zip(in_names, xb):
            _save_npy(os.path.join(d, din, n + ".npy"), x)
        for n, y in zip(out_names, yb):
            _save_npy(os.path.join(d, dref, n + ".npy"), y)
        extra_sets.append({"in": din, "ref": dref, "batch": b,
                           "output_stats": {n: _stats(y) for n, y
                                            in zip(out_names, yb)}})
    for tag, x2, y2 in named:
        din, dref = f"in_{tag}", f"ref_{tag}"
        os.makedirs(os.path.join(d, din), exist_ok=True)
        os.makedirs(os.path.join(d, dref), exist_ok=True)
        for n, x in zip(in_names, x2):
            _save_npy(os.path.join(d, din, n + ".npy"), x)
        for n, y in zip(out_names, y2):
            _save_npy(os.path.join(d, dref, n + ".npy"), y)
        extra_sets.append({"in": din, "ref": dref, "batch": int(x2[0].shape[0]),
                           "output_stats": {n: _stats(y) for n, y in zip(out_names, y2)}})

    meta = {
        "name": name,
        "exporter_sha256": script_hash,
        "opset": OPSET,
        "seed": seed,
        "inputs": [{"name": n, "shape": list(x.shape),
                    "dtype": "int64" if x.dtype == torch.int64 else "float32"}
                   for n, x in zip(in_names, xs)],
        "outputs": [{"name": n, "shape": list(y.shape), "dtype": "float32"}
                    for n, y in zip(out_names, ys)],
        "dynamic": {k: {str(a): v for a, v in ax.items()}
                    for k, ax in spec["dynamic"].items()},
        "extra_sets": extra_sets,
        "batchnorm_layers": n_bn,
        "op_counts": dict(sorted(ops.items())),
        "output_stats": {n: _stats(y) for n, y in zip(out_names, ys)},
    }
    tmp = f"{meta_path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    os.replace(tmp, meta_path)  # written last: marks the directory complete
    return meta, os.path.getsize(onnx_path)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--only", default="",
                    help="comma-separated model names (default: all)")
    ap.add_argument("--force", action="store_true",
                    help="re-export even if up to date")
    args = ap.parse_args(argv)

    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    torch.use_deterministic_algorithms(True)
    zoo = _zoo()
    names = list(zoo)
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        bad = [n for n in names if n not in zoo]
        if bad:
            print(f"unknown model(s): {', '.join(bad)}; known: {', '.join(zoo)}",
                  file=sys.stderr)
            return 2

    os.makedirs(args.out_dir, exist_ok=True)
    script_hash = _script_hash()
    t_all = time.time()
    for name in names:
        d = os.path.join(args.out_dir, name)
        if not args.force and _up_to_date(d, script_hash):
            print(f"{name}: up to date, skipped")
            continue
        t0 = time.time()
        meta, size = export_one(name, zoo[name], args.out_dir, script_hash)
        dt = time.time() - t0
        for o in meta["outputs"]:
            st = meta["output_stats"][o["name"]]
            print(f"{name}: {dt:.1f}s, {size / 1e6:.2f} MB, "
                  f"{o['name']}{o['shape']} min={st['min']:.4g} "
                  f"max={st['max']:.4g} mean={st['mean']:.4g} "
                  f"std={st['std']:.4g}")
        for e in meta["extra_sets"]:
            for n, st in e["output_stats"].items():
                print(f"{name}: {e['ref']}/{n} (batch {e['batch']}) "
                      f"min={st['min']:.4g} max={st['max']:.4g} "
                      f"mean={st['mean']:.4g} std={st['std']:.4g}")
        sys.stdout.flush()
    print(f"total: {time.time() - t_all:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
