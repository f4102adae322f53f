#!/usr/bin/env python3
"""Prebuilt against native code of the loader's eval transform: the module the prebuilt
catalogue holds (built ahead of time for an instruction-set level, -mtune=generic, by the
build machine's compiler) against the one this machine's compiler builds for itself
(-march=native, TOROID_PREBUILT=none). Warm time per image over bench/loader.py's images,
best of 5 passes, in processes alternated, each with its own cache folder."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import benchenv

benchenv.system_python("prebuilt_vs_native", ["numpy"], "python3-numpy")


def child(n):
    sys.path.insert(0, os.path.join(benchenv.ROOT, "python"))
    import loader
    import toroid
    views = [im.transpose(2, 0, 1) for im in loader.make_images(n, 0)]
    pipe = toroid.Pipeline(loader.OPS, threads=1)
    for v in views:
        pipe(v)
    toroid.wait_for_background_builds()
    for v in views:
        pipe(v)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for v in views:
            pipe(v)
        best = min(best, time.perf_counter() - t)
    print(json.dumps({"ms_per_image": best / len(views) * 1e3, "stats": toroid.cache_stats()}))


def run(n, env):
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--n", str(n), "--child"],
                       env=dict(os.environ, **env), capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("prebuilt_vs_native: error: a child failed:\n" + r.stderr.strip())
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200, help="images (default 200)")
    ap.add_argument("--rounds", type=int, default=3, help="alternated rounds (default 3)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.n)
    with tempfile.TemporaryDirectory() as tmp:
        native = {"TOROID_PREBUILT": "none", "TOROID_CACHE_DIR": os.path.join(tmp, "native")}
        first = run(args.n, native)  # compiles the native build into its cache
        print("native build compiled: %d" % first["stats"]["compiles"])
        for i in range(args.rounds):
            for name, env in (("prebuilt", {"TOROID_CACHE_DIR": os.path.join(tmp, "empty-%d" % i)}),
                              ("native", native)):
                r = run(args.n, env)
                s = r["stats"]
                print("%-8s round %d: %.4f ms/image  prebuilt_hits=%d compiles=%d disk_hits=%d" %
                      (name, i, r["ms_per_image"], s["prebuilt_hits"], s["compiles"], s["disk_hits"]))
                if name == "prebuilt" and s["prebuilt_hits"] == 0:
                    print("note: no prebuilt module was found (no catalogue beside the library?)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
