#!/usr/bin/env python3
"""What a functional call costs when its values are new (as a random transform's draws make
every call) against one with the same values: adjust_brightness on a (3, 176, 176)
channels-last uint8 image, its pieces timed by wrapping toroid's internal steps (run_ops' once
path for a new op list; the handle path, which a build without it takes), then the
library's bind alone.

    PYTHONPATH=python python3 bench/call_cost.py [--n 20000]"""

import argparse
import ctypes
import functools
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000)
    a = ap.parse_args()
    import torch
    import toroid
    from toroid import _capi, _core
    import toroid.transforms.functional as F
    toroid.set_num_threads(1)
    x = torch.randint(0, 256, (176, 176, 3), dtype=torch.uint8).permute(2, 0, 1)
    n = a.n
    spent = {}

    def wrap(owner, name, label):
        f = getattr(owner, name)

        @functools.wraps(f)
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return f(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - t0
        setattr(owner, name, timed)
        return f

    F.adjust_brightness(x, 1.5)
    for _ in range(3):
        F.adjust_brightness(x, 1.5)
    t0 = time.perf_counter()
    for _ in range(n):
        F.adjust_brightness(x, 1.5)
    same = (time.perf_counter() - t0) / n
    originals = [(_core, "_run_once", wrap(_core, "_run_once", "run once (parse, bind, run)")),
                 (_core, "cached_pipeline", wrap(_core, "cached_pipeline", "handle path: handle found or made")),
                 (_core.PipelineHandle, "function", wrap(_core.PipelineHandle, "function", "handle path: bound"))]
    try:
        t0 = time.perf_counter()
        for i in range(n):
            F.adjust_brightness(x, 1.0 + (i + 1) * 1e-6)
        new = (time.perf_counter() - t0) / n
    finally:
        for owner, name, f in originals:
            setattr(owner, name, f)
    print("adjust_brightness, (3, 176, 176) channels-last uint8, 1 thread: same values %.1f us, new values %.1f us"
          % (same * 1e6, new * 1e6))
    for label in ("run once (parse, bind, run)", "handle path: handle found or made", "handle path: bound"):
        print("  %-34s %.1f us" % (label, spent.get(label, 0.0) / n * 1e6))
    # The library's bind alone: toroid_compile of new op lists whose program is in memory.
    handles = [_core.PipelineHandle([{"op": "adjust_brightness", "factor": 3.0 + i * 1e-6}], checked=True)
               for i in range(n)]
    arg = _core.adapt(x, pointer=False)
    desc = arg.desc()
    options = _core._compile_options("compiled", 1)
    fns = []
    t0 = time.perf_counter()
    for h in handles:
        fn = ctypes.c_void_p()
        _capi.check(_capi.lib.toroid_compile(h._handle, ctypes.byref(desc), ctypes.byref(options), ctypes.byref(fn)))
        fns.append(fn)
    bind = (time.perf_counter() - t0) / n
    for fn in fns:
        _capi.lib.toroid_function_free(fn)
    print("  toroid_compile alone (a bind)    %.1f us" % (bind * 1e6))


if __name__ == "__main__":
    main()
