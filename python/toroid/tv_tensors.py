"""Typed tensors for samples: Image, Video, Mask, BoundingBoxes (with BoundingBoxFormat) and
KeyPoints, as torchvision.tv_tensors names them.

Where torchvision is installed these are torchvision's own classes (a sample built with either
module works with both libraries). Without torchvision, toroid defines them here with the same
names, constructors and attributes: torch.Tensor subclasses whose operations return plain
tensors (clone, to, detach and requires_grad_ keep the type and metadata), as torchvision's do.
toroid.transforms moves every item of a sample (a dict, tuple or list, nested) with the same
random draws: images by the pipeline, masks by its geometry in nearest mode, boxes and points
by its coordinates.
"""

__all__ = ["TVTensor", "Image", "Video", "Mask", "BoundingBoxes", "BoundingBoxFormat", "KeyPoints", "wrap",
           "is_rotated_bounding_format", "FROM_TORCHVISION"]

try:
    from torchvision.tv_tensors import (BoundingBoxes, BoundingBoxFormat, Image, KeyPoints, Mask,  # noqa: F401
                                        TVTensor, Video, is_rotated_bounding_format, wrap)
    FROM_TORCHVISION = True
except ImportError:
    from ._tv_tensors_own import (BoundingBoxes, BoundingBoxFormat, Image, KeyPoints, Mask,  # noqa: F401
                                  TVTensor, Video, is_rotated_bounding_format, wrap)
    FROM_TORCHVISION = False
