#!/usr/bin/env python3
"""results.py: writes bench/results.md, the one table of where every benchmark case stands.

    bench/results.py --ours OURS.tsv [--vendor VENDOR.tsv] [--commit C] [--date YYYY-MM-DD]
                     [--table bench/results.md] [-o OUT.md]

Reads the tab-separated results of one run (`opencudnn_bench --tsv`; bench/run.sh keeps them as
OUT.ours.tsv and OUT.vendor.tsv), and merges them into the table TABLE (default
bench/results.md): each case of the run replaces its row, every other row stays as it was, so a
run of one suite leaves the rows of the others alone. Cases run on the host backend are named
with " (host)". The result goes to OUT (default: TABLE itself). Each row says which commit and
date its numbers come from; older runs and what was tried live in bench/archive.md and git
history. tools/gpu-check.sh writes its run's table this way ($OUT/results.md). The table holds
what the library serves by default: after an A/B run (bench/run.sh -U) OURS is OUT.ours.tsv, the
run with OPENCUDNN_UNPROVEN=0; the unproven run's times and which implementations served each
case (the TSVs' impl column, not read here) are in that run's bench.md.

Share of the ceiling: for a case that counts flops (the convolutions), its rate against the
GEMM ceiling of its data type (CEILINGS: measured on the H200), or on the host backend against
the processor's fp32 FMA peak that the run's banner names; for every other case, the bytes it
must move against the device copy measured in the same run. Host-call rows (host time per
call) have none.
"""
import argparse
import datetime
import os
import re
import subprocess
import sys

# Measured GEMM ceilings on the H200 in TFLOP/s, by the dt= of a problem string. fp32 is the FMA
# rate: convolutions that run f32 on TF32 tensor cores (default math) can exceed it. The int8
# types (i8, u8, i8x4, i8x32) have no measured ceiling: their rows' share is "-".
CEILINGS = {"bf16": 772.0, "f16": 772.0, "f32": 51.0}

HEADER = """# Benchmark results

Where each benchmark case stands: the last measurement of every case, one row each, written by
`bench/results.py` from a run of `bench/run.sh` (`tools/gpu-check.sh` writes `$OUT/results.md`,
which replaces this file). Do not edit the rows by hand. Dated session notes and the variants
tried are in `bench/archive.md`.

- ours, vendor: milliseconds per call (device time; "(host call)": host time per call), ours
  against the vendor's cuDNN in the same run; ratio = ours / vendor (below 1: ours faster).
- share of the ceiling: "copy": the bytes the call must move against a device-to-device copy in
  the same run; "GEMM": the convolution's 2NKPQCRS flops against the measured GEMM rate of its
  type on the H200, also for H100 rows (the same 132 SMs; bf16 and f16 772 TFLOP/s, f32 51 TFLOP/s with FMA: f32 convolutions run on
  TF32 tensor cores by default and can exceed it); "FMA peak": on the host backend, against the
  processor's fp32 FMA peak.
- GPU: the device the row was measured on ("host" for the host backend); a ratio compares two
  libraries on that one device in one run, never rows of different devices. "(gated on)": run
  with OPENCUDNN_UNPROVEN=1, the gated entries serving where they apply (main does not by
  default; tools/gpu-check.sh benchmarks without them, and with them only in its A/B).
- commit, date: the tree and the day of the run the row comes from; the problem strings are in
  `opencudnn_bench --list`.

"""
COLUMNS = ["case", "ours ms", "vendor ms", "ratio", "share of ceiling", "GPU", "commit", "date"]
# Rows written before the GPU column were all measured on the H200 (or on the host backend).
LEGACY_COLUMNS = 7


def read_tsv(path):
    """The banner (the '# ' line) and the rows of a bench TSV, as dicts."""
    banner, rows = "", []
    if not path or not os.path.exists(path):
        return banner, rows
    with open(path) as f:
        names = None
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# "):
                banner = line[2:]
            elif line.startswith("name\t"):
                names = line.split("\t")
            elif line and names:
                rows.append(dict(zip(names, line.split("\t"))))
    return banner, rows


def ok(r):
    return r is not None and r.get("status") == "CUDNN_STATUS_SUCCESS" and float(r.get("ms", -1)) > 0


def fmt_ms(r):
    if r is None:
        return "-"
    if not ok(r):
        return r.get("status", "-").replace("CUDNN_STATUS_", "")
    return "%.4g" % float(r["ms"])


def host_peak_gflops(banner):
    """The fp32 FMA peak a host run's banner names, in GFLOP/s, or 0."""
    m = re.search(r"fp32 FMA peak ([0-9.]+) GFLOP/s", banner)
    return float(m.group(1)) if m else 0.0


def share(r, copy_gbps, host_peak):
    if not ok(r) or r.get("timing") == "host":
        return "-"
    ms, flops = float(r["ms"]), float(r.get("flops") or 0)
    if flops > 0:
        if host_peak > 0:
            return "%.0f%% FMA peak" % (100 * flops / (ms * 1e-3) / 1e9 / host_peak)
        m = re.search(r"\bdt=(\w+)", r.get("problem", ""))
        ceiling = CEILINGS.get(m.group(1)) if m else None
        return "%.0f%% GEMM" % (100 * flops / (ms * 1e-3) / 1e12 / ceiling) if ceiling else "-"
    if copy_gbps > 0:
        return "%.0f%% copy" % (100 * float(r["bytes"]) / ms / 1e6 / copy_gbps)
    return "-"


def device_of(banner):
    """The device a run's banner names, shortly ("H100", "H200"), or "host", with " (gated on)" where
    the run had OPENCUDNN_UNPROVEN=1."""
    gated = " (gated on)" if "OPENCUDNN_UNPROVEN=1" in banner else ""
    if "data on host" in banner:
        return "host" + gated
    m = re.search(r"data on (?:NVIDIA )?(\S+)", banner)
    return (m.group(1) if m else "-") + gated


def run_rows(ours_path, vendor_path, commit, date):
    """The rows of one run, in its order: {case: [cells]}."""
    banner, ours = read_tsv(ours_path)
    _, vendor = read_tsv(vendor_path)
    on_host = "data on host" in banner
    host_peak = host_peak_gflops(banner) if on_host else 0.0
    theirs = {r["name"]: r for r in vendor}
    copy_gbps = 0.0
    for r in ours:
        if r.get("suite") == "ceiling" and ok(r):
            copy_gbps = float(r["bytes"]) / float(r["ms"]) / 1e6
    rows = {}
    for r in ours:
        if r.get("suite") == "ceiling":
            continue
        v = theirs.get(r["name"])
        case = r["name"] + (" (host call)" if r.get("timing") == "host" else "") + (" (host)" if on_host else "")
        ratio = "%.2f" % (float(r["ms"]) / float(v["ms"])) if ok(r) and ok(v) else "-"
        rows[case] = [case, fmt_ms(r), fmt_ms(v), ratio, share(r, copy_gbps, host_peak), device_of(banner), commit,
                      date]
    return rows


def read_table(path):
    """The rows of an existing results table, in order: {case: [cells]}."""
    rows = {}
    if not path or not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not line.startswith("| ") or cells[0] == "case" or cells[0].startswith("-"):
                continue
            if len(cells) == LEGACY_COLUMNS:
                cells.insert(5, "host" if cells[0].endswith(" (host)") else "H200")
            if len(cells) == len(COLUMNS):
                rows[cells[0]] = cells
    return rows


def write_table(rows, path):
    out = [HEADER, "| " + " | ".join(COLUMNS) + " |", "|---|---:|---:|---:|---:|---|---|---|"]
    out += ["| " + " | ".join(cells) + " |" for cells in rows.values()]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def default_commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ours", required=True, help="opencudnn_bench --tsv output of ours")
    ap.add_argument("--vendor", help="the same of the vendor's library, when it ran")
    ap.add_argument("--commit", default=None, help="the commit measured (default: git's HEAD)")
    ap.add_argument("--date", default=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"))
    ap.add_argument("--table", default=os.path.join(here, "results.md"), help="the table to merge into")
    ap.add_argument("-o", "--out", help="where to write (default: --table)")
    a = ap.parse_args()
    new = run_rows(a.ours, a.vendor, a.commit or default_commit(), a.date)
    if not new:
        sys.exit("results.py: %s has no results" % a.ours)
    rows = read_table(a.table)
    for case, cells in new.items():
        rows[case] = cells
    write_table(rows, a.out or a.table)
    print("results.py: %d cases from this run, %d rows in %s" % (len(new), len(rows), a.out or a.table),
          file=sys.stderr)


if __name__ == "__main__":
    main()
