"""toroid.io: image files decoded as torchvision.io.decode_image decodes them.

    x = toroid.io.decode_image("photo.jpg", mode="rgb")   # NumPy uint8 (C, H, W)

PNG, JPEG and WebP (told apart by their bytes) and .npy arrays. `mode` converts the channels
as torchvision's ImageReadMode does ("rgb", "gray", "rgb_alpha", "gray_alpha", "unchanged", or
torchvision's enum itself); CMYK JPEGs, palettes, grey and alpha images included (WebP takes
"unchanged", "rgb" and "rgb_alpha", as torchvision's decode_webp honours). The EXIF
orientation is applied unless apply_exif_orientation=False (torchvision applies it only when
asked). The decoders' pixel limit (toroid.batch's --max-pixels, $TOROID_MAX_IMAGE_PIXELS)
refuses decompression bombs before anything is allocated.
"""

import ctypes
import os

from . import _capi
from ._capi import Error, InvalidTypeError, public, show

__all__ = ["decode_image", "image_info", "read_file", "MODES"]

MODES = ("unchanged", "gray", "gray_alpha", "rgb", "rgb_alpha")

# The largest file read_file reads (toroid's own limit for image files is the pixel limit's
# byte equivalent; this only keeps a mistaken path to a huge file from filling memory).
_MAX_FILE_BYTES = 1 << 30


def _mode_name(mode):
    if mode is None:
        return "unchanged"
    name = getattr(mode, "name", mode)  # torchvision.io.ImageReadMode.RGB -> "RGB"
    if not isinstance(name, str):
        raise InvalidTypeError("mode must be a string or torchvision's ImageReadMode, got %s" % show(mode))
    return name.lower()


def read_file(path):
    """The bytes of a regular file (torchvision.io.read_file's role), as bytes."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            import stat
            if not stat.S_ISREG(st.st_mode):
                raise Error("cannot read '%s': not a regular file" % path)
            if st.st_size > _MAX_FILE_BYTES:
                raise Error("cannot read '%s': %d bytes is more than toroid reads (%d)" %
                            (path, st.st_size, _MAX_FILE_BYTES))
            return f.read()
    except OSError as e:
        raise Error("cannot read '%s': %s" % (path, e.strerror or e)) from None


def _bytes_of(input):
    import numpy as np
    if isinstance(input, (str, os.PathLike)):
        return read_file(input)
    if isinstance(input, (bytes, bytearray, memoryview)):
        return bytes(input)
    if hasattr(input, "__array__") or type(input).__module__.startswith("torch"):
        arr = np.asarray(input.cpu() if hasattr(input, "cpu") else input)
        if arr.dtype != np.uint8 or arr.ndim != 1:
            raise Error("decode_image takes the file's bytes as a 1-D uint8 array, got %s of shape %s" %
                        (arr.dtype, arr.shape))
        return arr.tobytes()
    raise InvalidTypeError("decode_image takes a path, bytes or a 1-D uint8 array, got %s" % show(input))


@public("image_info")
def image_info(input, mode="unchanged", apply_exif_orientation=True):
    """(C, H, W) of the image decode_image gives: read from a JPEG's header without decoding
    it (other files are decoded)."""
    data = _bytes_of(input)
    chw = (ctypes.c_int64 * 3)()
    _capi.check(_capi.lib.toroid_image_info(data, len(data), _mode_name(mode).encode(),
                                            1 if apply_exif_orientation else 0, chw))
    return tuple(int(v) for v in chw)


@public("decode_image")
def decode_image(input, mode="unchanged", apply_exif_orientation=True, region=None):
    """Decodes a PNG, JPEG, WebP or .npy image: `input` is a path, bytes, or a 1-D uint8 array
    or tensor of the file's bytes. Returns a NumPy array: uint8 (C, H, W) for PNG, JPEG and WebP
    (uint16 for 16-bit PNGs, as torchvision decodes them) whose memory is the decoder's
    (H, W, C) rows (a channels-last view, as torchvision's decode_image returns; one copy, no
    reordering; np.ascontiguousarray gives C order), the stored array for .npy (rank 2-4 as
    (N, C, H, W) with N = 1 dropped, C order). `region` (top, left, height, width), inside the
    image: only that part, with the pixels of the whole decode; a JPEG (without an EXIF turn
    to apply) then decodes only the rows down to the region's bottom and the columns around
    it."""
    import numpy as np
    if not _capi.has_decode_image:
        raise Error("%s has no toroid_decode_image: rebuild libtoroid_c" % _capi.library_path)
    data = _bytes_of(input)
    image = _capi._P()
    if region is not None:
        if not isinstance(region, (list, tuple)) or len(region) != 4:
            raise InvalidTypeError("region must be (top, left, height, width), got %s" % show(region))
        r = (ctypes.c_int64 * 4)(*(int(v) for v in region))
        _capi.check(_capi.lib.toroid_decode_image_region(data, len(data), _mode_name(mode).encode(),
                                                         1 if apply_exif_orientation else 0, r, ctypes.byref(image)))
    elif _is_jpeg(data) and _capi.has_decode_into:
        return _decode_into(data, _mode_name(mode), apply_exif_orientation)
    else:
        _capi.check(_capi.lib.toroid_decode_image(data, len(data), _mode_name(mode).encode(),
                                                  1 if apply_exif_orientation else 0, ctypes.byref(image)))
    return _image_array(image, np, channels_last=True)


def _is_jpeg(data):
    return data[:2] == b"\xff\xd8"


def _decode_into(data, mode, apply_exif_orientation=True, window=None, chw=None):
    """A JPEG's bytes decoded straight into a new NumPy array (H, W, C), returned as its
    (C, H, W) view. With `window` (top, left, height, width) the array has the whole image's
    size but only the window's pixels (and some around it) are decoded: the others are
    uninitialized, for a program that reads only the window (toroid.transforms' file bytes).
    `chw`: image_info's answer where the caller has it."""
    import numpy as np
    c, h, w = chw if chw is not None else image_info(data, mode, apply_exif_orientation)
    out = np.empty((h, w, c), np.uint8)
    r = None if window is None else (ctypes.c_int64 * 4)(*(int(v) for v in window))
    _capi.check(_capi.lib.toroid_decode_image_into(data, len(data), _mode_name(mode).encode(),
                                                   1 if apply_exif_orientation else 0, r,
                                                   out.ctypes.data, out.nbytes))
    return out.transpose(2, 0, 1)


def _image_array(image, np, channels_last=False):
    try:
        t = _capi.Tensor()
        _capi.check(_capi.lib.toroid_image_tensor(image, ctypes.byref(t)))
        shape, strides = t.desc.dims()
        from . import _core
        dtype = np.dtype(_core._DTYPE_NAMES[t.desc.dtype])
        item = np.dtype(dtype).itemsize
        count = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
        buf = (ctypes.c_char * (count * item)).from_address(t.data)
        view = np.lib.stride_tricks.as_strided(np.frombuffer(buf, dtype=dtype), shape=shape,
                                               strides=tuple(s * item for s in strides))
        if channels_last and strides[1] == 1:  # dense (1, C, H, W) channels-last: copy as NHWC
            out = np.array(view.transpose(0, 2, 3, 1), copy=True, order="C").transpose(0, 3, 1, 2)
        else:
            out = np.array(view, copy=True, order="C")  # the decoded buffer is freed below
    finally:
        _capi.lib.toroid_image_free(image)
    return out[0] if out.shape[0] == 1 else out
