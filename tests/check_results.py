#!/usr/bin/env python3
"""check_results.py: bench/results.py merges a run into the results table as it says.

    check_results.py RESULTS_PY

A run of ours and the vendor's (a copy ceiling, a memory-bound case, a convolution, a failed
case and a host-call case) is merged into a table holding a row of that run and a row of
another: the run's rows are replaced, the other kept, and each cell is what the run gives
(ratio, share of the copy or of the GEMM ceiling, status, GPU, commit, date); rows written before the
GPU column read as the H200's. A host run's cases are
named with " (host)" and measured against the FMA peak of its banner.
"""
import os
import subprocess
import sys
import tempfile

HEAD = "name\tsuite\ttiming\tstatus\tms\tbytes\tcheck\tproblem\tflops\n"
OK = "CUDNN_STATUS_SUCCESS"


def tsv(path, banner, rows):
    with open(path, "w") as f:
        f.write("# " + banner + "\n" + HEAD)
        for r in rows:
            f.write("\t".join(str(c) for c in r) + "\n")


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

        host = "opencudnn: cuDNN 8202 (headers 8202), CUDA runtime 0, data on host, fp32 FMA peak 100.0 GFLOP/s (2 ...)"
        tsv(ours, host, [("l1_b8", "resnet50_host", "device", OK, 10.0, 1e6, "0,1", "op=convfwd dt=f32", 5e8)])
        subprocess.run([sys.executable, script, "--ours", ours, "--table", tab, "--commit", "h", "--date", "d"],
                       check=True)
        rows = table(tab)
        check(rows.get("l1_b8 (host)", [""] * 6)[2:6] == ["-", "-", "50% FMA peak", "host"],
              "host: %s" % rows.get("l1_b8 (host)"))
        check("relu_fwd_f32" in rows, "a host run keeps the device rows")

    for f in failures:
        print("FAILED: " + f)
    print("check_results: %d failed" % len(failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
