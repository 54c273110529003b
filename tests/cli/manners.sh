#!/bin/sh
# Tests of the command-line manners of the flatrt tool (issue 12), run by ctest (tests/cli.cmake):
#   manners.sh FLATRT_BINARY SOURCE_DIR CASE [MODELS_DIR]
# CASE: help getopt progress json shape random input_dir info_unsupported info_nodes info_json
# plan_svg plan_elide (plan_elide uses MODELS_DIR/resnet18). Each case exits 0 on pass and prints
# what failed otherwise. Uses the bundled digits example (examples/digits).
set -eu

FLATRT=$1
SRC=$2
CASE=$3
MODELS=${4:-}
MODEL=$SRC/examples/digits/digits.onnx
SAMPLE=$SRC/examples/digits/samples/digit_1_label6.npy
PY=/usr/bin/python3
. "$SRC/tests/cli/lib.sh"

case $CASE in
help)
    # each command's own usage, the same from `help CMD` and `CMD --help`
    for cmd in run bench info plan check; do
        expect 0 "help $cmd" -- "$FLATRT" help "$cmd"
        cp "$TMP/out" "$TMP/help_$cmd"
        contains "$TMP/out" "usage: flatrt $cmd " "help $cmd"
        expect 0 "$cmd --help" -- "$FLATRT" "$cmd" --help
        cmp -s "$TMP/out" "$TMP/help_$cmd" || fail "'$cmd --help' differs from 'help $cmd'"
        expect 0 "$cmd -h" -- "$FLATRT" "$cmd" -h
        cmp -s "$TMP/out" "$TMP/help_$cmd" || fail "'$cmd -h' differs from 'help $cmd'"
        # every option line has a description after the option
        grep -E '^  (-h, )?--' "$TMP/help_$cmd" | grep -Ev '^  [^ ].* {2,}[^ ]' |
            grep -Ev '^  (-h, )?--[a-z-]+( [A-Za-z.=_,]+)?$' >"$TMP/bad" || true
        [ ! -s "$TMP/bad" ] || fail "help $cmd: option lines without description: $(cat "$TMP/bad")"
    done
    contains "$TMP/help_bench" "--iters N" "help bench"
    contains "$TMP/help_bench" "--json" "help bench"
    lacks "$TMP/help_bench" "--output-dir" "help bench (a run option)"
    contains "$TMP/help_run" "--random" "help run"
    contains "$TMP/help_run" "--input-dir DIR" "help run"
    lacks "$TMP/help_run" "--iters" "help run (a bench option)"
    contains "$TMP/help_info" "--nodes" "help info"
    contains "$TMP/help_info" "--json" "help info"
    contains "$TMP/help_plan" "--svg FILE" "help plan"
    # the help of one command is not the global text
    lacks "$TMP/help_run" "commands:" "help run"
    expect 2 "help of an unknown command" -- "$FLATRT" help frobnicate
    contains "$TMP/err" "frobnicate" "help of an unknown command"
    ;;
getopt)
    # --opt VALUE and --opt=VALUE, options before or after MODEL
    expect 0 "--iters 7" -- "$FLATRT" bench "$MODEL" --iters 7 --warmup 1
    tail -n 1 "$TMP/out" | grep -q ' warmup=1 iters=7 ' || fail "--iters 7: $(tail -n 1 "$TMP/out")"
    expect 0 "--iters=7" -- "$FLATRT" bench --iters=7 --warmup=1 "$MODEL" --lat-file="$TMP/lat"
    tail -n 1 "$TMP/out" | grep -q ' warmup=1 iters=7 ' || fail "--iters=7: $(tail -n 1 "$TMP/out")"
    [ "$(wc -l <"$TMP/lat")" -eq 7 ] || fail "--lat-file=PATH did not get 7 lines"
    expect 0 "--planner=greedy" -- "$FLATRT" bench "$MODEL" --iters=3 --warmup=0 --planner=greedy
    tail -n 1 "$TMP/out" | grep -q ' planner=greedy ' || fail "--planner=greedy"
    # unknown options: the option and the command are named
    expect 2 "unknown bench option" -- "$FLATRT" bench "$MODEL" --frobnicate=3
    contains "$TMP/err" "unknown option '--frobnicate' for 'bench'" "unknown bench option"
    expect 2 "unknown info option" -- "$FLATRT" info "$MODEL" --iters 3
    contains "$TMP/err" "unknown option '--iters' for 'info'" "unknown info option"
    contains "$TMP/err" "flatrt info --help" "unknown info option points to the command's help"
    expect 2 "flag with a value" -- "$FLATRT" bench "$MODEL" --profile=yes
    contains "$TMP/err" "'--profile' takes no value" "flag with a value"
    expect 2 "missing value" -- "$FLATRT" run "$MODEL" --input
    contains "$TMP/err" "--input needs a value" "missing value"
    expect 2 "ambiguous abbreviation" -- "$FLATRT" bench "$MODEL" --in x
    contains "$TMP/err" "ambiguous option '--in'" "ambiguous abbreviation"
    # check takes its options anywhere too
    expect 2 "check without cases" -- "$FLATRT" check --threads=2
    contains "$TMP/err" "CASE_DIR" "check without cases"
    ;;
progress)
    # piped: phases in order, then the key=value line last; no progress line
    expect 0 "bench piped" -- "$FLATRT" bench "$MODEL" --iters 30 --warmup 3
    for p in "load: " "warm-up: 3 runs in" "timed runs: 30 ..." "latency over 30 runs"; do
        contains "$TMP/out" "$p" "bench phases"
    done
    awk '/^load: /{a=NR} /^warm-up: /{if(!b)b=NR} /^timed runs: /{c=NR} /^latency over/{d=NR}
         END{exit !(a && a<b && b<c && c<d && d<NR)}' "$TMP/out" || fail "bench phases out of order"
    tail -n 1 "$TMP/out" | grep -Eq '^flatrt_version=[^ ]+( [a-z0-9_]+=[^ =]+)*$' ||
        fail "bench last line: $(tail -n 1 "$TMP/out")"
    if grep -q "$(printf '\r')" "$TMP/out" || grep -q 'runs: [0-9]*/[0-9]* runs' "$TMP/out"; then
        fail "progress line written to a pipe"
    fi
    # on a terminal (script(1) gives a pty): a progress line, and the same last line format
    if ! command -v script >/dev/null; then fail "script(1) (util-linux) not found"; fi
    script -qec "'$FLATRT' bench '$MODEL' --iters 30 --warmup 3" /dev/null >"$TMP/tty" 2>&1 ||
        fail "bench on a pty failed"
    grep -aq "$(printf '\r')timed runs: [0-9]*/30 runs" "$TMP/tty" || fail "no progress line on a terminal"
    tr -d '\r' <"$TMP/tty" | grep -a '^flatrt_version=' | grep -q ' iters=30 ' ||
        fail "bench on a pty: no key=value line"
    # stdout is flushed as phases go: a long bench piped into a file shows its phases while it runs
    "$FLATRT" bench "$MODEL" --iters 10000000 --warmup 1 >"$TMP/live" 2>&1 &
    bg_pid=$!
    i=0
    while [ $i -lt 600 ] && ! grep -q "^timed runs: " "$TMP/live"; do
        sleep 0.1
        i=$((i + 1))
    done
    if kill -0 "$bg_pid" 2>/dev/null; then
        grep -q "^timed runs: 10000000 ..." "$TMP/live" || fail "phases not flushed while running: $(cat "$TMP/live")"
        grep -q "^load: " "$TMP/live" || fail "load phase not flushed"
    else
        fail "the long bench ended early: $(cat "$TMP/live")"
    fi
    kill "$bg_pid" 2>/dev/null || true
    wait "$bg_pid" 2>/dev/null || true
    bg_pid=
    ;;
json)
    # stdout: one JSON object with the same figures as the key=value line (on stderr then)
    expect 0 "bench --json" -- "$FLATRT" bench "$MODEL" --iters 20 --warmup 2 --json --shape batch=2
    $PY -m json.tool "$TMP/out" >/dev/null || fail "bench --json: not valid JSON: $(cat "$TMP/out")"
    [ "$(wc -l <"$TMP/out")" -eq 1 ] || fail "bench --json: stdout has more than the object"
    tail -n 1 "$TMP/err" >"$TMP/kv"
    $PY - "$TMP/out" "$TMP/kv" <<'PY' || fail "bench --json figures differ from the key=value line"
import json, sys
j = json.load(open(sys.argv[1]))
kv = dict(p.split("=", 1) for p in open(sys.argv[2]).read().split())
assert list(j) == list(kv), (list(j), list(kv))
for k, v in kv.items():
    if isinstance(j[k], str):
        assert j[k] == v, (k, j[k], v)
    else:
        assert isinstance(j[k], (int, float)) and float(v) == j[k], (k, j[k], v)
assert j["iters"] == 20 and j["warmup"] == 2 and j["planner"] == "standard", j
assert j["outputs"] == "logits:float32:2x10", j["outputs"]
assert j["p50_us"] > 0 and j["peak_rss_kib"] > 0
PY
    # without --json the last line is unchanged key=value pairs
    expect 0 "bench" -- "$FLATRT" bench "$MODEL" --iters 20 --warmup 2
    tail -n 1 "$TMP/out" | grep -Eq '^[a-z0-9_]+=[^ =]+( [a-z0-9_]+=[^ =]+)*$' || fail "bench last line"
    lacks "$TMP/out" "{" "bench without --json"
    ;;
shape)
    # --shape DIM=n sets a symbolic dimension of every random input
    expect 0 "bench --shape batch=3" -- "$FLATRT" bench "$MODEL" --iters 5 --warmup 1 --shape batch=3
    contains "$TMP/out" "input 'image': float32 [3,1,8,8] from random data" "bench --shape batch=3"
    tail -n 1 "$TMP/out" | grep -q 'outputs=logits:float32:3x10' || fail "bench --shape batch=3: $(tail -n 1 "$TMP/out")"
    expect 0 "run --random --shape batch=2" -- "$FLATRT" run "$MODEL" --random --shape=batch=2
    contains "$TMP/out" "output 'logits': float32 [2,10]" "run --shape batch=2"
    expect 0 "plan --shape batch=4" -- "$FLATRT" plan "$MODEL" --shape batch=4 --svg "$TMP/p4.svg"
    expect 0 "plan" -- "$FLATRT" plan "$MODEL" --svg "$TMP/p1.svg"
    [ "$(grep -o 'slab [0-9]*' "$TMP/out")" != "" ] || fail "plan: no slab in $(cat "$TMP/out")"
    cmp -s "$TMP/p1.svg" "$TMP/p4.svg" && fail "plan --shape batch=4 drew the batch-1 plan"
    # per-input shapes still work, and win over the dim name for that input
    expect 0 "bench --shape image=" -- "$FLATRT" bench "$MODEL" --iters 5 --warmup 1 --shape batch=3 --shape image=5,1,8,8
    tail -n 1 "$TMP/out" | grep -q 'outputs=logits:float32:5x10' || fail "--shape image=5,1,8,8"
    expect 1 "unknown name" -- "$FLATRT" bench "$MODEL" --shape height=3
    contains "$TMP/err" "no input or symbolic dimension 'height'" "unknown name"
    contains "$TMP/err" "'batch'" "unknown name (lists the symbolic dims)"
    expect 2 "bad dim value" -- "$FLATRT" bench "$MODEL" --shape batch=2,3
    contains "$TMP/err" "batch" "bad dim value"
    ;;
random)
    expect 0 "run --random" -- "$FLATRT" run "$MODEL" --random
    contains "$TMP/out" "input 'image': float32 [1,1,8,8] from random data" "run --random"
    contains "$TMP/out" "output 'logits': float32 [1,10]" "run --random"
    cp "$TMP/out" "$TMP/r1"
    # same rules as bench: fixed seed by default, --seed changes the data
    expect 0 "run --random again" -- "$FLATRT" run "$MODEL" --random
    grep -v '^run time' "$TMP/out" >"$TMP/a"
    grep -v '^run time' "$TMP/r1" >"$TMP/b"
    cmp -s "$TMP/a" "$TMP/b" || fail "run --random is not reproducible"
    expect 0 "run --random --seed 7" -- "$FLATRT" run "$MODEL" --random --seed 7
    grep -v '^run time' "$TMP/out" >"$TMP/a"
    cmp -s "$TMP/a" "$TMP/b" && fail "run --random --seed 7 gave the default seed's outputs"
    # given inputs win over random ones
    expect 0 "run --random with --input" -- "$FLATRT" run "$MODEL" --random --input "image=$SAMPLE"
    contains "$TMP/out" "argmax 6" "run --random with --input"
    # without --random a missing input is still an error
    expect 1 "run without inputs" -- "$FLATRT" run "$MODEL"
    contains "$TMP/err" "missing input 'image'" "run without inputs"
    contains "$TMP/err" "--random" "run without inputs (suggests --random)"
    ;;
input_dir)
    mkdir -p "$TMP/d1" "$TMP/d2" "$TMP/empty"
    cp "$SAMPLE" "$TMP/d1/image.npy"
    # the same tensor as TensorProto .pb (dims 1,1,8,8, float, name "image")
    printf '\010\001\010\001\010\010\010\010\020\001\102\005image\112\200\002' >"$TMP/d2/image.pb"
    tail -c 256 "$SAMPLE" >>"$TMP/d2/image.pb"
    expect 0 "run --input-dir (.npy)" -- "$FLATRT" run "$MODEL" --input-dir "$TMP/d1"
    contains "$TMP/out" "argmax 6" "run --input-dir (.npy)"
    expect 0 "run --input-dir=(.pb)" -- "$FLATRT" run "$MODEL" "--input-dir=$TMP/d2"
    contains "$TMP/out" "argmax 6" "run --input-dir (.pb)"
    expect 0 "bench --input-dir" -- "$FLATRT" bench "$MODEL" --input-dir "$TMP/d1" --iters 3 --warmup 1
    contains "$TMP/out" "from $TMP/d1/image.npy" "bench --input-dir"
    expect 1 "run --input-dir without the file" -- "$FLATRT" run "$MODEL" --input-dir "$TMP/empty"
    contains "$TMP/err" "missing input 'image'" "run --input-dir without the file"
    expect 0 "run --input-dir without the file --random" -- "$FLATRT" run "$MODEL" --input-dir "$TMP/empty" --random
    expect 1 "run --input-dir missing dir" -- "$FLATRT" run "$MODEL" --input-dir "$TMP/nodir"
    contains "$TMP/err" "nodir" "run --input-dir missing dir"
    # a wrong file in the directory is reported with its path
    cp "$SRC/examples/digits/samples/labels.txt" "$TMP/empty/image.npy"
    expect 1 "run --input-dir bad file" -- "$FLATRT" run "$MODEL" --input-dir "$TMP/empty"
    contains "$TMP/err" "image.npy" "run --input-dir bad file"
    ;;
info_unsupported)
    # a valid model with an operator flatrt does not implement (one node FooBar x -> y, opset 13)
    printf '\010\007\072\065\012\016\012\001x\022\001y\042\006FooBar\022\001gZ\017\012\001x\022\012\012\010\010\001\022\004\012\002\010\001b\017\012\001y\022\012\012\010\010\001\022\004\012\002\010\001B\004\012\000\020\015' >"$TMP/foobar.onnx"
    expect 0 "info on an unsupported model" -- "$FLATRT" info "$TMP/foobar.onnx"
    for text in "opset:     13" "unsupported operators (1):" "FooBar" "inputs (1):" "float32  [1]" \
        "not compiled:"; do
        contains "$TMP/out" "$text" "info on an unsupported model"
    done
    contains "$TMP/err" "cannot be compiled" "info on an unsupported model (warning)"
    expect 0 "info --nodes on an unsupported model" -- "$FLATRT" info "$TMP/foobar.onnx" --nodes
    contains "$TMP/out" "FooBar_0 FooBar  kernel (unsupported)" "info --nodes (unsupported)"
    expect 0 "info --json on an unsupported model" -- "$FLATRT" info "$TMP/foobar.onnx" --json --nodes
    $PY - "$TMP/out" <<'PY' || fail "info --json on an unsupported model"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["loaded"] is False and "FooBar" in d["error"], d
assert d["unsupported"] == [{"op": "FooBar", "domain": "", "nodes": 1}], d["unsupported"]
assert d["inputs"] == [{"name": "x", "dtype": "float32", "shape": [1]}], d["inputs"]
assert d["nodes"][0]["op"] == "FooBar" and d["nodes"][0]["kernel"] == "(unsupported)", d["nodes"]
PY
    # running it still fails, naming the op
    expect 1 "run on an unsupported model" -- "$FLATRT" run "$TMP/foobar.onnx" --random
    contains "$TMP/err" "FooBar" "run on an unsupported model"
    # what the decoder cannot read is an error
    expect 1 "info on a non-model" -- "$FLATRT" info "$SRC/examples/digits/samples/labels.txt"
    [ -s "$TMP/err" ] || fail "info on a non-model: no message"
    ;;
info_nodes)
    expect 0 "info --nodes" -- "$FLATRT" info "$MODEL" --nodes
    n=$(sed -n 's/^nodes (\([0-9]*\)):$/\1/p' "$TMP/out")
    g=$(sed -n 's/^graph: *\([0-9]*\) nodes.*/\1/p' "$TMP/out")
    [ -n "$n" ] && [ "$n" = "$g" ] || fail "info --nodes: 'nodes ($n)' vs graph's $g nodes"
    [ "$(grep -c '^  \[[0-9]*\] ' "$TMP/out")" = "$n" ] || fail "info --nodes: not one entry per node"
    contains "$TMP/out" "/features/features.0/Conv Conv  kernel conv" "info --nodes (kernel)"
    contains "$TMP/out" "in:  image float32 [batch,1,8,8]" "info --nodes (input shape)"
    contains "$TMP/out" "kernel_shape=[3,3]" "info --nodes (attributes)"
    contains "$TMP/out" "out: logits float32 [batch,10]" "info --nodes (output shape)"
    contains "$TMP/out" "kernel (fused)" "info --nodes (fused nodes)"
    contains "$TMP/out" "gemm" "info --nodes (Gemm kernel)"
    # every node has in/out lines
    [ "$(grep -c '^      in: ' "$TMP/out")" = "$n" ] || fail "info --nodes: in: lines"
    [ "$(grep -c '^      out: ' "$TMP/out")" = "$n" ] || fail "info --nodes: out: lines"
    ;;
info_json)
    expect 0 "info --json" -- "$FLATRT" info "$MODEL" --json
    $PY -m json.tool "$TMP/out" >/dev/null || fail "info --json: not valid JSON"
    expect 0 "info --json --nodes" -- "$FLATRT" info "$MODEL" --json --nodes
    $PY -m json.tool "$TMP/out" >/dev/null || fail "info --json --nodes: not valid JSON"
    $PY - "$TMP/out" <<'PY' || fail "info --json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["loaded"] is True and d["opset"] == 13, d
assert d["inputs"] == [{"name": "image", "dtype": "float32", "shape": ["batch", 1, 8, 8]}], d["inputs"]
assert d["outputs"][0]["name"] == "logits", d["outputs"]
assert d["op_types"]["Conv"] >= 1 and d["op_types"]["Gemm"] == 2, d["op_types"]
assert d["memory_plan"]["arena_bytes"] > 0 and d["memory_plan"]["lower_bound_bytes"] > 0
assert d["graph"]["nodes"] == len(d["nodes"]), (d["graph"], len(d["nodes"]))
for n in d["nodes"]:
    assert {"name", "op", "domain", "kernel", "inputs", "outputs", "attributes"} <= set(n), n
conv = [n for n in d["nodes"] if n["op"] == "Conv"][0]
assert conv["attributes"]["kernel_shape"] == [3, 3], conv
assert conv["inputs"][0]["shape"] == ["batch", 1, 8, 8], conv
assert conv["kernel"].startswith("conv"), conv
PY
    # info --json on every bundled ONNX file of the examples
    for m in "$SRC"/examples/*/*.onnx; do
        expect 0 "info --json $m" -- "$FLATRT" info "$m" --json --nodes
        $PY -m json.tool "$TMP/out" >/dev/null || fail "info --json $m: not valid JSON"
    done
    ;;
plan_svg | plan_elide)
    model=$MODEL
    [ "$CASE" = plan_svg ] || model=$MODELS/resnet18/model.onnx
    mkdir -p "$TMP/cwd"
    # --svg - writes the picture to stdout (and no file named "-"), the summary to stderr
    (cd "$TMP/cwd" && "$FLATRT" plan "$model" --svg - >"$TMP/p.svg" 2>"$TMP/p.err") ||
        fail "plan --svg -: $(cat "$TMP/p.err")"
    [ ! -e "$TMP/cwd/-" ] || fail "plan --svg - wrote a file named '-'"
    head -c 4 "$TMP/p.svg" | grep -q '<svg' || fail "plan --svg -: stdout is not SVG"
    expect 0 "plan --svg FILE" -- "$FLATRT" plan "$model" --svg "$TMP/f.svg"
    cmp -s "$TMP/p.svg" "$TMP/f.svg" || fail "plan --svg - and --svg FILE differ"
    $PY - "$TMP/p.svg" "$TMP/p.err" "$TMP/out" "$CASE" <<'PY' || fail "plan: SVG checks"
import re, sys, xml.etree.ElementTree as ET
svg = open(sys.argv[1], encoding="utf-8").read()
root = ET.fromstring(svg)
ns = "{http://www.w3.org/2000/svg}"
rects = [r for r in root.iter(ns + "rect") if r.get("class") == "entry"]
# console count (stderr for --svg -, stdout for --svg FILE) == the picture's count == rectangles
counts = []
for f in sys.argv[2:4]:
    m = re.search(r"(\d+) rectangles", open(f).read())
    assert m, open(f).read()
    counts.append(int(m.group(1)))
pic = [t for t in root.iter(ns + "text") if t.get("class") == "counts"]
m = re.match(r"(\d+) rectangles", pic[0].text)
assert counts[0] == counts[1] == int(m.group(1)) == len(rects) > 0, (counts, pic[0].text, len(rects))
# labels: whole name, or its head and tail around one ellipsis
names = [r.find(ns + "title").text.rsplit(" (", 1)[0] for r in rects]
labels = [t.text for t in root.iter(ns + "text") if t.get("class") == "label"]
assert labels, "no labels"
whole = elided = 0
for lab in labels:
    if lab in names:
        whole += 1
        continue
    assert lab.count("\u2026") == 1, lab
    head, tail = lab.split("\u2026")
    assert head and tail and any(n.startswith(head) and n.endswith(tail) and len(n) > len(lab)
                                 for n in names), lab
    elided += 1
assert whole > 0, labels
if sys.argv[4] == "plan_elide":
    assert elided > 0, labels
print(f"{len(rects)} rectangles, {whole} whole labels, {elided} elided")
PY
    ;;
*)
    echo "unknown case $CASE" >&2
    exit 2
    ;;
esac

finish
