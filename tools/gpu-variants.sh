#!/usr/bin/env bash
# gpu-variants.sh: times alternatives of a kernel on a GPU machine in one call, for when device time
# is scarce. It builds the tree as it is (the baseline), then applies each patch in turn: an
# incremental rebuild (only the changed objects and the libraries), the tests whose names contain
# one of TEST_FILTER's comma-separated substrings on the cuda backend, the benchmark cases whose
# names contain one of CASES', then the patch is reverted. One line per variant and case:
# milliseconds and GB/s against the copy ceiling that the same benchmark run measured; a variant
# whose build or tests fail is reported and not timed. Output goes to stdout and to
# $OUT/variants.txt when OUT is set.
#
#   tools/gpu-variants.sh [-B BUILD_DIR] [-k TEST_FILTER] [-s SUITES] [-c CASES] [PATCH...]
#   tools/gpu-variants.sh -p PACK [-B BUILD_DIR] [PATCH...]
#   tools/gpu-variants.sh -u PACK [-k TEST_FILTER] [-s SUITES] [-c CASES]
#
# The last two split that work between two machines, since a build on the GPU machine costs its
# device time (90-110 s a variant there): -p, on a machine with nvcc and no GPU, builds the
# baseline and each patch the same way but keeps, instead of testing and timing them, what a run
# needs (the seven libraries, the test runner, the benchmark) in PACK, a .tar.xz in which a file
# a variant shares with the baseline is stored once (about 10 MB a variant for sm_90). Carry
# PACK to the GPU machine (the device tool's carry: 64 MiB at most) and run -u PACK there: it
# tests and times each variant as the first form does, with no build.
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
pack=
unpack=
while getopts B:k:s:c:p:u:h opt; do
    case $opt in
    B) build=$OPTARG ;;
    k) filter=$OPTARG ;;
    s) suites=$OPTARG ;;
    c) cases=$OPTARG ;;
    p) pack=$(realpath -m "$OPTARG") ;;
    u) unpack=$(realpath "$OPTARG") || exit 2 ;;
    *) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
shift $((OPTIND - 1))

[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
unset CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH LIBRARY_PATH
report=${OUT:+$OUT/variants.txt}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build_log=$work/build.log

# measure NAME DIR [NOTE]: the filtered tests on the cuda backend and the benchmark's cases, run
# from DIR's tests/ and bench/ (a build directory, or an unpacked variant laid out the same); one
# block of lines for the variant, its first line NOTE and the tests' summary.
measure() {
    local name=$1 dir=$2 note=${3:-} tests="" rc=0
    if [ -n "$filter" ]; then
        tests=$("$dir/tests/opencudnn_tests" -b cuda -k "$filter" 2>&1 | tail -1) || rc=$?
        if [ $rc -ne 0 ]; then
            echo "$name:${note:+ $note;} tests FAILED: $tests"
            return
        fi
    fi
    echo "$name:${note:+ $note}${tests:+${note:+;} tests: $tests}"
    "$dir/bench/opencudnn_bench" --suite "ceiling,$suites" ${cases:+--case "copy,$cases"} --tsv --reps 3 --min-ms 5 2>&1 |
        awk -F'\t' '$4 == "CUDNN_STATUS_SUCCESS" && $5 > 0 {
                        gbs = $6 / $5 / 1e6
                        if ($1 == "copy") { ceiling = gbs; next }
                        printf "  %-28s %9.4f ms %7.0f GB/s %5.0f%%\n", $1, $5, gbs, ceiling ? 100 * gbs / ceiling : 0
                    }
                    $4 != "status" && $4 != "CUDNN_STATUS_SUCCESS" && NF > 4 { printf "  %-28s %s\n", $1, $4 }'
}

# ---- -u: test and time the variants of a pack ------------------------------------------------
if [ -n "$unpack" ]; then
    tar -xJf "$unpack" -C "$work" || exit 1
    cuda_lib=$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")/../lib64
    while read -r name; do
        # the variant's libraries first (the front loads its sub-libraries from its own directory)
        LD_LIBRARY_PATH="$work/$name:$cuda_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" measure "$name" "$work/$name"
    done <"$work/order" | tee ${report:+"$report"}
    exit 0
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null || exit 1
fi
libs="libcudnn.so.8 libcudnn_ops_infer.so.8 libcudnn_ops_train.so.8 libcudnn_cnn_infer.so.8
      libcudnn_cnn_train.so.8 libcudnn_adv_infer.so.8 libcudnn_adv_train.so.8"
targets="cudnn ops_infer ops_train cnn_infer cnn_train adv_infer adv_train opencudnn_tests opencudnn_bench"

# keep NAME: the build's runnable files into the pack's NAME/, laid out as in the build, those
# equal to the baseline's as hard links to them (stored once by tar).
keep() {
    local d=$work/pack/$1 f
    mkdir -p "$d/tests" "$d/bench"
    for f in $libs tests/opencudnn_tests bench/opencudnn_bench; do
        cp -L "$build/$f" "$d/$f" || return 1
        local base=$work/pack/baseline/$f
        if [ "$1" != baseline ] && cmp -s "$base" "$d/$f"; then ln -f "$base" "$d/$f"; fi
    done
    echo "$1" >>"$work/pack/order"
}

# variant NAME: rebuild, then test and time it (or keep it, with -p).
variant() {
    local t0=$SECONDS
    # shellcheck disable=SC2086 # the targets are words
    if ! cmake --build "$build" -j "$(nproc 2>/dev/null || echo 4)" ${pack:+--target $targets} >"$build_log" 2>&1; then
        echo "$1: BUILD FAILED"
        grep -m 5 -E 'error' "$build_log"
        return
    fi
    if [ -n "$pack" ]; then
        keep "$1" && echo "$1: built in $((SECONDS - t0))s, packed"
    else
        measure "$1" "$build" "built in $((SECONDS - t0))s"
    fi
}

{
    variant baseline
    for patch in "$@"; do
        if ! git apply "$patch"; then
            echo "$(basename "$patch"): does not apply"
            continue
        fi
        variant "$(basename "$patch")"
        git apply -R "$patch" || { echo "$(basename "$patch"): could not be reverted; stopping"; break; }
    done
    if [ -n "$pack" ]; then
        tar -cJf "$pack" -C "$work/pack" . && echo "pack: $pack, $(du -h "$pack" | cut -f1)"
    fi
} | tee ${report:+"$report"}
