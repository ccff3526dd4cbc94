"""Traces of the references: the printed line each step executes, with what it changed and
the invariant that holds after it (``docs/trace.rst``).

The reference states report their printed lines through :mod:`refsvm.core.trace` (off by
default).  This package knows, paper by paper, what those lines are: it builds the
reference in the paper's form (``departures="paper"``), drives it over a small stream,
and returns the steps as records; ``refsvm trace <algorithm>`` prints them.

Examples
--------
>>> import refsvm
>>> steps = refsvm.trace("pa", frame=False)
>>> steps[0].line, steps[0].example
('PA: loss', 0)
>>> [s.line for s in steps[:3]]
['PA: loss', 'PA: step size', 'PA: update']
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import numpy as np

from .._validation import check_magnitude
from ..core.trace import Tracer
from ._algorithms import PAPERS, Algorithm, algorithms, attach

__all__ = ["PAPERS", "Algorithm", "Step", "TraceRun", "algorithms", "builtin_stream",
           "coverage", "format_text", "run", "to_json", "trace"]


@dataclass
class Step:
    """One printed line executed: ``index`` (its place in the trace), ``example`` (the
    stream position learned, the chunk's first position, the id unlearned; None for the
    driver's own lines), ``line`` (as the paper numbers it), ``text`` (the line's
    statement), ``quantities`` (what it changed), ``check`` (the invariant after it) and
    ``ok`` (whether the invariant holds; None where the line promises none)."""

    index: int
    example: object
    line: str
    text: str
    quantities: dict = field(default_factory=dict)
    check: dict = field(default_factory=dict)
    ok: object = None


@dataclass
class TraceRun:
    """A traced run: the algorithm, the reference state after it, the stream, the steps."""

    algorithm: Algorithm
    state: object
    X: np.ndarray
    y: np.ndarray
    steps: list


def builtin_stream(n=40, seed=0, noise=0.1):
    """The built-in stream: 2-D, two overlapping Gaussian classes around (1, 1) and
    (-1, -1), a fraction ``noise`` of the labels flipped; labels +1 / -1."""
    rng = np.random.RandomState(seed)
    y = np.where(rng.rand(n) < 0.5, 1.0, -1.0)
    X = rng.randn(n, 2) * 0.9 + y[:, None] * np.array([1.0, 1.0])
    flip = rng.rand(n) < noise
    y[flip] = -y[flip]
    return np.ascontiguousarray(X), y


def load_data(path):
    """A user's stream: a .npz with arrays X and y, or a CSV / whitespace text file whose
    last column is the label, as read: :func:`run` checks it and maps its two classes
    to -1 / +1."""
    if str(path).endswith(".npz"):
        with np.load(path) as data:
            missing = [k for k in ("X", "y") if k not in data.files]
            if missing:
                raise ValueError(f"{path}: no array named {' or '.join(missing)} "
                                 "(a .npz stream holds X and y)")
            X, y = np.asarray(data["X"], dtype=np.float64), np.asarray(data["y"])
    else:
        delimiter = "," if str(path).endswith(".csv") else None
        table = np.loadtxt(path, delimiter=delimiter, ndmin=2)
        X, y = table[:, :-1], table[:, -1]
    return X, y


def _checked(X, y):
    """(X, y) as float64 arrays once they are a stream the references may see: X of shape
    (n, d) with finite entries small enough that squared norms stay finite, y of n finite
    labels of two classes; else a ValueError naming the problem."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError(f"a trace needs X of shape (n, d) and y of shape (n,); got X "
                         f"{X.shape} and y {y.shape}")
    check_magnitude(X)
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity")
    return X, _binary(y)


def _binary(y):
    y = np.asarray(y)
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(f"a trace needs two classes; got {classes.size}")
    if set(classes.tolist()) == {-1.0, 1.0}:
        return y.astype(np.float64)
    return np.where(y == classes[1], 1.0, -1.0)


def run(algorithm, X=None, y=None, state=None):
    """Trace ``algorithm`` (a name of :func:`algorithms`) over (X, y) (default: the
    built-in stream); ``state``: a reference state of that algorithm to drive instead of
    a fresh one in the paper's form.  Returns a :class:`TraceRun`."""
    algo = algorithms()[algorithm] if isinstance(algorithm, str) else algorithm
    if X is None:
        X, y = builtin_stream()
    X, y = _checked(X, y)
    if state is None:
        state = algo.make(X.shape[1], X)

    def after(line, quantities):
        return algo.check(state, algo.label(line), quantities) if algo.check else {}

    tracer = Tracer(after)
    attach(algo, state, tracer)
    try:
        algo.drive(state, X, y, tracer) if algo.drive else _drive(state, X, y, tracer)
    finally:
        detach(state)
    steps = []
    for example, line, quantities, check in tracer.records:
        line = algo.label(line)
        if algo.keep is not None and not algo.keep(line, quantities):
            continue
        check = dict(check or {})
        ok = check.pop("ok", None)
        steps.append(Step(len(steps), example, line, algo.lines.get(line, ""), quantities,
                          check, ok))
    return TraceRun(algo, state, X, y, steps)


def _drive(state, X, y, tracer):
    for t in range(X.shape[0]):
        tracer.example = t
        state.step(X[t], float(y[t]))


def detach(state):
    """Remove a trace's tracer and wrappers from ``state`` (it is then as it was made)."""
    from ..core.trace import unwatch

    unwatch(state)
    for s in (state, getattr(state, "pa", None)):
        if s is not None:
            s.__dict__.pop("_tracer", None)
    for key in [k for k in state.__dict__ if k.startswith("_trace_")]:
        del state.__dict__[key]
    return state


# ---------------------------------------------------------------- from Python
_ESTIMATORS = {
    "Perceptron": lambda e: "perceptron",
    "PassiveAggressive": lambda e: {"PA": "pa", "PA-I": "pa1", "PA-1": "pa1", "PA-II": "pa2",
                                    "PA-2": "pa2"}.get(str(e.variant), "pa1"),
    "ProximalPassiveAggressive": lambda e: "pam",
    "ReducedKernelPA": lambda e: "rkpa",
    "ProximalReducedKernelPA": lambda e: "rkpam",
    "OnlineLinearSVM": lambda e: "pegasos",
    "KernelPassiveAggressive": lambda e: "kernelpa",
    "OnlineRampSVM": lambda e: "onlinesvmr" if e.max_non_sv is None else "onlinesvmr-removal",
    "OnlineASVMR": lambda e: "onlineasvmr",
    "IncrementalSVM": lambda e: "idsvm-learn",
    "POKER": lambda e: "altpoker",
    "StreamSVM": lambda e: "streamsvm" if int(e.lookahead) == 1 else "streamsvm-lookahead",
}
_STATES = {
    "PerceptronState": lambda s: "perceptron",
    "PAState": lambda s: ("pa", "pa1", "pa2")[s.variant],
    "PAmState": lambda s: "pam",
    "ReducedKernelPAState": lambda s: "rkpa",
    "ReducedKernelPAmState": lambda s: "rkpam",
    "PegasosState": lambda s: "pegasos",
    "KernelPA": lambda s: "kernelpa",
    "OnlineSVMR": lambda s: "onlinesvmr" if s.max_non_sv < 0 else "onlinesvmr-removal",
    "IncrementalSVMState": lambda s: "idsvm-learn",
    "POKERState": lambda s: "altpoker",
    "StreamSVMLinear": lambda s: "streamsvm" if s.lookahead == 1 else "streamsvm-lookahead",
    "StreamSVMKernel": lambda s: "streamsvm" if s.lookahead == 1 else "streamsvm-lookahead",
}


def trace(what="pa", X=None, y=None, frame=None, run_only=False):
    """The steps of a traced run, as records.

    Parameters
    ----------
    what : str, estimator or reference state
        An algorithm name (``refsvm trace --list``), a refsvm estimator (its Python
        reference is made with the estimator's parameters, in the paper's form) or a
        reference state (driven as it is: its own departures).
    X, y : arrays, optional
        The stream (two classes); default the built-in 2-D stream.
    frame : bool or None
        A pandas DataFrame (one row per step) instead of a list of :class:`Step`; None:
        a DataFrame when pandas is installed.
    run_only : bool
        Return the :class:`TraceRun` (the state after the run too).
    """
    state = None
    if isinstance(what, str):
        name = what
    elif type(what).__name__ in _STATES:
        name, state = _STATES[type(what).__name__](what), what
    elif type(what).__name__ in _ESTIMATORS:
        name = _ESTIMATORS[type(what).__name__](what)
        if X is None:
            X, y = builtin_stream()
        est = what.__class__(**{**what.get_params(), "backend": "python",
                                "departures": "paper"})
        X, y = _checked(X, y)  # before the state is built from X (e.g. a reduced set)
        state = est._make_state(X.shape[1], False, X)
    else:
        raise ValueError(f"cannot trace {type(what).__name__}: pass an algorithm name "
                         f"({', '.join(algorithms())}), a refsvm estimator or a reference state")
    result = run(name, X, y, state=state)
    if run_only:
        return result
    if frame is None:
        try:
            import pandas  # noqa: F401
            frame = True
        except ImportError:
            frame = False
    if frame:
        import pandas as pd

        return pd.DataFrame([asdict(s) for s in result.steps])
    return result.steps


# ---------------------------------------------------------------- output
def select(steps, count=None, start=None, only=None):
    """The steps of examples >= ``start`` whose line contains ``only``, the first
    ``count`` of them."""
    out = [s for s in steps
           if (start is None or (isinstance(s.example, (int, np.integer)) and s.example >= start))
           and (only is None or only.lower() in s.line.lower())]
    return out if count is None else out[:count]


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, np.ndarray):
        if v.size > 8:
            return f"[{v.size} values]"
        return "[" + ", ".join(_fmt(float(a)) for a in v.ravel()) + "]"
    if isinstance(v, (list, tuple)):
        if len(v) > 12:
            return "[" + ", ".join(_fmt(a) for a in v[:12]) + f", ... ({len(v)})]"
        return "[" + ", ".join(_fmt(a) for a in v) + "]"
    if isinstance(v, (np.floating,)):
        return f"{float(v):.6g}"
    return str(v)


def format_text(steps, width=None):
    """The steps as printed by ``refsvm trace``: one block per step: the example, the
    line and its statement; what it changed; the invariant after it."""
    lines = []
    for s in steps:
        where = "" if s.example is None else f"x{s.example}"
        head = f"#{s.index:<4} {where:>5}  {s.line}"
        lines.append(f"{head:<46} | {s.text}" if s.text else head)
        if s.quantities:
            lines.append("             changes: " + ", ".join(
                f"{k}={_fmt(v)}" for k, v in s.quantities.items()))
        shown = {k: v for k, v in s.check.items() if k not in ("alpha", "g", "ids", "coef")}
        if shown or s.ok is not None:
            verdict = "" if s.ok is None else ("holds: " if s.ok else "FAILS: ")
            lines.append("             check:   " + verdict + ", ".join(
                f"{k}={_fmt(v)}" for k, v in shown.items()))
    return "\n".join(line[:width] if width else line for line in lines)


def _jsonable(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, dict):
        return {k: _jsonable(a) for k, a in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(a) for a in v]
    if isinstance(v, float) and not np.isfinite(v):
        return str(v)
    return v


def to_json(steps, algorithm=None):
    """The same trace as data: a JSON document with the algorithm and one object per step."""
    doc = {"algorithm": None if algorithm is None else algorithm.name,
           "paper": None if algorithm is None else algorithm.paper,
           "steps": [_jsonable(asdict(s)) for s in steps]}
    return json.dumps(doc, ensure_ascii=False, indent=1)


# ---------------------------------------------------------------- coverage
#: the streams the tests and the docs' coverage tables trace: (n, seed, noise)
COVERAGE_STREAMS = ((40, 0, 0.1), (40, 1, 0.25), (60, 2, 0.3), (100, 0, 0.2))


def coverage(names=None, streams=COVERAGE_STREAMS):
    """For each algorithm, each printed line -> (stream, step index, example) of its first
    execution on the coverage streams, or None if no stream executes it."""
    table = {}
    for name in names or algorithms():
        algo = algorithms()[name]
        found = {line: None for line in algo.lines}
        for n, seed, noise in streams:
            steps = run(name, *builtin_stream(n, seed, noise)).steps
            for s in steps:
                if s.line in found and found[s.line] is None:
                    found[s.line] = (f"n={n}, seed={seed}, noise={noise}", s.index, s.example)
            if all(v is not None for v in found.values()):
                break
        table[name] = found
    return table
