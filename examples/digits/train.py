#!/usr/bin/python3
"""Train the bundled digits classifier and export it to ONNX.

Usage: /usr/bin/python3 examples/digits/train.py [OUT_DIR]
  (OUT_DIR defaults to the directory of this script)

Data: sklearn.datasets.load_digits (1797 8x8 grey images, values 0..16,
shipped inside scikit-learn, so this works offline), scaled to [0,1].
Split: 75% train / 25% test, stratified, fixed seed.

Model (input "image" [batch,1,8,8] float32 -> output "logits" [batch,10]):
  Conv 1->8 3x3 pad 1 -> BatchNorm -> ReLU -> MaxPool 2x2  ([b,8,4,4])
  -> Flatten ([b,128]) -> Linear 128->32 -> ReLU -> Linear 32->10

Writes into OUT_DIR:
  digits.onnx                     opset 13, dynamic batch dim "batch"; the
                                  BatchNormalization node is kept (not fused
                                  into the Conv by the exporter) so the
                                  runtime's BN folding is exercised
  samples/digit_<k>_label<L>.npy  5 test-split images, [1,1,8,8] float32,
                                  with 5 different labels, each classified
                                  correctly by the PyTorch model with a
                                  top-1/top-2 logit gap >= 2
  samples/labels.txt              one line per sample: "<file> <label>"
Prints the test accuracy and each sample's PyTorch logits.
"""

import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SEED = 7
EPOCHS = 40
BATCH = 32
MARGIN = 2.0  # min gap between a sample's top two logits


class DigitsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(8 * 4 * 4, 32),
            nn.ReLU(),
            nn.Linear(32, 10))

    def forward(self, image):
        return self.classifier(self.features(image))


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        pred = model(x).argmax(1)
    return float((pred == y).float().mean())


def main(argv):
    out_dir = argv[0] if argv else os.path.dirname(os.path.abspath(__file__))
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(
        x, y, test_size=0.25, random_state=SEED, stratify=y)
    x_tr, x_te = torch.from_numpy(x_tr), torch.from_numpy(x_te)
    y_tr, y_te = torch.from_numpy(y_tr), torch.from_numpy(y_te)

    model = DigitsNet()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=15, gamma=0.3)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(SEED)
    for epoch in range(EPOCHS):
        model.train()
        perm = torch.randperm(len(x_tr), generator=gen)
        for i in range(0, len(perm), BATCH):
            idx = perm[i:i + BATCH]
            opt.zero_grad()
            loss = loss_fn(model(x_tr[idx]), y_tr[idx])
            loss.backward()
            opt.step()
        sched.step()
        if (epoch + 1) % 10 == 0:
            print(f"epoch {epoch + 1}: loss {loss.item():.4f} "
                  f"train acc {accuracy(model, x_tr, y_tr):.4f}")

    model.eval()
    acc = accuracy(model, x_te, y_te)
    print(f"test accuracy: {acc:.4f} ({len(x_te)} images)")
    if acc <= 0.95:
        print("error: test accuracy should be > 0.95", file=sys.stderr)
        return 1

    os.makedirs(out_dir, exist_ok=True)
    onnx_path = os.path.join(out_dir, "digits.onnx")
    with warnings.catch_warnings():
        # PRESERVE + constant folding warns about models in training mode;
        # this one is in eval mode.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model, (x_te[:1],), onnx_path, export_params=True,
            opset_version=13, do_constant_folding=True,
            training=torch.onnx.TrainingMode.PRESERVE,
            input_names=["image"], output_names=["logits"],
            dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    import onnx
    m = onnx.load(onnx_path)
    onnx.checker.check_model(m, full_check=True)
    print(f"wrote {onnx_path}: {os.path.getsize(onnx_path)} bytes, ops "
          f"{[n.op_type for n in m.graph.node]}")

    # 5 test images with distinct labels, each classified correctly with a
    # logit margin >= MARGIN (so float rounding cannot flip the class).
    sdir = os.path.join(out_dir, "samples")
    os.makedirs(sdir, exist_ok=True)
    for f in os.listdir(sdir):
        if f.endswith(".npy") or f == "labels.txt":
            os.remove(os.path.join(sdir, f))
    with torch.no_grad():
        logits = model(x_te)
    chosen, seen = [], set()
    for i in range(len(x_te)):
        lab = int(y_te[i])
        top2 = torch.topk(logits[i], 2).values
        if (lab in seen or int(logits[i].argmax()) != lab
                or float(top2[0] - top2[1]) < MARGIN):
            continue
        seen.add(lab)
        chosen.append(i)
        if len(chosen) == 5:
            break
    lines = []
    for k, i in enumerate(chosen):
        lab = int(y_te[i])
        name = f"digit_{k}_label{lab}.npy"
        np.save(os.path.join(sdir, name),
                np.ascontiguousarray(x_te[i:i + 1].numpy().astype(np.float32)))
        lines.append(f"{name} {lab}")
        print(f"{name}: logits "
              + " ".join(f"{v:.3f}" for v in logits[i].tolist()))
    with open(os.path.join(sdir, "labels.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
