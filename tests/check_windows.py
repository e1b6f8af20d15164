#!/usr/bin/env python3
"""check_windows.py: the Windows DLL set of a cross build (or of a release zip) against the manifest.

  - cudnn64_8.dll exports every API function and nothing else; each cudnn_<sub>64_8.dll exports
    exactly the API functions api/functions-8.2.tsv gives its sub-library (the backend functions
    live in cnn_infer), plus internal ocd_* symbols only (the Linux private version node's);
  - the DLLs import nothing but Windows' own DLLs, the C runtime and each other;
  - the import libraries (cudnn.lib, cudnn_<sub>.lib) name their DLL and its API functions;
  - where clang and lld-link are installed (skipped with a message otherwise), an MSVC-ABI program
    (tests/probe/msvc_app.c, no C runtime) links with lld-link against cudnn.lib, and again
    against the six sub-library import libraries, and with --wine both programs run against the
    DLLs;
  - with --probe and --wine: the front, copied with one sub-library left out, makes the call fail
    with CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING and one message naming the DLL, the folder it
    was looked for in and the missing dependency (tests/probe/front_probe.exe under Wine).

Usage: check_windows.py --bin DIR --lib DIR --api functions-8.2.tsv [--probe EXE --wine WINE]
The PE and archive formats are read here directly, so no Windows tool is needed.
"""
import argparse
import csv
import os
import shutil
import struct
import subprocess
import sys
import tempfile

SUBLIBS = ["ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train"]
STATUS_PREREQUISITE_MISSING = 11
failures = []


def dll_name(lib):
    return "cudnn64_8.dll" if lib == "front" else "cudnn_%s64_8.dll" % lib


def implib_name(lib):
    return "cudnn.lib" if lib == "front" else "cudnn_%s.lib" % lib


class PE:
    """The export names and imported DLL names of a PE32+ file."""

    def __init__(self, path):
        self.data = open(path, "rb").read()
        d = self.data
        if d[:2] != b"MZ":
            raise ValueError("%s: not a PE file" % path)
        pe = struct.unpack_from("<I", d, 0x3C)[0]
        if d[pe:pe + 4] != b"PE\0\0":
            raise ValueError("%s: no PE signature" % path)
        nsec, = struct.unpack_from("<H", d, pe + 6)
        opt_size, = struct.unpack_from("<H", d, pe + 20)
        opt = pe + 24
        if struct.unpack_from("<H", d, opt)[0] != 0x20B:
            raise ValueError("%s: not PE32+" % path)
        self.dirs = [struct.unpack_from("<II", d, opt + 112 + 8 * i) for i in range(16)]
        self.sections = []
        for i in range(nsec):
            s = opt + opt_size + 40 * i
            vsize, va, rawsize, rawptr = struct.unpack_from("<IIII", d, s + 8)
            self.sections.append((va, max(vsize, rawsize), rawptr))

    def off(self, rva):
        for va, size, raw in self.sections:
            if va <= rva < va + size:
                return rva - va + raw
        raise ValueError("rva %#x outside the sections" % rva)

    def cstr(self, rva):
        o = self.off(rva)
        return self.data[o:self.data.index(b"\0", o)].decode()

    def exports(self):
        rva, size = self.dirs[0]
        if rva == 0:
            return set()
        o = self.off(rva)
        nnames, = struct.unpack_from("<I", self.data, o + 24)
        names_rva, = struct.unpack_from("<I", self.data, o + 32)
        return {self.cstr(struct.unpack_from("<I", self.data, self.off(names_rva) + 4 * i)[0]) for i in range(nnames)}

    def imports(self):
        rva, _ = self.dirs[1]
        out = []
        o = self.off(rva) if rva else None
        while o is not None:
            name_rva = struct.unpack_from("<I", self.data, o + 12)[0]
            if name_rva == 0:
                break
            out.append(self.cstr(name_rva))
            o += 20
        return out


def short_imports(path):
    """{symbol: dll} of the short import members of an import library (the format lib.exe and
    llvm-dlltool write); other members (the linker's own import objects) are counted apart."""
    d = open(path, "rb").read()
    if d[:8] != b"!<arch>\n":
        raise ValueError("%s: not an archive" % path)
    pos, syms, others = 8, {}, 0
    while pos + 60 <= len(d):
        size = int(d[pos + 48:pos + 58].decode().strip())
        body = d[pos + 60:pos + 60 + size]
        name = d[pos:pos + 16].decode(errors="replace").strip()
        if name not in ("/", "//") and len(body) >= 20:
            sig1, sig2 = struct.unpack_from("<HH", body, 0)
            if sig1 == 0 and sig2 == 0xFFFF:
                sym, dll = body[20:].split(b"\0")[:2]
                syms[sym.decode()] = dll.decode()
            else:
                others += 1
        pos += 60 + size + (size & 1)
    return syms, others


def check_dlls(bindir, api):
    system = {"kernel32.dll", "msvcrt.dll", "ucrtbase.dll", "user32.dll", "advapi32.dll"}
    ours = {dll_name(l).lower() for l in ["front"] + SUBLIBS}
    for lib in ["front"] + SUBLIBS:
        path = os.path.join(bindir, dll_name(lib))
        if not os.path.exists(path):
            failures.append("%s is missing" % path)
            continue
        pe = PE(path)
        got = pe.exports()
        want = set(api) if lib == "front" else {f for f, s in api.items() if s == lib}
        for fn in sorted(want - got):
            failures.append("%s does not export %s" % (dll_name(lib), fn))
        extra = sorted(s for s in got - want if lib == "front" or not s.startswith("ocd_"))
        if extra:
            failures.append("%s exports more than its API: %s" % (dll_name(lib), " ".join(extra[:10])))
        foreign = [d for d in pe.imports() if d.lower() not in system | ours and not d.lower().startswith("api-ms-win-")]
        if foreign:
            failures.append("%s needs DLLs that Windows does not ship: %s" % (dll_name(lib), " ".join(foreign)))
        print("%s: %d API functions, %d internal, imports %s" % (dll_name(lib), len(want & got), len(got - want),
                                                               " ".join(pe.imports())))


def check_import_libraries(libdir, bindir, api):
    for lib in ["front"] + SUBLIBS:
        path = os.path.join(libdir, implib_name(lib))
        if not os.path.exists(path):
            failures.append("%s is missing" % path)
            continue
        syms, others = short_imports(path)
        want = set(api) if lib == "front" else {f for f, s in api.items() if s == lib}
        missing = sorted(f for f in want if syms.get(f) != dll_name(lib))
        if missing:
            failures.append("%s: %d API functions not imported from %s (%s, ...)%s" % (
                implib_name(lib), len(missing), dll_name(lib), missing[0],
                " (not in the short import format)" if others else ""))


def check_msvc_link(libdir, bindir, wine):
    """tests/probe/msvc_app.c compiled for the Microsoft ABI (clang), linked by lld-link once against
    cudnn.lib and once against the six sub-library import libraries, each program importing the
    DLLs it should; with Wine, both run against the DLLs and exit 0."""
    clang, lld = shutil.which("clang"), shutil.which("lld-link")
    dlltool = next((shutil.which(t) for t in ["llvm-dlltool", "llvm-dlltool-16", "llvm-dlltool-15", "llvm-dlltool-14"]
                    if shutil.which(t)), None)
    if not (clang and lld and dlltool):
        print("import libraries: not linked with an MSVC-compatible linker (clang, lld-link or llvm-dlltool missing)")
        return
    here = os.path.dirname(os.path.abspath(__file__))
    include = os.path.join(here, "..", "include")
    with tempfile.TemporaryDirectory(prefix="ocd_msvc_") as tmp:
        obj = os.path.join(tmp, "msvc_app.obj")
        r = subprocess.run([clang, "--target=x86_64-pc-windows-msvc", "-ffreestanding", "-fno-stack-protector", "-O1",
                            "-DOPENCUDNN_NO_CUDA_HEADERS", "-I", include, "-c",
                            os.path.join(here, "probe", "msvc_app.c"), "-o", obj], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append("clang cannot compile tests/probe/msvc_app.c for the MSVC ABI: " + r.stderr.strip())
            return
        kernel32 = os.path.join(tmp, "kernel32.lib")  # ExitProcess: no Windows SDK here
        with open(os.path.join(tmp, "kernel32.def"), "w") as f:
            f.write("LIBRARY kernel32.dll\nEXPORTS\nExitProcess\n")
        subprocess.run([dlltool, "-m", "i386:x86-64", "-d", os.path.join(tmp, "kernel32.def"), "-l", kernel32],
                       check=True)
        programs = [("front.exe", ["front"]), ("sublibs.exe", SUBLIBS)]
        for exe, libs in programs:
            r = subprocess.run([lld, "/entry:run", "/subsystem:console", "/nodefaultlib", "/machine:x64",
                                "/out:" + os.path.join(tmp, exe), obj, kernel32] +
                               [os.path.join(libdir, implib_name(lib)) for lib in libs], capture_output=True, text=True)
            if r.returncode != 0:
                failures.append("lld-link cannot link %s against %s: %s" % (
                    exe, " ".join(implib_name(lib) for lib in libs), (r.stderr or r.stdout).strip()))
                return
            imports = sorted(PE(os.path.join(tmp, exe)).imports())
            want = sorted([dll_name(lib) for lib in libs] + ["kernel32.dll"])
            if [i.lower() for i in imports] != [w.lower() for w in want]:
                failures.append("%s imports %s, not %s" % (exe, " ".join(imports), " ".join(want)))
        print("import libraries: msvc_app linked by lld-link against cudnn.lib and against the six cudnn_<sub>.lib")
        if not wine:
            print("import libraries: the MSVC-linked programs not run (no Wine)")
            return
        for lib in ["front"] + SUBLIBS:
            shutil.copy(os.path.join(bindir, dll_name(lib)), tmp)
        env = dict(os.environ)
        env.pop("WINEPATH", None)  # the DLLs beside the programs, nothing else
        for exe, _ in programs:
            r = subprocess.run(wine + [os.path.join(tmp, exe)], capture_output=True, text=True, timeout=120, env=env,
                               cwd=tmp)
            if r.returncode != 0:
                failures.append("%s (MSVC-linked) under Wine: exit code %d (msvc_app.c: the failed check)\n%s" % (
                    exe, r.returncode, r.stderr))
        print("import libraries: both MSVC-linked programs ran under Wine")


def windows_path(path):
    return "Z:" + os.path.abspath(path).replace("/", "\\")


def run_probe(wine, probe, bindir, omit, call):
    """The probe's status and stderr, with the DLLs copied to a new folder less `omit`."""
    with tempfile.TemporaryDirectory(prefix="ocd_loading_") as tmp:
        for lib in ["front"] + SUBLIBS:
            if dll_name(lib) != omit:
                shutil.copy(os.path.join(bindir, dll_name(lib)), tmp)
        env = dict(os.environ)
        env.pop("WINEPATH", None)  # the build folder on PATH would hide the missing DLL
        r = subprocess.run(wine + [probe, windows_path(tmp), call], capture_output=True, text=True, timeout=120,
                           env=env)
        return r.returncode, r.stderr, windows_path(tmp)


def check_loading(wine, probe, bindir):
    status, err, folder = run_probe(wine, probe, bindir, "cudnn_ops_infer64_8.dll", "create")
    ok = (status == STATUS_PREREQUISITE_MISSING and "cannot load cudnn_ops_infer64_8.dll" in err
          and folder.lower() in err.lower() and "DLL search path" in err)
    if not ok:
        failures.append("missing cudnn_ops_infer64_8.dll: status %d, message:\n%s" % (status, err))
    status, err, _ = run_probe(wine, probe, bindir, "cudnn_ops_infer64_8.dll", "cudnnCnnInferVersionCheck")
    ok = (status == STATUS_PREREQUISITE_MISSING and "cannot load cudnn_cnn_infer64_8.dll" in err
          and "cannot be loaded: cudnn_ops_infer64_8.dll" in err and err.count("cannot load") == 1)
    if not ok:
        failures.append("cnn_infer without ops_infer: status %d, message:\n%s" % (status, err))
    status, err, _ = run_probe(wine, probe, bindir, "none", "cudnnAdvTrainVersionCheck")
    if status != 0 or "opencudnn" in err:
        failures.append("a complete copy: status %d, message:\n%s" % (status, err))
    print("loading under Wine: a missing sub-library and a missing dependency reported, a complete copy loads")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--api", required=True)
    ap.add_argument("--probe")
    ap.add_argument("--wine", default="")
    a = ap.parse_args()
    api = {}
    for r in csv.DictReader(open(a.api), delimiter="\t"):
        api[r["function"]] = "cnn_infer" if r["sublibrary"] == "backend" else r["sublibrary"]
    check_dlls(a.bin, api)
    check_import_libraries(a.lib, a.bin, api)
    check_msvc_link(a.lib, a.bin, a.wine.split(";") if a.wine else [])
    if a.probe and a.wine:
        check_loading(a.wine.split(";"), a.probe, a.bin)
    elif a.probe:
        print("loading: not run (no Wine)")
    for f in failures:
        print("FAILED: " + f)
    print("check_windows: " + ("ok" if not failures else "%d failures" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
