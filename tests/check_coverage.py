#!/usr/bin/env python3
"""check_coverage.py: registry coverage. Proves that the test suite chose every implementation
entry of every table the suite walked, on each backend that ran (core/impl.h).

Each unit test runs with OPENCUDNN_IMPL_COVERAGE=<dir>/<test>: the library writes, at exit,
<dir>/<test>.<pid> with one line per entry of every table the process walked ("name TAB backend
TAB times chosen"), and the runner writes <dir>/<test>.done naming the backend passes it ran
(tests/runner.c). This script, run by ctest after every unit test (a fixture cleanup), sums the
counts over the processes:

  - a host entry never chosen fails the check: a new entry needs a test whose problem makes its
    applies() accept (and, for an algorithm entry, asks for its algorithm);
  - a CUDA entry never chosen fails it when a CUDA pass ran (a GPU present); without one, the
    CUDA entries are listed as checked on the CUDA pass.

A table the suite never walked writes nothing, so the tables are also read from the sources
(--src: every `const struct ocd_impl NAME[] = {` or `struct ocd_conv_impl`): each must have been
walked, known by the entry names written literally in it (its host ones; a table naming only
CUDA entries on the CUDA pass).

It skips (exit 77) when the suite did not run whole: a test file without its .done marker (ctest
-R, a runner -k or -b selection, a crash, which its own test reports) or OPENCUDNN_TEST_SUBSET
(the sanitizer run's sampling of the convolution matrix).

--reset DIR empties the directory first (the fixture's setup)."""
import argparse
import collections
import glob
import os
import re
import shutil
import sys

SKIP = 77
TABLE = re.compile(r"^(?:static )?const struct ocd_(?:conv_)?impl (\w+)\[\] = \{", re.M)
NAME = re.compile(r'"((?:host|cuda):[a-z0-9_]+)"')


def tables(src):
    """(file, table, entry names written literally) of every implementation table in src/."""
    out = []
    for path in sorted(glob.glob(os.path.join(src, "**", "*.c"), recursive=True)):
        with open(path) as f:
            text = f.read()
        for m in TABLE.finditer(text):
            end = text.find("\n};", m.end())
            out.append((os.path.relpath(path, src), m.group(1), NAME.findall(text[m.end():end])))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--src", help="the library's src/ directory: every table in it must be walked")
    ap.add_argument("--reset", action="store_true")
    ap.add_argument("tests", nargs="*")
    a = ap.parse_args()
    if a.reset:
        shutil.rmtree(a.dir, ignore_errors=True)
        os.makedirs(a.dir)
        return 0
    subset = os.environ.get("OPENCUDNN_TEST_SUBSET", "")
    if subset not in ("", "0", "1"):
        print(f"skipped: OPENCUDNN_TEST_SUBSET={subset} runs part of the matrix")
        return SKIP
    passes = set()
    missing = []
    for t in a.tests:
        done = os.path.join(a.dir, t + ".done")
        if not os.path.exists(done):
            missing.append(t)
            continue
        with open(done) as f:
            passes.update(f.read().split())
    if missing:
        print(f"skipped: {len(missing)} of {len(a.tests)} test files did not run whole "
              f"({', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''})")
        return SKIP

    chosen = collections.Counter()
    backend = {}
    for path in glob.glob(os.path.join(a.dir, "*.*")):
        if path.endswith(".done"):
            continue
        with open(path) as f:
            for line in f:
                name, kind, count = line.rstrip("\n").split("\t")
                backend[name] = kind
                chosen[name] += int(count)

    never = {k: sorted(n for n in backend if backend[n] == k and chosen[n] == 0) for k in ("host", "cuda")}
    for k in ("host", "cuda"):
        names = [n for n in backend if backend[n] == k]
        print(f"{k}: {len(names)} entries, {len(names) - len(never[k])} chosen by the suite")
    failed = list(never["host"])
    if "cuda" in passes:
        failed += never["cuda"]
    elif never["cuda"]:
        print("CUDA-only entries, checked on the CUDA pass (no CUDA device ran here):")
        for n in never["cuda"]:
            print(f"  {n}")
    unwalked = []
    for path, table, names in tables(a.src) if a.src else []:
        host = [n for n in names if n.startswith("host:")]
        wanted = host if host else names if "cuda" in passes else []
        if wanted and not any(n in backend for n in wanted):
            unwalked.append(f"{table} ({path})")
    if unwalked:
        print("tables the suite never walked (add a test that calls their op):")
        for t in unwalked:
            print(f"  {t}")
    if failed:
        print("never chosen by the suite (add a test whose problem makes the entry apply):")
        for n in failed:
            print(f"  {n} ({backend[n]})")
    if failed or unwalked:
        return 1
    print("every entry of every table walked was chosen at least once")
    return 0


if __name__ == "__main__":
    sys.exit(main())
