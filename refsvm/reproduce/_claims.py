"""The papers' claims, checked against our measured numbers.

Each paper module declares ``CLAIMS``: a tuple of :class:`Claim`, one per conclusion its
abstract and experiments draw (paraphrased), with the paper's evidence (the printed
numbers it rests on) and a ``check`` that computes the verdict from *our* results of the
run at hand (never a hard-coded outcome):

- ``"holds"``: our numbers show what the paper concluded (by the rule the check states);
- ``"does not hold here"``: they do not;
- ``"cannot be tested here"``: a number it needs is absent (a data set not provided, an
  item not run in this invocation, a method we do not have), or the paper's evidence is
  not evidence (a cell that was fitted to the printed value), with the reason.

Time comparisons are ratios to a baseline run *in the same process* on the same data
(the cell times both), never seconds compared across machines.

A check receives an :class:`Evidence` (the run's table rows and finished records) and
returns an :class:`Outcome`; :class:`Missing`, raised by any accessor of
:class:`Evidence`, becomes "cannot be tested here" with its reason.
"""

from __future__ import annotations

import csv
import io
import math
import textwrap
from dataclasses import dataclass
from typing import Callable

import numpy as np

HOLDS = "holds"
FAILS = "does not hold here"
UNTESTABLE = "cannot be tested here"
VERDICTS = (HOLDS, FAILS, UNTESTABLE)


class Missing(Exception):
    """A number a check needs is not among the results (the message says which/why)."""


@dataclass(frozen=True)
class Outcome:
    verdict: str
    ours: str
    reason: str = ""


def verdict(condition, ours, rule):
    """HOLDS when ``condition`` else FAILS; ``rule`` (the test applied) is the reason."""
    return Outcome(HOLDS if condition else FAILS, ours, rule)


def untestable(reason, ours="-"):
    return Outcome(UNTESTABLE, ours, reason)


@dataclass(frozen=True)
class Claim:
    """One conclusion of a paper.

    Parameters
    ----------
    id : str
        Short label, e.g. ``"W1"``.
    claim : str
        The conclusion, paraphrased.
    evidence : str
        What the paper shows for it (its printed numbers).
    check : callable(Evidence) -> Outcome
    needs : tuple of str
        Item ids whose results the check reads (an item not run in this invocation makes
        the claim "cannot be tested here").
    """

    id: str
    claim: str
    evidence: str
    check: Callable
    needs: tuple = ()


class Evidence:
    """Our results of one run: the summary's table rows and each item's records."""

    def __init__(self, summary, records, selected):
        self.summary = summary
        self.mode = summary["mode"]
        self.records_by_item = records          # item id -> list of finished records
        self.selected = set(selected)
        self.tables = {t["id"]: t for t in summary["tables"]}
        self.missing = summary.get("missing", [])

    # ---------------------------------------------------------------- tables
    def row(self, item, dataset, method):
        self._need(item)
        table = self.tables.get(item)
        if table is None:
            raise Missing(f"{item} has no table")
        for row in table["rows"]:
            if row["dataset"] == dataset and row["method"] == method:
                if row["status"] != "ok" and not (row["status"] == "incomplete"
                                                   and row["n_repeats"] > 0):
                    raise Missing(f"{dataset} / {method}: {row['status']}"
                                  + (" (data not provided)" if row["status"] == "n/a" else ""))
                return row
        raise Missing(f"{dataset} / {method} not in {item} ({self.mode} mode)")

    def mean(self, item, dataset, method, metric):
        """Our mean of a metric, in the table's units (e.g. % accuracy)."""
        cell = self.row(item, dataset, method).get(metric)
        if cell is None or cell["mean"] is None:
            raise Missing(f"no {metric} for {dataset} / {method}")
        return cell["mean"]

    def std(self, item, dataset, method, metric):
        return self.row(item, dataset, method)[metric]["std"]

    def printed(self, item, dataset, method, metric):
        table = self.tables.get(item)
        for row in (table or {}).get("rows", []):
            if row["dataset"] == dataset and row["method"] == method:
                return row[metric]["printed"]
        return None

    def datasets(self, item, *methods):
        """Data sets of an item with a result for every one of ``methods``."""
        self._need(item)
        out = []
        for ds in dict.fromkeys(r["dataset"] for r in self.tables.get(item, {"rows": []})["rows"]):
            try:
                for m in methods:
                    self.row(item, ds, m)
            except Missing:
                continue
            out.append(ds)
        return out

    # ---------------------------------------------------------------- records
    def records(self, item, dataset=None, method=None):
        self._need(item)
        recs = [r for r in self.records_by_item.get(item, [])
                if (dataset is None or r["dataset"] == dataset)
                and (method is None or r["method"] == method)
                and not r["setting"].startswith("select")]
        if not recs:
            raise Missing(f"no {item} results" + (f" for {dataset}" if dataset else "")
                          + (f" / {method}" if method else ""))
        return recs

    def values(self, item, key, dataset=None, method=None):
        vals = [r["result"].get(key) for r in self.records(item, dataset, method)]
        vals = [float(v) for v in vals if v is not None]
        if not vals:
            raise Missing(f"no {key} in {item} results")
        return vals

    def _need(self, item):
        if item not in self.selected:
            raise Missing(f"{item} not run in this invocation (run every item: no --table "
                          "or --figure)")


def evaluate(claims, evidence):
    """Every claim's verdict, as dicts (id, claim, evidence, ours, verdict, reason)."""
    out = []
    for c in claims:
        try:
            for item in c.needs:
                evidence._need(item)
            res = c.check(evidence)
        except Missing as exc:
            res = untestable(str(exc))
        if res.verdict not in VERDICTS:  # pragma: no cover - a check's bug
            raise ValueError(f"claim {c.id}: verdict {res.verdict!r}")
        out.append({"id": c.id, "claim": c.claim, "paper": c.evidence, "ours": res.ours,
                    "verdict": res.verdict, "reason": res.reason})
    return out


def format_claims(claims, mode, width=100):
    """The claims table as text: one block per claim (claim, paper, ours, verdict)."""
    if not claims:
        return ""
    buf = io.StringIO()
    counts = {v: sum(c["verdict"] == v for c in claims) for v in VERDICTS}
    print(f"\nclaims ({mode} mode): " + ", ".join(f"{n} {v}" for v, n in counts.items()),
          file=buf)
    print("-" * width, file=buf)
    for c in claims:
        head = f"{c['id']:<4}[{c['verdict']}] "
        print(textwrap.fill(c["claim"], width, initial_indent=head,
                            subsequent_indent=" " * 6), file=buf)
        for label, key in (("paper", "paper"), ("ours", "ours"), ("why", "reason")):
            if c[key]:
                print(textwrap.fill(c[key], width, initial_indent=f"      {label + ':':<7}",
                                    subsequent_indent=" " * 13), file=buf)
    if mode == "quick":
        print(textwrap.fill("--quick runs small subsets: its verdicts are those of a smoke "
                            "run, not of the paper's protocol (run without --quick).", width),
              file=buf)
    return buf.getvalue()


def claims_csv(claims):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["id", "claim", "paper", "ours", "verdict", "reason"])
    for c in claims:
        w.writerow([c["id"], c["claim"], c["paper"], c["ours"], c["verdict"], c["reason"]])
    return buf.getvalue()


# ------------------------------------------------------------------------- helpers
def fmt(v, digits=1):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    return f"{v:,.{digits}f}"


def ratio(a, b):
    return float(a) / float(b) if b else float("inf")


def median(values):
    return float(np.median(values)) if len(values) else float("nan")
