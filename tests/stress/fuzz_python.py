#!/usr/bin/env python3
"""Fuzzes the Python API: random pipelines through toroid.Pipeline(ops)(x).

Each case is a random pipeline from a grammar over every op and field of the JSON schema
(docs/reference.md, "Ops and their fields"): valid values most of the time, else values of
the wrong type or range (NaN, huge numbers, nested lists, strings...); long chains of flips,
crops, center crops, converts and affines (up to --max-chain ops); grid paths that stay in
the pipeline's folder or leave it (absolute, `..`, /dev/zero, a FIFO, a symlink out of the
folder); and random inputs: dtypes, ranks, layouts (channels-last, reversed, zero strides),
empty and huge declared sizes, which must be refused before anything that large is
allocated. The compiled engine runs every case.

Cases run in worker processes (each under an address-space limit), one at a time each, with
a watchdog: a case that takes longer than --timeout seconds is a hang. A toroid.Error
(or a subclass) is a fine outcome of bad input; any other exception, or a worker that dies
(a signal, an abort), is a failure. Hangs and failures are printed with their pipeline and
the command that reruns the case alone. The run uses its own cache folder with a small size
cap (TOROID_CACHE_SIZE, --cache-size) and checks that its entries stay under the cap: at the
end with one entry's slack, sampled every 25 cases with one per worker.

Cases are a function of (--seed, case index): a run is deterministic, and `--only I` reruns
case I. Prints `N passed, M failed` last; exit status 1 if any case failed or hung.

Usage: fuzz_python.py [--cases N] [--seed S] [--workers W] [--timeout SEC] [--max-chain K]
                      [--cache-size SIZE] [--memory-limit MIB] [--time-limit SEC] [--only I] [--verbose] [--keep]
Needs the library (TOROID_LIBRARY, as the Python tests) and NumPy.
"""
import argparse
import json
import os
import random
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- the grammar -------------------------------------------------------------------------

MODES_RESIZE = ["nearest", "nearest-exact", "bilinear", "bicubic"]
MODES_SAMPLE = ["bilinear", "nearest", "bicubic"]
PADDINGS = ["zeros", "border", "reflection"]
DTYPES = ["uint8", "float32"]
# Grid paths, relative to the pipeline's folder (the worker's scratch folder, see
# make_scratch): files in it, and paths that leave it or name what is not a regular file.
GRID_PATHS = ["grid.npy", "grid.npy", "sub/grid.npy", "sub/../grid.npy", "./grid.npy", "grid_u8.npy",
              "grid_last3.npy", "grid_garbage.npy", "missing.npy", "sub", "fifo.npy", "link_in.npy",
              "link_zero.npy", "link_out/passwd", "link_up/x.npy", "../grid.npy", "../../../../dev/zero",
              "sub/../../grid.npy", "/dev/zero", "/dev/null", "/etc/passwd", "/proc/self/mem", "",
              "grid.npy\x00.txt", "\u00e9\u00e8.npy", "x" * 5000]

# Values of every wrong kind, for any field.
JUNK = [None, True, False, 0, -1, 1, 7, 2 ** 31, 2 ** 63, -(2 ** 63), 2 ** 64, 10 ** 30, 1.5, -0.0, 1e308,
        -1e308, 1e-320, float("nan"), float("inf"), float("-inf"), "", "x", "1", "nearest", [], [1], [1, 2, 3],
        [[1, 2], [3, 4]], [None, None], ["a", "b"], {}, {"a": 1}, [[[[[]]]]]]


def junk(r):
    return r.choice(JUNK)


def maybe(r, valid, p_junk=0.025):
    """`valid()` most of the time, else a value of the wrong type or range."""
    return junk(r) if r.random() < p_junk else valid()


def small(r, lo=1, hi=40):
    return r.randint(lo, hi)


def huge(r):
    return r.choice([10 ** 5, 10 ** 6, 2 ** 31 - 1, 2 ** 31, 2 ** 40, 2 ** 62])


def size_value(r):
    if r.random() < 0.06:
        return [huge(r), huge(r)]
    return [small(r), small(r)]


def scale_value(r):
    roll = r.random()
    if roll < 0.05:
        return r.choice([1e6, 1e-9, 0.0, -1.0, 3e4])
    if roll < 0.25:
        return round(r.uniform(0.2, 2.0), 3)
    return [round(r.uniform(0.2, 2.0), 3), round(r.uniform(0.2, 2.0), 3)]


def theta_value(r):
    if r.random() < 0.05:
        return r.choice([[[1, 0, 0]], [[1, 0], [0, 1]], [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
                         [[float("nan"), 0, 0], [0, 1, 0]], [[1e308, 0, 0], [0, 1e308, 0]], "identity"])
    return [[round(r.uniform(-1.5, 1.5), 3) for _ in range(3)] for _ in range(2)]


def fields_resize(r):
    op = {"op": "resize"}
    if r.random() < 0.9:
        op["mode"] = maybe(r, lambda: r.choice(MODES_RESIZE))
    which = r.choice(["size"] * 4 + ["scale_factor"] * 4 + ["smaller_edge"] * 2 + ["max_size", "none", "two"])
    if which in ("size", "two"):
        op["size"] = maybe(r, lambda: size_value(r))
    if which in ("scale_factor", "two"):
        op["scale_factor"] = maybe(r, lambda: scale_value(r))
    if which == "smaller_edge":
        op["smaller_edge"] = maybe(r, lambda: huge(r) if r.random() < 0.05 else small(r))
        if r.random() < 0.4:
            op["max_size"] = maybe(r, lambda: small(r, 1, 60))
    if which == "max_size":
        op["max_size"] = maybe(r, lambda: small(r))
    smooth = op.get("mode") in ("bilinear", "bicubic")
    for f in ("align_corners", "antialias", "recompute_scale_factor"):
        if r.random() < (0.4 if smooth and (f != "recompute_scale_factor" or "scale_factor" in op) else 0.04):
            op[f] = maybe(r, lambda: r.random() < 0.5)
    return op


def fields_affine(r):
    op = {"op": "affine", "theta": maybe(r, lambda: theta_value(r))}
    if r.random() < 0.7:
        op["mode"] = maybe(r, lambda: r.choice(MODES_SAMPLE))
    if r.random() < 0.5:
        op["padding_mode"] = maybe(r, lambda: r.choice(PADDINGS))
    if r.random() < 0.4:
        op["align_corners"] = maybe(r, lambda: r.random() < 0.5)
    if r.random() < 0.3:
        op["size"] = maybe(r, lambda: size_value(r))
    if r.random() < 0.25:
        op["fill"] = maybe(r, lambda: r.choice([0, 127.5, [1, 2, 3], [0.5]]))
    if r.random() < 0.35:
        op["convention"] = maybe(r, lambda: r.choice(["pytorch", "torchvision"]))
        if r.random() < 0.5:
            op["grid_fma"] = maybe(r, lambda: r.random() < 0.5)
        if r.random() < 0.5:
            op["sample_fma"] = maybe(r, lambda: r.random() < 0.5)
    return op


def grid_array(r, np):
    roll = r.random()
    if roll < 0.7:
        shape = (r.choice([1, 1, 2]), small(r, 1, 12), small(r, 1, 12), 2)
        return (np.random.default_rng(r.getrandbits(32)).random(shape, dtype=np.float32) * 2.4 - 1.2)
    if roll < 0.8:
        return np.zeros((1, 3, 3, 2), np.float64)
    if roll < 0.9:
        return np.zeros((1, 3, 3, 3), np.float32)
    return np.zeros((1, 0, 3, 2), np.float32)


def fields_grid_sample(r, np):
    op = {"op": "grid_sample"}
    roll = r.random()
    if roll < 0.55:
        op["grid"] = r.choice(GRID_PATHS)
    elif roll < 0.95:
        op["grid"] = grid_array(r, np)
    else:
        op["grid"] = junk(r)
    if r.random() < 0.6:
        op["mode"] = maybe(r, lambda: r.choice(MODES_SAMPLE))
    if r.random() < 0.5:
        op["padding_mode"] = maybe(r, lambda: r.choice(PADDINGS))
    if r.random() < 0.4:
        op["align_corners"] = maybe(r, lambda: r.random() < 0.5)
    return op


def fields_flip(r):
    return {"op": "flip", "dims": maybe(r, lambda: r.sample([-4, -3, -2, -1, 0, 1, 2, 3], r.randint(0, 3))
                                        if r.random() < 0.9 else [r.choice([-5, 4, 99, -99])])}


def fields_crop(r):
    def v(lo, hi):
        return lambda: huge(r) if r.random() < 0.03 else r.randint(lo, hi)
    return {"op": "crop", "top": maybe(r, v(-8, 20)), "left": maybe(r, v(-8, 20)),
            "height": maybe(r, v(1, 30)), "width": maybe(r, v(1, 30))}


def fields_center_crop(r):
    return {"op": "center_crop", "size": maybe(r, lambda: size_value(r) if r.random() < 0.6 else small(r))}


def fields_convert(r):
    op = {"op": "convert", "dtype": maybe(r, lambda: r.choice(DTYPES + ["float64"] * (r.random() < 0.05)))}
    if r.random() < 0.5:
        op["scale"] = maybe(r, lambda: r.random() < 0.5)
    return op


def fields_normalize(r):
    def v(lo, hi):
        return lambda: (round(r.uniform(lo, hi), 3) if r.random() < 0.3
                        else [round(r.uniform(lo, hi), 3) for _ in range(r.choice([1, 3, 3, 4, 2]))])
    return {"op": "normalize", "mean": maybe(r, v(-1, 1)), "std": maybe(r, v(0.05, 2) if r.random() < 0.95
                                                                          else lambda: r.choice([0, [0, 1, 1]]))}


def fields_pad(r):
    def side():
        return huge(r) if r.random() < 0.03 else r.randint(-6, 12)
    op = {"op": "pad", "padding": maybe(r, lambda: r.choice([side(), [side()], [side(), side()],
                                                              [side(), side(), side(), side()], [1, 2, 3]]))}
    if r.random() < 0.7:
        op["mode"] = maybe(r, lambda: r.choice(["constant", "edge", "reflect", "symmetric", "wrap"]))
    if r.random() < 0.5:
        op["fill"] = maybe(r, lambda: r.choice([0, 127.5, 255, 300, -1, [1, 2, 3], [0.5], [300, -1.5, 7], []]))
    return op


def fields_erase(r):
    def v(lo, hi):
        return lambda: huge(r) if r.random() < 0.03 else r.randint(lo, hi)
    return {"op": "erase", "top": maybe(r, v(-20, 20)), "left": maybe(r, v(-20, 20)), "height": maybe(r, v(-3, 30)),
            "width": maybe(r, v(-3, 30)),
            "value": maybe(r, lambda: r.choice([0, 127.5, -1, 256, [1, 2, 3], [0.5], [1, 2], "random"]))}


def fields_gaussian_blur(r):
    def side():
        return huge(r) if r.random() < 0.03 else r.choice([1, 3, 3, 5, 7, 9, 0, 2, -3, 101])
    op = {"op": "gaussian_blur", "kernel_size": maybe(r, lambda: r.choice([side(), [side(), side()], [3], [3, 3, 3]]))}
    if r.random() < 0.7:
        op["sigma"] = maybe(r, lambda: r.choice([round(r.uniform(0.05, 3), 3), [round(r.uniform(0.05, 3), 3)],
                                                 [0.5, 1.5], 0, -1, [1, 2, 3], None]))
    if r.random() < 0.2:
        op["lanes"] = maybe(r, lambda: r.choice([8, 16, 4, 0]))
    return op


def fields_adjust_sharpness(r):
    return {"op": "adjust_sharpness", "factor": maybe(r, lambda: r.choice([0, 0.5, 1, 2.7, 40, -0.5]))}


def fields_tone(r):
    """adjust_gamma, adjust_hue, autocontrast or equalize, with values at and past their bounds."""
    op = {"op": r.choice(["adjust_gamma", "adjust_hue", "autocontrast", "equalize"])}
    if op["op"] == "adjust_gamma":
        op["gamma"] = maybe(r, lambda: r.choice([0, 0.5, 1, 2, 3, -0.5, r.uniform(0, 4), -1e-9]))
        if r.random() < 0.5:
            op["gain"] = maybe(r, lambda: r.uniform(-1, 3))
    elif op["op"] == "adjust_hue":
        op["factor"] = maybe(r, lambda: r.choice([-0.5, 0.5, 0, r.uniform(-0.6, 0.6)]))
    return op


def random_op(r, np):
    roll = r.random()
    if roll < 0.02:
        return junk(r)  # not an op at all
    if roll < 0.04:
        return {"op": r.choice(["rotate", "", 5, None, "Resize"])}
    kind = r.choice(["resize", "resize", "affine", "grid_sample", "flip", "crop", "center_crop", "convert",
                     "convert", "normalize", "pad", "erase", "gaussian_blur", "adjust_sharpness", "tone"])
    op = (fields_grid_sample(r, np) if kind == "grid_sample" else globals()["fields_" + kind](r))
    if r.random() < 0.03:
        op[r.choice(["extra", "Mode", "sizes", "op2"])] = 1  # an unknown field
    if r.random() < 0.02 and len(op) > 1:
        del op[r.choice([k for k in op if k != "op"])]  # a missing field
    return op


def long_chain(r, np, max_chain):
    """Hundreds or thousands of ops of one kind (or a few kinds): the prepare must stay
    bounded in time and memory."""
    n = r.choice([50, 100, 300, 1000, max_chain])
    n = min(n, max_chain)
    kind = r.choice(["flip", "crop", "center_crop", "convert", "affine", "affine_tv", "mixed"])
    ops = []
    for i in range(n - 1):
        if kind == "flip":
            ops.append({"op": "flip", "dims": [r.choice([-1, -2, 1, 2])]})
        elif kind == "crop":
            ops.append({"op": "crop", "top": r.randint(-2, 2), "left": r.randint(-2, 2), "height": r.randint(4, 12),
                        "width": r.randint(4, 12)})
        elif kind == "center_crop":
            ops.append({"op": "center_crop", "size": [r.randint(4, 12), r.randint(4, 12)]})
        elif kind == "convert":
            ops.append({"op": "convert", "dtype": DTYPES[i % 2], "scale": r.random() < 0.5})
        elif kind in ("affine", "affine_tv"):
            op = {"op": "affine", "theta": theta_value(r), "mode": r.choice(["nearest", "bilinear"])}
            if kind == "affine_tv":
                op["convention"] = "torchvision"
            ops.append(op)
        else:
            ops.append(r.choice([{"op": "flip", "dims": [-1]}, fields_crop(r), fields_center_crop(r),
                                 {"op": "convert", "dtype": r.choice(DTYPES)}]))
    ops.insert(0, {"op": "convert", "dtype": "float32" if kind == "affine" or r.random() < 0.3 else "uint8"})
    return ops


def random_input(r, np):
    """(description, array or other object): the input of one case."""
    roll = r.random()
    if roll < 0.03:
        obj = r.choice([None, "image.png", 3, [[1, 2], [3, 4]], b"\x00" * 8])
        return "object %r" % (obj,), obj
    if roll < 0.04:
        nested = []
        for _ in range(3000):
            nested = [nested]
        return "a list nested 3000 deep", nested
    dtype = r.choice(["uint8"] * 9 + ["float32"] * 9 + ["float64", "float16", "int16", "bool", "int32"])
    rank = r.choice([4] * 8 + [3] * 4 + [2] * 2 + [1, 5, 0])
    n, c, h, w = r.choice([1, 1, 2]), r.choice([1, 3, 3, 4, 2, 5]), small(r, 1, 24), small(r, 1, 24)
    if r.random() < 0.05:
        h = 0 if r.random() < 0.5 else h
        w = 0 if h else w
    shape = {4: (n, c, h, w), 3: (c, h, w), 2: (h, w), 1: (w,), 5: (1, n, c, h, w), 0: ()}[rank]
    rng = np.random.default_rng(r.getrandbits(32))
    if dtype == "uint8":
        x = rng.integers(0, 256, size=shape, dtype=np.uint8)
    elif dtype == "bool":
        x = rng.random(shape) < 0.5
    elif dtype.startswith("int"):
        x = rng.integers(-100, 100, size=shape).astype(dtype)
    else:
        x = (rng.random(shape) * 255).astype(dtype)
    x = np.array(x)  # an array even for rank 0
    layout = "contiguous"
    lroll = r.random()
    if lroll < 0.05:
        # A huge declared size without the memory: a zero-stride view.
        big = r.choice([(1, 3, 100000, 100000), (1, 1, 2 ** 31, 1), (4096, 3, 4096, 4096), (1, 3, 20000, 20000)])
        x = np.lib.stride_tricks.as_strided(np.zeros(1, dtype=np.uint8 if dtype == "uint8" else np.float32),
                                            shape=big, strides=(0, 0, 0, 0))
        layout = "zero strides, declared %s" % (big,)
    elif rank == 4 and lroll < 0.25:
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
        layout = "channels-last"
    elif rank >= 2 and lroll < 0.32:
        x = x[..., ::-1]
        layout = "reversed last dim"
    elif rank >= 2 and lroll < 0.38 and x.shape[-1] > 1:
        x = x[..., ::2]
        layout = "every other column"
    elif lroll < 0.40:
        x.flags.writeable = False
        layout = "read-only"
    return "%s %s %s" % (x.dtype, tuple(x.shape), layout), x


def make_case(seed, index, max_chain, np):
    """(ops, input description, input, as_text): case `index` of run `seed`."""
    r = random.Random(seed * 1000003 + index)
    roll = r.random()
    if roll < 0.15:
        ops = long_chain(r, np, max_chain)
    elif roll < 0.17:
        ops = junk(r)  # not a list of ops
    else:
        ops = [random_op(r, np) for _ in range(r.choice([0, 1, 1, 2, 2, 3, 4, 6, 9]))]
        # Most pipelines start in float32 where an op needs it (affine, grid_sample, normalize).
        if r.random() < 0.7 and any(isinstance(op, dict) and op.get("op") in ("affine", "grid_sample", "normalize")
                                    for op in ops):
            ops.insert(0, {"op": "convert", "dtype": "float32", "scale": r.random() < 0.5})
    desc, x = random_input(r, np)
    as_text = isinstance(ops, list) and r.random() < 0.1 and not any(
        isinstance(op, dict) and not isinstance(op.get("grid", ""), (str, type(None))) for op in ops)
    return ops, desc, x, as_text


def show_ops(ops, limit=1500):
    """The pipeline as JSON (arrays as <array ...>), long chains shortened."""
    def enc(o):
        if hasattr(o, "shape") and hasattr(o, "dtype"):
            return "<array %s %s>" % (o.dtype, tuple(o.shape))
        return repr(o)
    try:
        text = json.dumps(ops, default=enc)
    except (ValueError, TypeError, RecursionError):
        text = repr(ops)
    if len(text) > limit:
        text = "%s ... (%d chars%s)" % (text[:limit], len(text),
                                        ", %d ops" % len(ops) if isinstance(ops, list) else "")
    return text


# ---- the worker --------------------------------------------------------------------------

def make_scratch(folder):
    """The pipelines' folder: grids (one valid, others each wrong in one way), a subfolder,
    a FIFO, and symlinks in it, to it, out of it and to /dev/zero."""
    import numpy as np
    os.makedirs(os.path.join(folder, "sub"), exist_ok=True)
    np.save(os.path.join(folder, "grid.npy"), np.zeros((1, 4, 5, 2), np.float32))
    np.save(os.path.join(folder, "sub", "grid.npy"), np.full((1, 3, 3, 2), 0.5, np.float32))
    np.save(os.path.join(folder, "grid_u8.npy"), np.zeros((1, 4, 5, 2), np.uint8))
    np.save(os.path.join(folder, "grid_last3.npy"), np.zeros((1, 4, 5, 3), np.float32))
    with open(os.path.join(folder, "grid_garbage.npy"), "wb") as f:
        f.write(b"not a .npy file")
    for name, target in (("link_in.npy", "grid.npy"), ("link_zero.npy", "/dev/zero"), ("link_out", "/etc"),
                         ("link_up", "..")):
        path = os.path.join(folder, name)
        if not os.path.lexists(path):
            os.symlink(target, path)
    if not os.path.exists(os.path.join(folder, "fifo.npy")):
        os.mkfifo(os.path.join(folder, "fifo.npy"))


def worker(args):
    """Reads case indices from stdin, runs each, writes one JSON line per case:
    {"i": index, "outcome": "ok" | "error" | "failure", "kind": ..., "message": ...}."""
    limit = args.memory_limit << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import numpy as np
    import toroid
    scratch = os.path.join(args.scratch, "pipelines")
    os.makedirs(scratch, exist_ok=True)
    make_scratch(scratch)
    out = sys.stdout
    for line in sys.stdin:
        index = int(line)
        ops, _desc, x, as_text = make_case(args.seed, index, args.max_chain, np)
        result = {"i": index}
        try:
            pipeline = toroid.Pipeline(json.dumps(ops) if as_text else ops, engine="compiled", threads=1,
                                       base_dir=scratch)
            y = pipeline(x)
            result["outcome"] = "ok"
            result["kind"] = "%s %s" % (getattr(y, "dtype", type(y).__name__), tuple(getattr(y, "shape", ())))
        except toroid.Error as e:
            result.update(outcome="error", kind=type(e).__name__, message=str(e)[:300])
            if "\n" in str(e):
                result.update(outcome="failure", kind="multi-line " + type(e).__name__)
        except BaseException as e:  # noqa: BLE001 - everything else is what this looks for
            if isinstance(e, KeyboardInterrupt):
                raise
            result.update(outcome="failure", kind=type(e).__name__, message=str(e)[:300])
        out.write(json.dumps(result) + "\n")
        out.flush()


# ---- the driver --------------------------------------------------------------------------

class Worker:
    def __init__(self, args, number, env):
        scratch = os.path.join(args.scratch, "w%d" % number)
        os.makedirs(scratch, exist_ok=True)
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--seed", str(args.seed),
               "--max-chain", str(args.max_chain), "--memory-limit", str(args.memory_limit), "--scratch", scratch]
        # Its own process group: a hang is killed with the compilers it started.
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                     start_new_session=True, bufsize=0)
        self.buffer = b""
        self.case = None
        self.started = 0.0

    def send(self, index):
        self.case = index
        self.started = time.monotonic()
        self.proc.stdin.write(b"%d\n" % index)

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()


def folder_size(path):
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def entries(path):
    """The sizes of the cache's entries (its key-named folders and failed builds): what its
    cap governs. Build folders in progress (.tmp-*) and lock files are not entries."""
    out = []
    for folder in (path, os.path.join(path, "failed")):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            full = os.path.join(folder, name)
            if len(name) == 32 and all(ch in "0123456789abcdef" for ch in name) and os.path.isdir(full):
                out.append(folder_size(full))
    return out


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text and text[-1].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    return int(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds before a case counts as a hang")
    ap.add_argument("--max-chain", type=int, default=2000, help="the longest chain of ops")
    ap.add_argument("--cache-size", default="64M", help="TOROID_CACHE_SIZE of the run's own cache")
    ap.add_argument("--memory-limit", type=int, default=4096, help="each worker's address space, MiB")
    ap.add_argument("--keep", action="store_true", help="keep the run's folder (cache, scratch) and print it")
    ap.add_argument("--time-limit", type=float, help="start no case after this many seconds")
    ap.add_argument("--only", type=int, help="run this case alone (and print it)")
    ap.add_argument("--verbose", action="store_true", help="print every case's outcome")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--scratch", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    if args.cases < 1 or args.workers < 1 or args.timeout <= 0 or args.max_chain < 1:
        ap.error("--cases, --workers, --timeout and --max-chain must be positive")

    top = tempfile.mkdtemp(prefix="toroid_fuzz_python_")
    cache = os.path.join(top, "cache")
    env = dict(os.environ, TOROID_CACHE_DIR=cache, TOROID_CACHE_SIZE=args.cache_size, TOROID_PREBUILT="none")
    env.setdefault("TOROID_TIERED", "quick")  # one build per kernel: more cases in the time
    args.scratch = top
    cap = parse_size(args.cache_size)
    indices = [args.only] if args.only is not None else list(range(args.cases))
    if args.only is not None:
        import numpy as np
        ops, desc, _x, as_text = make_case(args.seed, args.only, args.max_chain, np)
        print("case %d: input %s; pipeline%s: %s" % (args.only, desc, " (as JSON text)" if as_text else "",
                                                     show_ops(ops, 100000)))
        args.workers = 1

    started = time.monotonic()
    pending = list(reversed(indices))
    workers = [Worker(args, k, env) for k in range(min(args.workers, len(indices)))]
    counts = {"ok": 0, "error": 0}
    failures, hangs, error_kinds = [], [], {}
    max_cache = largest = 0

    def report(kind, index, detail):
        import numpy as np
        ops, desc, _x, as_text = make_case(args.seed, index, args.max_chain, np)
        print("%s: case %d (%s): %s\n  input: %s\n  pipeline%s: %s\n  rerun: %s %s --seed %d --max-chain %d --only %d"
              % (kind, index, "hang" if kind == "HANG" else "failure", detail, desc,
                 " (as JSON text)" if as_text else "", show_ops(ops), sys.executable, os.path.abspath(__file__),
                 args.seed, args.max_chain, index), flush=True)

    def stop(signum, _frame):
        raise SystemExit(128 + signum)  # the finally below ends the workers and their compilers

    signal.signal(signal.SIGTERM, stop)
    try:
        for w in workers:
            if pending:
                w.send(pending.pop())
        done = 0
        while any(w.case is not None for w in workers):
            busy = [w for w in workers if w.case is not None]
            now = time.monotonic()
            wait = max(0.05, min(w.started + args.timeout - now for w in busy))
            ready, _, _ = select.select([w.proc.stdout for w in busy], [], [], wait)
            for w in busy:
                index = w.case
                restart = False
                if w.proc.stdout in ready:
                    chunk = os.read(w.proc.stdout.fileno(), 65536)
                    if not chunk:  # the worker died mid-case
                        code = w.proc.wait()
                        why = ("killed by signal %d (%s)" % (-code, signal.Signals(-code).name) if code < 0
                               else "exited with status %d" % code)
                        failures.append((index, "worker " + why))
                        report("FAILURE", index, "the worker " + why)
                        restart = True
                    else:
                        w.buffer += chunk
                        if b"\n" not in w.buffer:
                            continue
                        line, w.buffer = w.buffer.split(b"\n", 1)
                        result = json.loads(line)
                        outcome = result["outcome"]
                        if outcome == "failure":
                            failures.append((index, result["kind"]))
                            report("FAILURE", index, "%s: %s" % (result["kind"], result.get("message", "")))
                        else:
                            counts[outcome] += 1
                            if outcome == "error":
                                error_kinds[result["kind"]] = error_kinds.get(result["kind"], 0) + 1
                        if args.verbose or args.only is not None:
                            print("case %d: %s %s %s" % (index, outcome, result.get("kind", ""),
                                                         result.get("message", "")), flush=True)
                        w.case = None
                elif time.monotonic() - w.started > args.timeout:
                    hangs.append(index)
                    report("HANG", index, "no result after %.0f s" % args.timeout)
                    w.kill()
                    restart = True
                if restart:
                    w.kill()
                    workers[workers.index(w)] = w = Worker(args, workers.index(w), env)
                    w.case = None
                if w.case is None:
                    done += 1
                    if done % 25 == 0:
                        sizes = entries(cache)
                        max_cache = max(max_cache, sum(sizes))
                        largest = max([largest] + sizes)
                    if done % 100 == 0:
                        size = sum(entries(cache))
                        print("fuzz_python: %d/%d cases, %.0f s, cache %.1f MiB" % (
                            done, len(indices), time.monotonic() - started, size / 2 ** 20), flush=True)
                    if pending and (args.time_limit is None or time.monotonic() - started < args.time_limit):
                        w.send(pending.pop())
    finally:
        for w in workers:
            try:
                w.proc.stdin.close()
            except OSError:
                pass
            w.kill()

    # At the end the entries fit the cap with one entry's slack (an estimate of the size
    # decides when to evict); while cases ran, with one per worker (each may add one at once).
    sizes = entries(cache)
    size = sum(sizes)
    largest = max([largest] + sizes)
    max_cache = max(max_cache, size)
    cache_ok = size <= cap + largest and max_cache <= cap + len(workers) * largest
    if args.keep:
        print("fuzz_python: kept %s" % top)
    else:
        shutil.rmtree(top, ignore_errors=True)
    passed = counts["ok"] + counts["error"]
    ran = passed + len(failures) + len(hangs)
    print("fuzz_python: seed %d: %d cases in %.0f s: %d ran, %d refused with a toroid.Error (%s); %d hangs; "
          "%d other failures" % (args.seed, ran, time.monotonic() - started, counts["ok"], counts["error"],
                                 ", ".join("%s %d" % kv for kv in sorted(error_kinds.items())), len(hangs),
                                 len(failures)))
    print("fuzz_python: cache entries %.2f MiB at the end, at most %.2f MiB while running (cap %.2f MiB, "
          "largest entry %.3f MiB): %s" % (size / 2 ** 20, max_cache / 2 ** 20, cap / 2 ** 20, largest / 2 ** 20,
                                           "ok" if cache_ok else "OVER THE CAP"))
    failed = len(failures) + len(hangs) + (0 if cache_ok else 1)
    print("%d passed, %d failed%s" % (passed, len(failures) + len(hangs), "" if cache_ok else " (and the cache "
                                                                          "passed its cap)"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
