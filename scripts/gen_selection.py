#!/usr/bin/env python3
"""Configure-time generator of a selective build (cmake -DFRT_SELECT=FILE, docs/selective.md).

    gen_selection.py SELECTION.yaml SOURCE_DIR OUT_DIR [KEEP]

Reads a selection file written by `flatrt trace` (the YAML layout documented in docs/selective.md;
this parser accepts that layout only) and writes
  OUT_DIR/frt_selection.h   FRT_OP_SELECT_<op> 1 for the selected ops and FRT_SELECTION_FILE,
                            included by src/ops/registry.c (FRT_OPS_ONLY)
  OUT_DIR/selection.cmake   FRT_SEL_SOURCES (the library sources the build compiles), per-file
                            tier defines (FRT_SEL_TIERS), FRT_SEL_BLAS, FRT_SEL_DNNL, FRT_SEL_OPS
Sources: the core (util, onnx, ir, passes, compile, runtime), the registry and the family files of
the selected ops, closed over the frt_* symbols they reference (a definition found at file scope
in another file pulls that file in; a token ending in '_' is a prefix, for names pasted by
macros). Variant-table entries of tiers the trace did not pick in a family (#if FRT_TIER_AVX512 /
FRT_TIER_AVX2, src/ops/cpu.h) are skipped while scanning, so their kernel files stay out.
Optional features (FEATURES below) are compiled only when the selection's `features` or KEEP (a
comma or semicolon list, cmake -DFRT_SELECT_KEEP) names them; otherwise their file is left out
and src/runtime/features_off.c answers their API with FRT_ERR_UNSUPPORTED
(FRT_FEATURE_OFF_<NAME>, listed in FRT_SEL_FEATURES_OFF).
Exits 1 with a message on a malformed file or an op this source tree does not implement."""
import os
import re
import sys

VERSION = 1
# Optional features a selective build leaves out unless kept: name -> the files that implement it.
# thread_pool (recorded by `flatrt trace --threads N` with N > 1): the intra-op pool, inter-op
# scheduling and its DAG, frt_run_async; runtime_pool: the frt_pool_* API (never recorded);
# external_data (recorded when a traced model maps a tensor from another file): external.c.
FEATURES = {"describe": ["src/runtime/describe.c"], "step_trace": ["src/runtime/trace.c"],
            "thread_pool": ["src/util/threadpool.c", "src/runtime/interop.c", "src/compile/dag.c"],
            "runtime_pool": ["src/runtime/pool.c"],
            "external_data": ["src/onnx/external.c"],
            # half_weights (recorded when a traced model loads with --weights fp16 / bf16): the
            # half-precision packing and widening inside the Conv/Gemm/MatMul files (no file of
            # its own: FRT_HALF_WEIGHTS_OFF in the selection header, src/ops/cpu.h)
            "half_weights": [],
            # sequences (recorded when a traced model has a sequence or optional value): the
            # runtime's container handling (FRT_SEQUENCES_OFF in the selection header)
            "sequences": [],
            # subgraphs (recorded when a traced model has a node with one): the decoder's GRAPH
            # attributes and the IR's / compile's nested blocks (FRT_SUBGRAPHS_OFF in the
            # selection header, src/util/features.h)
            "subgraphs": []}
TIERS = ("avx2", "avx512")
# Per-kernel selection inside an op (FRT_KERNEL_BUILT(op, class), src/ops/op.h): op -> class ->
# the builtin kernel names (regular expressions) that need the class. A class none of the op's
# recorded kernels needs is compiled out of the op's select and kernel.
KERNEL_CLASSES = {
    "Gemm": {"WGEMV": r"^gemv_(f32|f16|bf16)w_", "WGEMM": r"^gemm_(f32|f16|bf16)w_",
             "SGEMV": r"^gemv_f32_", "SGEMM": r"^gemm_f32_", "SMALL": r"^gemm_f32_small_",
             "RTINY": r"^gemm_run_tiny$", "RGEMV": r"^gemm_run_gemv$",
             "RSGEMM": r"^gemm_run_sgemm$"},
    "MatMul": {"WPACK": r"^(gemv|gemm)_(f32|f16|bf16)w_", "TINY": r"^matmul_run_tiny$",
               "SMALL": r"^matmul_run_small$", "GEMV": r"^matmul_run_gemv$",
               "SGEMM": r"^matmul_run_sgemm$"},
    "Conv": {"DW": r"^conv_depthwise", "DW5": r"^conv_depthwise_k5$",
             "GEMM": r"^conv_(1x1|im2col)_gemm_", "SGEMM": r"^conv_im2col_sgemm",
             # the AVX2 tile's tail shapes a run took (recorded at run, src/ops/conv.h)
             "TR1": r"^conv_gemm_avx2_r1$", "TR2": r"^conv_gemm_avx2_r2$",
             "TR4": r"^conv_gemm_avx2_r4$", "TCOL": r"^conv_gemm_avx2_col$",
             "TE8": r"^conv_gemm_avx2_e8$", "TE16": r"^conv_gemm_avx2_e16$"},
}
# Kernel names an op's select gives that need no class themselves: the product paths they run
# are recorded at run (MatMul: "matmul_run_*").
KERNEL_NAMES_NO_CLASS = {"MatMul": r"^matmul_f32"}
# Classes that traces record only since a later flatrt: (op, class) -> (a pattern of the kernel
# names that such traces record for the op, the pattern of the kernels an older trace recorded
# instead). An older trace (none of the first, some of the second) keeps the class.
KERNEL_CLASSES_SINCE = {("Conv", "DW5"): (r"^conv_depthwise_k\d+$", r"^conv_depthwise")}
# the run-time product paths of Gemm and MatMul (recorded at run since this flatrt)
for _c in ("RTINY", "RGEMV", "RSGEMM"):
    KERNEL_CLASSES_SINCE[("Gemm", _c)] = (r"^gemm_run_", r"^(gemm|gemv)_f32_")
for _c in ("TINY", "SMALL", "GEMV", "SGEMM"):
    KERNEL_CLASSES_SINCE[("MatMul", _c)] = (r"^matmul_run_", r"^matmul_f32")
# the AVX2 conv tile's tails (recorded at run since this flatrt): an older trace with an AVX2 conv
# GEMM kernel keeps them all
for _c in ("TR1", "TR2", "TR4", "TCOL", "TE8", "TE16"):
    KERNEL_CLASSES_SINCE[("Conv", _c)] = (r"^conv_gemm_avx2_", r"^conv_(1x1|im2col)_gemm_avx2")
KERNEL_CLASSES["FusedConv"] = KERNEL_CLASSES["Conv"]
KERNEL_CLASSES["ConvMean"] = KERNEL_CLASSES["Conv"]
for (_op, _c), _v in list(KERNEL_CLASSES_SINCE.items()):
    if _op == "Conv":
        KERNEL_CLASSES_SINCE[("FusedConv", _c)] = _v
        KERNEL_CLASSES_SINCE[("ConvMean", _c)] = _v


def die(msg):
    sys.stderr.write("FRT_SELECT: %s\n" % msg)
    sys.exit(1)


def flow_list(s, where):
    s = s.strip()
    if not (s.startswith("[") and s.endswith("]")):
        die("%s: expected a list [a, b, ...], got '%s'" % (where, s))
    body = s[1:-1].strip()
    if not body:
        return []
    out, cur, q = [], "", False
    for ch in body:
        if ch == '"':
            q = not q
        if ch == "," and not q:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [x.strip().strip('"') for x in out]


def flow_map(s, where):
    s = s.strip()
    if not (s.startswith("{") and s.endswith("}")):
        die("%s: expected {key: value, ...}" % where)
    body, out, cur, depth, q = s[1:-1], {}, "", 0, False
    parts = []
    for ch in body:
        if ch == '"':
            q = not q
        elif not q and ch == "[":
            depth += 1
        elif not q and ch == "]":
            depth -= 1
        if ch == "," and depth == 0 and not q:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for p in parts:
        if ":" not in p:
            die("%s: expected 'key: value' in '%s'" % (where, p.strip()))
        k, v = p.split(":", 1)
        out[k.strip()] = v.strip()
    return out


def read_selection(path):
    sel = {"isa": [], "providers": [], "features": [], "variants": {}, "ops": [], "dtypes": set()}
    section, version = None, None
    with open(path, encoding="utf-8") as f:
        for no, raw in enumerate(f, 1):
            where = "%s:%d" % (path, no)
            line = raw.rstrip("\n")
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            if not line.startswith(" "):
                if ":" not in s:
                    die("%s: expected 'key: value'" % where)
                key, val = (x.strip() for x in s.split(":", 1))
                section = key
                if key == "flatrt_selection":
                    version = val
                    if val != str(VERSION):
                        die("%s: unsupported flatrt_selection version '%s' (this tree reads %d)"
                            % (where, val, VERSION))
                elif key in ("isa", "providers", "features"):
                    sel[key] = flow_list(val, where)
                elif key not in ("models", "variants", "operators"):
                    die("%s: unknown key '%s'" % (where, key))
                continue
            if version is None:
                die("%s: the file must start with 'flatrt_selection: %d'" % (where, VERSION))
            if section == "models":
                continue
            if section == "variants":
                if ":" not in s:
                    die("%s: expected 'family: [tiers]'" % where)
                fam, val = s.split(":", 1)
                sel["variants"].setdefault(fam.strip(), set()).update(flow_list(val, where))
            elif section == "operators":
                if not s.startswith("-"):
                    die("%s: expected '- {domain: ..., op: ...}'" % where)
                m = flow_map(s[1:], where)
                if not m.get("domain") or not m.get("op"):
                    die("%s: operator without domain or op" % where)
                sel["ops"].append((m["domain"], m["op"]))
                kernels = flow_list(m.get("kernels", "[]"), where)
                if kernels:
                    sel.setdefault("selected", set()).add(m["op"])
                sel.setdefault("kernels", {}).setdefault(m["op"], set()).update(kernels)
                sel["dtypes"].update(flow_list(m.get("dtypes", "[]"), where))
            else:
                die("%s: unexpected indented line" % where)
    if version is None:
        die("%s is not a flatrt selection (no 'flatrt_selection: %d')" % (path, VERSION))
    return sel


DOMAINS = {"ONNX": "ai.onnx", "INTERNAL": "flatrt", "TRAINING": "ai.onnx.preview.training"}


def fnv1a(text):
    """32-bit FNV-1a of text's UTF-8 bytes (the same function as registry.c's left_out_hash)."""
    h = 2166136261
    for b in text.encode("utf-8"):
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def read_ops_def(src, flags=None):
    """(domain, op) -> set of families; fills flags[(domain, op)] with the capability flags text
    of its lines when given."""
    ops = {}
    with open(os.path.join(src, "src/ops/ops.def"), encoding="utf-8") as f:
        for m in re.finditer(r"^FRT_OP\((\w+),\s*(\w+),\s*\w+,\s*\w+,\s*(\w+),\s*\w+,\s*(.*?)\)\s*$",
                             f.read(), re.M | re.S):
            key = (DOMAINS[m.group(1)], m.group(2))
            ops.setdefault(key, set()).add(m.group(3))
            if flags is not None:
                flags[key] = flags.get(key, "") + " " + m.group(4)
    return ops


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def eval_tiers(text, tiers):
    """Drops the lines inside '#if FRT_TIER_<T>' blocks of tiers not in `tiers`."""
    out, stack = [], []  # stack entries: True when the block's lines are dropped
    for line in text.split("\n"):
        s = line.strip()
        m = re.match(r"#\s*if\s+FRT_TIER_(AVX512|AVX2)\s*$", s)
        if m:
            stack.append(m.group(1).lower() not in tiers)
            continue
        if re.match(r"#\s*if", s):
            stack.append(False)
        elif re.match(r"#\s*endif", s) and stack:
            stack.pop()
        if not any(stack):
            out.append(line)
    return "\n".join(out)


DEF_FN = re.compile(r"^(?!static\b|extern\b|typedef\b|#)[A-Za-z_][\w \t\*]*?\b(frt_\w+)\s*\([^;{}]*\)\s*\{",
                    re.M)
DEF_DATA = re.compile(r"^(?!static\b|extern\b|typedef\b|#)[A-Za-z_][\w \t\*]*?\b(frt_\w+)\s*(?:\[[^\]]*\]\s*)*=",
                      re.M)
# a function defined by a macro at file scope, named by its first argument (reduce_avx2.c:
# ROW_SUM(frt_reduce_row_sum_avx2, ...)); a use this also matches only adds a file
DEF_MACRO = re.compile(r"^[A-Z][A-Z0-9_]*\(\s*(frt_\w+)\s*[,)]", re.M)
TOKEN = re.compile(r"\bfrt_\w+")


def main():
    if len(sys.argv) not in (4, 5):
        die("usage: gen_selection.py SELECTION.yaml SOURCE_DIR OUT_DIR [KEEP]")
    path, src, out_dir = sys.argv[1:4]
    sel = read_selection(path)
    keep = {k.strip() for k in re.split(r"[,;]", sys.argv[4] if len(sys.argv) == 5 else "")
            if k.strip()}
    bad = keep - set(FEATURES)
    if bad:
        die("FRT_SELECT_KEEP: unknown feature(s) %s (known: %s)"
            % (", ".join(sorted(bad)), ", ".join(sorted(FEATURES))))
    feat_off = sorted(f for f in FEATURES if f not in keep and f not in sel["features"])
    off_files = {x for f in feat_off for x in FEATURES[f]}
    if "onednn" not in sel["providers"]:
        # the layout pass (reorders between blocked and plain layouts) serves only the oneDNN
        # provider's kernels; src/compile/compile.c skips it in a selective build without it
        off_files.add("src/compile/layout.c")
    op_flags = {}
    ops = read_ops_def(src, op_flags)
    families = set()
    names = set()
    for dom, op in sel["ops"]:
        if (dom, op) not in ops:
            die("%s names op '%s' (%s), which this flatrt does not implement" % (path, op, dom))
        families |= ops[(dom, op)]
        names.add(op)
    for fam, tiers in sel["variants"].items():
        bad = set(tiers) - set(TIERS) - {"portable"}
        if bad:
            die("%s: family %s: unknown ISA tier(s) %s" % (path, fam, ", ".join(sorted(bad))))

    core_dirs = ["src/util", "src/onnx", "src/ir", "src/passes", "src/compile", "src/runtime"]
    cand = []
    for d in core_dirs + ["src/ops", "src/ops/x86"]:
        for fn in sorted(os.listdir(os.path.join(src, d))):
            if fn.endswith(".c") and d + "/" + fn not in off_files:
                cand.append(d + "/" + fn)
    roots = {c for c in cand if os.path.dirname(c) in core_dirs}
    roots.add("src/ops/registry.c")
    for fam in families:
        f = "src/ops/%s.c" % fam
        if f not in cand:
            die("family file %s of a selected op is missing" % f)
        roots.add(f)
    dnnl = "onednn" in sel["providers"]

    def tiers_of(c):
        stem = os.path.basename(c)[:-2]
        return set(sel["variants"].get(stem, ())) & set(TIERS)

    scanned, tier_defs = {}, {}
    for c in cand:
        with open(os.path.join(src, c), encoding="utf-8") as f:
            text = strip_comments(f.read())
        if "FRT_TIER_" in text and c.startswith("src/ops/") and "/x86/" not in c:
            t = tiers_of(c)
            tier_defs[c] = t
            text = eval_tiers(text, t)
        scanned[c] = text
    definer = {}
    for c, text in scanned.items():
        for rx in (DEF_FN, DEF_DATA, DEF_MACRO):
            for m in rx.finditer(text):
                definer.setdefault(m.group(1), set()).add(c)
    syms = sorted(definer)

    extra_roots = ["src/ops/onednn/onednn.c"] if dnnl else []
    for c in extra_roots:
        with open(os.path.join(src, c), encoding="utf-8") as f:
            scanned[c] = strip_comments(f.read())
    todo, chosen = sorted(roots) + extra_roots, set(roots)
    while todo:
        c = todo.pop()
        for tok in set(TOKEN.findall(scanned[c])):
            hits = definer.get(tok, ())
            if not hits and tok.endswith("_"):  # a prefix pasted into names by a macro
                hits = {d for s in syms if s.startswith(tok) for d in definer[s]}
            for d in hits:
                if d not in chosen:
                    chosen.add(d)
                    todo.append(d)

    os.makedirs(out_dir, exist_ok=True)
    shown = os.path.basename(path)
    with open(os.path.join(out_dir, "frt_selection.h"), "w", encoding="utf-8") as f:
        f.write("/* Generated by scripts/gen_selection.py from %s: do not edit. */\n" % shown)
        f.write("#ifndef FRT_SELECTION_H\n#define FRT_SELECTION_H\n")
        f.write('#define FRT_SELECTION_FILE "%s"\n' % shown.replace("\\", "\\\\").replace('"', '\\"'))
        for op in sorted(names):
            f.write("#define FRT_OP_SELECT_%s 1\n" % op)
            if op not in sel.get("selected", set()):  # every node fused or folded away
                f.write("#define FRT_OP_INFER_ONLY_%s 1\n" % op)
        # the ops left out, as 24-bit xor-folded FNV-1a hashes of "<domain letter><op>"
        # (registry.c, frt_op_left_out), sorted, 3 big-endian bytes an op instead of its name
        dch = {"ai.onnx": "o", "flatrt": "i", "ai.onnx.preview.training": "t"}
        hashes = sorted({(h >> 24) ^ (h & 0xFFFFFF)
                         for h in (fnv1a(dch[dom] + op) for dom, op in ops if op not in names)})
        f.write("#define FRT_LEFT_OUT_HASHES %s\n"
                % ", ".join("0x%02x, 0x%02x, 0x%02x" % (h >> 16, (h >> 8) & 255, h & 255)
                            for h in hashes) if hashes else "")
        for op in sorted(names & set(KERNEL_CLASSES)):
            kept = []
            for k in sorted(sel.get("kernels", {}).get(op, ())):
                prov, _, kn = k.partition(":")
                if prov != "builtin":
                    continue
                hit = [c for c, rx in KERNEL_CLASSES[op].items() if re.match(rx, kn)]
                if not hit and re.match(KERNEL_NAMES_NO_CLASS.get(op, r"(?!)"), kn):
                    continue  # named at select; the paths it runs are recorded at run
                if not hit:  # a kernel this table does not know: keep every class
                    hit = list(KERNEL_CLASSES[op])
                kept += hit
            recorded = [k.partition(":")[2] for k in sel.get("kernels", {}).get(op, ())
                        if k.startswith("builtin:")]
            for (sop, cls), (new_rx, old_rx) in KERNEL_CLASSES_SINCE.items():
                if sop == op and not any(re.match(new_rx, k) for k in recorded) and \
                        any(re.match(old_rx, k) for k in recorded):
                    kept.append(cls)
            for c in sorted(set(kept)):
                f.write("#define FRT_KSEL_%s_%s 1\n" % (op, c))
        if "half_weights" in feat_off:
            f.write("#define FRT_HALF_WEIGHTS_OFF 1\n")
        if "sequences" in feat_off:
            f.write("#define FRT_SEQUENCES_OFF 1\n")
        if "subgraphs" in feat_off and not names & {"If", "Loop", "Scan", "SequenceMap"}:
            f.write("#define FRT_SUBGRAPHS_OFF 1\n")
        # Steps shaped while running (compile.c FRT_DEFER_*: an input deciding output shapes known
        # only at run, a kernel sizing its outputs, sequence values) need an op that declares it
        # (FRT_OP_SHAPE_IN, FRT_OP_DATA_SHAPE, FRT_OP_SEQ_VALUES in ops.def); without one the
        # runtime's deferred-step path is compiled out (FRT_DYNAMIC_STEPS, src/util/features.h).
        if not any(re.search(r"FRT_OP_(SHAPE_IN|DATA_SHAPE|SEQ_VALUES)", op_flags.get((d, o), ""))
                   for d, o in sel["ops"]):
            f.write("#define FRT_DYNAMIC_STEPS_OFF 1\n")
        if "thread_pool" in feat_off:  # frt_run_async refuses before binding (runtime.c)
            f.write("#define FRT_SEL_OFF_THREAD_POOL 1\n")
        for dt in sorted(sel["dtypes"]):
            if not re.match(r"^[a-z0-9]+$", dt):
                die("%s: bad dtype name '%s'" % (path, dt))
            f.write("#define FRT_DT_SELECT_%s 1\n" % dt)
        f.write("#endif\n")
    with open(os.path.join(out_dir, "selection.cmake"), "w", encoding="utf-8") as f:
        f.write("# Generated by scripts/gen_selection.py from %s: do not edit.\n" % path)
        f.write("set(FRT_SEL_SOURCES\n%s)\n" % "".join(
            "  ${CMAKE_SOURCE_DIR}/%s\n" % c for c in sorted(chosen) if c not in extra_roots))
        f.write("set(FRT_SEL_TIERS\n%s)\n" % "".join(
            "  \"%s|%d|%d\"\n" % (c, "avx512" in t, "avx2" in t)
            for c, t in sorted(tier_defs.items()) if c in chosen))
        f.write("set(FRT_SEL_OPS %s)\n" % " ".join(sorted(names)))
        f.write("set(FRT_SEL_DTYPES %s)\n" % " ".join(sorted(sel["dtypes"])))
        f.write("set(FRT_SEL_BLAS %s)\n" % ("ON" if "openblas" in sel["providers"] else "OFF"))
        f.write("set(FRT_SEL_DNNL %s)\n" % ("ON" if dnnl else "OFF"))
        f.write("set(FRT_SEL_FEATURES_OFF %s)\n" % " ".join(feat_off))
        # memory planners: only those traced (a selection naming none keeps all); no DAG paths
        # without the thread pool
        planners = {x[len("planner_"):] for x in sel["features"] if x.startswith("planner_")}
        plan_defs = ["FRT_PLANNER_OFF_GREEDY"] if planners and "greedy" not in planners else []
        if "thread_pool" in feat_off:
            plan_defs.append("FRT_PLAN_NO_DAG")
        f.write("set(FRT_SEL_PLAN_DEFS %s)\n" % " ".join(plan_defs))
    print("FRT_SELECT: %d ops, %d library sources, features left out: %s"
          % (len(names), len(chosen - set(extra_roots)), " ".join(feat_off) or "none"))


if __name__ == "__main__":
    main()
