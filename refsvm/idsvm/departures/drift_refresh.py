"""The drift refresh of R (settings ``drift_refresh``, ``drift_tol``; the interval is
the state's ``refresh_every``).

The failure of the printed form it answers: Eqs. (8)-(9) update R by rank-one steps, and
over thousands of changes of S the updated R drifts from M^-1 (its backward error grows
with every update on an ill-conditioned margin set; the 2,000-example noisy streams of
``tests/idsvm/test_stress.py``).  Every ``refresh_every`` changes of S the backward
error is probed (``bordered_drift``, O(|S|^2)); above ``drift_tol`` R is recomputed from
the cached kernel columns (LU, no kernel evaluations) and the deviation of the updated
inverse from the fresh one recorded (``max_inverse_drift``).

Docs: ``docs/cauwenberghs_poggio.rst``, "Numerical hygiene".
"""

import numpy as np

from ...core.bordered import bordered_drift

__all__ = ["DriftRefresh"]


class DriftRefresh:
    """Mixin of the IDSVM state."""

    def _s_changed(self):
        """S changed: counted; every ``refresh_every`` changes the drift of R is probed
        (O(|S|^2)) and R recomputed (O(|S|^3)) above ``drift_tol``."""
        self.n_s_changes += 1
        if not self.departures["drift_refresh"]:
            return
        if self.refresh_every and len(self.S) and self.n_s_changes % self.refresh_every == 0:
            if not bordered_drift(self.Rinv, self.y, self.KS, self.S) \
                    <= self.departures["drift_tol"]:
                self.refresh_inverse()

    def refresh_inverse(self):
        """Recompute R from the cached kernel columns; record the drift of the updated R."""
        if not self.S:
            return 0.0
        try:
            fresh = self._invert_bordered()
        except np.linalg.LinAlgError:
            # numerically singular S (degenerate data): keep the updated inverse
            self.n_refresh_failed += 1
            return 0.0
        scale = np.max(np.abs(fresh))
        drift = float(np.max(np.abs(fresh - self.Rinv)) / scale) if scale > 0 else 0.0
        self.max_inverse_drift = max(self.max_inverse_drift, drift)
        self.Rinv = fresh
        self.fresh = True
        self.n_refresh += 1
        return drift
