"""Tests of the one list of benchmark cases: `toroid bench --list --json` parses, covers
every suite, each case's pipeline is accepted by toroid with the listed output shape, and
bench/peers.py maps every case to PyTorch calls that compute what toroid computes."""

import importlib.util
import json
import os
import subprocess
import sys
import unittest

import numpy as np

import toroid
from toroid import _core

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def toroid_binary():
    path = os.environ.get("TOROID_BIN") or os.path.join(ROOT, "build", "toroid")
    if not os.path.isfile(path):
        raise unittest.SkipTest("the toroid command is not built (set TOROID_BIN; CTest does)")
    return path


def run_list(*extra):
    proc = subprocess.run([toroid_binary(), "bench", "--list"] + list(extra), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    return proc


def empty_input(case):
    """An uninitialized array of the case's input spec (pages are never touched)."""
    dtype = np.uint8 if case["input"]["dtype"] == "uint8" else np.float32
    n, c, h, w = case["input"]["shape"]
    if case["input"]["layout"] == "channels_last":
        return np.empty((n, h, w, c), dtype=dtype).transpose(0, 3, 1, 2)
    return np.empty((n, c, h, w), dtype=dtype)


def load_peers():
    # As when run as a script: its own folder on the path (bench/benchenv.py).
    bench = os.path.join(ROOT, "bench")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    spec = importlib.util.spec_from_file_location("peers", os.path.join(ROOT, "bench", "peers.py"))
    peers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peers)
    return peers


class BenchListTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        proc = run_list("--json")
        if proc.returncode != 0:
            raise AssertionError("toroid bench --list --json failed: " + proc.stderr)
        cls.doc = json.loads(proc.stdout)
        cls.suites = {s["name"]: s["cases"] for s in cls.doc["suites"]}

    def test_covers_every_suite(self):
        # The plain-text listing names each case's suite independently of the JSON.
        proc = run_list()
        self.assertEqual(proc.returncode, 0, proc.stderr)
        text_suites = {}
        for line in proc.stdout.splitlines():
            suite, device, label = line.split("\t")
            text_suites.setdefault(suite, []).append((device, label))
        self.assertEqual(sorted(self.suites), sorted(text_suites))
        self.assertIn("seeds", self.suites)
        self.assertIn("quick", self.suites)
        for name, cases in self.suites.items():
            self.assertTrue(cases, name)
            self.assertEqual([(c["device"], c["label"]) for c in cases], text_suites[name])
            # --suite NAME lists exactly that suite's cases.
            one = run_list("--json", "--suite", name)
            self.assertEqual(one.returncode, 0, one.stderr)
            self.assertEqual(json.loads(one.stdout)["suites"], [{"name": name, "cases": cases}])
        seeds = {c["label"] for c in self.suites["seeds"]}
        self.assertTrue({c["label"] for c in self.suites["quick"]} <= seeds)

    def test_bad_suite_and_json_file_are_usage_errors(self):
        proc = run_list("--json", "--suite", "nope")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("toroid: error: unknown benchmark suite 'nope'", proc.stderr)
        self.assertEqual(proc.stdout, "")
        self.assertEqual(run_list("--json", "out.json").returncode, 2)

    def test_fields_and_pipelines_accepted(self):
        for name, cases in self.suites.items():
            for case in cases:
                with self.subTest(suite=name, case=case["label"]):
                    self.assertTrue(case["label"].startswith(case["op"]) or case["row"] == case["label"])
                    self.assertTrue(case["label"].endswith(case["row"]))
                    self.assertIn(case["device"], ("cpu", "cuda"))
                    self.assertIn(case["input"]["dtype"], ("uint8", "float32"))
                    self.assertIn(case["input"]["layout"], ("contiguous", "channels_last"))
                    self.assertEqual(len(case["input"]["shape"]), 4)
                    p = toroid.Pipeline(case["pipeline"], engine="reference", threads=1)
                    self.assertEqual(json.loads(p.to_json()), case["pipeline"])
                    # The reference engine plans the input spec without running: its output
                    # description is the listed output.
                    fn = p._handle.function(_core.adapt(empty_input(case)), "reference", 1)
                    shape, _ = fn.output_desc.dims()
                    self.assertEqual(list(shape), case["output"]["shape"])
                    self.assertEqual(_core._DTYPE_NAMES[fn.output_desc.dtype], case["output"]["dtype"])
                    item = 1 if case["input"]["dtype"] == "uint8" else 4
                    out_item = 1 if case["output"]["dtype"] == "uint8" else 4
                    self.assertEqual(case["bytes"], int(np.prod(case["input"]["shape"])) * item +
                                     int(np.prod(case["output"]["shape"])) * out_item)


class PeersMappingTest(unittest.TestCase):
    """bench/peers.py builds its cases from the list and maps each to PyTorch."""

    @classmethod
    def setUpClass(cls):
        cls.peers = load_peers()
        if cls.peers.torch is None:
            raise unittest.SkipTest("PyTorch (python3-torch) is not installed")
        cls.suites = cls.peers.list_suites(toroid_binary())

    def test_every_case_maps_to_torch(self):
        engine = self.peers.TorchEngine("cpu")
        for name, cases in self.suites.items():
            for case in cases:
                with self.subTest(suite=name, case=case.name):
                    self.assertTrue(callable(engine.function(case)))

    def test_quick_rows_compute_what_toroid_computes(self):
        peers, torch = self.peers, self.peers.torch
        engine = peers.TorchEngine("cpu")
        checked = 0
        for case in self.suites["quick"]:
            x = peers.make_input(case)
            want = toroid.Pipeline(case.pipeline, engine="reference")(x)
            self.assertEqual(want.shape, case.out_shape)
            try:
                got = engine.function(case)(torch.from_numpy(x)).numpy()
            except RuntimeError as e:  # PyTorch 1.13 has no uint8 antialiased resize
                self.assertIn("not implemented for 'Byte'", str(e))
                continue
            with self.subTest(case=case.name):
                if case.dtype == "uint8":
                    np.testing.assert_array_equal(got, want)
                else:
                    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)
                checked += 1
        self.assertGreaterEqual(checked, 3)

    def test_select_groups_tables(self):
        cases = self.peers.select_cases(self.suites["seeds"], "cpu", "")
        self.assertTrue(cases)
        self.assertTrue(all(c.device == "cpu" for c in cases))
        titles = [c.title for c in cases]
        # Each table's rows are adjacent: a title never comes back after another one.
        seen = []
        for t in titles:
            if not seen or seen[-1] != t:
                self.assertNotIn(t, seen)
                seen.append(t)


if __name__ == "__main__":
    unittest.main()
