"""MixUp and CutMix: torchvision.transforms.v2's batch transforms, which mix each image of a
batch with the one before it (the batch rolled by one) and its labels with the same weights.
They take a whole batch and its labels (after the DataLoader, as torchvision's do), so they
run as PyTorch operations on the batch, with torchvision 0.26's arithmetic and random draws
(torch's default generator: a Beta(alpha, alpha) sample, then for CutMix the box centre's
column and row), on CPU or CUDA tensors: MixUp()(images, labels) gives torchvision's tensors
under the same seed. In a Compose they run as host steps."""

import collections.abc
import math

from .._capi import Error, InvalidTypeError, public, show
from ._base import _torch

TRANSFORMS = ["MixUp", "CutMix"]
FUNCTIONAL = []
__all__ = TRANSFORMS + FUNCTIONAL


def _tv_tensors():
    """toroid.tv_tensors: torchvision's when torchvision is installed (its Image, Video,
    BoundingBoxes and Mask are told apart as torchvision tells them), else toroid's own."""
    import importlib
    return importlib.import_module("toroid.tv_tensors")


def _is_pure_tensor(x, torch, tv):
    return isinstance(x, torch.Tensor) and (tv is None or not isinstance(x, tv.TVTensor))


def _is_pil(x):
    return type(x).__module__.startswith("PIL.")


def _default_labels(inputs, torch, tv):
    """torchvision's default labels getter: the second item of a tuple or list (a tensor, or
    a dict holding one), or a dict's 'labels' key (any case), else its first key holding
    'label'."""
    if isinstance(inputs, (tuple, list)):
        inputs = inputs[1]
    if _is_pure_tensor(inputs, torch, tv):
        return inputs
    if not isinstance(inputs, collections.abc.Mapping):
        raise Error("When using the default labels_getter, the input passed to forward must be a dictionary or a "
                    "two-tuple whose second item is a dictionary or a tensor, but got %s instead." % show(inputs))
    key = next((k for k in inputs.keys() if k.lower() == "labels"), None)
    if key is None:
        key = next((k for k in inputs.keys() if "label" in k.lower()), None)
    if key is None:
        raise Error("Could not infer where the labels are in the sample. Try passing a callable as the labels_getter "
                    "parameter?If there are no labels in the sample by design, pass labels_getter=None.")
    return inputs[key]


def _parse_labels_getter(labels_getter, default):
    """torchvision's labels_getter argument: "default" (-> `default`), a callable, or None (no
    labels)."""
    if labels_getter == "default":
        return default
    if callable(labels_getter):
        return labels_getter
    if labels_getter is None:
        return lambda _: None
    raise Error("labels_getter should either be 'default', a callable, or None, but got %s." % show(labels_getter))


class _MixBase:
    """The shared part of MixUp and CutMix: arguments, the sample's structure, the labels."""

    def __init__(self, *, alpha=1.0, num_classes=None, labels_getter="default"):
        torch = _torch()
        self.alpha = float(alpha)
        # torchvision's distribution object: its samples are drawn as torchvision draws them.
        self._dist = torch.distributions.Beta(torch.tensor([alpha]), torch.tensor([alpha]))
        self.num_classes = num_classes
        self._labels_getter = _parse_labels_getter(labels_getter, None)

    def __call__(self, *inputs):
        torch = _torch()
        from torch.utils._pytree import tree_flatten, tree_unflatten
        tv = _tv_tensors()
        inputs = inputs if len(inputs) > 1 else inputs[0]
        flat, spec = tree_flatten(inputs)
        # The first plain tensor is the batch, unless the sample holds a tv_tensors image or
        # video; other plain tensors pass through (torchvision's heuristic).
        image_types = (tv.Image, tv.Video) if tv is not None else ()
        plain_first = not any(isinstance(x, image_types) or _is_pil(x) for x in flat)
        needs = []
        for x in flat:
            need = isinstance(x, torch.Tensor) or _is_pil(x)
            if need and _is_pure_tensor(x, torch, tv):
                need, plain_first = plain_first, False
            needs.append(need)
        banned = (tv.BoundingBoxes, tv.Mask) if tv is not None else ()
        if any(_is_pil(x) or isinstance(x, banned) for x in flat):
            raise Error("%s() does not support PIL images, bounding boxes and masks." % type(self).__name__)
        labels = (self._labels_getter or (lambda i: _default_labels(i, torch, tv)))(inputs)
        if not isinstance(labels, torch.Tensor):
            raise Error("The labels must be a tensor, but got %s instead." % type(labels))
        if labels.ndim not in (1, 2):
            raise Error("labels should be index based with shape (batch_size,) or probability based with shape "
                        "(batch_size, num_classes), but got a tensor of shape %s instead." % (labels.shape,))
        if labels.ndim == 2 and self.num_classes is not None and labels.shape[-1] != self.num_classes:
            raise Error("When passing 2D labels, the number of elements in last dimension must match num_classes: "
                        "%d != %d. You can Leave num_classes to None." % (labels.shape[-1], self.num_classes))
        if labels.ndim == 1 and self.num_classes is None:
            raise Error("num_classes must be passed if the labels are index-based (1D)")
        params = {"labels": labels, "batch_size": labels.shape[0]}
        params.update(self._params([x for x, n in zip(flat, needs) if n], torch))
        needs[next(i for i, x in enumerate(flat) if x is labels)] = True
        out = [self._transform(x, params, torch, tv) if n else x for x, n in zip(flat, needs)]
        return tree_unflatten(out, spec)

    def _check_batch(self, x, batch_size, tv):
        dims = 5 if tv is not None and isinstance(x, tv.Video) else 4
        if x.ndim != dims:
            raise Error("Expected a batched input with %d dims, but got %d dimensions instead." % (dims, x.ndim))
        if x.shape[0] != batch_size:
            raise Error("The batch size of the image or video does not match the batch size of the labels: "
                        "%d != %d." % (x.shape[0], batch_size))

    def _mix_labels(self, label, lam, torch):
        if label.ndim == 1:
            label = torch.nn.functional.one_hot(label, num_classes=self.num_classes)
        if not label.dtype.is_floating_point:
            label = label.float()
        return label.roll(1, 0).mul_(1.0 - lam).add_(label.mul(lam))

    def _transform(self, x, params, torch, tv):
        if x is params["labels"]:
            return self._mix_labels(x, self._label_weight(params), torch)
        image_types = (tv.Image, tv.Video) if tv is not None else ()
        if not (isinstance(x, image_types) or _is_pure_tensor(x, torch, tv)):
            return x
        self._check_batch(x, params["batch_size"], tv)
        out = self._mix_images(x, params)
        return tv.wrap(out, like=x) if isinstance(x, image_types) else out


class MixUp(_MixBase):
    """torchvision.transforms.v2.MixUp(alpha=1.0, num_classes=None, labels_getter="default"):
    images = lam * images + (1 - lam) * images rolled by one along the batch, labels (one-hot
    for index labels) the same, lam ~ Beta(alpha, alpha). Float images (torchvision's in-place
    multiply refuses uint8)."""

    @public("MixUp")
    def __init__(self, *, alpha=1.0, num_classes=None, labels_getter="default"):
        super().__init__(alpha=alpha, num_classes=num_classes, labels_getter=labels_getter)

    @public("MixUp")
    def __call__(self, *inputs):
        return super().__call__(*inputs)

    def _params(self, flat, torch):
        return {"lam": float(self._dist.sample(()))}

    def _label_weight(self, params):
        return params["lam"]

    def _mix_images(self, x, params):
        if not x.dtype.is_floating_point:
            raise InvalidTypeError("MixUp mixes float images (torchvision's in-place multiply refuses %s): convert "
                                   "the batch first (ToDtype(torch.float32, scale=True))" % x.dtype)
        lam = params["lam"]
        return x.roll(1, 0).mul_(1.0 - lam).add_(x.mul(lam))


class CutMix(_MixBase):
    """torchvision.transforms.v2.CutMix(alpha=1.0, num_classes=None, labels_getter="default"):
    a box of each image is replaced by the same box of the image before it in the batch; the
    labels are mixed by the share of the image the box leaves. Any dtype."""

    @public("CutMix")
    def __init__(self, *, alpha=1.0, num_classes=None, labels_getter="default"):
        super().__init__(alpha=alpha, num_classes=num_classes, labels_getter=labels_getter)

    @public("CutMix")
    def __call__(self, *inputs):
        return super().__call__(*inputs)

    def _params(self, flat, torch):
        lam = float(self._dist.sample(()))
        sizes = {tuple(x.shape[-2:]) for x in flat if isinstance(x, torch.Tensor)}
        if not sizes:
            raise InvalidTypeError("No image, video, mask or bounding box was found in the sample")
        if len(sizes) > 1:
            raise Error("Found multiple HxW dimensions in the sample: %s" % ", ".join(str(s) for s in sorted(sizes)))
        H, W = sizes.pop()
        r_x = torch.randint(W, size=(1,))
        r_y = torch.randint(H, size=(1,))
        r = 0.5 * math.sqrt(1.0 - lam)
        r_w_half, r_h_half = int(r * W), int(r * H)
        x1 = int(torch.clamp(r_x - r_w_half, min=0))
        y1 = int(torch.clamp(r_y - r_h_half, min=0))
        x2 = int(torch.clamp(r_x + r_w_half, max=W))
        y2 = int(torch.clamp(r_y + r_h_half, max=H))
        return {"box": (x1, y1, x2, y2), "lam_adjusted": float(1.0 - (x2 - x1) * (y2 - y1) / (W * H))}

    def _label_weight(self, params):
        return params["lam_adjusted"]

    def _mix_images(self, x, params):
        x1, y1, x2, y2 = params["box"]
        out = x.clone()
        out[..., y1:y2, x1:x2] = x.roll(1, 0)[..., y1:y2, x1:x2]
        return out
