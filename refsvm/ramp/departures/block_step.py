"""Departure ``cycle_window``: the cycle detector and the exact step on a cycle's block.

The failure of the printed form.  Beyond pairs, steps 10-15 can circle on a nearly singular
block of three to eight coordinates (triples and clusters of close points, pairs just above
``pair_eta`` with a third point between their steps): the one-coordinate steps of Eq. (14)
go round the block with gains that do not shrink, and the number of steps grows with C.

What it does instead.  When the last ``cycle_window`` steps of the loop (a pair step
counting as two) went to at most ``cycle_set`` examples, the working example is one of
them, its Eq. (13) gain is at least ``cycle_ratio`` times that of the step ``cycle_window``
back, and their block H of the dual is nearly singular (det H <= ``cycle_eta`` prod H_ii,
read from kept rows), the sub-problem on those coordinates is solved exactly on the faces
of the box (:meth:`BlockStep._block_step`: an active-set search of at most
``block_guesses`` faces from alpha, else every face, stopping at a KKT point to
``block_kkt_tol``) when that gains more than the Eq. (14) step it replaces; Eq. (15) for
every coordinate of the block in one pass.

Streams that show it: the clustered streams of :func:`refsvm._testing.clustered_streams`
(``tests/ramp/test_online_svmr.py``, ``test_clustered_stream_cycles_without_the_block_step``
and the census ``test_clustered_stream_census_of_400_is_flat_in_C``: without the block step
the steps grow more than 3x from C = 1e3 to 1e12).

Settings: ``cycle_window`` (0: off), ``cycle_set``, ``cycle_ratio``, ``cycle_eta``,
``block_guesses`` (0: every face at once), ``block_kkt_tol``; ``pair_eps`` for a face singular
to round-off.  Docs: ``docs/wang_vucetic.rst``, reading 13 and "Departures from the printed
algorithm".
"""

from __future__ import annotations

__all__ = ["BlockStep"]


class BlockStep:
    """Mixin of :class:`refsvm.ramp.online_svmr.OnlineSVMR`: the cycle detector and block step."""

    def _try_block_step(self, q, gain, A=None, moved=None):
        """A block step on a detected cycle that the working example q belongs to
        (:meth:`_cycle`) when it gains more than the Eq. (14) step on q; Eq. (15) on ``A``
        (all of I when None), the rows of coordinates back at 0 released (when ``moved`` is
        None) or the moves added to ``moved`` (a shrinking round).  A detected cycle clears
        the history whether the step is taken or not.  Returns True when taken."""
        cyc = self._cycle(self._hist, q, gain)
        if cyc is None:
            return False
        self._hist = []
        S, H = cyc
        moves = self._block_step(S, H, [float(self.g[r]) for r in S], gain)
        if moves is None:
            return False
        if moved is None:
            self._block_eq15(S, moves)                           # Eq. (15), every coordinate
            for r in S:
                if self.alpha[r] == 0.0:
                    self._release_row(r)
        else:
            for r, dm in zip(S, moves):                          # each moved in this round
                moved[r] = moved[r] + dm
            self._block_eq15(S, moves, A)                        # Eq. (15) on A
        self._last = self._back = -1
        return True

    def _cycle(self, hist, q, gain):
        """(S, H) for a detected cycle that the working example q (Eq. 13 gain ``gain``)
        belongs to, else None: S its positions (increasing), H its block of the dual.

        ``hist`` holds (position, gain) of the steps since the loop (or the shrinking
        round) started or since the last block step, newest last (a pair step as two steps,
        each with the gain of the Eq. 13 step it replaced).  A
        cycle: at least ``cycle_window`` steps, the last ``cycle_window`` of them on at most
        ``cycle_set`` distinct examples, q one of them; ``gain`` at least ``cycle_ratio``
        times the gain of the step ``cycle_window`` back (a loop that converges normally
        shrinks its gains geometrically; one that circles on a nearly singular block does
        not); and the block is nearly singular (:meth:`_block_matrix`)."""
        w = self.cycle_window
        if w == 0 or len(hist) < w:
            return None
        window = hist[len(hist) - w:]
        if not gain >= self.cycle_ratio * window[0][1]:
            return None
        members = []
        for p, _ in window:
            if p not in members:
                if len(members) == self.cycle_set:
                    return None
                members.append(p)
        if q not in members or len(members) < 2:
            return None
        S = sorted(members)
        H = self._block_matrix(S)
        if H is None:
            return None
        return S, H

    def _block_matrix(self, S):
        """H_ij = y_i y_j k(x_i, x_j) (H_ii = Q_ii) on the positions S when it is nearly
        singular, else None: prod_c piv_c / H_cc <= ``cycle_eta`` over the pivots piv_c of
        the elimination of H without pivoting in increasing position (det H over
        prod_c H_cc; 1 - c^2 for a pair; any pivot <= 0 counts as singular).  Reads kept
        rows only (k(x_i, x_j) from the row of i, else of j; None when neither is kept),
        so it evaluates no kernel and changes nothing."""
        k = len(S)
        H = [[0.0] * k for _ in range(k)]
        for i in range(k):
            H[i][i] = float(self.qdiag[S[i]])
            if not H[i][i] > 0.0:
                return None
            for j in range(i + 1, k):
                ri = self._kept_row(S[i])
                rj = self._kept_row(S[j])
                if ri is not None:
                    v = float(ri[S[j]])
                elif rj is not None:
                    v = float(rj[S[i]])
                else:
                    return None
                H[i][j] = H[j][i] = (float(self.y[S[i]]) * float(self.y[S[j]])) * v
        M = [list(r) for r in H]
        ratio = 1.0
        for c in range(k):
            piv = M[c][c]
            if not piv > 0.0:
                ratio = 0.0
                break
            ratio = ratio * (piv / H[c][c])
            for r in range(c + 1, k):
                f = M[r][c] / piv
                for cc in range(c + 1, k):
                    M[r][cc] = M[r][cc] - f * M[c][cc]
        if not ratio <= self.cycle_eta:
            return None
        return H

    def _kept_row(self, p):
        """p's kernel row when kept and not parked (complete over I), else None."""
        i = int(self.ids[p])
        if i not in self.krow or i in self.parked:
            return None
        return self.krow[i]

    def _block_step(self, S, H, g, gain):
        """Exact maximisation of the dual over the coordinates S (2 to ``cycle_set`` of
        them, positions in increasing id; H their block, :meth:`_block_matrix`) in the box
        [0, C]^k, the others fixed (our departure, ``docs/wang_vucetic.rst`` reading 13),
        when it gains more than ``gain`` (the Eq. 13 gain of the one-coordinate step it
        replaces).  ``g`` are their g values.

        The sub-problem is Eq. (13) on k coordinates, max g'd - 1/2 d'Hd with alpha + d in
        the box.  Its maximiser is the maximiser of some face of the box (each coordinate
        free, at 0 or at C) restricted to that face, where H on the free coordinates F is
        not singular (if it is, the maximisers of the face reach a smaller face); a
        feasible face point that meets the KKT conditions (``block_kkt_tol``) is a
        maximum, the problem being convex.  The search (:meth:`_face` solves one face):

        1. at most ``block_guesses`` faces of a primal active-set search from x = alpha:
           the first face fixes the coordinates at a bound whose g points out of the box
           and frees the others.  When a face's point leaves the box, x moves towards it
           up to the first bound crossed (least index on ties) and that coordinate is
           fixed there; when it is in the box but violates the KKT conditions, x moves to
           it and the first violating coordinate is freed; a singular face fixes the
           coordinate of its vanishing pivot at C where its g is positive, else at 0.  It
           ends at a KKT point or at a face already tried;
        2. without a KKT point there, every one of the 3^k faces in the order of the
           number sum_i s_i 3^i (s_i = 0 free, 1 at 0, 2 at C): the first of the largest
           gain among the feasible faces wins, and the search stops at the first KKT one.

        Sets alpha on S (the bound values exactly) and counts one step; returns the moves
        d, or None (nothing changed) when the maximum gains no more than ``gain``."""
        C = self.C
        k = len(S)
        a = [float(self.alpha[p]) for p in S]
        best, best_new = gain, None
        # 1. the active-set search from alpha: x its current point, in the box
        state = [1 if a[i] == 0.0 and g[i] <= 0.0 else 2 if a[i] == C and g[i] >= 0.0 else 0
                 for i in range(k)]
        x = list(a)
        tried = []
        done = False
        for _ in range(self.block_guesses):
            code = sum(state[i] * 3 ** i for i in range(k))
            if code in tried:
                break
            tried.append(code)
            new, d, out, val, viol = self._face(H, g, a, state)
            if new is None:                                      # singular: fix its pivot's
                i = out                                          # coordinate by its g at alpha
                state[i] = 2 if g[i] > 0.0 else 1
                x[i] = C if state[i] == 2 else 0.0
                continue
            if out:                                              # step towards new to the first
                hit = out[0]                                     # bound it crosses (least index)
                t = ((0.0 if new[hit] < 0.0 else C) - x[hit]) / (new[hit] - x[hit])
                for i in out[1:]:
                    ti = ((0.0 if new[i] < 0.0 else C) - x[i]) / (new[i] - x[i])
                    if ti < t:
                        hit, t = i, ti
                for i in range(k):
                    if state[i] == 0:
                        x[i] = min(max(x[i] + t * (new[i] - x[i]), 0.0), C)
                state[hit] = 1 if new[hit] < 0.0 else 2
                x[hit] = 0.0 if new[hit] < 0.0 else C
                continue
            if not viol:                                         # a KKT point: the maximum
                if val > best:
                    best, best_new = val, new
                done = True
                break
            x = list(new)                                        # free the first violator
            state[viol[0]] = 0
        # 2. every face
        for code in range(0 if done else 3 ** k):
            state = [(code // 3 ** i) % 3 for i in range(k)]
            new, d, out, val, viol = self._face(H, g, a, state)
            if new is None or out:                               # singular, or out of the box
                continue
            if val > best:                                       # first of the largest gain
                best, best_new = val, new
            if not viol:  # the problem is convex: a KKT point is its maximum
                break
        if best_new is None:
            return None
        moves = [best_new[i] - a[i] for i in range(k)]
        if all(dm == 0.0 for dm in moves):
            return None
        for i in range(k):
            self.alpha[S[i]] = best_new[i]
        self.n_steps += 1
        return moves

    def _face(self, H, g, a, state):
        """The maximiser of the block sub-problem on one face of the box (``_block_step``;
        state[i]: 0 free, 1 at 0, 2 at C).  d_B = bound - alpha_B, H_FF d_F = g_F - H_FB d_B
        by elimination without pivoting in increasing position.

        Returns (new, d, out, val, viol): the point alpha + d, the step, the free
        coordinates whose point leaves [0, C] (when there are any, val and viol are not
        computed: None), the gain g'd - 1/2 d'Hd, and the bound coordinates where the KKT
        conditions of the box QP fail (r = g - H d <= 0 at 0, >= 0 at C, to
        ``block_kkt_tol`` of |g_i| + sum_j |H_ij d_j|; r = 0 on F by construction).  When
        H_FF is singular to round-off (a pivot at most ``pair_eps`` H_ii): (None, None, i,
        None, None), i the coordinate of that pivot."""
        C = self.C
        k = len(a)
        d = [0.0] * k
        new = [0.0] * k
        for i in range(k):
            if state[i] == 1:
                new[i] = 0.0
                d[i] = 0.0 - a[i]
            elif state[i] == 2:
                new[i] = C
                d[i] = C - a[i]
        free = [i for i in range(k) if state[i] == 0]
        m = len(free)
        # the free system: M x = r, M = H_FF, r = g_F - H_FB d_B
        M = [[H[free[r]][free[c]] for c in range(m)] for r in range(m)]
        rhs = [0.0] * m
        for r in range(m):
            t = g[free[r]]
            for j in range(k):
                if state[j] != 0:
                    t = t - H[free[r]][j] * d[j]
            rhs[r] = t
        for c in range(m):                                       # elimination
            piv = M[c][c]
            if not piv > self.pair_eps * H[free[c]][free[c]]:
                return None, None, free[c], None, None
            for r in range(c + 1, m):
                f = M[r][c] / piv
                for cc in range(c + 1, m):
                    M[r][cc] = M[r][cc] - f * M[c][cc]
                rhs[r] = rhs[r] - f * rhs[c]
        x = [0.0] * m
        for r in range(m - 1, -1, -1):                           # back substitution
            t = rhs[r]
            for cc in range(r + 1, m):
                t = t - M[r][cc] * x[cc]
            x[r] = t / M[r][r]
        out = []
        for r in range(m):
            i = free[r]
            new[i] = a[i] + x[r]
            d[i] = x[r]
            if not (0.0 <= new[i] <= C):
                out.append(i)
        if out:
            return new, d, out, None, None
        lin = 0.0
        quad = 0.0
        viol = []
        for i in range(k):
            lin = lin + g[i] * d[i]
            hd = 0.0
            habs = 0.0
            for j in range(k):
                hd = hd + H[i][j] * d[j]
                habs = habs + abs(H[i][j] * d[j])
            quad = quad + d[i] * hd
            r = g[i] - hd
            tol = self.block_kkt_tol * (abs(g[i]) + habs)
            if (state[i] == 1 and r > tol) or (state[i] == 2 and r < -tol):
                viol.append(i)
        return new, d, out, lin - 0.5 * quad, viol

    def _block_eq15(self, S, moves, at=None):
        """Eq. (15) for every coordinate of a block step, in one pass (on ``at``, or all of I):
        g_k -= y_k (c_1 k(x_1, x_k) + c_2 k(x_2, x_k) + ...), c_i = d_i y_i."""
        acc = None
        for p, dm in zip(S, moves):
            r = self._row(p)
            term = (dm * self.y[p]) * (r if at is None else r[at])
            acc = term if acc is None else acc + term
        if at is None:
            self.g -= self.y * acc
        else:
            self.g[at] -= self.y[at] * acc
