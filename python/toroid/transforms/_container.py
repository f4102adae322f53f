"""Containers of transforms: RandomApply, RandomChoice, RandomOrder and Lambda, drawing with
torch's default generator as torchvision 0.26's v2 containers do
(torchvision/transforms/v2/_container.py). The toroid transforms they hold add their ops to
the call's op list (one compiled pipeline with the transforms around them); any other
callable runs on the result so far."""

import numbers

from .._capi import Error, InvalidTypeError, public, show
from . import _sample
from ._base import Transform, _torch

TRANSFORMS = ["RandomApply", "RandomChoice", "RandomOrder", "Lambda"]
FUNCTIONAL = []
__all__ = TRANSFORMS + FUNCTIONAL


def _emit_one(t, state):
    if isinstance(t, Transform):
        t._emit(state)
    else:
        state.call_host(t, whole=True)


def _transform_list(transforms, what):
    if not isinstance(transforms, (list, tuple)):
        raise InvalidTypeError("Argument transforms should be a sequence of callables%s" % what)
    for t in transforms:
        if not callable(t):
            raise InvalidTypeError("Argument transforms should be a sequence of callables, got %s" % type(t).__name__)
    return list(transforms)


class RandomApply(Transform):
    """torchvision.transforms.v2.RandomApply(transforms, p): all of them when torch.rand(1) < p."""

    @public("RandomApply")
    def __init__(self, transforms, p=0.5):
        self.transforms = _transform_list(transforms, " or a `nn.ModuleList`")
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
            raise Error("`p` should be a floating point value in the interval [0.0, 1.0].")
        self.p = p

    def _emit(self, state):
        if _torch().rand(1) >= self.p:
            return
        for t in self.transforms:
            _emit_one(t, state)


class RandomChoice(Transform):
    """torchvision.transforms.v2.RandomChoice(transforms, p): one of them, picked by
    torch.multinomial over p (normalized; equal by default)."""

    @public("RandomChoice")
    def __init__(self, transforms, p=None):
        self.transforms = _transform_list(transforms, "")
        if p is None:
            p = [1] * len(self.transforms)
        elif not isinstance(p, (list, tuple)) or len(p) != len(self.transforms):
            raise Error("The number of p doesn't match the number of transforms: %s != %d"
                        % (len(p) if isinstance(p, (list, tuple)) else show(p), len(self.transforms)))
        total = sum(p)
        self.p = [prob / total for prob in p]

    def _emit(self, state):
        torch = _torch()
        idx = int(torch.multinomial(torch.tensor(self.p), 1))
        _emit_one(self.transforms[idx], state)


class RandomOrder(Transform):
    """torchvision.transforms.v2.RandomOrder(transforms): all of them in the order
    torch.randperm gives."""

    @public("RandomOrder")
    def __init__(self, transforms):
        self.transforms = _transform_list(transforms, "")

    def _emit(self, state):
        for idx in _torch().randperm(len(self.transforms)):
            _emit_one(self.transforms[int(idx)], state)


class Lambda(Transform):
    """torchvision.transforms.v2.Lambda(lambd, *types): a function of the image, run on the
    result so far between toroid segments. On a sample, lambd runs on each item that is an
    instance of `types` (default: any), as torchvision's Lambda does (plain tensors other than
    the image pass through)."""

    @public("Lambda")
    def __init__(self, lambd, *types):
        if not callable(lambd):
            raise InvalidTypeError("Argument lambd should be callable, got %r" % type(lambd).__name__)
        self.lambd = lambd
        self.types = types or (object,)

    def _emit(self, state):
        if state.sample is None:
            state.call_host(self.lambd)
            return
        multiple = state.sample.multiple

        def each(*sample):
            inputs = sample if multiple else sample[0]
            leaves, spec = _sample.flatten(inputs)
            images = set(_sample.image_leaves(leaves))
            out = [self.lambd(x) if isinstance(x, self.types) and (i in images or not _sample.is_pure_tensor(x))
                   else x for i, x in enumerate(leaves)]
            return _sample.unflatten(out, spec)
        state.call_host(each, whole=True)
