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


def timed(fn, repeat: int = 1, warm: bool = False, device: str = "cpu") -> tuple[float, float]:
    """Median wall seconds and median CPU seconds of this process (all threads) over ``repeat`` calls of ``fn()``,
    after one untimed warm-up call when ``warm``; on CUDA the device is synchronised around each call. CPU time
    barely moves when other programs share the cores, so it tells a slow run from a crowded machine. The one timer
    of bench/: a single call is ``timed(fn)``."""
    if warm:
        fn()
    walls, cpus = [], []
    for _ in range(repeat):
        sync(device)
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        sync(device)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return median(walls), median(cpus)
