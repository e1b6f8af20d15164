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

It skips (exit 77) when the suite did not run whole: a test file without its .done marker (ctest
-R, a runner -k or -b selection, a crash, which its own test reports) or OPENCUDNN_TEST_SUBSET
(the sanitizer run's sampling of the convolution matrix).

--reset DIR empties the directory first (the fixture's setup)."""
import argparse
import collections
import glob
import os
import shutil
import sys

SKIP = 77


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
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
    if failed:
        print("never chosen by the suite (add a test whose problem makes the entry apply):")
        for n in failed:
            print(f"  {n} ({backend[n]})")
        return 1
    print("every entry of every table walked was chosen at least once")
    return 0


if __name__ == "__main__":
    sys.exit(main())
