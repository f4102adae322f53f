"""A 224² and 256² uint8 horizontal flip timed alone in one process, toroid (NumPy and torch
inputs) against torch.flip, alone and interleaved, with the minor page faults per call: a
check of the flip rows of bench/peers.py, whose process also runs OpenCV and Pillow between
the engines' calls (docs/performance.md, section 9).

    PYTHONPATH=python python3 bench/flip_alone.py
"""
import resource
import time

import numpy as np
import torch

import toroid

torch.set_num_threads(1)


def run(label, f, n=2000):
    for _ in range(50): f()
    r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt; t0 = time.perf_counter()
    for _ in range(n): f()
    dt = (time.perf_counter() - t0) / n * 1e6; r1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    print(f"{label:40s} {dt:7.1f} us  {(r1 - r0) / n:6.1f} faults/call")
for s in (224, 256):
    x = np.random.randint(0, 255, (1, 3, s, s), dtype=np.uint8); t = torch.from_numpy(x.copy())
    p = toroid.Pipeline([{"op": "flip", "dims": [-1]}], engine="compiled", threads=1); p(x); toroid.wait_for_background_builds()
    run(f"toroid {s} numpy alone", lambda: p(x))
    run(f"torch {s} alone", lambda: torch.flip(t, [-1]))
    def both(): p(x); torch.flip(t, [-1])
    run(f"toroid+torch {s} interleaved", both)
    run(f"toroid {s} torch tensor", lambda: p(t))
