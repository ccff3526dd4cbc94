"""Evaluation loops shared by every learner: progressive validation and test curves.

Both loops drive an estimator through its public scikit-learn interface only
(``partial_fit``, ``decision_function``, ``score``), so they work for every family and
either backend:

- :func:`progressive_validation` (prequential evaluation): each block of the stream is
  first *predicted* with the current model (``decision_function``), then learned
  (``partial_fit``).  The count of mistakes is the online mistake count of the papers'
  bounds.  The first block meets an empty model; its decision values are taken as 0,
  which counts as a mistake (``y f(x) <= 0``).
- :func:`checkpoint_curve`: learn the stream in order and measure test accuracy, model size,
  kernel evaluations and time at checkpoints (e.g. the log-spaced stream lengths of the
  papers' figures), optionally stopping at a time cap (Wang & Vucetic stopped IDSVM after
  5,000 s).

The linear estimators (Perceptron, PA, PAm, OnlineLinearSVM) and the kernel PA keep the
same count inside the twins' ``step``, where the prediction is computed anyway:
``est.partial_fit(X, y, classes=...).n_mistakes_`` equals
``progressive_validation(est, X, y, block=1).sum()`` for two classes (tested), without the
extra ``decision_function`` per example.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Curve", "checkpoints", "model_size", "progressive_validation", "checkpoint_curve"]


def _signs(y, classes):
    return np.where(np.asarray(y) == classes[1], 1.0, -1.0)


def progressive_validation(estimator, X, y, *, block=1, classes=None):
    """Prequential mistakes: predict each block with the model so far, then learn it.

    Parameters
    ----------
    estimator : a refsvm (or any scikit-learn) estimator with ``partial_fit`` and
        ``decision_function``; it is trained in place.
    X, y : the stream, in order.
    block : int
        Examples predicted (and then learned) together; 1 is the papers' online protocol.
    classes : array-like, optional
        All labels (default ``np.unique(y)``).

    Returns
    -------
    mistakes : ndarray of bool, shape (n,)
        Whether example t was misclassified by the model learned from examples < t
        (the blocks before its own).

    Examples
    --------
    >>> import numpy as np
    >>> from refsvm import Perceptron
    >>> X = np.array([[1.0, 0.0], [-1.0, 0.0], [2.0, 1.0], [-2.0, 1.0]])
    >>> y = np.array([1, -1, 1, -1])
    >>> progressive_validation(Perceptron(max_epochs=1), X, y).tolist()
    [True, True, False, False]
    """
    y = np.asarray(y)
    classes = np.unique(y) if classes is None else np.asarray(classes)
    n = y.shape[0]
    mistakes = np.zeros(n, dtype=bool)
    fitted = False
    for start in range(0, n, block):
        stop = min(start + block, n)
        Xb, yb = X[start:stop], y[start:stop]
        if fitted:
            f = np.asarray(estimator.decision_function(Xb))
        else:
            f = np.zeros((stop - start,) if classes.size == 2 else (stop - start, classes.size))
        if f.ndim == 1:
            mistakes[start:stop] = _signs(yb, classes) * f <= 0
        else:
            mistakes[start:stop] = (classes[np.argmax(f, axis=1)] != yb) | (np.ptp(f, axis=1) == 0)
        estimator.partial_fit(Xb, yb, classes=classes)
        fitted = True
    return mistakes


def checkpoints(n, first=10, per_decade=4):
    """Log-spaced stream lengths from ``first`` to ``n`` (``n`` included), as the papers'
    log-x figures.

    >>> checkpoints(1000, first=10, per_decade=2).tolist()
    [10, 32, 100, 316, 1000]
    """
    if n <= first:
        return np.array([n], dtype=np.int64)
    k = int(np.ceil(np.log10(n / first) * per_decade)) + 1
    pts = np.unique(np.round(np.logspace(np.log10(first), np.log10(n), k)).astype(np.int64))
    return pts[(pts >= 1) & (pts <= n)]


def model_size(estimator):
    """#SV of a kernel model (``n_support_`` summed), else the number of updates."""
    try:
        return int(np.sum(estimator.n_support_))
    except AttributeError:
        return int(getattr(estimator, "n_updates_", 0))


def _kernel_evals(estimator):
    try:
        return int(estimator.n_kernel_evals_)
    except AttributeError:
        return 0


@dataclass
class Curve:
    """Measurements at each checkpoint of :func:`checkpoint_curve`."""

    n_seen: list = field(default_factory=list)
    accuracy: list = field(default_factory=list)
    size: list = field(default_factory=list)
    kernel_evals: list = field(default_factory=list)
    seconds: list = field(default_factory=list)
    stopped_early: bool = False

    def as_dict(self):
        return {"n_seen": self.n_seen, "accuracy": self.accuracy, "size": self.size,
                "kernel_evals": self.kernel_evals, "seconds": self.seconds,
                "stopped_early": self.stopped_early}


def checkpoint_curve(estimator, X, y, X_test, y_test, points=None, *, time_limit=None,
               classes=None, max_block=None):
    """Learn (X, y) in order; test accuracy, size, kernel evaluations, time at checkpoints.

    Parameters
    ----------
    estimator : trained in place with ``partial_fit``.
    points : sequence of int, optional
        Stream lengths to measure at (default: only the end).
    time_limit : float, optional
        Stop learning once the training time (measurement excluded) passes this many
        seconds; the last measurement is then taken where it stopped and
        ``stopped_early`` is set.  Checked between blocks, so blocks are capped at
        ``max_block`` examples (default 100 when a time limit is set).

    Returns
    -------
    Curve

    Examples
    --------
    >>> from refsvm import PassiveAggressive
    >>> from refsvm.datasets import make_train_test
    >>> X, y, Xt, yt = make_train_test("linear", 200, 100, random_state=0)
    >>> c = checkpoint_curve(PassiveAggressive(), X, y, Xt, yt, [50, 200])
    >>> c.n_seen, c.accuracy[-1] > 0.8
    ([50, 200], True)
    """
    y = np.asarray(y)
    n = y.shape[0]
    classes = np.unique(np.concatenate([y, np.asarray(y_test)])) if classes is None else classes
    points = [n] if points is None else sorted({int(p) for p in points if 0 < p <= n})
    if max_block is None and time_limit is not None:
        max_block = 100
    curve = Curve()
    spent = 0.0
    t = 0
    for point in points:
        while t < point:
            stop = point if max_block is None else min(point, t + max_block)
            start = time.perf_counter()
            estimator.partial_fit(X[t:stop], y[t:stop], classes=classes)
            spent += time.perf_counter() - start
            t = stop
            if time_limit is not None and spent > time_limit and t < n:
                curve.stopped_early = True
                break
        curve.n_seen.append(t)
        curve.accuracy.append(float(estimator.score(X_test, y_test)))
        curve.size.append(model_size(estimator))
        curve.kernel_evals.append(_kernel_evals(estimator))
        curve.seconds.append(spent)
        if curve.stopped_early:
            break
    return curve
