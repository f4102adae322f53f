#!/usr/bin/env python3
"""Writes presets of the prebuilt catalogue from toroid.transforms itself, so that the programs
training recipes' calls need are built ahead of time and their first calls compile nothing.

By default it writes presets/recipes.json: the programs the recipes of
toroid.transforms.recipes run (a set of pipelines, {"pipelines": [{"ops": [...], "size":
[h, w]}, ...]}), recorded by running each recipe on many images of random sizes under many
seeds: one call (its ops and its input's size) for each program structure, which the prebuild
prepares on that size in both layouts; a crop resized to a fixed size is also written as high,
as wide and as large as that size (no resampling along that axis: programs of their own, which
random crops rarely draw). Options that toroid.transforms takes from the
installed PyTorch (the blur's weight sums, the affine warp's rounding) are written with each
value. tests/python/test_overhead.py checks that the recipes, under other seeds,
compile nothing with the catalogue built.

With --policies it writes augment_*.json instead: each operation the automatic augmentation
policies draw (one program each: toroid.transforms runs a policy's draws as programs of
their own), the crop-resize-flip segment before a policy (bilinear and bicubic, flipped or
not) and the float-normalize(-erase) segment after it, for recipes of one's own. Values in a
preset stand for any value (they are run-time values of the program); the affine warps are
written for both ways PyTorch builds round torchvision's grid
(transforms._base._torch_fuses: MKL and OpenBLAS builds fuse the grid's sums, Debian's
generic BLAS does not).

    PYTHONPATH=python python3 scripts/make_presets.py [--policies] [--out presets]"""

import argparse
import json
import os
import sys
import tempfile

if "--policies" not in sys.argv:
    # Recording (recipe_pipelines): a cache of its own, no catalogue, full builds only, so that
    # each new program structure compiles on the call that needs it.
    os.environ["TOROID_CACHE_DIR"] = tempfile.mkdtemp(prefix="toroid-presets-")
    os.environ["TOROID_PREBUILT"] = "none"
    os.environ["TOROID_TIERED"] = "0"

import toroid.transforms as T  # noqa: E402
from toroid.transforms import _augment, _base  # noqa: E402


def probe_ops(emit, h=64, w=80):
    """The ops `emit(state)` adds for a uint8 (3, h, w) image, without running them."""
    import torch
    state = _base._State(torch.zeros(3, h, w, dtype=torch.uint8))
    emit(state)  # (nothing here cuts or runs a host step: the ops are only gathered)
    return state.ops


def presets():
    out = {}
    # The policies' operations (magnitudes stand for any).
    names = ["ShearX", "Rotate", "Brightness", "Color", "Contrast", "Sharpness", "Posterize", "Solarize",
             "AutoContrast", "Equalize", "Invert"]
    real = _base._torch_fuses
    try:
        for flags in ((True, True), (False, True)):
            _base._torch_fuses = lambda flags=flags: flags
            for mode in ("nearest", "bilinear"):
                for name in ("ShearX",):
                    ops = probe_ops(lambda s: _augment._emit_one_operation(s, name, 0.2, mode, None))
                    out["augment_affine_%s_%s" % (mode, "fma" if flags[0] else "rounded")] = ops
    finally:
        _base._torch_fuses = real
    for name in names:
        if name in ("ShearX", "Rotate"):
            continue
        magnitude = 4.0 if name == "Posterize" else 0.3
        out["augment_%s" % name.lower()] = probe_ops(
            lambda s: _augment._emit_one_operation(s, name, magnitude, "nearest", None))
    # The segment before a policy: RandomResizedCrop (bilinear, bicubic) and a flip or not.
    for mode in ("bilinear", "bicubic"):
        interp = T.InterpolationMode.BILINEAR if mode == "bilinear" else T.InterpolationMode.BICUBIC
        rrc = T.RandomResizedCrop(224, interpolation=interp, antialias=True)
        ops = probe_ops(lambda s: rrc._emit(s), 300, 400)
        out["augment_crop_resize_%s" % mode] = ops
        out["augment_crop_resize_%s_flip" % mode] = ops + [{"op": "flip", "dims": [3]}]
    # The segment after it: float, normalize, and an erased region (RandomErasing, drawn to
    # erase: its p is 1 here).
    import torch
    tail = T.Compose([T.ToDtype(torch.float32, scale=True), T.Normalize([0.485, 0.456, 0.406],
                                                                         [0.229, 0.224, 0.225])])
    out["augment_float_normalize"] = probe_ops(tail._emit, 224, 224)
    erase = T.Compose([tail, T.RandomErasing(1.0)])
    out["augment_float_normalize_erase"] = probe_ops(erase._emit, 224, 224)
    return out


# Options toroid.transforms sets from the installed PyTorch (how it rounds), each written with
# all its values: the catalogue serves any PyTorch build.
_HOST_DEPENDENT = [("gaussian_blur", "lanes", (8, 16)), ("affine", "grid_fma", (False, True)),
                   ("affine", "sample_fma", (False, True))]


def _host_variants(ops):
    variants = [ops]
    for name, field, values in _HOST_DEPENDENT:
        if any(op.get("op") == name for op in ops):
            variants = [[dict(o, **{field: value}) if o.get("op") == name else o for o in v]
                        for v in variants for value in values]
    return variants


def recipe_pipelines(n=2000, seed=0, log=print):
    """[(ops, (h, w))]: one call of each program structure the recipes run on n images of
    random sizes (32-640 px a side, channels-last and planar; one torch seed per image). A
    structure is new when its call compiles: the library runs with a cache of its own, no
    catalogue and full builds only (main() sets the environment before it loads)."""
    import numpy as np
    import torch
    import toroid
    from toroid import _core
    from toroid.transforms import recipes
    found = []
    real = _core.run_ops

    def recorded(ops, x, key=None):  # every op list the transforms run goes through run_ops
        before = toroid.cache_stats()["compiles"]
        y = real(ops, x, key)
        if toroid.cache_stats()["compiles"] > before:
            found.append((ops, (int(x.shape[-2]), int(x.shape[-1]))))
        return y

    rng = np.random.default_rng(seed)
    images = []
    for i in range(n):
        h, w = (int(s) for s in rng.integers(32, 641, size=2))
        x = torch.from_numpy(rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)).permute(2, 0, 1)
        images.append(x if i % 2 == 0 else x.contiguous())
    real_variants = _base._prepare_variants
    _core.run_ops = recorded
    _base._prepare_variants = lambda *args: None  # each outcome is recorded when drawn
    try:
        for name, build in recipes.RECIPES.items():
            before = len(found)
            transform = build()
            for i, x in enumerate(images):
                torch.manual_seed(seed * 1000003 + i)
                transform(x)
            log("%s: %d programs" % (name, len(found) - before))
    finally:
        _core.run_ops = real
        _base._prepare_variants = real_variants
    return [(v, size) for ops, size in found for same in _same_size_crops(ops, size) for v in _host_variants(same)]


def _same_size_crops(ops, size):
    """ops, and where a crop is resized to a fixed size, the same with the crop as high, as
    wide, and as large as that size (no resampling along that axis: another program, which
    random crops rarely draw), kept inside the h x w input."""
    out = [ops]
    for i in range(len(ops) - 1):
        crop, resize = ops[i], ops[i + 1]
        if crop.get("op") != "crop" or resize.get("op") != "resize" or "size" not in resize:
            continue
        oh, ow = resize["size"]
        fits_h = crop["top"] >= 0 and crop["top"] + oh <= size[0] and crop["height"] != oh
        fits_w = crop["left"] >= 0 and crop["left"] + ow <= size[1] and crop["width"] != ow
        for h_too, w_too in ((True, False), (False, True), (True, True)):
            if (h_too and not fits_h) or (w_too and not fits_w):
                continue
            same = dict(crop, height=oh if h_too else crop["height"], width=ow if w_too else crop["width"])
            out.append(ops[:i] + [same] + ops[i + 1:])
        break
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                  "presets"))
    ap.add_argument("--policies", action="store_true", help="write augment_*.json (the policies' operations)")
    ap.add_argument("--images", type=int, default=2000, help="images each recipe runs on (default 2000)")
    a = ap.parse_args()
    if not a.policies:
        found = recipe_pipelines(a.images)
        with open(os.path.join(a.out, "recipes.json"), "w") as f:
            f.write('{"pipelines": [\n' + ",\n".join(json.dumps({"ops": ops, "size": list(size)})
                                                      for ops, size in found) + "\n]}\n")
        print("recipes.json: %d pipelines" % len(found))
        return
    for name, ops in presets().items():
        with open(os.path.join(a.out, name + ".json"), "w") as f:
            f.write("[" + ",\n ".join(json.dumps(op) for op in ops) + "]\n")
        print(name, json.dumps(ops)[:150])


if __name__ == "__main__":
    main()
