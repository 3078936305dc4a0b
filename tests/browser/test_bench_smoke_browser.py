"""The benchmarks that drive a server and Chromium, each in its smoke mode (``python -m bench.smoke server``: one
shared server for the scripts that accept ``--url``; run.py's cold start, rows 4 and 8, and bench/cold_ab.py start
their own), so that a page change that breaks a benchmark fails CI: each must print its rows, at any speed. The
model benchmarks and the table's own checks: tests/integration/test_bench_smoke.py."""
from __future__ import annotations

import pytest
from chromium import need_chromium

from bench import smoke


@pytest.mark.slow
@pytest.mark.load   # ~1.5-2 min of a quiet machine: with the heavy tier, alone after the rest (dev.sh test)
def test_every_benchmark_with_a_server_prints_its_rows():
    need_chromium()
    found = smoke.check("server", timeout=900)
    assert not found, "\n".join(found)
