"""``refsvm reproduce``: the papers' tables and figures, beside the printed numbers.

One module per paper (``wang_vucetic``, ``lee_tseng_chen``, ``bagnell``,
``cauwenberghs_poggio``; a new paper adds one module) defines ``PAPER``, a
:class:`~refsvm.reproduce._runner.Paper` with its tables and figures: the cells to run
(paper, table/figure, data set, method, setting, repeat), the function that runs one
cell, the printed numbers kept as data, and the drawing of each figure.  The shared
runner (:mod:`refsvm.reproduce._runner`) runs the cells serially, with joblib
(``n_jobs``) or on a Dask cluster (``scheduler``), stores each finished cell atomically
so that a rerun skips it, and writes ``results.csv``, ``summary.json``, the tables and
the figures (PNG + SVG).

Papers are found by name: every module of this package whose name does not start with
an underscore and that defines ``PAPER``.
"""

from __future__ import annotations

import importlib
import pkgutil

from ._runner import Cell, Item, Paper, reproduce

__all__ = ["Cell", "Item", "Paper", "get_paper", "paper_names", "reproduce"]


def _modules():
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            yield info.name


def paper_names():
    """Short names of the papers that can be reproduced (e.g. ``"wang-vucetic"``)."""
    return sorted(_load(m).name for m in _modules() if _load(m) is not None)


def _load(module):
    mod = importlib.import_module(f"{__name__}.{module}")
    return getattr(mod, "PAPER", None)


def get_paper(name):
    """The :class:`Paper` of a short name; ValueError naming the known ones otherwise."""
    for module in _modules():
        paper = _load(module)
        if paper is not None and paper.name == name:
            return paper
    raise ValueError(f"unknown paper {name!r}; one of {', '.join(paper_names())}")
