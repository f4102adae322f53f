"""Samples: dicts, tuples and lists (nested) of images, masks, bounding boxes and key points
through toroid's transforms, each item moved by the same random draws, as torchvision 0.26's
v2 transforms move them.

A call on a sample runs on its image (the first tv_tensors.Image or Video, else the first plain
tensor or NumPy array, as torchvision picks it) as on an image alone: the transforms draw their
parameters from its size and add toroid ops to the call's state. The state tells the sample of
each op it adds (`follow`):
- masks take the geometric ops (crop, flip, pad, resize, affine, perspective) in nearest mode,
  with the fill meant for masks, and no others (colour, normalize, erase, dtype);
  they run as toroid programs of their own at the end of the call or before a host step;
- boxes and key points are moved at once on the host (torch float math in torchvision's order:
  its box formats, clamping and corner transforms), so a later draw (RandomIoUCrop) sees them;
- other images of the sample take the same ops as the first.
A callable that is not a toroid transform gets the whole sample (torchvision's Compose passes
it the sample too): everything runs up to it, it runs, and the call goes on with its result.
"""

import importlib
import numbers
import sys

from .. import _core
from .._capi import Error, InvalidTypeError


class _Lazy:
    """toroid.tv_tensors, imported at its first use (it imports torchvision where installed,
    which calls on images alone never need)."""

    def __getattr__(self, name):
        return getattr(importlib.import_module("toroid.tv_tensors"), name)


tv_tensors = _Lazy()

_GEOMETRIC = ("crop", "center_crop", "flip", "pad", "resize", "affine", "perspective", "grid_sample")


def _torch():
    import torch
    return torch


def is_pure_tensor(x):
    torch = _torch()
    return isinstance(x, torch.Tensor) and not isinstance(x, tv_tensors.TVTensor)


def TYPED_ITEMS():  # noqa: N802 - a constant that needs the import
    """The typed tensors that are not images."""
    return (tv_tensors.Mask, tv_tensors.BoundingBoxes, tv_tensors.KeyPoints)


def is_typed_item(x):
    """Whether x is a Mask, BoundingBoxes or KeyPoints (a plain tensor or array is told at once)."""
    module = type(x).__module__
    if module in ("torch", "numpy", "builtins"):
        return False
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor) and isinstance(x, TYPED_ITEMS())


def is_sample(x):
    """Whether a call's input is a sample rather than one image: a dict, tuple or list, or a
    typed tensor that is not an image (a Mask, BoundingBoxes or KeyPoints alone)."""
    return isinstance(x, (dict, tuple, list)) or is_typed_item(x)


def flatten(x):
    from torch.utils._pytree import tree_flatten
    return tree_flatten(x)


def unflatten(leaves, spec):
    from torch.utils._pytree import tree_unflatten
    return tree_unflatten(leaves, spec)


def _is_pil(x):
    return type(x).__module__.startswith("PIL.") and hasattr(x, "getbands")


def _is_numpy(x):
    return type(x).__module__ == "numpy" and hasattr(x, "ndim")


def image_leaves(leaves):
    """The indexes of the leaves a transform takes as images: every Image, Video and PIL image;
    where there is none, the first plain tensor (or NumPy array) of 2 dims or more alone."""
    explicit = [i for i, x in enumerate(leaves)
                if isinstance(x, (tv_tensors.Image, tv_tensors.Video)) or _is_pil(x)]
    if explicit:
        return explicit
    for i, x in enumerate(leaves):
        if (is_pure_tensor(x) or _is_numpy(x)) and x.ndim >= 2:  # a 1-D tensor (labels) is no image
            return [i]
    return []


# ---- fills: one per kind of item ------------------------------------------------------------

class Fills:
    """A transform's fill: one value for every item, or torchvision's dict by item type (a
    type or "others"). `for_type` gives an item's value, checked by `check` (None: no fill)."""

    def __init__(self, fill, check):
        if isinstance(fill, dict):
            self._by_type = {k: check(v) for k, v in fill.items()}
        else:
            self._by_type = {"others": check(fill)}

    def for_type(self, t):
        if t in self._by_type:
            return self._by_type[t]
        return self._by_type.get("others")


# ---- box and point math (torchvision 0.26's kernels, in its order of operations) -----------

def _fmt():
    return tv_tensors.BoundingBoxFormat


def _check_format(fmt):
    if tv_tensors.is_rotated_bounding_format(fmt):
        raise Error("toroid.transforms moves boxes of the formats XYXY, XYWH and CXCYWH; %s boxes are not "
                    "supported yet" % fmt.name)


def convert_format(b, old, new, inplace=False):
    """torchvision's _convert_bounding_box_format for the unrotated formats."""
    F = _fmt()
    if old == new:
        return b
    _check_format(old)
    _check_format(new)
    if old == F.XYWH:
        b = b if inplace else b.clone()
        b[..., 2:] += b[..., :2]
    elif old == F.CXCYWH:
        original, dtype = b, b.dtype
        cast = not b.is_floating_point()
        if cast:
            b = b.float()
        elif not inplace:
            b = b.clone()
        half = b[..., 2:] / 2
        b[..., :2].sub_(half)
        b[..., 2:].add_(b[..., :2])
        if cast:
            b = b.to(dtype)
            if inplace:
                original[:] = b
                b = original
    if new == F.XYWH:
        b = b if (inplace or old != F.XYXY) else b.clone()
        b[..., 2:] -= b[..., :2]
    elif new == F.CXCYWH:
        if not inplace and old == F.XYXY:
            b = b.clone()
        b[..., 2:].sub_(b[..., :2])
        b[..., :2].mul_(2).add_(b[..., 2:]).div_(2, rounding_mode=None if b.is_floating_point() else "floor")
    return b


def clamp_boxes(b, fmt, canvas, mode):
    """torchvision's _clamp_bounding_boxes (hard and soft are the same for unrotated boxes)."""
    if mode is None:
        return b.clone()
    dtype = b.dtype
    b = b.clone() if b.is_floating_point() else b.float()
    xyxy = convert_format(b, fmt, _fmt().XYXY, inplace=True)
    xyxy[..., 0::2].clamp_(min=0, max=canvas[1])
    xyxy[..., 1::2].clamp_(min=0, max=canvas[0])
    return convert_format(xyxy, _fmt().XYXY, fmt, inplace=True).to(dtype)


def _shift(b, fmt, dx, dy, sign):
    torch = _torch()
    F = _fmt()
    if fmt == F.XYXY:
        v = [dx, dy, dx, dy]
    else:
        v = [dx, dy, 0, 0]
    t = torch.tensor(v, dtype=b.dtype, device=b.device)
    return b - t if sign < 0 else b + t


def _flip_boxes(b, fmt, canvas, horizontal):
    """torchvision's horizontal_flip_bounding_boxes / vertical_flip_bounding_boxes: along x
    (index 0, the canvas's width) or y (index 1, its height)."""
    F = _fmt()
    a, size = (0, canvas[1]) if horizontal else (1, canvas[0])
    shape = b.shape
    b = b.clone().reshape(-1, 4)
    if fmt == F.XYXY:
        b[:, [a + 2, a]] = b[:, [a, a + 2]].sub_(size).neg_()
    elif fmt == F.XYWH:
        b[:, a].add_(b[:, a + 2]).sub_(size).neg_()
    else:
        b[:, a].sub_(size).neg_()
    return b.reshape(shape)


def _flip_points(p, canvas, horizontal):
    shape = p.shape
    p = p.clone().reshape(-1, 2)
    if horizontal:
        p[..., 0] = p[..., 0].sub_(canvas[1] - 1).neg_()
    else:
        p[..., 1] = p[..., 1].sub_(canvas[0] - 1).neg_()
    return p.reshape(shape)


def expanded_canvas(geo, canvas):
    """The canvas of boxes and points after an affine with expand, as torchvision works it out
    for them: its inverse matrix about the absolute centre through its corner formula (the
    image's own size may differ by a pixel where its rotation is exact)."""
    from ._base import _inverse_affine_matrix  # noqa: PLC0415 - _base imports this module
    from ._warp import _affine_output_size  # noqa: PLC0415
    h, w = canvas
    center = geo["center"] if geo["center"] is not None else [w * 0.5, h * 0.5]
    m = _inverse_affine_matrix(center, geo["angle"], geo["translate"], geo["scale"], geo["shear"])
    nw, nh = _affine_output_size(m, w, h)
    return (nh, nw)


def _affine_points(pts, geo, canvas, dtype, device):
    """Points (N, 2) through torchvision's forward affine; with expand, shifted to the grown
    canvas. Returns the points and the canvas after."""
    torch = _torch()
    center = geo["center"]
    if center is None:
        center = [canvas[1] * 0.5, canvas[0] * 0.5]
    from ._base import _inverse_affine_matrix  # noqa: PLC0415 - _base imports this module
    m = _inverse_affine_matrix(center, geo["angle"], geo["translate"], geo["scale"], geo["shear"], inverted=False)
    mt = torch.tensor(m, dtype=dtype, device=device).reshape(2, 3).T
    pts = torch.cat([pts, torch.ones(pts.shape[0], 1, device=device, dtype=dtype)], dim=-1)
    out = torch.matmul(pts, mt)
    shift = None
    if geo.get("expand"):
        h, w = canvas
        corners = torch.tensor([[0.0, 0.0, 1.0], [0.0, float(h), 1.0], [float(w), float(h), 1.0], [float(w), 0.0, 1.0]],
                               dtype=dtype, device=device)
        shift = torch.amin(torch.matmul(corners, mt), dim=0, keepdim=True)
    return out, shift


def _affine_boxes(b, fmt, canvas, after, geo, mode):
    torch = _torch()
    F = _fmt()
    if b.numel() == 0:
        return b
    shape, dtype = b.shape, b.dtype
    cast = not b.is_floating_point()
    b = b.float() if cast else b.clone()
    b = convert_format(b, fmt, F.XYXY, inplace=True).reshape(-1, 4)
    pts = b[:, [[0, 1], [2, 1], [2, 3], [0, 3]]].reshape(-1, 2)
    out, shift = _affine_points(pts, geo, canvas, b.dtype, b.device)
    out = out.reshape(-1, 4, 2)
    lo, hi = torch.aminmax(out, dim=1)
    boxes = torch.cat([lo, hi], dim=1)
    if shift is not None:
        boxes.sub_(shift.repeat((1, 2)))
    boxes = clamp_boxes(boxes, F.XYXY, after, mode)
    boxes = convert_format(boxes, F.XYXY, fmt, inplace=True).reshape(shape)
    return boxes.to(dtype) if cast else boxes


def _affine_keypoints(p, canvas, geo):
    if p.numel() == 0:
        return p
    dtype, shape = p.dtype, p.shape
    p = p.clone() if p.is_floating_point() else p.float()
    out, shift = _affine_points(p.reshape(-1, 2), geo, canvas, p.dtype, p.device)
    if shift is not None:
        out.sub_(shift)
    return out.reshape(shape).to(dtype)


def _perspective_thetas(c, dtype, device):
    torch = _torch()
    denom = c[0] * c[4] - c[1] * c[3]
    if denom == 0:
        raise Error("the perspective coefficients %s can not be inverted to move boxes or points" % (c,))
    inv = [(c[4] - c[5] * c[7]) / denom, (-c[1] + c[2] * c[7]) / denom, (c[1] * c[5] - c[2] * c[4]) / denom,
           (-c[3] + c[5] * c[6]) / denom, (c[0] - c[2] * c[6]) / denom, (-c[0] * c[5] + c[2] * c[3]) / denom,
           (-c[4] * c[6] + c[3] * c[7]) / denom, (-c[0] * c[7] + c[1] * c[6]) / denom]
    t1 = torch.tensor([[inv[0], inv[1], inv[2]], [inv[3], inv[4], inv[5]]], dtype=dtype, device=device)
    t2 = torch.tensor([[inv[6], inv[7], 1.0], [inv[6], inv[7], 1.0]], dtype=dtype, device=device)
    return t1, t2


def _perspective_map(pts, coeffs, dtype):
    torch = _torch()
    t1, t2 = _perspective_thetas(coeffs, dtype, pts.device)
    pts = torch.cat([pts, torch.ones(pts.shape[0], 1, device=pts.device)], dim=-1)
    return torch.matmul(pts, t1.T).div_(torch.matmul(pts, t2.T))


def _perspective_boxes(b, fmt, canvas, coeffs, mode):
    torch = _torch()
    F = _fmt()
    if b.numel() == 0:
        return b
    shape, dtype = b.shape, b.dtype
    b = convert_format(b, fmt, F.XYXY).reshape(-1, 4)
    work = b.dtype if torch.is_floating_point(b) else torch.float32
    pts = b[:, [[0, 1], [2, 1], [2, 3], [0, 3]]].reshape(-1, 2)
    out = _perspective_map(pts, coeffs, work).reshape(-1, 4, 2)
    lo, hi = torch.aminmax(out, dim=1)
    boxes = clamp_boxes(torch.cat([lo, hi], dim=1), F.XYXY, canvas, mode)
    return convert_format(boxes, F.XYXY, fmt, inplace=True).reshape(shape).to(dtype)


def _perspective_keypoints(p, coeffs):
    torch = _torch()
    if p.numel() == 0:
        return p
    work = p.dtype if torch.is_floating_point(p) else torch.float32
    shape = p.shape
    out = _perspective_map(p.clone().reshape(-1, 2), coeffs, work)
    return out.to(p.dtype).reshape(shape)


def crop_region(op, canvas):
    """(top, left, height, width) a crop or center_crop op takes of an image of size `canvas`
    (a centre crop's anchor as torchvision rounds it; its size one number or two)."""
    if op["op"] == "center_crop":
        size = op["size"]
        ch, cw = (size, size) if isinstance(size, numbers.Number) else (size[0], size[-1])
        ch, cw = int(ch), int(cw)
        return int(round((canvas[0] - ch) / 2.0)), int(round((canvas[1] - cw) / 2.0)), ch, cw
    return int(op["top"]), int(op["left"]), int(op["height"]), int(op["width"])


def move_boxes(b, fmt, mode, op, before, after, geo):
    """Boxes b (a plain tensor, format fmt, on a canvas `before`) after one op of the image
    whose size becomes `after`."""
    torch = _torch()
    name = op["op"]
    if geo is not None and geo.get("kind") == "affine":
        return _affine_boxes(b, fmt, before, after, geo, mode)
    if name in ("crop", "center_crop"):
        top, left, _, _ = crop_region(op, before)
        return clamp_boxes(_shift(b, fmt, left, top, -1), fmt, after, mode)
    if name == "pad":
        if op.get("mode", "constant") != "constant":
            raise Error("Padding mode '%s' is not supported with bounding boxes" % op["mode"])
        left, top = op["padding"][0], op["padding"][1]
        return clamp_boxes(_shift(b, fmt, left, top, +1), fmt, after, mode)
    if name == "flip":
        dims = [d % 4 if d < 0 else d for d in op["dims"]]
        if 3 in dims:
            b = _flip_boxes(b, fmt, before, True)
        if 2 in dims:
            b = _flip_boxes(b, fmt, before, False)
        return b
    if name == "resize":
        if tuple(after) == tuple(before):
            return b
        ratios = torch.tensor([after[1] / before[1], after[0] / before[0]] * 2, device=b.device)
        return b.mul(ratios).to(b.dtype)
    if name == "perspective":
        return _perspective_boxes(b, fmt, before, op["coefficients"], mode)
    raise Error("bounding boxes can't go through toroid's %s op" % name)


def move_points(p, op, before, after, geo):
    torch = _torch()
    name = op["op"]
    if geo is not None and geo.get("kind") == "affine":
        return _affine_keypoints(p, before, geo)
    if name in ("crop", "center_crop"):
        top, left, _, _ = crop_region(op, before)
        return p - torch.tensor([left, top], dtype=p.dtype, device=p.device)
    if name == "pad":
        if op.get("mode", "constant") != "constant":
            raise Error("Padding mode '%s' is not supported with KeyPoints (supported modes are constant)" % op["mode"])
        return p + torch.tensor([op["padding"][0], op["padding"][1]], dtype=p.dtype, device=p.device)
    if name == "flip":
        dims = [d % 4 if d < 0 else d for d in op["dims"]]
        if 3 in dims:
            p = _flip_points(p, before, True)
        if 2 in dims:
            p = _flip_points(p, before, False)
        return p
    if name == "resize":
        if tuple(after) == tuple(before):
            return p
        ratios = torch.tensor([after[1] / before[1], after[0] / before[0]], device=p.device)
        return p.mul(ratios).to(p.dtype)
    if name == "perspective":
        return _perspective_keypoints(p, op["coefficients"])
    raise Error("key points can't go through toroid's %s op" % name)


# ---- masks ------------------------------------------------------------------------------------

def _scalar_fill(fill):
    if fill is None:
        return [0.0]
    if len(fill) > 1:
        raise Error("Non-scalar fill value is not supported")
    return fill


def mask_op(op, fill):
    """The op a mask takes for the image's op: nearest sampling, the mask's fill."""
    name = op["op"]
    m = dict(op)
    if name == "resize":
        m = {"op": "resize", "mode": "nearest", "size": None}
        return m  # the size is set by the caller (the image's size after)
    if name in ("affine", "perspective", "grid_sample"):
        m["mode"] = "nearest"
        m.pop("fill", None)
        if fill is not None:
            m["fill"] = _scalar_fill(fill)
    elif name == "pad":
        if m.get("mode", "constant") == "constant":
            m["fill"] = _scalar_fill(fill)
    return m


class _Item:
    """One typed leaf of the sample: its current value (a plain tensor) and what it needs."""

    def __init__(self, index, leaf):
        self.index = index
        self.leaf = leaf
        self.ops = []  # masks and other images: pending toroid ops and ("cast", dtype) steps


class Sample:
    """The items of one call's sample besides the image the state runs on."""

    def __init__(self, inputs, multiple):
        self.inputs = inputs
        self.multiple = multiple
        self.leaves, self.spec = flatten(inputs)
        self._classify()

    def _classify(self):
        torch = _torch()
        images = image_leaves(self.leaves)
        self.image = images[0] if images else None
        self.images = [_Item(i, self.leaves[i]) for i in images[1:]]
        for it in self.images:
            it.value = _plain(it.leaf)
        self.masks, self.boxes, self.points = [], [], []
        for i, x in enumerate(self.leaves):
            if isinstance(x, tv_tensors.Mask):
                self.masks.append(_Item(i, x))
            elif isinstance(x, tv_tensors.BoundingBoxes):
                _check_format(x.format)
                it = _Item(i, x)
                it.value = x.as_subclass(torch.Tensor)
                it.canvas = tuple(x.canvas_size)
                it.format = x.format
                self.boxes.append(it)
            elif isinstance(x, tv_tensors.KeyPoints):
                it = _Item(i, x)
                it.value = x.as_subclass(torch.Tensor)
                it.canvas = tuple(x.canvas_size)
                self.points.append(it)

    def size(self, check=True):
        """torchvision's query_size: the one (height, width) of the sample's images, masks,
        boxes and points (unchecked: the image's, else the first item's)."""
        if not check and self.image is not None:
            return _image_size(self.leaves[self.image])
        sizes = set()
        for i, x in enumerate(self.leaves):
            if i == self.image or any(i == it.index for it in self.images):
                sizes.add(_image_size(x))
            elif isinstance(x, tv_tensors.Mask):
                sizes.add(tuple(x.shape[-2:]))
            elif isinstance(x, (tv_tensors.BoundingBoxes, tv_tensors.KeyPoints)):
                sizes.add(tuple(x.canvas_size))
        if not sizes:
            raise InvalidTypeError("No image, video, mask, bounding box of keypoint was found in the sample")
        if len(sizes) > 1 and check:
            raise Error("Found multiple HxW dimensions in the sample: %s" % ", ".join(str(s) for s in sorted(sizes)))
        return sorted(sizes)[0]

    def image_input(self):
        """The image leaf as the state takes it (a plain tensor for a typed one)."""
        x = self.leaves[self.image]
        torch = _torch()
        return x.as_subclass(torch.Tensor) if isinstance(x, tv_tensors.TVTensor) else x

    def image_type(self):
        return type(self.leaves[self.image]) if self.image is not None else _torch().Tensor

    # -- following the image's ops --

    def follow(self, op, before, after, fills, geo):
        name = op["op"]
        for it in self.images:
            it.ops.append(op)
        if name not in _GEOMETRIC:
            return
        for it in self.masks:
            fill = fills.for_type(type(it.leaf)) if fills is not None else op.get("fill")
            m = mask_op(op, fill)
            if name == "resize":
                m["size"] = [int(after[0]), int(after[1])]
            it.ops.append(m)
        if geo is not None and geo.get("expand"):
            after = expanded_canvas(geo, before)
        for it in self.boxes:
            it.value = move_boxes(it.value, it.format, it.leaf.clamping_mode, op, before, after, geo)
            it.canvas = tuple(after)
        for it in self.points:
            it.value = move_points(it.value, op, before, after, geo)
            it.canvas = tuple(after)

    def cast(self, dtypes):
        """ToDtype's dict for the items that are not images: masks, boxes and points take
        their type's dtype (None: as they are)."""
        for group in (self.masks, self.boxes, self.points):
            for it in group:
                dtype = dtypes(type(it.leaf))
                if dtype is None:
                    continue
                if group is self.masks:
                    it.ops.append(("cast", dtype))
                else:
                    it.value = it.value.to(dtype)

    def map_boxes(self, fn):
        for it in self.boxes:
            it.value, it.format, it.canvas = fn(it.value, it.format, it.canvas, it.leaf.clamping_mode)

    def map_points(self, fn):
        for it in self.points:
            it.value = fn(it.value, it.canvas)

    def zero_boxes(self, outside):
        for it in self.boxes:
            it.value = it.value.clone()
            it.value[outside] = 0

    # -- results --

    def result(self, image_out):
        """The sample with every item's result (pending mask ops run now)."""
        leaves = list(self.leaves)
        if self.image is not None:
            leaves[self.image] = _rewrap(image_out, self.leaves[self.image])
        for it in self.images:
            leaves[it.index] = _rewrap(_run_ops(it.ops, it.value), it.leaf)
        for it in self.masks:
            leaves[it.index] = _rewrap(_run_mask(it.ops, _plain(it.leaf)), it.leaf)
        for it in self.boxes:
            leaves[it.index] = tv_tensors.wrap(it.value, like=it.leaf, canvas_size=it.canvas, format=it.format)
        for it in self.points:
            leaves[it.index] = tv_tensors.wrap(it.value, like=it.leaf, canvas_size=it.canvas)
        return unflatten(leaves, self.spec)


def _image_size(x):
    if _is_pil(x):
        return (x.size[1], x.size[0])
    return tuple(x.shape[-2:])


def _plain(x):
    torch = _torch()
    return x.as_subclass(torch.Tensor) if isinstance(x, torch.Tensor) else x


def _rewrap(out, like):
    if isinstance(like, tv_tensors.TVTensor) and not isinstance(out, type(like)):
        return tv_tensors.wrap(out, like=like)
    return out


def _run_ops(ops, x):
    if not ops:
        return x
    return _core.run_ops(ops, x)


def _working_dtype(t):
    """The dtype a mask moves in through toroid ops (nearest sampling copies values, so any
    dtype whose values the working one holds exactly) and whether it is the mask's own."""
    torch = _torch()
    if t.dtype in (torch.uint8, torch.float32):
        return t.dtype
    if t.dtype == torch.bool:
        return torch.uint8
    if t.numel() == 0:
        return torch.uint8
    if not t.is_floating_point():
        lo, hi = int(t.min()), int(t.max())
        if 0 <= lo and hi <= 255:
            return torch.uint8
        if -(1 << 24) <= lo and hi <= (1 << 24):
            return torch.float32
        raise Error("a mask's values must lie within +-2^24 to move through toroid's ops, got %d..%d" % (lo, hi))
    return torch.float32


def _run_mask(ops, m):
    """A mask through its pending ops: 2-D masks as one plane, other dtypes in a working
    dtype that holds their values exactly, casts where ToDtype put them."""
    if not ops:
        return m
    i = 0
    while i < len(ops):
        if isinstance(ops[i], tuple):
            m = m.to(ops[i][1])
            i += 1
            continue
        j = i
        while j < len(ops) and not isinstance(ops[j], tuple):
            j += 1
        m = _run_mask_ops(ops[i:j], m)
        i = j
    return m


def _run_mask_ops(ops, m):
    if m.ndim < 2:
        raise Error("a mask has at least 2 dims (H, W), got shape %s" % (tuple(m.shape),))
    squeeze = m.ndim == 2
    x = m.unsqueeze(0) if squeeze else m
    if x.ndim > 4:
        x = x.reshape((-1,) + tuple(x.shape[-3:]))
    work = _working_dtype(x)
    y = _core.cached_pipeline(ops)(x.to(work) if x.dtype != work else x)
    if y.dtype != m.dtype:
        y = y.to(m.dtype)
    if m.ndim > 4:
        y = y.reshape(tuple(m.shape[:-2]) + tuple(y.shape[-2:]))
    return y.squeeze(0) if squeeze else y


def run_pending(it):
    """Another image of the sample, its pending ops run now."""
    it.value = _run_ops(it.ops, it.value)
    it.ops = []
    return it.value


def numbers_ok(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool)
