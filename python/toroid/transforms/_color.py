"""Colour transforms: torchvision.transforms.v2's Grayscale, RandomGrayscale, RandomInvert,
RandomPosterize, RandomSolarize, RandomAutocontrast, RandomEqualize and ColorJitter (brightness, contrast,
saturation, hue), and the functional forms invert, posterize, solarize, adjust_brightness,
adjust_saturation, adjust_contrast, adjust_gamma, adjust_hue, autocontrast, equalize and
rgb_to_grayscale (to_grayscale). Each is one toroid op whose factor or
threshold is a run-time value, so a random draw binds, it does not compile. The arithmetic is
torchvision's on CPU tensors (uint8 bit for bit): see toroid's src/ops/color_op.cpp."""

import numbers

from .._capi import Error, InvalidTypeError, public, show
from ._base import Transform, _arg_key, _one, _RandomApply, _torch

TRANSFORMS = ["Grayscale", "RandomGrayscale", "RandomInvert", "RandomPosterize", "RandomSolarize",
              "RandomAutocontrast", "RandomEqualize", "ColorJitter"]
FUNCTIONAL = ["invert", "posterize", "solarize", "adjust_brightness", "adjust_saturation", "adjust_contrast",
              "adjust_gamma", "adjust_hue", "autocontrast", "equalize", "rgb_to_grayscale", "to_grayscale"]
__all__ = TRANSFORMS + FUNCTIONAL


def _real(v, what):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise InvalidTypeError("%s must be a number, got %s" % (what, show(v)))
    return float(v)


def _check_bits(bits):
    # torchvision: `not isinstance(bits, int) or not 0 <= bits <= 8` is a TypeError.
    if not isinstance(bits, int) or not 0 <= bits <= 8:
        raise InvalidTypeError("bits must be a positive integer in the range [0, 8], got %s instead." % (bits,))
    return int(bits)


def _check_factor(factor, name):
    value = _real(factor, name)
    if value < 0:
        raise Error("%s (%s) is not non-negative." % (name, factor))
    return value


def _check_gamma(gamma, gain):
    g = _real(gamma, "gamma")
    if g < 0:
        raise Error("Gamma should be a non-negative real number")
    return g, _real(gain, "gain")


def _check_hue(hue_factor):
    h = _real(hue_factor, "hue_factor")
    if not -0.5 <= h <= 0.5:
        raise Error("hue_factor (%s) is not in [-0.5, 0.5]." % (hue_factor,))
    return h


def _check_channels(state):
    if state.c not in (1, 3):
        raise InvalidTypeError("Input image tensor permitted channel values are 1 or 3, but found %s" % (state.c,))


def _check_gray_channels(num_output_channels):
    if isinstance(num_output_channels, bool) or num_output_channels not in (1, 3):
        raise Error("num_output_channels must be 1 or 3, got %s." % (num_output_channels,))
    return int(num_output_channels)


# ---- emitting the ops (state: _base._State) ---------------------------------------------------

def _emit_invert(state):
    state.add({"op": "invert"})


def _emit_posterize(state, bits):
    state.add({"op": "posterize", "bits": bits})


def _emit_solarize(state, threshold):
    bound = 255 if state.dtype == "uint8" else 1.0
    if _real(threshold, "threshold") > bound:
        raise InvalidTypeError("Threshold should be less or equal the maximum value of the dtype, but got %s"
                               % (threshold,))
    state.add({"op": "solarize", "threshold": float(threshold)})


def _emit_adjust(state, kind, factor):
    _check_channels(state)
    state.add({"op": "adjust_" + kind, "factor": float(factor)})


def _emit_gamma(state, gamma, gain):
    state.add({"op": "adjust_gamma", "gamma": gamma, "gain": gain})


def _emit_hue(state, factor):
    _check_channels(state)
    state.add({"op": "adjust_hue", "factor": float(factor)})


def _emit_autocontrast(state):
    _check_channels(state)
    state.add({"op": "autocontrast"})


def _emit_equalize(state):
    state.add({"op": "equalize"})


def _emit_gray(state, num_output_channels):
    state.add({"op": "rgb_to_grayscale", "num_output_channels": num_output_channels}, c=num_output_channels)


# ---- transforms -----------------------------------------------------------------------------

class Grayscale(Transform):
    """torchvision.transforms.v2.Grayscale(num_output_channels)."""

    @public("Grayscale")
    def __init__(self, num_output_channels=1):
        self.num_output_channels = num_output_channels
        self._n = _check_gray_channels(num_output_channels)

    def _emit(self, state):
        _emit_gray(state, self._n)


class _GrayKeepChannels:
    @staticmethod
    def _emit(self, state):
        # torchvision: num_output_channels is the input's channel count (query_chw).
        _emit_gray(state, state.c)


class RandomGrayscale(_RandomApply):
    """torchvision.transforms.v2.RandomGrayscale(p=0.1): grey in as many channels as the input."""
    _inner = _GrayKeepChannels

    def __init__(self, p=0.1):
        super().__init__(p)


class _InvertInner:
    @staticmethod
    def _emit(self, state):
        _emit_invert(state)


class RandomInvert(_RandomApply):
    """torchvision.transforms.v2.RandomInvert(p=0.5)."""
    _inner = _InvertInner


class _PosterizeInner:
    @staticmethod
    def _emit(self, state):
        _emit_posterize(state, self._bits)


class RandomPosterize(_RandomApply):
    """torchvision.transforms.v2.RandomPosterize(bits, p=0.5)."""
    _inner = _PosterizeInner

    def __init__(self, bits, p=0.5):
        super().__init__(p)
        self.bits = bits
        self._bits = _check_bits(bits)


class _SolarizeInner:
    @staticmethod
    def _emit(self, state):
        _emit_solarize(state, self._threshold)


class RandomSolarize(_RandomApply):
    """torchvision.transforms.v2.RandomSolarize(threshold, p=0.5)."""
    _inner = _SolarizeInner

    def __init__(self, threshold, p=0.5):
        super().__init__(p)
        self.threshold = threshold
        self._threshold = threshold
        _real(threshold, "threshold")


class _AutocontrastInner:
    @staticmethod
    def _emit(self, state):
        _emit_autocontrast(state)


class RandomAutocontrast(_RandomApply):
    """torchvision.transforms.v2.RandomAutocontrast(p=0.5)."""
    _inner = _AutocontrastInner


class _EqualizeInner:
    @staticmethod
    def _emit(self, state):
        _emit_equalize(state)


class RandomEqualize(_RandomApply):
    """torchvision.transforms.v2.RandomEqualize(p=0.5)."""
    _inner = _EqualizeInner


class ColorJitter(Transform):
    """torchvision.transforms.v2.ColorJitter(brightness, contrast, saturation, hue): per call
    the order of the adjustments is torch.randperm(4) and each factor
    torch.empty(1).uniform_(lo, hi), in torchvision's order (brightness, contrast, saturation,
    hue)."""

    @public("ColorJitter")
    def __init__(self, brightness=None, contrast=None, saturation=None, hue=None):
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    @staticmethod
    def _check_input(value, name, center=1.0, bound=(0, float("inf")), clip_first_on_zero=True):
        """torchvision's ColorJitter._check_input: its checks, messages and exception types."""
        if value is None:
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if value < 0:
                raise Error("If %s is a single number, it must be non negative." % name)
            value = [center - value, center + value]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (list, tuple)) and len(value) == 2:
            value = [float(v) for v in value]
        else:
            raise InvalidTypeError("%s=%s should be a single number or a sequence with length 2." % (name, value))
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise Error("%s values should be between %s, but got %s." % (name, bound, value))
        return None if value[0] == value[1] == center else (float(value[0]), float(value[1]))

    def _params(self):
        torch = _torch()
        fn_idx = torch.randperm(4).tolist()

        def draw(r):
            return None if r is None else torch.empty(1).uniform_(r[0], r[1]).item()
        return fn_idx, draw(self.brightness), draw(self.contrast), draw(self.saturation), draw(self.hue)

    def _emit(self, state):
        # Each adjustment runs as a program of its own (state.cut), as the augmentation
        # policies' operations do: the 24 orders of four adjustments, fused with the
        # transforms around them, would each be a structure to compile (172 programs over 100
        # images of the SimCLR recipe); apart they are four, and each costs one pass.
        fn_idx, b, c, s, h = self._params()
        for fn_id in fn_idx:
            if fn_id == 0 and b is not None:
                state.cut()
                _emit_adjust(state, "brightness", b)
            elif fn_id == 1 and c is not None:
                state.cut()
                _emit_adjust(state, "contrast", c)
            elif fn_id == 2 and s is not None:
                state.cut()
                _emit_adjust(state, "saturation", s)
            elif fn_id == 3 and h is not None:
                state.cut()
                _emit_hue(state, h)
        state.cut()


# ---- functional forms (torchvision.transforms.v2.functional's names) --------------------------

@public("invert")
def invert(inpt):
    return _one(inpt, _emit_invert, ("invert",))


@public("posterize")
def posterize(inpt, bits):
    bits = _check_bits(bits)
    return _one(inpt, lambda s: _emit_posterize(s, bits), ("posterize", bits))


@public("solarize")
def solarize(inpt, threshold):
    _real(threshold, "threshold")
    return _one(inpt, lambda s: _emit_solarize(s, threshold), ("solarize", _arg_key(threshold)))


@public("adjust_brightness")
def adjust_brightness(inpt, brightness_factor):
    f = _check_factor(brightness_factor, "brightness_factor")
    return _one(inpt, lambda s: _emit_adjust(s, "brightness", f), ("brightness", _arg_key(f)))


@public("adjust_saturation")
def adjust_saturation(inpt, saturation_factor):
    f = _check_factor(saturation_factor, "saturation_factor")
    return _one(inpt, lambda s: _emit_adjust(s, "saturation", f), ("saturation", _arg_key(f)))


@public("adjust_contrast")
def adjust_contrast(inpt, contrast_factor):
    f = _check_factor(contrast_factor, "contrast_factor")
    return _one(inpt, lambda s: _emit_adjust(s, "contrast", f), ("contrast", _arg_key(f)))


@public("adjust_gamma")
def adjust_gamma(inpt, gamma, gain=1):
    g, k = _check_gamma(gamma, gain)
    return _one(inpt, lambda s: _emit_gamma(s, g, k), ("gamma", _arg_key(g), _arg_key(k)))


@public("adjust_hue")
def adjust_hue(inpt, hue_factor):
    h = _check_hue(hue_factor)
    return _one(inpt, lambda s: _emit_hue(s, h), ("hue", _arg_key(h)))


@public("autocontrast")
def autocontrast(inpt):
    return _one(inpt, _emit_autocontrast, ("autocontrast",))


@public("equalize")
def equalize(inpt):
    return _one(inpt, _emit_equalize, ("equalize",))


@public("rgb_to_grayscale")
def rgb_to_grayscale(inpt, num_output_channels=1):
    n = _check_gray_channels(num_output_channels)
    return _one(inpt, lambda s: _emit_gray(s, n), ("rgb_to_grayscale", n))


to_grayscale = rgb_to_grayscale
