"""uint16, float16 and bfloat16 images in Python (docs/reference.md, Element types): NumPy and
torch inputs keep their dtype through the ops that take them, the compiled engine equals the
reference engine on each, to_dtype converts between every pair, ops that do not take these
dtypes say so in one line; on a GPU, CUDA tensors give the CPU's results bit for bit. With
torchvision 0.26 (the GPU machine), results equal torchvision.transforms.v2's."""

import unittest

import numpy as np

import toroid

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

try:
    import torchvision.transforms.v2.functional as TF
except ImportError:  # pragma: no cover
    TF = None

needs_torch = unittest.skipIf(torch is None, "PyTorch (python3-torch) is not installed")
has_cuda = torch is not None and torch.cuda.is_available()
has_uint16 = torch is not None and hasattr(torch, "uint16")

OPS = [
    [{"op": "flip", "dims": [-1]}],
    [{"op": "center_crop", "size": [30, 41]}],
    [{"op": "pad", "padding": [2, 1, 3, 0], "mode": "reflect"}],
    [{"op": "resize", "mode": "nearest-exact", "size": [40, 19]}],
    [{"op": "resize", "mode": "bilinear", "antialias": True, "size": [13, 17]}],
    [{"op": "resize", "mode": "bicubic", "size": [45, 60]}],
    [{"op": "convert", "dtype": "float32", "scale": True}],
    [{"op": "convert", "dtype": "uint8", "scale": True}],
]


def narrow_image(dtype, seed=0, shape=(2, 3, 27, 35)):
    rng = np.random.default_rng(seed)
    if dtype == "uint16":
        return rng.integers(0, 65536, size=shape, dtype=np.uint16)
    return rng.random(shape, dtype=np.float32)  # in [0, 1], as images are


def as_torch(x, dtype):
    t = torch.from_numpy(x)
    return t.to(getattr(torch, dtype)) if dtype != "uint16" else t


def same(a, b, ops=()):
    """Equal, or for a bilinear or bicubic resize (computed in float32, where a sum taken in
    another order may round to the other neighbour of a tie) within one unit of the last
    place of the dtype (1 for uint16)."""
    interpolates = any(op["op"] == "resize" and op["mode"] in ("bilinear", "bicubic") for op in ops)
    if torch is not None and isinstance(a, torch.Tensor):
        if a.dtype != b.dtype:
            return False
        a, b = a.float().numpy(), b.float().numpy()
    elif a.dtype != b.dtype:
        return False
    if not interpolates:
        return np.array_equal(a, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if a.dtype.kind in "ui":
        return np.abs(a64 - b64).max() <= 1
    ulp = np.spacing(np.abs(b.astype(np.float16 if a.dtype == np.float16 else np.float32))).astype(np.float64)
    if a.dtype != np.float16:  # bfloat16 given as float32: 7 bits of significand
        ulp = np.ldexp(1.0, np.floor(np.log2(np.maximum(np.abs(b64), 1e-30))).astype(int) - 7)
    return bool((np.abs(a64 - b64) <= np.maximum(ulp, 1e-4)).all())


class NumPyInputs(unittest.TestCase):
    def test_uint16_and_float16_arrays_keep_their_dtype_and_equal_the_reference(self):
        for dtype in ("uint16", "float16"):
            x = narrow_image(dtype).astype(dtype)
            for ops in OPS:
                with self.subTest(dtype=dtype, ops=ops):
                    got = toroid.Pipeline(ops)(x)
                    want = toroid.Pipeline(ops, engine="reference")(x)
                    self.assertTrue(same(got, want, ops))
                    if ops[0]["op"] != "convert":
                        self.assertEqual(got.dtype, np.dtype(dtype))

    def test_refused_ops_name_the_dtype(self):
        x = narrow_image("float16").astype(np.float16)
        with self.assertRaisesRegex(toroid.Error, "gaussian_blur: float16 images are not supported yet"):
            toroid.Pipeline([{"op": "gaussian_blur", "kernel_size": 3}])(x)
        with self.assertRaisesRegex(toroid.Error, "normalize needs float input"):
            toroid.Pipeline([{"op": "normalize", "mean": 0.5, "std": 0.2}])(narrow_image("uint16"))


@needs_torch
class TorchInputs(unittest.TestCase):
    def test_half_and_bfloat16_tensors(self):
        for dtype in ("float16", "bfloat16"):
            x = as_torch(narrow_image(dtype), dtype)
            for ops in OPS + [[{"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}]]:
                with self.subTest(dtype=dtype, ops=ops):
                    got = toroid.Pipeline(ops)(x)
                    want = toroid.Pipeline(ops, engine="reference")(x)
                    self.assertTrue(same(got, want, ops))
            # Moves of elements give the input's values.
            self.assertTrue(torch.equal(toroid.flip(x, [-1, -2]), x.flip([-1, -2])))

    def test_to_dtype_between_every_pair(self):
        names = ["uint8", "float32", "float16", "bfloat16"] + (["uint16"] if has_uint16 else [])
        for src in names:
            x = narrow_image("uint16" if src == "uint16" else "float32")
            t = torch.from_numpy(x) if src == "uint16" else torch.from_numpy(x).to(getattr(torch, src)) \
                if src != "uint8" else torch.from_numpy((x * 255).astype(np.uint8))
            for dst in names:
                for scale in (False, True):
                    with self.subTest(src=src, dst=dst, scale=scale):
                        got = toroid.convert(t, getattr(torch, dst), scale=scale)
                        self.assertEqual(got.dtype, getattr(torch, dst))
                        want = toroid.Pipeline([{"op": "convert", "dtype": dst, "scale": scale}], engine="reference")(t)
                        self.assertTrue(same(got, want))
                        if TF is not None and has_uint16 and src != dst and not (
                                t.is_floating_point() and not got.is_floating_point()) and (src, dst) != ("uint16", "float16"):
                            # torchvision 0.26 where its answer is defined (docs/reference.md)
                            self.assertTrue(same(got, TF.to_dtype(t, getattr(torch, dst), scale=scale)))

    def test_grid_sample_of_half_images_is_the_float32_answer_rounded_once(self):
        import torch.nn.functional as F
        g = torch.from_numpy((np.random.default_rng(4).random((2, 11, 13, 2)) * 2.4 - 1.2).astype(np.float32))
        for dtype in ("float16", "bfloat16"):
            x = as_torch(narrow_image(dtype, seed=4), dtype)
            grid = g.to(x.dtype)
            for mode in ("nearest", "bilinear", "bicubic"):
                with self.subTest(dtype=dtype, mode=mode):
                    got = toroid.grid_sample(x, grid, mode=mode, padding_mode="border")
                    self.assertEqual(got.dtype, x.dtype)
                    want = F.grid_sample(x.float(), grid.float(), mode=mode, padding_mode="border",
                                         align_corners=False).to(x.dtype)
                    self.assertTrue(same(got, want, [{"op": "resize", "mode": mode}]))
                    if mode == "nearest":  # picks elements: their values exactly
                        self.assertTrue(torch.equal(got, want))
                    if has_cuda:  # the CPU's answer, bit for bit
                        on_gpu = toroid.grid_sample(x.cuda(), grid.cuda(), mode=mode, padding_mode="border")
                        self.assertTrue(torch.equal(on_gpu.cpu(), got))
        with self.assertRaisesRegex(toroid.Error, "grid_sample: uint16 images are not supported"):
            toroid.grid_sample(narrow_image("uint16"), g.numpy())

    @unittest.skipIf(TF is None or not has_uint16, "torchvision.transforms.v2 and torch.uint16 (PyTorch 2.3+) needed")
    def test_resizes_equal_torchvision_v2(self):
        for dtype in ("float16", "bfloat16"):
            x = as_torch(narrow_image(dtype, seed=3), dtype)
            for interp, mode in ((TF.InterpolationMode.BILINEAR, "bilinear"), (TF.InterpolationMode.BICUBIC, "bicubic")):
                for aa in (False, True):
                    with self.subTest(dtype=dtype, mode=mode, aa=aa):
                        got = toroid.resize(x, [19, 50], interpolation=mode, antialias=aa)
                        want = TF.resize(x, [19, 50], interpolation=interp, antialias=aa)
                        self.assertTrue(same(got, want, [{"op": "resize", "mode": mode}]))
                        # one rounding of a float32 result: where toroid's float32 sum and
                        # PyTorch's differ in the last bit, a tie may round the other way
                        self.assertLess(int((got != want).sum()), max(1, want.numel() // 100))
            y = TF.normalize(x, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
            self.assertTrue(torch.equal(toroid.normalize(x, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]), y))


@unittest.skipIf(not has_cuda, "no CUDA device")
class CudaTensors(unittest.TestCase):
    def test_cuda_equals_cpu_bit_for_bit(self):
        for dtype in ["float16", "bfloat16"] + (["uint16"] if has_uint16 else []):
            x = as_torch(narrow_image(dtype, seed=5), dtype)
            for ops in OPS:
                with self.subTest(dtype=dtype, ops=ops):
                    p = toroid.Pipeline(ops)
                    got = p(x.cuda())
                    self.assertEqual(got.device.type, "cuda")
                    self.assertTrue(same(got.cpu(), p(x), ops))


if __name__ == "__main__":
    unittest.main()
