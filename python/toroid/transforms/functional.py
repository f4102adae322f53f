"""toroid.transforms.functional: torchvision.transforms.v2.functional's names, signatures and
results, on one image (C, H, W), a batch (N, C, H, W) or a list of images."""

from . import _MODULES

__all__ = [name for m in _MODULES for name in m.FUNCTIONAL]
globals().update({name: getattr(m, name) for m in _MODULES for name in m.FUNCTIONAL})
