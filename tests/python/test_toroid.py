"""Tests of the Python package toroid (python/toroid, ctypes over libtoroid_c.so): every op
against PyTorch on NumPy and torch inputs in both layouts and on sliced views, errors as
toroid.Error, Pipeline from JSON, and toroid.compile tracing several ops into one pipeline."""

import json
import os
import unittest

import numpy as np

import toroid

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - Debian's python3-torch is a test dependency
    torch = None

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFORMANCE = os.path.join(ROOT, "tests", "data", "conformance")
FLOAT_TOL = 1e-4  # the conformance tolerance for float32

needs_torch = unittest.skipIf(torch is None, "PyTorch (python3-torch) is not installed")


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.uint8:
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    return rng.random(shape, dtype=np.float32)


def channels_last_numpy(x):
    """The same values as `x` (N, C, H, W) held in NHWC memory."""
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)


def variants(x):
    """(label, input) pairs of the same values: numpy and torch, contiguous and
    channels-last."""
    out = [("numpy CF", x), ("numpy CL", channels_last_numpy(x))]
    if torch is not None:
        t = torch.from_numpy(x.copy())
        out += [("torch CF", t), ("torch CL", t.contiguous(memory_format=torch.channels_last))]
    return out


def as_numpy(y):
    return y.numpy() if torch is not None and isinstance(y, torch.Tensor) else y


class Helpers(unittest.TestCase):
    def assertClose(self, got, expected, dtype, label=""):
        got, expected = as_numpy(got), as_numpy(expected)
        self.assertEqual(got.shape, expected.shape, label)
        self.assertEqual(got.dtype, expected.dtype, label)
        if dtype == np.uint8:
            diff = np.abs(got.astype(np.int32) - expected.astype(np.int32))
            self.assertEqual(int(diff.max()) if diff.size else 0, 0, "%s: %d uint8 values differ" %
                             (label, int((diff > 0).sum())))
        else:
            self.assertLessEqual(float(np.abs(got - expected).max()), FLOAT_TOL, label)

    def check_op(self, toroid_fn, torch_fn, x, dtype):
        """toroid_fn on every variant of x equals torch_fn on x; the result has the kind of
        the input and, for channels-last inputs, channels-last memory."""
        expected = as_numpy(torch_fn(torch.from_numpy(x.copy())))
        for label, v in variants(x):
            y = toroid_fn(v)
            self.assertIs(type(y), type(v), label)
            self.assertClose(y, expected, dtype, label)
            if label == "torch CL" and y.dim() == 4 and y.shape[1] > 1:
                self.assertTrue(y.is_contiguous(memory_format=torch.channels_last), label)


@needs_torch
class InterpolateTest(Helpers):
    def test_float32_modes(self):
        x = sample((2, 3, 17, 23), np.float32)
        cases = [
            dict(size=(9, 30), mode="nearest"),
            dict(size=(9, 30), mode="nearest-exact"),
            dict(size=(31, 11), mode="bilinear", align_corners=False),
            dict(size=(31, 11), mode="bilinear", align_corners=True),
            dict(size=(8, 12), mode="bicubic", align_corners=False),
            dict(size=(8, 12), mode="bilinear", antialias=True, align_corners=False),
            dict(size=(8, 30), mode="bicubic", antialias=True, align_corners=False),
            dict(scale_factor=0.6, mode="bilinear", align_corners=False),
            dict(scale_factor=(1.7, 0.45), mode="nearest", recompute_scale_factor=True),
        ]
        for kw in cases:
            with self.subTest(**kw):
                self.check_op(lambda v: toroid.interpolate(v, **kw), lambda t: F.interpolate(t, **kw), x, np.float32)

    def test_uint8_nearest_against_torch(self):
        x = sample((1, 3, 20, 14), np.uint8)
        for mode in ("nearest", "nearest-exact"):
            with self.subTest(mode=mode):
                self.check_op(lambda v: toroid.interpolate(v, size=(7, 29), mode=mode),
                              lambda t: F.interpolate(t, size=(7, 29), mode=mode), x, np.uint8)

    def test_uint8_bilinear_matches_reference_engine(self):
        # PyTorch 1.13 computes uint8 bilinear/bicubic through float; toroid follows the
        # integer path of PyTorch >= 2.1, checked here against its reference engine.
        x = sample((1, 3, 40, 33), np.uint8)
        for kw in (dict(size=(17, 50), mode="bilinear"), dict(size=(17, 12), mode="bicubic", antialias=True)):
            with self.subTest(**kw):
                op = {"op": "resize", "size": list(kw["size"]), "mode": kw["mode"],
                      "antialias": kw.get("antialias", False)}
                expected = toroid.Pipeline([op], engine="reference")(x)
                for label, v in variants(x):
                    self.assertClose(toroid.interpolate(v, **kw), expected, np.uint8, label)

    def test_sliced_views(self):
        base = sample((2, 4, 30, 40), np.float32)
        x = base[:, 1:, 3:25:2, ::3]  # strided in every dim, no copy
        expected = F.interpolate(torch.from_numpy(np.ascontiguousarray(x)), size=(5, 9), mode="bilinear",
                                 align_corners=False).numpy()
        self.assertClose(toroid.interpolate(x, size=(5, 9), mode="bilinear"), expected, np.float32, "numpy view")
        t = torch.from_numpy(base)[:, 1:, 3:25:2, ::3]
        self.assertFalse(t.is_contiguous())
        self.assertClose(toroid.interpolate(t, size=(5, 9), mode="bilinear"), expected, np.float32, "torch view")
        # A negative-stride NumPy view is copied first, and still right.
        flipped = base[:, :, ::-1]
        expected = F.interpolate(torch.from_numpy(np.ascontiguousarray(flipped)), size=(5, 9), mode="nearest").numpy()
        self.assertClose(toroid.interpolate(flipped, size=(5, 9)), expected, np.float32, "negative strides")

    def test_ranks(self):
        x = sample((3, 12, 10), np.float32)
        expected = F.interpolate(torch.from_numpy(x)[None], size=(6, 5), mode="bilinear",
                                 align_corners=False)[0].numpy()
        y = toroid.interpolate(x, size=(6, 5), mode="bilinear")
        self.assertEqual(y.shape, (3, 6, 5))
        self.assertClose(y, expected, np.float32)
        y2 = toroid.interpolate(torch.from_numpy(x[0]), size=(6, 5), mode="bilinear")
        self.assertEqual(tuple(y2.shape), (6, 5))
        self.assertClose(y2, expected[0], np.float32)
        # A (C, H, W) view of HWC memory comes back channels-last as well.
        hwc = np.ascontiguousarray(x.transpose(1, 2, 0))
        y3 = toroid.interpolate(hwc.transpose(2, 0, 1), size=(6, 5), mode="bilinear")
        self.assertEqual(y3.strides[0], 4)
        self.assertClose(y3, expected, np.float32)


@needs_torch
class ConformanceFilesTest(Helpers):
    """uint8 bilinear/bicubic cases generated by PyTorch 2.11, run through toroid.Pipeline."""

    def test_uint8_resize_cases(self):
        with open(os.path.join(CONFORMANCE, "cases.json")) as f:
            cases = json.load(f)["cases"]
        picked = []
        for c in cases:
            d = os.path.join(CONFORMANCE, c["name"])
            with open(os.path.join(d, "pipeline.json")) as f:
                ops = json.load(f)
            if (len(ops) == 1 and ops[0]["op"] == "resize" and ops[0].get("mode") in ("bilinear", "bicubic")
                    and np.load(os.path.join(d, "input.npy")).dtype == np.uint8):
                picked.append((c, ops))
        self.assertGreater(len(picked), 0)
        for c, ops in picked[:4]:
            with self.subTest(case=c["name"]):
                d = os.path.join(CONFORMANCE, c["name"])
                x = np.load(os.path.join(d, "input.npy"))
                if c["input_layout"] == "channels_last" and x.ndim == 4:
                    x = channels_last_numpy(x)
                expected = np.load(os.path.join(d, "expected.npy"))
                got = toroid.Pipeline(ops, base_dir=d)(x)
                self.assertClose(got.reshape(expected.shape), expected, np.uint8, c["name"])


@needs_torch
class GridTest(Helpers):
    theta = [[0.8, -0.3, 0.1], [0.25, 0.9, -0.05]]

    def test_affine(self):
        x = sample((2, 3, 15, 21), np.float32)
        for mode in ("bilinear", "nearest", "bicubic"):
            for padding, ac in (("zeros", False), ("border", True), ("reflection", False)):
                with self.subTest(mode=mode, padding=padding, align_corners=ac):
                    def ref(t):
                        theta = torch.tensor([self.theta] * 2, dtype=torch.float32)
                        grid = F.affine_grid(theta, [2, 3, 11, 13], align_corners=ac)
                        return F.grid_sample(t, grid, mode=mode, padding_mode=padding, align_corners=ac)
                    self.check_op(lambda v: toroid.affine(v, self.theta, size=(11, 13), mode=mode,
                                                          padding_mode=padding, align_corners=ac), ref, x, np.float32)

    def test_affine_theta_forms(self):
        x = sample((2, 3, 9, 10), np.float32)
        a = toroid.affine(x, self.theta)
        b = toroid.affine(x, np.array([self.theta] * 2))
        c = toroid.affine(x, torch.tensor([self.theta]), size=(2, 3, 9, 10))
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
        with self.assertRaisesRegex(toroid.Error, "one theta for the whole batch"):
            toroid.affine(x, np.array([self.theta, [[1, 0, 0], [0, 1, 0]]]))
        with self.assertRaisesRegex(toroid.Error, "theta must be a 2x3 matrix"):
            toroid.affine(x, [[1, 0], [0, 1]])

    def test_grid_sample(self):
        x = sample((2, 3, 12, 14), np.float32)
        rng = np.random.default_rng(5)
        grid = (rng.random((2, 7, 9, 2), dtype=np.float32) * 2.4 - 1.2)
        for mode in ("bilinear", "nearest", "bicubic"):
            for padding in ("zeros", "border", "reflection"):
                with self.subTest(mode=mode, padding=padding):
                    self.check_op(
                        lambda v: toroid.grid_sample(v, grid, mode=mode, padding_mode=padding),
                        lambda t: F.grid_sample(t, torch.from_numpy(grid), mode=mode, padding_mode=padding,
                                                align_corners=False), x, np.float32)
        # Grids as torch tensors, float64, and strided views work too.
        t = torch.from_numpy(x)
        expected = F.grid_sample(t, torch.from_numpy(grid), align_corners=True)
        y = toroid.grid_sample(t, torch.from_numpy(grid.astype(np.float64)), align_corners=True)
        self.assertClose(y, expected, np.float32, "float64 grid")
        wide = np.zeros((2, 7, 9, 4), dtype=np.float32)
        wide[..., 1::2] = grid
        y = toroid.grid_sample(x, wide[..., 1::2], align_corners=True)
        self.assertClose(y, expected, np.float32, "strided grid")

    def test_grid_errors(self):
        x = sample((2, 3, 12, 14), np.float32)
        with self.assertRaisesRegex(toroid.Error, "batch 1 but the input has batch 2"):
            toroid.grid_sample(x, np.zeros((1, 4, 4, 2), np.float32))
        with self.assertRaisesRegex(toroid.Error, "last dim of size 2"):
            toroid.grid_sample(x, np.zeros((2, 4, 4, 3), np.float32))
        with self.assertRaisesRegex(toroid.Error, "needs float32 input"):
            toroid.grid_sample(x.astype(np.uint8), np.zeros((2, 4, 4, 2), np.float32))


@needs_torch
class SimpleOpsTest(Helpers):
    def test_flip(self):
        for dtype in (np.uint8, np.float32):
            x = sample((2, 3, 7, 9), dtype)
            for dims in ([3], [-2], [1, 2], (0, -1), 2):
                with self.subTest(dtype=dtype, dims=dims):
                    d = [dims] if isinstance(dims, int) else list(dims)
                    self.check_op(lambda v: toroid.flip(v, dims), lambda t: t.flip(d), x, dtype)
        hw = sample((5, 6), np.uint8)
        np.testing.assert_array_equal(toroid.flip(hw, -1), hw[:, ::-1])
        np.testing.assert_array_equal(toroid.flip(hw, 0), hw[::-1])
        with self.assertRaisesRegex(toroid.Error, "out of range"):
            toroid.flip(hw, 2)

    def test_crop(self):
        x = sample((1, 3, 10, 12), np.uint8)
        for top, left, h, w in ((2, 3, 5, 4), (-3, 8, 6, 7), (0, 0, 10, 12), (9, -2, 4, 20)):
            with self.subTest(top=top, left=left, h=h, w=w):
                def ref(t):  # zeros where the region leaves the image
                    out = torch.zeros(t.shape[:2] + (h, w), dtype=t.dtype)
                    for i in range(h):
                        for j in range(w):
                            if 0 <= top + i < t.shape[2] and 0 <= left + j < t.shape[3]:
                                out[:, :, i, j] = t[:, :, top + i, left + j]
                    return out
                self.check_op(lambda v: toroid.crop(v, top, left, h, w), ref, x, np.uint8)

    def test_convert(self):
        u8 = sample((1, 3, 6, 7), np.uint8)
        self.check_op(lambda v: toroid.convert(v, "float32", scale=True), lambda t: t.float() / 255, u8, np.float32)
        self.check_op(lambda v: toroid.convert(v, torch.float32), lambda t: t.float(), u8, np.float32)
        f = sample((1, 3, 6, 7), np.float32)
        # torchvision's to_dtype float -> uint8 with scale: x * (255 + 1 - eps), truncated.
        self.check_op(lambda v: toroid.convert(v, np.uint8, scale=True),
                      lambda t: t.mul(256 - 1e-3).to(torch.uint8), f, np.uint8)

    def test_normalize(self):
        x = sample((2, 3, 5, 6), np.float32)
        mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
        self.check_op(lambda v: toroid.normalize(v, mean, std),
                      lambda t: (t - torch.tensor(mean)[:, None, None]) / torch.tensor(std)[:, None, None], x,
                      np.float32)
        self.check_op(lambda v: toroid.normalize(v, 0.5, np.float32(2)), lambda t: (t - 0.5) / 2, x, np.float32)


class ErrorsTest(unittest.TestCase):
    def test_error_is_value_error(self):
        self.assertTrue(issubclass(toroid.Error, ValueError))

    def test_bad_arguments(self):
        x = sample((1, 3, 8, 8), np.float32)
        cases = [
            (lambda: toroid.interpolate(x, size=4, mode="linear"), "unknown mode"),
            (lambda: toroid.interpolate(x, size=4, scale_factor=2.0), "not several"),
            (lambda: toroid.interpolate(x), "needs 'size', 'scale_factor'"),
            (lambda: toroid.interpolate(x, size=4, mode="nearest", align_corners=False), "align_corners"),
            (lambda: toroid.interpolate(x, size=4, mode="nearest", antialias=True), "antialias"),
            (lambda: toroid.interpolate(x, size=(4, 4, 4)), "pair"),
            (lambda: toroid.interpolate(x.astype(np.float64), size=4), "float64 is not supported yet"),
            (lambda: toroid.interpolate(x.astype(np.int32), size=4), "dtype int32"),
            (lambda: toroid.interpolate(x[None], size=4), "5 dims"),
            (lambda: toroid.interpolate(x[0, 0, 0], size=4), "1 dims"),
            (lambda: toroid.interpolate([[1, 2]], size=4), "must be a numpy.ndarray, a torch.Tensor or an array that exports DLPack"),
            (lambda: toroid.crop(x, 0, 0, 0, 3), "must be positive"),
            (lambda: toroid.convert(x, "int16"), "unknown dtype"),
            (lambda: toroid.normalize(x, [1, 2], [1, 2]), "3 channels"),
            (lambda: toroid.normalize(x, 0, 0), "must not contain 0"),
            (lambda: toroid.interpolate(np.zeros((1, 3, 0, 4), np.float32), size=4), "zero-size"),
            (lambda: toroid.Pipeline([{"op": "blur"}]), "unknown op 'blur'"),
            (lambda: toroid.Pipeline("[{"), "not valid JSON"),
            (lambda: toroid.Pipeline([{"op": "flip", "dims": [0], "extra": 1}]), "unknown field 'extra'"),
            (lambda: toroid.Pipeline([{"op": "grid_sample", "grid": "missing.npy"}]), "missing.npy"),
            (lambda: toroid.Pipeline([{"op": "grid_sample"}])(x), "no grid given"),
            (lambda: toroid.set_num_threads(-1), "at least 0"),
            (lambda: toroid.set_default_engine("fast"), "unknown engine"),
            (lambda: toroid.Pipeline([], engine="fast")(x), "unknown engine 'fast'"),
        ]
        for fn, text in cases:
            with self.subTest(text=text):
                with self.assertRaises(toroid.Error) as ctx:
                    fn()
                self.assertIn(text, str(ctx.exception))

    @needs_torch
    def test_torch_specific(self):
        t = torch.zeros((1, 3, 4, 4), dtype=torch.float64)
        with self.assertRaisesRegex(toroid.Error, "float64 is not supported yet"):
            toroid.flip(t, -1)
        with self.assertRaisesRegex(toroid.Error, "dtype torch.int64"):
            toroid.flip(t.long(), -1)
        with self.assertRaisesRegex(toroid.Error, "runs on the CPU"):
            toroid.flip(torch.zeros((1, 3, 4, 4), device="meta"), -1)
        with self.assertRaisesRegex(toroid.Error, "strided"):
            toroid.flip(torch.zeros((3, 4)).to_sparse(), -1)


@needs_torch
class PipelineTest(Helpers):
    def test_json_pipeline(self):
        ops = [{"op": "resize", "size": [12, 16], "mode": "bilinear", "antialias": True},
               {"op": "flip", "dims": [-1]},
               {"op": "convert", "dtype": "float32", "scale": True},
               {"op": "normalize", "mean": [0.5], "std": [0.25]}]
        p = toroid.Pipeline(ops)
        self.assertEqual(len(p), 4)
        self.assertIn('"op":"normalize"', p.to_json())
        x = sample((1, 3, 30, 40), np.float32)
        x8 = (x * 255).astype(np.uint8)
        expected = toroid.Pipeline(ops, engine="reference")(x8)
        for label, v in variants(x8):
            y = p(v)
            self.assertIs(type(y), type(v), label)
            self.assertClose(y, expected, np.float32, label)
        # The same JSON as text.
        self.assertClose(toroid.Pipeline(json.dumps(ops))(x8), expected, np.float32)

    def test_grid_in_pipeline(self):
        x = sample((1, 2, 6, 7), np.float32)
        grid = np.random.default_rng(1).random((1, 4, 5, 2), dtype=np.float32) * 2 - 1
        p = toroid.Pipeline([{"op": "grid_sample", "grid": grid, "mode": "nearest"}, {"op": "flip", "dims": [3]}])
        self.assertIn("<array>", p.to_json())
        expected = F.grid_sample(torch.from_numpy(x), torch.from_numpy(grid), mode="nearest",
                                 align_corners=False).flip(3)
        self.assertClose(p(x), expected, np.float32)

    def test_threads_and_engine_settings(self):
        x = sample((1, 3, 64, 64), np.float32)
        expected = F.interpolate(torch.from_numpy(x), size=(20, 21), mode="bicubic", antialias=True,
                                 align_corners=False)
        old = toroid.get_num_threads()
        try:
            toroid.set_num_threads(2)
            self.assertEqual(toroid.get_num_threads(), 2)
            self.assertClose(toroid.interpolate(x, size=(20, 21), mode="bicubic", antialias=True), expected,
                             np.float32)
        finally:
            toroid.set_num_threads(old)
        old = toroid.get_default_engine()
        try:
            toroid.set_default_engine("reference")
            self.assertClose(toroid.interpolate(x, size=(20, 21), mode="bicubic", antialias=True), expected,
                             np.float32)
        finally:
            toroid.set_default_engine(old)

    def test_input_is_not_copied(self):
        from toroid import _core
        x = channels_last_numpy(sample((1, 3, 5, 6), np.uint8))[:, :, 1:, ::2]
        self.assertEqual(_core.adapt(x).ptr, x.ctypes.data)
        t = torch.from_numpy(sample((2, 3, 5, 6), np.float32))[1:, :, :, 2:]
        a = _core.adapt(t)
        self.assertEqual(a.ptr, t.data_ptr())
        self.assertEqual(a.strides, t.stride())


@needs_torch
class CompileTest(Helpers):
    def test_traces_into_one_pipeline(self):
        calls = []

        @toroid.compile
        def preprocess(x, size=(24, 20)):
            calls.append(x)
            self.assertIsInstance(x, toroid.Traced)
            x = toroid.interpolate(x, size=size, mode="bilinear", antialias=True)
            x = toroid.crop(x, 2, 1, 20, 16)
            x = toroid.convert(x, "float32", scale=True)
            x = toroid.flip(x, -1)
            return toroid.normalize(x, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])

        x = sample((2, 3, 50, 40), np.uint8)
        p = preprocess.pipeline(x)
        self.assertIsInstance(p, toroid.Pipeline)
        self.assertEqual(len(p), 5)
        self.assertEqual(len(calls), 1)
        self.assertIn("kernel", preprocess.explain(x))

        # The same result as the ops one by one, through the reference engine.
        step = x
        for op in p.ops:
            step = toroid.Pipeline([op], engine="reference")(step)
        for label, v in variants(x):
            y = preprocess(v)
            self.assertIs(type(y), type(v), label)
            self.assertClose(y, step, np.float32, label)
        # Traced once per input spec: numpy and torch variants of a layout share nothing,
        # but calling again with the same spec does not trace again.
        n = len(calls)
        preprocess(x)
        self.assertEqual(len(calls), n)
        preprocess(x, size=(30, 30))
        self.assertEqual(len(calls), n + 1)

    def test_traced_shape_and_errors(self):
        seen = {}

        @toroid.compile
        def half(x):
            seen["ndim"] = x.ndim
            seen["in"] = x.shape
            y = toroid.interpolate(x, scale_factor=0.5, mode="nearest")
            seen["out"] = y.shape
            seen["dtype"] = toroid.convert(y, "float32").dtype
            return toroid.crop(y, 0, 0, y.shape[-2] - 1, y.shape[-1])

        y = half(sample((3, 10, 12), np.uint8))
        self.assertEqual(seen, {"ndim": 3, "in": (3, 10, 12), "out": (3, 5, 6), "dtype": "float32"})
        self.assertEqual(y.shape, (3, 4, 6))

        with self.assertRaisesRegex(toroid.Error, "must return the result of toroid ops"):
            toroid.compile(lambda x: 3)(sample((4, 4), np.uint8))
        with self.assertRaisesRegex(toroid.Error, "traces toroid ops only"):
            toroid.compile(lambda x: x.permute(0, 1))(sample((4, 4), np.uint8))

    def test_nested_and_pipeline_inside(self):
        inner = toroid.compile(lambda x: toroid.flip(x, -1))
        norm = toroid.Pipeline([{"op": "convert", "dtype": "float32"}])

        @toroid.compile(engine="compiled", threads=1)
        def outer(x):
            return norm(inner(toroid.crop(x, 1, 1, 3, 3)))

        x = sample((1, 1, 5, 5), np.uint8)
        self.assertEqual(len(outer.pipeline(x)), 3)
        np.testing.assert_array_equal(outer(x), x[:, :, 1:4, 1:4][..., ::-1].astype(np.float32))


class DlpackArray:
    """An array of some other framework: it exports DLPack and nothing else toroid knows."""

    def __init__(self, array):
        self.array = array
        self.exports = 0

    def __dlpack__(self, stream=None):
        self.exports += 1
        return self.array.__dlpack__() if stream is None else self.array.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


@unittest.skipUnless(hasattr(np.ndarray, "__dlpack__"), "this NumPy exports no DLPack")
class DlpackTest(Helpers):
    def test_arrays_of_other_frameworks_come_in_without_a_copy(self):
        pipe = toroid.Pipeline([{"op": "resize", "mode": "bilinear", "antialias": True, "size": [13, 17]},
                                {"op": "flip", "dims": [-1]}])
        x = sample((2, 3, 30, 41), np.uint8, seed=7)
        for label, v in [("CF", x), ("CL", channels_last_numpy(x)), ("sliced", sample((2, 3, 30, 50), np.uint8)[..., 3:44])]:
            with self.subTest(label):
                wrapped = DlpackArray(v)
                y = pipe(wrapped)
                self.assertIsInstance(y, np.ndarray)
                self.assertEqual(wrapped.exports, 1)
                np.testing.assert_array_equal(y, pipe(v))
                # the memory is read in place: a change to it shows in the next result
                v[0, 0, 0, :] = 255 - v[0, 0, 0, :]
                np.testing.assert_array_equal(pipe(DlpackArray(v)), pipe(v))

    def test_what_toroid_cannot_take_is_named(self):
        with self.assertRaises(toroid.Error) as ctx:
            toroid.Pipeline([{"op": "flip", "dims": [-1]}])(DlpackArray(np.zeros((3, 4, 5), np.int16)))
        self.assertIn("DLPack dtype (code 0, 16 bits)", str(ctx.exception))
        with self.assertRaises(toroid.Error) as ctx:
            toroid.Pipeline([{"op": "flip", "dims": [-1]}])(DlpackArray(np.zeros((5,), np.uint8)))
        self.assertIn("got 1 dims", str(ctx.exception))
        with self.assertRaises(toroid.Error) as ctx:
            toroid.Pipeline([{"op": "flip", "dims": [-1]}])(object())
        self.assertIn("exports DLPack", str(ctx.exception))


if __name__ == "__main__":
    unittest.main()
