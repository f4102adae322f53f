#!/usr/bin/env python3
"""Makes toroid's conformance cases with PyTorch and torchvision (the versions results are
matched against: PyTorch 2.11, torchvision 0.26; CPU, one thread), and checks existing ones.

    python3 scripts/make_conformance.py --check [DIR]      # recompute DIR's expected results
    python3 scripts/make_conformance.py --out DIR [--table NAME ...] [--seed S]

A case is a folder `caseNNNN/` with `input.npy` (logical N, C, H, W; C-order), `pipeline.json`
(toroid's schema), `expected.npy` (PyTorch's result, logical, C-order) and, for grid_sample,
`grid.npy`; `cases.json` lists them with the layout the input is given in. Each op maps to the
PyTorch call toroid promises to equal (`torch_op` below): the mapping is the specification.

--check recomputes every case of a folder (default tests/data/conformance) from its input and
pipeline, on the input in the layout the case names, and compares with its expected.npy at the
folder's tolerances (uint8 equal, float32 within 1e-4): it proves that this script computes
what the committed cases hold. --out writes new cases from the case tables below (all by
default), numbered from --first."""

import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

try:
    import torchvision
    import torchvision.transforms.v2.functional as TF
except ImportError:  # the tables that need torchvision are skipped without it
    torchvision = TF = None

DTYPES = {name: getattr(torch, name) for name in ("uint8", "float32", "float16", "bfloat16", "uint16")
          if hasattr(torch, name)}


def torch_op(x, op, case_dir):
    """x (N, C, H, W) through one op of toroid's schema, as PyTorch/torchvision compute it."""
    kind = op["op"]
    if kind == "resize" and x.dtype in NARROW and op["mode"] in ("bilinear", "bicubic"):
        return narrow_resize(x, op, case_dir)
    if x.dtype == DTYPES.get("uint16") and (kind == "flip" or (kind == "resize" and op["mode"].startswith("nearest"))):
        # PyTorch 2.11 has no uint16 flip or nearest kernels: the same op on the values as
        # float32 (exact), cast back.
        return torch_op(x.float(), op, case_dir).to(torch.int32).to(torch.uint16)
    if kind == "resize":
        if "smaller_edge" in op or ("max_size" in op and "size" not in op):
            size = [op["smaller_edge"]] if "smaller_edge" in op else None
            interp = {"nearest": TF.InterpolationMode.NEAREST, "nearest-exact": TF.InterpolationMode.NEAREST_EXACT,
                      "bilinear": TF.InterpolationMode.BILINEAR, "bicubic": TF.InterpolationMode.BICUBIC}[op["mode"]]
            return TF.resize(x, size, interpolation=interp, max_size=op.get("max_size"),
                             antialias=op.get("antialias", False))
        kw = {}
        if op["mode"] in ("bilinear", "bicubic"):
            kw["align_corners"] = op.get("align_corners", False)
            kw["antialias"] = op.get("antialias", False)
        if "size" in op:
            return F.interpolate(x, size=tuple(op["size"]), mode=op["mode"], **kw)
        return F.interpolate(x, scale_factor=tuple(op["scale_factor"]), mode=op["mode"],
                             recompute_scale_factor=op.get("recompute_scale_factor", False), **kw)
    if kind == "flip":
        return x.flip(op["dims"])
    if kind == "affine":
        n, c, h, w = x.shape
        size = op.get("size", [h, w])
        theta = torch.tensor(op["theta"], dtype=torch.float32).expand(n, 2, 3)
        grid = F.affine_grid(theta, [n, c, size[0], size[1]], align_corners=op.get("align_corners", False))
        return F.grid_sample(x, grid, mode=op.get("mode", "bilinear"), padding_mode=op.get("padding_mode", "zeros"),
                             align_corners=op.get("align_corners", False))
    if kind == "grid_sample":
        grid = torch.from_numpy(np.load(os.path.join(case_dir, op["grid"])))
        if x.dtype in (torch.float16, torch.bfloat16):
            return narrow_grid_sample(x, grid.to(x.dtype), op)
        return F.grid_sample(x, grid, mode=op.get("mode", "bilinear"), padding_mode=op.get("padding_mode", "zeros"),
                             align_corners=op.get("align_corners", False))
    if kind == "crop":
        return TF.crop(x, op["top"], op["left"], op["height"], op["width"])
    if kind == "center_crop":
        size = op["size"] if isinstance(op["size"], list) else [op["size"], op["size"]]
        return TF.center_crop(x, size)
    if kind == "convert":
        dst = DTYPES[op["dtype"]]
        if x.is_floating_point() and not dst.is_floating_point and op.get("scale", False):
            # to_dtype multiplies by max + 1 - 1e-3 in the input's dtype, then casts; where that
            # product reaches max + 1 (1.0 in float16, or any float to uint16: 65535.999 rounds
            # to 65536 in float32), C++'s cast is undefined and x86 wraps to 0. toroid saturates
            # (docs/reference.md), which is to_dtype's value everywhere the cast is defined.
            m = float(torch.iinfo(dst).max)
            y = x.mul(m + 1.0 - 1e-3).float().clamp(0, m)
            return y.to(torch.int32).to(dst)
        if x.dtype == torch.uint16 and dst == torch.float16 and op.get("scale", False):
            # to_dtype casts to float16 first, where 65520 and above overflow to inf (white
            # becomes inf); toroid scales in float32 and rounds once (docs/reference.md).
            return (x.float() * float(np.float32(1 / 65535))).to(torch.float16)
        return TF.to_dtype(x, dst, scale=op.get("scale", False))
    if kind == "normalize":
        return TF.normalize(x, op["mean"], op["std"])
    if kind == "perspective":
        interp = {"nearest": TF.InterpolationMode.NEAREST, "bilinear": TF.InterpolationMode.BILINEAR}[op["mode"]]
        fill = op.get("fill")
        return TF.perspective(x, None, None, interpolation=interp, fill=fill[0] if fill and len(fill) == 1 else fill,
                              coefficients=op["coefficients"])
    if kind == "invert":
        return TF.invert(x)
    if kind == "posterize":
        return TF.posterize(x, op["bits"])
    if kind == "solarize":
        return TF.solarize(x, op["threshold"])
    if kind == "adjust_brightness":
        return TF.adjust_brightness(x, op["factor"])
    if kind == "adjust_saturation":
        return TF.adjust_saturation(x, op["factor"])
    if kind == "adjust_contrast":
        return TF.adjust_contrast(x, op["factor"])
    if kind == "rgb_to_grayscale":
        return TF.rgb_to_grayscale(x, num_output_channels=op.get("num_output_channels", 1))
    if kind == "pad":
        p = op["padding"]
        p = [p] if not isinstance(p, list) else p
        p = p * 4 if len(p) == 1 else (p * 2 if len(p) == 2 else p)  # [left, top, right, bottom]
        fill = op.get("fill", 0)
        if isinstance(fill, list) and len(fill) == 1:
            fill = fill[0]
        return TF.pad(x, p, fill=fill, padding_mode=op.get("mode", "constant"))
    if kind == "erase":
        # The value as torchvision's RandomErasing makes it: a float32 tensor (C or 1, 1, 1).
        v = op["value"] if isinstance(op["value"], list) else [op["value"]]
        v = torch.tensor([float(a) for a in v], dtype=torch.float32)[:, None, None]
        return TF.erase(x, op["top"], op["left"], op["height"], op["width"], v)
    if kind == "gaussian_blur":
        return TF.gaussian_blur(x, op["kernel_size"], op.get("sigma"))
    if kind == "adjust_sharpness":
        return TF.adjust_sharpness(x, op["factor"])
    if kind == "adjust_gamma":
        return TF.adjust_gamma(x, op["gamma"], op.get("gain", 1.0))
    if kind == "adjust_hue":
        return TF.adjust_hue(x, op["factor"])
    if kind == "autocontrast":
        return TF.autocontrast(x)
    if kind == "equalize":
        return TF.equalize(x)
    raise SystemExit("make_conformance: no PyTorch mapping for op '%s'" % kind)


NARROW = tuple(DTYPES[n] for n in ("float16", "bfloat16", "uint16") if n in DTYPES)


def narrow_resize(x, op, case_dir):
    """Bilinear and bicubic resizes of float16, bfloat16 and uint16 images compute in float32 and
    round once: torchvision.v2's resize (it casts these dtypes to float32 and back), which this
    asserts wherever its arguments can express the case. uint16 rounds half to even and
    clamps, as the uint8 path does; torchvision's own cast truncates and wraps negative bicubic
    overshoots (docs/reference.md)."""
    y = torch_op(x.float(), op, case_dir)
    if x.dtype == torch.uint16:
        return y.round().clamp(0, 65535).to(torch.int32).to(torch.uint16)
    y = y.to(x.dtype)
    if "size" in op and not op.get("align_corners", False) and x.dtype != torch.uint16:
        interp = {"bilinear": TF.InterpolationMode.BILINEAR, "bicubic": TF.InterpolationMode.BICUBIC}[op["mode"]]
        tv = TF.resize(x, list(op["size"]), interpolation=interp, antialias=op.get("antialias", False))
        assert torch.equal(tv, y), "narrow resize differs from torchvision's for %s" % op
    return y


def narrow_grid_sample(x, grid, op):
    """F.grid_sample of a float16 or bfloat16 image (and a grid of its dtype): the samples in
    float32 from the grid's values, rounded once. That is PyTorch's CUDA answer, which this
    asserts where CUDA is there (nearest and bilinear equal; bicubic within two units in the
    last place of the image's largest values, as that kernel rounds its row sums to the dtype); PyTorch's CPU kernel computes the
    coordinates in the image's dtype and is off by up to a pixel (printed, docs/reference.md)."""
    kw = dict(mode=op.get("mode", "bilinear"), padding_mode=op.get("padding_mode", "zeros"),
              align_corners=op.get("align_corners", False))
    y = F.grid_sample(x.float(), grid.float(), **kw).to(x.dtype)
    if torch.cuda.is_available():
        cuda = F.grid_sample(x.cuda(), grid.cuda(), **kw).cpu()
        # bicubic: its CUDA kernel rounds the four row sums to the image's dtype, each within
        # half a unit in the last place of the image's largest values
        top = float(x.float().abs().max())
        ulp = 2.0 ** (np.floor(np.log2(max(top, 2.0 ** -14))) - (10 if x.dtype == torch.float16 else 7))
        d = (cuda.float() - y.float()).abs()
        assert float(d.max()) <= (2 * ulp if kw["mode"] == "bicubic" else 0), \
            "grid_sample of %s differs from PyTorch's CUDA answer for %s: %g" % (x.dtype, op, d.max())
        cpu = F.grid_sample(x, grid, **kw)
        print("  %s %s: PyTorch's CPU kernel is off by up to %g (%d of %d values)" % (
            x.dtype, kw, (cpu.float() - y.float()).abs().max(), int((cpu != y).sum()), y.numel()))
    return y


def run_pipeline(x, pipeline, case_dir, layout, dtype=None, with_dtype=False):
    t = torch.from_numpy(np.ascontiguousarray(x))
    if dtype is not None and DTYPES[dtype] != t.dtype:
        t = t.to(DTYPES[dtype])  # bfloat16, stored as float32 (exactly)
    if layout == "channels_last":
        t = t.contiguous(memory_format=torch.channels_last)
    for op in pipeline:
        t = torch_op(t, op, case_dir)
    t = t.contiguous()
    y = t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
    return (y, str(t.dtype).replace("torch.", "")) if with_dtype else y


def compare(got, want):
    """None when equal within the tolerances, else a one-line difference."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return "shape/dtype %s %s, expected %s %s" % (got.shape, got.dtype, want.shape, want.dtype)
    if want.dtype == np.uint8:
        d = np.abs(got.astype(np.int64) - want.astype(np.int64))
        return None if d.max(initial=0) == 0 else "max |diff| %d at %d elements" % (d.max(), int((d > 0).sum()))
    if want.dtype == np.uint16:
        d = np.abs(got.astype(np.int64) - want.astype(np.int64))
        return None if d.max(initial=0) == 0 else "max |diff| %d at %d elements" % (d.max(), int((d > 0).sum()))
    g, w = got.astype(np.float64), want.astype(np.float64)
    if not np.array_equal(np.isnan(g), np.isnan(w)):
        return "NaN pattern differs"
    d = np.abs(g - w)[~np.isnan(w)]
    return None if d.max(initial=0) <= 1e-4 else "max |diff| %g" % d.max()


def check(folder):
    with open(os.path.join(folder, "cases.json")) as f:
        cases = json.load(f)["cases"]
    bad = 0
    for c in cases:
        d = os.path.join(folder, c["name"])
        x = np.load(os.path.join(d, "input.npy"))
        try:
            got = run_pipeline(x, c["pipeline"], d, c["input_layout"], c.get("dtype"))
            err = compare(got, np.load(os.path.join(d, "expected.npy")))
        except Exception as e:  # this PyTorch cannot compute the case (older releases)
            err = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
        if err:
            bad += 1
            print("%s %s: %s" % (c["name"], json.dumps(c["pipeline"]), err))
    print("%d passed, %d failed" % (len(cases) - bad, bad))
    return 1 if bad else 0


# ---- Case tables: (pipeline, input dtype, input shape, layout) per op --------------------------

def table_torchvision_ops(rng):
    """crop (inside and past the image), center_crop (smaller and larger than the image),
    convert (both directions, scaled or not), normalize, and torchvision's Resize(n, max_size),
    alone and as the classification transforms chain them."""
    out = []
    for dtype in ("uint8", "float32"):
        for layout in ("contiguous", "channels_last"):
            h, w = int(rng.integers(9, 60)), int(rng.integers(9, 60))
            shape = [int(rng.integers(1, 3)), int(rng.choice([1, 3, 4])), h, w]
            out.append(([{"op": "crop", "top": int(rng.integers(0, h // 2)), "left": int(rng.integers(0, w // 2)),
                          "height": int(rng.integers(1, h // 2 + 1)), "width": int(rng.integers(1, w // 2 + 1))}],
                        dtype, shape, layout))
            out.append(([{"op": "crop", "top": -3, "left": w - 4, "height": h, "width": 9}], dtype, shape, layout))
            out.append(([{"op": "center_crop", "size": [max(1, h - 5), max(1, w - 7)]}], dtype, shape, layout))
            out.append(([{"op": "center_crop", "size": [h + 6, w + 3]}], dtype, shape, layout))
            out.append(([{"op": "resize", "mode": "bilinear", "antialias": True, "smaller_edge": int(rng.integers(4, 40))}],
                        dtype, shape, layout))
            out.append(([{"op": "resize", "mode": "bicubic", "antialias": True, "smaller_edge": 20, "max_size": 24}],
                        dtype, shape, layout))
            if dtype == "uint8":
                out.append(([{"op": "convert", "dtype": "float32", "scale": True}], dtype, shape, layout))
                out.append(([{"op": "convert", "dtype": "float32", "scale": False}], dtype, shape, layout))
                out.append(([{"op": "resize", "mode": "bilinear", "antialias": True, "smaller_edge": 32},
                             {"op": "center_crop", "size": 28}, {"op": "convert", "dtype": "float32", "scale": True},
                             {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}],
                            dtype, [shape[0], 3, h, w], layout))
            else:
                out.append(([{"op": "convert", "dtype": "uint8", "scale": True}], dtype, shape, layout))
                out.append(([{"op": "normalize", "mean": [0.5] * shape[1], "std": [0.25] * shape[1]}], dtype, shape,
                            layout))
    return out


def torch_fma_flags():
    """(grid_fma, sample_fma): whether this PyTorch's CPU bmm sums torchvision's warp grids
    with fused multiply-adds, and whether its grid_sample kernel fuses the unnormalize and the
    bilinear sum (the two ways toroid's warp ops round, their grid_fma and sample_fma fields),
    each from one small computation compared with the every-step-rounded form."""
    f32 = np.float32
    xs = np.arange(12, dtype=f32) - f32(5.5)
    base = np.stack(np.broadcast_arrays(xs[None, :], xs[:, None], f32(1)), -1).reshape(-1, 3)
    r = (np.array([[0.1, -0.3], [0.7, 0.9], [0.013, 0.2]]) / 3.7).astype(f32)
    got = torch.bmm(torch.from_numpy(base)[None], torch.from_numpy(r)[None])[0].numpy()
    grid_fma = not np.array_equal(got, (base[:, :1] * r[0] + base[:, 1:2] * r[1]) + r[2])
    rng = np.random.default_rng(0)
    h, w = 9, 11
    img = rng.integers(0, 256, size=(h, w)).astype(f32)
    g = (rng.random((1, 8, 16, 2)) * 2.4 - 1.2).astype(f32)
    got = F.grid_sample(torch.from_numpy(img)[None, None], torch.from_numpy(g), mode="bilinear", padding_mode="zeros",
                        align_corners=False)[0, 0].numpy()
    x = (g[0, ..., 0] + f32(1)) * f32(w / 2) - f32(0.5)
    y = (g[0, ..., 1] + f32(1)) * f32(h / 2) - f32(0.5)
    x0, y0 = np.floor(x), np.floor(y)
    e_w, n_s = x - x0, y - y0
    e, s = f32(1) - e_w, f32(1) - n_s
    ix, iy = x0.astype(np.int64), y0.astype(np.int64)

    def tap(yy, xx):
        ok = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
        return np.where(ok, img[np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)], f32(0))
    rounded = ((tap(iy, ix) * (s * e) + tap(iy, ix + 1) * (s * e_w)) + tap(iy + 1, ix) * (n_s * e)) + \
        tap(iy + 1, ix + 1) * (n_s * e_w)
    return grid_fma, not np.array_equal(got, rounded)


def perspective_coefficients(startpoints, endpoints):
    """torchvision's _get_perspective_coeffs: least squares in float64, rounded to float32."""
    a = torch.zeros(8, 8, dtype=torch.float64)
    for i, (p1, p2) in enumerate(zip(endpoints, startpoints)):
        a[2 * i, :] = torch.tensor([p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]])
        a[2 * i + 1, :] = torch.tensor([0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]])
    b = torch.tensor(startpoints, dtype=torch.float64).view(8)
    return torch.linalg.lstsq(a, b, driver="gels").solution.to(torch.float32).tolist()


def random_perspective(rng, h, w, mode, fill, grid_fma, sample_fma):
    """A perspective op moving an h x w image's corners inwards by up to a quarter of its
    size, as RandomPerspective(distortion_scale=0.5) moves them."""
    dh, dw = max(1, h // 4), max(1, w // 4)
    end = [[int(rng.integers(0, dw + 1)), int(rng.integers(0, dh + 1))],
           [w - 1 - int(rng.integers(0, dw + 1)), int(rng.integers(0, dh + 1))],
           [w - 1 - int(rng.integers(0, dw + 1)), h - 1 - int(rng.integers(0, dh + 1))],
           [int(rng.integers(0, dw + 1)), h - 1 - int(rng.integers(0, dh + 1))]]
    start = [[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]]
    op = {"op": "perspective", "coefficients": perspective_coefficients(start, end), "mode": mode,
          "grid_fma": grid_fma, "sample_fma": sample_fma}
    if fill is not None:
        op["fill"] = fill
    return op


def table_warp_ops(rng):
    """torchvision's perspective: corners moved as RandomPerspective moves them, nearest and
    bilinear, without and with fills, on uint8 and float32 images of both layouts, grids
    under and over bmm's small-matrix size."""
    grid_fma, sample_fma = torch_fma_flags()
    out = []
    for dtype in ("uint8", "float32"):
        for layout in ("contiguous", "channels_last"):
            for mode in ("nearest", "bilinear"):
                for fill in (None, [0.0], [10.0, 200.0, 77.5]):
                    h, w = (int(rng.integers(4, 7)), int(rng.integers(4, 9))) if fill == [0.0] else \
                        (int(rng.integers(20, 60)), int(rng.integers(20, 60)))
                    op = random_perspective(rng, h, w, mode, fill, grid_fma, sample_fma)
                    out.append(([op], dtype, [int(rng.integers(1, 3)), 3, h, w], layout))
    return out


def table_colour_ops(rng):
    """torchvision.transforms.v2.functional's colour ops: invert, posterize (0, some, all 8
    bits), solarize (thresholds at 0, inside, at the dtype's maximum, and a fraction for uint8),
    adjust_brightness / saturation / contrast (factors 0, 1, below and above 1) and
    rgb_to_grayscale (1 or 3 output channels), on uint8 and float32 (in [0, 1]), contiguous and
    channels-last, 1 and 3 channels, batches of 1 and 2; then a ColorJitter-like chain."""
    out = []
    for dtype in ("uint8", "float32"):
        top = 255 if dtype == "uint8" else 1.0
        for layout in ("contiguous", "channels_last"):
            for channels in (1, 3):
                h, w = int(rng.integers(5, 40)), int(rng.integers(5, 40))
                shape = [int(rng.integers(1, 3)), channels, h, w]
                ops = [{"op": "invert"}]
                ops += [{"op": "posterize", "bits": b} for b in (0, int(rng.integers(1, 8)), 8)]
                thresholds = [0, top / 2, top] + ([100.5] if dtype == "uint8" else [float(rng.random())])
                ops += [{"op": "solarize", "threshold": t} for t in thresholds]
                for name in ("adjust_brightness", "adjust_saturation", "adjust_contrast"):
                    ops += [{"op": name, "factor": f} for f in (0, 1, round(float(rng.uniform(0.1, 0.9)), 4),
                                                                  round(float(rng.uniform(1.1, 3.0)), 4))]
                ops += [{"op": "rgb_to_grayscale", "num_output_channels": n} for n in (1, 3)]
                out += [([op], dtype, shape, layout) for op in ops]
                if channels == 3:
                    out.append(([{"op": "adjust_brightness", "factor": 1.3}, {"op": "adjust_contrast", "factor": 0.6},
                                 {"op": "adjust_saturation", "factor": 1.7}, {"op": "rgb_to_grayscale",
                                                                              "num_output_channels": 3}],
                                dtype, shape, layout))
    return out


def table_pad_erase(rng):
    """pad in each mode (positive, negative and mixed paddings, reflect up to the size - 1,
    symmetric up to the size), constant fills (one value, truncated for uint8; one per channel,
    wrapping modulo 256 for uint8), and erase (inside, at and past the edges, negative starts,
    empty, one value or one per channel), on uint8 and float32, contiguous and channels-last,
    1 and 3 channels; then chained as RandomCrop(padding, padding_mode) and a training
    recipe's resize, crop and erase chain them."""
    out = []
    for dtype in ("uint8", "float32"):
        for layout in ("contiguous", "channels_last"):
            for c in (1, 3):
                h, w = int(rng.integers(9, 40)), int(rng.integers(9, 40))
                shape = [int(rng.integers(1, 3)), c, h, w]
                u8 = dtype == "uint8"

                def fills():
                    if c == 3:
                        return [[5, 300, -1.5], [127.99999999, 0.5, 255]] if u8 else [[0.25, -1.5, 3.0]]
                    return [[7.9]] if u8 else [[-0.125]]
                for fill in [0, 127.9 if u8 else 0.3] + fills():
                    out.append(([{"op": "pad", "padding": [int(rng.integers(1, 6)), int(rng.integers(0, 6)),
                                                          int(rng.integers(0, 6)), int(rng.integers(1, 6))],
                                  "fill": fill}], dtype, shape, layout))
                out.append(([{"op": "pad", "padding": [-2, 3, 4, -1], "fill": fills()[0]}], dtype, shape, layout))
                out.append(([{"op": "pad", "padding": [-1, -2, -3, -4]}], dtype, shape, layout))
                out.append(([{"op": "pad", "padding": 3, "fill": 255 if u8 else 1e30}], dtype, shape, layout))
                for mode in ("edge", "reflect", "symmetric"):
                    out.append(([{"op": "pad", "padding": [int(rng.integers(0, 5)), int(rng.integers(0, 5)),
                                                          int(rng.integers(0, 5)), int(rng.integers(0, 5))],
                                  "mode": mode}], dtype, shape, layout))
                    out.append(([{"op": "pad", "padding": [-3, 2, 4, -2], "mode": mode}], dtype, shape, layout))
                    out.append(([{"op": "pad", "padding": [2, -4, -1, 5], "mode": mode}], dtype, shape, layout))
                # The largest paddings each mode takes.
                out.append(([{"op": "pad", "padding": [w - 1, h - 1, w - 1, h - 1], "mode": "reflect"}], dtype, shape,
                            layout))
                out.append(([{"op": "pad", "padding": [w, h, w, h], "mode": "symmetric"}], dtype, shape, layout))
                out.append(([{"op": "pad", "padding": [-2, 0, w - 2, 1], "mode": "symmetric"}], dtype, shape, layout))
                out.append(([{"op": "pad", "padding": [2 * w, h, 1, 2 * h], "mode": "edge"}], dtype, shape, layout))
                value = [0.0, 127.5, 255.0] if (u8 and c == 3) else ([8.9] if u8 else ([0.5, -1.25, 2.0] if c == 3 else [-0.75]))
                top, left = int(rng.integers(0, h - 3)), int(rng.integers(0, w - 3))
                for region in ((top, left, int(rng.integers(1, h - top)), int(rng.integers(1, w - left))),
                               (h - 3, w - 4, 10, 10),          # past the bottom-right edge: clipped
                               (0, 0, h, w),                    # the whole image
                               (-4, -6, 3, 20),                 # negative starts count from the end
                               (-2, 1, 5, 3),                   # -2:3, empty
                               (2, 3, 0, 4)):                   # empty
                    for v in (value, [0.0] if not u8 else [255.5]):
                        out.append(([{"op": "erase", "top": region[0], "left": region[1], "height": region[2],
                                      "width": region[3], "value": v}], dtype, shape, layout))
                # RandomCrop(size, padding, fill, padding_mode): pad, then crop inside.
                out.append(([{"op": "pad", "padding": [4, 4, 4, 4], "mode": "reflect" if min(h, w) > 4 else "edge"},
                             {"op": "crop", "top": 3, "left": 5, "height": h, "width": w}], dtype, shape, layout))
                out.append(([{"op": "pad", "padding": [2, 3, 2, 3], "fill": fills()[-1]},
                             {"op": "crop", "top": 1, "left": 0, "height": h + 2, "width": w + 1},
                             {"op": "flip", "dims": [3]}], dtype, shape, layout))
                # A training recipe: resized crop, flip, erase.
                out.append(([{"op": "crop", "top": 1, "left": 2, "height": h - 3, "width": w - 4},
                             {"op": "resize", "mode": "bilinear", "antialias": True, "size": [16, 16]},
                             {"op": "flip", "dims": [3]},
                             {"op": "erase", "top": 3, "left": 4, "height": 6, "width": 5, "value": value}],
                            dtype, shape, layout))
    return out


def table_blur_ops(rng):
    """gaussian_blur (square and rectangular kernels from 1 to 23 taps, sigma given per axis,
    as one number, tiny, large, or left to the kernel size's default) and adjust_sharpness
    (factors 0, 1, below and above 1; images of 2 rows or columns, which torchvision returns as
    they are), on uint8 and float32 (in [0, 1]), contiguous and channels-last, 1 and 3 channels;
    then chained with a crop, a resize, a flip and a normalize."""
    out = []
    for dtype in ("uint8", "float32"):
        for layout in ("contiguous", "channels_last"):
            for channels in (1, 3):
                h, w = int(rng.integers(12, 40)), int(rng.integers(12, 40))
                shape = [int(rng.integers(1, 3)), channels, h, w]
                blurs = [([3, 3], None), ([5, 3], [0.5, 0.5]), ([1, 7], [1.3, 2.1]), (3, 0.1), ([9, 9], [5.0, 0.8]),
                         ([7, 5], round(float(rng.uniform(0.1, 2.0)), 4)), ([11, 11], None)]
                for ks, sigma in blurs:
                    op = {"op": "gaussian_blur", "kernel_size": ks}
                    if sigma is not None:
                        op["sigma"] = sigma
                    out.append(([op], dtype, shape, layout))
                out.append(([{"op": "gaussian_blur", "kernel_size": [23, 23], "sigma": [1.7, 1.7]}], dtype,
                            [1, channels, int(rng.integers(24, 40)), int(rng.integers(24, 40))], layout))
                for f in (0, 1, round(float(rng.uniform(0.1, 0.9)), 4), round(float(rng.uniform(1.1, 3.0)), 4)):
                    out.append(([{"op": "adjust_sharpness", "factor": f}], dtype, shape, layout))
                out.append(([{"op": "adjust_sharpness", "factor": 2.0}], dtype, [1, channels, 2, 9], layout))
                out.append(([{"op": "adjust_sharpness", "factor": 2.0}], dtype, [1, channels, 3, 3], layout))
                out.append(([{"op": "crop", "top": 1, "left": 2, "height": h - 3, "width": w - 4},
                             {"op": "gaussian_blur", "kernel_size": [5, 5], "sigma": [1.1, 1.1]},
                             {"op": "flip", "dims": [3]}], dtype, shape, layout))
                chain = [{"op": "resize", "mode": "bilinear", "antialias": True, "size": [16, 20]},
                         {"op": "adjust_sharpness", "factor": 1.8}]
                if dtype == "float32":
                    chain.append({"op": "normalize", "mean": [0.485] * channels, "std": [0.229] * channels})
                out.append((chain, dtype, shape, layout))
    return out


def table_tone_ops(rng):
    """adjust_gamma (gammas 0, below and above 1, with and without a gain), adjust_hue (factors
    -0.5 to 0.5), autocontrast and equalize (random images, and constant ones made by a zero
    brightness, uneven histograms made by posterize), on uint8 and float32 (in [0, 1]),
    contiguous and channels-last, 1 and 3 channels; then a ColorJitter-like chain with hue."""
    out = []
    for dtype in ("uint8", "float32"):
        for layout in ("contiguous", "channels_last"):
            for channels in (1, 3):
                h, w = int(rng.integers(5, 40)), int(rng.integers(5, 40))
                shape = [int(rng.integers(1, 3)), channels, h, w]
                for g, gain in ((0.0, 1.0), (0.5, 1.0), (1.0, 1.0), (2.0, 1.0), (2.2, 1.0),
                                (round(float(rng.uniform(0.2, 0.9)), 4), 1.0), (0.8, 1.3), (1.7, 0.6)):
                    op = {"op": "adjust_gamma", "gamma": g}
                    if gain != 1.0:
                        op["gain"] = gain
                    out.append(([op], dtype, shape, layout))
                for f in (-0.5, -0.23, 0.0, round(float(rng.uniform(0.01, 0.49)), 4), 0.5):
                    out.append(([{"op": "adjust_hue", "factor": f}], dtype, shape, layout))
                for name in ("autocontrast", "equalize"):
                    out.append(([{"op": name}], dtype, shape, layout))
                    out.append(([{"op": "adjust_brightness", "factor": 0}, {"op": name}], dtype, shape, layout))
                    out.append(([{"op": "posterize", "bits": 3} if dtype == "uint8" else
                                 {"op": "adjust_gamma", "gamma": 3.0}, {"op": name}], dtype, shape, layout))
                    out.append(([{"op": "crop", "top": 1, "left": 1, "height": 1, "width": 2}, {"op": name}],
                                dtype, shape, layout))
                if channels == 3:
                    out.append(([{"op": "adjust_brightness", "factor": 1.2}, {"op": "adjust_hue", "factor": 0.07},
                                 {"op": "adjust_contrast", "factor": 0.7}, {"op": "adjust_saturation", "factor": 1.4}],
                                dtype, shape, layout))
    return out


def table_narrow_types(rng):
    """float16, bfloat16 and uint16 images (stored narrow, computed in float32): flips, crops,
    pads, nearest resizes (copies), bilinear and bicubic resizes with and without antialias
    (float32 compute, one rounding), to_dtype between every pair of the five dtypes (scaled
    or not), normalize (torchvision's: mean and std in the image's dtype, each step rounded
    to it), and the pipelines that use them: an 8-bit image to a normalized half tensor, a
    16-bit image to an 8-bit thumbnail."""
    out = []
    dtypes = ("uint8", "float32", "float16", "bfloat16", "uint16")
    for dtype in ("float16", "bfloat16", "uint16"):
        for layout in ("contiguous", "channels_last"):
            h, w = int(rng.integers(9, 50)), int(rng.integers(9, 50))
            c = int(rng.choice([1, 3]))
            shape = [int(rng.integers(1, 3)), c, h, w]
            u16 = dtype == "uint16"
            out.append(([{"op": "flip", "dims": [-1]}], dtype, shape, layout))
            out.append(([{"op": "flip", "dims": [-2, -1]}], dtype, shape, layout))
            out.append(([{"op": "crop", "top": 2, "left": 1, "height": h - 4, "width": w - 3}], dtype, shape, layout))
            out.append(([{"op": "center_crop", "size": [h + 4, w + 3]}], dtype, shape, layout))
            out.append(([{"op": "pad", "padding": [2, 1, 3, 4], "fill": 300.7 if u16 else 0.1}], dtype, shape, layout))
            out.append(([{"op": "pad", "padding": [3, 2, 1, 2], "mode": "reflect"}], dtype, shape, layout))
            for mode in ("nearest", "nearest-exact"):
                out.append(([{"op": "resize", "mode": mode, "size": [h * 2 - 1, w // 2 + 1]}], dtype, shape, layout))
            for mode in ("bilinear", "bicubic"):
                for aa in (False, True):
                    out.append(([{"op": "resize", "mode": mode, "antialias": aa, "size": [h // 2 + 1, w + 7]}],
                                dtype, shape, layout))
                out.append(([{"op": "resize", "mode": mode, "align_corners": True, "scale_factor": [1.5, 0.7]}],
                            dtype, shape, layout))
            for dst in dtypes:
                if dst != dtype:
                    for scale in (True, False):
                        out.append(([{"op": "convert", "dtype": dst, "scale": scale}], dtype, shape, layout))
            if not u16:
                out.append(([{"op": "normalize", "mean": [0.485, 0.456, 0.406][:c], "std": [0.229, 0.224, 0.225][:c]}],
                            dtype, shape, layout))
        for dst in ("float16", "bfloat16", "uint16"):
            out.append(([{"op": "convert", "dtype": dst, "scale": True}], "uint8", [1, 3, 13, 17], "contiguous"))
            out.append(([{"op": "convert", "dtype": dst, "scale": True}], "float32", [1, 3, 13, 17], "channels_last"))
        # uint8 image -> resized, cropped, normalized half tensor (an AMP model's input)
        out.append(([{"op": "resize", "mode": "bilinear", "antialias": True, "smaller_edge": 24},
                     {"op": "center_crop", "size": 20}, {"op": "convert", "dtype": dtype, "scale": True}]
                    + ([] if dtype == "uint16" else
                       [{"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}]),
                    "uint8", [2, 3, 37, 29], "channels_last"))
    # a 16-bit image to an 8-bit thumbnail
    out.append(([{"op": "resize", "mode": "bicubic", "antialias": True, "size": [11, 13]},
                 {"op": "convert", "dtype": "uint8", "scale": True}], "uint16", [1, 3, 40, 52], "channels_last"))
    out.append(([{"op": "convert", "dtype": "float16", "scale": True}, {"op": "flip", "dims": [-1]},
                 {"op": "resize", "mode": "bilinear", "antialias": True, "size": [17, 19]}],
                "uint16", [2, 1, 33, 41], "contiguous"))
    return out


def table_narrow_warps(rng):
    """uint16 images through torchvision's perspective (nearest and bilinear, with and
    without fills) and gaussian_blur: computed in float32 and rounded back, as torchvision
    handles integer images there."""
    grid_fma, sample_fma = torch_fma_flags()
    out = []
    for layout in ("contiguous", "channels_last"):
        for mode in ("nearest", "bilinear"):
            for fill in (None, [1000.0, 65535.0, 300.5]):
                h, w = int(rng.integers(20, 50)), int(rng.integers(20, 50))
                op = random_perspective(rng, h, w, mode, fill, grid_fma, sample_fma)
                out.append(([op], "uint16", [int(rng.integers(1, 3)), 3, h, w], layout))
        for ks, sigma in (([5, 5], [1.1, 1.1]), ([3, 7], [0.6, 2.0]), ([9, 9], None)):
            op = {"op": "gaussian_blur", "kernel_size": ks}
            if sigma is not None:
                op["sigma"] = sigma
            out.append(([op], "uint16", [int(rng.integers(1, 3)), int(rng.choice([1, 3])), int(rng.integers(12, 40)),
                                          int(rng.integers(12, 40))], layout))
    return out


def table_narrow_grid(rng):
    """F.grid_sample of float16 and bfloat16 images with a grid of their dtype (a float16
    grid.npy, or float32 holding bfloat16 values): nearest, bilinear and bicubic, each padding
    mode, with and without align_corners, both layouts; grids reaching past the image."""
    out = []
    k = 0
    for dtype in ("float16", "bfloat16"):
        for layout in ("contiguous", "channels_last"):
            for mode in ("nearest", "bilinear", "bicubic"):
                for ac in (False, True):
                    n, c = int(rng.integers(1, 3)), int(rng.choice([1, 3]))
                    h, w = int(rng.integers(9, 40)), int(rng.integers(9, 40))
                    gh, gw = int(rng.integers(5, 30)), int(rng.integers(5, 30))
                    g = torch.from_numpy((rng.random((n, gh, gw, 2)) * 2.4 - 1.2).astype(np.float32)).to(DTYPES[dtype])
                    grid = g.numpy() if dtype == "float16" else g.float().numpy()
                    op = {"op": "grid_sample", "grid": "grid.npy", "mode": mode,
                          "padding_mode": ("zeros", "border", "reflection")[k % 3], "align_corners": ac}
                    k += 1
                    out.append(([op], dtype, [n, c, h, w], layout, {"grid.npy": grid}))
    return out


TABLES = {"torchvision_ops": table_torchvision_ops, "warp_ops": table_warp_ops, "colour_ops": table_colour_ops,
          "pad_erase": table_pad_erase, "blur_ops": table_blur_ops, "tone_ops": table_tone_ops,
          "narrow_types": table_narrow_types, "narrow_warps": table_narrow_warps,
          "narrow_grid": table_narrow_grid}


def make_input(rng, dtype, shape):
    if dtype == "uint8":
        return rng.integers(0, 256, shape, dtype=np.uint8)
    if dtype == "uint16":
        return rng.integers(0, 65536, shape, dtype=np.uint16)
    x = rng.standard_normal(shape).astype(np.float32) * 4
    if dtype == "float32":
        return x
    if dtype == "float16":
        return x.astype(np.float16)
    if dtype == "bfloat16":  # stored as float32 holding bfloat16 values
        return torch.from_numpy(x).to(torch.bfloat16).float().numpy()
    raise SystemExit("make_conformance: inputs of %s are not written yet" % dtype)


def generate(out, tables, seed, first):
    rng = np.random.default_rng(seed)
    os.makedirs(out, exist_ok=True)
    listing = os.path.join(out, "cases.json")
    doc = {"generator": "", "cases": []}
    if os.path.exists(listing):
        with open(listing) as f:
            doc = json.load(f)
    doc["generator"] = "torch %s, torchvision %s (CPU, 1 thread)" % (
        torch.__version__, torchvision.__version__ if torchvision else "none")
    n = first
    for name in tables:
        for pipeline, dtype, shape, layout, *files in TABLES[name](rng):
            case = "case%04d" % n
            n += 1
            d = os.path.join(out, case)
            os.makedirs(d, exist_ok=True)
            for fname, data in (files[0] if files else {}).items():  # grid.npy
                np.save(os.path.join(d, fname), data)
            x = make_input(rng, dtype, shape)
            if pipeline[0]["op"] == "convert" and pipeline[0]["dtype"] == "uint8" and dtype == "float32":
                # Float images are in [0, 1]: outside it PyTorch's cast to uint8 is undefined
                # behaviour in C++ (x86 wraps), where toroid saturates (docs/reference.md).
                x = ((x - x.min()) / max(float(x.max() - x.min()), 1e-6)).astype(np.float32)
            if pipeline[0]["op"] == "convert" and dtype in ("float32", "float16", "bfloat16") and \
                    pipeline[0]["dtype"] in ("uint8", "uint16"):
                # scaled: images in [0, 1]; a plain cast: values in the integer type's range
                top = 1.0 if pipeline[0].get("scale") else (255.0 if pipeline[0]["dtype"] == "uint8" else 60000.0)
                x = rng.random(shape, dtype=np.float32) * top
                x = torch.from_numpy(x).to(DTYPES[dtype]).float().numpy().astype(np.float16 if dtype == "float16" else np.float32)
            if name in ("colour_ops", "blur_ops", "tone_ops") and dtype == "float32":
                x = rng.random(shape, dtype=np.float32)  # images in [0, 1], as the colour ops expect
            np.save(os.path.join(d, "input.npy"), x)
            with open(os.path.join(d, "pipeline.json"), "w") as f:
                json.dump(pipeline, f)
            y, out_dtype = run_pipeline(x, pipeline, d, layout, dtype, with_dtype=True)
            np.save(os.path.join(d, "expected.npy"), y)
            doc["cases"] = [c for c in doc["cases"] if c["name"] != case]
            entry = {"name": case, "input_layout": layout, "dtype": dtype, "pipeline": pipeline,
                     "input_shape": list(x.shape), "expected_shape": list(y.shape), "table": name}
            if out_dtype == "bfloat16":
                entry["expected_dtype"] = out_dtype  # expected.npy holds it as float32
            doc["cases"].append(entry)
    with open(listing, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote %d cases into %s" % (n - first, out))


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", nargs="?", const=os.path.join(root, "tests", "data", "conformance"), metavar="DIR")
    ap.add_argument("--out", metavar="DIR")
    ap.add_argument("--table", action="append", choices=sorted(TABLES))
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--first", type=int, default=1000, help="number of the first new case")
    a = ap.parse_args()
    torch.set_num_threads(1)
    if a.check:
        return check(a.check)
    if a.out:
        generate(a.out, a.table or sorted(TABLES), a.seed, a.first)
        return 0
    ap.error("give --check or --out")


if __name__ == "__main__":
    sys.exit(main())
