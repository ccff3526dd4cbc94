"""The repair of KKT violations after an operation (settings ``repair``, ``repair_tol``).

The failure of the printed form it answers: a rate below its round-off level counts as
zero (``_sensitivities``), so an example whose g crosses its bound at that rate raises
no event, and the operation ends with that example a little on the wrong side of its
KKT condition (the noisy 2-D streams of ``tests/idsvm/test_stress.py``, the collinear
and duplicate streams of ``tests/idsvm/test_degenerate.py``).  After each operation the
example violating its condition most on the kept g, by more than ``repair_tol``
(1 + k_max alpha_max), is unlearned and learned again, worst first, at most ``repair``
times; then y'alpha is repaired when it is off (:mod:`.balance_repair`), and the
exactness check (:mod:`.exactness`) judges what is left.

Docs: ``docs/cauwenberghs_poggio.rst``, "Safeguards" (item 3).
"""

__all__ = ["Repair"]


class Repair:
    """Mixin of the IDSVM state: repair, then the exactness check."""

    def _repair_and_check(self, c, amax0, mass0=0.0):
        """After an operation on c: at most ``repair`` repairs, then (``check``) the
        exactness check; ExactnessError if the conditions cannot be restored.  ``amax0``,
        ``mass0``: alpha_max and sum alpha before the operation (the round-off of g and
        h is that of the alphas they were computed with)."""
        d = self.departures
        extreme = self._extreme()
        for it in range(d["repair"] + 1):
            v, worst = self._worst_violation()
            amax = max(self._scales()[0], amax0)
            mass = max(self._mass(), mass0) if extreme else 0.0
            if worst <= self._g_tol(d["repair_tol"], d["repair_ulps"], amax, mass) \
                    or it == d["repair"]:
                break
            self.n_repairs += 1
            col = self._unlearn_one(v)
            self._centre_bias()
            self._learn(v, col=col)
            self._polish()
            self._centre_bias()
        if self._repair_balance(amax0, mass0):                 # balance_repair.py
            v, worst = self._worst_violation()
        if d["check"]:
            self._check_exact(c, v, worst, amax0, mass0)
