"""The bridge between Python arrays and the C API: NumPy arrays and torch tensors are
described by (data pointer, dtype, shape, strides) without copying; results are allocated
by the same library in the layout toroid writes; compiled functions are cached."""

import collections
import ctypes
import hashlib
import json
import os
import sys
import struct
import threading

from . import _capi
from ._capi import Error, InvalidTypeError, OutOfMemoryError, as_error

try:
    import numpy as np
except ImportError:  # pragma: no cover - numpy is a dependency of every use but torch-only
    np = None

_torch = None


def _torch_module():
    """torch if it is already imported (toroid never imports it for NumPy users)."""
    global _torch
    if _torch is None:
        import sys
        _torch = sys.modules.get("torch")
    return _torch


def is_torch(x):
    t = _torch_module()
    return t is not None and isinstance(x, t.Tensor)


def is_numpy(x):
    return np is not None and isinstance(x, np.ndarray)


# ---- settings -----------------------------------------------------------------------

_settings = {"engine": os.environ.get("TOROID_ENGINE") or "compiled", "threads": 0}
# Bumped by every change of _settings: the per-call fast path keys on it instead of reading
# the settings it depends on.
_generation = [0]


def _after_fork_in_child():
    # The generated kernels' parallel loops are GNU OpenMP loops, and OpenMP's thread pool does
    # not survive fork: a forked child (a DataLoader worker, say) entering a parallel region
    # after its parent ran one waits forever for the parent's threads. Children run on one
    # thread unless they ask for more with set_num_threads (spawned processes are unaffected).
    _settings["threads"] = 1
    _generation[0] += 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def check_engine(name):
    """`name` if it names an engine (the library says which); a type error if not a string."""
    if type(name) is not str:
        raise InvalidTypeError("engine must be a string (reference, compiled), got %s" % type(name).__name__)
    return name


def check_threads(n, what="threads"):
    """`n` as a thread count of toroid's options: an int from 0 (every core) up."""
    try:
        if isinstance(n, bool):
            raise TypeError
        n = n.__index__()
    except Exception:  # noqa: BLE001 - no __index__, or one that refuses (a float array)
        raise InvalidTypeError("%s must be an integer (0: every core), got %s" % (what, type(n).__name__)) from None
    if n < 0:
        raise Error("%s must be at least 0 (0: every core), got %d" % (what, n))
    if n >= 1 << 31:
        raise Error("%s must be below 2^31, got %d" % (what, n))
    return n


def set_default_engine(name):
    """The engine used when none is named: "compiled" (default) or "reference"."""
    if check_engine(name) not in ("compiled", "reference"):
        raise Error("unknown engine '%s' (available: reference, compiled)" % name)
    _settings["engine"] = name
    _generation[0] += 1


def get_default_engine():
    return _settings["engine"]


def set_num_threads(n):
    """Worker threads of every run that names none; 0 (default): every core."""
    _settings["threads"] = check_threads(n)
    _generation[0] += 1


def get_num_threads():
    return _settings["threads"]


def effective_threads(threads=None):
    """The threads a run asked for with `threads` uses: None is the setting; 0 (every core)
    is 1 inside a torch DataLoader worker, where the workers already share the cores (PyTorch
    runs its own ops on one thread there too): every worker spinning up a pool of all cores
    would oversubscribe them, and OpenMP teams whose threads wait for descheduled team-mates
    run many times slower. Asked only where a function is looked up, never per call."""
    threads = _settings["threads"] if threads is None else check_threads(threads)
    if threads == 0:
        data = sys.modules.get("torch.utils.data")
        info = getattr(data, "get_worker_info", None)
        if info is not None and info() is not None:
            return 1
    return threads


# ---- tensors --------------------------------------------------------------------------

_DTYPE_SIZES = {_capi.UINT8: 1, _capi.FLOAT32: 4, _capi.FLOAT16: 2, _capi.BFLOAT16: 2, _capi.FLOAT64: 8,
                _capi.UINT16: 2}

_NUMPY_DTYPES = {"uint8": _capi.UINT8, "float32": _capi.FLOAT32, "float16": _capi.FLOAT16,
                 "float64": _capi.FLOAT64, "uint16": _capi.UINT16}
_DTYPE_NAMES = {_capi.UINT8: "uint8", _capi.FLOAT32: "float32", _capi.FLOAT16: "float16",
                _capi.BFLOAT16: "bfloat16", _capi.FLOAT64: "float64", _capi.UINT16: "uint16"}
# What the messages list: every dtype the compiler takes.
_TAKES = "uint8, uint16, float16, bfloat16 or float32"


_numpy_code_table = None


def _numpy_codes():
    """dtype -> C API code for NumPy's native dtypes (a dict lookup per call)."""
    global _numpy_code_table
    if _numpy_code_table is None:
        _numpy_code_table = {np.dtype(name): code for name, code in _NUMPY_DTYPES.items()}
    return _numpy_code_table


def _torch_dtypes():
    t = _torch_module()
    table = {t.uint8: _capi.UINT8, t.float32: _capi.FLOAT32, t.float16: _capi.FLOAT16,
             t.bfloat16: _capi.BFLOAT16, t.float64: _capi.FLOAT64}
    if hasattr(t, "uint16"):  # PyTorch 2.3 and later
        table[t.uint16] = _capi.UINT16
    return table


class Arg:
    """An input as the C API sees it, plus the object that keeps its memory alive."""
    __slots__ = ("kind", "obj", "ptr", "dtype", "shape", "strides", "device", "device_index", "keep", "cdesc")

    def __init__(self):
        self.keep = None  # a DLPack capsule whose tensor `ptr` points into
        self.cdesc = None  # a desc made once for every input of this spec (run_batch's cache)

    def key(self):
        return (self.kind, self.dtype, self.shape, self.strides, self.device)

    def desc(self):
        if self.cdesc is None:
            self.cdesc = make_desc(self.dtype, self.shape, self.strides, self.device, self.device_index)
        return self.cdesc


# toroid_tensor_desc's bytes: dtype, device, device_index, ndim, then MAX_DIMS extents and
# strides. Packing them and copying the bytes into the struct is twice as fast as setting
# its fields one by one (a batch builds one desc per image).
_DESC_BYTES = struct.Struct("<4i%dq%dq" % (_capi.MAX_DIMS, _capi.MAX_DIMS))
_DESC_PAD = (0,) * _capi.MAX_DIMS


# The devices the library runs on, by the C API's device value, as PyTorch names them; on
# those in _STREAMS a run is enqueued on PyTorch's current stream of the device and its
# result is a torch tensor there (the CPU runs before returning). Below this table the code
# asks these, not which device it is.
_DEVICE_NAMES = {_capi.CPU: "cpu", _capi.CUDA: "cuda"}
_DEVICE_OF_TORCH = {name: value for value, name in _DEVICE_NAMES.items()}
_STREAMS = frozenset([_capi.CUDA])


def make_desc(dtype, shape, strides, device=_capi.CPU, device_index=0):
    k = len(shape)
    if k > _capi.MAX_DIMS:
        raise Error("toroid takes (H, W), (C, H, W) or (N, C, H, W) tensors, got %d dims %s" %
                    (len(shape), tuple(shape)))
    pad = _DESC_PAD[k:]
    return _capi.TensorDesc.from_buffer_copy(
        _DESC_BYTES.pack(dtype, device, device_index, k, *shape, *pad, *strides, *pad))


def _check_rank(shape):
    if not 2 <= len(shape) <= 4:
        raise Error("toroid takes (H, W), (C, H, W) or (N, C, H, W) tensors, got %d dims %s" %
                    (len(shape), tuple(shape)))


_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def _numpy_pointer(x):
    """The data pointer of a NumPy array: a writable C-contiguous one exports its buffer,
    whose address is several times cheaper to get than __array_interface__'s."""
    if x.flags.c_contiguous:
        try:
            return _addressof(_from_buffer(x))
        except (TypeError, ValueError, BufferError):  # read-only, or empty
            pass
    return x.__array_interface__["data"][0]


def adapt(x, what="input", pointer=True):
    """Describes `x` (numpy array or torch tensor) for the C API without copying it, when
    its memory allows: negative or unaligned strides and non-native byte order make a
    NumPy copy first. pointer=False leaves a NumPy array's data pointer None (a first call
    that runs through the fast path's runner never reads it: finding the pointer of a
    strided view builds its __array_interface__ dict)."""
    a = Arg()
    if is_numpy(x):
        code = _numpy_codes().get(x.dtype)
        if code is None:
            dt = x.dtype
            if dt.isnative or dt.newbyteorder("=").name not in _NUMPY_DTYPES:
                raise Error("%s has dtype %s; toroid takes %s" % (what, dt.name, _TAKES))
            x = x.astype(dt.newbyteorder("="))
            code = _NUMPY_DTYPES[dt.name]
        item = x.itemsize
        strides = x.strides
        if item == 1:
            if strides and min(strides) < 0:
                x = np.ascontiguousarray(x)
                strides = x.strides
        elif any(st < 0 or st % item for st in strides):
            x = np.ascontiguousarray(x)
            strides = x.strides
        shape = x.shape
        if not 2 <= len(shape) <= 4:
            _check_rank(shape)
        if len(shape) >= 3 and shape[-1] in (1, 3, 4) and shape[-3] not in (1, 3, 4):
            raise Error(_channels_last_message(what, shape))
        a.kind = "numpy"
        a.obj = x
        a.ptr = _numpy_pointer(x) if pointer else None
        a.dtype = code
        a.shape = shape
        a.strides = strides if item == 1 else tuple(st // item for st in strides)
        a.device, a.device_index = _capi.CPU, 0
        return a
    if is_torch(x):
        t = _torch_module()
        if x.layout != t.strided:
            raise Error("%s is a %s torch tensor; toroid takes strided (dense) tensors" % (what, x.layout))
        dtypes = _torch_dtypes()
        if x.dtype not in dtypes:
            raise Error("%s has dtype %s; toroid takes %s" % (what, x.dtype, _TAKES))
        _check_rank(tuple(x.shape))
        device = _DEVICE_OF_TORCH.get(x.device.type)
        if device is None:
            raise Error("%s is on device %s; toroid runs on the CPU and on CUDA devices" % (what, x.device))
        a.device, a.device_index = device, (x.device.index or 0) if device in _STREAMS else 0
        a.kind = "torch"
        a.obj = x
        a.ptr = x.data_ptr()
        a.dtype = dtypes[x.dtype]
        a.shape = tuple(x.shape)
        a.strides = tuple(x.stride())
        return a
    if hasattr(x, "__dlpack__"):
        return _adapt_dlpack(x, what)
    raise Error("%s must be a numpy.ndarray, a torch.Tensor or an array that exports DLPack (__dlpack__), got %s" %
                (what, type(x).__name__))


def _channels_last_message(what, shape):
    """The error of a NumPy array whose last dim looks like channels (1, 3 or 4) while the
    channel dim toroid reads (-3) does not: (H, W, C) as np.asarray(PIL image), OpenCV and
    imageio give it, which toroid would silently read as (C, H, W)."""
    if len(shape) == 3:
        hwc, chw, there, back = "(H, W, C)", "(C, H, W)", "transpose(2, 0, 1)", "transpose(1, 2, 0)"
    else:
        hwc, chw, there, back = "(N, H, W, C)", "(N, C, H, W)", "transpose(0, 3, 1, 2)", "transpose(0, 2, 3, 1)"
    return ("%s has shape %s, which looks like %s (channels last, as np.asarray of a PIL image gives), but "
            "toroid reads NumPy arrays as %s: pass x.%s (a view, no copy) and turn the result back with .%s "
            "(a %s array of width 1, 3 or 4 goes through as a torch tensor: torch.from_numpy(x))"
            % (what, tuple(shape), hwc, chw, there, back, chw))


_capsule_pointer = None


def _adapt_dlpack(x, what):
    """Describes an array of another framework (CuPy, JAX, ...) through DLPack, without
    copying: its capsule is kept with the Arg while toroid reads the memory. Results come
    back as NumPy arrays for CPU memory and torch tensors for CUDA memory (both export
    DLPack again, e.g. cupy.from_dlpack(result))."""
    global _capsule_pointer
    if not _capi.has_dlpack:
        raise Error("%s is a %s: this toroid library has no DLPack support" % (what, type(x).__name__))
    try:
        dev_type, dev_id = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (1, 0)
        kwargs = {}
        if dev_type in (2, 13):  # kDLCUDA, kDLCUDAManaged
            t = _torch_module()
            if t is None or not t.cuda.is_available():
                raise Error("%s is CUDA memory (DLPack): toroid returns CUDA results as torch tensors, so it needs "
                            "PyTorch with CUDA" % what)
            # The stream toroid runs on (PyTorch's current one); the producer orders its own
            # work before it. DLPack spells CUDA's legacy default stream 1, not 0.
            kwargs["stream"] = _current_stream(int(dev_id)) or 1
        capsule = x.__dlpack__(**kwargs)
    except Error:
        raise
    except Exception as e:  # the producer refuses (e.g. a read-only or odd-strided array)
        raise Error("%s (%s) cannot be exported through DLPack: %s" % (what, type(x).__name__, e))
    if _capsule_pointer is None:
        f = ctypes.pythonapi.PyCapsule_GetPointer
        f.restype = ctypes.c_void_p
        f.argtypes = [ctypes.py_object, ctypes.c_char_p]
        _capsule_pointer = f
    try:
        managed = _capsule_pointer(capsule, b"dltensor")
    except ValueError:
        raise Error("%s (%s): __dlpack__ did not return an unused DLPack capsule" % (what, type(x).__name__))
    t = _capi.Tensor()
    status = _capi.lib.toroid_tensor_from_dlpack(managed, ctypes.byref(t))
    if status:
        raise Error("%s: %s" % (what, _capi.lib.toroid_last_error().decode()))
    d = t.desc
    if d.dtype not in _DTYPE_NAMES or d.dtype == _capi.FLOAT64:
        raise Error("%s has dtype %s; toroid takes %s" % (what, _DTYPE_NAMES.get(d.dtype, d.dtype), _TAKES))
    a = Arg()
    a.shape = tuple(d.shape[i] for i in range(d.ndim))
    _check_rank(a.shape)
    a.strides = tuple(d.strides[i] for i in range(d.ndim))
    a.kind = "torch" if d.device in _STREAMS else "numpy"
    a.obj = x
    a.keep = capsule
    a.ptr = t.data or 0
    a.dtype = d.dtype
    a.device, a.device_index = d.device, d.device_index
    return a


class OutputPlan:
    """How to allocate results of one output desc: NumPy arrays are allocated dense in
    the order of decreasing strides and transposed back, torch tensors by empty_strided;
    either way with exactly the strides toroid writes."""

    def __init__(self, desc):
        self.desc = desc
        self.shape, self.strides = desc.dims()
        self.dtype_name = _DTYPE_NAMES[desc.dtype]
        numel = 1
        for n in self.shape:
            numel *= n
        self.nbytes = numel * _DTYPE_SIZES[desc.dtype]
        order = sorted(range(len(self.shape)), key=lambda i: -self.strides[i])
        self.dense_shape = tuple(self.shape[i] for i in order)
        inverse = [0] * len(order)
        for pos, i in enumerate(order):
            inverse[i] = pos
        self.inverse = tuple(inverse)
        # NumPy has no bfloat16: such results come back as torch tensors only.
        self.np_dtype = np.dtype(self.dtype_name) if np is not None and self.dtype_name != "bfloat16" else None
        self.torch_dtype = None

    def check_size(self, device):
        """Refuses, before anything is allocated, a result larger than the machine's memory
        (CPU results; CUDA ones fail in torch's allocator, and say so)."""
        if device == _capi.CPU:
            limit = _physical_memory()
            if limit and self.nbytes > limit:
                raise OutOfMemoryError("the result %s %s would take %s, more than this machine's memory (%s)" %
                                       (self.shape, self.dtype_name, _show_bytes(self.nbytes), _show_bytes(limit)))

    def allocate(self, arg):
        """A new array of `arg`'s kind ("numpy" or "torch"), on its device, and its data
        pointer."""
        try:
            return self._allocate(arg)
        except Error:
            raise
        except Exception as e:  # MemoryError, or torch's RuntimeError (CUDA out of memory)
            raise OutOfMemoryError("cannot allocate the result %s %s (%s): %s" %
                                   (self.shape, self.dtype_name, _show_bytes(self.nbytes), e)) from e

    def _allocate(self, arg):
        if arg.kind == "torch":
            t = _torch_module()
            if self.torch_dtype is None:
                if not hasattr(t, self.dtype_name):
                    raise Error("the result is %s, which this PyTorch (%s) has no dtype for (torch.uint16 came in "
                                "PyTorch 2.3): convert it in the pipeline" % (self.dtype_name, t.__version__))
                self.torch_dtype = getattr(t, self.dtype_name)
            if is_torch(arg.obj):
                device = arg.obj.device
            else:  # CUDA memory of another framework (DLPack)
                device = t.device(_DEVICE_NAMES[arg.device], arg.device_index) if arg.device in _STREAMS else "cpu"
            out = t.empty_strided(self.shape, self.strides, dtype=self.torch_dtype, device=device)
            return out, out.data_ptr()
        if self.np_dtype is None:
            raise Error("the result is bfloat16, which NumPy has no dtype for: give a torch tensor, or convert "
                        "the result in the pipeline")
        out = np.empty(self.dense_shape, dtype=self.np_dtype).transpose(self.inverse)
        return out, out.__array_interface__["data"][0]


_memory_total = []


def _physical_memory():
    """The machine's memory in bytes (None when the system does not say)."""
    if not _memory_total:
        try:
            _memory_total.append(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (AttributeError, ValueError, OSError):
            _memory_total.append(None)
    return _memory_total[0]


def _show_bytes(n):
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return "%.3g %s" % (n / size, unit)
    return "%d bytes" % n


# ---- pipelines and functions ------------------------------------------------------------

# OutputPlans by (dtype, shape, strides): a loader's images of many sizes share one result
# shape (a crop's), and a new size should not pay for planning it again.
_plans = {}
_MAX_PLANS = 256


def _output_plan(desc):
    key = (desc.dtype,) + desc.dims()
    plan = _plans.get(key)
    if plan is None:
        if len(_plans) >= _MAX_PLANS:
            _plans.clear()
        plan = _plans[key] = OutputPlan(desc)
    return plan


def _check_desc_size(desc, device):
    """OutputPlan.check_size for one result's desc, without making its plan."""
    if device == _capi.CPU:
        limit = _physical_memory()
        shape = desc.dims()[0]
        numel = 1
        for n in shape:
            numel *= n
        if limit and numel * _DTYPE_SIZES[desc.dtype] > limit:
            OutputPlan(desc).check_size(device)


class Function:
    """A pipeline compiled for one input spec (handle to toroid_function)."""

    def __init__(self, handle, input_desc):
        self._handle = handle
        self.input_desc = input_desc
        self.output_desc = _capi.TensorDesc()
        _capi.check(_capi.lib.toroid_function_output_desc(handle, ctypes.byref(self.output_desc)))
        self._plan = _output_plan(self.output_desc)
        self._plan.check_size(input_desc.device)

    def __del__(self):
        h, self._handle = getattr(self, "_handle", None), None
        if h and _capi is not None and _capi.lib is not None:
            _capi.lib.toroid_function_free(h)

    def explain(self):
        s = ctypes.c_char_p()
        _capi.check(_capi.lib.toroid_function_explain(self._handle, ctypes.byref(s)))
        return s.value.decode()

    def run(self, arg):
        """Runs on `arg` (an Arg of the spec compiled for) into a new array of its kind. CUDA
        tensors run on PyTorch's current stream of their device, without waiting."""
        out, ptr = self._plan.allocate(arg)
        if arg.device in _STREAMS:
            stream = _current_stream(arg.device_index)
            status = _run_on_stream(self._handle, _byref(_capi.Tensor(arg.ptr, self.input_desc)),
                                    _byref(_capi.Tensor(ptr, self.output_desc)), stream)
        else:
            status = _run(self._handle, _byref(_capi.Tensor(arg.ptr, self.input_desc)),
                          _byref(_capi.Tensor(ptr, self.output_desc)))
        if status:
            _capi.check(status)
        return out


_run = _capi.lib.toroid_run
_raw_stream = None
_ndarray = np.ndarray if np is not None else None
# Fast-path entries and compiled functions kept per pipeline (input specs times engines and
# threads): a loader's images come in a few hundred sizes, seen again every epoch, and an
# image whose entry was dropped takes the general path (a function looked up or bound).
_MAX_FAST = 256


def _fast_runner(fn, arg):
    """A closure that runs `fn` on arrays of exactly `arg`'s kind, dtype, shape and strides
    (what the fast-path key guarantees), or None where the general path must run. Everything
    that does not change per call (the handle, the output's dtype, shape and strides, the C
    function) is looked up here once; per call it takes the two data pointers, allocates the
    result and makes one C call (toroid_run_data: no desc is built or checked)."""
    if not _capi.has_run_data or arg.obj is None:
        return None
    if arg.device in _STREAMS:
        return _fast_runner_cuda(fn, arg)
    if arg.device != _capi.CPU:
        return None
    plan = fn._plan
    numel = 1
    for n in plan.shape:
        numel *= n
    in_numel = 1
    for n in arg.shape:
        in_numel *= n
    if numel == 0 or in_numel == 0:
        return None
    handle = fn._handle
    run = _capi.lib.toroid_run_data
    check = _capi.check
    addressof = ctypes.addressof
    from_buffer = ctypes.c_char.from_buffer
    if arg.kind == "numpy":
        if not isinstance(arg.obj, _ndarray) or type(arg.obj) is not _ndarray or plan.np_dtype is None:
            return None
        empty = np.empty
        dense_shape = plan.dense_shape
        np_dtype = plan.np_dtype
        inverse = plan.inverse if plan.inverse != tuple(range(len(plan.inverse))) else None
        # The input's pointer through the buffer protocol, which needs a C-contiguous view:
        # the array itself, or (channels-last and other dense permutations) its axes put in
        # memory order, a view with the same data pointer. Other strides (sliced views) take
        # __array_interface__.
        order = tuple(sorted(range(arg.obj.ndim), key=lambda i: -arg.obj.strides[i]))
        if arg.obj.flags.c_contiguous:
            order = None
        elif not arg.obj.transpose(order).flags.c_contiguous:
            order = False

        def run_numpy(x):
            if order is False:
                ip = x.__array_interface__["data"][0]
            else:
                try:
                    ip = addressof(from_buffer(x if order is None else x.transpose(order)))
                except (TypeError, ValueError, BufferError):  # read-only
                    ip = x.__array_interface__["data"][0]
            try:
                out = empty(dense_shape, np_dtype)
            except MemoryError:
                return fn.run(adapt(x))  # says so as toroid.OutOfMemoryError
            status = run(handle, ip, addressof(from_buffer(out)))
            if status:
                check(status)
            return out if inverse is None else out.transpose(inverse)
        run_numpy.function = fn  # keeps the compiled function (and its handle) alive
        return run_numpy
    t = _torch_module()
    if type(arg.obj) is not t.Tensor:
        return None
    empty_strided = t.empty_strided
    shape, strides = plan.shape, plan.strides
    torch_dtype = getattr(t, plan.dtype_name)
    # A result with the input's dtype, shape and strides comes from empty_like, in half the
    # time of empty_strided, which parses the shape and strides each call.
    like = _like_input(t, arg.obj, plan, torch_dtype)
    empty_like = t.empty_like

    def run_torch(x):
        try:
            out = empty_like(x) if like else empty_strided(shape, strides, dtype=torch_dtype)
        except Exception:  # noqa: BLE001 - out of memory: said as toroid.OutOfMemoryError
            return fn.run(adapt(x))
        status = run(handle, x.data_ptr(), out.data_ptr())
        if status:
            check(status)
        return out
    run_torch.function = fn
    return run_torch


def _like_input(t, x, plan, torch_dtype):
    """Whether torch.empty_like(x) gives exactly the result `plan` describes (dtype, shape and
    strides; a fast runner serves inputs of x's exact dtype, shape and strides only)."""
    if x.dtype != torch_dtype or tuple(x.shape) != tuple(plan.shape) or tuple(x.stride()) != tuple(plan.strides):
        return False
    probe = t.empty_like(x)
    return tuple(probe.stride()) == tuple(plan.strides) and probe.dtype == torch_dtype


def _fast_runner_cuda(fn, arg):
    """_fast_runner for a CUDA torch tensor: per call the result is allocated by torch on the
    input's device and the kernels are enqueued on torch's current stream of that device
    (toroid_run_data_on_stream), without waiting, as the general path does."""
    if not _capi.has_run_data_on_stream or arg.kind != "torch":
        return None
    t = _torch_module()
    if type(arg.obj) is not t.Tensor:
        return None
    plan = fn._plan
    handle = fn._handle
    run = _capi.lib.toroid_run_data_on_stream
    check = _capi.check
    empty_strided = t.empty_strided
    shape, strides = plan.shape, plan.strides
    torch_dtype = getattr(t, plan.dtype_name)
    device = arg.obj.device
    index = arg.device_index
    _current_stream(index)  # resolves _raw_stream
    raw_stream = _raw_stream

    def run_cuda(x):
        try:
            out = empty_strided(shape, strides, dtype=torch_dtype, device=device)
        except Exception:  # noqa: BLE001 - out of memory: said as toroid.OutOfMemoryError
            return fn.run(adapt(x))
        status = run(handle, x.data_ptr(), out.data_ptr(), raw_stream(index))
        if status:
            check(status)
        return out
    run_cuda.function = fn
    return run_cuda


def fast_key(x, engine, threads):
    """The fast-path key of `x` (a NumPy array, or a CPU or CUDA torch tensor, of the plain
    types) run with these engine and threads arguments, or None for anything else."""
    tx = type(x)
    if tx is _ndarray:
        return (x.dtype, x.shape, x.strides, engine, threads, _generation[0])
    t = _torch
    if t is not None and tx is t.Tensor and x.layout is t.strided:
        # get_device(): -1 on the CPU, the device index on CUDA (other devices fail in adapt)
        return ("torch", x.dtype, x.shape, x.stride(), x.get_device(), engine, threads, _generation[0])
    return None


def _current_stream(index):
    """PyTorch's current CUDA stream of device `index` as a raw handle (its fast path when
    this PyTorch has one)."""
    global _raw_stream
    if _raw_stream is None:
        t = _torch_module()
        raw = getattr(getattr(t, "_C", None), "_cuda_getCurrentRawStream", None)
        _raw_stream = raw if raw is not None else (lambda i: t.cuda.current_stream(i).cuda_stream)
    return _raw_stream(index)
_run_on_stream = _capi.lib.toroid_run_on_stream
_byref = ctypes.byref


def _grid_array(grid):
    """A grid (numpy or torch, (N, H, W, 2) or (H, W, 2)) as a float32 NumPy array; torch
    CPU tensors are viewed without a copy when already float32."""
    if is_torch(grid):
        grid = grid.detach().cpu()  # a table of the pipeline: read on the host, copied where it runs
        if grid.dtype != _torch_module().float32:
            grid = grid.float()
        grid = grid.numpy()
    elif not is_numpy(grid):
        try:
            grid = np.asarray(grid, dtype=np.float32)
        except (TypeError, ValueError) as e:
            raise Error("grid must be an array of shape (N, H, W, 2): %s" % e)
    if grid.dtype != np.float32 or not grid.dtype.isnative:
        grid = grid.astype(np.float32)
    if any(s < 0 or s % 4 for s in grid.strides):
        grid = np.ascontiguousarray(grid)
    return grid


# toroid_options by (engine, threads), filled once: the C library only reads them.
_options_cache = {}


def _compile_options(engine, threads):
    key = (engine, threads)
    options = _options_cache.get(key)
    if options is None:
        options = _capi.Options()
        _capi.lib.toroid_options_init(ctypes.byref(options))
        options.engine = engine.encode()
        options.threads = threads
        _options_cache[key] = options
    return options


# Structures prepared in this process (PipelineHandle.may_compile's keys): a prepare of one of
# them is a bind or a memory hit, called directly; any other goes through
# _capi.interruptible (a worker thread, so that Ctrl-C is seen while it compiles).
_warm = set()
_MAX_WARM = 4096
_NUMBER_BYTES = b"0123456789.+-"  # dropped from the JSON: its skeleton


def _structure_key(skeleton, engine, arg):
    """The rough structure of a pipeline on an input (PipelineHandle.may_compile): its JSON
    skeleton (numbers left out), the engine, and the input's dtype, device, rank, channels
    (1, 3, 4 or other) and dense dim."""
    shape, strides = arg.shape, arg.strides
    c = shape[-3] if len(shape) >= 3 else 1
    return (skeleton, engine, arg.dtype, arg.device, len(shape), c if c in (1, 3, 4) else 0,
            strides.index(1) - len(strides) if 1 in strides else 0)


def prepared(key):
    if len(_warm) >= _MAX_WARM:
        _warm.clear()
    _warm.add(key)


MAX_NESTING = 32


def _shallow(value):
    """Whether `value` is the usual pipeline: a list of op dicts whose values are plain
    scalars, lists of them or lists of such lists (a matrix). Checked without a stack."""
    if type(value) is not list:
        return False
    for op in value:
        if type(op) is not dict:
            return False
        for v in op.values():
            t = type(v)
            if t is list or t is tuple:
                for e in v:
                    t = type(e)
                    if t is list or t is tuple:
                        for f in e:
                            t = type(f)
                            if t is list or t is tuple or t is dict:
                                return False
                    elif t is dict:
                        return False
            elif t is dict:
                return False
    return True


def check_nesting(value, what):
    """Refuses lists, tuples and dicts nested deeper than MAX_NESTING (no pipeline value
    nests more than 4), walking them without recursion: Python's own walks (json, repr,
    the freezing of keys) would hit the recursion limit."""
    if _shallow(value):
        return
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (list, tuple, dict)):
            if depth >= MAX_NESTING:
                raise Error("%s: values nest lists or dicts more than %d deep" % (what, MAX_NESTING))
            stack.extend((e, depth + 1) for e in (v.values() if isinstance(v, dict) else v))


class PipelineHandle:
    """A parsed pipeline (handle to toroid_pipeline) with its grids set, and the functions
    compiled from it, cached per (input spec, engine, threads)."""

    def __init__(self, ops, base_dir=None, checked=False, allow_paths=False, eager_fast=True):
        """checked: `ops` is a list of op dicts whose nesting was checked (cached_pipeline's,
        frozen into its key first). allow_paths: grid paths anywhere (by default they stay
        inside base_dir). eager_fast: the first call on an input kind fills the fast path;
        otherwise the second does (cached_pipeline's handles, most of which a random
        transform's draws make for one call: building a runner costs more than the call)."""
        try:
            text, grids = self._parse(ops, checked)
            if base_dir is not None and not isinstance(base_dir, (str, bytes, os.PathLike)):
                raise InvalidTypeError("base_dir must be a path (str or os.PathLike), got %s" % type(base_dir).__name__)
            base = os.fsencode(base_dir) if base_dir is not None else None
        except Exception as e:  # noqa: BLE001 - every failure a toroid.Error
            raise as_error(e, "pipeline")
        handle = ctypes.c_void_p()
        text = text.encode("utf-8", "surrogatepass")
        if allow_paths:
            if not _capi.has_pipeline_flags:
                raise Error("allow_paths needs a newer libtoroid_c (%s has no toroid_pipeline_from_json_flags)"
                            % _capi.library_path)
            _capi.check(_capi.lib.toroid_pipeline_from_json_flags(text, base or None, _capi.ALLOW_PATHS,
                                                                  ctypes.byref(handle)))
        else:
            _capi.check(_capi.lib.toroid_pipeline_from_json(text, base or None, ctypes.byref(handle)))
        self._handle = handle
        self._text = text
        self._skeleton = None
        self.grid_digest = ""
        if grids:
            digest = hashlib.sha256()
            for i, g in grids:
                t = _capi.Tensor(g.ctypes.data, make_desc(_capi.FLOAT32, g.shape, [s // 4 for s in g.strides]))
                _capi.check(_capi.lib.toroid_pipeline_set_grid(handle, i, ctypes.byref(t)))
                digest.update(("%d %s " % (i, g.shape)).encode())
                digest.update(np.ascontiguousarray(g).tobytes())
            self.grid_digest = digest.hexdigest()
        self._functions = collections.OrderedDict()
        self._lock = threading.Lock()
        # fast_key -> runner (see _fast_runner). Read without the lock (a dict lookup is atomic);
        # filled by the general path; cleared when it grows past _MAX_FAST.
        self.fast = {}
        # Input kinds run once through the general path (eager_fast=False): the next call of
        # one builds its fast runner. None: every first call builds it.
        self._once = None if eager_fast else set()
        # run_batch's per-spec cache: fast_key -> (kind, device, device_index, dtype, shape,
        # strides, input desc, output desc), so that an image of a spec seen before costs a dict lookup and its
        # data pointer, not an adapt, two descs and a toroid_output_desc call (a batch of a
        # hundred images spent milliseconds there). Filled when adapt made no copy.
        self.batch_specs = {}

    @staticmethod
    def _parse(ops, checked=False):
        """(JSON text, [(op index, grid array)]) of a list of op dicts or JSON text."""
        if isinstance(ops, str):
            return ops, []
        if not checked:
            PipelineHandle._parse_check(ops)
            ops = list(ops)
        plain, grids = [], []
        for i, op in enumerate(ops):
            if not isinstance(op, dict):
                raise InvalidTypeError("op %d must be a dict, got %s" % (i, type(op).__name__))
            g = op.get("grid")
            if op.get("op") == "grid_sample" and g is not None and not isinstance(g, (str, os.PathLike)):
                op = dict(op)
                grids.append((i, _grid_array(op.pop("grid"))))
            elif isinstance(g, os.PathLike):
                op = dict(op, grid=os.fspath(g))
            plain.append(op)
        if not checked:
            check_nesting(plain, "pipeline")
        try:
            text = json.dumps(plain, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise Error("pipeline is not JSON-serializable: %s" % e)
        return text, grids

    @staticmethod
    def _parse_check(ops):
        """Refuses what is neither JSON text nor a list (an iterable) of ops."""
        if isinstance(ops, dict):
            raise InvalidTypeError("Pipeline takes a list of op dicts or JSON text, got a dict (one op: put it "
                                   "in a list)")
        if isinstance(ops, (bytes, bytearray, memoryview)) or not hasattr(ops, "__iter__"):
            raise InvalidTypeError("Pipeline takes a list of op dicts or JSON text, got %s" % type(ops).__name__)

    def __del__(self):
        h, self._handle = getattr(self, "_handle", None), None
        if h and _capi is not None and _capi.lib is not None:
            _capi.lib.toroid_pipeline_free(h)

    def may_compile(self, arg, engine):
        """Whether a prepare of `arg` may compile (or analyse) for long: no pipeline of the same
        structure was prepared for an input of the same class in this process. The structure
        is told roughly: the JSON with its numbers left out (names and flags pick the code;
        most numbers are run-time values) and the input's dtype, rank, channels (1, 3, 4 or
        other) and dense dim. Returns the key to pass to prepared(), or None when warm."""
        sk = self._skeleton
        if sk is None:
            sk = self._skeleton = self._text.translate(None, _NUMBER_BYTES)
        key = _structure_key(sk, engine, arg)
        return None if key in _warm else key

    def to_json(self):
        s = ctypes.c_char_p()
        _capi.check(_capi.lib.toroid_pipeline_to_json(self._handle, ctypes.byref(s)))
        return s.value.decode()

    def num_ops(self):
        n = ctypes.c_size_t()
        _capi.check(_capi.lib.toroid_pipeline_num_ops(self._handle, ctypes.byref(n)))
        return n.value

    def function(self, arg, engine=None, threads=None, max_cached=_MAX_FAST):
        engine = engine or _settings["engine"]
        threads = effective_threads(threads)
        key = (arg.dtype, arg.shape, arg.strides, arg.device, engine, threads)
        with self._lock:
            fn = self._functions.get(key)
            if fn is not None:
                self._functions.move_to_end(key)
                return fn
        options = _compile_options(check_engine(engine), threads)
        handle = ctypes.c_void_p()
        desc = arg.desc()
        cold = self.may_compile(arg, engine)
        if cold is None:  # a bind, or a program in memory: quick, called here
            _capi.check(_capi.lib.toroid_compile(self._handle, ctypes.byref(desc), ctypes.byref(options),
                                                 ctypes.byref(handle)))
        else:  # may compile for long: Ctrl-C interrupts it
            _capi.interruptible(_capi.lib.toroid_compile, self._handle, ctypes.byref(desc), ctypes.byref(options),
                                ctypes.byref(handle), keep=(self, desc, options, handle),
                                discard=lambda: _capi.lib.toroid_function_free(handle))
            prepared(cold)
        fn = Function(handle, desc)
        with self._lock:
            self._functions[key] = fn
            while len(self._functions) > max_cached:
                self._functions.popitem(last=False)
        return fn

    def __call__(self, x, engine=None, threads=None):
        tx = type(x)
        if tx is _ndarray:  # the common case, inline: one dict lookup, one C call
            run = self.fast.get((x.dtype, x.shape, x.strides, engine, threads, _generation[0]))
            if run is not None:
                return run(x)
        elif _torch is not None and tx is _torch.Tensor:
            key = fast_key(x, engine, threads)
            run = self.fast.get(key) if key is not None else None
            if run is not None:
                return run(x)
        return self.call_general(x, engine, threads)

    def call_general(self, x, engine=None, threads=None):
        """Adapts `x`, finds or compiles its function, runs it, and fills the fast path for
        arrays like `x`."""
        try:
            key = fast_key(x, engine, threads)
            arg = adapt(x, pointer=False)
            fn = self.function(arg, engine, threads)
            once = self._once
            if once is not None and key is not None and key not in once:
                if len(once) >= _MAX_FAST:
                    once.clear()
                once.add(key)  # a second call of this kind builds the runner
                key = None
            if key is not None and arg.obj is x:  # no copy was needed: later calls can skip adapt
                run = _fast_runner(fn, arg)
                if run is not None:
                    if len(self.fast) >= _MAX_FAST:
                        self.fast.clear()
                    self.fast[key] = run
                    return run(x)  # the runner just made: cheaper than fn.run's descs
            if arg.ptr is None:
                arg.ptr = _numpy_pointer(arg.obj)
            return fn.run(arg)
        except Exception as e:  # noqa: BLE001 - every failure a toroid.Error
            err = as_error(e)
        raise err

    def run_batch(self, xs, engine=None, threads=None, errors="raise", handles=None):
        """Runs on a list of arrays/tensors of any sizes in one call (one parallel loop over
        the images on the CPU; on CUDA, on torch's current stream, one launch per kernel for
        the images whose sizes share compiled kernels; every size shares the compiled code).
        When every result has the same
        dtype and shape, they come back stacked in one array (3-D inputs stacked along a new
        first dim, 4-D ones concatenated along N); otherwise as a list. errors="raise" raises
        toroid.Error naming the first bad image after the others ran; errors="skip" returns
        (results, {index: message}) with None in the list (or no stacking) for bad images.
        handles: a PipelineHandle per image instead of this one for all (toroid_run_batch_each:
        each image's own random draws, one call)."""
        engine = check_engine(engine or _settings["engine"])
        threads = effective_threads(threads)
        if not (type(errors) is str and errors in ("raise", "skip")):
            raise Error("errors must be 'raise' or 'skip', got %s" % _capi.show(errors))
        if isinstance(xs, (str, bytes, dict)) or not hasattr(xs, "__iter__"):
            raise InvalidTypeError("run_batch takes a list of arrays or tensors, got %s" % type(xs).__name__)
        xs = list(xs)
        if handles is not None:
            if not _capi.has_run_batch_each:
                raise Error("%s has no toroid_run_batch_each: rebuild libtoroid_c" % _capi.library_path)
            if len(handles) != len(xs):
                raise Error("internal: %d pipelines for %d images" % (len(handles), len(xs)))
        args, descs, failed, codes = [], [], {}, {}
        # Seen specs are kept per pipeline: with a pipeline per image, none are kept.
        specs = self.batch_specs if handles is None else {}
        cold = set()  # structures this batch may compile (see may_compile)
        for i, x in enumerate(xs):
            key = fast_key(x, engine, threads)
            hit = specs.get(key) if key is not None else None
            if hit is not None:
                a = Arg()
                a.kind, a.device, a.device_index, a.dtype, a.shape, a.strides, a.cdesc, d = hit
                a.obj = x
                a.ptr = _numpy_pointer(x) if a.kind == "numpy" else x.data_ptr()
                args.append(a)
                descs.append(d)
                continue
            try:
                a = adapt(x, "image %d" % i)
                d = _capi.TensorDesc()
                h = self if handles is None else handles[i]
                _capi.check(_capi.lib.toroid_output_desc(h._handle, ctypes.byref(a.desc()), ctypes.byref(d)))
                d.device, d.device_index = a.device, a.device_index  # the result lives where the input does
                _check_desc_size(d, a.device)
                k = h.may_compile(a, engine)
                if k is not None:
                    cold.add(k)
                if handles is None and key is not None and a.obj is x and a.keep is None and \
                        a.kind in ("numpy", "torch"):
                    if len(specs) >= _MAX_FAST:
                        specs.clear()
                    specs[key] = (a.kind, a.device, a.device_index, a.dtype, a.shape, a.strides, a.desc(), d)
            except Error as e:
                message = str(e) if str(e).startswith("image %d" % i) else "image %d: %s" % (i, e)
                if errors != "skip":
                    raise type(e)(message, e.status)
                failed[i] = message
                a, d = None, None
            args.append(a)
            descs.append(d)
        good = [i for i in range(len(xs)) if args[i] is not None]
        cuda = [i for i in good if args[i].device in _STREAMS]
        # One batched call runs on one stream of one device: images on several GPUs, or an
        # older library, go one image at a time, each on its own device's stream.
        if cuda and (not _capi.has_run_batch_on_stream or len({args[i].device_index for i in cuda}) > 1):
            return self._run_batch_cuda(args, descs, failed, engine, threads, errors, handles)
        outs = [None] * len(xs)
        # The results' kind, device and desc up to its strides (dtype, device, index, ndim and
        # shape: the desc's first 48 bytes) decide whether they stack; on CUDA their strides
        # too (a kernel writes the layout it was compiled for: images of several layouts
        # come back as a list).
        keys = {(args[i].kind, bytes(descs[i]) if args[i].device in _STREAMS else bytes(descs[i])[:48])
                for i in good}
        stacked = None
        n = len(good)
        in_t = _capi.Tensor * n
        inputs, outputs = in_t(), in_t()
        if len(keys) == 1 and n > 0 and not failed:
            # One result shape: one stacked array; each image writes its view of it.
            first = descs[good[0]]
            shape, strides = first.dims()
            # Each result is dense: the next image starts numel elements later.
            step = 1
            for k in shape:
                step *= k
            if len(shape) == 4:
                stacked_shape, stacked_strides = (shape[0] * n,) + tuple(shape[1:]), tuple(strides)
            else:
                stacked_shape, stacked_strides = (n,) + tuple(shape), (step,) + tuple(strides)
            plan = OutputPlan(make_desc(first.dtype, stacked_shape, stacked_strides))
            plan.check_size(args[good[0]].device)
            stacked, base = plan.allocate(args[good[0]])
            item = _DTYPE_SIZES[first.dtype]
            for k, i in enumerate(good):
                inputs[k] = _capi.Tensor(args[i].ptr, args[i].desc())
                outputs[k] = _capi.Tensor(base + k * step * item, first)
        else:
            for k, i in enumerate(good):
                plan = OutputPlan(descs[i])
                outs[i], ptr = plan.allocate(args[i])
                inputs[k] = _capi.Tensor(args[i].ptr, args[i].desc())
                outputs[k] = _capi.Tensor(ptr, descs[i])
        options = _capi.Options()
        _capi.lib.toroid_options_init(ctypes.byref(options))
        options.engine = engine.encode()
        options.threads = threads
        status = (ctypes.c_int32 * max(n, 1))()
        size = 256
        messages = ctypes.create_string_buffer(size * max(n, 1))
        if handles is not None:
            # A pipeline per image: images of one structure still share kernels and launches.
            pipes = (_capi._P * max(n, 1))(*[handles[i]._handle for i in good])
            stream = _current_stream(args[cuda[0]].device_index) if cuda else None
            call = (_capi.lib.toroid_run_batch_each, pipes, inputs, outputs, n, ctypes.byref(options), status,
                    messages, size, stream)
        elif cuda:
            # CUDA images: one launch per kernel for each group of images sharing compiled
            # kernels, on torch's current stream (where the results were allocated).
            stream = _current_stream(args[cuda[0]].device_index)
            call = (_capi.lib.toroid_run_batch_on_stream, self._handle, inputs, outputs, n, ctypes.byref(options),
                    status, messages, size, stream)
        else:
            call = (_capi.lib.toroid_run_batch, self._handle, inputs, outputs, n, ctypes.byref(options), status,
                    messages, size)
        if cold:  # a new structure: prepared on a worker thread, so that Ctrl-C interrupts it
            # Each image's status says how it went: the call's own is not an error here.
            _capi.interruptible(lambda: call[0](*call[1:]) and _capi.OK, keep=(self, handles, call, args, stacked, outs))
            for k in cold:
                prepared(k)
        else:
            call[0](*call[1:])
        for k, i in enumerate(good):
            if status[k] != _capi.OK:
                failed[i] = messages.raw[k * size:(k + 1) * size].split(b"\0", 1)[0].decode("utf-8", "replace")
                codes[i] = status[k]
                outs[i] = None
        if failed and errors != "skip":
            i = min(failed)
            _capi.raise_status(codes.get(i, _capi.INVALID_ARGUMENT), failed[i])
        result = stacked if stacked is not None else outs
        return (result, failed) if errors == "skip" else result

    def _run_batch_cuda(self, args, descs, failed, engine, threads, errors, handles=None):
        # A library without toroid_run_batch_on_stream, or images on several GPUs: each image
        # runs one launch sequence on its device's current stream; results of one shape on one
        # device are stacked there.
        t = _torch_module()
        outs = [None] * len(args)
        for i, a in enumerate(args):
            if a is None:
                continue
            try:
                outs[i] = (self if handles is None else handles[i]).function(a, engine, threads).run(a)
            except Error as e:
                if errors != "skip":
                    raise type(e)("image %d: %s" % (i, e), e.status)
                failed[i] = "image %d: %s" % (i, e)
        done = [o for o in outs if o is not None]
        result = outs
        if done and not failed and len({(tuple(o.shape), o.dtype, str(o.device)) for o in done}) == 1:
            result = t.stack(done) if done[0].dim() < 4 else t.cat(done)
        return (result, failed) if errors == "skip" else result


# Pipelines of the op functions (toroid.interpolate and friends), by their JSON and grids.
_op_pipelines = collections.OrderedDict()
_op_lock = threading.Lock()
_MAX_OP_PIPELINES = 256


# Tags of _freeze: objects no user value equals, so that a frozen list, dict, bool or float
# never equals a frozen value of another kind (True == 1 == 1.0 in Python, not in JSON).
_LIST, _DICT, _BOOL, _FLOAT = object(), object(), object(), object()


def _freeze(v, depth=0):
    """A hashable value equal for two JSON values exactly when their JSON texts are equal
    (dict keys in any order); None when `v` holds anything else (arrays, NumPy scalars...)."""
    t = type(v)
    if t is str or t is int or v is None:
        return v
    if t is bool:
        return (_BOOL, v)
    if t is float:
        return (_FLOAT, repr(v))  # 0.0 and -0.0 differ, as in JSON
    if depth >= MAX_NESTING:
        raise Error("op values nest lists or dicts more than %d deep" % MAX_NESTING)
    if t is list or t is tuple:
        out = [_LIST]
        for e in v:
            f = _freeze(e, depth + 1)
            if f is None and e is not None:
                return None
            out.append(f)
        return tuple(out)
    if t is dict:
        out = [_DICT]
        for k in sorted(v) if all(type(k) is str for k in v) else ():
            f = _freeze(v[k], depth + 1)
            if f is None and v[k] is not None:
                return None
            out.append((k, f))
        if len(out) != len(v) + 1:
            return None
        return tuple(out)
    return None


def _op_key(ops):
    """The cache key of a list of op dicts: frozen values (no JSON printed) for plain ops;
    JSON text with the grid's digest where an op holds an array or another kind of value."""
    parts = []
    for op in ops:
        g = op.get("grid") if op.get("op") == "grid_sample" else None
        if g is not None and not isinstance(g, str):
            ga = _grid_array(g)
            h = hashlib.sha256(np.ascontiguousarray(ga).tobytes()).hexdigest()
            op = dict(op, grid="<array %s %s>" % (ga.shape, h))
            check_nesting(op, "op")
            parts.append(json.dumps(op, sort_keys=True, default=str))
            continue
        f = _freeze(op)
        if f is None:
            check_nesting(op, "op")
            try:
                f = json.dumps(op, sort_keys=True, default=str)
            except (TypeError, ValueError) as e:  # keys of mixed types
                raise Error("op is not JSON-serializable: %s" % e)
        parts.append(f)
    return tuple(parts)


def cached_pipeline(ops, key=None, eager_fast=False):
    """A PipelineHandle for `ops` (list of dicts, grids as arrays), shared by every call with
    the same ops (`key`: their _op_key, when the caller has it). Its fast path fills on an
    input kind's second call, or its first with eager_fast (PipelineHandle)."""
    if key is None:
        key = _op_key(ops)
    # A hit takes no lock: OrderedDict's get and move_to_end are single C calls under the GIL;
    # an entry evicted between them is simply not moved.
    p = _op_pipelines.get(key)
    if p is not None:
        try:
            _op_pipelines.move_to_end(key)
        except KeyError:
            pass
        return p
    p = PipelineHandle(ops, checked=True, eager_fast=eager_fast)  # _op_key walked them
    with _op_lock:
        _op_pipelines[key] = p
        while len(_op_pipelines) > _MAX_OP_PIPELINES:
            _op_pipelines.popitem(last=False)
    return p


# Op lists run once without a handle (run_ops): a second call with one of them makes its
# handle. Cleared when it grows past _MAX_RAN_ONCE.
_ran_once = set()
_MAX_RAN_ONCE = 4096


def run_ops(ops, x, key=None):
    """Runs the op list `ops` on `x` as the op functions and transforms do. Ops run before
    come from their cached handle (its fast path from their next call on). A new op list (a
    random transform's draws make one for almost every call) on a plain CPU array or tensor,
    whose program structure is prepared in this process, runs once: the program bound to its
    values and run, nothing kept (no handle, function or runner is made for one call); its
    second call makes the handle, whose fast path fills at once. `key`: the ops' _op_key,
    when the caller has it."""
    if key is None:
        key = _op_key(ops)
    p = _op_pipelines.get(key)
    if p is None:
        if key not in _ran_once:
            y = _run_once(ops, x)
            if y is not None:
                if len(_ran_once) >= _MAX_RAN_ONCE:
                    _ran_once.clear()
                _ran_once.add(key)
                return y
        p = cached_pipeline(ops, key, eager_fast=True)  # the op list's second call
    else:
        try:
            _op_pipelines.move_to_end(key)
        except KeyError:
            pass
    return p(x)


def cached_handle(ops, key=None):
    """The cached handle of `ops` when there is one (run_ops made it), else None."""
    return _op_pipelines.get(_op_key(ops) if key is None else key)


def _run_once(ops, x):
    """run_ops' one-call path; None where it does not apply (not a plain NumPy array or CPU
    torch tensor, a grid array, or a structure not yet prepared: the handle's path compiles
    it where Ctrl-C interrupts, and marks it prepared)."""
    tx = type(x)
    if not (tx is _ndarray or (_torch is not None and tx is _torch.Tensor and x.device.type == "cpu")):
        return None
    try:
        text, grids = PipelineHandle._parse(ops, checked=True)
        if grids:
            return None
        text = text.encode("utf-8", "surrogatepass")
        engine = _settings["engine"]
        arg = adapt(x)
        if _structure_key(text.translate(None, _NUMBER_BYTES), engine, arg) not in _warm:
            return None
        lib = _capi.lib
        pipeline, handle = ctypes.c_void_p(), ctypes.c_void_p()
        _capi.check(lib.toroid_pipeline_from_json(text, None, ctypes.byref(pipeline)))
        try:
            desc = arg.desc()
            options = _compile_options(check_engine(engine), effective_threads(None))
            _capi.check(lib.toroid_compile(pipeline, ctypes.byref(desc), ctypes.byref(options),
                                           ctypes.byref(handle)))
        finally:
            lib.toroid_pipeline_free(pipeline)  # the function keeps what it needs
        fn = Function(handle, desc)  # owns the handle: freed with it, on return
        return fn.run(arg)
    except Exception as e:  # noqa: BLE001 - every failure a toroid.Error
        err = as_error(e)
    raise err


def nth(results, j, like):
    """The j-th image's result of run_batch (a stacked array, or a list), of the rank of its
    input `like` (4-D inputs were concatenated along N: each of like.shape[0] images)."""
    if isinstance(results, list):
        return results[j]
    if len(like.shape) == 4:
        n = like.shape[0]
        return results[j * n:(j + 1) * n]
    return results[j]


def merge_failed(out, ran, bad, n, xs):
    """(results, failed) for all n images of a call, from the run of the images `ran` (their
    result `out`, run_batch's (results, failed)) and the images `bad` ({index: message})
    that failed before it (files that did not decode)."""
    results, failed = out
    merged = [None] * n
    for k, i in enumerate(ran):
        if k not in failed:
            merged[i] = nth(results, k, xs[k])
    failures = dict(bad)
    for k, message in failed.items():
        failures[ran[k]] = message
    return merged, failures
