#!/usr/bin/env bash
# tsan.sh: builds the host backend under ThreadSanitizer (build-tsan/) and runs the threads-and-
# streams stress workload in it: the test suite's short form (unit_stress), then the stress program
# for a while. Usage: tools/tsan.sh [seconds of the stress program, default 30]
# OpenBLAS is left out of this build (-DOPENCUDNN_CBLAS=OFF): its threads synchronize in code
# ThreadSanitizer does not see, which it would report as races in ours.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
jobs=$(nproc 2>/dev/null || echo 2)
flags="-fsanitize=thread -fno-omit-frame-pointer -g"
cmake -S . -B build-tsan -G Ninja -DOPENCUDNN_CUDA=OFF -DOPENCUDNN_CBLAS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread
cmake --build build-tsan -j "$jobs" --target opencudnn_tests opencudnn_stress
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
build-tsan/tests/opencudnn_tests -f stress
build-tsan/bench/opencudnn_stress --backend host --seconds "$seconds"
