#!/usr/bin/env python3
"""Per-call host overhead: a 1x1 uint8 image (flip along W, 1 thread) through toroid.Pipeline,
the op function toroid.flip, toroid.transforms.HorizontalFlip, the C API through ctypes and
from C++ (bench/overhead_c.cpp, built here when a C++ compiler is found), and PyTorch
eager's torch.flip when torch is importable. The cases run interleaved, round after round;
each row is the median per-call time over the rounds.

With --device cuda (a GPU and PyTorch's CUDA build needed) the image is a 1x1 CUDA tensor:
each case is timed both as calls enqueued back to back (then one synchronize: the host's
cost per call, as long as it exceeds the kernel's) and as a call followed by
torch.cuda.synchronize() (what a caller who waits sees), beside torch.flip and an empty
kernel launched by PyTorch (torch.cuda._sleep(0)).

    /usr/bin/python3 bench/overhead.py [--rounds 31] [--calls 20000] [--build build] [--device cuda]"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

import benchenv

benchenv.system_python("overhead", ["numpy"], "python3-numpy")
import numpy as np  # noqa: E402

ROOT = benchenv.ROOT


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=31, help="rounds of every case (the median is printed)")
    ap.add_argument("--calls", type=int, default=20000, help="calls per case per round")
    ap.add_argument("--build", default=None, help="build folder holding libtoroid_c.so (default: build, build-test)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where the image lives (default cpu)")
    return ap.parse_args()


def per_call_us(f, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        f()
    return (time.perf_counter() - t0) / calls * 1e6


def cuda_main(args, toroid, _capi, _core, torch):
    """The --device cuda table (see the module's docstring)."""
    if torch is None or not torch.cuda.is_available():
        sys.exit("overhead: error: --device cuda needs PyTorch with a CUDA device")
    x = torch.zeros((1, 1), dtype=torch.uint8, device="cuda")
    pipe = toroid.Pipeline([{"op": "flip", "dims": [-1]}])
    fn = pipe._handle.function(_core.adapt(x), None, None)
    out = torch.empty_like(x)
    ip, op = x.data_ptr(), out.data_ptr()
    stream = torch.cuda.current_stream().cuda_stream
    run = _capi.lib.toroid_run_data_on_stream
    handle = fn._handle
    sync = torch.cuda.synchronize
    enqueue = [("toroid.Pipeline, torch CUDA", lambda: pipe(x)),
               ("toroid.flip (op function), torch CUDA", lambda: toroid.flip(x, -1)),
               ("C API toroid_run_data_on_stream via ctypes (no allocation)", lambda: run(handle, ip, op, stream)),
               ("torch.flip (PyTorch eager)", lambda: torch.flip(x, [-1])),
               ("empty kernel launched by PyTorch (torch.cuda._sleep(0))", lambda: torch.cuda._sleep(0))]
    cases = [(name + ", enqueue", f) for name, f in enqueue]
    for name, f in enqueue:
        if "ctypes" not in name:
            cases.append((name + ", call + synchronize", (lambda g: lambda: (g(), sync()))(f)))
    for _, f in cases:  # warm: compile, fill the caches
        f()
    sync()
    calls = max(1, args.calls // 10)
    times = {name: [] for name, _ in cases}
    for _ in range(args.rounds):
        for name, f in cases:
            t0 = time.perf_counter()
            for _ in range(calls):
                f()
            sync()
            times[name].append((time.perf_counter() - t0) / calls * 1e6)
    print("per-call time of a 1x1 uint8 CUDA flip; median of %d rounds of %d calls (%s; %s)" %
          (args.rounds, calls, torch.cuda.get_device_name(), _capi.library_path))
    print("%-80s %10s %10s" % ("case", "median us", "min us"))
    for name, v in times.items():
        print("%-80s %10.2f %10.2f" % (name, statistics.median(v), min(v)))


def main():
    args = parse_args()
    library = benchenv.find_library("overhead", args.build)
    os.environ["TOROID_LIBRARY"] = library
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import toroid
    from toroid import _capi, _core
    try:
        import torch
    except ImportError:
        torch = None
    if args.device == "cuda":
        return cuda_main(args, toroid, _capi, _core, torch)

    toroid.set_num_threads(1)
    x = np.zeros((1, 1), np.uint8)
    pipe = toroid.Pipeline([{"op": "flip", "dims": [-1]}], threads=1)
    hflip = toroid.transforms.HorizontalFlip()
    cases = [("toroid.Pipeline, numpy", lambda: pipe(x)),
             ("toroid.flip (op function), numpy", lambda: toroid.flip(x, -1)),
             ("toroid.transforms.HorizontalFlip, numpy", lambda: hflip(x))]
    # The C API through ctypes, on the function the Pipeline compiled: the floor of any
    # ctypes binding (one foreign call, no allocation).
    fn = pipe._handle.function(_core.adapt(x), None, 1)
    out = np.empty((1, 1), np.uint8)
    ip, op = x.ctypes.data, out.ctypes.data
    if _capi.has_run_data:
        run_data, handle = _capi.lib.toroid_run_data, fn._handle
        cases.append(("C API toroid_run_data via ctypes (no allocation)", lambda: run_data(handle, ip, op)))
    if torch is not None:
        torch.set_num_threads(1)
        t = torch.zeros((1, 1), dtype=torch.uint8)
        cases.append(("toroid.Pipeline, torch", lambda: pipe(t)))
        cases.append(("torch.flip (PyTorch eager), torch", lambda: torch.flip(t, [-1])))
    for _, f in cases:  # warm: compile, fill the caches
        f()
    toroid.wait_for_background_builds()  # time the full build a long run uses
    times = {name: [] for name, _ in cases}
    for _ in range(args.rounds):
        for name, f in cases:
            times[name].append(per_call_us(f, args.calls))

    c_bench = benchenv.build_c_case("overhead", "overhead_c.cpp", library)
    c_rows = []
    if c_bench:
        r = subprocess.run([c_bench, str(args.rounds), str(args.calls)], capture_output=True, text=True)
        if r.returncode == 0:
            pairs = [tuple(float(v) for v in line.split()) for line in r.stdout.split("\n") if line.strip()]
            c_rows = [("C API toroid_run_data from C++", [p[0] for p in pairs]),
                      ("C API toroid_run from C++", [p[1] for p in pairs])]
        else:
            print("overhead: the C++ case failed:\n" + r.stderr, file=sys.stderr)
        shutil.rmtree(os.path.dirname(c_bench), ignore_errors=True)

    print("per-call time of a 1x1 uint8 flip, 1 thread; median of %d rounds of %d calls (%s)" %
          (args.rounds, args.calls, library))
    print("%-52s %10s %10s" % ("case", "median us", "min us"))
    for name, v in list(times.items()) + c_rows:
        print("%-52s %10.2f %10.2f" % (name, statistics.median(v), min(v)))
    if torch is None:
        print("(torch is not importable: no PyTorch rows)")


if __name__ == "__main__":
    main()
