"""Departure ``finish``: a finishing step after the stream (LASVM's, Bordes et al. 2005).

The failure of the printed form.  The online loop stops each step-10 loop on the gain rule,
leaving coordinates slightly above 0: support vectors that a tighter loop would drop (up to
10 % of them on ijcnn1).

What it does: :meth:`Finish.finish`, steps 9-27 once more on the examples kept, without an
arrival, with a smaller gain threshold; then Algorithm 2.  ``OnlineRampSVM.fit`` calls it
(``finish_gain``).  Off (the paper form), ``finish`` does nothing.

Setting: ``finish``.  Docs: ``docs/wang_vucetic.rst``, "Defaults on real data".
"""

from __future__ import annotations

__all__ = ["Finish"]


class Finish:
    """Mixin of :class:`refsvm.ramp.online_svmr.OnlineSVMR`: the finishing step."""

    def finish(self, min_gain):
        """A finishing step after the stream (not in the paper; LASVM's "finishing", Bordes
        et al. 2005): steps 9-27 on the examples kept, without a new arrival, with the gain
        rule's threshold ``min_gain`` (read like ``self.min_gain``: absolute with
        ``stop="gain"``, times D with ``stop="relative"``) in place of ``self.min_gain``;
        then Algorithm 2.  With a smaller threshold the coordinates the online loop left
        slightly above 0 are driven to 0: fewer support vectors, the same invariants.

        Returns 1 when f changed, else 0; 0 without doing anything when the departure
        ``finish`` is off."""
        if self._pending is not None:
            raise RuntimeError("finish() between observe() and label()")
        if not self.departures["finish"]:
            return 0
        moves = self.n_steps + self.n_unlearned
        online_gain, self.min_gain = self.min_gain, float(min_gain)
        try:
            self.gain_stopped = False
            self.held[:] = False                                 # as at an update
            self._end_rewarm()                                   # rewarm: the bound 2
            self._cccp()                                         # steps 9-27
        finally:
            self.min_gain = online_gain
        self._removal_step()                                     # Algorithm 2
        self._evict_parked()                                     # keep_rows
        return int(self.n_steps + self.n_unlearned != moves)
