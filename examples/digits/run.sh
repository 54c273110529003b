#!/usr/bin/env bash
# Classifies the bundled 8x8 digit samples with flatrt and compares with their labels.
# Usage: examples/digits/run.sh [PATH_TO_FLATRT]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
flatrt=${1:-$here/../../build/flatrt}
correct=0 total=0
while read -r file label; do
  out=$("$flatrt" run "$here/digits.onnx" --input "image=$here/samples/$file")
  pred=$(printf '%s\n' "$out" | sed -n 's/.*argmax \([0-9]*\).*/\1/p' | head -n 1)
  total=$((total + 1))
  if [ "$pred" = "$label" ]; then mark=ok; correct=$((correct + 1)); else mark=WRONG; fi
  printf '%-22s label %s  flatrt says %s  %s\n' "$file" "$label" "${pred:-?}" "$mark"
done < "$here/samples/labels.txt"
echo "$correct of $total digits classified correctly"
[ "$correct" -eq "$total" ]
