"""The hand-over between the two exact families' estimators (the scikit-learn layer).

Cauwenberghs & Poggio's IncrementalSVM (``refsvm.idsvm``) and Fine & Scheinberg's POKER
(``refsvm.poker``) keep the same exact SVM: the partition, g = y f - 1, the margin set in
joining order with its kernel columns and the inverse of [[0, y_S'], [y_S, Q_SS]] (only
the sign of the bias differs).  Each estimator can therefore end a problem by the other
family's path:

- :func:`self_init_optimum`: the batch optimum by SelfInit POKER, the start of
  ``IncrementalSVM.fit`` (``fit_method="selfinit"``), its end refined and checked
  (:func:`_refine`, as the start from LIBSVM's solution's) before it is handed on;
- :func:`incremental_path`: IncrementalSVM's path from a POKER model, POKER's last
  fallback on degenerate data (:func:`incremental_path_again`: from the empty model over
  the stored rows, where the model cannot be carried over);
- :class:`ExactnessError` (IncrementalSVM's): what either estimator raises when no path
  ended exact, the model rolled back.

Neither family's folder imports the other: the hand-over lives here, above both, beside
:mod:`refsvm.base`, and what is handed over is the exact optimum in the core's layout
(:mod:`refsvm.core.optimum`), written by the family that ends the path (its
``optimum_of``) and read by the one that goes on (its ``load_optimum``: IDSVM's in
``refsvm/idsvm/state_format.py`` with its acceptance test, POKER's in
``refsvm/poker/storage.py``).  Neither family reads the other's persistence arrays.
"""

from __future__ import annotations

import numpy as np

from ._validation import load_backend
from .core.exactness import refine
from .core.stream import run_states
from .idsvm.departures.exactness import ExactnessError
from .poker.partition import BIAS, FIXED

__all__ = ["ExactnessError", "SelfInitStalled", "self_init_optimum", "incremental_path",
           "incremental_path_again"]


class SelfInitStalled(RuntimeError):
    """A batch start's path stopped making progress (:class:`_StallWatch`): ``fit`` learns
    the problem example by example instead."""


class _StallWatch:
    """The breakpoint hook ``fit`` puts on a batch start's paths (SelfInit's, and the
    start from LIBSVM's, ``refsvm/_warm_start.py``): it raises :class:`SelfInitStalled` as
    soon as the path being followed stops progressing, instead of letting it run to
    POKER's breakpoint budget of 50 (n + 10) and only then falling back to the
    incremental pass.

    Each path follows one parameter to its end, and every piece of it moves the
    parameter on: the adjustable-bias method (Sec. 3; all of SelfInit) tau = y'alpha to 0,
    the fixed-bias method (Eq. 3) u to 1.  Where a path does not finish (pure label noise,
    2,000 points, C = 10, gamma = 0.5) it reaches a point where every piece has length
    zero -- the partition cycles among degenerate exchanges, the parameter stays the same
    to the last bit -- and POKER's budget let SelfInit cycle for 85,000 breakpoints (19 s,
    three times the whole incremental pass) before raising.  The watch keeps the best
    value of the parameter seen (the smallest |tau|, the largest u) and gives up when it
    has not improved for ``window + 2 |I_s|`` breakpoints in a row: a run of zero-length
    exchanges that ends visits each member of I_s a few times at most.  Breakpoints of
    other paths (the end polish) are not watched and restart the count.  What the path did
    before the stall is lost (the incremental pass starts afresh): ``docs/defaults.rst``
    has the measured waste.

    ``limit`` (None: none) bounds the watched breakpoints in all: the start from LIBSVM's
    solution is a polish, one breakpoint per example LIBSVM left in the wrong set, and a
    path that runs far beyond that (pure label noise, where it crossed 3,600 for 2,000
    examples and failed at the end) costs more than the incremental pass it falls back to.

    The hook changes no number of a path that ends (the compiled twin applies a pending
    move of g before calling it, the same operation it would apply in its next scan)."""

    def __init__(self, window=200, limit=None):
        self.window = int(window)
        self.limit = limit
        self.phase = None
        self.best = np.inf
        self.since = 0
        self.count = 0

    def __call__(self, state):
        if state.phase not in (FIXED, BIAS):
            self.since = 0
            return
        self.count += 1
        if self.limit is not None and self.count > self.limit:
            raise SelfInitStalled(f"the path crossed {self.count} breakpoints, more than "
                                  f"its limit of {self.limit}")
        # the parameter, smaller when further on: -u (fixed bias), |y'alpha| (bias)
        value = -float(state.u) if state.phase == FIXED else abs(float(state.tau))
        if state.phase != self.phase or value < self.best - 1e-12 * abs(self.best):
            self.phase, self.best, self.since = state.phase, value, 0
            return
        self.since += 1
        if self.since > self.window + 2 * len(state.S):
            what = "u" if state.phase == FIXED else "|y'alpha|"
            raise SelfInitStalled(f"{what} = {abs(value):.6g} has not moved on in "
                                  f"{self.since} breakpoints")


def _kernel_params(params):
    return dict(C=params["C"], kernel=params["kernel"], gamma=params["gamma"],
                degree=params["degree"], coef0=params["coef0"],
                cache_size=params["cache_size"])


def _refine(path, reference, fresh):
    """The end of a POKER path (``path``, either twin; ``reference`` its family's
    reference module) made exact to round-off before it is handed on, or False: one step
    of iterative refinement of (b, alpha_S) on the bordered system's residuals (y'alpha
    and the margin vectors' g, from their columns), the kept g of I_o and I_c moved with
    it, with ``fresh`` every kept g of I_o and I_c afresh from alpha and b (POKER's
    ``_fresh_g``, O(n #SV) kernel values), then POKER's exactness check.  The inverse of
    the start from LIBSVM can be less accurate than a path's (its margin set was chosen
    by LIBSVM, not grown one well-conditioned pivot at a time): without the fresh g the
    kept g drifted by up to 4e-8 on pure label noise (an inverse residual of 4e-8)."""
    n = path.n
    act = np.flatnonzero(path.status[:n] >= 0)
    off = path.status[act] != reference.I_S                # I_o and I_c
    rest = act[off]
    S = np.array(path.S, dtype=np.intp)
    if S.size:
        sv = act[path.alpha[act] > 0.0]
        ya = path.alpha[sv] * path.y[sv]
        KS = np.asarray(path.KS)[:, : S.size]
        gs = path.y[S] * (ya @ KS[sv] - path.b) - 1.0
        r = np.concatenate([[float(np.sum(path.y[act] * path.alpha[act]))], gs])
        R = np.asarray(path.R)
        step = refine(lambda v: -(R @ v), r, path.alpha[S], path.b, path.C, bias_sign=-1.0)
        if step is not None:                       # refused when an alpha leaves [0, C]
            da, db = step[0] - path.alpha[S], float(step[1]) - path.b
            path.alpha[S], b = step
            path.b = float(b)
            # the kept g of I_o and I_c move with the step (f = w'phi - b), unless they
            # are recomputed below; those of I_s stay 0, where the step brings g_s
            # from their columns
            if not fresh:
                path.g[rest] += path.y[rest] * (KS[rest] @ (path.y[S] * da) - db)
    if fresh:
        amax = float(np.max(path.alpha[act])) if act.size else 0.0
        gtol = path.departures["kkt_tol"] * (1.0 + float(path.kmax) * amax)
        path.g[rest] = path._fresh_g(act, gtol)[off]       # sums over every SV of act
    return path.exactness() is None


def self_init_optimum(backend, params, X, y):
    """SelfInit POKER (Sec. 5 of Fine & Scheinberg) on (X, y) with the numeric
    parameters of an IncrementalSVM state (``init_params()``), by the twin of
    ``backend``: the exact SVM in the core's layout (:mod:`refsvm.core.optimum`, written
    by POKER's ``optimum_of``), or None when SelfInit cycled, stalled
    (:class:`_StallWatch`) or ended off the optimum (degenerate data)."""
    from .poker import poker as reference
    from .poker.storage import optimum_of

    module = load_backend(backend, reference, "refsvm.poker._poker")
    path = module.POKERState(params["n_features"], params["sparse"], **_kernel_params(params))
    path.breakpoint_hook = _StallWatch()
    try:
        path.self_init(X, y)
        # an end off the optimum (margin vectors' g up to 1e-7 off 0, y'alpha 1e-7: Gauss
        # under gamma = 4, C = 10) is refined once from R afresh, and refused if it
        # still is
        if path.exactness() is not None and not (
                path.S and path._refresh() and _refine(path, reference, fresh=True)):
            return None
        return optimum_of(path)
    except (reference.CyclingError, reference.PathError, SelfInitStalled):
        return None


def incremental_path_again(backend, params, X_old, y_old, gone, X=None, y=None,
                           unlearn=None):
    """IncrementalSVM's path from the empty model over the rows a POKER model stored
    (``X_old``, ``y_old``, ids 0, 1, ... in order), those ids in ``gone`` (unlearned
    earlier) unlearned again, then (X, y) learned or the ids ``unlearn`` unlearned: the
    same exact SVM as :func:`incremental_path` from that model, with the same ids, where
    the model cannot be carried over (O(n) examples learned again).  Returns the exact
    SVM in the core's layout (IncrementalSVM's ``optimum_of``)."""
    from .idsvm import incremental_svm as reference
    from .idsvm.state_format import optimum_of

    module = load_backend(backend, reference, "refsvm.idsvm._incremental_svm")
    inc = module.IncrementalSVMState(params["n_features"], params["sparse"],
                                     **_kernel_params(params))
    run_states([inc], X_old, [np.asarray(y_old, dtype=np.float64)], range(X_old.shape[0]))
    if len(gone):
        inc.unlearn([int(i) for i in gone])
    if unlearn is not None:
        inc.unlearn([int(i) for i in unlearn])
    elif X is not None:
        run_states([inc], X, [np.asarray(y, dtype=np.float64)], range(X.shape[0]))
    return optimum_of(inc)


def incremental_path(backend, params, optimum, X=None, y=None, unlearn=None):
    """IncrementalSVM's path (Cauwenberghs & Poggio), by the twin of ``backend``, with
    the numeric parameters of a POKER state (``init_params()``): from ``optimum`` (an
    exact SVM in the core's layout, POKER's ``optimum_of``; or None: the empty model),
    learn (X, y) one example at a time, or unlearn the ids ``unlearn``.  Returns the end
    in the core's layout (IncrementalSVM's ``optimum_of``), or None when ``optimum``
    cannot be carried over (IncrementalSVM's start refuses it: not exact to that
    family's tolerance, or margin vectors at their bounds)."""
    from .idsvm import incremental_svm as reference
    from .idsvm.state_format import load_optimum, optimum_of

    module = load_backend(backend, reference, "refsvm.idsvm._incremental_svm")
    inc = module.IncrementalSVMState(params["n_features"], params["sparse"],
                                     **_kernel_params(params))
    if optimum is not None and not load_optimum(inc, optimum):
        return None
    if unlearn is not None:
        inc.unlearn([int(i) for i in unlearn])
    else:
        run_states([inc], X, [np.asarray(y, dtype=np.float64)], range(X.shape[0]))
    return optimum_of(inc)
