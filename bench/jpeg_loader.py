#!/usr/bin/env python3
"""JPEG loader benchmark: a folder of real photos through the ImageNet eval and train
pipelines, file bytes in, a normalized float32 (3, 224, 224) tensor out, one image at a time
on one thread, as a data loader worker runs them.

  python3 bench/jpeg_loader.py --make-folder photos     # once: the photos (see make_folder)
  python3 bench/jpeg_loader.py photos --json out.json

Engines, interleaved image by image within each round (median of the rounds' times):
- toroid: the bytes given to the toroid.transforms Compose (a JPEG is decoded as RGB by
  libjpeg-turbo, only down to the first crop's bottom rows where the pipeline starts with one);
- toroid (whole decode): toroid.io.decode_image, then the same Compose on the array;
- torchvision: torchvision.io.decode_image(..., mode=RGB), then torchvision.transforms.v2.
Every toroid result is checked against torchvision's under the same seed (float32 within 1e-5).
"""

import argparse
import glob
import json
import os
import platform
import statistics
import sys
import time

import benchenv

benchenv.system_python("jpeg_loader", ["numpy", "torch"], "python3-numpy python3-torch")
import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.join(benchenv.ROOT, "python"))

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def photo_sources():
    """The colour photographs Debian's python3-skimage and python3-matplotlib ship."""
    names = ["astronaut.png", "chelsea.png", "coffee.png", "hubble_deep_field.jpg", "ihc.png", "motorcycle_left.png",
             "motorcycle_right.png", "rocket.jpg", "retina.jpg", "camera.png", "moon.png", "grass.png", "gravel.png",
             "brick.png"]
    found = []
    for d in ("/usr/lib/python3/dist-packages/skimage/data",):
        found += [os.path.join(d, n) for n in names if os.path.exists(os.path.join(d, n))]
    found += glob.glob("/usr/share/matplotlib/mpl-data/sample_data/*.jpg")
    return found


def make_folder(out, count=64, seed=0):
    """count JPEGs from the sample photos: each rescaled so its longer side is 200-1000 px
    (Pillow's Lanczos), saved at quality 75-95 with 4:2:0 chroma (Pillow's default)."""
    from PIL import Image
    sources = photo_sources()
    if not sources:
        raise SystemExit("no sample photos: install python3-skimage (and python3-matplotlib)")
    rng = np.random.default_rng(seed)
    os.makedirs(out, exist_ok=True)
    for i in range(count):
        src = sources[i % len(sources)]
        im = Image.open(src).convert("RGB")
        side = int(rng.integers(200, 1001))
        scale = side / max(im.size)
        im = im.resize((max(1, round(im.width * scale)), max(1, round(im.height * scale))), Image.LANCZOS)
        q = int(rng.integers(75, 96))
        im.save(os.path.join(out, "%03d_%s.jpg" % (i, os.path.splitext(os.path.basename(src))[0])), quality=q)
    print("wrote %d JPEGs to %s from %d photos" % (count, out, len(sources)))


def pipelines(t):
    train = t.Compose([t.RandomResizedCrop(224, antialias=True), t.RandomHorizontalFlip(),
                       t.ToDtype(torch.float32, scale=True), t.Normalize(MEAN, STD)])
    evaluate = t.Compose([t.Resize(256, antialias=True), t.CenterCrop(224), t.ToDtype(torch.float32, scale=True),
                          t.Normalize(MEAN, STD)])
    return {"eval": evaluate, "train": train}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", nargs="?")
    ap.add_argument("--make-folder", metavar="DIR")
    ap.add_argument("--count", type=int, default=64, help="--make-folder: how many JPEGs")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.make_folder:
        make_folder(args.make_folder, args.count)
        return
    if not args.folder:
        ap.error("give the folder of JPEGs (or --make-folder DIR to make one)")
    global T, TV2, tv_decode, ImageReadMode, toroid
    import toroid
    import toroid.transforms as T
    try:
        import torchvision.transforms.v2 as TV2
        from torchvision.io import ImageReadMode, decode_image as tv_decode
    except ImportError:
        TV2 = None
    files = sorted(glob.glob(os.path.join(args.folder, "*.jpg")))
    if not files:
        raise SystemExit("no .jpg files in %s" % args.folder)
    blobs = [open(f, "rb").read() for f in files]
    torch.set_num_threads(args.threads)
    toroid.set_num_threads(args.threads)
    ours = pipelines(T)
    theirs = pipelines(TV2) if TV2 is not None else None

    engines = {
        "toroid": lambda p, b: ours[p](b),
        "toroid_whole_decode": lambda p, b: ours[p](torch.from_numpy(toroid.io.decode_image(b, mode="rgb"))),
    }
    if theirs is not None:
        engines["torchvision"] = lambda p, b: theirs[p](tv_decode(torch.frombuffer(bytearray(b), dtype=torch.uint8),
                                                                  mode=ImageReadMode.RGB))
    results = {}
    for p in ("eval", "train"):
        # Warm up (compiles, background variants) and check every image against torchvision.
        for i, b in enumerate(blobs):
            outs = {}
            for name, f in engines.items():
                torch.manual_seed(i)
                outs[name] = f(p, b)
            for name in ("toroid", "toroid_whole_decode"):
                if "torchvision" in outs:
                    want = outs["torchvision"].as_subclass(torch.Tensor)
                    if not torch.allclose(outs[name], want, rtol=1e-5, atol=1e-5):
                        raise SystemExit("%s %s differs from torchvision on %s (max %g)" % (
                            name, p, files[i], (outs[name] - want).abs().max()))
        T._wait_for_variants()
        times = {name: [] for name in engines}
        for _ in range(args.rounds):
            spent = {name: 0.0 for name in engines}
            for i, b in enumerate(blobs):
                for name, f in engines.items():  # interleaved image by image
                    torch.manual_seed(i)
                    t0 = time.perf_counter()
                    f(p, b)
                    spent[name] += time.perf_counter() - t0
            for name in engines:
                times[name].append(spent[name])
        results[p] = {name: len(blobs) / statistics.median(v) for name, v in times.items()}
        line = "  ".join("%s %.0f img/s" % (n, v) for n, v in results[p].items())
        if "torchvision" in results[p]:
            line += "  | toroid/torchvision %.2fx" % (results[p]["toroid"] / results[p]["torchvision"])
        print("%-5s %s" % (p, line))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"files": len(files), "threads": args.threads, "rounds": args.rounds,
                       "machine": platform.processor() or platform.machine(), "torch": torch.__version__,
                       "torchvision": getattr(sys.modules.get("torchvision"), "__version__", None),
                       "images_per_s": results}, f, indent=1)


if __name__ == "__main__":
    main()
