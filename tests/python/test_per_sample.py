"""Transform.per_sample: each image its own random draws in one batched call, equal to the
per-image loop [t(x) for x in images] (the same tensors, and the same state of torch's
generator after it), stacked when the results share a shape; on CUDA tensors too, where
images of one structure share their kernels' launches."""

import json
import unittest

import numpy as np

import toroid
import toroid.transforms as T

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = unittest.skipIf(torch is None, "PyTorch is not installed")
needs_cuda = unittest.skipIf(torch is None or not torch.cuda.is_available(), "no CUDA device (PyTorch with CUDA)")


def images(device="cpu", seed=0):
    g = np.random.default_rng(seed)
    sizes = [(40, 50), (64, 48), (33, 71), (40, 50), (90, 31), (28, 28)]
    return [torch.from_numpy(g.integers(0, 256, (3, h, w), dtype=np.uint8)).to(device) for h, w in sizes]


def recipe():
    return T.Compose([T.RandomCrop(30, pad_if_needed=True), T.RandomHorizontalFlip(), T.RandomRotation(20),
                      T.RandomPerspective(0.3, p=0.5), T.ToDtype(torch.float32, scale=True),
                      T.Normalize([0.5, 0.4, 0.3], [0.2, 0.25, 0.3])])


class _CutFlip(T.Transform):
    """A transform that runs its op as a program of its own (as the augmentation policies'
    draws do), flipping one way or the other by a draw."""

    def _emit(self, state):
        dims = [3] if torch.rand(1).item() < 0.5 else [2]
        state.cut()
        state.add({"op": "flip", "dims": dims})
        state.cut()


@needs_torch
class PerSampleTest(unittest.TestCase):
    def check_like_a_loop(self, t, xs, seed):
        torch.manual_seed(seed)
        want = [t(x) for x in xs]
        after_loop = torch.rand(1).item()
        torch.manual_seed(seed)
        got = t.per_sample(xs)
        self.assertEqual(torch.rand(1).item(), after_loop)  # the same draws, no more
        self.assertEqual(len(got), len(want))
        for i, (g, w) in enumerate(zip(got, want)):
            with self.subTest(image=i):
                self.assertEqual(tuple(g.shape), tuple(w.shape))
                self.assertTrue(torch.equal(g, w))
        return got

    def test_recipe_like_a_per_image_loop(self):
        for seed in range(3):
            got = self.check_like_a_loop(recipe(), images(seed=seed), seed)
            self.assertIsInstance(got, torch.Tensor)  # one shape: stacked
            self.assertEqual(tuple(got.shape), (6, 3, 30, 30))

    def test_repeated_op_lists_share_a_handle_and_one_offs_are_not_kept(self):
        from toroid.transforms import _base
        ops = [{"op": "crop", "top": 1, "left": 2, "height": 3, "width": 4}]
        first, second, third = (_base._draw_pipeline(ops) for _ in range(3))
        self.assertIsNot(first, second)  # kept from its second coming on
        self.assertIs(second, third)
        once = [{"op": "crop", "top": 5, "left": 6, "height": 3, "width": 4}]
        _base._draw_pipeline(once)
        self.assertNotIn(json.dumps(once), _base._drawn)

    def test_results_of_several_sizes_come_back_as_a_list(self):
        t = T.Compose([T.RandomRotation(40, expand=True), T.RandomHorizontalFlip()])
        got = self.check_like_a_loop(t, images(seed=4), 4)
        self.assertIsInstance(got, list)

    def test_a_host_step_runs_image_by_image(self):
        t = T.Compose([T.RandomCrop(24), lambda x: x.flip(-2), T.RandomHorizontalFlip()])
        self.check_like_a_loop(t, images(seed=2), 2)

    def test_programs_of_their_own_run_in_rounds(self):
        # Each image's segments: crop | flip | flip | convert; round k runs every image's k-th.
        t = T.Compose([T.RandomCrop(24), _CutFlip(), T.RandomHorizontalFlip(), _CutFlip(),
                       T.ToDtype(torch.float32, scale=True)])
        for seed in range(3):
            got = self.check_like_a_loop(t, images(seed=seed), seed)
            self.assertIsInstance(got, torch.Tensor)
            self.assertEqual(tuple(got.shape), (6, 3, 24, 24))
        # 4-D images (one each) are concatenated along N, as run_batch does.
        xs = [x[None] for x in images(seed=5)]
        torch.manual_seed(5)
        want = torch.cat([t(x) for x in xs])
        torch.manual_seed(5)
        got = t.per_sample(xs)
        self.assertEqual(tuple(got.shape), (6, 3, 24, 24))
        self.assertTrue(torch.equal(got, want))
        # Several sizes: a list.
        got = self.check_like_a_loop(T.Compose([_CutFlip(), T.RandomHorizontalFlip()]), images(seed=6), 6)
        self.assertIsInstance(got, list)

    def test_rounds_skip_a_bad_image(self):
        xs = images(seed=7)
        xs[3] = torch.zeros(3, 0, 9, dtype=torch.uint8)  # fails when run, not when drawn
        t = T.Compose([_CutFlip(), _CutFlip()])
        torch.manual_seed(1)
        results, failed = t.per_sample(xs, errors="skip")
        self.assertEqual(list(failed), [3])
        self.assertTrue(failed[3].startswith("image 3: "), failed[3])
        self.assertIsNone(results[3])
        torch.manual_seed(1)
        want = []
        for i, x in enumerate(xs):  # the loop draws for the bad image too, then fails on it
            try:
                want.append(t(x))
            except toroid.Error:
                self.assertEqual(i, 3)
                want.append(None)
        # The images before the bad one drew as in the loop; after it the loop drew less (it
        # stopped at the bad image's first program), so only their shapes are compared.
        for i in range(len(xs)):
            if i < 3:
                self.assertTrue(torch.equal(results[i], want[i]), "image %d" % i)
            elif i > 3:
                self.assertEqual(results[i].shape, want[i].shape)
        torch.manual_seed(1)
        with self.assertRaisesRegex(toroid.Error, "image 3: "):
            t.per_sample(xs)

    def test_errors(self):
        xs = images()
        xs[2] = xs[2][:, :10, :10]  # smaller than the crop: RandomCrop refuses it while drawing
        with self.assertRaises(toroid.Error):
            T.RandomCrop(30).per_sample(xs)
        with self.assertRaises(toroid.InvalidTypeError):
            T.RandomCrop(30).per_sample(5)
        self.assertEqual(T.RandomCrop(30).per_sample([]), [])


@needs_cuda
class PerSampleCudaTest(unittest.TestCase):
    def test_cuda_like_the_cpu(self):
        for seed in range(3):
            t = recipe()
            torch.manual_seed(seed)
            cpu = t.per_sample(images(seed=seed))
            torch.manual_seed(seed)
            gpu = t.per_sample(images("cuda", seed=seed))
            self.assertEqual(gpu.device.type, "cuda")
            self.assertLessEqual((gpu.cpu() - cpu).abs().max().item(), 1e-4)


if __name__ == "__main__":
    unittest.main()
