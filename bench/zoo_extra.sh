#!/bin/bash
# More torchvision CNNs (Inception-, RegNet- and ShuffleNet-style) for benchmarking only: exports
# googlenet (aux_logits=False), inception_v3 (aux_logits=False, input 299x299), regnet_y_400mf and
# shufflenet_v2_x1_0 with random weights into a scratch directory, checks flatrt's output against PyTorch's and runs bench/compare.sh on them.
# Never point it at the shared models dir; CI does not run it.
#
# usage: bench/zoo_extra.sh [options] SCRATCH_DIR [-- COMPARE_ARGS...]
#   SCRATCH_DIR       where the models go: SCRATCH_DIR/NAME/{model.onnx,in/,ref/,meta.json}, the
#                     layout of tests/models/export_zoo.py (whose export_one writes them: fixed
#                     seed per name, random BatchNorm statistics, opset 13, PyTorch's outputs in ref/)
#   -b BUILD_DIR      flatrt build dir (default: <repo>/build)
#   -m NAMES          comma-separated subset of googlenet,regnet_y_400mf,shufflenet_v2_x1_0,
#                     inception_v3 (default: all but inception_v3)
#   -n                export and check only, no benchmark
#   COMPARE_ARGS      passed to bench/compare.sh (default: -r 3 -s 2)
# Needs /usr/bin/python3 with torch 1.13, torchvision, onnx, numpy. The check runs `flatrt run`
# on in/ and compares with ref/ (max abs error relative to the output's max abs, <= 1e-4).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
build_dir=$repo/build
names=googlenet,regnet_y_400mf,shufflenet_v2_x1_0
bench=1
while getopts ":b:m:nh" opt; do
    case $opt in
    b) build_dir=$OPTARG ;;
    m) names=$OPTARG ;;
    n) bench=0 ;;
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

/usr/bin/python3 - "$repo/tests/models" "$dir" "$names" <<'PY'
import os, sys, warnings
sys.path.insert(0, sys.argv[1])
import torch
import export_zoo as ez

out, names = sys.argv[2], sys.argv[3].split(",")
torch.set_num_threads(2)
warnings.simplefilter("ignore")

def build(name):
    import torchvision
    if name == "googlenet":
        return torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True)
    if name == "inception_v3":  # transform_input=False: no input rescaling in the graph
        return torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=True,
                                               transform_input=False)
    return getattr(torchvision.models, name)(weights=None)

h = "zoo_extra:" + ez._script_hash()
for name in names:
    if ez._up_to_date(os.path.join(out, name), h):
        print(f"{name}: up to date")
        continue
    side = 299 if name == "inception_v3" else 224
    spec = dict(build=(lambda n=name: build(n)), inputs=[("input", [1, 3, side, side])],
                outputs=["output"], dynamic={}, extra_batches=[])
    ez.export_one(name, spec, out, h)
    print(f"{name}: exported")
PY

flatrt=${FLATRT:-$build_dir/flatrt}
fail=0
IFS=, read -ra list <<<"$names"
for n in "${list[@]}"; do
    tmp=$(mktemp -d)
    if ! "$flatrt" run "$dir/$n/model.onnx" --input "input=$dir/$n/in/input.npy" \
        --output-dir "$tmp" >/dev/null; then
        echo "$n: flatrt run failed"
        fail=1
        rm -rf "$tmp"
        continue
    fi
    /usr/bin/python3 - "$dir/$n/ref/output.npy" "$tmp/output.npy" "$n" <<'PY' || fail=1
import sys, numpy as np
r, y = np.load(sys.argv[1]), np.load(sys.argv[2])
err = float(np.abs(r - y).max()) / max(float(np.abs(r).max()), 1e-30)
ok = r.shape == y.shape and err <= 1e-4
print(f"{sys.argv[3]}: max abs err / max abs ref = {err:.3g} ({'ok' if ok else 'MISMATCH'})")
sys.exit(0 if ok else 1)
PY
    rm -rf "$tmp"
done
[ $fail = 0 ] || { echo "zoo_extra.sh: output check failed" >&2; exit 1; }
[ $bench = 1 ] || exit 0
bash "$here/compare.sh" -d "$dir" -b "$build_dir" "${compare_args[@]}" "${list[@]}"
