#!/usr/bin/env python3
"""libflatrt.so as a product: it exports exactly the public API and carries a versioned SONAME.

usage: check_exports.py HEADER SHARED_LIB

- The functions declared in HEADER (include/flatrt.h, comments stripped: every `frt_name(`) are
  all marked FRT_API, and `nm -D --defined-only SHARED_LIB` lists exactly those names, each as a
  function (T), and nothing else (beyond the linker's own _init/_fini/_edata/_end/__bss_start).
- `readelf -d SHARED_LIB` shows SONAME libflatrt.so.<major>, major from FRT_VERSION_STRING.
Exit status 0 when all hold; 1 with one line per problem otherwise.
"""
import re
import subprocess
import sys

LINKER_SYMBOLS = {"_init", "_fini", "_edata", "_end", "__bss_start"}


def header_api(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    declared = set(re.findall(r"\b(frt_\w+)\s*\(", text))
    marked = set()
    for decl in text.split(";"):
        m = re.search(r"\bFRT_API\b[^(]*?\b(frt_\w+)\s*\(", decl)
        if m:
            marked.add(m.group(1))
    version = re.search(r'#define\s+FRT_VERSION_STRING\s+"(\d+)\.(\d+)\.(\d+)"', text)
    return declared, marked, version.group(1) if version else None


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    header, lib = argv
    problems = []
    declared, marked, major = header_api(header)
    if not declared:
        problems.append(f"{header}: no frt_ function declarations found")
    for name in sorted(declared - marked):
        problems.append(f"{header}: {name} is declared without FRT_API")
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True,
                         text=True).stdout
    exported = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3:
            exported[f[2].split("@")[0]] = f[1]
    for name in sorted(set(exported) - declared - LINKER_SYMBOLS):
        problems.append(f"{lib}: exports {name} ({exported[name]}), which include/flatrt.h "
                        "does not declare")
    for name in sorted(declared - set(exported)):
        problems.append(f"{lib}: does not export {name}, declared in include/flatrt.h")
    for name in sorted(declared & set(exported)):
        if exported[name] != "T":
            problems.append(f"{lib}: {name} is exported as '{exported[name]}', not a function (T)")
    dyn = subprocess.run(["readelf", "-d", lib], check=True, capture_output=True, text=True).stdout
    sonames = re.findall(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", dyn)
    want = f"libflatrt.so.{major}"
    if major is None:
        problems.append(f"{header}: no FRT_VERSION_STRING \"major.minor.patch\"")
    elif sonames != [want]:
        problems.append(f"{lib}: SONAME {sonames or 'missing'}, expected {want}")
    for p in problems:
        print(p)
    n_ok = len(declared & set(exported))
    print(f"exports: {'FAIL' if problems else 'ok'}: {n_ok} of {len(declared)} public functions "
          f"exported, {len(set(exported) - LINKER_SYMBOLS)} symbols in all, SONAME {sonames}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
