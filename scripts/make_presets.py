#!/usr/bin/env python3
"""Writes the augmentation presets of the prebuilt catalogue (presets/augment_*.json) from
toroid.transforms' own op lists, so that the programs a training recipe's calls need are
built ahead of time: each operation the automatic augmentation policies draw (one program
each: toroid.transforms runs a policy's draws as programs of their own), the crop-resize-flip
segment before a policy (bilinear and bicubic, flipped or not) and the float-normalize(-erase)
segment after it. Values in a preset stand for any value (they are run-time values of the
program); the affine warps are written for both ways PyTorch builds round torchvision's grid
(transforms._base._torch_fuses: MKL and OpenBLAS builds fuse the grid's sums, Debian's
generic BLAS does not).

    PYTHONPATH=python python3 scripts/make_presets.py [--out presets]"""

import argparse
import json
import os

import toroid.transforms as T
from toroid.transforms import _augment, _base


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                  "presets"))
    a = ap.parse_args()
    for name, ops in presets().items():
        with open(os.path.join(a.out, name + ".json"), "w") as f:
            f.write("[" + ",\n ".join(json.dumps(op) for op in ops) + "]\n")
        print(name, json.dumps(ops)[:150])


if __name__ == "__main__":
    main()
