"""The path that drives a set F of alphas (beyond the paper): the machinery shared by the
chunk decrement (``unlearning``) and the joint increment (``joint_increment``).

Fine & Scheinberg parametrise the KKT system by u (Eq. 3, b fixed) and by b (Eq. 4).
Here the parameter t drives the alphas of a set F: alpha_F = (1 - t) a0_F (the
decrement: the removed examples' bounds go to 0) or alpha_F = t c (the joint increment:
the chunk's violators rise together), while b stays adjustable, y'alpha = 0 and the I_s
rows hold.  On I_s: [-db; dalpha_s] = R [h; r] with h = -y_F'dalpha_F and
r_s = -y_s sum_F k_sF y_F dalpha_F.  Each method below is one named call of the printed loop
(:meth:`refsvm.poker.poker.POKERState._follow`) in the modes UNLEARN and JOINT.
Docs section "One factorisation for every path".
"""

from __future__ import annotations

import numpy as np

from ...core.bordered import dot, matvec
from ..partition import EPS_ARATE, EV_END, FORCED, I_C, UNLEARN

__all__ = ["ForcedPath"]


class ForcedPath:
    """Mixin of :class:`refsvm.poker.poker.POKERState`: the parametric path of a set F."""

    def _forced_rates(self, mode):
        """(dalpha_s, db, t_end, b_only, dalpha_F) of the piece: alpha_F moves to 0
        (UNLEARN) or to c (JOINT) as t goes to 1, y'alpha = 0 and the I_s rows kept."""
        n, k = self.n, len(self.S)
        S = np.array(self.S, dtype=np.intp)
        y = self.y[:n]
        yS = y[S]
        F = self.F
        aF = -self.a0[F] if mode == UNLEARN else self.a0[F]
        b_only = False
        bdot = 0.0
        t_end = 1.0 - self.t
        h = -dot(y[F], aF)                          # y_s'dalpha_s must equal h
        rhs = -(yS * matvec(self.KF[S], y[F] * aF)) if F.shape[0] else np.zeros(k)
        if k:
            sol = matvec(self.R, np.concatenate(([h], rhs)))
            bdot, aS = -sol[0], sol[1:]
        elif abs(h) <= self.aw:
            aS = np.zeros(0)
        else:
            # I_s empty: b alone moves until an example reaches its margin
            t_end, b_only, bdot, aS = np.inf, True, np.sign(h), np.zeros(0)
            aF = np.zeros(F.shape[0])
        return aS, bdot, t_end, b_only, aF

    def _forced_sensitivities(self, inner, terms, aF, kr):
        """The share of dalpha_F in the sensitivities and in their round-off bound."""
        F = self.F
        if F.shape[0]:
            inner = inner + matvec(self.KF[: self.n], self.y[: self.n][F] * aF)
        return inner, terms + (dot(np.abs(aF), kr[F]) if F.shape[0] else 0.0)

    def _joint_events(self, athr, aF, joins, st, gdot, rtol):
        """The joint increment's events: a member of F (g < 0, alpha_F = t c) reaching
        its margin joins I_s; and a rate of alpha_s counts as zero relative to the rates
        of F too (when the true alpha_s rates are all 0, y_F'a_F = 0 and only b moves,
        what is left of them is round-off of R, and a margin vector at c would leave by
        it at a zero step, rejoin and leave again for ever)."""
        if aF.shape[0]:
            athr = max(athr, EPS_ARATE * float(np.max(np.abs(aF))))
        return athr, joins | ((st == FORCED) & (gdot > rtol))

    def _move_forced(self, mode, aF, t):
        """alpha_F and t along the piece."""
        F = self.F
        if F.shape[0] and mode == UNLEARN:
            self.alpha[F] = np.maximum(self.alpha[F] + aF * t, 0.0)
        elif F.shape[0]:
            self.alpha[F] = np.clip(self.alpha[F] + aF * t, 0.0, self.C)
        self.t += t

    def _forced_end(self, mode):
        """t = 1: alpha_F at its end (0 for the decrement, c for the joint increment)."""
        self.t = 1.0
        self.alpha[self.F] = 0.0 if mode == UNLEARN else self.a0[self.F]

    def _leave_forced(self, who):
        """A member of F reached its margin (joint increment): it leaves F at alpha = t c
        and joins I_s as an example off its bound (status I_C: sigma = -1 in an
        exchange)."""
        pos = int(np.flatnonzero(self.F == who)[0])
        self.F = np.delete(self.F, pos)
        self.KF = np.delete(self.KF, pos, axis=1)
        self.status[who] = I_C

    def _decrement_emptied(self):
        """No event on a decrement's piece: I_s emptied at t = 1 up to round-off (the last
        margin vector leaves with the last of the removed mass; nothing of the other class
        can absorb the round-off residue): the decrement is over.  Returns (t, kind,
        db)."""
        return 0.0, EV_END, 0.0
