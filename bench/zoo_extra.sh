#!/bin/bash
# The torchvision model zoo beyond the e2e tests, for a breadth sweep and for benchmarking only:
# exports models with random weights (fixed seed per name) into a scratch directory, checks
# flatrt's output against PyTorch's and runs bench/compare.sh on them. docs/zoo.md has the last
# sweep's results. Never point it at the shared models dir; CI does not run it.
#
# usage: bench/zoo_extra.sh [options] SCRATCH_DIR [-- COMPARE_ARGS...]
#   SCRATCH_DIR       where the models go: SCRATCH_DIR/NAME/{model.onnx,in/,ref/,meta.json}, the
#                     layout of tests/models/export_zoo.py (whose export_one writes them: fixed
#                     seed per name, random BatchNorm statistics, opset 13, PyTorch's outputs in ref/)
#   -b BUILD_DIR      flatrt build dir (default: <repo>/build)
#   -m NAMES          comma-separated model names and/or groups (default: extra):
#                       extra  googlenet (aux_logits=False), regnet_y_400mf, shufflenet_v2_x1_0
#                       incep  inception_v3 (aux_logits=False, transform_input=False, 299x299)
#                       cls    alexnet vgg11_bn resnet34 resnext50_32x4d wide_resnet50_2
#                              mnasnet1_0 mobilenet_v3_large efficientnet_b1 efficientnet_v2_s
#                              regnet_x_400mf shufflenet_v2_x0_5 squeezenet1_0 densenet169
#                              convnext_tiny vit_b_16 swin_t (all 1x3x224x224; vit's
#                              zero-initialized head gets N(0, 0.02) weights)
#                       seg    lraspp_mobilenet_v3_large deeplabv3_mobilenet_v3_large fcn_resnet50
#                              (output "out" only, aux_loss off, 1x3x224x224)
#                       video  r3d_18 (1x3x8x112x112)
#                       det    ssdlite320_heads (its backbone and head: 1x3x320x320 -> raw box
#                              regressions and class logits), ssdlite320_mobilenet_v3_large (the
#                              whole detector, image 3x320x320 -> boxes, scores, labels; class
#                              head scaled x30 so the scores spread; docs/zoo.md: with random
#                              weights its NMS order is not determined, PyTorch vs flatrt or ORT)
#                       zoo    extra,incep,cls,seg,video,det
#                     fasterrcnn_mobilenet_v3_large_320_fpn (in no group: with random weights
#                     its outputs are empty, docs/zoo.md) and any other torchvision.models
#                     classifier name (1x3x224x224) work too
#   -x                check each model in 4 configurations: --threads 1 and 2, each with the
#                     oneDNN provider on and off (FRT_DNNL=0); default: 1 thread, provider on
#   -n                export and check only, no benchmark
#   COMPARE_ARGS      passed to bench/compare.sh (default: -r 3 -s 2)
# Needs /usr/bin/python3 with torch 1.13, torchvision, onnx, numpy. The check runs `flatrt run`
# on every in/*.npy and compares every ref/*.npy with the project's rule: max |flatrt - PyTorch|
# <= 1e-4 * max |PyTorch| + 1e-5, same shape. A failed export, load or check is reported and the
# script goes on with the next model; the exit status is 1 if any failed. The benchmark runs only
# the models that passed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
build_dir=$repo/build
names=extra
bench=1
matrix=0
while getopts ":b:m:nxh" opt; do
    case $opt in
    b) build_dir=$OPTARG ;;
    m) names=$OPTARG ;;
    n) bench=0 ;;
    x) matrix=1 ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "zoo_extra.sh: SCRATCH_DIR missing" >&2; exit 2; }
dir=$1
shift
[ "${1:-}" = "--" ] && shift
compare_args=("$@")
[ ${#compare_args[@]} -gt 0 ] || compare_args=(-r 3 -s 2)
case $(realpath -m "$dir") in
*/build/models | */build/models/*) echo "zoo_extra.sh: refusing a shared models dir: $dir" >&2; exit 2 ;;
esac
mkdir -p "$dir"

# Expand the groups.
declare -A group=(
    [extra]="googlenet regnet_y_400mf shufflenet_v2_x1_0"
    [incep]="inception_v3"
    [cls]="alexnet vgg11_bn resnet34 resnext50_32x4d wide_resnet50_2 mnasnet1_0 mobilenet_v3_large
           efficientnet_b1 efficientnet_v2_s regnet_x_400mf shufflenet_v2_x0_5 squeezenet1_0
           densenet169 convnext_tiny vit_b_16 swin_t"
    [seg]="lraspp_mobilenet_v3_large deeplabv3_mobilenet_v3_large fcn_resnet50"
    [video]="r3d_18"
    [det]="ssdlite320_heads ssdlite320_mobilenet_v3_large"
)
group[zoo]="${group[extra]} ${group[incep]} ${group[cls]} ${group[seg]} ${group[video]} ${group[det]}"
list=()
IFS=, read -ra req <<<"$names"
for n in "${req[@]}"; do
    if [ -n "${group[$n]:-}" ]; then
        for m in ${group[$n]}; do list+=("$m"); done
    else
        list+=("$n")
    fi
done

# Export (a model whose export fails is listed in $dir/export_failed.txt and skipped).
/usr/bin/python3 - "$repo/tests/models" "$dir" "$(IFS=,; echo "${list[*]}")" <<'PY' || true
import os, sys, traceback, warnings
sys.path.insert(0, sys.argv[1])
import torch
import export_zoo as ez

out, names = sys.argv[2], sys.argv[3].split(",")
torch.set_num_threads(2)
warnings.simplefilter("ignore")


class SegOut(torch.nn.Module):
    """A torchvision segmentation model's dict output -> its "out" tensor."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


class DetOut(torch.nn.Module):
    """A torchvision detector on one image [3,H,W] -> (boxes [N,4], scores [N], labels [N])."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        d = self.m([x])[0]
        return d["boxes"], d["scores"], d["labels"]


class DetHeads(torch.nn.Module):
    """A torchvision SSD's backbone and head on [1,3,H,W] -> (bbox_regression [1,A,4],
    cls_logits [1,A,classes]): the detector without its box decoding and NMS."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        h = self.m.head(list(self.m.backbone(x).values()))
        return h["bbox_regression"], h["cls_logits"]


def build(name):
    import torchvision
    tm = torchvision.models
    if name == "googlenet":
        return tm.googlenet(weights=None, aux_logits=False, init_weights=True)
    if name == "inception_v3":  # transform_input=False: no input rescaling in the graph
        return tm.inception_v3(weights=None, aux_logits=False, init_weights=True,
                               transform_input=False)
    if name in ("lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large", "fcn_resnet50"):
        kw = {} if name.startswith("lraspp") else {"aux_loss": False}
        return SegOut(getattr(tm.segmentation, name)(weights=None, weights_backbone=None, **kw))
    if name == "fasterrcnn_mobilenet_v3_large_320_fpn":
        return DetOut(tm.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
            weights=None, weights_backbone=None))
    if name == "r3d_18":
        m = tm.video.r3d_18(weights=None)
        for blk in m.modules():  # export_one's residual-gain rule looks for BasicBlock.bn2
            if type(blk).__name__ == "BasicBlock":
                blk.bn2 = blk.conv2[1]
        return m
    if name in ("ssdlite320_mobilenet_v3_large", "ssdlite320_heads"):
        m = tm.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
        with torch.no_grad():  # random logits are all ~0: spread the class scores
            for seq in m.head.classification_head.module_list:
                seq[-1].weight.mul_(30.0)
                seq[-1].bias.normal_(0.0, 1.0)
        return DetHeads(m) if name == "ssdlite320_heads" else DetOut(m)
    m = getattr(tm, name)(weights=None)
    if name.startswith("vit_"):  # torchvision zero-initializes the head: the output would be 0
        torch.nn.init.normal_(m.heads.head.weight, std=0.02)
    return m


def spec_of(name):
    outs = ["output"]
    if name == "inception_v3":
        shape = [1, 3, 299, 299]
    elif name == "r3d_18":
        shape = [1, 3, 8, 112, 112]
    elif name == "ssdlite320_heads":
        shape, outs = [1, 3, 320, 320], ["bbox_regression", "cls_logits"]
    elif name.startswith("ssdlite320") or name.startswith("fasterrcnn"):
        shape, outs = [3, 320, 320], ["boxes", "scores", "labels"]
    else:
        shape = [1, 3, 224, 224]
    return dict(build=(lambda n=name: build(n)), inputs=[("input", shape)], outputs=outs,
                dynamic={}, extra_batches=[])


h = "zoo_extra:" + ez._script_hash()
failed = []
for name in names:
    if ez._up_to_date(os.path.join(out, name), h):
        print(f"{name}: up to date")
        continue
    try:
        ez.export_one(name, spec_of(name), out, h)
        print(f"{name}: exported")
    except Exception as e:  # torch 1.13's exporter cannot do every model: note it, go on
        traceback.print_exc(limit=2)
        print(f"{name}: EXPORT FAILED: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        failed.append(name)
with open(os.path.join(out, "export_failed.txt"), "w") as f:
    f.write("".join(n + "\n" for n in failed))
PY

flatrt=${FLATRT:-$build_dir/flatrt}
if [ $matrix = 1 ]; then configs=("1 1" "1 0" "2 1" "2 0"); else configs=("1 1"); fi
fail=0
passed=()
for n in "${list[@]}"; do
    if [ ! -f "$dir/$n/meta.json" ] || grep -qx "$n" "$dir/export_failed.txt" 2>/dev/null; then
        echo "$n: not exported"
        fail=1
        continue
    fi
    ins=()
    for f in "$dir/$n"/in/*.npy; do ins+=(--input "$(basename "$f" .npy)=$f"); done
    ok=1
    for c in "${configs[@]}"; do
        read -r threads dnnl <<<"$c"
        tag="threads=$threads dnnl=$dnnl"
        tmp=$(mktemp -d)
        st=0
        FRT_DNNL=$dnnl "$flatrt" run "$dir/$n/model.onnx" "${ins[@]}" --threads "$threads" \
            --output-dir "$tmp" >"$tmp/log" 2>&1 || st=$?
        if [ $st != 0 ]; then
            echo "$n [$tag]: flatrt run failed (status $st): $(tail -n 3 "$tmp/log" | tr '\n' ' ')"
            ok=0
            rm -rf "$tmp"
            continue
        fi
        /usr/bin/python3 - "$dir/$n/ref" "$tmp" "$n [$tag]" <<'PY' || ok=0
import glob, os, sys, numpy as np
ok = True
for rf in sorted(glob.glob(os.path.join(sys.argv[1], "*.npy"))):
    out = os.path.basename(rf)[:-4]
    yf = os.path.join(sys.argv[2], out + ".npy")
    if not os.path.exists(yf):
        print(f"{sys.argv[3]} {out}: no output")
        ok = False
        continue
    r, y = np.load(rf), np.load(yf)
    if r.shape != y.shape:
        print(f"{sys.argv[3]} {out}: shape {y.shape} != PyTorch's {r.shape}: MISMATCH")
        ok = False
        continue
    if r.size == 0:
        print(f"{sys.argv[3]} {out}: empty, shapes agree (ok)")
        continue
    r64, y64 = r.astype(np.float64), y.astype(np.float64)
    err, mx = float(np.abs(r64 - y64).max()), float(np.abs(r64).max())
    good = err <= 1e-4 * mx + 1e-5
    print(f"{sys.argv[3]} {out}: max abs err {err:.3g}, / max abs ref = {err / max(mx, 1e-30):.3g}"
          f" ({'ok' if good else 'MISMATCH'})")
    ok = ok and good
sys.exit(0 if ok else 1)
PY
        rm -rf "$tmp"
    done
    if [ $ok = 1 ]; then passed+=("$n"); else fail=1; fi
done
[ $fail = 0 ] || echo "zoo_extra.sh: failed (export, load or check): see above" >&2
if [ $bench = 1 ] && [ ${#passed[@]} -gt 0 ]; then
    bash "$here/compare.sh" -d "$dir" -b "$build_dir" "${compare_args[@]}" "${passed[@]}"
fi
exit $fail
