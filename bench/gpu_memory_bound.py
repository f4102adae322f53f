#!/usr/bin/env python3
"""Memory-bound pipelines on CUDA tensors: toroid against PyTorch's own ops on the same
tensors, each timed with CUDA events (median of rounds, engines interleaved round by round),
and each one's bytes moved (read + written) per second as a share of a device-to-device copy
of 1 GiB measured in the same run. Needs PyTorch with CUDA.

    python3 bench/gpu_memory_bound.py [--rounds 15] [--reps 20] [--json FILE]

Rows: flips, a crop, dtype conversion and normalization of a 1080p frame, a mask upscale
(nearest-exact, batch 4), and the same on 4K frames (large enough to measure bandwidth)."""

import argparse
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

try:  # the package on PYTHONPATH (a packed build's), else this checkout's
    import toroid
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import toroid


def rows():
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    out = []
    for h, w, tag in ((1080, 1920, "1080p"), (2160, 3840, "4K")):
        u8 = torch.randint(0, 256, (1, 3, h, w), dtype=torch.uint8, device="cuda")
        f32 = torch.rand((1, 3, h, w), device="cuda")
        out += [
            ("hflip %s uint8 CF" % tag, u8, [{"op": "flip", "dims": [-1]}], lambda x: x.flip(-1)),
            ("vflip %s uint8 CF" % tag, u8, [{"op": "flip", "dims": [-2]}], lambda x: x.flip(-2)),
            ("hflip %s float32 CF" % tag, f32, [{"op": "flip", "dims": [-1]}], lambda x: x.flip(-1)),
            ("crop %s uint8 CF (aligned)" % tag, u8,
             [{"op": "crop", "top": 16, "left": 64, "height": h // 2, "width": w // 2}],
             lambda x, h=h, w=w: x[:, :, 16:16 + h // 2, 64:64 + w // 2].contiguous()),
            ("convert+normalize %s uint8->float32 CF" % tag, u8,
             [{"op": "convert", "dtype": "float32", "scale": True}, {"op": "normalize", "mean": mean, "std": std}],
             lambda x: ((x.float() / 255) - torch.tensor(mean, device="cuda").view(1, 3, 1, 1))
             / torch.tensor(std, device="cuda").view(1, 3, 1, 1)),
        ]
    mask = torch.randint(0, 21, (4, 1, 512, 512), dtype=torch.uint8, device="cuda")
    out.append(("nearest-exact mask 512->1024 batch 4 uint8", mask,
                [{"op": "resize", "mode": "nearest-exact", "size": [1024, 1024]}],
                lambda x: F.interpolate(x, size=(1024, 1024), mode="nearest-exact")))
    return out


def time_ms(fn, reps):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / reps


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    copy = statistics.median(time_ms(lambda: dst.copy_(src), 5) for _ in range(7))
    copy_gbps = 2 * src.numel() / (copy * 1e-3) / 1e9
    print("device: %s; device-to-device copy of 1 GiB: %.0f GB/s (read + write)" % (
        torch.cuda.get_device_name(), copy_gbps))
    print("%-46s %10s %10s %8s %9s %9s" % ("row", "toroid us", "torch us", "speedup", "toroid", "torch"))
    results = []
    for name, x, ops, ref in rows():
        p = toroid.Pipeline(ops)
        want = ref(x)
        got = p(x)
        torch.cuda.synchronize()
        exact = bool(torch.equal(got, want)) if got.dtype == torch.uint8 else bool(
            torch.allclose(got, want, rtol=1e-5, atol=1e-5))
        moved = x.numel() * x.element_size() + got.numel() * got.element_size()
        t_toroid, t_torch = [], []
        for _ in range(a.rounds):
            t_toroid.append(time_ms(lambda: p(x), a.reps))
            t_torch.append(time_ms(lambda: ref(x), a.reps))
        mt, mr = statistics.median(t_toroid), statistics.median(t_torch)
        share = lambda ms: moved / (ms * 1e-3) / 1e9 / copy_gbps  # noqa: E731
        print("%-46s %10.1f %10.1f %7.2fx %8.0f%% %8.0f%%%s" % (
            name, mt * 1e3, mr * 1e3, mr / mt, 100 * share(mt), 100 * share(mr), "" if exact else "  (DIFFERS)"))
        results.append({"row": name, "toroid_us": mt * 1e3, "torch_us": mr * 1e3, "bytes": moved,
                        "toroid_copy_share": share(mt), "torch_copy_share": share(mr), "same": exact})
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"copy_gbps": copy_gbps, "device": torch.cuda.get_device_name(), "rows": results}, f, indent=1)


if __name__ == "__main__":
    main()
