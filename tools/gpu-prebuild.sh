#!/usr/bin/env bash
# gpu-prebuild.sh: builds here, on the CPU machine, what tools/gpu-check.sh runs on the GPU machine,
# and packs it, so that a device call spends its time on the GPU instead of on a cold build (about
# 280 s on its 16 cores, most of it the three largest kernel files one after the other).
#
#   tools/gpu-prebuild.sh [ARCHIVE [TARGET...]]  build and pack (default .gpu-carry/build-gpu.tar.xz)
#   tools/gpu-prebuild.sh --unpack ARCHIVE       on the GPU machine: unpack for gpu-check
#
# The build is build-gpu of this checkout, configured as gpu-check configures it (Release, sm_90,
# $OCD_CMAKE_LAUNCH for a compiler cache), built without the CPU emulations (tests/emulate: CI
# runs them) and packed without objects: the libraries, the test runner and its probe,
# fuzz_replay, the benchmark, stress, parity and doctor programs, the example, ctest's and
# CMake's files (about 25 MB), and the executables of the TARGETs named (an emulation, say:
# emulate_<name>, about 5 MB each, to run by hand there). ctest's files hold absolute paths: the
# GPU machine must see the tree at the same path as this one (the device tool copies it to
# /work/main: build from /work/main, at the commit the call runs). Carry the archive with the
# call (its folder is ignored by git) and name it:
#   run(command="GPU_CHECK_PREBUILT=.gpu-carry/build-gpu.tar.xz ... bash tools/gpu-check.sh",
#       carry=[".gpu-carry"])
# --unpack extracts it into the tree with fresh times, refuses an archive built at another path
# or from other sources (a digest of every file the build reads, build-gpu/source, against the
# tree's: not git's view, which the device's copy of .git may lag), and points ctest's files at this machine's python3, C compiler and cmake
# (the CPU machine's recorded in its CMakeCache.txt). gpu-check then builds only the vendor's
# programs, apart.
set -euo pipefail
cd "$(dirname "$0")/.."
build="build-gpu"

# The sources a build is of: a digest of the files under the folders the build reads.
sources() {
    find CMakeLists.txt cmake include src tests bench tools examples -type f -print0 | LC_ALL=C sort -z |
        xargs -0 sha1sum | sha1sum | cut -c1-16
}

if [ "${1:-}" = "--unpack" ]; then
    archive=${2:?--unpack ARCHIVE}
    tar -xmJf "$archive"
    home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
    if [ "$home" != "$PWD" ]; then
        echo "gpu-prebuild: $archive was built at $home, this tree is $PWD" >&2
        exit 1
    fi
    if [ "$(cat "$build/source")" != "$(sources)" ]; then
        echo "gpu-prebuild: $archive was built from $(cat "$build/source"), this tree is $(sources)" >&2
        exit 1
    fi
    # the CPU machine's tools as its cache recorded them, and this machine's
    for var in _Python3_EXECUTABLE:python3 CMAKE_C_COMPILER:cc CMAKE_COMMAND:cmake; do
        was=$(sed -n "s/^${var%%:*}:[A-Z]*=//p" "$build/CMakeCache.txt")
        now=$(command -v "${var#*:}" || true)
        if [ -z "$was" ] || [ -z "$now" ]; then continue; fi
        find "$build" -name CTestTestfile.cmake -exec sed -i "s|\"$was\"|\"$now\"|g" {} +
    done
    echo "gpu-prebuild: unpacked $archive into $build"
    exit 0
fi

archive=${1:-.gpu-carry/build-gpu.tar.xz}
extra=("${@:2}")
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
# shellcheck disable=SC2086
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 ${OCD_CMAKE_LAUNCH:-}
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target cudnn ops_infer ops_train cnn_infer cnn_train \
    adv_infer adv_train opencudnn_tests fuzz_replay opencudnn_bench opencudnn_stress opencudnn_parity \
    opencudnn_ceilings opencudnn_doctor hello_cudnn ${extra[@]+"${extra[@]}"}
mkdir -p "$(dirname "$archive")"
sources >"$build/source"
(
    cd "$build"
    find . -maxdepth 1 -name 'libcudnn*.so*'
    find . -name CTestTestfile.cmake -o -name cmake_install.cmake -o -name '*.pc' -o -name 'CUDNNConfig*.cmake'
    printf "%s\n" ./CMakeCache.txt ./source
    for p in tests/opencudnn_tests tests/front_probe tests/fuzz_replay bench/opencudnn_bench bench/opencudnn_stress \
        bench/opencudnn_parity bench/opencudnn_ceilings tools/opencudnn_doctor examples/hello_cudnn; do
        echo "./$p"
    done
    for t in ${extra[@]+"${extra[@]}"}; do find . -type f -name "$t" -perm -u+x; done
) | sed "s|^\./|$build/|" | tar -cf - -T - | xz -T0 -6 >"$archive"
echo "gpu-prebuild: $archive ($(du -h "$archive" | cut -f1)) from $(cat "$build/source")"
