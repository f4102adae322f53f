#!/usr/bin/env python3
"""What a new image size costs over a size seen before: the loader's ImageNet eval transform
(Resize(256) by the smaller edge, bilinear antialias -> CenterCrop(224) -> float32 scaled ->
Normalize) on HWC uint8 images of distinct random sizes (180-900 px per side) viewed as CHW,
1 thread, after a warm-up that compiles the one program. Per image, interleaved: the first
call for its size (a new size: adapt, toroid_compile -- decompose and bind, no compile --,
the fast path filled, the run) and a second call (the fast path: the run alone). The same
from C++ through the C API (bench/new_size_c.cpp, built here when a C++ compiler is found):
toroid_compile + toroid_run_data against toroid_run_data on the function held. Prints the
median and mean per image of each and their difference, the new size's extra cost.

    /usr/bin/python3 bench/new_size.py [--images 300] [--build build-test]"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import benchenv

benchenv.system_python("new_size", ["numpy"], "python3-numpy")
import numpy as np  # noqa: E402

ROOT = benchenv.ROOT
OPS = [{"op": "resize", "mode": "bilinear", "antialias": True, "smaller_edge": 256},
       {"op": "center_crop", "size": 224},
       {"op": "convert", "dtype": "float32", "scale": True},
       {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}]


def run_c(library, images, seed):
    out = benchenv.build_c_case("new_size", "new_size_c.cpp", library)
    if out is None:
        return None
    r = subprocess.run([out, str(images), str(seed)], capture_output=True, text=True)
    if r.returncode != 0:
        print("new_size: the C++ case failed:\n" + r.stderr, file=sys.stderr)
        return None
    rows = [tuple(float(v) for v in line.split()) for line in r.stdout.splitlines() if line.strip()]
    return [r[0] + r[1] for r in rows], [r[2] for r in rows], [r[0] for r in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=300, help="distinct sizes timed (default 300)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--build", default=None, help="build folder holding libtoroid_c.so (default: build, build-test)")
    args = ap.parse_args()
    library = benchenv.find_library("new_size", args.build, use_env=True)
    os.environ["TOROID_LIBRARY"] = library
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import toroid

    rng = np.random.default_rng(args.seed)
    warmup = 3
    sizes, seen = [], set()
    while len(sizes) < args.images + warmup:
        s = tuple(int(v) for v in rng.integers(180, 901, size=2))
        if s not in seen:
            seen.add(s)
            sizes.append(s)
    buf = rng.integers(0, 256, size=900 * 900 * 3, dtype=np.uint8)
    pipe = toroid.Pipeline(OPS, threads=1)
    new, again = [], []
    clock = time.perf_counter
    for k, (h, w) in enumerate(sizes):
        x = buf[:h * w * 3].reshape(h, w, 3).transpose(2, 0, 1)
        t0 = clock()
        pipe(x)
        t1 = clock()
        pipe(x)
        t2 = clock()
        if k == 0:
            # The first call runs a quick build while the full one compiles in the
            # background: the sizes are timed on the full build.
            toroid.wait_for_background_builds()
        if k >= warmup:
            new.append((t1 - t0) * 1e6)
            again.append((t2 - t1) * 1e6)

    def row(name, a, b):
        d = [x - y for x, y in zip(a, b)]
        print("%-34s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f" % (name, statistics.median(a), statistics.mean(a),
                                                            statistics.median(b), statistics.mean(b),
                                                            statistics.median(d), statistics.mean(d)))

    print("new_size: %d distinct sizes (180-900 px per side, seed %d), 1 thread, library %s" %
          (args.images, args.seed, library))
    print("%-34s %9s %9s %9s %9s %9s %9s" % ("us per image", "new med", "new mean", "seen med", "seen mean",
                                            "extra med", "extra mean"))
    row("toroid.Pipeline (NumPy)", new, again)
    c = run_c(library, args.images, args.seed)
    if c is not None:
        row("C API: toroid_compile + run_data", c[0], c[1])
        print("%-34s %9.1f %9.1f" % ("C API: toroid_compile alone", statistics.median(c[2]), statistics.mean(c[2])))


if __name__ == "__main__":
    main()
