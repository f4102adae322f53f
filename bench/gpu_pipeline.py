"""The GPU preprocessing pipelines people run, toroid against torchvision.transforms.v2 (eager
and torch.compile) on the same CUDA tensors, interleaved per round, timed with CUDA events:

  1. one decoded 1080p frame, uint8 channels-last: Resize(256, antialias) -> CenterCrop(224)
     -> float -> Normalize;
  2. a training batch of 128 images of 375x500, uint8 channels-last: Resize(256x256,
     antialias) -> crop -> horizontal flip -> float -> Normalize;
  3. a list of 128 images of random sizes (180-900 px a side, uint8 channels-last, as decoded
     JPEGs), the eval transform Resize(256, antialias) -> CenterCrop(224) -> float ->
     Normalize, into one stacked (128, 3, 224, 224) tensor: toroid's one call (one launch
     per kernel for the images whose sizes share kernels) against toroid image by image and
     torchvision.transforms.v2 image by image (each then torch.stack), and the one call's
     first run on 128 sizes it has not seen (binding each size: tables, tile plans).

Needs PyTorch with CUDA and torchvision >= 0.15 (the GPU machine). Prints a table with the
median times, toroid's speed-up and the largest difference between the results.

    python3 bench/gpu_pipeline.py [--rounds 50] [--json FILE] [--only batch|fixed]
"""

import argparse
import json
import statistics
import sys
import time

import torch

import toroid

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def cases():
    from torchvision.transforms import v2
    g = torch.Generator().manual_seed(0)
    frame = torch.randint(0, 256, (1, 3, 1080, 1920), dtype=torch.uint8, generator=g)
    frame = frame.contiguous(memory_format=torch.channels_last).cuda()
    batch = torch.randint(0, 256, (128, 3, 375, 500), dtype=torch.uint8, generator=g)
    batch = batch.contiguous(memory_format=torch.channels_last).cuda()
    yield ("1080p frame: resize 256 AA, center crop 224, float, normalize", frame,
           v2.Compose([v2.Resize(256, antialias=True), v2.CenterCrop(224), v2.ToDtype(torch.float32, scale=True),
                       v2.Normalize(MEAN, STD)]),
           toroid.Pipeline([{"op": "resize", "mode": "bilinear", "antialias": True, "smaller_edge": 256},
                            {"op": "center_crop", "size": 224}, {"op": "convert", "dtype": "float32", "scale": True},
                            {"op": "normalize", "mean": MEAN, "std": STD}]))
    yield ("batch 128 x 375x500: resize 256 AA, crop 224, flip, float, normalize", batch,
           v2.Compose([v2.Resize((256, 256), antialias=True), v2.CenterCrop(224), v2.RandomHorizontalFlip(p=1.0),
                       v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)]),
           toroid.Pipeline([{"op": "resize", "mode": "bilinear", "antialias": True, "size": [256, 256]},
                            {"op": "center_crop", "size": 224}, {"op": "flip", "dims": [-1]},
                            {"op": "convert", "dtype": "float32", "scale": True},
                            {"op": "normalize", "mean": MEAN, "std": STD}]))


def time_us(fn, x):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn(x)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e3


def eval_transforms():
    from torchvision.transforms import v2
    tv = v2.Compose([v2.Resize(256, antialias=True), v2.CenterCrop(224), v2.ToDtype(torch.float32, scale=True),
                     v2.Normalize(MEAN, STD)])
    tr = toroid.Pipeline([{"op": "resize", "mode": "bilinear", "antialias": True, "smaller_edge": 256},
                          {"op": "center_crop", "size": 224}, {"op": "convert", "dtype": "float32", "scale": True},
                          {"op": "normalize", "mean": MEAN, "std": STD}])
    return tv, tr


def varied_images(n, seed):
    """n uint8 images of random sizes (180-900 a side) on the GPU, (3, H, W) views of HWC
    memory: channels-last, as decoded JPEGs."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        h, w = (int(v) for v in torch.randint(180, 901, (2,), generator=g))
        hwc = torch.randint(0, 256, (h, w, 3), dtype=torch.uint8, generator=g).cuda()
        out.append(hwc.permute(2, 0, 1))
    return out


def batch_rows(args):
    """Case 3: one call on a list of varied sizes against image-by-image loops."""
    tv, tr = eval_transforms()
    xs = varied_images(args.batch, 1)
    engines = {
        "toroid one call": lambda: tr(xs),
        "toroid per image": lambda: torch.stack([tr(x) for x in xs]),
        "torchvision per image": lambda: torch.stack([tv(x) for x in xs]),
    }
    # The first call of the one-call path on sizes no call has seen (the kernels are
    # compiled by then, on other sizes): what a loader pays per new size.
    tr(varied_images(8, 2))
    torch.cuda.synchronize()
    fresh = [varied_images(args.batch, 100 + i) for i in range(3)]
    firsts = []
    for f in fresh:
        t0 = time.perf_counter()
        tr(f)
        torch.cuda.synchronize()
        firsts.append((time.perf_counter() - t0) * 1e6)
    outs = {}
    for name, fn in engines.items():  # warm up
        for _ in range(3):
            outs[name] = fn()
    torch.cuda.synchronize()
    times = {name: [] for name in engines}
    walls = {name: [] for name in engines}
    for _ in range(args.rounds):
        for name, fn in engines.items():
            t0 = time.perf_counter()
            times[name].append(time_us(lambda _: fn(), None))
            walls[name].append((time.perf_counter() - t0) * 1e6)
    ref = outs["toroid per image"]
    return {
        "case": "%d images of 180-900 px (uint8 CL): resize 256 AA, center crop 224, float, normalize" % args.batch,
        "median_us": {name: statistics.median(t) for name, t in times.items()},
        "median_wall_us": {name: statistics.median(t) for name, t in walls.items()},
        "first_call_new_sizes_us": firsts,
        "one_call_equals_per_image": bool(torch.equal(outs["toroid one call"], ref)),
        "max_abs_diff_vs_torchvision": float((outs["torchvision per image"] - ref).abs().max()),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--json", default="")
    ap.add_argument("--batch", type=int, default=128, help="images of case 3")
    ap.add_argument("--only", choices=["batch", "fixed"], default=None)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gpu_pipeline: error: needs PyTorch with a CUDA device")
    rows = []
    batch = batch_rows(args) if args.only != "fixed" else None
    for title, x, tv, tr in (cases() if args.only != "batch" else []):
        compiled = torch.compile(tv)
        engines = {"torchvision": tv, "torchvision+compile": compiled, "toroid": tr}
        outs = {}
        for name, fn in engines.items():  # warm up: compiles, caches
            for _ in range(3):
                outs[name] = fn(x)
        torch.cuda.synchronize()
        times = {name: [] for name in engines}
        for _ in range(args.rounds):
            for name, fn in engines.items():  # interleaved, so drifting clocks hit all alike
                times[name].append(time_us(fn, x))
        med = {name: statistics.median(t) for name, t in times.items()}
        diff = {name: float((outs[name].float() - outs["toroid"].float()).abs().max()) for name in engines}
        rows.append({"case": title, "median_us": med, "max_abs_diff_vs_toroid": diff,
                     "kernels": tr.explain(x).splitlines()[0]})
    print("| pipeline | torchvision (µs) | + torch.compile (µs) | toroid (µs) | speed-up vs eager | vs compile | "
          "max diff | toroid kernels |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        m = r["median_us"]
        print("| %s | %.1f | %.1f | %.1f | %.2fx | %.2fx | %.2g | %s |" % (
            r["case"], m["torchvision"], m["torchvision+compile"], m["toroid"], m["torchvision"] / m["toroid"],
            m["torchvision+compile"] / m["toroid"], r["max_abs_diff_vs_toroid"]["torchvision"], r["kernels"]))
    if batch:
        m, w = batch["median_us"], batch["median_wall_us"]
        one = m["toroid one call"]
        print()
        print("| %s | CUDA events (µs) | wall, call + sync (µs) | one call vs this |" % batch["case"])
        print("| --- | ---: | ---: | ---: |")
        for name in m:
            print("| %s | %.1f | %.1f | %.2fx |" % (name, m[name], w[name], m[name] / one))
        print("first one-call runs on %d new sizes each (µs, wall): %s" % (
            args.batch, ", ".join("%.0f" % t for t in batch["first_call_new_sizes_us"])))
        print("one call == per image, bit for bit: %s; largest difference from torchvision: %.3g" % (
            batch["one_call_equals_per_image"], batch["max_abs_diff_vs_torchvision"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows,
                       "varied_batch": batch}, f, indent=1)


if __name__ == "__main__":
    main()
