"""Tests of `python3 -m toroid.batch`: a small tree of PNG, NPY and JPEG files (with a
corrupt image and files that are not images) processed locally and on a Dask LocalCluster
of two worker processes; outputs mirror the tree and equal toroid.Pipeline's results in
this process; failures are named and counted; usage errors exit with status 2."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import toroid
from toroid import _capi

try:
    from PIL import Image
except ImportError:  # pragma: no cover - python3-pil is a test dependency
    Image = None

try:
    import distributed  # noqa: F401
except ImportError:  # pragma: no cover - python3-distributed is a test dependency
    distributed = None

PIPELINE = [{"op": "resize", "mode": "bilinear", "antialias": True, "size": [20, 24]},
            {"op": "flip", "dims": [-1]}]


def image(seed, channels=3, h=40, w=50):
    """Smooth gradients with a little noise: photo-like, so that JPEG keeps them close."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    planes = [(a * y + b * x + c) for a, b, c in rng.uniform([1, 1, 0], [3, 3, 60], size=(channels, 3))]
    noise = rng.integers(0, 12, size=(channels, h, w))
    return np.clip(np.stack(planes) + noise, 0, 255).astype(np.uint8)[None]


def write_png(path, x):
    """x: (1, C, H, W) uint8."""
    hwc = np.ascontiguousarray(x[0].transpose(1, 2, 0))
    Image.fromarray(hwc[:, :, 0] if hwc.shape[2] == 1 else hwc).save(path)


def read_image(path):
    """(1, C, H, W) uint8 of a PNG or JPEG (Pillow's decoder), or an .npy as stored."""
    if path.lower().endswith(".npy"):
        return np.load(path)
    with Image.open(path) as im:
        a = np.asarray(im)
    if a.ndim == 2:
        a = a[:, :, None]
    return a.transpose(2, 0, 1)[None]


def run_batch(*args, env=None, timeout=120):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "toroid.batch"] + [str(a) for a in args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=e, timeout=timeout)


def messages(stderr):
    """stderr's lines without the progress bar's redraws (tqdm separates them with \\r)."""
    return [line for line in re.split(r"[\r\n]+", stderr) if line.strip() and not re.match(r"\s*\d+%\|", line)]


def summary(stdout):
    """(written, failed, ignored) of the summary line, the only line on stdout."""
    m = re.fullmatch(r"toroid: (\d+) written, (\d+) failed, (\d+) ignored \(not images\), [0-9.]+ s, "
                     r"[0-9.]+ images/s\n", stdout)
    if not m:
        raise AssertionError("no summary line in:\n" + stdout)
    return tuple(int(v) for v in m.groups())


@unittest.skipIf(Image is None, "Pillow (python3-pil) is not installed")
class BatchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="toroid-batch-")
        # One disk cache for every batch run and its workers: each kernel compiles once.
        cls.env = {"TOROID_CACHE_DIR": os.path.join(cls.tmp, "cache")}
        cls.inp = os.path.join(cls.tmp, "in")
        os.makedirs(os.path.join(cls.inp, "sub", "deeper"))
        cls.sources = {}  # relative path -> the (1, C, H, W) array the file holds
        for rel, seed, channels in (("a.png", 1, 3), ("sub/b.png", 2, 3), ("sub/E.PNG", 3, 1)):
            x = image(seed, channels)
            write_png(os.path.join(cls.inp, rel), x)
            cls.sources[rel] = read_image(os.path.join(cls.inp, rel))
        for rel, seed in (("sub/deeper/c.npy", 4), ("D.NPY", 5)):
            x = image(seed)
            with open(os.path.join(cls.inp, rel), "wb") as f:  # np.save(path) would add ".npy"
                np.save(f, x)
            cls.sources[rel] = x
        # A JPEG: its decoded pixels are compared with Pillow's decode of the same file.
        Image.fromarray(np.ascontiguousarray(image(6)[0].transpose(1, 2, 0))).save(
            os.path.join(cls.inp, "sub", "photo.jpg"), quality=95)
        cls.sources["sub/photo.jpg"] = read_image(os.path.join(cls.inp, "sub", "photo.jpg"))
        with open(os.path.join(cls.inp, "sub", "bad.png"), "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + b"not really a png" * 4)
        with open(os.path.join(cls.inp, "notes.txt"), "w") as f:
            f.write("not an image\n")
        with open(os.path.join(cls.inp, "sub", "README"), "w") as f:
            f.write("not an image either\n")
        cls.pipeline_file = os.path.join(cls.tmp, "pipeline.json")
        with open(cls.pipeline_file, "w") as f:
            json.dump(PIPELINE, f)
        pipeline = toroid.Pipeline(PIPELINE)
        # Image files decode to RGB (toroid.batch's default --mode rgb): a grey PNG's one
        # channel three times; .npy arrays as stored.
        cls.expected = {rel: pipeline(np.repeat(x, 3, axis=1) if x.shape[1] == 1 and not rel.lower().endswith(".npy")
                                      else x)
                        for rel, x in cls.sources.items()}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def out_dir(self, name):
        return os.path.join(self.tmp, name)

    def check_outputs(self, out, proc, fmt=None):
        self.assertEqual(proc.returncode, 1, proc.stderr)
        bad = os.path.join(self.inp, "sub", "bad.png")
        errors = [m for m in messages(proc.stderr) if m.startswith("toroid: error:")]
        self.assertEqual(len(errors), 1, proc.stderr)
        self.assertRegex(errors[0], r"^toroid: error: %s: (?!.*bad\.png)\S" % re.escape(bad))
        self.assertEqual(summary(proc.stdout), (len(self.sources), 1, 2))
        written = sorted(os.path.relpath(os.path.join(r, f), out) for r, _, fs in os.walk(out) for f in fs)
        want = sorted(os.path.splitext(rel)[0] + "." + fmt if fmt else rel for rel in self.sources)
        self.assertEqual(written, sorted(os.path.normpath(w) for w in want))
        for rel, expected in self.expected.items():
            path = os.path.join(out, os.path.splitext(rel)[0] + "." + fmt if fmt else rel)
            got = read_image(path)
            with self.subTest(file=rel):
                self.assertEqual(got.dtype, np.uint8)
                self.assertEqual(got.shape, expected.shape)
                diff = np.abs(got.astype(int) - expected.astype(int))
                if path.lower().endswith((".jpg", ".jpeg")):
                    # JPEG output is lossy: close to the result, not equal.
                    self.assertLess(diff.mean(), 4)
                elif rel.endswith(".jpg"):
                    # toroid's JPEG decoder and Pillow's may round the color conversion
                    # differently by a level.
                    self.assertLessEqual(diff.max(), 2)
                else:
                    np.testing.assert_array_equal(got, expected)

    def test_local(self):
        out = self.out_dir("out-local")
        proc = run_batch(self.pipeline_file, self.inp, out, "--threads", 2, env=self.env)
        self.check_outputs(out, proc)

    def test_local_npy_format_and_inline_pipeline(self):
        out = self.out_dir("out-npy")
        proc = run_batch(json.dumps(PIPELINE), self.inp, out, "--format", "npy", env=self.env)
        self.check_outputs(out, proc, fmt="npy")

    def test_mode_unchanged_keeps_grey_files_grey(self):
        out = self.out_dir("out-unchanged")
        proc = run_batch(self.pipeline_file, self.inp, out, "--format", "npy", "--mode", "unchanged", env=self.env)
        self.assertEqual(proc.returncode, 1, proc.stderr)  # sub/bad.png
        self.assertEqual(np.load(os.path.join(out, "sub", "E.npy")).shape[1], 1)
        self.assertEqual(np.load(os.path.join(out, "a.npy")).shape[1], 3)
        bad = run_batch(self.pipeline_file, self.inp, self.out_dir("out-bad-mode"), "--mode", "cmyk", env=self.env)
        self.assertEqual(bad.returncode, 2, bad.stderr)
        self.assertFalse(os.path.exists(self.out_dir("out-bad-mode")))

    def test_all_good_exits_zero(self):
        inp = os.path.join(self.tmp, "good")
        os.makedirs(inp, exist_ok=True)
        np.save(os.path.join(inp, "x.npy"), image(7))
        out = self.out_dir("out-good")
        proc = run_batch(self.pipeline_file, inp, out, env=self.env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(summary(proc.stdout), (1, 0, 0))
        np.testing.assert_array_equal(np.load(os.path.join(out, "x.npy")),
                                      toroid.Pipeline(PIPELINE)(image(7)))

    @unittest.skipIf(distributed is None, "Dask's distributed (python3-distributed) is not installed")
    def test_dask_local_cluster(self):
        out = self.out_dir("out-dask")
        proc = run_batch(self.pipeline_file, self.inp, out, "--dask", "local:2", "--chunk", 2, env=self.env,
                         timeout=60)
        self.check_outputs(out, proc)

    def test_usage_errors(self):
        out = self.out_dir("out-usage")
        cases = [
            ("missing input folder", (self.pipeline_file, os.path.join(self.tmp, "nope"), out)),
            ("bad pipeline JSON", ('[{"op": "resize"', self.inp, out)),
            ("unknown op", ('[{"op": "blur"}]', self.inp, out)),
            ("missing pipeline file", (os.path.join(self.tmp, "nope.json"), self.inp, out)),
            ("bad format", (self.pipeline_file, self.inp, out, "--format", "gif")),
            ("bad quality", (self.pipeline_file, self.inp, out, "--quality", 101)),
            ("bad chunk", (self.pipeline_file, self.inp, out, "--chunk", 0)),
            ("bad --dask", (self.pipeline_file, self.inp, out, "--dask", "local:0")),
            ("missing argument", (self.pipeline_file, self.inp)),
        ]
        if distributed is not None:
            cases.append(("unreachable scheduler", (self.pipeline_file, self.inp, out, "--dask", "tcp://127.0.0.1:9",
                                                    "--connect-timeout", 2)))
        for what, args in cases:
            with self.subTest(what):
                proc = run_batch(*args, env=self.env)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                lines = proc.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, proc.stderr)
                self.assertTrue(lines[0].startswith("toroid: error: "), proc.stderr)
                self.assertFalse(os.path.exists(out), "usage errors write nothing")


@unittest.skipIf(Image is None, "Pillow (python3-pil) is not installed")
class BatchSafetyTest(unittest.TestCase):
    """Nothing of the user's is lost: OUT at or inside IN is refused before anything is
    touched, the pipeline is read only as a bounded regular file, a float result for PNG /
    JPEG outputs is one usage error, tqdm is optional, and Ctrl-C cancels the queue."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="toroid-batch-safety-")
        self.env = {"TOROID_CACHE_DIR": os.path.join(self.tmp, "cache")}
        self.inp = os.path.join(self.tmp, "in")
        os.makedirs(os.path.join(self.inp, "sub"))
        write_png(os.path.join(self.inp, "a.png"), image(1))
        with open(os.path.join(self.inp, "sub", "b.npy"), "wb") as f:
            np.save(f, image(2))
        self.pipeline = os.path.join(self.tmp, "p.json")
        with open(self.pipeline, "w") as f:
            json.dump(PIPELINE, f)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def snapshot(self, root):
        out = {}
        for r, _, fs in os.walk(root):
            for name in fs:
                with open(os.path.join(r, name), "rb") as f:
                    out[os.path.relpath(os.path.join(r, name), root)] = f.read()
        return out

    def expect_usage_error(self, proc, needle):
        self.assertEqual(proc.returncode, 2, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertTrue(lines[0].startswith("toroid: error: "), proc.stderr)
        self.assertIn(needle, lines[0])

    def test_output_at_or_inside_input_is_refused(self):
        os.symlink(self.inp, os.path.join(self.tmp, "link"))
        before = self.snapshot(self.inp)
        for out, needle in ((self.inp, "is the input folder"), (os.path.join(self.inp, "."), "is the input folder"),
                            (os.path.join(self.inp, "sub", ".."), "is the input folder"),
                            (os.path.join(self.tmp, "link"), "is the input folder"),
                            (os.path.join(self.inp, "results"), "lies inside the input folder"),
                            (os.path.join(self.tmp, "link", "sub"), "lies inside the input folder")):
            for extra in ((), ("--format", "npy")):
                with self.subTest(out=out, extra=extra):
                    self.expect_usage_error(run_batch(self.pipeline, self.inp, out, *extra, env=self.env), needle)
                    self.assertEqual(self.snapshot(self.inp), before)
        self.assertFalse(os.path.exists(os.path.join(self.inp, "results")))
        # IN inside OUT: in/in/a.png would be written over in/a.png.
        os.makedirs(os.path.join(self.inp, "in"))
        write_png(os.path.join(self.inp, "in", "a.png"), image(3))
        before = self.snapshot(self.inp)
        self.expect_usage_error(run_batch(self.pipeline, self.inp, self.tmp, env=self.env), "is one of the input files")
        self.assertEqual(self.snapshot(self.inp), before)

    def test_pipeline_must_be_a_bounded_regular_file(self):
        out = os.path.join(self.tmp, "out")
        fifo = os.path.join(self.tmp, "fifo.json")
        os.mkfifo(fifo)
        huge = os.path.join(self.tmp, "huge.json")
        with open(huge, "wb") as f:
            f.truncate(17 << 20)
        for path, needle in (("/dev/zero", "character device"), (fifo, "FIFO"), (self.tmp, "directory"),
                             (huge, "more than the limit of 16777216 bytes")):
            with self.subTest(path=path):
                self.expect_usage_error(run_batch(path, self.inp, out, env=self.env, timeout=30), needle)
        self.assertFalse(os.path.exists(out))
        # A grid path that leaves the pipeline's folder, and --allow-paths.
        grid = os.path.join(self.tmp, "grid.npy")
        np.save(grid, np.zeros((1, 4, 5, 2), np.float32))
        sub = os.path.join(self.tmp, "pipes")
        os.makedirs(sub)
        with open(os.path.join(sub, "g.json"), "w") as f:
            json.dump([{"op": "grid_sample", "grid": "../grid.npy"}, {"op": "convert", "dtype": "uint8"}], f)
        self.expect_usage_error(run_batch(os.path.join(sub, "g.json"), self.inp, out, env=self.env),
                                "leaves the pipeline's folder")
        self.assertFalse(os.path.exists(out))
        with self.assertRaisesRegex(toroid.Error, "is absolute"):
            toroid.Pipeline([{"op": "grid_sample", "grid": grid}])
        self.assertEqual(len(toroid.Pipeline([{"op": "grid_sample", "grid": grid}], allow_paths=True).ops), 1)

    def test_float_result_for_png_output_is_one_usage_error(self):
        out = os.path.join(self.tmp, "out")
        to_float = PIPELINE + [{"op": "convert", "dtype": "float32", "scale": True}]
        proc = run_batch(json.dumps(to_float), self.inp, out, env=self.env)
        self.expect_usage_error(proc, "the pipeline's result is float32 for uint8 images")
        self.assertFalse(os.path.exists(out))
        proc = run_batch(json.dumps(to_float), self.inp, out, "--format", "npy", env=self.env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(summary(proc.stdout), (2, 0, 0))

    def test_max_pixels(self):
        out = os.path.join(self.tmp, "out")
        proc = run_batch(self.pipeline, self.inp, out, "--max-pixels", 100, env=self.env)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(summary(proc.stdout), (0, 2, 0))
        self.assertIn("more than the limit of 100", proc.stderr)

    def test_runs_without_tqdm(self):
        blocker = os.path.join(self.tmp, "no_tqdm")
        os.makedirs(os.path.join(blocker, "tqdm"))
        with open(os.path.join(blocker, "tqdm", "__init__.py"), "w") as f:
            f.write("raise ImportError('tqdm is not installed')\n")
        env = dict(self.env, PYTHONPATH=os.pathsep.join([blocker, os.environ.get("PYTHONPATH", "")]))
        out = os.path.join(self.tmp, "out")
        proc = run_batch(self.pipeline, self.inp, out, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)
        self.assertEqual(summary(proc.stdout), (2, 0, 0))
        self.assertRegex(proc.stderr, r"toroid: 2/2 images, 0 failed")

    def test_ctrl_c_cancels_the_queue(self):
        import signal
        import time
        many = os.path.join(self.tmp, "many")
        os.makedirs(many)
        x = image(4)
        n = 3000
        for i in range(n):
            with open(os.path.join(many, "img%04d.npy" % i), "wb") as f:
                np.save(f, x)
        out = os.path.join(self.tmp, "out")
        e = dict(os.environ, **self.env)
        proc = subprocess.Popen([sys.executable, "-m", "toroid.batch", self.pipeline, many, out, "--threads", "1"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=e)
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            if os.path.isdir(out) and len(os.listdir(out)) >= 20:
                break
            time.sleep(0.01)
        self.assertIsNone(proc.poll(), "finished before it could be interrupted")
        sent = time.time()
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
        self.assertLess(time.time() - sent, 10)
        self.assertEqual(proc.returncode, 130, stderr)
        self.assertRegex(stderr, r"toroid: interrupted: \d+ written, 0 failed, \d+ not done")
        names = os.listdir(out)
        self.assertLess(len(names), n, "the queue was finished after Ctrl-C")
        self.assertEqual([m for m in names if ".tmp." in m], [])
        for name in names:  # every file written is whole
            np.testing.assert_array_equal(np.load(os.path.join(out, name)), toroid.Pipeline(PIPELINE)(x))


class BatchListingTest(unittest.TestCase):
    """The file listing alone: images by extension (any case), sorted, the output folder
    left out when it lies inside the input folder."""

    def test_list_inputs(self):
        from toroid import batch
        with tempfile.TemporaryDirectory() as tmp:
            for rel in ("b.PNG", "a/z.jpeg", "a/y.JPG", "c.npy", "x.txt", "a/noext", "out/old.png"):
                os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
                open(os.path.join(tmp, rel), "wb").close()
            images, ignored = batch.list_inputs(tmp, os.path.join(tmp, "out"))
            self.assertEqual(images, [os.path.join("a", "y.JPG"), os.path.join("a", "z.jpeg"), "b.PNG", "c.npy"])
            self.assertEqual(ignored, 2)
            images, _ = batch.list_inputs(tmp)
            self.assertIn(os.path.join("out", "old.png"), images)
        self.assertEqual(batch.output_relpath(os.path.join("a", "y.JPG"), "npy"), os.path.join("a", "y.npy"))
        self.assertEqual(batch.output_relpath("b.PNG", None), "b.PNG")


if __name__ == "__main__":
    unittest.main()
