#!/usr/bin/env python3
# Writes the small seed corpus under fuzz/corpus/ (valid .npy, PNG, WebP and pipeline files,
# each a few hundred bytes) from the standard library alone, so the seeds are
# reproducible. Run it again only to change the seeds; its output is checked in.
import json
import os
import struct
import zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    folder = os.path.join(ROOT, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---- .npy: magic, version, little-endian header length, padded dict, data ----

def npy(descr, shape, data, fortran=False, major=1):
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape_text)
    len_bytes = 2 if major == 1 else 4
    total = 8 + len_bytes + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    length = struct.pack("<H" if major == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes([major, 0]) + length + header.encode("latin-1") + data



def prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def u8(shape):
    return bytes((i * 37 + 11) % 256 for i in range(prod(shape)))


def f32(shape):
    return b"".join(struct.pack("<f", (i % 17) * 0.25 - 2.0) for i in range(prod(shape)))


put("fuzz_npy", "u8_hw.npy", npy("|u1", (6, 7), u8((6, 7))))
put("fuzz_npy", "u8_chw.npy", npy("|u1", (3, 4, 5), u8((3, 4, 5))))
put("fuzz_npy", "f32_nchw.npy", npy("<f4", (2, 3, 4, 4), f32((2, 3, 4, 4))))
put("fuzz_npy", "f32_fortran.npy", npy("<f4", (3, 4, 5), f32((3, 4, 5)), fortran=True))
put("fuzz_npy", "u8_v2.npy", npy("|u1", (1, 2, 3, 4), u8((1, 2, 3, 4)), major=2))
put("fuzz_npy", "f32_v3_rank1.npy", npy("<f4", (5,), f32((5,)), major=3))
put("fuzz_npy", "u8_empty.npy", npy("|u1", (0, 4), b""))
# Empty, but its other dims multiply to the 2^40 element limit (a regression seed).
put("fuzz_npy", "u8_empty_wide.npy", npy("|u1", (0, 1048576, 1048576), b""))


# ---- PNG: signature, IHDR, optional PLTE / tRNS, one IDAT, IEND ----

def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def png(width, height, bit_depth, color_type, rows, interlace=0, extra=b""):
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, interlace)
    raw = b"".join(b"\x00" + row for row in rows)  # filter type 0 (None) on every row
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b""))


def rows_8bit(width, height, channels):
    return [bytes((x * 29 + y * 53 + c * 71) % 256 for x in range(width) for c in range(channels))
            for y in range(height)]


put("fuzz_png", "gray.png", png(8, 6, 8, 0, rows_8bit(8, 6, 1)))
put("fuzz_png", "gray_alpha.png", png(5, 4, 8, 4, rows_8bit(5, 4, 2)))
put("fuzz_png", "rgb.png", png(6, 5, 8, 2, rows_8bit(6, 5, 3)))
put("fuzz_png", "rgba.png", png(4, 4, 8, 6, rows_8bit(4, 4, 4)))
# 1-bit gray: 9 pixels per row packed into 2 bytes.
put("fuzz_png", "gray_1bit.png", png(9, 3, 1, 0, [bytes([0b10110010, 0b10000000])] * 3))
palette = chunk(b"PLTE", bytes([255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 9, 9]))
trns = chunk(b"tRNS", bytes([255, 128, 0]))
put("fuzz_png", "palette_trns.png", png(4, 3, 8, 3, [bytes([0, 1, 2, 3])] * 3, extra=palette + trns))
put("fuzz_png", "palette_4bit.png", png(5, 2, 4, 3, [bytes([0x01, 0x23, 0x00])] * 2, extra=palette))
# Adam7 interlaced RGB: the passes' rows, each with its filter byte (all passes of 8x8).
passes = [(1, 1), (1, 1), (2, 1), (2, 2), (4, 2), (4, 4), (8, 4)]
interlaced_raw = [bytes((i * 13 + p * 7) % 256 for i in range(w * 3)) for p, (w, h) in enumerate(passes)
                  for _ in range(h)]
put("fuzz_png", "rgb_interlaced.png", png(8, 8, 8, 2, interlaced_raw, interlace=1))
put("fuzz_png", "gray_16bit.png", png(2, 2, 16, 0, [b"\x01\x02\x03\x04"] * 2))


# ---- pipelines: one per op, with the fields each takes ----

pipelines = {
    "resize_size.json": [{"op": "resize", "mode": "bilinear", "size": [4, 6], "antialias": True}],
    "resize_scale.json": [{"op": "resize", "mode": "bicubic", "scale_factor": [0.5, 1.5],
                           "align_corners": True, "recompute_scale_factor": True}],
    "resize_nearest.json": [{"op": "resize", "mode": "nearest-exact", "scale_factor": 2}],
    "affine.json": [{"op": "convert", "dtype": "float32"},
                    {"op": "affine", "theta": [[1.2, 0.3, -0.1], [-0.2, 1.2, 0.05]], "mode": "bicubic",
                     "padding_mode": "reflection", "align_corners": False, "size": [5, 7]}],
    "grid_sample.json": [{"op": "convert", "dtype": "float32", "scale": True},
                         {"op": "grid_sample", "grid": "grid.npy", "mode": "nearest", "padding_mode": "border",
                          "align_corners": True}],
    "grid_bad.json": [{"op": "grid_sample", "grid": "grid_u8.npy"}, {"op": "grid_sample", "grid": "grid_b2.npy"}],
    "flip_crop.json": [{"op": "flip", "dims": [-1, 2]}, {"op": "crop", "top": -2, "left": 3, "height": 5,
                                                          "width": 9}],
    "normalize.json": [{"op": "convert", "dtype": "float32", "scale": True},
                       {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}],
    "pad_erase.json": [{"op": "pad", "padding": [2, -1, 3, 1], "mode": "constant", "fill": [1, 2.5, 300]},
                       {"op": "pad", "padding": [1, 1], "mode": "reflect"},
                       {"op": "pad", "padding": 2, "mode": "symmetric", "fill": 0},
                       {"op": "pad", "padding": [-1, 0, 4, 0], "mode": "edge"},
                       {"op": "erase", "top": -2, "left": 1, "height": 3, "width": 40, "value": [0, 127.5, 255]}],
    "blur.json": [{"op": "gaussian_blur", "kernel_size": [5, 3], "sigma": [0.7, 1.9], "lanes": 8},
                  {"op": "gaussian_blur", "kernel_size": 3}, {"op": "adjust_sharpness", "factor": 1.8}],
    "empty.json": [],
}
for name, p in pipelines.items():
    put("fuzz_pipeline_json", name, json.dumps(p))

# Long chains, written compactly to stay a few KB: the parse, canonical JSON and shape
# inference must stay linear in the length.
def compact(p):
    return json.dumps(p, separators=(",", ":"))


put("fuzz_pipeline_json", "chain_flip_300.json",
    compact([{"op": "flip", "dims": [(-1, -2, 1)[i % 3]]} for i in range(300)]))
put("fuzz_pipeline_json", "chain_crop_120.json",
    compact([{"op": "crop", "top": i % 3 - 1, "left": i % 5 - 2, "height": 6 + i % 3, "width": 8 + i % 2}
             for i in range(120)]))
put("fuzz_pipeline_json", "chain_affine_tv_40.json",
    compact([{"op": "affine", "theta": [[1, 0, i % 3 - 1], [0, 1, 0]], "mode": "nearest", "convention": "torchvision"}
             for i in range(40)]))
put("fuzz_pipeline_json", "chain_affine_40.json",
    compact([{"op": "convert", "dtype": "float32"}]
            + [{"op": "affine", "theta": [[1.1, 0.1, 0], [-0.1, 0.9, 0.05]]} for _ in range(40)]))

# Grid paths: in the folder (a subfolder, `..` that stays inside, a symlink inside), and
# paths the policy refuses before opening anything (absolute, `..` out, /dev/zero, a
# symlink out of the folder or to /dev/zero); the FIFO is refused by its type. The harness
# creates these files in its scratch folder (fuzz_pipeline_json.cpp, write_grids).
grid_paths = {
    "grid_local_paths.json": ["sub/grid.npy", "sub/../grid.npy", "./link_in.npy"],
    "grid_absolute.json": ["/dev/zero"],
    "grid_dotdot.json": ["../grid.npy"],
    "grid_dotdot_deep.json": ["sub/../../../../../dev/zero"],
    "grid_fifo.json": ["fifo.npy"],
    "grid_symlink_zero.json": ["link_zero.npy"],
    "grid_symlink_out.json": ["link_out/passwd"],
    "grid_symlink_up.json": ["link_up/grid.npy"],
}
for name, paths in grid_paths.items():
    put("fuzz_pipeline_json", name,
        json.dumps([{"op": "convert", "dtype": "float32"}] + [{"op": "grid_sample", "grid": g} for g in paths]))

# ---- WebP: small lossy and lossless files, through Pillow's libwebp (the only seeds not
# made from the standard library; skipped where Pillow has no WebP) ----
try:
    import io as _io
    from PIL import Image, features
    if features.check("webp"):
        def webp(mode, size, **save):
            img = Image.new(mode, size)
            img.putdata([tuple((x * 37 + y * 11 + k * 70) % 256 for k in range(len(mode)))
                         for y in range(size[1]) for x in range(size[0])])
            buf = _io.BytesIO()
            img.save(buf, "WEBP", **save)
            return buf.getvalue()
        put("fuzz_webp", "rgb_lossy.webp", webp("RGB", (12, 9), quality=70))
        put("fuzz_webp", "rgba_lossy.webp", webp("RGBA", (7, 5), quality=50))
        put("fuzz_webp", "rgb_lossless.webp", webp("RGB", (6, 6), lossless=True))
        put("fuzz_webp", "rgba_lossless.webp", webp("RGBA", (9, 4), lossless=True))
except ImportError:
    pass
