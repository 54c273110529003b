#!/usr/bin/env bash
# Screenshot of a `flatrt bench --trace` profile for the docs: traces MODEL's runs, draws them with
# scripts/trace_view.py (a self-contained HTML/SVG timeline; the same JSON opens in Perfetto and
# chrome://tracing) and has headless Chromium (Debian's `chromium`) save the page as a PNG.
# usage: scripts/trace_screenshot.sh [-b BUILD_DIR] [-t THREADS] [-o OUT.png] [-w WIDTH] MODEL.onnx
#        [extra flatrt bench options...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=build threads=2 out=docs/trace.png width=1600
while getopts "b:t:o:w:" o; do
  case $o in
    b) build=$OPTARG ;; t) threads=$OPTARG ;; o) out=$OPTARG ;; w) width=$OPTARG ;;
    *) sed -n 2,6p "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
case $out in /*) ;; *) out=$PWD/$out ;; esac
[ $# -ge 1 ] || { sed -n 2,6p "$0"; exit 2; }
model=$1
shift
command -v chromium >/dev/null || { echo "trace_screenshot.sh: needs chromium (apt-get install chromium)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/flatrt" bench "$model" --threads "$threads" --iters 20 --warmup 5 --trace "$tmp/trace.json" "$@" \
  | grep '^trace:'
name=$(basename "$(dirname "$model")")
[ "$name" != . ] || name=$(basename "$model" .onnx)
/usr/bin/python3 scripts/trace_view.py "$tmp/trace.json" "$tmp/trace.html" \
  --title "$name: flatrt bench --threads $threads --trace ($(date -u +%Y-%m-%d), load $(cut -d' ' -f1 /proc/loadavg))"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="$width,330" \
  --screenshot="$out" "file://$tmp/trace.html" 2>/dev/null
echo "wrote $out"
