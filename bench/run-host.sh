#!/usr/bin/env bash
# run-host.sh: the host backend's benchmark beside oneDNN, on a CPU (no GPU needed).
#
#   bench/run-host.sh [-B BUILD_DIR] [-n RUNS] [-- BENCH_ARGS...]
#
# Configures BUILD_DIR (default build-host: Release, CUDA off, OPENCUDNN_CBLAS=AUTO, plus
# $CMAKE_ARGS) when it has no CMakeCache.txt, builds opencudnn_bench and, where oneDNN is found,
# onednn_conv, then runs the resnet50_host suite RUNS times (default 3) each way: as built (the
# CBLAS entry where it applies), with the CBLAS entry switched off (the built-in packed GEMM), and
# oneDNN in NCHW and in its own layouts. The machine may be shared: take each case's best run.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-host
runs=3
while getopts B:n:h opt; do
    case $opt in
    B) build=$OPTARG ;;
    n) runs=$OPTARG ;;
    *) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift

if [ ! -f "$build/CMakeCache.txt" ]; then
    # shellcheck disable=SC2086
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPENCUDNN_CUDA=OFF ${CMAKE_ARGS:-} >&2
fi
targets=(opencudnn_bench)
grep -q '^OCD_DNNL_LIBRARY:.*dnnl' "$build/CMakeCache.txt" && targets+=(onednn_conv)
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target "${targets[@]}" >&2

for i in $(seq "$runs"); do
    echo "## run $i: opencudnn as built"
    OPENCUDNN_BACKEND=host "$build/bench/opencudnn_bench" --suite resnet50_host "$@"
    echo "## run $i: opencudnn, CBLAS entry off (built-in packed GEMM)"
    OPENCUDNN_BACKEND=host OPENCUDNN_DISABLE=host:fwd_gemm_cblas "$build/bench/opencudnn_bench" --suite resnet50_host "$@"
    if [ -x "$build/bench/onednn_conv" ]; then
        echo "## run $i: oneDNN"
        "$build/bench/onednn_conv"
    fi
done
