"""Transform.per_sample: each image its own random draws in one batched call, equal to the
per-image loop [t(x) for x in images] (the same tensors, and the same state of torch's
generator after it), stacked when the results share a shape; on CUDA tensors too, where
images of one structure share their kernels' launches."""

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

    def test_results_of_several_sizes_come_back_as_a_list(self):
        t = T.Compose([T.RandomRotation(40, expand=True), T.RandomHorizontalFlip()])
        got = self.check_like_a_loop(t, images(seed=4), 4)
        self.assertIsInstance(got, list)

    def test_a_host_step_runs_image_by_image(self):
        t = T.Compose([T.RandomCrop(24), lambda x: x.flip(-2), T.RandomHorizontalFlip()])
        self.check_like_a_loop(t, images(seed=2), 2)

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
