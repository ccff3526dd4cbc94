"""Iterative refinement of beta (settings ``refine``, ``refine_tol``, ``refactor_above``).

The failure of the printed form it answers: Eq. (5) multiplies by the *updated* inverse,
beta = -R [y_c; Q_Sc].  On noisy two-dimensional streams (a hundred margin vectors,
bordered matrix M of condition ~1e11; ``tests/idsvm/test_stress.py``, the noisy 2-D
streams, and the near-duplicates of ``tests/idsvm/test_degenerate.py``) that beta has
residuals |M beta + m| ~1e-7; the rates computed from it flip sign at random and the
adiabatic loop cycles.  Refined against M itself (at most ``refine`` corrections
beta <- beta - R (M beta + m), until the residual is below ``refine_tol`` of the scale
of its terms, or within the round-off of its own sums, (k + 2) u of that scale for k
margin vectors, u = 2^-53: above ``refine_tol`` = 1e-14 from k = 88 on) the residual is
at round-off; when refinement does not converge (above
``refactor_above``) R is refactorised from the kernel columns and beta computed again.

Docs: ``docs/cauwenberghs_poggio.rst``, "Safeguards" (item 1).
"""

import numpy as np

from ...core.bordered import bordered_beta
from ...core.bordered import dot as _dot
from ...core.bordered import matvec as _matvec
from ..constants import EPS_MACH

__all__ = ["Refinement"]


class Refinement:
    """Mixin of the IDSVM state: the refined beta of a joining example and of the
    candidate (with its rates gamma, Eq. 7, which also yield the residual)."""

    def _refined_beta(self, i, m, beta):
        """beta^(i) = -M^-1 m refined from the printed beta = -R m (:meth:`_refine`); R
        refactorised and beta computed again when refinement does not converge."""
        beta, rel = self._refine(beta, m)
        if rel > self.departures["refactor_above"] and self._fresh_inverse():
            beta, _ = self._refine(bordered_beta(self.Rinv, m), m)
        return beta

    def _resid_scale(self, m, beta):
        """max|m| + max(1, k_max) sum|beta|: a bound of max(|M||beta| + |m|), the scale of
        the residual's terms (|M_ab| <= max(1, k_max))."""
        return float(np.max(np.abs(m))) + max(1.0, self.kscale) * _dot(np.abs(beta),
                                                                        np.ones(beta.size))

    def _refine(self, beta, m):
        """Iterative refinement of beta = -M^-1 m: rho = M beta + m (M from the cached
        kernel columns, O(k^2)), beta <- beta - R rho, at most ``refine`` times, until
        max|rho| <= refine_tol (max|m| + max(1, k_max) sum|beta|) (a bound of the scale
        of the residual's terms, from the first beta).  Returns (beta, the relative
        residual)."""
        M = self._bordered()
        smax = self._resid_scale(m, beta)
        if smax == 0.0:
            return beta, 0.0
        n_refine = self.departures["refine"]
        for it in range(n_refine + 1):
            # M's rows taken as the columns of M' (M is symmetric up to the kernel's
            # round-off): the twin's order, which reads them contiguously
            rho = _matvec(M.T, beta) + m
            beta, rmax, done = self._correct(beta, rho, smax, it == n_refine)
            if done:
                break
        return beta, rmax / smax

    def _correct(self, beta, rho, smax, last):
        """One step of the refinement of beta from its residual rho = M beta + m:
        (beta, max|rho|, done), done when max|rho| <= max(refine_tol, (k + 2) u) smax (k + 1
        = beta.size) or this was the ``last`` check, else beta - Rinv rho."""
        rmax = float(np.max(np.abs(rho)))
        # a residual within the round-off of its own sums ((k + 2) terms: u (k + 2) of
        # their scale, u = EPS_MACH / 2 = 2^-53) is as small as a correction can make it
        tol = max(self.departures["refine_tol"], (beta.size + 1) * (0.5 * EPS_MACH))
        if rmax <= tol * smax or last:
            return beta, rmax, True
        return beta + bordered_beta(self.Rinv, rho), rmax, False

    def _refined_rates(self, c, col, m, beta):
        """beta^(c) refined from the printed beta = -R m, and gamma (Eq. 7) from it.

        gamma of a margin vector is the residual of its row, gamma_{S_a} = (M beta + m)_{a+1}
        (M's row 0: y_S' beta_S + y_c), so the sweep over every example that gamma needs
        anyway also yields the residual of the margin rows: while beta needs no
        correction, no separate O(|S|^2) pass over M.  After a pass whose beta needed one
        (``refined``) the first residual is computed against M instead, before the
        O(n |S|) sweep.  When refinement does not converge, R is refactorised and the
        whole computed once more.  Returns (beta, gamma)."""
        n_refine = self.departures["refine"]
        for attempt in range(2):
            if attempt:
                beta = bordered_beta(self.Rinv, m)
            smax = self._resid_scale(m, beta)
            if smax == 0.0:
                return beta, self._gamma(c, col, beta)
            explicit = self.refined
            for it in range(n_refine + 1):
                if explicit:
                    rho = _matvec(self._bordered().T, beta) + m      # as _refine
                else:
                    gamma = self._gamma(c, col, beta)
                    rho = self._residual_from_gamma(c, beta, gamma)
                beta, rmax, done = self._correct(beta, rho, smax, it == n_refine)
                if done:
                    break
                explicit = False
            self.refined = it > 0
            if explicit:
                gamma = self._gamma(c, col, beta)
            if attempt or not rmax / smax > self.departures["refactor_above"] \
                    or not self._fresh_inverse():
                return beta, gamma

    def _residual_from_gamma(self, c, beta, gamma):
        """M beta + m read from gamma = self._gamma(c, col, beta): row 0 y_S' beta_S + y_c,
        row a + 1 gamma_{S_a} (M by rows: gamma_s = Q_sc + sum_j Q_sj beta_j + y_s beta_b)."""
        S = np.array(self.S, dtype=np.intp)
        return np.concatenate(([_dot(self.y[S], beta[1:]) + self.y[c]], gamma[S]))

    def _fresh_inverse(self):
        """Recompute R from the cached columns unless it is fresh already; returns
        whether R changed."""
        if self.fresh or not self.S:
            return False
        try:
            self.Rinv = self._invert_bordered()
        except np.linalg.LinAlgError:
            return False
        self.fresh = True
        self.n_pivot_refresh += 1
        return True
