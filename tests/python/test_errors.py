"""Every failure of toroid's Python API is a toroid.Error (a ValueError; InvalidTypeError is
also a TypeError, OutOfMemoryError also a MemoryError): Pipeline(None), deeply nested lists,
results larger than the machine's memory, NumPy arrays in (H, W, C) order, and a bounded fuzz
of garbage arguments over the public entry points. Also: Ctrl-C during a slow prepare raises
KeyboardInterrupt in the caller at once."""

import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

import toroid
from toroid import _capi, transforms as T

try:
    import torch
except ImportError:  # pragma: no cover - Debian's python3-torch is a test dependency
    torch = None


def nested(depth):
    """[[[...]]] `depth` levels deep, built without recursion."""
    v = []
    for _ in range(depth):
        v = [v]
    return v


class ErrorTypesTest(unittest.TestCase):
    def test_hierarchy(self):
        self.assertTrue(issubclass(toroid.Error, ValueError))
        self.assertTrue(issubclass(toroid.InvalidTypeError, toroid.Error))
        self.assertTrue(issubclass(toroid.InvalidTypeError, TypeError))
        self.assertTrue(issubclass(toroid.OutOfMemoryError, toroid.Error))
        self.assertTrue(issubclass(toroid.OutOfMemoryError, MemoryError))
        self.assertFalse(issubclass(toroid.Error, KeyboardInterrupt))

    def test_pipeline_of_none(self):
        for ops in (None, 3, 2.5, object()):
            with self.assertRaises(toroid.InvalidTypeError) as cm:
                toroid.Pipeline(ops)
            self.assertIsInstance(cm.exception, TypeError)
            self.assertIn("Pipeline takes a list of op dicts or JSON text", str(cm.exception))

    def test_deeply_nested_lists(self):
        x = np.zeros((3, 8, 8), np.float32)
        deep = nested(100000)  # far past Python's recursion limit
        cases = [
            lambda: toroid.Pipeline([{"op": "resize", "size": deep}]),
            lambda: toroid.Pipeline([{"op": "resize", "size": [4, 4], "extra": {"a": deep}}]),
            lambda: toroid.interpolate(x, size=4, mode=deep),
            lambda: toroid.affine(x, deep),
            lambda: toroid.normalize(x, deep, 1.0),
            lambda: toroid.grid_sample(x, deep),
            lambda: T.Normalize(deep, [1.0]),
            lambda: T.RandomAffine(deep),
        ]
        for i, f in enumerate(cases):
            with self.subTest(case=i):
                with self.assertRaises(toroid.Error) as cm:
                    f()
                self.assertLess(len(str(cm.exception)), 400)

    def test_huge_output_is_refused_before_allocating(self):
        # 3 x 2^19 x 2^19 float32 is 3 TiB (under the library's own limit of 2^40 elements): no
        # machine running this test has that much memory.
        x = np.zeros((3, 4, 4), np.float32)
        p = toroid.Pipeline([{"op": "resize", "size": [1 << 19, 1 << 19], "mode": "nearest"}], engine="reference")
        with self.assertRaises(toroid.OutOfMemoryError) as cm:
            p(x)
        self.assertIsInstance(cm.exception, MemoryError)
        message = str(cm.exception)
        self.assertIn("(3, 524288, 524288) float32", message)
        self.assertIn("3 TiB", message)
        with self.assertRaises(toroid.OutOfMemoryError):
            p.run_batch([x, x])
        with self.assertRaises(toroid.OutOfMemoryError):
            toroid.interpolate(x, size=(1 << 19, 1 << 19))

    def test_out_of_memory_status_is_out_of_memory_error(self):
        with self.assertRaises(toroid.OutOfMemoryError) as cm:
            _capi.raise_status(_capi.OUT_OF_MEMORY, "out of memory")
        self.assertEqual(cm.exception.status, _capi.OUT_OF_MEMORY)


class HwcTest(unittest.TestCase):
    def setUp(self):
        self.flip = toroid.Pipeline([{"op": "flip", "dims": [3]}], engine="reference")

    def test_hwc_numpy_is_an_error_naming_the_fix(self):
        for shape, fix in [((427, 640, 3), "transpose(2, 0, 1)"), ((20, 30, 1), "transpose(2, 0, 1)"),
                           ((20, 30, 4), "transpose(2, 0, 1)"), ((2, 20, 30, 3), "transpose(0, 3, 1, 2)")]:
            with self.subTest(shape=shape):
                x = np.zeros(shape, np.uint8)
                for f in (lambda: self.flip(x), lambda: toroid.flip(x, -1), lambda: self.flip.run_batch([x]),
                          lambda: T.HorizontalFlip()(x)):
                    with self.assertRaises(toroid.Error) as cm:
                        f()
                    message = str(cm.exception)
                    self.assertIn(str(shape), message)
                    self.assertIn(fix, message)

    def test_the_fix_works(self):
        rng = np.random.default_rng(0)
        hwc = rng.integers(0, 256, size=(5, 7, 3), dtype=np.uint8)
        out = self.flip(hwc.transpose(2, 0, 1))
        np.testing.assert_array_equal(out.transpose(1, 2, 0), hwc[:, ::-1])

    def test_chw_and_ambiguous_shapes_still_run(self):
        # Channels first of 1, 3 or 4 (whatever the width), or a last dim that cannot be
        # channels: read as (C, H, W), as before.
        for shape in [(3, 5, 3), (1, 5, 4), (4, 6, 1), (5, 6, 7), (2, 5, 6), (3, 427, 640), (2, 3, 5, 7)]:
            with self.subTest(shape=shape):
                x = np.arange(np.prod(shape), dtype=np.uint8).reshape(shape)
                np.testing.assert_array_equal(self.flip(x), x[..., ::-1])

    @unittest.skipIf(torch is None, "needs torch")
    def test_torch_tensors_keep_torch_convention(self):
        # torch tensors are (C, H, W) by torchvision's convention, whatever their sizes.
        x = torch.arange(5 * 6 * 3, dtype=torch.uint8).reshape(5, 6, 3)
        self.assertTrue(torch.equal(self.flip(x), x.flip(-1)))


# ---- the fuzz ------------------------------------------------------------------------------

def _garbage_pool():
    pool = [None, 0, -1, 1, 3, 2 ** 31, 2 ** 70, -2 ** 70, 0.5, -0.0, math.nan, math.inf, -math.inf, True, False, 1j,
            "", "x", "bilinear", "nearest", "uint8", "float32", "\x00", b"bytes", [], [1], [1, 2], [2, 3], [1, 2, 3],
            [0.5, 0.5, 0.5], [[1, 2], [3, 4]], [["a"]], ["a", "b"], [None, None], (4, 4), {}, {"op": "flip"},
            {"a": [1]}, object(), slice(1, 2), nested(3000), [nested(3000)], {"k": nested(3000)}, range(3),
            np.float32(2), np.int64(3), np.zeros(()), np.zeros((2,)), np.zeros((2, 3)), np.zeros((2, 3), np.float32),
            np.zeros((3, 5, 7), np.uint8), np.zeros((1, 3, 5, 7), np.float32), np.zeros((2, 3, 4, 5, 6), np.uint8),
            np.zeros((3, 5, 7), np.int64), np.zeros((3, 5, 7), bool), np.zeros((3, 5, 7), np.complex64),
            np.zeros((0, 3, 3), np.uint8), np.zeros((5, 6, 3), np.uint8), np.zeros((3, 5, 7), ">f4"),
            np.zeros((1, 2, 3), np.float32), np.array(["a", "b"]), np.array([object()]),
            np.full((2, 3), np.nan, np.float32), lambda v: v, len, toroid.Pipeline, type]
    if torch is not None:
        pool += [torch.zeros(3, 5, 7, dtype=torch.uint8), torch.zeros(1, 3, 5, 7),
                 torch.zeros(3, 5, 7, dtype=torch.int64),
                 torch.zeros(2, 3, dtype=torch.complex64), torch.zeros(()), torch.zeros(2, 3, 4, 5, 6),
                 torch.zeros(3, 5, 7).to_sparse(), torch.tensor(2.0), torch.uint8, torch.float64]
    return pool


def _image(rng):
    shape = rng.choice([(3, 5, 7), (1, 3, 6, 4), (5, 7), (1, 2, 8)])
    dtype = rng.choice([np.uint8, np.float32])
    return np.ones(shape, dtype)


def _entry_points():
    """(name, function of (rng, g) calling one public entry point, valid and garbage arguments
    mixed by g(valid))."""
    flip = [{"op": "flip", "dims": [3]}]
    resize = [{"op": "resize", "size": [4, 5], "mode": "bilinear"}]

    def pipeline_ops(rng, g):
        op = dict(rng.choice([flip[0], resize[0], {"op": "crop", "top": 0, "left": 1, "height": 2, "width": 3},
                              {"op": "convert", "dtype": "float32", "scale": True}]))
        for k in list(op):
            op[k] = g(op[k])
        if rng.random() < 0.3:
            op[rng.choice(["", "x", "op", 1, None, (4, 4), 2.5])] = g(1)
        return [op]

    def set_and_restore(setter, getter):
        def f(rng, g):
            before = getter()
            try:
                setter(g(before))
            finally:
                setter(before)
        return f

    return [
        ("Pipeline", lambda rng, g: toroid.Pipeline(g(flip), engine=g(None), threads=g(None), base_dir=g(None))),
        ("Pipeline ops", lambda rng, g: toroid.Pipeline(pipeline_ops(rng, g), engine="reference")(_image(rng))),
        ("Pipeline text", lambda rng, g: toroid.Pipeline(g('[{"op": "flip", "dims": [3]}]'))),
        ("Pipeline call", lambda rng, g: toroid.Pipeline(flip, engine=g("reference"), threads=g(1))(g(_image(rng)))),
        ("run_batch", lambda rng, g: toroid.Pipeline(flip, engine="reference").run_batch(
            g([_image(rng), g(_image(rng))]), errors=g("raise"))),
        ("explain", lambda rng, g: toroid.Pipeline(flip, engine="reference").explain(g(_image(rng)))),
        ("interpolate", lambda rng, g: toroid.interpolate(g(_image(rng)), size=g(4), scale_factor=g(None),
                                                          mode=g("bilinear"), align_corners=g(None),
                                                          antialias=g(False), recompute_scale_factor=g(None))),
        ("resize", lambda rng, g: toroid.resize(g(_image(rng)), g(4), interpolation=g("bilinear"), max_size=g(None),
                                                antialias=g(True))),
        ("center_crop", lambda rng, g: toroid.center_crop(g(_image(rng)), g([2, 3]))),
        ("affine", lambda rng, g: toroid.affine(g(_image(rng)), g([[1, 0, 0], [0, 1, 0]]), size=g(None),
                                                mode=g("bilinear"), padding_mode=g("zeros"),
                                                align_corners=g(False), fill=g(None))),
        ("grid_sample", lambda rng, g: toroid.grid_sample(g(_image(rng)), g(np.zeros((1, 2, 3, 2), np.float32)),
                                                          mode=g("bilinear"), padding_mode=g("zeros"),
                                                          align_corners=g(False))),
        ("flip", lambda rng, g: toroid.flip(g(_image(rng)), g(-1))),
        ("crop", lambda rng, g: toroid.crop(g(_image(rng)), g(0), g(1), g(2), g(3))),
        ("convert", lambda rng, g: toroid.convert(g(_image(rng)), g("float32"), scale=g(True))),
        ("normalize", lambda rng, g: toroid.normalize(g(np.ones((3, 4, 5), np.float32)), g([0.5]), g([2.0]))),
        ("compile", lambda rng, g: toroid.compile(g(lambda x: toroid.flip(x, -1)), engine=g("reference"),
                                                  threads=g(None))(g(_image(rng)))),
        ("set_default_engine", set_and_restore(toroid.set_default_engine, toroid.get_default_engine)),
        ("set_num_threads", set_and_restore(toroid.set_num_threads, toroid.get_num_threads)),
        ("cache_stats", lambda rng, g: toroid.cache_stats()),
        ("Compose", lambda rng, g: T.Compose(g([T.HorizontalFlip()]))(g(_image(rng)))),
        ("Resize", lambda rng, g: T.Resize(g(4), interpolation=g("bilinear"), max_size=g(None),
                                           antialias=g(True))(g(_image(rng)))),
        ("CenterCrop", lambda rng, g: T.CenterCrop(g(3))(g(_image(rng)))),
        ("RandomCrop", lambda rng, g: T.RandomCrop(g(3), padding=g(None), pad_if_needed=g(False), fill=g(0),
                                                   padding_mode=g("constant"))(g(_image(rng)))),
        ("RandomHorizontalFlip", lambda rng, g: T.RandomHorizontalFlip(g(0.5))(g(_image(rng)))),
        ("RandomVerticalFlip", lambda rng, g: T.RandomVerticalFlip(p=g(0.5))(g(_image(rng)))),
        ("RandomAffine", lambda rng, g: T.RandomAffine(g(10), translate=g(None), scale=g(None), shear=g(None),
                                                       interpolation=g("nearest"), fill=g(0),
                                                       center=g(None))(g(_image(rng)))),
        ("ToDtype", lambda rng, g: T.ToDtype(g("float32"), scale=g(False))(g(_image(rng)))),
        ("Normalize", lambda rng, g: T.Normalize(g([0.5]), g([2.0]))(g(np.ones((3, 4, 5), np.float32)))),
        ("T.resize", lambda rng, g: T.resize(g(_image(rng)), g(4))),
        ("T.center_crop", lambda rng, g: T.center_crop(g(_image(rng)), g(3))),
        ("T.crop", lambda rng, g: T.crop(g(_image(rng)), g(0), g(0), g(2), g(2))),
        ("T.hflip", lambda rng, g: T.hflip(g(_image(rng)))),
        ("T.affine", lambda rng, g: T.affine(g(_image(rng)), g(10.0), g([1, 2]), g(1.0), g([0.0, 0.0]),
                                             interpolation=g("nearest"), fill=g(None), center=g(None))),
        ("T.to_dtype", lambda rng, g: T.to_dtype(g(_image(rng)), g("float32"), scale=g(True))),
        ("T.normalize", lambda rng, g: T.normalize(g(np.ones((3, 4, 5), np.float32)), g([0.5]), g([2.0]))),
    ]


@unittest.skipIf(torch is None, "the transforms draw with torch's generator")
class GarbageFuzzTest(unittest.TestCase):
    CASES = 300

    def setUp(self):
        self.engine = toroid.get_default_engine()
        toroid.set_default_engine("reference")  # the fuzz is of the Python API, not of the compiler

    def tearDown(self):
        toroid.set_default_engine(self.engine)

    def test_garbage_arguments_raise_only_toroid_errors(self):
        rng = random.Random(27)
        torch.manual_seed(27)
        pool = _garbage_pool()
        entries = _entry_points()
        bad = []
        for case in range(self.CASES):
            name, call = entries[case % len(entries)] if case < len(entries) else rng.choice(entries)
            rate = rng.choice([0.2, 0.5, 1.0])
            drawn = []

            def g(valid):
                v = rng.choice(pool) if rng.random() < rate else valid
                drawn.append(v)
                return v
            try:
                call(rng, g)
            except toroid.Error as e:
                self.assertTrue(str(e))
            except Exception as e:  # noqa: BLE001 - what the test looks for
                shown = ", ".join(type(v).__name__ for v in drawn)
                bad.append("case %d %s(%s): %s: %s" % (case, name, shown, type(e).__name__, str(e)[:200]))
        self.assertEqual(bad, [], "\n" + "\n".join(bad))


# ---- Ctrl-C during a prepare -------------------------------------------------------------------

SLOW_COMPILER = """#!/bin/sh
# A C++ compiler whose compiles take a minute (`--version` answers at once) until a file
# beside it says to stop sleeping: a prepare that compiles blocks for that long.
case "$*" in *--version*) exec c++ "$@";; esac
[ -e "$0.fast" ] || sleep 60
exec c++ "$@"
"""

CHILD = """
import os, sys, time
import numpy as np
import toroid
x = np.arange(3 * 7 * 9, dtype=np.uint8).reshape(3, 7, 9)
BEFORE
p = toroid.Pipeline([{"op": "crop", "top": 1, "left": 2, "height": 3, "width": 4}], engine="compiled")
print("ready", flush=True)
try:
    p(x)
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted %.6f" % time.monotonic(), flush=True)
    AFTER
"""

# After the interrupt, the process goes on: another pipeline compiles and runs right.
USABLE = """open(os.environ["TOROID_CXX"] + ".fast", "w").close()
    q = toroid.Pipeline([{"op": "flip", "dims": [3]}], engine="compiled")
    print("usable" if np.array_equal(q(x), x[..., ::-1]) else "wrong", flush=True)
    os._exit(0)"""


# Before the slow prepare, another one compiles fast and its background build finishes: the
# library's exit hook (installed by the first background build) is then in place.
EARLIER_BUILD = """fast = os.environ["TOROID_CXX"] + ".fast"
open(fast, "w").close()
toroid.Pipeline([{"op": "flip", "dims": [2]}], engine="compiled")(x)
toroid.wait_for_background_builds()
os.remove(fast)"""


class InterruptTest(unittest.TestCase):
    def run_child(self, after, before=""):
        """Runs CHILD with a compiler that sleeps, sends SIGINT 0.5 s into its prepare; returns
        (stdout lines, stderr, seconds from SIGINT to KeyboardInterrupt, seconds from SIGINT to
        exit, return code)."""
        with tempfile.TemporaryDirectory() as tmp:
            cxx = os.path.join(tmp, "slow-c++")
            with open(cxx, "w") as f:
                f.write(SLOW_COMPILER)
            os.chmod(cxx, 0o755)
            env = dict(os.environ, TOROID_CXX=cxx, TOROID_CACHE_DIR=os.path.join(tmp, "cache"), TOROID_PREBUILT="none")
            env.pop("TOROID_ENGINE", None)
            child = subprocess.Popen([sys.executable, "-c", CHILD.replace("AFTER", after).replace("BEFORE", before)], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
            try:
                self.assertEqual(child.stdout.readline().strip(), "ready")
                time.sleep(0.5)
                child.send_signal(signal.SIGINT)
                sent = time.monotonic()
                try:
                    out, err = child.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    out, err = "", "still running 60 s after SIGINT"
                ended = time.monotonic() - sent
                lines = out.split()
                caught = float(lines[1]) - sent if lines[:1] == ["interrupted"] else None
                self.assertIsNotNone(caught, "stdout %r stderr %r" % (out, err[-2000:]))
                return lines, err, caught, ended, child.returncode
            finally:
                try:  # the child and the sleeping compiler it started
                    os.killpg(child.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                child.wait()

    def test_sigint_during_a_prepare_raises_keyboard_interrupt(self):
        # Timed from SIGINT to the child's except clause (CLOCK_MONOTONIC is one clock for
        # every process); the child then compiles another pipeline and leaves with os._exit,
        # so that the library's exit does not count.
        lines, err, caught, _, code = self.run_child(USABLE)
        self.assertLess(caught, 1.0)
        self.assertEqual(lines[2:], ["usable"], err[-2000:])
        self.assertEqual(code, 0)

    def test_uncaught_keyboard_interrupt_ends_the_process_at_once(self):
        # Python ends a process whose KeyboardInterrupt is not caught by SIGINT itself, after
        # its own exit steps and before the C library's: the compile is not waited for.
        lines, err, caught, ended, code = self.run_child("raise")
        self.assertLess(caught, 1.0)
        self.assertIn("KeyboardInterrupt", err)
        self.assertLess(ended, 2.0)
        self.assertEqual(code, -signal.SIGINT)

    @unittest.skipUnless(_capi.has_interrupt, "the library has no toroid_interrupt: at exit it waits for the "
                         "compiles in flight")
    def test_exit_after_sigint_does_not_wait_for_the_compiler(self):
        # A plain exit after the interrupt was caught: the library's exit hook runs, and must
        # not wait for the abandoned prepare's compile (toroid_interrupt stops it).
        lines, err, caught, ended, code = self.run_child("sys.exit(3)")
        self.assertLess(ended, 2.0, err[-2000:])
        self.assertEqual(code, 3, err[-2000:])

    @unittest.skipUnless(_capi.has_interrupt, "the library has no toroid_interrupt: at exit it waits for the "
                         "compiles in flight")
    def test_exit_after_sigint_does_not_wait_for_the_abandoned_builds(self):
        # The exit hook is in place (an earlier background build), and the interrupted
        # prepare's compiles (its quick build, and its full build where it runs beside) are
        # still running: exit gives them no grace, since the user asked to stop.
        lines, err, caught, ended, code = self.run_child("sys.exit(3)", before=EARLIER_BUILD)
        self.assertLess(ended, 2.0)
        self.assertEqual(code, 3)


if __name__ == "__main__":
    unittest.main()
