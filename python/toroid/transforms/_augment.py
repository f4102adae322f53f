"""Automatic augmentation policies: torchvision.transforms.v2's AutoAugment (ImageNet, CIFAR10
and SVHN policies), RandAugment, TrivialAugmentWide and AugMix, drawing with torch's default generator
exactly as torchvision 0.26 draws (torchvision/transforms/v2/_auto_augment.py): the same
calls in the same order, the magnitudes from the same float32 torch.linspace / arange tables.

Each drawn operation is one toroid op (an affine for shears, translations and rotations; a
colour op for the rest) whose magnitude is a run-time value, run as its own program: the
programs a policy needs are one per operation (about a dozen, compiled once and kept in the
disk cache), where fusing each call's draws with the transforms around it would need one per
combination (RandAugment(2) alone draws 196 ordered pairs)."""

import math
import numbers

from .._capi import Error, InvalidTypeError, public, show
from . import _base, _color, _mix, _warp
from ._base import InterpolationMode, Transform, _torch

TRANSFORMS = ["AutoAugmentPolicy", "AutoAugment", "RandAugment", "TrivialAugmentWide", "AugMix"]
FUNCTIONAL = []
__all__ = TRANSFORMS + FUNCTIONAL


class AutoAugmentPolicy:
    """torchvision's AutoAugmentPolicy values (torchvision's own enum is accepted too)."""
    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


# The operations and their magnitude tables, as functions of (bins, height, width) returning a
# torch tensor or None, and whether the magnitude's sign is drawn. torchvision's tables.
def _linspace(hi, lo=0.0):
    return lambda bins, h, w: _torch().linspace(lo, hi, bins)


def _posterize_bits(top, span):
    def table(bins, h, w):
        torch = _torch()
        return (top - (torch.arange(bins) / ((bins - 1) / span))).round().int()
    return table


def _none(bins, h, w):
    return None


_SHARED = {
    "ShearX": (_linspace(0.3), True),
    "ShearY": (_linspace(0.3), True),
    "TranslateX": (lambda bins, h, w: _torch().linspace(0.0, 150.0 / 331.0 * w, bins), True),
    "TranslateY": (lambda bins, h, w: _torch().linspace(0.0, 150.0 / 331.0 * h, bins), True),
    "Rotate": (_linspace(30.0), True),
    "Brightness": (_linspace(0.9), True),
    "Color": (_linspace(0.9), True),
    "Contrast": (_linspace(0.9), True),
    "Sharpness": (_linspace(0.9), True),
    "Posterize": (_posterize_bits(8, 4), False),
    "Solarize": (lambda bins, h, w: _torch().linspace(1.0, 0.0, bins), False),
    "AutoContrast": (_none, False),
    "Equalize": (_none, False),
}

_AUTOAUGMENT_SPACE = dict(_SHARED, Invert=(_none, False))
_RANDAUGMENT_SPACE = dict([("Identity", (_none, False))] + list(_SHARED.items()))
_TRIVIAL_SPACE = {
    "Identity": (_none, False),
    "ShearX": (_linspace(0.99), True),
    "ShearY": (_linspace(0.99), True),
    "TranslateX": (_linspace(32.0), True),
    "TranslateY": (_linspace(32.0), True),
    "Rotate": (_linspace(135.0), True),
    "Brightness": (_linspace(0.99), True),
    "Color": (_linspace(0.99), True),
    "Contrast": (_linspace(0.99), True),
    "Sharpness": (_linspace(0.99), True),
    "Posterize": (_posterize_bits(8, 6), False),
    "Solarize": (lambda bins, h, w: _torch().linspace(1.0, 0.0, bins), False),
    "AutoContrast": (_none, False),
    "Equalize": (_none, False),
}

_AUGMIX_PARTIAL_SPACE = {
    "ShearX": (_linspace(0.3), True),
    "ShearY": (_linspace(0.3), True),
    "TranslateX": (lambda bins, h, w: _torch().linspace(0.0, w / 3.0, bins), True),
    "TranslateY": (lambda bins, h, w: _torch().linspace(0.0, h / 3.0, bins), True),
    "Rotate": (_linspace(30.0), True),
    "Posterize": (_posterize_bits(4, 4), False),
    "Solarize": (lambda bins, h, w: _torch().linspace(1.0, 0.0, bins), False),
    "AutoContrast": (_none, False),
    "Equalize": (_none, False),
}
_AUGMIX_SPACE = dict(_AUGMIX_PARTIAL_SPACE, Brightness=(_linspace(0.9), True), Color=(_linspace(0.9), True),
                     Contrast=(_linspace(0.9), True), Sharpness=(_linspace(0.9), True))

_POLICIES = {
    AutoAugmentPolicy.IMAGENET: [
        (("Posterize", 0.4, 8), ("Rotate", 0.6, 9)), (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)), (("Posterize", 0.6, 7), ("Posterize", 0.6, 6)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)), (("Equalize", 0.4, None), ("Rotate", 0.8, 8)),
        (("Solarize", 0.6, 3), ("Equalize", 0.6, None)), (("Posterize", 0.8, 5), ("Equalize", 1.0, None)),
        (("Rotate", 0.2, 3), ("Solarize", 0.6, 8)), (("Equalize", 0.6, None), ("Posterize", 0.4, 6)),
        (("Rotate", 0.8, 8), ("Color", 0.4, 0)), (("Rotate", 0.4, 9), ("Equalize", 0.6, None)),
        (("Equalize", 0.0, None), ("Equalize", 0.8, None)), (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)), (("Rotate", 0.8, 8), ("Color", 1.0, 2)),
        (("Color", 0.8, 8), ("Solarize", 0.8, 7)), (("Sharpness", 0.4, 7), ("Invert", 0.6, None)),
        (("ShearX", 0.6, 5), ("Equalize", 1.0, None)), (("Color", 0.4, 0), ("Equalize", 0.6, None)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)), (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)), (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
    ],
    AutoAugmentPolicy.CIFAR10: [
        (("Invert", 0.1, None), ("Contrast", 0.2, 6)), (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
        (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)), (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.5, None), ("Equalize", 0.9, None)), (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
        (("Color", 0.4, 3), ("Brightness", 0.6, 7)), (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
        (("Equalize", 0.6, None), ("Equalize", 0.5, None)), (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
        (("Color", 0.7, 7), ("TranslateX", 0.5, 8)), (("Equalize", 0.3, None), ("AutoContrast", 0.4, None)),
        (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)), (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
        (("Solarize", 0.5, 2), ("Invert", 0.0, None)), (("Equalize", 0.2, None), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.2, None), ("Equalize", 0.6, None)), (("Color", 0.9, 9), ("Equalize", 0.6, None)),
        (("AutoContrast", 0.8, None), ("Solarize", 0.2, 8)), (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
        (("Solarize", 0.4, 5), ("AutoContrast", 0.9, None)), (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.9, None), ("Solarize", 0.8, 3)), (("Equalize", 0.8, None), ("Invert", 0.1, None)),
        (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, None)),
    ],
    AutoAugmentPolicy.SVHN: [
        (("ShearX", 0.9, 4), ("Invert", 0.2, None)), (("ShearY", 0.9, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.6, None), ("Solarize", 0.6, 6)), (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)), (("ShearX", 0.9, 4), ("AutoContrast", 0.8, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.4, None)), (("ShearY", 0.9, 5), ("Solarize", 0.2, 6)),
        (("Invert", 0.9, None), ("AutoContrast", 0.8, None)), (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("Solarize", 0.3, 3)), (("ShearY", 0.8, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.9, None), ("TranslateY", 0.6, 6)), (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Contrast", 0.3, 3), ("Rotate", 0.8, 4)), (("Invert", 0.8, None), ("TranslateY", 0.0, 2)),
        (("ShearY", 0.7, 6), ("Solarize", 0.4, 8)), (("Invert", 0.6, None), ("Rotate", 0.8, 4)),
        (("ShearY", 0.3, 7), ("TranslateX", 0.9, 3)), (("ShearX", 0.1, 6), ("Invert", 0.6, None)),
        (("Solarize", 0.7, 2), ("TranslateY", 0.6, 7)), (("ShearY", 0.8, 4), ("Invert", 0.8, None)),
        (("ShearX", 0.7, 9), ("TranslateY", 0.8, 3)), (("ShearY", 0.8, 5), ("AutoContrast", 0.7, None)),
        (("ShearX", 0.7, 2), ("Invert", 0.1, None)),
    ],
}


def _policy_name(policy):
    name = getattr(policy, "value", policy)
    if name not in _POLICIES:
        raise Error("The provided policy %s is not recognized." % (show(policy),))
    return name


def _emit_affine(state, mode, fill, angle=0.0, translate=(0, 0), shear=(0.0, 0.0), center=None):
    matrix = _base._pixel_matrix(state.h, state.w, angle, list(translate), 1.0, list(shear), center)
    _base._emit_affine(state, matrix, mode, fill)


def _emit_operation(state, name, magnitude, mode, fill):
    """torchvision's _AutoAugmentBase._apply_image_or_video_transform as one toroid op, run as
    its own program (state.cut): a policy's calls then need one program per operation and
    input class, not one per combination of operations with the transforms around them."""
    if name == "Identity":
        return
    state.cut()
    _emit_one_operation(state, name, magnitude, mode, fill)
    state.cut()


def _emit_one_operation(state, name, magnitude, mode, fill):
    if name in ("ShearX", "ShearY"):
        # The shear angle is atan(magnitude) in degrees, about the top-left corner.
        angle = math.degrees(math.atan(magnitude))
        _emit_affine(state, mode, fill, shear=(angle, 0.0) if name == "ShearX" else (0.0, angle), center=[0, 0])
    elif name == "TranslateX":
        _emit_affine(state, mode, fill, translate=(int(magnitude), 0))
    elif name == "TranslateY":
        _emit_affine(state, mode, fill, translate=(0, int(magnitude)))
    elif name == "Rotate":
        _warp._emit_rotate(state, magnitude, mode, False, None, fill)
    elif name == "Brightness":
        _color._emit_adjust(state, "brightness", 1.0 + magnitude)
    elif name == "Color":
        _color._emit_adjust(state, "saturation", 1.0 + magnitude)
    elif name == "Contrast":
        _color._emit_adjust(state, "contrast", 1.0 + magnitude)
    elif name == "Sharpness":
        state.add({"op": "adjust_sharpness", "factor": 1.0 + magnitude})
    elif name == "Posterize":
        _color._emit_posterize(state, int(magnitude))
    elif name == "Solarize":
        bound = 255 if state.dtype == "uint8" else 1.0
        _color._emit_solarize(state, bound * magnitude)
    elif name == "AutoContrast":
        state.add({"op": "autocontrast"})
    elif name == "Equalize":
        state.add({"op": "equalize"})
    elif name == "Invert":
        _color._emit_invert(state)
    else:  # pragma: no cover - the tables hold only the names above
        raise Error("No transform available for %s" % name)


def _signed(magnitude, signed):
    return -magnitude if signed and _torch().rand(()) <= 0.5 else magnitude


class _AutoAugmentBase(Transform):
    def __init__(self, interpolation, fill):
        self.interpolation = interpolation
        self._mode = _base._affine_mode(interpolation)
        self.fill = fill
        self._fill = _base._check_fill(fill)

    @staticmethod
    def _random_item(space):
        keys = tuple(space)
        key = keys[int(_torch().randint(len(keys), ()))]
        return key, space[key]


class AutoAugment(_AutoAugmentBase):
    """torchvision.transforms.v2.AutoAugment(policy, interpolation, fill): one of the policy's
    25 sub-policies per call, each of its two operations applied with its probability."""

    @public("AutoAugment")
    def __init__(self, policy=AutoAugmentPolicy.IMAGENET, interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__(interpolation, fill)
        self.policy = policy
        self._policies = _POLICIES[_policy_name(policy)]

    def _emit(self, state):
        torch = _torch()
        h, w = state.h, state.w
        policy = self._policies[int(torch.randint(len(self._policies), ()))]
        for name, probability, magnitude_idx in policy:
            if not torch.rand(()) <= probability:
                continue
            table, signed = _AUTOAUGMENT_SPACE[name]
            magnitudes = table(10, h, w)
            magnitude = 0.0 if magnitudes is None else _signed(float(magnitudes[magnitude_idx]), signed)
            _emit_operation(state, name, magnitude, self._mode, self._fill)


class RandAugment(_AutoAugmentBase):
    """torchvision.transforms.v2.RandAugment(num_ops, magnitude, num_magnitude_bins,
    interpolation, fill): num_ops operations drawn uniformly, each at the same magnitude bin."""

    @public("RandAugment")
    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST,
                 fill=None):
        super().__init__(interpolation, fill)
        if not isinstance(num_ops, int) or isinstance(num_ops, bool) or num_ops < 0:
            raise Error("num_ops should be a non-negative integer, but got %s instead." % (num_ops,))
        for v, what in ((magnitude, "magnitude"), (num_magnitude_bins, "num_magnitude_bins")):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise InvalidTypeError("%s must be an integer, got %s" % (what, show(v)))
        if not 0 <= magnitude < num_magnitude_bins:
            raise Error("magnitude must be in [0, num_magnitude_bins), got %d with %d bins"
                        % (magnitude, num_magnitude_bins))
        self.num_ops = num_ops
        self.magnitude = int(magnitude)
        self.num_magnitude_bins = int(num_magnitude_bins)

    def _emit(self, state):
        h, w = state.h, state.w
        for _ in range(self.num_ops):
            name, (table, signed) = self._random_item(_RANDAUGMENT_SPACE)
            magnitudes = table(self.num_magnitude_bins, h, w)
            magnitude = 0.0 if magnitudes is None else _signed(float(magnitudes[self.magnitude]), signed)
            _emit_operation(state, name, magnitude, self._mode, self._fill)


class TrivialAugmentWide(_AutoAugmentBase):
    """torchvision.transforms.v2.TrivialAugmentWide(num_magnitude_bins, interpolation, fill):
    one operation and one magnitude bin drawn uniformly per call."""

    @public("TrivialAugmentWide")
    def __init__(self, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__(interpolation, fill)
        if isinstance(num_magnitude_bins, bool) or not isinstance(num_magnitude_bins, numbers.Integral) or \
                num_magnitude_bins < 2:
            raise Error("num_magnitude_bins must be an integer of at least 2, got %s" % (show(num_magnitude_bins),))
        self.num_magnitude_bins = int(num_magnitude_bins)

    def _emit(self, state):
        torch = _torch()
        name, (table, signed) = self._random_item(_TRIVIAL_SPACE)
        magnitudes = table(self.num_magnitude_bins, state.h, state.w)
        magnitude = 0.0
        if magnitudes is not None:
            magnitude = _signed(float(magnitudes[int(torch.randint(self.num_magnitude_bins, ()))]), signed)
        _emit_operation(state, name, magnitude, self._mode, self._fill)


class AugMix(_AutoAugmentBase):
    """torchvision.transforms.v2.AugMix(severity, mixture_width, chain_depth, alpha, all_ops,
    interpolation, fill): mixture_width chains of 1-3 (or chain_depth) drawn operations, each
    chain run from the input through toroid's programs, mixed with the input by weights drawn
    per image from Dirichlet distributions (torch._sample_dirichlet on the image's device, as
    torchvision draws them); the mix is PyTorch's float32 arithmetic in torchvision's order,
    then converted back to the image's dtype. Torch tensors (a NumPy array is viewed as one)."""

    @public("AugMix")
    def __init__(self, severity=3, mixture_width=3, chain_depth=-1, alpha=1.0, all_ops=True,
                 interpolation=InterpolationMode.BILINEAR, fill=None):
        super().__init__(interpolation, fill)
        if not 1 <= severity <= 10:
            raise Error("The severity must be between [1, 10]. Got %s instead." % (severity,))
        self.severity = severity
        self.mixture_width = mixture_width
        self.chain_depth = chain_depth
        self.alpha = alpha
        self.all_ops = all_ops

    def _emit(self, state):
        state.call_host(self._mix)

    def _mix(self, x):
        torch = _torch()
        numpy_in = not isinstance(x, torch.Tensor)
        image = torch.from_numpy(x) if numpy_in else x
        space = _AUGMIX_SPACE if self.all_ops else _AUGMIX_PARTIAL_SPACE
        h, w = image.shape[-2], image.shape[-1]
        dims = list(image.shape)
        batch = image.reshape([1] * max(4 - image.ndim, 0) + dims)
        batch_dims = [batch.size(0)] + [1] * (batch.ndim - 1)
        m = torch._sample_dirichlet(torch.tensor([self.alpha, self.alpha], device=batch.device).expand(batch_dims[0], -1))
        weights = torch._sample_dirichlet(
            torch.tensor([self.alpha] * self.mixture_width, device=batch.device).expand(batch_dims[0], -1)
        ) * m[:, 1].reshape([batch_dims[0], -1])
        mix = m[:, 0].reshape(batch_dims) * batch
        for i in range(self.mixture_width):
            aug = batch
            depth = self.chain_depth if self.chain_depth > 0 else int(torch.randint(low=1, high=4, size=(1,)).item())
            for _ in range(depth):
                name, (table, signed) = self._random_item(space)
                magnitudes = table(10, h, w)
                magnitude = 0.0
                if magnitudes is not None:
                    magnitude = _signed(float(magnitudes[int(torch.randint(self.severity, ()))]), signed)
                step = _base._State(aug)
                _emit_operation(step, name, magnitude, self._mode, self._fill)
                aug = step.flush()
            mix.add_(weights[:, i].reshape(batch_dims) * aug)
        out = mix.reshape(dims).to(dtype=image.dtype)
        tv = _mix._tv_tensors()
        if tv is not None and isinstance(x, (tv.Image, tv.Video)):
            out = tv.wrap(out, like=x)
        return out.numpy() if numpy_in else out
