"""Tests of toroid.transforms' padding, erasing and crop-family transforms: pad against
torch.nn.functional.pad (constant, replicate, reflect) and torchvision's symmetric indexing
written out in NumPy, erase against tensor slicing, resized_crop against crop then resize, and
the random transforms' draws against torchvision 0.26's draw sequence re-implemented here with
torch's seeded generator (RandomResizedCrop, RandomErasing, RandomResize, RandomCrop with a
fill or padding mode, RandomApply, RandomChoice, RandomOrder)."""

import math
import unittest

import numpy as np

import toroid
import toroid.transforms as T
import toroid.transforms.functional as TF

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - Debian's python3-torch is a test dependency
    torch = None

needs_torch = unittest.skipIf(torch is None, "torch (python3-torch) is not installed")


def image(shape, dtype, seed=0, channels_last=False):
    rng = np.random.default_rng(seed)
    if dtype == torch.uint8:
        x = torch.from_numpy(rng.integers(0, 256, size=shape, dtype=np.uint8))
    else:
        x = torch.from_numpy((rng.random(shape, dtype=np.float32) * 4 - 1).astype(np.float32))
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last) if x.dim() == 4 else \
            x.permute(1, 2, 0).contiguous().permute(2, 0, 1)
    return x


def symmetric(x, left, top, right, bottom):
    """torchvision's _pad_symmetric: crop the negative sides, then index lists."""
    crop_l, crop_r, crop_t, crop_b = (-min(v, 0) for v in (left, right, top, bottom))
    x = x[..., crop_t:x.shape[-2] - crop_b, crop_l:x.shape[-1] - crop_r]
    left, right, top, bottom = (max(v, 0) for v in (left, right, top, bottom))
    h, w = x.shape[-2:]
    xi = list(range(left - 1, -1, -1)) + list(range(w)) + [-(i + 1) for i in range(right)]
    yi = list(range(top - 1, -1, -1)) + list(range(h)) + [-(i + 1) for i in range(bottom)]
    return x[..., torch.tensor(yi)[:, None], torch.tensor(xi)[None, :]]


def torch_pad(x, padding, fill, mode):
    """torchvision v2's pad_image on torch 1.13's pieces: (left, top, right, bottom)."""
    left, top, right, bottom = padding
    if mode == "symmetric":
        return symmetric(x, left, top, right, bottom)
    squeeze = x.dim() == 3
    t = x[None] if squeeze else x
    if mode == "constant" and isinstance(fill, list) and len(fill) > 1:
        out = F.pad(t, [left, right, top, bottom], mode="constant", value=0.0)
        v = torch.tensor(fill).to(dtype=x.dtype).reshape(-1, 1, 1)
        if top > 0:
            out[..., :top, :] = v
        if left > 0:
            out[..., :, :left] = v
        if bottom > 0:
            out[..., -bottom:, :] = v
        if right > 0:
            out[..., :, -right:] = v
    elif mode == "constant":
        out = F.pad(t, [left, right, top, bottom], mode="constant", value=float(fill[0] if isinstance(fill, list) else fill))
    else:
        dtype = t.dtype
        out = F.pad(t.float(), [left, right, top, bottom], mode={"edge": "replicate", "reflect": "reflect"}[mode])
        out = out.to(dtype)
    return out[0] if squeeze else out


def generator_state_after(fn, seed):
    """The next draw of torch's default generator after fn() ran from `seed`."""
    torch.manual_seed(seed)
    fn()
    return torch.rand(1).item()


@needs_torch
class PadTest(unittest.TestCase):

    def test_modes_layouts_and_dtypes(self):
        paddings = [(2, 1, 3, 4), (-2, 1, 3, -1), (0, 0, 5, 0), (-1, -1, -2, -3), (4, 3, 0, 4), (1, 2, 1, 2)]
        for dtype in (torch.uint8, torch.float32):
            for cl in (False, True):
                for shape in ((3, 7, 9), (2, 1, 6, 8), (2, 3, 6, 8)):
                    x = image(shape, dtype, 1, cl)
                    for mode in ("constant", "edge", "reflect", "symmetric"):
                        for p in paddings:
                            fills = [0, 7.9 if dtype == torch.uint8 else -0.3]
                            if mode == "constant" and shape[-3] == 3:
                                fills.append([5, 300, -1.5] if dtype == torch.uint8 else [0.5, -2.0, 1e10])
                            for fill in fills:
                                with self.subTest(dtype=dtype, cl=cl, shape=shape, mode=mode, p=p, fill=fill):
                                    got = TF.pad(x, list(p), fill=fill, padding_mode=mode)
                                    want = torch_pad(x, p, fill, mode)
                                    self.assertEqual(got.shape, want.shape)
                                    self.assertTrue(torch.equal(got, want))
                                    self.assertEqual(got.dtype, x.dtype)

    def test_padding_forms(self):
        x = image((3, 5, 6), torch.uint8, 2)
        self.assertTrue(torch.equal(TF.pad(x, 2), torch_pad(x, (2, 2, 2, 2), 0, "constant")))
        self.assertTrue(torch.equal(TF.pad(x, [2]), torch_pad(x, (2, 2, 2, 2), 0, "constant")))
        self.assertTrue(torch.equal(TF.pad(x, (1, 3), padding_mode="edge"), torch_pad(x, (1, 3, 1, 3), 0, "edge")))
        self.assertTrue(torch.equal(T.Pad([1, 2, 3, 4], fill=9)(x), torch_pad(x, (1, 2, 3, 4), 9, "constant")))
        self.assertTrue(torch.equal(T.Pad(2, padding_mode="symmetric")(x), symmetric(x, 2, 2, 2, 2)))
        # NumPy in, NumPy out.
        n = x.numpy()
        self.assertTrue(np.array_equal(TF.pad(n, [1, 0, 2, 0], padding_mode="reflect"),
                                       torch_pad(x, (1, 0, 2, 0), 0, "reflect").numpy()))

    def test_errors(self):
        x = image((3, 5, 6), torch.uint8, 3)
        with self.assertRaisesRegex(toroid.Error, "reflect padding should be less than"):
            TF.pad(x, [6, 0, 0, 0], padding_mode="reflect")
        with self.assertRaisesRegex(toroid.Error, "symmetric padding"):
            TF.pad(x, [0, 6, 0, 0], padding_mode="symmetric")
        with self.assertRaisesRegex(toroid.Error, "not supported if fill is not scalar"):
            T.Pad(1, fill=[1, 2, 3], padding_mode="edge")
        with self.assertRaisesRegex(toroid.Error, "padding_mode"):
            TF.pad(x, 1, padding_mode="wrap")
        with self.assertRaisesRegex(toroid.Error, "1, 2, or 4 element"):
            T.Pad([1, 2, 3])
        with self.assertRaisesRegex(toroid.Error, "3 channels"):
            TF.pad(x, 1, fill=[1, 2])
        with self.assertRaisesRegex(toroid.Error, "without overflow"):
            TF.pad(x, 1, fill=256)
        with self.assertRaises(TypeError):
            TF.pad(x, "1")


@needs_torch
class EraseTest(unittest.TestCase):

    def test_values_and_regions(self):
        for dtype in (torch.uint8, torch.float32):
            for cl in (False, True):
                for shape in ((3, 9, 11), (2, 3, 8, 7), (1, 1, 5, 6)):
                    x = image(shape, dtype, 4, cl)
                    c = shape[-3]
                    values = [torch.tensor([7.5]).reshape(1, 1, 1), torch.tensor(3.0),
                              torch.tensor([1.0, 200.25, 0.0][:c] if c == 3 else [9.0]).reshape(-1, 1, 1)]
                    for (i, j, h, w) in ((1, 2, 3, 4), (6, 5, 10, 10), (-3, -4, 2, 3), (-2, 1, 5, 2), (2, 3, 0, 4),
                                         (0, 0, 100, 100)):
                        for v in values:
                            with self.subTest(dtype=dtype, cl=cl, shape=shape, region=(i, j, h, w), v=v):
                                want = x.clone()
                                want[..., i:i + h, j:j + w] = v
                                got = TF.erase(x, i, j, h, w, v)
                                self.assertTrue(torch.equal(got, want))
                                self.assertFalse(got is x)

    def test_a_full_value_tensor_is_assigned_as_torch_does(self):
        x = image((3, 8, 9), torch.float32, 5)
        v = torch.randn(3, 2, 4)
        want = x.clone()
        want[..., 1:3, 2:6] = v
        self.assertTrue(torch.equal(TF.erase(x, 1, 2, 2, 4, v), want))

    @unittest.skipUnless(torch is not None and torch.cuda.is_available(), "no CUDA device (scripts/gpu-test.sh runs it)")
    def test_a_value_tensor_on_the_gpu_is_assigned_there(self):
        # Its values are not read back to the host to bind them: torch assigns them on the device.
        for dtype in (torch.uint8, torch.float32):
            x = image((3, 40, 50), dtype, 8).cuda()
            for v in (torch.zeros(3, 1, 1, device="cuda"), torch.tensor([5.0, 6.0, 7.0], device="cuda").reshape(3, 1, 1),
                      torch.full((3, 6, 9), 3.0, device="cuda")):
                want = x.clone()
                want[..., 4:10, 11:20] = v
                got = TF.erase(x, 4, 11, 6, 9, v)
                self.assertEqual(got.device, x.device)
                self.assertTrue(torch.equal(got, want))
                self.assertTrue(torch.equal(x, image((3, 40, 50), dtype, 8).cuda()))  # the input is not changed

    def test_uint8_values_outside_its_range_are_refused(self):
        x = image((3, 8, 9), torch.uint8, 6)
        with self.assertRaisesRegex(toroid.Error, "outside the range"):
            TF.erase(x, 1, 1, 2, 2, torch.tensor([-1.5]))
        with self.assertRaisesRegex(toroid.Error, "3 channels"):
            TF.erase(x, 1, 1, 2, 2, torch.tensor([1.0, 2.0]).reshape(2, 1, 1))


@needs_torch
class ResizedCropTest(unittest.TestCase):

    def test_crop_then_resize(self):
        for dtype in (torch.uint8, torch.float32):
            x = image((3, 30, 40), dtype, 7)
            for kw in (dict(size=[12, 16]), dict(size=10), dict(size=[9, 9], interpolation="nearest"),
                       dict(size=[20, 14], antialias=False)):
                with self.subTest(dtype=dtype, kw=kw):
                    got = TF.resized_crop(x, 3, -2, 20, 25, **kw)
                    want = TF.resize(TF.crop(x, 3, -2, 20, 25), kw["size"], interpolation=kw.get("interpolation", "bilinear"),
                                     antialias=kw.get("antialias", True))
                    self.assertTrue(torch.equal(got, want))
        # Against torch itself where it is exact: float32 bilinear without antialias.
        x = image((3, 30, 40), torch.float32, 8)
        want = F.interpolate(x[None, :, 3:23, 5:30], size=(12, 16), mode="bilinear", align_corners=False)[0]
        got = TF.resized_crop(x, 3, 5, 20, 25, [12, 16], antialias=False)
        self.assertLess((got - want).abs().max().item(), 1e-5)


def rrc_draw(height, width, scale, ratio):
    """torchvision 0.26's RandomResizedCrop.make_params, as its source draws."""
    area = height * width
    log_ratio = torch.log(torch.tensor(ratio))
    for _ in range(10):
        target_area = area * torch.empty(1).uniform_(scale[0], scale[1]).item()
        aspect_ratio = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
        w = int(round(math.sqrt(target_area * aspect_ratio)))
        h = int(round(math.sqrt(target_area / aspect_ratio)))
        if 0 < w <= width and 0 < h <= height:
            i = torch.randint(0, height - h + 1, size=(1,)).item()
            j = torch.randint(0, width - w + 1, size=(1,)).item()
            return i, j, h, w
    in_ratio = float(width) / float(height)
    if in_ratio < min(ratio):
        w = width
        h = int(round(w / min(ratio)))
    elif in_ratio > max(ratio):
        h = height
        w = int(round(h * max(ratio)))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


def erasing_draw(c, img_h, img_w, p, scale, ratio, value):
    """torchvision 0.26's RandomErasing: _RandomApplyTransform's torch.rand(1), then make_params."""
    if torch.rand(1) >= p:
        return None
    area = img_h * img_w
    log_ratio = torch.log(torch.tensor(ratio))
    for _ in range(10):
        erase_area = area * torch.empty(1).uniform_(scale[0], scale[1]).item()
        aspect_ratio = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
        h = int(round(math.sqrt(erase_area * aspect_ratio)))
        w = int(round(math.sqrt(erase_area / aspect_ratio)))
        if not (h < img_h and w < img_w):
            continue
        if value is None:
            v = torch.empty([c, h, w], dtype=torch.float32).normal_()
        else:
            v = torch.tensor(value)[:, None, None]
        i = torch.randint(0, img_h - h + 1, size=(1,)).item()
        j = torch.randint(0, img_w - w + 1, size=(1,)).item()
        return i, j, h, w, v
    return None


@needs_torch
class RandomDrawTest(unittest.TestCase):
    """Under one torch.manual_seed toroid draws what torchvision 0.26's source draws, and
    leaves the generator where torchvision leaves it."""

    def test_random_resized_crop(self):
        x = image((3, 37, 53), torch.float32, 9)
        for kw in (dict(), dict(scale=(0.5, 0.9), ratio=(0.5, 2.0)),
                   dict(scale=(2.0, 3.0)),                      # never fits: central fallback
                   dict(scale=(2.0, 3.0), ratio=(2.0, 3.0)),    # fallback, wider than the image
                   dict(scale=(2.0, 3.0), ratio=(0.2, 0.3))):   # fallback, taller
            for seed in range(5):
                with self.subTest(kw=kw, seed=seed):
                    torch.manual_seed(seed)
                    got = T.RandomResizedCrop([20, 24], **kw)(x)
                    after = torch.rand(1)
                    torch.manual_seed(seed)
                    i, j, h, w = rrc_draw(37, 53, kw.get("scale", (0.08, 1.0)), kw.get("ratio", (3.0 / 4.0, 4.0 / 3.0)))
                    self.assertTrue(torch.equal(after, torch.rand(1)))
                    self.assertTrue(torch.equal(got, TF.resized_crop(x, i, j, h, w, [20, 24])))
        # An int size is square, and the result of a batch is one draw for all.
        xb = image((2, 3, 30, 30), torch.uint8, 10)
        torch.manual_seed(3)
        got = T.RandomResizedCrop(16, interpolation="bicubic")(xb)
        torch.manual_seed(3)
        i, j, h, w = rrc_draw(30, 30, (0.08, 1.0), (3.0 / 4.0, 4.0 / 3.0))
        self.assertEqual(tuple(got.shape), (2, 3, 16, 16))
        self.assertTrue(torch.equal(got, TF.resized_crop(xb, i, j, h, w, [16, 16], interpolation="bicubic")))

    def test_random_erasing(self):
        for dtype, value in ((torch.float32, 0.0), (torch.uint8, [10.0, 20.0, 30.0]), (torch.float32, [0.5]),
                             (torch.float32, "random"), (torch.uint8, "random")):
            x = image((3, 24, 31), dtype, 11)
            for seed in range(8):
                with self.subTest(dtype=dtype, value=value, seed=seed):
                    torch.manual_seed(seed)
                    got = T.RandomErasing(p=0.7, value=value)(x)
                    after = torch.rand(1)
                    torch.manual_seed(seed)
                    v = None if value == "random" else ([float(value)] if not isinstance(value, list) else value)
                    d = erasing_draw(3, 24, 31, 0.7, (0.02, 0.33), (0.3, 3.3), v)
                    self.assertTrue(torch.equal(after, torch.rand(1)))
                    want = x.clone()
                    if d is not None:
                        i, j, h, w, vv = d
                        want[..., i:i + h, j:j + w] = vv
                    self.assertTrue(torch.equal(got, want))
        with self.assertRaisesRegex(toroid.Error, "single value or 3"):
            T.RandomErasing(p=1.0, value=[1, 2])(image((3, 10, 10), torch.float32))
        with self.assertRaisesRegex(toroid.Error, "'random'"):
            T.RandomErasing(value="noise")
        with self.assertRaisesRegex(toroid.Error, "between 0 and 1"):
            T.RandomErasing(scale=(0.5, 1.5))

    def test_random_resize(self):
        x = image((3, 30, 45), torch.uint8, 12)
        for seed in range(5):
            torch.manual_seed(seed)
            got = T.RandomResize(12, 30)(x)
            after = torch.rand(1)
            torch.manual_seed(seed)
            size = int(torch.randint(12, 30, ()))
            self.assertTrue(torch.equal(after, torch.rand(1)))
            self.assertEqual(got.shape[-2], size)
            self.assertTrue(torch.equal(got, TF.resize(x, size)))

    def test_random_crop_with_a_fill_or_padding_mode_pads_first(self):
        x = image((3, 20, 25), torch.uint8, 13)
        for kw in (dict(size=[18, 28], padding=[2, 3], fill=[1, 2, 3]), dict(size=24, padding=4, padding_mode="reflect"),
                   dict(size=[30, 30], pad_if_needed=True, padding_mode="edge"),
                   dict(size=22, padding=[1, 2, 3, 4], padding_mode="symmetric")):
            for seed in range(4):
                with self.subTest(kw=kw, seed=seed):
                    torch.manual_seed(seed)
                    got = T.RandomCrop(**kw)(x)
                    # torchvision 0.26's RandomCrop.make_params, then pad and crop.
                    torch.manual_seed(seed)
                    pad = kw.get("padding")
                    if pad is None:
                        pl = pr = pt = pb = 0
                    else:
                        pad = [pad] * 4 if isinstance(pad, int) else (pad * 2 if len(pad) == 2 else pad)
                        pl, pt, pr, pb = pad
                    ch, cw = (kw["size"], kw["size"]) if isinstance(kw["size"], int) else kw["size"]
                    ph, pw = 20 + pt + pb, 25 + pl + pr
                    if kw.get("pad_if_needed"):
                        if ph < ch:
                            d = ch - ph
                            pt, pb, ph = pt + d, pb + d, ph + 2 * d
                        if pw < cw:
                            d = cw - pw
                            pl, pr, pw = pl + d, pr + d, pw + 2 * d
                    top = int(torch.randint(0, ph - ch + 1, size=())) if ph > ch else 0
                    left = int(torch.randint(0, pw - cw + 1, size=())) if pw > cw else 0
                    padded = torch_pad(x, (pl, pt, pr, pb), kw.get("fill", 0), kw.get("padding_mode", "constant"))
                    self.assertTrue(torch.equal(got, padded[..., top:top + ch, left:left + cw]))

    def test_containers(self):
        x = image((3, 10, 12), torch.uint8, 14)
        flip, vflip, pad = T.HorizontalFlip(), T.VerticalFlip(), T.Pad([1, 0, 0, 0], fill=5)
        for seed in range(8):
            torch.manual_seed(seed)
            got = T.Compose([T.RandomApply([flip, pad], p=0.5), T.RandomChoice([flip, vflip, pad], p=[1, 2, 3]),
                             T.RandomOrder([pad, vflip, T.Lambda(lambda t: t + 1)])])(x)
            after = torch.rand(1)
            torch.manual_seed(seed)
            want = x
            if not torch.rand(1) >= 0.5:
                want = TF.pad(want.flip(-1), [1, 0, 0, 0], fill=5)
            idx = int(torch.multinomial(torch.tensor([1 / 6, 2 / 6, 3 / 6]), 1))
            want = [lambda t: t.flip(-1), lambda t: t.flip(-2), lambda t: TF.pad(t, [1, 0, 0, 0], fill=5)][idx](want)
            steps = [lambda t: TF.pad(t, [1, 0, 0, 0], fill=5), lambda t: t.flip(-2), lambda t: t + 1]
            for k in torch.randperm(3):
                want = steps[int(k)](want)
            self.assertTrue(torch.equal(after, torch.rand(1)))
            self.assertTrue(torch.equal(got, want))
        with self.assertRaisesRegex(toroid.Error, "interval"):
            T.RandomApply([flip], p=1.5)
        with self.assertRaisesRegex(toroid.Error, "doesn't match"):
            T.RandomChoice([flip, vflip], p=[1])
        with self.assertRaises(TypeError):
            T.Lambda(3)
        with self.assertRaises(TypeError):
            T.RandomOrder(flip)


if __name__ == "__main__":
    unittest.main()
