"""Departure ``joint_increment`` (an extension, beyond the paper): a chunk's violators rise
together.

Fig. 1 learns a chunk by two paths: the fixed-bias path (Eq. 3) moves the old margin
vectors with b held, and the adjustable-bias path (Eq. 4) moves many of them back.  The
joint increment (the multiple incremental path of Karasuyama & Takeuchi, NIPS 2009, on
this family's machinery) follows one path instead: the violated examples F of the chunk
rise together, alpha_F = t c for t from 0 to 1, with b adjustable and y'alpha = 0 (the
path of :mod:`.forced_path`).  The same exact SVM in 4-5x fewer breakpoints (10,000 rows
in chunks of 100, ``benchmarks/bench_poker.py``).  With ``joint_increment`` False a
chunk asked for jointly is refused.  Docs section "One factorisation for every path".
"""

from __future__ import annotations

import numpy as np

from ..partition import FORCED, I_C, I_O, IDLE, JOINT, CyclingError, JointIncrementError

__all__ = ["JointIncrement", "JOINT_BLOCK"]

#: the joint increment scores this many new examples at a time (``_learn_joint``): the
#: kernel values of a block with the support vectors are kept until the violated ones'
#: columns are formed, so the block bounds that memory (256 x #SV doubles)
JOINT_BLOCK = 256


class JointIncrement:
    """Mixin of :class:`refsvm.poker.poker.POKERState`: the joint increment."""

    def _refuse_joint(self, joint):
        """A chunk asked for jointly where the joint increment is off: a ValueError,
        before anything is stored."""
        if joint and not self.departures["joint_increment"]:
            raise ValueError("the joint increment is a departure from the paper, switched "
                             "off here (departures['joint_increment'] is False)")

    def _learn_joint(self, ids):
        """The joint increment (beyond the paper; the multiple incremental path of
        Karasuyama & Takeuchi, NIPS 2009, on this family's machinery): the chunk's
        violated examples F start at alpha = 0 and rise together, alpha_F = t c for t
        from 0 to 1, while b stays adjustable and y'alpha = 0 and the I_s rows hold
        (the decrement's parametric system with the opposite sign).  A member of F whose
        g reaches 0 joins I_s with its alpha as it is; at t = 1 the rest are at c.  One
        path instead of Fig. 1's two: the fixed-bias path moves the old margin vectors
        with b held, and the adjustable-bias path moves many of them back."""
        ids = np.asarray(ids, dtype=np.intp)
        # the scores, JOINT_BLOCK new examples at a time: the kernel values with the
        # support vectors off I_s kept for the violated ones (``_f_columns``), the
        # memory of the block bounded
        yj = self.y[ids]
        s = np.empty(ids.size)                            # g_j at alpha_j = 0
        parts = []
        for start in range(0, ids.size, JOINT_BLOCK):
            stop = min(start + JOINT_BLOCK, ids.size)
            f, sv_off, V = self._f_of(ids[start:stop].tolist(), values=True)
            s[start:stop] = yj[start:stop] * (f - self.b) - 1.0
            parts.append(V[s[start:stop] < 0.0])
        V = np.concatenate(parts) if len(parts) > 1 else parts[0]
        self.g[ids] = s
        self.p[ids] = -1.0 - self.b * yj
        self.d[ids] = 0.0
        violated = s < 0.0
        # margin met: I_o, nothing changes; violated: in F, alpha_j = 0
        self.status[ids] = np.where(violated, FORCED, I_O)
        F = ids[violated]
        if F.size:
            self.KF = self._f_columns(F, sv_off, V)
            self.F = F
            self.a0[F] = self.C
            self.t = 0.0
            try:
                self._follow(JOINT)
            except CyclingError as exc:                   # on degenerate data
                raise JointIncrementError(f"joint increment: {exc}") from exc
            self.alpha[self.F] = self.C
            self.status[self.F] = I_C
            self.F = np.zeros(0, dtype=np.intp)
            self.KF = np.zeros((0, 0))
        self.phase = IDLE
        self._end_chunk("joint increment", JointIncrementError)
        return int(len(F))

    def _f_columns(self, F, sv_off, V):
        """The kernel columns of F (n x |F|, 0 off the problem), each kept in the cache
        for its join (not evaluated again); the values with the support vectors off I_s
        are those of the scores (row c of V: member c), not evaluated again."""
        KF = np.empty((self.n, len(F)))
        for c, j in enumerate(F):
            KF[:, c] = self._known(self._column(int(j), (sv_off, V[c])))
            self._cache_put(int(j), KF[:, c])
        return KF
