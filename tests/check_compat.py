#!/usr/bin/env python3
"""check_compat.py: docs/compatibility.md names, for each call pattern of real programs, the test
that holds the library to it (its last table column). Every name given there in backquotes must
be a test of tests/*.c (TEST or TEST_ONCE) or a test helper declared in tests/*.h, so that a
renamed or deleted test cannot leave the page pointing at nothing.

usage: check_compat.py DOCS_COMPATIBILITY_MD TESTS_DIR"""
import glob
import os
import re
import sys


def main():
    doc, tests = sys.argv[1], sys.argv[2]
    known = set()
    for path in glob.glob(os.path.join(tests, "*.c")):
        with open(path) as f:
            known.update(re.findall(r"^TEST(?:_ONCE)?\((\w+)\)", f.read(), re.M))
    helpers = set()
    for path in glob.glob(os.path.join(tests, "*.h")):
        with open(path) as f:
            helpers.update(re.findall(r"\b(\w+)\s*\(", f.read()))
            f.seek(0)
            helpers.update(re.findall(r"^struct (\w+)", f.read(), re.M))
    bad, rows = [], 0
    with open(doc) as f:
        for n, line in enumerate(f, 1):
            if not line.startswith("|") or line.startswith("|---"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[-1] == "test":
                continue
            rows += 1
            for name in re.findall(r"`(\w+)`", cells[-1]):
                if name not in known and name not in helpers:
                    bad.append(f"{doc}:{n}: `{name}` is no test of {tests}")
    for b in bad:
        print(b)
    print(f"{rows} patterns, {'every' if not bad else 'not every'} test they name exists")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
