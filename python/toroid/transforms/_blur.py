"""Blur transforms: torchvision.transforms.v2's GaussianBlur and RandomAdjustSharpness, and the
functional forms gaussian_blur and adjust_sharpness. Each is one toroid op whose sigma or factor
is a run-time value (a random sigma binds, it does not compile; the kernel size is the
structure). The arithmetic is torchvision's on CPU tensors (uint8 bit for bit): see toroid's
src/ops/blur_op.cpp."""

import numbers
from collections.abc import Sequence

from .._capi import Error, InvalidTypeError, public
from ._base import Transform, _arg_key, _one, _RandomApply, _torch

TRANSFORMS = ["GaussianBlur", "RandomAdjustSharpness"]
FUNCTIONAL = ["gaussian_blur", "adjust_sharpness"]
__all__ = TRANSFORMS + FUNCTIONAL


def _is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _kernel_size(kernel_size):
    """gaussian_blur's kernel_size checks (torchvision's wording): [kx, ky], odd and positive."""
    if isinstance(kernel_size, int) and not isinstance(kernel_size, bool):
        kernel_size = [kernel_size, kernel_size]
    elif not isinstance(kernel_size, Sequence) or len(kernel_size) != 2:
        n = len(kernel_size) if isinstance(kernel_size, Sequence) else kernel_size
        raise Error("If kernel_size is a sequence its length should be 2. Got %s" % (n,))
    for k in kernel_size:
        if isinstance(k, bool) or not isinstance(k, int):
            raise InvalidTypeError("kernel_size should have odd and positive integers. Got %s" % (kernel_size,))
        if k % 2 == 0 or k < 0:
            raise Error("kernel_size should have odd and positive integers. Got %s" % (kernel_size,))
    return [int(k) for k in kernel_size]


def _sigma(sigma, kernel_size):
    """gaussian_blur's sigma: None (0.15 k + 0.35 per side), a number, or 1 or 2 numbers."""
    if sigma is None:
        return [k * 0.15 + 0.35 for k in kernel_size]
    if isinstance(sigma, (list, tuple)):
        if len(sigma) == 1:
            sigma = [sigma[0], sigma[0]]
        elif len(sigma) != 2:
            raise Error("If sigma is a sequence, its length should be 2. Got %s" % (len(sigma),))
        if not all(_is_number(s) for s in sigma):
            raise InvalidTypeError("sigma should be either float or sequence of floats. Got %s" % (sigma,))
        sigma = [float(s) for s in sigma]
    elif _is_number(sigma):
        sigma = [float(sigma), float(sigma)]
    else:
        raise InvalidTypeError("sigma should be either float or sequence of floats. Got %s" % (type(sigma),))
    for s in sigma:
        if s <= 0.0:
            raise Error("sigma should have positive values. Got %s" % (sigma,))
    return sigma


def _sharpness_factor(factor):
    if not _is_number(factor):
        raise InvalidTypeError("sharpness_factor must be a number, got %r" % (factor,))
    if factor < 0:
        raise Error("sharpness_factor (%s) is not non-negative." % (factor,))
    return float(factor)


_lanes = None


def _torch_lanes():
    """PyTorch's float vector width on this CPU (its softmax sums the Gaussian weights over it):
    16 where it dispatches to AVX-512, else 8 (AVX2). None without torch (toroid's default, 16)."""
    global _lanes
    if _lanes is None:
        try:
            torch = _torch()
        except Exception:  # noqa: BLE001 - no torch: toroid's default
            return None
        get = getattr(getattr(torch.backends, "cpu", None), "get_cpu_capability", None)
        if get is not None:
            capability = get()
        else:  # PyTorch before 2.0: "CPU capability usage: AVX2" in its build summary
            capability = next((line.split(":", 1)[1].strip() for line in torch.__config__.show().splitlines()
                               if "CPU capability usage" in line), "")
        _lanes = 16 if "AVX512" in capability.upper() else 8
    return _lanes


def _emit_blur(state, kernel_size, sigma):
    op = {"op": "gaussian_blur", "kernel_size": list(kernel_size), "sigma": list(sigma)}
    lanes = _torch_lanes()
    if lanes is not None:
        op["lanes"] = lanes
    state.add(op)


def _emit_sharpness(state, factor):
    if state.c not in (1, 3):
        raise InvalidTypeError("Input image tensor can have 1 or 3 channels, but found %s" % (state.c,))
    state.add({"op": "adjust_sharpness", "factor": factor})


class GaussianBlur(Transform):
    """torchvision.transforms.v2.GaussianBlur(kernel_size, sigma=(0.1, 2.0)): per call
    sigma = torch.empty(1).uniform_(min, max), the same for both sides."""

    @public("GaussianBlur")
    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        # torchvision's _setup_size and _setup_number_or_seq, with their messages.
        if _is_number(kernel_size):
            ks = (int(kernel_size), int(kernel_size))
        elif isinstance(kernel_size, Sequence) and len(kernel_size) == 1:
            ks = (kernel_size[0], kernel_size[0])
        elif isinstance(kernel_size, Sequence) and len(kernel_size) == 2:
            ks = tuple(kernel_size)
        else:
            raise Error("Kernel size should be a tuple/list of two integers")
        for k in ks:
            if k <= 0 or k % 2 == 0:
                raise Error("Kernel size value should be an odd and positive number.")
        self.kernel_size = ks
        if not (_is_number(sigma) or isinstance(sigma, Sequence)):
            raise InvalidTypeError("sigma should be a number or a sequence of numbers. Got %s" % (type(sigma),))
        if isinstance(sigma, Sequence):
            if len(sigma) not in (1, 2):
                raise Error("If sigma is a sequence its length should be 1 or 2. Got %s" % (len(sigma),))
            for s in sigma:
                if not _is_number(s):
                    raise Error("sigma should be a sequence of numbers. Got %s" % (type(s),))
            sigma = [float(sigma[0]), float(sigma[-1])]
        else:
            sigma = [float(sigma), float(sigma)]
        if not 0.0 < sigma[0] <= sigma[1]:
            raise Error("sigma values should be positive and of the form (min, max). Got %s" % (sigma,))
        self.sigma = sigma

    def _emit(self, state):
        s = _torch().empty(1).uniform_(self.sigma[0], self.sigma[1]).item()
        _emit_blur(state, _kernel_size(list(self.kernel_size)), [s, s])


class _SharpnessInner:
    @staticmethod
    def _emit(self, state):
        _emit_sharpness(state, self._factor)


class RandomAdjustSharpness(_RandomApply):
    """torchvision.transforms.v2.RandomAdjustSharpness(sharpness_factor, p=0.5)."""
    _inner = _SharpnessInner

    def __init__(self, sharpness_factor, p=0.5):
        super().__init__(p)
        self.sharpness_factor = sharpness_factor
        self._factor = _sharpness_factor(sharpness_factor)


# ---- functional forms (torchvision.transforms.v2.functional's names) --------------------------

@public("gaussian_blur")
def gaussian_blur(inpt, kernel_size, sigma=None):
    ks = _kernel_size(kernel_size)
    s = _sigma(sigma, ks)
    return _one(inpt, lambda st: _emit_blur(st, ks, s), ("gaussian_blur", _arg_key(ks), _arg_key(s)))


@public("adjust_sharpness")
def adjust_sharpness(inpt, sharpness_factor):
    f = _sharpness_factor(sharpness_factor)
    return _one(inpt, lambda st: _emit_sharpness(st, f), ("sharpness", _arg_key(f)))
