"""The scikit-learn layer shared by every refsvm classifier.

A refsvm estimator is a thin shell around one *state* object per binary
problem (one for two classes, one per class for one-vs-rest when there are
more).  A state is the algorithm itself: the pure-Python reference or its
compiled twin, both with the same interface::

    state.step(x, y)            # one example: dense 1-D row or SparseRow, y = +-1
    state.run(X, y, order)      # the whole stream, rows taken in `order`
    state.decision_function(X)  # f(x) for every row
    state.get_state()           # dict of arrays/scalars, for comparing twins

The shell validates parameters and data, maps labels to +-1, chooses the
backend (``backend="cython"`` never falls back to Python silently), orders the
stream (``shuffle``/``random_state``), and makes ``partial_fit`` atomic: on any
error the estimator is left exactly as it was before the call.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import os
import threading
import weakref

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._blas_threads import one_blas_thread
from ._validation import (
    BACKENDS,
    Options,
    as_format,
    check_magnitude,
    check_params,
    check_sparse_structure,
    kernel_rules,
    load_backend,
    magnitude_limit,
)
from .core.stream import BadRow, Interrupted, deferred_signals, run_states


def _estimator_lock(est):
    """The estimator's lock, made on first use (and registered for the at-fork reset)."""
    lock = est.__dict__.get("_lock")
    if lock is None:
        with _LOCKS_GUARD:
            lock = est.__dict__.get("_lock")
            if lock is None:
                lock = est.__dict__["_lock"] = threading.RLock()
                _LOCKED.add(est)
    return lock


#: the learning calls: run with BLAS on one thread (``refsvm/_blas_threads.py``)
_LEARNING = {"fit", "partial_fit", "unlearn", "loo_decisions", "loo_error", "run"}


def locked(method):
    """Run ``method`` under the estimator's lock: one estimator used from several threads
    learns and predicts one call at a time (separate estimators run in parallel).  The
    learning calls (``_LEARNING``) also run with BLAS on one thread."""

    if getattr(method, "__refsvm_locked__", False):
        return method

    blas = one_blas_thread if method.__name__ in _LEARNING else contextlib.nullcontext

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with _estimator_lock(self), blas():
            return method(self, *args, **kwargs)

    wrapper.__refsvm_locked__ = True
    return wrapper


#: every estimator that has a lock (weakly: the set does not keep them alive)
_LOCKED = weakref.WeakSet()
_LOCKS_GUARD = threading.Lock()
_HELD_AT_FORK = []


def _before_fork():
    """Take every estimator's lock before ``fork``, so that the child's copy of each model
    is one that no call was half-way through (a call under way finishes first; no refsvm
    call holds one estimator's lock while it waits for another's)."""
    with _LOCKS_GUARD:
        estimators = list(_LOCKED)
    for est in estimators:
        lock = est.__dict__.get("_lock")
        if lock is not None:
            lock.acquire()
            _HELD_AT_FORK.append(lock)


def _after_fork_in_parent():
    while _HELD_AT_FORK:
        _HELD_AT_FORK.pop().release()


def _after_fork_in_child():
    """The child gets fresh locks (the parent's threads do not exist in it)."""
    global _LOCKS_GUARD
    _HELD_AT_FORK.clear()
    for est in list(_LOCKED):
        if "_lock" in est.__dict__:
            est.__dict__["_lock"] = threading.RLock()
    _LOCKS_GUARD = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)


def _lock_public_members(cls):
    """Wrap every public method and property of the refsvm classes in ``cls``'s MRO with
    the estimator's lock (read-outs such as ``support_`` and ``dual_coef_``, ``unlearn``,
    ``loo_decisions``, ``save``, ...), so that no family has to remember to."""
    for klass in cls.__mro__:
        if not klass.__module__.startswith("refsvm"):
            continue
        for name, value in list(vars(klass).items()):
            if name.startswith("_") or name in cls.__dict__ and klass is not cls:
                continue
            if name in _UNLOCKED:
                continue
            if isinstance(value, property) and value.fget is not None:
                if not getattr(value.fget, "__refsvm_locked__", False):
                    setattr(cls, name, property(locked(value.fget), value.fset, value.fdel,
                                                value.__doc__))
            elif inspect.isfunction(value) and not getattr(value, "__refsvm_locked__", False):
                setattr(cls, name, locked(value))


#: public members that need no lock (they touch no learned state)
_UNLOCKED = {"get_params", "set_params", "get_metadata_routing", "set_fit_request",
             "set_partial_fit_request", "set_score_request", "set_predict_request"}

def _compiled_two_values():
    """``refsvm._core.two_values`` (one compiled read of y), or None when the core is not
    built (the pure-Python backend needs no compiled module)."""
    global _two_values
    if _two_values is False:
        try:
            from ._core import two_values as found
        except ImportError:
            found = None
        _two_values = found
    return _two_values


_two_values = False


def unique_labels(y):
    """``np.unique(y)``, in O(n) without a sort when y holds at most two distinct numbers
    (the common binary stream: one compiled read of a float64 or int64 y, else four NumPy
    reads); any other y goes through ``np.unique``."""
    two = _compiled_two_values()
    if two is not None:
        labels = two(y)
        if labels is not None:
            return labels
    if y.dtype.kind in "fiu" and y.size:
        lo, hi = y.min(), y.max()
        if lo == hi:
            return np.array([lo], dtype=y.dtype)
        if np.count_nonzero(y == lo) + np.count_nonzero(y == hi) == y.size:
            return np.array([lo, hi], dtype=y.dtype)
    return np.unique(y)


def check_target_labels(labels):
    """``check_classification_targets`` on the distinct labels of y (the type of a 1-D
    target is that of its distinct values): integers, or integral floats below 2**53, are
    binary or multiclass without asking scikit-learn (whose type detection costs about
    half a millisecond, more than a pass over a small batch); anything else is judged by
    scikit-learn."""
    if labels.ndim == 1 and labels.size and (labels.dtype.kind in "iu" or (
            labels.dtype.kind == "f" and bool(np.all(np.abs(labels) < 2.0**53))
            and bool(np.all(labels == np.floor(labels))))):
        return
    check_classification_targets(labels)


#: How every estimator takes X: CSR or dense, float64, C order, finite.
#: (finiteness is checked by check_magnitude, in the same reads as the overflow bound)
_ARRAY_CHECKS = dict(accept_sparse="csr", dtype=np.float64, order="C", ensure_all_finite=False)


def _plain_xy(X, y):
    """True when scikit-learn's validation (``_ARRAY_CHECKS``, 1-D target) would return X
    and y unchanged and raise nothing: X a C-contiguous float64 ndarray or a float64
    ``csr_matrix``, at least one row and one column, y a 1-D integer or float ndarray of
    the same length (a float y must still be finite: see ``_validate_xy``)."""
    if type(y) is not np.ndarray or y.ndim != 1 or y.dtype.kind not in "iuf":
        return False
    if type(X) is np.ndarray:
        if X.ndim != 2 or X.dtype != np.float64 or not X.flags.c_contiguous:
            return False
    elif type(X) is sp.csr_matrix:
        if X.dtype != np.float64 or len(X.shape) != 2:
            return False
    else:
        return False
    return X.shape[0] == y.shape[0] and X.shape[0] >= 1 and X.shape[1] >= 1


#: the row check's limit for "any finite value" (|x| <= max_float fails only for NaN, inf)
FLOAT_MAX = float(np.finfo(np.float64).max)


class _StateData(tuple):
    """A state as pickled inside an estimator: (class, init_params, save_state data)."""

    __slots__ = ()

    def __new__(cls, state_cls, params, data):
        return super().__new__(cls, (state_cls, params, data))

    def __reduce__(self):
        return (_StateData, tuple(self))

    cls = property(lambda self: self[0])
    params = property(lambda self: self[1])
    data = property(lambda self: self[2])


def _checked_state(state):
    """A state unpickled whole (a pickle of an older refsvm): checked by its validator."""
    from ._state_checks import check_state

    if not hasattr(state, "save_state"):
        raise ValueError(f"unpickled estimator: {type(state).__name__} is not a state")
    check_state(type(state).__name__, state.init_params(), state.save_state(),
                where=f"unpickled {type(state).__name__}")
    return state


class BaseOnlineClassifier(ClassifierMixin, BaseEstimator):
    """Base class: ``fit``, ``partial_fit``, ``decision_function``, ``predict``.

    Subclasses declare

    - ``_parameter_rules``: a dict from each hyper-parameter to its rule
      (:mod:`refsvm._validation`: ``Positive()``, ``Integer(minimum=0)``, ``Options(...)``,
      ...); the rules of every class in the MRO are merged and checked once, by
      ``_check_params``, at the start of ``fit`` and ``partial_fit`` (override
      ``_check_params`` only to add checks that involve several parameters);

    and implement

    - ``_make_state(self, n_features, sparse, X)``: a fresh state for one
      binary problem (``X`` is the first batch, for data-derived settings);
    - optionally ``_n_passes()``, ``_end_of_pass(state)`` and
      ``_converged(n_changes)`` to shape the passes of ``fit``.

    ``_reference`` (a module) and ``_compiled`` (a dotted module name) say
    where the twins live.
    """

    _reference = None
    _compiled = None
    _parameter_rules = {"backend": Options(*BACKENDS)}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _lock_public_members(cls)
    #: Deep-copy the states before each ``partial_fit`` so that an error
    #: raised inside the algorithm can be rolled back.  Kernel models whose
    #: state grows with the stream turn this off; their inputs are fully
    #: validated before any state changes.
    _snapshot_states = True
    #: Check X inside the learning pass instead of before it (``fit``/``partial_fit``):
    #: the states' ``run_checked`` tests each row as it reads it (finite, below the
    #: magnitude bound, CSR indices in range) and stops at the first bad row; the
    #: estimator then restores the model saved before the call (``_snapshot_states``)
    #: and raises the error of the usual check.  One read of X instead of three, for
    #: models that read X only through ``run`` (the linear ones: O(d) snapshots).
    _fused_input_check = False
    #: A ``partial_fit`` call is one indivisible run (POKER's chunk is one path-following
    #: run, whose intermediate states are no model of a prefix of the stream): an
    #: interrupt puts back the model before the call and raises ``Interrupted(0, n)``.
    _atomic_calls = False
    #: Accept any finite value of X, as scikit-learn does, instead of bounding |x_j| by
    #: ``magnitude_limit`` (which keeps squared norms and kernel distances finite): the
    #: linear models compute no kernel distance, and their compiled pass then proves a
    #: dense row finite from <w, x> alone (``row_bad_by_dot``; the row check's limit is
    #: then the largest float, ``FLOAT_MAX``).  An overflow of their
    #: arithmetic is caught after the pass instead (``_check_learned``): the call raises
    #: and the model is restored.
    _finite_input_only = False

    @classmethod
    def _get_param_names(cls):
        """scikit-learn's parameter names (from the signature of ``__init__``), read once
        per class: ``get_params`` runs in every ``fit`` and ``partial_fit``, and
        ``inspect.signature`` costs tens of microseconds each time."""
        names = cls.__dict__.get("_param_names")
        if names is None:
            names = tuple(super()._get_param_names())
            cls._param_names = names
        return list(names)

    # ------------------------------------------------------------------ hooks
    def _backup_states(self):
        """A copy of the states that ``partial_fit`` restores if the call fails (default:
        a deep copy; a family with a cheaper exact copy overrides it)."""
        return copy.deepcopy(self._states)

    def _learn(self, X, Ys, check):
        """Learn the call's X (in the model's format) with one encoded label array per
        state (default: one pass of the stream driver)."""
        run_states(self._states, X, Ys, range(X.shape[0]), check=check)

    @classmethod
    def _all_parameter_rules(cls):
        """The declared rules of this class and its bases (subclasses override)."""
        rules = {}
        for klass in reversed(cls.__mro__):
            rules.update(klass.__dict__.get("_parameter_rules", {}))
        return rules

    def _check_params(self):
        """Check every declared hyper-parameter (a clear ValueError on the first bad one)."""
        check_params(self, self._all_parameter_rules())

    def _make_state(self, n_features, sparse, X):
        raise NotImplementedError

    def _n_passes(self):
        return 1

    def _fit_states(self, X, Y):
        """Passes of ``fit`` over the data; sets ``n_epochs_``."""
        rng = None  # made for the first shuffled pass only (seeding a RandomState is not free)
        self.n_epochs_ = 0
        for epoch in range(self._n_passes()):
            if rng is None and getattr(self, "shuffle", False):
                rng = check_random_state(getattr(self, "random_state", None))
            order = self._order(X.shape[0], rng)
            # the first pass checks every row as it reads it (see _fused_input_check)
            check = self.__dict__.pop("_pending_check", None)
            changes = run_states(self._states, X, Y, order, epoch=epoch, check=check)
            for state in self._states:
                self._end_of_pass(state)
            self.n_epochs_ += 1
            if self._converged(changes):
                break

    def _end_of_pass(self, state):
        """Hook run on each state after each pass of ``fit`` (default: nothing)."""

    def _converged(self, n_changes):
        """Hook: stop ``fit`` early after a pass that changed the model ``n_changes``
        times (default: never; all ``_n_passes()`` are made)."""
        return False

    # ------------------------------------------------------------------ helpers
    def _order(self, n, rng):
        """The order of a pass: a permutation (``shuffle``), else ``range(n)`` (no array of
        n row numbers: the compiled driver takes a range as it is)."""
        if getattr(self, "shuffle", False):
            return rng.permutation(n).astype(np.intp)
        return range(n)

    def _module(self):
        return load_backend(self.backend, self._reference, self._compiled)

    def _validate_X(self, X, reset):
        check_sparse_structure(X)
        X = validate_data(self, X, reset=reset, **_ARRAY_CHECKS)
        check_magnitude(X, self._value_limit(X.shape[1]))
        return X

    def _value_limit(self, n_features):
        """The largest |x_j| accepted: ``magnitude_limit``, or the largest float (any
        finite value: |x_j| <= max_float is false for NaN and infinities) for the
        estimators with ``_finite_input_only``."""
        return FLOAT_MAX if self._finite_input_only else magnitude_limit(n_features)

    def _check_values(self, X):
        """The input checks that a fused pass makes row by row, here in two reads of X:
        the range of the CSR indices, then NaN, infinity and the magnitude bound."""
        check_sparse_structure(X)
        check_magnitude(X, self._value_limit(X.shape[1]))

    def _check_learned(self, X):
        """Hook run after the learning of ``fit`` and ``partial_fit``, inside the call (an
        error restores the model): default nothing; see ``_finite_input_only``."""

    def _prepare_input(self, X, deferred):
        """X in the model's format.  ``deferred``: the values (and CSR index range) of X
        are not checked yet; they are checked here when X must be converted first (the
        checks then see the data as given, as without fusing), else the limit the compiled
        pass checks each row against is kept in ``_pending_check``."""
        self.__dict__.pop("_pending_check", None)
        if deferred and sp.issparse(X) != self._sparse_:
            self._check_values(X)  # converting between formats reads every entry
            deferred = False
        Xc = as_format(X, self._sparse_)
        if deferred and (Xc is not X or (sp.issparse(X) and X.data.shape[0] != X.indptr[-1])):
            self._check_values(X)  # converted (or stored values beyond the rows): check X
            deferred = False
        if deferred:
            self._pending_check = self._value_limit(X.shape[1])
        return Xc

    def _raise_input_error(self, X, exc):
        """After a fused check stopped at a bad row (``exc``, a BadRow) or another error
        came first: raise the error the checks before the pass give on X (same message as
        without fusing); nothing when X is fine, or re-raise a BadRow."""
        if X is None:
            return
        try:
            self._check_values(X)
        except ValueError as err:
            raise err from None
        if isinstance(exc, BadRow):
            raise ValueError(f"{exc} (a value is not finite or too large, or a column "
                             "index is out of range)") from None

    def _encode(self, y):
        """+-1 targets, one row per binary problem."""
        if len(self.classes_) == 2:
            if (y.dtype == np.float64 and self.classes_[0] == -1.0 and self.classes_[1] == 1.0
                    and self.classes_.dtype.kind == "f"):
                return [np.ascontiguousarray(y)]  # already the +-1 targets (read only)
            return [np.where(y == self.classes_[1], 1.0, -1.0)]
        return [np.where(y == c, 1.0, -1.0) for c in self.classes_]

    def _validate_xy(self, X, y, reset, defer=False):
        """Checked X and y, and the distinct labels of y.  ``defer``: leave the values of X
        (and the range of CSR column indices) to the learning pass
        (``_fused_input_check``).

        X and y that scikit-learn's validation would pass through unchanged
        (``_plain_xy``: a C-contiguous float64 array or CSR matrix, a 1-D numeric y) skip
        it: only the checks it would make on them are made (feature names and count; y
        finite, through the extremes that ``unique_labels`` reads anyway), and the type
        of target is judged on the distinct labels (``check_target_labels``), so a fast
        estimator spends microseconds, not a millisecond, before its pass."""
        check_sparse_structure(X, index_range=not defer)
        if _plain_xy(X, y):
            self._check_n_features_plain(X, y, reset)
            labels = unique_labels(y)
            if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
                # NaN or infinity in y: scikit-learn's validation words the error
                X, y = validate_data(self, X, y, reset=reset, y_numeric=False, **_ARRAY_CHECKS)
            if not defer:
                check_magnitude(X, self._value_limit(X.shape[1]))
        else:
            X, y = validate_data(self, X, y, reset=reset, y_numeric=False, **_ARRAY_CHECKS)
            if not defer:
                check_magnitude(X, self._value_limit(X.shape[1]))
                check_classification_targets(y)
                return X, y, unique_labels(y)
            labels = unique_labels(y)
        try:
            # the type of target is that of its distinct values (1-D y): no sort of y
            check_target_labels(labels)
        except ValueError:
            self._check_values(X)  # a bad X is reported first, as without deferring
            raise
        return X, y, labels

    def _check_n_features_plain(self, X, y, reset):
        """What scikit-learn's ``validate_data(..., skip_check_array=True)`` does for an X
        without feature names (an ndarray or CSR matrix, ``_plain_xy``): record
        ``n_features_in_`` (``reset``) or compare with it.  Its own call (a few tens of
        microseconds of tag and data-frame look-ups) words every other case: a model fitted
        with feature names, a different number of features."""
        if "feature_names_in_" in self.__dict__ or not (
                reset or self.__dict__.get("n_features_in_") == X.shape[1]):
            validate_data(self, X, y, reset=reset, skip_check_array=True)
            return
        if reset:
            self.n_features_in_ = X.shape[1]

    def _check_params_unchanged(self):
        """Between ``partial_fit`` calls a hyper-parameter change would be silently
        ignored by the states already built: refuse it, except ``backend``, whose change
        takes effect by moving every state to the other twin (same numbers)."""
        now = self.get_params(deep=False)
        for name, before in self._start_params.items():
            if name == "backend" or name not in now:
                continue
            try:
                same = bool(now[name] == before) or now[name] is before
            except Exception:  # noqa: BLE001 - uncomparable values: judge by identity
                same = now[name] is before
            if not same:
                raise ValueError(
                    f"{name} changed from {before!r} to {now[name]!r} after the first "
                    "partial_fit call; the model was built with the old value. Call fit to "
                    f"start again, or set {name} back to go on"
                )
        if now["backend"] != self._start_params["backend"]:
            self._states = [self._convert_state(s) for s in self._states]
            self._start_params = {**self._start_params, "backend": now["backend"]}

    def _convert_state(self, state):
        """The same state in the twin of the current backend (persistence protocol)."""
        cls = getattr(self._module(), type(state).__name__)
        new = cls(**state.init_params())
        new.load_state(state.save_state())
        return new

    def _start(self, X, classes):
        classes = np.unique(classes)
        if classes.shape[0] < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least two classes; got only "
                f"{classes.shape[0]} class ({classes.tolist()})"
            )
        self.classes_ = classes
        self._sparse_ = sp.issparse(X)
        self._start_params = self.get_params(deep=False)
        n_problems = 1 if classes.shape[0] == 2 else classes.shape[0]
        self._states = [
            self._make_state(X.shape[1], self._sparse_, X) for _ in range(n_problems)
        ]

    # ------------------------------------------------------------------ public API
    @locked
    def fit(self, X, y):
        """Train from scratch on ``(X, y)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        saved = self.__dict__.copy()
        unchecked = None  # X whose values the pass checks (see _fused_input_check)
        try:
            self._check_params()
            X, y, labels = self._validate_xy(X, y, reset=True, defer=self._fused_input_check)
            unchecked = X if self._fused_input_check else None
            self._start(X, labels)
            X = self._prepare_input(X, unchecked is not None)
            if "_pending_check" not in self.__dict__:
                unchecked = None
            self._fit_states(X, self._encode(y))
            self._check_learned(X)
        except Interrupted as exc:
            # the model of the stream up to the interruption (see partial_fit), if sound
            self._keep_interrupted(saved, None, X, exc)
            raise
        except BaseException as exc:
            self._restore(saved, None)
            if isinstance(exc, ValueError):
                self._raise_input_error(unchecked, exc)  # a bad X is reported first
            raise
        finally:
            self.__dict__.pop("_pending_check", None)
        return self

    def _keep_interrupted(self, saved, states, X, exc):
        """An interrupted call keeps the model of the stream up to the interruption,
        unless that model failed ``_check_learned`` (an overflow before the interrupt):
        then the estimator is put back as it was and the check's error is raised."""
        if "_states" not in self.__dict__:
            return
        try:
            self._check_learned(X)
        except ValueError as err:
            self._restore(saved, states)
            raise err from exc

    def _restore(self, saved, states):
        """Put the estimator back as it was (signals held back meanwhile)."""
        with deferred_signals():
            lock = self.__dict__.get("_lock")
            self.__dict__.clear()
            self.__dict__.update(saved)
            if lock is not None:
                self.__dict__["_lock"] = lock
            if states is not None:
                self._states = states

    @locked
    def partial_fit(self, X, y, classes=None):
        """One pass over ``(X, y)``, continuing from the current model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, optional
            All the labels the stream can contain.  Required on the first
            call (as in scikit-learn); on later calls it must match.

        Returns
        -------
        self

        Notes
        -----
        The call is atomic: if it raises (bad data, a label outside
        ``classes``, a change in the number of features or of a hyper-parameter,
        ...), the model is exactly what it was before the call.  Changing
        ``backend`` between calls moves the model to the other twin.

        Ctrl-C (or an alarm) is answered at an example boundary within a few
        hundredths of a second: :class:`refsvm.core.stream.Interrupted` (a
        ``KeyboardInterrupt``) says how many examples of the call were learned, and
        the model is then exactly the model of the stream up to that example, in
        every one-vs-rest problem.  A single step that has run long (about 0.25 s,
        ``refsvm.core.stream.LONG_STEP``) answers inside itself
        (``tests/test_step_interrupts.py``): IncrementalSVM rolls it back (its binary
        model is then that of the examples before it; one-vs-rest: the model before the
        call), OnlineRampSVM cuts the update short (see
        :mod:`refsvm.ramp.departures.step_budget`).  StreamSVM answers inside any
        lookahead solve of 102 points or more (``lookahead >= 101``), with the model
        before the call.
        """
        saved = self.__dict__.copy()
        backup, n_call = None, 0
        unchecked = None  # X whose values the pass checks (see _fused_input_check)
        try:
            self._check_params()
            first = not hasattr(self, "classes_")
            if first and classes is None:
                raise ValueError(
                    "classes must be passed on the first call to partial_fit "
                    "(all the labels the stream can contain)"
                )
            fused = self._fused_input_check and self._snapshot_states
            X, y, labels = self._validate_xy(X, y, reset=first, defer=fused)
            unchecked = X if fused else None
            if first:
                self._start(X, classes)
            elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
                raise ValueError(
                    f"classes={np.unique(classes).tolist()} differs from the classes of the "
                    f"first partial_fit call, {self.classes_.tolist()}"
                )
            if not first:
                self._check_params_unchanged()
            unknown = np.setdiff1d(labels, self.classes_)
            if unknown.size:
                raise ValueError(
                    f"y contains labels not in classes {self.classes_.tolist()}: "
                    f"{unknown.tolist()}"
                )
            X = self._prepare_input(X, unchecked is not None)
            check = self.__dict__.pop("_pending_check", None)
            if check is None:
                unchecked = None
            if self._snapshot_states and not first:
                backup = self._backup_states()
            n_call = X.shape[0]
            self._learn(X, self._encode(y), check)
            self._check_learned(X)
        except KeyboardInterrupt as exc:
            if isinstance(exc, Interrupted) and not self._atomic_calls:
                self._keep_interrupted(saved, backup, X, exc)
                raise  # keep the model of the stream up to the interruption
            self._restore(saved, backup)
            if n_call and (self._atomic_calls or backup is not None or first):
                # inside a step (a family that answers Ctrl-C there, or an atomic call):
                # the model before the call
                raise Interrupted(0, n_call) from exc
            raise
        except BaseException as exc:
            self._restore(saved, backup)
            if isinstance(exc, ValueError):
                self._raise_input_error(unchecked, exc)  # a bad X is reported first
            raise
        return self

    @locked
    def decision_function(self, X):
        """Signed distance-like score f(x); shape (n,) for two classes, (n, K) otherwise."""
        check_is_fitted(self, "classes_")
        X = as_format(self._validate_X(X, reset=False), self._sparse_)
        scores = [np.asarray(s.decision_function(X), dtype=np.float64) for s in self._states]
        if len(scores) == 1:
            return scores[0]
        return np.column_stack(scores)

    def predict(self, X):
        """Class labels: sign of f for two classes, arg-max over one-vs-rest otherwise."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    @locked
    def save(self, path):
        """Write the fitted model to ``path`` (``.npz``: arrays and JSON, no code).

        Load it with :func:`refsvm.load` (``backend=`` picks either twin: train with the
        compiled twin, then step through the readable reference from exactly that state).
        """
        from .persistence import save

        return save(self, path)

    def __getstate__(self):
        """The estimator's attributes without its lock; the states as plain data (class,
        ``init_params()``, ``save_state()``), which ``__setstate__`` checks with the
        states' validators before building them."""
        with _estimator_lock(self):
            state = dict(super().__getstate__())
            state.pop("_lock", None)
            if "_states" in state:
                state["_states"] = [_StateData(type(s), s.init_params(), s.save_state())
                                    for s in state["_states"]]
        return state

    def __setstate__(self, state):
        from .core.stream import restore_state

        state = dict(state)
        states = state.get("_states")
        if states is not None:
            if not isinstance(states, list):
                raise ValueError(f"unpickled {type(self).__name__}: _states is not a list")
            state["_states"] = [
                restore_state(s.cls, s.params, s.data) if isinstance(s, _StateData)
                else _checked_state(s) for s in states]
        super().__setstate__(state)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class BaseKernelClassifier(BaseOnlineClassifier):
    """Base of the kernel estimators: kernel parameters and evaluation counts.

    Subclasses declare ``kernel``, ``gamma``, ``degree`` and ``coef0`` in their
    ``__init__``; ``self._kernel_args(X)`` gives the resolved
    ``(kind, gamma, degree, coef0)`` for a new state (gamma "scale"/"auto" is
    resolved on the first batch and then fixed, as ``self._gamma_``).
    States expose ``n_kernel_evals``; the estimator sums them in
    ``n_kernel_evals_``.
    """

    _snapshot_states = False
    _parameter_rules = kernel_rules()

    def _start(self, X, classes):
        # gamma "scale"/"auto" is resolved on this first batch once, for every state
        self.__dict__.pop("_gamma_", None)
        super()._start(X, classes)

    def _kernel_args(self, X):
        """(kind, gamma, degree, coef0) for a new state; called from ``_make_state``
        with the first batch, so "scale"/"auto" are resolved on it (once per ``_start``:
        one read of X, not one per one-vs-rest problem)."""
        from ._validation import resolve_gamma

        if "_gamma_" not in self.__dict__:
            self._gamma_ = resolve_gamma(self.gamma, X)
        return (self.kernel, self._gamma_, int(self.degree), float(self.coef0))

    #: whether the kernel range is checked (``check_kernel_range``): every estimator whose
    #: solver evaluates the kernel (StreamSVM's linear form keeps w and does not)
    _checks_kernel_range = True

    def _kernel_range_args(self, X, first):
        """(kernel, gamma, degree, coef0) as the states use them (gamma "scale"/"auto"
        resolved on the first batch, as ``_kernel_args`` will)."""
        from ._validation import resolve_gamma

        gamma = resolve_gamma(self.gamma, X) if first else self._gamma_
        return self.kernel, float(gamma), int(self.degree), float(self.coef0)

    def _validate_xy(self, X, y, reset, defer=False):
        """Also: kernel values on X, and between X and the rows learned before, must stay
        finite (``check_kernel_range``); the largest squared row norm learned so far is
        kept in ``_max_sqnorm_`` (set on success only: a failed call restores the
        estimator)."""
        from ._validation import check_kernel_rows

        X, y, labels = super()._validate_xy(X, y, reset, defer)
        if self._checks_kernel_range and self.kernel != "rbf":
            first = reset or not hasattr(self, "_gamma_")
            seen = 0.0 if first else getattr(self, "_max_sqnorm_", 0.0)
            self._max_sqnorm_ = check_kernel_rows(X, *self._kernel_range_args(X, first),
                                                  seen=seen, where="the training data")
        return X, y, labels

    def _validate_X(self, X, reset):
        """Also: kernel values between X and the training rows must stay finite."""
        from ._validation import check_kernel_rows

        X = super()._validate_X(X, reset)
        if self._checks_kernel_range and hasattr(self, "_max_sqnorm_"):
            check_kernel_rows(X, *self._kernel_range_args(X, False),
                              against=self._max_sqnorm_,
                              where="these rows and the training data")
        return X

    @property
    def n_kernel_evals_(self):
        """Kernel evaluations spent so far (training and, for some models, prediction)."""
        check_is_fitted(self, "classes_")
        return int(sum(s.n_kernel_evals for s in self._states))


class SupportVectorsMixin:
    """SVC-like read-outs for kernel estimators whose states have ``support()``.

    ``support()`` returns (stream ids, y_i alpha_i, rows) of one binary problem.  One
    implementation and one dtype for every kernel family: ``support_`` is int32 and
    ``dual_coef_`` float64, as in :class:`sklearn.svm.SVC`.
    """

    def _support_parts(self):
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "classes_")
        return [s.support() for s in self._states]

    @staticmethod
    def _sv_ids(parts):
        """The union of the support-vector ids of every binary problem, sorted."""
        return np.unique(np.concatenate([np.asarray(p[0], dtype=np.intp) for p in parts]))

    @property
    def support_(self):
        """Stream positions of the support vectors (union over the binary problems)."""
        return self._sv_ids(self._support_parts()).astype(np.int32)

    @property
    def dual_coef_(self):
        """y_i alpha_i, shape (n_problems, n_SV), columns in the order of ``support_``."""
        parts = self._support_parts()
        ids = self._sv_ids(parts)
        out = np.zeros((len(parts), ids.shape[0]))
        for r, (pid, coef, _) in enumerate(parts):
            out[r, np.searchsorted(ids, pid)] = coef
        return out

    @property
    def support_vectors_(self):
        """The support vectors, rows in the order of ``support_``."""
        parts = self._support_parts()
        ids = self._sv_ids(parts)
        rows = {}
        for pid, _, M in parts:
            for r, i in enumerate(pid):
                rows.setdefault(int(i), M[r])
        if self._sparse_:
            if not ids.size:
                return sp.csr_matrix((0, self.n_features_in_))
            return sp.vstack([sp.csr_matrix(rows[int(i)]) for i in ids], format="csr")
        if not ids.size:
            return np.zeros((0, self.n_features_in_))
        return np.vstack([np.asarray(rows[int(i)]).reshape(1, -1) for i in ids])

    @property
    def n_support_(self):
        """Support vectors per class.  Two classes: by the sign of y_i alpha_i.  One-vs-rest:
        entry k counts the support vectors of the problem "class k vs rest"."""
        parts = self._support_parts()
        if len(parts) == 1:
            coef = parts[0][1]
            return np.array([np.sum(coef < 0), np.sum(coef > 0)], dtype=np.int32)
        return np.array([p[0].shape[0] for p in parts], dtype=np.int32)
