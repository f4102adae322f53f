#!/usr/bin/env python3
"""One separable pass at a time: uint8 antialiased bilinear resizes that change only the width
(the horizontal pass), only the height (the vertical pass), or both, channels-last (CL) and
planar (CF), toroid against PyTorch eager in one process, 1 thread, each timed twice (the
lower median kept), with a check that both give the same bytes. It tells which pass a
row's time goes to. PyTorch's uint8 antialiased kernel needs PyTorch >= 2.1; where it is
missing the eager column is empty.

    PYTHONPATH=python python3 bench/resize_passes.py [--json FILE] [--min-time 0.05]"""

import argparse
import json

import numpy as np
import torch

import toroid
from timing import median_us

ROWS = [((1, 3, 1200, 1300), (200, 300)), ((1, 3, 345, 456), (123, 124)), ((1, 3, 345, 456), (270, 270)),
        ((1, 3, 300, 400), (600, 700))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default="", help="also write the results here")
    ap.add_argument("--min-time", type=float, default=0.05, help="seconds per measurement (default 0.05)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    toroid.set_num_threads(1)
    out = []
    for shape, (oh, ow) in ROWS:
        for layout in ("CL", "CF"):
            x = torch.randint(0, 256, shape, dtype=torch.uint8)
            if layout == "CL":
                x = x.contiguous(memory_format=torch.channels_last)
            h, w = shape[2], shape[3]
            for name, (th, tw) in (("H", (h, ow)), ("V", (oh, w)), ("HV", (oh, ow))):
                pipe = toroid.Pipeline([{"op": "resize", "size": [th, tw], "mode": "bilinear", "antialias": True}])

                def run_toroid():
                    return pipe(x)

                def run_eager():
                    return torch.nn.functional.interpolate(x, size=(th, tw), mode="bilinear", antialias=True)

                got = run_toroid()
                try:
                    same = bool(torch.as_tensor(np.asarray(got)).eq(run_eager()).all())
                    eager = median_us(run_eager, args.min_time)
                except RuntimeError:  # no uint8 antialiased kernel in this PyTorch
                    same, eager = None, float("nan")
                t = median_us(run_toroid, args.min_time)
                print(f"{str(shape):18} -> {th}x{tw:<5} {layout} {name:2}  toroid {t:9.1f}  eager {eager:9.1f}  "
                      f"eager/toroid {eager / t:5.2f}  same {same}", flush=True)
                out.append(dict(shape=shape, out=(th, tw), layout=layout, pass_=name, toroid=t, eager=eager, same=same))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
