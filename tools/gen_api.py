#!/usr/bin/env python3
"""gen_api.py: everything opencudnn derives from the cuDNN 8.2 API manifest (api/*.tsv).

The manifest (api/functions-8.2.tsv, api/enums-8.2.tsv) is the single source of the ABI facts:
every function with its sub-library and signature, every enum value. From it this script writes

  headers   include/cudnn*.h                 (committed; `--check` proves they are up to date)
  build     <outdir>/front_table.c          the front's forwarders, one per API function
            <outdir>/<lib>.map               ELF version scripts, one node per soname
            <outdir>/cudnn64_8.def           the Windows front's export list (module definition)
            <outdir>/stubs_<sub>.c           NOT_SUPPORTED bodies for api/unimplemented.txt
            <outdir>/unimplemented_calls.c   a table the test suite uses to call every stub

  def       <out>.def                        a Windows sub-library's exports: its API functions
                                             and the internal ocd_* symbols its objects define
                                             (what OPENCUDNN_PRIVATE_8 exports on Linux), read
                                             from the objects with nm at link time

Usage: gen_api.py headers [--check]     gen_api.py build OUTDIR
       gen_api.py def SUBLIB OUT.def NM OBJECT...
"""
import csv
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
API = os.path.join(ROOT, "api")

# The project follows the issue and DESIGN.md: 8.2.2. (The manifest was read off 8.2.1 headers.)
VERSION = (8, 2, 2)

SUBLIBS = ["ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train"]
# The backend (graph) functions live in cnn_infer, as in cuDNN 8.2.
HOME = {s: s for s in SUBLIBS}
HOME["backend"] = "cnn_infer"
HEADER_OF_SUB = {s: "cudnn_%s.h" % s for s in SUBLIBS}
HEADER_OF_SUB["backend"] = "cudnn_backend.h"
# Include graph of the 8.2 headers (structs-8.2.md section 1).
INCLUDES = {
    "cudnn_ops_infer.h": [],
    "cudnn_ops_train.h": ["cudnn_ops_infer.h"],
    "cudnn_cnn_infer.h": ["cudnn_ops_infer.h"],
    "cudnn_cnn_train.h": ["cudnn_ops_infer.h", "cudnn_ops_train.h", "cudnn_cnn_infer.h"],
    "cudnn_adv_infer.h": ["cudnn_ops_infer.h"],
    "cudnn_adv_train.h": ["cudnn_ops_infer.h", "cudnn_ops_train.h", "cudnn_adv_infer.h"],
    "cudnn_backend.h": ["cudnn_ops_infer.h", "cudnn_cnn_infer.h"],
}

# Opaque handles: (typedef, struct tag, header). From structs-8.2.md section 2.
OPAQUE = [
    ("cudnnHandle_t", "cudnnContext", "cudnn_ops_infer.h"),
    ("cudnnTensorDescriptor_t", "cudnnTensorStruct", "cudnn_ops_infer.h"),
    ("cudnnPoolingDescriptor_t", "cudnnPoolingStruct", "cudnn_ops_infer.h"),
    ("cudnnFilterDescriptor_t", "cudnnFilterStruct", "cudnn_ops_infer.h"),
    ("cudnnLRNDescriptor_t", "cudnnLRNStruct", "cudnn_ops_infer.h"),
    ("cudnnActivationDescriptor_t", "cudnnActivationStruct", "cudnn_ops_infer.h"),
    ("cudnnSpatialTransformerDescriptor_t", "cudnnSpatialTransformerStruct", "cudnn_ops_infer.h"),
    ("cudnnOpTensorDescriptor_t", "cudnnOpTensorStruct", "cudnn_ops_infer.h"),
    ("cudnnReduceTensorDescriptor_t", "cudnnReduceTensorStruct", "cudnn_ops_infer.h"),
    ("cudnnCTCLossDescriptor_t", "cudnnCTCLossStruct", "cudnn_ops_infer.h"),
    ("cudnnTensorTransformDescriptor_t", "cudnnTensorTransformStruct", "cudnn_ops_infer.h"),
    ("cudnnDropoutDescriptor_t", "cudnnDropoutStruct", "cudnn_ops_infer.h"),
    ("cudnnAlgorithmDescriptor_t", "cudnnAlgorithmStruct", "cudnn_ops_infer.h"),
    ("cudnnAlgorithmPerformance_t", "cudnnAlgorithmPerformanceStruct", "cudnn_ops_infer.h"),
    ("cudnnConvolutionDescriptor_t", "cudnnConvolutionStruct", "cudnn_cnn_infer.h"),
    ("cudnnFusedOpsConstParamPack_t", "cudnnFusedOpsConstParamStruct", "cudnn_cnn_infer.h"),
    ("cudnnFusedOpsVariantParamPack_t", "cudnnFusedOpsVariantParamStruct", "cudnn_cnn_infer.h"),
    ("cudnnFusedOpsPlan_t", "cudnnFusedOpsPlanStruct", "cudnn_cnn_infer.h"),
    ("cudnnRNNDescriptor_t", "cudnnRNNStruct", "cudnn_adv_infer.h"),
    ("cudnnPersistentRNNPlan_t", "cudnnPersistentRNNPlan", "cudnn_adv_infer.h"),
    ("cudnnRNNDataDescriptor_t", "cudnnRNNDataStruct", "cudnn_adv_infer.h"),
    ("cudnnSeqDataDescriptor_t", "cudnnSeqDataStruct", "cudnn_adv_infer.h"),
    ("cudnnAttnDescriptor_t", "cudnnAttnStruct", "cudnn_adv_infer.h"),
]

# Declarations that are not enums or opaque handles, placed after the header's enums.
EXTRA_DECLS = {
    "cudnn_ops_infer.h": """\
/* Forward definition in this version only; callers of cudnnQueryRuntimeError pass NULL. */
typedef struct cudnnRuntimeTag_t cudnnRuntimeTag_t;

/* Kept for the deprecated algorithm-descriptor API. */
typedef struct cudnnAlgorithmUnionStruct {
    union Algorithm {
        cudnnConvolutionFwdAlgo_t convFwdAlgo;
        cudnnConvolutionBwdFilterAlgo_t convBwdFilterAlgo;
        cudnnConvolutionBwdDataAlgo_t convBwdDataAlgo;
        cudnnRNNAlgo_t RNNAlgo;
        cudnnCTCLossAlgo_t CTCLossAlgo;
    } algo;
} cudnnAlgorithm_t;

/* What a logging callback receives with each message. */
typedef struct cudnnDebugStruct {
    unsigned cudnn_version;     /* CUDNN_VERSION of the library */
    cudnnStatus_t cudnnStatus;  /* status of the call being logged */
    unsigned time_sec;          /* epoch time, seconds */
    unsigned time_usec;         /* microseconds part of the epoch time */
    unsigned time_delta;        /* seconds since the first message */
    cudnnHandle_t handle;       /* handle of the call, or NULL */
    cudaStream_t stream;        /* its stream */
    unsigned long long pid;     /* process id */
    unsigned long long tid;     /* thread id */
    int cudaDeviceId;           /* device of the handle */
    int reserved[15];
} cudnnDebug_t;

typedef void (*cudnnCallback_t)(cudnnSeverity_t sev, void *udata, const cudnnDebug_t *dbg, const char *msg);
""",
    "cudnn_cnn_infer.h": "".join(
        """\
typedef struct %sStruct {
    %s algo;
    cudnnStatus_t status;
    float time;             /* milliseconds */
    size_t memory;          /* bytes of workspace */
    cudnnDeterminism_t determinism;
    cudnnMathType_t mathType;
    int reserved[3];
} %s_t;

""" % (n, a, n) for n, a in [("cudnnConvolutionFwdAlgoPerf", "cudnnConvolutionFwdAlgo_t"),
                               ("cudnnConvolutionBwdDataAlgoPerf", "cudnnConvolutionBwdDataAlgo_t")]),
    "cudnn_cnn_train.h": """\
typedef struct cudnnConvolutionBwdFilterAlgoPerfStruct {
    cudnnConvolutionBwdFilterAlgo_t algo;
    cudnnStatus_t status;
    float time;             /* milliseconds */
    size_t memory;          /* bytes of workspace */
    cudnnDeterminism_t determinism;
    cudnnMathType_t mathType;
    int reserved[3];
} cudnnConvolutionBwdFilterAlgoPerf_t;
""",
    "cudnn_adv_infer.h": """\
typedef unsigned cudnnRNNPaddingMode_t; /* legacy: values are CUDNN_RNN_PADDED_IO_* */
typedef unsigned cudnnAttnQueryMap_t;   /* legacy: values are CUDNN_ATTN_QUERYMAP_* */
""",
    "cudnn_backend.h": "typedef void *cudnnBackendDescriptor_t;\n",
}

CUDA_TYPES = """\
/* The CUDA runtime types the API needs. cudnn.h brings in the CUDA runtime header when the
   compiler can reach it (programs written for cuDNN rely on that); without it, the two types
   are declared here exactly as CUDA declares them. */
#if defined(__has_include)
#  if __has_include(<cuda_runtime.h>) && !defined(OPENCUDNN_NO_CUDA_HEADERS)
#    include <cuda_runtime.h>
#    define OPENCUDNN_HAVE_CUDA_HEADERS 1
#  endif
#elif !defined(OPENCUDNN_NO_CUDA_HEADERS)
#  include <cuda_runtime.h>
#  define OPENCUDNN_HAVE_CUDA_HEADERS 1
#endif
#ifndef OPENCUDNN_HAVE_CUDA_HEADERS
typedef struct CUstream_st *cudaStream_t;
#endif
"""

PLATFORM_MACROS = """\
#ifndef CUDNNWINAPI
#  ifdef _WIN32
#    define CUDNNWINAPI __stdcall
#  else
#    define CUDNNWINAPI
#  endif
#endif

/* Deprecated functions are marked only when the program asks for it. */
#if defined(CUDNN_WARN_DEPRECATED) && (defined(__GNUC__) || defined(__clang__))
#  define CUDNN_DEPRECATED __attribute__((deprecated))
#elif defined(CUDNN_WARN_DEPRECATED) && defined(_MSC_VER)
#  define CUDNN_DEPRECATED __declspec(deprecated)
#elif defined(CUDNN_WARN_DEPRECATED) && defined(__cplusplus) && __cplusplus >= 201402L
#  define CUDNN_DEPRECATED [[deprecated]]
#else
#  define CUDNN_DEPRECATED
#endif
"""


def read_tsv(name):
    with open(os.path.join(API, name), newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def functions():
    rows = read_tsv("functions-8.2.tsv")
    for r in rows:
        r["home"] = HOME[r["sublibrary"]]
        r["params_list"] = [] if r["parameters"].strip() == "void" else split_params(r["parameters"])
    return rows


def split_params(text):
    """'const int dimA[], int n' -> [('const int *', 'dimA', 'const int dimA[]'), ('int', 'n', 'int n')]."""
    out = []
    for p in text.split(","):
        p = p.strip()
        m = re.match(r"^(.*?)([A-Za-z_][A-Za-z0-9_]*)\s*(\[\])?$", p)
        if not m:
            raise SystemExit("cannot parse parameter %r" % p)
        ctype = m.group(1).strip() + (" *" if m.group(3) else "")
        out.append((ctype, m.group(2), p))
    return out


def enums():
    """[(header, kind, name, [(value_name, value)])] in manifest order; kind is 'enum' or 'define'."""
    groups = []
    for r in read_tsv("enums-8.2.tsv"):
        kind = "define" if r["type"] == "#define" else "enum"
        key = (r["header"], kind, None if kind == "define" else r["type"])
        if not groups or groups[-1][:3] != key:
            groups.append(key + ([],))
        groups[-1][3].append((r["name"], r["value"]))
    return groups


SKIPPED_DEFINES = {"CUDNNWINAPI", "CUDNN_DEPRECATED"}  # emitted as PLATFORM_MACROS


def define_value(name, value):
    if re.match(r"CUDNN_(\w+_)?(MAJOR|MINOR|PATCH|PATCHLEVEL)$", name):
        part = {"MAJOR": 0, "MINOR": 1}.get(name.rsplit("_", 1)[1], 2)
        return str(VERSION[part])
    if name == "CUDNN_VERSION":
        return "(CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)"
    if name.endswith("_EN"):
        return "%sU" % value
    return value


def guard(header):
    return "OPENCUDNN_" + re.sub(r"\W", "_", header).upper()


def header_text(header, funcs, groups):
    sub_key = header[len("cudnn_"):-2].upper()
    lines = ["/* %s: part of opencudnn's cuDNN 8.2 API, generated by tools/gen_api.py from the api/ manifest." % header,
             "   Do not edit: change the manifest or the generator. */",
             "#ifndef %s" % guard(header), "#define %s" % guard(header), ""]
    if header == "cudnn_version.h":
        for h, kind, _, vals in groups:
            for n, v in (vals if h == header else []):
                lines.append("#define %s %s" % (n, define_value(n, v)))
        lines += ["", "#endif /* %s */" % guard(header), ""]
        return "\n".join(lines)
    if header == "cudnn_ops_infer.h":
        lines += ["#include <stddef.h>", "#include <stdint.h>", ""]
    lines.append('#include "cudnn_version.h"')
    for inc in INCLUDES[header]:
        lines.append('#include "%s"' % inc)
    lines.append("")
    if header == "cudnn_ops_infer.h":
        lines += [CUDA_TYPES, PLATFORM_MACROS]
    own_defines = [(n, v) for (h, k, _, vals) in groups if h == header and k == "define" for n, v in vals
                   if n not in SKIPPED_DEFINES]
    for n, v in own_defines:
        lines.append("#define %s %s" % (n, define_value(n, v)))
    if header != "cudnn_backend.h":
        lines += ["", "#if (CUDNN_%s_MAJOR != CUDNN_MAJOR) || (CUDNN_%s_MINOR != CUDNN_MINOR) || "
                      "(CUDNN_%s_PATCH != CUDNN_PATCHLEVEL)" % (sub_key, sub_key, sub_key),
                  "#error Version mismatch in opencudnn %s" % sub_key, "#endif"]
    lines += ["", "#if defined(__cplusplus)", 'extern "C" {', "#endif", ""]
    for tdef, tag, h in OPAQUE:
        if h == header:
            lines.append("struct %s;" % tag)
            lines.append("typedef struct %s *%s;" % (tag, tdef))
    lines.append("")
    for h, kind, name, vals in groups:
        if h != header or kind != "enum":
            continue
        if name == "libraryPropertyType":
            lines.append("#ifndef __LIBRARY_TYPES_H__")
            lines.append("typedef enum libraryPropertyType_t {")
        else:
            lines.append("typedef enum {")
        for i, (n, v) in enumerate(vals):
            lines.append("    %s = %s%s" % (n, v, "," if i + 1 < len(vals) else ""))
        lines.append("} %s;" % name)
        if name == "libraryPropertyType":
            lines.append("#endif")
        lines.append("")
    if header in EXTRA_DECLS:
        lines += [EXTRA_DECLS[header]]
    for f in funcs:
        if HEADER_OF_SUB[f["sublibrary"]] != header:
            continue
        dep = "CUDNN_DEPRECATED " if f["deprecated"] == "yes" else ""
        lines.append("%s%s CUDNNWINAPI %s(%s);" % (dep, f["return_type"], f["function"], f["parameters"]))
    lines += ["", "#if defined(__cplusplus)", "}", "#endif", "", "#endif /* %s */" % guard(header), ""]
    return "\n".join(lines)


UMBRELLA = """\
/* cudnn.h: the umbrella header of opencudnn's cuDNN 8.2 API, generated by tools/gen_api.py.
   As in cuDNN 8.2 it declares nothing itself and includes the sub-library headers. */
#ifndef OPENCUDNN_CUDNN_H_
#define OPENCUDNN_CUDNN_H_

#include "cudnn_version.h"
#include "cudnn_ops_infer.h"
#include "cudnn_ops_train.h"
#include "cudnn_adv_infer.h"
#include "cudnn_adv_train.h"
#include "cudnn_cnn_infer.h"
#include "cudnn_cnn_train.h"
#include "cudnn_backend.h"

#endif /* OPENCUDNN_CUDNN_H_ */
"""


def all_headers():
    funcs, groups = functions(), enums()
    out = {"cudnn.h": UMBRELLA}
    for h in ["cudnn_version.h"] + list(INCLUDES):
        out[h] = header_text(h, funcs, groups)
    return out


def unimplemented():
    path = os.path.join(API, "unimplemented.txt")
    names = []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names


def failure_value(ret):
    """What a forwarder returns when its sub-library cannot be loaded."""
    return {"cudnnStatus_t": "CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING", "size_t": "0",
            "const char *": '"opencudnn: a sub-library could not be loaded (see the log)"'}[ret]


def front_table(funcs):
    libs = ", ".join('OCD_LIBRARY_FILE("cudnn_%s")' % s for s in SUBLIBS)
    out = ["/* Generated by tools/gen_api.py from api/functions-8.2.tsv: the front's forwarders. */",
           '#include "front/front.h"', '#include "core/platform.h"', "",
           "const char *const ocd_front_libraries[OCD_FRONT_NLIBS] = {%s};" % libs, "",
           "const struct ocd_front_entry ocd_front_entries[] = {"]
    for f in funcs:
        out.append('    {"%s", %d},' % (f["function"], SUBLIBS.index(f["home"])))
    out += ["};", "const int ocd_front_nfuncs = %d;" % len(funcs),
            "_Atomic(void *) ocd_front_cache[%d];" % len(funcs), ""]
    for i, f in enumerate(funcs):
        params = f["parameters"]
        types = ", ".join(t for t, _, _ in f["params_list"]) or "void"
        args = ", ".join(n for _, n, _ in f["params_list"])
        out += ["%s CUDNNWINAPI %s(%s)" % (f["return_type"], f["function"], params), "{",
                "    typedef %s (*fn_t)(%s);" % (f["return_type"], types),
                "    fn_t fn = (fn_t)ocd_front_resolve(%d);" % i,
                "    if (fn == NULL)", "        return %s;" % failure_value(f["return_type"]),
                "    return fn(%s);" % args, "}", ""]
    return "\n".join(out)


def version_script(soname, names, private):
    out = ["%s {" % soname, "  global:"]
    out += ["    %s;" % n for n in names]
    out += ["  local:", "    *;", "};"]
    if private:
        out += ["", "OPENCUDNN_PRIVATE_8 {", "  global:", "    ocd_*;", "} %s;" % soname]
    return "\n".join(out) + "\n"


def dll_name(lib):
    """cuDNN 8's Windows file name of a library ("front" or a sub-library)."""
    return "cudnn64_8.dll" if lib == "front" else "cudnn_%s64_8.dll" % lib


def module_definition(lib, names, data=()):
    """A .def file: the DLL's name and its exports (data symbols marked DATA, so that an import
    library gives them no call thunk)."""
    out = ["; Generated by tools/gen_api.py from api/functions-8.2.tsv: the exports of %s." % dll_name(lib),
           "LIBRARY %s" % dll_name(lib), "EXPORTS"]
    out += ["    %s" % n for n in names]
    out += ["    %s DATA" % n for n in data]
    return "\n".join(out) + "\n"


def internal_symbols(nm, objects):
    """The ocd_* symbols the objects define: (functions, data), each sorted."""
    code, data = set(), set()
    for obj in objects:
        out = subprocess.run([nm, "-g", "--defined-only", obj], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) >= 3 and f[2].startswith("ocd_"):
                (code if f[1] in "Tt" else data).add(f[2])
    return sorted(code), sorted(data - code)


def stubs(funcs, todo, sub):
    out = ["/* Generated by tools/gen_api.py: the %s functions listed in api/unimplemented.txt. */" % sub,
           '#include "core/unimplemented.h"', ""]
    for f in funcs:
        if f["function"] in todo and f["home"] == sub:
            out += ["%s CUDNNWINAPI %s(%s)" % (f["return_type"], f["function"], f["parameters"]),
                    "{"]
            for _, n, _ in f["params_list"]:
                out.append("    (void)%s;" % n)
            out += ['    return ocd_unimplemented("%s");' % f["function"], "}", ""]
    return "\n".join(out)


def unimplemented_calls(funcs, todo):
    """Each listed function called with zero/NULL arguments, for the test that keeps the list honest."""
    out = ["/* Generated by tools/gen_api.py: calls every function of api/unimplemented.txt. */",
           "#include <cudnn.h>", '#include "unimplemented_calls.h"', ""]
    names = []
    for f in funcs:
        if f["function"] not in todo:
            continue
        names.append(f["function"])
        out.append("static cudnnStatus_t call_%s(void)" % f["function"])
        out.append("{")
        for i, (t, _, _) in enumerate(f["params_list"]):
            out.append("    %s a%d = {0};" % (t, i))
        args = ", ".join("a%d" % i for i in range(len(f["params_list"])))
        out += ["    return %s(%s);" % (f["function"], args), "}", ""]
    out.append("const struct unimplemented_call unimplemented_calls[] = {")
    out += ['    {"%s", call_%s},' % (n, n) for n in names]
    out += ["    {NULL, NULL}", "};", ""]
    return "\n".join(out)


def write(path, text):
    old = open(path).read() if os.path.exists(path) else None
    if old != text:
        with open(path, "w") as f:
            f.write(text)


def main(argv):
    if len(argv) >= 2 and argv[1] == "headers":
        check = "--check" in argv
        stale = []
        for name, text in all_headers().items():
            path = os.path.join(ROOT, "include", name)
            if check:
                if not os.path.exists(path) or open(path).read() != text:
                    stale.append(name)
            else:
                write(path, text)
        if stale:
            print("gen_api: headers out of date with api/*.tsv: " + " ".join(stale))
            return 1
        return 0
    if len(argv) == 3 and argv[1] == "build":
        outdir = argv[2]
        os.makedirs(outdir, exist_ok=True)
        funcs, todo = functions(), set(unimplemented())
        unknown = todo - {f["function"] for f in funcs}
        if unknown:
            print("gen_api: api/unimplemented.txt names unknown functions: " + " ".join(sorted(unknown)))
            return 1
        write(os.path.join(outdir, "front_table.c"), front_table(funcs))
        write(os.path.join(outdir, "libcudnn.map"),
              version_script("libcudnn.so.8", [f["function"] for f in funcs], private=False))
        for s in SUBLIBS:
            names = [f["function"] for f in funcs if f["home"] == s]
            write(os.path.join(outdir, "libcudnn_%s.map" % s),
                  version_script("libcudnn_%s.so.8" % s, names, private=True))
            write(os.path.join(outdir, "stubs_%s.c" % s), stubs(funcs, todo, s))
        write(os.path.join(outdir, "unimplemented_calls.c"), unimplemented_calls(funcs, todo))
        write(os.path.join(outdir, "cudnn64_8.def"), module_definition("front", [f["function"] for f in funcs]))
        return 0
    if len(argv) >= 5 and argv[1] == "def" and argv[2] in SUBLIBS:
        sub, out, nm, objects = argv[2], argv[3], argv[4], argv[5:]
        code, data = internal_symbols(nm, objects)
        api = [f["function"] for f in functions() if f["home"] == sub]
        write(out, module_definition(sub, api + code, data))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
