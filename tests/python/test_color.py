"""Tests of toroid.transforms' colour ops: each functional form against NumPy formulas written
from torchvision's source (float32 scalars, PyTorch's fused multiply-add for add_ with alpha,
truncation to uint8; the fused multiply-adds computed exactly with fractions), uint8 bit for
bit and float32 within 1e-5, in both layouts, one and three channels, single images and
batches; torchvision's checks and exception types; and the random transforms' draws against
the sequence torch's default generator gives under one seed (torchvision 0.26's order:
ColorJitter draws torch.randperm(4) then one torch.empty(1).uniform_ per factor; the random
apply transforms draw torch.rand(1) < p)."""

import unittest
from fractions import Fraction

import numpy as np

import toroid
import toroid.transforms as T
import toroid.transforms.functional as F

from support import ImageCase, inputs, layout, needs_torch, torch
f32 = np.float32


def round_f32(q):
    """The float32 nearest the exact rational q (ties to even)."""
    d = f32(float(q))
    lo = d if Fraction(float(d)) <= q else np.nextafter(d, f32(-np.inf))
    hi = np.nextafter(lo, f32(np.inf))
    dl, dh = q - Fraction(float(lo)), Fraction(float(hi)) - q
    if dl != dh:
        return lo if dl < dh else hi
    return lo if int(np.array(lo).view(np.uint32)) % 2 == 0 else hi


def fma32(a, b, c):
    """Elementwise a * b + c rounded once to float32 (float32 arrays or scalars)."""
    a, b, c = np.broadcast_arrays(np.asarray(a, f32), np.asarray(b, f32), np.asarray(c, f32))
    out = np.empty(a.shape, f32)
    for i in np.ndindex(a.shape):
        out[i] = round_f32(Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i])))
    return out


def grey(x):
    """torchvision's _rgb_to_grayscale_image before the cast back, in float32: (..., H, W)."""
    x = x.astype(f32)
    r, g, b = x[..., 0, :, :], x[..., 1, :, :], x[..., 2, :, :]
    return fma32(b, f32(0.114), fma32(g, f32(0.587), r * f32(0.2989)))


def finish(v, dtype):
    bound = f32(255) if dtype == np.uint8 else f32(1)
    v = np.clip(v, f32(0), bound)
    return v.astype(np.uint8) if dtype == np.uint8 else v.astype(f32)


def blend(x, other, ratio):
    v = fma32(other, f32(1.0 - ratio), x.astype(f32) * f32(ratio))
    return finish(v, x.dtype)


def np_invert(x):
    return (255 - x).astype(np.uint8) if x.dtype == np.uint8 else (f32(1) - x).astype(f32)


def np_posterize(x, bits):
    if x.dtype == np.uint8:
        mask = ((1 << bits) - 1) << (8 - bits) if bits < 8 else 255
        return x & np.uint8(mask)
    levels = f32(1 << bits)
    return (np.clip(np.floor(x * levels), f32(0), levels - f32(1)) * f32(1.0 / float(levels))).astype(f32)


def np_solarize(x, threshold):
    return np.where(x.astype(f32) >= f32(threshold), np_invert(x), x)


def np_brightness(x, f):
    return finish(x.astype(f32) * f32(f), x.dtype)


def np_saturation(x, f):
    if x.shape[-3] == 1:
        return x
    g = grey(x)
    if x.dtype == np.uint8:
        g = np.floor(g)
    return blend(x, g[..., None, :, :], f)


def np_contrast(x, f):
    if x.shape[-3] == 3:
        g = grey(x)
        if x.dtype == np.uint8:
            g = np.floor(g)
    else:
        g = x[..., 0, :, :].astype(f32)
    h, w = g.shape[-2:]
    mean = (g.astype(np.float64).sum(axis=(-2, -1)).astype(f32) / f32(h * w)).astype(f32)
    return blend(x, mean[..., None, None, None], f)


def np_gray(x, n):
    if x.shape[-3] == 1:
        g = x[..., 0, :, :]
    else:
        g = grey(x)
        if x.dtype == np.uint8:
            g = g.astype(np.uint8)  # truncation
    g = g[..., None, :, :]
    return np.repeat(g, n, axis=-3) if n == 3 else g


def make(shape, dtype, seed, channels_last=False):
    rng = np.random.default_rng(seed)
    if dtype == np.uint8:
        a = rng.integers(0, 256, size=shape, dtype=np.uint8)
    else:
        a = rng.random(shape, dtype=np.float32) * f32(1.2) - f32(0.1)  # a little outside [0, 1] too
    return layout(torch.from_numpy(a), channels_last)


ColorCase = ImageCase


@needs_torch
class Functional(ColorCase):
    SHAPES = [(3, 5, 7), (2, 3, 4, 9), (1, 6, 5), (2, 1, 3, 4)]

    def inputs(self):
        return inputs(make, self.SHAPES)

    def test_pointwise_ops(self):
        for x in self.inputs():
            a = x.numpy()
            with self.subTest(dtype=str(x.dtype), shape=tuple(x.shape), stride=x.stride()):
                self.check(F.invert(x), np_invert(a))
                for bits in (0, 3, 8):
                    self.check(F.posterize(x, bits), np_posterize(a, bits))
                thresholds = (0, 100.5, 128, 255) if a.dtype == np.uint8 else (0.0, 0.5, 1.0)
                for t in thresholds:
                    self.check(F.solarize(x, t), np_solarize(a, t))
                for f in (0, 0.7, 1, 1.6):
                    self.check(F.adjust_brightness(x, f), np_brightness(a, f))

    def test_channel_mixing_ops(self):
        for x in self.inputs():
            a = x.numpy()
            with self.subTest(dtype=str(x.dtype), shape=tuple(x.shape), stride=x.stride()):
                for f in (0, 0.45, 1, 2.3):
                    self.check(F.adjust_saturation(x, f), np_saturation(a, f))
                    self.check(F.adjust_contrast(x, f), np_contrast(a, f))
                for n in (1, 3):
                    self.check(F.rgb_to_grayscale(x, n), np_gray(a, n))
                self.check(F.to_grayscale(x), np_gray(a, 1))

    def test_grey_of_white_is_254(self):
        # torchvision's weights sum to 0.9999, and uint8 grey truncates.
        x = torch.full((3, 2, 2), 255, dtype=torch.uint8)
        self.assertEqual(F.rgb_to_grayscale(x).unique().tolist(), [254])

    def test_checks_and_wording(self):
        x = make((3, 4, 4), np.uint8, 1)
        with self.assertRaises(TypeError) as e:
            F.posterize(x, 9)
        self.assertEqual(str(e.exception), "bits must be a positive integer in the range [0, 8], got 9 instead.")
        self.assertIsInstance(e.exception, toroid.Error)
        with self.assertRaises(TypeError):
            F.posterize(x, 2.0)
        with self.assertRaises(TypeError) as e:
            F.solarize(x, 256)
        self.assertEqual(str(e.exception),
                         "Threshold should be less or equal the maximum value of the dtype, but got 256")
        with self.assertRaises(TypeError):
            F.solarize(x.float() / 255, 1.5)
        with self.assertRaises(ValueError) as e:
            F.adjust_brightness(x, -1)
        self.assertEqual(str(e.exception), "brightness_factor (-1) is not non-negative.")
        with self.assertRaises(ValueError) as e:
            F.adjust_contrast(x, -0.5)
        self.assertEqual(str(e.exception), "contrast_factor (-0.5) is not non-negative.")
        with self.assertRaises(TypeError) as e:
            F.adjust_saturation(make((4, 3, 3), np.uint8, 2), 0.5)
        self.assertEqual(str(e.exception), "Input image tensor permitted channel values are 1 or 3, but found 4")
        with self.assertRaises(ValueError) as e:
            F.rgb_to_grayscale(x, 2)
        self.assertEqual(str(e.exception), "num_output_channels must be 1 or 3, got 2.")
        with self.assertRaises(toroid.Error):
            T.Grayscale(0)

    def test_numpy_arrays_too(self):
        a = make((3, 4, 6), np.uint8, 9).numpy()
        self.check(F.invert(a), np_invert(a))


@needs_torch
class RandomDraws(ColorCase):
    def test_color_jitter_draws_torchvision_sequence(self):
        x = make((2, 3, 6, 5), np.uint8, 3)
        a = x.numpy()
        jitter = T.ColorJitter(brightness=0.4, contrast=(0.5, 1.5), saturation=0.3)
        for seed in range(6):
            torch.manual_seed(seed)
            perm = torch.randperm(4).tolist()
            b = torch.empty(1).uniform_(0.6, 1.4).item()
            c = torch.empty(1).uniform_(0.5, 1.5).item()
            s = torch.empty(1).uniform_(0.7, 1.3).item()
            after = torch.rand(1)
            want = a
            for fn in perm:
                if fn == 0:
                    want = np_brightness(want, b)
                elif fn == 1:
                    want = np_contrast(want, c)
                elif fn == 2:
                    want = np_saturation(want, s)
            torch.manual_seed(seed)
            got = jitter(x)
            self.check(got, want)
            self.assertTrue(torch.equal(torch.rand(1), after), "the generator advanced differently")

    def test_color_jitter_checks(self):
        self.assertIsNone(T.ColorJitter(brightness=0).brightness)
        self.assertEqual(T.ColorJitter(brightness=1.5).brightness, (0.0, 2.5))
        with self.assertRaises(ValueError):
            T.ColorJitter(brightness=-1)
        with self.assertRaises(TypeError):
            T.ColorJitter(contrast=[1, 2, 3])
        with self.assertRaises(ValueError):
            T.ColorJitter(saturation=(1.5, 0.5))
        self.assertEqual(T.ColorJitter(hue=0.1).hue, (-0.1, 0.1))  # drawn (tests/python/test_tone.py)
        self.assertIsNone(T.ColorJitter(hue=0).hue)

    def test_random_apply_transforms(self):
        x = make((3, 5, 4), np.uint8, 4)
        a = x.numpy()
        cases = [(T.RandomInvert(0.5), np_invert(a)), (T.RandomPosterize(2, 0.5), np_posterize(a, 2)),
                 (T.RandomSolarize(120, 0.5), np_solarize(a, 120)), (T.RandomGrayscale(0.5), np_gray(a, 3))]
        for t, applied in cases:
            outcomes = set()
            for seed in range(8):
                torch.manual_seed(seed)
                hit = bool(torch.rand(1) < 0.5)
                after = torch.rand(1)
                torch.manual_seed(seed)
                got = t(x)
                self.check(got, applied if hit else a)
                self.assertTrue(torch.equal(torch.rand(1), after))
                outcomes.add(hit)
            self.assertEqual(outcomes, {True, False}, type(t).__name__)

    def test_random_grayscale_keeps_one_channel(self):
        x = make((1, 4, 4), np.float32, 5)
        torch.manual_seed(0)
        self.check(T.RandomGrayscale(1.0)(x), x.numpy())
        self.assertEqual(T.Grayscale(3)(x).shape, (3, 4, 4))

    def test_in_a_compose_with_geometry(self):
        x = make((3, 9, 8), np.uint8, 6)
        torch.manual_seed(1)
        got = T.Compose([T.CenterCrop(6), T.RandomGrayscale(1.0), T.RandomInvert(1.0)])(x)
        want = np_invert(np_gray(x.numpy()[:, 2:8, 1:7], 3))  # torchvision: top round(1.5) = 2
        self.check(got, want)


if __name__ == "__main__":
    unittest.main()


class RepeatedCalls(unittest.TestCase):
    """A repeated functional call runs its compiled function directly (transforms/_base.py,
    _one): the runner is found by the op, its arguments and the input's dtype, shape and
    strides, so calls with other arguments or other inputs never get another call's result."""

    def test_each_call_follows_its_arguments_and_input(self):
        rng = np.random.default_rng(7)
        a = rng.integers(0, 256, (3, 5, 7), dtype=np.uint8)
        b = rng.integers(0, 256, (3, 6, 7), dtype=np.uint8)
        c = np.ascontiguousarray(rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)).transpose(2, 0, 1)
        for _ in range(3):
            for x in (a, b, c):
                for bits in (3, 4):
                    mask = np.uint8((0xFF << (8 - bits)) & 0xFF)
                    np.testing.assert_array_equal(F.posterize(x, bits), x & mask)
                np.testing.assert_array_equal(F.invert(x), 255 - x)
                np.testing.assert_array_equal(F.horizontal_flip(x), x[:, :, ::-1])
                np.testing.assert_array_equal(F.vertical_flip(x), x[:, ::-1, :])
                # 0 and -0.0 are other arguments than 1: the identity and black.
                np.testing.assert_array_equal(F.adjust_brightness(x, 1.0), x)
                np.testing.assert_array_equal(F.adjust_brightness(x, 0.0), np.zeros_like(x))
                np.testing.assert_array_equal(F.adjust_brightness(x, -0.0), np.zeros_like(x))
        xf = a.astype(np.float32) / 255
        for _ in range(2):
            np.testing.assert_array_equal(F.invert(xf), f32(1.0) - xf)

    def test_argument_keys_tell_values_and_types_apart(self):
        from toroid.transforms._base import _arg_key
        self.assertNotEqual(_arg_key(0.0), _arg_key(-0.0))
        self.assertNotEqual(_arg_key(True), _arg_key(1))
        self.assertNotEqual(_arg_key(1), _arg_key(1.0))
        self.assertEqual(_arg_key([1.5, (2, 3)]), _arg_key((1.5, [2, 3])))
