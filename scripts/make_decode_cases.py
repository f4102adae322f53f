#!/usr/bin/env python3
"""Makes the decode cases in tests/data/decode: image files of every mode a decoder meets
(grey, grey+alpha, RGB, RGBA, palettes with and without transparency, 1-bit grey, CMYK
JPEGs, EXIF orientations 1-8 in JPEG and PNG), written with Pillow, and what
torchvision.io.decode_image gives for each with each mode (apply_exif_orientation=True),
the results toroid's decoders are checked against (tests/io/decode_conformance_test.cpp).

    python3 scripts/make_decode_cases.py [--out tests/data/decode]

Run where torchvision 0.26 is installed (the GPU machine). `cases.json` lists
{file, mode, expected} per case, or {file, mode, error} where torchvision refuses the
mode, or {file, mode, skipped} where toroid gives the documented other answer.
"""

import argparse
import io
import json
import os
import struct
import sys
import zlib

import numpy as np
from PIL import Image

MODES = ["unchanged", "gray", "gray_alpha", "rgb", "rgb_alpha"]


def pattern(h, w, c, seed):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([(xx * 255 // max(w - 1, 1) + 37 * k + yy * 3) % 256 for k in range(c)], axis=-1)
    noise = rng.integers(0, 40, size=(h, w, c))
    return np.clip(base + noise, 0, 255).astype(np.uint8)


def exif_bytes(orientation):
    e = Image.Exif()
    e[0x0112] = orientation
    return e.tobytes()


def png16(pixels, color_type):
    """A 16-bit PNG of `pixels` (H, W, C) uint16 (Pillow writes 16-bit grey only): IHDR, one
    IDAT of filter-0 rows, IEND."""
    h, w = pixels.shape[:2]

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    raw = b"".join(b"\0" + pixels[y].astype(">u2").tobytes() for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, color_type, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def pattern16(h, w, c, seed):
    rng = np.random.default_rng(seed)
    return (pattern(h, w, c, seed).astype(np.uint16) * 257 + rng.integers(0, 257, size=(h, w, c))).astype(np.uint16)


def files():
    """(name, bytes) of every test file."""
    out = []

    def save(name, img, **kw):
        b = io.BytesIO()
        img.save(b, format="PNG" if name.endswith(".png") else "JPEG", **kw)
        out.append((name, b.getvalue()))

    rgb = Image.fromarray(pattern(21, 34, 3, 1), "RGB")
    save("rgb.jpg", rgb, quality=92)
    save("gray.jpg", Image.fromarray(pattern(19, 26, 1, 2)[..., 0], "L"), quality=90)
    save("cmyk.jpg", Image.fromarray(pattern(17, 30, 4, 3), "CMYK"), quality=93)
    save("rgb_420.jpg", rgb, quality=80, subsampling=2)
    for o in range(1, 9):
        save("exif%d.jpg" % o, Image.fromarray(pattern(13, 22, 3, 10 + o), "RGB"), quality=95, exif=exif_bytes(o))
    save("rgb.png", rgb)
    save("rgba.png", Image.fromarray(pattern(15, 18, 4, 4), "RGBA"))
    save("gray.png", Image.fromarray(pattern(16, 20, 1, 5)[..., 0], "L"))
    save("gray_alpha.png", Image.fromarray(pattern(12, 17, 2, 6), "LA"))
    save("gray_1bit.png", Image.fromarray(pattern(9, 23, 1, 7)[..., 0] > 128).convert("1"))
    pal = rgb.convert("P", palette=Image.Palette.ADAPTIVE, colors=40)
    save("palette.png", pal)
    pal_t = pal.copy()
    pal_t.info["transparency"] = bytes([0, 128, 255] + [200] * 37)
    save("palette_trns.png", pal_t, transparency=pal_t.info["transparency"])
    save("palette_4bit.png", rgb.convert("P", palette=Image.Palette.ADAPTIVE, colors=12), bits=4)
    save("exif6.png", Image.fromarray(pattern(10, 27, 3, 8), "RGB"), exif=exif_bytes(6))
    save("exif5_rgba.png", Image.fromarray(pattern(11, 14, 4, 9), "RGBA"), exif=exif_bytes(5))
    # 16-bit PNGs decode to uint16 (grey, grey+alpha, RGB, RGBA)
    for name, c, color_type in (("gray16.png", 1, 0), ("gray_alpha16.png", 2, 4), ("rgb16.png", 3, 2),
                                ("rgba16.png", 4, 6)):
        out.append((name, png16(pattern16(13 + c, 19 + 2 * c, c, 20 + c), color_type)))
    return out


# Where toroid gives another answer than torchvision, on purpose (docs/reference.md):
# torchvision returns a palette PNG's indices in unchanged mode, gives palettes no alpha in
# the alpha modes, and fills added alpha with 2^depth - 1 of a low-bit grey image (1).
def skipped(name, mode):
    if name.startswith("palette") and mode in ("unchanged", "gray_alpha", "rgb_alpha"):
        return "toroid expands a palette (torchvision returns indices, or no alpha)"
    if name == "gray_1bit.png" and mode in ("gray_alpha", "rgb_alpha"):
        return "toroid's added alpha is opaque (255); torchvision's is 1 for 1-bit grey"
    return None


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(root, "tests", "data", "decode"))
    a = ap.parse_args()
    import torch
    import torchvision
    from torchvision.io import ImageReadMode, decode_image
    os.makedirs(a.out, exist_ok=True)
    cases = []
    for name, data in files():
        with open(os.path.join(a.out, name), "wb") as f:
            f.write(data)
        for mode in MODES:
            case = {"file": name, "mode": mode}
            why = skipped(name, mode)
            if why:
                case["skipped"] = why
                cases.append(case)
                continue
            try:
                t = decode_image(torch.frombuffer(bytearray(data), dtype=torch.uint8),
                                 mode=getattr(ImageReadMode, mode.upper()), apply_exif_orientation=True)
            except Exception as e:  # noqa: BLE001 - torchvision refuses the mode
                case["error"] = str(e).splitlines()[0][:200]
                cases.append(case)
                continue
            exp = "%s.%s.npy" % (name, mode)
            np.save(os.path.join(a.out, exp), t.numpy())
            case["expected"] = exp
            cases.append(case)
    with open(os.path.join(a.out, "cases.json"), "w") as f:
        json.dump({"generator": "torchvision %s, Pillow %s" % (torchvision.__version__, Image.__version__),
                   "cases": cases}, f, indent=1)
    print("wrote %d cases into %s" % (len(cases), a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
