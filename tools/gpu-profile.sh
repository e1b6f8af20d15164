#!/usr/bin/env bash
# gpu-profile.sh: what limits the kernels of a few benchmark problems, on a GPU machine, with
# Nsight Compute (ncu). For each problem string (bench/bench.h's syntax, e.g.
# "op=poolfwd mode=max dt=f32 x=64x256x56x56 win=3 pad=1 stride=2") it runs the benchmark once
# under ncu and prints, per kernel launch of the call: time, DRAM and SM throughput (% of peak),
# warps active (% of the SM's), registers per thread, grid size, instructions executed and the
# megabytes read from and written to DRAM; where this ncu has the metrics, also how often a
# scheduler issues (issue%), the stalls per issue waiting on loaded data (lsb) and on a full
# load/store queue (thr), the L2 hit rate and how busy the ALU pipe is (alu%). High SM and low
# DRAM throughput: the kernel is instruction-bound (alu% near 80: by the ALU pipe, so cut
# compares, selects and integer work, not instructions in general); both low with few warps
# active, or lsb high: it keeps too few bytes in flight. Output goes to stdout and to
# $OUT/profile.txt when OUT is set.
#
#   tools/gpu-profile.sh [-B BUILD_DIR] [-n LAUNCHES] [-k KERNEL_REGEX] PROBLEM...
#
# BUILD_DIR (default build-gpu) is configured (Release, CUDA for sm_90) and the benchmark built
# when needed; a directory with the benchmark and no build.ninja (an unpacked variant of a
# tools/gpu-variants.sh pack, its directory in LD_LIBRARY_PATH, or a tree unpacked by
# tools/gpu-prebuild.sh) is used as it is. LAUNCHES (default 8) caps the kernel launches
# profiled per problem (a call is usually 1 to 6 launches; the benchmark runs the call several
# times). KERNEL_REGEX profiles only the kernels whose names it matches (ncu's --kernel-name
# regex:), so that LAUNCHES are spent on them and not on the call's first small kernels.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build-gpu
launches=8
kernels=()
while getopts B:n:k:h opt; do
    case $opt in
    B) build=$OPTARG ;;
    n) launches=$OPTARG ;;
    k) kernels=(--kernel-name "regex:$OPTARG") ;;
    *) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
unset CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH LIBRARY_PATH
command -v ncu >/dev/null || { echo "gpu-profile: ncu (Nsight Compute) is not installed" >&2; exit 1; }
if [ -f "$build/build.ninja" ] || [ ! -x "$build/bench/opencudnn_bench" ]; then
    if [ ! -f "$build/CMakeCache.txt" ]; then
        cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >&2
    fi
    cmake --build "$build" -j "$(nproc 2>/dev/null || echo 4)" --target opencudnn_bench >&2
fi

metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics=$metrics,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
metrics=$metrics,launch__registers_per_thread,launch__grid_size,smsp__inst_executed.sum
metrics=$metrics,dram__bytes_read.sum,dram__bytes_write.sum
# Why warps wait (per instruction issued: long scoreboard = a global or local load's data,
# lg throttle = the load/store queue full), how often a scheduler issues, and the L2 hit rate.
# Tried first; should this ncu not know one of them, the base set above is used alone.
stalls=smsp__issue_active.avg.pct_of_peak_sustained_active
stalls=$stalls,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
stalls=$stalls,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,lts__t_sector_hit_rate.pct
# How busy the ALU pipe is (compares, selects, integer and logic: half rate on sm_90), which
# bounds a kernel long before its total issue rate does.
stalls=$stalls,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active

report=$(mktemp)
trap 'rm -f "$report"' EXIT
for problem in "$@"; do
    echo "== $problem"
    for set in "$metrics,$stalls" "$metrics"; do
        ncu --metrics "$set" --csv --print-units base --launch-count "$launches" "${kernels[@]}" \
            "$build/bench/opencudnn_bench" --problem "$problem" --reps 1 --iters 1 >"$report" 2>/dev/null || true
        grep -q '^"[0-9]' "$report" && break
    done
    # One CSV row per (launch, metric): gather them into one line per launch.
    python3 - "$report" <<'EOF'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 12 and r[0].isdigit()]
launches = {}
for r in rows:
    launches.setdefault(r[0], {"kernel": r[4]})[r[-3]] = r[-1]
short = {"gpu__time_duration.sum": "us", "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram%",
         "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm%",
         "sm__warps_active.avg.pct_of_peak_sustained_active": "warps%", "launch__registers_per_thread": "regs",
         "launch__grid_size": "grid", "smsp__inst_executed.sum": "warp-instr",
         "dram__bytes_read.sum": "rd", "dram__bytes_write.sum": "wr",
         "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue%",
         "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "lsb",
         "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio": "thr",
         "lts__t_sector_hit_rate.pct": "L2hit%", "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active": "alu%"}
print("%10s %6s %6s %6s %5s %8s %12s %8s %8s %6s %5s %5s %6s %5s  %s" % (
    "us", "dram%", "sm%", "warps%", "regs", "grid", "warp-instr", "MB read", "MB wrote", "issue%", "lsb", "thr",
    "L2hit%", "alu%", "kernel"))
for k in sorted(launches, key=int):
    m = {short[n]: v for n, v in launches[k].items() if n in short}
    num = lambda n: float(m.get(n, "0").replace(",", "") or 0)
    name = launches[k]["kernel"].replace("(anonymous namespace)::", "")
    name = (name[5:] if name.startswith("void ") else name).split("(")[0][:80]  # no return type, no parameters
    print("%10.1f %6.1f %6.1f %6.1f %5d %8d %12d %8.1f %8.1f %6.1f %5.2f %5.2f %6.1f %5.1f  %s" % (
        num("us") / 1000, num("dram%"), num("sm%"), num("warps%"), num("regs"), num("grid"), num("warp-instr"),
        num("rd") / 1e6, num("wr") / 1e6, num("issue%"), num("lsb"), num("thr"), num("L2hit%"), num("alu%"), name))
if not launches:
    print("(no kernel launches profiled: is ncu allowed to read the GPU's counters here?)")
EOF
done | tee ${OUT:+"$OUT/profile.txt"}
