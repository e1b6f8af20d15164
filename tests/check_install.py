#!/usr/bin/env python3
"""check_install.py: `cmake --install` into a temporary prefix, then use the installation as a
program outside this tree would.

Checks:
  1. the layout: include/cudnn*.h, the seven versioned shared libraries with their soname and
     linker-name links, the static archive, lib/cmake/CUDNN/ and lib/pkgconfig/cudnn.pc;
  2. the installed doctor runs on the installed libraries (--expect-dir) and passes;
  3. a consumer project (tests/install/) builds examples/hello_cudnn.c with find_package(CUDNN),
     against the shared front and against the static archive, and both programs pass;
  4. with pkg-config present, the same program builds from `pkg-config --cflags --libs cudnn` and
     passes.
The prefix is moved after installing (every check runs on the moved copy), which proves that
the CMake package and cudnn.pc are relocatable.
"""
import argparse, os, shutil, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True, help="the build tree to install")
ap.add_argument("--source", required=True, help="the source tree")
ap.add_argument("--cmake", default="cmake")
ap.add_argument("--cc", default="cc")
ap.add_argument("--generator", default="")
ap.add_argument("--libdir", default="lib")
ap.add_argument("--flags", default="", help="compile and link flags the build used (';'-separated: sanitizers)")
args = ap.parse_args()
flags = [f for f in args.flags.split(";") if f]

failures = []
tmp = tempfile.mkdtemp(prefix="ocd_install_")
env = dict(os.environ)


def run(cmd, what, extra_env=None, expect=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(env, **(extra_env or {})))
    out = r.stdout + r.stderr
    if r.returncode != 0 or (expect and expect not in out):
        failures.append("%s failed (exit %d): %s\n%s" % (what, r.returncode, " ".join(cmd), out[-3000:]))
        return None
    print("ok: %s" % what)
    return out


staging = os.path.join(tmp, "staging")
run([args.cmake, "--install", args.build, "--prefix", staging], "cmake --install")
prefix = os.path.join(tmp, "moved")
if os.path.isdir(staging):
    shutil.move(staging, prefix)
libdir = os.path.join(prefix, args.libdir)

# 1. layout
version = "8.2.2"
expected = ["include/cudnn.h", "include/cudnn_version.h", "include/cudnn_backend.h",
            args.libdir + "/libcudnn_static.a", args.libdir + "/cmake/CUDNN/CUDNNConfig.cmake",
            args.libdir + "/cmake/CUDNN/CUDNNConfigVersion.cmake", args.libdir + "/pkgconfig/cudnn.pc"]
for lib in ["cudnn", "cudnn_ops_infer", "cudnn_ops_train", "cudnn_cnn_infer", "cudnn_cnn_train",
            "cudnn_adv_infer", "cudnn_adv_train"]:
    expected += ["%s/lib%s.so.%s" % (args.libdir, lib, version)]
    for link in ["lib%s.so.8" % lib, "lib%s.so" % lib]:
        path = os.path.join(libdir, link)
        if not os.path.islink(path):
            failures.append("%s is not a symbolic link" % path)
missing = [p for p in expected if not os.path.isfile(os.path.join(prefix, p))]
if missing:
    failures.append("missing from the installation: " + ", ".join(missing))
else:
    print("ok: layout")

# 2. the installed doctor, on the installed libraries
run([os.path.join(prefix, "bin", "opencudnn_doctor"), "--expect-dir", libdir], "installed doctor",
    expect="All tests passed.")

# 3. find_package(CUDNN)
consumer = os.path.join(tmp, "consumer")
configure = [args.cmake, "-S", os.path.join(args.source, "tests", "install"), "-B", consumer,
             "-DCMAKE_PREFIX_PATH=" + prefix, "-DCMAKE_C_COMPILER=" + args.cc,
             "-DHELLO_SOURCE=" + os.path.join(args.source, "examples", "hello_cudnn.c"),
             "-DCMAKE_C_FLAGS=" + " ".join(flags), "-DCMAKE_EXE_LINKER_FLAGS=" + " ".join(flags)]
if args.generator:
    configure += ["-G", args.generator]
if run(configure, "find_package(CUDNN) configure") is not None and \
        run([args.cmake, "--build", consumer], "consumer build") is not None:
    for kind in ["shared", "static"]:
        run([os.path.join(consumer, "hello_" + kind)], "hello_cudnn linked %s" % kind, expect="All tests passed.")

# 4. pkg-config
pkg_config = shutil.which("pkg-config")
if pkg_config is None:
    print("skipped: pkg-config is not installed")
else:
    pc_env = {"PKG_CONFIG_PATH": os.path.join(libdir, "pkgconfig")}
    pc_flags = run([pkg_config, "--cflags", "--libs", "cudnn"], "pkg-config cudnn", pc_env)
    if pc_flags is not None:
        exe = os.path.join(tmp, "hello_pkgconfig")
        # The program is built without the CUDA runtime, so it keeps its data in host memory and
        # asks for the host backend.
        if run([args.cc, "-std=c11", "-DOPENCUDNN_NO_CUDA_HEADERS"] + flags +
               [os.path.join(args.source, "examples", "hello_cudnn.c"), "-o", exe, "-Wl,-rpath," + libdir]
               + pc_flags.split() + ["-lm"], "pkg-config build") is not None:
            run([exe], "hello_cudnn built with pkg-config", {"OPENCUDNN_BACKEND": "host"}, expect="All tests passed.")

shutil.rmtree(tmp, ignore_errors=True)
for f in failures:
    print("FAILED: " + f)
print("install check: %d failure%s" % (len(failures), "" if len(failures) == 1 else "s"))
sys.exit(1 if failures else 0)
