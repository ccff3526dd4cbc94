"""The stream driver, in readable Python (the reference of ``refsvm._core.StreamLearner``).

A state that learns one example at a time implements ``step(x, y)``, returning 1 when
the example changed the model and 0 when it did not (a passive round); ``run`` feeds a
whole stream through it.  The compiled driver does the same loop without the GIL.
"""

from __future__ import annotations

from .kernels import get_row

__all__ = ["StreamLearner", "restore_state"]


class StreamLearner:
    """Base of the reference states that learn one example at a time.

    Parameters
    ----------
    n_features : int
    sparse : bool
        Rows are :class:`~refsvm.core.kernels.SparseRow` (True) or dense arrays.
    """

    def __init__(self, n_features, sparse=False):
        self.n_features = int(n_features)
        self.sparse = bool(sparse)

    def step(self, x, y):
        """Learn one example; return 1 if the model changed, else 0."""
        raise NotImplementedError

    def run(self, X, y, order):
        """Learn the rows of X (2-D array or CSR) in ``order``; return the number of
        examples that changed the model."""
        changes = 0
        for i in order:
            changes += self.step(get_row(X, i), float(y[i]))
        return changes

    # ---- the persistence protocol of every state (both twins, one format) ----
    def init_params(self):
        """The constructor's keyword arguments (plain numbers, strings, booleans)."""
        raise NotImplementedError(f"{type(self).__name__}.init_params")

    def save_state(self):
        """Everything learned, as a dict of NumPy arrays and plain scalars, in a format
        that both twins share (so a state saved by one loads into the other)."""
        raise NotImplementedError(f"{type(self).__name__}.save_state")

    def load_state(self, data):
        """Restore what ``save_state`` returned (into a freshly constructed state)."""
        raise NotImplementedError(f"{type(self).__name__}.load_state")


def restore_state(cls, params, data):
    """A state of class ``cls`` built with ``params`` and loaded with ``data``."""
    obj = cls(**params)
    obj.load_state(data)
    return obj
