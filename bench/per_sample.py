#!/usr/bin/env python3
"""A batch of images of varied sizes through a training recipe with each image's own random
draws: torchvision.transforms.v2's per-image loop, toroid.transforms' per-image loop and
toroid's per_sample (one batched call), on CPU tensors (threads as given) and, where PyTorch
has CUDA, on CUDA tensors. Rounds alternate the engines; the table gives each one's median
time per batch over the rounds after a warm-up round (every structure compiled), the
speed-ups, and the largest difference between toroid's per_sample results and torchvision's
on CPU tensors under the same seeds (a check run before the timing: torchvision's CUDA kernels
are not exact). Each engine draws with seeds of its own in every
round, so no engine runs draws another has already prepared (toroid keeps prepared pipelines
by their values).

    PYTHONPATH=python python3 bench/per_sample.py [--n 256] [--rounds 5] [--threads 1] [--recipe NAME]
                                                 [--devices cpu,cuda] [--json FILE] [--trace]

--recipe names one of toroid.transforms.recipes (resnet50, rand-m9, autoaugment, simclr,
segmentation) instead of the default geometric recipe."""

import argparse
import json
import statistics
import sys
import time

import numpy as np
import torch

import toroid
import toroid.transforms as T

try:
    import torchvision.transforms.v2 as TV
except ImportError:
    TV = None


def recipe(M):
    """The ResNet-50 training recipe's geometric part (RandomResizedCrop(176) where both
    libraries have it, else Resize(200) + RandomCrop(176)), a flip, a light rotation, then
    ToDtype and Normalize."""
    crop = [M.RandomResizedCrop(176, antialias=True)] if hasattr(M, "RandomResizedCrop") and hasattr(T, "RandomResizedCrop") \
        else [M.Resize(200, antialias=True), M.RandomCrop(176)]
    return M.Compose(crop + [M.RandomHorizontalFlip(), M.RandomRotation(10),
                             M.ToDtype(torch.float32, scale=True),
                             M.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])


def make_images(n, device, seed=0):
    g = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        h, w = int(g.integers(200, 500)), int(g.integers(200, 500))
        out.append(torch.from_numpy(g.integers(0, 256, (3, h, w), dtype=np.uint8)).to(device))
    return out


def timed(fn, device):
    if device == "cuda":
        torch.cuda.synchronize()
    t = time.perf_counter()
    out = fn()
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--recipe", default="")
    ap.add_argument("--devices", default="cpu,cuda")
    ap.add_argument("--trace", action="store_true",
                    help="print each round's time per engine and what toroid's caches did in it")
    a = ap.parse_args()
    build = recipe
    if a.recipe:
        from toroid.transforms import recipes
        build = lambda M: recipes.build(a.recipe, M)  # noqa: E731
    torch.set_num_threads(a.threads)
    toroid.set_num_threads(a.threads)
    devices = [d for d in a.devices.split(",") if d == "cpu" or (d == "cuda" and torch.cuda.is_available())]
    rows = []
    for device in devices:
        xs = make_images(a.n, device)
        ours, theirs = build(T), build(TV) if TV is not None else None
        engines = {"toroid per_sample": lambda: ours.per_sample(xs),
                   "toroid loop": lambda: [ours(x) for x in xs]}
        if theirs is not None:
            engines["torchvision loop"] = lambda: [theirs(x) for x in xs]
        times = {k: [] for k in engines}
        results = {}
        for name, fn in engines.items():  # the check: every engine under one seed
            torch.manual_seed(12345)
            results[name] = fn()
        for r in range(a.rounds + 1):
            for e, (name, fn) in enumerate(engines.items()):
                torch.manual_seed(1000 * (r + 1) + e)  # draws no other engine has run
                before = toroid.cache_stats() if a.trace else None
                s, out = timed(fn, device)
                if a.trace:
                    after = toroid.cache_stats()
                    did = " ".join("%s %d" % (k, after[k] - before[k]) for k in after if after[k] != before[k])
                    print("round %d %-6s %-20s %9.1f ms  %s" % (r, device, name, s * 1e3, did), flush=True)
                if r > 0:
                    times[name].append(s)
        med = {k: statistics.median(v) for k, v in times.items()}
        diff = None
        if theirs is not None:  # the reference: torchvision on CPU tensors (its CUDA kernels differ)
            tv = results["torchvision loop"]
            if device != "cpu":
                torch.manual_seed(12345)
                tv = [theirs(x.cpu()) for x in xs]
            ps = results["toroid per_sample"]
            diff = max((ps[i].cpu().float() - tv[i].float()).abs().max().item() for i in range(a.n))
        base = med.get("torchvision loop")
        for k, v in med.items():
            rows.append({"device": device, "engine": k, "ms_per_batch": v * 1e3, "images": a.n,
                         "speedup_vs_torchvision": (base / v) if base else None, "max_diff_vs_torchvision": diff})
    print("%-6s %-20s %12s %10s" % ("device", "engine", "ms/batch", "vs tv"))
    for r in rows:
        sp = "%.2fx" % r["speedup_vs_torchvision"] if r["speedup_vs_torchvision"] else "-"
        print("%-6s %-20s %12.1f %10s" % (r["device"], r["engine"], r["ms_per_batch"], sp))
    if rows and rows[0]["max_diff_vs_torchvision"] is not None:
        print("largest |toroid per_sample - torchvision on CPU tensors| per device: %s" %
              {r["device"]: r["max_diff_vs_torchvision"] for r in rows})
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"n": a.n, "threads": a.threads, "torch": torch.__version__, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
