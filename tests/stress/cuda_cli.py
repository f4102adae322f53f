#!/usr/bin/env python3
"""The conformance cases through `toroid apply --device cuda`, several processes at once on
one GPU, each result checked against PyTorch's (uint8 equal, float32 within 1e-4, the
tolerance of tests/data/conformance/README.md). Run on a machine with a GPU:

    python3 tests/stress/cuda_cli.py [--toroid PATH] [--procs 8] [--rounds 3]

Exit 0 when every result of every round is right; the last line is `N passed, M failed`.
Each process is a fresh CLI run: it uploads its input and tables, compiles or loads its
kernels from the shared disk cache, launches, and copies back, while the others do the same.
--copy-load N adds N processes (PyTorch) that keep the GPU's copy engines busy with large
host-to-device copies the whole time, as a training job beside a loader does."""
import argparse
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def check(case_dir, out_path):
    want = np.load(os.path.join(case_dir, "expected.npy"))
    got = np.load(out_path)
    if got.shape != want.shape or got.dtype != want.dtype:
        return "shape/dtype %s %s, expected %s %s" % (got.shape, got.dtype, want.shape, want.dtype)
    if want.dtype == np.uint8:
        d = np.abs(got.astype(np.int32) - want.astype(np.int32))
        return None if d.max(initial=0) == 0 else "max |diff| %d at %d elements" % (d.max(), int((d > 0).sum()))
    if not np.array_equal(np.isnan(got), np.isnan(want)):
        return "NaN pattern differs"
    ok = ~np.isnan(want)
    d = np.abs(got[ok].astype(np.float64) - want[ok].astype(np.float64))
    return None if d.max(initial=0) <= 1e-4 else "max |diff| %g" % d.max()


def run_case(toroid, data, case, layout, tmp, rnd):
    case_dir = os.path.join(data, case)
    out = os.path.join(tmp, "%s_r%d.npy" % (case, rnd))
    cmd = [toroid, "apply", os.path.join(case_dir, "pipeline.json"), os.path.join(case_dir, "input.npy"), out,
           "--device", "cuda", "--layout", layout]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return case, "timed out"
    if p.returncode != 0:
        return case, "exit %d: %s" % (p.returncode, p.stderr.strip().splitlines()[-1:] or "")
    try:
        return case, check(case_dir, out)
    finally:
        os.remove(out)


COPY_LOAD = r"""
import sys, time, torch
x = torch.empty(256 << 20, dtype=torch.uint8).fill_(1)  # pageable, 256 MiB
y = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
end = time.time() + float(sys.argv[1])
while time.time() < end:
    y.copy_(x, non_blocking=True)
    torch.cuda.synchronize()
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--toroid", default=shutil.which("toroid") or os.path.join(ROOT, "build", "toroid"))
    ap.add_argument("--data", default=os.environ.get("TOROID_TEST_DATA", os.path.join(ROOT, "tests", "data")))
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--copy-load", type=int, default=0, metavar="N")
    a = ap.parse_args()
    loads = [subprocess.Popen([sys.executable, "-c", COPY_LOAD, "3600"]) for _ in range(a.copy_load)]
    data = os.path.join(a.data, "conformance")
    with open(os.path.join(data, "cases.json")) as f:
        cases = [(c["name"], c["input_layout"]) for c in json.load(f)["cases"]]
    passed = failed = 0
    tmp = tempfile.mkdtemp(prefix="toroid-cuda-cli-")
    try:
        for rnd in range(a.rounds):
            bad = []
            with cf.ThreadPoolExecutor(a.procs) as pool:
                for case, err in pool.map(lambda c: run_case(a.toroid, data, c[0], c[1], tmp, rnd), cases):
                    if err is None:
                        passed += 1
                    else:
                        failed += 1
                        bad.append("%s: %s" % (case, err))
            print("round %d: %d cases, %d processes at a time: %d wrong" % (rnd + 1, len(cases), a.procs, len(bad)))
            for b in bad:
                print("  " + b)
            sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        for p in loads:
            p.kill()
            p.wait()
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
