#!/usr/bin/env python3
"""Where a training recipe's time goes in toroid: the recipe (toroid.transforms.recipes) run
over bench/loader.py's decoded-JPEG-like images (channels-last, random sizes) with each
program call timed, grouped by its ops and input layout (the op list's handle made or found
is counted with its call), and the time spent outside program calls (the transforms' own
draws and bookkeeping). The first pass over the images is not timed (every program prepared).

    PYTHONPATH=python python3 bench/recipe_breakdown.py [RECIPE] [--n 200] [--threads 1]"""

import argparse
import collections
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loader import make_images  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "python"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("recipe", nargs="?", default="resnet50")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    import torch
    import toroid
    from toroid import _core
    import toroid.transforms.recipes as R
    torch.set_num_threads(a.threads)
    toroid.set_num_threads(a.threads)
    xs = [torch.from_numpy(hwc).permute(2, 0, 1) for hwc in make_images(a.n, 0)]
    recipe = R.build(a.recipe)
    for i, x in enumerate(xs):
        torch.manual_seed(i)
        recipe(x)
    toroid.wait_for_background_builds()

    spent = collections.defaultdict(float)
    calls = collections.Counter()
    real = _core.run_ops

    def timed(ops, x):
        t0 = time.perf_counter()
        y = real(ops, x)
        channels_last = hasattr(x, "stride") and x.dim() >= 3 and x.stride(-3) == 1
        key = "+".join(op["op"] for op in ops) + (" (channels-last)" if channels_last else "")
        spent[key] += time.perf_counter() - t0
        calls[key] += 1
        return y

    _core.run_ops = timed
    total = 0.0
    try:
        for i, x in enumerate(xs):
            torch.manual_seed(i)
            t0 = time.perf_counter()
            recipe(x)
            total += time.perf_counter() - t0
    finally:
        _core.run_ops = real
    n = len(xs)
    print("%s: %.3f ms an image, %d thread(s); program calls (binding new values included):"
          % (a.recipe, total / n * 1e3, a.threads))
    for key, t in sorted(spent.items(), key=lambda kv: -kv[1]):
        print("  %-58s %7.3f ms an image  (%d calls, %.1f us each)" % (key[:58], t / n * 1e3, calls[key],
                                                                      t / calls[key] * 1e6))
    print("  outside program calls: %.3f ms an image" % ((total - sum(spent.values())) / n * 1e3))


if __name__ == "__main__":
    main()
