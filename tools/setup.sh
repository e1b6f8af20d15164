#!/usr/bin/env bash
# setup.sh: installs what building and testing opencudnn needs on a fresh Debian/Ubuntu machine:
# a C compiler, CMake, Ninja, Python 3 and valgrind. The CUDA toolkit is optional: when nvcc is on
# PATH (or in /usr/local/cuda/bin) the CUDA backend is built too. OpenBLAS (libopenblas-dev) is
# optional as well: installed when apt has it, so that the host's CBLAS entry is built and tested
# (OPENCUDNN_CBLAS=AUTO); the build and the tests pass without it. The Windows cross build needs
# mingw-w64 (gcc-mingw-w64-x86-64), Wine (wine, wine64) to run its tests, llvm-dlltool (llvm) for
# the import libraries and clang + lld-link (clang, lld) to check them; installed when missing,
# and tools/test.sh skips the Windows step, saying so, where they could not be.
set -euo pipefail
need=()
for tool in cc:gcc c++:g++ cmake:cmake ninja:ninja-build python3:python3 readelf:binutils; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool##*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=$([ "$(id -u)" -eq 0 ] && echo "" || echo sudo)
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q "${need[@]}"
fi
if ! dpkg -s libopenblas-dev >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=$([ "$(id -u)" -eq 0 ] && echo "" || echo sudo)
  { [ ${#need[@]} -gt 0 ] || $SUDO apt-get update -q; } && $SUDO apt-get install -y -q libopenblas-dev ||
    echo "setup: libopenblas-dev not installed: the host convolution keeps its built-in GEMM"
fi
win=()
for tool in x86_64-w64-mingw32-gcc:gcc-mingw-w64-x86-64 wine:wine /usr/lib/wine/wine64:wine64 llvm-dlltool:llvm \
    lld-link:lld clang:clang; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || win+=("${tool##*:}")
done
if [ ${#win[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
  SUDO=$([ "$(id -u)" -eq 0 ] && echo "" || echo sudo)
  { [ ${#need[@]} -gt 0 ] || $SUDO apt-get update -q; } &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${win[@]}" ||
    echo "setup: ${win[*]} not installed: tools/test.sh skips the Windows build"
fi
echo "setup: build tools present${need:+ (installed: ${need[*]})}"
