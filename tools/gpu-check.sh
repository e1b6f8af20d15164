#!/usr/bin/env bash
# gpu-check.sh: the whole check on a GPU machine, one command from the repository root, inside a
# time budget (GPU_CHECK_BUDGET seconds, default 450, so that it ends well under 9 minutes):
#   1. configure and build with the CUDA backend for sm_90 (Release, Ninja)      -> build.log
#   2. the whole ctest in parallel (the runner file by file, both passes where a device is
#      present), the doctor and the Python demo on the device                     -> tests.log
#   3. the runner's cuda pass under compute-sanitizer memcheck, file by file in parallel, when
#      installed                                                                   -> sanitizer.log
#   4. the benchmark against ours and the vendor's cuDNN 9 (python3's nvidia.cudnn), side by side,
#      each of ours rows naming the implementations that served it
#                                    -> bench.md, bench.ours.tsv, bench.vendor.tsv, bench.log
#      (with GPU_CHECK_BENCH_AB=1: bench/run.sh -U, ours run twice, with OPENCUDNN_UNPROVEN=0 and
#      =1, both beside the vendor's in bench.md                              -> bench.unproven.tsv)
#      and bench/results.md with this run's rows merged (bench/results.py; of ours the first run):
#      the file to commit as bench/results.md                                     -> results.md
#   5. a summary, printed last                                                    -> summary.txt
# Steps run only when GPU_CHECK_STEPS names them (default "tests,sanitizer,bench"; the build
# always runs), among them three more for kernels new to the GPU:
#   hgmma  the wgmma (HGMMA) instructions in each library's sm_90a code            -> hgmma.log
#   race   compute-sanitizer racecheck and synccheck over the runner's cuda pass of
#          GPU_CHECK_RACE_FILES (GPU_CHECK_RACE_LIMIT seconds a file and tool, default
#          60), and over the threads-and-streams stress program at its small size
#          (--size small: the same calls, threads, streams and bit-identity check on
#          problems of a few blocks a kernel launch; racecheck follows every
#          shared-memory access and takes minutes over the full size): 4 threads of
#          GPU_CHECK_STRESS_ITERATIONS cases, default 3, within GPU_CHECK_STRESS_LIMIT
#          seconds a tool, default 60 (GPU_CHECK_STRESS_SIZE=full: the full size) -> race.log
#   check  the runner's cuda pass of the tests GPU_CHECK_CHECK_TESTS names, with
#          OPENCUDNN_CHECK=1 (each call re-run on the host and compared); counts
#          the mismatches logged                                                   -> check.log
#   emuasan the CPU emulations GPU_CHECK_ASAN_EMULATIONS names (tests/emulate), their own
#          file rebuilt under AddressSanitizer and run on the GPU machine          -> emuasan.log
#   chosen the implementations each benchmark case of GPU_CHECK_BENCH_ARGS ran on, without the
#          vendor's or the timing (ours, one timed call a case: the TSV's impl column) -> chosen.log
#   parity the parity probe (bench/parity.c) against ours (device and host backends) and the
#          vendor's cuDNN 9, compared by tools/parity-compare.py: a table of each probe's
#          status and outputs on both sides and a verdict (bench/README.md says how to
#          read it); the vendor's program is built in this step only, so that its
#          failure fails this step alone                  -> parity.log, parity.ours.tsv,
#                                                            parity.host.tsv, parity.vendor.tsv
# A first run of unproven entries (core/impl.h) wants two calls:
#   GPU_CHECK_STEPS=hgmma,tests,race,check, then GPU_CHECK_STEPS=bench.
# Everything is written under $OUT (default ./gpu-check-out): the files above, no more; at the
# end all but summary.txt, bench.md and results.md are packed into logs.tgz (GPU_CHECK_PACK=0
# leaves them), since the device tool returns only a few files a call. A
# failing step does not stop the later ones (a failed build does); the exit status is 1 when any
# step failed or was skipped for lack of time.
#
# Our build never sees the vendor's cudnn.h: our include/ comes first on every target (the ctest
# `headers` proves it with the CUDA include directory present), the compiler search-path variables
# are cleared below, and the vendor's directory reaches only the benchmark's vendor program.
#
# Every step runs with OPENCUDNN_UNPROVEN=1 (GPU_CHECK_UNPROVEN=0 turns that off): the point of a
# run on the GPU is to prove the entries that have never run on one. The benchmark runs without
# them (what main serves by default); its A/B (GPU_CHECK_BENCH_AB=1) runs both: the table then says,
# case by case, whether the gated entries beat what serves without them (a gate comes off only
# on that evidence), and results.md gets the rows of what main serves by default.
#
# Prebuilt (GPU_CHECK_PREBUILT=ARCHIVE, an archive of tools/gpu-prebuild.sh carried with the
# tree): step 1 unpacks ours into the build directory instead of building it (seconds instead of
# a cold build's 330 s or more) and configures BUILD-vendor for the vendor's programs; ctest then leaves
# out what the archive does not hold (the CPU emulations, the install check: CI runs both), and
# emuasan, which rebuilds an emulation, is skipped.
#
# Settings (environment): GPU_CHECK_BUDGET (seconds), GPU_CHECK_BUILD (build directory, default
# build-gpu), GPU_CHECK_COMMIT (the commit results.md names, default git's HEAD), GPU_CHECK_BENCH_ARGS
# (arguments for the benchmark; default "--suite tensor,nn,resnet50,conv_algo
# --reps 3 --min-ms 5", which fits the budget; resnet50_b256 wants a call of its own),
# GPU_CHECK_BENCH_AB=1 (the A/B above: a third run of the cases, so narrow them), GPU_CHECK_TARGETS
# (the targets a build without an archive builds, default all: "cudnn ops_infer ops_train
# cnn_infer cnn_train adv_infer adv_train opencudnn_tests opencudnn_bench opencudnn_bench_vendor"
# for the runner and the benchmark alone; ctest then fails what was not built, so run the
# runner or the benchmark by hand after GPU_CHECK_STEPS=none).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

OUT=${OUT:-$PWD/gpu-check-out}
mkdir -p "$OUT"
budget=${GPU_CHECK_BUDGET:-450}
build=${GPU_CHECK_BUILD:-build-gpu}
start=$SECONDS
summary=$OUT/summary.txt
: >"$summary"
failed=0

[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
unset CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH LIBRARY_PATH
jobs=$(nproc 2>/dev/null || echo 4)
steps=,${GPU_CHECK_STEPS:-tests,sanitizer,bench},
export OPENCUDNN_UNPROVEN=${GPU_CHECK_UNPROVEN:-1}
wants() { case $steps in *,$1,*) return 0 ;; esac; return 1; }

say() { echo "$*" >>"$summary"; }
left() { echo $((budget - (SECONDS - start))); }
min() { if [ "$1" -lt "$2" ]; then echo "$1"; else echo "$2"; fi; }

# run_step LOG LIMIT CMD...: runs CMD for at most LIMIT seconds, appending its output to LOG, and
# returns its exit status (124 when it ran out of time, 125 when no time was left to start it).
run_step() {
    local log=$1 limit=$2
    shift 2
    if [ "$limit" -lt 5 ]; then
        echo "== skipped (no time left): $*" >>"$log"
        return 125
    fi
    echo "== $* (limit ${limit}s)" >>"$log"
    local t0=$SECONDS rc=0
    timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1 || rc=$?
    echo "== exit $rc after $((SECONDS - t0))s" >>"$log"
    return "$rc"
}

# verdict NAME RC [DETAIL]: one summary line for a step.
verdict() {
    local what
    case $2 in
    0) what=ok ;;
    124 | 137) what="TIMED OUT" ;;
    125) what="SKIPPED (no time left)" ;;
    *) what="FAILED (exit $2)" ;;
    esac
    if [ "$2" -ne 0 ]; then failed=1; fi
    say "$(printf '%-10s %s%s' "$1:" "$what" "${3:+; $3}")"
}

# ---- 0. where we are -------------------------------------------------------------------------------
vendor=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null || true)
[ -n "$vendor" ] && [ ! -f "$vendor/include/cudnn.h" ] && vendor=
{
    echo "gpu-check $(date -u '+%Y-%m-%d %H:%M:%S UTC'), budget ${budget}s"
    nvidia-smi -L 2>&1
    nvcc --version 2>&1 | tail -1
    cmake --version | head -1
    echo "vendor cuDNN: ${vendor:-none found}"
} >"$OUT/build.log"
say "gpu-check: $(nvidia-smi -L 2>/dev/null | head -1 || echo 'no nvidia-smi'); vendor cuDNN: ${vendor:-none}"

# ---- 1. build ---------------------------------------------------------------------------------------
# Configured here and built (ours and the vendor's programs in one tree), or with a prebuilt
# archive ours unpacked and a tree of their own configured for the vendor's programs, which the
# bench and parity steps build there.
prebuilt=${GPU_CHECK_PREBUILT:-}
vendor_build=$build
ctest_args=()
rc=0
if [ -n "$prebuilt" ]; then
    vendor_build=$build-vendor
    ctest_args=(-E '^(emulate_.*|install)$')
    # an archive that does not unpack here (another path, no xz): built here as without one
    if ! run_step "$OUT/build.log" "$(min 60 "$(left)")" tools/gpu-prebuild.sh --unpack "$prebuilt"; then
        say "prebuilt: $prebuilt did not unpack (build.log); building here"
        prebuilt='' vendor_build=$build ctest_args=()
        rm -rf "$build"
    fi
fi
if [ $rc -eq 0 ] && { [ -z "$prebuilt" ] || [ -n "$vendor" ]; }; then
    run_step "$OUT/build.log" "$(min 120 "$(left)")" cmake -S . -B "$vendor_build" -G Ninja \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DOPENCUDNN_BENCH_VENDOR_DIR="$vendor"
    rc=$?
fi
if [ $rc -eq 0 ] && [ -z "$prebuilt" ]; then
    # The build takes what it needs, short of the last minute: without it no later step can run,
    # while a later step that finds too little time left is skipped and says so. Each later step
    # leaves the steps after it some time. A cold build, even of the runner's and the benchmark's
    # targets alone, wants a call of its own with GPU_CHECK_BUDGET near 560 (2026-12-07, an H100
    # machine's 16 cores: 338 s built 322 of 333 edges, and the TMA kernel's file alone takes
    # more than 240 s; a build cut short loses the file it was compiling, and a machine left
    # idle 30 s goes back with the tree). A prebuilt archive (tools/gpu-prebuild.sh) saves it.
    # shellcheck disable=SC2086
    run_step "$OUT/build.log" "$(min 540 $(($(left) - 60)))" cmake --build "$build" -j "$jobs" \
        ${GPU_CHECK_TARGETS:+--target $GPU_CHECK_TARGETS}
    rc=$?
fi
verdict build $rc "$(grep -c -E 'warning[: ]' "$OUT/build.log") warning lines, $((SECONDS - start))s"
if [ $rc -ne 0 ]; then
    tail -n 30 "$OUT/build.log" >>"$summary"
    cat "$summary"
    exit 1
fi

# ---- hgmma: the wgmma instructions in the sm_90a code ------------------------------------------------
if wants hgmma; then
    hgmma_log=$OUT/hgmma.log
    : >"$hgmma_log"
    for lib in "$build"/lib*/libcudnn*.so.*.*.* "$build"/libcudnn*.so.*.*.*; do
        [ -f "$lib" ] || continue
        echo "$(basename "$lib"): $(cuobjdump -sass "$lib" 2>/dev/null | grep -c HGMMA) HGMMA" >>"$hgmma_log"
        # per kernel of the TMA convolution (conv_igemm_tma_sm90.cu): its wgmma and TMA loads
        cuobjdump -sass "$lib" 2>/dev/null | awk '/Function :/ { f = ($3 ~ /igemm_tma_kernel/) ? $3 : "" }
            f != "" && /HGMMA/ { h[f]++ } f != "" && /UTMALDG/ { t[f]++ } f != "" { seen[f] = 1 }
            END { for (k in seen) printf "  %s: %d HGMMA, %d UTMALDG\n", k, h[k], t[k] }' >>"$hgmma_log"
    done
    hgmma_rc=0
    if grep -q ': 0 HGMMA\|, 0 UTMALDG' <(grep '^  ' "$hgmma_log"); then hgmma_rc=1; fi
    verdict hgmma $hgmma_rc "$(grep -v ': 0 HGMMA' "$hgmma_log" | grep -v '^  ' | tr '\n' ' ')$(grep -c '^  ' "$hgmma_log") TMA kernels"
fi

# ---- 2. tests ----------------------------------------------------------------------------------------
if wants tests; then
# The whole ctest in parallel: the runner's tests file by file (unit_<file>, each running the host
# pass then the cuda pass), the other checks beside them: the runner run serially no longer fits.
tests_log=$OUT/tests.log
: >"$tests_log"
run_step "$tests_log" "$(min 200 $(($(left) - 150)))" ctest --test-dir "$build" -j "$jobs" --timeout 180 --output-on-failure \
    ${ctest_args[@]+"${ctest_args[@]}"}
rc=$?
detail="$(grep -E 'tests passed|tests failed' "$tests_log" | tail -1)"
grep -q -E 'impl_coverage .*Passed' "$tests_log" || detail="$detail; impl_coverage did not pass (no cuda pass?)"
verdict ctest $rc "$detail"
grep -E '^\s+[0-9]+ - .*\((Failed|Timeout)\)' "$tests_log" >>"$summary"

run_step "$tests_log" "$(min 30 "$(left)")" "$build/tools/opencudnn_doctor"
rc=$?
verdict doctor $rc "$(grep -E '^backend:' "$tests_log" | tail -1)"
run_step "$tests_log" "$(min 30 "$(left)")" python3 tools/cudnn_demo.py --lib "$build"
rc=$?
verdict demo $rc "$(grep -E 'per call' "$tests_log" | tail -1)"
fi

# ---- 3. compute-sanitizer -------------------------------------------------------------------------
# memcheck over the runner's cuda pass, one process per test file, as many at once as processors.
sanitizer_log=$OUT/sanitizer.log
if ! wants sanitizer; then
    :
elif command -v compute-sanitizer >/dev/null 2>&1; then
    : >"$sanitizer_log"
    files=$("$build/tests/opencudnn_tests" -l | sed -n 's/.*(\([a-z0-9_]*\)\.c)$/\1/p' | sort -u)
    logs=$(mktemp -d)
    limit=$(min 150 $(($(left) - 110)))
    echo "== compute-sanitizer memcheck, $(echo $files | wc -w) files, $jobs at once (limit ${limit}s)" >>"$sanitizer_log"
    # shellcheck disable=SC2086,SC2016
    printf '%s\n' $files | timeout --kill-after=10 "$limit" xargs -P "$jobs" -I{} sh -c \
        'compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 20 "$0" -b cuda -f "$1" >"$2/$1.log" 2>&1
         echo "$1 exit $?"' "$build/tests/opencudnn_tests" {} "$logs" >>"$sanitizer_log" 2>&1
    rc=$?
    for f in $files; do
        [ -f "$logs/$f.log" ] && grep -H -E 'ERROR SUMMARY: [1-9]|^ +FAILED' "$logs/$f.log" >>"$sanitizer_log"
    done
    rm -rf "$logs"
    clean=$(grep -c ' exit 0$' "$sanitizer_log")
    [ "$rc" -eq 0 ] && [ "$clean" -ne "$(echo $files | wc -w)" ] && rc=1
    verdict sanitizer $rc "$clean of $(echo $files | wc -w) files clean"
else
    echo "compute-sanitizer is not installed" >>"$sanitizer_log"
    say "sanitizer: not installed"
fi

# ---- race: racecheck and synccheck over the new kernels' tests and the stress program ----------------
if wants race && command -v compute-sanitizer >/dev/null 2>&1; then
    race_log=$OUT/race.log
    : >"$race_log"
    rc=0
    # cuBLAS's own kernels are left out: the hazards to find are ours (its nvjet_* kernels order
    # their split-K reductions through memory racecheck does not see). Each exclude option adds
    # one. On CUDA 13 and an H100, racecheck stops with "Internal Sanitizer Error: The Sanitizer
    # failed to handle a hardware exception" at the first implicit-GEMM kernel of the conv, GEMM,
    # graph and persistent-RNN tests, also with only our kernels named (--kernel-name): the
    # verdict counts those runs apart from the ones that report a hazard.
    exclude=() option=
    if compute-sanitizer --help 2>&1 | grep -q -- '--kernel-name-exclude'; then
        option=--kernel-name-exclude
    elif compute-sanitizer --help 2>&1 | grep -q -- '--exclude'; then
        option=--exclude
    fi
    if [ -n "$option" ]; then
        for k in nvjet xmma cutlass cublasLt; do exclude+=("$option" "kns=$k"); done
    fi
    for tool in racecheck synccheck; do
        for f in ${GPU_CHECK_RACE_FILES:-conv attn_core rnn_persist gemm backend_exec}; do
            run_step "$race_log" "$(min "${GPU_CHECK_RACE_LIMIT:-60}" $(($(left) - 60)))" compute-sanitizer \
                --tool "$tool" "${exclude[@]}" --error-exitcode 99 --print-limit 20 \
                "$build/tests/opencudnn_tests" -b cuda -f "$f" || rc=1
        done
        run_step "$race_log" "$(min "${GPU_CHECK_STRESS_LIMIT:-60}" $(($(left) - 60)))" compute-sanitizer --tool "$tool" \
            "${exclude[@]}" --error-exitcode 99 --print-limit 20 "$build/bench/opencudnn_stress" --threads 4 \
            --iterations "${GPU_CHECK_STRESS_ITERATIONS:-3}" --size "${GPU_CHECK_STRESS_SIZE:-small}" \
            --backend cuda || rc=1
    done
    verdict race $rc "$(grep -c -E '(ERROR|RACECHECK) SUMMARY: [1-9]' "$race_log") runs with errors, $(grep -c \
        'Internal Sanitizer Error' "$race_log") of them stopped by the sanitizer's internal error"
fi

# ---- check: every call of the chosen files re-run on the host (OPENCUDNN_CHECK=1) ---------------------
if wants check; then
    check_log=$OUT/check.log
    : >"$check_log"
    warnings=$(mktemp)
    CUDNN_LOGWARN_DBG=1 CUDNN_LOGDEST_DBG="$warnings" OPENCUDNN_CHECK=1 run_step "$check_log" \
        "$(min 120 $(($(left) - 30)))" "$build/tests/opencudnn_tests" -b cuda \
        -k "${GPU_CHECK_CHECK_TESTS:-conv,rnn,attn,mha,dropout,gemm,backend}"
    rc=$?
    bad=$(grep -c 'OPENCUDNN_CHECK: .* differs from' "$warnings")
    grep 'OPENCUDNN_CHECK: .* differs from' "$warnings" | head -n 40 >>"$check_log"
    rm -f "$warnings"
    [ "$bad" -ne 0 ] && rc=1
    verdict check $rc "$bad mismatches"
fi

# ---- emuasan: CPU emulations under AddressSanitizer, on the GPU machine -------------------------------
# An emulation's file recompiled with ASan from the build's own compile and link lines (ninja -t
# commands), the library archive left as built: ASan's allocator still catches a heap overrun by
# either at the next allocation or free. protect_shadow_gap=0 lets the CUDA runtime map its memory.
if wants emuasan && [ -n "$prebuilt" ]; then
    verdict emuasan 125 "not with a prebuilt archive (it rebuilds an emulation)"
elif wants emuasan; then
    asan_log=$OUT/emuasan.log
    : >"$asan_log"
    rc=0
    for emu in ${GPU_CHECK_ASAN_EMULATIONS:-conv_wide_epilogue}; do
        exe=tests/emulate_$emu
        obj=tests/CMakeFiles/emulate_$emu.dir/emulate/$emu.cu.o
        compile=$(ninja -C "$build" -t commands "$obj" | tail -1)
        link=$(ninja -C "$build" -t commands "$exe" | tail -1)
        compile=${compile#ccache }
        compile=${compile//$obj/$obj.asan.o}
        compile=${compile/nvcc /nvcc -g -Xcompiler=-fsanitize=address,-fno-omit-frame-pointer }
        link=${link//$obj/$obj.asan.o}
        link=${link/-o $exe /-o $exe.asan }
        link=${link/g++ /g++ -fsanitize=address }
        if run_step "$asan_log" "$(min 120 $(($(left) - 60)))" sh -c "cd '$build' && $compile && $link"; then
            ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 run_step "$asan_log" "$(min 60 $(($(left) - 30)))" \
                "$build/$exe.asan" || rc=1
        else
            rc=1
        fi
    done
    verdict emuasan $rc "$(grep -c 'ERROR: AddressSanitizer' "$asan_log") ASan reports"
fi

# ---- parity: the parity probe, ours against the vendor's ------------------------------------------
if wants parity; then
    parity_log=$OUT/parity.log
    : >"$parity_log"
    parity_rc=0
    vendor_args=()
    if [ -n "$vendor" ]; then
        if run_step "$parity_log" "$(min 90 $(($(left) - 30)))" cmake --build "$vendor_build" --target opencudnn_parity_vendor; then
            vendor_args=(--vendor "$vendor_build/bench/opencudnn_parity_vendor" --vendor-libdirs "$(bench/vendor-libdirs.sh "$vendor")")
        else
            parity_rc=1
        fi
    fi
    run_step "$parity_log" "$(min 150 $(($(left) - 10)))" python3 tools/parity-compare.py --ours "$build/bench/opencudnn_parity" \
        --host ${vendor_args[@]+"${vendor_args[@]}"} -o "$OUT" || parity_rc=$?
    parity_note=$(grep '^summary:' "$parity_log" | sed 's/^summary: //')
    [ -n "$vendor" ] && [ ${#vendor_args[@]} -eq 0 ] && parity_note="ours only: the vendor's build failed"
    verdict parity $parity_rc "$parity_note"
fi

# ---- 4. benchmark ----------------------------------------------------------------------------------
if wants bench; then
bench_opts=(-B "$build" -V "$vendor" -o "$OUT/bench.md")
[ -n "$prebuilt" ] && bench_opts+=(-P "$vendor_build")
[ "${GPU_CHECK_BENCH_AB:-0}" = 1 ] && bench_opts+=(-U)
# without the A/B, what main serves by default (the A/B sets the variable for each of its runs)
# shellcheck disable=SC2086
OPENCUDNN_UNPROVEN=0 run_step "$OUT/bench.log" "$(min 240 $(($(left) - 10)))" bench/run.sh "${bench_opts[@]}" \
    -- ${GPU_CHECK_BENCH_ARGS:---suite tensor,nn,resnet50,conv_algo --reps 3 --min-ms 5}
rc=$?
# Stopped early, the programs have still written the rows they finished: join those.
[ $rc -ne 0 ] && bench/run.sh -J -o "$OUT/bench.md" >>"$OUT/bench.log" 2>&1
verdict bench $rc "$(grep -E '^summary:' "$OUT/bench.md" 2>/dev/null | sed 's/^summary: //')"
# The commit measured: git's HEAD, or GPU_CHECK_COMMIT where the tree came without .git.
python3 bench/results.py --ours "$OUT/bench.ours.tsv" --vendor "$OUT/bench.vendor.tsv" -o "$OUT/results.md" \
    --commit "${GPU_CHECK_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" >>"$OUT/bench.log" 2>&1
verdict results $? "$OUT/results.md"
fi

# ---- chosen: which implementation served each benchmark case ----------------------------------------
if wants chosen; then
    # shellcheck disable=SC2086
    run_step "$OUT/chosen.raw" "$(min 90 $(($(left) - 5)))" "$build/bench/opencudnn_bench" --tsv \
        ${GPU_CHECK_BENCH_ARGS:---suite tensor,nn,resnet50,conv_algo} --reps 1 --iters 1
    rc=$?
    awk -F'\t' 'NF >= 10 && $1 != "name" { printf "%-40s %s\n", $1, $10 }' "$OUT/chosen.raw" >"$OUT/chosen.log"
    verdict chosen $rc "$(wc -l <"$OUT/chosen.log") cases"
fi

say "total: $((SECONDS - start))s; logs in $OUT"
# The device tool brings back a few files a call: all but the summary and the two tables go into
# one archive.
if [ "${GPU_CHECK_PACK:-1}" = 1 ]; then
    packed=()
    for f in "$OUT"/*; do
        case ${f##*/} in summary.txt | bench.md | results.md | logs.tgz | '*') ;; *) packed+=("${f##*/}") ;; esac
    done
    [ ${#packed[@]} -gt 0 ] && (cd "$OUT" && tar czf logs.tgz "${packed[@]}" && rm -rf "${packed[@]}")
fi
cat "$summary"
exit $failed
