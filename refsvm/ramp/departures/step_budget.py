"""Departure ``step_budget``: a budget on the loop of steps 10-15, and Ctrl-C inside it.

The failure of the printed form.  Steps 10-15 loop "while a violator gains enough"
(the gain rule of Eq. 13); nothing bounds the number of their iterations by the size of
the problem.  On a valid state each coordinate step raises the dual objective by at least
the gain threshold and the loop ends, but a state whose numbers do not agree (a kernel
row that is no kernel row: a tampered model file passes the validator as long as every
value is finite, and its Eq. (13) gains are not the gains of the steps) can make the loop
circle for ever; and a long loop on a large problem held Ctrl-C back until its end.

What it does.  Steps 9-27 of one update (:meth:`StepBudget._open_budget`) allow
``step_budget * (|I| + 10)^2`` iterations of the loops of steps 10-15, over all their
rounds (the printed loop's and the shrinking rounds' alike; :meth:`_cut_short`, one
call at the top of each iteration).  A valid run takes a few per arrival, so the
default of 1000 never fires; a budget spent, or Ctrl-C held back by the stream driver
(:func:`refsvm.core.stream.signal_held`) during a *long* update (one that has run for
:data:`refsvm.core.stream.LONG_STEP` seconds; the compiled twin: about 0.1 s, counted in
work), *cuts the
update short*: the loops of steps 10-15 end at once, at a consistent point (alpha, g and
the kept rows agree, as at the gain rule), steps 16-27 and Algorithm 2 run as usual.
Then a spent budget raises a RuntimeError at the end of steps 9-27
(:meth:`_close_budget`; the model is that of the stream up to this arrival, its
optimisation cut short); Ctrl-C is answered by the driver at its next block boundary
(:class:`refsvm.core.stream.Interrupted`).  An update shorter than that is never cut,
so on a stream of ordinary updates the interrupted model is exactly the model of the
stream up to the example the driver names (``tests/test_reliability.py``); an update
that Ctrl-C did cut ends early at such a point (OnlineSVMR cannot roll an update back:
its rows and kernel rows change in place).  The budget only raises: it never changes a
number of a run it does not cut, and it stays on in the paper form.

Setting: ``step_budget`` (an integer in [0, 10^6]: the factor of ``(|I| + 10)^2``; 0
cuts every update at its first iteration).  Docs:
``docs/wang_vucetic.rst``, "Departures from the printed algorithm";
``tests/test_step_interrupts.py``.
"""

from __future__ import annotations

import time

from ...core.stream import LONG_STEP, signal_held

__all__ = ["StepBudget"]


class StepBudget:
    """Mixin of :class:`refsvm.ramp.online_svmr.OnlineSVMR`: the budget of steps 10-15."""

    _budget_left = float("inf")
    _cut = None

    def _open_budget(self):
        """Steps 9-27 begin: their budget of step 10-15 iterations, nothing cut yet."""
        n = self.ids.shape[0]
        self._budget_left = self.departures["step_budget"] * float((n + 10) * (n + 10))
        self._cut = None
        self._opened = time.perf_counter()

    def _cut_short(self):
        """At the top of each iteration of steps 10-15: True when the loop must end now
        (the budget is spent, or a signal is held back and the update is a long one;
        then every later loop of this update ends at once too)."""
        if self._cut is None:
            self._budget_left -= 1.0
            if self._budget_left < 0.0:
                self._cut = "budget"
            elif signal_held() and time.perf_counter() - self._opened >= LONG_STEP:
                self._cut = "signal"
        return self._cut is not None

    def _close_budget(self):
        """Steps 9-27 end: a spent budget raises (the update was cut short)."""
        if self._cut == "budget":
            raise RuntimeError(
                f"OnlineSVMR: steps 10-15 did not end within the budget of "
                f"{self.departures['step_budget']:g} (|I| + 10)^2 iterations at arrival "
                f"{self.n_seen - 1} (|I| = {self.ids.shape[0]}): the update was cut short "
                "there (the model is consistent; are its kernel rows those of its rows?)")
