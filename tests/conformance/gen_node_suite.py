#!/usr/bin/python3
"""Writes the ONNX node test suite shipped with Debian's python3-onnx (1.12) into OUT_DIR/node.

Usage: /usr/bin/python3 tests/conformance/gen_node_suite.py OUT_DIR

Some generators of onnx 1.12 still use numpy aliases that numpy 1.24 removed (np.float, np.int,
np.bool, np.object, ...); they are restored before the generators run.
"""
import os
import sys
import warnings

import numpy as np

for alias, typ in (("float", float), ("int", int), ("bool", bool), ("object", object),
                   ("complex", complex), ("str", str)):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not hasattr(np, alias):
            setattr(np, alias, typ)

from onnx.backend.test import cmd_tools  # noqa: E402


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[0]
    os.makedirs(out, exist_ok=True)
    sys.argv = ["cmd_tools", "generate-data", "-o", out]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmd_tools.main()
    n = len(os.listdir(os.path.join(out, "node")))
    print(f"{n} node cases in {os.path.join(out, 'node')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
