"""toroid's own typed tensors (toroid.tv_tensors without torchvision): Image, Video, Mask,
BoundingBoxes (BoundingBoxFormat), KeyPoints with torchvision's names, constructors and
attributes. Without torch there are no typed tensors: the classes are empty and nothing is
an instance of them."""

import enum

try:
    import torch
except ImportError:
    torch = None


class BoundingBoxFormat(enum.Enum):
    """How a box's numbers are laid out: XYXY (corners), XYWH (top-left corner, width,
    height), CXCYWH (centre, width, height); the rotated formats XYWHR, CXCYWHR (angle in
    degrees) and XYXYXYXY (four corners)."""
    XYXY = "XYXY"
    XYWH = "XYWH"
    CXCYWH = "CXCYWH"
    XYWHR = "XYWHR"
    CXCYWHR = "CXCYWHR"
    XYXYXYXY = "XYXYXYXY"


def is_rotated_bounding_format(format):
    if isinstance(format, BoundingBoxFormat):
        return format in (BoundingBoxFormat.XYWHR, BoundingBoxFormat.CXCYWHR, BoundingBoxFormat.XYXYXYXY)
    if isinstance(format, str):
        return format in ("XYWHR", "CXCYWHR", "XYXYXYXY")
    raise ValueError("format should be str or BoundingBoxFormat, got %s" % type(format))


if torch is None:
    class TVTensor:  # noqa: D101
        pass

    class Image(TVTensor):  # noqa: D101
        pass

    class Video(TVTensor):  # noqa: D101
        pass

    class Mask(TVTensor):  # noqa: D101
        pass

    class BoundingBoxes(TVTensor):  # noqa: D101
        pass

    class KeyPoints(TVTensor):  # noqa: D101
        pass

    def wrap(wrappee, *, like, **kwargs):  # noqa: D103
        return wrappee
else:
    _KEEP_TYPE = {torch.Tensor.clone, torch.Tensor.to, torch.Tensor.detach, torch.Tensor.requires_grad_}
    # Plain torch semantics inside (torch < 2.0 names it DisableTorchFunction).
    _PLAIN = getattr(torch._C, "DisableTorchFunctionSubclass", None) or torch._C.DisableTorchFunction

    class TVTensor(torch.Tensor):
        """A tensor whose type says what it holds. Operations on it return plain tensors,
        except clone, to, detach and requires_grad_, which keep the type and metadata."""

        @staticmethod
        def _to_tensor(data, dtype=None, device=None, requires_grad=None):
            if requires_grad is None:
                requires_grad = data.requires_grad if isinstance(data, torch.Tensor) else False
            return torch.as_tensor(data, dtype=dtype, device=device).requires_grad_(requires_grad)

        def _meta(self):
            return {}

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if not all(issubclass(cls, t) for t in types):
                return NotImplemented
            with _PLAIN():
                out = func(*args, **(kwargs or {}))
            if func in _KEEP_TYPE and args and isinstance(args[0], cls) and isinstance(out, torch.Tensor):
                return wrap(out, like=args[0])
            if isinstance(out, cls):
                return out.as_subclass(torch.Tensor)
            return out

        def __deepcopy__(self, memo):
            return self.detach().clone().requires_grad_(self.requires_grad)

        def __reduce_ex__(self, protocol):
            return (_rebuild, (type(self), self.as_subclass(torch.Tensor), self._meta()))

        def __repr__(self, *, tensor_contents=None):
            extra = "".join(", %s=%s" % kv for kv in self._meta().items())
            with _PLAIN():
                text = torch.Tensor.__repr__(self)
            return text[:-1] + extra + ")"

    def _rebuild(cls, tensor, meta):
        return wrap(tensor, like=None, cls=cls, **meta)

    def _pil_to_tensor(data):
        if type(data).__module__.startswith("PIL."):
            import numpy as np
            a = np.asarray(data)
            a = a[:, :, None] if a.ndim == 2 else a
            return torch.from_numpy(a.copy()).permute(2, 0, 1).contiguous()
        return data

    class Image(TVTensor):
        """An image or a batch of images, [..., C, H, W] (a 2-D input gets C = 1)."""

        def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
            t = cls._to_tensor(_pil_to_tensor(data), dtype=dtype, device=device, requires_grad=requires_grad)
            if t.ndim < 2:
                raise ValueError("Tensor must be 2D or higher, got %dD tensor." % t.ndim)
            if t.ndim == 2:
                t = t.unsqueeze(0)
            return t.as_subclass(cls)

    class Video(TVTensor):
        """A video, [..., T, C, H, W]."""

        def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
            t = cls._to_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
            if t.ndim < 4:
                raise ValueError("Tensor must be 4D or higher, got %dD tensor." % t.ndim)
            return t.as_subclass(cls)

    class Mask(TVTensor):
        """A segmentation or detection mask, [..., H, W]."""

        def __new__(cls, data, *, dtype=None, device=None, requires_grad=None):
            t = cls._to_tensor(_pil_to_tensor(data), dtype=dtype, device=device, requires_grad=requires_grad)
            return t.as_subclass(cls)

    class BoundingBoxes(TVTensor):
        """Boxes [N, K] of one image: format, canvas_size (height, width) of the image and
        clamping_mode ("soft", "hard" or None)."""

        @classmethod
        def _wrap(cls, tensor, *, format, canvas_size, clamping_mode="soft", check_dims=True):
            if check_dims:
                if tensor.ndim == 1:
                    tensor = tensor.unsqueeze(0)
                elif tensor.ndim != 2:
                    raise ValueError("Expected a 1D or 2D tensor, got %dD" % tensor.ndim)
            if clamping_mode is not None and clamping_mode not in ("hard", "soft"):
                raise ValueError("clamping_mode must be None, hard or soft, got %s." % (clamping_mode,))
            if isinstance(format, str):
                format = BoundingBoxFormat[format.upper()]
            boxes = tensor.as_subclass(cls)
            boxes.format = format
            boxes.canvas_size = tuple(canvas_size)
            boxes.clamping_mode = clamping_mode
            return boxes

        def __new__(cls, data, *, format, canvas_size, clamping_mode="soft", dtype=None, device=None,
                    requires_grad=None):
            t = cls._to_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
            if not torch.is_floating_point(t) and is_rotated_bounding_format(format):
                raise ValueError("Rotated bounding boxes should be floating point tensors, got %s." % t.dtype)
            return cls._wrap(t, format=format, canvas_size=canvas_size, clamping_mode=clamping_mode)

        def _meta(self):
            return {"format": self.format, "canvas_size": self.canvas_size, "clamping_mode": self.clamping_mode}

    class KeyPoints(TVTensor):
        """Points [..., 2] (x, y) of one image, with its canvas_size (height, width)."""

        @classmethod
        def _wrap(cls, tensor, *, canvas_size, check_dims=True):
            if check_dims:
                if tensor.ndim == 1:
                    tensor = tensor.unsqueeze(0)
                elif tensor.shape[-1] != 2:
                    raise ValueError("Expected a tensor of shape (..., 2), not %s" % (tuple(tensor.shape),))
            points = tensor.as_subclass(cls)
            points.canvas_size = tuple(canvas_size)
            return points

        def __new__(cls, data, *, canvas_size, dtype=None, device=None, requires_grad=None):
            t = cls._to_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
            return cls._wrap(t, canvas_size=canvas_size)

        def _meta(self):
            return {"canvas_size": self.canvas_size}

    def wrap(wrappee, *, like, cls=None, **kwargs):
        """wrappee as the TVTensor type of `like`, with like's format, canvas_size and
        clamping_mode unless given."""
        cls = cls or type(like)
        if issubclass(cls, BoundingBoxes):
            return cls._wrap(wrappee, format=kwargs.get("format", getattr(like, "format", None)),
                             canvas_size=kwargs.get("canvas_size", getattr(like, "canvas_size", None)),
                             clamping_mode=kwargs.get("clamping_mode", getattr(like, "clamping_mode", "soft")),
                             check_dims=False)
        if issubclass(cls, KeyPoints):
            return cls._wrap(wrappee, canvas_size=kwargs.get("canvas_size", getattr(like, "canvas_size", None)),
                             check_dims=False)
        return wrappee.as_subclass(cls)
