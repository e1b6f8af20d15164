#!/usr/bin/env python3
"""check_exports.py LIBDIR MANIFEST: the symbols of the built libraries against the manifest.

  - libcudnn.so.8 exports every API function, under the version node libcudnn.so.8, and nothing else;
  - each sub-library exports exactly the API functions the manifest gives it (the backend
    functions live in cnn_infer), under its own soname's node, plus internal ocd_* symbols under
    OPENCUDNN_PRIVATE_8 only;
  - the test runner links libcudnn.so.8 (ours) and no libcudnn of another major version.
"""
import csv, os, subprocess, sys

libdir, manifest = sys.argv[1], sys.argv[2]
sub_of = {r["function"]: r["sublibrary"] for r in csv.DictReader(open(manifest), delimiter="\t")}
failures = []


def dynsyms(path):
    out = subprocess.run(["readelf", "--dyn-syms", "-W", path], capture_output=True, text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) < 8 or f[6] == "UND" or f[4] not in ("GLOBAL", "WEAK"):
            continue
        name, _, ver = f[7].partition("@")
        syms[name] = ver.lstrip("@")
    return syms


front = dynsyms(os.path.join(libdir, "libcudnn.so.8"))
for fn in sub_of:
    if front.get(fn) != "libcudnn.so.8":
        failures.append("libcudnn.so.8: %s %s" % (fn, "missing" if fn not in front else "has node " + front[fn]))
extra = sorted(s for s in front if s not in sub_of and s != "libcudnn.so.8")
if extra:
    failures.append("libcudnn.so.8 exports more than the API: " + " ".join(extra[:10]))

for sub in ("ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train"):
    soname = "libcudnn_%s.so.8" % sub
    syms = dynsyms(os.path.join(libdir, soname))
    want = {fn for fn, s in sub_of.items() if (s == sub or (s == "backend" and sub == "cnn_infer"))}
    for fn in want:
        if syms.get(fn) != soname:
            failures.append("%s: %s %s" % (soname, fn, "missing" if fn not in syms else "has node " + syms[fn]))
    for s, ver in syms.items():
        if s in want or s == soname or s == "OPENCUDNN_PRIVATE_8":
            continue
        if not (s.startswith("ocd_") and ver == "OPENCUDNN_PRIVATE_8"):
            failures.append("%s exports %s@%s" % (soname, s, ver))
    print("%s: %d API functions" % (soname, len(want)))

runner = os.path.join(libdir, "tests", "opencudnn_tests")
if os.path.exists(runner):
    needed = subprocess.run(["readelf", "-d", runner], capture_output=True, text=True).stdout
    if "[libcudnn.so.8]" not in needed:
        failures.append("the test runner does not link libcudnn.so.8")
    if "libcudnn.so.9" in needed or "libcudnn_graph" in needed:
        failures.append("the test runner links the vendor's cuDNN 9")
    ldd = subprocess.run(["ldd", runner], capture_output=True, text=True).stdout
    line = [l for l in ldd.splitlines() if "libcudnn.so.8" in l]
    if not line or os.path.realpath(libdir) not in os.path.realpath(line[0].split("=>")[1].split()[0]):
        failures.append("libcudnn.so.8 resolves outside the build: %s" % (line[0] if line else "not found"))
    print("the test runner links our libcudnn.so.8")

for f in failures:
    print("FAILED: " + f)
print("check_exports: " + ("ok" if not failures else "%d failures" % len(failures)))
sys.exit(1 if failures else 0)
