#!/usr/bin/env python3
"""GPU loader benchmark: JPEG bytes in, a normalized float32 (N, 3, 224, 224) batch on the
GPU out, through the ImageNet eval and train pipelines, in images/s.

  python3 bench/jpeg_loader.py --make-folder photos --count 256   # once: real photos
  python3 bench/gpu_loader.py photos [--batch 256] [--rounds 10] [--json FILE]

Engines, interleaved batch by batch in each round (median of the rounds; wall time from the
bytes to the finished batch, torch.cuda.synchronize() included):
- toroid fast: the Compose's per_sample(batch, device="cuda") on the files' bytes: nvJPEG
  decodes the batch (the GPU's hardware JPEG decoder for baseline files) while each image's
  draws are made from its header, then one batched call runs every image's own draws;
- toroid exact: per_sample(batch, device="cuda", decode="exact") (libjpeg-turbo on every CPU
  thread, pinned uploads): bit for bit the CPU pipeline's result (checked);
- torchvision: torchvision.io.decode_jpeg(batch, device="cuda") (nvJPEG), then
  torchvision.transforms.v2 image by image on the GPU and torch.stack.
Then the steady rate of a loader (--steady K batches in a row per engine, interleaved):
toroid's per_sample_batches, where batch k+1's files decode on the GPU while batch k's draws
are made and run, against the same engines' calls one batch after another.
The train pipeline draws each image's crop and flip (toroid's per_sample draws differ from
torchvision's per-image loop under one seed, so only eval results are compared).
"""

import argparse
import glob
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import toroid  # noqa: E402
import toroid.transforms as T  # noqa: E402

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def pipelines(t):
    train = t.Compose([t.RandomResizedCrop(224, antialias=True), t.RandomHorizontalFlip(),
                       t.ToDtype(torch.float32, scale=True), t.Normalize(MEAN, STD)])
    evaluate = t.Compose([t.Resize(256, antialias=True), t.CenterCrop(224), t.ToDtype(torch.float32, scale=True),
                          t.Normalize(MEAN, STD)])
    return {"eval": evaluate, "train": train}


def stacked(out):
    return out if isinstance(out, torch.Tensor) else torch.stack(list(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--steady", type=int, default=8, help="batches in a row for the steady rate (0: none)")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gpu_loader: error: needs PyTorch with a CUDA device")
    files = sorted(glob.glob(os.path.join(args.folder, "*.jpg")))
    if not files:
        sys.exit("gpu_loader: error: no .jpg files in %s" % args.folder)
    blobs = [open(files[i % len(files)], "rb").read() for i in range(args.batch)]
    ours = pipelines(T)
    engines = {
        "toroid fast": lambda p: stacked(ours[p].per_sample(blobs, device="cuda")),
        "toroid exact": lambda p: stacked(ours[p].per_sample(blobs, device="cuda", decode="exact")),
    }
    try:
        import torchvision
        import torchvision.transforms.v2 as TV2
        from torchvision.io import ImageReadMode, decode_jpeg as tv_decode_jpeg
        theirs = pipelines(TV2)
        tensors = [torch.frombuffer(bytearray(b), dtype=torch.uint8) for b in blobs]
        engines["torchvision"] = lambda p: torch.stack(
            [theirs[p](x) for x in tv_decode_jpeg(tensors, mode=ImageReadMode.RGB, device="cuda")])
    except ImportError:
        torchvision = None
    report = {"files": len(files), "batch": args.batch, "rounds": args.rounds, "gpu": torch.cuda.get_device_name(),
              "decoder": toroid.io.jpeg_decoder("cuda"), "cpu_threads": os.cpu_count(), "torch": torch.__version__,
              "torchvision": getattr(torchvision, "__version__", None), "images_per_s": {}, "checks": {}}
    print("%s, %s, batch %d of %d files" % (report["gpu"], report["decoder"], args.batch, len(files)))
    for p in ("eval", "train"):
        outs = {}
        for name, f in engines.items():  # warm up: compiles, nvJPEG's buffers
            for _ in range(2):
                outs[name] = f(p)
        torch.cuda.synchronize()
        if p == "eval":
            # exact: the CPU pipeline's result on the CPU decode, bit for bit.
            cpu = stacked(ours[p].per_sample(blobs))
            report["checks"]["exact_equals_cpu_pipeline"] = bool(torch.equal(outs["toroid exact"].cpu(), cpu))
            if "torchvision" in outs:
                report["checks"]["fast_vs_torchvision_max_abs"] = float(
                    (outs["toroid fast"] - outs["torchvision"]).abs().max())
                report["checks"]["exact_vs_torchvision_max_abs"] = float(
                    (outs["toroid exact"] - outs["torchvision"]).abs().max())
        times = {name: [] for name in engines}
        for _ in range(args.rounds):
            for name, f in engines.items():
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                f(p)
                torch.cuda.synchronize()
                times[name].append(time.perf_counter() - t0)
        rates = {name: args.batch / statistics.median(v) for name, v in times.items()}
        report["images_per_s"][p] = rates
        line = "  ".join("%s %.0f img/s" % (n, v) for n, v in rates.items())
        if "torchvision" in rates:
            line += "  | fast/torchvision %.2fx, exact/torchvision %.2fx" % (
                rates["toroid fast"] / rates["torchvision"], rates["toroid exact"] / rates["torchvision"])
        print("%-5s %s" % (p, line))
        if args.steady > 0:
            k = args.steady
            loops = {name: (lambda f: lambda: [f(p) for _ in range(k)])(f) for name, f in engines.items()}
            for name, decode in (("toroid fast", "fast"), ("toroid exact", "exact")):
                loops[name + " pipelined"] = (lambda d: lambda: [
                    stacked(x) for x in ours[p].per_sample_batches([blobs] * k, device="cuda", decode=d)])(decode)
            times = {name: [] for name in loops}
            for _ in range(max(3, args.rounds // 3)):
                for name, f in loops.items():
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    f()
                    torch.cuda.synchronize()
                    times[name].append(time.perf_counter() - t0)
            steady = {name: k * args.batch / statistics.median(v) for name, v in times.items()}
            report.setdefault("steady_images_per_s", {})[p] = steady
            print("      steady (%d batches): %s" % (k, "  ".join("%s %.0f" % (n, v) for n, v in steady.items())))
    print("checks:", report["checks"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
