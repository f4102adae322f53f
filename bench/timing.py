"""Timing shared by the bench scripts that time one callable at a time."""

import statistics
import time


def median_us(f, min_time, rounds=2):
    """The lowest of `rounds` medians (µs) of f's calls, each over at least `min_time` seconds
    and 5 calls, after two warm-up calls."""
    f()
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
