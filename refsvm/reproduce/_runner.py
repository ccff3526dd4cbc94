"""The shared runner of ``refsvm reproduce``.

A *cell* is one run: (paper, item, data set, method, setting, repeat), where the item is
a table or a figure.  A paper module lists the cells of each item (``Item.plan``), and
names the function that runs one cell (``Cell.func``, ``"module:function"``, importable
on a worker); the function returns a dict of JSON values (numbers, lists for curves).

- **Seeds**: every cell gets its seeds from ``numpy.random.SeedSequence`` keyed by the
  cell itself (``Cell.data_seed``: paper, data set, repeat -- the same data and order for
  every method of a repeat; ``Cell.seed``: the whole key), never from the worker or the
  order of execution, so results do not depend on ``n_jobs`` or the cluster.
- **Storage**: each finished cell is written to ``OUT/PAPER/cells/<hash>.json`` as soon
  as it completes, by writing a temporary file in the same folder and renaming it
  (``os.replace`` is atomic), so Ctrl-C never leaves a half-written result and a rerun
  skips every stored cell.
- **Engines**: serial; joblib (``n_jobs``, results taken as they complete); a Dask
  ``distributed`` scheduler (``scheduler="tcp://host:port"``, one future per cell).
- **Output**: ``results.csv`` (one row per cell and metric), ``summary.json`` (the
  tables: mean +- std over repeats, the printed value, the difference, whether it is
  within the printed std), the tables on screen (``fmt`` "table", "csv" or "json"), and
  every figure as PNG + SVG.
- **Missing data**: a data set whose file is absent gives one line naming it; its cells
  are "n/a" in the tables (not stored, so they run once the file is there).
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import io
import json
import math
import os
import sys
import tempfile
import time
import traceback
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ._claims import Evidence, claims_csv, evaluate, format_claims

#: entropy of every cell's SeedSequence (the date of Wang & Vucetic's ICDM 2009 talk)
ENTROPY = 20091206
MODES = ("quick", "default", "full")


class Interrupted(Exception):
    """Ctrl-C during a run: the finished cells are stored, nothing half-written."""

    def __init__(self, n_done, n_todo):
        super().__init__(f"interrupted: {n_done} of {n_todo} cells finished and stored; "
                         "run the same command again to continue")
        self.n_done, self.n_todo = n_done, n_todo


def _h(text):
    return zlib.crc32(str(text).encode())


@dataclass(frozen=True)
class Cell:
    """One run.  ``params`` are passed to ``func``; they are part of the cell's identity
    through ``setting`` (a short readable string, e.g. ``"C=1,g=0.5"``)."""

    paper: str
    item: str
    dataset: str
    method: str
    setting: str
    repeat: int
    func: str
    params: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def key(self):
        return "|".join([self.paper, self.item, self.dataset, self.method, self.setting,
                         str(self.repeat)])

    @property
    def data_seed(self):
        """Seed of the data and the stream order: the same for every method of a repeat."""
        ss = np.random.SeedSequence(ENTROPY, spawn_key=(_h(self.paper), _h(self.dataset),
                                                        self.repeat))
        return int(ss.generate_state(1)[0])

    @property
    def seed(self):
        """Seed of anything random inside the method (the whole key)."""
        ss = np.random.SeedSequence(ENTROPY, spawn_key=(_h(self.key),))
        return int(ss.generate_state(1)[0])

    def as_dict(self):
        return {"paper": self.paper, "item": self.item, "dataset": self.dataset,
                "method": self.method, "setting": self.setting, "repeat": self.repeat,
                "func": self.func, "params": self.params}


@dataclass
class Item:
    """A table or a figure of a paper.

    Parameters
    ----------
    id : str
        ``"table1"``, ``"figure3"``, ... (``--table 1`` selects ``"table1"``).
    title : str
    plan : callable(mode, records) -> list of Cell
        The cells for a mode; ``records`` are the finished records of this item, so a plan
        can add cells once others are done (e.g. the test runs of the settings a
        cross-validation grid selected).  The runner calls it until it adds nothing.
    metrics : tuple of (result key, label, scale[, digits])
        The numbers a table shows (``scale`` multiplies, e.g. 100 for % accuracy;
        ``digits`` after the point, default 1).
    printed : dict
        ``(dataset, method, result key) -> (value, std or None)`` as printed, in the
        table's units.
    plot : callable(records, out_dir, mode) -> list of Path, optional
        Draws the figure (PNG + SVG); tables may have one too.
    notes : str
        Readings and known differences, printed under the table.
    """

    id: str
    title: str
    plan: Callable
    metrics: tuple = ()
    printed: dict = field(default_factory=dict)
    plot: Callable | None = None
    notes: str = ""
    tolerance: float = 1.0
    #: optional ``pivot(records) -> str``: a figure's numbers as a text table, printed in
    #: the report (so the docs quote them from the stored results)
    pivot: Callable | None = None

    @property
    def kind(self):
        return "table" if self.id.startswith("table") else "figure"

    @property
    def number(self):
        return self.id[len(self.kind):]


@dataclass
class Paper:
    name: str
    title: str
    items: list
    datasets: tuple = ()
    methods: tuple = ()
    #: the paper's conclusions (:class:`refsvm.reproduce._claims.Claim`), checked at the
    #: end of every run
    claims: tuple = ()

    def item(self, item_id):
        for it in self.items:
            if it.id == item_id:
                return it
        known = ", ".join(it.id for it in self.items)
        raise ValueError(f"{self.name} has no {item_id}; it has {known}")


# ------------------------------------------------------------------------- running one cell
def execute(cell, data_home=None):
    """Run one cell (in this process or on a worker); a record dict, never an exception."""
    from ..datasets import DataUnavailable

    module, _, name = cell.func.partition(":")
    start = time.perf_counter()
    try:
        func = getattr(importlib.import_module(module), name)
        result = func(cell, data_home)
        status, reason = "ok", ""
    except DataUnavailable as exc:
        result, status, reason = {}, "n/a", str(exc).splitlines()[0]
    except Exception as exc:  # a failing cell is reported, the others go on
        result, status = {}, "error"
        reason = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}"
    return {**cell.as_dict(), "key": cell.key, "status": status, "reason": reason,
            "wall_seconds": time.perf_counter() - start, "result": _jsonable(result)}


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        return None if not math.isfinite(float(obj)) else float(obj)
    return obj


# ------------------------------------------------------------------------- storage
class Store:
    """One JSON file per finished cell, written atomically."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self.cells = self.folder / "cells"

    def path(self, key):
        return self.cells / (hashlib.sha1(key.encode()).hexdigest()[:20] + ".json")

    def load(self):
        out = {}
        if self.cells.is_dir():
            for p in self.cells.glob("*.json"):
                try:
                    rec = json.loads(p.read_text())
                except (OSError, ValueError):
                    continue  # not ours or unreadable: run the cell again
                out[rec["key"]] = rec
        return out

    def save(self, record):
        self.cells.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path(record["key"]), json.dumps(record))


def write_atomic(path, text):
    """Write ``text`` (str, or bytes) to ``path`` through a temporary file in the same
    folder + rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ------------------------------------------------------------------------- engines
def _progress(total, enabled, desc):
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # the experiments extra is not installed: no bar
        return None
    return tqdm(total=total, desc=desc, unit="cell", file=sys.stderr, smoothing=0.1)


def _results(todo, data_home, n_jobs, scheduler):
    """Yield records as the cells complete."""
    if scheduler:
        try:
            from distributed import Client, as_completed
        except ImportError as exc:  # pragma: no cover
            raise RuntimeError("--scheduler needs dask[distributed] "
                               "(pip install 'refsvm[cluster]')") from exc
        client = scheduler if hasattr(scheduler, "submit") else Client(scheduler)
        futures = [client.submit(execute, cell, data_home, pure=False) for cell in todo]
        try:
            for fut in as_completed(futures):
                yield fut.result()
        finally:
            for fut in futures:
                fut.cancel()
            if client is not scheduler:
                client.close()
    elif n_jobs is not None and n_jobs != 1:
        from joblib import Parallel, delayed

        yield from Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
            delayed(execute)(cell, data_home) for cell in todo)
    else:
        for cell in todo:
            yield execute(cell, data_home)


def _missing_datasets(cells, data_home):
    """Data sets whose files are absent (one check per name, no loading)."""
    from ..datasets import PAPER_SETS, get_data_home

    home = get_data_home(data_home)
    missing = {}
    for name in sorted({c.dataset for c in cells}):
        files = PAPER_SETS.get(name, (None, None, None, []))[3]
        absent = [f for f in files if not (home / f).is_file()]
        if absent:
            missing[name] = (f"{name}: provide {', '.join(absent)} under the data home {home} "
                             "(or set REFSVM_DATA / --data-home); its cells are n/a")
    return missing


# ------------------------------------------------------------------------- the command
def reproduce(paper, items=None, *, mode="default", n_jobs=1, scheduler=None,
              out="reproduce-results", data_home=None, fmt="table", stream=None,
              progress=True, draw=True, only=None, run=True, record=None, sample=None):
    """Run (or resume) the cells of some items of a paper; print and write the results.

    Parameters
    ----------
    paper : str or Paper
    items : list of str, optional
        Item ids (``"table1"``, ``"figure3"``); default all of the paper's.
    mode : {"quick", "default", "full"}
    n_jobs : int
        joblib workers (1: serial; -1: every core).
    scheduler : str or distributed.Client, optional
        Address of a Dask scheduler (``"tcp://host:port"``) or a Client.
    out : path
        Results go to ``out/<paper>/``.
    fmt : {"table", "csv", "json"}
        What is printed.
    only : list of str, optional
        Data set and/or method names to keep (a cell runs when its data set is among the
        named data sets, if any are named, and its method among the named methods, if
        any); an unknown name raises ValueError.
    run : bool
        False: run nothing, report the stored cells (the others show as "not run").
    sample : float, optional
        Run only this fraction (0 < sample <= 1) of the protocol's cells: ``ceil(sample
        * n)`` of the n cells of every (item, data set, method), spread over its grid,
        the same on every rerun (:func:`sample_cells`); those stored are skipped.  They
        are real cells of the protocol (a later run without ``sample`` skips them too),
        and the remaining cost is estimated from them.
    record : path, optional
        Also store the results for the docs: ``record/<paper>/summary-<mode>.json`` (the
        tables and claims, with the commit, date, settings and machine under ``"meta"``),
        ``claims-<mode>.csv``, ``report-<mode>.txt`` (the printed report without the
        run-dependent lines) and the figures drawn, ``<figure>-<mode>.png`` (listed
        under ``"figures"``), which the paper's docs pages include.

    Returns
    -------
    dict
        The summary (also in ``summary.json``), with ``"ran"``: cells run now and
        ``"skipped"``: cells found finished.
    """
    from . import get_paper

    stream = sys.stdout if stream is None else stream
    paper = get_paper(paper) if isinstance(paper, str) else paper
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
    if fmt not in ("table", "csv", "json"):
        raise ValueError(f"format must be table, csv or json; got {fmt!r}")
    if sample is not None and not (isinstance(sample, (int, float)) and 0.0 < sample <= 1.0):
        raise ValueError(f"sample must be a fraction in (0, 1]; got {sample!r}")
    selected = [paper.item(i) for i in items] if items else list(paper.items)
    keep = _only_filter(paper, selected, mode, only)
    folder = Path(out) / paper.name
    store = Store(folder)
    done = store.load()
    skipped = ran = 0
    notes = []
    all_missing = {}
    for item in selected:
        seen_keys = set()
        while True:
            records = [done[k] for k in seen_keys if k in done]
            cells = [c for c in item.plan(mode, records) if keep(c)]
            keys = {c.key for c in cells}
            if len({c.key for c in cells}) != len(cells):
                raise ValueError(f"{paper.name} {item.id}: two cells share a key")
            new = [c for c in cells if c.key not in seen_keys]
            if not new:
                break
            seen_keys |= keys
            missing = _missing_datasets(new, data_home)
            for name, line in missing.items():
                if name not in all_missing:
                    all_missing[name] = line
                    print(line, file=sys.stderr)
            todo = [c for c in new if c.dataset not in missing]
            if sample is not None:
                todo = sample_cells(todo, sample)
            todo = [c for c in todo if c.key not in done] if run else []
            skipped += sum(c.key in done for c in new)
            if not todo:
                continue
            bar = _progress(len(todo), progress, f"{paper.name} {item.id} ({mode})")
            finished = 0
            try:
                for rec in _results(todo, data_home, n_jobs, scheduler):
                    if rec["status"] == "ok":
                        store.save(rec)
                        done[rec["key"]] = rec
                    elif rec["status"] == "error":
                        notes.append(f"{rec['key']}: {rec['reason']}")
                        print(f"cell failed: {rec['key']}: {rec['reason'].splitlines()[0]}",
                              file=sys.stderr)
                    finished += 1
                    ran += 1
                    if bar is not None:
                        bar.update(1)
            except KeyboardInterrupt:
                raise Interrupted(finished, len(todo)) from None
            finally:
                if bar is not None:
                    bar.close()
    summary = summarize(paper, selected, mode, done, all_missing, keep)
    summary["ran"], summary["skipped"], summary["errors"] = ran, skipped, notes
    summary["claims"] = check_claims(paper, selected, mode, done, summary, keep)
    summary["remaining"] = remaining_cost(paper, selected, mode, done, keep)
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / f"results-{mode}.csv", records_csv(paper, selected, mode, done, keep))
    write_atomic(folder / f"claims-{mode}.csv", claims_csv(summary["claims"]))
    write_atomic(folder / f"summary-{mode}.json", json.dumps(summary, indent=1))
    figures = []
    if draw:
        for item in selected:
            if item.plot is not None:
                recs = _item_records(paper, item, mode, done, keep)
                try:
                    figures += [str(p) for p in item.plot(recs, folder / "figures", mode)]
                except ImportError as exc:  # pragma: no cover - no matplotlib
                    print(f"{item.id}: figure not drawn ({exc}); pip install 'refsvm[experiments]'",
                          file=sys.stderr)
    summary["figures"] = figures
    write_atomic(folder / f"summary-{mode}.json", json.dumps(summary, indent=1))
    if record is not None:
        record_results(summary, Path(record) / paper.name, mode,
                       dict(items=[it.id for it in selected], only=list(only or []),
                            n_jobs=n_jobs, scheduler=bool(scheduler), sample=sample))
    if fmt == "json":
        print(json.dumps(summary, indent=1), file=stream)
    elif fmt == "csv":
        print(summary_csv(summary), end="", file=stream)
    else:
        print(format_summary(summary), file=stream)
    return summary


def sample_cells(cells, fraction):
    """ceil(fraction * n) of the n cells of every (item, data set, method), spread evenly
    over the group in plan order (a grid's cells run from the smallest C to the largest:
    every k-th cell from an offset seeded by the group's name), in the cells' order.
    The draw depends only on the cells given: pass every cell of a plan, stored or not,
    and a rerun draws the same."""
    groups = {}
    for c in cells:
        groups.setdefault((c.item, c.dataset, c.method), []).append(c)
    chosen = set()
    for name, group in groups.items():
        k = math.ceil(fraction * len(group))
        step = len(group) / k
        offset = (zlib.crc32("|".join(name).encode()) % 997) / 997 * step
        chosen |= {group[int(offset + i * step)].key for i in range(k)}
    return [c for c in cells if c.key in chosen]


def remaining_cost(paper, items, mode, done, keep=lambda c: True):
    """For ``mode`` itself when some of its cells are not stored (a run with ``sample``
    or an interrupted one: every cell its stored records plan), and for each protocol
    larger than ``mode`` ("default", then "full" where it differs): per item, the cells
    of its first stage (a grid's selection cells; the repeats at the selected settings
    come after them), how many are stored, and an estimate of the rest in core-seconds
    from the wall time of the *stored cells of that protocol* with the same data set and
    method (none stored: no estimate)."""
    out = []
    seen = set()
    records = list(done.values())
    for big in MODES[MODES.index(mode):]:
        # the run's own protocol with its second stage (the repeats at the settings its
        # stored selections chose); a larger one's first stage
        plans = {item.id: [c for c in item.plan(big, records if big == mode else [])
                           if keep(c)] for item in items}
        keys = frozenset(c.key for cs in plans.values() for c in cs)
        if keys <= seen:   # "full" is the default protocol for this paper
            continue
        seen |= keys
        if big == mode and all(k in done for k in keys):
            continue
        for item in items:
            cells = plans[item.id]
            stored = [c for c in cells if c.key in done]
            times = {}
            for c in stored:
                times.setdefault((c.dataset, c.method), []).append(done[c.key]["wall_seconds"])
            est, unknown = 0.0, 0
            for c in cells:
                if c.key in done:
                    continue
                t = times.get((c.dataset, c.method))
                if t:
                    est += float(np.mean(t))
                else:
                    unknown += 1
            out.append({"mode": big, "item": item.id, "cells": len(cells),
                        "stored": len(stored), "estimate_seconds": est,
                        "cells_without_estimate": unknown,
                        "grid": any(c.setting.startswith("select") and c.key not in done
                                    for c in cells)})
    return out


def format_remaining(remaining, mode=None):
    """One line per protocol (``mode``'s own, when it is not finished, then the larger
    ones): the cells not stored and the estimate."""
    lines = []
    for big in dict.fromkeys(r["mode"] for r in remaining):
        rows = [r for r in remaining if r["mode"] == big]
        flag = ("this protocol" if big == mode else
                "--full" if big == "full" else "default protocol (no --quick)")
        left = [r for r in rows if r["stored"] < r["cells"]]
        if not left:
            lines.append(f"  {flag}: every cell stored")
            continue
        parts = [f"{r['item']} {r['cells'] - r['stored']:,}/{r['cells']:,}"
                 + (" (grid stage; the repeats follow)" if r["grid"] else "") for r in left]
        est = sum(r["estimate_seconds"] for r in left)
        unknown = sum(r["cells_without_estimate"] for r in left)
        known = sum(r["cells"] - r["stored"] for r in left) - unknown
        lines.append(f"  {flag}: cells not stored: " + ", ".join(parts) + "; "
                     + (f"about {est / 3600:.2f} core-hours for {known:,} of them (stored "
                        "cells of the same data set and method)" if known else
                        "no estimate (no stored cell of this protocol)")
                     + (f", {unknown:,} without an estimate" if known and unknown else ""))
    return lines


def check_claims(paper, items, mode, done, summary, keep=lambda c: True):
    """The verdict of every claim of the paper on the finished cells of ``items``."""
    records = {it.id: _item_records(paper, it, mode, done, keep) for it in items}
    evidence = Evidence(summary, records, [it.id for it in items])
    return evaluate(paper.claims, evidence)


def _only_filter(paper, items, mode, only):
    """The cell filter of ``only``; ValueError on a name no cell of these items has."""
    if not only:
        return lambda cell: True
    cells = [c for it in items for c in it.plan(mode, [])]
    datasets = set(paper.datasets) | {c.dataset for c in cells}
    methods = set(paper.methods) | {c.method for c in cells}
    unknown = [n for n in only if n not in datasets and n not in methods]
    if unknown:
        raise ValueError(f"unknown name(s) {', '.join(map(repr, unknown))} for {paper.name}; "
                         f"data sets: {', '.join(sorted(datasets))}; "
                         f"methods: {', '.join(sorted(methods))}")
    ds = {n for n in only if n in datasets}
    ms = {n for n in only if n in methods}
    return lambda c: (not ds or c.dataset in ds) and (not ms or c.method in ms)


def _item_records(paper, item, mode, done, keep=lambda c: True):
    """Finished records of an item in this mode (the plan decides which cells count)."""
    recs = []
    seen = set()
    while True:
        cells = [c for c in item.plan(mode, recs) if keep(c)]
        new = [c for c in cells if c.key not in seen]
        if not new:
            break
        seen |= {c.key for c in new}
        recs = [done[c.key] for c in cells if c.key in done]
    return recs


# ------------------------------------------------------------------------- tables
def _fmt(v, digits=1):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    return f"{v:{digits}}" if isinstance(digits, str) else f"{v:.{digits}f}"


def summarize(paper, items, mode, done, missing, keep=lambda c: True):
    """The table rows of every table item: mean +- std over repeats beside the printed."""
    out = {"paper": paper.name, "title": paper.title, "mode": mode, "tables": [],
           "missing": sorted(missing.values())}
    out["pivots"] = []
    for item in items:
        if item.pivot is not None:
            recs = _item_records(paper, item, mode, done, keep)
            if recs:
                out["pivots"].append({"id": item.id, "title": item.title,
                                      "text": item.pivot(recs)})
        if not item.metrics:
            continue
        recs = _item_records(paper, item, mode, done, keep)
        cells = [c for c in item.plan(mode, recs)
                 if keep(c) and not c.setting.startswith("select")]
        groups = {}
        for c in cells:
            groups.setdefault((c.dataset, c.method), []).append(c)
        rows = []
        for (dataset, method), cs in groups.items():
            got = [done[c.key] for c in cs if c.key in done]
            row = {"dataset": dataset, "method": method,
                   "setting": cs[0].setting, "n_repeats": len(got),
                   "status": "n/a" if dataset in missing else
                   ("ok" if len(got) == len(cs) else "incomplete" if got else "not run")}
            for key, label, scale, *_ in item.metrics:
                vals = [r["result"].get(key) for r in got]
                vals = [float(v) * scale for v in vals if v is not None]
                mean = float(np.mean(vals)) if vals else None
                std = float(np.std(vals, ddof=1)) if len(vals) > 1 else (0.0 if vals else None)
                printed = item.printed.get((dataset, method, key))
                pv, ps = (printed if printed is not None else (None, None))
                diff = None if (mean is None or pv is None) else mean - pv
                tol = (ps if ps is not None else item.tolerance) if pv is not None else None
                # a time (seconds, or a ratio of times) is compared by the claims, as a
                # ratio to a baseline run in the same process: no flag against the printed
                within = (None if diff is None or is_time_metric(key)
                          else bool(abs(diff) <= tol + 1e-9))
                row[key] = {"label": label, "mean": mean, "std": std, "printed": pv,
                            "printed_std": ps, "diff": diff, "within": within}
                if got and not any(key in r["result"] for r in got):
                    row[key]["absent"] = True   # not a number of this method (n/a)
            extra = [r["result"].get("stopped_early") for r in got]
            if any(extra):
                row["note"] = f"stopped early in {sum(map(bool, extra))} of {len(got)} runs"
            rows.append(row)
        out["tables"].append({"id": item.id, "title": item.title, "notes": item.notes,
                              "metrics": [m[0] for m in item.metrics],
                              "digits": {m[0]: (m[3] if len(m) > 3 else 1)
                                         for m in item.metrics},
                              "rows": rows})
    return out


def run_metadata(settings):
    """Commit, date, settings and machine of a recorded run."""
    import platform
    import subprocess

    import scipy
    import sklearn

    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parent, timeout=10).stdout.strip()
        # "+modified": the package's sources differ from the commit (docs do not count)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                ":/refsvm"],
                               capture_output=True, text=True, timeout=10,
                               cwd=Path(__file__).resolve().parent).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit, dirty = "", ""
    return {"commit": commit + ("+modified" if dirty else "") if commit else "unknown",
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "settings": settings,
            "machine": {"platform": platform.platform(), "processor": platform.machine(),
                        "cpus": os.cpu_count(), "python": platform.python_version(),
                        "numpy": np.__version__, "scipy": scipy.__version__,
                        "scikit-learn": sklearn.__version__}}


def record_results(summary, folder, mode, settings):
    """The docs' copy of a run (see ``reproduce(record=...)``): the summary, claims and
    report, and a copy of each figure the run drew (PNG) as ``<figure>-<mode>.png``,
    listed under ``"figures"``; figures of this mode that the run did not draw are
    removed, so the folder holds exactly the recorded run's."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stored = {k: v for k, v in summary.items() if k not in ("figures", "ran", "skipped")}
    stored["meta"] = run_metadata(settings)
    drawn = [Path(f) for f in summary.get("figures", []) if str(f).endswith(".png")]
    stored["figures"] = [f"{f.stem}-{mode}.png" for f in drawn]
    for old in folder.glob(f"*-{mode}.png"):
        if old.name not in stored["figures"]:
            old.unlink()
    for src, name in zip(drawn, stored["figures"]):
        write_atomic(folder / name, src.read_bytes())
    write_atomic(folder / f"summary-{mode}.json", json.dumps(stored, indent=1) + "\n")
    write_atomic(folder / f"claims-{mode}.csv", claims_csv(summary["claims"]))
    write_atomic(folder / f"report-{mode}.txt", report_text(stored))


def report_text(stored):
    """The report a docs page includes: the meta line, then the printed report without
    the lines that depend on the run (cells run, figure paths)."""
    meta = stored["meta"]
    m = meta["machine"]
    head = (f"recorded {meta['date']}, commit {meta['commit'][:12]}, mode {stored['mode']}, "
            f"items {', '.join(meta['settings']['items'])}"
            + (f", only {' '.join(meta['settings']['only'])}" if meta["settings"]["only"]
               else "") + f"; {m['platform']}, {m['cpus']} cpus, Python {m['python']}, "
            f"NumPy {m['numpy']}, scikit-learn {m['scikit-learn']}\n\n")
    return head + format_summary(stored, run_lines=False)


def is_time_metric(key):
    """Seconds and ratios of seconds: never flagged against the papers' machines."""
    return "seconds" in key or "time" in key


def format_summary(summary, run_lines=True):
    buf = io.StringIO()
    print(f"{summary['title']}  [{summary['paper']}, mode {summary['mode']}]", file=buf)
    for line in summary.get("missing", []):
        print(f"  n/a: {line}", file=buf)
    for table in summary["tables"]:
        print(f"\n{table['id']}: {table['title']}", file=buf)
        wd = max([len("data set")] + [len(r["dataset"]) for r in table["rows"]]) + 2
        wm = max([len("method")] + [len(r["method"]) for r in table["rows"]]) + 2
        dg = table.get("digits", {})
        head = f"{'data set':<{wd}}{'method':<{wm}}"
        shown = {m: any(r[m]["printed"] is not None for r in table["rows"])
                 for m in table["metrics"]}
        flagged = {m: any(r[m]["within"] is not None for r in table["rows"])
                   for m in table["metrics"]}
        for m in table["metrics"]:
            lab = table["rows"][0][m]["label"] if table["rows"] else m
            head += f"{lab + ' ours':>19}"
            if shown[m]:
                head += f"{'printed':>15}{'diff':>8}" + (f"{'ok':>4}" if flagged[m] else "")
        print(head, file=buf)
        print("-" * len(head), file=buf)
        for row in table["rows"]:
            line = f"{row['dataset']:<{wd}}{row['method']:<{wm}}"
            for m in table["metrics"]:
                c = row[m]
                d = dg.get(m, 1)
                if row["status"] == "not run":
                    ours = "not run"
                elif row["status"] == "n/a" or c["mean"] is None:
                    ours = "n/a"
                else:
                    ours = f"{_fmt(c['mean'], d)} ± {_fmt(c['std'], d)}"
                if c["printed"] is None:
                    pr = "-"
                elif c["printed_std"] is None:
                    pr = _fmt(c["printed"], d)
                else:
                    pr = f"{_fmt(c['printed'], d)} ± {_fmt(c['printed_std'], d)}"
                if isinstance(d, str):
                    diff = "" if c["diff"] is None else f"{c['diff']:+{d}}"
                else:
                    diff = "" if c["diff"] is None else f"{c['diff']:+.{d}f}"
                ok = "" if c["within"] is None else ("yes" if c["within"] else "no")
                line += f"{ours:>19}"
                if shown[m]:
                    line += f"{pr:>15}{diff:>8}" + (f"{ok:>4}" if flagged[m] else "")
            if row.get("note"):
                line += f"  ({row['note']})"
            if row["status"] == "incomplete":
                line += f"  ({row['n_repeats']} runs so far)"
            print(line, file=buf)
        if table["notes"]:
            print("\n" + table["notes"].strip(), file=buf)
    for pivot in summary.get("pivots", []):
        print(f"\n{pivot['id']}: {pivot['title']}", file=buf)
        print(pivot["text"].rstrip("\n"), file=buf)
    if summary.get("figures") and run_lines:
        print("\nfigures:", file=buf)
        for f in summary["figures"]:
            print(f"  {f}", file=buf)
    if run_lines:
        print(f"\ncells run now: {summary.get('ran', 0)}, found finished: "
              f"{summary.get('skipped', 0)}", file=buf)
    else:
        print("", file=buf)
    if summary.get("remaining"):
        print("remaining cost of the protocols:", file=buf)
        for line in format_remaining(summary["remaining"], summary.get("mode")):
            print(line, file=buf)
    if summary.get("claims"):
        print(format_claims(summary["claims"], summary["mode"]), end="", file=buf)
    return buf.getvalue()


def summary_csv(summary):
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["table", "dataset", "method", "setting", "metric", "mean", "std", "printed",
                "printed_std", "diff", "within", "n_repeats", "status"])
    for table in summary["tables"]:
        for row in table["rows"]:
            for m in table["metrics"]:
                c = row[m]
                w.writerow([table["id"], row["dataset"], row["method"], row["setting"], m,
                            c["mean"], c["std"], c["printed"], c["printed_std"], c["diff"],
                            c["within"], row["n_repeats"], row["status"]])
    return buf.getvalue()


def records_csv(paper, items, mode, done, keep=lambda c: True):
    """Raw per-cell results: one row per cell and scalar result (curves as JSON text)."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["paper", "item", "dataset", "method", "setting", "repeat", "key", "metric",
                "value", "wall_seconds"])
    for item in items:
        for rec in _item_records(paper, item, mode, done, keep):
            for k, v in sorted(rec["result"].items()):
                w.writerow([rec["paper"], rec["item"], rec["dataset"], rec["method"],
                            rec["setting"], rec["repeat"], rec["key"], k,
                            json.dumps(v) if isinstance(v, (list, dict)) else v,
                            f"{rec['wall_seconds']:.4f}"])
    return buf.getvalue()


# ------------------------------------------------------------------------- figures
def figure(nrows=1, ncols=1, width=4.0, height=3.2):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows),
                             squeeze=False)
    return fig, axes


def save_figure(fig, folder, name):
    """PNG and SVG of a figure (written atomically); the two paths."""
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    fig.tight_layout()
    for ext in ("png", "svg"):
        path = folder / f"{name}.{ext}"
        fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + path.name, suffix=".tmp")
        os.close(fd)
        try:
            fig.savefig(tmp, format=ext, dpi=80, metadata={"Date": None} if ext == "svg" else None)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        paths.append(path)
    plt.close(fig)
    return paths


def mean_curves(records, x="n_seen", y="accuracy"):
    """Average the curves of the repeats of each (data set, method): {(ds, m): (x, y)}."""
    groups = {}
    for rec in records:
        r = rec["result"]
        if x in r and y in r:
            groups.setdefault((rec["dataset"], rec["method"]), []).append((r[x], r[y]))
    out = {}
    for k, curves in groups.items():
        n = min(len(c[0]) for c in curves)
        xs = np.asarray(curves[0][0][:n], dtype=float)
        ys = np.mean([np.asarray(c[1][:n], dtype=float) for c in curves], axis=0)
        out[k] = (xs, ys)
    return out
