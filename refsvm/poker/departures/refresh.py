"""Departure ``refresh``: the inverse R of the bordered matrix formed afresh where its
rank-one updates have drifted.

The printed method updates the factorisation by rank one at every change of I_s.  On
ill-conditioned active sets (Gauss with thousands of rows, near-dependent margin
vectors) the updates lose digits: a pivot computed from a drifted R can look zero when
it is not (an exchange that should have been a join) or the reverse, and the error of R
passes into g (with C = 100 and a cubic kernel the drift of g along the path is 3e-6
without the refresh after ill-conditioned shrinks, 1e-9 with it).  Four safeguards, all
off with ``refresh`` False:

* a *doubtful* pivot (below ``doubt`` of its round-off scale) is re-solved from a fresh
  R (:meth:`InverseRefresh._resolve_doubtful`);
* a *small* pivot (below ``small_pivot``) that joins is followed by a fresh R
  (:meth:`InverseRefresh._after_small_pivot`);
* every ``refresh_every`` changes of I_s the backward error of M R is probed (O(|I_s|^2))
  and R formed afresh above ``drift_refresh`` (:meth:`InverseRefresh._s_changed`);
* a shrink of an inverse with max|R| max|M| above ``cond_refresh`` is followed by a
  fresh R (:meth:`InverseRefresh._shrink_ill`).

A shrink whose |R_pp| is below ``shrink_eps`` max|R| is refused and R formed afresh (in
the paper form only an exactly zero R_pp: a guard against a division by zero).
Stream: Gauss, 3,000-5,000 rows, RBF (``benchmarks/bench_poker.py``); docs sections
"One factorisation for every path" and "Design notes".
"""

from __future__ import annotations

from ...core.bordered import bordered_drift, bordered_max_abs, pivot_doubtful

__all__ = ["InverseRefresh"]


class InverseRefresh:
    """Mixin of :class:`refsvm.poker.poker.POKERState`: when R is formed afresh."""

    def _s_changed(self):
        """Every ``refresh_every`` changes of I_s, R afresh where the drift of the
        rank-one updates (backward error of M R) is above ``drift_refresh``."""
        self.n_s_changes += 1
        dep = self.departures
        if dep["refresh"] and self.refresh_every and self.S \
                and self.n_s_changes % self.refresh_every == 0:
            drift = bordered_drift(self.R, self.y, self.KS, self.S)
            if not drift <= dep["drift_refresh"]:
                self._refresh()

    def _shrink_ill(self):
        """Whether the inverse about to shrink is badly conditioned (max|R| max|M| above
        ``cond_refresh``): it carries its error into the smaller one, so R is formed
        afresh after the shrink (:meth:`_refresh_after_shrink`)."""
        return (self.departures["refresh"] and len(self.S) > 1
                and bordered_max_abs(self.R) * max(1.0, self.kmax)
                > self.departures["cond_refresh"])

    def _refresh_after_shrink(self, ill):
        """R afresh after the shrink of an ill-conditioned inverse (``ill``), unless a
        refresh on the way already formed it."""
        if ill and self.S and not self.fresh:
            self._refresh()

    def _resolve_doubtful(self, i, m, mode, pivot):
        """A pivot (``pivot``: beta, kappa of M, z, kappa, scale) below ``doubt`` of its
        scale is re-solved once from a fresh R (unless R is fresh already)."""
        kappa, scale = pivot[3], pivot[4]
        if self.departures["refresh"] and pivot_doubtful(kappa, scale, self.departures["doubt"]) \
                and not self.fresh and self._refresh():
            return self._schur(i, m, mode)
        return pivot

    def _after_small_pivot(self, kappa, scale):
        """R afresh after a join whose pivot is below ``small_pivot`` of its scale (the
        rank-one update loses about -log10 of it in digits)."""
        if self.departures["refresh"] and kappa <= self.departures["small_pivot"] * scale:
            self._refresh()
