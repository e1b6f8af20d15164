#!/usr/bin/env bash
# valgrind.sh: runs a representative part of the host test suite under valgrind's memcheck: one
# test file of each kind of code (handles and descriptors, element-wise and reduction ops,
# pooling, normalization, convolution through its API, the GEMM, RNN and attention descriptors,
# CTC, the graph API, and the out-of-memory sweeps, whose RNN, attention and graph calls run every
# failure path), each file a run of its own.
# Reports invalid reads and writes, uses of uninitialised values, bad frees and definite leaks;
# any of them fails the script (exit 1) after every file has run, with the files named.
#
# Usage: tools/valgrind.sh [test-file ...]   (default: the list below; a name is a tests/*.c stem)
#
# Builds the host backend without sanitizers (build-valgrind/, debug information, -O1) and
# without OpenBLAS (-DOPENCUDNN_CBLAS=OFF: its CPU-specific kernels read past their buffers by
# design, which memcheck would report against us). OPENCUDNN_TEST_SUBSET=4 runs one convolution
# case in four, as the sanitizer build does; two worker threads keep valgrind's serialised
# threads busy without waiting. tools/valgrind.supp holds the suppressions (the system's, not
# ours). valgrind comes with tools/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind is not installed (tools/setup.sh installs it)" >&2; exit 2; }
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(core descriptors tensor_ops activation softmax reduce pooling batchnorm conv_api gemm
  rnn_desc attention_desc ctc backend_exec alloc_fault)
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build-valgrind -G Ninja -DOPENCUDNN_CUDA=OFF -DOPENCUDNN_CBLAS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g -fno-omit-frame-pointer" >/dev/null
cmake --build build-valgrind -j "$jobs" --target opencudnn_tests
export OPENCUDNN_TEST_SUBSET=${OPENCUDNN_TEST_SUBSET:-4} OPENCUDNN_NUM_THREADS=${OPENCUDNN_NUM_THREADS:-2}
failed=()
start=$SECONDS
for f in "${files[@]}"; do
  t=$SECONDS
  if valgrind -q --tool=memcheck --suppressions=tools/valgrind.supp --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
      --show-leak-kinds=definite --track-origins=yes --num-callers=30 \
      build-valgrind/tests/opencudnn_tests -b host -f "$f" >"build-valgrind/valgrind-$f.log" 2>&1; then
    echo "valgrind: $f clean ($((SECONDS - t)) s)"
  else
    echo "valgrind: $f FAILED ($((SECONDS - t)) s), build-valgrind/valgrind-$f.log:"
    grep -E '^==[0-9]+==|FAILED' "build-valgrind/valgrind-$f.log" | head -40
    failed+=("$f")
  fi
done
echo "valgrind: ${#files[@]} files in $((SECONDS - start)) s; ${#failed[@]} failed ${failed[*]:-}"
[ ${#failed[@]} -eq 0 ]
