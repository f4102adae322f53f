"""Tests of the per-call fast path and the cache counters: a Pipeline called again on arrays
of one spec takes the cached runner (same results as the general path, fresh outputs, the
settings still honoured, safe from several threads), toroid.cache_stats counts one compile
for a pipeline run on three sizes, and toroid_run_data checks what it can."""

import ctypes
import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest

import numpy as np

import toroid
from toroid import _capi, _core

try:
    import torch
except ImportError:  # pragma: no cover - Debian's python3-torch is a test dependency
    torch = None

FLIP_W = [{"op": "flip", "dims": [-1]}]


def sample(shape, seed=0):
    return np.random.default_rng(seed).integers(0, 256, size=shape, dtype=np.uint8)


class FastPathTest(unittest.TestCase):
    def test_repeated_calls_match_numpy_and_return_fresh_arrays(self):
        p = toroid.Pipeline(FLIP_W, threads=1)
        x = sample((5, 7))
        outs = [p(x) for _ in range(4)]
        self.assertEqual(len(p._handle.fast), 1)  # the first call filled the fast path
        for out in outs:
            np.testing.assert_array_equal(out, x[:, ::-1])
        outs[0][0, 0] ^= 0xFF  # results never share memory
        np.testing.assert_array_equal(outs[1], x[:, ::-1])

    def test_op_handles_fill_the_fast_path_on_a_second_call(self):
        # The op functions' and transforms' handles (one per op list: a random draw's values
        # make most of them for one call) build a runner only when an input kind comes back.
        from toroid import _core
        ops = [{"op": "flip", "dims": [-1]}, {"op": "crop", "top": 1, "left": 2, "height": 3, "width": 4}]
        h = _core.cached_pipeline(ops)
        x = sample((1, 3, 6, 9))
        want = x[:, :, 1:4, ::-1][:, :, :, 2:6]
        np.testing.assert_array_equal(h(x), want)
        self.assertEqual(len(h.fast), 0)
        np.testing.assert_array_equal(h(x), want)
        self.assertEqual(len(h.fast), 1)
        np.testing.assert_array_equal(h(x), want)
        np.testing.assert_array_equal(h(x[:, :, :5]), x[:, :, 1:4, ::-1][:, :, :, 2:6])  # another kind: general path
        self.assertEqual(len(h.fast), 1)

    def test_new_op_lists_run_once_without_a_handle(self):
        # run_ops (the op functions' and transforms' way): an op list seen for the first time
        # on a prepared structure binds and runs, leaving no handle; its second call makes
        # the handle; every result is the handle path's.
        from toroid import _core
        x = sample((2, 3, 11, 13))
        first = [{"op": "crop", "top": 1, "left": 2, "height": 5, "width": 6}, {"op": "flip", "dims": [-1]}]
        want = x[:, :, 1:6, 2:8][:, :, :, ::-1]
        np.testing.assert_array_equal(_core.run_ops(first, x), want)  # a new structure: the handle path
        self.assertIsNotNone(_core.cached_handle(first))
        again = [{"op": "crop", "top": 2, "left": 3, "height": 5, "width": 6}, {"op": "flip", "dims": [-1]}]
        want = x[:, :, 2:7, 3:9][:, :, :, ::-1]
        np.testing.assert_array_equal(_core.run_ops(again, x), want)  # prepared: once, no handle
        self.assertIsNone(_core.cached_handle(again))
        np.testing.assert_array_equal(_core.run_ops(again, x), want)  # the second call makes it
        self.assertIsNotNone(_core.cached_handle(again))
        np.testing.assert_array_equal(_core.run_ops(again, x), want)
        # Bad values fail as on the handle path, with nothing kept.
        bad = [{"op": "crop", "top": 2, "left": 3, "height": 0, "width": 6}]
        with self.assertRaises(toroid.Error):
            _core.run_ops(bad, x)
        self.assertIsNone(_core.cached_handle(bad))

    def test_same_spec_new_data_is_read(self):
        p = toroid.Pipeline(FLIP_W, threads=1)
        for seed in range(3):
            x = sample((4, 6), seed)
            np.testing.assert_array_equal(p(x), x[:, ::-1])

    def test_views_read_only_and_channels_last(self):
        p = toroid.Pipeline(FLIP_W, threads=1)
        base = sample((6, 9))
        strided = base[::2, 1:]  # not contiguous
        readonly = sample((3, 4), 5)
        readonly.setflags(write=False)
        chw = np.ascontiguousarray(sample((3, 4, 5), 6).transpose(1, 2, 0)).transpose(2, 0, 1)
        for x in (strided, readonly, chw):
            for _ in range(3):
                np.testing.assert_array_equal(p(x), x[..., ::-1])
        out = p(chw)
        self.assertEqual(out.strides, chw.strides)  # channels-last in, channels-last out

    def test_float_output_through_convert(self):
        p = toroid.Pipeline([{"op": "convert", "dtype": "float32", "scale": True}], threads=1)
        x = sample((2, 3))
        for _ in range(3):
            out = p(x)
            self.assertEqual(out.dtype, np.float32)
            np.testing.assert_allclose(out, x.astype(np.float32) / 255, rtol=0, atol=1e-7)

    def test_thread_setting_change_prepares_again(self):
        # The fast path keys on the settings: after set_num_threads the next call prepares
        # the function for the new thread count instead of reusing the old runner.
        p = toroid.Pipeline(FLIP_W)
        x = sample((3, 3))
        old = toroid.get_num_threads()
        try:
            toroid.set_num_threads(1)
            p(x)
            before = toroid.cache_stats()["prepares"]
            p(x)
            self.assertEqual(toroid.cache_stats()["prepares"], before)
            toroid.set_num_threads(2)
            np.testing.assert_array_equal(p(x), x[:, ::-1])
            self.assertEqual(toroid.cache_stats()["prepares"], before + 1)
        finally:
            toroid.set_num_threads(old)

    def test_many_threads_many_specs(self):
        p = toroid.Pipeline(FLIP_W, threads=1)
        inputs = [sample((2 + i % 4, 3 + i % 5), i) for i in range(16)]
        errors = []

        def work(i):
            try:
                for _ in range(50):
                    x = inputs[(i * 7 + _) % len(inputs)]
                    if not np.array_equal(p(x), x[:, ::-1]):
                        errors.append("thread %d: wrong result" % i)
                        return
            except Exception as e:  # reported below, not lost in the thread
                errors.append("thread %d: %r" % (i, e))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_a_loaders_sizes_stay_on_the_fast_path(self):
        # 200 image sizes (a folder of photos), seen again: no call takes the general path.
        p = toroid.Pipeline(FLIP_W, threads=1)
        inputs = [sample((3, 5 + i // 20, 7 + i % 20), i) for i in range(200)]
        for x in inputs:
            p(x)
        general = []
        original = p._handle.call_general
        p._handle.call_general = lambda *a, **k: general.append(1) or original(*a, **k)
        for x in inputs:
            np.testing.assert_array_equal(p(x), x[:, :, ::-1])
        self.assertEqual(general, [])

    @unittest.skipIf(torch is None, "PyTorch (python3-torch) is not installed")
    def test_torch_fast_path(self):
        p = toroid.Pipeline(FLIP_W, threads=1)
        x = torch.from_numpy(sample((2, 4, 5)))
        outs = [p(x) for _ in range(3)]
        self.assertEqual(len(p._handle.fast), 1)
        for out in outs:
            self.assertIsInstance(out, torch.Tensor)
            self.assertTrue(torch.equal(out, torch.flip(x, [-1])))
        self.assertNotEqual(outs[0].data_ptr(), outs[1].data_ptr())
        y = x.permute(0, 2, 1)  # another spec: a second entry
        self.assertTrue(torch.equal(p(y), torch.flip(y, [-1])))
        self.assertEqual(len(p._handle.fast), 2)

    def test_op_functions_share_one_pipeline_per_op(self):
        x = sample((3, 4))
        np.testing.assert_array_equal(toroid.flip(x, -1), x[:, ::-1])
        n = len(_core._op_pipelines)
        for _ in range(3):
            np.testing.assert_array_equal(toroid.flip(x, -1), x[:, ::-1])
        self.assertEqual(len(_core._op_pipelines), n)


class CompiledFunctionFastPathTest(unittest.TestCase):
    def test_traced_once_per_spec(self):
        traced = []

        @toroid.compile
        def pre(img, scale=True):
            traced.append(img.ndim)
            return toroid.convert(toroid.flip(img, -1), "float32", scale=scale)

        a, b = sample((4, 5)), sample((2, 3, 6))
        for _ in range(3):
            np.testing.assert_allclose(pre(a), a[:, ::-1].astype(np.float32) / 255, rtol=0, atol=1e-7)
            np.testing.assert_allclose(pre(b), b[..., ::-1].astype(np.float32) / 255, rtol=0, atol=1e-7)
        self.assertEqual(traced, [2, 3])  # one trace per spec, later calls found it directly
        self.assertEqual(len(pre._fast), 2)
        np.testing.assert_array_equal(pre(a, scale=False), a[:, ::-1].astype(np.float32))
        self.assertEqual(len(pre._fast), 2)  # calls with extra arguments take the general path
        self.assertEqual(traced, [2, 3, 2])


class OpKeyTest(unittest.TestCase):
    def test_keys_follow_json_equality(self):
        key = _core._op_key
        self.assertEqual(key([{"op": "flip", "dims": [3]}]), key([{"dims": [3], "op": "flip"}]))
        self.assertEqual(key([{"op": "flip", "dims": [3]}]), key([{"op": "flip", "dims": (3,)}]))
        self.assertNotEqual(key([{"op": "convert", "scale": True}]), key([{"op": "convert", "scale": 1}]))
        self.assertNotEqual(key([{"op": "x", "v": 1}]), key([{"op": "x", "v": 1.0}]))
        self.assertNotEqual(key([{"op": "x", "v": 0.0}]), key([{"op": "x", "v": -0.0}]))
        self.assertNotEqual(key([{"op": "x", "v": [1]}]), key([{"op": "x", "v": 1}]))
        # Values JSON prints through str (NumPy scalars) still get a key.
        self.assertEqual(key([{"op": "x", "v": np.int64(2)}]), key([{"op": "x", "v": np.int64(2)}]))


class OpFunctionByArgumentsTest(unittest.TestCase):
    """An op function called again with the same plain arguments runs the handle of its first
    call; arguments that differ, even only in type or in a zero's sign, or inputs of another
    rank, are other calls, and bad arguments fail every time."""

    def test_repeated_calls_give_each_arguments_their_own_result(self):
        x = sample((2, 3, 5, 7), 1)
        for _ in range(3):
            np.testing.assert_array_equal(toroid.flip(x, -1), x[..., ::-1])
            np.testing.assert_array_equal(toroid.flip(x, [-2]), x[..., ::-1, :])
            np.testing.assert_array_equal(toroid.flip(x, (-1, -2)), x[..., ::-1, ::-1])
            np.testing.assert_array_equal(toroid.crop(x, 1, 2, 3, 4), x[..., 1:4, 2:6])
            np.testing.assert_array_equal(toroid.crop(x, top=0, left=1, height=2, width=2), x[..., 0:2, 1:3])
        # flip dims count in the input's own rank: a 3-D input flips its own dims.
        y = sample((3, 5, 7), 2)
        for _ in range(2):
            np.testing.assert_array_equal(toroid.flip(y, 0), y[::-1])
            np.testing.assert_array_equal(toroid.flip(x, 0), x[::-1])

    def test_types_and_signs_are_told_apart(self):
        x = sample((3, 4, 6), 3).astype(np.float32) - 128
        # A bool is not an int: flip(x, True) is an error after flip(x, 1) ran.
        toroid.flip(x, 1)
        for _ in range(2):
            with self.assertRaises(toroid.Error):
                toroid.flip(x, True)
        # mean 0.0 and -0.0 differ where x is -0.0: x - 0.0 keeps the sign, x - (-0.0) does not.
        z = np.full((1, 2, 2), -0.0, np.float32)
        for _ in range(2):
            a = toroid.normalize(z, [0.0], [1.0])
            b = toroid.normalize(z, [-0.0], [1.0])
            self.assertTrue(np.signbit(a).all())
            self.assertFalse(np.signbit(b).any())
        # 2 and 2.0 as a scale factor are two calls with the same result.
        for _ in range(2):
            np.testing.assert_array_equal(toroid.interpolate(x[None], scale_factor=2),
                                          toroid.interpolate(x[None], scale_factor=2.0))

    def test_bad_arguments_and_inputs_fail_every_time(self):
        x = sample((3, 4, 6), 4)
        for _ in range(3):
            with self.assertRaises(toroid.Error):
                toroid.flip(x, 5)
            with self.assertRaises(toroid.Error):
                toroid.normalize(x, [0.5], [0.5])  # normalize takes float images
        f = x.astype(np.float32)
        np.testing.assert_array_equal(toroid.normalize(f, [1.0], [2.0]), (f - 1) / 2)

    def test_threads_share_one_function_safely(self):
        xs = [sample((3, 9, 11), s) for s in range(4)]
        errors = []

        def work(x):
            try:
                for k in range(50):
                    np.testing.assert_array_equal(toroid.flip(x, -1 - (k % 2)), x[..., ::-1, :] if k % 2 else x[..., ::-1])
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(x,)) for x in xs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])



# Runs one pipeline on three sizes in a fresh process with its own JIT cache folder and
# prints the change of the cache counters.
_CHILD = r"""
import json, sys
import numpy as np
import toroid
p = toroid.Pipeline([{"op": "flip", "dims": [-1]}, {"op": "convert", "dtype": "float32", "scale": True}], threads=1)
before = toroid.cache_stats()
for shape in [(3, 8, 8), (3, 16, 12), (3, 5, 7)]:
    x = np.random.default_rng(0).integers(0, 256, size=shape, dtype=np.uint8)
    p(x)
    p(x)
after = toroid.cache_stats()
print(json.dumps({k: after[k] - before[k] for k in after}))
"""


# The classification eval preset with other sizes and constants than presets/ holds, both
# layouts: the build's prebuilt catalogue serves it (no compile) when the library finds it.
_CATALOGUE_CHILD = r"""
import json
import numpy as np
import toroid
ops = [{"op": "resize", "mode": "bicubic", "antialias": True, "smaller_edge": 300},
       {"op": "center_crop", "size": 256},
       {"op": "convert", "dtype": "float32", "scale": True},
       {"op": "normalize", "mean": [0.5, 0.4, 0.3], "std": [0.2, 0.2, 0.2]}]
p = toroid.Pipeline(ops, threads=1)
x = np.random.default_rng(0).integers(0, 256, size=(333, 517, 3), dtype=np.uint8)
a = p(x.transpose(2, 0, 1))                      # channels-last memory
b = p(np.ascontiguousarray(x.transpose(2, 0, 1)))  # contiguous
assert a.shape == b.shape == (3, 256, 256) and np.array_equal(a, b)
print(json.dumps(toroid.cache_stats()))
"""


# A training transform written with toroid.transforms: both outcomes of its random flip (the
# other one built beside the first call) come from the catalogue's training preset.
_TRAIN_CHILD = r"""
import json
import torch
import toroid
from toroid import transforms as T
tf = T.Compose([T.RandomCrop(300, pad_if_needed=True), T.Resize((224, 224), antialias=True),
                T.RandomHorizontalFlip(), T.ToDtype(torch.float32, scale=True),
                T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
x = torch.randint(0, 256, (3, 400, 500), dtype=torch.uint8)
for _ in range(6):
    assert tf(x).shape == (3, 224, 224)
toroid.wait_for_background_builds()
print(json.dumps(toroid.cache_stats()))
"""


# The training recipes (toroid.transforms.recipes) on images and seeds other than those
# scripts/make_presets.py recorded presets/recipes.json from, both layouts: every program,
# the other outcomes built in the background included, comes from the build's catalogue.
_RECIPES_CHILD = r"""
import json
import numpy as np
import torch
import toroid
from toroid.transforms import recipes
rng = np.random.default_rng(12345)
for name in recipes.RECIPES:
    recipe = recipes.build(name)
    for i in range(24):
        h, w = (int(s) for s in rng.integers(100, 800, size=2))
        x = torch.from_numpy(rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)).permute(2, 0, 1)
        torch.manual_seed(7000 + i)
        y = recipe(x if i % 2 else x.contiguous())
        assert y.dtype == torch.float32 and y.shape[0] == 3
toroid.wait_for_background_builds()
print(json.dumps(toroid.cache_stats()))
"""


class CacheStatsTest(unittest.TestCase):
    def run_catalogue_child(self, code):
        folder = os.path.join(os.path.dirname(os.path.realpath(_capi.library_path)), "prebuilt")
        if not os.path.isdir(folder):
            self.skipTest("no prebuilt catalogue beside %s (built without it)" % _capi.library_path)
        with tempfile.TemporaryDirectory() as cache_dir:
            env = dict(os.environ, TOROID_CACHE_DIR=cache_dir)
            env.pop("TOROID_PREBUILT", None)
            env.pop("TOROID_CXXFLAGS", None)
            r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(os.listdir(cache_dir), [])  # nothing compiled into the user's cache
            return json.loads(r.stdout.strip().splitlines()[-1])

    def test_the_builds_catalogue_serves_a_training_transform(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            self.skipTest("PyTorch is not importable")
        s = self.run_catalogue_child(_TRAIN_CHILD)
        self.assertEqual(s["compiles"], 0, s)
        self.assertEqual(s["prebuilt_hits"], 2, s)

    def test_the_builds_catalogue_serves_the_training_recipes(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            self.skipTest("PyTorch is not importable")
        s = self.run_catalogue_child(_RECIPES_CHILD)
        self.assertEqual(s["compiles"], 0, s)
        self.assertGreater(s["prebuilt_hits"], 20, s)

    def test_the_builds_catalogue_serves_the_eval_preset(self):
        s = self.run_catalogue_child(_CATALOGUE_CHILD)
        self.assertEqual(s["compiles"], 0, s)
        self.assertEqual(s["prebuilt_hits"], 2, s)


    def test_counters_are_a_dict_of_counts(self):
        s = toroid.cache_stats()
        self.assertEqual(set(s) - {"background_compiles"},
                         {"prepares", "compiles", "disk_hits", "memory_hits", "binds", "prebuilt_hits"})
        for v in s.values():
            self.assertIsInstance(v, int)
            self.assertGreaterEqual(v, 0)

    def run_child(self, cache_dir):
        env = dict(os.environ, TOROID_CACHE_DIR=cache_dir)
        r = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout.strip().splitlines()[-1])

    def test_three_sizes_compile_once(self):
        with tempfile.TemporaryDirectory() as cache_dir:
            first = self.run_child(cache_dir)
            # One program for the structure, one bound instance per size; the second call
            # on each size prepares nothing.
            # (background_compiles: the full build that may follow a quick one, counted in
            # `compiles` too when it finished before the counters were read)
            self.assertEqual(first["compiles"] - first.get("background_compiles", 0), 1, first)
            self.assertEqual(first["disk_hits"], 0, first)
            self.assertEqual(first["binds"], 3, first)
            self.assertEqual(first["prepares"], 3, first)
            # A new process finds the program on disk instead of compiling it.
            second = self.run_child(cache_dir)
            self.assertEqual(second["compiles"] - second.get("background_compiles", 0), 0, second)
            self.assertEqual(second["disk_hits"], 1, second)
            self.assertEqual(second["binds"], 3, second)


class RunDataTest(unittest.TestCase):
    def compile_flip(self, shape):
        p = _core.PipelineHandle(FLIP_W)
        x = sample(shape)
        fn = p.function(_core.adapt(x), "compiled", 1)
        return p, fn, x

    def test_runs_and_checks_pointers(self):
        if not _capi.has_run_data:
            self.skipTest("library without toroid_run_data")
        p, fn, x = self.compile_flip((4, 5))
        out = np.zeros((4, 5), np.uint8)
        ip, op = x.ctypes.data, out.ctypes.data
        self.assertEqual(_capi.lib.toroid_run_data(fn._handle, ip, op), _capi.OK)
        np.testing.assert_array_equal(out, x[:, ::-1])
        status = _capi.lib.toroid_run_data(fn._handle, None, op)
        self.assertEqual(status, _capi.INVALID_ARGUMENT)
        self.assertIn("input has a NULL data pointer", _capi.lib.toroid_last_error().decode())
        status = _capi.lib.toroid_run_data(fn._handle, ip, ip + 3)
        self.assertEqual(status, _capi.INVALID_ARGUMENT)
        self.assertIn("overlaps the input", _capi.lib.toroid_last_error().decode())
        self.assertEqual(_capi.lib.toroid_run_data(None, ip, op), _capi.INVALID_ARGUMENT)

    def test_run_with_compiled_descs_and_with_other_strides(self):
        # toroid_run on exactly the compiled descs (its fast path) and on an output of other
        # strides (the general path) write the same values.
        p, fn, x = self.compile_flip((4, 5))
        dense = np.zeros((4, 5), np.uint8)
        t_in = _capi.Tensor(x.ctypes.data, fn.input_desc)
        _capi.check(_capi.lib.toroid_run(fn._handle, ctypes.byref(t_in),
                                         ctypes.byref(_capi.Tensor(dense.ctypes.data, fn.output_desc))))
        wide = np.zeros((5, 4), np.uint8).T  # column-major (4, 5)
        d = _core.make_desc(_capi.UINT8, (4, 5), (1, 4))
        _capi.check(_capi.lib.toroid_run(fn._handle, ctypes.byref(t_in),
                                         ctypes.byref(_capi.Tensor(wide.ctypes.data, d))))
        np.testing.assert_array_equal(dense, x[:, ::-1])
        np.testing.assert_array_equal(wide, x[:, ::-1])


if __name__ == "__main__":
    unittest.main()
