#!/usr/bin/env bash
# gpu-variants.sh: times alternatives of a kernel on a GPU machine in one call, for when device time
# is scarce. It builds the tree as it is (the baseline), then applies each patch in turn: an
# incremental rebuild (only the changed objects and the libraries), the tests whose names contain
# one of TEST_FILTER's comma-separated substrings on the cuda backend, the benchmark cases whose
# names contain one of CASES', then the patch is reverted. One line per variant and case: milliseconds and GB/s against the copy ceiling that the
# same benchmark run measured; a variant whose build or tests fail is reported and not timed.
# Output goes to stdout and to $OUT/variants.txt when OUT is set.
#
#   tools/gpu-variants.sh [-B BUILD_DIR] [-k TEST_FILTER] [-s SUITES] [-c CASES] [PATCH...]
#
# BUILD_DIR (default build-gpu) is configured (Release, CUDA for sm_90) when it is not already.
# SUITES and CASES are the benchmark's --suite and --case lists (default: every case of suite nn).
# Patches apply with `git apply` from the repository root, which needs no git history.
set -uo pipefail
cd "$(dirname "$0")/.."

build=build-gpu
filter=
suites=nn
cases=
while getopts B:k:s:c:h opt; do
    case $opt in
    B) build=$OPTARG ;;
    k) filter=$OPTARG ;;
    s) suites=$OPTARG ;;
    c) cases=$OPTARG ;;
    *) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
shift $((OPTIND - 1))

[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
unset CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH LIBRARY_PATH
if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null || exit 1
fi
report=${OUT:+$OUT/variants.txt}
build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT

# measure NAME: rebuild, test, time; one block of lines for the variant.
measure() {
    local name=$1 t0=$SECONDS tests="" rc=0
    if ! cmake --build "$build" -j "$(nproc 2>/dev/null || echo 4)" >"$build_log" 2>&1; then
        echo "$name: BUILD FAILED"
        grep -m 5 -E 'error' "$build_log"
        return
    fi
    if [ -n "$filter" ]; then
        tests=$("$build/tests/opencudnn_tests" -b cuda -k "$filter" 2>&1 | tail -1) || rc=$?
        if [ $rc -ne 0 ]; then
            echo "$name: built in $((SECONDS - t0))s; tests FAILED: $tests"
            return
        fi
    fi
    echo "$name: built in $((SECONDS - t0))s${tests:+; tests: $tests}"
    "$build/bench/opencudnn_bench" --suite "ceiling,$suites" ${cases:+--case "copy,$cases"} --tsv --reps 3 --min-ms 5 2>&1 |
        awk -F'\t' '$4 == "CUDNN_STATUS_SUCCESS" && $5 > 0 {
                        gbs = $6 / $5 / 1e6
                        if ($1 == "copy") { ceiling = gbs; next }
                        printf "  %-28s %9.4f ms %7.0f GB/s %5.0f%%\n", $1, $5, gbs, ceiling ? 100 * gbs / ceiling : 0
                    }
                    $4 != "status" && $4 != "CUDNN_STATUS_SUCCESS" && NF > 4 { printf "  %-28s %s\n", $1, $4 }'
}

{
    measure baseline
    for patch in "$@"; do
        if ! git apply "$patch"; then
            echo "$(basename "$patch"): does not apply"
            continue
        fi
        measure "$(basename "$patch")"
        git apply -R "$patch" || { echo "$(basename "$patch"): could not be reverted; stopping"; break; }
    done
    cmake --build "$build" >/dev/null 2>&1 # leave the build as the tree is
} | tee ${report:+"$report"}
