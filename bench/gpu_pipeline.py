"""The GPU preprocessing pipelines people run, toroid against torchvision.transforms.v2 (eager
and torch.compile) on the same CUDA tensors, interleaved per round, timed with CUDA events:

  1. one decoded 1080p frame, uint8 channels-last: Resize(256, antialias) -> CenterCrop(224)
     -> float -> Normalize;
  2. a training batch of 128 images of 375x500, uint8 channels-last: Resize(256x256,
     antialias) -> crop -> horizontal flip -> float -> Normalize.

Needs PyTorch with CUDA and torchvision >= 0.15 (the GPU machine). Prints a table with the
median times, toroid's speed-up and the largest difference between the results.

    python3 bench/gpu_pipeline.py [--rounds 50] [--json FILE]
"""

import argparse
import json
import statistics
import sys

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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gpu_pipeline: error: needs PyTorch with a CUDA device")
    rows = []
    for title, x, tv, tr in cases():
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
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
