"""Scikit-learn estimator of the IDSVM family: :class:`IncrementalSVM` (either twin)."""

from __future__ import annotations

import copy

import numpy as np

from .._exact_paths import self_init_optimum
from .._warm_start import libsvm_optimum
from .._validation import (DeparturesRule, Integer, NonNegative, Options, Positive,
                           check_unlearn_ids)
from ..base import BaseKernelClassifier, SupportVectorsMixin, locked
from ..core.departures import is_paper_form, resolve
from ..core.stream import Interrupted, run_states
from . import incremental_svm as _reference_module
from .departures import DEPARTURES
from .incremental_svm import ExactnessError
from .state_format import load_optimum

#: how ``fit`` reaches the batch optimum (see the class docstring)
FIT_METHODS = ("libsvm", "selfinit", "incremental")

__all__ = ["ExactnessError", "IncrementalSVM"]


class IncrementalSVM(SupportVectorsMixin, BaseKernelClassifier):
    """Exact incremental and decremental SVM with bias (Cauwenberghs & Poggio).

    A C-SVC (hinge loss, bias b, 0 <= alpha_i <= C) learned one example at a
    time: after every example the model *is* the batch solution on the
    examples seen so far (the one :class:`sklearn.svm.SVC` computes, up to its
    tolerance), and :meth:`unlearn` removes examples exactly.  ``partial_fit``
    learns its examples one at a time, in the given order; ``fit`` reaches the
    same batch optimum by the quickest exact path (``fit_method``), after which
    ``partial_fit``, :meth:`unlearn` and :meth:`loo_decisions` go on exactly.

    Parameters
    ----------
    C : float, default=1.0
        Box constraint 0 <= alpha_i <= C.
    kernel : {"rbf", "linear", "poly"}, default="rbf"
    gamma : float or {"scale", "auto"}, default="scale"
        Kernel width; "scale"/"auto" as in :class:`sklearn.svm.SVC`, resolved
        on the first batch and then kept fixed.
    degree : int, default=3
    coef0 : float, default=0.0
    tol : float, default=1e-12
        An arriving example with y f(x) - 1 >= -tol is taken as on or beyond
        its margin (it joins R, nothing changes).
    refresh_every : int, default=100
        Probe the drift of the inverse of the bordered matrix after this many
        changes of the margin set, and recompute it when the probe finds more
        than round-off (1e-12; 0: never); the drift found at a recomputation is
        kept in ``max_inverse_drift_``.
    cache_size : float, default=200.0
        Megabytes of kernel columns kept for examples outside the margin set
        (those that left it, or just ended in E or R), so that a return to S
        costs only the kernel values of the examples learned since.  0 turns
        the cache off (a column is then recomputed on every return).
    max_steps : int, default=0
        Adiabatic steps allowed for one example (learned or unlearned, its KKT
        repairs included); 0: 50 (n + 10) for n examples seen.  A safeguard: when
        they run out, :class:`ExactnessError` (see Notes).
    fit_method : {"libsvm", "selfinit", "incremental"}, default="libsvm"
        How ``fit`` reaches the SVM of its examples; a batch start ("libsvm",
        "selfinit") that cannot end a problem exactly hands it to the incremental pass
        (``fit_paths_`` says which ended it).  "incremental": the paper's method, one example after the other (exact
        after every example; what ``partial_fit`` always does).  "selfinit": the
        batch optimum in one path-following run, Fine & Scheinberg's SelfInit POKER
        (:class:`refsvm.POKER`'s ``fit``, the twin of the same ``backend``), whose end
        -- the same partition, kernel columns and inverse of the bordered matrix this
        method keeps -- becomes this estimator's state, so that everything after
        ``fit`` is as after an incremental pass (see Notes).  A SelfInit path that
        stops progressing (its parameter y'alpha unchanged over
        ``200 + 2 |I_s|`` breakpoints: a cycle of zero-length exchanges, e.g. on pure
        label noise) is abandoned at once.  "libsvm": LIBSVM's solution (:class:`sklearn.svm.SVC`,
        tol 1e-3) made exact by POKER's fixed- and adjustable-bias paths from it
        (``refsvm/_warm_start.py``): the path passes one breakpoint per example LIBSVM
        left in the wrong set, where SelfInit passes one per example or more.  The
        same model (the SVM is unique up to degenerate ties) as the other two; its
        time is LIBSVM's plus the margin set's kernel columns and one inverse of
        its bordered matrix (``docs/defaults.rst`` has the measured ratios).
        LIBSVM's kernel evaluations are not counted in ``n_kernel_evals_``.
        ``max_steps`` bounds only the incremental operations.
    departures : None, "default", "paper" or dict, default=None
        The departures from the paper's printed method
        (:data:`refsvm.idsvm.departures.DEPARTURES`: refinement of beta, repair of g and
        of y'alpha, the exactness check, the polish at extreme C, snapping, the drift
        refresh of the inverse, the column cache, the bias centring, the tie rule of long
        runs of zero-length steps), each a named unit of ``refsvm/idsvm/departures/``.
        None: the defaults.  ``"paper"``: the printed method, every departure off --
        which overrides ``refresh_every`` and ``cache_size`` (no refresh, no cache) and
        ``fit_method`` (``fit`` learns example by example); the exactness check stays on
        (it changes no number): where the printed method loses exactness (noisy or
        duplicate streams) the example is rolled back and :class:`ExactnessError`
        raised.  A dict changes single settings, e.g.
        ``{"repair": 0}`` or ``{"base": "paper", "refine": 3}``.
    backend : {"cython", "python"}, default="cython"

    Attributes
    ----------
    classes_ : ndarray
    support_ : ndarray of int
        Ids (0-based positions in learning order, over all ``fit`` /
        ``partial_fit`` calls) of the support vectors (union over the
        one-vs-rest problems).
    support_vectors_ : ndarray or sparse matrix
    dual_coef_ : ndarray of shape (n_problems, n_SV)
        y_i alpha_i; for two classes ``decision_function(x) = dual_coef_ @
        k(support_vectors_, x) + intercept_`` as in SVC.
    intercept_ : ndarray of shape (n_problems,)
    n_support_ : ndarray of int
        Support vectors per class.
    n_kernel_evals_ : int
        Kernel evaluations spent learning and unlearning (not prediction).
    max_inverse_drift_ : float
        Largest relative drift of the updated inverse found at a refresh.
    fit_paths_ : list of str
        Per binary problem, how the last ``fit`` learned it: "libsvm", "selfinit", or
        "incremental" (asked for, or because the batch starts were refused, stalled,
        cycled or ended off exactness to this estimator's tolerances -- see Notes --
        or C k_max is above 1e5, where this estimator's operations polish their ends
        in round-off units).

    Notes
    -----
    Exactness is checked after every example: the KKT conditions must hold on
    the kept g to ``kkt_tol (1 + k_max alpha_max)`` (the departure ``kkt_tol``, 1e-9
    of the size of the terms of y f(x); alpha_max the largest alpha, k_max the largest
    k(x, x)) and sum_i y_i alpha_i to ``kkt_tol alpha_max``, after at most ``repair``
    (8) repairs (an offending example unlearned and learned again); see
    ``docs/cauwenberghs_poggio.rst``.  If that fails, or ``max_steps`` runs
    out, the example is rolled back and :class:`ExactnessError` raised:
    ``partial_fit`` then leaves the model of the stream up to the last example
    learned exactly (the message says how many of the call's examples that
    is; every one-vs-rest problem at the same example), ``fit`` leaves the
    estimator as it was before the call, and ``unlearn`` leaves the ids before
    the failing one unlearned.  The model is never left drifted.

    ``fit_method="libsvm"`` or ``"selfinit"``: the end of the batch path is accepted
    under the same two conditions (after one step of iterative refinement of b and
    the margin vectors' alpha on the bordered system; otherwise, and when the path
    stalls, cycles or ends off the optimum on degenerate data, that problem is learned
    example by example, ``fit_paths_``).  An interrupt (Ctrl-C) or an
    error during that path leaves the estimator as it was before ``fit``.

    More than two classes go one-vs-rest (one exact binary SVM per class,
    every one learning every example), so the model then differs from SVC's
    one-vs-one.  :meth:`unlearn` and :meth:`loo_decisions` work on every
    binary problem.

    References
    ----------
    G. Cauwenberghs and T. Poggio, "Incremental and decremental support
    vector machine learning", NIPS 13 (2000): KKT conditions Eq. 2, adiabatic
    increments Eqs. 3-7, recursive update of the inverse Eqs. 8-9,
    decremental unlearning and leave-one-out Sec. 4.

    Examples
    --------
    Learned in two batches, the model is the SVM of all the examples -- the
    one :class:`sklearn.svm.SVC` finds (to SVC's tolerance):

    >>> import numpy as np
    >>> from sklearn.svm import SVC
    >>> from refsvm import IncrementalSVM
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(60, 2)
    >>> y = np.where(X[:, 0] + 0.5 * rng.randn(60) > 0, 1, -1)
    >>> inc = IncrementalSVM(C=1.0, gamma=0.5).partial_fit(X[:30], y[:30], classes=[-1, 1])
    >>> inc = inc.partial_fit(X[30:], y[30:])
    >>> svc = SVC(C=1.0, gamma=0.5, tol=1e-10).fit(X, y)
    >>> bool(np.allclose(inc.decision_function(X), svc.decision_function(X), atol=1e-6))
    True

    Unlearning is exact: without its first ten examples it is the SVM of the rest.

    >>> inc = inc.unlearn(range(10))
    >>> svc = SVC(C=1.0, gamma=0.5, tol=1e-10).fit(X[10:], y[10:])
    >>> bool(np.allclose(inc.decision_function(X), svc.decision_function(X), atol=1e-6))
    True

    And so is leave-one-out: the decision on a support vector of the SVM
    trained without it.

    >>> ids, dec = inc.loo_decisions()
    >>> i = int(inc.support_[0])
    >>> rest = ids[ids != i]
    >>> f = SVC(C=1.0, gamma=0.5, tol=1e-10).fit(X[rest], y[rest]).decision_function(X[[i]])
    >>> bool(np.allclose(dec[ids == i], f, atol=1e-6))
    True
    """

    _reference = _reference_module
    _compiled = "refsvm.idsvm._incremental_svm"

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, tol=1e-12,
                 refresh_every=100, cache_size=200.0, max_steps=0, fit_method="libsvm",
                 departures=None, backend="cython"):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.refresh_every = refresh_every
        self.cache_size = cache_size
        self.max_steps = max_steps
        self.fit_method = fit_method
        self.departures = departures
        self.backend = backend

    _parameter_rules = {"C": Positive(), "tol": NonNegative(),
                        "refresh_every": Integer(minimum=0), "cache_size": NonNegative(),
                        "max_steps": Integer(minimum=0), "fit_method": Options(*FIT_METHODS),
                        "departures": DeparturesRule(DEPARTURES)}

    def _make_state(self, n_features, sparse, X):
        kind, gamma, degree, coef0 = self._kernel_args(X)
        return self._module().IncrementalSVMState(
            n_features, sparse, C=float(self.C), kernel=kind, gamma=gamma, degree=degree,
            coef0=coef0, tol=float(self.tol), refresh_every=int(self.refresh_every),
            cache_size=float(self.cache_size), max_steps=int(self.max_steps),
            departures=self.departures)

    def _fit_states(self, X, Ys):
        """``fit``: every example in the given order (``fit_method="incremental"``), or
        the batch optimum by POKER's paths from LIBSVM's solution
        (:func:`refsvm._warm_start.libsvm_optimum`) or by Fine & Scheinberg's SelfInit
        path (``refsvm.poker``, the twin of this estimator's backend), whose end, the
        exact optimum in the core's layout (:mod:`refsvm.core.optimum`), starts this
        family's state (:func:`refsvm.idsvm.state_format.load_optimum`).  A problem whose
        batch end is not exact to this family's tolerances (or whose C k_max is
        extreme) is learned example by example instead: the same model, more slowly.
        ``departures="paper"``: example by example (the paper's method)."""
        if self.fit_method == "incremental" or is_paper_form(
                DEPARTURES, resolve(DEPARTURES, self.departures)):
            super()._fit_states(X, Ys)
            self.fit_paths_ = ["incremental"] * len(self._states)
            return
        self.n_epochs_ = 1
        self.fit_paths_ = []
        start = {"libsvm": libsvm_optimum, "selfinit": self_init_optimum}[self.fit_method]
        for state, y in zip(self._states, Ys):
            params = state.init_params()
            optimum = start(self.backend, params, X, y)
            # None, or a start this family refuses: the path stalled, cycled or ended
            # off the optimum (degenerate data): example by example
            if optimum is None or not load_optimum(state, optimum):
                try:
                    run_states([state], X, [y], range(X.shape[0]))
                except Interrupted:
                    # other problems may be learned already: no prefix model to keep
                    raise KeyboardInterrupt from None
                self.fit_paths_.append("incremental")
            else:
                self.fit_paths_.append(self.fit_method)

    # ------------------------------------------------------------------ safeguards
    @property
    def _snapshot_states(self):
        """One-vs-rest: the states are copied before each ``partial_fit`` call, so that a
        safeguard firing in one of them can bring all back to the same example (see
        :meth:`partial_fit`); one binary state rolls itself back."""
        return len(self.__dict__.get("_states", ())) > 1

    @locked
    def partial_fit(self, X, y, classes=None):
        """One pass over ``(X, y)``, continuing from the current model (see
        :meth:`refsvm.base.BaseOnlineClassifier.partial_fit`).

        If a safeguard fires at an example (:class:`ExactnessError`), the model is
        that of the stream up to the example before it -- every one-vs-rest problem
        alike -- and the error says how many of the call's examples were learned.
        Ctrl-C inside an increment rolls it back: :class:`Interrupted` then says how
        many examples the binary model learned (one-vs-rest: none, the model before
        the call)."""
        states = self.__dict__.get("_states")
        n0 = int(states[0].get_state()["n_seen"]) if states else 0
        try:
            return super().partial_fit(X, y, classes)
        except KeyboardInterrupt as exc:
            if isinstance(exc, Interrupted) or len(self.__dict__.get("_states", ())) != 1:
                raise
            # Ctrl-C inside an increment: the binary state rolled it back, and is the
            # model of the stream up to the example before it
            learned = int(self._states[0].get_state()["n_seen"]) - n0
            raise Interrupted(learned, len(y)) from exc
        except ExactnessError as exc:
            learned = max(exc.example - n0, 0)
            if len(self.__dict__.get("_states", ())) > 1 or not hasattr(self, "classes_"):
                # the states are those from before the call: learn the prefix again
                # (the same arithmetic, so the same model as in the failed call)
                if learned:
                    super().partial_fit(X[:learned], np.asarray(y)[:learned], classes)
            raise ExactnessError(
                f"{exc}. partial_fit learned {learned} of the call's {len(y)} examples: "
                "the model is the model of the stream up to there", exc.example) from None

    # ------------------------------------------------------------------ unlearning
    def _fitted(self):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "classes_")

    def unlearn(self, indices):
        """Remove learned examples exactly (decremental unlearning, Sec. 4).

        Parameters
        ----------
        indices : array-like of int
            Ids of the examples: 0-based positions in the order they were
            learned, counted over all ``fit``/``partial_fit`` calls.  Each must
            be learned and not yet unlearned; no repeats.

        Returns
        -------
        self

        Raises
        ------
        ExactnessError
            A safeguard fired at one of the ids: the ids before it are unlearned
            (in every one-vs-rest problem), it and those after it are not.
        """
        self._fitted()
        ids = check_unlearn_ids(indices, int(self._states[0].get_state()["n_seen"]),
                                self._states[0].active_ids()).astype(np.intp)
        backup = copy.deepcopy(self._states) if len(self._states) > 1 else None
        try:
            for state in self._states:
                state.unlearn(ids)
        except ExactnessError as exc:
            done = int(np.flatnonzero(ids == exc.example)[0])
            if backup is not None:           # every one-vs-rest problem at the same id
                self._states = backup
                for state in self._states:
                    state.unlearn(ids[:done])
            raise ExactnessError(
                f"{exc}. unlearn removed the first {done} of the {len(ids)} ids",
                exc.example) from None
        return self

    def loo_decisions(self):
        """Exact leave-one-out decision values f_{-i}(x_i) of every learned example.

        A support vector is unlearned, its decision value read off, and it is
        learned again (Cauwenberghs & Poggio, Sec. 4); an example of R is not
        a support vector, so f_{-i} = f.  The model is unchanged afterwards
        (up to round-off).

        Returns
        -------
        ids : ndarray of int
            The learned ids, ascending.
        decisions : ndarray of shape (n,) or (n, n_classes)
        """
        self._fitted()
        ids = self._states[0].active_ids()
        dec = [np.asarray(s.loo_decisions()) for s in self._states]
        return ids, (dec[0] if len(dec) == 1 else np.column_stack(dec))

    def loo_error(self, y):
        """Exact leave-one-out error rate, given the labels ``y`` of the learned ids
        (in ascending id order, as returned by :meth:`loo_decisions`)."""
        ids, dec = self.loo_decisions()
        y = np.asarray(y)
        if y.shape[0] != ids.shape[0]:
            raise ValueError(f"y has {y.shape[0]} labels for {ids.shape[0]} learned examples")
        if dec.ndim == 1:
            pred = self.classes_[(dec > 0).astype(int)]
        else:
            pred = self.classes_[np.argmax(dec, axis=1)]
        return float(np.mean(pred != y))

    # ------------------------------------------------------------------ SVC-like read-outs
    def _support_parts(self):
        self._fitted()
        return [s.support() for s in self._states]

    @property
    def intercept_(self):
        self._fitted()
        return np.array([s.get_state()["b"] for s in self._states])

    @property
    def n_support_(self):
        """Support vectors per class (each counted once, under its own label)."""
        parts = self._support_parts()
        ids = self._sv_ids(parts)
        ys = [np.asarray(s.get_state()["y"])[ids] for s in self._states]
        label = (ys[0] > 0).astype(int) if len(ys) == 1 else np.argmax(np.vstack(ys), axis=0)
        return np.bincount(label, minlength=len(self.classes_)).astype(np.int32)

    @property
    def max_inverse_drift_(self):
        self._fitted()
        return max(s.get_state()["max_inverse_drift"] for s in self._states)

