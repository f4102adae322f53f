#!/usr/bin/env python3
"""Folder throughput: images/s of `toroid apply PIPELINE IN_DIR OUT_DIR` (decode JPEG,
resize to 256x256 bilinear with antialias, convert to float32 in [0, 1], normalize, write
.npy) against a plain Pillow + NumPy loop doing the same per file and, where torchvision >= 0.15
is installed, torchvision.io.decode_jpeg + transforms.v2 (one torch thread per worker), each
with 1..N workers. `toroid-draft` is toroid with --draft (JPEGs decoded at a DCT scale the
resize allows: faster, not exact; its results' mean difference from the full decode's is
printed).
Makes the input folder first when it does not exist (JPEGs of common photo sizes with
smooth gradients and noise)."""

import argparse
import json
import multiprocessing
import os
import platform
import resource
import shutil
import subprocess
import sys
import time

import benchenv

benchenv.system_python("files", ["numpy", "PIL"], "python3-numpy python3-pil")
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

ROOT = benchenv.ROOT
MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]
PIPELINE = [
    {"op": "resize", "mode": "bilinear", "antialias": True, "size": [256, 256]},
    {"op": "convert", "dtype": "float32", "scale": True},
    {"op": "normalize", "mean": MEAN, "std": STD},
]
# Common photo sizes (width, height), landscape and portrait: toroid's compiled engine shares
# one program across all of them (sizes are run-time values).
SIZES = [(500, 375), (640, 480), (800, 600), (1024, 768), (1280, 720), (1600, 1200), (1920, 1080),
         (375, 500), (480, 640), (1080, 1920)]


def make_folder(path, count, seed=0):
    rng = np.random.default_rng(seed)
    os.makedirs(path, exist_ok=True)
    for i in range(count):
        w, h = SIZES[i % len(SIZES)]
        y, x = np.mgrid[0:h, 0:w].astype(np.float32)
        a, b, c = rng.uniform(0.5, 2.0, 3)
        img = np.stack([128 + 100 * np.sin(a * x / w * 6 + c), 128 + 100 * np.cos(b * y / h * 5),
                        (x + y) * 255 / (w + h)], -1)
        img += rng.normal(0, 12, (h, w, 3)).astype(np.float32)
        sub = os.path.join(path, "%02d" % (i // 50))
        os.makedirs(sub, exist_ok=True)
        Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(os.path.join(sub, "img%04d.jpg" % i),
                                                                    quality=90)


def list_jpegs(root):
    out = []
    for d, _, files in os.walk(root):
        out += [os.path.join(d, f) for f in files if f.lower().endswith((".jpg", ".jpeg"))]
    return sorted(out)


_MEAN = np.array(MEAN, np.float32)[:, None, None]
_STD = np.array(STD, np.float32)[:, None, None]


def pillow_one(args):
    src, dst = args
    img = Image.open(src).convert("RGB").resize((256, 256), Image.BILINEAR, reducing_gap=None)
    x = np.asarray(img, dtype=np.float32).transpose(2, 0, 1) / 255.0
    x = (x - _MEAN) / _STD
    np.save(dst, x[None])


_TV = None


def torchvision_one(args):
    """The same work through torchvision: decode_jpeg, v2 Resize(256x256, antialias),
    ToDtype(float32, scale), Normalize, np.save."""
    global _TV
    import torch
    if _TV is None:
        from torchvision.io import decode_jpeg, read_file
        from torchvision.transforms import v2
        torch.set_num_threads(1)
        _TV = (decode_jpeg, read_file, v2.Compose([v2.Resize((256, 256), antialias=True),
                                                   v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)]))
    decode_jpeg, read_file, t = _TV
    src, dst = args
    np.save(dst, t(decode_jpeg(read_file(src)))[None].numpy())


def have_torchvision_v2():
    try:
        from torchvision.transforms import v2  # noqa: F401  (>= 0.15)
        from torchvision.io import decode_jpeg  # noqa: F401
        return True
    except ImportError:
        return False


def cpu_seconds():
    """CPU time (user + system) of this process and its waited-for children so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_pillow(files, root, out, jobs, one=pillow_one):
    shutil.rmtree(out, ignore_errors=True)
    work = []
    for f in files:
        dst = os.path.join(out, os.path.splitext(os.path.relpath(f, root))[0] + ".npy")
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        work.append((f, dst))
    start, cpu = time.perf_counter(), cpu_seconds()
    if jobs == 1:
        for w in work:
            one(w)
    else:
        pool = multiprocessing.Pool(jobs)
        pool.map(one, work, chunksize=4)
        pool.close()
        pool.join()  # the workers' CPU time counts once they are waited for
    return time.perf_counter() - start, cpu_seconds() - cpu


def run_toroid(binary, root, out, jobs, env, draft=False):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [binary, "apply", json.dumps(PIPELINE), root, out, "--format", "npy", "--jobs", str(jobs)]
    if draft:
        cmd.append("--draft")
    start, cpu = time.perf_counter(), cpu_seconds()
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if r.returncode != 0:
        sys.exit("files: toroid failed (%d): %s" % (r.returncode, r.stderr.strip().splitlines()[-1:]))
    return elapsed, cpu_seconds() - cpu


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--dir", default="/tmp/toroid_files_bench/in", help="input folder (made when missing)")
    p.add_argument("--out", default="/tmp/toroid_files_bench/out", help="scratch output folder")
    p.add_argument("--count", type=int, default=200, help="images to make when the folder is missing")
    p.add_argument("--jobs", default="1,2", help="comma-separated worker counts")
    p.add_argument("--toroid", default=os.path.join(ROOT, "build", "toroid"), help="the toroid binary")
    p.add_argument("--repeat", type=int, default=3, help="runs per configuration (the best is kept)")
    p.add_argument("--json", help="write the results here")
    a = p.parse_args()

    if not os.path.isdir(a.dir):
        print("making %d JPEGs in %s" % (a.count, a.dir), file=sys.stderr)
        make_folder(a.dir, a.count)
    files = list_jpegs(a.dir)
    pixels = sum(Image.open(f).size[0] * Image.open(f).size[1] for f in files)
    print("%d JPEGs, %.2f megapixels on average; %s, %d cores" %
          (len(files), pixels / len(files) / 1e6, platform.processor() or platform.machine(), os.cpu_count()))

    # A cold run compiles each distinct input size once into the kernel cache (a scratch
    # cache folder here); the measured runs below load the kernels from it.
    env = dict(os.environ)
    env.setdefault("TOROID_CACHE_DIR", "/tmp/toroid_files_bench/kernel_cache")
    shutil.rmtree(env["TOROID_CACHE_DIR"], ignore_errors=True)
    all_jobs = [int(j) for j in a.jobs.split(",")]
    cold, _ = run_toroid(a.toroid, a.dir, a.out, max(all_jobs), env)
    print("toroid cold run (%d input sizes, one program for all): %.2f s" % (len({Image.open(f).size for f in files}), cold))
    engines = {"toroid": None, "toroid-draft": "draft", "pillow": pillow_one}
    if have_torchvision_v2():
        engines["torchvision"] = torchvision_one
    else:
        print("torchvision >= 0.15 not installed: no torchvision column", file=sys.stderr)
    print("command: %s apply PIPELINE %s %s --format npy --jobs N" % (a.toroid, a.dir, a.out))

    # Runs alternate between toroid and Pillow so that a busy moment of a shared machine
    # hits both; the best wall time of each is kept, with the CPU time of that run.
    results = []
    print("%-12s %5s %10s %9s %14s" % ("engine", "jobs", "images/s", "seconds", "CPU ms/image"))
    n = len(files)
    for jobs in all_jobs:
        runs = {name: [] for name in engines}
        for _ in range(a.repeat):
            for name, one in engines.items():
                if one is None or one == "draft":
                    runs[name].append(run_toroid(a.toroid, a.dir, a.out, jobs, env, draft=one == "draft"))
                else:
                    runs[name].append(run_pillow(files, a.dir, a.out, jobs, one))
        best = {}
        for name in engines:
            wall, cpu = min(runs[name])
            best[name] = wall
            print("%-12s %5d %10.1f %9.2f %14.1f" % (name, jobs, n / wall, wall, cpu / n * 1e3))
            results.append({"engine": name, "jobs": jobs, "images_per_s": n / wall, "seconds": wall,
                            "cpu_ms_per_image": cpu / n * 1e3})
        for name in engines:
            if name not in ("toroid", "toroid-draft"):
                print("%-12s %5d %9.2fx over %s (draft %.2fx)" % ("speed-up", jobs, best[name] / best["toroid"], name,
                                                               best[name] / best["toroid-draft"]))
    # How far the draft results are from the full decode's (normalized units; a level of
    # 8-bit is 1/255/0.226 = 0.017).
    full, draft = os.path.join(a.out, "full"), os.path.join(a.out, "draft")
    run_toroid(a.toroid, a.dir, full, max(all_jobs), env)
    run_toroid(a.toroid, a.dir, draft, max(all_jobs), env, draft=True)
    diffs = []
    for d, _, fs in os.walk(full):
        for f in fs:
            x = np.load(os.path.join(d, f))
            y = np.load(os.path.join(draft, os.path.relpath(os.path.join(d, f), full)))
            diffs.append(float(np.abs(x - y).mean()))
    print("draft vs full decode: mean |diff| %.4f (normalized units; 8-bit level 0.017), worst image %.4f" %
          (float(np.mean(diffs)), max(diffs)))
    print("load average at the end: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"images": len(files), "cold_seconds": cold, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
