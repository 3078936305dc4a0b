"""The benchmarks cannot rot: every script of bench/ has a smoke mode (``--smoke``: tiny counts, its rows printed,
its numbers meaningless), and those that time the models and pages in their own process run here, in one process
(``python -m bench.smoke models``), so that a change that breaks a benchmark fails CI. The ones that drive a
server and Chromium run in tests/browser/test_bench_smoke_browser.py. Nothing here asserts a speed."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bench import smoke

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.load   # 35 s of a worker: with the heavy tier, after the rest, so the suite keeps its 12 minutes
def test_every_benchmark_of_the_models_prints_its_rows():
    found = smoke.check("models", timeout=600)
    assert not found, "\n".join(found)


def test_every_benchmark_script_has_a_smoke_run():
    """A new script of bench/ (one that runs as a program) is in bench/smoke.py's table, with the rows it must
    print, and every entry of the table names a script that exists."""
    programs = set()
    for path in (ROOT / "bench").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.If) and "__main__" in ast.unparse(n.test) for n in tree.body):
            programs.add(f"bench.{path.stem}")
    programs.discard("bench.smoke")
    assert programs == {module for module, _entry, _args in smoke.SCRIPTS.values()}
    assert set(smoke.ROWS) == set(smoke.SCRIPTS) == {n for group in smoke.GROUPS.values() for n in group}


def test_the_check_finds_a_missing_row_a_failure_and_a_script_that_did_not_run():
    ok = ("### effects\nS1 all-MiniLM-L6-v2 sweep: wall 0.5 s\nV1 all-MiniLM-L6-v2 value-weighted 21 ms\n"
          "### effects ok\n")
    assert not [p for p in smoke.problems("models", ok) if p.startswith("effects")]
    short = "### effects\nS1 all-MiniLM-L6-v2 sweep: wall 0.5 s\n### effects ok in 1 s\n"
    assert [p for p in smoke.problems("models", short) if p.startswith("effects")] == [
        "effects: no row matching '^V1 all-MiniLM-L6-v2 value-weighted \\\\d'"]
    failed = ok.replace("### effects ok", "### effects FAILED")
    assert "effects: failed" in smoke.problems("models", failed)
    assert "floors: did not run" in smoke.problems("models", ok)
