#!/usr/bin/env python3
"""Benchmarks toroid against its peers on the rows of `toroid bench --suite seeds` (or
--quick; the cases come from `toroid bench --list --json`), in one process on the same inputs, engines interleaved (in blocks on more threads, see --order): toroid compiled, PyTorch
eager, torch.compile (PyTorch >= 2), OpenCV and Pillow where they compute a comparable
function. Prints seed-style tables with speed-ups and writes JSON for `toroid bench compare`."""

import argparse
import json
import math
import os
import platform
import re
import subprocess
import sys
import time

import benchenv

benchenv.system_python("peers", ["numpy"], "python3-numpy")
import numpy as np  # noqa: E402

ROOT = benchenv.ROOT
NOTES = []  # printed once at the top: what was skipped and why


def note(text):
    if text not in NOTES:
        NOTES.append(text)


def optional_import(name, what):
    try:
        return __import__(name)
    except Exception as e:  # ImportError, or a broken install raising something else
        note("%s is not available (%s): its rows are skipped" % (what, e.__class__.__name__ + ": " + str(e)))
        return None


torch = optional_import("torch", "PyTorch")
if torch is not None:
    import torch.nn.functional as F
cv2 = optional_import("cv2", "OpenCV (python3-opencv)")
try:
    from PIL import Image
    import PIL
except Exception as e:
    Image = PIL = None
    note("Pillow (python3-pil) is not available (%s): its rows are skipped" % e)


def import_toroid():
    sys.path.insert(0, os.path.join(ROOT, "python"))
    try:
        import toroid
        return toroid
    except ImportError as e:
        note("toroid's Python package did not load (%s): toroid rows are skipped" % e)
        return None


# ---- the suite: the cases of `toroid bench --list --json` ----------------------------------

def find_toroid_binary(path=""):
    """The toroid command: --toroid PATH, else $TOROID_BIN, else build/toroid of this tree."""
    for candidate, origin in ((path, "--toroid"), (os.environ.get("TOROID_BIN", ""), "$TOROID_BIN"),
                              (os.path.join(ROOT, "build", "toroid"), "")):
        if not candidate:
            continue
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
        if origin:  # named explicitly: say so rather than fall back silently
            raise RuntimeError("%s: '%s' is not an executable file" % (origin, candidate))
    raise RuntimeError("cannot find the toroid command: build it (cmake --build build --target toroid), or give "
                       "--toroid PATH or $TOROID_BIN")


class Case:
    """One case of the list: its pipeline (toroid's JSON schema) on one input spec."""

    def __init__(self, entry):
        self.name, self.title, self.row = entry["label"], entry["op"], entry["row"]
        self.device = entry["device"]
        self.pipeline = entry["pipeline"]
        self.dtype = entry["input"]["dtype"]
        self.shape = tuple(entry["input"]["shape"])
        self.layout = "CL" if entry["input"]["layout"] == "channels_last" else "CF"
        self.out_dtype = entry["output"]["dtype"]
        self.out_shape = tuple(entry["output"]["shape"])
        self.bytes = entry["bytes"]

    def single_op(self):
        """The pipeline's only op; Skip for engines that map one op at a time."""
        if len(self.pipeline) != 1:
            raise Skip()
        return self.pipeline[0]


def list_suites(binary, suite=None):
    """{suite name: [Case]} from `toroid bench --list --json [--suite NAME]`."""
    cmd = [binary, "bench", "--list", "--json"] + (["--suite", suite] if suite else [])
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if proc.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(cmd), proc.stderr.strip() or "exit %d" % proc.returncode))
    doc = json.loads(proc.stdout)
    return {s["name"]: [Case(e) for e in s["cases"]] for s in doc["suites"]}


def select_cases(cases, device, pattern):
    picked = [c for c in cases if c.device == device and (not pattern or re.search(pattern, c.name))]
    groups = {}
    for c in picked:  # tables in order of first appearance, their rows adjacent
        groups.setdefault((c.title, c.device), []).append(c)
    return [c for g in groups.values() for c in g]


def make_input(case):
    """The case's input, filled exactly as toroid's bench does (splitmix64 over the memory
    order of the layout: uint8 over 0..255, float32 over [0, 1)), as an NCHW view."""
    n, c, h, w = case.shape
    count = n * c * h * w
    golden = np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        z = np.arange(1, count + 1, dtype=np.uint64) * golden + golden
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    if case.dtype == "uint8":
        flat = (z >> np.uint64(56)).astype(np.uint8)
    else:
        flat = ((z >> np.uint64(40)).astype(np.float64) * 2.0 ** -24).astype(np.float32)
    if case.layout == "CL":
        return flat.reshape(n, h, w, c).transpose(0, 3, 1, 2)
    return flat.reshape(n, c, h, w)


# ---- engines ------------------------------------------------------------------------------
# Each engine's prepare(case, x) returns (run, to_nchw) or raises Skip (no comparable
# function: no record) / an exception (a failure: an error record). run() computes one
# result; to_nchw(result) gives it as an NCHW NumPy array for the accuracy check.

class Skip(Exception):
    pass


def is_down(case):
    n, c, h, w = case.shape
    oh, ow = case.out_shape[2:]
    return oh <= h and ow <= w


def flip_code(dims):
    """OpenCV's flip code for flipping NCHW `dims`: 1 for W, 0 for H, -1 for both; Skip
    for flips of the batch or channel dim."""
    spatial = sorted({d % 4 for d in dims})
    if spatial == [3]:
        return 1
    if spatial == [2]:
        return 0
    if spatial == [2, 3]:
        return -1
    raise Skip()


def affine_pixel_matrix(theta, in_hw, out_hw, ac):
    """The 2x3 map from output pixel indices (x, y) to input pixel indices that
    F.affine_grid + F.grid_sample compute (pixel centers at integers)."""
    (h, w), (oh, ow) = in_hw, out_hw

    def to_norm(size):  # pixel index -> normalized
        return (2.0 / (size - 1), -1.0) if ac else (2.0 / size, 1.0 / size - 1.0)

    def from_norm(size):  # normalized -> pixel index
        return ((size - 1) / 2.0, (size - 1) / 2.0) if ac else (size / 2.0, (size - 1) / 2.0)

    ax, bx = to_norm(ow)
    ay, by = to_norm(oh)
    n_out = np.array([[ax, 0, bx], [0, ay, by], [0, 0, 1]])
    ux, vx = from_norm(w)
    uy, vy = from_norm(h)
    u_in = np.array([[ux, 0, vx], [0, uy, vy], [0, 0, 1]])
    t = np.vstack([np.array(theta, dtype=np.float64), [0, 0, 1]])
    return (u_in @ t @ n_out)[:2]


class ToroidEngine:
    name = "toroid"

    def __init__(self, toroid, threads, device="cpu"):
        self.toroid, self.threads, self.device = toroid, threads, device

    def prepare(self, case, x):
        p = self.toroid.Pipeline(case.pipeline, engine="compiled", threads=self.threads)
        if self.device == "cuda":
            # The same torch CUDA tensor as PyTorch's row gets; toroid runs on its current
            # stream, timed like PyTorch: run, then synchronize.
            t = torch.from_numpy(x).to("cuda")
            p(t)  # compiles (or loads the cache)
            torch.cuda.synchronize()

            def run():
                y = p(t)
                torch.cuda.synchronize()
                return y
            return run, (lambda y: y.cpu().numpy())
        p.explain(x)  # compiles (or loads the cache)
        p(x)
        # The first call ran on a quick build; time the full one that a long run uses (the
        # first call's latency is section 8's table, bench/new_size.py and bench/loader.py).
        self.toroid.wait_for_background_builds()
        return (lambda: p(x)), (lambda y: y)


class TorchEngine:
    def __init__(self, device, compiled=False):
        self.device, self.compiled = device, compiled
        self.name = "torch.compile" if compiled else "torch"

    def op_function(self, op, n):
        """The PyTorch calls computing one op of toroid's schema on an NCHW tensor of batch n."""
        kind = op["op"]
        if kind == "resize":
            kw = {}
            if op["mode"] in ("bilinear", "bicubic"):
                kw["align_corners"] = op.get("align_corners", False)
                if op.get("antialias"):
                    kw["antialias"] = True
            if op.get("recompute_scale_factor"):
                kw["recompute_scale_factor"] = True
            if "size" in op:
                kw["size"] = tuple(op["size"])
            else:
                kw["scale_factor"] = tuple(op["scale_factor"])
            return lambda t: F.interpolate(t, mode=op["mode"], **kw)
        if kind == "affine":
            theta = torch.tensor([op["theta"]] * n, dtype=torch.float32, device=self.device)

            def affine(t):
                c, h, w = t.shape[1:]
                oh, ow = op.get("size", (h, w))
                grid = F.affine_grid(theta, [n, c, oh, ow], align_corners=op["align_corners"])
                return F.grid_sample(t, grid, mode=op["mode"], padding_mode=op["padding_mode"],
                                     align_corners=op["align_corners"])
            return affine
        if kind == "flip":
            return lambda t: t.flip(op["dims"])
        if kind == "crop":
            top, left, ch, cw = op["top"], op["left"], op["height"], op["width"]

            def crop(t):  # torchvision's crop: zeros where the region leaves the image
                c, h, w = t.shape[1:]
                out = t.new_zeros((n, c, ch, cw))
                y0, y1 = max(top, 0), min(top + ch, h)
                x0, x1 = max(left, 0), min(left + cw, w)
                if y0 < y1 and x0 < x1:
                    out[:, :, y0 - top:y1 - top, x0 - left:x1 - left] = t[:, :, y0:y1, x0:x1]
                return out
            return crop
        if kind == "convert":
            to = torch.uint8 if op["dtype"] == "uint8" else torch.float32
            if not op.get("scale"):
                return lambda t: t.to(to)
            if to == torch.float32:  # torchvision's to_dtype: times 1/255 in float32
                return lambda t: t.to(torch.float32) * (1.0 / 255.0) if t.dtype == torch.uint8 else t
            return lambda t: (t * (255.0 + 1.0 - 1e-3)).to(torch.uint8) if t.is_floating_point() else t
        if kind == "normalize":
            mean = torch.tensor(op["mean"], dtype=torch.float32, device=self.device).reshape(1, -1, 1, 1)
            std = torch.tensor(op["std"], dtype=torch.float32, device=self.device).reshape(1, -1, 1, 1)
            return lambda t: (t - mean) / std
        raise Skip()  # grid_sample: the list names its grid file, not its values

    def function(self, case):
        steps = [self.op_function(op, case.shape[0]) for op in case.pipeline]
        if len(steps) == 1:
            return steps[0]

        def chain(t):
            for f in steps:
                t = f(t)
            return t
        return chain

    def prepare(self, case, x):
        t = torch.from_numpy(x)
        if self.device == "cuda":
            t = t.to("cuda")
        fn = self.function(case)
        if self.compiled:
            # Every row's function shares its code object with the other rows', so
            # dynamo would count each new shape as a recompile and, past its limit,
            # silently run eager: start from a clean cache for every row.
            torch._dynamo.reset()
            fn = torch.compile(fn, dynamic=False)
        sync = torch.cuda.synchronize if self.device == "cuda" else (lambda: None)

        def run():
            y = fn(t)
            sync()
            return y
        return run, (lambda y: y.detach().cpu().numpy())


class OpenCVEngine:
    name = "opencv"

    def prepare(self, case, x):
        op = case.single_op()
        n, c, h, w = case.shape
        oh, ow = case.out_shape[2:]
        cl = case.layout == "CL"
        src = x.transpose(0, 2, 3, 1) if cl else x  # NHWC images, or NCHW planes
        dtype = x.dtype
        if op["op"] == "resize":
            mode = op["mode"]
            if mode in ("bilinear", "bicubic") and op.get("align_corners"):
                raise Skip()  # OpenCV has no align_corners
            if mode == "nearest":
                interp = cv2.INTER_NEAREST
            elif mode == "nearest-exact":
                interp = cv2.INTER_NEAREST_EXACT
            elif op.get("antialias") and is_down(case):
                interp = cv2.INTER_AREA  # OpenCV's antialiased downscale (a box filter)
            else:
                interp = cv2.INTER_LINEAR if mode == "bilinear" else cv2.INTER_CUBIC
            size = (ow, oh)

            def one(s, d):
                cv2.resize(s, size, dst=d, interpolation=interp)
            out_hw = (oh, ow)
        elif op["op"] == "flip":
            code = flip_code(op["dims"])

            def one(s, d):
                cv2.flip(s, code, dst=d)
            out_hw = (h, w)
        elif op["op"] == "affine" and op["padding_mode"] == "zeros":
            m = affine_pixel_matrix(op["theta"], (h, w), (oh, ow), op["align_corners"])
            interp = {"bilinear": cv2.INTER_LINEAR, "nearest": cv2.INTER_NEAREST,
                      "bicubic": cv2.INTER_CUBIC}[op["mode"]]
            flags = interp | cv2.WARP_INVERSE_MAP

            def one(s, d):
                cv2.warpAffine(s, m, (ow, oh), dst=d, flags=flags, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
            out_hw = (oh, ow)
        else:
            raise Skip()

        if cl:
            def run():
                out = np.empty((n,) + out_hw + (c,), dtype=dtype)
                for i in range(n):
                    one(src[i], out[i])
                return out
            return run, (lambda y: y.transpose(0, 3, 1, 2))

        def run_planes():
            out = np.empty((n, c) + out_hw, dtype=dtype)
            for i in range(n):
                for j in range(c):
                    one(src[i, j], out[i, j])
            return out
        return run_planes, (lambda y: y)


class PillowEngine:
    name = "pillow"

    def __init__(self):
        self.resampling = getattr(Image, "Resampling", Image)
        self.transpose = getattr(Image, "Transpose", Image)
        self.transform = getattr(Image, "Transform", Image)

    def prepare(self, case, x):
        """Pillow works on its own images: the input is converted to them before timing
        (uint8 3-channel images as RGB, float32 as one "F" image per channel)."""
        op = case.single_op()
        n, c, h, w = case.shape
        oh, ow = case.out_shape[2:]
        rgb = x.dtype == np.uint8 and c == 3
        if rgb:
            images = [Image.fromarray(np.ascontiguousarray(x[i].transpose(1, 2, 0)), "RGB") for i in range(n)]
        else:
            images = [Image.fromarray(np.ascontiguousarray(x[i, j]), "F" if x.dtype == np.float32 else "L")
                      for i in range(n) for j in range(c)]
        R = self.resampling
        if op["op"] == "resize":
            if op["mode"] in ("bilinear", "bicubic") and op.get("align_corners"):
                raise Skip()  # Pillow has no align_corners
            resample = {"nearest": R.NEAREST, "nearest-exact": R.NEAREST, "bilinear": R.BILINEAR,
                        "bicubic": R.BICUBIC}[op["mode"]]

            def one(im):
                return im.resize((ow, oh), resample)
        elif op["op"] == "flip" and flip_code(op["dims"]) in (0, 1):
            method = self.transpose.FLIP_LEFT_RIGHT if flip_code(op["dims"]) == 1 else self.transpose.FLIP_TOP_BOTTOM

            def one(im):
                return im.transpose(method)
        elif op["op"] == "affine" and op["padding_mode"] == "zeros":
            m = affine_pixel_matrix(op["theta"], (h, w), (oh, ow), op["align_corners"])
            # Pillow's coordinates put pixel centers at +0.5.
            a, b, e = m[0], m[1], 0.5
            data = (a[0], a[1], a[2] + e - e * (a[0] + a[1]), b[0], b[1], b[2] + e - e * (b[0] + b[1]))
            resample = {"bilinear": R.BILINEAR, "nearest": R.NEAREST, "bicubic": R.BICUBIC}[op["mode"]]
            kind = self.transform.AFFINE

            def one(im):
                return im.transform((ow, oh), kind, data, resample=resample)
        else:
            raise Skip()

        def run():
            return [one(im) for im in images]

        def to_nchw(results):
            if rgb:
                return np.stack([np.asarray(im).transpose(2, 0, 1) for im in results])
            planes = [np.asarray(im) for im in results]
            return np.stack(planes).reshape((n, c) + planes[0].shape)
        return run, to_nchw


# ---- measuring --------------------------------------------------------------------------------

def summarize(samples):
    """Median and quartiles, linear interpolation between order statistics (as toroid's bench)."""
    s = sorted(samples)

    def q(p):
        pos = p * (len(s) - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (pos - lo)
    return q(0.5), q(0.75) - q(0.25)


def measure_case(case, engines, args):
    """Prepares every engine on the case, then times them in turns (one run each per round)
    until each has enough runs and time. Returns records and the max |diff| per engine."""
    x = make_input(case)
    bytes_moved = case.bytes
    prepared, records, diffs = [], [], {}
    for e in engines:
        rec = {"case": case.name, "title": case.title, "device": case.device, "engine": e.name,
               "threads": args.threads}
        try:
            t0 = time.perf_counter()
            run, to_nchw = e.prepare(case, x)
            y = run()  # the first run (compiles for torch.compile) counts as preparation
            rec["prepare_s"] = time.perf_counter() - t0
            result = np.asarray(to_nchw(y))
        except Skip:
            continue
        except Exception as ex:  # the peer cannot compute this row (e.g. a dtype it lacks)
            msg = ("%s: %s" % (ex.__class__.__name__, ex)).splitlines()[0][:300]
            rec["error"] = msg
            records.append(rec)
            continue
        for _ in range(2):  # warm-up
            run()
        prepared.append((e, run, rec, result, []))

    # Accuracy: against PyTorch eager when it ran, else against toroid (PyTorch-exact by
    # its conformance suite).
    results = {e.name: result for e, _, _, result, _ in prepared}
    ref_name = "torch" if "torch" in results else ("toroid" if "toroid" in results else None)
    for e, _, rec, result, _ in prepared:
        if ref_name and e.name != ref_name:
            ref = results[ref_name]
            if ref.shape != result.shape:
                diffs[e.name] = (float("inf"), ref_name)
            else:
                d = np.abs(result.astype(np.float64) - ref.astype(np.float64))
                diffs[e.name] = (float(d.max()) if d.size else 0.0, ref_name)
            rec["max_abs_diff"] = diffs[e.name][0] if math.isfinite(diffs[e.name][0]) else -1.0
            rec["diff_reference"] = ref_name

    cap = max(args.max_time, args.min_time)
    totals = {e.name: 0.0 for e, *_ in prepared}
    # Interleaved: one run of each engine per round, so drifts of a shared machine hit all
    # alike. In blocks: each engine's runs back to back, after a pause in which the thread
    # pools of the engine before go to sleep (see --order).
    groups = [list(prepared)] if args.order == "interleaved" else [[item] for item in prepared]
    for active in groups:
        if args.order == "blocks":
            time.sleep(0.05)
        while active:
            for item in list(active):
                e, run, rec, _, times = item
                t0 = time.perf_counter()
                y = run()
                del y
                dt = time.perf_counter() - t0
                times.append(dt * 1e6)
                totals[e.name] += dt
                if (len(times) >= args.min_runs and totals[e.name] >= args.min_time) or totals[e.name] >= cap:
                    active.remove(item)
    for e, _, rec, _, times in prepared:
        med, iqr = summarize(times)
        rec.update(median_us=med, iqr_us=iqr, runs=len(times), gbps=bytes_moved / (med * 1e3) if med > 0 else 0.0)
        records.append(rec)
    order = {e.name: i for i, e in enumerate(engines)}
    records.sort(key=lambda r: order[r["engine"]])
    return records, diffs


# ---- tables -------------------------------------------------------------------------------------

def fmt_us(us):
    return "%.2f" % us if us < 10 else "%.1f" % us


def differs(diff, dtype):
    return diff is not None and diff[0] > (0 if dtype == "uint8" else 1e-4)


def row_label(name, title):
    return name[len(title) + 1:] if name.startswith(title + " ") else name


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def measure_copy_gbps():
    """A device-to-device copy of 1 GiB through PyTorch (CUDA events, median of 20): bytes
    read + written per second, the bandwidth the GB/s column is compared with."""
    n = 1 << 28
    a = torch.rand(n, device="cuda")
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    times = []
    for _ in range(20):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        b.copy_(a)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    ms = times[len(times) // 2]
    del a, b
    torch.cuda.empty_cache()
    return 2.0 * 4 * n / (ms * 1e-3) / 1e9


def format_table(title, device, cases, records, diffs, engine_names, threads, copy_gbps=0.0):
    by = {(r["case"], r["engine"]): r for r in records if "error" not in r}
    engines = [e for e in engine_names if any((c.name, e) in by for c in cases)]
    if not engines:
        return ""
    peers = [e for e in engines if e != "toroid"] if "toroid" in engines else []
    label_w = max([len(row_label(c.name, title)) for c in cases] + [len("geometric mean")])
    cells, speed = {}, {}
    for c in cases:
        for e in engines:
            r = by.get((c.name, e))
            if r is None:
                cells[c.name, e] = "-"
                continue
            mark = " ≠" if differs(diffs.get(c.name, {}).get(e), c.dtype) else ""
            cells[c.name, e] = "%s (±%s)%s" % (fmt_us(r["median_us"]), fmt_us(r["iqr_us"]), mark)
            t = by.get((c.name, "toroid"))
            if e in peers and t is not None:
                speed[c.name, e] = r["median_us"] / t["median_us"]
    widths = {e: max([len(e)] + [len(cells[c.name, e]) for c in cases]) for e in engines}
    sp_heads = {e: "%s/toroid" % e for e in peers}
    sp_w = {e: max(len(sp_heads[e]), 7) for e in peers}
    header = "  " + " " * label_w + "".join(" | " + e.center(widths[e]) for e in engines)
    header += "".join(" | " + sp_heads[e].rjust(sp_w[e]) for e in peers)
    # GPU rows: toroid's bandwidth (bytes read + written over its time) and its share of the
    # device copy measured in the same run.
    show_bw = copy_gbps > 0 and "toroid" in engines
    if show_bw:
        header += " | toroid GB/s | % of copy"
    width = len(header)
    head = " %s, %s " % (title, device)
    dashes = max(width - len(head) - 2, 2)
    lines = ["[" + "-" * (dashes // 2) + head + "-" * (dashes - dashes // 2) + "]", header]
    th = "%d threads: " % threads
    lines.append(th + "-" * max(width - len(th), 3))
    for c in cases:
        line = "  " + row_label(c.name, title).ljust(label_w)
        line += "".join(" | " + cells[c.name, e].rjust(widths[e]) for e in engines)
        line += "".join(" | " + (("%.2fx" % speed[c.name, e]) if (c.name, e) in speed else "-").rjust(sp_w[e])
                        for e in peers)
        if show_bw:
            t = by.get((c.name, "toroid"))
            line += " | " + ("%.0f" % t["gbps"] if t else "-").rjust(len("toroid GB/s"))
            line += " | " + ("%.0f%%" % (100.0 * t["gbps"] / copy_gbps) if t else "-").rjust(len("% of copy"))
        lines.append(line)
    if peers:
        line = "  " + "geometric mean".ljust(label_w) + "".join(" | " + " " * widths[e] for e in engines)
        for e in peers:
            vals = [speed[c.name, e] for c in cases if (c.name, e) in speed]
            line += " | " + (("%.2fx" % geomean(vals)) if vals else "-").rjust(sp_w[e])
        lines.append(line)
    lines.append("")
    lines.append("Times are median microseconds (± interquartile range)%s." %
                 ("; X/toroid above 1: toroid is faster" if peers else ""))
    if show_bw:
        lines.append("toroid GB/s: input + output bytes over its median time (call + synchronize); %% of copy: of "
                     "the %.0f GB/s a device-to-device copy moved in this run." % copy_gbps)
    marked = {}
    for c in cases:
        for e in engines:
            d = diffs.get(c.name, {}).get(e)
            if differs(d, c.dtype):
                m = marked.setdefault((e, d[1]), [0, 0.0])
                m[0] += 1
                m[1] = max(m[1], d[0])
    for (e, ref), (count, worst) in marked.items():
        why = peer_note(e, title)
        lines.append("≠ %s differs from %s on %d row(s), max |diff| %s%s" %
                     (e, ref, count, "%g" % worst, ("; " + why) if why else ""))
    return "\n".join(lines) + "\n\n"


# Why a peer's result differs, by engine and table title (first matching prefix).
PEER_NOTES = [
    ("opencv", "interpolate nearest-exact", "INTER_NEAREST_EXACT computes source indices in fixed point"),
    ("opencv", "interpolate nearest", "INTER_NEAREST computes source indices in fixed point"),
    ("opencv", "interpolate", "OpenCV does not antialias: INTER_AREA (a box filter) stands in for downscaling, "
                              "INTER_LINEAR/INTER_CUBIC (fixed-point weights) for upscaling"),
    ("opencv", "affine_grid+grid_sample", "warpAffine quantizes coordinates to 1/32 pixel"),
    ("pillow", "interpolate nearest", "Pillow's NEAREST samples at pixel centers (nearest-exact)"),
    ("pillow", "interpolate", "Pillow's 8-bit filters round differently"),
    ("pillow", "affine_grid+grid_sample", "Pillow's transform treats the borders differently from zeros padding"),
    ("toroid", "interpolate", "this PyTorch computes uint8 bilinear/bicubic in float; toroid follows the integer "
                              "path of PyTorch >= 2.1 (its conformance files)"),
    ("torch.compile", "", "torch.compile's generated code does not compute what eager PyTorch does"),
]


def peer_note(engine, title):
    for e, prefix, why in PEER_NOTES:
        if e == engine and title.startswith(prefix):
            return why
    return ""


# ---- main -------------------------------------------------------------------------------------------

def machine(toroid, device):
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and ":" in line:
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    parts = ["Python %s" % platform.python_version()]
    if torch is not None:
        parts.append("PyTorch %s" % torch.__version__)
    if cv2 is not None:
        parts.append("OpenCV %s" % cv2.__version__)
    if PIL is not None:
        parts.append("Pillow %s" % PIL.__version__)
    if device == "cuda":
        parts.append("GPU %s" % torch.cuda.get_device_name())
    return {"cpu": cpu, "cores": os.cpu_count() or 1, "compiler": "; ".join(parts),
            "toroid_version": toroid.__version__ if toroid else ""}


def torch_at_least_2():
    if torch is None:
        return False
    try:
        return int(torch.__version__.split(".")[0]) >= 2
    except ValueError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a handful of small CPU rows (the 'quick' suite)")
    ap.add_argument("--suite", default="", help="the suite of `toroid bench --list` to run (default seeds)")
    ap.add_argument("--toroid", default="", metavar="PATH",
                    help="the toroid command that lists the cases (default: $TOROID_BIN, else build/toroid)")
    ap.add_argument("--threads", type=int, default=1, help="threads for every engine (default 1)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="rows of this device (default cpu)")
    ap.add_argument("--filter", default="", help="only cases whose name matches this regex")
    ap.add_argument("--json", default="", help="write the results here (the format `toroid bench compare` reads)")
    ap.add_argument("--min-time", type=float, default=0.2, help="minimum measured seconds per case and engine")
    ap.add_argument("--max-time", type=float, default=5.0, help="stop timing an engine after this many seconds")
    ap.add_argument("--min-runs", type=int, default=10, help="minimum timed runs per case and engine")
    ap.add_argument("--engines", default="toroid,torch,torch.compile,opencv,pillow",
                    help="comma-separated subset of toroid,torch,torch.compile,opencv,pillow")
    ap.add_argument("--order", default="", choices=["", "interleaved", "blocks"],
                    help="how the engines' timed runs follow each other on a row: interleaved (one run of "
                         "each per round; the default on 1 thread) or blocks (each engine's runs back to back "
                         "after a pause; the default on more threads, where the engines' OpenMP thread pools, "
                         "which spin for a while after each parallel region, would otherwise compete for the "
                         "cores)")
    args = ap.parse_args()
    if not args.order:
        args.order = "interleaved" if args.threads == 1 or args.device == "cuda" else "blocks"
    if args.threads < 1:
        ap.error("--threads must be at least 1")
    if args.min_time <= 0 or args.max_time <= 0 or args.min_runs < 1:
        ap.error("--min-time and --max-time must be positive, --min-runs at least 1")
    try:
        re.compile(args.filter)
    except re.error as e:
        ap.error("invalid --filter regex: %s" % e)
    wanted = [e for e in args.engines.split(",") if e]
    for e in wanted:
        if e not in ("toroid", "torch", "torch.compile", "opencv", "pillow"):
            ap.error("unknown engine '%s'" % e)
    if args.quick and args.suite and args.suite != "quick":
        ap.error("--quick is --suite quick: give one of them")
    suite = "quick" if args.quick else (args.suite or "seeds")
    try:
        suite_cases = list_suites(find_toroid_binary(args.toroid), suite)[suite]
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        sys.exit("peers: error: cannot list the cases of suite '%s': %s" % (suite, e))

    toroid = None
    engines = []
    if args.device == "cuda":
        if torch is None or not torch.cuda.is_available():
            sys.exit("peers: error: --device cuda needs PyTorch with a CUDA device")
        if cv2 is not None or Image is not None:
            note("OpenCV and Pillow run on the CPU only: no cuda rows for them")
        if "toroid" in wanted:
            toroid = import_toroid()
            if toroid is not None:
                engines.append(ToroidEngine(toroid, args.threads, "cuda"))
    elif "toroid" in wanted:
        toroid = import_toroid()
        if toroid is not None:
            toroid.set_num_threads(args.threads)
            engines.append(ToroidEngine(toroid, args.threads))
    if torch is not None:
        torch.set_num_threads(args.threads)
        if "torch" in wanted:
            engines.append(TorchEngine(args.device))
        if "torch.compile" in wanted:
            if torch_at_least_2():
                engines.append(TorchEngine(args.device, compiled=True))
            else:
                note("torch.compile needs PyTorch >= 2 (this is %s): its column is skipped" % torch.__version__)
    if args.device == "cpu":
        if cv2 is not None and "opencv" in wanted:
            cv2.setNumThreads(args.threads)
            engines.append(OpenCVEngine())
        if Image is not None and "pillow" in wanted:
            engines.append(PillowEngine())  # Pillow resamples on one thread
            if args.threads > 1:
                note("Pillow has no thread setting: it runs on one thread")
    if not engines:
        sys.exit("peers: error: no engine is available")

    cases = select_cases(suite_cases, args.device, args.filter)
    if not cases:
        sys.exit("peers: error: no case of suite '%s' on device '%s' matches --filter '%s'" %
                 (suite, args.device, args.filter))
    for n in NOTES:
        print("note: " + n)
    if NOTES:
        print()
    copy_gbps = 0.0
    if args.device == "cuda":
        copy_gbps = measure_copy_gbps()
        print("device copy (torch, 1 GiB, CUDA events, median of 20): %.0f GB/s read + written\n" % copy_gbps)
    sys.stdout.flush()

    all_records, all_diffs = [], {}
    names = [e.name for e in engines]
    i = 0
    while i < len(cases):
        j = i
        while j < len(cases) and (cases[j].title, cases[j].device) == (cases[i].title, cases[i].device):
            j += 1
        table_records = []
        for c in cases[i:j]:
            recs, diffs = measure_case(c, engines, args)
            table_records += recs
            all_diffs[c.name] = diffs
        all_records += table_records
        sys.stdout.write(format_table(cases[i].title, cases[i].device, cases[i:j], table_records, all_diffs,
                                      names, args.threads, copy_gbps))
        sys.stdout.flush()
        i = j

    failures = [r for r in all_records if "error" in r]
    if failures:
        print("%d measurement(s) failed:" % len(failures))
        for r in failures:
            print("  %s on '%s': %s" % (r["engine"], r["case"], r["error"]))
        print()

    # Overall speed-ups of toroid over each peer: every row, and the rows whose result matches.
    ok = {(r["case"], r["engine"]): r for r in all_records if "error" not in r}
    dtype_of = {c.name: c.dtype for c in cases}
    for e in names:
        if e == "toroid" or "toroid" not in names:
            continue
        every, same = [], []
        for c in cases:
            a, t = ok.get((c.name, e)), ok.get((c.name, "toroid"))
            if a and t:
                every.append(a["median_us"] / t["median_us"])
                if not differs(all_diffs.get(c.name, {}).get(e), dtype_of[c.name]):
                    same.append(a["median_us"] / t["median_us"])
        if every:
            line = "Overall geometric mean speed-up of toroid over %s: %.2fx over %d cases" % (e, geomean(every),
                                                                                             len(every))
            if len(same) != len(every):
                line += (" (%.2fx over the %d with the same result)" % (geomean(same), len(same)) if same
                         else " (none with the same result)")
            print(line)

    if args.json:
        doc = {"machine": machine(toroid, args.device), "suite": suite, "records": all_records}
        if copy_gbps > 0:
            doc["machine"]["device_copy_gbps"] = copy_gbps
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, args.json)
        print("Results written to %s" % args.json)
    return 1 if failures and not any("error" not in r for r in all_records) else 0


if __name__ == "__main__":
    sys.exit(main())
