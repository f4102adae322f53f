"""toroid.io.decode_image: modes, EXIF orientation, inputs of every kind, and errors. The
pixels against torchvision itself are checked by tests/io/decode_conformance_test.cpp; here,
against the decoder's unchanged output and Pillow."""

import io
import os
import unittest

import numpy as np

import toroid

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "jpeg")


def data(name):
    return os.path.join(DATA, name)


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


class DecodeImageTest(unittest.TestCase):
    def test_modes_of_a_gray_file(self):
        gray = toroid.io.decode_image(data("gray_pillow.jpg"))
        self.assertEqual(gray.ndim, 3)
        self.assertEqual(gray.shape[0], 1)
        rgb = toroid.io.decode_image(data("gray_pillow.jpg"), mode="rgb")
        self.assertEqual(rgb.shape, (3,) + gray.shape[1:])
        for k in range(3):
            np.testing.assert_array_equal(rgb[k], gray[0])
        # torchvision's enum names work too (an object with .name, as ImageReadMode has).
        class Mode:
            name = "RGB"
        np.testing.assert_array_equal(toroid.io.decode_image(data("gray_pillow.jpg"), mode=Mode), rgb)

    def test_inputs_path_bytes_and_arrays_agree(self):
        path = data("rgb_pillow.jpg")
        with open(path, "rb") as f:
            raw = f.read()
        a = toroid.io.decode_image(path)
        np.testing.assert_array_equal(toroid.io.decode_image(raw), a)
        np.testing.assert_array_equal(toroid.io.decode_image(np.frombuffer(raw, np.uint8)), a)
        want = np.load(data("rgb_pillow.npy"))
        np.testing.assert_array_equal(a, want.reshape(a.shape))

    def test_cmyk_converts(self):
        cmyk = toroid.io.decode_image(data("cmyk_pillow.jpg"))
        rgb = toroid.io.decode_image(data("cmyk_pillow.jpg"), mode="rgb")
        self.assertEqual(cmyk.shape[0], 4)
        k = cmyk[3].astype(np.int64)
        for ch in range(3):
            want = np.clip(k - np.rint(k * (255 - cmyk[ch].astype(np.int64)) / 255.0), 0, 255)
            np.testing.assert_array_equal(rgb[ch], want.astype(np.uint8))

    def test_exif_orientation(self):
        try:
            from PIL import Image
        except ImportError:
            self.skipTest("Pillow is not installed")
        rng = np.random.default_rng(0)
        img = rng.integers(0, 256, (12, 20, 3), dtype=np.uint8)
        exif = Image.Exif()
        exif[0x0112] = 6  # rotate 90 clockwise: H and W swap
        for fmt in ("JPEG", "PNG"):
            b = io.BytesIO()
            Image.fromarray(img).save(b, format=fmt, exif=exif.tobytes(), quality=95)
            turned = toroid.io.decode_image(b.getvalue())
            plain = toroid.io.decode_image(b.getvalue(), apply_exif_orientation=False)
            self.assertEqual(plain.shape, (3, 12, 20))
            self.assertEqual(turned.shape, (3, 20, 12))
            np.testing.assert_array_equal(turned, np.flip(plain.transpose(0, 2, 1), axis=2))

    def test_webp_lossless_and_lossy(self):
        from PIL import Image, features
        if not features.check("webp"):
            self.skipTest("Pillow without WebP")
        rng = np.random.default_rng(5)
        rgba = rng.integers(0, 256, (21, 34, 4), dtype=np.uint8)
        rgba[..., 3] |= 1  # (alpha 0 lets the lossless encoder change the colour underneath)
        buf = io.BytesIO()
        Image.fromarray(rgba, "RGBA").save(buf, "WEBP", lossless=True)
        raw = buf.getvalue()
        np.testing.assert_array_equal(toroid.io.decode_image(raw), rgba.transpose(2, 0, 1))
        np.testing.assert_array_equal(toroid.io.decode_image(raw, mode="rgb"), rgba[..., :3].transpose(2, 0, 1))
        buf = io.BytesIO()
        Image.fromarray(rgba[..., :3], "RGB").save(buf, "WEBP", quality=80)
        lossy = toroid.io.decode_image(buf.getvalue())
        self.assertEqual(lossy.shape, (3, 21, 34))
        # Pillow decodes through the same libwebp: the same pixels.
        np.testing.assert_array_equal(lossy, np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB")).transpose(2, 0, 1))
        with self.assertRaisesRegex(toroid.Error, "mode 'gray' is not supported for WebP"):
            toroid.io.decode_image(raw, mode="gray")

    def test_errors(self):
        with self.assertRaisesRegex(toroid.Error, "unknown signature"):
            toroid.io.decode_image(b"GIF89a....")
        with self.assertRaisesRegex(toroid.Error, "unknown image mode 'rgba'"):
            toroid.io.decode_image(data("rgb_pillow.jpg"), mode="rgba")
        with self.assertRaisesRegex(toroid.Error, "no alpha channel"):
            toroid.io.decode_image(data("rgb_pillow.jpg"), mode="rgb_alpha")
        with self.assertRaisesRegex(toroid.Error, "cannot read"):
            toroid.io.decode_image(data("missing.jpg"))
        with self.assertRaises(toroid.InvalidTypeError):
            toroid.io.decode_image(3.5)
        with self.assertRaisesRegex(toroid.Error, "1-D uint8"):
            toroid.io.decode_image(np.zeros((2, 2), np.uint8))

    def test_regions_and_info(self):
        for name in ("rgb_pillow.jpg", "rgb_progressive_pillow.jpg", "cmyk_pillow.jpg", "gray_pillow.jpg",
                     "../decode/exif6.jpg"):
            with self.subTest(name=name):
                whole = toroid.io.decode_image(data(name), mode="rgb")
                c, h, w = toroid.io.image_info(data(name), mode="rgb")
                self.assertEqual((c, h, w), whole.shape)
                for r in ((0, 0, h, w), (h // 3, w // 5, h // 2, w // 3), (h - 1, w - 1, 1, 1)):
                    got = toroid.io.decode_image(data(name), mode="rgb", region=r)
                    np.testing.assert_array_equal(got, whole[:, r[0]:r[0] + r[2], r[1]:r[1] + r[3]])
        with self.assertRaisesRegex(toroid.Error, "not inside"):
            toroid.io.decode_image(data("rgb_pillow.jpg"), region=(0, 0, 10 ** 6, 5))
        with self.assertRaises(toroid.InvalidTypeError):
            toroid.io.decode_image(data("rgb_pillow.jpg"), region=(0, 0, 5))


@unittest.skipIf(_torch() is None, "torch (python3-torch) is not installed")
class FileBytesIntoTransforms(unittest.TestCase):
    """The bytes of an image file given to toroid.transforms: the same results as decoding
    it (RGB, EXIF applied) and running the transforms on the array, whether the first op is a
    crop (decoded as a region) or not; bad bytes are one-line errors."""

    def test_same_results_as_decoding_first(self):
        import torch
        import toroid.transforms as T
        pipelines = [T.Compose([T.RandomResizedCrop(24, antialias=True), T.RandomHorizontalFlip()]),
                     T.Compose([T.CenterCrop(12), T.Resize(8)]),
                     T.Compose([T.RandomCrop(10), T.ToDtype(torch.float32, scale=True)]),
                     T.Compose([T.Resize(16, antialias=True), T.CenterCrop(12)])]
        for name in ("rgb_pillow.jpg", "rgb_progressive_pillow.jpg", "gray_pillow.jpg", "../decode/exif6.jpg",
                     "../decode/exif5_rgba.png"):
            path = data(name)
            with open(path, "rb") as f:
                blob = f.read()
            decoded = torch.from_numpy(toroid.io.decode_image(blob, mode="rgb"))
            for k, t in enumerate(pipelines):
                for seed in range(4):
                    with self.subTest(name=name, pipeline=k, seed=seed):
                        torch.manual_seed(seed)
                        got = t(blob)
                        torch.manual_seed(seed)
                        want = t(decoded)
                        self.assertTrue(torch.equal(got, want))

    def test_resize_then_crop_on_larger_jpegs(self):
        # Large enough that a Resize -> CenterCrop reads a window strictly inside the file:
        # every interpolation mode, down and up, baseline and progressive, 4:2:0 and 4:4:4.
        import torch
        import toroid.transforms as T
        try:
            from PIL import Image
        except ImportError:
            self.skipTest("needs Pillow to write the JPEGs")
        rng = np.random.default_rng(3)
        modes = [T.InterpolationMode.BILINEAR, T.InterpolationMode.BICUBIC, T.InterpolationMode.NEAREST,
                 T.InterpolationMode.NEAREST_EXACT]
        for k, (h, w) in enumerate(((181, 263), (240, 97), (64, 80))):
            pixels = np.clip(np.cumsum(rng.integers(-9, 10, (h, w, 3)), axis=1) + 128, 0, 255).astype(np.uint8)
            buf = io.BytesIO()
            Image.fromarray(pixels).save(buf, "JPEG", quality=85, progressive=k == 1, subsampling=0 if k == 2 else 2)
            blob = buf.getvalue()
            decoded = torch.from_numpy(toroid.io.decode_image(blob, mode="rgb"))
            for mode in modes:
                for antialias in (True, False):
                    for size, crop in ((48, 40), (32, 12), (150, 100)):
                        t = T.Compose([T.Resize(size, interpolation=mode, antialias=antialias), T.CenterCrop(crop)])
                        with self.subTest(size=(h, w), mode=mode, antialias=antialias, resize=size):
                            self.assertTrue(torch.equal(t(blob), t(decoded)))

    def test_read_window_holds_every_pixel_read(self):
        # _read_window's footprint: the pixels outside it replaced by noise leave the result
        # unchanged, for every mode, scale and crop.
        import torch
        import toroid.transforms as T
        from toroid.transforms import _base
        rng = np.random.default_rng(5)
        modes = [T.InterpolationMode.BILINEAR, T.InterpolationMode.BICUBIC, T.InterpolationMode.NEAREST,
                 T.InterpolationMode.NEAREST_EXACT]
        windows = 0
        for trial in range(48):
            h, w = (int(v) for v in rng.integers(8, 160, 2))
            mode = modes[trial % 4]
            resize = T.Resize([int(rng.integers(4, 200)), int(rng.integers(4, 200))] if trial % 3 == 0 else
                              int(rng.integers(4, 200)), interpolation=mode, antialias=bool(trial % 2))
            x = torch.from_numpy(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).permute(2, 0, 1)
            rh, rw = _base._resized_size(resize._op, h, w, "uint8")
            ch, cw = int(rng.integers(1, rh + 1)), int(rng.integers(1, rw + 1))
            ops = [resize._op, {"op": "center_crop", "size": [ch, cw]}]
            window = _base._read_window(ops, h, w)
            self.assertIsNotNone(window)
            top, left, wh, ww = window
            noisy = torch.from_numpy(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).permute(2, 0, 1)
            noisy[:, top:top + wh, left:left + ww] = x[:, top:top + wh, left:left + ww]
            windows += wh * ww < h * w
            t = T.Compose([resize, T.CenterCrop([ch, cw])])
            with self.subTest(size=(h, w), resize=(rh, rw), crop=(ch, cw), mode=mode, window=window):
                self.assertTrue(torch.equal(t(noisy), t(x)))
        self.assertGreater(windows, 24)  # most windows are smaller than the image

    def test_per_sample_of_file_bytes(self):
        import torch
        import toroid.transforms as T
        with open(data("rgb_pillow.jpg"), "rb") as f:
            blob = f.read()
        for t in (T.Compose([T.RandomResizedCrop(16, antialias=True), T.RandomHorizontalFlip()]),
                  T.Compose([T.ColorJitter(brightness=0.5), T.RandomResizedCrop(16)])):
            torch.manual_seed(1)
            got = t.per_sample([blob, blob, blob])
            torch.manual_seed(1)
            want = torch.stack([t(blob) for _ in range(3)])
            self.assertTrue(torch.equal(got, want))

    def test_bad_bytes(self):
        import toroid.transforms as T
        with open(data("rgb_pillow.jpg"), "rb") as f:
            blob = f.read()
        for bad, message in ((b"", "unknown signature"), (b"not an image", "unknown signature"),
                             (blob[:300], "invalid JPEG")):
            with self.subTest(message=message):
                with self.assertRaisesRegex(toroid.Error, message):
                    T.Compose([T.RandomResizedCrop(8)])(bad)


def _cuda_jpeg():
    """Why decode_jpeg(device="cuda") cannot run here, or None."""
    torch = _torch()
    if torch is None or not torch.cuda.is_available():
        return "no CUDA device"
    try:
        toroid.io.jpeg_decoder("cuda")
    except toroid.Error as e:
        return str(e)
    return None


def _raw(name):
    with open(name, "rb") as f:
        return f.read()


class DecodeJpegTest(unittest.TestCase):
    FILES = [os.path.join(DATA, "..", "decode", n) for n in
             ("rgb.jpg", "rgb_420.jpg", "gray.jpg", "cmyk.jpg", "exif6.jpg")] + [data("rgb_progressive_pillow.jpg")]

    def setUp(self):
        if _torch() is None:
            self.skipTest("decode_jpeg returns torch tensors: no PyTorch here")

    def test_cpu_is_decode_image(self):
        for mode in ("unchanged", "rgb", "gray"):
            for exif in (False, True):
                got = toroid.io.decode_jpeg([_raw(f) for f in self.FILES], mode=mode, apply_exif_orientation=exif)
                for f, x in zip(self.FILES, got):
                    want = toroid.io.decode_image(f, mode=mode, apply_exif_orientation=exif)
                    np.testing.assert_array_equal(x.numpy(), want, err_msg=f)
        one = toroid.io.decode_jpeg(self.FILES[0])
        self.assertEqual(tuple(one.shape), toroid.io.decode_image(self.FILES[0]).shape)

    def test_bad_files_fail_alone(self):
        good = _raw(self.FILES[1])
        batch = [good, good[: len(good) - 10], _raw(os.path.join(DATA, "..", "decode", "rgb.png")), b"", good]
        images, failures = toroid.io.decode_jpeg(batch, errors="skip")
        self.assertEqual(sorted(failures), [1, 2, 3])
        self.assertIn("not a JPEG", failures[2])
        self.assertIsNone(images[1])
        np.testing.assert_array_equal(images[4].numpy(), images[0].numpy())
        with self.assertRaisesRegex(toroid.Error, "file 1 of 5: "):
            toroid.io.decode_jpeg(batch)
        with self.assertRaisesRegex(toroid.Error, "errors must be"):
            toroid.io.decode_jpeg(good, errors="ignore")
        with self.assertRaisesRegex(toroid.Error, "decode must be"):
            toroid.io.decode_jpeg(good, decode="best")

    def test_cuda_fast_is_within_a_few_levels_and_exact_is_exact(self):
        why = _cuda_jpeg()
        if why:
            self.skipTest(why)
        torch = _torch()
        raws = [_raw(f) for f in self.FILES]
        for mode in ("unchanged", "rgb", "gray"):
            for exif in (False, True):
                cpu = toroid.io.decode_jpeg(raws, mode=mode, apply_exif_orientation=exif)
                fast = toroid.io.decode_jpeg(raws, mode=mode, device="cuda", apply_exif_orientation=exif)
                exact = toroid.io.decode_jpeg(raws, mode=mode, device="cuda", decode="exact",
                                              apply_exif_orientation=exif)
                torch.cuda.synchronize()
                for f, c, x, e in zip(self.FILES, cpu, fast, exact):
                    name = "%s %s exif=%s" % (os.path.basename(f), mode, exif)
                    self.assertTrue(x.is_cuda and e.is_cuda, name)
                    self.assertEqual(x.shape, c.shape, name)
                    self.assertTrue(torch.equal(e.cpu(), c), name)
                    d = (x.cpu().int() - c.int()).abs()
                    on_cpu = os.path.basename(f) == "cmyk.jpg" or (exif and os.path.basename(f) == "exif6.jpg")
                    baseline = "progressive" not in f
                    if on_cpu or (c.shape[0] == 1 and baseline):
                        # libjpeg-turbo's pixels, or luma alone of a baseline file (the hardware
                        # decoder's Y is libjpeg's; nvJPEG's CUDA decoder, which progressive
                        # files take, rounds its own way).
                        self.assertTrue(torch.equal(x.cpu(), c), name)
                    else:
                        # nvJPEG's colour conversion and chroma upsampling: 0.37 levels on
                        # average over 128 photos (docs/reference.md), 5.5-8 on these small
                        # files of saturated colour edges.
                        self.assertLess(float(d.float().mean()), 10.0, name)

    def test_cuda_bad_files_fail_alone_and_threads_agree(self):
        why = _cuda_jpeg()
        if why:
            self.skipTest(why)
        torch = _torch()
        good = _raw(self.FILES[1])
        corrupt = bytearray(good)
        corrupt[len(corrupt) // 2: len(corrupt) // 2 + 64] = bytes(64)
        batch = [good, good[: len(good) - 10], b"\xff\xd8 not a jpeg", bytes(corrupt), good]
        images, failures = toroid.io.decode_jpeg(batch, device="cuda", errors="skip")
        self.assertIn(1, failures)
        self.assertIn(2, failures)
        self.assertTrue(torch.equal(images[0], images[4]))
        # Several threads decoding at once on one device: each gets its own files' pixels.
        from concurrent.futures import ThreadPoolExecutor
        raws = [_raw(f) for f in self.FILES]
        want = [x.cpu() for x in toroid.io.decode_jpeg(raws, device="cuda")]

        def run(k):
            s = torch.cuda.Stream()
            with torch.cuda.stream(s):
                got = toroid.io.decode_jpeg(raws[k:] + raws[:k], device="cuda")
                s.synchronize()
            return all(torch.equal(g.cpu(), want[(k + i) % len(raws)]) for i, g in enumerate(got))
        with ThreadPoolExecutor(4) as pool:
            self.assertTrue(all(pool.map(run, [k % len(raws) for k in range(16)])))


class PerSampleFilesOnADevice(unittest.TestCase):
    """Compose.per_sample on files' bytes with device=: the JPEGs decode as a batch on the GPU
    while the draws are made from their headers. Under one seed the results are those of
    decoding first (RGB, EXIF applied) and running per_sample on the images; a file that fails
    is a failed image, the others finish."""

    FILES = ["rgb_pillow.jpg", "rgb_progressive_pillow.jpg", "gray_pillow.jpg", "../decode/exif6.jpg",
             "../decode/cmyk.jpg", "../decode/exif5_rgba.png", "rgb_pillow.jpg"]

    def setUp(self):
        if _torch() is None:
            self.skipTest("per_sample on devices takes torch: no PyTorch here")
        import torch
        import toroid.transforms as T
        self.torch, self.T = torch, T
        self.raws = [_raw(data(n)) for n in self.FILES]
        self.train = T.Compose([T.RandomResizedCrop(20, antialias=True), T.RandomHorizontalFlip(),
                                T.ToDtype(torch.float32, scale=True), T.Normalize([0.5, 0.4, 0.3], [0.2, 0.3, 0.25])])

    def decoded_first(self, seed, device, fast=False):
        torch = self.torch
        if fast:  # nvJPEG's pixels for the JPEGs it decodes, CPU decodes for the rest
            images = [toroid.io.decode_jpeg(r, mode="rgb", device=device, apply_exif_orientation=True)
                      if r[:2] == b"\xff\xd8" else
                      torch.from_numpy(toroid.io.decode_image(r, mode="rgb")).to(device).contiguous()
                      for r in self.raws]
        else:
            images = [torch.from_numpy(toroid.io.decode_image(r, mode="rgb")).to(device) for r in self.raws]
        torch.manual_seed(seed)
        return self.train.per_sample(images)

    def test_on_the_cpu_the_files_decode_as_the_draws_need_them(self):
        torch = self.torch
        for seed in range(3):
            torch.manual_seed(seed)
            got = self.train.per_sample(self.raws, device="cpu")
            self.assertTrue(torch.equal(got, self.decoded_first(seed, "cpu")), seed)
        with self.assertRaisesRegex(toroid.Error, "needs a CUDA device"):
            self.train.per_sample(self.raws, device="cpu", decode="fast")
        with self.assertRaisesRegex(toroid.Error, "device"):
            self.train.per_sample(self.raws, device="tpu")

    def batches_equal_calls_in_turn(self, device, decode=None):
        torch = self.torch
        batches = [self.raws[k:] + self.raws[:k] for k in range(4)]
        torch.manual_seed(7)
        want = [self.train.per_sample(b, device=device, decode=decode) for b in batches]
        after = torch.rand(3)
        torch.manual_seed(7)
        got = list(self.train.per_sample_batches(iter(batches), device=device, decode=decode))
        self.assertTrue(torch.equal(torch.rand(3), after))  # the same draws, no more
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            self.assertTrue(torch.equal(g, w))

    def test_batches_in_turn_on_the_cpu(self):
        self.batches_equal_calls_in_turn("cpu")
        self.batches_equal_calls_in_turn(None)
        self.assertEqual(list(self.train.per_sample_batches([], device="cpu")), [])
        with self.assertRaisesRegex(toroid.Error, "needs a CUDA device"):
            list(self.train.per_sample_batches([self.raws], device="cpu", decode="fast"))

    def test_batches_in_turn_on_cuda(self):
        why = _cuda_jpeg()
        if why:
            self.skipTest(why)
        self.batches_equal_calls_in_turn("cuda")
        self.batches_equal_calls_in_turn("cuda", "exact")

    def test_cuda_exact_is_the_cpu_result_and_fast_is_decode_jpegs(self):
        why = _cuda_jpeg()
        if why:
            self.skipTest(why)
        torch = self.torch
        for seed in range(3):
            torch.manual_seed(seed)
            exact = self.train.per_sample(self.raws, device="cuda", decode="exact")
            self.assertTrue(exact.is_cuda)
            # libjpeg-turbo's pixels; the float math on the GPU within rounding of the CPU's.
            self.assertLessEqual(float((exact.cpu() - self.decoded_first(seed, "cpu")).abs().max()), 1e-5, seed)
            torch.manual_seed(seed)
            fast = self.train.per_sample(self.raws, device="cuda")
            self.assertTrue(torch.equal(fast, self.decoded_first(seed, "cuda", fast=True)), seed)
        # Bad files fail alone: a truncated JPEG (a bad header: no draws), a corrupt body.
        good = self.raws[0]
        body = bytearray(good)
        body[len(body) // 2:len(body) // 2 + 64] = b"\xff" * 64
        batch = [good, good[:40], bytes(body)[:len(body) * 3 // 4] + b"", good]
        out, failed = self.train.per_sample(batch, device="cuda", errors="skip")
        self.assertIn(1, failed)
        self.assertIsNone(out[1])
        self.assertTrue(out[0] is not None and out[3] is not None)
        self.assertEqual(tuple(out[0].shape), (3, 20, 20))
        with self.assertRaisesRegex(toroid.Error, "image 1: "):
            self.train.per_sample(batch, device="cuda")


class PipelineOnFiles(unittest.TestCase):
    """Pipeline.run_batch on files' bytes: decoded as RGB with their EXIF orientation (on
    the GPU with device="cuda"), then the one batched call; bad files fail alone."""

    OPS = [{"op": "resize", "size": [12, 16], "mode": "bilinear", "antialias": True},
           {"op": "convert", "dtype": "float32", "scale": True}]
    FILES = ["rgb_pillow.jpg", "gray_pillow.jpg", "../decode/exif6.jpg", "../decode/exif5_rgba.png"]

    def test_on_the_cpu(self):
        p = toroid.Pipeline(self.OPS)
        raws = [_raw(data(n)) for n in self.FILES]
        want = [p(np.ascontiguousarray(toroid.io.decode_image(r, mode="rgb"))) for r in raws]
        got = p.run_batch(raws)
        self.assertEqual(got.shape, (len(raws), 3, 12, 16))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        mixed = p.run_batch([raws[0], np.ascontiguousarray(toroid.io.decode_image(raws[1], mode="rgb"))])
        np.testing.assert_array_equal(mixed[1], want[1])
        out, failed = p.run_batch([raws[0], raws[0][:30], b"not an image", raws[3]], errors="skip")
        self.assertEqual(sorted(failed), [1, 2])
        self.assertIsNone(out[1])
        np.testing.assert_array_equal(out[3], want[3])
        with self.assertRaisesRegex(toroid.Error, "image 1: "):
            p.run_batch([raws[0], raws[0][:30]])
        with self.assertRaisesRegex(toroid.Error, "needs a CUDA device"):
            p.run_batch(raws, decode="fast")

    def test_on_cuda(self):
        why = _cuda_jpeg()
        if why:
            self.skipTest(why)
        import torch
        p = toroid.Pipeline(self.OPS)
        raws = [_raw(data(n)) for n in self.FILES]
        exact = p.run_batch(raws, device="cuda", decode="exact")
        cpu = p.run_batch(raws)
        self.assertTrue(exact.is_cuda)
        self.assertLessEqual(float((exact.cpu() - torch.from_numpy(cpu)).abs().max()), 1e-5)
        fast = p.run_batch(raws, device="cuda")
        jpegs = toroid.io.decode_jpeg(raws[:3], mode="rgb", device="cuda", apply_exif_orientation=True)
        for k in range(3):
            self.assertTrue(torch.equal(fast[k], p(jpegs[k])), k)
        out, failed = p.run_batch([raws[0], raws[0][:30], raws[3]], device="cuda", errors="skip")
        self.assertEqual(sorted(failed), [1])
        self.assertTrue(torch.equal(out[2], fast[3]))


if __name__ == "__main__":
    unittest.main()
