#!/usr/bin/env bash
# run.sh: builds the benchmark against opencudnn and against another cuDNN (the vendor's), runs
# both on the same cases and prints them side by side as a markdown table, also written to a file.
#
#   bench/run.sh [-B BUILD_DIR] [-V VENDOR_DIR] [-o OUT.md] [-U] [-J] [-P VENDOR_BUILD] [-- BENCH_ARGS...]
#
# BUILD_DIR (default build-bench) is configured when it has no CMakeCache.txt (Release, CUDA for
# sm_90, plus $CMAKE_ARGS), else reused; either way it is pointed at VENDOR_DIR and both programs
# are built. With -P ours is run as BUILD_DIR holds it (unpacked by tools/gpu-prebuild.sh) and
# the vendor's program is configured and built in VENDOR_BUILD. VENDOR_DIR is a cuDNN with
# include/ and lib/; by default the nvidia-cudnn Python package when python3 has it; without one
# only ours runs. BENCH_ARGS go to both programs
# (--suite, --case, --reps...; see opencudnn_bench --help). -U (A/B of the gated entries) runs
# ours twice, with OPENCUDNN_UNPROVEN=0 and =1, and the table shows both beside the vendor's: a
# third run, so narrow the cases. The raw tab-separated results are kept next to OUT.md
# (OUT.ours.tsv: ours as the environment sets OPENCUDNN_UNPROVEN, with -U =0; OUT.unproven.tsv:
# with -U, ours with =1; OUT.vendor.tsv); -J only joins those again into OUT.md (no build, no
# run: for results brought back from another machine), with the unproven columns when
# OUT.unproven.tsv has rows. Each of ours rows names the implementations that served it
# (column impl of the TSV: "+"-joined entry names, "-" unknown).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}
build="build-bench"
vendor=
out=bench.md
join_only=
ab=
vendor_build=
while getopts B:V:o:UJP:h opt; do
    case $opt in
    B) build=$OPTARG ;;
    V) vendor=$OPTARG ;;
    o) out=$OPTARG ;;
    U) ab=1 ;;
    J) join_only=1 ;;
    P) vendor_build=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift

mkdir -p "$(dirname "$out")"
base=${out%.md}
ours_tsv=$base.ours.tsv
vendor_tsv=$base.vendor.tsv
unproven_tsv=$base.unproven.tsv
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
    # the tree that builds the vendor's program: ours, or VENDOR_BUILD when ours is prebuilt
    tree=${vendor_build:-$build}
    targets=()
    [ -z "$vendor_build" ] && targets+=(opencudnn_bench)
    [ -n "$vendor" ] && targets+=(opencudnn_bench_vendor)
    if [ ${#targets[@]} -gt 0 ]; then
        if [ ! -f "$tree/CMakeCache.txt" ]; then
            # shellcheck disable=SC2086
            cmake -S . -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
                ${CMAKE_ARGS:-} -DOPENCUDNN_BENCH_VENDOR_DIR="$vendor" >&2
        else
            cmake "$tree" -DOPENCUDNN_BENCH_VENDOR_DIR="$vendor" >&2
        fi
        cmake --build "$tree" -j "$(nproc 2>/dev/null || echo 2)" --target "${targets[@]}" >&2
    fi

    # ---- run ------------------------------------------------------------------------------------------
    # With -U: ours without the gated entries, the vendor's, then ours with them, so that a run
    # stopped early still holds the default comparison.
    : >"$vendor_tsv"
    : >"$unproven_tsv"
    if [ -n "$ab" ]; then
        echo "run.sh: opencudnn, OPENCUDNN_UNPROVEN=0 ..." >&2
        OPENCUDNN_UNPROVEN=0 "$build/bench/opencudnn_bench" --tsv "$@" >"$ours_tsv" || status=$?
    else
        echo "run.sh: opencudnn ..." >&2
        "$build/bench/opencudnn_bench" --tsv "$@" >"$ours_tsv" || status=$?
    fi
    if [ -n "$vendor" ]; then
        libdirs=$(bench/vendor-libdirs.sh "$vendor")
        echo "run.sh: vendor ($vendor) ..." >&2
        LD_LIBRARY_PATH="$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            "$tree/bench/opencudnn_bench_vendor" --tsv "$@" >"$vendor_tsv" || status=$?
    fi
    if [ -n "$ab" ]; then
        echo "run.sh: opencudnn, OPENCUDNN_UNPROVEN=1 ..." >&2
        OPENCUDNN_UNPROVEN=1 "$build/bench/opencudnn_bench" --tsv "$@" >"$unproven_tsv" || status=$?
    fi
fi

# ---- side by side -----------------------------------------------------------------------------------
# Runs by file: 1 ours, 2 the vendor's, 3 ours with OPENCUDNN_UNPROVEN=1 (rows only with -U); a
# file that -J does not find reads as empty.
for f in ours_tsv vendor_tsv unproven_tsv; do [ -f "${!f}" ] || printf -v "$f" /dev/null; done
awk -F '\t' -v date="$(date -u '+%Y-%m-%d %H:%M UTC')" '
function short(s) { sub(/^CUDNN_STATUS_/, "", s); return s }
function ok(r) { return r[4] == "CUDNN_STATUS_SUCCESS" && r[5] > 0 }
function gbps(bytes, ms) { return bytes / ms / 1e6 }
function tflops(r) { return r[9] > 0 ? sprintf("%.4g", r[9] / r[5] / 1e9) : "-" } # column 9 (flops): absent in older TSVs
function ms(r, n) { return !n ? "-" : ok(r) ? sprintf("%.4g", r[5]) : short(r[4]) }
function ratio(r, s) { return ok(r) && ok(s) ? sprintf("%.2f", r[5] / s[5]) : "-" }
function impl(r, n) { return n && r[10] != "" ? r[10] : "-" } # column 10 (impl): absent in older TSVs
# whether two outputs agree: their weighted checksums within 1% of the larger norm
function agree(r, s,    cr, cs, scale, ds, dn) {
    split(r[7], cr, ","); split(s[7], cs, ",")
    scale = cr[2] > cs[2] ? cr[2] : cs[2]; ds = cr[1] - cs[1]; dn = cr[2] - cs[2]
    return (ds < 0 ? -ds : ds) <= 0.01 * scale && (dn < 0 ? -dn : dn) <= 0.01 * scale
}
{ file = FILENAME == ARGV[1] ? 1 : FILENAME == ARGV[2] ? 2 : 3 }
/^#/ { banner[file] = substr($0, 3); next }
$1 == "name" { next }
{
    key = $1
    if (!(key in seen)) { seen[key] = 1; order[n++] = key }
    row[file, key] = $0
    if (file == 3) ab = 1
    if ($2 == "ceiling" && $4 == "CUDNN_STATUS_SUCCESS" && $5 > 0) ceiling[file] = gbps($6, $5)
}
END {
    printf "## opencudnn benchmark, %s\n\n", date
    printf "- ours%s: %s\n", ab ? " (OPENCUDNN_UNPROVEN=0)" : "", (1 in banner) ? banner[1] : "(did not run)"
    if (ab) printf "- ours+unproven (OPENCUDNN_UNPROVEN=1): %s\n", (3 in banner) ? banner[3] : "(did not run)"
    printf "- vendor: %s\n", (2 in banner) ? banner[2] : "(not run)"
    printf "- copy ceiling (device-to-device cudaMemcpy, bytes read + written): ours run %s GB/s, vendor run %s GB/s\n", \
        (1 in ceiling) ? sprintf("%.0f", ceiling[1]) : "-", (2 in ceiling) ? sprintf("%.0f", ceiling[2]) : "-"
    printf "- ratio = ours / vendor time (below 1: ours faster); GB/s = the bytes the call must move / time; "
    printf "%% copy = ours GB/s / the copy ceiling of ours run; TFLOP/s = the flops the call counts (convolutions: 2NKPQCRS) / time; "
    printf "check = the outputs agree (weighted checksum) with the vendor output%s, else DIFF and which; ", ab ? " (without one, unproven with ours)" : ""
    printf "impl = the implementations that served ours (entry names, \"+\" between several); "
    if (ab) printf "unproven ratio = ours+unproven / vendor time, unproven / ours = ours+unproven / ours time (below 1: the gated entries faster); "
    printf "host-call rows: host time per call, device idle\n\n"
    if (ab) {
        printf "| case | ours ms | ours+unproven ms | vendor ms | ratio | unproven ratio | unproven / ours | ours GB/s | vendor GB/s | %% copy | ours TFLOP/s | vendor TFLOP/s | check | ours impl | unproven impl | problem |\n"
        printf "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|\n"
    } else {
        printf "| case | ours ms | vendor ms | ratio | ours GB/s | vendor GB/s | %% copy | ours TFLOP/s | vendor TFLOP/s | check | ours impl | problem |\n"
        printf "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n"
    }
    for (i = 0; i < n; i++) {
        key = order[i]
        split("", a); split("", b); split("", u)
        na = ((1, key) in row) ? split(row[1, key], a, "\t") : 0
        nb = ((2, key) in row) ? split(row[2, key], b, "\t") : 0
        nu = ((3, key) in row) ? split(row[3, key], u, "\t") : 0
        any = na ? row[1, key] : nb ? row[2, key] : row[3, key]
        split(any, f, "\t")
        name = f[1]; host = f[3] == "host"; problem = f[8]; op = !host && f[2] != "ceiling"
        if (host) name = name " (host call)"
        ga = "-"; gb = "-"; pct = "-"; fa = "-"; fb = "-"
        if (!host && na && ok(a)) {
            ga = sprintf("%.4g", gbps(a[6], a[5])); fa = tflops(a)
            if (ceiling[1] > 0) pct = sprintf("%.0f%%", 100 * gbps(a[6], a[5]) / ceiling[1])
        }
        if (!host && nb && ok(b)) { gb = sprintf("%.4g", gbps(b[6], b[5])); fb = tflops(b) }
        if (op && ok(a) && ok(b)) { rs += log(a[5] / b[5]); rn++ }
        if (op && ok(u) && ok(b)) { us += log(u[5] / b[5]); un++ }
        if (op && ok(a) && ok(u) && impl(a, na) != impl(u, nu)) { os += log(u[5] / a[5]); on++; of += u[5] < a[5] }
        # every case, also a gated path inside an entry of the same name (a form of a kernel, an epilogue)
        if (op && ok(a) && ok(u)) { as += log(u[5] / a[5]); an++; af += u[5] < 0.97 * a[5]; al += u[5] > 1.03 * a[5] }
        # check: against the vendor, or (without it) unproven against ours
        check = "-"; bad = ""
        if (ok(b)) {
            if (ok(a)) { check = "ok"; if (!agree(a, b)) bad = "ours" }
            if (ok(u)) { check = "ok"; if (!agree(u, b)) bad = bad (bad ? ", " : "") "unproven" }
        } else if (ok(a) && ok(u)) { check = "ok"; if (!agree(u, a)) bad = "unproven" }
        if (bad != "") check = "DIFF (" bad ")"
        if (check == "ok") nok++; else if (bad != "") ndiff++
        if (na && !ok(a)) nfail++
        if (nu && !ok(u)) ufail++
        line = "| " name " | " ms(a, na) (ab ? " | " ms(u, nu) : "") " | " ms(b, nb) " | " ratio(a, b)
        if (ab) line = line " | " ratio(u, b) " | " ratio(u, a)
        line = line " | " ga " | " gb " | " pct " | " fa " | " fb " | " check " | " impl(a, na) (ab ? " | " impl(u, nu) : "")
        print line " | `" problem "` |"
    }
    printf "\nsummary: %d cases; ours failed %d", n, nfail
    if (ab) printf ", ours+unproven failed %d", ufail
    if (rn) printf "; geometric mean of ours/vendor time %.2f over %d device-timed op cases", exp(rs / rn), rn
    if (un) printf "; of ours+unproven/vendor %.2f over %d", exp(us / un), un
    if (ab) printf "; unproven served %d cases otherwise, faster in %d%s", on, of, on ? sprintf(" (geometric mean of unproven/ours time %.2f)", exp(os / on)) : ""
    if (ab && an) printf "; over every case unproven/ours %.2f, faster by 3%% or more in %d, slower in %d", exp(as / an), af, al
    if (nok + ndiff) printf "; checks: %d agree, %d DIFFER", nok, ndiff
    printf "\n"
}' "$ours_tsv" "$vendor_tsv" "$unproven_tsv" | tee "$out"
echo "run.sh: written to $out (raw: $ours_tsv, $vendor_tsv, $unproven_tsv)" >&2
exit "$status"
