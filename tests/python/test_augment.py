"""toroid.transforms' AutoAugment, RandAugment and TrivialAugmentWide.

Where torchvision.transforms.v2 is installed (the GPU machine: torchvision 0.26), every policy
is run against v2 under the same seeds: the same tensors bit for bit, and the same state of
torch's generator afterwards (the same draws in the same order). Everywhere, each operation a
policy draws is checked against the functional form it stands for, and the arguments'
errors."""

import math
import unittest

import numpy as np

import toroid
import toroid.transforms as T
import toroid.transforms.functional as F
from toroid.transforms import _augment

from support import TV2, needs_torch, needs_v2, torch

if TV2 is not None:
    from torchvision.transforms import InterpolationMode as TVMode


def images(n, seed=0, channels=3):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        h, w = int(rng.integers(20, 70)), int(rng.integers(20, 70))
        out.append(torch.from_numpy(rng.integers(0, 256, size=(channels, h, w), dtype=np.uint8)))
    return out


@needs_torch
class Operations(unittest.TestCase):
    """Each operation as toroid emits it equals the functional form torchvision calls."""

    def emit(self, x, name, magnitude, fill=None, mode="nearest"):
        from toroid.transforms import _base
        state = _base._State(x)
        _augment._emit_operation(state, name, magnitude, mode, fill)
        return state.flush()

    def test_geometric(self):
        x = images(1, seed=3)[0]
        for m in (0.17, -0.3):
            deg = math.degrees(math.atan(m))
            self.assertTrue(torch.equal(self.emit(x, "ShearX", m), F.affine(x, 0.0, [0, 0], 1.0, [deg, 0.0],
                                                                          center=[0, 0])))
            self.assertTrue(torch.equal(self.emit(x, "ShearY", m), F.affine(x, 0.0, [0, 0], 1.0, [0.0, deg],
                                                                          center=[0, 0])))
        self.assertTrue(torch.equal(self.emit(x, "TranslateX", -7.9), F.affine(x, 0.0, [-7, 0], 1.0, [0.0, 0.0])))
        self.assertTrue(torch.equal(self.emit(x, "TranslateY", 5.2), F.affine(x, 0.0, [0, 5], 1.0, [0.0, 0.0])))
        self.assertTrue(torch.equal(self.emit(x, "Rotate", 21.0, fill=[9.0]), F.rotate(x, 21.0, fill=9)))
        # A shear moves pixels: the emitted op is not the identity.
        self.assertFalse(torch.equal(self.emit(x, "ShearX", 0.3), x))

    def test_colour(self):
        x = images(1, seed=4)[0]
        self.assertTrue(torch.equal(self.emit(x, "Brightness", 0.3), F.adjust_brightness(x, 1.3)))
        self.assertTrue(torch.equal(self.emit(x, "Color", -0.4), F.adjust_saturation(x, 0.6)))
        self.assertTrue(torch.equal(self.emit(x, "Contrast", 0.5), F.adjust_contrast(x, 1.5)))
        self.assertTrue(torch.equal(self.emit(x, "Posterize", 5.0), F.posterize(x, 5)))
        self.assertTrue(torch.equal(self.emit(x, "Solarize", 0.4), F.solarize(x, 255 * 0.4)))
        self.assertTrue(torch.equal(self.emit(x, "Invert", 0.0), F.invert(x)))
        self.assertTrue(torch.equal(self.emit(x, "Identity", 0.0), x))

    def test_ops_of_each_draw(self):
        # The ops a draw emits name the operation drawn: sharpness, autocontrast and equalize
        # are toroid ops of their own.
        from toroid.transforms import _base
        for name, op in (("Sharpness", "adjust_sharpness"), ("AutoContrast", "autocontrast"),
                         ("Equalize", "equalize")):
            state = _base._State(images(1)[0]).probe()  # ops gathered, nothing run
            _augment._emit_operation(state, name, 0.25, "nearest", None)
            self.assertEqual([o["op"] for o in state.ops], [op])
            if name == "Sharpness":
                self.assertEqual(state.ops[0]["factor"], 1.25)


@needs_torch
class Arguments(unittest.TestCase):
    def test_errors(self):
        with self.assertRaises(toroid.Error):
            T.AutoAugment("imagenet2")
        with self.assertRaises(ValueError):
            T.RandAugment(num_ops=-1)
        with self.assertRaises(toroid.Error):
            T.RandAugment(magnitude=31)
        with self.assertRaises(TypeError):
            T.RandAugment(magnitude=2.5)
        with self.assertRaises(toroid.Error):
            T.TrivialAugmentWide(num_magnitude_bins=1)
        with self.assertRaises(toroid.Error):
            T.AutoAugment(interpolation=T.InterpolationMode.BICUBIC)

    def test_policies_by_name_and_enum(self):
        for p in ("imagenet", "cifar10", "svhn", T.AutoAugmentPolicy.SVHN):
            self.assertEqual(len(T.AutoAugment(p)._policies), 25)

    def test_same_seed_same_draws(self):
        x = images(1, seed=5)[0]
        for t in (T.RandAugment(num_ops=3, magnitude=5), T.TrivialAugmentWide(), T.AutoAugment("svhn")):
            torch.manual_seed(11)
            _, a = run_state_ops(t, x)
            torch.manual_seed(11)
            _, b = run_state_ops(t, x)
            self.assertEqual(a, b)


def run_state_ops(t, x):
    from toroid.transforms import _base
    state = _base._State(x).probe()  # the ops a call draws, gathered without running them
    t._emit(state)
    return state, list(state.ops)


@needs_torch
class AugMixAlone(unittest.TestCase):
    """AugMix without torchvision: the mix's weights and where each chain starts."""

    def test_all_weight_on_the_input_gives_the_input(self):
        x = next(iter(images(1, seed=2)))
        real = torch._sample_dirichlet
        try:
            # The first draw (input vs chains) puts everything on the input.
            torch._sample_dirichlet = lambda p: torch.cat([torch.ones_like(p[:, :1]), torch.zeros_like(p[:, 1:])], 1)
            torch.manual_seed(0)
            self.assertTrue(torch.equal(T.AugMix()(x), x))
        finally:
            torch._sample_dirichlet = real

    def test_shapes_dtypes_and_errors(self):
        x = next(iter(images(1, seed=4)))
        torch.manual_seed(1)
        self.assertEqual(T.AugMix()(x).dtype, torch.uint8)
        xf = torch.stack([x, x]).float() / 255
        out = T.AugMix(all_ops=False)(xf)
        self.assertEqual((out.shape, out.dtype), (xf.shape, torch.float32))
        self.assertLessEqual(out.max().item(), 1.0 + 1e-6)
        self.assertEqual(T.Compose([T.AugMix(), T.RandomHorizontalFlip()])(x).shape, x.shape)
        with self.assertRaisesRegex(toroid.Error, r"The severity must be between \[1, 10\]. Got 11 instead."):
            T.AugMix(severity=11)


@needs_torch
@needs_v2
class AgainstTorchvision(unittest.TestCase):
    """Under the same seed: torchvision v2's tensor and generator state."""

    def check(self, ours, theirs, seeds=range(48), channels=3):
        for i, x in enumerate(images(len(seeds), seed=7, channels=channels)):
            torch.manual_seed(seeds[i])
            want = theirs(x)
            after = torch.get_rng_state()
            torch.manual_seed(seeds[i])
            got = ours(x)
            self.assertTrue(torch.equal(torch.get_rng_state(), after), "draws differ at seed %d" % seeds[i])
            self.assertEqual(got.shape, want.shape)
            diff = (got.int() - want.int()).abs().max().item()
            self.assertEqual(diff, 0, "seed %d: max |diff| %d" % (seeds[i], diff))

    def test_autoaugment(self):
        for policy, tv in (("imagenet", TV2.AutoAugmentPolicy.IMAGENET), ("cifar10", TV2.AutoAugmentPolicy.CIFAR10),
                           ("svhn", TV2.AutoAugmentPolicy.SVHN)):
            self.check(T.AutoAugment(policy), TV2.AutoAugment(tv))
        self.check(T.AutoAugment("imagenet", T.InterpolationMode.BILINEAR, fill=[128, 64, 0]),
                   TV2.AutoAugment(TV2.AutoAugmentPolicy.IMAGENET, TVMode.BILINEAR, fill=[128, 64, 0]))

    def test_randaugment(self):
        self.check(T.RandAugment(), TV2.RandAugment())
        self.check(T.RandAugment(num_ops=3, magnitude=20, interpolation=T.InterpolationMode.BILINEAR),
                   TV2.RandAugment(num_ops=3, magnitude=20, interpolation=TVMode.BILINEAR))
        self.check(T.RandAugment(), TV2.RandAugment(), channels=1)

    def test_trivialaugment(self):
        self.check(T.TrivialAugmentWide(), TV2.TrivialAugmentWide())
        self.check(T.TrivialAugmentWide(fill=7), TV2.TrivialAugmentWide(fill=7))

    def test_augmix(self):
        self.check(T.AugMix(), TV2.AugMix(), seeds=range(24))
        self.check(T.AugMix(severity=7, mixture_width=2, chain_depth=2, alpha=0.5, all_ops=False),
                   TV2.AugMix(severity=7, mixture_width=2, chain_depth=2, alpha=0.5, all_ops=False), seeds=range(16))
        self.check(T.AugMix(interpolation=T.InterpolationMode.NEAREST, fill=9),
                   TV2.AugMix(interpolation=TVMode.NEAREST, fill=9), seeds=range(16), channels=1)
        # A batch: one chain of operations for every image, weights drawn per image; float32
        # images within float32 rounding (the operations' own float results are).
        x0 = next(iter(images(1, seed=3)))
        x = torch.stack([x0, x0.flip(-1), x0.flip(-2), x0]).float() / 255
        for seed in range(8):
            torch.manual_seed(seed)
            want = TV2.AugMix()(x)
            torch.manual_seed(seed)
            got = T.AugMix()(x)
            self.assertLessEqual((got - want).abs().max().item(), 1e-5, "seed %d" % seed)
        if torch.cuda.is_available():
            x0 = next(iter(images(1, seed=5)))
            xc = torch.stack([x0, x0.flip(-1), x0.flip(-2)]).cuda()
            for seed in range(8):
                torch.manual_seed(seed)
                want = TV2.AugMix()(xc)
                torch.manual_seed(seed)
                got = T.AugMix()(xc)
                self.assertTrue(torch.equal(got, want), "CUDA seed %d" % seed)

    def test_in_a_recipe(self):
        ours = T.Compose([T.RandomResizedCrop(48, interpolation=T.InterpolationMode.BICUBIC),
                          T.RandomHorizontalFlip(), T.RandAugment(2, 9), T.ToDtype(torch.float32, scale=True),
                          T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
        theirs = TV2.Compose([TV2.RandomResizedCrop(48, interpolation=TVMode.BICUBIC, antialias=True),
                              TV2.RandomHorizontalFlip(), TV2.RandAugment(2, 9), TV2.ToDtype(torch.float32, scale=True),
                              TV2.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
        for i, x in enumerate(images(24, seed=9)):
            torch.manual_seed(i)
            want = theirs(x)
            torch.manual_seed(i)
            got = ours(x)
            self.assertLessEqual((got - want).abs().max().item(), 1e-5, "seed %d" % i)


if __name__ == "__main__":
    unittest.main()
