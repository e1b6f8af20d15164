#!/usr/bin/env bash
# package.sh: builds a release archive with cuDNN's layout, from `cmake --install`.
#
#   tools/package.sh windows   dist/opencudnn-<version>-windows-x86_64.zip
#                              bin/ (cudnn64_8.dll and the six cudnn_*64_8.dll), lib/x64/ (cudnn.lib
#                              and one import library per sub-library, the CMake package under
#                              lib/cmake/CUDNN), include/, the licence and README-windows.txt;
#                              cross-compiled with mingw-w64 (cmake/mingw-w64.cmake), host backend
#   tools/package.sh linux     dist/opencudnn-<version>-linux-x86_64.tar.gz
#                              lib/ (the seven libraries with their sonames and linker-name links,
#                              the static archive, the CMake package, cudnn.pc), include/, bin/
#                              (the doctor), the licence and the README; the CUDA backend is in
#                              when nvcc is found
#
# OPENCUDNN_PACKAGE_BUILD=DIR reuses a configured build tree of the right kind (tools/test.sh's
# build-win and build); otherwise build-package-<os> is configured and built here. Each archive's
# libraries are checked against api/ before it is written (tests/check_windows.py for the DLLs,
# tests/check_exports.py for the Linux libraries).
set -euo pipefail
cd "$(dirname "$0")/.."
os=${1:-}
case "$os" in
  windows | linux) ;;
  *) echo "usage: tools/package.sh windows|linux" >&2; exit 2 ;;
esac
[ -x /usr/local/cuda/bin/nvcc ] && export PATH="$PATH:/usr/local/cuda/bin"
version=$(sed -n 's/^project(opencudnn VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
name=opencudnn-$version-$os-x86_64
build=${OPENCUDNN_PACKAGE_BUILD:-build-package-$os}
jobs=$(nproc 2>/dev/null || echo 2)

if [ ! -f "$build/CMakeCache.txt" ]; then
  if [ "$os" = windows ]; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64.cmake -DOPENCUDNN_CUDA=OFF \
      -DOPENCUDNN_TESTS=OFF -DCMAKE_BUILD_TYPE=Release
  else
    cmake -S . -B "$build" -G Ninja -DOPENCUDNN_TESTS=OFF -DCMAKE_BUILD_TYPE=Release
  fi
fi
cmake --build "$build" -j "$jobs"

stage=dist/stage/$name
rm -rf "$stage"
mkdir -p "$stage"
cmake --install "$build" --prefix "$stage" >/dev/null
for f in LICENSE LICENSE.md LICENSE.txt COPYING; do
  [ -f "$f" ] && cp "$f" "$stage/"
done
ls "$stage" | grep -qi '^licen\|^copying' || echo "package: no licence file in the repository: the archive has none" >&2

if [ "$os" = windows ]; then
  # The README's section for Windows users, as a text file beside bin/.
  awk '/^## Windows/ {on = 1} /^## / && !/^## Windows/ {on = 0} on' README.md > "$stage/README-windows.txt"
  rm -f "dist/$name.zip"
  (cd dist/stage && python3 - "$name" <<'EOF'
import os, sys, zipfile
root = sys.argv[1]
with zipfile.ZipFile("../%s.zip" % root, "w", zipfile.ZIP_DEFLATED) as z:
    for d, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            z.write(os.path.join(d, f))
EOF
  )
  out=dist/$name.zip
  # what the zip holds, unpacked afresh, against api/
  rm -rf dist/stage && mkdir -p dist/stage
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$out" dist/stage
  python3 tests/check_windows.py --bin "$stage/bin" --lib "$stage/lib/x64" --api api/functions-8.2.tsv
  # a program built as its users build it: find_package(CUDNN) with CUDNN_ROOT, CUDNN::cudnn, run
  # under Wine with the zip's bin/ on its PATH
  if command -v wine >/dev/null 2>&1; then
    app=dist/stage/app
    mkdir -p "$app"
    cp examples/hello_cudnn.c "$app/"
    printf '%s\n' 'cmake_minimum_required(VERSION 3.18)' 'project(app C)' 'find_package(CUDNN 8.2 REQUIRED)' \
      'add_executable(hello hello_cudnn.c)' 'target_compile_definitions(hello PRIVATE OPENCUDNN_NO_CUDA_HEADERS)' \
      'target_link_libraries(hello PRIVATE CUDNN::cudnn)' > "$app/CMakeLists.txt"
    cmake -S "$app" -B "$app/build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/mingw-w64.cmake" \
      -DCUDNN_ROOT="$PWD/$stage" >/dev/null
    cmake --build "$app/build" >/dev/null
    WINEPREFIX="$PWD/$build/wine" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" WINEPATH="Z:$PWD/$stage/bin" \
      wine "$app/build/hello.exe" | grep -q "All tests passed\." ||
      { echo "package: a program built with find_package(CUDNN) on the zip did not run" >&2; exit 1; }
    echo "package: a program built with find_package(CUDNN) and CUDNN_ROOT on the zip runs under Wine"
  fi
else
  cp README.md "$stage/"
  tar -C dist/stage -czf "dist/$name.tar.gz" "$name"
  out=dist/$name.tar.gz
  # what the archive holds, unpacked afresh, against api/
  rm -rf dist/stage && mkdir -p dist/stage
  tar -C dist/stage -xzf "$out"
  python3 tests/check_exports.py "$stage/lib" api/functions-8.2.tsv
fi
rm -rf dist/stage
echo "package: $out"
