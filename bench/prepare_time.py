#!/usr/bin/env python3
"""Prepare time of long pipelines: chain kind x length -> seconds.

Each row is a chain of one op repeated N times (flips, crops, torchvision-convention nearest
affines, bilinear affines, resizes, converts) prepared by `toroid apply --prepare-only
--stats` on a uint8 (1, 3, 64, 64) image. The time shown is what prepare spent outside the
C++ compiler (decompose, schedule, print, bind): the part that must grow linearly with the
pipeline's length. The compiler's own time is shown beside it; it runs once per structure
(a second prepare of the same pipeline finds the module in the disk cache).

    python3 bench/prepare_time.py [--toroid build/toroid] [--lengths 1,10,100,1000,10000]
                                  [--kinds flip,crop,...] [--timeout 120]

A pipeline above the op limit ($TOROID_MAX_OPS, default 100000) is refused at once; one
that runs past --timeout is shown as "> T".
"""
import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time


def write_npy(path, shape):
    """A uint8 array of `shape` with a deterministic pattern, in .npy format (no numpy)."""
    header = "{'descr': '|u1', 'fortran_order': False, 'shape': (%s), }" % "".join(f"{d}, " for d in shape)
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    n = 1
    for d in shape:
        n *= d
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(bytes((i * 37 + i // 64) % 256 for i in range(n)))


def chain(kind, n):
    ops = []
    for i in range(n):
        if kind == "flip":
            ops.append({"op": "flip", "dims": [-1] if i % 2 else [-2, -1]})
        elif kind == "crop":
            # Alternately shrink and pad back: sizes stay 60..64, offsets inside and outside.
            ops.append({"op": "crop", "top": 2, "left": 2, "height": 60, "width": 60} if i % 2 == 0 else
                       {"op": "crop", "top": -2, "left": -2, "height": 64, "width": 64})
        elif kind == "affine_nearest_tv":
            ops.append({"op": "affine", "theta": [[0.98, -0.17, 1.5], [0.17, 0.98, -0.5]], "mode": "nearest",
                        "convention": "torchvision"})
        elif kind == "affine_bilinear":
            # PyTorch convention (float32 input): the first op converts, the others warp.
            ops.append({"op": "convert", "dtype": "float32", "scale": True} if i == 0 else
                       {"op": "affine", "theta": [[0.98, -0.17, 0.01], [0.17, 0.98, -0.02]], "mode": "bilinear"})
        elif kind == "resize":
            ops.append({"op": "resize", "mode": "bilinear", "antialias": True, "size": [60, 60] if i % 2 == 0 else [64, 64]})
        elif kind == "convert":
            ops.append({"op": "convert", "dtype": "float32", "scale": True} if i % 2 == 0 else
                       {"op": "convert", "dtype": "uint8", "scale": True})
        else:
            raise SystemExit(f"unknown kind {kind}")
    return ops


def prepare(toroid, pipeline_path, image, timeout, env):
    """(seconds outside the compiler, compiler seconds, status) of one --prepare-only run."""
    cmd = [toroid, "apply", pipeline_path, image, os.devnull, "--prepare-only", "--stats", "--threads", "1"]
    start = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, None, f"> {timeout:g} s"
    wall = time.monotonic() - start
    if r.returncode != 0:
        line = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
        return None, None, f"error after {wall:.2f} s: {line[:60]}"
    m = re.search(r"prepare: ([0-9.]+) ms \(compiler ([0-9.]+) ms\)", r.stderr)
    if not m:
        return None, None, "no stats"
    total, compiler = float(m.group(1)) / 1e3, float(m.group(2)) / 1e3
    return total - compiler, compiler, "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--toroid", default=os.path.join(os.path.dirname(__file__), "..", "build", "toroid"))
    ap.add_argument("--lengths", default="1,10,100,1000,10000")
    ap.add_argument("--kinds", default="flip,crop,convert,resize,affine_nearest_tv,affine_bilinear")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--cache-dir", default=None, help="TOROID_CACHE_DIR (default: a fresh temporary folder)")
    a = ap.parse_args()
    lengths = [int(x) for x in a.lengths.split(",")]
    kinds = a.kinds.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        env["TOROID_CACHE_DIR"] = a.cache_dir or os.path.join(tmp, "cache")
        env.setdefault("TOROID_TIERED", "quick")  # one (scalar) build: the compiler is not what is measured
        image = os.path.join(tmp, "in.npy")
        write_npy(image, (1, 3, 64, 64))
        print("prepare seconds outside the C++ compiler (compiler seconds in brackets)")
        print(f"{'chain':<20}" + "".join(f"{n:>20}" for n in lengths))
        for kind in kinds:
            row = f"{kind:<20}"
            for n in lengths:
                path = os.path.join(tmp, f"{kind}_{n}.json")
                with open(path, "w") as f:
                    json.dump(chain(kind, n), f)
                prep, comp, status = prepare(a.toroid, path, image, a.timeout, env)
                cell = f"{prep:.3f} ({comp:.2f})" if status == "ok" else status[:19]
                row += f"{cell:>20}"
                sys.stdout.flush()
            print(row, flush=True)


if __name__ == "__main__":
    main()
