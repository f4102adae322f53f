"""Image-dependent sizes and batches in Python: toroid.resize with torchvision's smaller-edge
rule (and max_size) and toroid.center_crop against PyTorch's interpolate and a hand-made
crop with zero padding; lists of differently sized images in one call (stacked results,
bad images skipped); CUDA tensors on the device (skipped without a GPU)."""

import math
import os
import unittest

import numpy as np

import toroid

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover
    torch = None

needs_torch = unittest.skipIf(torch is None, "PyTorch (python3-torch) is not installed")
has_cuda = torch is not None and torch.cuda.is_available()


def image(h, w, seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    if dtype == np.uint8:
        return rng.integers(0, 256, size=(3, h, w), dtype=np.uint8)
    return rng.random((3, h, w), dtype=np.float32)


def smaller_edge_size(h, w, size, max_size=None):
    """torchvision's _compute_resized_output_size for an int size."""
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = size, int(size * long / short)
    if max_size is not None and new_long > max_size:
        new_short, new_long = int(max_size * new_short / new_long), max_size
    return (new_long, new_short) if w <= h else (new_short, new_long)


def center_crop_reference(x, ch, cw):
    """torchvision's center_crop on a (C, H, W) array: pad with zeros where the crop is
    larger (the smaller half of the padding first), then crop at round((size - crop) / 2)."""
    c, h, w = x.shape
    pt, pl = (ch - h) // 2 if ch > h else 0, (cw - w) // 2 if cw > w else 0
    pb, pr = (ch - h + 1) // 2 if ch > h else 0, (cw - w + 1) // 2 if cw > w else 0
    x = np.pad(x, ((0, 0), (pt, pb), (pl, pr)))
    h, w = x.shape[1:]
    top, left = int(round((h - ch) / 2.0)), int(round((w - cw) / 2.0))
    return x[:, top:top + ch, left:left + cw]


class SizesFromTheImage(unittest.TestCase):
    @needs_torch
    def test_resize_smaller_edge_matches_interpolate(self):
        for i, (h, w, size, max_size) in enumerate([(90, 120, 64, None), (121, 77, 50, None), (40, 300, 32, 100),
                                                      (33, 33, 48, None)]):
            x = image(h, w, i)
            oh, ow = smaller_edge_size(h, w, size, max_size)
            expected = F.interpolate(torch.from_numpy(x)[None], size=(oh, ow), mode="bilinear", antialias=True,
                                     align_corners=False)[0].numpy()
            got = toroid.resize(x, size, max_size=max_size)
            self.assertEqual(got.shape, (3, oh, ow))
            self.assertLessEqual(float(np.abs(got - expected).max()), 1e-4, (h, w, size, max_size))

    def test_center_crop_matches_torchvision_rule(self):
        for i, (h, w, ch, cw) in enumerate([(10, 12, 4, 5), (7, 9, 4, 4), (3, 5, 6, 3), (2, 2, 5, 7), (11, 4, 4, 4)]):
            x = image(h, w, 10 + i, np.uint8)
            got = toroid.center_crop(x, [ch, cw])
            np.testing.assert_array_equal(got, center_crop_reference(x, ch, cw), err_msg=str((h, w, ch, cw)))

    def test_errors(self):
        x = image(10, 10, 0)
        with self.assertRaises(toroid.Error):
            toroid.resize(x, [5, 5], max_size=10)
        with self.assertRaises(toroid.Error):
            toroid.resize(x, 10, max_size=8)
        with self.assertRaises(toroid.Error):
            toroid.resize(x, 10, interpolation="lanczos")


class Batches(unittest.TestCase):
    def eval_transform(self):
        return toroid.Pipeline([
            {"op": "resize", "mode": "bilinear", "antialias": True, "smaller_edge": 40},
            {"op": "center_crop", "size": 32},
            {"op": "convert", "dtype": "float32", "scale": True},
            {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])

    def test_stacked_results_equal_one_by_one(self):
        p = self.eval_transform()
        # HWC arrays viewed as CHW, as decoded images arrive.
        imgs = [image(h, w, s, np.uint8).transpose(1, 2, 0).copy().transpose(2, 0, 1)
                for s, (h, w) in enumerate([(50, 70), (90, 41), (33, 33), (120, 64), (41, 200)])]
        out = p(imgs)
        self.assertEqual(out.shape, (5, 3, 32, 32))
        for i, im in enumerate(imgs):
            np.testing.assert_array_equal(out[i], p(im))

    def test_a_later_batch_of_seen_specs_reads_its_own_images(self):
        # The second call finds every spec in the pipeline's batch cache: it must still take
        # each image's own data (and a 4-D input and torch tensors stay what they are).
        p = self.eval_transform()
        sizes = [(50, 70), (90, 41), (33, 33)]
        first = [image(h, w, s, np.uint8) for s, (h, w) in enumerate(sizes)]
        second = [image(h, w, s + 10, np.uint8) for s, (h, w) in enumerate(sizes)]
        a = p(first)
        b = p(second)
        self.assertFalse(np.array_equal(a, b))
        for i, im in enumerate(second):
            np.testing.assert_array_equal(b[i], p(im))
        np.testing.assert_array_equal(p(first), a)
        if torch is not None:
            t = p([torch.from_numpy(im) for im in second])
            self.assertIsInstance(t, torch.Tensor)
            np.testing.assert_array_equal(t.numpy(), b)

    def test_different_result_shapes_come_back_as_a_list(self):
        p = toroid.Pipeline([{"op": "resize", "mode": "nearest", "scale_factor": 0.5}])
        imgs = [image(10, 12, 0), image(8, 6, 1)]
        out = p(imgs)
        self.assertIsInstance(out, list)
        self.assertEqual([o.shape for o in out], [(3, 5, 6), (3, 4, 3)])
        np.testing.assert_array_equal(out[1], p(imgs[1]))

    def test_bad_images_are_named_and_skipped(self):
        p = self.eval_transform()
        imgs = [image(50, 60, 0, np.uint8), np.zeros((3, 4), np.float64), image(70, 50, 2, np.uint8)]
        with self.assertRaises(toroid.Error) as ctx:
            p(imgs)
        self.assertIn("image 1", str(ctx.exception))
        results, failed = p.run_batch(imgs, errors="skip")
        self.assertEqual(sorted(failed), [1])
        np.testing.assert_array_equal(results[0], p(imgs[0]))
        np.testing.assert_array_equal(results[2], p(imgs[2]))
        self.assertIsNone(results[1])


@unittest.skipUnless(has_cuda, "no CUDA device (PyTorch sees none)")
class CudaTensors(unittest.TestCase):
    def test_pipeline_on_cuda_tensors_matches_cpu(self):
        p = toroid.Pipeline([
            {"op": "resize", "mode": "bilinear", "antialias": True, "smaller_edge": 64},
            {"op": "center_crop", "size": 56},
            {"op": "flip", "dims": [-1]},
            {"op": "convert", "dtype": "float32", "scale": True},
            {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])
        for i, (h, w) in enumerate([(90, 120), (200, 77)]):
            x = torch.from_numpy(image(h, w, i, np.uint8))
            for layout in ("cf", "cl"):
                xc = x.cuda()
                if layout == "cl":
                    xc = xc[None].contiguous(memory_format=torch.channels_last)[0]
                y = p(xc)
                self.assertEqual(y.device.type, "cuda")
                ref = p(x)
                self.assertLessEqual(float((y.cpu() - ref).abs().max()), 1e-4, (h, w, layout))

    def test_uint8_antialias_is_bit_exact_on_cuda(self):
        x = torch.from_numpy(image(123, 171, 3, np.uint8))
        y = toroid.interpolate(x.cuda()[None], size=(50, 61), mode="bicubic", antialias=True)
        self.assertTrue(torch.equal(y.cpu(), toroid.interpolate(x[None], size=(50, 61), mode="bicubic", antialias=True)))

    def test_repeated_cuda_calls_take_the_fast_path_on_the_current_stream(self):
        p = toroid.Pipeline([{"op": "resize", "mode": "bilinear", "antialias": True, "size": [21, 30]},
                             {"op": "flip", "dims": [-1]}])
        x = torch.from_numpy(image(40, 52, 5, np.uint8))
        ref = p(x)
        xc = x.cuda()
        first = p(xc)  # the general path, which fills the fast path
        self.assertTrue(any(isinstance(k, tuple) and 0 in k[4:5] for k in p._handle.fast), list(p._handle.fast))
        self.assertTrue(torch.equal(first.cpu(), ref))
        # Later calls take the fast path: same answers, on whatever stream is current (the
        # result is complete once that stream is), and a CPU tensor of the same spec still
        # runs on the CPU.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            outs = [p(xc) for _ in range(3)]
        side.synchronize()
        for y in outs:
            self.assertEqual(y.device, xc.device)
            self.assertTrue(torch.equal(y.cpu(), ref))
        y = p(x)
        self.assertEqual(y.device.type, "cpu")
        self.assertTrue(torch.equal(y, ref))

    def test_a_batch_one_image_at_a_time_reads_specs_seen_before(self):
        # The path for images on several GPUs (and for a library without the batched call):
        # a second batch of the same specs comes from the per-spec cache and must still carry
        # each image's dtype, shape and strides.
        from toroid import _capi
        p = toroid.Pipeline([{"op": "resize", "mode": "bilinear", "antialias": True, "size": [20, 24]}])
        xs = [torch.from_numpy(image(h, w, s, np.uint8)) for s, (h, w) in enumerate([(50, 70), (33, 90)])]
        want = torch.stack([p(x) for x in xs])
        saved = _capi.has_run_batch_on_stream
        _capi.has_run_batch_on_stream = False
        try:
            for _ in range(2):
                got = p([x.cuda() for x in xs])
                self.assertEqual(got.device.type, "cuda")
                self.assertTrue(torch.equal(got.cpu(), want))
        finally:
            _capi.has_run_batch_on_stream = saved

    def test_runs_on_several_streams_at_once_keep_their_intermediates_apart(self):
        # Two separable passes: the vertical pass reads an intermediate. Runs enqueued on
        # two streams at once must not share it.
        p = toroid.Pipeline([{"op": "resize", "mode": "bilinear", "antialias": True, "size": [301, 257]}])
        xs = [torch.from_numpy(image(1200, 900, seed, np.uint8)) for seed in (1, 2, 3)]
        refs = [p(x) for x in xs]
        cuda_xs = [x.cuda() for x in xs]
        streams = [torch.cuda.Stream() for _ in range(3)]
        for s in streams:
            s.wait_stream(torch.cuda.current_stream())
        outs = [[] for _ in streams]
        for _ in range(20):
            for i, s in enumerate(streams):
                with torch.cuda.stream(s):
                    outs[i].append(p(cuda_xs[i]))
        torch.cuda.synchronize()
        for i in range(3):
            for y in outs[i]:
                self.assertTrue(torch.equal(y.cpu(), refs[i]), i)

    def test_cuda_memory_of_other_frameworks_through_dlpack(self):
        class Foreign:  # exports DLPack only, like a CuPy array
            def __init__(self, t):
                self.t = t

            def __dlpack__(self, stream=None):
                return self.t.__dlpack__(stream=stream)

            def __dlpack_device__(self):
                return self.t.__dlpack_device__()

        p = toroid.Pipeline([{"op": "resize", "mode": "bicubic", "antialias": True, "size": [19, 23]}])
        x = torch.from_numpy(image(45, 52, 9, np.uint8))
        y = p(Foreign(x.cuda()))
        self.assertIsInstance(y, torch.Tensor)
        self.assertEqual(y.device.type, "cuda")
        self.assertTrue(torch.equal(y.cpu(), p(x)))

    @staticmethod
    def eval_pipeline():
        return toroid.Pipeline([
            {"op": "resize", "mode": "bilinear", "antialias": True, "smaller_edge": 256},
            {"op": "center_crop", "size": 224},
            {"op": "convert", "dtype": "float32", "scale": True},
            {"op": "normalize", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}])

    def test_cuda_batch_stacks_on_the_device(self):
        p = toroid.Pipeline([{"op": "resize", "mode": "bilinear", "antialias": True, "smaller_edge": 20},
                             {"op": "center_crop", "size": 16}])
        xs = [torch.from_numpy(image(h, w, h, np.uint8)).cuda() for h, w in [(30, 40), (50, 21)]]
        out = p(xs)
        self.assertEqual(tuple(out.shape), (2, 3, 16, 16))
        self.assertEqual(out.device.type, "cuda")
        self.assertTrue(torch.equal(out[1].cpu(), p(xs[1].cpu())))

    def test_cuda_batch_of_two_layouts_comes_back_as_a_list(self):
        # A kernel writes the layout it was compiled for: a channels-last image among planar
        # ones cannot write into a planar stacked result (its own layout comes back).
        p = toroid.Pipeline([{"op": "resize", "mode": "bilinear", "antialias": True, "size": [12, 16]}])
        x = torch.from_numpy(image(30, 40, 3, np.uint8)).cuda()
        cl = x.permute(1, 2, 0).contiguous().permute(2, 0, 1)
        out = p.run_batch([x, cl, x])
        self.assertIsInstance(out, list)
        for y in out:
            self.assertTrue(torch.equal(y.cpu(), p(x.cpu())))
        self.assertEqual(out[1].stride(), (1, 48, 3))
        self.assertEqual(tuple(p.run_batch([cl, cl]).shape), (2, 3, 12, 16))

    def test_cuda_batch_of_random_sizes_matches_each_image(self):
        # One call: the images whose sizes share kernels run as one launch per kernel, the
        # others in their own groups; each result equals the single-image call on CUDA bit for
        # bit and the CPU's (uint8 bit for bit, float32 within 1e-4).
        rng = np.random.default_rng(31)
        # (A 1 x 1 image is contiguous in both layouts: its result would not stack with
        # channels-last ones; tests/engine/cuda_batch_test.cpp runs it.)
        sides = [(1, 2), (1, 300), (257, 2), (256, 256), (64, 64)] + \
            [tuple(int(v) for v in rng.integers(1, 400, size=2)) for _ in range(20)]
        pipelines = [
            (self.eval_pipeline(), np.uint8),
            (toroid.Pipeline([{"op": "resize", "mode": "bicubic", "antialias": True, "size": [64, 48]},
                              {"op": "flip", "dims": [-1]}]), np.float32),
            (toroid.Pipeline([{"op": "center_crop", "size": [100, 90]}]), np.uint8),
        ]
        for p, dtype in pipelines:
            for layout in ("cf", "cl"):
                cpu = [torch.from_numpy(image(h, w, h * 1000 + w, dtype)) for h, w in sides]
                xs = [x.cuda() for x in cpu]
                if layout == "cl":
                    xs = [x[None].contiguous(memory_format=torch.channels_last)[0] for x in xs]
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):  # on the current stream: done once it is
                    out = p(xs)
                side.synchronize()
                self.assertIsInstance(out, torch.Tensor)
                self.assertEqual(out.device.type, "cuda")
                self.assertEqual(out.shape[0], len(xs))
                for i, x in enumerate(xs):
                    one = p(x)
                    self.assertTrue(torch.equal(out[i], one), (i, x.shape, layout))
                    ref = p(cpu[i])
                    tol = 0 if ref.dtype == torch.uint8 else 1e-4
                    self.assertLessEqual(float((out[i].cpu().float() - ref.float()).abs().max()), tol, (i, layout))

    def test_cuda_batch_of_several_result_shapes_and_a_bad_image(self):
        p = toroid.Pipeline([{"op": "resize", "mode": "bilinear", "antialias": True, "scale_factor": 0.5},
                             {"op": "normalize", "mean": [0.5, 0.4, 0.3], "std": [0.2, 0.25, 0.3]}])
        xs = [torch.from_numpy(image(h, w, h, np.float32)).cuda() for h, w in [(40, 60), (2, 7), (33, 2), (90, 64)]]
        xs.insert(2, torch.zeros((2, 30, 30), device="cuda"))  # 2 channels, 3 means
        with self.assertRaises(toroid.Error) as ctx:
            p(xs)
        self.assertIn("image 2", str(ctx.exception))
        results, failed = p.run_batch(xs, errors="skip")
        self.assertEqual(sorted(failed), [2])
        self.assertIsNone(results[2])
        for i in (0, 1, 3, 4):
            self.assertTrue(torch.equal(results[i], p(xs[i])), i)
            self.assertLessEqual(float((results[i].cpu() - p(xs[i].cpu())).abs().max()), 1e-4)


if __name__ == "__main__":
    unittest.main()
