"""Conversions into the tensors toroid's transforms run on, with torchvision.transforms.v2's
names: ToImage (a PIL image, a NumPy HWC array or a tensor -> a CHW image tensor),
PILToTensor and ToPureTensor, and their functional forms. They run on the host, as the first
step of a Compose (toroid's transforms themselves take tensors and arrays, not PIL images:
convert first, as `v2.Compose([v2.ToImage(), ...])` does)."""

from .._capi import InvalidTypeError, public
from . import _sample
from ._base import Transform, _run, is_pil_image

TRANSFORMS = ["ToImage", "PILToTensor", "ToPureTensor"]
FUNCTIONAL = ["to_image", "pil_to_tensor", "to_pure_tensor"]
__all__ = TRANSFORMS + FUNCTIONAL


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _hwc_array(pic):
    import numpy as np
    a = np.array(pic, copy=True)
    return a.reshape(pic.size[1], pic.size[0], len(pic.getbands()))


def _tv_image(t):
    """t as torchvision.tv_tensors.Image where torchvision is installed, else t."""
    try:
        from torchvision import tv_tensors
    except ImportError:
        return t
    return tv_tensors.Image(t)


@public("pil_to_tensor")
def pil_to_tensor(pic):
    """torchvision.transforms.v2.functional.pil_to_tensor: the image's (C, H, W) tensor, a view
    of a copy of its (H, W, C) pixels (channels-last memory). Without torch: a NumPy view."""
    if not is_pil_image(pic):
        raise InvalidTypeError("pic should be PIL Image. Got %s" % type(pic).__name__)
    a = _hwc_array(pic)
    torch = _torch()
    if torch is None:
        return a.transpose(2, 0, 1)
    return torch.as_tensor(a).permute((2, 0, 1))


@public("to_image")
def to_image(inpt):
    """torchvision.transforms.v2.functional.to_image: a PIL image (pil_to_tensor), a NumPy
    array (H, W) or (..., H, W, C) (its channels moved before the rows, contiguous) or a
    tensor (as it is), as a tv_tensors.Image where torchvision is installed, else a plain
    tensor (without torch: a NumPy CHW array)."""
    import numpy as np
    torch = _torch()
    if is_pil_image(inpt):
        out = pil_to_tensor(inpt)
    elif isinstance(inpt, np.ndarray):
        a = np.atleast_3d(inpt)
        moved = np.ascontiguousarray(np.moveaxis(a, -1, -3))
        out = moved if torch is None else torch.from_numpy(moved)
    elif torch is not None and isinstance(inpt, torch.Tensor):
        out = inpt
    else:
        raise InvalidTypeError("Input can either be a pure Tensor, a numpy array, or a PIL image, but got %s instead."
                               % type(inpt).__name__)
    return _tv_image(out) if torch is not None and isinstance(out, torch.Tensor) else out


@public("to_pure_tensor")
def to_pure_tensor(inpt):
    """torchvision.transforms.v2.ToPureTensor: a tensor subclass (a tv_tensor) as a plain
    torch.Tensor; anything else as it is."""
    torch = _torch()
    if torch is not None and isinstance(inpt, torch.Tensor) and type(inpt) is not torch.Tensor:
        return inpt.as_subclass(torch.Tensor)
    return inpt


class _Conversion(Transform):
    """A conversion run on the host as a step of the call (the ops before it run first)."""

    _fn = None

    # Whether on a sample it converts every item (ToPureTensor) or the images alone.
    _every_item = False

    def _emit(self, state):
        if state.sample is not None and self._every_item:
            multiple = state.sample.multiple
            fn = type(self)._fn

            def each(*sample):
                leaves, spec = _sample.flatten(sample if multiple else sample[0])
                return _sample.unflatten([fn(x) for x in leaves], spec)
            state.call_host(each, whole=True)
            return
        state.call_host(type(self)._fn)

    def __call__(self, *inputs):
        if len(inputs) == 1 and not _sample.is_sample(inputs[0]):
            return type(self)._fn(inputs[0])
        return _run(self, *inputs)


class ToImage(_Conversion):
    """torchvision.transforms.v2.ToImage: see to_image."""

    _fn = staticmethod(to_image)

    @public("ToImage")
    def __init__(self):
        pass


class PILToTensor(_Conversion):
    """torchvision.transforms.v2.PILToTensor: see pil_to_tensor."""

    _fn = staticmethod(pil_to_tensor)

    @public("PILToTensor")
    def __init__(self):
        pass


class ToPureTensor(_Conversion):
    """torchvision.transforms.v2.ToPureTensor: see to_pure_tensor."""

    _fn = staticmethod(to_pure_tensor)
    _every_item = True

    @public("ToPureTensor")
    def __init__(self):
        pass
