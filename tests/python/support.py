"""What the Python tests share: the optional torch and torchvision.transforms.v2 imports with
their skip decorators, images in either memory layout, and a TestCase whose check compares a
result with the expected array (uint8 bit for bit, float32 within rounding). Not a test
module: unittest's discovery takes test_*.py only."""

import unittest

import numpy as np

try:
    import torch
except ImportError:  # pragma: no cover - Debian's python3-torch is a test dependency
    torch = None

try:
    import torchvision.transforms.v2 as TV2
except ImportError:  # torchvision 0.15 or later: the GPU machine
    TV2 = None

needs_torch = unittest.skipIf(torch is None, "torch (python3-torch) is not installed")
needs_v2 = unittest.skipIf(TV2 is None, "torchvision.transforms.v2 (torchvision >= 0.15) is not installed")


def layout(t, channels_last):
    """t (3-D or 4-D) in channels-last memory where asked, else as it is."""
    if not channels_last:
        return t
    return t.contiguous(memory_format=torch.channels_last) if t.dim() == 4 else \
        t.permute(1, 2, 0).contiguous().permute(2, 0, 1)


def inputs(make, shapes, first_seed=0):
    """make(shape, dtype, seed, channels_last) for uint8 then float32, each shape, both
    layouts, the seeds counting up from first_seed + 1."""
    seed = first_seed
    for dtype in (np.uint8, np.float32):
        for shape in shapes:
            for cl in (False, True):
                seed += 1
                yield make(shape, dtype, seed, cl)


class ImageCase(unittest.TestCase):
    def check(self, got, want):
        got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
        want = want.numpy() if hasattr(want, "numpy") else np.asarray(want)
        self.assertEqual(got.shape, want.shape)
        self.assertEqual(got.dtype, want.dtype)
        if want.dtype == np.uint8:
            self.assertTrue(np.array_equal(got, want), "%d differ, max difference %d" % (
                (got != want).sum(), np.abs(got.astype(int) - want.astype(int)).max()))
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
