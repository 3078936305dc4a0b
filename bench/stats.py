"""Small numbers helpers for the benchmark: medians, spreads and a synced clock."""
from __future__ import annotations

import statistics
import time


def median(xs) -> float:
    return float(statistics.median(xs)) if xs else float("nan")


def quantile(xs, q: float) -> float:
    """Linear-interpolated quantile (q in [0, 1]) of a small sample."""
    s = sorted(xs)
    if not s:
        return float("nan")
    pos = (len(s) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def spread(xs) -> tuple[float, float]:
    """Interquartile range (25th–75th percentile): the spread reported next to each median."""
    return quantile(xs, 0.25), quantile(xs, 0.75)


def sync(device: str) -> None:
    if str(device).startswith("cuda"):
        import torch
        torch.cuda.synchronize()


def timed(fn, device: str = "cpu") -> float:
    sync(device)
    start = time.perf_counter()
    fn()
    sync(device)
    return time.perf_counter() - start


def timed_both(fn, device: str = "cpu") -> tuple[float, float]:
    """Wall seconds and this process's CPU seconds (all threads) for ``fn()``; CPU time barely moves when other
    programs share the cores, so it tells a slow run from a crowded machine."""
    sync(device)
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    sync(device)
    return time.perf_counter() - start, time.process_time() - cpu
