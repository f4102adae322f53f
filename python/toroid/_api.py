"""toroid's Python API in PyTorch's words: interpolate, affine, grid_sample, flip, crop,
convert and normalize on NumPy arrays or torch tensors; Pipeline for the JSON schema; and
compile, which traces a function of these ops into one compiled pipeline."""

import functools
import json
import os
import threading

from . import _capi, _core
from ._capi import Error, InvalidTypeError, Passthrough, public, show
from ._core import _generation

__all__ = ["interpolate", "resize", "center_crop", "affine", "grid_sample", "flip", "crop", "convert", "normalize", "Pipeline",
           "compile"]


# ---- argument helpers ----------------------------------------------------------------------

def _scalar(v, what, kind):
    if hasattr(v, "item") and getattr(v, "ndim", 0) == 0:
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InvalidTypeError("%s must be a number, got %s" % (what, show(v)))
    if kind is int:
        if isinstance(v, float) and not v.is_integer():
            raise Error("%s must be an integer, got %s" % (what, show(v)))
        return int(v)
    return float(v)


def _flag(v, what):
    """A yes/no argument: a bool, an int, None (False), or a 0-d array or tensor of one."""
    if v is None or isinstance(v, (bool, int)):
        return bool(v)
    if hasattr(v, "item") and getattr(v, "ndim", None) == 0:
        item = v.item()
        if isinstance(item, (bool, int)):
            return bool(item)
    raise InvalidTypeError("%s must be True or False, got %s" % (what, show(v)))


def _pair(v, what, kind):
    """An int/float or a sequence of two, as the list JSON wants (None stays None)."""
    if v is None:
        return None
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        if len(v) != 2:
            raise Error("%s must be a number or a pair (h, w), got %s" % (what, show(v)))
        return [_scalar(v[0], what, kind), _scalar(v[1], what, kind)]
    return _scalar(v, what, kind)


def _numbers(v, what):
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return [_scalar(x, what, float) for x in v]
    return [_scalar(v, what, float)]


def _dtype_name(dtype):
    """"uint8" / "float32" / "float16" ... from a string, a NumPy dtype or a torch dtype."""
    if isinstance(dtype, str):
        return dtype
    if isinstance(dtype, (list, tuple, dict, set)):
        raise InvalidTypeError("dtype must be a name (uint8, uint16, float16, bfloat16, float32) or a NumPy or torch "
                               "dtype, got %s" % show(dtype))
    name = str(dtype)
    if name.startswith("torch."):
        return name[len("torch."):]
    try:
        import numpy as np
        return np.dtype(dtype).name
    except TypeError:
        return name


def _theta(theta, batch):
    """One 2x3 matrix from a (2, 3) or (N, 2, 3) list/array/tensor; a batch of thetas must
    hold one matrix N times (toroid's affine takes one theta per pipeline)."""
    import numpy as np
    if _core.is_torch(theta):
        theta = theta.detach().cpu().double().numpy()
    try:
        arr = np.asarray(theta, dtype=np.float64)
    except (TypeError, ValueError):
        raise Error("theta must be a 2x3 matrix or an (N, 2, 3) batch of them, got %s" % (show(theta),))
    if arr.ndim == 3 and arr.shape[1:] == (2, 3) and arr.shape[0] > 0:
        if batch is not None and arr.shape[0] not in (1, batch):
            raise Error("theta has batch %d but the input has batch %d" % (arr.shape[0], batch))
        if not (arr == arr[0]).all():
            raise Error("toroid's affine takes one theta for the whole batch; got %d different matrices"
                        % arr.shape[0])
        arr = arr[0]
    if arr.shape != (2, 3):
        raise Error("theta must be a 2x3 matrix or an (N, 2, 3) batch of them, got shape %s" % (arr.shape,))
    return arr.tolist()


def _batch_of(x):
    shape = getattr(x, "shape", None)
    if shape is None:
        return None  # not an array: the op says so
    return shape[0] if len(shape) == 4 else 1


# ---- tracing --------------------------------------------------------------------------------

class Traced:
    """What toroid.compile passes to the traced function in place of the input: every
    toroid op called on it records itself. `ndim` is the input's; `shape` and `dtype` are
    worked out through the ops recorded so far."""

    __slots__ = ("_ops", "_arg")

    def __init__(self, arg, ops):
        self._arg = arg
        self._ops = ops

    @property
    def ndim(self):
        return len(self._arg.shape)

    def _out_desc(self):
        import ctypes
        from . import _capi
        d = _capi.TensorDesc()
        # Alive through the call: it owns the pipeline. Grid paths in traced ops were checked
        # by the Pipeline they came from (and made absolute there), so any path is taken.
        handle = _core.PipelineHandle(self._ops, None, allow_paths=True)
        desc = self._arg.desc()
        _capi.check(_capi.lib.toroid_output_desc(handle._handle, ctypes.byref(desc), ctypes.byref(d)))
        return d

    @property
    def shape(self):
        if not self._ops:
            return tuple(self._arg.shape)
        return self._out_desc().dims()[0]

    @property
    def dtype(self):
        d = self._arg.dtype if not self._ops else self._out_desc().dtype
        return _core._DTYPE_NAMES[d]

    def _record(self, op):
        return Traced(self._arg, self._ops + [op])

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise Error("toroid.compile traces toroid ops only (toroid.interpolate, toroid.flip, ...); "
                    "'%s' is not available on the traced input" % name)

    def __repr__(self):
        return "<toroid traced tensor, %d ops>" % len(self._ops)


def _apply(x, op):
    if isinstance(x, Traced):
        return x._record(op)
    return _core.run_ops([op], x)


# The op functions below build their op dict; _op_function runs it. Called again with the
# same plain arguments (JSON values: numbers, strings, bools, None, lists of them; keyed as
# the op cache keys them, so True and 1, 0.0 and -0.0 differ) on an input of the same rank,
# an op function runs the handle its first call made: no argument checks, no op dict, no
# cache key (the fast path a Pipeline call has). The first call goes the whole way, so a bad
# argument is an error every time.
_MAX_HANDLES = 256


def _op_function(name):
    freeze = _core._freeze

    def wrap(build):  # build(x, *args, **kwargs) -> the op dict
        handles = {}

        def arguments_key(x, args, kwargs):
            tx = type(x)
            if tx is not _core._ndarray and (_core._torch is None or tx is not _core._torch.Tensor):
                return None
            key = [len(x.shape)]
            for a in args:
                k = freeze(a)
                if k is None and a is not None:
                    return None
                key.append(k)
            for n, a in kwargs.items():
                k = freeze(a)
                if k is None and a is not None:
                    return None
                key.append((n, k))
            return tuple(key)

        @functools.wraps(build)
        def call(x, *args, **kwargs):
            try:
                key = arguments_key(x, args, kwargs)
                handle = handles.get(key) if key is not None else None
                if handle is None:
                    op = build(x, *args, **kwargs)
                    if isinstance(x, Traced):
                        return x._record(op)
                    handle = _core.cached_pipeline([op])
                    if key is not None:
                        if len(handles) >= _MAX_HANDLES:
                            handles.clear()
                        handles[key] = handle
                return handle(x)
            except Exception as e:  # noqa: BLE001 - every failure a toroid.Error (see _capi.public)
                err = _capi.as_error(e, name)
            raise err

        return call

    return wrap


# ---- the ops ------------------------------------------------------------------------------

@_op_function("interpolate")
def interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=None, antialias=False,
                recompute_scale_factor=None):
    """torch.nn.functional.interpolate on (N, C, H, W), (C, H, W) or (H, W); modes nearest,
    nearest-exact, bilinear, bicubic."""
    op = {"op": "resize", "mode": mode}
    if size is not None:
        op["size"] = _pair(size, "size", int)
    if scale_factor is not None:
        op["scale_factor"] = _pair(scale_factor, "scale_factor", float)
    if align_corners is not None:
        op["align_corners"] = _flag(align_corners, "align_corners")
    if _flag(antialias, "antialias"):
        op["antialias"] = True
    if _flag(recompute_scale_factor, "recompute_scale_factor"):
        op["recompute_scale_factor"] = True
    return op


@_op_function("resize")
def resize(x, size=None, interpolation="bilinear", max_size=None, antialias=True):
    """torchvision.transforms.v2.functional.resize: `size` an int (the smaller edge; the other
    in proportion, with `max_size` capping the longer one), [h, w], or None with max_size
    (the longer edge). interpolation: nearest, nearest-exact, bilinear, bicubic (or
    torchvision's InterpolationMode). The output size follows each image's size without
    compiling again."""
    mode = _interpolation_name(interpolation)
    op = {"op": "resize", "mode": mode}
    if isinstance(size, (list, tuple)) and len(size) == 1:
        size = size[0]
    if size is None:
        if max_size is None:
            raise Error("resize needs size or max_size")
        op["max_size"] = _scalar(max_size, "max_size", int)
    elif isinstance(size, (list, tuple)) or hasattr(size, "tolist"):
        if max_size is not None:
            raise Error("max_size is only allowed with an int size (the smaller edge), got size %s" % (show(size),))
        op["size"] = _pair(size, "size", int)
    else:
        op["smaller_edge"] = _scalar(size, "size", int)
        if max_size is not None:
            op["max_size"] = _scalar(max_size, "max_size", int)
    if mode in ("bilinear", "bicubic") and _flag(antialias, "antialias"):
        op["antialias"] = True
    return op


@_op_function("center_crop")
def center_crop(x, size):
    """torchvision.transforms.v2.functional.center_crop: an int or [h, w]; zeros where the
    image is smaller than the crop."""
    if isinstance(size, (list, tuple)) and len(size) == 1:
        size = size[0]
    return {"op": "center_crop", "size": _pair(size, "size", int)}


def _interpolation_name(mode):
    name = getattr(mode, "value", mode)
    if not isinstance(name, str):
        raise Error("interpolation must be a name or an InterpolationMode, got %s" % (show(mode),))
    name = name.lower().replace("_", "-")
    if name not in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        raise Error("interpolation %s is not supported (nearest, nearest-exact, bilinear, bicubic)" % (show(mode),))
    return name


def affine(x, theta, size=None, mode="bilinear", padding_mode="zeros", align_corners=False, fill=None):
    """F.affine_grid(theta, (N, C, h, w), align_corners) then F.grid_sample; `size` is (h, w)
    or affine_grid's (N, C, h, w) (default: the input's). `fill` (one number, or one per
    channel; nearest or bilinear with zeros padding) is torchvision's fill: nearest puts it
    where the picked pixel is outside the image, bilinear blends it with the warped all-ones
    mask m as (v - fill) * m + fill."""
    try:
        op = {"op": "affine", "theta": _theta(theta, _batch_of(x) if not isinstance(x, Traced) else None),
              "mode": mode, "padding_mode": padding_mode, "align_corners": _flag(align_corners, "align_corners")}
        if fill is not None:
            op["fill"] = _numbers(fill, "fill")
        if size is not None:
            if hasattr(size, "tolist"):
                size = size.tolist()
            size = list(size)
            if len(size) == 4:
                size = size[2:]
            op["size"] = _pair(size, "size", int)
        return _apply(x, op)
    except Exception as e:  # noqa: BLE001 - every failure a toroid.Error (see _capi.public)
        err = _capi.as_error(e, "affine")
    raise err


def grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False):
    """F.grid_sample with `grid` an array/tensor of shape (N, H', W', 2) (or (H', W', 2) for
    one image), float32."""
    try:
        op = {"op": "grid_sample", "grid": grid, "mode": mode, "padding_mode": padding_mode,
              "align_corners": _flag(align_corners, "align_corners")}
        return _apply(x, op)
    except Exception as e:  # noqa: BLE001 - every failure a toroid.Error (see _capi.public)
        err = _capi.as_error(e, "grid_sample")
    raise err


@_op_function("flip")
def flip(x, dims):
    """Tensor.flip(dims); dims count in the input's own rank (-1 is W)."""
    ndim = x.ndim if isinstance(x, Traced) else len(getattr(x, "shape", ()))
    if isinstance(dims, int) or hasattr(dims, "__index__"):
        dims = [dims]
    elif not isinstance(dims, (list, tuple)):
        raise InvalidTypeError("flip dims must be an int or a sequence of ints, got %s" % show(dims))
    out = []
    for d in dims:
        d = _scalar(d, "flip dim", int)
        if not -ndim <= d < ndim:
            raise Error("flip dim %d is out of range for a tensor of %d dims" % (d, ndim))
        out.append(d + 4 if d < 0 else d + 4 - ndim)
    return {"op": "flip", "dims": out}


@_op_function("crop")
def crop(x, top, left, height, width):
    """torchvision.transforms.v2.functional.crop: zeros where the region leaves the image."""
    return {"op": "crop", "top": _scalar(top, "top", int), "left": _scalar(left, "left", int),
            "height": _scalar(height, "height", int), "width": _scalar(width, "width", int)}


@_op_function("convert")
def convert(x, dtype, scale=False):
    """torchvision.transforms.v2.functional.to_dtype(x, dtype, scale); dtype uint8, uint16,
    float16, bfloat16 or float32 (a string, NumPy or torch dtype)."""
    return {"op": "convert", "dtype": _dtype_name(dtype), "scale": _flag(scale, "scale")}


@_op_function("normalize")
def normalize(x, mean, std):
    """torchvision normalize on float32, float16 or bfloat16: (x - mean[c]) / std[c], in the
    image's dtype."""
    return {"op": "normalize", "mean": _numbers(mean, "mean"), "std": _numbers(std, "std")}


# ---- Pipeline and compile --------------------------------------------------------------------

class Pipeline:
    """A pipeline from toroid's JSON schema: a list of op dicts (or the JSON text), as
    `toroid apply` reads. Flip dims count in (N, C, H, W); a grid_sample op's "grid" is a
    file path (relative to base_dir, and inside it unless allow_paths=True) or an array.
    Calling it runs on a NumPy array or torch tensor and returns the same kind; compiled
    once per input spec."""

    @public("Pipeline")
    def __init__(self, ops, *, engine=None, threads=None, base_dir=None, allow_paths=False):
        if not isinstance(ops, str):
            _core.PipelineHandle._parse_check(ops)
            ops = list(ops)
        self.ops = ops
        self.engine = _core.check_engine(engine) if engine is not None else None
        self.threads = _core.check_threads(threads) if threads is not None else None
        self.base_dir = base_dir
        self._handle = _core.PipelineHandle(ops, base_dir, allow_paths=allow_paths)
        self._fast = self._handle.fast  # one dict for the life of the handle (cleared, never replaced)

    def __call__(self, x):
        if type(x) is _core._ndarray:  # the common case first: the handle's fast path, inline
            run = self._fast.get((x.dtype, x.shape, x.strides, self.engine, self.threads, _generation[0]))
            if run is not None:
                return run(x)
        try:
            if type(x) is _core._ndarray:
                return self._handle.call_general(x, self.engine, self.threads)
            if isinstance(x, (list, tuple)):  # a batch of images of any sizes
                return self._handle.run_batch(x, self.engine, self.threads)
            if isinstance(x, Traced):  # inside toroid.compile: record the ops
                ops = json.loads(self.ops) if isinstance(self.ops, str) else self.ops
                for op in ops:
                    g = op.get("grid") if isinstance(op, dict) else None
                    if isinstance(g, (str, os.PathLike)) and self.base_dir:
                        op = dict(op, grid=os.path.join(os.fspath(self.base_dir), os.fspath(g)))
                    x = x._record(op)
                return x
            return self._handle(x, self.engine, self.threads)
        except Exception as e:  # noqa: BLE001 - every failure a toroid.Error (see _capi.public)
            err = _capi.as_error(e, "Pipeline")
        raise err

    @public("run_batch")
    def run_batch(self, xs, errors="raise", device=None, decode=None):
        """A list of images of any sizes in one call: stacked results when they all have one
        shape, else a list; errors="skip" returns (results, {index: message}).
        Files' bytes (JPEG, PNG, WebP) among the images are decoded as RGB with their EXIF
        orientation first: with a CUDA `device`, the JPEGs as one batch on the GPU
        (toroid.io.decode_jpeg's `decode`: "fast", nvJPEG, the default; "exact",
        libjpeg-turbo's pixels uploaded) and the other files on the CPU, copied up; without
        one, on the CPU (NumPy arrays). A file that fails to decode is a failed image."""
        xs = list(xs) if not isinstance(xs, (str, bytes, dict)) and hasattr(xs, "__iter__") else xs
        if device is None and decode is None and not any(
                isinstance(x, (bytes, bytearray, memoryview)) for x in (xs if isinstance(xs, list) else ())):
            return self._handle.run_batch(xs, self.engine, self.threads, errors)
        if not isinstance(xs, list):
            raise _capi.InvalidTypeError("run_batch takes a list of images or files, got %s" % type(xs).__name__)
        if errors not in ("raise", "skip"):
            raise Error("errors must be 'raise' or 'skip', got %s" % _capi.show(errors))
        from . import io  # noqa: PLC0415
        items, bad = io._decode_files(xs, device, decode)
        if bad and errors != "skip":
            first = min(bad)
            raise Error("image %d: %s" % (first, bad[first]))
        ran = [i for i in range(len(items)) if i not in bad]
        good = [items[i] for i in ran]
        if not bad:
            return self._handle.run_batch(good, self.engine, self.threads, errors)
        out = self._handle.run_batch(good, self.engine, self.threads, "skip") if good else ([], {})
        return _core.merge_failed(out, ran, bad, len(items), good)

    def to_json(self):
        """The canonical JSON (grids given as arrays print as "<array>")."""
        return self._handle.to_json()

    @public("explain")
    def explain(self, x):
        """What runs for inputs like `x`: kernels, loop nests, bytes."""
        return self._handle.function(_core.adapt(x), self.engine, self.threads).explain()

    def __len__(self):
        return self._handle.num_ops()

    def __repr__(self):
        return "toroid.Pipeline(%s)" % self.to_json()


class CompiledFunction:
    """A function of toroid ops traced into one pipeline per input spec (see compile)."""

    def __init__(self, fn, engine=None, threads=None):
        self.fn = fn
        self.engine = engine
        self.threads = threads
        self._pipelines = {}
        self._lock = threading.Lock()
        # Calls without extra arguments on arrays of a spec traced before: fast_key -> Pipeline
        # (read without the lock, like the pipelines' own fast path).
        self._fast = {}
        functools.update_wrapper(self, fn)

    def pipeline(self, x, *args, **kwargs):
        """The toroid.Pipeline traced for inputs like `x` (and these extra arguments)."""
        fast = _core.fast_key(x, None, None) if not args and not kwargs else None
        if fast is not None:
            p = self._fast.get(fast)
            if p is not None:
                return p
        return self._trace(fast, x, args, kwargs)

    @public("compile")
    def _trace(self, fast, x, args, kwargs):
        arg = _core.adapt(x)
        try:
            key = (arg.key(), args, tuple(sorted(kwargs.items())))
            hash(key)
        except TypeError:
            raise Error("toroid.compile: extra arguments must be hashable (they are baked into the pipeline)")
        with self._lock:
            p = self._pipelines.get(key)
        if p is None:
            try:
                result = self.fn(Traced(arg, []), *args, **kwargs)
            except Exception as e:  # noqa: BLE001 - the function's own errors reach the caller unchanged
                raise Passthrough(e)
            if not isinstance(result, Traced) or result._arg is not arg:
                raise Error("toroid.compile: the function must return the result of toroid ops applied to "
                            "its input, got %s" % type(result).__name__)
            # Traced grid paths were checked by the Pipeline that recorded them.
            p = Pipeline(result._ops, engine=self.engine, threads=self.threads, allow_paths=True)
            with self._lock:
                self._pipelines[key] = p
        if fast is not None and arg.obj is x:  # x was described without a copy
            if len(self._fast) >= _core._MAX_FAST:
                self._fast.clear()
            self._fast[fast] = p
        return p

    def __call__(self, x, *args, **kwargs):
        if isinstance(x, Traced):  # called from another traced function: inline it
            return self.fn(x, *args, **kwargs)
        return self.pipeline(x, *args, **kwargs)(x)

    def explain(self, x, *args, **kwargs):
        """What runs for inputs like `x`: one pipeline, its kernels and loop nests."""
        return self.pipeline(x, *args, **kwargs).explain(x)


def compile(fn=None, *, engine=None, threads=None):
    """Traces `fn` (a function of one tensor made of toroid ops) into one compiled pipeline,
    traced and compiled once per input spec (kind, dtype, shape, strides):

        @toroid.compile
        def preprocess(x):
            x = toroid.interpolate(x, size=224, mode="bilinear", antialias=True)
            x = toroid.convert(x, "float32", scale=True)
            return toroid.normalize(x, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    """
    if engine is not None:
        _core.check_engine(engine)
    if threads is not None:
        _core.check_threads(threads)
    if fn is None:
        return lambda f: compile(f, engine=engine, threads=threads)
    if not callable(fn):
        raise InvalidTypeError("toroid.compile takes a function, got %s" % type(fn).__name__)
    return CompiledFunction(fn, engine, threads)

