"""Benchmark helpers: side-by-side timings and a ratio table at the end of the run.

Run with ``python -m pytest benchmarks/ --benchmark-only -q`` (add ``-k linear`` etc.).
Every benchmark that calls ``record(group, name, benchmark)`` contributes its best
time to the ratio table printed after pytest-benchmark's own tables; ratios are
computed between entries of the same group, so both sides ran in this process,
on the same data, one after the other.
"""

import os
from pathlib import Path

import pytest

_RESULTS = {}
SHARED_DATA = Path(os.environ.get("REFSVM_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


@pytest.fixture
def record():
    def _record(group, name, benchmark, **extra):
        stats = benchmark.stats.stats
        _RESULTS.setdefault(group, {})[name] = {"min": stats.min, "median": stats.median, **extra}

    return _record


def pytest_terminal_summary(terminalreporter):
    if not _RESULTS:
        return
    tr = terminalreporter
    tr.section("refsvm ratios (best time of each side, same process, same data)")
    for group, entries in sorted(_RESULTS.items()):
        base_name, base = min(entries.items(), key=lambda kv: kv[1]["min"])
        tr.write_line(f"[{group}]")
        for name, e in sorted(entries.items(), key=lambda kv: kv[1]["min"]):
            extra = "  ".join(f"{k}={v}" for k, v in e.items() if k not in ("min", "median"))
            tr.write_line(
                f"  {name:<42} best {e['min'] * 1e3:10.3f} ms   x{e['min'] / base['min']:8.2f} "
                f"vs {base_name}  {extra}"
            )
