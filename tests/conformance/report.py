#!/usr/bin/python3
"""Summarizes a `flatrt check` report over the ONNX node suite.

Usage: /usr/bin/python3 tests/conformance/report.py REPORT.txt SUITE_NODE_DIR EXPECTED_PASS.txt
                                                    [--markdown OUT.md]

Prints the totals, checks that every case listed in EXPECTED_PASS.txt passed (exit status 1
otherwise, naming them), lists cases that pass but are not listed yet, and with --markdown writes
a table per operator (cases, passed, failed, unsupported) and the failure categories.
"""
import collections
import os
import re
import sys

import onnx


def parse_report(path):
    res = {}
    for line in open(path):
        m = re.match(r"^(pass|fail|unsupported|error) (\S+?)(?::| \()(.*)$", line.rstrip("\n"))
        if m:
            res[m.group(2)] = (m.group(1), m.group(3).strip())
    return res


def case_ops(suite, case):
    try:
        m = onnx.load(os.path.join(suite, case, "model.onnx"), load_external_data=False)
    except Exception:  # a case the loader cannot read is counted under "?"
        return ["?"]
    ops = []
    for n in m.graph.node:
        if n.op_type not in ops:
            ops.append(n.op_type)
    return ops or ["(none)"]


def category(kind, why):
    if kind == "unsupported":
        m = re.search(r"unsupported operators: (\S+)", why)
        if m:
            return "operator not implemented"
        if "opset" in why:
            return "opset not implemented"
        if "dtype" in why or "string" in why or "float64" in why or "int" in why:
            return "dtype not implemented"
        return "attribute/form not implemented"
    if kind == "fail":
        if "could not be resolved" in why:
            return "shape depends on a graph input's values"
        return "wrong result"
    if kind == "error":
        return "error"
    return "pass"


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    report, suite, expected = argv[0], argv[1], argv[2]
    md = argv[argv.index("--markdown") + 1] if "--markdown" in argv else None
    res = parse_report(report)
    cases = sorted(os.listdir(suite))
    want = [l.strip() for l in open(expected) if l.strip() and not l.startswith("#")]
    counts = collections.Counter(k for k, _ in res.values())
    print(f"conformance: {counts['pass']} of {len(cases)} cases pass "
          f"({counts['fail']} fail, {counts['unsupported']} unsupported, {counts['error']} errors)")
    missing = [c for c in cases if c not in res]
    if missing:
        print(f"not in the report: {len(missing)} cases, e.g. {missing[:5]}")
    regressed = [c for c in want if res.get(c, ("missing", ""))[0] != "pass"]
    new = [c for c in cases if res.get(c, ("", ""))[0] == "pass" and c not in set(want)]
    if new:
        print(f"{len(new)} cases pass that {os.path.basename(expected)} does not list yet:")
        for c in new:
            print(f"  {c}")
    if md:
        per_op = collections.defaultdict(collections.Counter)
        cats = collections.Counter()
        examples = {}
        for c in cases:
            kind, why = res.get(c, ("error", "not in report"))
            for op in case_ops(suite, c):
                per_op[op][kind] += 1
            cat = category(kind, why)
            if kind != "pass":
                cats[cat] += 1
                examples.setdefault(cat, f"{c}: {why[:160]}")
        with open(md, "w") as f:
            f.write(f"{counts['pass']} of {len(cases)} cases pass.\n\n")
            f.write("| failure category | cases | example |\n|---|---:|---|\n")
            for cat, n in cats.most_common():
                f.write(f"| {cat} | {n} | {examples[cat].replace('|', '/')} |\n")
            f.write("\n| operator | cases | pass | fail | unsupported | error |\n"
                    "|---|---:|---:|---:|---:|---:|\n")
            for op in sorted(per_op):
                c = per_op[op]
                f.write(f"| {op} | {sum(c.values())} | {c['pass']} | {c['fail']} | "
                        f"{c['unsupported']} | {c['error']} |\n")
        print(f"wrote {md}")
    if regressed:
        print(f"FAILED: {len(regressed)} listed cases no longer pass:")
        for c in regressed:
            print(f"  {c}: {' '.join(res.get(c, ('missing', 'not run')))}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
