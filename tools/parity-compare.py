#!/usr/bin/env python3
"""parity-compare.py: runs the parity probe (bench/parity.c) against opencudnn and against the
vendor's cuDNN, and prints one markdown table row per probe: what each library answered and
whether they agree.

  tools/parity-compare.py --ours PROG_OR_TSV [--host] [--vendor PROG_OR_TSV]
                          [--vendor-libdirs DIRS] [-o DIR] [--rtol R] [--atol A] [--check-complete]

A PROG is run (a path ending in .tsv is read instead: results brought back from elsewhere): each
probe prints one line, and where a probe kills the program (a crash inside a library) the program
is started again after it, that probe reported as CRASHED. Every run has NVIDIA_TF32_OVERRIDE=0,
so that no library rounds float products to TF32. --host also runs ours on its host backend
(OPENCUDNN_BACKEND=host) and adds a column judging that against the vendor's. The vendor's program
runs with DIRS (colon-separated) first on LD_LIBRARY_PATH. -o DIR keeps the raw lines as
DIR/parity.ours.tsv, parity.host.tsv and parity.vendor.tsv.

Verdicts, ours against the vendor's:
  same             same status and, where it succeeded, every output within atol + rtol |vendor|
                   (default 1e-5 and 1e-4); sizes and settings (info_ keys) are shown, not judged
  STATUS DIFFERS   the statuses differ (cuDNN 9's sub-codes, such as BAD_PARAM_NULL_POINTER, count
                   as their cuDNN 8 status, BAD_PARAM)
  VALUES DIFFER    both succeeded, some output is further apart (the worst key is named)
  absent in vendor the vendor's program has no line for the probe
After the table, each probe that is not `same` shows its outputs' worst elements side by side,
and the vendor's own error message where cuDNN 9 gave one.
--check-complete exits 1 unless ours printed a line for every probe and none crashed (the test
suite's check); otherwise the exit status is 0 once the programs ran, whatever they answered.
"""
import argparse
import math
import os
import subprocess
import sys

CUDNN8_STATUSES = [
    "SUCCESS", "NOT_INITIALIZED", "ALLOC_FAILED", "BAD_PARAM", "INTERNAL_ERROR", "INVALID_VALUE",
    "ARCH_MISMATCH", "MAPPING_ERROR", "EXECUTION_FAILED", "NOT_SUPPORTED", "LICENSE_ERROR",
    "RUNTIME_PREREQUISITE_MISSING", "RUNTIME_IN_PROGRESS", "RUNTIME_FP_OVERFLOW", "VERSION_MISMATCH",
]


def short(status):
    """CUDNN_STATUS_BAD_PARAM -> BAD_PARAM (in SETUP:call:status too)."""
    return status.replace("CUDNN_STATUS_", "")


def base(status):
    """A status with cuDNN 9's sub-code folded into its cuDNN 8 status."""
    s = short(status)
    head, _, tail = s.rpartition(":")
    best = max((n for n in CUDNN8_STATUSES if tail == n or tail.startswith(n + "_")), key=len, default=tail)
    return head + ":" + best if head else best


def parse_line(line):
    """name, {"status", "outputs": {key: [floats]}, "info": {...}, "note": str}"""
    fields = line.rstrip("\n").split("\t")
    probe = {"status": fields[1] if len(fields) > 1 else "NO STATUS", "outputs": {}, "info": {}, "note": ""}
    for f in fields[2:]:
        if f.startswith("#"):
            probe["note"] = f[1:]
            continue
        key, _, values = f.partition("=")
        key = key.rstrip("~")  # a summary (sums, then first values) compares like values
        name = key.split("[")[0]
        nums = [float(v) for v in values.split(",") if v]
        (probe["info"] if name.startswith("info_") else probe["outputs"])[key] = nums
    return fields[0], probe


def read_tsv(path):
    with open(path) as f:
        return dict(parse_line(line) for line in f if line.strip())


def run_program(prog, env, raw_path):
    """Runs every probe of prog, restarting it after a probe that kills it."""
    names = subprocess.run([prog, "--list"], env=env, capture_output=True, text=True, check=True).stdout.split()
    lines, start = [], 0
    while start < len(names):
        try:
            p = subprocess.run([prog, "--from", str(start)], env=env, capture_output=True, text=True, timeout=60)
            out, rc, err = p.stdout, p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, err = "timeout", ""
        done = [line for line in out.splitlines() if line.strip()]
        lines += done
        start += len(done)
        if rc == 0:
            break
        if start < len(names):
            why = f"signal {-rc}" if isinstance(rc, int) and rc < 0 else f"exit {rc}"
            tail = " ".join(err.strip().splitlines()[-1:])
            lines.append(f"{names[start]}\tCRASHED ({why})\t#{tail}")
            start += 1
    if raw_path:
        with open(raw_path, "w") as f:
            f.write("".join(line + "\n" for line in lines))
    return dict(parse_line(line) for line in lines)


def load(source, env, raw_path):
    if source.endswith(".tsv"):
        return read_tsv(source)
    return run_program(source, env, raw_path)


def differences(a, b):
    """Per output key: (max abs, max rel, index) of a against reference b; None for a shape mismatch."""
    result = {}
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b or len(a[key]) != len(b[key]):
            result[key] = None
            continue
        worst = (0.0, 0.0, -1)
        for i, (x, y) in enumerate(zip(a[key], b[key])):
            if math.isnan(x) and math.isnan(y):
                continue
            d = abs(x - y) if not (math.isnan(x) or math.isnan(y)) else math.inf
            r = d / abs(y) if y else (0.0 if d == 0 else math.inf)
            if d > worst[0] or (d == worst[0] and r > worst[1]):
                worst = (d, r, i)
        result[key] = worst
    return result


def judge(ours, vendor, rtol, atol):
    """(verdict, max abs, max rel, worst key)."""
    if vendor is None:
        return "absent in vendor", None, None, None
    if ours is None:
        return "absent in ours", None, None, None
    if base(ours["status"]) != base(vendor["status"]):
        return "STATUS DIFFERS", None, None, None
    if short(vendor["status"]) != "SUCCESS":
        sub = "" if ours["status"] == vendor["status"] else f" (vendor's sub-code {short(vendor['status'])})"
        return "same" + sub, None, None, None
    diffs = differences(ours["outputs"], vendor["outputs"])
    bad = [k for k, d in diffs.items() if d is None]
    if bad:
        return f"OUTPUTS DIFFER ({bad[0]}: missing or another size)", None, None, bad[0]
    max_abs = max((d[0] for d in diffs.values()), default=0.0)
    max_rel = max((d[1] for d in diffs.values()), default=0.0)
    worst_key, worst = None, 0.0
    for key, (d, _, i) in diffs.items():
        if i < 0:
            continue
        excess = d - (atol + rtol * abs(vendor["outputs"][key][i])) if math.isfinite(d) else math.inf
        if excess > worst:
            worst_key, worst = key, excess
    verdict = "same" if worst_key is None else f"VALUES DIFFER ({worst_key})"
    if ours["info"] != vendor["info"]:
        verdict += "; info differs"
    return verdict, max_abs, max_rel, worst_key


def fmt(v):
    return "-" if v is None else f"{v:.2g}"


def detail(name, ours, vendor, worst_key, label):
    """Lines showing where a probe's outputs part."""
    lines = [f"- **{name}** ({label}): ours {short(ours['status']) if ours else '-'}, "
             f"vendor {short(vendor['status']) if vendor else '-'}"]
    if ours and vendor:
        for key, d in differences(ours["outputs"], vendor["outputs"]).items():
            if d is None:
                lines.append(f"  - {key}: ours {ours['outputs'].get(key, 'none')!s:.200}; "
                             f"vendor {vendor['outputs'].get(key, 'none')!s:.200}")
            elif key == worst_key or d[0] > 0:
                i = d[2]
                lo, hi = max(0, i - 2), i + 3
                lines.append(f"  - {key}: max abs {d[0]:.3g} at [{i}]: ours {ours['outputs'][key][lo:hi]} "
                             f"vendor {vendor['outputs'][key][lo:hi]} (from [{lo}])")
        for key in sorted(set(ours["info"]) | set(vendor["info"])):
            if ours["info"].get(key) != vendor["info"].get(key):
                lines.append(f"  - {key}: ours {ours['info'].get(key)} vendor {vendor['info'].get(key)}")
    for who, p in (("ours", ours), ("vendor", vendor)):
        if p and p["note"]:
            lines.append(f"  - {who}'s message: {p['note'][:300]}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ours", required=True)
    ap.add_argument("--host", action="store_true")
    ap.add_argument("--vendor")
    ap.add_argument("--vendor-libdirs", default="")
    ap.add_argument("-o", dest="out_dir")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--check-complete", action="store_true")
    args = ap.parse_args()

    env = dict(os.environ, NVIDIA_TF32_OVERRIDE="0")
    raw = (lambda who: os.path.join(args.out_dir, f"parity.{who}.tsv")) if args.out_dir else (lambda who: None)
    if args.out_dir:
        os.makedirs(args.out_dir, exist_ok=True)
    ours = load(args.ours, env, raw("ours"))
    host = load(args.ours, dict(env, OPENCUDNN_BACKEND="host"), raw("host")) if args.host else None
    vendor = None
    if args.vendor:
        venv = dict(env)
        if args.vendor_libdirs:
            venv["LD_LIBRARY_PATH"] = args.vendor_libdirs + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        vendor = load(args.vendor, venv, raw("vendor"))

    names = list(ours) + [n for n in (vendor or {}) if n not in ours]
    head = "| probe | ours | vendor | max abs | max rel | verdict |" + (" host verdict |" if host else "")
    print(head)
    print("|" + "---|" * head.count(" |"))
    details, counts = [], {}
    for name in names:
        o, v = ours.get(name), (vendor or {}).get(name)
        if vendor is None:
            verdict, max_abs, max_rel, worst = "-", None, None, None
        else:
            verdict, max_abs, max_rel, worst = judge(o, v, args.rtol, args.atol)
            counts[verdict.split(" (")[0].split(";")[0]] = counts.get(verdict.split(" (")[0].split(";")[0], 0) + 1
            if verdict != "same":
                details += detail(name, o, v, worst, verdict)
        row = (f"| {name} | {short(o['status']) if o else '-'} | {short(v['status']) if v else '-'} | "
               f"{fmt(max_abs)} | {fmt(max_rel)} | {verdict} |")
        if host is not None:
            h = host.get(name)
            hv = judge(h, v, args.rtol, args.atol)[0] if vendor is not None else (short(h["status"]) if h else "-")
            row += f" {hv} |"
        print(row)
    if vendor is not None:
        print("\nsummary: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    if details:
        print("\n## Where they part\n")
        print("\n".join(details))

    if args.check_complete:
        listed = subprocess.run([args.ours, "--list"], capture_output=True, text=True, check=True).stdout.split()
        missing = [n for n in listed if n not in ours or ours[n]["status"].startswith("CRASHED")]
        if missing:
            print(f"parity-compare: no result from ours for {', '.join(missing)}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
