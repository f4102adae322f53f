"""The core of toroid.transforms: the per-call state, Compose, the geometric transforms toroid
has had from the start, and their functional forms.

toroid.transforms: image-tensor transforms with torchvision.transforms.v2's names, arguments
and results. A Compose turns its transforms into one list of toroid ops per call and runs it as
one compiled pipeline; random transforms draw their parameters with torch's default generator
exactly as torchvision does and put them into the ops as run-time values (a bind, not a compile).
"""

import ctypes
import json
import math
import numbers
import os
import threading

from .. import _api, _capi, _core
from . import _sample
from .._capi import Error, InvalidTypeError, Passthrough, as_error, public, show

TRANSFORMS = ["Compose", "Transform", "Resize", "CenterCrop", "RandomCrop", "HorizontalFlip", "RandomHorizontalFlip",
              "VerticalFlip", "RandomVerticalFlip", "RandomAffine", "ToDtype", "Normalize", "InterpolationMode"]
FUNCTIONAL = ["resize", "center_crop", "crop", "horizontal_flip", "hflip", "vertical_flip", "vflip", "affine",
              "to_dtype", "normalize"]
__all__ = TRANSFORMS + FUNCTIONAL


def _torch():
    import torch  # random parameters come from torch's default generator, as in torchvision
    return torch


class InterpolationMode:
    """torchvision's InterpolationMode values (torchvision's own enum is accepted too)."""
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"


# ---- the state of one call: ops gathered so far and the image's size after them -------------

def is_pil_image(x):
    """Whether x is a PIL image (without importing PIL)."""
    return type(x).__module__.startswith("PIL.") and hasattr(x, "getbands") and hasattr(x, "size")


class _Encoded:
    """An image file's bytes (JPEG, PNG, WebP) given to a transform: decoded as RGB (the EXIF
    orientation applied) when the call's ops run, and a JPEG only where they read it: a call
    that starts with a crop inside the image (RandomResizedCrop, RandomCrop, CenterCrop), or
    with a resize then such a crop (Resize -> CenterCrop), decodes only the window of the file
    those pixels come from (with the whole decode's pixels), into an image of the whole size
    whose other pixels the ops never read."""

    def __init__(self, data):
        from .. import io  # noqa: PLC0415
        self.data = bytes(data)
        self.chw = io.image_info(self.data, mode="rgb")
        self.device = None  # where per_sample's batch decode makes it (of_size), else None

    @classmethod
    def of_size(cls, data, chw, device):
        """A JPEG of known (C, H, W) that per_sample decodes on `device` in one batch."""
        e = cls.__new__(cls)
        e.data, e.chw, e.device = data, tuple(chw), device
        return e

    def decode(self, ops, decoding=None):
        """The image the ops run on: None for a file per_sample's batch decode makes (it
        stands in until the batch is decoded); with a CUDA `decoding`, a file it does not
        decode (PNG, WebP) is decoded here and copied there."""
        from .. import io  # noqa: PLC0415
        if self.device is not None:
            return None
        x = self._decode_here(ops, io)
        return x if decoding is None else io._to_batch(x, decoding.device, decoding.decode)

    def _decode_here(self, ops, io):
        if io._is_jpeg(self.data) and _capi.has_decode_into:
            x = io._decode_into(self.data, "rgb", True, _read_window(ops, self.chw[1], self.chw[2]), self.chw)
        else:
            x = io.decode_image(self.data, mode="rgb")
        try:
            x = _torch().from_numpy(x)
        except ImportError:
            pass
        return x


def _read_window(ops, h, w):
    """(top, left, height, width) of an h x w uint8 RGB image that the ops' result depends on
    (toroid_read_window: a first crop's region, or the taps a resize reads for the crop after
    it); None where that is the whole image."""
    if not ops or ops[0]["op"] not in ("crop", "center_crop", "resize"):
        return None
    handle = _core.cached_pipeline(ops)
    desc = _core.make_desc(_capi.UINT8, (1, 3, h, w), (3 * h * w, 1, 3 * w, 3))
    window = (ctypes.c_int64 * 4)()
    _capi.check(_capi.lib.toroid_read_window(handle._handle, ctypes.byref(desc), window))
    window = tuple(int(v) for v in window)
    return None if window == (0, 0, h, w) else window


_PIL_MODES = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}


def _run_pil(ops, pic):
    """The ops on a PIL image, with toroid's (torchvision's tensor) results: its pixels as a
    uint8 tensor (channels-last view), the pipeline, and back to a PIL image of the same mode
    (or of L, LA, RGB or RGBA by the result's channels) while the result is uint8; a result of
    another dtype (after ToDtype) is returned as the tensor."""
    import numpy as np
    channels = _PIL_MODES.get(pic.mode)
    if channels is None:
        raise InvalidTypeError("toroid's transforms take PIL images of modes L, LA, RGB and RGBA, got mode %s: "
                               "convert it first (image.convert(\"RGB\"))" % pic.mode)
    a = np.array(pic, copy=True).reshape(pic.size[1], pic.size[0], channels)
    try:
        torch = _torch()
        x = torch.from_numpy(a).permute(2, 0, 1)
    except ImportError:
        x = a.transpose(2, 0, 1)
    y = _core.cached_pipeline(ops)(x)
    modes = {v: k for k, v in _PIL_MODES.items()}
    c = y.shape[-3] if len(y.shape) == 3 else None
    if str(y.dtype).endswith("uint8") and c in modes:
        from PIL import Image
        hwc = y.permute(1, 2, 0) if hasattr(y, "permute") else y.transpose(1, 2, 0)
        hwc = np.ascontiguousarray(hwc.numpy() if hasattr(hwc, "numpy") else hwc)
        mode = pic.mode if c == channels else modes[c]
        return Image.fromarray(hwc[:, :, 0] if c == 1 else hwc, mode)
    return y


class _State:
    """One run through a Compose: the ops gathered since the last host step, the current
    result (input or an earlier segment's output) and the size and dtype after those ops.
    A PIL image is taken as it is, for a conversion (ToImage) to turn into a tensor first."""

    def __init__(self, x):
        self._describe(x)
        self.ops = []
        # Random on/off choices in self.ops: (transform, index in ops, its ops, applied).
        self.branches = []
        # per_sample's deferred mode: the op lists of the segments ended so far (cut), run
        # later with the other images' (None: segments run when cut).
        self.segments = None
        # A call on a sample: its other items, told of each op (_sample.Sample), else None.
        self.sample = None

    @classmethod
    def for_sample(cls, sample, check=True):
        """The state of a call on a sample: its image's, or (a sample without one: boxes or
        masks alone) one of the sample's size with no pixels to run. `check`: its items must
        agree on one size (torchvision's query_size), as at the start of a call; a callable's
        result within the call is taken as it is (torchvision's rotation with expand leaves
        boxes on a canvas a pixel off the image's)."""
        h, w = sample.size(check)
        if sample.image is not None:
            state = cls(sample.image_input())
        else:
            state = cls.__new__(cls)
            state.x, state.h, state.w, state.c, state.dtype = None, h, w, 1, "uint8"
            state.ops, state.branches, state.segments = [], [], None
        state.sample = sample
        return state

    def image_fill(self, fill):
        """(the image's fill, the fills by item type or None): a transform's fill may be a
        _sample.Fills (torchvision's dict by type), of which the image takes its type's."""
        if isinstance(fill, _sample.Fills):
            return fill.for_type(self.image_type), fill
        return fill, None

    @property
    def image_type(self):
        """The type of the image the call runs on (a fill or dtype dict's key)."""
        if self.sample is not None:
            return self.sample.image_type()
        return type(self.x)

    def _describe(self, x):
        if isinstance(x, (bytes, bytearray, memoryview)):
            x = _Encoded(x)
        self.x = x
        quick = _torch_desc(x)
        if quick is not None:
            self.h, self.w, self.c, self.dtype = quick
        elif isinstance(x, _Encoded):
            self.c, self.h, self.w = x.chw
            self.dtype = "uint8"
        elif is_pil_image(x):
            self.w, self.h = x.size
            self.c, self.dtype = len(x.getbands()), "uint8"
        else:
            arg = _core.adapt(x)
            self.h, self.w = arg.shape[-2], arg.shape[-1]
            self.c = arg.shape[-3] if len(arg.shape) >= 3 else 1
            self.dtype = _core._DTYPE_NAMES[arg.dtype]

    def probe(self):
        """An empty state of the same size and dtype (what a transform would add, unapplied)."""
        p = _State.__new__(_State)
        p.x, p.h, p.w, p.c, p.dtype, p.ops, p.branches = None, self.h, self.w, self.c, self.dtype, [], []
        p.segments = None
        p.sample = None
        return p

    def add(self, op, h=None, w=None, dtype=None, c=None, fills=None, geo=None):
        """Appends op, after which the image is h x w (dtype, c channels) where given. On a
        sample the other items follow it: `fills` (a _sample.Fills) gives a mask its fill
        where the transform's fill is a dict by type, `geo` the parameters of an affine warp
        that boxes and points move by (torchvision's forward form)."""
        if self.sample is not None:
            before = (self.h, self.w)
            self.sample.follow(op, before, (h, w) if h is not None else before, fills, geo)
        self.ops.append(op)
        if h is not None:
            self.h, self.w = h, w
        if dtype is not None:
            self.dtype = dtype
        if c is not None:
            self.c = c

    def flush(self):
        """Runs the gathered ops (one compiled program per op structure) on the current result."""
        if self.ops and self.x is None:  # a sample without an image: its items moved already
            self.ops, self.branches = [], []
        if isinstance(self.x, _Encoded):
            self.x = self.x.decode(self.ops)
        if self.ops:
            if is_pil_image(self.x):
                self.x = _run_pil(self.ops, self.x)
                self.ops, self.branches = [], []
                return self.x
            if self.branches:
                _prepare_variants(self.ops, self.branches, self.x)
            self.x = _core.run_ops(self.ops, self.x)
            self.ops = []
            self.branches = []
        return self.x

    def cut(self):
        """Ends the segment: the ops gathered so far run as one program, what follows starts
        another. Transforms that choose among many op structures per call (the automatic
        augmentation policies) cut around each drawn op, so their programs number the ops they
        choose from, not the combinations a call can draw. Nothing runs in a probe state; in
        per_sample's deferred mode the segment is kept, to run with the other images' segments
        of the same round."""
        if self.segments is not None:
            if self.ops:
                if is_pil_image(self.x):
                    raise InvalidTypeError("per_sample takes tensors and NumPy arrays, not PIL images: convert "
                                           "them first (ToImage)")
                self.segments.append(self.ops)
                self.ops, self.branches = [], []
        elif self.x is not None:
            self.flush()

    def call_host(self, fn, whole=False):
        """Runs a transform that is not toroid's on the result so far (its errors reach the
        caller unchanged). In deferred mode the image's segments so far run first, and the
        rest of its call runs as it is cut. On a sample, `whole` gives fn the whole sample
        (everything runs up to it, and the call goes on with its result); otherwise fn is a
        function of an image, run on each of the sample's images."""
        if self.sample is not None and whole:
            self._call_whole(fn)
            return
        self.x = _call_users(fn, self._run_up_to_here())
        if self.sample is not None:
            for it in self.sample.images:
                it.value = _call_users(fn, _sample.run_pending(it))
        arg = _core.adapt(self.x)
        self.h, self.w = arg.shape[-2], arg.shape[-1]
        self.c = arg.shape[-3] if len(arg.shape) >= 3 else 1
        self.dtype = _core._DTYPE_NAMES[arg.dtype]

    def _run_up_to_here(self):
        """The image with every op so far run: per_sample's deferred segments, then the ops
        gathered since (the rest of the call runs as it is cut)."""
        if self.segments is not None:
            for ops in self.segments:
                self.x = _core.run_ops(ops, self.x)
            self.segments = None
        return self.flush()

    def _call_whole(self, fn):
        """fn on the whole sample so far; the call goes on with what it returns (a sample,
        or an image alone)."""
        out = self.sample.result(self._run_up_to_here())
        multiple = self.sample.multiple
        new = _call_users(fn, *out) if multiple else _call_users(fn, out)
        if _sample.is_sample(new):
            sample = _sample.Sample(new, multiple and isinstance(new, tuple))
            fresh = _State.for_sample(sample, check=False)
        else:
            fresh = _State(new)
        self.x, self.h, self.w, self.c, self.dtype = fresh.x, fresh.h, fresh.w, fresh.c, fresh.dtype
        self.ops, self.branches, self.sample = [], [], fresh.sample


def _call_users(fn, *args):
    """fn(*args), its errors passed through to the caller unchanged (a callable of theirs)."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - the caller's own code
        raise Passthrough(e)


_TORCH_DTYPES = None


def _torch_desc(x):
    """(h, w, c, dtype name) of a 3-D or 4-D uint8 or float32 torch tensor, read from its
    attributes (a call's state needs no more; the run checks the tensor in full); None for
    anything else, which _core.adapt describes and checks."""
    global _TORCH_DTYPES
    if type(x).__module__ != "torch" or type(x).__name__ != "Tensor":
        return None
    if _TORCH_DTYPES is None:
        torch = _torch()
        _TORCH_DTYPES = {torch.uint8: "uint8", torch.float32: "float32"}
    name = _TORCH_DTYPES.get(x.dtype)
    shape = x.shape
    if name is None or len(shape) not in (3, 4):
        return None
    return shape[-2], shape[-1], shape[-3], name


# ---- the other outcomes of random choices, compiled beside the first ----------------------

_variants_seen = set()
_variants_lock = threading.Lock()
_variant_threads = []
_MAX_BRANCHES = 3  # up to 7 other structures per segment


def _input_class(x):
    """What the compiled program depends on besides the ops: dtype, rank, whether channels
    are innermost, device. Read from the array's attributes (every call with random choices
    asks)."""
    if _core.is_numpy(x):
        return ("numpy", x.dtype, x.ndim, x.ndim >= 3 and x.strides[-3] == x.itemsize)
    if type(x).__module__.startswith("torch"):
        return ("torch", x.dtype, x.dim(), x.dim() >= 3 and x.stride(-3) == 1, str(x.device))
    arg = _core.adapt(x)
    return (arg.dtype, len(arg.shape), len(arg.strides) >= 3 and arg.strides[-3] == 1, arg.device)


def _toggled(ops, branches, mask):
    """ops with the branches whose bit is set in mask turned the other way."""
    inserts, skips = {}, set()
    for bit, (_, at, branch_ops, applied) in enumerate(branches):
        if not mask >> bit & 1:
            continue
        if applied:
            skips.update(range(at, at + len(branch_ops)))
        else:
            inserts.setdefault(at, []).extend(branch_ops)
    out = []
    for i in range(len(ops) + 1):
        out.extend(inserts.get(i, []))
        if i < len(ops) and i not in skips:
            out.append(ops[i])
    return out


def _prepare(ops, x):
    try:
        _core.cached_pipeline(ops).function(_core.adapt(x))
    except Exception:  # the call that needs this structure reports its own error
        pass


def _prepare_variants(ops, branches, x):
    """The first time a segment with random on/off choices runs on inputs of one class, the
    programs of its other outcomes (a flip or none) compile in the background, beside this
    call's own, instead of one by one on the calls that first draw them."""
    branches = branches[:_MAX_BRANCHES]
    key = (tuple(id(b[0]) for b in branches), _input_class(x))
    with _variants_lock:
        if key in _variants_seen:
            return
        if len(_variants_seen) > 4096:
            _variants_seen.clear()
        _variants_seen.add(key)
        _variant_threads[:] = [t for t in _variant_threads if t.is_alive()]
        for mask in range(1, 1 << len(branches)):
            t = threading.Thread(target=_prepare, args=(_toggled(ops, branches, mask), x), daemon=True)
            t.start()
            _variant_threads.append(t)


def _wait_for_variants():
    """Waits until the programs compiling in the background are ready."""
    with _variants_lock:
        threads = list(_variant_threads)
    for t in threads:
        t.join()


# A fork (DataLoader workers) waits for them: a child would inherit a compile in flight
# whose thread it does not have, and wait on it forever.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_wait_for_variants)


_resize_sizes = {}
_resize_lock = threading.Lock()


def _resized_size(op, h, w, dtype):
    """(h, w) after a resize op on an h x w image, as toroid (and torchvision) work it out."""
    key = (tuple(sorted((k, str(v)) for k, v in op.items())), h, w, dtype)
    with _resize_lock:
        hit = _resize_sizes.get(key)
    if hit is not None:
        return hit
    handle = _core.cached_pipeline([op])
    code = _capi.UINT8 if dtype == "uint8" else _capi.FLOAT32
    desc = _core.make_desc(code, (1, 1, h, w), (h * w, h * w, w, 1))
    out = _capi.TensorDesc()
    _capi.check(_capi.lib.toroid_output_desc(handle._handle, ctypes.byref(desc), ctypes.byref(out)))
    shape = out.dims()[0]
    hit = (shape[-2], shape[-1])
    with _resize_lock:
        if len(_resize_sizes) > 4096:
            _resize_sizes.clear()
        _resize_sizes[key] = hit
    return hit


def _int(v, what):
    """int(v) as torchvision takes it (a float is truncated), or a toroid.Error."""
    if type(v) is int:
        return v
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        if not (hasattr(v, "__index__") or (hasattr(v, "item") and getattr(v, "ndim", None) == 0)):
            raise InvalidTypeError("%s must be an int, got %s" % (what, show(v)))
    try:
        return int(v)
    except (TypeError, ValueError, OverflowError):
        raise Error("%s must be an int, got %s" % (what, show(v))) from None


def _size_pair(size, what="size"):
    """torchvision's _setup_size: an int n -> (n, n), a sequence of one or two."""
    if isinstance(size, numbers.Number) and not isinstance(size, bool):
        return _int(size, what), _int(size, what)
    if isinstance(size, (list, tuple)) and len(size) == 1:
        return _int(size[0], what), _int(size[0], what)
    if isinstance(size, (list, tuple)) and len(size) == 2:
        return _int(size[0], what), _int(size[1], what)
    raise Error("%s must be an int or a sequence of one or two ints, got %s" % (what, show(size)))


# ---- transforms -----------------------------------------------------------------------------

class Transform:
    """A toroid transform: `_emit(state)` appends its ops (drawing random parameters first).
    Called on its own it runs as a one-transform Compose."""

    def _emit(self, state):  # pragma: no cover - every transform overrides it
        raise NotImplementedError

    def __call__(self, *inputs):
        return _run(self, *inputs)

    def per_sample(self, images, errors="raise", device=None, decode=None):
        """Runs this transform on each image of `images` (a list of any sizes, or a stacked
        batch's images) with its own random draws, drawn in the order
        [self(x) for x in images] draws them, as batched calls: images whose draws share a
        structure share compiled kernels (on CUDA, one launch per kernel for them all). A
        transform that runs its draws as programs of their own (the augmentation policies)
        makes rounds: each round runs every image's next program in one call. Returns the
        results stacked when they share a dtype and shape, else a list (run_batch's rule);
        errors as toroid.Pipeline.run_batch (an image that fails in a round still drew all of
        its parameters, where the loop would have stopped drawing at its failure). Any
        callable that is not a toroid transform runs image by image where it stands.
        Samples (dicts, tuples: an image with its boxes, masks, labels) may stand for images:
        their images run batched, their other items follow each one's draws, and the results
        come back as a list of samples.
        Files' bytes (JPEG, PNG, WebP) are decoded as RGB with their EXIF orientation. With
        a CUDA `device`, the JPEGs among them decode on the GPU (toroid.io.decode_jpeg's
        `decode`: "fast", nvJPEG, the default; "exact", libjpeg-turbo's pixels) while their
        draws are made from their headers, and everything runs there; a file that fails to
        decode is reported as a failed image (never drawn for)."""
        try:
            return self._per_sample_started(_begin(images, device, decode), errors)
        except Exception as e:  # noqa: BLE001 - every failure a toroid.Error, the callables' own aside
            err = as_error(e, type(self).__name__)
        raise err

    def per_sample_batches(self, batches, device=None, decode=None, errors="raise"):
        """per_sample(batch, device=, decode=, errors=) of each batch (a list of images or
        files' bytes) of the iterable `batches`, yielded in order, with the same draws as those
        calls in turn. With a CUDA device, the next batch's files are already decoding on the
        GPU while a batch's draws are made and run: a loader's steady rate is that of the
        slower of the two, not their sum."""
        it = iter(batches)
        try:
            started = None
            for batch in it:
                begun = _begin(batch, device, decode)
                if started is not None:
                    yield self._per_sample_started(started, errors)
                started = begun
            if started is not None:
                yield self._per_sample_started(started, errors)
        except Exception as e:  # noqa: BLE001 - every failure a toroid.Error, the callables' own aside
            err = as_error(e, type(self).__name__)
        else:
            return
        raise err

    def _per_sample_started(self, begun, errors):
        """per_sample on images whose files may be decoding (_begin)."""
        images, decoding, bad = begun
        plans, xs, states, ran = [], [], [], []
        for i, x in enumerate(images):
            if i in bad:
                continue
            if _sample.is_sample(x):
                state = _State.for_sample(_sample.Sample(x, False))
                if state.x is None:
                    raise InvalidTypeError("per_sample needs an image in every sample")
            else:
                state = _State(x)
            state.segments = []
            self._emit(state)
            states.append(state)
            segments = (state.segments or []) + ([state.ops] if state.ops else [])
            if isinstance(state.x, _Encoded):  # file bytes: decoded where the first segment reads
                state.x = state.x.decode(segments[0] if segments else [], decoding)
            if not segments:
                segments = [[{"op": "crop", "top": 0, "left": 0, "height": state.h, "width": state.w}]]
            plans.append(segments)
            xs.append(state.x)
            ran.append(i)
        if decoding is not None:
            xs = decoding.resolve(xs, ran, bad)
            keep = [k for k, i in enumerate(ran) if i not in bad]
            if len(keep) < len(ran):
                plans, xs, states, ran = ([v[k] for k in keep] for v in (plans, xs, states, ran))
        if bad and errors != "skip":
            first = min(bad)
            raise Error("image %d: %s" % (first, bad[first]))
        out = self._run_planned(plans, xs, states, errors)
        if not bad:
            return out
        return _core.merge_failed(out, ran, bad, len(images), xs)

    @staticmethod
    def _run_planned(plans, xs, states, errors):
        """per_sample's run of the images' planned segments (as run_batch returns results)."""
        if not xs:
            return ([], {}) if errors == "skip" else []
        if any(st.sample is not None for st in states):
            outs, failed = _rounds(plans, xs)
            if failed and errors != "skip":
                raise Error(failed[min(failed)])
            results = [None if i in failed else
                       st.sample.result(outs[i]) if st.sample is not None else outs[i]
                       for i, st in enumerate(states)]
            return (results, failed) if errors == "skip" else results
        if all(len(p) == 1 for p in plans):
            handles = [_draw_pipeline(p[0]) for p in plans]
            return handles[0].run_batch(xs, errors=errors, handles=handles)
        return _run_rounds(plans, xs, errors)

    def __repr__(self):
        args = ", ".join("%s=%r" % (k, v) for k, v in vars(self).items() if not k.startswith("_"))
        return "%s(%s)" % (type(self).__name__, args)


def _draw_pipeline(ops):
    """The pipeline of one image's draws in per_sample, found by its JSON text among the
    recent ones (the op-list cache's key costs more than the text): a transform without
    random draws (an eval pipeline) repeats its op list for every image of a size, and its
    handle keeps the programs bound to that size. Drawn values seldom repeat: a handle is
    kept once its text comes a second time, so that one-off draws hold no memory. Op lists
    holding arrays (grids) go through the op-list cache."""
    if any("grid" in op for op in ops):
        return _core.cached_pipeline(ops)
    text = json.dumps(ops, allow_nan=False)
    handle = _drawn.get(text)
    if handle is None:
        handle = _core.PipelineHandle(text)
        if text in _seen:
            if len(_drawn) >= _MAX_DRAWN:
                _drawn.clear()
            _drawn[text] = handle
        else:
            if len(_seen) >= 4 * _MAX_DRAWN:
                _seen.clear()
            _seen[text] = None
    return handle


_drawn = {}  # JSON text -> PipelineHandle of the texts seen twice, for _draw_pipeline
_seen = {}   # the texts seen once
_MAX_DRAWN = 1024


class _Decoding:
    """per_sample's JPEGs decoding on a device while their draws are made (_start_decodes):
    the future of toroid.io's batch decode and which images it decodes."""

    def __init__(self, device, future, which, decode):
        self.device = device
        self.future = future
        self.which = which  # image index -> index in the decode's batch
        self.decode = decode  # decode_jpeg's decode= (the layout of its images)

    def resolve(self, xs, ran, bad):
        """xs with the pending images replaced by their decoded tensors; the images whose
        decode failed added to `bad` (left as they were in xs)."""
        images, failures = self.future.result()
        xs = list(xs)
        for k, i in enumerate(ran):
            j = self.which.get(i)
            if j is None:
                continue
            if j in failures:
                bad[i] = failures[j]
            else:
                xs[k] = images[j]
        return xs


def _begin(images, device, decode):
    """(the images as a list, _Decoding or None, {index: message}) of a per_sample call: its
    files started decoding on `device` (see _start_decodes)."""
    if isinstance(images, (str, bytes, dict)) or not hasattr(images, "__iter__"):
        raise InvalidTypeError("per_sample takes a list of images, got %s" % type(images).__name__)
    images = list(images)
    decoding, bad = None, {}
    if device is not None:
        decoding, bad = _start_decodes(images, device, decode)
    return images, decoding, bad


def _start_decodes(images, device, decode):
    """Starts decoding per_sample's JPEG bytes on `device` (a CUDA device; on the CPU, files
    decode as the draws need them): their headers are read now, and each becomes an _Encoded
    of known size that the draws can be made from. Returns (_Decoding or None, {index:
    message} of the files whose header is bad)."""
    from .. import io  # noqa: PLC0415
    dev = io._files_device(device, decode)
    if dev is None or dev.type == "cpu":
        return None, {}
    which = [i for i, x in enumerate(images) if isinstance(x, (bytes, bytearray, memoryview)) and io._is_jpeg(x)]
    datas = [bytes(images[i]) for i in which]
    infos, failures = io._infos(datas, "rgb", True)
    future = io._decode_started(datas, (infos, failures), "rgb", dev, True, decode)
    bad = {}
    for k, i in enumerate(which):
        if infos[k] is None:
            bad[i] = failures[k]
        else:
            images[i] = _Encoded.of_size(datas[k], infos[k], dev)
    return _Decoding(dev, future, {i: k for k, i in enumerate(which)}, decode), bad


def _run_rounds(plans, xs, errors):
    """Each image's programs in turn: round k runs the k-th program of every image that has
    one in one batched call. The results as run_batch returns them."""
    xs, failed = _rounds(plans, xs)
    if failed and errors != "skip":
        first = min(failed)
        raise Error(failed[first])
    good = [xs[i] for i in range(len(xs)) if i not in failed]
    out = _stack_like(good)
    if errors != "skip":
        return out
    if isinstance(out, list) or failed:
        return [None if i in failed else xs[i] for i in range(len(xs))], failed
    return out, failed


def _rounds(plans, xs):
    """Round k runs the k-th program of every image that has one (and has not failed) in one
    batched call. Returns each image's result (a list) and {index: message} of the failed."""
    xs = list(xs)
    failed = {}
    rounds = max(len(p) for p in plans)
    for k in range(rounds):
        which = [i for i, p in enumerate(plans) if k < len(p) and i not in failed]
        if not which:
            continue
        handles = [_draw_pipeline(plans[i][k]) for i in which]
        got = handles[0].run_batch([xs[i] for i in which], errors="skip", handles=handles)
        results, bad = got
        for j, i in enumerate(which):
            if j in bad:
                failed[i] = "image %d: %s" % (i, bad[j].split(": ", 1)[1] if bad[j].startswith("image ") else bad[j])
            else:
                xs[i] = _core.nth(results, j, xs[i])
    return xs, failed


def _stack_like(xs):
    """run_batch's rule: one array when every result has one dtype and shape (3-D stacked
    along a new first dim, 4-D concatenated along N), else the list."""
    if not xs:
        return []
    first = xs[0]
    if any(type(x) is not type(first) or x.dtype != first.dtype or tuple(x.shape) != tuple(first.shape) or
           getattr(x, "device", None) != getattr(first, "device", None) for x in xs):
        return list(xs)
    if _core.is_numpy(first):
        import numpy as np
        return np.concatenate(xs) if first.ndim == 4 else np.stack(xs)
    torch = _torch()
    return torch.cat(xs) if first.dim() == 4 else torch.stack(xs)


class Compose(Transform):
    """torchvision.transforms.v2.Compose. The toroid transforms of one call become one op list
    run as one compiled pipeline (programs are shared by every op list of one structure, so
    new image sizes, crop offsets and affine matrices never compile again). Any other callable
    in the list runs on the result so far, between toroid segments."""

    @public("Compose")
    def __init__(self, transforms):
        if not isinstance(transforms, (list, tuple)):
            raise InvalidTypeError("Compose takes a list of transforms, got %s" % type(transforms).__name__)
        for t in transforms:
            if not callable(t):
                raise InvalidTypeError("Compose takes callables (transforms), got %s" % type(t).__name__)
        self.transforms = list(transforms)

    def _emit(self, state):
        for t in self.transforms:
            if isinstance(t, Transform):
                t._emit(state)
            else:
                state.call_host(t, whole=True)


def _run(transform, *inputs):
    """Runs one transform (a Compose, or any other on its own) on its input: an image, or a
    sample (a dict, tuple or list of images, masks, boxes, points and other values; several
    arguments are one tuple sample, as torchvision takes them)."""
    try:
        if not inputs:
            raise InvalidTypeError("%s takes an image or a sample, got no argument" % type(transform).__name__)
        x = inputs[0] if len(inputs) == 1 else inputs
        if len(inputs) == 1 and not _sample.is_sample(x):
            state = _State(x)
            transform._emit(state)
            return state.flush()
        state = _State.for_sample(_sample.Sample(x, len(inputs) > 1))
        transform._emit(state)
        out = state.flush()
        return state.sample.result(out) if state.sample is not None else out
    except Exception as e:  # noqa: BLE001 - every failure a toroid.Error, the callables' own aside
        err = as_error(e, type(transform).__name__)
    raise err


class Resize(Transform):
    """torchvision.transforms.v2.Resize: an int size is the smaller edge (the longer one in
    proportion, capped by max_size); [h, w] is the output size."""

    @public("Resize")
    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        if isinstance(size, numbers.Number) and not isinstance(size, bool):
            size = [_int(size, "size")]
        elif size is not None and not (isinstance(size, (list, tuple)) and len(size) in (1, 2)):
            raise Error("size must be an int or a list or tuple of one or two ints, got %s" % (show(size),))
        self.size = list(size) if size is not None else None
        self.interpolation = interpolation
        self.max_size = max_size
        self.antialias = antialias
        self._op = _resize_op(self.size, interpolation, max_size, antialias)
        # [h, w]: every image's result size (RandomResizedCrop's resize: no lookup per draw).
        fixed = self._op.get("size")
        self._fixed = tuple(fixed) if fixed is not None and min(fixed) > 0 else None

    def _emit(self, state):
        h, w = self._fixed or _resized_size(self._op, state.h, state.w, state.dtype)
        state.add(self._op, h, w)


def _resize_op(size, interpolation, max_size, antialias):
    mode = _api._interpolation_name(interpolation)
    op = {"op": "resize", "mode": mode}
    if size is None or (isinstance(size, (list, tuple)) and len(size) == 1) or isinstance(size, numbers.Number):
        if size is None:
            if max_size is None:
                raise Error("resize needs size or max_size")
        else:
            op["smaller_edge"] = _int(size[0] if isinstance(size, (list, tuple)) else size, "size")
        if max_size is not None:
            op["max_size"] = _int(max_size, "max_size")
    else:
        if max_size is not None:
            raise Error("max_size is only allowed with an int size (the smaller edge), got size %s" % (show(size),))
        op["size"] = [_int(size[0], "size"), _int(size[1], "size")]
    if mode in ("bilinear", "bicubic") and _api._flag(antialias, "antialias"):
        op["antialias"] = True
    return op


class CenterCrop(Transform):
    """torchvision.transforms.v2.CenterCrop (zeros where the image is smaller than the crop)."""

    @public("CenterCrop")
    def __init__(self, size):
        self.size = _size_pair(size)

    def _emit(self, state):
        state.add({"op": "center_crop", "size": list(self.size)}, *self.size)


class RandomCrop(Transform):
    """torchvision.transforms.v2.RandomCrop: at the offsets torchvision draws with
    torch.randint. With constant fill 0, padding (int, 2 or 4 values) and pad_if_needed become
    a crop whose region may leave the image (toroid's crop reads zeros there); another fill or
    padding_mode pads first (toroid's pad op), then crops inside the padded image."""

    @public("RandomCrop")
    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        from ._geometry import _pad_fill, _pad_mode  # noqa: PLC0415 - _geometry imports this module
        self.size = _size_pair(size)
        self._padding_mode = _pad_mode(padding_mode)
        self._fill = _pad_fill(fill)
        self._plain = self._padding_mode == "constant" and isinstance(self._fill, list) and \
            all(v == 0 for v in self._fill)
        if padding is not None and not isinstance(padding, (numbers.Number, list, tuple)):
            raise Error("padding must be an int or a sequence of 1, 2 or 4 ints, got %s" % (show(padding),))
        self.padding = padding
        self.pad_if_needed = _api._flag(pad_if_needed, "pad_if_needed")
        self.fill = fill
        self.padding_mode = padding_mode
        self._pad = _parse_padding(padding) if padding else None  # (left, right, top, bottom)

    def _draw(self, h, w):
        """torchvision's draw: (top, left) in the padded image and the padding
        (left, right, top, bottom), pad_if_needed's included."""
        torch = _torch()
        padded_h, padded_w = h, w
        if self._pad is not None:
            pad_left, pad_right, pad_top, pad_bottom = self._pad
            padded_h += pad_top + pad_bottom
            padded_w += pad_left + pad_right
        else:
            pad_left = pad_right = pad_top = pad_bottom = 0
        crop_h, crop_w = self.size
        if self.pad_if_needed:
            if padded_h < crop_h:
                diff = crop_h - padded_h
                pad_top += diff
                pad_bottom += diff
                padded_h += 2 * diff
            if padded_w < crop_w:
                diff = crop_w - padded_w
                pad_left += diff
                pad_right += diff
                padded_w += 2 * diff
        if padded_h < crop_h or padded_w < crop_w:
            raise Error("Required crop size %s is larger than %sinput image size %s" %
                        ((crop_h, crop_w), "padded " if self._pad is not None else "", (padded_h, padded_w)))
        # torchvision v2 draws an offset only along an axis that is longer than the crop.
        top = int(torch.randint(0, padded_h - crop_h + 1, size=())) if padded_h > crop_h else 0
        left = int(torch.randint(0, padded_w - crop_w + 1, size=())) if padded_w > crop_w else 0
        return top, left, (pad_left, pad_right, pad_top, pad_bottom)

    def _emit(self, state):
        top, left, pads = self._draw(state.h, state.w)
        h, w = self.size
        if not self._plain and any(pads):
            from ._geometry import _emit_pad  # noqa: PLC0415 - _geometry imports this module
            _emit_pad(state, pads, self._fill, self._padding_mode)
        else:
            top, left = top - pads[2], left - pads[0]
        state.add({"op": "crop", "top": top, "left": left, "height": h, "width": w}, h, w)


def _parse_padding(padding):
    """torchvision's _parse_pad_padding: (left, right, top, bottom)."""
    if isinstance(padding, numbers.Number):
        p = _int(padding, "padding")
        return p, p, p, p
    padding = [_int(p, "padding") for p in padding]
    if len(padding) == 1:
        return (padding[0],) * 4
    if len(padding) == 2:
        return padding[0], padding[0], padding[1], padding[1]
    if len(padding) == 4:
        return padding[0], padding[2], padding[1], padding[3]
    raise Error("padding must be an int or a sequence of 1, 2 or 4 ints, got %s" % (show(padding),))


class HorizontalFlip(Transform):
    """torchvision.transforms.v2.HorizontalFlip (flips W)."""

    def _emit(self, state):
        state.add({"op": "flip", "dims": [3]})


class VerticalFlip(Transform):
    """torchvision.transforms.v2.VerticalFlip (flips H)."""

    def _emit(self, state):
        state.add({"op": "flip", "dims": [2]})


class _RandomApply(Transform):
    """torchvision's _RandomApplyTransform: applies when torch.rand(1) < p."""

    _inner = None

    @public("RandomApply")
    def __init__(self, p=0.5):
        if isinstance(p, bool) or not isinstance(p, numbers.Real):
            raise InvalidTypeError("p should be a floating point value in the interval [0.0, 1.0], got %s" % show(p))
        if not 0.0 <= p <= 1.0:
            raise Error("p should be a floating point value in the interval [0.0, 1.0], got %s" % (show(p),))
        self.p = p

    def _apply(self, state, applied):
        """Emits the inner transform; with applied False, into a probe (what the other outcome
        would add): a transform with random parameters must not draw them then."""
        self._inner._emit(self, state)

    def _emit(self, state):
        applied = bool(_torch().rand(1) < self.p)
        at = len(state.ops)
        size = (state.h, state.w, state.dtype)
        if applied:
            self._apply(state, True)
            branch_ops, after = state.ops[at:], (state.h, state.w, state.dtype)
        else:
            probe = state.probe()
            self._apply(probe, False)
            branch_ops, after = probe.ops, (probe.h, probe.w, probe.dtype)
        # A choice that leaves the size and dtype alone is a structure the other draw can
        # compile in the background (only where both outcomes happen).
        if 0.0 < self.p < 1.0 and size == after and branch_ops:
            state.branches.append((self, at, branch_ops, applied))


class RandomHorizontalFlip(_RandomApply):
    """torchvision.transforms.v2.RandomHorizontalFlip(p)."""
    _inner = HorizontalFlip


class RandomVerticalFlip(_RandomApply):
    """torchvision.transforms.v2.RandomVerticalFlip(p)."""
    _inner = VerticalFlip


def _setup_angle(x, name, req_sizes):
    if isinstance(x, numbers.Number) and not isinstance(x, bool):
        if x < 0:
            raise Error("If %s is a single number, it must be positive." % name)
        return [-float(x), float(x)]
    if not isinstance(x, (list, tuple)) or len(x) not in req_sizes:
        raise Error("%s should be a number or a sequence of length %s, got %s" % (name, req_sizes, show(x)))
    return [float(v) for v in x]


def _inverse_affine_matrix(center, angle, translate, scale, shear, inverted=True):
    """The inverse of T * C * RotateScaleShear * C^-1 in pixel coordinates, as the 6 numbers
    torchvision's _get_inverse_affine_matrix returns (its formula, in float64); with
    inverted=False the forward map itself (what moves boxes and points)."""
    rot = math.radians(angle)
    sx, sy = math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    # Rotation-shear part of the forward map (determinant 1), then its inverse divided by scale.
    a = math.cos(rot - sy) / math.cos(sy)
    b = -(a * math.tan(sx) + math.sin(rot))
    c = math.sin(rot - sy) / math.cos(sy)
    d = math.cos(rot) - c * math.tan(sx)
    if not inverted:
        m = [a * scale, b * scale, 0.0, c * scale, d * scale, 0.0]
        m[2] += cx + tx - m[0] * cx - m[1] * cy
        m[5] += cy + ty - m[3] * cx - m[4] * cy
        return m
    m = [d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0]
    m[2] += cx - m[0] * (cx + tx) - m[1] * (cy + ty)
    m[5] += cy - m[3] * (cx + tx) - m[4] * (cy + ty)
    return m


_torch_rounding = None


def _torch_fuses():
    """(grid_fma, sample_fma): how the installed PyTorch rounds torchvision's affine on CPU.
    grid_fma: its bmm sums the grid with fused multiply-adds (MKL and OpenBLAS builds) rather
    than rounded products (builds on a generic BLAS, Debian's). sample_fma: its vectorized
    grid_sample kernel was built with floating-point contraction (fused unnormalize and
    bilinear sums). Each is one small computation compared with the every-step-rounded form
    in NumPy float32 (NumPy's generator, not torch's: the caller's draws are untouched).
    Without torch, both fused forms are assumed."""
    global _torch_rounding
    if _torch_rounding is None:
        try:
            torch = _torch()
            import numpy as np
        except ImportError:
            _torch_rounding = (True, True)
            return _torch_rounding
        f32 = np.float32
        # bmm: a 12 x 12 grid (above bmm's small-matrix loop) whose products need rounding.
        xs = np.arange(12, dtype=f32) - f32(5.5)
        base = np.stack(np.broadcast_arrays(xs[None, :], xs[:, None], f32(1)), -1).reshape(-1, 3)
        r = (np.array([[0.1, -0.3], [0.7, 0.9], [0.013, 0.2]]) / 3.7).astype(f32)
        got = torch.bmm(torch.from_numpy(base)[None], torch.from_numpy(r)[None])[0].numpy()
        rounded = (base[:, :1] * r[0] + base[:, 1:2] * r[1]) + r[2]
        grid_fma = not np.array_equal(got, rounded)
        # grid_sample (bilinear, zeros, align_corners=False) at random points of a 9 x 11 image.
        rng = np.random.default_rng(0)
        h, w = 9, 11
        img = rng.integers(0, 256, size=(h, w)).astype(f32)
        g = (rng.random((1, 8, 16, 2)) * 2.4 - 1.2).astype(f32)
        got = torch.nn.functional.grid_sample(torch.from_numpy(img)[None, None], torch.from_numpy(g), mode="bilinear",
                                              padding_mode="zeros", align_corners=False)[0, 0].numpy()
        x = (g[0, ..., 0] + f32(1)) * f32(w / 2) - f32(0.5)
        y = (g[0, ..., 1] + f32(1)) * f32(h / 2) - f32(0.5)
        x0, y0 = np.floor(x), np.floor(y)
        e_w, n_s = x - x0, y - y0
        e, s = f32(1) - e_w, f32(1) - n_s
        ix, iy = x0.astype(np.int64), y0.astype(np.int64)

        def tap(yy, xx):
            ok = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
            return np.where(ok, img[np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)], f32(0))
        rounded = ((tap(iy, ix) * (s * e) + tap(iy, ix + 1) * (s * e_w)) + tap(iy + 1, ix) * (n_s * e)) + \
            tap(iy + 1, ix + 1) * (n_s * e_w)
        sample_fma = not np.array_equal(got, rounded)
        _torch_rounding = (grid_fma, sample_fma)
    return _torch_rounding


def _emit_affine(state, matrix, mode, fill, size=None, geo=None):
    """Appends torchvision's affine warp by its inverse pixel matrix (output size = input
    size, or size = (h, w)) as one toroid op: its grid, its fill (None, or one value or one
    per channel: nearest puts it where the picked pixel is outside, bilinear blends it with
    the warped all-ones mask) and, for uint8, sampling in float32 and rounding half to even
    back. fill may be a _sample.Fills (a value per item type); geo is the warp's parameters in
    torchvision's forward form, for a sample's boxes and points."""
    fill, fills = state.image_fill(fill)
    grid_fma, sample_fma = _torch_fuses()
    op = {"op": "affine", "convention": "torchvision", "theta": [list(matrix[0:3]), list(matrix[3:6])],
          "mode": mode, "grid_fma": grid_fma, "sample_fma": sample_fma}
    if fill is not None:
        op["fill"] = fill
    if size is not None and tuple(size) != (state.h, state.w):
        op["size"] = [int(size[0]), int(size[1])]
        state.add(op, int(size[0]), int(size[1]), fills=fills, geo=geo)
        return
    state.add(op, fills=fills, geo=geo)


def _check_fill(fill):
    """torchvision's fill: None, a number or a sequence of numbers -> None or a list of floats;
    a dict by item type (torchvision's {tv_tensors.Image: ..., "others": ...}) -> a
    _sample.Fills of such values."""
    if fill is None:
        return None
    if isinstance(fill, dict):
        return _sample.Fills(fill, _check_fill)
    values = list(fill) if isinstance(fill, (list, tuple)) else [fill]
    if not values or not all(isinstance(v, numbers.Number) and not isinstance(v, bool) for v in values):
        raise Error("fill must be a number or a sequence of numbers, got %s" % (show(fill),))
    return [float(v) for v in values]


def _affine_mode(interpolation):
    mode = _api._interpolation_name(interpolation)
    if mode not in ("nearest", "bilinear"):
        raise Error("affine supports nearest and bilinear interpolation, got %s" % (show(interpolation),))
    return mode


class RandomAffine(Transform):
    """torchvision.transforms.v2.RandomAffine with nearest or bilinear interpolation and a fill
    (number or one per channel): angle, translation, scale and shear drawn as torchvision draws
    them, torchvision's inverse pixel matrix warped with torchvision's arithmetic."""

    @public("RandomAffine")
    def __init__(self, degrees, translate=None, scale=None, shear=None, interpolation=InterpolationMode.NEAREST,
                 fill=0, center=None):
        self.degrees = _setup_angle(degrees, "degrees", (2,))
        if translate is not None:
            if not isinstance(translate, (list, tuple)) or len(translate) != 2 or \
                    not all(0.0 <= t <= 1.0 for t in translate):
                raise Error("translate must be two values between 0 and 1, got %s" % (show(translate),))
        self.translate = translate
        if scale is not None:
            if not isinstance(scale, (list, tuple)) or len(scale) != 2 or not all(s > 0 for s in scale):
                raise Error("scale must be two positive values, got %s" % (show(scale),))
        self.scale = scale
        self.shear = _setup_angle(shear, "shear", (2, 4)) if shear is not None else None
        self.interpolation = interpolation
        self._mode = _affine_mode(interpolation)
        self.fill = fill
        self._fill = _check_fill(fill)
        if center is not None and (not isinstance(center, (list, tuple)) or len(center) != 2):
            raise Error("center must be a sequence (x, y), got %s" % (show(center),))
        self.center = center

    def _params(self, h, w):
        torch = _torch()
        angle = torch.empty(1).uniform_(self.degrees[0], self.degrees[1]).item()
        if self.translate is not None:
            max_dx = float(self.translate[0] * w)
            max_dy = float(self.translate[1] * h)
            tx = int(round(torch.empty(1).uniform_(-max_dx, max_dx).item()))
            ty = int(round(torch.empty(1).uniform_(-max_dy, max_dy).item()))
        else:
            tx = ty = 0
        scale = torch.empty(1).uniform_(self.scale[0], self.scale[1]).item() if self.scale is not None else 1.0
        shear_x = shear_y = 0.0
        if self.shear is not None:
            shear_x = torch.empty(1).uniform_(self.shear[0], self.shear[1]).item()
            if len(self.shear) == 4:
                shear_y = torch.empty(1).uniform_(self.shear[2], self.shear[3]).item()
        return angle, (tx, ty), scale, (shear_x, shear_y)

    def _emit(self, state):
        angle, translate, scale, shear = self._params(state.h, state.w)
        _emit_affine(state, _pixel_matrix(state.h, state.w, angle, translate, scale, shear, self.center),
                     self._mode, self._fill, geo=_affine_geo(angle, translate, scale, shear, self.center))


def _affine_geo(angle, translate, scale, shear, center, expand=False):
    """An affine warp's parameters as torchvision moves boxes and points by them."""
    num = _api._scalar
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    shear = [float(v) for v in shear]
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    geo = {"kind": "affine", "angle": float(angle), "translate": [float(t) for t in translate],
           "scale": num(scale, "scale", float), "shear": shear,
           "center": None if center is None else [float(c) for c in center], "expand": expand}
    return geo


def _pixel_matrix(h, w, angle, translate, scale, shear, center):
    num = _api._scalar
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    if not isinstance(shear, (list, tuple)) or len(shear) not in (1, 2):
        raise InvalidTypeError("shear must be a number or a sequence of one or two, got %s" % show(shear))
    shear = [num(v, "shear", float) for v in shear]
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    scale = num(scale, "scale", float)
    if not scale > 0:
        raise Error("scale must be positive, got %s" % (show(scale),))
    center_f = [0.0, 0.0]
    if center is not None:  # pixel coordinates, relative to the image's center
        if not isinstance(center, (list, tuple)) or len(center) != 2:
            raise InvalidTypeError("center must be a sequence (x, y), got %s" % show(center))
        center_f = [num(center[0], "center", float) - w * 0.5, num(center[1], "center", float) - h * 0.5]
    return _inverse_affine_matrix(center_f, num(angle, "angle", float), [num(t, "translate", float) for t in translate],
                                  scale, shear)


class ToDtype(Transform):
    """torchvision.transforms.v2.ToDtype(dtype, scale) for uint8, uint16, float16, bfloat16
    and float32 images. dtype may be torchvision's dict by item type ({tv_tensors.Image:
    torch.float32, tv_tensors.Mask: torch.int64, "others": None}): masks, boxes and points
    of a sample take their type's dtype (cast, never scaled)."""

    @public("ToDtype")
    def __init__(self, dtype, scale=False):
        self.dtype = dtype
        self.scale = _api._flag(scale, "scale")
        if isinstance(dtype, dict):
            self._name = None
            for k, v in dtype.items():
                if v is not None and _is_image_key(k):
                    self._check_name(v)
        else:
            self._name = self._check_name(dtype)

    @staticmethod
    def _check_name(dtype):
        name = _api._dtype_name(dtype)
        if name not in ("uint8", "uint16", "float16", "bfloat16", "float32"):
            raise Error("ToDtype supports uint8, uint16, float16, bfloat16 and float32, got %s" % (show(dtype),))
        return name

    def _for_type(self, t):
        """The dtype for an item of type t (torchvision's lookup: its type, else "others")."""
        if t in self.dtype:
            return self.dtype[t]
        if "others" in self.dtype:
            return self.dtype["others"]
        raise Error("No dtype was specified for type %s. If you only need to convert the dtype of images or videos, "
                    "you can just pass e.g. dtype=torch.float32. If you're passing a dict as dtype, you can use "
                    "\"others\" as a catch-all key e.g. dtype={tv_tensors.Mask: torch.int64, \"others\": None} "
                    "to pass-through the rest of the inputs." % (t,))

    def _emit(self, state):
        name = self._name
        if name is None:
            if state.sample is not None:
                state.sample.cast(self._for_type)
            if state.x is None and state.sample is not None:
                return
            dtype = self._for_type(state.image_type)
            if dtype is None:
                return
            name = self._check_name(dtype)
        state.add({"op": "convert", "dtype": name, "scale": self.scale}, dtype=name)


def _is_image_key(k):
    """Whether a dtype dict's key names images (Image, Video, a plain tensor or "others")."""
    from .. import tv_tensors  # noqa: PLC0415
    if isinstance(k, str):
        return k == "others"
    return k in (tv_tensors.Image, tv_tensors.Video) or k is _torch().Tensor


class Normalize(Transform):
    """torchvision.transforms.v2.Normalize(mean, std) on float32, float16 or bfloat16."""

    @public("Normalize")
    def __init__(self, mean, std, inplace=False):
        self.mean = list(mean) if isinstance(mean, (list, tuple)) else mean
        self.std = list(std) if isinstance(std, (list, tuple)) else std
        self._op = {"op": "normalize", "mean": _api._numbers(mean, "mean"), "std": _api._numbers(std, "std")}

    def _emit(self, state):
        state.add(self._op)


# ---- functional forms (torchvision.transforms.v2.functional's names) --------------------------

# A functional call's runner by (the op and its checked arguments, the input's fast key:
# dtype, shape, strides, device): its ops depend on nothing else, so a repeated call skips
# building them, their cache key and the state, and runs the compiled function directly.
_FUNCTIONAL_RUNNERS = {}
_MAX_FUNCTIONAL_RUNNERS = 1024


def _arg_key(v):
    """A hashable form of a checked argument: the op cache's frozen JSON value (0.0 and -0.0
    differ, True and 1 differ); a value with no JSON form gets a key no other call has."""
    f = _core._freeze(v)
    return object() if f is None and v is not None else f


def _one(x, emit, key=None):
    """Runs the ops `emit` adds for x. With `key` (the op's name and checked arguments, on
    which alone its ops depend), a repeated call on an input of the same dtype, shape,
    strides and device runs its compiled function directly."""
    if _sample.is_typed_item(x):  # a Mask, BoundingBoxes or KeyPoints alone
        state = _State.for_sample(_sample.Sample(x, False))
        emit(state)
        return state.sample.result(state.flush())
    xk = _core.fast_key(x, None, None) if key is not None else None
    if xk is not None:
        run = _FUNCTIONAL_RUNNERS.get((key, xk))
        if run is not None:
            return run(x)
    state = _State(x)
    emit(state)
    if xk is None or state.branches or not state.ops:
        return state.flush()
    ops_key = _core._op_key(state.ops)
    out = _core.run_ops(state.ops, x, ops_key)
    handle = _core.cached_handle(state.ops, ops_key)
    run = handle.fast.get(xk) if handle is not None else None
    if run is not None:
        if len(_FUNCTIONAL_RUNNERS) >= _MAX_FUNCTIONAL_RUNNERS:
            _FUNCTIONAL_RUNNERS.clear()
        _FUNCTIONAL_RUNNERS[(key, xk)] = run
    return out


def resize(inpt, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    return Resize(size, interpolation, max_size, antialias)(inpt)


def center_crop(inpt, output_size):
    return CenterCrop(output_size)(inpt)


def crop(inpt, top, left, height, width):
    return _api.crop(inpt, top, left, height, width)


def horizontal_flip(inpt):
    return _one(inpt, HorizontalFlip()._emit, ("horizontal_flip",))


def vertical_flip(inpt):
    return _one(inpt, VerticalFlip()._emit, ("vertical_flip",))


hflip = horizontal_flip
vflip = vertical_flip


@public("affine")
def affine(inpt, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST, fill=None, center=None):
    """torchvision.transforms.v2.functional.affine (nearest or bilinear; output size = input size)."""
    if not isinstance(translate, (list, tuple)) or len(translate) != 2:
        raise Error("translate must be a sequence of length 2, got %s" % (show(translate),))
    mode = _affine_mode(interpolation)
    fill = _check_fill(fill)
    return _one(inpt, lambda s: _emit_affine(s, _pixel_matrix(s.h, s.w, angle, translate, scale, shear, center),
                                             mode, fill, geo=_affine_geo(angle, translate, scale, shear, center)))


def to_dtype(inpt, dtype, scale=False):
    return ToDtype(dtype, scale)(inpt)


def normalize(inpt, mean, std, inplace=False):
    return Normalize(mean, std)(inpt)
