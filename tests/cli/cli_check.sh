#!/bin/sh
# CLI tests for the flatrt tool, run by ctest (tests/cli.cmake; helpers in tests/cli/lib.sh):
#   cli_check.sh FLATRT_BINARY SOURCE_DIR CASE
# CASE is one of: help usage run info bench errors. Each case exits 0 on pass and prints what
# failed otherwise. Uses the bundled digits example (examples/digits).
set -eu

FLATRT=$1
SRC=$2
CASE=$3
MODEL=$SRC/examples/digits/digits.onnx
SAMPLE=$SRC/examples/digits/samples/digit_1_label6.npy
. "$SRC/tests/cli/lib.sh"

case $CASE in
help)
    expect 0 "--help" -- "$FLATRT" --help
    contains "$TMP/out" "usage: flatrt" "--help"
    contains "$TMP/out" "bench MODEL" "--help"
    expect 0 "help" -- "$FLATRT" help
    contains "$TMP/out" "usage: flatrt" "help"
    expect 0 "help run" -- "$FLATRT" help run
    expect 0 "run --help" -- "$FLATRT" run --help
    contains "$TMP/out" "usage: flatrt" "run --help"
    expect 0 "--version" -- "$FLATRT" --version
    grep -Eq '^flatrt [0-9]+\.[0-9]+\.[0-9]+$' "$TMP/out" || fail "--version output: $(cat "$TMP/out")"
    ;;
usage)
    expect 2 "no arguments" -- "$FLATRT"
    expect 2 "unknown command" -- "$FLATRT" frobnicate
    contains "$TMP/err" "unknown command" "unknown command"
    expect 2 "unknown global option" -- "$FLATRT" --frobnicate
    expect 2 "run without model" -- "$FLATRT" run
    contains "$TMP/err" "MODEL" "run without model"
    expect 2 "unknown run option" -- "$FLATRT" run "$MODEL" --frobnicate
    contains "$TMP/err" "unknown option '--frobnicate'" "unknown run option"
    expect 2 "bench-only option on run" -- "$FLATRT" run "$MODEL" --iters 5
    expect 2 "bad --iters" -- "$FLATRT" bench "$MODEL" --iters x
    contains "$TMP/err" "--iters" "bad --iters"
    expect 2 "zero --iters" -- "$FLATRT" bench "$MODEL" --iters 0
    expect 2 "zero --runtimes" -- "$FLATRT" bench "$MODEL" --runtimes 0
    expect 2 "missing option value" -- "$FLATRT" bench "$MODEL" --warmup
    expect 2 "bad --planner" -- "$FLATRT" bench "$MODEL" --planner fancy
    expect 2 "--shape without =" -- "$FLATRT" bench "$MODEL" --shape image
    expect 2 "--input with empty name" -- "$FLATRT" run "$MODEL" --input =x.npy
    expect 2 "extra argument" -- "$FLATRT" info "$MODEL" "$MODEL"
    expect 2 "help with junk" -- "$FLATRT" help frobnicate
    ;;
run)
    expect 0 "run" -- "$FLATRT" run "$MODEL" --input "image=$SAMPLE" --output-dir "$TMP/o/sub"
    contains "$TMP/out" "output 'logits': float32 [1,10]" "run"
    contains "$TMP/out" "argmax 6" "run (sample labelled 6)"
    contains "$TMP/out" "min " "run"
    [ -s "$TMP/o/sub/logits.npy" ] || fail "run did not write logits.npy"
    head -c 6 "$TMP/o/sub/logits.npy" | od -An -c | grep -q 'N   U   M   P   Y' ||
        fail "logits.npy is not a .npy file"
    # the written output reads back (as an input of the wrong shape: clear error)
    expect 1 "output fed back" -- "$FLATRT" run "$MODEL" --input "image=$TMP/o/sub/logits.npy"
    contains "$TMP/err" "[1,10]" "output fed back"
    # a TensorProto .pb input (dims 1,1,8,8, float, name "image", raw_data = the sample's payload
    # after its 128-byte .npy header); its name binds it without NAME=
    printf '\010\001\010\001\010\010\010\010\020\001\102\005image\112\200\002' >"$TMP/img.pb"
    tail -c 256 "$SAMPLE" >>"$TMP/img.pb"
    expect 0 "run .pb" -- "$FLATRT" run "$MODEL" --input "$TMP/img.pb"
    contains "$TMP/out" "argmax 6" "run .pb"
    cp "$TMP/img.pb" "$TMP/img.tensor" # unknown extension: content is sniffed
    expect 0 "run sniffed .pb" -- "$FLATRT" run "$MODEL" --input "image=$TMP/img.tensor"
    contains "$TMP/out" "argmax 6" "run sniffed .pb"
    # a single-input model takes a bare FILE and option=value forms
    expect 0 "bare --input" -- "$FLATRT" run "$MODEL" "--input=$SAMPLE" --threads=2
    contains "$TMP/out" "argmax 6" "bare --input"
    ;;
info)
    expect 0 "info" -- "$FLATRT" info "$MODEL"
    for text in "image" "[batch,1,8,8]" "logits" "[batch,10]" "opset:     13" "producer:" \
        "BatchNormalization" "Conv" "Gemm" "steps" "fused" "parameters:" "mapped in place" \
        "memory plan (symbolic dims = 1)" "arena" "lower bound"; do
        contains "$TMP/out" "$text" "info"
    done
    # the operator list of this build
    expect 0 "info --ops" -- "$FLATRT" info --ops
    for text in "ConvTranspose" "ai.onnx" "1..21" "conv_transpose" "NonMaxSuppression" "entries"; do
        contains "$TMP/out" "$text" "info --ops"
    done
    expect 2 "info --ops extra" -- "$FLATRT" info --ops "$MODEL"
    ;;
bench)
    expect 0 "bench" -- "$FLATRT" bench "$MODEL" --iters 50 --warmup 5 --input "image=$SAMPLE" \
        --lat-file "$TMP/lat.txt"
    last=$(tail -n 1 "$TMP/out")
    for key in load_ms iters mean_us p10_us p50_us p90_us p99_us min_us peak_rss_kib arena_bytes \
        threads planner weights lower_bound_bytes naive_bytes; do
        echo " $last" | grep -Eq " $key=[^ ]+" || fail "bench last line lacks $key=: $last"
    done
    echo "$last" | grep -q ' iters=50 ' || fail "bench: iters=50 not in: $last"
    echo "$last" | grep -q ' planner=standard ' || fail "bench: planner: $last"
    # key=value pairs separated by single spaces, nothing else
    echo "$last" | grep -Eq '^[a-z0-9_]+=[^ =]+( [a-z0-9_]+=[^ =]+)*$' ||
        fail "bench last line is not key=value pairs: $last"
    [ "$(wc -l <"$TMP/lat.txt")" -eq 50 ] || fail "--lat-file should have 50 lines"
    # profile tables, random inputs with a symbolic dim set by --shape, planner none
    expect 0 "bench --profile" -- "$FLATRT" bench "$MODEL" --iters 20 --warmup 2 --profile \
        --shape image=3,1,8,8 --planner none
    for text in "time per op type" "top " "memory plan" "Gemm" "lower bound" "naive"; do
        contains "$TMP/out" "$text" "bench --profile"
    done
    tail -n 1 "$TMP/out" | grep -q 'outputs=logits:float32:3x10' || fail "bench --shape: $(tail -n 1 "$TMP/out")"
    tail -n 1 "$TMP/out" | grep -q 'planner=none' || fail "bench --planner none"
    # Chrome trace: valid JSON, one complete event per step of each of the 5 traced runs
    expect 0 "bench --trace" -- "$FLATRT" bench "$MODEL" --iters 5 --warmup 1 --trace "$TMP/t.json"
    contains "$TMP/out" "trace: " "bench --trace"
    /usr/bin/python3 - "$TMP/t.json" <<'PY' || fail "bench --trace: bad trace file"
import json, sys
d = json.load(open(sys.argv[1]))
xs = [e for e in d["traceEvents"] if e["ph"] == "X"]
names = {e["name"] for e in xs}
assert xs and len(xs) % 5 == 0 and len(xs) == 5 * len(names), (len(xs), len(names))
for e in xs:
    assert e["dur"] >= 0 and e["ts"] >= 0 and isinstance(e["tid"], int), e
    assert {"op", "kernel", "shape", "in_bytes", "out_bytes"} <= set(e["args"]), e
assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in d["traceEvents"])
PY
    # R runtimes on R threads: aggregate throughput on the last line
    expect 0 "bench --runtimes" -- "$FLATRT" bench "$MODEL" --iters 20 --warmup 2 --runtimes 3
    contains "$TMP/out" "throughput: 3 runtimes on 3 threads" "bench --runtimes"
    tail -n 1 "$TMP/out" | grep -Eq ' runtimes=3 throughput_per_s=[0-9.]+[1-9][0-9.]* ' ||
        fail "bench --runtimes: $(tail -n 1 "$TMP/out")"
    # reduced-precision weights: the digits model's Gemm weights in fp16 / bf16
    for w in fp16 bf16; do
        expect 0 "bench --weights $w" -- "$FLATRT" bench "$MODEL" --iters 20 --warmup 2 --weights "$w"
        tail -n 1 "$TMP/out" | grep -q " weights=$w " || fail "bench --weights $w: $(tail -n 1 "$TMP/out")"
        expect 0 "run --weights $w" -- "$FLATRT" run "$MODEL" --input "image=$SAMPLE" --weights "$w"
    done
    expect 2 "bench --weights bad" -- "$FLATRT" bench "$MODEL" --weights fp8
    contains "$TMP/err" "fp32, fp16 or bf16" "bench --weights bad"
    # default iteration counts (fast model: 1000/100)
    expect 0 "bench defaults" -- "$FLATRT" bench "$MODEL"
    # 1000/100, or 50/5 when one run takes more than 10 ms (a loaded machine can make the digits
    # model that slow under sanitizers): either documented pair, nothing else
    tail -n 1 "$TMP/out" | grep -Eq ' warmup=(100 iters=1000|5 iters=50) ' ||
        fail "bench defaults: $(tail -n 1 "$TMP/out")"
    ;;
errors)
    expect 1 "missing model" -- "$FLATRT" info "$TMP/nonexistent.onnx"
    contains "$TMP/err" "nonexistent.onnx" "missing model"
    expect 1 "not a model" -- "$FLATRT" info "$SRC/examples/digits/samples/labels.txt"
    [ -s "$TMP/err" ] || fail "not a model: no message"
    # a valid model with an operator flatrt does not implement (onnx.helper: one node
    # FooBar x -> y, x and y float [1], opset 13): the message lists the op
    printf '\010\007\072\065\012\016\012\001x\022\001y\042\006FooBar\022\001gZ\017\012\001x\022\012\012\010\010\001\022\004\012\002\010\001b\017\012\001y\022\012\012\010\010\001\022\004\012\002\010\001B\004\012\000\020\015' >"$TMP/foobar.onnx"
    [ "$(wc -c <"$TMP/foobar.onnx")" -eq 63 ] || fail "foobar.onnx has the wrong size"
    # info describes it (exit 0) and lists the op (tests/cli/manners.sh info_unsupported)
    expect 0 "unsupported op (info)" -- "$FLATRT" info "$TMP/foobar.onnx"
    contains "$TMP/out" "FooBar" "unsupported op (info)"
    expect 1 "unsupported op (run)" -- "$FLATRT" run "$TMP/foobar.onnx" --input "x=$SAMPLE"
    contains "$TMP/err" "FooBar" "unsupported op (run)"
    expect 1 "missing input" -- "$FLATRT" run "$MODEL"
    contains "$TMP/err" "missing input 'image'" "missing input"
    expect 1 "wrong input name" -- "$FLATRT" run "$MODEL" --input "pixels=$SAMPLE"
    contains "$TMP/err" "'pixels'" "wrong input name"
    contains "$TMP/err" "'image'" "wrong input name (lists model inputs)"
    expect 1 "missing input file" -- "$FLATRT" run "$MODEL" --input "image=$TMP/none.npy"
    contains "$TMP/err" "none.npy" "missing input file"
    expect 1 "input not a tensor file" -- "$FLATRT" run "$MODEL" \
        --input "image=$SRC/examples/digits/samples/labels.txt"
    contains "$TMP/err" "labels.txt" "input not a tensor file"
    expect 1 "input given twice" -- "$FLATRT" run "$MODEL" --input "image=$SAMPLE" --input "image=$SAMPLE"
    contains "$TMP/err" "twice" "input given twice"
    # wrong shape: the [1,10] output as the [batch,1,8,8] input
    "$FLATRT" run "$MODEL" --input "image=$SAMPLE" --output-dir "$TMP/o" >/dev/null
    expect 1 "wrong shape" -- "$FLATRT" run "$MODEL" --input "image=$TMP/o/logits.npy"
    contains "$TMP/err" "shape" "wrong shape"
    expect 1 "wrong shape (bench --shape)" -- "$FLATRT" bench "$MODEL" --shape image=1,2,8,8 --iters 1
    [ -s "$TMP/err" ] || fail "wrong shape (bench --shape): no message"
    expect 1 "--shape for unknown input" -- "$FLATRT" bench "$MODEL" --shape pixels=1,1,8,8
    contains "$TMP/err" "pixels" "--shape for unknown input"
    expect 1 "unwritable output dir" -- "$FLATRT" run "$MODEL" --input "image=$SAMPLE" \
        --output-dir "$SAMPLE/sub"
    contains "$TMP/err" "cannot create directory" "unwritable output dir"
    ;;
finite)
    # the sample's .npy header followed by 64 float32 NaNs (0x7fc00000, little endian)
    size=$(wc -c <"$SAMPLE")
    head -c $((size - 256)) "$SAMPLE" >"$TMP/nan.npy"
    i=0
    while [ $i -lt 64 ]; do printf '\000\000\300\177' >>"$TMP/nan.npy"; i=$((i + 1)); done
    expect 0 "NaN output reported" -- "$FLATRT" run "$MODEL" --input "image=$TMP/nan.npy"
    contains "$TMP/err" "output 'logits' has 10 NaN and 0 infinite values" "NaN output reported"
    expect 1 "--check-finite" -- "$FLATRT" run "$MODEL" --input "image=$TMP/nan.npy" --check-finite
    contains "$TMP/err" "output 'logits' has 10 NaN" "--check-finite"
    expect 0 "--check-finite on finite outputs" -- "$FLATRT" run "$MODEL" --input "image=$SAMPLE" \
        --check-finite
    [ ! -s "$TMP/err" ] || fail "finite run wrote to stderr: $(cat "$TMP/err")"
    # --threads: the help's range is the library's (1-256); outside it is a usage error
    expect 0 "help names the thread range" -- "$FLATRT" --help
    contains "$TMP/out" "intra-op threads, 1 to 256" "help names the thread range"
    expect 0 "--threads 256" -- "$FLATRT" run "$MODEL" --input "image=$SAMPLE" --threads 256
    for t in 0 -1 257; do
        expect 2 "--threads $t" -- "$FLATRT" run "$MODEL" --input "image=$SAMPLE" --threads "$t"
        contains "$TMP/err" "[1, 256]" "--threads $t"
    done
    ;;
*)
    echo "unknown case $CASE" >&2
    exit 2
    ;;
esac

finish
