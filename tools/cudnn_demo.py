#!/usr/bin/env python3
"""cudnn_demo.py: cuDNN from Python with ctypes alone (no framework, numpy not needed).

Loads libcudnn.so.8 (cudnn64_8.dll on Windows), checks that it can load each of its six
sub-libraries (naming the one that fails, with the loader's reason), prints its version and the
backend it runs on, adds a per-channel bias to a 2x3x4x5 tensor with cudnnAddTensor, checks every
element against the same sum computed in Python, times the call and prints "All tests passed.".

  python3 tools/cudnn_demo.py [--lib FILE_OR_DIR] [--calls N]

The library: --lib (the file, or the directory holding it); else the build/ directory next to
this file's parent (an in-tree build); else the loader's own search. The backend: the environment
variable OPENCUDNN_BACKEND when set (host or cuda); otherwise cuda when the CUDA runtime loads and
sees a device, host otherwise. The demo passes its choice on to the library through that same
variable, so the handle and the memory the demo allocates (cudaMalloc through libcudart for cuda,
Python buffers for host) always agree.
"""
import argparse
import ctypes
import ctypes.util
import glob
import os
import sys
import time

LIB_NAME = "cudnn64_8.dll" if os.name == "nt" else "libcudnn.so.8"
# The sub-libraries the front loads, with the VersionCheck function each one defines.
SUBLIBRARIES = [("ops_infer", "cudnnOpsInferVersionCheck"), ("ops_train", "cudnnOpsTrainVersionCheck"),
                ("cnn_infer", "cudnnCnnInferVersionCheck"), ("cnn_train", "cudnnCnnTrainVersionCheck"),
                ("adv_infer", "cudnnAdvInferVersionCheck"), ("adv_train", "cudnnAdvTrainVersionCheck")]
# The cuDNN 8.2 enum values this demo uses (cudnn_ops_infer.h).
CUDNN_STATUS_SUCCESS = 0
CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING = 11
CUDNN_TENSOR_NCHW = 0
CUDNN_DATA_FLOAT = 0
CUDA_MEMCPY_HOST_TO_DEVICE, CUDA_MEMCPY_DEVICE_TO_HOST = 1, 2


def find_library(given):
    if given:
        return os.path.join(given, LIB_NAME) if os.path.isdir(given) else given
    here = os.path.dirname(os.path.abspath(__file__))
    in_tree = os.path.join(os.path.dirname(here), "build", LIB_NAME)
    return in_tree if os.path.exists(in_tree) else LIB_NAME


def sublibrary_file(sub):
    return "cudnn_%s64_8.dll" % sub if os.name == "nt" else "libcudnn_%s.so.8" % sub


def missing_sublibraries(cudnn, path):
    """[(file, reason)] for each sub-library the front cannot load. Each VersionCheck goes through
    the front, which loads the sub-library on that first call; where it cannot, the loader's own
    reason is read by loading the file from the front's folder here."""
    folder = os.path.dirname(os.path.abspath(path)) if os.path.dirname(path) else ""
    failed = []
    for sub, check in SUBLIBRARIES:
        status = getattr(cudnn, check)()
        if status != CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING:
            continue
        name = sublibrary_file(sub)
        candidate = os.path.join(folder, name) if folder else name
        try:
            ctypes.CDLL(candidate)
            reason = "the front could not load it (see its message above)"
        except OSError as e:
            reason = str(e)
        failed.append((name, "%s (looked for in %s)" % (reason, folder or "the loader's search path")))
    return failed


def load_cudart():
    """The CUDA runtime library, or None where there is none."""
    names = []
    found = ctypes.util.find_library("cudart")
    if found:
        names.append(found)
    if os.name == "nt":
        for root in filter(None, [os.environ.get("CUDA_PATH")]):
            names += sorted(glob.glob(os.path.join(root, "bin", "cudart64_*.dll")), reverse=True)
    else:
        names += ["libcudart.so"] + ["libcudart.so.%d" % v for v in (13, 12, 11)]
        for root in filter(None, [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]):
            names += sorted(glob.glob(os.path.join(root, "lib64", "libcudart.so*")), reverse=True)
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


class Memory:
    """float32 buffers on the backend: device memory through cudart, or Python-owned host memory."""

    def __init__(self, cudart):
        self.cudart = cudart
        self.host_buffers = []

    def check(self, err, what):
        if err != 0:
            raise RuntimeError("%s failed: CUDA error %d" % (what, err))

    def upload(self, values):
        n = len(values)
        host = (ctypes.c_float * n)(*values)
        if self.cudart is None:
            self.host_buffers.append(host)
            return ctypes.cast(host, ctypes.c_void_p)
        ptr = ctypes.c_void_p()
        self.check(self.cudart.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(4 * n)), "cudaMalloc")
        self.check(self.cudart.cudaMemcpy(ptr, host, ctypes.c_size_t(4 * n), CUDA_MEMCPY_HOST_TO_DEVICE), "cudaMemcpy")
        return ptr

    def download(self, ptr, n):
        host = (ctypes.c_float * n)()
        if self.cudart is None:
            ctypes.memmove(host, ptr, 4 * n)
        else:
            self.check(self.cudart.cudaMemcpy(host, ptr, ctypes.c_size_t(4 * n), CUDA_MEMCPY_DEVICE_TO_HOST), "cudaMemcpy")
        return list(host)

    def sync(self):
        if self.cudart is not None:
            self.check(self.cudart.cudaDeviceSynchronize(), "cudaDeviceSynchronize")

    def free(self, ptr):
        if self.cudart is not None:
            self.cudart.cudaFree(ptr)


def choose_backend():
    """(backend name, cudart or None)."""
    forced = os.environ.get("OPENCUDNN_BACKEND") or None
    cudart = None if forced == "host" else load_cudart()
    if cudart is not None:
        count = ctypes.c_int(0)
        if cudart.cudaGetDeviceCount(ctypes.byref(count)) != 0 or count.value == 0:
            cudart = None
    backend = forced or ("cuda" if cudart is not None else "host")
    if backend == "cuda" and cudart is None:
        raise SystemExit("OPENCUDNN_BACKEND=cuda, but no CUDA runtime with a device was found")
    return backend, cudart


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", help="libcudnn.so.8 (or cudnn64_8.dll), or the directory holding it")
    ap.add_argument("--calls", type=int, default=100, help="calls to time")
    args = ap.parse_args()

    path = find_library(args.lib)
    try:
        cudnn = ctypes.CDLL(path)
    except OSError as e:
        print("cannot load %s: %s" % (path, e))
        return 1
    failed = missing_sublibraries(cudnn, path)
    for name, reason in failed:
        print("sub-library %s failed to load: %s" % (name, reason))
    if failed:
        return 1
    cudnn.cudnnGetVersion.restype = ctypes.c_size_t
    cudnn.cudnnGetCudartVersion.restype = ctypes.c_size_t
    cudnn.cudnnGetErrorString.restype = ctypes.c_char_p

    def call(name, *args):
        status = getattr(cudnn, name)(*args)
        if status != CUDNN_STATUS_SUCCESS:
            raise RuntimeError("%s returned %s" % (name, cudnn.cudnnGetErrorString(status).decode()))

    backend, cudart = choose_backend()
    os.environ["OPENCUDNN_BACKEND"] = backend  # the library follows the demo's choice
    print("library: %s" % path)
    print("cuDNN version %d (CUDA runtime %d), backend %s" % (cudnn.cudnnGetVersion(), cudnn.cudnnGetCudartVersion(), backend))

    n, c, h, w = 2, 3, 4, 5
    count = n * c * h * w
    bias = [0.5, -1.25, 2.0]
    y0 = [float((i * 37) % 101) / 16.0 - 3.0 for i in range(count)]
    alpha, beta = ctypes.c_float(0.5), ctypes.c_float(2.0)

    mem = Memory(cudart)
    handle, bias_desc, y_desc = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    call("cudnnCreate", ctypes.byref(handle))
    call("cudnnCreateTensorDescriptor", ctypes.byref(bias_desc))
    call("cudnnCreateTensorDescriptor", ctypes.byref(y_desc))
    call("cudnnSetTensor4dDescriptor", bias_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, c, 1, 1)
    call("cudnnSetTensor4dDescriptor", y_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w)
    d_bias, d_y = mem.upload(bias), mem.upload(y0)

    # y = alpha * bias + beta * y, the bias broadcast over N, H and W.
    call("cudnnAddTensor", handle, ctypes.byref(alpha), bias_desc, d_bias, ctypes.byref(beta), y_desc, d_y)
    got = mem.download(d_y, count)
    want = [alpha.value * bias[(i // (h * w)) % c] + beta.value * y0[i] for i in range(count)]
    bad = [i for i in range(count) if not abs(got[i] - want[i]) <= 1e-6 * max(1.0, abs(want[i]))]

    # Timing: the same call again, on the values it left (they are no longer checked).
    mem.sync()
    start = time.perf_counter()
    for _ in range(args.calls):
        call("cudnnAddTensor", handle, ctypes.byref(alpha), bias_desc, d_bias, ctypes.byref(beta), y_desc, d_y)
    mem.sync()
    per_call = (time.perf_counter() - start) / max(1, args.calls)
    print("cudnnAddTensor, bias 1x%dx1x1 into %dx%dx%dx%d fp32: %.1f us per call (%d calls)" % (c, n, c, h, w, per_call * 1e6, args.calls))

    mem.free(d_bias)
    mem.free(d_y)
    call("cudnnDestroyTensorDescriptor", bias_desc)
    call("cudnnDestroyTensorDescriptor", y_desc)
    call("cudnnDestroy", handle)
    if bad:
        i = bad[0]
        print("%d of %d results wrong; y[%d] = %g, expected %g" % (len(bad), count, i, got[i], want[i]))
        return 1
    print("All tests passed.")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, RuntimeError) as e:
        print("error: %s" % e)
        sys.exit(1)
