"""The one light hook through which a reference reports the printed lines it executes.

A reference state has a class attribute ``_tracer = None``.  Where the paper's line is
executed, the reference says so in one line::

    self._tracer is None or self._tracer("Alg. 1 line 7", beta=beta)

When no tracer is set (the default) that costs one attribute check: the arguments are not
evaluated.  When a :class:`Tracer` is set on the state (``state._tracer = Tracer()``), it
records the line and a copy of the quantities the line changed.

The references of Cauwenberghs--Poggio (IDSVM) and Fine--Scheinberg (POKER) are already
one method per pseudocode block, each citing its equation or figure line; their modules
need no emission line: :func:`watch` wraps the named methods of one state *instance* (the
class is untouched), and the wrapper reports the block's line before or after the
reference's own method runs.  Either way the trace is the reference's execution, not a
re-implementation: the same code runs, traced or not, and gives the same numbers bit for
bit (``tests/test_trace.py``).  What the lines mean, paper by paper, is in
:mod:`refsvm.tracing`.

Examples
--------
>>> import numpy as np
>>> from refsvm.core.trace import Tracer
>>> from refsvm.linear.passive_aggressive import PAState
>>> state = PAState(2, variant=0)
>>> state._tracer = tracer = Tracer()
>>> state.step(np.array([1.0, 1.0]), 1.0)
1
>>> [line for line, _ in tracer.lines()]
['PA: loss', 'PA: step size', 'PA: update']
>>> tracer.lines()[1][1]["tau"]
0.5
"""

from __future__ import annotations

import copy

import numpy as np

__all__ = ["Tracer", "snapshot", "unwatch", "watch"]


def snapshot(value):
    """A copy of a quantity that later steps cannot change (arrays, lists, dicts)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple, dict, set)):
        return copy.deepcopy(value)
    return value


class Tracer:
    """Records ``(example, line, quantities)`` for each printed line a state reports.

    Parameters
    ----------
    after : callable or None
        ``after(line, quantities)`` -> dict, called right after each line is recorded
        (the caller's invariant check of the state at that moment); its result is kept
        beside the record.

    Attributes
    ----------
    example : object
        Set by whoever drives the stream (the index of the example being learned); kept
        in each record.
    records : list of tuple
        ``(example, line, quantities, check)``.
    muted : bool
        While True, lines are not recorded (a driver's untraced stretch).
    """

    def __init__(self, after=None):
        self.after = after
        self.example = None
        self.records = []
        self.muted = False

    def __call__(self, line, **quantities):
        if self.muted:
            return True
        quantities = {k: snapshot(v) for k, v in quantities.items()}
        check = self.after(line, quantities) if self.after is not None else None
        self.records.append((self.example, line, quantities, check))
        return True

    def lines(self):
        """``(line, quantities)`` of every record, in order."""
        return [(line, q) for _, line, q, _ in self.records]


def watch(state, tracer, blocks):
    """Report the pseudocode blocks of ``state`` that are methods: ``blocks`` maps a method
    name to ``(before, after)``, each None or ``f(state, tracer, args, result)`` (result
    None before), which calls ``tracer(line, ...)``.  Only this instance is wrapped;
    :func:`unwatch` removes the wrappers."""
    for name, (before, after) in blocks.items():
        method = getattr(state, name)

        def wrapper(*args, _method=method, _before=before, _after=after, **kwargs):
            if _before is not None:
                _before(state, tracer, args, None)
            result = _method(*args, **kwargs)
            if _after is not None:
                _after(state, tracer, args, result)
            return result

        state.__dict__[name] = wrapper
    state.__dict__.setdefault("_watched", []).extend(blocks)
    return state


def unwatch(state):
    """Remove the wrappers :func:`watch` put on ``state``."""
    for name in state.__dict__.pop("_watched", []):
        state.__dict__.pop(name, None)
    return state
