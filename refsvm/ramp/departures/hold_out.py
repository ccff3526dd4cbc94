"""Departure ``hold_out``: an example that left V does not re-enter it in the same update.

The failure of the printed form.  Steps 9-27 repeat "until V does not change", and they
need not end: an example with alpha = C and g just above 2 leaves V (step 19) and is
unlearned (steps 23-26); its g drops just below 2, it re-enters V (step 17), the
optimisation of steps 10-15 drives alpha back to C and g above 2 again, and so on for ever.
Stream that shows it: the Gauss stream of ``make_two_gaussians(5000, random_state=0)``, C =
1, gamma = 0.5, the printed loop (``departures="paper"``): at arrival 956 example 249
alternates g = 2.0005 / 1.9989 (``tests/ramp/test_online_svmr.py``,
``test_hold_out_breaks_the_cycle_of_algorithm_1`` and
``test_paper_form_cycles_on_the_gauss_stream``).

What it does instead.  An example that leaves V during an update is *held out*: it does
not re-enter V before the next update (:meth:`HoldOut._hold`; ``held`` in
``get_state()``).  Every example can then leave V once per update, and steps 9-27 end.  At
the end of every update V = {i in I : g_i <= 2} minus the held-out examples (all with
alpha = 0, g within the tolerance of 2 in practice).  Off (the paper form), steps 9-27 run
as printed under a guard that raises a RuntimeError after
:data:`refsvm.ramp.online_svmr.CCCP_ROUNDS_MAX` rounds of one update.

Setting: ``hold_out``.  Docs: ``docs/wang_vucetic.rst``, reading 5.
"""

from __future__ import annotations

__all__ = ["HoldOut"]


class HoldOut:
    """Mixin of :class:`refsvm.ramp.online_svmr.OnlineSVMR`: the hold-out of steps 16-27."""

    def _hold(self, p):
        """Step 19 removed p from V: hold it out for the rest of this update (step 17 skips
        the examples held)."""
        if self.hold_out:
            self.held[p] = True
