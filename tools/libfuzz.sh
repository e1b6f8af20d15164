#!/usr/bin/env bash
# libfuzz.sh: builds the host backend with clang under AddressSanitizer and libFuzzer's coverage
# (build-libfuzzer/), links the harness tests/libfuzzer/ops.c (tests/fuzz.c driven by the fuzzer's
# input) and runs it for a fixed time. The corpus kept in the repository (tests/libfuzzer/corpus)
# seeds the run; new inputs go to build-libfuzzer/corpus; a crash is saved as
# build-libfuzzer/crash-<hash>, which `build-libfuzzer/fuzz_ops <file>` replays.
# Usage: tools/libfuzz.sh [seconds, default 300] [extra libFuzzer flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
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
$cc $san -fsanitize=fuzzer -std=gnu11 -D_GNU_SOURCE -DOPENCUDNN_NO_CUDA_HEADERS -DFUZZ_ITERATIONS=16 \
  -Iinclude -Isrc -Itests tests/libfuzzer/ops.c tests/fuzz.c tests/tensors.c tests/support.c tests/ref/tensor_ops.c \
  -Lbuild-libfuzzer -l:libcudnn.so.8 -Wl,-rpath,"$PWD/build-libfuzzer" -Wl,-rpath,"$asan_rt" -lm \
  -o build-libfuzzer/fuzz_ops
mkdir -p build-libfuzzer/corpus
ASAN_OPTIONS="detect_leaks=1 verify_asan_link_order=0 ${ASAN_OPTIONS:-}" build-libfuzzer/fuzz_ops -max_total_time="$seconds" \
  -max_len=2048 -timeout=60 -artifact_prefix=build-libfuzzer/ -print_final_stats=1 "$@" \
  build-libfuzzer/corpus tests/libfuzzer/corpus
