#!/usr/bin/env python3
"""One-way layering of flatrt's sources (docs/architecture.md, "Layers").

Layers, lowest first; a file may use its own layer and lower ones only:

    util <- onnx <- ir <- ops <- passes <- compile <- runtime      (src/<layer>/, src/ops/x86 is ops)
    include/flatrt.h: the public API, usable from every layer; includes no project header
    tools/: the command-line tool, on the public API only (include/ and tools/)

Modes:
  includes ROOT          every #include "..." in ROOT/{include,src,tools} resolves (as the compiler
                         does: the file's directory, then include/, then src/) to a header of the
                         file's own layer or a lower one
  calls ROOT OBJ...      in the library's object files (path .../src/<layer>/...o), every symbol
                         used by a layer is defined by that layer or a lower one, so calls between
                         src directories go one way and cannot form cycles (from `nm`)
  selftest CC            both checks on small made-up trees: they must pass a good tree and fail
                         each kind of violation
Exit status 0 when clean; 1 with one line per violation otherwise.
"""
import os
import re
import subprocess
import sys
import tempfile

LAYERS = ["util", "onnx", "ir", "ops", "passes", "compile", "runtime"]
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_EXT = (".c", ".h")


def src_layer(rel):
    """Layer name of a path relative to the root, 'include', 'tools', or None."""
    parts = rel.split("/")
    if parts[0] in ("include", "tools"):
        return parts[0]
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    return None


def may_include(from_layer, to_layer):
    if to_layer == "include":
        return True
    if from_layer == "include":
        return False
    if from_layer == "tools":
        return to_layer == "tools"
    if to_layer == "tools":
        return False
    return LAYERS.index(to_layer) <= LAYERS.index(from_layer)


def check_includes(root):
    errors = []
    files = []
    for top in ("include", "src", "tools"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(SOURCE_EXT)]
    for path in sorted(files):
        rel = os.path.relpath(path, root)
        layer = src_layer(rel)
        if layer is None or (layer not in LAYERS and layer not in ("include", "tools")):
            errors.append(f"{rel}: not in a known layer (src/<layer>/ with layer one of "
                          f"{', '.join(LAYERS)}); add new directories to LAYERS here and to "
                          f"docs/architecture.md")
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                name = m.group(1)
                target = None
                for base in (os.path.dirname(path), os.path.join(root, "include"),
                             os.path.join(root, "src")):
                    cand = os.path.normpath(os.path.join(base, name))
                    if os.path.isfile(cand):
                        target = os.path.relpath(cand, root)
                        break
                where = f"{rel}:{lineno}"
                if target is None:
                    errors.append(f'{where}: #include "{name}" does not resolve to a project header')
                    continue
                to_layer = src_layer(target)
                if to_layer is None or (to_layer not in LAYERS and to_layer not in ("include", "tools")):
                    errors.append(f'{where}: #include "{name}" -> {target}, outside every layer')
                elif not may_include(layer, to_layer):
                    errors.append(f'{where}: #include "{name}": layer {layer} may not include '
                                  f"{target} (layer {to_layer})")
    return errors


def object_layer(path):
    p = path.replace(os.sep, "/")
    i = p.rfind("/src/")
    if i < 0:
        return None
    return p[i + 5:].split("/")[0]


def nm_symbols(objects):
    """{object: (defined globals, used undefined)}, from one nm run over all objects."""
    out = subprocess.run(["nm", "-P", "-A"] + list(objects), check=True, capture_output=True,
                         text=True).stdout
    syms = {obj: (set(), set()) for obj in objects}
    for line in out.splitlines():
        # "<object>: <name> <type> [value size]"; object paths contain no ": "
        obj, sep, rest = line.partition(": ")
        f = rest.split()
        if not sep or obj not in syms or len(f) < 2:
            continue
        name, kind = f[0], f[1]
        if kind in ("U", "w", "v"):
            syms[obj][1].add(name)
        elif kind.isupper():
            syms[obj][0].add(name)
    return syms


def check_calls(objects):
    errors = []
    definer = {}  # symbol -> (layer, object)
    uses = []     # (layer, object, symbol)
    syms = nm_symbols(objects) if objects else {}
    for obj in objects:
        layer = object_layer(obj)
        if layer not in LAYERS:
            errors.append(f"{obj}: object file not under src/<layer>/ (layers: {', '.join(LAYERS)})")
            continue
        defined, used = syms[obj]
        for s in defined:
            definer.setdefault(s, (layer, obj))
        uses += [(layer, obj, s) for s in used]
    if not objects:
        errors.append("no object files given")
    edges = {}
    n_cross = 0
    for layer, obj, s in uses:
        if s not in definer:
            continue  # libc, libm, pthreads, BLAS, sanitizer runtime
        to_layer, to_obj = definer[s]
        n_cross += to_layer != layer
        if LAYERS.index(to_layer) > LAYERS.index(layer):
            edges.setdefault((layer, to_layer), []).append(
                f"{os.path.basename(obj)} uses {s} from {os.path.basename(to_obj)}")
    for (a, b), what in sorted(edges.items()):
        errors.append(f"layer {a} calls up into layer {b}: " + "; ".join(sorted(what)))
    errors += file_cycles(uses, definer)
    if len(objects) > 1 and n_cross == 0:
        errors.append("no symbol is used across layers: the nm output was not understood")
    print(f"calls: {len(objects)} objects, {n_cross} uses of symbols defined in another layer")
    return errors


def file_cycles(uses, definer):
    """Errors for call cycles between object files (also inside one layer): each strongly
    connected component of the file-level "uses a symbol defined in" graph with two or more
    files, named with one symbol per edge."""
    graph, why = {}, {}
    for _, obj, s in uses:
        if s in definer and definer[s][1] != obj:
            to = definer[s][1]
            graph.setdefault(obj, set()).add(to)
            why.setdefault((obj, to), s)
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):  # Tarjan; the graphs here are small (tens of files)
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    errors = []
    for comp in comps:
        inside = set(comp)
        links = [f"{os.path.basename(a)} uses {why[(a, b)]} from {os.path.basename(b)}"
                 for a in comp for b in sorted(graph.get(a, ())) if b in inside]
        errors.append("call cycle between files: " + "; ".join(links))
    return errors


def report(errors, what):
    for e in errors:
        print(e)
    print(f"{what}: {'FAIL, ' + str(len(errors)) + ' violation(s)' if errors else 'ok'} "
          f"(layers, lowest first: {' <- '.join(LAYERS)})")
    return 1 if errors else 0


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def selftest(cc):
    failures = []

    def expect(name, errors, want_fail, needle=""):
        ok = bool(errors) == want_fail and all(needle in e for e in errors)
        print(f"selftest {name}: {'ok' if ok else 'WRONG'} ({len(errors)} violation(s))")
        for e in errors:
            print("   ", e)
        if not ok:
            failures.append(name)

    with tempfile.TemporaryDirectory() as root:
        write(root, "include/api.h", "int api(void);\n")
        write(root, "src/util/u.h", '#include "api.h"\nint u(void);\n')
        write(root, "src/ops/op.h", '#include "util/u.h"\n#include "ir/ir.h"\n')
        write(root, "src/ir/ir.h", '#include "nowhere.h"\n')
        expect("includes.unresolved", check_includes(root), True, "does not resolve")
        write(root, "src/ir/ir.h", '#include "util/u.h"\n')
        write(root, "src/ops/x86/k.c", '#include "ops/op.h"\n#include "../op.h"\n')
        write(root, "tools/t.c", '#include "api.h"\n#include "t.h"\n')
        write(root, "tools/t.h", "\n")
        expect("includes.good", check_includes(root), False)
        bad = write(root, "src/util/bad.c", '#include "ops/op.h"\n')
        expect("includes.upward", check_includes(root), True, "layer util may not include src/ops/op.h")
        os.remove(bad)
        bad = write(root, "tools/bad.c", '#include "ir/ir.h"\n')
        expect("includes.tools_internal", check_includes(root), True, "layer tools")
        os.remove(bad)
        bad = write(root, "include/bad.h", '#include "util/u.h"\n')
        expect("includes.public_internal", check_includes(root), True, "layer include")
        os.remove(bad)
        bad = write(root, "src/newdir/n.c", "\n")
        expect("includes.unknown_dir", check_includes(root), True, "not in a known layer")
        os.remove(bad)

        def obj(rel, text):
            c = write(root, rel, text)
            o = c + ".o"
            subprocess.run([cc, "-c", "-O0", "-o", o, c], check=True)
            return o
        u = obj("src/util/u.c", "int u(void) { return 1; }\n")
        op = obj("src/ops/o.c", "int u(void);\nint o(void) { return u(); }\n")
        expect("calls.good", check_calls([u, op]), False)
        u2 = obj("src/util/u2.c", "int o(void);\nint u2(void) { return o(); }\n")
        expect("calls.upward", check_calls([u, op, u2]), True, "layer util calls up into layer ops")
        o2 = obj("src/ops/o2.c", "int o(void);\nint o2(void) { return o(); }\n"
                 "int o3(void) { return 1; }\n")
        o4 = obj("src/ops/o4.c", "int o3(void);\nint o4(void) { return o3(); }\n")
        expect("calls.no_cycle", check_calls([u, op, o2, o4]), False)
        o5 = obj("src/ops/o5.c", "int o2(void);\nint o5(void) { return o2(); }\n"
                 "int o6(void) { return 1; }\n")
        o7 = obj("src/ops/o7.c", "int o6(void);\nint o5(void);\n"
                 "int o7(void) { return o6(); }\n")
        cyc = obj("src/ops/o8.c", "int o7(void);\nint o2(void) { return o7(); }\n")
        expect("calls.cycle", check_calls([u, op, o5, o7, cyc]), True, "call cycle between files")
    print("selftest:", "FAIL " + ", ".join(failures) if failures else "ok")
    return 1 if failures else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "includes":
        return report(check_includes(argv[1]), "includes")
    if len(argv) >= 2 and argv[0] == "calls":
        objs = [o for a in argv[1:] for o in a.split(",") if o]
        return report(check_calls(objs), "calls")
    if len(argv) == 2 and argv[0] == "selftest":
        return selftest(argv[1])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
