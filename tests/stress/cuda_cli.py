#!/usr/bin/env python3
"""The conformance cases through `toroid apply --device cuda`, several processes at once on
one GPU, each result checked against PyTorch's (uint8 equal, float32 within 1e-4, the
tolerance of tests/data/conformance/README.md). Run on a machine with a GPU:

    python3 tests/stress/cuda_cli.py [--toroid PATH] [--procs 8] [--rounds 3]

Exit 0 when every result of every round is right; the last line is `N passed, M failed`.
Each process is a fresh CLI run: it uploads its input and tables, compiles or loads its
kernels from the shared disk cache, launches, and copies back, while the others do the same.
--generated N adds N cases of large random images (720p to 4K, uint8 and float32, both
layouts, resizes, flips, crops, affines) whose expected results come from the CPU engine
(`toroid apply --device cpu`, exact against PyTorch on the conformance cases): large uploads
leave the widest window between a copy and the kernel that reads it.
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
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def check(case_dir, out_path, interpolates=False):
    """None when `out_path` holds the case's expected result at the tolerances of
    tests/conformance (interpolates: a 16-bit image through a resize, warp or blur computed in
    float32, whose sums may round to the other side of a tie: integers within 1, float16
    within one unit in the last place)."""
    want = np.load(os.path.join(case_dir, "expected.npy"))
    got = np.load(out_path)
    if got.shape != want.shape or got.dtype != want.dtype:
        return "shape/dtype %s %s, expected %s %s" % (got.shape, got.dtype, want.shape, want.dtype)
    if want.dtype.kind == "u":
        d = np.abs(got.astype(np.int32) - want.astype(np.int32))
        return None if d.max(initial=0) <= (1 if interpolates else 0) else \
            "max |diff| %d at %d elements" % (d.max(), int((d > 0).sum()))
    if want.dtype == np.float16:
        g, w = got.astype(np.float64), want.astype(np.float64)
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        with np.errstate(invalid="ignore", over="ignore"):  # inf and NaN elements are judged by `same`
            near = np.abs(g - w) <= np.maximum(np.spacing(np.abs(want)).astype(np.float64), 1e-4)
        return None if (same | near).all() else "max |diff| %g" % np.nanmax(np.abs(g - w))
    if not np.array_equal(np.isnan(got), np.isnan(want)):
        return "NaN pattern differs"
    ok = ~np.isnan(want)
    d = np.abs(got[ok].astype(np.float64) - want[ok].astype(np.float64))
    return None if d.max(initial=0) <= 1e-4 else "max |diff| %g" % d.max()


def run_case(toroid, data, case, layout, tmp, rnd, interpolates=False):
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
        return case, check(case_dir, out, interpolates)
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


GENERATED_OPS = [
    [{"op": "resize", "mode": "bilinear", "antialias": True, "size": [224, 224]}],
    [{"op": "resize", "mode": "bicubic", "antialias": True, "smaller_edge": 256}, {"op": "center_crop", "size": 224}],
    [{"op": "resize", "mode": "nearest-exact", "scale_factor": [2.0, 2.0]}],
    [{"op": "flip", "dims": [-1]}],
    [{"op": "flip", "dims": [-2]}],
    [{"op": "crop", "top": 17, "left": 33, "height": 600, "width": 700},
     {"op": "resize", "mode": "bilinear", "size": [300, 350]}],
    [{"op": "resize", "mode": "bilinear", "size": [480, 640]}, {"op": "convert", "dtype": "float32", "scale": True},
     {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}],
]
AFFINE = [{"op": "affine", "theta": [[0.9, 0.2, 0.05], [-0.15, 1.1, -0.1]], "mode": "bilinear",
           "padding_mode": "border"}]


def generate(toroid, root, n, seed=7):
    """n cases under root/ (the conformance layout), expected results from the CPU engine."""
    rng = np.random.default_rng(seed)
    cases, jobs = [], []
    for i in range(n):
        name = "gen%03d" % i
        d = os.path.join(root, name)
        os.makedirs(d)
        h, w = [(720, 1280), (1080, 1920), (1536, 2048), (2160, 3840)][i % 4]
        ops = GENERATED_OPS[i % len(GENERATED_OPS)]
        dtype = "uint8" if (i // 2) % 2 == 0 else "float32"
        if i % 9 == 8:
            ops, dtype = AFFINE, "float32"
        if ops[-1]["op"] == "normalize" and dtype == "float32":
            ops = ops[:1] + ops[2:]
        x = rng.integers(0, 256, (1, 3, h, w), dtype=np.uint8)
        if dtype == "float32":
            x = x.astype(np.float32) + rng.random(x.shape, dtype=np.float32)
        layout = "channels_last" if i % 2 else "contiguous"
        np.save(os.path.join(d, "input.npy"), x)
        with open(os.path.join(d, "pipeline.json"), "w") as f:
            json.dump(ops, f)
        jobs.append([toroid, "apply", os.path.join(d, "pipeline.json"), os.path.join(d, "input.npy"),
                     os.path.join(d, "expected.npy"), "--layout", layout])
        cases.append((name, layout))
    with cf.ThreadPoolExecutor(os.cpu_count() or 4) as pool:
        for cmd, p in zip(jobs, pool.map(lambda c: subprocess.run(c, capture_output=True, text=True), jobs)):
            if p.returncode != 0:
                raise SystemExit("cannot make %s: %s" % (cmd[2], p.stderr.strip()))
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--toroid", default=shutil.which("toroid") or os.path.join(ROOT, "build", "toroid"))
    ap.add_argument("--data", default=os.environ.get("TOROID_TEST_DATA", os.path.join(ROOT, "tests", "data")))
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--copy-load", type=int, default=0, metavar="N")
    ap.add_argument("--generated", type=int, default=0, metavar="N")
    ap.add_argument("--no-conformance", action="store_true", help="only the generated cases")
    a = ap.parse_args()
    loads = [subprocess.Popen([sys.executable, "-c", COPY_LOAD, "3600"]) for _ in range(a.copy_load)]
    data = os.path.join(a.data, "conformance")
    with open(os.path.join(data, "cases.json")) as f:
        listed = json.load(f)["cases"]
    # bfloat16 cases are stored as float32 (.npy has no bfloat16, so the CLI cannot read them):
    # tests/conformance runs them on the cuda engine.
    cases = [] if a.no_conformance else [
        (c["name"], c["input_layout"], c.get("dtype") in ("uint16", "float16") and any(
            (op["op"] == "resize" and op.get("mode") in ("bilinear", "bicubic")) or
            op["op"] in ("perspective", "affine", "gaussian_blur") for op in c["pipeline"]))
        for c in listed if c.get("dtype") != "bfloat16" and c.get("expected_dtype") != "bfloat16"]
    passed = failed = 0
    tmp = tempfile.mkdtemp(prefix="toroid-cuda-cli-")
    try:
        if a.generated:
            gen = os.path.join(tmp, "generated")
            cases += [(os.path.join(gen, name), layout, False) for name, layout in generate(a.toroid, gen, a.generated)]
        for rnd in range(a.rounds):
            began = time.monotonic()
            bad = []
            with cf.ThreadPoolExecutor(a.procs) as pool:
                for case, err in pool.map(lambda c: run_case(a.toroid, data, c[0], c[1], tmp, rnd, c[2]), cases):
                    if err is None:
                        passed += 1
                    else:
                        failed += 1
                        bad.append("%s: %s" % (case, err))
            print("round %d: %d cases, %d processes at a time: %d wrong (%.0f s)" %
                  (rnd + 1, len(cases), a.procs, len(bad), time.monotonic() - began))
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
