#!/usr/bin/env python3
"""Folder mode on real photos: `toroid apply presets/classification_eval.json IN OUT --format
npy --jobs 1` (decode, Resize(256) -> CenterCrop(224) -> float -> Normalize, write .npy; a
JPEG decoded only in the window the resize and crop read) against the same per file with
torchvision (read_file, decode_image as RGB, transforms.v2, np.save), one process at one
thread each, alternating A B A B... (median of the rounds), images/s. Every toroid result is
checked against torchvision's (float32 within 1e-5).

  python3 bench/folder_eval.py photos --rounds 3     # photos: bench/jpeg_loader.py --make-folder
"""

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import tempfile
import time

import benchenv

benchenv.system_python("folder_eval", ["numpy", "torch"], "python3-numpy python3-torch")
import numpy as np  # noqa: E402
import torch  # noqa: E402

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def torchvision_folder(files, out):
    import torchvision.transforms.v2 as T
    from torchvision.io import ImageReadMode, decode_image, read_file
    t = T.Compose([T.Resize(256, antialias=True), T.CenterCrop(224), T.ToDtype(torch.float32, scale=True),
                   T.Normalize(MEAN, STD)])
    for f in files:
        x = t(decode_image(read_file(f), mode=ImageReadMode.RGB))
        np.save(os.path.join(out, os.path.splitext(os.path.basename(f))[0] + ".npy"), x.numpy())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--toroid", default=shutil.which("toroid") or os.path.join(benchenv.ROOT, "build", "toroid"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    files = sorted(glob.glob(os.path.join(args.folder, "*.jpg")))
    preset = os.path.join(benchenv.ROOT, "presets", "classification_eval.json")
    times = {"toroid": [], "torchvision": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds + 1):  # round 0 warms the caches and checks the results
            for name in ("toroid", "torchvision"):
                out = os.path.join(tmp, "%s%d" % (name, r))
                os.makedirs(out)
                t0 = time.perf_counter()
                if name == "toroid":
                    subprocess.run([args.toroid, "apply", preset, args.folder, out, "--format", "npy", "--jobs", "1"],
                                   check=True, stdout=subprocess.DEVNULL)
                else:
                    torchvision_folder(files, out)
                if r:
                    times[name].append(time.perf_counter() - t0)
            if r == 0:
                for f in files:
                    stem = os.path.splitext(os.path.basename(f))[0] + ".npy"
                    a = np.load(os.path.join(tmp, "toroid0", stem)).reshape(3, 224, 224)
                    b = np.load(os.path.join(tmp, "torchvision0", stem))
                    if not np.allclose(a, b, rtol=1e-5, atol=1e-5):
                        raise SystemExit("toroid differs from torchvision on %s (max %g)" % (f, abs(a - b).max()))
    rate = {k: len(files) / statistics.median(v) for k, v in times.items()}
    print("folder eval, %d JPEGs, 1 process: toroid %.0f img/s  torchvision %.0f img/s  | %.2fx" % (
        len(files), rate["toroid"], rate["torchvision"], rate["toroid"] / rate["torchvision"]))


if __name__ == "__main__":
    main()
