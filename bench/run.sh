#!/usr/bin/env bash
# run.sh: builds the benchmark against opencudnn and against another cuDNN (the vendor's), runs
# both on the same cases and prints them side by side as a markdown table, also written to a file.
#
#   bench/run.sh [-B BUILD_DIR] [-V VENDOR_DIR] [-o OUT.md] [-J] [-- BENCH_ARGS...]
#
# BUILD_DIR (default build-bench) is configured when it has no CMakeCache.txt (Release, CUDA for
# sm_90, plus $CMAKE_ARGS), else reused; either way it is pointed at VENDOR_DIR and both programs
# are built. VENDOR_DIR is a cuDNN with include/ and lib/; by default the nvidia-cudnn Python
# package when python3 has it; without one only ours runs. BENCH_ARGS go to both programs
# (--suite, --case, --reps...; see opencudnn_bench --help). The raw tab-separated results are kept
# next to OUT.md (OUT.ours.tsv, OUT.vendor.tsv); -J only joins those again into OUT.md (no
# build, no run: for results brought back from another machine).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}
build="build-bench"
vendor=
out=bench.md
join_only=
while getopts B:V:o:Jh opt; do
    case $opt in
    B) build=$OPTARG ;;
    V) vendor=$OPTARG ;;
    o) out=$OPTARG ;;
    J) join_only=1 ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift

mkdir -p "$(dirname "$out")"
base=${out%.md}
ours_tsv=$base.ours.tsv
vendor_tsv=$base.vendor.tsv
status=0
if [ -z "$join_only" ]; then
    if [ -z "$vendor" ]; then
        vendor=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null || true)
    fi
    if [ -n "$vendor" ] && [ ! -f "$vendor/include/cudnn.h" ]; then
        echo "run.sh: $vendor has no include/cudnn.h: running opencudnn only" >&2
        vendor=
    fi

    # ---- build ------------------------------------------------------------------------------------
    [ -x /usr/local/cuda/bin/nvcc ] && export PATH="$PATH:/usr/local/cuda/bin"
    if [ ! -f "$build/CMakeCache.txt" ]; then
        # shellcheck disable=SC2086
        cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
            ${CMAKE_ARGS:-} -DOPENCUDNN_BENCH_VENDOR_DIR="$vendor" >&2
    else
        cmake "$build" -DOPENCUDNN_BENCH_VENDOR_DIR="$vendor" >&2
    fi
    targets=(opencudnn_bench)
    [ -n "$vendor" ] && targets+=(opencudnn_bench_vendor)
    cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target "${targets[@]}" >&2

    # ---- run ------------------------------------------------------------------------------------------
    : >"$vendor_tsv"
    echo "run.sh: opencudnn ..." >&2
    "$build/bench/opencudnn_bench" --tsv "$@" >"$ours_tsv" || status=$?
    if [ -n "$vendor" ]; then
        libdirs=$(bench/vendor-libdirs.sh "$vendor")
        echo "run.sh: vendor ($vendor) ..." >&2
        LD_LIBRARY_PATH="$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            "$build/bench/opencudnn_bench_vendor" --tsv "$@" >"$vendor_tsv" || status=$?
    fi
fi

# ---- side by side -----------------------------------------------------------------------------------
awk -F '\t' -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" '
function short(s) { sub(/^CUDNN_STATUS_/, "", s); return s }
function ok(r) { return r[4] == "CUDNN_STATUS_SUCCESS" && r[5] > 0 }
function gbps(bytes, ms) { return bytes / ms / 1e6 }
function tflops(r) { return r[9] > 0 ? sprintf("%.4g", r[9] / r[5] / 1e9) : "-" } # column 9 (flops): absent in older TSVs
{ file = FILENAME == ARGV[1] ? 1 : 2 }
/^#/ { banner[file] = substr($0, 3); next }
$1 == "name" { next }
{
    key = $1
    if (file == 1) { order[n++] = key; ours[key] = $0 } else { theirs[key] = $0; if (!(key in ours)) order[n++] = key }
    if ($2 == "ceiling" && $4 == "CUDNN_STATUS_SUCCESS" && $5 > 0) ceiling[file] = gbps($6, $5)
}
END {
    printf "## opencudnn benchmark, %s\n\n", date
    printf "- ours: %s\n- vendor: %s\n", (1 in banner) ? banner[1] : "(did not run)", (2 in banner) ? banner[2] : "(not run)"
    printf "- copy ceiling (device-to-device cudaMemcpy, bytes read + written): ours run %s GB/s, vendor run %s GB/s\n", \
        (1 in ceiling) ? sprintf("%.0f", ceiling[1]) : "-", (2 in ceiling) ? sprintf("%.0f", ceiling[2]) : "-"
    printf "- ratio = ours / vendor time (below 1: ours faster); GB/s = the bytes the call must move / time; "
    printf "%% copy = ours GB/s / the copy ceiling of ours run; TFLOP/s = the flops the call counts (convolutions: 2NKPQCRS) / time; check = both outputs agree (weighted checksum); "
    printf "host-call rows: host time per call, device idle\n\n"
    printf "| case | ours ms | vendor ms | ratio | ours GB/s | vendor GB/s | %% copy | ours TFLOP/s | vendor TFLOP/s | check | problem |\n"
    printf "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n"
    for (i = 0; i < n; i++) {
        key = order[i]
        split("", a); split("", b)
        na = (key in ours) ? split(ours[key], a, "\t") : 0
        nb = (key in theirs) ? split(theirs[key], b, "\t") : 0
        row = na ? a[1] : b[1]; host = (na ? a[3] : b[3]) == "host"; problem = na ? a[8] : b[8]
        if (host) row = row " (host call)"
        ta = !na ? "-" : ok(a) ? sprintf("%.4g", a[5]) : short(a[4])
        tb = !nb ? "-" : ok(b) ? sprintf("%.4g", b[5]) : short(b[4])
        ratio = "-"; ga = "-"; gb = "-"; pct = "-"; check = "-"; fa = "-"; fb = "-"
        if (na && nb && ok(a) && ok(b)) {
            ratio = sprintf("%.2f", a[5] / b[5])
            if (!host && a[2] != "ceiling") { rs += log(a[5] / b[5]); rn++ }
            split(a[7], ca, ","); split(b[7], cb, ",")
            scale = ca[2] > cb[2] ? ca[2] : cb[2]
            d = ca[1] - cb[1]; dn = ca[2] - cb[2]
            check = (d < 0 ? -d : d) <= 0.01 * scale && (dn < 0 ? -dn : dn) <= 0.01 * scale ? "ok" : "DIFF"
            if (check == "ok") nok++; else ndiff++
        }
        if (!host && na && ok(a)) { ga = sprintf("%.4g", gbps(a[6], a[5])); if (ceiling[1] > 0) pct = sprintf("%.0f%%", 100 * gbps(a[6], a[5]) / ceiling[1]) }
        if (!host && nb && ok(b)) gb = sprintf("%.4g", gbps(b[6], b[5]))
        if (!host && na && ok(a)) fa = tflops(a)
        if (!host && nb && ok(b)) fb = tflops(b)
        if (na && !ok(a)) nfail++
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | `%s` |\n", row, ta, tb, ratio, ga, gb, pct, fa, fb, check, problem
    }
    printf "\nsummary: %d cases; ours failed %d", n, nfail
    if (rn) printf "; geometric mean of ours/vendor time %.2f over %d device-timed op cases", exp(rs / rn), rn
    if (nok + ndiff) printf "; checks: %d agree, %d DIFFER", nok, ndiff
    printf "\n"
}' "$ours_tsv" "$vendor_tsv" | tee "$out"
echo "run.sh: written to $out (raw: $ours_tsv, $vendor_tsv)" >&2
exit "$status"
