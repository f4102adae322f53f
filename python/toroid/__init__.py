"""toroid: a just-in-time compiler for image-transform pipelines with PyTorch-exact
semantics. Pure Python over the C library libtoroid_c.so (ctypes): NumPy arrays and torch
CPU tensors go in without a copy, and the same kind comes out."""

from ._capi import (Error, InvalidTypeError, OutOfMemoryError, cache_stats, library_path, version as _version,
                    wait_for_background_builds)
from ._core import get_default_engine, get_num_threads, set_default_engine, set_num_threads
from . import io, transforms
from ._api import (CompiledFunction, Pipeline, Traced, affine, center_crop, compile, convert, crop, flip,
                   grid_sample, interpolate, normalize, resize)

__version__ = _version()

__all__ = ["Error", "InvalidTypeError", "OutOfMemoryError", "Pipeline", "CompiledFunction", "Traced", "affine",
           "center_crop", "compile", "convert", "crop",
           "flip", "resize",
           "grid_sample", "interpolate", "normalize", "set_default_engine", "get_default_engine",
           "set_num_threads", "get_num_threads", "library_path", "io", "transforms", "tv_tensors", "cache_stats",
           "wait_for_background_builds"]


def __getattr__(name):
    # toroid.tv_tensors at its first use: it imports torchvision where installed.
    if name == "tv_tensors":
        import importlib
        return importlib.import_module(".tv_tensors", __name__)
    raise AttributeError("module 'toroid' has no attribute %r" % name)
