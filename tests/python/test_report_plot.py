"""Tests of bench/report.py --plot: from a small result file it writes a PNG of the
speed-up bars (signature, size, and the colors of each peer's bars present)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(ROOT, "bench", "report.py")

try:
    import matplotlib  # noqa: F401
except ImportError:  # pragma: no cover - python3-matplotlib is a test dependency
    matplotlib = None


def record(case, engine, us):
    return {"case": case, "title": case.split(" (")[0], "device": "cpu", "engine": engine, "threads": 1,
            "median_us": us, "iqr_us": us * 0.05, "runs": 10, "gbps": 1.0}


@unittest.skipIf(matplotlib is None, "matplotlib (python3-matplotlib) is not installed")
class ReportPlotTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        cases = ["interpolate bilinear AA (1, 3, 345, 456) -> (270, 270) uint8 CL",
                 "interpolate nearest (1, 3, 500, 400) -> (256, 256) float32 CF",
                 "hflip (1, 3, 224, 224) -> (224, 224) uint8 CL"]
        records = []
        for i, c in enumerate(cases):
            records += [record(c, "toroid", 100.0), record(c, "torch", 50.0 + 100 * i),
                        record(c, "opencv", 300.0 / (i + 1))]
        records.append(dict(record(cases[0], "pillow", 0), error="failed"))  # error records are left out
        self.results = os.path.join(self.tmp.name, "peers.json")
        with open(self.results, "w") as f:
            json.dump({"machine": {"cpu": "test", "cores": 1, "compiler": "none"}, "suite": "quick",
                       "records": records}, f)

    def report(self, *args):
        return subprocess.run([sys.executable, REPORT, self.results] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True)

    def test_writes_png(self):
        png = os.path.join(self.tmp.name, "plot.png")
        proc = self.report("--plot", png, "--title", "test")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("geometric mean", proc.stdout)  # the table is printed as well
        with open(png, "rb") as f:
            data = f.read()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
        self.assertGreater(len(data), 5000)
        try:
            from PIL import Image
        except ImportError:
            return
        with Image.open(png) as im:
            self.assertGreater(im.width, 500)
            self.assertGreater(im.height, 200)
            colors = {c for _, c in im.convert("RGB").getcolors(1 << 20)}

        def near(rgb):
            return any(sum(abs(a - b) for a, b in zip(rgb, c)) < 24 for c in colors)
        self.assertTrue(near((0x4c, 0x72, 0xb0)), "no torch-colored bars")
        self.assertTrue(near((0x55, 0xa8, 0x68)), "no opencv-colored bars")
        self.assertFalse(near((0xc4, 0x4e, 0x52)), "pillow has only a failed record: no bars")

    def test_nothing_to_plot_fails(self):
        png = os.path.join(self.tmp.name, "plot.png")
        with open(self.results, "w") as f:
            json.dump({"machine": {}, "records": [record("a (1)", "toroid", 1.0)]}, f)
        proc = self.report("--plot", png)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("nothing to plot", proc.stderr)
        self.assertFalse(os.path.exists(png))


if __name__ == "__main__":
    unittest.main()
