"""The one call the printed loop of steps 10-15 makes for the pair and block steps.

Both departures (:mod:`.pair_step`, :mod:`.block_step`) replace the Eq. (14) step on the
working example q by a step on several coordinates; both read the loop's recent history:
the previous working example p and the one before it (a zig-zag on (p, q)), and the
(position, gain) of the last steps (a cycle).  :meth:`JointSteps._joint_step` tries the
pair step, then the block step; when neither is taken it records q as the next
one-coordinate step and the loop takes steps 12-14 on it.  With both departures off (the
paper form) it only records.

Docs: ``docs/wang_vucetic.rst``, reading 13.
"""

from __future__ import annotations

from . import CYCLE_WINDOW_MAX

__all__ = ["JointSteps"]


class JointSteps:
    """Mixin of :class:`refsvm.ramp.online_svmr.OnlineSVMR`: the loop history."""

    def _forget_steps(self):
        """A new step-10 loop (or shrinking round): no history."""
        self._last = self._back = -1       # previous working example, the one before it
        self._hist = []                    # (position, gain) of the steps, for _cycle

    def _remember(self, p, gain):
        """A step on p (a pair step is two) with the Eq. (13) gain ``gain``, for _cycle."""
        self._hist.append((p, gain))
        del self._hist[:-CYCLE_WINDOW_MAX]

    def _joint_step(self, q, gain, A=None, moved=None):
        """A pair step or a block step in place of steps 12-14 on q (True), else record q as
        the next one-coordinate step (False).  ``A``, ``moved``: a shrinking round's working
        set and moves (None: the loop as printed, Eq. 15 on all of I)."""
        if self._try_pair_step(q, gain, A, moved) or self._try_block_step(q, gain, A, moved):
            return True
        self._last, self._back = q, self._last
        self._remember(q, gain)
        return False
