#!/usr/bin/env python3
"""Folder mode on the GPU: `toroid apply PIPELINE IN OUT --device cuda` (batches of files,
JPEGs decoded by nvJPEG with --decode fast, by libjpeg-turbo on the CPU threads with
--decode exact) against the CPU folder run (`--device cpu`, every core) and against the same
work written with torchvision (read_file, decode_jpeg(device="cuda") in batches of 64,
transforms.v2 on each CUDA image, back to the host, np.save), engines alternating round by
round (median), images/s of the whole command, process start included. The folder is the
photos repeated --repeat times (symlinks), so that a run lasts long enough to time.

  python3 bench/gpu_folder.py photos --rounds 3 --repeat 8 [--json F]
  (photos: bench/jpeg_loader.py --make-folder photos --count 128)

The eval pipeline is presets/classification_eval.json (Resize(256) AA, CenterCrop(224),
float, Normalize; .npy results); --thumbnail runs Resize(256) AA + CenterCrop(224) to uint8
JPEG files instead. Every toroid exact result is checked against the CPU run's file."""

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import benchenv

benchenv.system_python("gpu_folder", ["numpy", "torch"], "python3-numpy python3-torch")
import numpy as np  # noqa: E402
import torch  # noqa: E402

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
THUMB = ('[{"op": "resize", "smaller_edge": 256, "mode": "bilinear", "antialias": true},'
         ' {"op": "center_crop", "size": 224}]')


def torchvision_folder(files, out, thumbnail):
    import torchvision.transforms.v2 as T
    from torchvision.io import ImageReadMode, decode_jpeg, encode_jpeg, read_file
    steps = [T.Resize(256, antialias=True), T.CenterCrop(224)]
    if not thumbnail:
        steps += [T.ToDtype(torch.float32, scale=True), T.Normalize(MEAN, STD)]
    t = T.Compose(steps)
    for k in range(0, len(files), 64):
        part = files[k:k + 64]
        images = decode_jpeg([read_file(f) for f in part], mode=ImageReadMode.RGB, device="cuda")
        for f, x in zip(part, images):
            y = t(x).cpu()
            name = os.path.join(out, os.path.splitext(os.path.basename(f))[0])
            if thumbnail:
                with open(name + ".jpg", "wb") as fh:
                    fh.write(encode_jpeg(y, quality=90).numpy().tobytes())
            else:
                np.save(name + ".npy", y.numpy())
    torch.cuda.synchronize()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=8)
    ap.add_argument("--thumbnail", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--toroid", default=shutil.which("toroid") or os.path.join(benchenv.ROOT, "build", "toroid"))
    args = ap.parse_args()
    photos = sorted(glob.glob(os.path.join(args.folder, "*.jpg")))
    pipeline = THUMB if args.thumbnail else os.path.join(benchenv.ROOT, "presets", "classification_eval.json")
    fmt = [] if args.thumbnail else ["--format", "npy"]
    engines = {
        "toroid cpu": ["--device", "cpu"],
        "toroid cuda fast": ["--device", "cuda", "--decode", "fast"],
        "toroid cuda exact": ["--device", "cuda", "--decode", "exact"],
        "torchvision cuda": None,
    }
    times = {e: [] for e in engines}
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in")
        os.makedirs(src)
        for r in range(args.repeat):
            for p in photos:
                os.symlink(os.path.abspath(p), os.path.join(src, "%d_%s" % (r, os.path.basename(p))))
        files = sorted(glob.glob(os.path.join(src, "*.jpg")))
        torch.zeros(1, device="cuda")  # the torchvision process's CUDA start is not timed: it is already running
        for rnd in range(args.rounds):
            for name, extra in engines.items():
                out = os.path.join(tmp, "out_%s_%d" % (name.replace(" ", "_"), rnd))
                os.makedirs(out, exist_ok=True)
                t0 = time.perf_counter()
                if extra is None:
                    torchvision_folder(files, out, args.thumbnail)
                else:
                    os.rmdir(out)
                    p = subprocess.run([args.toroid, "apply", pipeline, src, out] + fmt + extra,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
                    if p.returncode != 0:
                        sys.exit("%s failed: %s" % (name, p.stderr.strip().splitlines()[-1:]))
                times[name].append(time.perf_counter() - t0)
            if not args.thumbnail:
                cpu = os.path.join(tmp, "out_toroid_cpu_%d" % rnd)
                exact = os.path.join(tmp, "out_toroid_cuda_exact_%d" % rnd)
                for f in os.listdir(cpu):
                    if not np.array_equal(np.load(os.path.join(cpu, f)), np.load(os.path.join(exact, f))):
                        sys.exit("cuda exact differs from the CPU run on %s" % f)
            for name in engines:
                shutil.rmtree(os.path.join(tmp, "out_%s_%d" % (name.replace(" ", "_"), rnd)), ignore_errors=True)
    n = len(files)
    rows = {name: n / statistics.median(t) for name, t in times.items()}
    tv = rows["torchvision cuda"]
    print("%d files (%d photos x %d), %s, median of %d rounds" %
          (n, len(photos), args.repeat, "thumbnail JPEGs" if args.thumbnail else "eval .npy", args.rounds))
    for name, rate in rows.items():
        print("%-20s %8.0f images/s  %5.2fx torchvision cuda" % (name, rate, rate / tv))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"files": n, "thumbnail": args.thumbnail, "images_per_s": rows, "seconds": times}, f, indent=1)


if __name__ == "__main__":
    main()
