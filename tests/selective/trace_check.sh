#!/bin/sh
# `flatrt trace` (docs/selective.md): tracing two models at once equals merging their separate
# traces (the format is a sorted set union, so the files are byte-identical); the file is YAML with
# the documented keys; the digits trace names its ops, dtypes and kernels; malformed selection
# files are refused with the line number.
#
#   trace_check.sh FLATRT WORK_DIR MODEL_A MODEL_B
set -eu
flatrt=$1 work=$2 a=$3 b=$4
export FRT_DNNL=0
rm -rf "$work"
mkdir -p "$work"
cd "$work"
"$flatrt" trace "$a" -o a.yaml
"$flatrt" trace "$b" -o b.yaml
"$flatrt" trace "$a" "$b" -o ab.yaml
"$flatrt" trace --merge a.yaml --merge b.yaml -o merged.yaml
cmp ab.yaml merged.yaml
"$flatrt" trace --merge ab.yaml --merge a.yaml -o again.yaml
cmp ab.yaml again.yaml
grep -q '^flatrt_selection: 1$' ab.yaml
grep -Eq '^  - \{domain: ai.onnx, op: Conv, opsets: \[[0-9]+\], dtypes: \[float32\], kernels: \["builtin:conv_' a.yaml
grep -q '^providers: \[builtin' a.yaml
/usr/bin/python3 -c "
import sys, yaml
d = yaml.safe_load(open('ab.yaml'))
assert d['flatrt_selection'] == 1, d
ops = {(o['domain'], o['op']) for o in d['operators']}
for f in ('a.yaml', 'b.yaml'):
    for o in yaml.safe_load(open(f))['operators']:
        assert (o['domain'], o['op']) in ops, o
assert all(isinstance(o['kernels'], list) for o in d['operators'])
print(len(ops), 'operators in the union')
"
# malformed files: refused, naming the file and line
printf 'flatrt_selection: 2\n' >bad1.yaml
printf 'flatrt_selection: 1\noperators:\n  - {op: Conv}\n' >bad2.yaml
printf 'flatrt_selection: 1\nwhat: [x]\n' >bad3.yaml
for f in bad1 bad2 bad3; do
  if "$flatrt" trace --merge $f.yaml -o out.yaml 2>err.txt; then echo "$f.yaml accepted"; exit 1; fi
  cat err.txt
  grep -q "$f.yaml:[0-9]" err.txt
done
# a missing -o and an unknown option are usage errors
if "$flatrt" trace "$a" 2>/dev/null; then echo "trace without -o succeeded"; exit 1; fi
if "$flatrt" trace "$a" --bogus -o x.yaml 2>/dev/null; then echo "unknown option accepted"; exit 1; fi
# --input / --shape names no model has are errors naming them; --shape DIM=n and --output work
if "$flatrt" trace "$a" --shape nosuch=3 -o x.yaml 2>err.txt; then echo "--shape nosuch accepted"; exit 1; fi
grep -q "nosuch" err.txt
if "$flatrt" trace "$a" --input nosuch=x.npy -o x.yaml 2>err.txt; then echo "--input nosuch accepted"; exit 1; fi
grep -q "nosuch" err.txt
"$flatrt" trace "$a" --runs 2 --output a2.yaml
cmp a.yaml a2.yaml
echo "trace ok"
