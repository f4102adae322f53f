"""ctypes bindings of toroid's C API (include/toroid/toroid.h): finds and loads
libtoroid_c.so, declares its structs and functions, and turns every failing status into
toroid.Error carrying the library's message."""

import ctypes
import os

__all__ = ["Error", "lib", "check", "TensorDesc", "Tensor", "Options", "FileOptions", "CacheCounts", "library_path",
           "UINT8", "FLOAT32", "FLOAT16", "BFLOAT16", "FLOAT64", "CPU", "CUDA"]


class Error(ValueError):
    """A toroid failure: bad pipeline, bad tensor, unsupported dtype or device... The
    message is toroid's own one-line description."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


# Status codes, dtypes and devices: the values of toroid.h, fixed forever.
OK, INVALID_ARGUMENT, UNSUPPORTED, OUT_OF_MEMORY, INTERNAL = 0, 1, 2, 3, 4
UINT8, FLOAT32, FLOAT16, BFLOAT16, FLOAT64 = 0, 1, 2, 3, 4
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
                ("prebuilt_hits", ctypes.c_int64)]


class FileOptions(ctypes.Structure):
    """toroid_file_options: how toroid_process_file decodes, runs and encodes one file."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("threads", ctypes.c_int32), ("jpeg_quality", ctypes.c_int32),
                ("format", ctypes.c_char_p), ("engine", ctypes.c_char_p)]


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

# File processing (decode, run, encode) came later than the rest of the C API; a library
# without it still serves everything else, and has_process_file says which one this is.
has_process_file = hasattr(lib, "toroid_process_file") and hasattr(lib, "toroid_file_options_init")
if has_process_file:
    _declare("toroid_file_options_init", None, ctypes.POINTER(FileOptions))
    _declare("toroid_process_file", _status, _P, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(FileOptions))

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


def check(status):
    """Raises toroid.Error with the library's message unless `status` is OK."""
    if status != OK:
        message = lib.toroid_last_error().decode("utf-8", "replace")
        if not message:
            message = lib.toroid_status_name(status).decode()
        raise Error(message, status)


def version():
    return lib.toroid_version().decode()


def wait_for_background_builds():
    """Waits until the full builds compiling in the background are loaded. A program seen
    for the first time runs a quick build (the same results) while its full build compiles;
    call this before timing. A library without tiers has nothing to wait for."""
    if has_background_builds:
        check(lib.toroid_wait_for_background_builds())


def cache_stats():
    """The compiling engines' cache counters since the process started, as a dict."""
    if not has_cache_stats:
        raise Error("%s has no toroid_cache_stats (rebuild the library)" % library_path)
    c = CacheCounts()
    c.struct_size = ctypes.sizeof(CacheCounts)
    check(lib.toroid_cache_stats(ctypes.byref(c)))
    return {name: int(getattr(c, name)) for name, _ in CacheCounts._fields_[1:]}
