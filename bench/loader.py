#!/usr/bin/env python3
"""Loader benchmark: the ImageNet eval transform (Resize(256) by the smaller edge, bilinear
with antialias -> CenterCrop(224) -> float32 scaled -> Normalize) over N decoded-JPEG-like
images of random sizes, as a data loader sees them. Times toroid's engines (compiles
included, from a fresh kernel cache) one image per call and in list batches, and
torchvision.transforms.v2 where it is importable; checks every result against an oracle.
The prebuilt catalogue (presets/, built with toroid) serves this transform's programs where
the library finds it; --no-prebuilt leaves it out (every program compiled on first use)."""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import benchenv

benchenv.system_python("loader", ["numpy"], "python3-numpy")
import numpy as np  # noqa: E402

ROOT = benchenv.ROOT
MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]
TOLERANCE = 1e-4
OPS = [{"op": "resize", "mode": "bilinear", "antialias": True, "smaller_edge": 256},
       {"op": "center_crop", "size": 224},
       {"op": "convert", "dtype": "float32", "scale": True},
       {"op": "normalize", "mean": MEAN, "std": STD}]


def make_images(n, seed, lo=180, hi=900):
    """N HWC uint8 images of random sizes (lo..hi per side): smooth gradients and a few
    low-frequency waves per channel plus noise, like decoded photos rather than pure noise."""
    rng = np.random.default_rng(seed)
    images = []
    for _ in range(n):
        h, w = (int(v) for v in rng.integers(lo, hi + 1, size=2))
        y = np.linspace(0.0, 1.0, h, dtype=np.float32)[:, None]
        x = np.linspace(0.0, 1.0, w, dtype=np.float32)[None, :]
        chans = []
        for _c in range(3):
            a, b, f, g, p = rng.uniform(-1, 1, size=5).astype(np.float32)
            base = 128 + 60 * a * y + 60 * b * x + 40 * np.sin(6.0 * f * x + 5.0 * g * y + 3.0 * p)
            chans.append(base)
        img = np.stack(chans, axis=-1) + rng.normal(0.0, 12.0, size=(h, w, 3)).astype(np.float32)
        images.append(np.clip(np.rint(img), 0, 255).astype(np.uint8))
    return images


def count_entries(cache_dir):
    """Compiled modules in a kernel cache folder: entries holding a kernel.so."""
    if not os.path.isdir(cache_dir):
        return set()
    return {e for e in os.listdir(cache_dir)
            if not e.startswith(".") and e != "failed" and os.path.exists(os.path.join(cache_dir, e, "kernel.so"))}


# ---- worker: one toroid engine and mode in its own process ----------------------------------
# toroid's kernel cache (memory and disk) lives for the process, so each (engine, mode) runs
# in a fresh process: every compile it needs is in its total.

def worker(args):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import toroid
    images = make_images(args.n, args.seed)
    views = [im.transpose(2, 0, 1) for im in images]  # CHW views of HWC memory: no copy
    cache_dir = os.environ["TOROID_CACHE_DIR"]
    before = count_entries(cache_dir)
    t0 = time.perf_counter()
    pipe = toroid.Pipeline(OPS, engine=args.worker_engine, threads=args.threads)
    first = None
    pairs = None
    if args.worker_mode == "one":
        outs = []
        for v in views:
            outs.append(pipe(v))
            if first is None:
                first = time.perf_counter() - t0
        # As torchvision's column: the list of results, stacked after the clock stops.
        total = time.perf_counter() - t0
        out = np.stack(outs)
        # What a new size costs over a seen one, side by side: images of other sizes (the
        # next seed's), each called as it is (a new size: decompose and bind) and then a copy
        # of it (its size now seen: the fast path). The copies are made before any of these
        # calls, so both inputs come cold from memory, as a loader's images do (the same
        # array called twice would find itself in cache the second time). The median over
        # the images of each and of their difference.
        # (Not for the specialized engine: each new size is a compile there.)
        clock = time.perf_counter
        # Both calls of a pair on the full build (the run above may have ended on the quick one).
        toroid.wait_for_background_builds()
        sizes = {im.shape for im in images}
        pairs = [] if args.worker_engine != "specialized" else None
        fresh = []
        for im in make_images(args.n, args.seed + 1) if pairs is not None else []:
            if im.shape not in sizes:
                sizes.add(im.shape)
                fresh.append((im.transpose(2, 0, 1), im.copy().transpose(2, 0, 1)))
        for v, w in fresh:
            a = clock()
            r1 = pipe(v)
            b = clock()
            r2 = pipe(w)
            c = clock()
            del r1, r2
            pairs.append((b - a, c - b))
    else:
        parts = []
        for i in range(0, len(views), args.batch):
            parts.append(pipe(views[i:i + args.batch]))
            if first is None:
                first = time.perf_counter() - t0
        total = time.perf_counter() - t0
        out = np.concatenate(parts)
    compiles = len(count_entries(cache_dir) - before)
    prebuilt = toroid.cache_stats().get("prebuilt_hits", 0)
    np.save(args.worker_out, out)
    print(json.dumps({"seconds": total, "first_call_seconds": first, "compiles": compiles, "prebuilt": prebuilt,
                      "pairs": pairs}))


def run_worker(args, engine, mode, out_path):
    cache_dir = os.environ.get("TOROID_CACHE_DIR") if args.warm_cache else tempfile.mkdtemp(prefix="toroid-loader-cache-")
    if not cache_dir:  # toroid's default folder
        cache_dir = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                                 "toroid")
    env = dict(os.environ, TOROID_CACHE_DIR=cache_dir)
    if args.no_prebuilt:
        env["TOROID_PREBUILT"] = "none"
    cmd = [sys.executable, os.path.abspath(__file__), "--n", str(args.n), "--seed", str(args.seed),
           "--threads", str(args.threads), "--batch", str(args.batch),
           "--worker-engine", engine, "--worker-mode", mode, "--worker-out", out_path]
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    finally:
        if not args.warm_cache:
            shutil.rmtree(cache_dir, ignore_errors=True)
    if r.returncode != 0:
        sys.exit("loader: error: the %s/%s worker failed:\n%s" % (engine, mode, r.stderr.strip()))
    return json.loads(r.stdout.strip().splitlines()[-1])


# ---- torchvision ---------------------------------------------------------------------------

def load_torchvision(notes):
    try:
        import torch
    except Exception as e:
        notes.append("torchvision column skipped: PyTorch is not importable (%s)" % e)
        return None, None
    try:
        import torchvision
        from torchvision.transforms import v2
    except Exception as e:
        notes.append("torchvision column skipped: torchvision.transforms.v2 is not importable (%s: %s; needs "
                     "torchvision >= 0.15)" % (e.__class__.__name__, e))
        return torch, None
    notes.append("torchvision %s, PyTorch %s" % (torchvision.__version__, torch.__version__))
    return torch, v2


def run_torchvision(torch, v2, images, threads):
    torch.set_num_threads(threads)
    tf = v2.Compose([v2.Resize(256, antialias=True), v2.CenterCrop(224),
                     v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)])
    tensors = [torch.from_numpy(im).permute(2, 0, 1) for im in images]
    t0 = time.perf_counter()
    outs = [tf(t) for t in tensors]
    total = time.perf_counter() - t0
    return total, torch.stack(outs).numpy()


# ---- main -----------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200, help="number of images (default 200)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="toroid's and torch's threads (default 1)")
    ap.add_argument("--batch", type=int, default=32, help="images per list call (default 32)")
    ap.add_argument("--engines", default="compiled,specialized",
                    help="toroid engines, comma-separated (compiled, specialized, reference)")
    ap.add_argument("--all-modes", action="store_true",
                    help="also run the specialized engine in batches (by default: one image per call only)")
    ap.add_argument("--warm-cache", action="store_true",
                    help="use $TOROID_CACHE_DIR (or ~/.cache/toroid) as it is instead of a fresh one per run")
    ap.add_argument("--no-prebuilt", action="store_true",
                    help="leave the prebuilt catalogue out (TOROID_PREBUILT=none): every program compiles on first use")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--worker-engine", help=argparse.SUPPRESS)
    ap.add_argument("--worker-mode", help=argparse.SUPPRESS)
    ap.add_argument("--worker-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.n < 1 or args.threads < 1 or args.batch < 1:
        sys.exit("loader: error: --n, --threads and --batch must be at least 1")
    if args.worker_engine:
        return worker(args)

    notes = []
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    images = make_images(args.n, args.seed)
    sizes = {im.shape[:2] for im in images}
    torch, v2 = load_torchvision(notes)

    oracle_name, oracle = None, None
    rows = []
    if v2 is not None:
        seconds, oracle = run_torchvision(torch, v2, images, args.threads)
        oracle_name = "torchvision"
        rows.append({"impl": "torchvision.v2", "mode": "one", "seconds": seconds, "compiles": None,
                     "max_abs_diff": None})
    tmp = tempfile.mkdtemp(prefix="toroid-loader-")
    try:
        if oracle is None:
            # No torchvision: toroid's reference engine (PyTorch's definitions, op by op)
            # is the oracle.
            path = os.path.join(tmp, "oracle.npy")
            r = run_worker(args, "reference", "batch", path)
            oracle, oracle_name = np.load(path), "toroid reference engine"
            rows.append({"impl": "toroid reference", "mode": "batch %d" % args.batch, "seconds": r["seconds"],
                         "first_call_seconds": r["first_call_seconds"], "compiles": r["compiles"],
                         "max_abs_diff": None})
            notes.append("results checked against toroid's reference engine (no torchvision here)")
        for engine in engines:
            # The specialized engine compiles once per size in either mode: one mode shows
            # that cost (--all-modes runs both).
            modes = ("one",) if engine == "specialized" and not args.all_modes else ("one", "batch")
            for mode in modes:
                path = os.path.join(tmp, "%s-%s.npy" % (engine, mode))
                r = run_worker(args, engine, mode, path)
                out = np.load(path)
                if out.shape != oracle.shape:
                    diff = float("inf")
                else:
                    diff = float(np.max(np.abs(out.astype(np.float64) - oracle.astype(np.float64))))
                row = {"impl": "toroid " + engine, "mode": mode if mode == "one" else "batch %d" % args.batch,
                       "seconds": r["seconds"], "first_call_seconds": r["first_call_seconds"],
                       "compiles": r["compiles"], "prebuilt": r.get("prebuilt"), "max_abs_diff": diff}
                if r.get("pairs"):
                    med = lambda xs: sorted(xs)[len(xs) // 2] * 1e3
                    row["new_size_ms"] = med([p[0] for p in r["pairs"]])
                    row["seen_size_ms"] = med([p[1] for p in r["pairs"]])
                    row["new_size_extra_ms"] = med([p[0] - p[1] for p in r["pairs"]])
                    row["pairs"] = len(r["pairs"])
                rows.append(row)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for r in rows:
        r["images_per_s"] = args.n / r["seconds"]

    print("loader: %d images, %d distinct sizes (180-900 px per side, seed %d), %d thread(s), %s cache, "
          "prebuilt catalogue %s" % (args.n, len(sizes), args.seed, args.threads,
                                     "warm" if args.warm_cache else "fresh",
                                     "left out" if args.no_prebuilt else "where found"))
    print("transform: Resize(256, bilinear, antialias) -> CenterCrop(224) -> float32 scaled -> Normalize")
    print("total s: every call, compiles included; first call s: the first call (one image or one batch); "
          "prebuilt: programs loaded from the prebuilt catalogue")
    for n in notes:
        print("note: " + n)
    print()
    head = "%-22s %-9s %9s %9s %12s %9s %9s %s" % ("implementation", "calls", "total s", "images/s", "first call s",
                                                  "compiles", "prebuilt", "max |diff| vs " + oracle_name)
    print(head)
    print("-" * len(head))
    ok = True
    for r in rows:
        diff = r["max_abs_diff"]
        if diff is None:
            d = "(oracle)"
        else:
            good = diff <= TOLERANCE
            ok &= good
            d = "%.3g %s" % (diff, "ok" if good else "FAIL (> %g)" % TOLERANCE)
        first = r.get("first_call_seconds")
        print("%-22s %-9s %9.2f %9.1f %12s %9s %9s %s" % (r["impl"], r["mode"], r["seconds"], r["images_per_s"],
                                                        "-" if first is None else "%.2f" % first,
                                                        "-" if r["compiles"] is None else r["compiles"],
                                                        "-" if r.get("prebuilt") is None else r["prebuilt"], d))
    per_image = [r for r in rows if "new_size_ms" in r]
    if per_image:
        print()
        print("a new size against a seen one, side by side (after the run above: images of other sizes, each "
              "called, then a copy of it; medians over the images)")
        for r in per_image:
            print("%-22s %d images: new size %.3f ms, seen size %.3f ms, a new size costs %.3f ms more" %
                  (r["impl"], r["pairs"], r["new_size_ms"], r["seen_size_ms"], r["new_size_extra_ms"]))
    print()
    print("check: every result within %g of the %s: %s" % (TOLERANCE, oracle_name, "yes" if ok else "NO"))
    if args.json:
        doc = {"benchmark": "loader", "n": args.n, "seed": args.seed, "threads": args.threads,
               "batch": args.batch, "distinct_sizes": len(sizes), "warm_cache": args.warm_cache,
               "prebuilt": not args.no_prebuilt,
               "machine": {"platform": platform.platform(), "processor": platform.processor(),
                           "cpus": os.cpu_count(), "python": platform.python_version()},
               "oracle": oracle_name, "tolerance": TOLERANCE, "notes": notes, "all_equal": ok, "rows": rows}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
