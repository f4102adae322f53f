#!/usr/bin/env python3
"""toroid.transforms.functional against torchvision.transforms.v2.functional, op by op: each
functional op on the same uint8 image (C, H, W), both engines timed in alternation (rounds of
`--calls` calls each, engines swapped every round), the median time per call, toroid's
speed-up, and the largest difference between the two results. On CPU at the threads given
(default 1), or on CUDA tensors (`--device cuda`). Every program is compiled and its full
build loaded before timing.

    PYTHONPATH=python python3 bench/functional.py [--device cpu|cuda] [--sizes 224x224,720x1280]
                                                 [--rounds 7] [--calls 20] [--threads 1] [--json FILE]"""

import argparse
import json
import os
import platform
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ops(F, TV, torch):
    """name -> (call(F, x)) for F either functional module (the same arguments)."""
    corners = ([[0, 0], [223, 0], [223, 223], [0, 223]], [[5, 3], [215, 10], [220, 219], [2, 210]])
    bil = TV.InterpolationMode.BILINEAR
    return {
        "horizontal_flip": lambda F, x: F.horizontal_flip(x),
        "vertical_flip": lambda F, x: F.vertical_flip(x),
        "rotate(15, nearest)": lambda F, x: F.rotate(x, 15.0),
        "rotate(15, bilinear)": lambda F, x: F.rotate(x, 15.0, interpolation=bil),
        "affine(shear 10, bilinear)": lambda F, x: F.affine(x, 0.0, [0, 0], 1.0, [10.0, 0.0], interpolation=bil),
        "perspective(bilinear)": lambda F, x: F.perspective(x, corners[0], corners[1], interpolation=bil),
        "pad(16, reflect)": lambda F, x: F.pad(x, [16], padding_mode="reflect"),
        "erase": lambda F, x: F.erase(x, 10, 20, 60, 80, torch.zeros(3, 1, 1, dtype=torch.float32, device=x.device)),
        "invert": lambda F, x: F.invert(x),
        "posterize(4)": lambda F, x: F.posterize(x, 4),
        "solarize(128)": lambda F, x: F.solarize(x, 128),
        "adjust_brightness(1.3)": lambda F, x: F.adjust_brightness(x, 1.3),
        "adjust_saturation(0.7)": lambda F, x: F.adjust_saturation(x, 0.7),
        "adjust_contrast(1.4)": lambda F, x: F.adjust_contrast(x, 1.4),
        "rgb_to_grayscale": lambda F, x: F.rgb_to_grayscale(x),
        "gaussian_blur(9, 2.0)": lambda F, x: F.gaussian_blur(x, [9, 9], [2.0, 2.0]),
        "gaussian_blur(23, 1.5)": lambda F, x: F.gaussian_blur(x, [23, 23], [1.5, 1.5]),
        "adjust_sharpness(2.0)": lambda F, x: F.adjust_sharpness(x, 2.0),
        "adjust_gamma(0.8)": lambda F, x: F.adjust_gamma(x, 0.8),
        "adjust_hue(0.1)": lambda F, x: F.adjust_hue(x, 0.1),
        "autocontrast": lambda F, x: F.autocontrast(x),
        "equalize": lambda F, x: F.equalize(x),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--sizes", default="224x224,720x1280")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", default="", help="the ops whose name contains this text")
    ap.add_argument("--layout", default="planar", choices=("planar", "channels_last"),
                    help="the images' memory: planar (3, H, W), or channels-last (an (H, W, 3) array viewed as "
                         "(3, H, W), as decoded images come)")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    import torch
    import torchvision
    import torchvision.transforms.v2 as TV
    import torchvision.transforms.v2.functional as TF
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import toroid
    import toroid.transforms.functional as OF
    torch.set_num_threads(a.threads)
    toroid.set_num_threads(a.threads)
    cuda = a.device == "cuda"

    def sync():
        if cuda:
            torch.cuda.synchronize()

    rows = []
    gen = torch.Generator().manual_seed(0)
    for size in a.sizes.split(","):
        h, w = (int(v) for v in size.split("x"))
        if a.layout == "planar":
            x = torch.randint(0, 256, (3, h, w), dtype=torch.uint8, generator=gen).to(a.device)
        else:
            x = torch.randint(0, 256, (h, w, 3), dtype=torch.uint8, generator=gen).to(a.device).permute(2, 0, 1)
        for name, call in ops(OF, TV, torch).items():
            if a.only not in name:
                continue
            engines = {"torchvision": lambda: call(TF, x), "toroid": lambda: call(OF, x)}
            try:
                want, got = engines["torchvision"](), engines["toroid"]()
                toroid.wait_for_background_builds()
                got = engines["toroid"]()
            except Exception as e:  # noqa: BLE001 - an op one side lacks is a row of its own
                rows.append({"op": name, "size": size, "error": "%s: %s" % (type(e).__name__, str(e)[:120])})
                continue
            diff = float((got.double() - want.double()).abs().max()) if got.shape == want.shape else float("inf")
            times = {e: [] for e in engines}
            for r in range(a.rounds):
                for e in (list(engines) if r % 2 == 0 else list(reversed(engines))):
                    fn = engines[e]
                    sync()
                    t = time.perf_counter()
                    for _ in range(a.calls):
                        fn()
                    sync()
                    times[e].append((time.perf_counter() - t) / a.calls * 1e6)
            tv, tt = statistics.median(times["torchvision"]), statistics.median(times["toroid"])
            rows.append({"op": name, "size": size, "torchvision_us": tv, "toroid_us": tt, "speedup": tv / tt,
                         "max_abs_diff": diff})
    print("toroid.transforms.functional vs torchvision %s (torch %s) functional, uint8 (3, H, W) %s, %s, %d thread(s), "
          "median of %d rounds of %d calls" % (torchvision.__version__, torch.__version__, a.layout, a.device, a.threads,
                                               a.rounds, a.calls))
    print("| op | H x W | torchvision us | toroid us | speed-up | max abs diff |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        if "error" in r:
            print("| %s | %s | | | %s | |" % (r["op"], r["size"], r["error"]))
        else:
            print("| %s | %s | %.1f | %.1f | %.2fx | %.3g |" % (r["op"], r["size"], r["torchvision_us"], r["toroid_us"],
                                                             r["speedup"], r["max_abs_diff"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": {"cpu": platform.processor() or platform.machine(), "device": a.device,
                                   "torch": torch.__version__, "torchvision": torchvision.__version__},
                       "layout": a.layout, "threads": a.threads, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
