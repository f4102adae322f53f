"""The training recipes of toroid.transforms.recipes against torchvision.transforms.v2 under
the same seeds (where v2 is installed: the GPU machine, torchvision 0.26): the same tensors
(uint8 steps bit for bit, the float32 result within rounding) and the same state of torch's
generator afterwards, over images of varied sizes; each image alone and all of them through
per_sample. Everywhere: every recipe builds, and runs on one image."""

import unittest

import numpy as np

import toroid
import toroid.transforms as T
from toroid.transforms import recipes

from support import TV2, needs_torch, needs_v2, torch


def images(n, seed=0, lo=160, hi=700):
    rng = np.random.default_rng(seed)
    return [torch.from_numpy(rng.integers(0, 256, size=(3, int(rng.integers(lo, hi)), int(rng.integers(lo, hi))),
                                          dtype=np.uint8)) for _ in range(n)]


@needs_torch
class Builds(unittest.TestCase):
    def test_every_recipe_runs(self):
        x = images(1, seed=1)[0]
        for name in recipes.RECIPES:
            torch.manual_seed(0)
            y = recipes.build(name)(x)
            self.assertEqual(y.dtype, torch.float32, name)
            self.assertEqual(y.shape[0], 3, name)

    def test_unknown_recipe(self):
        with self.assertRaises(toroid.Error):
            recipes.build("resnet51")


@needs_torch
@needs_v2
class AgainstTorchvision(unittest.TestCase):
    def check(self, name, n=32):
        ours, theirs = recipes.build(name), recipes.build(name, TV2)
        xs = images(n, seed=hash(name) % 1000)
        want = []
        for i, x in enumerate(xs):
            torch.manual_seed(1000 + i)
            w = theirs(x)
            state = torch.get_rng_state()
            torch.manual_seed(1000 + i)
            g = ours(x)
            self.assertTrue(torch.equal(torch.get_rng_state(), state), "%s: draws differ at image %d" % (name, i))
            self.assertEqual(g.shape, w.shape, "%s: image %d" % (name, i))
            self.assertLessEqual((g - w).abs().max().item(), 1e-5, "%s: image %d" % (name, i))
            want.append(w)
        # per_sample: one call, each image its own draws, in the loop's order.
        torch.manual_seed(77)
        loop = [theirs(x) for x in xs]
        torch.manual_seed(77)
        batch = ours.per_sample(xs)
        for i, (g, w) in enumerate(zip(batch, loop)):
            self.assertLessEqual((g - w).abs().max().item(), 1e-5, "%s per_sample: image %d" % (name, i))

    def test_resnet50(self):
        self.check("resnet50")

    @unittest.skipUnless(torch is not None and torch.cuda.is_available(), "no CUDA device (scripts/gpu-test.sh runs it)")
    def test_per_sample_on_cuda_gives_the_cpu_answers(self):
        # torchvision's own CUDA kernels are not the reference (its antialiased uint8
        # resize is off by a few levels there): toroid on CUDA gives torchvision's CPU
        # tensors under the same seeds.
        for name in recipes.RECIPES:
            ours, theirs = recipes.build(name), recipes.build(name, TV2)
            xs = images(24 if name != "segmentation" else 8, seed=hash(name) % 1000 + 1)
            torch.manual_seed(99)
            loop = [theirs(x) for x in xs]
            torch.manual_seed(99)
            batch = ours.per_sample([x.cuda() for x in xs])
            for i, (g, w) in enumerate(zip(batch, loop)):
                self.assertEqual(g.device.type, "cuda", name)
                self.assertEqual(g.shape, w.shape, "%s: image %d" % (name, i))
                self.assertLessEqual((g.cpu() - w).abs().max().item(), 1e-5, "%s on CUDA: image %d" % (name, i))

    def test_rand_m9(self):
        self.check("rand-m9")

    def test_autoaugment(self):
        self.check("autoaugment")

    def test_simclr(self):
        self.check("simclr")

    def test_segmentation(self):
        self.check("segmentation", n=12)


if __name__ == "__main__":
    unittest.main()
