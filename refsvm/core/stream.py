"""The stream driver, in readable Python (the reference of ``refsvm._core.StreamLearner``).

A state that learns one example at a time implements ``step(x, y)``, returning 1 when
the example changed the model and 0 when it did not (a passive round); ``run`` feeds a
whole stream through it.  The compiled driver does the same loop without the GIL.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time

import numpy as np

from .kernels import get_row

__all__ = ["Interrupted", "StreamLearner", "deferred_signals", "restore_state", "run_states"]

#: The signals whose Python handlers are held back to a block boundary (Ctrl-C, and the
#: alarm that time limits use); other signals keep their usual behaviour.
DEFERRED_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGALRM")
                         if hasattr(signal, name))


class Interrupted(KeyboardInterrupt):
    """Ctrl-C arrived during a pass: the model is exactly the model of the stream up to
    ``n_learned`` of the call's ``n_total`` examples (every one-vs-rest problem alike)."""

    def __init__(self, n_learned, n_total, epoch=None):
        self.n_learned, self.n_total, self.epoch = int(n_learned), int(n_total), epoch
        where = "" if epoch is None else f" of pass {epoch + 1}"
        super().__init__(
            f"interrupted after {self.n_learned} of {self.n_total} examples{where}; the model "
            "is the model of the stream up to there (call partial_fit with the rest to go on)"
        )


@contextlib.contextmanager
def deferred_signals():
    """Hold back SIGINT and SIGALRM while the block runs; yields a list that records the
    signals received.  On exit the handlers are restored and each recorded signal is
    delivered to its handler (which may raise).  In a thread other than the main one
    (where Python runs no signal handler anyway) this does nothing."""
    received = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    saved = {}
    for signum in DEFERRED_SIGNALS:
        handler = signal.getsignal(signum)
        if callable(handler):
            saved[signum] = handler
            signal.signal(signum, lambda s, f: received.append((s, f)))
    try:
        yield received
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
        for signum, frame in received:
            saved[signum](signum, frame)



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


def run_states(states, X, Ys, order, *, epoch=None, block_seconds=0.02):
    """Run every state over the stream, all of them at the same example boundary.

    The stream is cut into blocks; each block is learned by every state in turn (the
    one-vs-rest problems of an estimator), with SIGINT and SIGALRM held back until the
    block is done.  A held-back signal is then delivered: the model is the model of the
    stream up to the end of that block, in every state, and no update was cut half-way
    (the references too).  A KeyboardInterrupt becomes :class:`Interrupted`, which says
    how many examples were learned; another exception from a handler gets a note saying
    the same.  Block sizes adapt so that a block takes about ``block_seconds``, so a
    signal is answered within a few such intervals.

    Returns the number of model changes, summed over the states.
    """
    order = np.asarray(order, dtype=np.intp)
    n = order.shape[0]
    done, changes, size = 0, 0, 64
    while done < n:
        stop = min(n, done + size)
        block = order[done:stop]
        start = time.perf_counter()
        learned = False
        try:
            with deferred_signals():
                for state, y in zip(states, Ys):
                    changes += state.run(X, y, block) or 0  # strict once every twin counts
                learned = True
        except KeyboardInterrupt as exc:
            if not learned:
                raise
            raise Interrupted(stop, n, epoch) from exc
        except BaseException as exc:
            if learned:  # raised by a signal handler at the block boundary
                exc.add_note(f"refsvm: the model is the model of the stream up to {stop} of "
                             f"the call's {n} examples")
            raise
        done = stop
        elapsed = time.perf_counter() - start
        if elapsed < block_seconds / 2 and size < 1 << 20:
            size *= 2
        elif elapsed > 2 * block_seconds and size > 1:
            size //= 2
    return changes
