"""Scikit-learn estimator of the POKER family: :class:`POKER` (either twin)."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._exact_paths import ExactnessError, incremental_path, incremental_path_again
from ..core.kernels import stack_rows
from .._validation import (DeparturesRule, Integer, NonNegative, Options, Positive,
                           check_unlearn_ids)
from ..base import BaseKernelClassifier, SupportVectorsMixin, locked
from ..core.departures import is_paper_form, resolve
from . import poker as _reference_module
from .storage import load_optimum, optimum_of
from .departures import DEPARTURES
from .poker import SELECTIONS, CyclingError, PathError

__all__ = ["POKER", "ExactnessError"]

#: what a path can raise on degenerate data (SingularActiveSetError and
#: JointIncrementError are PathErrors): the estimator then tries the next path
_PATH_ERRORS = (CyclingError, PathError, ExactnessError)


class POKER(SupportVectorsMixin, BaseKernelClassifier):
    """Exact SVM with bias by parametric path following (Fine & Scheinberg's POKER).

    A C-SVC (hinge loss, bias, 0 <= alpha_i <= C) solved exactly by following
    piecewise-affine paths of its KKT system: ``fit`` is SelfInit POKER (the
    trivial partition, then the adjustable-bias method), or AltPOKER with
    selective sampling over the training set when ``selection`` is not
    ``"none"``; ``partial_fit`` adds one chunk of any size (by default the joint
    increment, see ``increment``; AltPOKER, Fig. 1 of the paper, on request);
    :meth:`unlearn` removes any set of learned examples at once.  After every
    call the model *is* the batch SVM of the examples learned so far (the one
    :class:`sklearn.svm.SVC` computes, up to its tolerance).

    Parameters
    ----------
    C : float, default=1.0
        Box constraint 0 <= alpha_i <= C.
    kernel : {"rbf", "linear", "poly"}, default="rbf"
    gamma : float or {"scale", "auto"}, default="scale"
        As in :class:`sklearn.svm.SVC`; "scale"/"auto" are resolved on the first
        batch and then kept.
    degree : int, default=3
    coef0 : float, default=0.0
    selection : {"none", "cls2w", "maxslk", "cls2w+dobj", "maxslk+dobj"}, default="none"
        ``fit`` with selective sampling (Sec. 5): the pool is ranked by Cls2W
        (closest to the hyperplane) or MaxSlk (largest slack); ``+dobj`` re-ranks
        the top ``n_candidates`` by the change of the objective after
        ``dobj_steps`` breakpoints of adding each; the top ``chunk_size`` are the
        next increment.  ``"none"``: SelfInit.
    chunk_size : int, default=1
        Increment size of selective sampling.
    n_candidates : int, default=10
        Candidates re-ranked by dObj (the paper does not print its count).
    dobj_steps : int, default=3
        Breakpoints of the dObj look-ahead (not printed either).
    cache_size : float, default=200.0
        Megabytes of kernel columns kept for examples that left the active set.
    increment : {"joint", "altpoker"}, default="joint"
        How ``partial_fit`` adds a chunk to the optimal model.  ``"altpoker"``:
        Fig. 1 of the paper, the fixed-bias path (b held) then the adjustable-bias
        path.  ``"joint"`` (beyond the paper; the multiple incremental path of
        Karasuyama & Takeuchi, 2009): the chunk's violators rise together from 0
        to C on one path with b adjustable and y'alpha = 0 kept.  Both end at the
        same exact SVM; the joint path passes 4-5x fewer breakpoints (10,000 rows
        of Gauss in chunks of 100: 25,864 against 115,291; a9a: 7,477 against
        41,452) and is the default for that reason.  Selective sampling
        (``selection``) keeps AltPOKER, whose breakpoint counts the paper prints.
    departures : None, "default", "paper" or dict, default=None
        The departures from the paper's printed method
        (:data:`refsvm.poker.departures.DEPARTURES`: the joint increment,
        the end check and polish, the bias centring, the regularisation of a singular
        Q_ss, duplicates, the refresh of the inverse, the column cache, and their
        tolerances).  ``"paper"`` runs Fig. 1, the adjustable-bias method and SelfInit
        exactly as printed: ``increment="joint"`` is then overridden by AltPOKER,
        :meth:`unlearn` runs with every departure off, and a path that cycles raises
        :class:`refsvm.poker.poker.CyclingError` instead of falling back to
        IncrementalSVM's path; the exactness check stays on as a guard (it changes no
        number): an end off the optimum raises :class:`ExactnessError`, the model as
        before the call.  A dict changes the named settings of the defaults (or
        of ``"paper"`` with ``"base": "paper"``).
    backend : {"cython", "python"}, default="cython"

    Attributes
    ----------
    classes_ : ndarray
    support_ : ndarray of int
        Ids of the support vectors (alpha > 0): 0-based positions in the order
        the examples were given, over all ``fit``/``partial_fit`` calls.
    support_vectors_ : ndarray or sparse matrix
    dual_coef_ : ndarray of shape (n_problems, n_SV)
        y_i alpha_i.
    intercept_ : ndarray of shape (n_problems,)
        SVC's sign: ``decision_function(x) = dual_coef_ @ k(support_vectors_, x)
        + intercept_``; POKER's own bias is ``b = -intercept_`` (f = w'phi(x) - b).
    n_support_ : ndarray of int
    n_iterations_ : int
        Breakpoints passed (the paper's iteration count), summed over the problems.
    n_kernel_evals_ : int
        Kernel evaluations spent learning (not predicting).
    fit_paths_ : list of str
        How ``fit`` solved each binary problem: ``"selfinit"``, ``"selective"``
        (``selection``), or ``"incremental"`` where SelfInit's (or selective sampling's)
        path cycled or ended off the optimum on degenerate data (copies, rows of zeros,
        a low-rank or nearly constant kernel) and the problem was learned by
        IncrementalSVM's path instead (the same model).

    Notes
    -----
    No inexact model is kept.  After every path (SelfInit, selective sampling, each
    chunk, each unlearning) the KKT conditions and y'alpha = 0 are checked at
    IncrementalSVM's levels (1e-9 of their scale; above C k_max = 1e5 at most 32
    round-off floors, y'alpha summed correctly rounded, the margin vectors' g afresh,
    and every g afresh after ``fit``, ``unlearn`` or a chunk that passed an exchange:
    :meth:`refsvm.poker.poker.POKERState.exactness`); an end that fails is refined
    once in doubled precision and checked again.  Degenerate data can make a
    path cycle, end off the optimum or meet a singular active set
    (:class:`refsvm.poker.poker.PathError`, :class:`ExactnessError`): ``fit`` then
    learns that problem by IncrementalSVM's path (Cauwenberghs & Poggio, one example
    at a time, whose degenerate-case handling learns those streams), ``partial_fit``
    learns the chunk again by AltPOKER and then by IncrementalSVM's path, from the
    model before the call, and ``unlearn`` removes the ids by IncrementalSVM's path.
    When that fails too, :class:`ExactnessError` is raised and the model is as before
    the call.  The paper form tries no other path and raises the first error.  Both
    families keep the same partition, margin columns and bordered inverse, so the end
    comes back into POKER's state without a new factorisation and is checked like the
    end of a chunk.
    More than two classes go one-vs-rest (one exact binary SVM per class).
    Fig. 1 starts from an optimal solution: the first chunk into an empty model is
    solved by SelfInit (the paper's batch method), every later one by the
    ``increment`` chosen.

    References
    ----------
    S. Fine and K. Scheinberg, "Incremental learning and selective sampling via
    parametric optimization framework for SVM", NIPS 14 (2001): KKT system Eq. 1,
    fixed-bias system Eq. 2, parametric system Eq. 3, the adjustable-bias method
    (Sec. 3), AltPOKER (Fig. 1), SelfInit and selective sampling (Sec. 5).

    Examples
    --------
    POKER's model is LIBSVM's, in one batch and after every chunk:

    >>> import numpy as np
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.svm import SVC
    >>> from refsvm.poker.estimators import POKER
    >>> X, y = make_classification(n_samples=80, n_features=4, random_state=0)
    >>> svc = SVC(C=1.0, gamma=0.5, tol=1e-10).fit(X, y)
    >>> batch = POKER(C=1.0, gamma=0.5).fit(X, y)
    >>> bool(np.allclose(batch.decision_function(X), svc.decision_function(X), atol=1e-6))
    True
    >>> inc = POKER(C=1.0, gamma=0.5)
    >>> for start in range(0, 80, 20):
    ...     _ = inc.partial_fit(X[start:start + 20], y[start:start + 20], classes=[0, 1])
    >>> bool(np.allclose(inc.decision_function(X), svc.decision_function(X), atol=1e-6))
    True
    >>> bool(np.array_equal(inc.support_, svc.support_[np.argsort(svc.support_)]))
    True

    Unlearning a chunk gives the SVM of the rest:

    >>> _ = inc.unlearn(np.arange(20))
    >>> rest = SVC(C=1.0, gamma=0.5, tol=1e-10).fit(X[20:], y[20:])
    >>> bool(np.allclose(inc.decision_function(X), rest.decision_function(X), atol=1e-6))
    True
    """

    _reference = _reference_module
    _compiled = "refsvm.poker._poker"

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 selection="none", chunk_size=1, n_candidates=10, dobj_steps=3,
                 cache_size=200.0, increment="joint", departures=None, backend="cython"):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.selection = selection
        self.chunk_size = chunk_size
        self.n_candidates = n_candidates
        self.dobj_steps = dobj_steps
        self.cache_size = cache_size
        self.increment = increment
        self.departures = departures
        self.backend = backend

    _parameter_rules = {"C": Positive(), "selection": Options(*SELECTIONS),
                        "chunk_size": Integer(minimum=1), "n_candidates": Integer(minimum=1),
                        "dobj_steps": Integer(minimum=1), "cache_size": NonNegative(),
                        "increment": Options("joint", "altpoker"),
                        "departures": DeparturesRule(DEPARTURES)}

    def _make_state(self, n_features, sparse, X):
        kind, gamma, degree, coef0 = self._kernel_args(X)
        return self._module().POKERState(
            n_features, sparse, C=float(self.C), kernel=kind, gamma=gamma, degree=degree,
            coef0=coef0, cache_size=float(self.cache_size), departures=self.departures)

    def _paper_form(self):
        """Whether ``departures`` is the printed method: no fallback to another path."""
        return is_paper_form(DEPARTURES, resolve(DEPARTURES, self.departures))

    def _fit_states(self, X, Ys):
        """SelfInit POKER, or AltPOKER with selective sampling over (X, y).  A problem
        on which SelfInit cycles or ends off the optimum (degenerate data) is learned by
        IncrementalSVM's path instead (:meth:`_by_incremental_svm`): the same model."""
        self.n_epochs_ = 1
        self.fit_paths_ = []
        for k, (state, y) in enumerate(zip(self._states, Ys)):
            try:
                if self.selection == "none":
                    state.self_init(X, y)
                    self._check_exact(state, "SelfInit")
                    self.fit_paths_.append("selfinit")
                else:
                    state.learn_selective(X, y, selection=self.selection,
                                          chunk_size=int(self.chunk_size),
                                          n_candidates=int(self.n_candidates),
                                          dobj_steps=int(self.dobj_steps))
                    self._check_exact(state, "selective sampling")
                    self.fit_paths_.append("selective")
            except _PATH_ERRORS:
                if self._paper_form():
                    raise                            # the printed method: no other path
                spent = state.n_kernel_evals
                self._states[k] = self._last_rung(
                    "fit", lambda: self._by_incremental_svm(None, X, y, spent))
                self.fit_paths_.append("incremental")

    @staticmethod
    def _last_rung(what, learn):
        """The last path of the ladder, IncrementalSVM's: its state, or
        :class:`ExactnessError` if it fails too (the caller rolls the model back)."""
        try:
            return learn()
        except _PATH_ERRORS as exc:
            raise ExactnessError(f"POKER: no path ended exact ({what}; IncrementalSVM's "
                                 f"path: {type(exc).__name__}: {exc}); the model is as "
                                 f"before the call") from exc

    def _check_exact(self, state, what, exchanges=None):
        """The exactness check at the end of a path (departure ``exact_check``,
        :meth:`refsvm.poker.poker.POKERState.exactness`, the same code for both twins): an
        end that fails it is refined once (``end_repair``) and checked again, else
        :class:`ExactnessError` (the caller tries the next path or rolls back).
        ``exchanges``: the state's exchange count before a chunk's path; the g off I_s
        are recomputed when it changed, else read from the kept g (the chunk paths
        update them by the exact rates); None (fit, unlearn, IncrementalSVM's path: one
        O(n #SV) pass per call): always recomputed."""
        if not state.departures["exact_check"]:
            return
        fresh = exchanges is None or state.n_exchanges != exchanges
        failure = state.exactness(fresh)
        if failure is not None and state.departures["end_repair"]:
            state._polish(force=True)
            failure = state.exactness(fresh)
        if failure is not None:
            raise ExactnessError(f"POKER: {what} ended off the optimum: {failure}")

    #: a chunk is one path-following run: a failed or interrupted call restores the
    #: model before the chunk (base ``partial_fit``), from the states' own exact copy
    _snapshot_states = True
    _atomic_calls = True

    def _backup_states(self):
        return [state._backup() for state in self._states]

    #: how the current ``partial_fit`` chunk is learned: None (``increment``), or after a
    #: failure "altpoker" and then "incremental" (:meth:`partial_fit`)
    _fallback = None

    def _learn(self, X, Ys, check):
        for k, (state, yy) in enumerate(zip(self._states, Ys)):
            if self._fallback == "incremental":
                self._states[k] = self._by_incremental_svm(state, X, yy, 0)
            else:
                joint = (self.increment == "joint" and self._fallback is None
                         and state.departures["joint_increment"])
                before = state.n_exchanges
                what = ("SelfInit" if not np.any(state.status[:state.n] >= 0)
                        else "the joint increment" if joint else "AltPOKER")
                state.add_chunk(X, yy, joint=joint)
                self._check_exact(state, what, before)

    def _by_incremental_svm(self, state, X, y, spent, unlearn=None):
        """A POKER state holding the exact SVM of ``state``'s examples (or of none) and
        then (X, y), learned one example at a time by IncrementalSVM's path (Cauwenberghs
        & Poggio, ``refsvm.idsvm``, the same backend), whose degenerate-case handling
        learns the streams on which POKER's paths cycle; or (``unlearn``: ids, X None)
        ``state``'s SVM less those examples, unlearned by that path.  Both families keep
        the same exact optimum (the core's layout, :mod:`refsvm.core.optimum`): ``state``
        is handed over in it (:func:`refsvm.poker.storage.optimum_of`; that family's start
        accepts it or not), and the end comes back in it
        (:func:`refsvm.poker.storage.load_optimum`) without a new factorisation and is
        checked as the end of a chunk.  Where ``state`` cannot be carried over (not exact
        to that family's tolerance, or margin vectors at their bounds: RBF gamma = 1e-9,
        C = 1e9), its stored rows are learned again by that path from the empty model
        (:func:`refsvm._exact_paths.incremental_path_again`, the same ids).  ``spent``:
        kernel evaluations of a failed path, added to the count."""
        template = state if state is not None else self._make_state(X.shape[1], self._sparse_, X)
        params = template.init_params()
        n_chunks = 0 if state is None else state.n_chunks
        optimum = (optimum_of(state) if state is not None and state.get_state()["n_seen"]
                   else None)
        data = incremental_path(self.backend, params, optimum, X, y, unlearn)
        if data is None:
            # the model cannot be carried over (not exact to that family's tolerance, or
            # margin vectors at their bounds): its stored rows are learned again from the
            # empty model, the unlearned ones unlearned again (the same ids), then the call
            rows = stack_rows(state.rows[:state.n], params["n_features"], params["sparse"])
            gone = np.flatnonzero(state.status[:state.n] < 0)
            data = incremental_path_again(self.backend, params, rows, state.y[:state.n],
                                          gone, X, y, unlearn)
            spent += state.n_kernel_evals
        if unlearn is None:
            n_chunks += 1                               # an unlearning is no chunk
        out = type(template)(**params)
        load_optimum(out, data, n_chunks, spent)
        out._check_end("IncrementalSVM's path")
        self._check_exact(out, "IncrementalSVM's path")
        return out

    def partial_fit(self, X, y, classes=None):
        """Add ``(X, y)`` as one chunk (the joint increment, or AltPOKER's Fig. 1 with
        ``increment="altpoker"``): the model afterwards is the exact SVM of every
        example learned so far.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, optional
            All the labels; required on the first call.

        Returns
        -------
        self

        Notes
        -----
        The call is atomic: if it raises, or Ctrl-C interrupts it
        (:class:`refsvm.core.stream.Interrupted` with ``n_learned == 0``), the model is
        exactly what it was before the call.  A chunk the joint increment cannot learn
        exactly (:class:`refsvm.poker.poker.JointIncrementError`: degenerate data, see
        the docs; or an end that fails the exactness check, :class:`ExactnessError`) is
        learned again by AltPOKER from the model before the call, and if AltPOKER's paths
        cycle or end off the optimum too, by IncrementalSVM's path.  If that fails as
        well, :class:`ExactnessError` (the model as before the call).  The paper form
        tries no other path: the first error is raised.
        """
        ladder = (["altpoker"] if self.increment == "joint" else []) + ["incremental"]
        failures = []
        try:
            try:
                return super().partial_fit(X, y, classes=classes)
            except _PATH_ERRORS as exc:
                if self._paper_form():
                    raise                            # the printed method: no other path
                failures.append((self.increment, exc))
            for rung in ladder:
                self._fallback = rung
                try:
                    return super().partial_fit(X, y, classes=classes)
                except _PATH_ERRORS as exc:
                    failures.append((rung, exc))
            raise ExactnessError("POKER: no path learned the chunk exactly (" + "; ".join(
                f"{rung}: {type(exc).__name__}: {exc}" for rung, exc in failures)
                + "); the model is as before the call") from failures[-1][1]
        finally:
            self.__dict__.pop("_fallback", None)

    # ------------------------------------------------------------------ decrement
    @locked
    def unlearn(self, indices):
        """Remove learned examples at once, exactly (chunk decrement): their bounds
        c_i are driven to 0 by the parametric method.

        Parameters
        ----------
        indices : array-like of int
            Ids: 0-based positions in the order the examples were given, over all
            ``fit``/``partial_fit`` calls.  Each must be learned and not yet
            unlearned; no repeats.

        Returns
        -------
        self

        Notes
        -----
        Atomic: a decrement that cycles or ends off the optimum is done by
        IncrementalSVM's path from the model before the call; if that fails too,
        :class:`ExactnessError` and the model as before the call.
        """
        check_is_fitted(self, "classes_")
        ids = check_unlearn_ids(indices, int(self._states[0].get_state()["n_seen"]),
                                self._states[0].active_ids()).astype(np.intp)
        backup = self._backup_states()
        try:
            for k, state in enumerate(self._states):
                try:
                    state.unlearn(ids)
                    self._check_exact(state, "the chunk decrement")
                except _PATH_ERRORS:
                    if self._paper_form():
                        raise                        # the printed method: no other path
                    # degenerate data: the same decrement by IncrementalSVM's path, from
                    # the model before the call
                    self._states[k] = self._last_rung(
                        "unlearning", lambda: self._by_incremental_svm(
                            backup[k], None, None, 0, unlearn=ids))
        except BaseException:
            self._states = backup                # atomic: the model before the call
            raise
        return self

    # ------------------------------------------------------------------ read-outs
    @property
    def n_iterations_(self):
        check_is_fitted(self, "classes_")
        return int(sum(s.n_iterations for s in self._states))

    def _support_parts(self):
        check_is_fitted(self, "classes_")
        return [s.support() for s in self._states]

    @property
    def intercept_(self):
        check_is_fitted(self, "classes_")
        return np.array([-s.get_state()["b"] for s in self._states])

    @property
    def n_support_(self):
        parts = self._support_parts()
        ids = self._sv_ids(parts)
        ys = [np.asarray(s.get_state()["y"])[ids] for s in self._states]
        label = (ys[0] > 0).astype(int) if len(ys) == 1 else np.argmax(np.vstack(ys), axis=0)
        return np.bincount(label, minlength=len(self.classes_)).astype(np.int32)
