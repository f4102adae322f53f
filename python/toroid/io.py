"""toroid.io: image files decoded as torchvision.io.decode_image decodes them.

    x = toroid.io.decode_image("photo.jpg", mode="rgb")   # NumPy uint8 (C, H, W)

PNG, JPEG and WebP (told apart by their bytes) and .npy arrays. `mode` converts the channels
as torchvision's ImageReadMode does ("rgb", "gray", "rgb_alpha", "gray_alpha", "unchanged", or
torchvision's enum itself); CMYK JPEGs, palettes, grey and alpha images included (WebP takes
"unchanged", "rgb" and "rgb_alpha", as torchvision's decode_webp honours). The EXIF
orientation is applied unless apply_exif_orientation=False (torchvision applies it only when
asked). The decoders' pixel limit (toroid.batch's --max-pixels, $TOROID_MAX_IMAGE_PIXELS)
refuses decompression bombs before anything is allocated.

    xs = toroid.io.decode_jpeg(list_of_bytes, device="cuda")   # torch uint8 (C, H, W) each

decode_jpeg decodes JPEG files into torch tensors on the CPU or straight into GPU memory:
decode="fast" (the default on CUDA) through nvJPEG (the GPU's hardware JPEG decoder where it
has one), decode="exact" through libjpeg-turbo on CPU threads, uploaded: the pixels of
decode_image, bit for bit.
"""

import ctypes
import os

from . import _capi
from ._capi import Error, InvalidTypeError, public, show

__all__ = ["decode_image", "decode_jpeg", "image_info", "jpeg_decoder", "read_file", "MODES"]

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


# The longest message kept per failed image of a GPU batch.
_ERROR_STRIDE = 512


def _jpeg_inputs(input):
    """(list of bytes, whether one input was given)."""
    if isinstance(input, (list, tuple)):
        return [_bytes_of(x) for x in input], False
    return [_bytes_of(input)], True


def _torch():
    try:
        import torch
    except ImportError:
        raise Error("decode_jpeg returns torch tensors: PyTorch is not importable") from None
    return torch


@public("decode_jpeg")
def decode_jpeg(input, mode="unchanged", device="cpu", apply_exif_orientation=False, decode=None, errors="raise",
                threads=None):
    """Decodes JPEG files into torch uint8 (C, H, W) tensors, as torchvision.io.decode_jpeg:
    `input` is one file (bytes, a path, a 1-D uint8 tensor or array) or a list of them (a list
    of tensors back). On a CUDA `device`:
    - decode="fast" (the default): nvJPEG decodes the batch into GPU memory on the current
      stream: baseline files through the GPU's hardware JPEG decoder (A100, H100, H200) in one
      batch, the others through nvJPEG's CUDA decoder. nvJPEG's IDCT and chroma upsampling are
      its own: pixels differ from libjpeg-turbo's by a few levels (docs/reference.md).
      What nvJPEG cannot decode as asked (CMYK, an EXIF turn to apply) decodes on the CPU.
    - decode="exact": libjpeg-turbo on `threads` CPU threads (default: every core), each
      image uploaded from pinned memory as it is ready: decode_image's pixels, bit for bit.
    On the CPU, decode is always exact. mode: "unchanged", "gray" or "rgb" (torchvision's
    ImageReadMode too). errors="raise" raises toroid.Error naming the first file that failed;
    errors="skip" returns (images, failures): None in images where a file failed and
    failures {index: message}. A corrupt, truncated or over-large file fails alone."""
    torch = _torch()
    datas, single = _jpeg_inputs(input)
    if errors not in ("raise", "skip"):
        raise Error("errors must be 'raise' or 'skip', got %s" % show(errors))
    mode_name = _mode_name(mode)
    dev = torch.device(device)
    if decode is None:
        decode = "fast" if dev.type == "cuda" else "exact"
    if decode not in ("fast", "exact"):
        raise Error("decode must be 'fast' or 'exact', got %s" % show(decode))
    if dev.type not in ("cuda", "cpu"):
        raise Error("decode_jpeg decodes to 'cpu' or 'cuda', got device %s" % show(device))
    infos, failures = _infos(datas, mode_name, apply_exif_orientation)
    images = _decode_jpegs(datas, infos, failures, mode_name, dev, apply_exif_orientation, decode, threads, torch)
    if errors == "raise" and failures:
        i = min(failures)
        raise Error("decode_jpeg: file %d of %d: %s" % (i, len(datas), failures[i]))
    if single:
        return (images[0], failures) if errors == "skip" else images[0]
    return (images, failures) if errors == "skip" else images


def _decode_jpegs(datas, infos, failures, mode, dev, exif, decode, threads, torch):
    """The images of the files whose (C, H, W) `infos` holds (None for the others), decoded
    as decode_jpeg's `decode` says; the files that fail are added to `failures`."""
    if dev.type == "cuda" and decode == "fast":
        return _decode_jpegs_nvjpeg(datas, infos, failures, mode, dev, exif, torch)
    return _decode_jpegs_cpu(datas, infos, failures, mode, dev, exif, torch, threads)


def _decode_started(datas, infos, mode, device, exif, decode, threads=None):
    """decode_jpeg of files whose headers were read (`infos`, as _infos gives them), started
    on a worker thread (the decoders release the GIL), on the caller's current CUDA stream:
    the caller works on while the files decode. Returns a future of (images, failures)."""
    torch = _torch()
    dev = torch.device(device)
    if dev.type == "cuda" and dev.index is None:
        dev = torch.device("cuda", torch.cuda.current_device())
    if decode is None:
        decode = "fast" if dev.type == "cuda" else "exact"
    if decode not in ("fast", "exact"):
        raise Error("decode must be 'fast' or 'exact', got %s" % show(decode))
    stream = torch.cuda.current_stream(dev) if dev.type == "cuda" else None
    infos, failures = list(infos[0]), dict(infos[1])

    def run():
        if stream is None:
            return _decode_jpegs(datas, infos, failures, mode, dev, exif, decode, threads, torch), failures
        with torch.cuda.stream(stream):
            return _decode_jpegs(datas, infos, failures, mode, dev, exif, decode, threads, torch), failures

    global _starter
    if _starter is None:
        from concurrent.futures import ThreadPoolExecutor
        _starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toroid-decode-batch")
    return _starter.submit(run)


_starter = None  # the worker of _decode_started


def _decode_files(items, device, decode, threads=None):
    """`items` with the files' bytes among them decoded as RGB with their EXIF orientation
    (Pipeline.run_batch's files): on a CUDA device the JPEGs as one GPU batch (decode_jpeg's
    `decode`) and the other files on the CPU, copied up in the batch's layout; else on the
    CPU, as NumPy arrays. Returns (items, {index: message} of the files that failed)."""
    items = list(items)
    which = [i for i, x in enumerate(items) if isinstance(x, (bytes, bytearray, memoryview))]
    dev = _files_device(device, decode)
    cuda = dev is not None and dev.type == "cuda"
    bad = {}
    rest = which
    if cuda:
        jpegs = [i for i in which if _is_jpeg(items[i])]
        rest = [i for i in which if not _is_jpeg(items[i])]
        if jpegs:
            images, failures = decode_jpeg([bytes(items[i]) for i in jpegs], mode="rgb", device=dev,
                                           apply_exif_orientation=True, decode=decode, errors="skip", threads=threads)
            for k, i in enumerate(jpegs):
                if k in failures:
                    bad[i] = failures[k]
                else:
                    items[i] = images[k]
    for i in rest:
        try:
            x = decode_image(bytes(items[i]), mode="rgb")
        except Error as e:
            bad[i] = str(e)
            continue
        items[i] = _to_batch(x, dev, decode) if cuda else x
    return items, bad


def _files_device(device, decode):
    """The torch device that files decode to (None: the CPU, as NumPy arrays), with `decode`
    checked against it: "fast" (nvJPEG) needs a CUDA device."""
    dev = None
    if device is not None:
        try:
            dev = _torch().device(device)
        except (RuntimeError, TypeError) as e:
            raise Error("device must be a torch device, got %s (%s)" % (show(device), e)) from None
        if dev.type not in ("cpu", "cuda"):
            raise Error("files decode on 'cpu' or 'cuda', got device %s" % show(device))
    if decode not in (None, "fast", "exact"):
        raise Error("decode must be 'fast' or 'exact', got %s" % show(decode))
    if decode == "fast" and (dev is None or dev.type != "cuda"):
        raise Error("decode='fast' needs a CUDA device: on the CPU, files decode with libjpeg-turbo")
    return dev


def _to_batch(x, dev, decode):
    """An image decoded on the CPU (NumPy or torch), on CUDA device `dev` in the layout of
    the JPEGs a batch decode with `decode` makes there (nvJPEG's planes, libjpeg's rows), so
    that the results stack."""
    torch = _torch()
    x = (torch.from_numpy(x) if not isinstance(x, torch.Tensor) else x).to(dev)
    return x.contiguous() if decode in (None, "fast") else x


def _infos(datas, mode, exif):
    """The (C, H, W) of each whole JPEG file (toroid_jpeg_info), and {index: message} for
    the others."""
    if not _capi.has_decode_jpegs_cuda:
        raise Error("%s has no toroid_jpeg_info: rebuild libtoroid_c" % _capi.library_path)
    infos, failures = [None] * len(datas), {}
    chw = (ctypes.c_int64 * 3)()
    e = 1 if exif else 0
    m = mode.encode()
    for i, data in enumerate(datas):
        if _capi.lib.toroid_jpeg_info(data, len(data), m, e, chw) != _capi.OK:
            failures[i] = _capi.lib.toroid_last_error().decode("utf-8", "replace")
        else:
            infos[i] = (chw[0], chw[1], chw[2])
    return infos, failures


def _offsets(infos):
    """Each image's byte offset in one buffer for the batch (aligned to 256 bytes, as the
    CUDA allocator aligns), and the buffer's size."""
    offsets, total = [None] * len(infos), 0
    for i, chw in enumerate(infos):
        if chw is not None:
            offsets[i] = total
            total += (chw[0] * chw[1] * chw[2] + 255) // 256 * 256
    return offsets, max(total, 1)


_pool = (0, None)  # (workers, executor) of the exact decoder's threads, kept between calls


def _thread_pool(n):
    global _pool
    if _pool[0] != n:
        from concurrent.futures import ThreadPoolExecutor
        _pool = (n, ThreadPoolExecutor(max_workers=n, thread_name_prefix="toroid-decode"))
    return _pool[1]


def _decode_jpegs_cpu(datas, infos, failures, mode, dev, apply_exif_orientation, torch, threads):
    """libjpeg-turbo on CPU threads (ctypes releases the GIL during a decode), each image's
    (H, W, C) rows straight into one buffer for the batch: pinned memory on CUDA, copied up
    in chunks as they are decoded, without blocking the host. The images are (C, H, W) views of their
    rows: channels-last strides, as torchvision's CPU decode gives them."""
    offsets, total = _offsets(infos)
    upload = dev.type == "cuda"
    host = torch.empty(total, dtype=torch.uint8, pin_memory=upload)
    base = host.data_ptr()
    m = mode.encode()
    e = 1 if apply_exif_orientation else 0

    def one(i):
        c, h, w = infos[i]
        if _capi.lib.toroid_decode_image_into(datas[i], len(datas[i]), m, e, None, base + offsets[i],
                                              c * h * w) != _capi.OK:
            failures[i] = _capi.lib.toroid_last_error().decode("utf-8", "replace")

    live = [i for i in range(len(datas)) if infos[i] is not None]
    n = int(threads) if threads is not None else (os.cpu_count() or 1)
    buf = torch.empty(total, dtype=torch.uint8, device=dev) if upload else host
    # On CUDA the images go up in chunks as they are decoded (in order), so that the copies
    # overlap the decoding of the next chunk.
    chunk = max(1, len(live) // 8) if upload else len(live) or 1
    done = 0
    results = map(one, live) if n <= 1 or len(live) <= 1 else _thread_pool(n).map(one, live)
    for k, _ in enumerate(results, 1):
        if upload and (k % chunk == 0 or k == len(live)):
            first, last = live[done], live[k - 1]
            c, h, w = infos[last]
            a, b = offsets[first], offsets[last] + c * h * w
            buf[a:b].copy_(host[a:b], non_blocking=True)
            done = k
    images = [None] * len(datas)
    for i in live:
        if i not in failures:
            c, h, w = infos[i]
            images[i] = buf[offsets[i]:offsets[i] + c * h * w].view(h, w, c).permute(2, 0, 1)
    return images


def _decode_jpegs_nvjpeg(datas, infos, failures, mode, dev, apply_exif_orientation, torch):
    if not _capi.has_decode_jpegs_cuda:
        raise Error("%s has no toroid_decode_jpegs_cuda: rebuild libtoroid_c" % _capi.library_path)
    index = dev.index if dev.index is not None else torch.cuda.current_device()
    dev = torch.device("cuda", index)
    offsets, total = _offsets(infos)
    buf = torch.empty(total, dtype=torch.uint8, device=dev)
    base = buf.data_ptr()
    live = [i for i in range(len(datas)) if infos[i] is not None]
    images = [None] * len(datas)
    if live:
        n = len(live)
        data = (ctypes.c_char_p * n)(*(datas[i] for i in live))
        sizes = (ctypes.c_size_t * n)(*(len(datas[i]) for i in live))
        chw = (ctypes.c_int64 * (3 * n))(*(v for i in live for v in infos[i]))
        outs = (ctypes.c_void_p * n)(*(base + offsets[i] for i in live))
        failed = (ctypes.c_int32 * n)()
        messages = ctypes.create_string_buffer(n * _ERROR_STRIDE)
        stream = torch.cuda.current_stream(dev).cuda_stream
        _capi.check(_capi.lib.toroid_decode_jpegs_cuda(index, n, data, sizes, chw, mode.encode(),
                                                       1 if apply_exif_orientation else 0, outs, stream,
                                                       failed, messages, _ERROR_STRIDE))
        for k, i in enumerate(live):
            if failed[k]:
                text = messages.raw[k * _ERROR_STRIDE:(k + 1) * _ERROR_STRIDE].split(b"\0", 1)[0]
                failures[i] = text.decode("utf-8", "replace")
            else:
                c, h, w = infos[i]
                images[i] = buf[offsets[i]:offsets[i] + c * h * w].view(c, h, w)
    return images


@public("jpeg_decoder")
def jpeg_decoder(device="cuda"):
    """What decode_jpeg(device=...) decodes with on a CUDA device: "nvJPEG 13.0 (hardware
    decoder)" or "nvJPEG 13.0 (CUDA decoder)"; toroid.Error when nvJPEG does not load."""
    torch = _torch()
    dev = torch.device(device)
    index = dev.index if dev.index is not None else torch.cuda.current_device()
    buf = ctypes.create_string_buffer(200)
    _capi.check(_capi.lib.toroid_jpeg_decoder_cuda(index, buf, len(buf)))
    return buf.value.decode()
