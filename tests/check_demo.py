#!/usr/bin/env python3
"""check_demo.py LIBDIR: tools/cudnn_demo.py names the sub-library that cannot be loaded.

Copies the front and five of its six sub-libraries (cnn_infer left out) into a new directory, runs
the demo on that copy and expects it to fail naming libcudnn_cnn_infer.so.8 and the directory,
and libcudnn_cnn_train.so.8, which needs it, and no other."""
import os
import shutil
import subprocess
import sys
import tempfile

libdir = sys.argv[1]
demo = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "cudnn_demo.py")
names = ["libcudnn.so.8"] + ["libcudnn_%s.so.8" % s for s in
                             ("ops_infer", "ops_train", "cnn_train", "adv_infer", "adv_train")]
with tempfile.TemporaryDirectory(prefix="ocd_demo_") as tmp:
    for n in names:
        shutil.copy(os.path.join(libdir, n), tmp)  # the file a soname link points at
    env = dict(os.environ, OPENCUDNN_BACKEND="host")
    env.pop("LD_LIBRARY_PATH", None)
    r = subprocess.run([sys.executable, demo, "--lib", tmp], capture_output=True, text=True, env=env, timeout=120)
    out = r.stdout
    want = "sub-library libcudnn_cnn_infer.so.8 failed to load"
    failed = sorted(line.split()[1] for line in out.splitlines() if line.startswith("sub-library "))
    ok = (r.returncode == 1 and want in out and tmp in out
          and failed == ["libcudnn_cnn_infer.so.8", "libcudnn_cnn_train.so.8"])
    print(out)
    print("check_demo: " + ("ok" if ok else "FAILED: expected exit 1, '%s ... %s' and cnn_train" % (want, tmp)))
    sys.exit(0 if ok else 1)
