#!/usr/bin/env python3
"""The Python API on CUDA tensors under load: K processes × T threads, each running random
pipelines on random images (new sizes, so new preparations and table uploads, as well as
cached ones), on its own CUDA stream or the default one, every result checked against the
same pipeline on the CPU (uint8 equal, float32 within 1e-4 relative). Needs PyTorch with
CUDA. Run on a machine with a GPU:

    python3 tests/stress/cuda_python.py [--procs 6] [--threads 4] [--iters 60]

The last line is `N passed, M failed`; exit 0 when every result matched."""
import argparse
import multiprocessing as mp
import os
import random
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))


def random_pipeline(rng, dtype):
    h, w = rng.randint(32, 300), rng.randint(32, 300)
    size = [rng.randint(8, 260), rng.randint(8, 260)]
    kind = rng.choice(["resize", "resize_aa", "flip", "crop_resize", "eval", "nearest", "affine"])
    if kind == "resize":
        ops = [{"op": "resize", "mode": rng.choice(["bilinear", "bicubic"]), "size": size,
                "align_corners": rng.random() < 0.3}]
    elif kind == "resize_aa":
        ops = [{"op": "resize", "mode": rng.choice(["bilinear", "bicubic"]), "antialias": True, "size": size}]
    elif kind == "nearest":
        ops = [{"op": "resize", "mode": rng.choice(["nearest", "nearest-exact"]), "size": size}]
    elif kind == "flip":
        ops = [{"op": "flip", "dims": rng.choice([[-1], [-2], [-2, -1]])}]
    elif kind == "crop_resize":
        t, l = rng.randint(0, h // 2), rng.randint(0, w // 2)
        ops = [{"op": "crop", "top": t, "left": l, "height": rng.randint(4, h - t), "width": rng.randint(4, w - l)},
               {"op": "resize", "mode": "bilinear", "antialias": True, "size": size},
               {"op": "flip", "dims": [-1]}]
    elif kind == "eval":
        ops = [{"op": "resize", "mode": "bilinear", "antialias": True, "smaller_edge": rng.randint(16, 256)},
               {"op": "center_crop", "size": rng.randint(8, 224)}]
        if dtype == "uint8":
            ops.append({"op": "convert", "dtype": "float32", "scale": True})
        ops.append({"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]})
    else:
        a = rng.uniform(-0.4, 0.4)
        ops = [{"op": "affine", "theta": [[1 + a, a / 2, rng.uniform(-0.2, 0.2)], [-a / 3, 1 - a, rng.uniform(-0.2, 0.2)]],
                "mode": rng.choice(["bilinear", "nearest", "bicubic"]),
                "padding_mode": rng.choice(["zeros", "border", "reflection"])}]
        dtype = "float32"  # the PyTorch convention samples float32 images
    return ops, (rng.randint(1, 3), 3, h, w), dtype


def worker(proc, threads, iters, seed, out):
    import numpy as np
    import torch
    import toroid
    results = {"passed": 0, "failed": 0, "errors": []}
    lock = threading.Lock()

    def body(t):
        rng = random.Random(seed * 1000 + proc * 100 + t)
        stream = torch.cuda.Stream() if t % 2 else None  # half the threads on their own stream
        for i in range(iters):
            dtype = rng.choice(["uint8", "float32"])
            ops, shape, dtype = random_pipeline(rng, dtype)
            g = np.random.default_rng(rng.randrange(1 << 30))
            x = (g.integers(0, 256, shape, dtype=np.uint8) if dtype == "uint8"
                 else (g.random(shape, dtype=np.float32) * 255))
            if rng.random() < 0.5:
                x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)  # channels-last
            p = toroid.Pipeline(ops)
            try:
                want = p(x)
                xc = torch.from_numpy(x).cuda()
                if stream is not None:
                    stream.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(stream):
                        got = p(xc)
                    stream.synchronize()
                else:
                    got = p(xc)
                got = got.cpu().numpy()
                if got.shape != want.shape or got.dtype != want.dtype:
                    err = "shape/dtype %s %s vs %s %s" % (got.shape, got.dtype, want.shape, want.dtype)
                elif want.dtype == np.uint8:
                    d = np.abs(got.astype(np.int32) - want.astype(np.int32)).max(initial=0)
                    err = None if d == 0 else "max |diff| %d" % d
                else:
                    d = (np.abs(got.astype(np.float64) - want) / np.maximum(1.0, np.abs(want))).max(initial=0)
                    err = None if d <= 1e-4 else "max rel diff %g" % d
            except Exception as e:  # a failure to run is a failure too
                err = "%s: %s" % (type(e).__name__, e)
            with lock:
                if err is None:
                    results["passed"] += 1
                else:
                    results["failed"] += 1
                    results["errors"].append("proc %d thread %d iter %d %s %s: %s" % (proc, t, i, shape, ops, err))

    ts = [threading.Thread(target=body, args=(t,)) for t in range(threads)]
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    out.put(results)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=6)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    ctx = mp.get_context("spawn")  # CUDA does not survive fork
    q = ctx.Queue()
    ps = [ctx.Process(target=worker, args=(i, a.threads, a.iters, a.seed, q)) for i in range(a.procs)]
    for p in ps:
        p.start()
    passed = failed = 0
    for _ in ps:
        r = q.get()
        passed += r["passed"]
        failed += r["failed"]
        for e in r["errors"][:20]:
            print(e)
    for p in ps:
        p.join()
        if p.exitcode != 0:
            failed += 1
            print("a process exited with %d" % p.exitcode)
    print("%d processes x %d threads x %d iterations" % (a.procs, a.threads, a.iters))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
