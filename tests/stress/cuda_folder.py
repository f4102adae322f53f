#!/usr/bin/env python3
"""Folder mode on one GPU from several processes at once: `toroid apply IN OUT --device cuda`
with --decode exact (every result must equal the CPU folder run's file, byte for byte) and
with --decode fast (nvJPEG: every result must equal the file of a fast run made alone before,
byte for byte; against the CPU run the same files, shapes and dtypes), PROCS processes of
each at the same time. Run on a machine with a GPU:

    python3 tests/stress/cuda_folder.py --toroid PATH --folder DIR [--procs 4] [--pipeline JSON]

DIR is a folder of images (bench/jpeg_loader.py --make-folder makes one from real photos).
Exit 0 when every process wrote every file the CPU run wrote, right, and failed where it failed; the last line is `N passed, M failed`."""
import argparse
import concurrent.futures as cf
import os
import subprocess
import sys
import tempfile

import numpy as np

PIPELINE = ('[{"op": "resize", "smaller_edge": 256, "mode": "bilinear", "antialias": true},'
            ' {"op": "center_crop", "size": 224}]')


def files_under(root):
    out = []
    for base, _, names in os.walk(root):
        out += [os.path.relpath(os.path.join(base, n), root) for n in names]
    return sorted(out)


def apply(toroid, pipeline, src, dst, extra):
    cmd = [toroid, "apply", pipeline, src, dst, "--format", "npy"] + extra
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return p.returncode, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--toroid", default="toroid")
    ap.add_argument("--folder", required=True)
    ap.add_argument("--procs", type=int, default=4)
    ap.add_argument("--pipeline", default=PIPELINE)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="toroid_cuda_folder_")
    ref = os.path.join(tmp, "cpu")
    cpu_rc, text = apply(a.toroid, a.pipeline, a.folder, ref, ["--device", "cpu"])
    if cpu_rc not in (0, 1):  # 1: some files failed (or clash), the same ones must fail on the GPU
        print(text)
        print("0 passed, 1 failed (the CPU run)")
        return 1
    want = files_under(ref)
    alone = os.path.join(tmp, "fast_alone")
    rc, text = apply(a.toroid, a.pipeline, a.folder, alone, ["--device", "cuda", "--decode", "fast"])
    if rc != cpu_rc:
        print(text)
        print("0 passed, 1 failed (the fast run alone)")
        return 1
    runs = [("exact", k) for k in range(a.procs)] + [("fast", k) for k in range(a.procs)]
    with cf.ThreadPoolExecutor(len(runs)) as ex:
        futs = {ex.submit(apply, a.toroid, a.pipeline, a.folder, os.path.join(tmp, "%s%d" % r),
                          ["--device", "cuda", "--decode", r[0], "--jobs", "4"]): r for r in runs}
        done = {futs[f]: f.result() for f in cf.as_completed(futs)}
    passed = failed = 0
    for (mode, k), (rc, text) in sorted(done.items()):
        out = os.path.join(tmp, "%s%d" % (mode, k))
        problems = []
        if rc != cpu_rc:
            problems.append("exit %d (the CPU run: %d): %s" % (rc, cpu_rc, text.strip().splitlines()[-1:]))
        got = files_under(out) if os.path.isdir(out) else []
        if got != want:
            problems.append("%d files, the CPU run wrote %d" % (len(got), len(want)))
        worst = 0.0
        for f in set(got) & set(want):
            a_, b_ = np.load(os.path.join(ref, f)), np.load(os.path.join(out, f))
            if a_.shape != b_.shape or a_.dtype != b_.dtype:
                problems.append("%s: %s %s, CPU %s %s" % (f, b_.shape, b_.dtype, a_.shape, a_.dtype))
                continue
            d = np.abs(a_.astype(np.float64) - b_.astype(np.float64))
            if mode == "exact" and d.max(initial=0) != 0:
                problems.append("%s: max |diff| %g against the CPU run" % (f, d.max()))
            if mode == "fast" and not np.array_equal(b_, np.load(os.path.join(alone, f))):
                problems.append("%s: differs from the fast run made alone" % f)
            worst = max(worst, float(d.mean()) if d.size else 0.0)
        if problems:
            failed += 1
            print("%s #%d: FAILED: %s" % (mode, k, "; ".join(problems[:5])))
        else:
            passed += 1
            print("%s #%d: %d files right (worst mean |diff| %.3f)" % (mode, k, len(got), worst))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
