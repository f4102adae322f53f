#!/usr/bin/env python3
"""toroid.transforms against torchvision.transforms.v2, the drop-in comparison: the same
Compose written twice (an eval transform and a training transform with random crops, flips
and affine warps), run on the same decoded-JPEG-like images (HWC uint8 of random sizes,
viewed as CHW tensors, as a DataLoader's decode step hands them over) with the same torch
seed per image, so both draw the same random parameters. Engines alternate image by image;
the table gives each one's time per image after its first call (toroid's first call
compiles, and random choices that change the program's structure, such as flipping or not,
compile their variant when first drawn), then the same over a second pass over the images
(every variant compiled and its full build loaded: a long epoch's steady state), toroid's speed-ups, the compiles, and
the largest difference between the two results.
Needs torchvision >= 0.15 (transforms.v2).

    PYTHONPATH=python python3 bench/transforms.py [--n 200] [--threads 1] [--json FILE]"""

import argparse
import json
import os
import platform
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loader import MEAN, STD, make_images  # noqa: E402  the same images and constants as the loader benchmark
sys.path.insert(0, os.path.join(ROOT, "python"))
from toroid.transforms.recipes import RECIPES  # noqa: E402


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200, help="images (default 200)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="toroid's and torch's threads (default 1)")
    ap.add_argument("--json", default="", help="also write the results here")
    ap.add_argument("--only", default="", help="run the pipelines whose name contains this text")
    return ap.parse_args()


def images(n, seed, torch):
    """bench/loader.py's decoded-JPEG-like HWC uint8 images (random sizes, 180-900 px per
    side), each viewed as a CHW tensor without a copy."""
    return [torch.from_numpy(hwc).permute(2, 0, 1) for hwc in make_images(n, seed)]


def pipelines(T, torch):
    """name -> builder of a Compose from the module T (torchvision.transforms.v2 or
    toroid.transforms, which take the same arguments)."""
    return {
        "eval: Resize(256) -> CenterCrop(224) -> ToDtype -> Normalize": lambda: T.Compose([
            T.Resize(256, antialias=True), T.CenterCrop(224), T.ToDtype(torch.float32, scale=True),
            T.Normalize(MEAN, STD)]),
        "train: Resize(256) -> RandomCrop(224) -> RandomHorizontalFlip -> RandomAffine(15, translate 0.1, "
        "bilinear) -> ToDtype -> Normalize": lambda: T.Compose([
            T.Resize(256, antialias=True), T.RandomCrop(224), T.RandomHorizontalFlip(),
            T.RandomAffine(15, translate=(0.1, 0.1), interpolation=T.InterpolationMode.BILINEAR),
            T.ToDtype(torch.float32, scale=True), T.Normalize(MEAN, STD)]),
        # The training recipes (toroid.transforms.recipes builds each from either module).
        **{"recipe " + name: (lambda recipe=recipe: recipe(T))
           for name, recipe in RECIPES.items()},
    }


def main():
    args = parse_args()
    import torch
    try:
        import torchvision
        from torchvision.transforms import v2 as TV
    except ImportError as e:
        sys.exit("transforms: error: torchvision.transforms.v2 is needed (torchvision >= 0.15): %s" % e)
    import toroid
    import toroid.transforms as TT

    torch.set_num_threads(args.threads)
    toroid.set_num_threads(args.threads)
    xs = images(args.n, args.seed, torch)
    rows = []
    for name, build in pipelines(TV, torch).items():
        if args.only not in name:
            continue
        engines = {"torchvision.v2": build(), "toroid.transforms": pipelines(TT, torch)[name]()}
        first = {}
        max_diff = 0.0
        compiles_before = toroid.cache_stats()["compiles"]
        passes = []
        for rnd in range(2):
            if rnd == 1:
                toroid.wait_for_background_builds()  # the steady state: every full build loaded
            times = {e: [] for e in engines}
            for i, x in enumerate(xs):
                results = {}
                order = list(engines) if i % 2 == 0 else list(reversed(engines))
                for e in order:
                    torch.manual_seed(args.seed * 100003 + i)
                    t0 = time.perf_counter()
                    y = engines[e](x)
                    dt = time.perf_counter() - t0
                    if rnd == 0 and i == 0:
                        first[e] = dt
                    else:
                        times[e].append(dt)
                    results[e] = y
                a, b = results["torchvision.v2"], results["toroid.transforms"]
                if a.shape != b.shape:
                    sys.exit("transforms: error: %s: image %d: shapes %s and %s" % (name, i, tuple(a.shape),
                                                                                 tuple(b.shape)))
                max_diff = max(max_diff, float((a.double() - b.double()).abs().max()))
            passes.append((statistics.mean(times["torchvision.v2"]) * 1e3,
                           statistics.mean(times["toroid.transforms"]) * 1e3))
        (tv, tt), (tv2, tt2) = passes
        # The first pass with its first call counted (what a short job sees).
        n0 = len(xs)
        tv_all = (tv * (n0 - 1) / 1e3 + first["torchvision.v2"]) / n0 * 1e3
        tt_all = (tt * (n0 - 1) / 1e3 + first["toroid.transforms"]) / n0 * 1e3
        rows.append({"pipeline": name, "images": args.n, "threads": args.threads,
                     "torchvision_ms": tv, "toroid_ms": tt, "speedup": tv / tt,
                     "torchvision_ms_warm": tv2, "toroid_ms_warm": tt2, "speedup_warm": tv2 / tt2,
                     "torchvision_ms_with_first": tv_all, "toroid_ms_with_first": tt_all,
                     "speedup_with_first": tv_all / tt_all,
                     "toroid_compiles": toroid.cache_stats()["compiles"] - compiles_before,
                     "torchvision_first_s": first["torchvision.v2"], "toroid_first_s": first["toroid.transforms"],
                     "max_abs_diff": max_diff})

    print("toroid.transforms vs torchvision.transforms.v2 %s (torch %s), %d images of random sizes, %d thread(s)"
          % (torchvision.__version__, torch.__version__, args.n, args.threads))
    print("| pipeline | torchvision ms/image | toroid ms/image | speed-up | with the first call | "
          "second pass: torchvision | toroid | speed-up | toroid compiles | toroid first call s | max abs diff |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print("| %s | %.2f | %.2f | %.2fx | %.2fx | %.2f | %.2f | %.2fx | %d | %.2f | %.2g |" % (
            r["pipeline"], r["torchvision_ms"], r["toroid_ms"], r["speedup"], r["speedup_with_first"],
            r["torchvision_ms_warm"],
            r["toroid_ms_warm"], r["speedup_warm"], r["toroid_compiles"], r["toroid_first_s"], r["max_abs_diff"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": {"cpu": platform.processor() or platform.machine(), "python": platform.python_version(),
                                   "torch": torch.__version__, "torchvision": torchvision.__version__},
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
