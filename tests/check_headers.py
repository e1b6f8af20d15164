#!/usr/bin/env python3
"""check_headers.py: the public headers against the API manifest, with a real compiler.

Checks, each by compiling (and where needed running) a small program:
  1. every enum value and #define of api/enums-8.2.tsv has exactly its value (version macros
     excepted: the project is 8.2.2, the manifest was read off 8.2.1);
  2. every function of api/functions-8.2.tsv is declared with the manifest's signature
     (a second declaration with that prototype must compile with -Werror);
  3. the public structs have the sizes and offsets of structs-8.2.md;
  4. cudnn.h compiles as C89, C99, C11 and C++ (98 and 17), with and without the CUDA headers
     reachable, and with CUDNN_WARN_DEPRECATED;
  5. with the CUDA include directory (which holds the vendor's cudnn.h) on the path after ours,
     <cudnn.h> still resolves to ours.
"""
import argparse, csv, os, re, shutil, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--cc", required=True)
ap.add_argument("--include", required=True)
ap.add_argument("--api", required=True)
ap.add_argument("--cuda-include", default="")
args = ap.parse_args()
tmp = tempfile.mkdtemp(prefix="ocd_headers_")
failures = []
cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
cuda_inc = [d for d in args.cuda_include.split(";") if d and os.path.exists(os.path.join(d, "cuda_runtime.h"))]


def compile_src(name, text, flags, compiler=None, run=False):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    exe = path + ".out"
    # ours first: a later -I (the CUDA include directory) must not shadow our cudnn.h
    cmd = [compiler or args.cc, "-I", args.include] + flags + [path, "-o", exe]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        failures.append("%s: compile failed (%s)\n%s" % (name, " ".join(flags), r.stderr[:3000]))
        return None
    if run:
        return subprocess.run([exe], capture_output=True, text=True).stdout
    return ""


enums = list(csv.DictReader(open(os.path.join(args.api, "enums-8.2.tsv")), delimiter="\t"))
skip = re.compile(r"^(CUDNN_VERSION|CUDNN_(\w+_)?(MAJOR|MINOR|PATCH|PATCHLEVEL)|CUDNNWINAPI|CUDNN_DEPRECATED)$")
checks = [e for e in enums if not skip.match(e["name"])]
body = "\n".join('    printf("%%s %%.17g\\n", "%s", (double)(%s));' % (e["name"], e["name"]) for e in checks)
out = compile_src("enums.c", "#include <stdio.h>\n#include <cudnn.h>\nint main(void)\n{\n%s\n    return 0;\n}\n" % body,
                  ["-std=c11", "-DOPENCUDNN_NO_CUDA_HEADERS"], run=True)
if out is not None:
    got = dict(line.split(" ", 1) for line in out.splitlines())
    for e in checks:
        if float(got.get(e["name"], "nan")) != float(e["value"]):
            failures.append("%s is %s, the manifest says %s" % (e["name"], got.get(e["name"]), e["value"]))
    print("enum values checked: %d" % len(checks))

funcs = list(csv.DictReader(open(os.path.join(args.api, "functions-8.2.tsv")), delimiter="\t"))
decls = "\n".join("%s CUDNNWINAPI %s(%s);" % (f["return_type"], f["function"], f["parameters"]) for f in funcs)
compile_src("decls.c", "#include <cudnn.h>\n%s\nint main(void) { return 0; }\n" % decls,
            ["-std=c11", "-Wall", "-Werror", "-DOPENCUDNN_NO_CUDA_HEADERS"])
print("function declarations checked: %d" % len(funcs))

layout = r"""
#include <stddef.h>
#include <cudnn.h>
#define SAME(a, b) typedef char check_##__LINE__[(a) == (b) ? 1 : -1]
#define AT(type, field, off) _Static_assert(offsetof(type, field) == (off), #type "." #field)
#define SIZE(type, n) _Static_assert(sizeof(type) == (n), "sizeof " #type)
SIZE(cudnnConvolutionFwdAlgoPerf_t, 48); SIZE(cudnnConvolutionBwdDataAlgoPerf_t, 48);
SIZE(cudnnConvolutionBwdFilterAlgoPerf_t, 48);
AT(cudnnConvolutionFwdAlgoPerf_t, algo, 0); AT(cudnnConvolutionFwdAlgoPerf_t, status, 4);
AT(cudnnConvolutionFwdAlgoPerf_t, time, 8); AT(cudnnConvolutionFwdAlgoPerf_t, memory, 16);
AT(cudnnConvolutionFwdAlgoPerf_t, determinism, 24); AT(cudnnConvolutionFwdAlgoPerf_t, mathType, 28);
AT(cudnnConvolutionFwdAlgoPerf_t, reserved, 32);
AT(cudnnConvolutionBwdDataAlgoPerf_t, memory, 16); AT(cudnnConvolutionBwdDataAlgoPerf_t, reserved, 32);
AT(cudnnConvolutionBwdFilterAlgoPerf_t, memory, 16); AT(cudnnConvolutionBwdFilterAlgoPerf_t, reserved, 32);
SIZE(cudnnDebug_t, 120);
AT(cudnnDebug_t, cudnn_version, 0); AT(cudnnDebug_t, cudnnStatus, 4); AT(cudnnDebug_t, time_sec, 8);
AT(cudnnDebug_t, time_usec, 12); AT(cudnnDebug_t, time_delta, 16); AT(cudnnDebug_t, handle, 24);
AT(cudnnDebug_t, stream, 32); AT(cudnnDebug_t, pid, 40); AT(cudnnDebug_t, tid, 48);
AT(cudnnDebug_t, cudaDeviceId, 56); AT(cudnnDebug_t, reserved, 60);
SIZE(cudnnAlgorithm_t, 4);
SIZE(cudnnHandle_t, sizeof(void *)); SIZE(cudnnBackendDescriptor_t, sizeof(void *));
SIZE(cudnnDataType_t, 4); SIZE(cudnnBackendAttributeName_t, 4); SIZE(cudnnRNNPaddingMode_t, 4);
int main(void) { return 0; }
"""
compile_src("layout.c", layout, ["-std=c11", "-DOPENCUDNN_NO_CUDA_HEADERS"])
print("struct layouts checked")

use = "#include <cudnn.h>\nint main(void) { cudnnHandle_t h = 0; (void)h; return (int)cudnnGetVersion() == 0; }\n"
variants = [("c89", ["-std=c89", "-Wall", "-Werror", "-fsyntax-only"]),
            ("c99", ["-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"]),
            ("c11", ["-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only"]),
            ("deprecated", ["-std=c11", "-DCUDNN_WARN_DEPRECATED", "-Werror", "-fsyntax-only"])]
for name, flags in variants:
    compile_src("use_%s.c" % name, use, flags)
    for inc in cuda_inc:
        compile_src("use_%s_cuda.c" % name, use, flags + ["-I", inc])
if cxx:
    for std in ("c++98", "c++17"):
        compile_src("use_%s.cpp" % std.replace("+", "p"), use, ["-std=" + std, "-Wall", "-Werror", "-fsyntax-only"], cxx)
        for inc in cuda_inc:
            compile_src("use_%s_cuda.cpp" % std.replace("+", "p"), use, ["-std=" + std, "-fsyntax-only", "-I", inc], cxx)
print("language variants checked (CUDA headers: %s; C++: %s)" % (cuda_inc or "not found", cxx or "not found"))

# The vendor's cudnn.h says CUDNN_MAJOR 9; ours 8. With its directory after ours, ours must win.
ours = "#include <cudnn.h>\n#if CUDNN_MAJOR != 8 || !defined(OPENCUDNN_CUDNN_H_)\n#error not opencudnn's cudnn.h\n#endif\nint main(void) { return 0; }\n"
for inc in cuda_inc:
    compile_src("isolation.c", ours, ["-std=c11", "-fsyntax-only", "-I", args.include, "-I", inc])
print("include isolation checked against: %s" % (cuda_inc or "no CUDA include directory"))

shutil.rmtree(tmp, ignore_errors=True)
for f in failures:
    print("FAILED: " + f)
print("check_headers: " + ("ok" if not failures else "%d failures" % len(failures)))
sys.exit(1 if failures else 0)
