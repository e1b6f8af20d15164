#!/usr/bin/env python3
"""check_replay.py: a logged call replays in the benchmark.

The benchmark runs problems of several op kinds once with the library's info log on
(CUDNN_LOGINFO_DBG=1, to a file); every call that describes itself logs
`replay: opencudnn_bench --problem "<string>"`, and the strings found must be exactly the problem
strings given (the log and the benchmark share one spelling; a backward problem also logs the
training forward it runs on, whose string comes first; a graph problem's cudnnBackendExecute logs
its graph's string, the benchmark's graph ops being the graphs that have one). Then `opencudnn_bench --replay LOG`
must run each of them again, with fresh data, and succeed (--strict).

Usage: check_replay.py --bench PATH [--backend host|cuda]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

PROBLEMS = [
    "op=actfwd mode=relu dt=f32 x=2x3x5x5",
    "op=softmaxfwd algo=accurate mode=channel dt=f32 x=2x3x5x5",
    "op=poolfwd mode=max dt=f32 x=2x3x6x6 win=3 pad=1 stride=2",
    "op=bnfwdtrain mode=spatial dt=f32 x=2x3x5x5",
    "op=convfwd dt=f32 layout=nchw n=2 c=3 h=6 w=6 k=4 r=3 s=3 pad=1 stride=1 dil=1 algo=implicit_gemm math=default",
    "op=convbwdd dt=f32 layout=nchw n=2 c=3 h=6 w=6 k=4 r=3 s=3 pad=1 stride=2 dil=1 algo=algo_1 math=fma",
    "op=convfwd dt=i8 layout=nhwc n=2 c=4 h=6 w=6 k=4 r=3 s=3 pad=1 stride=1 dil=1 algo=implicit_precomp_gemm "
    "math=tensor_op ydt=f32",
    "op=convfwd dt=u8 layout=nhwc n=2 c=4 h=6 w=6 k=4 r=3 s=3 pad=1 stride=1 dil=1 algo=implicit_gemm "
    "math=tensor_op ydt=i8",
    "op=convfwd dt=i8x4 layout=nchw_vect_c n=2 c=8 h=6 w=6 k=4 r=3 s=3 pad=1 stride=1 dil=1 algo=implicit_gemm "
    "math=tensor_op",
    "op=rnn cell=lstm algo=standard dt=f32 t=3 n=2 input=4 hidden=5 layers=2 dirs=2 pass=inf wscale=1",
    "op=rnn cell=gru algo=persist_static dt=f32 t=3 n=2 input=4 hidden=5 layers=1 dirs=1 pass=fwd wscale=1",
    "op=rnn cell=tanh algo=standard dt=f32 t=3 n=2 input=4 hidden=5 layers=2 dirs=1 pass=bwd wscale=1",
    "op=mha dir=fwd dt=f32 b=2 heads=2 width=8 seq=5 proj=1",
    "op=mha dir=bwd dt=f32 b=2 heads=1 width=6 seq=4 proj=0",
    "op=ctc api=host dt=f32 t=8 n=2 a=5 labels=3",
    "op=ctc api=v8 dt=f32 t=8 n=2 a=5 labels=3",
    "op=convbiasact_graph dt=f32 layout=nchw n=2 c=3 h=6 w=6 k=4 r=3 s=3 pad=1 stride=1 dil=1 algo=auto",
    "op=convbiasact_graph dt=f16 layout=nhwc n=2 c=4 h=5 w=5 k=8 r=1 s=1 pad=0 stride=1 dil=1 algo=auto",
    "op=convscalebiasaddact_graph dt=f32 layout=nhwc n=2 c=3 h=6 w=6 k=4 r=3 s=3 pad=1 stride=2 dil=1 algo=auto",
    "op=convbiasscaleact_graph dt=f64 layout=nchw n=2 c=3 h=7 w=7 k=4 r=3 s=3 pad=0 stride=1 dil=2 algo=auto",
    "op=matmulbiasact_graph dt=f32 m=5 n=6 k=7 act=relu",
    "op=matmulbiasact_graph dt=f32 m=5 n=6 k=7 act=gelu",
    "op=scalebiasaddact_graph dt=f32 x=2x3x5x5:nhwc",
    "op=scalebiasaddact_graph dt=f64 x=2x3x4x5",
    "op=dgraddrelu_graph dt=f32 layout=nchw n=2 c=3 h=6 w=6 k=4 r=3 s=3 pad=1 stride=2 dil=1 algo=auto",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--backend", default="host")
    a = ap.parse_args()
    quick = ["--reps", "1", "--iters", "1", "--strict"]
    with tempfile.TemporaryDirectory(prefix="ocd_replay_") as tmp:
        log = os.path.join(tmp, "api.log")
        env = dict(os.environ, OPENCUDNN_BACKEND=a.backend, CUDNN_LOGINFO_DBG="1", CUDNN_LOGDEST_DBG=log)
        args = [a.bench] + quick
        for p in PROBLEMS:
            args += ["--problem", p]
        r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            print("the benchmark failed with logging on:\n" + r.stdout + r.stderr)
            return 1
        # a backward problem's training forward logs first (rnn pass=bwd: pass=fwd; mha dir=bwd: dir=fwd)
        expected = []
        for p in PROBLEMS:
            fwd = p.replace("pass=bwd", "pass=fwd").replace("dir=bwd", "dir=fwd")
            for q in ([fwd] if fwd != p else []) + [p]:
                if q not in expected:
                    expected.append(q)
        logged = []
        for m in re.finditer(r'replay: opencudnn_bench --problem "([^"]*)"', open(log).read()):
            if m.group(1) not in logged:
                logged.append(m.group(1))
        if logged != expected:
            print("the log's replay strings differ from the problems run:\n  logged: %s\n  run:    %s" % (
                "\n          ".join(logged), "\n          ".join(expected)))
            return 1
        env = dict(os.environ, OPENCUDNN_BACKEND=a.backend)
        r = subprocess.run([a.bench] + quick + ["--replay", log], env=env, capture_output=True, text=True,
                           timeout=300)
        replayed = [p for p in expected if p in r.stdout]
        if r.returncode != 0 or replayed != expected:
            print("--replay did not run every logged call (exit %d):\n%s%s" % (r.returncode, r.stdout, r.stderr))
            return 1
    print("check_replay: %d calls logged and replayed" % len(expected))
    return 0


if __name__ == "__main__":
    sys.exit(main())
