"""The choice among tied events in a long run of zero-length steps (setting ``steep_ties``).

The failure of the printed form it answers: at a degenerate point many events are tied
at the step t = 0, and the least-index rule (Bland's) chooses among them.  That rule is
finite in exact arithmetic, but the number of zero-length steps it takes can grow
exponentially.  A stream that begins with examples of one class meets it at the first
example of the other: with S empty every example seen has g = y b - 1, the same value,
so all of them reach the margin together, and the increment walks through zero-length
joins and leaves of those examples one id at a time.  The streams that show it:
examples of one class ordered by their distance from the first example of the other
class, farthest first, then that example (``tests/idsvm/test_steep_ties.py``; the step
counts are in the docs section below).

With this setting at k > 0, after k zero-length steps in a row within an operation the
tied event is chosen by its rate instead: a margin vector leaving S first (the tied one
whose alpha moves fastest), else the tied candidate whose g moves fastest, the least id
among equal rates.  After
10 k more zero-length steps in a row the least-index rule applies again for the rest of
the run, so a run in which the rate rule itself repeated would still end as the printed
rule ends.  A run shorter than k steps, and so every operation of a stream without such
a run, makes the same choices as the printed rule, bit for bit (0: the printed rule
always).

The rate of an event is read off its round-off window, eps / |rate| (EPS_ALPHA alpha_max
/ |beta_s| for a margin vector, EPS_G g_scale / |gamma_i| for a candidate): the smallest
window is the fastest rate, and both twins compute the windows with the same operations.

Docs: ``docs/cauwenberghs_poggio.rst``, "Degenerate cases".
"""

import numpy as np

__all__ = ["SteepTies", "steepest_tie"]

#: the steep rule holds for this many times k zero-length steps, then the least index
STEEP_SPAN = 10


def steepest_tie(priority, others, ts, ws, ids, kinds, tmin):
    """The event chosen among those tied at the step ``tmin`` by the rate rule: the first
    tied ``priority`` event (the candidate's own, in their order) as under the
    least-index rule; else the tied event of ``others`` (the margin vectors' events, as
    (t, kind, id, window)) with the smallest window; else the tied event of the arrays
    ``ts, ws, ids, kinds`` (the candidates) with the smallest window; equal windows by
    the least id.  Returns (kind, id), (-1, -1) when nothing is tied."""
    for t, kind, i, w in priority:
        if t <= tmin + w:
            return kind, i
    best = None
    for t, kind, i, w in others:
        if t <= tmin + w and (best is None or (w, i) < (best[0], best[2])):
            best = (w, kind, i)
    if best is None:
        ts, ws = np.asarray(ts, dtype=np.float64), np.asarray(ws, dtype=np.float64)
        for j in np.flatnonzero(ts <= tmin + ws):
            w, i = float(ws[j]), int(ids[j])
            if best is None or (w, i) < (best[0], best[2]):
                best = (w, int(kinds[j]), i)
    return (-1, -1) if best is None else (best[1], best[2])


class SteepTies:
    """Mixin of the IDSVM state: whether the rate rule chooses among ties."""

    def _steep_ties(self, zero_run):
        """True when the tie among the events of the next step goes by the rate rule:
        after ``steep_ties`` zero-length steps in a row, for STEEP_SPAN times as many."""
        k = self.departures["steep_ties"]
        return k > 0 and k <= zero_run < (STEEP_SPAN + 1) * k
