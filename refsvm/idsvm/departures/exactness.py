"""The exactness check after every operation (settings ``check``, ``kkt_tol``).

The failure of the printed form it answers: nothing in Eqs. (3)-(9) notices when an
operation ends off the optimum -- a rate judged zero that was not, a tie resolved by
round-off, a cycle cut by the step budget.  After each operation (one example learned
or unlearned, each half of a leave-one-out) the KKT conditions are checked on the kept g
(O(n)) and h = sum_i y_i alpha_i on alpha; a violation above ``kkt_tol`` (1 + k_max
alpha_max) (|h| above ``kkt_tol`` alpha_max; above ``polish_above``, multiples of the
round-off floor instead, see :mod:`.polish`) raises :class:`ExactnessError`, and the
operation is rolled back (:mod:`.rollback`).  A guard: it changes no number of an
operation that passes, so it stays on in the paper form, where it is what reports the
streams on which the printed method loses exactness (the noisy and duplicate streams of
``tests/idsvm/test_stress.py`` and ``tests/idsvm/test_degenerate.py``).

Docs: ``docs/cauwenberghs_poggio.rst``, "Safeguards" (item 3).
"""

import math

import numpy as np

from ...core.bordered import dot as _dot
from ...core.exactness import (balance, kkt_levels, kkt_sentence, kkt_verdict,
                               partition_violation)

__all__ = ["ExactnessCheck", "ExactnessError"]


class ExactnessError(RuntimeError):
    """A safeguard fired (the step budget ran out, or the KKT conditions could not be
    restored within ``kkt_tol``): the operation was rolled back, the state is exactly
    the one before it (``example`` is the id of the example that was being learned or
    unlearned)."""

    def __init__(self, message, example=-1):
        super().__init__(message)
        self.example = int(example)


class ExactnessCheck:
    """Mixin of the IDSVM state: the KKT conditions and h = 0 after an operation."""

    def _worst_violation(self):
        """(id, violation) of the example that violates its KKT condition most on the kept
        g: -g in R, g in E, |g| in S (learned examples only; the least id on ties; the
        core's :func:`~refsvm.core.exactness.partition_violation`)."""
        n = self.n
        if not n:
            return -1, 0.0
        v = partition_violation(self.status[:n], self.g[:n])
        i = int(np.argmax(v))
        return i, float(v[i])

    def _balance_and_levels(self, amax0, mass0):
        """(h, levels): h = sum_i y_i alpha_i over the learned examples (left to right;
        above ``polish_above`` summed exactly, Sum2) and the check's levels (g, h) (the
        core's :func:`kkt_levels`), with the scales of the larger of the alphas now and
        ``amax0``, ``mass0`` (before the operation)."""
        d = self.departures
        extreme = self._extreme()
        amax = max(self._scales()[0], amax0)
        mass = max(self._mass(), mass0) if extreme else 0.0
        n = self.n
        act = self.status[:n] >= 0
        if extreme:
            h = balance(self.y[:n][act], self.alpha[:n][act])        # Sum2 (as _polish)
        else:
            h = _dot(self.y[:n][act], self.alpha[:n][act])
        levels = kkt_levels(d["kkt_tol"], self.kscale, amax, self.C,
                            d["polish_above"] if d["polish"] else math.inf,
                            (d["kkt_ulps"], d["h_ulps"]), self.b, mass)
        return h, levels

    def _check_exact(self, c, v, worst, amax0, mass0):
        """ExactnessError unless the worst violation ``worst`` (of example v) is within
        ``kkt_tol`` of the scale of g and |h| within ``kkt_tol`` alpha_max; the scales
        are those of the larger of the alphas now and ``amax0``, ``mass0`` (before the
        operation).  Above ``polish_above`` h is summed exactly and both levels are
        capped by multiples of the round-off floor (``kkt_ulps``, ``h_ulps``).  The levels,
        the verdict and its sentence are the core's (:func:`kkt_levels`,
        :func:`kkt_verdict`: a NaN passes; :func:`kkt_sentence`: the first failure)."""
        d = self.departures
        h, levels = self._balance_and_levels(amax0, mass0)
        h = abs(h)
        failed = kkt_sentence(kkt_verdict(worst, h, levels), worst, h, levels, v,
                              repairs=d["repair"], h_name="sum_i y_i alpha_i", first=True)
        if failed:
            raise ExactnessError(failed, c)
