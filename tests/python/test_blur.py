"""Tests of toroid.transforms' gaussian_blur and adjust_sharpness against torchvision 0.26's
procedure run with the installed torch (its float32 linspace and softmax weights, reflect pad,
conv2d with groups = C at one thread, round then cast for uint8; sharpness's 3x3 kernel, kept
border, add_ with alpha, clamp and cast), uint8 bit for bit and float32 within 1e-5, in both
layouts, one and three channels, single images and batches; torchvision's checks; and the
random transforms' draws (GaussianBlur: torch.empty(1).uniform_(min, max); RandomAdjustSharpness:
torch.rand(1) < p) against the sequence torch's default generator gives under one seed."""

import math
import unittest

import numpy as np

import toroid
import toroid.transforms as T
import toroid.transforms.functional as F

from support import ImageCase, inputs, layout, needs_torch, torch

if torch is not None:
    import torch.nn.functional as tnf


def make(shape, dtype, seed, channels_last=False):
    g = np.random.default_rng(seed)
    a = g.integers(0, 256, shape).astype(np.uint8) if dtype == np.uint8 else g.random(shape, np.float32)
    return layout(torch.from_numpy(a), channels_last)


def tv_kernel1d(k, sigma):
    lim = (k - 1) / (2.0 * math.sqrt(2.0))
    x = torch.linspace(-lim, lim, steps=k, dtype=torch.float32)
    return torch.softmax(x.div(sigma).pow(2).neg(), dim=0)


def tv_gaussian_blur(image, kernel_size, sigma):
    """torchvision 0.26's gaussian_blur_image on a CPU tensor (sigma as two floats)."""
    shape, ndim, dtype = image.shape, image.ndim, image.dtype
    if ndim == 3:
        image = image.unsqueeze(0)
    fp = image.is_floating_point()
    kernel = tv_kernel1d(kernel_size[1], sigma[1]).unsqueeze(-1) * tv_kernel1d(kernel_size[0], sigma[0])
    kernel = kernel.expand(shape[-3], 1, kernel.shape[0], kernel.shape[1])
    out = image if fp else image.to(torch.float32)
    pad = [kernel_size[0] // 2, kernel_size[0] // 2, kernel_size[1] // 2, kernel_size[1] // 2]
    out = tnf.conv2d(tnf.pad(out, pad, mode="reflect"), kernel, groups=shape[-3])
    if ndim == 3:
        out = out.squeeze(0)
    return out if fp else out.round_().to(dtype)


def tv_adjust_sharpness(image, factor):
    """torchvision 0.26's adjust_sharpness_image on a CPU tensor."""
    c, h, w = image.shape[-3:]
    if h <= 2 or w <= 2:
        return image
    fp = image.is_floating_point()
    bound = 1.0 if fp else 255
    a, b = 1.0 / 13.0, 5.0 / 13.0
    kernel = torch.tensor([[a, a, a], [a, b, a], [a, a, a]], dtype=torch.float32).expand(c, 1, 3, 3)
    out = image.to(dtype=torch.float32, copy=True)
    squeeze = out.ndim == 3
    blurred = tnf.conv2d(out.unsqueeze(0) if squeeze else out, kernel, groups=c)
    if squeeze:
        blurred = blurred.squeeze(0)
    if not fp:
        blurred = blurred.round_()
    view = out[..., 1:-1, 1:-1]
    view.add_(blurred.sub_(view), alpha=(1.0 - factor))
    out = out.clamp_(0, bound)
    return out if fp else out.to(image.dtype)


class BlurCase(ImageCase):
    def setUp(self):
        if torch is not None:
            self._threads = torch.get_num_threads()
            torch.set_num_threads(1)

    def tearDown(self):
        if torch is not None:
            torch.set_num_threads(self._threads)



@needs_torch
class Functional(BlurCase):
    # Batches of 2 and more channels take oneDNN's convolution in torch (a single 1-channel
    # image with a small kernel takes its own im2col path, whose sums may differ).
    SHAPES = [(2, 3, 31, 40), (3, 23, 37), (2, 1, 19, 29), (2, 3, 64, 57)]

    def inputs(self):
        return inputs(make, self.SHAPES)

    def test_gaussian_blur(self):
        params = [((3, 3), None), ((5, 3), (0.7, 1.9)), ((3, 7), (0.1, 0.1)), ((9, 9), (1.3, 1.3)),
                  ((1, 5), (2.0, 0.6)), ((17, 11), (1.7, 3.1))]
        for x in self.inputs():
            for ks, sigma in params:
                with self.subTest(dtype=str(x.dtype), shape=tuple(x.shape), stride=x.stride(), ks=ks, sigma=sigma):
                    s = [k * 0.15 + 0.35 for k in ks] if sigma is None else list(sigma)
                    got = F.gaussian_blur(x, list(ks), None if sigma is None else list(sigma))
                    self.check(got, tv_gaussian_blur(x, ks, s))

    def test_gaussian_blur_large_kernel(self):
        x = make((2, 3, 48, 50), np.uint8, 40)
        for sigma in (0.8, 2.3, 5.0):
            self.check(F.gaussian_blur(x, 23, sigma), tv_gaussian_blur(x, (23, 23), (sigma, sigma)))

    def test_adjust_sharpness(self):
        for x in self.inputs():
            for f in (0.0, 0.3, 1.0, 1.7, 4.0):
                with self.subTest(dtype=str(x.dtype), shape=tuple(x.shape), stride=x.stride(), factor=f):
                    self.check(F.adjust_sharpness(x, f), tv_adjust_sharpness(x, f))

    def test_small_images(self):
        for shape in ((1, 3, 2, 5), (1, 3, 5, 2), (1, 3, 3, 3)):
            x = make(shape, np.float32, 7) * 1.4 - 0.2  # outside [0, 1]: clamped only when blended
            self.check(F.adjust_sharpness(x, 0.5), tv_adjust_sharpness(x, 0.5))
        x = make((1, 3, 3, 4), np.uint8, 8)
        self.check(F.gaussian_blur(x, [7, 5], 1.0), tv_gaussian_blur(x, (7, 5), (1.0, 1.0)))

    def test_checks_and_wording(self):
        x = make((3, 8, 8), np.uint8, 3)
        for ks in (4, [3, 0], [-1, 3], [3, 2]):
            with self.assertRaisesRegex(ValueError, "kernel_size should have odd and positive integers"):
                F.gaussian_blur(x, ks)
        with self.assertRaisesRegex(ValueError, "If kernel_size is a sequence its length should be 2. Got 3"):
            F.gaussian_blur(x, [3, 3, 3])
        for s in (0, -1.0, [1.0, 0.0]):
            with self.assertRaisesRegex(ValueError, "sigma should have positive values"):
                F.gaussian_blur(x, 3, s)
        with self.assertRaisesRegex(ValueError, "If sigma is a sequence, its length should be 2. Got 3"):
            F.gaussian_blur(x, 3, [1, 2, 3])
        with self.assertRaisesRegex(TypeError, "sigma should be either float or sequence of floats"):
            F.gaussian_blur(x, 3, "wide")
        with self.assertRaisesRegex(ValueError, "sharpness_factor \\(-0.5\\) is not non-negative."):
            F.adjust_sharpness(x, -0.5)
        with self.assertRaisesRegex(TypeError, "can have 1 or 3 channels, but found 2"):
            F.adjust_sharpness(make((2, 8, 8), np.uint8, 3), 0.5)
        with self.assertRaises(toroid.Error):  # reflect padding past the image
            F.gaussian_blur(make((3, 4, 20), np.uint8, 3), [3, 9])
        with self.assertRaisesRegex(ValueError, "Kernel size value should be an odd and positive number."):
            T.GaussianBlur(4)
        with self.assertRaisesRegex(ValueError, "sigma values should be positive and of the form"):
            T.GaussianBlur(3, (2.0, 1.0))
        with self.assertRaisesRegex(ValueError, "If sigma is a sequence its length should be 1 or 2. Got 3"):
            T.GaussianBlur(3, (1.0, 2.0, 3.0))
        with self.assertRaisesRegex(ValueError, "is not non-negative"):
            T.RandomAdjustSharpness(-1)


@needs_torch
class RandomDraws(BlurCase):
    def test_gaussian_blur_draws_torchvision_sequence(self):
        x = make((2, 3, 20, 24), np.uint8, 11)
        t = T.GaussianBlur((5, 9), sigma=(0.1, 2.0))
        for seed in range(4):
            torch.manual_seed(seed)
            sigma = torch.empty(1).uniform_(0.1, 2.0).item()
            after = torch.rand(1)
            torch.manual_seed(seed)
            got = t(x)
            self.check(got, tv_gaussian_blur(x, (5, 9), (sigma, sigma)))
            self.assertTrue(torch.equal(torch.rand(1), after))
        self.assertEqual(T.GaussianBlur(3, 1.5).sigma, [1.5, 1.5])

    def test_new_sigma_binds_not_compiles(self):
        x = make((1, 3, 16, 16), np.uint8, 12)
        F.gaussian_blur(x, 5, 0.7)
        T._wait_for_variants()
        toroid.wait_for_background_builds()  # the first structure's full build, if any
        before = toroid.cache_stats()
        for s in (0.3, 1.1, 1.9):
            self.check(F.gaussian_blur(x, 5, s), tv_gaussian_blur(x, (5, 5), (s, s)))
        after = toroid.cache_stats()
        self.assertLessEqual(after["compiles"] - before["compiles"], 1)
        self.assertGreaterEqual(after["memory_hits"] + after["binds"] - before["memory_hits"] - before["binds"], 2)

    def test_random_adjust_sharpness(self):
        x = make((3, 9, 8), np.uint8, 13)
        t = T.RandomAdjustSharpness(2.0, p=0.5)
        outcomes = set()
        for seed in range(8):
            torch.manual_seed(seed)
            hit = bool(torch.rand(1) < 0.5)
            after = torch.rand(1)
            torch.manual_seed(seed)
            got = t(x)
            self.check(got, tv_adjust_sharpness(x, 2.0) if hit else x)
            self.assertTrue(torch.equal(torch.rand(1), after))
            outcomes.add(hit)
        self.assertEqual(outcomes, {True, False})

    def test_in_a_compose(self):
        x = make((3, 30, 34), np.uint8, 14)
        torch.manual_seed(5)
        got = T.Compose([T.CenterCrop(24), T.GaussianBlur(5), T.RandomAdjustSharpness(1.5, p=1.0)])(x)
        torch.manual_seed(5)
        sigma = torch.empty(1).uniform_(0.1, 2.0).item()
        want = tv_adjust_sharpness(tv_gaussian_blur(x[:, 3:27, 5:29], (5, 5), (sigma, sigma)), 1.5)
        self.check(got, want)


if __name__ == "__main__":
    unittest.main()
