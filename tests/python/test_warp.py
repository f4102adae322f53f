"""toroid.transforms' rotate and RandomRotation against torchvision: v2 itself where it is
installed (the GPU machine: torchvision 0.26), else the same computation assembled from
Debian's torchvision 0.14 pieces (its inverse matrix, output size and affine grid; v2's fill
blend and fast paths for multiples of 90 degrees)."""

import unittest

import numpy as np

import toroid.transforms as T
import toroid.transforms.functional as F

try:
    import torch
    import torchvision.transforms.functional as TF
    from torchvision.transforms import InterpolationMode
except ImportError:  # pragma: no cover
    torch = None

try:  # torchvision before 0.17: the tensor kernels whose pieces stand in for v2 below
    import torchvision.transforms.functional_tensor as FT
except ImportError:
    FT = None

try:
    import torchvision.transforms.v2 as TV2
    import torchvision.transforms.v2.functional as TF2
except ImportError:
    TV2 = TF2 = None

needs_torchvision = unittest.skipIf(torch is None, "torchvision (python3-torchvision) is not installed")


def image(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == torch.uint8:
        return torch.from_numpy(rng.integers(0, 256, size=shape, dtype=np.uint8))
    return torch.from_numpy(rng.random(shape, dtype=np.float32))


def max_diff(a, b):
    return (a.double() - b.double()).abs().max().item() if a.numel() else 0.0


def v2_rotate(x, angle, mode, expand=False, center=None, fill=None):
    """torchvision v2's rotate_image, from 0.14's pieces where v2 is missing."""
    if TF2 is not None:
        return TF2.rotate(x, angle, interpolation=InterpolationMode(mode), expand=expand, center=center, fill=fill)
    import torch.nn.functional as NF
    angle = angle % 360
    if center is None:
        if angle == 0:
            return x.clone()
        if angle == 180:
            return torch.rot90(x, 2, (-2, -1))
        if expand or x.shape[-1] == x.shape[-2]:
            if angle == 90:
                return torch.rot90(x, 1, (-2, -1))
            if angle == 270:
                return torch.rot90(x, 3, (-2, -1))
    h, w = x.shape[-2:]
    center_f = [0.0, 0.0] if center is None else [c - s * 0.5 for c, s in zip(center, [w, h])]
    matrix = TF._get_inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    ow, oh = FT._compute_affine_output_size(matrix, w, h) if expand else (w, h)
    theta = torch.tensor(matrix, dtype=torch.float32).reshape(1, 2, 3)
    grid = FT._gen_affine_grid(theta, w=w, h=h, ow=ow, oh=oh)
    img = x.reshape(-1, *x.shape[-3:]).float()
    grid = grid.expand(img.shape[0], -1, -1, -1)
    if fill is not None:
        img = torch.cat((img, torch.ones_like(img[:, :1])), dim=1)
    img = NF.grid_sample(img, grid, mode=mode, padding_mode="zeros", align_corners=False)
    if fill is not None:
        img, mask = img[:, :-1], img[:, -1:].expand_as(img[:, :-1])
        fill_img = torch.tensor(fill if isinstance(fill, list) else [float(fill)]).view(1, -1, 1, 1)
        if mode == "nearest":
            img = torch.where(mask < 0.5, fill_img.expand_as(img), img)
        else:
            img = img.sub(fill_img).mul(mask).add(fill_img)
    out = img if x.dtype == torch.float32 else img.round().to(x.dtype)
    return out.reshape(x.shape[:-2] + (oh, ow))


@needs_torchvision
class RotateTest(unittest.TestCase):
    def check(self, got, want, dtype):
        self.assertEqual(tuple(got.shape), tuple(want.shape))
        self.assertEqual(got.dtype, want.dtype)
        self.assertLessEqual(max_diff(got, want), 0 if dtype == torch.uint8 else 1e-5)

    def test_rotate_against_torchvision(self):
        for shape in ((3, 23, 31), (2, 3, 16, 16), (1, 9, 14)):
            for angle in (0, 90, 180, 270, -90, 33.3, -47.0, 400.0, 135.0):
                for expand in (False, True):
                    for mode in ("nearest", "bilinear"):
                        for dtype in (torch.uint8, torch.float32):
                            for fill in (None, 0, [255.0] * shape[-3]):
                                with self.subTest(shape=shape, angle=angle, expand=expand, mode=mode, dtype=dtype,
                                                  fill=fill):
                                    x = image(shape, dtype, 3)
                                    got = F.rotate(x, angle, interpolation=InterpolationMode(mode), expand=expand,
                                                   fill=fill)
                                    self.check(got, v2_rotate(x, angle, mode, expand, None, fill), dtype)

    def test_rotate_about_a_center(self):
        x = image((3, 20, 27), torch.uint8, 5)
        for angle in (90, 30):
            for expand in (False, True):
                with self.subTest(angle=angle, expand=expand):
                    got = F.rotate(x, angle, expand=expand, center=[4, 7])
                    self.check(got, v2_rotate(x, angle, "nearest", expand, [4, 7], None), torch.uint8)

    def test_random_rotation_draws_as_torchvision(self):
        for seed in range(3):
            x = image((3, 25, 19), torch.uint8, seed)
            torch.manual_seed(seed)
            got = T.RandomRotation((-40, 60), expand=True)(x)
            torch.manual_seed(seed)
            angle = torch.empty(1).uniform_(-40.0, 60.0).item()
            after = torch.rand(1).item()
            self.check(got, v2_rotate(x, angle, "nearest", True, None, [0.0]), torch.uint8)
            torch.manual_seed(seed)
            T.RandomRotation((-40, 60), expand=True)(x)
            self.assertEqual(torch.rand(1).item(), after)  # one draw, as torchvision

    def test_errors(self):
        x = image((3, 8, 8), torch.uint8)
        with self.assertRaises(T.Error if hasattr(T, "Error") else Exception):
            F.rotate(x, 10, interpolation=InterpolationMode.BICUBIC)
        with self.assertRaises(Exception):
            T.RandomRotation(-3)
        with self.assertRaises(Exception):
            T.RandomRotation((1, 2, 3))
        with self.assertRaises(Exception):
            F.rotate(x, 10, fill=[1.0, 2.0])  # two values for three channels


@needs_torchvision
class PerspectiveTest(unittest.TestCase):
    START = [[0, 0], [30, 0], [30, 24], [0, 24]]
    END = [[3, 2], [27, 1], [29, 22], [1, 20]]

    def test_perspective_against_torchvision(self):
        # Without a fill torchvision 0.14 computes what v2 does (its fill blend differs).
        for shape in ((3, 25, 31), (2, 1, 25, 31)):
            for mode in ("nearest", "bilinear"):
                for dtype in (torch.uint8, torch.float32):
                    with self.subTest(shape=shape, mode=mode, dtype=dtype):
                        x = image(shape, dtype, 11)
                        got = F.perspective(x, self.START, self.END, interpolation=InterpolationMode(mode))
                        if TF2 is not None:
                            want = TF2.perspective(x, self.START, self.END, interpolation=InterpolationMode(mode))
                        else:
                            want = TF.perspective(x, self.START, self.END, interpolation=InterpolationMode(mode))
                        self.assertEqual(tuple(got.shape), tuple(want.shape))
                        # 0.14 solves for the coefficients in float32: float results within 1e-4 there.
                        tol = 0 if dtype == torch.uint8 or TF2 is not None else 1e-4
                        self.assertLessEqual(max_diff(got, want), 1e-5 if TF2 is not None and dtype == torch.float32
                                             else tol)

    def test_coefficients_and_errors(self):
        x = image((3, 12, 15), torch.uint8, 2)
        identity = F.perspective(x, None, None, interpolation=InterpolationMode.NEAREST,
                                 coefficients=[1, 0, 0, 0, 1, 0, 0, 0])
        self.assertTrue(torch.equal(identity, x))
        with self.assertRaises(Exception):
            F.perspective(x, self.START, self.END, coefficients=[1, 0, 0, 0, 1, 0, 0, 0])
        with self.assertRaises(Exception):
            F.perspective(x, None, None)
        with self.assertRaises(Exception):
            F.perspective(x, self.START[:3], self.END)
        with self.assertRaises(Exception):
            F.perspective(x, self.START, self.END, interpolation=InterpolationMode.BICUBIC)
        with self.assertRaises(Exception):
            T.RandomPerspective(distortion_scale=1.5)

    def test_random_perspective_draws_as_torchvision(self):
        import torchvision.transforms as TV1
        for seed in range(4):
            x = image((3, 26 + seed, 33), torch.uint8, seed)
            torch.manual_seed(seed)
            got = T.RandomPerspective(0.6, p=0.5, interpolation=InterpolationMode.NEAREST)(x)
            torch.manual_seed(seed)
            if TV2 is not None:
                want = TV2.RandomPerspective(0.6, p=0.5, interpolation=InterpolationMode.NEAREST)(x)
            else:  # 0.14 draws the same numbers in the same order (its coefficients are float32 sums)
                want = x
                if torch.rand(1) < 0.5:
                    start, end = TV1.RandomPerspective.get_params(33, 26 + seed, 0.6)
                    want = F.perspective(x, start, end, interpolation=InterpolationMode.NEAREST, fill=0)
            after = torch.rand(1).item()
            with self.subTest(seed=seed):
                self.assertTrue(torch.equal(got, want))
                torch.manual_seed(seed)
                T.RandomPerspective(0.6, p=0.5, interpolation=InterpolationMode.NEAREST)(x)
                self.assertEqual(torch.rand(1).item(), after)


@needs_torchvision
@unittest.skipIf(TV2 is None, "torchvision.transforms.v2 needs torchvision >= 0.15")
class RotateV2Test(unittest.TestCase):
    def test_random_perspective_against_v2(self):
        for fill in (0, [10, 200, 30]):
            for interp in (InterpolationMode.NEAREST, InterpolationMode.BILINEAR):
                for seed in range(3):
                    x = image((3, 30 + seed, 22), torch.uint8, seed)
                    with self.subTest(fill=fill, interp=interp, seed=seed):
                        torch.manual_seed(seed)
                        got = T.RandomPerspective(0.5, p=0.7, interpolation=interp, fill=fill)(x)
                        torch.manual_seed(seed)
                        self.assertTrue(torch.equal(got, TV2.RandomPerspective(0.5, p=0.7, interpolation=interp,
                                                                               fill=fill)(x)))

    def test_random_rotation_against_v2(self):
        for fill in (0, [10, 200, 30]):
            for interp in (InterpolationMode.NEAREST, InterpolationMode.BILINEAR):
                for expand in (False, True):
                    kw = dict(degrees=50, interpolation=interp, expand=expand, fill=fill)
                    for seed in range(3):
                        x = image((3, 30 + seed, 22), torch.uint8, seed)
                        with self.subTest(fill=fill, interp=interp, expand=expand, seed=seed):
                            torch.manual_seed(seed)
                            got = T.RandomRotation(**kw)(x)
                            torch.manual_seed(seed)
                            self.assertTrue(torch.equal(got, TV2.RandomRotation(**kw)(x)))


if __name__ == "__main__":
    unittest.main()
