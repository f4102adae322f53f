"""ctypes bindings of toroid's C API (include/toroid/toroid.h): finds and loads
libtoroid_c.so, declares its structs and functions, and turns every failing status into
toroid.Error carrying the library's message."""

import atexit
import ctypes
import functools
import os
import queue
import reprlib
import threading
import time

__all__ = ["Error", "InvalidTypeError", "OutOfMemoryError", "lib", "check", "TensorDesc", "Tensor", "Options",
           "FileOptions", "CacheCounts", "library_path",
           "UINT8", "FLOAT32", "FLOAT16", "BFLOAT16", "FLOAT64", "UINT16", "CPU", "CUDA"]


class Error(ValueError):
    """A toroid failure: bad pipeline, bad tensor, unsupported dtype or device... The
    message is toroid's own one-line description. Every error the Python API raises is one
    (KeyboardInterrupt aside); it is a ValueError, and the subclasses below are also the
    built-in exception of their kind, so `except ValueError` / `except TypeError` /
    `except MemoryError` keep catching what they caught before."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class InvalidTypeError(Error, TypeError):
    """An argument of the wrong kind (Pipeline(None), a string where a number goes...)."""


class OutOfMemoryError(Error, MemoryError):
    """A result larger than the machine's memory (refused before allocating it), or an
    allocation that failed."""


class Passthrough(Exception):
    """Carries an exception of the caller's own code (a callable in a Compose, a traced
    function) through toroid's frames: public() raises the original, unchanged."""

    def __init__(self, exc):
        super().__init__(exc)
        self.exc = exc


def public(what):
    """Decorates a public entry point: any exception other than a toroid.Error (a bad
    argument that slipped past the checks, a failing allocation) becomes one, prefixed with
    `what`; KeyboardInterrupt and the like pass."""
    def decorate(fn):
        @functools.wraps(fn)
        def entry(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - every failure a toroid.Error
                err = as_error(e, what)
            raise err  # outside the handler: the caller's own exception keeps its context
        return entry
    return decorate


_repr = reprlib.Repr()
_repr.maxlevel, _repr.maxstring, _repr.maxother = 3, 60, 60


def show(v):
    """repr(v) for an error message: short, and safe on deeply nested or odd values."""
    try:
        return _repr.repr(v)
    except Exception:  # noqa: BLE001 - a value whose repr fails
        return "<%s>" % type(v).__name__


def as_error(e, what=None):
    """`e` as a toroid.Error: itself when it is one; else a new Error of the kind that fits
    (InvalidTypeError for a TypeError, OutOfMemoryError for a MemoryError) with `e` as its
    cause and message, prefixed with `what`."""
    if isinstance(e, Error):
        return e
    if isinstance(e, Passthrough):
        return e.exc
    if isinstance(e, RecursionError):
        message = "nested too deeply"
    else:
        message = str(e) or type(e).__name__
    if what:
        message = "%s: %s" % (what, message)
    cls = InvalidTypeError if isinstance(e, TypeError) else OutOfMemoryError if isinstance(e, MemoryError) else Error
    out = cls(message)
    out.__cause__ = e
    out.__suppress_context__ = True
    return out


# Status codes, dtypes and devices: the values of toroid.h, fixed forever.
OK, INVALID_ARGUMENT, UNSUPPORTED, OUT_OF_MEMORY, INTERNAL = 0, 1, 2, 3, 4
UINT8, FLOAT32, FLOAT16, BFLOAT16, FLOAT64, UINT16 = 0, 1, 2, 3, 4, 5
CPU, CUDA = 0, 1
MAX_DIMS = 4
ABI_VERSION = 1
_LIBRARY_NAME = "libtoroid_c.so"


class TensorDesc(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int32), ("device", ctypes.c_int32), ("device_index", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("shape", ctypes.c_int64 * MAX_DIMS),
                ("strides", ctypes.c_int64 * MAX_DIMS)]

    def dims(self):
        n = self.ndim
        return tuple(self.shape[:n]), tuple(self.strides[:n])


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("desc", TensorDesc)]


class Options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("threads", ctypes.c_int32), ("engine", ctypes.c_char_p),
                ("debug_dir", ctypes.c_char_p)]


class CacheCounts(ctypes.Structure):
    """toroid_cache_counts: what the compiling engines' caches did since the process started."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("prepares", ctypes.c_int64), ("compiles", ctypes.c_int64),
                ("disk_hits", ctypes.c_int64), ("memory_hits", ctypes.c_int64), ("binds", ctypes.c_int64),
                ("prebuilt_hits", ctypes.c_int64), ("background_compiles", ctypes.c_int64)]


class FileOptions(ctypes.Structure):
    """toroid_file_options: how toroid_process_file decodes, runs and encodes one file."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("threads", ctypes.c_int32), ("jpeg_quality", ctypes.c_int32),
                ("format", ctypes.c_char_p), ("engine", ctypes.c_char_p), ("mode", ctypes.c_char_p),
                ("apply_exif_orientation", ctypes.c_int32), ("draft", ctypes.c_int32)]


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("TOROID_LIBRARY")
    if env:
        # A folder or the library itself.
        return [os.path.join(env, _LIBRARY_NAME) if os.path.isdir(env) else env]
    return [
        os.path.join(here, _LIBRARY_NAME),  # installed: beside the package
        os.path.join(here, "..", "build", _LIBRARY_NAME),  # python/build/
        os.path.join(here, "..", "..", "build", _LIBRARY_NAME),  # the source tree's build/
    ]


def _load():
    tried = []
    for path in _candidates():
        path = os.path.normpath(path)
        if not os.path.exists(path):
            tried.append(path)
            continue
        return ctypes.CDLL(path), path
    raise ImportError("toroid: cannot find %s (looked at %s); build it with "
                      "`cmake --build build` or set TOROID_LIBRARY to its path" % (_LIBRARY_NAME, ", ".join(tried)))


lib, library_path = _load()

_P = ctypes.c_void_p
_status = ctypes.c_int


def _declare(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


_declare("toroid_last_error", ctypes.c_char_p)
_declare("toroid_status_name", ctypes.c_char_p, ctypes.c_int)
_declare("toroid_version", ctypes.c_char_p)
_declare("toroid_abi_version", ctypes.c_int)
_declare("toroid_pipeline_from_json", _status, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_P))
_declare("toroid_pipeline_set_grid", _status, _P, ctypes.c_size_t, ctypes.POINTER(Tensor))
_declare("toroid_pipeline_num_ops", _status, _P, ctypes.POINTER(ctypes.c_size_t))
_declare("toroid_pipeline_to_json", _status, _P, ctypes.POINTER(ctypes.c_char_p))
_declare("toroid_pipeline_free", None, _P)
_declare("toroid_options_init", None, ctypes.POINTER(Options))
_declare("toroid_compile", _status, _P, ctypes.POINTER(TensorDesc), ctypes.POINTER(Options), ctypes.POINTER(_P))
_declare("toroid_function_input_desc", _status, _P, ctypes.POINTER(TensorDesc))
_declare("toroid_function_output_desc", _status, _P, ctypes.POINTER(TensorDesc))
_declare("toroid_function_explain", _status, _P, ctypes.POINTER(ctypes.c_char_p))
_declare("toroid_run", _status, _P, ctypes.POINTER(Tensor), ctypes.POINTER(Tensor))
_declare("toroid_run_on_stream", _status, _P, ctypes.POINTER(Tensor), ctypes.POINTER(Tensor), ctypes.c_void_p)
_declare("toroid_function_free", None, _P)
_declare("toroid_output_desc", _status, _P, ctypes.POINTER(TensorDesc), ctypes.POINTER(TensorDesc))
_declare("toroid_run_batch", _status, _P, ctypes.POINTER(Tensor), ctypes.POINTER(Tensor), ctypes.c_size_t,
         ctypes.POINTER(Options), ctypes.POINTER(ctypes.c_int32), ctypes.c_char_p, ctypes.c_size_t)

# The pointer-only run and the cache counters came later too; the package falls back to
# toroid_run (and cache_stats raises) on a library without them.
has_run_data = hasattr(lib, "toroid_run_data")
if has_run_data:
    _declare("toroid_run_data", _status, _P, _P, _P)
has_run_data_on_stream = hasattr(lib, "toroid_run_data_on_stream")
if has_run_data_on_stream:
    _declare("toroid_run_data_on_stream", _status, _P, _P, _P, _P)
has_run_batch_on_stream = hasattr(lib, "toroid_run_batch_on_stream")
if has_run_batch_on_stream:
    _declare("toroid_run_batch_on_stream", _status, _P, ctypes.POINTER(Tensor), ctypes.POINTER(Tensor),
             ctypes.c_size_t, ctypes.POINTER(Options), ctypes.POINTER(ctypes.c_int32), ctypes.c_char_p,
             ctypes.c_size_t, _P)
has_dlpack = hasattr(lib, "toroid_tensor_from_dlpack")
if has_dlpack:
    _declare("toroid_tensor_from_dlpack", _status, _P, ctypes.POINTER(Tensor))
has_cache_stats = hasattr(lib, "toroid_cache_stats")
if has_cache_stats:
    _declare("toroid_cache_stats", _status, ctypes.POINTER(CacheCounts))
has_background_builds = hasattr(lib, "toroid_wait_for_background_builds")
if has_background_builds:
    _declare("toroid_wait_for_background_builds", _status)
# toroid_interrupt(): makes the prepares in flight fail ("interrupted"); the package calls it
# when Ctrl-C abandons a prepare and at exit. A library without it lets them finish.
has_interrupt = hasattr(lib, "toroid_interrupt")
if has_interrupt:
    _declare("toroid_interrupt", None)
# A pipeline per image in one batched call (toroid.transforms' per_sample).
has_run_batch_each = hasattr(lib, "toroid_run_batch_each")
if has_run_batch_each:
    _declare("toroid_run_batch_each", _status, ctypes.POINTER(_P), ctypes.POINTER(Tensor), ctypes.POINTER(Tensor),
             ctypes.c_size_t, ctypes.POINTER(Options), ctypes.POINTER(ctypes.c_int32), ctypes.c_char_p, ctypes.c_size_t,
             _P)

# File processing (decode, run, encode) came later than the rest of the C API; a library
# without it still serves everything else, and has_process_file says which one this is.
has_process_file = hasattr(lib, "toroid_process_file") and hasattr(lib, "toroid_file_options_init")
if has_process_file:
    _declare("toroid_file_options_init", None, ctypes.POINTER(FileOptions))
    _declare("toroid_process_file", _status, _P, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(FileOptions))

# Decoding image bytes (toroid.io.decode_image).
has_decode_image = hasattr(lib, "toroid_decode_image")
if has_decode_image:
    _declare("toroid_decode_image", _status, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int32,
             ctypes.POINTER(_P))
    _declare("toroid_image_tensor", _status, _P, ctypes.POINTER(Tensor))
    _declare("toroid_image_free", None, _P)
has_decode_region = hasattr(lib, "toroid_decode_image_region")
if has_decode_region:
    _declare("toroid_decode_image_region", _status, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int32,
             ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(_P))
    _declare("toroid_image_info", _status, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int32,
             ctypes.POINTER(ctypes.c_int64))
has_decode_into = hasattr(lib, "toroid_decode_image_into") and hasattr(lib, "toroid_read_window")
if has_decode_into:
    _declare("toroid_read_window", _status, ctypes.c_void_p, ctypes.POINTER(TensorDesc), ctypes.POINTER(ctypes.c_int64))
    _declare("toroid_decode_image_into", _status, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int32,
             ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p, ctypes.c_size_t)

has_decode_jpegs_cuda = hasattr(lib, "toroid_decode_jpegs_cuda")
if has_decode_jpegs_cuda:
    _declare("toroid_jpeg_info", _status, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int32,
             ctypes.POINTER(ctypes.c_int64))
    _declare("toroid_decode_jpegs_cuda", _status, ctypes.c_int32, ctypes.c_int64, ctypes.POINTER(ctypes.c_char_p),
             ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_int64), ctypes.c_char_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p),
             ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32), ctypes.c_char_p, ctypes.c_size_t)
    _declare("toroid_jpeg_decoder_cuda", _status, ctypes.c_int32, ctypes.c_char_p, ctypes.c_size_t)

# Grid path policy (toroid_pipeline_from_json_flags) and the decoders' pixel limit.
ALLOW_PATHS = 1
has_pipeline_flags = hasattr(lib, "toroid_pipeline_from_json_flags")
if has_pipeline_flags:
    _declare("toroid_pipeline_from_json_flags", _status, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint32,
             ctypes.POINTER(_P))
has_max_image_pixels = hasattr(lib, "toroid_set_max_image_pixels")
if has_max_image_pixels:
    _declare("toroid_set_max_image_pixels", _status, ctypes.c_int64)

if lib.toroid_abi_version() != ABI_VERSION:
    raise ImportError("toroid: %s has ABI version %d, this package needs %d" %
                      (library_path, lib.toroid_abi_version(), ABI_VERSION))


def raise_status(status, message=None):
    """Raises the toroid.Error of a failing status: OutOfMemoryError for OUT_OF_MEMORY."""
    if not message:
        message = lib.toroid_status_name(status).decode()
    raise (OutOfMemoryError if status == OUT_OF_MEMORY else Error)(message, status)


def check(status):
    """Raises toroid.Error with the library's message unless `status` is OK."""
    if status != OK:
        raise_status(status, lib.toroid_last_error().decode("utf-8", "replace"))


def version():
    return lib.toroid_version().decode()


# ---- calls that Ctrl-C interrupts ------------------------------------------------------------
#
# A ctypes call holds off Python's signal handlers until it returns: Ctrl-C during a prepare
# that compiles for a minute would be seen a minute later. interruptible() runs such a call on
# a worker thread while the main thread waits in short timed waits, so that KeyboardInterrupt
# is raised in the caller at once. The abandoned call goes on in its worker (the library's
# state stays consistent); toroid_interrupt(), where the library has it, makes it fail soon,
# and its result is thrown away by `discard`. Only the main thread can be interrupted, so
# other threads call directly; the main thread pays the hop (tens of microseconds) only on
# calls that may take long, which the callers choose (a cold prepare, not a run).

_main_thread = threading.main_thread()
_idle_workers = []  # queues of the workers waiting for a call
_workers_lock = threading.Lock()
_in_flight = set()  # calls running in a worker: their jobs


class _Job:
    __slots__ = ("fn", "args", "keep", "discard", "done", "lock", "status", "message", "exc", "abandoned",
                 "finished", "__weakref__")

    def __init__(self, fn, args, keep, discard):
        self.fn, self.args, self.keep, self.discard = fn, args, keep, discard
        self.done = threading.Lock()
        self.done.acquire()
        self.lock = threading.Lock()
        self.status, self.message, self.exc = OK, None, None
        self.abandoned = self.finished = False

    def run(self):
        try:
            self.status = self.fn(*self.args)
            if self.status:  # the library's message is per thread: read it on this one
                self.message = lib.toroid_last_error().decode("utf-8", "replace")
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            self.exc = e
        with self.lock:
            self.finished = True
            abandoned = self.abandoned
        if abandoned:
            self.drop()

    def drop(self):
        """The caller is gone: frees what the call made."""
        if self.discard is not None and self.exc is None and not self.status:
            try:
                self.discard()
            except Exception:  # noqa: BLE001 - nobody to tell
                pass
        self.args = self.keep = self.discard = None


def _worker(q):
    while True:
        job = q.get()
        _in_flight.add(job)
        try:
            job.run()
        finally:
            _in_flight.discard(job)
            # Idle again before the caller wakes: its next call finds this worker.
            with _workers_lock:
                _idle_workers.append(q)
            job.done.release()


def _submit(job):
    with _workers_lock:
        q = _idle_workers.pop() if _idle_workers else None
    if q is None:
        q = queue.SimpleQueue()
        # A daemon: the interpreter's exit does not wait for a call left running.
        threading.Thread(target=_worker, args=(q,), name="toroid-prepare", daemon=True).start()
    q.put(job)


def interruptible(fn, *args, keep=None, discard=None):
    """fn(*args) (a C API call returning a status), raising its toroid.Error, so that on the
    main thread KeyboardInterrupt (Ctrl-C) is raised while it runs. `keep`: objects the call
    reads or writes, held until it returns even when abandoned; `discard`: frees what a
    successful call made, when it finishes after its caller was interrupted."""
    if threading.current_thread() is not _main_thread:
        check(fn(*args))
        return
    job = _Job(fn, args, keep, discard)
    try:
        _submit(job)
        while not job.done.acquire(True, 0.05):
            pass
    except BaseException:  # KeyboardInterrupt, or another exception raised by a signal handler
        with job.lock:
            job.abandoned = True
            finished = job.finished
        if finished:
            job.drop()
        elif has_interrupt:
            lib.toroid_interrupt()
        raise
    if job.exc is not None:
        raise job.exc
    if job.status:
        raise_status(job.status, job.message)


def _after_fork_in_child():
    # The workers are the parent's threads: the child starts new ones.
    global _idle_workers, _workers_lock
    _idle_workers = []
    _workers_lock = threading.Lock()
    _in_flight.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _at_exit(grace=1.0):
    # Calls abandoned by Ctrl-C still running in their workers: they are told to stop (an
    # interrupted prepare kills its compiler and leaves within tens of milliseconds), and
    # exit waits for them, `grace` seconds at most. A worker still inside the library while
    # the interpreter and the library's static objects are torn down would be left to race
    # with that teardown.
    if not _in_flight:
        return
    if has_interrupt:
        lib.toroid_interrupt()
    deadline = time.monotonic() + grace
    for job in list(_in_flight):
        left = deadline - time.monotonic()
        if left <= 0 or not job.done.acquire(True, left):
            break
        job.done.release()


atexit.register(_at_exit)


def wait_for_background_builds():
    """Waits until the full builds compiling in the background are loaded. A program seen
    for the first time runs a quick build (the same results) while its full build compiles;
    call this before timing. A library without tiers has nothing to wait for. Ctrl-C stops
    the wait."""
    if has_background_builds:
        interruptible(lib.toroid_wait_for_background_builds)


def cache_stats():
    """The compiling engines' cache counters since the process started, as a dict:
    prepares, compiles, disk_hits, memory_hits, binds, prebuilt_hits, and, from a library
    that counts them, background_compiles (of `compiles`, the full builds compiled in the
    background)."""
    if not has_cache_stats:
        raise Error("%s has no toroid_cache_stats (rebuild the library)" % library_path)
    c = CacheCounts()
    c.struct_size = ctypes.sizeof(CacheCounts)
    c.background_compiles = -1  # left alone by a library that does not know the field
    check(lib.toroid_cache_stats(ctypes.byref(c)))
    out = {name: int(getattr(c, name)) for name, _ in CacheCounts._fields_[1:]}
    if out["background_compiles"] < 0:
        del out["background_compiles"]
    return out
