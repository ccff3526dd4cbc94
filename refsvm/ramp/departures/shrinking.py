"""Departure ``shrinking``: steps 10-15 in rounds on a working set (as LIBSVM's shrinking).

The failure of the printed form.  Nothing fails; it is slow.  The loop of steps 10-15
updates g on all of I (Eq. 15) after every step, although most of V sits at a bound with
Eq. (3) met by a wide margin and never becomes the working example: on the real data sets
most of the time of a pass is these updates.

What it does instead: see :meth:`Shrinking._optimize_shrunk`.  The same stopping rule and
invariants; the values of g differ from the printed loop's only by rounding, but the
sequence of working examples may differ, and so may the local optimum of the non-convex
problem.  Stream that shows the saving: ``benchmarks/bench_ramp.py`` (NCheckerboard).

Setting: ``shrinking`` (gates the state's parameter ``shrinking``; ``shrink_margin`` is the
state's).  Docs: ``docs/wang_vucetic.rst``, reading 12.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Shrinking"]


class Shrinking:
    """Mixin of :class:`refsvm.ramp.online_svmr.OnlineSVMR`: the shrinking loop."""

    def _optimize_shrunk(self):
        """Alg. 1 steps 10-15 with shrinking (our addition, as in LIBSVM; ``shrinking=True``).

        The loop of steps 10-15 as printed updates g on all of I (Eq. 15) after every
        step, although most of V sits at a bound with Eq. (3) met by a wide margin and
        never becomes the working example.  Here the loop runs in *rounds*:

        1. the working set A = V minus the members at a bound whose Eq. (3) holds by
           more than ``shrink_margin`` (alpha = 0 with g < -margin, alpha = C with
           g > margin).  Every violator of V is in A, so step 10 on V is step 10 on A;
        2. steps 11-14 on A, with Eq. (15) applied to A only;
        3. Eq. (15) for the rest of I at once: g_k -= D_p y_p y_k k(x_p, x_k) with the
           net step D_p of every coordinate moved in the round (first moved first);
           kernel rows of coordinates back at 0 are released only now.

        Rounds repeat until step 10 on the whole of V finds no violator or the best
        gain is below ``min_gain``: the same stopping rule as the printed loop, so the
        invariants (a)-(c) hold as before.  The values of g differ from the printed
        loop's only by rounding, but the sequence of working examples may differ.
        """
        from ..online_svmr import eq14_new_alpha                # (the reference imports us)

        theta = self.shrink_margin
        while not self._cut_short():                             # departure step_budget
            v = np.flatnonzero(self.in_v)
            a, g = self.alpha[v], self.g[v]
            shrunk = ((a == 0.0) & (g < -theta)) | ((a == self.C) & (g > theta))
            A = v[~shrunk]                                       # 1. the working set
            best, gain = self._best_violator(A)                  # step 10
            if best is None:
                return
            min_gain = self.gain_threshold()
            if gain < min_gain or gain <= 0.0:                   # step 10, gain rule
                self.n_gain_stops += 1
                self.gain_stopped = True
                return
            self.n_shrink_rounds += 1
            self.n_shrunk += int(v.shape[0] - A.shape[0])
            moved = {}                                           # p -> D_p, first moved first
            self._forget_steps()                                 # the joint steps' history
            while best is not None and gain >= min_gain and gain > 0.0:  # 2. on A
                if self._cut_short():                            # departure step_budget
                    break
                p = int(A[best])
                if self._joint_step(p, gain, A, moved):          # pair or block step
                    best, gain = self._best_violator(A)          # step 11
                    continue
                a_old = self.alpha[p]
                a_new = float(eq14_new_alpha(a_old, self.g[p], self.qdiag[p], self.C))
                delta = a_new - a_old                            # Eq. (14)
                if delta == 0.0:
                    break
                row = self._row(p)
                self.alpha[p] = a_new
                moved[p] = moved.get(p, 0.0) + delta
                self.g[A] -= (delta * self.y[p]) * self.y[A] * row[A]   # Eq. (15) on A
                self.n_steps += 1
                best, gain = self._best_violator(A)              # step 11
            rest = np.ones(self.ids.shape[0], bool)
            rest[A] = False
            for p, d in moved.items():                           # 3. Eq. (15) on the rest
                if d != 0.0:
                    row = self._row(p)
                    self.g[rest] -= (d * self.y[p]) * self.y[rest] * row[rest]
                if self.alpha[p] == 0.0:
                    self._release_row(p)
