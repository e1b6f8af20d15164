#!/usr/bin/env python3
"""check_results.py: bench/results.py merges a run into the results table as it says, and
bench/run.sh joins a run's TSVs into its side-by-side table.

    check_results.py RESULTS_PY

A run of ours and the vendor's (a copy ceiling, a memory-bound case, a convolution, a failed
case and a host-call case) is merged into a table holding a row of that run and a row of
another: the run's rows are replaced, the other kept, and each cell is what the run gives
(ratio, share of the copy or of the GEMM ceiling, status, GPU, commit, date); rows written before the
GPU column read as the H200's. A host run's cases are
named with " (host)" and measured against the FMA peak of its banner.

The same run joined by run.sh -J (beside RESULTS_PY) shows ours impl column; with an A/B run
(OUT.unproven.tsv: ours with OPENCUDNN_UNPROVEN=1, one case served by another, faster entry, one
whose output differs) it adds the unproven time, its ratios to the vendor's and to ours, its impl,
names the run that differs, and the summary counts the cases the gated entries served otherwise;
a TSV from before the impl column reads as "-".
"""
import os
import subprocess
import sys
import tempfile

HEAD = "name\tsuite\ttiming\tstatus\tms\tbytes\tcheck\tproblem\tflops\timpl\n"
OK = "CUDNN_STATUS_SUCCESS"


def tsv(path, banner, rows, head=HEAD):
    """A bench TSV; rows without an impl cell get "-" (as the vendor's build writes)."""
    with open(path, "w") as f:
        f.write("# " + banner + "\n" + head)
        for r in rows:
            r = tuple(r) + ("-",) * (head.count("\t") + 1 - len(r))
            f.write("\t".join(str(c) for c in r) + "\n")


def joined(path):
    """run.sh's table: {case: {column: cell}}, and the summary line."""
    rows, names, summary = {}, None, ""
    with open(path) as f:
        for line in f:
            if line.startswith("summary:"):
                summary = line.strip()
            if not line.startswith("| "):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if names is None:
                names = cells
            elif not cells[0].startswith("-"):
                rows[cells[0]] = dict(zip(names, cells))
    return rows, summary


def table(path):
    rows = {}
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| ") and len(cells) == 8 and cells[0] != "case":
                rows[cells[0]] = cells
    return rows


def main():
    script = sys.argv[1]
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as d:
        ours, vendor, tab = (os.path.join(d, n) for n in ("ours.tsv", "vendor.tsv", "results.md"))
        gpu = "opencudnn: cuDNN 8202 (headers 8202), CUDA runtime 13010, data on NVIDIA H200 (sm_90, 132 SMs)"
        # copy: 4000 GB/s (2e9 bytes in 0.5 ms); relu: 1e9 bytes in 0.25 ms = 100% of it; the conv:
        # 386e9 flops in 1 ms = 386 TFLOP/s, half the f16 ceiling
        tsv(ours, gpu, [
            ("copy", "ceiling", "device", OK, 0.5, 2e9, "0,1", "op=copy dt=f32 y=1", 0),
            ("relu_fwd_f32", "nn", "device", OK, 0.25, 1e9, "0,1", "op=act dt=f32", 0),
            ("conv_f16", "resnet50", "device", OK, 1.0, 1e6, "0,1", "op=convfwd dt=f16 layout=nhwc", 386e9),
            ("broken", "nn", "device", "CUDNN_STATUS_NOT_SUPPORTED", -1, 0, "0,0", "op=act dt=f32", 0),
            ("latency", "resnet50", "host", OK, 0.004, 0, "0,1", "op=copy dt=f32 y=1", 0),
        ])
        tsv(vendor, gpu.replace("opencudnn", "vendor"), [
            ("copy", "ceiling", "device", OK, 0.5, 2e9, "0,1", "op=copy dt=f32 y=1", 0),
            ("relu_fwd_f32", "nn", "device", OK, 0.5, 1e9, "0,1", "op=act dt=f32", 0),
            ("conv_f16", "resnet50", "device", OK, 2.0, 1e6, "0,1", "op=convfwd dt=f16 layout=nhwc", 386e9),
            ("latency", "resnet50", "host", OK, 0.1, 0, "0,1", "op=copy dt=f32 y=1", 0),
        ])
        with open(tab, "w") as f:
            f.write("| case | ours ms | vendor ms | ratio | share of ceiling | commit | date |\n"
                    "|---|---:|---:|---:|---:|---|---|\n"
                    "| relu_fwd_f32 | 9 | 9 | 1.00 | 1% copy | old | 2000-01-01 |\n"
                    "| other_case | 1 | 2 | 0.50 | 50% copy | old | 2000-01-01 |\n")
        subprocess.run([sys.executable, script, "--ours", ours, "--vendor", vendor, "--table", tab, "--commit",
                        "abc1234", "--date", "2026-01-02"], check=True)
        rows = table(tab)
        check(rows.get("other_case", [""] * 7)[5:7] == ["H200", "old"],
              "a row of another run is kept, on the H200 as rows before the GPU column were")
        check(rows.get("relu_fwd_f32") == ["relu_fwd_f32", "0.25", "0.5", "0.50", "100% copy", "H200", "abc1234",
                                           "2026-01-02"], "relu_fwd_f32: %s" % rows.get("relu_fwd_f32"))
        check(rows.get("conv_f16", [""] * 5)[3:5] == ["0.50", "50% GEMM"], "conv_f16: %s" % rows.get("conv_f16"))
        check(rows.get("broken", [""] * 4)[1:4] == ["NOT_SUPPORTED", "-", "-"], "broken: %s" % rows.get("broken"))
        check(rows.get("latency (host call)", [""] * 5)[3:5] == ["0.04", "-"],
              "latency: %s" % rows.get("latency (host call)"))
        check("copy" not in rows, "the ceiling is no case")

        # run.sh's join of the same run, first without, then with the unproven run beside it
        run_sh = os.path.join(os.path.dirname(os.path.abspath(script)), "run.sh")
        base = os.path.join(d, "bench")

        def run_of_ours(relu_check, conv_ms, conv_impl):
            return [("copy", "ceiling", "device", OK, 0.5, 2e9, "0,1", "op=copy dt=f32 y=1", 0, "-"),
                    ("relu_fwd_f32", "nn", "device", OK, 0.25, 1e9, relu_check, "op=act dt=f32", 0, "cuda:act"),
                    ("conv_f16", "resnet50", "device", OK, conv_ms, 1e6, "0,1", "op=convfwd dt=f16 layout=nhwc",
                     386e9, conv_impl)]

        def join():
            subprocess.run(["bash", run_sh, "-J", "-o", base + ".md"], check=True, stdout=subprocess.DEVNULL)
            return joined(base + ".md")

        os.rename(vendor, base + ".vendor.tsv")
        tsv(base + ".ours.tsv", gpu, run_of_ours("0,1", 1.0, "cuda:fwd_a+cuda:gemm"))
        rows, summary = join()
        conv = rows.get("conv_f16", {})
        check(conv.get("ours impl") == "cuda:fwd_a+cuda:gemm" and conv.get("ratio") == "0.50"
              and "ours+unproven ms" not in conv, "run.sh, conv_f16: %s" % conv)
        check(rows.get("relu_fwd_f32", {}).get("check") == "ok", "run.sh, relu: %s" % rows.get("relu_fwd_f32"))
        tsv(base + ".unproven.tsv", gpu, run_of_ours("5,1", 0.5, "cuda:fwd_gated"))
        rows, summary = join()
        conv = rows.get("conv_f16", {})
        want = {"ours ms": "1", "ours+unproven ms": "0.5", "vendor ms": "2", "ratio": "0.50", "unproven ratio": "0.25",
                "unproven / ours": "0.50", "check": "ok", "ours impl": "cuda:fwd_a+cuda:gemm",
                "unproven impl": "cuda:fwd_gated"}
        check(all(conv.get(k) == v for k, v in want.items()), "run.sh -U, conv_f16: %s" % conv)
        check(rows.get("relu_fwd_f32", {}).get("check") == "DIFF (unproven)",
              "run.sh -U, relu: %s" % rows.get("relu_fwd_f32"))
        check("unproven served 1 cases otherwise, faster in 1" in summary, "run.sh -U summary: %s" % summary)
        check("over every case unproven/ours 0.71, faster by 3% or more in 1, slower in 0" in summary,
              "run.sh -U summary over every case: %s" % summary)
        tsv(base + ".ours.tsv", gpu, [("conv_f16", "resnet50", "device", OK, 1.0, 1e6, "0,1", "op=convfwd", 386e9)],
            head=HEAD.replace("\timpl", ""))
        rows, _ = join()
        check(rows.get("conv_f16", {}).get("ours impl") == "-", "run.sh, a TSV without impl: %s" % rows.get("conv_f16"))

        host = "opencudnn: cuDNN 8202 (headers 8202), CUDA runtime 0, data on host, fp32 FMA peak 100.0 GFLOP/s (2 ...)"
        tsv(ours, host, [("l1_b8", "resnet50_host", "device", OK, 10.0, 1e6, "0,1", "op=convfwd dt=f32", 5e8)])
        subprocess.run([sys.executable, script, "--ours", ours, "--table", tab, "--commit", "h", "--date", "d"],
                       check=True)
        rows = table(tab)
        check(rows.get("l1_b8 (host)", [""] * 6)[2:6] == ["-", "-", "50% FMA peak", "host"],
              "host: %s" % rows.get("l1_b8 (host)"))
        check("relu_fwd_f32" in rows, "a host run keeps the device rows")

        # a run with the gated entries on says so in its GPU cell
        tsv(ours, gpu + ", OPENCUDNN_UNPROVEN=1",
            [("relu_fwd_f32", "nn", "device", OK, 0.25, 1e9, "0,1", "op=act dt=f32", 0)])
        subprocess.run([sys.executable, script, "--ours", ours, "--table", tab, "--commit", "g", "--date", "d"],
                       check=True)
        check(table(tab).get("relu_fwd_f32", [""] * 6)[5] == "H200 (gated on)",
              "gated: %s" % table(tab).get("relu_fwd_f32"))

    for f in failures:
        print("FAILED: " + f)
    print("check_results: %d failed" % len(failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
