#!/usr/bin/env python3
"""Affine warps of uint8 images straight from the caller's memory: toroid.transforms.functional
affine against torchvision.transforms.v2.functional.affine (same angle, translation, scale and
shear; nearest and bilinear), channels-last (a decoded HWC frame viewed as CHW) and planar, one
image, 1 thread, each timed twice (the lower median kept), with a check that both give the same
bytes. Without torchvision (>= 0.15) only toroid's times are printed.

    PYTHONPATH=python python3 bench/warps.py [--json FILE] [--min-time 0.1]"""

import argparse
import json

import numpy as np

import toroid
import toroid.transforms as T
from timing import median_us

try:
    import torch
    import torchvision.transforms.v2.functional as TF
    from torchvision.transforms import InterpolationMode
except ImportError:  # torchvision < 0.15 has no transforms.v2
    torch = TF = None

SIZES = [(480, 640), (1080, 1920)]
ARGS = dict(angle=12.0, translate=[9, -5], scale=1.1, shear=[4.0, 0.0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default="", help="also write the results here")
    ap.add_argument("--min-time", type=float, default=0.1, help="seconds per measurement (default 0.1)")
    args = ap.parse_args()
    toroid.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    rows = []
    for h, w in SIZES:
        hwc = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        for layout in ("CL", "CF"):
            chw = hwc.transpose(2, 0, 1) if layout == "CL" else np.ascontiguousarray(hwc.transpose(2, 0, 1))
            x = torch.from_numpy(chw) if torch is not None else chw
            for mode in ("nearest", "bilinear"):
                row = {"size": [h, w], "layout": layout, "mode": mode}
                row["toroid_us"] = median_us(lambda: T.affine(x, interpolation=mode, **ARGS), args.min_time)
                if TF is not None:
                    im = InterpolationMode.NEAREST if mode == "nearest" else InterpolationMode.BILINEAR
                    row["torchvision_us"] = median_us(lambda: TF.affine(x, interpolation=im, **ARGS), args.min_time)
                    a = np.asarray(T.affine(x, interpolation=mode, **ARGS))
                    b = TF.affine(x, interpolation=im, **ARGS).numpy()
                    row["max_diff"] = int(np.abs(a.astype(np.int32) - b).max())
                rows.append(row)
                line = "%-12s %s %-8s toroid %9.1f us" % ("%dx%d" % (h, w), layout, mode, row["toroid_us"])
                if "torchvision_us" in row:
                    line += "  torchvision %9.1f us  %.2fx  max|diff| %d" % (
                        row["torchvision_us"], row["torchvision_us"] / row["toroid_us"], row["max_diff"])
                print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "toroid": toroid.__version__ if hasattr(toroid, "__version__") else ""}, f, indent=1)


if __name__ == "__main__":
    main()
