"""Tests of toroid.transforms' adjust_gamma, adjust_hue, autocontrast and equalize against NumPy
float32 formulas written from torchvision 0.26's source (every float32 op rounded on its own;
PyTorch's pow of a tensor by a scalar: its special exponents, else pow in double rounded to
float32; to_dtype's x * float(1/255) and x * float(255.999) truncated), uint8 bit for bit and
float32 within 1e-5, both layouts, one and three channels, images and batches; torchvision's
checks and exception types; ColorJitter's hue draw and RandomAutocontrast's and
RandomEqualize's coins against
torch's generator under one seed."""

import unittest

import numpy as np

import toroid
import toroid.transforms as T
import toroid.transforms.functional as F
from support import inputs
from test_color import ColorCase, make, needs_torch, np_brightness, np_contrast, np_saturation, torch

f32 = np.float32
TO_FLOAT = f32(1.0 / 255.0)
TO_BYTE = f32(255.0 + 1.0 - 1e-3)


def to_float(x):
    return x.astype(f32) * TO_FLOAT if x.dtype == np.uint8 else x.astype(f32)


def back(v, dtype):
    if dtype != np.uint8:
        return v.astype(f32)
    return np.clip(v * TO_BYTE, f32(0), f32(255)).astype(np.uint8)


def np_pow(x, gamma):
    g = f32(gamma)
    with np.errstate(all="ignore"):
        special = {0.0: lambda: np.ones_like(x), 1.0: lambda: x, 0.5: lambda: np.sqrt(x),
                   -0.5: lambda: f32(1) / np.sqrt(x), -1.0: lambda: f32(1) / x, 2.0: lambda: x * x,
                   3.0: lambda: x * x * x, -2.0: lambda: f32(1) / (x * x)}
        if float(g) in special:
            return special[float(g)]().astype(f32)
        return np.power(x.astype(np.float64), np.float64(g)).astype(f32)


def np_gamma(x, gamma, gain=1.0):
    v = np_pow(to_float(x), gamma)
    if gain != 1.0:
        v = np.clip(v * f32(gain), f32(0), f32(1))
    return back(v, x.dtype)


def np_fmod1(a):
    return np.fmod(a, f32(1)).astype(f32)


def np_hue(x, factor):
    if x.shape[-3] == 1:
        return x
    img = to_float(x)
    r, g, b = img[..., 0, :, :], img[..., 1, :, :], img[..., 2, :, :]
    maxc, minc = np.maximum(np.maximum(r, g), b), np.minimum(np.minimum(r, g), b)
    eqc = maxc == minc
    rng = maxc - minc
    one = f32(1)
    s = rng / np.where(eqc, one, maxc)
    d = np.where(eqc, one, rng)
    rc, gc, bc = (maxc - r) / d, (maxc - g) / d, (maxc - b) / d
    neq_r, eq_g = maxc != r, maxc == g
    hg = ((rc + f32(2)) - bc) * (eq_g & neq_r).astype(f32)
    hr = (bc - gc) * (~neq_r).astype(f32)
    hb = ((gc + f32(4)) - rc) * (neq_r & ~eq_g).astype(f32)
    h = (hr + hg) + hb
    h = np_fmod1(h * f32(1.0 / 6.0) + one)
    h = np_fmod1(h + f32(factor))
    h = np.where(h < 0, h + one, h).astype(f32)
    h6 = h * f32(6)
    i = np.floor(h6)
    f = h6 - i
    i = i.astype(np.int32) % 6
    sxf = s * f
    oms = one - s
    q = np.clip((one - sxf) * maxc, f32(0), one)
    t = np.clip((sxf + oms) * maxc, f32(0), one)
    p = np.clip(oms * maxc, f32(0), one)
    vpqt = np.stack((maxc, p, q, t), axis=-3)
    table = np.array([[0, 2, 1, 1, 3, 0], [3, 0, 0, 2, 1, 1], [1, 1, 3, 0, 0, 2]])
    out = np.stack([np.take_along_axis(vpqt, table[c][i][..., None, :, :], axis=-3)[..., 0, :, :] for c in range(3)],
                   axis=-3)
    return back(out, x.dtype)


def np_autocontrast(x):
    bound = f32(255) if x.dtype == np.uint8 else f32(1)
    v = x.astype(f32)
    lo, hi = v.min(axis=(-2, -1), keepdims=True), v.max(axis=(-2, -1), keepdims=True)
    same = hi == lo
    inv = np.where(same, f32(1), (hi - lo) * f32(1.0 / float(bound))).astype(f32)
    lo = np.where(same, f32(0), lo).astype(f32)
    out = np.clip((v - lo) / inv, f32(0), bound)
    return out.astype(np.uint8) if x.dtype == np.uint8 else out.astype(f32)


def np_equalize(x):
    """torchvision's equalize_image: the uint8 image's histogram per image and channel, its
    cumulative sum and PIL's table in integer arithmetic; float through uint8 and back."""
    b = x if x.dtype == np.uint8 else np.clip(x.astype(f32) * TO_BYTE, f32(0), f32(255)).astype(np.uint8)
    flat = b.reshape(-1, b.shape[-2] * b.shape[-1])
    out = np.empty_like(flat)
    for k, row in enumerate(flat):
        hist = np.bincount(row, minlength=256).astype(np.int64)
        cum = np.cumsum(hist)
        step = (row.size - hist[int(row.max())]) // 255
        if step == 0:
            out[k] = row
            continue
        lut = np.concatenate([[0], np.clip((cum[:-1] + step // 2) // step, 0, 255)]).astype(np.uint8)
        out[k] = lut[row]
    out = out.reshape(b.shape)
    return out if x.dtype == np.uint8 else (out.astype(f32) * TO_FLOAT).astype(f32)


@needs_torch
class Functional(ColorCase):
    SHAPES = [(3, 5, 7), (2, 3, 4, 9), (1, 6, 5), (2, 1, 3, 4)]

    def inputs(self):
        for x in inputs(make, self.SHAPES, first_seed=100):
            yield x.clamp(0, 1) if x.is_floating_point() else x  # gamma of a negative is NaN

    def test_adjust_gamma(self):
        for x in self.inputs():
            a = x.numpy()
            for gamma, gain in ((2.2, 1), (0.5, 1.3), (3, 1), (0, 1), (1, 0.7), (0.37, 2)):
                with self.subTest(shape=a.shape, dtype=a.dtype, gamma=gamma, gain=gain):
                    self.check(F.adjust_gamma(x, gamma, gain), np_gamma(a, gamma, gain))

    def test_adjust_hue(self):
        for x in self.inputs():
            a = x.numpy()
            for factor in (0.0, 0.27, -0.5, 0.5, -0.13):
                with self.subTest(shape=a.shape, dtype=a.dtype, factor=factor):
                    self.check(F.adjust_hue(x, factor), np_hue(a, factor))

    def test_autocontrast(self):
        for x in self.inputs():
            self.check(F.autocontrast(x), np_autocontrast(x.numpy()))
        flat = torch.full((3, 4, 5), 77, dtype=torch.uint8)
        self.check(F.autocontrast(flat), flat.numpy())  # min == max: unchanged

    def test_equalize(self):
        for x in self.inputs():
            self.check(F.equalize(x), np_equalize(x.numpy()))
        # A larger image, so that step is not 0 (at least 255 pixels besides the top value's).
        big = make((2, 3, 40, 30), np.uint8, 9)
        self.check(F.equalize(big), np_equalize(big.numpy()))
        self.assertFalse(np.array_equal(F.equalize(big).numpy(), big.numpy()))

    def test_checks_and_wording(self):
        x = make((3, 4, 4), np.uint8, 1)
        with self.assertRaises(ValueError) as e:
            F.adjust_gamma(x, -0.5)
        self.assertEqual(str(e.exception), "Gamma should be a non-negative real number")
        with self.assertRaises(ValueError) as e:
            F.adjust_hue(x, 0.6)
        self.assertEqual(str(e.exception), "hue_factor (0.6) is not in [-0.5, 0.5].")
        four = make((4, 4, 4), np.uint8, 2)
        for fn in (lambda t: F.adjust_hue(t, 0.1), F.autocontrast):
            with self.assertRaises(TypeError) as e:
                fn(four)
            self.assertIn("permitted channel values are 1 or 3, but found 4", str(e.exception))
        self.assertEqual(F.adjust_gamma(four, 2).shape, (4, 4, 4))  # any channel count
        with self.assertRaises(TypeError):
            F.adjust_gamma(x, "2")


@needs_torch
class RandomDraws(ColorCase):
    def test_color_jitter_with_hue_draws_torchvision_sequence(self):
        x = make((2, 3, 6, 5), np.uint8, 3)
        a = x.numpy()
        jitter = T.ColorJitter(brightness=0.4, contrast=(0.5, 1.5), saturation=0.3, hue=0.1)
        self.assertEqual(jitter.hue, (-0.1, 0.1))
        for seed in range(6):
            torch.manual_seed(seed)
            perm = torch.randperm(4).tolist()
            b = torch.empty(1).uniform_(0.6, 1.4).item()
            c = torch.empty(1).uniform_(0.5, 1.5).item()
            s = torch.empty(1).uniform_(0.7, 1.3).item()
            h = torch.empty(1).uniform_(-0.1, 0.1).item()
            after = torch.rand(1)
            want = a
            for fn in perm:
                want = [lambda v: np_brightness(v, b), lambda v: np_contrast(v, c), lambda v: np_saturation(v, s),
                        lambda v: np_hue(v, h)][fn](want)
            torch.manual_seed(seed)
            self.check(jitter(x), want)
            self.assertTrue(torch.equal(torch.rand(1), after), "the generator advanced differently")

    def test_color_jitter_hue_checks(self):
        self.assertIsNone(T.ColorJitter(hue=0).hue)
        self.assertEqual(T.ColorJitter(hue=(-0.2, 0.3)).hue, (-0.2, 0.3))
        with self.assertRaises(ValueError):
            T.ColorJitter(hue=0.6)
        with self.assertRaises(ValueError):
            T.ColorJitter(hue=(-0.6, 0.1))

    def test_random_autocontrast_and_equalize(self):
        x = make((3, 25, 24), np.uint8, 4)
        a = x.numpy()
        for t, applied in ((T.RandomAutocontrast(0.5), np_autocontrast(a)), (T.RandomEqualize(0.5), np_equalize(a))):
            outcomes = set()
            for seed in range(8):
                torch.manual_seed(seed)
                hit = bool(torch.rand(1) < 0.5)
                after = torch.rand(1)
                torch.manual_seed(seed)
                self.check(t(x), applied if hit else a)
                self.assertTrue(torch.equal(torch.rand(1), after))
                outcomes.add(hit)
            self.assertEqual(outcomes, {True, False}, type(t).__name__)


if __name__ == "__main__":
    unittest.main()
