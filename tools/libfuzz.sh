#!/usr/bin/env bash
# libfuzz.sh: builds the host backend with clang under AddressSanitizer and libFuzzer's coverage
# (build-libfuzzer/), links the harness tests/libfuzzer/ops.c (the random-descriptor tests
# tests/fuzz.c, fuzz_adv.c and fuzz_backend.c, the first input byte picking one, driven by the
# fuzzer's input) and runs it for a fixed time, in one process.
#
# The corpus kept in the repository, tests/libfuzzer/corpus, seeds the run and is never written
# by it: new inputs go to build-libfuzzer/new (scratch, ignored by git). A crash is saved as
# build-libfuzzer/crash-<sha1>, which `build-libfuzzer/fuzz_ops <file>` replays; once it is fixed,
# copy the file into tests/libfuzzer/corpus under that name, where it stays (ctest
# libfuzzer_corpus replays every file of the corpus in each build, and --merge keeps crash-*).
#
# --merge folds the new inputs back: the committed corpus and build-libfuzzer/new are merged with
# libFuzzer's set-cover merge on edge coverage (-set_cover_merge=1 -use_counters=0: a small set of
# inputs that covers every edge any of them covers) into a fresh directory, which replaces the
# corpus's files (crash-* kept); commit what changed under tests/libfuzzer/corpus.
#
# OPENCUDNN_FUZZ_ONLY=<part of a test's name> (adv, backend) keeps a run on that test: inputs whose
# first byte picks another run nothing (the merge runs them all).
#
# Usage: tools/libfuzz.sh [seconds, default 300] [extra libFuzzer flags...]
#        tools/libfuzz.sh --merge
set -euo pipefail
cd "$(dirname "$0")/.."
merge=0
if [ "${1:-}" = "--merge" ]; then
  merge=1
  shift
fi
seconds=${1:-300}
shift || true
jobs=$(nproc 2>/dev/null || echo 2)
cc=${CC:-clang}
asan_rt=$(dirname "$($cc -print-file-name=libclang_rt.asan-x86_64.so)")
san="-fsanitize=address -shared-libasan -fno-omit-frame-pointer -g -O1"
# the library under test: instrumented for coverage, shared ASan runtime (its .so files need it)
cmake -S . -B build-libfuzzer -G Ninja -DOPENCUDNN_CUDA=OFF -DOPENCUDNN_CBLAS=OFF -DOPENCUDNN_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$san -fsanitize=fuzzer-no-link" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address -shared-libasan -Wl,-rpath,$asan_rt" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address -shared-libasan -Wl,-rpath,$asan_rt"
cmake --build build-libfuzzer -j "$jobs" --target cudnn
$cc $san -fsanitize=fuzzer -std=gnu11 -D_GNU_SOURCE -DOPENCUDNN_NO_CUDA_HEADERS -DFUZZ_HARNESS \
  -Iinclude -Isrc -Itests tests/libfuzzer/ops.c tests/fuzz.c tests/fuzz_adv.c tests/fuzz_backend.c \
  tests/fuzz_util.c tests/desc_util.c tests/tensors.c tests/support.c tests/ref/tensor_ops.c \
  -Lbuild-libfuzzer -l:libcudnn.so.8 -Wl,-rpath,"$PWD/build-libfuzzer" -Wl,-rpath,"$asan_rt" -lm \
  -o build-libfuzzer/fuzz_ops
corpus=tests/libfuzzer/corpus
new=build-libfuzzer/new
mkdir -p "$new"
export ASAN_OPTIONS="detect_leaks=1 verify_asan_link_order=0 ${ASAN_OPTIONS:-}"
if [ "$merge" = 1 ]; then
  fresh=build-libfuzzer/merged
  rm -rf "$fresh"
  mkdir -p "$fresh"
  build-libfuzzer/fuzz_ops -set_cover_merge=1 -use_counters=0 "$fresh" "$corpus" "$new"
  find "$corpus" -maxdepth 1 -type f ! -name 'crash-*' -delete
  cp "$fresh"/* "$corpus"/
  echo "libfuzz.sh: $corpus now holds $(find "$corpus" -type f | wc -l) files," \
    "$(cat "$corpus"/* | wc -c) bytes; commit what changed there"
  exit 0
fi
build-libfuzzer/fuzz_ops -max_total_time="$seconds" -max_len=2048 -timeout=60 -artifact_prefix=build-libfuzzer/ \
  -print_final_stats=1 "$@" "$new" "$corpus"
