"""The docs' numbers come from result files (issue 42, item 4).

``refsvm reproduce PAPER --record docs/results`` stores each paper's tables and claims
under ``docs/results/PAPER/`` (``summary-MODE.json`` with commit, date, settings and
machine; ``claims-MODE.csv``; ``report-MODE.txt``), and each paper's page includes the
report.  These tests fail when a page, its report and the stored results disagree.
"""

import csv
import io
import json
import re
from pathlib import Path

import pytest

from refsvm.reproduce import get_paper
from refsvm.reproduce._claims import UNTESTABLE, Evidence, claims_csv, evaluate
from refsvm.reproduce._runner import report_text

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
PAGES = {"wang-vucetic": "wang_vucetic.rst", "lee-tseng-chen": "lee_tseng_chen.rst",
         "bagnell": "bagnell.rst", "cauwenberghs-poggio": "cauwenberghs_poggio.rst",
         "fine-scheinberg": "fine_scheinberg.rst",
         "rai-daume-venkatasubramanian": "rai_daume_venkatasubramanian.rst"}
STORED = sorted(RESULTS.glob("*/summary-*.json"))
INCLUDE = re.compile(r"\.\. literalinclude:: results/([\w-]+)/report-(\w+)\.txt")


def _stored(path):
    return json.loads(path.read_text(encoding="utf-8"))


def test_every_paper_has_stored_quick_results_on_its_page():
    for paper, page in PAGES.items():
        assert (RESULTS / paper / "summary-quick.json").is_file(), paper
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        assert (paper, "quick") in INCLUDE.findall(text), page


@pytest.mark.parametrize("path", STORED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_report_and_claims_files_are_the_stored_results(path):
    stored = _stored(path)
    mode = stored["mode"]
    assert stored["paper"] == path.parent.name and path.stem == f"summary-{mode}"
    assert set(stored["meta"]) == {"commit", "date", "settings", "machine"}
    report = (path.parent / f"report-{mode}.txt").read_text(encoding="utf-8")
    assert report == report_text(stored)
    assert (path.parent / f"claims-{mode}.csv").read_text(encoding="utf-8") == \
        claims_csv(stored["claims"])
    page = (ROOT / "docs" / PAGES[stored["paper"]]).read_text(encoding="utf-8")
    assert (stored["paper"], mode) in INCLUDE.findall(page)


@pytest.mark.parametrize("path", STORED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_stored_verdicts_follow_from_the_stored_tables(path):
    """Each claim that reads only the tables gets the stored verdict again (the claims that
    read per-cell records, not stored here, are skipped)."""
    stored = _stored(path)
    paper = get_paper(stored["paper"])
    again = evaluate(paper.claims, Evidence(stored, {}, stored["meta"]["settings"]["items"]))
    checked = 0
    for old, new in zip(stored["claims"], again):
        assert old["id"] == new["id"]
        if new["verdict"] == UNTESTABLE and new["reason"].startswith("no "):
            continue   # needs the records
        assert (old["verdict"], old["ours"]) == (new["verdict"], new["ours"]), old["id"]
        checked += 1
    assert checked >= 1


@pytest.mark.parametrize("path", STORED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_claims_csv_parses(path):
    rows = list(csv.DictReader(io.StringIO(
        (path.parent / f"claims-{_stored(path)['mode']}.csv").read_text(encoding="utf-8"))))
    assert [r["id"] for r in rows] == [c.id for c in get_paper(path.parent.name).claims]


FIGURE = re.compile(r"^\.\. (?:figure|image):: (\S+)", re.M)
PAGES_ALL = sorted((ROOT / "docs").glob("*.rst"))


@pytest.mark.parametrize("path", STORED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_recorded_figures_are_the_stored_runs(path):
    """A record's folder holds exactly the figures its summary lists for that mode."""
    stored = _stored(path)
    mode = stored["mode"]
    names = stored.get("figures", [])
    assert all(n.endswith(f"-{mode}.png") for n in names), names
    for name in names:
        png = path.parent / name
        assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
    assert sorted(p.name for p in path.parent.glob(f"*-{mode}.png")) == sorted(names)


def _recorded_figures():
    return {f"results/{p.parent.name}/{name}" for p in STORED
            for name in _stored(p).get("figures", [])}


@pytest.mark.parametrize("page", PAGES_ALL, ids=lambda p: p.name)
def test_the_papers_figures_in_the_docs_are_recorded_ones(page):
    """A figure of a paper's protocol shown in the docs is a copy the command recorded
    under ``docs/results`` (not a picture saved by hand elsewhere)."""
    recorded = _recorded_figures()
    for target in FIGURE.findall(page.read_text(encoding="utf-8")):
        assert "reproduction/" not in target, (page.name, target)
        if target.startswith("results/"):
            assert target in recorded, (page.name, target)


@pytest.mark.parametrize("page", PAGES_ALL, ids=lambda p: p.name)
def test_no_report_table_is_typed_into_a_page(page):
    """The command's tables reach a page only through ``literalinclude`` of a stored
    report: no page carries a typed copy of one (a line ``tableN: ...`` or the header of
    a table of ours beside the printed numbers)."""
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"^\s*(?:table|figure)\d+: \S", text, re.M), page.name
    assert not re.search(r"ours\s+printed\s+diff", text), page.name
