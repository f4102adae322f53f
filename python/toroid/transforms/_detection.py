"""Detection and segmentation transforms: RandomZoomOut, RandomIoUCrop, ScaleJitter,
RandomShortestSize, RandomPhotometricDistort, and the box utilities SanitizeBoundingBoxes,
ClampBoundingBoxes, ConvertBoundingBoxFormat and ClampKeyPoints (with their functional forms).

Each draws its parameters with torch's default generator in torchvision 0.26's order
(torchvision/transforms/v2/_geometry.py, _color.py, _misc.py, _meta.py) from the sample's
size (and RandomIoUCrop from its boxes); the image takes toroid ops, and the sample's masks,
boxes and points follow them (_sample.py).
"""

import numbers

from .._capi import Error, InvalidTypeError, public, show
from . import _sample
from ._sample import tv_tensors
from ._base import InterpolationMode, Transform, _torch
from ._color import _emit_adjust, _emit_hue
from ._mix import _default_labels, _parse_labels_getter, _tv_tensors

TRANSFORMS = ["RandomZoomOut", "RandomIoUCrop", "ScaleJitter", "RandomShortestSize", "RandomPhotometricDistort",
              "SanitizeBoundingBoxes", "ClampBoundingBoxes", "ConvertBoundingBoxFormat", "ClampKeyPoints"]
FUNCTIONAL = ["convert_bounding_box_format", "clamp_bounding_boxes", "clamp_keypoints", "sanitize_bounding_boxes",
              "permute_channels"]
__all__ = TRANSFORMS + FUNCTIONAL


def _pair_of_numbers(v, name):
    if not isinstance(v, (list, tuple)) or len(v) != 2 or not all(_sample.numbers_ok(x) for x in v):
        raise Error("%s should be a sequence of length 2, got %s" % (name, show(v)))
    return float(v[0]), float(v[1])


def _p(p):
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise Error("`p` should be a floating point value in the interval [0.0, 1.0].")
    return p


def _resize_to(state, size, interpolation, antialias):
    from ._base import Resize  # noqa: PLC0415
    Resize([int(size[0]), int(size[1])], interpolation, None, antialias)._emit(state)


class RandomZoomOut(Transform):
    """torchvision.transforms.v2.RandomZoomOut(fill, side_range, p): with probability p, the
    image on a canvas side_range times larger at a random place, filled with `fill` (a value,
    one per channel, or a dict by item type)."""

    @public("RandomZoomOut")
    def __init__(self, fill=0, side_range=(1.0, 4.0), p=0.5):
        from ._geometry import _pad_fill  # noqa: PLC0415
        self.p = _p(p)
        self.fill = fill
        self._fill = _pad_fill(fill)
        self.side_range = _pair_of_numbers(side_range, "side_range")
        if self.side_range[0] < 1.0 or self.side_range[0] > self.side_range[1]:
            raise Error("Invalid side range provided %s." % (show(side_range),))

    def _emit(self, state):
        torch = _torch()
        if torch.rand(1) >= self.p:
            return
        orig_h, orig_w = state.h, state.w
        r = self.side_range[0] + torch.rand(1) * (self.side_range[1] - self.side_range[0])
        canvas_w = int(orig_w * r)
        canvas_h = int(orig_h * r)
        r = torch.rand(2)
        left = int((canvas_w - orig_w) * r[0])
        top = int((canvas_h - orig_h) * r[1])
        right = canvas_w - (left + orig_w)
        bottom = canvas_h - (top + orig_h)
        from ._geometry import _emit_pad  # noqa: PLC0415
        _emit_pad(state, (left, right, top, bottom), self._fill, "constant")


def _box_iou(a, b):
    """torchvision.ops.box_iou of XYXY boxes."""
    torch = _torch()

    def upcast(t):
        if t.is_floating_point():
            return t if t.dtype in (torch.float32, torch.float64) else t.float()
        return t if t.dtype in (torch.int32, torch.int64) else t.int()

    def area(t):
        t = upcast(t)
        return (t[..., 2] - t[..., 0]) * (t[..., 3] - t[..., 1])
    lt = torch.max(a[..., None, :2], b[..., None, :, :2])
    rb = torch.min(a[..., None, 2:], b[..., None, :, 2:])
    wh = upcast(rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    union = area(a)[..., None] + area(b)[..., None, :] - inter
    return inter / union


class RandomIoUCrop(Transform):
    """torchvision.transforms.v2.RandomIoUCrop (the SSD crop): a crop whose overlap with the
    boxes whose centres it holds reaches a minimum drawn from sampler_options; boxes whose
    centres fall outside become zeros (SanitizeBoundingBoxes removes them)."""

    @public("RandomIoUCrop")
    def __init__(self, min_scale=0.3, max_scale=1.0, min_aspect_ratio=0.5, max_aspect_ratio=2.0,
                 sampler_options=None, trials=40):
        self.min_scale = min_scale
        self.max_scale = max_scale
        self.min_aspect_ratio = min_aspect_ratio
        self.max_aspect_ratio = max_aspect_ratio
        self.options = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0] if sampler_options is None else list(sampler_options)
        self.trials = trials

    def _emit(self, state):
        sample = state.sample
        if sample is None or not sample.boxes or sample.image is None:
            raise InvalidTypeError("RandomIoUCrop() requires input sample to contain tensor or PIL images and "
                                   "bounding boxes. Sample can also contain masks.")
        torch = _torch()
        orig_h, orig_w = state.h, state.w
        boxes = sample.boxes[0]
        while True:
            idx = int(torch.randint(low=0, high=len(self.options), size=(1,)))
            min_jaccard_overlap = self.options[idx]
            if min_jaccard_overlap >= 1.0:
                return
            for _ in range(self.trials):
                r = self.min_scale + (self.max_scale - self.min_scale) * torch.rand(2)
                new_w = int(orig_w * r[0])
                new_h = int(orig_h * r[1])
                aspect_ratio = new_w / new_h if new_h else float("inf")
                if not (self.min_aspect_ratio <= aspect_ratio <= self.max_aspect_ratio):
                    continue
                r = torch.rand(2)
                left = int((orig_w - new_w) * r[0])
                top = int((orig_h - new_h) * r[1])
                right = left + new_w
                bottom = top + new_h
                if left == right or top == bottom:
                    continue
                xyxy = _sample.convert_format(boxes.value, boxes.format, tv_tensors.BoundingBoxFormat.XYXY)
                cx = 0.5 * (xyxy[..., 0] + xyxy[..., 2])
                cy = 0.5 * (xyxy[..., 1] + xyxy[..., 3])
                within = (left < cx) & (cx < right) & (top < cy) & (cy < bottom)
                if not within.any():
                    continue
                xyxy = xyxy[within]
                ious = _box_iou(xyxy, torch.tensor([[left, top, right, bottom]], dtype=xyxy.dtype,
                                                   device=xyxy.device))
                if ious.max() < min_jaccard_overlap:
                    continue
                state.add({"op": "crop", "top": top, "left": left, "height": new_h, "width": new_w}, new_h, new_w)
                sample.zero_boxes(~within)
                return


class ScaleJitter(Transform):
    """torchvision.transforms.v2.ScaleJitter(target_size, scale_range, interpolation,
    antialias): a resize by min(target_h / h, target_w / w) times a scale drawn from
    scale_range (target_size is (height, width))."""

    @public("ScaleJitter")
    def __init__(self, target_size, scale_range=(0.1, 2.0), interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
        self.target_size = _pair_of_numbers(target_size, "target_size")
        self.scale_range = _pair_of_numbers(scale_range, "scale_range")
        self.interpolation = interpolation
        self.antialias = antialias

    def _emit(self, state):
        torch = _torch()
        orig_h, orig_w = state.h, state.w
        scale = self.scale_range[0] + torch.rand(1) * (self.scale_range[1] - self.scale_range[0])
        r = min(self.target_size[1] / orig_h, self.target_size[0] / orig_w) * scale
        _resize_to(state, (int(orig_h * r), int(orig_w * r)), self.interpolation, self.antialias)


class RandomShortestSize(Transform):
    """torchvision.transforms.v2.RandomShortestSize(min_size, max_size, interpolation,
    antialias): the shorter edge becomes one of min_size (drawn), the longer capped at
    max_size."""

    @public("RandomShortestSize")
    def __init__(self, min_size, max_size=None, interpolation=InterpolationMode.BILINEAR, antialias=True):
        self.min_size = [min_size] if isinstance(min_size, int) else list(min_size)
        if not self.min_size or not all(isinstance(v, int) and not isinstance(v, bool) for v in self.min_size):
            raise Error("min_size must be an int or a sequence of ints, got %s" % (show(min_size),))
        self.max_size = max_size
        self.interpolation = interpolation
        self.antialias = antialias

    def _emit(self, state):
        torch = _torch()
        orig_h, orig_w = state.h, state.w
        min_size = self.min_size[int(torch.randint(len(self.min_size), ()))]
        r = min_size / min(orig_h, orig_w)
        if self.max_size is not None:
            r = min(r, self.max_size / max(orig_h, orig_w))
        _resize_to(state, (int(orig_h * r), int(orig_w * r)), self.interpolation, self.antialias)


def _permute(permutation):
    def run(x):
        if _sample._is_numpy(x):
            return x[..., list(permutation), :, :].copy()
        return x[..., permutation, :, :].contiguous()
    return run


def _check_permutation(permutation, c):
    if len(permutation) != c:
        raise Error("Length of permutation does not match number of channels: %d != %d" % (len(permutation), c))


@public("permute_channels")
def permute_channels(inpt, permutation):
    """torchvision.transforms.v2.functional.permute_channels: output channel i is input
    channel permutation[i]."""
    from ._base import _one  # noqa: PLC0415
    perm = [int(i) for i in permutation]

    def emit(state):
        _check_permutation(perm, state.c)
        state.call_host(_permute(perm))
    return _one(inpt, emit)


class RandomPhotometricDistort(Transform):
    """torchvision.transforms.v2.RandomPhotometricDistort (the SSD colour distortion): each of
    brightness, contrast (before or after saturation and hue), saturation and hue with
    probability p, then a random channel order with probability p. The channel order runs on
    the host (a gather of whole planes)."""

    @public("RandomPhotometricDistort")
    def __init__(self, brightness=(0.875, 1.125), contrast=(0.5, 1.5), saturation=(0.5, 1.5), hue=(-0.05, 0.05),
                 p=0.5):
        self.brightness = _pair_of_numbers(brightness, "brightness")
        self.contrast = _pair_of_numbers(contrast, "contrast")
        self.saturation = _pair_of_numbers(saturation, "saturation")
        self.hue = _pair_of_numbers(hue, "hue")
        self.p = p

    def _emit(self, state):
        torch = _torch()
        if state.x is None and state.sample is not None:
            raise InvalidTypeError("No image or video was found in the sample")
        c = state.c
        draws = {}
        for key, r in (("brightness", self.brightness), ("contrast", self.contrast),
                       ("saturation", self.saturation), ("hue", self.hue)):
            draws[key] = torch.empty(1).uniform_(r[0], r[1]).item() if torch.rand(1) < self.p else None
        contrast_before = bool(torch.rand(()) < 0.5)
        permutation = torch.randperm(c) if torch.rand(1) < self.p else None
        # Each adjustment a program of its own, as ColorJitter's (the structures a call can
        # draw stay few).
        if draws["brightness"] is not None:
            state.cut()
            _emit_adjust(state, "brightness", draws["brightness"])
        if draws["contrast"] is not None and contrast_before:
            state.cut()
            _emit_adjust(state, "contrast", draws["contrast"])
        if draws["saturation"] is not None:
            state.cut()
            _emit_adjust(state, "saturation", draws["saturation"])
        if draws["hue"] is not None:
            state.cut()
            _emit_hue(state, draws["hue"])
        if draws["contrast"] is not None and not contrast_before:
            state.cut()
            _emit_adjust(state, "contrast", draws["contrast"])
        if permutation is not None:
            state.call_host(_permute(permutation.tolist()))
        state.cut()


# ---- the box utilities ------------------------------------------------------------------------

def _labels_default(inputs):
    """torchvision's default labels getter (shared with MixUp and CutMix)."""
    return _default_labels(inputs, _torch(), _tv_tensors())


def _valid_boxes(boxes, fmt, canvas, min_size, min_area):
    """torchvision's _get_sanitize_bounding_boxes_mask for unrotated boxes."""
    b = _sample.convert_format(boxes, fmt, tv_tensors.BoundingBoxFormat.XYXY)
    ws, hs = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    valid = (ws >= min_size) & (hs >= min_size) & (b >= 0).all(dim=-1) & (ws * hs >= min_area)
    h, w = canvas
    valid &= (b[:, 0] <= w) & (b[:, 2] <= w)
    valid &= (b[:, 1] <= h) & (b[:, 3] <= h)
    return valid


class SanitizeBoundingBoxes(Transform):
    """torchvision.transforms.v2.SanitizeBoundingBoxes(min_size, min_area, labels_getter):
    removes boxes smaller than min_size or min_area or outside the canvas, with their labels
    and masks (indexed along the first dim)."""

    @public("SanitizeBoundingBoxes")
    def __init__(self, min_size=1.0, min_area=1.0, labels_getter="default"):
        if min_size < 1:
            raise Error("min_size must be >= 1, got %s." % (min_size,))
        if min_area < 1:
            raise Error("min_area must be >= 1, got %s." % (min_area,))
        self.min_size = min_size
        self.min_area = min_area
        self._labels_getter = _parse_labels_getter(labels_getter, _labels_default)
        self.labels_getter = labels_getter

    def _sanitize(self, inputs):
        torch = _torch()
        labels = self._labels_getter(inputs)
        if labels is not None:
            msg = "The labels in the input to forward() must be a tensor or None, got %s instead."
            if isinstance(labels, torch.Tensor):
                labels = (labels,)
            elif isinstance(labels, (tuple, list)):
                for entry in labels:
                    if not isinstance(entry, torch.Tensor):
                        raise Error(msg % type(entry))
            else:
                raise Error(msg % type(labels))
        leaves, spec = _sample.flatten(inputs)
        boxes = next((x for x in leaves if isinstance(x, tv_tensors.BoundingBoxes)), None)
        if boxes is None:
            raise Error("No bounding boxes were found in the sample")
        _sample._check_format(boxes.format)
        if labels is not None:
            for label in labels:
                if boxes.shape[0] != label.shape[0]:
                    raise Error("Number of boxes (shape=%s) and must match the number of labels.Found labels with "
                                "shape=%s)." % (tuple(boxes.shape), tuple(label.shape)))
        valid = _valid_boxes(boxes.as_subclass(torch.Tensor), boxes.format, boxes.canvas_size, self.min_size,
                             self.min_area)
        out = []
        for x in leaves:
            is_label = labels is not None and any(x is label for label in labels)
            typed = isinstance(x, (tv_tensors.BoundingBoxes, tv_tensors.Mask))
            if not (is_label or typed):
                out.append(x)
                continue
            try:
                y = x[valid]
            except IndexError:
                out.append(x)
                continue
            out.append(y if is_label else tv_tensors.wrap(y.as_subclass(torch.Tensor), like=x))
        return _sample.unflatten(out, spec)

    def _emit(self, state):
        multiple = state.sample is not None and state.sample.multiple
        state.call_host(lambda *s: self._sanitize(s if multiple else s[0]), whole=True)


def _clamping_mode(mode):
    if mode is not None and mode not in ("soft", "hard", "auto"):
        raise Error("clamping_mode must be soft, hard, auto or None, got %s" % (mode,))
    return mode


class ClampBoundingBoxes(Transform):
    """torchvision.transforms.v2.ClampBoundingBoxes(clamping_mode="auto"): boxes clamped to
    their canvas ("auto": each box tensor's own clamping_mode)."""

    @public("ClampBoundingBoxes")
    def __init__(self, clamping_mode="auto"):
        self.clamping_mode = _clamping_mode(clamping_mode)

    def _emit(self, state):
        if state.sample is None:
            return
        mode = self.clamping_mode

        def clamp(b, fmt, canvas, own):
            return _sample.clamp_boxes(b, fmt, canvas, own if mode == "auto" else mode), fmt, canvas
        state.sample.map_boxes(clamp)


class ConvertBoundingBoxFormat(Transform):
    """torchvision.transforms.v2.ConvertBoundingBoxFormat(format)."""

    @public("ConvertBoundingBoxFormat")
    def __init__(self, format):
        self.format = _box_format(format)

    def _emit(self, state):
        if state.sample is None:
            return
        new = self.format
        state.sample.map_boxes(lambda b, fmt, canvas, _: (_sample.convert_format(b, fmt, new), new, canvas))


class ClampKeyPoints(Transform):
    """torchvision.transforms.v2.ClampKeyPoints: points clamped to [0, size - 1]."""

    @public("ClampKeyPoints")
    def __init__(self):
        pass

    def _emit(self, state):
        if state.sample is not None:
            state.sample.map_points(_clamp_points)


def _clamp_points(p, canvas):
    dtype = p.dtype
    p = p.clone() if p.is_floating_point() else p.float()
    p[..., 0].clamp_(min=0, max=canvas[1] - 1)
    p[..., 1].clamp_(min=0, max=canvas[0] - 1)
    return p.to(dtype=dtype)


def _box_format(fmt):
    F = tv_tensors.BoundingBoxFormat
    if isinstance(fmt, str):
        try:
            fmt = F[fmt.upper()]
        except KeyError:
            raise Error("unknown bounding box format %s (XYXY, XYWH, CXCYWH)" % (show(fmt),)) from None
    if not isinstance(fmt, F):
        raise InvalidTypeError("format should be str or BoundingBoxFormat, got %s" % type(fmt).__name__)
    return fmt


# ---- functional forms -------------------------------------------------------------------------

@public("convert_bounding_box_format")
def convert_bounding_box_format(inpt, old_format=None, new_format=None, inplace=False):
    """torchvision.transforms.v2.functional.convert_bounding_box_format."""
    torch = _torch()
    if new_format is None:
        raise InvalidTypeError("convert_bounding_box_format() missing 1 required argument: 'new_format'")
    new = _box_format(new_format)
    if _sample.is_pure_tensor(inpt):
        if old_format is None:
            raise Error("For pure tensor inputs, `old_format` has to be passed.")
        return _sample.convert_format(inpt, _box_format(old_format), new, inplace=inplace)
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        if old_format is not None:
            raise Error("For bounding box tv_tensor inputs, `old_format` must not be passed.")
        out = _sample.convert_format(inpt.as_subclass(torch.Tensor), inpt.format, new, inplace=inplace)
        return tv_tensors.wrap(out, like=inpt, format=new)
    raise InvalidTypeError("Input can either be a plain tensor or a bounding box tv_tensor, but got %s instead."
                           % type(inpt).__name__)


@public("clamp_bounding_boxes")
def clamp_bounding_boxes(inpt, format=None, canvas_size=None, clamping_mode="auto"):
    """torchvision.transforms.v2.functional.clamp_bounding_boxes."""
    torch = _torch()
    mode = _clamping_mode(clamping_mode)
    if _sample.is_pure_tensor(inpt):
        if format is None or canvas_size is None or mode == "auto":
            raise Error("For pure tensor inputs, `format`, `canvas_size` and `clamping_mode` have to be passed.")
        return _sample.clamp_boxes(inpt, _box_format(format), tuple(canvas_size), mode)
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        if format is not None or canvas_size is not None:
            raise Error("For bounding box tv_tensor inputs, `format` and `canvas_size` must not be passed.")
        _sample._check_format(inpt.format)
        mode = inpt.clamping_mode if mode == "auto" else mode
        out = _sample.clamp_boxes(inpt.as_subclass(torch.Tensor), inpt.format, inpt.canvas_size, mode)
        return tv_tensors.wrap(out, like=inpt)
    raise InvalidTypeError("Input can either be a plain tensor or a bounding box tv_tensor, but got %s instead."
                           % type(inpt).__name__)


@public("clamp_keypoints")
def clamp_keypoints(inpt, canvas_size=None):
    """torchvision.transforms.v2.functional.clamp_keypoints."""
    torch = _torch()
    if _sample.is_pure_tensor(inpt):
        if canvas_size is None:
            raise Error("For pure tensor inputs, `canvas_size` has to be passed.")
        return _clamp_points(inpt, tuple(canvas_size))
    if isinstance(inpt, tv_tensors.KeyPoints):
        if canvas_size is not None:
            raise Error("For keypoints tv_tensor inputs, `canvas_size` must not be passed.")
        return tv_tensors.wrap(_clamp_points(inpt.as_subclass(torch.Tensor), inpt.canvas_size), like=inpt)
    raise InvalidTypeError("Input can either be a plain tensor or a keypoints tv_tensor, but got %s instead."
                           % type(inpt).__name__)


@public("sanitize_bounding_boxes")
def sanitize_bounding_boxes(bounding_boxes, format=None, canvas_size=None, min_size=1.0, min_area=1.0):
    """torchvision.transforms.v2.functional.sanitize_bounding_boxes: (the valid boxes, their
    mask)."""
    torch = _torch()
    if _sample.is_pure_tensor(bounding_boxes):
        if format is None or canvas_size is None:
            raise Error("format and canvas_size cannot be None if bounding_boxes is a pure tensor. Got format=%s and "
                        "canvas_size=%s." % (format, canvas_size))
        valid = _valid_boxes(bounding_boxes, _box_format(format), tuple(canvas_size), min_size, min_area)
        return bounding_boxes[valid], valid
    if not isinstance(bounding_boxes, tv_tensors.BoundingBoxes):
        raise Error("bounding_boxes must be a tv_tensors.BoundingBoxes instance or a pure tensor.")
    if format is not None or canvas_size is not None:
        raise Error("format and canvas_size must be None when bounding_boxes is a tv_tensors.BoundingBoxes instance.")
    _sample._check_format(bounding_boxes.format)
    valid = _valid_boxes(bounding_boxes.as_subclass(torch.Tensor), bounding_boxes.format, bounding_boxes.canvas_size,
                         min_size, min_area)
    return tv_tensors.wrap(bounding_boxes.as_subclass(torch.Tensor)[valid], like=bounding_boxes), valid
