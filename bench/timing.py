"""Timing shared by the bench scripts that time one callable at a time."""

import statistics
import time

try:
    import toroid
except ImportError:  # the timing itself needs nothing of toroid
    toroid = None


def steady():
    """Waits until every full build started in the background is loaded, so what follows times
    the code a long-running caller runs (a first call returns with a quick build: docs/architecture.md)."""
    if toroid is not None and hasattr(toroid, "wait_for_background_builds"):
        toroid.wait_for_background_builds()


def median_us(f, min_time, rounds=2):
    """The lowest of `rounds` medians (µs) of f's calls, each over at least `min_time` seconds
    and 5 calls, after two warm-up calls and the full builds they started."""
    f()
    steady()
    f()
    best = None
    for _ in range(rounds):
        times = []
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < min_time or len(times) < 5:
            a = time.perf_counter()
            f()
            times.append(time.perf_counter() - a)
        m = statistics.median(times) * 1e6
        best = m if best is None else min(best, m)
    return best
