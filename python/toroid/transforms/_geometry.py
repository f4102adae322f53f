"""Padding, erasing and the crop family of training transforms: Pad, RandomResizedCrop,
RandomResize, RandomErasing and the functional pad, erase and resized_crop.

Random transforms draw their parameters with torch's default generator in torchvision
0.26's order (torchvision/transforms/v2/_geometry.py, _augment.py); the draws become run-time
values of toroid's crop, resize, pad and erase ops, so new draws never compile again.
"""

import math
import numbers
import warnings

from .. import _api, _core
from .._capi import Error, InvalidTypeError, public, show
from ._sample import Fills
from ._base import InterpolationMode, Resize, Transform, _arg_key, _int, _one, _parse_padding, _size_pair, _torch

TRANSFORMS = ["Pad", "RandomResizedCrop", "RandomResize", "RandomErasing"]
FUNCTIONAL = ["pad", "erase", "resized_crop"]
__all__ = TRANSFORMS + FUNCTIONAL

_PAD_MODES = ("constant", "edge", "reflect", "symmetric")


def _pad_fill(fill):
    """torchvision's fill for pad: None is 0; a number, or a sequence of numbers (one value is
    a scalar fill, several one per channel) -> a list of floats."""
    if fill is None:
        return [0.0]
    if isinstance(fill, dict):
        return Fills(fill, _pad_fill)
    values = list(fill) if isinstance(fill, (list, tuple)) else [fill]
    if not values or not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values):
        raise InvalidTypeError("fill must be a number or a sequence of numbers, got %s" % (show(fill),))
    return [float(v) for v in values]


def _pad_mode(padding_mode):
    if padding_mode not in _PAD_MODES:
        raise Error("`padding_mode` should be either `'constant'`, `'edge'`, `'reflect'` or `'symmetric'`, "
                    "but got `'%s'`." % (padding_mode,))
    return padding_mode


def _pad_op(left, top, right, bottom, fill, mode):
    if mode != "constant" and fill is not None and len(fill) > 1:
        raise Error("Padding mode '%s' is not supported if fill is not scalar" % mode)
    return {"op": "pad", "padding": [left, top, right, bottom], "mode": mode, "fill": fill}


def _emit_pad(state, pad, fill, mode):
    """Appends a pad op; pad is (left, right, top, bottom), torchvision's internal order."""
    left, right, top, bottom = pad
    fill, fills = state.image_fill(fill)
    fill = [0.0] if fill is None else fill
    state.add(_pad_op(left, top, right, bottom, fill, mode), state.h + top + bottom, state.w + left + right,
              fills=fills)


class Pad(Transform):
    """torchvision.transforms.v2.Pad(padding, fill, padding_mode): an int, or 1, 2 or 4 values
    ([left, top, right, bottom]); negative values crop; fill a number or one per channel
    (constant mode)."""

    @public("Pad")
    def __init__(self, padding, fill=0, padding_mode="constant"):
        if not isinstance(padding, (numbers.Number, tuple, list)) or isinstance(padding, bool):
            raise InvalidTypeError("Got inappropriate padding arg")
        if isinstance(padding, (tuple, list)) and len(padding) not in (1, 2, 4):
            raise Error("Padding must be an int or a 1, 2, or 4 element tuple, not a %d element tuple" % len(padding))
        self.padding = padding
        self.fill = fill
        self.padding_mode = _pad_mode(padding_mode)
        self._pad = _parse_padding(padding)
        self._fill = _pad_fill(fill)
        if self.padding_mode != "constant" and isinstance(self._fill, list) and len(self._fill) > 1:
            raise Error("Padding mode '%s' is not supported if fill is not scalar" % self.padding_mode)

    def _emit(self, state):
        _emit_pad(state, self._pad, self._fill, self.padding_mode)


def _check_pair(v, what):
    if not isinstance(v, (list, tuple)):
        raise InvalidTypeError("%s should be a sequence" % what.capitalize())
    if len(v) != 2 or not all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in v):
        raise Error("%s must be a sequence of two numbers, got %s" % (what, show(v)))
    return (float(v[0]), float(v[1]))


class RandomResizedCrop(Transform):
    """torchvision.transforms.v2.RandomResizedCrop(size, scale, ratio, interpolation, antialias):
    torchvision's draws (area fraction and log aspect ratio by torch.empty(1).uniform_, up to
    10 tries, each accepted region's offsets by torch.randint; else its central fallback), then
    a crop and a resize to size."""

    @public("RandomResizedCrop")
    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        self.size = _size_pair(size)
        self.scale = _check_pair(scale, "scale")
        self.ratio = _check_pair(ratio, "ratio")
        if self.scale[0] > self.scale[1] or self.ratio[0] > self.ratio[1]:
            warnings.warn("Scale and ratio should be of kind (min, max)")
        self.interpolation = interpolation
        self.antialias = antialias
        self._resize = Resize(list(self.size), interpolation, None, antialias)
        self._log_ratio = None

    def _params(self, height, width):
        torch = _torch()
        if self._log_ratio is None:
            # torchvision's float32 log of the ratios, as the doubles uniform_ receives them
            # (an element of a float32 tensor passed for a double is its value).
            log_ratio = torch.log(torch.tensor(self.ratio))
            self._log_ratio = (float(log_ratio[0]), float(log_ratio[1]))
        lo, hi = self._log_ratio
        area = height * width
        for _ in range(10):
            target_area = area * torch.empty(1).uniform_(self.scale[0], self.scale[1]).item()
            aspect_ratio = torch.exp(torch.empty(1).uniform_(lo, hi)).item()
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = torch.randint(0, height - h + 1, size=(1,)).item()
                j = torch.randint(0, width - w + 1, size=(1,)).item()
                return i, j, h, w
        # Fallback to central crop
        in_ratio = float(width) / float(height)
        if in_ratio < min(self.ratio):
            w = width
            h = int(round(w / min(self.ratio)))
        elif in_ratio > max(self.ratio):
            h = height
            w = int(round(h * max(self.ratio)))
        else:  # whole image
            w = width
            h = height
        return (height - h) // 2, (width - w) // 2, h, w

    def _emit(self, state):
        top, left, h, w = self._params(state.h, state.w)
        state.add({"op": "crop", "top": top, "left": left, "height": h, "width": w}, h, w)
        self._resize._emit(state)


class RandomResize(Transform):
    """torchvision.transforms.v2.RandomResize(min_size, max_size, interpolation, antialias):
    the smaller edge becomes int(torch.randint(min_size, max_size, ()))."""

    @public("RandomResize")
    def __init__(self, min_size, max_size, interpolation=InterpolationMode.BILINEAR, antialias=True):
        self.min_size = _int(min_size, "min_size")
        self.max_size = _int(max_size, "max_size")
        if not self.min_size < self.max_size:
            raise Error("min_size must be smaller than max_size, got %d and %d" % (self.min_size, self.max_size))
        self.interpolation = interpolation
        self.antialias = antialias
        _api._interpolation_name(interpolation)

    def _emit(self, state):
        size = int(_torch().randint(self.min_size, self.max_size, ()))
        Resize(size, self.interpolation, None, self.antialias)._emit(state)


def _channels(state):
    return _core.adapt(state.x).shape[-3]


def _host_erase(i, j, h, w, v):
    """Assigns tensor v to the region as torchvision's erase does (for values toroid's erase op
    does not take: a full (C, h, w) tensor, RandomErasing's value="random")."""
    def run(x):
        torch = _torch()
        numpy_in = _core.is_numpy(x)
        t = torch.from_numpy(x) if numpy_in else x
        t = t.clone()
        t[..., i:i + h, j:j + w] = v
        return t.numpy() if numpy_in else t
    return run


class RandomErasing(Transform):
    """torchvision.transforms.v2.RandomErasing(p, scale, ratio, value): applied when
    torch.rand(1) < p; the region drawn as torchvision draws it (area fraction and log aspect
    ratio by torch.empty(1).uniform_, up to 10 tries, offsets by torch.randint) and erased
    with value (a number or one per channel) by toroid's erase op. value="random" draws
    torchvision's normal tensor and assigns it on the host."""

    @public("RandomErasing")
    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0.0, inplace=False):
        if isinstance(p, bool) or not isinstance(p, numbers.Real):
            raise InvalidTypeError("`p` should be a floating point value in the interval [0.0, 1.0], got %s" % show(p))
        if not 0.0 <= p <= 1.0:
            raise Error("`p` should be a floating point value in the interval [0.0, 1.0].")
        if not isinstance(value, (numbers.Number, str, tuple, list)) or isinstance(value, bool):
            raise InvalidTypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise Error("If value is str, it should be 'random'")
        if not isinstance(scale, (tuple, list)):
            raise InvalidTypeError("Scale should be a sequence")
        if not isinstance(ratio, (tuple, list)):
            raise InvalidTypeError("Ratio should be a sequence")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise Error("Scale should be between 0 and 1")
        self.p = p
        self.scale = scale
        self.ratio = ratio
        if isinstance(value, (int, float)):
            self.value = [float(value)]
        elif isinstance(value, str):
            self.value = None
        else:
            if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value):
                raise InvalidTypeError("value must be numbers, got %s" % (show(value),))
            self.value = [float(v) for v in value]
        self.inplace = inplace
        self._log_ratio = None

    def _params(self, c, img_h, img_w):
        torch = _torch()
        if self.value is not None and len(self.value) not in (1, c):
            raise Error("If value is a sequence, it should have either a single value or %d (number of inpt channels)"
                        % c)
        if self._log_ratio is None:
            self._log_ratio = torch.log(torch.tensor(self.ratio))
        log_ratio = self._log_ratio
        area = img_h * img_w
        for _ in range(10):
            erase_area = area * torch.empty(1).uniform_(self.scale[0], self.scale[1]).item()
            aspect_ratio = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < img_h and w < img_w):
                continue
            if self.value is None:
                v = torch.empty([c, h, w], dtype=torch.float32).normal_()
            else:
                v = self.value
            i = torch.randint(0, img_h - h + 1, size=(1,)).item()
            j = torch.randint(0, img_w - w + 1, size=(1,)).item()
            return i, j, h, w, v
        return 0, 0, img_h, img_w, None

    def _emit(self, state):
        torch = _torch()
        if torch.rand(1) >= self.p:
            return
        i, j, h, w, v = self._params(_channels(state), state.h, state.w)
        if v is None:
            return
        if isinstance(v, list):
            state.add({"op": "erase", "top": i, "left": j, "height": h, "width": w, "value": v})
        else:
            state.call_host(_host_erase(i, j, h, w, v))


# ---- functional forms -------------------------------------------------------------------------

@public("pad")
def pad(inpt, padding, fill=None, padding_mode="constant"):
    """torchvision.transforms.v2.functional.pad on an image tensor."""
    if not isinstance(padding, (numbers.Number, tuple, list)) or isinstance(padding, bool):
        raise InvalidTypeError("`padding` should be an integer or tuple or list of integers, but got %s" % show(padding))
    if isinstance(padding, (tuple, list)) and len(padding) not in (1, 2, 4):
        raise Error("Padding must be an int or a 1, 2, or 4 element tuple, not a %d element tuple" % len(padding))
    mode = _pad_mode(padding_mode)
    fill = _pad_fill(fill)
    pad4 = _parse_padding(padding)
    return _one(inpt, lambda s: _emit_pad(s, pad4, fill, mode))


def _erase_values(v):
    """The per-channel values of erase's tensor v (shape (C or 1, 1, 1), or fewer dims of ones),
    or None where the value is assigned by torch instead (a full region tensor, other dtypes, a
    tensor on a GPU: torchvision's own assignment stays on the device)."""
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return [float(v)]
    if isinstance(v, (list, tuple)):
        return [float(x) for x in v]
    torch = _core._torch
    if torch is not None and type(v) is torch.Tensor and v.is_cpu:
        # The common case, a CPU tensor of one value per channel, without the generic checks'
        # attribute lookups and reshape (this runs on every call).
        shape = v.shape
        if v.dtype in (torch.uint8, torch.float32) and len(shape) == 3 and shape[1] == 1 and shape[2] == 1:
            return [float(c[0][0]) for c in v.tolist()]
    device = getattr(v, "device", None)
    if device is not None and getattr(device, "type", "cpu") != "cpu":
        return None  # its values would be read back to bind them, waiting for the device
    shape = tuple(getattr(v, "shape", ()))
    dtype = str(getattr(v, "dtype", ""))
    if not dtype.endswith(("float32", "uint8")):
        return None
    # One value, or (C, 1, 1): one per channel. Anything else broadcasts along H or W.
    if not (all(d == 1 for d in shape) or (len(shape) == 3 and shape[1:] == (1, 1))):
        return None
    flat = v.reshape(-1)
    return [float(x) for x in (flat.tolist() if hasattr(flat, "tolist") else flat)]


@public("erase")
def erase(inpt, i, j, h, w, v, inplace=False):
    """torchvision.transforms.v2.functional.erase: image[..., i:i+h, j:j+w] = v. A v of one
    value per channel (numbers, or a CPU tensor) runs as toroid's erase op; any other v (a
    region tensor, a tensor on a GPU) is assigned by torch, as torchvision does."""
    i, j, h, w = (_int(a, name) for a, name in ((i, "i"), (j, "j"), (h, "h"), (w, "w")))
    values = _erase_values(v)
    if values is None:
        if _core._torch is not None and type(inpt) is _core._torch.Tensor:  # a plain tensor: torch assigns
            return _host_erase(i, j, h, w, v)(inpt)

        def host(s):
            s.call_host(_host_erase(i, j, h, w, v))
        return _one(inpt, host)
    return _one(inpt, lambda s: s.add({"op": "erase", "top": i, "left": j, "height": h, "width": w, "value": values}),
                ("erase", i, j, h, w, _arg_key(values)))


@public("resized_crop")
def resized_crop(inpt, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR, antialias=True):
    """torchvision.transforms.v2.functional.resized_crop: crop (zeros outside the image), then
    resize to size (an int or one value: the smaller edge)."""
    top, left, height, width = (_int(a, n) for a, n in ((top, "top"), (left, "left"), (height, "height"),
                                                        (width, "width")))
    if height <= 0 or width <= 0:
        raise Error("height and width must be positive, got %d and %d" % (height, width))
    resize = Resize(size, interpolation, None, antialias)

    def emit(s):
        s.add({"op": "crop", "top": top, "left": left, "height": height, "width": width}, height, width)
        resize._emit(s)
    return _one(inpt, emit)

