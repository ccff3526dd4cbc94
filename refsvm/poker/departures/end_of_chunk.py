"""Departures ``end_check`` and ``polish``: the end of a chunk checked, and g afresh in
doubled precision at large c.

*End check* (``end_check``, ``end_balance_tol``, ``end_cond``, ``end_residual_tol``).
The printed method trusts the end of its paths.  On degenerate data (rows of zeros, four
vectors of R^3 under the linear kernel) round-off can reach a singular active set: max|R|
= 1.8e12, ||M R - I|| = 3.8, and the path ends with y'alpha far from 0 or a kept g on the
wrong side of its margin.  The end of every chunk checks y'alpha = 0 and the signs in O(n),
and where R is ill-conditioned its residual; a breach raises :class:`PathError` (the
estimator learns the chunk again by another path).  Stream: rows of zeros among 3-D rows
under the linear kernel (``zero_rows_stream(1117)``, C = 84.2, in
``tests/poker/test_estimator.py``); docs paragraph "Fuzzing".

*Polish* (``polish``, ``polish_ck``).  The paths are exact in exact arithmetic, but at
c k_max above ``polish_ck`` an intermediate alpha is not representable: at c = 1e12 an
exchange that moves an alpha from 0 to c - 2.54 stores it an ulp of c (1.2e-4) off, and
the g carried along the path drift by that times k.  At the end of an operation every g
is recomputed correctly rounded (error-free products, ``math.fsum``) after one step of
iterative refinement of (b, alpha_s).  Stream: copies of a point with both labels at
C = 1e12 (``tests/poker/test_twins.py``); docs section "Extreme C".

*Exactness check* (``exact_check``, ``kkt_tol``, ``kkt_ulps``, ``h_ulps``, ``ulps_ck``,
``end_repair``).  The end check above only catches a path that went grossly wrong: its
levels grow with c and with n (1e-6 (1 + k_max c) on g, 1e-9 c n on y'alpha: 1 and 0.04
at c = 1e6), and it reads the kept g of I_s, which is 0 by definition.  On a nearly
constant kernel (RBF, gamma = 1e-9, c = 1e6, 40 points in chunks of 10) a path ends with
y'alpha = 7.4e-3 and every margin vector 7.4e-3 off its margin, and SelfInit (gamma =
1e-7) with the bias off by 0.74: both pass it.  :meth:`EndOfChunk.exactness` measures the
end as IncrementalSVM's check does (``refsvm.idsvm.departures.exactness``): y'alpha summed
correctly rounded (``math.fsum``), the g of I_s recomputed from the stored alpha, b and
margin columns (no kernel evaluation; where a plain product cannot decide, correctly
rounded by error-free products), the kept g of I_o and I_c on the right side of 0; the
levels are ``kkt_tol`` of the scale of g (1 + k_max alpha_max) and of alpha_max, and above
c k_max = ``ulps_ck`` at most ``kkt_ulps`` round-off floors eps (1 + |b| + k_max sum alpha)
and ``h_ulps`` eps sum alpha.  It changes no number; the estimator
(``refsvm.poker.estimators``) runs it after every path (SelfInit, selective sampling,
each chunk, each unlearning, IncrementalSVM's path carried over), and an end that fails
it is refined once (``end_repair``: the polish below, at any c) and checked again, then
learned by the next path of the ladder or rolled back with ``ExactnessError``.

g afresh, the balance, the KKT violation of the partition, the Newton step, the kernel
block, the levels of both checks from POKER's settings and the verdicts on them are the
core's (:mod:`refsvm.core.exactness`: ``kkt_levels``, ``kkt_verdict``, ``kkt_sentence``;
``refsvm.core.kernels.kernel_block``), with POKER's sign of the bias (f = w'phi - b); the
settings and the errors are POKER's.  The end check's ordered sums go through two methods
(``_end_balance``, ``_end_wrong_side``: the core's ``end_balance``, ``end_wrong_side``, in
Python here, compiled in the twin), the correctly rounded sums through four (``_fsum``,
``_exact_balance``, ``_g_exact``, ``_polish_g``): ``math.fsum`` here, the core's compiled
correctly rounded sum in the twin (the same bits: ``tests/core/test_exact_g.py``,
``tests/core/test_kkt_levels.py``).
"""

from __future__ import annotations

import math

import numpy as np

from ...core.active_set import two_sum
from ...core.bordered import bordered_beta, bordered_max_abs
from ...core.exactness import (EPS_MACH, balance, dot2_sum, end_balance, end_wrong_side,
                               g_exact, kkt_levels, kkt_sentence, kkt_verdict,
                               partition_violation, refine)
from ...core.kernels import kernel_block, stack_rows
from ..partition import FIXED, I_O, I_S, PathError

__all__ = ["EndOfChunk", "END_G_TOL"]

#: the end check's level on the kept g, of 1 + k_max c (a path gone grossly wrong)
END_G_TOL = 1e-6


class EndOfChunk:
    """Mixin of :class:`refsvm.poker.poker.POKERState`: the end of a chunk."""

    def _end_chunk(self, what, error=PathError):
        """The end of a chunk or of SelfInit: the path's end checked (``end_check``), g
        afresh at large c (``polish``) and the bias centred in its range
        (``centre_bias``)."""
        if self.departures["end_check"]:
            self._check_end(what, error)
        self._polish()
        self._centre_bias()
        self.n_chunks += 1

    def _check_end(self, what, error=PathError):
        """The end of a path: y'alpha = 0 within ``end_balance_tol`` c n and the kept g on
        the right side of 0 for I_o and I_c within ``END_G_TOL`` (1 + k_max c) (O(n); the
        paths keep both, so a breach means the active set went singular on the way): else
        ``error``.  The levels are the core's :func:`kkt_levels` (alpha_max = c, n
        examples), the verdict its :func:`kkt_verdict` (a NaN y'alpha fails; an example
        on the wrong side fails, none is allowed)."""
        n = self.n
        tau = self._end_balance()
        count = max(1, int(np.sum(self.status[:n] >= 0)))
        gtol, tol = kkt_levels(END_G_TOL, self.kmax, self.C,
                               h_tol=self.departures["end_balance_tol"], count=count)
        wrong = self._end_wrong_side(gtol)
        if kkt_verdict(wrong, abs(tau), (0, tol), nan_fails=True):
            raise error(
                f"{what} ended with y'alpha = {tau:.3g} (allowed {tol:.3g}) and "
                f"{wrong} examples on the wrong side of their margin")
        if self.S and not bordered_max_abs(self.R) * max(1.0, self.kmax) \
                <= self.departures["end_cond"]:
            # the inverse the next path starts from, checked where it is ill-conditioned
            # (O(|I_s|^3), rare): mended by a fresh R, or the active set is singular
            res = self._inverse_residual()
            limit = self.departures["end_residual_tol"]
            if not res <= limit:
                if not self._refresh() or not self._inverse_residual() <= limit:
                    raise error(f"{what} ended with a singular active set (||M R - I|| = "
                                f"{res:.3g} with max|R| = {bordered_max_abs(self.R):.3g})")

    def exactness(self, fresh=False):
        """The exactness check's verdict on the state at the end of an operation (module
        docstring): None when the KKT conditions and y'alpha = 0 hold within their
        levels, else a sentence saying what is off and by how much.  O(n |I_s|) flops on
        the stored margin columns, no kernel evaluation; changes nothing.

        ``fresh``: the g of I_o and I_c are recomputed too (:meth:`_fresh_g`) instead of
        read from the kept g: after an exchange, whose null direction is null for the
        rows of I_s but, on a nearly singular kernel, not for the others (g is not
        updated along it), the kept g of I_o and I_c can be off by more than the level
        (RBF gamma = 1e-9, c = 1e4: 9.6e-5); after a decrement that empties I_s they can
        be off by O(1) (the linear kernel, two examples of one class left: 1.57).
        O(n #SV) flops and uncounted kernel values."""
        n = self.n
        act = np.flatnonzero(self.status[:n] >= 0)
        if not act.size:
            return None
        d = self.departures
        a, y, st = self.alpha[act], self.y[act], self.status[act]
        b, kmax = float(self.b), float(self.kmax)
        amax, mass = float(np.max(a)), self._fsum(a)
        levels = kkt_levels(d["kkt_tol"], kmax, amax, self.C, d["ulps_ck"],
                            (d["kkt_ulps"], d["h_ulps"]), b, mass)
        gtol = levels[0]
        h = abs(self._exact_balance(y, a))
        # the kept g of I_o and I_c (or g afresh): on the right side of 0
        g = self._fresh_g(act, gtol) if fresh else self.g[act]
        v = partition_violation(st, g, margin=False)
        who = int(np.argmax(v))
        worst, where = float(v[who]), "g afresh" if fresh else "kept g"
        k = len(self.S)
        if k:
            # the g of I_s afresh: K(j, s) of every support vector j is KS[j, pos(s)]
            S = np.array(self.S, dtype=np.intp)
            sv = act[a > 0.0]
            ya = self.alpha[sv] * self.y[sv]
            K = np.asarray(self.KS)[sv, :k]
            ys = self.y[S]
            gs = ys * (ya @ K - b) - 1.0
            # the plain products are within `bound` of the exact g (a dot product of m
            # terms errs by at most (m + 2) eps times the sum of its terms' sizes)
            bound = (sv.size + 3) * EPS_MACH * 1.01 * (np.abs(ya) @ np.abs(K) + abs(b) + 1.0)
            doubt = np.flatnonzero(np.abs(gs) + bound > gtol)
            gs[doubt] = self._g_exact(ya, K[:, doubt].T, ys[doubt], b)
            p = int(np.argmax(np.abs(gs)))
            if abs(gs[p]) > worst:
                worst, who, where = float(abs(gs[p])), int(np.searchsorted(act, S[p])), "I_s"
        return kkt_sentence(kkt_verdict(worst, h, levels, nan_fails=True), worst, h, levels,
                            int(act[who]), where=where, show_levels=True)

    def _fresh_g(self, act, gtol):
        """g of the examples ``act`` (ids ascending) from the stored rows, alpha and b:
        the kernel values by numpy (the core's ``kernel_block``: uncounted; within a few
        ulps of the state's own), the sums plain where their error bound decides the sign
        test at level ``gtol``, else in doubled precision (Dot2, Ogita, Rump & Oishi), 512
        rows at a time."""
        n = self.n
        sv = act[self.alpha[act] > 0.0]
        out = np.empty(act.size)
        if not sv.size:
            out[:] = self.y[act] * -self.b - 1.0
            return out
        X = stack_rows(self.rows[:n], self.n_features, self.sparse)
        coef = self.alpha[sv] * self.y[sv]
        B = X[sv]
        b = float(self.b)
        st = self.status[act]
        k = self.kernel
        for lo in range(0, act.size, 512):
            rows = act[lo:lo + 512]
            K = kernel_block(X[rows], B, k.kind, k.gamma, k.degree, k.coef0)
            y = self.y[rows]
            g = y * (K @ coef - b) - 1.0
            bound = (sv.size + 3) * EPS_MACH * 1.01 * (np.abs(K) @ np.abs(coef) + abs(b) + 1.0)
            side = np.where(st[lo:lo + 512] == I_O, -g, g)
            doubt = np.flatnonzero((side + bound > gtol) & (side - bound <= gtol))
            if doubt.size:
                p, e = self._dot2_rows(coef, K[doubt])
                p, q = two_sum(p, np.full(doubt.size, -b))
                g[doubt] = y[doubt] * (p + (e + q)) - 1.0
            out[lo:lo + 512] = g
        return out

    def _dot2_rows(self, coef, K):
        """sum_j coef_j K[r, j] for every row r of K by Dot2, the terms in order: (p, s),
        the sum being p + s (the compiled twin: the core's compiled loop, the same
        operations)."""
        return dot2_sum(coef, K, start=(np.zeros(K.shape[0]), np.zeros(K.shape[0])))

    def _polish(self, force=False):
        """At large c (c k_max above ``polish_ck``), g afresh at the end of an operation.

        The path is exact in exact arithmetic, but its intermediate alphas need not be
        representable: at c = 1e12 an exchange that moves an alpha from 0 to c - 2.54
        stores it an ulp of c (1.2e-4) off, and g, updated by the exact rates, drifts by
        that much times k while the final partition (0, c, c) is exact again.  From the
        stored alpha and b, each g is then recomputed correctly rounded (exact products,
        ``math.fsum``), O(n #SV) kernel values; the bias of an empty I_s is then centred
        on exact margins.  Below ``polish_ck`` the round-off of g is below 1e-7 and
        nothing is done (every ordinary C), unless ``force`` (the repair of an end that
        failed the exactness check, departure ``end_repair``)."""
        if not force and (not self.departures["polish"]
                          or self.C * self.kmax <= self.departures["polish_ck"]):
            return
        act = np.flatnonzero(self.status[:self.n] >= 0)
        if self.S and self.phase != FIXED:
            # one step of iterative refinement of (b, alpha_s) on the exact residuals
            # of the bordered system: M [-db; dalpha_s] = -[y'alpha; g_s]
            sv = act[self.alpha[act] > 0.0]
            S = np.array(self.S, dtype=np.intp)
            h = self._exact_balance(self.y[act], self.alpha[act])
            gS = np.empty(self.n)
            self._polish_g(S, sv, gS)
            self._newton(np.concatenate(([h], gS[S])))
        sv = act[self.alpha[act] > 0.0]
        # g = 0 on I_s by definition; the others afresh
        self._polish_g(act[self.status[act] != I_S], sv, self.g)

    # ---- the ordered sums of the end check and the correctly rounded sums of the check
    # and the polish: the core's Python (refsvm.core.exactness, math.fsum) here; the
    # compiled twin defines the same methods on the core's compiled sums (``end_balance``,
    # ``end_wrong_side``; refsvm/_csrc/refsvm_fsum.c), the same bits
    def _fsum(self, values):
        """sum(values), correctly rounded."""
        return math.fsum(np.asarray(values, dtype=np.float64).tolist())

    def _end_balance(self):
        """y'alpha at the end of a path: the core's :func:`end_balance` (C times the sum
        of y at C, the other terms summed left to right)."""
        n = self.n
        return end_balance(self.status[:n], self.y[:n], self.alpha[:n], self.C)

    def _end_wrong_side(self, level):
        """How many examples of I_o and I_c have their kept g on the wrong side of 0 by
        more than ``level``: the core's :func:`end_wrong_side`."""
        n = self.n
        return end_wrong_side(self.status[:n], self.g[:n], level)

    def _exact_balance(self, y, alpha):
        """y'alpha, correctly rounded (the core's :func:`balance`, ``exact``)."""
        return balance(y, alpha, exact=True)

    def _g_exact(self, coef, K, y, b):
        """g of the rows of the kernel block K, correctly rounded, with POKER's sign of
        the bias (the core's :func:`g_exact`)."""
        return g_exact(coef, K, y, b, bias_sign=-1.0)

    def _polish_g(self, ids, sv, out):
        """out[i] = g_i for the examples i of ``ids`` in order, correctly rounded from
        alpha_j y_j of the support vectors ``sv``, their kernel values k(x_i, x_j)
        (counted, ``_k``; k(x_i, x_i) from ``kdiag``) and b (:meth:`_g_exact`)."""
        ya = self.alpha[sv] * self.y[sv]
        for i in ids:
            i = int(i)
            kv = np.array([self.kdiag[i] if j == i else self._k(i, int(j)) for j in sv],
                          dtype=np.float64)
            out[i] = self._g_exact(ya, kv[None, :], self.y[i:i + 1], self.b)[0]

    def _newton(self, r):
        """The Newton step of the polish: [db; dalpha_s] = -R r through the bordered
        inverse (r = [y'alpha; g_s]), taken with POKER's sign of the bias (the core's
        :func:`~refsvm.core.exactness.refine`) unless an alpha_s leaves [0, c].  True if
        taken (the compiled twin: the core's ``polish_step`` and ``polish_refine``)."""
        S = np.array(self.S, dtype=np.intp)
        step = refine(lambda v: bordered_beta(self.R, v), r, self.alpha[S], self.b, self.C,
                      bias_sign=-1.0)
        if step is None:
            return False
        self.alpha[S], self.b = step
        return True
