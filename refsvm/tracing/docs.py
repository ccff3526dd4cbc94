"""The traces in the docs, made by the docs build (``docs/conf.py`` calls :func:`build`):
for each paper page a short trace beside the printed lines, one figure and the coverage
table (line -> the stream and step that executes it); for ``docs/trace.rst`` the coverage
of every algorithm and an animation.  Made from the references at build time, so they
cannot go stale."""

from __future__ import annotations

import os

from . import COVERAGE_STREAMS, algorithms, builtin_stream, coverage, format_text, run, select

#: paper page -> (algorithm of its excerpt, (start example, line filter, steps), figure kind,
#: the algorithms of its coverage table)
PAGES = {
    "lee_tseng_chen": ("pa1", (3, None, 9), "decision",
                       ["perceptron", "pa", "pa1", "pa2", "pam", "rkpa", "rkpam"]),
    "bagnell": ("pegasos", (2, None, 9), "decision", ["pegasos"]),
    "wang_vucetic": ("onlinesvmr", (11, None, 12), "decision",
                     ["onlinesvmr", "onlinesvmr-removal", "onlineasvmr", "kernelpa"]),
    "cauwenberghs_poggio": ("idsvm-learn", (11, None, 16), "alpha_paths",
                            ["idsvm-learn", "idsvm-unlearn"]),
    "fine_scheinberg": ("altpoker", (5, None, 14), "alpha_paths",
                        ["altpoker", "poker-fixed", "poker-adjust"]),
    "rai_daume_venkatasubramanian": ("streamsvm", (0, None, 12), "radius",
                                     ["streamsvm", "streamsvm-lookahead"]),
}


def _table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    rule = "  ".join("=" * w for w in widths)
    fmt = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([rule, fmt(header), rule] + [fmt(r) for r in rows] + [rule])


def _literal(text):
    return "::\n\n" + "\n".join("    " + line for line in text.splitlines()) + "\n"


def coverage_rst(names, table):
    """The coverage tables of ``names``: printed line -> stream, step, example."""
    out = []
    for name in names:
        algo = algorithms()[name]
        rows = []
        for line, where in table[name].items():
            stream, step, example = where if where else ("NOT EXECUTED", "", "")
            rows.append((f"``{line}``", stream, step, "" if example is None else example))
        out.append(f"**{name}** -- {algo.title}\n\n"
                   + _table(("printed line", "stream", "step", "example"), rows) + "\n")
    return "\n".join(out)


def page_rst(paper, table, outdir):
    """The include of a paper page: the printed lines of its excerpt's algorithm, a short
    trace, a figure, the coverage of its algorithms."""
    from .plots import alpha_path_figure, decision_figure, radius_figure

    name, (start, only, count), kind, names = PAGES[paper]
    algo = algorithms()[name]
    result = run(name)
    excerpt = format_text(select(result.steps, count, start, only), width=110)
    figure = f"trace_{paper}.png"
    path = os.path.join(outdir, figure)
    {"decision": decision_figure, "alpha_paths": alpha_path_figure,
     "radius": radius_figure}[kind](result, path=path)
    lines = _table(("line (as the trace names it)", "the printed statement"),
                   [(f"``{k}``", v) for k, v in algo.lines.items()])
    n, seed, noise = 40, 0, 0.1
    return f"""The printed algorithm, traced
-----------------------------

``refsvm trace {name}`` runs the reference in the paper's form (``departures="paper"``) on
the built-in 2-D stream ({n} examples, seed {seed}, label noise {noise}) and prints each printed
line it executes, what the line changed and the invariant that holds after it
(:doc:`trace`).  The printed lines of {algo.title}:

{lines}

The trace from example {start} on (``refsvm trace {name} --from {start} --steps {count}``),
made by the docs build from the reference itself:

{_literal(excerpt)}
.. image:: /_generated/{figure}
   :width: 100%

Every printed line of this paper's algorithms is executed on some stream of the test
suite (``tests/test_trace.py``); where first:

{coverage_rst(names, table)}
"""


def build(outdir):
    """Write the includes and figures of every paper page and of ``docs/trace.rst``."""
    os.makedirs(outdir, exist_ok=True)
    table = coverage()
    for paper in PAGES:
        with open(os.path.join(outdir, f"trace_{paper}.inc"), "w", encoding="utf-8") as fh:
            fh.write(page_rst(paper, table, outdir))
    streams = ", ".join(f"(n={n}, seed={s}, noise={z})" for n, s, z in COVERAGE_STREAMS)
    with open(os.path.join(outdir, "trace_coverage.inc"), "w", encoding="utf-8") as fh:
        fh.write(f"The coverage streams: {streams}; each algorithm's table stops at the first "
                 "stream on which every line has run.\n\n")
        fh.write(coverage_rst(list(algorithms()), table))
    from .plots import animation, decision_figure

    X, y = builtin_stream(30, 0, 0.1)
    result = run("streamsvm", X, y)
    animation(result, os.path.join(outdir, "trace_streamsvm.gif"))
    decision_figure(run("idsvm-learn"), path=os.path.join(outdir, "trace_idsvm_decision.png"))
    return outdir
