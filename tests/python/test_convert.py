"""Tests of toroid.transforms' conversions (ToImage, PILToTensor, ToPureTensor and their
functional forms): PIL images of each common mode and NumPy HWC arrays become the (C, H, W)
tensors torchvision's conversions give (written out here with NumPy), a Compose that starts
with ToImage gives what the same transforms give on the converted tensor, and a PIL image
given to the transforms comes back a PIL image of its mode holding the tensor results."""

import unittest

import numpy as np

import toroid
import toroid.transforms as T
import toroid.transforms.functional as TF

from support import needs_torch, torch

try:
    from PIL import Image
except ImportError:  # pragma: no cover - Debian's python3-pil is a test dependency
    Image = None

needs_pil = unittest.skipIf(Image is None, "PIL (python3-pil) is not installed")


def pixels(h, w, c, seed=0):
    return np.random.default_rng(seed).integers(0, 256, size=(h, w, c), dtype=np.uint8)


@needs_torch
@needs_pil
class PilImages(unittest.TestCase):
    def test_modes_become_chw_tensors(self):
        for mode, c in (("RGB", 3), ("RGBA", 4), ("L", 1)):
            a = pixels(37, 53, c, seed=c)
            pic = Image.fromarray(a[:, :, 0] if c == 1 else a, mode)
            for fn in (TF.pil_to_tensor, TF.to_image, T.PILToTensor(), T.ToImage()):
                with self.subTest(mode=mode, fn=fn):
                    t = fn(pic)
                    self.assertIsInstance(t, torch.Tensor)
                    self.assertEqual(tuple(t.shape), (c, 37, 53))
                    self.assertEqual(t.dtype, torch.uint8)
                    np.testing.assert_array_equal(t.numpy(), a.transpose(2, 0, 1))

    def test_compose_starting_with_to_image(self):
        a = pixels(120, 160, 3, seed=5)
        pic = Image.fromarray(a, "RGB")
        rest = [T.Resize(64, antialias=True), T.CenterCrop(56), T.RandomHorizontalFlip(p=1.0),
                T.ToDtype(torch.float32, scale=True), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])]
        got = T.Compose([T.ToImage()] + rest)(pic)
        want = T.Compose(rest)(torch.from_numpy(a).permute(2, 0, 1))
        self.assertTrue(torch.equal(torch.as_tensor(got), want))
        # Batched with per-image draws too.
        many = T.Compose([T.ToImage(), T.RandomResizedCrop(48, antialias=True)])
        torch.manual_seed(3)
        got = many.per_sample([pic, pic])
        torch.manual_seed(3)
        want = [T.RandomResizedCrop(48, antialias=True)(torch.from_numpy(a).permute(2, 0, 1)) for _ in range(2)]
        for g, w in zip(got, want):
            self.assertTrue(torch.equal(torch.as_tensor(g), w))

    def test_pil_in_pil_out_with_the_tensor_results(self):
        for mode, c in (("RGB", 3), ("RGBA", 4), ("L", 1), ("LA", 2)):
            a = pixels(41, 57, c, seed=10 + c)
            pic = Image.fromarray(a[:, :, 0] if c == 1 else a, mode)
            t = T.Compose([T.Resize(24, antialias=True), T.CenterCrop(20), T.RandomHorizontalFlip(p=1.0)])
            with self.subTest(mode=mode):
                got = t(pic)
                self.assertEqual(type(got).__module__.split(".")[0], "PIL")
                self.assertEqual((got.mode, got.size), (mode, (20, 20)))
                want = t(torch.from_numpy(a).permute(2, 0, 1))
                np.testing.assert_array_equal(np.array(got).reshape(20, 20, c), want.permute(1, 2, 0).numpy())
        # A float result (ToDtype) is the tensor; a sample keeps its PIL image PIL.
        pic = Image.fromarray(pixels(20, 30, 3), "RGB")
        out = T.Compose([T.CenterCrop(8), T.ToDtype(torch.float32, scale=True)])(pic)
        self.assertIsInstance(out, torch.Tensor)
        self.assertEqual(out.dtype, torch.float32)
        img, label = T.RandomVerticalFlip(p=1.0)(pic, 3)
        self.assertEqual((img.size, label), ((30, 20), 3))
        np.testing.assert_array_equal(np.array(img), np.array(pic)[::-1])
        with self.assertRaises(toroid.Error):  # a mode toroid does not take, named
            T.Resize(10)(Image.fromarray(pixels(20, 30, 3), "RGB").convert("P"))
        with self.assertRaises(toroid.Error):
            TF.pil_to_tensor(np.zeros((3, 4, 4), np.uint8))


@needs_torch
class ArraysAndTensors(unittest.TestCase):
    def test_numpy_hwc_and_hw(self):
        a = pixels(9, 11, 3, seed=1)
        t = TF.to_image(a)
        np.testing.assert_array_equal(t.numpy(), a.transpose(2, 0, 1))
        self.assertTrue(t.is_contiguous())
        g = TF.to_image(a[:, :, 0].copy())
        self.assertEqual(tuple(g.shape), (1, 9, 11))
        np.testing.assert_array_equal(g.numpy()[0], a[:, :, 0])

    def test_tensors_pass_and_become_plain(self):
        x = torch.arange(24, dtype=torch.uint8).reshape(2, 3, 4)
        self.assertTrue(torch.equal(TF.to_image(x), x))
        self.assertIs(type(TF.to_pure_tensor(x)), torch.Tensor)
        self.assertIs(T.ToPureTensor()(x), x)
        with self.assertRaises(toroid.Error):
            TF.to_image([1, 2, 3])


if __name__ == "__main__":
    unittest.main()
