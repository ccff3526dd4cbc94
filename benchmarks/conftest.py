"""Benchmark helpers: side-by-side timings, a ratio table, ratio floors, results as data.

    python -m pytest benchmarks --benchmark-only -q                  # everything, full size
    python -m pytest benchmarks --benchmark-only -q --quick          # small data, < 2 minutes
    python -m pytest benchmarks --benchmark-only -q --quick --check-floors
    python -m pytest benchmarks ... --ratios-csv results.csv         # append the ratios

Every benchmark that calls ``record(group, name, benchmark, **extra)`` contributes its best
time (and its ``extra`` numbers) to the ratio table printed after pytest-benchmark's own
tables; ratios are computed between entries of the same group, so both sides ran in this
process, on the same data, one after the other.

Ratio floors (``benchmarks/floors.toml``, format described at its top) turn those ratios
into regression checks that hold on any machine: twin vs reference, ours vs
scikit-learn/LIBSVM, kernel evaluations per example.  The floor table is printed whenever a
floor's group was measured; ``--check-floors`` makes the run fail when a ratio fell below
its floor (or a value rose above its ceiling).

Options (this conftest):

``--quick``
    Small data (also ``REFSVM_BENCH_QUICK=1``).  Benchmark modules read it with
    ``from conftest import quick`` and ``quick()`` (or ``sized(full, small)``).
``--check-floors``
    Fail when a measured ratio is below its floor in ``--floors`` (default
    ``benchmarks/floors.toml``).
``--ratios-csv PATH``
    Append this run's rows to a CSV (created with a header when missing): one ``time`` row
    per recorded entry (best and median seconds, extras as JSON) and one ``ratio`` row per
    measured floor.  Long format, one run after another: plot a history with pandas
    (docs/benchmarks.rst).

The garbage collector is off while a benchmark is timed (pytest-benchmark's
``--benchmark-disable-gc``, set here for every run).

pytest-benchmark's own options still apply (``--benchmark-json``, ``--benchmark-autosave``,
``--benchmark-compare``, ``--benchmark-compare-fail=mean:10%``); the ``extra`` numbers
given to ``record`` are also stored in its JSON (``extra_info``).
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import math
import os
import platform
import subprocess
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

HERE = Path(__file__).resolve().parent
SHARED_DATA = Path(os.environ.get("REFSVM_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
QUICK_ENV = "REFSVM_BENCH_QUICK"

_RESULTS = {}
_FLOOR_ROWS = []  # filled at session end: one dict per floor whose group was measured


def quick():
    """True in quick mode (``--quick`` or ``REFSVM_BENCH_QUICK=1``): use small data."""
    return os.environ.get(QUICK_ENV, "") not in ("", "0")


def sized(full, small):
    """``small`` in quick mode, else ``full``."""
    return small if quick() else full


# ----------------------------------------------------------------------------- options
def pytest_addoption(parser):
    group = parser.getgroup("refsvm benchmarks")
    group.addoption("--quick", action="store_true", default=False,
                    help="small data (REFSVM_BENCH_QUICK=1): the whole suite in < 2 minutes")
    group.addoption("--check-floors", action="store_true", default=False,
                    help="fail when a ratio falls below its floor in benchmarks/floors.toml")
    group.addoption("--floors", default=str(HERE / "floors.toml"), metavar="PATH",
                    help="the floors file (default: benchmarks/floors.toml)")
    group.addoption("--ratios-csv", default=None, metavar="PATH",
                    help="append the recorded times and the floor ratios to a CSV")


def pytest_configure(config):
    if config.getoption("--quick", default=False):
        os.environ[QUICK_ENV] = "1"
    # the garbage collector off while a benchmark is timed (pytest-benchmark's
    # --benchmark-disable-gc), always: most benchmarks are one round, and a full
    # collection of a process that ran the other modules first (70 ms) landed inside the
    # 18 ms of AltPOKER on 1,000 a9a rows and put its floor at 0.3 instead of 1.6
    if hasattr(config.option, "benchmark_disable_gc"):
        config.option.benchmark_disable_gc = True


# ----------------------------------------------------------------------------- recording
@pytest.fixture
def record():
    """``record(group, name, benchmark, **extra)``: the best and median time of
    ``benchmark`` under ``name`` in ``group``; ``extra`` numbers go beside them (and into
    pytest-benchmark's ``extra_info``)."""

    def _record(group, name, benchmark, **extra):
        stats = benchmark.stats.stats
        _RESULTS.setdefault(group, {})[name] = {"min": stats.min, "median": stats.median,
                                                **extra}
        try:
            benchmark.extra_info.update({k: _jsonable(v) for k, v in extra.items()})
        except AttributeError:  # benchmarks disabled
            pass

    return _record


def _jsonable(v):
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    try:
        return float(v)
    except (TypeError, ValueError):
        return str(v)


def _number(v):
    """A recorded extra as a float ("1.2e+06", "12.5%", 3), or None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return float(str(v).split()[0].rstrip("%"))
    except (ValueError, IndexError):
        return None


# ----------------------------------------------------------------------------- floors
def load_floors(path):
    """The floors of ``path`` as a list of dicts with ``key`` = "family.measure"."""
    path = Path(path)
    if tomllib is None or not path.exists():
        return []
    with open(path, "rb") as fh:
        doc = tomllib.load(fh)
    out = []
    for family, measures in doc.items():
        if not isinstance(measures, dict):
            continue
        for measure, spec in measures.items():
            if not isinstance(spec, dict):
                continue
            problems = []
            if "group" not in spec or "ours" not in spec:
                problems.append("needs group and ours")
            if ("versus" in spec) == ("value" in spec):
                problems.append("needs exactly one of versus, value")
            if ("floor" in spec) == ("ceiling" in spec):
                problems.append("needs exactly one of floor, ceiling")
            out.append({"key": f"{family}.{measure}", **spec, "problems": problems})
    return out


def measure_floor(spec, results):
    """The ratio (or value) a floor line asks for, from the recorded results; None when its
    group or entries were not measured in this run."""
    entries = results.get(spec["group"])
    if not entries or spec["ours"] not in entries:
        return None
    ours = entries[spec["ours"]]
    if "versus" in spec:
        other = entries.get(spec["versus"])
        if other is None or not ours["min"] > 0:
            return None
        return other["min"] / ours["min"]
    return _number(ours.get(spec["value"]))


def check_floors(floors, results, mode):
    """One row per floor: its measured figure and status (ok, BELOW, ABOVE, not run)."""
    rows = []
    for spec in floors:
        if spec.get("mode") not in (None, mode):
            continue
        got = None if spec["problems"] else measure_floor(spec, results)
        if spec["problems"]:
            status = "BAD LINE: " + "; ".join(spec["problems"])
        elif got is None or math.isnan(got):
            status = "not run"
        elif "floor" in spec:
            status = "ok" if got >= spec["floor"] else "BELOW"
        else:
            status = "ok" if got <= spec["ceiling"] else "ABOVE"
        rows.append({"key": spec["key"], "group": spec.get("group"), "ours": spec.get("ours"),
                     "versus": spec.get("versus", spec.get("value")),
                     "kind": "floor" if "floor" in spec else "ceiling",
                     "limit": spec.get("floor", spec.get("ceiling")),
                     "measured_when_set": spec.get("measured"), "ratio": got,
                     "status": status})
    return rows


def _failed(rows):
    return [r for r in rows if r["status"] in ("BELOW", "ABOVE") or r["status"].startswith("BAD")]


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    mode = "quick" if quick() else "full"
    floors = load_floors(config.getoption("--floors"))
    _FLOOR_ROWS[:] = check_floors(floors, _RESULTS, mode) if _RESULTS else []
    csv_path = config.getoption("--ratios-csv")
    if csv_path and _RESULTS:
        write_csv(csv_path, _RESULTS, _FLOOR_ROWS, mode)
    if config.getoption("--check-floors") and _failed(_FLOOR_ROWS):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# ----------------------------------------------------------------------------- CSV
CSV_FIELDS = ["run", "commit", "machine", "mode", "kind", "group", "name", "value", "median",
              "versus", "floor", "status", "extra"]


def _commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE,
                              capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine_note():
    """A short description of this machine (host, CPU, cores)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{platform.node()}; {cpu}; {os.cpu_count()} cores"


def write_csv(path, results, floor_rows, mode):
    """Append this run to ``path`` (long format: ``kind`` is ``time`` or ``ratio``)."""
    path = Path(path)
    new = not path.exists() or path.stat().st_size == 0
    run = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    common = {"run": run, "commit": _commit(), "machine": machine_note(), "mode": mode}
    with open(path, "a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
        if new:
            w.writeheader()
        for group, entries in sorted(results.items()):
            for name, e in sorted(entries.items()):
                extra = {k: _jsonable(v) for k, v in e.items() if k not in ("min", "median")}
                w.writerow({**common, "kind": "time", "group": group, "name": name,
                            "value": repr(e["min"]), "median": repr(e["median"]),
                            "extra": json.dumps(extra) if extra else ""})
        for r in floor_rows:
            if r["ratio"] is None:
                continue
            w.writerow({**common, "kind": "ratio", "group": r["group"], "name": r["key"],
                        "value": f"{r['ratio']:.6g}", "versus": r["versus"],
                        "floor": f"{r['kind']} {r['limit']}", "status": r["status"]})


# ----------------------------------------------------------------------------- summary
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    tr = terminalreporter
    if _RESULTS:
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
    rows = [r for r in _FLOOR_ROWS if r["status"] != "not run"]
    if rows:
        mode = "quick" if quick() else "full"
        tr.section(f"refsvm floors ({config.getoption('--floors')}, {mode} mode)")
        tr.write_line(format_floor_table(rows))
        skipped = len(_FLOOR_ROWS) - len(rows)
        if skipped:
            tr.write_line(f"({skipped} floors not measured in this run)")
        failed = _failed(rows)
        if failed:
            verdict = "FAILED" if config.getoption("--check-floors") else "(not checked)"
            tr.write_line(f"{len(failed)} of {len(rows)} measured floors missed {verdict}:",
                          red=True, bold=True)
            tr.write_line(format_floor_table(failed), red=True)
        else:
            tr.write_line(f"all {len(rows)} measured floors hold", green=True)


def format_floor_table(rows):
    head = f"  {'floor':<40} {'measured now':>12} {'limit':>10} {'when set':>9}  status"
    lines = [head]
    for r in rows:
        sign = ">=" if r["kind"] == "floor" else "<="
        got = "-" if r["ratio"] is None else f"{r['ratio']:.3g}"
        when = r["measured_when_set"]
        when = f"{when:.3g}" if isinstance(when, (int, float)) else "-"
        limit = "-" if not isinstance(r["limit"], (int, float)) else f"{r['limit']:.3g}"
        lines.append(f"  {r['key']:<40} {got:>12} {sign}{limit:>8} {when:>9}  {r['status']}")
    return "\n".join(lines)
