"""Rotation: torchvision.transforms.v2's rotate and RandomRotation, as toroid's affine op
(torchvision's pixel matrix and grid arithmetic; its output size for expand=True)."""

import numbers

from . import _base
from .._capi import Error, InvalidTypeError, public, show

TRANSFORMS = ["RandomRotation"]
FUNCTIONAL = ["rotate"]
__all__ = TRANSFORMS + FUNCTIONAL


def _affine_output_size(matrix, w, h):
    """torchvision's _compute_affine_output_size: the corners through the matrix in float32,
    their extent truncated to 1e-4, then ceil(max) - floor(min). Returns (w, h)."""
    half_w, half_h = 0.5 * w, 0.5 * h
    corners = [[-half_w, -half_h, 1.0], [-half_w, half_h, 1.0], [half_w, half_h, 1.0], [half_w, -half_h, 1.0]]
    try:
        torch = _base._torch()
        pts = torch.tensor(corners)
        theta = torch.tensor(matrix, dtype=torch.float).view(2, 3)
        new = torch.matmul(pts, theta.T)
        lo, hi = new.min(dim=0).values, new.max(dim=0).values
        halfs = torch.tensor((half_w, half_h))
        lo, hi = lo + halfs, hi + halfs
        tol = 1e-4
        inv = 1.0 / tol
        cmax = hi.mul(inv).trunc().mul(tol).ceil()
        cmin = lo.mul(inv).trunc().mul(tol).floor()
        size = cmax - cmin
        return int(size[0]), int(size[1])
    except ImportError:
        import numpy as np
        f32 = np.float32
        pts = np.array(corners, dtype=f32)
        theta = np.array(matrix, dtype=f32).reshape(2, 3)
        new = pts @ theta.T
        halfs = np.array([half_w, half_h], dtype=f32)
        lo, hi = new.min(axis=0) + halfs, new.max(axis=0) + halfs
        tol, inv = f32(1e-4), f32(1e4)
        cmax = np.ceil(np.trunc(hi * inv) * tol)
        cmin = np.floor(np.trunc(lo * inv) * tol)
        size = cmax - cmin
        return int(size[0]), int(size[1])


def _emit_rotate(state, angle, mode, expand, center, fill):
    if isinstance(angle, bool) or not isinstance(angle, numbers.Real):
        raise InvalidTypeError("angle must be a number, got %s" % show(angle))
    angle = float(angle) % 360
    h, w = state.h, state.w
    if center is None:
        # torchvision's exact rotations by multiples of 90 degrees (no fill, no resampling).
        if angle == 0:
            state.add({"op": "crop", "top": 0, "left": 0, "height": h, "width": w})
            return
        if angle == 180:
            state.add({"op": "flip", "dims": [2, 3]})
            return
    center_f = [0.0, 0.0]
    if center is not None:
        if not isinstance(center, (list, tuple)) or len(center) != 2:
            raise InvalidTypeError("center must be a sequence (x, y), got %s" % show(center))
        center_f = [float(center[0]) - w * 0.5, float(center[1]) - h * 0.5]
    matrix = _base._inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    if center is None and angle in (90.0, 270.0) and (expand or h == w):
        # torch.rot90: the output is the input's size turned (the corners' float32 extent
        # would round one pixel larger), and the warp picks the same pixels (its matrix's
        # zeros are 1e-17 off, far below a float32 coordinate's rounding), with nothing
        # outside the image to fill.
        _base._emit_affine(state, matrix, mode, None, size=(w, h))
        return
    ow, oh = _affine_output_size(matrix, w, h) if expand else (w, h)
    _base._emit_affine(state, matrix, mode, fill, size=(oh, ow))


@public("rotate")
def rotate(inpt, angle, interpolation=_base.InterpolationMode.NEAREST, expand=False, center=None, fill=None):
    """torchvision.transforms.v2.functional.rotate: counter-clockwise by `angle` degrees
    about the centre (or `center`, in pixels), nearest or bilinear; expand=True grows the
    output to hold the whole turned image; `fill` (None: zeros) where it has no pixel."""
    mode = _base._affine_mode(interpolation)
    fill = _base._check_fill(fill)
    expand = bool(expand)
    return _base._one(inpt, lambda s: _emit_rotate(s, angle, mode, expand, center, fill))


class RandomRotation(_base.Transform):
    """torchvision.transforms.v2.RandomRotation: an angle drawn from `degrees` (a number d
    means (-d, d)) with torch.empty(1).uniform_, as torchvision draws it."""

    @public("RandomRotation")
    def __init__(self, degrees, interpolation=_base.InterpolationMode.NEAREST, expand=False, center=None, fill=0):
        self.degrees = _base._setup_angle(degrees, "degrees", (2,))
        self.interpolation = interpolation
        self._mode = _base._affine_mode(interpolation)
        self.expand = bool(expand)
        if center is not None and (not isinstance(center, (list, tuple)) or len(center) != 2):
            raise Error("center should be a sequence of length 2, got %s" % (show(center),))
        self.center = center
        self.fill = fill
        self._fill = _base._check_fill(fill)

    def _emit(self, state):
        angle = _base._torch().empty(1).uniform_(self.degrees[0], self.degrees[1]).item()
        _emit_rotate(state, angle, self._mode, self.expand, self.center, self._fill)

