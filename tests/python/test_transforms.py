"""Tests of toroid.transforms against torchvision: each transform's tensors against
torchvision.transforms.functional (whose tensor semantics equal v2's for these ops; affine
warps bit for bit on uint8, and v2's bilinear fill blend, which 0.14 spells differently,
against v2_affine below), random transforms drawing the same parameters as torchvision's
under one torch.manual_seed, against torchvision.transforms.v2 where it is installed, and a
Compose inside DataLoader workers (fork after the parent ran it, and spawn)."""

import os
import unittest

import numpy as np

import toroid
import toroid.transforms as T

try:
    import torch
    import torchvision
    import torchvision.transforms as TV
    import torchvision.transforms.functional as TF
    from torchvision.transforms import InterpolationMode
except ImportError:  # pragma: no cover - Debian's python3-torchvision is a test dependency
    torch = None

try:
    import torchvision.transforms.v2 as TV2  # torchvision >= 0.15
except ImportError:
    TV2 = None

FLOAT_TOL = 1e-4
needs_torchvision = unittest.skipIf(torch is None, "torchvision (python3-torchvision) is not installed")


def image(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == torch.uint8:
        return torch.from_numpy(rng.integers(0, 256, size=shape, dtype=np.uint8))
    return torch.from_numpy(rng.random(shape, dtype=np.float32))


def max_diff(a, b):
    return (a.double() - b.double()).abs().max().item() if a.numel() else 0.0


def v2_affine(x, mode, fill, angle, translate, scale, shear, center=None):
    """torchvision.transforms.v2.functional.affine itself where this torchvision has v2;
    else (Debian's 0.14) the same computation on 0.14's pieces: its inverse matrix and
    _gen_affine_grid (the same as v2's _affine_grid) and v2's _apply_grid_transform (fill
    blend (v - fill) * mask + fill, round half to even)."""
    if TV2 is not None:
        from torchvision.transforms.v2 import functional as F2
        return F2.affine(x, angle=angle, translate=[float(t) for t in translate], scale=scale,
                         shear=[float(s) for s in shear], interpolation=InterpolationMode(mode), fill=fill,
                         center=list(center) if center is not None else None)
    import torch.nn.functional as F
    import torchvision.transforms.functional_tensor as FT
    h, w = x.shape[-2:]
    center_f = [0.0, 0.0] if center is None else [c - s * 0.5 for c, s in zip(center, [w, h])]
    matrix = TF._get_inverse_affine_matrix(center_f, angle, [float(t) for t in translate], scale, shear)
    theta = torch.tensor(matrix, dtype=torch.float32).reshape(1, 2, 3)
    grid = FT._gen_affine_grid(theta, w=w, h=h, ow=w, oh=h)
    img = x.reshape(-1, *x.shape[-3:])
    fimg = img.float()
    grid = grid.expand(fimg.shape[0], -1, -1, -1)
    if fill is not None:
        fimg = torch.cat((fimg, torch.ones_like(fimg[:, :1])), dim=1)
    fimg = F.grid_sample(fimg, grid, mode=mode, padding_mode="zeros", align_corners=False)
    if fill is not None:
        fimg, mask = fimg[:, :-1], fimg[:, -1:].expand_as(fimg[:, :-1])
        fill_img = torch.tensor(fill if isinstance(fill, list) else [float(fill)]).view(1, -1, 1, 1)
        if mode == "nearest":
            fimg = torch.where(mask < 0.5, fill_img.expand_as(fimg), fimg)
        else:
            fimg = fimg.sub(fill_img).mul(mask).add(fill_img)
    out = fimg if x.dtype == torch.float32 else fimg.round().to(x.dtype)
    return out.reshape(x.shape)


def draw_after(fn, seed):
    """The generator's next draw after `fn` ran from `seed`: equal when both drew as often."""
    torch.manual_seed(seed)
    fn()
    return torch.rand(1).item()


@needs_torchvision
class DeterministicTest(unittest.TestCase):
    def check(self, got, want, tol=0.0):
        self.assertEqual(tuple(got.shape), tuple(want.shape))
        self.assertEqual(got.dtype, want.dtype)
        self.assertLessEqual(max_diff(got, want), tol)

    def test_resize_float(self):
        x = image((3, 37, 53), torch.float32)
        for size in (20, [24, 70], 64):
            for mode in (InterpolationMode.NEAREST, InterpolationMode.BILINEAR, InterpolationMode.BICUBIC):
                for aa in (False, True):
                    with self.subTest(size=size, mode=mode, antialias=aa):
                        got = T.Resize(size, interpolation=mode, antialias=aa)(x)
                        # torchvision 0.14 refuses antialias for nearest; v2 ignores it, as toroid does
                        tv_aa = aa and mode != InterpolationMode.NEAREST
                        self.check(got, TF.resize(x, size, interpolation=mode, antialias=tv_aa), FLOAT_TOL)
        got = T.Resize(30, max_size=40, antialias=True)(x)
        self.check(got, TF.resize(x, 30, max_size=40, antialias=True), FLOAT_TOL)
        # strings and the batch form
        xb = image((2, 3, 19, 23), torch.float32, 1)
        self.check(T.Resize([9, 11], "bilinear")(xb), TF.resize(xb, [9, 11], antialias=True), FLOAT_TOL)

    def test_resize_uint8(self):
        x = image((3, 41, 29), torch.uint8)
        self.check(T.Resize(17, InterpolationMode.NEAREST)(x), TF.resize(x, 17, InterpolationMode.NEAREST))
        # torchvision 0.14 resizes uint8 in float32 and rounds; PyTorch's uint8 kernels (which
        # toroid follows) may differ from that by one level.
        got = T.Resize(17, antialias=True)(x)
        self.check(got, TF.resize(x, 17, antialias=True), 1.0)

    def test_crops_and_flips_are_exact(self):
        for dtype in (torch.float32, torch.uint8):
            x = image((3, 21, 34), dtype, 2)
            with self.subTest(dtype=dtype):
                self.check(T.CenterCrop(10)(x), TF.center_crop(x, [10, 10]))
                self.check(T.CenterCrop([30, 13])(x), TF.center_crop(x, [30, 13]))  # zero padding
                self.check(T.crop(x, 3, -2, 12, 40), TF.crop(x, 3, -2, 12, 40))
                self.check(T.HorizontalFlip()(x), TF.hflip(x))
                self.check(T.VerticalFlip()(x), TF.vflip(x))
                self.check(T.hflip(x[None]), TF.hflip(x[None]))

    def test_numpy_in_numpy_out(self):
        x = image((3, 20, 30), torch.float32, 3)
        out = T.Compose([T.Resize(12), T.CenterCrop(10), T.HorizontalFlip()])(x.numpy())
        self.assertIsInstance(out, np.ndarray)
        want = TF.hflip(TF.center_crop(TF.resize(x, 12, antialias=True), [10, 10]))
        self.assertLessEqual(np.abs(out - want.numpy()).max(), FLOAT_TOL)

    def test_to_dtype_and_normalize(self):
        x8 = image((3, 16, 16), torch.uint8, 4)
        xf = image((3, 16, 16), torch.float32, 4)
        self.check(T.ToDtype(torch.float32, scale=True)(x8), TF.convert_image_dtype(x8, torch.float32), 1e-6)
        self.check(T.ToDtype(torch.uint8, scale=True)(xf), TF.convert_image_dtype(xf, torch.uint8))
        self.check(T.ToDtype(torch.float32)(x8), x8.float())
        mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
        self.check(T.Normalize(mean, std)(xf), TF.normalize(xf, mean, std), 1e-6)

    def test_affine_matches_torchvision(self):
        # torchvision's own grid, fill blend and rounding: uint8 bit for bit, float32 within
        # 1e-5, nearest picks (ties included) exactly. Scales 0.5 and 2 and right angles put
        # many sample points on exact ties.
        cases = [(30.0, [3, -2], 0.9, [10.0, 0.0]), (-47.5, [0, 0], 1.2, [0.0, 0.0]),
                 (12.0, [-5, 4], 0.75, [-8.0, 15.0]), (0.0, [2, 1], 1.0, [0.0, 0.0]),
                 (0.0, [1, -1], 0.5, [0.0, 0.0]), (90.0, [-1, 3], 2.0, [0.0, 0.0]), (180.0, [1, 3], 2.0, [0.0, 0.0])]
        for shape in ((3, 31, 40), (1, 2, 24, 17), (3, 5, 7)):
            for angle, translate, scale, shear in cases:
                for fill in (None, [0.0], 0):
                    kw = dict(angle=angle, translate=translate, scale=scale, shear=shear, fill=fill)
                    for mode in (InterpolationMode.BILINEAR, InterpolationMode.NEAREST):
                        with self.subTest(shape=shape, angle=angle, scale=scale, fill=fill, mode=mode):
                            x = image(shape, torch.float32, 5)
                            self.check(T.affine(x, interpolation=mode, **kw), TF.affine(x, interpolation=mode, **kw),
                                       1e-5)
                            x8 = image(shape, torch.uint8, 6)
                            self.check(T.affine(x8, interpolation=mode, **kw), TF.affine(x8, interpolation=mode, **kw))

    def test_affine_fill(self):
        # A number or one value per channel. Nearest puts it where the picked pixel is
        # outside (as torchvision 0.14 does too); bilinear blends it with the warped mask by
        # v2's formula, (v - fill) * mask + fill, which v2_affine spells with torch ops.
        kw = dict(angle=25.0, translate=[4, -3], scale=0.8, shear=[6.0, -4.0])
        for fill in (17, 200.5, [10.0, 128.0, 255.0]):
            for dtype in (torch.uint8, torch.float32):
                x = image((2, 3, 29, 35), dtype, 13)
                with self.subTest(fill=fill, dtype=dtype):
                    got = T.affine(x, interpolation=InterpolationMode.NEAREST, fill=fill, **kw)
                    self.check(got, TF.affine(x, interpolation=InterpolationMode.NEAREST, fill=fill, **kw), 1e-5)
                    got = T.affine(x, interpolation=InterpolationMode.BILINEAR, fill=fill, **kw)
                    self.check(got, v2_affine(x, "bilinear", fill, **kw), 1e-5 if dtype == torch.float32 else 0)
                    if dtype == torch.uint8:  # the fill really shows: the corners are outside
                        want = fill if isinstance(fill, list) else [fill] * 3
                        self.assertEqual(got[0, :, 0, 0].tolist(), [round(v) for v in want])

    def test_plain_affine_op_fill(self):
        # toroid.affine (F.affine_grid + grid_sample) takes torchvision's fill as well.
        import torch.nn.functional as F
        x = image((1, 3, 20, 26), torch.float32, 14)
        theta = torch.tensor([[[0.8, -0.3, 0.2], [0.25, 0.9, -0.1]]])
        grid = F.affine_grid(theta, (1, 4, 20, 26), align_corners=False)
        both = F.grid_sample(torch.cat([x, torch.ones(1, 1, 20, 26)], 1), grid, align_corners=False)
        fill = torch.tensor([0.5, 1.5, -2.0]).view(1, 3, 1, 1)
        want = (both[:, :3] - fill) * both[:, 3:] + fill
        got = toroid.affine(x, theta, mode="bilinear", fill=[0.5, 1.5, -2.0])
        self.check(got, want, FLOAT_TOL)
        near = toroid.affine(x, theta, mode="nearest", fill=9.0)
        outside = (F.grid_sample(torch.ones(1, 1, 20, 26), grid, mode="nearest", align_corners=False) < 0.5)
        outside = outside.expand_as(near)
        self.assertGreater(int(outside.sum()), 0)
        self.assertTrue(bool((near[outside] == 9.0).all()))
        self.assertFalse(bool((near[~outside] == 9.0).any()))

    def test_center_of_rotation(self):
        x = image((3, 25, 30), torch.float32, 7)
        kw = dict(angle=20.0, translate=[1, 2], scale=1.1, shear=[5.0, -3.0], center=[4.0, 9.0])
        self.check(T.affine(x, interpolation="bilinear", **kw),
                   TF.affine(x, interpolation=InterpolationMode.BILINEAR, **kw), 1e-5)
        x8 = image((3, 25, 30), torch.uint8, 7)
        self.check(T.affine(x8, interpolation="bilinear", **kw),
                   TF.affine(x8, interpolation=InterpolationMode.BILINEAR, **kw))

    def test_errors(self):
        with self.assertRaises(toroid.Error):
            T.RandomCrop(10, padding_mode="wrap")
        with self.assertRaises(toroid.Error):
            T.RandomAffine(10, interpolation="bicubic")
        with self.assertRaises(toroid.Error):  # a fill by item type is checked value by value
            T.RandomAffine(10, fill={torch.Tensor: "red"})
        with self.assertRaises(toroid.Error):
            T.RandomAffine(10, fill="red")
        x8 = image((3, 12, 12), torch.uint8)
        with self.assertRaisesRegex(toroid.Error, "channels"):
            T.RandomAffine(10, fill=[1, 2])(x8)
        with self.assertRaisesRegex(toroid.Error, "outside 0..255"):
            T.affine(x8, angle=10.0, translate=[0, 0], scale=1.0, shear=[0.0, 0.0], fill=300)
        with self.assertRaises(toroid.Error):
            T.RandomCrop(50)(image((3, 20, 20), torch.float32))
        with self.assertRaises(toroid.Error):
            T.Resize([1, 2, 3])


@needs_torchvision
class RandomTest(unittest.TestCase):
    """Under one torch.manual_seed toroid and torchvision draw the same parameters."""

    def test_random_crop_offsets(self):
        x = image((3, 40, 50), torch.float32, 8)
        for kw in (dict(size=24), dict(size=[30, 20], padding=4), dict(size=[60, 70], pad_if_needed=True),
                   dict(size=32, padding=[2, 5], pad_if_needed=True)):
            for seed in range(6):
                with self.subTest(kw=kw, seed=seed):
                    torch.manual_seed(seed)
                    got = T.RandomCrop(**kw)(x)
                    torch.manual_seed(seed)
                    want = TV.RandomCrop(**kw)(x)
                    self.assertTrue(torch.equal(got, want))
                    self.assertEqual(draw_after(lambda: T.RandomCrop(**kw)(x), seed),
                                     draw_after(lambda: TV.RandomCrop(**kw)(x), seed))

    def test_random_crop_draws_only_along_longer_axes(self):
        # torchvision v2 draws an offset only along an axis longer than the crop (v1's
        # get_params draws both whenever the sizes differ): with the height equal to the
        # crop's, one torch.randint picks the left edge and the generator moves by one draw.
        x = image((3, 30, 50), torch.float32, 12)
        for seed in range(5):
            torch.manual_seed(seed)
            got = T.RandomCrop([30, 20])(x)
            after = torch.rand(1)
            torch.manual_seed(seed)
            left = int(torch.randint(0, 50 - 20 + 1, size=()))
            self.assertTrue(torch.equal(got, TF.crop(x, 0, left, 30, 20)))
            self.assertTrue(torch.equal(after, torch.rand(1)))

    def test_random_flips(self):
        x = image((3, 9, 13), torch.uint8, 9)
        flipped = 0
        for seed in range(10):
            for cls, tv_cls in ((T.RandomHorizontalFlip, TV.RandomHorizontalFlip),
                                (T.RandomVerticalFlip, TV.RandomVerticalFlip)):
                torch.manual_seed(seed)
                got = cls(p=0.5)(x)
                torch.manual_seed(seed)
                want = tv_cls(p=0.5)(x)
                self.assertTrue(torch.equal(got, want))
                flipped += not torch.equal(got, x)
        self.assertGreater(flipped, 0)
        self.assertLess(flipped, 20)

    def test_random_affine(self):
        x = image((3, 30, 36), torch.float32, 10)
        for kw in (dict(degrees=25), dict(degrees=(-10, 40), translate=(0.1, 0.2), scale=(0.8, 1.2), shear=8),
                   dict(degrees=5, shear=(-5, 5, -3, 3), interpolation=InterpolationMode.BILINEAR)):
            for seed in range(4):
                with self.subTest(kw=kw, seed=seed):
                    torch.manual_seed(seed)
                    got = T.RandomAffine(**kw)(x)
                    torch.manual_seed(seed)
                    want = TV.RandomAffine(**kw)(x)
                    self.assertLessEqual(max_diff(got, want), 1e-5)
                    if kw.get("interpolation") != InterpolationMode.BILINEAR:
                        self.assertTrue(torch.equal(got, want))

    def test_random_affine_uint8_with_fills(self):
        # v2's RandomAffine draws as v1's does; the warp is v2's (its fill blend).
        x = image((3, 33, 28), torch.uint8, 15)
        for kw in (dict(degrees=30, translate=(0.2, 0.1), scale=(0.7, 1.3), shear=(-10, 10, -5, 5)),
                   dict(degrees=(-90, 90), scale=(0.5, 2.0), center=(3, 20))):
            for fill in (0, 90, [255, 0, 127.5]):
                for interp in (InterpolationMode.NEAREST, InterpolationMode.BILINEAR):
                    for seed in range(3):
                        with self.subTest(kw=kw, fill=fill, interp=interp, seed=seed):
                            torch.manual_seed(seed)
                            got = T.RandomAffine(interpolation=interp, fill=fill, **kw)(x)
                            torch.manual_seed(seed)
                            tv = TV.RandomAffine(**kw)
                            ps = TV.RandomAffine.get_params(tv.degrees, tv.translate, tv.scale, tv.shear,
                                                            [x.shape[-1], x.shape[-2]])
                            want = v2_affine(x, interp.value, fill, *ps, center=kw.get("center"))
                            self.assertTrue(torch.equal(got, want), max_diff(got, want))

    def test_compose_training_pipeline(self):
        mean, std = [0.5, 0.4, 0.3], [0.2, 0.25, 0.3]
        ours = T.Compose([T.Resize(48), T.RandomCrop(40, padding=2), T.RandomHorizontalFlip(),
                          T.RandomAffine(15, translate=(0.1, 0.1), interpolation=InterpolationMode.BILINEAR),
                          T.ToDtype(torch.float32, scale=True), T.Normalize(mean, std)])
        theirs = TV.Compose([TV.Resize(48, antialias=True), TV.RandomCrop(40, padding=2), TV.RandomHorizontalFlip(),
                             TV.RandomAffine(15, translate=(0.1, 0.1), interpolation=InterpolationMode.BILINEAR),
                             TV.ConvertImageDtype(torch.float32), TV.Normalize(mean, std)])
        for seed in range(5):
            x = image((3, 50 + 3 * seed, 64 - 2 * seed), torch.uint8, seed)
            torch.manual_seed(seed)
            got = ours(x)
            torch.manual_seed(seed)
            want = theirs(x)
            # uint8 resize and affine round like torchvision up to one level (see above).
            self.assertEqual(got.shape, want.shape)
            self.assertLessEqual(max_diff(got, want), 1.5 / 255 / min(std))

    def test_host_callables_run_between_segments(self):
        x = image((3, 20, 20), torch.float32, 11)
        got = T.Compose([T.CenterCrop(10), lambda t: t * 2, T.VerticalFlip()])(x)
        self.assertTrue(torch.equal(got, TF.vflip(TF.center_crop(x, [10, 10]) * 2)))


@needs_torchvision
@unittest.skipIf(TV2 is None, "torchvision.transforms.v2 needs torchvision >= 0.15 (Debian 12 has %s)"
                 % (torchvision.__version__ if torch is not None else "none"))
class V2Test(unittest.TestCase):
    def test_affine_exact_against_v2(self):
        import torchvision.transforms.v2.functional as TF2
        kw = dict(angle=37.0, translate=[3, -2], scale=0.85, shear=[7.0, -3.0])
        for shape in ((3, 41, 38), (2, 3, 20, 25), (3, 6, 9)):
            for fill in (None, 0, 77, [1.0, 128.0, 254.5]):
                for mode in (InterpolationMode.NEAREST, InterpolationMode.BILINEAR):
                    for dtype in (torch.uint8, torch.float32):
                        with self.subTest(shape=shape, fill=fill, mode=mode, dtype=dtype):
                            x = image(shape, dtype, 21)
                            got = T.affine(x, interpolation=mode, fill=fill, **kw)
                            want = TF2.affine(x, interpolation=mode, fill=fill, **kw)
                            self.assertEqual(got.dtype, want.dtype)
                            self.assertLessEqual(max_diff(got, want), 0 if dtype == torch.uint8 else 1e-5)

    def test_random_affine_exact_against_v2(self):
        for fill in (0, 90, [255, 0, 127.5]):
            for interp in (InterpolationMode.NEAREST, InterpolationMode.BILINEAR):
                kw = dict(degrees=30, translate=(0.2, 0.1), scale=(0.7, 1.3), shear=(-10, 10, -5, 5),
                          interpolation=interp, fill=fill)
                for seed in range(4):
                    x = image((3, 33 + seed, 28), torch.uint8, seed)
                    with self.subTest(fill=fill, interp=interp, seed=seed):
                        torch.manual_seed(seed)
                        got = T.RandomAffine(**kw)(x)
                        torch.manual_seed(seed)
                        self.assertTrue(torch.equal(got, TV2.RandomAffine(**kw)(x)))

    def test_compose_against_v2(self):
        mean, std = [0.5, 0.4, 0.3], [0.2, 0.25, 0.3]
        for interp in (InterpolationMode.NEAREST, InterpolationMode.BILINEAR):
            ours = T.Compose([T.Resize(44), T.RandomCrop(36, pad_if_needed=True), T.RandomHorizontalFlip(),
                              T.RandomVerticalFlip(0.3), T.RandomAffine(20, (0.1, 0.1), (0.9, 1.1), 5,
                                                                        interpolation=interp),
                              T.ToDtype(torch.float32, scale=True), T.Normalize(mean, std)])
            theirs = TV2.Compose([TV2.Resize(44, antialias=True), TV2.RandomCrop(36, pad_if_needed=True),
                                  TV2.RandomHorizontalFlip(), TV2.RandomVerticalFlip(0.3),
                                  TV2.RandomAffine(20, (0.1, 0.1), (0.9, 1.1), 5, interpolation=interp),
                                  TV2.ToDtype(torch.float32, scale=True), TV2.Normalize(mean, std)])
            for seed in range(6):
                x = image((3, 40 + 5 * seed, 60 - 3 * seed), torch.uint8, seed)
                torch.manual_seed(seed)
                got = ours(x)
                torch.manual_seed(seed)
                want = theirs(x)
                self.assertEqual(got.shape, want.shape)
                if interp == InterpolationMode.BILINEAR:
                    self.assertLessEqual(max_diff(got, want), 1.5 / 255 / min(std))
                else:
                    self.assertLessEqual((got - want).abs().gt(1.5 / 255 / min(std)).float().mean().item(), 0.01)
                self.assertEqual(draw_after(lambda: ours(x), seed), draw_after(lambda: theirs(x), seed))


NO_RECOMPILE_SCRIPT = r"""
import os, sys, numpy as np, torch
import json, toroid, toroid.transforms as T
cache = os.environ["TOROID_CACHE_DIR"]
def programs():  # the full builds (each program also has a quick one, built first)
    toroid.wait_for_background_builds()
    manifest = lambda n: os.path.join(cache, n, "manifest.json")
    full = lambda n: os.path.exists(manifest(n)) and json.load(open(manifest(n))).get("tier") == "full"
    return sorted(n for n in os.listdir(cache) if not n.endswith(".lock") and not n.startswith(".") and full(n))
t = T.Compose([T.Resize(24), T.RandomCrop(20, padding=2), T.RandomHorizontalFlip(),
               T.RandomAffine(20, (0.1, 0.1), interpolation="nearest"), T.ToDtype(torch.float32, scale=True)])
def run(seed):
    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in rng.integers(30, 60, size=2))  # both axes shrink (an unchanged one is elided)
    torch.manual_seed(seed)
    return t(torch.from_numpy(rng.integers(0, 256, size=(3, h, w), dtype=np.uint8)))
for seed in range(12):  # with and without the flip, crops inside the image and leaving it
    run(seed)
warm = programs()
for seed in range(12, 32):  # new sizes, offsets, matrices
    run(seed)
print(len(warm), len(programs()))
sys.exit(0 if 0 < len(warm) <= 4 and programs() == warm else 1)
"""


VARIANTS_SCRIPT = r"""
import os, sys, numpy as np, torch
import json, toroid, toroid.transforms as T
cache = os.environ["TOROID_CACHE_DIR"]
def programs():  # the full builds (each program also has a quick one, built first)
    toroid.wait_for_background_builds()
    manifest = lambda n: os.path.join(cache, n, "manifest.json")
    full = lambda n: os.path.exists(manifest(n)) and json.load(open(manifest(n))).get("tier") == "full"
    return sorted(n for n in os.listdir(cache) if not n.endswith(".lock") and not n.startswith(".") and full(n))
x = torch.randint(0, 256, (3, 50, 40), dtype=torch.uint8)
flip = T.Compose([T.Resize(24), T.RandomHorizontalFlip(), T.RandomVerticalFlip(0.3), T.ToDtype(torch.float32, scale=True)])
torch.manual_seed(0)
flip(x)
pid = os.fork()  # while the other outcomes compile (and the full builds, in the library's
# threads): the child must not wait on them forever
if pid == 0:
    for seed in range(8):
        torch.manual_seed(seed)
        flip(x)
    os._exit(0)
if os.waitpid(pid, 0)[1] != 0:
    sys.exit(2)
T._wait_for_variants()
after_first = programs()
for seed in range(40):  # every outcome of both flips
    torch.manual_seed(seed)
    flip(x)
always = T.Compose([T.Resize(20), T.RandomHorizontalFlip(1.0)])  # one outcome: nothing else compiles
always(x)
T._wait_for_variants()
print(len(after_first), len(programs()))
sys.exit(0 if len(after_first) == 4 and len(programs()) == 5 else 1)
"""


@needs_torchvision
class NoRecompileTest(unittest.TestCase):
    def run_with_fresh_cache(self, script):
        """Runs `script` in a new Python process with an empty kernel cache; it must exit 0."""
        import subprocess
        import sys
        import tempfile
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, TOROID_CACHE_DIR=cache)
            r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_other_outcomes_compile_beside_the_first(self):
        # A Compose's random flips: the first call compiles its own outcome and, in the
        # background, the three others (flip or not, twice), so later draws compile nothing;
        # a process forked meanwhile runs; a flip that always applies adds no other program.
        self.run_with_fresh_cache(VARIANTS_SCRIPT)

    def test_new_random_values_compile_nothing(self):
        # Every program toroid compiles lands in the kernel cache folder. The structures are
        # few (flip or not, times a crop inside the image or one that reads padding; a resize
        # leaving an axis unchanged would be another, so every image here shrinks); once
        # they were seen, twenty calls with new sizes and random values add nothing.
        self.run_with_fresh_cache(NO_RECOMPILE_SCRIPT)


# ---- DataLoader workers ----------------------------------------------------------------------

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def training_transform():
    return T.Compose([T.Resize(40), T.RandomCrop(32, pad_if_needed=True), T.RandomHorizontalFlip(),
                      T.RandomAffine(10, interpolation="bilinear"), T.ToDtype(torch.float32, scale=True),
                      T.Normalize(MEAN, STD)])


class RandomSizedImages(torch.utils.data.Dataset if torch is not None else object):
    """uint8 images of random sizes, transformed with a seed of their own (so that a worker's
    result can be compared with the parent's)."""

    def __init__(self, n):
        self.n = n
        self.transform = training_transform()

    def __len__(self):
        return self.n

    def raw(self, i):
        rng = np.random.default_rng(1000 + i)
        h, w = rng.integers(20, 70, size=2)
        return torch.from_numpy(rng.integers(0, 256, size=(3, h, w), dtype=np.uint8))

    def __getitem__(self, i):
        torch.manual_seed(i)
        return self.transform(self.raw(i))


@needs_torchvision
class DataLoaderTest(unittest.TestCase):
    N = 12

    def check_loader(self, context):
        ds = RandomSizedImages(self.N)
        expected = torch.stack([ds[i] for i in range(self.N)])  # the parent compiles and runs first
        loader = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2, multiprocessing_context=context)
        got = torch.cat(list(loader))
        self.assertEqual(tuple(got.shape), (self.N, 3, 32, 32))
        self.assertTrue(torch.equal(got, expected))

    def test_fork_after_the_parent_ran(self):
        self.check_loader("fork")

    def test_spawn(self):
        self.check_loader("spawn")


class WorkerThreads(torch.utils.data.Dataset if torch is not None else object):
    """Reports the threads toroid's runs use in the process that reads an item."""

    def __len__(self):
        return 2

    def __getitem__(self, i):
        from toroid import _core
        return torch.tensor([_core.effective_threads(), _core.effective_threads(0), _core.effective_threads(3)])


@unittest.skipIf(torch is None, "PyTorch is not installed")
class DataLoaderThreadsTest(unittest.TestCase):
    def test_workers_run_one_thread_unless_told(self):
        # Every core in the parent; one in each spawned worker (which shares the cores with
        # the others); a count given explicitly is kept.
        self.assertEqual(WorkerThreads()[0].tolist()[1:], [0, 3])
        loader = torch.utils.data.DataLoader(WorkerThreads(), batch_size=1, num_workers=2,
                                             multiprocessing_context="spawn")
        for row in loader:
            self.assertEqual(row[0].tolist()[1:], [1, 3])


if __name__ == "__main__":
    unittest.main()
