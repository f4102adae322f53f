"""Rotation and perspective: torchvision.transforms.v2's rotate and RandomRotation, as toroid's
affine op (torchvision's pixel matrix and grid arithmetic; its output size for expand=True),
and perspective and RandomPerspective, as toroid's perspective op (torchvision's
coefficients, grid and sampling)."""

import numbers

from . import _base
from .._capi import Error, InvalidTypeError, public, show

TRANSFORMS = ["RandomRotation", "RandomPerspective"]
FUNCTIONAL = ["rotate", "perspective"]
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
    raw = float(angle)
    angle = raw % 360
    h, w = state.h, state.w
    # How boxes and points move: torchvision's affine of them by -angle, whichever way the
    # pixels are computed.
    geo = _base._affine_geo(-raw, [0.0, 0.0], 1.0, [0.0, 0.0], center, expand)
    if center is None:
        # torchvision's exact rotations by multiples of 90 degrees (no fill, no resampling).
        if angle == 0:
            state.add({"op": "crop", "top": 0, "left": 0, "height": h, "width": w}, geo=geo)
            return
        if angle == 180:
            state.add({"op": "flip", "dims": [2, 3]}, geo=geo)
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
        _base._emit_affine(state, matrix, mode, None, size=(w, h), geo=geo)
        return
    ow, oh = _affine_output_size(matrix, w, h) if expand else (w, h)
    _base._emit_affine(state, matrix, mode, fill, size=(oh, ow), geo=geo)


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



def _perspective_coefficients(startpoints, endpoints):
    """torchvision's _get_perspective_coeffs: the 8 coefficients mapping output pixels to input
    pixels, by least squares in float64 (torch's gels driver where torch is installed),
    rounded to float32."""
    if not isinstance(startpoints, (list, tuple)) or not isinstance(endpoints, (list, tuple)) or \
            len(startpoints) != 4 or len(endpoints) != 4:
        raise Error("Please provide exactly four corners, got %s startpoints and %s endpoints." %
                    (len(startpoints) if hasattr(startpoints, "__len__") else show(startpoints),
                     len(endpoints) if hasattr(endpoints, "__len__") else show(endpoints)))
    rows, rhs = [], []
    for (x, y), (u, v) in zip(endpoints, startpoints):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        rhs += [u, v]
    try:
        torch = _base._torch()
        a = torch.tensor(rows, dtype=torch.float64)
        b = torch.tensor(rhs, dtype=torch.float64)
        return torch.linalg.lstsq(a, b, driver="gels").solution.to(torch.float32).tolist()
    except ImportError:
        import numpy as np
        sol = np.linalg.lstsq(np.array(rows, dtype=np.float64), np.array(rhs, dtype=np.float64), rcond=None)[0]
        return [float(v) for v in sol.astype(np.float32)]


def _emit_perspective(state, coefficients, mode, fill):
    fill, fills = state.image_fill(fill)
    grid_fma, sample_fma = _base._torch_fuses()
    op = {"op": "perspective", "coefficients": [float(c) for c in coefficients], "mode": mode,
          "grid_fma": grid_fma, "sample_fma": sample_fma}
    if fill is not None:
        op["fill"] = fill
    state.add(op, fills=fills)


@public("perspective")
def perspective(inpt, startpoints, endpoints, interpolation=_base.InterpolationMode.BILINEAR, fill=None,
                coefficients=None):
    """torchvision.transforms.v2.functional.perspective: the corners `startpoints` of the input
    move to `endpoints` (or give the 8 `coefficients`), nearest or bilinear, `fill` (None:
    zeros) where the output has no pixel; the output keeps the input's size."""
    mode = _base._affine_mode(interpolation)
    fill = _base._check_fill(fill)
    if coefficients is not None:
        if startpoints is not None and endpoints is not None:
            raise Error("The startpoints/endpoints and the coefficients shouldn't be defined concurrently.")
        if not isinstance(coefficients, (list, tuple)) or len(coefficients) != 8:
            raise Error("Argument coefficients should have 8 float values")
        coeffs = list(coefficients)
    elif startpoints is not None and endpoints is not None:
        coeffs = _perspective_coefficients(startpoints, endpoints)
    else:
        raise Error("Either the startpoints/endpoints or the coefficients must have non `None` values.")
    return _base._one(inpt, lambda s: _emit_perspective(s, coeffs, mode, fill))


class RandomPerspective(_base._RandomApply):
    """torchvision.transforms.v2.RandomPerspective: with probability p, each corner moves
    inward by up to distortion_scale of half the image, drawn with torch.randint in
    torchvision's order."""

    @public("RandomPerspective")
    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=_base.InterpolationMode.BILINEAR, fill=0):
        super().__init__(p)
        if isinstance(distortion_scale, bool) or not isinstance(distortion_scale, numbers.Real) or \
                not 0 <= distortion_scale <= 1:
            raise Error("Argument distortion_scale value should be between 0 and 1")
        self.distortion_scale = distortion_scale
        self.interpolation = interpolation
        self._mode = _base._affine_mode(interpolation)
        self.fill = fill
        self._fill = _base._check_fill(fill)

    def _apply(self, state, applied):
        if not applied:  # the structure of the other outcome, without drawing
            _emit_perspective(state, [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], self._mode, self._fill)
            return
        torch = _base._torch()
        h, w = state.h, state.w
        bound_h = int(self.distortion_scale * (h // 2)) + 1
        bound_w = int(self.distortion_scale * (w // 2)) + 1

        def draw(lo, hi):
            return int(torch.randint(lo, hi, size=(1,)))
        topleft = [draw(0, bound_w), draw(0, bound_h)]
        topright = [draw(w - bound_w, w), draw(0, bound_h)]
        botright = [draw(w - bound_w, w), draw(h - bound_h, h)]
        botleft = [draw(0, bound_w), draw(h - bound_h, h)]
        start = [[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]]
        coeffs = _perspective_coefficients(start, [topleft, topright, botright, botleft])
        _emit_perspective(state, coeffs, self._mode, self._fill)
