"""Online active learning with OnlineSVMR (Wang & Vucetic, Sec. IV and V.E).

Three strategies run over a stream of unlabelled examples, ask an *oracle* for
the labels they choose, learn with OnlineSVMR, and record a learning curve
(accuracy against the number of labels queried, the curves of Fig. 6):

- :class:`OnlineASVMR` (Algorithm 3): query x_{t+1} only if ``|f(x_{t+1})| <= 1``
  (it lies in the ramp region); a queried example joins I and V and goes
  through steps 6-27 of Algorithm 1; an unqueried one is dropped.
- :class:`QueryAll`: query every example (plain OnlineSVMR, Algorithm 1).
- :class:`Greedy`: cut the stream into consecutive blocks of the ``h`` most
  recent examples and query the one with the smallest ``|f(x)|`` (ties: the
  earliest); ``h = 5`` as in the paper, ``h = 1`` is QueryAll.  The queried
  example is learned by Algorithm 1.

Kernel evaluations are counted by the OnlineSVMR state: scoring an unlabelled
example costs one evaluation per support vector (Eq. 4), whether it is then
queried or not.  OnlineASVMR reuses those values when it learns the example;
Greedy scores its h candidates and then learns the chosen one with a fresh
arrival (it pays #SV evaluations again for that one).

References
----------
Z. Wang and S. Vucetic, "Fast Online Training of Ramp Loss Support Vector
Machines", ICDM 2009: Algorithm 3, Sec. V.E (QueryAll, Greedy with h = 5), Fig. 6.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from . import online_svmr as ramp
from .._validation import (as_format, check_int, check_nonnegative, check_positive,
                          check_kernel_params, load_backend)
from ..core.kernels import get_row

__all__ = ["LearningCurve", "OnlineASVMR", "QueryAll", "Greedy"]


@dataclass
class LearningCurve:
    """Accuracy against labels queried, one point per checkpoint.

    Attributes
    ----------
    n_seen, n_labels, n_support, n_kernel_evals : ndarray of int
        Stream examples seen, labels queried, support vectors and kernel
        evaluations at each checkpoint.
    accuracy : ndarray of float
        Accuracy on the test set at each checkpoint (NaN without a test set).
    queried : ndarray of int
        Stream positions of the queried examples, in query order.
    """

    n_seen: np.ndarray
    n_labels: np.ndarray
    accuracy: np.ndarray
    n_support: np.ndarray
    n_kernel_evals: np.ndarray
    queried: np.ndarray = field(default_factory=lambda: np.zeros(0, np.intp))


class _ActiveLearner:
    """Shared machinery: one OnlineSVMR state, an oracle, checkpoints.

    Parameters
    ----------
    C, kernel, gamma, degree, coef0, tol, min_gain, max_non_sv, backend
        As :class:`refsvm.OnlineRampSVM` (``gamma`` must be a number here).
    classes : pair of labels, default=(-1, 1)
        The oracle's labels; ``classes[1]`` is the positive class.
    """

    def __init__(self, C=1.0, kernel="rbf", gamma=1.0, degree=3, coef0=0.0, tol=1e-3,
                 min_gain=1e-5, max_non_sv=None, backend="cython", classes=(-1, 1)):
        check_positive("C", C)
        check_kernel_params(kernel, gamma, degree, coef0)
        if isinstance(gamma, str):
            raise ValueError("gamma must be a positive number for active learning")
        check_positive("tol", tol)
        check_nonnegative("min_gain", min_gain)
        check_int("max_non_sv", max_non_sv, minimum=0, allow_none=True)
        if len(classes) != 2 or classes[0] == classes[1]:
            raise ValueError(f"classes must be two distinct labels; got {classes!r}")
        self.params = dict(C=float(C), kernel=kernel, gamma=float(gamma), degree=int(degree),
                           coef0=float(coef0), tol=float(tol), min_gain=float(min_gain),
                           max_non_sv=-1 if max_non_sv is None else int(max_non_sv))
        self.backend = backend
        self.classes = tuple(classes)
        self.module = load_backend(backend, ramp, "refsvm.ramp._online_svmr")
        self.state = None

    # ---------------------------------------------------------------- helpers
    def _sign(self, label):
        if label == self.classes[1]:
            return 1.0
        if label == self.classes[0]:
            return -1.0
        raise ValueError(f"the oracle returned {label!r}, not one of {self.classes}")

    def _ask(self, oracle, i):
        self.queried.append(i)
        return self._sign(oracle(i))

    def _select(self, X, oracle, start, stop):
        """Process stream positions [start, stop): query and learn what the strategy picks."""
        raise NotImplementedError

    def _block(self):
        return 1

    # ---------------------------------------------------------------- public API
    def run(self, X, oracle, X_test=None, y_test=None, eval_every=100, max_labels=None):
        """Run the strategy over the stream X (rows in order).

        Parameters
        ----------
        X : ndarray or CSR matrix, shape (n, d)
            The unlabelled stream.
        oracle : callable or array-like
            ``oracle(i)`` gives the label of stream position i (an array is
            read as ``y[i]``).  It is called only for queried examples.
        X_test, y_test : optional
            Test set for the accuracy of the learning curve.
        eval_every : int
            A checkpoint every ``eval_every`` stream examples (and at the end).
        max_labels : int, optional
            Stop once this many labels have been queried.

        Returns
        -------
        LearningCurve
        """
        if not callable(oracle):
            labels = np.asarray(oracle)
            oracle = labels.__getitem__
        eval_every = check_int("eval_every", eval_every, minimum=1)
        check_int("max_labels", max_labels, minimum=1, allow_none=True)
        sparse = sp.issparse(X)
        X = as_format(X, sparse)
        if not np.all(np.isfinite(X.data if sparse else X)):
            raise ValueError("X contains NaN or infinity")
        if X_test is not None:
            X_test = as_format(X_test, sparse)
            y_test = np.asarray(y_test)
        self.state = self.module.OnlineSVMR(X.shape[1], sparse, **self.params)
        self.queried = []
        curve = {k: [] for k in ("n_seen", "n_labels", "accuracy", "n_support", "n_kernel_evals")}
        n = X.shape[0]
        h = self._block()
        t = 0
        next_eval = eval_every
        while t < n:
            stop = min(t + h, n)
            self._select(X, oracle, t, stop)
            t = stop
            done = max_labels is not None and len(self.queried) >= max_labels
            if t >= next_eval or t == n or done:
                curve["n_seen"].append(t)
                curve["n_labels"].append(len(self.queried))
                curve["accuracy"].append(self.score(X_test, y_test) if X_test is not None
                                         else np.nan)
                curve["n_support"].append(int(np.sum(self.state.get_state()["alpha"] != 0)))
                curve["n_kernel_evals"].append(int(self.state.n_kernel_evals))
                while next_eval <= t:
                    next_eval += eval_every
            if done:
                break
        self.curve_ = LearningCurve(
            n_seen=np.array(curve["n_seen"], np.intp),
            n_labels=np.array(curve["n_labels"], np.intp),
            accuracy=np.array(curve["accuracy"], np.float64),
            n_support=np.array(curve["n_support"], np.intp),
            n_kernel_evals=np.array(curve["n_kernel_evals"], np.int64),
            queried=np.array(self.queried, np.intp))
        return self.curve_

    def decision_function(self, X):
        return self.state.decision_function(as_format(X, self.state.sparse))

    def predict(self, X):
        f = self.decision_function(X)
        return np.where(f > 0, self.classes[1], self.classes[0])

    def score(self, X, y):
        return float(np.mean(self.predict(X) == np.asarray(y)))


class QueryAll(_ActiveLearner):
    """Query every example: plain OnlineSVMR (Algorithm 1), the baseline of Sec. V.E."""

    def _select(self, X, oracle, start, stop):
        for i in range(start, stop):
            self.state.step(get_row(X, i), self._ask(oracle, i))


class Greedy(_ActiveLearner):
    """Of each block of the ``h`` most recent examples, query the one with the smallest ``|f(x)|``.

    Parameters
    ----------
    h : int, default=5
        Block length (the paper's h = 5; h = 1 is QueryAll).
    **params
        As :class:`QueryAll`.
    """

    def __init__(self, h=5, **params):
        super().__init__(**params)
        self.h = check_int("h", h, minimum=1)

    def _block(self):
        return self.h

    def _select(self, X, oracle, start, stop):
        scores = []
        for i in range(start, stop):
            scores.append(abs(self.state.observe(get_row(X, i))))    # counted: #SV evaluations
            self.state.skip()
        best = start + int(np.argmin(scores))                        # earliest on ties
        self.state.step(get_row(X, best), self._ask(oracle, best))    # Algorithm 1


class OnlineASVMR(_ActiveLearner):
    """Algorithm 3: query x only when ``|f(x)| <= 1``, then steps 6-27 of Algorithm 1."""

    def _select(self, X, oracle, start, stop):
        for i in range(start, stop):
            f = self.state.observe(get_row(X, i))                      # step 2, Eq. (4)
            if abs(f) <= 1.0:                                          # step 3
                self.state.label(self._ask(oracle, i))                 # steps 4-7
            else:
                self.state.skip()                                      # never labelled
