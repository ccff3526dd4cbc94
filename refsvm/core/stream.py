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

from .kernels import SparseRow, get_row

__all__ = ["BadRow", "Interrupted", "LONG_STEP", "StreamLearner", "answer_held_signals",
           "deferred_signals", "restore_state", "row_is_bad", "run_states", "signal_held"]

#: The signals whose Python handlers are held back to a block boundary (Ctrl-C, and the
#: alarm that time limits use); other signals keep their usual behaviour.
DEFERRED_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGALRM")
                         if hasattr(signal, name))


class BadRow(ValueError):
    """A row failed the check fused into the pass (``run_checked``): ``run_states`` stops
    before it.  The estimator restores its model and reports the problem with the
    message of its usual input check (this exception's own message only names the row)."""

    def __init__(self, row):
        self.row = int(row)
        super().__init__(f"row {self.row} of X is not valid input")


def row_is_bad(x, limit, n_features):
    """The row check of ``run_checked``: some value is NaN, infinite or above ``limit`` in
    magnitude, or (SparseRow) some column index is outside ``[0, n_features)``."""
    if isinstance(x, SparseRow):
        if not np.all(np.abs(x.data) <= limit):
            return True
        idx = np.asarray(x.indices)
        return bool(idx.size) and bool(idx.min() < 0 or idx.max() >= n_features)
    return not np.all(np.abs(np.asarray(x)) <= limit)


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


class _Received(list):
    """The signals held back by :func:`deferred_signals`, as (signum, frame) pairs."""

    def __init__(self):
        super().__init__()
        self.handlers = {}

    def deliver(self):
        """Deliver the signals held back so far, each to the handler it would have reached
        (which may raise), and go on holding back the next ones."""
        while self:
            signum, frame = self.pop(0)
            self.handlers[signum](signum, frame)


#: A step that has run this many seconds answers a signal the driver holds back inside
#: it (the references; the compiled twins count about as much work): a shorter one ends as
#: usual and the driver answers at the block boundary, the model exactly the stream's.
LONG_STEP = 0.25

#: The compiled twins count work instead of seconds (iterations times their length): they
#: look for a held signal after every POLL_WORK of it (about a millisecond) and answer
#: inside a step once it has done LONG_WORK (about 0.1 s, LONG_STEP counted as work).
POLL_WORK = 1048576.0
LONG_WORK = 67108864.0

#: The records of the :func:`deferred_signals` blocks running now in the main thread (the
#: only one that runs signal handlers), innermost last.
_BLOCKS = []


def signal_held():
    """True when a :func:`deferred_signals` block holds back a signal now.  A long step
    asks this inside its inner loops (both twins, every so often): a family that can
    end its step early at a consistent point does so, and the driver answers the signal
    at the block boundary as usual (OnlineSVMR).  False in any other thread than the
    main one (its signals are not that thread's)."""
    if not _BLOCKS or threading.current_thread() is not threading.main_thread():
        return False
    for received in _BLOCKS:
        if received:
            return True
    return False


def answer_held_signals():
    """Deliver now, inside a step, the signals the running :func:`deferred_signals`
    blocks hold back; a handler's exception (KeyboardInterrupt for Ctrl-C) propagates
    out of the step, which the family then abandons (IncrementalSVM rolls the step
    back; StreamSVM keeps the example buffered and flushes at its next point; the
    estimators put back their copy of the model from before the call).  Nothing happens when no signal is held, nor in any other thread
    than the main one."""
    if not _BLOCKS or threading.current_thread() is not threading.main_thread():
        return
    for received in _BLOCKS:
        if received:
            received.deliver()


@contextlib.contextmanager
def deferred_signals():
    """Hold back SIGINT and SIGALRM while the block runs; yields a list that records the
    signals received (its ``deliver()`` delivers them mid-block, at a point the block
    chooses).  On exit the handlers are restored and each recorded signal is delivered to
    its handler (which may raise).  In a thread other than the main one (where Python runs
    no signal handler anyway) this does nothing."""
    received = _Received()
    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    saved = received.handlers
    for signum in DEFERRED_SIGNALS:
        handler = signal.getsignal(signum)
        if callable(handler):
            saved[signum] = handler
            signal.signal(signum, lambda s, f: received.append((s, f)))
    _BLOCKS.append(received)
    try:
        yield received
    finally:
        del _BLOCKS[next(k for k, r in enumerate(_BLOCKS) if r is received)]
        for signum, handler in saved.items():
            signal.signal(signum, handler)
        received.deliver()


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

    def run_checked(self, X, y, order, limit):
        """``run`` with each row checked before it is learned (:func:`row_is_bad`: every
        value finite with ``|x_j| <= limit``, CSR column indices in range); stops before
        the first bad row.  Returns ``(changes, n_done)``: ``order[:n_done]`` were learned,
        and ``order[n_done]``, if any, is bad."""
        changes = 0
        for t, i in enumerate(order):
            row = get_row(X, i)
            if row_is_bad(row, limit, self.n_features):
                return changes, t
            changes += self.step(row, float(y[i]))
        return changes, len(order)

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

    def __deepcopy__(self, memo):
        return live_copy(self, memo, restore_state)


def live_copy(state, memo, restore):
    """A deep copy of a live state (the estimators' backups, the families' trial copies):
    through ``__reduce__`` as the copy module would, but without the validation that
    ``restore`` (the twin's :func:`restore_state`) gives an unpickled state: a live state
    is not input.  Both twins' ``__deepcopy__``."""
    import copy

    rv = state.__reduce_ex__(4)
    if rv[0] is restore:
        cls, params, data = copy.deepcopy(rv[1], memo)
        obj = cls(**params)
        obj.load_state(data)
        memo[id(state)] = obj
        return obj
    return copy._reconstruct(state, memo, *rv)


def restore_state(cls, params, data):
    """A state of class ``cls`` built with ``params`` and loaded with ``data`` (the
    unpickling half of the persistence protocol), once the state's validator
    (:func:`refsvm._state_checks.check_state`) has passed them: a pickle is input too."""
    from .._state_checks import check_state

    check_state(cls.__name__, params, data, where=f"unpickled {cls.__name__}")
    obj = cls(**params)
    obj.load_state(data)
    return obj


def run_states(states, X, Ys, order, *, epoch=None, block_seconds=0.02, check=None):
    """Run every state over the stream, all of them at the same example boundary.

    The stream is cut into blocks; each block is learned by every state in turn (the
    one-vs-rest problems of an estimator), with SIGINT and SIGALRM held back during the
    whole call and delivered at the next block boundary.  A held-back signal is then
    delivered: the model is the model of the stream up to the end of that block, in every
    state, and no update was cut half-way (the references too).  A KeyboardInterrupt
    becomes :class:`Interrupted`, which says how many examples were learned; another
    exception from a handler gets a note saying the same.  Block sizes adapt so that a
    block takes about ``block_seconds``, so a signal is answered within a few such
    intervals.

    ``order``: an array of row numbers, or a ``range`` (the stream in its order, without
    an array of n row numbers; its blocks are ranges, which every state's ``run`` takes).

    ``check``: a magnitude bound; the first state learns each block with ``run_checked``
    (every row checked as it is read, in the same pass) and the others with ``run``; at a
    bad row :class:`BadRow` is raised with the states part-way, the first one right before
    the row and the others at the start of its block (the caller restores them all).

    Returns the number of model changes, summed over the states.
    """
    if not isinstance(order, range):
        order = np.asarray(order, dtype=np.intp)
    n = len(order)
    done, changes, size = 0, 0, 64
    first = states[0] if states else None
    with deferred_signals() as received:
        while done < n:
            stop = min(n, done + size)
            block = order[done:stop]
            start = time.perf_counter()
            for state, y in zip(states, Ys):
                if check is not None and state is first:
                    got, n_done = state.run_checked(X, y, block, check)
                    changes += got
                    if n_done < len(block):
                        raise BadRow(block[n_done])
                else:
                    changes += state.run(X, y, block) or 0  # strict once every twin counts
            done = stop
            if received:  # at the block boundary: the model of the stream up to `stop`
                try:
                    received.deliver()
                except KeyboardInterrupt as exc:
                    raise Interrupted(stop, n, epoch) from exc
                except BaseException as exc:
                    exc.add_note(f"refsvm: the model is the model of the stream up to {stop} "
                                 f"of the call's {n} examples")
                    raise
            elapsed = time.perf_counter() - start
            if elapsed < block_seconds / 2 and size < 1 << 20:
                # aim the next block at about block_seconds / 2, growing 2x to 16x at a time
                # (a fast compiled pass reaches its block size in a few blocks, not a dozen)
                grow = 16 if elapsed <= 0 else min(16, max(2, int(block_seconds / 2 / elapsed)))
                size = min(size * grow, 1 << 20)
            elif elapsed > 2 * block_seconds and size > 1:
                size //= 2
    return changes
